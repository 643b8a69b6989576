// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Owner slots for the switch's unit tests (see fsw_slots.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tests/unit/fsw_slots.h"

static struct fsw_qp *slots[32];
static unsigned int nslots;

void slots_reset(void)
{
	nslots = 0;
}

static struct fsw_qp **slot_next(void)
{
	assert_true(nslots < sizeof(slots) / sizeof(slots[0]));
	return &slots[nslots++];
}

struct fsw_qp *slot_qp_create(struct fsw *sw, struct fsw_node *node,
			      uint32_t qkey, uint16_t pkey_index,
			      int privileged, char *err, size_t errlen)
{
	struct fsw_qp **slot = slot_next();

	*slot = fsw_qp_create(sw, node, slot, qkey, pkey_index, privileged,
			      err, errlen);
	return *slot;
}

struct fsw_qp *slot_gsi_create(struct fsw *sw, struct fsw_node *node,
			       uint8_t mgmt_class, char *err, size_t errlen)
{
	return slot_gsi_create_proc(sw, node, NULL, mgmt_class, err, errlen);
}

struct fsw_qp *slot_gsi_create_proc(struct fsw *sw, struct fsw_node *node,
				    const void *proc, uint8_t mgmt_class,
				    char *err, size_t errlen)
{
	struct fsw_qp **slot = slot_next();

	*slot = fsw_gsi_create(sw, node, slot, proc, mgmt_class, err, errlen);
	return *slot;
}

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Queue pairs of the switch's unit tests (test_fsw.c, test_fsw_sa.c):
 * each is made with its own slot as its owner, so that a delivery, which
 * hands back the owner, says which queue pair it went to.
 */
#ifndef IBGW_TESTS_FSW_SLOTS_H
#define IBGW_TESTS_FSW_SLOTS_H

#include <stddef.h>
#include <stdint.h>

#include "subnet/fsw.h"

/* Forget every slot (between tests). */
void slots_reset(void);
/* fsw_qp_create() / fsw_gsi_create() with the next slot as owner; a test
 * that makes more than the slots hold fails. */
struct fsw_qp *slot_qp_create(struct fsw *sw, struct fsw_node *node,
			      uint32_t qkey, uint16_t pkey_index,
			      int privileged, char *err, size_t errlen);
struct fsw_qp *slot_gsi_create(struct fsw *sw, struct fsw_node *node,
			       uint8_t mgmt_class, char *err, size_t errlen);
/* A MAD agent of process proc (fsw_gsi_create()); slot_gsi_create()'s
 * agents are no process's: their joins are the port's. */
struct fsw_qp *slot_gsi_create_proc(struct fsw *sw, struct fsw_node *node,
				    const void *proc, uint8_t mgmt_class,
				    char *err, size_t errlen);

#endif

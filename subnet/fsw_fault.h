/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The switch's fault generator (fsw_fault.c), private to subnet/: only
 * fsw_switch.c rolls it.  Seeded from struct fsw_fault_cfg (fsw.h), so the
 * same seed and packets give the same losses, duplicates and reorderings.
 */
#ifndef IBGW_FSW_FAULT_H
#define IBGW_FSW_FAULT_H

#include <stdint.h>

#include "subnet/fsw.h"

struct fsw_fault {
	struct fsw_fault_cfg cfg;
	uint64_t state;
};

void fsw_fault_init(struct fsw_fault *f, const struct fsw_fault_cfg *cfg);
/* true with probability p */
int fsw_fault_roll(struct fsw_fault *f, double p);

#endif

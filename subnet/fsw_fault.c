// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Reproducible fault injection for ibfabricd: a splitmix64 generator seeded
 * from --seed, so that the same seed and the same packet sequence give the
 * same losses, duplicates and reorderings.
 */
#include "subnet/fsw_fault.h"

static uint64_t splitmix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9E3779B97F4A7C15ull);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

void fsw_fault_init(struct fsw_fault *f, const struct fsw_fault_cfg *cfg)
{
	f->cfg = *cfg;
	f->state = cfg->seed;
}

int fsw_fault_roll(struct fsw_fault *f, double p)
{
	if (p <= 0.0)
		return 0;
	/* 53 random bits as a double in [0, 1) */
	return (double)(splitmix64(&f->state) >> 11) * 0x1.0p-53 < p;
}

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the test tools (fabtest, madtest) share: a strict number from the
 * command line, and a monotonic clock in milliseconds.
 */
#ifndef IBGW_TESTS_TOOL_H
#define IBGW_TESTS_TOOL_H

/* s as a number (decimal, 0x hex) in 0..max, or exit 2 saying
 * "PROG: OPT 'S': why". */
unsigned long long tool_num(const char *prog, const char *opt, const char *s,
			    unsigned long long max);
long long tool_now_ms(void);

#endif

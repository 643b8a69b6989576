// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "conf/conf.h"
#include "tests/tools/tool.h"

unsigned long long tool_num(const char *prog, const char *opt, const char *s,
			    unsigned long long max)
{
	unsigned long long v;
	const char *why;

	if (conf_parse_uint(s, 0, max, &v, &why) < 0) {
		fprintf(stderr, "%s: %s '%s': %s\n", prog, opt, s, why);
		exit(2);
	}
	return v;
}

long long tool_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* rdspeer --evil (rdspeer_evil.h). */
#include <stdio.h>

#include "tests/tools/rdspeer_evil.h"

int rdspeer_evil_run(const struct rdspeer_evil *e)
{
	fprintf(stderr, "rdspeer: --evil %s: not yet\n", e->mode);
	return 2;
}

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * libFuzzer target for the partitions.conf parser: any bytes in, either a
 * configuration that keeps the module's promises or an error text of
 * "FILE:LINE: ..." lines, never a crash.  The P_Key table builder runs on
 * every accepted configuration.
 *
 *   clang -fsanitize=fuzzer,address,undefined -I. -D_GNU_SOURCE \
 *	tests/fuzz/fuzz_partitions.c subnet/partitions.c -o fz
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "subnet/partitions.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_conf(const struct prtn_conf *c)
{
	size_t i, k;

	if (c->nparts == 0 || c->nparts > PRTN_MAX_PARTITIONS ||
	    c->parts[0].pkey != PRTN_DEFAULT_PKEY)
		abort();
	for (i = 0; i < c->nparts; i++) {
		const struct prtn *p = &c->parts[i];

		if (p->pkey == 0 || p->pkey > PRTN_PKEY_MASK ||
		    memchr(p->name, '\0', sizeof(p->name)) == NULL ||
		    p->name[0] == '\0' || p->nmembers > PRTN_MAX_MEMBERS ||
		    p->nmgroups > PRTN_MAX_MGROUPS || p->mtu < 1 ||
		    p->mtu > 5 || p->sl > 15 || p->scope_mask == 0)
			abort();
		for (k = 0; k < i; k++)
			if (c->parts[k].pkey == p->pkey ||
			    strcmp(c->parts[k].name, p->name) == 0)
				abort();
		for (k = 0; k < p->nmembers; k++)
			if (p->members[k].membership < PRTN_LIMITED ||
			    p->members[k].membership > PRTN_BOTH ||
			    (p->members[k].kind == PRTN_M_GUID &&
			     p->members[k].guid == 0))
				abort();
		for (k = 0; k < p->nmgroups; k++)
			if (p->mgroups[k].mgid[0] != 0xff)
				abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct prtn_conf c;
	char err[2048];
	uint16_t table[32];
	unsigned int n;

	memset(err, 'x', sizeof(err));
	if (prtn_conf_parse((const char *)data, size, "fuzz.conf", &c, err,
			    sizeof(err)) < 0) {
		/* One "FILE:LINE: ..." line per error, NUL-terminated. */
		if (memchr(err, '\0', sizeof(err)) == NULL ||
		    strncmp(err, "fuzz.conf:", 10) != 0 || c.nparts != 0)
			abort();
		return 0;
	}
	check_conf(&c);
	if (prtn_pkey_table(&c, "h1", 0x0002c90300000001ull, 0, table, 32,
			    &n) == 0 && n == 0)
		abort();
	prtn_pkey_table(&c, "gw-a", 0x10, 1, table, 4, &n);
	if (n > 4)
		abort();
	prtn_conf_free(&c);
	return 0;
}

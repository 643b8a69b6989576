// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer target for ibgw.conf: conf/conf.c's scan and schema walk
 * (iniparser underneath) and gateway/gw_conf.c's checks, on any bytes as
 * the file.  Checked: never a crash; every error line names the file;
 * a file that loads has what ibgw.conf(5) promises (1 to GW_MAX_PARTS
 * partitions, each with a name and a P_Key, no two with one P_Key), and
 * its canonical form (gw_conf_write_*, what ibgwd writes back after
 * ibgwctl partition add or del) loads again, without errors, to the same
 * partitions.  The file is a memfd, a regular file that iniparser reads
 * again by its /proc/self/fd name.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "gateway/gw_conf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct gw_conf conf, again;

static int memfd(char *path, size_t cap)
{
	int fd = memfd_create("ibgw.conf", MFD_CLOEXEC);

	if (fd < 0)
		abort();
	snprintf(path, cap, "/proc/self/fd/%d", fd);
	return fd;
}

static void put(int fd, const void *b, size_t n)
{
	if (ftruncate(fd, 0) < 0 || (n && pwrite(fd, b, n, 0) != (ssize_t)n))
		abort();
}

/* Every error line begins with the file's name. */
static void check_errors(const char *text, size_t len, const char *path)
{
	const char *p = text, *nl;
	size_t pl = strlen(path);

	while (p < text + len) {
		nl = memchr(p, '\n', (size_t)(text + len - p));
		if (!nl)
			abort();	/* a line not ended */
		if ((size_t)(nl - p) < pl || memcmp(p, path, pl))
			abort();
		p = nl + 1;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1, fd2 = -1;
	static char path[64], path2[64];
	char *errs = NULL, *canon = NULL;
	size_t errlen = 0, canonlen = 0;
	unsigned int i, j;
	FILE *e, *w;
	int n;

	if (fd < 0) {
		fd = memfd(path, sizeof(path));
		fd2 = memfd(path2, sizeof(path2));
	}
	put(fd, data, size);
	e = open_memstream(&errs, &errlen);
	if (!e)
		abort();
	n = gw_conf_load(path, &conf, e);
	fclose(e);
	check_errors(errs, errlen, path);
	free(errs);
	if (n < 0 || (n > 0) != (errlen > 0))
		abort();
	if (n)
		return 0;

	if (conf.nparts < 1 || conf.nparts > GW_MAX_PARTS)
		abort();
	for (i = 0; i < conf.nparts; i++) {
		if (!conf.parts[i].name[0] || !(conf.parts[i].pkey & 0x7fff))
			abort();
		for (j = 0; j < i; j++)
			if ((conf.parts[i].pkey & 0x7fff) ==
			    (conf.parts[j].pkey & 0x7fff))
				abort();
	}

	/* the canonical form loads again, to the same partitions */
	w = open_memstream(&canon, &canonlen);
	if (!w)
		abort();
	gw_conf_write_gateway(w, &conf);
	for (i = 0; i < conf.nparts; i++)
		gw_conf_write_part(w, &conf.parts[i]);
	fclose(w);
	put(fd2, canon, canonlen);
	e = fopen("/dev/null", "w");
	if (!e)
		abort();
	n = gw_conf_load(path2, &again, e);
	fclose(e);
	if (n != 0 || again.nparts != conf.nparts) {
		fprintf(stderr, "canonical form refused:\n%.*s\n",
			(int)canonlen, canon);
		abort();
	}
	for (i = 0; i < conf.nparts; i++)
		if (strcmp(again.parts[i].name, conf.parts[i].name) ||
		    again.parts[i].pkey != conf.parts[i].pkey ||
		    again.parts[i].mode != conf.parts[i].mode ||
		    again.parts[i].naddrs != conf.parts[i].naddrs ||
		    again.parts[i].nsdp_exports != conf.parts[i].nsdp_exports ||
		    again.parts[i].nrds_exports != conf.parts[i].nrds_exports)
			abort();
	free(canon);
	return 0;
}

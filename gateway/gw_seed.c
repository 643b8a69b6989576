// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What a restarted transparent gateway knew: the LAN hosts of each
 * partition, kept in a file beside the control socket (/run/ibgw/
 * ibgwd.neigh: "PARTITION ADDRESS" a line, written every few seconds
 * when it changed and at a clean stop).
 *
 * Why: IB hosts hold the gateway's 20-byte address (its QPN) for every
 * LAN host they talk to.  A new ibgwd has a new QPN, and until their
 * neighbour entries age out (a minute) their packets for the LAN go to
 * a QP that is gone.  So a gateway that starts asks its segment again for
 * the LAN hosts its predecessor knew, as soon as the partition has its
 * carrier, and each answer is announced to the IB side as a newly learnt
 * LAN host is (a gratuitous ARP, an unsolicited advertisement):
 * gw_bridge_seek.  A host that does not answer is forgotten.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf/log.h"
#include "gateway/ibgwd.h"

#define SEED_FILE	"ibgwd.neigh"
#define SEED_MAX	16384		/* entries read back, all partitions */
#define SEED_HOSTS	4096		/* written, a partition */

struct gw_seed {
	char name[GW_NAME_MAX + 1];
	struct inet_addr ip;
};

/* The file's path, beside the control socket; 0, or -1 (an abstract
 * socket, or no directory: no file). */
static int seed_path(const struct ibgwd *d, char *out, size_t cap)
{
	const char *c = d->conf.control, *sl = strrchr(c, '/');

	if (c[0] == '@' || !sl)
		return -1;
	if ((size_t)snprintf(out, cap, "%.*s/%s", (int)(sl - c), c,
			     SEED_FILE) >= cap)
		return -1;
	return 0;
}

void gw_seed_load(struct ibgwd *d)
{
	char path[4200], line[256], name[GW_NAME_MAX + 2], addr[64];
	struct gw_seed *s;
	unsigned int bad = 0;
	FILE *f;

	if (seed_path(d, path, sizeof(path)) < 0)
		return;
	f = fopen(path, "re");
	if (!f) {
		if (errno != ENOENT)
			log_warn("%s", path);
		return;
	}
	d->seed = calloc(SEED_MAX, sizeof(*d->seed));
	if (!d->seed) {
		fclose(f);
		return;
	}
	while (fgets(line, sizeof(line), f) && d->nseed < SEED_MAX) {
		s = &d->seed[d->nseed];
		memset(s, 0, sizeof(*s));
		if (sscanf(line, "%65s %63s", name, addr) != 2 ||
		    strlen(name) > GW_NAME_MAX) {
			bad++;
			continue;
		}
		snprintf(s->name, sizeof(s->name), "%s", name);
		s->ip.family = strchr(addr, ':') ? AF_INET6 : AF_INET;
		if (inet_pton(s->ip.family, addr, s->ip.raw) != 1) {
			bad++;
			continue;
		}
		d->nseed++;
	}
	fclose(f);
	if (bad)
		log_warnx("%s: %u line(s) not understood, skipped", path, bad);
	log_info("%s: %u LAN host(s) known before, asked for again when "
		 "their partitions come up", path, d->nseed);
}

void gw_seed_part(struct part *p)
{
	struct ibgwd *d = p->d;
	unsigned int i, n = 0;

	if (p->seeded || !p->br)
		return;
	p->seeded = 1;
	for (i = 0; i < d->nseed; i++) {
		if (strcmp(d->seed[i].name, p->pc->name))
			continue;
		gw_bridge_seek(p->br, &d->seed[i].ip);
		n++;
	}
	if (n)
		log_info("partition %s: asking the segment for %u LAN host(s) "
			 "known before the restart", p->pc->name, n);
}

/* The file's text: each transparent partition's LAN hosts; for one not
 * up yet, what was read back for it (not asked for yet). */
static char *seed_text(struct ibgwd *d, size_t *len)
{
	static struct inet_addr ips[SEED_HOSTS];
	char a[INET6_ADDRSTRLEN];
	unsigned int i, j, n;
	size_t cap = 0;
	char *buf = NULL;
	FILE *f = open_memstream(&buf, &cap);

	if (!f)
		return NULL;
	for (i = 0; i < d->nparts; i++) {
		struct part *p = &d->parts[i];

		if (!p->used || !p->br)
			continue;
		if (!p->seeded) {
			for (j = 0; j < d->nseed; j++)
				if (!strcmp(d->seed[j].name, p->pc->name) &&
				    inet_ntop(d->seed[j].ip.family,
					      d->seed[j].ip.raw, a, sizeof(a)))
					fprintf(f, "%s %s\n", p->pc->name, a);
			continue;
		}
		n = gw_bridge_lan_hosts(p->br, ips, SEED_HOSTS);
		for (j = 0; j < n; j++)
			if (inet_ntop(ips[j].family, ips[j].raw, a, sizeof(a)))
				fprintf(f, "%s %s\n", p->pc->name, a);
	}
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	*len = cap;
	return buf;
}

void gw_seed_save(struct ibgwd *d)
{
	char path[4200], tmp[4210];
	size_t len = 0;
	char *text;
	int ok = 0;
	FILE *f;

	if (seed_path(d, path, sizeof(path)) < 0)
		return;
	text = seed_text(d, &len);
	if (!text)
		return;
	if (d->seed_saved && !strcmp(d->seed_saved, text)) {
		free(text);
		return;
	}
	snprintf(tmp, sizeof(tmp), "%s.new", path);
	f = fopen(tmp, "we");
	if (f) {
		ok = fwrite(text, 1, len, f) == len;
		ok = fclose(f) == 0 && ok && rename(tmp, path) == 0;
		if (!ok)
			unlink(tmp);
	}
	if (!ok) {
		if (!d->seed_warned)
			log_warn("%s", path);
		d->seed_warned = 1;
		free(text);
		return;
	}
	free(d->seed_saved);
	d->seed_saved = text;
}

void gw_seed_free(struct ibgwd *d)
{
	free(d->seed);
	free(d->seed_saved);
	d->seed = NULL;
	d->seed_saved = NULL;
	d->nseed = 0;
}

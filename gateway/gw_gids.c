// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* rds_gids: LAN addresses as GIDs of a RoCE port; see gw_gids.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "conf/errbuf.h"
#include "gateway/gw_conf.h"
#include "gateway/gw_gids.h"

#include <linux/rtnetlink.h>

/* The I-th address of entry g (at most 8 host bits). */
static void gid_addr(const struct inet_prefix *g, unsigned int i,
		     struct inet_addr *a)
{
	size_t n = inet_addr_len(g->addr.family);
	unsigned int count = gw_gid_count(g);

	*a = g->addr;
	a->raw[n - 1] = (uint8_t)((a->raw[n - 1] & ~(count - 1)) + i);
}

static struct inet_prefix host(const struct inet_addr *a)
{
	struct inet_prefix p;

	p.addr = *a;
	p.plen = a->family == AF_INET ? 32 : 128;
	return p;
}

/* The kernel's local route for a (made with the address) deleted.  For
 * IPv6 it can come a moment after the address (addrconf inserts it from
 * its work queue): *later set when it is not there yet. */
static int unlocal(struct nl_sock_ctx *nl, int ifindex,
		   const struct inet_addr *a, int *later, char *err,
		   size_t errlen)
{
	if (nl_route_local(nl, 0, RT_TABLE_LOCAL, a, ifindex, err,
			   errlen) == 0)
		return 0;
	if (errno != ESRCH && errno != ENOENT)
		return -1;
	*later = 1;
	return 0;
}

int gw_gids_add(struct nl_sock_ctx *nl, int ifindex,
		const struct inet_prefix *gids, unsigned int n, char *err,
		size_t errlen)
{
	struct timespec ms10 = { 0, 10 * 1000 * 1000 };
	struct inet_addr a;
	struct inet_prefix h;
	char ifname[IF_NAMESIZE];
	unsigned int i, k, total = 0, round;
	int fam[2] = { 0, 0 }, pending, lo = (int)if_nametoindex("lo");

	if (!if_indextoname((unsigned int)ifindex, ifname))
		return errbuf_fail(err, errlen, errno, "rds_gids: ifindex %d: "
				   "%s", ifindex, strerror(errno));
	for (i = 0; i < n; i++) {
		fam[gids[i].addr.family == AF_INET6] = 1;
		for (k = 0; k < gw_gid_count(&gids[i]); k++) {
			gid_addr(&gids[i], k, &a);
			h = host(&a);
			if (nl_ifaddr_add(nl, ifindex, &h, NL_ADDR_NODAD |
					  NL_ADDR_NOPREFIXROUTE, err,
					  errlen) < 0 && errno != EEXIST)
				return -1;
			if (nl_route_local(nl, 1, GW_GIDS_TABLE, &a, lo, err,
					   errlen) < 0 && errno != EEXIST)
				return -1;
			total++;
		}
	}
	for (i = 0; i < 2; i++)
		if (fam[i] && nl_rule_udp_dport(nl, 1, i ? AF_INET6 : AF_INET,
						GW_GIDS_PREF, ifname,
						GW_GIDS_UDP, GW_GIDS_TABLE,
						err, errlen) < 0 &&
		    errno != EEXIST)
			return -1;
	/* the kernel's local routes, waiting up to 1 s for late ones */
	for (round = 0; round < 100; round++) {
		pending = 0;
		for (i = 0; i < n; i++) {
			for (k = 0; k < gw_gid_count(&gids[i]); k++) {
				gid_addr(&gids[i], k, &a);
				if (unlocal(nl, ifindex, &a, &pending, err,
					    errlen) < 0)
					return -1;
			}
		}
		/* IPv4 makes it with the address: nothing to wait for */
		if (!pending || !fam[1])
			break;
		nanosleep(&ms10, NULL);
	}
	return (int)total;
}

int gw_gids_del(struct nl_sock_ctx *nl, int ifindex,
		const struct inet_prefix *gids, unsigned int n, char *err,
		size_t errlen)
{
	struct inet_addr a;
	struct inet_prefix h;
	char ifname[IF_NAMESIZE], e[NL_ERRLEN];
	unsigned int i, k;
	int fam[2] = { 0, 0 }, ret = 0, lo = (int)if_nametoindex("lo");

#define FIRST_FAIL(x)                                                    \
	do {                                                             \
		if (!ret)                                                \
			snprintf(err, errlen, "%s", (x));                \
		ret = -1;                                                \
	} while (0)
	if (err && errlen)
		err[0] = '\0';
	for (i = 0; i < n; i++)
		fam[gids[i].addr.family == AF_INET6] = 1;
	if (if_indextoname((unsigned int)ifindex, ifname)) {
		for (i = 0; i < 2; i++)
			if (fam[i] &&
			    nl_rule_udp_dport(nl, 0, i ? AF_INET6 : AF_INET,
					      GW_GIDS_PREF, ifname,
					      GW_GIDS_UDP, GW_GIDS_TABLE, e,
					      sizeof(e)) < 0 &&
			    errno != ENOENT)
				FIRST_FAIL(e);
	}
	for (i = 0; i < n; i++) {
		for (k = 0; k < gw_gid_count(&gids[i]); k++) {
			gid_addr(&gids[i], k, &a);
			h = host(&a);
			if (nl_route_local(nl, 0, GW_GIDS_TABLE, &a, lo, e,
					   sizeof(e)) < 0 && errno != ESRCH &&
			    errno != ENOENT)
				FIRST_FAIL(e);
			if (nl_ifaddr_del(nl, ifindex, &h, e, sizeof(e)) < 0 &&
			    errno != EADDRNOTAVAIL && errno != ENODEV)
				FIRST_FAIL(e);
		}
	}
#undef FIRST_FAIL
	return ret;
}

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * An IPoIB link bound to a Linux TUN interface: what ipoibd is for one
 * host, and what ibgwd runs for each partition in router mode.  It owns
 * the TUN (virtio-net header, TSO/GRO through inet/gso.c), brings it up
 * without carrier (NO-CARRIER, TUNSETCARRIER) and configures it through
 * rtnetlink when the carrier first comes (MTU, addresses, link-local),
 * turns the TUN's carrier off and on with the link's, keeps its MTU within
 * the link MTU, takes next hops from the kernel's routing table (cached;
 * the owner flushes the cache when routes change) and clamps the MSS of
 * SYNs that cross it when asked.
 *
 * Why TUN and not TAP: IPoIB has no Ethernet header and 20-byte link
 * addresses.  A TUN interface carries IP packets as IPoIB does; the link
 * module does ARP and neighbour discovery with the real 20-byte addresses
 * (the kernel marks a TUN interface NOARP and never invents 6-byte MACs that
 * exist nowhere); IPv4 and IPv6 work unchanged above it.
 */
#ifndef IBGW_IPOIB_TUN_H
#define IBGW_IPOIB_TUN_H

#include <stddef.h>
#include <stdint.h>

#include "conf/counters.h"
#include "netlink/nl_link.h"
#include "ulp/ipoib/ipoib_link.h"

struct event_base;
struct fab_dev;
struct ipoib_tun;

#define IPOIB_TUN_MAX_ADDRS	(IPOIB_LINK_MAX_ADDRS - 1)	/* 16 */

struct ipoib_tun_cfg {
	const char *ifname;		/* a name or a pattern ("ib%d") */
	struct ipoib_link_cfg link;
	struct inet_prefix addrs[IPOIB_TUN_MAX_ADDRS];
	unsigned int naddrs;
	/* SYNs in both directions get at most the MSS of this MTU
	 * (tcp_mss.h); 0: no clamping */
	unsigned int mss_mtu;
};

/*
 * What the owner hears; each may be NULL.  The module logs nothing: it
 * reports here what a daemon logs.
 */
struct ipoib_tun_ops {
	/* The carrier came up the first time and the interface is
	 * configured: the ready moment. */
	void (*ready)(void *arg, struct ipoib_tun *t);
	/* Every carrier change, with the link MTU (before the interface
	 * is configured for it). */
	void (*carrier)(void *arg, struct ipoib_tun *t, int up,
			unsigned int mtu);
	/* A step that failed and left the interface usable, one line as
	 * nl_link.h's err: offloads the kernel refused at creation
	 * ("...: packets go one by one"), or the MTU, an address or the
	 * link state when the carrier came; and an MTU set above the link
	 * MTU and put back ("IF: MTU N refused: ...",
	 * ipoib_tun_links_changed). */
	void (*error)(void *arg, struct ipoib_tun *t, const char *msg);
	/* Another endpoint claims one of the interface's addresses
	 * (ipoib_link_ops.conflict; hw NULL when it did not say which).
	 * dad_failed: an IPv6 address still tentative, which the kernel's
	 * duplicate address detection now marks dadfailed; the link no
	 * longer answers for it. */
	void (*conflict)(void *arg, struct ipoib_tun *t,
			 const struct inet_addr *a,
			 const struct ipoib_addr *hw, int dad_failed);
	/* An IPv4 UDP datagram to port 68 (DHCP's client port) from the
	 * link: its payload, taken instead of the TUN's (the host runs no
	 * DHCP client on a TUN: ours is the one, ipoib_dhcp.h). */
	void (*dhcp_rx)(void *arg, const uint8_t *msg, size_t len);
};

/* Create the TUN and the link (not started).  NULL with errno set and the
 * reason in err: nl_tun_open's (EEXIST, EINVAL ...), or "IPoIB link: "
 * and ipoib_link_new's (ENOENT: the P_Key is not in the port's table;
 * the fabric's errno).  ops->error may be called before it returns. */
struct ipoib_tun *ipoib_tun_new(struct event_base *base, struct fab_dev *dev,
				struct nl_sock_ctx *nl,
				const struct ipoib_tun_cfg *cfg,
				const struct ipoib_tun_ops *ops, void *arg,
				char *err, size_t errlen);
/* Join the broadcast group and so on (ipoib_link_start). */
int ipoib_tun_start(struct ipoib_tun *t, char *err, size_t errlen);
/* Leave the groups (waiting at most timeout_ms for the SA) and remove the
 * interface. */
void ipoib_tun_free(struct ipoib_tun *t, unsigned int timeout_ms);

void ipoib_tun_event(struct ipoib_tun *t, enum fab_event_type type);
/* The kernel's links changed (a monitor's NL_CHG_LINK): an MTU set on
 * the interface above the link MTU is put back to it (ops->error says so),
 * one at or below it is the operator's and stays, also across carrier
 * changes.  Until the carrier first comes up nothing is looked at. */
void ipoib_tun_links_changed(struct ipoib_tun *t);
/* Addresses changed (a monitor's NL_CHG_ADDR): the link answers for the
 * interface's addresses as the kernel has them, `ip addr add` and `del`
 * included (an IPv6 one once DAD is done). */
void ipoib_tun_addrs_changed(struct ipoib_tun *t);
/* Routes changed: forget cached next hops.  nocache: look every one up
 * (no route monitor). */
void ipoib_tun_routes_changed(struct ipoib_tun *t);
void ipoib_tun_set_nocache(struct ipoib_tun *t, int nocache);

/* The next hop towards dst over this interface (the kernel's routes, as
 * the packets' own): 0 and *nh, or -1 when dst is not routed over it. */
int ipoib_tun_nexthop(struct ipoib_tun *t, const struct inet_addr *dst,
		      struct inet_addr *nh);
/* Our address of family to speak from (an IPv6 one not link-local if
 * there is one): 0 and *src, or -1 when the interface has none. */
int ipoib_tun_src_addr(const struct ipoib_tun *t, int family,
		       struct inet_addr *src);

/* An IPv4 address given at run time (a DHCP lease): the interface's and
 * the link's (answered in ARP, announced), as --address ones.  0, or -1
 * with err (ENOSPC past IPOIB_TUN_MAX_ADDRS, EEXIST: one already). */
int ipoib_tun_addr_add(struct ipoib_tun *t, const struct inet_prefix *p,
		       char *err, size_t errlen);
/* ... and taken away: 0, or -1 with ENOENT when it is not one. */
int ipoib_tun_addr_del(struct ipoib_tun *t, const struct inet_addr *a);

/* a is one of the interface's own addresses. */
int ipoib_tun_is_own(const struct ipoib_tun *t, const struct inet_addr *a);

const char *ipoib_tun_ifname(const struct ipoib_tun *t);
int ipoib_tun_ifindex(const struct ipoib_tun *t);
struct ipoib_link *ipoib_tun_link(struct ipoib_tun *t);
/* 0 while the TUN is read; else the errno that stopped reading it for
 * good (EBADFD: the interface was deleted), the descriptor then no longer
 * watched. */
int ipoib_tun_error(const struct ipoib_tun *t);

/* Offload counters, beside the link's. */
struct ipoib_tun_stats {
	uint64_t tx_super;		/* TCP super-packets cut */
	uint64_t tx_offload_bad;	/* ... that could not be */
	uint64_t rx_coalesced;		/* segments merged going up */
	uint64_t rx_bad_csum;		/* segments passed up unmerged */
	uint64_t mss_clamped;		/* SYNs whose MSS was lowered */
	uint64_t rx_tun_write;		/* packets the TUN write refused */
};

void ipoib_tun_stats(const struct ipoib_tun *t, struct ipoib_tun_stats *st);
/* Their names and help, for every output (conf/counters.h). */
extern const struct counter_desc ipoib_tun_counters[];

/* Report lines "stats NAME VALUE", "neighbors ...", "groups ..." (the
 * link's, then the offload counters), each passed to line(). */
void ipoib_tun_report(const struct ipoib_tun *t,
		      void (*line)(void *arg, const char *what,
				   const char *text), void *arg);

#endif

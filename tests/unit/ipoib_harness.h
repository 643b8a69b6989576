/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the IPoIB link's unit tests (test_ipoib_link.c, test_ipoib_neigh.c)
 * share: one link over the in-memory provider (prov_mem.h) with a host
 * that records what the link gives it, a peer played with the real
 * ipoib_wire.c codec, packet builders, and the link's clock.
 *
 * Time: the link reads CLOCK_MONOTONIC (now_s() in ipoib_priv.h) and does
 * its retries, backoff and ageing in a 1 s libevent timer.  The drivers
 * are linked with -Wl,--wrap=clock_gettime,--wrap=event_new,
 * --wrap=event_free: while a test runs, CLOCK_MONOTONIC as our objects see
 * it stands still at what h_clock_advance() made it (libevent's own clock
 * is untouched), and h_tick() runs the link's timer at once.  Nothing in
 * ulp/ipoib knows it is tested.
 */
#ifndef IBGW_TESTS_IPOIB_HARNESS_H
#define IBGW_TESTS_IPOIB_HARNESS_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "fabric/fabric.h"
#include "tests/unit/prov_mem.h"
#include "ulp/ipoib/ipoib_link.h"

struct event_base;

#define PEER_QPN	0x222
#define PEER_LID	7
#define PEER_SL		3
#define H_RX_MAX	8

struct t {
	struct event_base *base;
	struct fab_dev *dev;
	struct ipoib_link *l;
	union fab_gid bcast;
	struct ipoib_addr me, peer;
	/* what the link gave the host */
	int carrier, carrier_ups, carrier_downs;
	unsigned int mtu;
	unsigned int nrx;
	uint8_t rx[H_RX_MAX][2048];
	size_t rxlen[H_RX_MAX];
};

/* The host: rx and carrier only (no nexthop, no proxy). */
extern const struct ipoib_link_ops host_ops;
void host_rx(void *arg, const uint8_t *pkt, size_t len);
void host_carrier(void *arg, int up, unsigned int mtu);

/* cmocka setup/teardown: a link on pkey 0xffff, not started, a path to
 * the peer known to the SA, the clock stopped at H_T0. */
int setup(void **state);
int teardown(void **state);
/* Replace the link with one made from cfg and ops (arg is t). */
void relink(struct t *t, const struct ipoib_link_cfg *cfg,
	    const struct ipoib_link_ops *ops);
/* Start the link and let the broadcast join through. */
void bring_up(struct t *t);
/* Run the loop until nothing is left to do. */
void pump(struct t *t);
/* A port event, delivered as ipoibd does (fab_get_event -> link). */
void port_event(struct t *t, enum fab_event_type type);

/* The clock: CLOCK_MONOTONIC seconds as the link sees them. */
#define H_T0	1000
time_t h_clock(void);
void h_clock_advance(unsigned int s);
/* The link's 1 s timer, now (then the loop is pumped). */
void h_tick(struct t *t);
/* Advance the clock one second at a time, ticking after each. */
void h_tick_for(struct t *t, unsigned int s);

void addr4(struct ipoib_link *l, const char *s, unsigned int plen);
void addr6(struct ipoib_link *l, const char *s, unsigned int plen);
struct inet_addr h_ip(const char *s);
struct in_addr h_in4(const char *s);
struct in6_addr h_in6(const char *s);

/* IPv4/IPv6 UDP from src to dst carrying one marker byte (29, 49 bytes). */
size_t udp4(const char *src, const char *dst, uint8_t mark, uint8_t *p);
size_t udp6(const char *src, const char *dst, uint8_t mark, uint8_t *p);
/* The same, len bytes in all (p must hold them); df sets IPv4's DF. */
size_t udp4_len(const char *src, const char *dst, size_t len, int df,
		uint8_t *p);
size_t udp6_len(const char *src, const char *dst, size_t len, uint8_t *p);

/* Deliver an IPoIB frame (header + payload) from the peer (from hw if
 * not NULL: its QPN as the source). */
void from_peer(struct t *t, uint16_t ethertype, const uint8_t *pl,
	       size_t len);
void from_hw(struct t *t, const struct ipoib_addr *hw, uint16_t ethertype,
	     const uint8_t *pl, size_t len);
/* An ARP reply from hw for ip to us (our_ip). */
void arp_reply_from(struct t *t, const struct ipoib_addr *hw, const char *ip,
		    const char *our_ip);
/* A Neighbour Advertisement from hw for ip with flags (INET_NA_FLAG_*):
 * solicited, to us (our_ip); else to all nodes. */
void na_from(struct t *t, const struct ipoib_addr *hw, const char *ip,
	     const char *our_ip, uint8_t flags);

uint16_t pkt_ethertype(const struct mem_pkt *p);
/* The ARP in a sent frame (asserted to be one). */
void pkt_arp(const struct mem_pkt *p, struct ipoib_arp *arp);
/* How many sent frames are ARP requests for tpa. */
unsigned int arp_requests_for(struct t *t, const char *tpa);

void mgid4(struct t *t, const char *group, union fab_gid *mgid);
void mgid6(struct t *t, const char *group, union fab_gid *mgid);
/* The one join request for mgid (it must be exactly one). */
const struct sa_mcmember *join_of(struct t *t, const union fab_gid *mgid);
void assert_to_group(struct t *t, const struct mem_pkt *p,
		     const union fab_gid *mgid);
void assert_to_peer(const struct mem_pkt *p);

/* Does ipoib_link_report("neighbors") list ip? */
int neigh_listed(struct t *t, const char *ip);

#endif

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The IPoIB link's neighbours (ulp/ipoib/ipoib_neigh.c) as the host's
 * hooks and time see them: proxy ARP/ND for addresses a gateway answers
 * for, next hops for off-link destinations, neighbours given up after
 * their retries and re-solicited when stale, and the table limit.  Over
 * the in-memory provider with the harness's stopped clock
 * (ipoib_harness.h).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "inet/nd.h"
#include "tests/unit/ipoib_harness.h"
#include "tests/unit/prov_mem.h"
#include "ulp/ipoib/ipoib_link.h"

/* ---- the host's hooks ---------------------------------------------------- */

/* The proxy claims what is in claims[]; it remembers what it was asked. */
static struct {
	struct inet_addr claims[4];
	unsigned int nclaims, calls;
	struct inet_addr last;
} proxy;

static int host_proxy(void *arg, const struct inet_addr *target)
{
	unsigned int i;

	(void)arg;
	proxy.calls++;
	proxy.last = *target;
	for (i = 0; i < proxy.nclaims; i++)
		if (inet_addr_equal(&proxy.claims[i], target))
			return 1;
	return 0;
}

static void proxy_claim(const char *ip)
{
	assert_true(proxy.nclaims < 4);
	proxy.claims[proxy.nclaims++] = h_ip(ip);
}

/* What the conflict hook was told. */
static struct {
	unsigned int calls;
	struct inet_addr a;
	uint32_t qpn;
} conflict;

static void host_conflict(void *arg, const struct inet_addr *a,
			  const struct ipoib_addr *hw)
{
	(void)arg;
	conflict.calls++;
	conflict.a = *a;
	conflict.qpn = hw ? hw->qpn : 0;
}

static const struct ipoib_link_ops proxy_ops = {
	.rx = host_rx,
	.carrier = host_carrier,
	.proxy = host_proxy,
	.conflict = host_conflict,
};

/* A router's routes: 192.0.2.0/24 through 10.0.0.254, 198.51.100.0/24
 * unreachable, the rest on the link. */
static struct {
	unsigned int calls;
	struct inet_addr last;
} route;

static int host_nexthop(void *arg, const struct inet_addr *dst,
			struct inet_addr *nh)
{
	uint32_t a = ntohl(dst->v4.s_addr);

	(void)arg;
	route.calls++;
	route.last = *dst;
	if (dst->family == AF_INET && (a >> 8) == 0xc00002) {
		*nh = h_ip("10.0.0.254");
		return 0;
	}
	if (dst->family == AF_INET && (a >> 8) == 0xc63364)
		return -1;
	*nh = *dst;
	return 0;
}

static const struct ipoib_link_ops router_ops = {
	.rx = host_rx,
	.carrier = host_carrier,
	.nexthop = host_nexthop,
};

static int setup_hooks(void **state)
{
	memset(&proxy, 0, sizeof(proxy));
	memset(&conflict, 0, sizeof(conflict));
	memset(&route, 0, sizeof(route));
	return setup(state);
}

static void xmit4(struct t *t, const char *dst, uint8_t mark)
{
	uint8_t pkt[64];
	size_t len = udp4("10.0.0.1", dst, mark, pkt);

	ipoib_link_xmit(t->l, pkt, len);
	pump(t);
}

/* The peer's link address with another QPN: another host behind the
 * same port (the SA's path to the peer's GID serves it). */
static struct ipoib_addr peer_qpn(struct t *t, uint32_t qpn)
{
	struct ipoib_addr hw = t->peer;

	hw.qpn = qpn;
	return hw;
}

static void assert_neigh_hw(struct t *t, const char *ip, int known,
			    uint32_t qpn)
{
	struct inet_addr a = h_ip(ip);
	struct ipoib_addr hw;

	if (!known) {
		assert_int_equal(ipoib_link_neigh_hw(t->l, &a, &hw), -1);
		return;
	}
	assert_int_equal(ipoib_link_neigh_hw(t->l, &a, &hw), 0);
	assert_int_equal(hw.qpn, qpn);
}

/* ---- proxy ARP / ND ------------------------------------------------------ */

static void test_proxy_arp(void **state)
{
	struct t *t = *state;
	const struct mem_pkt *p;
	struct ipoib_arp arp;
	struct in_addr peer4 = h_in4("10.0.0.2"), lan = h_in4("10.0.0.50"),
		       other = h_in4("10.0.0.60"), mine = h_in4("10.0.0.1"),
		       any;
	struct inet_addr asked;
	uint8_t buf[IPOIB_ARP_LEN];
	size_t len;

	relink(t, &(struct ipoib_link_cfg){ .pkey = 0xffff }, &proxy_ops);
	proxy_claim("10.0.0.50");
	addr4(t->l, "10.0.0.1", 24);
	bring_up(t);
	mem_sent_clear(t->dev);

	/* not claimed: the proxy is asked, nothing answers, the asker is
	 * not learnt */
	len = ipoib_arp_build_request(&t->peer, &peer4, &other, buf,
				      sizeof(buf));
	from_peer(t, IPOIB_ETH_P_ARP, buf, len);
	assert_int_equal(proxy.calls, 1);
	asked = h_ip("10.0.0.60");
	assert_true(inet_addr_equal(&proxy.last, &asked));
	assert_int_equal(mem_sent_count(t->dev), 0);
	assert_neigh_hw(t, "10.0.0.2", 0, 0);

	/* claimed: answered unicast with our link address for the LAN
	 * host's IP */
	len = ipoib_arp_build_request(&t->peer, &peer4, &lan, buf,
				      sizeof(buf));
	from_peer(t, IPOIB_ETH_P_ARP, buf, len);
	assert_int_equal(mem_sent_count(t->dev), 1);
	p = mem_sent(t->dev, 0);
	assert_to_peer(p);
	pkt_arp(p, &arp);
	assert_int_equal(arp.op, IPOIB_ARPOP_REPLY);
	assert_int_equal(arp.spa.s_addr, lan.s_addr);
	assert_int_equal(arp.sha.qpn, t->me.qpn);
	assert_memory_equal(arp.sha.gid.raw, t->me.gid.raw, 16);
	assert_int_equal(arp.tpa.s_addr, peer4.s_addr);
	assert_int_equal(arp.tha.qpn, PEER_QPN);
	assert_neigh_hw(t, "10.0.0.2", 1, PEER_QPN);

	/* a host announcing the claimed address itself (gratuitous ARP) is
	 * not contradicted */
	mem_sent_clear(t->dev);
	len = ipoib_arp_build_request(&t->peer, &lan, &lan, buf, sizeof(buf));
	from_peer(t, IPOIB_ETH_P_ARP, buf, len);
	assert_int_equal(mem_sent_count(t->dev), 0);
	assert_int_equal(t->nrx, 0);

	/* an RFC 5227 probe (sender 0.0.0.0) for the claimed address is
	 * defended, on the broadcast group; one for an unclaimed address
	 * is not */
	memset(&any, 0, sizeof(any));
	len = ipoib_arp_build_request(&t->peer, &any, &lan, buf, sizeof(buf));
	from_peer(t, IPOIB_ETH_P_ARP, buf, len);
	assert_int_equal(mem_sent_count(t->dev), 1);
	p = mem_sent(t->dev, 0);
	assert_to_group(t, p, &t->bcast);
	pkt_arp(p, &arp);
	assert_int_equal(arp.op, IPOIB_ARPOP_REPLY);
	assert_int_equal(arp.spa.s_addr, lan.s_addr);
	assert_int_equal(arp.sha.qpn, t->me.qpn);
	mem_sent_clear(t->dev);
	len = ipoib_arp_build_request(&t->peer, &any, &other, buf,
				      sizeof(buf));
	from_peer(t, IPOIB_ETH_P_ARP, buf, len);
	assert_int_equal(mem_sent_count(t->dev), 0);

	/* another host claiming one of our own addresses: the conflict is
	 * told, with its link address */
	assert_int_equal(conflict.calls, 0);
	len = ipoib_arp_build_announce(&t->peer, &mine, buf, sizeof(buf));
	from_peer(t, IPOIB_ETH_P_ARP, buf, len);
	assert_int_equal(conflict.calls, 1);
	asked = h_ip("10.0.0.1");
	assert_true(inet_addr_equal(&conflict.a, &asked));
	assert_int_equal(conflict.qpn, PEER_QPN);
}

static void test_proxy_nd(void **state)
{
	struct t *t = *state;
	const struct mem_pkt *p;
	struct ipoib_nd nd;
	struct in6_addr peer6 = h_in6("2001:db8::2"),
			lan = h_in6("2001:db8::50"),
			other = h_in6("2001:db8::60"), any;
	union fab_gid an;
	struct inet_addr asked;
	uint8_t buf[128];
	size_t len;

	relink(t, &(struct ipoib_link_cfg){ .pkey = 0xffff }, &proxy_ops);
	proxy_claim("2001:db8::50");
	addr6(t->l, "2001:db8::1", 64);
	bring_up(t);
	mem_sent_clear(t->dev);

	len = ipoib_nd_build_ns(&peer6, NULL, &other, &t->peer, buf,
				sizeof(buf));
	from_peer(t, IPOIB_ETH_P_IPV6, buf, len);
	assert_int_equal(proxy.calls, 1);
	asked = h_ip("2001:db8::60");
	assert_true(inet_addr_equal(&proxy.last, &asked));
	assert_int_equal(mem_sent_count(t->dev), 0);

	len = ipoib_nd_build_ns(&peer6, NULL, &lan, &t->peer, buf,
				sizeof(buf));
	from_peer(t, IPOIB_ETH_P_IPV6, buf, len);
	assert_int_equal(mem_sent_count(t->dev), 1);
	p = mem_sent(t->dev, 0);
	assert_to_peer(p);
	assert_int_equal(pkt_ethertype(p), IPOIB_ETH_P_IPV6);
	assert_int_equal(ipoib_nd_decode(p->data + IPOIB_HDR_LEN,
					p->len - IPOIB_HDR_LEN, &nd), INET_OK);
	assert_int_equal(nd.type, INET_ND_NA);
	assert_memory_equal(&nd.target, &lan, 16);
	assert_memory_equal(&nd.ip.dst, &peer6, 16);
	/* RFC 4861 7.2.8: a proxy's advertisement does not override what
	 * the host itself may answer */
	assert_int_equal(nd.flags, INET_NA_FLAG_SOLICITED);
	assert_true(nd.has_tlla);
	assert_int_equal(nd.tlla.qpn, t->me.qpn);
	assert_memory_equal(nd.tlla.gid.raw, t->me.gid.raw, 16);

	/* duplicate address detection for it (RFC 4862 5.4.3): the proxy
	 * defends, with an advertisement to all nodes (not overriding),
	 * and hands the probe up (a bridge takes it to its other side) */
	mem_sent_clear(t->dev);
	memset(&any, 0, sizeof(any));
	len = ipoib_nd_build_ns(&any, NULL, &lan, NULL, buf, sizeof(buf));
	assert_int_not_equal(len, 0);
	from_peer(t, IPOIB_ETH_P_IPV6, buf, len);
	assert_int_equal(mem_sent_count(t->dev), 1);
	p = mem_sent(t->dev, 0);
	mgid6(t, "ff02::1", &an);
	assert_to_group(t, p, &an);
	assert_int_equal(ipoib_nd_decode(p->data + IPOIB_HDR_LEN,
					p->len - IPOIB_HDR_LEN, &nd), INET_OK);
	assert_int_equal(nd.type, INET_ND_NA);
	assert_memory_equal(&nd.target, &lan, 16);
	assert_int_equal(nd.ip.dst.s6_addr[0], 0xff);
	assert_int_equal(nd.flags, 0);
	assert_true(nd.has_tlla);
	assert_int_equal(nd.tlla.qpn, t->me.qpn);
	assert_int_equal(t->nrx, 1);
	/* nor does it take the unspecified address for a neighbour (the
	 * answer would wait for it, and be asked for, on the next tick) */
	assert_false(neigh_listed(t, "::"));
	mem_sent_clear(t->dev);
	h_tick_for(t, 1);
	assert_int_equal(mem_sent_count(t->dev), 0);

	/* a probe for an address nobody holds: no answer, handed up */
	len = ipoib_nd_build_ns(&any, NULL, &other, NULL, buf, sizeof(buf));
	from_peer(t, IPOIB_ETH_P_IPV6, buf, len);
	assert_int_equal(mem_sent_count(t->dev), 0);
	assert_int_equal(t->nrx, 2);
}

/* ---- next hops ----------------------------------------------------------- */

static void test_nexthop_resolved(void **state)
{
	struct t *t = *state;
	const struct ipoib_link_stats *st;
	struct ipoib_addr router = peer_qpn(t, 0x333);
	struct inet_addr dst = h_ip("192.0.2.9"), nh = h_ip("10.0.0.254");
	const struct mem_pkt *p;
	uint8_t pkt[64];
	size_t len;

	relink(t, &(struct ipoib_link_cfg){ .pkey = 0xffff }, &router_ops);
	st = ipoib_link_stats(t->l);
	addr4(t->l, "10.0.0.1", 24);
	bring_up(t);
	mem_sent_clear(t->dev);

	/* off-link: the router's address is asked for, not the
	 * destination's */
	xmit4(t, "192.0.2.9", 1);
	assert_int_equal(route.calls, 1);
	assert_true(inet_addr_equal(&route.last, &dst));
	assert_int_equal(mem_sent_count(t->dev), 1);
	assert_int_equal(arp_requests_for(t, "10.0.0.254"), 1);
	assert_int_equal(arp_requests_for(t, "192.0.2.9"), 0);

	/* the router answers: the packet goes to it, unchanged */
	mem_sent_clear(t->dev);
	arp_reply_from(t, &router, "10.0.0.254", "10.0.0.1");
	assert_int_equal(mem_sent_count(t->dev), 1);
	p = mem_sent(t->dev, 0);
	assert_int_equal(p->qpn, 0x333);
	assert_int_equal(p->ah.dlid, PEER_LID);
	len = udp4("10.0.0.1", "192.0.2.9", 1, pkt);
	assert_int_equal(p->len, IPOIB_HDR_LEN + len);
	assert_memory_equal(p->data + IPOIB_HDR_LEN, pkt, len);
	assert_neigh_hw(t, "10.0.0.254", 1, 0x333);
	assert_neigh_hw(t, "192.0.2.9", 0, 0);
	assert_false(neigh_listed(t, "192.0.2.9"));

	/* another destination behind it: straight to the router */
	mem_sent_clear(t->dev);
	xmit4(t, "192.0.2.77", 2);
	assert_int_equal(mem_sent_count(t->dev), 1);
	assert_int_equal(mem_sent(t->dev, 0)->qpn, 0x333);

	/* a next hop given by the caller: the hook is not asked */
	mem_sent_clear(t->dev);
	len = udp4("10.0.0.1", "203.0.113.5", 3, pkt);
	ipoib_link_xmit_nh(t->l, pkt, len, &nh);
	assert_int_equal(route.calls, 2);
	assert_int_equal(mem_sent_count(t->dev), 1);
	assert_int_equal(mem_sent(t->dev, 0)->qpn, 0x333);
	assert_int_equal(st->drop[IPOIB_DROP_NO_ROUTE], 0);
}

static void test_nexthop_unreachable(void **state)
{
	struct t *t = *state;
	const struct ipoib_link_stats *st;
	uint64_t tx0;

	relink(t, &(struct ipoib_link_cfg){ .pkey = 0xffff }, &router_ops);
	st = ipoib_link_stats(t->l);
	addr4(t->l, "10.0.0.1", 24);
	bring_up(t);
	mem_sent_clear(t->dev);
	tx0 = st->tx_packets;	/* the announcement of our address */
	xmit4(t, "198.51.100.1", 1);
	xmit4(t, "198.51.100.2", 2);
	assert_int_equal(route.calls, 2);
	/* dropped and counted, nobody asked for */
	assert_int_equal(st->drop[IPOIB_DROP_NO_ROUTE], 2);
	assert_int_equal(mem_sent_count(t->dev), 0);
	assert_false(neigh_listed(t, "198.51.100.1"));
	assert_int_equal(st->tx_packets, tx0);
}

/* ---- time ---------------------------------------------------------------- */

/* No answer: the request is repeated once a second, and after the third
 * the neighbour is given up with what waited for it. */
static void test_neigh_expiry(void **state)
{
	struct t *t = *state;
	const struct ipoib_link_stats *st = ipoib_link_stats(t->l);

	addr4(t->l, "10.0.0.1", 24);
	bring_up(t);
	mem_sent_clear(t->dev);
	xmit4(t, "10.0.0.2", 1);
	xmit4(t, "10.0.0.2", 2);
	assert_int_equal(arp_requests_for(t, "10.0.0.2"), 1);

	/* the timer alone, with no time gone, asks nothing */
	h_tick(t);
	assert_int_equal(arp_requests_for(t, "10.0.0.2"), 1);
	h_tick_for(t, 1);
	assert_int_equal(arp_requests_for(t, "10.0.0.2"), 2);
	h_tick_for(t, 1);
	assert_int_equal(arp_requests_for(t, "10.0.0.2"), 3);
	assert_true(neigh_listed(t, "10.0.0.2"));
	assert_int_equal(st->drop[IPOIB_DROP_NEIGH_FAILED], 0);

	/* three asked: given up, the two waiting dropped */
	h_tick_for(t, 1);
	assert_int_equal(arp_requests_for(t, "10.0.0.2"), 3);
	assert_int_equal(st->drop[IPOIB_DROP_NEIGH_FAILED], 2);
	assert_false(neigh_listed(t, "10.0.0.2"));
	assert_int_equal(mem_sent_count(t->dev), 3);	/* ARPs only */

	/* the next packet starts over */
	xmit4(t, "10.0.0.2", 3);
	assert_int_equal(arp_requests_for(t, "10.0.0.2"), 4);
	assert_true(neigh_listed(t, "10.0.0.2"));
	assert_int_equal(st->drop[IPOIB_DROP_NEIGH_QUEUE], 0);
}

/* A resolved neighbour older than neigh_ttl_s is asked again on its next
 * packet, and used meanwhile. */
static void test_neigh_stale_resolicit(void **state)
{
	struct t *t = *state;
	const struct mem_pkt *p;
	unsigned int i, data;

	relink(t, &(struct ipoib_link_cfg){ .pkey = 0xffff,
					    .neigh_ttl_s = 30 }, &host_ops);
	addr4(t->l, "10.0.0.1", 24);
	bring_up(t);
	xmit4(t, "10.0.0.2", 1);
	arp_reply_from(t, &t->peer, "10.0.0.2", "10.0.0.1");

	/* 30 s: still fresh */
	h_clock_advance(30);
	mem_sent_clear(t->dev);
	xmit4(t, "10.0.0.2", 2);
	assert_int_equal(mem_sent_count(t->dev), 1);
	assert_to_peer(mem_sent(t->dev, 0));
	assert_int_equal(arp_requests_for(t, "10.0.0.2"), 0);

	/* 31 s: stale; asked again on the broadcast group, the packet
	 * still goes to the address we have */
	h_clock_advance(1);
	mem_sent_clear(t->dev);
	xmit4(t, "10.0.0.2", 3);
	assert_int_equal(mem_sent_count(t->dev), 2);
	assert_int_equal(arp_requests_for(t, "10.0.0.2"), 1);
	for (i = 0, data = 0; (p = mem_sent(t->dev, i)); i++) {
		if (pkt_ethertype(p) == IPOIB_ETH_P_ARP) {
			assert_to_group(t, p, &t->bcast);
		} else {
			assert_to_peer(p);
			assert_int_equal(p->data[IPOIB_HDR_LEN + 28], 3);
			data++;
		}
	}
	assert_int_equal(data, 1);
	/* once asked, not again for every packet */
	mem_sent_clear(t->dev);
	xmit4(t, "10.0.0.2", 4);
	assert_int_equal(mem_sent_count(t->dev), 1);
	assert_int_equal(arp_requests_for(t, "10.0.0.2"), 0);

	/* the answer makes it fresh for another 30 s */
	h_clock_advance(10);
	arp_reply_from(t, &t->peer, "10.0.0.2", "10.0.0.1");
	h_clock_advance(30);
	mem_sent_clear(t->dev);
	xmit4(t, "10.0.0.2", 5);
	assert_int_equal(arp_requests_for(t, "10.0.0.2"), 0);
	h_clock_advance(1);
	xmit4(t, "10.0.0.2", 6);
	assert_int_equal(arp_requests_for(t, "10.0.0.2"), 1);
}

/* ---- announcements of our addresses ------------------------------------- */

/* How many sent frames are unsolicited Neighbour Advertisements for
 * target; the last one in *nd.  Each is asserted to go to the all-nodes
 * group, from target itself. */
/*
 * A Neighbour Solicitation from the peer (2001:db8::2) for target, after
 * what was sent is cleared: how many packets answered it, and the flags of
 * the advertisement among them (0 when none).
 */
static unsigned int ns_answered(struct t *t, const struct in6_addr *target,
				uint8_t *flags)
{
	struct in6_addr peer6 = h_in6("2001:db8::2");
	const struct mem_pkt *p;
	struct ipoib_nd nd;
	uint8_t buf[128];
	size_t len;

	mem_sent_clear(t->dev);
	len = ipoib_nd_build_ns(&peer6, NULL, target, &t->peer, buf,
				sizeof(buf));
	from_peer(t, IPOIB_ETH_P_IPV6, buf, len);
	*flags = 0;
	p = mem_sent(t->dev, 0);
	if (p && ipoib_nd_decode(p->data + IPOIB_HDR_LEN,
				 p->len - IPOIB_HDR_LEN, &nd) == INET_OK &&
	    nd.type == INET_ND_NA)
		*flags = nd.flags;
	return mem_sent_count(t->dev);
}

static unsigned int nas_for(struct t *t, const char *target,
			    struct ipoib_nd *nd)
{
	struct in6_addr tg = h_in6(target), an = h_in6("ff02::1");
	const struct mem_pkt *p;
	struct ipoib_nd x;
	union fab_gid mgid;
	unsigned int i, n = 0;

	mgid6(t, "ff02::1", &mgid);
	for (i = 0; (p = mem_sent(t->dev, i)); i++) {
		if (pkt_ethertype(p) != IPOIB_ETH_P_IPV6 ||
		    ipoib_nd_decode(p->data + IPOIB_HDR_LEN,
				    p->len - IPOIB_HDR_LEN, &x) != INET_OK ||
		    x.type != INET_ND_NA || memcmp(&x.target, &tg, 16))
			continue;
		assert_to_group(t, p, &mgid);
		assert_memory_equal(&x.ip.dst, &an, 16);
		assert_memory_equal(&x.ip.src, &tg, 16);
		*nd = x;
		n++;
	}
	return n;
}

/*
 * Our IPv6 addresses are announced as Linux does with ndisc_notify: an
 * unsolicited advertisement to all nodes, overriding, with our 20-byte
 * address, when the carrier comes up and when one is added; a tentative
 * one only once its duplicate address detection is done (RFC 4862 5.4).
 * Counted in nd_tx.  A proxy's announcement (ipoib_link_announce) is
 * the same (the override flag, never the router flag).
 */
static void test_nd_announce_own(void **state)
{
	struct t *t = *state;
	const struct ipoib_link_stats *st = ipoib_link_stats(t->l);
	struct inet_prefix tent;
	struct inet_addr a;
	struct ipoib_nd nd;
	uint64_t nd0;
	uint8_t fl;

	addr4(t->l, "10.0.0.1", 24);
	addr6(t->l, "2001:db8::1", 64);
	memset(&tent, 0, sizeof(tent));
	tent.addr = h_ip("2001:db8::3");
	tent.plen = 64;
	assert_int_equal(ipoib_link_add_addr_tentative(t->l, &tent, NULL, 0),
			 0);
	bring_up(t);
	assert_int_equal(nas_for(t, "2001:db8::1", &nd), 1);
	assert_int_equal(nd.flags, INET_NA_FLAG_OVERRIDE);
	assert_true(nd.has_tlla);
	assert_int_equal(nd.tlla.qpn, t->me.qpn);
	assert_memory_equal(nd.tlla.gid.raw, t->me.gid.raw, 16);
	assert_int_equal(nas_for(t, "2001:db8::3", &nd), 0);
	assert_int_equal(st->nd_tx, 1);

	/* a solicitation for it while tentative is not answered (RFC 4862
	 * 5.4.3); once ready it is */
	assert_int_equal(ns_answered(t, &tent.addr.v6, &fl), 0);
	assert_int_equal(st->nd_tx, 1);

	/* DAD done: announced once */
	mem_sent_clear(t->dev);
	assert_int_equal(ipoib_link_addr_ready(t->l, &tent.addr), 0);
	pump(t);
	assert_int_equal(nas_for(t, "2001:db8::3", &nd), 1);
	assert_int_equal(nd.flags, INET_NA_FLAG_OVERRIDE);
	assert_int_equal(nd.tlla.qpn, t->me.qpn);
	assert_int_equal(st->nd_tx, 2);
	assert_int_equal(ipoib_link_addr_ready(t->l, &tent.addr), 0);
	pump(t);
	assert_int_equal(mem_sent_count(t->dev), 1);
	assert_int_equal(ns_answered(t, &tent.addr.v6, &fl), 1);
	assert_int_equal(fl, INET_NA_FLAG_SOLICITED | INET_NA_FLAG_OVERRIDE);
	assert_int_equal(st->nd_tx, 3);
	a = h_ip("2001:db8::9");
	errno = 0;
	assert_int_equal(ipoib_link_addr_ready(t->l, &a), -1);
	assert_int_equal(errno, ENOENT);

	/* one added while the carrier is up: at once */
	mem_sent_clear(t->dev);
	addr6(t->l, "2001:db8::4", 64);
	pump(t);
	assert_int_equal(nas_for(t, "2001:db8::4", &nd), 1);
	assert_int_equal(st->nd_tx, 4);

	/* the carrier back after a port down/up: every usable one again */
	port_event(t, FAB_EV_PORT_ERR);
	mem_sent_clear(t->dev);
	nd0 = st->nd_tx;
	port_event(t, FAB_EV_PORT_ACTIVE);
	assert_true(ipoib_link_carrier(t->l));
	assert_int_equal(nas_for(t, "2001:db8::1", &nd), 1);
	assert_int_equal(nas_for(t, "2001:db8::3", &nd), 1);
	assert_int_equal(nas_for(t, "2001:db8::4", &nd), 1);
	assert_int_equal(nd.flags, INET_NA_FLAG_OVERRIDE);
	assert_int_equal(st->nd_tx, nd0 + 3);

	/* a proxy's announcement for IPv6: to all nodes, with the override
	 * flag (RFC 4861 7.2.8 allows it unsolicited), so that neighbours
	 * holding the proxy's old address take the new one at once */
	mem_sent_clear(t->dev);
	a = h_ip("2001:db8::50");
	ipoib_link_announce(t->l, &a);
	pump(t);
	assert_int_equal(nas_for(t, "2001:db8::50", &nd), 1);
	assert_int_equal(nd.flags, INET_NA_FLAG_OVERRIDE);
	assert_true(nd.has_tlla);
	assert_int_equal(nd.tlla.qpn, t->me.qpn);
}

/* A tentative address whose DAD failed (ipoib_link_del_addr) is never
 * announced, not even when the carrier comes back. */
static void test_nd_announce_not_dadfailed(void **state)
{
	struct t *t = *state;
	struct inet_prefix tent;
	struct ipoib_nd nd;

	memset(&tent, 0, sizeof(tent));
	tent.addr = h_ip("2001:db8::3");
	tent.plen = 64;
	assert_int_equal(ipoib_link_add_addr_tentative(t->l, &tent, NULL, 0),
			 0);
	bring_up(t);
	assert_int_equal(ipoib_link_del_addr(t->l, &tent.addr), 0);
	assert_int_equal(ipoib_link_addr_ready(t->l, &tent.addr), -1);
	port_event(t, FAB_EV_PORT_ERR);
	port_event(t, FAB_EV_PORT_ACTIVE);
	assert_int_equal(nas_for(t, "2001:db8::3", &nd), 0);
}

/*
 * A link whose host forwards IPv6 (ipoib_link_set_router): its answers and
 * announcements for its own addresses carry the Router flag (RFC 4861
 * 7.2.4, 7.2.6); a proxy's answer does not speak for the proxied host.
 */
static void test_nd_router_flag(void **state)
{
	struct t *t = *state;
	struct in6_addr me6 = h_in6("2001:db8::1");
	struct ipoib_nd nd;
	uint8_t fl;

	addr6(t->l, "2001:db8::1", 64);
	ipoib_link_set_router(t->l, 1);
	bring_up(t);
	assert_int_equal(nas_for(t, "2001:db8::1", &nd), 1);
	assert_int_equal(nd.flags, INET_NA_FLAG_OVERRIDE | INET_NA_FLAG_ROUTER);
	assert_int_equal(ns_answered(t, &me6, &fl), 1);
	assert_int_equal(fl, INET_NA_FLAG_SOLICITED | INET_NA_FLAG_OVERRIDE |
			 INET_NA_FLAG_ROUTER);
	/* forwarding off again: a host's answer */
	ipoib_link_set_router(t->l, 0);
	assert_int_equal(ns_answered(t, &me6, &fl), 1);
	assert_int_equal(fl, INET_NA_FLAG_SOLICITED | INET_NA_FLAG_OVERRIDE);
}

/*
 * A peer that restarted (another QPN) announces its addresses, link-local
 * and global: our entries take the new address at once (RFC 4861 7.2.5,
 * Override), and packets go there; the advertisement still reaches the
 * host.  One for an address we hold no entry for makes none.
 */
static void test_nd_announce_updates_neigh(void **state)
{
	static const char *const peers[] = { "2001:db8::2", "fe80::2" };
	struct t *t = *state;
	struct ipoib_addr moved = peer_qpn(t, 0x333);
	const struct mem_pkt *p;
	uint8_t pkt[64];
	unsigned int i, nrx;
	size_t len;

	addr6(t->l, "2001:db8::1", 64);
	bring_up(t);
	for (i = 0; i < 2; i++) {
		len = udp6("2001:db8::1", peers[i], 1, pkt);
		ipoib_link_xmit(t->l, pkt, len);
		pump(t);
		na_from(t, &t->peer, peers[i], "2001:db8::1",
			INET_NA_FLAG_SOLICITED | INET_NA_FLAG_OVERRIDE);
		assert_neigh_hw(t, peers[i], 1, PEER_QPN);
	}
	for (i = 0; i < 2; i++) {
		nrx = t->nrx;
		na_from(t, &moved, peers[i], NULL, INET_NA_FLAG_OVERRIDE);
		assert_neigh_hw(t, peers[i], 1, 0x333);
		assert_int_equal(t->nrx, nrx + 1);
		mem_sent_clear(t->dev);
		len = udp6("2001:db8::1", peers[i], 2, pkt);
		ipoib_link_xmit(t->l, pkt, len);
		pump(t);
		assert_int_equal(mem_sent_count(t->dev), 1);
		p = mem_sent(t->dev, 0);
		assert_int_equal(p->qpn, 0x333);
		assert_int_equal(p->ah.dlid, PEER_LID);
	}
	na_from(t, &moved, "2001:db8::7", NULL, INET_NA_FLAG_OVERRIDE);
	assert_false(neigh_listed(t, "2001:db8::7"));
}

/* Neighbour Solicitations sent for target (to its solicited-node group). */
static unsigned int ns_sent_for(struct t *t, const char *target)
{
	struct in6_addr tg = h_in6(target);
	const struct mem_pkt *p;
	struct ipoib_nd x;
	unsigned int i, n = 0;

	for (i = 0; (p = mem_sent(t->dev, i)); i++)
		if (pkt_ethertype(p) == IPOIB_ETH_P_IPV6 &&
		    ipoib_nd_decode(p->data + IPOIB_HDR_LEN,
				    p->len - IPOIB_HDR_LEN, &x) == INET_OK &&
		    x.type == INET_ND_NS && !memcmp(&x.target, &tg, 16))
			n++;
	return n;
}

/* A packet to 2001:db8::2 goes to qpn. */
static void assert_v6_goes_to(struct t *t, uint32_t qpn, uint8_t mark)
{
	uint8_t pkt[64];
	size_t len = udp6("2001:db8::1", "2001:db8::2", mark, pkt);
	unsigned int i, data = 0;
	const struct mem_pkt *p;

	mem_sent_clear(t->dev);
	ipoib_link_xmit(t->l, pkt, len);
	pump(t);
	for (i = 0; (p = mem_sent(t->dev, i)); i++) {
		if (pkt_ethertype(p) != IPOIB_ETH_P_IPV6 ||
		    p->data[IPOIB_HDR_LEN + 6] != IPPROTO_UDP)
			continue;
		assert_int_equal(p->qpn, qpn);
		data++;
	}
	assert_int_equal(data, 1);
}

/*
 * RFC 4861 7.2.5, as Linux's neigh_update does it: an advertisement
 * without the override flag does not replace the link address a
 * neighbour has (a proxy's answer loses to the host's own); the address
 * kept is checked: confirmed, the check ends; not confirmed within 5 s
 * and 3 solicitations (Linux's DELAY and PROBE), it is given up and the
 * neighbour resolved again, when the other answer is taken.  With the
 * override flag the new address is taken at once.
 */
static void test_nd_override_rules(void **state)
{
	struct t *t = *state;
	const struct ipoib_link_stats *st = ipoib_link_stats(t->l);
	struct ipoib_addr proxy_hw = peer_qpn(t, 0x333),
			  moved = peer_qpn(t, 0x444);
	uint8_t pkt[64];
	size_t len;

	addr6(t->l, "2001:db8::1", 64);
	bring_up(t);
	len = udp6("2001:db8::1", "2001:db8::2", 1, pkt);
	ipoib_link_xmit(t->l, pkt, len);
	pump(t);
	na_from(t, &t->peer, "2001:db8::2", "2001:db8::1",
		INET_NA_FLAG_SOLICITED | INET_NA_FLAG_OVERRIDE);
	assert_neigh_hw(t, "2001:db8::2", 1, PEER_QPN);

	/* a proxy's unsolicited and solicited answers: the host's address
	 * stays, and is used */
	na_from(t, &proxy_hw, "2001:db8::2", "2001:db8::1", 0);
	na_from(t, &proxy_hw, "2001:db8::2", "2001:db8::1",
		INET_NA_FLAG_SOLICITED);
	assert_neigh_hw(t, "2001:db8::2", 1, PEER_QPN);
	assert_v6_goes_to(t, PEER_QPN, 2);

	/* checked: nothing for 5 s, then a solicitation a second; the
	 * host's answer (its own address) ends the check */
	mem_sent_clear(t->dev);
	h_tick_for(t, 4);
	assert_int_equal(ns_sent_for(t, "2001:db8::2"), 0);
	h_tick_for(t, 1);
	assert_int_equal(ns_sent_for(t, "2001:db8::2"), 1);
	h_tick_for(t, 1);
	assert_int_equal(ns_sent_for(t, "2001:db8::2"), 2);
	na_from(t, &t->peer, "2001:db8::2", "2001:db8::1",
		INET_NA_FLAG_SOLICITED | INET_NA_FLAG_OVERRIDE);
	mem_sent_clear(t->dev);
	h_tick_for(t, 10);
	assert_int_equal(ns_sent_for(t, "2001:db8::2"), 0);
	assert_neigh_hw(t, "2001:db8::2", 1, PEER_QPN);
	assert_int_equal(st->neigh_unreachable, 0);

	/* the host gone (a restarted gateway's old QPN, say): a proxy's
	 * address offered without override; nothing confirms the old one:
	 * 3 solicitations, then it is given up and asked for again, and
	 * the answer without override is taken */
	na_from(t, &proxy_hw, "2001:db8::2", "2001:db8::1", 0);
	mem_sent_clear(t->dev);
	h_tick_for(t, 7);
	assert_int_equal(ns_sent_for(t, "2001:db8::2"), 3);
	assert_neigh_hw(t, "2001:db8::2", 1, PEER_QPN);
	assert_int_equal(st->neigh_unreachable, 0);
	h_tick_for(t, 1);
	assert_int_equal(st->neigh_unreachable, 1);
	assert_int_equal(ns_sent_for(t, "2001:db8::2"), 4);
	assert_neigh_hw(t, "2001:db8::2", 0, 0);
	na_from(t, &proxy_hw, "2001:db8::2", "2001:db8::1",
		INET_NA_FLAG_SOLICITED);
	assert_neigh_hw(t, "2001:db8::2", 1, 0x333);
	assert_v6_goes_to(t, 0x333, 3);

	/* with the override flag, another address is taken at once, and
	 * no check runs */
	na_from(t, &moved, "2001:db8::2", "2001:db8::1", INET_NA_FLAG_OVERRIDE);
	assert_neigh_hw(t, "2001:db8::2", 1, 0x444);
	assert_v6_goes_to(t, 0x444, 4);
	mem_sent_clear(t->dev);
	h_tick_for(t, 10);
	assert_int_equal(ns_sent_for(t, "2001:db8::2"), 0);
	assert_int_equal(st->neigh_unreachable, 1);
}

/* ---- the table limit ----------------------------------------------------- */

/* Full of resolved neighbours: the one heard from longest ago makes
 * room, whatever the order they came in. */
static void test_neigh_table_evicts_oldest(void **state)
{
	struct t *t = *state;
	const struct ipoib_link_stats *st;
	struct ipoib_addr a = peer_qpn(t, 0x301), b = peer_qpn(t, 0x302);

	relink(t, &(struct ipoib_link_cfg){ .pkey = 0xffff, .neigh_max = 2 },
	       &host_ops);
	st = ipoib_link_stats(t->l);
	addr4(t->l, "10.0.0.1", 24);
	bring_up(t);
	xmit4(t, "10.0.0.2", 1);
	arp_reply_from(t, &a, "10.0.0.2", "10.0.0.1");
	h_clock_advance(1);
	xmit4(t, "10.0.0.3", 1);
	arp_reply_from(t, &b, "10.0.0.3", "10.0.0.1");
	/* A, the first made, is heard from again: B is now the oldest */
	h_clock_advance(1);
	arp_reply_from(t, &a, "10.0.0.2", "10.0.0.1");
	h_clock_advance(1);

	mem_sent_clear(t->dev);
	xmit4(t, "10.0.0.4", 1);
	assert_int_equal(arp_requests_for(t, "10.0.0.4"), 1);
	assert_true(neigh_listed(t, "10.0.0.4"));
	assert_false(neigh_listed(t, "10.0.0.3"));
	assert_neigh_hw(t, "10.0.0.3", 0, 0);
	assert_neigh_hw(t, "10.0.0.2", 1, 0x301);
	assert_int_equal(st->drop[IPOIB_DROP_NEIGH_TABLE_FULL], 0);
	/* the one kept still works without asking */
	mem_sent_clear(t->dev);
	xmit4(t, "10.0.0.2", 2);
	assert_int_equal(mem_sent_count(t->dev), 1);
	assert_int_equal(mem_sent(t->dev, 0)->qpn, 0x301);
}

/* Full of neighbours still resolving: nothing is evicted, the new
 * destination is refused and counted. */
static void test_neigh_table_full_resolving(void **state)
{
	struct t *t = *state;
	const struct ipoib_link_stats *st;
	struct ipoib_addr a = peer_qpn(t, 0x301);
	struct inet_addr c = h_ip("10.0.0.4");

	relink(t, &(struct ipoib_link_cfg){ .pkey = 0xffff, .neigh_max = 2 },
	       &host_ops);
	st = ipoib_link_stats(t->l);
	addr4(t->l, "10.0.0.1", 24);
	bring_up(t);
	xmit4(t, "10.0.0.2", 1);
	xmit4(t, "10.0.0.3", 1);
	mem_sent_clear(t->dev);
	xmit4(t, "10.0.0.4", 1);
	assert_int_equal(st->drop[IPOIB_DROP_NEIGH_TABLE_FULL], 1);
	assert_int_equal(mem_sent_count(t->dev), 0);
	assert_false(neigh_listed(t, "10.0.0.4"));
	assert_true(neigh_listed(t, "10.0.0.2"));
	assert_true(neigh_listed(t, "10.0.0.3"));
	ipoib_link_neigh_resolve(t->l, &c);
	assert_int_equal(st->drop[IPOIB_DROP_NEIGH_TABLE_FULL], 2);
	assert_int_equal(mem_sent_count(t->dev), 0);

	/* one resolves: it is the only one that can make room */
	arp_reply_from(t, &a, "10.0.0.2", "10.0.0.1");
	mem_sent_clear(t->dev);
	xmit4(t, "10.0.0.4", 2);
	assert_int_equal(st->drop[IPOIB_DROP_NEIGH_TABLE_FULL], 2);
	assert_int_equal(arp_requests_for(t, "10.0.0.4"), 1);
	assert_false(neigh_listed(t, "10.0.0.2"));
	assert_true(neigh_listed(t, "10.0.0.3"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_proxy_arp, setup_hooks,
						teardown),
		cmocka_unit_test_setup_teardown(test_proxy_nd, setup_hooks,
						teardown),
		cmocka_unit_test_setup_teardown(test_nexthop_resolved,
						setup_hooks, teardown),
		cmocka_unit_test_setup_teardown(test_nexthop_unreachable,
						setup_hooks, teardown),
		cmocka_unit_test_setup_teardown(test_neigh_expiry, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_neigh_stale_resolicit,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_nd_announce_own, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_nd_announce_not_dadfailed,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_nd_announce_updates_neigh,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_nd_override_rules, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_nd_router_flag, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_neigh_table_evicts_oldest,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_neigh_table_full_resolving, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The IPoIB link (ulp/ipoib/ipoib_link.c, ipoib_neigh.c, ipoib_mcast.c)
 * over the in-memory provider: what it sends on the wire and asks the SA,
 * for what the host sends it and what arrives from the fabric.  Peers are
 * played by the test with the real ipoib_wire.c codec; the SA answers with
 * the real sa_mad.c codec.
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

#include <event2/event.h>

#include "fabric/sa_mad.h"
#include "inet/csum.h"
#include "inet/nd.h"
#include "tests/unit/ipoib_harness.h"
#include "tests/unit/prov_mem.h"
#include "ulp/ipoib/ipoib_link.h"

/* ---- the broadcast group and carrier ------------------------------------ */

static void test_bcast_join_carrier(void **state)
{
	struct t *t = *state;
	const struct sa_mcmember *j;
	union fab_gid pg;

	mem_sa_joins(t->dev, MEM_SA_HOLD);
	assert_int_equal(ipoib_link_start(t->l, NULL, 0), 0);
	pump(t);
	/* asked, not answered yet: no carrier */
	j = join_of(t, &t->bcast);
	assert_non_null(j);
	assert_int_equal(j->join_state, SA_JOIN_FULL);
	mem_port_gid(&pg);
	assert_memory_equal(j->port_gid.raw, pg.raw, 16);
	assert_false(ipoib_link_carrier(t->l));
	assert_int_equal(t->carrier_ups, 0);

	mem_sa_joins(t->dev, MEM_SA_ANSWER);
	mem_sa_release(t->dev);
	pump(t);
	assert_true(ipoib_link_carrier(t->l));
	assert_int_equal(t->carrier_ups, 1);
	/* link MTU = group MTU (2048) - IPoIB header */
	assert_int_equal(t->mtu, 2044);
	assert_int_equal(ipoib_link_mtu(t->l), 2044);
	assert_true(mem_attached(t->dev, &t->bcast));
	ipoib_link_hwaddr(t->l, &t->me);
	assert_int_equal(t->me.qpn, mem_qpn(t->dev));
	assert_int_not_equal(t->me.qpn, 0);
}

static void test_bcast_refused_no_carrier(void **state)
{
	struct t *t = *state;

	mem_sa_joins(t->dev, MEM_SA_REFUSE);
	assert_int_equal(ipoib_link_start(t->l, NULL, 0), 0);
	pump(t);
	assert_false(ipoib_link_carrier(t->l));
	assert_int_equal(t->carrier_ups, 0);
	assert_int_equal(ipoib_link_stats(t->l)->join_failures, 1);
	assert_false(mem_attached(t->dev, &t->bcast));
}

/* Lines of one of the link's reports. */
static unsigned int report_lines(struct ipoib_link *l, const char *what)
{
	static char text[65536];
	unsigned int n = 0;
	const char *p;

	ipoib_link_report(l, what, text, sizeof(text));
	for (p = text; *p; p++)
		n += *p == '\n';
	return n;
}

/* The link's own listen groups: all-hosts and all-nodes, full members,
 * attached for receive. */
static void test_listen_groups(void **state)
{
	struct t *t = *state;
	union fab_gid g4, g6;

	bring_up(t);
	mgid4(t, "224.0.0.1", &g4);
	mgid6(t, "ff02::1", &g6);
	assert_int_equal(join_of(t, &g4)->join_state, SA_JOIN_FULL);
	assert_int_equal(join_of(t, &g6)->join_state, SA_JOIN_FULL);
	assert_true(mem_attached(t->dev, &g4));
	assert_true(mem_attached(t->dev, &g6));
	/* created with the broadcast group's Q_Key and P_Key */
	assert_int_equal(join_of(t, &g4)->qkey, MEM_QKEY);
	assert_int_equal(join_of(t, &g4)->pkey, 0xffff);
	/* the count the metrics show is the report's list */
	assert_true(ipoib_link_group_count(t->l) >= 2);
	assert_int_equal(ipoib_link_group_count(t->l),
			 report_lines(t->l, "groups"));
}

static void test_carrier_port_down_up(void **state)
{
	struct t *t = *state;
	uint8_t pkt[64];
	size_t len;

	bring_up(t);
	mem_sa_clear(t->dev);
	port_event(t, FAB_EV_PORT_ERR);
	assert_false(ipoib_link_carrier(t->l));
	assert_int_equal(t->carrier_downs, 1);
	/* nothing goes out without carrier */
	mem_sent_clear(t->dev);
	len = udp4("10.0.0.1", "10.0.0.2", 1, pkt);
	ipoib_link_xmit(t->l, pkt, len);
	assert_int_equal(mem_sent_count(t->dev), 0);
	assert_int_equal(ipoib_link_stats(t->l)->drop[IPOIB_DROP_NO_CARRIER],
			 1);

	port_event(t, FAB_EV_PORT_ACTIVE);
	assert_int_equal(mem_sa_count(t->dev, MAD_METHOD_SET,
				      SA_ATTR_MCMEMBER_RECORD, &t->bcast), 1);
	assert_true(ipoib_link_carrier(t->l));
	assert_int_equal(t->carrier_ups, 2);
	assert_int_equal(t->mtu, 2044);
}

/* ---- ARP ------------------------------------------------------------------ */

static void test_arp_resolution(void **state)
{
	struct t *t = *state;
	const struct ipoib_link_stats *st = ipoib_link_stats(t->l);
	const struct mem_pkt *p;
	struct ipoib_arp arp;
	struct in_addr me4, peer4;
	uint8_t pkt[64], buf[IPOIB_ARP_LEN];
	size_t len;
	unsigned int i;
	uint64_t arp0;

	addr4(t->l, "10.0.0.1", 24);
	bring_up(t);
	arp0 = st->arp_tx;	/* the announcement of our address */
	mem_sent_clear(t->dev);
	mem_sa_clear(t->dev);
	/* five packets to an unknown neighbour: one ARP request, three
	 * wait, two are dropped */
	for (i = 0; i < 5; i++) {
		len = udp4("10.0.0.1", "10.0.0.2", (uint8_t)i, pkt);
		ipoib_link_xmit(t->l, pkt, len);
	}
	pump(t);
	assert_int_equal(mem_sent_count(t->dev), 1);
	p = mem_sent(t->dev, 0);
	assert_int_equal(pkt_ethertype(p), IPOIB_ETH_P_ARP);
	assert_to_group(t, p, &t->bcast);
	assert_int_equal(ipoib_arp_parse(p->data + IPOIB_HDR_LEN,
					 p->len - IPOIB_HDR_LEN, &arp),
			 IPOIB_WIRE_OK);
	assert_int_equal(arp.op, IPOIB_ARPOP_REQUEST);
	inet_pton(AF_INET, "10.0.0.1", &me4);
	inet_pton(AF_INET, "10.0.0.2", &peer4);
	assert_int_equal(arp.spa.s_addr, me4.s_addr);
	assert_int_equal(arp.tpa.s_addr, peer4.s_addr);
	assert_int_equal(arp.sha.qpn, t->me.qpn);
	assert_memory_equal(arp.sha.gid.raw, t->me.gid.raw, 16);
	assert_int_equal(st->drop[IPOIB_DROP_NEIGH_QUEUE], 2);
	assert_int_equal(st->arp_tx, arp0 + 1);
	assert_int_equal(mem_sa_count(t->dev, MAD_METHOD_GET,
				      SA_ATTR_PATH_RECORD, NULL), 0);

	/* the reply: a PathRecord query for the peer's GID, then the
	 * three waiting packets to its QPN and LID, in order */
	mem_sent_clear(t->dev);
	len = ipoib_arp_build_reply(&t->peer, &peer4, &t->me, &me4, buf,
				    sizeof(buf));
	assert_int_equal(len, IPOIB_ARP_LEN);
	from_peer(t, IPOIB_ETH_P_ARP, buf, len);
	assert_int_equal(mem_sa_count(t->dev, MAD_METHOD_GET,
				      SA_ATTR_PATH_RECORD, NULL), 1);
	assert_memory_equal(mem_sa_req(t->dev, 0)->rec.path.dgid.raw,
			    t->peer.gid.raw, 16);
	assert_int_equal(mem_sent_count(t->dev), 3);
	for (i = 0; i < 3; i++) {
		p = mem_sent(t->dev, i);
		assert_to_peer(p);
		assert_int_equal(pkt_ethertype(p), IPOIB_ETH_P_IP);
		len = udp4("10.0.0.1", "10.0.0.2", (uint8_t)i, pkt);
		assert_int_equal(p->len, IPOIB_HDR_LEN + len);
		assert_memory_equal(p->data + IPOIB_HDR_LEN, pkt, len);
	}
	/* resolved: the next packet goes straight out, no new query */
	mem_sent_clear(t->dev);
	len = udp4("10.0.0.1", "10.0.0.2", 9, pkt);
	ipoib_link_xmit(t->l, pkt, len);
	assert_int_equal(mem_sent_count(t->dev), 1);
	assert_to_peer(mem_sent(t->dev, 0));
	assert_int_equal(st->path_queries, 1);
	assert_int_equal(st->arp_tx, arp0 + 1);
}

/* Peers that come and go (or a hostile one claiming new GIDs) cost no
 * more than the neighbour table: a path and its address handle go with
 * the last neighbour using them. */
static void test_paths_bounded(void **state)
{
	struct ipoib_link_cfg cfg = { .pkey = 0xffff, .neigh_max = 8 };
	struct t *t = *state;
	const struct mem_pkt *p;
	struct in_addr me4, peer4;
	struct ipoib_addr peer;
	uint8_t buf[IPOIB_ARP_LEN];
	unsigned int i, ah0;
	size_t len;

	ipoib_link_free(t->l, 0);
	t->l = ipoib_link_new(t->base, t->dev, &cfg, &host_ops, t, NULL, 0);
	assert_non_null(t->l);
	addr4(t->l, "10.0.0.1", 24);
	bring_up(t);
	mem_sa_any_path(t->dev, 1);
	ah0 = mem_ah_live(t->dev);
	inet_pton(AF_INET, "10.0.0.1", &me4);
	for (i = 0; i < 200; i++) {
		peer = t->peer;
		peer.qpn = 0x1000 + i;
		peer.gid.raw[14] = (uint8_t)(i >> 8);
		peer.gid.raw[15] = (uint8_t)i;
		peer4.s_addr = htonl(0x0a000100 + i);	/* 10.0.1.i */
		len = ipoib_arp_build_request(&peer, &peer4, &me4, buf,
					      sizeof(buf));
		mem_sent_clear(t->dev);
		mem_sa_clear(t->dev);
		from_peer(t, IPOIB_ETH_P_ARP, buf, len);
		/* every one answered, through a path of its own */
		assert_int_equal(mem_sent_count(t->dev), 1);
		p = mem_sent(t->dev, 0);
		assert_int_equal(p->qpn, peer.qpn);
		assert_int_equal(p->ah.dlid, 0x100 | (i & 0xff));
		assert_true(mem_ah_live(t->dev) - ah0 <= cfg.neigh_max);
	}
	assert_int_equal(ipoib_link_stats(t->l)->path_queries, 200);
	assert_int_equal(ipoib_link_neigh_count(t->l), cfg.neigh_max);
	assert_int_equal(report_lines(t->l, "neighbors"), cfg.neigh_max);
}

/* A refused PathRecord: the packets that waited for it are dropped as
 * path failures, and nothing is sent. */
static void test_arp_path_refused(void **state)
{
	struct t *t = *state;
	const struct ipoib_link_stats *st = ipoib_link_stats(t->l);
	struct in_addr me4, peer4;
	uint8_t pkt[64], buf[IPOIB_ARP_LEN];
	size_t len;

	addr4(t->l, "10.0.0.1", 24);
	bring_up(t);
	mem_sa_paths(t->dev, MEM_SA_REFUSE);
	len = udp4("10.0.0.1", "10.0.0.2", 1, pkt);
	ipoib_link_xmit(t->l, pkt, len);
	ipoib_link_xmit(t->l, pkt, len);
	pump(t);
	mem_sent_clear(t->dev);
	inet_pton(AF_INET, "10.0.0.1", &me4);
	inet_pton(AF_INET, "10.0.0.2", &peer4);
	len = ipoib_arp_build_reply(&t->peer, &peer4, &t->me, &me4, buf,
				    sizeof(buf));
	from_peer(t, IPOIB_ETH_P_ARP, buf, len);
	assert_int_equal(mem_sent_count(t->dev), 0);
	assert_int_equal(st->path_failures, 1);
	assert_int_equal(st->drop[IPOIB_DROP_PATH_FAILED], 2);
}

static void test_arp_answer_own(void **state)
{
	struct t *t = *state;
	const struct mem_pkt *p;
	struct ipoib_arp arp;
	struct in_addr me4, other, peer4;
	struct inet_addr pa;
	struct ipoib_addr hw;
	uint8_t buf[IPOIB_ARP_LEN];
	size_t len;

	addr4(t->l, "10.0.0.1", 24);
	bring_up(t);
	mem_sent_clear(t->dev);
	inet_pton(AF_INET, "10.0.0.1", &me4);
	inet_pton(AF_INET, "10.0.0.99", &other);
	inet_pton(AF_INET, "10.0.0.2", &peer4);
	/* not ours: silence */
	len = ipoib_arp_build_request(&t->peer, &peer4, &other, buf,
				      sizeof(buf));
	from_peer(t, IPOIB_ETH_P_ARP, buf, len);
	assert_int_equal(mem_sent_count(t->dev), 0);
	memset(&pa, 0, sizeof(pa));
	pa.family = AF_INET;
	pa.v4 = peer4;
	assert_int_equal(ipoib_link_neigh_hw(t->l, &pa, &hw), -1);

	/* ours: the sender is learnt, and answered unicast */
	len = ipoib_arp_build_request(&t->peer, &peer4, &me4, buf,
				      sizeof(buf));
	from_peer(t, IPOIB_ETH_P_ARP, buf, len);
	assert_int_equal(mem_sent_count(t->dev), 1);
	p = mem_sent(t->dev, 0);
	assert_to_peer(p);
	assert_int_equal(pkt_ethertype(p), IPOIB_ETH_P_ARP);
	assert_int_equal(ipoib_arp_parse(p->data + IPOIB_HDR_LEN,
					 p->len - IPOIB_HDR_LEN, &arp),
			 IPOIB_WIRE_OK);
	assert_int_equal(arp.op, IPOIB_ARPOP_REPLY);
	assert_int_equal(arp.spa.s_addr, me4.s_addr);
	assert_int_equal(arp.tpa.s_addr, peer4.s_addr);
	assert_int_equal(arp.sha.qpn, t->me.qpn);
	assert_memory_equal(arp.sha.gid.raw, t->me.gid.raw, 16);
	assert_int_equal(arp.tha.qpn, PEER_QPN);
	assert_int_equal(ipoib_link_neigh_hw(t->l, &pa, &hw), 0);
	assert_int_equal(hw.qpn, PEER_QPN);
	/* nothing of it went to the host */
	assert_int_equal(t->nrx, 0);
}

/* ---- IPv6 neighbour discovery ---------------------------------------------- */

static void test_nd_resolution(void **state)
{
	struct t *t = *state;
	const struct ipoib_link_stats *st = ipoib_link_stats(t->l);
	const struct mem_pkt *p;
	union fab_gid sn;
	struct ipoib_nd nd;
	struct in6_addr me6, peer6;
	uint8_t pkt[128], buf[128];
	size_t len;
	unsigned int i;
	uint64_t nd0;

	addr6(t->l, "2001:db8::1", 64);
	bring_up(t);
	nd0 = st->nd_tx;	/* the announcement of our address */
	mem_sent_clear(t->dev);
	mem_sa_clear(t->dev);
	for (i = 0; i < 4; i++) {
		len = udp6("2001:db8::1", "2001:db8::2", (uint8_t)i, pkt);
		ipoib_link_xmit(t->l, pkt, len);
	}
	pump(t);
	/* the NS goes to the target's solicited-node group, joined
	 * send-only for it (we do not listen there) */
	mgid6(t, "ff02::1:ff00:2", &sn);
	assert_int_equal(join_of(t, &sn)->join_state, SA_JOIN_SENDONLY_FULL);
	assert_false(mem_attached(t->dev, &sn));
	assert_int_equal(mem_sent_count(t->dev), 1);
	p = mem_sent(t->dev, 0);
	assert_to_group(t, p, &sn);
	assert_int_equal(pkt_ethertype(p), IPOIB_ETH_P_IPV6);
	assert_int_equal(ipoib_nd_decode(p->data + IPOIB_HDR_LEN,
					p->len - IPOIB_HDR_LEN, &nd),
			 INET_OK);
	assert_int_equal(nd.type, INET_ND_NS);
	inet_pton(AF_INET6, "2001:db8::1", &me6);
	inet_pton(AF_INET6, "2001:db8::2", &peer6);
	assert_memory_equal(&nd.target, &peer6, 16);
	assert_memory_equal(&nd.ip.src, &me6, 16);
	assert_true(nd.has_slla);
	assert_int_equal(nd.slla.qpn, t->me.qpn);
	assert_int_equal(st->nd_tx, nd0 + 1);
	assert_int_equal(st->drop[IPOIB_DROP_NEIGH_QUEUE], 1);

	/* the NA: path query, then the three waiting packets */
	mem_sent_clear(t->dev);
	len = ipoib_nd_build_na(&peer6, &me6, &peer6,
				INET_NA_FLAG_SOLICITED |
				INET_NA_FLAG_OVERRIDE, &t->peer, buf,
				sizeof(buf));
	assert_int_not_equal(len, 0);
	from_peer(t, IPOIB_ETH_P_IPV6, buf, len);
	assert_int_equal(mem_sa_count(t->dev, MAD_METHOD_GET,
				      SA_ATTR_PATH_RECORD, NULL), 1);
	assert_int_equal(mem_sent_count(t->dev), 3);
	for (i = 0; i < 3; i++) {
		p = mem_sent(t->dev, i);
		assert_to_peer(p);
		len = udp6("2001:db8::1", "2001:db8::2", (uint8_t)i, pkt);
		assert_int_equal(p->len, IPOIB_HDR_LEN + len);
		assert_memory_equal(p->data + IPOIB_HDR_LEN, pkt, len);
	}
	/* the NA was the link's, not the host's */
	assert_int_equal(t->nrx, 0);
}

static void test_nd_answer_own(void **state)
{
	struct t *t = *state;
	const struct mem_pkt *p;
	struct ipoib_nd nd;
	struct in6_addr me6, peer6, other;
	uint8_t buf[128];
	size_t len;

	addr6(t->l, "2001:db8::1", 64);
	bring_up(t);
	mem_sent_clear(t->dev);
	inet_pton(AF_INET6, "2001:db8::1", &me6);
	inet_pton(AF_INET6, "2001:db8::2", &peer6);
	inet_pton(AF_INET6, "2001:db8::99", &other);
	len = ipoib_nd_build_ns(&peer6, NULL, &other, &t->peer, buf,
				sizeof(buf));
	from_peer(t, IPOIB_ETH_P_IPV6, buf, len);
	assert_int_equal(mem_sent_count(t->dev), 0);

	len = ipoib_nd_build_ns(&peer6, NULL, &me6, &t->peer, buf,
				sizeof(buf));
	from_peer(t, IPOIB_ETH_P_IPV6, buf, len);
	assert_int_equal(mem_sent_count(t->dev), 1);
	p = mem_sent(t->dev, 0);
	assert_to_peer(p);
	assert_int_equal(ipoib_nd_decode(p->data + IPOIB_HDR_LEN,
					p->len - IPOIB_HDR_LEN, &nd),
			 INET_OK);
	assert_int_equal(nd.type, INET_ND_NA);
	assert_memory_equal(&nd.target, &me6, 16);
	assert_memory_equal(&nd.ip.dst, &peer6, 16);
	assert_int_equal(nd.flags, INET_NA_FLAG_SOLICITED |
				   INET_NA_FLAG_OVERRIDE);
	assert_true(nd.has_tlla);
	assert_int_equal(nd.tlla.qpn, t->me.qpn);
	assert_int_equal(t->nrx, 0);
}

/* Our IPv6 addresses' solicited-node groups are listened to. */
static void test_nd_solicited_node_joined(void **state)
{
	struct t *t = *state;
	union fab_gid sn;

	addr6(t->l, "2001:db8::1:abcd", 64);
	bring_up(t);
	mgid6(t, "ff02::1:ff01:abcd", &sn);
	assert_int_equal(join_of(t, &sn)->join_state, SA_JOIN_FULL);
	assert_true(mem_attached(t->dev, &sn));
}

/* ---- multicast ------------------------------------------------------------ */

static void test_sendonly_join(void **state)
{
	struct t *t = *state;
	const struct ipoib_link_stats *st = ipoib_link_stats(t->l);
	union fab_gid g;
	uint8_t pkt[64];
	size_t len;
	unsigned int i;

	addr4(t->l, "10.0.0.1", 24);
	bring_up(t);
	mem_sent_clear(t->dev);
	mem_sa_clear(t->dev);
	mem_sa_joins(t->dev, MEM_SA_HOLD);
	for (i = 0; i < 2; i++) {
		len = udp4("10.0.0.1", "239.1.2.3", (uint8_t)i, pkt);
		ipoib_link_xmit(t->l, pkt, len);
	}
	pump(t);
	mgid4(t, "239.1.2.3", &g);
	/* one send-only join, the packets wait for it */
	assert_int_equal(join_of(t, &g)->join_state, SA_JOIN_SENDONLY_FULL);
	assert_int_equal(mem_sent_count(t->dev), 0);

	mem_sa_joins(t->dev, MEM_SA_ANSWER);
	mem_sa_release(t->dev);
	pump(t);
	assert_int_equal(mem_sent_count(t->dev), 2);
	for (i = 0; i < 2; i++) {
		assert_to_group(t, mem_sent(t->dev, i), &g);
		assert_int_equal(mem_sent(t->dev, i)->data[IPOIB_HDR_LEN + 28],
				 i);
	}
	/* a sender does not receive: no attach */
	assert_false(mem_attached(t->dev, &g));
	/* joined: straight out, no second join */
	ipoib_link_xmit(t->l, pkt, len);
	assert_int_equal(mem_sent_count(t->dev), 3);
	assert_int_equal(mem_sa_count(t->dev, MAD_METHOD_SET,
				      SA_ATTR_MCMEMBER_RECORD, &g), 1);
	assert_int_equal(st->drop[IPOIB_DROP_MCAST_QUEUE], 0);
}

static void test_sendonly_refused(void **state)
{
	struct t *t = *state;
	const struct ipoib_link_stats *st = ipoib_link_stats(t->l);
	uint8_t pkt[64];
	size_t len;

	addr4(t->l, "10.0.0.1", 24);
	bring_up(t);
	mem_sent_clear(t->dev);
	mem_sa_joins(t->dev, MEM_SA_REFUSE);
	len = udp4("10.0.0.1", "239.1.2.3", 1, pkt);
	ipoib_link_xmit(t->l, pkt, len);
	pump(t);
	assert_int_equal(mem_sent_count(t->dev), 0);
	assert_int_equal(st->drop[IPOIB_DROP_MCAST_FAILED], 1);
	/* backing off: the next one is dropped without a new join */
	ipoib_link_xmit(t->l, pkt, len);
	pump(t);
	assert_int_equal(st->drop[IPOIB_DROP_MCAST_FAILED], 2);
}

/* A refused broadcast join is retried after 1, 2, 4, 8, 16, 16... s
 * (BACKOFF_MAX_S), and the carrier comes with the first that works. */
static void test_bcast_join_backoff(void **state)
{
	static const unsigned int at[] = { 1, 3, 7, 15, 31, 47 };
	struct t *t = *state;
	const struct ipoib_link_stats *st = ipoib_link_stats(t->l);
	unsigned int s, n, joins = 1;

	mem_sa_joins(t->dev, MEM_SA_REFUSE);
	assert_int_equal(ipoib_link_start(t->l, NULL, 0), 0);
	pump(t);
	assert_int_equal(st->join_failures, 1);
	/* no time gone: the timer alone retries nothing */
	h_tick(t);
	assert_int_equal(mem_sa_count(t->dev, MAD_METHOD_SET,
				      SA_ATTR_MCMEMBER_RECORD, &t->bcast), 1);
	for (s = 1, n = 0; s <= at[5]; s++) {
		h_tick_for(t, 1);
		if (n < 6 && s == at[n]) {
			joins++;
			n++;
		}
		assert_int_equal(mem_sa_count(t->dev, MAD_METHOD_SET,
					      SA_ATTR_MCMEMBER_RECORD,
					      &t->bcast), joins);
	}
	assert_int_equal(st->join_failures, 7);
	assert_false(ipoib_link_carrier(t->l));
	assert_int_equal(t->carrier_ups, 0);

	/* the SA answers again: the next retry (16 s on) brings the
	 * carrier */
	mem_sa_joins(t->dev, MEM_SA_ANSWER);
	h_tick_for(t, 15);
	assert_false(ipoib_link_carrier(t->l));
	h_tick_for(t, 1);
	assert_true(ipoib_link_carrier(t->l));
	assert_int_equal(t->carrier_ups, 1);
	assert_int_equal(st->join_failures, 7);
}

/* A send-only group refused is retried by the timer after its backoff;
 * then packets go to it. */
static void test_sendonly_retry(void **state)
{
	struct t *t = *state;
	const struct ipoib_link_stats *st = ipoib_link_stats(t->l);
	union fab_gid g;
	uint8_t pkt[64];
	size_t len;
	char buf[2048];

	addr4(t->l, "10.0.0.1", 24);
	bring_up(t);
	mgid4(t, "239.1.2.3", &g);
	mem_sa_clear(t->dev);
	mem_sa_joins(t->dev, MEM_SA_REFUSE);
	len = udp4("10.0.0.1", "239.1.2.3", 1, pkt);
	ipoib_link_xmit(t->l, pkt, len);
	pump(t);
	assert_int_equal(st->drop[IPOIB_DROP_MCAST_FAILED], 1);
	ipoib_link_report(t->l, "groups", buf, sizeof(buf));
	assert_non_null(strstr(buf, "sendonly mlid=0x0000 backoff"));

	mem_sa_joins(t->dev, MEM_SA_ANSWER);
	h_tick(t);
	assert_int_equal(mem_sa_count(t->dev, MAD_METHOD_SET,
				      SA_ATTR_MCMEMBER_RECORD, &g), 1);
	h_tick_for(t, 1);
	assert_int_equal(mem_sa_count(t->dev, MAD_METHOD_SET,
				      SA_ATTR_MCMEMBER_RECORD, &g), 2);
	mem_sent_clear(t->dev);
	ipoib_link_xmit(t->l, pkt, len);
	assert_int_equal(mem_sent_count(t->dev), 1);
	assert_to_group(t, mem_sent(t->dev, 0), &g);
	assert_int_equal(st->drop[IPOIB_DROP_MCAST_FAILED], 1);
}

/* The host (10.0.0.1) says it listens to group: an IGMPv2 report. */
static void igmp2_report(struct t *t, const char *group)
{
	uint8_t pkt[32];

	memset(pkt, 0, sizeof(pkt));
	pkt[0] = 0x46;		/* with the router alert option */
	pkt[3] = 32;
	pkt[8] = 1;
	pkt[9] = 2;		/* IGMP */
	inet_pton(AF_INET, "10.0.0.1", pkt + 12);
	inet_pton(AF_INET, group, pkt + 16);
	pkt[20] = 0x94;
	pkt[21] = 4;
	pkt[24] = 0x16;		/* v2 membership report */
	inet_pton(AF_INET, group, pkt + 28);
	ipoib_link_xmit(t->l, pkt, sizeof(pkt));
	pump(t);
}

/* An IGMPv2 report from the host: a full join, attached. */
static void test_host_listen_igmp(void **state)
{
	struct t *t = *state;
	union fab_gid g;

	addr4(t->l, "10.0.0.1", 24);
	bring_up(t);
	igmp2_report(t, "239.9.9.9");
	mgid4(t, "239.9.9.9", &g);
	assert_int_equal(join_of(t, &g)->join_state, SA_JOIN_FULL);
	assert_true(mem_attached(t->dev, &g));
}

/*
 * The host starts to listen to a group while the send-only join for what
 * it sent there is on its way: once that join is answered, what waited
 * goes, and a FullMember join follows, since the SA has us as a sender
 * only (its traffic would never come).
 */
static void test_sendonly_then_listen(void **state)
{
	struct t *t = *state;
	const struct mem_sa_req *r, *last = NULL;
	union fab_gid g;
	uint8_t pkt[64];
	size_t len;
	unsigned int i;

	addr4(t->l, "10.0.0.1", 24);
	bring_up(t);
	mem_sent_clear(t->dev);
	mem_sa_clear(t->dev);
	mem_sa_joins(t->dev, MEM_SA_HOLD);
	len = udp4("10.0.0.1", "239.9.9.9", 1, pkt);
	ipoib_link_xmit(t->l, pkt, len);
	igmp2_report(t, "239.9.9.9");
	mgid4(t, "239.9.9.9", &g);
	assert_int_equal(join_of(t, &g)->join_state, SA_JOIN_SENDONLY_FULL);
	assert_int_equal(mem_sent_count(t->dev), 0);

	mem_sa_joins(t->dev, MEM_SA_ANSWER);
	mem_sa_release(t->dev);
	pump(t);
	assert_true(mem_sent_count(t->dev) >= 1);
	assert_to_group(t, mem_sent(t->dev, 0), &g);
	assert_int_equal(mem_sa_count(t->dev, MAD_METHOD_SET,
				      SA_ATTR_MCMEMBER_RECORD, &g), 2);
	for (i = 0; (r = mem_sa_req(t->dev, i)); i++)
		if (r->h.mad.method == MAD_METHOD_SET &&
		    !memcmp(r->rec.mcm.mgid.raw, g.raw, 16))
			last = r;
	assert_non_null(last);
	assert_int_equal(last->rec.mcm.join_state, SA_JOIN_FULL);
	assert_true(mem_attached(t->dev, &g));
}

/* CLIENT_REREGISTER: the SM forgot us; every group is joined again, the
 * carrier stays up, paths are asked again. */
static void test_rejoin_on_reregister(void **state)
{
	struct t *t = *state;
	const struct ipoib_link_stats *st = ipoib_link_stats(t->l);
	union fab_gid g[4];
	struct in_addr me4, peer4;
	uint8_t pkt[64], buf[IPOIB_ARP_LEN];
	size_t len;
	unsigned int i;

	addr4(t->l, "10.0.0.1", 24);
	bring_up(t);
	/* a send-only group and a resolved neighbour */
	len = udp4("10.0.0.1", "239.1.2.3", 1, pkt);
	ipoib_link_xmit(t->l, pkt, len);
	len = udp4("10.0.0.1", "10.0.0.2", 1, pkt);
	ipoib_link_xmit(t->l, pkt, len);
	pump(t);
	inet_pton(AF_INET, "10.0.0.1", &me4);
	inet_pton(AF_INET, "10.0.0.2", &peer4);
	len = ipoib_arp_build_reply(&t->peer, &peer4, &t->me, &me4, buf,
				    sizeof(buf));
	from_peer(t, IPOIB_ETH_P_ARP, buf, len);

	g[0] = t->bcast;
	mgid4(t, "224.0.0.1", &g[1]);
	mgid6(t, "ff02::1", &g[2]);
	mgid4(t, "239.1.2.3", &g[3]);
	mem_sa_clear(t->dev);
	port_event(t, FAB_EV_CLIENT_REREGISTER);
	for (i = 0; i < 4; i++)
		assert_int_equal(mem_sa_count(t->dev, MAD_METHOD_SET,
					      SA_ATTR_MCMEMBER_RECORD, &g[i]),
				 1);
	assert_int_equal(join_of(t, &g[3])->join_state,
			 SA_JOIN_SENDONLY_FULL);
	assert_int_equal(st->rejoins, 1);
	assert_true(ipoib_link_carrier(t->l));
	assert_int_equal(t->carrier_downs, 0);
	/* the neighbour keeps its address, its path is asked again */
	mem_sent_clear(t->dev);
	len = udp4("10.0.0.1", "10.0.0.2", 2, pkt);
	ipoib_link_xmit(t->l, pkt, len);
	pump(t);
	assert_int_equal(mem_sa_count(t->dev, MAD_METHOD_GET,
				      SA_ATTR_PATH_RECORD, NULL), 1);
	assert_int_equal(mem_sent_count(t->dev), 1);
	assert_to_peer(mem_sent(t->dev, 0));
}

/* Freeing the link leaves what it joined. */
static void test_free_leaves(void **state)
{
	struct t *t = *state;
	union fab_gid g;

	bring_up(t);
	mem_sa_clear(t->dev);
	ipoib_link_free(t->l, 200);
	t->l = NULL;
	mgid4(t, "224.0.0.1", &g);
	assert_int_equal(mem_sa_count(t->dev, MAD_METHOD_DELETE,
				      SA_ATTR_MCMEMBER_RECORD, &t->bcast), 1);
	assert_int_equal(mem_sa_count(t->dev, MAD_METHOD_DELETE,
				      SA_ATTR_MCMEMBER_RECORD, &g), 1);
	assert_false(mem_attached(t->dev, &t->bcast));
}

/* ---- receive ---------------------------------------------------------------- */

static void test_rx_to_host(void **state)
{
	struct t *t = *state;
	const struct ipoib_link_stats *st = ipoib_link_stats(t->l);
	uint8_t pkt[64], f[64];
	size_t len;

	addr4(t->l, "10.0.0.1", 24);
	bring_up(t);
	len = udp4("10.0.0.2", "10.0.0.1", 7, pkt);
	from_peer(t, IPOIB_ETH_P_IP, pkt, len);
	assert_int_equal(t->nrx, 1);
	assert_int_equal(t->rxlen[0], len);
	assert_memory_equal(t->rx[0], pkt, len);
	/* from our own LID and QPN (our multicast, as the fabric loops it
	 * back): dropped */
	ipoib_hdr_build(IPOIB_ETH_P_IP, f, IPOIB_HDR_LEN);
	memcpy(f + IPOIB_HDR_LEN, pkt, len);
	mem_inject(t->dev, MEM_LID, t->me.qpn, f, len + IPOIB_HDR_LEN);
	pump(t);
	assert_int_equal(t->nrx, 1);
	assert_int_equal(st->drop[IPOIB_DROP_RX_OWN], 1);
	/* an unknown ethertype is malformed */
	from_peer(t, 0x1234, pkt, len);
	assert_int_equal(t->nrx, 1);
	assert_int_equal(st->drop[IPOIB_DROP_RX_MALFORMED], 1);
}

/* ---- ICMP too big -------------------------------------------------------- */

/* The link MTU (2044) is the most that goes out; above it the host gets
 * the ICMP error it needs for path MTU discovery, from the destination,
 * quoting its packet. */
static void test_too_big_ipv4(void **state)
{
	struct t *t = *state;
	const struct ipoib_link_stats *st = ipoib_link_stats(t->l);
	static uint8_t pkt[2100];
	const uint8_t *r, *icmp;
	struct in_addr me4 = h_in4("10.0.0.1"), peer4 = h_in4("10.0.0.2");
	size_t len;

	addr4(t->l, "10.0.0.1", 24);
	bring_up(t);
	len = udp4("10.0.0.1", "10.0.0.2", 1, pkt);
	ipoib_link_xmit(t->l, pkt, len);
	arp_reply_from(t, &t->peer, "10.0.0.2", "10.0.0.1");

	mem_sent_clear(t->dev);
	len = udp4_len("10.0.0.1", "10.0.0.2", 2045, 1, pkt);
	ipoib_link_xmit(t->l, pkt, len);
	pump(t);
	assert_int_equal(mem_sent_count(t->dev), 0);
	assert_int_equal(st->icmp_too_big, 1);
	assert_int_equal(st->drop[IPOIB_DROP_TOO_BIG], 1);
	assert_int_equal(t->nrx, 1);
	r = t->rx[0];
	/* RFC 1812 4.3.2.3: at most 576 bytes in all */
	assert_int_equal(t->rxlen[0], 576);
	assert_int_equal(r[0], 0x45);
	assert_int_equal(r[9], 1);
	assert_memory_equal(r + 12, &peer4, 4);
	assert_memory_equal(r + 16, &me4, 4);
	assert_int_equal(inet_csum_fold(inet_csum_add(0, r, 20)), 0);
	icmp = r + 20;
	assert_int_equal(icmp[0], 3);	/* destination unreachable */
	assert_int_equal(icmp[1], 4);	/* fragmentation needed */
	assert_int_equal(icmp[6] << 8 | icmp[7], 2044);
	assert_memory_equal(icmp + 8, pkt, 576 - 28);
	assert_int_equal(inet_csum_fold(inet_csum_add(0, icmp, 576 - 20)), 0);

	/* exactly the MTU goes out, whole */
	t->nrx = 0;
	len = udp4_len("10.0.0.1", "10.0.0.2", 2044, 1, pkt);
	ipoib_link_xmit(t->l, pkt, len);
	pump(t);
	assert_int_equal(t->nrx, 0);
	assert_int_equal(mem_sent_count(t->dev), 1);
	assert_to_peer(mem_sent(t->dev, 0));
	assert_int_equal(mem_sent(t->dev, 0)->len, IPOIB_HDR_LEN + 2044);
	assert_memory_equal(mem_sent(t->dev, 0)->data + IPOIB_HDR_LEN, pkt,
			    2044);
	assert_int_equal(st->icmp_too_big, 1);
	assert_int_equal(st->drop[IPOIB_DROP_TOO_BIG], 1);
}

/* IPv6 has no DF: anything above the MTU gets Packet Too Big. */
static void test_too_big_ipv6(void **state)
{
	struct t *t = *state;
	const struct ipoib_link_stats *st = ipoib_link_stats(t->l);
	static uint8_t pkt[2100];
	struct in6_addr me6 = h_in6("2001:db8::1"),
			peer6 = h_in6("2001:db8::2");
	const uint8_t *r, *icmp;
	size_t len;

	addr6(t->l, "2001:db8::1", 64);
	bring_up(t);
	len = udp6("2001:db8::1", "2001:db8::2", 1, pkt);
	ipoib_link_xmit(t->l, pkt, len);
	pump(t);
	na_from(t, &t->peer, "2001:db8::2", "2001:db8::1",
		INET_NA_FLAG_SOLICITED | INET_NA_FLAG_OVERRIDE);

	mem_sent_clear(t->dev);
	len = udp6_len("2001:db8::1", "2001:db8::2", 2045, pkt);
	ipoib_link_xmit(t->l, pkt, len);
	pump(t);
	assert_int_equal(mem_sent_count(t->dev), 0);
	assert_int_equal(st->icmp_too_big, 1);
	assert_int_equal(st->drop[IPOIB_DROP_TOO_BIG], 1);
	assert_int_equal(t->nrx, 1);
	r = t->rx[0];
	/* RFC 4443 2.4 (c): at most 1280 bytes in all */
	assert_int_equal(t->rxlen[0], 1280);
	assert_int_equal(r[0] >> 4, 6);
	assert_int_equal(r[6], 58);
	assert_memory_equal(r + 8, &peer6, 16);
	assert_memory_equal(r + 24, &me6, 16);
	icmp = r + 40;
	assert_int_equal(icmp[0], 2);	/* packet too big */
	assert_int_equal(icmp[1], 0);
	assert_int_equal((uint32_t)icmp[4] << 24 | icmp[5] << 16 |
			 icmp[6] << 8 | icmp[7], 2044);
	assert_memory_equal(icmp + 8, pkt, 1280 - 48);
	assert_int_equal(inet_csum_fold(inet_csum_add(
		inet_csum_pseudo6(r + 8, r + 24, 58, 1240), icmp, 1240)), 0);

	t->nrx = 0;
	len = udp6_len("2001:db8::1", "2001:db8::2", 2044, pkt);
	ipoib_link_xmit(t->l, pkt, len);
	pump(t);
	assert_int_equal(t->nrx, 0);
	assert_int_equal(mem_sent_count(t->dev), 1);
	assert_to_peer(mem_sent(t->dev, 0));
	assert_int_equal(mem_sent(t->dev, 0)->len, IPOIB_HDR_LEN + 2044);
	assert_int_equal(st->icmp_too_big, 1);
}

/* ---- the error convention (fabric.h, ipoib_link.h) ------------------------- */

static void test_err_unknown_provider(void **state)
{
	char err[FAB_ERRLEN] = "";

	(void)state;
	errno = 0;
	assert_null(fab_open("nosuch:x", NULL, err, sizeof(err)));
	assert_int_equal(errno, EPROTONOSUPPORT);
	assert_non_null(strstr(err, "unknown provider 'nosuch'"));
	/* no buffer is fine */
	errno = 0;
	assert_null(fab_open("nosuch:x", NULL, NULL, 0));
	assert_int_equal(errno, EPROTONOSUPPORT);
	errno = 0;
	assert_null(fab_open("no-colon", NULL, err, sizeof(err)));
	assert_int_equal(errno, EINVAL);
	assert_non_null(strstr(err, "'no-colon'"));
}

static void test_err_soft_no_fabric(void **state)
{
	char err[FAB_ERRLEN] = "";

	(void)state;
	errno = 0;
	assert_null(fab_open("soft:/nonexistent/fabric.sock", "h1", err,
			     sizeof(err)));
	assert_true(errno == ENOENT || errno == ECONNREFUSED);
	assert_non_null(strstr(err, "soft: "));
	assert_non_null(strstr(err, "/nonexistent/fabric.sock"));
	errno = 0;
	assert_null(fab_open("soft:/nonexistent/fabric.sock", "", err,
			     sizeof(err)));
	assert_int_equal(errno, EINVAL);
	assert_non_null(strstr(err, "node name"));
}

static void test_err_fabric_objects(void **state)
{
	struct fab_qp_init qi = { .type = FAB_QPT_UD, .qkey = MEM_QKEY };
	struct fab_mad_addr to = { .lid = MEM_SM_LID, .qpn = 1,
				   .qkey = FAB_QP1_QKEY };
	char err[FAB_ERRLEN] = "";
	union fab_gid unicast = { .raw = { 0xfe, 0x80 } };
	uint8_t mad[256] = { 0 };
	struct fab_mad_agent *a;
	struct fab_dev *dev;
	struct fab_qp *qp;

	(void)state;
	mem_register();
	dev = fab_open("mem:", NULL, err, sizeof(err));
	assert_non_null(dev);
	qp = fab_qp_create(dev, &qi, err, sizeof(err));
	assert_non_null(qp);
	errno = 0;
	assert_int_equal(fab_attach_mcast(qp, &unicast, 0xc001, err,
					  sizeof(err)), -1);
	assert_int_equal(errno, EINVAL);
	assert_non_null(strstr(err, "not a multicast GID"));
	a = fab_mad_open(dev, 0x03, err, sizeof(err));
	assert_non_null(a);
	errno = 0;
	assert_null(fab_mad_open(dev, 0x03, err, sizeof(err)));
	assert_int_equal(errno, EBUSY);
	assert_non_null(strstr(err, "mem: "));
	/* a per-packet call: errno only */
	errno = 0;
	assert_int_equal(fab_mad_send(a, &to, mad, 100), -1);
	assert_int_equal(errno, EINVAL);
	fab_mad_close(a);
	fab_qp_destroy(qp);
	fab_close(dev);
}

/*
 * A P_Key the port does not have: the link is made and waits without
 * carrier, asking the SA nothing; PKEY_CHANGE with the key in the table
 * joins (carrier on); the key gone drops the carrier, the attachments and
 * the queue pair; back again, it joins again.  A PKEY_CHANGE that leaves
 * the key where it was changes nothing.
 */
static void test_pkey_appears_and_goes(void **state)
{
	static const uint16_t with[] = { 0xffff, 0x8001, 0x8002 };
	static const uint16_t other[] = { 0xffff, 0x0001, 0x8002, 0x8003 };
	static const uint16_t without[] = { 0xffff, 0x8001 };
	struct t *t = *state;
	struct ipoib_link_cfg cfg = { .pkey = 0x8002 };
	union fab_gid bc;
	uint8_t pkt[64];
	size_t len;

	relink(t, &cfg, &host_ops);
	ipoib_bcast_mgid(0x8002, IPOIB_SCOPE_LINK, &bc);
	assert_false(ipoib_link_has_pkey(t->l));
	assert_int_equal(ipoib_link_start(t->l, NULL, 0), 0);
	h_tick_for(t, 20);
	assert_int_equal(mem_sa_count(t->dev, MAD_METHOD_SET,
				      SA_ATTR_MCMEMBER_RECORD, NULL), 0);
	assert_false(ipoib_link_carrier(t->l));
	/* another port event does not make it join either */
	port_event(t, FAB_EV_CLIENT_REREGISTER);
	assert_int_equal(mem_sa_count(t->dev, MAD_METHOD_SET,
				      SA_ATTR_MCMEMBER_RECORD, NULL), 0);

	/* the SM adds the key */
	mem_set_pkeys(t->dev, with, 3);
	port_event(t, FAB_EV_PKEY_CHANGE);
	assert_true(ipoib_link_has_pkey(t->l));
	assert_true(ipoib_link_carrier(t->l));
	assert_int_equal(t->carrier_ups, 1);
	assert_int_equal(join_of(t, &bc)->join_state, SA_JOIN_FULL);
	assert_true(mem_attached(t->dev, &bc));

	/* other keys change, ours stays at its index: nothing happens */
	mem_sa_clear(t->dev);
	mem_set_pkeys(t->dev, other, 4);
	port_event(t, FAB_EV_PKEY_CHANGE);
	assert_true(ipoib_link_carrier(t->l));
	assert_int_equal(t->carrier_ups, 1);
	assert_int_equal(t->carrier_downs, 0);
	assert_int_equal(mem_sa_nreq(t->dev), 0);

	/* the key is removed: no carrier, nothing attached, nothing sent */
	mem_set_pkeys(t->dev, without, 2);
	port_event(t, FAB_EV_PKEY_CHANGE);
	assert_false(ipoib_link_has_pkey(t->l));
	assert_false(ipoib_link_carrier(t->l));
	assert_int_equal(t->carrier_downs, 1);
	assert_false(mem_attached(t->dev, &bc));
	assert_int_equal(ipoib_link_neigh_count(t->l), 0);
	len = udp4("10.0.0.1", "10.0.0.2", 1, pkt);
	ipoib_link_xmit(t->l, pkt, len);
	assert_int_equal(ipoib_link_stats(t->l)->drop[IPOIB_DROP_NO_CARRIER],
			 1);
	mem_sa_clear(t->dev);
	h_tick_for(t, 20);
	assert_int_equal(mem_sa_count(t->dev, MAD_METHOD_SET,
				      SA_ATTR_MCMEMBER_RECORD, NULL), 0);

	/* and comes back */
	mem_set_pkeys(t->dev, with, 3);
	port_event(t, FAB_EV_PKEY_CHANGE);
	assert_true(ipoib_link_carrier(t->l));
	assert_int_equal(t->carrier_ups, 2);
	assert_int_equal(join_of(t, &bc)->join_state, SA_JOIN_FULL);
	assert_true(mem_attached(t->dev, &bc));
}

/* More addresses than the link holds (16 and a link-local one): ENOSPC,
 * naming the address. */
static void test_err_link_addr_full(void **state)
{
	struct t *t = *state;
	struct inet_prefix p;
	char err[FAB_ERRLEN] = "";
	unsigned int i;

	memset(&p, 0, sizeof(p));
	p.addr.family = AF_INET;
	p.plen = 24;
	for (i = 0; i < IPOIB_LINK_MAX_ADDRS; i++) {
		p.addr.v4.s_addr = htonl(0x0a000001 + i);
		assert_int_equal(ipoib_link_add_addr(t->l, &p, err,
						     sizeof(err)), 0);
	}
	p.addr.v4.s_addr = htonl(0x0a000063);
	errno = 0;
	assert_int_equal(ipoib_link_add_addr(t->l, &p, err, sizeof(err)), -1);
	assert_int_equal(errno, ENOSPC);
	assert_non_null(strstr(err, "10.0.0.99/24"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_bcast_join_carrier, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_bcast_refused_no_carrier,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_listen_groups, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_carrier_port_down_up,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_arp_resolution, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_arp_path_refused, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_paths_bounded, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_arp_answer_own, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_nd_resolution, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_nd_answer_own, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_nd_solicited_node_joined,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_sendonly_join, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_sendonly_refused, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_bcast_join_backoff, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_sendonly_retry, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_sendonly_then_listen,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_host_listen_igmp, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_rejoin_on_reregister,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_free_leaves, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_rx_to_host, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_too_big_ipv4, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_too_big_ipv6, setup,
						teardown),
		cmocka_unit_test(test_err_unknown_provider),
		cmocka_unit_test(test_err_soft_no_fabric),
		cmocka_unit_test(test_err_fabric_objects),
		cmocka_unit_test_setup_teardown(test_pkey_appears_and_goes,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_err_link_addr_full,
						setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

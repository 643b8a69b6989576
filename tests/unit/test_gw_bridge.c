// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The transparent-mode core (gateway/gw_bridge.c) driven with synthetic
 * frames and packets, its outputs decoded with gateway/eth_wire.c and
 * independent checks (RFC 826 layouts, RFC 1071 sums written here).
 */
#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "gateway/eth_wire.h"
#include "gateway/gw_bridge.h"
#include "tests/unit/vectors.h"

/* ---- a fake IPoIB link and segment -------------------------------------- */

#define MAXREC 16

struct rec {
	uint8_t data[4096];
	size_t len;
	struct inet_addr nh;
	int has_nh, bcast;
};

static struct fake {
	struct rec eth[MAXREC], ib[MAXREC];
	unsigned int neth, nib, nresolve, nannounce;
	struct inet_addr resolved;
	/* the link's neighbours: A = 10.9.0.1 / fd09::1 */
	int know_a;
	struct ipoib_addr a_hw;
	unsigned int ib_mtu;
} fk;

static void eth_send(void *arg, const uint8_t *f, size_t len)
{
	(void)arg;
	assert_true(fk.neth < MAXREC && len <= sizeof(fk.eth[0].data));
	memcpy(fk.eth[fk.neth].data, f, len);
	fk.eth[fk.neth++].len = len;
}

static void ib_xmit(void *arg, const uint8_t *p, size_t len,
		    const struct inet_addr *nh, int bcast)
{
	struct rec *r;

	(void)arg;
	assert_true(fk.nib < MAXREC && len <= sizeof(fk.ib[0].data));
	r = &fk.ib[fk.nib++];
	memcpy(r->data, p, len);
	r->len = len;
	r->has_nh = nh != NULL;
	if (nh)
		r->nh = *nh;
	r->bcast = bcast;
}

static int is_a(const struct inet_addr *ip)
{
	static const uint8_t a6[16] = { 0xfd, 0x09, [15] = 1 };

	return (ip->family == AF_INET && ip->raw[0] == 10 &&
		ip->raw[1] == 9 && ip->raw[2] == 0 && ip->raw[3] == 1) ||
	       (ip->family == AF_INET6 && !memcmp(ip->raw, a6, 16));
}

static int ib_neigh(void *arg, const struct inet_addr *ip,
		    struct ipoib_addr *hw)
{
	(void)arg;
	if (fk.know_a && is_a(ip)) {
		*hw = fk.a_hw;
		return 0;
	}
	return -1;
}

static void ib_resolve(void *arg, const struct inet_addr *ip)
{
	(void)arg;
	fk.nresolve++;
	fk.resolved = *ip;
}

static void ib_announce(void *arg, const struct inet_addr *ip)
{
	(void)arg;
	(void)ip;
	fk.nannounce++;
}

static unsigned int ib_mtu(void *arg)
{
	(void)arg;
	return fk.ib_mtu;
}

static const struct gw_bridge_ops ops = {
	.eth_send = eth_send, .ib_xmit = ib_xmit, .ib_neigh = ib_neigh,
	.ib_resolve = ib_resolve, .ib_mtu = ib_mtu, .ib_announce = ib_announce,
};

static const uint8_t GWMAC[6] = { 0x02, 0, 0, 0, 0, 0x99 };
static const uint8_t LMAC[6] = { 0x52, 0x54, 0, 0x12, 0x34, 0x56 };
static const uint8_t BC[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

static struct gw_bridge *setup(uint16_t vlan)
{
	struct gw_bridge_cfg cfg = { .vlan = vlan, .eth_mtu = 1500,
				     .mss_clamp = 1 };

	memset(&fk, 0, sizeof(fk));
	fk.ib_mtu = 2044;
	fk.a_hw.qpn = 0x000123;
	fk.a_hw.gid.raw[0] = 0xfe;
	fk.a_hw.gid.raw[1] = 0x80;
	fk.a_hw.gid.raw[15] = 0x01;
	memcpy(cfg.mac, GWMAC, 6);
	return gw_bridge_new(&cfg, &ops, NULL);
}

/* ---- frame builders ------------------------------------------------------ */

static uint16_t rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static void wr16(uint8_t *p, unsigned int v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static size_t eth_hdr(uint8_t *f, const uint8_t *dst, const uint8_t *src,
		      uint16_t vid, uint16_t type)
{
	memcpy(f, dst, 6);
	memcpy(f + 6, src, 6);
	if (vid) {
		wr16(f + 12, 0x8100);
		wr16(f + 14, vid);
		wr16(f + 16, type);
		return 18;
	}
	wr16(f + 12, type);
	return 14;
}

static size_t arp_frame(uint8_t *f, uint16_t vid, uint16_t op,
			const uint8_t *sha, const char *spa, const char *tpa)
{
	size_t h = eth_hdr(f, op == 1 ? BC : GWMAC, sha, vid, 0x0806);
	uint8_t *a = f + h;

	memset(a, 0, 28);
	wr16(a, 1);
	wr16(a + 2, 0x0800);
	a[4] = 6;
	a[5] = 4;
	wr16(a + 6, op);
	memcpy(a + 8, sha, 6);
	inet_pton(AF_INET, spa, a + 14);
	inet_pton(AF_INET, tpa, a + 24);
	return h + 28;
}

/* an IPv4 packet: proto, DF, payload length */
static size_t ipv4(uint8_t *p, const char *src, const char *dst,
		   uint8_t proto, int df, size_t pay)
{
	size_t i;

	memset(p, 0, 20);
	p[0] = 0x45;
	wr16(p + 2, (unsigned int)(20 + pay));
	wr16(p + 4, 77);
	if (df)
		p[6] = 0x40;
	p[8] = 64;
	p[9] = proto;
	inet_pton(AF_INET, src, p + 12);
	inet_pton(AF_INET, dst, p + 16);
	wr16(p + 10, tv_csum(p, 20, 0));
	for (i = 0; i < pay; i++)
		p[20 + i] = (uint8_t)i;
	return 20 + pay;
}

/* ---- tests ----------------------------------------------------------------- */

/* LAN asks for an IB host: resolution first, the retry is answered */
static void test_arp_for_ib_host(void **state)
{
	struct gw_bridge *b = setup(0);
	uint8_t f[100], mac[6];
	struct eth_hdr h;
	struct eth_arp a;
	size_t n;

	(void)state;
	n = arp_frame(f, 0, 1, LMAC, "10.9.0.50", "10.9.0.1");
	gw_bridge_eth_rx(b, f, n);
	assert_int_equal(fk.neth, 0);
	assert_int_equal(fk.nresolve, 1);
	assert_true(is_a(&fk.resolved));
	fk.know_a = 1;
	gw_bridge_eth_rx(b, f, n);
	assert_int_equal(fk.neth, 1);
	assert_int_equal(eth_parse(fk.eth[0].data, fk.eth[0].len, &h), ETH_OK);
	assert_int_equal(h.type, 0x0806);
	assert_memory_equal(h.dst, LMAC, 6);
	eth_mac_of_ib(&fk.a_hw, mac);
	assert_memory_equal(h.src, mac, 6);
	assert_int_equal(mac[0] & 3, 2);	/* local, unicast */
	assert_int_equal(eth_arp_parse(fk.eth[0].data + 14, 28, &a), ETH_OK);
	assert_int_equal(a.op, 2);
	assert_memory_equal(a.sha, mac, 6);
	assert_memory_equal(a.tha, LMAC, 6);
	assert_int_equal(ntohl(a.spa.s_addr), 0x0a090001);
	assert_int_equal(ntohl(a.tpa.s_addr), 0x0a090032);
	assert_int_equal(gw_bridge_stats(b)->arp_answered, 1);
	/* the LAN host was learned: IB may now be answered for it */
	{
		struct inet_addr l = { .family = AF_INET };

		inet_pton(AF_INET, "10.9.0.50", l.raw);
		assert_int_equal(gw_bridge_proxy(b, &l), 1);
	}
	/* and a request for a LAN host is not the gateway's to answer */
	fk.neth = 0;
	n = arp_frame(f, 0, 1, (const uint8_t[6]){ 0x52, 0, 0, 0, 0, 7 },
		      "10.9.0.60", "10.9.0.50");
	gw_bridge_eth_rx(b, f, n);
	assert_int_equal(fk.neth, 0);
	gw_bridge_free(b);
}

/* IB host -> LAN host: ask, queue, then send with A's MAC */
static void test_ib_to_lan(void **state)
{
	struct gw_bridge *b = setup(0);
	uint8_t p[2000], f[100], mac[6];
	struct eth_hdr h;
	struct eth_arp a;
	size_t n, i;

	(void)state;
	fk.know_a = 1;
	n = ipv4(p, "10.9.0.1", "10.9.0.50", 17, 0, 100);
	for (i = 0; i < 5; i++)
		gw_bridge_ib_rx(b, p, n, 0);
	/* one probe (ARP request from 0.0.0.0), three queued, two dropped */
	assert_int_equal(fk.neth, 1);
	eth_parse(fk.eth[0].data, fk.eth[0].len, &h);
	assert_int_equal(h.type, 0x0806);
	assert_memory_equal(h.dst, BC, 6);
	eth_arp_parse(fk.eth[0].data + 14, 28, &a);
	assert_int_equal(a.op, 1);
	assert_int_equal(a.spa.s_addr, 0);
	assert_int_equal(ntohl(a.tpa.s_addr), 0x0a090032);
	assert_int_equal(gw_bridge_stats(b)->drop[GW_DROP_NEIGH_QUEUE], 2);
	/* the answer flushes the queue */
	n = arp_frame(f, 0, 2, LMAC, "10.9.0.50", "0.0.0.0");
	gw_bridge_eth_rx(b, f, n);
	assert_int_equal(fk.neth, 4);
	eth_mac_of_ib(&fk.a_hw, mac);
	for (i = 1; i < 4; i++) {
		eth_parse(fk.eth[i].data, fk.eth[i].len, &h);
		assert_memory_equal(h.dst, LMAC, 6);
		assert_memory_equal(h.src, mac, 6);
		assert_int_equal(h.type, 0x0800);
		assert_int_equal(fk.eth[i].len, 14 + 120);
		assert_memory_equal(fk.eth[i].data + 14, p, 120);
	}
	gw_bridge_free(b);
}

/* LAN -> IB host by MAC; frames from our own MACs are loops */
static void test_lan_to_ib(void **state)
{
	struct gw_bridge *b = setup(0);
	uint8_t f[2000], mac[6];
	size_t n;

	(void)state;
	fk.know_a = 1;
	n = arp_frame(f, 0, 1, LMAC, "10.9.0.50", "10.9.0.1");
	gw_bridge_eth_rx(b, f, n);		/* hands out A's MAC */
	eth_mac_of_ib(&fk.a_hw, mac);
	n = eth_hdr(f, mac, LMAC, 0, 0x0800);
	n += ipv4(f + n, "10.9.0.50", "10.9.0.1", 17, 0, 64);
	gw_bridge_eth_rx(b, f, n);
	assert_int_equal(fk.nib, 1);
	assert_true(fk.ib[0].has_nh && is_a(&fk.ib[0].nh));
	assert_int_equal(fk.ib[0].len, 84);
	/* a frame padded by Ethernet goes without the padding */
	n = eth_hdr(f, mac, LMAC, 0, 0x0800);
	n += ipv4(f + n, "10.9.0.50", "10.9.0.1", 17, 0, 4);
	memset(f + n, 0, 20);
	gw_bridge_eth_rx(b, f, n + 20);
	assert_int_equal(fk.ib[1].len, 24);
	/* unicast to a MAC that is no IB host's: not ours */
	n = eth_hdr(f, (const uint8_t[6]){ 0x52, 0, 0, 0, 0, 8 }, LMAC, 0,
		    0x0800);
	n += ipv4(f + n, "10.9.0.50", "10.9.0.8", 17, 0, 4);
	gw_bridge_eth_rx(b, f, n);
	assert_int_equal(fk.nib, 2);
	assert_int_equal(gw_bridge_stats(b)->drop[GW_DROP_ETH_NOT_OURS], 1);
	/* our own MAC as a source: a loop */
	n = eth_hdr(f, BC, mac, 0, 0x0800);
	n += ipv4(f + n, "10.9.0.1", "255.255.255.255", 17, 0, 4);
	gw_bridge_eth_rx(b, f, n);
	assert_int_equal(gw_bridge_stats(b)->drop[GW_DROP_ETH_LOOP], 1);
	assert_int_equal(fk.nib, 2);
	gw_bridge_free(b);
}

static void test_multicast_broadcast(void **state)
{
	struct gw_bridge *b = setup(0);
	uint8_t f[200], p[200];
	struct eth_hdr h;
	size_t n;

	(void)state;
	fk.know_a = 1;
	n = ipv4(p, "10.9.0.1", "239.1.2.3", 17, 0, 10);
	gw_bridge_ib_rx(b, p, n, 0);
	assert_int_equal(fk.neth, 1);
	eth_parse(fk.eth[0].data, fk.eth[0].len, &h);
	assert_memory_equal(h.dst, ((const uint8_t[6]){ 1, 0, 0x5e, 1, 2, 3 }),
			    6);
	/* LAN multicast: by its group; subnet broadcast: the broadcast
	 * group; 255.255.255.255 too */
	n = eth_hdr(f, (const uint8_t[6]){ 1, 0, 0x5e, 1, 2, 3 }, LMAC, 0,
		    0x0800);
	n += ipv4(f + n, "10.9.0.50", "239.1.2.3", 17, 0, 10);
	gw_bridge_eth_rx(b, f, n);
	assert_int_equal(fk.nib, 1);
	assert_false(fk.ib[0].has_nh);
	assert_false(fk.ib[0].bcast);
	n = eth_hdr(f, BC, LMAC, 0, 0x0800);
	n += ipv4(f + n, "10.9.0.50", "10.9.0.255", 17, 0, 10);
	gw_bridge_eth_rx(b, f, n);
	assert_int_equal(fk.nib, 2);
	assert_true(fk.ib[1].bcast);
	/* an IB host's directed broadcast came to the broadcast group: the
	 * segment's broadcast, not an ARP for 10.9.0.255 */
	fk.neth = 0;
	n = ipv4(p, "10.9.0.1", "10.9.0.255", 17, 0, 10);
	gw_bridge_ib_rx(b, p, n, 1);
	assert_int_equal(fk.neth, 1);
	eth_parse(fk.eth[0].data, fk.eth[0].len, &h);
	assert_memory_equal(h.dst, BC, 6);
	assert_int_equal(h.type, 0x0800);
	assert_memory_equal(fk.eth[0].data + 14, p, n);
	/* the same to our QP (unicast): a neighbour to find on the LAN */
	fk.neth = 0;
	gw_bridge_ib_rx(b, p, n, 0);
	assert_int_equal(fk.neth, 1);
	eth_parse(fk.eth[0].data, fk.eth[0].len, &h);
	assert_int_equal(h.type, 0x0806);
	gw_bridge_free(b);
}

/* From 0.0.0.0 (a DHCP client without an address, RFC 4390): a
 * broadcast goes out from the gateway's MAC, untouched; anything else is
 * dropped, no ARP for 0.0.0.0 on the IB side; an IPv4 broadcast to the
 * gateway's MAC (the answer) goes to the broadcast group */
static void test_unspecified_source(void **state)
{
	struct gw_bridge *b = setup(0);
	uint8_t p[400];
	struct eth_hdr h;
	size_t n;

	(void)state;
	n = ipv4(p, "0.0.0.0", "255.255.255.255", 17, 0, 300);
	gw_bridge_ib_rx(b, p, n, 1);
	assert_int_equal(fk.neth, 1);
	eth_parse(fk.eth[0].data, fk.eth[0].len, &h);
	assert_memory_equal(h.dst, BC, 6);
	assert_memory_equal(h.src, GWMAC, 6);
	assert_int_equal(h.type, 0x0800);
	assert_int_equal(fk.eth[0].len, 14 + n);
	assert_memory_equal(fk.eth[0].data + 14, p, n);
	assert_int_equal(fk.nresolve, 0);
	n = ipv4(p, "0.0.0.0", "10.9.0.50", 17, 0, 300);
	gw_bridge_ib_rx(b, p, n, 0);
	assert_int_equal(fk.neth, 1);
	assert_int_equal(fk.nresolve, 0);
	assert_int_equal(gw_bridge_stats(b)->drop[GW_DROP_IB_SRC_UNKNOWN], 1);
	/* the server's answer to the gateway's MAC (Kea answers the
	 * query's source MAC), to 255.255.255.255: the broadcast group */
	{
		uint8_t f[400];
		size_t fn = eth_hdr(f, GWMAC, LMAC, 0, 0x0800);

		fn += ipv4(f + fn, "10.9.0.50", "255.255.255.255", 17, 0, 300);
		gw_bridge_eth_rx(b, f, fn);
		assert_int_equal(fk.nib, 1);
		assert_true(fk.ib[0].bcast);
		assert_false(fk.ib[0].has_nh);
		/* to our MAC and a unicast address nobody has: not ours */
		fn = eth_hdr(f, GWMAC, LMAC, 0, 0x0800);
		fn += ipv4(f + fn, "10.9.0.50", "10.9.0.77", 17, 0, 300);
		gw_bridge_eth_rx(b, f, fn);
		assert_int_equal(fk.nib, 1);
		assert_int_equal(
			gw_bridge_stats(b)->drop[GW_DROP_ETH_NOT_OURS], 1);
	}
	gw_bridge_free(b);
}

static void test_vlan(void **state)
{
	struct gw_bridge *b = setup(10);
	uint8_t f[100];
	struct eth_hdr h;
	size_t n;

	(void)state;
	fk.know_a = 1;
	n = arp_frame(f, 0, 1, LMAC, "10.9.0.50", "10.9.0.1");
	gw_bridge_eth_rx(b, f, n);		/* untagged: not ours */
	n = arp_frame(f, 20, 1, LMAC, "10.9.0.50", "10.9.0.1");
	gw_bridge_eth_rx(b, f, n);		/* another VLAN */
	assert_int_equal(fk.neth, 0);
	assert_int_equal(gw_bridge_stats(b)->drop[GW_DROP_ETH_VLAN], 2);
	n = arp_frame(f, 10, 1, LMAC, "10.9.0.50", "10.9.0.1");
	gw_bridge_eth_rx(b, f, n);
	assert_int_equal(fk.neth, 1);
	assert_int_equal(eth_parse(fk.eth[0].data, fk.eth[0].len, &h), ETH_OK);
	assert_true(h.tagged);
	assert_int_equal(h.vid, 10);
	assert_int_equal(h.type, 0x0806);
	gw_bridge_free(b);
}

struct frags {
	unsigned int n;
	size_t total;
};

/* IB MTU 2044 > LAN 1500: DF gets ICMP back to IB, no DF fragments */
static void test_mtu(void **state)
{
	struct gw_bridge *b = setup(0);
	uint8_t p[2100], f[100];
	size_t n, i, data = 0;

	(void)state;
	fk.know_a = 1;
	n = arp_frame(f, 0, 2, LMAC, "10.9.0.50", "10.9.0.1");
	gw_bridge_eth_rx(b, f, n);		/* learn the LAN host */
	fk.neth = 0;
	n = ipv4(p, "10.9.0.1", "10.9.0.50", 17, 1, 1980);
	gw_bridge_ib_rx(b, p, n, 0);
	assert_int_equal(fk.neth, 0);
	assert_int_equal(fk.nib, 1);
	assert_true(fk.ib[0].has_nh && is_a(&fk.ib[0].nh));
	/* ICMP 3/4, next-hop MTU 1500, from the original destination */
	assert_int_equal(fk.ib[0].data[9], 1);
	assert_int_equal(fk.ib[0].data[20], 3);
	assert_int_equal(fk.ib[0].data[21], 4);
	assert_int_equal(rd16(fk.ib[0].data + 26), 1500);
	assert_memory_equal(fk.ib[0].data + 12, p + 16, 4);
	assert_int_equal(tv_csum(fk.ib[0].data, 20, 0), 0);
	n = ipv4(p, "10.9.0.1", "10.9.0.50", 17, 0, 1980);
	gw_bridge_ib_rx(b, p, n, 0);
	assert_int_equal(fk.neth, 2);
	for (i = 0; i < 2; i++) {
		const uint8_t *ip = fk.eth[i].data + 14;

		assert_true(fk.eth[i].len - 14 <= 1500);
		assert_int_equal(tv_csum(ip, 20, 0), 0);
		assert_int_equal((rd16(ip + 6) & 0x1fff) * 8, data);
		assert_int_equal(!!(rd16(ip + 6) & 0x2000), i == 0);
		assert_memory_equal(ip + 20, p + 20 + data,
				    rd16(ip + 2) - 20);
		data += rd16(ip + 2) - 20;
	}
	assert_int_equal(data, 1980);
	assert_int_equal(gw_bridge_stats(b)->fragmented, 1);
	gw_bridge_free(b);
}

/* a UDP/IPv6 packet, payload pay bytes of i (checksum not looked at) */
static size_t ipv6_udp(uint8_t *p, const char *src, const char *dst,
		       size_t pay)
{
	size_t i;

	memset(p, 0, 48);
	p[0] = 0x60;
	wr16(p + 4, (unsigned int)(8 + pay));
	p[6] = 17;
	p[7] = 64;
	inet_pton(AF_INET6, src, p + 8);
	inet_pton(AF_INET6, dst, p + 24);
	wr16(p + 40, 5000);
	wr16(p + 42, 6000);
	wr16(p + 44, (unsigned int)(8 + pay));
	for (i = 0; i < pay; i++)
		p[48 + i] = (uint8_t)i;
	return 48 + pay;
}

/* An IPv6 packet to a group over the other side's MTU, both ways: Packet
 * Too Big from a unicast address of the gateway's (its link-local on
 * that side), never from the group's address, which every receiver
 * drops (RFC 4291 2.7, RFC 4443 2.2); to the LAN from the gateway's MAC,
 * not the group's. */
static void test_mtu_multicast_v6(void **state)
{
	static const uint8_t gmac[6] = { 0x33, 0x33, 0, 0, 0x01, 0x23 };
	struct gw_bridge_cfg cfg = { .eth_mtu = 9000 };
	struct gw_bridge *b;
	uint8_t p[3100], f[3200], ll[16];
	struct eth_hdr h;
	size_t n;

	(void)state;
	memset(&fk, 0, sizeof(fk));
	fk.ib_mtu = 2044;
	fk.know_a = 1;
	fk.a_hw.qpn = 0x000123;
	memcpy(cfg.mac, GWMAC, 6);
	inet_pton(AF_INET6, "fe80::202:c900:1:2", &cfg.ib_ll);
	b = gw_bridge_new(&cfg, &ops, NULL);
	assert_non_null(b);
	/* from the LAN (jumbo) to a group, over IB's 2044 */
	n = eth_hdr(f, gmac, LMAC, 0, 0x86dd);
	n += ipv6_udp(f + n, "fd09::50", "ff15::123", 2500);
	gw_bridge_eth_rx(b, f, n);
	assert_int_equal(fk.nib, 0);
	assert_int_equal(fk.neth, 1);
	eth_parse(fk.eth[0].data, fk.eth[0].len, &h);
	assert_memory_equal(h.dst, LMAC, 6);
	assert_memory_equal(h.src, GWMAC, 6);
	inet_pton(AF_INET6, "fe80::ff:fe00:99", ll);	/* EUI-64 of GWMAC */
	assert_memory_equal(fk.eth[0].data + 14 + 8, ll, 16);
	assert_int_equal(fk.eth[0].data[14 + 40], 2);	/* Packet Too Big */
	assert_int_equal(rd16(fk.eth[0].data + 14 + 46), 2044);
	/* from IB host A to a group, over the LAN's MTU (1500 here) */
	gw_bridge_free(b);
	cfg.eth_mtu = 1500;
	b = gw_bridge_new(&cfg, &ops, NULL);
	assert_non_null(b);
	fk.neth = 0;
	n = ipv6_udp(p, "fd09::1", "ff15::123", 1800);
	gw_bridge_ib_rx(b, p, n, 1);
	assert_int_equal(fk.neth, 0);
	assert_int_equal(fk.nib, 1);
	assert_memory_equal(fk.ib[0].data + 8, &cfg.ib_ll, 16);
	assert_memory_equal(fk.ib[0].data + 24, p + 8, 16);
	assert_int_equal(fk.ib[0].data[40], 2);
	assert_int_equal(rd16(fk.ib[0].data + 46), 1500);
	gw_bridge_free(b);
}

/* a SYN from the LAN with MSS 8960 reaches IB with 1460 */
static void test_mss(void **state)
{
	struct gw_bridge *b = setup(0);
	uint8_t f[200], mac[6], *t;
	size_t n, h;

	(void)state;
	fk.know_a = 1;
	n = arp_frame(f, 0, 1, LMAC, "10.9.0.50", "10.9.0.1");
	gw_bridge_eth_rx(b, f, n);
	eth_mac_of_ib(&fk.a_hw, mac);
	h = eth_hdr(f, mac, LMAC, 0, 0x0800);
	n = ipv4(f + h, "10.9.0.50", "10.9.0.1", 6, 1, 24);
	t = f + h + 20;
	memset(t, 0, 24);
	t[12] = 6 << 4;
	t[13] = 0x02;
	t[20] = 2;
	t[21] = 4;
	wr16(t + 22, 8960);
	{
		uint8_t ph[12];
		uint16_t c;

		memcpy(ph, f + h + 12, 8);
		ph[8] = 0;
		ph[9] = 6;
		wr16(ph + 10, 24);
		c = tv_csum(t, 24, (uint32_t)(~tv_csum(ph, 12, 0) & 0xffff));
		wr16(t + 16, c);
	}
	gw_bridge_eth_rx(b, f, h + n);
	assert_int_equal(fk.nib, 1);
	assert_int_equal(rd16(fk.ib[0].data + 42), 1460);
	assert_int_equal(gw_bridge_stats(b)->mss_clamped, 1);
	gw_bridge_free(b);
}

/* IPv6: an NS from the LAN for an IB host gets an NA with its MAC */
static void test_nd(void **state)
{
	struct gw_bridge *b = setup(0);
	struct in6_addr l6, a6, sn;
	uint8_t f[200], mac[6];
	struct eth_nd nd;
	struct eth_hdr h;
	size_t n;

	(void)state;
	fk.know_a = 1;
	inet_pton(AF_INET6, "fd09::50", &l6);
	inet_pton(AF_INET6, "fd09::1", &a6);
	inet_solicited_node(&a6, &sn);
	n = eth_hdr(f, (const uint8_t[6]){ 0x33, 0x33, 0xff, 0, 0, 1 }, LMAC,
		    0, 0x86dd);
	n += eth_nd_build_ns(&l6, &sn, &a6, LMAC, f + n, sizeof(f) - n);
	gw_bridge_eth_rx(b, f, n);
	assert_int_equal(fk.neth, 1);
	eth_parse(fk.eth[0].data, fk.eth[0].len, &h);
	assert_memory_equal(h.dst, LMAC, 6);
	assert_int_equal(eth_nd_decode(fk.eth[0].data + 14,
				       fk.eth[0].len - 14, &nd), INET_OK);
	assert_int_equal(nd.nd.type, 136);
	assert_int_equal(nd.nd.flags, 0x40);	/* solicited, no override */
	assert_memory_equal(&nd.nd.target, &a6, 16);
	eth_mac_of_ib(&fk.a_hw, mac);
	assert_true(nd.has_tlla);
	assert_memory_equal(nd.tlla, mac, 6);
	assert_int_equal(gw_bridge_stats(b)->nd_answered, 1);
	gw_bridge_free(b);
}

/* duplicate address detection (RFC 4862) across the bridge, both ways */
static void test_dad(void **state)
{
	static const uint8_t AN[6] = { 0x33, 0x33, 0, 0, 0, 1 };
	struct gw_bridge *b = setup(0);
	struct in6_addr any, a6, free6, l6, sn, an;
	uint8_t f[200], mac[6], p[200];
	struct ipoib_nd ind;
	struct eth_nd nd;
	struct eth_hdr h;
	size_t n, len;

	(void)state;
	fk.know_a = 1;
	eth_mac_of_ib(&fk.a_hw, mac);
	memset(&any, 0, sizeof(any));
	inet_pton(AF_INET6, "fd09::1", &a6);
	inet_pton(AF_INET6, "fd09::77", &free6);
	inet_pton(AF_INET6, "fd09::50", &l6);
	inet_pton(AF_INET6, "ff02::1", &an);

	/* a LAN host probing an IB host's address: defended in its name
	 * (to all nodes, no override), and the probe goes on to IB */
	inet_solicited_node(&a6, &sn);
	n = eth_hdr(f, (const uint8_t[6]){ 0x33, 0x33, 0xff, 0, 0, 1 }, LMAC,
		    0, 0x86dd);
	n += eth_nd_build_ns(&any, &sn, &a6, NULL, f + n, sizeof(f) - n);
	gw_bridge_eth_rx(b, f, n);
	assert_int_equal(fk.neth, 1);
	eth_parse(fk.eth[0].data, fk.eth[0].len, &h);
	assert_memory_equal(h.dst, AN, 6);
	assert_memory_equal(h.src, mac, 6);
	assert_int_equal(eth_nd_decode(fk.eth[0].data + 14,
				       fk.eth[0].len - 14, &nd), INET_OK);
	assert_int_equal(nd.nd.type, INET_ND_NA);
	assert_int_equal(nd.nd.flags, 0);
	assert_memory_equal(&nd.nd.target, &a6, 16);
	assert_memory_equal(&nd.nd.ip.dst, &an, 16);
	assert_true(nd.has_tlla);
	assert_memory_equal(nd.tlla, mac, 6);
	assert_int_equal(fk.nib, 1);
	assert_false(fk.ib[0].has_nh);
	assert_int_equal(fk.ib[0].len, n - 14);

	/* a probe for an address nobody is known at: only passed on */
	fk.neth = fk.nib = 0;
	inet_solicited_node(&free6, &sn);
	n = eth_hdr(f, (const uint8_t[6]){ 0x33, 0x33, 0xff, 0, 0, 0x77 },
		    LMAC, 0, 0x86dd);
	n += eth_nd_build_ns(&any, &sn, &free6, NULL, f + n, sizeof(f) - n);
	gw_bridge_eth_rx(b, f, n);
	assert_int_equal(fk.neth, 0);
	assert_int_equal(fk.nib, 1);

	/* a LAN host defending its address: to IB without the 6-byte
	 * option (the link puts its own in), not overriding */
	fk.neth = fk.nib = 0;
	n = eth_hdr(f, AN, LMAC, 0, 0x86dd);
	n += eth_nd_build_na(&l6, &an, &l6, INET_NA_FLAG_OVERRIDE, LMAC,
			     f + n, sizeof(f) - n);
	gw_bridge_eth_rx(b, f, n);
	assert_int_equal(fk.nib, 1);
	assert_int_equal(ipoib_nd_decode(fk.ib[0].data, fk.ib[0].len, &ind),
			 INET_OK);
	assert_int_equal(ind.type, INET_ND_NA);
	assert_false(ind.has_tlla);
	assert_int_equal(ind.flags, 0);
	assert_memory_equal(&ind.target, &l6, 16);
	assert_memory_equal(&ind.ip.dst, &an, 16);

	/* from IB: a probe from :: goes out from the gateway's MAC ... */
	fk.neth = fk.nib = 0;
	inet_solicited_node(&l6, &sn);
	len = ipoib_nd_build_ns(&any, &sn, &l6, NULL, p, sizeof(p));
	gw_bridge_ib_rx(b, p, len, 0);
	assert_int_equal(fk.neth, 1);
	eth_parse(fk.eth[0].data, fk.eth[0].len, &h);
	assert_memory_equal(h.src, GWMAC, 6);
	assert_int_equal(h.dst[0], 0x33);
	assert_memory_equal(fk.eth[0].data + 14, p, len);

	/* ... and an IB host's defence to all nodes gets the MAC it has on
	 * Ethernet for its 20-byte option */
	fk.neth = 0;
	len = ipoib_nd_build_na(&a6, &an, &a6, INET_NA_FLAG_OVERRIDE,
				&fk.a_hw, p, sizeof(p));
	gw_bridge_ib_rx(b, p, len, 0);
	assert_int_equal(fk.neth, 1);
	eth_parse(fk.eth[0].data, fk.eth[0].len, &h);
	assert_memory_equal(h.dst, AN, 6);
	assert_memory_equal(h.src, mac, 6);
	assert_int_equal(eth_nd_decode(fk.eth[0].data + 14,
				       fk.eth[0].len - 14, &nd), INET_OK);
	assert_int_equal(nd.nd.type, INET_ND_NA);
	assert_memory_equal(&nd.nd.target, &a6, 16);
	assert_true(nd.has_tlla);
	assert_memory_equal(nd.tlla, mac, 6);
	gw_bridge_free(b);
}

/* probes are retried, then what waited is dropped and counted */
static void test_neigh_failure(void **state)
{
	struct gw_bridge *b = setup(0);
	uint8_t p[200];
	size_t n;
	time_t t = time(NULL);

	(void)state;
	fk.know_a = 1;
	gw_bridge_tick(b, t);
	n = ipv4(p, "10.9.0.1", "10.9.0.77", 17, 0, 10);
	gw_bridge_ib_rx(b, p, n, 0);
	gw_bridge_ib_rx(b, p, n, 0);
	assert_int_equal(fk.neth, 1);
	gw_bridge_tick(b, t + 1);
	gw_bridge_tick(b, t + 2);
	assert_int_equal(fk.neth, 3);		/* three probes in all */
	gw_bridge_tick(b, t + 3);
	assert_int_equal(fk.neth, 3);
	assert_int_equal(gw_bridge_stats(b)->drop[GW_DROP_NEIGH_FAILED], 2);
	gw_bridge_tick(b, t + 10);
	assert_int_equal(gw_bridge_neigh_count(b), 0);
	gw_bridge_free(b);
}

/* garbage of every kind is counted, nothing crashes */
static void test_malformed(void **state)
{
	struct gw_bridge *b = setup(0);
	uint8_t f[100];
	size_t n;

	(void)state;
	memset(f, 0, sizeof(f));
	gw_bridge_eth_rx(b, f, 5);
	n = eth_hdr(f, BC, LMAC, 0, 0x0800);
	gw_bridge_eth_rx(b, f, n + 10);		/* truncated IP */
	n = eth_hdr(f, BC, LMAC, 0, 0x0806);
	gw_bridge_eth_rx(b, f, n + 27);		/* truncated ARP */
	n = eth_hdr(f, BC, LMAC, 0, 0x88cc);	/* LLDP */
	gw_bridge_eth_rx(b, f, n + 30);
	n = eth_hdr(f, BC, LMAC, 0, 0x0040);	/* an 802.3 length */
	gw_bridge_eth_rx(b, f, n + 30);
	gw_bridge_ib_rx(b, f, 3, 0);
	gw_bridge_ib_rx(b, f, 0, 0);
	assert_int_equal(gw_bridge_stats(b)->drop[GW_DROP_ETH_MALFORMED], 4);
	assert_int_equal(gw_bridge_stats(b)->drop[GW_DROP_ETH_TYPE], 1);
	assert_int_equal(gw_bridge_stats(b)->drop[GW_DROP_IB_MALFORMED], 2);
	assert_int_equal(fk.neth + fk.nib, 0);
	gw_bridge_free(b);
}

/* after a restart LAN hosts still send to the MACs handed out before */
static void test_mac_recovered(void **state)
{
	struct gw_bridge *b = setup(0);
	uint8_t f[200], mac[6];
	size_t n;

	(void)state;
	eth_mac_of_ib(&fk.a_hw, mac);
	n = eth_hdr(f, mac, LMAC, 0, 0x0800);
	n += ipv4(f + n, "10.9.0.50", "10.9.0.1", 17, 0, 10);
	gw_bridge_eth_rx(b, f, n);	/* A unknown on IB yet: asked for */
	assert_int_equal(fk.nib, 0);
	assert_int_equal(fk.nresolve, 1);
	assert_true(is_a(&fk.resolved));
	fk.know_a = 1;
	gw_bridge_eth_rx(b, f, n);
	assert_int_equal(fk.nib, 1);
	assert_true(fk.ib[0].has_nh && is_a(&fk.ib[0].nh));
	assert_int_equal(gw_bridge_mac_count(b), 1);
	/* the sender, never heard in ARP, was learned from its frames and
	 * announced on IB once */
	{
		struct inet_addr l = { .family = AF_INET };

		inet_pton(AF_INET, "10.9.0.50", l.raw);
		assert_int_equal(gw_bridge_proxy(b, &l), 1);
	}
	assert_int_equal(fk.nannounce, 1);
	/* another local MAC for A's address: not A's, dropped */
	f[5] ^= 1;
	gw_bridge_eth_rx(b, f, n);
	assert_int_equal(fk.nib, 1);
	assert_int_equal(gw_bridge_stats(b)->drop[GW_DROP_ETH_NOT_OURS], 2);
	gw_bridge_free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_arp_for_ib_host),
		cmocka_unit_test(test_ib_to_lan),
		cmocka_unit_test(test_lan_to_ib),
		cmocka_unit_test(test_multicast_broadcast),
		cmocka_unit_test(test_unspecified_source),
		cmocka_unit_test(test_vlan),
		cmocka_unit_test(test_mtu),
		cmocka_unit_test(test_mtu_multicast_v6),
		cmocka_unit_test(test_mss),
		cmocka_unit_test(test_nd),
		cmocka_unit_test(test_dad),
		cmocka_unit_test(test_neigh_failure),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_mac_recovered),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

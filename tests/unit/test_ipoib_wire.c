// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * IPoIB link codec against byte vectors written out by hand from RFC 4391,
 * RFC 4861 and what the Linux driver sends (decoded by tshark 4.0 as the
 * expected ARP/ND packets, checksums "correct").  Checksums are verified
 * with this file's own routine, never with the codec's.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <cmocka.h>

#include "ulp/ipoib/ipoib_wire.h"

static size_t unhex(const char *s, uint8_t *out, size_t cap)
{
	size_t n = 0;
	unsigned int v;

	while (s[0] && n < cap) {
		if (s[0] == ' ' || s[0] == '|') {
			s++;
			continue;
		}
		if (sscanf(s, "%2x", &v) != 1)
			break;
		out[n++] = (uint8_t)v;
		s += 2;
	}
	return n;
}

/* RFC 1071 the slow way: add 16-bit words, fold, complement. */
static uint16_t ref_csum(const uint8_t *p, size_t n, uint32_t start)
{
	uint64_t sum = start;
	size_t i;

	for (i = 0; i < n; i++)
		sum += (i % 2 == 0) ? (uint32_t)p[i] << 8 : p[i];
	while (sum > 0xffff)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* sum (not complemented) of the IPv6 pseudo-header for ICMPv6 */
static uint32_t ref_pseudo6(const uint8_t *ip6, uint32_t len)
{
	uint32_t sum = 0;
	size_t i;

	for (i = 8; i < 40; i += 2)	/* source and destination */
		sum += (uint32_t)ip6[i] << 8 | ip6[i + 1];
	sum += len >> 16;
	sum += len & 0xffff;
	sum += 58;
	return sum;
}

/* an ICMPv6 message in a full IPv6 packet sums to 0 with its pseudo-header */
static int icmp6_csum_good(const uint8_t *ip6)
{
	uint32_t len = (uint32_t)(ip6[4] << 8 | ip6[5]);

	return ref_csum(ip6 + 40, len, ref_pseudo6(ip6, len)) == 0;
}

/* rewrite the ICMPv6 checksum of a packet after a test edited it */
static void icmp6_reseal(uint8_t *ip6)
{
	uint32_t len = (uint32_t)(ip6[4] << 8 | ip6[5]);
	uint16_t c;

	ip6[42] = ip6[43] = 0;
	c = ref_csum(ip6 + 40, len, ref_pseudo6(ip6, len));
	ip6[42] = (uint8_t)(c >> 8);
	ip6[43] = (uint8_t)c;
}

/*
 * The first n bytes of pkt, twice: in a heap block of exactly n bytes (so
 * that the sanitizer build sees any read past the end) and followed by 0xff
 * bytes (so that a parser reading on would see values it rejects
 * differently).  Both must give want.
 */
enum cut_parser { CUT_HDR, CUT_ARP, CUT_ND };

static void check_cut(enum cut_parser which, const uint8_t *pkt, size_t n,
		      enum ipoib_wire_err want)
{
	uint8_t poisoned[256], *exact;
	union {
		struct ipoib_arp arp;
		struct ipoib_nd nd;
		uint16_t et;
	} u;
	int pass;

	assert_true(n <= sizeof(poisoned));
	memset(poisoned, 0xff, sizeof(poisoned));
	memcpy(poisoned, pkt, n);
	exact = malloc(n ? n : 1);
	assert_non_null(exact);
	memcpy(exact, pkt, n);
	for (pass = 0; pass < 2; pass++) {
		const uint8_t *b = pass ? exact : poisoned;
		enum ipoib_wire_err got = IPOIB_WIRE_ERR_MAX;

		switch (which) {
		case CUT_HDR:
			got = ipoib_hdr_parse(b, n, &u.et);
			break;
		case CUT_ARP:
			got = ipoib_arp_parse(b, n, &u.arp);
			break;
		case CUT_ND:
			got = ipoib_nd_parse(b, n, &u.nd);
			break;
		}
		assert_int_equal(got, want);
	}
	free(exact);
}

static void gid_str(const char *s, union fab_gid *g)
{
	assert_int_equal(inet_pton(AF_INET6, s, g->raw), 1);
}

static struct in_addr ip4(const char *s)
{
	struct in_addr a;

	assert_int_equal(inet_pton(AF_INET, s, &a), 1);
	return a;
}

static struct in6_addr ip6(const char *s)
{
	struct in6_addr a;

	assert_int_equal(inet_pton(AF_INET6, s, &a), 1);
	return a;
}

/*
 * Two hosts.  A: connected-mode capable (flags 0x80), QPN 0x48, port GUID
 * 0002:c903:000a:b1c1; B: datagram only, QPN 0x4a.  Link-local IPv6 from
 * the GUID with the U/L bit flipped, as Linux addrconf_ifid_infiniband().
 */
#define A_HW	"80 000048 fe80000000000000 0002c903000ab1c1"
#define B_HW	"00 00004a fe80000000000000 0002c903000ab2d1"
#define A_LL	"fe80000000000000 0202c903000ab1c1"
#define B_LL	"fe80000000000000 0202c903000ab2d1"

static void host_a(struct ipoib_addr *a)
{
	a->flags = IPOIB_ADDR_FLAG_RC;
	a->qpn = 0x48;
	gid_str("fe80::2:c903:a:b1c1", &a->gid);
}

static void host_b(struct ipoib_addr *a)
{
	a->flags = 0;
	a->qpn = 0x4a;
	gid_str("fe80::2:c903:a:b2d1", &a->gid);
}

/* --- error names ------------------------------------------------------- */

static void test_strerror_names(void **state)
{
	unsigned int i, j;

	(void)state;
	for (i = 0; i < IPOIB_WIRE_ERR_MAX; i++) {
		const char *n = ipoib_wire_strerror((enum ipoib_wire_err)i);

		assert_non_null(n);
		assert_string_not_equal(n, "unknown");
		for (j = 0; j < i; j++)
			assert_string_not_equal(
				n, ipoib_wire_strerror((enum ipoib_wire_err)j));
	}
	assert_string_equal(ipoib_wire_strerror(IPOIB_WIRE_OK), "ok");
	assert_string_equal(ipoib_wire_strerror(IPOIB_WIRE_BAD_RESERVED),
			    "bad_reserved");
	assert_string_equal(ipoib_wire_strerror(IPOIB_WIRE_ERR_MAX),
			    "unknown");
}

/* --- link address ------------------------------------------------------ */

static void test_addr_codec(void **state)
{
	uint8_t want[IPOIB_HWADDR_LEN], got[IPOIB_HWADDR_LEN];
	struct ipoib_addr a, ref;

	(void)state;
	assert_int_equal(unhex(A_HW, want, sizeof(want)), 20);
	ipoib_addr_decode(want, &a);
	host_a(&ref);
	assert_int_equal(a.flags, 0x80);
	assert_int_equal(a.qpn, 0x48);
	assert_memory_equal(a.gid.raw, ref.gid.raw, 16);
	ipoib_addr_encode(&ref, got);
	assert_memory_equal(got, want, 20);

	/* QPN is 24 bits on the wire */
	ref.qpn = 0x12345678;
	ipoib_addr_encode(&ref, got);
	assert_int_equal(got[0], 0x80);
	assert_int_equal(got[1], 0x34);
	assert_int_equal(got[2], 0x56);
	assert_int_equal(got[3], 0x78);
	assert_false(ipoib_addr_is_mcast(&a));
	ipoib_bcast_addr(0xffff, 2, &a);
	assert_true(ipoib_addr_is_mcast(&a));
}

static void test_addr_text(void **state)
{
	static const char linux_form[] =
		"80:00:00:48:fe:80:00:00:00:00:00:00:00:02:c9:03:00:0a:b1:c1";
	char buf[IPOIB_ADDR_STRLEN];
	struct ipoib_addr a, b;

	(void)state;
	assert_int_equal(sizeof(linux_form), IPOIB_ADDR_STRLEN);
	host_a(&a);
	assert_ptr_equal(ipoib_addr_ntop(&a, buf, sizeof(buf)), buf);
	assert_string_equal(buf, linux_form);
	assert_null(ipoib_addr_ntop(&a, buf, sizeof(buf) - 1));

	memset(&b, 0, sizeof(b));
	assert_int_equal(ipoib_addr_pton(linux_form, &b), IPOIB_WIRE_OK);
	assert_int_equal(b.flags, a.flags);
	assert_int_equal(b.qpn, a.qpn);
	assert_memory_equal(b.gid.raw, a.gid.raw, 16);

	/* upper case and single digits, as iproute2 ll_addr_a2n takes them */
	memset(&b, 0, sizeof(b));
	assert_int_equal(ipoib_addr_pton(
		"80:0:0:48:FE:80:0:0:0:0:0:0:0:2:C9:3:0:A:B1:C1", &b),
		IPOIB_WIRE_OK);
	assert_int_equal(b.qpn, 0x48);
	assert_memory_equal(b.gid.raw, a.gid.raw, 16);

	/* 19 groups, 21 groups, 3 digits, junk, empty, trailing colon */
	assert_int_equal(ipoib_addr_pton(
		"80:00:00:48:fe:80:00:00:00:00:00:00:00:02:c9:03:00:0a:b1", &b),
		IPOIB_WIRE_BAD_SYNTAX);
	assert_int_equal(ipoib_addr_pton(
		"80:00:00:48:fe:80:00:00:00:00:00:00:00:02:c9:03:00:0a:b1:c1"
		":00",
		&b), IPOIB_WIRE_BAD_SYNTAX);
	assert_int_equal(ipoib_addr_pton(
		"800:00:48:fe:80:00:00:00:00:00:00:00:02:c9:03:00:0a:b1:c1",
		&b), IPOIB_WIRE_BAD_SYNTAX);
	assert_int_equal(ipoib_addr_pton(
		"80:00:00:48:fe:80:00:00:00:00:00:00:00:02:c9:03:00:0a:b1:cg",
		&b), IPOIB_WIRE_BAD_SYNTAX);
	assert_int_equal(ipoib_addr_pton("", &b), IPOIB_WIRE_BAD_SYNTAX);
	assert_int_equal(ipoib_addr_pton(
		"80:00:00:48:fe:80:00:00:00:00:00:00:00:02:c9:03:00:0a:b1:c1:",
		&b), IPOIB_WIRE_BAD_SYNTAX);
}

/* broadcast as Linux ipoib_setup_common + ipoib_ndo_init make it */
static void test_bcast_addr(void **state)
{
	uint8_t want[20], got[20];
	struct ipoib_addr a;
	union fab_gid g;

	(void)state;
	unhex("00 ffffff ff12 401b ffff 0000 0000 0000 ffff ffff", want, 20);
	ipoib_bcast_addr(0xffff, IPOIB_SCOPE_LINK, &a);
	ipoib_addr_encode(&a, got);
	assert_memory_equal(got, want, 20);

	/* limited member P_Key 0x0001 joins as full member 0x8001 */
	ipoib_bcast_mgid(0x0001, 2, &g);
	unhex("ff12 401b 8001 0000 0000 0000 ffff ffff", want, 16);
	assert_memory_equal(g.raw, want, 16);

	ipoib_bcast_mgid(0x7fff, 5, &g);
	unhex("ff15 401b ffff 0000 0000 0000 ffff ffff", want, 16);
	assert_memory_equal(g.raw, want, 16);
}

/* --- encapsulation header ---------------------------------------------- */

static void test_hdr(void **state)
{
	static const uint16_t ok[] = { 0x0800, 0x86dd, 0x0806, 0x8035,
				       0x88ca };
	uint8_t b[4];
	uint16_t et = 0;
	size_t i, n;

	(void)state;
	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		b[0] = (uint8_t)(ok[i] >> 8);
		b[1] = (uint8_t)ok[i];
		b[2] = b[3] = 0;
		assert_int_equal(ipoib_hdr_parse(b, 4, &et), IPOIB_WIRE_OK);
		assert_int_equal(et, ok[i]);
	}
	unhex("0800 0001", b, 4);
	assert_int_equal(ipoib_hdr_parse(b, 4, &et), IPOIB_WIRE_BAD_RESERVED);
	unhex("0800 8000", b, 4);
	assert_int_equal(ipoib_hdr_parse(b, 4, &et), IPOIB_WIRE_BAD_RESERVED);
	unhex("88b5 0000", b, 4);	/* local experimental ethertype */
	assert_int_equal(ipoib_hdr_parse(b, 4, &et),
			 IPOIB_WIRE_BAD_ETHERTYPE);
	assert_int_equal(et, 0x88b5);
	unhex("8100 0000", b, 4);	/* no VLAN tags on IPoIB */
	assert_int_equal(ipoib_hdr_parse(b, 4, &et),
			 IPOIB_WIRE_BAD_ETHERTYPE);

	unhex("86dd 0000", b, 4);
	for (n = 0; n < 4; n++)
		check_cut(CUT_HDR, b, n, IPOIB_WIRE_TRUNCATED);

	memset(b, 0xee, sizeof(b));
	assert_int_equal(ipoib_hdr_build(0x0806, b, 3), 0);
	assert_int_equal(b[0], 0xee);
	assert_int_equal(ipoib_hdr_build(0x0806, b, 4), 4);
	assert_int_equal(b[0], 0x08);
	assert_int_equal(b[1], 0x06);
	assert_int_equal(b[2], 0);
	assert_int_equal(b[3], 0);
}

/* --- ARP --------------------------------------------------------------- */

/*
 * IPoIB header + ARP request from A (192.168.1.1) for 192.168.1.2, as
 * Linux arp_create() builds it on an IB device: hardware type 32, hlen 20,
 * sender hardware = dev_addr (flags, QPN at bytes 1-3, GID), target
 * hardware zero.  Sent to the broadcast address.
 */
static const char arp_request_hex[] =
	"0806 0000"
	"0020 0800 14 04 0001" A_HW "c0a80101"
	"00000000 00000000000000000000000000000000" "c0a80102";

/* B's reply, unicast to A */
static const char arp_reply_hex[] =
	"0806 0000"
	"0020 0800 14 04 0002" B_HW "c0a80102" A_HW "c0a80101";

/* inetdev_send_gratuitous_arp: request, sender IP = target IP */
static const char arp_announce_hex[] =
	"0806 0000"
	"0020 0800 14 04 0001" A_HW "c0a80101"
	"00000000 00000000000000000000000000000000" "c0a80101";

static void test_arp_request_as_linux(void **state)
{
	uint8_t pkt[64], got[64];
	struct ipoib_addr a, b, zero;
	struct ipoib_arp arp;
	struct in_addr spa = ip4("192.168.1.1"), tpa = ip4("192.168.1.2");
	uint16_t et;

	(void)state;
	assert_int_equal(unhex(arp_request_hex, pkt, sizeof(pkt)), 60);
	assert_int_equal(ipoib_hdr_parse(pkt, 60, &et), IPOIB_WIRE_OK);
	assert_int_equal(et, IPOIB_ETH_P_ARP);
	assert_int_equal(ipoib_arp_parse(pkt + 4, 56, &arp), IPOIB_WIRE_OK);
	assert_int_equal(arp.op, IPOIB_ARPOP_REQUEST);
	host_a(&a);
	host_b(&b);
	memset(&zero, 0, sizeof(zero));
	assert_int_equal(arp.sha.flags, 0x80);
	assert_int_equal(arp.sha.qpn, 0x48);
	assert_memory_equal(arp.sha.gid.raw, a.gid.raw, 16);
	assert_int_equal(arp.spa.s_addr, spa.s_addr);
	assert_int_equal(arp.tha.flags, 0);
	assert_int_equal(arp.tha.qpn, 0);
	assert_memory_equal(arp.tha.gid.raw, zero.gid.raw, 16);
	assert_int_equal(arp.tpa.s_addr, tpa.s_addr);

	memset(got, 0xee, sizeof(got));
	assert_int_equal(ipoib_hdr_build(IPOIB_ETH_P_ARP, got, sizeof(got)), 4);
	assert_int_equal(ipoib_arp_build_request(&a, &spa, &tpa, got + 4,
						 sizeof(got) - 4), 56);
	assert_memory_equal(got, pkt, 60);
	/* and the general encoder gives back what was parsed */
	memset(got, 0xee, sizeof(got));
	assert_int_equal(ipoib_arp_build(&arp, got, 56), 56);
	assert_memory_equal(got, pkt + 4, 56);
	assert_int_equal(ipoib_arp_build(&arp, got, 55), 0);
	assert_int_equal(ipoib_arp_build_request(&a, &spa, &tpa, got, 55), 0);
}

static void test_arp_reply(void **state)
{
	uint8_t pkt[64], got[64];
	struct ipoib_addr a, b;
	struct ipoib_arp arp;
	struct in_addr ia = ip4("192.168.1.1"), ib = ip4("192.168.1.2");

	(void)state;
	assert_int_equal(unhex(arp_reply_hex, pkt, sizeof(pkt)), 60);
	assert_int_equal(ipoib_arp_parse(pkt + 4, 56, &arp), IPOIB_WIRE_OK);
	host_a(&a);
	host_b(&b);
	assert_int_equal(arp.op, IPOIB_ARPOP_REPLY);
	assert_int_equal(arp.sha.flags, 0);
	assert_int_equal(arp.sha.qpn, 0x4a);
	assert_memory_equal(arp.sha.gid.raw, b.gid.raw, 16);
	assert_int_equal(arp.spa.s_addr, ib.s_addr);
	assert_int_equal(arp.tha.flags, 0x80);
	assert_int_equal(arp.tha.qpn, 0x48);
	assert_memory_equal(arp.tha.gid.raw, a.gid.raw, 16);
	assert_int_equal(arp.tpa.s_addr, ia.s_addr);

	memset(got, 0xee, sizeof(got));
	assert_int_equal(ipoib_arp_build_reply(&b, &ib, &a, &ia, got, 56), 56);
	assert_memory_equal(got, pkt + 4, 56);
	assert_int_equal(ipoib_arp_build_reply(&b, &ib, &a, &ia, got, 10), 0);
}

static void test_arp_announce(void **state)
{
	uint8_t pkt[64], got[64];
	struct ipoib_addr a;
	struct ipoib_arp arp;
	struct in_addr ia = ip4("192.168.1.1");

	(void)state;
	assert_int_equal(unhex(arp_announce_hex, pkt, sizeof(pkt)), 60);
	assert_int_equal(ipoib_arp_parse(pkt + 4, 56, &arp), IPOIB_WIRE_OK);
	assert_int_equal(arp.op, IPOIB_ARPOP_REQUEST);
	assert_int_equal(arp.spa.s_addr, arp.tpa.s_addr);
	host_a(&a);
	memset(got, 0xee, sizeof(got));
	assert_int_equal(ipoib_arp_build_announce(&a, &ia, got, 56), 56);
	assert_memory_equal(got, pkt + 4, 56);
}

static void test_arp_truncated(void **state)
{
	uint8_t pkt[64];
	struct ipoib_arp arp;
	uint16_t et;
	size_t n;

	(void)state;
	unhex(arp_request_hex, pkt, sizeof(pkt));
	/* the whole datagram cut anywhere before its end */
	for (n = 0; n < 60; n++) {
		if (n < 4) {
			check_cut(CUT_HDR, pkt, n, IPOIB_WIRE_TRUNCATED);
			continue;
		}
		assert_int_equal(ipoib_hdr_parse(pkt, n, &et), IPOIB_WIRE_OK);
		check_cut(CUT_ARP, pkt + 4, n - 4, IPOIB_WIRE_TRUNCATED);
	}
	/* link padding after the 56 bytes is fine */
	pkt[60] = pkt[61] = pkt[62] = pkt[63] = 0;
	assert_int_equal(ipoib_arp_parse(pkt + 4, 60, &arp), IPOIB_WIRE_OK);
}

static void test_arp_bad_fields(void **state)
{
	static const struct {
		size_t off;
		uint8_t val;
		enum ipoib_wire_err err;
	} cases[] = {
		{ 1, 0x01, IPOIB_WIRE_ARP_BAD_HTYPE },	/* Ethernet */
		{ 0, 0x01, IPOIB_WIRE_ARP_BAD_HTYPE },	/* 0x0120 */
		{ 2, 0x86, IPOIB_WIRE_ARP_BAD_PTYPE },	/* 0x8600 */
		{ 3, 0xdd, IPOIB_WIRE_ARP_BAD_PTYPE },	/* 0x08dd */
		{ 4, 6, IPOIB_WIRE_ARP_BAD_HLEN },	/* Ethernet size */
		{ 4, 0, IPOIB_WIRE_ARP_BAD_HLEN },	/* as DHCP's hlen */
		{ 5, 16, IPOIB_WIRE_ARP_BAD_PLEN },
		{ 7, 0, IPOIB_WIRE_ARP_BAD_OP },
		{ 7, 3, IPOIB_WIRE_ARP_BAD_OP },	/* RARP request */
		{ 6, 1, IPOIB_WIRE_ARP_BAD_OP },	/* 0x0101 */
	};
	uint8_t pkt[64], m[56];
	struct ipoib_arp arp;
	size_t i;

	(void)state;
	unhex(arp_request_hex, pkt, sizeof(pkt));
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memcpy(m, pkt + 4, 56);
		m[cases[i].off] = cases[i].val;
		assert_int_equal(ipoib_arp_parse(m, 56, &arp), cases[i].err);
		/* a bad fixed part is named even in a short packet */
		assert_int_equal(ipoib_arp_parse(m, 8, &arp), cases[i].err);
	}
}

/* --- IPv6 ND ----------------------------------------------------------- */

/*
 * NS from A's link-local address to the solicited-node address of B's,
 * for B's, with A's link-layer address in the IB form of the option
 * (RFC 4391 9.1.1: type 1, length 3, two zero pad bytes, 20-byte address).
 * Checksum 0xd561.
 */
static const char ns_hex[] =
	"86dd 0000"
	"60000000 0030 3a ff" A_LL "ff02000000000000 00000001ff0ab2d1"
	"87 00 d561 00000000" B_LL
	"01 03 0000" A_HW;

/* B's solicited, override NA to A, checksum 0x26ce */
static const char na_hex[] =
	"86dd 0000"
	"60000000 0030 3a ff" B_LL A_LL
	"88 00 26ce 60000000" B_LL
	"02 03 0000" B_HW;

static void test_nd_ns_vector(void **state)
{
	uint8_t pkt[96], got[96];
	struct ipoib_addr a, b;
	struct in6_addr src = ip6("fe80::202:c903:a:b1c1");
	struct in6_addr tgt = ip6("fe80::202:c903:a:b2d1");
	struct in6_addr snm = ip6("ff02::1:ff0a:b2d1");
	struct ipoib_nd nd;
	uint16_t et;

	(void)state;
	assert_int_equal(unhex(ns_hex, pkt, sizeof(pkt)), 92);
	assert_true(icmp6_csum_good(pkt + 4));
	assert_int_equal(ipoib_hdr_parse(pkt, 92, &et), IPOIB_WIRE_OK);
	assert_int_equal(et, IPOIB_ETH_P_IPV6);
	assert_int_equal(ipoib_nd_parse(pkt + 4, 88, &nd), IPOIB_WIRE_OK);
	assert_int_equal(nd.type, IPOIB_ND_NS);
	assert_int_equal(nd.ip.hop_limit, 255);
	assert_int_equal(nd.ip.payload_len, 48);
	assert_memory_equal(&nd.ip.src, &src, 16);
	assert_memory_equal(&nd.ip.dst, &snm, 16);
	assert_memory_equal(&nd.target, &tgt, 16);
	assert_true(nd.has_slla);
	assert_false(nd.has_tlla);
	host_a(&a);
	assert_int_equal(nd.slla.flags, 0x80);
	assert_int_equal(nd.slla.qpn, 0x48);
	assert_memory_equal(nd.slla.gid.raw, a.gid.raw, 16);

	/* the builder sends the same bytes, to the solicited-node address */
	memset(got, 0xee, sizeof(got));
	assert_int_equal(ipoib_nd_build_ns(&src, NULL, &tgt, &a, got, 88),
			 IPOIB_ND_NS_NA_LEN);
	assert_memory_equal(got, pkt + 4, 88);
	assert_int_equal(ipoib_nd_build_ns(&src, NULL, &tgt, &a, got, 87), 0);

	/* a unicast probe goes to the target itself */
	host_b(&b);
	assert_int_equal(ipoib_nd_build_ns(&src, &tgt, &tgt, &a, got, 88), 88);
	assert_memory_equal(got + 24, &tgt, 16);
	assert_true(icmp6_csum_good(got));
	/* no option asked for: 24 bytes of message only */
	assert_int_equal(ipoib_nd_build_ns(&src, NULL, &tgt, NULL, got, 88),
			 64);
	assert_int_equal(got[5], 24);
	assert_true(icmp6_csum_good(got));
}

static void test_nd_na_vector(void **state)
{
	uint8_t pkt[96], got[96];
	struct ipoib_addr b;
	struct in6_addr src = ip6("fe80::202:c903:a:b2d1");
	struct in6_addr dst = ip6("fe80::202:c903:a:b1c1");
	struct ipoib_nd nd;

	(void)state;
	assert_int_equal(unhex(na_hex, pkt, sizeof(pkt)), 92);
	assert_true(icmp6_csum_good(pkt + 4));
	assert_int_equal(ipoib_nd_parse(pkt + 4, 88, &nd), IPOIB_WIRE_OK);
	assert_int_equal(nd.type, IPOIB_ND_NA);
	assert_int_equal(nd.flags,
			 IPOIB_NA_FLAG_SOLICITED | IPOIB_NA_FLAG_OVERRIDE);
	assert_memory_equal(&nd.target, &src, 16);
	assert_false(nd.has_slla);
	assert_true(nd.has_tlla);
	host_b(&b);
	assert_int_equal(nd.tlla.flags, 0);
	assert_int_equal(nd.tlla.qpn, 0x4a);
	assert_memory_equal(nd.tlla.gid.raw, b.gid.raw, 16);

	memset(got, 0xee, sizeof(got));
	assert_int_equal(ipoib_nd_build_na(&src, &dst, &src,
					   IPOIB_NA_FLAG_SOLICITED |
					   IPOIB_NA_FLAG_OVERRIDE,
					   &b, got, sizeof(got)), 88);
	assert_memory_equal(got, pkt + 4, 88);

	/* router flag, no option */
	assert_int_equal(ipoib_nd_build_na(&src, &dst, &src,
					   IPOIB_NA_FLAG_ROUTER, NULL, got,
					   sizeof(got)), 64);
	assert_int_equal(got[44], 0x80);
	assert_true(icmp6_csum_good(got));
	assert_int_equal(ipoib_nd_parse(got, 64, &nd), IPOIB_WIRE_OK);
	assert_int_equal(nd.flags, IPOIB_NA_FLAG_ROUTER);
	assert_false(nd.has_tlla);
}

static void test_nd_truncated(void **state)
{
	const char *vec[] = { ns_hex, na_hex };
	uint8_t pkt[96];
	struct ipoib_nd nd;
	uint16_t et;
	size_t i, n;

	(void)state;
	for (i = 0; i < 2; i++) {
		unhex(vec[i], pkt, sizeof(pkt));
		for (n = 0; n < 92; n++) {
			if (n < 4) {
				check_cut(CUT_HDR, pkt, n,
					  IPOIB_WIRE_TRUNCATED);
				continue;
			}
			assert_int_equal(ipoib_hdr_parse(pkt, n, &et),
					 IPOIB_WIRE_OK);
			/* short of a header, or a payload cut short */
			check_cut(CUT_ND, pkt + 4, n - 4,
				  n - 4 < 40 ? IPOIB_WIRE_TRUNCATED :
				  IPOIB_WIRE_IP_BAD_LEN);
		}
		assert_int_equal(ipoib_nd_parse(pkt + 4, 88, &nd),
				 IPOIB_WIRE_OK);
	}
}

static void test_nd_hop_limit(void **state)
{
	uint8_t pkt[96];
	struct ipoib_nd nd;

	(void)state;
	unhex(ns_hex, pkt, sizeof(pkt));
	pkt[4 + 7] = 64;	/* forwarded by a router: not on-link */
	/* hop limit is outside the pseudo-header: checksum still right */
	assert_true(icmp6_csum_good(pkt + 4));
	assert_int_equal(ipoib_nd_parse(pkt + 4, 88, &nd),
			 IPOIB_WIRE_ND_BAD_HOP_LIMIT);
	pkt[4 + 7] = 254;
	assert_int_equal(ipoib_nd_parse(pkt + 4, 88, &nd),
			 IPOIB_WIRE_ND_BAD_HOP_LIMIT);
}

static void test_nd_bad_checksum(void **state)
{
	uint8_t pkt[96];
	struct ipoib_nd nd;

	(void)state;
	unhex(na_hex, pkt, sizeof(pkt));
	pkt[4 + 43] ^= 0x01;		/* the checksum itself */
	assert_false(icmp6_csum_good(pkt + 4));
	assert_int_equal(ipoib_nd_parse(pkt + 4, 88, &nd),
			 IPOIB_WIRE_ND_BAD_CSUM);
	unhex(na_hex, pkt, sizeof(pkt));
	pkt[4 + 87] ^= 0x80;		/* last byte of the GID */
	assert_int_equal(ipoib_nd_parse(pkt + 4, 88, &nd),
			 IPOIB_WIRE_ND_BAD_CSUM);
	unhex(na_hex, pkt, sizeof(pkt));
	pkt[4 + 39] ^= 0x01;		/* destination: pseudo-header */
	assert_int_equal(ipoib_nd_parse(pkt + 4, 88, &nd),
			 IPOIB_WIRE_ND_BAD_CSUM);
}

static void test_nd_options(void **state)
{
	uint8_t pkt[128];
	struct ipoib_nd nd;

	(void)state;
	/* zero-length option (RFC 4861 4.6: MUST silently discard) */
	unhex(ns_hex, pkt, sizeof(pkt));
	pkt[4 + 65] = 0;
	icmp6_reseal(pkt + 4);
	assert_int_equal(ipoib_nd_parse(pkt + 4, 88, &nd),
			 IPOIB_WIRE_ND_OPT_ZERO_LEN);

	/* an option claiming 32 bytes where 24 are left */
	unhex(ns_hex, pkt, sizeof(pkt));
	pkt[4 + 65] = 4;
	icmp6_reseal(pkt + 4);
	assert_int_equal(ipoib_nd_parse(pkt + 4, 88, &nd),
			 IPOIB_WIRE_ND_OPT_OVERRUN);

	/* one stray byte after the option */
	unhex(ns_hex, pkt, sizeof(pkt));
	pkt[4 + 5] = 49;
	pkt[4 + 88] = 0x01;
	icmp6_reseal(pkt + 4);
	assert_int_equal(ipoib_nd_parse(pkt + 4, 89, &nd),
			 IPOIB_WIRE_ND_OPT_OVERRUN);

	/* an Ethernet-sized source option (length 1) on IPoIB */
	unhex("60000000 0020 3a ff" A_LL "ff02000000000000 00000001ff0ab2d1"
	      "87 00 0000 00000000" B_LL
	      "01 01 020000000001", pkt, sizeof(pkt));
	icmp6_reseal(pkt);
	assert_int_equal(ipoib_nd_parse(pkt, 72, &nd),
			 IPOIB_WIRE_ND_BAD_LLA_LEN);
	/* ... which an NS does not use as a target option: ignored */
	pkt[64] = IPOIB_ND_OPT_TLLA;
	icmp6_reseal(pkt);
	assert_int_equal(ipoib_nd_parse(pkt, 72, &nd), IPOIB_WIRE_OK);
	assert_false(nd.has_tlla);
	assert_false(nd.has_slla);

	/* unknown option (nonce, type 14) skipped; duplicate: first wins */
	unhex("60000000 0050 3a ff" A_LL "ff02000000000000 00000001ff0ab2d1"
	      "87 00 0000 00000000" B_LL
	      "0e 01 112233445566"
	      "01 03 0000" A_HW
	      "01 03 0000" B_HW, pkt, sizeof(pkt));
	icmp6_reseal(pkt);
	assert_int_equal(ipoib_nd_parse(pkt, 120, &nd), IPOIB_WIRE_OK);
	assert_true(nd.has_slla);
	assert_int_equal(nd.slla.qpn, 0x48);
}

static void test_nd_semantics(void **state)
{
	uint8_t pkt[128], got[128];
	struct ipoib_addr a;
	struct ipoib_nd nd;
	struct in6_addr any = ip6("::"), tgt = ip6("fe80::202:c903:a:b2d1");

	(void)state;
	/* DAD: from ::, to the solicited-node address, no source option */
	unhex("60000000 0018 3a ff 00000000000000000000000000000000"
	      "ff02000000000000 00000001ff0ab2d1"
	      "87 00 0000 00000000" B_LL, pkt, sizeof(pkt));
	icmp6_reseal(pkt);
	assert_int_equal(ipoib_nd_parse(pkt, 64, &nd), IPOIB_WIRE_OK);
	/* the builder leaves the option out of a DAD probe by itself */
	host_a(&a);
	memset(got, 0xee, sizeof(got));
	assert_int_equal(ipoib_nd_build_ns(&any, NULL, &tgt, &a, got, 128),
			 64);
	assert_memory_equal(got, pkt, 64);
	/* DAD to all-nodes */
	memset(pkt + 34, 0, 5);
	pkt[39] = 0x01;
	icmp6_reseal(pkt);
	assert_int_equal(ipoib_nd_parse(pkt, 64, &nd), IPOIB_WIRE_ND_BAD_DAD);
	/* DAD with a source option */
	unhex("60000000 0030 3a ff 00000000000000000000000000000000"
	      "ff02000000000000 00000001ff0ab2d1"
	      "87 00 0000 00000000" B_LL "01 03 0000" A_HW, pkt, sizeof(pkt));
	icmp6_reseal(pkt);
	assert_int_equal(ipoib_nd_parse(pkt, 88, &nd), IPOIB_WIRE_ND_BAD_DAD);

	/* NS for a multicast target */
	unhex(ns_hex, pkt, sizeof(pkt));
	pkt[4 + 48] = 0xff;
	icmp6_reseal(pkt + 4);
	assert_int_equal(ipoib_nd_parse(pkt + 4, 88, &nd),
			 IPOIB_WIRE_ND_MCAST_TARGET);

	/* solicited NA to all-nodes; unsolicited is fine */
	unhex("60000000 0030 3a ff" B_LL "ff020000000000000000000000000001"
	      "88 00 0000 60000000" B_LL "02 03 0000" B_HW, pkt, sizeof(pkt));
	icmp6_reseal(pkt);
	assert_int_equal(ipoib_nd_parse(pkt, 88, &nd),
			 IPOIB_WIRE_ND_MCAST_SOLICITED);
	pkt[44] = IPOIB_NA_FLAG_OVERRIDE;
	icmp6_reseal(pkt);
	assert_int_equal(ipoib_nd_parse(pkt, 88, &nd), IPOIB_WIRE_OK);

	/* code not 0 */
	unhex(ns_hex, pkt, sizeof(pkt));
	pkt[4 + 41] = 1;
	icmp6_reseal(pkt + 4);
	assert_int_equal(ipoib_nd_parse(pkt + 4, 88, &nd),
			 IPOIB_WIRE_ND_BAD_CODE);

	/* an NS whose payload stops inside the target */
	unhex("60000000 0010 3a ff" A_LL "ff02000000000000 00000001ff0ab2d1"
	      "87 00 0000 00000000 fe800000 00000000", pkt, sizeof(pkt));
	icmp6_reseal(pkt);
	assert_int_equal(ipoib_nd_parse(pkt, 56, &nd), IPOIB_WIRE_ND_SHORT);
}

static void test_nd_router_messages(void **state)
{
	uint8_t pkt[160];
	struct ipoib_nd nd;
	struct in6_addr dst = ip6("2001:db8::1");

	(void)state;
	/* RS from A to all-routers with its source option */
	unhex("60000000 0020 3a ff" A_LL "ff020000000000000000000000000002"
	      "85 00 0000 00000000" "01 03 0000" A_HW, pkt, sizeof(pkt));
	icmp6_reseal(pkt);
	assert_int_equal(ipoib_nd_parse(pkt, 72, &nd), IPOIB_WIRE_OK);
	assert_int_equal(nd.type, IPOIB_ND_RS);
	assert_true(nd.has_slla);
	assert_int_equal(nd.slla.qpn, 0x48);

	/* RA from B: managed flag, router lifetime 1800, source option */
	unhex("60000000 0028 3a ff" B_LL "ff020000000000000000000000000001"
	      "86 00 0000 40 80 0708 00000000 00000000"
	      "01 03 0000" B_HW, pkt, sizeof(pkt));
	icmp6_reseal(pkt);
	assert_int_equal(ipoib_nd_parse(pkt, 80, &nd), IPOIB_WIRE_OK);
	assert_int_equal(nd.type, IPOIB_ND_RA);
	assert_int_equal(nd.flags, 0x80);
	assert_int_equal(nd.slla.qpn, 0x4a);
	/* RA from a global address (RFC 4861 6.1.2) */
	pkt[8] = 0x20;
	pkt[9] = 0x01;
	icmp6_reseal(pkt);
	assert_int_equal(ipoib_nd_parse(pkt, 80, &nd),
			 IPOIB_WIRE_ND_BAD_SOURCE);

	/* Redirect from B: better first hop A for 2001:db8::1 */
	unhex("60000000 0040 3a ff" B_LL A_LL
	      "89 00 0000 00000000" A_LL "20010db8000000000000000000000001"
	      "02 03 0000" A_HW, pkt, sizeof(pkt));
	icmp6_reseal(pkt);
	assert_int_equal(ipoib_nd_parse(pkt, 104, &nd), IPOIB_WIRE_OK);
	assert_int_equal(nd.type, IPOIB_ND_REDIRECT);
	assert_memory_equal(&nd.redirect_dst, &dst, 16);
	assert_true(nd.has_tlla);
	assert_int_equal(nd.tlla.flags, 0x80);
}

static void test_nd_not_nd(void **state)
{
	uint8_t pkt[96];
	struct ipoib_nd nd;

	(void)state;
	/* UDP */
	unhex("60000000 0008 11 40" A_LL B_LL "1234 5678 0008 0000",
	      pkt, sizeof(pkt));
	assert_int_equal(ipoib_nd_parse(pkt, 48, &nd), IPOIB_WIRE_NOT_ND);
	/* ICMPv6 echo request, hop limit 64: not ND, not an error */
	unhex("60000000 0008 3a 40" A_LL B_LL "80 00 0000 0001 0001",
	      pkt, sizeof(pkt));
	assert_int_equal(ipoib_nd_parse(pkt, 48, &nd), IPOIB_WIRE_NOT_ND);
	/* IPv4 where IPv6 was announced */
	unhex("45000014 00000000 4011 0000 0a000001 0a000002", pkt, 20);
	assert_int_equal(ipoib_nd_parse(pkt, 20, &nd),
			 IPOIB_WIRE_IP_BAD_VERSION);
}

/* port GUID 0x0002c90300012345: fe80::202:c903:1:2345 (the U/L bit set) */
static void test_link_local(void **state)
{
	union fab_gid gid = { .raw = { 0xfe, 0x80, [8] = 0x00, 0x02, 0xc9,
				       0x03, 0x00, 0x01, 0x23, 0x45 } };
	struct in6_addr ll, want;

	(void)state;
	ipoib_link_local(&gid, &ll);
	inet_pton(AF_INET6, "fe80::202:c903:1:2345", &want);
	assert_memory_equal(&ll, &want, 16);
}

static void test_solicited_node(void **state)
{
	struct in6_addr a = ip6("2001:db8::202:c903:a:b2d1"), s;
	struct in6_addr want = ip6("ff02::1:ff0a:b2d1");

	(void)state;
	ipoib_solicited_node(&a, &s);
	assert_memory_equal(&s, &want, 16);
	assert_true(ipoib_is_solicited_node(&s));
	assert_false(ipoib_is_solicited_node(&a));
	s = ip6("ff02::1");
	assert_false(ipoib_is_solicited_node(&s));
	s = ip6("ff05::1:ff0a:b2d1");	/* site scope is not it */
	assert_false(ipoib_is_solicited_node(&s));
}

/* --- multicast mapping ------------------------------------------------- */

static void check_mgid4(const char *group, uint16_t pkey, uint8_t scope,
			const char *want)
{
	union fab_gid bc, got, w;
	struct in_addr g = ip4(group);

	ipoib_bcast_mgid(pkey, scope, &bc);
	ipoib_mcast_mgid_ipv4(&g, &bc, &got);
	gid_str(want, &w);
	assert_memory_equal(got.raw, w.raw, 16);
}

static void check_mgid6(const char *group, const union fab_gid *bc,
			const char *want)
{
	union fab_gid got, w;
	struct in6_addr g = ip6(group);

	ipoib_mcast_mgid_ipv6(&g, bc, &got);
	gid_str(want, &w);
	assert_memory_equal(got.raw, w.raw, 16);
}

static void test_mcast_ipv4(void **state)
{
	struct ipoib_addr a;
	union fab_gid bc, m;
	uint8_t raw[20], want[20];
	struct in_addr g = ip4("224.0.0.1");

	(void)state;
	check_mgid4("224.0.0.1", 0xffff, 2, "ff12:401b:ffff::1");
	check_mgid4("224.0.0.251", 0xffff, 2, "ff12:401b:ffff::fb");
	/* low 28 bits: 0xeffffffa -> 0x0ffffffa */
	check_mgid4("239.255.255.250", 0xffff, 2,
		    "ff12:401b:ffff::fff:fffa");
	check_mgid4("239.1.2.3", 0xffff, 2, "ff12:401b:ffff::f01:203");
	check_mgid4("224.0.0.1", 0x8001, 2, "ff12:401b:8001::1");
	check_mgid4("224.0.0.1", 0x0001, 2, "ff12:401b:8001::1");
	/* scope from a site-local broadcast group */
	check_mgid4("224.0.0.1", 0xffff, 5, "ff15:401b:ffff::1");

	/* the link address of the group: flags 0, QPN 0xffffff */
	ipoib_bcast_mgid(0xffff, 2, &bc);
	ipoib_mcast_mgid_ipv4(&g, &bc, &m);
	ipoib_mcast_addr(&m, &a);
	ipoib_addr_encode(&a, raw);
	unhex("00 ffffff ff12 401b ffff 0000 0000 0000 0000 0001", want, 20);
	assert_memory_equal(raw, want, 20);
}

static void test_mcast_ipv6(void **state)
{
	union fab_gid bc;

	(void)state;
	ipoib_bcast_mgid(0xffff, 2, &bc);
	check_mgid6("ff02::1", &bc, "ff12:601b:ffff::1");
	check_mgid6("ff02::1:ff00:1", &bc, "ff12:601b:ffff::1:ff00:1");
	check_mgid6("ff02::1:ff0a:b2d1", &bc, "ff12:601b:ffff::1:ff0a:b2d1");
	check_mgid6("ff02::2", &bc, "ff12:601b:ffff::2");
	/* bytes 2..5 of the group are lost; byte 6 on is kept */
	check_mgid6("ff0e:1234:5678:9abc:def0:1:2:3", &bc,
		    "ff12:601b:ffff:9abc:def0:1:2:3");

	/* scope from a non-link-local broadcast; the group's own is dropped */
	ipoib_bcast_mgid(0x8001, 8, &bc);
	check_mgid6("ff02::1", &bc, "ff18:601b:8001::1");
	check_mgid6("ff05::1:3", &bc, "ff18:601b:8001::1:3");

	/* a broadcast MGID whose flags nibble is 0 still maps to ff1S */
	gid_str("ff02:401b:ffff::ffff:ffff", &bc);
	check_mgid6("ff02::1", &bc, "ff12:601b:ffff::1");
}

static void test_mgid_joinable(void **state)
{
	union fab_gid bc, m;
	struct in_addr g4 = ip4("239.1.2.3");
	struct in6_addr g6 = ip6("ff02::1:ff00:1");

	(void)state;
	ipoib_bcast_mgid(0xffff, 2, &bc);
	ipoib_mcast_mgid_ipv4(&g4, &bc, &m);
	assert_true(ipoib_mgid_joinable(&m, &bc));
	ipoib_mcast_mgid_ipv6(&g6, &bc, &m);
	assert_true(ipoib_mgid_joinable(&m, &bc));
	/* another partition, another scope, a foreign signature */
	gid_str("ff12:401b:8001::1", &m);
	assert_false(ipoib_mgid_joinable(&m, &bc));
	gid_str("ff15:401b:ffff::1", &m);
	assert_false(ipoib_mgid_joinable(&m, &bc));
	gid_str("ff12:401c:ffff::1", &m);
	assert_false(ipoib_mgid_joinable(&m, &bc));
	/* mapped from a flags-0 broadcast: Linux would never join it */
	gid_str("ff02:401b:ffff::ffff:ffff", &bc);
	ipoib_mcast_mgid_ipv4(&g4, &bc, &m);
	assert_false(ipoib_mgid_joinable(&m, &bc));
}

/* --- IPv4/IPv6 header checks ------------------------------------------- */

static void test_ipv4_check(void **state)
{
	uint8_t p[64];
	struct ipoib_ipv4_info ip;
	size_t n;

	(void)state;
	/* UDP 10.0.0.1 -> 10.0.1.2, DF, ttl 64, 36 bytes, checksum 0x0981 */
	unhex("45000024 1c464000 4011 0981 0a000001 0a000102"
	      "04d2 162e 0010 0000 6162636465666768", p, sizeof(p));
	assert_int_equal(ref_csum(p, 20, 0), 0);
	assert_int_equal(ipoib_ipv4_check(p, 36, &ip), IPOIB_WIRE_OK);
	assert_true(ipoib_ipv4_hdr_csum_ok(p));
	assert_int_equal(ip.hdr_len, 20);
	assert_int_equal(ip.tot_len, 36);
	assert_int_equal(ip.id, 0x1c46);
	assert_int_equal(ip.frag, 0x4000);
	assert_int_equal(ip.ttl, 64);
	assert_int_equal(ip.proto, 17);
	assert_true(ipoib_ipv4_df(p, 36));
	/* padding after the total length */
	assert_int_equal(ipoib_ipv4_check(p, 40, &ip), IPOIB_WIRE_OK);
	assert_int_equal(ip.tot_len, 36);
	for (n = 0; n < 20; n++)
		assert_int_equal(ipoib_ipv4_check(p, n, &ip),
				 IPOIB_WIRE_TRUNCATED);
	for (n = 20; n < 36; n++)
		assert_int_equal(ipoib_ipv4_check(p, n, &ip),
				 IPOIB_WIRE_IP_BAD_LEN);

	p[6] = 0;
	assert_false(ipoib_ipv4_hdr_csum_ok(p));
	assert_false(ipoib_ipv4_df(p, 36));
	p[6] = 0x40;
	p[0] = 0x44;
	assert_int_equal(ipoib_ipv4_check(p, 36, &ip),
			 IPOIB_WIRE_IP_BAD_HDR_LEN);
	assert_false(ipoib_ipv4_df(p, 36));
	p[0] = 0x4f;		/* 60-byte header in a 36-byte packet */
	assert_int_equal(ipoib_ipv4_check(p, 36, &ip),
			 IPOIB_WIRE_IP_BAD_HDR_LEN);
	p[0] = 0x46;		/* 24-byte header, total 36: fine */
	assert_int_equal(ipoib_ipv4_check(p, 36, &ip), IPOIB_WIRE_OK);
	assert_int_equal(ip.hdr_len, 24);
	p[0] = 0x45;
	p[3] = 19;		/* total shorter than the header */
	assert_int_equal(ipoib_ipv4_check(p, 36, &ip), IPOIB_WIRE_IP_BAD_LEN);
	p[3] = 0x24;
	p[0] = 0x65;
	assert_int_equal(ipoib_ipv4_check(p, 36, &ip),
			 IPOIB_WIRE_IP_BAD_VERSION);
}

static void test_ipv6_check(void **state)
{
	uint8_t p[64];
	struct ipoib_ipv6_info ip;
	struct in6_addr a = ip6("fe80::202:c903:a:b1c1");
	size_t n;

	(void)state;
	unhex("6b812345 0008 11 40" A_LL B_LL "1234 5678 0008 0000",
	      p, sizeof(p));
	assert_int_equal(ipoib_ipv6_check(p, 48, &ip), IPOIB_WIRE_OK);
	assert_int_equal(ip.tclass, 0xb8);
	assert_int_equal(ip.flow, 0x12345);
	assert_int_equal(ip.payload_len, 8);
	assert_int_equal(ip.next_hdr, 17);
	assert_int_equal(ip.hop_limit, 64);
	assert_memory_equal(&ip.src, &a, 16);
	assert_int_equal(ipoib_ipv6_check(p, 60, &ip), IPOIB_WIRE_OK);
	for (n = 1; n < 40; n++)
		assert_int_equal(ipoib_ipv6_check(p, n, &ip),
				 IPOIB_WIRE_TRUNCATED);
	for (n = 40; n < 48; n++)
		assert_int_equal(ipoib_ipv6_check(p, n, &ip),
				 IPOIB_WIRE_IP_BAD_LEN);
	p[0] = 0x4b;
	assert_int_equal(ipoib_ipv6_check(p, 48, &ip),
			 IPOIB_WIRE_IP_BAD_VERSION);
}

/* --- ICMP for oversize packets ----------------------------------------- */

/* A 1500-byte UDP datagram with DF, 10.0.0.1 -> 10.0.1.2, TOS 0xb8 (EF) */
static size_t sample_ipv4(uint8_t *p, size_t total, uint8_t proto)
{
	size_t i;
	uint16_t c;

	unhex("45b80000 abcd4000 4000 0000 0a000001 0a000102", p, 20);
	p[2] = (uint8_t)(total >> 8);
	p[3] = (uint8_t)total;
	p[9] = proto;
	for (i = 20; i < total; i++)
		p[i] = (uint8_t)(i * 7 + 3);
	c = ref_csum(p, 20, 0);
	p[10] = (uint8_t)(c >> 8);
	p[11] = (uint8_t)c;
	return total;
}

static void test_icmp4_frag_needed(void **state)
{
	static uint8_t orig[1500], out[1024];
	struct in_addr gw = ip4("10.0.0.254");
	size_t n = 0;

	(void)state;
	sample_ipv4(orig, 1500, 17);
	assert_true(ipoib_ipv4_df(orig, 1500));
	memset(out, 0xee, sizeof(out));
	assert_int_equal(ipoib_icmp4_frag_needed(orig, 1500, &gw, 2044, 0x1234,
						 out, sizeof(out), &n),
			 IPOIB_WIRE_OK);
	assert_int_equal(n, 576);
	assert_int_equal(out[576], 0xee);
	/* IP header, field by field */
	assert_int_equal(out[0], 0x45);
	assert_int_equal(out[1], 0xd8);	/* (0xb8 & 0x1e) | 0xc0 */
	assert_int_equal(out[2] << 8 | out[3], 576);
	assert_int_equal(out[4] << 8 | out[5], 0x1234);
	assert_int_equal(out[6] << 8 | out[7], 0);	/* no DF, no offset */
	assert_int_equal(out[8], 64);
	assert_int_equal(out[9], 1);
	assert_memory_equal(out + 12, &gw, 4);
	assert_memory_equal(out + 16, orig + 12, 4);	/* back to source */
	assert_int_equal(ref_csum(out, 20, 0), 0);
	/* ICMP: 3/4, unused 0, next-hop MTU, the original's first 548 */
	assert_int_equal(out[20], 3);
	assert_int_equal(out[21], 4);
	assert_int_equal(out[24], 0);
	assert_int_equal(out[25], 0);
	assert_int_equal(out[26] << 8 | out[27], 2044);
	assert_memory_equal(out + 28, orig, 548);
	assert_int_equal(ref_csum(out + 20, 556, 0), 0);

	/* output too small for 576 */
	assert_int_equal(ipoib_icmp4_frag_needed(orig, 1500, &gw, 2044, 1,
						 out, 575, &n),
			 IPOIB_WIRE_NO_ROOM);
	assert_int_equal(n, 0);
}

static void test_icmp4_small_original(void **state)
{
	uint8_t orig[128], out[256];
	struct in_addr gw = ip4("10.0.0.254");
	size_t n = 0;

	(void)state;
	/* 100 bytes plus 8 of link padding: the quote stops at 100 */
	sample_ipv4(orig, 100, 17);
	memset(orig + 100, 0x77, 8);
	assert_int_equal(ipoib_icmp4_frag_needed(orig, 108, &gw, 1500, 7,
						 out, sizeof(out), &n),
			 IPOIB_WIRE_OK);
	assert_int_equal(n, 128);
	assert_int_equal(out[2] << 8 | out[3], 128);
	assert_int_equal(out[26] << 8 | out[27], 1500);
	assert_memory_equal(out + 28, orig, 100);
	assert_int_equal(ref_csum(out, 20, 0), 0);
	assert_int_equal(ref_csum(out + 20, 108, 0), 0);
	/* an echo request is answered too */
	sample_ipv4(orig, 100, 1);
	orig[20] = 8;
	assert_int_equal(ipoib_icmp4_frag_needed(orig, 100, &gw, 1500, 7,
						 out, sizeof(out), &n),
			 IPOIB_WIRE_OK);
}

static void test_icmp4_refusals(void **state)
{
	uint8_t orig[128], out[600];
	struct in_addr gw = ip4("10.0.0.254");
	size_t n = 99;

	(void)state;
	/* about an ICMP error: destination unreachable, time exceeded */
	sample_ipv4(orig, 100, 1);
	orig[20] = 3;
	assert_int_equal(ipoib_icmp4_frag_needed(orig, 100, &gw, 1500, 0, out,
						 sizeof(out), &n),
			 IPOIB_WIRE_ICMP_ABOUT_ERROR);
	assert_int_equal(n, 0);
	orig[20] = 11;
	assert_int_equal(ipoib_icmp4_frag_needed(orig, 100, &gw, 1500, 0, out,
						 sizeof(out), &n),
			 IPOIB_WIRE_ICMP_ABOUT_ERROR);
	/* ICMP with no room for its type */
	sample_ipv4(orig, 20, 1);
	orig[20] = 8;		/* an echo request, but past the total */
	assert_int_equal(ipoib_icmp4_frag_needed(orig, 21, &gw, 1500, 0, out,
						 sizeof(out), &n),
			 IPOIB_WIRE_ICMP_ABOUT_ERROR);

	/* a later fragment; the first fragment (MF only) is answered */
	sample_ipv4(orig, 100, 17);
	orig[6] = 0x20;
	orig[7] = 0xb9;
	assert_int_equal(ipoib_icmp4_frag_needed(orig, 100, &gw, 1500, 0, out,
						 sizeof(out), &n),
			 IPOIB_WIRE_ICMP_FRAGMENT);
	orig[6] = 0;
	orig[7] = 1;		/* the smallest later offset: 8 bytes */
	assert_int_equal(ipoib_icmp4_frag_needed(orig, 100, &gw, 1500, 0, out,
						 sizeof(out), &n),
			 IPOIB_WIRE_ICMP_FRAGMENT);
	orig[6] = 0x20;
	orig[7] = 0;
	assert_int_equal(ipoib_icmp4_frag_needed(orig, 100, &gw, 1500, 0, out,
						 sizeof(out), &n),
			 IPOIB_WIRE_OK);

	/* to multicast, to limited broadcast, from 0.0.0.0, from loopback */
	sample_ipv4(orig, 100, 17);
	orig[16] = 239;
	assert_int_equal(ipoib_icmp4_frag_needed(orig, 100, &gw, 1500, 0, out,
						 sizeof(out), &n),
			 IPOIB_WIRE_ICMP_BAD_ADDR);
	memset(orig + 16, 0xff, 4);
	assert_int_equal(ipoib_icmp4_frag_needed(orig, 100, &gw, 1500, 0, out,
						 sizeof(out), &n),
			 IPOIB_WIRE_ICMP_BAD_ADDR);
	sample_ipv4(orig, 100, 17);
	memset(orig + 12, 0, 4);
	assert_int_equal(ipoib_icmp4_frag_needed(orig, 100, &gw, 1500, 0, out,
						 sizeof(out), &n),
			 IPOIB_WIRE_ICMP_BAD_ADDR);
	orig[12] = 127;
	assert_int_equal(ipoib_icmp4_frag_needed(orig, 100, &gw, 1500, 0, out,
						 sizeof(out), &n),
			 IPOIB_WIRE_ICMP_BAD_ADDR);

	/* not IPv4 at all */
	sample_ipv4(orig, 100, 17);
	assert_int_equal(ipoib_icmp4_frag_needed(orig, 99, &gw, 1500, 0, out,
						 sizeof(out), &n),
			 IPOIB_WIRE_IP_BAD_LEN);
	orig[0] = 0x60;
	assert_int_equal(ipoib_icmp4_frag_needed(orig, 100, &gw, 1500, 0, out,
						 sizeof(out), &n),
			 IPOIB_WIRE_IP_BAD_VERSION);
}

/* IPv6 UDP from 2001:db8::1 to 2001:db8:1::2, payload_len bytes */
static size_t sample_ipv6(uint8_t *p, uint16_t payload_len, uint8_t nh)
{
	size_t i;

	unhex("60000000 0000 00 40"
	      "20010db8000000000000000000000001"
	      "20010db8000100000000000000000002", p, 40);
	p[4] = (uint8_t)(payload_len >> 8);
	p[5] = (uint8_t)payload_len;
	p[6] = nh;
	for (i = 40; i < 40u + payload_len; i++)
		p[i] = (uint8_t)(i * 13 + 1);
	return 40u + payload_len;
}

static void test_icmp6_pkt_too_big(void **state)
{
	static uint8_t orig[1500], out[1400];
	struct in6_addr gw = ip6("2001:db8::fe");
	size_t n = 0;

	(void)state;
	sample_ipv6(orig, 1460, 17);
	memset(out, 0xee, sizeof(out));
	assert_int_equal(ipoib_icmp6_pkt_too_big(orig, 1500, &gw, 2044, out,
						 sizeof(out), &n),
			 IPOIB_WIRE_OK);
	assert_int_equal(n, 1280);
	assert_int_equal(out[1280], 0xee);
	assert_int_equal(out[0], 0x60);
	assert_int_equal(out[1], 0);
	assert_int_equal(out[2], 0);
	assert_int_equal(out[3], 0);
	assert_int_equal(out[4] << 8 | out[5], 1240);
	assert_int_equal(out[6], 58);
	assert_int_equal(out[7], 64);
	assert_memory_equal(out + 8, &gw, 16);
	assert_memory_equal(out + 24, orig + 8, 16);	/* back to source */
	assert_int_equal(out[40], 2);
	assert_int_equal(out[41], 0);
	assert_int_equal(out[44], 0);
	assert_int_equal(out[45], 0);
	assert_int_equal(out[46] << 8 | out[47], 2044);
	assert_memory_equal(out + 48, orig, 1232);
	assert_true(icmp6_csum_good(out));

	assert_int_equal(ipoib_icmp6_pkt_too_big(orig, 1500, &gw, 2044, out,
						 1279, &n),
			 IPOIB_WIRE_NO_ROOM);

	/* a small original is quoted whole, and to a multicast group too */
	sample_ipv6(orig, 100, 17);
	orig[24] = 0xff;
	assert_int_equal(ipoib_icmp6_pkt_too_big(orig, 140, &gw, 1280, out,
						 sizeof(out), &n),
			 IPOIB_WIRE_OK);
	assert_int_equal(n, 40 + 8 + 140);
	assert_memory_equal(out + 48, orig, 140);
	assert_int_equal(out[44] << 24 | out[45] << 16 | out[46] << 8 | out[47],
			 1280);
	assert_true(icmp6_csum_good(out));
}

static void test_icmp6_refusals(void **state)
{
	uint8_t orig[256], out[512];
	struct in6_addr gw = ip6("2001:db8::fe");
	size_t n = 99;

	(void)state;
	/* about an ICMPv6 error (destination unreachable) */
	sample_ipv6(orig, 64, 58);
	orig[40] = 1;
	assert_int_equal(ipoib_icmp6_pkt_too_big(orig, 104, &gw, 1280, out,
						 sizeof(out), &n),
			 IPOIB_WIRE_ICMP_ABOUT_ERROR);
	assert_int_equal(n, 0);
	/* the same behind a hop-by-hop header of 8 bytes */
	sample_ipv6(orig, 72, 0);
	orig[40] = 58;
	orig[41] = 0;
	memset(orig + 42, 0, 6);
	orig[48] = 3;		/* time exceeded */
	assert_int_equal(ipoib_icmp6_pkt_too_big(orig, 112, &gw, 1280, out,
						 sizeof(out), &n),
			 IPOIB_WIRE_ICMP_ABOUT_ERROR);
	orig[48] = 128;		/* echo request behind it: answered */
	assert_int_equal(ipoib_icmp6_pkt_too_big(orig, 112, &gw, 1280, out,
						 sizeof(out), &n),
			 IPOIB_WIRE_OK);
	/* a later fragment hides the upper layer: answered */
	sample_ipv6(orig, 72, 44);
	orig[40] = 58;
	orig[41] = 0;
	orig[42] = 0x05;
	orig[43] = 0x00;
	orig[48] = 1;
	assert_int_equal(ipoib_icmp6_pkt_too_big(orig, 112, &gw, 1280, out,
						 sizeof(out), &n),
			 IPOIB_WIRE_OK);

	/* from :: or from a multicast address */
	sample_ipv6(orig, 64, 17);
	memset(orig + 8, 0, 16);
	assert_int_equal(ipoib_icmp6_pkt_too_big(orig, 104, &gw, 1280, out,
						 sizeof(out), &n),
			 IPOIB_WIRE_ICMP_BAD_ADDR);
	orig[8] = 0xff;
	assert_int_equal(ipoib_icmp6_pkt_too_big(orig, 104, &gw, 1280, out,
						 sizeof(out), &n),
			 IPOIB_WIRE_ICMP_BAD_ADDR);
	/* payload length past the buffer */
	sample_ipv6(orig, 64, 17);
	assert_int_equal(ipoib_icmp6_pkt_too_big(orig, 103, &gw, 1280, out,
						 sizeof(out), &n),
			 IPOIB_WIRE_IP_BAD_LEN);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_strerror_names),
		cmocka_unit_test(test_addr_codec),
		cmocka_unit_test(test_addr_text),
		cmocka_unit_test(test_bcast_addr),
		cmocka_unit_test(test_hdr),
		cmocka_unit_test(test_arp_request_as_linux),
		cmocka_unit_test(test_arp_reply),
		cmocka_unit_test(test_arp_announce),
		cmocka_unit_test(test_arp_truncated),
		cmocka_unit_test(test_arp_bad_fields),
		cmocka_unit_test(test_nd_ns_vector),
		cmocka_unit_test(test_nd_na_vector),
		cmocka_unit_test(test_nd_truncated),
		cmocka_unit_test(test_nd_hop_limit),
		cmocka_unit_test(test_nd_bad_checksum),
		cmocka_unit_test(test_nd_options),
		cmocka_unit_test(test_nd_semantics),
		cmocka_unit_test(test_nd_router_messages),
		cmocka_unit_test(test_nd_not_nd),
		cmocka_unit_test(test_solicited_node),
		cmocka_unit_test(test_link_local),
		cmocka_unit_test(test_mcast_ipv4),
		cmocka_unit_test(test_mcast_ipv6),
		cmocka_unit_test(test_mgid_joinable),
		cmocka_unit_test(test_ipv4_check),
		cmocka_unit_test(test_ipv6_check),
		cmocka_unit_test(test_icmp4_frag_needed),
		cmocka_unit_test(test_icmp4_small_original),
		cmocka_unit_test(test_icmp4_refusals),
		cmocka_unit_test(test_icmp6_pkt_too_big),
		cmocka_unit_test(test_icmp6_refusals),
	};

	return cmocka_run_group_tests_name("ipoib_wire", tests, NULL, NULL);
}

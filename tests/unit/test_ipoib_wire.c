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
#include "tests/unit/vectors.h"

/*
 * The first n bytes of pkt, twice: in a heap block of exactly n bytes (so
 * that the sanitizer build sees any read past the end) and followed by 0xff
 * bytes (so that a parser reading on would see values it rejects
 * differently).  Both must give want.
 */
enum cut_parser { CUT_HDR, CUT_ARP };

static void check_cut(enum cut_parser which, const uint8_t *pkt, size_t n,
		      enum ipoib_wire_err want)
{
	uint8_t poisoned[256], *exact;
	union {
		struct ipoib_arp arp;
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
		}
		assert_int_equal(got, want);
	}
	free(exact);
}

static void gid_str(const char *s, union fab_gid *g)
{
	assert_int_equal(inet_pton(AF_INET6, s, g->raw), 1);
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
	assert_int_equal(tv_unhex(A_HW, want, sizeof(want)), 20);
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
	tv_unhex("00 ffffff ff12 401b ffff 0000 0000 0000 ffff ffff", want, 20);
	ipoib_bcast_addr(0xffff, IPOIB_SCOPE_LINK, &a);
	ipoib_addr_encode(&a, got);
	assert_memory_equal(got, want, 20);

	/* limited member P_Key 0x0001 joins as full member 0x8001 */
	ipoib_bcast_mgid(0x0001, 2, &g);
	tv_unhex("ff12 401b 8001 0000 0000 0000 ffff ffff", want, 16);
	assert_memory_equal(g.raw, want, 16);

	ipoib_bcast_mgid(0x7fff, 5, &g);
	tv_unhex("ff15 401b ffff 0000 0000 0000 ffff ffff", want, 16);
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
	tv_unhex("0800 0001", b, 4);
	assert_int_equal(ipoib_hdr_parse(b, 4, &et), IPOIB_WIRE_BAD_RESERVED);
	tv_unhex("0800 8000", b, 4);
	assert_int_equal(ipoib_hdr_parse(b, 4, &et), IPOIB_WIRE_BAD_RESERVED);
	tv_unhex("88b5 0000", b, 4);	/* local experimental ethertype */
	assert_int_equal(ipoib_hdr_parse(b, 4, &et),
			 IPOIB_WIRE_BAD_ETHERTYPE);
	assert_int_equal(et, 0x88b5);
	tv_unhex("8100 0000", b, 4);	/* no VLAN tags on IPoIB */
	assert_int_equal(ipoib_hdr_parse(b, 4, &et),
			 IPOIB_WIRE_BAD_ETHERTYPE);

	tv_unhex("86dd 0000", b, 4);
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
	struct in_addr spa = tv_ip4("192.168.1.1"), tpa = tv_ip4("192.168.1.2");
	uint16_t et;

	(void)state;
	assert_int_equal(tv_unhex(arp_request_hex, pkt, sizeof(pkt)), 60);
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
	struct in_addr ia = tv_ip4("192.168.1.1"), ib = tv_ip4("192.168.1.2");

	(void)state;
	assert_int_equal(tv_unhex(arp_reply_hex, pkt, sizeof(pkt)), 60);
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
	struct in_addr ia = tv_ip4("192.168.1.1");

	(void)state;
	assert_int_equal(tv_unhex(arp_announce_hex, pkt, sizeof(pkt)), 60);
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
	tv_unhex(arp_request_hex, pkt, sizeof(pkt));
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
	tv_unhex(arp_request_hex, pkt, sizeof(pkt));
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
	struct in6_addr src = tv_ip6("fe80::202:c903:a:b1c1");
	struct in6_addr tgt = tv_ip6("fe80::202:c903:a:b2d1");
	struct in6_addr snm = tv_ip6("ff02::1:ff0a:b2d1");
	struct ipoib_nd nd;
	uint16_t et;

	(void)state;
	assert_int_equal(tv_unhex(ns_hex, pkt, sizeof(pkt)), 92);
	assert_true(tv_icmp6_csum_good(pkt + 4));
	assert_int_equal(ipoib_hdr_parse(pkt, 92, &et), IPOIB_WIRE_OK);
	assert_int_equal(et, IPOIB_ETH_P_IPV6);
	assert_int_equal(ipoib_nd_decode(pkt + 4, 88, &nd), INET_OK);
	assert_int_equal(nd.type, INET_ND_NS);
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
	assert_true(tv_icmp6_csum_good(got));
	/* no option asked for: 24 bytes of message only */
	assert_int_equal(ipoib_nd_build_ns(&src, NULL, &tgt, NULL, got, 88),
			 64);
	assert_int_equal(got[5], 24);
	assert_true(tv_icmp6_csum_good(got));
}

static void test_nd_na_vector(void **state)
{
	uint8_t pkt[96], got[96];
	struct ipoib_addr b;
	struct in6_addr src = tv_ip6("fe80::202:c903:a:b2d1");
	struct in6_addr dst = tv_ip6("fe80::202:c903:a:b1c1");
	struct ipoib_nd nd;

	(void)state;
	assert_int_equal(tv_unhex(na_hex, pkt, sizeof(pkt)), 92);
	assert_true(tv_icmp6_csum_good(pkt + 4));
	assert_int_equal(ipoib_nd_decode(pkt + 4, 88, &nd), INET_OK);
	assert_int_equal(nd.type, INET_ND_NA);
	assert_int_equal(nd.flags,
			 INET_NA_FLAG_SOLICITED | INET_NA_FLAG_OVERRIDE);
	assert_memory_equal(&nd.target, &src, 16);
	assert_false(nd.has_slla);
	assert_true(nd.has_tlla);
	host_b(&b);
	assert_int_equal(nd.tlla.flags, 0);
	assert_int_equal(nd.tlla.qpn, 0x4a);
	assert_memory_equal(nd.tlla.gid.raw, b.gid.raw, 16);

	memset(got, 0xee, sizeof(got));
	assert_int_equal(ipoib_nd_build_na(&src, &dst, &src,
					   INET_NA_FLAG_SOLICITED |
					   INET_NA_FLAG_OVERRIDE,
					   &b, got, sizeof(got)), 88);
	assert_memory_equal(got, pkt + 4, 88);

	/* router flag, no option */
	assert_int_equal(ipoib_nd_build_na(&src, &dst, &src,
					   INET_NA_FLAG_ROUTER, NULL, got,
					   sizeof(got)), 64);
	assert_int_equal(got[44], 0x80);
	assert_true(tv_icmp6_csum_good(got));
	assert_int_equal(ipoib_nd_decode(got, 64, &nd), INET_OK);
	assert_int_equal(nd.flags, INET_NA_FLAG_ROUTER);
	assert_false(nd.has_tlla);
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

/* --- multicast mapping ------------------------------------------------- */

static void check_mgid4(const char *group, uint16_t pkey, uint8_t scope,
			const char *want)
{
	union fab_gid bc, got, w;
	struct in_addr g = tv_ip4(group);

	ipoib_bcast_mgid(pkey, scope, &bc);
	ipoib_mcast_mgid_ipv4(&g, &bc, &got);
	gid_str(want, &w);
	assert_memory_equal(got.raw, w.raw, 16);
}

static void check_mgid6(const char *group, const union fab_gid *bc,
			const char *want)
{
	union fab_gid got, w;
	struct in6_addr g = tv_ip6(group);

	ipoib_mcast_mgid_ipv6(&g, bc, &got);
	gid_str(want, &w);
	assert_memory_equal(got.raw, w.raw, 16);
}

static void test_mcast_ipv4(void **state)
{
	struct ipoib_addr a;
	union fab_gid bc, m;
	uint8_t raw[20], want[20];
	struct in_addr g = tv_ip4("224.0.0.1");

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
	tv_unhex("00 ffffff ff12 401b ffff 0000 0000 0000 0000 0001", want, 20);
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
	struct in_addr g4 = tv_ip4("239.1.2.3");
	struct in6_addr g6 = tv_ip6("ff02::1:ff00:1");

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
		cmocka_unit_test(test_link_local),
		cmocka_unit_test(test_mcast_ipv4),
		cmocka_unit_test(test_mcast_ipv6),
		cmocka_unit_test(test_mgid_joinable),
	};

	return cmocka_run_group_tests_name("ipoib_wire", tests, NULL, NULL);
}

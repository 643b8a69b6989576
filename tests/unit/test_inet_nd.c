// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The one ND validator (inet/nd.c) with both link-layer option lengths:
 * IPoIB's 3 units (RFC 4391 9.1.1) on vectors tshark decodes as Linux
 * sends them, Ethernet's 1 unit (RFC 2464), and the negative cases of the
 * two validators it replaced.  Checksums are this file's own.
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

#include "inet/nd.h"
#include "tests/unit/vectors.h"

/* rewrite the ICMPv6 checksum of a packet after a test edited it */
static void icmp6_reseal(uint8_t *ip6)
{
	uint32_t len = (uint32_t)(ip6[4] << 8 | ip6[5]);
	uint16_t c;

	ip6[42] = ip6[43] = 0;
	c = tv_csum(ip6 + 40, len, tv_pseudo6(ip6, len, 58));
	ip6[42] = (uint8_t)(c >> 8);
	ip6[43] = (uint8_t)c;
}

#define A_HW	"80 000048 fe80000000000000 0002c903000ab1c1"
#define B_HW	"00 00004a fe80000000000000 0002c903000ab2d1"
#define A_LL	"fe80000000000000 0202c903000ab1c1"
#define B_LL	"fe80000000000000 0202c903000ab2d1"
#define IB_UNITS	3
#define ETH_UNITS	1

/* ND on IPoIB: the option of 3 units */
static enum inet_err nd_ib(const uint8_t *b, size_t n, struct inet_nd *nd)
{
	return inet_nd_parse(b, n, IB_UNITS, nd);
}

/* The QPN of an IB option body: 2 pad bytes, flags, QPN, GID */
static uint32_t body_qpn(const uint8_t *body)
{
	return (uint32_t)body[3] << 16 | (uint32_t)body[4] << 8 | body[5];
}

/*
 * The first n bytes of pkt, twice: in a heap block of exactly n bytes (so
 * that the sanitizer build sees any read past the end) and followed by 0xff
 * bytes (so that a parser reading on would see values it rejects
 * differently).  Both must give want.
 */
static void check_cut(const uint8_t *pkt, size_t n, unsigned int units,
		      enum inet_err want)
{
	uint8_t poisoned[256], *exact;
	struct inet_nd nd;

	assert_true(n <= sizeof(poisoned));
	memset(poisoned, 0xff, sizeof(poisoned));
	memcpy(poisoned, pkt, n);
	exact = malloc(n ? n : 1);
	assert_non_null(exact);
	memcpy(exact, pkt, n);
	assert_int_equal(inet_nd_parse(poisoned, n, units, &nd), want);
	assert_int_equal(inet_nd_parse(exact, n, units, &nd), want);
	free(exact);
}

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

static void test_nd_truncated(void **state)
{
	const char *vec[] = { ns_hex, na_hex };
	uint8_t pkt[96];
	struct inet_nd nd;
	size_t i, n;

	(void)state;
	for (i = 0; i < 2; i++) {
		tv_unhex(vec[i], pkt, sizeof(pkt));
		/* short of a header, or a payload cut short */
		for (n = 0; n < 88; n++)
			check_cut(pkt + 4, n, IB_UNITS,
				  n < 40 ? INET_TRUNCATED : INET_IP_BAD_LEN);
		assert_int_equal(nd_ib(pkt + 4, 88, &nd), INET_OK);
	}
}

static void test_nd_hop_limit(void **state)
{
	uint8_t pkt[96];
	struct inet_nd nd;

	(void)state;
	tv_unhex(ns_hex, pkt, sizeof(pkt));
	pkt[4 + 7] = 64;	/* forwarded by a router: not on-link */
	/* hop limit is outside the pseudo-header: checksum still right */
	assert_true(tv_icmp6_csum_good(pkt + 4));
	assert_int_equal(nd_ib(pkt + 4, 88, &nd),
			 INET_ND_BAD_HOP_LIMIT);
	pkt[4 + 7] = 254;
	assert_int_equal(nd_ib(pkt + 4, 88, &nd),
			 INET_ND_BAD_HOP_LIMIT);
}

static void test_nd_bad_checksum(void **state)
{
	uint8_t pkt[96];
	struct inet_nd nd;

	(void)state;
	tv_unhex(na_hex, pkt, sizeof(pkt));
	pkt[4 + 43] ^= 0x01;		/* the checksum itself */
	assert_false(tv_icmp6_csum_good(pkt + 4));
	assert_int_equal(nd_ib(pkt + 4, 88, &nd),
			 INET_ND_BAD_CSUM);
	tv_unhex(na_hex, pkt, sizeof(pkt));
	pkt[4 + 87] ^= 0x80;		/* last byte of the GID */
	assert_int_equal(nd_ib(pkt + 4, 88, &nd),
			 INET_ND_BAD_CSUM);
	tv_unhex(na_hex, pkt, sizeof(pkt));
	pkt[4 + 39] ^= 0x01;		/* destination: pseudo-header */
	assert_int_equal(nd_ib(pkt + 4, 88, &nd),
			 INET_ND_BAD_CSUM);
}

static void test_nd_options(void **state)
{
	uint8_t pkt[128];
	struct inet_nd nd;

	(void)state;
	/* zero-length option (RFC 4861 4.6: MUST silently discard) */
	tv_unhex(ns_hex, pkt, sizeof(pkt));
	pkt[4 + 65] = 0;
	icmp6_reseal(pkt + 4);
	assert_int_equal(nd_ib(pkt + 4, 88, &nd),
			 INET_ND_OPT_ZERO_LEN);

	/* an option claiming 32 bytes where 24 are left */
	tv_unhex(ns_hex, pkt, sizeof(pkt));
	pkt[4 + 65] = 4;
	icmp6_reseal(pkt + 4);
	assert_int_equal(nd_ib(pkt + 4, 88, &nd),
			 INET_ND_OPT_OVERRUN);

	/* one stray byte after the option */
	tv_unhex(ns_hex, pkt, sizeof(pkt));
	pkt[4 + 5] = 49;
	pkt[4 + 88] = 0x01;
	icmp6_reseal(pkt + 4);
	assert_int_equal(nd_ib(pkt + 4, 89, &nd),
			 INET_ND_OPT_OVERRUN);

	/* an Ethernet-sized source option (length 1) on IPoIB */
	tv_unhex("60000000 0020 3a ff" A_LL "ff02000000000000 00000001ff0ab2d1"
	      "87 00 0000 00000000" B_LL
	      "01 01 020000000001", pkt, sizeof(pkt));
	icmp6_reseal(pkt);
	assert_int_equal(nd_ib(pkt, 72, &nd),
			 INET_ND_BAD_LLA_LEN);
	/* ... which an NS does not use as a target option: ignored */
	pkt[64] = INET_ND_OPT_TLLA;
	icmp6_reseal(pkt);
	assert_int_equal(nd_ib(pkt, 72, &nd), INET_OK);
	assert_null(nd.tlla);
	assert_null(nd.slla);

	/* unknown option (nonce, type 14) skipped; duplicate: first wins */
	tv_unhex("60000000 0050 3a ff" A_LL "ff02000000000000 00000001ff0ab2d1"
	      "87 00 0000 00000000" B_LL
	      "0e 01 112233445566"
	      "01 03 0000" A_HW
	      "01 03 0000" B_HW, pkt, sizeof(pkt));
	icmp6_reseal(pkt);
	assert_int_equal(nd_ib(pkt, 120, &nd), INET_OK);
	assert_non_null(nd.slla);
	assert_int_equal(body_qpn(nd.slla), 0x48);
}

static void test_nd_semantics(void **state)
{
	uint8_t pkt[128], got[128];
	uint8_t body[22] = { 0 };
	struct inet_nd nd;
	struct in6_addr any = tv_ip6("::"), tgt = tv_ip6("fe80::202:c903:a:b2d1");

	(void)state;
	/* DAD: from ::, to the solicited-node address, no source option */
	tv_unhex("60000000 0018 3a ff 00000000000000000000000000000000"
	      "ff02000000000000 00000001ff0ab2d1"
	      "87 00 0000 00000000" B_LL, pkt, sizeof(pkt));
	icmp6_reseal(pkt);
	assert_int_equal(nd_ib(pkt, 64, &nd), INET_OK);
	/* the builder leaves the option out of a DAD probe by itself */
	tv_unhex(A_HW, body + 2, 20);
	memset(got, 0xee, sizeof(got));
	assert_int_equal(inet_nd_build_ns(&any, NULL, &tgt, body, IB_UNITS,
					  got, 128),
			 64);
	assert_memory_equal(got, pkt, 64);
	/* DAD to all-nodes */
	memset(pkt + 34, 0, 5);
	pkt[39] = 0x01;
	icmp6_reseal(pkt);
	assert_int_equal(nd_ib(pkt, 64, &nd), INET_ND_BAD_DAD);
	/* DAD with a source option */
	tv_unhex("60000000 0030 3a ff 00000000000000000000000000000000"
	      "ff02000000000000 00000001ff0ab2d1"
	      "87 00 0000 00000000" B_LL "01 03 0000" A_HW, pkt, sizeof(pkt));
	icmp6_reseal(pkt);
	assert_int_equal(nd_ib(pkt, 88, &nd), INET_ND_BAD_DAD);

	/* NS for a multicast target */
	tv_unhex(ns_hex, pkt, sizeof(pkt));
	pkt[4 + 48] = 0xff;
	icmp6_reseal(pkt + 4);
	assert_int_equal(nd_ib(pkt + 4, 88, &nd),
			 INET_ND_MCAST_TARGET);

	/* solicited NA to all-nodes; unsolicited is fine */
	tv_unhex("60000000 0030 3a ff" B_LL "ff020000000000000000000000000001"
	      "88 00 0000 60000000" B_LL "02 03 0000" B_HW, pkt, sizeof(pkt));
	icmp6_reseal(pkt);
	assert_int_equal(nd_ib(pkt, 88, &nd),
			 INET_ND_MCAST_SOLICITED);
	pkt[44] = INET_NA_FLAG_OVERRIDE;
	icmp6_reseal(pkt);
	assert_int_equal(nd_ib(pkt, 88, &nd), INET_OK);

	/* code not 0 */
	tv_unhex(ns_hex, pkt, sizeof(pkt));
	pkt[4 + 41] = 1;
	icmp6_reseal(pkt + 4);
	assert_int_equal(nd_ib(pkt + 4, 88, &nd),
			 INET_ND_BAD_CODE);

	/* an NS whose payload stops inside the target */
	tv_unhex("60000000 0010 3a ff" A_LL "ff02000000000000 00000001ff0ab2d1"
	      "87 00 0000 00000000 fe800000 00000000", pkt, sizeof(pkt));
	icmp6_reseal(pkt);
	assert_int_equal(nd_ib(pkt, 56, &nd), INET_ND_SHORT);
}

static void test_nd_router_messages(void **state)
{
	uint8_t pkt[160];
	struct inet_nd nd;
	struct in6_addr dst = tv_ip6("2001:db8::1");

	(void)state;
	/* RS from A to all-routers with its source option */
	tv_unhex("60000000 0020 3a ff" A_LL "ff020000000000000000000000000002"
	      "85 00 0000 00000000" "01 03 0000" A_HW, pkt, sizeof(pkt));
	icmp6_reseal(pkt);
	assert_int_equal(nd_ib(pkt, 72, &nd), INET_OK);
	assert_int_equal(nd.type, INET_ND_RS);
	assert_non_null(nd.slla);
	assert_int_equal(body_qpn(nd.slla), 0x48);

	/* RA from B: managed flag, router lifetime 1800, source option */
	tv_unhex("60000000 0028 3a ff" B_LL "ff020000000000000000000000000001"
	      "86 00 0000 40 80 0708 00000000 00000000"
	      "01 03 0000" B_HW, pkt, sizeof(pkt));
	icmp6_reseal(pkt);
	assert_int_equal(nd_ib(pkt, 80, &nd), INET_OK);
	assert_int_equal(nd.type, INET_ND_RA);
	assert_int_equal(nd.flags, 0x80);
	assert_int_equal(body_qpn(nd.slla), 0x4a);
	/* RA from a global address (RFC 4861 6.1.2) */
	pkt[8] = 0x20;
	pkt[9] = 0x01;
	icmp6_reseal(pkt);
	assert_int_equal(nd_ib(pkt, 80, &nd),
			 INET_ND_BAD_SOURCE);

	/* Redirect from B: better first hop A for 2001:db8::1 */
	tv_unhex("60000000 0040 3a ff" B_LL A_LL
	      "89 00 0000 00000000" A_LL "20010db8000000000000000000000001"
	      "02 03 0000" A_HW, pkt, sizeof(pkt));
	icmp6_reseal(pkt);
	assert_int_equal(nd_ib(pkt, 104, &nd), INET_OK);
	assert_int_equal(nd.type, INET_ND_REDIRECT);
	assert_memory_equal(&nd.redirect_dst, &dst, 16);
	assert_non_null(nd.tlla);
	assert_int_equal(nd.tlla[2], 0x80);
}

static void test_nd_not_nd(void **state)
{
	uint8_t pkt[96];
	struct inet_nd nd;

	(void)state;
	/* UDP */
	tv_unhex("60000000 0008 11 40" A_LL B_LL "1234 5678 0008 0000",
	      pkt, sizeof(pkt));
	assert_int_equal(nd_ib(pkt, 48, &nd), INET_NOT_ND);
	/* ICMPv6 echo request, hop limit 64: not ND, not an error */
	tv_unhex("60000000 0008 3a 40" A_LL B_LL "80 00 0000 0001 0001",
	      pkt, sizeof(pkt));
	assert_int_equal(nd_ib(pkt, 48, &nd), INET_NOT_ND);
	/* IPv4 where IPv6 was announced */
	tv_unhex("45000014 00000000 4011 0000 0a000001 0a000002", pkt, 20);
	assert_int_equal(nd_ib(pkt, 20, &nd),
			 INET_IP_BAD_VERSION);
}

static void test_solicited_node(void **state)
{
	struct in6_addr a = tv_ip6("2001:db8::202:c903:a:b2d1"), s;
	struct in6_addr want = tv_ip6("ff02::1:ff0a:b2d1");

	(void)state;
	inet_solicited_node(&a, &s);
	assert_memory_equal(&s, &want, 16);
	assert_true(inet_is_solicited_node(&s));
	assert_false(inet_is_solicited_node(&a));
	s = tv_ip6("ff02::1");
	assert_false(inet_is_solicited_node(&s));
	s = tv_ip6("ff05::1:ff0a:b2d1");	/* site scope is not it */
	assert_false(inet_is_solicited_node(&s));
}

/* --- Ethernet: the 1-unit option with a MAC (RFC 2464 section 6) ------- */

static const uint8_t lan_mac[6] = { 0x02, 0x00, 0x5e, 0x10, 0x00, 0x50 };

/* An NS from fd09::50 for fd09::1 as the gateway's builder sends it */
static size_t eth_ns(uint8_t *pkt, size_t cap)
{
	struct in6_addr src = tv_ip6("fd09::50"), tgt = tv_ip6("fd09::1");

	return inet_nd_build_ns(&src, NULL, &tgt, lan_mac, ETH_UNITS, pkt,
				cap);
}

static void test_eth_ns_na(void **state)
{
	struct in6_addr src = tv_ip6("fd09::50"), tgt = tv_ip6("fd09::1");
	struct in6_addr snm = tv_ip6("ff02::1:ff00:1");
	uint8_t pkt[128];
	struct inet_nd nd;

	(void)state;
	assert_int_equal(eth_ns(pkt, 72), 72);
	assert_int_equal(eth_ns(pkt, 71), 0);
	assert_true(tv_icmp6_csum_good(pkt));
	assert_memory_equal(pkt + 24, &snm, 16);
	assert_int_equal(pkt[64], INET_ND_OPT_SLLA);
	assert_int_equal(pkt[65], 1);
	assert_memory_equal(pkt + 66, lan_mac, 6);
	assert_int_equal(inet_nd_parse(pkt, 72, ETH_UNITS, &nd), INET_OK);
	assert_int_equal(nd.type, INET_ND_NS);
	assert_memory_equal(&nd.target, &tgt, 16);
	assert_non_null(nd.slla);
	assert_memory_equal(nd.slla, lan_mac, 6);
	assert_null(nd.tlla);
	/* the same bytes where the link's option is 3 units: refused */
	assert_int_equal(inet_nd_parse(pkt, 72, IB_UNITS, &nd),
			 INET_ND_BAD_LLA_LEN);
	/* every truncation */
	for (size_t n = 0; n < 72; n++)
		check_cut(pkt, n, ETH_UNITS,
			  n < 40 ? INET_TRUNCATED : INET_IP_BAD_LEN);

	/* a solicited NA back, without override (a proxy's) */
	assert_int_equal(inet_nd_build_na(&tgt, &src, &tgt,
					  INET_NA_FLAG_SOLICITED | 0x1f,
					  lan_mac, ETH_UNITS, pkt,
					  sizeof(pkt)), 72);
	assert_true(tv_icmp6_csum_good(pkt));
	assert_int_equal(pkt[44], INET_NA_FLAG_SOLICITED);
	assert_int_equal(inet_nd_parse(pkt, 72, ETH_UNITS, &nd), INET_OK);
	assert_int_equal(nd.type, INET_ND_NA);
	assert_int_equal(nd.flags, INET_NA_FLAG_SOLICITED);
	assert_non_null(nd.tlla);
	assert_memory_equal(nd.tlla, lan_mac, 6);
	assert_null(nd.slla);
}

/* what the Ethernet validator refused, and what it let through before */
static void test_eth_negative(void **state)
{
	struct in6_addr any = tv_ip6("::"), tgt = tv_ip6("fd09::1");
	uint8_t pkt[128];
	struct inet_nd nd;

	(void)state;
	eth_ns(pkt, sizeof(pkt));
	pkt[7] = 64;				/* hop limit */
	assert_int_equal(inet_nd_parse(pkt, 72, ETH_UNITS, &nd),
			 INET_ND_BAD_HOP_LIMIT);
	eth_ns(pkt, sizeof(pkt));
	pkt[41] = 1;				/* code */
	icmp6_reseal(pkt);
	assert_int_equal(inet_nd_parse(pkt, 72, ETH_UNITS, &nd),
			 INET_ND_BAD_CODE);
	eth_ns(pkt, sizeof(pkt));
	pkt[71] ^= 1;				/* checksum */
	assert_int_equal(inet_nd_parse(pkt, 72, ETH_UNITS, &nd),
			 INET_ND_BAD_CSUM);
	eth_ns(pkt, sizeof(pkt));
	pkt[48] = 0xff;				/* multicast target */
	icmp6_reseal(pkt);
	assert_int_equal(inet_nd_parse(pkt, 72, ETH_UNITS, &nd),
			 INET_ND_MCAST_TARGET);
	eth_ns(pkt, sizeof(pkt));
	pkt[65] = 0;				/* zero-length option */
	icmp6_reseal(pkt);
	assert_int_equal(inet_nd_parse(pkt, 72, ETH_UNITS, &nd),
			 INET_ND_OPT_ZERO_LEN);
	eth_ns(pkt, sizeof(pkt));
	pkt[65] = 2;				/* option past the end */
	icmp6_reseal(pkt);
	assert_int_equal(inet_nd_parse(pkt, 72, ETH_UNITS, &nd),
			 INET_ND_OPT_OVERRUN);
	eth_ns(pkt, sizeof(pkt));
	pkt[5] = 20;				/* NS shorter than 24 */
	icmp6_reseal(pkt);
	assert_int_equal(inet_nd_parse(pkt, 60, ETH_UNITS, &nd),
			 INET_ND_SHORT);

	/* stricter than the old Ethernet validator: a source option of the
	 * wrong length (Linux ndisc_recv_ns drops it too) ... */
	eth_ns(pkt, sizeof(pkt));
	pkt[5] = 48;
	pkt[65] = 3;
	memset(pkt + 72, 0, 16);
	icmp6_reseal(pkt);
	assert_int_equal(inet_nd_parse(pkt, 88, ETH_UNITS, &nd),
			 INET_ND_BAD_LLA_LEN);
	/* ... a DAD probe with a source option ... */
	eth_ns(pkt, sizeof(pkt));
	memset(pkt + 8, 0, 16);
	icmp6_reseal(pkt);
	assert_int_equal(inet_nd_parse(pkt, 72, ETH_UNITS, &nd),
			 INET_ND_BAD_DAD);
	/* (the builder leaves it out of one) */
	assert_int_equal(inet_nd_build_ns(&any, NULL, &tgt, lan_mac,
					  ETH_UNITS, pkt, sizeof(pkt)), 64);
	assert_int_equal(inet_nd_parse(pkt, 64, ETH_UNITS, &nd), INET_OK);
	/* ... and a solicited NA to all-nodes */
	assert_int_equal(inet_nd_build_na(&tgt, &tgt, &tgt,
					  INET_NA_FLAG_SOLICITED, lan_mac,
					  ETH_UNITS, pkt, sizeof(pkt)), 72);
	memcpy(pkt + 24, "\xff\x02\0\0\0\0\0\0\0\0\0\0\0\0\0\x01", 16);
	icmp6_reseal(pkt);
	assert_int_equal(inet_nd_parse(pkt, 72, ETH_UNITS, &nd),
			 INET_ND_MCAST_SOLICITED);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nd_truncated),
		cmocka_unit_test(test_nd_hop_limit),
		cmocka_unit_test(test_nd_bad_checksum),
		cmocka_unit_test(test_nd_options),
		cmocka_unit_test(test_nd_semantics),
		cmocka_unit_test(test_nd_router_messages),
		cmocka_unit_test(test_nd_not_nd),
		cmocka_unit_test(test_solicited_node),
		cmocka_unit_test(test_eth_ns_na),
		cmocka_unit_test(test_eth_negative),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

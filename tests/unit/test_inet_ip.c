// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * IPv4/IPv6 header checks (inet/ip.c): good headers field by field,
 * every truncation, each malformed field.  Checksums are verified with this
 * file's own routine, never with inet's.
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

#include "inet/ip.h"
#include "tests/unit/vectors.h"

#define A_LL	"fe80000000000000 0202c903000ab1c1"
#define B_LL	"fe80000000000000 0202c903000ab2d1"

static void test_ipv4_check(void **state)
{
	uint8_t p[64];
	struct inet_ipv4_info ip;
	size_t n;

	(void)state;
	/* UDP 10.0.0.1 -> 10.0.1.2, DF, ttl 64, 36 bytes, checksum 0x0981 */
	tv_unhex("45000024 1c464000 4011 0981 0a000001 0a000102"
	      "04d2 162e 0010 0000 6162636465666768", p, sizeof(p));
	assert_int_equal(tv_csum(p, 20, 0), 0);
	assert_int_equal(inet_ipv4_check(p, 36, &ip), INET_OK);
	assert_true(inet_ipv4_hdr_csum_ok(p));
	assert_int_equal(ip.hdr_len, 20);
	assert_int_equal(ip.tot_len, 36);
	assert_int_equal(ip.id, 0x1c46);
	assert_int_equal(ip.frag, 0x4000);
	assert_int_equal(ip.ttl, 64);
	assert_int_equal(ip.proto, 17);
	assert_true(inet_ipv4_df(p, 36));
	/* padding after the total length */
	assert_int_equal(inet_ipv4_check(p, 40, &ip), INET_OK);
	assert_int_equal(ip.tot_len, 36);
	for (n = 0; n < 20; n++)
		assert_int_equal(inet_ipv4_check(p, n, &ip),
				INET_TRUNCATED);
	for (n = 20; n < 36; n++)
		assert_int_equal(inet_ipv4_check(p, n, &ip),
				INET_IP_BAD_LEN);

	p[6] = 0;
	assert_false(inet_ipv4_hdr_csum_ok(p));
	assert_false(inet_ipv4_df(p, 36));
	p[6] = 0x40;
	p[0] = 0x44;
	assert_int_equal(inet_ipv4_check(p, 36, &ip),
			 INET_IP_BAD_HDR_LEN);
	assert_false(inet_ipv4_df(p, 36));
	p[0] = 0x4f;		/* 60-byte header in a 36-byte packet */
	assert_int_equal(inet_ipv4_check(p, 36, &ip),
			 INET_IP_BAD_HDR_LEN);
	p[0] = 0x46;		/* 24-byte header, total 36: fine */
	assert_int_equal(inet_ipv4_check(p, 36, &ip), INET_OK);
	assert_int_equal(ip.hdr_len, 24);
	p[0] = 0x45;
	p[3] = 19;		/* total shorter than the header */
	assert_int_equal(inet_ipv4_check(p, 36, &ip), INET_IP_BAD_LEN);
	p[3] = 0x24;
	p[0] = 0x65;
	assert_int_equal(inet_ipv4_check(p, 36, &ip),
			 INET_IP_BAD_VERSION);
}

static void test_ipv6_check(void **state)
{
	uint8_t p[64];
	struct inet_ipv6_info ip;
	struct in6_addr a = tv_ip6("fe80::202:c903:a:b1c1");
	size_t n;

	(void)state;
	tv_unhex("6b812345 0008 11 40" A_LL B_LL "1234 5678 0008 0000",
	      p, sizeof(p));
	assert_int_equal(inet_ipv6_check(p, 48, &ip), INET_OK);
	assert_int_equal(ip.tclass, 0xb8);
	assert_int_equal(ip.flow, 0x12345);
	assert_int_equal(ip.payload_len, 8);
	assert_int_equal(ip.next_hdr, 17);
	assert_int_equal(ip.hop_limit, 64);
	assert_memory_equal(&ip.src, &a, 16);
	assert_int_equal(inet_ipv6_check(p, 60, &ip), INET_OK);
	for (n = 1; n < 40; n++)
		assert_int_equal(inet_ipv6_check(p, n, &ip),
				INET_TRUNCATED);
	for (n = 40; n < 48; n++)
		assert_int_equal(inet_ipv6_check(p, n, &ip),
				INET_IP_BAD_LEN);
	p[0] = 0x4b;
	assert_int_equal(inet_ipv6_check(p, 48, &ip),
			 INET_IP_BAD_VERSION);
}

/* An IPv6 header (next header nh) and then the hex chain, in p. */
static size_t v6_chain(uint8_t *p, size_t cap, const char *nh,
		       const char *chain)
{
	char hex[1024];
	size_t n;

	snprintf(hex, sizeof(hex), "60000000 0000 %s 01 %s %s | %s", nh, A_LL,
		 B_LL, chain);
	n = tv_unhex(hex, p, cap);
	p[4] = (uint8_t)((n - 40) >> 8);
	p[5] = (uint8_t)(n - 40);
	return n;
}

static void upper_is(const uint8_t *p, size_t len, enum inet_err err,
		     uint8_t proto, size_t off)
{
	struct inet_ipv6_upper up;

	assert_int_equal(inet_ipv6_upper(p, len, &up), err);
	assert_int_equal(up.proto, proto);
	assert_int_equal(up.off, off);
}

/* Each extension header passed, with its own length rule. */
static void test_ipv6_upper(void **state)
{
	struct inet_ipv6_upper up;
	uint8_t p[256];
	size_t n;

	(void)state;
	n = v6_chain(p, sizeof(p), "11", "1234 5678 0008 0000");
	upper_is(p, n, INET_OK, 17, 40);
	/* MLD as Linux sends it: hop-by-hop with router alert, PadN */
	n = v6_chain(p, sizeof(p), "00", "3a00 0502 0000 0100 | 8f00 0000");
	upper_is(p, n, INET_OK, 58, 48);
	assert_false(inet_ipv6_upper(p, n, &up) || up.fragment || up.auth);
	/* routing (type 0 of 24 bytes), destination options, TCP */
	n = v6_chain(p, sizeof(p), "2b",
		     "3c02 0000 00000000 " A_LL " | 0600 0104 00000000 | "
		     "0050 0050");
	upper_is(p, n, INET_OK, 6, 72);
	/* a first fragment (offset 0, M set): passed, and said so */
	n = v6_chain(p, sizeof(p), "2c", "1100 0001 12345678 | 1234 5678");
	upper_is(p, n, INET_OK, 17, 48);
	inet_ipv6_upper(p, n, &up);
	assert_true(up.fragment);
	assert_false(up.auth);
	/* a later fragment: no upper header behind it */
	n = v6_chain(p, sizeof(p), "2c", "1100 0009 12345678 | 1234 5678");
	upper_is(p, n, INET_IP_LATER_FRAGMENT, 44, 40);
	/* authentication header: length in 4-byte units minus 2 (RFC 4302) */
	n = v6_chain(p, sizeof(p), "33",
		     "3a04 0000 00000100 00000001 aaaaaaaa bbbbbbbb cccccccc "
		     "| 8000 0000");
	upper_is(p, n, INET_OK, 58, 64);
	inet_ipv6_upper(p, n, &up);
	assert_true(up.auth);
	assert_false(up.fragment);
	/* an empty upper layer is still found: off == len */
	n = v6_chain(p, sizeof(p), "3c", "3b00 0104 00000000");
	upper_is(p, n, INET_OK, 59, 48);
}

/* A chain cut short says which header does not fit and where. */
static void test_ipv6_upper_truncated(void **state)
{
	struct inet_ipv6_upper up;
	uint8_t p[256];
	size_t n, i;

	(void)state;
	for (i = 0; i < 40; i++)
		assert_int_equal(inet_ipv6_upper(p, i, &up), INET_TRUNCATED);
	/* hop-by-hop of 16 bytes, 8 of them here, ICMPv6 next: the ICMPv6
	 * header would start past the end */
	n = v6_chain(p, sizeof(p), "00", "3a01 0000 00000000");
	upper_is(p, n, INET_TRUNCATED, 58, 56);
	/* no room for the next header and length bytes */
	upper_is(p, 41, INET_TRUNCATED, 0, 40);
	upper_is(p, 40, INET_TRUNCATED, 0, 40);
	/* a second header where the first ends, not readable */
	n = v6_chain(p, sizeof(p), "00", "3c00 0000 00000000 | 11");
	upper_is(p, n, INET_TRUNCATED, 60, 48);
	upper_is(p, n - 1, INET_TRUNCATED, 60, 48);
	/* readable, it says UDP next, 8 bytes on, past the end */
	p[n] = 0;
	upper_is(p, n + 1, INET_TRUNCATED, 17, 56);
	/* a fragment header needs all 8 bytes */
	n = v6_chain(p, sizeof(p), "2c", "1100 0001 12345678");
	upper_is(p, n, INET_OK, 17, 48);
	for (i = 40; i < 48; i++)
		upper_is(p, i, INET_TRUNCATED, 44, 40);
	/* the upper header right at the end is there (empty) */
	n = v6_chain(p, sizeof(p), "3c", "3a00 0104 00000000");
	upper_is(p, n, INET_OK, 58, n);
	upper_is(p, n - 1, INET_TRUNCATED, 58, n);
}

/* Thousands of headers: the walk advances 8 bytes a step and ends. */
static void test_ipv6_upper_long_chain(void **state)
{
	static uint8_t p[40 + 8 * 8000 + 8];
	size_t i;

	(void)state;
	memset(p, 0, sizeof(p));
	v6_chain(p, sizeof(p), "3c", "");
	for (i = 40; i < sizeof(p); i += 8)
		p[i] = 60;		/* destination options, length 0 */
	upper_is(p, sizeof(p), INET_TRUNCATED, 60, sizeof(p));
	p[sizeof(p) - 8] = 17;
	upper_is(p, sizeof(p), INET_OK, 17, sizeof(p));
	/* each header as long as it can be: 2048 bytes a step */
	memset(p, 0, sizeof(p));
	v6_chain(p, sizeof(p), "00", "");
	for (i = 40; i < sizeof(p); i += 2048) {
		p[i] = 0;
		p[i + 1] = 255;
	}
	upper_is(p, sizeof(p), INET_TRUNCATED, 0,
		 40 + 2048 * ((sizeof(p) - 40 + 2047) / 2048));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ipv4_check),
		cmocka_unit_test(test_ipv6_check),
		cmocka_unit_test(test_ipv6_upper),
		cmocka_unit_test(test_ipv6_upper_truncated),
		cmocka_unit_test(test_ipv6_upper_long_chain),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

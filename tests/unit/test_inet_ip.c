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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ipv4_check),
		cmocka_unit_test(test_ipv6_check),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

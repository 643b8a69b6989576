// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ICMP errors for oversize packets (inet/icmp.c): what Linux sends,
 * field by field, and every refusal RFC 1122/1812/4443 asks for.
 * Checksums are verified with this file's own routine.
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

#include "inet/icmp.h"
#include "inet/ip.h"
#include "tests/unit/vectors.h"

/* A 1500-byte UDP datagram with DF, 10.0.0.1 -> 10.0.1.2, TOS 0xb8 (EF) */
static size_t sample_ipv4(uint8_t *p, size_t total, uint8_t proto)
{
	size_t i;
	uint16_t c;

	tv_unhex("45b80000 abcd4000 4000 0000 0a000001 0a000102", p, 20);
	p[2] = (uint8_t)(total >> 8);
	p[3] = (uint8_t)total;
	p[9] = proto;
	for (i = 20; i < total; i++)
		p[i] = (uint8_t)(i * 7 + 3);
	c = tv_csum(p, 20, 0);
	p[10] = (uint8_t)(c >> 8);
	p[11] = (uint8_t)c;
	return total;
}

/* IPv6 UDP from 2001:db8::1 to 2001:db8:1::2, payload_len bytes */
static size_t sample_ipv6(uint8_t *p, uint16_t payload_len, uint8_t nh)
{
	size_t i;

	tv_unhex("60000000 0000 00 40"
	      "20010db8000000000000000000000001"
	      "20010db8000100000000000000000002", p, 40);
	p[4] = (uint8_t)(payload_len >> 8);
	p[5] = (uint8_t)payload_len;
	p[6] = nh;
	for (i = 40; i < 40u + payload_len; i++)
		p[i] = (uint8_t)(i * 13 + 1);
	return 40u + payload_len;
}

static void test_icmp4_frag_needed(void **state)
{
	static uint8_t orig[1500], out[1024];
	struct in_addr gw = tv_ip4("10.0.0.254");
	size_t n = 0;

	(void)state;
	sample_ipv4(orig, 1500, 17);
	assert_true(inet_ipv4_df(orig, 1500));
	memset(out, 0xee, sizeof(out));
	assert_int_equal(inet_icmp4_frag_needed(orig, 1500, &gw, 2044, 0x1234,
						out, sizeof(out), &n),
			 INET_OK);
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
	assert_int_equal(tv_csum(out, 20, 0), 0);
	/* ICMP: 3/4, unused 0, next-hop MTU, the original's first 548 */
	assert_int_equal(out[20], 3);
	assert_int_equal(out[21], 4);
	assert_int_equal(out[24], 0);
	assert_int_equal(out[25], 0);
	assert_int_equal(out[26] << 8 | out[27], 2044);
	assert_memory_equal(out + 28, orig, 548);
	assert_int_equal(tv_csum(out + 20, 556, 0), 0);

	/* output too small for 576 */
	assert_int_equal(inet_icmp4_frag_needed(orig, 1500, &gw, 2044, 1,
						out, 575, &n),
			 INET_NO_ROOM);
	assert_int_equal(n, 0);
}

static void test_icmp4_small_original(void **state)
{
	uint8_t orig[128], out[256];
	struct in_addr gw = tv_ip4("10.0.0.254");
	size_t n = 0;

	(void)state;
	/* 100 bytes plus 8 of link padding: the quote stops at 100 */
	sample_ipv4(orig, 100, 17);
	memset(orig + 100, 0x77, 8);
	assert_int_equal(inet_icmp4_frag_needed(orig, 108, &gw, 1500, 7,
						out, sizeof(out), &n),
			 INET_OK);
	assert_int_equal(n, 128);
	assert_int_equal(out[2] << 8 | out[3], 128);
	assert_int_equal(out[26] << 8 | out[27], 1500);
	assert_memory_equal(out + 28, orig, 100);
	assert_int_equal(tv_csum(out, 20, 0), 0);
	assert_int_equal(tv_csum(out + 20, 108, 0), 0);
	/* an echo request is answered too */
	sample_ipv4(orig, 100, 1);
	orig[20] = 8;
	assert_int_equal(inet_icmp4_frag_needed(orig, 100, &gw, 1500, 7,
						out, sizeof(out), &n),
			 INET_OK);
}

static void test_icmp4_refusals(void **state)
{
	uint8_t orig[128], out[600];
	struct in_addr gw = tv_ip4("10.0.0.254");
	size_t n = 99;

	(void)state;
	/* about an ICMP error: destination unreachable, time exceeded */
	sample_ipv4(orig, 100, 1);
	orig[20] = 3;
	assert_int_equal(inet_icmp4_frag_needed(orig, 100, &gw, 1500, 0, out,
						sizeof(out), &n),
			 INET_ICMP_ABOUT_ERROR);
	assert_int_equal(n, 0);
	orig[20] = 11;
	assert_int_equal(inet_icmp4_frag_needed(orig, 100, &gw, 1500, 0, out,
						sizeof(out), &n),
			 INET_ICMP_ABOUT_ERROR);
	/* ICMP with no room for its type */
	sample_ipv4(orig, 20, 1);
	orig[20] = 8;		/* an echo request, but past the total */
	assert_int_equal(inet_icmp4_frag_needed(orig, 21, &gw, 1500, 0, out,
						sizeof(out), &n),
			 INET_ICMP_ABOUT_ERROR);

	/* a later fragment; the first fragment (MF only) is answered */
	sample_ipv4(orig, 100, 17);
	orig[6] = 0x20;
	orig[7] = 0xb9;
	assert_int_equal(inet_icmp4_frag_needed(orig, 100, &gw, 1500, 0, out,
						sizeof(out), &n),
			 INET_ICMP_FRAGMENT);
	orig[6] = 0;
	orig[7] = 1;		/* the smallest later offset: 8 bytes */
	assert_int_equal(inet_icmp4_frag_needed(orig, 100, &gw, 1500, 0, out,
						sizeof(out), &n),
			 INET_ICMP_FRAGMENT);
	orig[6] = 0x20;
	orig[7] = 0;
	assert_int_equal(inet_icmp4_frag_needed(orig, 100, &gw, 1500, 0, out,
						sizeof(out), &n),
			 INET_OK);

	/* to multicast, to limited broadcast, from 0.0.0.0, from loopback */
	sample_ipv4(orig, 100, 17);
	orig[16] = 239;
	assert_int_equal(inet_icmp4_frag_needed(orig, 100, &gw, 1500, 0, out,
						sizeof(out), &n),
			 INET_ICMP_BAD_ADDR);
	memset(orig + 16, 0xff, 4);
	assert_int_equal(inet_icmp4_frag_needed(orig, 100, &gw, 1500, 0, out,
						sizeof(out), &n),
			 INET_ICMP_BAD_ADDR);
	sample_ipv4(orig, 100, 17);
	memset(orig + 12, 0, 4);
	assert_int_equal(inet_icmp4_frag_needed(orig, 100, &gw, 1500, 0, out,
						sizeof(out), &n),
			 INET_ICMP_BAD_ADDR);
	orig[12] = 127;
	assert_int_equal(inet_icmp4_frag_needed(orig, 100, &gw, 1500, 0, out,
						sizeof(out), &n),
			 INET_ICMP_BAD_ADDR);

	/* not IPv4 at all */
	sample_ipv4(orig, 100, 17);
	assert_int_equal(inet_icmp4_frag_needed(orig, 99, &gw, 1500, 0, out,
						sizeof(out), &n),
			 INET_IP_BAD_LEN);
	orig[0] = 0x60;
	assert_int_equal(inet_icmp4_frag_needed(orig, 100, &gw, 1500, 0, out,
						sizeof(out), &n),
			 INET_IP_BAD_VERSION);
}

static void test_icmp6_pkt_too_big(void **state)
{
	static uint8_t orig[1500], out[1400];
	struct in6_addr gw = tv_ip6("2001:db8::fe");
	size_t n = 0;

	(void)state;
	sample_ipv6(orig, 1460, 17);
	memset(out, 0xee, sizeof(out));
	assert_int_equal(inet_icmp6_pkt_too_big(orig, 1500, &gw, 2044, out,
						sizeof(out), &n),
			 INET_OK);
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
	assert_true(tv_icmp6_csum_good(out));

	assert_int_equal(inet_icmp6_pkt_too_big(orig, 1500, &gw, 2044, out,
						1279, &n),
			 INET_NO_ROOM);

	/* a small original is quoted whole, and to a multicast group too */
	sample_ipv6(orig, 100, 17);
	orig[24] = 0xff;
	assert_int_equal(inet_icmp6_pkt_too_big(orig, 140, &gw, 1280, out,
						sizeof(out), &n),
			 INET_OK);
	assert_int_equal(n, 40 + 8 + 140);
	assert_memory_equal(out + 48, orig, 140);
	assert_int_equal(out[44] << 24 | out[45] << 16 | out[46] << 8 | out[47],
			 1280);
	assert_true(tv_icmp6_csum_good(out));
}

static void test_icmp6_refusals(void **state)
{
	uint8_t orig[256], out[512];
	struct in6_addr gw = tv_ip6("2001:db8::fe");
	size_t n = 99;

	(void)state;
	/* about an ICMPv6 error (destination unreachable) */
	sample_ipv6(orig, 64, 58);
	orig[40] = 1;
	assert_int_equal(inet_icmp6_pkt_too_big(orig, 104, &gw, 1280, out,
						sizeof(out), &n),
			 INET_ICMP_ABOUT_ERROR);
	assert_int_equal(n, 0);
	/* the same behind a hop-by-hop header of 8 bytes */
	sample_ipv6(orig, 72, 0);
	orig[40] = 58;
	orig[41] = 0;
	memset(orig + 42, 0, 6);
	orig[48] = 3;		/* time exceeded */
	assert_int_equal(inet_icmp6_pkt_too_big(orig, 112, &gw, 1280, out,
						sizeof(out), &n),
			 INET_ICMP_ABOUT_ERROR);
	orig[48] = 128;		/* echo request behind it: answered */
	assert_int_equal(inet_icmp6_pkt_too_big(orig, 112, &gw, 1280, out,
						sizeof(out), &n),
			 INET_OK);
	/* a later fragment hides the upper layer: answered */
	sample_ipv6(orig, 72, 44);
	orig[40] = 58;
	orig[41] = 0;
	orig[42] = 0x05;
	orig[43] = 0x00;
	orig[48] = 1;
	assert_int_equal(inet_icmp6_pkt_too_big(orig, 112, &gw, 1280, out,
						sizeof(out), &n),
			 INET_OK);

	/* from :: or from a multicast address */
	sample_ipv6(orig, 64, 17);
	memset(orig + 8, 0, 16);
	assert_int_equal(inet_icmp6_pkt_too_big(orig, 104, &gw, 1280, out,
						sizeof(out), &n),
			 INET_ICMP_BAD_ADDR);
	orig[8] = 0xff;
	assert_int_equal(inet_icmp6_pkt_too_big(orig, 104, &gw, 1280, out,
						sizeof(out), &n),
			 INET_ICMP_BAD_ADDR);
	/* payload length past the buffer */
	sample_ipv6(orig, 64, 17);
	assert_int_equal(inet_icmp6_pkt_too_big(orig, 103, &gw, 1280, out,
						sizeof(out), &n),
			 INET_IP_BAD_LEN);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_icmp4_frag_needed),
		cmocka_unit_test(test_icmp4_small_original),
		cmocka_unit_test(test_icmp4_refusals),
		cmocka_unit_test(test_icmp6_pkt_too_big),
		cmocka_unit_test(test_icmp6_refusals),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* RDS/IB's header, CM private data, versions, ACK frame, congestion map
 * and ping/pong: byte vectors written from the kernel's rds.h / ib.h
 * layout (REFERENCE.md), checksums by tv_csum, every refusal. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <cmocka.h>

#include "ulp/rds/rds_wire.h"
#include "tests/unit/vectors.h"

/* seq 0x0102030405060708, ack 0x1112131415161718, len 4096, sport 18634,
 * dport 0x1234, ACK_REQUIRED, credit 0, csum 0x3299, no extension */
static const char hdr_hex[] =
	"01 02 03 04 05 06 07 08 | 11 12 13 14 15 16 17 18 | 00 00 10 00 |"
	"48 ca | 12 34 | 02 | 00 | 00 00 00 00 | 32 99 |"
	"00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00";

static void test_hdr_vector(void **state)
{
	struct rds_header h = {
		.seq = 0x0102030405060708ull, .ack = 0x1112131415161718ull,
		.len = 4096, .sport = 18634, .dport = 0x1234,
		.flags = RDS_FLAG_ACK_REQUIRED, .csum = 0xdead,
	}, d;
	uint8_t want[RDS_HDR_LEN], buf[RDS_HDR_LEN];

	(void)state;
	assert_int_equal(tv_unhex(hdr_hex, want, sizeof(want)), RDS_HDR_LEN);
	assert_int_equal(tv_csum(want, RDS_HDR_LEN, 0), 0);
	rds_hdr_put(buf, &h);
	assert_memory_equal(buf, want, sizeof(want));

	memset(&d, 0xaa, sizeof(d));
	assert_int_equal(rds_hdr_get(want, RDS_HDR_LEN, &d), RDS_DROP_NONE);
	assert_true(d.seq == 0x0102030405060708ull);
	assert_true(d.ack == 0x1112131415161718ull);
	assert_int_equal(d.len, 4096);
	assert_int_equal(d.sport, 18634);
	assert_int_equal(d.dport, 0x1234);
	assert_int_equal(d.flags, RDS_FLAG_ACK_REQUIRED);
	assert_int_equal(d.credit, 0);
	assert_int_equal(d.csum, 0x3299);
	assert_int_equal(d.exthdr[0], RDS_EXTHDR_NONE);
}

static void test_hdr_extension_and_pad(void **state)
{
	struct rds_header h = { .seq = 1, .sport = 1, .credit = 7 }, d;
	uint8_t b[RDS_HDR_LEN];

	(void)state;
	h.exthdr[0] = 1;		/* RDS_EXTHDR_VERSION */
	h.exthdr[4] = 0x31;
	memset(b, 0xff, sizeof(b));
	rds_hdr_put(b, &h);
	assert_int_equal(b[25], 7);
	assert_int_equal(b[26] | b[27] | b[28] | b[29], 0);	/* pad */
	assert_int_equal(b[32], 1);
	assert_int_equal(b[36], 0x31);
	assert_int_equal(tv_csum(b, RDS_HDR_LEN, 0), 0);
	assert_int_equal(rds_hdr_get(b, RDS_HDR_LEN, &d), RDS_DROP_NONE);
	assert_memory_equal(d.exthdr, h.exthdr, RDS_EXTHDR_LEN);
	assert_int_equal(d.credit, 7);
}

static void test_hdr_refused(void **state)
{
	uint8_t b[RDS_SEND_MAX + 1];
	struct rds_header d;
	size_t i;

	(void)state;
	memset(b, 0, sizeof(b));
	tv_unhex(hdr_hex, b, RDS_HDR_LEN);
	assert_int_equal(rds_hdr_get(b, 47, &d), RDS_DROP_SHORT);
	assert_int_equal(rds_hdr_get(b, 0, &d), RDS_DROP_SHORT);
	assert_int_equal(rds_hdr_get(b, RDS_SEND_MAX + 1, &d), RDS_DROP_LONG);
	assert_int_equal(rds_hdr_get(b, RDS_SEND_MAX, &d), RDS_DROP_NONE);
	assert_int_equal(rds_hdr_get(b, 48, &d), RDS_DROP_NONE);
	/* any one bit of the 48 bytes flipped breaks the checksum, except
	 * where it makes h_csum 0 (none) */
	for (i = 0; i < RDS_HDR_LEN * 8; i++) {
		b[i / 8] ^= (uint8_t)(1u << (i % 8));
		if (b[30] || b[31])
			assert_int_equal(rds_hdr_get(b, 48, &d),
					 RDS_DROP_BAD_CSUM);
		b[i / 8] ^= (uint8_t)(1u << (i % 8));
	}
	assert_true(rds_hdr_csum_ok(b));
	/* h_csum 0: not checked, whatever the rest */
	b[30] = b[31] = 0;
	b[5] ^= 0x40;
	assert_true(rds_hdr_csum_ok(b));
	assert_int_equal(rds_hdr_get(b, 48, &d), RDS_DROP_NONE);
	/* 0xffff is not "none" */
	b[30] = b[31] = 0xff;
	assert_int_equal(rds_hdr_get(b, 48, &d), RDS_DROP_BAD_CSUM);
}

/* ACK-only of sequence 42: all zero but h_ack; csum 0xffd5 */
static const char ack_hex[] =
	"00 00 00 00 00 00 00 00 | 00 00 00 00 00 00 00 2a | 00 00 00 00 |"
	"00 00 | 00 00 | 00 | 00 | 00 00 00 00 | ff d5 |"
	"00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00";

static void test_ack_frame(void **state)
{
	uint8_t want[RDS_HDR_LEN], b[RDS_HDR_LEN];
	struct rds_header d;

	(void)state;
	tv_unhex(ack_hex, want, sizeof(want));
	rds_ack_put(b, 42);
	assert_memory_equal(b, want, sizeof(b));
	assert_int_equal(rds_hdr_get(b, 48, &d), RDS_DROP_NONE);
	assert_true(d.ack == 42);
	assert_true(rds_hdr_is_ack(&d, 0));
	assert_false(rds_hdr_is_ack(&d, 1));	/* ports 0 with data: not */
	d.dport = 1;
	assert_false(rds_hdr_is_ack(&d, 0));
	d.dport = 0;
	d.sport = 1;
	assert_false(rds_hdr_is_ack(&d, 0));
}

static void test_drop_names(void **state)
{
	(void)state;
	assert_string_equal(rds_drop_name(RDS_DROP_NONE), "none");
	assert_string_equal(rds_drop_name(RDS_DROP_SHORT), "short");
	assert_string_equal(rds_drop_name(RDS_DROP_LONG), "long");
	assert_string_equal(rds_drop_name(RDS_DROP_BAD_CSUM), "bad_csum");
	assert_string_equal(rds_drop_name(RDS_DROP_BAD_LEN), "bad_len");
	assert_string_equal(rds_drop_name(RDS_DROP_FRAG_MISMATCH),
			    "frag_mismatch");
	assert_string_equal(rds_drop_name(RDS_DROP_TOO_BIG), "too_big");
	assert_string_equal(rds_drop_name(RDS_DROP_MAX), "unknown");
	assert_string_equal(rds_drop_name((enum rds_drop)-1), "unknown");
}

/* IPv4 private data: 10.0.0.1 -> 10.0.0.2, 3.1, mask 0x0003, tos 5,
 * ack_seq 0x0102030405060708, credit 0x11223344 */
static const char priv4_hex[] =
	"0a 00 00 01 | 0a 00 00 02 | 03 | 01 | 00 03 | 05 | 00 | 00 00 |"
	"01 02 03 04 05 06 07 08 | 11 22 33 44 | 00 00 00 00";

static void test_priv4_vector(void **state)
{
	uint8_t want[RDS_IB_PRIV4_LEN], b[64];
	struct rds_ib_priv p, d;

	(void)state;
	assert_int_equal(tv_unhex(priv4_hex, want, sizeof(want)), 32);
	memset(&p, 0, sizeof(p));
	p.saddr.family = p.daddr.family = AF_INET;
	p.saddr.v4 = tv_ip4("10.0.0.1");
	p.daddr.v4 = tv_ip4("10.0.0.2");
	p.major = 3;
	p.minor = 1;
	p.minor_mask = RDS_IB_MINOR_MASK;
	p.tos = 5;
	p.ack_seq = 0x0102030405060708ull;
	p.credit = 0x11223344;
	memset(b, 0xee, sizeof(b));
	assert_int_equal(rds_ib_priv_build(b, sizeof(b), &p), 32);
	assert_memory_equal(b, want, 32);
	assert_int_equal(b[32], 0xee);		/* nothing past 32 */

	/* rdma_cm hands 56 bytes, zero-padded */
	memset(b, 0, sizeof(b));
	memcpy(b, want, 32);
	assert_int_equal(rds_ib_priv_parse(b, 56, AF_INET, &d), 0);
	assert_true(inet_addr_equal(&d.saddr, &p.saddr));
	assert_true(inet_addr_equal(&d.daddr, &p.daddr));
	assert_int_equal(d.major, 3);
	assert_int_equal(d.minor, 1);
	assert_int_equal(d.minor_mask, 3);
	assert_int_equal(d.tos, 5);
	assert_true(d.ack_seq == 0x0102030405060708ull);
	assert_int_equal(d.credit, 0x11223344);
}

/* IPv6: fd00::1 -> fd00::2, 3.1 mask 3, ack_seq 9, credit 0 */
static const char priv6_hex[] =
	"fd 00 00 00 00 00 00 00 00 00 00 00 00 00 00 01 |"
	"fd 00 00 00 00 00 00 00 00 00 00 00 00 00 00 02 |"
	"03 | 01 | 00 03 | 00 | 00 | 00 00 |"
	"00 00 00 00 00 00 00 09 | 00 00 00 00 | 00 00 00 00";

static void test_priv6_vector(void **state)
{
	uint8_t want[RDS_IB_PRIV6_LEN], b[RDS_IB_PRIV6_LEN];
	struct rds_ib_priv p, d;

	(void)state;
	assert_int_equal(tv_unhex(priv6_hex, want, sizeof(want)), 56);
	memset(&p, 0, sizeof(p));
	p.saddr.family = p.daddr.family = AF_INET6;
	p.saddr.v6 = tv_ip6("fd00::1");
	p.daddr.v6 = tv_ip6("fd00::2");
	p.major = 3;
	p.minor = 1;
	p.minor_mask = 3;
	p.ack_seq = 9;
	assert_int_equal(rds_ib_priv_build(b, sizeof(b), &p), 56);
	assert_memory_equal(b, want, 56);
	assert_int_equal(rds_ib_priv_parse(want, 56, AF_INET6, &d), 0);
	assert_true(inet_addr_equal(&d.saddr, &p.saddr));
	assert_true(inet_addr_equal(&d.daddr, &p.daddr));
	assert_true(d.ack_seq == 9);
	assert_int_equal(d.major, 3);
}

static void test_priv_refused(void **state)
{
	uint8_t b[RDS_IB_PRIV6_LEN];
	struct rds_ib_priv p, d;

	(void)state;
	memset(&p, 0, sizeof(p));
	memset(b, 0, sizeof(b));
	p.saddr.family = AF_INET;
	p.daddr.family = AF_INET6;
	errno = 0;
	assert_int_equal(rds_ib_priv_build(b, sizeof(b), &p), -1);
	assert_int_equal(errno, EINVAL);
	p.daddr.family = AF_INET;
	assert_int_equal(rds_ib_priv_build(b, 31, &p), -1);
	assert_int_equal(rds_ib_priv_build(b, 32, &p), 32);
	p.saddr.family = p.daddr.family = AF_INET6;
	assert_int_equal(rds_ib_priv_build(b, 55, &p), -1);
	p.saddr.family = p.daddr.family = 0;
	assert_int_equal(rds_ib_priv_build(b, sizeof(b), &p), -1);

	assert_int_equal(rds_ib_priv_parse(b, 31, AF_INET, &d), -1);
	assert_int_equal(rds_ib_priv_parse(b, 55, AF_INET6, &d), -1);
	assert_int_equal(rds_ib_priv_parse(b, 56, AF_UNIX, &d), -1);
	assert_int_equal(errno, EINVAL);
}

/* A REQ's private data with the given version fields. */
static size_t req(uint8_t *b, int family, uint8_t maj, uint8_t min,
		  uint16_t mask)
{
	size_t cmn = family == AF_INET ? 8 : 32;

	memset(b, 0, RDS_IB_PRIV6_LEN);
	b[cmn] = maj;
	b[cmn + 1] = min;
	b[cmn + 2] = (uint8_t)(mask >> 8);
	b[cmn + 3] = (uint8_t)mask;
	return family == AF_INET ? 32 : 56;
}

static void version_cases(int family)
{
	uint8_t b[RDS_IB_PRIV6_LEN];
	size_t n;

	/* what the kernel's active side proposes */
	n = req(b, family, 3, 1, 3);
	assert_int_equal(rds_ib_version_accept(b, n, family), 0x0301);
	n = req(b, family, 3, 1, 0);
	assert_int_equal(rds_ib_version_accept(b, n, family), 0x0301);
	n = req(b, family, 3, 0, 3);		/* 3.0: refused */
	assert_int_equal(rds_ib_version_accept(b, n, family), 0);
	n = req(b, family, 3, 2, 0);
	assert_int_equal(rds_ib_version_accept(b, n, family), 0);
	n = req(b, family, 2, 0, 0);
	assert_int_equal(rds_ib_version_accept(b, n, family), 0);
	n = req(b, family, 5, 1, 3);
	assert_int_equal(rds_ib_version_accept(b, n, family), 0);
	/* 4.x: the minor from the highest common mask bit */
	n = req(b, family, 4, 9, 1);
	assert_int_equal(rds_ib_version_accept(b, n, family), 0x0400);
	n = req(b, family, 4, 0, 3);
	assert_int_equal(rds_ib_version_accept(b, n, family), 0x0401);
	n = req(b, family, 4, 0, 2);
	assert_int_equal(rds_ib_version_accept(b, n, family), 0x0401);
	n = req(b, family, 4, 0, 0xfff3);
	assert_int_equal(rds_ib_version_accept(b, n, family), 0x0401);
	n = req(b, family, 4, 1, 4);		/* no common bit */
	assert_int_equal(rds_ib_version_accept(b, n, family), 0);
	n = req(b, family, 4, 1, 0);
	assert_int_equal(rds_ib_version_accept(b, n, family), 0);
	/* major 0 and short data: an old peer, taken as 4.0 */
	n = req(b, family, 0, 1, 3);
	assert_int_equal(rds_ib_version_accept(b, n, family), 0x0400);
	n = req(b, family, 3, 1, 3);
	assert_int_equal(rds_ib_version_accept(b, n - 1, family), 0x0400);
	assert_int_equal(rds_ib_version_accept(b, 1, family), 0x0400);
	/* none at all: refused */
	assert_int_equal(rds_ib_version_accept(b, 0, family), 0);
}

static void test_version_accept(void **state)
{
	uint8_t b[RDS_IB_PRIV6_LEN];

	(void)state;
	version_cases(AF_INET);
	version_cases(AF_INET6);
	/* the v4 rule's offsets read in a v6 REQ are not the version */
	req(b, AF_INET6, 3, 1, 3);
	b[8] = 3;
	b[9] = 0;
	assert_int_equal(rds_ib_version_accept(b, 56, AF_INET6), 0x0301);
	assert_int_equal(rds_ib_version_accept(b, 56, AF_UNIX), 0);
}

static void test_version_confirm(void **state)
{
	uint8_t b[RDS_IB_PRIV6_LEN];
	size_t n;

	(void)state;
	n = req(b, AF_INET, 3, 1, 3);
	assert_int_equal(rds_ib_version_confirm(b, n, AF_INET, 0x0301),
			 0x0301);
	n = req(b, AF_INET, 4, 1, 3);
	assert_int_equal(rds_ib_version_confirm(b, n, AF_INET, 0x0301),
			 0x0401);
	n = req(b, AF_INET, 3, 0, 3);		/* below 3.1: drop */
	assert_int_equal(rds_ib_version_confirm(b, n, AF_INET, 0x0301), 0);
	n = req(b, AF_INET6, 2, 9, 0);
	assert_int_equal(rds_ib_version_confirm(b, n, AF_INET6, 0x0301), 0);
	/* no major, or short: what we proposed stands */
	n = req(b, AF_INET, 0, 0, 0);
	assert_int_equal(rds_ib_version_confirm(b, n, AF_INET, 0x0301),
			 0x0301);
	n = req(b, AF_INET6, 3, 0, 0);
	assert_int_equal(rds_ib_version_confirm(b, 55, AF_INET6, 0x0301),
			 0x0301);
	assert_int_equal(rds_ib_version_confirm(b, 0, AF_INET, 0x0300), 0);
}

static void test_cong_map(void **state)
{
	static struct rds_cong_map m, n;
	struct rds_header h;
	uint8_t b[RDS_HDR_LEN], want[RDS_HDR_LEN];
	/* map update, ack 0: len 8192, flags 0x01; csum 0xdeff */
	static const char cong_hex[] =
		"00 00 00 00 00 00 00 00 | 00 00 00 00 00 00 00 00 |"
		"00 00 20 00 | 00 00 | 00 00 | 01 | 00 | 00 00 00 00 | de ff |"
		"00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00";

	(void)state;
	memset(&m, 0, sizeof(m));
	rds_cong_set(&m, 0);
	rds_cong_set(&m, 9);
	rds_cong_set(&m, 18634);
	rds_cong_set(&m, 65535);
	assert_int_equal(m.bits[0], 0x01);
	assert_int_equal(m.bits[1], 0x02);
	assert_int_equal(m.bits[18634 / 8], 1 << (18634 % 8));
	assert_int_equal(m.bits[8191], 0x80);
	assert_true(rds_cong_test(&m, 9));
	assert_false(rds_cong_test(&m, 8));
	assert_false(rds_cong_test(&m, 10));
	rds_cong_clear(&m, 9);
	assert_int_equal(m.bits[1], 0);
	assert_false(rds_cong_test(&m, 9));

	/* a port set -> clear frees; clear -> set does not */
	n = m;
	rds_cong_set(&n, 100);
	assert_int_equal(rds_cong_update(&m, n.bits), 0);
	assert_true(rds_cong_test(&m, 100));
	rds_cong_clear(&n, 65535);
	assert_int_equal(rds_cong_update(&m, n.bits), 1);
	assert_false(rds_cong_test(&m, 65535));
	assert_int_equal(rds_cong_update(&m, n.bits), 0);

	tv_unhex(cong_hex, want, sizeof(want));
	rds_cong_hdr(&h, 0);
	rds_hdr_put(b, &h);
	assert_memory_equal(b, want, sizeof(b));
	assert_true(rds_hdr_is_cong(&h));
	h.flags |= RDS_FLAG_ACK_REQUIRED;	/* exactly 0x01 only */
	assert_false(rds_hdr_is_cong(&h));
	h.flags = 0;
	assert_false(rds_hdr_is_cong(&h));
}

/* The loop transport's addresses: 127.0.0.0/8 and ::1, nothing else */
static void test_loopback(void **state)
{
	static const char *const yes[] = { "127.0.0.1", "127.0.0.2",
					   "127.255.255.254", "::1" };
	static const char *const no[] = { "126.255.255.255", "128.0.0.1",
					  "10.0.0.127", "::2", "::",
					  "::ffff:127.0.0.1", "fe80::1" };
	struct inet_addr a;
	char err[64];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		assert_int_equal(inet_addr_parse(yes[i], &a, err,
						 sizeof(err)), 0);
		assert_true(rds_addr_loopback(&a));
	}
	for (i = 0; i < sizeof(no) / sizeof(no[0]); i++) {
		assert_int_equal(inet_addr_parse(no[i], &a, err,
						 sizeof(err)), 0);
		assert_false(rds_addr_loopback(&a));
	}
	memset(&a, 0, sizeof(a));	/* no family */
	a.raw[0] = 127;
	assert_false(rds_addr_loopback(&a));
}

static void test_ping_pong(void **state)
{
	struct rds_header h, pong;

	(void)state;
	memset(&h, 0, sizeof(h));
	h.sport = 4000;
	h.dport = 0;
	assert_int_equal(rds_msg_kind(&h), RDS_MSG_PING);
	rds_pong_hdr(&pong, &h, 77);
	assert_int_equal(pong.sport, 0);
	assert_int_equal(pong.dport, 4000);
	assert_true(pong.seq == 77);
	assert_int_equal(pong.len, 0);
	assert_int_equal(pong.flags, 0);
	/* the pong reaches the pinging socket as data */
	assert_int_equal(rds_msg_kind(&pong), RDS_MSG_DATA);

	h.sport = 0;
	assert_int_equal(rds_msg_kind(&h), RDS_MSG_PING_NULL);
	h.sport = RDS_PROBE_PORT;		/* handshake ping */
	assert_int_equal(rds_msg_kind(&h), RDS_MSG_PING);
	h.sport = 0;
	h.dport = RDS_PROBE_PORT;
	assert_int_equal(rds_msg_kind(&h), RDS_MSG_HS_PONG);
	h.sport = 5;
	assert_int_equal(rds_msg_kind(&h), RDS_MSG_DATA);
	h.sport = 5;
	h.dport = 6;
	assert_int_equal(rds_msg_kind(&h), RDS_MSG_DATA);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hdr_vector),
		cmocka_unit_test(test_hdr_extension_and_pad),
		cmocka_unit_test(test_hdr_refused),
		cmocka_unit_test(test_ack_frame),
		cmocka_unit_test(test_drop_names),
		cmocka_unit_test(test_priv4_vector),
		cmocka_unit_test(test_priv6_vector),
		cmocka_unit_test(test_priv_refused),
		cmocka_unit_test(test_version_accept),
		cmocka_unit_test(test_version_confirm),
		cmocka_unit_test(test_cong_map),
		cmocka_unit_test(test_ping_pong),
		cmocka_unit_test(test_loopback),
	};

	return cmocka_run_group_tests_name("rds_wire", tests, NULL, NULL);
}

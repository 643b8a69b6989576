// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* SDP's BSDH, Hello and HelloAck: byte vectors written from OFED's sdp.h
 * layout (REFERENCE.md), round trips and every refusal. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <cmocka.h>

#include "ulp/sdp/sdp_wire.h"
#include "tests/unit/vectors.h"

static const char bsdh_hex[] =
	"ff 03 | 00 40 | 00 00 01 2c | 12 34 56 78 | 9a bc de f0";

static void test_bsdh_vector(void **state)
{
	struct sdp_bsdh h = {
		.mid = SDP_MID_DATA, .flags = 3, .bufs = 64, .len = 300,
		.mseq = 0x12345678, .mseq_ack = 0x9abcdef0,
	}, d;
	uint8_t want[SDP_BSDH_LEN], buf[SDP_BSDH_LEN];

	(void)state;
	assert_int_equal(tv_unhex(bsdh_hex, want, sizeof(want)), 16);
	sdp_bsdh_put(buf, &h);
	assert_memory_equal(buf, want, sizeof(want));

	/* a message of 300 bytes: only its first 16 are read */
	memset(&d, 0, sizeof(d));
	assert_int_equal(sdp_bsdh_get(want, 300, &d), 0);
	assert_int_equal(d.mid, SDP_MID_DATA);
	assert_int_equal(d.flags, 3);
	assert_int_equal(d.bufs, 64);
	assert_int_equal(d.len, 300);
	assert_int_equal(d.mseq, 0x12345678);
	assert_int_equal(d.mseq_ack, 0x9abcdef0);
}

static void test_bsdh_refused(void **state)
{
	uint8_t b[SDP_BSDH_LEN];
	struct sdp_bsdh h = { .mid = SDP_MID_DATA, .len = 16 }, d;

	(void)state;
	sdp_bsdh_put(b, &h);
	assert_int_equal(sdp_bsdh_get(b, 16, &d), 0);
	errno = 0;
	assert_int_equal(sdp_bsdh_get(b, 15, &d), -1);	/* short */
	assert_int_equal(errno, EINVAL);
	assert_int_equal(sdp_bsdh_get(b, 0, &d), -1);
	assert_int_equal(sdp_bsdh_get(b, 17, &d), -1);	/* len != bytes */
	h.len = 15;
	sdp_bsdh_put(b, &h);
	assert_int_equal(sdp_bsdh_get(b, 16, &d), -1);
	h.len = 0xffffffff;
	sdp_bsdh_put(b, &h);
	assert_int_equal(sdp_bsdh_get(b, 16, &d), -1);
}

static void test_mid_names(void **state)
{
	(void)state;
	assert_string_equal(sdp_mid_name(SDP_MID_DATA), "Data");
	assert_string_equal(sdp_mid_name(SDP_MID_DISCONN), "DisConn");
	assert_string_equal(sdp_mid_name(SDP_MID_ABORT), "AbortConn");
	assert_string_equal(sdp_mid_name(SDP_MID_HELLO), "Hello");
	assert_string_equal(sdp_mid_name(SDP_MID_HELLO_ACK), "HelloAck");
	assert_string_equal(sdp_mid_name(SDP_MID_CHRCVBUF_ACK), "ChRcvBufAck");
	assert_string_equal(sdp_mid_name(SDP_MID_SRCAVAIL), "SrcAvail");
	assert_string_equal(sdp_mid_name(0x05), "unknown");
	assert_string_equal(sdp_mid_name(0x80), "unknown");
}

/* Hello, IPv4 10.1.0.2:40000 -> 10.1.0.1, 64 buffers of 32 KiB + BSDH */
static const char hello4_hex[] =
	"00 00 00 40 00 00 00 5c 00 00 00 00 00 00 00 00 |"
	"22 | 42 | 00 | 08 | 00 00 80 10 | 00 00 80 10 | 9c 40 | 00 00 |"
	"00 00 00 00 00 00 00 00 00 00 00 00 0a 01 00 02 |"
	"00 00 00 00 00 00 00 00 00 00 00 00 0a 01 00 01 |"
	"00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 "
	"00 00 00 00 00 00 00 00 00 00 00 00";

static void hello4(struct sdp_hello *h)
{
	struct in_addr s = tv_ip4("10.1.0.2"), d = tv_ip4("10.1.0.1");

	memset(h, 0, sizeof(*h));
	h->bsdh.bufs = 64;
	h->majv_minv = SDP_MAJV_MINV;
	h->ipv = 4;
	h->caps = 2;
	h->max_adverts = 8;
	h->desremrcvsz = 32768 + 16;
	h->localrcvsz = 32768 + 16;
	h->port = 40000;
	inet_addr_v4(&h->src, &s);
	inet_addr_v4(&h->dst, &d);
}

static void test_hello_v4_vector(void **state)
{
	uint8_t want[SDP_HELLO_LEN], buf[SDP_HELLO_LEN + 8];
	struct sdp_hello h, d;

	(void)state;
	assert_int_equal(tv_unhex(hello4_hex, want, sizeof(want)),
			 SDP_HELLO_LEN);
	hello4(&h);
	h.bsdh.mid = 0x77;	/* the builder sets mid and len */
	h.bsdh.len = 3;
	memset(buf, 0xaa, sizeof(buf));
	assert_int_equal(sdp_hello_build(buf, sizeof(buf), &h),
			 SDP_HELLO_LEN);
	assert_memory_equal(buf, want, SDP_HELLO_LEN);
	assert_int_equal(buf[SDP_HELLO_LEN], 0xaa);	/* not past it */

	memset(&d, 0xee, sizeof(d));
	assert_int_equal(sdp_hello_parse(want, sizeof(want), &d), 0);
	assert_int_equal(d.bsdh.mid, SDP_MID_HELLO);
	assert_int_equal(d.bsdh.len, 92);
	assert_int_equal(d.bsdh.bufs, 64);
	assert_int_equal(d.bsdh.mseq, 0);
	assert_int_equal(d.majv_minv, 0x22);
	assert_int_equal(d.ipv, 4);
	assert_int_equal(d.caps, 2);
	assert_int_equal(d.max_adverts, 8);
	assert_int_equal(d.desremrcvsz, 32784);
	assert_int_equal(d.localrcvsz, 32784);
	assert_int_equal(d.port, 40000);
	assert_true(inet_addr_equal(&d.src, &h.src));
	assert_true(inet_addr_equal(&d.dst, &h.dst));
}

/* The rdma_cm profile's Hello: the full one's first 56 bytes but for the
 * BSDH len and dst_addr's slot (zero); parsed, dst is zero. */
static void test_hello_cm(void **state)
{
	uint8_t want[SDP_HELLO_LEN], buf[SDP_HELLO_LEN];
	struct sdp_hello h, d;

	(void)state;
	assert_int_equal(tv_unhex(hello4_hex, want, sizeof(want)),
			 SDP_HELLO_LEN);
	hello4(&h);
	memset(buf, 0xaa, sizeof(buf));
	assert_int_equal(sdp_hello_build_cm(buf, SDP_HELLO_CM_LEN - 1, &h), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(sdp_hello_build_cm(buf, sizeof(buf), &h),
			 SDP_HELLO_CM_LEN);
	assert_memory_equal(buf, want, 4);		/* mid, flags, bufs */
	assert_int_equal(buf[7], SDP_HELLO_CM_LEN);	/* BSDH len */
	assert_memory_equal(buf + 8, want + 8, 40);	/* to src_addr's end */
	for (int i = 48; i < SDP_HELLO_CM_LEN; i++)
		assert_int_equal(buf[i], 0);
	assert_int_equal(buf[SDP_HELLO_CM_LEN], 0xaa);

	memset(&d, 0xee, sizeof(d));
	assert_int_equal(sdp_hello_parse_cm(buf, SDP_HELLO_CM_LEN, &d), 0);
	assert_int_equal(d.bsdh.len, SDP_HELLO_CM_LEN);
	assert_int_equal(d.port, 40000);
	assert_int_equal(d.localrcvsz, 32784);
	assert_true(inet_addr_equal(&d.src, &h.src));
	assert_int_equal(d.dst.family, AF_INET);
	assert_int_equal(d.dst.v4.s_addr, 0);
	/* zero-padded as rdma_cm hands it over; and a full Hello too */
	memset(buf + SDP_HELLO_CM_LEN, 0, SDP_HELLO_LEN - SDP_HELLO_CM_LEN);
	assert_int_equal(sdp_hello_parse_cm(buf, SDP_HELLO_LEN, &d), 0);
	assert_int_equal(sdp_hello_parse_cm(want, SDP_HELLO_LEN, &d), 0);
	/* shorter than its fields: refused; the soft parser wants 64 */
	assert_int_equal(sdp_hello_parse_cm(buf, SDP_HELLO_CM_FIELDS_LEN - 1,
					    &d), -1);
	assert_int_equal(sdp_hello_parse(buf, SDP_HELLO_CM_LEN, &d), -1);
}

static void test_hello_v6_round_trip(void **state)
{
	struct in6_addr s = tv_ip6("fd00::2"), dd = tv_ip6("fd00::1:1");
	uint8_t buf[256];
	struct sdp_hello h, d;

	(void)state;
	hello4(&h);
	h.ipv = 6;
	h.caps = 0xf;
	inet_addr_v6(&h.src, &s);
	inet_addr_v6(&h.dst, &dd);
	assert_int_equal(sdp_hello_build(buf, sizeof(buf), &h), 92);
	assert_int_equal(buf[17], 0x6f);
	assert_memory_equal(buf + 32, s.s6_addr, 16);
	assert_memory_equal(buf + 48, dd.s6_addr, 16);
	/* rdma_cm's zero padding past 92, and the fields alone, both parse */
	assert_int_equal(sdp_hello_parse(buf, 256, &d), 0);
	assert_int_equal(sdp_hello_parse(buf, SDP_HELLO_FIELDS_LEN, &d), 0);
	assert_int_equal(d.ipv, 6);
	assert_int_equal(d.caps, 0xf);
	assert_true(inet_addr_equal(&d.src, &h.src));
	assert_true(inet_addr_equal(&d.dst, &h.dst));
}

static void test_hello_build_refused(void **state)
{
	struct in6_addr s6 = tv_ip6("fd00::2");
	uint8_t buf[SDP_HELLO_LEN];
	struct sdp_hello h;

	(void)state;
	hello4(&h);
	errno = 0;
	assert_int_equal(sdp_hello_build(buf, SDP_HELLO_LEN - 1, &h), -1);
	assert_int_equal(errno, EINVAL);
	hello4(&h);
	inet_addr_v6(&h.src, &s6);		/* family against ipv */
	assert_int_equal(sdp_hello_build(buf, sizeof(buf), &h), -1);
	hello4(&h);
	h.dst.family = 0;
	assert_int_equal(sdp_hello_build(buf, sizeof(buf), &h), -1);
	hello4(&h);
	h.ipv = 5;
	assert_int_equal(sdp_hello_build(buf, sizeof(buf), &h), -1);
	hello4(&h);
	h.caps = 0x10;
	assert_int_equal(sdp_hello_build(buf, sizeof(buf), &h), -1);
	hello4(&h);
	h.max_adverts = 0;
	assert_int_equal(sdp_hello_build(buf, sizeof(buf), &h), -1);
	hello4(&h);
	h.localrcvsz = SDP_MAX_RCVSZ + 1;
	assert_int_equal(sdp_hello_build(buf, sizeof(buf), &h), -1);
	hello4(&h);
	h.desremrcvsz = 16;
	assert_int_equal(sdp_hello_build(buf, sizeof(buf), &h), -1);
}

/* one byte of the vector changed must be refused */
static void hello_poke(size_t off, uint8_t v)
{
	uint8_t b[SDP_HELLO_LEN];
	struct sdp_hello d;

	tv_unhex(hello4_hex, b, sizeof(b));
	b[off] = v;
	errno = 0;
	if (sdp_hello_parse(b, sizeof(b), &d) != -1 || errno != EINVAL)
		fail_msg("hello byte %zu = 0x%02x parsed", off, v);
}

static void test_hello_parse_refused(void **state)
{
	uint8_t b[SDP_HELLO_LEN];
	struct sdp_hello d;

	(void)state;
	tv_unhex(hello4_hex, b, sizeof(b));
	assert_int_equal(sdp_hello_parse(b, SDP_HELLO_FIELDS_LEN, &d), 0);
	assert_int_equal(sdp_hello_parse(b, SDP_HELLO_FIELDS_LEN - 1, &d),
			 -1);					/* short */
	assert_int_equal(sdp_hello_parse(b, 0, &d), -1);
	hello_poke(0, SDP_MID_HELLO_ACK);			/* MID */
	hello_poke(0, SDP_MID_DATA);
	hello_poke(7, 0x5d);					/* len 93 */
	hello_poke(7, 0x3f);					/* len 63 */
	hello_poke(4, 0x01);					/* len huge */
	hello_poke(16, 0x12);					/* version 1 */
	hello_poke(16, 0x32);					/* version 3 */
	hello_poke(17, 0x02);					/* ipv 0 */
	hello_poke(17, 0x52);					/* ipv 5 */
	hello_poke(19, 0x00);					/* adverts 0 */
	hello_poke(22, 0x00);				/* desremrcvsz 16 */
	hello_poke(21, 0x10);				/* over 1 MiB */
	hello_poke(26, 0x00);				/* localrcvsz 16 */
	hello_poke(25, 0x10);				/* over 1 MiB */
}

static void test_hello_len_bounds(void **state)
{
	uint8_t b[SDP_HELLO_LEN];
	struct sdp_hello d;

	(void)state;
	/* 1 MiB exactly and 17 bytes are in range */
	tv_unhex(hello4_hex, b, sizeof(b));
	b[24] = 0x00; b[25] = 0x10; b[26] = 0x00; b[27] = 0x00;
	assert_int_equal(sdp_hello_parse(b, sizeof(b), &d), 0);
	assert_int_equal(d.localrcvsz, SDP_MAX_RCVSZ);
	b[24] = 0x00; b[25] = 0x00; b[26] = 0x00; b[27] = 0x11;
	assert_int_equal(sdp_hello_parse(b, sizeof(b), &d), 0);
	assert_int_equal(d.localrcvsz, 17);
	b[7] = SDP_HELLO_FIELDS_LEN;		/* a shortened len is taken */
	assert_int_equal(sdp_hello_parse(b, sizeof(b), &d), 0);
}

/* HelloAck: 64 buffers, 32 KiB + BSDH, ext_max_adverts 1, ipv_cap 0 */
static const char hello_ack_hex[] =
	"01 00 00 40 00 00 00 c4 00 00 00 00 00 00 00 00 |"
	"22 | 00 | 00 | 01 | 00 00 80 10";

static void test_hello_ack_vector(void **state)
{
	uint8_t want[SDP_HELLO_ACK_LEN], buf[SDP_HELLO_ACK_LEN + 4];
	struct sdp_hello_ack h = {
		.bsdh = { .bufs = 64, .mseq = 0 },
		.majv_minv = SDP_MAJV_MINV,
		.ext_max_adverts = 1,
		.actrcvsz = 32784,
	}, d;

	(void)state;
	assert_int_equal(tv_unhex(hello_ack_hex, want, sizeof(want)), 24);
	memset(buf, 0xaa, sizeof(buf));
	assert_int_equal(sdp_hello_ack_build(buf, sizeof(buf), &h), 196);
	assert_memory_equal(buf, want, SDP_HELLO_ACK_LEN);	/* 0-padded */
	assert_int_equal(buf[SDP_HELLO_ACK_LEN], 0xaa);
	assert_int_equal(sdp_hello_ack_build(buf, 195, &h), -1);
	assert_int_equal(errno, EINVAL);

	memset(&d, 0xee, sizeof(d));
	assert_int_equal(sdp_hello_ack_parse(want, 24, &d), 0);
	assert_int_equal(d.bsdh.mid, SDP_MID_HELLO_ACK);
	assert_int_equal(d.bsdh.len, 196);
	assert_int_equal(d.bsdh.bufs, 64);
	assert_int_equal(d.majv_minv, 0x22);
	assert_int_equal(d.ipv, 0);
	assert_int_equal(d.caps, 0);
	assert_int_equal(d.ext_max_adverts, 1);
	assert_int_equal(d.actrcvsz, 32784);
	assert_int_equal(sdp_hello_ack_parse(want, 196, &d), 0);

	h.ipv = 6;
	h.caps = 1;
	assert_int_equal(sdp_hello_ack_build(buf, sizeof(buf), &h), 196);
	assert_int_equal(buf[17], 0x61);
	assert_int_equal(sdp_hello_ack_parse(buf, 196, &d), 0);
	assert_int_equal(d.ipv, 6);
	assert_int_equal(d.caps, 1);
}

static void hello_ack_poke(size_t off, uint8_t v)
{
	uint8_t b[SDP_HELLO_ACK_LEN];
	struct sdp_hello_ack d;

	tv_unhex(hello_ack_hex, b, sizeof(b));
	b[off] = v;
	errno = 0;
	if (sdp_hello_ack_parse(b, sizeof(b), &d) != -1 || errno != EINVAL)
		fail_msg("hello ack byte %zu = 0x%02x parsed", off, v);
}

/* ibgw's REJ private data: "IBGW", format 1, the reason's code. */
static void test_rej_vector(void **state)
{
	static const struct {
		int err;
		const char *hex;
	} v[] = {
		{ ECONNREFUSED, "49 42 47 57 | 01 | 01 | 00 00" },
		{ EHOSTUNREACH, "49 42 47 57 | 01 | 02 | 00 00" },
		{ ENETUNREACH, "49 42 47 57 | 01 | 03 | 00 00" },
		{ ETIMEDOUT, "49 42 47 57 | 01 | 04 | 00 00" },
		{ EACCES, "49 42 47 57 | 01 | 05 | 00 00" },
		{ EPERM, "49 42 47 57 | 01 | 06 | 00 00" },
		{ ENETDOWN, "49 42 47 57 | 01 | 07 | 00 00" },
		{ EHOSTDOWN, "49 42 47 57 | 01 | 08 | 00 00" },
		{ ENOBUFS, "49 42 47 57 | 01 | 01 | 00 00" },	/* refused */
	};
	uint8_t want[SDP_REJ_LEN], b[148];	/* a REJ's private data */
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		assert_int_equal(tv_unhex(v[i].hex, want, sizeof(want)), 8);
		memset(b, 0x5a, sizeof(b));
		assert_int_equal(sdp_rej_build(b, sizeof(b), v[i].err), 8);
		assert_memory_equal(b, want, sizeof(want));
		assert_int_equal(b[8], 0x5a);		/* 8 bytes only */
		/* as a CM hands it over: zero-padded to the REJ's 148 */
		memset(b + 8, 0, sizeof(b) - 8);
		assert_int_equal(sdp_rej_parse(b, sizeof(b)),
				 v[i].err == ENOBUFS ? ECONNREFUSED : v[i].err);
	}
}

static void test_rej_refused(void **state)
{
	uint8_t b[SDP_REJ_LEN];

	(void)state;
	assert_int_equal(sdp_rej_build(b, 7, ETIMEDOUT), -1);
	assert_int_equal(errno, EINVAL);
	sdp_rej_build(b, sizeof(b), ETIMEDOUT);
	assert_int_equal(sdp_rej_parse(b, 7), -1);		/* short */
	assert_int_equal(errno, EINVAL);
	assert_int_equal(sdp_rej_parse(NULL, 0), -1);
	b[0] = 'i';						/* magic */
	assert_int_equal(sdp_rej_parse(b, sizeof(b)), -1);
	sdp_rej_build(b, sizeof(b), ETIMEDOUT);
	b[4] = 2;						/* format */
	assert_int_equal(sdp_rej_parse(b, sizeof(b)), -1);
	b[4] = 1;
	b[5] = 0;						/* code */
	assert_int_equal(sdp_rej_parse(b, sizeof(b)), -1);
	b[5] = 9;			/* a code of a later gateway's */
	assert_int_equal(sdp_rej_parse(b, sizeof(b)), -1);
	memset(b, 0, sizeof(b));	/* rdma_cm's zeros: no reason */
	assert_int_equal(sdp_rej_parse(b, sizeof(b)), -1);
}

static void test_hello_ack_refused(void **state)
{
	uint8_t b[SDP_HELLO_ACK_LEN];
	struct sdp_hello_ack d, h = {
		.majv_minv = SDP_MAJV_MINV, .actrcvsz = 32784,
	};

	(void)state;
	tv_unhex(hello_ack_hex, b, sizeof(b));
	assert_int_equal(sdp_hello_ack_parse(b, 23, &d), -1);	/* short */
	hello_ack_poke(0, SDP_MID_HELLO);
	hello_ack_poke(7, 0xc5);				/* len 197 */
	hello_ack_poke(7, 0x17);				/* len 23 */
	hello_ack_poke(16, 0x11);
	hello_ack_poke(17, 0x40 + 0x50);			/* ipv 9 */
	hello_ack_poke(17, 0x50);				/* ipv 5 */
	hello_ack_poke(22, 0x00);				/* 16 */
	hello_ack_poke(21, 0x10);				/* > 1 MiB */
	/* ext_max_adverts 0 is a HelloAck's right */
	b[19] = 0;
	assert_int_equal(sdp_hello_ack_parse(b, sizeof(b), &d), 0);

	h.ipv = 5;
	assert_int_equal(sdp_hello_ack_build(b, sizeof(b), &h), -1);
	h.ipv = 4;
	h.actrcvsz = 0;
	assert_int_equal(sdp_hello_ack_build(b, sizeof(b), &h), -1);
	h.actrcvsz = 100;
	h.majv_minv = 0x11;
	assert_int_equal(sdp_hello_ack_build(b, sizeof(b), &h), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bsdh_vector),
		cmocka_unit_test(test_bsdh_refused),
		cmocka_unit_test(test_mid_names),
		cmocka_unit_test(test_hello_v4_vector),
		cmocka_unit_test(test_hello_cm),
		cmocka_unit_test(test_hello_v6_round_trip),
		cmocka_unit_test(test_hello_build_refused),
		cmocka_unit_test(test_hello_parse_refused),
		cmocka_unit_test(test_hello_len_bounds),
		cmocka_unit_test(test_hello_ack_vector),
		cmocka_unit_test(test_hello_ack_refused),
		cmocka_unit_test(test_rej_vector),
		cmocka_unit_test(test_rej_refused),
	};

	return cmocka_run_group_tests_name("sdp_wire", tests, NULL, NULL);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* RDS/IB reassembly: SENDs laid out here byte by byte as the kernel's
 * rds_ib_xmit() posts them (header copy + up to 4096 data bytes, the
 * checksum by tv_csum, not our encoder); a 1 MiB message in 256
 * fragments, every refusal, ACKs between fragments, duplicates. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ulp/rds/rds_frag.h"
#include "tests/unit/vectors.h"

struct send {
	uint8_t b[RDS_SEND_MAX + 1];
	size_t len;
};

static void put_be(uint8_t *p, uint64_t v, int n)
{
	while (n--) {
		p[n] = (uint8_t)v;
		v >>= 8;
	}
}

/* One SEND: the header fields at their rds.h offsets, dlen data bytes. */
static void mk(struct send *s, uint64_t seq, uint64_t ack, uint32_t hlen,
	       uint16_t sport, uint16_t dport, uint8_t flags,
	       const uint8_t *data, size_t dlen)
{
	uint16_t c;

	memset(s->b, 0, RDS_HDR_LEN);
	put_be(s->b + 0, seq, 8);
	put_be(s->b + 8, ack, 8);
	put_be(s->b + 16, hlen, 4);
	put_be(s->b + 20, sport, 2);
	put_be(s->b + 22, dport, 2);
	s->b[24] = flags;
	c = tv_csum(s->b, RDS_HDR_LEN, 0);
	s->b[30] = (uint8_t)(c >> 8);
	s->b[31] = (uint8_t)c;
	if (dlen)
		memcpy(s->b + RDS_HDR_LEN, data, dlen);
	s->len = RDS_HDR_LEN + dlen;
}

static struct rds_frag fr;
static struct send snd;
static uint8_t pattern[RDS_MAX_MSG_SIZE + RDS_FRAG_SIZE];

static int setup(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(pattern); i++)
		pattern[i] = (uint8_t)(i * 7 + (i >> 12));
	return rds_frag_init(&fr);
}

static int teardown(void **state)
{
	(void)state;
	rds_frag_fini(&fr);
	return 0;
}

static enum rds_drop in(struct rds_in *r)
{
	return rds_frag_input(&fr, snd.b, snd.len, r);
}

/* Fragment i of a message of len (the kernel's split). */
static enum rds_drop frag_i(uint64_t seq, uint32_t len, uint16_t sp,
			    uint16_t dp, uint8_t flags, uint32_t i,
			    struct rds_in *r)
{
	uint32_t off = i * RDS_FRAG_SIZE, n = len - off;

	if (n > RDS_FRAG_SIZE)
		n = RDS_FRAG_SIZE;
	mk(&snd, seq, i, len, sp, dp, flags, pattern + off, n);
	return in(r);
}

static void test_single(void **state)
{
	struct rds_in r;

	(void)state;
	mk(&snd, 1, 0, 100, 4000, 5000, 0, pattern, 100);
	assert_int_equal(in(&r), RDS_DROP_NONE);
	assert_int_equal(r.kind, RDS_IN_MSG);
	assert_int_equal(r.len, 100);
	assert_ptr_equal(r.data, snd.b + RDS_HDR_LEN);	/* not copied */
	assert_memory_equal(r.data, pattern, 100);
	assert_true(r.hdr.seq == 1);
	assert_int_equal(r.hdr.sport, 4000);
	assert_int_equal(r.hdr.dport, 5000);
	assert_false(r.ack_required);
	assert_true(fr.next_rx == 2);
	assert_true(fr.ack_valid && fr.ack_next == 1);

	/* a full 4096-byte one-fragment message, ACK_REQUIRED */
	mk(&snd, 2, 0, 4096, 1, 2, RDS_FLAG_ACK_REQUIRED, pattern, 4096);
	assert_int_equal(in(&r), RDS_DROP_NONE);
	assert_int_equal(r.kind, RDS_IN_MSG);
	assert_int_equal(r.len, 4096);
	assert_true(r.ack_required);

	/* zero-length (a ping): header only */
	mk(&snd, 3, 0, 0, 7, 0, 0, NULL, 0);
	assert_int_equal(in(&r), RDS_DROP_NONE);
	assert_int_equal(r.kind, RDS_IN_MSG);
	assert_int_equal(r.len, 0);
	assert_int_equal(rds_msg_kind(&r.hdr), RDS_MSG_PING);
	assert_true(fr.next_rx == 4);
}

static void test_one_mib(void **state)
{
	struct rds_in r;
	uint32_t i;

	(void)state;
	for (i = 0; i < RDS_MAX_FRAGS - 1; i++) {
		assert_int_equal(frag_i(10, RDS_MAX_MSG_SIZE, 1, 2,
					RDS_FLAG_ACK_REQUIRED, i, &r),
				 RDS_DROP_NONE);
		assert_int_equal(r.kind, RDS_IN_NONE);
		assert_true(r.ack == i);	/* each SEND's own h_ack */
	}
	assert_int_equal(frag_i(10, RDS_MAX_MSG_SIZE, 1, 2,
				RDS_FLAG_ACK_REQUIRED, i, &r), RDS_DROP_NONE);
	assert_int_equal(r.kind, RDS_IN_MSG);
	assert_int_equal(r.len, RDS_MAX_MSG_SIZE);
	assert_memory_equal(r.data, pattern, RDS_MAX_MSG_SIZE);
	assert_true(r.ack_required);
	assert_true(r.hdr.seq == 10 && r.hdr.len == RDS_MAX_MSG_SIZE);
	assert_true(fr.next_rx == 11);
}

static void test_short_last(void **state)
{
	struct rds_in r;

	(void)state;
	assert_int_equal(frag_i(1, 4097, 1, 2, 0, 0, &r), RDS_DROP_NONE);
	assert_int_equal(r.kind, RDS_IN_NONE);
	assert_int_equal(frag_i(1, 4097, 1, 2, 0, 1, &r), RDS_DROP_NONE);
	assert_int_equal(r.kind, RDS_IN_MSG);
	assert_int_equal(r.len, 4097);
	assert_memory_equal(r.data, pattern, 4097);
	/* and the next message starts clean */
	assert_int_equal(frag_i(2, 10, 1, 2, 0, 0, &r), RDS_DROP_NONE);
	assert_int_equal(r.kind, RDS_IN_MSG);
	assert_int_equal(r.len, 10);
}

static void test_refused_sizes(void **state)
{
	struct rds_in r;

	(void)state;
	mk(&snd, 1, 0, 0, 1, 2, 0, NULL, 0);
	assert_int_equal(rds_frag_input(&fr, snd.b, 47, &r), RDS_DROP_SHORT);
	assert_int_equal(rds_frag_input(&fr, snd.b, 0, &r), RDS_DROP_SHORT);
	mk(&snd, 1, 0, 8192, 1, 2, 0, pattern, 4096);
	assert_int_equal(rds_frag_input(&fr, snd.b, RDS_SEND_MAX + 1, &r),
			 RDS_DROP_LONG);
	/* bad checksum */
	mk(&snd, 1, 0, 100, 1, 2, 0, pattern, 100);
	snd.b[21] ^= 1;
	assert_int_equal(in(&r), RDS_DROP_BAD_CSUM);
	/* h_csum 0: taken unchecked */
	snd.b[30] = snd.b[31] = 0;
	assert_int_equal(in(&r), RDS_DROP_NONE);
	assert_int_equal(r.kind, RDS_IN_MSG);

	/* data bytes against h_len */
	mk(&snd, 1, 0, 100, 1, 2, 0, pattern, 99);
	assert_int_equal(in(&r), RDS_DROP_BAD_LEN);
	mk(&snd, 1, 0, 100, 1, 2, 0, pattern, 101);
	assert_int_equal(in(&r), RDS_DROP_BAD_LEN);
	mk(&snd, 1, 0, 0, 1, 2, 0, pattern, 1);
	assert_int_equal(in(&r), RDS_DROP_BAD_LEN);
	mk(&snd, 1, 0, 5000, 1, 2, 0, pattern, 4000);	/* short non-last */
	assert_int_equal(in(&r), RDS_DROP_BAD_LEN);
	/* too big: refused at the first fragment */
	mk(&snd, 1, 0, RDS_MAX_MSG_SIZE + 1, 1, 2, 0, pattern, 4096);
	assert_int_equal(in(&r), RDS_DROP_TOO_BIG);
	mk(&snd, 1, 0, 0xffffffff, 1, 2, 0, pattern, 4096);
	assert_int_equal(in(&r), RDS_DROP_TOO_BIG);
	assert_false(fr.busy);
}

static void test_refused_last_len(void **state)
{
	struct rds_in r;

	(void)state;
	assert_int_equal(frag_i(1, 5000, 1, 2, 0, 0, &r), RDS_DROP_NONE);
	mk(&snd, 1, 0, 5000, 1, 2, 0, pattern, 903);	/* 904 due */
	assert_int_equal(in(&r), RDS_DROP_BAD_LEN);
	rds_frag_reset(&fr);

	assert_int_equal(frag_i(2, 9000, 1, 2, 0, 0, &r), RDS_DROP_NONE);
	mk(&snd, 2, 0, 9000, 1, 2, 0, pattern, 4095);	/* middle short */
	assert_int_equal(in(&r), RDS_DROP_BAD_LEN);
	rds_frag_reset(&fr);
}

static void mismatch(uint64_t seq, uint32_t len, uint16_t sp, uint16_t dp)
{
	struct rds_in r;

	rds_frag_reset(&fr);
	assert_int_equal(frag_i(5, 8192, 1, 2, 0, 0, &r), RDS_DROP_NONE);
	mk(&snd, seq, 0, len, sp, dp, 0, pattern, 4096);
	assert_int_equal(in(&r), RDS_DROP_FRAG_MISMATCH);
}

static void test_mismatch(void **state)
{
	struct rds_in r;

	(void)state;
	mismatch(6, 8192, 1, 2);
	mismatch(5, 8193, 1, 2);
	mismatch(5, 8192, 3, 2);
	mismatch(5, 8192, 1, 3);
	/* another message's zero-length SEND (a ping) mid-message */
	rds_frag_reset(&fr);
	assert_int_equal(frag_i(5, 8192, 1, 2, 0, 0, &r), RDS_DROP_NONE);
	mk(&snd, 6, 0, 0, 9, 0, 0, NULL, 0);
	assert_int_equal(in(&r), RDS_DROP_FRAG_MISMATCH);
	rds_frag_reset(&fr);

	/* h_ack, h_credit and h_flags may differ between fragments */
	assert_int_equal(frag_i(5, 8192, 1, 2, RDS_FLAG_ACK_REQUIRED, 0, &r),
			 RDS_DROP_NONE);
	mk(&snd, 5, 99, 8192, 1, 2, 0, pattern + 4096, 4096);
	snd.b[25] = 3;				/* credit, then re-sum */
	snd.b[30] = snd.b[31] = 0;
	assert_int_equal(in(&r), RDS_DROP_NONE);
	assert_int_equal(r.kind, RDS_IN_MSG);
	assert_true(r.ack == 99);
	assert_int_equal(r.credit, 3);
	assert_true(r.ack_required);		/* the first fragment's flags */
	assert_memory_equal(r.data, pattern, 8192);
}

static void test_ack_between(void **state)
{
	struct rds_in r;

	(void)state;
	assert_int_equal(frag_i(1, 12288, 1, 2, 0, 0, &r), RDS_DROP_NONE);
	mk(&snd, 0, 1234, 0, 0, 0, 0, NULL, 0);	/* ACK-only */
	assert_int_equal(in(&r), RDS_DROP_NONE);
	assert_int_equal(r.kind, RDS_IN_ACK);
	assert_true(r.ack == 1234);
	assert_int_equal(frag_i(1, 12288, 1, 2, 0, 1, &r), RDS_DROP_NONE);
	assert_int_equal(r.kind, RDS_IN_NONE);
	/* ports 0 and no data is an ACK whatever its seq and h_len */
	mk(&snd, 77, 1235, 5, 0, 0, 0, NULL, 0);
	assert_int_equal(in(&r), RDS_DROP_NONE);
	assert_int_equal(r.kind, RDS_IN_ACK);
	assert_int_equal(frag_i(1, 12288, 1, 2, 0, 2, &r), RDS_DROP_NONE);
	assert_int_equal(r.kind, RDS_IN_MSG);
	assert_memory_equal(r.data, pattern, 12288);
	assert_true(fr.next_rx == 2);
}

static void test_reset_keeps_seq(void **state)
{
	struct rds_in r;

	(void)state;
	mk(&snd, 41, 0, 1, 1, 2, 0, pattern, 1);
	assert_int_equal(in(&r), RDS_DROP_NONE);
	assert_int_equal(frag_i(42, 8192, 1, 2, 0, 0, &r), RDS_DROP_NONE);
	rds_frag_reset(&fr);			/* the connection went down */
	assert_true(fr.next_rx == 42);
	/* resent whole on the new connection, flagged */
	assert_int_equal(frag_i(42, 8192, 1, 2, RDS_FLAG_RETRANSMITTED, 0,
				&r), RDS_DROP_NONE);
	assert_int_equal(frag_i(42, 8192, 1, 2, RDS_FLAG_RETRANSMITTED, 1,
				&r), RDS_DROP_NONE);
	assert_int_equal(r.kind, RDS_IN_MSG);	/* 42 was never delivered */
	assert_true(fr.next_rx == 43);
}

static void test_duplicates(void **state)
{
	struct rds_in r;

	(void)state;
	mk(&snd, 5, 0, 3, 1, 2, 0, pattern, 3);
	assert_int_equal(in(&r), RDS_DROP_NONE);
	assert_int_equal(r.kind, RDS_IN_MSG);
	/* the same again, retransmitted: dropped, but still ACKed */
	mk(&snd, 5, 0, 3, 1, 2, RDS_FLAG_RETRANSMITTED, pattern, 3);
	assert_int_equal(in(&r), RDS_DROP_NONE);
	assert_int_equal(r.kind, RDS_IN_DUP);
	assert_true(fr.ack_next == 5);
	assert_true(fr.next_rx == 6);
	mk(&snd, 3, 0, 3, 1, 2, RDS_FLAG_RETRANSMITTED, pattern, 3);
	assert_int_equal(in(&r), RDS_DROP_NONE);
	assert_int_equal(r.kind, RDS_IN_DUP);
	assert_true(fr.next_rx == 6);
	/* a multi-fragment duplicate is dropped once complete */
	assert_int_equal(frag_i(4, 5000, 1, 2, RDS_FLAG_RETRANSMITTED, 0, &r),
			 RDS_DROP_NONE);
	assert_int_equal(r.kind, RDS_IN_NONE);
	assert_int_equal(frag_i(4, 5000, 1, 2, RDS_FLAG_RETRANSMITTED, 1, &r),
			 RDS_DROP_NONE);
	assert_int_equal(r.kind, RDS_IN_DUP);
	/* retransmitted but new: delivered */
	mk(&snd, 6, 0, 3, 1, 2, RDS_FLAG_RETRANSMITTED, pattern, 3);
	assert_int_equal(in(&r), RDS_DROP_NONE);
	assert_int_equal(r.kind, RDS_IN_MSG);
	assert_true(fr.next_rx == 7);
	/* sequences may skip forward */
	mk(&snd, 100, 0, 3, 1, 2, 0, pattern, 3);
	assert_int_equal(in(&r), RDS_DROP_NONE);
	assert_int_equal(r.kind, RDS_IN_MSG);
	assert_true(fr.next_rx == 101);
	/* an old one not flagged is delivered, and next goes back */
	mk(&snd, 50, 0, 3, 1, 2, 0, pattern, 3);
	assert_int_equal(in(&r), RDS_DROP_NONE);
	assert_int_equal(r.kind, RDS_IN_MSG);
	assert_true(fr.next_rx == 51);
}

static void test_cong(void **state)
{
	struct rds_in r;
	uint64_t next;

	(void)state;
	next = fr.next_rx;
	assert_int_equal(frag_i(0, RDS_CONG_MAP_BYTES, 0, 0,
				RDS_FLAG_CONG_BITMAP, 0, &r), RDS_DROP_NONE);
	assert_int_equal(r.kind, RDS_IN_NONE);
	assert_int_equal(frag_i(0, RDS_CONG_MAP_BYTES, 0, 0,
				RDS_FLAG_CONG_BITMAP, 1, &r), RDS_DROP_NONE);
	assert_int_equal(r.kind, RDS_IN_CONG);
	assert_int_equal(r.len, RDS_CONG_MAP_BYTES);
	assert_memory_equal(r.data, pattern, RDS_CONG_MAP_BYTES);
	assert_true(fr.next_rx == next);	/* maps are not sequenced */
	assert_false(fr.ack_valid);

	/* a map of another length: ignored, as ib_recv.c does */
	mk(&snd, 0, 0, 100, 0, 0, RDS_FLAG_CONG_BITMAP, pattern, 100);
	assert_int_equal(in(&r), RDS_DROP_NONE);
	assert_int_equal(r.kind, RDS_IN_CONG_BAD);
	/* flags not exactly 0x01: a message (to port 0: a null ping) */
	mk(&snd, 9, 0, 100, 0, 0,
	   RDS_FLAG_CONG_BITMAP | RDS_FLAG_ACK_REQUIRED, pattern, 100);
	assert_int_equal(in(&r), RDS_DROP_NONE);
	assert_int_equal(r.kind, RDS_IN_MSG);
	assert_true(r.ack_required);
	assert_int_equal(rds_msg_kind(&r.hdr), RDS_MSG_PING_NULL);
	assert_true(fr.next_rx == 10);
}

static void test_init_fini(void **state)
{
	struct rds_frag f;

	(void)state;
	assert_int_equal(rds_frag_init(&f), 0);
	assert_non_null(f.buf);
	assert_false(f.busy);
	assert_true(f.next_rx == 0);
	rds_frag_fini(&f);
	assert_null(f.buf);
	rds_frag_fini(&f);			/* twice is harmless */
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_single),
		T(test_one_mib),
		T(test_short_last),
		T(test_refused_sizes),
		T(test_refused_last_len),
		T(test_mismatch),
		T(test_ack_between),
		T(test_reset_keeps_seq),
		T(test_duplicates),
		T(test_cong),
		cmocka_unit_test(test_init_fini),
	};

	return cmocka_run_group_tests_name("rds_frag", tests, NULL, NULL);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * One RDS connection's send side (rds_conn): every SEND it builds is fed
 * to a reassembler (rds_frag), as the peer's kernel would take it, so the
 * wire is checked by the receiver's rules, not our encoder's.  Sequence
 * numbers from 1, 4096-byte fragments, the ACK_REQUIRED policy, release
 * on h_ack (and clamping past it), retransmission after a reset with the
 * map first, ACK frames and piggybacked h_ack, cancel and forget; and
 * rdma_cm's cma_hdr codec against bytes laid out by hand.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <cmocka.h>

#include "ulp/rds/rds_conn.h"
#include "ulp/rds/rds_frag.h"

struct rel {
	unsigned int n;
	uint64_t seqs[4096];
	int errs[4096];
	void *ctxs[4096];
};

static struct rds_conn c;
static struct rds_frag f;
static struct rel rel;
static uint8_t buf[RDS_SEND_MAX];
static uint8_t big[RDS_MAX_MSG_SIZE];

static void on_release(void *arg, struct rds_cmsg *m, int err)
{
	struct rel *r = arg;

	if (r->n < 4096) {
		r->seqs[r->n] = m->seq;
		r->errs[r->n] = err;
		r->ctxs[r->n] = m->ctx;
	}
	r->n++;
}

static int setup(void **state)
{
	(void)state;
	memset(&rel, 0, sizeof(rel));
	rds_conn_init(&c, on_release, &rel);
	assert_int_equal(rds_frag_init(&f), 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	rds_conn_fini(&c);
	rds_frag_fini(&f);
	return 0;
}

static void queue(uint16_t sport, uint16_t dport, size_t len, void *ctx)
{
	struct iovec iov = { big, len };

	assert_int_equal(rds_conn_queue(&c, sport, dport, &iov, 1, ctx), 0);
}

/* Build the next SEND and hand it to the peer's reassembler. */
static enum rds_tx_kind step(struct rds_tx *tx, struct rds_in *in)
{
	enum rds_tx_kind k = rds_conn_next(&c, buf, NULL, tx);

	if (k != RDS_TX_NONE) {
		assert_true(tx->len >= RDS_HDR_LEN && tx->len <= RDS_SEND_MAX);
		assert_int_equal(rds_frag_input(&f, buf, tx->len, in),
				 RDS_DROP_NONE);
	}
	return k;
}

/* Drain everything; the messages the peer completed (flags in *flags). */
static unsigned int drain(uint64_t *seqs, uint8_t *flags, unsigned int cap)
{
	struct rds_tx tx;
	struct rds_in in;
	unsigned int n = 0;

	while (step(&tx, &in) != RDS_TX_NONE) {
		if (in.kind == RDS_IN_MSG || in.kind == RDS_IN_DUP) {
			if (n < cap) {
				seqs[n] = in.kind == RDS_IN_DUP ? 0 : in.hdr.seq;
				flags[n] = in.hdr.flags;
			}
			n++;
		}
	}
	return n;
}

static void test_map_first_then_seq(void **state)
{
	struct rds_tx tx;
	struct rds_in in;
	uint64_t s[8];
	uint8_t fl[8];

	(void)state;
	queue(100, 200, 10, NULL);
	assert_int_equal(step(&tx, &in), RDS_TX_CONG);
	assert_false(tx.last);
	assert_int_equal(in.kind, RDS_IN_NONE);
	assert_int_equal(step(&tx, &in), RDS_TX_CONG);
	assert_true(tx.last);
	assert_int_equal(in.kind, RDS_IN_CONG);
	queue(100, 200, 0, NULL);
	assert_int_equal(drain(s, fl, 8), 2);
	assert_true(s[0] == 1 && s[1] == 2);
	assert_int_equal(c.next_tx_seq, 3);
	assert_int_equal(rds_conn_unacked(&c), 2);
	assert_int_equal(rds_conn_queued(&c), 0);
}

static void test_fragments(void **state)
{
	size_t sizes[] = { 4095, 4096, 4097, 8192, 8193, RDS_MAX_MSG_SIZE };
	struct rds_tx tx;
	struct rds_in in;
	unsigned int i, frags;
	size_t k;

	(void)state;
	for (k = 0; k < sizeof(big); k++)
		big[k] = (uint8_t)(k * 13 + 1);
	c.cong_pending = false;
	for (i = 0; i < 6; i++) {
		queue(5, 6, sizes[i], NULL);
		frags = 0;
		do {
			assert_int_equal(step(&tx, &in), RDS_TX_DATA);
			frags++;
		} while (!tx.last);
		assert_int_equal(frags, (sizes[i] + 4095) / 4096);
		assert_int_equal(in.kind, RDS_IN_MSG);
		assert_int_equal(in.len, sizes[i]);
		assert_memory_equal(in.data, big, sizes[i]);
		assert_int_equal(in.hdr.sport, 5);
		assert_int_equal(in.hdr.dport, 6);
	}
	assert_int_equal(rds_conn_next(&c, buf, NULL, &tx), RDS_TX_NONE);
	/* over 1 MiB */
	{
		struct iovec iov[2] = { { big, RDS_MAX_MSG_SIZE }, { big, 1 } };

		assert_int_equal(rds_conn_queue(&c, 1, 2, iov, 2, NULL), -1);
		assert_int_equal(errno, EMSGSIZE);
	}
}

static void test_ack_required_policy(void **state)
{
	uint64_t s[64];
	uint8_t fl[64];
	unsigned int i, n;

	(void)state;
	c.cong_pending = false;
	for (i = 0; i < 30; i++)
		queue(1, 2, 16, NULL);
	n = drain(s, fl, 64);
	assert_int_equal(n, 30);
	/* the 1st, then every 9th, and the last queued */
	for (i = 0; i < 30; i++) {
		bool want = i % 9 == 0 || i == 29;

		assert_int_equal(!!(fl[i] & RDS_FLAG_ACK_REQUIRED), want);
		assert_false(fl[i] & RDS_FLAG_RETRANSMITTED);
	}
}

/* Request and answer: each message goes out alone after the answer's
 * h_ack released the one before; only the kernel's every 9th asks for
 * an ACK-only frame, and a second message queued behind an unacknowledged
 * one (a burst's end) does. */
static void test_ack_required_lone(void **state)
{
	uint64_t s[4];
	uint8_t fl[4];
	unsigned int i;

	(void)state;
	c.cong_pending = false;
	for (i = 0; i < 20; i++) {
		bool want = i % 9 == 0;

		queue(1, 2, 64, NULL);
		assert_int_equal(drain(s, fl, 4), 1);
		assert_int_equal(!!(fl[0] & RDS_FLAG_ACK_REQUIRED), want);
		assert_int_equal(rds_conn_ack(&c, s[0]), 0);
		assert_null(c.head);
	}
	/* 21st (unflagged) not acknowledged yet, then a 22nd behind it */
	queue(1, 2, 64, NULL);
	assert_int_equal(drain(s, fl, 4), 1);
	assert_false(fl[0] & RDS_FLAG_ACK_REQUIRED);
	queue(1, 2, 64, NULL);
	assert_int_equal(drain(s, fl, 4), 1);
	assert_true(fl[0] & RDS_FLAG_ACK_REQUIRED);
}

/* No more than RDS_CONN_WINDOW data fragments unacknowledged; the
 * window reopens with the peer's h_ack; ACK-only frames still go, also
 * between the fragments of a stalled message; big messages ask for ACKs
 * often enough that an unflagged tail cannot fill the window. */
static void test_window(void **state)
{
	struct rds_tx tx;
	struct rds_in in;
	uint64_t s[700];
	uint8_t fl[700];
	unsigned int i, n, since = 0, maxsince = 0;

	(void)state;
	c.cong_pending = false;
	for (i = 0; i < 600; i++)
		queue(1, 2, 100, NULL);
	n = drain(s, fl, 700);
	assert_int_equal(n, RDS_CONN_WINDOW);
	assert_int_equal(c.inflight, RDS_CONN_WINDOW);
	assert_false(rds_conn_ready(&c));
	assert_true(rds_conn_busy(&c));
	/* an ACK owed still goes while the window is shut */
	rds_conn_rx_msg(&c, 7, true);
	assert_true(rds_conn_ready(&c));
	assert_int_equal(step(&tx, &in), RDS_TX_ACK);
	assert_int_equal(step(&tx, &in), RDS_TX_NONE);
	/* the first 100 acknowledged: 100 more go, no more */
	assert_int_equal(rds_conn_ack(&c, s[99]), 0);
	assert_int_equal(c.inflight, RDS_CONN_WINDOW - 100);
	assert_int_equal(drain(s, fl, 700), 88);
	assert_int_equal(rds_conn_ack(&c, 600), 0);
	assert_int_equal(c.inflight, 0);
	assert_null(c.head);

	/* 64 KiB messages (16 fragments): flagged at least every 128 */
	for (i = 0; i < 40; i++)
		queue(1, 2, 65536, NULL);
	n = drain(s, fl, 700);
	assert_int_equal(n, 32);	/* 512 fragments */
	for (i = 0; i < n; i++) {
		if (fl[i] & RDS_FLAG_ACK_REQUIRED) {
			since = 0;
			continue;
		}
		since += 16;
		if (since > maxsince)
			maxsince = since;
	}
	assert_true(maxsince < RDS_CONN_WINDOW / 4);
	assert_int_equal(rds_conn_ack(&c, s[n - 1]), 0);
	assert_int_equal(drain(s, fl, 700), 8);
	assert_int_equal(rds_conn_ack(&c, s[7]), 0);
	assert_null(c.head);

	/* a 1 MiB message stalls in its middle behind 300 small ones; an
	 * owed ACK goes between its fragments, the peer's reassembly
	 * carries on after it */
	for (i = 0; i < 300; i++)
		queue(1, 2, 10, NULL);
	queue(1, 2, RDS_MAX_MSG_SIZE, NULL);
	assert_int_equal(drain(s, fl, 700), 300);
	assert_true(c.cur_busy);
	assert_int_equal(c.inflight, RDS_CONN_WINDOW);
	rds_conn_rx_msg(&c, 8, true);
	assert_int_equal(step(&tx, &in), RDS_TX_ACK);
	assert_int_equal(in.kind, RDS_IN_ACK);
	assert_int_equal(rds_conn_ack(&c, s[299]), 0);
	assert_int_equal(drain(s, fl, 700), 1);
	assert_true(fl[0] & RDS_FLAG_ACK_REQUIRED);
	assert_int_equal(c.inflight, 256);
}

static void test_release_on_ack(void **state)
{
	uint64_t s[16];
	uint8_t fl[16];
	int ctx;

	(void)state;
	c.cong_pending = false;
	queue(1, 2, 100, &ctx);
	queue(1, 2, 100, &ctx);
	queue(1, 2, 100, &ctx);
	assert_int_equal(drain(s, fl, 16), 3);
	assert_int_equal(rds_conn_ack(&c, 0), 0);
	assert_int_equal(rel.n, 0);
	assert_int_equal(rds_conn_ack(&c, 2), 0);
	assert_int_equal(rel.n, 2);
	assert_true(rel.seqs[0] == 1 && rel.seqs[1] == 2);
	assert_int_equal(rel.errs[0], 0);
	assert_ptr_equal(rel.ctxs[0], &ctx);
	assert_int_equal(c.bytes, 100);
	/* past what was sent: clamped, counted, everything sent freed */
	queue(1, 2, 100, &ctx);		/* seq 4, not sent yet */
	assert_int_equal(rds_conn_ack(&c, 1000000), 1);
	assert_int_equal(c.acks_beyond, 1);
	assert_int_equal(rel.n, 3);
	assert_int_equal(rds_conn_queued(&c), 1);	/* seq 4 stays */
	assert_non_null(c.head);
	assert_true(c.head->seq == 4);
}

static void test_reset_retransmits(void **state)
{
	struct rds_tx tx;
	struct rds_in in;
	uint64_t s[16];
	uint8_t fl[16];
	unsigned int n;

	(void)state;
	c.cong_pending = false;
	queue(1, 2, 5000, NULL);	/* two fragments */
	queue(1, 2, 10, NULL);
	assert_int_equal(drain(s, fl, 16), 2);
	assert_int_equal(rds_conn_ack(&c, 1), 0);	/* 1 acked */
	queue(1, 2, 9000, NULL);	/* seq 3, three fragments */
	assert_int_equal(step(&tx, &in), RDS_TX_DATA);	/* one of them */
	/* the connection drops: the peer's partial message is gone */
	rds_conn_reset(&c);
	rds_frag_reset(&f);
	assert_int_equal(step(&tx, &in), RDS_TX_CONG);	/* map first */
	assert_int_equal(step(&tx, &in), RDS_TX_CONG);
	n = drain(s, fl, 16);
	assert_int_equal(n, 2);
	assert_true(s[0] == 0);		/* seq 2 again: a duplicate */
	assert_true(fl[0] & RDS_FLAG_RETRANSMITTED);
	assert_true(fl[0] & RDS_FLAG_ACK_REQUIRED);
	assert_true(s[1] == 3);		/* partial one: sent afresh */
	assert_false(fl[1] & RDS_FLAG_RETRANSMITTED);
	assert_int_equal(c.retransmits, 1);
	assert_int_equal(rds_conn_ack(&c, 3), 0);
	assert_null(c.head);
	assert_int_equal(c.bytes, 0);
	assert_int_equal(c.sent_bytes, 0);
}

static void test_ack_not_freeing_partial(void **state)
{
	struct rds_tx tx;
	struct rds_in in;

	(void)state;
	c.cong_pending = false;
	queue(1, 2, 9000, NULL);
	while (step(&tx, &in) != RDS_TX_NONE)
		;
	rds_conn_reset(&c);
	rds_frag_reset(&f);
	c.cong_pending = false;
	assert_int_equal(step(&tx, &in), RDS_TX_DATA);	/* resend begun */
	assert_int_equal(rds_conn_ack(&c, 1), 0);	/* not mid-message */
	assert_int_equal(rel.n, 0);
	while (step(&tx, &in) != RDS_TX_NONE)
		;
	assert_int_equal(in.kind, RDS_IN_DUP);
	assert_int_equal(rds_conn_ack(&c, 1), 0);
	assert_int_equal(rel.n, 1);
}

static void test_ack_frames(void **state)
{
	struct rds_tx tx;
	struct rds_in in;

	(void)state;
	c.cong_pending = false;
	assert_int_equal(rds_conn_next(&c, buf, NULL, &tx), RDS_TX_NONE);
	assert_false(rds_conn_ack_owed(&c));
	rds_conn_rx_msg(&c, 7, false);		/* no ACK asked */
	assert_false(rds_conn_ready(&c));
	assert_true(rds_conn_ack_owed(&c));	/* a delayed one is owed */
	rds_conn_rx_msg(&c, 8, true);
	assert_true(rds_conn_ready(&c));
	assert_int_equal(step(&tx, &in), RDS_TX_ACK);
	assert_int_equal(tx.len, RDS_HDR_LEN);
	assert_true(tx.last);
	assert_int_equal(in.kind, RDS_IN_ACK);
	assert_true(in.ack == 8);
	assert_false(rds_conn_ack_owed(&c));
	assert_int_equal(rds_conn_next(&c, buf, NULL, &tx), RDS_TX_NONE);
	rds_conn_rx_msg(&c, 8, false);		/* a duplicate: nothing new */
	assert_false(rds_conn_ack_owed(&c));
	rds_conn_want_ack(&c);
	assert_int_equal(step(&tx, &in), RDS_TX_ACK);
	/* data carries it instead of an ACK frame */
	rds_conn_rx_msg(&c, 9, true);
	queue(1, 2, 20, NULL);
	assert_int_equal(step(&tx, &in), RDS_TX_DATA);
	assert_true(in.ack == 9);
	assert_false(c.ack_pending);
	assert_false(rds_conn_ack_owed(&c));
	assert_int_equal(rds_conn_next(&c, buf, NULL, &tx), RDS_TX_NONE);
}

static void test_cong_between_messages(void **state)
{
	struct rds_cong_map m;
	struct rds_tx tx;
	struct rds_in in;

	(void)state;
	c.cong_pending = false;
	memset(&m, 0, sizeof(m));
	rds_cong_set(&m, 4000);
	queue(1, 2, 9000, NULL);
	assert_int_equal(rds_conn_next(&c, buf, m.bits, &tx), RDS_TX_DATA);
	assert_int_equal(rds_frag_input(&f, buf, tx.len, &in), RDS_DROP_NONE);
	rds_conn_cong_changed(&c);	/* not mid-message */
	assert_int_equal(step(&tx, &in), RDS_TX_DATA);
	assert_int_equal(step(&tx, &in), RDS_TX_DATA);
	assert_int_equal(in.kind, RDS_IN_MSG);
	assert_int_equal(rds_conn_next(&c, buf, m.bits, &tx), RDS_TX_CONG);
	assert_int_equal(rds_frag_input(&f, buf, tx.len, &in), RDS_DROP_NONE);
	assert_int_equal(rds_conn_next(&c, buf, NULL, &tx), RDS_TX_CONG);
	assert_int_equal(rds_frag_input(&f, buf, tx.len, &in), RDS_DROP_NONE);
	assert_int_equal(in.kind, RDS_IN_CONG);
	/* the snapshot taken at the first fragment */
	assert_true(in.data[4000 / 8] & (1 << (4000 % 8)));
}

static void test_cancel_forget(void **state)
{
	struct rds_tx tx;
	struct rds_in in;
	int a, b;

	(void)state;
	c.cong_pending = false;
	queue(1, 2, 10, &a);		/* 1 */
	assert_int_equal(step(&tx, &in), RDS_TX_DATA);	/* sent */
	queue(1, 2, 10, &a);		/* 2 */
	queue(1, 3, 10, &a);		/* 3: other port */
	queue(1, 2, 10, &b);		/* 4: other ctx */
	queue(1, 2, 10, &a);		/* 5 */
	assert_int_equal(rds_conn_cancel(&c, &a, 2), 2);
	assert_int_equal(rel.n, 2);
	assert_true(rel.seqs[0] == 2 && rel.seqs[1] == 5);
	assert_int_equal(rel.errs[0], ECANCELED);
	rds_conn_forget(&c, &b);
	assert_int_equal(rds_conn_cancel(&c, &b, 2), 0);
	while (step(&tx, &in) != RDS_TX_NONE)
		;
	assert_true(in.hdr.seq == 4);	/* sequences may skip */
	rds_conn_ack(&c, 4);
	assert_int_equal(rel.n, 5);
	assert_null(rel.ctxs[4]);	/* forgotten */
}

/* ---- cma_hdr --------------------------------------------------------- */

static void test_cma_hdr_v4(void **state)
{
	static const uint8_t want[36] = {
		0x00, 0x40, 0xc3, 0x50,
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 10, 1, 0, 1,
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 10, 1, 0, 2,
	};
	struct rds_cma_hdr h = { .sport = 50000 }, g;
	uint8_t p[40];

	(void)state;
	h.src.family = h.dst.family = AF_INET;
	memcpy(h.src.raw, "\x0a\x01\x00\x01", 4);
	memcpy(h.dst.raw, "\x0a\x01\x00\x02", 4);
	assert_int_equal(rds_cma_hdr_build(p, sizeof(p), &h), 36);
	assert_memory_equal(p, want, 36);
	assert_int_equal(rds_cma_hdr_parse(want, 36, &g), 0);
	assert_int_equal(g.sport, 50000);
	assert_int_equal(g.src.family, AF_INET);
	assert_memory_equal(g.src.raw, h.src.raw, 4);
	assert_memory_equal(g.dst.raw, h.dst.raw, 4);
	assert_int_equal(rds_cma_hdr_build(p, 35, &h), -1);
	h.dst.family = AF_INET6;
	assert_int_equal(rds_cma_hdr_build(p, sizeof(p), &h), -1);
	assert_int_equal(errno, EINVAL);
}

static void test_cma_hdr_v6_and_bad(void **state)
{
	uint8_t p[36];
	struct rds_cma_hdr h;
	unsigned int i;

	(void)state;
	memset(p, 0, sizeof(p));
	p[1] = 0x60;
	p[2] = 0x12;
	p[3] = 0x34;
	for (i = 0; i < 16; i++) {
		p[4 + i] = (uint8_t)(0xf0 + i);
		p[20 + i] = (uint8_t)i;
	}
	assert_int_equal(rds_cma_hdr_parse(p, 36, &h), 0);
	assert_int_equal(h.src.family, AF_INET6);
	assert_int_equal(h.sport, 0x1234);
	assert_int_equal(h.src.raw[0], 0xf0);
	assert_int_equal(h.dst.raw[15], 15);
	{
		uint8_t q[36];

		assert_int_equal(rds_cma_hdr_build(q, sizeof(q), &h), 36);
		assert_memory_equal(q, p, 36);
	}
	assert_int_equal(rds_cma_hdr_parse(p, 35, &h), -1);	/* short */
	p[0] = 1;						/* version */
	assert_int_equal(rds_cma_hdr_parse(p, 36, &h), -1);
	p[0] = 0;
	p[1] = 0x50;						/* IP ver 5 */
	assert_int_equal(rds_cma_hdr_parse(p, 36, &h), -1);
	p[1] = 0x00;
	assert_int_equal(rds_cma_hdr_parse(p, 36, &h), -1);
	p[1] = 0x4f;		/* the low nibble is not the version */
	assert_int_equal(rds_cma_hdr_parse(p, 36, &h), 0);
	assert_int_equal(h.src.family, AF_INET);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_map_first_then_seq),
		T(test_fragments),
		T(test_ack_required_policy),
		T(test_ack_required_lone),
		T(test_window),
		T(test_release_on_ack),
		T(test_reset_retransmits),
		T(test_ack_not_freeing_partial),
		T(test_ack_frames),
		T(test_cong_between_messages),
		T(test_cancel_forget),
		cmocka_unit_test(test_cma_hdr_v4),
		cmocka_unit_test(test_cma_hdr_v6_and_bad),
	};

	return cmocka_run_group_tests_name("rds_conn", tests, NULL, NULL);
}

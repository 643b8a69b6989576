// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The SDP message layer: sequence, credits both ways, credit-only
 * updates, DisConn and AbortConn, every refusal, and two connections
 * streaming through an in-test queue with a receiver that is slow to
 * repost, which must neither lose a byte nor stall.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "ulp/sdp/sdp_conn.h"
#include "tests/unit/vectors.h"

#define RCVSZ	(4096 + SDP_BSDH_LEN)

/* a message from the peer, its BSDH as the peer would write it */
static size_t peer_msg(uint8_t *b, uint8_t mid, uint16_t bufs, uint32_t len,
		       uint32_t mseq, uint32_t ack)
{
	struct sdp_bsdh h = {
		.mid = mid, .bufs = bufs, .len = len, .mseq = mseq,
		.mseq_ack = ack,
	};

	sdp_bsdh_put(b, &h);
	if (len > SDP_BSDH_LEN)
		memset(b + SDP_BSDH_LEN, 0x5a, len - SDP_BSDH_LEN);
	return len;
}

static uint8_t mbuf[2 * RCVSZ];

/* the peer's message into c, expected to be taken */
static struct sdp_rx take(struct sdp_conn *c, uint8_t mid, uint16_t bufs,
			  uint32_t len, uint32_t mseq, uint32_t ack)
{
	struct sdp_rx rx;

	peer_msg(mbuf, mid, bufs, len, mseq, ack);
	if (sdp_conn_rx(c, mbuf, len, &rx))
		fail_msg("mseq %u refused: %s", mseq, sdp_err_name(c->error));
	return rx;
}

/* ... expected to be refused for e, and everything after it too */
static void refuse(struct sdp_conn *c, uint8_t mid, uint16_t bufs,
		   uint32_t len, uint32_t mseq, uint32_t ack, enum sdp_err e)
{
	struct sdp_rx rx;
	struct sdp_conn before = *c;

	peer_msg(mbuf, mid, bufs, len, mseq, ack);
	assert_int_equal(sdp_conn_rx(c, mbuf, len, &rx), -1);
	if (c->error != e)
		fail_msg("want %s, got %s", sdp_err_name(e),
			 sdp_err_name(c->error));
	/* nothing else moved */
	assert_int_equal(c->rx_mseq, before.rx_mseq);
	assert_int_equal(c->rx_posted, before.rx_posted);
	assert_int_equal(c->tx_credits, before.tx_credits);
	/* failed for good, even for a perfect message */
	peer_msg(mbuf, SDP_MID_DATA, 8, 16, c->rx_mseq + 1, c->tx_mseq);
	sdp_conn_rx_posted(c, 8);
	assert_int_equal(sdp_conn_rx(c, mbuf, 16, &rx), -1);
	assert_int_equal(c->error, e);
	assert_int_equal(sdp_conn_tx_room(c), 0);
	assert_int_equal(sdp_conn_want_update(c), 0);
	/* but the abort can go */
	assert_int_equal(sdp_conn_tx(c, mbuf, SDP_MID_DATA, 0, 10), -1);
	assert_int_equal(errno, EPIPE);
	if (c->tx_credits > 0 && !c->abort_sent)
		assert_int_equal(sdp_conn_tx(c, mbuf, SDP_MID_ABORT, 0, 0),
				 16);
}

static void conn(struct sdp_conn *c, uint32_t posted, uint32_t peer_bufs)
{
	sdp_conn_init(c, RCVSZ, RCVSZ, posted, peer_bufs);
}

static void test_err_names(void **state)
{
	(void)state;
	assert_string_equal(sdp_err_name(SDP_ERR_NONE), "none");
	assert_string_equal(sdp_err_name(SDP_ERR_HEADER), "bad_header");
	assert_string_equal(sdp_err_name(SDP_ERR_MID), "bad_mid");
	assert_string_equal(sdp_err_name(SDP_ERR_MSEQ), "bad_mseq");
	assert_string_equal(sdp_err_name(SDP_ERR_ACK), "bad_ack");
	assert_string_equal(sdp_err_name(SDP_ERR_CREDITS), "bad_credits");
	assert_string_equal(sdp_err_name(SDP_ERR_LEN), "bad_len");
	assert_string_equal(sdp_err_name(SDP_ERR_AFTER_DISCONN),
			    "data_after_disconn");
	assert_string_equal(sdp_err_name(SDP_ERR_MAX), "unknown");
}

/* the first messages' BSDHs, byte for byte */
static void test_tx_bsdh_bytes(void **state)
{
	uint8_t b[64], want[SDP_BSDH_LEN];
	struct sdp_conn c;

	(void)state;
	conn(&c, 64, 10);
	memset(b, 0, sizeof(b));
	assert_int_equal(sdp_conn_tx(&c, b, SDP_MID_DATA, SDP_FLAG_OOB_PRES,
				     5), 21);
	tv_unhex("ff 01 0040 00000015 00000001 00000000", want, 16);
	assert_memory_equal(b, want, 16);
	assert_int_equal(c.tx_credits, 9);
	assert_int_equal(c.tx_bytes, 5);
	assert_int_equal(c.adv_bufs, 64);

	take(&c, SDP_MID_DATA, 10, 16 + 3, 1, 1);
	take(&c, SDP_MID_DATA, 10, 16, 2, 1);
	assert_int_equal(c.rx_posted, 62);
	assert_int_equal(c.credit_updates_rx, 1);
	assert_int_equal(c.rx_bytes, 3);
	assert_int_equal(sdp_conn_tx(&c, b, SDP_MID_DISCONN, 0, 0), 16);
	tv_unhex("02 00 003e 00000010 00000002 00000002", want, 16);
	assert_memory_equal(b, want, 16);
	assert_true(c.fin_sent);
	assert_int_equal(c.tx_msgs, 2);
}

/* Data stops at the reserve; a credit update, DisConn, Abort go */
static void test_tx_credits_and_reserve(void **state)
{
	uint8_t b[RCVSZ + 16];
	struct sdp_conn c;

	(void)state;
	conn(&c, 8, 5);
	assert_int_equal(sdp_conn_tx_room(&c), 3);
	assert_int_equal(sdp_conn_tx(&c, b, SDP_MID_DATA, 0, 100), 116);
	assert_int_equal(sdp_conn_tx(&c, b, SDP_MID_DATA, 0, 100), 116);
	assert_int_equal(sdp_conn_tx(&c, b, SDP_MID_DATA, 0, 100), 116);
	assert_int_equal(sdp_conn_tx_room(&c), 0);
	assert_int_equal(c.tx_credits, 2);
	errno = 0;
	assert_int_equal(sdp_conn_tx(&c, b, SDP_MID_DATA, 0, 1), -1);
	assert_int_equal(errno, EAGAIN);
	assert_int_equal(sdp_conn_tx(&c, b, SDP_MID_DATA, 0, 0), 16);
	assert_int_equal(c.credit_updates_tx, 1);
	assert_int_equal(sdp_conn_tx(&c, b, SDP_MID_DISCONN, 0, 0), 16);
	assert_int_equal(c.tx_credits, 0);
	assert_int_equal(sdp_conn_tx(&c, b, SDP_MID_ABORT, 0, 0), -1);
	assert_int_equal(errno, EAGAIN);
	assert_int_equal(c.tx_mseq, 5);

	/* the peer saw 3 of our 5 and has 4 buffers: 4 - 2 = 2 credits */
	take(&c, SDP_MID_DATA, 4, 16, 1, 3);
	assert_int_equal(c.tx_credits, 2);
	/* it saw all 5 and has 6 */
	take(&c, SDP_MID_DATA, 6, 16, 2, 5);
	assert_int_equal(c.tx_credits, 6);
	assert_int_equal(sdp_conn_tx_room(&c), 0);	/* after DisConn */
	assert_int_equal(sdp_conn_tx(&c, b, SDP_MID_DATA, 0, 1), -1);
	assert_int_equal(errno, EPIPE);
	assert_int_equal(sdp_conn_tx(&c, b, SDP_MID_DISCONN, 0, 0), -1);
	assert_int_equal(errno, EPIPE);
	/* half-closed: credits still go back to the peer */
	assert_int_equal(sdp_conn_tx(&c, b, SDP_MID_DATA, 0, 0), 16);
	assert_int_equal(sdp_conn_tx(&c, b, SDP_MID_ABORT, 0, 0), 16);
	assert_int_equal(sdp_conn_tx(&c, b, SDP_MID_ABORT, 0, 0), -1);
	assert_int_equal(errno, EPIPE);
	assert_int_equal(sdp_conn_tx(&c, b, SDP_MID_DATA, 0, 0), -1);
	assert_int_equal(errno, EPIPE);
}

static void test_tx_refused(void **state)
{
	static const uint8_t mids[] = {
		SDP_MID_HELLO, SDP_MID_HELLO_ACK, SDP_MID_SENDSM,
		SDP_MID_RDMARDCOMPL, SDP_MID_SRCAVAIL_CANCEL,
		SDP_MID_CHRCVBUF, SDP_MID_SINKAVAIL, SDP_MID_SRCAVAIL, 0x42,
	};
	uint8_t b[RCVSZ + 16];
	struct sdp_conn c;
	unsigned int i;

	(void)state;
	conn(&c, 8, 8);
	for (i = 0; i < sizeof(mids); i++) {
		errno = 0;
		assert_int_equal(sdp_conn_tx(&c, b, mids[i], 0, 0), -1);
		assert_int_equal(errno, EINVAL);
	}
	assert_int_equal(sdp_conn_tx(&c, b, SDP_MID_DISCONN, 0, 1), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(sdp_conn_tx(&c, b, SDP_MID_CHRCVBUF_ACK, 0, 3), -1);
	assert_int_equal(errno, EINVAL);
	/* the largest message is the peer's buffer */
	assert_int_equal(sdp_conn_tx(&c, b, SDP_MID_DATA, 0, RCVSZ - 15),
			 -1);
	assert_int_equal(errno, EMSGSIZE);
	assert_int_equal(sdp_conn_tx(&c, b, SDP_MID_DATA, 0, 0xfffffff8u),
			 -1);
	assert_int_equal(errno, EMSGSIZE);
	assert_int_equal(c.tx_mseq, 0);
	assert_int_equal(sdp_conn_tx(&c, b, SDP_MID_DATA, 0, RCVSZ - 16),
			 RCVSZ);
	assert_int_equal(sdp_conn_tx(&c, b, SDP_MID_CHRCVBUF_ACK, 0, 4), 20);
	assert_int_equal(b[0], SDP_MID_CHRCVBUF_ACK);
	assert_int_equal(c.tx_mseq, 2);
}

static void test_rx_kinds(void **state)
{
	struct sdp_conn c;
	struct sdp_rx rx;

	(void)state;
	conn(&c, 8, 8);
	rx = take(&c, SDP_MID_DATA, 8, 16 + 100, 1, 0);
	assert_int_equal(rx.kind, SDP_RX_DATA);
	assert_int_equal(rx.off, 16);
	assert_int_equal(rx.len, 100);
	mbuf[1] = SDP_FLAG_OOB_PEND;
	rx = take(&c, SDP_MID_CHRCVBUF, 8, 20, 2, 0);
	assert_int_equal(rx.kind, SDP_RX_CHRCVBUF);
	assert_int_equal(rx.len, 4);
	rx = take(&c, SDP_MID_CHRCVBUF_ACK, 8, 20, 3, 0);
	assert_int_equal(rx.kind, SDP_RX_CHRCVBUF_ACK);
	rx = take(&c, SDP_MID_DISCONN, 8, 16, 4, 0);
	assert_int_equal(rx.kind, SDP_RX_DISCONN);
	assert_true(c.fin_rcvd);
	/* a credit update after the peer's DisConn is fine */
	rx = take(&c, SDP_MID_DATA, 8, 16, 5, 0);
	assert_int_equal(rx.kind, SDP_RX_DATA);
	assert_int_equal(rx.len, 0);
	rx = take(&c, SDP_MID_ABORT, 8, 16, 6, 0);
	assert_int_equal(rx.kind, SDP_RX_ABORT);
	assert_true(c.abort_rcvd);
	assert_int_equal(c.rx_posted, 2);
	assert_int_equal(c.rx_msgs, 6);
	assert_int_equal(sdp_conn_tx_room(&c), 0);
	assert_int_equal(sdp_conn_want_update(&c), 0);
	assert_int_equal(sdp_conn_tx(&c, mbuf, SDP_MID_DATA, 0, 1), -1);
	assert_int_equal(errno, EPIPE);
}

static void test_rx_flags(void **state)
{
	struct sdp_conn c;
	struct sdp_rx rx;

	(void)state;
	conn(&c, 8, 8);
	peer_msg(mbuf, SDP_MID_DATA, 8, 17, 1, 0);
	mbuf[1] = SDP_FLAG_OOB_PRES | SDP_FLAG_OOB_PEND;
	assert_int_equal(sdp_conn_rx(&c, mbuf, 17, &rx), 0);
	assert_int_equal(rx.flags, 3);
}

static void test_rx_bad_header(void **state)
{
	struct sdp_conn c;
	struct sdp_rx rx;

	(void)state;
	conn(&c, 8, 8);
	peer_msg(mbuf, SDP_MID_DATA, 8, 16, 1, 0);
	assert_int_equal(sdp_conn_rx(&c, mbuf, 15, &rx), -1);	/* short */
	assert_int_equal(c.error, SDP_ERR_HEADER);
	assert_int_equal(c.rx_posted, 8);
	conn(&c, 8, 8);
	peer_msg(mbuf, SDP_MID_DATA, 8, 20, 1, 0);
	assert_int_equal(sdp_conn_rx(&c, mbuf, 24, &rx), -1);	/* len */
	assert_int_equal(c.error, SDP_ERR_HEADER);
	assert_int_equal(sdp_conn_rx(&c, mbuf, 20, &rx), -1);	/* for good */
	/* ChRcvBuf without its size */
	conn(&c, 8, 8);
	refuse(&c, SDP_MID_CHRCVBUF, 8, 19, 1, 0, SDP_ERR_HEADER);
}

static void test_rx_bad_len(void **state)
{
	struct sdp_conn c;

	(void)state;
	conn(&c, 8, 8);
	take(&c, SDP_MID_DATA, 8, RCVSZ, 1, 0);		/* a full buffer */
	refuse(&c, SDP_MID_DATA, 8, RCVSZ + 1, 2, 0, SDP_ERR_LEN);
}

static void test_rx_bad_mid(void **state)
{
	static const uint8_t mids[] = {
		SDP_MID_HELLO, SDP_MID_HELLO_ACK, SDP_MID_SENDSM,
		SDP_MID_RDMARDCOMPL, SDP_MID_SRCAVAIL_CANCEL,
		SDP_MID_SINKAVAIL, SDP_MID_SRCAVAIL,
		0x05, 0x07, 0x09, 0x0a, 0x0d, 0x0e, 0x42, 0xfc,
	};
	struct sdp_conn c;
	unsigned int i;

	(void)state;
	for (i = 0; i < sizeof(mids); i++) {
		conn(&c, 8, 8);
		refuse(&c, mids[i], 8, 64, 1, 0, SDP_ERR_MID);
	}
}

static void test_rx_bad_mseq(void **state)
{
	struct sdp_conn c;

	(void)state;
	conn(&c, 8, 8);
	refuse(&c, SDP_MID_DATA, 8, 16, 2, 0, SDP_ERR_MSEQ);	/* skipped 1 */
	conn(&c, 8, 8);
	refuse(&c, SDP_MID_DATA, 8, 16, 0, 0, SDP_ERR_MSEQ);	/* Hello's */
	conn(&c, 8, 8);
	take(&c, SDP_MID_DATA, 8, 16, 1, 0);
	take(&c, SDP_MID_DATA, 8, 16, 2, 0);
	refuse(&c, SDP_MID_DATA, 8, 16, 2, 0, SDP_ERR_MSEQ);	/* again */
	conn(&c, 8, 8);
	refuse(&c, SDP_MID_DATA, 8, 16, 0x80000001u, 0, SDP_ERR_MSEQ);
}

static void test_rx_bad_ack(void **state)
{
	uint8_t b[64];
	struct sdp_conn c;

	(void)state;
	conn(&c, 8, 8);
	refuse(&c, SDP_MID_DATA, 8, 16, 1, 1, SDP_ERR_ACK);	/* none sent */
	conn(&c, 8, 8);
	sdp_conn_tx(&c, b, SDP_MID_DATA, 0, 1);
	sdp_conn_tx(&c, b, SDP_MID_DATA, 0, 1);
	take(&c, SDP_MID_DATA, 8, 16, 1, 2);
	refuse(&c, SDP_MID_DATA, 8, 16, 2, 3, SDP_ERR_ACK);
	conn(&c, 8, 8);
	refuse(&c, SDP_MID_DATA, 8, 16, 1, 0x7fffffffu, SDP_ERR_ACK);
}

/* the peer's bufs below what we have in flight to it */
static void test_rx_credits_lie_low(void **state)
{
	uint8_t b[64];
	struct sdp_conn c;

	(void)state;
	conn(&c, 8, 8);
	sdp_conn_tx(&c, b, SDP_MID_DATA, 0, 1);
	sdp_conn_tx(&c, b, SDP_MID_DATA, 0, 1);
	sdp_conn_tx(&c, b, SDP_MID_DATA, 0, 1);
	take(&c, SDP_MID_DATA, 2, 16, 1, 1);	/* 2 in flight, 2 bufs: 0 */
	assert_int_equal(c.tx_credits, 0);
	refuse(&c, SDP_MID_DATA, 1, 16, 2, 1, SDP_ERR_CREDITS);
}

/* the peer sends more than we advertised */
static void test_rx_credits_lie_high(void **state)
{
	uint8_t b[64];
	struct sdp_conn c;
	uint32_t i;

	(void)state;
	conn(&c, 3, 8);
	for (i = 1; i <= 3; i++)
		take(&c, SDP_MID_DATA, 8, 16, i, 0);
	sdp_conn_rx_posted(&c, 5);	/* posted, but not yet told */
	refuse(&c, SDP_MID_DATA, 8, 16, 4, 0, SDP_ERR_CREDITS);

	/* told: 5 more it may send, not 6 */
	conn(&c, 3, 8);
	for (i = 1; i <= 3; i++)
		take(&c, SDP_MID_DATA, 8, 16, i, 0);
	sdp_conn_rx_posted(&c, 5);
	assert_int_equal(sdp_conn_tx(&c, b, SDP_MID_DATA, 0, 0), 16);
	for (i = 4; i <= 8; i++)
		take(&c, SDP_MID_DATA, 8, 16, i, 1);
	sdp_conn_rx_posted(&c, 1);
	refuse(&c, SDP_MID_DATA, 8, 16, 9, 1, SDP_ERR_CREDITS);
}

static void test_rx_after_disconn(void **state)
{
	struct sdp_conn c;

	(void)state;
	conn(&c, 8, 8);
	take(&c, SDP_MID_DISCONN, 8, 16, 1, 0);
	refuse(&c, SDP_MID_DATA, 8, 17, 2, 0, SDP_ERR_AFTER_DISCONN);
	conn(&c, 8, 8);
	take(&c, SDP_MID_DISCONN, 8, 16, 1, 0);
	refuse(&c, SDP_MID_DISCONN, 8, 16, 2, 0, SDP_ERR_AFTER_DISCONN);
	conn(&c, 8, 8);
	take(&c, SDP_MID_ABORT, 8, 16, 1, 0);
	refuse(&c, SDP_MID_DATA, 8, 100, 2, 0, SDP_ERR_AFTER_DISCONN);
}

/* DisConn each way, in either order, then closed */
static void test_disconn_both_ways(void **state)
{
	uint8_t b[64];
	struct sdp_conn c;

	(void)state;
	conn(&c, 8, 8);
	assert_int_equal(sdp_conn_tx(&c, b, SDP_MID_DISCONN, 0, 0), 16);
	assert_false(sdp_conn_closed(&c));
	take(&c, SDP_MID_DATA, 8, 116, 1, 1);	/* it still sends to us */
	assert_false(sdp_conn_closed(&c));
	take(&c, SDP_MID_DISCONN, 8, 16, 2, 1);
	assert_true(sdp_conn_closed(&c));

	conn(&c, 8, 8);
	take(&c, SDP_MID_DISCONN, 8, 16, 1, 0);
	assert_false(sdp_conn_closed(&c));
	assert_true(sdp_conn_tx_room(&c) > 0);	/* we still send */
	assert_int_equal(sdp_conn_tx(&c, b, SDP_MID_DATA, 0, 10), 26);
	assert_int_equal(sdp_conn_tx(&c, b, SDP_MID_DISCONN, 0, 0), 16);
	assert_true(sdp_conn_closed(&c));
	assert_int_equal(sdp_conn_tx_room(&c), 0);
}

static void test_abort(void **state)
{
	uint8_t b[64];
	struct sdp_conn c;

	(void)state;
	conn(&c, 8, 8);
	assert_int_equal(sdp_conn_tx(&c, b, SDP_MID_ABORT, 0, 0), 16);
	assert_true(c.abort_sent);
	assert_int_equal(sdp_conn_tx_room(&c), 0);
	assert_int_equal(sdp_conn_tx(&c, b, SDP_MID_DATA, 0, 1), -1);
	assert_int_equal(errno, EPIPE);
	assert_int_equal(sdp_conn_tx(&c, b, SDP_MID_DISCONN, 0, 0), -1);
	assert_int_equal(errno, EPIPE);
	sdp_conn_rx_posted(&c, 100);
	assert_int_equal(sdp_conn_want_update(&c), 0);
	/* what the peer had on its way still arrives */
	take(&c, SDP_MID_DATA, 8, 20, 1, 0);
}

/* credit-only updates: when we hold twice what the peer knows of */
static void test_update_cadence(void **state)
{
	uint8_t b[64];
	struct sdp_conn c;
	uint32_t i;

	(void)state;
	conn(&c, 8, 8);
	assert_int_equal(sdp_conn_want_update(&c), 0);	/* knows all 8 */
	for (i = 1; i <= 4; i++)
		take(&c, SDP_MID_DATA, 8, 100, i, 0);
	/* it knows of 4, we have 4 */
	assert_int_equal(sdp_conn_want_update(&c), 0);
	sdp_conn_rx_posted(&c, 3);			/* 7 < 2 * 4 */
	assert_int_equal(sdp_conn_want_update(&c), 0);
	sdp_conn_rx_posted(&c, 1);			/* 8 >= 2 * 4 */
	assert_int_equal(sdp_conn_want_update(&c), 1);
	assert_int_equal(sdp_conn_tx(&c, b, SDP_MID_DATA, 0, 0), 16);
	assert_int_equal(b[3], 8);			/* bufs */
	assert_int_equal(b[15], 4);			/* mseq_ack */
	assert_int_equal(sdp_conn_want_update(&c), 0);
	assert_int_equal(c.credit_updates_tx, 1);

	/* down to the reserve, any buffer more is worth telling */
	for (i = 5; i <= 10; i++)
		take(&c, SDP_MID_DATA, 8, 100, i, 1);
	assert_int_equal(c.rx_posted, 2);
	assert_int_equal(sdp_conn_want_update(&c), 0);
	sdp_conn_rx_posted(&c, 1);
	assert_int_equal(sdp_conn_want_update(&c), 1);

	/* not without a credit of our own */
	c.tx_credits = 0;
	assert_int_equal(sdp_conn_want_update(&c), 0);
	c.tx_credits = 1;
	assert_int_equal(sdp_conn_want_update(&c), 1);
	assert_int_equal(sdp_conn_tx(&c, b, SDP_MID_DATA, 0, 0), 16);
	assert_int_equal(c.tx_credits, 0);
}

/* sequence numbers across 2^32 */
static void test_mseq_wrap(void **state)
{
	uint8_t b[64];
	struct sdp_conn c;

	(void)state;
	conn(&c, 8, 8);
	c.tx_mseq = c.rx_mseq = c.adv_ack = 0xfffffffeu;
	assert_int_equal(sdp_conn_tx(&c, b, SDP_MID_DATA, 0, 1), 17);
	assert_int_equal(sdp_conn_tx(&c, b, SDP_MID_DATA, 0, 1), 17);
	assert_int_equal(c.tx_mseq, 0);
	assert_int_equal(b[11], 0);
	take(&c, SDP_MID_DATA, 8, 16, 0xffffffffu, 0xffffffffu);
	assert_int_equal(c.tx_credits, 7);
	take(&c, SDP_MID_DATA, 8, 16, 0, 0);
	assert_int_equal(c.tx_credits, 8);
	take(&c, SDP_MID_DATA, 8, 16, 1, 0);
	refuse(&c, SDP_MID_DATA, 8, 16, 2, 1, SDP_ERR_ACK);
}

/* --- two connections and a slow receiver ------------------------------- */

#define QCAP	256

struct wire {
	uint8_t msg[QCAP][RCVSZ];
	uint32_t len[QCAP];
	unsigned int head, tail;
};

struct end {
	struct sdp_conn c;
	struct wire *out;	/* to the peer */
	uint32_t held;		/* consumed buffers not reposted */
	uint64_t sent, rcvd;	/* stream bytes */
	int fin;
};

static struct wire w_ab, w_ba;

static uint8_t pattern(uint64_t off)
{
	return (uint8_t)(off * 31 + (off >> 8));
}

static int end_send(struct end *e, uint8_t mid, uint32_t plen)
{
	struct wire *w = e->out;
	uint8_t *m = w->msg[w->tail % QCAP];
	uint32_t i;
	int n;

	assert_true(w->tail - w->head < QCAP);
	for (i = 0; i < plen; i++)
		m[SDP_BSDH_LEN + i] = pattern(e->sent + i);
	n = sdp_conn_tx(&e->c, m, mid, 0, plen);
	if (n < 0)
		return 0;
	assert_true(e->c.tx_credits >= 0);
	w->len[w->tail++ % QCAP] = (uint32_t)n;
	if (mid == SDP_MID_DATA)
		e->sent += plen;
	return 1;
}

/* deliver one message from w to e */
static int end_recv(struct end *e, struct wire *w)
{
	struct sdp_rx rx;
	const uint8_t *m;
	size_t i;

	if (w->head == w->tail)
		return 0;
	m = w->msg[w->head % QCAP];
	if (sdp_conn_rx(&e->c, m, w->len[w->head % QCAP], &rx))
		fail_msg("rx refused: %s", sdp_err_name(e->c.error));
	w->head++;
	e->held++;
	if (rx.kind == SDP_RX_DATA)
		for (i = 0; i < rx.len; i++, e->rcvd++)
			if (m[rx.off + i] != pattern(e->rcvd))
				fail_msg("byte %llu corrupted",
					 (unsigned long long)e->rcvd);
	if (rx.kind == SDP_RX_DISCONN)
		e->fin = 1;
	return 1;
}

static void end_repost(struct end *e)
{
	sdp_conn_rx_posted(&e->c, e->held);
	e->held = 0;
}

static uint32_t rng_state;

static uint32_t rng(void)
{
	rng_state = rng_state * 1103515245u + 12345u;
	return rng_state >> 16;
}

static void stream(uint32_t nbuf_a, uint32_t nbuf_b, uint64_t total,
		   uint32_t seed)
{
	struct end a = { .out = &w_ab }, b = { .out = &w_ba };
	unsigned int steps, idle = 0;

	rng_state = seed;
	memset(&w_ab, 0, sizeof(w_ab));
	memset(&w_ba, 0, sizeof(w_ba));
	sdp_conn_init(&a.c, RCVSZ, RCVSZ, nbuf_a, nbuf_b);
	sdp_conn_init(&b.c, RCVSZ, RCVSZ, nbuf_b, nbuf_a);
	for (steps = 0; !(sdp_conn_closed(&a.c) && sdp_conn_closed(&b.c));
	     steps++) {
		int did = 0;

		if (steps > 2000000)
			fail_msg("no end after %u steps", steps);
		/* a: the writer, reposts at once */
		while (a.sent < total && sdp_conn_tx_room(&a.c)) {
			uint64_t left = total - a.sent;
			uint32_t n = 1 + rng() % (RCVSZ - SDP_BSDH_LEN);

			did |= end_send(&a, SDP_MID_DATA,
					left < n ? (uint32_t)left : n);
		}
		if (a.sent == total && !a.c.fin_sent)
			did |= end_send(&a, SDP_MID_DISCONN, 0);
		if (sdp_conn_want_update(&a.c))
			did |= end_send(&a, SDP_MID_DATA, 0);
		/* the wire delivers a few each way */
		while (rng() % 4 && end_recv(&b, &w_ab))
			did = 1;
		while (rng() % 2 && end_recv(&a, &w_ba))
			did = 1;
		end_repost(&a);
		/* b: the reader, slow to repost */
		if (b.held && (rng() % 8 == 0 || idle > 2)) {
			end_repost(&b);
			did = 1;
		}
		if (sdp_conn_want_update(&b.c))
			did |= end_send(&b, SDP_MID_DATA, 0);
		if (b.fin && !b.c.fin_sent)
			did |= end_send(&b, SDP_MID_DISCONN, 0);
		if (did || w_ab.head != w_ab.tail || w_ba.head != w_ba.tail)
			idle = 0;
		else if (++idle > 10)
			fail_msg("stalled: sent %llu rcvd %llu credits %d/%d "
				 "posted %u/%u", (unsigned long long)a.sent,
				 (unsigned long long)b.rcvd, a.c.tx_credits,
				 b.c.tx_credits, a.c.rx_posted, b.c.rx_posted);
		assert_true(a.c.rx_posted <= nbuf_a);
		assert_true(b.c.rx_posted + b.held <= nbuf_b);
	}
	assert_int_equal(b.rcvd, total);
	assert_int_equal(a.c.tx_bytes, total);
	assert_int_equal(b.c.rx_bytes, total);
	assert_true(b.c.credit_updates_tx > 0);
	while (end_recv(&a, &w_ba) || end_recv(&b, &w_ab))
		;
	assert_int_equal(a.c.error, SDP_ERR_NONE);
	assert_int_equal(b.c.error, SDP_ERR_NONE);
}

static void test_stream_back_pressure(void **state)
{
	static const uint32_t bufs[][2] = {
		{ 64, 64 }, { 8, 8 }, { 4, 4 }, { 3, 3 }, { 3, 16 },
		{ 16, 3 }, { 5, 7 },
	};
	unsigned int i, s;

	(void)state;
	for (i = 0; i < sizeof(bufs) / sizeof(bufs[0]); i++)
		for (s = 1; s <= 4; s++)
			stream(bufs[i][0], bufs[i][1], 1000000 + s * 777,
			       s * 7919 + i);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_err_names),
		cmocka_unit_test(test_tx_bsdh_bytes),
		cmocka_unit_test(test_tx_credits_and_reserve),
		cmocka_unit_test(test_tx_refused),
		cmocka_unit_test(test_rx_kinds),
		cmocka_unit_test(test_rx_flags),
		cmocka_unit_test(test_rx_bad_header),
		cmocka_unit_test(test_rx_bad_len),
		cmocka_unit_test(test_rx_bad_mid),
		cmocka_unit_test(test_rx_bad_mseq),
		cmocka_unit_test(test_rx_bad_ack),
		cmocka_unit_test(test_rx_credits_lie_low),
		cmocka_unit_test(test_rx_credits_lie_high),
		cmocka_unit_test(test_rx_after_disconn),
		cmocka_unit_test(test_disconn_both_ways),
		cmocka_unit_test(test_abort),
		cmocka_unit_test(test_update_cadence),
		cmocka_unit_test(test_mseq_wrap),
		cmocka_unit_test(test_stream_back_pressure),
	};

	return cmocka_run_group_tests_name("sdp_conn", tests, NULL, NULL);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer: one RDS connection's send side (rds_conn) under any order of
 * queueing, sending, acknowledging (the peer's real ACK or any 64-bit
 * value), resetting, cancelling and map changes, every SEND fed to the
 * peer's reassembler (rds_frag).  Each record is op:1, arg:2 (big-endian).
 * Checked: the peer never drops a SEND we built; it completes each
 * message once, in sequence order, with its bytes; a message is released
 * with err 0 only after the peer had it, ECANCELED only if never sent;
 * the byte counts add up; at the end, with the peer's ACKs, every message
 * not cancelled has reached the peer and been released.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ulp/rds/rds_conn.h"
#include "ulp/rds/rds_frag.h"

#define check(c)	do { if (!(c)) __builtin_trap(); } while (0)

#define MAXSEQ		4096

static struct rds_conn c;
static struct rds_frag fr;
static uint8_t sendbuf[RDS_SEND_MAX];
static uint8_t msgbuf[70000];
static uint8_t delivered[MAXSEQ + 1], released[MAXSEQ + 1];
static uint8_t cancelled[MAXSEQ + 1];
static uint32_t lens[MAXSEQ + 1];
static uint64_t last_delivered;
static int ready;

static void on_release(void *arg, struct rds_cmsg *m, int err)
{
	(void)arg;
	check(m->seq >= 1 && m->seq <= MAXSEQ && !released[m->seq]);
	released[m->seq] = 1;
	if (err == 0) {
		check(delivered[m->seq]);
	} else {
		check(err == ECANCELED && !delivered[m->seq]);
		cancelled[m->seq] = 1;
	}
}

/* Message seq's byte k is (seq * 31 + k) mod 256: a ramp read from
 * (seq * 31) mod 256 on (filled and compared whole, not byte by byte) */
static uint8_t ramp[20000 + 256];

static const uint8_t *pattern(uint64_t seq)
{
	uint32_t k;

	if (!ramp[1])
		for (k = 0; k < sizeof(ramp); k++)
			ramp[k] = (uint8_t)k;
	return ramp + (seq * 31) % 256;
}

static void fill(uint64_t seq, uint32_t len)
{
	memcpy(msgbuf, pattern(seq), len);
}

static void check_bytes(void)
{
	const struct rds_cmsg *m;
	uint64_t b = 0, s = 0;

	for (m = c.head; m; m = m->next) {
		b += m->len;
		if (m->sent)
			s += m->len;
	}
	check(b == c.bytes && s == c.sent_bytes);
}

/* Build one SEND and give it to the peer; 0 when nothing went. */
static int step(void)
{
	struct rds_tx tx;
	struct rds_in in;

	if (rds_conn_next(&c, sendbuf, NULL, &tx) == RDS_TX_NONE)
		return 0;
	check(tx.len >= RDS_HDR_LEN && tx.len <= RDS_SEND_MAX);
	check(rds_frag_input(&fr, sendbuf, tx.len, &in) == RDS_DROP_NONE);
	if (in.kind == RDS_IN_MSG) {
		uint64_t q = in.hdr.seq;

		check(q > last_delivered && q <= MAXSEQ && !delivered[q]);
		check(in.len == lens[q]);
		check(!memcmp(in.data, pattern(q), in.len));
		delivered[q] = 1;
		last_delivered = q;
		rds_conn_rx_msg(&c, q, in.ack_required);
	} else if (in.kind == RDS_IN_DUP) {
		check(delivered[in.hdr.seq]);
	} else if (in.kind == RDS_IN_CONG_BAD) {
		check(0);
	}
	return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t i;
	uint64_t q;

	if (!ready) {
		check(rds_frag_init(&fr) == 0);
		ready = 1;
	}
	rds_conn_init(&c, on_release, NULL);
	rds_frag_reset(&fr);
	fr.next_rx = 0;
	fr.ack_valid = false;
	memset(delivered, 0, sizeof(delivered));
	memset(released, 0, sizeof(released));
	memset(cancelled, 0, sizeof(cancelled));
	last_delivered = 0;
	for (i = 0; i + 3 <= size; i += 3) {
		uint16_t arg = (uint16_t)(data[i + 1] << 8 | data[i + 2]);

		switch (data[i] % 8) {
		case 0: {	/* queue arg % 20000 bytes (ports by arg) */
			struct iovec iov = { msgbuf, arg % 20000u };

			if (c.next_tx_seq > MAXSEQ)
				break;
			fill(c.next_tx_seq, (uint32_t)iov.iov_len);
			lens[c.next_tx_seq] = (uint32_t)iov.iov_len;
			check(rds_conn_queue(&c, (uint16_t)(1 + arg % 3),
					     (uint16_t)(arg % 5), &iov, 1,
					     (void *)(uintptr_t)(1 + arg % 2))
			      == 0);
			break;
		}
		case 1:		/* send up to arg % 64 SENDs */
		case 2:
			for (q = 0; q < arg % 64u && step(); q++)
				;
			break;
		case 3:		/* the peer's ACK */
			if (fr.ack_valid)
				rds_conn_ack(&c, fr.ack_next);
			break;
		case 4:		/* any ACK */
			rds_conn_ack(&c, (uint64_t)arg * (data[i] >> 3 | 1));
			break;
		case 5:		/* the connection drops */
			rds_conn_reset(&c);
			rds_frag_reset(&fr);
			break;
		case 6:
			rds_conn_cancel(&c, (void *)(uintptr_t)(1 + arg % 2),
					(uint16_t)(arg % 5));
			break;
		case 7:
			if (arg & 1)
				rds_conn_cong_changed(&c);
			else
				rds_conn_forget(&c, (void *)(uintptr_t)2);
			break;
		}
		check_bytes();
	}
	/* the end: everything reaches the peer and is released, the
	 * peer's ACKs opening the window (RDS_CONN_WINDOW fragments
	 * unacknowledged at most) until nothing more goes */
	for (;;) {
		unsigned int before;
		int sent = 0;

		while (step())
			sent++;
		before = c.inflight;
		if (fr.ack_valid)
			rds_conn_ack(&c, fr.ack_next);
		if (!sent && c.inflight == before)
			break;		/* nothing went, nothing was freed */
	}
	check(c.head == NULL && c.bytes == 0 && c.sent_bytes == 0);
	for (q = 1; q < c.next_tx_seq; q++)
		check(released[q] && (delivered[q] || cancelled[q]));
	rds_conn_fini(&c);
	return 0;
}

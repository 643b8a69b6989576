// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer: a hostile SDP peer.  Bytes 0-1 are our receive buffers
 * (1..64) and the peer's Hello bufs; then a script of operations, each an
 * opcode byte and its arguments:
 *   0 L bytes[L]        a raw message of L bytes (L < 64)
 *   1 m b d a l         a plausible message: MID m (from a table), bufs b,
 *                       mseq next + d (signed, mostly 0), mseq_ack our
 *                       tx_mseq - a % 4 (a >= 0xf0: raw), payload l
 *   2 l                 we send Data of l bytes
 *   3 k                 we send an update, DisConn, Abort or ChRcvBufAck
 *   4 n                 we repost n % 8 of the buffers consumed
 * Invariants: our buffers, posted and consumed, stay what we have
 * (rx_posted never wraps); a failed connection stays failed the same
 * way; we never send without a credit, nor Data into the reserve.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ulp/sdp/sdp_conn.h"

#define check(c)	do { if (!(c)) __builtin_trap(); } while (0)

#define RCVSZ	256

static const uint8_t mids[] = {
	SDP_MID_DATA, SDP_MID_DATA, SDP_MID_DATA, SDP_MID_DISCONN,
	SDP_MID_ABORT, SDP_MID_CHRCVBUF, SDP_MID_CHRCVBUF_ACK,
	SDP_MID_SRCAVAIL, SDP_MID_HELLO, 0x42,
};

struct run {
	struct sdp_conn c;
	uint32_t nbufs, held;
	enum sdp_err failed;
	const uint8_t *p, *end;
};

static int next(struct run *r, uint8_t *v)
{
	if (r->p >= r->end)
		return 0;
	*v = *r->p++;
	return 1;
}

static void rx(struct run *r, const uint8_t *msg, size_t len)
{
	struct sdp_rx out;
	uint32_t posted = r->c.rx_posted;
	int rc = sdp_conn_rx(&r->c, msg, len, &out);

	if (r->failed != SDP_ERR_NONE) {
		check(rc == -1 && r->c.error == r->failed);
		check(r->c.rx_posted == posted);
		return;
	}
	if (rc) {
		check(r->c.error > SDP_ERR_NONE && r->c.error < SDP_ERR_MAX);
		check(r->c.rx_posted == posted);
		r->failed = r->c.error;
		return;
	}
	check(r->c.error == SDP_ERR_NONE);
	check(posted > 0 && r->c.rx_posted == posted - 1);
	check(out.off == SDP_BSDH_LEN && out.off + out.len == len);
	check(len <= r->c.rx_size);
	r->held++;
}

static void rx_plausible(struct run *r)
{
	uint8_t m, b, d, a, l, msg[SDP_BSDH_LEN + UINT8_MAX];
	struct sdp_bsdh h;
	size_t len;

	if (!next(r, &m) || !next(r, &b) || !next(r, &d) || !next(r, &a) ||
	    !next(r, &l))
		return;
	len = SDP_BSDH_LEN + l;
	h = (struct sdp_bsdh){
		.mid = mids[m % sizeof(mids)],
		.flags = m >> 6,
		.bufs = b,
		.len = (uint32_t)len,
		.mseq = r->c.rx_mseq + 1 + (d < 0xf8 ? 0 : (uint32_t)(int8_t)d),
		.mseq_ack = a >= 0xf0 ? (uint32_t)a << 24 | a :
			    r->c.tx_mseq - a % 4,
	};
	sdp_bsdh_put(msg, &h);
	memset(msg + SDP_BSDH_LEN, 0, l);
	rx(r, msg, len);
}

static void tx(struct run *r, uint8_t mid, uint32_t plen)
{
	uint8_t buf[RCVSZ];
	struct sdp_bsdh h;
	int32_t credits = r->c.tx_credits;
	uint32_t room = sdp_conn_tx_room(&r->c), mseq = r->c.tx_mseq;
	int n;

	check(room == 0 || (int32_t)room == credits - SDP_CREDIT_RESERVE);
	n = sdp_conn_tx(&r->c, buf, mid, 0, plen);
	if (n < 0) {
		check(errno == EAGAIN || errno == EPIPE || errno == EINVAL ||
		      errno == EMSGSIZE);
		check(r->c.tx_mseq == mseq && r->c.tx_credits == credits);
		return;
	}
	check(credits >= 1 && r->c.tx_credits == credits - 1);
	check(mid != SDP_MID_DATA || !plen ||
	      credits > SDP_CREDIT_RESERVE);
	check(mid != SDP_MID_DATA || !plen || room > 0);
	check(r->c.tx_mseq == mseq + 1);
	check(sdp_bsdh_get(buf, (size_t)n, &h) == 0);
	check(h.mid == mid && h.mseq == mseq + 1 &&
	      h.mseq_ack == r->c.rx_mseq && h.len == SDP_BSDH_LEN + plen);
	check(h.bufs == (r->c.rx_posted > 0xffff ? 0xffff : r->c.rx_posted));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t ctl[] = {
		SDP_MID_DATA, SDP_MID_DISCONN, SDP_MID_ABORT,
		SDP_MID_CHRCVBUF_ACK,
	};
	struct run r;
	uint8_t op, v, raw[64];

	if (size < 2)
		return 0;
	memset(&r, 0, sizeof(r));
	r.nbufs = data[0] % 64 + 1;
	sdp_conn_init(&r.c, RCVSZ, RCVSZ, r.nbufs, data[1]);
	r.p = data + 2;
	r.end = data + size;
	while (next(&r, &op)) {
		switch (op % 5) {
		case 0:
			if (!next(&r, &v))
				break;
			v %= sizeof(raw);
			if ((size_t)(r.end - r.p) < v)
				break;
			memcpy(raw, r.p, v);
			r.p += v;
			rx(&r, raw, v);
			break;
		case 1:
			rx_plausible(&r);
			break;
		case 2:
			if (next(&r, &v))
				tx(&r, SDP_MID_DATA, v);
			break;
		case 3:
			if (next(&r, &v))
				tx(&r, ctl[v % sizeof(ctl)],
				   v % sizeof(ctl) == 3 ? 4 : 0);
			break;
		case 4:
			if (!next(&r, &v))
				break;
			v %= 8;
			if (v > r.held)
				v = (uint8_t)r.held;
			sdp_conn_rx_posted(&r.c, v);
			r.held -= v;
			break;
		}
		check(r.c.rx_posted + r.held == r.nbufs);
		check(r.c.error == r.failed);
		check(r.c.tx_credits >= 0);
		if (sdp_conn_want_update(&r.c))
			check(r.c.tx_credits >= 1 && !r.failed &&
			      r.c.rx_posted > 0);
	}
	return 0;
}

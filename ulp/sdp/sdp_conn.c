// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * One SDP connection's message layer (sdp_conn.h): sequence, credits,
 * credit-only updates, DisConn and AbortConn.
 *
 * Sequence numbers wrap: every comparison is of a 32-bit difference.
 *
 * What the peer may send is bounded by our last advertisement: it knows
 * of adv_bufs buffers as of mseq adv_ack, so it may still send
 * adv_bufs - (rx_mseq - adv_ack) messages ("its view").  Each later
 * advertisement gives at least as much (buffers only come back), so the
 * last one bounds every peer, however late it saw it.
 *
 * A credit-only update is an empty Data message; it may go, and arrive,
 * after a DisConn (the half-closed side still receives and must hand back
 * credits), never after an abort.
 */
#include <errno.h>

#include "inet/byteorder.h"
#include "ulp/sdp/sdp_conn.h"

#define CHRCVBUF_PAYLOAD	4	/* be32: the new size */

static const char *const sdp_err_names[SDP_ERR_MAX] = {
	[SDP_ERR_NONE] = "none",
	[SDP_ERR_HEADER] = "bad_header",
	[SDP_ERR_MID] = "bad_mid",
	[SDP_ERR_MSEQ] = "bad_mseq",
	[SDP_ERR_ACK] = "bad_ack",
	[SDP_ERR_CREDITS] = "bad_credits",
	[SDP_ERR_LEN] = "bad_len",
	[SDP_ERR_AFTER_DISCONN] = "data_after_disconn",
};

const char *sdp_err_name(enum sdp_err e)
{
	if ((unsigned int)e >= SDP_ERR_MAX)
		return "unknown";
	return sdp_err_names[e];
}

static uint16_t bufs_field(uint32_t n)
{
	return n > UINT16_MAX ? UINT16_MAX : (uint16_t)n;
}

void sdp_conn_init(struct sdp_conn *c, uint32_t rx_size, uint32_t tx_size,
		   uint32_t rx_posted, uint32_t peer_bufs)
{
	*c = (struct sdp_conn){
		.rx_size = rx_size,
		.tx_size = tx_size,
		.tx_credits = (int32_t)bufs_field(peer_bufs),
		.rx_posted = rx_posted,
		.adv_bufs = bufs_field(rx_posted),
	};
}

/* the messages the peer may still send us (see the top of the file) */
static uint32_t peer_view(const struct sdp_conn *c)
{
	return c->adv_bufs - (c->rx_mseq - c->adv_ack);
}

static int aborted(const struct sdp_conn *c)
{
	return c->abort_sent || c->abort_rcvd || c->error != SDP_ERR_NONE;
}

/* The kind of a received message, or 0 for a MID we refuse. */
static enum sdp_rx_kind rx_kind(uint8_t mid)
{
	switch (mid) {
	case SDP_MID_DATA:		return SDP_RX_DATA;
	case SDP_MID_DISCONN:		return SDP_RX_DISCONN;
	case SDP_MID_ABORT:		return SDP_RX_ABORT;
	case SDP_MID_CHRCVBUF:		return SDP_RX_CHRCVBUF;
	case SDP_MID_CHRCVBUF_ACK:	return SDP_RX_CHRCVBUF_ACK;
	}
	/* Hello/HelloAck belong to the CM; zero-copy we never enabled */
	return 0;
}

/* Check one message against the connection; nothing changes here. */
static enum sdp_err rx_check(const struct sdp_conn *c, const uint8_t *msg,
			     size_t len, struct sdp_bsdh *h,
			     enum sdp_rx_kind *kind)
{
	uint32_t in_flight;

	if (sdp_bsdh_get(msg, len, h))
		return SDP_ERR_HEADER;
	if (len > c->rx_size)
		return SDP_ERR_LEN;
	if (h->mseq != c->rx_mseq + 1)
		return SDP_ERR_MSEQ;
	if (!c->rx_posted || (int32_t)peer_view(c) <= 0)
		return SDP_ERR_CREDITS;
	in_flight = c->tx_mseq - h->mseq_ack;
	if ((int32_t)in_flight < 0)
		return SDP_ERR_ACK;
	if (h->bufs < in_flight)
		return SDP_ERR_CREDITS;
	*kind = rx_kind(h->mid);
	if (!*kind)
		return SDP_ERR_MID;
	if ((*kind == SDP_RX_CHRCVBUF || *kind == SDP_RX_CHRCVBUF_ACK) &&
	    len < SDP_BSDH_LEN + CHRCVBUF_PAYLOAD)
		return SDP_ERR_HEADER;
	if ((c->fin_rcvd || c->abort_rcvd) &&
	    ((*kind == SDP_RX_DATA && len > SDP_BSDH_LEN) ||
	     *kind == SDP_RX_DISCONN))
		return SDP_ERR_AFTER_DISCONN;
	return SDP_ERR_NONE;
}

int sdp_conn_rx(struct sdp_conn *c, const uint8_t *msg, size_t len,
		struct sdp_rx *out)
{
	enum sdp_rx_kind kind = 0;
	struct sdp_bsdh h;
	enum sdp_err e;

	if (c->error != SDP_ERR_NONE)
		return -1;
	e = rx_check(c, msg, len, &h, &kind);
	if (e != SDP_ERR_NONE) {
		c->error = e;
		return -1;
	}
	c->rx_mseq = h.mseq;
	c->rx_posted--;
	c->tx_credits = (int32_t)(h.bufs - (c->tx_mseq - h.mseq_ack));
	c->rx_msgs++;
	if (kind == SDP_RX_DISCONN)
		c->fin_rcvd = 1;
	else if (kind == SDP_RX_ABORT)
		c->abort_rcvd = 1;
	else if (kind == SDP_RX_DATA && len == SDP_BSDH_LEN)
		c->credit_updates_rx++;
	if (kind == SDP_RX_DATA)
		c->rx_bytes += len - SDP_BSDH_LEN;
	out->kind = kind;
	out->flags = h.flags;
	out->off = SDP_BSDH_LEN;
	out->len = len - SDP_BSDH_LEN;
	return 0;
}

void sdp_conn_rx_posted(struct sdp_conn *c, uint32_t n)
{
	/* more than 2^32 buffers cannot be posted; saturate, never wrap */
	c->rx_posted = n > UINT32_MAX - c->rx_posted ? UINT32_MAX :
		       c->rx_posted + n;
}

uint32_t sdp_conn_tx_room(const struct sdp_conn *c)
{
	if (c->fin_sent || aborted(c) || c->tx_credits <= SDP_CREDIT_RESERVE)
		return 0;
	return (uint32_t)(c->tx_credits - SDP_CREDIT_RESERVE);
}

/* errno for a message sdp_conn_tx refuses, or 0 */
static int tx_check(const struct sdp_conn *c, uint8_t mid,
		    uint32_t payload_len)
{
	int32_t need = 1;

	switch (mid) {
	case SDP_MID_DATA:
		if (payload_len && (c->fin_sent || aborted(c)))
			return EPIPE;
		if (!payload_len && aborted(c))
			return EPIPE;
		if (payload_len)
			need = SDP_CREDIT_RESERVE + 1;
		break;
	case SDP_MID_DISCONN:
		if (payload_len)
			return EINVAL;
		if (c->fin_sent || aborted(c))
			return EPIPE;
		break;
	case SDP_MID_ABORT:
		if (payload_len)
			return EINVAL;
		if (c->abort_sent)
			return EPIPE;
		break;
	case SDP_MID_CHRCVBUF_ACK:
		if (payload_len != CHRCVBUF_PAYLOAD)
			return EINVAL;
		if (aborted(c))
			return EPIPE;
		break;
	default:
		return EINVAL;
	}
	if (payload_len > c->tx_size ||
	    SDP_BSDH_LEN + payload_len > c->tx_size)
		return EMSGSIZE;
	if (c->tx_credits < need)
		return EAGAIN;
	return 0;
}

int sdp_conn_tx(struct sdp_conn *c, uint8_t *buf, uint8_t mid,
		uint8_t flags, uint32_t payload_len)
{
	struct sdp_bsdh h;
	int e = tx_check(c, mid, payload_len);

	if (e) {
		errno = e;
		return -1;
	}
	h = (struct sdp_bsdh){
		.mid = mid,
		.flags = flags,
		.bufs = bufs_field(c->rx_posted),
		.len = SDP_BSDH_LEN + payload_len,
		.mseq = c->tx_mseq + 1,
		.mseq_ack = c->rx_mseq,
	};
	sdp_bsdh_put(buf, &h);
	c->tx_mseq = h.mseq;
	c->tx_credits--;
	c->adv_bufs = h.bufs;
	c->adv_ack = h.mseq_ack;
	c->tx_msgs++;
	if (mid == SDP_MID_DATA) {
		c->tx_bytes += payload_len;
		if (!payload_len)
			c->credit_updates_tx++;
	} else if (mid == SDP_MID_DISCONN) {
		c->fin_sent = 1;
	} else if (mid == SDP_MID_ABORT) {
		c->abort_sent = 1;
	}
	return (int)h.len;
}

/*
 * The peer knows of view buffers; we have rx_posted.  An update is worth
 * a message when we have at least twice what it knows of.  And when its
 * view is down to the reserve it can send no Data at all: then any
 * buffer more is worth telling, or a receiver of fewer than
 * 2 * SDP_CREDIT_RESERVE buffers would stall the stream for good (the
 * writer stops at a view of the reserve, the reader waits for twice it).
 */
int sdp_conn_want_update(const struct sdp_conn *c)
{
	uint32_t view = peer_view(c);
	int more;

	if (aborted(c) || c->tx_credits < 1 || c->rx_posted <= view)
		return 0;
	more = c->rx_posted >= 2 * (uint64_t)view ||
	       view <= SDP_CREDIT_RESERVE;
	return more;
}

int sdp_conn_closed(const struct sdp_conn *c)
{
	return c->fin_sent && c->fin_rcvd;
}

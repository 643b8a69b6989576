/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * One SDP connection's message layer (Annex A4's buffer-copy mode, as
 * OFED's ib_sdp does it): message sequence numbers, the credits that say
 * how many of the peer's receive buffers we may fill, the advertisement
 * of our own, credit-only updates, orderly close (DisConn each way, for
 * half-close) and abort.
 *
 * Pure: no I/O, no clock, no allocation.  The caller owns the RC QP, the
 * buffers and the CM (ulp/sdp/sdp_sock.c); it tells this code about every
 * message that arrives (sdp_conn_rx), every receive buffer it posts
 * (sdp_conn_rx_posted) and has it write the BSDH of every message it
 * sends (sdp_conn_tx).  Anything a peer does that the protocol forbids
 * makes sdp_conn_rx fail with a reason; the caller then aborts the
 * connection (AbortConn, then the CM's DREQ) and counts the reason.
 *
 * Sequence and credits, as OFED counts them:
 *  - our first message has mseq 1 (the Hello/HelloAck in the CM's private
 *    data carry mseq 0); each message, credit updates included, takes
 *    the next number and one of the peer's buffers;
 *  - every message carries bufs = our receive buffers posted when it is
 *    sent, and mseq_ack = the last mseq we received;
 *  - from a message with (bufs, mseq_ack) the peer's free buffers are
 *    bufs - (tx_mseq - mseq_ack): what it had, less what we sent that it
 *    had not seen;
 *  - Data goes only while more than SDP_CREDIT_RESERVE credits are left,
 *    so that a credit update, DisConn or AbortConn can always go.
 */
#ifndef IBGW_SDP_CONN_H
#define IBGW_SDP_CONN_H

#include <stddef.h>
#include <stdint.h>

#include "ulp/sdp/sdp_wire.h"

#define SDP_CREDIT_RESERVE	2

/* Why sdp_conn_rx refused a message (the connection is then aborted).
 * The names (sdp_err_name) are the counters' suffixes. */
enum sdp_err {
	SDP_ERR_NONE = 0,
	SDP_ERR_HEADER,		/* "bad_header": BSDH short, len != bytes */
	SDP_ERR_MID,		/* "bad_mid": unknown, or one we never
				 * enabled (zero-copy: SrcAvail, SinkAvail,
				 * RdmaRdCompl, SrcAvailCancel, SendSM) */
	SDP_ERR_MSEQ,		/* "bad_mseq": not the next mseq */
	SDP_ERR_ACK,		/* "bad_ack": mseq_ack beyond what we sent */
	SDP_ERR_CREDITS,	/* "bad_credits": the peer claims fewer
				 * buffers than our messages in flight, or
				 * sent more than we had advertised */
	SDP_ERR_LEN,		/* "bad_len": larger than our buffers */
	SDP_ERR_AFTER_DISCONN,	/* "data_after_disconn": Data with a
				 * payload or DisConn after its DisConn
				 * or AbortConn (a credit-only update may
				 * still come: we may still be sending) */
	SDP_ERR_MAX
};
const char *sdp_err_name(enum sdp_err e);

/* What a received message was. */
enum sdp_rx_kind {
	SDP_RX_DATA = 1,	/* payload (0 bytes: a credit update) */
	SDP_RX_DISCONN,		/* the peer's FIN: no more data from it */
	SDP_RX_ABORT,		/* the peer's RST */
	SDP_RX_CHRCVBUF,	/* asks our buffer size: answer
				 * ChRcvBufAck (sdp_conn_tx, payload 4:
				 * be32 our rx_size, unchanged) */
	SDP_RX_CHRCVBUF_ACK,	/* its answer; nothing to do */
};

struct sdp_rx {
	enum sdp_rx_kind kind;
	uint8_t flags;			/* the BSDH's */
	size_t off, len;		/* payload within the message */
};

struct sdp_conn {
	/* set by sdp_conn_init */
	uint32_t rx_size;	/* our receive buffers' size (BSDH incl.) */
	uint32_t tx_size;	/* the peer's: our largest message */
	/* sequence */
	uint32_t tx_mseq;	/* last mseq we sent */
	uint32_t rx_mseq;	/* last mseq we received */
	/* credits */
	int32_t tx_credits;	/* the peer's buffers we may fill now */
	uint32_t rx_posted;	/* our receive buffers posted now */
	uint32_t adv_bufs;	/* bufs we last advertised ... */
	uint32_t adv_ack;	/* ... with this mseq_ack */
	/* close */
	unsigned int fin_sent:1, fin_rcvd:1, abort_sent:1, abort_rcvd:1;
	enum sdp_err error;	/* why sdp_conn_rx failed, once it has */
	/* counters */
	uint64_t rx_msgs, rx_bytes, tx_msgs, tx_bytes;
	uint64_t credit_updates_tx, credit_updates_rx;
};

/*
 * rx_size: our receive buffers' size; tx_size: the peer's (its Hello's
 * localrcvsz or its HelloAck's actrcvsz); rx_posted: our buffers posted
 * when the Hello/HelloAck was sent (its bufs); peer_bufs: the bufs of the
 * peer's Hello/HelloAck, our first credits.
 */
void sdp_conn_init(struct sdp_conn *c, uint32_t rx_size, uint32_t tx_size,
		   uint32_t rx_posted, uint32_t peer_bufs);

/*
 * A message arrived in one of our posted buffers (len bytes: the RC
 * receive's byte count).  Takes that buffer from rx_posted; updates
 * rx_mseq and tx_credits.  0 with *out filled, or -1 with c->error set
 * (and every later call failing the same way).
 */
int sdp_conn_rx(struct sdp_conn *c, const uint8_t *msg, size_t len,
		struct sdp_rx *out);
/* n more receive buffers were posted. */
void sdp_conn_rx_posted(struct sdp_conn *c, uint32_t n);

/* Data messages that may be sent now (credits above the reserve), 0
 * after our DisConn or an abort either way. */
uint32_t sdp_conn_tx_room(const struct sdp_conn *c);
/*
 * Write the BSDH of a message of mid with payload_len bytes after it at
 * buf (the caller has put the payload at buf + SDP_BSDH_LEN), taking the
 * next mseq and a credit.  Returns the message's length, or -1: EAGAIN
 * without a credit (Data needs more than the reserve, others one),
 * EMSGSIZE over tx_size, EPIPE Data or DisConn after our DisConn or an
 * abort (a credit-only update, Data of 0 bytes, still goes after our
 * DisConn: the peer may still be sending), EINVAL another mid than Data,
 * DisConn, Abort, ChRcvBufAck (or DisConn/Abort with a payload,
 * ChRcvBufAck without exactly its 4).
 */
int sdp_conn_tx(struct sdp_conn *c, uint8_t *buf, uint8_t mid,
		uint8_t flags, uint32_t payload_len);
/* 1 when a credit-only update (an empty Data message) should go: we
 * have posted a good many more buffers than the peer knows of (at least
 * twice what it knows of), or any more once what it knows of is down to
 * SDP_CREDIT_RESERVE (it can send no Data then; without this a receiver
 * of fewer than 2 * SDP_CREDIT_RESERVE buffers stalls), and we have a
 * credit for it. */
int sdp_conn_want_update(const struct sdp_conn *c);
/* Both DisConns have passed: time for the CM's disconnect (DREQ). */
int sdp_conn_closed(const struct sdp_conn *c);

#endif

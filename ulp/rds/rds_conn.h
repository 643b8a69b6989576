/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The send side of one RDS connection (laddr, faddr), pure: no I/O.
 * What the kernel's send.c and ib_send.c keep per connection path:
 *
 *  - messages queued in sequence order, numbered from 1 at queue time
 *    (rds_send_queue_rm()), kept until the peer's h_ack covers them
 *    (rds_send_drop_acked()), then released with err 0;
 *  - each cut into SENDs of the 48-byte header and up to 4096 bytes,
 *    built one at a time by rds_conn_next() into the caller's buffer;
 *  - at most RDS_CONN_WINDOW data fragments unacknowledged (ACK-only
 *    frames go even then, between a message's fragments too, as the
 *    kernel's receiver takes them: both ends stalled mid-message would
 *    otherwise wait for each other);
 *  - ACK_REQUIRED on the first message, then every 9th (8 unflagged
 *    between, rds_sysctl_max_unacked_packets) or when 16 MiB went out
 *    unflagged, and ours besides: on the last message queued when
 *    earlier ones are still unacknowledged (so that a burst's end is
 *    acknowledged and released; a lone message is left to the answer's
 *    h_ack or the receiver's delayed ACK) and while more than
 *    RDS_CONN_ACKREQ_BYTES are unacknowledged, and at least every
 *    RDS_CONN_WINDOW / 4 fragments;
 *  - after a drop (rds_conn_reset()) every message sent before is sent
 *    again first, flagged RETRANSMITTED | ACK_REQUIRED
 *    (rds_send_path_reset()), and the congestion map first of all;
 *  - the receive side's ACK state: the last complete sequence received
 *    (h_ack of every SEND) and whether the peer asked for an ACK (an
 *    ACK-only frame when nothing else goes out that would carry it).
 *
 * An h_ack past the last message fully sent is clamped to it and
 * counted: the kernel would free everything it holds.
 */
#ifndef IBGW_RDS_CONN_H
#define IBGW_RDS_CONN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "ulp/rds/rds_wire.h"

#define RDS_CONN_UNACKED_PKTS	8		/* kernel's default */
#define RDS_CONN_UNACKED_BYTES	(16u << 20)	/* kernel's default */
#define RDS_CONN_ACKREQ_BYTES	(2u << 20)	/* ours: "half sndbuf" */
/*
 * Ours: at most this many data fragments sent and not yet covered by the
 * peer's h_ack, half the kernel's receive ring (RDS_IB_DEFAULT_RECV_WR,
 * 1024).  The peer reposts a receive as it takes each fragment and
 * acknowledges after, so a sender within the window never finds the
 * peer's ring empty: no RNR NAK, whose retry resends every packet after
 * it (seen: half as many packets again when a service fell behind).
 * Every RDS_CONN_WINDOW / 4 fragments one message asks for an ACK, so
 * that an unflagged tail can never fill the window (a kernel peer
 * acknowledges flagged messages only): the tail stays under a quarter,
 * and a message of 1 MiB (256 fragments) fits what is left.
 */
#define RDS_CONN_WINDOW		512u

struct rds_cmsg {
	struct rds_cmsg *next;
	uint64_t seq;
	uint16_t sport, dport;
	uint32_t len;
	uint8_t flags;		/* RDS_FLAG_* of its (next) transmission */
	bool sent;		/* its last fragment went out once */
	bool resend;		/* to go out again after a reconnect */
	bool flagged;		/* flags decided (first fragment built) */
	bool forgotten;		/* no release callback for ctx */
	uint16_t frags_out;	/* fragments sent on the current link */
	void *ctx;
	uint8_t data[];
};

enum rds_tx_kind {
	RDS_TX_NONE = 0,
	RDS_TX_ACK,		/* an ACK-only frame */
	RDS_TX_CONG,		/* a fragment of the congestion map */
	RDS_TX_DATA,		/* a fragment of a message */
};

struct rds_tx {
	enum rds_tx_kind kind;
	size_t len;		/* bytes written: 48 + data */
	bool last;		/* the last fragment of its message (or an
				 * ACK): what the kernel sends solicited */
	bool retransmit;	/* the first fragment of a resent message */
	const struct rds_cmsg *msg;	/* RDS_TX_DATA */
};

/* Called for a message leaving the queue: err 0 (acknowledged) or
 * ECANCELED (rds_conn_cancel).  The message is freed afterwards. */
typedef void (*rds_conn_release_fn)(void *arg, struct rds_cmsg *m, int err);

struct rds_conn {
	struct rds_cmsg *head, *tail;
	struct rds_cmsg *cur;	/* next to (re)send; NULL: none */
	uint32_t cur_off;	/* its data bytes built already */
	bool cur_busy;		/* cur partly built: no ack frees it */
	uint64_t next_tx_seq;	/* from 1 */
	uint64_t last_sent_seq;	/* highest seq fully built */
	unsigned int nmsgs;
	uint64_t bytes;		/* data bytes queued or unacknowledged */
	uint64_t sent_bytes;	/* of those, sent and unacknowledged */
	unsigned int unacked_pkts;
	uint64_t unacked_bytes;
	unsigned int inflight;	/* data fragments sent, not acknowledged */
	unsigned int since_flag;	/* fragments since an ACK_REQUIRED */
	/* congestion map */
	bool cong_pending;	/* send ours at the next message boundary */
	bool cong_busy;		/* its second fragment is owed */
	uint8_t cong_snap[RDS_CONG_MAP_BYTES];
	/* receive side's acknowledgement */
	bool ack_valid;
	uint64_t ack_seq;	/* the last complete message received */
	bool ack_pending;	/* the peer asked: owe it an ACK */
	uint64_t ack_sent;	/* the h_ack we last sent */
	bool ack_fresh;		/* a new link, nothing received on it yet:
				 * h_ack 0 (rds_conn_reset) */
	/* counters */
	uint64_t acks_beyond;
	uint64_t retransmits;
	rds_conn_release_fn release;
	void *arg;
};

void rds_conn_init(struct rds_conn *c, rds_conn_release_fn release,
		   void *arg);
/* Free every message without release. */
void rds_conn_fini(struct rds_conn *c);
/* Queue a message of the bytes in iov (len in all, at most
 * RDS_MAX_MSG_SIZE): 0, or -1 with errno EMSGSIZE, ENOMEM. */
int rds_conn_queue(struct rds_conn *c, uint16_t sport, uint16_t dport,
		   const struct iovec *iov, int iovcnt, void *ctx);
/* Is anything to be sent or acknowledged? */
bool rds_conn_busy(const struct rds_conn *c);
/* Is a SEND ready for rds_conn_next()? */
bool rds_conn_ready(const struct rds_conn *c);
/* Our congestion map changed: send it at the next message boundary. */
void rds_conn_cong_changed(struct rds_conn *c);
/* A complete message seq came in (ack_required as flagged). */
void rds_conn_rx_msg(struct rds_conn *c, uint64_t seq, bool ack_required);
/* Has a message come in since the last h_ack we sent carried it? */
bool rds_conn_ack_owed(const struct rds_conn *c);
/* Send an ACK-only frame unless data goes first and carries it. */
void rds_conn_want_ack(struct rds_conn *c);
/* The peer's h_ack: release what it covers.  1 if it was past what we
 * sent (clamped, counted in acks_beyond), else 0. */
int rds_conn_ack(struct rds_conn *c, uint64_t ack);
/*
 * Build the next SEND into buf (RDS_SEND_MAX bytes); cong is our map
 * (read when the map's first fragment is built).  The SEND's kind,
 * RDS_TX_NONE when nothing is to go.
 */
enum rds_tx_kind rds_conn_next(struct rds_conn *c, uint8_t *buf,
			       const uint8_t *cong, struct rds_tx *tx);
/* The connection went down: resend what was sent, map first. */
void rds_conn_reset(struct rds_conn *c);
/* Release (ECANCELED) ctx's messages to dport not yet begun; the number. */
unsigned int rds_conn_cancel(struct rds_conn *c, void *ctx, uint16_t dport);
/* ctx is gone: its messages go on, released with ctx NULL and
 * forgotten set. */
void rds_conn_forget(struct rds_conn *c, void *ctx);
/* Messages sent and not acknowledged; messages not yet sent. */
unsigned int rds_conn_unacked(const struct rds_conn *c);
unsigned int rds_conn_queued(const struct rds_conn *c);

#endif

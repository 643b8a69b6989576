/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The soft provider's RC transport: one queue pair's requester and
 * responder as an HCA runs them (IBTA vol. 1 chapter 9.7 and 9.9), with no
 * I/O and no clock of its own, so that unit tests can run two of them
 * through a lossy, reordering, duplicating link in memory.
 *
 * The provider (prov_soft.c) owns the sockets and rings: it hands every
 * packet that arrives for the QP to soft_rc_input(), calls
 * soft_rc_progress() when soft_rc_deadline() has passed or a transmission
 * was refused (and after each batch of input, which sends the coalesced
 * ACK), and gives the time in microseconds of a monotonic clock to every
 * call that takes now_us.  Packets leave through ops->xmit as whole
 * native IB packets, LRH through VCRC (ib_rc_build), LID routed, no GRH.
 *
 * What it does, as an HCA does it:
 *  - requester: SEND [with immediate], RDMA WRITE [with immediate], RDMA
 *    READ, split into path-MTU packets with FIRST/MIDDLE/LAST/ONLY
 *    opcodes, PSNs from sq_psn, AckReq on the last packet of each
 *    message (and at least every SOFT_RC_ACKREQ_EVERY packets); a send
 *    window of SOFT_RC_WINDOW packets unacknowledged; data read from the
 *    caller's memory at transmission time (again on retransmission, as an
 *    HCA DMA-reads it), inline data copied at post time;
 *  - ACKs and NAKs: a coalesced ACK acknowledges everything up to its PSN
 *    (completing those work requests, signaled ones with a completion);
 *    a read response acknowledges what is before it implicitly; a NAK
 *    PSN sequence error restarts from the PSN it names (go-back-N); a
 *    retransmission timer of 4.096 us * 2^timeout restarts from the
 *    oldest unacknowledged PSN, retry_cnt times, then RETRY_EXC_ERR; an
 *    RNR NAK waits its timer and retries rnr_retry times (7: for ever),
 *    then RNR_RETRY_EXC_ERR; the other NAKs complete the request with
 *    REM_INV_REQ_ERR, REM_ACCESS_ERR or REM_OP_ERR; any of these puts the
 *    QP in the error state;
 *  - responder: expected PSN and MSN; a request at the expected PSN is
 *    executed, one ahead of it is dropped and answered with one NAK PSN
 *    sequence error (not again until the expected one arrives), a
 *    duplicate (behind it, within the window) is not executed again but
 *    ACKed (a duplicate READ is answered again from memory); a SEND or
 *    WRITE with immediate without a posted receive gets an RNR NAK with
 *    min_rnr_timer; a SEND longer than its receive gets NAK invalid
 *    request and a LOC_LEN_ERR completion; a bad rkey, range or rights
 *    gets NAK remote access error; an opcode out of sequence (a MIDDLE
 *    without a FIRST) gets NAK invalid request; at most
 *    max_dest_rd_atomic reads are kept for re-reading;
 *  - every packet not for this connection (another destination QP, a
 *    source LID not the peer's, a P_Key not the QP's, an opcode not RC,
 *    a malformed header) is dropped and counted, never acted on.
 *
 * Choices where the IBTA leaves room:
 *  - ACK coalescing: executing a request (other than a READ, whose
 *    responses carry the AETH) only owes an ACK for ePSN - 1; the owed
 *    ACK goes out from soft_rc_progress(), so a batch of input costs one
 *    ACK whatever its AckReq bits say, and from soft_rc_input() as soon as
 *    32 packets have been executed without one, which keeps the
 *    requester's window open during a long batch.  With an ACK delay
 *    (soft_rc_conn.ack_delay_us, as HCAs coalesce ACKs) the owed ACK
 *    waits until the delay has passed since the first request it
 *    acknowledges, until 16 packets are owed, or until a request of
 *    our own is posted (it goes just before that request, so that the
 *    peer takes both in one wake-up and a requester that waits for its
 *    send's completion before answering never waits out the delay):
 *    one-way traffic then costs one ACK per 16 messages or per delay
 *    instead of one per batch of input.  A duplicate request owes one at once (the
 *    requester is retransmitting).  NAKs go out at once.  An ACK waits
 *    behind read responses still to be sent (the requester would take
 *    it for an implied NAK of the read);
 *  - an ACK beyond an RDMA READ whose responses have not all arrived is
 *    an implied NAK: the read is asked again for what is missing (the
 *    responder answers a duplicate READ from memory again, starting with
 *    a FIRST or ONLY at the PSN asked for);
 *  - NAK invalid request, remote access error and remote operational
 *    error put the responder in the error state too, after the NAK (as
 *    HCAs do); a duplicate READ older than the max_dest_rd_atomic reads
 *    remembered gets NAK invalid request and leaves the responder as it
 *    is;
 *  - unsignaled requests keep their send-queue slots until a later
 *    signaled one completes (fabric.h); a post is refused (ENOMEM) when
 *    the queue's requests plus its completions not yet polled reach
 *    max_send (max_recv for receives), so the completion ring never
 *    overflows;
 *  - limits: max_send and max_recv 16384, max_inline 4096,
 *    max_dest_rd_atomic 64, a message at most 2^31 bytes and 2^20
 *    packets (EINVAL past them; a READ request past them gets NAK
 *    invalid request), so one message never spans half the PSN space.
 *
 * Not done: atomics, SEND with invalidate, memory windows, SRQ, APM,
 * end-to-end credits (ACKs carry "invalid credit count").
 */
#ifndef IBGW_SOFT_RC_H
#define IBGW_SOFT_RC_H

#include <stddef.h>
#include <stdint.h>

#include "fabric/fabric.h"

#define SOFT_RC_WINDOW		512	/* packets in flight, unacknowledged:
					 * 2 MiB at 4096, half of a QP ring */
#define SOFT_RC_ACKREQ_EVERY	64
#define SOFT_RC_MAX_SGE		16

struct soft_rc;

struct soft_rc_ops {
	/* Send one whole packet; 0, or -1 when the link has no room now:
	 * the engine keeps it and sends again from soft_rc_progress(). */
	int (*xmit)(void *ctx, const uint8_t *pkt, size_t len);
	/* Memory for [addr, addr + len) under key: an lkey (remote 0) or an
	 * rkey (remote 1) whose region allows access (FAB_ACCESS_*; 0 is
	 * local read).  The pointer to addr, or NULL when the key does not
	 * exist, the range is outside its region or the rights are
	 * missing.  len may be 0 (then addr need not be inside). */
	void *(*mr_find)(void *ctx, uint32_t key, int remote, uint64_t addr,
			 uint64_t len, unsigned int access);
};

/* Queue sizes (0: defaults of 128 each, 1 SGE, no inline). */
struct soft_rc_cfg {
	uint32_t max_send;
	uint32_t max_recv;
	uint32_t max_sge;
	uint32_t max_inline;
};

/* Everything the CM negotiated: RTR and RTS in one step. */
struct soft_rc_conn {
	uint32_t qpn;		/* ours */
	uint32_t dest_qpn;	/* the peer's */
	uint16_t slid;		/* our port's LID */
	uint16_t dlid;		/* the peer's */
	uint16_t pkey;		/* carried in every BTH, checked on input */
	uint8_t sl;
	uint8_t path_mtu;	/* IB MTU code 1..5 */
	uint32_t sq_psn;	/* the first PSN we send */
	uint32_t rq_psn;	/* the first PSN we expect from the peer */
	uint8_t timeout;	/* local ACK timeout: 4.096 us * 2^n; 0: none */
	uint8_t retry_cnt;	/* 0..7 */
	uint8_t rnr_retry;	/* 0..7, 7: for ever */
	uint8_t min_rnr_timer;	/* the code our RNR NAKs carry, 0..31 */
	uint8_t max_rd_atomic;	/* reads we may have outstanding (>= 1) */
	uint8_t max_dest_rd_atomic; /* reads we serve (>= 1) */
	/* how long an owed ACK may wait for more requests to acknowledge
	 * with it (at most 1/64 of the local ACK timeout; 0: one ACK at
	 * the end of each batch of input) */
	uint32_t ack_delay_us;
};

enum soft_rc_state {
	SOFT_RC_RESET = 0,	/* made; receives may be posted */
	SOFT_RC_RTS,		/* connected */
	SOFT_RC_ERROR,
};

struct soft_rc_stats {
	uint64_t tx_packets;		/* every packet xmit accepted */
	uint64_t rx_packets;		/* every packet given to input */
	uint64_t retransmits;		/* request packets sent again */
	uint64_t timeouts;		/* retransmission timer expiries */
	uint64_t seq_naks_sent, seq_naks_rcvd;	/* PSN sequence error */
	uint64_t rnr_naks_sent, rnr_naks_rcvd;
	/* ACK packets of type ACK (not NAKs, not read responses); rcvd
	 * only those that acknowledged something new */
	uint64_t acks_sent, acks_rcvd;
	uint64_t dup_requests;		/* duplicates seen by the responder */
	uint64_t out_of_seq;		/* requests ahead of the expected PSN */
	uint64_t ghost_acks;		/* ACKs, NAKs and read responses for
					 * PSNs never sent: dropped */
	uint64_t drop_not_ours;		/* wrong QPN, SLID or P_Key */
	uint64_t drop_malformed;	/* ib_rc_parse refused it */
	uint64_t drop_state;		/* arrived in RESET or ERROR */
	uint64_t naks_sent;		/* invalid request, access, op error */
	uint64_t bad_responses;		/* a read response for a PSN that is
					 * no read's, or of the wrong opcode
					 * or length: dropped */
};

/* NULL with errno EINVAL (sizes over the limits) or ENOMEM. */
struct soft_rc *soft_rc_new(const struct soft_rc_cfg *cfg,
			    const struct soft_rc_ops *ops, void *ctx);
void soft_rc_free(struct soft_rc *rc);
/* RESET -> RTS; -1 with errno EINVAL (bad MTU, counts) or EISCONN. */
int soft_rc_connect(struct soft_rc *rc, const struct soft_rc_conn *c,
		    uint64_t now_us);
enum soft_rc_state soft_rc_state(const struct soft_rc *rc);

/* As fab_qp_post_send/post_recv (fabric.h).  Sends before RTS: -1 EINVAL.
 * In the error state requests are accepted and flushed. */
int soft_rc_post_send(struct soft_rc *rc, const struct fab_rc_wr *wr, int n,
		      uint64_t now_us);
int soft_rc_post_recv(struct soft_rc *rc, const struct fab_recv_wr *wr,
		      int n);
/* One packet from the link (LRH..VCRC, CRCs already checked by the
 * switch). */
void soft_rc_input(struct soft_rc *rc, const uint8_t *pkt, size_t len,
		   uint64_t now_us);
/* Timers, the coalesced ACK, and whatever xmit refused before. */
void soft_rc_progress(struct soft_rc *rc, uint64_t now_us);
/* When soft_rc_progress() must run next (microseconds, same clock):
 * UINT64_MAX when nothing waits on time; <= now when it must run now
 * (packets wait for room, an ACK is owed and due). */
uint64_t soft_rc_deadline(const struct soft_rc *rc);
/* Completions, oldest first: 0..n. */
int soft_rc_poll(struct soft_rc *rc, struct fab_wc *wc, int n);
/* Send an owed ACK now, delay or not: before a disconnect, so that the
 * peer's last requests complete rather than flush. */
void soft_rc_ack_now(struct soft_rc *rc, uint64_t now_us);
/* Move to the error state, flushing every queued request. */
void soft_rc_set_error(struct soft_rc *rc);
const struct soft_rc_stats *soft_rc_stats(const struct soft_rc *rc);

#endif

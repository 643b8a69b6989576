// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The soft provider's RC engine (soft_rc.h says what it does).  One QP:
 * a requester (send queue, PSNs snd_una <= snd_nxt <= snd_max) and a
 * responder (receive queue, ePSN, MSN, remembered reads), sharing one
 * completion ring.
 *
 * Requester PSNs: snd_una is the oldest PSN not acknowledged, snd_nxt the
 * next one to (re)send, snd_max one past the highest ever sent.  A WQE
 * gets its first PSN when its first packet goes out (so a long queue of
 * unsent requests never spans more PSN space than the window), and keeps
 * it across retransmissions.  An RDMA READ occupies one PSN per response
 * packet; only its responses move snd_una through it, so an ACK beyond an
 * incomplete read means its responses were lost (an implied NAK) and the
 * read is asked again for what is missing.
 *
 * Responder ACK coalescing: executing a request (not a READ, whose
 * responses carry their own AETH) only owes an ACK for ePSN - 1.  The owed
 * ACK goes out from soft_rc_progress(), which the provider calls after
 * each batch of input, so a burst costs one ACK per batch, whatever its
 * AckReq bits say; within a long batch one also goes out as soon as
 * SOFT_RC_ACK_COALESCE packets have been executed without one, so the
 * requester's window keeps moving.  With an ACK delay (soft_rc_conn) the
 * owed ACK waits until ack_due, the first unacknowledged execution plus
 * the delay, until SOFT_RC_ACK_DELAYED_MAX packets are owed, or until
 * we post a request of our own (then it goes just before it); a
 * duplicate request (the requester is retransmitting) is answered at
 * once.  NAKs are sent at once.  An ACK never overtakes read responses
 * still to be sent (it would look like an implied NAK for the read).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fabric/ib_rc.h"
#include "fabric/soft_rc.h"

#define SOFT_RC_DEF_QUEUE	128
#define SOFT_RC_MAX_QUEUE	16384
#define SOFT_RC_MAX_INLINE	4096
#define SOFT_RC_MAX_RD		64	/* max_dest_rd_atomic we accept */
/* one message's PSNs, far below the 2^23 half space PSN compares need */
#define SOFT_RC_MAX_MSG_PKTS	(1u << 20)
#define SOFT_RC_ACK_COALESCE	32
/* with an ACK delay: packets owed that make the ACK go at once (well
 * under a send queue of 32, so that a requester whose queue is full of
 * small messages never waits out the delay) */
#define SOFT_RC_ACK_DELAYED_MAX	16
/* the delay is at most this fraction of the local ACK timeout */
#define SOFT_RC_ACK_DELAY_RTO_DIV 64

struct swqe {
	uint64_t wr_id;
	enum fab_wr_opcode opcode;
	unsigned int flags;
	struct fab_sge sge[SOFT_RC_MAX_SGE];
	unsigned int num_sge;
	uint8_t *inl;			/* inline copy, or NULL */
	uint32_t len;
	uint64_t raddr;
	uint32_t rkey;
	uint32_t imm;
	uint32_t psn;			/* first PSN, once sent */
	uint32_t npkts;			/* PSNs it occupies */
	uint8_t sent;
	enum fab_wc_status err;		/* found at post time */
};

struct rwqe {
	uint64_t wr_id;
	struct fab_sge sge[SOFT_RC_MAX_SGE];
	unsigned int num_sge;
	uint64_t len;
};

/* A read the responder executed, kept to answer its duplicates. */
struct rd_res {
	uint64_t va;
	uint64_t age;			/* when it arrived: the oldest goes */
	uint64_t seq;			/* when asked last: answered in order */
	uint32_t psn, npkts, msn, rkey, len;
	uint32_t start, next;		/* answering from start, next to go */
	uint8_t valid;
};

enum { MSG_NONE, MSG_SEND, MSG_WRITE };

struct soft_rc {
	struct soft_rc_cfg cfg;
	struct soft_rc_ops ops;
	void *ctx;
	enum soft_rc_state state;
	struct soft_rc_conn c;
	unsigned int pmtu;
	uint64_t rto_us;		/* 0: no timer */
	uint64_t now;

	/* send queue, free-running indices: free <= head <= tx <= tail */
	struct swqe *sq;
	uint8_t *inl;
	uint32_t sq_mask;
	uint32_t sq_free, sq_head, sq_tail, tx;
	uint32_t snd_una, snd_nxt, snd_max;
	uint64_t rto_at;		/* 0: not running */
	uint64_t rnr_until;
	uint8_t rnr_wait;
	uint8_t retries, rnr_retries;
	uint8_t gbn_done;		/* went back for this snd_una */
	uint8_t blocked;		/* xmit refused the last packet */

	/* receive queue */
	struct rwqe *rq;
	uint32_t rq_mask, rq_head, rq_tail;

	/* responder */
	uint32_t epsn, msn;
	int in_msg;
	uint8_t recv_active;		/* rq head being filled by a SEND */
	uint64_t recv_off;
	uint64_t wr_va, wr_left;
	uint32_t wr_rkey, wr_total;
	uint8_t nak_sent;		/* seq or RNR NAK out for ePSN */
	uint8_t ack_owed;
	uint32_t ack_pkts;
	uint64_t ack_delay_us;		/* 0: at the end of each batch */
	uint64_t ack_due;		/* the owed ACK goes then at the latest */
	struct {
		uint8_t pending, type, value;
		uint32_t psn;
	} nak;
	struct rd_res rd[SOFT_RC_MAX_RD];
	uint32_t nrd;
	uint64_t rd_seq;

	/* completions: at most max_send + max_recv */
	struct fab_wc *cq;
	uint32_t cq_mask, cq_head, cq_tail, cq_sq, cq_rq;

	struct soft_rc_stats st;
	uint8_t scratch[4096];
	uint8_t pkt[IB_MAX_PKT];
};

#define SQ(rc, i)	(&(rc)->sq[(i) & (rc)->sq_mask])
#define RQ(rc, i)	(&(rc)->rq[(i) & (rc)->rq_mask])

static uint32_t pow2(uint32_t n)
{
	uint32_t p = 1;

	while (p < n)
		p <<= 1;
	return p;
}

/* p in [a, b] going forward from a */
static int psn_in(uint32_t a, uint32_t p, uint32_t b)
{
	return ib_psn_dist(a, p) <= ib_psn_dist(a, b);
}

static uint32_t msg_pkts(uint64_t len, unsigned int pmtu)
{
	return len ? (uint32_t)((len + pmtu - 1) / pmtu) : 1;
}

/* --- completions ------------------------------------------------------- */

static void cq_push(struct soft_rc *rc, const struct fab_wc *wc)
{
	/* the post-time checks keep room for every WQE's completion */
	if (rc->cq_tail - rc->cq_head > rc->cq_mask)
		return;
	rc->cq[rc->cq_tail++ & rc->cq_mask] = *wc;
	if (wc->recv)
		rc->cq_rq++;
	else
		rc->cq_sq++;
}

static void sq_complete(struct soft_rc *rc, const struct swqe *w,
			enum fab_wc_status status)
{
	static const enum fab_wc_opcode op[] = {
		[FAB_WR_SEND] = FAB_WC_SEND,
		[FAB_WR_SEND_WITH_IMM] = FAB_WC_SEND,
		[FAB_WR_RDMA_WRITE] = FAB_WC_RDMA_WRITE,
		[FAB_WR_RDMA_WRITE_WITH_IMM] = FAB_WC_RDMA_WRITE,
		[FAB_WR_RDMA_READ] = FAB_WC_RDMA_READ,
	};
	struct fab_wc wc;

	if (status == FAB_WC_SUCCESS && !(w->flags & FAB_SEND_SIGNALED))
		return;
	memset(&wc, 0, sizeof(wc));
	wc.wr_id = w->wr_id;
	wc.status = status;
	wc.opcode = op[w->opcode];
	wc.byte_len = w->len;
	wc.src_qp = rc->c.dest_qpn;
	cq_push(rc, &wc);
}

static void rq_complete(struct soft_rc *rc, enum fab_wc_status status,
			enum fab_wc_opcode opcode, uint32_t byte_len,
			int imm_valid, uint32_t imm)
{
	struct fab_wc wc;

	memset(&wc, 0, sizeof(wc));
	wc.wr_id = RQ(rc, rc->rq_head)->wr_id;
	wc.status = status;
	wc.opcode = opcode;
	wc.byte_len = byte_len;
	wc.imm_valid = (uint8_t)imm_valid;
	wc.imm_data = imm;
	wc.src_qp = rc->c.dest_qpn;
	wc.recv = 1;
	cq_push(rc, &wc);
	rc->rq_head++;
	rc->recv_active = 0;
}

/* Enter the error state: the send queue's head gets status (the request
 * that failed), everything else queued FAB_WC_WR_FLUSH_ERR, in order. */
static void rc_error(struct soft_rc *rc, enum fab_wc_status status)
{
	int first = 1;

	if (rc->state == SOFT_RC_ERROR)
		return;
	rc->state = SOFT_RC_ERROR;
	for (; rc->sq_head != rc->sq_tail; rc->sq_head++, first = 0)
		sq_complete(rc, SQ(rc, rc->sq_head),
			    first ? status : FAB_WC_WR_FLUSH_ERR);
	rc->sq_free = rc->tx = rc->sq_head;
	while (rc->rq_head != rc->rq_tail)
		rq_complete(rc, FAB_WC_WR_FLUSH_ERR, FAB_WC_RECV, 0, 0, 0);
	rc->rto_at = 0;
	rc->rnr_wait = 0;
	rc->ack_owed = 0;
	rc->in_msg = MSG_NONE;
	memset(rc->rd, 0, sizeof(rc->rd));
}

/* --- packets ----------------------------------------------------------- */

static void hdr_init(const struct soft_rc *rc, struct ib_rc *r, uint8_t op,
		     uint32_t psn)
{
	memset(r, 0, sizeof(*r));
	r->lrh.sl = rc->c.sl;
	r->lrh.dlid = rc->c.dlid;
	r->lrh.slid = rc->c.slid;
	r->bth.opcode = op;
	r->bth.pkey = rc->c.pkey;
	r->bth.destqp = rc->c.dest_qpn;
	r->bth.psn = psn & IB_PSN_MASK;
}

/* 0 sent, -1 the link refused it (kept for progress) */
static int rc_xmit(struct soft_rc *rc, const struct ib_rc *r)
{
	enum ib_rc_err err;
	size_t n;

	n = ib_rc_build(r, rc->pmtu, rc->pkt, sizeof(rc->pkt), &err);
	if (!n)
		return -1;	/* our own lengths are checked: cannot happen */
	if (rc->ops.xmit(rc->ctx, rc->pkt, n) < 0) {
		rc->blocked = 1;
		return -1;
	}
	rc->blocked = 0;
	rc->st.tx_packets++;
	return 0;
}

/* Copy n bytes at message offset off out of (or, to, into) a scatter
 * list, through mr_find: never outside what it returns. */
static int sge_copy(struct soft_rc *rc, const struct fab_sge *sge,
		    unsigned int num, uint64_t off, uint8_t *buf, uint64_t n,
		    int to)
{
	unsigned int i;

	for (i = 0; i < num && n; i++) {
		const struct fab_sge *s = &sge[i];
		uint64_t take;
		uint8_t *p;

		if (off >= s->length) {
			off -= s->length;
			continue;
		}
		take = s->length - off;
		if (take > n)
			take = n;
		p = rc->ops.mr_find(rc->ctx, s->lkey, 0, s->addr + off, take,
				    to ? FAB_ACCESS_LOCAL_WRITE : 0);
		if (!p)
			return -1;
		if (to)
			memcpy(p, buf, take);
		else
			memcpy(buf, p, take);
		buf += take;
		n -= take;
		off = 0;
	}
	return n ? -1 : 0;
}

/* --- requester --------------------------------------------------------- */

static void req_go_back(struct soft_rc *rc, uint32_t psn)
{
	uint32_t i;

	for (i = rc->sq_head; i != rc->sq_tail; i++) {
		struct swqe *w = SQ(rc, i);

		if (!w->sent || ib_psn_dist(w->psn, psn) < w->npkts)
			break;
	}
	rc->tx = i;
	rc->snd_nxt = psn;
}

static void req_complete(struct soft_rc *rc)
{
	while (rc->state == SOFT_RC_RTS && rc->sq_head != rc->sq_tail) {
		struct swqe *w = SQ(rc, rc->sq_head);

		if (w->err) {
			rc_error(rc, w->err);
			return;
		}
		if (!w->sent || ib_psn_cmp(rc->snd_una,
					   ib_psn_add(w->psn, w->npkts)) < 0)
			break;
		sq_complete(rc, w, FAB_WC_SUCCESS);
		rc->sq_head++;
		/* unsignaled slots go with the next signaled completion */
		if (w->flags & FAB_SEND_SIGNALED)
			rc->sq_free = rc->sq_head;
	}
}

static void req_advance(struct soft_rc *rc, uint32_t una)
{
	if (ib_psn_cmp(una, rc->snd_una) <= 0)
		return;
	rc->snd_una = una;
	rc->retries = 0;
	rc->rnr_retries = 0;
	rc->gbn_done = 0;
	rc->rto_at = rc->rto_us && rc->snd_una != rc->snd_max ?
		     rc->now + rc->rto_us : 0;
	if (ib_psn_cmp(rc->snd_nxt, una) < 0)
		req_go_back(rc, una);
	req_complete(rc);
}

/* Everything before una ([snd_una, snd_max]) is acknowledged, except what
 * an incomplete read still waits for. */
static void req_ack_to(struct soft_rc *rc, uint32_t una)
{
	int implied = 0;
	uint32_t i;

	for (i = rc->sq_head; i != rc->sq_tail; i++) {
		struct swqe *w = SQ(rc, i);
		uint32_t lim;

		if (!w->sent || ib_psn_cmp(w->psn, una) >= 0)
			break;
		if (w->opcode == FAB_WR_RDMA_READ) {
			lim = ib_psn_cmp(w->psn, rc->snd_una) > 0 ?
			      w->psn : rc->snd_una;
			if (ib_psn_cmp(lim, una) < 0) {
				una = lim;
				implied = 1;
			}
			break;
		}
	}
	req_advance(rc, una);
	if (implied && rc->state == SOFT_RC_RTS && !rc->gbn_done) {
		rc->gbn_done = 1;
		req_go_back(rc, rc->snd_una);
	}
}

static unsigned int reads_before(const struct soft_rc *rc, uint32_t end)
{
	unsigned int n = 0;
	uint32_t i;

	for (i = rc->sq_head; i != end; i++)
		n += SQ(rc, i)->opcode == FAB_WR_RDMA_READ;
	return n;
}

/* Packet k of w: 0 sent, -1 refused, -2 local memory gone */
static int req_send_pkt(struct soft_rc *rc, struct swqe *w, uint32_t k)
{
	uint64_t off = (uint64_t)k * rc->pmtu;
	int first = k == 0, last = k == w->npkts - 1;
	struct ib_rc r;
	uint32_t n;
	uint8_t op;

	if (w->opcode == FAB_WR_RDMA_READ) {
		hdr_init(rc, &r, IB_OP_RC_READ_REQUEST,
			 ib_psn_add(w->psn, k));
		r.reth.va = w->raddr + off;
		r.reth.rkey = w->rkey;
		r.reth.dma_len = (uint32_t)(w->len - off);
		r.bth.ackreq = 1;
		return rc_xmit(rc, &r);
	}
	n = last ? (uint32_t)(w->len - off) : rc->pmtu;
	if (w->opcode == FAB_WR_SEND || w->opcode == FAB_WR_SEND_WITH_IMM) {
		op = first && last ? IB_OP_RC_SEND_ONLY :
		     first ? IB_OP_RC_SEND_FIRST :
		     last ? IB_OP_RC_SEND_LAST : IB_OP_RC_SEND_MIDDLE;
		if (last && w->opcode == FAB_WR_SEND_WITH_IMM)
			op++;	/* _IMM follows each LAST and ONLY */
	} else {
		op = first && last ? IB_OP_RC_WRITE_ONLY :
		     first ? IB_OP_RC_WRITE_FIRST :
		     last ? IB_OP_RC_WRITE_LAST : IB_OP_RC_WRITE_MIDDLE;
		if (last && w->opcode == FAB_WR_RDMA_WRITE_WITH_IMM)
			op++;
	}
	hdr_init(rc, &r, op, ib_psn_add(w->psn, k));
	if (ib_rc_op_flags(op) & IB_RC_F_RETH) {
		r.reth.va = w->raddr;
		r.reth.rkey = w->rkey;
		r.reth.dma_len = w->len;
	}
	r.imm = w->imm;
	r.bth.ackreq = last || (k + 1) % SOFT_RC_ACKREQ_EVERY == 0;
	/* SE: only on the LAST or ONLY packet of a SEND or WRITE_WITH_IMM */
	r.bth.se = last && (w->flags & FAB_SEND_SOLICITED) &&
		   w->opcode != FAB_WR_RDMA_WRITE;
	/* read again on every (re)transmission, as an HCA DMA-reads it */
	if (w->inl)
		memcpy(rc->scratch, w->inl + off, n);
	else if (sge_copy(rc, w->sge, w->num_sge, off, rc->scratch, n, 0))
		return -2;
	r.payload = rc->scratch;
	r.payload_len = n;
	return rc_xmit(rc, &r);
}

static void req_push(struct soft_rc *rc)
{
	unsigned int budget = SOFT_RC_WINDOW;

	if (rc->rnr_wait) {
		if (rc->now < rc->rnr_until)
			return;
		rc->rnr_wait = 0;
	}
	while (rc->state == SOFT_RC_RTS && rc->tx != rc->sq_tail && budget--) {
		struct swqe *w = SQ(rc, rc->tx);
		uint32_t k, adv;
		int e;

		if (w->err)
			break;
		if (ib_psn_dist(rc->snd_una, rc->snd_nxt) >= SOFT_RC_WINDOW)
			break;
		if (!w->sent)
			w->psn = rc->snd_nxt;	/* == snd_max here */
		k = ib_psn_dist(w->psn, rc->snd_nxt);
		if (w->opcode == FAB_WR_RDMA_READ &&
		    reads_before(rc, rc->tx) >= rc->c.max_rd_atomic)
			break;
		if ((w->flags & FAB_SEND_FENCE) && k == 0 &&
		    reads_before(rc, rc->tx))
			break;
		e = req_send_pkt(rc, w, k);
		if (e == -2) {
			rc_error(rc, FAB_WC_LOC_PROT_ERR);
			break;
		}
		if (e)
			break;
		w->sent = 1;
		adv = w->opcode == FAB_WR_RDMA_READ ? w->npkts - k : 1;
		if (ib_psn_cmp(rc->snd_nxt, rc->snd_max) < 0)
			rc->st.retransmits++;
		rc->snd_nxt = ib_psn_add(rc->snd_nxt, adv);
		if (ib_psn_cmp(rc->snd_nxt, rc->snd_max) > 0)
			rc->snd_max = rc->snd_nxt;
		if (k + adv >= w->npkts)
			rc->tx++;
		if (!rc->rto_at && rc->rto_us)
			rc->rto_at = rc->now + rc->rto_us;
	}
}

static void req_timer(struct soft_rc *rc)
{
	if (!rc->rto_at || rc->rnr_wait || rc->now < rc->rto_at)
		return;
	if (rc->snd_una == rc->snd_max) {
		rc->rto_at = 0;
		return;
	}
	rc->st.timeouts++;
	if (rc->retries >= rc->c.retry_cnt) {
		rc_error(rc, FAB_WC_RETRY_EXC_ERR);
		return;
	}
	rc->retries++;
	req_go_back(rc, rc->snd_una);
	rc->rto_at = rc->now + rc->rto_us;
}

/* The sent WQE holding psn, or NULL. */
static struct swqe *req_find(struct soft_rc *rc, uint32_t psn)
{
	uint32_t i;

	for (i = rc->sq_head; i != rc->sq_tail; i++) {
		struct swqe *w = SQ(rc, i);

		if (!w->sent)
			break;
		if (ib_psn_dist(w->psn, psn) < w->npkts)
			return w;
	}
	return NULL;
}

static void req_read_resp(struct soft_rc *rc, const struct ib_rc *r)
{
	uint32_t psn = r->bth.psn, k;
	struct swqe *w;
	uint64_t off, want;
	uint8_t op;

	if (ib_psn_cmp(psn, rc->snd_una) < 0)
		return;			/* a duplicate of one we took */
	if (!psn_in(rc->snd_una, psn, rc->snd_max) || psn == rc->snd_max) {
		rc->st.ghost_acks++;
		return;
	}
	w = req_find(rc, psn);
	if (!w || w->opcode != FAB_WR_RDMA_READ) {
		rc->st.bad_responses++;
		return;
	}
	k = ib_psn_dist(w->psn, psn);
	op = w->npkts == 1 ? IB_OP_RC_READ_RESP_ONLY :
	     k == 0 ? IB_OP_RC_READ_RESP_FIRST :
	     k == w->npkts - 1 ? IB_OP_RC_READ_RESP_LAST :
	     IB_OP_RC_READ_RESP_MIDDLE;
	off = (uint64_t)k * rc->pmtu;
	want = k == w->npkts - 1 ? w->len - off : rc->pmtu;
	/* a MIDDLE where a FIRST belongs may be a resent read's answer
	 * (responses to a read asked again from k start with FIRST) */
	if (r->bth.opcode != op &&
	    !(k && r->bth.opcode == (k == w->npkts - 1 ?
				     IB_OP_RC_READ_RESP_ONLY :
				     IB_OP_RC_READ_RESP_FIRST))) {
		rc->st.bad_responses++;
		return;
	}
	if (r->payload_len != want) {
		rc->st.bad_responses++;
		return;
	}
	req_ack_to(rc, psn);
	if (rc->state != SOFT_RC_RTS || rc->snd_una != psn)
		return;			/* an earlier response is missing */
	if (sge_copy(rc, w->sge, w->num_sge, off, (uint8_t *)r->payload,
		     r->payload_len, 1)) {
		rc_error(rc, FAB_WC_LOC_PROT_ERR);
		return;
	}
	req_advance(rc, ib_psn_add(psn, 1));
}

static void req_input(struct soft_rc *rc, const struct ib_rc *r)
{
	static const enum fab_wc_status nak_status[] = {
		[IB_NAK_INVALID_REQ] = FAB_WC_REM_INV_REQ_ERR,
		[IB_NAK_REMOTE_ACCESS] = FAB_WC_REM_ACCESS_ERR,
		[IB_NAK_REMOTE_OP_ERR] = FAB_WC_REM_OP_ERR,
		[IB_NAK_INVALID_RD_REQ] = FAB_WC_REM_INV_REQ_ERR,
	};
	uint32_t psn = r->bth.psn;

	if (r->bth.opcode != IB_OP_RC_ACK) {
		req_read_resp(rc, r);
		return;
	}
	if (r->aeth.type == IB_AETH_ACK) {
		uint32_t una = ib_psn_add(psn, 1);

		if (ib_psn_cmp(una, rc->snd_una) <= 0)
			return;		/* old, or duplicated on the way */
		if (!psn_in(rc->snd_una, una, rc->snd_max)) {
			rc->st.ghost_acks++;
			return;
		}
		rc->st.acks_rcvd++;
		req_ack_to(rc, una);
		return;
	}
	/* a NAK names the PSN it refused: everything before is done */
	if (ib_psn_cmp(psn, rc->snd_una) < 0)
		return;
	if (!psn_in(rc->snd_una, psn, rc->snd_max) ||
	    (psn == rc->snd_max && !(r->aeth.type == IB_AETH_NAK &&
				     r->aeth.value == IB_NAK_PSN_SEQ_ERR))) {
		rc->st.ghost_acks++;
		return;
	}
	if (r->aeth.type == IB_AETH_RNR_NAK) {
		rc->st.rnr_naks_rcvd++;
		req_ack_to(rc, psn);
		if (rc->state != SOFT_RC_RTS || rc->snd_una != psn)
			return;
		if (rc->c.rnr_retry != 7) {
			if (rc->rnr_retries >= rc->c.rnr_retry) {
				rc_error(rc, FAB_WC_RNR_RETRY_EXC_ERR);
				return;
			}
			rc->rnr_retries++;
		}
		rc->rnr_wait = 1;
		rc->rnr_until = rc->now + ib_rnr_timer_usec(r->aeth.value);
		rc->rto_at = 0;
		req_go_back(rc, psn);
		return;
	}
	if (r->aeth.value == IB_NAK_PSN_SEQ_ERR) {
		uint32_t una = rc->snd_una;

		rc->st.seq_naks_rcvd++;
		req_ack_to(rc, psn);
		if (rc->state != SOFT_RC_RTS || rc->snd_una != psn ||
		    psn == rc->snd_max)
			return;
		/* a NAK that acknowledges nothing new is a retry, as a
		 * timeout is: a peer repeating it cannot keep us resending */
		if (una == psn) {
			if (rc->retries >= rc->c.retry_cnt) {
				rc_error(rc, FAB_WC_RETRY_EXC_ERR);
				return;
			}
			rc->retries++;
		}
		rc->gbn_done = 1;
		req_go_back(rc, psn);
		return;
	}
	req_ack_to(rc, psn);
	if (rc->state == SOFT_RC_RTS)
		rc_error(rc, nak_status[r->aeth.value]);
}

/* --- responder --------------------------------------------------------- */

static int resp_flush_nak(struct soft_rc *rc)
{
	struct ib_rc r;

	if (!rc->nak.pending)
		return 0;
	hdr_init(rc, &r, IB_OP_RC_ACK, rc->nak.psn);
	r.aeth.type = rc->nak.type;
	r.aeth.value = rc->nak.value;
	r.aeth.msn = rc->msn & IB_MSN_MASK;
	if (rc_xmit(rc, &r))
		return -1;
	rc->nak.pending = 0;
	if (rc->nak.type == IB_AETH_RNR_NAK)
		rc->st.rnr_naks_sent++;
	else if (rc->nak.value == IB_NAK_PSN_SEQ_ERR)
		rc->st.seq_naks_sent++;
	else
		rc->st.naks_sent++;
	/* it acknowledges everything before its PSN, as an ACK would */
	if (rc->nak.psn == rc->epsn)
		rc->ack_owed = 0;
	return 0;
}

static void resp_nak(struct soft_rc *rc, uint8_t type, uint8_t value,
		     uint32_t psn)
{
	rc->nak.pending = 1;
	rc->nak.type = type;
	rc->nak.value = value;
	rc->nak.psn = psn;
	resp_flush_nak(rc);
}

/* A request the peer should not have made: NAK it, fail the receive it
 * was filling (recv_status, SUCCESS: none) and stop. */
static void resp_fatal(struct soft_rc *rc, uint8_t code, uint32_t psn,
		       enum fab_wc_status recv_status)
{
	resp_nak(rc, IB_AETH_NAK, code, psn);
	if (recv_status != FAB_WC_SUCCESS && rc->rq_head != rc->rq_tail)
		rq_complete(rc, recv_status, FAB_WC_RECV, 0, 0, 0);
	rc_error(rc, FAB_WC_WR_FLUSH_ERR);
}

static int resp_send_ack(struct soft_rc *rc)
{
	struct ib_rc r;

	hdr_init(rc, &r, IB_OP_RC_ACK, ib_psn_add(rc->epsn, IB_PSN_MASK));
	r.aeth.type = IB_AETH_ACK;
	r.aeth.value = IB_AETH_CREDIT_INVALID;
	r.aeth.msn = rc->msn & IB_MSN_MASK;
	if (rc_xmit(rc, &r))
		return -1;
	rc->st.acks_sent++;
	rc->ack_owed = 0;
	rc->ack_pkts = 0;
	return 0;
}

static struct rd_res *rd_oldest_active(struct soft_rc *rc)
{
	struct rd_res *best = NULL;
	uint32_t i;

	for (i = 0; i < rc->nrd; i++) {
		struct rd_res *s = &rc->rd[i];

		if (s->valid && s->next < s->npkts &&
		    (!best || s->seq < best->seq))
			best = s;
	}
	return best;
}

/* 0 sent, -1 refused or failed */
static int resp_send_read(struct soft_rc *rc, struct rd_res *s)
{
	uint32_t k = s->next, psn = ib_psn_add(s->psn, k);
	uint64_t off = (uint64_t)k * rc->pmtu;
	uint32_t n = k == s->npkts - 1 ? (uint32_t)(s->len - off) : rc->pmtu;
	struct ib_rc r;
	uint8_t op;
	void *p;

	/* an answer to a duplicate asking from start begins there */
	if (k == s->start)
		op = k == s->npkts - 1 ? IB_OP_RC_READ_RESP_ONLY :
					  IB_OP_RC_READ_RESP_FIRST;
	else
		op = k == s->npkts - 1 ? IB_OP_RC_READ_RESP_LAST :
					  IB_OP_RC_READ_RESP_MIDDLE;
	/* looked up again for every packet: the region may have gone */
	p = rc->ops.mr_find(rc->ctx, s->rkey, 1, s->va + off, n,
			    FAB_ACCESS_REMOTE_READ);
	if (!p) {
		s->valid = 0;
		resp_fatal(rc, IB_NAK_REMOTE_ACCESS, psn, FAB_WC_SUCCESS);
		return -1;
	}
	hdr_init(rc, &r, op, psn);
	r.aeth.type = IB_AETH_ACK;
	r.aeth.value = IB_AETH_CREDIT_INVALID;
	r.aeth.msn = s->msn & IB_MSN_MASK;
	r.payload = p;
	r.payload_len = n;
	if (rc_xmit(rc, &r))
		return -1;
	s->next++;
	return 0;
}

static void resp_push(struct soft_rc *rc)
{
	unsigned int budget = SOFT_RC_WINDOW;
	struct rd_res *s;

	if (resp_flush_nak(rc) || rc->state != SOFT_RC_RTS)
		return;
	while (budget-- && (s = rd_oldest_active(rc)))
		if (resp_send_read(rc, s))
			return;
	if (rc->ack_owed && rc->now >= rc->ack_due && !rd_oldest_active(rc))
		resp_send_ack(rc);
}

static void resp_dup(struct soft_rc *rc, const struct ib_rc *r)
{
	uint32_t psn = r->bth.psn, i;

	rc->st.dup_requests++;
	if (r->bth.opcode != IB_OP_RC_READ_REQUEST) {
		rc->ack_owed = 1;	/* its ACK may have been lost */
		rc->ack_due = 0;	/* and the requester waits for it */
		return;
	}
	for (i = 0; i < rc->nrd; i++) {
		struct rd_res *s = &rc->rd[i];
		uint32_t k;

		if (!s->valid)
			continue;
		k = ib_psn_dist(s->psn, psn);
		if (k >= s->npkts)
			continue;
		/* answered again from memory, from where it asks (the
		 * remainder a requester asks for again after a lost
		 * response); the answer then begins with a FIRST or ONLY */
		s->start = s->next = k;
		s->seq = rc->rd_seq++;
		resp_push(rc);
		return;
	}
	/* older than the reads we remember */
	resp_nak(rc, IB_AETH_NAK, IB_NAK_INVALID_REQ, psn);
}

static void resp_read(struct soft_rc *rc, const struct ib_rc *r)
{
	uint32_t npkts = msg_pkts(r->reth.dma_len, rc->pmtu), i;
	struct rd_res *s = NULL;

	if (npkts > SOFT_RC_MAX_MSG_PKTS) {
		resp_fatal(rc, IB_NAK_INVALID_REQ, r->bth.psn, FAB_WC_SUCCESS);
		return;
	}
	if (!rc->ops.mr_find(rc->ctx, r->reth.rkey, 1, r->reth.va,
			     r->reth.dma_len, FAB_ACCESS_REMOTE_READ)) {
		resp_fatal(rc, IB_NAK_REMOTE_ACCESS, r->bth.psn,
			   FAB_WC_SUCCESS);
		return;
	}
	/* the read that arrived first goes (a peer honouring max_rd_atomic
	 * has it complete before it asks for one more; how often a read was
	 * asked again does not make it younger) */
	for (i = 0; i < rc->nrd; i++) {
		struct rd_res *t = &rc->rd[i];

		if (!t->valid) {
			s = t;
			break;
		}
		if (!s || t->age < s->age)
			s = t;
	}
	rc->msn = (rc->msn + 1) & IB_MSN_MASK;
	s->valid = 1;
	s->psn = r->bth.psn;
	s->npkts = npkts;
	s->start = s->next = 0;
	s->va = r->reth.va;
	s->rkey = r->reth.rkey;
	s->len = r->reth.dma_len;
	s->msn = rc->msn;
	s->age = s->seq = rc->rd_seq++;
	rc->epsn = ib_psn_add(rc->epsn, npkts);
	/* its responses acknowledge what came before */
	rc->ack_owed = 0;
	rc->ack_pkts = 0;
	resp_push(rc);
}

static int op_allowed(int in_msg, uint8_t op)
{
	switch (in_msg) {
	case MSG_SEND:
		return op == IB_OP_RC_SEND_MIDDLE || op == IB_OP_RC_SEND_LAST ||
		       op == IB_OP_RC_SEND_LAST_IMM;
	case MSG_WRITE:
		return op == IB_OP_RC_WRITE_MIDDLE ||
		       op == IB_OP_RC_WRITE_LAST ||
		       op == IB_OP_RC_WRITE_LAST_IMM;
	default:
		return op == IB_OP_RC_SEND_FIRST || op == IB_OP_RC_SEND_ONLY ||
		       op == IB_OP_RC_SEND_ONLY_IMM ||
		       op == IB_OP_RC_WRITE_FIRST ||
		       op == IB_OP_RC_WRITE_ONLY ||
		       op == IB_OP_RC_WRITE_ONLY_IMM ||
		       op == IB_OP_RC_READ_REQUEST;
	}
}

/* 0 done, -1 failed (the QP is in error or an RNR NAK went out) */
static int resp_send(struct soft_rc *rc, const struct ib_rc *r,
		     unsigned int f)
{
	uint32_t psn = r->bth.psn;
	struct rwqe *q;

	if (f & (IB_RC_F_FIRST | IB_RC_F_ONLY)) {
		if (rc->rq_head == rc->rq_tail) {
			rc->nak_sent = 1;
			resp_nak(rc, IB_AETH_RNR_NAK, rc->c.min_rnr_timer,
				 psn);
			return -1;
		}
		rc->recv_active = 1;
		rc->recv_off = 0;
	}
	q = RQ(rc, rc->rq_head);
	if (r->payload_len > q->len - rc->recv_off) {
		resp_fatal(rc, IB_NAK_INVALID_REQ, psn, FAB_WC_LOC_LEN_ERR);
		return -1;
	}
	if (sge_copy(rc, q->sge, q->num_sge, rc->recv_off,
		     (uint8_t *)r->payload, r->payload_len, 1)) {
		resp_fatal(rc, IB_NAK_REMOTE_OP_ERR, psn, FAB_WC_LOC_PROT_ERR);
		return -1;
	}
	rc->recv_off += r->payload_len;
	if (f & (IB_RC_F_LAST | IB_RC_F_ONLY)) {
		rq_complete(rc, FAB_WC_SUCCESS, FAB_WC_RECV,
			    (uint32_t)rc->recv_off, !!(f & IB_RC_F_IMM),
			    r->imm);
		rc->msn = (rc->msn + 1) & IB_MSN_MASK;
		rc->in_msg = MSG_NONE;
	} else {
		rc->in_msg = MSG_SEND;
	}
	return 0;
}

static int resp_write(struct soft_rc *rc, const struct ib_rc *r,
		      unsigned int f)
{
	uint32_t psn = r->bth.psn, n = (uint32_t)r->payload_len;
	void *p;

	/* the receive an immediate needs, before anything changes */
	if ((f & IB_RC_F_IMM) && rc->rq_head == rc->rq_tail) {
		rc->nak_sent = 1;
		resp_nak(rc, IB_AETH_RNR_NAK, rc->c.min_rnr_timer, psn);
		return -1;
	}
	/* a zero-length WRITE names no memory: its R_Key and VA are not
	 * checked (IBA C9-88), as rxe and HCAs do */
	if (f & (IB_RC_F_FIRST | IB_RC_F_ONLY)) {
		if (r->reth.dma_len &&
		    !rc->ops.mr_find(rc->ctx, r->reth.rkey, 1, r->reth.va,
				     r->reth.dma_len,
				     FAB_ACCESS_REMOTE_WRITE)) {
			resp_fatal(rc, IB_NAK_REMOTE_ACCESS, psn,
				   FAB_WC_SUCCESS);
			return -1;
		}
		rc->wr_va = r->reth.va;
		rc->wr_rkey = r->reth.rkey;
		rc->wr_left = r->reth.dma_len;
		rc->wr_total = r->reth.dma_len;
	}
	/* the packets must add up to the RETH's length exactly */
	if (n > rc->wr_left ||
	    ((f & (IB_RC_F_LAST | IB_RC_F_ONLY)) && n != rc->wr_left) ||
	    ((f & (IB_RC_F_FIRST | IB_RC_F_MIDDLE)) && n >= rc->wr_left)) {
		resp_fatal(rc, IB_NAK_INVALID_REQ, psn, FAB_WC_SUCCESS);
		return -1;
	}
	if (n) {
		p = rc->ops.mr_find(rc->ctx, rc->wr_rkey, 1, rc->wr_va, n,
				    FAB_ACCESS_REMOTE_WRITE);
		if (!p) {
			resp_fatal(rc, IB_NAK_REMOTE_ACCESS, psn,
				   FAB_WC_SUCCESS);
			return -1;
		}
		memcpy(p, r->payload, n);
	}
	rc->wr_va += n;
	rc->wr_left -= n;
	if (f & (IB_RC_F_LAST | IB_RC_F_ONLY)) {
		if (f & IB_RC_F_IMM)
			rq_complete(rc, FAB_WC_SUCCESS,
				    FAB_WC_RECV_RDMA_WITH_IMM, rc->wr_total, 1,
				    r->imm);
		rc->msn = (rc->msn + 1) & IB_MSN_MASK;
		rc->in_msg = MSG_NONE;
	} else {
		rc->in_msg = MSG_WRITE;
	}
	return 0;
}

static void resp_input(struct soft_rc *rc, const struct ib_rc *r)
{
	uint8_t op = r->bth.opcode;
	unsigned int f = ib_rc_op_flags(op);
	int d = ib_psn_cmp(r->bth.psn, rc->epsn), e;

	if (d > 0) {
		rc->st.out_of_seq++;
		if (!rc->nak_sent) {
			rc->nak_sent = 1;
			resp_nak(rc, IB_AETH_NAK, IB_NAK_PSN_SEQ_ERR,
				 rc->epsn);
		}
		return;
	}
	if (d < 0) {
		resp_dup(rc, r);
		return;
	}
	rc->nak_sent = 0;
	if (!op_allowed(rc->in_msg, op)) {
		resp_fatal(rc, IB_NAK_INVALID_REQ, r->bth.psn, FAB_WC_SUCCESS);
		return;
	}
	if (op == IB_OP_RC_READ_REQUEST) {
		resp_read(rc, r);
		return;
	}
	if (op <= IB_OP_RC_SEND_ONLY_IMM)
		e = resp_send(rc, r, f);
	else
		e = resp_write(rc, r, f);
	if (e)
		return;
	rc->epsn = ib_psn_add(rc->epsn, 1);
	if (!rc->ack_owed)
		rc->ack_due = rc->now + rc->ack_delay_us;
	rc->ack_owed = 1;
	if (++rc->ack_pkts >= (rc->ack_delay_us ? SOFT_RC_ACK_DELAYED_MAX :
			       SOFT_RC_ACK_COALESCE) && !rd_oldest_active(rc))
		resp_send_ack(rc);
}

/* --- the interface ----------------------------------------------------- */

struct soft_rc *soft_rc_new(const struct soft_rc_cfg *cfg,
			    const struct soft_rc_ops *ops, void *ctx)
{
	struct soft_rc_cfg k = cfg ? *cfg : (struct soft_rc_cfg){ 0 };
	struct soft_rc *rc;
	uint32_t sqn, rqn, cqn;

	if (!ops || !ops->xmit || !ops->mr_find) {
		errno = EINVAL;
		return NULL;
	}
	if (!k.max_send)
		k.max_send = SOFT_RC_DEF_QUEUE;
	if (!k.max_recv)
		k.max_recv = SOFT_RC_DEF_QUEUE;
	if (!k.max_sge)
		k.max_sge = 1;
	if (k.max_send > SOFT_RC_MAX_QUEUE || k.max_recv > SOFT_RC_MAX_QUEUE ||
	    k.max_sge > SOFT_RC_MAX_SGE || k.max_inline > SOFT_RC_MAX_INLINE) {
		errno = EINVAL;
		return NULL;
	}
	rc = calloc(1, sizeof(*rc));
	if (!rc)
		return NULL;
	rc->cfg = k;
	rc->ops = *ops;
	rc->ctx = ctx;
	sqn = pow2(k.max_send);
	rqn = pow2(k.max_recv);
	cqn = pow2(k.max_send + k.max_recv);
	rc->sq_mask = sqn - 1;
	rc->rq_mask = rqn - 1;
	rc->cq_mask = cqn - 1;
	rc->sq = calloc(sqn, sizeof(*rc->sq));
	rc->rq = calloc(rqn, sizeof(*rc->rq));
	rc->cq = calloc(cqn, sizeof(*rc->cq));
	if (k.max_inline)
		rc->inl = calloc(sqn, k.max_inline);
	if (!rc->sq || !rc->rq || !rc->cq || (k.max_inline && !rc->inl)) {
		soft_rc_free(rc);
		errno = ENOMEM;
		return NULL;
	}
	rc->pmtu = 256;		/* until connected: posts in error need one */
	rc->state = SOFT_RC_RESET;
	return rc;
}

void soft_rc_free(struct soft_rc *rc)
{
	if (!rc)
		return;
	free(rc->sq);
	free(rc->rq);
	free(rc->cq);
	free(rc->inl);
	free(rc);
}

int soft_rc_connect(struct soft_rc *rc, const struct soft_rc_conn *c,
		    uint64_t now_us)
{
	if (rc->state != SOFT_RC_RESET) {
		errno = EISCONN;
		return -1;
	}
	if (!ib_mtu_bytes(c->path_mtu) || c->retry_cnt > 7 ||
	    c->rnr_retry > 7 || c->min_rnr_timer > 31 || c->timeout > 31 ||
	    !c->max_rd_atomic || !c->max_dest_rd_atomic ||
	    c->max_dest_rd_atomic > SOFT_RC_MAX_RD ||
	    c->qpn > 0xffffff || c->dest_qpn > 0xffffff ||
	    c->sq_psn > IB_PSN_MASK || c->rq_psn > IB_PSN_MASK) {
		errno = EINVAL;
		return -1;
	}
	rc->c = *c;
	rc->now = now_us;
	rc->pmtu = ib_mtu_bytes(c->path_mtu);
	rc->rto_us = c->timeout ? (4096ull << c->timeout) / 1000 : 0;
	if (c->timeout && !rc->rto_us)
		rc->rto_us = 1;
	rc->ack_delay_us = c->ack_delay_us;
	if (rc->rto_us &&
	    rc->ack_delay_us > rc->rto_us / SOFT_RC_ACK_DELAY_RTO_DIV)
		rc->ack_delay_us = rc->rto_us / SOFT_RC_ACK_DELAY_RTO_DIV;
	rc->snd_una = rc->snd_nxt = rc->snd_max = c->sq_psn;
	rc->epsn = c->rq_psn;
	rc->nrd = c->max_dest_rd_atomic;
	rc->state = SOFT_RC_RTS;
	return 0;
}

enum soft_rc_state soft_rc_state(const struct soft_rc *rc)
{
	return rc->state;
}

static int sq_check(const struct soft_rc *rc, const struct fab_rc_wr *wr,
		    uint64_t *len)
{
	unsigned int i;

	if (wr->opcode < FAB_WR_SEND || wr->opcode > FAB_WR_RDMA_READ ||
	    wr->num_sge > rc->cfg.max_sge || (wr->num_sge && !wr->sg_list) ||
	    (wr->flags & ~(FAB_SEND_SIGNALED | FAB_SEND_INLINE |
			   FAB_SEND_FENCE | FAB_SEND_SOLICITED)))
		return -1;
	*len = 0;
	for (i = 0; i < wr->num_sge; i++)
		*len += wr->sg_list[i].length;
	if (*len > IB_RC_MAX_DMA_LEN ||
	    msg_pkts(*len, rc->pmtu) > SOFT_RC_MAX_MSG_PKTS)
		return -1;
	if ((wr->flags & FAB_SEND_INLINE) &&
	    (wr->opcode == FAB_WR_RDMA_READ || *len > rc->cfg.max_inline))
		return -1;
	return 0;
}

int soft_rc_post_send(struct soft_rc *rc, const struct fab_rc_wr *wr, int n,
		      uint64_t now_us)
{
	int i;

	rc->now = now_us;
	if (rc->state == SOFT_RC_RESET || n < 0 || (n && !wr)) {
		errno = EINVAL;
		return -1;
	}
	for (i = 0; i < n; i++) {
		const struct fab_rc_wr *x = &wr[i];
		uint32_t slot = rc->sq_tail & rc->sq_mask;
		struct swqe *w;
		unsigned int j;
		uint64_t len;

		if (sq_check(rc, x, &len)) {
			errno = EINVAL;
			break;
		}
		/* room for the WQE and, later, its completion */
		if (rc->sq_tail - rc->sq_free + rc->cq_sq >= rc->cfg.max_send) {
			errno = ENOMEM;
			break;
		}
		w = SQ(rc, rc->sq_tail);
		memset(w, 0, sizeof(*w));
		w->wr_id = x->wr_id;
		w->opcode = x->opcode;
		w->flags = x->flags;
		w->len = (uint32_t)len;
		w->raddr = x->remote_addr;
		w->rkey = x->rkey;
		w->imm = x->imm_data;
		w->npkts = msg_pkts(len, rc->pmtu);
		if (x->flags & FAB_SEND_INLINE) {
			uint64_t off = 0;

			w->inl = rc->inl + (size_t)slot * rc->cfg.max_inline;
			for (j = 0; j < x->num_sge; j++) {
				if (!x->sg_list[j].length)
					continue;
				memcpy(w->inl + off, (const void *)(uintptr_t)
				       x->sg_list[j].addr,
				       x->sg_list[j].length);
				off += x->sg_list[j].length;
			}
		} else {
			unsigned int acc = x->opcode == FAB_WR_RDMA_READ ?
					   FAB_ACCESS_LOCAL_WRITE : 0;

			w->num_sge = x->num_sge;
			for (j = 0; j < x->num_sge; j++) {
				w->sge[j] = x->sg_list[j];
				if (!rc->ops.mr_find(rc->ctx, w->sge[j].lkey, 0,
						     w->sge[j].addr,
						     w->sge[j].length, acc))
					w->err = FAB_WC_LOC_PROT_ERR;
			}
		}
		if (w->err)
			w->npkts = 0;
		rc->sq_tail++;
		if (rc->state == SOFT_RC_ERROR) {
			sq_complete(rc, w, FAB_WC_WR_FLUSH_ERR);
			rc->sq_head = rc->sq_free = rc->tx = rc->sq_tail;
		}
	}
	/* an owed ACK goes with our own requests, ahead of them: the peer
	 * takes both in one wake-up, and a requester that waits for its
	 * send's completion before it answers (as ibv_rc_pingpong does)
	 * does not wait out the delay */
	if (i > 0 && rc->state == SOFT_RC_RTS && rc->ack_owed) {
		rc->ack_due = 0;
		resp_push(rc);
	}
	req_complete(rc);
	req_push(rc);
	if (i == 0 && n > 0)
		return -1;
	return i;
}

int soft_rc_post_recv(struct soft_rc *rc, const struct fab_recv_wr *wr,
		      int n)
{
	int i;

	if (n < 0 || (n && !wr)) {
		errno = EINVAL;
		return -1;
	}
	for (i = 0; i < n; i++) {
		const struct fab_recv_wr *x = &wr[i];
		struct rwqe *q;
		uint64_t len = 0;
		unsigned int j;

		if (x->num_sge > rc->cfg.max_sge || (x->num_sge && !x->sg_list)) {
			errno = EINVAL;
			break;
		}
		for (j = 0; j < x->num_sge; j++)
			len += x->sg_list[j].length;
		if (len > IB_RC_MAX_DMA_LEN) {
			errno = EINVAL;
			break;
		}
		if (rc->rq_tail - rc->rq_head + rc->cq_rq >= rc->cfg.max_recv) {
			errno = ENOMEM;
			break;
		}
		q = RQ(rc, rc->rq_tail);
		q->wr_id = x->wr_id;
		q->num_sge = x->num_sge;
		for (j = 0; j < x->num_sge; j++)
			q->sge[j] = x->sg_list[j];
		q->len = len;
		rc->rq_tail++;
		if (rc->state == SOFT_RC_ERROR)
			rq_complete(rc, FAB_WC_WR_FLUSH_ERR, FAB_WC_RECV, 0,
				    0, 0);
	}
	if (i == 0 && n > 0)
		return -1;
	return i;
}

void soft_rc_input(struct soft_rc *rc, const uint8_t *pkt, size_t len,
		   uint64_t now_us)
{
	struct ib_rc r;
	unsigned int f;

	rc->now = now_us;
	rc->st.rx_packets++;
	if (rc->state != SOFT_RC_RTS) {
		rc->st.drop_state++;
		return;
	}
	if (ib_rc_parse_checked(pkt, len, rc->pmtu, &r) != IB_RC_OK) {
		rc->st.drop_malformed++;
		return;
	}
	if (r.bth.destqp != rc->c.qpn || r.lrh.slid != rc->c.dlid ||
	    (r.bth.pkey & 0x7fff) != (rc->c.pkey & 0x7fff)) {
		rc->st.drop_not_ours++;
		return;
	}
	f = ib_rc_op_flags(r.bth.opcode);
	if (f & IB_RC_F_REQUEST)
		resp_input(rc, &r);
	else
		req_input(rc, &r);
	/* what the input unblocked (window, RNR, responses) goes now */
	if (rc->state == SOFT_RC_RTS)
		req_push(rc);
}

void soft_rc_progress(struct soft_rc *rc, uint64_t now_us)
{
	rc->now = now_us;
	if (rc->state == SOFT_RC_RESET)
		return;
	resp_push(rc);
	if (rc->state != SOFT_RC_RTS)
		return;
	req_timer(rc);
	req_push(rc);
}

uint64_t soft_rc_deadline(const struct soft_rc *rc)
{
	uint64_t d = UINT64_MAX;
	uint32_t i;

	if (rc->state == SOFT_RC_RESET)
		return d;
	if (rc->nak.pending)
		return 0;
	if (rc->state != SOFT_RC_RTS)
		return d;
	if (rc->blocked)
		return 0;
	for (i = 0; i < rc->nrd; i++)
		if (rc->rd[i].valid && rc->rd[i].next < rc->rd[i].npkts)
			return 0;
	if (rc->ack_owed)
		d = rc->ack_due;
	if (rc->rnr_wait) {
		if (rc->rnr_until < d)
			d = rc->rnr_until;
	} else if (rc->rto_at && rc->rto_at < d) {
		d = rc->rto_at;
	}
	return d;
}

int soft_rc_poll(struct soft_rc *rc, struct fab_wc *wc, int n)
{
	int i;

	for (i = 0; i < n && rc->cq_head != rc->cq_tail; i++) {
		wc[i] = rc->cq[rc->cq_head++ & rc->cq_mask];
		if (wc[i].recv)
			rc->cq_rq--;
		else
			rc->cq_sq--;
	}
	return i;
}

void soft_rc_ack_now(struct soft_rc *rc, uint64_t now_us)
{
	rc->now = now_us;
	if (rc->state != SOFT_RC_RTS || !rc->ack_owed)
		return;
	rc->ack_due = 0;
	resp_push(rc);
}

void soft_rc_set_error(struct soft_rc *rc)
{
	rc_error(rc, FAB_WC_WR_FLUSH_ERR);
}

const struct soft_rc_stats *soft_rc_stats(const struct soft_rc *rc)
{
	return &rc->st;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * One RDS connection's send queue and acknowledgement state (rds_conn.h).
 * The queue is a list in sequence order: messages before cur have been
 * sent and wait for their ACK, cur and those after it are still to go
 * (after a reset, sent ones among them too, marked resend).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ulp/rds/rds_conn.h"

void rds_conn_init(struct rds_conn *c, rds_conn_release_fn release,
		   void *arg)
{
	memset(c, 0, sizeof(*c));
	c->next_tx_seq = 1;
	c->unacked_pkts = 0;	/* the first message asks for an ACK */
	c->unacked_bytes = RDS_CONN_UNACKED_BYTES;
	c->cong_pending = true;
	c->release = release;
	c->arg = arg;
}

void rds_conn_fini(struct rds_conn *c)
{
	struct rds_cmsg *m, *n;

	for (m = c->head; m; m = n) {
		n = m->next;
		free(m);
	}
	c->head = c->tail = c->cur = NULL;
	c->nmsgs = 0;
	c->bytes = 0;
}

int rds_conn_queue(struct rds_conn *c, uint16_t sport, uint16_t dport,
		   const struct iovec *iov, int iovcnt, void *ctx)
{
	struct rds_cmsg *m;
	size_t len = 0, off = 0;
	int i;

	for (i = 0; i < iovcnt; i++) {
		len += iov[i].iov_len;
		if (len > RDS_MAX_MSG_SIZE) {
			errno = EMSGSIZE;
			return -1;
		}
	}
	m = malloc(sizeof(*m) + len);
	if (!m) {
		errno = ENOMEM;
		return -1;
	}
	memset(m, 0, sizeof(*m));
	for (i = 0; i < iovcnt; i++) {
		if (iov[i].iov_len)
			memcpy(m->data + off, iov[i].iov_base, iov[i].iov_len);
		off += iov[i].iov_len;
	}
	m->seq = c->next_tx_seq++;
	m->sport = sport;
	m->dport = dport;
	m->len = (uint32_t)len;
	m->ctx = ctx;
	if (c->tail)
		c->tail->next = m;
	else
		c->head = m;
	c->tail = m;
	if (!c->cur)
		c->cur = m;
	c->nmsgs++;
	c->bytes += len;
	return 0;
}

bool rds_conn_ready(const struct rds_conn *c)
{
	bool room = c->inflight < RDS_CONN_WINDOW;

	return (c->cur && room) || (c->cong_pending && !c->cur_busy) ||
	       c->cong_busy || c->ack_pending;
}

bool rds_conn_busy(const struct rds_conn *c)
{
	return c->head || rds_conn_ready(c);
}

void rds_conn_cong_changed(struct rds_conn *c)
{
	c->cong_pending = true;
}

void rds_conn_rx_msg(struct rds_conn *c, uint64_t seq, bool ack_required)
{
	c->ack_valid = true;
	c->ack_seq = seq;
	c->ack_fresh = false;
	if (ack_required)
		c->ack_pending = true;
}

static void unlink_msg(struct rds_conn *c, struct rds_cmsg *prev,
		       struct rds_cmsg *m)
{
	if (prev)
		prev->next = m->next;
	else
		c->head = m->next;
	if (c->tail == m)
		c->tail = prev;
	if (c->cur == m)
		c->cur = m->next;
	c->nmsgs--;
	c->bytes -= m->len;
	c->inflight -= m->frags_out < c->inflight ? m->frags_out : c->inflight;
	if (m->sent)
		c->sent_bytes -= m->len;
}

static void release_msg(struct rds_conn *c, struct rds_cmsg *m, int err)
{
	if (c->release)
		c->release(c->arg, m, err);
	free(m);
}

int rds_conn_ack(struct rds_conn *c, uint64_t ack)
{
	struct rds_cmsg *m;
	int beyond = 0;

	if (ack > c->last_sent_seq) {
		beyond = 1;
		c->acks_beyond++;
		ack = c->last_sent_seq;
	}
	while ((m = c->head) && m->sent && m->seq <= ack &&
	       !(m == c->cur && c->cur_busy)) {
		unlink_msg(c, NULL, m);
		release_msg(c, m, 0);
	}
	return beyond;
}

static uint64_t tx_ack(struct rds_conn *c)
{
	c->ack_pending = false;	/* carried by this SEND */
	if (!c->ack_valid || c->ack_fresh)
		return 0;
	c->ack_sent = c->ack_seq;
	return c->ack_seq;
}

bool rds_conn_ack_owed(const struct rds_conn *c)
{
	return c->ack_valid && !c->ack_fresh && c->ack_seq != c->ack_sent;
}

void rds_conn_want_ack(struct rds_conn *c)
{
	if (c->ack_valid)
		c->ack_pending = true;
}

static enum rds_tx_kind tx_cong(struct rds_conn *c, uint8_t *buf,
				const uint8_t *cong, struct rds_tx *tx)
{
	struct rds_header h;
	uint32_t off = c->cong_busy ? RDS_FRAG_SIZE : 0;

	if (!c->cong_busy) {
		if (cong)
			memcpy(c->cong_snap, cong, RDS_CONG_MAP_BYTES);
		else
			memset(c->cong_snap, 0, RDS_CONG_MAP_BYTES);
	}
	rds_cong_hdr(&h, tx_ack(c));
	rds_hdr_put(buf, &h);
	memcpy(buf + RDS_HDR_LEN, c->cong_snap + off, RDS_FRAG_SIZE);
	c->cong_busy = !c->cong_busy;
	c->cong_pending = false;
	tx->kind = RDS_TX_CONG;
	tx->len = RDS_SEND_MAX;
	tx->last = !c->cong_busy;
	return tx->kind;
}

static unsigned int msg_frags(const struct rds_cmsg *m)
{
	return m->len ? (m->len + RDS_FRAG_SIZE - 1) / RDS_FRAG_SIZE : 1;
}

/* The flags of m's (re)transmission, decided at its first fragment. */
static void decide_flags(struct rds_conn *c, struct rds_cmsg *m,
			 struct rds_tx *tx)
{
	if (m->resend) {
		m->flags |= RDS_FLAG_RETRANSMITTED | RDS_FLAG_ACK_REQUIRED;
		m->resend = false;
		c->retransmits++;
		c->since_flag = 0;
		tx->retransmit = true;
		return;
	}
	m->flags &= (uint8_t)~RDS_FLAG_ACK_REQUIRED;
	if (c->unacked_pkts == 0 || c->unacked_bytes < m->len) {
		m->flags |= RDS_FLAG_ACK_REQUIRED;
		c->unacked_pkts = RDS_CONN_UNACKED_PKTS;
		c->unacked_bytes = RDS_CONN_UNACKED_BYTES;
	} else {
		c->unacked_pkts--;
		c->unacked_bytes -= m->len;
	}
	/* the end of a burst, not a lone message: in a request and answer
	 * exchange the answer carries the ACK (h_ack), and an ACK-only
	 * frame each way per exchange would double the frames and wake
	 * both hosts once more for nothing */
	if (!m->next && c->head != m)
		m->flags |= RDS_FLAG_ACK_REQUIRED;
	if (c->sent_bytes > RDS_CONN_ACKREQ_BYTES)
		m->flags |= RDS_FLAG_ACK_REQUIRED;
	if (c->since_flag + msg_frags(m) >= RDS_CONN_WINDOW / 4)
		m->flags |= RDS_FLAG_ACK_REQUIRED;
	if (m->flags & RDS_FLAG_ACK_REQUIRED)
		c->since_flag = 0;
	else
		c->since_flag += msg_frags(m);
}

static enum rds_tx_kind tx_data(struct rds_conn *c, uint8_t *buf,
				struct rds_tx *tx)
{
	struct rds_cmsg *m = c->cur;
	struct rds_header h;
	uint32_t n;

	if (!c->cur_busy) {
		if (!m->flagged || m->resend)
			decide_flags(c, m, tx);
		m->flagged = true;
	}
	n = m->len - c->cur_off;
	if (n > RDS_FRAG_SIZE)
		n = RDS_FRAG_SIZE;
	memset(&h, 0, sizeof(h));
	h.seq = m->seq;
	h.ack = tx_ack(c);
	h.len = m->len;
	h.sport = m->sport;
	h.dport = m->dport;
	h.flags = m->flags;
	rds_hdr_put(buf, &h);
	if (n)
		memcpy(buf + RDS_HDR_LEN, m->data + c->cur_off, n);
	c->cur_off += n;
	m->frags_out++;
	c->inflight++;
	tx->kind = RDS_TX_DATA;
	tx->len = RDS_HDR_LEN + n;
	tx->msg = m;
	if (c->cur_off < m->len) {
		c->cur_busy = true;
		return tx->kind;
	}
	tx->last = true;
	if (!m->sent)
		c->sent_bytes += m->len;
	m->sent = true;
	if (m->seq > c->last_sent_seq)
		c->last_sent_seq = m->seq;
	c->cur = m->next;
	c->cur_off = 0;
	c->cur_busy = false;
	return tx->kind;
}

enum rds_tx_kind rds_conn_next(struct rds_conn *c, uint8_t *buf,
			       const uint8_t *cong, struct rds_tx *tx)
{
	bool room = c->inflight < RDS_CONN_WINDOW;

	memset(tx, 0, sizeof(*tx));
	if (c->cong_busy)
		return tx_cong(c, buf, cong, tx);
	if (c->cur_busy && room)
		return tx_data(c, buf, tx);
	if (c->cong_pending && !c->cur_busy)
		return tx_cong(c, buf, cong, tx);
	if (c->cur && !c->cur_busy && room)
		return tx_data(c, buf, tx);
	if (c->ack_pending) {
		rds_ack_put(buf, tx_ack(c));
		tx->kind = RDS_TX_ACK;
		tx->len = RDS_HDR_LEN;
		tx->last = true;
		return tx->kind;
	}
	return RDS_TX_NONE;
}

void rds_conn_reset(struct rds_conn *c)
{
	struct rds_cmsg *m;

	for (m = c->head; m; m = m->next) {
		if (m->sent)
			m->resend = true;
		m->frags_out = 0;
	}
	c->inflight = 0;
	c->since_flag = 0;
	c->cur = c->head;
	c->cur_off = 0;
	c->cur_busy = false;
	c->cong_busy = false;
	c->cong_pending = true;
	/* a new link sends h_ack 0 until a message comes on it, as the
	 * kernel's does (rds_ib_conn_path_shutdown() clears i_ack_next):
	 * the peer may have restarted its sequence at 1, and keeps the
	 * h_ack it heard on a link monotonic (ib_cm.c,
	 * rds_ib_tasklet_fn_recv: i_ack_recv), so one from the old sequence
	 * would stop it releasing anything on this link.  The CM's
	 * ack_seq may still carry it (the kernel drops what it covers from
	 * a retransmit queue that is empty after a restart). */
	c->ack_fresh = true;
	c->ack_pending = false;
}

unsigned int rds_conn_cancel(struct rds_conn *c, void *ctx, uint16_t dport)
{
	struct rds_cmsg *m, *prev = NULL, *n;
	unsigned int k = 0;

	for (m = c->head; m; m = n) {
		n = m->next;
		if (m->ctx == ctx && !m->forgotten && m->dport == dport &&
		    !m->sent && !(m == c->cur && c->cur_busy)) {
			unlink_msg(c, prev, m);
			release_msg(c, m, ECANCELED);
			k++;
			continue;
		}
		prev = m;
	}
	return k;
}

void rds_conn_forget(struct rds_conn *c, void *ctx)
{
	struct rds_cmsg *m;

	for (m = c->head; m; m = m->next) {
		if (m->ctx == ctx) {
			m->ctx = NULL;
			m->forgotten = true;
		}
	}
}

unsigned int rds_conn_unacked(const struct rds_conn *c)
{
	const struct rds_cmsg *m;
	unsigned int k = 0;

	for (m = c->head; m; m = m->next)
		if (m->sent)
			k++;
	return k;
}

unsigned int rds_conn_queued(const struct rds_conn *c)
{
	return c->nmsgs - rds_conn_unacked(c);
}

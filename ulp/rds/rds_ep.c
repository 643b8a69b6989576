// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The RDS endpoint (rds_ep.h) after the kernel's net/rds: connection.c
 * and threads.c (a connection per address pair, its reconnect backoff),
 * ib_cm.c (the CM exchange and its races), ib_send.c / ib_recv.c (SENDs
 * of header + 4096 bytes, ACKs), cong.c (the map).
 *
 * A struct rconn is the kernel's rds_connection: it lives from the first
 * message to or from its peer until rds_ep_free, and holds the sequence
 * state (rds_conn for sending, rds_frag for receiving).  A struct link
 * is one attempt at carrying it: a CM id, its RC QP and one registered
 * region of receive slots and send slots (RDS_SEND_MAX bytes each).  A
 * dropped link leaves its rconn at once (which may connect again) and is
 * destroyed after its DREQ is answered, or a timeout: never from inside
 * a callback that still uses it.
 *
 * Where the kernel sets IB_SEND_SOLICITED (the last fragment of a
 * message, every ACK: ib_send.c rds_ib_xmit, ib_recv.c
 * rds_ib_send_ack) we set FAB_SEND_SOLICITED: the kernel arms its
 * receive CQ for solicited completions only (ib_cm.c,
 * ib_req_notify_cq(IB_CQ_SOLICITED)) and reaps and reposts receives
 * only when woken; without SE it sleeps until its 1024 receives are
 * used up, then answers every SEND with an RNR NAK.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <arpa/inet.h>
#include <event2/event.h>

#include "ulp/rds/rds_conn.h"
#include "ulp/rds/rds_ep.h"
#include "ulp/rds/rds_frag.h"

#define DEF_WRS		256u		/* sends: RDS_IB_DEFAULT_SEND_WR */
#define DEF_RECV_WRS	1024u		/* RDS_IB_DEFAULT_RECV_WR: a sender
					 * with 256 in flight finds receives
					 * posted while we lag up to 768 */
#define DEF_CONNS	1024u
#define SLOT		RDS_SEND_MAX
#define WR_TX		0x100000000ull	/* wr_id: a send slot */
#define BACKOFF_MIN_MS	4u		/* one jiffy at HZ 250 */
#define BACKOFF_MAX_MS	1000u		/* rds_sysctl_reconnect_max_jiffies */
#define RESOLVE_RETRY_MS 100u
#define RTU_TIMEOUT_MS	10000u
#define DREQ_LINGER_MS	2000u
#define CM_BACKLOG	128		/* rds_rdma_listen_init_common()'s */
#define DELAYED_ACK_MS	20u		/* ours: see ack_timer_cb */
#define STALL_MS	10000u		/* ours: see wd_cb */
#define STALL_STRIKES	2u		/* checks at stall_ms / 2 apart */
#define RETRY_COUNT	1		/* RDS_IB_DEFAULT_RETRY_COUNT */
#define RNR_RETRY	7
#define RNR_TIMER	10		/* IB_RNR_TIMER_000_32: ib_cm.c's
					 * rdma_set_min_rnr_timer, both ends */
#define REJ_CODE	1		/* RDS_RDMA_REJ_INCOMPAT, host order */

#define SEND_SOLICITED	FAB_SEND_SOLICITED

enum cstate { C_DOWN = 0, C_CONNECTING, C_UP };

struct rconn;

struct link {
	struct rds_ep *ep;
	struct link *next;
	struct rconn *rc;	/* NULL: dropped, waiting to be destroyed */
	struct fab_cm_id *id;
	struct fab_qp *qp;
	struct fab_mr *mr;
	uint8_t *mem;
	struct event *qp_ev, *tmo_ev;
	struct event *wd_ev;	/* while up: the stall watchdog */
	uint64_t completions;	/* send and receive completions taken */
	uint64_t wd_mark;	/* completions at the last check */
	unsigned int wd_strikes; /* checks in a row that found a stall */
	unsigned int tx_head, tx_inflight;
	unsigned int tx_tail;	/* the oldest slot in flight */
	bool passive;
	bool up;
	bool dreq_sent;
	bool gone;		/* destroy at the next timer */
};

struct local_map {
	struct local_map *next;
	struct inet_addr addr;
	struct rds_cong_map map;
};

struct rconn {
	struct rds_ep *ep;
	struct rconn *next;
	struct inet_addr laddr, faddr;
	enum cstate st;
	struct link *link;
	struct rds_conn c;
	struct rds_frag f;
	struct local_map *lmap;
	struct rds_cong_map peer;
	bool peer_valid;
	struct event *timer;
	struct event *ack_timer;
	unsigned int backoff_ms;
	bool dropped;		/* went down once: next attempts count */
	bool kick;		/* messages queued since the last link_tx */
	bool win_full;		/* link_tx stopped at the window */
	bool fail_logged;	/* a connect failure logged since the last
				 * connection up */
};

struct rds_ep {
	struct event_base *base;
	struct fab_dev *dev;
	struct rds_ep_cfg cfg;
	struct rds_ep_ops ops;
	void *arg;
	struct event *cm_ev;
	struct fab_cm_id *l4, *l6;
	struct rconn *conns;
	unsigned int nconns;
	struct link *links;
	struct local_map *lmaps;
	struct event *kick_ev;	/* rds_ep_send's: link_tx once per loop */
	struct rds_ep_stats st;
};

static const char *drop_reason(unsigned int i)
{
	return rds_drop_name((enum rds_drop)i);
}

const struct counter_desc rds_ep_counters[] = {
	COUNTER("conns_active", struct rds_ep_stats, conns_active,
		"RDS connections made."),
	COUNTER("conns_passive", struct rds_ep_stats, conns_passive,
		"RDS connections taken."),
	COUNTER("conns_up", struct rds_ep_stats, conns_up,
		"RDS connections up now."),
	COUNTER("connect_failed", struct rds_ep_stats, connect_failed,
		"RDS connects rejected, unreachable or timed out."),
	COUNTER("reconnects", struct rds_ep_stats, reconnects,
		"RDS connects after a drop."),
	COUNTER("races", struct rds_ep_stats, races,
		"REQs while we connected (rejected with 1)."),
	COUNTER("stale", struct rds_ep_stats, stale,
		"REQs while up: ours dropped, the REQ rejected."),
	COUNTER("rejected", struct rds_ep_stats, rejected,
		"REQs refused (version, address, limit)."),
	COUNTER("tx_msgs", struct rds_ep_stats, tx_msgs, "RDS messages sent."),
	COUNTER("tx_bytes", struct rds_ep_stats, tx_bytes,
		"RDS payload bytes sent."),
	COUNTER("tx_frags", struct rds_ep_stats, tx_frags, "RDS SENDs posted."),
	COUNTER("rx_msgs", struct rds_ep_stats, rx_msgs,
		"RDS messages received."),
	COUNTER("rx_bytes", struct rds_ep_stats, rx_bytes,
		"RDS payload bytes received."),
	COUNTER("rx_frags", struct rds_ep_stats, rx_frags,
		"RDS SENDs received."),
	COUNTER("retransmits", struct rds_ep_stats, retransmits,
		"RDS messages resent after a reconnect."),
	COUNTER("dups", struct rds_ep_stats, dups,
		"Retransmitted RDS messages already received."),
	COUNTER("acks_tx", struct rds_ep_stats, acks_tx,
		"ACK-only frames sent."),
	COUNTER("acks_rx", struct rds_ep_stats, acks_rx,
		"ACK-only frames received."),
	COUNTER("acks_beyond", struct rds_ep_stats, acks_beyond,
		"ACKs past what was sent (clamped)."),
	COUNTER("cong_tx", struct rds_ep_stats, cong_tx,
		"Congestion map updates sent."),
	COUNTER("cong_rx", struct rds_ep_stats, cong_rx,
		"Congestion map updates received."),
	COUNTER("pings_rx", struct rds_ep_stats, pings_rx, "Pings received."),
	COUNTER("pongs_tx", struct rds_ep_stats, pongs_tx, "Pongs sent."),
	COUNTER("no_socket", struct rds_ep_stats, no_socket,
		"RDS messages for a port nobody bound."),
	COUNTER("qp_errors", struct rds_ep_stats, qp_errors,
		"RDS connections whose queue pair failed."),
	COUNTER("disconnects", struct rds_ep_stats, disconnects,
		"RDS connections the peer disconnected (DREQ)."),
	COUNTER("stalls", struct rds_ep_stats, stalls,
		"RDS connections dropped because their queue pair stopped "
		"moving (no completion for 10 s with work outstanding)."),
	COUNTER("window_full", struct rds_ep_stats, window_full,
		"Times sending stopped at the window of unacknowledged "
		"fragments (the peer slow to acknowledge)."),
	COUNTER("loop_msgs", struct rds_ep_stats, loop_msgs,
		"RDS messages to this host's own addresses (no connection)."),
	COUNTER_ARRAY("drop", struct rds_ep_stats, drops, drop_reason,
		      "RDS connections dropped for a bad SEND, by reason."),
	COUNTERS_END
};

static void conn_kick(struct rconn *rc);
static void link_drop(struct link *l, const char *why);
static void conn_up(struct rconn *rc, struct link *l);

/* ---- helpers ------------------------------------------------------------- */

static uint8_t *rx_slot(const struct link *l, unsigned int i)
{
	return l->mem + (size_t)i * SLOT;
}

static uint8_t *tx_slot(const struct link *l, unsigned int i)
{
	return l->mem + (size_t)(l->ep->cfg.recv_wrs + i) * SLOT;
}

static int family_port(int family)
{
	return family == AF_INET6 ? RDS_CM_PORT : RDS_PORT;
}

/* One line about rc's connection for ops->log, named as the kernel's
 * RDS/IB names it in dmesg: <laddr,faddr,tos>. */
static void __attribute__((format(printf, 3, 4)))
ep_log(const struct rds_ep *ep, const struct rconn *rc, const char *fmt, ...)
{
	char la[INET6_ADDRSTRLEN], fa[INET6_ADDRSTRLEN], msg[256], line[400];
	va_list ap;

	if (!ep->ops.log)
		return;
	inet_ntop(rc->laddr.family, rc->laddr.raw, la, sizeof(la));
	inet_ntop(rc->faddr.family, rc->faddr.raw, fa, sizeof(fa));
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(line, sizeof(line), "RDS <%s,%s,0>: %s", la, fa, msg);
	ep->ops.log(ep->arg, line);
}

static void arm(struct event *ev, unsigned int ms)
{
	struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };

	evtimer_add(ev, &tv);
}

static struct local_map *lmap_get(struct rds_ep *ep,
				  const struct inet_addr *a, bool create)
{
	struct local_map *m;

	for (m = ep->lmaps; m; m = m->next)
		if (inet_addr_equal(&m->addr, a))
			return m;
	if (!create)
		return NULL;
	m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->addr = *a;
	m->next = ep->lmaps;
	ep->lmaps = m;
	return m;
}

/* ---- links --------------------------------------------------------------- */

static void link_free(struct link *l)
{
	struct rds_ep *ep = l->ep;
	struct link **pp;

	for (pp = &ep->links; *pp; pp = &(*pp)->next) {
		if (*pp == l) {
			*pp = l->next;
			break;
		}
	}
	if (l->rc && l->rc->link == l)
		l->rc->link = NULL;
	if (l->qp_ev)
		event_free(l->qp_ev);
	if (l->tmo_ev)
		event_free(l->tmo_ev);
	if (l->wd_ev)
		event_free(l->wd_ev);
	if (l->id)
		fab_cm_destroy(l->id);
	if (l->mr)
		fab_mr_dereg(l->mr);
	free(l->mem);
	free(l);
}

static void link_tmo_cb(evutil_socket_t fd, short what, void *arg)
{
	struct link *l = arg;

	(void)fd;
	(void)what;
	if (l->gone || !l->rc) {
		link_free(l);
		return;
	}
	/* a connect or an accept that never completed */
	if (!l->up) {
		l->ep->st.connect_failed++;
		link_drop(l, l->passive ? "no RTU" : "connect timed out");
	}
}

static int post_recv(struct link *l, unsigned int i)
{
	struct fab_sge sge = {
		.addr = (uintptr_t)rx_slot(l, i),
		.length = SLOT,
		.lkey = fab_mr_lkey(l->mr),
	};
	struct fab_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 };

	return fab_qp_post_recv(l->qp, &wr, 1) == 1 ? 0 : -1;
}

static void qp_cb(evutil_socket_t fd, short what, void *arg);
static void wd_cb(evutil_socket_t fd, short what, void *arg);

static struct link *link_new(struct rds_ep *ep, struct rconn *rc,
			     struct fab_cm_id *id, bool passive)
{
	const struct rds_ep_cfg *cfg = &ep->cfg;
	struct fab_qp_init qi = {
		.type = FAB_QPT_RC, .pkey_index = cfg->pkey_index,
		.max_send = cfg->send_wrs, .max_recv = cfg->recv_wrs,
		.max_sge = 1,
	};
	size_t memlen = (size_t)(cfg->recv_wrs + cfg->send_wrs) * SLOT;
	char err[FAB_ERRLEN];
	struct link *l;
	unsigned int i;

	l = calloc(1, sizeof(*l));
	if (!l)
		return NULL;
	l->ep = ep;
	l->id = id;
	l->passive = passive;
	l->next = ep->links;
	ep->links = l;
	l->mem = malloc(memlen);
	l->tmo_ev = evtimer_new(ep->base, link_tmo_cb, l);
	l->wd_ev = evtimer_new(ep->base, wd_cb, l);
	if (!l->mem || !l->tmo_ev || !l->wd_ev)
		goto fail;
	l->mr = fab_mr_reg(ep->dev, l->mem, memlen, FAB_ACCESS_LOCAL_WRITE,
			   err, sizeof(err));
	if (!l->mr)
		goto fail;
	l->qp = fab_cm_qp_create(id, &qi, err, sizeof(err));
	if (!l->qp)
		goto fail;
	l->qp_ev = event_new(ep->base, fab_qp_fd(l->qp), EV_READ | EV_PERSIST,
			     qp_cb, l);
	if (!l->qp_ev)
		goto fail;
	event_add(l->qp_ev, NULL);
	for (i = 0; i < cfg->recv_wrs; i++)
		if (post_recv(l, i) < 0)
			goto fail;
	l->rc = rc;
	rc->link = l;
	fab_cm_set_context(id, l);
	return l;
fail:
	l->id = NULL;		/* the caller's */
	link_free(l);
	return NULL;
}

/* The link is done with: off its rconn (which goes down), DREQ, and
 * destroyed later.  why: what is logged when it was its rconn's. */
static void link_drop(struct link *l, const char *why)
{
	struct rconn *rc = l->rc;
	struct rds_ep *ep = l->ep;

	if (l->gone)
		return;
	l->gone = true;
	/* a connect failing again and again (the peer down) is logged
	 * once until a connection is up */
	if (rc && rc->link == l && (l->up || !rc->fail_logged)) {
		unsigned int n = rds_conn_unacked(&rc->c);

		ep_log(ep, rc, "%s connection %s: %s, %u message%s to resend%s",
		       l->passive ? "passive" : "active",
		       l->up ? "down" : "not made", why, n, n == 1 ? "" : "s",
		       l->up ? "" : " (further failures not logged until "
		       "one is up)");
		rc->fail_logged = !l->up;
	}
	if (rc) {
		l->rc = NULL;
		if (rc->link == l) {
			rc->link = NULL;
			if (rc->st == C_UP && ep->st.conns_up)
				ep->st.conns_up--;
			rc->st = C_DOWN;
			rc->dropped = true;
			rds_conn_reset(&rc->c);
			rds_frag_reset(&rc->f);
			conn_kick(rc);
		}
	}
	if (l->qp_ev)
		event_del(l->qp_ev);
	if (l->wd_ev)
		event_del(l->wd_ev);
	if (l->up && !l->dreq_sent) {
		l->dreq_sent = true;
		fab_cm_disconnect(l->id, NULL, 0);
		arm(l->tmo_ev, DREQ_LINGER_MS);
		return;
	}
	arm(l->tmo_ev, 0);
}

/* ---- sending ------------------------------------------------------------- */

/*
 * Fragments go out in batches of up to TX_BATCH work requests, one
 * fab_qp_post_send each (one doorbell on verbs), of which only the last
 * is signaled: its completion retires the slots before it too (RC
 * completes in order; a failed one completes anyway and drops the
 * link).  On rxe every doorbell and every completion event is a system
 * call, which the guest tier's RDS benchmark counted one per fragment.
 */
#define TX_BATCH	16

static void tx_count(struct rds_ep *ep, const struct rds_tx *tx)
{
	ep->st.tx_frags++;
	switch (tx->kind) {
	case RDS_TX_ACK:
		ep->st.acks_tx++;
		break;
	case RDS_TX_CONG:
		if (tx->last)
			ep->st.cong_tx++;
		break;
	case RDS_TX_DATA:
		if (tx->retransmit)
			ep->st.retransmits++;
		if (tx->last && !tx->retransmit) {
			ep->st.tx_msgs++;
			ep->st.tx_bytes += tx->msg->len;
		}
		break;
	default:
		break;
	}
}

static void link_tx(struct link *l)
{
	struct rconn *rc = l->rc;
	struct rds_ep *ep = l->ep;
	struct fab_sge sge[TX_BATCH];
	struct fab_rc_wr wr[TX_BATCH];
	struct rds_tx tx;
	unsigned int n, slot;
	uint8_t *buf;

	if (rc)
		rc->kick = false;
	while (rc && l->up && !l->gone && rds_conn_ready(&rc->c)) {
		n = 0;
		slot = l->tx_head;
		while (n < TX_BATCH &&
		       l->tx_inflight + n < ep->cfg.send_wrs) {
			buf = tx_slot(l, slot);
			if (rds_conn_next(&rc->c, buf, rc->lmap ?
					  rc->lmap->map.bits : NULL,
					  &tx) == RDS_TX_NONE)
				break;
			sge[n].addr = (uintptr_t)buf;
			sge[n].length = (uint32_t)tx.len;
			sge[n].lkey = fab_mr_lkey(l->mr);
			memset(&wr[n], 0, sizeof(wr[n]));
			wr[n].wr_id = WR_TX | slot;
			wr[n].opcode = FAB_WR_SEND;
			wr[n].flags = tx.last ? SEND_SOLICITED : 0;
			wr[n].sg_list = &sge[n];
			wr[n].num_sge = 1;
			tx_count(ep, &tx);
			slot = (slot + 1) % ep->cfg.send_wrs;
			n++;
		}
		if (!n)
			break;
		wr[n - 1].flags |= FAB_SEND_SIGNALED;
		if (fab_qp_post_send(l->qp, wr, (int)n) != (int)n) {
			ep->st.qp_errors++;
			link_drop(l, "posting a send failed");
			return;
		}
		l->tx_head = slot;
		l->tx_inflight += n;
		if (n < TX_BATCH)
			break;
	}
	if (rc && rc->c.cur && rc->c.inflight >= RDS_CONN_WINDOW) {
		if (!rc->win_full)
			ep->st.window_full++;
		rc->win_full = true;
	} else if (rc) {
		rc->win_full = false;
	}
}

/* A send completion for slot: it and every slot before it are done. */
static void tx_done(struct link *l, unsigned int slot)
{
	unsigned int nw = l->ep->cfg.send_wrs;
	unsigned int k = (slot + nw - l->tx_tail) % nw + 1;

	if (k > l->tx_inflight)		/* not ours to retire: keep count */
		k = l->tx_inflight;
	l->tx_inflight -= k;
	l->tx_tail = (l->tx_tail + k) % nw;
}

/* ---- receiving ----------------------------------------------------------- */

static void rx_ack(struct rconn *rc, uint64_t ack)
{
	if (rds_conn_ack(&rc->c, ack))
		rc->ep->st.acks_beyond++;
}

static void rx_message(struct rconn *rc, const struct rds_in *in)
{
	struct rds_ep *ep = rc->ep;
	struct rds_name dst, src;
	struct iovec none = { NULL, 0 };

	rds_conn_rx_msg(&rc->c, in->hdr.seq, in->ack_required);
	ep->st.rx_msgs++;
	ep->st.rx_bytes += in->len;
	switch (rds_msg_kind(&in->hdr)) {
	case RDS_MSG_PING:
		ep->st.pings_rx++;
		if (rds_conn_queue(&rc->c, 0, in->hdr.sport, &none, 1,
				   NULL) == 0)
			ep->st.pongs_tx++;
		return;
	case RDS_MSG_PING_NULL:
	case RDS_MSG_HS_PONG:
		return;
	case RDS_MSG_DATA:
		break;
	}
	dst.addr = rc->laddr;
	dst.port = in->hdr.dport;
	src.addr = rc->faddr;
	src.port = in->hdr.sport;
	if (ep->ops.deliver(ep->arg, &dst, &src, in->data, in->len) < 0)
		ep->st.no_socket++;
}

/* One received SEND; false when the link was dropped. */
static bool on_recv(struct link *l, const uint8_t *p, uint32_t len)
{
	struct rconn *rc = l->rc;
	struct rds_ep *ep = l->ep;
	enum rds_drop why;
	struct rds_in in;

	ep->st.rx_frags++;
	why = rds_frag_input(&rc->f, p, len, &in);
	if (why != RDS_DROP_NONE) {
		if (why < RDS_DROP_MAX)
			ep->st.drops[why]++;
		link_drop(l, rds_drop_name(why));
		return false;
	}
	rx_ack(rc, in.ack);
	switch (in.kind) {
	case RDS_IN_ACK:
		ep->st.acks_rx++;
		break;
	case RDS_IN_MSG:
		rx_message(rc, &in);
		break;
	case RDS_IN_DUP:
		ep->st.dups++;
		rds_conn_rx_msg(&rc->c, in.hdr.seq, in.ack_required);
		break;
	case RDS_IN_CONG:
		ep->st.cong_rx++;
		if (rds_cong_update(&rc->peer, in.data) && rc->peer_valid &&
		    ep->ops.uncongested)
			ep->ops.uncongested(ep->arg, &rc->faddr);
		rc->peer_valid = true;
		if (ep->ops.cong_map)
			ep->ops.cong_map(ep->arg, &rc->faddr, rc->peer.bits);
		break;
	case RDS_IN_CONG_BAD:
	case RDS_IN_NONE:
		break;
	}
	if ((in.kind == RDS_IN_MSG || in.kind == RDS_IN_DUP) &&
	    !in.ack_required && rds_conn_ack_owed(&rc->c) &&
	    !evtimer_pending(rc->ack_timer, NULL))
		arm(rc->ack_timer, DELAYED_ACK_MS);
	return l->rc == rc && !l->gone;
}

static void qp_cb(evutil_socket_t fd, short what, void *arg)
{
	struct link *l = arg;
	struct rds_ep *ep = l->ep;
	struct rconn *rc = l->rc;
	struct fab_wc wc[32];
	int i, n, rounds = 0;

	(void)fd;
	(void)what;
	while (!l->gone && rounds++ < 8) {
		n = fab_qp_poll(l->qp, wc, 32);
		if (n <= 0)
			break;
		for (i = 0; i < n && !l->gone; i++) {
			if (wc[i].status != FAB_WC_SUCCESS) {
				if (wc[i].status != FAB_WC_WR_FLUSH_ERR)
					ep->st.qp_errors++;
				link_drop(l, wc[i].status ==
					  FAB_WC_WR_FLUSH_ERR ?
					  "disconnected (work requests flushed)" :
					  fab_wc_status_name(wc[i].status));
				break;
			}
			l->completions++;
			if (!wc[i].recv) {
				tx_done(l, (unsigned int)(wc[i].wr_id &
						0xffffffffu) % ep->cfg.send_wrs);
				continue;
			}
			if (!l->up && l->passive && rc &&
			    rc->link == l)	/* a SEND before the RTU */
				conn_up(rc, l);
			if (!on_recv(l, rx_slot(l, (unsigned int)wc[i].wr_id %
						ep->cfg.recv_wrs),
				     wc[i].byte_len))
				break;
			if (post_recv(l, (unsigned int)wc[i].wr_id %
				      ep->cfg.recv_wrs) < 0) {
				ep->st.qp_errors++;
				link_drop(l, "posting a receive failed");
			}
		}
		if (n < 32)
			break;
	}
	if (!l->gone && rounds > 8)
		event_active(l->qp_ev, EV_READ, 0);
	if (!l->gone && rc)
		link_tx(l);
}

/* ---- connections --------------------------------------------------------- */

static void conn_connect(struct rconn *rc);

static void conn_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct rconn *rc = arg;

	(void)fd;
	(void)what;
	if (rc->st == C_DOWN && rc->c.head)
		conn_connect(rc);
}

/*
 * Ours, not the kernel's: a message the peer did not flag ACK_REQUIRED
 * is acknowledged after DELAYED_ACK_MS if nothing we sent carried its
 * sequence by then.  The kernel acknowledges flagged ones only, so its
 * unflagged tail (up to 8 messages) waits in its send buffer for the
 * next exchange; an ACK-only frame at any time is within its rules.
 */
static void ack_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct rconn *rc = arg;

	(void)fd;
	(void)what;
	if (rc->st == C_UP && rds_conn_ack_owed(&rc->c)) {
		rds_conn_want_ack(&rc->c);
		conn_kick(rc);
	}
}

/* threads.c's rds_queue_reconnect(): at once the first time, then a
 * random delay below a ceiling that doubles up to 1 s. */
static void conn_schedule(struct rconn *rc)
{
	unsigned int ms = 0;

	if (evtimer_pending(rc->timer, NULL))
		return;
	if (!rc->backoff_ms) {
		rc->backoff_ms = BACKOFF_MIN_MS;
	} else {
		ms = (unsigned int)random() % rc->backoff_ms;
		rc->backoff_ms *= 2;
		if (rc->backoff_ms > BACKOFF_MAX_MS)
			rc->backoff_ms = BACKOFF_MAX_MS;
	}
	arm(rc->timer, ms);
}

static void conn_kick(struct rconn *rc)
{
	if (rc->st == C_UP && rc->link)
		link_tx(rc->link);
	else if (rc->st == C_DOWN && rc->c.head)
		conn_schedule(rc);
}

static void kick_cb(evutil_socket_t fd, short what, void *arg)
{
	struct rds_ep *ep = arg;
	struct rconn *rc;

	(void)fd;
	(void)what;
	for (rc = ep->conns; rc; rc = rc->next)
		if (rc->kick) {
			rc->kick = false;
			conn_kick(rc);
		}
}

static void conn_release(void *arg, struct rds_cmsg *m, int err)
{
	struct rconn *rc = arg;
	struct rds_ep *ep = rc->ep;

	if (!m->forgotten && m->ctx && ep->ops.done)
		ep->ops.done(ep->arg, m->ctx, m->len, err);
}

static struct rconn *conn_find(const struct rds_ep *ep,
			       const struct inet_addr *laddr,
			       const struct inet_addr *faddr)
{
	struct rconn *rc;

	for (rc = ep->conns; rc; rc = rc->next)
		if (inet_addr_equal(&rc->laddr, laddr) &&
		    inet_addr_equal(&rc->faddr, faddr))
			return rc;
	return NULL;
}

static struct rconn *conn_get(struct rds_ep *ep, const struct inet_addr *laddr,
			      const struct inet_addr *faddr)
{
	struct rconn *rc = conn_find(ep, laddr, faddr);

	if (rc)
		return rc;
	if (ep->nconns >= ep->cfg.max_conns) {
		errno = ENOBUFS;
		return NULL;
	}
	rc = calloc(1, sizeof(*rc));
	if (!rc) {
		errno = ENOMEM;
		return NULL;
	}
	rc->ep = ep;
	rc->laddr = *laddr;
	rc->faddr = *faddr;
	rc->lmap = lmap_get(ep, laddr, true);
	rc->timer = evtimer_new(ep->base, conn_timer_cb, rc);
	rc->ack_timer = evtimer_new(ep->base, ack_timer_cb, rc);
	if (!rc->lmap || !rc->timer || !rc->ack_timer ||
	    rds_frag_init(&rc->f) < 0) {
		if (rc->timer)
			event_free(rc->timer);
		if (rc->ack_timer)
			event_free(rc->ack_timer);
		free(rc);
		errno = ENOMEM;
		return NULL;
	}
	rds_conn_init(&rc->c, conn_release, rc);
	rc->next = ep->conns;
	ep->conns = rc;
	ep->nconns++;
	return rc;
}

static void conn_free(struct rconn *rc)
{
	if (rc->link) {
		rc->link->rc = NULL;
		link_free(rc->link);
	}
	event_free(rc->timer);
	event_free(rc->ack_timer);
	rds_conn_fini(&rc->c);
	rds_frag_fini(&rc->f);
	free(rc);
}

/* Our private data: rds_ib_priv (after the cma_hdr on the soft profile). */
static int build_priv(struct rds_ep *ep, struct rconn *rc, uint16_t version,
		      bool req, uint8_t *p, size_t cap)
{
	struct rds_ib_priv d;
	size_t off = 0;
	int n;

	if (req && ep->cfg.profile == RDS_PROFILE_SOFT) {
		struct rds_cma_hdr h = {
			.sport = (uint16_t)(32768 + random() % 28232),
			.src = rc->laddr, .dst = rc->faddr,
		};

		if (rds_cma_hdr_build(p, cap, &h) < 0)
			return -1;
		off = RDS_CMA_HDR_LEN;
	}
	memset(&d, 0, sizeof(d));
	d.saddr = rc->laddr;
	d.daddr = rc->faddr;
	d.major = (uint8_t)(version >> 8);
	d.minor = (uint8_t)version;
	d.minor_mask = RDS_IB_MINOR_MASK;
	d.ack_seq = rc->c.ack_valid ? rc->c.ack_seq : 0;
	n = rds_ib_priv_build(p + off, cap - off, &d);
	return n < 0 ? -1 : (int)off + n;
}

static void conn_connect(struct rconn *rc)
{
	struct rds_ep *ep = rc->ep;
	uint8_t pd[FAB_CM_REQ_PRIV];
	struct fab_cm_param cp = { .private_data = pd,
				   .retry_count = RETRY_COUNT,
				   .rnr_retry_count = RNR_RETRY,
				   .min_rnr_timer = RNR_TIMER };
	struct fab_cm_addr dst;
	struct fab_cm_id *id;
	struct link *l;
	uint16_t lid = 0;
	int n;

	memset(&dst, 0, sizeof(dst));
	if (rds_addr_loopback(&rc->faddr)) {	/* no port has it */
		conn_schedule(rc);
		return;
	}
	if (ep->ops.resolve(ep->arg, &rc->laddr, &rc->faddr, &dst.gid,
			    &lid) < 0) {
		if (errno == EAGAIN)
			arm(rc->timer, RESOLVE_RETRY_MS);
		else
			conn_schedule(rc);
		return;
	}
	dst.lid = lid;
	dst.service_id = FAB_CM_SID_TCP(family_port(rc->laddr.family));
	n = build_priv(ep, rc, RDS_VERSION_3_1, true, pd, sizeof(pd));
	if (n < 0)
		return;
	cp.private_data_len = (uint8_t)n;
	id = fab_cm_create_id(ep->dev, NULL, NULL, 0);
	if (!id) {
		conn_schedule(rc);
		return;
	}
	l = link_new(ep, rc, id, false);
	if (!l) {
		fab_cm_destroy(id);
		conn_schedule(rc);
		return;
	}
	if (rc->dropped)
		ep->st.reconnects++;
	rc->st = C_CONNECTING;
	if (fab_cm_connect(id, &dst, &cp, NULL, 0) < 0) {
		ep->st.connect_failed++;
		link_drop(l, "connect failed");
		return;
	}
	if (ep->cfg.connect_timeout_ms)
		arm(l->tmo_ev, ep->cfg.connect_timeout_ms);
}

/*
 * Ours, not the kernel's: a connection whose queue pair stopped moving
 * is dropped (and made again, the unacknowledged messages resent, as
 * after any drop).  Stopped: sends posted and no completion, or a
 * message's first fragments in and no more, at STALL_STRIKES checks in
 * a row, stall_ms / STALL_STRIKES apart (a drop stall_ms to 1.5 stall_ms
 * after the last completion).  An HCA's RC never stops so: it
 * retransmits, then fails the queue pair within its retry count.  Linux
 * 6.1's rxe was seen to in the guest tier (its packets stuck, it seems,
 * in a guest link that had stopped): after one retransmission timeout
 * its requester sent nothing more and armed no timer, no error and no
 * progress ever came, and the kernel's RDS (which has no such watch)
 * waited for ever.
 */
static void wd_cb(evutil_socket_t fd, short what, void *arg)
{
	struct link *l = arg;
	struct rconn *rc = l->rc;

	(void)fd;
	(void)what;
	if (!rc || l->gone || !l->up)
		return;
	if ((l->tx_inflight || rc->f.busy) && l->completions == l->wd_mark) {
		if (++l->wd_strikes >= STALL_STRIKES) {
			l->ep->st.stalls++;
			link_drop(l, l->tx_inflight ?
				  "sends posted and none completing" :
				  "a message's fragments stopped coming");
			return;
		}
	} else {
		l->wd_strikes = 0;
	}
	l->wd_mark = l->completions;
	arm(l->wd_ev, l->ep->cfg.stall_ms / STALL_STRIKES);
}

static void conn_up(struct rconn *rc, struct link *l)
{
	struct rds_ep *ep = rc->ep;

	evtimer_del(l->tmo_ev);
	l->wd_mark = l->completions;
	l->wd_strikes = 0;
	arm(l->wd_ev, ep->cfg.stall_ms / STALL_STRIKES);
	l->up = true;
	rc->st = C_UP;
	rc->backoff_ms = 0;
	rc->fail_logged = false;
	ep->st.conns_up++;
	ep_log(ep, rc, "%s connection up%s", l->passive ? "passive" : "active",
	       rds_conn_unacked(&rc->c) ? ", resending what was not acknowledged" : "");
	if (l->passive)
		ep->st.conns_passive++;
	else
		ep->st.conns_active++;
	link_tx(l);
}

/* ---- the CM -------------------------------------------------------------- */

static void reject(struct rds_ep *ep, struct fab_cm_id *id)
{
	int code = REJ_CODE;

	fab_cm_reject(id, &code, sizeof(code), NULL, 0);
	fab_cm_destroy(id);
	(void)ep;
}

static void on_request(struct rds_ep *ep, const struct fab_cm_event *ev)
{
	int family = ep->l6 && ev->listen_id == ep->l6 ? AF_INET6 : AF_INET;
	uint8_t rep[FAB_CM_REP_PRIV];
	struct fab_cm_param cp = { .private_data = rep,
				   .retry_count = RETRY_COUNT,
				   .rnr_retry_count = RNR_RETRY,
				   .min_rnr_timer = RNR_TIMER };
	const uint8_t *pd = ev->private_data;
	size_t len = ev->private_data_len;
	struct rds_cma_hdr ch;
	struct rds_ib_priv dp;
	struct rconn *rc;
	struct link *l;
	uint16_t ver;
	int n;

	if (ep->cfg.profile == RDS_PROFILE_SOFT) {
		if (rds_cma_hdr_parse(pd, len, &ch) < 0)
			goto refuse;
		pd += RDS_CMA_HDR_LEN;
		len -= RDS_CMA_HDR_LEN;
	}
	ver = rds_ib_version_accept(pd, len, family);
	if (!ver || rds_ib_priv_parse(pd, len, family, &dp) < 0 ||
	    dp.saddr.family != family || rds_addr_loopback(&dp.saddr) ||
	    rds_addr_loopback(&dp.daddr) ||
	    !ep->ops.is_local(ep->arg, &dp.daddr))
		goto refuse;	/* no peer reaches a loopback address */
	rc = conn_get(ep, &dp.daddr, &dp.saddr);
	if (!rc)
		goto refuse;
	if (rc->st == C_CONNECTING) {
		ep->st.races++;
		reject(ep, ev->id);
		return;
	}
	if (rc->st == C_UP) {
		ep->st.stale++;
		if (rc->link)
			link_drop(rc->link, "a REQ for it came (the peer restarted)");
		reject(ep, ev->id);
		return;
	}
	evtimer_del(rc->timer);
	if (dp.ack_seq)
		rx_ack(rc, dp.ack_seq);
	l = link_new(ep, rc, ev->id, true);
	if (!l)
		goto refuse;
	n = build_priv(ep, rc, ver, false, rep, sizeof(rep));
	if (n < 0) {
		link_drop(l, "no private data");
		return;
	}
	cp.private_data_len = (uint8_t)n;
	rc->st = C_CONNECTING;
	if (fab_cm_accept(ev->id, &cp, NULL, 0) < 0) {
		link_drop(l, "accept failed");
		return;
	}
	arm(l->tmo_ev, RTU_TIMEOUT_MS);
	return;
refuse:
	ep->st.rejected++;
	reject(ep, ev->id);
}

static void on_established(struct link *l, const struct fab_cm_event *ev)
{
	struct rconn *rc = l->rc;
	struct rds_ib_priv dp;
	int family;

	if (!rc || l->gone)
		return;
	if (l->passive) {
		if (!l->up)	/* else a SEND before the RTU did it */
			conn_up(rc, l);
		return;
	}
	family = rc->laddr.family;
	if (!rds_ib_version_confirm(ev->private_data, ev->private_data_len,
				    family, RDS_VERSION_3_1)) {
		l->ep->st.connect_failed++;
		link_drop(l, "the REP's version");
		return;
	}
	if (rds_ib_priv_parse(ev->private_data, ev->private_data_len, family,
			      &dp) == 0 && dp.ack_seq)
		rx_ack(rc, dp.ack_seq);
	conn_up(rc, l);
}

static void cm_cb(evutil_socket_t fd, short what, void *arg)
{
	struct rds_ep *ep = arg;
	struct fab_cm_event ev;
	struct link *l;
	int n = 0;

	(void)fd;
	(void)what;
	while (n++ < 64 && fab_cm_get_event(ep->dev, &ev) == 1) {
		if (ev.type == FAB_CM_EV_CONNECT_REQUEST) {
			on_request(ep, &ev);
			continue;
		}
		l = fab_cm_context(ev.id);
		if (!l)
			continue;
		switch (ev.type) {
		case FAB_CM_EV_ESTABLISHED:
			on_established(l, &ev);
			break;
		case FAB_CM_EV_REJECTED:
		case FAB_CM_EV_UNREACHABLE:
		case FAB_CM_EV_CONNECT_ERROR:
			if (l->rc && !l->up)
				ep->st.connect_failed++;
			link_drop(l, fab_cm_event_name(ev.type));
			break;
		case FAB_CM_EV_DISCONNECTED:
		case FAB_CM_EV_DEVICE_REMOVAL:
			if (l->rc && l->up) {
				ep->st.disconnects++;
				/* what came before the DREQ */
				qp_cb(-1, 0, l);
			}
			l->dreq_sent = true;	/* answered by the CM */
			link_drop(l, fab_cm_event_name(ev.type));
			arm(l->tmo_ev, 0);
			break;
		case FAB_CM_EV_TIMEWAIT_EXIT:
			if (l->gone)
				arm(l->tmo_ev, 0);
			break;
		default:
			break;
		}
	}
	if (n > 64)
		event_active(ep->cm_ev, EV_READ, 0);
}

/* ---- the endpoint -------------------------------------------------------- */

static struct fab_cm_id *listen_on(struct rds_ep *ep, uint16_t port,
				   char *err, size_t errlen)
{
	struct fab_cm_addr a;

	memset(&a, 0, sizeof(a));
	if (ep->cfg.listen_any && port == RDS_PORT)	/* ::ffff:0.0.0.0 */
		a.gid.raw[10] = a.gid.raw[11] = 0xff;
	a.service_id = FAB_CM_SID_TCP(port);
	a.service_mask = FAB_CM_SID_EXACT;
	a.pkey = ep->cfg.listen_pkey;
	return fab_cm_listen(ep->dev, &a, CM_BACKLOG, NULL, err, errlen);
}

struct rds_ep *rds_ep_new(struct event_base *base, struct fab_dev *dev,
			  const struct rds_ep_cfg *cfg,
			  const struct rds_ep_ops *ops, void *arg, char *err,
			  size_t errlen)
{
	struct rds_ep *ep;
	int fd, e;

	fd = fab_cm_fd(dev);
	if (fd < 0) {
		snprintf(err, errlen, "RDS: no connection manager: %s",
			 strerror(errno));
		return NULL;
	}
	ep = calloc(1, sizeof(*ep));
	if (!ep) {
		snprintf(err, errlen, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	ep->base = base;
	ep->dev = dev;
	ep->cfg = *cfg;
	if (!ep->cfg.recv_wrs)
		ep->cfg.recv_wrs = DEF_RECV_WRS;
	if (!ep->cfg.stall_ms)
		ep->cfg.stall_ms = STALL_MS;
	if (!ep->cfg.send_wrs)
		ep->cfg.send_wrs = DEF_WRS;
	if (!ep->cfg.max_conns)
		ep->cfg.max_conns = DEF_CONNS;
	ep->ops = *ops;
	ep->arg = arg;
	ep->l4 = listen_on(ep, RDS_PORT, err, errlen);
	if (!ep->l4)
		goto fail;
	/* IPv6 peers only: a port without IPv6 (rdma_cm on an IPv4 GID
	 * may refuse) still serves IPv4; a kernel RDS holding it does not */
	ep->l6 = listen_on(ep, RDS_CM_PORT, err, errlen);
	if (!ep->l6 && errno == EADDRINUSE)
		goto fail;
	ep->cm_ev = event_new(base, fd, EV_READ | EV_PERSIST, cm_cb, ep);
	ep->kick_ev = event_new(base, -1, 0, kick_cb, ep);
	if (!ep->cm_ev || !ep->kick_ev) {
		snprintf(err, errlen, "out of memory");
		errno = ENOMEM;
		goto fail;
	}
	event_add(ep->cm_ev, NULL);
	return ep;
fail:
	e = errno;
	if (ep->cm_ev)
		event_free(ep->cm_ev);
	if (ep->l4)
		fab_cm_destroy(ep->l4);
	if (ep->l6)
		fab_cm_destroy(ep->l6);
	free(ep);
	errno = e;
	return NULL;
}

void rds_ep_free(struct rds_ep *ep)
{
	struct local_map *m;
	struct rconn *rc;
	struct link *l;

	if (!ep)
		return;
	for (l = ep->links; l; l = l->next)
		if (l->up && !l->dreq_sent)
			fab_cm_disconnect(l->id, NULL, 0);
	while ((rc = ep->conns)) {
		ep->conns = rc->next;
		conn_free(rc);
	}
	while (ep->links)
		link_free(ep->links);
	while ((m = ep->lmaps)) {
		ep->lmaps = m->next;
		free(m);
	}
	fab_cm_destroy(ep->l4);
	if (ep->l6)
		fab_cm_destroy(ep->l6);
	event_free(ep->cm_ev);
	event_free(ep->kick_ev);
	free(ep);
}

static bool addr_usable(const struct inet_addr *a)
{
	static const uint8_t zero[16];

	if (a->family == AF_INET)
		return memcmp(a->raw, zero, 4) && (a->raw[0] & 0xf0) != 0xe0 &&
		       a->v4.s_addr != 0xffffffffu;
	if (a->family == AF_INET6)
		return memcmp(a->raw, zero, 16) && a->raw[0] != 0xff;
	return false;
}

/*
 * To one of this host's addresses: the kernel makes such a connection
 * loopback (rds_conn_create_outgoing: the loop transport) and hands each
 * message to its receive path at once; so do we, without RC.  The
 * address's own congestion map is the one a sender meets (the kernel's
 * maps are per address), and a ping is answered from port 0.  So also
 * from a loopback address (127.0.0.0/8, ::1: the kernel's loop
 * transport), and then a message to an address not of this host meets
 * no socket and is dropped, as the loop transport's is.  To a loopback
 * address from another the kernel makes an IB connection, which never
 * comes up: its messages wait (conn_connect).
 */
static int loop_send(struct rds_ep *ep, const struct rds_name *src,
		     const struct rds_name *dst, const struct iovec *iov,
		     int iovcnt, size_t len, void *ctx, unsigned int flags)
{
	static const uint8_t none[1];
	const struct local_map *m = lmap_get(ep, &dst->addr, false);
	struct rds_name from = *src;
	const uint8_t *data = none;
	uint8_t *buf = NULL;
	size_t off = 0;
	int i;

	if (!dst->port) {
		ep->st.pings_rx++;
		ep->st.pongs_tx++;
		from.addr = dst->addr;
		from.port = 0;
		dst = src;
		len = 0;
	} else if (!(flags & RDS_EP_SEND_ANYWAY) && m &&
		   rds_cong_test(&m->map, dst->port)) {
		errno = ENOBUFS;
		return -1;
	} else if (iovcnt == 1 && len) {
		data = iov[0].iov_base;
	} else if (len) {
		buf = malloc(len);
		if (!buf)
			return -1;	/* ENOMEM */
		for (i = 0; i < iovcnt; i++) {
			memcpy(buf + off, iov[i].iov_base, iov[i].iov_len);
			off += iov[i].iov_len;
		}
		data = buf;
	}
	ep->st.loop_msgs++;
	if (ep->ops.deliver(ep->arg, dst, &from, data, len) < 0)
		ep->st.no_socket++;
	free(buf);
	if (ep->ops.done)
		ep->ops.done(ep->arg, ctx, len, 0);
	return 0;
}

int rds_ep_send_flags(struct rds_ep *ep, const struct rds_name *src,
		      const struct rds_name *dst, const struct iovec *iov,
		      int iovcnt, void *ctx, unsigned int flags)
{
	struct rconn *rc;
	size_t len = 0;
	int i;

	for (i = 0; i < iovcnt; i++)
		len += iov[i].iov_len;
	if (len > RDS_MAX_MSG_SIZE) {
		errno = EMSGSIZE;
		return -1;
	}
	if (src->addr.family != dst->addr.family || !src->port ||
	    !addr_usable(&dst->addr) ||
	    (!rds_addr_loopback(&src->addr) &&
	     !ep->ops.is_local(ep->arg, &src->addr))) {
		errno = EINVAL;
		return -1;
	}
	if (rds_addr_loopback(&src->addr))
		return loop_send(ep, src, dst, iov, iovcnt, len, ctx, flags);
	/* is_local() may cost system calls (the gateway's): asked only
	 * when no connection to dst exists */
	rc = conn_find(ep, &src->addr, &dst->addr);
	if (!rc && ep->ops.is_local(ep->arg, &dst->addr))
		return loop_send(ep, src, dst, iov, iovcnt, len, ctx, flags);
	if (!rc)
		rc = conn_get(ep, &src->addr, &dst->addr);
	if (!rc)
		return -1;
	if (dst->port && !(flags & RDS_EP_SEND_ANYWAY) && rc->peer_valid &&
	    rds_cong_test(&rc->peer, dst->port)) {
		errno = ENOBUFS;
		return -1;
	}
	if (rds_conn_queue(&rc->c, src->port, dst->port, iov, iovcnt,
			   ctx) < 0)
		return -1;
	if (rc->st == C_UP && rc->link) {
		/* later in this loop iteration, with whatever else the
		 * caller queues before it returns: one batch */
		rc->kick = true;
		event_active(ep->kick_ev, EV_TIMEOUT, 0);
		return 0;
	}
	conn_kick(rc);
	return 0;
}

int rds_ep_send(struct rds_ep *ep, const struct rds_name *src,
		const struct rds_name *dst, const struct iovec *iov,
		int iovcnt, void *ctx)
{
	return rds_ep_send_flags(ep, src, dst, iov, iovcnt, ctx, 0);
}

bool rds_ep_congested(const struct rds_ep *ep, const struct rds_name *src,
		      const struct rds_name *dst)
{
	const struct rconn *rc = conn_find(ep, &src->addr, &dst->addr);

	return rc && rc->peer_valid && rds_cong_test(&rc->peer, dst->port);
}

void rds_ep_set_cong(struct rds_ep *ep, const struct inet_addr *laddr,
		     uint16_t port, bool congested)
{
	struct local_map *m = lmap_get(ep, laddr, true);
	struct rconn *rc;

	if (!m || !!rds_cong_test(&m->map, port) == congested)
		return;
	if (congested)
		rds_cong_set(&m->map, port);
	else
		rds_cong_clear(&m->map, port);
	/* senders on this host to laddr meet this map (loop_send) */
	if (ep->ops.cong_map)
		ep->ops.cong_map(ep->arg, laddr, m->map.bits);
	if (!congested && ep->ops.uncongested)
		ep->ops.uncongested(ep->arg, laddr);
	for (rc = ep->conns; rc; rc = rc->next) {
		if (rc->lmap != m)
			continue;
		rds_conn_cong_changed(&rc->c);
		if (rc->st == C_UP)
			conn_kick(rc);
	}
}

void rds_ep_forget(struct rds_ep *ep, void *ctx)
{
	struct rconn *rc;

	for (rc = ep->conns; rc; rc = rc->next)
		rds_conn_forget(&rc->c, ctx);
}

unsigned int rds_ep_cancel_to(struct rds_ep *ep, void *ctx,
			      const struct rds_name *dst)
{
	struct rconn *rc;
	unsigned int n = 0;

	for (rc = ep->conns; rc; rc = rc->next)
		if (inet_addr_equal(&rc->faddr, &dst->addr))
			n += rds_conn_cancel(&rc->c, ctx, dst->port);
	return n;
}

const struct rds_ep_stats *rds_ep_stats(const struct rds_ep *ep)
{
	return &ep->st;
}

bool rds_ep_idle(const struct rds_ep *ep)
{
	const struct rconn *rc;

	for (rc = ep->conns; rc; rc = rc->next) {
		if (rc->st != C_UP || !rc->link)
			continue;
		if (rc->kick || rc->c.ack_pending ||
		    rds_conn_ack_owed(&rc->c) ||
		    rc->c.cong_pending || rc->c.cong_busy ||
		    rc->link->tx_inflight)
			return false;
	}
	return true;
}

static const char *state_name(enum cstate st)
{
	switch (st) {
	case C_DOWN: return "down";
	case C_CONNECTING: return "connecting";
	case C_UP: return "up";
	}
	return "?";
}

size_t rds_ep_report(const struct rds_ep *ep, char *buf, size_t cap)
{
	char la[INET6_ADDRSTRLEN], fa[INET6_ADDRSTRLEN];
	const struct rconn *rc;
	size_t off = 0;
	int n;

	if (cap)
		buf[0] = '\0';
	for (rc = ep->conns; rc && off < cap; rc = rc->next) {
		inet_ntop(rc->laddr.family, rc->laddr.raw, la, sizeof(la));
		inet_ntop(rc->faddr.family, rc->faddr.raw, fa, sizeof(fa));
		n = snprintf(buf + off, cap - off,
			     "rds %s %s state %s next_tx %llu next_rx %llu "
			     "unacked %u queued %u retransmits %llu "
			     "acks_beyond %llu\n", la, fa, state_name(rc->st),
			     (unsigned long long)rc->c.next_tx_seq,
			     (unsigned long long)rc->f.next_rx,
			     rds_conn_unacked(&rc->c), rds_conn_queued(&rc->c),
			     (unsigned long long)rc->c.retransmits,
			     (unsigned long long)rc->c.acks_beyond);
		if (n < 0)
			break;
		off += (size_t)n < cap - off ? (size_t)n : cap - off - 1;
	}
	return off;
}

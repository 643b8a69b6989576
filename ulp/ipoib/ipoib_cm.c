// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * IPoIB connected mode (RFC 4755), as the Linux driver (ipoib_cm.c) does
 * it on the wire:
 *  - our link address carries the RC flag (0x80 in its first byte) while
 *    we listen on service ID 0x1000000000000000 | our UD QPN;
 *  - unicast to a peer whose address has the flag goes over an RC
 *    connection we make to the service ID of its UD QPN, with REQ private
 *    data {be32 our UD QPN, be32 65524} (the largest frame we take, 65520
 *    of IP and the 4-byte header); it answers {its UD QPN, its size} in
 *    the REP.  Connections are one-way, as Linux keeps them: we send on
 *    the ones we made and receive on the ones peers made to us;
 *  - each RC SEND is one frame: the IPoIB header and the IP packet;
 *  - multicast, and peers without the flag, stay on datagrams, whose MTU
 *    (the broadcast group's) still bounds what goes to them: larger
 *    packets get ICMP too big with the datagram MTU, as Linux's
 *    ipoib_cm_skb_too_long does;
 *  - a connection that is refused or breaks sends its peer's traffic to
 *    datagrams for CM_FAIL_HOLD_S, then tries again; idle connections are
 *    closed after cm_idle_s, as Linux reaps them; one the peer closes
 *    after it was up (its reaping) is no failure: the next packet
 *    connects again.
 * Linux asks for retry_count and rnr_retry_count 0 ("the RFC draft warns
 * against retries"); we ask for 7 each: the software subnet drops packets
 * under load where an HCA would not, and a connection that fails at the
 * first lost packet would flap.  Where the provider has no CM for these
 * service IDs (verbs through rdma_cm, which accepts only its own port
 * spaces), the link stays in datagram mode and says why.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "inet/byteorder.h"
#include "ulp/ipoib/ipoib_priv.h"

/* REQs waiting for our REP: Linux's ib_cm hands every REQ over at once,
 * so peers coming up together (a rack booting) must not be refused. */
#define CM_BACKLOG	1024

static int same_peer(const struct ipoib_addr *a, const struct ipoib_addr *b)
{
	return a->qpn == b->qpn && !memcmp(a->gid.raw, b->gid.raw, 16);
}

static void conn_free(struct cm_conn *c)
{
	struct ipoib_link *l = c->l;
	struct cm_conn **pp;

	for (pp = &l->conns; *pp; pp = &(*pp)->next) {
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	}
	if (c->batched) {
		for (pp = &l->cm_batched; *pp; pp = &(*pp)->batch_next) {
			if (*pp == c) {
				*pp = c->batch_next;
				break;
			}
		}
	}
	if (c->tx)
		l->ntx_conns--;
	else
		l->nrx_conns--;
	if (c->stopping) {
		/* its queue goes with it: the host may send again (not
		 * while the link itself is going) */
		c->stopping = 0;
		if (--l->cm_stopping == 0 && !l->cm_closing &&
		    l->ops.tx_ready)
			l->ops.tx_ready(l->arg);
	}
	if (c->ev)
		event_free(c->ev);
	/* the id takes its QP with it, and tells the peer (DREQ) */
	if (c->id)
		fab_cm_destroy(c->id);
	else if (c->qp)
		fab_qp_destroy(c->qp);
	if (c->mr)
		fab_mr_dereg(c->mr);
	free(c->bufs);
	l->st.drop[IPOIB_DROP_CM_FAILED] += fq_drain(&c->q);
	free(c);
}

/* The peer's traffic goes to datagrams for a while. */
static void hold(struct ipoib_link *l, const struct ipoib_addr *peer)
{
	struct cm_hold *h;

	for (h = l->holds; h; h = h->next)
		if (same_peer(&h->peer, peer))
			break;
	if (!h) {
		h = calloc(1, sizeof(*h));
		if (!h)
			return;
		h->peer = *peer;
		h->next = l->holds;
		l->holds = h;
	}
	h->until = now_s() + CM_FAIL_HOLD_S;
}

static int held(struct ipoib_link *l, const struct ipoib_addr *peer)
{
	struct cm_hold *h, **pp;
	time_t t = now_s();

	for (pp = &l->holds; (h = *pp);) {
		if (t >= h->until) {
			*pp = h->next;
			free(h);
			continue;
		}
		if (same_peer(&h->peer, peer))
			return 1;
		pp = &h->next;
	}
	return 0;
}

static void conn_fail(struct cm_conn *c)
{
	if (c->tx) {
		c->l->st.cm_failures++;
		hold(c->l, &c->peer);
	}
	conn_free(c);
}

static void post_recv(struct cm_conn *c, unsigned int slot)
{
	struct fab_sge sge = {
		.addr = (uintptr_t)(c->bufs + (size_t)slot * IPOIB_CM_BUF),
		.length = IPOIB_CM_BUF,
		.lkey = fab_mr_lkey(c->mr),
	};
	struct fab_recv_wr wr = { .wr_id = slot, .sg_list = &sge,
				  .num_sge = 1 };

	fab_qp_post_recv(c->qp, &wr, 1);
}

/* Post the frames written to slots; a slot whose post is refused is
 * given back (the frame is counted lost). */
static void batch_post(struct cm_conn *c)
{
	unsigned int n = c->nbatch;
	int done;

	if (!n)
		return;
	c->nbatch = 0;
	done = fab_qp_post_send(c->qp, c->wr, (int)n);
	if (done < 0)
		done = 0;
	if ((unsigned int)done < n) {
		c->l->st.drop[IPOIB_DROP_SEND] += n - (unsigned int)done;
		c->inflight -= n - (unsigned int)done;
		c->head = (c->head + c->depth - (n - (unsigned int)done)) %
			  c->depth;
	}
}

void ipoib_cm_flush(struct ipoib_link *l)
{
	struct cm_conn *c;

	while ((c = l->cm_batched)) {
		l->cm_batched = c->batch_next;
		c->batched = 0;
		batch_post(c);
	}
}

/* Copy a frame into the next free send slot, to be posted by
 * batch_post() (at once, or with the burst: frame_out). */
static void post_frame(struct cm_conn *c, uint16_t ethertype,
		       const uint8_t *data, size_t len)
{
	size_t hdr = ethertype ? IPOIB_HDR_LEN : 0;
	unsigned int slot = c->head;
	uint8_t *buf = c->bufs + (size_t)slot * IPOIB_CM_BUF;
	struct fab_sge *sge = &c->sge[c->nbatch];
	struct fab_rc_wr *wr = &c->wr[c->nbatch];

	if (hdr)
		ipoib_hdr_build(ethertype, buf, hdr);
	memcpy(buf + hdr, data, len);
	sge->addr = (uintptr_t)buf;
	sge->length = (uint32_t)(hdr + len);
	sge->lkey = fab_mr_lkey(c->mr);
	memset(wr, 0, sizeof(*wr));
	wr->wr_id = slot;
	wr->opcode = FAB_WR_SEND;
	wr->flags = FAB_SEND_SIGNALED;
	wr->sg_list = sge;
	wr->num_sge = 1;
	c->nbatch++;
	c->head = (c->head + 1) % c->depth;
	c->inflight++;
	c->l->st.cm_tx_packets++;
	c->l->st.cm_tx_bytes += hdr + len;
}

/* After post_frame: now, or with the burst when the host holds one. */
static void frame_out(struct cm_conn *c)
{
	if (!c->l->tx_hold) {
		batch_post(c);
		return;
	}
	if (!c->batched) {
		c->batched = 1;
		c->batch_next = c->l->cm_batched;
		c->l->cm_batched = c;
	}
}

static void tx_push(struct cm_conn *c)
{
	struct ipoib_link *l = c->l;
	struct frame *f;

	while (c->st == CM_UP && c->inflight < c->depth &&
	       (f = fq_pop(&c->q))) {
		c->qbytes -= f->len;
		post_frame(c, 0, f->data, f->len);
		free(f);
	}
	batch_post(c);
	if (c->stopping && c->qbytes <= CM_QUEUE_STOP / 2) {
		c->stopping = 0;
		if (--l->cm_stopping == 0 && l->ops.tx_ready)
			l->ops.tx_ready(l->arg);
	}
}

static void conn_cb(evutil_socket_t fd, short what, void *arg)
{
	struct cm_conn *c = arg;
	struct ipoib_link *l = c->l;
	struct fab_wc wc[16];
	int i, n, budget = 16;

	(void)fd;
	(void)what;
	while (budget-- > 0) {
		n = fab_qp_poll(c->qp, wc, 16);
		if (n <= 0)
			break;
		for (i = 0; i < n; i++) {
			if (wc[i].status == FAB_WC_WR_FLUSH_ERR) {
				/* the QP went to the error state: a
				 * disconnect, not a fault of the peer's */
				conn_free(c);
				return;
			}
			if (wc[i].status != FAB_WC_SUCCESS) {
				/* broken: the peer's traffic goes to
				 * datagrams for a while */
				conn_fail(c);
				return;
			}
			c->used = now_s();
			if (!wc[i].recv) {
				c->inflight--;
				c->progress = c->used;
				continue;
			}
			if (wc[i].byte_len > IPOIB_CM_BUF ||
			    wc[i].wr_id >= c->depth) {
				drop(l, IPOIB_DROP_RX_MALFORMED);
				continue;
			}
			l->st.cm_rx_packets++;
			l->st.cm_rx_bytes += wc[i].byte_len;
			ipoib_link_rx_frame(l, c->bufs + wc[i].wr_id *
					    IPOIB_CM_BUF, wc[i].byte_len);
			post_recv(c, (unsigned int)wc[i].wr_id);
		}
		if (n < 16)
			break;
	}
	if (budget < 0)
		event_active(c->ev, EV_READ, 0);
	tx_push(c);
	if (!c->tx && l->ops.rx_done)
		l->ops.rx_done(l->arg);
}

/* A connection's QP, buffers and event; 0 or -1. */
static int conn_setup(struct cm_conn *c, unsigned int depth)
{
	struct ipoib_link *l = c->l;
	struct fab_qp_init qi = {
		.type = FAB_QPT_RC, .pkey_index = (uint16_t)l->pkey_index,
		.max_send = c->tx ? depth : 1, .max_recv = c->tx ? 1 : depth,
	};
	unsigned int i;

	c->depth = depth;
	c->bufs = malloc((size_t)depth * IPOIB_CM_BUF);
	if (!c->bufs)
		return -1;
	c->mr = fab_mr_reg(l->dev, c->bufs, (size_t)depth * IPOIB_CM_BUF,
			   FAB_ACCESS_LOCAL_WRITE, NULL, 0);
	if (!c->mr)
		return -1;
	c->qp = fab_cm_qp_create(c->id, &qi, NULL, 0);
	if (!c->qp)
		return -1;
	c->ev = event_new(l->base, fab_qp_fd(c->qp), EV_READ | EV_PERSIST,
			  conn_cb, c);
	if (!c->ev)
		return -1;
	event_add(c->ev, NULL);
	if (!c->tx)
		for (i = 0; i < depth; i++)
			post_recv(c, i);
	c->used = now_s();
	return 0;
}

static struct cm_conn *conn_new(struct ipoib_link *l, int tx)
{
	struct cm_conn *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->l = l;
	c->tx = tx;
	c->next = l->conns;
	l->conns = c;
	if (tx)
		l->ntx_conns++;
	else
		l->nrx_conns++;
	return c;
}

static void cm_data(uint8_t *p, uint32_t qpn)
{
	be32_put(p, qpn);
	be32_put(p + 4, IPOIB_CM_BUF);
}

/* A peer connects to us: its REQ names its UD QPN and its buffer size. */
static void on_request(struct ipoib_link *l, const struct fab_cm_event *ev)
{
	uint8_t pd[8];
	struct fab_cm_param cp = { .private_data = pd, .private_data_len = 8,
				   .retry_count = 7, .rnr_retry_count = 7 };
	struct cm_conn *c;
	uint32_t mtu;

	mtu = ev->private_data_len >= 8 ? be32_get(ev->private_data + 4) : 0;
	if (!l->carrier || mtu <= IPOIB_HDR_LEN ||
	    l->nrx_conns >= CM_CONNS_MAX || !(c = conn_new(l, 0))) {
		l->st.cm_rejected++;
		fab_cm_reject(ev->id, NULL, 0, NULL, 0);
		fab_cm_destroy(ev->id);
		return;
	}
	c->id = ev->id;
	c->peer_qpn = be32_get(ev->private_data) & 0xffffff;
	c->peer.gid = ev->peer.gid;
	c->peer.qpn = c->peer_qpn;
	fab_cm_set_context(ev->id, c);
	cm_data(pd, fab_qp_num(l->qp));
	if (conn_setup(c, CM_RX_DEPTH) < 0 ||
	    fab_cm_accept(ev->id, &cp, NULL, 0) < 0) {
		l->st.cm_rejected++;
		if (!c->qp)
			fab_cm_reject(ev->id, NULL, 0, NULL, 0);
		conn_free(c);
		return;
	}
	c->st = CM_CONNECTING;
	l->st.cm_accepts++;
}

/* The links with a listener.  Links on one device (ibgwd's partitions
 * share the gateway's node) share its CM event queue: whichever link's
 * event reads a REQ hands it to the link whose listener it came to.
 * Looked up by the listener's pointer, never through it (a listener
 * destroyed with a REQ still queued leaves the REQ to be destroyed). */
static struct ipoib_link *cm_links;

static struct ipoib_link *listener_link(const struct fab_cm_id *listen_id)
{
	struct ipoib_link *o;

	for (o = cm_links; o; o = o->cm_next)
		if (o->cm_listen && o->cm_listen == listen_id)
			return o;
	return NULL;
}

static void cm_cb(evutil_socket_t fd, short what, void *arg)
{
	struct ipoib_link *l = arg;
	struct ipoib_link *o;
	struct fab_cm_event ev;
	struct cm_conn *c;
	int n = 0;

	(void)fd;
	(void)what;
	while (n++ < 64 && fab_cm_get_event(l->dev, &ev) == 1) {
		if (ev.type == FAB_CM_EV_CONNECT_REQUEST) {
			o = listener_link(ev.listen_id);
			if (o && o->dev == l->dev)
				on_request(o, &ev);
			else
				fab_cm_destroy(ev.id);
			continue;
		}
		c = fab_cm_context(ev.id);
		if (!c)
			continue;
		switch (ev.type) {
		case FAB_CM_EV_ESTABLISHED:
			if (c->tx && ev.private_data_len >= 8) {
				uint32_t mtu = be32_get(ev.private_data + 4);

				if (mtu <= IPOIB_HDR_LEN) {
					conn_fail(c);
					break;
				}
				c->mtu = mtu - IPOIB_HDR_LEN;
				if (c->mtu > IPOIB_CM_MTU)
					c->mtu = IPOIB_CM_MTU;
			}
			c->st = CM_UP;
			tx_push(c);
			break;
		case FAB_CM_EV_DISCONNECTED:
			/* the peer closed a connection that was up (it
			 * reaped it idle, as we do ours): not a failure;
			 * the next packet connects again */
			if (c->st == CM_UP) {
				conn_free(c);
				break;
			}
			/* fall through */
		case FAB_CM_EV_REJECTED:
		case FAB_CM_EV_UNREACHABLE:
		case FAB_CM_EV_CONNECT_ERROR:
		case FAB_CM_EV_DEVICE_REMOVAL:
			conn_fail(c);
			break;
		default:
			break;
		}
	}
	if (n > 64)
		event_active(l->cm_ev, EV_READ, 0);
}

static struct cm_conn *tx_find(struct ipoib_link *l,
			       const struct ipoib_addr *peer)
{
	struct cm_conn *c;

	for (c = l->conns; c; c = c->next)
		if (c->tx && same_peer(&c->peer, peer))
			return c;
	return NULL;
}

static struct cm_conn *tx_connect(struct ipoib_link *l,
				  const struct ipoib_addr *peer)
{
	uint8_t pd[8];
	struct fab_cm_param cp = { .private_data = pd, .private_data_len = 8,
				   .retry_count = 7, .rnr_retry_count = 7 };
	struct fab_cm_addr dst;
	struct cm_conn *c;

	if (l->ntx_conns >= CM_CONNS_MAX || !(c = conn_new(l, 1)))
		return NULL;
	c->peer = *peer;
	c->peer.flags = 0;
	c->st = CM_CONNECTING;
	c->mtu = IPOIB_CM_MTU;
	c->id = fab_cm_create_id(l->dev, c, NULL, 0);
	memset(&dst, 0, sizeof(dst));
	dst.gid = peer->gid;
	dst.service_id = IPOIB_CM_SID | peer->qpn;
	cm_data(pd, fab_qp_num(l->qp));
	if (!c->id || conn_setup(c, CM_TX_DEPTH) < 0 ||
	    fab_cm_connect(c->id, &dst, &cp, NULL, 0) < 0) {
		conn_fail(c);
		return NULL;
	}
	l->st.cm_connects++;
	return c;
}

int ipoib_cm_send(struct ipoib_link *l, const struct ipoib_addr *peer,
		  uint16_t ethertype, const uint8_t *data, size_t len)
{
	size_t ip_len = ethertype ? len : len - IPOIB_HDR_LEN;
	struct cm_conn *c;
	struct frame *f;

	if (!l->cm_on || !(peer->flags & IPOIB_ADDR_FLAG_RC) ||
	    len < (ethertype ? 0 : IPOIB_HDR_LEN))
		return -1;
	c = tx_find(l, peer);
	if (!c) {
		if (held(l, peer) || !(c = tx_connect(l, peer)))
			return -1;
	}
	if (ip_len > c->mtu) {
		ipoib_link_too_big(l, ethertype ? data : data + IPOIB_HDR_LEN,
				   ip_len, c->mtu);
		return 0;
	}
	c->used = now_s();
	if (c->st == CM_UP && c->inflight < c->depth && !c->q.n) {
		post_frame(c, ethertype, data, len);
		frame_out(c);
		return 0;
	}
	/* while it is made, a few frames wait (as Linux keeps a few skbs
	 * per neighbour); once it is up, what its window cannot take yet,
	 * the host stopped at CM_QUEUE_STOP */
	if (c->st == CM_UP ? c->qbytes + len > CM_QUEUE_LIMIT :
	    c->q.n >= CM_QUEUE_MAX) {
		drop(l, IPOIB_DROP_CM_QUEUE);
		return 0;
	}
	if (ethertype) {
		f = frame_new(ethertype, data, len);
	} else {
		f = malloc(sizeof(*f) + len);
		if (f) {
			f->next = NULL;
			f->len = len;
			memcpy(f->data, data, len);
		}
	}
	if (!f) {
		drop(l, IPOIB_DROP_CM_QUEUE);
		return 0;
	}
	fq_push(&c->q, f);
	c->qbytes += f->len;
	if (c->st == CM_UP && !c->stopping && c->qbytes >= CM_QUEUE_STOP) {
		c->stopping = 1;
		c->progress = now_s();
		l->cm_stopping++;
		l->st.cm_tx_stops++;
	}
	return 0;
}

/* Listen on our UD QPN's service ID, once the UD QP exists. */
void ipoib_cm_start(struct ipoib_link *l)
{
	struct fab_cm_addr a;
	int fd;

	if (!l->cfg.connected || l->cm_on || !l->qp)
		return;
	memset(&a, 0, sizeof(a));
	a.service_id = IPOIB_CM_SID | fab_qp_num(l->qp);
	a.service_mask = FAB_CM_SID_EXACT;
	fd = fab_cm_fd(l->dev);
	if (fd < 0) {
		l->cm_err = errno;
		return;
	}
	l->cm_listen = fab_cm_listen(l->dev, &a, CM_BACKLOG, NULL, NULL, 0);
	if (!l->cm_listen) {
		l->cm_err = errno;
		return;
	}
	if (!l->cm_ev) {
		l->cm_ev = event_new(l->base, fd, EV_READ | EV_PERSIST, cm_cb,
				     l);
		if (!l->cm_ev) {
			fab_cm_destroy(l->cm_listen);
			l->cm_listen = NULL;
			l->cm_err = ENOMEM;
			return;
		}
		event_add(l->cm_ev, NULL);
	}
	l->cm_next = cm_links;
	cm_links = l;
	l->cm_on = 1;
	l->cm_err = 0;
}

/* Every connection and the listener go (the UD QP is going, or the
 * link). */
void ipoib_cm_stop(struct ipoib_link *l)
{
	struct ipoib_link **pp;
	struct cm_hold *h;

	l->cm_closing = 1;
	while (l->conns)
		conn_free(l->conns);
	l->cm_closing = 0;
	for (pp = &cm_links; *pp; pp = &(*pp)->cm_next)
		if (*pp == l) {
			*pp = l->cm_next;
			break;
		}
	l->cm_next = NULL;
	if (l->cm_listen)
		fab_cm_destroy(l->cm_listen);
	l->cm_listen = NULL;
	if (l->cm_ev)
		event_free(l->cm_ev);
	l->cm_ev = NULL;
	l->cm_on = 0;
	while ((h = l->holds)) {
		l->holds = h->next;
		free(h);
	}
}

void ipoib_cm_tick(struct ipoib_link *l, time_t t)
{
	unsigned int idle = l->cfg.cm_idle_s ? l->cfg.cm_idle_s : 300;
	struct cm_conn *c, *next;

	for (c = l->conns; c; c = next) {
		next = c->next;
		if (c->stopping && t - c->progress >= CM_STALL_S) {
			l->st.cm_stalls++;
			conn_fail(c);
			continue;
		}
		if (t - c->used >= (time_t)idle && !c->inflight && !c->q.n) {
			l->st.cm_reaped++;
			conn_free(c);
		}
	}
}

size_t ipoib_cm_report(const struct ipoib_link *l, char *buf, size_t cap)
{
	const struct cm_conn *c;
	size_t off = 0;
	char gid[64];
	int n;

	if (l->cfg.connected && !l->cm_on && l->cm_err)
		n = snprintf(buf, cap, "mode connected (datagrams only: %s)\n",
			     strerror(l->cm_err));
	else
		n = snprintf(buf, cap, "mode %s\n", l->cm_on ? "connected" :
			     "datagram");
	if (n < 0)
		return 0;
	off = (size_t)n < cap ? (size_t)n : cap;
	for (c = l->conns; c && off < cap; c = c->next) {
		fab_gid_to_str(&c->peer.gid, gid, sizeof(gid));
		n = snprintf(buf + off, cap - off,
			     "cm %s %s qpn 0x%06x %s inflight %u queued %u\n",
			     c->tx ? "tx" : "rx", gid, c->peer.qpn,
			     c->st == CM_UP ? "up" : c->st == CM_CONNECTING ?
			     "connecting" : "dead", c->inflight, c->q.n);
		if (n < 0)
			break;
		off += (size_t)n < cap - off ? (size_t)n : cap - off;
	}
	return off;
}

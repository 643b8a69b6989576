// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The soft provider's reliable connections: memory regions, RC queue
 * pairs and the connection manager's calls.
 *
 * The RC transport runs here, in the process, as an HCA runs it
 * (fabric/soft_rc.h): each RC QP is a QP of ibfabricd's with shared rings,
 * like a UD one, carrying RC packets, and its engine is driven from
 * fab_qp_poll() and the post calls: packets from the RX ring go into it,
 * its packets into the TX ring, and a timerfd in the QP's epoll
 * descriptor wakes the caller when a retransmission timer, an RNR wait or
 * an owed ACK needs it.  So a process must keep fab_qp_fd() on its event
 * loop and poll when it is readable, or its connections stall (an HCA
 * needs nobody); that is the price of a transport in user space.
 *
 * The CM is the node's, in ibfabricd (subnet/fsw_cm.h): the calls here are
 * requests on the device socket, and its events arrive on a socket of
 * their own (FSP_CM_OPEN) behind fab_cm_fd(), with an eventfd for events
 * this file makes itself (ibfabricd went away).  The QP is connected
 * (RTR and RTS at once) from what the events carry: at accept on the
 * passive side, at ESTABLISHED on the active one.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "fabric/fabric_prov.h"
#include "fabric/ib_pkt.h"
#include "fabric/ib_rc.h"
#include "fabric/prov_soft.h"
#include "fabric/prov_soft_int.h"
#include "fabric/soft_proto.h"
#include "fabric/soft_rc.h"
#include "fabric/soft_ring.h"

#define SOFT_RC_INPUT_BUDGET	4096	/* packets per poll, then come back */
#define SOFT_RC_RELEASE_EVERY	256	/* hand ring space back this often */
#define SOFT_MIN_RNR_TIMER	12	/* 0.64 ms, as ibv_rc_pingpong */

struct soft_mr {
	struct fab_mr base;
	struct soft_mr *next;
	unsigned int access;
};

struct soft_cm_id {
	struct fab_cm_id base;
	struct soft_cm_id *next;
	uint32_t handle;		/* ibfabricd's; 0: none yet */
	uint32_t psn;			/* our QP's first PSN */
	struct fsp_cm_event req;	/* a CONNECT_REQUEST's (passive) */
	int connected;			/* the QP is in RTS */
	struct fsp_cm_listen lreq;	/* a listener's, made again after an
					 * ibfabricd restart */
};

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/* Memory regions: keys are the device's, lkey == rkey, never 0. */
struct fab_mr *soft_mr_reg(struct fab_dev *dev, void *addr, size_t len,
			   unsigned int access, char *err, size_t errlen)
{
	struct soft_dev *d = to_sdev(dev);
	struct soft_mr *m;

	if ((uintptr_t)addr + len < (uintptr_t)addr) {
		fab_fail(err, errlen, EINVAL, "soft: region wraps around");
		return NULL;
	}
	m = calloc(1, sizeof(*m));
	if (!m) {
		fab_fail(err, errlen, ENOMEM, "soft: out of memory");
		return NULL;
	}
	if (!d->next_key)
		d->next_key = 0x1000 | ((uint32_t)getpid() << 12 & 0xfff000);
	m->base.dev = dev;
	m->base.addr = addr;
	m->base.len = len;
	m->base.lkey = m->base.rkey = d->next_key++;
	if (!d->next_key)
		d->next_key = 1;
	m->access = access;
	m->next = d->mrs;
	d->mrs = m;
	return &m->base;
}

void soft_mr_dereg(struct fab_mr *mr)
{
	struct soft_dev *d = to_sdev(mr->dev);
	struct soft_mr **pp;

	for (pp = &d->mrs; *pp; pp = &(*pp)->next) {
		if (&(*pp)->base == mr) {
			*pp = (*pp)->next;
			break;
		}
	}
	free(mr);
}

/* The engine's ops: the wire and the memory. */
static void *rc_mr_find(void *ctx, uint32_t key, int remote, uint64_t addr,
			uint64_t len, unsigned int access)
{
	struct soft_qp *q = ctx;
	struct soft_dev *d = to_sdev(q->base.dev);
	struct soft_mr *m;
	uint64_t base, end;

	(void)remote;	/* lkey and rkey are one number here */
	for (m = d->mrs; m; m = m->next) {
		if (m->base.lkey != key)
			continue;
		if ((m->access & access) != access)
			return NULL;
		if (!len)
			return (void *)(uintptr_t)addr;
		base = (uint64_t)(uintptr_t)m->base.addr;
		end = base + m->base.len;
		if (addr < base || addr > end || len > end - addr)
			return NULL;
		return (void *)(uintptr_t)addr;
	}
	return NULL;
}

static int rc_xmit(void *ctx, const uint8_t *pkt, size_t len)
{
	struct soft_qp *q = ctx;
	struct soft_dev *d = to_sdev(q->base.dev);
	uint8_t buf[FSP_BURST_REC + IB_MAX_PKT], *slot;
	ssize_t n;

	if (q->fd < 0) {	/* the port is down: lost on the wire */
		d->tx_lost++;
		return 0;
	}
	if (len > IB_MAX_PKT)
		return 0;	/* the engine built it: cannot happen */
	if (q->shm) {
		if (!(slot = soft_ring_reserve(&q->tx, len)))
			return -1;
		memcpy(slot, pkt, len);
		soft_ring_commit(&q->tx, len);
		q->tx_unkicked++;
		return 0;
	}
	buf[0] = (uint8_t)(len >> 8);
	buf[1] = (uint8_t)len;
	memcpy(buf + FSP_BURST_REC, pkt, len);
	n = send(q->fd, buf, FSP_BURST_REC + len, MSG_DONTWAIT | MSG_NOSIGNAL);
	if (n < 0 && (errno == EAGAIN || errno == EINTR || errno == ENOBUFS))
		return -1;
	if (n < 0 && (errno == EPIPE || errno == ECONNRESET)) {
		soft_lost(d);
		d->tx_lost++;
	}
	return 0;
}

static const struct soft_rc_ops rc_ops = {
	.xmit = rc_xmit,
	.mr_find = rc_mr_find,
};

static void rc_flush_tx(struct soft_qp *q)
{
	if (q->shm && q->tx_unkicked) {
		q->tx_unkicked = 0;
		if (soft_ring_publish(&q->tx))
			soft_ring_kick(q->fd);
	}
}

/* Everything that arrived, into the engine (at most a budget: the rest
 * at once after, through the timer). */
static void rc_input(struct soft_qp *q, uint64_t now)
{
	struct soft_dev *d = to_sdev(q->base.dev);
	const uint8_t *pkt;
	size_t plen;
	int r, n = 0;

	q->rc_more = 0;
	if (q->fd < 0)
		return;
	if (!q->shm) {
		while (n < SOFT_RC_INPUT_BUDGET) {
			r = soft_burst_next(q, &pkt, &plen);
			if (r == 0)
				return;
			if (r < 0) {
				if (r == -2)
					soft_lost(d);
				return;
			}
			soft_rc_input(q->rc, pkt, plen, now);
			n++;
		}
		q->rc_more = 1;
		return;
	}
	if (soft_qp_take_kicks(q) < 0)
		return;
	for (;;) {
		if (n == SOFT_RC_INPUT_BUDGET) {
			q->rc_more = 1;
			break;
		}
		r = soft_ring_peek(&q->rx, &pkt, &plen);
		if (r < 0) {	/* ibfabricd wrote it: a bug in one of us */
			soft_ring_skip(&q->rx);
			break;
		}
		if (r == 0) {
			q->armed = 1;
			if (soft_ring_arm(&q->rx))
				continue;
			break;
		}
		soft_rc_input(q->rc, pkt, plen, now);
		soft_ring_next(&q->rx, plen);
		if (++n % SOFT_RC_RELEASE_EVERY == 0)
			soft_ring_release(&q->rx);
		if (q->fd < 0)	/* the engine's xmit lost ibfabricd */
			return;
	}
	soft_ring_release(&q->rx);
}

/* The timer at the engine's next deadline, or at once when there is more
 * to do (input left, completions made outside a poll). */
static void rc_arm(struct soft_qp *q, uint64_t now, int at_once)
{
	uint64_t dl = soft_rc_deadline(q->rc), us;
	struct itimerspec it;

	if (at_once || q->rc_more)
		dl = now;
	/* a timer already due no later is kept: when it fires early, the
	 * turn it causes arms the real deadline.  Every ACK moves the
	 * retransmission deadline later, and this spares the system call
	 * that following it would cost on each poll. */
	if (dl >= q->tdl && q->tdl != UINT64_MAX)
		return;
	if (dl == q->tdl)
		return;
	memset(&it, 0, sizeof(it));
	if (dl != UINT64_MAX) {
		us = dl > now ? dl - now : 1;
		it.it_value.tv_sec = (time_t)(us / 1000000);
		it.it_value.tv_nsec = (long)(us % 1000000) * 1000;
	}
	timerfd_settime(q->tfd, 0, &it, NULL);
	q->tdl = dl;
}

/* One turn of the engine: input, timers, the owed ACK, output. */
static void rc_run(struct soft_qp *q, uint64_t now)
{
	uint64_t exp;

	if (q->tdl != UINT64_MAX && now >= q->tdl) {
		if (read(q->tfd, &exp, sizeof(exp)) < 0) {
			/* not expired yet by the kernel's clock: it fires
			 * again, and we look again */
		}
		q->tdl = UINT64_MAX;
	}
	rc_input(q, now);
	soft_rc_progress(q->rc, now);
	rc_flush_tx(q);
	rc_arm(q, now, 0);
}

static struct soft_qp *rc_qp(struct fab_qp *qp)
{
	struct soft_qp *q = to_sqp(qp);

	if (!q->rc) {
		errno = EINVAL;
		return NULL;
	}
	return q;
}

int soft_qp_post_send(struct fab_qp *qp, const struct fab_rc_wr *wr, int n)
{
	struct soft_qp *q = rc_qp(qp);
	uint64_t now = now_us();
	int r;

	if (!q)
		return -1;
	r = soft_rc_post_send(q->rc, wr, n, now);
	rc_flush_tx(q);
	rc_arm(q, now, soft_rc_state(q->rc) == SOFT_RC_ERROR);
	return r;
}

int soft_qp_post_recv(struct fab_qp *qp, const struct fab_recv_wr *wr, int n)
{
	struct soft_qp *q = rc_qp(qp);
	int r;

	if (!q)
		return -1;
	r = soft_rc_post_recv(q->rc, wr, n);
	if (soft_rc_state(q->rc) == SOFT_RC_ERROR)
		rc_arm(q, now_us(), 1);	/* flushed at once */
	return r;
}

int soft_qp_poll(struct fab_qp *qp, struct fab_wc *wc, int n)
{
	struct soft_qp *q = rc_qp(qp);
	int got;

	if (!q)
		return -1;
	got = soft_rc_poll(q->rc, wc, n);
	if (got < n) {
		rc_run(q, now_us());
		got += soft_rc_poll(q->rc, wc + got, n - got);
	}
	return got;
}

int soft_qp_set_error(struct fab_qp *qp)
{
	struct soft_qp *q = rc_qp(qp);

	if (!q)
		return -1;
	soft_rc_set_error(q->rc);
	rc_arm(q, now_us(), 1);
	return 0;
}

void soft_rc_qp_free(struct soft_qp *q)
{
	soft_rc_free(q->rc);
	q->rc = NULL;
	if (q->tfd >= 0)
		close(q->tfd);
	q->tfd = -1;
}

/* Into the pool: the transport freed, the timer kept and quiet. */
void soft_rc_qp_park(struct soft_qp *q)
{
	struct itimerspec off = { { 0, 0 }, { 0, 0 } };
	uint64_t exp;

	soft_rc_free(q->rc);
	q->rc = NULL;
	if (q->tfd >= 0) {
		timerfd_settime(q->tfd, 0, &off, NULL);
		if (read(q->tfd, &exp, sizeof(exp)) < 0)
			exp = 0;
	}
	q->tdl = UINT64_MAX;
	q->rc_more = 0;
	q->tx_unkicked = 0;
}

/* The connection manager. */

static struct soft_cm_id *to_sid(struct fab_cm_id *id)
{
	return (struct soft_cm_id *)id;
}

/* A first PSN for a QP: random in 24 bits, as the kernel's CM picks. */
static uint32_t new_psn(struct soft_dev *d)
{
	uint32_t x = d->psn_seed;

	if (!x)
		x = (uint32_t)now_us() ^ (uint32_t)getpid() << 16 ^ 0x9e3779b9u;
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	d->psn_seed = x;
	return x & IB_PSN_MASK;
}

static int cm_open(struct soft_dev *d, char *err, size_t errlen)
{
	int fds[FSP_FDS_MAX], i;
	struct epoll_event ev = { .events = EPOLLIN };

	if (d->cm_epfd < 0) {
		d->cm_epfd = epoll_create1(EPOLL_CLOEXEC);
		d->cm_efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (d->cm_epfd < 0 || d->cm_efd < 0) {
			fab_fail(err, errlen, errno, "soft: epoll/eventfd: %s",
				 strerror(errno));
			if (d->cm_epfd >= 0)
				close(d->cm_epfd);
			if (d->cm_efd >= 0)
				close(d->cm_efd);
			d->cm_epfd = d->cm_efd = -1;
			return -1;
		}
		ev.data.fd = d->cm_efd;
		epoll_ctl(d->cm_epfd, EPOLL_CTL_ADD, d->cm_efd, &ev);
	}
	if (d->cm_sock >= 0)
		return 0;
	if (soft_call(d, FSP_CM_OPEN, NULL, 0, NULL, 0, fds, err, errlen) < 0)
		return -1;
	for (i = 1; i < FSP_FDS_MAX; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	if (fds[0] < 0)
		return fab_fail(err, errlen, EPROTO,
				"soft: ibfabricd sent no CM socket");
	d->cm_sock = fds[0];
	ev.data.fd = d->cm_sock;
	epoll_ctl(d->cm_epfd, EPOLL_CTL_ADD, d->cm_sock, &ev);
	return 0;
}

int soft_cm_fd(struct fab_dev *dev)
{
	struct soft_dev *d = to_sdev(dev);

	/* while ibfabricd is away the descriptor exists and stays quiet */
	if (cm_open(d, NULL, 0) < 0 && d->cm_epfd < 0)
		return -1;
	return d->cm_epfd;
}

static struct soft_cm_id *cm_id_new(struct soft_dev *d, int listener)
{
	struct soft_cm_id *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->base.dev = &d->base;
	s->base.listener = listener;
	s->next = d->ids;
	d->ids = s;
	return s;
}

static void cm_id_unlink(struct soft_dev *d, struct soft_cm_id *s)
{
	struct soft_cm_id **pp;

	for (pp = &d->ids; *pp; pp = &(*pp)->next) {
		if (*pp == s) {
			*pp = s->next;
			return;
		}
	}
}

static struct soft_cm_id *cm_id_by_handle(struct soft_dev *d, uint32_t h)
{
	struct soft_cm_id *s;

	for (s = d->ids; s && h; s = s->next)
		if (s->handle == h)
			return s;
	return NULL;
}

/* An event of our own (fab_cm_get_event returns these first). */
static void cm_own_push(struct soft_dev *d, const struct fab_cm_event *ev)
{
	uint64_t one = 1;

	if (d->cm_nown == d->cm_own_cap) {
		unsigned int ncap = d->cm_own_cap ? d->cm_own_cap * 2 : 8;
		struct fab_cm_event *n = realloc(d->cm_own,
						 ncap * sizeof(*n));

		if (!n)
			return;
		d->cm_own = n;
		d->cm_own_cap = ncap;
	}
	d->cm_own[d->cm_nown++] = *ev;
	if (d->cm_efd >= 0 && write(d->cm_efd, &one, sizeof(one)) < 0) {
		/* the counter is already non-zero: readable anyway */
	}
}

/*
 * ibfabricd went away: so did the node's CM and everything it knew.
 * Connections in progress fail (CONNECT_ERROR ECONNRESET), live ones are
 * DISCONNECTED (their QPs move to the error state), listeners are gone
 * until it is back (soft_cm_reattach); the data path of a QP would
 * survive, the connection does not.
 */
void soft_cm_lost(struct soft_dev *d)
{
	struct soft_cm_id *s;
	struct fab_cm_event ev;

	if (d->cm_sock >= 0) {
		epoll_ctl(d->cm_epfd, EPOLL_CTL_DEL, d->cm_sock, NULL);
		close(d->cm_sock);
		d->cm_sock = -1;
	}
	for (s = d->ids; s; s = s->next) {
		if (!s->handle)
			continue;
		s->handle = 0;
		if (s->base.listener)
			continue;
		memset(&ev, 0, sizeof(ev));
		ev.id = &s->base;
		if (s->connected) {
			ev.type = FAB_CM_EV_DISCONNECTED;
			if (s->base.qp && to_sqp(s->base.qp)->rc)
				soft_rc_set_error(to_sqp(s->base.qp)->rc);
		} else {
			ev.type = FAB_CM_EV_CONNECT_ERROR;
			ev.status = ECONNRESET;
		}
		cm_own_push(d, &ev);
	}
}

/* RTR and RTS from what the CM negotiated. */
static int cm_qp_connect(struct soft_cm_id *s, const struct fsp_cm_event *ev)
{
	struct soft_qp *q = s->base.qp ? to_sqp(s->base.qp) : NULL;
	struct soft_dev *d = to_sdev(s->base.dev);
	struct soft_rc_conn c;
	uint64_t now = now_us();

	if (!q || !q->rc) {
		errno = EINVAL;
		return -1;
	}
	memset(&c, 0, sizeof(c));
	c.qpn = q->base.qpn;
	c.dest_qpn = ev->peer_qpn;
	c.slid = d->attr.lid;
	c.dlid = ev->peer_lid;
	c.pkey = q->pkey;
	c.path_mtu = ev->path_mtu;
	c.sq_psn = s->psn;
	c.rq_psn = ev->peer_psn;
	c.timeout = ev->ack_timeout;
	c.retry_cnt = ev->retry_count;
	c.rnr_retry = ev->rnr_retry_count;
	c.min_rnr_timer = SOFT_MIN_RNR_TIMER;
	c.ack_delay_us = d->ack_delay_us;
	c.max_rd_atomic = ev->initiator_depth ? ev->initiator_depth : 1;
	c.max_dest_rd_atomic = ev->responder_resources ?
			       ev->responder_resources : 1;
	if (soft_rc_connect(q->rc, &c, now) < 0)
		return -1;
	s->connected = 1;
	rc_arm(q, now, 1);
	return 0;
}

static void event_out(struct soft_dev *d, const struct fsp_cm_event *e,
		      struct soft_cm_id *s, struct fab_cm_event *ev)
{
	struct soft_cm_id *l;

	memset(ev, 0, sizeof(*ev));
	ev->type = (enum fab_cm_event_type)e->type;
	ev->id = &s->base;
	ev->status = e->status;
	ev->peer_qpn = e->peer_qpn;
	memcpy(ev->peer.gid.raw, e->peer_gid, 16);
	ev->peer.service_id = e->service_id;
	ev->peer.lid = e->peer_lid;
	ev->private_data_len = e->priv_len > FAB_CM_PRIV_MAX ?
			       FAB_CM_PRIV_MAX : e->priv_len;
	memcpy(ev->private_data, e->priv, ev->private_data_len);
	if (e->type == FAB_CM_EV_CONNECT_REQUEST) {
		l = cm_id_by_handle(d, e->listen_handle);
		ev->listen_id = l && l->base.listener ? &l->base : NULL;
	}
}

/* 1: *ev is an event for the caller; 0: this one was only ours. */
static int cm_take(struct soft_dev *d, const struct fsp_cm_event *e,
		   struct fab_cm_event *ev)
{
	struct soft_cm_id *s, *l;
	struct fsp_cm_ref ref;

	if (e->type == FAB_CM_EV_CONNECT_REQUEST) {
		l = cm_id_by_handle(d, e->listen_handle);
		if (!l || !l->base.listener || !e->handle ||
		    cm_id_by_handle(d, e->handle) || !(s = cm_id_new(d, 0))) {
			/* nobody to give it to: refused, as a destroyed id */
			ref.handle = e->handle;
			soft_call(d, FSP_CM_DESTROY, &ref, sizeof(ref), NULL,
				  0, NULL, NULL, 0);
			return 0;
		}
		s->base.context = l->base.context;
		s->handle = e->handle;
		s->req = *e;
		event_out(d, e, s, ev);
		return 1;
	}
	s = cm_id_by_handle(d, e->handle);
	if (!s || s->base.listener)
		return 0;	/* destroyed meanwhile */
	switch (e->type) {
	case FAB_CM_EV_ESTABLISHED:
		if (!s->connected && cm_qp_connect(s, e) < 0) {
			event_out(d, e, s, ev);
			ev->type = FAB_CM_EV_CONNECT_ERROR;
			ev->status = errno;
			return 1;
		}
		break;
	case FAB_CM_EV_DISCONNECTED:
		if (s->base.qp && to_sqp(s->base.qp)->rc) {
			soft_rc_set_error(to_sqp(s->base.qp)->rc);
			rc_arm(to_sqp(s->base.qp), now_us(), 1);
		}
		break;
	case FAB_CM_EV_REJECTED:
	case FAB_CM_EV_UNREACHABLE:
	case FAB_CM_EV_CONNECT_ERROR:
	case FAB_CM_EV_TIMEWAIT_EXIT:
	case FAB_CM_EV_DEVICE_REMOVAL:
		break;
	default:
		return 0;
	}
	event_out(d, e, s, ev);
	return 1;
}

int soft_cm_get_event(struct fab_dev *dev, struct fab_cm_event *ev)
{
	static __thread uint8_t buf[FSP_MSG_MAX];
	struct soft_dev *d = to_sdev(dev);
	struct fsp_cm_event e;
	struct fsp_hdr h;
	uint64_t cnt;
	ssize_t n;

	if (d->cm_nown) {
		*ev = d->cm_own[0];
		memmove(d->cm_own, d->cm_own + 1,
			--d->cm_nown * sizeof(*d->cm_own));
		if (!d->cm_nown && read(d->cm_efd, &cnt, sizeof(cnt)) < 0) {
			/* already zero */
		}
		return 1;
	}
	while (d->cm_sock >= 0) {
		n = fsp_recv(d->cm_sock, &h, buf, sizeof(buf), NULL);
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				return 0;
			/* end of file: ibfabricd is gone; the device
			 * socket tells the rest */
			soft_lost(d);
			if (d->cm_sock >= 0) {	/* lost before: this one */
				epoll_ctl(d->cm_epfd, EPOLL_CTL_DEL,
					  d->cm_sock, NULL);
				close(d->cm_sock);
				d->cm_sock = -1;
			}
			return soft_cm_get_event(dev, ev);
		}
		if (h.type != FSP_CM_EVENT || (size_t)n != sizeof(e))
			continue;	/* not for us: a bug in one of us */
		memcpy(&e, buf, sizeof(e));
		if (cm_take(d, &e, ev))
			return 1;
	}
	return 0;
}

struct fab_cm_id *soft_cm_listen(struct fab_dev *dev,
				 const struct fab_cm_addr *addr, int backlog,
				 char *err, size_t errlen)
{
	struct soft_dev *d = to_sdev(dev);
	struct fsp_cm_listen l;
	struct fsp_cm_ref ref;
	struct soft_cm_id *s;
	static const union fab_gid zero;

	if (memcmp(addr->gid.raw, zero.raw, 16) &&
	    memcmp(addr->gid.raw, d->attr.gid.raw, 16)) {
		fab_fail(err, errlen, EADDRNOTAVAIL, "soft: listen: the GID "
			 "is not this port's");
		return NULL;
	}
	if (cm_open(d, err, errlen) < 0)
		return NULL;
	memset(&l, 0, sizeof(l));
	l.service_id = addr->service_id;
	l.service_mask = addr->service_mask;
	l.backlog = (uint32_t)backlog;
	l.pkey = addr->pkey & 0x7fff;
	if (soft_call(d, FSP_CM_LISTEN, &l, sizeof(l), &ref, sizeof(ref),
		      NULL, err, errlen) != (ssize_t)sizeof(ref)) {
		if (err && errlen && !*err)
			fab_fail(err, errlen, EPROTO, "soft: listen: short "
				 "reply");
		return NULL;
	}
	s = cm_id_new(d, 1);
	if (!s) {
		soft_call(d, FSP_CM_DESTROY, &ref, sizeof(ref), NULL, 0, NULL,
			  NULL, 0);
		fab_fail(err, errlen, ENOMEM, "soft: out of memory");
		return NULL;
	}
	s->handle = ref.handle;
	s->lreq = l;
	return &s->base;
}

/*
 * Back from an ibfabricd restart (soft_reattach, before PORT_ACTIVE): the
 * listeners listen again, as a host's CM keeps its listeners while its
 * subnet manager restarts; the caller's ids never knew.  One that cannot
 * (its service ID taken meanwhile) stays without a handle and is given
 * nothing.
 */
void soft_cm_reattach(struct soft_dev *d)
{
	struct soft_cm_id *s;
	struct fsp_cm_ref ref;
	int open = 0;

	for (s = d->ids; s; s = s->next) {
		if (!s->base.listener || s->handle)
			continue;
		if (!open && cm_open(d, NULL, 0) < 0)
			return;
		open = 1;
		if (soft_call(d, FSP_CM_LISTEN, &s->lreq, sizeof(s->lreq), &ref,
			      sizeof(ref), NULL, NULL, 0) ==
		    (ssize_t)sizeof(ref))
			s->handle = ref.handle;
	}
}

struct fab_cm_id *soft_cm_create_id(struct fab_dev *dev, char *err,
				    size_t errlen)
{
	struct soft_cm_id *s = cm_id_new(to_sdev(dev), 0);

	if (!s)
		fab_fail(err, errlen, ENOMEM, "soft: out of memory");
	return s ? &s->base : NULL;
}

struct fab_qp *soft_cm_qp_create(struct fab_cm_id *id,
				 const struct fab_qp_init *init, char *err,
				 size_t errlen)
{
	struct soft_rc_cfg cfg = {
		.max_send = init->max_send, .max_recv = init->max_recv,
		.max_sge = init->max_sge, .max_inline = init->max_inline,
	};
	struct epoll_event ev = { .events = EPOLLIN };
	struct fab_qp *qp;
	struct soft_qp *q;

	qp = soft_qp_create(id->dev, init, err, errlen);
	if (!qp)
		return NULL;
	q = to_sqp(qp);
	q->tdl = UINT64_MAX;
	q->rc = soft_rc_new(&cfg, &rc_ops, q);
	if (!q->rc) {
		fab_fail(err, errlen, errno, "soft: RC QP: %s%s",
			 strerror(errno), errno == EINVAL ?
			 " (queue sizes, SGEs or inline bytes over the "
			 "limits)" : "");
		goto fail;
	}
	if (q->tfd < 0) {	/* a QP from the pool has its timer */
		q->tfd = timerfd_create(CLOCK_MONOTONIC,
					TFD_NONBLOCK | TFD_CLOEXEC);
		if (q->tfd < 0) {
			fab_fail(err, errlen, errno, "soft: timerfd: %s",
				 strerror(errno));
			goto fail;
		}
		ev.data.fd = q->tfd;
		epoll_ctl(q->epfd, EPOLL_CTL_ADD, q->tfd, &ev);
	}
	qp->cm = id;
	id->qp = qp;
	return qp;
fail:
	{
		int e = errno;

		soft_qp_destroy(qp);
		errno = e;
	}
	return NULL;
}

static void offer_fill(struct fsp_cm_offer *o, struct soft_cm_id *s,
		       const struct fab_cm_param *p, size_t priv_max)
{
	memset(o, 0, sizeof(*o));
	o->qpn = s->base.qp->qpn;
	o->psn = s->psn;
	if (p) {
		o->responder_resources = p->responder_resources;
		o->initiator_depth = p->initiator_depth;
		o->retry_count = p->retry_count;
		o->rnr_retry_count = p->rnr_retry_count;
		o->priv_len = (uint8_t)(p->private_data_len > priv_max ?
					priv_max : p->private_data_len);
		if (o->priv_len)
			memcpy(o->priv, p->private_data, o->priv_len);
	}
}

int soft_cm_connect(struct fab_cm_id *id, const struct fab_cm_addr *dst,
		    const struct fab_cm_param *param, char *err,
		    size_t errlen)
{
	struct soft_cm_id *s = to_sid(id);
	struct soft_dev *d = to_sdev(id->dev);
	struct fsp_cm_connect c;
	struct fsp_cm_ref ref;

	if (s->handle)
		return fab_fail(err, errlen, EISCONN, "soft: connect: the id "
				"is connecting or connected already");
	if (param && (param->retry_count > 7 || param->rnr_retry_count > 7))
		return fab_fail(err, errlen, EINVAL, "soft: connect: retry "
				"counts are 0..7");
	if (cm_open(d, err, errlen) < 0)
		return -1;
	s->psn = new_psn(d);
	memset(&c, 0, sizeof(c));
	c.service_id = dst->service_id;
	memcpy(c.gid, dst->gid.raw, 16);
	c.dlid = dst->lid;
	c.pkey_index = id->qp->pkey_index;
	offer_fill(&c.o, s, param, FAB_CM_REQ_PRIV);
	if (soft_call(d, FSP_CM_CONNECT, &c, sizeof(c), &ref, sizeof(ref),
		      NULL, err, errlen) != (ssize_t)sizeof(ref))
		return err && errlen && *err ? -1 :
		       fab_fail(err, errlen, EPROTO, "soft: connect: short "
				"reply");
	s->handle = ref.handle;
	return 0;
}

int soft_cm_accept(struct fab_cm_id *id, const struct fab_cm_param *param,
		   char *err, size_t errlen)
{
	struct soft_cm_id *s = to_sid(id);
	struct soft_dev *d = to_sdev(id->dev);
	struct fsp_cm_accept a;

	if (!s->handle || s->req.type != FAB_CM_EV_CONNECT_REQUEST)
		return fab_fail(err, errlen, EINVAL, "soft: accept: not a "
				"connection request");
	if (s->connected)
		return fab_fail(err, errlen, EISCONN, "soft: accept: "
				"accepted already");
	if (param && param->rnr_retry_count > 7)
		return fab_fail(err, errlen, EINVAL, "soft: accept: the RNR "
				"retry count is 0..7");
	s->psn = new_psn(d);
	memset(&a, 0, sizeof(a));
	a.handle = s->handle;
	offer_fill(&a.o, s, param, FAB_CM_REP_PRIV);
	/* the QP can receive as soon as the REP is out: RTR (and RTS) now */
	if (cm_qp_connect(s, &s->req) < 0)
		return fab_fail(err, errlen, errno, "soft: accept: the QP "
				"cannot connect: %s", strerror(errno));
	if (soft_call(d, FSP_CM_ACCEPT, &a, sizeof(a), NULL, 0, NULL, err,
		      errlen) < 0) {
		soft_rc_set_error(to_sqp(id->qp)->rc);
		return -1;
	}
	return 0;
}

int soft_cm_reject(struct fab_cm_id *id, const void *private_data,
		   uint8_t len, char *err, size_t errlen)
{
	struct soft_cm_id *s = to_sid(id);
	struct fsp_cm_reject r;

	if (!s->handle || s->req.type != FAB_CM_EV_CONNECT_REQUEST)
		return fab_fail(err, errlen, EINVAL, "soft: reject: not a "
				"connection request");
	memset(&r, 0, sizeof(r));
	r.handle = s->handle;
	r.priv_len = len;
	if (len)
		memcpy(r.priv, private_data, len);
	return soft_call(to_sdev(id->dev), FSP_CM_REJECT, &r, sizeof(r), NULL,
			 0, NULL, err, errlen) < 0 ? -1 : 0;
}

int soft_cm_disconnect(struct fab_cm_id *id, char *err, size_t errlen)
{
	struct soft_cm_id *s = to_sid(id);
	struct fsp_cm_ref ref = { .handle = s->handle };

	if (!s->handle)
		return fab_fail(err, errlen, ENOTCONN, "soft: disconnect: not "
				"connected");
	/* as rdma_disconnect: the QP goes to the error state at once,
	 * after the ACK it owes the peer's last requests */
	if (id->qp && to_sqp(id->qp)->rc) {
		soft_rc_ack_now(to_sqp(id->qp)->rc, now_us());
		rc_flush_tx(to_sqp(id->qp));
		soft_qp_set_error(id->qp);
	}
	return soft_call(to_sdev(id->dev), FSP_CM_DISCONNECT, &ref,
			 sizeof(ref), NULL, 0, NULL, err, errlen) < 0 ? -1 : 0;
}

void soft_cm_destroy(struct fab_cm_id *id)
{
	struct soft_cm_id *s = to_sid(id);
	struct soft_dev *d = to_sdev(id->dev);
	struct fsp_cm_ref ref = { .handle = s->handle };
	unsigned int i;

	if (id->qp) {
		soft_qp_destroy(id->qp);
		id->qp = NULL;
	}
	if (s->handle && d->up)
		soft_call(d, FSP_CM_DESTROY, &ref, sizeof(ref), NULL, 0, NULL,
			  NULL, 0);
	/* our own events about it go with it */
	for (i = 0; i < d->cm_nown;) {
		if (d->cm_own[i].id == id || d->cm_own[i].listen_id == id)
			memmove(&d->cm_own[i], &d->cm_own[i + 1],
				(--d->cm_nown - i) * sizeof(*d->cm_own));
		else
			i++;
	}
	cm_id_unlink(d, s);
	free(s);
}

void soft_rc_dev_free(struct soft_dev *d)
{
	while (d->ids)
		soft_cm_destroy(&d->ids->base);
	while (d->mrs)
		soft_mr_dereg(&d->mrs->base);
	if (d->cm_sock >= 0)
		close(d->cm_sock);
	if (d->cm_efd >= 0)
		close(d->cm_efd);
	if (d->cm_epfd >= 0)
		close(d->cm_epfd);
	d->cm_sock = d->cm_efd = d->cm_epfd = -1;
	free(d->cm_own);
	d->cm_own = NULL;
	d->cm_nown = d->cm_own_cap = 0;
}

int fab_soft_qp_rc_counters(struct fab_qp *qp, char *buf, size_t cap)
{
	const struct soft_rc_stats *st;
	int n;

	if (qp->dev->prov != &fab_soft_provider) {
		errno = EOPNOTSUPP;
		return -1;
	}
	if (!to_sqp(qp)->rc) {
		errno = EINVAL;
		return -1;
	}
	st = soft_rc_stats(to_sqp(qp)->rc);
	n = snprintf(buf, cap, "tx_packets %" PRIu64 " rx_packets %" PRIu64
		     " retransmits %" PRIu64 " timeouts %" PRIu64
		     " seq_naks_sent %" PRIu64 " seq_naks_rcvd %" PRIu64
		     " rnr_naks_sent %" PRIu64 " rnr_naks_rcvd %" PRIu64
		     " acks_sent %" PRIu64 " acks_rcvd %" PRIu64
		     " dup_requests %" PRIu64 " out_of_seq %" PRIu64
		     " ghost_acks %" PRIu64 " drop_not_ours %" PRIu64
		     " drop_malformed %" PRIu64 " drop_state %" PRIu64
		     " naks_sent %" PRIu64,
		     st->tx_packets, st->rx_packets, st->retransmits,
		     st->timeouts, st->seq_naks_sent, st->seq_naks_rcvd,
		     st->rnr_naks_sent, st->rnr_naks_rcvd, st->acks_sent,
		     st->acks_rcvd, st->dup_requests, st->out_of_seq,
		     st->ghost_acks, st->drop_not_ours, st->drop_malformed,
		     st->drop_state, st->naks_sent);
	return n < 0 ? -1 : n;
}

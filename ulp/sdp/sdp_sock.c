// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * SDP connections on a fabric port, each spliced to a file descriptor
 * (sdp_sock.h says what goes where).  One registered region per
 * connection holds its receive buffers (rx_n of buf_size) and its send
 * slots (tx_n of buf_size; a message is at most the peer's buffer size).
 * Send slots are used and completed in order (an RC send queue completes
 * in order), so they are a ring: tx_head is the next free one, tx_inflight
 * how many are posted.  Received messages whose bytes are not yet written
 * to the fd wait in the pending ring, their buffers not reposted: that
 * withholds credits from the peer until the fd drains.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <event2/event.h>
#include <linux/sockios.h>

#include "inet/byteorder.h"
#include "ulp/sdp/sdp_sock.h"

#define DEF_BUF		65536u
#define DEF_RX		32u
#define DEF_TX		32u
#define DEF_CONNS	1024u
/* buffer regions (with their registrations) kept from closed connections
 * for the next ones: a region of 4 MiB malloc'd, registered, unmapped and
 * faulted in again per connection cost a fifth of the connection rate */
#define SPARE_REGIONS	4
#define WR_TX		0x100000000ull	/* wr_id: a send slot */
#define WR_ABORT	0x200000000ull	/* wr_id: our AbortConn */
#define WR_KEEPALIVE	0x400000000ull	/* wr_id: a keepalive probe */
#define DEF_KEEPALIVE_MS 60000
#define DEF_STALL_MS	10000
/* how long a REQ waits for its accept's fd to connect: the CM keeps the
 * peer waiting with MRAs meanwhile (the soft CM's give up after some 40
 * s, the kernel's later); a TCP connect to a silent host takes 127 s */
#define DEF_ACCEPT_WAIT_MS 30000
#define ABORT_LINGER_MS	500		/* wait for the AbortConn's ACK */
/* S_RESETTING on a TCP fd: what the peer sent before its reset goes to
 * the LAN before our RST, as long as it moves: reset anyway after
 * RESET_STALL_MS with nothing moved (a client that does not read), or
 * RESET_MAX_MS in all; the socket's queue looked at every
 * RESET_POLL_MS */
#define RESET_STALL_MS	5000
#define RESET_MAX_MS	60000
#define RESET_POLL_MS	20
#define MAX_LISTEN	64
/* REQs the fabric's CM keeps waiting for our REP per listener: a burst
 * of connects while this process is busy must wait, as SYNs wait in a
 * TCP listener's queue (somaxconn), not be refused (a 'both' client
 * would go TCP unseen, an 'sdp' one fail).  1024: rdma_cm's max_backlog
 * and the soft CM's connections per port; the gateway's one listener
 * takes every port's. */
#define CM_BACKLOG	1024

enum sock_state {
	S_CONNECTING = 1,	/* REQ sent, no REP yet */
	S_WAITING,		/* REQ taken, its fd still connecting */
	S_ACCEPTING,		/* REP sent, no RTU yet */
	S_UP,
	S_CLOSING,		/* DREQ sent, or the peer's came */
	S_ABORTING,		/* AbortConn sent: waiting for it to go */
	S_DRAINING,		/* the peer closed in order and left: what
				 * it sent still goes to the fd */
	S_RESETTING,		/* the peer reset (AbortConn, or gone without
				 * DisConn): what it sent before still goes
				 * to the fd, then the fd's reset */
};

struct listener {
	uint16_t port;
	unsigned int refs;
	struct fab_cm_id *id;
};

struct sdp_sock {
	struct sdp_ep *ep;
	struct sdp_sock *next;
	struct fab_cm_id *id;
	struct fab_qp *qp;
	struct fab_mr *mr;
	uint8_t *mem;
	int fd;
	int fd_tcp;		/* a TCP socket: reset it with SO_LINGER 0 */
	int passive;
	enum sock_state st;
	struct sdp_conn c;
	struct sdp_sock_info info;
	void *ctx;
	struct event *qp_ev, *rd_ev, *wr_ev, *tmo_ev;
	struct event *hup_ev;		/* abort_close: the fd's peer gone */
	struct event *wait_ev;		/* S_WAITING: the fd's connect */
	uint8_t hello_ipv;		/* S_WAITING: for the HelloAck */
	int hup_fd;			/* a dup of fd for hup_ev, or -1 */
	int abort_close;		/* sdp_sock_abort_on_close */
	int rd_on, wr_on;
	uint32_t tx_size;		/* largest message to the peer */
	uint32_t tx_head, tx_inflight;
	uint32_t *pend;			/* rx slots waiting for the fd */
	uint32_t pend_head, pend_n, pend_off;
	uint32_t *rx_off, *rx_len;	/* payload of each rx slot */
	unsigned int fd_eof:1;		/* read end of file on the fd */
	unsigned int shut_pending:1;	/* peer's DisConn: shut after pend */
	unsigned int shut_done:1;
	unsigned int chrcvbuf:1;	/* a ChRcvBufAck owed */
	unsigned int fd_closed:1;
	unsigned int dreq_sent:1;
	unsigned int owns_fd:1;		/* ours to close; closed() owed */
	unsigned int peer_gone:1;	/* its DREQ came: flushes are ours */
	unsigned int ka_out:1;		/* a keepalive probe is posted */
	unsigned int rejected:1;	/* the peer's REJ ended the connect */
	unsigned int reset_told:1;	/* ops->reset called */
	unsigned int rd_shut:1;		/* the program shut its reading */
	int rst_err;			/* S_RESETTING: the fd's errno */
	uint64_t rst_left;		/* ... bytes still to go */
	uint64_t rst_stall, rst_end;	/* ... reset anyway at (now_ms) */
	uint64_t alive_ms;		/* the last successful completion */
	uint64_t busy_ms;		/* a send posted with none before */
	uint64_t sent_ms;		/* the last send completed */
	uint32_t ka_ms;			/* its program's idle time (0: the
					 * endpoint's) */
	void (*sent_cb)(void *arg, int err);	/* sdp_sock_when_sent */
	void *sent_arg;
};

struct sdp_ep {
	struct event_base *base;
	struct fab_dev *dev;
	struct sdp_ep_cfg cfg;
	struct sdp_ep_ops ops;
	void *arg;
	struct event *cm_ev;
	struct event *ka_ev;		/* the keepalive sweep */
	unsigned int ka_per;		/* ... its period, ms (0: none) */
	struct sdp_sock *socks;
	struct listener ls[MAX_LISTEN];
	unsigned int nls;
	struct sdp_ep_stats st;
	struct inet_addr own;		/* rdma_cm profile: our address */
	struct {
		uint8_t *mem;
		struct fab_mr *mr;
	} spare[SPARE_REGIONS];		/* regions of closed connections */
	unsigned int nspare;
};

static const char *err_reason(unsigned int i)
{
	return sdp_err_name((enum sdp_err)i);
}

const struct counter_desc sdp_ep_counters[] = {
	COUNTER("conns_active", struct sdp_ep_stats, conns_active,
		"SDP connections made."),
	COUNTER("conns_passive", struct sdp_ep_stats, conns_passive,
		"SDP connections taken."),
	COUNTER("conns_now", struct sdp_ep_stats, conns_now,
		"SDP connections open now."),
	COUNTER("connect_failed", struct sdp_ep_stats, connect_failed,
		"SDP connections refused, unreachable or timed out."),
	COUNTER("rejected", struct sdp_ep_stats, rejected,
		"SDP connection requests refused."),
	COUNTER("bad_hello", struct sdp_ep_stats, bad_hello,
		"Hello or HelloAck messages that could not be used."),
	COUNTER("tx_msgs", struct sdp_ep_stats, tx_msgs,
		"SDP messages sent."),
	COUNTER("tx_bytes", struct sdp_ep_stats, tx_bytes,
		"Payload bytes sent over SDP."),
	COUNTER("rx_msgs", struct sdp_ep_stats, rx_msgs,
		"SDP messages received."),
	COUNTER("rx_bytes", struct sdp_ep_stats, rx_bytes,
		"Payload bytes received over SDP."),
	COUNTER("credit_updates_tx", struct sdp_ep_stats, credit_updates_tx,
		"Credit-only SDP messages sent."),
	COUNTER("credit_updates_rx", struct sdp_ep_stats, credit_updates_rx,
		"Credit-only SDP messages received."),
	COUNTER("disconn_tx", struct sdp_ep_stats, disconn_tx,
		"DisConn messages sent (orderly close)."),
	COUNTER("disconn_rx", struct sdp_ep_stats, disconn_rx,
		"DisConn messages received."),
	COUNTER("aborts_tx", struct sdp_ep_stats, aborts_tx,
		"AbortConn messages sent (reset)."),
	COUNTER("aborts_rx", struct sdp_ep_stats, aborts_rx,
		"AbortConn messages received."),
	COUNTER("qp_errors", struct sdp_ep_stats, qp_errors,
		"Connections whose queue pair failed."),
	COUNTER("keepalive_probes", struct sdp_ep_stats, keepalive_probes,
		"Keepalive probes sent to idle SDP connections."),
	COUNTER("keepalive_dead", struct sdp_ep_stats, keepalive_dead,
		"SDP connections a keepalive probe found dead."),
	COUNTER("stalls", struct sdp_ep_stats, stalls,
		"SDP connections reset because their queue pair completed "
		"nothing for the stall time with sends posted."),
	COUNTER("peer_resets", struct sdp_ep_stats, peer_resets,
		"Connections the peer left without DisConn (reset)."),
	COUNTER("linger_aborts", struct sdp_ep_stats, linger_aborts,
		"Connections reset (AbortConn) at the program's last close, "
		"for SO_LINGER 0."),
	COUNTER("rx_dropped_shut", struct sdp_ep_stats, rx_dropped_shut,
		"Bytes that came for a program after its shutdown(SHUT_RD), "
		"dropped."),
	COUNTER_ARRAY("proto_error", struct sdp_ep_stats, proto_errors,
		      err_reason, "Peers aborted for a protocol violation."),
	COUNTERS_END
};

static void sock_kick(struct sdp_sock *s);
static void arm_timer(struct sdp_sock *s, unsigned int ms);
static void sock_abort(struct sdp_sock *s);
static void reset_begin(struct sdp_sock *s, int err);
static void reset_flush(struct sdp_sock *s);
static void reset_finish(struct sdp_sock *s);

/* ---- helpers ------------------------------------------------------------ */

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static uint8_t *rx_buf(const struct sdp_sock *s, uint32_t slot)
{
	return s->mem + (size_t)slot * s->ep->cfg.buf_size;
}

static uint8_t *tx_buf(const struct sdp_sock *s, uint32_t slot)
{
	return s->mem + (size_t)(s->ep->cfg.rx_bufs + slot) *
	       s->ep->cfg.buf_size;
}

static void set_rd(struct sdp_sock *s, int on)
{
	if (!s->rd_ev || s->rd_on == on)
		return;
	s->rd_on = on;
	if (on)
		event_add(s->rd_ev, NULL);
	else
		event_del(s->rd_ev);
}

static void set_wr(struct sdp_sock *s, int on)
{
	if (!s->wr_ev || s->wr_on == on)
		return;
	s->wr_on = on;
	if (on)
		event_add(s->wr_ev, NULL);
	else
		event_del(s->wr_ev);
}

static int post_recv(struct sdp_sock *s, uint32_t slot)
{
	struct fab_sge sge = {
		.addr = (uintptr_t)rx_buf(s, slot),
		.length = s->ep->cfg.buf_size,
		.lkey = fab_mr_lkey(s->mr),
	};
	struct fab_recv_wr wr = { .wr_id = slot, .sg_list = &sge,
				  .num_sge = 1 };

	return fab_qp_post_recv(s->qp, &wr, 1) == 1 ? 0 : -1;
}

static void hup_unwatch(struct sdp_sock *s)
{
	if (s->hup_ev)
		event_free(s->hup_ev);
	s->hup_ev = NULL;
	if (s->hup_fd >= 0)
		close(s->hup_fd);
	s->hup_fd = -1;
}

/* The sdp_sock_when_sent waiter, once: err 0 (everything, DisConn
 * included, acknowledged) or the reset's. */
static void sent_tell(struct sdp_sock *s, int err)
{
	void (*cb)(void *, int) = s->sent_cb;

	s->sent_cb = NULL;
	if (cb)
		cb(s->sent_arg, err);
}

static void sent_check(struct sdp_sock *s)
{
	if (s->sent_cb && s->c.fin_sent && !s->tx_inflight)
		sent_tell(s, 0);
}

/*
 * Close the fd: in order (err 0), or a reset (err: the errno a TCP
 * socket would report, ECONNRESET or ETIMEDOUT): a TCP fd then goes with
 * an RST, any other the owner's ops->reset sees first.
 */
static void fd_close(struct sdp_sock *s, int err)
{
	struct linger lg = { 1, 0 };

	hup_unwatch(s);
	if (s->fd_closed || s->fd < 0)
		return;
	set_rd(s, 0);
	set_wr(s, 0);
	if (err && s->fd_tcp)
		setsockopt(s->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	else if (err && s->owns_fd && s->ep->ops.reset && !s->reset_told)
		s->ep->ops.reset(s->ep->arg, s, s->ctx, s->fd, err);
	close(s->fd);
	s->fd = -1;
	s->fd_closed = 1;
	if (err)
		sent_tell(s, err);
}

static void sock_free(struct sdp_sock *s)
{
	struct sdp_ep *ep = s->ep;
	struct sdp_sock **pp;

	for (pp = &ep->socks; *pp; pp = &(*pp)->next) {
		if (*pp == s) {
			*pp = s->next;
			break;
		}
	}
	if (s->qp_ev)
		event_free(s->qp_ev);
	if (s->rd_ev)
		event_free(s->rd_ev);
	if (s->wr_ev)
		event_free(s->wr_ev);
	if (s->tmo_ev)
		event_free(s->tmo_ev);
	if (s->wait_ev)
		event_free(s->wait_ev);
	if (s->id)
		fab_cm_destroy(s->id);	/* its QP, and with it our buffers' use */
	/* kept only when no QP of ours is left to use it (a failed
	 * sock_new leaves its id, and the QP, to the caller) */
	if (s->mr && (s->id || !s->qp) && ep->nspare < SPARE_REGIONS) {
		ep->spare[ep->nspare].mem = s->mem;
		ep->spare[ep->nspare++].mr = s->mr;
		s->mem = NULL;
		s->mr = NULL;
	}
	if (s->mr)
		fab_mr_dereg(s->mr);
	if (ep->st.conns_now)
		ep->st.conns_now--;
	sent_check(s);
	sent_tell(s, ECONNRESET);	/* gone before it all went */
	if (s->owns_fd) {
		fd_close(s, ECONNRESET);
		if (ep->ops.closed)
			ep->ops.closed(ep->arg, s, s->ctx);
	}
	free(s->mem);
	free(s->pend);
	free(s->rx_off);
	free(s->rx_len);
	free(s);
}

/* ---- sending ------------------------------------------------------------- */

/* Post the message built in send slot tx_head (len bytes). */
static int tx_post(struct sdp_sock *s, uint32_t len, uint64_t tag)
{
	uint32_t slot = s->tx_head;
	struct fab_sge sge = {
		.addr = (uintptr_t)tx_buf(s, slot),
		.length = len,
		.lkey = fab_mr_lkey(s->mr),
	};
	struct fab_rc_wr wr;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = tag | slot;
	wr.opcode = FAB_WR_SEND;
	wr.flags = FAB_SEND_SIGNALED;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	if (fab_qp_post_send(s->qp, &wr, 1) != 1)
		return -1;
	if (!s->tx_inflight && !s->ka_out)
		s->busy_ms = now_ms();
	s->tx_head = (s->tx_head + 1) % s->ep->cfg.tx_bufs;
	s->tx_inflight++;
	s->ep->st.tx_msgs++;
	return 0;
}

static int tx_slot_free(const struct sdp_sock *s)
{
	return s->tx_inflight < s->ep->cfg.tx_bufs;
}

/* A message with no payload of mid (credit update, DisConn, Abort);
 * ChRcvBufAck carries our buffer size. */
static int tx_ctl(struct sdp_sock *s, uint8_t mid, uint64_t tag)
{
	uint8_t *b;
	uint32_t plen = 0;
	int len;

	if (!tx_slot_free(s))
		return -1;
	b = tx_buf(s, s->tx_head);
	if (mid == SDP_MID_CHRCVBUF_ACK) {
		be32_put(b + SDP_BSDH_LEN, s->ep->cfg.buf_size);
		plen = 4;
	}
	len = sdp_conn_tx(&s->c, b, mid, 0, plen);
	if (len < 0)
		return -1;
	return tx_post(s, (uint32_t)len, tag);
}

/*
 * The program's end is gone (all its dups closed): POLLHUP on ours.  Once
 * we shut our end's write side (the peer's DisConn), the program's
 * shutdown(SHUT_WR) gives POLLHUP as well: then it cannot be told from a
 * close, and the end is DisConn (everything was delivered by then).
 */
static int peer_hup(const struct sdp_sock *s)
{
	struct pollfd p = { .fd = s->fd, .events = 0 };

	return !s->fd_closed && s->fd >= 0 && !s->shut_done &&
	       poll(&p, 1, 0) == 1 && (p.revents & POLLHUP);
}

/* SO_LINGER 0's close: a reset, what is still unsent dropped. */
static void linger_abort(struct sdp_sock *s)
{
	s->ep->st.linger_aborts++;
	s->abort_close = 0;
	sock_abort(s);
}

static void hup_cb(evutil_socket_t fd, short what, void *arg)
{
	struct sdp_sock *s = arg;

	(void)fd;
	(void)what;
	if (s->abort_close && s->st == S_UP && peer_hup(s))
		linger_abort(s);
}

/*
 * Watch for the program's last close without reading: a dup of the fd
 * (libevent will not mix edge- and level-triggered events on one fd),
 * edge-triggered on EPOLLRDHUP.  The peer's shutdown and its release
 * wake it (their wake-ups carry no poll key); its data and our writes
 * do not.  hup_cb tells the release by POLLHUP.
 */
static void hup_watch(struct sdp_sock *s)
{
	if (s->hup_ev || s->fd < 0 || s->fd_closed || s->fd_tcp)
		return;
	s->hup_fd = fcntl(s->fd, F_DUPFD_CLOEXEC, 0);
	if (s->hup_fd < 0)
		return;
	s->hup_ev = event_new(s->ep->base, s->hup_fd,
			      EV_CLOSED | EV_ET | EV_PERSIST, hup_cb, s);
	if (!s->hup_ev || event_add(s->hup_ev, NULL) < 0)
		hup_unwatch(s);
}

void sdp_sock_abort_on_close(struct sdp_sock *s, int on)
{
	s->abort_close = on;
	if (s->st != S_UP)
		return;		/* sock_start watches */
	if (!on) {
		hup_unwatch(s);
		return;
	}
	hup_watch(s);
	if (peer_hup(s))
		linger_abort(s);
}

void sdp_sock_when_sent(struct sdp_sock *s, void (*cb)(void *arg, int err),
			void *arg)
{
	if (s->st == S_RESETTING) {
		cb(arg, s->rst_err);	/* reset_begin told the last one */
		return;
	}
	s->sent_cb = cb;
	s->sent_arg = arg;
	sent_check(s);
}

void sdp_ep_cancel_when_sent(struct sdp_ep *ep, void *arg)
{
	struct sdp_sock *s;

	for (s = ep->socks; s; s = s->next)
		if (s->sent_cb && s->sent_arg == arg)
			s->sent_cb = NULL;
}

int sdp_sock_fd(const struct sdp_sock *s)
{
	return s->fd_closed ? -1 : s->fd;
}

struct sdp_sock *sdp_ep_sock_of(struct sdp_ep *ep, const void *ctx)
{
	struct sdp_sock *s;

	for (s = ep->socks; s; s = s->next)
		if (s->ctx == ctx)
			return s;
	return NULL;
}

/* Read the fd into Data messages while the peer has buffers for them. */
static void tx_from_fd(struct sdp_sock *s)
{
	uint32_t max = s->tx_size - SDP_BSDH_LEN;
	uint8_t *b;
	ssize_t n;
	int len;

	if (s->abort_close && peer_hup(s)) {
		linger_abort(s);
		return;
	}
	while (s->st == S_UP && !s->fd_eof && !s->fd_closed &&
	       tx_slot_free(s) && sdp_conn_tx_room(&s->c) > 0) {
		b = tx_buf(s, s->tx_head);
		n = recv(s->fd, b + SDP_BSDH_LEN, max, 0);
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				break;
			sock_abort(s);	/* ECONNRESET from a TCP peer ... */
			return;
		}
		if (n == 0) {
			if (s->abort_close && peer_hup(s)) {
				linger_abort(s);
				return;
			}
			s->fd_eof = 1;
			break;
		}
		len = sdp_conn_tx(&s->c, b, SDP_MID_DATA, 0, (uint32_t)n);
		if (len < 0 || tx_post(s, (uint32_t)len, WR_TX) < 0) {
			sock_abort(s);
			return;
		}
		s->ep->st.tx_bytes += (uint64_t)n;
		/* a short read took what there was: the read event is
		 * level-triggered, so more wakes us, and the recv that
		 * would only say EAGAIN is spared */
		if ((uint32_t)n < max)
			break;
	}
}

/* ---- receiving ------------------------------------------------------------ */

static void repost(struct sdp_sock *s, uint32_t slot)
{
	if (post_recv(s, slot) == 0)
		sdp_conn_rx_posted(&s->c, 1);
}

/*
 * A write to the program's unix stream said EPIPE while its end is open
 * for writing (no POLLHUP, which needs both directions shut): it did
 * shutdown(SHUT_RD) alone.  Linux's TCP keeps an established connection
 * after SHUT_RD (only data after SHUT_RDWR resets it), and its reader
 * sees end of file, as the unix stream gives it: what comes for it from
 * now on is dropped here, its buffers returned, and the connection goes
 * on the other way.
 */
static int rd_shut_only(const struct sdp_sock *s)
{
	struct pollfd p = { .fd = s->fd, .events = 0 };

	return !s->fd_tcp && !s->fd_closed && s->fd >= 0 &&
	       poll(&p, 1, 0) == 0;
}

static void rx_drop(struct sdp_sock *s)
{
	uint32_t slot;

	while (s->pend_n) {
		slot = s->pend[s->pend_head];
		s->ep->st.rx_dropped_shut += s->rx_len[slot] - s->pend_off;
		s->pend_off = 0;
		s->pend_head = (s->pend_head + 1) % s->ep->cfg.rx_bufs;
		s->pend_n--;
		if (s->st != S_RESETTING)
			repost(s, slot);
	}
	set_wr(s, 0);
}

/* Write waiting payload to the fd; buffers go back as they empty. */
static void rx_to_fd(struct sdp_sock *s)
{
	uint32_t slot;
	ssize_t n;

	if (s->rd_shut) {
		rx_drop(s);
		goto shut;
	}
	while (s->pend_n && !s->fd_closed) {
		slot = s->pend[s->pend_head];
		n = send(s->fd, rx_buf(s, slot) + s->rx_off[slot] +
			 s->pend_off, s->rx_len[slot] - s->pend_off,
			 MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR) {
				set_wr(s, 1);
				return;
			}
			if (errno == EPIPE && s->st != S_RESETTING &&
			    rd_shut_only(s)) {
				s->rd_shut = 1;
				rx_drop(s);
				goto shut;
			}
			/* the program closed its end, or the LAN peer
			 * reset: data we cannot deliver -- a reset (in
			 * S_RESETTING one already: reset_flush ends it) */
			if (s->st == S_RESETTING)
				fd_close(s, s->rst_err);
			else
				sock_abort(s);
			return;
		}
		s->pend_off += (uint32_t)n;
		if (s->pend_off < s->rx_len[slot])
			continue;
		s->pend_off = 0;
		s->pend_head = (s->pend_head + 1) % s->ep->cfg.rx_bufs;
		s->pend_n--;
		if (s->st != S_RESETTING)	/* no QP to take it */
			repost(s, slot);
	}
	set_wr(s, 0);
shut:	/* the peer's DisConn, once what came before it is through */
	if (s->shut_pending && !s->shut_done && !s->fd_closed) {
		shutdown(s->fd, SHUT_WR);
		s->shut_done = 1;
	}
}

/* Bytes the peer sent that the fd's reader has not got yet: ours, and
 * for a TCP fd its send queue (SIOCOUTQ: not yet acknowledged). */
static uint64_t held_bytes(const struct sdp_sock *s)
{
	uint64_t n = 0;
	uint32_t i;
	int q = 0;

	if (s->fd_closed || s->fd < 0)
		return 0;
	for (i = 0; i < s->pend_n; i++)
		n += s->rx_len[s->pend[(s->pend_head + i) %
				       s->ep->cfg.rx_bufs]];
	if (s->pend_n)
		n -= s->pend_off;
	if (s->fd_tcp && ioctl(s->fd, SIOCOUTQ, &q) == 0 && q > 0)
		n += (uint64_t)q;
	return n;
}

static void proto_fail(struct sdp_sock *s)
{
	if (s->c.error > SDP_ERR_NONE && s->c.error < SDP_ERR_MAX)
		s->ep->st.proto_errors[s->c.error]++;
	sock_abort(s);
}

static void on_recv(struct sdp_sock *s, uint32_t slot, uint32_t len)
{
	struct sdp_rx rx;
	uint32_t at;
	int e;

	if (slot >= s->ep->cfg.rx_bufs || len > s->ep->cfg.buf_size) {
		s->c.error = SDP_ERR_LEN;
		proto_fail(s);
		return;
	}
	if (sdp_conn_rx(&s->c, rx_buf(s, slot), len, &rx) < 0) {
		proto_fail(s);
		return;
	}
	s->ep->st.rx_msgs++;
	switch (rx.kind) {
	case SDP_RX_DATA:
		if (!rx.len) {
			s->ep->st.credit_updates_rx++;
			repost(s, slot);
			break;
		}
		s->ep->st.rx_bytes += rx.len;
		s->rx_off[slot] = (uint32_t)rx.off;
		s->rx_len[slot] = (uint32_t)rx.len;
		at = (s->pend_head + s->pend_n) % s->ep->cfg.rx_bufs;
		s->pend[at] = slot;
		s->pend_n++;
		break;
	case SDP_RX_DISCONN:
		s->ep->st.disconn_rx++;
		s->shut_pending = 1;
		repost(s, slot);
		break;
	case SDP_RX_ABORT:
		s->ep->st.aborts_rx++;
		repost(s, slot);
		/* tcp_reset(): EPIPE in CLOSE_WAIT (the peer's DisConn came,
		 * ours did not go), else ECONNRESET.  What came before it
		 * goes to the fd first, as TCP's receive queue stays
		 * readable after an RST */
		e = s->c.fin_rcvd && !s->c.fin_sent ? EPIPE : ECONNRESET;
		if (s->st == S_UP && held_bytes(s)) {
			if (!s->dreq_sent) {
				s->dreq_sent = 1;
				fab_cm_disconnect(s->id, NULL, 0);
			}
			reset_begin(s, e);
			break;
		}
		fd_close(s, e);
		if (!s->dreq_sent) {
			s->dreq_sent = 1;
			s->st = S_CLOSING;
			fab_cm_disconnect(s->id, NULL, 0);
			arm_timer(s, ABORT_LINGER_MS * 4);
		}
		break;
	case SDP_RX_CHRCVBUF:
		s->chrcvbuf = 1;
		repost(s, slot);
		break;
	case SDP_RX_CHRCVBUF_ACK:
		repost(s, slot);
		break;
	}
}

/* ---- the connection's progress ------------------------------------------ */

static void tmo_cb(evutil_socket_t fd, short what, void *arg)
{
	struct sdp_sock *s = arg;
	struct sdp_ep *ep = s->ep;

	(void)fd;
	(void)what;
	if (s->st == S_RESETTING) {
		reset_flush(s);
		return;
	}
	if (s->st == S_CONNECTING) {
		ep->st.connect_failed++;
		if (ep->ops.connected)
			ep->ops.connected(ep->arg, s, s->ctx, ETIMEDOUT);
		sock_free(s);
		return;
	}
	/* an AbortConn or DREQ that was never answered */
	sock_free(s);
}

static void arm_timer(struct sdp_sock *s, unsigned int ms)
{
	struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };

	if (!s->tmo_ev)
		s->tmo_ev = evtimer_new(s->ep->base, tmo_cb, s);
	if (s->tmo_ev)
		evtimer_add(s->tmo_ev, &tv);
}

/* Reset: the fd closed hard, AbortConn to the peer, then the DREQ. */
static void sock_abort(struct sdp_sock *s)
{
	fd_close(s, ECONNRESET);
	if (s->st == S_ABORTING || s->st == S_CLOSING)
		return;
	if (s->st == S_UP && !s->c.abort_rcvd &&
	    tx_ctl(s, SDP_MID_ABORT, WR_ABORT) == 0) {
		s->ep->st.aborts_tx++;
		s->st = S_ABORTING;
		arm_timer(s, ABORT_LINGER_MS);
		return;
	}
	s->st = S_CLOSING;
	if (!s->dreq_sent) {
		s->dreq_sent = 1;
		fab_cm_disconnect(s->id, NULL, 0);
	}
	arm_timer(s, ABORT_LINGER_MS * 4);
}

/*
 * The peer reset (its AbortConn, or its DREQ without DisConn) while what
 * it sent before is not all at the fd's reader yet: the RC side is over
 * (the caller sent our DREQ; nothing more is read from the fd, no buffer
 * reposted), what we hold still goes to the fd, and only then is the fd
 * closed with err, as now (reset_finish).  A program's stream is shut
 * for reading at once and ops->reset told now: its writes fail (EPIPE,
 * which its preload asks about), none waits on us; it is held while the
 * program keeps its end, as TCP keeps a reset socket's receive queue,
 * and the program's close ends it (our send's EPIPE).  A TCP fd (the
 * gateway's LAN side) waits for its send queue as well, bounded
 * (RESET_STALL_MS, RESET_MAX_MS).  Nothing is freed here: the caller
 * may be in qp_take; reset_flush runs from the timer.
 */
static void reset_begin(struct sdp_sock *s, int err)
{
	uint64_t now = now_ms();

	s->st = S_RESETTING;
	s->rst_err = err;
	set_rd(s, 0);
	hup_unwatch(s);
	if (!s->fd_tcp) {
		shutdown(s->fd, SHUT_RD);
		if (s->owns_fd && s->ep->ops.reset) {
			s->reset_told = 1;
			s->ep->ops.reset(s->ep->arg, s, s->ctx, s->fd, err);
		}
	}
	sent_tell(s, err);
	s->rst_left = held_bytes(s);
	s->rst_stall = now + RESET_STALL_MS;
	s->rst_end = now + RESET_MAX_MS;
	arm_timer(s, 0);
}

/* The reset's end: the fd closed with its errno, the connection gone. */
static void reset_finish(struct sdp_sock *s)
{
	fd_close(s, s->rst_err);
	sock_free(s);
}

/* S_RESETTING: more to the fd; the end once it has all gone, the fd
 * failed (the program closed it, the LAN peer reset), or a TCP fd's
 * reader stalled. */
static void reset_flush(struct sdp_sock *s)
{
	uint64_t now, left;

	if (s->pend_n && !s->fd_closed)
		rx_to_fd(s);
	left = held_bytes(s);
	if (!left) {
		reset_finish(s);
		return;
	}
	if (!s->fd_tcp)
		return;		/* wr_ev: as the program reads, or closes */
	now = now_ms();
	if (left < s->rst_left) {
		s->rst_left = left;
		s->rst_stall = now + RESET_STALL_MS;
	}
	if (now >= s->rst_stall || now >= s->rst_end) {
		reset_finish(s);
		return;
	}
	arm_timer(s, RESET_POLL_MS);
}

/* Everything that may move after any event. */
static void sock_kick(struct sdp_sock *s)
{
	if (s->st != S_UP)
		return;
	if (s->pend_n)
		rx_to_fd(s);
	if (s->st != S_UP)
		return;
	if (s->shut_pending && !s->shut_done && !s->pend_n && !s->fd_closed) {
		shutdown(s->fd, SHUT_WR);
		s->shut_done = 1;
	}
	tx_from_fd(s);
	if (s->st != S_UP)
		return;
	if (s->chrcvbuf && tx_ctl(s, SDP_MID_CHRCVBUF_ACK, WR_TX) == 0)
		s->chrcvbuf = 0;
	if (s->fd_eof && !s->c.fin_sent &&
	    tx_ctl(s, SDP_MID_DISCONN, WR_TX) == 0)
		s->ep->st.disconn_tx++;
	if (sdp_conn_want_update(&s->c) && tx_ctl(s, SDP_MID_DATA, WR_TX) == 0)
		s->ep->st.credit_updates_tx++;
	/* the fd is read only while a message could take what it has */
	set_rd(s, !s->fd_eof && !s->fd_closed && tx_slot_free(s) &&
	       sdp_conn_tx_room(&s->c) > 0);
	sent_check(s);
	if (sdp_conn_closed(&s->c) && !s->tx_inflight && !s->pend_n) {
		/* both FINs have passed: done */
		fd_close(s, 0);
		s->st = S_CLOSING;
		s->dreq_sent = 1;
		fab_cm_disconnect(s->id, NULL, 0);
		arm_timer(s, ABORT_LINGER_MS * 4);
	}
}

/* The queue pair failed (err: what the program's socket reports): the
 * fd goes with err, the connection with a DREQ. */
static void qp_fail(struct sdp_sock *s, int err)
{
	fd_close(s, err);
	if (s->st != S_CLOSING) {
		s->st = S_CLOSING;
		s->dreq_sent = 1;
		fab_cm_disconnect(s->id, NULL, 0);
		arm_timer(s, ABORT_LINGER_MS * 4);
	}
}

/* Take up to budget batches of completions; -1 when more are left. */
static int qp_take(struct sdp_sock *s, int budget)
{
	struct fab_wc wc[32];
	int i, n;

	while (budget-- > 0) {
		n = fab_qp_poll(s->qp, wc, 32);
		if (n <= 0)
			break;
		for (i = 0; i < n; i++) {
			if (wc[i].status != FAB_WC_SUCCESS) {
				if (!wc[i].recv &&
				    (wc[i].wr_id & WR_KEEPALIVE)) {
					s->ka_out = 0;
					if (wc[i].status !=
					    FAB_WC_WR_FLUSH_ERR)
						s->ep->st.keepalive_dead++;
				}
				if (s->st == S_RESETTING)
					continue;	/* over already */
				if (wc[i].status != FAB_WC_WR_FLUSH_ERR ||
				    (s->st == S_UP && !s->peer_gone)) {
					if (s->st == S_UP || s->st ==
					    S_ACCEPTING)
						s->ep->st.qp_errors++;
					/* no ACK: TCP's retransmission or
					 * keepalive timeout */
					qp_fail(s, wc[i].status ==
						FAB_WC_RETRY_EXC_ERR ||
						wc[i].status ==
						FAB_WC_RNR_RETRY_EXC_ERR ?
						ETIMEDOUT : ECONNRESET);
				}
				continue;
			}
			s->alive_ms = now_ms();
			if (!wc[i].recv)
				s->sent_ms = s->alive_ms;
			if (!wc[i].recv && (wc[i].wr_id & WR_KEEPALIVE)) {
				s->ka_out = 0;
				continue;
			}
			if (wc[i].recv) {
				if (s->st == S_UP || s->st == S_ACCEPTING)
					on_recv(s, (uint32_t)wc[i].wr_id,
						wc[i].byte_len);
				continue;
			}
			if (s->tx_inflight)
				s->tx_inflight--;
			if (wc[i].wr_id & WR_ABORT) {
				s->st = S_CLOSING;
				s->dreq_sent = 1;
				fab_cm_disconnect(s->id, NULL, 0);
				arm_timer(s, ABORT_LINGER_MS * 4);
			}
		}
		if (n < 32)
			break;
	}
	return budget < 0 ? -1 : 0;
}

static void qp_cb(evutil_socket_t fd, short what, void *arg)
{
	struct sdp_sock *s = arg;

	(void)fd;
	(void)what;
	if (qp_take(s, 8) < 0)
		event_active(s->qp_ev, EV_READ, 0);
	sock_kick(s);
}

/* Draining: the rest to the fd, then its orderly end. */
static void drain(struct sdp_sock *s)
{
	rx_to_fd(s);
	if (s->st != S_DRAINING || s->pend_n)
		return;
	if (!s->fd_closed)
		shutdown(s->fd, SHUT_WR);
	fd_close(s, 0);
	sock_free(s);
}

static void rd_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	sock_kick(arg);
}

static void wr_cb(evutil_socket_t fd, short what, void *arg)
{
	struct sdp_sock *s = arg;

	(void)fd;
	(void)what;
	if (s->st == S_DRAINING) {
		drain(s);
		return;
	}
	if (s->st == S_RESETTING) {
		reset_flush(s);
		return;
	}
	rx_to_fd(s);
	sock_kick(s);
}

/* ---- keepalive ------------------------------------------------------------ */

/* A zero-length RDMA WRITE: nothing lands at the peer, but its RC layer
 * must acknowledge it, and one that cannot fails the QP. */
static void ka_probe(struct sdp_sock *s)
{
	struct fab_rc_wr wr;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = WR_KEEPALIVE;
	wr.opcode = FAB_WR_RDMA_WRITE;
	wr.flags = FAB_SEND_SIGNALED;
	if (fab_qp_post_send(s->qp, &wr, 1) == 1) {
		if (!s->tx_inflight)
			s->busy_ms = now_ms();
		s->ka_out = 1;
		s->ep->st.keepalive_probes++;
	}
}

/* How long s may stay idle before a probe (0: never): the endpoint's
 * time, or its program's (SO_KEEPALIVE, TCP_KEEPIDLE) when shorter. */
static uint64_t ka_idle(const struct sdp_sock *s)
{
	uint64_t ep_ms = s->ep->cfg.keepalive_ms > 0 ?
			 (uint64_t)s->ep->cfg.keepalive_ms : 0;

	if (s->ka_ms && (!ep_ms || s->ka_ms < ep_ms))
		return s->ka_ms;
	return ep_ms;
}

/* Sends (or a probe) posted and none completed, neither with success
 * nor with an error, for the stall time since the first of them or the
 * last send completed (receives may go on: the peer still sends). */
static int stalled(const struct sdp_sock *s, uint64_t now)
{
	uint64_t since = s->sent_ms > s->busy_ms ? s->sent_ms : s->busy_ms;

	return (s->tx_inflight || s->ka_out) &&
	       now - since >= s->ep->cfg.stall_ms;
}

static void ka_cb(evutil_socket_t fd, short what, void *arg)
{
	struct sdp_ep *ep = arg;
	uint64_t now = now_ms(), idle;
	struct sdp_sock *s;

	(void)fd;
	(void)what;
	for (s = ep->socks; s; s = s->next) {
		if (s->st != S_UP)
			continue;
		if (stalled(s, now)) {
			ep->st.stalls++;
			qp_fail(s, ETIMEDOUT);
			continue;
		}
		if (s->ka_out)
			continue;
		idle = ka_idle(s);
		if (idle && now - s->alive_ms >= idle)
			ka_probe(s);
	}
}

/* The sweep, every quarter of idle_ms (0.1 to 5 s) or more often if it
 * already is; -1 when it cannot be made. */
static int ka_arm(struct sdp_ep *ep, uint64_t idle_ms)
{
	uint64_t q = idle_ms / 4;
	unsigned int per = q < 100 ? 100 : q > 5000 ? 5000 : (unsigned int)q;
	struct timeval tv = { per / 1000, (per % 1000) * 1000 };

	if (ep->ka_per && ep->ka_per <= per)
		return 0;
	if (!ep->ka_ev)
		ep->ka_ev = event_new(ep->base, -1, EV_PERSIST, ka_cb, ep);
	if (!ep->ka_ev)
		return -1;
	ep->ka_per = per;
	event_add(ep->ka_ev, &tv);
	return 0;
}

void sdp_sock_keepalive(struct sdp_sock *s, uint32_t idle_ms)
{
	s->ka_ms = idle_ms;
	if (idle_ms && ka_arm(s->ep, idle_ms) < 0)
		s->ka_ms = 0;
}

/* Splice the connection to its fd: it is up. */
static int sock_start(struct sdp_sock *s)
{
	int fl, dom = 0;
	socklen_t sl = sizeof(dom);

	fl = fcntl(s->fd, F_GETFL);
	if (fl >= 0 && !(fl & O_NONBLOCK))
		fcntl(s->fd, F_SETFL, fl | O_NONBLOCK);
	if (getsockopt(s->fd, SOL_SOCKET, SO_DOMAIN, &dom, &sl) == 0)
		s->fd_tcp = dom == AF_INET || dom == AF_INET6;
	s->rd_ev = event_new(s->ep->base, s->fd, EV_READ | EV_PERSIST, rd_cb,
			     s);
	s->wr_ev = event_new(s->ep->base, s->fd, EV_WRITE | EV_PERSIST, wr_cb,
			     s);
	if (!s->rd_ev || !s->wr_ev)
		return -1;
	s->st = S_UP;
	s->alive_ms = now_ms();
	if (s->tmo_ev)
		evtimer_del(s->tmo_ev);
	if (s->abort_close)
		hup_watch(s);
	sock_kick(s);
	return 0;
}

/* ---- set-up ---------------------------------------------------------------- */

static struct sdp_sock *sock_new(struct sdp_ep *ep, struct fab_cm_id *id,
				 int fd, void *ctx, char *err, size_t errlen)
{
	const struct sdp_ep_cfg *cfg = &ep->cfg;
	struct fab_qp_init qi = {
		.type = FAB_QPT_RC, .pkey_index = cfg->pkey_index,
		.max_send = cfg->tx_bufs + 1,	/* + a keepalive probe */
		.max_recv = cfg->rx_bufs,
	};
	size_t memlen = (size_t)(cfg->rx_bufs + cfg->tx_bufs) * cfg->buf_size;
	struct sdp_sock *s;
	uint32_t i;

	s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	s->ep = ep;
	s->id = id;
	s->fd = fd;
	s->hup_fd = -1;
	s->ctx = ctx;
	if (ep->nspare) {
		ep->nspare--;
		s->mem = ep->spare[ep->nspare].mem;
		s->mr = ep->spare[ep->nspare].mr;
	} else {
		s->mem = malloc(memlen);
	}
	s->pend = calloc(cfg->rx_bufs, sizeof(*s->pend));
	s->rx_off = calloc(cfg->rx_bufs, sizeof(*s->rx_off));
	s->rx_len = calloc(cfg->rx_bufs, sizeof(*s->rx_len));
	s->next = ep->socks;
	ep->socks = s;
	ep->st.conns_now++;
	if (!s->mem || !s->pend || !s->rx_off || !s->rx_len) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	if (!s->mr)
		s->mr = fab_mr_reg(ep->dev, s->mem, memlen,
				   FAB_ACCESS_LOCAL_WRITE, err, errlen);
	if (!s->mr)
		goto fail;
	s->qp = fab_cm_qp_create(id, &qi, err, errlen);
	if (!s->qp)
		goto fail;
	s->qp_ev = event_new(ep->base, fab_qp_fd(s->qp), EV_READ | EV_PERSIST,
			     qp_cb, s);
	if (!s->qp_ev) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	event_add(s->qp_ev, NULL);
	for (i = 0; i < cfg->rx_bufs; i++) {
		if (post_recv(s, i) < 0) {
			snprintf(err, errlen, "posting receives: %s",
				 strerror(errno));
			goto fail;
		}
	}
	fab_cm_set_context(id, s);
	return s;
fail:
	s->id = NULL;		/* the caller's to destroy or reject */
	sock_free(s);		/* not owning the fd: it stays the caller's */
	return NULL;
}

struct sdp_sock *sdp_ep_connect(struct sdp_ep *ep,
				const struct sdp_sock_info *info, int fd,
				void *ctx, char *err, size_t errlen)
{
	int cm = ep->cfg.profile == SDP_PROFILE_RDMA_CM;
	uint8_t pd[SDP_HELLO_LEN];
	struct fab_cm_param cp = { .private_data = pd,
				   .private_data_len = cm ? SDP_HELLO_CM_LEN :
						       SDP_HELLO_LEN,
				   .retry_count = 7, .rnr_retry_count = 7 };
	struct fab_cm_addr dst;
	struct sdp_hello h;
	struct fab_cm_id *id;
	struct sdp_sock *s;

	if (ep->st.conns_now >= ep->cfg.max_conns) {
		snprintf(err, errlen, "too many SDP connections (%u)",
			 ep->cfg.max_conns);
		errno = ENOBUFS;
		return NULL;
	}
	id = fab_cm_create_id(ep->dev, NULL, err, errlen);
	if (!id)
		return NULL;
	s = sock_new(ep, id, fd, ctx, err, errlen);
	if (!s) {
		fab_cm_destroy(id);
		return NULL;
	}
	s->info = *info;
	s->st = S_CONNECTING;
	memset(&h, 0, sizeof(h));
	h.bsdh.bufs = (uint16_t)ep->cfg.rx_bufs;
	h.majv_minv = SDP_MAJV_MINV;
	h.ipv = info->local.family == AF_INET6 ? 6 : 4;
	h.max_adverts = 1;
	h.desremrcvsz = ep->cfg.buf_size;
	h.localrcvsz = ep->cfg.buf_size;
	h.port = info->lport;
	h.src = info->local;
	h.dst = info->remote;
	if ((cm ? sdp_hello_build_cm(pd, sizeof(pd), &h) :
		  sdp_hello_build(pd, sizeof(pd), &h)) < 0) {
		snprintf(err, errlen, "Hello: addresses of mixed families");
		errno = EINVAL;
		goto fail;
	}
	memset(&dst, 0, sizeof(dst));
	dst.gid = info->peer_gid;
	dst.service_id = cm ? FAB_CM_SID_TCP(info->rport) :
			 SDP_SID(info->rport);
	if (fab_cm_connect(id, &dst, &cp, err, errlen) < 0)
		goto fail;
	if (ep->cfg.connect_timeout_ms)
		arm_timer(s, ep->cfg.connect_timeout_ms);
	ep->st.conns_active++;
	return s;
fail:
	{
		int e = errno;

		sock_free(s);	/* state CONNECTING: the fd is left alone */
		errno = e;
	}
	return NULL;
}

void sdp_sock_cancel(struct sdp_sock *s)
{
	if (s->st == S_CONNECTING)
		sock_free(s);
}

/* A GID as rdma_cm's IP address: ::ffff:a.b.c.d is IPv4. */
static void gid_to_ip(const union fab_gid *g, struct inet_addr *a)
{
	static const uint8_t v4[12] = { [10] = 0xff, [11] = 0xff };

	memset(a, 0, sizeof(*a));
	if (!memcmp(g->raw, v4, sizeof(v4))) {
		a->family = AF_INET;
		memcpy(a->raw, g->raw + 12, 4);
	} else {
		a->family = AF_INET6;
		memcpy(a->raw, g->raw, 16);
	}
}

/* The rdma_cm profile's Hello, and the connection's names from the CM:
 * destination the listener's address and port, source the REQ's peer,
 * the source port the Hello's. */
static int cm_hello(struct sdp_ep *ep, const struct fab_cm_event *ev,
		    struct sdp_hello *h, struct sdp_sock_info *info)
{
	unsigned int i;

	if (sdp_hello_parse_cm(ev->private_data, ev->private_data_len, h) < 0)
		return -1;
	memset(info, 0, sizeof(*info));
	info->local = ep->own;
	gid_to_ip(&ev->peer.gid, &info->remote);
	if (info->remote.family != info->local.family)
		return -1;
	for (i = 0; i < ep->nls; i++)
		if (ev->listen_id && ep->ls[i].id == ev->listen_id)
			info->lport = ep->ls[i].port;
	return info->lport ? 0 : -1;
}

/* The REP with our HelloAck: the REQ's connection is taken. */
static void accept_answer(struct sdp_sock *s)
{
	struct sdp_ep *ep = s->ep;
	uint8_t pd[SDP_HELLO_ACK_LEN];
	struct fab_cm_param cp = { .private_data = pd,
				   .private_data_len = SDP_HELLO_ACK_LEN,
				   .retry_count = 7, .rnr_retry_count = 7 };
	struct sdp_hello_ack ha;
	char err[128];

	memset(&ha, 0, sizeof(ha));
	ha.bsdh.bufs = (uint16_t)ep->cfg.rx_bufs;
	ha.majv_minv = SDP_MAJV_MINV;
	ha.ipv = s->hello_ipv;
	ha.actrcvsz = ep->cfg.buf_size;
	if (sdp_hello_ack_build(pd, sizeof(pd), &ha) < 0 ||
	    fab_cm_accept(s->id, &cp, err, sizeof(err)) < 0) {
		sock_free(s);	/* closes the fd, destroys the id */
		ep->st.rejected++;
		return;
	}
	s->st = S_ACCEPTING;
	ep->st.conns_passive++;
	arm_timer(s, 10000);	/* no RTU: give up */
}

/* The fd of a waiting accept connected, failed, or took too long. */
static void wait_cb(evutil_socket_t fd, short what, void *arg)
{
	struct sdp_sock *s = arg;
	struct sdp_ep *ep = s->ep;
	uint8_t pd[SDP_REJ_LEN];
	socklen_t sl = sizeof(int);
	int e = 0;

	event_free(s->wait_ev);
	s->wait_ev = NULL;
	if (what & EV_TIMEOUT)
		e = ETIMEDOUT;
	else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &sl) < 0)
		e = errno;
	if (ep->ops.accepted)
		ep->ops.accepted(ep->arg, s->ctx, e);
	if (!e) {
		accept_answer(s);
		return;
	}
	/* the fd is the caller's no more: closed, then told */
	close(s->fd);
	s->fd = -1;
	s->fd_closed = 1;
	s->owns_fd = 0;
	if (ep->ops.closed)
		ep->ops.closed(ep->arg, NULL, s->ctx);
	ep->st.rejected++;
	if (sdp_rej_build(pd, sizeof(pd), e) > 0)
		fab_cm_reject(s->id, pd, sizeof(pd), NULL, 0);
	sock_free(s);	/* destroys the id */
}

/*
 * The peer gave up on a REQ we hold while its fd connects (its REJ: its
 * program's deadline, its CM's retries run out; our CM's timeout): no
 * REP can go, so the fd's connect is cancelled, closed with a reset in
 * case it completed meanwhile, before the LAN server sees a connection
 * nobody will use.  accepted() hears ECANCELED.
 */
static void wait_abandon(struct sdp_sock *s)
{
	struct sdp_ep *ep = s->ep;
	struct linger lg = { 1, 0 };

	if (ep->ops.accepted)
		ep->ops.accepted(ep->arg, s->ctx, ECANCELED);
	if (s->fd >= 0 && !s->fd_closed)
		setsockopt(s->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	sock_free(s);	/* closes the fd, then closed() */
}

/* A REQ on one of our listeners. */
static void on_request(struct sdp_ep *ep, const struct fab_cm_event *ev)
{
	struct sdp_sock_info info;
	uint8_t pd[SDP_REJ_LEN];
	struct sdp_hello h;
	struct sdp_sock *s;
	void *ctx = NULL;
	char err[128];
	int fd, connecting = 0, e = 0;

	if (ep->cfg.profile == SDP_PROFILE_RDMA_CM) {
		if (cm_hello(ep, ev, &h, &info) < 0) {
			ep->st.bad_hello++;
			goto refuse;
		}
	} else if (sdp_hello_parse(ev->private_data, ev->private_data_len,
				   &h) < 0) {
		ep->st.bad_hello++;
		goto refuse;
	}
	if (ep->st.conns_now >= ep->cfg.max_conns)
		goto refuse;
	if (ep->cfg.profile != SDP_PROFILE_RDMA_CM) {
		memset(&info, 0, sizeof(info));
		info.local = h.dst;
		info.remote = h.src;
		info.lport = (uint16_t)(ev->peer.service_id & 0xffff);
	}
	info.rport = h.port;
	info.peer_gid = ev->peer.gid;
	info.peer_qpn = ev->peer_qpn;
	fd = ep->ops.accept(ep->arg, &info, &ctx, &connecting);
	if (fd < 0) {
		/* its reason, as a connect that fails later (wait_cb)
		 * names it: a TCP connect that failed at once
		 * (ENETUNREACH, EPERM) fails the peer's so too */
		e = errno;
		goto refuse;
	}
	s = sock_new(ep, ev->id, fd, ctx, err, sizeof(err));
	if (!s) {
		close(fd);
		if (ep->ops.closed)	/* what accept made for it */
			ep->ops.closed(ep->arg, NULL, ctx);
		goto refuse;
	}
	s->passive = 1;
	s->owns_fd = 1;
	s->info = info;
	s->hello_ipv = h.ipv;
	s->tx_size = h.localrcvsz < ep->cfg.buf_size ? h.localrcvsz :
		     ep->cfg.buf_size;
	sdp_conn_init(&s->c, ep->cfg.buf_size, s->tx_size, ep->cfg.rx_bufs,
		      h.bsdh.bufs);
	if (connecting) {
		unsigned int ms = ep->cfg.accept_wait_ms;
		struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };

		s->st = S_WAITING;
		s->wait_ev = event_new(ep->base, fd, EV_WRITE, wait_cb, s);
		if (s->wait_ev && event_add(s->wait_ev, &tv) == 0)
			return;
	}
	accept_answer(s);
	return;
refuse:
	ep->st.rejected++;
	if (e && sdp_rej_build(pd, sizeof(pd), e) > 0)
		fab_cm_reject(ev->id, pd, sizeof(pd), NULL, 0);
	else
		fab_cm_reject(ev->id, NULL, 0, NULL, 0);
	fab_cm_destroy(ev->id);
}

static void on_established(struct sdp_ep *ep, struct sdp_sock *s,
			   const struct fab_cm_event *ev)
{
	struct sdp_hello_ack ha;

	if (s->st == S_ACCEPTING) {
		if (sock_start(s) < 0)
			sock_abort(s);
		return;
	}
	if (s->st != S_CONNECTING)
		return;
	if (sdp_hello_ack_parse(ev->private_data, ev->private_data_len,
				&ha) < 0) {
		ep->st.bad_hello++;
		ep->st.connect_failed++;
		if (ep->ops.connected)
			ep->ops.connected(ep->arg, s, s->ctx, ECONNABORTED);
		sock_free(s);
		return;
	}
	s->tx_size = ha.actrcvsz < ep->cfg.buf_size ? ha.actrcvsz :
		     ep->cfg.buf_size;
	sdp_conn_init(&s->c, ep->cfg.buf_size, s->tx_size, ep->cfg.rx_bufs,
		      ha.bsdh.bufs);
	s->owns_fd = 1;
	if (ep->ops.connected)
		ep->ops.connected(ep->arg, s, s->ctx, 0);
	if (sock_start(s) < 0)
		sock_abort(s);
}

static int fail_errno(const struct fab_cm_event *ev)
{
	switch (ev->type) {
	case FAB_CM_EV_REJECTED: {
		int e;

		if (ev->status == FAB_CM_REJ_TIMEOUT)
			return ETIMEDOUT;
		/* a gateway's reason: its TCP connect's failure */
		e = ev->status == FAB_CM_REJ_CONSUMER_DEFINED ?
		    sdp_rej_parse(ev->private_data, ev->private_data_len) :
		    -1;
		return e > 0 ? e : ECONNREFUSED;
	}
	case FAB_CM_EV_UNREACHABLE:
		return ev->status ? ev->status : EHOSTUNREACH;
	default:
		return ev->status ? ev->status : ECONNABORTED;
	}
}

static void cm_cb(evutil_socket_t fd, short what, void *arg)
{
	struct sdp_ep *ep = arg;
	struct fab_cm_event ev;
	struct sdp_sock *s;
	int n = 0;

	(void)fd;
	(void)what;
	while (n++ < 64 && fab_cm_get_event(ep->dev, &ev) == 1) {
		if (ev.type == FAB_CM_EV_CONNECT_REQUEST) {
			on_request(ep, &ev);
			continue;
		}
		s = fab_cm_context(ev.id);
		if (!s)
			continue;
		switch (ev.type) {
		case FAB_CM_EV_ESTABLISHED:
			on_established(ep, s, &ev);
			break;
		case FAB_CM_EV_REJECTED:
		case FAB_CM_EV_UNREACHABLE:
		case FAB_CM_EV_CONNECT_ERROR:
			s->rejected = ev.type == FAB_CM_EV_REJECTED;
			if (s->st == S_WAITING) {
				wait_abandon(s);
				break;
			}
			if (s->st == S_CONNECTING) {
				ep->st.connect_failed++;
				if (ep->ops.connected)
					ep->ops.connected(ep->arg, s, s->ctx,
							  fail_errno(&ev));
			}
			sock_free(s);
			break;
		case FAB_CM_EV_DISCONNECTED:
		case FAB_CM_EV_DEVICE_REMOVAL:
			if (s->st == S_WAITING) {
				wait_abandon(s);
				break;
			}
			if (s->st == S_CONNECTING) {
				ep->st.connect_failed++;
				if (ep->ops.connected)
					ep->ops.connected(ep->arg, s, s->ctx,
							  ECONNRESET);
				sock_free(s);
				break;
			}
			if (s->st == S_RESETTING) {
				s->peer_gone = 1;	/* reset_flush ends it */
				break;
			}
			if (s->st == S_UP || s->st == S_ACCEPTING) {
				/* what it sent before its DREQ may still
				 * wait in our completion queue (then the
				 * flushes of our receives) */
				s->peer_gone = 1;
				while (qp_take(s, 64) < 0)
					;
				if (s->st == S_RESETTING)
					break;	/* its AbortConn came */
				if (s->c.fin_rcvd && !s->c.error &&
				    s->st == S_UP) {
					/* an orderly close: deliver it */
					s->st = S_DRAINING;
					s->dreq_sent = 1;
					arm_timer(s, 30000);
					drain(s);
					break;
				}
				/* gone without its DisConn: a reset, what
				 * it sent before still delivered */
				ep->st.peer_resets++;
				if (s->st == S_UP && held_bytes(s)) {
					s->dreq_sent = 1;
					reset_begin(s, ECONNRESET);
					break;
				}
				rx_to_fd(s);
				fd_close(s, ECONNRESET);
			}
			sock_free(s);
			break;
		default:
			break;
		}
	}
	if (n > 64)
		event_active(ep->cm_ev, EV_READ, 0);
}

/* ---- the endpoint ---------------------------------------------------------- */

struct sdp_ep *sdp_ep_new(struct event_base *base, struct fab_dev *dev,
			  const struct sdp_ep_cfg *cfg,
			  const struct sdp_ep_ops *ops, void *arg, char *err,
			  size_t errlen)
{
	struct sdp_ep *ep;
	int fd;

	fd = fab_cm_fd(dev);
	if (fd < 0) {
		snprintf(err, errlen, "SDP: no connection manager: %s",
			 strerror(errno));
		return NULL;
	}
	ep = calloc(1, sizeof(*ep));
	if (!ep) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	ep->base = base;
	ep->dev = dev;
	ep->cfg = *cfg;
	if (!ep->cfg.buf_size)
		ep->cfg.buf_size = DEF_BUF;
	if (ep->cfg.buf_size < SDP_BSDH_LEN + 64)
		ep->cfg.buf_size = SDP_BSDH_LEN + 64;
	if (!ep->cfg.rx_bufs)
		ep->cfg.rx_bufs = DEF_RX;
	if (!ep->cfg.tx_bufs)
		ep->cfg.tx_bufs = DEF_TX;
	if (!ep->cfg.max_conns)
		ep->cfg.max_conns = DEF_CONNS;
	if (!ep->cfg.keepalive_ms)
		ep->cfg.keepalive_ms = DEF_KEEPALIVE_MS;
	if (!ep->cfg.stall_ms)
		ep->cfg.stall_ms = DEF_STALL_MS;
	if (!ep->cfg.accept_wait_ms)
		ep->cfg.accept_wait_ms = DEF_ACCEPT_WAIT_MS;
	if (ep->cfg.profile == SDP_PROFILE_RDMA_CM) {
		struct fab_port_attr pa;

		if (fab_query_port(dev, &pa, err, errlen) < 0) {
			free(ep);
			return NULL;
		}
		gid_to_ip(&pa.sgid, &ep->own);
	}
	ep->ops = *ops;
	ep->arg = arg;
	ep->cm_ev = event_new(base, fd, EV_READ | EV_PERSIST, cm_cb, ep);
	if (!ep->cm_ev) {
		free(ep);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	event_add(ep->cm_ev, NULL);
	/* the sweep looks for stalls with or without keepalive */
	if (ka_arm(ep, ep->cfg.keepalive_ms > 0 &&
		   (unsigned int)ep->cfg.keepalive_ms < ep->cfg.stall_ms ?
		   (uint64_t)ep->cfg.keepalive_ms : ep->cfg.stall_ms) < 0) {
		event_free(ep->cm_ev);
		free(ep);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	return ep;
}

void sdp_ep_free(struct sdp_ep *ep)
{
	unsigned int i;

	if (!ep)
		return;
	while (ep->socks) {
		struct sdp_sock *s = ep->socks;

		if (s->st == S_CONNECTING && ep->ops.connected)
			ep->ops.connected(ep->arg, s, s->ctx, ECONNABORTED);
		sock_free(s);
	}
	for (i = 0; i < ep->nls; i++)
		fab_cm_destroy(ep->ls[i].id);
	while (ep->nspare) {
		ep->nspare--;
		fab_mr_dereg(ep->spare[ep->nspare].mr);
		free(ep->spare[ep->nspare].mem);
	}
	event_free(ep->cm_ev);
	if (ep->ka_ev)
		event_free(ep->ka_ev);
	free(ep);
}

int sdp_ep_listen(struct sdp_ep *ep, uint16_t port, char *err,
		  size_t errlen)
{
	struct fab_cm_addr a;
	struct listener *l;
	unsigned int i;

	for (i = 0; i < ep->nls; i++) {
		if (ep->ls[i].port == port) {
			ep->ls[i].refs++;
			return 0;
		}
	}
	if (ep->nls >= MAX_LISTEN) {
		snprintf(err, errlen, "too many SDP ports listened on (%d)",
			 MAX_LISTEN);
		errno = ENOBUFS;
		return -1;
	}
	if (ep->cfg.profile == SDP_PROFILE_RDMA_CM && !port) {
		snprintf(err, errlen, "SDP over rdma_cm listens on one port, "
			 "not on all of them");
		errno = EOPNOTSUPP;
		return -1;
	}
	memset(&a, 0, sizeof(a));
	if (ep->cfg.profile == SDP_PROFILE_RDMA_CM) {
		a.service_id = FAB_CM_SID_TCP(port);
		a.service_mask = FAB_CM_SID_EXACT;
	} else {
		a.service_id = port ? SDP_SID(port) : SDP_SID_BASE;
		a.service_mask = port ? FAB_CM_SID_EXACT : SDP_SID_MASK_PORT;
	}
	a.pkey = ep->cfg.listen_pkey;
	l = &ep->ls[ep->nls];
	l->id = fab_cm_listen(ep->dev, &a, CM_BACKLOG, NULL, err, errlen);
	if (!l->id)
		return -1;
	l->port = port;
	l->refs = 1;
	ep->nls++;
	return 0;
}

void sdp_ep_unlisten(struct sdp_ep *ep, uint16_t port)
{
	unsigned int i;

	for (i = 0; i < ep->nls; i++) {
		if (ep->ls[i].port != port)
			continue;
		if (--ep->ls[i].refs)
			return;
		fab_cm_destroy(ep->ls[i].id);
		ep->ls[i] = ep->ls[--ep->nls];
		return;
	}
}

int sdp_sock_rejected(const struct sdp_sock *s)
{
	return s->rejected;
}

const struct sdp_sock_info *sdp_sock_info(const struct sdp_sock *s)
{
	return &s->info;
}

const struct sdp_ep_stats *sdp_ep_stats(const struct sdp_ep *ep)
{
	return &ep->st;
}

static const char *state_name(enum sock_state st)
{
	switch (st) {
	case S_CONNECTING: return "connecting";
	case S_WAITING: return "waiting";
	case S_ACCEPTING: return "accepting";
	case S_UP: return "up";
	case S_CLOSING: return "closing";
	case S_ABORTING: return "aborting";
	case S_DRAINING: return "draining";
	case S_RESETTING: return "resetting";
	}
	return "?";
}

size_t sdp_ep_report(const struct sdp_ep *ep, char *buf, size_t cap)
{
	const struct sdp_sock *s;
	char la[INET6_ADDRSTRLEN], ra[INET6_ADDRSTRLEN];
	size_t off = 0;
	int n;

	for (s = ep->socks; s && off < cap; s = s->next) {
		inet_ntop(s->info.local.family ? s->info.local.family :
			  AF_INET, s->info.local.raw, la, sizeof(la));
		inet_ntop(s->info.remote.family ? s->info.remote.family :
			  AF_INET, s->info.remote.raw, ra, sizeof(ra));
		n = snprintf(buf + off, cap - off,
			     "sdp %s %s:%u %s:%u %s credits %d posted %u "
			     "inflight %u pending %u tx %llu rx %llu\n",
			     s->passive ? "passive" : "active", la,
			     s->info.lport, ra, s->info.rport,
			     state_name(s->st), s->c.tx_credits,
			     s->c.rx_posted, s->tx_inflight, s->pend_n,
			     (unsigned long long)s->c.tx_bytes,
			     (unsigned long long)s->c.rx_bytes);
		if (n < 0)
			break;
		off += (size_t)n < cap - off ? (size_t)n : cap - off;
	}
	return off;
}

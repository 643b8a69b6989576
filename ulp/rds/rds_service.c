// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The host's RDS service (rds_service.h): the control socket, the
 * programs' sockets and their bindings, and the datagrams between the
 * socket pairs and the endpoint.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <event2/event.h>

#include "ulp/rds/rds_ctl.h"
#include "ulp/rds/rds_service.h"

#define MAX_REQS	256
#define MAX_SOCKS	4096
#define HASH_SIZE	256
#define READS_PER_WAKE	32	/* messages taken from one end at a time */
/*
 * Datagrams up to RX_BATCH_MAX bytes from the endpoint wait for the end of
 * its receive batch and go to each program's end together, up to
 * RX_BATCH_MSGS per sendmmsg.  One sendmsg each woke the program at the
 * first, and the scheduler gave it the CPU before the second: a switch to
 * it and back per datagram.  In a guest under QEMU's emulation a pair
 * written one datagram at a time carried about 4,000 per second to a
 * waiting reader, 14,000 written 16 at a time.
 */
#define RX_BATCH_MAX	16384
#define RX_BATCH_MSGS	32
#define HELD_RETRY_MS	200	/* a held send tried again without news */
#define RX_HOLD_MIN	(16u << 20)	/* held for a slow reader, at least:
					 * a sender's backlog taken before
					 * the map said congested still
					 * comes (up to its send buffer) */
/* What a pair's ends can carry at once: one largest message and its
 * header, whatever the RDS buffer sizes say (those are ours to apply). */
#define PAIR_MIN_BUF	((int)RDS_MAX_MSG_SIZE + 65536)
/* The kernel's SOCK_MIN_SNDBUF / SOCK_MIN_RCVBUF on x86_64. */
#define MIN_SNDBUF	4608
#define MIN_RCVBUF	2304

struct rx_held {
	struct rx_held *next;
	struct rds_ctl_hdr h;
	size_t len;
	uint8_t data[];
};

struct rsock {
	struct rds_service *sv;
	struct rsock *next;		/* every socket */
	struct rsock *hnext;		/* the port's bucket, once bound */
	unsigned int id;
	int fd;				/* our end of the pair */
	ino_t app_ino;			/* the program's end */
	struct event *rd_ev, *wr_ev, *retry_ev;
	struct event *hup_ev;		/* while not reading: the last close */
	int reading;			/* rd_ev added */
	int bound, connected;
	int family;			/* AF_INET6 for IPv6 names */
	struct rds_name name, peer;
	uint32_t scope;			/* rs_bound_scope_id: of a link-local
					 * name bound or connected to */
	int sndbuf, rcvbuf;		/* as getsockopt says (doubled) */
	size_t unacked;			/* given to the endpoint, not acked */
	/* a message the endpoint refused with ENOBUFS */
	uint8_t *held;
	size_t held_len;
	struct rds_name held_dst;
	/* datagrams the program's end could not take yet */
	struct rx_held *rxq, **rxq_tail;
	size_t rxq_bytes;
	int rx_blocked;			/* rxq waits for the end's room */
	struct rsock *fnext;		/* on the service's flush list */
	int on_flush;
	int cong;			/* our port marked congested */
	int sent;			/* a message taken (rds_sendmsg's rs_conn) */
};

struct rds_req {
	struct rds_service *sv;
	struct rds_req *next;
	int fd;
	struct event *ev;
};

struct rds_service {
	struct event_base *base;
	struct rds_ep *ep;
	struct rds_service_ops ops;
	void *arg;
	char name[108];
	int ctl_fd;
	struct event *ctl_ev;
	struct rsock *socks;
	struct rsock *hash[HASH_SIZE];
	struct rds_req *reqs;
	unsigned int nsocks, nreqs, next_id;
	int wmem_max, rmem_max, wmem_def, rmem_def;
	int force_warned;
	uint8_t *buf;			/* one message read from a program */
	size_t buflen;
	struct event *flush_ev;		/* the receive batch's end */
	struct rsock *flush_head;	/* sockets with a batch to write */
	struct rds_board *board;	/* the peers' congestion maps */
	int board_ro;			/* ... read-only, for BOARD */
	unsigned int board_next;	/* the slot a new peer takes */
	struct rds_service_stats st;
};

const struct counter_desc rds_service_counters[] = {
	COUNTER("requests", struct rds_service_stats, requests,
		"Control requests of preloaded programs taken."),
	COUNTER("bad_requests", struct rds_service_stats, bad_requests,
		"Malformed control requests dropped or refused."),
	COUNTER("sockets_opened", struct rds_service_stats, sockets_opened,
		"RDS sockets made for programs."),
	COUNTER("sockets_closed", struct rds_service_stats, sockets_closed,
		"RDS sockets their programs closed."),
	COUNTER("binds", struct rds_service_stats, binds,
		"RDS sockets bound."),
	COUNTER("bind_failures", struct rds_service_stats, bind_failures,
		"RDS binds refused."),
	COUNTER("tx_msgs", struct rds_service_stats, tx_msgs,
		"Datagrams of programs given to the RDS endpoint."),
	COUNTER("tx_bytes", struct rds_service_stats, tx_bytes,
		"Their payload bytes."),
	COUNTER("tx_bad", struct rds_service_stats, tx_bad,
		"Malformed messages on a program's socket, dropped."),
	COUNTER("tx_errors", struct rds_service_stats, tx_errors,
		"Datagrams the RDS endpoint refused, dropped."),
	COUNTER("tx_unbound", struct rds_service_stats, tx_unbound,
		"Datagrams on unbound sockets, dropped."),
	COUNTER("tx_cong_holds", struct rds_service_stats, tx_cong_holds,
		"Datagrams held for a congested destination port."),
	COUNTER("tx_sndbuf_waits", struct rds_service_stats, tx_sndbuf_waits,
		"Times a socket's unacknowledged bytes filled its sndbuf."),
	COUNTER("rx_msgs", struct rds_service_stats, rx_msgs,
		"Datagrams written to programs."),
	COUNTER("rx_bytes", struct rds_service_stats, rx_bytes,
		"Their payload bytes."),
	COUNTER("rx_held", struct rds_service_stats, rx_held,
		"Datagrams held for a program that did not read."),
	COUNTER("rx_dropped", struct rds_service_stats, rx_dropped,
		"Datagrams dropped past the hold limit."),
	COUNTER("rx_no_socket", struct rds_service_stats, rx_no_socket,
		"Datagrams for a port nobody bound."),
	COUNTER("cong_set", struct rds_service_stats, cong_set,
		"Our ports marked congested."),
	COUNTER("cong_cleared", struct rds_service_stats, cong_cleared,
		"Our ports' congestion cleared."),
	COUNTER("cancelled", struct rds_service_stats, cancelled,
		"Datagrams dropped by RDS_CANCEL_SENT_TO."),
	COUNTERS_END
};

/* ---- addresses ----------------------------------------------------------- */

static socklen_t un_addr(const char *name, struct sockaddr_un *sa)
{
	size_t n = strlen(name);

	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (name[0] == '@') {
		memcpy(sa->sun_path + 1, name + 1, n - 1);
		return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
	}
	memcpy(sa->sun_path, name, n);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + 1);
}

static int v4_bad(in_addr_t a)
{
	uint32_t h = ntohl(a);

	return h == INADDR_ANY || h == INADDR_BROADCAST || (h >> 28) == 0xe;
}

/*
 * A program's sockaddr as the kernel's RDS takes it: 0 with *n (IPv4 and
 * IPv4-mapped IPv6 as IPv4), *family the sockaddr's; -1 with EINVAL for
 * any, broadcast, multicast or another family; EDESTADDRREQ (with
 * dest_any) for an IPv4 any.
 */
static int from_ctl(const union rds_ctl_addr *c, struct rds_name *n,
		    int *family, int dest_any)
{
	memset(n, 0, sizeof(*n));
	if (c->family == AF_INET) {
		if (dest_any && c->v4.sin_addr.s_addr == htonl(INADDR_ANY)) {
			errno = EDESTADDRREQ;
			return -1;
		}
		if (v4_bad(c->v4.sin_addr.s_addr))
			goto inval;
		inet_addr_v4(&n->addr, &c->v4.sin_addr);
		n->port = ntohs(c->v4.sin_port);
		*family = AF_INET;
		return 0;
	}
	if (c->family == AF_INET6) {
		const struct in6_addr *a = &c->v6.sin6_addr;

		*family = AF_INET6;
		n->port = ntohs(c->v6.sin6_port);
		if (IN6_IS_ADDR_V4MAPPED(a)) {
			struct in_addr v4;

			memcpy(&v4, a->s6_addr + 12, 4);
			if (v4_bad(v4.s_addr))
				goto inval;
			inet_addr_v4(&n->addr, &v4);
			return 0;
		}
		if (IN6_IS_ADDR_UNSPECIFIED(a) || IN6_IS_ADDR_MULTICAST(a))
			goto inval;
		inet_addr_v6(&n->addr, a);
		return 0;
	}
inval:
	errno = EINVAL;
	return -1;
}

/* Ours to the program's: sockaddr_in for IPv4 (what the kernel's RDS
 * gives for IPv4 names on any socket), sockaddr_in6 for IPv6 with the
 * socket's scope (the kernel gives rs_bound_scope_id in every IPv6 name:
 * its own, its peer's and each sender's). */
static void to_ctl(const struct rds_name *n, uint32_t scope,
		   union rds_ctl_addr *c)
{
	memset(c, 0, sizeof(*c));
	if (n->addr.family == AF_INET6) {
		c->v6.sin6_family = AF_INET6;
		c->v6.sin6_port = htons(n->port);
		c->v6.sin6_addr = n->addr.v6;
		c->v6.sin6_scope_id = scope;
		return;
	}
	c->v4.sin_family = AF_INET;
	c->v4.sin_port = htons(n->port);
	c->v4.sin_addr = n->addr.v4;
}

static int name_equal(const struct rds_name *a, const struct rds_name *b)
{
	return a->port == b->port && inet_addr_equal(&a->addr, &b->addr);
}

/* ---- sockets ------------------------------------------------------------- */

static struct rsock *sock_lookup(const struct rds_service *sv,
				 const struct rds_name *n)
{
	struct rsock *s;

	for (s = sv->hash[n->port % HASH_SIZE]; s; s = s->hnext)
		if (name_equal(&s->name, n))
			return s;
	return NULL;
}

static void sock_unhash(struct rsock *s)
{
	struct rsock **pp;

	if (!s->bound)
		return;
	for (pp = &s->sv->hash[s->name.port % HASH_SIZE]; *pp;
	     pp = &(*pp)->hnext) {
		if (*pp == s) {
			*pp = s->hnext;
			break;
		}
	}
}

static void sock_set_cong(struct rsock *s, int on)
{
	if (s->cong == on || !s->bound)
		return;
	s->cong = on;
	if (on)
		s->sv->st.cong_set++;
	else
		s->sv->st.cong_cleared++;
	rds_ep_set_cong(s->sv->ep, &s->name.addr, s->name.port, on);
}

static void sock_free(struct rsock *s)
{
	struct rds_service *sv = s->sv;
	struct rsock **pp;
	struct rx_held *h;

	rds_ep_forget(sv->ep, s);
	sock_set_cong(s, 0);
	sock_unhash(s);
	for (pp = &sv->socks; *pp; pp = &(*pp)->next) {
		if (*pp == s) {
			*pp = s->next;
			break;
		}
	}
	for (pp = &sv->flush_head; s->on_flush && *pp; pp = &(*pp)->fnext) {
		if (*pp == s) {
			*pp = s->fnext;
			break;
		}
	}
	while ((h = s->rxq)) {
		s->rxq = h->next;
		free(h);
	}
	free(s->held);
	if (s->rd_ev)
		event_free(s->rd_ev);
	if (s->wr_ev)
		event_free(s->wr_ev);
	if (s->retry_ev)
		event_free(s->retry_ev);
	if (s->hup_ev)
		event_free(s->hup_ev);
	close(s->fd);
	sv->nsocks--;
	free(s);
}

/* The kernel's rds_sk_sndbuf: half of what getsockopt says. */
static size_t sock_sndbuf(const struct rsock *s)
{
	return (size_t)s->sndbuf / 2;
}

/*
 * Read the program's end only while nothing is held and the
 * unacknowledged bytes are under the socket's sndbuf.  While not reading,
 * watch for the program's last close: its socket goes then, with what it
 * had not sent yet (as the kernel's rds_release drops a socket's queue);
 * while reading, end of file comes after the last datagram.
 */
static void sock_events(struct rsock *s)
{
	int want = !s->held && s->unacked < sock_sndbuf(s);

	if (want && !s->reading) {
		event_add(s->rd_ev, NULL);
		event_del(s->hup_ev);
	} else if (!want && s->reading) {
		event_del(s->rd_ev);
		event_add(s->hup_ev, NULL);
	}
	s->reading = want;
}

static void hup_cb(evutil_socket_t fd, short what, void *arg)
{
	struct rsock *s = arg;

	(void)fd;
	(void)what;
	if (s->reading) {
		event_del(s->hup_ev);
		return;
	}
	s->sv->st.sockets_closed++;
	sock_free(s);
}

static void sock_pump(struct rsock *s);

/* 0: given to the endpoint (or dropped, counted); 1: held (ENOBUFS). */
static int sock_send(struct rsock *s, const struct rds_name *dst,
		     const uint8_t *data, size_t len, unsigned int flags)
{
	struct rds_service *sv = s->sv;
	struct iovec iov = { (void *)data, len };

	s->sent = 1;
	s->unacked += len;	/* before: done() may come at once */
	if (rds_ep_send_flags(sv->ep, &s->name, dst, &iov, 1, s,
			      flags) == 0) {
		sv->st.tx_msgs++;
		sv->st.tx_bytes += len;
		return 0;
	}
	s->unacked -= len;
	if (errno != ENOBUFS) {
		sv->st.tx_errors++;
		return 0;
	}
	return 1;
}

static void held_retry_arm(struct rsock *s)
{
	struct timeval tv = { 0, HELD_RETRY_MS * 1000 };

	if (s->retry_ev)
		evtimer_add(s->retry_ev, &tv);
}

/* Try the held message again; on success read the end again. */
static void sock_held_retry(struct rsock *s)
{
	if (!s->held)
		return;
	if (sock_send(s, &s->held_dst, s->held, s->held_len, 0) == 1) {
		held_retry_arm(s);
		return;
	}
	free(s->held);
	s->held = NULL;
	s->held_len = 0;
	evtimer_del(s->retry_ev);
	sock_events(s);
	sock_pump(s);
}

static void retry_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	sock_held_retry(arg);
}

/* A zero-length read: the program's last close, or an empty message
 * someone wrote past the preload. */
static int sock_hup(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN | POLLRDHUP };

	return poll(&p, 1, 0) == 1 && (p.revents & (POLLHUP | POLLRDHUP));
}

/* One message read: 0 go on, -1 stop (EAGAIN), -2 the socket is gone. */
static int sock_read_one(struct rsock *s)
{
	struct rds_service *sv = s->sv;
	struct rds_ctl_hdr h;
	struct rds_name dst;
	int family;
	ssize_t n;
	size_t len;

	n = recv(s->fd, sv->buf, sv->buflen, MSG_DONTWAIT | MSG_TRUNC);
	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? -1 : -2;
	if (n == 0) {
		if (sock_hup(s->fd))
			return -2;
		sv->st.tx_bad++;
		return 0;
	}
	if ((size_t)n > sv->buflen || (size_t)n < sizeof(h)) {
		sv->st.tx_bad++;
		return 0;
	}
	memcpy(&h, sv->buf, sizeof(h));
	if (h.magic != RDS_HDR_MAGIC ||
	    from_ctl(&h.peer, &dst, &family, 0) < 0) {
		sv->st.tx_bad++;
		return 0;
	}
	if (!s->bound) {
		sv->st.tx_unbound++;
		return 0;
	}
	len = (size_t)n - sizeof(h);
	if (sock_send(s, &dst, sv->buf + sizeof(h), len,
		      (h.flags & RDS_HDR_F_CHECKED) ? RDS_EP_SEND_ANYWAY :
		      0) == 1) {
		s->held = malloc(len ? len : 1);
		if (!s->held) {
			sv->st.tx_errors++;
			return 0;
		}
		memcpy(s->held, sv->buf + sizeof(h), len);
		s->held_len = len;
		s->held_dst = dst;
		sv->st.tx_cong_holds++;
		held_retry_arm(s);
		sock_events(s);
		return -1;
	}
	return 0;
}

static void sock_pump(struct rsock *s)
{
	int i, r;

	for (i = 0; i < READS_PER_WAKE; i++) {
		if (s->held)
			return;
		if (s->unacked >= sock_sndbuf(s)) {
			s->sv->st.tx_sndbuf_waits++;
			sock_events(s);
			return;
		}
		r = sock_read_one(s);
		if (r == -2) {
			s->sv->st.sockets_closed++;
			sock_free(s);
			return;
		}
		if (r == -1)
			return;
	}
}

static void rd_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	sock_pump(arg);
}

/*
 * Write rxq to the program's end, in order, RX_BATCH_MSGS per system
 * call.  When the end is full: wait for room (wr_ev), the port marked
 * congested; once all is written, the congestion clears.
 */
static void rxq_flush(struct rsock *s)
{
	struct rds_service *sv = s->sv;
	struct mmsghdr mm[RX_BATCH_MSGS];
	struct iovec iov[RX_BATCH_MSGS][2];
	struct rx_held *h;
	int k, n, i;

	while (s->rxq) {
		for (k = 0, h = s->rxq; h && k < RX_BATCH_MSGS;
		     h = h->next, k++) {
			iov[k][0].iov_base = &h->h;
			iov[k][0].iov_len = sizeof(h->h);
			iov[k][1].iov_base = h->data;
			iov[k][1].iov_len = h->len;
			memset(&mm[k], 0, sizeof(mm[k]));
			mm[k].msg_hdr.msg_iov = iov[k];
			mm[k].msg_hdr.msg_iovlen = 2;
		}
		n = sendmmsg(s->fd, mm, (unsigned int)k,
			     MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0 && errno == EAGAIN) {
			if (!s->rx_blocked) {
				for (h = s->rxq; h; h = h->next)
					sv->st.rx_held++;
				s->rx_blocked = 1;
				event_add(s->wr_ev, NULL);
				sock_set_cong(s, 1);
			}
			return;
		}
		if (n < 0) {
			/* gone (EOF comes next): the first one is lost,
			 * the next call says the same of the next one */
			sv->st.rx_dropped++;
			n = 1;
		} else {
			for (i = 0, h = s->rxq; i < n; i++, h = h->next) {
				sv->st.rx_msgs++;
				sv->st.rx_bytes += h->len;
			}
		}
		for (i = 0; i < n; i++) {
			h = s->rxq;
			s->rxq = h->next;
			s->rxq_bytes -= h->len;
			free(h);
		}
	}
	s->rxq_tail = &s->rxq;
	if (s->rx_blocked) {
		s->rx_blocked = 0;
		event_del(s->wr_ev);
		sock_set_cong(s, 0);
	}
}

static void wr_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	rxq_flush(arg);
}

/* The endpoint's receive batch is over: write what it delivered. */
static void flush_cb(evutil_socket_t fd, short what, void *arg)
{
	struct rds_service *sv = arg;
	struct rsock *s;

	(void)fd;
	(void)what;
	while ((s = sv->flush_head)) {
		sv->flush_head = s->fnext;
		s->fnext = NULL;
		s->on_flush = 0;
		if (!s->rx_blocked)
			rxq_flush(s);
	}
}

static void sock_bufs(struct rsock *s, int app_fd)
{
	int snd = (s->sndbuf > PAIR_MIN_BUF ? s->sndbuf : PAIR_MIN_BUF) / 2;
	int rcv = (s->rcvbuf > PAIR_MIN_BUF ? s->rcvbuf : PAIR_MIN_BUF) / 2;
	int ok = 1;

	/* the program's end sends, ours delivers */
	if (app_fd >= 0) {
		ok &= setsockopt(app_fd, SOL_SOCKET, SO_SNDBUFFORCE, &snd,
				 sizeof(snd)) == 0;
		ok &= setsockopt(app_fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcv,
				 sizeof(rcv)) == 0;
	}
	ok &= setsockopt(s->fd, SOL_SOCKET, SO_SNDBUFFORCE, &rcv,
			 sizeof(rcv)) == 0;
	ok &= setsockopt(s->fd, SOL_SOCKET, SO_RCVBUFFORCE, &snd,
			 sizeof(snd)) == 0;
	if (!ok && !s->sv->force_warned++) {
		/* without CAP_NET_ADMIN: net.core.wmem_max bounds a message */
		if (app_fd >= 0)
			setsockopt(app_fd, SOL_SOCKET, SO_SNDBUF, &snd,
				   sizeof(snd));
		setsockopt(s->fd, SOL_SOCKET, SO_SNDBUF, &rcv, sizeof(rcv));
	}
}

/* ---- the endpoint's callbacks --------------------------------------------- */

static int ep_resolve(void *arg, const struct inet_addr *laddr,
		      const struct inet_addr *faddr, union fab_gid *gid,
		      uint16_t *lid)
{
	struct rds_service *sv = arg;

	return sv->ops.resolve(sv->arg, laddr, faddr, gid, lid);
}

static bool ep_is_local(void *arg, const struct inet_addr *a)
{
	struct rds_service *sv = arg;

	return sv->ops.is_local(sv->arg, a);
}

static size_t rx_hold_limit(const struct rsock *s)
{
	size_t r = (size_t)s->rcvbuf * 4;

	return r > RX_HOLD_MIN ? r : RX_HOLD_MIN;
}

static int ep_deliver(void *arg, const struct rds_name *dst,
		      const struct rds_name *src, const uint8_t *data,
		      size_t len)
{
	struct rds_service *sv = arg;
	struct rsock *s = sock_lookup(sv, dst);
	struct rds_ctl_hdr h;
	struct rx_held *q;
	ssize_t n;

	if (!s) {
		sv->st.rx_no_socket++;
		errno = ENOENT;
		return -1;
	}
	memset(&h, 0, sizeof(h));
	h.magic = RDS_HDR_MAGIC;
	to_ctl(src, s->scope, &h.peer);
	/* a big one after a batch: the batch first, in order */
	if (s->rxq && !s->rx_blocked && len > RX_BATCH_MAX)
		rxq_flush(s);
	if (!s->rxq && len > RX_BATCH_MAX) {
		struct iovec iov[2] = { { &h, sizeof(h) },
					{ (void *)data, len } };
		struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 2 };

		n = sendmsg(s->fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n >= 0) {
			sv->st.rx_msgs++;
			sv->st.rx_bytes += len;
			return 0;
		}
		if (errno != EAGAIN) {
			sv->st.rx_dropped++;	/* gone: EOF comes next */
			return 0;
		}
		s->rx_blocked = 1;
		event_add(s->wr_ev, NULL);
		sock_set_cong(s, 1);
	}
	if (s->rxq_bytes + len > rx_hold_limit(s) ||
	    !(q = malloc(sizeof(*q) + len))) {
		sv->st.rx_dropped++;
		return 0;
	}
	q->next = NULL;
	q->h = h;
	q->len = len;
	memcpy(q->data, data, len);
	*s->rxq_tail = q;
	s->rxq_tail = &q->next;
	s->rxq_bytes += len;
	if (s->rx_blocked) {
		sv->st.rx_held++;
	} else if (!s->on_flush) {	/* a batch: written at its end */
		s->on_flush = 1;
		s->fnext = sv->flush_head;
		sv->flush_head = s;
		event_active(sv->flush_ev, EV_TIMEOUT, 0);
	}
	return 0;
}

static void ep_done(void *arg, void *ctx, size_t len, int err)
{
	struct rsock *s = ctx;
	int was;

	(void)arg;
	(void)err;
	if (!s)
		return;
	was = s->unacked >= sock_sndbuf(s);
	s->unacked = s->unacked > len ? s->unacked - len : 0;
	if (was && s->unacked < sock_sndbuf(s))
		sock_events(s);
}

static void ep_uncongested(void *arg, const struct inet_addr *faddr)
{
	struct rds_service *sv = arg;
	struct rsock *s, *next;

	for (s = sv->socks; s; s = next) {
		next = s->next;
		if (s->held && inet_addr_equal(&s->held_dst.addr, faddr))
			sock_held_retry(s);
	}
}

/* ---- the congestion board ---------------------------------------------------- */

static void board_key(uint8_t key[16], const struct inet_addr *a)
{
	if (a->family == AF_INET6) {
		memcpy(key, a->raw, 16);
		return;
	}
	memset(key, 0, 10);
	key[10] = key[11] = 0xff;
	memcpy(key + 12, &a->v4, 4);
}

/* A shared memory file the programs map read-only (BOARD): -1 without
 * memfd or /proc, and then the preload goes without it (EAGAIN, not
 * ENOBUFS, for a congested port). */
static void board_open(struct rds_service *sv)
{
	char path[64];
	int fd;

	sv->board_ro = -1;
	fd = memfd_create("ibgw-rds-board", MFD_CLOEXEC);
	if (fd < 0)
		return;
	if (ftruncate(fd, sizeof(*sv->board)) == 0) {
		sv->board = mmap(NULL, sizeof(*sv->board),
				 PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (sv->board == MAP_FAILED)
			sv->board = NULL;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (sv->board)
		sv->board_ro = open(path, O_RDONLY | O_CLOEXEC);
	close(fd);
	if (sv->board_ro < 0 && sv->board) {
		munmap(sv->board, sizeof(*sv->board));
		sv->board = NULL;
	}
	if (sv->board) {
		sv->board->nslots = RDS_BOARD_SLOTS;
		sv->board->owner = (uint32_t)getpid();
		sv->board->magic = RDS_BOARD_MAGIC;
	}
}

static void board_close(struct rds_service *sv)
{
	if (sv->board)
		munmap(sv->board, sizeof(*sv->board));
	sv->board = NULL;
	if (sv->board_ro >= 0)
		close(sv->board_ro);
	sv->board_ro = -1;
}

/* faddr's map, as it came: into its slot under the sequence count. */
static void ep_cong_map(void *arg, const struct inet_addr *faddr,
			const uint8_t *bits)
{
	struct rds_service *sv = arg;
	struct rds_board_slot *sl = NULL;
	uint8_t key[16];
	unsigned int i;

	if (!sv->board)
		return;
	board_key(key, faddr);
	for (i = 0; i < RDS_BOARD_SLOTS && !sl; i++)
		if (sv->board->slot[i].used &&
		    !memcmp(sv->board->slot[i].addr, key, 16))
			sl = &sv->board->slot[i];
	for (i = 0; i < RDS_BOARD_SLOTS && !sl; i++)
		if (!sv->board->slot[i].used)
			sl = &sv->board->slot[i];
	if (!sl)	/* more peers than slots: the oldest taken */
		sl = &sv->board->slot[sv->board_next++ % RDS_BOARD_SLOTS];
	__atomic_add_fetch(&sl->seq, 1, __ATOMIC_ACQ_REL);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	memcpy(sl->addr, key, 16);
	memcpy(sl->bits, bits, RDS_BOARD_MAP_BYTES);
	sl->used = 1;
	__atomic_add_fetch(&sl->seq, 1, __ATOMIC_RELEASE);
}

/* ---- requests -------------------------------------------------------------- */

static int send_fd_msg(int sock, const void *msg, size_t len, int fd)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} cb;
	struct iovec iov = { (void *)msg, len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *c;

	if (fd >= 0) {
		memset(&cb, 0, sizeof(cb));
		mh.msg_control = cb.buf;
		mh.msg_controllen = sizeof(cb.buf);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	return sendmsg(sock, &mh, MSG_NOSIGNAL | MSG_DONTWAIT) ==
	       (ssize_t)len ? 0 : -1;
}

static void reply_fill(const struct rsock *s, struct rds_ctl_reply *r)
{
	r->sock_id = s->id;
	if (s->bound)
		to_ctl(&s->name, s->scope, &r->local);
	if (s->connected)
		to_ctl(&s->peer, s->scope, &r->peer);
	r->sndbuf = s->sndbuf;
	r->rcvbuf = s->rcvbuf;
	if (s->sent)
		r->flags |= RDS_CTL_R_SENT;
}

static int read_sysctl(const char *path, int def)
{
	FILE *f = fopen(path, "re");
	int v;

	if (!f)
		return def;
	if (fscanf(f, "%d", &v) != 1)
		v = def;
	fclose(f);
	return v;
}

static int do_socket(struct rds_service *sv, struct rds_ctl_reply *r,
		     int *pass)
{
	struct sockaddr_un sa;
	struct stat st;
	struct rsock *s;
	char name[80];
	int sp[2];

	if (sv->nsocks >= MAX_SOCKS)
		return ENOBUFS;
	s = calloc(1, sizeof(*s));
	if (!s)
		return ENOMEM;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0) {
		free(s);
		return errno;
	}
	s->sv = sv;
	s->fd = sp[1];
	s->id = sv->next_id++;
	s->family = AF_INET;
	/* sock_init_data(): the defaults as they are (only a value set
	 * with setsockopt is doubled) */
	s->sndbuf = sv->wmem_def > MIN_SNDBUF ? sv->wmem_def : MIN_SNDBUF;
	s->rcvbuf = sv->rmem_def > MIN_RCVBUF ? sv->rmem_def : MIN_RCVBUF;
	s->rxq_tail = &s->rxq;
	snprintf(name, sizeof(name), "@" RDS_CTL_SOCK_PREFIX "%ld.%u",
		 (long)getpid(), s->id);
	if (bind(sp[0], (struct sockaddr *)&sa, un_addr(name, &sa)) < 0 ||
	    fstat(sp[0], &st) < 0 ||
	    fcntl(s->fd, F_SETFL, fcntl(s->fd, F_GETFL) | O_NONBLOCK) < 0)
		goto fail;
	s->app_ino = st.st_ino;
	s->rd_ev = event_new(sv->base, s->fd, EV_READ | EV_PERSIST, rd_cb, s);
	s->wr_ev = event_new(sv->base, s->fd, EV_WRITE | EV_PERSIST, wr_cb, s);
	s->retry_ev = evtimer_new(sv->base, retry_cb, s);
	s->hup_ev = event_new(sv->base, s->fd, EV_CLOSED | EV_PERSIST, hup_cb,
			      s);
	if (!s->rd_ev || !s->wr_ev || !s->retry_ev || !s->hup_ev)
		goto fail;
	sock_bufs(s, sp[0]);
	s->next = sv->socks;
	sv->socks = s;
	sv->nsocks++;
	sock_events(s);
	sv->st.sockets_opened++;
	reply_fill(s, r);
	*pass = sp[0];
	return 0;
fail:
	{
		int e = errno ? errno : ENOMEM;

		if (s->rd_ev)
			event_free(s->rd_ev);
		if (s->wr_ev)
			event_free(s->wr_ev);
		if (s->retry_ev)
			event_free(s->retry_ev);
		if (s->hup_ev)
			event_free(s->hup_ev);
		close(sp[0]);
		close(sp[1]);
		free(s);
		return e;
	}
}

/* The kernel's: a random start, then every port up. */
static int pick_port(struct rds_service *sv, struct rds_name *n)
{
	unsigned int start = 2 + (unsigned int)random() % 65534, i;

	for (i = 0; i < 65534; i++) {
		n->port = (uint16_t)(2 + (start - 2 + i) % 65534);
		if (!sock_lookup(sv, n))
			return 0;
	}
	return -1;
}

/* A link-local IPv6 name's scope (0 for any other name) */
static uint32_t ll_scope(const union rds_ctl_addr *c)
{
	return c->family == AF_INET6 &&
	       IN6_IS_ADDR_LINKLOCAL(&c->v6.sin6_addr) ?
	       c->v6.sin6_scope_id : 0;
}

/* rds_bind(), rds_connect(): a link-local IPv6 address needs its scope */
static int ll_unscoped(const union rds_ctl_addr *c)
{
	return c->family == AF_INET6 &&
	       IN6_IS_ADDR_LINKLOCAL(&c->v6.sin6_addr) && !c->v6.sin6_scope_id;
}

/* rds_bind(), rds_connect(): a socket's names scoped to two links */
static int scope_clash(const struct rsock *s, uint32_t scope)
{
	return scope && s->scope && scope != s->scope;
}

static int do_bind(struct rsock *s, const struct rds_ctl_req *q,
		   struct rds_ctl_reply *r)
{
	struct rds_service *sv = s->sv;
	struct rds_name n;
	int family;

	uint32_t scope = ll_scope(&q->addr);

	if (from_ctl(&q->addr, &n, &family, 0) < 0 || s->bound ||
	    ll_unscoped(&q->addr) || (s->connected && scope_clash(s, scope)))
		return EINVAL;
	/* a loopback address has the loop transport (rds_ep_send); a
	 * link-local one is ours on our interface only (the kernel looks
	 * for it on the scope's device: EADDRNOTAVAIL elsewhere) */
	if (!rds_addr_loopback(&n.addr) &&
	    (!sv->ops.is_local(sv->arg, &n.addr) ||
	     (scope && (!sv->ops.ifindex ||
			sv->ops.ifindex(sv->arg) != scope))))
		return EADDRNOTAVAIL;
	if (n.port == RDS_PROBE_PORT)
		return EINVAL;	/* rds_add_bound(): the probe port */
	if (n.port ? sock_lookup(sv, &n) != NULL : pick_port(sv, &n) < 0)
		return EADDRINUSE;
	s->name = n;
	s->family = family;
	s->bound = 1;
	if (scope)
		s->scope = scope;
	s->hnext = sv->hash[n.port % HASH_SIZE];
	sv->hash[n.port % HASH_SIZE] = s;
	sv->st.binds++;
	reply_fill(s, r);
	return 0;
}

static int do_connect(struct rsock *s, const struct rds_ctl_req *q,
		      struct rds_ctl_reply *r)
{
	struct rds_name n;
	int family;

	if (from_ctl(&q->addr, &n, &family, 1) < 0) {
		/* rds_connect(): an IPv6 address that is not unicast (or
		 * maps a v4 any, broadcast or multicast) is EPROTOTYPE */
		if (errno == EINVAL && q->addr.family == AF_INET6)
			return EPROTOTYPE;
		return errno;
	}
	/* rds_connect(): bound to a link-local name, a link-local peer
	 * must be on the same link; the peer's scope is remembered */
	if (ll_unscoped(&q->addr) ||
	    (s->bound && scope_clash(s, ll_scope(&q->addr))))
		return EINVAL;
	if (ll_scope(&q->addr))
		s->scope = ll_scope(&q->addr);
	s->peer = n;
	s->connected = 1;
	reply_fill(s, r);
	return 0;
}

/* As sock_setsockopt(): SO_SNDBUF capped at wmem_max, FORCE for root
 * (CAP_NET_ADMIN, which we see as uid 0), doubled, a minimum. */
static int do_setopt(struct rsock *s, const struct rds_ctl_req *q,
		     uid_t uid, int app_fd, struct rds_ctl_reply *r)
{
	struct rds_service *sv = s->sv;
	long v = q->val;

	if (q->level == SOL_RDS && q->name == RDS_CTL_CANCEL_SENT_TO) {
		struct rds_name n;
		int family;

		if (!s->bound)
			return ENOTCONN;
		if (from_ctl(&q->addr, &n, &family, 0) < 0)
			return EINVAL;
		sv->st.cancelled += rds_ep_cancel_to(sv->ep, s, &n);
		reply_fill(s, r);
		return 0;
	}
	if (q->level != SOL_SOCKET)
		return ENOPROTOOPT;
	switch (q->name) {
	case SO_SNDBUFFORCE:
	case SO_RCVBUFFORCE:
		if (uid != 0)
			return EPERM;
		if (v < 0)
			v = 0;
		break;
	case SO_SNDBUF:
		if ((unsigned long)v > (unsigned long)sv->wmem_max)
			v = sv->wmem_max;
		break;
	case SO_RCVBUF:
		if ((unsigned long)v > (unsigned long)sv->rmem_max)
			v = sv->rmem_max;
		break;
	default:
		return ENOPROTOOPT;
	}
	if (v > 0x3fffffff)
		v = 0x3fffffff;
	if (q->name == SO_SNDBUF || q->name == SO_SNDBUFFORCE)
		s->sndbuf = v * 2 > MIN_SNDBUF ? (int)v * 2 : MIN_SNDBUF;
	else
		s->rcvbuf = v * 2 > MIN_RCVBUF ? (int)v * 2 : MIN_RCVBUF;
	sock_bufs(s, app_fd);	/* the program's end passed with the request */
	sock_events(s);
	reply_fill(s, r);
	return 0;
}

static struct rsock *sock_by_fd(struct rds_service *sv, int fd)
{
	struct rsock *s;
	struct stat st;

	if (fd < 0 || fstat(fd, &st) < 0)
		return NULL;
	for (s = sv->socks; s; s = s->next)
		if (s->app_ino == st.st_ino)
			return s;
	return NULL;
}

static void req_free(struct rds_req *q)
{
	struct rds_req **pp;

	for (pp = &q->sv->reqs; *pp; pp = &(*pp)->next) {
		if (*pp == q) {
			*pp = q->next;
			break;
		}
	}
	event_free(q->ev);
	close(q->fd);
	q->sv->nreqs--;
	free(q);
}

/* The first fd passed, the others closed. */
static int take_fds(struct msghdr *mh)
{
	struct cmsghdr *cm;
	int k, n, f, first = -1;

	for (cm = CMSG_FIRSTHDR(mh); cm; cm = CMSG_NXTHDR(mh, cm)) {
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		n = (int)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));
		for (k = 0; k < n; k++) {
			memcpy(&f, CMSG_DATA(cm) + k * sizeof(int), sizeof(f));
			if (first < 0)
				first = f;
			else
				close(f);
		}
	}
	return first;
}

static int req_serve(struct rds_service *sv, const struct rds_ctl_req *q,
		     int passed, uid_t uid, struct rds_ctl_reply *r,
		     int *pass)
{
	struct rsock *s;
	int e;

	if (q->op == RDS_CTL_SOCKET)
		return do_socket(sv, r, pass);
	if (q->op == RDS_CTL_BOARD) {
		if (sv->board_ro < 0)
			return EOPNOTSUPP;
		*pass = fcntl(sv->board_ro, F_DUPFD_CLOEXEC, 0);
		return *pass < 0 ? errno : 0;
	}
	s = sock_by_fd(sv, passed);
	if (!s)
		return q->op >= RDS_CTL_BIND && q->op <= RDS_CTL_SETOPT ?
		       ENOTSOCK : EOPNOTSUPP;
	switch (q->op) {
	case RDS_CTL_BIND:
		e = do_bind(s, q, r);
		if (e)
			sv->st.bind_failures++;
		return e;
	case RDS_CTL_CONNECT:
		return do_connect(s, q, r);
	case RDS_CTL_INFO:
		reply_fill(s, r);
		return 0;
	case RDS_CTL_SETOPT:
		return do_setopt(s, q, uid, passed, r);
	}
	return EOPNOTSUPP;
}

static void req_cb(evutil_socket_t fd, short what, void *arg)
{
	struct rds_req *rq = arg;
	struct rds_service *sv = rq->sv;
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int) * 4)];
	} cb;
	struct rds_ctl_req q;
	struct rds_ctl_reply r;
	struct iovec iov = { &q, sizeof(q) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = cb.buf,
			     .msg_controllen = sizeof(cb.buf) };
	struct ucred uc = { .uid = (uid_t)-1 };
	socklen_t ul = sizeof(uc);
	int passed, pass = -1, e;
	ssize_t n;

	(void)what;
	n = recvmsg(fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	passed = n > 0 ? take_fds(&mh) : -1;
	if (n != (ssize_t)sizeof(q) || q.magic != RDS_CTL_MAGIC ||
	    (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC))) {
		if (n != 0)
			sv->st.bad_requests++;
		goto out;
	}
	sv->st.requests++;
	getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &uc, &ul);
	memset(&r, 0, sizeof(r));
	r.magic = RDS_CTL_MAGIC;
	r.id = q.id;
	e = req_serve(sv, &q, passed, uc.uid, &r, &pass);
	if (e == EOPNOTSUPP || e == ENOTSOCK)
		sv->st.bad_requests++;
	r.err = e;
	send_fd_msg(fd, &r, sizeof(r), e ? -1 : pass);
out:
	if (pass >= 0)
		close(pass);
	if (passed >= 0)
		close(passed);
	req_free(rq);
}

static void ctl_cb(evutil_socket_t fd, short what, void *arg)
{
	struct rds_service *sv = arg;
	struct rds_req *q;
	int r, n = 0;

	(void)what;
	while (n++ < 32) {
		r = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (r < 0)
			return;
		if (sv->nreqs >= MAX_REQS || !(q = calloc(1, sizeof(*q)))) {
			close(r);
			continue;
		}
		q->sv = sv;
		q->fd = r;
		q->ev = event_new(sv->base, r, EV_READ | EV_PERSIST, req_cb, q);
		if (!q->ev) {
			close(r);
			free(q);
			continue;
		}
		sv->nreqs++;
		q->next = sv->reqs;
		sv->reqs = q;
		event_add(q->ev, NULL);
	}
}

static void ep_log(void *arg, const char *line)
{
	struct rds_service *sv = arg;

	if (sv->ops.log)
		sv->ops.log(sv->arg, line);
}

/* ---- the service -------------------------------------------------------------- */

struct rds_service *rds_service_new(struct event_base *base,
				    struct fab_dev *dev,
				    const struct rds_ep_cfg *cfg,
				    const char *name,
				    const struct rds_service_ops *ops,
				    void *arg, char *err, size_t errlen)
{
	static const struct rds_ep_ops eops = {
		.resolve = ep_resolve, .is_local = ep_is_local,
		.deliver = ep_deliver, .done = ep_done,
		.uncongested = ep_uncongested, .cong_map = ep_cong_map,
		.log = ep_log,
	};
	struct rds_service *sv;
	struct sockaddr_un sa;
	int e;

	char first[108];

	if (!name) {
		/* the preload's list of services (one per partition): a
		 * service started without a name of its own is the first */
		name = getenv(RDS_CTL_ENV);
		if (name && strchr(name, ',')) {
			snprintf(first, sizeof(first), "%.*s",
				 (int)(strchr(name, ',') - name), name);
			name = first;
		}
	}
	if (!name || !*name)
		name = "@" RDS_CTL_NAME;
	if (strlen(name) >= sizeof(sa.sun_path) - 1) {
		snprintf(err, errlen, "RDS service socket name too long: %s",
			 name);
		errno = ENAMETOOLONG;
		return NULL;
	}
	sv = calloc(1, sizeof(*sv));
	if (!sv) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	sv->base = base;
	sv->ops = *ops;
	sv->arg = arg;
	sv->next_id = 1;
	sv->ctl_fd = -1;
	snprintf(sv->name, sizeof(sv->name), "%s", name);
	sv->wmem_max = read_sysctl("/proc/sys/net/core/wmem_max", 212992);
	sv->rmem_max = read_sysctl("/proc/sys/net/core/rmem_max", 212992);
	sv->wmem_def = read_sysctl("/proc/sys/net/core/wmem_default", 212992);
	sv->rmem_def = read_sysctl("/proc/sys/net/core/rmem_default", 212992);
	board_open(sv);
	sv->buflen = sizeof(struct rds_ctl_hdr) + RDS_MAX_MSG_SIZE;
	sv->buf = malloc(sv->buflen);
	if (!sv->buf) {
		errno = ENOMEM;
		goto fail_errno;
	}
	srandom((unsigned int)getpid() ^ (unsigned int)time(NULL));
	sv->ctl_fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK |
			    SOCK_CLOEXEC, 0);
	if (sv->ctl_fd < 0)
		goto fail_errno;
	if (name[0] != '@')
		unlink(name);
	if (bind(sv->ctl_fd, (struct sockaddr *)&sa, un_addr(name, &sa)) < 0 ||
	    listen(sv->ctl_fd, 64) < 0)
		goto fail_errno;
	sv->flush_ev = event_new(base, -1, 0, flush_cb, sv);
	if (!sv->flush_ev) {
		errno = ENOMEM;
		goto fail_errno;
	}
	sv->ep = rds_ep_new(base, dev, cfg, &eops, sv, err, errlen);
	if (!sv->ep)
		goto fail;
	sv->ctl_ev = event_new(base, sv->ctl_fd, EV_READ | EV_PERSIST, ctl_cb,
			       sv);
	if (!sv->ctl_ev) {
		errno = ENOMEM;
		goto fail_errno;
	}
	event_add(sv->ctl_ev, NULL);
	return sv;
fail_errno:
	e = errno;
	snprintf(err, errlen, "RDS service socket %s: %s", name, strerror(e));
	errno = e;
fail:
	e = errno;
	if (sv->ep)
		rds_ep_free(sv->ep);
	if (sv->flush_ev)
		event_free(sv->flush_ev);
	if (sv->ctl_fd >= 0)
		close(sv->ctl_fd);
	board_close(sv);
	free(sv->buf);
	free(sv);
	errno = e;
	return NULL;
}

void rds_service_free(struct rds_service *sv)
{
	if (!sv)
		return;
	if (sv->ctl_ev)
		event_free(sv->ctl_ev);
	close(sv->ctl_fd);
	if (sv->name[0] != '@')
		unlink(sv->name);
	while (sv->reqs)
		req_free(sv->reqs);
	/* what the last receive batch delivered, to programs still there */
	flush_cb(-1, 0, sv);
	/* the endpoint first: no callbacks into freed sockets */
	rds_ep_free(sv->ep);
	sv->ep = NULL;
	event_free(sv->flush_ev);
	board_close(sv);
	while (sv->socks) {
		struct rsock *s = sv->socks;
		struct rx_held *h;

		sv->socks = s->next;
		while ((h = s->rxq)) {
			s->rxq = h->next;
			free(h);
		}
		free(s->held);
		event_free(s->rd_ev);
		event_free(s->wr_ev);
		event_free(s->retry_ev);
		event_free(s->hup_ev);
		close(s->fd);
		free(s);
	}
	free(sv->buf);
	free(sv);
}

void rds_service_drain(struct rds_service *sv, unsigned int ms)
{
	struct timeval step = { 0, 10000 };
	unsigned int waited;

	for (waited = 0; !rds_ep_idle(sv->ep) && waited < ms; waited += 10) {
		event_base_loopexit(sv->base, &step);
		event_base_dispatch(sv->base);
	}
}

const struct rds_service_stats *rds_service_stats(const struct rds_service *sv)
{
	return &sv->st;
}

const struct rds_ep_stats *rds_service_ep_stats(const struct rds_service *sv)
{
	return rds_ep_stats(sv->ep);
}

const char *rds_service_name(const struct rds_service *sv)
{
	return sv->name;
}

size_t rds_service_report(const struct rds_service *sv, char *buf, size_t cap)
{
	const struct rsock *s;
	char a[INET6_ADDRSTRLEN];
	size_t off = 0;
	int n;

	for (s = sv->socks; s && off < cap; s = s->next) {
		if (!s->bound)
			continue;
		inet_ntop(s->name.addr.family, s->name.addr.raw, a, sizeof(a));
		n = snprintf(buf + off, cap - off,
			     "rds sock %s:%u id %u unacked %zu held %zu "
			     "rxq %zu cong %d\n", a, s->name.port, s->id,
			     s->unacked, s->held_len, s->rxq_bytes, s->cong);
		if (n < 0)
			break;
		off += (size_t)n < cap - off ? (size_t)n : cap - off;
	}
	if (off < cap)
		off += rds_ep_report(sv->ep, buf + off, cap - off);
	return off;
}

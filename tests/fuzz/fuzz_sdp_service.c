// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The host's SDP service (ulp/sdp/sdp_service.c) against what any local
 * program may send it: control requests, well-formed or not, with or
 * without an fd, closes of what it handed out; and the endpoint's answers
 * beneath in any order (defined here, so the real endpoint is never
 * linked): connects that succeed or fail, connections that close or
 * reset, incoming connections for the ports listened on.  The service's
 * TCP fallback and relays are its own, real: every destination is
 * rewritten to the loopback address, so nothing leaves the host.  Real
 * unix sockets and a real event loop; every fd is closed before the next
 * input.
 *
 * Input: records of [op][len][len bytes]:
 *   op & 7 == 0  a control request (bytes over a zeroed struct
 *                sdp_ctl_req; destinations made loopback); op & 0x10: the
 *                magic set right; op & 0x20: an fd passed (op & 0x80: a
 *                TCP listener on 127.0.0.1, else a unix stream; with op
 *                & 0x08, a unix listener named as another service's
 *                listener is, or with 0x80 too, named otherwise: what an
 *                ADOPT listen takes); an fd in the reply is kept (up to
 *                8)
 *            1  the oldest connect the endpoint holds answered: bytes[0]
 *               picks 0 or an errno
 *            2  the oldest connection closed (op & 0x10: reset first)
 *            3  the event loop run (1 + bytes[0] % 8 turns)
 *            4  an incoming connection: bytes[0..1] the port, bytes[2]
 *               & 1: IPv6
 *            5  a kept fd closed (bytes[0] % how many)
 *            6  a kept fd read and written (bytes as the data)
 *            7  the oldest SO_LINGER wait answered (bytes[0]: 0 or an
 *               errno)
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <event2/event.h>

#include "ulp/sdp/sdp_ctl.h"
#include "ulp/sdp/sdp_service.h"
#include "ulp/sdp/sdp_sock.h"

#define MAXFD	8
#define MAXCONN	16

struct sdp_sock {
	int fd;
	void *ctx;
	int up;		/* connected or accepted: the fd is ours to close */
	int rejected;
	void (*when_sent)(void *arg, int err);
	void *when_arg;
};

struct sdp_ep {
	int dummy;
};

static struct {
	struct sdp_ep_ops ops;
	void *arg;
	struct sdp_sock *conns[MAXCONN];
	unsigned int nconns;
	struct sdp_ep_stats st;
} ep;
static struct sdp_ep the_ep;

static void conn_drop(unsigned int i)
{
	free(ep.conns[i]);
	ep.conns[i] = ep.conns[--ep.nconns];
}

struct sdp_ep *sdp_ep_new(struct event_base *base, struct fab_dev *dev,
			  const struct sdp_ep_cfg *cfg,
			  const struct sdp_ep_ops *ops, void *arg, char *err,
			  size_t errlen)
{
	(void)base;
	(void)dev;
	(void)cfg;
	(void)err;
	(void)errlen;
	ep.ops = *ops;
	ep.arg = arg;
	return &the_ep;
}

/* every connection aborted, every fd of ours closed */
void sdp_ep_free(struct sdp_ep *e)
{
	(void)e;
	while (ep.nconns) {
		if (ep.conns[0]->up && ep.conns[0]->fd >= 0)
			close(ep.conns[0]->fd);
		conn_drop(0);
	}
}

int sdp_ep_listen(struct sdp_ep *e, uint16_t port, char *err, size_t errlen)
{
	(void)e;
	if (port == 7) {	/* one refusal for the fuzzer to find */
		snprintf(err, errlen, "too many SDP ports listened on");
		errno = ENOBUFS;
		return -1;
	}
	return 0;
}

void sdp_ep_unlisten(struct sdp_ep *e, uint16_t port)
{
	(void)e;
	(void)port;
}

struct sdp_sock *sdp_ep_connect(struct sdp_ep *e,
				const struct sdp_sock_info *info, int fd,
				void *ctx, char *err, size_t errlen)
{
	struct sdp_sock *s;

	(void)e;
	(void)info;
	if (ep.nconns == MAXCONN || !(s = calloc(1, sizeof(*s)))) {
		snprintf(err, errlen, "too many connections");
		errno = ENOBUFS;
		return NULL;
	}
	s->fd = fd;
	s->ctx = ctx;
	ep.conns[ep.nconns++] = s;
	return s;
}

void sdp_sock_cancel(struct sdp_sock *s)
{
	unsigned int i;

	for (i = 0; i < ep.nconns; i++)
		if (ep.conns[i] == s) {
			conn_drop(i);	/* its fd is the caller's */
			return;
		}
}

void sdp_sock_abort_on_close(struct sdp_sock *s, int on)
{
	(void)s;
	(void)on;
}

void sdp_sock_keepalive(struct sdp_sock *s, uint32_t idle_ms)
{
	(void)s;
	(void)idle_ms;
}

void sdp_sock_when_sent(struct sdp_sock *s, void (*cb)(void *arg, int err),
			void *arg)
{
	s->when_sent = cb;
	s->when_arg = arg;
}

void sdp_ep_cancel_when_sent(struct sdp_ep *e, void *arg)
{
	unsigned int i;

	(void)e;
	for (i = 0; i < ep.nconns; i++)
		if (ep.conns[i]->when_arg == arg)
			ep.conns[i]->when_sent = NULL;
}

int sdp_sock_fd(const struct sdp_sock *s)
{
	return s->fd;
}

struct sdp_sock *sdp_ep_sock_of(struct sdp_ep *e, const void *ctx)
{
	unsigned int i;

	(void)e;
	for (i = 0; i < ep.nconns; i++)
		if (ep.conns[i]->ctx == ctx)
			return ep.conns[i];
	return NULL;
}

int sdp_sock_rejected(const struct sdp_sock *s)
{
	return s->rejected;
}

const struct sdp_ep_stats *sdp_ep_stats(const struct sdp_ep *e)
{
	(void)e;
	return &ep.st;
}

size_t sdp_ep_report(const struct sdp_ep *e, char *buf, size_t cap)
{
	(void)e;
	if (cap)
		buf[0] = 0;
	return 0;
}

/* ---- the host --------------------------------------------------------------- */

static int resolve(void *arg, const struct inet_addr *dst,
		   union fab_gid *gid, struct inet_addr *src)
{
	static const int errs[] = { 0, EAGAIN, ENETUNREACH, EHOSTUNREACH,
				    ENETDOWN };
	static unsigned int turn;
	int e = errs[turn++ % (sizeof(errs) / sizeof(errs[0]))];

	(void)arg;
	if (e) {
		errno = e;
		return -1;
	}
	memset(gid, 0, sizeof(*gid));
	gid->raw[0] = 0xfe;
	gid->raw[1] = 0x80;
	gid->raw[15] = 2;
	*src = *dst;
	return 0;
}

static struct event_base *base;
static char name[64];
static int fds[MAXFD];
static unsigned int nfds;

static void spin(int turns)
{
	while (turns--)
		event_base_loop(base, EVLOOP_NONBLOCK);
}

static void keep(int f)
{
	if (nfds < MAXFD)
		fds[nfds++] = f;
	else
		close(f);
}

/* an unnamed-service listener: "ibgw-sdp-l/..." (ok) or another name */
static int unix_listener(int ok)
{
	static unsigned int n;
	struct sockaddr_un sa;
	int f, len;

	f = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (f < 0)
		return -1;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	len = snprintf(sa.sun_path + 1, sizeof(sa.sun_path) - 1,
		       "%s/%d.%u", ok ? "ibgw-sdp-l" : "fuzz-l", (int)getpid(),
		       n++);
	if (bind(f, (struct sockaddr *)&sa, (socklen_t)(offsetof(
		 struct sockaddr_un, sun_path) + 1 + len)) < 0 ||
	    listen(f, 4) < 0) {
		close(f);
		return -1;
	}
	return f;
}

/* an fd for a request: a TCP listener on loopback, or a stream, or
 * (adopt) a unix listener */
static int fd_to_pass(int tcp, int adopt)
{
	struct sockaddr_in a;
	int f, sv[2];

	if (adopt) {
		f = unix_listener(!tcp);
		if (f >= 0 && tcp)
			return f;
		if (f >= 0)
			keep(dup(f));	/* the program's copy */
		return f;
	}
	if (tcp) {
		f = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (f < 0)
			return -1;
		memset(&a, 0, sizeof(a));
		a.sin_family = AF_INET;
		a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		if (bind(f, (struct sockaddr *)&a, sizeof(a)) < 0 ||
		    listen(f, 4) < 0) {
			close(f);
			return -1;
		}
		return f;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return -1;
	keep(sv[0]);
	return sv[1];
}

static void loopback(union sdp_ctl_addr *a)
{
	if (a->family == AF_INET6) {
		memset(&a->v6.sin6_addr, 0, sizeof(a->v6.sin6_addr));
		a->v6.sin6_addr.s6_addr[15] = 1;
		a->v6.sin6_scope_id = 0;
	} else if (a->family == AF_INET) {
		a->v4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	}
}

static void request(const uint8_t *b, size_t n, uint8_t op)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * 4)];
		struct cmsghdr align;
	} c;
	struct sdp_ctl_req q;
	struct sdp_ctl_reply r;
	struct sockaddr_un sa;
	struct iovec iov = { &q, sizeof(q) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *cm;
	int s, pass = -1, i, f;
	size_t k;
	ssize_t got;

	memset(&q, 0, sizeof(q));
	memcpy(&q, b, n < sizeof(q) ? n : sizeof(q));
	if (op & 0x10)
		q.magic = SDP_CTL_MAGIC;
	loopback(&q.remote);
	/* the service's TCP connects: short ones */
	if (q.timeout_ms > 200)
		q.timeout_ms = 200;
	if (n && n < sizeof(q) && (b[0] & 0x80))
		iov.iov_len = n;
	s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (s < 0)
		return;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path + 1, name + 1, strlen(name) - 1);
	if (connect(s, (struct sockaddr *)&sa,
		    (socklen_t)(offsetof(struct sockaddr_un, sun_path) +
				strlen(name))) < 0) {
		spin(1);
		close(s);
		return;
	}
	if (op & 0x20)
		pass = fd_to_pass(!!(op & 0x80), !!(op & 0x08));
	if (pass >= 0) {
		memset(&c, 0, sizeof(c));
		mh.msg_control = c.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int));
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &pass, sizeof(int));
	}
	got = sendmsg(s, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
	if (pass >= 0)
		close(pass);
	if (got < 0) {
		close(s);
		return;
	}
	for (i = 0; i < 6; i++) {
		struct iovec ri = { &r, sizeof(r) };
		struct msghdr rm = { .msg_iov = &ri, .msg_iovlen = 1,
				     .msg_control = c.buf,
				     .msg_controllen = sizeof(c.buf) };

		spin(2);
		got = recvmsg(s, &rm, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
		if (got < 0 && errno == EAGAIN)
			continue;
		for (cm = got >= 0 ? CMSG_FIRSTHDR(&rm) : NULL; cm;
		     cm = CMSG_NXTHDR(&rm, cm)) {
			if (cm->cmsg_level != SOL_SOCKET ||
			    cm->cmsg_type != SCM_RIGHTS)
				continue;
			for (k = 0; k < (cm->cmsg_len - CMSG_LEN(0)) /
					sizeof(int); k++) {
				memcpy(&f, CMSG_DATA(cm) + k * sizeof(int),
				       sizeof(int));
				keep(f);
			}
		}
		break;
	}
	/* a connect still pending: the program goes away, or stays (op &
	 * 0x40) until the next input */
	if (op & 0x40)
		keep(s);
	else
		close(s);
}

static struct sdp_sock *oldest(int up)
{
	unsigned int i;

	for (i = 0; i < ep.nconns; i++)
		if (ep.conns[i]->up == up)
			return ep.conns[i];
	return NULL;
}

static void answer_connect(const uint8_t *b, size_t n)
{
	static const int errs[] = { 0, ECONNREFUSED, ETIMEDOUT, EHOSTUNREACH,
				    ECONNABORTED };
	struct sdp_sock *s = oldest(0);
	int e = n ? errs[b[0] % (sizeof(errs) / sizeof(errs[0]))] : 0;
	unsigned int i;

	if (!s)
		return;
	if (!e) {
		s->up = 1;
		if (ep.ops.connected)
			ep.ops.connected(ep.arg, s, s->ctx, 0);
		return;
	}
	s->rejected = e == ECONNREFUSED && n > 1 && (b[1] & 1);
	/* failed: the fd is the caller's again, the connection gone after
	 * the call */
	if (ep.ops.connected)
		ep.ops.connected(ep.arg, s, s->ctx, e);
	for (i = 0; i < ep.nconns; i++)
		if (ep.conns[i] == s) {
			conn_drop(i);
			break;
		}
}

static void close_conn(int reset)
{
	struct sdp_sock *s = oldest(1);
	unsigned int i;

	if (!s)
		return;
	if (reset && ep.ops.reset)
		ep.ops.reset(ep.arg, s, s->ctx, s->fd, ECONNRESET);
	if (s->when_sent)
		s->when_sent(s->when_arg, ECONNRESET);
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
	if (ep.ops.closed)
		ep.ops.closed(ep.arg, s, s->ctx);
	for (i = 0; i < ep.nconns; i++)
		if (ep.conns[i] == s) {
			conn_drop(i);
			break;
		}
}

static void incoming(const uint8_t *b, size_t n)
{
	struct sdp_sock_info info;
	struct sdp_sock *s;
	void *ctx = NULL;
	int connecting = 0, f;

	if (n < 3 || ep.nconns == MAXCONN)
		return;
	memset(&info, 0, sizeof(info));
	if (b[2] & 1) {
		struct in6_addr a6 = IN6ADDR_LOOPBACK_INIT;

		inet_addr_v6(&info.local, &a6);
		inet_addr_v6(&info.remote, &a6);
	} else {
		struct in_addr a4 = { htonl(INADDR_LOOPBACK) };

		inet_addr_v4(&info.local, &a4);
		inet_addr_v4(&info.remote, &a4);
	}
	info.lport = (uint16_t)(b[0] << 8 | b[1]);
	info.rport = 40000;
	f = ep.ops.accept(ep.arg, &info, &ctx, &connecting);
	if (f < 0)
		return;
	s = calloc(1, sizeof(*s));
	if (!s) {
		close(f);
		return;
	}
	s->fd = f;
	s->ctx = ctx;
	s->up = 1;
	ep.conns[ep.nconns++] = s;
	if (connecting && ep.ops.accepted)
		ep.ops.accepted(ep.arg, ctx, (b[2] & 2) ? ECONNREFUSED : 0);
}

static void linger_answer(const uint8_t *b, size_t n)
{
	unsigned int i;

	for (i = 0; i < ep.nconns; i++) {
		struct sdp_sock *s = ep.conns[i];
		void (*cb)(void *, int) = s->when_sent;

		if (!cb)
			continue;
		s->when_sent = NULL;
		cb(s->when_arg, n && (b[0] & 1) ? ECONNRESET : 0);
		return;
	}
}

static void poke(const uint8_t *b, size_t n)
{
	char buf[4096];
	int f;

	if (!nfds || !n)
		return;
	f = fds[b[0] % nfds];
	if (send(f, b, n, MSG_DONTWAIT | MSG_NOSIGNAL) < 0) {
		/* not a stream, full, or its peer gone */
	}
	if (recv(f, buf, sizeof(buf), MSG_DONTWAIT) < 0) {
		/* nothing there */
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct sdp_service_ops ops = { .resolve = resolve };
	static unsigned long round;
	struct sdp_service *sv;
	struct sdp_ep_cfg cfg;
	char err[160];
	size_t off = 0;
	unsigned int i, records = 0;

	memset(&ep, 0, sizeof(ep));
	memset(&cfg, 0, sizeof(cfg));
	snprintf(name, sizeof(name), "@ibgw-sdp-fuzz/%ld.%lu", (long)getpid(),
		 round++);
	base = event_base_new();
	if (!base)
		abort();
	sv = sdp_service_new(base, NULL, &cfg, name, &ops, NULL, err,
			     sizeof(err));
	if (!sv) {
		fprintf(stderr, "sdp_service_new: %s\n", err);
		abort();
	}
	nfds = 0;
	while (off + 2 <= size && records++ < 48) {
		uint8_t op = data[off];
		size_t n = data[off + 1];
		const uint8_t *b = data + off + 2;

		off += 2;
		if (n > size - off)
			n = size - off;
		off += n;
		switch (op & 7) {
		case 0:
			request(b, n, op);
			break;
		case 1:
			answer_connect(b, n);
			spin(1);
			break;
		case 2:
			close_conn(!!(op & 0x10));
			spin(1);
			break;
		case 3:
			spin(1 + (n ? b[0] % 8 : 0));
			break;
		case 4:
			incoming(b, n);
			spin(1);
			break;
		case 5:
			if (nfds) {
				unsigned int k = n ? b[0] % nfds : 0;

				close(fds[k]);
				fds[k] = fds[--nfds];
			}
			spin(1);
			break;
		case 6:
			poke(b, n);
			spin(1);
			break;
		case 7:
			linger_answer(b, n);
			spin(1);
			break;
		}
	}
	for (i = 0; i < nfds; i++)
		close(fds[i]);
	nfds = 0;
	spin(2);
	if (getenv("IBGW_FUZZ_DEBUG")) {	/* what a seed reached */
		const struct sdp_service_stats *st = sdp_service_stats(sv);

		fprintf(stderr, "requests %llu bad %llu connects %llu "
			"failures %llu listens %llu accepted %llu\n",
			(unsigned long long)st->requests,
			(unsigned long long)st->bad_requests,
			(unsigned long long)st->connects,
			(unsigned long long)st->connect_failures,
			(unsigned long long)st->listens,
			(unsigned long long)st->accepted_sdp);
	}
	sdp_service_free(sv);
	event_base_free(base);
	return 0;
}

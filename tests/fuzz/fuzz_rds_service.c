// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The host's RDS service (ulp/rds/rds_service.c) against what any local
 * program may send it: control requests, well-formed or not, with or
 * without an RDS socket's fd, and datagrams on the program's end of its
 * sockets, in any order, closes included; the endpoint beneath (defined
 * here, so the real one is not linked) takes, refuses or congests sends,
 * acknowledges or cancels them and delivers datagrams as the input says.
 * Real unix sockets and a real event loop; every fd is closed before the
 * next input.
 *
 * Input: records of [op][len][len bytes]:
 *   op & 7 == 0  a control request (bytes over a zeroed struct
 *                rds_ctl_req); op & 0x10: the magic set right; op & 0x20:
 *                the current socket's fd passed; a socket in the reply is
 *                kept (up to 8)
 *            1  a datagram on the current socket (bytes over a zeroed
 *               header); op & 0x10: the header's magic set right
 *            2  the current socket: bytes[0] % the sockets held
 *            3  the event loop run (1 + bytes[0] % 8 turns)
 *            4  the endpoint's answer to sends from now: bytes[0]
 *            5  a delivery from the endpoint: bytes[0..1] the port, 10.9.0.2
 *               as the sender, the rest the payload
 *            6  the current socket's datagrams read
 *            7  the current socket closed; op & 0x10: the oldest send
 *               acknowledged instead; op & 0x20: congestion cleared
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
#include <event2/event.h>

#include "ulp/rds/rds_ctl.h"
#include "ulp/rds/rds_service.h"

#define LOCAL	"10.9.0.1"
#define PEER	"10.9.0.2"
#define MAXSOCK	8
#define MAXSENT	128

static struct {
	struct rds_ep_ops ops;
	void *arg;
	int send_err;
	struct { void *ctx; size_t len; } sent[MAXSENT];
	unsigned int nsent;
	struct rds_ep_stats st;
} ep;

struct rds_ep {
	int dummy;
};
static struct rds_ep the_ep;

struct rds_ep *rds_ep_new(struct event_base *base, struct fab_dev *dev,
			  const struct rds_ep_cfg *cfg,
			  const struct rds_ep_ops *ops, void *arg, char *err,
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

void rds_ep_free(struct rds_ep *e)
{
	(void)e;
	ep.nsent = 0;
}

int rds_ep_send_flags(struct rds_ep *e, const struct rds_name *src,
		      const struct rds_name *dst, const struct iovec *iov,
		      int iovcnt, void *ctx, unsigned int flags)
{
	size_t len = 0;
	int i;

	(void)e;
	(void)src;
	(void)dst;
	for (i = 0; i < iovcnt; i++)
		len += iov[i].iov_len;
	if (ep.send_err && !(ep.send_err == ENOBUFS &&
			     (flags & RDS_EP_SEND_ANYWAY))) {
		errno = ep.send_err;
		return -1;
	}
	if (len > RDS_MAX_MSG_SIZE) {
		errno = EMSGSIZE;
		return -1;
	}
	if (ep.nsent == MAXSENT) {
		errno = ENOBUFS;
		return -1;
	}
	ep.sent[ep.nsent].ctx = ctx;
	ep.sent[ep.nsent].len = len;
	ep.nsent++;
	return 0;
}

void rds_ep_set_cong(struct rds_ep *e, const struct inet_addr *laddr,
		     uint16_t port, bool congested)
{
	(void)e;
	(void)laddr;
	(void)port;
	(void)congested;
}

/* never done() for ctx after this */
void rds_ep_forget(struct rds_ep *e, void *ctx)
{
	unsigned int i, j = 0;

	(void)e;
	for (i = 0; i < ep.nsent; i++)
		if (ep.sent[i].ctx != ctx)
			ep.sent[j++] = ep.sent[i];
	ep.nsent = j;
}

unsigned int rds_ep_cancel_to(struct rds_ep *e, void *ctx,
			      const struct rds_name *dst)
{
	(void)e;
	(void)ctx;
	(void)dst;
	return 0;
}

bool rds_ep_idle(const struct rds_ep *e)
{
	(void)e;
	return true;
}

const struct rds_ep_stats *rds_ep_stats(const struct rds_ep *e)
{
	(void)e;
	return &ep.st;
}

size_t rds_ep_report(const struct rds_ep *e, char *buf, size_t cap)
{
	(void)e;
	if (cap)
		buf[0] = 0;
	return 0;
}

/* ---- the host --------------------------------------------------------------- */

static bool is_local(void *arg, const struct inet_addr *a)
{
	struct in_addr v4;

	(void)arg;
	inet_pton(AF_INET, LOCAL, &v4);
	return a->family == AF_INET && !memcmp(a->raw, &v4, 4);
}

static int resolve(void *arg, const struct inet_addr *l,
		   const struct inet_addr *f, union fab_gid *gid,
		   uint16_t *lid)
{
	(void)arg;
	(void)l;
	(void)f;
	(void)gid;
	(void)lid;
	errno = EHOSTUNREACH;
	return -1;
}

static struct event_base *base;
static char name[64];
static int socks[MAXSOCK];
static unsigned int nsocks, cur;

static void spin(int turns)
{
	while (turns--)
		event_base_loop(base, EVLOOP_NONBLOCK);
}

/* One request on a connection of its own; a socket in the reply kept. */
static void request(const uint8_t *b, size_t n, int fix, int pass)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * 4)];
		struct cmsghdr align;
	} c;
	struct rds_ctl_req q;
	struct rds_ctl_reply r;
	struct sockaddr_un sa;
	struct iovec iov = { &q, sizeof(q) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *cm;
	int s, k, i, f;
	ssize_t got;

	memset(&q, 0, sizeof(q));
	memcpy(&q, b, n < sizeof(q) ? n : sizeof(q));
	if (fix)
		q.magic = RDS_CTL_MAGIC;
	/* a short or long request as sent, else the whole struct */
	if (n && n != sizeof(q) && (b[0] & 0x80))
		iov.iov_len = n < sizeof(q) ? n : sizeof(q);
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
	if (pass && nsocks) {
		memset(&c, 0, sizeof(c));
		mh.msg_control = c.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int));
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &socks[cur], sizeof(int));
	}
	if (sendmsg(s, &mh, MSG_DONTWAIT | MSG_NOSIGNAL) < 0) {
		close(s);
		return;
	}
	for (i = 0; i < 8; i++) {
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
			for (k = 0; (size_t)k < (cm->cmsg_len - CMSG_LEN(0)) /
						sizeof(int); k++) {
				memcpy(&f, CMSG_DATA(cm) + k * sizeof(int),
				       sizeof(int));
				if (nsocks < MAXSOCK && r.err == 0 &&
				    got == (ssize_t)sizeof(r))
					socks[nsocks++] = f;
				else
					close(f);
			}
		}
		break;
	}
	close(s);
}

static void datagram(const uint8_t *b, size_t n, int fix)
{
	static uint8_t buf[sizeof(struct rds_ctl_hdr) + 4096];
	struct rds_ctl_hdr *h = (struct rds_ctl_hdr *)(void *)buf;
	size_t len = n > sizeof(buf) ? sizeof(buf) : n;

	if (!nsocks)
		return;
	if (len < sizeof(*h))
		memset(buf, 0, sizeof(*h));
	memcpy(buf, b, len);
	if (fix) {
		h->magic = RDS_HDR_MAGIC;
		if (len < sizeof(*h))
			len = sizeof(*h);
	}
	if (send(socks[cur], buf, len, MSG_DONTWAIT | MSG_NOSIGNAL) < 0) {
		/* full, or the service closed its end */
	}
}

static void deliver(const uint8_t *b, size_t n)
{
	struct rds_name src, dst;
	struct in_addr v4;

	if (n < 2)
		return;
	memset(&src, 0, sizeof(src));
	memset(&dst, 0, sizeof(dst));
	inet_pton(AF_INET, PEER, &v4);
	inet_addr_v4(&src.addr, &v4);
	src.port = 4000;
	inet_pton(AF_INET, LOCAL, &v4);
	inet_addr_v4(&dst.addr, &v4);
	dst.port = (uint16_t)(b[0] << 8 | b[1]);
	ep.ops.deliver(ep.arg, &dst, &src, b + 2, n - 2);
}

static void drain(void)
{
	uint8_t buf[4096];
	int i;

	if (!nsocks)
		return;
	for (i = 0; i < 16; i++)
		if (recv(socks[cur], buf, sizeof(buf), MSG_DONTWAIT) < 0)
			break;
}

static void ack_oldest(void)
{
	void *ctx;
	size_t len;

	if (!ep.nsent)
		return;
	ctx = ep.sent[0].ctx;
	len = ep.sent[0].len;
	memmove(&ep.sent[0], &ep.sent[1],
		(ep.nsent - 1) * sizeof(ep.sent[0]));
	ep.nsent--;
	if (ep.ops.done)
		ep.ops.done(ep.arg, ctx, len, 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct rds_service_ops ops = {
		.resolve = resolve, .is_local = is_local,
	};
	static const int errs[] = { 0, ENOBUFS, ENOMEM, EINVAL, EMSGSIZE };
	static unsigned long round;
	struct rds_service *sv;
	struct rds_ep_cfg cfg;
	struct in_addr v4;
	char err[160];
	size_t off = 0;
	unsigned int i, records = 0;

	memset(&ep, 0, sizeof(ep));
	memset(&cfg, 0, sizeof(cfg));
	snprintf(name, sizeof(name), "@ibgw-rds-fuzz/%ld.%lu", (long)getpid(),
		 round++);
	base = event_base_new();
	if (!base)
		abort();
	sv = rds_service_new(base, NULL, &cfg, name, &ops, NULL, err,
			     sizeof(err));
	if (!sv) {
		fprintf(stderr, "rds_service_new: %s\n", err);
		abort();
	}
	nsocks = cur = 0;
	/* one socket to begin with, bound to LOCAL:4000 */
	{
		struct rds_ctl_req q;

		memset(&q, 0, sizeof(q));
		q.op = RDS_CTL_SOCKET;
		request((const uint8_t *)&q, sizeof(q), 1, 0);
		q.op = RDS_CTL_BIND;
		q.addr.v4.sin_family = AF_INET;
		q.addr.v4.sin_port = htons(4000);
		inet_pton(AF_INET, LOCAL, &v4);
		q.addr.v4.sin_addr = v4;
		request((const uint8_t *)&q, sizeof(q), 1, 1);
	}
	while (off + 2 <= size && records++ < 64) {
		uint8_t op = data[off];
		size_t n = data[off + 1];
		const uint8_t *b = data + off + 2;

		if (op & 0x40)	/* long: the next byte too */
			n = n << 4;
		off += 2;
		if (n > size - off)
			n = size - off;
		off += n;
		switch (op & 7) {
		case 0:
			request(b, n, !!(op & 0x10), !!(op & 0x20));
			break;
		case 1:
			datagram(b, n, !!(op & 0x10));
			spin(1);
			break;
		case 2:
			if (n && nsocks)
				cur = b[0] % nsocks;
			break;
		case 3:
			spin(1 + (n ? b[0] % 8 : 0));
			break;
		case 4:
			ep.send_err = n ? errs[b[0] % (sizeof(errs) /
						       sizeof(errs[0]))] : 0;
			break;
		case 5:
			deliver(b, n);
			spin(1);
			break;
		case 6:
			drain();
			spin(1);
			break;
		case 7:
			if (op & 0x10) {
				ack_oldest();
			} else if (op & 0x20) {
				inet_pton(AF_INET, PEER, &v4);
				if (ep.ops.uncongested) {
					struct inet_addr a;

					inet_addr_v4(&a, &v4);
					ep.ops.uncongested(ep.arg, &a);
				}
			} else if (nsocks) {
				close(socks[cur]);
				socks[cur] = socks[--nsocks];
				cur = 0;
			}
			spin(1);
			break;
		}
	}
	for (i = 0; i < nsocks; i++)
		close(socks[i]);
	nsocks = 0;
	spin(2);
	if (getenv("IBGW_FUZZ_DEBUG")) {	/* what a seed reached */
		const struct rds_service_stats *st = rds_service_stats(sv);

		fprintf(stderr, "requests %llu bad %llu opened %llu binds %llu "
			"tx %llu tx_bad %llu holds %llu rx %llu no_socket %llu\n",
			(unsigned long long)st->requests,
			(unsigned long long)st->bad_requests,
			(unsigned long long)st->sockets_opened,
			(unsigned long long)st->binds,
			(unsigned long long)st->tx_msgs,
			(unsigned long long)st->tx_bad,
			(unsigned long long)st->tx_cong_holds,
			(unsigned long long)st->rx_msgs,
			(unsigned long long)st->rx_no_socket);
	}
	rds_service_free(sv);
	event_base_free(base);
	return 0;
}

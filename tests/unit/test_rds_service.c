// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The host's RDS service against an in-test endpoint (this file defines
 * the rds_ep_* calls the service makes, so the real endpoint is never
 * linked): the control socket's refusals, bind's errors, the send path
 * (held on ENOBUFS until uncongested, reading stopped while the
 * unacknowledged bytes fill the sndbuf), the receive path (a reader that
 * does not read: held, congested, dropped past the limit, cleared when
 * drained) and close.  Real unix sockets and a real event loop.
 */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <cmocka.h>
#include <event2/event.h>

#include "ulp/rds/rds_ctl.h"
#include "ulp/rds/rds_service.h"

/* ---- the in-test endpoint --------------------------------------------- */

struct sent {
	struct rds_name src, dst;
	size_t len;
	void *ctx;
};

static struct {
	struct rds_ep_ops ops;
	void *arg;
	int send_err;		/* errno for rds_ep_send_flags, 0: taken */
	unsigned int last_flags;	/* ... the flags of its last call */
	struct sent sent[64];
	unsigned int nsent;
	int cong, cong_calls;	/* the last set_cong */
	unsigned int forgets;
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
}

int rds_ep_send_flags(struct rds_ep *e, const struct rds_name *src,
		      const struct rds_name *dst, const struct iovec *iov,
		      int iovcnt, void *ctx, unsigned int flags)
{
	struct sent *s;

	(void)e;
	assert_int_equal(iovcnt, 1);
	ep.last_flags = flags;
	/* ENOBUFS stands for a congested port, which ANYWAY passes */
	if (ep.send_err && !(ep.send_err == ENOBUFS &&
			     (flags & RDS_EP_SEND_ANYWAY))) {
		errno = ep.send_err;
		return -1;
	}
	assert_true(ep.nsent < 64);
	s = &ep.sent[ep.nsent++];
	s->src = *src;
	s->dst = *dst;
	s->len = iov[0].iov_len;
	s->ctx = ctx;
	return 0;
}

void rds_ep_set_cong(struct rds_ep *e, const struct inet_addr *laddr,
		     uint16_t port, bool congested)
{
	(void)e;
	(void)laddr;
	(void)port;
	ep.cong = congested;
	ep.cong_calls++;
}

void rds_ep_forget(struct rds_ep *e, void *ctx)
{
	(void)e;
	(void)ctx;
	ep.forgets++;
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
	(void)buf;
	(void)cap;
	return 0;
}

/* ---- the host ------------------------------------------------------------ */

#define LOCAL	"10.9.0.1"
#define PEER	"10.9.0.2"

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
static struct rds_service *sv;
static char name[64];

static int setup(void **state)
{
	static const struct rds_service_ops ops = {
		.resolve = resolve, .is_local = is_local,
	};
	struct rds_ep_cfg cfg;
	char err[160];

	(void)state;
	memset(&ep, 0, sizeof(ep));
	memset(&cfg, 0, sizeof(cfg));
	snprintf(name, sizeof(name), "@ibgw-rds-test/%ld", (long)getpid());
	base = event_base_new();
	sv = rds_service_new(base, NULL, &cfg, name, &ops, NULL, err,
			     sizeof(err));
	if (!sv)
		fail_msg("rds_service_new: %s", err);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	rds_service_free(sv);
	event_base_free(base);
	return 0;
}

static void spin(int rounds)
{
	while (rounds--)
		event_base_loop(base, EVLOOP_NONBLOCK);
}

static int ctl_connect(void)
{
	struct sockaddr_un sa;
	int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path + 1, name + 1, strlen(name) - 1);
	assert_int_equal(connect(s, (struct sockaddr *)&sa,
				 offsetof(struct sockaddr_un, sun_path) +
				 strlen(name)), 0);
	return s;
}

/* Send raw bytes (and fd) as a request; the reply's length, or 0 when the
 * service closed without one.  *got: an fd that came. */
static ssize_t ctl_raw(const void *req, size_t len, int fd, void *rep,
		       size_t replen, int *got)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} c;
	struct iovec iov = { (void *)req, len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *cm;
	struct pollfd p;
	int s = ctl_connect(), i;
	ssize_t n = -1;

	if (fd >= 0) {
		memset(&c, 0, sizeof(c));
		mh.msg_control = c.buf;
		mh.msg_controllen = sizeof(c.buf);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	}
	assert_int_equal(sendmsg(s, &mh, 0), (ssize_t)len);
	*got = -1;
	for (i = 0; i < 200; i++) {
		spin(2);
		p.fd = s;
		p.events = POLLIN;
		if (poll(&p, 1, 5) == 1)
			break;
	}
	{
		struct iovec ri = { rep, replen };
		struct msghdr rm = { .msg_iov = &ri, .msg_iovlen = 1,
				     .msg_control = c.buf,
				     .msg_controllen = sizeof(c.buf) };

		n = recvmsg(s, &rm, MSG_DONTWAIT);
		for (cm = CMSG_FIRSTHDR(&rm); n > 0 && cm;
		     cm = CMSG_NXTHDR(&rm, cm))
			if (cm->cmsg_type == SCM_RIGHTS)
				memcpy(got, CMSG_DATA(cm), sizeof(int));
	}
	close(s);
	return n;
}

static struct rds_ctl_reply call(uint32_t op, int fd,
				 const char *addr, uint16_t port, int level,
				 int optname, int val, int *got)
{
	struct rds_ctl_req q;
	struct rds_ctl_reply r;
	int dummy;

	memset(&q, 0, sizeof(q));
	q.magic = RDS_CTL_MAGIC;
	q.op = op;
	q.id = 7;
	q.level = level;
	q.name = optname;
	q.val = val;
	if (addr) {
		q.addr.v4.sin_family = AF_INET;
		q.addr.v4.sin_port = htons(port);
		inet_pton(AF_INET, addr, &q.addr.v4.sin_addr);
	}
	memset(&r, 0, sizeof(r));
	assert_int_equal(ctl_raw(&q, sizeof(q), fd, &r, sizeof(r),
				 got ? got : &dummy), (ssize_t)sizeof(r));
	assert_int_equal(r.magic, RDS_CTL_MAGIC);
	assert_int_equal(r.id, 7);
	if (!got && dummy >= 0)
		close(dummy);
	return r;
}

static int new_sock(void)
{
	int fd;
	struct rds_ctl_reply r = call(RDS_CTL_SOCKET, -1, NULL, 0, 0, 0, 0,
				      &fd);

	assert_int_equal(r.err, 0);
	assert_true(fd >= 0);
	return fd;
}

static int bind_to(int fd, const char *addr, uint16_t port)
{
	return call(RDS_CTL_BIND, fd, addr, port, 0, 0, 0, NULL).err;
}

/* A datagram from the program to PEER:port, with header flags. */
static void prog_send_flags(int fd, uint16_t port, size_t len,
			    uint32_t flags)
{
	static uint8_t data[70000];
	struct rds_ctl_hdr h;
	struct iovec iov[2] = { { &h, sizeof(h) }, { data, len } };
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 2 };

	memset(&h, 0, sizeof(h));
	h.magic = RDS_HDR_MAGIC;
	h.flags = flags;
	h.peer.v4.sin_family = AF_INET;
	h.peer.v4.sin_port = htons(port);
	inet_pton(AF_INET, PEER, &h.peer.v4.sin_addr);
	assert_int_equal(sendmsg(fd, &mh, MSG_DONTWAIT),
			 (ssize_t)(sizeof(h) + len));
}

static void prog_send(int fd, uint16_t port, size_t len)
{
	prog_send_flags(fd, port, len, 0);
}

static struct rds_name name_of(const char *addr, uint16_t port)
{
	struct rds_name n;
	struct in_addr v4;

	memset(&n, 0, sizeof(n));
	inet_pton(AF_INET, addr, &v4);
	inet_addr_v4(&n.addr, &v4);
	n.port = port;
	return n;
}

/* ---- the tests --------------------------------------------------------------- */

static void test_refusals(void **state)
{
	struct rds_ctl_req q;
	struct rds_ctl_reply r;
	int got, fd;

	(void)state;
	memset(&q, 0, sizeof(q));
	q.magic = RDS_CTL_MAGIC;
	/* short, no magic: dropped, no answer */
	assert_int_equal(ctl_raw(&q, 5, -1, &r, sizeof(r), &got), 0);
	q.magic = 0x1234;
	q.op = RDS_CTL_SOCKET;
	assert_int_equal(ctl_raw(&q, sizeof(q), -1, &r, sizeof(r), &got), 0);
	assert_int_equal(got, -1);
	assert_int_equal(rds_service_stats(sv)->bad_requests, 2);
	/* BIND without a socket passed, an unknown op with one */
	r = call(RDS_CTL_BIND, -1, LOCAL, 1, 0, 0, 0, NULL);
	assert_int_equal(r.err, ENOTSOCK);
	fd = new_sock();
	r = call(99, fd, NULL, 0, 0, 0, 0, NULL);
	assert_int_equal(r.err, EOPNOTSUPP);
	/* a descriptor that is not one of the service's sockets */
	r = call(RDS_CTL_INFO, 0, NULL, 0, 0, 0, 0, NULL);
	assert_int_equal(r.err, ENOTSOCK);
	close(fd);
}

static void test_bind(void **state)
{
	struct rds_ctl_reply r;
	int a, b;

	(void)state;
	a = new_sock();
	b = new_sock();
	assert_int_equal(bind_to(a, "0.0.0.0", 5), EINVAL);
	assert_int_equal(bind_to(a, "255.255.255.255", 5), EINVAL);
	assert_int_equal(bind_to(a, "239.1.1.1", 5), EINVAL);
	assert_int_equal(bind_to(a, PEER, 5), EADDRNOTAVAIL);
	assert_int_equal(bind_to(a, LOCAL, 5), 0);
	assert_int_equal(bind_to(a, LOCAL, 6), EINVAL);	/* bound */
	assert_int_equal(bind_to(b, LOCAL, 5), EADDRINUSE);
	r = call(RDS_CTL_BIND, b, LOCAL, 0, 0, 0, 0, NULL);
	assert_int_equal(r.err, 0);
	assert_int_equal(r.local.family, AF_INET);
	assert_true(ntohs(r.local.v4.sin_port) >= 2);
	assert_int_not_equal(ntohs(r.local.v4.sin_port), 5);
	r = call(RDS_CTL_INFO, a, NULL, 0, 0, 0, 0, NULL);
	assert_int_equal(ntohs(r.local.v4.sin_port), 5);
	assert_int_equal(r.sndbuf % 2, 0);
	/* SO_SNDBUFFORCE: root here (the test runs as who it runs as) */
	r = call(RDS_CTL_SETOPT, a, NULL, 0, SOL_SOCKET, SO_SNDBUF, 1, NULL);
	assert_int_equal(r.err, 0);
	assert_int_equal(r.sndbuf, 4608);	/* the kernel's minimum */
	r = call(RDS_CTL_SETOPT, a, NULL, 0, SOL_SOCKET, SO_KEEPALIVE, 1,
		 NULL);
	assert_int_equal(r.err, ENOPROTOOPT);
	assert_int_equal(rds_service_stats(sv)->bind_failures, 6);
	close(a);
	close(b);
}

static void test_send_held(void **state)
{
	struct rds_name peer = name_of(PEER, 9);
	int fd;

	(void)state;
	fd = new_sock();
	prog_send(fd, 9, 10);		/* unbound: dropped */
	spin(5);
	assert_int_equal(rds_service_stats(sv)->tx_unbound, 1);
	assert_int_equal(bind_to(fd, LOCAL, 40), 0);
	prog_send(fd, 9, 100);
	spin(5);
	assert_int_equal(ep.nsent, 1);
	assert_int_equal(ep.sent[0].len, 100);
	assert_int_equal(ep.sent[0].src.port, 40);
	assert_int_equal(ep.sent[0].dst.port, 9);
	/* ENOBUFS: held; the next one waits in the pair */
	ep.send_err = ENOBUFS;
	prog_send(fd, 9, 200);
	prog_send(fd, 9, 300);
	spin(5);
	assert_int_equal(rds_service_stats(sv)->tx_cong_holds, 1);
	assert_int_equal(ep.nsent, 1);
	ep.send_err = 0;
	ep.ops.uncongested(ep.arg, &peer.addr);
	spin(5);
	assert_int_equal(ep.nsent, 3);
	assert_int_equal(ep.sent[1].len, 200);
	assert_int_equal(ep.sent[2].len, 300);
	/* garbage on the pair: counted, dropped */
	assert_int_equal(send(fd, "xy", 2, 0), 2);
	spin(5);
	assert_int_equal(rds_service_stats(sv)->tx_bad, 1);
	close(fd);
	spin(5);
	assert_int_equal(rds_service_stats(sv)->sockets_closed, 1);
	assert_true(ep.forgets >= 1);
}

/*
 * The congestion board: BOARD gives a read-only map of what the peers'
 * maps say; a datagram whose preload checked it (RDS_HDR_F_CHECKED) goes
 * to a port congested since (RDS_EP_SEND_ANYWAY), not held.
 */
static void test_board(void **state)
{
	static uint8_t bits[RDS_BOARD_MAP_BYTES];
	struct rds_name peer = name_of(PEER, 9);
	const struct rds_board *b;
	struct rds_ctl_reply r;
	unsigned int i;
	int fd, bfd = -1;

	(void)state;
	r = call(RDS_CTL_BOARD, -1, NULL, 0, 0, 0, 0, &bfd);
	assert_int_equal(r.err, 0);
	assert_true(bfd >= 0);
	/* read-only for the program */
	assert_true(mmap(NULL, sizeof(*b), PROT_READ | PROT_WRITE, MAP_SHARED,
			 bfd, 0) == MAP_FAILED);
	b = mmap(NULL, sizeof(*b), PROT_READ, MAP_SHARED, bfd, 0);
	assert_true(b != MAP_FAILED);
	close(bfd);
	assert_int_equal(b->magic, RDS_BOARD_MAGIC);
	/* PEER's map with port 9 congested: its slot, its bit */
	bits[9 / 8] |= 1u << (9 % 8);
	ep.ops.cong_map(ep.arg, &peer.addr, bits);
	for (i = 0; i < RDS_BOARD_SLOTS; i++)
		if (b->slot[i].used)
			break;
	assert_true(i < RDS_BOARD_SLOTS);
	assert_int_equal(b->slot[i].addr[10], 0xff);
	assert_memory_equal(b->slot[i].addr + 12, &peer.addr.v4, 4);
	assert_int_equal(b->slot[i].bits[1] & 0x02, 0x02);
	assert_int_equal(b->slot[i].seq % 2, 0);
	/* a second map for the same peer: the same slot */
	bits[9 / 8] = 0;
	ep.ops.cong_map(ep.arg, &peer.addr, bits);
	assert_int_equal(b->slot[i].bits[1], 0);
	assert_int_equal(b->slot[i].seq, 4);
	munmap((void *)b, sizeof(*b));

	fd = new_sock();
	assert_int_equal(bind_to(fd, LOCAL, 41), 0);
	ep.send_err = ENOBUFS;	/* the port is congested by now */
	prog_send_flags(fd, 9, 100, RDS_HDR_F_CHECKED);
	spin(5);
	assert_int_equal(ep.nsent, 1);
	assert_int_equal(ep.last_flags, RDS_EP_SEND_ANYWAY);
	assert_int_equal(rds_service_stats(sv)->tx_cong_holds, 0);
	/* without the flag: held, as before */
	prog_send(fd, 9, 100);
	spin(5);
	assert_int_equal(ep.nsent, 1);
	assert_int_equal(rds_service_stats(sv)->tx_cong_holds, 1);
	ep.send_err = 0;
	ep.ops.uncongested(ep.arg, &peer.addr);
	spin(5);
	assert_int_equal(ep.nsent, 2);
	close(fd);
	spin(5);
}

static void test_sndbuf(void **state)
{
	unsigned int i;
	int fd;

	(void)state;
	fd = new_sock();
	assert_int_equal(bind_to(fd, LOCAL, 41), 0);
	/* 4608: half is 2304; two of 2000 fill it */
	assert_int_equal(call(RDS_CTL_SETOPT, fd, NULL, 0, SOL_SOCKET,
			      SO_SNDBUF, 1, NULL).err, 0);
	for (i = 0; i < 4; i++)
		prog_send(fd, 9, 2000);
	spin(5);
	assert_int_equal(ep.nsent, 2);
	assert_true(rds_service_stats(sv)->tx_sndbuf_waits >= 1);
	ep.ops.done(ep.arg, ep.sent[0].ctx, 2000, 0);
	ep.ops.done(ep.arg, ep.sent[1].ctx, 2000, 0);
	spin(5);
	assert_int_equal(ep.nsent, 4);
	close(fd);
	spin(5);
}

static void test_deliver(void **state)
{
	static uint8_t data[65536], buf[70000];
	struct rds_name me = name_of(LOCAL, 42), nobody = name_of(LOCAL, 43);
	struct rds_name from = name_of(PEER, 777);
	const struct rds_service_stats *st = rds_service_stats(sv);
	struct rds_ctl_hdr h;
	unsigned int i, n = 0;
	int fd;
	ssize_t r;

	(void)state;
	fd = new_sock();
	assert_int_equal(bind_to(fd, LOCAL, 42), 0);
	errno = 0;
	assert_int_equal(ep.ops.deliver(ep.arg, &nobody, &from, data, 10), -1);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(st->rx_no_socket, 1);
	assert_int_equal(ep.ops.deliver(ep.arg, &me, &from, data, 5), 0);
	/* small ones wait for the end of the endpoint's batch */
	assert_int_equal(recv(fd, buf, sizeof(buf), MSG_DONTWAIT), -1);
	spin(1);
	r = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
	assert_int_equal(r, (ssize_t)(sizeof(h) + 5));
	memcpy(&h, buf, sizeof(h));
	assert_int_equal(h.magic, RDS_HDR_MAGIC);
	assert_int_equal(h.peer.v4.sin_family, AF_INET);
	assert_int_equal(ntohs(h.peer.v4.sin_port), 777);
	/* a batch of 100 small ones and a big one after them: all in
	 * order, the big one not before the batch */
	for (i = 0; i < 101; i++) {
		size_t len = i < 100 ? 100 + i : 20000;

		data[0] = (uint8_t)i;
		assert_int_equal(ep.ops.deliver(ep.arg, &me, &from, data, len),
				 0);
	}
	spin(1);
	for (i = 0; i < 101; i++) {
		r = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		assert_int_equal(r, (ssize_t)(sizeof(h) +
					      (i < 100 ? 100 + i : 20000)));
		assert_int_equal(buf[sizeof(h)], (uint8_t)i);
	}
	assert_int_equal(recv(fd, buf, sizeof(buf), MSG_DONTWAIT), -1);
	assert_int_equal(st->rx_msgs, 102);
	assert_int_equal(st->rx_held, 0);
	data[0] = 0;
	/* a reader that does not read: held, congested, then dropped */
	for (i = 0; i < 400; i++)
		assert_int_equal(ep.ops.deliver(ep.arg, &me, &from, data,
						sizeof(data)), 0);
	assert_true(st->rx_held > 0);
	assert_true(st->rx_dropped > 0);
	assert_int_equal(ep.cong, 1);
	assert_int_equal(st->cong_set, 1);
	/* all taken were written, in order, and the port clears */
	for (i = 0; i < 2000; i++) {
		spin(1);
		r = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (r < 0 && !ep.cong)
			break;
		if (r > 0)
			n++;
	}
	assert_int_equal(ep.cong, 0);
	assert_int_equal(st->cong_cleared, 1);
	assert_int_equal(n + st->rx_dropped, 400);
	assert_int_equal(st->rx_msgs, 102 + n);
	close(fd);
	spin(5);
}

/* Small datagrams for a reader that does not read: the batch meets a
 * full end, waits for room with the port congested, then every one
 * arrives in order and the port clears. */
static void test_deliver_batch_full(void **state)
{
	static uint8_t data[8000], buf[10000];
	struct rds_name me = name_of(LOCAL, 44), from = name_of(PEER, 9);
	const struct rds_service_stats *st = rds_service_stats(sv);
	unsigned int i, n = 0;
	int fd;
	ssize_t r;

	(void)state;
	fd = new_sock();
	assert_int_equal(bind_to(fd, LOCAL, 44), 0);
	for (i = 0; i < 600; i++) {
		data[0] = (uint8_t)i;
		data[1] = (uint8_t)(i >> 8);
		assert_int_equal(ep.ops.deliver(ep.arg, &me, &from, data,
						sizeof(data)), 0);
		if (i % 50 == 49)
			spin(1);	/* batches of 50 */
	}
	spin(1);
	assert_true(st->rx_held > 0);
	assert_int_equal(ep.cong, 1);
	for (i = 0; i < 5000 && n < 600; i++) {
		spin(1);
		while ((r = recv(fd, buf, sizeof(buf), MSG_DONTWAIT)) > 0) {
			assert_int_equal(r, (ssize_t)(sizeof(struct rds_ctl_hdr) +
						      sizeof(data)));
			assert_int_equal(buf[sizeof(struct rds_ctl_hdr)] |
					 buf[sizeof(struct rds_ctl_hdr) + 1] << 8,
					 n);
			n++;
		}
	}
	assert_int_equal(n, 600);
	spin(1);
	assert_int_equal(ep.cong, 0);
	assert_int_equal(st->rx_dropped, 0);
	assert_int_equal(st->rx_msgs, 600);
	close(fd);
	spin(5);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_refusals),
		T(test_bind),
		T(test_send_held),
		T(test_board),
		T(test_sndbuf),
		T(test_deliver),
		T(test_deliver_batch_full),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

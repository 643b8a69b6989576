// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rds_semantics: an ordinary AF_RDS program (no project code) that checks
 * one corner of the kernel's RDS socket semantics per run, for
 * tests/integration/rds_semantics.sh, under libibgw_preload.so.
 *
 *   rds_semantics echo ADDR PORT        echo every datagram to its sender
 *   rds_semantics sink ADDR PORT SEC    bind, read nothing for SEC s, then
 *                                       drain until 3 s pass idle
 *   rds_semantics CASE LADDR RADDR RPORT
 *
 * RADDR:RPORT is an echo (or, for restart and intr, a sink).  The echo's
 * ADDR may be IPv6 (fe80::1%ib0 for a link-local one), and so are LADDR
 * and RADDR of the case linklocal (link-local, with their scope).  Each case
 * prints "ok: CASE: ..." and exits 0, or "FAIL: CASE: ..." and exits 1.
 * The errors expected are Linux 6.1's (net/rds, net/socket.c).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef AF_RDS
#define AF_RDS		21
#endif
#define SOL_RDS_	276
#define RDS_RECVERR_	5
#define RDS_CONG_MONITOR_ 6
#define SIOCRDSSETTOS_	0x89E0
#define SIOCRDSGETTOS_	0x89E1
#define RDS_CMSG_RDMA_ARGS_ 1
#define RDS_CMSG_RDMA_DEST_ 2
#ifndef SO_ZEROCOPY
#define SO_ZEROCOPY	60
#endif
#ifndef MSG_ZEROCOPY
#define MSG_ZEROCOPY	0x4000000
#endif

static const char *cname;

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2),
						      noreturn));
static void fail(const char *fmt, ...)
{
	va_list ap;

	printf("FAIL: %s: ", cname);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	exit(1);
}

/* rc must be -1 with errno want */
static void want_err(const char *what, long rc, int want)
{
	if (rc != -1 || errno != want)
		fail("%s: got %ld (%s), want -1 (%s)", what, rc,
		     rc < 0 ? strerror(errno) : "no error", strerror(want));
}

static void want_rc(const char *what, long rc, long want)
{
	if (rc != want)
		fail("%s: got %ld (%s), want %ld", what, rc,
		     rc < 0 ? strerror(errno) : "", want);
}

static struct sockaddr_in sa(const char *addr, int port)
{
	struct sockaddr_in s = { .sin_family = AF_INET,
				 .sin_port = htons((uint16_t)port) };

	if (inet_pton(AF_INET, addr, &s.sin_addr) != 1) {
		fprintf(stderr, "bad address %s\n", addr);
		exit(2);
	}
	return s;
}

static int rds_sock(const char *laddr, int port)
{
	struct sockaddr_in l = sa(laddr, port);
	int fd = socket(AF_RDS, SOCK_SEQPACKET, 0);

	if (fd < 0 || bind(fd, (struct sockaddr *)&l, sizeof(l)) < 0) {
		printf("FAIL: %s: socket/bind %s:%d: %s\n", cname, laddr, port,
		       strerror(errno));
		exit(1);
	}
	return fd;
}

static void send_to(int fd, const struct sockaddr_in *to, const char *s)
{
	if (sendto(fd, s, strlen(s), 0, (const struct sockaddr *)to,
		   sizeof(*to)) != (ssize_t)strlen(s))
		fail("sendto '%s': %s", s, strerror(errno));
}

static double now_s(void);

/*
 * Is a datagram queued on fd within ms?  The kernel's rds_poll() also
 * says POLLIN (with POLLWRBAND) once after any congestion map update on
 * the host, "for historical reasons", with nothing to read: a program
 * looks before it believes one.
 */
static int arrives(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	double end = now_s() + ms / 1000.0;
	char b;
	int left;

	while ((left = (int)((end - now_s()) * 1000)) > 0) {
		if (poll(&p, 1, left) != 1)
			return 0;
		if (recv(fd, &b, 1, MSG_PEEK | MSG_DONTWAIT) >= 0)
			return 1;
		if (errno != EAGAIN)
			fail("recv(MSG_PEEK): %s", strerror(errno));
	}
	return 0;
}

/* Wait until something is queued on fd (5 s at most). */
static void wait_in(int fd)
{
	if (!arrives(fd, 5000))
		fail("nothing came back in 5 s");
}

/* Send s to the echo and wait until its echo is queued. */
static void echo(int fd, const struct sockaddr_in *to, const char *s)
{
	send_to(fd, to, s);
	wait_in(fd);
}

static void take(int fd, const char *want)
{
	char b[256];
	ssize_t n = recv(fd, b, sizeof(b) - 1, MSG_DONTWAIT);

	if (n < 0)
		fail("recv of '%s': %s", want, strerror(errno));
	b[n] = 0;
	if (strcmp(b, want))
		fail("recv: '%s', want '%s'", b, want);
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* --- the peers ------------------------------------------------------------ */

/* An IPv6 name, a link-local one with its %scope */
static struct sockaddr_in6 sa6(const char *addr, int port)
{
	struct addrinfo h = { .ai_family = AF_INET6,
			      .ai_flags = AI_NUMERICHOST }, *r;
	struct sockaddr_in6 s;

	if (getaddrinfo(addr, NULL, &h, &r) != 0) {
		fprintf(stderr, "bad address %s\n", addr);
		exit(2);
	}
	memcpy(&s, r->ai_addr, sizeof(s));
	freeaddrinfo(r);
	s.sin6_port = htons((uint16_t)port);
	return s;
}

static int run_echo(const char *addr, int port)
{
	char b[65536];
	struct sockaddr_in6 from;
	socklen_t fl;
	ssize_t n;
	int fd;

	if (strchr(addr, ':')) {
		struct sockaddr_in6 l = sa6(addr, port);

		fd = socket(AF_RDS, SOCK_SEQPACKET, 0);
		if (fd < 0 || bind(fd, (struct sockaddr *)&l, sizeof(l)) < 0) {
			printf("FAIL: echo: socket/bind %s:%d: %s\n", addr,
			       port, strerror(errno));
			return 1;
		}
	} else {
		fd = rds_sock(addr, port);
	}

	printf("bound\n");
	fflush(stdout);
	for (;;) {
		fl = sizeof(from);
		n = recvfrom(fd, b, sizeof(b), 0, (struct sockaddr *)&from,
			     &fl);
		if (n < 0)
			return 1;
		if (n == 4 && !memcmp(b, "quit", 4))
			return 0;
		sendto(fd, b, (size_t)n, 0, (struct sockaddr *)&from, fl);
	}
}

static int run_sink(const char *addr, int port, int sec)
{
	char b[65536];
	struct timeval tv = { 3, 0 };
	int fd = rds_sock(addr, port), n = 0;

	printf("bound\n");
	fflush(stdout);
	sleep((unsigned int)sec);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	while (recv(fd, b, sizeof(b), 0) >= 0)
		n++;
	printf("sink: %d datagrams\n", n);
	return 0;
}

/* --- the cases ---------------------------------------------------------- */

struct ctx {
	const char *laddr;
	struct sockaddr_in to;
};

/* 1: sendmmsg and recvmmsg, as __sys_sendmmsg and do_recvmmsg over RDS */
static void c_mmsg(struct ctx *c)
{
	char m[3][8] = { "mm1", "mm2", "mm3" }, r[4][64];
	struct iovec iov[4];
	struct mmsghdr v[4];
	struct sockaddr_in names[4];
	struct timespec tmo;
	int fd = rds_sock(c->laddr, 0), i, n, sp[2];

	memset(v, 0, sizeof(v));
	for (i = 0; i < 3; i++) {
		iov[i].iov_base = m[i];
		iov[i].iov_len = 3;
		v[i].msg_hdr.msg_iov = &iov[i];
		v[i].msg_hdr.msg_iovlen = 1;
		v[i].msg_hdr.msg_name = &c->to;
		v[i].msg_hdr.msg_namelen = sizeof(c->to);
	}
	n = sendmmsg(fd, v, 1, 0);
	want_rc("sendmmsg of 1", n, 1);
	want_rc("sendmmsg's msg_len", v[0].msg_len, 3);
	/* the kernel adds MSG_BATCH to all but the last: rds_sendmsg
	 * refuses it */
	want_err("sendmmsg of 3", sendmmsg(fd, v + 1, 2, 0), EOPNOTSUPP);
	send_to(fd, &c->to, "mm2");
	send_to(fd, &c->to, "mm3");
	for (i = 0; i < 50; i++) {	/* the three echoes queued */
		usleep(100000);
		if (recv(fd, r[0], 1, MSG_PEEK | MSG_DONTWAIT) < 0)
			continue;
		break;
	}
	usleep(500000);
	memset(v, 0, sizeof(v));
	for (i = 0; i < 4; i++) {
		iov[i].iov_base = r[i];
		iov[i].iov_len = sizeof(r[i]);
		v[i].msg_hdr.msg_iov = &iov[i];
		v[i].msg_hdr.msg_iovlen = 1;
		v[i].msg_hdr.msg_name = &names[i];
		v[i].msg_hdr.msg_namelen = sizeof(names[i]);
	}
	n = recvmmsg(fd, v, 4, MSG_DONTWAIT, NULL);
	want_rc("recvmmsg of the 3 echoes", n, 3);
	for (i = 0; i < 3; i++) {
		if (v[i].msg_len != 3 || memcmp(r[i], m[i], 3))
			fail("recvmmsg %d: %u bytes '%.*s', want '%s'", i,
			     v[i].msg_len, (int)v[i].msg_len, r[i], m[i]);
		if (names[i].sin_port != c->to.sin_port ||
		    names[i].sin_addr.s_addr != c->to.sin_addr.s_addr)
			fail("recvmmsg %d: not from the echo", i);
	}
	/* MSG_WAITFORONE: blocks for the first, then takes what is there */
	send_to(fd, &c->to, "mm1");
	n = recvmmsg(fd, v, 4, MSG_WAITFORONE, NULL);
	want_rc("recvmmsg MSG_WAITFORONE", n, 1);
	want_err("recvmmsg, nothing queued", recvmmsg(fd, v, 4, MSG_DONTWAIT,
						      NULL), EAGAIN);
	tmo.tv_sec = 0;
	tmo.tv_nsec = 2000000000;
	want_err("recvmmsg, bad timeout", recvmmsg(fd, v, 4, 0, &tmo), EINVAL);
	send_to(fd, &c->to, "mm1");
	send_to(fd, &c->to, "mm2");
	wait_in(fd);
	usleep(300000);
	tmo.tv_sec = 5;
	tmo.tv_nsec = 0;
	n = recvmmsg(fd, v, 2, 0, &tmo);
	want_rc("recvmmsg of 2 with a timeout", n, 2);
	if (tmo.tv_sec > 4 && tmo.tv_nsec == 0)
		fail("recvmmsg did not write back the time left");
	/* another socket's are the kernel's */
	if (socketpair(AF_UNIX, SOCK_DGRAM, 0, sp) < 0)
		fail("socketpair: %s", strerror(errno));
	for (i = 0; i < 3; i++) {
		iov[i].iov_base = m[i];
		iov[i].iov_len = 3;
		v[i].msg_hdr.msg_name = NULL;
		v[i].msg_hdr.msg_namelen = 0;
	}
	want_rc("sendmmsg on a unix socket", sendmmsg(sp[0], v, 3, 0), 3);
	for (i = 0; i < 3; i++)
		iov[i].iov_base = r[i], iov[i].iov_len = sizeof(r[i]);
	want_rc("recvmmsg on a unix socket", recvmmsg(sp[1], v, 3, 0, NULL),
		3);
	printf("ok: mmsg: sendmmsg of 1 sent (msg_len 3), of 3 EOPNOTSUPP as "
	       "the kernel's (MSG_BATCH); recvmmsg 3 echoes with names, "
	       "MSG_WAITFORONE, timeout; a unix pair untouched\n");
}

/* 2: shutdown is sock_no_shutdown: EOPNOTSUPP, the socket unaffected */
static void c_shutdown(struct ctx *c)
{
	int fd = rds_sock(c->laddr, 0), sp[2];
	char b;

	want_err("shutdown(SHUT_RDWR)", shutdown(fd, SHUT_RDWR), EOPNOTSUPP);
	want_err("shutdown(SHUT_WR)", shutdown(fd, SHUT_WR), EOPNOTSUPP);
	echo(fd, &c->to, "after shutdown");
	take(fd, "after shutdown");
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sp) < 0)
		fail("socketpair: %s", strerror(errno));
	want_rc("shutdown of a unix stream", shutdown(sp[0], SHUT_WR), 0);
	want_rc("the stream's peer reads end of file", read(sp[1], &b, 1), 0);
	printf("ok: shutdown: EOPNOTSUPP, the socket still sends and "
	       "receives; a unix stream's half-close untouched\n");
}

/* rds_connect()'s IPv6 checks: not unicast (or a mapped any, broadcast or
 * multicast) is EPROTOTYPE; link-local without a scope EINVAL (there, in
 * rds_bind() and rds_sendmsg()); rds_add_bound(): port 1 is the probe
 * port */
static void c_names(struct ctx *c)
{
	static const char *bad[] = { "::", "ff02::1", "::ffff:224.0.0.1",
				     "::ffff:0.0.0.0" };
	struct sockaddr_in6 s6 = { .sin6_family = AF_INET6,
				   .sin6_port = htons(4000) };
	struct sockaddr_in l = sa(c->laddr, 1);
	int fd = socket(AF_RDS, SOCK_SEQPACKET, 0);
	char what[64];
	unsigned int i;

	if (fd < 0)
		fail("socket: %s", strerror(errno));
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		inet_pton(AF_INET6, bad[i], &s6.sin6_addr);
		snprintf(what, sizeof(what), "connect [%s]", bad[i]);
		want_err(what, connect(fd, (struct sockaddr *)&s6,
				       sizeof(s6)), EPROTOTYPE);
	}
	inet_pton(AF_INET6, "fe80::1", &s6.sin6_addr);	/* scope 0 */
	want_err("connect [fe80::1] without a scope", connect(fd,
		 (struct sockaddr *)&s6, sizeof(s6)), EINVAL);
	want_err("bind [fe80::1] without a scope", bind(fd,
		 (struct sockaddr *)&s6, sizeof(s6)), EINVAL);
	want_err("sendto [fe80::1] without a scope", sendto(fd, "x", 1, 0,
		 (struct sockaddr *)&s6, sizeof(s6)), EINVAL);
	want_err("bind to port 1", bind(fd, (struct sockaddr *)&l,
					 sizeof(l)), EINVAL);
	l.sin_port = htons(2);
	want_rc("bind to port 2", bind(fd, (struct sockaddr *)&l, sizeof(l)),
		0);
	printf("ok: names: IPv6 connects to non-unicast EPROTOTYPE; "
	       "link-local without a scope EINVAL (connect, bind, sendto); a "
	       "bind to port 1 (the probe port) EINVAL\n");
}

static void want_name6(const char *what, const struct sockaddr_in6 *got,
		       socklen_t len, const struct sockaddr_in6 *want)
{
	char g[INET6_ADDRSTRLEN], w[INET6_ADDRSTRLEN];

	inet_ntop(AF_INET6, &got->sin6_addr, g, sizeof(g));
	inet_ntop(AF_INET6, &want->sin6_addr, w, sizeof(w));
	if (len != sizeof(*got) || got->sin6_family != AF_INET6 ||
	    memcmp(&got->sin6_addr, &want->sin6_addr, 16) ||
	    got->sin6_port != want->sin6_port ||
	    got->sin6_scope_id != want->sin6_scope_id)
		fail("%s: [%s%%%u]:%d (length %u), want [%s%%%u]:%d", what,
		     g, got->sin6_scope_id, ntohs(got->sin6_port),
		     (unsigned int)len, w, want->sin6_scope_id,
		     ntohs(want->sin6_port));
}

/*
 * IPv6 link-local names with their scope (LADDR and RADDR given as
 * fe80::...%IF): rds_bind() takes the host's link-local address on the
 * scope's device (EADDRNOTAVAIL on another, EINVAL without a scope) and
 * keeps the scope (rs_bound_scope_id), which getsockname, getpeername
 * and every sender's name in recvfrom carry; rds_sendmsg() and
 * rds_connect() refuse a link-local peer on another link (EINVAL), and
 * rds_bind() a link-local name on another link than the peer a socket
 * connected to; datagrams go both ways between the two link-local names.
 */
static void c_linklocal(const char *laddr, const char *raddr, int rport)
{
	struct sockaddr_in6 l = sa6(laddr, 0), to = sa6(raddr, rport), n,
			    other, want;
	socklen_t nl = sizeof(n);
	unsigned int lo = if_nametoindex("lo");
	char b[64];
	ssize_t got;
	int fd = socket(AF_RDS, SOCK_SEQPACKET, 0), fd2, fd3;

	if (fd < 0)
		fail("socket: %s", strerror(errno));
	if (!l.sin6_scope_id || !lo || l.sin6_scope_id == lo)
		fail("LADDR %s: a link-local address with its scope, not lo",
		     laddr);
	other = l;
	other.sin6_scope_id = lo;
	want_err("bind to the address scoped to lo", bind(fd,
		 (struct sockaddr *)&other, sizeof(other)), EADDRNOTAVAIL);
	other.sin6_scope_id = 0;
	want_err("bind to the address without a scope", bind(fd,
		 (struct sockaddr *)&other, sizeof(other)), EINVAL);
	want_rc("bind to the address with its scope", bind(fd,
		(struct sockaddr *)&l, sizeof(l)), 0);
	if (getsockname(fd, (struct sockaddr *)&n, &nl) < 0)
		fail("getsockname: %s", strerror(errno));
	want = l;
	want.sin6_port = n.sin6_port;
	if (!n.sin6_port)
		fail("getsockname: no port picked");
	want_name6("getsockname", &n, nl, &want);
	other = to;
	other.sin6_scope_id = lo;
	want_err("sendto the peer scoped to lo", sendto(fd, "x", 1, 0,
		 (struct sockaddr *)&other, sizeof(other)), EINVAL);
	other.sin6_scope_id = 0;
	want_err("sendto the peer without a scope", sendto(fd, "x", 1, 0,
		 (struct sockaddr *)&other, sizeof(other)), EINVAL);
	want_rc("sendto the peer", sendto(fd, "ll-echo", 7, 0,
		(struct sockaddr *)&to, sizeof(to)), 7);
	wait_in(fd);
	nl = sizeof(n);
	memset(&n, 0, sizeof(n));
	got = recvfrom(fd, b, sizeof(b), MSG_DONTWAIT, (struct sockaddr *)&n,
		       &nl);
	if (got != 7 || memcmp(b, "ll-echo", 7))
		fail("the echo: %zd bytes", got);
	want_name6("recvfrom's sender", &n, nl, &to);
	other = to;
	other.sin6_scope_id = lo;
	want_err("connect to the peer scoped to lo", connect(fd,
		 (struct sockaddr *)&other, sizeof(other)), EINVAL);
	want_rc("connect to the peer", connect(fd, (struct sockaddr *)&to,
		sizeof(to)), 0);
	nl = sizeof(n);
	if (getpeername(fd, (struct sockaddr *)&n, &nl) < 0)
		fail("getpeername: %s", strerror(errno));
	want_name6("getpeername", &n, nl, &to);
	want_rc("send to the connected peer", send(fd, "ll-conn", 7, 0), 7);
	wait_in(fd);
	take(fd, "ll-conn");
	/* connected first to a peer scoped to lo, a bind on the link is
	 * another link's */
	fd2 = socket(AF_RDS, SOCK_SEQPACKET, 0);
	if (fd2 < 0)
		fail("socket: %s", strerror(errno));
	other = to;
	other.sin6_scope_id = lo;
	want_rc("connect (unbound) to the peer scoped to lo", connect(fd2,
		(struct sockaddr *)&other, sizeof(other)), 0);
	want_err("then bind to the address on the link", bind(fd2,
		 (struct sockaddr *)&l, sizeof(l)), EINVAL);
	/* ... and a peer on the link leaves the bind alone */
	fd3 = socket(AF_RDS, SOCK_SEQPACKET, 0);
	if (fd3 < 0)
		fail("socket: %s", strerror(errno));
	want_rc("connect (unbound) to the peer", connect(fd3,
		(struct sockaddr *)&to, sizeof(to)), 0);
	want_rc("then bind to the address on the link", bind(fd3,
		(struct sockaddr *)&l, sizeof(l)), 0);
	want_rc("send on it", send(fd3, "ll-3", 4, 0), 4);
	wait_in(fd3);
	take(fd3, "ll-3");
	printf("ok: linklocal: bound to %s (EADDRNOTAVAIL scoped to lo, "
	       "EINVAL unscoped), its scope in getsockname, getpeername and "
	       "the sender's name; a peer on another link EINVAL (sendto, "
	       "connect, bind after connect); echoes both ways\n", laddr);
}

/* rds_cancel_sent_to(): unbound ENOTCONN before the length is looked
 * at; under a sockaddr_in EINVAL; the address not checked */
static void c_cancel(struct ctx *c)
{
	struct sockaddr_in any = sa("0.0.0.0", 0);
	int fd = socket(AF_RDS, SOCK_SEQPACKET, 0);
	struct sockaddr_in l = sa(c->laddr, 0);

	if (fd < 0)
		fail("socket: %s", strerror(errno));
	want_err("unbound, 8 bytes", setsockopt(fd, SOL_RDS_, 1, &c->to, 8),
		 ENOTCONN);
	want_err("unbound", setsockopt(fd, SOL_RDS_, 1, &c->to,
				       sizeof(c->to)), ENOTCONN);
	want_rc("bind", bind(fd, (struct sockaddr *)&l, sizeof(l)), 0);
	want_err("bound, 8 bytes", setsockopt(fd, SOL_RDS_, 1, &c->to, 8),
		 EINVAL);
	want_rc("bound, 0.0.0.0", setsockopt(fd, SOL_RDS_, 1, &any,
					     sizeof(any)), 0);
	want_rc("bound, the echo", setsockopt(fd, SOL_RDS_, 1, &c->to,
					      sizeof(c->to)), 0);
	echo(fd, &c->to, "after");
	take(fd, "after");
	printf("ok: cancel: RDS_CANCEL_SENT_TO unbound ENOTCONN, short "
	       "EINVAL, any address 0, the socket sends after it\n");
}

/* rds_set_transport(), rds_getsockopt(SO_RDS_TRANSPORT) */
static void c_transport(struct ctx *c)
{
	int fd = socket(AF_RDS, SOCK_SEQPACKET, 0), b, v;
	socklen_t l = sizeof(v);

	if (fd < 0)
		fail("socket: %s", strerror(errno));
	v = 0;
	want_rc("get before", getsockopt(fd, SOL_RDS_, 8, &v, &l), 0);
	want_rc("RDS_TRANS_NONE before", v, -1);
	v = 5;
	want_err("set 5", setsockopt(fd, SOL_RDS_, 8, &v, sizeof(v)), EINVAL);
	v = 2;
	want_err("set TCP", setsockopt(fd, SOL_RDS_, 8, &v, sizeof(v)),
		 ENOPROTOOPT);
	v = 0;
	want_rc("set IB", setsockopt(fd, SOL_RDS_, 8, &v, sizeof(v)), 0);
	v = 7;
	want_rc("get after", getsockopt(fd, SOL_RDS_, 8, &v, &l), 0);
	want_rc("IB after", v, 0);
	v = 0;
	want_err("set IB twice", setsockopt(fd, SOL_RDS_, 8, &v, sizeof(v)),
		 EOPNOTSUPP);
	b = rds_sock(c->laddr, 0);
	want_err("set IB once bound", setsockopt(b, SOL_RDS_, 8, &v,
						 sizeof(v)), EOPNOTSUPP);
	printf("ok: transport: SO_RDS_TRANSPORT NONE, then IB once set; TCP "
	       "ENOPROTOOPT, 5 EINVAL, a second set or one once bound "
	       "EOPNOTSUPP\n");
}

/* fd gets s from the address want (and port wport, if not 0) */
static void got_from(int fd, const char *s, const char *want, int wport)
{
	struct sockaddr_storage from;
	socklen_t fl = sizeof(from);
	char b[256], a[INET6_ADDRSTRLEN] = "?";
	ssize_t n;
	int port = 0;

	if (!arrives(fd, 5000))
		fail("'%s' did not arrive in 5 s", s);
	n = recvfrom(fd, b, sizeof(b) - 1, MSG_DONTWAIT,
		     (struct sockaddr *)&from, &fl);
	if (n < 0)
		fail("recvfrom of '%s': %s", s, strerror(errno));
	b[n] = 0;
	if (from.ss_family == AF_INET) {
		struct sockaddr_in *f = (struct sockaddr_in *)&from;

		inet_ntop(AF_INET, &f->sin_addr, a, sizeof(a));
		port = ntohs(f->sin_port);
	} else if (from.ss_family == AF_INET6) {
		struct sockaddr_in6 *f = (struct sockaddr_in6 *)&from;

		inet_ntop(AF_INET6, &f->sin6_addr, a, sizeof(a));
		port = ntohs(f->sin6_port);
	}
	if (strcmp(b, s) || strcmp(a, want) || (wport && port != wport))
		fail("got '%s' from %s port %d, want '%s' from %s port %d", b,
		     a, port, s, want, wport);
}

static int port_of(int fd)
{
	struct sockaddr_storage me;
	socklen_t l = sizeof(me);

	if (getsockname(fd, (struct sockaddr *)&me, &l) < 0)
		fail("getsockname: %s", strerror(errno));
	return ntohs(me.ss_family == AF_INET6 ?
		     ((struct sockaddr_in6 *)&me)->sin6_port :
		     ((struct sockaddr_in *)&me)->sin_port);
}

/*
 * The loop transport (rds_trans_get_preferred): 127.0.0.0/8 and ::1 bind
 * without an IB address, SO_RDS_TRANSPORT then reads 3 (RDS_TRANS_LOOP),
 * but with IB chosen first such a bind is ENOPROTOOPT; datagrams between
 * loopback sockets, and from them to the host's own address, arrive from
 * the sender's address; from a loopback socket to another host's address
 * the loop transport meets no socket: sent, never arrives; from the
 * host's address to a loopback one the kernel makes an IB connection
 * that never comes up: sent, never arrives.
 */
static void c_loopback(struct ctx *c)
{
	struct sockaddr_in lo2 = sa("127.0.0.2", 0);
	struct sockaddr_in6 l6 = { .sin6_family = AF_INET6,
				   .sin6_addr = IN6ADDR_LOOPBACK_INIT };
	int a = rds_sock("127.0.0.1", 0), b = rds_sock("127.0.0.2", 0);
	int h = rds_sock(c->laddr, 0), fd, x, y, v = 7;
	struct sockaddr_in to;
	socklen_t l = sizeof(v);

	want_rc("SO_RDS_TRANSPORT of 127.0.0.1", getsockopt(a, SOL_RDS_, 8, &v,
							    &l), 0);
	want_rc("RDS_TRANS_LOOP", v, 3);
	lo2.sin_port = htons((uint16_t)port_of(b));
	send_to(a, &lo2, "lo1");
	got_from(b, "lo1", "127.0.0.1", port_of(a));
	to = sa("127.0.0.1", port_of(a));
	send_to(b, &to, "lo2");
	got_from(a, "lo2", "127.0.0.2", port_of(b));
	send_to(h, &to, "lo3");	/* own address -> loopback: an IB connection */
	if (arrives(a, 1000))
		fail("'lo3' came from the IB address to a loopback socket");
	to = sa(c->laddr, port_of(h));
	send_to(a, &to, "lo4");			/* loopback -> own address */
	got_from(h, "lo4", "127.0.0.1", port_of(a));
	send_to(a, &c->to, "lo5");		/* loopback -> another host */
	if (arrives(a, 1000))
		fail("an echo came from another host to a loopback socket");
	x = socket(AF_RDS, SOCK_SEQPACKET, 0);
	y = socket(AF_RDS, SOCK_SEQPACKET, 0);
	if (x < 0 || y < 0)
		fail("socket: %s", strerror(errno));
	want_rc("bind [::1]", bind(x, (struct sockaddr *)&l6, sizeof(l6)), 0);
	want_rc("bind [::1] again", bind(y, (struct sockaddr *)&l6,
					 sizeof(l6)), 0);
	l6.sin6_port = htons((uint16_t)port_of(y));
	if (sendto(x, "lo6", 3, 0, (struct sockaddr *)&l6, sizeof(l6)) != 3)
		fail("sendto [::1]: %s", strerror(errno));
	got_from(y, "lo6", "::1", port_of(x));
	fd = socket(AF_RDS, SOCK_SEQPACKET, 0);
	if (fd < 0)
		fail("socket: %s", strerror(errno));
	v = 0;
	want_rc("set IB", setsockopt(fd, SOL_RDS_, 8, &v, sizeof(v)), 0);
	to = sa("127.0.0.1", 0);
	want_err("bind 127.0.0.1 with IB set", bind(fd, (struct sockaddr *)&to,
						    sizeof(to)), ENOPROTOOPT);
	printf("ok: loopback: 127.0.0.0/8 and ::1 bound (RDS_TRANS_LOOP), "
	       "datagrams among them and to the host's address from their "
	       "senders, none to another host nor from the host's address; "
	       "with IB set ENOPROTOOPT\n");
}

/* an RDS socket has no peer: SO_PEERCRED no process, no credentials */
static void c_peercred(struct ctx *c)
{
	int fd = rds_sock(c->laddr, 0);
	struct ucred uc = { 123, 0, 0 };
	socklen_t l = sizeof(uc);
	gid_t g[4];

	want_rc("SO_PEERCRED", getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &uc,
					  &l), 0);
	if (uc.pid != 0 || uc.uid != (uid_t)-1 || uc.gid != (gid_t)-1)
		fail("SO_PEERCRED: pid %d uid %d gid %d, want 0 -1 -1",
		     (int)uc.pid, (int)uc.uid, (int)uc.gid);
	l = sizeof(g);
	want_err("SO_PEERGROUPS", getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS,
					     g, &l), ENODATA);
	printf("ok: peercred: SO_PEERCRED no process, no credentials; "
	       "SO_PEERGROUPS ENODATA\n");
}

/* 3: sock_no_listen, sock_no_accept */
static void c_listen(struct ctx *c)
{
	int fd = rds_sock(c->laddr, 0);

	want_err("listen", listen(fd, 5), EOPNOTSUPP);
	want_err("accept", accept(fd, NULL, NULL), EOPNOTSUPP);
	want_err("accept4", accept4(fd, NULL, NULL, SOCK_CLOEXEC), EOPNOTSUPP);
	want_err("accept4, bad flags", accept4(fd, NULL, NULL, 0x40000000),
		 EINVAL);
	printf("ok: listen: listen, accept EOPNOTSUPP; accept4 with bad "
	       "flags EINVAL\n");
}

/* 4: rds_ioctl */
static void c_ioctl(struct ctx *c)
{
	int fd = rds_sock(c->laddr, 0), u, n = -1, on = 1, p[2];
	int lo = rds_sock("127.0.0.1", 0);
	uint8_t tos = 0xff;
	char b[8];

	want_rc("SIOCRDSGETTOS", ioctl(fd, SIOCRDSGETTOS_, &tos), 0);
	want_rc("the TOS", tos, 0);
	tos = 0;
	want_rc("SIOCRDSSETTOS 0 before a send", ioctl(fd, SIOCRDSSETTOS_,
						       &tos), 0);
	echo(fd, &c->to, "q");
	want_err("FIONREAD", ioctl(fd, FIONREAD, &n), ENOTTY);
	want_err("SIOCOUTQ", ioctl(fd, TIOCOUTQ, &n), ENOTTY);
	tos = 0;
	want_err("SIOCRDSSETTOS 0 after a send (rs_conn)",
		 ioctl(fd, SIOCRDSSETTOS_, &tos), EINVAL);
	tos = 5;
	want_err("SIOCRDSSETTOS 5", ioctl(fd, SIOCRDSSETTOS_, &tos), EINVAL);
	tos = 0;
	want_err("SIOCRDSSETTOS on the loop transport",
		 ioctl(lo, SIOCRDSSETTOS_, &tos), ENOTTY);
	u = socket(AF_RDS, SOCK_SEQPACKET, 0);
	want_err("SIOCRDSSETTOS unbound", ioctl(u, SIOCRDSSETTOS_, &tos),
		 ENOTTY);
	want_rc("FIONBIO on", ioctl(fd, FIONBIO, &on), 0);
	take(fd, "q");
	want_err("recv, FIONBIO", recv(fd, b, sizeof(b), 0), EAGAIN);
	if (pipe(p) < 0 || write(p[1], "abc", 3) != 3)
		fail("pipe: %s", strerror(errno));
	want_rc("FIONREAD on a pipe", ioctl(p[0], FIONREAD, &n), 0);
	want_rc("the pipe's count", n, 3);
	printf("ok: ioctl: FIONREAD, SIOCOUTQ ENOTTY; TOS 0 got, set before "
	       "the first send, EINVAL after it; 5 EINVAL, unbound or "
	       "loopback ENOTTY; FIONBIO works; a pipe's FIONREAD "
	       "untouched\n");
}

/* 5: SO_RCVTIMEO's expiry is ETIMEDOUT (rds_recvmsg) */
static void c_rcvtimeo(struct ctx *c)
{
	struct timeval tv = { 0, 200000 };
	int fd = rds_sock(c->laddr, 0), fl;
	char b[8];
	double t;

	(void)c;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	t = now_s();
	want_err("recv past SO_RCVTIMEO", recv(fd, b, sizeof(b), 0),
		 ETIMEDOUT);
	if (now_s() - t < 0.15)
		fail("recv returned before its timeout");
	want_err("recv MSG_DONTWAIT", recv(fd, b, sizeof(b), MSG_DONTWAIT),
		 EAGAIN);
	fl = fcntl(fd, F_GETFL);
	fcntl(fd, F_SETFL, fl | O_NONBLOCK);
	want_err("read, O_NONBLOCK", read(fd, b, sizeof(b)), EAGAIN);
	printf("ok: rcvtimeo: ETIMEDOUT after SO_RCVTIMEO; EAGAIN when "
	       "non-blocking\n");
}

/* 5b: SO_SNDTIMEO's expiry is ETIMEDOUT (rds_sendmsg); the script stops
 * the peer's ipoibd, so that nothing is acknowledged and the socket
 * fills */
static void c_sndtimeo(struct ctx *c)
{
	static char big[60000];
	struct timeval tv = { 0, 300000 };
	int fd = rds_sock(c->laddr, 0), i;
	ssize_t n = 0;

	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	for (i = 0; i < 2000; i++) {
		n = sendto(fd, big, sizeof(big), 0,
			   (struct sockaddr *)&c->to, sizeof(c->to));
		if (n < 0)
			break;
	}
	if (n >= 0)
		fail("2000 sends of 60000 bytes, none blocked");
	want_err("send past SO_SNDTIMEO", n, ETIMEDOUT);
	printf("ok: sndtimeo: ETIMEDOUT after %d sends filled the socket\n",
	       i);
}

/* 6: RDS_CONG_MONITOR is an int, as rds_set_bool_option takes it */
static void c_congmon(struct ctx *c)
{
	int fd = rds_sock(c->laddr, 0), on = 1;
	socklen_t l = sizeof(on);
	short s = 1;

	(void)c;
	want_rc("RDS_CONG_MONITOR (int)", setsockopt(fd, SOL_RDS_,
		RDS_CONG_MONITOR_, &on, sizeof(on)), 0);
	want_err("RDS_CONG_MONITOR (short)", setsockopt(fd, SOL_RDS_,
		 RDS_CONG_MONITOR_, &s, sizeof(s)), EINVAL);
	want_err("getsockopt RDS_CONG_MONITOR", getsockopt(fd, SOL_RDS_,
		 RDS_CONG_MONITOR_, &on, &l), ENOPROTOOPT);
	printf("ok: congmon: an int taken, 2 bytes EINVAL, getsockopt "
	       "ENOPROTOOPT\n");
}

/* The one cmsg of m: its type, *tv the timeval; -1 if none, -2 if more */
static int one_ts(struct msghdr *m, struct timeval *tv)
{
	struct cmsghdr *h = CMSG_FIRSTHDR(m);
	int type;

	if (!h)
		return -1;
	if (h->cmsg_level != SOL_SOCKET)
		fail("a cmsg of level %d type %d", h->cmsg_level,
		     h->cmsg_type);
	type = h->cmsg_type;
	memcpy(tv, CMSG_DATA(h), sizeof(*tv));
	if (CMSG_NXTHDR(m, h))
		return -2;
	return type;
}

static int recv_ts(int fd, struct timeval *tv, size_t room, int *flags)
{
	union {
		char b[256];
		struct cmsghdr a;
	} ctl;
	char d[64];
	struct iovec iov = { d, sizeof(d) };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = ctl.b, .msg_controllen = room };

	if (recvmsg(fd, &m, MSG_DONTWAIT) < 0)
		fail("recvmsg: %s", strerror(errno));
	*flags = m.msg_flags;
	return one_ts(&m, tv);
}

/* 7: SO_TIMESTAMP gives one SCM_TIMESTAMP per datagram, nothing else */
static void c_tstamp(struct ctx *c)
{
	int fd = rds_sock(c->laddr, 0), on = 1, fl, t;
	struct timeval tv, wall;

	setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &on, sizeof(on));
	echo(fd, &c->to, "no stamp");
	t = recv_ts(fd, &tv, 256, &fl);
	if (t != -1)
		fail("a cmsg (type %d) without SO_TIMESTAMP (SO_PASSCRED "
		     "on)", t);
	want_rc("SO_TIMESTAMP", setsockopt(fd, SOL_SOCKET, SO_TIMESTAMP, &on,
					   sizeof(on)), 0);
	echo(fd, &c->to, "stamp");
	t = recv_ts(fd, &tv, 256, &fl);
	gettimeofday(&wall, NULL);
	if (t != SCM_TIMESTAMP)
		fail("cmsg type %d, want SCM_TIMESTAMP alone", t);
	if (labs(wall.tv_sec - tv.tv_sec) > 5)
		fail("the timestamp is %ld s off", wall.tv_sec - tv.tv_sec);
	echo(fd, &c->to, "cut");
	t = recv_ts(fd, &tv, sizeof(struct cmsghdr) + 4, &fl);
	if (!(fl & MSG_CTRUNC))
		fail("no MSG_CTRUNC with no room for the timestamp");
	on = 0;
	setsockopt(fd, SOL_SOCKET, SO_TIMESTAMP, &on, sizeof(on));
	on = 1;
	want_rc("SO_TIMESTAMPNS", setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS,
					     &on, sizeof(on)), 0);
	echo(fd, &c->to, "ns");
	t = recv_ts(fd, &tv, 256, &fl);
	if (t != SCM_TIMESTAMP || labs(wall.tv_sec - tv.tv_sec) > 5)
		fail("SO_TIMESTAMPNS: cmsg type %d, want RDS's timeval "
		     "(SCM_TIMESTAMP)", t);
	printf("ok: tstamp: SCM_TIMESTAMP per datagram (SO_PASSCRED's "
	       "credentials not leaked), MSG_CTRUNC when cut, a timeval "
	       "for SO_TIMESTAMPNS as RDS gives\n");
}

/* 7b: SO_TIMESTAMP at level SOL_RDS (rds_enable_recvtstamp) */
static void c_tstamp_rds(struct ctx *c)
{
	int fd = rds_sock(c->laddr, 0), on = 1, fl, t;
	struct timeval tv;
	short s = 1;

	want_err("SOL_RDS SO_TIMESTAMP, 2 bytes", setsockopt(fd, SOL_RDS_,
		 SO_TIMESTAMP, &s, sizeof(s)), EFAULT);
	want_rc("SOL_RDS SO_TIMESTAMP", setsockopt(fd, SOL_RDS_, SO_TIMESTAMP,
						   &on, sizeof(on)), 0);
	echo(fd, &c->to, "stamp");
	t = recv_ts(fd, &tv, 256, &fl);
	if (t != SCM_TIMESTAMP)
		fail("cmsg type %d, want SCM_TIMESTAMP", t);
	printf("ok: tstamp-rds: SOL_RDS SO_TIMESTAMP gives SCM_TIMESTAMP; "
	       "a short value EFAULT\n");
}

static ssize_t send_cmsg_data(int fd, const struct sockaddr_in *to,
			      int level, int type, const void *data,
			      size_t len)
{
	union {
		char b[CMSG_SPACE(64)];
		struct cmsghdr a;
	} ctl;
	struct iovec iov = { "cmsg", 4 };
	struct msghdr m = { .msg_name = (void *)to, .msg_namelen = sizeof(*to),
			    .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = ctl.b,
			    .msg_controllen = CMSG_SPACE(len) };
	struct cmsghdr *h = CMSG_FIRSTHDR(&m);

	memset(ctl.b, 0, sizeof(ctl.b));
	h->cmsg_level = level;
	h->cmsg_type = type;
	h->cmsg_len = CMSG_LEN(len);
	if (data)
		memcpy(CMSG_DATA(h), data, len);
	return sendmsg(fd, &m, 0);
}

static ssize_t send_cmsg(int fd, const struct sockaddr_in *to, int level,
			 int type, size_t len)
{
	return send_cmsg_data(fd, to, level, type, NULL, len);
}

/* 8: sendmsg's control messages, as rds_cmsg_send takes them */
static void c_cmsg(struct ctx *c)
{
	uint64_t args[7] = { 0 };	/* struct rds_rdma_args */
	int fd = rds_sock(c->laddr, 0);

	want_rc("an IPPROTO_IP cmsg (skipped)", send_cmsg(fd, &c->to,
		IPPROTO_IP, IP_TOS, sizeof(int)), 4);
	wait_in(fd);
	take(fd, "cmsg");
	want_err("SOL_RDS type 99", send_cmsg(fd, &c->to, SOL_RDS_, 99, 8),
		 EINVAL);
	want_err("RDS_CMSG_RDMA_ARGS, nr_local 0", send_cmsg(fd, &c->to,
		 SOL_RDS_, RDS_CMSG_RDMA_ARGS_, 56), EINVAL);
	args[4] = 2000;			/* nr_local > UIO_MAXIOV */
	want_err("RDS_CMSG_RDMA_ARGS, nr_local 2000", send_cmsg_data(fd,
		 &c->to, SOL_RDS_, RDS_CMSG_RDMA_ARGS_, args, sizeof(args)),
		 EMSGSIZE);
	want_err("RDS_CMSG_RDMA_DEST", send_cmsg(fd, &c->to, SOL_RDS_,
		 RDS_CMSG_RDMA_DEST_, 8), EINVAL);
	printf("ok: cmsg: another level skipped (sent), an unknown SOL_RDS "
	       "type EINVAL, RDMA_ARGS without a local vector EINVAL, with "
	       "too long a one EMSGSIZE, RDMA_DEST EINVAL\n");
}

static volatile sig_atomic_t sigs;

static void on_alarm(int s)
{
	(void)s;
	sigs++;
}

/* 9: a blocking send waiting on a congested port, interrupted: restarted
 * after a handler with SA_RESTART (restart), EINTR without (intr).  The
 * sink at RADDR:RPORT reads nothing for a while. */
static void c_congsig(struct ctx *c, int restart)
{
	static char big[60000];
	struct sigaction sa = { .sa_handler = on_alarm };
	struct itimerval it = { { 0, 50000 }, { 0, 50000 } };
	int fd = rds_sock(c->laddr, 0), i, blocked = 0;
	double t, longest = 0;
	ssize_t n;

	sa.sa_flags = restart ? SA_RESTART : 0;
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	for (i = 0; i < 200; i++) {
		int s0 = sigs;

		t = now_s();
		n = sendto(fd, big, sizeof(big), 0,
			   (struct sockaddr *)&c->to, sizeof(c->to));
		t = now_s() - t;
		if (t > longest)
			longest = t;
		if (n < 0 && errno == EINTR && !restart) {
			printf("ok: intr: EINTR after a handler without "
			       "SA_RESTART (send %d)\n", i);
			return;
		}
		if (n < 0)
			fail("send %d: %s after %.2f s, %d signals", i,
			     strerror(errno), t, sigs - s0);
		if (t > 0.3 && sigs - s0 > 2)
			blocked++;
		if (blocked && t < 0.1 && i > 20)
			break;
	}
	if (!restart)
		fail("no send was interrupted (longest %.2f s)", longest);
	if (!blocked)
		fail("no send blocked on the congested port (longest %.2f s)",
		     longest);
	printf("ok: restart: a send blocked %.2f s on the congested port "
	       "through %d SIGALRMs with SA_RESTART, then went\n", longest,
	       (int)sigs);
}

static void read0_blocked(int s)
{
	static const char m[] = "FAIL: read0: a read of 0 bytes blocked\n";

	(void)s;
	if (write(1, m, sizeof(m) - 1) < 0)
		_exit(1);
	_exit(1);
}

/* 10: read(fd, buf, 0) is sock_read_iter's 0, nothing taken */
static void c_read0(struct ctx *c)
{
	int fd = rds_sock(c->laddr, 0);
	struct iovec iov = { NULL, 0 };
	char b[8];

	signal(SIGALRM, read0_blocked);
	alarm(5);	/* a read that blocks fails the case */
	want_rc("read of 0, nothing queued", read(fd, b, 0), 0);
	echo(fd, &c->to, "kept");
	want_rc("read of 0", read(fd, b, 0), 0);
	want_rc("readv of 0", readv(fd, &iov, 1), 0);
	take(fd, "kept");
	alarm(0);
	printf("ok: read0: read and readv of 0 bytes return 0, the datagram "
	       "stays\n");
}

/* 11: recv(MSG_OOB) is rds_recvmsg's 0 */
static void c_oob(struct ctx *c)
{
	int fd = rds_sock(c->laddr, 0);
	char b[8];

	echo(fd, &c->to, "oob");
	want_rc("recv(MSG_OOB)", recv(fd, b, sizeof(b), MSG_OOB), 0);
	take(fd, "oob");
	printf("ok: oob: recv(MSG_OOB) returns 0, the datagram stays\n");
}

/* 12: levels other than SOL_SOCKET and SOL_RDS: ENOPROTOOPT */
static void c_levels(struct ctx *c)
{
	int fd = rds_sock(c->laddr, 0), v = 0;
	socklen_t l = sizeof(v);

	(void)c;
	want_err("getsockopt IP_TOS", getsockopt(fd, IPPROTO_IP, IP_TOS, &v,
						 &l), ENOPROTOOPT);
	want_err("setsockopt IP_TOS", setsockopt(fd, IPPROTO_IP, IP_TOS, &v,
						 sizeof(v)), ENOPROTOOPT);
	want_err("setsockopt IPPROTO_TCP", setsockopt(fd, IPPROTO_TCP, 1, &v,
						      sizeof(v)), ENOPROTOOPT);
	printf("ok: levels: IPPROTO_IP, IPPROTO_TCP ENOPROTOOPT\n");
}

/* 13: MSG_ZEROCOPY and SO_ZEROCOPY */
static void c_zerocopy(struct ctx *c)
{
	int fd = rds_sock(c->laddr, 0), on = 1, v = 0, two = 2;
	socklen_t l = sizeof(v);

	/* rds_rm_size(): MSG_ZEROCOPY without RDS_CMSG_ZCOPY_COOKIE */
	want_err("MSG_ZEROCOPY", sendto(fd, "z", 1, MSG_ZEROCOPY,
		 (struct sockaddr *)&c->to, sizeof(c->to)), EINVAL);
	want_rc("SO_ZEROCOPY 1", setsockopt(fd, SOL_SOCKET, SO_ZEROCOPY, &on,
					    sizeof(on)), 0);
	want_err("SO_ZEROCOPY 2", setsockopt(fd, SOL_SOCKET, SO_ZEROCOPY,
		 &two, sizeof(two)), EINVAL);
	want_rc("getsockopt SO_ZEROCOPY", getsockopt(fd, SOL_SOCKET,
		SO_ZEROCOPY, &v, &l), 0);
	want_rc("SO_ZEROCOPY's value", v, 1);
	/* zero copy is the kernel's TCP transport's only */
	want_err("MSG_ZEROCOPY with SO_ZEROCOPY", sendto(fd, "z", 1,
		 MSG_ZEROCOPY, (struct sockaddr *)&c->to, sizeof(c->to)),
		 EOPNOTSUPP);
	echo(fd, &c->to, "plain");
	take(fd, "plain");
	printf("ok: zerocopy: MSG_ZEROCOPY EINVAL (no cookie), SO_ZEROCOPY "
	       "kept, then EOPNOTSUPP (not the TCP transport)\n");
}

/* 14: RDS_RECVERR is the socket's: a dup and a forked child see it */
static void c_recverr(struct ctx *c)
{
	int fd = rds_sock(c->laddr, 0), on = 1, v = 0, d, st;
	socklen_t l = sizeof(v);
	pid_t p;

	(void)c;
	want_rc("RDS_RECVERR 1", setsockopt(fd, SOL_RDS_, RDS_RECVERR_, &on,
					    sizeof(on)), 0);
	d = dup(fd);
	want_rc("getsockopt on the dup", getsockopt(d, SOL_RDS_, RDS_RECVERR_,
						    &v, &l), 0);
	want_rc("RDS_RECVERR on the dup", v, 1);
	p = fork();
	if (p == 0) {
		v = 0;
		getsockopt(fd, SOL_RDS_, RDS_RECVERR_, &v, &l);
		_exit(v == 1 ? 0 : 1);
	}
	if (waitpid(p, &st, 0) != p || !WIFEXITED(st) || WEXITSTATUS(st))
		fail("a forked child reads RDS_RECVERR 0");
	printf("ok: recverr: RDS_RECVERR set on one fd reads 1 on its dup "
	       "and in a child\n");
}

int main(int argc, char **argv)
{
	struct ctx c;

	if (argc < 4) {
		fprintf(stderr, "usage: rds_semantics CASE LADDR RADDR RPORT\n"
			"       rds_semantics echo|sink ADDR PORT [SEC]\n");
		return 2;
	}
	cname = argv[1];
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(cname, "echo"))
		return run_echo(argv[2], atoi(argv[3]));
	if (!strcmp(cname, "sink") && argc == 5)
		return run_sink(argv[2], atoi(argv[3]), atoi(argv[4]));
	if (argc != 5)
		return 2;
	if (!strcmp(cname, "linklocal")) {
		c_linklocal(argv[2], argv[3], atoi(argv[4]));
		return 0;
	}
	c.laddr = argv[2];
	c.to = sa(argv[3], atoi(argv[4]));
	if (!strcmp(cname, "mmsg"))
		c_mmsg(&c);
	else if (!strcmp(cname, "shutdown"))
		c_shutdown(&c);
	else if (!strcmp(cname, "listen"))
		c_listen(&c);
	else if (!strcmp(cname, "names"))
		c_names(&c);
	else if (!strcmp(cname, "cancel"))
		c_cancel(&c);
	else if (!strcmp(cname, "transport"))
		c_transport(&c);
	else if (!strcmp(cname, "loopback"))
		c_loopback(&c);
	else if (!strcmp(cname, "peercred"))
		c_peercred(&c);
	else if (!strcmp(cname, "ioctl"))
		c_ioctl(&c);
	else if (!strcmp(cname, "rcvtimeo"))
		c_rcvtimeo(&c);
	else if (!strcmp(cname, "sndtimeo"))
		c_sndtimeo(&c);
	else if (!strcmp(cname, "congmon"))
		c_congmon(&c);
	else if (!strcmp(cname, "tstamp"))
		c_tstamp(&c);
	else if (!strcmp(cname, "tstamp-rds"))
		c_tstamp_rds(&c);
	else if (!strcmp(cname, "cmsg"))
		c_cmsg(&c);
	else if (!strcmp(cname, "restart"))
		c_congsig(&c, 1);
	else if (!strcmp(cname, "intr"))
		c_congsig(&c, 0);
	else if (!strcmp(cname, "read0"))
		c_read0(&c);
	else if (!strcmp(cname, "oob"))
		c_oob(&c);
	else if (!strcmp(cname, "levels"))
		c_levels(&c);
	else if (!strcmp(cname, "zerocopy"))
		c_zerocopy(&c);
	else if (!strcmp(cname, "recverr"))
		c_recverr(&c);
	else
		return 2;
	return 0;
}

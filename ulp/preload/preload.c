// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The interposers.  A TCP socket a rule sends to SDP is replaced, at
 * connect or listen, by the unix socket the service returns (dup3 over
 * the program's fd, its flags kept); everything the program does with it
 * afterwards is the kernel's, but for an end of file or EPIPE that was a
 * reset (preload_stream_reset).  The fast paths of sockets that are not
 * ours cost no system call beyond the real one, except connect and
 * listen, which ask the socket what it is (three getsockopt calls), a
 * setsockopt of SO_LINGER (one getsockopt) and a getsockopt of SO_ERROR
 * that says ECONNRESET (one getpeername): a failed non-blocking connect
 * of ours looks like that, and the first accept on a listener (a
 * descriptor reserved and released: two).
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "ulp/preload/preload.h"

#define ACCEPT_HEADER_MS	1000
#define CONNECT_BOTH_MS		2000

#define EXPORT __attribute__((visibility("default")))

static void init(void)
{
	if (!preload_real.connect)
		preload_real_init();
}

/* --- what a socket is ---------------------------------------------------- */

static int sock_int(int fd, int opt)
{
	socklen_t len = sizeof(int);
	int v;

	if (preload_real.getsockopt(fd, SOL_SOCKET, opt, &v, &len) < 0)
		return -1;
	return v;
}

/* An AF_INET/AF_INET6 TCP stream socket: its family, else 0. */
static int sock_tcp_family(int fd)
{
	int d = sock_int(fd, SO_DOMAIN);

	if (d != AF_INET && d != AF_INET6)
		return 0;
	if (sock_int(fd, SO_TYPE) != SOCK_STREAM)
		return 0;
	if (sock_int(fd, SO_PROTOCOL) != IPPROTO_TCP)
		return 0;
	return d;
}

static int sun_is(const struct sockaddr_un *sun, socklen_t len,
		  const char *prefix)
{
	size_t n = strlen(prefix);

	return sun->sun_family == AF_UNIX &&
	       len >= offsetof(struct sockaddr_un, sun_path) + 1 + n &&
	       sun->sun_path[0] == '\0' &&
	       memcmp(sun->sun_path + 1, prefix, n) == 0;
}

enum preload_kind preload_kind(int fd)
{
	struct sockaddr_un sun;
	socklen_t len = sizeof(sun);

	if (preload_real.getpeername(fd, (struct sockaddr *)&sun, &len) == 0 &&
	    sun_is(&sun, len, PRELOAD_STREAM_PREFIX))
		return PRELOAD_STREAM;
	len = sizeof(sun);
	if (preload_real.getsockname(fd, (struct sockaddr *)&sun, &len) == 0 &&
	    sun_is(&sun, len, PRELOAD_LISTEN_PREFIX) &&
	    sock_int(fd, SO_ACCEPTCONN) == 1)
		return PRELOAD_LISTENER;
	return PRELOAD_NOT_OURS;
}

bool preload_is_stream(int fd)
{
	struct sockaddr_un sun;
	socklen_t len = sizeof(sun);

	return preload_real.getpeername(fd, (struct sockaddr *)&sun,
					&len) == 0 &&
	       sun_is(&sun, len, PRELOAD_STREAM_PREFIX);
}

/*
 * A reset reaches our stream as its peer's close: end of file, then
 * EPIPE.  Only when the service's end is gone (POLLHUP) can it be one;
 * the service then knows (INFO: SDP_CTL_R_RESET), and taking it makes
 * this read or write the one that fails, as the first after TCP's RST.
 * An end of file found not to be a reset is marked, so that reading it
 * again asks nothing.  When the service that held the stream is gone
 * (ipoibd stopped, killed or started again), its end closed with the
 * connection cut wherever it was: ECONNRESET, not an end of file that
 * would pass a cut transfer for a whole one.  A write's EPIPE (epipe 1)
 * asks without POLLHUP: while what came before a reset still goes to
 * the program, the service keeps its end but shuts it for reading, so
 * that writes fail at once as after TCP's RST; only a reset found then
 * is marked (an EPIPE of the program's own shutdown says nothing of a
 * reset to come).
 */
static int stream_service_gone(int fd)
{
	uint64_t n;
	pid_t pid;

	return preload_stream_id(fd, &n, &pid) == 0 && pid > 0 &&
	       preload_ctl_pid_gone(SDP_CTL_ENV, SDP_CTL_NAME, pid);
}

int preload_stream_reset(int fd, int epipe)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	struct sdp_ctl_req req;
	struct sdp_ctl_reply rep;
	int e = errno, hup, r;

	hup = poll(&p, 1, 0) == 1 && (p.revents & POLLHUP);
	if ((!hup && !epipe) || preload_cache_mark(fd, PRELOAD_MARK_EOF, 0))
		goto no;
	memset(&req, 0, sizeof(req));
	req.op = SDP_CTL_INFO;
	req.flags = SDP_CTL_F_TAKE_RESET;
	r = preload_stream_call(fd, &req, &rep);
	if (r < 0 || (rep.err == ENOENT && !(rep.flags & SDP_CTL_R_RESET))) {
		if (!hup)
			goto no;	/* its end is there: not gone */
		if (!stream_service_gone(fd)) {
			/* an answer (not known) is final; a failed call
			 * (a busy service) is asked again next time */
			if (r == 0)
				preload_cache_mark(fd, PRELOAD_MARK_EOF, 1);
			goto no;
		}
		preload_cache_mark(fd, PRELOAD_MARK_EOF, 1);
		preload_log(PRELOAD_LOG_INFO, "fd %d: reset (the SDP service "
			    "that held it is gone)", fd);
		errno = ECONNRESET;
		return 1;
	}
	if (hup || ((rep.flags & SDP_CTL_R_RESET) && rep.err > 0))
		preload_cache_mark(fd, PRELOAD_MARK_EOF, 1);
	if (!(rep.flags & SDP_CTL_R_RESET) || rep.err <= 0)
		goto no;
	preload_log(PRELOAD_LOG_INFO, "fd %d: reset (%s)", fd,
		    strerror(rep.err));
	errno = rep.err;
	return 1;
no:
	errno = e;
	return 0;
}

int preload_stream_close(int fd)
{
	struct sdp_ctl_req req;
	struct sdp_ctl_reply rep;
	struct linger lg;
	socklen_t len = sizeof(lg);
	uint64_t n = 0;
	pid_t pid = 0;
	int rc, e, wait;

	wait = preload_real.getsockopt(fd, SOL_SOCKET, SO_LINGER, &lg,
				       &len) == 0 && lg.l_onoff &&
	       lg.l_linger > 0 && preload_stream_id(fd, &n, &pid) == 0;
	rc = preload_real.close(fd);
	e = errno;
	if (rc == 0 && wait) {
		memset(&req, 0, sizeof(req));
		req.op = SDP_CTL_LINGER_WAIT;
		req.flags = SDP_CTL_F_BYID;
		req.ino = n;
		req.timeout_ms = lg.l_linger > 3600 ? 3600000u :
				 (uint32_t)lg.l_linger * 1000u;
		if (preload_ctl_call_at(0, pid, &req, 0, -1, &rep, NULL) == 0)
			preload_log(PRELOAD_LOG_INFO, "close with SO_LINGER "
				    "%d: %s", lg.l_linger, rep.err ?
				    strerror(rep.err) : "all acknowledged");
	}
	errno = e;
	return rc;
}

pid_t preload_listener_pid(int fd)
{
	struct sockaddr_un sun;
	socklen_t len = sizeof(sun);
	size_t n = strlen(PRELOAD_LISTEN_PREFIX);
	char buf[sizeof(sun.sun_path)], *end;
	long pid;

	memset(&sun, 0, sizeof(sun));
	if (preload_real.getsockname(fd, (struct sockaddr *)&sun, &len) < 0 ||
	    !sun_is(&sun, len, PRELOAD_LISTEN_PREFIX))
		return -1;
	len -= (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
	memcpy(buf, sun.sun_path + 1 + n, len);
	buf[len] = '\0';
	pid = strtol(buf, &end, 10);
	if (end == buf || *end != '.' || pid <= 0)
		return -1;
	return (pid_t)pid;
}

static int is_loopback(const struct sockaddr *sa)
{
	const struct sockaddr_in *in = (const void *)sa;
	const struct sockaddr_in6 *in6 = (const void *)sa;
	const uint8_t *b;

	if (sa->sa_family == AF_INET)
		return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
	b = in6->sin6_addr.s6_addr;
	if (IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr))
		return 1;
	return IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr) && b[12] == 127;
}

static int is_any(const struct sockaddr *sa)
{
	const struct sockaddr_in *in = (const void *)sa;
	const struct sockaddr_in6 *in6 = (const void *)sa;

	if (sa->sa_family == AF_INET)
		return in->sin_addr.s_addr == htonl(INADDR_ANY);
	return IN6_IS_ADDR_UNSPECIFIED(&in6->sin6_addr);
}

static uint16_t sa_port(const struct sockaddr *sa)
{
	return ntohs(((const struct sockaddr_in *)sa)->sin_port);
}

static void addr_set(union sdp_ctl_addr *a, const struct sockaddr *sa)
{
	memset(a, 0, sizeof(*a));
	if (sa->sa_family == AF_INET)
		memcpy(&a->v4, sa, sizeof(a->v4));
	else if (sa->sa_family == AF_INET6)
		memcpy(&a->v6, sa, sizeof(a->v6));
}

static socklen_t addr_len(const union sdp_ctl_addr *a)
{
	return a->family == AF_INET ? sizeof(a->v4) :
	       a->family == AF_INET6 ? sizeof(a->v6) : 0;
}

/* As the kernel does: copy at most *len bytes, *len the full size. */
static void addr_out(struct sockaddr *out, socklen_t *len, const void *a,
		     socklen_t alen)
{
	if (!out || !len)
		return;
	memcpy(out, a, *len < alen ? *len : alen);
	*len = alen;
}

#define ALIASES_MAX	64

/*
 * The duplicates the program made of fd while it was a fresh TCP socket
 * (dup before connect or listen): the same socket for it, so they become
 * the stream or listener that replaced fd, each keeping its FD_CLOEXEC
 * (O_NONBLOCK is the open file's, which they share); an alias closed or
 * reused since (another inode) is left alone.  stream: they are SDP
 * streams.  Only this process's: a child forked before connect keeps
 * the TCP socket.
 */
static void replace_aliases(int fd, const struct stat *old, bool stream)
{
	int a[ALIASES_MAX], n, i, fdfl;
	struct stat st;

	n = preload_fresh_aliases(fd, a, ALIASES_MAX);
	for (i = 0; i < n; i++) {
		if (fstat(a[i], &st) < 0 || st.st_ino != old->st_ino ||
		    st.st_dev != old->st_dev)
			continue;
		fdfl = fcntl(a[i], F_GETFD);
		if (fdfl < 0 || preload_real.dup3(fd, a[i], (fdfl & FD_CLOEXEC) ?
						  O_CLOEXEC : 0) < 0) {
			preload_log(PRELOAD_LOG_WARN, "fd %d, a duplicate of %d:"
				    " stays the TCP socket: %s", a[i], fd,
				    strerror(errno));
			continue;
		}
		preload_epoll_moved(a[i]);
		if (stream)
			preload_fd_sdp(a[i]);
		else
			preload_epoll_fresh(a[i], false);
		preload_log(PRELOAD_LOG_DEBUG, "fd %d, a duplicate of %d made "
			    "before, follows it", a[i], fd);
	}
}

/*
 * newfd replaces fd (and the duplicates made of it before), keeping fd's
 * FD_CLOEXEC, O_NONBLOCK and O_ASYNC (with the owner and signal SIGIO
 * goes to).  The flags are read before, since dup3 closes the old socket.
 */
static int replace_fd(int fd, int newfd, int fl, int fdfl, bool stream)
{
	struct f_owner_ex own = { 0, 0 };
	struct stat old;
	int e, aliased, sig = 0;

	aliased = fstat(fd, &old) == 0;
	if (fl & O_ASYNC) {
		if (fcntl(fd, F_GETOWN_EX, &own) < 0)
			own.pid = 0;
		sig = fcntl(fd, F_GETSIG);
	}
	if (preload_real.dup3(newfd, fd, (fdfl & FD_CLOEXEC) ? O_CLOEXEC : 0) < 0) {
		e = errno;
		preload_real.close(newfd);
		errno = e;
		return -1;
	}
	preload_real.close(newfd);
	if (own.pid)
		fcntl(fd, F_SETOWN_EX, &own);
	if (sig > 0)
		fcntl(fd, F_SETSIG, sig);
	if ((fl & (O_NONBLOCK | O_ASYNC)) && fcntl(fd, F_SETFL, fl) < 0)
		return -1;
	if (aliased)
		replace_aliases(fd, &old, stream);
	return 0;
}

static uint32_t connect_timeout(enum sdp_use use)
{
	static atomic_int told;
	const char *s = getenv("IBGW_SDP_TIMEOUT_MS");
	char *end;
	unsigned long v;

	if (s && *s) {
		errno = 0;
		v = strtoul(s, &end, 10);
		if (!*end && !errno && isdigit((unsigned char)*s) &&
		    v <= UINT32_MAX)
			return (uint32_t)v;
		if (!atomic_exchange(&told, 1))
			preload_log(PRELOAD_LOG_ERR, "IBGW_SDP_TIMEOUT_MS '%s': "
				    "not a number of milliseconds (0 to %u); "
				    "the default", s, UINT32_MAX);
	}
	return use == SDP_USE_BOTH ? CONNECT_BOTH_MS : 0;
}

/* --- connect ------------------------------------------------------------- */

/*
 * What the program may have set on the TCP socket before connect and
 * would miss on the stream that replaces it: TCP_NODELAY (remembered,
 * as a unix socket has none), SO_KEEPALIVE, SO_LINGER {1, 0} (the
 * service is told too).  Buffer sizes only where the program set them:
 * where the TCP socket's differs from a fresh TCP socket's (its defaults
 * are not the program's choice); the kernel keeps twice what is set, so
 * half is set again and reads back the same (sdp_semantics.sh found
 * SO_RCVBUF/SO_SNDBUF set before connect lost).  out: {SO_RCVBUF,
 * SO_SNDBUF} to set, 0 for none.
 */
static void prog_bufs(int tcp, int out[2])
{
	static const int opts[2] = { SO_RCVBUF, SO_SNDBUF };
	socklen_t len;
	int fresh, i, v, d;

	out[0] = out[1] = 0;
	fresh = preload_real.socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fresh < 0)
		return;
	for (i = 0; i < 2; i++) {
		len = sizeof(int);
		if (preload_real.getsockopt(tcp, SOL_SOCKET, opts[i], &v,
					    &len) < 0)
			continue;
		len = sizeof(int);
		if (preload_real.getsockopt(fresh, SOL_SOCKET, opts[i], &d,
					    &len) < 0 || v == d)
			continue;
		out[i] = v / 2;
	}
	preload_real.close(fresh);
}

/*
 * Socket-level options a unix stream socket honours as TCP does, carried
 * from one socket to the one that replaces it (the TCP socket to the SDP
 * stream or listener, a listener to what it accepts, as the kernel's
 * accept copies them): the receive and send timeouts (recv, send, accept
 * and connect give EAGAIN, as TCP's, once they pass), the receive low
 * water mark and the priority.  Only what differs from the defaults.
 */
struct sock_opts {
	struct timeval rcvto, sndto;
	int lowat, prio;
};

static void sock_opts_read(int fd, struct sock_opts *o)
{
	socklen_t len;

	memset(o, 0, sizeof(*o));
	len = sizeof(o->rcvto);
	if (preload_real.getsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &o->rcvto,
				    &len) < 0)
		memset(&o->rcvto, 0, sizeof(o->rcvto));
	len = sizeof(o->sndto);
	if (preload_real.getsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &o->sndto,
				    &len) < 0)
		memset(&o->sndto, 0, sizeof(o->sndto));
	len = sizeof(int);
	if (preload_real.getsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &o->lowat,
				    &len) < 0)
		o->lowat = 1;
	len = sizeof(int);
	if (preload_real.getsockopt(fd, SOL_SOCKET, SO_PRIORITY, &o->prio,
				    &len) < 0)
		o->prio = 0;
}

static void sock_opts_set(int fd, const struct sock_opts *o)
{
	if (o->rcvto.tv_sec || o->rcvto.tv_usec)
		preload_real.setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &o->rcvto,
					sizeof(o->rcvto));
	if (o->sndto.tv_sec || o->sndto.tv_usec)
		preload_real.setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &o->sndto,
					sizeof(o->sndto));
	if (o->lowat > 1)
		preload_real.setsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &o->lowat,
					sizeof(int));
	if (o->prio > 0)
		preload_real.setsockopt(fd, SOL_SOCKET, SO_PRIORITY, &o->prio,
					sizeof(int));
}

static void sock_opts_carry(int from, int to)
{
	struct sock_opts o;

	sock_opts_read(from, &o);
	sock_opts_set(to, &o);
}

/* bufs: prog_bufs'; the SO_SNDBUF of a pending stream is the service's
 * to set (it must stay unwritable until the outcome). */
static void carry_opts(int tcp, int nfd, const int bufs[2], int pending,
		       int linger0, int *nodelay, int *keepidle)
{
	struct linger lg = { 1, 0 };
	socklen_t len = sizeof(int);
	int v;

	if (bufs[0])
		preload_real.setsockopt(nfd, SOL_SOCKET, SO_RCVBUF, &bufs[0],
					sizeof(int));
	if (bufs[1] && !pending)
		preload_real.setsockopt(nfd, SOL_SOCKET, SO_SNDBUF, &bufs[1],
					sizeof(int));
	if (linger0)
		preload_real.setsockopt(nfd, SOL_SOCKET, SO_LINGER, &lg,
					sizeof(lg));
	sock_opts_carry(tcp, nfd);
	*nodelay = 0;
	if (preload_real.getsockopt(tcp, IPPROTO_TCP, TCP_NODELAY, nodelay,
				    &len) < 0)
		*nodelay = 0;
	len = sizeof(int);
	*keepidle = 0;
	if (preload_real.getsockopt(tcp, SOL_SOCKET, SO_KEEPALIVE, &v,
				    &len) == 0 && v) {
		preload_real.setsockopt(nfd, SOL_SOCKET, SO_KEEPALIVE, &v,
					sizeof(v));
		len = sizeof(int);
		if (preload_real.getsockopt(tcp, IPPROTO_TCP, TCP_KEEPIDLE,
					    keepidle, &len) < 0 ||
		    *keepidle <= 0)
			*keepidle = 7200;
	}
}

static void keepalive_tell(int fd);
static void linger_tell(int fd, const struct linger *lg);

/*
 * The options an accepted TCP connection inherits from its listener, as
 * the kernel copies them in its accept: what the program set on the
 * socket before listen, and on the listener after.  An SDP listener is a
 * unix socket: it keeps SO_KEEPALIVE, SO_LINGER and the buffer sizes
 * itself, the cache TCP_NODELAY and TCP_KEEPIDLE (-1: never set).
 */
struct listen_opts {
	int keepalive, nodelay, keepidle, bufs[2], v6only, reuseport;
	struct linger lg;
	struct sock_opts so;
};

static int opt_get(int fd, int level, int name, int *v)
{
	socklen_t len = sizeof(*v);

	if (preload_real.getsockopt(fd, level, name, v, &len) == 0)
		return 0;
	if (preload_cache_getopt(fd, level, name, v) == 0)
		return 0;
	*v = -1;
	return -1;
}

static void listen_opts_read(int fd, struct listen_opts *o)
{
	socklen_t len = sizeof(o->lg);

	if (opt_get(fd, SOL_SOCKET, SO_KEEPALIVE, &o->keepalive) < 0)
		o->keepalive = 0;
	if (preload_real.getsockopt(fd, SOL_SOCKET, SO_LINGER, &o->lg,
				    &len) < 0)
		o->lg = (struct linger){ 0, 0 };
	opt_get(fd, IPPROTO_TCP, TCP_NODELAY, &o->nodelay);
	opt_get(fd, IPPROTO_TCP, TCP_KEEPIDLE, &o->keepidle);
	if (opt_get(fd, IPPROTO_IPV6, IPV6_V6ONLY, &o->v6only) < 0)
		o->v6only = -1;		/* not AF_INET6 */
	if (opt_get(fd, SOL_SOCKET, SO_REUSEPORT, &o->reuseport) < 0)
		o->reuseport = 0;
	sock_opts_read(fd, &o->so);
}

/* A unix stream socket's default buffer sizes {SO_RCVBUF, SO_SNDBUF},
 * read once: a listener's that differ were set by the program. */
static int unix_bufs[2];
static pthread_once_t unix_bufs_once = PTHREAD_ONCE_INIT;

static void unix_bufs_read(void)
{
	socklen_t len;
	int s = preload_real.socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (s < 0)
		return;
	len = sizeof(int);
	preload_real.getsockopt(s, SOL_SOCKET, SO_RCVBUF, &unix_bufs[0], &len);
	len = sizeof(int);
	preload_real.getsockopt(s, SOL_SOCKET, SO_SNDBUF, &unix_bufs[1], &len);
	preload_real.close(s);
}

/* On the unix listener fd that has just replaced the TCP socket. */
static void listen_opts_keep(int fd, const struct listen_opts *o)
{
	if (o->keepalive > 0)
		preload_real.setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE,
					&o->keepalive, sizeof(int));
	if (o->lg.l_onoff)
		preload_real.setsockopt(fd, SOL_SOCKET, SO_LINGER, &o->lg,
					sizeof(o->lg));
	if (o->bufs[0])
		preload_real.setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &o->bufs[0],
					sizeof(int));
	if (o->bufs[1])
		preload_real.setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &o->bufs[1],
					sizeof(int));
	if (o->nodelay >= 0)
		preload_cache_setopt(fd, IPPROTO_TCP, TCP_NODELAY, &o->nodelay,
				     sizeof(int));
	if (o->keepidle > 0)
		preload_cache_setopt(fd, IPPROTO_TCP, TCP_KEEPIDLE,
				     &o->keepidle, sizeof(int));
	if (o->v6only >= 0)
		preload_cache_setopt(fd, IPPROTO_IPV6, IPV6_V6ONLY,
				     &o->v6only, sizeof(int));
	if (o->reuseport > 0)
		preload_real.setsockopt(fd, SOL_SOCKET, SO_REUSEPORT,
					&o->reuseport, sizeof(int));
	sock_opts_set(fd, &o->so);
	preload_cache_mark(fd, PRELOAD_MARK_PIN, 1);
}

/*
 * s, just accepted on our listener lfd, gets the listener's options: an
 * SDP stream s (sdp) as connect_sdp gives them (the service told of
 * SO_LINGER {1, 0} and SO_KEEPALIVE), a TCP connection the service
 * accepted on the listener's TCP half the ones the program set after
 * listen (those before it the kernel copied).
 */
static void listen_opts_inherit(int lfd, int s, int sdp)
{
	struct listen_opts o;
	int v, i;
	static const int bufopt[2] = { SO_RCVBUF, SO_SNDBUF };
	socklen_t len;

	listen_opts_read(lfd, &o);
	sock_opts_set(s, &o.so);	/* a unix accept copies none */
	pthread_once(&unix_bufs_once, unix_bufs_read);
	for (i = 0; i < 2; i++) {
		len = sizeof(int);
		if (preload_real.getsockopt(lfd, SOL_SOCKET, bufopt[i], &v,
					    &len) == 0 && unix_bufs[i] &&
		    v != unix_bufs[i]) {
			v /= 2;
			preload_real.setsockopt(s, SOL_SOCKET, bufopt[i], &v,
						sizeof(int));
		}
	}
	if (!sdp) {
		preload_real.setsockopt(s, SOL_SOCKET, SO_KEEPALIVE,
					&o.keepalive, sizeof(int));
		preload_real.setsockopt(s, SOL_SOCKET, SO_LINGER, &o.lg,
					sizeof(o.lg));
		if (o.nodelay >= 0)
			preload_real.setsockopt(s, IPPROTO_TCP, TCP_NODELAY,
						&o.nodelay, sizeof(int));
		if (o.keepidle > 0)
			preload_real.setsockopt(s, IPPROTO_TCP, TCP_KEEPIDLE,
						&o.keepidle, sizeof(int));
		return;
	}
	if (o.nodelay > 0)
		preload_cache_setopt(s, IPPROTO_TCP, TCP_NODELAY, &o.nodelay,
				     sizeof(int));
	if (o.keepidle > 0)
		preload_cache_setopt(s, IPPROTO_TCP, TCP_KEEPIDLE, &o.keepidle,
				     sizeof(int));
	if (o.lg.l_onoff) {
		preload_real.setsockopt(s, SOL_SOCKET, SO_LINGER, &o.lg,
					sizeof(o.lg));
		if (!o.lg.l_linger)
			linger_tell(s, &o.lg);
	}
	if (o.keepalive > 0) {
		preload_real.setsockopt(s, SOL_SOCKET, SO_KEEPALIVE,
					&o.keepalive, sizeof(int));
		keepalive_tell(s);
	}
}

/*
 * 0: fd is now an SDP connection (*pending: still connecting, for a
 * non-blocking socket: the service answered at once); -1 with errno from
 * the service.
 */
static int connect_sdp(int fd, int family, const struct sockaddr *sa,
		       enum sdp_use use, int *pending)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	struct sdp_ctl_req req;
	struct sdp_ctl_reply rep;
	struct linger lg = { 0, 0 };
	int fl, fdfl, nfd, nodelay, keepidle, bufs[2], linger0 = 0, r;
	unsigned int svc, n;

	*pending = 0;
	fl = fcntl(fd, F_GETFL);
	fdfl = fcntl(fd, F_GETFD);
	if (fl < 0 || fdfl < 0)
		return -1;
	memset(&req, 0, sizeof(req));
	req.op = SDP_CTL_CONNECT;
	if (preload_real.getsockname(fd, (struct sockaddr *)&ss, &len) == 0 &&
	    ss.ss_family == family &&
	    (!is_any((struct sockaddr *)&ss) || sa_port((void *)&ss)))
		addr_set(&req.local, (struct sockaddr *)&ss);
	addr_set(&req.remote, sa);
	req.timeout_ms = connect_timeout(use);
	prog_bufs(fd, bufs);
	len = sizeof(lg);
	if (preload_real.getsockopt(fd, SOL_SOCKET, SO_LINGER, &lg,
				    &len) == 0 && lg.l_onoff && !lg.l_linger) {
		linger0 = 1;
		req.flags |= SDP_CTL_F_ABORT;
	}
	if (fl & O_NONBLOCK) {
		req.flags |= SDP_CTL_F_ASYNC;
		if (use == SDP_USE_BOTH)
			req.flags |= SDP_CTL_F_BOTH;
		req.sndbuf = (uint32_t)bufs[1];
	}
	/* a non-blocking connect's answer comes at once and is waited
	 * through signals (TCP's never says EINTR); where several services
	 * are named (partitions), the first whose interface reaches the
	 * destination takes it, the others say ENETUNREACH at once */
	n = preload_ctl_count(SDP_CTL_ENV);
	for (svc = 0;; svc++) {
		if (svc + 1 < n)
			req.flags |= SDP_CTL_F_ROUTE;
		else
			req.flags &= ~(uint32_t)SDP_CTL_F_ROUTE;
		r = preload_ctl_call_at(svc, 0, &req, (fl & O_NONBLOCK) ? 0 :
					PRELOAD_CTL_INTR, -1, &rep, &nfd);
		if (svc + 1 >= n || (r == 0 && rep.err != ENETUNREACH) ||
		    (r < 0 && (errno == EINTR || errno == ETIMEDOUT)))
			break;
	}
	if (r < 0) {
		/* no service to ask (not running, or IBGW_SDP_SOCKET names
		 * none): SDP's network is not there, which a TCP program
		 * knows as ENETUNREACH, not ENOENT */
		if (errno == ENOENT || errno == ECONNREFUSED) {
			preload_log(PRELOAD_LOG_WARN, "no SDP service to ask: "
				    "%s", strerror(errno));
			errno = ENETUNREACH;
		}
		return -1;
	}
	if (rep.err || nfd < 0) {
		errno = rep.err ? rep.err : EPROTO;
		return -1;
	}
	*pending = !!(rep.flags & SDP_CTL_R_PENDING);
	carry_opts(fd, nfd, bufs, *pending, linger0, &nodelay, &keepidle);
	if (replace_fd(fd, nfd, fl, fdfl, true) < 0)
		return -1;
	preload_epoll_moved(fd);
	preload_fd_sdp(fd);
	preload_cache_put(fd, &rep.local, &rep.remote);
	if (*pending)
		preload_cache_flags(fd, SDP_CTL_R_PENDING);
	if (nodelay)
		preload_cache_setopt(fd, IPPROTO_TCP, TCP_NODELAY, &nodelay,
				     sizeof(nodelay));
	if (lg.l_onoff && lg.l_linger > 0)	/* its close waits */
		preload_real.setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg,
					sizeof(lg));
	if (keepidle) {		/* SO_KEEPALIVE set before connect */
		preload_cache_setopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &keepidle,
				     sizeof(keepidle));
		keepalive_tell(fd);
	}
	return 0;
}

/*
 * Where a non-blocking connect on our stream fd stands: 0 (up, or never
 * pending), SDP_CTL_R_PENDING, or SDP_CTL_R_FAILED with *err its errno
 * (cleared in the service if take, as reading TCP's SO_ERROR clears
 * it).  Asks the service only while the cache does not know it up.
 */
static unsigned int stream_state(int fd, int take, int *err)
{
	struct preload_sock s;
	struct sdp_ctl_req req;
	struct sdp_ctl_reply rep;
	unsigned int f;

	*err = 0;
	if (preload_cache_get(fd, &s) < 0 || !s.flags)
		return 0;
	memset(&req, 0, sizeof(req));
	req.op = SDP_CTL_INFO;
	if (take)
		req.flags = SDP_CTL_F_TAKE;
	if (preload_stream_call(fd, &req, &rep) < 0 ||
	    (rep.err && !(rep.flags & SDP_CTL_R_FAILED)))
		return s.flags & SDP_CTL_R_FAILED;
	f = rep.flags & (SDP_CTL_R_PENDING | SDP_CTL_R_FAILED);
	preload_cache_flags(fd, f);
	if (f & SDP_CTL_R_FAILED)
		*err = rep.err;
	return f;
}

/* connect on one of our streams, as TCP answers it. */
static int connect_again(int fd)
{
	socklen_t len = sizeof(int);
	unsigned int st;
	int err, v;

	st = stream_state(fd, 1, &err);
	if (st == SDP_CTL_R_PENDING) {
		errno = EALREADY;
		return -1;
	}
	if (st == SDP_CTL_R_FAILED) {
		/* the kernel's ECONNRESET of the failure, consumed */
		preload_real.getsockopt(fd, SOL_SOCKET, SO_ERROR, &v, &len);
		preload_cache_mark(fd, PRELOAD_MARK_INPROGRESS, -1);
		errno = err ? err : ECONNABORTED;
		return -1;
	}
	/* the first connect after a non-blocking one completed: 0, as
	 * TCP's (the socket was still SS_CONNECTING), EISCONN after */
	if (preload_cache_mark(fd, PRELOAD_MARK_INPROGRESS, -1))
		return 0;
	errno = EISCONN;
	return -1;
}

/* A TCP socket that stays one: its epoll registrations stay valid. */
static int tcp_connect(int fd, const struct sockaddr *sa, socklen_t len)
{
	preload_epoll_fresh(fd, false);
	return preload_real.connect(fd, sa, len);
}

EXPORT int connect(int fd, const struct sockaddr *sa, socklen_t len)
{
	char dst[PRELOAD_SA_STRLEN];
	enum sdp_use use;
	int family, e, pending;

	init();
	if (preload_off())
		return preload_real.connect(fd, sa, len);
	if (preload_rds_is(fd))
		return preload_rds_connect(fd, sa, len);
	if (!sa || len < sizeof(struct sockaddr_in) ||
	    (sa->sa_family != AF_INET && sa->sa_family != AF_INET6) ||
	    (sa->sa_family == AF_INET6 && len < sizeof(struct sockaddr_in6)))
		return tcp_connect(fd, sa, len);
	family = sock_tcp_family(fd);
	if (!family) {
		/* connect again on an SDP connection: as TCP answers */
		if (sock_int(fd, SO_DOMAIN) == AF_UNIX &&
		    preload_kind(fd) == PRELOAD_STREAM)
			return connect_again(fd);
		return tcp_connect(fd, sa, len);
	}
	if (sa->sa_family != family || is_loopback(sa) || is_any(sa))
		return tcp_connect(fd, sa, len);
	use = preload_policy(SDP_ROLE_CLIENT, sa);
	if (use != SDP_USE_SDP && use != SDP_USE_BOTH) {
		preload_log_tcp("connect", sa, use);
		return tcp_connect(fd, sa, len);
	}
	preload_sa_str(sa, dst, sizeof(dst));
	if (connect_sdp(fd, family, sa, use, &pending) == 0) {
		preload_log(PRELOAD_LOG_INFO, "connect %s: SDP%s", dst,
			    pending ? ", in progress" : "");
		if (pending) {
			preload_cache_mark(fd, PRELOAD_MARK_INPROGRESS, 1);
			errno = EINPROGRESS;
			return -1;
		}
		return 0;
	}
	e = errno;
	if (e == EINTR || use == SDP_USE_SDP) {
		preload_log(PRELOAD_LOG_ERR, "connect %s: SDP: %s", dst,
			    strerror(e));
		errno = e;
		return -1;
	}
	preload_log(PRELOAD_LOG_INFO, "connect %s: SDP: %s; TCP instead", dst,
		    strerror(e));
	return tcp_connect(fd, sa, len);
}

/* --- bind ----------------------------------------------------------------- */

/*
 * A 'both' listener's TCP socket is the service's once the program
 * listens, and the service learns lazily that the program closed its
 * listener: a program that listens again on the port (iperf3 -s after
 * each test) would find it taken.  So a bind that fails with EADDRINUSE
 * asks the service to let go of the port if no program holds its
 * listener any more, and tries once again.  Other binds cost nothing.
 */
EXPORT int bind(int fd, const struct sockaddr *sa, socklen_t len)
{
	struct sdp_ctl_req req;
	struct sdp_ctl_reply rep;
	unsigned int svc, n;
	int r, e, freed;

	init();
	if (preload_off())
		return preload_real.bind(fd, sa, len);
	if (preload_rds_is(fd))
		return preload_rds_bind(fd, sa, len);
	r = preload_real.bind(fd, sa, len);
	if (r == 0 || errno != EADDRINUSE || !sa ||
	    (sa->sa_family != AF_INET && sa->sa_family != AF_INET6) ||
	    !sock_tcp_family(fd) || !sa_port(sa))
		return r;
	e = errno;
	/* every service: a 'both' listener's TCP half is the first one's,
	 * but each partition's listener holds the port for SDP */
	n = preload_ctl_count(SDP_CTL_ENV);
	for (svc = 0, freed = 0; svc < n; svc++) {
		memset(&req, 0, sizeof(req));
		req.op = SDP_CTL_RELEASE;
		addr_set(&req.local, sa);
		if (preload_ctl_call_at(svc, 0, &req, 0, -1, &rep, NULL) == 0 &&
		    !rep.err)
			freed = 1;
	}
	if (!freed) {
		errno = e;
		return -1;
	}
	preload_log(PRELOAD_LOG_INFO, "bind: the service let go of port %u",
		    (unsigned int)sa_port(sa));
	return preload_real.bind(fd, sa, len);
}

/*
 * Listeners accept found not to be ours (TCP ones, or a program's own
 * unix ones), by fd number: accept reserves no descriptor for them (see
 * accept4).  A hint: listen clears it, and so does a connection of ours
 * taken on one (an fd number reused for a listener of ours by dup2, or
 * passed in, is unreserved for that first accept only).
 */
#define PLAIN_LFD_MAX	4096
#define PLAIN_LFD_BITS	(8 * sizeof(unsigned long))
static unsigned long plain_lfd[PLAIN_LFD_MAX / PLAIN_LFD_BITS];

static int plain_lfd_is(int fd)
{
	return fd >= 0 && fd < PLAIN_LFD_MAX &&
	       (__atomic_load_n(&plain_lfd[fd / PLAIN_LFD_BITS],
				__ATOMIC_RELAXED) >> (fd % PLAIN_LFD_BITS) & 1);
}

static void plain_lfd_set(int fd, int on)
{
	unsigned long bit;

	if (fd < 0 || fd >= PLAIN_LFD_MAX)
		return;
	bit = 1UL << (fd % PLAIN_LFD_BITS);
	if (on)
		__atomic_fetch_or(&plain_lfd[fd / PLAIN_LFD_BITS], bit,
				  __ATOMIC_RELAXED);
	else if (plain_lfd_is(fd))
		__atomic_fetch_and(&plain_lfd[fd / PLAIN_LFD_BITS], ~bit,
				   __ATOMIC_RELAXED);
}

/* --- listen -------------------------------------------------------------- */

/*
 * Where several services are named (one per partition of the node), the
 * others take their partitions' connections for the listener the first
 * made, on the port it bound.  A service that refuses (its partition has
 * the port taken, or it is not running) leaves its partition out, said
 * in the log: the listener works in the others.
 */
static void adopt_listener(int lfd, const struct sdp_ctl_req *orig,
			   const struct sdp_ctl_reply *made)
{
	char a[PRELOAD_SA_STRLEN];
	struct sdp_ctl_req req;
	struct sdp_ctl_reply rep;
	unsigned int svc, n = preload_ctl_count(SDP_CTL_ENV);

	int e;

	for (svc = 1; svc < n; svc++) {
		req = *orig;
		if (made->local.family)
			req.local = made->local;
		req.flags = (req.flags & ~(uint32_t)SDP_CTL_F_BOTH) |
			    SDP_CTL_F_ADOPT;
		if (preload_ctl_call_at(svc, 0, &req, 0, lfd, &rep, NULL) < 0)
			e = errno;
		else if (!(e = rep.err))
			continue;
		preload_sa_str((const struct sockaddr *)&req.local, a,
			       sizeof(a));
		preload_log(PRELOAD_LOG_WARN, "listen %s: SDP service %u of "
			    "%u: %s; not listening there", a, svc + 1, n,
			    strerror(e));
	}
}

static int listen_sdp(int fd, const struct sockaddr *local, int backlog,
		      enum sdp_use use)
{
	struct sdp_ctl_req req;
	struct sdp_ctl_reply rep;
	struct listen_opts o;
	int fl, fdfl, nfd;

	fl = fcntl(fd, F_GETFL);
	fdfl = fcntl(fd, F_GETFD);
	if (fl < 0 || fdfl < 0)
		return -1;
	listen_opts_read(fd, &o);
	prog_bufs(fd, o.bufs);
	memset(&req, 0, sizeof(req));
	req.op = SDP_CTL_LISTEN;
	addr_set(&req.local, local);
	req.backlog = backlog;
	if (use == SDP_USE_BOTH)
		req.flags = SDP_CTL_F_BOTH;
	if (o.v6only > 0)
		req.flags |= SDP_CTL_F_V6ONLY;
	if (o.reuseport > 0)
		req.flags |= SDP_CTL_F_REUSEPORT;
	if (preload_ctl_call(&req, use == SDP_USE_BOTH ? fd : -1, &rep,
			     &nfd) < 0)
		return -1;
	if (rep.err || nfd < 0) {
		errno = rep.err ? rep.err : EPROTO;
		return -1;
	}
	adopt_listener(nfd, &req, &rep);
	if (replace_fd(fd, nfd, fl, fdfl, false) < 0)
		return -1;
	preload_epoll_moved(fd);
	preload_cache_put(fd, rep.local.family ? &rep.local : &req.local,
			  NULL);
	listen_opts_keep(fd, &o);
	return 0;
}

EXPORT int listen(int fd, int backlog)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	char a[PRELOAD_SA_STRLEN];
	enum sdp_use use;
	int family, e;

	init();
	if (preload_off())
		return preload_real.listen(fd, backlog);
	family = sock_tcp_family(fd);
	if (!family && preload_rds_is(fd)) {
		errno = EOPNOTSUPP;	/* sock_no_listen(); the pair: EINVAL */
		return -1;
	}
	if (!family ||
	    preload_real.getsockname(fd, (struct sockaddr *)&ss, &len) < 0 ||
	    is_loopback((struct sockaddr *)&ss))
		return preload_real.listen(fd, backlog);
	use = preload_policy(SDP_ROLE_SERVER, (struct sockaddr *)&ss);
	if (use == SDP_USE_BOTH) {
		/* TCP first: it binds an unbound socket, and its port is
		 * the one SDP listens on too */
		if (preload_real.listen(fd, backlog) < 0)
			return -1;
		len = sizeof(ss);
		if (preload_real.getsockname(fd, (struct sockaddr *)&ss,
					     &len) < 0)
			return 0;
	} else if (use != SDP_USE_SDP) {
		preload_log_tcp("listen", (struct sockaddr *)&ss, use);
		return preload_real.listen(fd, backlog);
	}
	preload_sa_str((struct sockaddr *)&ss, a, sizeof(a));
	if (listen_sdp(fd, (struct sockaddr *)&ss, backlog, use) == 0) {
		plain_lfd_set(fd, 0);
		preload_log(PRELOAD_LOG_INFO, "listen %s: SDP%s", a,
			    use == SDP_USE_BOTH ? " and TCP" : "");
		return 0;
	}
	e = errno;
	if (use == SDP_USE_BOTH) {
		preload_log(PRELOAD_LOG_INFO, "listen %s: SDP: %s; TCP only",
			    a, strerror(e));
		return 0;
	}
	preload_log(PRELOAD_LOG_ERR, "listen %s: SDP: %s", a, strerror(e));
	errno = e;
	return -1;
}

/* --- accept -------------------------------------------------------------- */

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* TCP connections whose socket the kernel could not give us (no free
 * descriptor for the SCM_RIGHTS: another thread took the one reserved) */
static unsigned int accept_lost;

/* The reserved descriptor goes, so that the TCP socket the header may
 * carry has a place. */
static void spare_release(int *spare)
{
	if (*spare >= 0)
		preload_real.close(*spare);
	*spare = -1;
}

/*
 * The header the service writes first on an accepted stream, and the TCP
 * socket that may come with it (*tcp, else -1).  *spare, a descriptor
 * reserved for that socket, is released just before the first read.  0;
 * -1: not a connection to hand to the program; -2: the TCP socket that
 * came with it was dropped by the kernel (MSG_CTRUNC: no free
 * descriptor), the connection is lost.
 */
static int accept_header(int s, int cloexec, struct sdp_ctl_accept *h,
			 int *tcp, int *spare)
{
	union {
		char buf[CMSG_SPACE(4 * sizeof(int))];
		struct cmsghdr align;
	} c;
	int64_t deadline = now_ms() + ACCEPT_HEADER_MS;
	size_t got = 0;
	struct cmsghdr *cm;
	int trunc = 0;

	*tcp = -1;
	while (got < sizeof(*h)) {
		struct iovec iov = { (char *)h + got, sizeof(*h) - got };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
				     .msg_control = c.buf,
				     .msg_controllen = sizeof(c.buf) };
		struct pollfd p = { .fd = s, .events = POLLIN };
		int64_t left = deadline - now_ms();
		ssize_t n;

		if (left <= 0 || poll(&p, 1, (int)left) <= 0)
			goto bad;
		spare_release(spare);
		n = preload_real.recvmsg(s, &mh, MSG_DONTWAIT | (cloexec ? MSG_CMSG_CLOEXEC
							    : 0));
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n <= 0)
			goto bad;
		if (mh.msg_flags & MSG_CTRUNC)
			trunc = 1;
		for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
			size_t i, k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
			int f;

			if (cm->cmsg_type != SCM_RIGHTS)
				continue;
			for (i = 0; i < k; i++) {
				memcpy(&f, CMSG_DATA(cm) + i * sizeof(int), 4);
				if (*tcp < 0)
					*tcp = f;
				else
					preload_real.close(f);
			}
		}
		got += (size_t)n;
	}
	if (h->magic != SDP_CTL_MAGIC)
		goto bad;
	if (h->kind == SDP_CTL_ACC_TCP && *tcp < 0 && trunc)
		return -2;
	if (h->kind == SDP_CTL_ACC_TCP && *tcp >= 0 &&
	    sock_tcp_family(*tcp))
		return 0;
	if (h->kind == SDP_CTL_ACC_SDP && *tcp < 0 && addr_len(&h->remote))
		return 0;
bad:
	if (*tcp >= 0)
		preload_real.close(*tcp);
	*tcp = -1;
	return -1;
}

static int peer_is(int s, pid_t pid)
{
	struct ucred uc;
	socklen_t len = sizeof(uc);

	return preload_real.getsockopt(s, SOL_SOCKET, SO_PEERCRED, &uc,
				       &len) == 0 && uc.pid == pid;
}

/* A connection another service made: one of the others where several
 * are named (a listener it adopted), or the one started after the
 * listener's own had gone (it took the listener over). */
static int from_other_service(int s)
{
	static pid_t known;	/* the last one found: asked once */
	struct ucred uc;
	socklen_t len = sizeof(uc);

	if (preload_real.getsockopt(s, SOL_SOCKET, SO_PEERCRED, &uc,
				    &len) < 0 || uc.pid <= 0)
		return 0;
	if (uc.pid == __atomic_load_n(&known, __ATOMIC_RELAXED))
		return 1;
	if (!preload_ctl_is_service(SDP_CTL_ENV, SDP_CTL_NAME, uc.pid))
		return 0;
	__atomic_store_n(&known, uc.pid, __ATOMIC_RELAXED);
	return 1;
}

/*
 * s, just accepted on one of our listeners: the connection to hand to the
 * program (s itself, or the TCP socket that came on it), or -1 when s was
 * a probe or not the service's (s is then closed), -2 (errno
 * ECONNABORTED) when the TCP connection that came on it is lost.  *spare
 * is released.
 */
static int accept_conn(int lfd, int s, pid_t svc, int flags,
		       struct sockaddr *out, socklen_t *outlen, int *spare)
{
	struct sdp_ctl_accept h;
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	int tcp, r = -1;

	if (!(peer_is(s, svc) || from_other_service(s)) ||
	    (r = accept_header(s, flags & SOCK_CLOEXEC, &h, &tcp,
			       spare)) < 0) {
		spare_release(spare);
		preload_real.close(s);
		if (r == -2) {
			preload_log(PRELOAD_LOG_ERR, "accept on fd %d: a TCP "
				    "connection lost, no descriptor free for "
				    "its socket (%u so far)", lfd,
				    __atomic_add_fetch(&accept_lost, 1,
						       __ATOMIC_RELAXED));
			errno = ECONNABORTED;
			return -2;
		}
		return -1;
	}
	if (tcp < 0) {
		preload_fd_sdp(s);
		preload_cache_put(s, &h.local, &h.remote);
		listen_opts_inherit(lfd, s, 1);
		addr_out(out, outlen, &h.remote, addr_len(&h.remote));
		return s;
	}
	preload_real.close(s);
	if (preload_real.getpeername(tcp, (struct sockaddr *)&ss, &len) < 0 ||
	    ((flags & SOCK_NONBLOCK) &&
	     fcntl(tcp, F_SETFL, fcntl(tcp, F_GETFL) | O_NONBLOCK) < 0)) {
		preload_real.close(tcp);
		return -1;
	}
	listen_opts_inherit(lfd, tcp, 0);
	addr_out(out, outlen, &ss, len);
	return tcp;
}

/*
 * An RDS socket is the connected end of a unix pair, which accept refuses
 * with EINVAL; the kernel's RDS has sock_no_accept(): EOPNOTSUPP (after
 * accept4's own check of the flags).  Only looked at after a failure.
 */
static int accept_failed(int fd, int flags)
{
	if (errno == EINVAL && !(flags & ~(SOCK_CLOEXEC | SOCK_NONBLOCK)) &&
	    preload_rds_is(fd))
		errno = EOPNOTSUPP;
	return -1;
}

/*
 * The real accept4, with the caller's flags; only a unix peer address
 * makes us look at the listener's name.  A probe or a bad header is
 * skipped: accept again (a non-blocking listener then says EAGAIN, as
 * the kernel would).
 *
 * A TCP connection of a 'both' listener comes as a unix stream carrying
 * its socket (SCM_RIGHTS): two descriptors where the kernel's accept
 * needs one, and the kernel drops a passed socket it has no descriptor
 * for, with the connection.  So a descriptor is reserved first (an
 * eventfd: a dup of the listener, inherited by a fork in another thread
 * meanwhile, would keep the listener alive) and released just before
 * the header is read: out of descriptors, accept says EMFILE at once,
 * nothing taken, as the kernel's does with none free.  A listener found
 * not to be ours is spared this after its first accept (plain_lfd).
 */
EXPORT int accept4(int fd, struct sockaddr *out, socklen_t *outlen,
		   int flags)
{
	struct sockaddr_storage ss;
	socklen_t len;
	pid_t svc = 0;
	int s, spare, e;

	init();
	if (preload_off())
		return preload_real.accept4(fd, out, outlen, flags);
	for (;;) {
		spare = -1;
		if (!plain_lfd_is(fd)) {
			spare = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
			if (spare < 0 && (errno == EMFILE || errno == ENFILE))
				return -1;
		}
		len = sizeof(ss);
		s = preload_real.accept4(fd, (struct sockaddr *)&ss, &len,
					 flags);
		if (s < 0) {
			e = errno;
			if (spare < 0)
				return accept_failed(fd, flags);
			spare_release(&spare);
			/* the reserved one was the last: a listener not ours
			 * takes a connection with it, as the kernel's */
			if (e == EMFILE && !svc)
				svc = preload_listener_pid(fd);
			if (e == EMFILE && svc < 0) {
				plain_lfd_set(fd, 1);
				continue;
			}
			errno = e;
			return accept_failed(fd, flags);
		}
		if (ss.ss_family == AF_UNIX && !svc)
			svc = preload_listener_pid(fd);
		if (ss.ss_family != AF_UNIX || svc < 0) {
			if (spare >= 0) {
				spare_release(&spare);
				plain_lfd_set(fd, 1);
			}
			addr_out(out, outlen, &ss, len);
			return s;
		}
		plain_lfd_set(fd, 0);
		s = accept_conn(fd, s, svc, flags, out, outlen, &spare);
		if (s >= 0 || s == -2)
			return s < 0 ? -1 : s;
	}
}

EXPORT int accept(int fd, struct sockaddr *out, socklen_t *outlen)
{
	return accept4(fd, out, outlen, 0);
}

/* --- names --------------------------------------------------------------- */

static int name_ours(int fd, struct sockaddr *out, socklen_t *outlen,
		     int peer)
{
	struct preload_sock s;
	union sdp_ctl_addr *a = peer ? &s.remote : &s.local;

	int e;

	if (preload_kind(fd) == PRELOAD_NOT_OURS || preload_cache_get(fd, &s))
		return -1;
	if (peer && s.flags && stream_state(fd, 0, &e)) {
		errno = ENOTCONN;	/* connecting, or failed */
		return 1;
	}
	if (!addr_len(a)) {
		errno = ENOTCONN;
		return 1;
	}
	addr_out(out, outlen, a, addr_len(a));
	return 0;
}

static int name_call(int fd, struct sockaddr *out, socklen_t *outlen,
		     int peer)
{
	int (*real)(int, struct sockaddr *, socklen_t *);
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	int rc;

	init();
	real = peer ? preload_real.getpeername : preload_real.getsockname;
	if (preload_off())
		return real(fd, out, outlen);
	if (!out || !outlen)
		return real(fd, out, outlen);
	rc = real(fd, (struct sockaddr *)&ss, &len);
	if (rc == 0 && ss.ss_family == AF_UNIX && preload_rds_is(fd))
		return preload_rds_name(fd, out, outlen, peer);
	if (rc == 0 && ss.ss_family == AF_UNIX) {
		rc = name_ours(fd, out, outlen, peer);
		if (rc >= 0)
			return rc ? -1 : 0;
		rc = 0;
	}
	if (rc == 0)
		addr_out(out, outlen, &ss, len);
	return rc;
}

EXPORT int getsockname(int fd, struct sockaddr *out, socklen_t *outlen)
{
	return name_call(fd, out, outlen, 0);
}

EXPORT int getpeername(int fd, struct sockaddr *out, socklen_t *outlen)
{
	return name_call(fd, out, outlen, 1);
}

/* --- options ------------------------------------------------------------- */

static int ours_family(int fd)
{
	struct preload_sock s;

	if (preload_kind(fd) == PRELOAD_NOT_OURS)
		return 0;
	if (preload_cache_get(fd, &s) == 0 && s.local.family)
		return s.local.family;
	return AF_INET;
}

static int opt_failed(int e)
{
	return e == EOPNOTSUPP || e == ENOPROTOOPT;
}

static int opt_level(int level)
{
	return level == IPPROTO_TCP || level == IPPROTO_IP ||
	       level == IPPROTO_IPV6 || level == SOL_SOCKET;
}

static void opt_int(void *val, socklen_t *len, int v)
{
	if (*len >= sizeof(int)) {
		memcpy(val, &v, sizeof(int));
		*len = sizeof(int);
	}
}

/*
 * Options whose value is a byte string of variable length, empty on a
 * TCP socket where none was set (OpenSSH's sshd refuses a connection
 * whose IP_OPTIONS are not empty).
 */
static int opt_varlen(int level, int name)
{
	if (level == IPPROTO_IP)
		return name == IP_OPTIONS || name == IP_PKTOPTIONS;
	if (level == IPPROTO_IPV6)
		return name == IPV6_HOPOPTS || name == IPV6_RTHDR ||
		       name == IPV6_DSTOPTS || name == IPV6_RTHDRDSTOPTS ||
		       name == IPV6_2292PKTOPTIONS;
	return 0;
}

/*
 * An option the program has not set on one of our streams, which the
 * unix socket underneath does not have: what a new TCP socket of the
 * stream's family answers, the kernel's defaults and errors (IP_TTL 64,
 * TCP_KEEPIDLE 7200 or the namespace's sysctls, TCP_MAXSEG 536 as on a
 * TCP socket not connected yet, TCP_CONGESTION its name, ENOPROTOOPT for
 * an option TCP lacks).  Without a descriptor to spare: 0.
 */
static int tcp_default(int family, int level, int name, void *val,
		       socklen_t *len)
{
	int s, r, e;

	s = preload_real.socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0) {
		if (*len < sizeof(int)) {
			errno = EINVAL;
			return -1;
		}
		memset(val, 0, *len);
		opt_int(val, len, 0);
		return 0;
	}
	r = preload_real.getsockopt(s, level, name, val, len);
	e = errno;
	preload_real.close(s);
	errno = e;
	return r;
}

static int family_or(int fd)
{
	int f = ours_family(fd);

	return f ? f : AF_INET;
}

EXPORT int getsockopt(int fd, int level, int name, void *val,
		      socklen_t *len)
{
	int rc, e, v, family;

	init();
	if (preload_off())
		return preload_real.getsockopt(fd, level, name, val, len);
	if (preload_rds_is(fd))	/* every level (others: ENOPROTOOPT) */
		return preload_rds_getsockopt(fd, level, name, val, len);
	if (level == SOL_SOCKET && name == SO_PEERCRED && val && len &&
	    ours_family(fd)) {
		/* the unix socket's peer is the host's SDP service, not the
		 * remote program: TCP's answer, no process, no credentials
		 * (a program trusting SO_PEERCRED would take the remote
		 * peer for root) */
		struct ucred uc = { 0, (uid_t)-1, (gid_t)-1 };

		if (*len > sizeof(uc))
			*len = sizeof(uc);
		memcpy(val, &uc, *len);
		return 0;
	}
	if (level == SOL_SOCKET && (name == SO_PEERSEC ||
				    name == SO_PEERGROUPS) && ours_family(fd)) {
		errno = name == SO_PEERGROUPS ? ENODATA : ENOPROTOOPT;
		return -1;	/* as TCP answers */
	}
	rc = preload_real.getsockopt(fd, level, name, val, len);
	if (rc == 0) {
		if (level != SOL_SOCKET || !val || !len ||
		    *len < sizeof(int))
			return 0;
		memcpy(&v, val, sizeof(int));
		if (name == SO_ERROR && v == ECONNRESET &&
		    preload_kind(fd) == PRELOAD_STREAM &&
		    stream_state(fd, 1, &e) == SDP_CTL_R_FAILED && e)
			opt_int(val, len, e);	/* the connect's own error */
		else if (name == SO_ERROR && v == 0 && preload_sdp_is(fd) &&
			 preload_stream_reset(fd, 0))
			opt_int(val, len, errno);	/* a reset's, once */
		else if (name == SO_DOMAIN && v == AF_UNIX &&
		    (family = ours_family(fd)))
			opt_int(val, len, family);
		else if (name == SO_PROTOCOL && v == 0 && ours_family(fd))
			opt_int(val, len, IPPROTO_TCP);
		return 0;
	}
	e = errno;
	if (!opt_failed(e) || !opt_level(level) || !val || !len ||
	    !ours_family(fd)) {
		errno = e;
		return -1;
	}
	if (level == IPPROTO_TCP && name == TCP_INFO) {
		struct tcp_info ti;

		memset(&ti, 0, sizeof(ti));
		ti.tcpi_state = 1;	/* TCP_ESTABLISHED */
		if (*len > sizeof(ti))
			*len = sizeof(ti);
		memcpy(val, &ti, *len);
		return 0;
	}
	if (opt_varlen(level, name)) {
		*len = 0;	/* no IP options, no extension headers set */
		return 0;
	}
	if (preload_cache_getopt(fd, level, name, &v) == 0) {
		if (*len < sizeof(int)) {
			errno = EINVAL;
			return -1;
		}
		memset(val, 0, *len);
		opt_int(val, len, v);
		return 0;
	}
	return tcp_default(family_or(fd), level, name, val, len);
}

/*
 * SO_LINGER on one of our streams: the service is told, so that with
 * {1, 0} the stream's last close (the kernel's release of it, whichever
 * process and dup closes it last, or exit) resets the connection
 * (AbortConn) as TCP's sends RST.  Before setsockopt returns, so that a
 * close right after it finds the service knowing.
 */
static void linger_tell(int fd, const struct linger *lg)
{
	struct sdp_ctl_req req;
	struct sdp_ctl_reply rep;

	if (sock_int(fd, SO_DOMAIN) != AF_UNIX ||
	    preload_kind(fd) != PRELOAD_STREAM)
		return;
	memset(&req, 0, sizeof(req));
	req.op = SDP_CTL_LINGER;
	if (lg->l_onoff && !lg->l_linger)
		req.flags = SDP_CTL_F_ABORT;
	if (preload_stream_call(fd, &req, &rep) == 0 && !rep.err)
		preload_log(PRELOAD_LOG_INFO, "SO_LINGER %d,%d: %s at close",
			    lg->l_onoff, lg->l_linger,
			    req.flags ? "AbortConn" : "DisConn");
}

/*
 * SO_KEEPALIVE and TCP_KEEPIDLE on one of our streams: the service
 * probes the connection after that long idle (TCP's default 7200 s)
 * when it is sooner than its own keepalive.  The unix socket keeps
 * SO_KEEPALIVE, the cache TCP_KEEPIDLE.
 */
static void keepalive_tell(int fd)
{
	struct sdp_ctl_req req;
	struct sdp_ctl_reply rep;
	int on = 0, idle = 0;
	socklen_t len = sizeof(on);

	if (!preload_sdp_is(fd) ||
	    preload_real.getsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on,
				    &len) < 0)
		return;
	if (preload_cache_getopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle) < 0 ||
	    idle <= 0)
		idle = 7200;
	memset(&req, 0, sizeof(req));
	req.op = SDP_CTL_KEEPALIVE;
	req.timeout_ms = on ? (uint32_t)(idle > 4000000 ? 4000000 : idle) *
			      1000u : 0;
	if (preload_stream_call(fd, &req, &rep) == 0 && !rep.err)
		preload_log(PRELOAD_LOG_INFO, "SO_KEEPALIVE %d, TCP_KEEPIDLE "
			    "%d: told the service", on, idle);
}

/*
 * A TCP option on one of our streams, as do_tcp_setsockopt() takes it
 * before looking at the value: one Linux does not have is ENOPROTOOPT,
 * and all but the string and structure ones want an int (EINVAL).
 */
static int tcp_opt_check(int name, socklen_t len)
{
	switch (name) {
	case 13:	/* TCP_CONGESTION */
	case 14:	/* TCP_MD5SIG */
	case 22:	/* TCP_REPAIR_OPTIONS */
	case 29:	/* TCP_REPAIR_WINDOW */
	case 31:	/* TCP_ULP */
	case 32:	/* TCP_MD5SIG_EXT */
	case 33:	/* TCP_FASTOPEN_KEY */
		return 0;
	}
	if (name < 1 || name > 37)	/* TCP_TX_DELAY, 6.1's last */
		return ENOPROTOOPT;
	return len < sizeof(int) ? EINVAL : 0;
}

EXPORT int setsockopt(int fd, int level, int name, const void *val,
		      socklen_t len)
{
	int e;

	init();
	if (preload_off())
		return preload_real.setsockopt(fd, level, name, val, len);
	if (preload_rds_is(fd))	/* every level (others: ENOPROTOOPT) */
		return preload_rds_setsockopt(fd, level, name, val, len);
	if (preload_real.setsockopt(fd, level, name, val, len) == 0) {
		if (level == SOL_SOCKET && name == SO_LINGER && val &&
		    len >= sizeof(struct linger))
			linger_tell(fd, val);
		else if (level == SOL_SOCKET && name == SO_KEEPALIVE)
			keepalive_tell(fd);
		return 0;
	}
	e = errno;
	if (!opt_failed(e) || !opt_level(level) || !val ||
	    !ours_family(fd)) {
		errno = e;
		return -1;
	}
	if (level == IPPROTO_TCP && (e = tcp_opt_check(name, len))) {
		errno = e;
		return -1;
	}
	if (level == IPPROTO_TCP && name == TCP_KEEPIDLE &&
	    (len < sizeof(int) || *(const int *)val < 1 ||
	     *(const int *)val > 32767)) {
		errno = EINVAL;		/* MAX_TCP_KEEPIDLE, as TCP's */
		return -1;
	}
	preload_cache_setopt(fd, level, name, val, len);
	if (level == IPPROTO_TCP && name == TCP_KEEPIDLE)
		keepalive_tell(fd);
	return 0;
}

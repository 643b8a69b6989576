// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * AF_RDS sockets for unmodified programs (rds_ctl.h says how they are
 * made).  socket(AF_RDS, SOCK_SEQPACKET, 0) asks the host's RDS service
 * for one end of a unix SOCK_SEQPACKET pair; every datagram on it is
 * struct rds_ctl_hdr and the payload.  The send and receive calls add
 * and strip that header on RDS sockets only, with the kernel's RDS
 * checks and errors; shutdown and a few ioctls (listen and accept in
 * preload.c) only answer as rds_proto_ops does where the pair would
 * answer otherwise.  With no service to ask, socket() is the kernel's.
 *
 * What an fd is comes from a per-fd table (unknown / not RDS / RDS /
 * SDP stream), filled the first time an fd is used, by one getsockname
 * (the pair's program end is bound to "ibgw-rds-s/PID.N"; for another
 * unix socket one getpeername too: an SDP stream's peer is the SDP
 * service's end, "ibgw-sdp-c/PID.N"; connect and accept mark the streams
 * they make), and forgotten by the
 * interposed close, dup2, dup3 and close_range, so that other programs
 * pay one byte's load per call.  A number closed behind our back (by
 * libc itself: fclose of an fdopen()ed socket) and reused stays known as
 * what it was; an RDS call that finds ENOTSOCK looks again.  What the
 * service knows of a socket (its name, its default destination, its
 * buffer sizes) is cached per fd and asked again (INFO) for a new fd, or
 * before an ENOTCONN.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "ulp/preload/preload.h"
#include "ulp/rds/rds_wire.h"

#define EXPORT __attribute__((visibility("default")))

#define FDTAB_SIZE	65536
#define IOV_STACK	16

enum fd_kind {
	FD_UNKNOWN = 0,
	FD_NOT_RDS,		/* nor an SDP stream */
	FD_RDS,
	FD_SDP,			/* one of our SDP streams */
};

struct rds_board;
struct rds_fdinfo {
	union rds_ctl_addr local, peer;	/* family 0: unbound, unconnected */
	int sndbuf, rcvbuf;
	int sent;	/* it sent (here, or the service says so): no TOS now */
	const struct rds_board *board;	/* its service's, once looked up */
	int board_tried;		/* ... and none came */
};

static _Atomic unsigned char fdtab[FDTAB_SIZE];
static struct rds_fdinfo *_Atomic fdinfo[FDTAB_SIZE];
static atomic_uint ctl_ids;

static void init(void)
{
	if (!preload_real.read)
		preload_real_init();
}

/* --- the per-fd table -------------------------------------------------- */

static int sun_rds(const struct sockaddr_un *sun, socklen_t len)
{
	size_t n = sizeof(RDS_CTL_SOCK_PREFIX) - 1;

	return sun->sun_family == AF_UNIX &&
	       len >= offsetof(struct sockaddr_un, sun_path) + 1 + n &&
	       sun->sun_path[0] == '\0' &&
	       memcmp(sun->sun_path + 1, RDS_CTL_SOCK_PREFIX, n) == 0;
}

static enum fd_kind fd_probe(int fd)
{
	struct sockaddr_un sun;
	socklen_t len = sizeof(sun);

	if (preload_real.getsockname(fd, (struct sockaddr *)&sun, &len) < 0 ||
	    sun.sun_family != AF_UNIX)
		return FD_NOT_RDS;
	if (sun_rds(&sun, len))
		return FD_RDS;
	return preload_is_stream(fd) ? FD_SDP : FD_NOT_RDS;
}

static void fd_forget(int fd)
{
	struct rds_fdinfo *i;

	preload_epoll_fresh(fd, false);
	if (fd < 0 || fd >= FDTAB_SIZE)
		return;
	atomic_store(&fdtab[fd], FD_UNKNOWN);
	i = atomic_exchange(&fdinfo[fd], NULL);
	free(i);
}

static enum fd_kind fd_kind(int fd)
{
	enum fd_kind k;

	if (fd < 0)
		return FD_NOT_RDS;
	if (preload_off()) {
		/* no probe; an SDP stream as the plain stream it is */
		k = fd < FDTAB_SIZE ?
		    atomic_load_explicit(&fdtab[fd], memory_order_relaxed) :
		    FD_NOT_RDS;
		return k == FD_RDS ? FD_RDS : FD_NOT_RDS;
	}
	if (fd >= FDTAB_SIZE)
		return fd_probe(fd);
	k = atomic_load_explicit(&fdtab[fd], memory_order_relaxed);
	if (k != FD_UNKNOWN)
		return k;
	k = fd_probe(fd);
	atomic_store(&fdtab[fd], (unsigned char)k);
	return k;
}

bool preload_rds_is(int fd)
{
	init();
	return fd_kind(fd) == FD_RDS;
}

bool preload_sdp_is(int fd)
{
	init();
	return fd_kind(fd) == FD_SDP;
}

void preload_fd_sdp(int fd)
{
	fd_forget(fd);
	if (fd >= 0 && fd < FDTAB_SIZE)
		atomic_store(&fdtab[fd], FD_SDP);
}

/* --- the service --------------------------------------------------------- */

/* The PID of the service of RDS socket fd (its name says it), or 0. */
static pid_t sock_pid(int fd)
{
	struct sockaddr_un sun;
	socklen_t len = sizeof(sun);
	size_t n = sizeof(RDS_CTL_SOCK_PREFIX) - 1;
	long pid;

	if (preload_real.getsockname(fd, (struct sockaddr *)&sun, &len) < 0 ||
	    !sun_rds(&sun, len))
		return 0;
	((char *)&sun)[len < sizeof(sun) ? len : sizeof(sun) - 1] = 0;
	pid = strtol(sun.sun_path + 1 + n, NULL, 10);
	return pid > 0 ? (pid_t)pid : 0;
}

/*
 * A request to the svc-th service (IBGW_RDS_SOCKET may name one per
 * partition), or, about an RDS socket fd where several are named, to
 * the one that has the socket.
 */
static int rds_call_at(unsigned int svc, struct rds_ctl_req *req, int fd,
		       struct rds_ctl_reply *rep, int *recv_fd)
{
	pid_t pid = 0;
	int got = -1;

	if (fd >= 0 && preload_ctl_count(RDS_CTL_ENV) > 1)
		pid = sock_pid(fd);
	req->magic = RDS_CTL_MAGIC;
	req->id = atomic_fetch_add(&ctl_ids, 1) + 1;
	strncpy(req->program, program_invocation_short_name,
		sizeof(req->program) - 1);
	if (preload_ctl_raw(RDS_CTL_ENV, RDS_CTL_NAME, svc, pid, 0, 0, req,
			    sizeof(*req), fd, rep, sizeof(*rep), &got) < 0)
		return -1;
	if (rep->magic != RDS_CTL_MAGIC || rep->id != req->id) {
		if (got >= 0)
			preload_real.close(got);
		errno = EPROTO;
		return -1;
	}
	if (recv_fd)
		*recv_fd = got;
	else if (got >= 0)
		preload_real.close(got);
	return 0;
}

static int rds_call(struct rds_ctl_req *req, int fd, struct rds_ctl_reply *rep,
		    int *recv_fd)
{
	return rds_call_at(0, req, fd, rep, recv_fd);
}

static void info_set(struct rds_fdinfo *i, const struct rds_ctl_reply *r)
{
	i->local = r->local;
	i->peer = r->peer;
	i->sndbuf = r->sndbuf;
	i->rcvbuf = r->rcvbuf;
	if (r->flags & RDS_CTL_R_SENT)
		i->sent = 1;
}

/* The cached state of RDS fd fd, asked for if new (refresh: ask again). */
static struct rds_fdinfo *info_get(int fd, int refresh)
{
	static struct rds_fdinfo spare;	/* fds past the table: not cached */
	struct rds_fdinfo *i = NULL, *o;
	struct rds_ctl_req q;
	struct rds_ctl_reply r;

	if (fd < FDTAB_SIZE) {
		i = atomic_load(&fdinfo[fd]);
		if (i && !refresh)
			return i;
	}
	memset(&q, 0, sizeof(q));
	q.op = RDS_CTL_INFO;
	if (rds_call(&q, fd, &r, NULL) < 0)
		return NULL;
	if (r.err) {
		errno = r.err;
		return NULL;
	}
	if (fd >= FDTAB_SIZE) {
		memset(&spare, 0, sizeof(spare));	/* no board kept */
		info_set(&spare, &r);
		return &spare;
	}
	if (!i) {
		i = calloc(1, sizeof(*i));
		if (!i)
			return NULL;
		o = NULL;
		if (!atomic_compare_exchange_strong(&fdinfo[fd], &o, i)) {
			free(i);
			i = o;
		}
	}
	info_set(i, &r);
	return i;
}

/* --- socket ----------------------------------------------------------------- */

/* A new socket of the svc-th service (its reply in *r): the fd, -1 with
 * errno, or -2 when there is no such service running. */
static int socket_at(unsigned int svc, struct rds_ctl_reply *r)
{
	struct rds_ctl_req q;
	int fd = -1;

	memset(&q, 0, sizeof(q));
	q.op = RDS_CTL_SOCKET;
	if (rds_call_at(svc, &q, -1, r, &fd) < 0)
		return -2;
	if (r->err || fd < 0) {
		if (fd >= 0)
			preload_real.close(fd);
		errno = r->err ? r->err : EPROTO;
		return -1;
	}
	return fd;
}

static int rds_socket(int type)
{
	struct rds_ctl_reply r;
	struct rds_fdinfo *i;
	unsigned int svc, n = preload_ctl_count(RDS_CTL_ENV);
	int fd = -2;

	/* the first service running; bind moves the socket to the
	 * partition whose address it names */
	for (svc = 0; svc < n && fd == -2; svc++)
		fd = socket_at(svc, &r);
	if (fd == -2)
		return -2;	/* no service: the kernel's */
	if (fd < 0)
		return -1;
	/* it came with MSG_CMSG_CLOEXEC */
	if (!(type & SOCK_CLOEXEC))
		fcntl(fd, F_SETFD, 0);
	if ((type & SOCK_NONBLOCK) &&
	    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) < 0) {
		preload_real.close(fd);
		return -1;
	}
	fd_forget(fd);
	/* several services: bind may move it to another (move_bind), so
	 * its epoll registrations until then are remembered */
	if (n > 1)
		preload_epoll_fresh(fd, true);
	if (fd < FDTAB_SIZE) {
		atomic_store(&fdtab[fd], FD_RDS);
		i = calloc(1, sizeof(*i));
		if (i) {
			info_set(i, &r);
			atomic_store(&fdinfo[fd], i);
		}
	}
	preload_log(PRELOAD_LOG_INFO, "socket(AF_RDS): fd %d, the service's "
		    "socket %u", fd, r.sock_id);
	return fd;
}

EXPORT int socket(int domain, int type, int protocol)
{
	int fd;

	init();
	if (preload_off())
		return preload_real.socket(domain, type, protocol);
	if (domain == AF_RDS) {
		if ((type & ~(SOCK_NONBLOCK | SOCK_CLOEXEC)) != SOCK_SEQPACKET ||
		    protocol) {
			errno = ESOCKTNOSUPPORT;	/* rds_create() */
			return -1;
		}
		fd = rds_socket(type);
		if (fd != -2)
			return fd;
		preload_log(PRELOAD_LOG_INFO, "socket(AF_RDS): no RDS service: "
			    "%s; the kernel's", strerror(errno));
	}
	fd = preload_real.socket(domain, type, protocol);
	if (fd >= 0 && fd < FDTAB_SIZE)
		atomic_store(&fdtab[fd], FD_NOT_RDS);
	/* a TCP socket connect or listen may replace */
	if (fd >= 0 && (domain == AF_INET || domain == AF_INET6) &&
	    (type & 0xf) == SOCK_STREAM &&
	    (protocol == 0 || protocol == IPPROTO_TCP))
		preload_epoll_fresh(fd, true);
	return fd;
}

/*
 * A seccomp filter (prctl PR_SET_SECCOMP, or the seccomp system call through
 * syscall() as libseccomp makes it): the preload steps aside for good
 * (preload_off)
 * before the filter can forbid its calls.  Streams already SDP go on as
 * the plain unix streams they are: data both ways and end of file at
 * the end, but a reset reads as end of file, the first write after it
 * raises SIGPIPE, and new connections are TCP.
 */
static void sandbox_on(void)
{
	if (preload_off())
		return;
	preload_log(PRELOAD_LOG_INFO, "seccomp filter: every call passes "
		    "through from now on");
	atomic_store(&preload_sandboxed, 1);
}

EXPORT int prctl(int option, ...)
{
	unsigned long a[4];
	va_list ap;
	int i, r;

	init();
	va_start(ap, option);
	for (i = 0; i < 4; i++)	/* as glibc's own prctl reads them */
		a[i] = va_arg(ap, unsigned long);
	va_end(ap);
	if (option == PR_SET_SECCOMP)
		sandbox_on();
	r = preload_real.prctl(option, a[0], a[1], a[2], a[3]);
	return r;
}

/* libseccomp loads its filters with syscall(SYS_seccomp, ...). */
EXPORT long syscall(long n, ...)
{
	long a[6];
	va_list ap;
	int i;

	init();
	va_start(ap, n);
	for (i = 0; i < 6; i++)	/* as glibc's syscall passes them on */
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (n == SYS_seccomp && a[0] == SECCOMP_SET_MODE_FILTER)
		sandbox_on();
	return preload_real.syscall(n, a[0], a[1], a[2], a[3], a[4], a[5]);
}

/* --- close and dup ------------------------------------------------------------ */

bool preload_sdp_known(int fd)
{
	return fd >= 0 && fd < FDTAB_SIZE &&
	       atomic_load_explicit(&fdtab[fd], memory_order_relaxed) ==
	       FD_SDP;
}

EXPORT int close(int fd)
{
	bool sdp;

	init();
	sdp = preload_sdp_known(fd) && !preload_off();
	fd_forget(fd);
	if (sdp)
		return preload_stream_close(fd);
	return preload_real.close(fd);
}

/* r, a new duplicate of old: nothing known of what r was before; a
 * duplicate of a fresh TCP socket goes with it at connect or listen. */
static int duped(int old, int r)
{
	if (r >= 0 && r != old) {
		fd_forget(r);
		preload_fresh_dup(old, r);
	}
	return r;
}

EXPORT int dup(int old)
{
	init();
	return duped(old, preload_real.dup(old));
}

EXPORT int dup2(int old, int nfd)
{
	init();
	return duped(old, preload_real.dup2(old, nfd));
}

EXPORT int dup3(int old, int nfd, int flags)
{
	init();
	return duped(old, preload_real.dup3(old, nfd, flags));
}

/* fcntl's third argument, whatever its type, is one register wide
 * (glibc's own fcntl reads it as a pointer). */
static int fcntl_any(int (*real)(int, int, ...), int fd, int cmd,
		     va_list ap)
{
	void *arg = va_arg(ap, void *);

	if (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC)
		return duped(fd, real(fd, cmd, arg));
	return real(fd, cmd, arg);
}

EXPORT int fcntl(int fd, int cmd, ...)
{
	va_list ap;
	int r;

	init();
	va_start(ap, cmd);
	r = fcntl_any(preload_real.fcntl, fd, cmd, ap);
	va_end(ap);
	return r;
}

EXPORT int fcntl64(int fd, int cmd, ...)
{
	va_list ap;
	int r;

	init();
	va_start(ap, cmd);
	r = fcntl_any(preload_real.fcntl64, fd, cmd, ap);
	va_end(ap);
	return r;
}

EXPORT int close_range(unsigned int lo, unsigned int hi, int flags)
{
	unsigned int f;

	init();
	if (!preload_real.close_range) {
		errno = ENOSYS;
		return -1;
	}
	for (f = lo; f <= hi && f < FDTAB_SIZE; f++)
		fd_forget((int)f);
	return preload_real.close_range(lo, hi, flags);
}

/* --- addresses ---------------------------------------------------------------- */

static int v4_bad(in_addr_t a)
{
	uint32_t h = ntohl(a);

	return h == INADDR_ANY || h == INADDR_BROADCAST || (h >> 28) == 0xe;
}

/* A destination as rds_sendmsg() checks it: 0, or EINVAL. */
static int dest_check(const struct sockaddr *sa, socklen_t len,
		      union rds_ctl_addr *out)
{
	memset(out, 0, sizeof(*out));
	if (len < sizeof(struct sockaddr_in))
		return EINVAL;
	if (sa->sa_family == AF_INET) {
		memcpy(&out->v4, sa, sizeof(out->v4));
		return v4_bad(out->v4.sin_addr.s_addr) ? EINVAL : 0;
	}
	if (sa->sa_family == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
		const struct in6_addr *a;

		memcpy(&out->v6, sa, sizeof(out->v6));
		a = &out->v6.sin6_addr;
		if (IN6_IS_ADDR_V4MAPPED(a)) {
			in_addr_t v4;

			memcpy(&v4, a->s6_addr + 12, 4);
			return v4_bad(v4) ? EINVAL : 0;
		}
		if (IN6_IS_ADDR_UNSPECIFIED(a) || IN6_IS_ADDR_MULTICAST(a))
			return EINVAL;
		if (IN6_IS_ADDR_LINKLOCAL(a) && !out->v6.sin6_scope_id)
			return EINVAL;
		return 0;
	}
	return EINVAL;
}

static int addr_is_v4(const union rds_ctl_addr *a)
{
	return a->family == AF_INET ||
	       (a->family == AF_INET6 &&
		IN6_IS_ADDR_V4MAPPED(&a->v6.sin6_addr));
}

static socklen_t addr_len(const union rds_ctl_addr *a)
{
	return a->family == AF_INET6 ? sizeof(a->v6) : sizeof(a->v4);
}

static void addr_out(struct sockaddr *out, socklen_t *len,
		     const union rds_ctl_addr *a)
{
	socklen_t n = addr_len(a);

	if (!out || !len)
		return;
	memcpy(out, a, *len < n ? *len : n);
	*len = n;
}

/* --- bind, connect, names -------------------------------------------------------- */

static int sa_check(const struct sockaddr *sa, socklen_t len,
		    union rds_ctl_addr *a)
{
	memset(a, 0, sizeof(*a));
	if (!sa || len < sizeof(sa_family_t))
		return EINVAL;
	if (sa->sa_family == AF_INET) {
		if (len < sizeof(a->v4))
			return EINVAL;
		memcpy(&a->v4, sa, sizeof(a->v4));
		return 0;
	}
	if (sa->sa_family == AF_INET6) {
		if (len < sizeof(a->v6))
			return EINVAL;
		memcpy(&a->v6, sa, sizeof(a->v6));
		return 0;
	}
	return -1;
}

static int ctl_op(int fd, enum rds_ctl_op op, const union rds_ctl_addr *a,
		  int level, int name, int val)
{
	struct rds_fdinfo *i;
	struct rds_ctl_req q;
	struct rds_ctl_reply r;

	memset(&q, 0, sizeof(q));
	q.op = op;
	if (a)
		q.addr = *a;
	q.level = level;
	q.name = name;
	q.val = val;
	if (rds_call(&q, fd, &r, NULL) < 0)
		return -1;
	if (r.err) {
		errno = r.err;
		return -1;
	}
	i = info_get(fd, 0);
	if (i)
		info_set(i, &r);
	return 0;
}

static int sock_flag(int fd, int level, int name);
static void sock_flag_set(int fd, int level, int name, int v);

/* 127.0.0.0/8, ::1 and IPv4-mapped 127.0.0.0/8: the kernel's loop
 * transport's (rds_trans_get_preferred) */
static int addr_loopback(const union rds_ctl_addr *a)
{
	const uint8_t *b = a->v6.sin6_addr.s6_addr;

	if (a->family == AF_INET)
		return (ntohl(a->v4.sin_addr.s_addr) >> 24) == 127;
	return a->family == AF_INET6 &&
	       (IN6_IS_ADDR_LOOPBACK(&a->v6.sin6_addr) ||
		(IN6_IS_ADDR_V4MAPPED(&a->v6.sin6_addr) && b[12] == 127));
}

/*
 * Where IBGW_RDS_SOCKET names several services (one per partition of the
 * node), socket() made fd at the first running one; an address that
 * service does not have (EADDRNOTAVAIL) may be another's: a new socket
 * is made there, given what fd had (buffer sizes, default destination,
 * the options the preload keeps), bound, and put in fd's place (its
 * FD_CLOEXEC, O_NONBLOCK and epoll registrations kept); the first socket
 * goes.  A duplicate of fd made before the bind stays the first socket.
 */
static int move_bind(int fd, const union rds_ctl_addr *a)
{
	static const struct { int level, name; } keep[] = {
		{ SOL_SOCKET, SO_ZEROCOPY },
		{ SOL_RDS, RDS_CTL_SO_TRANSPORT },
		{ SOL_RDS, RDS_CTL_RECVERR },
	};
	struct rds_ctl_reply r;
	struct rds_fdinfo *i = info_get(fd, 0), old;
	unsigned int svc, n = preload_ctl_count(RDS_CTL_ENV), k;
	pid_t pid = sock_pid(fd);
	int nfd, fl, fdfl, v;

	if (!i)
		return -1;
	old = *i;
	fl = fcntl(fd, F_GETFL);
	fdfl = fcntl(fd, F_GETFD);
	if (fl < 0 || fdfl < 0)
		return -1;
	for (svc = 0; svc < n; svc++) {
		nfd = socket_at(svc, &r);
		if (nfd < 0)
			continue;
		if (sock_pid(nfd) == pid) {	/* fd's own service */
			preload_real.close(nfd);
			continue;
		}
		if ((r.sndbuf != old.sndbuf &&
		     ctl_op(nfd, RDS_CTL_SETOPT, NULL, SOL_SOCKET, SO_SNDBUFFORCE,
			    old.sndbuf / 2) < 0 &&
		     ctl_op(nfd, RDS_CTL_SETOPT, NULL, SOL_SOCKET, SO_SNDBUF,
			    old.sndbuf / 2) < 0) ||
		    (r.rcvbuf != old.rcvbuf &&
		     ctl_op(nfd, RDS_CTL_SETOPT, NULL, SOL_SOCKET, SO_RCVBUFFORCE,
			    old.rcvbuf / 2) < 0 &&
		     ctl_op(nfd, RDS_CTL_SETOPT, NULL, SOL_SOCKET, SO_RCVBUF,
			    old.rcvbuf / 2) < 0) ||
		    ctl_op(nfd, RDS_CTL_BIND, a, 0, 0, 0) < 0 ||
		    (old.peer.family &&
		     ctl_op(nfd, RDS_CTL_CONNECT, &old.peer, 0, 0, 0) < 0)) {
			v = errno;
			preload_real.close(nfd);
			fd_forget(nfd);
			if (v == EADDRNOTAVAIL)
				continue;
			errno = v;
			return -1;
		}
		for (k = 0; k < sizeof(keep) / sizeof(keep[0]); k++)
			if ((v = sock_flag(fd, keep[k].level, keep[k].name)))
				sock_flag_set(nfd, keep[k].level, keep[k].name,
					      v);
		if (preload_real.dup3(nfd, fd, (fdfl & FD_CLOEXEC) ?
				      O_CLOEXEC : 0) < 0) {
			v = errno;
			preload_real.close(nfd);
			fd_forget(nfd);
			errno = v;
			return -1;
		}
		preload_real.close(nfd);
		fd_forget(nfd);
		if (fl & O_NONBLOCK)
			fcntl(fd, F_SETFL, fl);
		preload_epoll_moved(fd);
		fd_forget(fd);
		if (fd < FDTAB_SIZE)
			atomic_store(&fdtab[fd], FD_RDS);
		info_get(fd, 1);
		preload_log(PRELOAD_LOG_INFO, "bind(AF_RDS) fd %d: the address "
			    "of RDS service %u of %u", fd, svc + 1, n);
		return 0;
	}
	errno = EADDRNOTAVAIL;
	return -1;
}

/* BIND at fd's service, then (several named) at the others.  Bound,
 * the socket stays where it is: its epoll registrations need not be
 * remembered any more (rds_socket). */
static int bind_any(int fd, const union rds_ctl_addr *a)
{
	if (ctl_op(fd, RDS_CTL_BIND, a, 0, 0, 0) == 0) {
		preload_epoll_fresh(fd, false);
		return 0;
	}
	if (errno != EADDRNOTAVAIL || preload_ctl_count(RDS_CTL_ENV) < 2)
		return -1;
	return move_bind(fd, a);
}

int preload_rds_bind(int fd, const struct sockaddr *sa, socklen_t len)
{
	union rds_ctl_addr a;
	int e = sa_check(sa, len, &a);

	if (e) {
		errno = EINVAL;
		return -1;
	}
	/* rds_bind() with SO_RDS_TRANSPORT set: an address the transport
	 * (IB) does not have is ENOPROTOOPT, a loopback one too */
	if (sock_flag(fd, SOL_RDS, RDS_CTL_SO_TRANSPORT)) {
		if (addr_loopback(&a)) {
			errno = ENOPROTOOPT;
			return -1;
		}
		if (bind_any(fd, &a) < 0) {
			if (errno == EADDRNOTAVAIL)
				errno = ENOPROTOOPT;
			return -1;
		}
		return 0;
	}
	return bind_any(fd, &a);
}

int preload_rds_connect(int fd, const struct sockaddr *sa, socklen_t len)
{
	union rds_ctl_addr a;
	int e = sa_check(sa, len, &a);

	if (e) {
		errno = e < 0 ? EAFNOSUPPORT : EINVAL;
		return -1;
	}
	return ctl_op(fd, RDS_CTL_CONNECT, &a, 0, 0, 0);
}

/* rds_getname(): an unbound, unconnected socket says AF_UNSPEC, 16
 * bytes of zeros. */
int preload_rds_name(int fd, struct sockaddr *out, socklen_t *len, int peer)
{
	struct rds_fdinfo *i = info_get(fd, 0);
	union rds_ctl_addr none;

	if (!i)
		return -1;
	if (peer) {
		if (!i->peer.family) {
			errno = ENOTCONN;
			return -1;
		}
		addr_out(out, len, &i->peer);
		return 0;
	}
	if (!i->local.family) {
		memset(&none, 0, sizeof(none));
		if (i->peer.family == AF_INET6 && !addr_is_v4(&i->peer))
			none.family = AF_INET6;
		else if (i->peer.family)
			none.family = AF_INET;
		addr_out(out, len, &none);
		return 0;
	}
	addr_out(out, len, &i->local);
	return 0;
}

/* --- options ----------------------------------------------------------------- */

static void int_out(void *val, socklen_t *len, int v)
{
	memcpy(val, &v, sizeof(v));
	*len = sizeof(v);
}

/* The kernel's numbers (asm-generic/socket.h, linux/rds.h). */
#ifndef SO_TIMESTAMP_OLD
#define SO_TIMESTAMP_OLD	29
#define SO_TIMESTAMPNS_OLD	35
#define SO_TIMESTAMP_NEW	63
#define SO_TIMESTAMPNS_NEW	64
#endif
#ifndef SO_ZEROCOPY
#define SO_ZEROCOPY		60
#endif

/*
 * RDS_RECVERR and SO_ZEROCOPY are the socket's, not the descriptor's: the
 * service does not keep them, so the cache does, by the unix end's inode
 * (preload_cache.c), pinned; every dup and a forked child's copy of the
 * cache see them, an exec()ed program starts with them off.
 */
static int sock_flag(int fd, int level, int name)
{
	int v;

	if (preload_cache_getopt(fd, level, name, &v) < 0)
		return 0;
	return v;
}

static void sock_flag_set(int fd, int level, int name, int v)
{
	preload_cache_setopt(fd, level, name, &v, sizeof(v));
	if (v)
		preload_cache_mark(fd, PRELOAD_MARK_PIN, 1);
}

/* SOL_SOCKET on an RDS socket: what sock_getsockopt() says of PF_RDS
 * where the unix socket would say otherwise; the rest is the pair's. */
static int sol_socket_get(int fd, int name, void *val, socklen_t *len)
{
	struct rds_fdinfo *i;
	int v;

	switch (name) {
	case SO_SNDBUF:
	case SO_RCVBUF:
		if (*len < sizeof(int))
			break;
		i = info_get(fd, 1);
		if (!i)
			return -1;
		int_out(val, len, name == SO_SNDBUF ? i->sndbuf : i->rcvbuf);
		return 0;
	case SO_DOMAIN:
		if (*len < sizeof(int))
			break;
		int_out(val, len, AF_RDS);
		return 0;
	case SO_ZEROCOPY:
		v = sock_flag(fd, SOL_SOCKET, SO_ZEROCOPY);
		if (*len > sizeof(v))
			*len = sizeof(v);
		memcpy(val, &v, *len);
		return 0;
	case SO_PEEK_OFF:
		/* no set_peek_off in rds_proto_ops */
		errno = EOPNOTSUPP;
		return -1;
	case SO_PEERCRED: {
		/* the pair's peer is ipoibd (root), not a program: an RDS
		 * socket has no peer, so no process, no credentials */
		struct ucred uc = { 0, (uid_t)-1, (gid_t)-1 };

		if (*len > sizeof(uc))
			*len = sizeof(uc);
		memcpy(val, &uc, *len);
		return 0;
	}
	case SO_PEERGROUPS:
		errno = ENODATA;	/* no peer credentials */
		return -1;
	case SO_PEERSEC:
		errno = ENOPROTOOPT;	/* not a unix socket */
		return -1;
	default:
		return preload_real.getsockopt(fd, SOL_SOCKET, name, val, len);
	}
	errno = EINVAL;
	return -1;
}

int preload_rds_getsockopt(int fd, int level, int name, void *val,
			   socklen_t *len)
{
	struct rds_fdinfo *i;

	if (!val || !len) {
		errno = EFAULT;
		return -1;
	}
	if (level == SOL_SOCKET)
		return sol_socket_get(fd, name, val, len);
	/* rds_getsockopt(): SOL_RDS alone; RDS_CONG_MONITOR and the
	 * timestamps are set only */
	if (level != SOL_RDS || (name != RDS_CTL_RECVERR &&
				 name != RDS_CTL_SO_TRANSPORT)) {
		errno = ENOPROTOOPT;
		return -1;
	}
	if (*len < sizeof(int)) {
		errno = EINVAL;
		return -1;
	}
	if (name == RDS_CTL_RECVERR) {
		int_out(val, len, sock_flag(fd, SOL_RDS, RDS_CTL_RECVERR));
		return 0;
	}
	i = info_get(fd, 0);
	if (!i)
		return -1;
	/* RDS_TRANS_NONE until bound or set; bound to a loopback address,
	 * the loop transport's */
	int_out(val, len, addr_loopback(&i->local) ? RDS_CTL_TRANS_LOOP :
		i->local.family ||
		sock_flag(fd, SOL_RDS, RDS_CTL_SO_TRANSPORT) ?
		RDS_CTL_TRANS_IB : ~0);
	return 0;
}

/* The SOL_SOCKET options sock_setsockopt() takes otherwise for PF_RDS
 * than for the pair; the others are the pair's. */
static int sol_socket_set(int fd, int name, const void *val, socklen_t len)
{
	int v;

	switch (name) {
	case SO_SNDBUF:
	case SO_RCVBUF:
	case SO_SNDBUFFORCE:
	case SO_RCVBUFFORCE:
	case SO_ZEROCOPY:
		break;
	case SO_PEEK_OFF:
		/* no set_peek_off in rds_proto_ops; on the pair it would
		 * also make MSG_PEEK skip our header */
		errno = EOPNOTSUPP;
		return -1;
	default:
		return preload_real.setsockopt(fd, SOL_SOCKET, name, val, len);
	}
	if (!val || len < sizeof(int)) {
		errno = EINVAL;
		return -1;
	}
	memcpy(&v, val, sizeof(v));
	if (name != SO_ZEROCOPY)
		return ctl_op(fd, RDS_CTL_SETOPT, NULL, SOL_SOCKET, name, v);
	if (v < 0 || v > 1) {
		errno = EINVAL;
		return -1;
	}
	sock_flag_set(fd, SOL_SOCKET, SO_ZEROCOPY, v);
	return 0;
}

/*
 * rds_cancel_sent_to(): ENOTCONN unbound, before anything else; EINVAL
 * under a sockaddr_in; a sockaddr_in below the size of a sockaddr_in6
 * and a sockaddr_in6 from there, the family not looked at, the address
 * not checked.  One nothing can be sent to has nothing to drop: 0.
 */
static int cancel_sent_to(int fd, const void *val, socklen_t len)
{
	const struct rds_fdinfo *i = info_get(fd, 1);
	union rds_ctl_addr a;
	struct sockaddr_in6 s6;
	struct sockaddr_in s4;

	if (!i)
		return -1;
	if (!i->local.family) {
		errno = ENOTCONN;
		return -1;
	}
	if (!val || len < sizeof(s4)) {
		errno = EINVAL;
		return -1;
	}
	if (len < sizeof(s6)) {
		memcpy(&s4, val, sizeof(s4));
		s4.sin_family = AF_INET;
		if (dest_check((struct sockaddr *)&s4, sizeof(s4), &a))
			return 0;
	} else {
		memcpy(&s6, val, sizeof(s6));
		s6.sin6_family = AF_INET6;
		if (dest_check((struct sockaddr *)&s6, sizeof(s6), &a))
			return 0;
	}
	return ctl_op(fd, RDS_CTL_SETOPT, &a, SOL_RDS, RDS_CTL_CANCEL_SENT_TO,
		      0);
}

/*
 * rds_set_transport(): once only, and not once bound (a bound socket has
 * its transport): EOPNOTSUPP; an int, of a transport the kernel knows
 * (IB, the old iWARP, TCP), else EINVAL; one not there ENOPROTOOPT: all but
 * IB.
 */
static int set_transport(int fd, const void *val, socklen_t len)
{
	const struct rds_fdinfo *i = info_get(fd, 0);
	int v;

	if (!i)
		return -1;
	if (i->local.family || sock_flag(fd, SOL_RDS, RDS_CTL_SO_TRANSPORT)) {
		errno = EOPNOTSUPP;
		return -1;
	}
	if (!val || len != sizeof(int)) {
		errno = EINVAL;
		return -1;
	}
	memcpy(&v, val, sizeof(v));
	if (v < 0 || v >= RDS_CTL_TRANS_COUNT) {
		errno = EINVAL;
		return -1;
	}
	if (v != RDS_CTL_TRANS_IB) {
		errno = ENOPROTOOPT;	/* no TCP transport here */
		return -1;
	}
	sock_flag_set(fd, SOL_RDS, RDS_CTL_SO_TRANSPORT, 1);
	return 0;
}

int preload_rds_setsockopt(int fd, int level, int name, const void *val,
			   socklen_t len)
{
	int v;

	if (level == SOL_SOCKET)
		return sol_socket_set(fd, name, val, len);
	if (level != SOL_RDS) {
		errno = ENOPROTOOPT;
		return -1;
	}
	switch (name) {
	case RDS_CTL_CANCEL_SENT_TO:
		return cancel_sent_to(fd, val, len);
	case RDS_CTL_RECVERR:
		/* accepted: no RDMA operations, so no notifications */
		if (!val || len < sizeof(int)) {
			errno = EINVAL;
			return -1;
		}
		memcpy(&v, val, sizeof(v));
		sock_flag_set(fd, SOL_RDS, RDS_CTL_RECVERR, !!v);
		return 0;
	case RDS_CTL_CONG_MONITOR:
		/* rds_set_bool_option(): an int; accepted, ignored: no
		 * RDS_CMSG_CONG_UPDATE is delivered */
		if (!val || len < sizeof(int)) {
			errno = EINVAL;
			return -1;
		}
		return 0;
	case SO_TIMESTAMP_OLD:
	case SO_TIMESTAMP_NEW:
		/* rds_enable_recvtstamp(): the socket's SOCK_RCVTSTAMP, as
		 * SOL_SOCKET sets it, so the pair's (rds_recv) */
		if (!val || len != sizeof(int)) {
			errno = EFAULT;
			return -1;
		}
		return preload_real.setsockopt(fd, SOL_SOCKET, name, val, len);
	case RDS_CTL_SO_TRANSPORT:
		return set_transport(fd, val, len);
	case RDS_CTL_GET_MR:
	case RDS_CTL_FREE_MR:
	case RDS_CTL_GET_MR_FOR_DEST:
		errno = EOPNOTSUPP;	/* no RDMA operations */
		return -1;
	}
	errno = ENOPROTOOPT;
	return -1;
}

/* --- send --------------------------------------------------------------------- */

/* mh gathers (or scatters) our header h, then m's iovecs: on stack
 * (IOV_STACK + 1 entries) or, for more, allocated.  The array, or NULL
 * (ENOBUFS); the caller frees one that is not stack. */
static struct iovec *iov_wrap(struct iovec *stack, const struct msghdr *m,
			      struct rds_ctl_hdr *h, struct msghdr *mh)
{
	struct iovec *iov = stack;

	if (m->msg_iovlen > IOV_STACK) {
		iov = malloc((m->msg_iovlen + 1) * sizeof(*iov));
		if (!iov) {
			errno = ENOBUFS;
			return NULL;
		}
	}
	iov[0].iov_base = h;
	iov[0].iov_len = sizeof(*h);
	if (m->msg_iovlen)
		memcpy(iov + 1, m->msg_iov, m->msg_iovlen * sizeof(*iov));
	memset(mh, 0, sizeof(*mh));
	mh->msg_iov = iov;
	mh->msg_iovlen = m->msg_iovlen + 1;
	return iov;
}

/* --- the congestion board ------------------------------------------------- */

/*
 * The boards of the services this process's sockets belong to, by the
 * service's PID (a restarted service has a new one; a node in several
 * partitions a service per partition).  A mapping stays once made
 * (another thread may be reading it): at most BOARDS, then the oldest
 * slot is reused, its mapping kept.
 */
#define BOARDS	8
static struct {
	const struct rds_board *_Atomic b;
	_Atomic pid_t pid;
} boards[BOARDS];
static atomic_uint board_next;

static const struct rds_board *board_fetch(int fd, pid_t pid)
{
	const struct rds_board *b;
	struct rds_ctl_req q;
	struct rds_ctl_reply r;
	struct stat st;
	void *map;
	int bfd = -1;

	memset(&q, 0, sizeof(q));
	q.op = RDS_CTL_BOARD;
	/* the socket passed only to find its service */
	if (rds_call(&q, fd, &r, &bfd) < 0 || r.err || bfd < 0 ||
	    fstat(bfd, &st) < 0 || (size_t)st.st_size < sizeof(*b)) {
		if (bfd >= 0)
			preload_real.close(bfd);
		preload_log(PRELOAD_LOG_INFO, "RDS: no congestion board: a "
			    "congested port gives EAGAIN, not ENOBUFS");
		return NULL;
	}
	map = mmap(NULL, sizeof(*b), PROT_READ, MAP_SHARED, bfd, 0);
	preload_real.close(bfd);
	if (map == MAP_FAILED)
		return NULL;
	b = map;
	if (b->magic != RDS_BOARD_MAGIC || b->nslots != RDS_BOARD_SLOTS ||
	    (pid > 0 && b->owner != (uint32_t)pid)) {
		munmap(map, sizeof(*b));
		return NULL;
	}
	return b;
}

/* The board of RDS socket fd's service, mapped read-only on first need
 * and remembered in *i; NULL without. */
static const struct rds_board *board_get(int fd, struct rds_fdinfo *i)
{
	const struct rds_board *b;
	unsigned int k;
	pid_t pid;

	if (i && (i->board || i->board_tried))
		return i->board;
	pid = sock_pid(fd);
	for (k = 0; pid > 0 && k < BOARDS; k++)
		if (atomic_load(&boards[k].pid) == pid &&
		    (b = atomic_load(&boards[k].b)))
			goto found;
	b = board_fetch(fd, pid);
	if (i)
		i->board_tried = 1;
	if (!b)
		return NULL;
	if (pid > 0) {
		k = atomic_fetch_add(&board_next, 1) % BOARDS;
		atomic_store(&boards[k].b, NULL);
		atomic_store(&boards[k].pid, pid);
		atomic_store(&boards[k].b, b);
	}
found:
	if (i)
		i->board = b;
	return b;
}

/* Does the board show dst's port congested? */
static bool board_congested(const struct rds_board *b,
			    const union rds_ctl_addr *dst)
{
	uint8_t key[16];
	uint16_t port;
	unsigned int i, tries;
	uint32_t s1;
	bool on;

	if (dst->family == AF_INET6) {
		memcpy(key, &dst->v6.sin6_addr, 16);
		port = ntohs(dst->v6.sin6_port);
	} else {
		memset(key, 0, 10);
		key[10] = key[11] = 0xff;
		memcpy(key + 12, &dst->v4.sin_addr, 4);
		port = ntohs(dst->v4.sin_port);
	}
	for (i = 0; i < RDS_BOARD_SLOTS; i++) {
		const struct rds_board_slot *sl = &b->slot[i];

		on = false;
		for (tries = 0; tries < 100; tries++) {
			s1 = __atomic_load_n(&sl->seq, __ATOMIC_ACQUIRE);
			if (s1 & 1)
				continue;	/* being written */
			on = sl->used && !memcmp(sl->addr, key, 16);
			if (on)
				on = (sl->bits[port / 8] >> (port % 8)) & 1;
			__atomic_thread_fence(__ATOMIC_ACQUIRE);
			if (__atomic_load_n(&sl->seq, __ATOMIC_RELAXED) == s1)
				break;
		}
		if (on)
			return true;
	}
	return false;
}

/* Is fd O_NONBLOCK?  One fcntl: the flag is the open file's, which
 * another process may change, so it is not cached. */
static bool fd_nonblock(int fd)
{
	int e = errno, fl = preload_real.fcntl(fd, F_GETFL);

	errno = e;
	return fl >= 0 && (fl & O_NONBLOCK);
}

/*
 * An EAGAIN from the pair for a call that was to block (no MSG_DONTWAIT,
 * fd not O_NONBLOCK): its SO_RCVTIMEO or SO_SNDTIMEO ran out, which the
 * kernel's rds_recvmsg() and rds_sendmsg() say as ETIMEDOUT.  Looked at
 * only after an EAGAIN.
 */
static bool timed_out(int fd, int e, int flags)
{
	return (e == EAGAIN || e == EWOULDBLOCK) && !(flags & MSG_DONTWAIT) &&
	       !fd_nonblock(fd);
}

/*
 * nanosleep says EINTR only when a handler of the program's ran.  The
 * kernel's wait (wait_event_interruptible, ERESTARTSYS) restarts the send
 * after a handler with SA_RESTART and fails with EINTR after one without.
 * Which signal came is not known here: the wait goes on when every signal
 * with a handler has SA_RESTART, else EINTR (a program that mixes the two
 * gets EINTR for either).  One sigaction query per signal, on EINTR only.
 */
static bool restart_all(void)
{
	struct sigaction sa;
	int sig;

	for (sig = 1; sig < NSIG; sig++) {
		if (sigaction(sig, NULL, &sa) < 0)
			continue;	/* the C library's own */
		if (sa.sa_handler != SIG_DFL && sa.sa_handler != SIG_IGN &&
		    !(sa.sa_flags & SA_RESTART))
			return false;
	}
	return true;
}

/*
 * The kernel's rds_cong_wait(), on the board (NULL: none, nothing to
 * check): a non-blocking send to a congested port fails with ENOBUFS,
 * nothing queued (poll does not show it: the sender retries, or waits for
 * the map to clear); a blocking one waits until the port clears, without
 * SO_SNDTIMEO (as the kernel's), EINTR when a handler without SA_RESTART
 * ran (restart_all).  0 to go on, or -1 with errno.
 */
static int cong_wait(const struct rds_board *b, int fd,
		     const union rds_ctl_addr *dst, int flags)
{
	struct timespec ms = { 0, 1000000 };

	if (!b || (dst->family == AF_INET6 ? dst->v6.sin6_port :
		   dst->v4.sin_port) == 0)	/* a ping */
		return 0;
	if (!board_congested(b, dst))
		return 0;
	if (flags & MSG_DONTWAIT || fd_nonblock(fd)) {
		errno = ENOBUFS;
		return -1;
	}
	while (board_congested(b, dst)) {
		if (nanosleep(&ms, NULL) == 0 || errno != EINTR ||
		    restart_all())
			continue;
		errno = EINTR;
		return -1;
	}
	return 0;
}

/* linux/rds.h's control message types */
#define RDS_CMSG_RDMA_ARGS		1
#define RDS_CMSG_RDMA_DEST		2
#define RDS_CMSG_RDMA_MAP		3
#define RDS_CMSG_ATOMIC_FADD		6
#define RDS_CMSG_ATOMIC_CSWP		7
#define RDS_CMSG_MASKED_ATOMIC_FADD	8
#define RDS_CMSG_MASKED_ATOMIC_CSWP	9
#define RDS_CMSG_ZCOPY_COOKIE		12

#ifndef MSG_ZEROCOPY
#define MSG_ZEROCOPY	0x4000000
#endif
#ifndef MSG_BATCH
#define MSG_BATCH	0x40000
#endif

/*
 * What one SOL_RDS control message of a send would meet in the kernel
 * (rds_cmsg_send()): there are no RDMA operations here, so RDMA_ARGS,
 * RDMA_MAP and the atomics get EOPNOTSUPP, the kernel's answer on a
 * transport without them (TCP's); RDMA_DEST names a memory region, and
 * none exists here: EINVAL, as for a key the kernel does not know;
 * ZCOPY_COOKIE outside a zero-copy send (there is none here) EINVAL.
 * RDMA_ARGS is looked at first as rds_rdma_extra_size() does: no local
 * vector (nr_local 0) or a cut struct EINVAL, more than UIO_MAXIOV
 * EMSGSIZE.  *group: rds_rm_size()'s (1: ARGS, atomics; 2: DEST, MAP,
 * COOKIE); -1 for a type the kernel does not know.
 */
#define RDS_RDMA_ARGS_LEN	56	/* struct rds_rdma_args */
#define RDS_RDMA_ARGS_NR_LOCAL	32	/* its __u64 nr_local */
static int cmsg_op(int type, const char *data, size_t len, int *group)
{
	uint64_t nr;

	switch (type) {
	case RDS_CMSG_RDMA_ARGS:
		*group |= 1;
		if (len < RDS_RDMA_ARGS_LEN)
			return EINVAL;
		memcpy(&nr, data + RDS_RDMA_ARGS_NR_LOCAL, sizeof(nr));
		if (!nr)
			return EINVAL;
		return nr > UIO_MAXIOV ? EMSGSIZE : EOPNOTSUPP;
	case RDS_CMSG_ATOMIC_FADD:
	case RDS_CMSG_ATOMIC_CSWP:
	case RDS_CMSG_MASKED_ATOMIC_FADD:
	case RDS_CMSG_MASKED_ATOMIC_CSWP:
		*group |= 1;
		return EOPNOTSUPP;
	case RDS_CMSG_RDMA_MAP:
		*group |= 2;
		return EOPNOTSUPP;
	case RDS_CMSG_RDMA_DEST:
	case RDS_CMSG_ZCOPY_COOKIE:
		*group |= 2;
		return EINVAL;
	}
	return -1;
}

/*
 * The program's control messages, as rds_rm_size() and then
 * rds_cmsg_send() walk them: a malformed one, an unknown SOL_RDS type,
 * DEST or MAP with ARGS or an atomic, MSG_ZEROCOPY without a
 * ZCOPY_COOKIE: EINVAL; else the first SOL_RDS one's answer (cmsg_op).
 * Other levels are skipped, as the kernel skips them (nothing goes on to
 * the pair: no SCM_RIGHTS reaches the service).  0, or an errno.
 */
static int cmsg_check(const struct msghdr *m, int flags)
{
	const char *p = m->msg_control;
	size_t left = m->msg_controllen;
	struct cmsghdr c;
	int group = 0, first = 0, e, cookie = 0;

	if (left && !p)
		return EFAULT;
	while (left >= sizeof(c)) {
		memcpy(&c, p, sizeof(c));	/* may be unaligned */
		if (c.cmsg_len < sizeof(c) || c.cmsg_len > left)
			return EINVAL;		/* !CMSG_OK */
		if (c.cmsg_level == SOL_RDS) {
			e = cmsg_op(c.cmsg_type, p + CMSG_LEN(0),
				    c.cmsg_len - CMSG_LEN(0), &group);
			if (e < 0)
				return EINVAL;
			cookie |= c.cmsg_type == RDS_CMSG_ZCOPY_COOKIE;
			if (!first)
				first = e;
		}
		if (CMSG_ALIGN(c.cmsg_len) >= left)
			break;
		p += CMSG_ALIGN(c.cmsg_len);
		left -= CMSG_ALIGN(c.cmsg_len);
	}
	if (((flags & MSG_ZEROCOPY) && !cookie) || group == 3)
		return EINVAL;
	return first;
}

/*
 * rds_sendmsg()'s checks, in its order, before anything reaches the
 * pair: flags, destination, bound, v4/v6, sizes, zero copy, control
 * messages.  MSG_ZEROCOPY passes the flags' check but never sends: with
 * SO_ZEROCOPY the kernel allows it on its TCP transport alone
 * (EOPNOTSUPP for IB), without it rds_rm_size() wants a ZCOPY_COOKIE,
 * which rds_cmsg_zcopy() then refuses (EINVAL).  0, or an errno.
 */
static int send_check(int fd, const struct msghdr *m, int flags,
		      struct rds_ctl_hdr *h, struct rds_fdinfo **ip)
{
	struct rds_fdinfo *i;
	size_t len = 0, k;
	int e;

	if (flags & ~(MSG_DONTWAIT | MSG_ZEROCOPY))
		return EOPNOTSUPP;
	if (m->msg_name && m->msg_namelen) {
		e = dest_check(m->msg_name, m->msg_namelen, &h->peer);
		if (e)
			return e;
	}
	i = info_get(fd, 0);
	if (i && (!i->local.family || (!h->peer.family && !i->peer.family)))
		i = info_get(fd, 1);	/* bound or connected elsewhere? */
	if (!i)
		return errno ? errno : EPROTO;
	*ip = i;
	if (!h->peer.family)
		h->peer = i->peer;
	if (!i->local.family || !h->peer.family)
		return ENOTCONN;
	if (addr_is_v4(&h->peer) != addr_is_v4(&i->local))
		return EOPNOTSUPP;
	/* bound to a link-local name (the service gives its scope), a
	 * link-local peer on another link: EINVAL, as rds_sendmsg() */
	if (h->peer.family == AF_INET6 && i->local.family == AF_INET6 &&
	    IN6_IS_ADDR_LINKLOCAL(&h->peer.v6.sin6_addr) &&
	    h->peer.v6.sin6_scope_id && i->local.v6.sin6_scope_id &&
	    h->peer.v6.sin6_scope_id != i->local.v6.sin6_scope_id)
		return EINVAL;
	for (k = 0; k < m->msg_iovlen; k++)
		len += m->msg_iov[k].iov_len;
	if (len > RDS_MAX_MSG_SIZE || len > (size_t)i->sndbuf / 2)
		return EMSGSIZE;
	if ((flags & MSG_ZEROCOPY) && sock_flag(fd, SOL_SOCKET, SO_ZEROCOPY))
		return EOPNOTSUPP;
	if (m->msg_controllen || (flags & MSG_ZEROCOPY))
		return cmsg_check(m, flags);
	return 0;
}

static ssize_t rds_send(int fd, const struct msghdr *m, int flags)
{
	const struct rds_board *b;
	struct iovec stack[IOV_STACK + 1], *iov;
	struct rds_fdinfo *i = NULL;
	struct rds_ctl_hdr h;
	struct msghdr mh;
	ssize_t n;
	int e;

	memset(&h, 0, sizeof(h));
	h.magic = RDS_HDR_MAGIC;
	e = send_check(fd, m, flags, &h, &i);
	if (e) {
		errno = e;
		return -1;
	}
	/* rds_sendmsg() has its connection (rs_conn) before it waits on
	 * congestion: a TOS is too late from here on (rds_settos) */
	i->sent = 1;
	b = board_get(fd, i);
	if (cong_wait(b, fd, &h.peer, flags) < 0)
		return -1;
	if (b)
		h.flags |= RDS_HDR_F_CHECKED;	/* sent, whatever comes */
	iov = iov_wrap(stack, m, &h, &mh);
	if (!iov)
		return -1;
	n = preload_real.sendmsg(fd, &mh, (flags & MSG_DONTWAIT) |
				 MSG_NOSIGNAL);
	e = errno;
	if (iov != stack)
		free(iov);
	if (n < 0 && timed_out(fd, e, flags))
		e = ETIMEDOUT;
	/* full, and the port congested meanwhile: the kernel's ENOBUFS */
	else if (n < 0 && (e == EAGAIN || e == EWOULDBLOCK) && b &&
		 board_congested(b, &h.peer))
		e = ENOBUFS;
	errno = e;
	if (n < 0)
		return -1;
	return n - (ssize_t)sizeof(h);
}

static ssize_t send_buf(int fd, const void *buf, size_t len, int flags,
			const struct sockaddr *to, socklen_t tolen)
{
	struct iovec iov = { (void *)buf, len };
	struct msghdr m = { .msg_name = (void *)to, .msg_namelen = tolen,
			    .msg_iov = &iov, .msg_iovlen = 1 };

	return rds_send(fd, &m, flags);
}

/* --- receive ------------------------------------------------------------------ */

/* Room for what the pair may attach to a datagram: a timestamp, and what
 * the program's SO_PASSCRED or SO_PASSSEC would add (fds past it, which
 * the service never sends, the kernel closes). */
#define CTL_ROOM	512

/* put_cmsg() on the program's buffer, *off bytes of it used: what does
 * not fit is cut and MSG_CTRUNC set, as the kernel cuts it. */
static void cmsg_put(struct msghdr *m, size_t *off, int type,
		     const void *data, size_t len)
{
	struct cmsghdr c = { .cmsg_len = CMSG_LEN(len),
			     .cmsg_level = SOL_SOCKET, .cmsg_type = type };
	size_t room = m->msg_controllen - *off, n = CMSG_LEN(len);
	char *p = (char *)m->msg_control + *off;

	if (room < n)
		m->msg_flags |= MSG_CTRUNC;
	if (room < sizeof(c))
		return;
	if (room < n)
		n = room;
	memcpy(p, &c, sizeof(c));
	memcpy(p + sizeof(c), data, n - sizeof(c));
	*off += CMSG_SPACE(len) < room ? CMSG_SPACE(len) : room;
}

/* SO_TIMESTAMPNS's timespec as the timeval RDS gives (it looks at
 * SOCK_RCVTSTAMP alone, which SO_TIMESTAMPNS sets too). */
static void cmsg_put_ns(struct msghdr *m, size_t *off,
			const struct cmsghdr *c)
{
	size_t dlen = c->cmsg_len - CMSG_LEN(0);
	struct { long s, ns; } o;	/* __kernel_old_timespec */
	struct { int64_t s, ns; } w;	/* __kernel_timespec */
	long ov[2];			/* __kernel_old_timeval */
	int64_t wv[2];			/* __kernel_sock_timeval */

	if (c->cmsg_type == SO_TIMESTAMPNS_OLD && dlen >= sizeof(o)) {
		memcpy(&o, CMSG_DATA(c), sizeof(o));
		ov[0] = o.s;
		ov[1] = o.ns / 1000;
		cmsg_put(m, off, SO_TIMESTAMP_OLD, ov, sizeof(ov));
	} else if (c->cmsg_type == SO_TIMESTAMPNS_NEW && dlen >= sizeof(w)) {
		memcpy(&w, CMSG_DATA(c), sizeof(w));
		wv[0] = w.s;
		wv[1] = w.ns / 1000;
		cmsg_put(m, off, SO_TIMESTAMP_NEW, wv, sizeof(wv));
	}
}

static void cmsg_close_fds(const struct cmsghdr *c)
{
	size_t i, k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
	int f;

	for (i = 0; i < k; i++) {
		memcpy(&f, CMSG_DATA(c) + i * sizeof(int), sizeof(f));
		preload_real.close(f);
	}
}

/*
 * What the pair attached to a datagram (mh), into the program's buffer
 * as rds_cmsg_recv() gives it: the receive time alone (the time the
 * service queued the datagram on the pair), a timeval as SO_TIMESTAMP
 * (SO_TIMESTAMP_NEW's after SO_TIMESTAMP_NEW or SO_TIMESTAMPNS_NEW).  The
 * unix socket's own (SO_PASSCRED's credentials, SO_PASSSEC's label,
 * SO_TIMESTAMPING's times) are dropped, RDS has none; a passed fd is
 * closed.
 */
static void cmsg_filter(struct msghdr *m, struct msghdr *mh)
{
	struct cmsghdr *c;
	size_t off = 0;

	for (c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
		if (c->cmsg_level != SOL_SOCKET)
			continue;
		if (c->cmsg_type == SCM_RIGHTS)
			cmsg_close_fds(c);
		else if (c->cmsg_type == SO_TIMESTAMP_OLD ||
			 c->cmsg_type == SO_TIMESTAMP_NEW)
			cmsg_put(m, &off, c->cmsg_type, CMSG_DATA(c),
				 c->cmsg_len - CMSG_LEN(0));
		else
			cmsg_put_ns(m, &off, c);
	}
	m->msg_controllen = off;
}

/* rds_recvmsg() with MSG_OOB: 0, nothing read, whatever is queued. */
static ssize_t recv_oob(struct msghdr *m)
{
	m->msg_namelen = 0;
	m->msg_controllen = 0;
	m->msg_flags = 0;
	return 0;
}

static ssize_t rds_recv(int fd, struct msghdr *m, int flags)
{
	union {
		char buf[CTL_ROOM];
		struct cmsghdr align;
	} ctl;
	struct iovec stack[IOV_STACK + 1], *iov;
	bool want_ctl = m->msg_control && m->msg_controllen;
	struct rds_ctl_hdr h;
	struct msghdr mh;
	ssize_t n;
	int e;

	if (flags & MSG_OOB)
		return recv_oob(m);
	if (flags & MSG_ERRQUEUE) {
		errno = EAGAIN;	/* nothing is ever queued there */
		return -1;
	}
	iov = iov_wrap(stack, m, &h, &mh);
	if (!iov)
		return -1;
	if (want_ctl) {
		mh.msg_control = ctl.buf;
		mh.msg_controllen = sizeof(ctl.buf);
	}
	n = preload_real.recvmsg(fd, &mh, (flags & (MSG_PEEK | MSG_DONTWAIT |
						   MSG_TRUNC | MSG_WAITALL)) |
				 (want_ctl ? MSG_CMSG_CLOEXEC : 0));
	e = errno;
	if (iov != stack)
		free(iov);
	if (n < 0 && timed_out(fd, e, flags))
		e = ETIMEDOUT;
	errno = e;
	if (n < 0)
		return n;
	if (n == 0) {
		/* end of file: the service went away (every datagram has
		 * its header, so this is no empty datagram) */
		errno = ECONNRESET;
		return -1;
	}
	if ((size_t)n < sizeof(h) || h.magic != RDS_HDR_MAGIC) {
		errno = EPROTO;
		return -1;
	}
	m->msg_flags = mh.msg_flags & MSG_TRUNC;
	if (want_ctl)
		cmsg_filter(m, &mh);
	else
		m->msg_controllen = 0;
	if (m->msg_name)
		addr_out(m->msg_name, &m->msg_namelen, &h.peer);
	else
		m->msg_namelen = 0;
	return n - (ssize_t)sizeof(h);
}

static ssize_t recv_buf(int fd, void *buf, size_t len, int flags,
			struct sockaddr *from, socklen_t *fromlen)
{
	struct iovec iov = { buf, len };
	struct msghdr m = { .msg_name = from && fromlen ? from : NULL,
			    .msg_namelen = from && fromlen ? *fromlen : 0,
			    .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t n = rds_recv(fd, &m, flags);

	if (n >= 0 && from && fromlen)
		*fromlen = m.msg_namelen;
	return n;
}

/* An fd the table calls RDS that the kernel calls something else (its
 * number was closed behind our back and reused): look again. */
static int stale(int fd)
{
	if (errno != ENOTSOCK)
		return 0;
	fd_forget(fd);
	return fd_kind(fd) != FD_RDS;
}

/* --- the interposers ------------------------------------------------------------ */

/*
 * On our SDP streams (FD_SDP) the calls are the kernel's but for two
 * looks: an end of file, and EPIPE, may be a reset (preload.c,
 * preload_stream_reset), and writes go with MSG_NOSIGNAL so that SIGPIPE
 * is raised only where TCP raises it (not for the first write after a
 * reset, which fails with the reset's error instead).
 */
static ssize_t sdp_eof(int fd, ssize_t n, size_t len)
{
	if (n == 0 && len && preload_stream_reset(fd, 0))
		return -1;
	return n;
}

static ssize_t sdp_sent(int fd, ssize_t n, int flags)
{
	if (n >= 0 || errno != EPIPE)
		return n;
	/* a reset's error; EPIPE (one that came after the peer's DisConn,
	 * as TCP's in CLOSE_WAIT) raises SIGPIPE as TCP's does */
	if (preload_stream_reset(fd, 1) && errno != EPIPE)
		return n;
	if (!(flags & MSG_NOSIGNAL))
		pthread_kill(pthread_self(), SIGPIPE);
	errno = EPIPE;
	return -1;
}

/*
 * Urgent data (MSG_OOB) is not carried over SDP here: a unix stream
 * would take the byte out of band and the service, reading in band, would
 * lose it.  Refused, so that the program knows (TCP's recv(MSG_OOB) with
 * none pending says EINVAL, which the unix socket says too).
 */
static int sdp_oob(int flags)
{
	if (!(flags & MSG_OOB))
		return 0;
	errno = EOPNOTSUPP;
	return 1;
}

/* recv(MSG_TRUNC) on TCP discards what it would have read (buf may be
 * NULL); a unix stream would copy it.  Read it into a scratch buffer. */
static ssize_t sdp_discard(int fd, size_t len, int flags)
{
	char scratch[16384];

	return preload_real.recv(fd, scratch, len < sizeof(scratch) ? len :
				 sizeof(scratch), flags & ~MSG_TRUNC);
}

static size_t iov_len(const struct iovec *iov, size_t n)
{
	size_t i, len = 0;

	for (i = 0; iov && i < n; i++)
		len += iov[i].iov_len;
	return len;
}

EXPORT ssize_t sendmsg(int fd, const struct msghdr *m, int flags)
{
	enum fd_kind k;

	init();
	k = fd_kind(fd);
	if (k == FD_RDS && m)
		return rds_send(fd, m, flags);
	if (k == FD_SDP && m) {
		/* TCP ignores an address on a connected stream; a unix
		 * one says EISCONN */
		struct msghdr mm = *m;

		if (sdp_oob(flags))
			return -1;

		mm.msg_name = NULL;
		mm.msg_namelen = 0;
		return sdp_sent(fd, preload_real.sendmsg(fd, &mm, flags |
							 MSG_NOSIGNAL), flags);
	}
	return preload_real.sendmsg(fd, m, flags);
}

EXPORT ssize_t sendto(int fd, const void *buf, size_t len, int flags,
		      const struct sockaddr *to, socklen_t tolen)
{
	enum fd_kind k;

	init();
	k = fd_kind(fd);
	if (k == FD_RDS)
		return send_buf(fd, buf, len, flags, to, tolen);
	if (k == FD_SDP && sdp_oob(flags))
		return -1;
	if (k == FD_SDP)	/* the address ignored, as TCP ignores it */
		return sdp_sent(fd, preload_real.sendto(fd, buf, len,
			flags | MSG_NOSIGNAL, NULL, 0), flags);
	return preload_real.sendto(fd, buf, len, flags, to, tolen);
}

EXPORT ssize_t send(int fd, const void *buf, size_t len, int flags)
{
	enum fd_kind k;

	init();
	k = fd_kind(fd);
	if (k == FD_RDS)
		return send_buf(fd, buf, len, flags, NULL, 0);
	if (k == FD_SDP && sdp_oob(flags))
		return -1;
	if (k == FD_SDP)
		return sdp_sent(fd, preload_real.send(fd, buf, len,
			flags | MSG_NOSIGNAL), flags);
	return preload_real.send(fd, buf, len, flags);
}

EXPORT ssize_t write(int fd, const void *buf, size_t len)
{
	enum fd_kind k;
	ssize_t n;

	init();
	k = fd_kind(fd);
	if (k == FD_NOT_RDS)
		return preload_real.write(fd, buf, len);
	if (k == FD_SDP)
		n = sdp_sent(fd, preload_real.send(fd, buf, len,
						   MSG_NOSIGNAL), 0);
	else
		n = send_buf(fd, buf, len, 0, NULL, 0);
	if (n < 0 && stale(fd))
		return preload_real.write(fd, buf, len);
	return n;
}

EXPORT ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
	struct msghdr m = { .msg_iov = (struct iovec *)iov,
			    .msg_iovlen = cnt > 0 ? (size_t)cnt : 0 };
	enum fd_kind k;
	ssize_t n;

	init();
	k = fd_kind(fd);
	if (k == FD_NOT_RDS || cnt < 0 || cnt > IOV_MAX)
		return preload_real.writev(fd, iov, cnt);
	if (k == FD_SDP)
		n = sdp_sent(fd, preload_real.sendmsg(fd, &m, MSG_NOSIGNAL),
			     0);
	else
		n = rds_send(fd, &m, 0);
	if (n < 0 && stale(fd))
		return preload_real.writev(fd, iov, cnt);
	return n;
}

EXPORT ssize_t recvmsg(int fd, struct msghdr *m, int flags)
{
	enum fd_kind k;

	init();
	k = fd_kind(fd);
	if (k == FD_RDS && m)
		return rds_recv(fd, m, flags);
	if (k == FD_SDP && m) {
		ssize_t n = sdp_eof(fd, preload_real.recvmsg(fd, m, flags),
				    iov_len(m->msg_iov, m->msg_iovlen));

		if (n >= 0)
			m->msg_namelen = 0;	/* TCP names no sender */
		return n;
	}
	return preload_real.recvmsg(fd, m, flags);
}

EXPORT ssize_t recvfrom(int fd, void *buf, size_t len, int flags,
			struct sockaddr *from, socklen_t *fromlen)
{
	enum fd_kind k;

	init();
	k = fd_kind(fd);
	if (k == FD_RDS)
		return recv_buf(fd, buf, len, flags, from, fromlen);
	if (k == FD_SDP) {
		ssize_t n = sdp_eof(fd, (flags & MSG_TRUNC) ?
				    sdp_discard(fd, len, flags) :
				    preload_real.recvfrom(fd, buf, len,
							  flags, NULL,
							  NULL), len);

		if (n >= 0 && from && fromlen)
			*fromlen = 0;	/* TCP names no sender */
		return n;
	}
	return preload_real.recvfrom(fd, buf, len, flags, from, fromlen);
}

EXPORT ssize_t recv(int fd, void *buf, size_t len, int flags)
{
	enum fd_kind k;

	init();
	k = fd_kind(fd);
	if (k == FD_RDS)
		return recv_buf(fd, buf, len, flags, NULL, NULL);
	if (k == FD_SDP)
		return sdp_eof(fd, (flags & MSG_TRUNC) ?
			       sdp_discard(fd, len, flags) :
			       preload_real.recv(fd, buf, len, flags), len);
	return preload_real.recv(fd, buf, len, flags);
}

EXPORT ssize_t read(int fd, void *buf, size_t len)
{
	enum fd_kind k;
	ssize_t n;

	init();
	k = fd_kind(fd);
	if (k == FD_NOT_RDS)
		return preload_real.read(fd, buf, len);
	if (k == FD_SDP)
		return sdp_eof(fd, preload_real.read(fd, buf, len), len);
	if (!len)
		return 0;	/* sock_read_iter(): nothing taken */
	n = recv_buf(fd, buf, len, 0, NULL, NULL);
	if (n < 0 && stale(fd))
		return preload_real.read(fd, buf, len);
	return n;
}

EXPORT ssize_t readv(int fd, const struct iovec *iov, int cnt)
{
	struct msghdr m = { .msg_iov = (struct iovec *)iov,
			    .msg_iovlen = cnt > 0 ? (size_t)cnt : 0 };
	enum fd_kind k;
	ssize_t n;

	init();
	k = fd_kind(fd);
	if (k == FD_NOT_RDS || cnt < 0 || cnt > IOV_MAX)
		return preload_real.readv(fd, iov, cnt);
	if (k == FD_SDP)
		return sdp_eof(fd, preload_real.readv(fd, iov, cnt),
			       iov_len(iov, (size_t)cnt));
	if (!iov_len(iov, (size_t)cnt))
		return 0;	/* sock_read_iter(): nothing taken */
	n = rds_recv(fd, &m, 0);
	if (n < 0 && stale(fd))
		return preload_real.readv(fd, iov, cnt);
	return n;
}

/*
 * sendmmsg and recvmmsg: the kernel's __sys_sendmmsg() and do_recvmmsg()
 * over rds_send and rds_recv, one message at a time: the count done, the
 * error only when the first fails.  __sys_sendmmsg() adds MSG_BATCH to
 * every message but the last (and MSG_EOR from a msg_flags), flags that
 * rds_sendmsg() refuses: on the kernel's RDS a sendmmsg of more than one
 * message fails with EOPNOTSUPP, nothing sent, and so it does here.
 */
#define MMSG_MAX	1024	/* UIO_MAXIOV, the kernel's cap on vlen */

EXPORT int sendmmsg(int fd, struct mmsghdr *v, unsigned int vlen, int flags)
{
	unsigned int i;
	ssize_t n = 0;
	int f;

	init();
	if (fd_kind(fd) != FD_RDS || !v)
		return preload_real.sendmmsg(fd, v, vlen, flags);
	if (vlen > MMSG_MAX)
		vlen = MMSG_MAX;
	for (i = 0; i < vlen; i++) {
		f = flags | (v[i].msg_hdr.msg_flags & MSG_EOR);
		if (i < vlen - 1)
			f |= MSG_BATCH;
		n = rds_send(fd, &v[i].msg_hdr, f);
		if (n < 0)
			break;
		v[i].msg_len = (unsigned int)n;
	}
	return i ? (int)i : (int)n;
}

static int64_t ts_ns(const struct timespec *t)
{
	return (int64_t)t->tv_sec * 1000000000 + t->tv_nsec;
}

/* do_recvmmsg()'s timeout: the time left written back after each
 * message, and checked only then (a wait for one is not cut short);
 * 1 when it is over. */
static int mmsg_left(struct timespec *tmo, int64_t end)
{
	struct timespec now;
	int64_t left;

	clock_gettime(CLOCK_MONOTONIC, &now);
	left = end - ts_ns(&now);
	if (left < 0)
		left = 0;
	tmo->tv_sec = (time_t)(left / 1000000000);
	tmo->tv_nsec = (long)(left % 1000000000);
	return left == 0;
}

static int rds_recvmmsg(int fd, struct mmsghdr *v, unsigned int vlen,
			int flags, struct timespec *tmo)
{
	struct timespec now;
	int64_t end = 0;
	unsigned int i;
	ssize_t n = 0;
	int f = flags & ~MSG_WAITFORONE;

	if (tmo) {
		if (tmo->tv_sec < 0 || tmo->tv_nsec < 0 ||
		    tmo->tv_nsec >= 1000000000) {
			errno = EINVAL;
			return -1;
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
		end = ts_ns(&now) + ts_ns(tmo);
	}
	for (i = 0; i < vlen; ) {
		n = rds_recv(fd, &v[i].msg_hdr, f);
		if (n < 0)
			break;
		v[i++].msg_len = (unsigned int)n;
		if (flags & MSG_WAITFORONE)
			f |= MSG_DONTWAIT;
		if (tmo && mmsg_left(tmo, end))
			break;
	}
	return i ? (int)i : (int)n;
}

EXPORT int recvmmsg(int fd, struct mmsghdr *v, unsigned int vlen, int flags,
		    struct timespec *tmo)
{
	init();
	if (fd_kind(fd) != FD_RDS || !v)
		return preload_real.recvmmsg(fd, v, vlen, flags, tmo);
	return rds_recvmmsg(fd, v, vlen, flags, tmo);
}

/* sock_no_shutdown(): EOPNOTSUPP, the socket unaffected (on the pair it
 * would end the socket for good).  SDP streams have the real one, whose
 * half-close they need. */
EXPORT int shutdown(int fd, int how)
{
	init();
	if (fd_kind(fd) == FD_RDS) {
		errno = EOPNOTSUPP;
		return -1;
	}
	return preload_real.shutdown(fd, how);
}

/* linux/rds.h: SIOCPROTOPRIVATE and the next; rds_tos_t is a __u8 */
#define SIOCRDSSETTOS	0x89E0
#define SIOCRDSGETTOS	0x89E1

/*
 * SIOCRDSSETTOS: the kernel takes a TOS before the socket's first
 * connection (EINVAL after it, or over a TOS already set), and only once
 * bound (no transport: ENOTTY).  The service's connections are all of TOS
 * 0: 0 is taken, another TOS refused with EINVAL, the kernel's errno for
 * a TOS it cannot take now, which a program setting one must handle.  The
 * connection comes with the first send (rds_sendmsg sets rs_conn), ours
 * from this process or, as the service says, from another.
 */
static int rds_settos(int fd, const uint8_t *arg)
{
	struct rds_fdinfo *i;
	uint8_t tos;

	if (!arg) {
		errno = EFAULT;
		return -1;
	}
	tos = *arg;
	i = info_get(fd, 1);	/* bound, or sent, elsewhere? */
	if (!i)
		return -1;
	/* no transport yet, or the loop transport (no get_tos_map) */
	if (!i->local.family || addr_loopback(&i->local)) {
		errno = ENOTTY;
		return -1;
	}
	if (tos || i->sent) {
		errno = EINVAL;
		return -1;
	}
	return 0;
}

/* rds_ioctl() on an RDS socket: the TOS; the pair's own queue ioctls
 * (FIONREAD counts our header too) are ENOTTY, as for any socket whose
 * protocol lacks them. */
static int rds_ioctl(int fd, unsigned long req, void *arg)
{
	switch (req) {
	case SIOCRDSGETTOS:
		if (!arg) {
			errno = EFAULT;
			return -1;
		}
		*(uint8_t *)arg = 0;
		return 0;
	case SIOCRDSSETTOS:
		return rds_settos(fd, arg);
	}
	errno = ENOTTY;
	return -1;
}

/* The requests rds_ioctl answers; every other goes to the real ioctl
 * without a look at fd (FIONBIO, FIOASYNC, SIOCGIF*: the socket layer's
 * own, the same for the pair as for RDS). */
static bool ioctl_rds_req(unsigned long req)
{
	return req == FIONREAD || req == TIOCOUTQ || req == SIOCATMARK ||
	       req == SIOCRDSSETTOS || req == SIOCRDSGETTOS;
}

EXPORT int ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, req);
	arg = va_arg(ap, void *);	/* one register, as glibc reads it */
	va_end(ap);
	init();
	if (ioctl_rds_req(req) && fd_kind(fd) == FD_RDS)
		return rds_ioctl(fd, req, arg);
	return preload_real.ioctl(fd, req, arg);
}

/* _FORTIFY_SOURCE's forms, for programs built with it. */
ssize_t __read_chk(int fd, void *buf, size_t len, size_t buflen);
ssize_t __recv_chk(int fd, void *buf, size_t len, size_t buflen, int flags);
ssize_t __recvfrom_chk(int fd, void *buf, size_t len, size_t buflen,
		       int flags, struct sockaddr *from, socklen_t *fromlen);

EXPORT ssize_t __read_chk(int fd, void *buf, size_t len, size_t buflen)
{
	if (len > buflen)
		abort();
	return read(fd, buf, len);
}

EXPORT ssize_t __recv_chk(int fd, void *buf, size_t len, size_t buflen,
			  int flags)
{
	if (len > buflen)
		abort();
	return recv(fd, buf, len, flags);
}

EXPORT ssize_t __recvfrom_chk(int fd, void *buf, size_t len, size_t buflen,
			      int flags, struct sockaddr *from,
			      socklen_t *fromlen)
{
	if (len > buflen)
		abort();
	return recvfrom(fd, buf, len, flags, from, fromlen);
}

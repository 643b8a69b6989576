/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * libibgw_preload.so's private interfaces.  The preload gives unmodified
 * TCP programs SDP sockets: an SDP socket is, for the program, one end of
 * a SOCK_STREAM unix socket pair whose other end the host's SDP service
 * holds (ulp/sdp/sdp_ctl.h), so every data-path call is the kernel's own
 * and only bind (for a port a closed 'both' listener still holds),
 * connect, listen, accept, accept4, getsockname, getpeername, getsockopt
 * and setsockopt are interposed (preload.c); the read and write calls
 * only look again at an end of file or EPIPE, which may be a reset
 * (preload_stream_reset), and write with MSG_NOSIGNAL so that SIGPIPE
 * comes only where TCP's would.
 *
 * Nearly stateless, so that fork, exec, dup and threads need nothing: the
 * socket itself says what it is (its domain, its unix names), and the only
 * state is a cache of the inet addresses and TCP options of our sockets
 * (preload_cache.c), which an INFO request refills after exec.
 *
 * AF_RDS sockets (preload_rds.c) are one end of a unix SOCK_SEQPACKET pair
 * whose other end the host's RDS service holds (ulp/rds/rds_ctl.h):
 * socket, bind, connect, the send and receive calls (sendmmsg and
 * recvmmsg too), get/setsockopt and the names are interposed for them,
 * to add and strip the header that carries each datagram's address;
 * shutdown, listen, accept and a few ioctls only to answer as the
 * kernel's RDS does where the unix socket would not; close, dup2, dup3
 * and close_range only forget what the per-fd table knew.
 *
 * Nothing here may call an interposed function through the PLT: the real
 * ones are in preload_real.
 */
#ifndef IBGW_PRELOAD_H
#define IBGW_PRELOAD_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>

#include "ulp/rds/rds_ctl.h"
#include "ulp/sdp/sdp_conf.h"
#include "ulp/sdp/sdp_ctl.h"

/* The service's names for its unix sockets (abstract): listeners it
 * passes to programs, and its own ends of the stream pairs. */
#define PRELOAD_LISTEN_PREFIX	"ibgw-sdp-l/"
#define PRELOAD_STREAM_PREFIX	"ibgw-sdp-c/"

/* preload_real.c: the next definitions (libc's), from dlsym(RTLD_NEXT). */
struct preload_real {
	int (*bind)(int, const struct sockaddr *, socklen_t);
	int (*connect)(int, const struct sockaddr *, socklen_t);
	int (*listen)(int, int);
	int (*accept4)(int, struct sockaddr *, socklen_t *, int);
	int (*getsockname)(int, struct sockaddr *, socklen_t *);
	int (*getpeername)(int, struct sockaddr *, socklen_t *);
	int (*getsockopt)(int, int, int, void *, socklen_t *);
	int (*setsockopt)(int, int, int, const void *, socklen_t);
	int (*socket)(int, int, int);
	int (*close)(int);
	int (*dup2)(int, int);
	int (*dup3)(int, int, int);
	int (*close_range)(unsigned int, unsigned int, int);
	ssize_t (*sendmsg)(int, const struct msghdr *, int);
	ssize_t (*recvmsg)(int, struct msghdr *, int);
	ssize_t (*sendto)(int, const void *, size_t, int,
			  const struct sockaddr *, socklen_t);
	ssize_t (*recvfrom)(int, void *, size_t, int, struct sockaddr *,
			    socklen_t *);
	ssize_t (*send)(int, const void *, size_t, int);
	ssize_t (*recv)(int, void *, size_t, int);
	ssize_t (*read)(int, void *, size_t);
	ssize_t (*write)(int, const void *, size_t);
	ssize_t (*readv)(int, const struct iovec *, int);
	ssize_t (*writev)(int, const struct iovec *, int);
	int (*sendmmsg)(int, struct mmsghdr *, unsigned int, int);
	int (*recvmmsg)(int, struct mmsghdr *, unsigned int, int,
			struct timespec *);
	int (*shutdown)(int, int);
	int (*ioctl)(int, unsigned long, ...);
	int (*epoll_ctl)(int, int, int, struct epoll_event *);
	int (*dup)(int);
	int (*fcntl)(int, int, ...);
	int (*fcntl64)(int, int, ...);
	int (*prctl)(int, ...);
	long (*syscall)(long, ...);
};
extern struct preload_real preload_real;
void preload_real_init(void);
/*
 * Set once the program installs a seccomp filter (prctl PR_SET_SECCOMP):
 * from then on every interposed call goes to libc as it is, since the
 * filter may forbid the system calls the preload would add (OpenSSH's
 * sandboxed pre-auth child allows write and writev but not sendto or
 * getsockname).
 */
extern atomic_int preload_sandboxed;
static inline bool preload_off(void)
{
	return atomic_load_explicit(&preload_sandboxed,
				    memory_order_relaxed) != 0;
}

/* preload_policy.c: libsdp.conf, read once (again after a failure that
 * was the process's: out of descriptors or memory), and the preload's
 * log. */
enum sdp_use preload_policy(enum sdp_role role, const struct sockaddr *sa);
void preload_log(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* 1 when a line of this level would be written */
bool preload_log_wants(int level);
/* A socket the rules send to TCP (use is preload_policy's answer) */
void preload_log_tcp(const char *call, const struct sockaddr *sa,
		     enum sdp_use use);
const char *preload_sa_str(const struct sockaddr *sa, char *buf, size_t len);
#define PRELOAD_SA_STRLEN	(INET6_ADDRSTRLEN + 10)
/* Log levels, libsdp's: a line is written when its level >= min-level
 * (default 9: errors only). */
#define PRELOAD_LOG_DEBUG	1
#define PRELOAD_LOG_INFO	3
#define PRELOAD_LOG_WARN	6
#define PRELOAD_LOG_ERR		9

/* preload_ctl.c: one request to the service on a fresh SEQPACKET
 * connection.  send_fd (-1: none) goes as SCM_RIGHTS; *recv_fd gets the
 * reply's fd (-1 if none; recv_fd may be NULL).  0 with *rep filled (its
 * err may be non-zero), or -1 with errno.  Signals are waited through;
 * with PRELOAD_CTL_INTR (a blocking connect) the wait is the kernel's to
 * restart after a handler with SA_RESTART, and EINTR after one without
 * (the service cancels when the socket closes).
 *
 * IBGW_SDP_SOCKET and IBGW_RDS_SOCKET may name several services,
 * comma-separated, one per partition of the node (each ipoibd's): svc
 * picks one (0: the first, the default), or pid > 0 the one whose
 * process that is (the PID in the names of its unix sockets), if it is
 * named, else svc. */
#define PRELOAD_CTL_INTR	0x1
#define PRELOAD_CTL_MAX		8
int preload_ctl_call(struct sdp_ctl_req *req, int send_fd,
		     struct sdp_ctl_reply *rep, int *recv_fd);
int preload_ctl_call_at(unsigned int svc, pid_t pid, struct sdp_ctl_req *req,
			unsigned int flags, int send_fd,
			struct sdp_ctl_reply *rep, int *recv_fd);
/* The same for any service: env overrides name (see sdp_ctl.h); *fd
 * the first fd the reply carried, or -1. */
int preload_ctl_raw(const char *env, const char *name, unsigned int svc,
		    pid_t pid, uint32_t timeout_ms, unsigned int flags,
		    const void *req, size_t reqlen, int send_fd, void *rep,
		    size_t replen, int *fd);
/* How many services env names (at least 1; at most PRELOAD_CTL_MAX). */
unsigned int preload_ctl_count(const char *env);
/* Is pid one of the services env names (asked each time)? */
bool preload_ctl_is_service(const char *env, const char *name, pid_t pid);
/* The service whose process was pid is known to be gone: no named service
 * answers, or each that answers is another process of our PID namespace
 * (in another namespace its PID is not ours to compare: not known). */
bool preload_ctl_pid_gone(const char *env, const char *name, pid_t pid);

/* preload_cache.c: what the kernel cannot tell about our sockets, keyed
 * by the socket's inode, so that dup and fork share it. */
struct preload_sock {
	union sdp_ctl_addr local, remote;
	unsigned int flags;	/* SDP_CTL_R_PENDING, SDP_CTL_R_FAILED: a
				 * non-blocking connect not known up */
};
void preload_cache_put(int fd, const union sdp_ctl_addr *local,
		       const union sdp_ctl_addr *remote);
/* 0 with *s filled (from the cache or an INFO request), else -1. */
int preload_cache_get(int fd, struct preload_sock *s);
/* Set an entry's flags (one preload_cache_put made). */
void preload_cache_flags(int fd, unsigned int flags);
/* A request about stream fd (INFO, LINGER), by its inode, else by the N
 * of the service's end's name; 0 with *rep, or -1. */
int preload_stream_call(int fd, struct sdp_ctl_req *req,
			struct sdp_ctl_reply *rep);
/* The N (and PID, pid may be NULL) of stream fd's peer name,
 * "ibgw-sdp-c/PID.N": 0, or -1. */
int preload_stream_id(int fd, uint64_t *n, pid_t *pid);
void preload_cache_setopt(int fd, int level, int name, const void *val,
			  socklen_t len);
/* The remembered value (an int option), or 0 if none; -1 if the option
 * was never set. */
int preload_cache_getopt(int fd, int level, int name, int *val);
/* A mark of the preload's own on fd's entry (made if none): its
 * previous state; set 0 only reads it, set < 0 clears it. */
int preload_cache_mark(int fd, unsigned int bit, int set);
#define PRELOAD_MARK_EOF	0x1	/* end of file seen, no reset owed */
#define PRELOAD_MARK_PIN	0x2	/* a listener's, or an RDS socket's
					 * options: not replaced by others */
#define PRELOAD_MARK_INPROGRESS	0x4	/* connect said EINPROGRESS, and no
					 * connect has been told the end */

/* preload.c */
enum preload_kind {
	PRELOAD_NOT_OURS = 0,
	PRELOAD_LISTENER,	/* a unix listener the service passed */
	PRELOAD_STREAM,		/* an SDP connection */
};
enum preload_kind preload_kind(int fd);
/* Is fd one of our SDP streams (its peer's name says so)? */
bool preload_is_stream(int fd);
/* End of file, or EPIPE (epipe 1: a write's), on our stream fd: 1 when
 * it is a reset (the service's end closed by one, or shut for reading
 * while what came before it still goes) not reported yet, with errno
 * the error TCP reports for it (ECONNRESET, ETIMEDOUT), taken so that
 * it is told once; else 0, errno kept. */
int preload_stream_reset(int fd, int epipe);
/* close() of our stream fd: with SO_LINGER {1, N > 0} it waits, at most N
 * seconds, for the service to have everything acknowledged when it was
 * the last descriptor (LINGER_WAIT), as TCP's close waits. */
int preload_stream_close(int fd);
/* The service's pid from a listener's name, or -1. */
pid_t preload_listener_pid(int fd);

/* preload_rds.c: RDS sockets.  preload_rds_is() is the per-fd table's
 * answer (one getsockname the first time an fd is seen).  The others are
 * the interposers' RDS halves: the return value and errno as the
 * kernel's RDS gives them. */
bool preload_rds_is(int fd);
/* fd is now one of our SDP streams (connect or accept made it). */
void preload_fd_sdp(int fd);
/* The table's answer for an SDP stream (a getsockname and a getpeername
 * the first time a unix socket is seen). */
bool preload_sdp_is(int fd);
/* The table's word alone, no system call: fd was made an SDP stream. */
bool preload_sdp_known(int fd);
int preload_rds_bind(int fd, const struct sockaddr *sa, socklen_t len);
int preload_rds_connect(int fd, const struct sockaddr *sa, socklen_t len);
int preload_rds_name(int fd, struct sockaddr *out, socklen_t *len, int peer);
int preload_rds_getsockopt(int fd, int level, int name, void *val,
			   socklen_t *len);
int preload_rds_setsockopt(int fd, int level, int name, const void *val,
			   socklen_t len);

/* preload_epoll.c: a TCP socket fresh from socket() (on) has its epoll
 * registrations remembered; off forgets them (closed, or connected as
 * TCP).  moved: fd is the service's stream now, the registrations are
 * made again for it. */
void preload_epoll_fresh(int fd, bool on);
void preload_epoll_moved(int fd);
/* nfd was made a duplicate of old (dup, dup2, dup3, F_DUPFD): if old is
 * a fresh TCP socket, both are marked as having aliases. */
void preload_fresh_dup(int old, int nfd);
/* The other fds marked as aliases when fd is one of them: up
 * to max into out; their count.  Whether each is still the same socket
 * is the caller's to check. */
int preload_fresh_aliases(int fd, int *out, int max);

#endif

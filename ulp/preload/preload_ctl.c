// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The preload's side of ulp/sdp/sdp_ctl.h and ulp/rds/rds_ctl.h: one
 * request, one reply, on a SEQPACKET connection of its own (so threads and
 * forked children never share one), closed at once.  A signal
 * interrupting the wait is waited through, but for a blocking connect's
 * (PRELOAD_CTL_INTR): that wait has no timeout of its own, so that the
 * kernel restarts it after a handler with SA_RESTART and says EINTR
 * after one without, as it does for TCP's connect (a socket timeout
 * would make every signal EINTR); closing the socket is what tells the
 * service to cancel.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "ulp/preload/preload.h"

/* Beyond the service's own timeout: it answers ETIMEDOUT itself; this
 * only bounds a service that stopped answering. */
#define CTL_GRACE_MS	5000
#define CTL_DEFAULT_MS	30000

static atomic_uint ctl_next_id;

/*
 * The idx-th service: env may name several, comma-separated (a node in
 * several partitions runs a service per partition); unset or empty, the
 * default name alone.  0 if there is no idx-th.
 */
static socklen_t ctl_addr(struct sockaddr_un *sun, const char *envname,
			  const char *name, unsigned int idx)
{
	const char *env = getenv(envname), *end;
	int abstract = 1;
	size_t n;

	if (env && *env) {
		for (; idx; idx--) {
			env = strchr(env, ',');
			if (!env)
				return 0;
			env++;
		}
		end = strchr(env, ',');
		n = end ? (size_t)(end - env) : strlen(env);
		if (!n)
			return 0;
		abstract = env[0] == '@';
		name = env + abstract;
		n -= (size_t)abstract;
	} else {
		if (idx)
			return 0;
		n = strlen(name);
	}
	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	if (n > sizeof(sun->sun_path) - 2)
		n = sizeof(sun->sun_path) - 2;
	memcpy(sun->sun_path + abstract, name, n);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + abstract +
			   n + !abstract);
}

unsigned int preload_ctl_count(const char *env)
{
	struct sockaddr_un sun;
	unsigned int n = 0;

	while (n < PRELOAD_CTL_MAX && ctl_addr(&sun, env, "-", n))
		n++;
	return n ? n : 1;
}

static pid_t peer_pid(int s)
{
	struct ucred uc;
	socklen_t len = sizeof(uc);

	if (preload_real.getsockopt(s, SOL_SOCKET, SO_PEERCRED, &uc,
				    &len) < 0)
		return -1;
	return uc.pid;
}

static int ctl_open(uint32_t timeout_ms, int intr, const char *env,
		    const char *name, unsigned int idx)
{
	struct sockaddr_un sun;
	socklen_t len = ctl_addr(&sun, env, name, idx);
	uint32_t ms = timeout_ms ? timeout_ms + CTL_GRACE_MS : CTL_DEFAULT_MS;
	struct timeval tv = { .tv_sec = ms / 1000,
			      .tv_usec = (ms % 1000) * 1000 };
	int s, e;

	if (!len) {
		errno = ENOENT;
		return -1;
	}
	s = preload_real.socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -1;
	if ((!intr && preload_real.setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv,
					      sizeof(tv)) < 0) ||
	    preload_real.connect(s, (struct sockaddr *)&sun, len) < 0) {
		e = errno;
		preload_real.close(s);
		errno = e;
		return -1;
	}
	return s;
}

/*
 * The service whose process is pid (the PID its unix names carry), when
 * several are named: its connection, else the idx-th's.
 */
static int ctl_open_pid(uint32_t timeout_ms, int intr, const char *env,
			const char *name, unsigned int idx, pid_t pid)
{
	unsigned int i, n = pid > 0 ? preload_ctl_count(env) : 1;
	int s;

	for (i = 0; n > 1 && i < n; i++) {
		s = ctl_open(timeout_ms, intr, env, name, i);
		if (s < 0)
			continue;
		if (peer_pid(s) == pid)
			return s;
		preload_real.close(s);
	}
	return ctl_open(timeout_ms, intr, env, name, idx);
}

bool preload_ctl_is_service(const char *env, const char *name, pid_t pid)
{
	unsigned int i, n = preload_ctl_count(env);
	int s, yes = 0;

	for (i = 0; i < n && !yes; i++) {
		s = ctl_open(0, 0, env, name, i);
		if (s < 0)
			continue;
		yes = peer_pid(s) == pid;
		preload_real.close(s);
	}
	return yes;
}

/* Is process pid in our PID namespace?  (-1: cannot tell) */
static int same_pid_ns(pid_t pid)
{
	char path[64], mine[64], theirs[64];
	ssize_t a, b;

	snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)pid);
	a = readlink("/proc/self/ns/pid", mine, sizeof(mine) - 1);
	b = readlink(path, theirs, sizeof(theirs) - 1);
	if (a <= 0 || b <= 0)
		return -1;
	return a == b && !memcmp(mine, theirs, (size_t)a);
}

bool preload_ctl_pid_gone(const char *env, const char *name, pid_t pid)
{
	unsigned int i, n = preload_ctl_count(env);
	pid_t p;
	int s;

	for (i = 0; i < n; i++) {
		s = ctl_open(0, 0, env, name, i);
		if (s < 0)
			continue;
		p = peer_pid(s);
		preload_real.close(s);
		if (p == pid || p <= 0 || same_pid_ns(p) != 1)
			return false;
	}
	return true;
}

static int ctl_send(int s, const void *req, size_t reqlen, int send_fd)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} c;
	struct iovec iov = { .iov_base = (void *)req, .iov_len = reqlen };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *cm;

	if (send_fd >= 0) {
		memset(&c, 0, sizeof(c));
		mh.msg_control = c.buf;
		mh.msg_controllen = sizeof(c.buf);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &send_fd, sizeof(int));
	}
	if (preload_real.sendmsg(s, &mh, MSG_NOSIGNAL) != (ssize_t)reqlen)
		return -1;
	return 0;
}

/* Every fd that came is closed but the first, which goes to *fd. */
static void ctl_take_fds(struct msghdr *mh, int *fd)
{
	struct cmsghdr *cm;
	size_t i, n;
	int f;

	for (cm = CMSG_FIRSTHDR(mh); cm; cm = CMSG_NXTHDR(mh, cm)) {
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		n = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (i = 0; i < n; i++) {
			memcpy(&f, CMSG_DATA(cm) + i * sizeof(int), sizeof(f));
			if (*fd < 0)
				*fd = f;
			else
				preload_real.close(f);
		}
	}
}

static int ctl_recv(int s, void *rep, size_t replen, int *fd, int intr)
{
	union {
		char buf[CMSG_SPACE(4 * sizeof(int))];
		struct cmsghdr align;
	} c;
	struct iovec iov = { .iov_base = rep, .iov_len = replen };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = c.buf,
			     .msg_controllen = sizeof(c.buf) };
	ssize_t n;

	*fd = -1;
	do
		n = preload_real.recvmsg(s, &mh, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR && !intr);
	if (n < 0) {
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			errno = ETIMEDOUT;
		return -1;
	}
	ctl_take_fds(&mh, fd);
	if (n != (ssize_t)replen || (mh.msg_flags & MSG_TRUNC)) {
		errno = n == 0 ? ECONNRESET : EPROTO;
		goto bad;
	}
	return 0;
bad:
	if (*fd >= 0)
		preload_real.close(*fd);
	*fd = -1;
	return -1;
}

int preload_ctl_raw(const char *env, const char *name, unsigned int svc,
		    pid_t pid, uint32_t timeout_ms, unsigned int flags,
		    const void *req, size_t reqlen, int send_fd, void *rep,
		    size_t replen, int *fd)
{
	int intr = !!(flags & PRELOAD_CTL_INTR), s, e;

	*fd = -1;
	s = ctl_open_pid(timeout_ms, intr, env, name, svc, pid);
	if (s < 0)
		return -1;
	if (ctl_send(s, req, reqlen, send_fd) < 0 ||
	    ctl_recv(s, rep, replen, fd, intr) < 0) {
		e = errno;
		preload_real.close(s);
		errno = e;
		return -1;
	}
	preload_real.close(s);
	return 0;
}

int preload_ctl_call(struct sdp_ctl_req *req, int send_fd,
		     struct sdp_ctl_reply *rep, int *recv_fd)
{
	return preload_ctl_call_at(0, 0, req, 0, send_fd, rep, recv_fd);
}

int preload_ctl_call_at(unsigned int svc, pid_t pid, struct sdp_ctl_req *req,
			unsigned int flags, int send_fd,
			struct sdp_ctl_reply *rep, int *recv_fd)
{
	int fd = -1;

	req->magic = SDP_CTL_MAGIC;
	req->id = atomic_fetch_add(&ctl_next_id, 1) + 1;
	strncpy(req->program, program_invocation_short_name,
		sizeof(req->program) - 1);
	if (preload_ctl_raw(SDP_CTL_ENV, SDP_CTL_NAME, svc, pid,
			    req->timeout_ms, flags, req, sizeof(*req), send_fd,
			    rep, sizeof(*rep), &fd) < 0)
		return -1;
	if (rep->magic != SDP_CTL_MAGIC || rep->id != req->id) {
		if (fd >= 0)
			preload_real.close(fd);
		errno = EPROTO;
		return -1;
	}
	if (rep->err || !recv_fd) {
		if (fd >= 0)
			preload_real.close(fd);
		fd = -1;
	}
	if (recv_fd)
		*recv_fd = fd;
	return 0;
}

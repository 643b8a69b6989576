// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * epoll registrations made before connect or listen.  The preload
 * replaces a TCP socket by the service's stream at connect or listen
 * (dup3 over the fd), and epoll knows a registration by its fd and its
 * file: the old socket's goes with the old file, and the program, which
 * registered the fd before connecting (nginx adds a connection to its
 * epoll set, then connects), would never hear of the stream.  So
 * epoll_ctl on a TCP socket fresh from socket() -- and only there: other
 * fds pay one load -- is remembered, and once the fd is replaced the same
 * registrations are made again for the stream.
 *
 * The same table knows which fresh sockets were duplicated (dup, dup2,
 * dup3, F_DUPFD) before connect or listen: such a duplicate is the same
 * socket for the program, so it must become the stream too
 * (preload.c's replace_fd).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

#include "ulp/preload/preload.h"

#define EP_FDS		65536
#define EP_REGS		4	/* epoll sets one socket is in */
#define FRESH		0x1	/* a TCP socket fresh from socket() */
#define ALIASED		0x2	/* ... with duplicates */

struct ep_regs {
	unsigned int n;
	int epfd[EP_REGS];
	struct epoll_event ev[EP_REGS];
};

static _Atomic unsigned char fresh[EP_FDS];
static struct ep_regs *regs[EP_FDS];
static pthread_mutex_t ep_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t ep_once = PTHREAD_ONCE_INIT;

/* Held around fork, so that a child never inherits it held. */
static void ep_prepare(void)
{
	pthread_mutex_lock(&ep_lock);
}

static void ep_release(void)
{
	pthread_mutex_unlock(&ep_lock);
}

static void ep_init(void)
{
	pthread_atfork(ep_prepare, ep_release, ep_release);
}

void preload_epoll_fresh(int fd, bool on)
{
	struct ep_regs *r;

	if (fd < 0 || fd >= EP_FDS)
		return;
	if (on)
		pthread_once(&ep_once, ep_init);
	if (!on && !atomic_load_explicit(&fresh[fd], memory_order_relaxed))
		return;
	pthread_mutex_lock(&ep_lock);
	atomic_store(&fresh[fd], on ? FRESH : 0);
	r = regs[fd];
	regs[fd] = NULL;
	pthread_mutex_unlock(&ep_lock);
	free(r);
}

/* With the lock held. */
static void note(int epfd, int op, int fd, const struct epoll_event *ev)
{
	struct ep_regs *r = regs[fd];
	unsigned int i;

	for (i = 0; r && i < r->n; i++)
		if (r->epfd[i] == epfd)
			break;
	if (op == EPOLL_CTL_DEL) {
		if (r && i < r->n) {
			r->n--;
			r->epfd[i] = r->epfd[r->n];
			r->ev[i] = r->ev[r->n];
		}
		return;
	}
	if (!ev)
		return;
	if (!r) {
		r = calloc(1, sizeof(*r));
		if (!r)
			return;
		regs[fd] = r;
	}
	if (i == r->n) {
		if (r->n == EP_REGS)
			return;	/* more sets than kept: not carried */
		r->epfd[r->n++] = epfd;
	}
	r->ev[i] = *ev;
}

void preload_epoll_moved(int fd)
{
	struct ep_regs *r;
	unsigned int i;
	int e = errno;

	if (fd < 0 || fd >= EP_FDS ||
	    !atomic_load_explicit(&fresh[fd], memory_order_relaxed))
		return;
	pthread_mutex_lock(&ep_lock);
	r = regs[fd];
	regs[fd] = NULL;
	atomic_store(&fresh[fd], 0);
	for (i = 0; r && i < r->n; i++)
		if (preload_real.epoll_ctl(r->epfd[i], EPOLL_CTL_ADD, fd,
					   &r->ev[i]) < 0)
			preload_log(PRELOAD_LOG_WARN, "fd %d: epoll set %d: "
				    "not carried to the SDP stream: %s", fd,
				    r->epfd[i], strerror(errno));
	pthread_mutex_unlock(&ep_lock);
	free(r);
	errno = e;
}

void preload_fresh_dup(int old, int nfd)
{
	if (old < 0 || old >= EP_FDS || nfd < 0 || nfd >= EP_FDS ||
	    !atomic_load_explicit(&fresh[old], memory_order_relaxed))
		return;
	pthread_mutex_lock(&ep_lock);
	if (atomic_load(&fresh[old])) {
		atomic_store(&fresh[old], FRESH | ALIASED);
		atomic_store(&fresh[nfd], FRESH | ALIASED);
	}
	pthread_mutex_unlock(&ep_lock);
}

int preload_fresh_aliases(int fd, int *out, int max)
{
	int i, n = 0;

	if (fd < 0 || fd >= EP_FDS ||
	    !(atomic_load_explicit(&fresh[fd], memory_order_relaxed) &
	      ALIASED))
		return 0;
	for (i = 0; i < EP_FDS && n < max; i++)
		if (i != fd && (atomic_load_explicit(&fresh[i],
						     memory_order_relaxed) &
				ALIASED))
			out[n++] = i;
	return n;
}

__attribute__((visibility("default")))
int epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev)
{
	int rc;

	if (!preload_real.epoll_ctl)
		preload_real_init();
	rc = preload_real.epoll_ctl(epfd, op, fd, ev);
	if (rc == 0 && fd >= 0 && fd < EP_FDS &&
	    atomic_load_explicit(&fresh[fd], memory_order_relaxed)) {
		pthread_mutex_lock(&ep_lock);
		if (atomic_load(&fresh[fd]))
			note(epfd, op, fd, ev);
		pthread_mutex_unlock(&ep_lock);
	}
	return rc;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The inet addresses and TCP-level options of our sockets, which a unix
 * socket cannot hold.  Keyed by the socket's (st_dev, st_ino), so every
 * dup and every forked child finds the same entry; a small table with
 * round-robin replacement, since a miss costs only an INFO request
 * (listeners' entries, which hold the TCP options their accepted streams
 * inherit, are kept unless 64 come in a row).  The
 * lock is taken around fork so that a child never inherits it held.
 */
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "ulp/preload/preload.h"

#define CACHE_SIZE	512
#define CACHE_OPTS	8
/* Listeners' entries are passed over, up to this many in a row. */
#define CACHE_PINS	64

struct cache_opt {
	int level, name, val;
};

struct cache_entry {
	dev_t dev;
	ino_t ino;			/* 0: free */
	struct preload_sock s;
	struct cache_opt opt[CACHE_OPTS];
	unsigned int nopt;
	unsigned int marks;		/* PRELOAD_MARK_* */
};

static struct cache_entry cache[CACHE_SIZE];
static unsigned int cache_next;
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t cache_once = PTHREAD_ONCE_INIT;

static void cache_prepare(void)
{
	pthread_mutex_lock(&cache_lock);
}

static void cache_release(void)
{
	pthread_mutex_unlock(&cache_lock);
}

static void cache_init(void)
{
	pthread_atfork(cache_prepare, cache_release, cache_release);
}

static int cache_key(int fd, struct stat *st)
{
	pthread_once(&cache_once, cache_init);
	return fstat(fd, st);
}

/* With the lock held. */
static struct cache_entry *cache_find(const struct stat *st)
{
	unsigned int i;

	for (i = 0; i < CACHE_SIZE; i++)
		if (cache[i].ino == st->st_ino && cache[i].dev == st->st_dev)
			return &cache[i];
	return NULL;
}

static struct cache_entry *cache_slot(const struct stat *st)
{
	struct cache_entry *e = cache_find(st);
	unsigned int tries = 0;

	while (!e) {
		e = &cache[cache_next++ % CACHE_SIZE];
		if ((e->marks & PRELOAD_MARK_PIN) && e->ino &&
		    ++tries < CACHE_PINS) {
			e = NULL;	/* a listener's: the next one */
			continue;
		}
		memset(e, 0, sizeof(*e));
		e->dev = st->st_dev;
		e->ino = st->st_ino;
	}
	return e;
}

void preload_cache_put(int fd, const union sdp_ctl_addr *local,
		       const union sdp_ctl_addr *remote)
{
	struct cache_entry *e;
	struct stat st;

	if (cache_key(fd, &st) < 0)
		return;
	pthread_mutex_lock(&cache_lock);
	e = cache_slot(&st);
	memset(&e->s, 0, sizeof(e->s));
	if (local)
		e->s.local = *local;
	if (remote)
		e->s.remote = *remote;
	pthread_mutex_unlock(&cache_lock);
}

/*
 * A request about one of our streams (INFO, LINGER): by the inode of fd,
 * and for an accepted stream, whose inode the service never knew, by the
 * N of the service's end's name, "ibgw-sdp-c/PID.N".  0 with *rep (its
 * err may be non-zero), or -1.
 */
int preload_stream_id(int fd, uint64_t *n, pid_t *pid)
{
	struct sockaddr_un sun;
	socklen_t sl = sizeof(sun);
	size_t plen = strlen(PRELOAD_STREAM_PREFIX);
	const char *dot;

	if (preload_real.getpeername(fd, (struct sockaddr *)&sun, &sl) < 0 ||
	    sun.sun_family != AF_UNIX ||
	    sl <= offsetof(struct sockaddr_un, sun_path) + 1 + plen ||
	    sun.sun_path[0] ||
	    memcmp(sun.sun_path + 1, PRELOAD_STREAM_PREFIX, plen))
		return -1;
	((char *)&sun)[sl < sizeof(sun) ? sl : sizeof(sun) - 1] = 0;
	dot = strrchr(sun.sun_path + 1, '.');
	if (!dot)
		return -1;
	*n = strtoull(dot + 1, NULL, 10);
	if (pid)
		*pid = (pid_t)strtol(sun.sun_path + 1 + plen, NULL, 10);
	return 0;
}

/* The service of the stream (the PID in its name) is asked, where
 * several are named. */
int preload_stream_call(int fd, struct sdp_ctl_req *req,
			struct sdp_ctl_reply *rep)
{
	struct stat st;
	uint64_t n;
	pid_t pid = 0;
	int byid;

	if (fstat(fd, &st) < 0)
		return -1;
	byid = preload_stream_id(fd, &n, &pid) == 0;
	req->ino = st.st_ino;
	req->flags &= ~(uint32_t)SDP_CTL_F_BYID;
	if (preload_ctl_call_at(0, pid, req, 0, -1, rep, NULL) < 0)
		return -1;
	if (rep->err != ENOENT || (rep->flags & SDP_CTL_R_FAILED) || !byid)
		return 0;
	req->flags |= SDP_CTL_F_BYID;
	req->ino = n;
	return preload_ctl_call_at(0, pid, req, 0, -1, rep, NULL);
}

int preload_cache_get(int fd, struct preload_sock *s)
{
	struct sdp_ctl_req req;
	struct sdp_ctl_reply rep;
	struct cache_entry *e;
	struct stat st;
	int found = 0;

	if (cache_key(fd, &st) < 0)
		return -1;
	pthread_mutex_lock(&cache_lock);
	e = cache_find(&st);
	if (e && e->s.local.family) {
		*s = e->s;
		found = 1;
	}
	pthread_mutex_unlock(&cache_lock);
	if (found)
		return 0;

	memset(&req, 0, sizeof(req));
	req.op = SDP_CTL_INFO;
	if (preload_stream_call(fd, &req, &rep) < 0)
		return -1;
	if (rep.err && !(rep.flags & (SDP_CTL_R_FAILED | SDP_CTL_R_RESET))) {
		errno = rep.err;
		return -1;
	}
	preload_cache_put(fd, &rep.local, &rep.remote);
	preload_cache_flags(fd, rep.flags & (SDP_CTL_R_PENDING |
					     SDP_CTL_R_FAILED));
	s->local = rep.local;
	s->remote = rep.remote;
	s->flags = rep.flags & (SDP_CTL_R_PENDING | SDP_CTL_R_FAILED);
	return 0;
}

void preload_cache_flags(int fd, unsigned int flags)
{
	struct cache_entry *e;
	struct stat st;

	if (cache_key(fd, &st) < 0)
		return;
	pthread_mutex_lock(&cache_lock);
	e = cache_find(&st);
	if (e)
		e->s.flags = flags;
	pthread_mutex_unlock(&cache_lock);
}

void preload_cache_setopt(int fd, int level, int name, const void *val,
			  socklen_t len)
{
	struct cache_entry *e;
	struct stat st;
	unsigned int i;
	int v = 0;

	if (cache_key(fd, &st) < 0)
		return;
	memcpy(&v, val, len < sizeof(v) ? len : sizeof(v));
	pthread_mutex_lock(&cache_lock);
	e = cache_slot(&st);
	for (i = 0; i < e->nopt; i++)
		if (e->opt[i].level == level && e->opt[i].name == name)
			break;
	if (i < CACHE_OPTS) {
		e->opt[i] = (struct cache_opt){ level, name, v };
		if (i == e->nopt)
			e->nopt++;
	}
	pthread_mutex_unlock(&cache_lock);
}

int preload_cache_getopt(int fd, int level, int name, int *val)
{
	struct cache_entry *e;
	struct stat st;
	unsigned int i;
	int rc = -1;

	*val = 0;
	if (cache_key(fd, &st) < 0)
		return -1;
	pthread_mutex_lock(&cache_lock);
	e = cache_find(&st);
	for (i = 0; e && i < e->nopt; i++)
		if (e->opt[i].level == level && e->opt[i].name == name) {
			*val = e->opt[i].val;
			rc = 0;
		}
	pthread_mutex_unlock(&cache_lock);
	return rc;
}

int preload_cache_mark(int fd, unsigned int bit, int set)
{
	struct cache_entry *e;
	struct stat st;
	int was;

	if (cache_key(fd, &st) < 0)
		return 0;
	pthread_mutex_lock(&cache_lock);
	e = set > 0 ? cache_slot(&st) : cache_find(&st);
	was = e && (e->marks & bit);
	if (e && set > 0)
		e->marks |= bit;
	else if (e && set < 0)
		e->marks &= ~bit;
	pthread_mutex_unlock(&cache_lock);
	return was;
}

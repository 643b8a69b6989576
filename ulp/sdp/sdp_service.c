// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The host's SDP service (sdp_service.h): the control socket, the
 * program's listeners, and the connections it asked for.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <event2/event.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>

#include "ulp/sdp/sdp_ctl.h"
#include "ulp/sdp/sdp_relay.h"
#include "ulp/sdp/sdp_service.h"

#define RESOLVE_RETRY_MS	20
#define PATH_RETRY_MS		50	/* first retry of an unreachable port */
#define PATH_RETRY_MAX_MS	800
#define DEF_TIMEOUT_MS		10000
#define MAX_REQS		256
#define MAX_LISTENERS		256
#define MAX_FAILED		256	/* failed connects' and resets'
					 * records kept */
#define FAILED_KEEP_S		60	/* without sock_diag: forgotten */
#define FILL_CHUNK		65536
#define DIAG_LISTEN		10	/* the kernel's TCP_LISTEN, as unix
					 * sock_diag reports a listener */
#define DIAG_RCV_SHUTDOWN	1	/* the kernel's RCV_SHUTDOWN: a
					 * connect is refused */

struct svc_listener {
	struct sdp_service *sv;
	struct svc_listener *next;
	struct inet_addr addr;		/* family 0: any */
	int family;			/* the program's socket's */
	uint16_t port;
	char name[108];			/* abstract, no leading NUL */
	int tcp_fd;			/* 'both': the program's TCP listener */
	struct event *tcp_ev;
	struct event *tcp_pause_ev;	/* accept paused: out of fds */
	int held_fd;			/* a TCP connection accepted but not
					 * yet handed over (-1: none) */
	ino_t ino;			/* of the unix listener we passed */
	int v6only;			/* AF_INET6 with IPV6_V6ONLY */
	int reuseport;			/* SO_REUSEPORT: may share the port */
	uid_t uid;			/* the program's (SO_REUSEPORT) */
};

/* A request being served, and then the connection it made. */
struct svc_conn {
	struct sdp_service *sv;
	struct svc_conn *next;
	int req_fd;			/* the request's socket; -1: answered */
	struct event *req_ev, *tmo_ev;
	struct sdp_ctl_req req;
	struct inet_addr dst;
	uint16_t dport;
	struct sdp_sock *sock;
	struct sdp_sock_info info;
	int app_fd, our_fd;		/* the pair, until handed over */
	int port_fd;			/* reserves our local port */
	ino_t app_ino;
	unsigned int id;
	int passive;			/* a record of a taken connection */
	struct timeval deadline;
	unsigned int path_retry_ms;	/* next wait for a port that is down */
	int family;			/* the program's socket's */
	/* a non-blocking connect (SDP_CTL_F_ASYNC) */
	int async;
	int handed;			/* the program has app_fd: pending */
	int state;			/* enum async_state */
	int so_error;			/* ASYNC_FAILED: its errno */
	int local_set;			/* info.local, lport chosen */
	int abort_close;		/* SO_LINGER {1, 0} */
	int reset_err;			/* ep_reset: keep a CONN_RESET record */
	int lwait;			/* a LINGER_WAIT request waiting */
	uint32_t reply_flags;
	uint32_t sndbuf;		/* to set on app_fd when up */
	size_t filler;			/* written from app_fd, not read */
	int tcp_fd;			/* 'both': the TCP attempt */
	struct event *tcp_ev;
	struct sdp_relay *relay;	/* ... and its relay once up */
	struct timeval failed_at;
};

enum async_state {
	ASYNC_NONE = 0,
	ASYNC_PENDING,
	ASYNC_UP,
	ASYNC_FAILED,
	CONN_RESET,		/* reset, the program's end still open */
};

struct sdp_service {
	struct event_base *base;
	struct sdp_ep *ep;
	struct sdp_service_ops ops;
	void *arg;
	char name[108];
	int ctl_fd;
	struct event *ctl_ev;
	struct event *check_ev;		/* listeners' liveness, each second */
	int diag_ok;			/* sock_diag finds our own socket */
	struct svc_conn *conns;
	struct svc_listener *listeners;
	unsigned int nreqs, nlisteners, next_id, nfailed;
	struct sdp_service_stats st;
};

const struct counter_desc sdp_service_counters[] = {
	COUNTER("requests", struct sdp_service_stats, requests,
		"Requests of preloaded programs taken."),
	COUNTER("bad_requests", struct sdp_service_stats, bad_requests,
		"Malformed requests dropped."),
	COUNTER("connects", struct sdp_service_stats, connects,
		"SDP connections made for programs."),
	COUNTER("connect_failures", struct sdp_service_stats,
		connect_failures,
		"SDP connections for programs that failed."),
	COUNTER("connect_retries", struct sdp_service_stats, connect_retries,
		"Connects tried again: a port (ours or the peer's) was down."),
	COUNTER("listens", struct sdp_service_stats, listens,
		"SDP listeners made for programs."),
	COUNTER("listen_failures", struct sdp_service_stats, listen_failures,
		"SDP listens refused."),
	COUNTER("accepted_sdp", struct sdp_service_stats, accepted_sdp,
		"SDP connections handed to listening programs."),
	COUNTER("accepted_tcp", struct sdp_service_stats, accepted_tcp,
		"TCP connections handed to 'both' listeners."),
	COUNTER("refused", struct sdp_service_stats, refused,
		"SDP connection requests no live listener took."),
	COUNTER("stale_listeners", struct sdp_service_stats, stale_listeners,
		"Listeners found closed by their programs."),
	COUNTER("listens_restored", struct sdp_service_stats,
		listens_restored,
		"Listeners of the service that held this one's socket name "
		"before it (a restart), taken over at start."),
	COUNTER("restore_tcp_failures", struct sdp_service_stats,
		restore_tcp_failures,
		"Taken-over 'both' listeners whose TCP half could not be made "
		"again (SDP only)."),
	COUNTER("listener_probes", struct sdp_service_stats, listener_probes,
		"Listeners whose liveness was checked by connecting to them "
		"(no unix sock_diag): each wakes the program's poll."),
	COUNTER("connects_async", struct sdp_service_stats, connects_async,
		"Non-blocking connects answered at once (EINPROGRESS)."),
	COUNTER("async_failures", struct sdp_service_stats, async_failures,
		"Non-blocking connects that failed after EINPROGRESS."),
	COUNTER("tcp_relays", struct sdp_service_stats, tcp_relays,
		"Non-blocking 'both' connects carried by the service's TCP "
		"(SDP failed)."),
	COUNTER("tcp_relay_bytes", struct sdp_service_stats, tcp_relay_bytes,
		"Bytes the finished TCP relays carried, both ways."),
	COUNTER("async_now", struct sdp_service_stats, async_now,
		"Non-blocking connects held now: pending, failed (until the "
		"program's socket is gone) or relayed."),
	COUNTER("lingers", struct sdp_service_stats, lingers,
		"SO_LINGER requests taken (0: reset at the last close)."),
	COUNTER("keepalives", struct sdp_service_stats, keepalives,
		"SO_KEEPALIVE/TCP_KEEPIDLE requests taken."),
	COUNTER("linger_waits", struct sdp_service_stats, linger_waits,
		"Closes with SO_LINGER {1, N} that asked to wait."),
	COUNTER("linger_waits_done", struct sdp_service_stats,
		linger_waits_done,
		"... answered once everything was acknowledged."),
	COUNTER("resets", struct sdp_service_stats, resets,
		"Connections reset while the program held its socket (its "
		"next read or write fails as TCP's would)."),
	COUNTER("resets_told", struct sdp_service_stats, resets_told,
		"Resets a program's read or write took as ECONNRESET or "
		"ETIMEDOUT."),
	COUNTER("tcp_accept_pauses", struct sdp_service_stats,
		tcp_accept_pauses,
		"Accepts on a 'both' listener's TCP half paused 100 ms: out "
		"of descriptors or memory, or the program's backlog full."),
	COUNTER("tcp_listeners_lost", struct sdp_service_stats,
		tcp_listeners_lost,
		"'Both' listeners whose TCP half stopped listening (shut down "
		"by its program): TCP no longer taken there."),
	COUNTER("listens_adopted", struct sdp_service_stats,
		listens_adopted,
		"Listeners another partition's service made, taking this "
		"partition's connections for a program too."),
	COUNTER("connects_elsewhere", struct sdp_service_stats,
		connects_elsewhere,
		"Connects to a destination not reached through this interface, "
		"left to the program's next service (another partition's)."),
	COUNTERS_END
};

/* ---- addresses --------------------------------------------------------- */

static socklen_t un_addr(const char *name, struct sockaddr_un *sa)
{
	size_t n = strlen(name);

	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (name[0] == '@') {
		memcpy(sa->sun_path + 1, name + 1, n - 1);
		return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
	}
	memcpy(sa->sun_path, name, n);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + 1);
}

/* The program's sockaddr to ours (IPv4-mapped IPv6 as IPv4); -1 for
 * another family. */
static int from_ctl(const union sdp_ctl_addr *c, struct inet_addr *a,
		    uint16_t *port)
{
	memset(a, 0, sizeof(*a));
	if (c->family == AF_INET) {
		inet_addr_v4(a, &c->v4.sin_addr);
		*port = ntohs(c->v4.sin_port);
		return 0;
	}
	if (c->family == AF_INET6) {
		if (IN6_IS_ADDR_V4MAPPED(&c->v6.sin6_addr)) {
			struct in_addr v4;

			memcpy(&v4, c->v6.sin6_addr.s6_addr + 12, 4);
			inet_addr_v4(a, &v4);
		} else {
			inet_addr_v6(a, &c->v6.sin6_addr);
		}
		*port = ntohs(c->v6.sin6_port);
		return 0;
	}
	return -1;
}

/* Ours to the program's, in the family of its socket (IPv4 addresses
 * mapped for an AF_INET6 socket). */
static void to_ctl(const struct inet_addr *a, uint16_t port, int family,
		   union sdp_ctl_addr *c)
{
	memset(c, 0, sizeof(*c));
	if (family == AF_INET6) {
		c->v6.sin6_family = AF_INET6;
		c->v6.sin6_port = htons(port);
		if (a->family == AF_INET6) {
			c->v6.sin6_addr = a->v6;
		} else if (a->family == AF_INET) {
			c->v6.sin6_addr.s6_addr[10] = 0xff;
			c->v6.sin6_addr.s6_addr[11] = 0xff;
			memcpy(c->v6.sin6_addr.s6_addr + 12, &a->v4, 4);
		}
		return;
	}
	c->v4.sin_family = AF_INET;
	c->v4.sin_port = htons(port);
	if (a->family == AF_INET)
		c->v4.sin_addr = a->v4;
}

static int addr_any(const struct inet_addr *a)
{
	static const uint8_t zero[16];

	return !a->family || !memcmp(a->raw, zero, inet_addr_len(a->family));
}

/* ---- replies ------------------------------------------------------------- */

static int send_fd_msg(int sock, const void *msg, size_t len, int fd)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} cb;
	struct iovec iov = { (void *)msg, len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *c;

	if (fd >= 0) {
		memset(&cb, 0, sizeof(cb));
		mh.msg_control = cb.buf;
		mh.msg_controllen = sizeof(cb.buf);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	return sendmsg(sock, &mh, MSG_NOSIGNAL | MSG_DONTWAIT) ==
	       (ssize_t)len ? 0 : -1;
}

static void conn_unlink(struct svc_conn *c)
{
	struct svc_conn **pp;

	for (pp = &c->sv->conns; *pp; pp = &(*pp)->next) {
		if (*pp == c) {
			*pp = c->next;
			return;
		}
	}
}

static void req_done(struct svc_conn *c)
{
	if (c->req_ev)
		event_free(c->req_ev);
	c->req_ev = NULL;
	if (c->tmo_ev)
		event_free(c->tmo_ev);
	c->tmo_ev = NULL;
	if (c->req_fd >= 0) {
		close(c->req_fd);
		c->sv->nreqs--;
	}
	c->req_fd = -1;
}

static void conn_free(struct svc_conn *c)
{
	if (c->lwait && c->sv->ep)
		sdp_ep_cancel_when_sent(c->sv->ep, c);
	req_done(c);
	if (c->sock)
		sdp_sock_cancel(c->sock);
	c->sock = NULL;
	if (c->app_fd >= 0)
		close(c->app_fd);
	if (c->our_fd >= 0)
		close(c->our_fd);
	if (c->port_fd >= 0)
		close(c->port_fd);
	if (c->tcp_ev)
		event_free(c->tcp_ev);
	if (c->tcp_fd >= 0)
		close(c->tcp_fd);
	if (c->relay)
		sdp_relay_free(c->relay);
	if ((c->state == ASYNC_FAILED || c->state == CONN_RESET) &&
	    c->sv->nfailed)
		c->sv->nfailed--;
	if (c->handed && ((c->state != ASYNC_UP && c->state != CONN_RESET) ||
			  c->relay) &&
	    c->sv->st.async_now)
		c->sv->st.async_now--;
	conn_unlink(c);
	free(c);
}

/* Answer the request (err 0 with fd passed), then close it. */
static void reply(struct svc_conn *c, int err, const struct inet_addr *la,
		  uint16_t lport, const struct inet_addr *ra, uint16_t rport,
		  int fd)
{
	struct sdp_ctl_reply r;

	memset(&r, 0, sizeof(r));
	r.magic = SDP_CTL_MAGIC;
	r.id = c->req.id;
	r.err = err;
	r.flags = c->reply_flags;
	if (la)
		to_ctl(la, lport, c->family, &r.local);
	if (ra)
		to_ctl(ra, rport, c->family, &r.remote);
	if (c->req_fd >= 0)
		send_fd_msg(c->req_fd, &r, sizeof(r), err ? -1 : fd);
	req_done(c);
}

/* ---- connect ------------------------------------------------------------- */

/* A TCP socket bound to src, port 0: the kernel's ephemeral port, kept
 * by us for the connection's life. */
static int reserve_port(const struct inet_addr *src, uint16_t *port)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	int fd;

	memset(&ss, 0, sizeof(ss));
	if (src->family == AF_INET6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

		s6->sin6_family = AF_INET6;
		s6->sin6_addr = src->v6;
		sl = sizeof(*s6);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;

		s4->sin_family = AF_INET;
		s4->sin_addr = src->v4;
		sl = sizeof(*s4);
	}
	fd = socket(src->family == AF_INET6 ? AF_INET6 : AF_INET,
		    SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (bind(fd, (struct sockaddr *)&ss, sl) < 0 ||
	    getsockname(fd, (struct sockaddr *)&ss, &sl) < 0) {
		close(fd);
		return -1;
	}
	*port = ntohs(src->family == AF_INET6 ?
		      ((struct sockaddr_in6 *)&ss)->sin6_port :
		      ((struct sockaddr_in *)&ss)->sin_port);
	return fd;
}

static int bind_name(int fd, const char *kind, unsigned int id, char *name,
		     size_t cap)
{
	struct sockaddr_un sa;
	socklen_t sl;
	char full[80];

	snprintf(name, cap, "ibgw-sdp-%s/%ld.%u", kind, (long)getpid(), id);
	snprintf(full, sizeof(full), "@%s", name);
	sl = un_addr(full, &sa);
	return bind(fd, (struct sockaddr *)&sa, sl);
}

static void connect_go(struct svc_conn *c);

static void retry_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	connect_go(arg);
}

static int past(const struct timeval *t)
{
	struct timeval now;

	gettimeofday(&now, NULL);
	return timercmp(&now, t, >=);
}

static socklen_t to_sa(const struct inet_addr *a, uint16_t port,
		       struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (a->family == AF_INET6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

		s6->sin6_family = AF_INET6;
		s6->sin6_addr = a->v6;
		s6->sin6_port = htons(port);
		return sizeof(*s6);
	}
	((struct sockaddr_in *)ss)->sin_family = AF_INET;
	((struct sockaddr_in *)ss)->sin_addr = a->v4;
	((struct sockaddr_in *)ss)->sin_port = htons(port);
	return sizeof(struct sockaddr_in);
}

/* The kernel's source address towards dst (its route), for a pending
 * connect whose neighbour is still being resolved. */
static int route_src(const struct inet_addr *dst, uint16_t port,
		     struct inet_addr *src)
{
	struct sockaddr_storage ss;
	socklen_t sl = to_sa(dst, port, &ss);
	int fd, e = 0;

	fd = socket(ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return errno;
	if (connect(fd, (struct sockaddr *)&ss, sl) < 0 ||
	    getsockname(fd, (struct sockaddr *)&ss, &sl) < 0)
		e = errno;
	close(fd);
	if (e)
		return e;
	memset(src, 0, sizeof(*src));
	if (ss.ss_family == AF_INET6)
		inet_addr_v6(src, &((struct sockaddr_in6 *)&ss)->sin6_addr);
	else
		inet_addr_v4(src, &((struct sockaddr_in *)&ss)->sin_addr);
	return 0;
}

/* The connection's local address (the program's bound one, else src)
 * and port (the program's, else one reserved); 0 or an errno. */
static int local_setup(struct svc_conn *c, const struct inet_addr *src)
{
	uint16_t lport = 0;
	struct inet_addr la;

	c->info.local = *src;
	if (!from_ctl(&c->req.local, &la, &lport) && !addr_any(&la) &&
	    la.family == c->dst.family)
		c->info.local = la;
	if (!lport) {
		c->port_fd = reserve_port(&c->info.local, &lport);
		if (c->port_fd < 0)
			return EADDRNOTAVAIL;
	}
	c->info.lport = lport;
	c->local_set = 1;
	return 0;
}

static int make_pair(struct svc_conn *c)
{
	char name[64];
	struct stat st;
	int sp[2];

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) < 0)
		return errno;
	c->app_fd = sp[0];
	c->our_fd = sp[1];
	bind_name(c->our_fd, "c", c->id, name, sizeof(name));
	if (fstat(c->app_fd, &st) == 0)
		c->app_ino = st.st_ino;
	return 0;
}

/*
 * Hand the program its end now (EINPROGRESS), neither readable nor
 * writable until the outcome: filler written from it until it would
 * block, which we read back when the connection is up.  0 or an errno.
 */
static int pending_start(struct svc_conn *c)
{
	static const char zero[FILL_CHUNK];
	ssize_t n;
	int e;

	if (!c->local_set) {
		struct inet_addr src;

		e = route_src(&c->dst, c->dport, &src);
		if (e || (e = local_setup(c, &src)))
			return e;
	}
	if (c->app_fd < 0 && (e = make_pair(c)))
		return e;
	for (;;) {
		n = send(c->app_fd, zero, sizeof(zero),
			 MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n > 0) {
			c->filler += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN && c->filler)
			break;
		return n < 0 ? errno : EIO;
	}
	c->async = 1;
	c->handed = 1;
	c->state = ASYNC_PENDING;
	c->reply_flags = SDP_CTL_R_PENDING;
	c->sv->st.connects_async++;
	c->sv->st.async_now++;
	reply(c, 0, &c->info.local, c->info.lport, &c->dst, c->dport,
	      c->app_fd);
	return 0;
}

/* Up: the filler read back, the program's SO_SNDBUF, our copy of its end
 * let go -- it turns writable. */
static int async_up(struct svc_conn *c)
{
	char chunk[FILL_CHUNK], *buf;
	size_t left = c->filler, cap;
	ssize_t n;
	int v = (int)c->sndbuf, rc = 0;

	/*
	 * The buffer size first, while the program's end is full (its
	 * wake-up finds it not writable), then the filler in one recv where
	 * memory allows: every buffer freed after the end turned writable
	 * wakes its pollers again, and an edge-triggered epoll that took
	 * the first edge between two recv calls would see a second one,
	 * where TCP's connect gives one.
	 */
	if (v > 0)
		setsockopt(c->app_fd, SOL_SOCKET, SO_SNDBUF, &v, sizeof(v));
	buf = left > sizeof(chunk) ? malloc(left) : NULL;
	cap = buf ? left : sizeof(chunk);
	if (!buf)
		buf = chunk;
	while (left) {
		n = recv(c->our_fd, buf, left < cap ? left : cap, MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			rc = -1;
			break;
		}
		left -= (size_t)n;
	}
	if (buf != chunk)
		free(buf);
	c->filler = 0;
	close(c->app_fd);
	c->app_fd = -1;
	c->state = ASYNC_UP;
	c->reply_flags = 0;
	return rc;
}

static void free_oldest_failed(struct sdp_service *sv)
{
	struct svc_conn *o, *old = NULL;

	for (o = sv->conns; o; o = o->next)
		if ((o->state == ASYNC_FAILED || o->state == CONN_RESET) &&
		    (!old || timercmp(&o->failed_at, &old->failed_at, <)))
			old = o;
	if (old)
		conn_free(old);
}

/*
 * Failed after EINPROGRESS: our end closed with the filler unread (the
 * program's end gets ECONNRESET as its pending error: POLLERR, POLLHUP,
 * POLLOUT), the errno kept for INFO until the program's end is gone.
 */
static void async_failed(struct svc_conn *c, int e)
{
	struct sdp_service *sv = c->sv;

	sv->st.async_failures++;
	if (c->tmo_ev)
		event_free(c->tmo_ev);
	c->tmo_ev = NULL;
	if (c->tcp_ev)
		event_free(c->tcp_ev);
	c->tcp_ev = NULL;
	if (c->tcp_fd >= 0)
		close(c->tcp_fd);
	c->tcp_fd = -1;
	if (c->our_fd >= 0)
		close(c->our_fd);
	c->our_fd = -1;
	if (c->app_fd >= 0)
		close(c->app_fd);
	c->app_fd = -1;
	if (c->port_fd >= 0)
		close(c->port_fd);
	c->port_fd = -1;
	c->state = ASYNC_FAILED;
	c->so_error = e;
	gettimeofday(&c->failed_at, NULL);
	if (++sv->nfailed > MAX_FAILED)
		free_oldest_failed(sv);
}

/*
 * The relay ended.  By the TCP side's error (the server's RST, a peer
 * that stopped answering): kept as a reset SDP connection is
 * (CONN_RESET), so that the program's next read or write after what
 * came before it fails with that error, as over TCP (INFO with
 * SDP_CTL_F_TAKE_RESET; the record goes once the program's end does).
 */
static void relay_done(void *arg, uint64_t bytes, int err)
{
	struct svc_conn *c = arg;
	struct sdp_service *sv = c->sv;

	c->relay = NULL;	/* freed: conn_free counts it no more */
	sv->st.tcp_relay_bytes += bytes;
	if (sv->st.async_now)
		sv->st.async_now--;
	if (!err || !c->app_ino) {
		conn_free(c);
		return;
	}
	c->reset_err = err;
	c->state = CONN_RESET;
	sv->st.resets++;
	gettimeofday(&c->failed_at, NULL);
	if (++sv->nfailed > MAX_FAILED)
		free_oldest_failed(sv);
}

static void tcp_cb(evutil_socket_t fd, short what, void *arg)
{
	struct svc_conn *c = arg;
	socklen_t sl = sizeof(int);
	int e = 0;

	(void)fd;
	(void)what;
	event_free(c->tcp_ev);
	c->tcp_ev = NULL;
	if (getsockopt(c->tcp_fd, SOL_SOCKET, SO_ERROR, &e, &sl) < 0)
		e = errno;
	if (e) {
		async_failed(c, e);
		return;
	}
	async_up(c);
	c->relay = sdp_relay_new(c->sv->base, c->our_fd, c->tcp_fd,
				 relay_done, c);
	if (!c->relay) {
		async_failed(c, ENOMEM);
		return;
	}
	c->our_fd = c->tcp_fd = -1;
	c->reply_flags = SDP_CTL_R_TCP;
	c->sv->st.tcp_relays++;
	if (c->abort_close)
		sdp_relay_abort_on_close(c->relay, 1);	/* may free c */
}

/* 'both': the destination by TCP from the service, the program's end
 * relayed to it once connected.  0 or an errno. */
static int tcp_start(struct svc_conn *c)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	int fd = c->port_fd, one = 1, e;

	c->port_fd = -1;
	if (fd < 0) {
		fd = socket(c->dst.family == AF_INET6 ? AF_INET6 : AF_INET,
			    SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return errno;
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		sl = to_sa(&c->info.local, c->info.lport, &ss);
		if (bind(fd, (struct sockaddr *)&ss, sl) < 0) {
			e = errno;
			close(fd);
			return e;
		}
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	sl = to_sa(&c->dst, c->dport, &ss);
	if (connect(fd, (struct sockaddr *)&ss, sl) < 0 &&
	    errno != EINPROGRESS) {
		e = errno;
		close(fd);
		return e;
	}
	c->tcp_fd = fd;
	c->tcp_ev = event_new(c->sv->base, fd, EV_WRITE, tcp_cb, c);
	if (!c->tcp_ev || event_add(c->tcp_ev, NULL) < 0)
		return ENOMEM;
	return 0;
}

/* The SDP attempt failed with e: the answer, for a blocking connect;
 * for a pending one TCP next ('both'), else its failure. */
static void connect_fail(struct svc_conn *c, int e)
{
	int te;

	c->sv->st.connect_failures++;
	c->sock = NULL;
	if (!c->handed) {
		reply(c, e, NULL, 0, NULL, 0, -1);
		conn_free(c);
		return;
	}
	if (c->tmo_ev)
		event_free(c->tmo_ev);
	c->tmo_ev = NULL;
	if (!(c->req.flags & SDP_CTL_F_BOTH)) {
		async_failed(c, e);
		return;
	}
	te = tcp_start(c);
	if (te)
		async_failed(c, te);
}

/*
 * A port on the way down (ours: ENETDOWN; the peer's: no path,
 * EHOSTUNREACH) while the neighbour is known: TCP would send its SYN
 * again, so the connect is tried again, waits doubling from 50 ms, until
 * its deadline ('both': 2 s, then TCP).  1: a retry is scheduled.
 */
static int retry_later(struct svc_conn *c, int e)
{
	struct timeval tv;

	if ((e != EHOSTUNREACH && e != ENETDOWN) || past(&c->deadline))
		return 0;
	if (c->tmo_ev)
		event_free(c->tmo_ev);
	c->tmo_ev = evtimer_new(c->sv->base, retry_cb, c);
	if (!c->tmo_ev)
		return 0;
	if (!c->path_retry_ms)
		c->path_retry_ms = PATH_RETRY_MS;
	tv.tv_sec = c->path_retry_ms / 1000;
	tv.tv_usec = (c->path_retry_ms % 1000) * 1000;
	if (c->path_retry_ms < PATH_RETRY_MAX_MS)
		c->path_retry_ms *= 2;
	evtimer_add(c->tmo_ev, &tv);
	c->sv->st.connect_retries++;
	return 1;
}

static void conn_timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	struct svc_conn *c = arg;

	(void)fd;
	(void)what;
	if (c->sock) {
		sdp_sock_cancel(c->sock);
		c->sock = NULL;
	}
	connect_fail(c, ETIMEDOUT);
}

/* Resolve, then start the SDP connection. */
static void connect_go(struct svc_conn *c)
{
	struct sdp_service *sv = c->sv;
	struct timeval tv = { 0, RESOLVE_RETRY_MS * 1000 };
	struct inet_addr src;
	union fab_gid gid;
	char err[160];
	int e;

	if (sv->ops.resolve(sv->arg, &c->dst, &gid, &src) < 0) {
		e = errno;
		if ((e == EAGAIN || e == ENETDOWN) && !past(&c->deadline)) {
			/* a non-blocking connect need not wait for ARP */
			if (c->async && !c->handed) {
				int pe = pending_start(c);

				if (pe) {
					connect_fail(c, pe);
					return;
				}
			}
			if (e == ENETDOWN && retry_later(c, e))
				return;
			if (e == EAGAIN && !c->tmo_ev)
				c->tmo_ev = evtimer_new(sv->base, retry_cb, c);
			if (e == EAGAIN && c->tmo_ev) {
				evtimer_add(c->tmo_ev, &tv);
				return;
			}
		}
		if (e == ENETUNREACH && !c->handed &&
		    (c->req.flags & SDP_CTL_F_ROUTE)) {
			/* another partition's service is asked next */
			sv->st.connects_elsewhere++;
			reply(c, e, NULL, 0, NULL, 0, -1);
			conn_free(c);
			return;
		}
		connect_fail(c, e == EAGAIN ? EHOSTUNREACH : e);
		return;
	}
	if (c->tmo_ev) {
		event_free(c->tmo_ev);
		c->tmo_ev = NULL;
	}
	c->info.remote = c->dst;
	c->info.rport = c->dport;
	c->info.peer_gid = gid;
	if (!c->local_set && (e = local_setup(c, &src))) {
		connect_fail(c, e);
		return;
	}
	if (c->app_fd < 0 && (e = make_pair(c))) {
		connect_fail(c, e);
		return;
	}
	if (c->async && !c->handed && (e = pending_start(c))) {
		connect_fail(c, e);
		return;
	}
	c->sock = sdp_ep_connect(sv->ep, &c->info, c->our_fd, c, err,
				 sizeof(err));
	if (!c->sock) {
		e = errno;
		if (retry_later(c, e))
			return;
		connect_fail(c, e ? e : ECONNREFUSED);
		return;
	}
	if (c->abort_close)
		sdp_sock_abort_on_close(c->sock, 1);
	/* the deadline as a whole: resolution and the CM */
	{
		struct timeval now, left;

		gettimeofday(&now, NULL);
		timersub(&c->deadline, &now, &left);
		if (left.tv_sec < 0)
			left.tv_sec = 0, left.tv_usec = 0;
		c->tmo_ev = evtimer_new(sv->base, conn_timeout_cb, c);
		if (c->tmo_ev)
			evtimer_add(c->tmo_ev, &left);
	}
}

/* ---- listeners ----------------------------------------------------------- */

/* The listener goes with a connection it accepted but never handed
 * over: reset, as TCP resets those a closed listener had queued. */
static void drop_held(struct svc_listener *l)
{
	struct linger lg = { 1, 0 };

	if (l->held_fd < 0)
		return;
	setsockopt(l->held_fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	close(l->held_fd);
	l->held_fd = -1;
}

static void listener_free(struct svc_listener *l)
{
	struct sdp_service *sv = l->sv;
	struct svc_listener **pp;

	for (pp = &sv->listeners; *pp; pp = &(*pp)->next) {
		if (*pp == l) {
			*pp = l->next;
			break;
		}
	}
	if (l->tcp_ev)
		event_free(l->tcp_ev);
	if (l->tcp_pause_ev)
		event_free(l->tcp_pause_ev);
	if (l->tcp_fd >= 0)
		close(l->tcp_fd);
	drop_held(l);
	sdp_ep_unlisten(sv->ep, l->port);
	sv->nlisteners--;
	free(l);
}

/* A stream connected to the program's listener, or -1 (errno
 * ECONNREFUSED: nobody holds it any more). */
static int listener_connect(const struct svc_listener *l, unsigned int id)
{
	struct sockaddr_un sa;
	char full[sizeof(l->name) + 2], name[64];
	socklen_t sl;
	int fd;

	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -1;
	bind_name(fd, "c", id, name, sizeof(name));
	snprintf(full, sizeof(full), "@%s", l->name);
	sl = un_addr(full, &sa);
	if (connect(fd, (struct sockaddr *)&sa, sl) < 0) {
		int e = errno;

		close(fd);
		errno = e;	/* ECONNREFUSED: gone; EAGAIN: backlog full */
		return -1;
	}
	return fd;
}

static int accept_hdr(int fd, enum sdp_ctl_acc_kind kind,
		      const struct inet_addr *la, uint16_t lport,
		      const struct inet_addr *ra, uint16_t rport, int family,
		      int pass_fd)
{
	struct sdp_ctl_accept h;

	memset(&h, 0, sizeof(h));
	h.magic = SDP_CTL_MAGIC;
	h.kind = kind;
	if (la)
		to_ctl(la, lport, family, &h.local);
	if (ra)
		to_ctl(ra, rport, family, &h.remote);
	return send_fd_msg(fd, &h, sizeof(h), pass_fd);
}

/*
 * One sock_diag request about the unix socket with inode ino (show:
 * UDIAG_SHOW_* of the answer): the answer's length in buf, or -1 when no
 * answer came.
 */
static ssize_t unix_diag(ino_t ino, uint32_t show, void *buf, size_t len)
{
	struct {
		struct nlmsghdr nh;
		struct unix_diag_req r;
	} q;
	ssize_t n = -1;
	int s;

	memset(&q, 0, sizeof(q));
	q.nh.nlmsg_len = sizeof(q);
	q.nh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	q.nh.nlmsg_flags = NLM_F_REQUEST;
	q.r.sdiag_family = AF_UNIX;
	q.r.udiag_states = ~0u;
	q.r.udiag_ino = (uint32_t)ino;
	q.r.udiag_show = show;
	q.r.udiag_cookie[0] = q.r.udiag_cookie[1] = ~0u;
	s = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (s < 0)
		return -1;
	if (send(s, &q, sizeof(q), 0) == (ssize_t)sizeof(q))
		n = recv(s, buf, len, 0);
	close(s);
	return n;
}

/*
 * Does the unix socket with inode ino still exist (in our network
 * namespace)?  1 found, 0 not (ENOENT), -1 when the kernel cannot say.
 */
static int unix_query(ino_t ino)
{
	union {
		struct nlmsghdr nh;
		char buf[1024];
	} a;
	ssize_t n = unix_diag(ino, 0, a.buf, sizeof(a.buf));

	if (n < (ssize_t)sizeof(a.nh) || !NLMSG_OK(&a.nh, (size_t)n))
		return -1;
	if (a.nh.nlmsg_type == SOCK_DIAG_BY_FAMILY)
		return 1;
	if (a.nh.nlmsg_type == NLMSG_ERROR &&
	    ((const struct nlmsgerr *)NLMSG_DATA(&a.nh))->error == -ENOENT)
		return 0;
	return -1;
}

/*
 * Does the unix socket with inode ino still listen under the abstract
 * name (no leading NUL), taking connections (not shut down)?  What a
 * connect to it would find, asked of sock_diag without connecting (a
 * probe wakes the program's poll and takes its blocking accept).  1
 * yes, 0 no (gone, or not that listener), -1 when the kernel cannot say.
 */
static int unix_listening(ino_t ino, const char *name)
{
	union {
		struct nlmsghdr nh;
		char buf[1024];
	} a;
	const struct unix_diag_msg *m;
	const struct rtattr *rta;
	size_t nlen = strlen(name);
	int named = 0, shut = 0, len;
	ssize_t n = unix_diag(ino, UDIAG_SHOW_NAME, a.buf, sizeof(a.buf));

	if (n < (ssize_t)sizeof(a.nh) || !NLMSG_OK(&a.nh, (size_t)n))
		return -1;
	if (a.nh.nlmsg_type == NLMSG_ERROR &&
	    ((const struct nlmsgerr *)NLMSG_DATA(&a.nh))->error == -ENOENT)
		return 0;
	if (a.nh.nlmsg_type != SOCK_DIAG_BY_FAMILY ||
	    a.nh.nlmsg_len < NLMSG_LENGTH(sizeof(*m)))
		return -1;
	m = NLMSG_DATA(&a.nh);
	if (m->udiag_type != SOCK_STREAM || m->udiag_state != DIAG_LISTEN)
		return 0;
	len = (int)(a.nh.nlmsg_len - NLMSG_LENGTH(sizeof(*m)));
	for (rta = (const struct rtattr *)(m + 1); RTA_OK(rta, len);
	     rta = RTA_NEXT(rta, len)) {
		const char *d = RTA_DATA(rta);

		if (rta->rta_type == UNIX_DIAG_NAME)
			named = RTA_PAYLOAD(rta) == nlen + 1 && !d[0] &&
				!memcmp(d + 1, name, nlen);
		else if (rta->rta_type == UNIX_DIAG_SHUTDOWN &&
			 RTA_PAYLOAD(rta) >= 1)
			shut = d[0] & DIAG_RCV_SHUTDOWN;
	}
	return named && !shut;
}

/*
 * The inode of the peer of our unix stream end fd (the program's end):
 * > 0, 0 when it has none left (the program's end is gone), -1 when the
 * kernel cannot say.
 */
static long unix_peer_ino(int fd)
{
	union {
		struct nlmsghdr nh;
		char buf[1024];
	} a;
	const struct unix_diag_msg *m;
	const struct rtattr *rta;
	struct stat st;
	long r = 0;
	ssize_t n;
	int len;

	if (fstat(fd, &st) < 0)
		return -1;
	n = unix_diag(st.st_ino, UDIAG_SHOW_PEER, a.buf, sizeof(a.buf));
	if (n < (ssize_t)sizeof(a.nh) || !NLMSG_OK(&a.nh, (size_t)n) ||
	    a.nh.nlmsg_type != SOCK_DIAG_BY_FAMILY ||
	    a.nh.nlmsg_len < NLMSG_LENGTH(sizeof(*m)))
		return -1;
	m = NLMSG_DATA(&a.nh);
	len = (int)(a.nh.nlmsg_len - NLMSG_LENGTH(sizeof(*m)));
	for (rta = (const struct rtattr *)(m + 1); RTA_OK(rta, len);
	     rta = RTA_NEXT(rta, len))
		if (rta->rta_type == UNIX_DIAG_PEER &&
		    RTA_PAYLOAD(rta) >= sizeof(uint32_t))
			r = *(const uint32_t *)RTA_DATA(rta);
	return r;
}

/* Listeners whose programs closed them all go: their TCP listeners
 * ('both') no longer hold the port, their service IDs no longer take
 * REQs.  Within a second of the close. */
static void check_cb(evutil_socket_t fd, short what, void *arg)
{
	struct sdp_service *sv = arg;
	struct svc_listener *l, *next;

	struct svc_conn *c, *cn;
	struct timeval now;

	(void)fd;
	(void)what;
	/* failed connects' and resets' records: until the program's end
	 * is gone */
	gettimeofday(&now, NULL);
	for (c = sv->conns; c; c = cn) {
		cn = c->next;
		if (c->state != ASYNC_FAILED && c->state != CONN_RESET)
			continue;
		if (sv->diag_ok ? unix_query(c->app_ino) == 0 :
		    now.tv_sec - c->failed_at.tv_sec > FAILED_KEEP_S)
			conn_free(c);
	}
	if (!sv->diag_ok)
		return;
	for (l = sv->listeners; l; l = next) {
		next = l->next;
		if (l->ino && unix_query(l->ino) == 0) {
			sv->st.stale_listeners++;
			listener_free(l);
		}
	}
}

/*
 * Is the listener still held by a program?  With sock_diag, its unix
 * listener still listening under its name says so, and nothing reaches
 * the program.  Without (or when the kernel cannot say): a probe,
 * connected and closed; the program's accept takes it and throws it
 * away, but its poll woke for it, and a blocking accept then waits for
 * the next connection (docs/sdp.md, Listeners).
 */
static int listener_alive(struct svc_listener *l)
{
	int fd, r;

	if (l->sv->diag_ok && l->ino &&
	    (r = unix_listening(l->ino, l->name)) >= 0)
		return r;
	l->sv->st.listener_probes++;
	fd = listener_connect(l, l->sv->next_id++);

	if (fd < 0)
		return errno == EAGAIN;	/* a full backlog: alive */
	accept_hdr(fd, SDP_CTL_ACC_PROBE, NULL, 0, NULL, 0, l->family, -1);
	close(fd);
	return 1;
}

static void tcp_resume_cb(evutil_socket_t fd, short what, void *arg);

/* Stop watching the TCP half for 100 ms: descriptors or memory ran out,
 * or the program's unix backlog is full; what waits stays queued in the
 * kernel's TCP backlog meanwhile, as it would for a program that does
 * not accept. */
static void tcp_pause(struct svc_listener *l)
{
	struct timeval tv = { 0, 100000 };

	if (!l->tcp_pause_ev)
		l->tcp_pause_ev = evtimer_new(l->sv->base, tcp_resume_cb, l);
	if (!l->tcp_pause_ev)
		return;
	l->sv->st.tcp_accept_pauses++;
	if (l->tcp_ev)
		event_del(l->tcp_ev);
	evtimer_add(l->tcp_pause_ev, &tv);
}

/*
 * accept failed on a 'both' listener's TCP half.  Out of descriptors or
 * memory, the listener stays readable: wait 100 ms instead of spinning.
 * Not a listener any more (its program shut it down through a dup it
 * kept: EINVAL) or never one: the TCP half is dropped, as nothing will
 * come from it, and the SDP half goes on.
 */
static void tcp_accept_failed(struct svc_listener *l, int e)
{
	switch (e) {
	case EAGAIN:
#if EWOULDBLOCK != EAGAIN
	case EWOULDBLOCK:
#endif
	case EINTR:
	case ECONNABORTED:
	case EPROTO:
	case EPERM:		/* a firewall's */
	case ENETDOWN: case ENOPROTOOPT: case EHOSTDOWN: case ENONET:
	case EHOSTUNREACH: case ENETUNREACH: case EOPNOTSUPP:
		return;		/* this connection's, not the listener's */
	case EMFILE:
	case ENFILE:
	case ENOBUFS:
	case ENOMEM:
		tcp_pause(l);
		return;
	default:
		l->sv->st.tcp_listeners_lost++;
		event_free(l->tcp_ev);
		l->tcp_ev = NULL;
		close(l->tcp_fd);
		l->tcp_fd = -1;
	}
}

/* Is e a shortage that passes (the TCP connection then waits)? */
static int passing(int e)
{
	return e == EMFILE || e == ENFILE || e == ENOBUFS || e == ENOMEM ||
	       e == EAGAIN || e == EWOULDBLOCK;
}

/*
 * Hand TCP connection t to the program: a stream to its unix listener,
 * the header and t as SCM_RIGHTS.  0: handed (or lost on the way, t
 * closed); 1: the listener is gone (freed; t reset); -1: a shortage
 * that passes (out of descriptors, the program's backlog full): t is
 * kept, untouched, to be handed over later.
 */
static int tcp_hand(struct svc_listener *l, int t)
{
	struct sdp_service *sv = l->sv;
	struct sockaddr_storage la, ra;
	socklen_t ll = sizeof(la), rl = sizeof(ra);
	struct linger lg = { 1, 0 };
	struct sdp_ctl_accept h;
	int u;

	u = listener_connect(l, sv->next_id++);
	if (u < 0) {
		if (passing(errno))
			return -1;
		setsockopt(t, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
		close(t);
		if (errno == ECONNREFUSED) {
			sv->st.stale_listeners++;
			listener_free(l);
			return 1;
		}
		return 0;
	}
	memset(&la, 0, sizeof(la));
	memset(&ra, 0, sizeof(ra));
	getsockname(t, (struct sockaddr *)&la, &ll);
	getpeername(t, (struct sockaddr *)&ra, &rl);
	memset(&h, 0, sizeof(h));
	h.magic = SDP_CTL_MAGIC;
	h.kind = SDP_CTL_ACC_TCP;
	memcpy(&h.local, &la, ll < sizeof(h.local) ? ll : sizeof(h.local));
	memcpy(&h.remote, &ra, rl < sizeof(h.remote) ? rl : sizeof(h.remote));
	if (send_fd_msg(u, &h, sizeof(h), t) == 0)
		sv->st.accepted_tcp++;
	close(t);
	close(u);
	return 0;
}

/* The held connection first; 0 when there is none (any more), else
 * the listener is paused again or gone. */
static int tcp_hand_held(struct svc_listener *l)
{
	int t = l->held_fd, r;

	if (t < 0)
		return 0;
	l->held_fd = -1;
	r = tcp_hand(l, t);
	if (r < 0) {
		l->held_fd = t;
		tcp_pause(l);
	}
	return r;
}

static void tcp_accept_cb(evutil_socket_t fd, short what, void *arg)
{
	struct svc_listener *l = arg;
	int t, n = 0;

	(void)fd;
	(void)what;
	if (tcp_hand_held(l))
		return;
	while (n++ < 16) {
		t = accept4(l->tcp_fd, NULL, NULL, SOCK_CLOEXEC);
		if (t < 0) {
			tcp_accept_failed(l, errno);
			return;
		}
		switch (tcp_hand(l, t)) {
		case 1:
			return;
		case -1:
			l->held_fd = t;
			tcp_pause(l);
			return;
		}
	}
}

static void tcp_resume_cb(evutil_socket_t fd, short what, void *arg)
{
	struct svc_listener *l = arg;

	(void)fd;
	(void)what;
	if (tcp_hand_held(l))
		return;
	if (l->tcp_ev)
		event_add(l->tcp_ev, NULL);
}

/* Which connections a listener takes, as TCP's: an AF_INET one IPv4,
 * an AF_INET6 one IPv6 and, unless IPV6_V6ONLY, IPv4 (v4-mapped). */
static int takes_v4(int family, int v6only)
{
	return family == AF_INET || (family == AF_INET6 && !v6only);
}

static int takes_family(const struct svc_listener *l, int af)
{
	return af == AF_INET6 ? l->family == AF_INET6 :
	       takes_v4(l->family, l->v6only);
}

static uid_t req_uid(const struct svc_conn *c)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);

	if (c->req_fd < 0 ||
	    getsockopt(c->req_fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0)
		return (uid_t)-1;
	return cr.uid;
}

/* A listening TCP socket? */
static int tcp_listener(int fd)
{
	int v = 0, t = 0, d = 0;
	socklen_t sl = sizeof(v);

	if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &v, &sl) < 0 || !v)
		return 0;
	sl = sizeof(t);
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &t, &sl) < 0 ||
	    t != SOCK_STREAM)
		return 0;
	sl = sizeof(d);
	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &d, &sl) < 0)
		return 0;
	return d == AF_INET || d == AF_INET6;
}

/*
 * An ADOPT listen's socket: a listening unix stream socket another
 * service named (PRELOAD_LISTEN_PREFIX, "ibgw-sdp-l/"): its name, without
 * the leading NUL, into name.  0, or -1.
 */
static int adopted_name(int fd, char *name, size_t cap)
{
	struct sockaddr_un sa;
	socklen_t sl = sizeof(sa);
	static const char pfx[] = "ibgw-sdp-l/";
	int v = 0, t = 0;
	socklen_t vl = sizeof(v);
	size_t n;

	if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &v, &vl) < 0 || !v)
		return -1;
	vl = sizeof(t);
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &t, &vl) < 0 ||
	    t != SOCK_STREAM)
		return -1;
	memset(&sa, 0, sizeof(sa));
	if (getsockname(fd, (struct sockaddr *)&sa, &sl) < 0 ||
	    sa.sun_family != AF_UNIX ||
	    sl <= offsetof(struct sockaddr_un, sun_path) + sizeof(pfx) ||
	    sa.sun_path[0])
		return -1;
	n = sl - offsetof(struct sockaddr_un, sun_path) - 1;
	if (n >= cap || memcmp(sa.sun_path + 1, pfx, sizeof(pfx) - 1) ||
	    memchr(sa.sun_path + 1, 0, n))
		return -1;
	memcpy(name, sa.sun_path + 1, n);
	name[n] = 0;
	return 0;
}

/* A 'both' listener's TCP half, watched from now on. */
static void listener_tcp_watch(struct svc_listener *l, int tcp_fd)
{
	l->tcp_fd = tcp_fd;
	fcntl(l->tcp_fd, F_SETFL, fcntl(l->tcp_fd, F_GETFL) | O_NONBLOCK);
	l->tcp_ev = event_new(l->sv->base, l->tcp_fd, EV_READ | EV_PERSIST,
			      tcp_accept_cb, l);
	if (l->tcp_ev)
		event_add(l->tcp_ev, NULL);
}

/* The service's control socket name, short, in its listeners' names:
 * the one that holds that name next takes them over (FNV-1a). */
static uint32_t name_hash(const char *name)
{
	uint32_t h = 2166136261u;

	for (; *name; name++)
		h = (h ^ (uint8_t)*name) * 16777619u;
	return h;
}

/*
 * A listener's name says what a service started after this one needs to
 * take it over (listeners_restore): "ibgw-sdp-l/PID.ID/HASH.FLAGS.UID.
 * PORT.FAMILY/ADDR", HASH of our control socket's name, FLAGS LN_*, ADDR
 * "*" for any.  At most 106 characters.
 */
#define LN_BOTH		1
#define LN_V6ONLY	2
#define LN_REUSEPORT	4

static int listener_bind(int fd, struct svc_listener *l, unsigned int id,
			 int both)
{
	struct sockaddr_un sa;
	char full[sizeof(l->name) + 2], a[INET6_ADDRSTRLEN];
	unsigned int f = (both ? LN_BOTH : 0) | (l->v6only ? LN_V6ONLY : 0) |
			 (l->reuseport ? LN_REUSEPORT : 0);

	if (addr_any(&l->addr))
		snprintf(a, sizeof(a), "*");
	else if (!inet_ntop(l->addr.family, l->addr.raw, a, sizeof(a)))
		return -1;
	snprintf(l->name, sizeof(l->name),
		 "ibgw-sdp-l/%ld.%u/%08x.%x.%lu.%u.%d/%s", (long)getpid(), id,
		 name_hash(l->sv->name), f, (unsigned long)l->uid, l->port,
		 l->family, a);
	snprintf(full, sizeof(full), "@%s", l->name);
	return bind(fd, (struct sockaddr *)&sa, un_addr(full, &sa));
}

static void do_listen(struct svc_conn *c, int tcp_fd)
{
	struct sdp_service *sv = c->sv;
	struct svc_listener *l, *o, *next;
	struct inet_addr a;
	uint16_t port = 0;
	char err[160];
	int fd = -1, e, alive;
	int v6only = c->family == AF_INET6 &&
		     (c->req.flags & SDP_CTL_F_V6ONLY);
	int reuse = !!(c->req.flags & SDP_CTL_F_REUSEPORT);
	int adopt = !!(c->req.flags & SDP_CTL_F_ADOPT);
	uid_t uid = req_uid(c);
	char aname[108];

	if (from_ctl(&c->req.local, &a, &port) < 0 || !port) {
		e = EINVAL;
		goto fail;
	}
	/* adopting: the socket passed is the listener, and the TCP half
	 * stays with the service that made it */
	if (adopt && (tcp_fd < 0 || (c->req.flags & SDP_CTL_F_BOTH) ||
		      adopted_name(tcp_fd, aname, sizeof(aname)) < 0)) {
		sv->st.bad_requests++;
		e = EINVAL;
		goto fail;
	}
	if (adopt) {
		fd = tcp_fd;
		tcp_fd = -1;
	}
	/* the TCP half must be one: a socket that cannot accept would
	 * wake the loop for ever */
	if (tcp_fd >= 0 && !tcp_listener(tcp_fd)) {
		sv->st.bad_requests++;
		e = EINVAL;
		goto fail;
	}
	for (o = sv->listeners; o; o = next) {
		next = o->next;
		if (o->port != port)
			continue;
		if (!addr_any(&o->addr) && !addr_any(&a) &&
		    !inet_addr_equal(&o->addr, &a))
			continue;
		/* an IPv4 listener beside an IPv6-only one */
		if (!(takes_v4(o->family, o->v6only) &&
		      takes_v4(c->family, v6only)) &&
		    !(o->family == AF_INET6 && c->family == AF_INET6))
			continue;
		alive = listener_alive(o);
		/* SO_REUSEPORT on both, one user: the port is shared */
		if (alive && reuse && o->reuseport && o->uid == uid &&
		    uid != (uid_t)-1)
			continue;
		if (alive) {
			e = EADDRINUSE;
			goto fail;
		}
		sv->st.stale_listeners++;
		listener_free(o);
	}
	if (sv->nlisteners >= MAX_LISTENERS) {
		e = ENOBUFS;
		goto fail;
	}
	l = calloc(1, sizeof(*l));
	if (!l) {
		e = ENOMEM;
		goto fail;
	}
	l->sv = sv;
	l->addr = addr_any(&a) ? (struct inet_addr){ 0 } : a;
	l->family = c->family;
	l->port = port;
	l->tcp_fd = -1;
	l->held_fd = -1;
	l->v6only = v6only;
	l->reuseport = reuse;
	l->uid = uid;
	/*
	 * Not the program's backlog: a full unix queue makes ep_accept
	 * refuse the SDP connection (a REJ, and a 'both' client's TCP
	 * fallback, an 'sdp' one's ECONNREFUSED), where TCP drops the SYN
	 * and the client's retry gets in.  socketserver's 5 refused a
	 * threaded client's burst (sdp_semantics.sh); SOMAXCONN, capped by
	 * the kernel at net.core.somaxconn, keeps TCP's outcome.
	 */
	if (adopt) {
		snprintf(l->name, sizeof(l->name), "%s", aname);
	} else {
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0 || listener_bind(fd, l, c->id, tcp_fd >= 0) < 0 ||
		    listen(fd, c->req.backlog > SOMAXCONN ? c->req.backlog :
			   SOMAXCONN) < 0) {
			e = errno;
			free(l);
			goto fail;
		}
	}
	if (sdp_ep_listen(sv->ep, port, err, sizeof(err)) < 0) {
		e = errno ? errno : EADDRINUSE;
		free(l);
		goto fail;
	}
	l->next = sv->listeners;
	sv->listeners = l;
	sv->nlisteners++;
	if (tcp_fd >= 0) {
		listener_tcp_watch(l, tcp_fd);
		tcp_fd = -1;
	}
	{
		struct stat st;

		if (fstat(fd, &st) == 0)
			l->ino = st.st_ino;
	}
	sv->st.listens++;
	if (adopt)
		sv->st.listens_adopted++;
	/* an adopted listener is the program's: not handed back, and not
	 * held here (its close must be seen) */
	reply(c, 0, &a, port, NULL, 0, adopt ? -1 : fd);
	close(fd);
	conn_free(c);
	return;
fail:
	if (fd >= 0)
		close(fd);
	if (tcp_fd >= 0)
		close(tcp_fd);
	sv->st.listen_failures++;
	reply(c, e, NULL, 0, NULL, 0, -1);
	conn_free(c);
}

/* A bind to req.local failed: let go of the port if only a dead
 * listener of ours holds it. */
static void do_release(struct svc_conn *c)
{
	struct svc_listener *o, *next;
	struct inet_addr a;
	uint16_t port = 0;
	int freed = 0;

	if (from_ctl(&c->req.local, &a, &port) < 0 || !port) {
		reply(c, EINVAL, NULL, 0, NULL, 0, -1);
		conn_free(c);
		return;
	}
	for (o = c->sv->listeners; o; o = next) {
		next = o->next;
		if (o->port != port || listener_alive(o))
			continue;
		c->sv->st.stale_listeners++;
		listener_free(o);
		freed = 1;
	}
	reply(c, freed ? 0 : EADDRINUSE, NULL, 0, NULL, 0, -1);
	conn_free(c);
}

/* ---- the endpoint's callbacks -------------------------------------------- */

/* Listeners sharing a port (SO_REUSEPORT) take connections in turn:
 * the one that took one goes to the end of the list. */
static void listener_to_tail(struct sdp_service *sv, struct svc_listener *l)
{
	struct svc_listener **pp;

	for (pp = &sv->listeners; *pp && *pp != l; pp = &(*pp)->next)
		;
	if (!*pp || !l->next)
		return;
	*pp = l->next;
	while (*pp)
		pp = &(*pp)->next;
	*pp = l;
	l->next = NULL;
}

static int ep_accept(void *arg, const struct sdp_sock_info *info, void **ctx,
		     int *connecting)
{
	struct sdp_service *sv = arg;
	struct svc_listener *l, *next;
	struct svc_conn *c;
	unsigned int id;
	int fd;

	*ctx = NULL;
	(void)connecting;	/* a unix stream: connected at once */
	for (l = sv->listeners; l; l = next) {
		next = l->next;
		if (l->port != info->lport)
			continue;
		if (!addr_any(&l->addr) && !inet_addr_equal(&l->addr,
							    &info->local))
			continue;
		if (!takes_family(l, info->local.family))
			continue;
		id = sv->next_id++;
		fd = listener_connect(l, id);
		if (fd < 0) {
			if (errno == ECONNREFUSED) {
				sv->st.stale_listeners++;
				listener_free(l);
				continue;
			}
			break;	/* a full backlog: refused */
		}
		if (accept_hdr(fd, SDP_CTL_ACC_SDP, &info->local, info->lport,
			       &info->remote, info->rport, l->family,
			       -1) < 0) {
			close(fd);
			break;
		}
		/* a record for INFO after the program's exec, by the N of
		 * our end's name; freed by ep_closed */
		c = calloc(1, sizeof(*c));
		if (c) {
			c->sv = sv;
			c->req_fd = c->app_fd = c->our_fd = c->port_fd = -1;
			c->tcp_fd = -1;
			c->id = id;
			c->info = *info;
			c->family = l->family;
			c->passive = 1;
			c->next = sv->conns;
			sv->conns = c;
			*ctx = c;
		}
		sv->st.accepted_sdp++;
		if (l->reuseport)
			listener_to_tail(sv, l);
		return fd;
	}
	sv->st.refused++;
	errno = ECONNREFUSED;
	return -1;
}

static void ep_connected(void *arg, struct sdp_sock *s, void *ctx, int err)
{
	struct svc_conn *c = ctx;
	struct stat stt;

	(void)arg;
	if (!c)
		return;
	if (err) {
		c->sock = NULL;	/* gone with this callback */
		/* a gateway's REJ naming its TCP connect's EHOSTUNREACH is
		 * an answer, not a port down on the way */
		if (!sdp_sock_rejected(s) && retry_later(c, err))
			return;
		connect_fail(c, err);
		return;
	}
	if (c->tmo_ev) {
		event_free(c->tmo_ev);
		c->tmo_ev = NULL;
	}
	if (c->handed) {
		/* a non-blocking connect: the program has its end */
		async_up(c);
		c->our_fd = -1;
		c->sv->st.connects++;
		if (c->sv->st.async_now)
			c->sv->st.async_now--;	/* an SDP connection now */
		return;
	}
	c->our_fd = -1;		/* the connection's now */
	if (fstat(c->app_fd, &stt) == 0)
		c->app_ino = stt.st_ino;
	c->sv->st.connects++;
	reply(c, 0, &c->info.local, c->info.lport, &c->info.remote,
	      c->info.rport, c->app_fd);
	close(c->app_fd);
	c->app_fd = -1;
}

/*
 * Reset (not by the program's own close): its end of the stream sees
 * only end of file, as a unix socket whose peer closed, so a record is
 * kept that INFO answers with SDP_CTL_R_RESET and the errno, which the
 * preload turns into the failure of the next read or write, once, as
 * TCP's RST gives it.  Kept until taken or the program's end is gone.
 */
static void ep_reset(void *arg, struct sdp_sock *s, void *ctx, int fd,
		     int err)
{
	struct sdp_service *sv = arg;
	struct svc_conn *c = ctx;
	long ino;

	(void)s;
	if (!c || c->relay)
		return;
	ino = unix_peer_ino(fd);
	if (ino == 0)
		return;		/* the program closed its end */
	if (ino > 0)
		c->app_ino = (ino_t)ino;
	else if (sv->diag_ok)
		return;
	c->reset_err = err;
	sv->st.resets++;
}

static void ep_closed(void *arg, struct sdp_sock *s, void *ctx)
{
	struct svc_conn *c = ctx;
	struct sdp_service *sv = arg;

	(void)s;
	if (!c)
		return;
	c->sock = NULL;
	if (!c->reset_err) {	/* none, or already taken */
		conn_free(c);
		return;
	}
	c->state = CONN_RESET;
	gettimeofday(&c->failed_at, NULL);
	if (++sv->nfailed > MAX_FAILED)
		free_oldest_failed(sv);
}

/* ---- requests ---------------------------------------------------------------- */

/* The connection an INFO or LINGER request names, or NULL. */
static struct svc_conn *find_stream(struct svc_conn *c)
{
	struct svc_conn *o;

	for (o = c->sv->conns; o; o = o->next) {
		if (o == c || (!o->sock && !o->passive && !o->state))
			continue;
		if ((c->req.flags & SDP_CTL_F_BYID) ? o->id == c->req.ino :
		    (o->app_ino && (uint64_t)o->app_ino == c->req.ino))
			return o;
	}
	return NULL;
}

static void do_info(struct svc_conn *c)
{
	struct svc_conn *o = find_stream(c);
	struct svc_listener *l;
	int e;

	if (!o) {
		/* a listener the program has by another route than our
		 * LISTEN reply (inherited across exec, passed as
		 * SCM_RIGHTS): its address, as getsockname wants it */
		for (l = c->sv->listeners;
		     l && !(c->req.flags & SDP_CTL_F_BYID); l = l->next)
			if (l->ino && (uint64_t)l->ino == c->req.ino)
				break;
		if (l)
			c->family = l->family;
		reply(c, l ? 0 : ENOENT, l ? &l->addr : NULL, l ? l->port : 0,
		      NULL, 0, -1);
		conn_free(c);
		return;
	}
	c->family = o->family;
	if (o->state == CONN_RESET || o->reset_err) {
		/* err the reset's errno (the connection may still be
		 * closing: the program woke at our end's close); taken:
		 * the record goes, and the stream is at its end from then
		 * on */
		c->reply_flags = SDP_CTL_R_RESET;
		reply(c, o->reset_err, &o->info.local, o->info.lport, NULL, 0,
		      -1);
		if (c->req.flags & SDP_CTL_F_TAKE_RESET) {
			c->sv->st.resets_told++;
			o->reset_err = 0;
			if (o->state == CONN_RESET)
				conn_free(o);	/* else ep_closed's */
		}
		conn_free(c);
		return;
	}
	c->reply_flags = o->state == ASYNC_PENDING ? SDP_CTL_R_PENDING :
			 o->state == ASYNC_FAILED ? SDP_CTL_R_FAILED :
			 o->relay ? SDP_CTL_R_TCP : 0;
	/* a failed connect's errno goes as err, with SDP_CTL_R_FAILED */
	e = o->state == ASYNC_FAILED ? o->so_error : 0;
	if (o->state == ASYNC_FAILED && (c->req.flags & SDP_CTL_F_TAKE))
		o->so_error = 0;
	reply(c, e, &o->info.local, o->info.lport, o->state == ASYNC_FAILED ?
	      NULL : &o->info.remote, o->info.rport, -1);
	conn_free(c);
}

/* The SDP connection of a stream's record (NULL: none, or the TCP
 * relay's). */
static struct sdp_sock *stream_sock(struct svc_conn *o)
{
	if (!o || o->state == ASYNC_FAILED || o->state == CONN_RESET)
		return NULL;
	return o->sock ? o->sock :
	       o->passive ? sdp_ep_sock_of(o->sv->ep, o) : NULL;
}

/* SO_LINGER on a stream: {1, 0} makes its last close a reset. */
static void do_linger(struct svc_conn *c)
{
	struct sdp_service *sv = c->sv;
	struct svc_conn *o = find_stream(c);
	int on = !!(c->req.flags & SDP_CTL_F_ABORT);
	struct sdp_sock *s;

	sv->st.lingers++;
	if (!o || o->state == ASYNC_FAILED) {
		reply(c, ENOENT, NULL, 0, NULL, 0, -1);
		conn_free(c);
		return;
	}
	reply(c, 0, NULL, 0, NULL, 0, -1);
	conn_free(c);
	o->abort_close = on;
	s = stream_sock(o);
	if (s)
		sdp_sock_abort_on_close(s, on);
	else if (o->relay)
		sdp_relay_abort_on_close(o->relay, on);	/* may free o */
}

/* LINGER_WAIT's answer: everything went (0), a reset, or the time. */
static void lwait_done(void *arg, int err)
{
	struct svc_conn *c = arg;

	c->lwait = 0;		/* told: nothing to cancel */
	c->sv->st.linger_waits_done += err == 0;
	reply(c, err, NULL, 0, NULL, 0, -1);
	conn_free(c);
}

static void lwait_tmo_cb(evutil_socket_t fd, short what, void *arg)
{
	struct svc_conn *c = arg;

	(void)fd;
	(void)what;
	sdp_ep_cancel_when_sent(c->sv->ep, c);
	lwait_done(c, ETIMEDOUT);
}

/*
 * A close with SO_LINGER {1, N}: the program's last descriptor of the
 * stream?  (sock_diag says our end has no peer left; when it cannot say,
 * a close is taken for the last.)  Then wait for the connection's data
 * and DisConn to be acknowledged, as TCP's close waits.
 */
static void do_linger_wait(struct svc_conn *c)
{
	struct sdp_service *sv = c->sv;
	struct svc_conn *o = find_stream(c);
	struct sdp_sock *s = stream_sock(o);
	struct timeval tv;
	uint32_t ms = c->req.timeout_ms;
	int fd;

	sv->st.linger_waits++;
	fd = s ? sdp_sock_fd(s) : -1;
	if (!s || (fd >= 0 && unix_peer_ino(fd) > 0)) {
		/* gone already, carried by the TCP relay, or not the
		 * last close */
		reply(c, 0, NULL, 0, NULL, 0, -1);
		conn_free(c);
		return;
	}
	if (ms < 1 || ms > 3600000)
		ms = 3600000;
	c->tmo_ev = evtimer_new(sv->base, lwait_tmo_cb, c);
	if (!c->tmo_ev) {
		reply(c, ENOMEM, NULL, 0, NULL, 0, -1);
		conn_free(c);
		return;
	}
	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;
	evtimer_add(c->tmo_ev, &tv);
	c->lwait = 1;
	sdp_sock_when_sent(s, lwait_done, c);	/* may answer at once */
}

/* SO_KEEPALIVE and TCP_KEEPIDLE on a stream: its probe time. */
static void do_keepalive(struct svc_conn *c)
{
	struct sdp_service *sv = c->sv;
	struct svc_conn *o = find_stream(c);
	struct sdp_sock *s = stream_sock(o);

	sv->st.keepalives++;
	if (!s) {
		/* gone, failed, or carried by the TCP relay (whose socket
		 * has the program's options) */
		reply(c, ENOENT, NULL, 0, NULL, 0, -1);
		conn_free(c);
		return;
	}
	sdp_sock_keepalive(s, c->req.timeout_ms);
	reply(c, 0, NULL, 0, NULL, 0, -1);
	conn_free(c);
}

static void req_cb(evutil_socket_t fd, short what, void *arg)
{
	struct svc_conn *c = arg;
	struct sdp_service *sv = c->sv;
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int) * 4)];
	} cb;
	struct iovec iov = { &c->req, sizeof(c->req) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = cb.buf,
			     .msg_controllen = sizeof(cb.buf) };
	struct cmsghdr *cm;
	int passed = -1;
	ssize_t n;

	(void)what;
	if (c->sock || c->tmo_ev) {
		/* answered or being served: anything now is the program
		 * going away (an interrupted connect) */
		char b;

		if (recv(fd, &b, 1, MSG_DONTWAIT) == 0 ||
		    errno != EAGAIN)
			conn_free(c);
		return;
	}
	n = recvmsg(fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
		if (cm->cmsg_level == SOL_SOCKET &&
		    cm->cmsg_type == SCM_RIGHTS) {
			int k, nfd = (int)((cm->cmsg_len - CMSG_LEN(0)) /
					   sizeof(int));

			for (k = 0; k < nfd; k++) {
				int f;

				memcpy(&f, CMSG_DATA(cm) + k * sizeof(int),
				       sizeof(int));
				if (passed < 0)
					passed = f;
				else
					close(f);
			}
		}
	}
	if (n != (ssize_t)sizeof(c->req) || c->req.magic != SDP_CTL_MAGIC ||
	    (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC))) {
		if (n != 0)
			sv->st.bad_requests++;
		if (passed >= 0)
			close(passed);
		conn_free(c);
		return;
	}
	sv->st.requests++;
	c->req.program[sizeof(c->req.program) - 1] = 0;
	c->family = c->req.local.family == AF_INET6 ||
		    c->req.remote.family == AF_INET6 ? AF_INET6 : AF_INET;
	/* only a 'both' LISTEN takes an fd (its TCP listener), or an
	 * adopting one (another service's listener) */
	if (passed >= 0 && !(c->req.op == SDP_CTL_LISTEN &&
			     (c->req.flags & (SDP_CTL_F_BOTH |
					      SDP_CTL_F_ADOPT)))) {
		close(passed);
		passed = -1;
	}
	switch (c->req.op) {
	case SDP_CTL_CONNECT: {
		struct timeval now, t;
		unsigned int ms = c->req.timeout_ms ? c->req.timeout_ms :
				  DEF_TIMEOUT_MS;

		if (from_ctl(&c->req.remote, &c->dst, &c->dport) < 0 ||
		    !c->dport || addr_any(&c->dst)) {
			sv->st.bad_requests++;
			reply(c, EINVAL, NULL, 0, NULL, 0, -1);
			conn_free(c);
			return;
		}
		gettimeofday(&now, NULL);
		t.tv_sec = ms / 1000;
		t.tv_usec = (ms % 1000) * 1000;
		timeradd(&now, &t, &c->deadline);
		c->async = !!(c->req.flags & SDP_CTL_F_ASYNC);
		c->abort_close = !!(c->req.flags & SDP_CTL_F_ABORT);
		c->sndbuf = c->req.sndbuf;
		connect_go(c);
		return;
	}
	case SDP_CTL_LISTEN:
		/* do_listen answers and frees c */
		do_listen(c, passed);
		return;
	case SDP_CTL_INFO:
		do_info(c);
		return;
	case SDP_CTL_RELEASE:
		do_release(c);
		return;
	case SDP_CTL_LINGER:
		do_linger(c);
		return;
	case SDP_CTL_KEEPALIVE:
		do_keepalive(c);
		return;
	case SDP_CTL_LINGER_WAIT:
		do_linger_wait(c);
		return;
	default:
		sv->st.bad_requests++;
		reply(c, EOPNOTSUPP, NULL, 0, NULL, 0, -1);
		conn_free(c);
	}
}

static void ctl_cb(evutil_socket_t fd, short what, void *arg)
{
	struct sdp_service *sv = arg;
	struct svc_conn *c;
	int r, n = 0;

	(void)what;
	while (n++ < 32) {
		r = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (r < 0)
			return;
		if (sv->nreqs >= MAX_REQS || !(c = calloc(1, sizeof(*c)))) {
			close(r);
			continue;
		}
		c->sv = sv;
		c->req_fd = r;
		c->app_fd = c->our_fd = c->port_fd = c->tcp_fd = -1;
		c->id = sv->next_id++;
		c->req_ev = event_new(sv->base, r, EV_READ | EV_PERSIST, req_cb,
				      c);
		if (!c->req_ev) {
			close(r);
			free(c);
			continue;
		}
		sv->nreqs++;
		c->next = sv->conns;
		sv->conns = c;
		event_add(c->req_ev, NULL);
	}
}

/* ---- the service ------------------------------------------------------------ */

/* A listener's address as its program's socket (family l->family) had
 * it bound: IPv4 in an IPv6 socket as IPv4-mapped. */
static socklen_t listen_sa(const struct svc_listener *l,
			   struct sockaddr_storage *ss)
{
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;

	memset(ss, 0, sizeof(*ss));
	if (l->family == AF_INET) {
		if (l->addr.family == AF_INET6)
			return 0;
		s4->sin_family = AF_INET;
		s4->sin_port = htons(l->port);
		if (l->addr.family == AF_INET)
			s4->sin_addr = l->addr.v4;
		return sizeof(*s4);
	}
	s6->sin6_family = AF_INET6;
	s6->sin6_port = htons(l->port);
	if (l->addr.family == AF_INET6) {
		s6->sin6_addr = l->addr.v6;
	} else if (l->addr.family == AF_INET) {
		s6->sin6_addr.s6_addr[10] = s6->sin6_addr.s6_addr[11] = 0xff;
		memcpy(&s6->sin6_addr.s6_addr[12], &l->addr.v4, 4);
	}
	return sizeof(*s6);
}

/*
 * One listener a service that held our control socket's name before us
 * left (its name, parsed: listener_bind): taken over as if its program
 * had just listened through us.  A 'both' one gets a new TCP half, bound
 * as the program's was.  0, or -1 (not ours to take, or it failed).
 */
static int listener_restore(struct sdp_service *sv, const char *name,
			    ino_t ino)
{
	static const char pfx[] = "ibgw-sdp-l/";
	struct svc_listener *l;
	struct sockaddr_storage ss;
	char a[INET6_ADDRSTRLEN + 1], err[160];
	unsigned long pid, id, uid;
	unsigned int hash, f, port;
	int fam, n = 0, tcp = -1, one = 1;
	socklen_t sl;

	if (strncmp(name, pfx, sizeof(pfx) - 1) ||
	    sscanf(name + sizeof(pfx) - 1, "%lu.%lu/%8x.%x.%lu.%u.%d/%46s%n",
		   &pid, &id, &hash, &f, &uid, &port, &fam, a, &n) != 8 ||
	    name[sizeof(pfx) - 1 + (size_t)n] || hash != name_hash(sv->name) ||
	    pid == (unsigned long)getpid() || !port || port > 65535 ||
	    (fam != AF_INET && fam != AF_INET6) || f > 7 ||
	    strlen(name) >= sizeof(l->name))
		return -1;
	for (l = sv->listeners; l; l = l->next)
		if (l->ino == ino)
			return -1;
	l = calloc(1, sizeof(*l));
	if (!l)
		return -1;
	l->sv = sv;
	l->family = fam;
	l->port = (uint16_t)port;
	l->tcp_fd = l->held_fd = -1;
	l->v6only = !!(f & LN_V6ONLY);
	l->reuseport = !!(f & LN_REUSEPORT);
	l->uid = (uid_t)uid;
	l->ino = ino;
	snprintf(l->name, sizeof(l->name), "%s", name);
	if (strcmp(a, "*")) {
		l->addr.family = strchr(a, ':') ? AF_INET6 : AF_INET;
		if (inet_pton(l->addr.family, a, l->addr.raw) != 1)
			goto fail;
	}
	if (f & LN_BOTH) {
		/* the program's TCP half went with the service that held
		 * it: a new one on the same address and port; the address
		 * may not be back yet (the interface is ours, made again,
		 * IPv6 ones tentative): bound all the same */
		tcp = socket(fam, SOCK_STREAM | SOCK_CLOEXEC, 0);
		sl = listen_sa(l, &ss);
		if (tcp < 0 ||
		    setsockopt(tcp, SOL_SOCKET, SO_REUSEADDR, &one,
			       sizeof(one)) < 0 ||
		    setsockopt(tcp, fam == AF_INET6 ? IPPROTO_IPV6 : IPPROTO_IP,
			       fam == AF_INET6 ? IPV6_FREEBIND : IP_FREEBIND,
			       &one, sizeof(one)) < 0 ||
		    (fam == AF_INET6 &&
		     setsockopt(tcp, IPPROTO_IPV6, IPV6_V6ONLY, &l->v6only,
				sizeof(l->v6only)) < 0) ||
		    (l->reuseport &&
		     setsockopt(tcp, SOL_SOCKET, SO_REUSEPORT, &one,
				sizeof(one)) < 0) ||
		    !sl || bind(tcp, (struct sockaddr *)&ss, sl) < 0 ||
		    listen(tcp, SOMAXCONN) < 0) {
			sv->st.restore_tcp_failures++;
			if (tcp >= 0)
				close(tcp);
			tcp = -1;
		}
	}
	if (sdp_ep_listen(sv->ep, l->port, err, sizeof(err)) < 0)
		goto fail;
	if (tcp >= 0)
		listener_tcp_watch(l, tcp);
	l->next = sv->listeners;
	sv->listeners = l;
	sv->nlisteners++;
	sv->st.listens_restored++;
	return 0;
fail:
	if (tcp >= 0)
		close(tcp);
	free(l);
	return -1;
}

/*
 * The listeners of the service that held our control socket's name
 * before us (stopped, or killed, and started again): found by sock_diag
 * among the unix listeners of our network namespace, by their names.
 * Their programs still wait in accept, knowing nothing of the restart.
 * Only sockets our user owns: the service made them and passed them on,
 * so what their names say is ours (a name alone could be anyone's).
 */
static void listeners_restore(struct sdp_service *sv)
{
	struct {
		struct nlmsghdr nh;
		struct unix_diag_req r;
	} q;
	union {
		struct nlmsghdr nh;
		char buf[32768];
	} a;
	const struct nlmsghdr *h;
	const struct unix_diag_msg *m;
	const struct rtattr *rta;
	char name[sizeof(((struct svc_listener *)0)->name)];
	ssize_t n;
	int s, len, done = 0, shut, mine;
	uint32_t uid;
	size_t pl;

	memset(&q, 0, sizeof(q));
	q.nh.nlmsg_len = sizeof(q);
	q.nh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	q.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	q.r.sdiag_family = AF_UNIX;
	q.r.udiag_states = 1u << 10;	/* TCP_LISTEN */
	/* the shutdown always comes */
	q.r.udiag_show = UDIAG_SHOW_NAME | UDIAG_SHOW_UID;
	s = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (s < 0)
		return;
	if (send(s, &q, sizeof(q), 0) != (ssize_t)sizeof(q)) {
		close(s);
		return;
	}
	while (!done && (n = recv(s, a.buf, sizeof(a.buf), 0)) > 0) {
		for (h = &a.nh; NLMSG_OK(h, (size_t)n); h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_type == NLMSG_DONE ||
			    h->nlmsg_type == NLMSG_ERROR) {
				done = 1;
				break;
			}
			if (h->nlmsg_type != SOCK_DIAG_BY_FAMILY ||
			    h->nlmsg_len < NLMSG_LENGTH(sizeof(*m)))
				continue;
			m = NLMSG_DATA(h);
			if (m->udiag_type != SOCK_STREAM ||
			    m->udiag_state != 10)
				continue;
			name[0] = '\0';
			shut = 0;
			mine = 0;
			len = (int)(h->nlmsg_len - NLMSG_LENGTH(sizeof(*m)));
			for (rta = (const struct rtattr *)(m + 1);
			     RTA_OK(rta, len); rta = RTA_NEXT(rta, len)) {
				const char *d = RTA_DATA(rta);

				pl = RTA_PAYLOAD(rta);
				if (rta->rta_type == UNIX_DIAG_NAME && pl > 1 &&
				    !d[0] && pl - 1 < sizeof(name) &&
				    !memchr(d + 1, 0, pl - 1)) {
					memcpy(name, d + 1, pl - 1);
					name[pl - 1] = '\0';
				} else if (rta->rta_type == UNIX_DIAG_SHUTDOWN &&
					   pl >= 1) {
					shut = d[0] & DIAG_RCV_SHUTDOWN;
				} else if (rta->rta_type == UNIX_DIAG_UID &&
					   pl >= sizeof(uint32_t)) {
					memcpy(&uid, d, sizeof(uid));
					mine = uid == (uint32_t)geteuid();
				}
			}
			/* only a socket a service of ours made (its owner):
			 * anyone may name one so, and a 'both' one gets a
			 * TCP port from us */
			if (name[0] && !shut && mine)
				listener_restore(sv, name, m->udiag_ino);
		}
	}
	close(s);
}

struct sdp_service *sdp_service_new(struct event_base *base,
				    struct fab_dev *dev,
				    const struct sdp_ep_cfg *cfg,
				    const char *name,
				    const struct sdp_service_ops *ops,
				    void *arg, char *err, size_t errlen)
{
	static const struct sdp_ep_ops eops = {
		.accept = ep_accept, .connected = ep_connected,
		.closed = ep_closed,
		.reset = ep_reset,
	};
	struct sdp_service *sv;
	struct sockaddr_un sa;
	socklen_t sl;
	int e;

	char first[108];

	if (!name) {
		/* the preload's list of services (one per partition): a
		 * service started without a name of its own is the first */
		name = getenv(SDP_CTL_ENV);
		if (name && strchr(name, ',')) {
			snprintf(first, sizeof(first), "%.*s",
				 (int)(strchr(name, ',') - name), name);
			name = first;
		}
	}
	if (!name || !*name)
		name = "@" SDP_CTL_NAME;
	if (strlen(name) >= sizeof(sa.sun_path) - 1) {
		snprintf(err, errlen, "SDP service socket name too long: %s",
			 name);
		errno = ENAMETOOLONG;
		return NULL;
	}
	sv = calloc(1, sizeof(*sv));
	if (!sv) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	sv->base = base;
	sv->ops = *ops;
	sv->arg = arg;
	sv->next_id = 1;
	snprintf(sv->name, sizeof(sv->name), "%s", name);
	sv->ctl_fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK |
			    SOCK_CLOEXEC, 0);
	if (sv->ctl_fd < 0)
		goto fail_errno;
	sl = un_addr(name, &sa);
	if (name[0] != '@')
		unlink(name);
	if (bind(sv->ctl_fd, (struct sockaddr *)&sa, sl) < 0 ||
	    listen(sv->ctl_fd, 64) < 0)
		goto fail_errno;
	sv->ep = sdp_ep_new(base, dev, cfg, &eops, sv, err, errlen);
	if (!sv->ep)
		goto fail;
	sv->ctl_ev = event_new(base, sv->ctl_fd, EV_READ | EV_PERSIST, ctl_cb,
			       sv);
	if (!sv->ctl_ev) {
		errno = ENOMEM;
		goto fail_errno;
	}
	event_add(sv->ctl_ev, NULL);
	{
		/* without unix sock_diag every inode looks gone: then
		 * listeners are found closed lazily only */
		struct stat st;

		sv->diag_ok = fstat(sv->ctl_fd, &st) == 0 &&
			      unix_query(st.st_ino) == 1;
	}
	/* we hold the name now: what our predecessor under it listened
	 * for is ours (the kernel says what is still there) */
	if (sv->diag_ok)
		listeners_restore(sv);
	sv->check_ev = event_new(base, -1, EV_PERSIST, check_cb, sv);
	if (sv->check_ev) {
		struct timeval one = { 1, 0 };

		event_add(sv->check_ev, &one);
	}
	return sv;
fail_errno:
	e = errno;
	snprintf(err, errlen, "SDP service socket %s: %s", name, strerror(e));
	errno = e;
fail:
	e = errno;
	if (sv->ep)
		sdp_ep_free(sv->ep);
	if (sv->ctl_fd >= 0)
		close(sv->ctl_fd);
	free(sv);
	errno = e;
	return NULL;
}

void sdp_service_free(struct sdp_service *sv)
{
	if (!sv)
		return;
	if (sv->ctl_ev)
		event_free(sv->ctl_ev);
	if (sv->check_ev)
		event_free(sv->check_ev);
	close(sv->ctl_fd);
	if (sv->name[0] != '@')
		unlink(sv->name);
	/* the endpoint's callbacks free the connections' records */
	sdp_ep_free(sv->ep);
	sv->ep = NULL;
	while (sv->conns) {
		struct svc_conn *c = sv->conns;

		c->sock = NULL;
		conn_free(c);
	}
	while (sv->listeners) {
		struct svc_listener *l = sv->listeners;

		sv->listeners = l->next;
		if (l->tcp_ev)
			event_free(l->tcp_ev);
		if (l->tcp_pause_ev)
			event_free(l->tcp_pause_ev);
		if (l->tcp_fd >= 0)
			close(l->tcp_fd);
		drop_held(l);
		free(l);
	}
	free(sv);
}

const struct sdp_service_stats *sdp_service_stats(const struct sdp_service *sv)
{
	return &sv->st;
}

const struct sdp_ep_stats *sdp_service_ep_stats(const struct sdp_service *sv)
{
	return sdp_ep_stats(sv->ep);
}

const char *sdp_service_name(const struct sdp_service *sv)
{
	return sv->name;
}

size_t sdp_service_report(const struct sdp_service *sv, char *buf, size_t cap)
{
	const struct svc_listener *l;
	const struct svc_conn *c;
	char a[INET6_ADDRSTRLEN];
	size_t off = 0;
	int n;

	for (l = sv->listeners; l && off < cap; l = l->next) {
		if (l->addr.family)
			inet_ntop(l->addr.family, l->addr.raw, a, sizeof(a));
		else
			snprintf(a, sizeof(a), "*");
		n = snprintf(buf + off, cap - off, "sdp listen %s:%u%s\n", a,
			     l->port, l->tcp_fd >= 0 ? " both" : "");
		if (n < 0)
			break;
		off += (size_t)n < cap - off ? (size_t)n : cap - off;
	}
	for (c = sv->conns; c && off < cap; c = c->next) {
		char la[INET6_ADDRSTRLEN], ra[INET6_ADDRSTRLEN];

		if (!c->handed || (c->state == ASYNC_UP && !c->relay))
			continue;	/* SDP connections: the endpoint's */
		inet_ntop(c->info.local.family ? c->info.local.family :
			  AF_INET, c->info.local.raw, la, sizeof(la));
		inet_ntop(c->dst.family ? c->dst.family : AF_INET,
			  c->dst.raw, ra, sizeof(ra));
		n = snprintf(buf + off, cap - off, "sdp connect %s:%u %s:%u "
			     "%s%s\n", la, c->info.lport, ra, c->dport,
			     c->state == ASYNC_PENDING ? (c->tcp_fd >= 0 ?
			     "pending tcp" : "pending") :
			     c->state == ASYNC_FAILED ? "failed " : "tcp relay",
			     c->state == ASYNC_FAILED ? strerror(c->so_error) :
			     "");
		if (n < 0)
			break;
		off += (size_t)n < cap - off ? (size_t)n : cap - off;
	}
	if (off < cap)
		off += sdp_ep_report(sv->ep, buf + off, cap - off);
	return off;
}

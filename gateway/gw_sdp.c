// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * SDP termination and exports of a partition (see gw_sdp.h).
 *
 * SDP -> TCP: the Hello names the destination (info->local as our
 * endpoint sees it).  The gateway terminates only what is on the Ethernet
 * side: a destination that is one of the gateway's own addresses, or a
 * host of the partition's IB side, is refused with a REJ (the IB host's
 * preload falls back to TCP).  The request waits for the TCP connect
 * (the endpoint holds its REP, the CM sends MRAs): a failure, at once
 * (ENETUNREACH, EACCES, EPERM) or later, is refused with a REJ that names
 * the errno, so that the IB program's connect() fails as a TCP one to
 * that server would (ECONNREFUSED, EHOSTUNREACH, ETIMEDOUT), never after
 * it succeeded.  The TCP connection is the
 * gateway's own: the kernel picks its source, the gateway's LAN address,
 * so the LAN server sees the gateway and the IB host's address nowhere.
 *
 * TCP -> SDP (exports): the IB host's GID is its IPoIB neighbour's (the
 * next hop's in router mode), resolved if unknown, retried every 20 ms
 * for 3 s.  The Hello names the LAN client's address and port as the
 * source, so the IB program's getpeername() shows the LAN client.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/event.h>

#include "conf/log.h"
#include "gateway/gw_sdp.h"
#include "gateway/ibgwd.h"

#define RESOLVE_MS	20
#define RESOLVE_TRIES	150	/* 3 s */

enum conn_state { C_RESOLVING, C_CONNECTING, C_UP };

struct gconn {
	struct gw_sdp *g;
	struct gconn *next;
	enum conn_state st;
	int fd;				/* the TCP side */
	struct event *ev;		/* an export's resolve timer */
	struct sdp_sock *s;
	const struct gw_sdp_export *x;	/* exports only */
	struct inet_addr client;	/* the LAN end: an export's client, */
	uint16_t cport;			/* a terminated connection's server */
	unsigned int tries;
};

struct export_listener {
	struct gw_sdp *g;
	const struct gw_sdp_export *x;
	int fd;
	struct event *ev;
};

struct gw_sdp {
	struct part *p;
	struct fab_dev *dev;
	struct event *dev_ev;
	struct sdp_ep *ep;
	struct export_listener ex[GW_SDP_EXPORTS_MAX];
	unsigned int nex;
	struct gconn *conns;
	struct gw_sdp_stats st;
};

const struct counter_desc gw_sdp_counters[] = {
	COUNTER("terminated", struct gw_sdp_stats, terminated,
		"SDP connections continued as TCP to the LAN."),
	COUNTER("exported", struct gw_sdp_stats, exported,
		"LAN TCP connections to an export continued as SDP."),
	COUNTER("gw_conns_now", struct gw_sdp_stats, conns_now,
		"Terminated and exported connections open now."),
	COUNTER("refused_limit", struct gw_sdp_stats, refused_limit,
		"Connections refused or reset over sdp_max_conns."),
	COUNTER("refused_local", struct gw_sdp_stats, refused_local,
		"SDP connections refused: for the gateway or the IB side."),
	COUNTER("tcp_connect_failed", struct gw_sdp_stats, tcp_connect_failed,
		"TCP connections to the LAN that failed."),
	COUNTER("abandoned", struct gw_sdp_stats, abandoned,
		"TCP connects to the LAN cancelled: the IB host gave up first."),
	COUNTER("export_unresolved", struct gw_sdp_stats, export_unresolved,
		"Export connections reset: the IB host did not resolve."),
	COUNTER("export_failed", struct gw_sdp_stats, export_failed,
		"Export connections reset: the IB host's SDP failed."),
	COUNTERS_END
};

const struct gw_sdp_stats *gw_sdp_stats(const struct gw_sdp *g)
{
	return &g->st;
}

const struct sdp_ep_stats *gw_sdp_ep_stats(const struct gw_sdp *g)
{
	return g->ep ? sdp_ep_stats(g->ep) : NULL;
}

static socklen_t to_sockaddr(const struct inet_addr *a, uint16_t port,
			     struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (a->family == AF_INET6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
		s6->sin6_addr = a->v6;
		return sizeof(*s6);
	}
	{
		struct sockaddr_in *s4 = (struct sockaddr_in *)ss;

		s4->sin_family = AF_INET;
		s4->sin_port = htons(port);
		s4->sin_addr = a->v4;
		return sizeof(*s4);
	}
}

/* An address of ss, IPv4-mapped IPv6 ones as IPv4. */
static void from_sockaddr(const struct sockaddr_storage *ss,
			  struct inet_addr *a, uint16_t *port)
{
	memset(a, 0, sizeof(*a));
	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const void *)ss;

		*port = ntohs(s6->sin6_port);
		if (IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr)) {
			a->family = AF_INET;
			memcpy(&a->v4, &s6->sin6_addr.s6_addr[12], 4);
		} else {
			inet_addr_v6(a, &s6->sin6_addr);
		}
	} else {
		const struct sockaddr_in *s4 = (const void *)ss;

		*port = ntohs(s4->sin_port);
		inet_addr_v4(a, &s4->sin_addr);
	}
}

/* Close a TCP connection with a reset, as TCP aborts. */
static void reset_close(int fd)
{
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };

	setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	close(fd);
}

static void conn_unlink_free(struct gconn *c)
{
	struct gconn **pp;

	for (pp = &c->g->conns; *pp; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	if (c->ev)
		event_free(c->ev);
	free(c);
}

/* A connection of ours that never reached the endpoint, or that the
 * endpoint gave back: the TCP side is reset. */
static void conn_fail(struct gconn *c)
{
	struct gw_sdp *g = c->g;

	reset_close(c->fd);
	if (g->st.conns_now)
		g->st.conns_now--;
	conn_unlink_free(c);
}

static struct gconn *conn_new(struct gw_sdp *g, int fd)
{
	struct gconn *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->g = g;
	c->fd = fd;
	c->next = g->conns;
	g->conns = c;
	g->st.conns_now++;
	return c;
}

/* ---- SDP -> TCP ---------------------------------------------------------- */

/* One of the gateway's own addresses (of any interface, loopback too):
 * a socket binds to it. */
static int is_gateway_addr(const struct inet_addr *a)
{
	struct sockaddr_storage ss;
	socklen_t sl = to_sockaddr(a, 0, &ss);
	int fd, ok;

	fd = socket(a->family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return 0;
	ok = bind(fd, (struct sockaddr *)&ss, sl) == 0;
	close(fd);
	return ok;
}

/* A host of the partition's IB side: in the router's subnets, or (a
 * transparent partition) an IPoIB neighbour of the link. */
static int is_ib_side(struct gw_sdp *g, const struct inet_addr *a)
{
	struct part *p = g->p;
	struct ipoib_addr hw;
	unsigned int i;

	if (p->tun) {
		for (i = 0; i < p->pc->naddrs; i++)
			if (inet_prefix_contains(&p->pc->addrs[i], a))
				return 1;
		return 0;
	}
	return ipoib_link_neigh_hw(p->link, a, &hw) == 0;
}

/* A non-blocking TCP connect to dst: the fd (*connecting 1 while it is
 * in progress), or -1 with errno. */
static int tcp_connect(const struct inet_addr *dst, uint16_t port,
		       int *connecting)
{
	struct sockaddr_storage ss;
	socklen_t sl = to_sockaddr(dst, port, &ss);
	int fd, one = 1, e;

	fd = socket(dst->family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
		    0);
	if (fd < 0)
		return -1;
	/* SDP hands over whole messages: no Nagle delay behind them */
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	*connecting = 0;
	if (connect(fd, (struct sockaddr *)&ss, sl) < 0) {
		if (errno != EINPROGRESS) {
			e = errno;
			close(fd);
			errno = e;
			return -1;
		}
		*connecting = 1;
	}
	return fd;
}

/* The TCP connect is over: the endpoint answers the SDP request now, a
 * REP or a REJ naming the error. */
static void on_accepted(void *arg, void *ctx, int err)
{
	struct gw_sdp *g = arg;
	struct gconn *c = ctx;
	char a[INET_ADDR_STRLEN];

	inet_addr_str(&c->client, a, sizeof(a));
	if (err == ECANCELED) {
		/* the IB host's connect is gone (its deadline, its CM's):
		 * the TCP connect is closed before the LAN server can
		 * take it */
		g->st.abandoned++;
		log_debug("sdp: TCP to %s:%u: cancelled, the IB host gave up",
			  a, c->cport);
		return;
	}
	if (err) {
		g->st.tcp_connect_failed++;
		log_debug("sdp: TCP to %s:%u: %s: refused", a, c->cport,
			  strerror(err));
		return;
	}
	g->st.terminated++;
	log_debug("sdp: TCP to %s:%u up", a, c->cport);
}

static int on_accept(void *arg, const struct sdp_sock_info *info,
		     void **ctx, int *connecting)
{
	struct gw_sdp *g = arg;
	char a[INET_ADDR_STRLEN], b[INET_ADDR_STRLEN];
	struct gconn *c;
	int fd;

	inet_addr_str(&info->local, a, sizeof(a));
	inet_addr_str(&info->remote, b, sizeof(b));
	if (g->st.conns_now >= g->p->pc->sdp_max_conns) {
		g->st.refused_limit++;
		log_debug("sdp: %s:%u -> %s:%u refused: %u connections "
			  "(sdp_max_conns)", b, info->rport, a, info->lport,
			  g->p->pc->sdp_max_conns);
		errno = ECONNREFUSED;
		return -1;
	}
	if (is_gateway_addr(&info->local) || is_ib_side(g, &info->local)) {
		g->st.refused_local++;
		log_debug("sdp: %s:%u -> %s:%u refused: not on the Ethernet "
			  "side", b, info->rport, a, info->lport);
		errno = ECONNREFUSED;	/* not ours to continue */
		return -1;
	}
	fd = tcp_connect(&info->local, info->lport, connecting);
	if (fd < 0) {
		int e = errno;

		/* refused at once (ENETUNREACH: no route; EPERM: a
		 * firewall): the REJ names it, as a later failure's does */
		g->st.tcp_connect_failed++;
		log_debug("sdp: TCP to %s:%u: %s", a, info->lport,
			  strerror(e));
		errno = e;
		return -1;
	}
	c = conn_new(g, fd);
	if (!c) {
		close(fd);
		errno = ENOMEM;
		return -1;
	}
	c->st = C_UP;
	c->client = info->local;
	c->cport = info->lport;
	if (!*connecting)
		g->st.terminated++;
	log_debug("sdp: %s:%u -> %s:%u continued as TCP", b, info->rport, a,
		  info->lport);
	*ctx = c;
	return fd;
}

/* ---- TCP -> SDP (exports) ------------------------------------------------ */

static void export_try(struct gconn *c);

static void resolve_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	export_try(arg);
}

static void export_connect(struct gconn *c, const union fab_gid *gid)
{
	struct gw_sdp *g = c->g;
	struct sdp_sock_info info;
	char err[256], a[INET_ADDR_STRLEN];

	memset(&info, 0, sizeof(info));
	info.remote = c->x->ib_addr;
	info.rport = c->x->ib_port;
	info.peer_gid = *gid;
	/* the Hello takes one family, the IB host's: an IPv4 LAN client
	 * of an IPv6 host is named IPv4-mapped (as a dual-stack TCP
	 * listener names it); an IPv6 one of an IPv4 host cannot be, and
	 * is named by the unspecified address */
	if (c->client.family == c->x->ib_addr.family) {
		info.local = c->client;
	} else if (c->client.family == AF_INET) {
		info.local.family = AF_INET6;
		info.local.v6.s6_addr[10] = info.local.v6.s6_addr[11] = 0xff;
		memcpy(&info.local.v6.s6_addr[12], &c->client.v4, 4);
	} else {
		info.local.family = c->x->ib_addr.family;
	}
	info.lport = c->cport;
	c->s = sdp_ep_connect(g->ep, &info, c->fd, c, err, sizeof(err));
	if (!c->s) {
		g->st.export_failed++;
		log_debug("sdp: export to %s:%u: %s",
			  inet_addr_str(&info.remote, a, sizeof(a)),
			  info.rport, err);
		conn_fail(c);
		return;
	}
	c->st = C_CONNECTING;
}

static void export_try(struct gconn *c)
{
	struct gw_sdp *g = c->g;
	struct ipoib_link *l = part_link(g->p);
	struct timeval tv = { 0, RESOLVE_MS * 1000 };
	struct inet_addr nh = c->x->ib_addr;
	struct ipoib_addr hw;
	char a[INET_ADDR_STRLEN];

	if (!g->ep) {
		conn_fail(c);
		return;
	}
	if (g->p->tun && ipoib_tun_nexthop(g->p->tun, &c->x->ib_addr, &nh) < 0)
		nh = c->x->ib_addr;
	if (ipoib_link_neigh_hw(l, &nh, &hw) == 0) {
		if (c->ev)
			event_free(c->ev);
		c->ev = NULL;
		export_connect(c, &hw.gid);
		return;
	}
	if (c->tries >= RESOLVE_TRIES) {
		g->st.export_unresolved++;
		log_debug("sdp: export to %s: no IPoIB neighbour",
			  inet_addr_str(&nh, a, sizeof(a)));
		conn_fail(c);
		return;
	}
	if (c->tries % 25 == 0)	/* asked again every 500 ms */
		ipoib_link_neigh_resolve(l, &nh);
	c->tries++;
	if (!c->ev)
		c->ev = evtimer_new(g->p->d->base, resolve_cb, c);
	if (!c->ev || evtimer_add(c->ev, &tv) < 0)
		conn_fail(c);
}

static void export_accept_cb(evutil_socket_t lfd, short what, void *arg)
{
	struct export_listener *xl = arg;
	struct gw_sdp *g = xl->g;
	struct sockaddr_storage ss;
	struct gconn *c;
	socklen_t sl;
	int i, fd;

	(void)what;
	for (i = 0; i < 16; i++) {
		sl = sizeof(ss);
		fd = accept4(lfd, (struct sockaddr *)&ss, &sl,
			     SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return;
		if (!g->ep || g->st.conns_now >= g->p->pc->sdp_max_conns) {
			g->st.refused_limit += g->ep != NULL;
			reset_close(fd);
			continue;
		}
		c = conn_new(g, fd);
		if (!c) {
			reset_close(fd);
			continue;
		}
		c->x = xl->x;
		c->st = C_RESOLVING;
		from_sockaddr(&ss, &c->client, &c->cport);
		export_try(c);
	}
}

/* ---- the endpoint's callbacks ------------------------------------------- */

static void on_connected(void *arg, struct sdp_sock *s, void *ctx, int err)
{
	struct gconn *c = ctx;
	char a[INET_ADDR_STRLEN];

	(void)arg;
	(void)s;
	if (err) {
		c->g->st.export_failed++;
		log_debug("sdp: export to %s:%u: %s",
			  inet_addr_str(&c->x->ib_addr, a, sizeof(a)),
			  c->x->ib_port, strerror(err));
		c->s = NULL;
		conn_fail(c);	/* the fd is ours again */
		return;
	}
	c->st = C_UP;
	c->g->st.exported++;
}

static void on_closed(void *arg, struct sdp_sock *s, void *ctx)
{
	struct gconn *c = ctx;
	struct gw_sdp *g = arg;

	(void)s;
	if (!c)
		return;
	if (g->st.conns_now)
		g->st.conns_now--;
	conn_unlink_free(c);	/* the endpoint closed the fd */
}

/* Port events of our device: the gateway's own device hears the same;
 * only the fabric's end matters here. */
static void dev_cb(evutil_socket_t fd, short what, void *arg)
{
	struct gw_sdp *g = arg;
	struct fab_event ev;

	(void)fd;
	(void)what;
	while (fab_get_event(g->dev, &ev) == 1)
		if (ev.type == FAB_EV_DEVICE_FATAL && g->dev_ev) {
			log_warnx("partition %s: SDP: the fabric is gone",
				  g->p->pc->name);
			event_del(g->dev_ev);
		}
}

/* ---- set-up ---------------------------------------------------------------- */

static int export_open(struct gw_sdp *g, const struct gw_sdp_export *x,
		       char *err, size_t errlen)
{
	struct export_listener *xl = &g->ex[g->nex];
	struct sockaddr_in6 s6;
	struct sockaddr_in s4;
	int one = 1, zero = 0, fd;

	/* dual-stack where there is IPv6, else IPv4 */
	memset(&s6, 0, sizeof(s6));
	s6.sin6_family = AF_INET6;
	s6.sin6_port = htons(x->lan_port);
	s6.sin6_addr = in6addr_any;
	fd = socket(AF_INET6, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd >= 0) {
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero,
			   sizeof(zero));
		if (bind(fd, (struct sockaddr *)&s6, sizeof(s6)) < 0) {
			close(fd);
			fd = -1;
		}
	}
	if (fd < 0) {
		memset(&s4, 0, sizeof(s4));
		s4.sin_family = AF_INET;
		s4.sin_port = htons(x->lan_port);
		fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
			    0);
		if (fd < 0)
			goto fail;
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, (struct sockaddr *)&s4, sizeof(s4)) < 0)
			goto fail;
	}
	if (listen(fd, 128) < 0)
		goto fail;
	xl->g = g;
	xl->x = x;
	xl->fd = fd;
	xl->ev = event_new(g->p->d->base, fd, EV_READ | EV_PERSIST,
			   export_accept_cb, xl);
	if (!xl->ev || event_add(xl->ev, NULL) < 0) {
		snprintf(err, errlen, "export %u: out of memory", x->lan_port);
		if (xl->ev)
			event_free(xl->ev);
		close(fd);
		return -1;
	}
	g->nex++;
	return 0;
fail:
	snprintf(err, errlen, "export: TCP port %u: %s", x->lan_port,
		 strerror(errno));
	if (fd >= 0)
		close(fd);
	return -1;
}

static int ep_open(struct gw_sdp *g, char *err, size_t errlen)
{
	static const struct sdp_ep_ops ops = { .accept = on_accept,
					       .accepted = on_accepted,
					       .connected = on_connected,
					       .closed = on_closed };
	struct ibgwd *d = g->p->d;
	struct fab_port_attr attr;
	struct sdp_ep_cfg cfg;
	char why[256];
	int idx;

	/* a device of its own: the endpoint takes every CM event of it */
	g->dev = fab_open(d->conf.fabric, d->conf.node, why, sizeof(why));
	if (!g->dev || fab_query_port(g->dev, &attr, why, sizeof(why)) < 0) {
		snprintf(err, errlen, "SDP: %s", why);
		return -1;
	}
	idx = fab_pkey_find(&attr, g->p->pc->pkey);
	if (idx < 0) {
		snprintf(err, errlen, "SDP: P_Key 0x%04x is not in the port's "
			 "table", g->p->pc->pkey | 0x8000);
		return -1;
	}
	memset(&cfg, 0, sizeof(cfg));
	cfg.pkey_index = (uint16_t)idx;
	/* the REQs of this partition: each partition's endpoint listens
	 * on every SDP service ID */
	cfg.listen_pkey = g->p->pc->pkey;
	/* the limit is ours (refused_limit counts it): the endpoint's is
	 * above it, for connections still being torn down */
	cfg.max_conns = g->p->pc->sdp_max_conns + 16;
	g->ep = sdp_ep_new(d->base, g->dev, &cfg, &ops, g, why, sizeof(why));
	if (!g->ep) {
		snprintf(err, errlen, "SDP: %s", why);
		return -1;
	}
	if (sdp_ep_listen(g->ep, 0, why, sizeof(why)) < 0) {
		snprintf(err, errlen, "SDP: listening on every port: %s", why);
		return -1;
	}
	g->dev_ev = event_new(d->base, fab_dev_fd(g->dev),
			      EV_READ | EV_PERSIST, dev_cb, g);
	if (g->dev_ev)
		event_add(g->dev_ev, NULL);
	return 0;
}

struct gw_sdp *gw_sdp_new(struct part *p, char *err, size_t errlen)
{
	struct gw_sdp *g = calloc(1, sizeof(*g));
	unsigned int i;

	if (!g) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	g->p = p;
	if (ep_open(g, err, errlen) < 0)
		goto fail;
	for (i = 0; i < p->pc->nsdp_exports; i++)
		if (export_open(g, &p->pc->sdp_exports[i], err, errlen) < 0)
			goto fail;
	return g;
fail:
	gw_sdp_free(g);
	return NULL;
}

void gw_sdp_free(struct gw_sdp *g)
{
	struct gconn *c, *next;
	unsigned int i;

	if (!g)
		return;
	for (i = 0; i < g->nex; i++) {
		event_free(g->ex[i].ev);
		close(g->ex[i].fd);
	}
	/* ours, not the endpoint's yet: reset */
	for (c = g->conns; c; c = next) {
		next = c->next;
		if (c->st == C_RESOLVING) {
			conn_fail(c);
		} else if (c->st == C_CONNECTING && c->s) {
			sdp_sock_cancel(c->s);
			conn_fail(c);
		}
	}
	if (g->ep)
		sdp_ep_free(g->ep);	/* aborts the rest, closes their fds */
	for (c = g->conns; c; c = next) {
		next = c->next;
		if (c->ev)
			event_free(c->ev);
		free(c);
	}
	if (g->dev_ev)
		event_free(g->dev_ev);
	if (g->dev)
		fab_close(g->dev);
	free(g);
}

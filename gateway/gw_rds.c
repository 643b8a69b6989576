// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * RDS <-> UDP bridging of a partition (see gw_rds.h).
 *
 * Which addresses the gateway owns on the RDS side (is_local): its own
 * IB-side addresses, and every address it terminates: in router mode
 * one routed away from the partition's interface (the LAN's prefixes and
 * routes), in transparent mode a host the bridge answers for on the
 * Ethernet segment.  An IB host's RDS to a LAN address goes to the
 * gateway, its IPoIB next hop, and the REQ names the LAN address.  On a
 * RoCE port (no IPoIB: ibgwd.c's start_roce) the IB side is the port's
 * netdev: LAN is what the kernel routes from another source than the
 * port's address, a peer's GID is its IP, and the IPv4 listener takes
 * every address, since rdma_cm puts the LAN address in the DGID too
 * (ibgwd(8), "RDS on RoCE", for the GIDs the port needs).
 *
 * IB -> LAN: a mapping per IB sender (IB_IP, sport): one UDP socket,
 * bound to port sport if that is free on the gateway and not privileged,
 * else to an ephemeral port, from which every datagram of that sender
 * goes to its LAN destination (the LAN host sees the gateway's LAN
 * address and the mapping's port).  Datagrams to the socket come back as RDS from their
 * sender to IB_IP:sport.  Mappings idle for IDLE_S are closed.
 *
 * LAN -> IB (exports): the LAN client's address and port are the RDS
 * source, so the IB program's recvmsg() names the LAN client; its answers
 * to that name go back as UDP from the export's port.
 *
 * The endpoint refuses a send (ENOBUFS) while the IB host's port is
 * congested: the datagram waits in its mapping's queue (QUEUE_MAX, kept
 * in order), sent when the host clears it or on the next tick; beyond,
 * dropped and counted.
 */
#include <errno.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "conf/log.h"
#include "gateway/gw_rds.h"
#include "gateway/ibgwd.h"

#define NBUCKETS	256
#define IDLE_S		60	/* a mapping's life without datagrams */
#define QUEUE_MAX	64	/* datagrams held per mapping */
#define RX_BATCH	64	/* datagrams read per wake-up */
#define CACHE_SLOTS	64	/* is_local answers kept */
#define CACHE_S		2	/* for as long */
#define UDP_MAX4	65507	/* 65535 - IPv4 header - UDP header */
#define UDP_MAX6	65527	/* 65535 - UDP header (no jumbograms) */
#define RCVBUF_MAP	(1 << 20)	/* a LAN host's burst of answers */
#define RCVBUF_EXPORT	(4 << 20)	/* every client of an export */

enum map_kind { M_OUT, M_FLOW };

struct held {
	struct held *next;
	struct rds_name src;
	size_t len;
	uint8_t data[];
};

/*
 * M_OUT: an IB sender (ib) and its UDP socket (fd).  M_FLOW: an export's
 * LAN client (lan) and the export's IB host (ib); the export's socket.
 */
struct rmap {
	struct gw_rds *g;
	struct rmap *next;
	enum map_kind kind;
	struct rds_name ib, lan;
	int fd;
	struct event *ev;
	const struct rexport *x;
	time_t last;
	uint32_t ovfl;			/* its socket's SO_RXQ_OVFL */
	struct held *q, **qtail;
	unsigned int nq;
};

struct rexport {
	struct gw_rds *g;
	const struct gw_rds_export *x;
	struct rds_name ib;
	int fd, family;
	uint32_t ovfl;
	struct event *ev;
};

struct cache_slot {
	struct inet_addr a;
	time_t t;
	unsigned char lan, own;
};

struct gw_rds {
	struct part *p;
	struct fab_dev *dev;
	struct event *dev_ev, *tick_ev;
	struct rds_ep *ep;
	struct rexport ex[GW_RDS_EXPORTS_MAX];
	unsigned int nex;
	struct rmap *tab[NBUCKETS];
	struct cache_slot cache[CACHE_SLOTS];
	struct inet_addr roce_src;	/* RoCE: the port's IPv4 or IPv6 */
	time_t limit_logged;
	struct gw_rds_stats st;
	uint8_t buf[65536];
};

const struct counter_desc gw_rds_counters[] = {
	COUNTER("udp_tx", struct gw_rds_stats, udp_tx,
		"RDS datagrams from IB hosts sent on as UDP to the LAN."),
	COUNTER("udp_tx_bytes", struct gw_rds_stats, udp_tx_bytes,
		"Bytes of udp_tx."),
	COUNTER("udp_rx", struct gw_rds_stats, udp_rx,
		"UDP datagrams from the LAN sent on as RDS to IB hosts."),
	COUNTER("udp_rx_bytes", struct gw_rds_stats, udp_rx_bytes,
		"Bytes of udp_rx."),
	COUNTER("exported", struct gw_rds_stats, exported,
		"Of udp_rx: datagrams through an export."),
	COUNTER("mappings_now", struct gw_rds_stats, mappings_now,
		"IB senders with a UDP socket of the gateway now."),
	COUNTER("flows_now", struct gw_rds_stats, flows_now,
		"LAN clients of exports known now."),
	COUNTER("mappings_made", struct gw_rds_stats, mappings_made,
		"Mappings and export flows made."),
	COUNTER("reaped", struct gw_rds_stats, reaped,
		"Mappings and export flows closed when idle."),
	COUNTER("held_now", struct gw_rds_stats, held_now,
		"Datagrams waiting for a congested IB port."),
	COUNTER("congested", struct gw_rds_stats, congested,
		"Sends the RDS endpoint refused with ENOBUFS (congestion)."),
	COUNTER("drop_oversize", struct gw_rds_stats, drop_oversize,
		"RDS datagrams dropped: over the LAN's UDP payload limit."),
	COUNTER("drop_malformed", struct gw_rds_stats, drop_malformed,
		"Datagrams dropped: port 0, or address families differ."),
	COUNTER("drop_family", struct gw_rds_stats, drop_family,
		"Export datagrams dropped: the client's family is not the "
		"IB host's."),
	COUNTER("drop_limit", struct gw_rds_stats, drop_limit,
		"Datagrams dropped: a new mapping over rds_max_peers."),
	COUNTER("drop_congested", struct gw_rds_stats, drop_congested,
		"Datagrams dropped: the congestion queue of a mapping full."),
	COUNTER("drop_udp_tx", struct gw_rds_stats, drop_udp_tx,
		"RDS datagrams dropped: sending the UDP datagram failed."),
	COUNTER("drop_rds_tx", struct gw_rds_stats, drop_rds_tx,
		"UDP datagrams dropped: the RDS endpoint refused them."),
	COUNTER("drop_not_lan", struct gw_rds_stats, drop_not_lan,
		"UDP datagrams dropped: from an address of the IB side."),
	COUNTER("drop_udp_rx_overflow", struct gw_rds_stats,
		drop_udp_rx_overflow,
		"UDP datagrams the kernel dropped at the gateway's sockets "
		"(receive buffer full)."),
	COUNTERS_END
};

/*
 * The kernel's count of datagrams dropped at a socket (sk_drops) is n: what
 * it grew by since *seen is counted.  It comes with each datagram
 * (SO_RXQ_OVFL, as it was when that one was queued, so maybe older than
 * what SO_MEMINFO read) and from SO_MEMINFO.
 */
static void drops_seen(struct gw_rds *g, uint32_t n, uint32_t *seen)
{
	if ((int32_t)(n - *seen) > 0) {
		g->st.drop_udp_rx_overflow += n - *seen;
		*seen = n;
	}
}

/* A socket's drops as of now: those after the last datagram queued (a
 * burst's last ones) come with no datagram until the next. */
static void drops_now(struct gw_rds *g, int fd, uint32_t *seen)
{
	uint32_t mi[SK_MEMINFO_VARS];
	socklen_t len = sizeof(mi);

	if (fd >= 0 &&
	    getsockopt(fd, SOL_SOCKET, SO_MEMINFO, mi, &len) == 0 &&
	    len > SK_MEMINFO_DROPS * sizeof(mi[0]))
		drops_seen(g, mi[SK_MEMINFO_DROPS], seen);
}

const struct gw_rds_stats *gw_rds_stats(struct gw_rds *g)
{
	struct rmap *m;
	unsigned int i;

	for (i = 0; i < g->nex; i++)
		drops_now(g, g->ex[i].fd, &g->ex[i].ovfl);
	for (i = 0; i < NBUCKETS; i++)
		for (m = g->tab[i]; m; m = m->next)
			if (m->kind == M_OUT)
				drops_now(g, m->fd, &m->ovfl);
	return &g->st;
}

const struct rds_ep_stats *gw_rds_ep_stats(const struct gw_rds *g)
{
	return g->ep ? rds_ep_stats(g->ep) : NULL;
}

/* ---- addresses ----------------------------------------------------------- */

/* a in a socket address of family fam (IPv4 as IPv4-mapped in AF_INET6). */
static socklen_t to_sockaddr(const struct rds_name *n, int fam,
			     struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (fam == AF_INET6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(n->port);
		if (n->addr.family == AF_INET6) {
			s6->sin6_addr = n->addr.v6;
		} else {
			s6->sin6_addr.s6_addr[10] = 0xff;
			s6->sin6_addr.s6_addr[11] = 0xff;
			memcpy(&s6->sin6_addr.s6_addr[12], &n->addr.v4, 4);
		}
		return sizeof(*s6);
	}
	{
		struct sockaddr_in *s4 = (struct sockaddr_in *)ss;

		s4->sin_family = AF_INET;
		s4->sin_port = htons(n->port);
		s4->sin_addr = n->addr.v4;
		return sizeof(*s4);
	}
}

/* IPv4-mapped IPv6 addresses as IPv4. */
static void from_sockaddr(const struct sockaddr_storage *ss,
			  struct rds_name *n)
{
	memset(n, 0, sizeof(*n));
	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const void *)ss;

		n->port = ntohs(s6->sin6_port);
		if (IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr)) {
			n->addr.family = AF_INET;
			memcpy(&n->addr.v4, &s6->sin6_addr.s6_addr[12], 4);
		} else {
			inet_addr_v6(&n->addr, &s6->sin6_addr);
		}
	} else if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *s4 = (const void *)ss;

		n->port = ntohs(s4->sin_port);
		inet_addr_v4(&n->addr, &s4->sin_addr);
	}
}

static bool name_eq(const struct rds_name *a, const struct rds_name *b)
{
	return a->port == b->port && a->addr.family == b->addr.family &&
	       (!a->addr.family || inet_addr_equal(&a->addr, &b->addr));
}

/* What a UDP socket says of a: bind succeeds (one of the gateway's own
 * addresses, of any interface), or connect does (routed somewhere; the
 * source address the kernel picked for the route in *src, if asked). */
static bool udp_probe(const struct inet_addr *a, bool conn,
		      struct inet_addr *src)
{
	struct sockaddr_storage ss;
	struct rds_name n = { .addr = *a, .port = conn ? 9 : 0 };
	socklen_t sl = to_sockaddr(&n, a->family, &ss);
	int fd;
	bool ok;

	fd = socket(a->family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return false;
	ok = (conn ? connect(fd, (struct sockaddr *)&ss, sl) :
		     bind(fd, (struct sockaddr *)&ss, sl)) == 0;
	if (ok && src) {
		struct rds_name me;

		sl = sizeof(ss);
		ok = getsockname(fd, (struct sockaddr *)&ss, &sl) == 0;
		from_sockaddr(&ss, &me);
		*src = me.addr;
	}
	close(fd);
	return ok;
}

/* RoCE: the IB side is the port's netdev; an address is on the LAN when
 * the kernel routes to it from another source than the port's own. */
static bool roce_lan(struct gw_rds *g, const struct inet_addr *a)
{
	struct inet_addr src;

	return udp_probe(a, true, &src) &&
	       !(g->roce_src.family && inet_addr_equal(&src, &g->roce_src));
}

/* Is a on the Ethernet side (lan), or the gateway's own (own)?  Asked
 * for every datagram, so the answers are kept CACHE_S; a no is not kept:
 * the bridge may learn the host in the meantime (it asks Ethernet), and
 * the endpoint asks again when the IB host retries its connection. */
static void classify(struct gw_rds *g, const struct inet_addr *a,
		     bool *lan, bool *own)
{
	struct part *p = g->p;
	struct cache_slot *c = &g->cache[inet_addr_hash(a) % CACHE_SLOTS];
	time_t now = time(NULL);
	struct inet_addr nh;

	if (c->t && now - c->t < CACHE_S && inet_addr_equal(&c->a, a)) {
		*lan = c->lan;
		*own = c->own;
		return;
	}
	if (p->tun) {
		*own = ipoib_tun_is_own(p->tun, a) || udp_probe(a, false, NULL);
		*lan = !*own && ipoib_tun_nexthop(p->tun, a, &nh) < 0 &&
		       udp_probe(a, true, NULL);
	} else if (part_roce(p)) {
		*own = udp_probe(a, false, NULL);
		*lan = !*own && roce_lan(g, a);
	} else {
		*own = udp_probe(a, false, NULL);
		*lan = !*own && p->br && gw_bridge_proxy(p->br, a);
	}
	if (!*lan && !*own)
		return;
	c->a = *a;
	c->t = now;
	c->lan = *lan;
	c->own = *own;
}

static bool is_lan(struct gw_rds *g, const struct inet_addr *a)
{
	bool lan, own;

	classify(g, a, &lan, &own);
	return lan;
}

static size_t udp_max(int family)
{
	return family == AF_INET6 ? UDP_MAX6 : UDP_MAX4;
}

/* ---- mappings ------------------------------------------------------------ */

static unsigned int bucket(enum map_kind k, const struct rds_name *a,
			   const struct rds_name *b)
{
	uint32_t h = inet_addr_hash(&a->addr) ^ (a->port * 2654435761u);

	if (b)
		h ^= inet_addr_hash(&b->addr) * 31 + b->port;
	return (h ^ k) % NBUCKETS;
}

static struct rmap *map_find(struct gw_rds *g, enum map_kind k,
			     const struct rds_name *lan,
			     const struct rds_name *ib)
{
	struct rmap *m;

	for (m = g->tab[bucket(k, k == M_FLOW ? lan : ib,
			       k == M_FLOW ? ib : NULL)]; m; m = m->next)
		if (m->kind == k && name_eq(&m->ib, ib) &&
		    (k == M_OUT || name_eq(&m->lan, lan)))
			return m;
	return NULL;
}

/* Room for one more mapping?  The limit's log line at most every 10 s. */
static bool room(struct gw_rds *g)
{
	time_t now;

	if (g->st.mappings_now + g->st.flows_now < g->p->pc->rds_max_peers)
		return true;
	g->st.drop_limit++;
	now = time(NULL);
	if (now - g->limit_logged >= 10) {
		g->limit_logged = now;
		log_warnx("partition %s: RDS: %u mappings (rds_max_peers): "
			  "datagrams of new senders dropped", g->p->pc->name,
			  g->p->pc->rds_max_peers);
	}
	return false;
}

static void held_drop(struct gw_rds *g, struct rmap *m)
{
	struct held *h;

	while ((h = m->q)) {
		m->q = h->next;
		free(h);
		g->st.drop_congested++;
		g->st.held_now--;
	}
	m->qtail = &m->q;
	m->nq = 0;
}

static void map_free(struct gw_rds *g, struct rmap *m)
{
	struct rmap **pp;

	for (pp = &g->tab[bucket(m->kind, m->kind == M_FLOW ? &m->lan : &m->ib,
				 m->kind == M_FLOW ? &m->ib : NULL)];
	     *pp; pp = &(*pp)->next)
		if (*pp == m) {
			*pp = m->next;
			break;
		}
	held_drop(g, m);
	if (m->ev)
		event_free(m->ev);
	if (m->kind == M_OUT) {
		drops_now(g, m->fd, &m->ovfl);
		close(m->fd);
		g->st.mappings_now--;
	} else {
		g->st.flows_now--;
	}
	free(m);
}

static struct rmap *map_add(struct gw_rds *g, enum map_kind k,
			    const struct rds_name *lan,
			    const struct rds_name *ib)
{
	struct rmap *m = calloc(1, sizeof(*m));
	unsigned int b;

	if (!m)
		return NULL;
	m->g = g;
	m->kind = k;
	m->ib = *ib;
	if (lan)
		m->lan = *lan;
	m->fd = -1;
	m->qtail = &m->q;
	m->last = time(NULL);
	b = bucket(k, k == M_FLOW ? lan : ib, k == M_FLOW ? ib : NULL);
	m->next = g->tab[b];
	g->tab[b] = m;
	g->st.mappings_made++;
	if (k == M_OUT)
		g->st.mappings_now++;
	else
		g->st.flows_now++;
	return m;
}

/* ---- LAN -> IB ----------------------------------------------------------- */

static int ep_send(struct gw_rds *g, const struct rds_name *src,
		   const struct rds_name *dst, const uint8_t *data, size_t len)
{
	struct iovec iov = { (void *)data, len };

	return rds_ep_send(g->ep, src, dst, &iov, 1, NULL);
}

static void counted_tx(struct gw_rds *g, struct rmap *m, size_t len)
{
	g->st.udp_rx++;
	g->st.udp_rx_bytes += len;
	if (m->kind == M_FLOW)
		g->st.exported++;
}

/* Send what waits in m's queue, in order, until the endpoint refuses. */
static void flush(struct gw_rds *g, struct rmap *m)
{
	struct held *h;

	while ((h = m->q)) {
		if (ep_send(g, &h->src, &m->ib, h->data, h->len) < 0) {
			if (errno == ENOBUFS)
				return;
			g->st.drop_rds_tx++;
		} else {
			counted_tx(g, m, h->len);
		}
		m->q = h->next;
		if (!m->q)
			m->qtail = &m->q;
		m->nq--;
		g->st.held_now--;
		free(h);
	}
}

static void hold(struct gw_rds *g, struct rmap *m, const struct rds_name *src,
		 const uint8_t *data, size_t len)
{
	struct held *h;

	if (m->nq >= QUEUE_MAX || !(h = malloc(sizeof(*h) + len))) {
		g->st.drop_congested++;
		return;
	}
	h->next = NULL;
	h->src = *src;
	h->len = len;
	memcpy(h->data, data, len);
	*m->qtail = h;
	m->qtail = &h->next;
	m->nq++;
	g->st.held_now++;
}

/* A UDP datagram for m's IB host, from src. */
static void to_ib(struct gw_rds *g, struct rmap *m, const struct rds_name *src,
		  const uint8_t *data, size_t len)
{
	m->last = time(NULL);
	if (m->q) {		/* behind what waits already */
		hold(g, m, src, data, len);
		return;
	}
	if (ep_send(g, src, &m->ib, data, len) == 0) {
		counted_tx(g, m, len);
		return;
	}
	if (errno == ENOBUFS) {
		g->st.congested++;
		hold(g, m, src, data, len);
		return;
	}
	g->st.drop_rds_tx++;
}

/*
 * One datagram of fd into g->buf: its length, or -1.  The kernel's count
 * of datagrams dropped at the socket (SO_RXQ_OVFL) comes with it: what
 * it grew by since *seen is counted.
 */
static ssize_t udp_recv(struct gw_rds *g, int fd, struct sockaddr_storage *ss,
			uint32_t *seen)
{
	union {
		char b[CMSG_SPACE(sizeof(uint32_t))];
		struct cmsghdr align;
	} cbuf;
	struct iovec iov = { g->buf, sizeof(g->buf) };
	struct msghdr mh = {
		.msg_name = ss, .msg_namelen = sizeof(*ss),
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf.b, .msg_controllen = sizeof(cbuf.b),
	};
	struct cmsghdr *c;
	uint32_t n;
	ssize_t len;

	len = recvmsg(fd, &mh, 0);
	if (len < 0)
		return -1;
	for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
		if (c->cmsg_level == SOL_SOCKET &&
		    c->cmsg_type == SO_RXQ_OVFL) {
			memcpy(&n, CMSG_DATA(c), sizeof(n));
			drops_seen(g, n, seen);
		}
	return len;
}

/* Answers from the LAN to a mapping's socket. */
static void out_rx_cb(evutil_socket_t fd, short what, void *arg)
{
	struct rmap *m = arg;
	struct gw_rds *g = m->g;
	struct sockaddr_storage ss;
	struct rds_name src;
	ssize_t n;
	int i;

	(void)what;
	for (i = 0; i < RX_BATCH; i++) {
		n = udp_recv(g, fd, &ss, &m->ovfl);
		if (n < 0)
			return;
		from_sockaddr(&ss, &src);
		if (!src.port || src.addr.family != m->ib.addr.family) {
			g->st.drop_malformed++;
			continue;
		}
		if (!is_lan(g, &src.addr)) {
			g->st.drop_not_lan++;
			continue;
		}
		to_ib(g, m, &src, g->buf, (size_t)n);
	}
}

/* Datagrams from LAN clients to an export's port. */
static void export_rx_cb(evutil_socket_t fd, short what, void *arg)
{
	struct rexport *xe = arg;
	struct gw_rds *g = xe->g;
	struct sockaddr_storage ss;
	struct rds_name cl;
	struct rmap *m;
	ssize_t n;
	int i;

	(void)what;
	for (i = 0; i < RX_BATCH; i++) {
		n = udp_recv(g, fd, &ss, &xe->ovfl);
		if (n < 0)
			return;
		from_sockaddr(&ss, &cl);
		if (!cl.port || !cl.addr.family) {
			g->st.drop_malformed++;
			continue;
		}
		if (cl.addr.family != xe->ib.addr.family) {
			g->st.drop_family++;
			continue;
		}
		m = map_find(g, M_FLOW, &cl, &xe->ib);
		if (!m) {
			if (!room(g))
				continue;
			m = map_add(g, M_FLOW, &cl, &xe->ib);
			if (!m) {
				g->st.drop_rds_tx++;
				continue;
			}
			m->x = xe;
			m->fd = xe->fd;
		}
		to_ib(g, m, &cl, g->buf, (size_t)n);
	}
}

/* ---- IB -> LAN ----------------------------------------------------------- */

/* Room for bursts: an RDS sender has up to a thousand messages in
 * flight, and their answers come back at once.  Past rmem_max with
 * CAP_NET_ADMIN, which ibgwd keeps. */
static void rcvbuf(int fd, int bytes)
{
	int one = 1;

	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &bytes,
		       sizeof(bytes)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof(bytes));
	setsockopt(fd, SOL_SOCKET, SO_RXQ_OVFL, &one, sizeof(one));
}

/*
 * A socket for the IB sender ib: its own port if free, else any.  Never a
 * privileged one (below 1024, which ibgwd may bind for exports): RDS
 * lets any user bind any port, so an unprivileged program on an IB host
 * would speak on the LAN from the gateway's port 111 or 514, which hosts
 * there may trust as root's.
 */
#define PORT_PRIVILEGED	1024
static int out_socket(const struct rds_name *ib)
{
	struct sockaddr_storage ss;
	struct rds_name any;
	socklen_t sl;
	int fd, one = 1;

	fd = socket(ib->addr.family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
		    0);
	if (fd < 0)
		return -1;
	if (ib->addr.family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	rcvbuf(fd, RCVBUF_MAP);
	memset(&any, 0, sizeof(any));
	any.addr.family = ib->addr.family;
	any.port = ib->port;
	sl = to_sockaddr(&any, ib->addr.family, &ss);
	if (ib->port >= PORT_PRIVILEGED &&
	    bind(fd, (struct sockaddr *)&ss, sl) == 0)
		return fd;
	any.port = 0;
	sl = to_sockaddr(&any, ib->addr.family, &ss);
	if (bind(fd, (struct sockaddr *)&ss, sl) == 0)
		return fd;
	close(fd);
	return -1;
}

static struct rmap *out_map(struct gw_rds *g, const struct rds_name *ib)
{
	struct rmap *m = map_find(g, M_OUT, NULL, ib);
	char a[INET_ADDR_STRLEN];
	int fd;

	if (m)
		return m;
	if (!room(g))
		return NULL;
	fd = out_socket(ib);
	if (fd < 0) {
		log_debug("rds: a UDP socket for %s:%u: %s",
			  inet_addr_str(&ib->addr, a, sizeof(a)), ib->port,
			  strerror(errno));
		g->st.drop_udp_tx++;
		return NULL;
	}
	m = map_add(g, M_OUT, NULL, ib);
	if (!m) {
		close(fd);
		g->st.drop_udp_tx++;
		return NULL;
	}
	m->fd = fd;
	m->ev = event_new(g->p->d->base, fd, EV_READ | EV_PERSIST, out_rx_cb,
			  m);
	if (!m->ev || event_add(m->ev, NULL) < 0) {
		map_free(g, m);
		g->st.drop_udp_tx++;
		return NULL;
	}
	return m;
}

static void udp_send(struct gw_rds *g, int fd, int fam,
		     const struct rds_name *dst, const uint8_t *data,
		     size_t len)
{
	struct sockaddr_storage ss;
	socklen_t sl = to_sockaddr(dst, fam, &ss);

	if (sendto(fd, data, len, 0, (struct sockaddr *)&ss, sl) < 0) {
		g->st.drop_udp_tx++;
		return;
	}
	g->st.udp_tx++;
	g->st.udp_tx_bytes += len;
}

/* ---- the endpoint's callbacks -------------------------------------------- */

static int on_resolve(void *arg, const struct inet_addr *laddr,
		      const struct inet_addr *faddr, union fab_gid *gid,
		      uint16_t *lid)
{
	struct gw_rds *g = arg;
	struct ipoib_link *l = part_link(g->p);
	struct inet_addr nh = *faddr;
	struct ipoib_addr hw;

	(void)laddr;
	if (part_roce(g->p)) {	/* rdma_cm resolves; the GID is the IP */
		memset(gid, 0, sizeof(*gid));
		if (faddr->family == AF_INET) {
			gid->raw[10] = gid->raw[11] = 0xff;
			memcpy(gid->raw + 12, &faddr->v4, 4);
		} else {
			memcpy(gid->raw, &faddr->v6, 16);
		}
		*lid = 0;
		return 0;
	}
	if (g->p->tun && ipoib_tun_nexthop(g->p->tun, faddr, &nh) < 0) {
		errno = ENETUNREACH;
		return -1;
	}
	if (ipoib_link_neigh_hw(l, &nh, &hw) == 0) {
		*gid = hw.gid;
		*lid = 0;
		return 0;
	}
	ipoib_link_neigh_resolve(l, &nh);
	errno = EAGAIN;
	return -1;
}

static bool on_is_local(void *arg, const struct inet_addr *a)
{
	struct gw_rds *g = arg;
	bool lan, own;

	classify(g, a, &lan, &own);
	return lan || own;
}

static int on_deliver(void *arg, const struct rds_name *dst,
		      const struct rds_name *src, const uint8_t *data,
		      size_t len)
{
	struct gw_rds *g = arg;
	struct rmap *m;
	bool lan, own;

	if (!dst->port || !src->port ||
	    dst->addr.family != src->addr.family) {
		g->st.drop_malformed++;
		return 0;
	}
	m = map_find(g, M_FLOW, dst, src);
	if (m) {		/* an answer to an export's client */
		if (len > udp_max(dst->addr.family)) {
			g->st.drop_oversize++;
			return 0;
		}
		m->last = time(NULL);
		udp_send(g, m->fd, m->x->family, dst, data, len);
		return 0;
	}
	classify(g, &dst->addr, &lan, &own);
	if (!lan) {		/* the gateway's own: nobody has it bound */
		errno = ENOENT;
		return -1;
	}
	if (len > udp_max(dst->addr.family)) {
		g->st.drop_oversize++;
		return 0;
	}
	m = out_map(g, src);
	if (!m)
		return 0;
	m->last = time(NULL);
	udp_send(g, m->fd, src->addr.family, dst, data, len);
	return 0;
}

static void on_uncongested(void *arg, const struct inet_addr *faddr)
{
	struct gw_rds *g = arg;
	struct rmap *m;
	unsigned int i;

	for (i = 0; i < NBUCKETS; i++)
		for (m = g->tab[i]; m; m = m->next)
			if (m->q && inet_addr_equal(&m->ib.addr, faddr))
				flush(g, m);
}

/* Once a second: what waits is tried again (an ENOBUFS of max_conns
 * sends no uncongested), idle mappings closed. */
static void tick_cb(evutil_socket_t fd, short what, void *arg)
{
	struct gw_rds *g = arg;
	struct rmap *m, *next;
	time_t now = time(NULL);
	unsigned int i;

	(void)fd;
	(void)what;
	for (i = 0; i < NBUCKETS; i++)
		for (m = g->tab[i]; m; m = next) {
			next = m->next;
			if (m->q)
				flush(g, m);
			if (now - m->last < IDLE_S)
				continue;
			if (m->q && now - m->last < 2 * IDLE_S)
				continue;
			g->st.reaped++;
			map_free(g, m);
		}
}

/* Port events of our device: only the fabric's end matters here. */
static void dev_cb(evutil_socket_t fd, short what, void *arg)
{
	struct gw_rds *g = arg;
	struct fab_event ev;

	(void)fd;
	(void)what;
	while (fab_get_event(g->dev, &ev) == 1)
		if (ev.type == FAB_EV_DEVICE_FATAL && g->dev_ev) {
			log_warnx("partition %s: RDS: the fabric is gone",
				  g->p->pc->name);
			event_del(g->dev_ev);
		}
}

/* ---- set-up -------------------------------------------------------------- */

static int udp_bind_port(uint16_t port, int *family)
{
	struct sockaddr_in6 s6;
	struct sockaddr_in s4;
	int one = 1, zero = 0, fd;

	/* dual-stack where there is IPv6, else IPv4 */
	memset(&s6, 0, sizeof(s6));
	s6.sin6_family = AF_INET6;
	s6.sin6_port = htons(port);
	s6.sin6_addr = in6addr_any;
	fd = socket(AF_INET6, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd >= 0) {
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero,
			   sizeof(zero));
		if (bind(fd, (struct sockaddr *)&s6, sizeof(s6)) == 0) {
			*family = AF_INET6;
			return fd;
		}
		close(fd);
	}
	memset(&s4, 0, sizeof(s4));
	s4.sin_family = AF_INET;
	s4.sin_port = htons(port);
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&s4, sizeof(s4)) < 0) {
		int e = errno;

		close(fd);
		errno = e;
		return -1;
	}
	*family = AF_INET;
	return fd;
}

static int export_open(struct gw_rds *g, const struct gw_rds_export *x,
		       char *err, size_t errlen)
{
	struct rexport *xe = &g->ex[g->nex];

	memset(xe, 0, sizeof(*xe));
	xe->g = g;
	xe->x = x;
	xe->ib.addr = x->ib_addr;
	xe->ib.port = x->ib_port;
	xe->fd = udp_bind_port(x->lan_port, &xe->family);
	if (xe->fd < 0) {
		snprintf(err, errlen, "export: UDP port %u: %s", x->lan_port,
			 strerror(errno));
		return -1;
	}
	rcvbuf(xe->fd, RCVBUF_EXPORT);
	xe->ev = event_new(g->p->d->base, xe->fd, EV_READ | EV_PERSIST,
			   export_rx_cb, xe);
	if (!xe->ev || event_add(xe->ev, NULL) < 0) {
		snprintf(err, errlen, "export %u: out of memory", x->lan_port);
		if (xe->ev)
			event_free(xe->ev);
		close(xe->fd);
		return -1;
	}
	g->nex++;
	return 0;
}

/* The port's source GID as an address: IPv4 for ::ffff:a.b.c.d. */
static void roce_source(struct gw_rds *g, const union fab_gid *sgid)
{
	static const uint8_t v4pfx[12] = { [10] = 0xff, [11] = 0xff };

	if (!memcmp(sgid->raw, v4pfx, sizeof(v4pfx)))
		inet_addr_v4(&g->roce_src,
			     (const struct in_addr *)(sgid->raw + 12));
	else
		inet_addr_v6(&g->roce_src, (const struct in6_addr *)sgid->raw);
}

static void on_log(void *arg, const char *line)
{
	struct gw_rds *g = arg;

	log_info("partition %s: %s", g->p->pc->name, line);
}

static int ep_open(struct gw_rds *g, char *err, size_t errlen)
{
	static const struct rds_ep_ops ops = {
		.resolve = on_resolve,
		.is_local = on_is_local,
		.deliver = on_deliver,
		.uncongested = on_uncongested,
		.log = on_log,
	};
	struct ibgwd *d = g->p->d;
	struct fab_port_attr attr;
	struct rds_ep_cfg cfg;
	char why[256];
	int idx;

	/* a device of its own: the endpoint takes every CM event of it */
	g->dev = fab_open(d->conf.fabric, d->conf.node, why, sizeof(why));
	if (!g->dev || fab_query_port(g->dev, &attr, why, sizeof(why)) < 0) {
		snprintf(err, errlen, "RDS: %s", why);
		return -1;
	}
	idx = fab_pkey_find(&attr, g->p->pc->pkey);
	if (idx < 0) {
		snprintf(err, errlen, "RDS: P_Key 0x%04x is not in the port's "
			 "table", g->p->pc->pkey | 0x8000);
		return -1;
	}
	if (part_roce(g->p))
		roce_source(g, &attr.sgid);
	memset(&cfg, 0, sizeof(cfg));
	cfg.profile = strncmp(d->conf.fabric, "soft:", 5) ?
		      RDS_PROFILE_RDMA_CM : RDS_PROFILE_SOFT;
	/* RoCE: the REQs name the LAN addresses (rdma_cm puts the
	 * destination IP in the DGID), so listen on every address */
	cfg.listen_any = part_roce(g->p);
	cfg.pkey_index = (uint16_t)idx;
	/* the REQs of this partition (each RDS partition's endpoint
	 * listens on RDS's port) */
	cfg.listen_pkey = g->p->pc->pkey;
	/* a connection per address pair: room beyond the mappings for
	 * senders that speak to several LAN hosts */
	cfg.max_conns = g->p->pc->rds_max_peers + 16 > 1024 ?
			g->p->pc->rds_max_peers + 16 : 1024;
	g->ep = rds_ep_new(d->base, g->dev, &cfg, &ops, g, why, sizeof(why));
	if (!g->ep) {
		snprintf(err, errlen, "RDS: %s", why);
		return -1;
	}
	g->dev_ev = event_new(d->base, fab_dev_fd(g->dev),
			      EV_READ | EV_PERSIST, dev_cb, g);
	if (g->dev_ev)
		event_add(g->dev_ev, NULL);
	return 0;
}

struct gw_rds *gw_rds_new(struct part *p, char *err, size_t errlen)
{
	struct timeval tv = { 1, 0 };
	struct gw_rds *g = calloc(1, sizeof(*g));
	unsigned int i;

	if (!g) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	g->p = p;
	if (ep_open(g, err, errlen) < 0)
		goto fail;
	for (i = 0; i < p->pc->nrds_exports; i++)
		if (export_open(g, &p->pc->rds_exports[i], err, errlen) < 0)
			goto fail;
	g->tick_ev = event_new(p->d->base, -1, EV_PERSIST, tick_cb, g);
	if (!g->tick_ev || event_add(g->tick_ev, &tv) < 0) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	return g;
fail:
	gw_rds_free(g);
	return NULL;
}

void gw_rds_free(struct gw_rds *g)
{
	unsigned int i;

	if (!g)
		return;
	if (g->tick_ev)
		event_free(g->tick_ev);
	/* the endpoint first: no callback after this */
	if (g->ep)
		rds_ep_free(g->ep);
	for (i = 0; i < NBUCKETS; i++)
		while (g->tab[i])
			map_free(g, g->tab[i]);
	for (i = 0; i < g->nex; i++) {
		event_free(g->ex[i].ev);
		close(g->ex[i].fd);
	}
	if (g->dev_ev)
		event_free(g->dev_ev);
	if (g->dev)
		fab_close(g->dev);
	free(g);
}

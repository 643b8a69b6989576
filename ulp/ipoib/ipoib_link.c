// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * An IPoIB datagram-mode link (see ipoib_link.h).  What it does follows the
 * Linux driver (drivers/infiniband/ulp/ipoib) and the kernel's neighbour
 * code as far as a user-space host needs:
 *  - the broadcast group is joined first (FullMember); its record gives the
 *    Q_Key, MTU (link MTU = group MTU - 4), SL and rate; carrier follows it;
 *  - other groups are joined with the broadcast group's parameters so that
 *    they can be created: FullMember for groups the host listens to (all-
 *    hosts, all-nodes, our solicited-node groups, what IGMP/MLD reports from
 *    the host name), SendOnlyFullMember for groups we only send to, with up
 *    to 64 packets waiting and the retry backoff doubling to 16 s;
 *  - unicast goes through a neighbour: ARP (IPv4) or NS (IPv6) finds the
 *    20-byte address, a PathRecord the DLID/SL, then an address handle; at
 *    most 3 packets wait per unresolved neighbour (IPOIB_MAX_PATH_REC_QUEUE);
 *  - our own multicast coming back is dropped, as the driver does.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>

#include "inet/byteorder.h"
#include "fabric/fabric_prov.h"	/* fab_set_error */
#include "fabric/sa_client.h"
#include "ulp/ipoib/ipoib_link.h"

#define NEIGH_QUEUE_MAX		3
#define MC_QUEUE_MAX		64
#define NEIGH_HASH		256
#define ARP_RETRIES		3	/* then the neighbour fails */
#define BACKOFF_MAX_S		16
#define RX_BATCH		32
#define FRAME_MAX		(IPOIB_HDR_LEN + 4096)
#define TX_BATCH		32

struct frame {
	struct frame *next;
	size_t len;
	uint8_t data[];
};

struct fqueue {
	struct frame *head, *tail;
	unsigned int n;
};

enum mc_state { MC_IDLE, MC_JOINING, MC_JOINED, MC_WAIT };

struct mc {
	struct ipoib_link *l;	/* the callbacks' way back */
	union fab_gid mgid;
	int full;		/* FullMember (we listen), else send-only */
	enum mc_state st;
	uint16_t mlid;
	struct fab_ah *ah;
	uint32_t req;
	unsigned int backoff_s;
	time_t retry_at;
	int attached;
	uint8_t js;		/* the port's JoinState the SA answered */
	int own;		/* joined by the link itself, not the host */
	struct fqueue q;	/* waiting for a send-only join */
	struct mc *next;
};

enum path_state { PATH_NONE, PATH_QUERYING, PATH_OK, PATH_FAILED };

struct path {
	struct ipoib_link *l;
	union fab_gid dgid;
	enum path_state st;
	uint32_t req;
	struct fab_ah *ah;
	time_t updated;
	struct path *next;
};

struct neigh {
	struct inet_addr ip;
	int have_hw;
	struct ipoib_addr hw;
	struct path *path;
	struct fqueue q;	/* frames waiting for hw + path */
	time_t created, confirmed;
	unsigned int probes;
	time_t next_probe;
	struct neigh *next;
};

struct ipoib_link {
	struct event_base *base;
	struct fab_dev *dev;
	struct ipoib_link_cfg cfg;
	struct ipoib_link_ops ops;
	void *arg;
	struct sa_client *sa;
	struct fab_port_attr pa;
	uint16_t pkey;		/* with the full bit, as the group's */
	int pkey_index;
	struct fab_qp *qp;
	struct event *rx_ev, *tick_ev;
	/* broadcast group */
	struct sa_mcmember bcast;
	union fab_gid bcast_mgid;
	int carrier;
	unsigned int mtu;
	struct mc *mcs;
	struct path *paths;
	struct neigh *neigh[NEIGH_HASH];
	unsigned int nneigh;
	struct inet_prefix addrs[16];
	unsigned int naddrs;
	struct ipoib_link_stats st;
	uint16_t icmp_id;
	/* sends held while the host hands us a burst (ipoib_link_tx_hold) */
	int tx_hold;
	unsigned int ntx;
	struct fab_send_wr txwr[TX_BATCH];
	uint8_t txbuf[TX_BATCH][FRAME_MAX];
	uint8_t rxbuf[RX_BATCH][FAB_GRH_LEN + 4096];
};

static const char *const drop_names[IPOIB_DROP_MAX] = {
	[IPOIB_DROP_NO_CARRIER] = "no_carrier",
	[IPOIB_DROP_BAD_PACKET] = "bad_packet",
	[IPOIB_DROP_TOO_BIG] = "too_big",
	[IPOIB_DROP_NO_ROUTE] = "no_route",
	[IPOIB_DROP_NEIGH_QUEUE] = "neigh_queue_full",
	[IPOIB_DROP_NEIGH_FAILED] = "neigh_failed",
	[IPOIB_DROP_NEIGH_TABLE_FULL] = "neigh_table_full",
	[IPOIB_DROP_PATH_FAILED] = "path_failed",
	[IPOIB_DROP_MCAST_QUEUE] = "mcast_queue_full",
	[IPOIB_DROP_MCAST_FAILED] = "mcast_join_failed",
	[IPOIB_DROP_SEND] = "send_failed",
	[IPOIB_DROP_RX_MALFORMED] = "rx_malformed",
	[IPOIB_DROP_RX_OWN] = "rx_own_multicast",
};

const char *ipoib_drop_name(enum ipoib_drop d)
{
	return (unsigned int)d < IPOIB_DROP_MAX ? drop_names[d] : "unknown";
}

static void drop(struct ipoib_link *l, enum ipoib_drop d)
{
	l->st.drop[d]++;
}

static time_t now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec;
}

/* ---- frames and queues --------------------------------------------------- */

static struct frame *frame_new(uint16_t ethertype, const uint8_t *pkt,
			       size_t len)
{
	struct frame *f = malloc(sizeof(*f) + IPOIB_HDR_LEN + len);

	if (!f)
		return NULL;
	f->next = NULL;
	f->len = IPOIB_HDR_LEN + len;
	ipoib_hdr_build(ethertype, f->data, IPOIB_HDR_LEN);
	memcpy(f->data + IPOIB_HDR_LEN, pkt, len);
	return f;
}

static void fq_push(struct fqueue *q, struct frame *f)
{
	if (q->tail)
		q->tail->next = f;
	else
		q->head = f;
	q->tail = f;
	q->n++;
}

static struct frame *fq_pop(struct fqueue *q)
{
	struct frame *f = q->head;

	if (f) {
		q->head = f->next;
		if (!q->head)
			q->tail = NULL;
		q->n--;
	}
	return f;
}

static unsigned int fq_drain(struct fqueue *q)
{
	struct frame *f;
	unsigned int n = 0;

	while ((f = fq_pop(q))) {
		free(f);
		n++;
	}
	return n;
}

/* ---- sending ------------------------------------------------------------- */

static void tx_flush(struct ipoib_link *l)
{
	unsigned int i, done = 0;
	int n;

	while (done < l->ntx) {
		n = l->qp ? fab_qp_send(l->qp, l->txwr + done,
					(int)(l->ntx - done)) : -1;
		if (n <= 0)
			break;
		for (i = done; i < done + (unsigned int)n; i++) {
			l->st.tx_packets++;
			l->st.tx_bytes += l->txwr[i].len;
		}
		done += (unsigned int)n;
	}
	l->st.drop[IPOIB_DROP_SEND] += l->ntx - done;
	l->ntx = 0;
}

/*
 * Send a frame of IPoIB header + payload now, or with the burst it belongs
 * to (tx_hold): the frame is assembled once, in its send slot.  With
 * ethertype 0 the payload already carries its header (a queued frame).
 */
static void send_frame(struct ipoib_link *l, struct fab_ah *ah, uint32_t qpn,
		       uint16_t ethertype, const uint8_t *data, size_t len)
{
	size_t hdr = ethertype ? IPOIB_HDR_LEN : 0;
	struct fab_send_wr *wr;
	uint8_t *buf;

	if (!l->qp || hdr + len > FRAME_MAX) {
		drop(l, IPOIB_DROP_SEND);
		return;
	}
	buf = l->txbuf[l->ntx];
	if (hdr)
		ipoib_hdr_build(ethertype, buf, hdr);
	memcpy(buf + hdr, data, len);
	wr = &l->txwr[l->ntx];
	wr->ah = ah;
	wr->remote_qpn = qpn;
	wr->remote_qkey = l->bcast.qkey;
	wr->buf = buf;
	wr->len = (uint32_t)(hdr + len);
	l->ntx++;
	if (!l->tx_hold || l->ntx == TX_BATCH)
		tx_flush(l);
}

void ipoib_link_tx_hold(struct ipoib_link *l, int hold)
{
	l->tx_hold = hold;
	if (!hold)
		tx_flush(l);
}

/* ---- multicast ------------------------------------------------------------- */

static struct mc *mc_find(struct ipoib_link *l, const union fab_gid *mgid)
{
	struct mc *m;

	for (m = l->mcs; m; m = m->next)
		if (!memcmp(m->mgid.raw, mgid->raw, 16))
			return m;
	return NULL;
}

static void mc_join(struct ipoib_link *l, struct mc *m);

static void mc_failed(struct ipoib_link *l, struct mc *m)
{
	time_t t = now_s();

	l->st.join_failures++;
	m->st = MC_WAIT;
	m->backoff_s = m->backoff_s ? m->backoff_s * 2 : 1;
	if (m->backoff_s > BACKOFF_MAX_S)
		m->backoff_s = BACKOFF_MAX_S;
	m->retry_at = t + m->backoff_s;
	l->st.drop[IPOIB_DROP_MCAST_FAILED] += fq_drain(&m->q);
}

static void mc_joined(void *arg, const struct sa_result *res)
{
	struct mc *m = arg;
	struct ipoib_link *l = m->l;
	struct fab_ah_attr aa;
	struct frame *f;

	if (res->err == SA_CLIENT_CANCELLED)
		return;
	m->req = 0;
	if (!sa_result_ok(res) || !res->nrec) {
		mc_failed(l, m);
		return;
	}
	m->mlid = res->rec.mcm[0].mlid;
	m->js = res->rec.mcm[0].join_state;
	memset(&aa, 0, sizeof(aa));
	aa.dlid = m->mlid;
	aa.sl = res->rec.mcm[0].sl;
	aa.is_global = 1;
	aa.hop_limit = res->rec.mcm[0].hop_limit;
	aa.traffic_class = res->rec.mcm[0].tclass;
	aa.flow_label = res->rec.mcm[0].flow_label;
	aa.dgid = m->mgid;
	if (m->ah)
		fab_ah_destroy(m->ah);
	m->ah = fab_ah_create(l->dev, &aa);
	if (!m->ah) {
		mc_failed(l, m);
		return;
	}
	if (m->full && l->qp && !m->attached &&
	    fab_attach_mcast(l->qp, &m->mgid, m->mlid) == 0)
		m->attached = 1;
	m->st = MC_JOINED;
	m->backoff_s = 0;
	l->st.joins++;
	while ((f = fq_pop(&m->q))) {
		send_frame(l, m->ah, IPOIB_QPN_MCAST, 0, f->data, f->len);
		free(f);
	}
}

static void mc_join(struct ipoib_link *l, struct mc *m)
{
	struct sa_mcmember r;

	if (!l->carrier || m->st == MC_JOINING)
		return;
	/* as ipoib_mcast_join(): the broadcast group's parameters, so a
	 * group that does not exist yet can be created */
	memset(&r, 0, sizeof(r));
	r.mgid = m->mgid;
	r.port_gid = l->pa.gid;
	r.qkey = l->bcast.qkey;
	r.pkey = l->pkey;
	r.mtu_sel = SA_SEL_EQ;
	r.mtu = l->bcast.mtu;
	r.rate_sel = SA_SEL_EQ;
	r.rate = l->bcast.rate;
	r.sl = l->bcast.sl;
	r.flow_label = l->bcast.flow_label;
	r.hop_limit = l->bcast.hop_limit;
	r.tclass = l->bcast.tclass;
	/* send-only: SendOnlyFullMember, as Linux asks since 4.x, so the
	 * first sender can create the group */
	r.join_state = m->full ? SA_JOIN_FULL : SA_JOIN_SENDONLY_FULL;
	m->st = MC_JOINING;
	m->req = sa_mcm_join(l->sa, &r, SA_MCM_CREATE_MASK | SA_MCM_MTU_SEL |
			     SA_MCM_MTU | SA_MCM_RATE_SEL | SA_MCM_RATE,
			     mc_joined, m);
	if (!m->req)
		mc_failed(l, m);
}

static struct mc *mc_get(struct ipoib_link *l, const union fab_gid *mgid,
			 int full)
{
	struct mc *m = mc_find(l, mgid);

	if (m) {
		if (full && !m->full) {
			/* a send-only member now listens: join as full */
			m->full = 1;
			if (m->st == MC_JOINED) {
				m->st = MC_IDLE;
				mc_join(l, m);
			}
		}
		return m;
	}
	m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->l = l;
	m->mgid = *mgid;
	m->full = full;
	m->next = l->mcs;
	l->mcs = m;
	mc_join(l, m);
	return m;
}

static void mc_send(struct ipoib_link *l, const union fab_gid *mgid,
		    uint16_t ethertype, const uint8_t *pkt, size_t len)
{
	struct mc *m = mc_get(l, mgid, 0);
	struct frame *f;

	if (!m) {
		drop(l, IPOIB_DROP_MCAST_FAILED);
		return;
	}
	if (m->st == MC_JOINED) {
		send_frame(l, m->ah, IPOIB_QPN_MCAST, ethertype, pkt, len);
		return;
	}
	if (m->st == MC_WAIT) {		/* backing off after a refusal */
		drop(l, IPOIB_DROP_MCAST_FAILED);
		return;
	}
	if (m->q.n >= MC_QUEUE_MAX || !(f = frame_new(ethertype, pkt, len))) {
		drop(l, IPOIB_DROP_MCAST_QUEUE);
		return;
	}
	fq_push(&m->q, f);
	if (m->st == MC_IDLE)
		mc_join(l, m);
}

/* A group the link itself listens to: the host cannot make it leave. */
static void mc_own(struct ipoib_link *l, const union fab_gid *mgid)
{
	struct mc *m = mc_get(l, mgid, 1);

	if (m)
		m->own = 1;
}

static void mc_leave_cb(void *arg, const struct sa_result *res)
{
	(void)arg;
	(void)res;
}

static void mc_free(struct ipoib_link *l, struct mc *m, int leave);

/* Leave a group and forget it. */
static void mc_remove(struct ipoib_link *l, struct mc *m)
{
	struct mc **pp;

	for (pp = &l->mcs; *pp; pp = &(*pp)->next) {
		if (*pp == m) {
			*pp = m->next;
			break;
		}
	}
	mc_free(l, m, 1);
}

static void mc_free(struct ipoib_link *l, struct mc *m, int leave)
{
	struct sa_mcmember r;

	if (leave && m->st == MC_JOINED && l->sa) {
		memset(&r, 0, sizeof(r));
		r.mgid = m->mgid;
		r.port_gid = l->pa.gid;
		r.join_state = m->js ? m->js : SA_JOIN_FULL;
		sa_mcm_leave(l->sa, &r, SA_MCM_JOIN_MASK, mc_leave_cb, NULL);
	}
	if (m->req)
		sa_cancel(l->sa, m->req);
	if (m->attached && l->qp)
		fab_detach_mcast(l->qp, &m->mgid, m->mlid);
	if (m->ah)
		fab_ah_destroy(m->ah);
	fq_drain(&m->q);
	free(m);
}

/* ---- paths and neighbours ------------------------------------------------- */

static unsigned int ip_hash(const struct inet_addr *a)
{
	uint32_t h = 2166136261u;
	int i, n = a->family == AF_INET ? 4 : 16;

	for (i = 0; i < n; i++) {
		h ^= a->raw[i];
		h *= 16777619u;
	}
	return h % NEIGH_HASH;
}

static struct neigh *neigh_find(struct ipoib_link *l, const struct inet_addr *a)
{
	struct neigh *n;

	for (n = l->neigh[ip_hash(a)]; n; n = n->next)
		if (inet_addr_equal(&n->ip, a))
			return n;
	return NULL;
}

static void neigh_free(struct ipoib_link *l, struct neigh *n)
{
	struct neigh **pp;

	for (pp = &l->neigh[ip_hash(&n->ip)]; *pp; pp = &(*pp)->next) {
		if (*pp == n) {
			*pp = n->next;
			break;
		}
	}
	fq_drain(&n->q);
	l->nneigh--;
	free(n);
}

/* Flush what waits for a neighbour whose address handle is ready. */
static void neigh_flush(struct ipoib_link *l, struct neigh *n)
{
	struct frame *f;

	while ((f = fq_pop(&n->q))) {
		send_frame(l, n->path->ah, n->hw.qpn, 0, f->data, f->len);
		free(f);
	}
}

static void path_done(void *arg, const struct sa_result *res);

static void path_query(struct ipoib_link *l, struct path *p)
{
	struct sa_path q;

	memset(&q, 0, sizeof(q));
	q.dgid = p->dgid;
	q.sgid = l->pa.gid;
	q.pkey = l->pkey;
	q.numb_path = 1;
	q.reversible = 1;
	p->st = PATH_QUERYING;
	l->st.path_queries++;
	p->req = sa_path_get(l->sa, &q, SA_PR_DGID | SA_PR_SGID | SA_PR_PKEY |
			     SA_PR_NUMB_PATH | SA_PR_REVERSIBLE, path_done,
			     p);
	if (!p->req)
		p->st = PATH_FAILED;
}

static struct path *path_get(struct ipoib_link *l, const union fab_gid *dgid)
{
	struct path *p;

	for (p = l->paths; p; p = p->next)
		if (!memcmp(p->dgid.raw, dgid->raw, 16))
			break;
	if (!p) {
		p = calloc(1, sizeof(*p));
		if (!p)
			return NULL;
		p->l = l;
		p->dgid = *dgid;
		p->next = l->paths;
		l->paths = p;
	}
	if (p->st == PATH_NONE || p->st == PATH_FAILED)
		path_query(l, p);
	return p;
}

static void path_done(void *arg, const struct sa_result *res)
{
	struct path *p = arg;
	struct ipoib_link *l = p->l;
	struct fab_ah_attr aa;
	unsigned int i;
	struct neigh *n, *next;

	if (res->err == SA_CLIENT_CANCELLED)
		return;
	p->req = 0;
	if (p->ah) {
		fab_ah_destroy(p->ah);
		p->ah = NULL;
	}
	if (sa_result_ok(res) && res->nrec) {
		memset(&aa, 0, sizeof(aa));
		aa.dlid = res->rec.path[0].dlid;
		aa.sl = res->rec.path[0].sl;
		aa.static_rate = res->rec.path[0].rate;
		p->ah = fab_ah_create(l->dev, &aa);
	}
	p->updated = now_s();
	p->st = p->ah ? PATH_OK : PATH_FAILED;
	if (!p->ah)
		l->st.path_failures++;
	for (i = 0; i < NEIGH_HASH; i++) {
		for (n = l->neigh[i]; n; n = next) {
			next = n->next;
			if (n->path != p)
				continue;
			if (p->ah) {
				neigh_flush(l, n);
			} else {
				l->st.drop[IPOIB_DROP_PATH_FAILED] +=
					fq_drain(&n->q);
				n->path = NULL;
			}
		}
	}
}

/* The neighbour learned its link address (ARP, NA or NS with option). */
static void neigh_set_hw(struct ipoib_link *l, struct neigh *n,
			 const struct ipoib_addr *hw)
{
	if (n->have_hw && !memcmp(n->hw.gid.raw, hw->gid.raw, 16) &&
	    n->hw.qpn == hw->qpn && n->path) {
		n->confirmed = now_s();
		return;
	}
	n->hw = *hw;
	n->have_hw = 1;
	n->confirmed = now_s();
	n->probes = 0;
	n->path = path_get(l, &hw->gid);
	if (n->path && n->path->st == PATH_OK)
		neigh_flush(l, n);
}

static void solicit(struct ipoib_link *l, struct neigh *n);

static struct neigh *neigh_new(struct ipoib_link *l, const struct inet_addr *a)
{
	struct neigh *n, *victim = NULL;
	unsigned int i;

	if (l->nneigh >= l->cfg.neigh_max) {
		/* the oldest resolved entry makes room; if every entry is
		 * still resolving, refuse (fail safe: nothing else is hurt) */
		for (i = 0; i < NEIGH_HASH; i++)
			for (n = l->neigh[i]; n; n = n->next)
				if (n->have_hw &&
				    (!victim || n->confirmed < victim->confirmed))
					victim = n;
		if (!victim)
			return NULL;
		neigh_free(l, victim);
	}
	n = calloc(1, sizeof(*n));
	if (!n)
		return NULL;
	n->ip = *a;
	n->created = n->confirmed = now_s();
	n->next = l->neigh[ip_hash(a)];
	l->neigh[ip_hash(a)] = n;
	l->nneigh++;
	return n;
}

/* ---- ARP / ND out ---------------------------------------------------------- */

static const struct inet_addr *local_addr(struct ipoib_link *l, int family)
{
	unsigned int i;

	for (i = 0; i < l->naddrs; i++)
		if (l->addrs[i].addr.family == family)
			return &l->addrs[i].addr;
	return NULL;
}

static int is_local(struct ipoib_link *l, const struct inet_addr *a)
{
	unsigned int i;

	for (i = 0; i < l->naddrs; i++)
		if (inet_addr_equal(&l->addrs[i].addr, a))
			return 1;
	return 0;
}

/* The directed broadcast of one of our IPv4 prefixes (up to /30). */
static int is_subnet_bcast(struct ipoib_link *l, const struct in_addr *dst)
{
	unsigned int i;
	uint32_t a, mask;

	for (i = 0; i < l->naddrs; i++) {
		if (l->addrs[i].addr.family != AF_INET || !l->addrs[i].plen ||
		    l->addrs[i].plen > 30)
			continue;
		mask = ~0u << (32 - l->addrs[i].plen);
		a = ntohl(l->addrs[i].addr.v4.s_addr);
		if (ntohl(dst->s_addr) == ((a & mask) | ~mask))
			return 1;
	}
	return 0;
}

static void mgid_of_ipv6(struct ipoib_link *l, const struct in6_addr *g,
			 union fab_gid *mgid)
{
	ipoib_mcast_mgid_ipv6(g, &l->bcast_mgid, mgid);
}

static void solicit(struct ipoib_link *l, struct neigh *n)
{
	struct ipoib_addr me;
	uint8_t buf[128];
	size_t len;

	ipoib_link_hwaddr(l, &me);
	n->probes++;
	n->next_probe = now_s() + 1;
	if (n->ip.family == AF_INET) {
		const struct inet_addr *src = local_addr(l, AF_INET);
		struct in_addr any = { 0 };

		len = ipoib_arp_build_request(&me, src ? &src->v4 : &any,
					      &n->ip.v4, buf, sizeof(buf));
		if (len) {
			l->st.arp_tx++;
			mc_send(l, &l->bcast_mgid, IPOIB_ETH_P_ARP, buf, len);
		}
	} else {
		const struct inet_addr *src = local_addr(l, AF_INET6);
		struct in6_addr sn;
		union fab_gid mgid;

		if (!src)
			return;
		ipoib_solicited_node(&n->ip.v6, &sn);
		len = ipoib_nd_build_ns(&src->v6, NULL, &n->ip.v6, &me, buf,
					sizeof(buf));
		if (len) {
			l->st.nd_tx++;
			mgid_of_ipv6(l, &sn, &mgid);
			mc_send(l, &mgid, IPOIB_ETH_P_IPV6, buf, len);
		}
	}
}

/* Queue a frame for a neighbour, sending it if the neighbour is ready. */
static void neigh_output(struct ipoib_link *l, const struct inet_addr *nh,
			 uint16_t ethertype, const uint8_t *pkt, size_t len)
{
	struct neigh *n = neigh_find(l, nh);
	struct frame *f;
	time_t t = now_s();

	if (n && n->have_hw && t - n->confirmed > (time_t)l->cfg.neigh_ttl_s) {
		/* stale: keep using it, ask again (unicast would need the
		 * path; a broadcast solicit is simpler and as correct) */
		n->confirmed = t;
		solicit(l, n);
	}
	if (!n) {
		n = neigh_new(l, nh);
		if (!n) {
			drop(l, IPOIB_DROP_NEIGH_TABLE_FULL);
			return;
		}
		solicit(l, n);
	}
	if (n->have_hw && n->path && n->path->st == PATH_OK) {
		send_frame(l, n->path->ah, n->hw.qpn, ethertype, pkt, len);
		return;
	}
	if (n->have_hw && (!n->path || n->path->st == PATH_FAILED))
		n->path = path_get(l, &n->hw.gid);
	if (n->q.n >= NEIGH_QUEUE_MAX || !(f = frame_new(ethertype, pkt, len))) {
		drop(l, IPOIB_DROP_NEIGH_QUEUE);
		return;
	}
	fq_push(&n->q, f);
}

/* ---- from the host ---------------------------------------------------------- */

static void to_host(struct ipoib_link *l, const uint8_t *pkt, size_t len)
{
	l->st.rx_packets++;
	l->st.rx_bytes += len;
	if (l->ops.rx)
		l->ops.rx(l->arg, pkt, len);
}

static void mc_remove(struct ipoib_link *l, struct mc *m);

/* The host listens to a group (or stops): a FullMember join or leave.
 * Groups the link joins for itself are not the host's to leave. */
static void mc_listen(struct ipoib_link *l, int family, const uint8_t *group,
		      int on)
{
	union fab_gid mgid;
	struct in_addr g4;
	struct in6_addr g6;
	struct mc *m;

	/* group points into a packet: copied out, it may sit anywhere */
	if (family == AF_INET) {
		memcpy(&g4, group, sizeof(g4));
		ipoib_mcast_mgid_ipv4(&g4, &l->bcast_mgid, &mgid);
	} else {
		memcpy(&g6, group, sizeof(g6));
		mgid_of_ipv6(l, &g6, &mgid);
	}
	if (on) {
		mc_get(l, &mgid, 1);
		return;
	}
	m = mc_find(l, &mgid);
	if (m && m->full && !m->own)
		mc_remove(l, m);
}

/*
 * IGMP (v1-v3) and MLD (v1, v2) messages the host's kernel sends say what
 * it listens to: reports join, IGMPv2 leave / MLD done and a v3 record
 * "include nothing" leave.  p is the IGMP or ICMPv6 message.
 */
static void snoop_membership(struct ipoib_link *l, int family,
			     const uint8_t *p, size_t len)
{
	/* per family: address length, v1/v2 report, leave, v3 report,
	 * offset of the group in a v1/v2 message and v3 record header */
	const int v4 = family == AF_INET;
	const size_t alen = v4 ? 4 : 16, grp = v4 ? 4 : 8, rh = 4;
	unsigned int nrec, i, nsrc;
	size_t off;
	uint8_t t;

	if (len < 8)
		return;
	t = p[0];
	if ((v4 && (t == 0x12 || t == 0x16)) || (!v4 && t == 131)) {
		if (len >= grp + alen)
			mc_listen(l, family, p + grp, 1);
		return;
	}
	if ((v4 && t == 0x17) || (!v4 && t == 132)) {
		if (len >= grp + alen)
			mc_listen(l, family, p + grp, 0);
		return;
	}
	if (!((v4 && t == 0x22) || (!v4 && t == 143)))
		return;
	nrec = be16_get(p + 6);
	off = 8;
	for (i = 0; i < nrec && off + rh + alen <= len; i++) {
		t = p[off];
		nsrc = be16_get(p + off + 2);
		/* EXCLUDE {} / TO_EXCLUDE {}: listens; INCLUDE {} /
		 * TO_INCLUDE {}: does not */
		if (!nsrc && (t == 2 || t == 4))
			mc_listen(l, family, p + off + rh, 1);
		else if (!nsrc && (t == 1 || t == 3))
			mc_listen(l, family, p + off + rh, 0);
		off += rh + alen + alen * nsrc + 4u * p[off + 1];
	}
}

/* Skip IPv6 extension headers: the upper-layer header's offset or 0. */
static size_t ipv6_upper(const uint8_t *pkt, size_t len, uint8_t *proto)
{
	size_t off = IPOIB_IPV6_HDR_LEN;
	uint8_t nh = pkt[6];

	while (nh == 0 || nh == 43 || nh == 60) {	/* HBH, routing, dst */
		if (off + 8 > len)
			return 0;
		nh = pkt[off];
		off += 8u + 8u * pkt[off + 1];
	}
	if (off > len)
		return 0;
	*proto = nh;
	return off;
}

/*
 * A packet above the link MTU: ICMP fragmentation-needed / packet-too-big
 * back to the host.  In Linux the host's own stack sends it; from here it
 * has to come from an address that is not the host's own (the kernel drops
 * ICMP "from itself" arriving on an interface), so it names the original
 * destination as its source, as a hop on the way would.  The kernel takes
 * the MTU from it either way (it only looks at the quoted header).
 */
static void too_big(struct ipoib_link *l, const uint8_t *pkt, size_t len)
{
	uint8_t out[IPOIB_ICMP6_MAX_LEN];
	size_t olen = 0;
	enum ipoib_wire_err e;

	drop(l, IPOIB_DROP_TOO_BIG);
	if ((pkt[0] >> 4) == 4) {
		struct in_addr src;

		memcpy(&src, pkt + 16, 4);
		e = ipoib_icmp4_frag_needed(pkt, len, &src,
					    (uint16_t)l->mtu, ++l->icmp_id,
					    out, sizeof(out), &olen);
	} else {
		struct in6_addr src;

		memcpy(&src, pkt + 24, 16);
		e = ipoib_icmp6_pkt_too_big(pkt, len, &src, l->mtu, out,
					    sizeof(out), &olen);
	}
	if (e == IPOIB_WIRE_OK) {
		l->st.icmp_too_big++;
		to_host(l, out, olen);
	}
}

static void xmit(struct ipoib_link *l, const uint8_t *pkt, size_t len,
		 const struct inet_addr *via, int bcast)
{
	struct inet_addr dst, nh;
	union fab_gid mgid;
	uint16_t et;

	if (!l->carrier) {
		drop(l, IPOIB_DROP_NO_CARRIER);
		return;
	}
	memset(&dst, 0, sizeof(dst));
	if (len >= 20 && (pkt[0] >> 4) == 4) {
		struct ipoib_ipv4_info ip;

		if (ipoib_ipv4_check(pkt, len, &ip) != IPOIB_WIRE_OK) {
			drop(l, IPOIB_DROP_BAD_PACKET);
			return;
		}
		len = ip.tot_len;
		if (len > l->mtu) {
			/* the kernel fragments for our MTU; what still comes
			 * too big had DF, or the MTU just shrank */
			too_big(l, pkt, len);
			return;
		}
		et = IPOIB_ETH_P_IP;
		dst.family = AF_INET;
		dst.v4 = ip.dst;
		if (ip.proto == 2 && !(ip.frag & 0x1fff))
			snoop_membership(l, AF_INET, pkt + ip.hdr_len,
					 len - ip.hdr_len);
		if (bcast) {
			mc_send(l, &l->bcast_mgid, et, pkt, len);
			return;
		}
		if ((ntohl(ip.dst.s_addr) >> 28) == 0xe) {
			ipoib_mcast_mgid_ipv4(&ip.dst, &l->bcast_mgid, &mgid);
			mc_send(l, &mgid, et, pkt, len);
			return;
		}
		if (ip.dst.s_addr == INADDR_BROADCAST ||
		    is_subnet_bcast(l, &ip.dst)) {
			mc_send(l, &l->bcast_mgid, et, pkt, len);
			return;
		}
	} else if (len >= IPOIB_IPV6_HDR_LEN && (pkt[0] >> 4) == 6) {
		struct ipoib_ipv6_info ip;
		size_t up;
		uint8_t proto;

		if (ipoib_ipv6_check(pkt, len, &ip) != IPOIB_WIRE_OK) {
			drop(l, IPOIB_DROP_BAD_PACKET);
			return;
		}
		len = IPOIB_IPV6_HDR_LEN + ip.payload_len;
		if (len > l->mtu) {
			too_big(l, pkt, len);
			return;
		}
		et = IPOIB_ETH_P_IPV6;
		dst.family = AF_INET6;
		dst.v6 = ip.dst;
		up = ipv6_upper(pkt, len, &proto);
		if (up && proto == 58)
			snoop_membership(l, AF_INET6, pkt + up, len - up);
		if (bcast) {
			mc_send(l, &l->bcast_mgid, et, pkt, len);
			return;
		}
		if (ip.dst.s6_addr[0] == 0xff) {
			mgid_of_ipv6(l, &ip.dst, &mgid);
			mc_send(l, &mgid, et, pkt, len);
			return;
		}
	} else {
		drop(l, IPOIB_DROP_BAD_PACKET);
		return;
	}
	/* subnet broadcast is the caller's route business: nexthop gives
	 * back the address; unicast from here */
	nh = dst;
	if (via)
		nh = *via;
	else if (l->ops.nexthop && l->ops.nexthop(l->arg, &dst, &nh) < 0) {
		drop(l, IPOIB_DROP_NO_ROUTE);
		return;
	}
	neigh_output(l, &nh, et, pkt, len);
}

void ipoib_link_xmit(struct ipoib_link *l, const uint8_t *pkt, size_t len)
{
	xmit(l, pkt, len, NULL, 0);
}

void ipoib_link_xmit_nh(struct ipoib_link *l, const uint8_t *pkt, size_t len,
			const struct inet_addr *nh)
{
	xmit(l, pkt, len, nh, 0);
}

void ipoib_link_xmit_bcast(struct ipoib_link *l, const uint8_t *pkt,
			   size_t len)
{
	xmit(l, pkt, len, NULL, 1);
}

int ipoib_link_neigh_hw(struct ipoib_link *l, const struct inet_addr *ip,
			struct ipoib_addr *hw)
{
	struct neigh *n = neigh_find(l, ip);

	if (!n || !n->have_hw)
		return -1;
	*hw = n->hw;
	return 0;
}

void ipoib_link_neigh_resolve(struct ipoib_link *l, const struct inet_addr *ip)
{
	struct neigh *n;

	if (!l->carrier || neigh_find(l, ip))
		return;
	n = neigh_new(l, ip);
	if (n)
		solicit(l, n);
	else
		drop(l, IPOIB_DROP_NEIGH_TABLE_FULL);
}

/* ---- from the fabric ----------------------------------------------------------- */

static void rx_arp(struct ipoib_link *l, const uint8_t *p, size_t len)
{
	struct ipoib_arp arp;
	struct inet_addr sip, tip;
	struct ipoib_addr me;
	struct neigh *n;
	uint8_t buf[IPOIB_ARP_LEN];
	size_t blen;
	int mine;

	if (ipoib_arp_parse(p, len, &arp) != IPOIB_WIRE_OK) {
		drop(l, IPOIB_DROP_RX_MALFORMED);
		return;
	}
	l->st.arp_rx++;
	memset(&sip, 0, sizeof(sip));
	memset(&tip, 0, sizeof(tip));
	sip.family = tip.family = AF_INET;
	sip.v4 = arp.spa;
	tip.v4 = arp.tpa;
	if (!arp.spa.s_addr) {
		/* a probe (RFC 5227, or a gateway resolving for others):
		 * Linux answers it for its own addresses; we answer on the
		 * broadcast group, which the prober listens to, instead of
		 * resolving a path to a sender we learn nothing else of */
		if (arp.op == IPOIB_ARPOP_REQUEST && is_local(l, &tip) &&
		    l->carrier) {
			ipoib_link_hwaddr(l, &me);
			blen = ipoib_arp_build_reply(&me, &arp.tpa, &arp.sha,
						     &arp.spa, buf,
						     sizeof(buf));
			if (blen) {
				l->st.arp_tx++;
				mc_send(l, &l->bcast_mgid, IPOIB_ETH_P_ARP,
					buf, blen);
			}
		}
		return;
	}
	n = neigh_find(l, &sip);
	/* ours to answer: one of our addresses, or one we proxy for */
	mine = is_local(l, &tip) ||
	       (arp.op == IPOIB_ARPOP_REQUEST && !inet_addr_equal(&sip, &tip) &&
		l->ops.proxy && l->ops.proxy(l->arg, &tip));
	/* as arp_process(): learn the sender if it asks for us, or update
	 * what we already know (gratuitous ARP included) */
	if (!n && mine && arp.op == IPOIB_ARPOP_REQUEST)
		n = neigh_new(l, &sip);
	if (n)
		neigh_set_hw(l, n, &arp.sha);
	if (arp.op == IPOIB_ARPOP_REQUEST && mine && !inet_addr_equal(&sip, &tip)) {
		ipoib_link_hwaddr(l, &me);
		blen = ipoib_arp_build_reply(&me, &arp.tpa, &arp.sha,
					     &arp.spa, buf, sizeof(buf));
		if (blen) {
			l->st.arp_tx++;
			neigh_output(l, &sip, IPOIB_ETH_P_ARP, buf, blen);
		}
	}
}

/* Returns 1 if the ND message was ours to take (not for the host). */
static int rx_nd(struct ipoib_link *l, const uint8_t *p, size_t len)
{
	struct ipoib_nd nd;
	struct inet_addr src, tgt;
	struct ipoib_addr me;
	struct neigh *n;
	enum ipoib_wire_err e;
	uint8_t buf[128], flags;
	size_t blen;

	e = ipoib_nd_parse(p, len, &nd);
	if (e == IPOIB_WIRE_NOT_ND)
		return 0;
	if (e != IPOIB_WIRE_OK) {
		drop(l, IPOIB_DROP_RX_MALFORMED);
		return 1;
	}
	if (nd.type != IPOIB_ND_NS && nd.type != IPOIB_ND_NA)
		return 0;	/* RS/RA/Redirect: the host's business */
	l->st.nd_rx++;
	memset(&src, 0, sizeof(src));
	memset(&tgt, 0, sizeof(tgt));
	src.family = tgt.family = AF_INET6;
	src.v6 = nd.ip.src;
	tgt.v6 = nd.target;
	if (nd.type == IPOIB_ND_NA) {
		n = neigh_find(l, &tgt);
		if (n && nd.has_tlla)
			neigh_set_hw(l, n, &nd.tlla);
		return 1;
	}
	/* NS: for one of our addresses, or one we proxy for (RFC 4861
	 * 7.2.8: a proxy's answers do not override) */
	if (IN6_IS_ADDR_UNSPECIFIED(&nd.ip.src))
		return 1;	/* DAD: we do not defend, nor proxies */
	if (is_local(l, &tgt))
		flags = IPOIB_NA_FLAG_SOLICITED | IPOIB_NA_FLAG_OVERRIDE;
	else if (l->ops.proxy && l->ops.proxy(l->arg, &tgt))
		flags = IPOIB_NA_FLAG_SOLICITED;
	else
		return 1;
	n = neigh_find(l, &src);
	if (!n)
		n = neigh_new(l, &src);
	if (n && nd.has_slla)
		neigh_set_hw(l, n, &nd.slla);
	ipoib_link_hwaddr(l, &me);
	blen = ipoib_nd_build_na(&nd.target, &nd.ip.src, &nd.target, flags,
				 &me, buf, sizeof(buf));
	if (blen) {
		l->st.nd_tx++;
		neigh_output(l, &src, IPOIB_ETH_P_IPV6, buf, blen);
	}
	return 1;
}

static void rx_cb(evutil_socket_t fd, short what, void *arg)
{
	struct ipoib_link *l = arg;
	struct fab_recv rc[RX_BATCH];
	int i, n = 0, budget = 8;

	(void)fd;
	(void)what;
	while (budget-- > 0) {
		for (i = 0; i < RX_BATCH; i++) {
			rc[i].buf = l->rxbuf[i];
			rc[i].buf_len = sizeof(l->rxbuf[i]);
		}
		n = fab_qp_recv(l->qp, rc, RX_BATCH);
		if (n <= 0)
			break;
		for (i = 0; i < n; i++) {
			const uint8_t *p = rc[i].buf + FAB_GRH_LEN;
			size_t len = rc[i].byte_len - FAB_GRH_LEN;
			uint16_t et;

			if (rc[i].truncated || rc[i].byte_len < FAB_GRH_LEN) {
				drop(l, IPOIB_DROP_RX_MALFORMED);
				continue;
			}
			/* our own multicast, looped back by the fabric */
			if (rc[i].slid == l->pa.lid &&
			    rc[i].src_qp == fab_qp_num(l->qp)) {
				drop(l, IPOIB_DROP_RX_OWN);
				continue;
			}
			if (ipoib_hdr_parse(p, len, &et) != IPOIB_WIRE_OK) {
				drop(l, IPOIB_DROP_RX_MALFORMED);
				continue;
			}
			p += IPOIB_HDR_LEN;
			len -= IPOIB_HDR_LEN;
			if (et == IPOIB_ETH_P_ARP) {
				rx_arp(l, p, len);
			} else if (et == IPOIB_ETH_P_IP) {
				struct ipoib_ipv4_info ip;

				if (ipoib_ipv4_check(p, len, &ip) !=
				    IPOIB_WIRE_OK) {
					drop(l, IPOIB_DROP_RX_MALFORMED);
					continue;
				}
				to_host(l, p, ip.tot_len);
			} else if (et == IPOIB_ETH_P_IPV6) {
				struct ipoib_ipv6_info ip;

				if (ipoib_ipv6_check(p, len, &ip) !=
				    IPOIB_WIRE_OK) {
					drop(l, IPOIB_DROP_RX_MALFORMED);
					continue;
				}
				len = IPOIB_IPV6_HDR_LEN + ip.payload_len;
				if (!rx_nd(l, p, len))
					to_host(l, p, len);
			} else {
				drop(l, IPOIB_DROP_RX_MALFORMED);
			}
		}
		if (n < RX_BATCH)
			break;
	}
	/* budget used up: the provider may hold more than its descriptor
	 * shows (fab_qp_recv), so come back on the next loop pass */
	if (budget < 0 && n == RX_BATCH)
		event_active(l->rx_ev, EV_READ, 0);
	if (l->ops.rx_done)
		l->ops.rx_done(l->arg);
}

/* ---- the broadcast group, carrier, timers -------------------------------------- */

static void bcast_join(struct ipoib_link *l);

static void set_carrier(struct ipoib_link *l, int up)
{
	if (l->carrier == up)
		return;
	l->carrier = up;
	if (l->ops.carrier)
		l->ops.carrier(l->arg, up, l->mtu);
}

static void join_listen_groups(struct ipoib_link *l)
{
	static const uint8_t all_nodes[16] = { 0xff, 0x02, [15] = 1 };
	struct in_addr all_hosts = { htonl(0xe0000001) };
	union fab_gid mgid;
	struct in6_addr sn, an;
	unsigned int i;

	ipoib_mcast_mgid_ipv4(&all_hosts, &l->bcast_mgid, &mgid);
	mc_own(l, &mgid);
	memcpy(&an, all_nodes, 16);
	mgid_of_ipv6(l, &an, &mgid);
	mc_own(l, &mgid);
	if (l->cfg.report_groups) {
		static const uint8_t mld2[16] = { 0xff, 0x02, [15] = 0x16 };
		struct in_addr igmp3 = { htonl(0xe0000016) };

		ipoib_mcast_mgid_ipv4(&igmp3, &l->bcast_mgid, &mgid);
		mc_own(l, &mgid);
		memcpy(&an, mld2, 16);
		mgid_of_ipv6(l, &an, &mgid);
		mc_own(l, &mgid);
	}
	for (i = 0; i < l->naddrs; i++) {
		if (l->addrs[i].addr.family != AF_INET6)
			continue;
		ipoib_solicited_node(&l->addrs[i].addr.v6, &sn);
		mgid_of_ipv6(l, &sn, &mgid);
		mc_own(l, &mgid);
	}
}

static void announce(struct ipoib_link *l, const struct inet_addr *a)
{
	struct ipoib_addr me;
	uint8_t buf[IPOIB_ARP_LEN];
	size_t len;

	if (a->family != AF_INET || !l->carrier)
		return;
	ipoib_link_hwaddr(l, &me);
	len = ipoib_arp_build_announce(&me, &a->v4, buf, sizeof(buf));
	if (len) {
		l->st.arp_tx++;
		mc_send(l, &l->bcast_mgid, IPOIB_ETH_P_ARP, buf, len);
	}
}

void ipoib_link_announce(struct ipoib_link *l, const struct inet_addr *a)
{
	announce(l, a);
}

static void bcast_joined(void *arg, const struct sa_result *res)
{
	struct mc *m = arg;
	struct ipoib_link *l = m->l;
	struct fab_qp_init qi;
	struct fab_ah_attr aa;
	unsigned int i;

	if (res->err == SA_CLIENT_CANCELLED)
		return;
	m->req = 0;
	if (!sa_result_ok(res) || !res->nrec) {
		m->st = MC_IDLE;
		mc_failed(l, m);
		return;
	}
	l->bcast = res->rec.mcm[0];
	l->mtu = (unsigned int)fab_mtu_to_bytes(l->bcast.mtu) - IPOIB_HDR_LEN;
	if (l->cfg.admin_mtu && l->cfg.admin_mtu < l->mtu)
		l->mtu = l->cfg.admin_mtu;
	if (!l->qp) {
		memset(&qi, 0, sizeof(qi));
		qi.type = FAB_QPT_UD;
		qi.qkey = l->bcast.qkey;
		qi.pkey_index = (uint16_t)l->pkey_index;
		l->qp = fab_qp_create(l->dev, &qi);
		if (!l->qp) {
			mc_failed(l, m);
			return;
		}
		l->rx_ev = event_new(l->base, fab_qp_fd(l->qp),
				     EV_READ | EV_PERSIST, rx_cb, l);
		event_add(l->rx_ev, NULL);
	}
	memset(&aa, 0, sizeof(aa));
	aa.dlid = l->bcast.mlid;
	aa.sl = l->bcast.sl;
	aa.is_global = 1;
	aa.dgid = l->bcast_mgid;
	if (m->ah)
		fab_ah_destroy(m->ah);
	m->ah = fab_ah_create(l->dev, &aa);
	m->mlid = l->bcast.mlid;
	m->js = l->bcast.join_state;
	if (!m->attached &&
	    fab_attach_mcast(l->qp, &m->mgid, m->mlid) == 0)
		m->attached = 1;
	m->st = MC_JOINED;
	m->backoff_s = 0;
	l->st.joins++;
	set_carrier(l, 1);
	/* the other groups, and anything that waited for the carrier */
	for (m = l->mcs; m; m = m->next)
		if (m->st == MC_IDLE)
			mc_join(l, m);
	join_listen_groups(l);
	for (i = 0; i < l->naddrs; i++)
		announce(l, &l->addrs[i].addr);
}

static void bcast_join(struct ipoib_link *l)
{
	struct sa_mcmember r;
	struct mc *m = mc_find(l, &l->bcast_mgid);

	if (!m) {
		m = calloc(1, sizeof(*m));
		if (!m)
			return;
		m->l = l;
		m->mgid = l->bcast_mgid;
		m->full = 1;
		m->own = 1;
		m->next = l->mcs;
		l->mcs = m;
	}
	if (m->st == MC_JOINING)
		return;
	if (fab_query_port(l->dev, &l->pa) < 0) {
		mc_failed(l, m);	/* try again after a backoff */
		return;
	}
	memset(&r, 0, sizeof(r));
	r.mgid = l->bcast_mgid;
	r.port_gid = l->pa.gid;
	r.join_state = SA_JOIN_FULL;
	m->st = MC_JOINING;
	m->req = sa_mcm_join(l->sa, &r, SA_MCM_JOIN_MASK, bcast_joined, m);
	if (!m->req) {
		m->st = MC_IDLE;
		mc_failed(l, m);
	}
}

static void tick_cb(evutil_socket_t fd, short what, void *arg)
{
	struct ipoib_link *l = arg;
	time_t t = now_s();
	struct neigh *n, *next;
	struct mc *m;
	unsigned int i;

	(void)fd;
	(void)what;
	for (m = l->mcs; m; m = m->next) {
		if (m->st != MC_WAIT || t < m->retry_at)
			continue;
		m->st = MC_IDLE;
		if (!memcmp(m->mgid.raw, l->bcast_mgid.raw, 16))
			bcast_join(l);
		else
			mc_join(l, m);
	}
	for (i = 0; i < NEIGH_HASH; i++) {
		for (n = l->neigh[i]; n; n = next) {
			next = n->next;
			if (n->have_hw || t < n->next_probe)
				continue;
			if (n->probes >= ARP_RETRIES) {
				l->st.drop[IPOIB_DROP_NEIGH_FAILED] +=
					fq_drain(&n->q);
				neigh_free(l, n);
				continue;
			}
			if (l->carrier)
				solicit(l, n);
		}
	}
}

/* ---- public ---------------------------------------------------------------------- */

struct ipoib_link *ipoib_link_new(struct event_base *base,
				  struct fab_dev *dev,
				  const struct ipoib_link_cfg *cfg,
				  const struct ipoib_link_ops *ops, void *arg)
{
	struct ipoib_link *l = calloc(1, sizeof(*l));
	struct timeval one = { 1, 0 };

	if (!l)
		return NULL;
	l->base = base;
	l->dev = dev;
	l->cfg = *cfg;
	if (!l->cfg.neigh_max)
		l->cfg.neigh_max = 1024;
	if (!l->cfg.neigh_ttl_s)
		l->cfg.neigh_ttl_s = 60;
	if (ops)
		l->ops = *ops;
	l->arg = arg;
	l->pkey = cfg->pkey | 0x8000;
	if (fab_query_port(dev, &l->pa) < 0)
		goto fail;
	l->pkey_index = fab_pkey_find(&l->pa, l->pkey);
	if (l->pkey_index < 0) {
		fab_set_error("P_Key 0x%04x is not in the port's table",
			      l->pkey);
		goto fail;
	}
	ipoib_bcast_mgid(l->pkey, IPOIB_SCOPE_LINK, &l->bcast_mgid);
	l->sa = sa_client_new(base, dev, NULL);
	if (!l->sa)
		goto fail;
	l->tick_ev = event_new(base, -1, EV_PERSIST, tick_cb, l);
	if (!l->tick_ev)
		goto fail;
	event_add(l->tick_ev, &one);
	return l;
fail:
	ipoib_link_free(l, 0);
	return NULL;
}

int ipoib_link_start(struct ipoib_link *l)
{
	bcast_join(l);
	return 0;
}

int ipoib_link_add_addr(struct ipoib_link *l, const struct inet_prefix *p)
{
	const struct inet_addr *a = &p->addr;
	struct in6_addr sn;
	union fab_gid mgid;

	if (l->naddrs == sizeof(l->addrs) / sizeof(l->addrs[0]))
		return -1;
	l->addrs[l->naddrs++] = *p;
	if (l->carrier) {
		if (a->family == AF_INET6) {
			ipoib_solicited_node(&a->v6, &sn);
			mgid_of_ipv6(l, &sn, &mgid);
			mc_own(l, &mgid);
		}
		announce(l, a);
	}
	return 0;
}

static void flush_paths(struct ipoib_link *l)
{
	struct path *p;
	struct neigh *n;
	unsigned int i;

	for (p = l->paths; p; p = p->next) {
		if (p->req)
			sa_cancel(l->sa, p->req);
		p->req = 0;
		if (p->ah)
			fab_ah_destroy(p->ah);
		p->ah = NULL;
		p->st = PATH_NONE;
	}
	/* neighbours keep their link address and ask for a path again on
	 * their next packet */
	for (i = 0; i < NEIGH_HASH; i++)
		for (n = l->neigh[i]; n; n = n->next)
			n->path = NULL;
}

static void restart(struct ipoib_link *l, int keep_carrier)
{
	struct mc *m;

	l->st.rejoins++;
	flush_paths(l);
	for (m = l->mcs; m; m = m->next) {
		if (m->req)
			sa_cancel(l->sa, m->req);
		m->req = 0;
		m->st = MC_IDLE;
		m->backoff_s = 0;
	}
	if (!keep_carrier)
		set_carrier(l, 0);
	sa_client_refresh(l->sa);
	bcast_join(l);
}

void ipoib_link_event(struct ipoib_link *l, enum fab_event_type type)
{
	switch (type) {
	case FAB_EV_CLIENT_REREGISTER:
	case FAB_EV_GID_CHANGE:
		/* the SM forgot us: rejoin everything, re-resolve paths;
		 * the queue pair and its attachments stay */
		restart(l, 1);
		break;
	case FAB_EV_PORT_ERR:
		set_carrier(l, 0);
		flush_paths(l);
		break;
	case FAB_EV_PORT_ACTIVE:
	case FAB_EV_LID_CHANGE:
	case FAB_EV_SM_CHANGE:
		restart(l, 0);
		break;
	default:
		break;
	}
}

void ipoib_link_free(struct ipoib_link *l, unsigned int timeout_ms)
{
	struct path *p;
	struct mc *m;
	unsigned int i;

	if (!l)
		return;
	/* closing: while the leaves are waited for below, the event loop
	 * runs; nothing may make new groups, neighbours or frames then (a
	 * gateway's tap still delivers) */
	l->carrier = 0;
	if (l->rx_ev)
		event_del(l->rx_ev);
	if (l->tick_ev)
		event_del(l->tick_ev);
	while ((m = l->mcs)) {
		l->mcs = m->next;
		mc_free(l, m, l->sa != NULL);
	}
	/* let the leaves go out and be answered */
	if (l->sa && timeout_ms) {
		struct timeval tv = { timeout_ms / 1000,
				      (long)(timeout_ms % 1000) * 1000 };
		unsigned int spins = 0;

		event_base_loopexit(l->base, &tv);
		while (sa_pending(l->sa) && spins++ < 1000 &&
		       event_base_loop(l->base, EVLOOP_ONCE) == 0 &&
		       !event_base_got_exit(l->base))
			;
	}
	for (i = 0; i < NEIGH_HASH; i++)
		while (l->neigh[i])
			neigh_free(l, l->neigh[i]);
	while ((p = l->paths)) {
		l->paths = p->next;
		if (p->ah)
			fab_ah_destroy(p->ah);
		free(p);
	}
	if (l->sa)
		sa_client_free(l->sa);
	if (l->rx_ev)
		event_free(l->rx_ev);
	if (l->tick_ev)
		event_free(l->tick_ev);
	if (l->qp)
		fab_qp_destroy(l->qp);
	free(l);
}

const struct ipoib_link_stats *ipoib_link_stats(const struct ipoib_link *l)
{
	return &l->st;
}

void ipoib_link_hwaddr(const struct ipoib_link *l, struct ipoib_addr *a)
{
	memset(a, 0, sizeof(*a));
	a->qpn = l->qp ? fab_qp_num(l->qp) : 0;
	a->gid = l->pa.gid;
}

unsigned int ipoib_link_mtu(const struct ipoib_link *l)
{
	return l->mtu;
}

int ipoib_link_carrier(const struct ipoib_link *l)
{
	return l->carrier;
}

size_t ipoib_link_report(const struct ipoib_link *l, const char *what,
			 char *buf, size_t cap)
{
	size_t off = 0;
	int n;
	unsigned int i;
	char ip[INET6_ADDRSTRLEN], hw[IPOIB_ADDR_STRLEN], g[64];
	const struct neigh *ne;
	const struct mc *m;

#define APPEND(...) do { \
	n = snprintf(buf + off, off < cap ? cap - off : 0, __VA_ARGS__); \
	if (n > 0) \
		off += (size_t)n; \
	} while (0)
	if (!cap)
		return 0;
	buf[0] = '\0';
	if (!strcmp(what, "neighbors")) {
		for (i = 0; i < NEIGH_HASH; i++) {
			for (ne = l->neigh[i]; ne; ne = ne->next) {
				inet_ntop(ne->ip.family, ne->ip.raw, ip,
					  sizeof(ip));
				if (ne->have_hw)
					ipoib_addr_ntop(&ne->hw, hw,
							sizeof(hw));
				else
					snprintf(hw, sizeof(hw), "-");
				APPEND("%s %s %s queued=%u\n", ip, hw,
				       !ne->have_hw ? "INCOMPLETE" :
				       ne->path && ne->path->st == PATH_OK ?
				       "REACHABLE" : "RESOLVING", ne->q.n);
			}
		}
	} else if (!strcmp(what, "groups")) {
		for (m = l->mcs; m; m = m->next) {
			fab_gid_to_str(&m->mgid, g, sizeof(g));
			APPEND("%s %s mlid=0x%04x %s\n", g,
			       m->full ? "full" : "sendonly", m->mlid,
			       m->st == MC_JOINED ? "joined" :
			       m->st == MC_JOINING ? "joining" :
			       m->st == MC_WAIT ? "backoff" : "idle");
		}
	} else if (!strcmp(what, "stats")) {
		struct counter_buf cb = { buf, 0, cap };
		struct counter_out o = { counter_buf_vprintf, &cb };

		APPEND("carrier %d\nmtu %u\n", l->carrier, l->mtu);
		cb.len = off < cap ? off : cap - 1;
		counters_text(&o, ipoib_link_counters, &l->st, "", 0);
		off = cb.len;
	}
#undef APPEND
	return off < cap ? off : cap - 1;
}

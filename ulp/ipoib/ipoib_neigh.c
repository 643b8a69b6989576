// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Neighbours and paths of the IPoIB link: IP -> 20-byte link address (ARP,
 * IPv6 ND) -> PathRecord -> address handle, with a few packets waiting per
 * neighbour while it resolves; answers to ARP requests and Neighbour
 * Solicitations for our (and proxied) addresses; re-resolution of stale
 * entries.
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "fabric/sa_client.h"
#include "inet/nd.h"
#include "ulp/ipoib/ipoib_priv.h"

static int same_endpoint(const struct ipoib_addr *a, const struct ipoib_addr *b)
{
	return a->qpn == b->qpn && !memcmp(a->gid.raw, b->gid.raw, 16);
}

static unsigned int ip_hash(const struct inet_addr *a)
{
	return inet_addr_hash(a) % NEIGH_HASH;
}

static struct neigh *neigh_find(struct ipoib_link *l, const struct inet_addr *a)
{
	struct neigh *n;

	for (n = l->neigh[ip_hash(a)]; n; n = n->next)
		if (inet_addr_equal(&n->ip, a))
			return n;
	return NULL;
}

static void neigh_set_path(struct ipoib_link *l, struct neigh *n,
			   struct path *p);

static void ipoib_neigh_free(struct ipoib_link *l, struct neigh *n)
{
	struct neigh **pp;

	for (pp = &l->neigh[ip_hash(&n->ip)]; *pp; pp = &(*pp)->next) {
		if (*pp == n) {
			*pp = n->next;
			break;
		}
	}
	fq_drain(&n->q);
	neigh_set_path(l, n, NULL);
	l->nneigh--;
	free(n);
}

/*
 * A frame (ethertype 0: data holds its header) to a resolved neighbour:
 * over its connected-mode connection when it takes them, else as a
 * datagram, which must fit the datagram MTU (in connected mode the link's
 * is larger): ICMP too big otherwise.
 */
static void neigh_send(struct ipoib_link *l, struct neigh *n,
		       uint16_t ethertype, const uint8_t *data, size_t len)
{
	size_t hdr = ethertype ? 0 : IPOIB_HDR_LEN;

	if (ipoib_cm_send(l, &n->hw, ethertype, data, len) == 0)
		return;
	if (len - hdr > l->ud_mtu) {
		ipoib_link_too_big(l, data + hdr, len - hdr, l->ud_mtu);
		return;
	}
	ipoib_link_send(l, n->path->ah, n->hw.qpn, ethertype, data, len);
}

/* Flush what waits for a neighbour whose address handle is ready. */
static void neigh_flush(struct ipoib_link *l, struct neigh *n)
{
	struct frame *f;

	while ((f = fq_pop(&n->q))) {
		neigh_send(l, n, 0, f->data, f->len);
		free(f);
	}
}

static void path_done(void *arg, const struct sa_result *res);

/* A path lives as long as a neighbour uses it, so that the list stays as
 * short as the neighbour table (neigh_max) whatever GIDs peers claim. */
static void path_free(struct ipoib_link *l, struct path *p)
{
	struct path **pp;

	for (pp = &l->paths; *pp; pp = &(*pp)->next) {
		if (*pp == p) {
			*pp = p->next;
			break;
		}
	}
	if (p->req)
		sa_cancel(l->sa, p->req);
	if (p->ah)
		fab_ah_destroy(p->ah);
	free(p);
}

static void neigh_set_path(struct ipoib_link *l, struct neigh *n,
			   struct path *p)
{
	struct path *old = n->path;

	if (old == p)
		return;
	n->path = p;
	if (p)
		p->refs++;
	if (old && !--old->refs)
		path_free(l, old);
}

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
	struct ipoib_link *l;
	struct fab_ah_attr aa;
	unsigned int i;
	struct neigh *n, *next;

	if (res->err == SA_CLIENT_CANCELLED)
		return;
	l = p->l;
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
		p->ah = fab_ah_create(l->dev, &aa, NULL, 0);
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
				n->path = NULL;	/* p freed below, once */
				p->refs--;
			}
		}
	}
	if (!p->refs)
		path_free(l, p);
}

static int same_hw(const struct ipoib_addr *a, const struct ipoib_addr *b)
{
	return same_endpoint(a, b) && a->flags == b->flags;
}

/* The neighbour learned its link address (ARP, NA or NS with option). */
static void neigh_set_hw(struct ipoib_link *l, struct neigh *n,
			 const struct ipoib_addr *hw)
{
	/* all 20 bytes, flags included, as Linux compares them: a peer
	 * that switched to connected mode (or back) is seen at once */
	n->nud_at = 0;
	if (n->have_hw && same_hw(&n->hw, hw) && n->path) {
		n->confirmed = now_s();
		return;
	}
	n->hw = *hw;
	n->have_hw = 1;
	n->confirmed = now_s();
	n->probes = 0;
	neigh_set_path(l, n, path_get(l, &hw->gid));
	if (n->path && n->path->st == PATH_OK)
		neigh_flush(l, n);
}

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
		ipoib_neigh_free(l, victim);
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

static void neigh_solicit(struct ipoib_link *l, struct neigh *n)
{
	struct ipoib_addr me;
	uint8_t buf[128];
	size_t len;

	ipoib_link_hwaddr(l, &me);
	n->probes++;
	n->next_probe = now_s() + 1;
	if (n->ip.family == AF_INET) {
		const struct inet_addr *src = ipoib_link_local_addr(l, AF_INET);
		struct in_addr any = { 0 };

		len = ipoib_arp_build_request(&me, src ? &src->v4 : &any,
					      &n->ip.v4, buf, sizeof(buf));
		if (len) {
			l->st.arp_tx++;
			ipoib_mcast_send(l, &l->bcast_mgid, IPOIB_ETH_P_ARP,
					 buf, len);
		}
	} else {
		const struct inet_addr *src =
			ipoib_link_local_addr(l, AF_INET6);
		struct in6_addr sn;
		union fab_gid mgid;

		if (!src)
			return;
		inet_solicited_node(&n->ip.v6, &sn);
		len = ipoib_nd_build_ns(&src->v6, NULL, &n->ip.v6, &me, buf,
					sizeof(buf));
		if (len) {
			l->st.nd_tx++;
			ipoib_mcast_mgid6(l, &sn, &mgid);
			ipoib_mcast_send(l, &mgid, IPOIB_ETH_P_IPV6, buf, len);
		}
	}
}

/* Queue a frame for a neighbour, sending it if the neighbour is ready. */
void ipoib_neigh_output(struct ipoib_link *l, const struct inet_addr *nh,
			uint16_t ethertype, const uint8_t *pkt, size_t len)
{
	struct neigh *n = neigh_find(l, nh);
	struct frame *f;
	time_t t = now_s();

	if (n && n->have_hw && t - n->confirmed > (time_t)l->cfg.neigh_ttl_s) {
		/* stale: keep using it, ask again (unicast would need the
		 * path; a broadcast solicit is simpler and as correct) */
		n->confirmed = t;
		neigh_solicit(l, n);
	}
	if (!n) {
		n = neigh_new(l, nh);
		if (!n) {
			drop(l, IPOIB_DROP_NEIGH_TABLE_FULL);
			return;
		}
		neigh_solicit(l, n);
	}
	if (n->have_hw && n->path && n->path->st == PATH_OK) {
		neigh_send(l, n, ethertype, pkt, len);
		return;
	}
	if (n->have_hw && (!n->path || n->path->st == PATH_FAILED))
		neigh_set_path(l, n, path_get(l, &n->hw.gid));
	if (n->q.n >= NEIGH_QUEUE_MAX || !(f = frame_new(ethertype, pkt, len))) {
		drop(l, IPOIB_DROP_NEIGH_QUEUE);
		return;
	}
	fq_push(&n->q, f);
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
		neigh_solicit(l, n);
	else
		drop(l, IPOIB_DROP_NEIGH_TABLE_FULL);
}

void ipoib_neigh_rx_arp(struct ipoib_link *l, const uint8_t *p, size_t len)
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
	ipoib_link_hwaddr(l, &me);
	if (arp.spa.s_addr && ipoib_link_is_local(l, &sip) &&
	    !same_endpoint(&arp.sha, &me) && l->ops.conflict)
		l->ops.conflict(l->arg, &sip, &arp.sha);	/* RFC 5227 */
	if (!arp.spa.s_addr) {
		/* a probe (RFC 5227, or a gateway resolving for others):
		 * Linux answers it for its own addresses; we answer on the
		 * broadcast group, which the prober listens to, instead of
		 * resolving a path to a sender we learn nothing else of.
		 * A proxy defends the addresses it answers for, so that a
		 * host probing for one of them learns it is taken. */
		if (arp.op == IPOIB_ARPOP_REQUEST && l->carrier &&
		    (ipoib_link_is_local(l, &tip) ||
		     (l->ops.proxy && l->ops.proxy(l->arg, &tip)))) {
			ipoib_link_hwaddr(l, &me);
			blen = ipoib_arp_build_reply(&me, &arp.tpa, &arp.sha,
						     &arp.spa, buf,
						     sizeof(buf));
			if (blen) {
				l->st.arp_tx++;
				ipoib_mcast_send(l, &l->bcast_mgid,
						 IPOIB_ETH_P_ARP, buf, blen);
			}
		}
		return;
	}
	n = neigh_find(l, &sip);
	/* ours to answer: one of our addresses, or one we proxy for */
	mine = ipoib_link_is_local(l, &tip) ||
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
			ipoib_neigh_output(l, &sip, IPOIB_ETH_P_ARP, buf, blen);
		}
	}
}

/*
 * An advertisement's link address for a neighbour, as RFC 4861 7.2.5 has
 * it (and Linux's ndisc_recv_na with neigh_update): a neighbour still
 * resolving takes it, the address it has is confirmed by it, and another
 * address replaces it only with the Override flag.  Without the flag (a
 * proxy's answer, or one of several) the address held is kept and checked
 * instead: if nothing confirms it within NUD_DELAY_S and NUD_PROBES
 * solicitations (ipoib_neigh_tick; what Linux's DELAY and PROBE states
 * take), it is given up and resolved again, and then any answer is
 * taken.  So the host itself wins over a proxy, and a neighbour that is
 * gone is replaced in seconds.
 */
static void neigh_na(struct ipoib_link *l, struct neigh *n,
		     const struct ipoib_addr *hw, uint8_t flags)
{
	if (!n->have_hw || (flags & INET_NA_FLAG_OVERRIDE) ||
	    same_hw(&n->hw, hw)) {
		neigh_set_hw(l, n, hw);
		return;
	}
	if (!n->nud_at) {
		n->nud_at = now_s() + NUD_DELAY_S;
		n->nud_probes = 0;
	}
}

/* A check of a neighbour's link address is due (neigh_na): ask again,
 * or, all asked, give the address up and resolve it anew. */
static void neigh_nud_step(struct ipoib_link *l, struct neigh *n, time_t t)
{
	if (n->nud_probes < NUD_PROBES) {
		n->nud_probes++;
		n->nud_at = t + 1;
		if (l->carrier)
			neigh_solicit(l, n);
		return;
	}
	l->st.neigh_unreachable++;
	n->nud_at = 0;
	n->have_hw = 0;
	n->probes = 0;
	neigh_set_path(l, n, NULL);
	if (l->carrier)
		neigh_solicit(l, n);
	else
		n->next_probe = t;
}

/* Returns 1 if the ND message was ours to take (not for the host). */
int ipoib_neigh_rx_nd(struct ipoib_link *l, const uint8_t *p, size_t len)
{
	struct ipoib_nd nd;
	struct inet_addr src, tgt;
	struct ipoib_addr me;
	struct neigh *n;
	enum inet_err e;
	uint8_t buf[128], flags;
	size_t blen;

	e = ipoib_nd_decode(p, len, &nd);
	if (e == INET_NOT_ND)
		return 0;
	if (e != INET_OK) {
		drop(l, IPOIB_DROP_RX_MALFORMED);
		return 1;
	}
	if (nd.type != INET_ND_NS && nd.type != INET_ND_NA)
		return 0;	/* RS/RA/Redirect: the host's business */
	l->st.nd_rx++;
	memset(&src, 0, sizeof(src));
	memset(&tgt, 0, sizeof(tgt));
	src.family = tgt.family = AF_INET6;
	src.v6 = nd.ip.src;
	tgt.v6 = nd.target;
	if (nd.type == INET_ND_NA) {
		n = neigh_find(l, &tgt);
		if (n && nd.has_tlla)
			neigh_na(l, n, &nd.tlla, nd.flags);
		if (nd.ip.dst.s6_addr[0] != 0xff)
			return 1;	/* an answer to our solicitation */
		/* to a group: perhaps an answer to duplicate address
		 * detection, the host's (or the bridge's) to see */
		if (ipoib_link_is_local(l, &tgt) && l->ops.conflict)
			l->ops.conflict(l->arg, &tgt, nd.has_tlla ? &nd.tlla :
					NULL);
		return 0;
	}
	/* NS: for one of our addresses, or one we proxy for (RFC 4861
	 * 7.2.8: a proxy's answers do not override) */
	if (IN6_IS_ADDR_UNSPECIFIED(&nd.ip.src)) {
		/* DAD (RFC 4862 5.4.3): the host defends its own addresses
		 * or gives up a tentative one, so it gets the probe; a
		 * proxy defends the addresses it answers for, with an
		 * advertisement to all nodes */
		if (!ipoib_link_is_local(l, &tgt) && l->ops.proxy &&
		    l->ops.proxy(l->arg, &tgt))
			ipoib_neigh_defend(l, &tgt);
		return 0;
	}
	/* not for one still tentative: nobody may learn it from us before
	 * DAD is done (RFC 4862 5.4.3), as the kernel drops such a one */
	if (ipoib_link_is_tentative(l, &tgt))
		return 1;
	if (ipoib_link_is_local(l, &tgt))
		flags = INET_NA_FLAG_SOLICITED | INET_NA_FLAG_OVERRIDE |
			(l->router ? INET_NA_FLAG_ROUTER : 0);
	else if (l->ops.proxy && l->ops.proxy(l->arg, &tgt))
		flags = INET_NA_FLAG_SOLICITED;
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
		ipoib_neigh_output(l, &src, IPOIB_ETH_P_IPV6, buf, blen);
	}
	return 1;
}

/* An unsolicited Neighbour Advertisement for target, from it, to all
 * nodes, with our address as its target link-layer option. */
static void na_all_nodes(struct ipoib_link *l, const struct in6_addr *target,
			 uint8_t flags)
{
	static const uint8_t all_nodes[16] = { 0xff, 0x02, [15] = 1 };
	struct ipoib_addr me;
	struct in6_addr an;
	union fab_gid mgid;
	uint8_t buf[IPOIB_ND_NS_NA_LEN];
	size_t len;

	if (!l->carrier)
		return;
	memcpy(&an, all_nodes, 16);
	ipoib_link_hwaddr(l, &me);
	len = ipoib_nd_build_na(target, &an, target, flags, &me, buf,
				sizeof(buf));
	if (len) {
		l->st.nd_tx++;
		ipoib_mcast_mgid6(l, &an, &mgid);
		ipoib_mcast_send(l, &mgid, IPOIB_ETH_P_IPV6, buf, len);
	}
}

/* The answer to a DAD probe for an address we proxy: without the
 * override flag (a proxy's, RFC 4861 7.2.8). */
void ipoib_neigh_defend(struct ipoib_link *l, const struct inet_addr *target)
{
	na_all_nodes(l, &target->v6, 0);
}

/* An ARP probe for one of our own addresses (RFC 5227 2.1.1: sender
 * 0.0.0.0), so that a host already holding it answers and the conflict
 * is seen (ops->conflict). */
void ipoib_neigh_probe_own(struct ipoib_link *l, const struct inet_addr *a)
{
	struct ipoib_addr me;
	struct in_addr any = { 0 };
	uint8_t buf[IPOIB_ARP_LEN];
	size_t len;

	if (a->family != AF_INET || !l->carrier)
		return;
	ipoib_link_hwaddr(l, &me);
	len = ipoib_arp_build_request(&me, &any, &a->v4, buf, sizeof(buf));
	if (len) {
		l->st.arp_tx++;
		ipoib_mcast_send(l, &l->bcast_mgid, IPOIB_ETH_P_ARP, buf, len);
	}
}

/*
 * Our address a is here: a gratuitous ARP to the broadcast group, or for
 * IPv6 an unsolicited Neighbour Advertisement to all nodes with the
 * override flag, as Linux sends with ndisc_notify once an address is
 * usable (RFC 4861 7.2.6): neighbours holding another link address for a
 * (ours before a restart) take this one.
 */
void ipoib_neigh_announce(struct ipoib_link *l, const struct inet_addr *a)
{
	struct ipoib_addr me;
	uint8_t buf[IPOIB_ARP_LEN];
	size_t len;

	if (!l->carrier)
		return;
	if (a->family == AF_INET6) {
		na_all_nodes(l, &a->v6, INET_NA_FLAG_OVERRIDE |
			     (l->router ? INET_NA_FLAG_ROUTER : 0));
		return;
	}
	ipoib_link_hwaddr(l, &me);
	len = ipoib_arp_build_announce(&me, &a->v4, buf, sizeof(buf));
	if (len) {
		l->st.arp_tx++;
		ipoib_mcast_send(l, &l->bcast_mgid, IPOIB_ETH_P_ARP, buf, len);
	}
}

/*
 * A proxy's announcement of an address it has just found behind it (a
 * gateway's LAN host, newly learnt or asked again after a restart): a
 * gratuitous ARP, or an unsolicited advertisement to all nodes with the
 * Override flag, which RFC 4861 7.2.8 allows a proxy's unsolicited
 * advertisements (7.2.6): without it a neighbour keeps the link address
 * it has (a restarted gateway's old QPN) and gives it up only after its
 * unreachability detection, about 8 s on Linux (ipoibd does the same:
 * neigh_na).  The price the RFC names: should the host itself be on the
 * IB side too, this overrides its entry.  A proxy's answers to
 * solicitations and its defence of an address keep the flag clear, as
 * 7.2.8 requires: there the host itself, if on the link, wins.
 */
void ipoib_link_announce(struct ipoib_link *l, const struct inet_addr *a)
{
	if (a->family == AF_INET)
		ipoib_neigh_announce(l, a);
	else if (a->family == AF_INET6)
		na_all_nodes(l, &a->v6, INET_NA_FLAG_OVERRIDE);
}

void ipoib_neigh_flush_paths(struct ipoib_link *l)
{
	struct path *p;
	struct neigh *n;
	unsigned int i;

	/* neighbours keep their link address and ask for a path again on
	 * their next packet; the paths go with their last user */
	for (i = 0; i < NEIGH_HASH; i++)
		for (n = l->neigh[i]; n; n = n->next)
			neigh_set_path(l, n, NULL);
	while ((p = l->paths))		/* none should be left */
		path_free(l, p);
}

/* Once a second: neighbours that never answered are retried, then given
 * up (with what waited for them). */
void ipoib_neigh_tick(struct ipoib_link *l, time_t t)
{
	struct neigh *n, *next;
	unsigned int i;

	for (i = 0; i < NEIGH_HASH; i++) {
		for (n = l->neigh[i]; n; n = next) {
			next = n->next;
			if (n->have_hw) {
				if (n->nud_at && t >= n->nud_at)
					neigh_nud_step(l, n, t);
				continue;
			}
			if (t < n->next_probe)
				continue;
			if (n->probes >= ARP_RETRIES) {
				l->st.drop[IPOIB_DROP_NEIGH_FAILED] +=
					fq_drain(&n->q);
				ipoib_neigh_free(l, n);
				continue;
			}
			if (l->carrier)
				neigh_solicit(l, n);
		}
	}
}

void ipoib_neigh_free_all(struct ipoib_link *l)
{
	struct path *p;
	unsigned int i;

	for (i = 0; i < NEIGH_HASH; i++)
		while (l->neigh[i])
			ipoib_neigh_free(l, l->neigh[i]);
	while ((p = l->paths))
		path_free(l, p);
}

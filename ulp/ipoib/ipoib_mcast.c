// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Multicast groups of the IPoIB link: FullMember joins for what the host
 * listens to (learnt by snooping its IGMP/MLD reports) and the link's own
 * groups, SendOnlyFullMember joins for groups it only sends to (packets
 * wait for the join), retries with backoff, leaves.  All joins after the
 * broadcast group's use its parameters so a new group can be created.
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "fabric/sa_client.h"
#include "inet/byteorder.h"
#include "inet/nd.h"
#include "ulp/ipoib/ipoib_priv.h"

struct mc *ipoib_mcast_find(struct ipoib_link *l, const union fab_gid *mgid)
{
	struct mc *m;

	for (m = l->mcs; m; m = m->next)
		if (!memcmp(m->mgid.raw, mgid->raw, 16))
			return m;
	return NULL;
}

void ipoib_mcast_failed(struct ipoib_link *l, struct mc *m)
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
		ipoib_mcast_failed(l, m);
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
	m->ah = fab_ah_create(l->dev, &aa, NULL, 0);
	if (!m->ah) {
		ipoib_mcast_failed(l, m);
		return;
	}
	if (m->full && l->qp && !m->attached &&
	    fab_attach_mcast(l->qp, &m->mgid, m->mlid, NULL, 0) == 0)
		m->attached = 1;
	m->st = MC_JOINED;
	m->backoff_s = 0;
	l->st.joins++;
	while ((f = fq_pop(&m->q))) {
		ipoib_link_send(l, m->ah, IPOIB_QPN_MCAST, 0, f->data, f->len);
		free(f);
	}
}

void ipoib_mcast_join(struct ipoib_link *l, struct mc *m)
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
		ipoib_mcast_failed(l, m);
}

static struct mc *mc_get(struct ipoib_link *l, const union fab_gid *mgid,
			 int full)
{
	struct mc *m = ipoib_mcast_find(l, mgid);

	if (m) {
		if (full && !m->full) {
			/* a send-only member now listens: join as full */
			m->full = 1;
			if (m->st == MC_JOINED) {
				m->st = MC_IDLE;
				ipoib_mcast_join(l, m);
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
	ipoib_mcast_join(l, m);
	return m;
}

void ipoib_mcast_send(struct ipoib_link *l, const union fab_gid *mgid,
		      uint16_t ethertype, const uint8_t *pkt, size_t len)
{
	struct mc *m = mc_get(l, mgid, 0);
	struct frame *f;

	if (!m) {
		drop(l, IPOIB_DROP_MCAST_FAILED);
		return;
	}
	if (m->st == MC_JOINED) {
		ipoib_link_send(l, m->ah, IPOIB_QPN_MCAST, ethertype, pkt, len);
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
		ipoib_mcast_join(l, m);
}

/* A group the link itself listens to: the host cannot make it leave. */
void ipoib_mcast_own(struct ipoib_link *l, const union fab_gid *mgid)
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
	ipoib_mcast_free(l, m, 1);
}

void ipoib_mcast_free(struct ipoib_link *l, struct mc *m, int leave)
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
		fab_detach_mcast(l->qp, &m->mgid, m->mlid, NULL, 0);
	if (m->ah)
		fab_ah_destroy(m->ah);
	fq_drain(&m->q);
	free(m);
}

void ipoib_mcast_mgid6(struct ipoib_link *l, const struct in6_addr *g,
		       union fab_gid *mgid)
{
	ipoib_mcast_mgid_ipv6(g, &l->bcast_mgid, mgid);
}

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
		ipoib_mcast_mgid6(l, &g6, &mgid);
	}
	if (on) {
		mc_get(l, &mgid, 1);
		return;
	}
	m = ipoib_mcast_find(l, &mgid);
	if (m && m->full && !m->own)
		mc_remove(l, m);
}

/*
 * IGMP (v1-v3) and MLD (v1, v2) messages the host's kernel sends say what
 * it listens to: reports join, IGMPv2 leave / MLD done and a v3 record
 * "include nothing" leave.  p is the IGMP or ICMPv6 message.
 */
void ipoib_mcast_snoop(struct ipoib_link *l, int family,
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

void ipoib_mcast_join_listen(struct ipoib_link *l)
{
	static const uint8_t all_nodes[16] = { 0xff, 0x02, [15] = 1 };
	struct in_addr all_hosts = { htonl(0xe0000001) };
	union fab_gid mgid;
	struct in6_addr sn, an;
	unsigned int i;

	ipoib_mcast_mgid_ipv4(&all_hosts, &l->bcast_mgid, &mgid);
	ipoib_mcast_own(l, &mgid);
	memcpy(&an, all_nodes, 16);
	ipoib_mcast_mgid6(l, &an, &mgid);
	ipoib_mcast_own(l, &mgid);
	if (l->cfg.report_groups) {
		static const uint8_t mld2[16] = { 0xff, 0x02, [15] = 0x16 };
		struct in_addr igmp3 = { htonl(0xe0000016) };

		ipoib_mcast_mgid_ipv4(&igmp3, &l->bcast_mgid, &mgid);
		ipoib_mcast_own(l, &mgid);
		memcpy(&an, mld2, 16);
		ipoib_mcast_mgid6(l, &an, &mgid);
		ipoib_mcast_own(l, &mgid);
	}
	for (i = 0; i < l->naddrs; i++) {
		if (l->addrs[i].addr.family != AF_INET6)
			continue;
		inet_solicited_node(&l->addrs[i].addr.v6, &sn);
		ipoib_mcast_mgid6(l, &sn, &mgid);
		ipoib_mcast_own(l, &mgid);
	}
}

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
#include "inet/mcast.h"
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
	/* a rejoin after the SM restarted may give the group another
	 * MLID: the attachment moves with it */
	if (m->attached && l->qp && m->mlid != res->rec.mcm[0].mlid) {
		fab_detach_mcast(l->qp, &m->mgid, m->mlid, NULL, 0);
		m->attached = 0;
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
	/* the host began to listen while a send-only join was on its way
	 * (mc_get): the SA has us as a sender only, so join again, as a
	 * FullMember, or the group's traffic never comes */
	if (m->full && !m->asked_full) {
		m->st = MC_IDLE;
		ipoib_mcast_join(l, m);
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
	m->asked_full = m->full;
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
static void mc_listen(void *arg, const struct inet_addr *group, bool join)
{
	struct ipoib_link *l = arg;
	union fab_gid mgid;
	struct mc *m;

	if (group->family == AF_INET)
		ipoib_mcast_mgid_ipv4(&group->v4, &l->bcast_mgid, &mgid);
	else
		ipoib_mcast_mgid6(l, &group->v6, &mgid);
	if (join) {
		mc_get(l, &mgid, 1);
		return;
	}
	m = ipoib_mcast_find(l, &mgid);
	if (m && m->full && !m->own)
		mc_remove(l, m);
}

/*
 * The IGMP and MLD messages the host's kernel sends say what it listens
 * to.  p is the IGMP or ICMPv6 message.  The packet goes out whatever the
 * decoding says, so a malformed report only ends what is learnt from it.
 */
void ipoib_mcast_snoop(struct ipoib_link *l, int family,
		       const uint8_t *p, size_t len)
{
	(void)inet_mcast_report_parse(family, p, len, mc_listen, l);
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
		if (l->addrs[i].p.addr.family != AF_INET6)
			continue;
		inet_solicited_node(&l->addrs[i].p.addr.v6, &sn);
		ipoib_mcast_mgid6(l, &sn, &mgid);
		ipoib_mcast_own(l, &mgid);
	}
}

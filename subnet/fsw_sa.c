// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ibfabricd's subnet manager and subnet administrator.  Owns the multicast
 * groups and their MLIDs, which port is in which group with which
 * JoinState, PathRecords, InformInfo subscriptions and the traps sent to
 * them.  Owns no ports: it sees the switch's node table only through
 * struct fsw_sa_ops (fsw_sa.h), and keeps of a port only its LID and GUID.
 *
 * The SA answers as OpenSM 3.3 does (osm_sa_mcmember_record.c,
 * osm_sa_path_record.c, osm_multicast.c are the behaviour we follow; the
 * differential test in tests/integration/sa_opensm.sh holds us to it):
 *  - every partition flagged ipoib gets a well-known broadcast group at
 *    start, MLIDs allocated from 0xC000 in partition order;
 *  - a join (Set) needs MGID, PortGID and JoinState (else 0x0600); joining
 *    a missing group creates it when the request also carries Q_Key,
 *    TClass, P_Key, FlowLabel and SL and asks for (SendOnly)FullMember;
 *    a new group with an IPoIB signature must agree with its partition's
 *    broadcast group; everything else wrong is REQ_INVALID (0x0200);
 *  - JoinState bits accumulate per port; a leave (Delete) clears bits and
 *    the group goes when its last full member leaves, unless well-known;
 *  - a port's bits are the union of what each of its processes joined, as
 *    a host's multicast layer (drivers/infiniband/core/multicast.c) counts
 *    its local joiners: a process's leave, or its exit, takes from the
 *    port only the bits no other process of the port still holds;
 *  - PathRecords between two ports that share the P_Key; an unknown
 *    destination or no shared P_Key gives NO_RECORDS (0x0300).
 * Multi-MAD (RMPP) answers are not implemented: a GetTable answer carries
 * the records that fit one MAD.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inet/byteorder.h"
#include "fabric/ib_pkt.h"
#include "fabric/sa_mad.h"
#include "subnet/fsw_report.h"
#include "subnet/fsw_sa.h"
#include "subnet/partitions.h"

#define JOIN_MASK	(SA_MCM_MGID | SA_MCM_PORT_GID | SA_MCM_JOIN_STATE)
#define CREATE_MASK	(SA_MCM_MGID | SA_MCM_PORT_GID | SA_MCM_QKEY | \
			 SA_MCM_TCLASS | SA_MCM_PKEY | SA_MCM_FLOW_LABEL | \
			 SA_MCM_SL | SA_MCM_JOIN_STATE)
#define FULL_STATES	(SA_JOIN_FULL | SA_JOIN_SENDONLY_FULL)
#define RX_STATES	(SA_JOIN_FULL | SA_JOIN_NON)
#define SUBNET_PREFIX	0xfe80000000000000ull

#define SM_KEY		1	/* OpenSM's default SM_Key */
#define PORT_RATE	3	/* 10 Gb/s (4x SDR), every port's */
#define SUBNET_TIMEOUT	18	/* OpenSM's default, PacketLifeTime */
#define MGID_HASH	16384	/* MGID hash buckets, power of two */
#define NMLIDS		(FAB_LID_MCAST_MAX - FAB_LID_MCAST_MIN + 1)

/* Who asked for a member's bits: a process of the port itself (the
 * switch's token for it), or NULL for the port as a whole (a proxy join,
 * a MAD injected as the node). */
struct sa_joiner {
	const void *proc;
	uint8_t join;
};

struct sa_member {
	uint16_t lid;		/* the port's */
	uint64_t guid;
	union fab_gid port_gid;
	uint8_t scope_state;	/* scope << 4 | JoinState */
	uint8_t proxy;
	/* the JoinState is the union of these, and each bit in it is some
	 * joiner's */
	struct sa_joiner *j;
	unsigned int nj, jcap;
};

struct sa_group {
	struct sa_mcmember rec;	/* the group's parameters */
	int well_known;		/* from partitions.conf: never deleted */
	unsigned int full_members;
	struct sa_member *m;
	unsigned int nm, cap;
	struct sa_group *hnext;	/* MGID hash chain */
};

struct sa_inform {
	uint16_t lid;		/* the subscriber's port */
	uint16_t trap;		/* 0xFFFF: all */
	uint16_t pkey;
	struct sa_inform *next;
};

/* A port's memberships, by LID, so that forwarding asks about one port
 * without walking a group's members. */
struct sa_mcm {
	uint16_t mlid;
	uint8_t join_state;
};

struct sa_port_mcms {
	struct sa_mcm *v;
	unsigned int n, cap;
};

struct fsw_sa {
	const struct prtn_conf *pc;
	const struct fsw_sa_ops *ops;
	void *ctx;
	struct sa_group *hash[MGID_HASH];	/* by MGID */
	struct sa_group *by_mlid[NMLIDS];
	unsigned int ngroups;
	uint16_t mlid_hint;		/* no free MLID below this one */
	uint32_t mgid_seq;		/* SA-assigned MGIDs */
	uint32_t psn;
	uint32_t tid;			/* TIDs of the SM's own Reports */
	struct sa_inform *informs;	/* trap subscriptions */
	struct sa_port_mcms *mcms;	/* by LID, nmcms of them */
	unsigned int nmcms;
};

/* ---- helpers ----------------------------------------------------------- */

static uint64_t gid_prefix(const union fab_gid *g)
{
	return be64_get(g->raw);
}

static uint64_t gid_guid(const union fab_gid *g)
{
	return be64_get(g->raw + 8);
}


static int is_zero_gid(const union fab_gid *g)
{
	static const uint8_t z[16];

	return !memcmp(g->raw, z, 16);
}

static unsigned int gid_hash(const union fab_gid *g)
{
	uint32_t h = 2166136261u;
	int i;

	for (i = 0; i < 16; i++) {
		h ^= g->raw[i];
		h *= 16777619u;
	}
	return h & (MGID_HASH - 1);
}

/* index of the P_Key (15-bit match) in a node's table, -1 if absent */
static int port_pkey(const struct fsw_sa_port *n, uint16_t pkey)
{
	return fab_pkey_index(n->pkeys, n->npkeys, pkey);
}

static int port_has_pkey(const struct fsw_sa_port *n, uint16_t pkey)
{
	return port_pkey(n, pkey) >= 0;
}

/* Both ports hold the key and at least one of them as a full member. */
static int share_this_pkey(const struct fsw_sa_port *a,
			   const struct fsw_sa_port *b, uint16_t pkey)
{
	int ia = port_pkey(a, pkey), ib = port_pkey(b, pkey);

	return ia >= 0 && ib >= 0 &&
	       ((a->pkeys[ia] | b->pkeys[ib]) & 0x8000);
}

/* OpenSM keeps P_Keys in a map keyed by the network-order value, which
 * on x86 compares as the byte-swapped 15-bit key */
static unsigned int pkey_order(uint16_t pkey)
{
	pkey &= 0x7fff;
	return (unsigned int)((pkey >> 8) | ((pkey & 0xff) << 8));
}

/* A P_Key both share, src's value: the first in OpenSM's map order
 * (h1->h2 in 0xffff and 0x8001 gets 0x8001 from OpenSM). */
static uint16_t common_pkey(const struct fsw_sa_port *src,
			    const struct fsw_sa_port *dst)
{
	unsigned int i;
	uint16_t best = 0;

	for (i = 0; i < src->npkeys; i++)
		if (src->pkeys[i] && share_this_pkey(src, dst, src->pkeys[i]) &&
		    (!best || pkey_order(src->pkeys[i]) < pkey_order(best)))
			best = src->pkeys[i];
	return best;
}

static int ports_share_any(const struct fsw_sa_port *a,
			   const struct fsw_sa_port *b)
{
	return common_pkey(a, b) != 0;
}

/* rate order (codes are not monotonic): compare by bandwidth */
/* OpenSM's order of rate codes (libopensm osm_helper.c ordered_rates):
 * by bandwidth, with the newer encodings counted at their line rate */
static const uint8_t rate_order[] = {
	0, 0, 1, 3, 6, 2, 5, 9, 10, 13, 14, 4, 12, 16, 17, 7, 15, 18, 19,
	8, 11, 20, 21, 22, 23,
};

static int rate_cmp(uint8_t a, uint8_t b)
{
	unsigned int x = a < sizeof(rate_order) ? rate_order[a] : 0;
	unsigned int y = b < sizeof(rate_order) ? rate_order[b] : 0;

	return x < y ? -1 : x > y;
}

/* the next lower rate code (ib_path_rate_get_prev); 0 if none */
static uint8_t rate_prev(uint8_t rate)
{
	unsigned int i;

	if (rate <= 2 || rate >= sizeof(rate_order))
		return 0;
	for (i = 2; i < sizeof(rate_order); i++)
		if (rate_order[i] == rate_order[rate] - 1)
			return (uint8_t)i;
	return 0;
}

static int mtu_valid(uint8_t mtu)
{
	return mtu >= 1 && mtu <= 5;
}

static int rate_valid(uint8_t rate)
{
	return sa_rate_tenths_gbps(rate) != 0;
}

/* ---- port memberships (for forwarding) ---------------------------------- */

static const struct sa_port_mcms *port_mcms(const struct fsw_sa *sa,
					    uint16_t lid)
{
	return lid < sa->nmcms ? &sa->mcms[lid] : NULL;
}

static int mcm_find(const struct sa_port_mcms *pm, uint16_t mlid)
{
	unsigned int i;

	for (i = 0; pm && i < pm->n; i++)
		if (pm->v[i].mlid == mlid)
			return (int)i;
	return -1;
}

/* The table grows to the highest LID that ever joined: LIDs are dense. */
static struct sa_port_mcms *port_mcms_grow(struct fsw_sa *sa, uint16_t lid)
{
	unsigned int n = sa->nmcms, want = n ? n : 64;
	struct sa_port_mcms *v;

	if (lid < n)
		return &sa->mcms[lid];
	while (want <= lid)
		want *= 2;
	v = realloc(sa->mcms, want * sizeof(*v));
	if (!v)
		return NULL;
	memset(v + n, 0, (want - n) * sizeof(*v));
	sa->mcms = v;
	sa->nmcms = want;
	return &sa->mcms[lid];
}

/* The port's JoinState in group mlid becomes join (0: not a member). */
static int port_mcm_set(struct fsw_sa *sa, uint16_t lid, uint16_t mlid,
			uint8_t join)
{
	struct sa_port_mcms *pm = lid < sa->nmcms ? &sa->mcms[lid] : NULL;
	int i = mcm_find(pm, mlid);

	if (i >= 0) {
		if (join)
			pm->v[i].join_state = join;
		else
			pm->v[i] = pm->v[--pm->n];
		return 0;
	}
	if (!join)
		return 0;
	pm = port_mcms_grow(sa, lid);
	if (!pm)
		return -1;
	if (pm->n == pm->cap) {
		unsigned int cap = pm->cap ? pm->cap * 2 : 4;
		struct sa_mcm *v = realloc(pm->v, cap * sizeof(*v));

		if (!v)
			return -1;
		pm->v = v;
		pm->cap = cap;
	}
	pm->v[pm->n].mlid = mlid;
	pm->v[pm->n].join_state = join;
	pm->n++;
	return 0;
}

int fsw_sa_port_receives(const struct fsw_sa *sa, uint16_t lid,
			 uint16_t mlid)
{
	const struct sa_port_mcms *pm = port_mcms(sa, lid);
	int i = mcm_find(pm, mlid);

	return i >= 0 && (pm->v[i].join_state & RX_STATES);
}

unsigned int fsw_sa_port_groups(const struct fsw_sa *sa, uint16_t lid)
{
	const struct sa_port_mcms *pm = port_mcms(sa, lid);

	return pm ? pm->n : 0;
}

int fsw_sa_mlid_known(const struct fsw_sa *sa, uint16_t mlid)
{
	return mlid >= FAB_LID_MCAST_MIN && mlid <= FAB_LID_MCAST_MAX &&
	       sa->by_mlid[mlid - FAB_LID_MCAST_MIN] != NULL;
}

/* ---- traps --------------------------------------------------------------- */

static void count(struct fsw_sa *sa, enum fsw_sa_count what)
{
	sa->ops->count(sa->ctx, what);
}

static void send_mad(struct fsw_sa *sa, uint16_t dlid, uint16_t pkey,
		     const uint8_t *mad)
{
	uint8_t pkt[IB_MAX_PKT];
	size_t len;

	len = ib_mad_build(FSW_SA_LID, dlid, pkey, sa->psn++, mad, MAD_LEN,
			   pkt, sizeof(pkt));
	if (len)
		sa->ops->send(sa->ctx, pkt, len);
}

/*
 * A Report(Notice) to every port subscribed to trap (IBTA 14.2.5.1).
 * Group traps (66, 67) reach only ports in the group's partition
 * (o13-17.1.1, OpenSM's is_access_permitted); pkey 0: no such limit.
 */
static void send_trap(struct fsw_sa *sa, uint16_t trap,
		      const union fab_gid *gid, uint16_t pkey)
{
	struct fsw_sa_port to;
	struct sa_inform *in;
	struct sa_notice nt;
	struct sa_hdr h;
	uint8_t rec[SA_NOTICE_LEN], mad[MAD_LEN];

	for (in = sa->informs; in; in = in->next) {
		if (in->trap != 0xFFFF && in->trap != trap)
			continue;
		if (sa->ops->port_by_lid(sa->ctx, in->lid, &to) < 0 ||
		    !to.up || (pkey && !port_has_pkey(&to, pkey)))
			continue;
		memset(&nt, 0, sizeof(nt));
		nt.is_generic = 1;
		nt.type = 3;			/* subnet management */
		nt.producer_type = 4;		/* class manager */
		nt.trap_number = trap;
		nt.issuer_lid = FSW_SA_LID;
		memcpy(nt.data_details + 6, gid->raw, 16);
		nt.issuer_gid.raw[0] = 0xfe;	/* the SM's port */
		nt.issuer_gid.raw[1] = 0x80;
		nt.issuer_gid.raw[15] = FSW_SA_LID;
		sa_notice_encode(&nt, rec);
		memset(&h, 0, sizeof(h));
		h.mad.base_version = MAD_BASE_VERSION;
		h.mad.mgmt_class = MAD_CLASS_SUBN_ADM;
		h.mad.class_version = SA_CLASS_VERSION;
		h.mad.method = MAD_METHOD_REPORT;
		h.mad.tid = 0x5300000000000000ull | ++sa->tid;
		h.mad.attr_id = SA_ATTR_NOTICE;
		sa_mad_build(&h, rec, sizeof(rec), mad);
		send_mad(sa, in->lid, in->pkey | 0x8000, mad);
		count(sa, FSW_SA_TRAP_SENT);
	}
}

/* The subscriptions of port lid; lid 0 (no port's): every one. */
static void drop_informs(struct fsw_sa *sa, uint16_t lid)
{
	struct sa_inform **pp = &sa->informs, *in;

	while ((in = *pp)) {
		if (!lid || in->lid == lid) {
			*pp = in->next;
			free(in);
		} else {
			pp = &in->next;
		}
	}
}

/* ---- groups -------------------------------------------------------------- */

static struct sa_group *group_find(struct fsw_sa *sa, const union fab_gid *mgid)
{
	struct sa_group *g;

	for (g = sa->hash[gid_hash(mgid)]; g; g = g->hnext)
		if (!memcmp(g->rec.mgid.raw, mgid->raw, 16))
			return g;
	return NULL;
}

static uint16_t mlid_alloc(struct fsw_sa *sa, uint16_t want)
{
	unsigned int i;

	/* a free MLID the request names is used (get_new_mlid) */
	if (want >= FAB_LID_MCAST_MIN && want <= FAB_LID_MCAST_MAX &&
	    !sa->by_mlid[want - FAB_LID_MCAST_MIN])
		return want;

	for (i = sa->mlid_hint; i < NMLIDS; i++) {
		if (!sa->by_mlid[i]) {
			sa->mlid_hint = (uint16_t)(i + 1);
			return (uint16_t)(FAB_LID_MCAST_MIN + i);
		}
	}
	return 0;
}

static struct sa_group *group_new(struct fsw_sa *sa,
				  const struct sa_mcmember *rec)
{
	struct sa_group *g;
	unsigned int h;
	uint16_t mlid = mlid_alloc(sa, rec->mlid);

	if (!mlid)
		return NULL;
	g = calloc(1, sizeof(*g));
	if (!g)
		return NULL;
	g->rec = *rec;
	g->rec.mlid = mlid;
	g->rec.mtu_sel = g->rec.rate_sel = g->rec.life_sel = SA_SEL_EQ;
	g->rec.join_state = 0;
	g->rec.proxy_join = 0;
	memset(&g->rec.port_gid, 0, sizeof(g->rec.port_gid));
	h = gid_hash(&rec->mgid);
	g->hnext = sa->hash[h];
	sa->hash[h] = g;
	sa->by_mlid[mlid - FAB_LID_MCAST_MIN] = g;
	sa->ngroups++;
	return g;
}

/* The joiner proc adds join to its bits; 0, or -1 out of memory. */
static int joiner_add(struct sa_member *m, const void *proc, uint8_t join)
{
	unsigned int k;

	for (k = 0; k < m->nj; k++) {
		if (m->j[k].proc == proc) {
			m->j[k].join |= join;
			return 0;
		}
	}
	if (m->nj == m->jcap) {
		unsigned int cap = m->jcap ? m->jcap * 2 : 2;
		struct sa_joiner *v = realloc(m->j, cap * sizeof(*v));

		if (!v)
			return -1;
		m->j = v;
		m->jcap = cap;
	}
	m->j[m->nj].proc = proc;
	m->j[m->nj].join = join;
	m->nj++;
	return 0;
}

/* Clear bits of the joiner proc (of every joiner when all is set);
 * joiners left with none are forgotten. */
static void joiners_clear(struct sa_member *m, int all, const void *proc,
			  uint8_t bits)
{
	unsigned int k = 0;

	while (k < m->nj) {
		if (all || m->j[k].proc == proc)
			m->j[k].join &= (uint8_t)~bits;
		if (!m->j[k].join)
			m->j[k] = m->j[--m->nj];
		else
			k++;
	}
}

/* What the port's joiners hold together. */
static uint8_t joiners_union(const struct sa_member *m)
{
	uint8_t u = 0;
	unsigned int k;

	for (k = 0; k < m->nj; k++)
		u |= m->j[k].join;
	return u;
}

static void member_free(struct sa_member *m)
{
	free(m->j);
	m->j = NULL;
	m->nj = m->jcap = 0;
}

static void group_delete(struct fsw_sa *sa, struct sa_group *g)
{
	struct sa_group **pp;
	unsigned int i, idx = g->rec.mlid - FAB_LID_MCAST_MIN;

	for (i = 0; i < g->nm; i++) {
		port_mcm_set(sa, g->m[i].lid, g->rec.mlid, 0);
		member_free(&g->m[i]);
	}
	g->nm = 0;
	g->full_members = 0;
	if (g->well_known)
		return;
	for (pp = &sa->hash[gid_hash(&g->rec.mgid)]; *pp;
	     pp = &(*pp)->hnext) {
		if (*pp == g) {
			*pp = g->hnext;
			break;
		}
	}
	sa->by_mlid[idx] = NULL;
	if (idx < sa->mlid_hint)
		sa->mlid_hint = (uint16_t)idx;
	sa->ngroups--;
	free(g->m);
	free(g);
}

static int member_find(const struct sa_group *g, uint64_t port_guid)
{
	unsigned int i;

	for (i = 0; i < g->nm; i++)
		if (g->m[i].guid == port_guid)
			return (int)i;
	return -1;
}

/* osm_mgrp_add_port(): JoinState bits accumulate, as proc's; returns the
 * member */
static struct sa_member *member_add(struct fsw_sa *sa, struct sa_group *g,
				    const struct fsw_sa_port *n,
				    const union fab_gid *port_gid,
				    uint8_t scope_state, int proxy,
				    const void *proc)
{
	int i = member_find(g, n->guid);
	uint8_t prev = 0, join = scope_state & 0xf;
	struct sa_member *m;

	if (i >= 0) {
		m = &g->m[i];
		if (joiner_add(m, proc, join) < 0)
			return NULL;
		prev = m->scope_state & 0xf;
		m->scope_state = (uint8_t)((m->scope_state & 0xf0) |
					   prev | join);
	} else {
		if (g->nm == g->cap) {
			unsigned int cap = g->cap ? g->cap * 2 : 4;
			struct sa_member *v = realloc(g->m, cap * sizeof(*v));

			if (!v)
				return NULL;
			g->m = v;
			g->cap = cap;
		}
		m = &g->m[g->nm];
		memset(m, 0, sizeof(*m));
		m->lid = n->lid;
		m->guid = n->guid;
		m->port_gid = *port_gid;
		m->scope_state = scope_state;
		m->proxy = (uint8_t)proxy;
		if (joiner_add(m, proc, join) < 0)
			return NULL;
		g->nm++;
	}
	if (port_mcm_set(sa, n->lid, g->rec.mlid, m->scope_state & 0xf) < 0) {
		if (i < 0) {
			member_free(m);
			g->nm--;
		}
		return NULL;
	}
	if ((join & FULL_STATES) && !(prev & FULL_STATES) &&
	    ++g->full_members == 1)
		send_trap(sa, SA_TRAP_MCG_CREATED, &g->rec.mgid, g->rec.pkey);
	return m;
}

/*
 * osm_mgrp_remove_port(): clear join bits of member i; *scope_state gets
 * what the port keeps.  Returns 1 if the group was emptied (deleted, or
 * for a well-known group cleared).
 */
static int member_remove(struct fsw_sa *sa, struct sa_group *g, unsigned int i,
			 uint8_t join, uint8_t *scope_state)
{
	struct sa_member *m = &g->m[i];
	uint8_t old = m->scope_state & 0xf, nw = old & (uint8_t)~join;
	union fab_gid mgid = g->rec.mgid;
	uint16_t pkey = g->rec.pkey;

	if ((nw & SA_JOIN_FULL) ||
	    (nw && (g->full_members > (old & SA_JOIN_FULL) ? 1 : 0))) {
		m->scope_state = (uint8_t)((m->scope_state & 0xf0) | nw);
		*scope_state = m->scope_state;
		port_mcm_set(sa, m->lid, g->rec.mlid, nw);
		joiners_clear(m, 1, NULL, join);
	} else {
		*scope_state = m->scope_state & 0xf0;
		port_mcm_set(sa, m->lid, g->rec.mlid, 0);
		member_free(m);
		g->m[i] = g->m[--g->nm];
		/* the port is gone, whatever bits it still had: OpenSM keeps
		 * counting a removed SendOnlyFullMember as a full member and
		 * the group lingers with none; we do not */
		nw = 0;
	}
	if ((old & FULL_STATES) && !(nw & FULL_STATES) &&
	    --g->full_members == 0) {
		send_trap(sa, SA_TRAP_MCG_DELETED, &mgid, pkey);
		group_delete(sa, g);
		return 1;
	}
	return 0;
}

static void port_leave_all(struct fsw_sa *sa, const struct fsw_sa_port *n)
{
	struct sa_port_mcms *pm = n->lid < sa->nmcms ? &sa->mcms[n->lid] :
			      NULL;
	uint8_t ss;

	while (pm && pm->n) {
		struct sa_group *g = sa->by_mlid[pm->v[0].mlid -
						 FAB_LID_MCAST_MIN];
		int i = g ? member_find(g, n->guid) : -1;

		if (i < 0) {	/* cannot happen; keep the loop finite */
			pm->v[0] = pm->v[--pm->n];
			continue;
		}
		member_remove(sa, g, (unsigned int)i, 0xf, &ss);
	}
}

void fsw_sa_port_gone(struct fsw_sa *sa, uint16_t lid)
{
	struct fsw_sa_port n;

	if (sa->ops->port_by_lid(sa->ctx, lid, &n) < 0)
		return;
	port_leave_all(sa, &n);
	drop_informs(sa, lid);
	send_trap(sa, SA_TRAP_GID_OUT_OF_SERVICE, &n.gid, 0);
}

void fsw_sa_process_gone(struct fsw_sa *sa, uint16_t lid, const void *proc)
{
	struct sa_port_mcms *pm;
	struct fsw_sa_port n;
	unsigned int k = 0;
	uint8_t had, gone, ss;

	if (!proc || sa->ops->port_by_lid(sa->ctx, lid, &n) < 0 ||
	    lid >= sa->nmcms)
		return;
	pm = &sa->mcms[lid];
	while (k < pm->n) {
		uint16_t mlid = pm->v[k].mlid;
		struct sa_group *g = sa->by_mlid[mlid - FAB_LID_MCAST_MIN];
		int i = g ? member_find(g, n.guid) : -1;

		if (i < 0) {	/* cannot happen; keep the loop finite */
			pm->v[k] = pm->v[--pm->n];
			continue;
		}
		/* its bits go; what another process holds stays, as the
		 * kernel leaves for a client only what no other holds */
		had = g->m[i].scope_state & 0xf;
		joiners_clear(&g->m[i], 0, proc, 0xf);
		gone = had & (uint8_t)~joiners_union(&g->m[i]);
		if (gone)
			member_remove(sa, g, (unsigned int)i, gone, &ss);
		/* member_remove may have taken the entry out of pm->v */
		if (k < pm->n && pm->v[k].mlid == mlid)
			k++;
	}
}

void fsw_sa_port_up(struct fsw_sa *sa, uint16_t lid)
{
	struct fsw_sa_port n;

	if (sa->ops->port_by_lid(sa->ctx, lid, &n) == 0)
		send_trap(sa, SA_TRAP_GID_IN_SERVICE, &n.gid, 0);
}

static int add_all_well_known(struct fsw_sa *sa);

/* The port's P_Key table changed: it leaves the groups of partitions it
 * is no longer in, as OpenSM removes a port from the groups of a P_Key it
 * lost. */
void fsw_sa_port_pkeys_changed(struct fsw_sa *sa, uint16_t lid)
{
	struct sa_port_mcms *pm;
	struct fsw_sa_port n;
	unsigned int k;
	uint8_t ss;

	if (sa->ops->port_by_lid(sa->ctx, lid, &n) < 0 || lid >= sa->nmcms)
		return;
	pm = &sa->mcms[lid];
	k = 0;
	while (k < pm->n) {
		struct sa_group *g = sa->by_mlid[pm->v[k].mlid -
						 FAB_LID_MCAST_MIN];
		int i = g ? member_find(g, n.guid) : -1;

		if (i < 0) {	/* cannot happen; keep the loop finite */
			pm->v[k] = pm->v[--pm->n];
			continue;
		}
		if (port_has_pkey(&n, g->rec.pkey)) {
			k++;
			continue;
		}
		/* member_remove takes the entry out of pm->v */
		member_remove(sa, g, (unsigned int)i, 0xf, &ss);
	}
}

unsigned int fsw_sa_set_partitions(struct fsw_sa *sa,
				   const struct prtn_conf *pc)
{
	unsigned int i, deleted = 0;

	sa->pc = pc;
	/* every group is an ordinary one until the new file names it */
	for (i = 0; i < NMLIDS; i++)
		if (sa->by_mlid[i])
			sa->by_mlid[i]->well_known = 0;
	if (add_all_well_known(sa) < 0)
		return deleted;	/* out of MLIDs or memory: what fits */
	for (i = 0; i < NMLIDS; i++) {
		struct sa_group *g = sa->by_mlid[i];

		if (!g || g->well_known)
			continue;
		/* a partition that is gone takes its groups with it, and
		 * their members lose them; a group no longer in the file
		 * lives on while it has full members, as a joined one */
		if (pc && prtn_conf_find(pc, g->rec.pkey) &&
		    g->full_members)
			continue;
		if (g->full_members)
			send_trap(sa, SA_TRAP_MCG_DELETED, &g->rec.mgid,
				  g->rec.pkey);
		group_delete(sa, g);
		deleted++;
	}
	return deleted;
}

void fsw_sa_forget_all(struct fsw_sa *sa)
{
	unsigned int i;

	for (i = 0; i < NMLIDS; i++)
		if (sa->by_mlid[i])
			group_delete(sa, sa->by_mlid[i]);
	drop_informs(sa, 0);
}

/* The well-known groups of partitions.conf, as osm_prtn_add_mcgroup(). */
static int add_well_known(struct fsw_sa *sa, const struct prtn *p,
			  const uint8_t *mgid_raw, uint8_t scope, uint8_t mtu,
			  uint8_t rate, uint8_t sl, uint32_t qkey,
			  uint8_t tclass, uint32_t flow)
{
	struct sa_mcmember r;
	struct sa_group *g;

	memset(&r, 0, sizeof(r));	/* MLID 0: the next free one */
	memcpy(r.mgid.raw, mgid_raw, 16);
	r.mgid.raw[1] = (uint8_t)((r.mgid.raw[1] & 0xf0) | (scope & 0xf));
	g = group_find(sa, &r.mgid);
	if (g) {
		/* a reload: a group made by a join, now in the file, is
		 * well-known from here on (its parameters stay) */
		if ((g->rec.pkey & 0x7fff) == p->pkey)
			g->well_known = 1;
		return 0;
	}
	r.qkey = qkey;
	r.mtu = mtu;
	r.tclass = tclass;
	r.pkey = p->pkey | 0x8000;
	r.rate = rate;
	r.life = SUBNET_TIMEOUT;
	r.sl = sl;
	r.flow_label = flow;
	r.hop_limit = scope == 2 ? 0 : 0xff;
	r.scope = scope;
	g = group_new(sa, &r);
	if (!g)
		return -1;
	g->rec.join_state = SA_JOIN_FULL;
	g->well_known = 1;
	return 0;
}

static int add_all_well_known(struct fsw_sa *sa)
{
	const struct prtn_conf *pc = sa->pc;
	size_t i, k;
	uint8_t s;

	if (!pc)
		return 0;
	for (i = 0; i < pc->nparts; i++) {
		const struct prtn *p = &pc->parts[i];
		union fab_gid mgid;

		for (s = 0; s < 16; s++) {
			if (!p->ipoib || !(p->scope_mask & (1u << s)))
				continue;
			sa_ipoib_bcast_mgid(p->pkey, s, &mgid);
			if (add_well_known(sa, p, mgid.raw, s, p->mtu,
					   p->rate, p->sl, p->qkey,
					   p->tclass, p->flow_label) < 0)
				return -1;
		}
		for (k = 0; k < p->nmgroups; k++) {
			const struct prtn_mgroup *m = &p->mgroups[k];

			for (s = 0; s < 16; s++) {
				if (!(m->scope_mask & (1u << s)))
					continue;
				if (add_well_known(sa, p, m->mgid, s, m->mtu,
						   m->rate, m->sl, m->qkey,
						   m->tclass,
						   m->flow_label) < 0)
					return -1;
			}
		}
	}
	return 0;
}

struct fsw_sa *fsw_sa_new(const struct prtn_conf *pc,
			  const struct fsw_sa_ops *ops, void *ctx)
{
	struct fsw_sa *sa = calloc(1, sizeof(*sa));

	if (!sa)
		return NULL;
	sa->pc = pc;
	sa->ops = ops;
	sa->ctx = ctx;
	if (add_all_well_known(sa) < 0) {
		fsw_sa_free(sa);
		return NULL;
	}
	return sa;
}

void fsw_sa_free(struct fsw_sa *sa)
{
	unsigned int i;

	if (!sa)
		return;
	for (i = 0; i < NMLIDS; i++) {
		struct sa_group *g = sa->by_mlid[i];
		unsigned int k;

		if (g) {
			for (k = 0; k < g->nm; k++)
				member_free(&g->m[k]);
			free(g->m);
			free(g);
		}
	}
	drop_informs(sa, 0);
	for (i = 0; i < sa->nmcms; i++)
		free(sa->mcms[i].v);
	free(sa->mcms);
	free(sa);
}

/* ---- responses ----------------------------------------------------------- */

struct sa_req {
	const struct ib_ud *u;
	const uint8_t *mad;
	struct sa_hdr h;
	struct fsw_sa_port requester;
	const void *proc;	/* the requester's process, or NULL */
};

/*
 * Answer a request: the request's header with the response method and
 * status; nrec records of rec_len bytes, or on error the request's own
 * data echoed (as osm_sa_send_error does).
 */
static void respond(struct fsw_sa *sa, const struct sa_req *rq, uint16_t status,
		    const uint8_t *recs, size_t rec_len, unsigned int nrec)
{
	uint8_t mad[MAD_LEN];
	struct sa_hdr h = rq->h;
	size_t off = (rec_len + 7) / 8;

	memcpy(mad, rq->mad, MAD_LEN);
	h.sm_key = 0;		/* C15-0.1.5: never sent back */
	if (h.mad.method == MAD_METHOD_SET)
		h.mad.method = MAD_METHOD_GET;
	h.mad.method |= MAD_METHOD_RESP;
	h.mad.status = status;
	if (status) {
		if (h.mad.method == MAD_METHOD_GET_TABLE_RESP)
			h.attr_offset = 0;
	} else {
		h.attr_offset = nrec ? (uint16_t)off : 0;
		memset(mad + SA_HDR_LEN, 0, SA_DATA_LEN);
		/* records lie at a stride of off * 8 bytes; the last one
		 * is rec_len long */
		if (nrec)
			memcpy(mad + SA_HDR_LEN, recs,
			       (nrec - 1) * off * 8 + rec_len);
	}
	sa_hdr_encode(&h, mad);
	/* the SM's port is a full member of every partition: it answers
	 * with the full key, so a limited member still hears it */
	send_mad(sa, rq->u->lrh.slid, rq->u->bth.pkey | 0x8000, mad);
	count(sa, FSW_SA_ANSWERED);
	if (status)
		count(sa, FSW_SA_ANSWERED_ERR);
}

static void respond_err(struct fsw_sa *sa, const struct sa_req *rq,
			uint16_t status)
{
	respond(sa, rq, status, NULL, 0, 0);
}

/* Records collected for Get/GetTable; as many as one MAD holds. */
struct sa_recs {
	uint8_t buf[SA_DATA_LEN];
	size_t rec_len, stride;
	unsigned int n, total;
};

static void recs_init(struct sa_recs *r, size_t rec_len)
{
	memset(r, 0, sizeof(*r));
	r->rec_len = rec_len;
	r->stride = (rec_len + 7) / 8 * 8;
}

static uint8_t *recs_add(struct sa_recs *r)
{
	uint8_t *p;

	r->total++;
	if ((r->n + 1) * r->stride > sizeof(r->buf))
		return NULL;
	p = r->buf + r->n * r->stride;
	r->n++;
	return p;
}

/* osm_sa_respond(): Get wants exactly one record */
static void respond_recs(struct fsw_sa *sa, const struct sa_req *rq,
			 const struct sa_recs *r)
{
	if (rq->h.mad.method == MAD_METHOD_GET && r->total == 0)
		respond_err(sa, rq, SA_STATUS_NO_RECORDS);
	else if (rq->h.mad.method == MAD_METHOD_GET && r->total > 1)
		respond_err(sa, rq, SA_STATUS_TOO_MANY_RECORDS);
	else
		respond(sa, rq, 0, r->buf, r->rec_len, r->n);
}

/* ---- MCMemberRecord ------------------------------------------------------ */

/* validate_other_comp_fields() */
static int other_fields_match(uint64_t mask, const struct sa_mcmember *q,
			      const struct sa_mcmember *g)
{
	if ((mask & SA_MCM_QKEY) && q->qkey != g->qkey)
		return 0;
	if (mask & SA_MCM_PKEY) {
		if (!((q->pkey | g->pkey) & 0x8000))
			return 0;
		if ((q->pkey & 0x7fff) != (g->pkey & 0x7fff))
			return 0;
	}
	if ((mask & SA_MCM_TCLASS) && q->tclass != g->tclass)
		return 0;
	if ((mask & SA_MCM_SL) && q->sl != g->sl)
		return 0;
	if ((mask & SA_MCM_FLOW_LABEL) && q->flow_label != g->flow_label)
		return 0;
	if ((mask & SA_MCM_HOP_LIMIT) && q->hop_limit != g->hop_limit)
		return 0;
	return 1;
}

/* validate_more_comp_fields(): MTU and rate selectors against a group */
static int sel_fields_match(uint64_t mask, const struct sa_mcmember *q,
			    const struct sa_mcmember *g)
{
	if (mask & SA_MCM_MTU_SEL) {
		switch (q->mtu_sel) {
		case SA_SEL_GT: if (g->mtu <= q->mtu) return 0; break;
		case SA_SEL_LT: if (g->mtu >= q->mtu) return 0; break;
		case SA_SEL_EQ: if (g->mtu != q->mtu) return 0; break;
		default: break;
		}
	}
	if (mask & SA_MCM_RATE_SEL) {
		int c = rate_cmp(g->rate, q->rate);

		switch (q->rate_sel) {
		case SA_SEL_GT: if (c <= 0) return 0; break;
		case SA_SEL_LT: if (c >= 0) return 0; break;
		case SA_SEL_EQ: if (c) return 0; break;
		default: break;
		}
	}
	return 1;
}

/* mgrp_request_is_realizable(): MTU and rate of a new group, for a port
 * of MTU port_mtu */
static int realizable(uint8_t port_mtu, uint64_t mask, struct sa_mcmember *r)
{
	uint8_t port_rate = PORT_RATE;
	uint8_t sel;

	if (!(mask & SA_MCM_MTU) || !(mask & SA_MCM_MTU_SEL) ||
	    r->mtu_sel == SA_SEL_MAX) {
		r->mtu = port_mtu;
	} else {
		sel = r->mtu_sel;
		if (sel == SA_SEL_GT) {
			if (r->mtu >= port_mtu)
				return 0;
			r->mtu = port_mtu;
		} else if (sel == SA_SEL_LT) {
			r->mtu = r->mtu > port_mtu ? port_mtu : r->mtu - 1;
		}
		if (!mtu_valid(r->mtu))
			return 0;
	}
	if (!(mask & SA_MCM_RATE) || !(mask & SA_MCM_RATE_SEL) ||
	    r->rate_sel == SA_SEL_MAX) {
		r->rate = port_rate;
	} else {
		sel = r->rate_sel;
		if (sel == SA_SEL_GT) {
			if (rate_cmp(r->rate, port_rate) >= 0)
				return 0;
			r->rate = port_rate;
		} else if (sel == SA_SEL_LT) {
			if (rate_cmp(r->rate, port_rate) > 0)
				r->rate = port_rate;
			else
				r->rate = rate_prev(r->rate);
		}
		if (!rate_valid(r->rate))
			return 0;
	}
	return 1;
}

/* validate_requested_mgid(): IBTA 4.1.1 rules for a given MGID */
static int mgid_valid(const union fab_gid *g)
{
	uint16_t sig = (uint16_t)(g->raw[2] << 8 | g->raw[3]);

	if (g->raw[0] != 0xff)
		return 0;
	if (sig == 0x401b || sig == 0x601b)
		return 1;
	if (g->raw[1] & 0xe0)
		return 0;
	if (sig == 0xa01b && (g->raw[1] & 0x0f) == 2)
		return 0;
	return 1;
}

/* mcmr_rcv_create_new_mgrp(); returns a status, the group in *out */
static uint16_t create_group(struct fsw_sa *sa, uint64_t mask,
			     const struct sa_mcmember *q, uint8_t port_mtu,
			     struct sa_group **out)
{
	struct sa_mcmember r = *q;
	uint16_t sig;

	if (is_zero_gid(&q->mgid)) {
		uint32_t seq;
		int tries;

		r.mgid.raw[0] = 0xff;
		r.mgid.raw[1] = (uint8_t)(0x10 |
			((mask & SA_MCM_SCOPE) ? q->scope : 2));
		r.mgid.raw[2] = 0xa0;
		r.mgid.raw[3] = 0x1b;
		r.mgid.raw[4] = 0xfe;	/* the subnet prefix fe80:: */
		r.mgid.raw[5] = 0x80;
		for (tries = 0; tries < 1000; tries++) {
			seq = ++sa->mgid_seq;
			r.mgid.raw[12] = (uint8_t)(seq >> 24);
			r.mgid.raw[13] = (uint8_t)(seq >> 16);
			r.mgid.raw[14] = (uint8_t)(seq >> 8);
			r.mgid.raw[15] = (uint8_t)seq;
			if (!group_find(sa, &r.mgid))
				break;
		}
		if (tries == 1000)
			return SA_STATUS_NO_RESOURCES;
	} else {
		if (!mgid_valid(&q->mgid))
			return SA_STATUS_REQ_INVALID;
		sig = (uint16_t)(q->mgid.raw[2] << 8 | q->mgid.raw[3]);
		if (sig == 0x401b || sig == 0x601b) {
			union fab_gid bc;
			struct sa_group *b;

			sa_ipoib_bcast_mgid((uint16_t)(q->mgid.raw[4] << 8 |
						       q->mgid.raw[5]),
					    q->mgid.raw[1] & 0xf, &bc);
			/* the P_Key bytes as given (full bit included) */
			bc.raw[4] = q->mgid.raw[4];
			bc.raw[5] = q->mgid.raw[5];
			if (sig != 0x401b || memcmp(bc.raw, q->mgid.raw, 16)) {
				b = group_find(sa, &bc);
				if (!b || !other_fields_match(mask, q, &b->rec))
					return SA_STATUS_REQ_INVALID;
			}
		}
	}
	if (!realizable(port_mtu, mask, &r))
		return SA_STATUS_REQ_INVALID;
	r.scope = q->scope;
	*out = group_new(sa, &r);
	if (!*out)
		return SA_STATUS_NO_RESOURCES;
	(*out)->rec.join_state = q->join_state;
	return 0;
}

static void mcm_join(struct fsw_sa *sa, const struct sa_req *rq,
		     struct sa_mcmember *q)
{
	uint64_t mask = rq->h.comp_mask;
	struct fsw_sa_port port;
	struct sa_group *g;
	struct sa_member *m;
	struct sa_mcmember resp;
	uint8_t rec[SA_MCMEMBER_LEN];
	int proxy, is_new = 0, i;
	uint16_t st;

	count(sa, FSW_SA_JOIN);
	if (gid_prefix(&q->port_gid) != SUBNET_PREFIX) {
		respond_err(sa, rq, SA_STATUS_INVALID_GID);
		return;
	}
	if (sa->ops->port_by_guid(sa->ctx, gid_guid(&q->port_gid),
				  &port) < 0) {
		respond_err(sa, rq, SA_STATUS_REQ_INVALID);
		return;
	}
	proxy = port.lid != rq->requester.lid;
	if (proxy && !ports_share_any(&port, &rq->requester)) {
		respond_err(sa, rq, SA_STATUS_REQ_INVALID);
		return;
	}
	if ((mask & SA_MCM_PKEY) && !(q->pkey & 0x7fff)) {
		respond_err(sa, rq, SA_STATUS_REQ_INVALID);
		return;
	}
	g = group_find(sa, &q->mgid);
	if (!g) {
		if (!(q->join_state & FULL_STATES)) {
			respond_err(sa, rq, SA_STATUS_REQ_INVALID);
			return;
		}
		if ((mask & CREATE_MASK) != CREATE_MASK) {
			respond_err(sa, rq, SA_STATUS_INSUFFICIENT_COMPS);
			return;
		}
		st = create_group(sa, mask, q, port.mtu, &g);
		if (st) {
			respond_err(sa, rq, st);
			return;
		}
		is_new = 1;
	} else if (!other_fields_match(mask, q, &g->rec)) {
		respond_err(sa, rq, SA_STATUS_REQ_INVALID);
		return;
	}
	if (!sel_fields_match(mask, q, &g->rec) ||
	    port.mtu < g->rec.mtu ||
	    rate_cmp(PORT_RATE, g->rec.rate) < 0 || !q->join_state ||
	    !port_has_pkey(&port, g->rec.pkey)) {
		if (is_new)
			group_delete(sa, g);
		respond_err(sa, rq, SA_STATUS_REQ_INVALID);
		return;
	}
	/* validate_modify(): only the port itself, or a proxy in the
	 * group's partition, may change an existing membership */
	i = member_find(g, port.guid);
	if (!is_new && i >= 0 &&
	    (g->m[i].proxy ? !port_has_pkey(&rq->requester, g->rec.pkey)
			   : rq->requester.lid != port.lid)) {
		respond_err(sa, rq, SA_STATUS_REQ_INVALID);
		return;
	}
	/* the port's record takes the group's scope (copy_from_create_mc_rec) */
	m = member_add(sa, g, &port, &q->port_gid,
		       (uint8_t)(g->rec.scope << 4 | q->join_state), proxy,
		       proxy ? NULL : rq->proc);
	if (!m) {
		if (is_new)
			group_delete(sa, g);
		respond_err(sa, rq, SA_STATUS_NO_RESOURCES);
		return;
	}
	resp = *q;
	resp.qkey = g->rec.qkey;
	resp.mlid = g->rec.mlid;
	resp.tclass = g->rec.tclass;
	resp.pkey = g->rec.pkey;
	resp.sl = g->rec.sl;
	resp.flow_label = g->rec.flow_label;
	resp.hop_limit = g->rec.hop_limit;
	resp.mtu = g->rec.mtu;
	resp.rate = g->rec.rate;
	resp.life = g->rec.life;
	resp.mgid = g->rec.mgid;
	resp.mtu_sel = resp.rate_sel = resp.life_sel = SA_SEL_EQ;
	resp.scope = m->scope_state >> 4;
	resp.join_state = m->scope_state & 0xf;
	sa_mcmember_encode(&resp, rec);
	respond(sa, rq, 0, rec, sizeof(rec), 1);
}

static void mcm_leave(struct fsw_sa *sa, const struct sa_req *rq,
		      struct sa_mcmember *q)
{
	struct sa_group *g;
	struct sa_member *m;
	struct sa_mcmember resp;
	uint8_t rec[SA_MCMEMBER_LEN], ss, gone;
	int i;

	count(sa, FSW_SA_LEAVE);
	if (gid_prefix(&q->port_gid) != SUBNET_PREFIX) {
		respond_err(sa, rq, SA_STATUS_INVALID_GID);
		return;
	}
	g = group_find(sa, &q->mgid);
	i = g ? member_find(g, gid_guid(&q->port_gid)) : -1;
	if (i < 0) {
		respond_err(sa, rq, SA_STATUS_REQ_INVALID);
		return;
	}
	m = &g->m[i];
	/* validate_delete(): some and only stored bits; the port itself or
	 * (ProxyJoin) a port of the group's partition */
	if (!(q->join_state & m->scope_state & 0xf) ||
	    (q->join_state & ~m->scope_state & 0xf) ||
	    (m->proxy ? !port_has_pkey(&rq->requester, g->rec.pkey)
		      : rq->requester.lid != m->lid)) {
		respond_err(sa, rq, SA_STATUS_REQ_INVALID);
		return;
	}
	/* the requester gives up its own bits; the port leaves only those
	 * that no other process of it still holds (multicast.c sends the
	 * SA a leave for those alone), and keeps the rest */
	joiners_clear(m, 0, rq->requester.lid == m->lid ? rq->proc : NULL,
		      q->join_state);
	gone = q->join_state & (uint8_t)~joiners_union(m);
	if (gone)
		member_remove(sa, g, (unsigned int)i, gone, &ss);
	else
		ss = m->scope_state;
	resp = *q;
	resp.scope = ss >> 4;
	resp.join_state = ss & 0xf;
	resp.mtu_sel = resp.rate_sel = resp.life_sel = SA_SEL_EQ;
	sa_mcmember_encode(&resp, rec);
	respond(sa, rq, 0, rec, sizeof(rec), 1);
}

/* mcmr_by_comp_mask() for one group */
static void mcm_match(const struct sa_req *rq, const struct sa_mcmember *q,
		      int trusted, const struct sa_group *g,
		      struct sa_recs *out)
{
	uint64_t mask = rq->h.comp_mask;
	uint8_t ssmask = 0, ss;
	struct sa_mcmember r;
	union fab_gid pg;
	uint8_t proxy = 0;
	unsigned int k;
	uint8_t *p;
	int i;

	if ((mask & SA_MCM_MGID) && memcmp(q->mgid.raw, g->rec.mgid.raw, 16))
		return;
	if ((mask & SA_MCM_MLID) && q->mlid != g->rec.mlid)
		return;
	if (!port_has_pkey(&rq->requester, g->rec.pkey))
		return;
	if (!other_fields_match(mask, q, &g->rec))
		return;
	if ((mask & SA_MCM_PROXY_JOIN) && q->proxy_join != g->rec.proxy_join)
		return;
	if (!sel_fields_match(mask, q, &g->rec))
		return;
	memset(&pg, 0, sizeof(pg));
	if (mask & SA_MCM_PORT_GID) {
		i = member_find(g, gid_guid(&q->port_gid));
		if (i < 0)
			return;
		ss = g->m[i].scope_state;
		pg = g->m[i].port_gid;
		proxy = g->m[i].proxy;
	} else {
		ss = (uint8_t)(g->rec.scope << 4 | g->rec.join_state);
	}
	if (mask & SA_MCM_SCOPE)
		ssmask |= 0xf0;
	if (mask & SA_MCM_JOIN_STATE)
		ssmask |= 0x0f;
	r = g->rec;
	if (trusted && !(mask & SA_MCM_PORT_GID)) {
		for (k = 0; k < g->nm; k++) {
			const struct sa_member *m = &g->m[k];
			uint8_t qss = (uint8_t)(q->scope << 4 | q->join_state);

			if ((ssmask & qss) != (ssmask & m->scope_state))
				continue;
			r.port_gid = m->port_gid;
			r.scope = m->scope_state >> 4;
			r.join_state = m->scope_state & 0xf;
			r.proxy_join = m->proxy;
			if ((p = recs_add(out)))
				sa_mcmember_encode(&r, p);
		}
		return;
	}
	if ((ssmask & (q->scope << 4 | q->join_state)) != (ssmask & ss))
		return;
	r.scope = ss >> 4;
	r.join_state = ss & 0xf;
	r.port_gid = pg;
	r.proxy_join = proxy;
	if (!trusted) {	/* p923: hidden from untrusted requesters */
		memset(&r.port_gid, 0, sizeof(r.port_gid));
		r.join_state = 0;
		r.proxy_join = 0;
	}
	if ((p = recs_add(out)))
		sa_mcmember_encode(&r, p);
}

static void mcm_query(struct fsw_sa *sa, const struct sa_req *rq,
		      const struct sa_mcmember *q)
{
	int trusted = rq->h.sm_key == SM_KEY;
	struct sa_recs out;
	unsigned int i;

	recs_init(&out, SA_MCMEMBER_LEN);
	if (rq->h.comp_mask & SA_MCM_MGID) {
		struct sa_group *g = group_find(sa, &q->mgid);

		if (g)
			mcm_match(rq, q, trusted, g, &out);
	} else {
		for (i = 0; i < NMLIDS; i++)
			if (sa->by_mlid[i])
				mcm_match(rq, q, trusted, sa->by_mlid[i],
					  &out);
	}
	respond_recs(sa, rq, &out);
}

static void sa_mcmember(struct fsw_sa *sa, const struct sa_req *rq,
			const uint8_t *recp)
{
	uint64_t mask = rq->h.comp_mask;
	struct sa_mcmember q;
	uint8_t m = rq->h.mad.method;

	sa_mcmember_decode(recp, &q);
	if (m != MAD_METHOD_SET && m != MAD_METHOD_DELETE &&
	    m != MAD_METHOD_GET && m != MAD_METHOD_GET_TABLE) {
		respond_err(sa, rq, MAD_STATUS_METHOD_ATTR_UNSUPP);
		return;
	}
	if ((m == MAD_METHOD_SET || m == MAD_METHOD_DELETE) &&
	    (mask & JOIN_MASK) != JOIN_MASK) {
		respond_err(sa, rq, SA_STATUS_INSUFFICIENT_COMPS);
		return;
	}
	if (((mask & SA_MCM_RATE_SEL) && (mask & SA_MCM_RATE) &&
	     !rate_valid(q.rate)) ||
	    ((mask & SA_MCM_MTU_SEL) && (mask & SA_MCM_MTU) &&
	     !mtu_valid(q.mtu))) {
		respond_err(sa, rq, SA_STATUS_REQ_INVALID);
		return;
	}
	if (m == MAD_METHOD_SET)
		mcm_join(sa, rq, &q);
	else if (m == MAD_METHOD_DELETE)
		mcm_leave(sa, rq, &q);
	else
		mcm_query(sa, rq, &q);
}

/* ---- PathRecord ---------------------------------------------------------- */

/* The path from src to dst as OpenSM computes it (pr_rcv_get_path_parms,
 * pr_rcv_build_pr) for one switch hop; 0, or -1 when there is none. */
static int path_compute(struct fsw_sa *sa, const struct fsw_sa_port *src,
			const struct fsw_sa_port *dst, uint64_t mask,
			const struct sa_path *q, struct sa_path *r)
{
	const struct prtn *pt;
	uint8_t mtu = src->mtu < dst->mtu ? src->mtu : dst->mtu;
	uint8_t rate = PORT_RATE;
	uint8_t life = SUBNET_TIMEOUT;
	uint16_t pkey;

	if (!src->up || !dst->up)
		return -1;
	if ((mask & SA_PR_MTU_SEL) && (mask & SA_PR_MTU)) {
		switch (q->mtu_sel) {
		case SA_SEL_GT: if (mtu <= q->mtu) return -1; break;
		case SA_SEL_LT:
			if (mtu >= q->mtu) {
				if (q->mtu <= 1)
					return -1;
				mtu = q->mtu - 1;
			}
			break;
		case SA_SEL_EQ: if (mtu < q->mtu) return -1;
			mtu = q->mtu; break;
		default: break;
		}
	}
	if ((mask & SA_PR_RATE_SEL) && (mask & SA_PR_RATE)) {
		int c = rate_cmp(rate, q->rate);

		switch (q->rate_sel) {
		case SA_SEL_GT: if (c <= 0) return -1; break;
		case SA_SEL_LT:
			if (c >= 0 && !(rate = rate_prev(q->rate)))
				return -1;
			break;
		case SA_SEL_EQ: if (c) return -1;
			rate = q->rate; break;
		default: break;
		}
	}
	if ((mask & SA_PR_LIFE_SEL) && (mask & SA_PR_LIFE)) {
		switch (q->life_sel) {
		case SA_SEL_GT: if (life <= q->life) return -1; break;
		case SA_SEL_LT:
			if (life >= q->life) {
				if (q->life <= 1)
					return -1;
				life = q->life - 1;
			}
			break;
		case SA_SEL_EQ: if (life < q->life) return -1;
			life = q->life; break;
		default: break;
		}
	}
	if (mask & SA_PR_PKEY) {
		pkey = q->pkey;
		if (!share_this_pkey(src, dst, pkey))
			return -1;
	} else {
		pkey = common_pkey(src, dst);
		if (!pkey)
			return -1;
	}
	pt = prtn_conf_find(sa->pc, pkey & 0x7fff);
	memset(r, 0, sizeof(*r));
	r->dgid = dst->gid;
	r->sgid = src->gid;
	r->dlid = dst->lid;
	r->slid = src->lid;
	r->raw_traffic = 0;
	r->pkey = pkey;
	/* without QoS policy OpenSM gives the SL asked for, else the
	 * partition's */
	r->sl = (mask & SA_PR_SL) ? q->sl : pt ? pt->sl : 0;
	r->mtu_sel = r->rate_sel = r->life_sel = SA_SEL_EQ;
	r->mtu = mtu;
	r->rate = rate;
	r->life = src->lid == dst->lid ? 0 : life;	/* loopback: 0 */
	r->reversible = 1;
	return 0;
}

/* The i-th port at one end of a query: the one given, else every port
 * (pr_process_half/all); 0, or -1 past the last. */
static int path_end(struct fsw_sa *sa, const struct fsw_sa_port *given,
		    unsigned int i, struct fsw_sa_port *p)
{
	if (!given)
		return sa->ops->port_at(sa->ctx, i, p);
	if (i)
		return -1;
	*p = *given;
	return 0;
}

/*
 * osm_pr_get_end_points() for one end, by GID and LID as the mask says:
 * 1 with the port in *p, 0 when neither is given, -1 when a port named
 * does not exist (no records), -2 when GID and LID name two ports.
 */
static int path_end_find(struct fsw_sa *sa, uint64_t mask, uint64_t gid_bit,
			 const union fab_gid *gid, uint64_t lid_bit,
			 uint16_t lid, struct fsw_sa_port *p)
{
	struct fsw_sa_port n;
	int found = 0;

	if (mask & gid_bit) {
		/* multicast DGIDs are not answered here */
		if (gid_prefix(gid) != SUBNET_PREFIX ||
		    sa->ops->port_by_guid(sa->ctx, gid_guid(gid), p) < 0)
			return -1;
		found = 1;
	}
	if (mask & lid_bit) {
		if (sa->ops->port_by_lid(sa->ctx, lid, &n) < 0)
			return -1;
		if (found && p->lid != n.lid)
			return -2;
		*p = n;
		found = 1;
	}
	return found;
}

static void sa_path(struct fsw_sa *sa, const struct sa_req *rq,
		    const uint8_t *recp)
{
	uint64_t mask = rq->h.comp_mask;
	struct fsw_sa_port src, dst, a, b;
	int has_src, has_dst;
	struct sa_path q, r;
	struct sa_recs out;
	unsigned int i, k;
	uint8_t m = rq->h.mad.method;
	uint8_t *p;

	sa_path_decode(recp, &q);
	count(sa, FSW_SA_PATH_QUERY);
	if (m != MAD_METHOD_GET && m != MAD_METHOD_GET_TABLE) {
		respond_err(sa, rq, MAD_STATUS_METHOD_ATTR_UNSUPP);
		return;
	}
	if (((mask & SA_PR_RATE_SEL) && (mask & SA_PR_RATE) &&
	     !rate_valid(q.rate)) ||
	    ((mask & SA_PR_MTU_SEL) && (mask & SA_PR_MTU) &&
	     !mtu_valid(q.mtu))) {
		respond_err(sa, rq, SA_STATUS_REQ_INVALID);
		return;
	}
	if ((mask & SA_PR_SERVICE_ID) &&
	    (mask & SA_PR_SERVICE_ID) != SA_PR_SERVICE_ID) {
		respond_err(sa, rq, SA_STATUS_INSUFFICIENT_COMPS);
		return;
	}
	recs_init(&out, SA_PATH_RECORD_LEN);
	/* the source first: when it fails, the destination is not looked at */
	has_src = path_end_find(sa, mask, SA_PR_SGID, &q.sgid, SA_PR_SLID,
				q.slid, &src);
	has_dst = has_src < 0 ? 0 :
		  path_end_find(sa, mask, SA_PR_DGID, &q.dgid, SA_PR_DLID,
				q.dlid, &dst);
	if (has_src == -2 || has_dst == -2) {
		respond_err(sa, rq, SA_STATUS_REQ_INVALID);
		return;
	}
	if (has_src < 0 || has_dst < 0)
		goto done;
	/* the requester must share a partition with both ends */
	for (i = 0; !path_end(sa, has_src ? &src : NULL, i, &a); i++) {
		if (!ports_share_any(&rq->requester, &a))
			continue;
		for (k = 0; !path_end(sa, has_dst ? &dst : NULL, k, &b); k++) {
			if (!ports_share_any(&rq->requester, &b) ||
			    path_compute(sa, &a, &b, mask, &q, &r) < 0)
				continue;
			if ((p = recs_add(&out)))
				sa_path_encode(&r, p);
			/* a Get cannot take two; a MAD holds only so many */
			if ((m == MAD_METHOD_GET && out.total > 1) ||
			    (m != MAD_METHOD_GET && !p))
				goto done;
		}
	}
done:
	respond_recs(sa, rq, &out);
}

/* ---- InformInfo ---------------------------------------------------------- */

static void sa_inform(struct fsw_sa *sa, const struct sa_req *rq,
		      const uint8_t *recp)
{
	struct sa_inform_info q;
	struct sa_inform *in, **pp;
	uint8_t rec[SA_INFORM_INFO_LEN];

	sa_inform_info_decode(recp, &q);
	if (rq->h.mad.method != MAD_METHOD_SET) {
		respond_err(sa, rq, MAD_STATUS_METHOD_ATTR_UNSUPP);
		return;
	}
	if (!q.is_generic) {
		respond_err(sa, rq, SA_STATUS_REQ_INVALID);
		return;
	}
	/* one subscription per port and trap number */
	for (pp = &sa->informs; (in = *pp); pp = &in->next)
		if (in->lid == rq->requester.lid &&
		    in->trap == q.trap_number)
			break;
	if (q.subscribe && !in) {
		in = calloc(1, sizeof(*in));
		if (!in) {
			respond_err(sa, rq, SA_STATUS_NO_RESOURCES);
			return;
		}
		in->lid = rq->requester.lid;
		in->trap = q.trap_number;
		in->pkey = rq->u->bth.pkey;
		in->next = sa->informs;
		sa->informs = in;
	} else if (!q.subscribe && in) {
		*pp = in->next;
		free(in);
	} else if (!q.subscribe) {
		respond_err(sa, rq, SA_STATUS_REQ_INVALID);
		return;
	}
	sa_inform_info_encode(&q, rec);
	respond(sa, rq, 0, rec, sizeof(rec), 1);
}

/* ---- entry --------------------------------------------------------------- */

#define ATTR_CLASS_PORT_INFO	0x0001

static void sa_class_port_info(struct fsw_sa *sa, const struct sa_req *rq)
{
	uint8_t rec[72];

	if (rq->h.mad.method != MAD_METHOD_GET) {
		respond_err(sa, rq, MAD_STATUS_METHOD_ATTR_UNSUPP);
		return;
	}
	memset(rec, 0, sizeof(rec));
	rec[0] = MAD_BASE_VERSION;
	rec[1] = SA_CLASS_VERSION;
	rec[2] = 0x02;		/* CapabilityMask: IsUDMulticastSupported... */
	rec[3] = 0x00;
	rec[7] = SUBNET_TIMEOUT & 0x1f;	/* RespTimeValue */
	respond(sa, rq, 0, rec, sizeof(rec), 1);
}

void fsw_sa_input(struct fsw_sa *sa, const struct ib_ud *u, const void *proc)
{
	struct sa_req rq;
	enum sa_mad_err err;
	const uint8_t *recp;
	uint16_t attr;

	memset(&rq, 0, sizeof(rq));
	rq.u = u;
	rq.proc = proc;
	rq.mad = u->payload;
	if (u->payload_len != MAD_LEN ||
	    sa->ops->port_by_lid(sa->ctx, u->lrh.slid, &rq.requester) < 0) {
		count(sa, FSW_SA_BAD_MAD);
		return;
	}
	err = sa_mad_parse(rq.mad, MAD_LEN, &rq.h);
	if (err == SA_MAD_BAD_CLASS_VERSION &&
	    !(rq.h.mad.method & MAD_METHOD_RESP)) {
		respond_err(sa, &rq, MAD_STATUS_BAD_VERSION);
		return;
	}
	if (err) {
		count(sa, FSW_SA_BAD_MAD);
		return;
	}
	if (rq.h.mad.method & MAD_METHOD_RESP) {
		/* a ReportResp to one of our traps */
		count(sa, FSW_SA_ACK);
		return;
	}
	/* a wrong SM_Key gets no answer at all (osm_sa_mad_ctrl.c) */
	if (rq.h.sm_key && rq.h.sm_key != SM_KEY) {
		count(sa, FSW_SA_BAD_MAD);
		return;
	}
	attr = rq.h.mad.attr_id;
	if (attr == ATTR_CLASS_PORT_INFO) {
		sa_class_port_info(sa, &rq);
		return;
	}
	if (attr != SA_ATTR_MCMEMBER_RECORD && attr != SA_ATTR_PATH_RECORD &&
	    attr != SA_ATTR_INFORM_INFO) {
		respond_err(sa, &rq, MAD_STATUS_METHOD_ATTR_UNSUPP);
		return;
	}
	recp = sa_mad_record(rq.mad, MAD_LEN, &rq.h, attr, 0, &err);
	if (!recp) {
		respond_err(sa, &rq, MAD_STATUS_INVALID_FIELD);
		return;
	}
	if (attr == SA_ATTR_MCMEMBER_RECORD)
		sa_mcmember(sa, &rq, recp);
	else if (attr == SA_ATTR_PATH_RECORD)
		sa_path(sa, &rq, recp);
	else
		sa_inform(sa, &rq, recp);
}

/* ---- reports ------------------------------------------------------------- */

static const char *join_letters(uint8_t js, char *b)
{
	int k = 0;

	if (js & SA_JOIN_FULL)
		b[k++] = 'F';
	if (js & SA_JOIN_NON)
		b[k++] = 'N';
	if (js & SA_JOIN_SENDONLY_NON)
		b[k++] = 's';
	if (js & SA_JOIN_SENDONLY_FULL)
		b[k++] = 'S';
	b[k] = '\0';
	return b;
}

static void group_line(struct fsw_sa *sa, const struct sa_group *g,
		       struct counter_buf *cb)
{
	struct fsw_sa_port n;
	char gid[64], js[8];
	unsigned int k;

	fab_gid_to_str(&g->rec.mgid, gid, sizeof(gid));
	fsw_report_printf(cb, "%-40s 0x%04x 0x%04x 0x%08x %-4d %-5u %-2u "
			  "%-5u %-2s", gid, g->rec.mlid, g->rec.pkey,
			  g->rec.qkey, fab_mtu_to_bytes(g->rec.mtu),
			  sa_rate_tenths_gbps(g->rec.rate) / 10, g->rec.sl,
			  g->rec.scope, g->well_known ? "wk" : "-");
	for (k = 0; k < g->nm; k++)
		fsw_report_printf(cb, "%s%s:%s", k ? "," : " ",
				  sa->ops->port_by_lid(sa->ctx, g->m[k].lid,
						       &n) ? "?" : n.name,
				  join_letters(g->m[k].scope_state & 0xf, js));
	fsw_report_printf(cb, "\n");
}

/* A partition and the attached ports in it. */
static void partition_line(struct fsw_sa *sa, const struct prtn *p,
			   struct counter_buf *cb)
{
	struct fsw_sa_port n;
	unsigned int k;
	int first = 1, pi;

	fsw_report_printf(cb, "%-16s 0x%04x %-5s %-4d %-5u %-2u 0x%08x",
			  p->name, p->pkey | 0x8000, p->ipoib ? "yes" : "no",
			  fab_mtu_to_bytes(p->mtu),
			  sa_rate_tenths_gbps(p->rate) / 10, p->sl, p->qkey);
	for (k = 0; !sa->ops->port_at(sa->ctx, k, &n); k++) {
		pi = port_pkey(&n, p->pkey);
		if (pi < 0)
			continue;
		fsw_report_printf(cb, "%s%s:%s", first ? " " : ",", n.name,
				  n.pkeys[pi] & 0x8000 ? "full" : "limited");
		first = 0;
	}
	fsw_report_printf(cb, "\n");
}

static void report_groups(struct fsw_sa *sa, const union fab_gid *want,
			  struct counter_buf *cb)
{
	unsigned int j;

	fsw_report_printf(cb, "%-40s %-6s %-6s %-10s %-4s %-5s %-2s %-5s "
			  "%-2s %s\n", "MGID", "MLID", "PKEY", "QKEY", "MTU",
			  "GBPS", "SL", "SCOPE", "WK",
			  "MEMBERS (F full, N non, s send-only non, "
			  "S send-only full)");
	for (j = 0; j < NMLIDS; j++) {
		const struct sa_group *g = sa->by_mlid[j];

		if (!g || (want && memcmp(g->rec.mgid.raw, want->raw, 16)))
			continue;
		group_line(sa, g, cb);
	}
}

static void report_partitions(struct fsw_sa *sa, struct counter_buf *cb)
{
	size_t i;

	fsw_report_printf(cb, "%-16s %-6s %-5s %-4s %-5s %-2s %-10s %s\n",
			  "NAME", "PKEY", "IPOIB", "MTU", "GBPS", "SL", "QKEY",
			  "ATTACHED MEMBERS (full/limited)");
	for (i = 0; sa->pc && i < sa->pc->nparts; i++)
		partition_line(sa, &sa->pc->parts[i], cb);
}

size_t fsw_sa_report(struct fsw_sa *sa, const char *what, const char *arg,
		     char *buf, size_t cap)
{
	struct counter_buf cb = { buf, 0, cap };
	union fab_gid want;

	if (!strcmp(what, "groups")) {
		if (arg && fab_gid_from_str(arg, &want) < 0)
			fsw_report_printf(&cb, "not a GID: '%.64s'\n", arg);
		else
			report_groups(sa, arg ? &want : NULL, &cb);
	} else if (!strcmp(what, "partitions")) {
		report_partitions(sa, &cb);
	}
	return cb.len;
}

int fsw_sa_path_text(struct fsw_sa *sa, uint16_t slid, uint16_t dlid,
		     const char *pkey, char *buf, size_t cap)
{
	struct fsw_sa_port s, d;
	struct sa_path q, r;
	uint64_t mask = 0;
	char sg[64], dg[64];
	char *end;
	unsigned long v;

	if (sa->ops->port_by_lid(sa->ctx, slid, &s) < 0 ||
	    sa->ops->port_by_lid(sa->ctx, dlid, &d) < 0) {
		snprintf(buf, cap, "no port with LID 0x%04x or 0x%04x", slid,
			 dlid);
		return -1;
	}
	memset(&q, 0, sizeof(q));
	if (pkey) {
		v = strtoul(pkey, &end, 0);
		if (*end || !v || v > 0xffff) {
			snprintf(buf, cap, "bad P_Key '%s'", pkey);
			return -1;
		}
		q.pkey = (uint16_t)v;
		mask |= SA_PR_PKEY;
	}
	if (path_compute(sa, &s, &d, mask, &q, &r) < 0) {
		snprintf(buf, cap, "no path from %s to %s%s%s (NO_RECORDS: "
			 "no shared P_Key, or a port is down)", s.name, d.name,
			 pkey ? " in P_Key " : "", pkey ? pkey : "");
		return -1;
	}
	fab_gid_to_str(&r.sgid, sg, sizeof(sg));
	fab_gid_to_str(&r.dgid, dg, sizeof(dg));
	snprintf(buf, cap, "sgid %s\ndgid %s\nslid 0x%04x\ndlid 0x%04x\n"
		 "pkey 0x%04x\nsl %u\nmtu %d\nrate %u (%u Gb/s)\n"
		 "packet_life %u\nreversible %u\n", sg, dg, r.slid, r.dlid,
		 r.pkey, r.sl, fab_mtu_to_bytes(r.mtu), r.rate,
		 sa_rate_tenths_gbps(r.rate) / 10, r.life, r.reversible);
	return 0;
}

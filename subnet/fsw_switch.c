// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ibfabricd's switch.  Owns the node table (names, GUIDs, LIDs, port
 * states, P_Key tables), queue pairs, multicast attachments, the counters,
 * and the forwarding pipeline with the checks a switch and the receiving
 * HCA make (IBTA vol. 1: 9.6 packet checks, 10.9 P_Key and Q_Key rules).
 *
 * The SM/SA (fsw_sa.c) is used only through fsw_sa.h: it decides which
 * MLIDs exist and which port receives which, and is told when ports come
 * and go.  It reaches the node table only through sa_ops below.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "conf/counters.h"
#include "inet/byteorder.h"
#include "subnet/fsw.h"
#include "subnet/fsw_cm.h"
#include "subnet/fsw_fault.h"
#include "subnet/fsw_report.h"
#include "subnet/fsw_sa.h"
#include "fabric/ib_pkt.h"
#include "fabric/ib_rc.h"
#include "fabric/cm_mad.h"
#include "fabric/sa_mad.h"
#include "subnet/partitions.h"

#define FSW_FIRST_LID	2	/* above the SM's, FSW_SA_LID */
#define FSW_MAX_UNICAST_LID 0xBFFF
#define FSW_FIRST_QPN	0x48	/* as mlx HCAs start, above QP0/1 */
#define FSW_PORT_MTU	5	/* 4096, unless --mtu says otherwise */
#define FSW_MLIDS	(FAB_LID_MCAST_MAX - FAB_LID_MCAST_MIN + 1)
#define FSW_GUID_OUI	0x0002c9ull	/* looks like an HCA GUID */

/* A multicast attachment: the QPs attached to an MLID. */
struct fsw_mgroup {
	uint16_t mlid;
	union fab_gid mgid;
	struct fsw_qp **members;
	unsigned int nmembers, cap;
};

struct fsw_qp {
	struct fsw_node *node;
	void *owner;		/* the caller's, for ops->deliver */
	uint32_t qpn;
	uint32_t qkey;
	uint16_t pkey_index;
	uint16_t pkey;
	int privileged;
	int gsi;		/* a MAD agent on the node's QP1 */
	int rc;			/* reliable connected */
	uint8_t gsi_class;	/* its management class */
	const void *proc;	/* a MAD agent's process, for the SA */
	uint16_t *mlids;	/* groups this QP is attached to */
	unsigned int nmlids, mlids_cap;
	struct fsw_qp *next;	/* in node->qps */
};

struct fsw_node {
	char name[FSP_NODE_MAX];
	uint64_t node_guid;
	uint64_t port_guid;
	uint16_t lid;
	int port_up;
	unsigned int nprocs;	/* attached processes */
	uint16_t pkeys[FAB_MAX_PKEYS];
	unsigned int npkeys;
	uint32_t next_qpn;
	struct fsw_qp *qps;
	uint64_t tx_packets, rx_packets;
	struct fsw_node *guid_next;	/* in fsw.by_guid */
	struct fsw_node *name_next;	/* in fsw.by_name */
};

struct fsw {
	const struct prtn_conf *pc;
	const struct fsw_ops *ops;
	void *ctx;
	struct fsw_sa *sa;
	struct fsw_cm *cm;
	/* what the CMs' MADs are sent as: QP1 of the node's kernel */
	struct fsw_qp cm_qp;
	struct fsw_stats stats;
	struct fsw_node **nodes;	/* in attach order */
	unsigned int nnodes, nodes_cap;
	/* chained hashes of nodes_cap buckets (a power of two), by port
	 * GUID for the SA and by name for attaching: no lookup walks the
	 * node table */
	struct fsw_node **by_guid, **by_name;
	struct fsw_node *by_lid[FSW_MAX_UNICAST_LID + 1];
	struct fsw_mgroup *groups[FSW_MLIDS];	/* attachments, by MLID */
	uint16_t next_lid;
	/* --lid-file: the LIDs an earlier run gave (a guid2lid table):
	 * the port GUID each LID is kept for, and the pairs in load order */
	uint64_t *lid_guid;
	uint64_t *res_guid;
	uint16_t *res_lid;
	unsigned int nres, res_cap;
	uint8_t port_mtu;		/* every port's MTU code */
	struct fsw_fault fault;
	int faults_on;
	uint8_t held[IB_MAX_PKT];	/* --reorder: one packet held back */
	size_t held_len;
	const void *held_proc;		/* the process that sent it */
};

static void input(struct fsw *sw, struct fsw_node *from,
		  const struct fsw_qp *from_qp, const uint8_t *pkt, size_t len,
		  int vcrc);

static const char *const drop_names[FSW_DROP_MAX] = {
	[FSW_DROP_TRUNCATED] = "truncated",
	[FSW_DROP_BAD_PKTLEN] = "bad_pktlen",
	[FSW_DROP_BAD_VCRC] = "bad_vcrc",
	[FSW_DROP_BAD_ICRC] = "bad_icrc",
	[FSW_DROP_BAD_LVER] = "bad_lver",
	[FSW_DROP_BAD_LNH] = "bad_lnh",
	[FSW_DROP_BAD_GRH] = "bad_grh",
	[FSW_DROP_BAD_TVER] = "bad_tver",
	[FSW_DROP_BAD_OPCODE] = "bad_opcode",
	[FSW_DROP_BAD_SLID] = "bad_slid",
	[FSW_DROP_SEND_PKEY] = "send_pkey",
	[FSW_DROP_QKEY_PRIVILEGED] = "qkey_privileged",
	[FSW_DROP_TOO_LONG] = "too_long",
	[FSW_DROP_UNKNOWN_DLID] = "unknown_dlid",
	[FSW_DROP_UNKNOWN_QP] = "unknown_qp",
	[FSW_DROP_UNKNOWN_MLID] = "unknown_mlid",
	[FSW_DROP_MCAST_NO_GRH] = "mcast_no_grh",
	[FSW_DROP_MCAST_QPN] = "mcast_qpn",
	[FSW_DROP_PORT_DOWN] = "port_down",
	[FSW_DROP_PKEY_MISMATCH] = "pkey_mismatch",
	[FSW_DROP_QKEY_MISMATCH] = "qkey_mismatch",
	[FSW_DROP_RX_OVERRUN] = "rx_overrun",
	[FSW_DROP_FAULT_LOSS] = "fault_loss",
	[FSW_DROP_BAD_SRCQP] = "bad_srcqp",
	[FSW_DROP_MCAST_NOT_MEMBER] = "mcast_not_member",
	[FSW_DROP_BAD_MAD] = "bad_mad",
	[FSW_DROP_BAD_RING] = "bad_ring",
	[FSW_DROP_BAD_TRANSPORT] = "bad_transport",
	[FSW_DROP_BAD_RC] = "bad_rc_header",
};

/* ib_pkt_err -> drop reason */
static const enum fsw_drop pkt_err_drop[IB_PKT_ERR_MAX] = {
	[IB_PKT_TRUNCATED] = FSW_DROP_TRUNCATED,
	[IB_PKT_BAD_PKTLEN] = FSW_DROP_BAD_PKTLEN,
	[IB_PKT_BAD_VCRC] = FSW_DROP_BAD_VCRC,
	[IB_PKT_BAD_ICRC] = FSW_DROP_BAD_ICRC,
	[IB_PKT_BAD_LVER] = FSW_DROP_BAD_LVER,
	[IB_PKT_BAD_LNH] = FSW_DROP_BAD_LNH,
	[IB_PKT_BAD_GRH] = FSW_DROP_BAD_GRH,
	[IB_PKT_BAD_TVER] = FSW_DROP_BAD_TVER,
	[IB_PKT_BAD_OPCODE] = FSW_DROP_BAD_OPCODE,
};


const char *fsw_drop_name(enum fsw_drop d)
{
	return (unsigned int)d < FSW_DROP_MAX ? drop_names[d] : "unknown";
}

/* ---- the node table as the SA sees it ----------------------------------- */

/* A port's GID: the default subnet prefix fe80:: and its port GUID. */
static void node_gid(const struct fsw_node *n, union fab_gid *gid)
{
	memset(gid, 0, sizeof(*gid));
	gid->raw[0] = 0xfe;
	gid->raw[1] = 0x80;
	be64_put(gid->raw + 8, n->port_guid);
}

static struct fsw_node *node_by_lid(const struct fsw *sw, uint16_t lid)
{
	return lid <= FSW_MAX_UNICAST_LID ? sw->by_lid[lid] : NULL;
}

/* FNV-1a: the names' hash, and the GUIDs made from them. */
static uint64_t name_hash(const char *name)
{
	uint64_t h = 0xcbf29ce484222325ull;

	while (*name) {
		h ^= (uint8_t)*name++;
		h *= 0x100000001b3ull;
	}
	return h;
}

static unsigned int guid_bucket(const struct fsw *sw, uint64_t guid)
{
	/* multiplicative (Fibonacci) hashing: every bit of the GUID moves
	 * the bucket, not only the low ones */
	return (unsigned int)((guid * 0x9E3779B97F4A7C15ull) >> 32) &
	       (sw->nodes_cap - 1);
}

static unsigned int name_bucket(const struct fsw *sw, const char *name)
{
	return (unsigned int)name_hash(name) & (sw->nodes_cap - 1);
}

static struct fsw_node *node_by_guid(const struct fsw *sw, uint64_t port_guid)
{
	struct fsw_node *n;

	if (!sw->nodes_cap)
		return NULL;
	for (n = sw->by_guid[guid_bucket(sw, port_guid)]; n; n = n->guid_next)
		if (n->port_guid == port_guid)
			return n;
	return NULL;
}

static void node_hash(struct fsw *sw, struct fsw_node *n)
{
	unsigned int b = guid_bucket(sw, n->port_guid);

	n->guid_next = sw->by_guid[b];
	sw->by_guid[b] = n;
	b = name_bucket(sw, n->name);
	n->name_next = sw->by_name[b];
	sw->by_name[b] = n;
}

/* Room for one more node: the table and both hashes double. */
static int nodes_grow(struct fsw *sw)
{
	unsigned int cap = sw->nodes_cap ? sw->nodes_cap * 2 : 16, i;
	struct fsw_node **v = realloc(sw->nodes, cap * sizeof(*v));
	struct fsw_node **bg, **bn;

	if (!v)
		return -1;
	sw->nodes = v;
	bg = calloc(cap, sizeof(*bg));
	bn = calloc(cap, sizeof(*bn));
	if (!bg || !bn) {
		free(bg);
		free(bn);
		return -1;
	}
	free(sw->by_guid);
	free(sw->by_name);
	sw->by_guid = bg;
	sw->by_name = bn;
	sw->nodes_cap = cap;
	for (i = 0; i < sw->nnodes; i++)
		node_hash(sw, sw->nodes[i]);
	return 0;
}

static int sa_port(const struct fsw *sw, const struct fsw_node *n,
		   struct fsw_sa_port *p)
{
	if (!n)
		return -1;
	p->name = n->name;
	p->guid = n->port_guid;
	node_gid(n, &p->gid);
	p->lid = n->lid;
	p->mtu = sw->port_mtu;
	p->up = n->port_up;
	p->pkeys = n->pkeys;
	p->npkeys = n->npkeys;
	return 0;
}

static int sa_port_by_lid(void *ctx, uint16_t lid, struct fsw_sa_port *p)
{
	const struct fsw *sw = ctx;

	return sa_port(sw, node_by_lid(sw, lid), p);
}

static int sa_port_by_guid(void *ctx, uint64_t guid, struct fsw_sa_port *p)
{
	const struct fsw *sw = ctx;

	return sa_port(sw, node_by_guid(sw, guid), p);
}

static int sa_port_at(void *ctx, unsigned int i, struct fsw_sa_port *p)
{
	const struct fsw *sw = ctx;

	return sa_port(sw, i < sw->nnodes ? sw->nodes[i] : NULL, p);
}

/* The SM's packets take the pipeline without the sender's checks: they
 * come from no node. */
static void sa_send(void *ctx, const uint8_t *pkt, size_t len)
{
	input(ctx, NULL, NULL, pkt, len, -1);
}

static void sa_count(void *ctx, enum fsw_sa_count what)
{
	struct fsw_stats *s = &((struct fsw *)ctx)->stats;

	switch (what) {
	case FSW_SA_ANSWERED:
		s->sa_requests++;
		break;
	case FSW_SA_ANSWERED_ERR:
		s->sa_errors++;
		break;
	case FSW_SA_JOIN:
		s->sa_joins++;
		break;
	case FSW_SA_LEAVE:
		s->sa_leaves++;
		break;
	case FSW_SA_PATH_QUERY:
		s->sa_path_queries++;
		break;
	case FSW_SA_TRAP_SENT:
		s->sm_traps++;
		break;
	case FSW_SA_ACK:
		s->sm_acks++;
		break;
	case FSW_SA_BAD_MAD:
		s->drop[FSW_DROP_BAD_MAD]++;
		break;
	}
}

static const struct fsw_sa_ops sa_ops = {
	.port_by_lid = sa_port_by_lid,
	.port_by_guid = sa_port_by_guid,
	.port_at = sa_port_at,
	.send = sa_send,
	.count = sa_count,
};

static int cm_port(const struct fsw_node *n, struct fsw_cm_port *p)
{
	if (!n)
		return -1;
	memset(p, 0, sizeof(*p));
	p->lid = n->lid;
	p->port_guid = n->port_guid;
	p->node_guid = n->node_guid;
	node_gid(n, &p->gid);
	p->up = n->port_up;
	return 0;
}

static int cm_port_by_lid(void *ctx, uint16_t lid, struct fsw_cm_port *p)
{
	struct fsw *sw = ctx;

	if (cm_port(lid && lid <= FSW_MAX_UNICAST_LID ? sw->by_lid[lid] :
		    NULL, p) < 0)
		return -1;
	p->mtu = sw->port_mtu;
	return 0;
}

static int cm_port_by_gid(void *ctx, const union fab_gid *gid,
			  struct fsw_cm_port *p)
{
	struct fsw *sw = ctx;
	union fab_gid g;
	struct fsw_node *n;

	n = node_by_guid(sw, be64_get(gid->raw + 8));
	if (!n)
		return -1;
	node_gid(n, &g);
	if (memcmp(g.raw, gid->raw, 16) || cm_port(n, p) < 0)
		return -1;
	p->mtu = sw->port_mtu;
	return 0;
}

/* A CM's MAD leaves the node's QP1 as the node's kernel sends it: through
 * the whole pipeline (capture, the sender's checks, faults). */
static void cm_send(void *ctx, uint16_t slid, uint16_t dlid, uint16_t pkey,
		    const uint8_t *mad)
{
	struct fsw *sw = ctx;
	uint8_t pkt[IB_MAX_PKT];
	struct fsw_node *n;
	size_t len;

	n = slid <= FSW_MAX_UNICAST_LID ? sw->by_lid[slid] : NULL;
	if (!n)
		return;
	len = ib_mad_build(slid, dlid, pkey,
			   (uint32_t)sw->stats.cm_mads_sent++, mad, MAD_LEN,
			   pkt, sizeof(pkt));
	if (len)
		input(sw, n, &sw->cm_qp, pkt, len, -1);
}

static void cm_event(void *ctx, void *owner, const struct fsp_cm_event *ev)
{
	struct fsw *sw = ctx;

	if (sw->ops->cm_event)
		sw->ops->cm_event(sw->ctx, owner, ev);
}

static uint64_t cm_now_ms(void *ctx)
{
	struct fsw *sw = ctx;
	struct timespec ts;

	if (sw->ops->now_ms)
		return sw->ops->now_ms(sw->ctx);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static const struct fsw_cm_ops cm_ops = {
	.port_by_lid = cm_port_by_lid,
	.port_by_gid = cm_port_by_gid,
	.send = cm_send,
	.event = cm_event,
	.now_ms = cm_now_ms,
};

struct fsw_cm *fsw_cm(struct fsw *sw)
{
	return sw->cm;
}

struct fsw *fsw_new(const struct prtn_conf *pc, const struct fsw_ops *ops,
		    void *ctx)
{
	struct fsw *sw = calloc(1, sizeof(*sw));

	if (!sw)
		return NULL;
	sw->pc = pc;
	sw->ops = ops;
	sw->ctx = ctx;
	sw->next_lid = FSW_FIRST_LID;
	sw->port_mtu = FSW_PORT_MTU;
	sw->cm_qp.qpn = 1;
	sw->cm_qp.qkey = FAB_QP1_QKEY;
	sw->cm_qp.privileged = 1;
	sw->cm_qp.gsi = 1;
	sw->cm_qp.gsi_class = MAD_CLASS_CM;
	sw->sa = fsw_sa_new(pc, &sa_ops, sw);
	sw->cm = fsw_cm_new(&cm_ops, sw);
	if (!sw->sa || !sw->cm) {
		fsw_sa_free(sw->sa);
		fsw_cm_free(sw->cm);
		free(sw);
		return NULL;
	}
	return sw;
}

static void mgroup_free(struct fsw_mgroup *g)
{
	if (g) {
		free(g->members);
		free(g);
	}
}

void fsw_free(struct fsw *sw)
{
	unsigned int i;

	if (!sw)
		return;
	for (i = 0; i < sw->nnodes; i++) {
		struct fsw_node *n = sw->nodes[i];

		while (n->qps)
			fsw_qp_destroy(sw, n->qps);
		free(n);
	}
	fsw_cm_free(sw->cm);
	fsw_sa_free(sw->sa);
	free(sw->lid_guid);
	free(sw->res_guid);
	free(sw->res_lid);
	for (i = 0; i < FSW_MLIDS; i++)
		mgroup_free(sw->groups[i]);
	free(sw->nodes);
	free(sw->by_guid);
	free(sw->by_name);
	free(sw);
}

int fsw_set_port_mtu(struct fsw *sw, uint8_t mtu_code)
{
	if (mtu_code < 1 || mtu_code > 5 || sw->nnodes)
		return -1;
	sw->port_mtu = mtu_code;
	return 0;
}

void fsw_set_faults(struct fsw *sw, const struct fsw_fault_cfg *cfg)
{
	fsw_fault_init(&sw->fault, cfg);
	sw->faults_on = cfg->loss > 0 || cfg->dup > 0 || cfg->reorder > 0;
}

const struct fsw_stats *fsw_stats(const struct fsw *sw)
{
	return &sw->stats;
}

void fsw_count_qp_recycled(struct fsw *sw)
{
	sw->stats.qps_recycled++;
}

void fsw_count_ctl_malformed(struct fsw *sw)
{
	sw->stats.ctl_malformed++;
}

/* Stable GUIDs from names (FNV-1a), so captures and configs repeat. */
static uint64_t name_guid(const char *name)
{
	return FSW_GUID_OUI << 40 | (name_hash(name) & 0xfffffffffeull);
}

struct fsw_node *fsw_node_find(struct fsw *sw, const char *name)
{
	struct fsw_node *n;

	if (!sw->nodes_cap)
		return NULL;
	for (n = sw->by_name[name_bucket(sw, name)]; n; n = n->name_next)
		if (!strcmp(n->name, name))
			return n;
	return NULL;
}

unsigned int fsw_node_groups(const struct fsw *sw, const struct fsw_node *node)
{
	return fsw_sa_port_groups(sw->sa, node->lid);
}

/* Node GUIDs are even and each port's GUID is its node's | 1. */
static int guid_taken(const struct fsw *sw, uint64_t guid)
{
	return node_by_guid(sw, guid | 1) != NULL;
}

struct fsw_node *fsw_node_at(const struct fsw *sw, unsigned int i)
{
	return i < sw->nnodes ? sw->nodes[i] : NULL;
}

int fsw_lid_reserve(struct fsw *sw, uint64_t port_guid, uint16_t lid)
{
	unsigned int i;

	if (lid < FSW_FIRST_LID || lid > FSW_MAX_UNICAST_LID || !port_guid ||
	    (sw->lid_guid && sw->lid_guid[lid]) || sw->nnodes) {
		errno = EINVAL;
		return -1;
	}
	for (i = 0; i < sw->nres; i++)
		if (sw->res_guid[i] == port_guid) {
			errno = EEXIST;
			return -1;
		}
	if (!sw->lid_guid) {
		sw->lid_guid = calloc(FSW_MAX_UNICAST_LID + 1,
				      sizeof(*sw->lid_guid));
		if (!sw->lid_guid)
			return -1;
	}
	if (sw->nres == sw->res_cap) {
		unsigned int cap = sw->res_cap ? 2 * sw->res_cap : 64;
		uint64_t *g = realloc(sw->res_guid, cap * sizeof(*g));
		uint16_t *l;

		if (!g)
			return -1;
		sw->res_guid = g;
		l = realloc(sw->res_lid, cap * sizeof(*l));
		if (!l)
			return -1;
		sw->res_lid = l;
		sw->res_cap = cap;
	}
	sw->res_guid[sw->nres] = port_guid;
	sw->res_lid[sw->nres++] = lid;
	sw->lid_guid[lid] = port_guid;
	return 0;
}

/* The LID a new port gets: the one kept for its GUID if any, else the
 * next one neither taken nor kept for another port; 0: none left. */
static uint16_t pick_lid(struct fsw *sw, uint64_t port_guid)
{
	unsigned int i;

	for (i = 0; i < sw->nres; i++)
		if (sw->res_guid[i] == port_guid &&
		    !sw->by_lid[sw->res_lid[i]])
			return sw->res_lid[i];
	while (sw->next_lid <= FSW_MAX_UNICAST_LID &&
	       (sw->by_lid[sw->next_lid] ||
		(sw->lid_guid && sw->lid_guid[sw->next_lid])))
		sw->next_lid++;
	if (sw->next_lid > FSW_MAX_UNICAST_LID)
		return 0;
	return sw->next_lid++;
}

struct fsw_node *fsw_node_attach(struct fsw *sw, const char *name,
				 char *err, size_t errlen)
{
	struct fsw_node *n = fsw_node_find(sw, name);
	uint64_t guid;

	if (n) {
		n->nprocs++;
		return n;
	}
	if (!fsp_node_name_ok(name)) {
		snprintf(err, errlen, "invalid node name '%.64s' (letters, "
			 "digits, '-', '_', '.'; at most %d)", name,
			 FSP_NODE_MAX - 1);
		return NULL;
	}
	if (sw->nnodes == sw->nodes_cap && nodes_grow(sw) < 0)
		goto nomem;
	n = calloc(1, sizeof(*n));
	if (!n)
		goto nomem;
	snprintf(n->name, sizeof(n->name), "%s", name);
	guid = name_guid(name);
	while (guid_taken(sw, guid))	/* hash collision: next even GUID */
		guid = FSW_GUID_OUI << 40 | ((guid + 2) & 0xfffffffffeull);
	n->node_guid = guid;
	n->port_guid = guid | 1;
	n->lid = pick_lid(sw, n->port_guid);
	if (!n->lid) {
		free(n);
		snprintf(err, errlen, "no unicast LIDs left");
		return NULL;
	}
	n->port_up = 1;
	n->next_qpn = FSW_FIRST_QPN;
	/* more partitions than table slots: the first FAB_MAX_PKEYS stay,
	 * as an HCA's table holds what fits */
	prtn_pkey_table(sw->pc, n->name, n->port_guid, 0, n->pkeys,
			FAB_MAX_PKEYS, &n->npkeys);
	n->nprocs = 1;
	sw->nodes[sw->nnodes++] = n;
	node_hash(sw, n);
	sw->by_lid[n->lid] = n;
	fsw_sa_port_up(sw->sa, n->lid);	/* trap 64: port in service */
	return n;
nomem:
	snprintf(err, errlen, "out of memory");
	return NULL;
}

/* The node keeps its GUID and LID for the subnet's lifetime, like a
 * port that went quiet; only its processes' QPs go away. */
void fsw_node_detach(struct fsw *sw, struct fsw_node *node, const void *proc)
{
	/* a MAD it sent that --reorder holds back reaches the SA first, as
	 * what it sent before exiting is on the wire */
	if (proc && sw->held_len && sw->held_proc == proc)
		fsw_flush(sw);
	/* the last process went: the port's memberships go, as the kernel
	 * leaves for a process that exits; another one: only what that
	 * process alone joined (the kernel counts its local joiners) */
	if (node->nprocs && !--node->nprocs)
		fsw_sa_port_gone(sw->sa, node->lid);
	else
		fsw_sa_process_gone(sw->sa, node->lid, proc);
}

static void raise_event(struct fsw *sw, struct fsw_node *n,
			enum fab_event_type type)
{
	sw->stats.events++;
	if (sw->ops->event)
		sw->ops->event(sw->ctx, n, type);
}

int fsw_port_set(struct fsw *sw, struct fsw_node *node, int up)
{
	if (!up == !node->port_up)
		return 0;
	node->port_up = up;
	if (!up)
		fsw_sa_port_gone(sw->sa, node->lid);
	else
		fsw_sa_port_up(sw->sa, node->lid);
	raise_event(sw, node, up ? FAB_EV_PORT_ACTIVE : FAB_EV_PORT_ERR);
	return 1;
}

unsigned int fsw_client_reregister(struct fsw *sw)
{
	unsigned int i, n = 0;

	fsw_sa_forget_all(sw->sa);
	for (i = 0; i < sw->nnodes; i++) {
		if (sw->nodes[i]->port_up) {
			raise_event(sw, sw->nodes[i],
				    FAB_EV_CLIENT_REREGISTER);
			n++;
		}
	}
	return n;
}

/*
 * The table a port gets from new partitions, index-stable as real SMs
 * make it: a key the port keeps stays at its index (the same key first,
 * then the same partition with the other membership), and new keys take
 * free slots, the lowest first; those that were never used before those
 * a removed key just left, so that a queue pair still holding a removed
 * key's index does not find another partition there at once.  Slot 0 is
 * filled only with the key that wants index 0 (the default partition's,
 * or an indx0 one).  Returns the table's length.
 */
static unsigned int pkeys_merge(const uint16_t *old, unsigned int nold,
				const uint16_t *want, unsigned int nwant,
				uint16_t *out)
{
	unsigned char used[FAB_MAX_PKEYS] = { 0 };
	unsigned int i, j, pass, n = 0;

	memset(out, 0, FAB_MAX_PKEYS * sizeof(*out));
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < nold; i++) {
			if (!old[i] || out[i])
				continue;
			for (j = 0; j < nwant; j++) {
				if (used[j] || !want[j])
					continue;
				if (pass ? (want[j] & 0x7fff) !=
					   (old[i] & 0x7fff) :
					   want[j] != old[i])
					continue;
				out[i] = want[j];
				used[j] = 1;
				break;
			}
		}
	}
	for (j = 0; j < nwant; j++) {
		int slot = -1;

		if (used[j] || !want[j])
			continue;
		if (j == 0 && !out[0]) {
			slot = 0;
		} else {
			for (pass = 0; pass < 2 && slot < 0; pass++)
				for (i = 1; i < FAB_MAX_PKEYS && slot < 0; i++)
					if (!out[i] && (pass || i >= nold ||
							!old[i]))
						slot = (int)i;
		}
		if (slot < 0)
			break;	/* the table is full: as an HCA's */
		out[slot] = want[j];
	}
	for (i = 0; i < FAB_MAX_PKEYS; i++)
		if (out[i])
			n = i + 1;
	return n;
}

unsigned int fsw_set_partitions(struct fsw *sw, const struct prtn_conf *pc,
				unsigned int *groups_deleted)
{
	uint16_t want[FAB_MAX_PKEYS], nt[FAB_MAX_PKEYS];
	unsigned int i, nwant, nn, changed = 0, gone;
	struct fsw_qp *q;

	sw->pc = pc;
	for (i = 0; i < sw->nnodes; i++) {
		struct fsw_node *n = sw->nodes[i];

		prtn_pkey_table(pc, n->name, n->port_guid, 0, want,
				FAB_MAX_PKEYS, &nwant);
		nn = pkeys_merge(n->pkeys, n->npkeys, want, nwant, nt);
		if (nn == n->npkeys &&
		    !memcmp(nt, n->pkeys, nn * sizeof(*nt)))
			continue;
		memcpy(n->pkeys, nt, sizeof(n->pkeys));
		n->npkeys = nn;
		/* a QP holds an index: it sends and receives with whatever
		 * the table holds there now (nothing, if the slot emptied) */
		for (q = n->qps; q; q = q->next)
			if (!q->gsi)
				q->pkey = q->pkey_index < nn ?
					  nt[q->pkey_index] : 0;
		fsw_sa_port_pkeys_changed(sw->sa, n->lid);
		raise_event(sw, n, FAB_EV_PKEY_CHANGE);
		changed++;
	}
	gone = fsw_sa_set_partitions(sw->sa, pc);
	if (groups_deleted)
		*groups_deleted = gone;
	return changed;
}

void fsw_port_info(const struct fsw *sw, const struct fsw_node *node,
		   struct fsp_port_info *pi)
{
	union fab_gid gid;
	unsigned int i;

	(void)sw;
	memset(pi, 0, sizeof(*pi));
	pi->state = node->port_up ? FAB_PORT_ACTIVE : FAB_PORT_DOWN;
	pi->lid = node->lid;
	pi->sm_lid = FSW_SA_LID;
	pi->active_mtu = sw->port_mtu;
	pi->port_num = 1;
	pi->node_guid = node->node_guid;
	pi->port_guid = node->port_guid;
	node_gid(node, &gid);
	memcpy(pi->gid, gid.raw, sizeof(pi->gid));
	pi->npkeys = node->npkeys;
	for (i = 0; i < node->npkeys && i < 32; i++)
		pi->pkeys[i] = node->pkeys[i];
}

const char *fsw_node_name(const struct fsw_node *node)
{
	return node->name;
}

uint16_t fsw_node_lid(const struct fsw_node *node)
{
	return node->lid;
}

struct fsw_qp *fsw_qp_find(struct fsw_node *node, uint32_t qpn)
{
	struct fsw_qp *q;

	for (q = node->qps; q; q = q->next)
		if (q->qpn == qpn)
			return q;
	return NULL;
}

uint32_t fsw_qp_qpn(const struct fsw_qp *qp)
{
	return qp->qpn;
}

uint16_t fsw_qp_pkey(const struct fsw_qp *qp)
{
	return qp->pkey;
}

struct fsw_node *fsw_qp_node(const struct fsw_qp *qp)
{
	return qp->node;
}

struct fsw_qp *fsw_qp_create(struct fsw *sw, struct fsw_node *node,
			     void *owner, uint32_t qkey, uint16_t pkey_index,
			     int privileged, char *err, size_t errlen)
{
	struct fsw_qp *q;

	(void)sw;
	if (pkey_index >= node->npkeys || !node->pkeys[pkey_index]) {
		snprintf(err, errlen, "P_Key index %u not in node %s's table "
			 "(%u entries)", pkey_index, node->name, node->npkeys);
		return NULL;
	}
	if ((qkey & FAB_QKEY_CONTROLLED) && !privileged) {
		snprintf(err, errlen, "Q_Key 0x%08x is controlled; only "
			 "privileged QPs may use it", qkey);
		return NULL;
	}
	q = calloc(1, sizeof(*q));
	if (!q) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	/* QPNs are per node and unique across its processes; 24 bits, never
	 * 0, 1 or 0xFFFFFF, reused only after wrapping */
	do {
		q->qpn = node->next_qpn++;
		if (node->next_qpn >= 0xFFFFFF)
			node->next_qpn = FSW_FIRST_QPN;
	} while (fsw_qp_find(node, q->qpn));
	q->node = node;
	q->owner = owner;
	q->qkey = qkey;
	q->pkey_index = pkey_index;
	q->pkey = node->pkeys[pkey_index];
	q->privileged = privileged;
	q->next = node->qps;
	node->qps = q;
	return q;
}

int fsw_qp_renumber(struct fsw_node *node, struct fsw_qp *qp, uint32_t qpn)
{
	if (qpn < 2 || qpn >= 0xFFFFFF) {
		errno = EINVAL;
		return -1;
	}
	if (qp->qpn == qpn)
		return 0;
	if (fsw_qp_find(node, qpn)) {
		errno = EADDRINUSE;
		return -1;
	}
	qp->qpn = qpn;
	/* later QPs are numbered after it, as the HCA's would have been */
	if (qpn >= node->next_qpn && qpn + 1 < 0xFFFFFF)
		node->next_qpn = qpn + 1;
	return 0;
}

struct fsw_qp *fsw_gsi_create(struct fsw *sw, struct fsw_node *node,
			      void *owner, const void *proc,
			      uint8_t mgmt_class, char *err, size_t errlen)
{
	struct fsw_qp *q = fsw_qp_create(sw, node, owner, FAB_QP1_QKEY, 0, 1,
					 err, errlen);

	if (q) {
		q->gsi = 1;
		q->gsi_class = mgmt_class;
		q->proc = proc;
	}
	return q;
}

struct fsw_qp *fsw_rc_qp_create(struct fsw *sw, struct fsw_node *node,
				void *owner, uint16_t pkey_index, char *err,
				size_t errlen)
{
	struct fsw_qp *q = fsw_qp_create(sw, node, owner, 0, pkey_index, 0,
					 err, errlen);

	if (q)
		q->rc = 1;
	return q;
}

int fsw_qp_is_rc(const struct fsw_qp *qp)
{
	return qp->rc;
}

static struct fsw_mgroup **group_slot(struct fsw *sw, uint16_t mlid)
{
	return &sw->groups[mlid - FAB_LID_MCAST_MIN];
}

static void group_remove(struct fsw *sw, struct fsw_mgroup *g,
			 struct fsw_qp *qp)
{
	unsigned int i;

	for (i = 0; i < g->nmembers; i++) {
		if (g->members[i] == qp) {
			g->members[i] = g->members[--g->nmembers];
			break;
		}
	}
	if (!g->nmembers) {
		*group_slot(sw, g->mlid) = NULL;
		mgroup_free(g);
	}
}

void fsw_qp_destroy(struct fsw *sw, struct fsw_qp *qp)
{
	struct fsw_qp **pp;
	unsigned int i;

	/* the HCA's QP is gone: its connection with it, as ib_cm sees a
	 * destroyed QP's id */
	if (qp->rc && sw->cm)
		fsw_cm_qp_gone(sw->cm, qp->node->lid, qp->qpn);
	for (i = 0; i < qp->nmlids; i++) {
		struct fsw_mgroup *g = *group_slot(sw, qp->mlids[i]);

		if (g)
			group_remove(sw, g, qp);
	}
	for (pp = &qp->node->qps; *pp; pp = &(*pp)->next) {
		if (*pp == qp) {
			*pp = qp->next;
			break;
		}
	}
	free(qp->mlids);
	free(qp);
}

static int grow(void **v, unsigned int *cap, size_t elem)
{
	unsigned int ncap = *cap ? *cap * 2 : 4;
	void *nv = realloc(*v, ncap * elem);

	if (!nv)
		return -1;
	*v = nv;
	*cap = ncap;
	return 0;
}

int fsw_mcast_attach(struct fsw *sw, struct fsw_qp *qp,
		     const union fab_gid *mgid, uint16_t mlid, char *err,
		     size_t errlen)
{
	struct fsw_mgroup **slot, *g;
	unsigned int i;

	if (mlid < FAB_LID_MCAST_MIN || mlid > FAB_LID_MCAST_MAX ||
	    mgid->raw[0] != 0xff) {
		snprintf(err, errlen, "attach: MLID 0x%04x / MGID is not "
			 "multicast", mlid);
		return -1;
	}
	slot = group_slot(sw, mlid);
	g = *slot;
	if (g && memcmp(g->mgid.raw, mgid->raw, 16)) {
		snprintf(err, errlen, "attach: MLID 0x%04x belongs to another "
			 "MGID", mlid);
		return -1;
	}
	if (g) {
		for (i = 0; i < g->nmembers; i++)
			if (g->members[i] == qp)
				return 0;	/* already attached */
	} else {
		g = calloc(1, sizeof(*g));
		if (!g)
			goto nomem;
		g->mlid = mlid;
		g->mgid = *mgid;
		*slot = g;
	}
	if ((g->nmembers == g->cap &&
	     grow((void **)&g->members, &g->cap, sizeof(*g->members))) ||
	    (qp->nmlids == qp->mlids_cap &&
	     grow((void **)&qp->mlids, &qp->mlids_cap, sizeof(*qp->mlids)))) {
		if (!g->nmembers) {
			*slot = NULL;
			mgroup_free(g);
		}
		goto nomem;
	}
	g->members[g->nmembers++] = qp;
	qp->mlids[qp->nmlids++] = mlid;
	return 0;
nomem:
	snprintf(err, errlen, "out of memory");
	return -1;
}

int fsw_mcast_detach(struct fsw *sw, struct fsw_qp *qp,
		     const union fab_gid *mgid, uint16_t mlid, char *err,
		     size_t errlen)
{
	struct fsw_mgroup *g;
	unsigned int i;

	if (mlid < FAB_LID_MCAST_MIN || mlid > FAB_LID_MCAST_MAX)
		goto notattached;
	g = *group_slot(sw, mlid);
	if (!g || memcmp(g->mgid.raw, mgid->raw, 16))
		goto notattached;
	for (i = 0; i < qp->nmlids; i++) {
		if (qp->mlids[i] == mlid) {
			qp->mlids[i] = qp->mlids[--qp->nmlids];
			group_remove(sw, g, qp);
			return 0;
		}
	}
notattached:
	snprintf(err, errlen, "detach: QP 0x%06x is not attached to MLID "
		 "0x%04x", qp->qpn, mlid);
	return -1;
}

void fsw_drop(struct fsw *sw, enum fsw_drop why)
{
	sw->stats.drop[why]++;
}

static void drop(struct fsw *sw, enum fsw_drop why)
{
	sw->stats.drop[why]++;
}

/* The receiving QP's checks (IBTA 10.9.3 and 10.2.4): the packet's P_Key
 * must match the QP's in its 15-bit key with at least one full member, and
 * the Q_Key must equal the QP's. */
static int rx_accept(struct fsw *sw, const struct fsw_qp *qp, uint16_t pkey,
		     uint32_t qkey)
{
	if ((pkey & 0x7fff) != (qp->pkey & 0x7fff) ||
	    !((pkey | qp->pkey) & 0x8000)) {
		drop(sw, FSW_DROP_PKEY_MISMATCH);
		return 0;
	}
	if (qkey != qp->qkey) {
		drop(sw, FSW_DROP_QKEY_MISMATCH);
		return 0;
	}
	return 1;
}

static void deliver(struct fsw *sw, struct fsw_qp *qp, const uint8_t *pkt,
		    size_t len)
{
	if (sw->ops->deliver(sw->ctx, qp->owner, pkt, len) < 0) {
		drop(sw, FSW_DROP_RX_OVERRUN);
		return;
	}
	sw->stats.delivered++;
	sw->stats.delivered_bytes += len;
	qp->node->rx_packets++;
}

void fsw_undeliver(struct fsw *sw, struct fsw_qp *qp, unsigned int n,
		   uint64_t bytes)
{
	sw->stats.delivered -= n;
	sw->stats.delivered_bytes -= bytes;
	qp->node->rx_packets -= n;
	sw->stats.drop[FSW_DROP_RX_OVERRUN] += n;
}

/* A packet for the SM's QP1, sent by process proc (NULL: none known):
 * the SA answers it (fsw_sa.c). */
static void to_sm(struct fsw *sw, const uint8_t *pkt, size_t len,
		  const void *proc)
{
	struct ib_ud u;

	if (ib_ud_parse(pkt, len, &u) != IB_PKT_OK) {
		drop(sw, FSW_DROP_BAD_MAD);
		return;
	}
	if (u.bth.destqp != 1) {
		drop(sw, FSW_DROP_UNKNOWN_QP);
		return;
	}
	if (u.deth.qkey != FAB_QP1_QKEY) {
		drop(sw, FSW_DROP_QKEY_MISMATCH);
		return;
	}
	fsw_sa_input(sw->sa, &u, proc);
}

/* A MAD for a node's QP1: a response goes to the agent whose number is
 * in the high half of the TransactionID (as the kernel MAD layer routes
 * them); a request or report to every agent of its class. */
static void deliver_gsi(struct fsw *sw, struct fsw_node *dst,
			const uint8_t *pkt, size_t len,
			const struct ib_bth *bth, const struct ib_deth *deth,
			size_t payload_off)
{
	const uint8_t *mad = pkt + payload_off;
	struct fsw_qp *q;
	uint32_t agent;
	int delivered = 0, pi;

	if (len < payload_off + MAD_HDR_LEN + IB_ICRC_LEN + IB_VCRC_LEN) {
		drop(sw, FSW_DROP_BAD_MAD);
		return;
	}
	pi = fab_pkey_index(dst->pkeys, dst->npkeys, bth->pkey);
	if (pi < 0 || !((bth->pkey | dst->pkeys[pi]) & 0x8000)) {
		drop(sw, FSW_DROP_PKEY_MISMATCH);
		return;
	}
	if (deth->qkey != FAB_QP1_QKEY) {
		drop(sw, FSW_DROP_QKEY_MISMATCH);
		return;
	}
	/* the CM's messages are all Sends of class 0x07 version 2: they are
	 * the node's CM's, as ib_cm owns them in a host kernel */
	if (mad[1] == MAD_CLASS_CM && mad[2] == CM_CLASS_VERSION &&
	    mad[3] == MAD_METHOD_SEND) {
		struct ib_ud u;

		if (ib_ud_parse_checked(pkt, len, &u) != IB_PKT_OK) {
			drop(sw, FSW_DROP_BAD_MAD);
			return;
		}
		sw->stats.cm_mads_rcvd++;
		dst->rx_packets++;
		fsw_cm_input(sw->cm, dst->lid, &u);
		return;
	}
	agent = be32_get(mad + 8);	/* the TID's high half */
	for (q = dst->qps; q; q = q->next) {
		if (!q->gsi || q->gsi_class != mad[1])
			continue;
		if ((mad[3] & MAD_METHOD_RESP) && q->qpn != agent)
			continue;
		deliver(sw, q, pkt, len);
		delivered = 1;
	}
	if (!delivered)
		drop(sw, FSW_DROP_UNKNOWN_QP);
}

/* Route a packet that passed the ingress checks; proc is the sending MAD
 * agent's process, or NULL. */
static void forward(struct fsw *sw, const uint8_t *pkt, size_t len,
		    const void *proc)
{
	struct ib_lrh lrh;
	struct ib_bth bth;
	struct ib_deth deth;
	size_t off = IB_LRH_LEN;
	struct fsw_node *dst;
	struct fsw_qp *qp;

	ib_lrh_decode(pkt, &lrh);
	if (lrh.lnh == IB_LNH_IBA_GLOBAL)
		off += IB_GRH_LEN;
	ib_bth_decode(pkt + off, &bth);
	/* RC packets have no DETH (and may end sooner than one would) */
	if (ib_rc_op_flags(bth.opcode))
		memset(&deth, 0, sizeof(deth));
	else
		ib_deth_decode(pkt + off + IB_BTH_LEN, &deth);

	if (lrh.dlid >= FAB_LID_MCAST_MIN && lrh.dlid <= FAB_LID_MCAST_MAX) {
		struct fsw_mgroup *g = *group_slot(sw, lrh.dlid);
		unsigned int i;

		/* the SM programs an MLID into the switches when a group
		 * exists; its member ports get the packets */
		if (!fsw_sa_mlid_known(sw->sa, lrh.dlid)) {
			drop(sw, FSW_DROP_UNKNOWN_MLID);
			return;
		}
		if (!g) {
			sw->stats.mcast_no_receivers++;
			return;
		}
		for (i = 0; i < g->nmembers; i++) {
			qp = g->members[i];
			if (!qp->node->port_up) {
				drop(sw, FSW_DROP_PORT_DOWN);
				continue;
			}
			if (!fsw_sa_port_receives(sw->sa, qp->node->lid,
						  lrh.dlid)) {
				drop(sw, FSW_DROP_MCAST_NOT_MEMBER);
				continue;
			}
			if (rx_accept(sw, qp, bth.pkey, deth.qkey))
				deliver(sw, qp, pkt, len);
		}
		return;
	}
	if (lrh.dlid == FSW_SA_LID) {
		to_sm(sw, pkt, len, proc);
		return;
	}
	if (lrh.dlid == 0 || lrh.dlid > FSW_MAX_UNICAST_LID ||
	    !(dst = sw->by_lid[lrh.dlid])) {
		drop(sw, FSW_DROP_UNKNOWN_DLID);
		return;
	}
	if (!dst->port_up) {
		drop(sw, FSW_DROP_PORT_DOWN);
		return;
	}
	if (ib_rc_op_flags(bth.opcode)) {
		qp = fsw_qp_find(dst, bth.destqp);
		if (!qp) {
			drop(sw, FSW_DROP_UNKNOWN_QP);
			return;
		}
		if (!qp->rc) {
			drop(sw, FSW_DROP_BAD_TRANSPORT);
			return;
		}
		/* the receiving HCA's P_Key check (10.9.3); the rest of an
		 * RC packet is the receiving QP's to judge */
		if ((bth.pkey & 0x7fff) != (qp->pkey & 0x7fff) ||
		    !((bth.pkey | qp->pkey) & 0x8000)) {
			drop(sw, FSW_DROP_PKEY_MISMATCH);
			return;
		}
		sw->stats.rc_packets++;
		deliver(sw, qp, pkt, len);
		return;
	}
	if (bth.destqp == 1) {
		deliver_gsi(sw, dst, pkt, len, &bth, &deth,
			    off + IB_BTH_LEN + IB_DETH_LEN +
			    (bth.opcode == IB_OP_UD_SEND_ONLY_IMM ? 4 : 0));
		return;
	}
	qp = fsw_qp_find(dst, bth.destqp);
	if (!qp || qp->gsi) {
		drop(sw, FSW_DROP_UNKNOWN_QP);
		return;
	}
	if (qp->rc) {
		drop(sw, FSW_DROP_BAD_TRANSPORT);
		return;
	}
	if (rx_accept(sw, qp, bth.pkey, deth.qkey))
		deliver(sw, qp, pkt, len);
}

int fsw_flush(struct fsw *sw)
{
	uint8_t tmp[IB_MAX_PKT];
	size_t len = sw->held_len;

	if (!len)
		return 0;
	memcpy(tmp, sw->held, len);
	sw->held_len = 0;
	forward(sw, tmp, len, sw->held_proc);
	return 1;
}

int fsw_held(const struct fsw *sw)
{
	return sw->held_len != 0;
}

/* Loss, duplication and reordering, decided per packet from the seed. */
static void forward_faulty(struct fsw *sw, const uint8_t *pkt, size_t len,
			   const void *proc)
{
	struct fsw_fault *f = &sw->fault;

	if (fsw_fault_roll(f, f->cfg.loss)) {
		drop(sw, FSW_DROP_FAULT_LOSS);
		return;
	}
	if (!sw->held_len && fsw_fault_roll(f, f->cfg.reorder)) {
		/* hold this one; it leaves after the next packet (or when
		 * ibfabricd's flush timer fires) */
		memcpy(sw->held, pkt, len);
		sw->held_len = len;
		sw->held_proc = proc;
		sw->stats.fault_reorder++;
		return;
	}
	forward(sw, pkt, len, proc);
	if (fsw_fault_roll(f, f->cfg.dup)) {
		sw->stats.fault_dup++;
		forward(sw, pkt, len, proc);
	}
	fsw_flush(sw);
}

/* The ingress checks of an RC packet whose framing and CRCs passed: its
 * headers and payload against the opcode and the port MTU, the sender's
 * LID and P_Key, a unicast destination. */
static void input_rc(struct fsw *sw, struct fsw_node *from,
		     const struct fsw_qp *from_qp, const uint8_t *pkt,
		     size_t len, const struct ib_lrh *lrh)
{
	struct ib_rc r;
	enum ib_rc_err e;
	int pi;

	if (from_qp && !from_qp->rc) {
		drop(sw, FSW_DROP_BAD_TRANSPORT);
		return;
	}
	e = ib_rc_parse_checked(pkt, len,
				(unsigned int)fab_mtu_to_bytes(sw->port_mtu),
				&r);
	if (e != IB_RC_OK) {
		drop(sw, (int)e < (int)IB_PKT_ERR_MAX ? pkt_err_drop[e] :
		     FSW_DROP_BAD_RC);
		return;
	}
	if (from) {
		pi = fab_pkey_index(from->pkeys, from->npkeys, r.bth.pkey);
		if (pi < 0 || from->pkeys[pi] != r.bth.pkey) {
			drop(sw, FSW_DROP_SEND_PKEY);
			return;
		}
		from->tx_packets++;
	}
	if (lrh->dlid >= FAB_LID_MCAST_MIN) {
		drop(sw, FSW_DROP_BAD_TRANSPORT);
		return;
	}
	if (sw->faults_on)
		forward_faulty(sw, pkt, len, NULL);
	else
		forward(sw, pkt, len, NULL);
}

static void input(struct fsw *sw, struct fsw_node *from,
		  const struct fsw_qp *from_qp, const uint8_t *pkt, size_t len,
		  int vcrc)
{
	struct ib_lrh lrh;
	struct ib_grh grh;
	struct ib_bth bth;
	struct ib_deth deth;
	enum ib_pkt_err err;
	size_t off, end;
	struct fsw_qp *src;
	int pi;

	sw->stats.rx_packets++;
	sw->stats.rx_bytes += len;
	if (sw->ops->capture)
		sw->ops->capture(sw->ctx, pkt, len);
	if (len > IB_MAX_PKT) {
		drop(sw, FSW_DROP_TOO_LONG);
		return;
	}
	err = ib_pkt_check_vcrc(pkt, len, vcrc, &lrh, &grh, &off);
	if (err) {
		drop(sw, pkt_err_drop[err]);
		return;
	}
	if (from && lrh.slid != from->lid) {
		drop(sw, FSW_DROP_BAD_SLID);
		return;
	}
	if (from && !from->port_up) {
		drop(sw, FSW_DROP_PORT_DOWN);
		return;
	}
	end = len - IB_ICRC_LEN - IB_VCRC_LEN;
	if (end - off < IB_BTH_LEN) {
		drop(sw, FSW_DROP_TRUNCATED);
		return;
	}
	ib_bth_decode(pkt + off, &bth);
	if (bth.tver != 0) {
		drop(sw, FSW_DROP_BAD_TVER);
		return;
	}
	if (ib_rc_op_flags(bth.opcode)) {
		input_rc(sw, from, from_qp, pkt, len, &lrh);
		return;
	}
	if (bth.opcode != IB_OP_UD_SEND_ONLY &&
	    bth.opcode != IB_OP_UD_SEND_ONLY_IMM) {
		drop(sw, FSW_DROP_BAD_OPCODE);
		return;
	}
	if (from_qp && from_qp->rc) {
		drop(sw, FSW_DROP_BAD_TRANSPORT);
		return;
	}
	if (end - off < IB_BTH_LEN + IB_DETH_LEN + bth.padcnt +
			(bth.opcode == IB_OP_UD_SEND_ONLY_IMM ? 4u : 0u)) {
		drop(sw, FSW_DROP_TRUNCATED);
		return;
	}
	ib_deth_decode(pkt + off + IB_BTH_LEN, &deth);
	/* the payload (immediate data excluded) fits the port MTU */
	if (end - off - IB_BTH_LEN - IB_DETH_LEN - bth.padcnt -
	    (bth.opcode == IB_OP_UD_SEND_ONLY_IMM ? 4u : 0u) >
	    (size_t)fab_mtu_to_bytes(sw->port_mtu)) {
		drop(sw, FSW_DROP_TOO_LONG);
		return;
	}
	if (from) {
		/* an HCA only sends P_Keys from its own table */
		pi = fab_pkey_index(from->pkeys, from->npkeys, bth.pkey);
		if (pi < 0 || from->pkeys[pi] != bth.pkey) {
			drop(sw, FSW_DROP_SEND_PKEY);
			return;
		}
		/* the HCA writes the sending QP's number */
		if (from_qp &&
		    deth.srcqp != (from_qp->gsi ? 1u : from_qp->qpn)) {
			drop(sw, FSW_DROP_BAD_SRCQP);
			return;
		}
		/* controlled Q_Keys only from privileged QPs (QP1) */
		if (deth.qkey & FAB_QKEY_CONTROLLED) {
			src = from_qp ? NULL : fsw_qp_find(from, deth.srcqp);
			if (from_qp ? !from_qp->privileged :
			    (!src || !src->privileged)) {
				drop(sw, FSW_DROP_QKEY_PRIVILEGED);
				return;
			}
		}
		from->tx_packets++;
	}
	if (lrh.dlid >= FAB_LID_MCAST_MIN && lrh.dlid <= FAB_LID_MCAST_MAX) {
		if (lrh.lnh != IB_LNH_IBA_GLOBAL || grh.dgid.raw[0] != 0xff) {
			drop(sw, FSW_DROP_MCAST_NO_GRH);
			return;
		}
		if (bth.destqp != FAB_MCAST_QPN) {
			drop(sw, FSW_DROP_MCAST_QPN);
			return;
		}
	}
	if (sw->faults_on)
		forward_faulty(sw, pkt, len, from_qp ? from_qp->proc : NULL);
	else
		forward(sw, pkt, len, from_qp ? from_qp->proc : NULL);
}

void fsw_input(struct fsw *sw, struct fsw_node *from, const uint8_t *pkt,
	       size_t len)
{
	input(sw, from, NULL, pkt, len, -1);
}

void fsw_input_qp(struct fsw *sw, struct fsw_qp *qp, const uint8_t *pkt,
		  size_t len)
{
	input(sw, qp->node, qp, pkt, len, -1);
}

void fsw_input_qp_vcrc(struct fsw *sw, struct fsw_qp *qp, const uint8_t *pkt,
		       size_t len, uint16_t vcrc)
{
	input(sw, qp->node, qp, pkt, len, vcrc);
}

void fsw_report_printf(struct counter_buf *cb, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	counter_buf_vprintf(cb, fmt, ap);
	va_end(ap);
}

static const char *stats_drop_reason(unsigned int i)
{
	return drop_names[i];
}

/* ibfabricctl stats, in ibfabricd(8)'s words. */
/* The switch's counters and their sum of drops, which ibfabricctl shows
 * where it always did (fifth) though no struct fsw_stats field holds it. */
struct stats_view {
	struct fsw_stats s;
	uint64_t dropped;
};

static const struct counter_desc fsw_counters[] = {
	COUNTER("rx_packets", struct stats_view, s.rx_packets,
		"Packets into the switch."),
	COUNTER("rx_bytes", struct stats_view, s.rx_bytes,
		"Bytes of packets into the switch."),
	COUNTER("delivered", struct stats_view, s.delivered,
		"Packets handed to receiving queue pairs."),
	COUNTER("delivered_bytes", struct stats_view, s.delivered_bytes,
		"Bytes of packets handed to receiving queue pairs."),
	COUNTER("dropped", struct stats_view, dropped,
		"Packets the switch dropped, all reasons."),
	COUNTER("fault_dup", struct stats_view, s.fault_dup,
		"Packets duplicated by the fault injector."),
	COUNTER("fault_reorder", struct stats_view, s.fault_reorder,
		"Packets held back by the fault injector."),
	COUNTER("ctl_malformed", struct stats_view, s.ctl_malformed,
		"Malformed requests on the control socket."),
	COUNTER("mcast_no_receivers", struct stats_view, s.mcast_no_receivers,
		"Multicast packets to a known MLID with no attached QP."),
	COUNTER("sa_requests", struct stats_view, s.sa_requests,
		"MADs the SA answered."),
	COUNTER("sa_errors", struct stats_view, s.sa_errors,
		"SA answers with a non-zero status."),
	COUNTER("sa_joins", struct stats_view, s.sa_joins,
		"MCMemberRecord joins."),
	COUNTER("sa_leaves", struct stats_view, s.sa_leaves,
		"MCMemberRecord leaves."),
	COUNTER("sa_path_queries", struct stats_view, s.sa_path_queries,
		"PathRecord queries."),
	COUNTER("sm_traps", struct stats_view, s.sm_traps,
		"Reports sent to subscribers."),
	COUNTER("sm_acks", struct stats_view, s.sm_acks,
		"ReportResp answers taken from subscribers."),
	COUNTER("events", struct stats_view, s.events,
		"Port events raised to nodes."),
	COUNTER("rc_packets", struct stats_view, s.rc_packets,
		"RC packets handed to receiving queue pairs."),
	COUNTER("cm_mads_sent", struct stats_view, s.cm_mads_sent,
		"CM MADs the nodes' connection managers sent."),
	COUNTER("cm_mads_rcvd", struct stats_view, s.cm_mads_rcvd,
		"CM MADs handed to a node's connection manager."),
	COUNTER("qps_recycled", struct stats_view, s.qps_recycled,
		"RC queue pairs renewed in place for a node's pool."),
	COUNTER_ARRAY("drop", struct stats_view, s.drop, stats_drop_reason,
		      "Packets the switch dropped, by reason."),
	COUNTERS_END
};

static void report_stats(struct fsw *sw, struct counter_buf *cb)
{
	struct counter_out o = { counter_buf_vprintf, cb };
	struct stats_view v = { .s = sw->stats };
	int i;

	for (i = 0; i < FSW_DROP_MAX; i++)
		v.dropped += v.s.drop[i];
	counters_text(&o, fsw_counters, &v, "", 0);
}

static void report_nodes(struct fsw *sw, struct counter_buf *cb)
{
	unsigned int i, k;

	fsw_report_printf(cb, "%-16s %-18s %-6s %-6s %-5s %-8s %-8s %s\n",
			  "NODE", "PORT_GUID", "LID", "STATE", "PROCS", "TX",
			  "RX", "PKEYS");
	for (i = 0; i < sw->nnodes; i++) {
		struct fsw_node *n = sw->nodes[i];

		fsw_report_printf(cb, "%-16s 0x%016llx 0x%04x %-6s %-5u "
				  "%-8llu %-8llu", n->name,
				  (unsigned long long)n->port_guid, n->lid,
				  n->port_up ? "ACTIVE" : "DOWN", n->nprocs,
				  (unsigned long long)n->tx_packets,
				  (unsigned long long)n->rx_packets);
		for (k = 0; k < n->npkeys; k++)
			fsw_report_printf(cb, "%s0x%04x", k ? "," : " ",
					  n->pkeys[k]);
		fsw_report_printf(cb, "\n");
	}
}

static void report_qps(struct fsw *sw, struct counter_buf *cb)
{
	unsigned int i, k;
	struct fsw_qp *q;

	fsw_report_printf(cb, "%-16s %-8s %-10s %-6s %s\n", "NODE", "QPN",
			  "QKEY", "PKEY", "MLIDS");
	for (i = 0; i < sw->nnodes; i++) {
		for (q = sw->nodes[i]->qps; q; q = q->next) {
			fsw_report_printf(cb, "%-16s 0x%06x 0x%08x 0x%04x",
					  q->node->name, q->qpn, q->qkey,
					  q->pkey);
			for (k = 0; k < q->nmlids; k++)
				fsw_report_printf(cb, "%s0x%04x",
						  k ? "," : " ", q->mlids[k]);
			fsw_report_printf(cb, "\n");
		}
	}
}

static void report_mcast(struct fsw *sw, struct counter_buf *cb)
{
	unsigned int i, k;
	char gid[64];

	fsw_report_printf(cb, "%-6s %-40s %s\n", "MLID", "MGID", "MEMBERS");
	for (i = 0; i < FSW_MLIDS; i++) {
		struct fsw_mgroup *g = sw->groups[i];

		if (!g)
			continue;
		fab_gid_to_str(&g->mgid, gid, sizeof(gid));
		fsw_report_printf(cb, "0x%04x %-40s", g->mlid, gid);
		for (k = 0; k < g->nmembers; k++)
			fsw_report_printf(cb, "%s%s:0x%06x", k ? "," : " ",
					  g->members[k]->node->name,
					  g->members[k]->qpn);
		fsw_report_printf(cb, "\n");
	}
}

size_t fsw_report(struct fsw *sw, const char *what, char *buf, size_t cap)
{
	struct counter_buf cb = { buf, 0, cap };

	if (!cap)
		return 0;
	buf[0] = '\0';
	if (!strcmp(what, "stats"))
		report_stats(sw, &cb);
	else if (!strcmp(what, "nodes"))
		report_nodes(sw, &cb);
	else if (!strcmp(what, "qps"))
		report_qps(sw, &cb);
	else if (!strcmp(what, "mcast"))
		report_mcast(sw, &cb);
	else if (!strcmp(what, "cm"))
		return fsw_cm_report(sw->cm, buf, cap);
	return cb.len;
}

int fsw_ctl(struct fsw *sw, const char *cmd, char *buf, size_t cap)
{
	char verb[32], a1[FSP_NODE_MAX], a2[FSP_NODE_MAX], a3[16], extra[2];
	struct fsw_node *n;
	int na;

	if (!cap)
		return -1;
	buf[0] = '\0';
	na = sscanf(cmd, "%31s %63s %63s %15s %1s", verb, a1, a2, a3, extra);
	if (na < 1)
		goto usage;
	if (na == 1 && fsw_report(sw, verb, buf, cap))
		return 0;
	if (!strcmp(verb, "groups") || !strcmp(verb, "partitions")) {
		union fab_gid g;

		if (na > 2 || (na == 2 && !strcmp(verb, "partitions")))
			goto usage;
		if (na == 2 && fab_gid_from_str(a1, &g) < 0) {
			snprintf(buf, cap, "not a GID: '%s'", a1);
			return -1;
		}
		fsw_sa_report(sw->sa, verb, na == 2 ? a1 : NULL, buf, cap);
		return 0;
	}
	if (!strcmp(verb, "path")) {
		struct fsw_node *d;

		if (na < 3 || na > 4)
			goto usage;
		n = fsw_node_find(sw, a1);
		d = fsw_node_find(sw, a2);
		if (!n || !d) {
			snprintf(buf, cap, "no node '%s'", n ? a2 : a1);
			return -1;
		}
		return fsw_sa_path_text(sw->sa, n->lid, d->lid,
					na == 4 ? a3 : NULL, buf, cap);
	}
	if (!strcmp(verb, "rereg") && na == 1) {
		snprintf(buf, cap, "CLIENT_REREGISTER raised on %u node(s); "
			 "memberships forgotten\n", fsw_client_reregister(sw));
		return 0;
	}
	if (!strcmp(verb, "port") && na == 3 &&
	    (!strcmp(a2, "up") || !strcmp(a2, "down"))) {
		n = fsw_node_find(sw, a1);
		if (!n) {
			snprintf(buf, cap, "no node '%s'", a1);
			return -1;
		}
		if (!fsw_port_set(sw, n, !strcmp(a2, "up")))
			snprintf(buf, cap, "node %s: port already %s\n", a1,
				 n->port_up ? "ACTIVE" : "DOWN");
		else
			snprintf(buf, cap, "node %s: port %s\n", a1,
				 n->port_up ? "ACTIVE" : "DOWN");
		return 0;
	}
usage:
	snprintf(buf, cap, "unknown command '%.64s' (stats, nodes, qps, mcast, cm, "
		 "groups [MGID], partitions, path SRC DST [PKEY], rereg, "
		 "port NODE up|down)", cmd);
	return -1;
}

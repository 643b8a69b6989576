// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The in-memory fabric provider (see prov_mem.h).  Everything is fixed-size
 * arrays: a test that outgrows them fails loudly (abort) rather than
 * silently losing what it wanted to look at.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "fabric/fabric_prov.h"
#include "tests/unit/prov_mem.h"

#define MEM_SENT_MAX	256
#define MEM_RX_MAX	64
#define MEM_MADS_MAX	64
#define MEM_REQS_MAX	256
#define MEM_GROUPS_MAX	64
#define MEM_PATHS_MAX	16
#define MEM_ATTACH_MAX	32
#define MEM_QPS_MAX	4
#define MEM_EVENTS_MAX	16

struct mem_rx {
	uint16_t slid;
	uint32_t src_qp;
	size_t len;
	uint8_t data[MEM_PKT_MAX];
};

struct mem_qp {
	struct fab_qp base;
	struct mem_dev *md;
	int efd;
	struct mem_rx rx[MEM_RX_MAX];
	unsigned int rx_head, rx_n;
	union fab_gid attached[MEM_ATTACH_MAX];
	unsigned int nattached;
};

struct mem_agent {
	struct fab_mad_agent base;
	struct mem_dev *md;
	int efd;
	uint8_t mads[MEM_MADS_MAX][MAD_LEN];
	unsigned int head, n;
};

struct mem_group {
	union fab_gid mgid;
	struct sa_mcmember rec;	/* the group's parameters */
};

struct mem_path {
	union fab_gid gid;
	uint16_t lid;
	uint8_t sl;
};

struct mem_dev {
	struct fab_dev base;
	struct fab_port_attr pa;
	int efd;
	enum fab_event_type events[MEM_EVENTS_MAX];
	unsigned int nevents;
	struct mem_qp *qps[MEM_QPS_MAX];
	unsigned int nqps;
	struct mem_agent *agent;
	struct mem_pkt sent[MEM_SENT_MAX];
	unsigned int nsent;
	/* the SA */
	enum mem_sa_mode join_mode, path_mode;
	struct mem_sa_req reqs[MEM_REQS_MAX];
	unsigned int nreqs;
	struct mem_group groups[MEM_GROUPS_MAX];
	unsigned int ngroups;
	struct mem_path paths[MEM_PATHS_MAX];
	unsigned int npaths;
	int any_path;		/* answer a path to any GID */
	unsigned int nah;	/* address handles alive */
};

static const struct fab_provider mem_provider;

static struct mem_dev *mem_dev_of(struct fab_dev *dev)
{
	return (struct mem_dev *)dev;
}

static void mem_full(const char *what)
{
	fprintf(stderr, "prov_mem: %s table full\n", what);
	abort();
}

static void mem_efd_set(int efd, int readable)
{
	uint64_t v = 1;

	if (readable) {
		if (write(efd, &v, sizeof(v)) < 0)
			abort();
	} else if (read(efd, &v, sizeof(v)) < 0 && errno != EAGAIN) {
		abort();
	}
}

void mem_port_gid(union fab_gid *gid)
{
	static const uint8_t g[16] = { 0xfe, 0x80, [8] = 0x00, 0x02, 0xc9,
				       0x03, 0x00, 0x01, 0x23, 0x45 };

	memcpy(gid->raw, g, 16);
}

/* ---- device and events --------------------------------------------------- */

static struct fab_dev *mem_open(const char *arg, const char *node, char *err,
				size_t errlen)
{
	struct mem_dev *md = calloc(1, sizeof(*md));

	(void)arg;
	(void)node;
	if (!md) {
		fab_fail(err, errlen, ENOMEM, "mem: out of memory");
		return NULL;
	}
	md->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (md->efd < 0) {
		fab_fail(err, errlen, errno, "mem: eventfd: %s",
			 strerror(errno));
		free(md);
		return NULL;
	}
	md->pa.state = FAB_PORT_ACTIVE;
	md->pa.lid = MEM_LID;
	md->pa.sm_lid = MEM_SM_LID;
	md->pa.active_mtu = MEM_MTU;
	md->pa.port_num = 1;
	md->pa.port_guid = 0x0002c90300012345ull;
	md->pa.node_guid = md->pa.port_guid;
	mem_port_gid(&md->pa.gid);
	md->pa.link_layer = FAB_LINK_IB;
	md->pa.sgid_type = FAB_GID_IB;
	md->pa.sgid = md->pa.gid;
	md->pa.pkeys[0] = 0xffff;
	md->pa.pkeys[1] = 0x8001;
	md->pa.npkeys = 2;
	md->base.prov = &mem_provider;
	return &md->base;
}

static void mem_close(struct fab_dev *dev)
{
	struct mem_dev *md = mem_dev_of(dev);

	close(md->efd);
	free(md);
}

static int mem_query_port(struct fab_dev *dev, struct fab_port_attr *attr,
			  char *err, size_t errlen)
{
	(void)err;
	(void)errlen;
	*attr = mem_dev_of(dev)->pa;
	return 0;
}

static int mem_dev_fd(struct fab_dev *dev)
{
	return mem_dev_of(dev)->efd;
}

static int mem_get_event(struct fab_dev *dev, struct fab_event *ev)
{
	struct mem_dev *md = mem_dev_of(dev);

	if (!md->nevents)
		return 0;
	ev->type = md->events[0];
	memmove(md->events, md->events + 1,
		--md->nevents * sizeof(md->events[0]));
	if (!md->nevents)
		mem_efd_set(md->efd, 0);
	return 1;
}

void mem_port_event(struct fab_dev *dev, enum fab_event_type type)
{
	struct mem_dev *md = mem_dev_of(dev);

	if (type == FAB_EV_PORT_ERR)
		md->pa.state = FAB_PORT_DOWN;
	else if (type == FAB_EV_PORT_ACTIVE)
		md->pa.state = FAB_PORT_ACTIVE;
	if (md->nevents == MEM_EVENTS_MAX)
		mem_full("event");
	md->events[md->nevents++] = type;
	mem_efd_set(md->efd, 1);
}

void mem_set_pkeys(struct fab_dev *dev, const uint16_t *pkeys,
		   unsigned int n)
{
	struct mem_dev *md = mem_dev_of(dev);

	if (n > FAB_MAX_PKEYS)
		mem_full("P_Key");
	memset(md->pa.pkeys, 0, sizeof(md->pa.pkeys));
	memcpy(md->pa.pkeys, pkeys, n * sizeof(*pkeys));
	md->pa.npkeys = n;
}

/* ---- queue pairs ----------------------------------------------------------- */

static struct fab_qp *mem_qp_create(struct fab_dev *dev,
				    const struct fab_qp_init *init, char *err,
				    size_t errlen)
{
	struct mem_dev *md = mem_dev_of(dev);
	struct mem_qp *q;

	if (md->nqps == MEM_QPS_MAX) {
		fab_fail(err, errlen, ENOSPC, "mem: too many queue pairs");
		return NULL;
	}
	q = calloc(1, sizeof(*q));
	if (!q) {
		fab_fail(err, errlen, ENOMEM, "mem: out of memory");
		return NULL;
	}
	q->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (q->efd < 0) {
		fab_fail(err, errlen, errno, "mem: eventfd: %s",
			 strerror(errno));
		free(q);
		return NULL;
	}
	q->md = md;
	q->base.dev = dev;
	q->base.qpn = 0x100 + md->nqps;
	q->base.type = init->type;
	q->base.qkey = init->qkey;
	q->base.pkey_index = init->pkey_index;
	md->qps[md->nqps++] = q;
	return &q->base;
}

static void mem_qp_destroy(struct fab_qp *qp)
{
	struct mem_qp *q = (struct mem_qp *)qp;
	struct mem_dev *md = q->md;
	unsigned int i;

	for (i = 0; i < md->nqps; i++) {
		if (md->qps[i] == q) {
			md->qps[i] = md->qps[--md->nqps];
			break;
		}
	}
	close(q->efd);
	free(q);
}

static int mem_qp_fd(struct fab_qp *qp)
{
	return ((struct mem_qp *)qp)->efd;
}

static int mem_qp_send(struct fab_qp *qp, const struct fab_send_wr *wr, int n)
{
	struct mem_dev *md = ((struct mem_qp *)qp)->md;
	struct mem_pkt *p;
	int i;

	for (i = 0; i < n; i++) {
		if (md->nsent == MEM_SENT_MAX)
			mem_full("sent packet");
		if (wr[i].len > MEM_PKT_MAX)
			return i ? i : -1;
		p = &md->sent[md->nsent++];
		p->ah = wr[i].ah->attr;
		p->qpn = wr[i].remote_qpn;
		p->qkey = wr[i].remote_qkey & FAB_QKEY_CONTROLLED ?
			  qp->qkey : wr[i].remote_qkey;
		p->len = wr[i].len;
		memcpy(p->data, wr[i].buf, wr[i].len);
	}
	return n;
}

static int mem_qp_recv(struct fab_qp *qp, struct fab_recv *rc, int n)
{
	struct mem_qp *q = (struct mem_qp *)qp;
	struct mem_rx *r;
	int i;

	for (i = 0; i < n && q->rx_n; i++) {
		r = &q->rx[q->rx_head];
		q->rx_head = (q->rx_head + 1) % MEM_RX_MAX;
		q->rx_n--;
		memset(rc[i].buf, 0, rc[i].buf_len < FAB_GRH_LEN ?
		       rc[i].buf_len : FAB_GRH_LEN);
		rc[i].byte_len = (uint32_t)(FAB_GRH_LEN + r->len);
		rc[i].truncated = rc[i].byte_len > rc[i].buf_len;
		if (!rc[i].truncated)
			memcpy(rc[i].buf + FAB_GRH_LEN, r->data, r->len);
		rc[i].src_qp = r->src_qp;
		rc[i].slid = r->slid;
		rc[i].pkey_index = qp->pkey_index;
		rc[i].sl = 0;
		rc[i].grh_present = 1;
	}
	if (!q->rx_n)
		mem_efd_set(q->efd, 0);
	return i;
}

void mem_inject(struct fab_dev *dev, uint16_t slid, uint32_t src_qp,
		const void *data, size_t len)
{
	struct mem_dev *md = mem_dev_of(dev);
	struct mem_qp *q;
	struct mem_rx *r;
	unsigned int i;

	if (len > MEM_PKT_MAX)
		mem_full("packet size");
	for (i = 0; i < md->nqps; i++) {
		q = md->qps[i];
		if (q->rx_n == MEM_RX_MAX)
			mem_full("receive queue");
		r = &q->rx[(q->rx_head + q->rx_n++) % MEM_RX_MAX];
		r->slid = slid;
		r->src_qp = src_qp;
		r->len = len;
		memcpy(r->data, data, len);
		mem_efd_set(q->efd, 1);
	}
}

static int mem_attach(struct fab_qp *qp, const union fab_gid *mgid,
		      uint16_t mlid, char *err, size_t errlen)
{
	struct mem_qp *q = (struct mem_qp *)qp;

	(void)mlid;
	(void)err;
	(void)errlen;
	if (q->nattached == MEM_ATTACH_MAX)
		mem_full("attach");
	q->attached[q->nattached++] = *mgid;
	return 0;
}

static int mem_detach(struct fab_qp *qp, const union fab_gid *mgid,
		      uint16_t mlid, char *err, size_t errlen)
{
	struct mem_qp *q = (struct mem_qp *)qp;
	unsigned int i;

	(void)mlid;
	for (i = 0; i < q->nattached; i++) {
		if (!memcmp(q->attached[i].raw, mgid->raw, 16)) {
			q->attached[i] = q->attached[--q->nattached];
			return 0;
		}
	}
	return fab_fail(err, errlen, ENOENT,
			"mem: detach of a group not attached");
}

int mem_attached(struct fab_dev *dev, const union fab_gid *mgid)
{
	struct mem_dev *md = mem_dev_of(dev);
	unsigned int i, j;

	for (i = 0; i < md->nqps; i++)
		for (j = 0; j < md->qps[i]->nattached; j++)
			if (!memcmp(md->qps[i]->attached[j].raw, mgid->raw, 16))
				return 1;
	return 0;
}

uint32_t mem_qpn(struct fab_dev *dev)
{
	struct mem_dev *md = mem_dev_of(dev);

	return md->nqps ? md->qps[0]->base.qpn : 0;
}

static struct fab_ah *mem_ah_create(struct fab_dev *dev,
				    const struct fab_ah_attr *attr, char *err,
				    size_t errlen)
{
	struct fab_ah *ah = calloc(1, sizeof(*ah));

	if (!ah) {
		fab_fail(err, errlen, ENOMEM, "mem: out of memory");
		return NULL;
	}
	ah->dev = dev;
	ah->attr = *attr;
	mem_dev_of(dev)->nah++;
	return ah;
}

static void mem_ah_destroy(struct fab_ah *ah)
{
	mem_dev_of(ah->dev)->nah--;
	free(ah);
}

unsigned int mem_ah_live(struct fab_dev *dev)
{
	return mem_dev_of(dev)->nah;
}

void mem_sa_any_path(struct fab_dev *dev, int on)
{
	mem_dev_of(dev)->any_path = on;
}

unsigned int mem_sent_count(struct fab_dev *dev)
{
	return mem_dev_of(dev)->nsent;
}

const struct mem_pkt *mem_sent(struct fab_dev *dev, unsigned int i)
{
	struct mem_dev *md = mem_dev_of(dev);

	return i < md->nsent ? &md->sent[i] : NULL;
}

void mem_sent_clear(struct fab_dev *dev)
{
	mem_dev_of(dev)->nsent = 0;
}

/* ---- the SA ------------------------------------------------------------------ */

static void mem_mad_deliver(struct mem_dev *md, const uint8_t *mad)
{
	struct mem_agent *a = md->agent;

	if (!a)
		return;
	if (a->n == MEM_MADS_MAX)
		mem_full("MAD queue");
	memcpy(a->mads[(a->head + a->n++) % MEM_MADS_MAX], mad, MAD_LEN);
	mem_efd_set(a->efd, 1);
}

static void mem_sa_reply(struct mem_dev *md, const struct mem_sa_req *r,
			 uint16_t status, const void *rec, size_t rec_len)
{
	struct sa_hdr h = r->h;
	uint8_t mad[MAD_LEN];

	switch (r->h.mad.method) {
	case MAD_METHOD_DELETE:
		h.mad.method = MAD_METHOD_DELETE_RESP;
		break;
	case MAD_METHOD_GET_TABLE:
		h.mad.method = MAD_METHOD_GET_TABLE_RESP;
		break;
	default:
		h.mad.method = MAD_METHOD_GET_RESP;
		break;
	}
	h.mad.status = status;
	h.attr_offset = 0;
	sa_mad_build(&h, rec, rec_len, mad);
	mem_mad_deliver(md, mad);
}

static struct mem_group *mem_group_get(struct mem_dev *md,
				       const struct sa_mcmember *req,
				       uint64_t mask)
{
	struct mem_group *g;
	unsigned int i;

	for (i = 0; i < md->ngroups; i++)
		if (!memcmp(md->groups[i].mgid.raw, req->mgid.raw, 16))
			return &md->groups[i];
	if (md->ngroups == MEM_GROUPS_MAX)
		mem_full("group");
	/* created with the joiner's parameters where it gave them, as an
	 * SM does; the broadcast group's defaults otherwise */
	g = &md->groups[md->ngroups];
	memset(g, 0, sizeof(*g));
	g->mgid = req->mgid;
	g->rec.mgid = req->mgid;
	g->rec.mlid = (uint16_t)(FAB_LID_MCAST_MIN + md->ngroups);
	g->rec.qkey = mask & SA_MCM_QKEY ? req->qkey : MEM_QKEY;
	g->rec.pkey = mask & SA_MCM_PKEY ? req->pkey : 0xffff;
	g->rec.mtu_sel = SA_SEL_EQ;
	g->rec.mtu = mask & SA_MCM_MTU ? req->mtu : MEM_MTU;
	g->rec.rate_sel = SA_SEL_EQ;
	g->rec.rate = mask & SA_MCM_RATE ? req->rate : 3;
	g->rec.sl = mask & SA_MCM_SL ? req->sl : 0;
	g->rec.hop_limit = 0;
	g->rec.scope = req->mgid.raw[1] & 0xf;
	md->ngroups++;
	return g;
}

static void mem_sa_answer(struct mem_dev *md, struct mem_sa_req *r)
{
	uint8_t rec[SA_PATH_RECORD_LEN];
	enum mem_sa_mode mode;
	unsigned int i;

	r->answered = 1;
	if (r->h.mad.attr_id == SA_ATTR_MCMEMBER_RECORD) {
		struct sa_mcmember m;

		if (r->h.mad.method == MAD_METHOD_SET &&
		    md->join_mode == MEM_SA_REFUSE) {
			mem_sa_reply(md, r, SA_STATUS_REQ_INVALID, NULL, 0);
			return;
		}
		m = mem_group_get(md, &r->rec.mcm, r->h.comp_mask)->rec;
		m.port_gid = r->rec.mcm.port_gid;
		m.join_state = r->rec.mcm.join_state;
		sa_mcmember_encode(&m, rec);
		mem_sa_reply(md, r, 0, rec, SA_MCMEMBER_LEN);
		return;
	}
	mode = md->path_mode;
	for (i = 0; i < md->npaths; i++)
		if (!memcmp(md->paths[i].gid.raw, r->rec.path.dgid.raw, 16))
			break;
	if (mode != MEM_SA_REFUSE && (i < md->npaths || md->any_path)) {
		struct sa_path p;

		memset(&p, 0, sizeof(p));
		p.dgid = r->rec.path.dgid;
		p.sgid = r->rec.path.sgid;
		/* a port the test added, or any: LID from the last byte */
		p.dlid = i < md->npaths ? md->paths[i].lid :
			 (uint16_t)(0x100 | p.dgid.raw[15]);
		p.slid = md->pa.lid;
		p.pkey = r->rec.path.pkey;
		p.sl = i < md->npaths ? md->paths[i].sl : 0;
		p.mtu_sel = SA_SEL_EQ;
		p.mtu = MEM_MTU;
		p.rate_sel = SA_SEL_EQ;
		p.rate = 3;
		p.reversible = 1;
		p.numb_path = 1;
		sa_path_encode(&p, rec);
		mem_sa_reply(md, r, 0, rec, SA_PATH_RECORD_LEN);
		return;
	}
	mem_sa_reply(md, r, SA_STATUS_NO_RECORDS, NULL, 0);
}

static int mem_sa_holds(struct mem_dev *md, const struct mem_sa_req *r)
{
	if (r->h.mad.attr_id == SA_ATTR_MCMEMBER_RECORD)
		return r->h.mad.method == MAD_METHOD_SET &&
		       md->join_mode == MEM_SA_HOLD;
	return md->path_mode == MEM_SA_HOLD;
}

static void mem_sa_receive(struct mem_dev *md, const uint8_t *mad, size_t len)
{
	struct mem_sa_req *r;
	const uint8_t *p;
	enum sa_mad_err err;

	if (md->nreqs == MEM_REQS_MAX)
		mem_full("SA request");
	r = &md->reqs[md->nreqs];
	memset(r, 0, sizeof(*r));
	if (sa_mad_parse(mad, len, &r->h) != SA_MAD_OK)
		return;
	p = sa_mad_record(mad, len, &r->h, r->h.mad.attr_id, 0, &err);
	if (!p)
		return;
	if (r->h.mad.attr_id == SA_ATTR_MCMEMBER_RECORD)
		sa_mcmember_decode(p, &r->rec.mcm);
	else if (r->h.mad.attr_id == SA_ATTR_PATH_RECORD)
		sa_path_decode(p, &r->rec.path);
	else
		return;		/* InformInfo and the rest: not an SA we play */
	md->nreqs++;
	if (!mem_sa_holds(md, r))
		mem_sa_answer(md, r);
}

void mem_sa_release(struct fab_dev *dev)
{
	struct mem_dev *md = mem_dev_of(dev);
	unsigned int i;

	for (i = 0; i < md->nreqs; i++)
		if (!md->reqs[i].answered)
			mem_sa_answer(md, &md->reqs[i]);
}

void mem_sa_joins(struct fab_dev *dev, enum mem_sa_mode mode)
{
	mem_dev_of(dev)->join_mode = mode;
}

void mem_sa_paths(struct fab_dev *dev, enum mem_sa_mode mode)
{
	mem_dev_of(dev)->path_mode = mode;
}

void mem_sa_add_path(struct fab_dev *dev, const union fab_gid *gid,
		     uint16_t lid, uint8_t sl)
{
	struct mem_dev *md = mem_dev_of(dev);

	if (md->npaths == MEM_PATHS_MAX)
		mem_full("path");
	md->paths[md->npaths].gid = *gid;
	md->paths[md->npaths].lid = lid;
	md->paths[md->npaths].sl = sl;
	md->npaths++;
}

uint16_t mem_sa_mlid(struct fab_dev *dev, const union fab_gid *mgid)
{
	struct mem_dev *md = mem_dev_of(dev);
	unsigned int i;

	for (i = 0; i < md->ngroups; i++)
		if (!memcmp(md->groups[i].mgid.raw, mgid->raw, 16))
			return md->groups[i].rec.mlid;
	return 0;
}

unsigned int mem_sa_count(struct fab_dev *dev, uint8_t method, uint16_t attr,
			  const union fab_gid *mgid)
{
	struct mem_dev *md = mem_dev_of(dev);
	unsigned int i, n = 0;

	for (i = 0; i < md->nreqs; i++) {
		if (md->reqs[i].h.mad.method != method ||
		    md->reqs[i].h.mad.attr_id != attr)
			continue;
		if (mgid && (attr != SA_ATTR_MCMEMBER_RECORD ||
			     memcmp(md->reqs[i].rec.mcm.mgid.raw, mgid->raw,
				    16)))
			continue;
		n++;
	}
	return n;
}

unsigned int mem_sa_nreq(struct fab_dev *dev)
{
	return mem_dev_of(dev)->nreqs;
}

const struct mem_sa_req *mem_sa_req(struct fab_dev *dev, unsigned int i)
{
	struct mem_dev *md = mem_dev_of(dev);

	return i < md->nreqs ? &md->reqs[i] : NULL;
}

void mem_sa_clear(struct fab_dev *dev)
{
	struct mem_dev *md = mem_dev_of(dev);
	unsigned int i, keep = 0;

	/* held requests stay: they are still to be answered */
	for (i = 0; i < md->nreqs; i++)
		if (!md->reqs[i].answered)
			md->reqs[keep++] = md->reqs[i];
	md->nreqs = keep;
}

/* ---- the MAD agent -------------------------------------------------------- */

static struct fab_mad_agent *mem_mad_open(struct fab_dev *dev,
					  uint8_t mgmt_class, char *err,
					  size_t errlen)
{
	struct mem_dev *md = mem_dev_of(dev);
	struct mem_agent *a;

	if (md->agent) {
		fab_fail(err, errlen, EBUSY, "mem: one MAD agent per port");
		return NULL;
	}
	a = calloc(1, sizeof(*a));
	if (!a) {
		fab_fail(err, errlen, ENOMEM, "mem: out of memory");
		return NULL;
	}
	a->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (a->efd < 0) {
		fab_fail(err, errlen, errno, "mem: eventfd: %s",
			 strerror(errno));
		free(a);
		return NULL;
	}
	a->md = md;
	a->base.dev = dev;
	a->base.mgmt_class = mgmt_class;
	md->agent = a;
	return &a->base;
}

static void mem_mad_close(struct fab_mad_agent *agent)
{
	struct mem_agent *a = (struct mem_agent *)agent;

	a->md->agent = NULL;
	close(a->efd);
	free(a);
}

static int mem_mad_fd(struct fab_mad_agent *agent)
{
	return ((struct mem_agent *)agent)->efd;
}

static int mem_mad_send(struct fab_mad_agent *agent,
			const struct fab_mad_addr *to, const void *mad,
			size_t len)
{
	struct mem_dev *md = ((struct mem_agent *)agent)->md;

	/* a port that is down loses what it sends */
	if (md->pa.state != FAB_PORT_ACTIVE || to->lid != MEM_SM_LID)
		return 0;
	mem_sa_receive(md, mad, len);
	return 0;
}

static int mem_mad_recv(struct fab_mad_agent *agent, void *buf, size_t cap,
			struct fab_mad_addr *from)
{
	struct mem_agent *a = (struct mem_agent *)agent;

	if (!a->n)
		return 0;
	if (cap < MAD_LEN) {	/* a MAD buffer too small */
		errno = EINVAL;
		return -1;
	}
	memcpy(buf, a->mads[a->head], MAD_LEN);
	a->head = (a->head + 1) % MEM_MADS_MAX;
	if (!--a->n)
		mem_efd_set(a->efd, 0);
	memset(from, 0, sizeof(*from));
	from->lid = MEM_SM_LID;
	from->qpn = 1;
	from->qkey = FAB_QP1_QKEY;
	return MAD_LEN;
}

static const struct fab_provider mem_provider = {
	.name = "mem",
	.open = mem_open,
	.close = mem_close,
	.query_port = mem_query_port,
	.dev_fd = mem_dev_fd,
	.get_event = mem_get_event,
	.qp_create = mem_qp_create,
	.qp_destroy = mem_qp_destroy,
	.qp_fd = mem_qp_fd,
	.qp_send = mem_qp_send,
	.qp_recv = mem_qp_recv,
	.attach = mem_attach,
	.detach = mem_detach,
	.ah_create = mem_ah_create,
	.ah_destroy = mem_ah_destroy,
	.mad_open = mem_mad_open,
	.mad_close = mem_mad_close,
	.mad_fd = mem_mad_fd,
	.mad_send = mem_mad_send,
	.mad_recv = mem_mad_recv,
};

void mem_register(void)
{
	static int done;

	if (!done && fab_provider_register(&mem_provider) == 0)
		done = 1;
}

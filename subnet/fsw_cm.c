// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ibfabricd's connection managers (fsw_cm.h has the behaviour).  One
 * struct fsw_cm holds the CMs of every port: listeners and connections
 * each name the port (lid) they belong to, and a CM MAD only ever looks at
 * the objects of the port it reached, as a host's ib_cm sees only its own.
 *
 * Two rules keep the callbacks safe: MADs are queued and sent only when
 * the outermost call returns (ops->send may switch the MAD straight into
 * another port's fsw_cm_input), and an event is the last thing a step
 * does with its connection (ops->event may call back in, accept or
 * destroy).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabric/cm_mad.h"
#include "fabric/ib_pkt.h"
#include "subnet/fsw_cm.h"
#include "subnet/fsw_report.h"

enum conn_state {
	CS_IDLE,	/* failed, rejected or over: only the handle is left */
	CS_REQ_SENT,
	CS_MRA_RCVD,	/* REQ_SENT, the timer stretched by an MRA */
	CS_REQ_RCVD,
	CS_MRA_SENT,
	CS_REP_SENT,
	CS_ESTABLISHED,
	CS_DREQ_SENT,
	CS_TIMEWAIT,
};

static const char *const state_names[] = {
	[CS_IDLE] = "IDLE",
	[CS_REQ_SENT] = "REQ_SENT",
	[CS_MRA_RCVD] = "MRA_RCVD",
	[CS_REQ_RCVD] = "REQ_RCVD",
	[CS_MRA_SENT] = "MRA_SENT",
	[CS_REP_SENT] = "REP_SENT",
	[CS_ESTABLISHED] = "ESTABLISHED",
	[CS_DREQ_SENT] = "DREQ_SENT",
	[CS_TIMEWAIT] = "TIMEWAIT",
};

struct cm_listener {
	void *owner;
	uint32_t handle;
	uint16_t lid;
	uint64_t service_id;
	uint64_t mask;		/* 0 in the request: all ones here */
	uint32_t backlog;
	uint16_t pkey;		/* low 15 bits; 0: every partition */
	struct cm_listener *next;
};

struct cm_conn {
	void *owner;		/* NULL: destroyed, kept for DREQ/timewait */
	uint32_t handle;
	uint32_t listen_handle;
	struct cm_listener *listener;	/* NULL once it is closed */
	int active;
	enum conn_state state;
	uint16_t lid;		/* our port */
	uint64_t service_id;
	uint32_t local_id, remote_id;
	uint32_t local_qpn;	/* 0 until accept on the passive side */
	uint32_t local_psn;
	uint16_t pkey;
	/* the peer and the path, as the events give them */
	uint16_t remote_lid;
	union fab_gid remote_gid;
	uint32_t remote_qpn, remote_psn;
	uint8_t path_mtu, ack_timeout, retry_count, rnr_retry_count;
	uint8_t resp_res, init_depth;
	uint8_t peer_resp_timeout;	/* REQ's remote_cm_resp_timeout */
	uint8_t priv_len;
	uint8_t priv[CM_REP_PRIV_LEN];	/* the last CONNECT/ESTABLISHED's */
	/* the message sent last, for retransmission and duplicates */
	uint8_t mad[MAD_LEN];
	int has_mad;
	unsigned int retries;
	uint64_t deadline;	/* 0: none */
	struct cm_conn *next;
};

struct cm_out {
	uint16_t slid, dlid, pkey;
	uint8_t mad[MAD_LEN];
};

struct fsw_cm {
	const struct fsw_cm_ops *ops;
	void *ctx;
	struct cm_listener *listeners;
	struct cm_conn *conns;
	unsigned int nconns, nlisteners;
	unsigned int ntimewait;		/* of nconns, in CS_TIMEWAIT */
	uint32_t next_handle;
	uint32_t next_comm_id;
	uint64_t next_tid;
	/* MADs waiting for the outermost call to return */
	struct cm_out *out;
	size_t nout, outcap;
	unsigned int depth;
	struct fsw_cm_stats st;
};

#define MS_PER_TIMEOUT(n)	((4096ull << (n)) / 1000000)

static uint64_t timeout_ms(unsigned int n)
{
	uint64_t ms;

	if (n > 31)
		n = 31;
	ms = MS_PER_TIMEOUT(n);
	return ms ? ms : 1;
}

static uint64_t now(const struct fsw_cm *cm)
{
	return cm->ops->now_ms(cm->ctx);
}

static int seterr(char *err, size_t errlen, int e, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int seterr(char *err, size_t errlen, int e, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	errno = e;
	return -1;
}

/* --- the outbox -------------------------------------------------------- */

static void enter(struct fsw_cm *cm)
{
	cm->depth++;
}

/* The outermost call sends what was queued; MADs queued while sending
 * (a port answering at once) go out in the same loop, in order. */
static void leave(struct fsw_cm *cm)
{
	size_t i;

	if (--cm->depth)
		return;
	cm->depth++;
	for (i = 0; i < cm->nout; i++) {
		struct cm_out o = cm->out[i];

		cm->ops->send(cm->ctx, o.slid, o.dlid, o.pkey, o.mad);
	}
	cm->nout = 0;
	cm->depth--;
}

static void queue_mad(struct fsw_cm *cm, uint16_t slid, uint16_t dlid,
		      uint16_t pkey, const uint8_t *mad)
{
	struct cm_out *o;
	uint16_t attr = (uint16_t)(mad[16] << 8 | mad[17]);

	if (cm->nout == cm->outcap) {
		size_t cap = cm->outcap ? cm->outcap * 2 : 16;

		o = realloc(cm->out, cap * sizeof(*o));
		if (!o)
			return;	/* as a MAD lost on the wire */
		cm->out = o;
		cm->outcap = cap;
	}
	o = &cm->out[cm->nout++];
	o->slid = slid;
	o->dlid = dlid;
	o->pkey = pkey;
	memcpy(o->mad, mad, MAD_LEN);
	if (attr >= CM_ATTR_REQ && attr <= CM_ATTR_DREP)
		cm->st.sent[attr - CM_ATTR_REQ]++;
}

/* Build m with a fresh TID; 0 or -1 (a field we filled wrongly). */
static int build(struct fsw_cm *cm, struct cm_msg *m, uint16_t attr,
		 uint8_t mad[MAD_LEN])
{
	enum cm_mad_err e;

	m->hdr.attr_id = attr;
	m->hdr.tid = ++cm->next_tid;
	return cm_mad_build(m, mad, &e);
}

/* --- ids and lookups --------------------------------------------------- */

static int handle_used(const struct fsw_cm *cm, uint32_t h)
{
	const struct cm_listener *l;
	const struct cm_conn *c;

	for (l = cm->listeners; l; l = l->next)
		if (l->handle == h)
			return 1;
	for (c = cm->conns; c; c = c->next)
		if (c->owner && c->handle == h)
			return 1;
	return 0;
}

/* unique in the whole CM, so per owner too; never 0 */
static uint32_t new_handle(struct fsw_cm *cm)
{
	do {
		if (!++cm->next_handle)
			cm->next_handle = 1;
	} while (handle_used(cm, cm->next_handle));
	return cm->next_handle;
}

static uint32_t new_comm_id(struct fsw_cm *cm)
{
	const struct cm_conn *c;

again:
	if (!++cm->next_comm_id)
		cm->next_comm_id = 1;
	for (c = cm->conns; c; c = c->next)
		if (c->local_id == cm->next_comm_id)
			goto again;
	return cm->next_comm_id;
}

static struct cm_conn *conn_by_handle(struct fsw_cm *cm, void *owner,
				      uint32_t h)
{
	struct cm_conn *c;

	for (c = cm->conns; c; c = c->next)
		if (c->owner && c->owner == owner && c->handle == h)
			return c;
	return NULL;
}

static struct cm_listener *listener_by_handle(struct fsw_cm *cm, void *owner,
					      uint32_t h)
{
	struct cm_listener *l;

	for (l = cm->listeners; l; l = l->next)
		if (l->owner == owner && l->handle == h)
			return l;
	return NULL;
}

/* a connection between REQ and timewait's end holds its QP */
static int live(const struct cm_conn *c)
{
	return c->state != CS_IDLE && c->state != CS_TIMEWAIT;
}

static unsigned int port_conns(const struct fsw_cm *cm, uint16_t lid)
{
	const struct cm_conn *c;
	unsigned int n = 0;

	for (c = cm->conns; c; c = c->next)
		n += c->lid == lid && c->state != CS_TIMEWAIT;
	return n;
}

/* timewaits are bounded apart (FSW_CM_MAX_TIMEWAIT) */
static int room(const struct fsw_cm *cm, uint16_t lid)
{
	return cm->nconns - cm->ntimewait < FSW_CM_MAX_CONNS &&
	       port_conns(cm, lid) < FSW_CM_MAX_PORT_CONNS;
}

static struct cm_conn *conn_new(struct fsw_cm *cm, uint16_t lid)
{
	struct cm_conn *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->lid = lid;
	c->local_id = new_comm_id(cm);
	c->next = cm->conns;
	cm->conns = c;
	cm->nconns++;
	return c;
}

static void conn_free(struct fsw_cm *cm, struct cm_conn *c)
{
	struct cm_conn **pp;

	for (pp = &cm->conns; *pp; pp = &(*pp)->next) {
		if (*pp == c) {
			*pp = c->next;
			cm->nconns--;
			if (c->state == CS_TIMEWAIT)
				cm->ntimewait--;
			free(c);
			return;
		}
	}
}

/* --- events ------------------------------------------------------------ */

static void ev_fill(const struct cm_conn *c, uint32_t type, int status,
		    struct fsp_cm_event *ev)
{
	memset(ev, 0, sizeof(*ev));
	ev->type = type;
	ev->handle = c->handle;
	ev->listen_handle = c->listen_handle;
	ev->status = status;
	ev->service_id = c->service_id;
	memcpy(ev->peer_gid, c->remote_gid.raw, 16);
	ev->peer_lid = c->remote_lid;
	ev->pkey = c->pkey;
	ev->peer_qpn = c->remote_qpn;
	ev->peer_psn = c->remote_psn;
	ev->path_mtu = c->path_mtu;
	ev->ack_timeout = c->ack_timeout;
	ev->retry_count = c->retry_count;
	ev->rnr_retry_count = c->rnr_retry_count;
	ev->responder_resources = c->resp_res;
	ev->initiator_depth = c->init_depth;
}

/* Last thing a step does with c: the owner may call back in. */
static void emit(struct fsw_cm *cm, struct cm_conn *c, uint32_t type,
		 int status, const uint8_t *priv, size_t plen)
{
	struct fsp_cm_event ev;
	void *owner = c->owner;

	if (!owner)
		return;
	ev_fill(c, type, status, &ev);
	if (plen > sizeof(ev.priv))
		plen = sizeof(ev.priv);
	if (plen)
		memcpy(ev.priv, priv, plen);
	ev.priv_len = (uint8_t)plen;
	cm->ops->event(cm->ctx, owner, &ev);
}

/* --- sending ----------------------------------------------------------- */

static void send_conn(struct fsw_cm *cm, struct cm_conn *c,
		      const uint8_t *mad, int keep)
{
	if (keep) {
		memcpy(c->mad, mad, MAD_LEN);
		c->has_mad = 1;
	}
	queue_mad(cm, c->lid, c->remote_lid, c->pkey, mad);
}

/* A REJ from a connection (ARI: ari/alen; private data: priv/plen). */
static void send_rej(struct fsw_cm *cm, struct cm_conn *c, uint16_t reason,
		     uint8_t msg, const void *ari, uint8_t alen,
		     const uint8_t *priv, size_t plen)
{
	struct cm_msg m;
	uint8_t mad[MAD_LEN];

	memset(&m, 0, sizeof(m));
	m.u.rej.local_comm_id = c->local_id;
	m.u.rej.remote_comm_id = c->remote_id;
	m.u.rej.msg_rejected = msg;
	m.u.rej.reason = reason;
	if (alen > CM_REJ_ARI_LEN)
		alen = CM_REJ_ARI_LEN;
	m.u.rej.ari_len = alen;
	if (alen)
		memcpy(m.u.rej.ari, ari, alen);
	m.priv = priv;
	m.priv_len = plen;
	if (build(cm, &m, CM_ATTR_REJ, mad) == 0)
		send_conn(cm, c, mad, 0);
}

/* A REJ answering a message no connection of ours takes: the comm IDs
 * the other way round. */
static void send_rej_to(struct fsw_cm *cm, uint16_t lid, uint16_t dlid,
			uint16_t pkey, uint32_t local_id, uint32_t remote_id,
			uint8_t msg, uint16_t reason)
{
	struct cm_msg m;
	uint8_t mad[MAD_LEN];

	memset(&m, 0, sizeof(m));
	m.u.rej.local_comm_id = local_id;
	m.u.rej.remote_comm_id = remote_id;
	m.u.rej.msg_rejected = msg;
	m.u.rej.reason = reason;
	if (build(cm, &m, CM_ATTR_REJ, mad) == 0)
		queue_mad(cm, lid, dlid, pkey, mad);
}

static void send_simple(struct fsw_cm *cm, struct cm_conn *c, uint16_t attr,
			int keep)
{
	struct cm_msg m;
	uint8_t mad[MAD_LEN];

	memset(&m, 0, sizeof(m));
	m.u.rtu.local_comm_id = c->local_id;
	m.u.rtu.remote_comm_id = c->remote_id;
	if (build(cm, &m, attr, mad) == 0)
		send_conn(cm, c, mad, keep);
}

static void send_mra(struct fsw_cm *cm, struct cm_conn *c)
{
	struct cm_msg m;
	uint8_t mad[MAD_LEN];

	memset(&m, 0, sizeof(m));
	m.u.mra.local_comm_id = c->local_id;
	m.u.mra.remote_comm_id = c->remote_id;
	m.u.mra.msg_mraed = CM_MSG_REQ;
	m.u.mra.service_timeout = FSW_CM_MRA_TIMEOUT;
	if (build(cm, &m, CM_ATTR_MRA, mad) == 0)
		send_conn(cm, c, mad, 0);
}

static void send_dreq(struct fsw_cm *cm, struct cm_conn *c)
{
	struct cm_msg m;
	uint8_t mad[MAD_LEN];

	memset(&m, 0, sizeof(m));
	m.u.dreq.local_comm_id = c->local_id;
	m.u.dreq.remote_comm_id = c->remote_id;
	m.u.dreq.remote_qpn = c->remote_qpn;
	if (build(cm, &m, CM_ATTR_DREQ, mad) < 0)
		return;
	c->state = CS_DREQ_SENT;
	c->retries = 0;
	c->deadline = now(cm) + timeout_ms(FSW_CM_RESP_TIMEOUT);
	send_conn(cm, c, mad, 1);
}

static void finish(struct fsw_cm *cm, struct cm_conn *c, uint32_t type,
		   int status, const uint8_t *priv, size_t plen);

static void enter_timewait(struct fsw_cm *cm, struct cm_conn *c)
{
	struct cm_conn *o, *old = NULL;

	if (c->state != CS_TIMEWAIT) {
		if (cm->ntimewait >= FSW_CM_MAX_TIMEWAIT) {
			/* the bound: the oldest ends now */
			for (o = cm->conns; o; o = o->next)
				if (o != c && o->state == CS_TIMEWAIT &&
				    (!old || o->deadline < old->deadline))
					old = o;
			if (old) {
				cm->st.timewait_cut++;
				finish(cm, old, FAB_CM_EV_TIMEWAIT_EXIT, 0,
				       NULL, 0);
			}
		}
		cm->ntimewait++;
	}
	c->state = CS_TIMEWAIT;
	c->deadline = now(cm) + FSW_CM_TIMEWAIT_MS;
}

/* The connection is over for its owner: IDLE, or gone if it has none. */
static void to_idle(struct fsw_cm *cm, struct cm_conn *c)
{
	if (c->state == CS_TIMEWAIT)
		cm->ntimewait--;
	c->state = CS_IDLE;
	c->deadline = 0;
	c->has_mad = 0;
	if (!c->owner)
		conn_free(cm, c);
}

/* The connection failed or ended: the owner, if any, is told last. */
static void finish(struct fsw_cm *cm, struct cm_conn *c, uint32_t type,
		   int status, const uint8_t *priv, size_t plen)
{
	if (!c->owner) {
		to_idle(cm, c);
		return;
	}
	to_idle(cm, c);
	emit(cm, c, type, status, priv, plen);
}

/* --- the owner's requests --------------------------------------------- */

static int offer_ok(const struct fsp_cm_offer *o, size_t priv_max,
		    char *err, size_t errlen)
{
	if (!o->qpn || o->qpn > 0xffffff)
		return seterr(err, errlen, EINVAL, "QPN 0x%x out of range",
			      o->qpn);
	if (o->psn > 0xffffff)
		return seterr(err, errlen, EINVAL, "PSN 0x%x over 24 bits",
			      o->psn);
	if (o->retry_count > 7 || o->rnr_retry_count > 7)
		return seterr(err, errlen, EINVAL, "retry counts are 0..7");
	if (o->priv_len > priv_max)
		return seterr(err, errlen, EINVAL,
			      "private data %u bytes, at most %zu",
			      o->priv_len, priv_max);
	return 0;
}

static int qpn_busy(const struct fsw_cm *cm, uint16_t lid, uint32_t qpn)
{
	const struct cm_conn *c;

	for (c = cm->conns; c; c = c->next)
		if (c->lid == lid && c->state != CS_IDLE &&
		    c->local_qpn == qpn)
			return 1;
	return 0;
}

static uint8_t or_default(uint8_t v, uint8_t def)
{
	return v ? v : def;
}

int fsw_cm_listen(struct fsw_cm *cm, uint16_t lid, void *owner,
		  const struct fsp_cm_listen *req, uint32_t *handle, char *err,
		  size_t errlen)
{
	struct cm_listener *l;
	uint64_t mask = req->service_mask ? req->service_mask : ~0ull;
	uint16_t pkey = req->pkey & 0x7fff;
	struct fsw_cm_port p;

	if (cm->ops->port_by_lid(cm->ctx, lid, &p) < 0)
		return seterr(err, errlen, EINVAL, "no port 0x%04x", lid);
	if (cm->nlisteners >= FSW_CM_MAX_LISTENERS)
		return seterr(err, errlen, ENOMEM, "%u listeners already",
			      cm->nlisteners);
	/* two listeners overlap when some service ID matches both in a
	 * partition both take */
	for (l = cm->listeners; l; l = l->next)
		if (l->lid == lid && !((l->service_id ^ req->service_id) &
				       l->mask & mask) &&
		    (!l->pkey || !pkey || l->pkey == pkey))
			return seterr(err, errlen, EADDRINUSE,
				      "service ID 0x%016llx already listened on",
				      (unsigned long long)req->service_id);
	l = calloc(1, sizeof(*l));
	if (!l)
		return seterr(err, errlen, ENOMEM, "out of memory");
	l->owner = owner;
	l->lid = lid;
	l->service_id = req->service_id & mask;
	l->mask = mask;
	l->backlog = req->backlog ? req->backlog : FSW_CM_BACKLOG;
	l->pkey = pkey;
	l->handle = new_handle(cm);
	l->next = cm->listeners;
	cm->listeners = l;
	cm->nlisteners++;
	*handle = l->handle;
	return 0;
}

int fsw_cm_connect(struct fsw_cm *cm, uint16_t lid, void *owner,
		   const struct fsp_cm_connect *req, uint16_t qp_pkey,
		   uint32_t *handle, char *err, size_t errlen)
{
	struct fsw_cm_port me, peer;
	union fab_gid gid;
	struct cm_conn *c;
	struct cm_msg m;
	struct cm_req *r = &m.u.req;
	int rc;

	if (offer_ok(&req->o, CM_REQ_PRIV_LEN, err, errlen) < 0)
		return -1;
	if (cm->ops->port_by_lid(cm->ctx, lid, &me) < 0 || !me.up)
		return seterr(err, errlen, ENETDOWN, "port 0x%04x is down",
			      lid);
	memcpy(gid.raw, req->gid, 16);
	if (req->dlid)
		rc = cm->ops->port_by_lid(cm->ctx, req->dlid, &peer);
	else
		rc = cm->ops->port_by_gid(cm->ctx, &gid, &peer);
	if (rc < 0 || !peer.up || !peer.lid)
		return seterr(err, errlen, EHOSTUNREACH,
			      "no port with that %s", req->dlid ? "LID" : "GID");
	if (qpn_busy(cm, lid, req->o.qpn))
		return seterr(err, errlen, EBUSY, "QP 0x%06x is in a connection",
			      req->o.qpn);
	if (!room(cm, lid))
		return seterr(err, errlen, ENOMEM, "too many connections");
	c = conn_new(cm, lid);
	if (!c)
		return seterr(err, errlen, ENOMEM, "out of memory");
	c->owner = owner;
	c->handle = new_handle(cm);
	c->active = 1;
	c->service_id = req->service_id;
	c->local_qpn = req->o.qpn;
	c->local_psn = req->o.psn;
	c->pkey = qp_pkey;
	c->remote_lid = peer.lid;
	c->remote_gid = peer.gid;
	c->path_mtu = me.mtu < peer.mtu ? me.mtu : peer.mtu;
	if (c->path_mtu < 1)
		c->path_mtu = 1;
	if (c->path_mtu > 5)
		c->path_mtu = 5;
	c->ack_timeout = FSW_CM_ACK_TIMEOUT;
	c->retry_count = or_default(req->o.retry_count, 7);
	c->resp_res = or_default(req->o.responder_resources, 1);
	c->init_depth = or_default(req->o.initiator_depth, 1);

	memset(&m, 0, sizeof(m));
	r->local_comm_id = c->local_id;
	r->service_id = req->service_id;
	r->local_ca_guid = me.node_guid;
	r->local_qpn = c->local_qpn;
	r->responder_resources = c->resp_res;
	r->initiator_depth = c->init_depth;
	r->remote_cm_resp_timeout = FSW_CM_RESP_TIMEOUT;
	r->transport = CM_TRANSPORT_RC;
	r->starting_psn = c->local_psn;
	r->local_cm_resp_timeout = FSW_CM_RESP_TIMEOUT;
	r->retry_count = c->retry_count;
	r->pkey = qp_pkey;
	r->path_mtu = c->path_mtu;
	r->rnr_retry_count = or_default(req->o.rnr_retry_count, 7);
	r->max_cm_retries = FSW_CM_MAX_RETRIES;
	r->primary.local_lid = lid;
	r->primary.remote_lid = peer.lid;
	r->primary.local_gid = me.gid;
	r->primary.remote_gid = peer.gid;
	r->primary.packet_rate = FSW_CM_PACKET_RATE;
	r->primary.subnet_local = 1;
	r->primary.local_ack_timeout = FSW_CM_ACK_TIMEOUT;
	m.priv = req->o.priv;
	m.priv_len = req->o.priv_len;

	enter(cm);
	if (build(cm, &m, CM_ATTR_REQ, c->mad) < 0) {
		conn_free(cm, c);
		leave(cm);
		return seterr(err, errlen, EINVAL, "REQ fields out of range");
	}
	c->state = CS_REQ_SENT;
	c->deadline = now(cm) + timeout_ms(FSW_CM_RESP_TIMEOUT);
	*handle = c->handle;
	send_conn(cm, c, c->mad, 1);
	leave(cm);
	return 0;
}

int fsw_cm_accept(struct fsw_cm *cm, void *owner,
		  const struct fsp_cm_accept *a, char *err, size_t errlen)
{
	struct cm_conn *c = conn_by_handle(cm, owner, a->handle);
	struct fsw_cm_port me;
	struct cm_msg m;
	struct cm_rep *r = &m.u.rep;

	if (!c)
		return seterr(err, errlen, ENOENT, "no handle %u", a->handle);
	if (c->active || (c->state != CS_REQ_RCVD &&
			  c->state != CS_MRA_SENT))
		return seterr(err, errlen, EPROTO, "handle %u is %s", a->handle,
			      state_names[c->state]);
	if (offer_ok(&a->o, CM_REP_PRIV_LEN, err, errlen) < 0)
		return -1;
	if (qpn_busy(cm, c->lid, a->o.qpn))
		return seterr(err, errlen, EBUSY, "QP 0x%06x is in a connection",
			      a->o.qpn);
	if (cm->ops->port_by_lid(cm->ctx, c->lid, &me) < 0 || !me.up)
		return seterr(err, errlen, ENETDOWN, "port 0x%04x is down",
			      c->lid);
	c->local_qpn = a->o.qpn;
	c->local_psn = a->o.psn;

	memset(&m, 0, sizeof(m));
	r->local_comm_id = c->local_id;
	r->remote_comm_id = c->remote_id;
	r->local_qpn = c->local_qpn;
	r->starting_psn = c->local_psn;
	r->responder_resources = or_default(a->o.responder_resources, 1);
	r->initiator_depth = or_default(a->o.initiator_depth, 1);
	r->rnr_retry_count = or_default(a->o.rnr_retry_count, 7);
	r->local_ca_guid = me.node_guid;
	m.priv = a->o.priv;
	m.priv_len = a->o.priv_len;
	/* what this side now serves and issues, as it said */
	c->resp_res = r->responder_resources;
	c->init_depth = r->initiator_depth;
	if (a->o.retry_count)
		c->retry_count = a->o.retry_count;

	enter(cm);
	if (build(cm, &m, CM_ATTR_REP, c->mad) < 0) {
		leave(cm);
		return seterr(err, errlen, EINVAL, "REP fields out of range");
	}
	c->state = CS_REP_SENT;
	c->retries = 0;
	c->deadline = now(cm) + timeout_ms(FSW_CM_RESP_TIMEOUT);
	send_conn(cm, c, c->mad, 1);
	leave(cm);
	return 0;
}

int fsw_cm_reject(struct fsw_cm *cm, void *owner,
		  const struct fsp_cm_reject *rj, char *err, size_t errlen)
{
	struct cm_conn *c = conn_by_handle(cm, owner, rj->handle);
	uint8_t msg;

	if (!c)
		return seterr(err, errlen, ENOENT, "no handle %u", rj->handle);
	if (rj->priv_len > CM_REJ_PRIV_LEN)
		return seterr(err, errlen, EINVAL,
			      "private data %u bytes, at most %d", rj->priv_len,
			      CM_REJ_PRIV_LEN);
	if (c->state == CS_REQ_RCVD || c->state == CS_MRA_SENT)
		msg = CM_MSG_REQ;
	else if (c->state == CS_REP_SENT)
		msg = CM_MSG_REP;
	else
		return seterr(err, errlen, EPROTO, "handle %u is %s",
			      rj->handle, state_names[c->state]);
	enter(cm);
	send_rej(cm, c, CM_REJ_CONSUMER_DEFINED, msg, NULL, 0, rj->priv,
		 rj->priv_len);
	to_idle(cm, c);
	leave(cm);
	return 0;
}

int fsw_cm_disconnect(struct fsw_cm *cm, void *owner, uint32_t handle,
		      char *err, size_t errlen)
{
	struct cm_conn *c = conn_by_handle(cm, owner, handle);

	if (!c)
		return seterr(err, errlen, ENOENT, "no handle %u", handle);
	if (c->state != CS_ESTABLISHED)
		return seterr(err, errlen, EPROTO, "handle %u is %s", handle,
			      state_names[c->state]);
	enter(cm);
	send_dreq(cm, c);
	leave(cm);
	return 0;
}

/* REJ reason 4 with our CA GUID as the ARI, as ib_cm sends it */
static void send_rej_timeout(struct fsw_cm *cm, struct cm_conn *c,
			     uint8_t msg)
{
	struct fsw_cm_port me;
	uint8_t guid[8];
	uint64_t g = 0;
	int i;

	if (cm->ops->port_by_lid(cm->ctx, c->lid, &me) == 0)
		g = me.node_guid;
	for (i = 0; i < 8; i++)
		guid[i] = (uint8_t)(g >> (56 - 8 * i));
	send_rej(cm, c, CM_REJ_TIMEOUT, msg, guid, 8, NULL, 0);
}

/* The owner forgets c: what the wire needs still happens, no event. */
static void conn_destroy(struct fsw_cm *cm, struct cm_conn *c)
{
	c->owner = NULL;
	switch (c->state) {
	case CS_REQ_SENT:
	case CS_MRA_RCVD:
		send_rej_timeout(cm, c, CM_MSG_REQ);
		to_idle(cm, c);
		break;
	case CS_REQ_RCVD:
	case CS_MRA_SENT:
		send_rej(cm, c, CM_REJ_CONSUMER_DEFINED, CM_MSG_REQ, NULL, 0,
			 NULL, 0);
		to_idle(cm, c);
		break;
	case CS_REP_SENT:
		send_rej(cm, c, CM_REJ_CONSUMER_DEFINED, CM_MSG_REP, NULL, 0,
			 NULL, 0);
		to_idle(cm, c);
		break;
	case CS_ESTABLISHED:
		send_dreq(cm, c);
		break;
	case CS_DREQ_SENT:
	case CS_TIMEWAIT:
		break;		/* the timer frees it */
	case CS_IDLE:
		to_idle(cm, c);
		break;
	}
}

static void listener_free(struct fsw_cm *cm, struct cm_listener *l)
{
	struct cm_listener **pp;
	struct cm_conn *c;

	for (c = cm->conns; c; c = c->next)
		if (c->listener == l)
			c->listener = NULL;
	for (pp = &cm->listeners; *pp; pp = &(*pp)->next) {
		if (*pp == l) {
			*pp = l->next;
			cm->nlisteners--;
			free(l);
			return;
		}
	}
}

int fsw_cm_destroy(struct fsw_cm *cm, void *owner, uint32_t handle)
{
	struct cm_listener *l = listener_by_handle(cm, owner, handle);
	struct cm_conn *c;

	if (l) {
		listener_free(cm, l);
		return 0;
	}
	c = conn_by_handle(cm, owner, handle);
	if (!c) {
		errno = ENOENT;
		return -1;
	}
	enter(cm);
	conn_destroy(cm, c);
	leave(cm);
	return 0;
}

void fsw_cm_owner_gone(struct fsw_cm *cm, void *owner)
{
	struct cm_listener *l, *ln;
	struct cm_conn *c, *cn;

	enter(cm);
	/* connections first, so that pending REQs still name a listener */
	for (c = cm->conns; c; c = cn) {
		cn = c->next;
		if (c->owner && c->owner == owner)
			conn_destroy(cm, c);
	}
	for (l = cm->listeners; l; l = ln) {
		ln = l->next;
		if (l->owner == owner)
			listener_free(cm, l);
	}
	leave(cm);
}

void fsw_cm_qp_gone(struct fsw_cm *cm, uint16_t lid, uint32_t qpn)
{
	struct cm_conn *c, *cn;

	if (!qpn)
		return;
	enter(cm);
	for (c = cm->conns; c; c = cn) {
		cn = c->next;
		if (c->owner && c->lid == lid && c->local_qpn == qpn &&
		    c->state != CS_IDLE)
			conn_destroy(cm, c);
	}
	leave(cm);
}

/* --- MADs received ----------------------------------------------------- */

/* The connection of port lid a message names by our comm ID (and, when it
 * carries it, the sender's). */
static struct cm_conn *conn_named(struct fsw_cm *cm, uint16_t lid,
				  uint16_t slid, uint32_t ours,
				  uint32_t theirs, int check_theirs)
{
	struct cm_conn *c;

	for (c = cm->conns; c; c = c->next) {
		if (c->lid != lid || c->local_id != ours ||
		    c->remote_lid != slid || c->state == CS_IDLE)
			continue;
		if (check_theirs && c->remote_id != theirs)
			continue;
		return c;
	}
	return NULL;
}

/* a live connection of port lid to (slid, qpn) other than the one of
 * remote comm ID rid */
static int stale_qpn(const struct fsw_cm *cm, uint16_t lid, uint16_t slid,
		     uint32_t qpn, uint32_t rid, const struct cm_conn *self)
{
	const struct cm_conn *c;

	for (c = cm->conns; c; c = c->next)
		if (c != self && c->lid == lid && c->remote_lid == slid &&
		    live(c) && c->remote_qpn == qpn && c->remote_id &&
		    c->remote_id != rid)
			return 1;
	return 0;
}

/* Listeners never overlap (fsw_cm_listen), so at most one matches. */
static struct cm_listener *listener_for(struct fsw_cm *cm, uint16_t lid,
					uint64_t sid, uint16_t pkey)
{
	struct cm_listener *l;

	pkey &= 0x7fff;
	for (l = cm->listeners; l; l = l->next)
		if (l->lid == lid && (sid & l->mask) == l->service_id &&
		    (!l->pkey || l->pkey == pkey))
			return l;
	return NULL;
}

static unsigned int pending(const struct fsw_cm *cm,
			    const struct cm_listener *l)
{
	const struct cm_conn *c;
	unsigned int n = 0;

	for (c = cm->conns; c; c = c->next)
		n += c->listener == l &&
		     (c->state == CS_REQ_RCVD || c->state == CS_MRA_SENT);
	return n;
}

static void rx_req(struct fsw_cm *cm, uint16_t lid, uint16_t slid,
		   uint16_t pkey, const struct cm_msg *m)
{
	const struct cm_req *r = &m->u.req;
	struct cm_listener *l;
	struct cm_conn *c;

	for (c = cm->conns; c; c = c->next) {
		if (c->lid != lid || c->active || c->remote_lid != slid ||
		    c->remote_id != r->local_comm_id || c->state == CS_IDLE)
			continue;
		cm->st.duplicates++;
		if (c->state == CS_REQ_RCVD || c->state == CS_MRA_SENT) {
			/* the active side waits: tell it again to */
			c->state = CS_MRA_SENT;
			c->deadline = 0;
			send_mra(cm, c);
		} else if (c->state == CS_REP_SENT && c->has_mad) {
			send_conn(cm, c, c->mad, 0);
		}
		return;
	}
	if (stale_qpn(cm, lid, slid, r->local_qpn, r->local_comm_id, NULL)) {
		cm->st.stale++;
		send_rej_to(cm, lid, slid, pkey, 0, r->local_comm_id,
			    CM_MSG_REQ, CM_REJ_STALE_CONN);
		return;
	}
	/* the connection's partition is the one the REQ came in: else a
	 * node could reach a listener of a partition it is not in */
	if ((r->pkey ^ pkey) & 0x7fff) {
		cm->st.bad_pkey++;
		send_rej_to(cm, lid, slid, pkey, 0, r->local_comm_id,
			    CM_MSG_REQ, CM_REJ_INVALID_SERVICE_ID);
		return;
	}
	l = listener_for(cm, lid, r->service_id, r->pkey);
	if (!l) {
		cm->st.unknown++;
		send_rej_to(cm, lid, slid, pkey, 0, r->local_comm_id,
			    CM_MSG_REQ, CM_REJ_INVALID_SERVICE_ID);
		return;
	}
	if (r->transport != CM_TRANSPORT_RC) {
		send_rej_to(cm, lid, slid, pkey, 0, r->local_comm_id,
			    CM_MSG_REQ, CM_REJ_INVALID_TRANSPORT_TYPE);
		return;
	}
	if (pending(cm, l) >= l->backlog || !room(cm, lid) ||
	    !(c = conn_new(cm, lid))) {
		send_rej_to(cm, lid, slid, pkey, 0, r->local_comm_id,
			    CM_MSG_REQ, CM_REJ_NO_RESOURCES);
		return;
	}
	c->owner = l->owner;
	c->handle = new_handle(cm);
	c->listener = l;
	c->listen_handle = l->handle;
	c->state = CS_REQ_RCVD;
	c->service_id = r->service_id;
	c->remote_id = r->local_comm_id;
	c->remote_lid = slid;
	c->remote_gid = r->primary.local_gid;
	c->remote_qpn = r->local_qpn;
	c->remote_psn = r->starting_psn;
	c->pkey = r->pkey;
	c->path_mtu = r->path_mtu;
	c->ack_timeout = r->primary.local_ack_timeout;
	c->retry_count = r->retry_count;
	c->rnr_retry_count = r->rnr_retry_count;
	/* the active side's reads are the ones this side serves */
	c->resp_res = r->initiator_depth;
	c->init_depth = r->responder_resources;
	c->peer_resp_timeout = r->remote_cm_resp_timeout;
	/* an MRA if the owner is slower than half the sender's patience */
	c->deadline = now(cm) + timeout_ms(r->remote_cm_resp_timeout) / 2;
	if (c->deadline == now(cm))
		c->deadline++;
	emit(cm, c, FAB_CM_EV_CONNECT_REQUEST, 0, m->priv, m->priv_len);
}

static void rx_mra(struct fsw_cm *cm, uint16_t lid, uint16_t slid,
		   const struct cm_msg *m)
{
	const struct cm_mra *r = &m->u.mra;
	struct cm_conn *c;

	c = conn_named(cm, lid, slid, r->remote_comm_id, 0, 0);
	if (!c) {
		cm->st.unknown++;
		return;
	}
	if (r->msg_mraed == CM_MSG_REQ && c->active &&
	    (c->state == CS_REQ_SENT || c->state == CS_MRA_RCVD)) {
		if (c->state == CS_MRA_RCVD)
			cm->st.duplicates++;
		c->state = CS_MRA_RCVD;
	} else if (r->msg_mraed == CM_MSG_REP && !c->active &&
		   c->state == CS_REP_SENT && c->remote_id == r->local_comm_id) {
		/* stays REP_SENT: the RTU is what it waits for */
	} else {
		cm->st.bad_state++;
		return;
	}
	c->deadline = now(cm) + timeout_ms(r->service_timeout) +
		      timeout_ms(FSW_CM_RESP_TIMEOUT);
}

/*
 * The REQ a REJ of its sender withdraws: the active side gave up (its
 * process destroyed the id, or its REQ's retries ran out) before it
 * learnt our comm ID (an MRA does not carry it over), so the REJ names
 * only its own, as ib_cm's cm_acquire_rejected_id finds it: by the
 * sender's port and comm ID.  Without it the process holding the REQ
 * (a gateway whose TCP connect is under way) never hears.
 */
static struct cm_conn *req_rejected(struct fsw_cm *cm, uint16_t lid,
				    uint16_t slid, uint32_t theirs)
{
	struct cm_conn *c;

	for (c = cm->conns; c; c = c->next)
		if (!c->active && c->lid == lid && c->remote_lid == slid &&
		    c->remote_id == theirs &&
		    (c->state == CS_REQ_RCVD || c->state == CS_MRA_SENT))
			return c;
	return NULL;
}

static void rx_rej(struct fsw_cm *cm, uint16_t lid, uint16_t slid,
		   const struct cm_msg *m)
{
	const struct cm_rej *r = &m->u.rej;
	struct cm_conn *c;

	c = conn_named(cm, lid, slid, r->remote_comm_id, 0, 0);
	if (!c && r->msg_rejected == CM_MSG_REQ)
		c = req_rejected(cm, lid, slid, r->local_comm_id);
	if (!c) {
		cm->st.unknown++;
		return;
	}
	/* once the peer's comm ID is known, a REJ must carry it */
	if (c->state != CS_REQ_SENT && c->state != CS_MRA_RCVD &&
	    c->remote_id != r->local_comm_id) {
		cm->st.unknown++;
		return;
	}
	switch (c->state) {
	case CS_REQ_SENT:
	case CS_MRA_RCVD:
	case CS_REQ_RCVD:
	case CS_MRA_SENT:
	case CS_REP_SENT:
		finish(cm, c, FAB_CM_EV_REJECTED, r->reason, m->priv,
		       m->priv_len);
		break;
	default:
		cm->st.bad_state++;
		break;
	}
}

static void rx_rep(struct fsw_cm *cm, uint16_t lid, uint16_t slid,
		   uint16_t pkey, const struct cm_msg *m)
{
	const struct cm_rep *r = &m->u.rep;
	struct cm_conn *c;

	c = conn_named(cm, lid, slid, r->remote_comm_id, 0, 0);
	if (!c || !c->active) {
		cm->st.unknown++;
		send_rej_to(cm, lid, slid, pkey, r->remote_comm_id,
			    r->local_comm_id, CM_MSG_REP,
			    CM_REJ_INVALID_COMM_ID);
		return;
	}
	if (c->state == CS_ESTABLISHED && c->remote_id == r->local_comm_id) {
		/* our RTU was lost */
		cm->st.duplicates++;
		send_simple(cm, c, CM_ATTR_RTU, 0);
		return;
	}
	if (c->state != CS_REQ_SENT && c->state != CS_MRA_RCVD) {
		cm->st.bad_state++;
		return;
	}
	c->remote_id = r->local_comm_id;
	if (stale_qpn(cm, lid, slid, r->local_qpn, r->local_comm_id, c)) {
		cm->st.stale++;
		send_rej(cm, c, CM_REJ_STALE_CONN, CM_MSG_REP, NULL, 0, NULL,
			 0);
		finish(cm, c, FAB_CM_EV_REJECTED, CM_REJ_STALE_CONN, NULL, 0);
		return;
	}
	c->remote_qpn = r->local_qpn;
	c->remote_psn = r->starting_psn;
	c->rnr_retry_count = r->rnr_retry_count;
	/* the reads the peer serves are the ones we may issue */
	if (r->responder_resources < c->init_depth)
		c->init_depth = r->responder_resources;
	if (r->initiator_depth < c->resp_res)
		c->resp_res = r->initiator_depth;
	c->state = CS_ESTABLISHED;
	c->deadline = 0;
	c->has_mad = 0;
	cm->st.established++;
	send_simple(cm, c, CM_ATTR_RTU, 0);
	emit(cm, c, FAB_CM_EV_ESTABLISHED, 0, m->priv, m->priv_len);
}

static void rx_rtu(struct fsw_cm *cm, uint16_t lid, uint16_t slid,
		   uint16_t pkey, const struct cm_msg *m)
{
	const struct cm_rtu *r = &m->u.rtu;
	struct cm_conn *c;

	c = conn_named(cm, lid, slid, r->remote_comm_id, r->local_comm_id, 1);
	if (!c || c->active) {
		cm->st.unknown++;
		send_rej_to(cm, lid, slid, pkey, r->remote_comm_id,
			    r->local_comm_id, CM_MSG_OTHER,
			    CM_REJ_INVALID_COMM_ID);
		return;
	}
	if (c->state != CS_REP_SENT) {
		if (c->state == CS_ESTABLISHED)
			cm->st.duplicates++;
		else
			cm->st.bad_state++;
		return;
	}
	c->state = CS_ESTABLISHED;
	c->deadline = 0;
	c->has_mad = 0;
	cm->st.established++;
	emit(cm, c, FAB_CM_EV_ESTABLISHED, 0, NULL, 0);
}

static void send_drep_to(struct fsw_cm *cm, uint16_t lid, uint16_t slid,
			 uint16_t pkey, uint32_t local_id, uint32_t remote_id)
{
	struct cm_msg m;
	uint8_t mad[MAD_LEN];

	memset(&m, 0, sizeof(m));
	m.u.rtu.local_comm_id = local_id;
	m.u.rtu.remote_comm_id = remote_id;
	if (build(cm, &m, CM_ATTR_DREP, mad) == 0)
		queue_mad(cm, lid, slid, pkey, mad);
}

static void rx_dreq(struct fsw_cm *cm, uint16_t lid, uint16_t slid,
		    uint16_t pkey, const struct cm_msg *m)
{
	const struct cm_dreq *r = &m->u.dreq;
	struct cm_conn *c;

	c = conn_named(cm, lid, slid, r->remote_comm_id, r->local_comm_id, 1);
	if (!c) {
		/* as ib_cm: whoever it was, it may stop asking */
		cm->st.unknown++;
		send_drep_to(cm, lid, slid, pkey, r->remote_comm_id,
			     r->local_comm_id);
		return;
	}
	if (r->remote_qpn != c->local_qpn) {
		cm->st.unknown++;
		return;
	}
	switch (c->state) {
	case CS_ESTABLISHED:
	case CS_DREQ_SENT:
	case CS_REP_SENT:
		enter_timewait(cm, c);
		c->has_mad = 0;
		send_simple(cm, c, CM_ATTR_DREP, 0);
		emit(cm, c, FAB_CM_EV_DISCONNECTED, 0, NULL, 0);
		break;
	case CS_TIMEWAIT:
		cm->st.duplicates++;
		send_simple(cm, c, CM_ATTR_DREP, 0);
		break;
	default:
		cm->st.bad_state++;
		break;
	}
}

static void rx_drep(struct fsw_cm *cm, uint16_t lid, uint16_t slid,
		    const struct cm_msg *m)
{
	const struct cm_rtu *r = &m->u.rtu;
	struct cm_conn *c;

	c = conn_named(cm, lid, slid, r->remote_comm_id, r->local_comm_id, 1);
	if (!c) {
		cm->st.unknown++;
		return;
	}
	if (c->state == CS_TIMEWAIT) {
		cm->st.duplicates++;
		return;
	}
	if (c->state != CS_DREQ_SENT) {
		cm->st.bad_state++;
		return;
	}
	enter_timewait(cm, c);
	c->has_mad = 0;
	emit(cm, c, FAB_CM_EV_DISCONNECTED, 0, NULL, 0);
}

void fsw_cm_input(struct fsw_cm *cm, uint16_t dlid, const struct ib_ud *u)
{
	struct fsw_cm_port me;
	struct cm_msg m;
	uint16_t slid = u->lrh.slid, pkey = u->bth.pkey;

	if (!u->payload || cm_mad_parse(u->payload, u->payload_len, &m) !=
	    CM_MAD_OK) {
		cm->st.bad_mad++;
		return;
	}
	cm->st.rcvd[m.hdr.attr_id - CM_ATTR_REQ]++;
	if (cm->ops->port_by_lid(cm->ctx, dlid, &me) < 0 || !me.up) {
		cm->st.unknown++;
		return;
	}
	enter(cm);
	switch (m.hdr.attr_id) {
	case CM_ATTR_REQ:
		rx_req(cm, dlid, slid, pkey, &m);
		break;
	case CM_ATTR_MRA:
		rx_mra(cm, dlid, slid, &m);
		break;
	case CM_ATTR_REJ:
		rx_rej(cm, dlid, slid, &m);
		break;
	case CM_ATTR_REP:
		rx_rep(cm, dlid, slid, pkey, &m);
		break;
	case CM_ATTR_RTU:
		rx_rtu(cm, dlid, slid, pkey, &m);
		break;
	case CM_ATTR_DREQ:
		rx_dreq(cm, dlid, slid, pkey, &m);
		break;
	case CM_ATTR_DREP:
		rx_drep(cm, dlid, slid, &m);
		break;
	}
	leave(cm);
}

/* --- timers ------------------------------------------------------------ */

static void expire(struct fsw_cm *cm, struct cm_conn *c, uint64_t t)
{
	uint64_t to = timeout_ms(FSW_CM_RESP_TIMEOUT);

	switch (c->state) {
	case CS_REQ_SENT:
	case CS_MRA_RCVD:
	case CS_REP_SENT:
	case CS_DREQ_SENT:
		if (c->retries < FSW_CM_MAX_RETRIES && c->has_mad) {
			c->retries++;
			cm->st.retransmits++;
			c->deadline = t + to;
			send_conn(cm, c, c->mad, 0);
			return;
		}
		cm->st.timeouts++;
		c->deadline = 0;
		if (c->state == CS_DREQ_SENT) {
			enter_timewait(cm, c);
			c->has_mad = 0;
			emit(cm, c, FAB_CM_EV_DISCONNECTED, ETIMEDOUT, NULL, 0);
			return;
		}
		{
			uint32_t ev = c->active ? FAB_CM_EV_UNREACHABLE :
					FAB_CM_EV_CONNECT_ERROR;
			uint8_t msg = c->active ? CM_MSG_REQ : CM_MSG_REP;

			send_rej_timeout(cm, c, msg);
			finish(cm, c, ev, ETIMEDOUT, NULL, 0);
		}
		return;
	case CS_REQ_RCVD:
		c->deadline = 0;
		c->state = CS_MRA_SENT;
		send_mra(cm, c);
		return;
	case CS_TIMEWAIT:
		finish(cm, c, FAB_CM_EV_TIMEWAIT_EXIT, 0, NULL, 0);
		return;
	default:
		c->deadline = 0;
		return;
	}
}

void fsw_cm_tick(struct fsw_cm *cm)
{
	struct cm_conn *c;
	uint64_t t = now(cm);

	enter(cm);
	/* start over after each: an event may have changed the list */
again:
	for (c = cm->conns; c; c = c->next) {
		if (c->deadline && c->deadline <= t) {
			expire(cm, c, t);
			goto again;
		}
	}
	leave(cm);
}

uint64_t fsw_cm_next(const struct fsw_cm *cm)
{
	const struct cm_conn *c;
	uint64_t next = UINT64_MAX;

	for (c = cm->conns; c; c = c->next)
		if (c->deadline && c->deadline < next)
			next = c->deadline;
	return next;
}

/* --- life and reports -------------------------------------------------- */

struct fsw_cm *fsw_cm_new(const struct fsw_cm_ops *ops, void *ctx)
{
	struct fsw_cm *cm = calloc(1, sizeof(*cm));

	if (!cm)
		return NULL;
	cm->ops = ops;
	cm->ctx = ctx;
	/* comm IDs differ from one ibfabricd run to the next, as a host's
	 * do across reboots, so that a peer's old state is not matched */
	cm->next_comm_id = (uint32_t)(ops->now_ms(ctx) * 2654435761u);
	cm->next_tid = (uint64_t)cm->next_comm_id << 32;
	return cm;
}

void fsw_cm_free(struct fsw_cm *cm)
{
	struct cm_listener *l, *ln;
	struct cm_conn *c, *cn;

	if (!cm)
		return;
	for (l = cm->listeners; l; l = ln) {
		ln = l->next;
		free(l);
	}
	for (c = cm->conns; c; c = cn) {
		cn = c->next;
		free(c);
	}
	free(cm->out);
	free(cm);
}

const struct fsw_cm_stats *fsw_cm_stats(const struct fsw_cm *cm)
{
	return &cm->st;
}

size_t fsw_cm_report(const struct fsw_cm *cm, char *buf, size_t cap)
{
	struct counter_buf cb = { buf, 0, cap };
	const struct cm_listener *l;
	const struct cm_conn *c;
	const struct fsw_cm_stats *s = &cm->st;
	int i;

	if (cap)
		buf[0] = 0;
	for (l = cm->listeners; l; l = l->next) {
		char pk[8] = "any";

		if (l->pkey)
			snprintf(pk, sizeof(pk), "0x%04x", l->pkey);
		fsw_report_printf(&cb,
				  "listen port 0x%04x handle %u service 0x%016llx mask 0x%016llx backlog %u pending %u pkey %s\n",
				  l->lid, l->handle,
				  (unsigned long long)l->service_id,
				  (unsigned long long)l->mask, l->backlog,
				  pending(cm, l), pk);
	}
	for (c = cm->conns; c; c = c->next)
		fsw_report_printf(&cb,
				  "conn port 0x%04x handle %u%s %s %s qpn 0x%06x comm 0x%08x peer 0x%04x qpn 0x%06x comm 0x%08x service 0x%016llx retries %u\n",
				  c->lid, c->handle, c->owner ? "" : " (gone)",
				  c->active ? "active" : "passive",
				  state_names[c->state], c->local_qpn,
				  c->local_id, c->remote_lid, c->remote_qpn,
				  c->remote_id,
				  (unsigned long long)c->service_id,
				  c->retries);
	fsw_report_printf(&cb, "stats");
	for (i = 0; i < 7; i++)
		fsw_report_printf(&cb, " %s %llu/%llu",
				  cm_attr_name((uint16_t)(CM_ATTR_REQ + i)),
				  (unsigned long long)s->sent[i],
				  (unsigned long long)s->rcvd[i]);
	fsw_report_printf(&cb,
			  " retransmits %llu timeouts %llu duplicates %llu stale %llu bad_mad %llu unknown %llu bad_state %llu bad_pkey %llu established %llu timewait %u timewait_cut %llu\n",
			  (unsigned long long)s->retransmits,
			  (unsigned long long)s->timeouts,
			  (unsigned long long)s->duplicates,
			  (unsigned long long)s->stale,
			  (unsigned long long)s->bad_mad,
			  (unsigned long long)s->unknown,
			  (unsigned long long)s->bad_state,
			  (unsigned long long)s->bad_pkey,
			  (unsigned long long)s->established,
			  cm->ntimewait,
			  (unsigned long long)s->timewait_cut);
	return cb.len;
}

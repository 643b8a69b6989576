// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ibfabricd's connection managers (fsw_cm.c) between the ports of a fake
 * subnet: ops->send queues each MAD, the test delivers the queue to
 * fsw_cm_input (dropping or duplicating what a case asks), the clock is
 * the test's, and every event is recorded with its owner.  Expected
 * values are the IBTA's (vol. 1 12.6, 12.9) and ib_cm's behaviour, taken
 * from the MADs on the "wire" as much as from the events.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <cmocka.h>

#include "fabric/cm_mad.h"
#include "fabric/ib_pkt.h"
#include "subnet/fsw_cm.h"

#define LID_A	0x0002
#define LID_B	0x0003
#define LID_C	0x0004
#define LID_DOWN 0x0005
#define PKEY	0xffff
#define SID	0x0000000001000000ull
#define TO_MS	1073	/* 4.096 us * 2^18 */
#define QMAX	2048
#define EVMAX	128

struct fport {
	uint16_t lid;
	uint64_t guid;
	uint8_t mtu;
	int up;
};

static const struct fport fports[] = {
	{ LID_A, 0x0002c90300000a01ull, 5, 1 },
	{ LID_B, 0x0002c90300000b01ull, 4, 1 },
	{ LID_C, 0x0002c90300000c01ull, 3, 1 },
	{ LID_DOWN, 0x0002c90300000d01ull, 5, 0 },
};

struct qmsg {
	uint16_t slid, dlid, pkey;
	uint8_t mad[MAD_LEN];
};

struct rec {
	void *owner;
	struct fsp_cm_event ev;
};

struct h {
	struct fsw_cm *cm;
	uint64_t now;
	struct qmsg q[QMAX];
	unsigned int qh, qt;
	struct rec ev[EVMAX];
	unsigned int nev;
	unsigned int nev_all;	/* also those past ev[] */
	/* drop (or duplicate) the next n MADs of an attribute */
	unsigned int drop[8], dup[8];
	unsigned int sent[8];		/* what the wire saw, by attr */
	unsigned int rej_reason[64];	/* REJs seen, by reason */
	/* accept from inside the CONNECT_REQUEST event */
	int auto_accept;
	uint16_t listen_pkey;	/* do_listen's; 0: every partition */
	uint16_t req_pkey;	/* try_connect's; 0: PKEY */
	uint32_t last_req;	/* the last CONNECT_REQUEST's handle */
	void *gone;		/* an owner that must hear nothing */
};

static struct h *H;
static int owner_a, owner_b, owner_b2, owner_c;
#define OA ((void *)&owner_a)
#define OB ((void *)&owner_b)
#define OB2 ((void *)&owner_b2)
#define OC ((void *)&owner_c)

static void fill_port(const struct fport *f, struct fsw_cm_port *p)
{
	uint64_t g = f->guid;
	int i;

	memset(p, 0, sizeof(*p));
	p->lid = f->lid;
	p->port_guid = f->guid;
	p->node_guid = f->guid - 1;
	p->gid.raw[0] = 0xfe;
	p->gid.raw[1] = 0x80;
	for (i = 0; i < 8; i++)
		p->gid.raw[8 + i] = (uint8_t)(g >> (56 - 8 * i));
	p->mtu = f->mtu;
	p->up = f->up;
}

static int op_by_lid(void *ctx, uint16_t lid, struct fsw_cm_port *p)
{
	size_t i;

	(void)ctx;
	for (i = 0; i < sizeof(fports) / sizeof(fports[0]); i++)
		if (fports[i].lid == lid) {
			fill_port(&fports[i], p);
			return 0;
		}
	return -1;
}

static int op_by_gid(void *ctx, const union fab_gid *gid,
		     struct fsw_cm_port *p)
{
	size_t i;

	(void)ctx;
	for (i = 0; i < sizeof(fports) / sizeof(fports[0]); i++) {
		fill_port(&fports[i], p);
		if (!memcmp(p->gid.raw, gid->raw, 16))
			return 0;
	}
	return -1;
}

static uint16_t attr_of(const uint8_t *mad)
{
	return (uint16_t)(mad[16] << 8 | mad[17]);
}

static void op_send(void *ctx, uint16_t slid, uint16_t dlid, uint16_t pkey,
		    const uint8_t *mad)
{
	struct h *h = ctx;
	struct qmsg *m;
	uint16_t a = attr_of(mad);

	assert_true(a >= CM_ATTR_REQ && a <= CM_ATTR_DREP);
	h->sent[a - CM_ATTR_REQ]++;
	if (a == CM_ATTR_REJ) {
		uint16_t r = (uint16_t)(mad[MAD_HDR_LEN + 10] << 8 |
					mad[MAD_HDR_LEN + 11]);
		if (r < 64)
			h->rej_reason[r]++;
	}
	assert_true(h->qt - h->qh < QMAX);
	m = &h->q[h->qt++ % QMAX];
	m->slid = slid;
	m->dlid = dlid;
	m->pkey = pkey;
	memcpy(m->mad, mad, MAD_LEN);
}

static void op_event(void *ctx, void *owner, const struct fsp_cm_event *ev)
{
	struct h *h = ctx;

	assert_true(owner == OA || owner == OB || owner == OB2 ||
		    owner == OC);
	assert_ptr_not_equal(owner, h->gone);
	h->nev_all++;
	if (ev->type == FAB_CM_EV_CONNECT_REQUEST)
		h->last_req = ev->handle;
	if (h->nev < EVMAX) {
		h->ev[h->nev].owner = owner;
		h->ev[h->nev].ev = *ev;
		h->nev++;
	}
	if (h->auto_accept && ev->type == FAB_CM_EV_CONNECT_REQUEST) {
		struct fsp_cm_accept a;
		char err[128];

		memset(&a, 0, sizeof(a));
		a.handle = ev->handle;
		a.o.qpn = 0x200 + ev->handle;
		a.o.psn = 0x777;
		assert_int_equal(fsw_cm_accept(h->cm, owner, &a, err,
					       sizeof(err)), 0);
	}
}

static uint64_t op_now(void *ctx)
{
	return ((struct h *)ctx)->now;
}

static const struct fsw_cm_ops ops = {
	.port_by_lid = op_by_lid,
	.port_by_gid = op_by_gid,
	.send = op_send,
	.event = op_event,
	.now_ms = op_now,
};

static int setup(void **state)
{
	static struct h h;

	memset(&h, 0, sizeof(h));
	h.now = 1000;
	h.cm = fsw_cm_new(&ops, &h);
	assert_non_null(h.cm);
	H = &h;
	*state = &h;
	return 0;
}

static int teardown(void **state)
{
	struct h *h = *state;

	fsw_cm_free(h->cm);
	return 0;
}

static void input_raw(struct h *h, uint16_t slid, uint16_t dlid,
		      uint16_t pkey, const uint8_t *mad, size_t len)
{
	struct ib_ud u;

	memset(&u, 0, sizeof(u));
	u.lrh.slid = slid;
	u.lrh.dlid = dlid;
	u.bth.pkey = pkey;
	u.bth.destqp = 1;
	u.deth.qkey = 0x80010000;
	u.deth.srcqp = 1;
	u.payload = mad;
	u.payload_len = len;
	fsw_cm_input(h->cm, dlid, &u);
}

/* Deliver the queue (and what it causes) until the wire is quiet. */
static void deliver(struct h *h)
{
	while (h->qh != h->qt) {
		struct qmsg m = h->q[h->qh++ % QMAX];
		unsigned int a = attr_of(m.mad) - CM_ATTR_REQ;

		if (h->drop[a]) {
			h->drop[a]--;
			continue;
		}
		input_raw(h, m.slid, m.dlid, m.pkey, m.mad, MAD_LEN);
		if (h->dup[a]) {
			h->dup[a]--;
			input_raw(h, m.slid, m.dlid, m.pkey, m.mad, MAD_LEN);
		}
	}
}

/* Let ms pass, running the timers when they are due. */
static void advance(struct h *h, uint64_t ms)
{
	uint64_t end = h->now + ms;

	deliver(h);
	for (;;) {
		uint64_t next = fsw_cm_next(h->cm);

		if (next > end)
			break;
		assert_true(next >= h->now);
		h->now = next;
		fsw_cm_tick(h->cm);
		deliver(h);
	}
	h->now = end;
}

static unsigned int nev(struct h *h, void *owner, uint32_t type)
{
	unsigned int i, n = 0;

	for (i = 0; i < h->nev; i++)
		n += h->ev[i].owner == owner && h->ev[i].ev.type == type;
	return n;
}

static unsigned int nev_owner(struct h *h, void *owner)
{
	unsigned int i, n = 0;

	for (i = 0; i < h->nev; i++)
		n += h->ev[i].owner == owner;
	return n;
}

static const struct fsp_cm_event *last(struct h *h, void *owner,
				       uint32_t type)
{
	unsigned int i;

	for (i = h->nev; i-- > 0;)
		if (h->ev[i].owner == owner && h->ev[i].ev.type == type)
			return &h->ev[i].ev;
	return NULL;
}

static uint32_t do_listen(struct h *h, uint16_t lid, void *owner,
			  uint64_t sid, uint32_t backlog)
{
	struct fsp_cm_listen l = { .service_id = sid, .backlog = backlog,
				   .pkey = h->listen_pkey };
	uint32_t handle = 0;
	char err[128];

	assert_int_equal(fsw_cm_listen(h->cm, lid, owner, &l, &handle, err,
				       sizeof(err)), 0);
	assert_int_not_equal(handle, 0);
	return handle;
}

static void gid_of(uint16_t lid, uint8_t gid[16])
{
	struct fsw_cm_port p;

	assert_int_equal(op_by_lid(NULL, lid, &p), 0);
	memcpy(gid, p.gid.raw, 16);
}

static int try_connect(struct h *h, uint16_t lid, void *owner, uint16_t to,
		       uint64_t sid, uint32_t qpn, uint32_t *handle)
{
	struct fsp_cm_connect c;
	char err[128];
	unsigned int i;

	memset(&c, 0, sizeof(c));
	c.service_id = sid;
	gid_of(to, c.gid);
	c.o.qpn = qpn;
	c.o.psn = 0x123456;
	c.o.responder_resources = 4;
	c.o.initiator_depth = 2;
	c.o.retry_count = 5;
	c.o.rnr_retry_count = 6;
	c.o.priv_len = CM_REQ_PRIV_LEN;
	for (i = 0; i < CM_REQ_PRIV_LEN; i++)
		c.o.priv[i] = (uint8_t)(0xa0 + i);
	return fsw_cm_connect(h->cm, lid, owner, &c,
			      h->req_pkey ? h->req_pkey : PKEY, handle, err,
			      sizeof(err));
}

static uint32_t do_connect(struct h *h, uint16_t lid, void *owner,
			   uint16_t to, uint64_t sid, uint32_t qpn)
{
	uint32_t handle = 0;

	assert_int_equal(try_connect(h, lid, owner, to, sid, qpn, &handle),
			 0);
	assert_int_not_equal(handle, 0);
	return handle;
}

static void do_accept(struct h *h, void *owner, uint32_t handle,
		      uint32_t qpn)
{
	struct fsp_cm_accept a;
	char err[128];
	unsigned int i;

	memset(&a, 0, sizeof(a));
	a.handle = handle;
	a.o.qpn = qpn;
	a.o.psn = 0x654321;
	a.o.responder_resources = 3;
	a.o.initiator_depth = 1;
	a.o.rnr_retry_count = 4;
	a.o.priv_len = 10;
	for (i = 0; i < 10; i++)
		a.o.priv[i] = (uint8_t)(0x50 + i);
	assert_int_equal(fsw_cm_accept(h->cm, owner, &a, err, sizeof(err)),
			 0);
}

/* A connection A:0x100 -> B, established; the passive handle back. */
static uint32_t establish(struct h *h, uint32_t *active)
{
	const struct fsp_cm_event *e;
	uint32_t ph;

	do_listen(h, LID_B, OB, SID, 0);
	*active = do_connect(h, LID_A, OA, LID_B, SID, 0x100);
	deliver(h);
	e = last(h, OB, FAB_CM_EV_CONNECT_REQUEST);
	assert_non_null(e);
	ph = e->handle;
	do_accept(h, OB, ph, 0x300);
	deliver(h);
	assert_int_equal(nev(h, OA, FAB_CM_EV_ESTABLISHED), 1);
	assert_int_equal(nev(h, OB, FAB_CM_EV_ESTABLISHED), 1);
	return ph;
}

static int report_has(struct h *h, const char *s)
{
	static char buf[4 << 20];	/* a line per connection */

	fsw_cm_report(h->cm, buf, sizeof(buf));
	return strstr(buf, s) != NULL;
}

/* --- cases ------------------------------------------------------------- */

static void test_connect_accept_disconnect(void **state)
{
	struct h *h = *state;
	const struct fsp_cm_event *e;
	struct fsw_cm_port pa, pb;
	struct cm_msg m;
	uint32_t lh, ah, ph;
	char err[128];
	unsigned int i;

	op_by_lid(NULL, LID_A, &pa);
	op_by_lid(NULL, LID_B, &pb);
	lh = do_listen(h, LID_B, OB, SID, 0);
	ah = do_connect(h, LID_A, OA, LID_B, SID, 0x100);

	/* the REQ on the wire */
	assert_int_equal(h->qt - h->qh, 1);
	assert_int_equal(cm_mad_parse(h->q[h->qh % QMAX].mad, MAD_LEN, &m),
			 CM_MAD_OK);
	assert_int_equal(m.hdr.attr_id, CM_ATTR_REQ);
	assert_int_equal(m.hdr.method, MAD_METHOD_SEND);
	assert_int_not_equal(m.u.req.local_comm_id, 0);
	assert_true(m.u.req.service_id == SID);
	assert_true(m.u.req.local_ca_guid == pa.node_guid);
	assert_int_equal(m.u.req.local_qpn, 0x100);
	assert_int_equal(m.u.req.starting_psn, 0x123456);
	assert_int_equal(m.u.req.responder_resources, 4);
	assert_int_equal(m.u.req.initiator_depth, 2);
	assert_int_equal(m.u.req.retry_count, 5);
	assert_int_equal(m.u.req.rnr_retry_count, 6);
	assert_int_equal(m.u.req.transport, CM_TRANSPORT_RC);
	assert_int_equal(m.u.req.remote_cm_resp_timeout, FSW_CM_RESP_TIMEOUT);
	assert_int_equal(m.u.req.local_cm_resp_timeout, FSW_CM_RESP_TIMEOUT);
	assert_int_equal(m.u.req.max_cm_retries, FSW_CM_MAX_RETRIES);
	assert_int_equal(m.u.req.pkey, PKEY);
	assert_int_equal(m.u.req.path_mtu, 4);	/* min(5, 4) */
	assert_int_equal(m.u.req.primary.local_lid, LID_A);
	assert_int_equal(m.u.req.primary.remote_lid, LID_B);
	assert_memory_equal(m.u.req.primary.local_gid.raw, pa.gid.raw, 16);
	assert_memory_equal(m.u.req.primary.remote_gid.raw, pb.gid.raw, 16);
	assert_int_equal(m.u.req.primary.subnet_local, 1);
	assert_int_equal(m.u.req.primary.local_ack_timeout,
			 FSW_CM_ACK_TIMEOUT);
	assert_int_equal(h->q[h->qh % QMAX].slid, LID_A);
	assert_int_equal(h->q[h->qh % QMAX].dlid, LID_B);
	assert_int_equal(m.priv[0], 0xa0);
	deliver(h);

	e = last(h, OB, FAB_CM_EV_CONNECT_REQUEST);
	assert_non_null(e);
	assert_int_equal(e->listen_handle, lh);
	assert_int_not_equal(e->handle, 0);
	assert_int_not_equal(e->handle, lh);
	assert_true(e->service_id == SID);
	assert_int_equal(e->peer_qpn, 0x100);
	assert_int_equal(e->peer_psn, 0x123456);
	assert_int_equal(e->peer_lid, LID_A);
	assert_memory_equal(e->peer_gid, pa.gid.raw, 16);
	assert_int_equal(e->pkey, PKEY);
	assert_int_equal(e->path_mtu, 4);
	assert_int_equal(e->ack_timeout, FSW_CM_ACK_TIMEOUT);
	assert_int_equal(e->retry_count, 5);
	assert_int_equal(e->rnr_retry_count, 6);
	assert_int_equal(e->responder_resources, 2);	/* its initiator depth */
	assert_int_equal(e->initiator_depth, 4);	/* its responder res. */
	assert_int_equal(e->priv_len, CM_REQ_PRIV_LEN);
	for (i = 0; i < CM_REQ_PRIV_LEN; i++)
		assert_int_equal(e->priv[i], (uint8_t)(0xa0 + i));
	ph = e->handle;
	assert_int_equal(nev_owner(h, OA), 0);
	assert_true(report_has(h, "REQ_RCVD"));

	do_accept(h, OB, ph, 0x300);
	/* twice: EPROTO */
	{
		struct fsp_cm_accept a;

		memset(&a, 0, sizeof(a));
		a.handle = ph;
		a.o.qpn = 0x301;
		assert_int_equal(fsw_cm_accept(h->cm, OB, &a, err,
					       sizeof(err)), -1);
		assert_int_equal(errno, EPROTO);
		/* and not someone else's handle */
		a.handle = ph;
		assert_int_equal(fsw_cm_accept(h->cm, OA, &a, err,
					       sizeof(err)), -1);
		assert_int_equal(errno, ENOENT);
	}
	deliver(h);

	e = last(h, OA, FAB_CM_EV_ESTABLISHED);
	assert_non_null(e);
	assert_int_equal(e->handle, ah);
	assert_int_equal(e->peer_qpn, 0x300);
	assert_int_equal(e->peer_psn, 0x654321);
	assert_int_equal(e->peer_lid, LID_B);
	assert_memory_equal(e->peer_gid, pb.gid.raw, 16);
	assert_int_equal(e->path_mtu, 4);
	assert_int_equal(e->ack_timeout, FSW_CM_ACK_TIMEOUT);
	assert_int_equal(e->retry_count, 5);
	assert_int_equal(e->rnr_retry_count, 4);
	/* min of what each side offered: A's depth 2 against B's 3
	 * resources, A's 4 resources against B's depth 1 */
	assert_int_equal(e->initiator_depth, 2);
	assert_int_equal(e->responder_resources, 1);
	assert_int_equal(e->priv_len, CM_REP_PRIV_LEN);
	for (i = 0; i < 10; i++)
		assert_int_equal(e->priv[i], (uint8_t)(0x50 + i));
	assert_int_equal(e->priv[10], 0);
	e = last(h, OB, FAB_CM_EV_ESTABLISHED);
	assert_non_null(e);
	assert_int_equal(e->handle, ph);
	assert_int_equal(e->peer_qpn, 0x100);
	assert_int_equal(h->sent[CM_ATTR_RTU - CM_ATTR_REQ], 1);
	assert_int_equal(fsw_cm_stats(h->cm)->established, 2);
	assert_true(fsw_cm_next(h->cm) == UINT64_MAX);

	/* disconnect from A */
	assert_int_equal(fsw_cm_disconnect(h->cm, OA, ah, err, sizeof(err)),
			 0);
	assert_int_equal(fsw_cm_disconnect(h->cm, OA, ah, err, sizeof(err)),
			 -1);
	assert_int_equal(errno, EPROTO);
	deliver(h);
	assert_int_equal(nev(h, OA, FAB_CM_EV_DISCONNECTED), 1);
	assert_int_equal(nev(h, OB, FAB_CM_EV_DISCONNECTED), 1);
	assert_int_equal(last(h, OA, FAB_CM_EV_DISCONNECTED)->status, 0);
	assert_int_equal(h->sent[CM_ATTR_DREQ - CM_ATTR_REQ], 1);
	assert_int_equal(h->sent[CM_ATTR_DREP - CM_ATTR_REQ], 1);
	assert_true(report_has(h, "TIMEWAIT"));
	advance(h, FSW_CM_TIMEWAIT_MS - 1);
	assert_int_equal(nev(h, OA, FAB_CM_EV_TIMEWAIT_EXIT), 0);
	advance(h, 1);
	assert_int_equal(nev(h, OA, FAB_CM_EV_TIMEWAIT_EXIT), 1);
	assert_int_equal(nev(h, OB, FAB_CM_EV_TIMEWAIT_EXIT), 1);
	assert_int_equal(fsw_cm_destroy(h->cm, OA, ah), 0);
	assert_int_equal(fsw_cm_destroy(h->cm, OB, ph), 0);
	assert_int_equal(fsw_cm_destroy(h->cm, OB, ph), -1);
	assert_int_equal(errno, ENOENT);
	/* nothing was sent for the idle ones */
	assert_int_equal(h->qh, h->qt);
	assert_int_equal(fsw_cm_stats(h->cm)->bad_state, 0);
	assert_int_equal(fsw_cm_stats(h->cm)->unknown, 0);
}

static void test_reject_private_data(void **state)
{
	struct h *h = *state;
	const struct fsp_cm_event *e;
	struct fsp_cm_reject r;
	char err[128];
	uint32_t ah;

	do_listen(h, LID_B, OB, SID, 0);
	ah = do_connect(h, LID_A, OA, LID_B, SID, 0x100);
	deliver(h);
	e = last(h, OB, FAB_CM_EV_CONNECT_REQUEST);
	assert_non_null(e);
	memset(&r, 0, sizeof(r));
	r.handle = e->handle;
	r.priv_len = CM_REJ_PRIV_LEN + 1;
	assert_int_equal(fsw_cm_reject(h->cm, OB, &r, err, sizeof(err)), -1);
	assert_int_equal(errno, EINVAL);
	r.priv_len = 3;
	memcpy(r.priv, "no!", 3);
	assert_int_equal(fsw_cm_reject(h->cm, OB, &r, err, sizeof(err)), 0);
	deliver(h);
	e = last(h, OA, FAB_CM_EV_REJECTED);
	assert_non_null(e);
	assert_int_equal(e->handle, ah);
	assert_int_equal(e->status, CM_REJ_CONSUMER_DEFINED);
	assert_int_equal(e->priv_len, CM_REJ_PRIV_LEN);
	assert_memory_equal(e->priv, "no!", 3);
	assert_int_equal(e->priv[3], 0);
	assert_int_equal(nev(h, OA, FAB_CM_EV_ESTABLISHED), 0);
	/* the REQ timer is gone with it */
	advance(h, 20 * TO_MS);
	assert_int_equal(h->sent[0], 1);
	assert_int_equal(nev_owner(h, OA), 1);
}

static void test_no_listener(void **state)
{
	struct h *h = *state;
	const struct fsp_cm_event *e;
	uint32_t ah;

	do_listen(h, LID_B, OB, SID + 1, 0);
	do_listen(h, LID_C, OC, SID, 0);	/* another port's */
	ah = do_connect(h, LID_A, OA, LID_B, SID, 0x100);
	deliver(h);
	e = last(h, OA, FAB_CM_EV_REJECTED);
	assert_non_null(e);
	assert_int_equal(e->handle, ah);
	assert_int_equal(e->status, CM_REJ_INVALID_SERVICE_ID);
	assert_int_equal(nev_owner(h, OB), 0);
	assert_int_equal(nev_owner(h, OC), 0);
	assert_int_equal(fsw_cm_stats(h->cm)->unknown, 1);
}

static void test_backlog_full(void **state)
{
	struct h *h = *state;
	uint32_t a1, a2;

	do_listen(h, LID_B, OB, SID, 1);
	a1 = do_connect(h, LID_A, OA, LID_B, SID, 0x100);
	a2 = do_connect(h, LID_A, OA, LID_B, SID, 0x101);
	deliver(h);
	assert_int_equal(nev(h, OB, FAB_CM_EV_CONNECT_REQUEST), 1);
	assert_int_equal(nev(h, OA, FAB_CM_EV_REJECTED), 1);
	assert_int_equal(last(h, OA, FAB_CM_EV_REJECTED)->handle, a2);
	assert_int_equal(last(h, OA, FAB_CM_EV_REJECTED)->status,
			 CM_REJ_NO_RESOURCES);
	assert_int_not_equal(a1, a2);
	/* the accepted one leaves room for the next */
	do_accept(h, OB, last(h, OB, FAB_CM_EV_CONNECT_REQUEST)->handle,
		  0x300);
	deliver(h);
	do_connect(h, LID_A, OA, LID_B, SID, 0x102);
	deliver(h);
	assert_int_equal(nev(h, OB, FAB_CM_EV_CONNECT_REQUEST), 2);
}

static void test_req_lost_once(void **state)
{
	struct h *h = *state;

	do_listen(h, LID_B, OB, SID, 0);
	h->auto_accept = 1;
	h->drop[0] = 1;
	do_connect(h, LID_A, OA, LID_B, SID, 0x100);
	advance(h, TO_MS - 1);
	assert_int_equal(h->sent[0], 1);
	assert_int_equal(nev_owner(h, OB), 0);
	advance(h, 1);
	assert_int_equal(h->sent[0], 2);
	assert_int_equal(fsw_cm_stats(h->cm)->retransmits, 1);
	assert_int_equal(nev(h, OB, FAB_CM_EV_CONNECT_REQUEST), 1);
	assert_int_equal(nev(h, OA, FAB_CM_EV_ESTABLISHED), 1);
	assert_int_equal(nev(h, OB, FAB_CM_EV_ESTABLISHED), 1);
	advance(h, 30 * TO_MS);
	assert_int_equal(h->sent[0], 2);
	assert_int_equal(h->nev, 3);
}

static void test_req_all_lost(void **state)
{
	struct h *h = *state;
	const struct fsp_cm_event *e;
	uint32_t ah;

	do_listen(h, LID_B, OB, SID, 0);
	h->drop[0] = 1000;
	h->drop[CM_ATTR_REJ - CM_ATTR_REQ] = 1000;
	ah = do_connect(h, LID_A, OA, LID_B, SID, 0x100);
	advance(h, (uint64_t)TO_MS * (FSW_CM_MAX_RETRIES + 1) - 1);
	assert_int_equal(nev_owner(h, OA), 0);
	assert_int_equal(h->sent[0], FSW_CM_MAX_RETRIES + 1);
	advance(h, 1);
	e = last(h, OA, FAB_CM_EV_UNREACHABLE);
	assert_non_null(e);
	assert_int_equal(e->handle, ah);
	assert_int_equal(e->status, ETIMEDOUT);
	assert_int_equal(h->sent[0], FSW_CM_MAX_RETRIES + 1);
	assert_int_equal(h->rej_reason[CM_REJ_TIMEOUT], 1);
	assert_int_equal(fsw_cm_stats(h->cm)->timeouts, 1);
	assert_true(fsw_cm_next(h->cm) == UINT64_MAX);
	assert_int_equal(nev_owner(h, OB), 0);
	/* the QP is free again */
	do_connect(h, LID_A, OA, LID_B, SID, 0x100);
}

static void test_rep_lost(void **state)
{
	struct h *h = *state;

	do_listen(h, LID_B, OB, SID, 0);
	h->drop[CM_ATTR_REP - CM_ATTR_REQ] = 1;
	do_connect(h, LID_A, OA, LID_B, SID, 0x100);
	deliver(h);
	assert_int_equal(nev(h, OB, FAB_CM_EV_CONNECT_REQUEST), 1);
	/* accepted a little later, so that the REQ's timer runs first */
	advance(h, 100);
	do_accept(h, OB, last(h, OB, FAB_CM_EV_CONNECT_REQUEST)->handle,
		  0x300);
	deliver(h);
	assert_int_equal(h->sent[CM_ATTR_REP - CM_ATTR_REQ], 1);
	assert_int_equal(nev(h, OA, FAB_CM_EV_ESTABLISHED), 0);
	/* the REQ again is answered with the REP again */
	advance(h, TO_MS - 100);
	assert_int_equal(h->sent[0], 2);
	assert_int_equal(h->sent[CM_ATTR_REP - CM_ATTR_REQ], 2);
	assert_int_equal(nev(h, OB, FAB_CM_EV_CONNECT_REQUEST), 1);
	assert_int_equal(nev(h, OA, FAB_CM_EV_ESTABLISHED), 1);
	assert_int_equal(nev(h, OB, FAB_CM_EV_ESTABLISHED), 1);
	assert_int_equal(fsw_cm_stats(h->cm)->duplicates, 1);
	/* and the REP's own timer is gone */
	advance(h, 30 * TO_MS);
	assert_int_equal(h->sent[CM_ATTR_REP - CM_ATTR_REQ], 2);
	assert_int_equal(h->nev, 3);
}

static void test_rtu_lost(void **state)
{
	struct h *h = *state;

	do_listen(h, LID_B, OB, SID, 0);
	h->auto_accept = 1;
	h->drop[CM_ATTR_RTU - CM_ATTR_REQ] = 1;
	do_connect(h, LID_A, OA, LID_B, SID, 0x100);
	deliver(h);
	assert_int_equal(nev(h, OA, FAB_CM_EV_ESTABLISHED), 1);
	assert_int_equal(nev(h, OB, FAB_CM_EV_ESTABLISHED), 0);
	advance(h, TO_MS);
	assert_int_equal(h->sent[CM_ATTR_REP - CM_ATTR_REQ], 2);
	assert_int_equal(h->sent[CM_ATTR_RTU - CM_ATTR_REQ], 2);
	assert_int_equal(nev(h, OA, FAB_CM_EV_ESTABLISHED), 1);
	assert_int_equal(nev(h, OB, FAB_CM_EV_ESTABLISHED), 1);
	advance(h, 30 * TO_MS);
	assert_int_equal(h->sent[CM_ATTR_REP - CM_ATTR_REQ], 2);
	assert_int_equal(h->nev, 3);
}

static void test_slow_accept_mra(void **state)
{
	struct h *h = *state;
	uint32_t ph;

	do_listen(h, LID_B, OB, SID, 0);
	do_connect(h, LID_A, OA, LID_B, SID, 0x100);
	deliver(h);
	ph = last(h, OB, FAB_CM_EV_CONNECT_REQUEST)->handle;
	advance(h, TO_MS / 2 - 1);
	assert_int_equal(h->sent[CM_ATTR_MRA - CM_ATTR_REQ], 0);
	advance(h, 1);
	assert_int_equal(h->sent[CM_ATTR_MRA - CM_ATTR_REQ], 1);
	assert_true(report_has(h, "MRA_RCVD"));
	/* far longer than the REQ's retries would last without it */
	advance(h, 30000);
	assert_int_equal(nev_owner(h, OA), 0);
	assert_true(h->sent[CM_ATTR_MRA - CM_ATTR_REQ] >= 2);
	assert_true(h->sent[0] <= FSW_CM_MAX_RETRIES);
	assert_int_equal(nev(h, OB, FAB_CM_EV_CONNECT_REQUEST), 1);
	do_accept(h, OB, ph, 0x300);
	deliver(h);
	assert_int_equal(nev(h, OA, FAB_CM_EV_ESTABLISHED), 1);
	assert_int_equal(nev(h, OB, FAB_CM_EV_ESTABLISHED), 1);
}

/* The active side gives up on a REQ the passive process holds (it never
 * had the passive comm ID: the MRA does not carry it): its REJ reaches
 * that process, before the MRA and after. */
static void test_req_withdrawn(void **state)
{
	struct h *h = *state;
	const struct fsp_cm_event *e;
	uint32_t ah, ph;
	int mra;

	do_listen(h, LID_B, OB, SID, 0);
	for (mra = 0; mra < 2; mra++) {
		ah = do_connect(h, LID_A, OA, LID_B, SID, 0x100 + mra);
		deliver(h);
		ph = last(h, OB, FAB_CM_EV_CONNECT_REQUEST)->handle;
		if (mra) {
			advance(h, TO_MS);
			assert_true(report_has(h, "MRA_RCVD"));
		}
		assert_int_equal(fsw_cm_destroy(h->cm, OA, ah), 0);
		deliver(h);
		assert_int_equal(nev(h, OB, FAB_CM_EV_REJECTED), mra + 1);
		e = last(h, OB, FAB_CM_EV_REJECTED);
		assert_int_equal(e->handle, ph);
		assert_int_equal(e->status, CM_REJ_TIMEOUT);
		assert_int_equal(fsw_cm_stats(h->cm)->unknown, 0);
		assert_int_equal(fsw_cm_destroy(h->cm, OB, ph), 0);
	}
	assert_int_equal(nev_owner(h, OA), 0);
}

static void test_dup_dreq(void **state)
{
	struct h *h = *state;
	uint32_t ah, ph;
	char err[128];

	ph = establish(h, &ah);
	/* the first DREP lost, the DREQ arriving twice: the second, in
	 * timewait, is answered again */
	h->drop[CM_ATTR_DREP - CM_ATTR_REQ] = 1;
	h->dup[CM_ATTR_DREQ - CM_ATTR_REQ] = 1;
	assert_int_equal(fsw_cm_disconnect(h->cm, OA, ah, err, sizeof(err)),
			 0);
	deliver(h);
	assert_int_equal(h->sent[CM_ATTR_DREQ - CM_ATTR_REQ], 1);
	assert_int_equal(h->sent[CM_ATTR_DREP - CM_ATTR_REQ], 2);
	assert_int_equal(fsw_cm_stats(h->cm)->duplicates, 1);
	assert_int_equal(nev(h, OB, FAB_CM_EV_DISCONNECTED), 1);
	assert_int_equal(last(h, OB, FAB_CM_EV_DISCONNECTED)->handle, ph);
	assert_int_equal(nev(h, OA, FAB_CM_EV_DISCONNECTED), 1);
	assert_int_equal(last(h, OA, FAB_CM_EV_DISCONNECTED)->status, 0);
	advance(h, FSW_CM_TIMEWAIT_MS);
	assert_int_equal(nev(h, OB, FAB_CM_EV_TIMEWAIT_EXIT), 1);
	assert_int_equal(nev(h, OA, FAB_CM_EV_TIMEWAIT_EXIT), 1);
	assert_int_equal(h->sent[CM_ATTR_DREQ - CM_ATTR_REQ], 1);
}

/* The DREP lost and B's timewait over before the DREQ comes again: a
 * DREQ for a comm ID B no longer has still gets its DREP (ib_cm's
 * cm_issue_drep). */
static void test_dreq_after_timewait(void **state)
{
	struct h *h = *state;
	uint32_t ah;
	char err[128];

	establish(h, &ah);
	h->drop[CM_ATTR_DREP - CM_ATTR_REQ] = 1;
	assert_int_equal(fsw_cm_disconnect(h->cm, OA, ah, err, sizeof(err)),
			 0);
	deliver(h);
	assert_int_equal(nev(h, OB, FAB_CM_EV_DISCONNECTED), 1);
	assert_int_equal(nev(h, OA, FAB_CM_EV_DISCONNECTED), 0);
	advance(h, TO_MS);
	assert_int_equal(nev(h, OB, FAB_CM_EV_TIMEWAIT_EXIT), 1);
	assert_int_equal(h->sent[CM_ATTR_DREQ - CM_ATTR_REQ], 2);
	assert_int_equal(h->sent[CM_ATTR_DREP - CM_ATTR_REQ], 2);
	assert_int_equal(nev(h, OA, FAB_CM_EV_DISCONNECTED), 1);
	assert_int_equal(nev(h, OB, FAB_CM_EV_DISCONNECTED), 1);
}

static void test_dreq_timeout(void **state)
{
	struct h *h = *state;
	uint32_t ah;
	char err[128];
	uint64_t t0;

	establish(h, &ah);
	h->drop[CM_ATTR_DREQ - CM_ATTR_REQ] = 1000;
	assert_int_equal(fsw_cm_disconnect(h->cm, OA, ah, err, sizeof(err)),
			 0);
	t0 = h->now;
	advance(h, (uint64_t)TO_MS * (FSW_CM_MAX_RETRIES + 1) - 1);
	assert_int_equal(nev(h, OA, FAB_CM_EV_DISCONNECTED), 0);
	advance(h, 1);
	assert_int_equal(nev(h, OA, FAB_CM_EV_DISCONNECTED), 1);
	assert_int_equal(last(h, OA, FAB_CM_EV_DISCONNECTED)->status,
			 ETIMEDOUT);
	assert_int_equal(h->sent[CM_ATTR_DREQ - CM_ATTR_REQ],
			 FSW_CM_MAX_RETRIES + 1);
	assert_int_equal(nev(h, OB, FAB_CM_EV_DISCONNECTED), 0);
	advance(h, FSW_CM_TIMEWAIT_MS);
	assert_int_equal(nev(h, OA, FAB_CM_EV_TIMEWAIT_EXIT), 1);
	assert_true(h->now - t0 >= (uint64_t)TO_MS * 9);
}

/* a REQ for SID from A with the P_Key field pkey */
static void forge_req_pkey(uint8_t mad[MAD_LEN], uint32_t comm_id,
			   uint32_t qpn, uint16_t pkey);

/* a REQ as a rebooted port A would send it: the same QPN, a new comm ID */
static void forge_req(uint8_t mad[MAD_LEN], uint32_t comm_id, uint32_t qpn)
{
	forge_req_pkey(mad, comm_id, qpn, PKEY);
}

static void forge_req_pkey(uint8_t mad[MAD_LEN], uint32_t comm_id,
			   uint32_t qpn, uint16_t pkey)
{
	struct cm_msg m;
	enum cm_mad_err e;

	memset(&m, 0, sizeof(m));
	m.hdr.attr_id = CM_ATTR_REQ;
	m.hdr.tid = 0x4242;
	m.u.req.local_comm_id = comm_id;
	m.u.req.service_id = SID;
	m.u.req.local_qpn = qpn;
	m.u.req.starting_psn = 1;
	m.u.req.remote_cm_resp_timeout = FSW_CM_RESP_TIMEOUT;
	m.u.req.local_cm_resp_timeout = FSW_CM_RESP_TIMEOUT;
	m.u.req.pkey = pkey;
	m.u.req.path_mtu = 4;
	m.u.req.max_cm_retries = 8;
	m.u.req.primary.local_lid = LID_A;
	m.u.req.primary.remote_lid = LID_B;
	assert_int_equal(cm_mad_build(&m, mad, &e), 0);
}

static void test_stale_connection(void **state)
{
	struct h *h = *state;
	uint8_t mad[MAD_LEN];
	uint32_t ah;

	establish(h, &ah);
	forge_req(mad, 0x5eed, 0x100);
	input_raw(h, LID_A, LID_B, PKEY, mad, MAD_LEN);
	assert_int_equal(h->rej_reason[CM_REJ_STALE_CONN], 1);
	assert_int_equal(fsw_cm_stats(h->cm)->stale, 1);
	assert_int_equal(nev(h, OB, FAB_CM_EV_CONNECT_REQUEST), 1);
	/* the live one untouched (the REJ names a comm ID A never had) */
	deliver(h);
	assert_true(report_has(h, "passive ESTABLISHED"));
	assert_true(report_has(h, "active ESTABLISHED"));
	assert_int_equal(nev(h, OA, FAB_CM_EV_REJECTED), 0);
	assert_int_equal(nev(h, OB, FAB_CM_EV_DISCONNECTED), 0);
	/* another QPN from A is a new connection */
	forge_req(mad, 0x5eee, 0x101);
	input_raw(h, LID_A, LID_B, PKEY, mad, MAD_LEN);
	assert_int_equal(nev(h, OB, FAB_CM_EV_CONNECT_REQUEST), 2);
}

static void test_owner_gone(void **state)
{
	struct h *h = *state;
	uint32_t ah, n;

	establish(h, &ah);
	/* and a pending REQ to one of A's listeners */
	do_listen(h, LID_A, OA, SID + 5, 0);
	do_connect(h, LID_C, OC, LID_A, SID + 5, 0x500);
	deliver(h);
	assert_int_equal(nev(h, OA, FAB_CM_EV_CONNECT_REQUEST), 1);
	n = nev_owner(h, OA);
	fsw_cm_owner_gone(h->cm, OA);
	h->gone = OA;
	assert_int_equal(fsw_cm_destroy(h->cm, OA, ah), -1);
	deliver(h);
	assert_int_equal(h->sent[CM_ATTR_DREQ - CM_ATTR_REQ], 1);
	assert_int_equal(nev(h, OB, FAB_CM_EV_DISCONNECTED), 1);
	assert_int_equal(nev(h, OC, FAB_CM_EV_REJECTED), 1);
	assert_int_equal(last(h, OC, FAB_CM_EV_REJECTED)->status,
			 CM_REJ_CONSUMER_DEFINED);
	advance(h, 60000);
	assert_int_equal(nev_owner(h, OA), n);
	assert_int_equal(nev(h, OB, FAB_CM_EV_TIMEWAIT_EXIT), 1);
	/* A's connection left after its timewait */
	assert_false(report_has(h, "(gone)"));
	/* its listener went too */
	do_connect(h, LID_C, OC, LID_A, SID + 5, 0x501);
	deliver(h);
	assert_int_equal(last(h, OC, FAB_CM_EV_REJECTED)->status,
			 CM_REJ_INVALID_SERVICE_ID);
}

/* Connections made and closed faster than timewait ends: those in
 * timewait do not count against a port's bound (FSW_CM_MAX_PORT_CONNS),
 * and past FSW_CM_MAX_TIMEWAIT the oldest ends early. */
static void churn(struct h *h, unsigned int from, unsigned int to)
{
	uint32_t ah, i;
	char err[128];

	for (i = from; i < to; i++) {
		ah = do_connect(h, LID_A, OA, LID_B, SID, 0x1000 + i);
		deliver(h);
		assert_int_equal(fsw_cm_disconnect(h->cm, OA, ah, err,
						   sizeof(err)), 0);
		deliver(h);
		assert_int_equal(fsw_cm_destroy(h->cm, OA, ah), 0);
		assert_int_equal(fsw_cm_destroy(h->cm, OB, h->last_req), 0);
	}
}

static void test_timewait_churn(void **state)
{
	struct h *h = *state;
	char want[64];
	unsigned int n = FSW_CM_MAX_PORT_CONNS + 200;

	h->auto_accept = 1;
	do_listen(h, LID_B, OB, SID, 0);
	churn(h, 0, n);
	assert_int_equal(fsw_cm_stats(h->cm)->established, 2 * n);
	snprintf(want, sizeof(want), " timewait %u timewait_cut 0\n", 2 * n);
	assert_true(report_has(h, want));
	/* on to twice as many timewaits as the bound: the oldest go */
	churn(h, n, FSW_CM_MAX_TIMEWAIT);
	assert_int_equal(fsw_cm_stats(h->cm)->established,
			 2 * FSW_CM_MAX_TIMEWAIT);
	assert_int_equal(fsw_cm_stats(h->cm)->timewait_cut,
			 FSW_CM_MAX_TIMEWAIT);
	snprintf(want, sizeof(want), " timewait %u timewait_cut %u\n",
		 FSW_CM_MAX_TIMEWAIT, FSW_CM_MAX_TIMEWAIT);
	assert_true(report_has(h, want));
	advance(h, FSW_CM_TIMEWAIT_MS);
	assert_true(report_has(h, " timewait 0 timewait_cut "));
	/* live connections still have their bound */
	churn(h, 0, 1);
}

static void test_listen_in_use(void **state)
{
	struct h *h = *state;
	struct fsp_cm_listen l = { .service_id = SID };
	uint32_t handle;
	char err[128];

	do_listen(h, LID_B, OB, SID, 0);
	assert_int_equal(fsw_cm_listen(h->cm, LID_B, OB2, &l, &handle, err,
				       sizeof(err)), -1);
	assert_int_equal(errno, EADDRINUSE);
	assert_int_equal(fsw_cm_listen(h->cm, LID_B, OB, &l, &handle, err,
				       sizeof(err)), -1);
	assert_int_equal(errno, EADDRINUSE);
	/* a mask covering it overlaps too */
	l.service_id = SID & ~0xffull;
	l.service_mask = ~0xffull;
	assert_int_equal(fsw_cm_listen(h->cm, LID_B, OB2, &l, &handle, err,
				       sizeof(err)), -1);
	assert_int_equal(errno, EADDRINUSE);
	/* another port: fine */
	do_listen(h, LID_C, OC, SID, 0);
	do_listen(h, LID_B, OB2, SID + 1, 0);
}

/* Listeners by partition: the same service IDs in two partitions, a REQ
 * to the one of its P_Key (low 15 bits), none for a third. */
static void test_listen_by_pkey(void **state)
{
	struct h *h = *state;
	struct fsp_cm_listen l = { .service_id = SID, .pkey = 0x0001 };
	const struct fsp_cm_event *e;
	uint32_t l1, l2, handle, ah;
	uint8_t mad[MAD_LEN];
	char err[128];

	h->listen_pkey = 0x8001;
	l1 = do_listen(h, LID_B, OB, SID, 0);
	h->listen_pkey = 0x0002;
	l2 = do_listen(h, LID_B, OB2, SID, 0);
	/* the same partition without the membership bit: in use */
	assert_int_equal(fsw_cm_listen(h->cm, LID_B, OC, &l, &handle, err,
				       sizeof(err)), -1);
	assert_int_equal(errno, EADDRINUSE);
	/* every partition overlaps both */
	l.pkey = 0;
	assert_int_equal(fsw_cm_listen(h->cm, LID_B, OC, &l, &handle, err,
				       sizeof(err)), -1);
	assert_int_equal(errno, EADDRINUSE);
	/* and a listener of every partition keeps a partition's out */
	h->listen_pkey = 0;
	do_listen(h, LID_B, OC, SID + 1, 0);
	l.service_id = SID + 1;
	l.pkey = 0x0003;
	assert_int_equal(fsw_cm_listen(h->cm, LID_B, OC, &l, &handle, err,
				       sizeof(err)), -1);
	assert_int_equal(errno, EADDRINUSE);
	assert_true(report_has(h, "pkey 0x0001\n"));
	assert_true(report_has(h, "pkey 0x0002\n"));
	assert_true(report_has(h, "pkey any\n"));

	h->req_pkey = 0x8002;
	do_connect(h, LID_A, OA, LID_B, SID, 0x100);
	deliver(h);
	assert_int_equal(nev(h, OB, FAB_CM_EV_CONNECT_REQUEST), 0);
	e = last(h, OB2, FAB_CM_EV_CONNECT_REQUEST);
	assert_non_null(e);
	assert_int_equal(e->listen_handle, l2);
	assert_int_equal(e->pkey, 0x8002);
	h->req_pkey = 0xffff;	/* a member of neither */
	ah = do_connect(h, LID_A, OA, LID_B, SID, 0x101);
	deliver(h);
	e = last(h, OA, FAB_CM_EV_REJECTED);
	assert_non_null(e);
	assert_int_equal(e->handle, ah);
	assert_int_equal(e->status, CM_REJ_INVALID_SERVICE_ID);
	assert_int_equal(fsw_cm_stats(h->cm)->unknown, 1);
	h->req_pkey = 0x0001;	/* a limited member of the first */
	do_connect(h, LID_A, OA, LID_B, SID, 0x102);
	deliver(h);
	e = last(h, OB, FAB_CM_EV_CONNECT_REQUEST);
	assert_non_null(e);
	assert_int_equal(e->listen_handle, l1);
	assert_int_equal(nev(h, OB2, FAB_CM_EV_CONNECT_REQUEST), 1);
	/* the listener of every partition takes any P_Key */
	h->req_pkey = 0x7fff;
	do_connect(h, LID_A, OA, LID_B, SID + 1, 0x103);
	deliver(h);
	assert_int_equal(nev(h, OC, FAB_CM_EV_CONNECT_REQUEST), 1);
	/* a REQ naming a partition other than the one it came in reaches
	 * no listener: sent in 0xffff for 0x8002, and in 0x8002 for 0xffff */
	forge_req_pkey(mad, 0x7001, 0x104, 0x8002);
	input_raw(h, LID_A, LID_B, 0xffff, mad, MAD_LEN);
	forge_req_pkey(mad, 0x7002, 0x105, 0xffff);
	input_raw(h, LID_A, LID_B, 0x8002, mad, MAD_LEN);
	assert_int_equal(nev(h, OB2, FAB_CM_EV_CONNECT_REQUEST), 1);
	assert_int_equal(fsw_cm_stats(h->cm)->bad_pkey, 2);
	assert_int_equal(h->rej_reason[CM_REJ_INVALID_SERVICE_ID], 3);
	assert_true(report_has(h, " bad_pkey 2 "));
}

static void test_two_owners_one_port(void **state)
{
	struct h *h = *state;
	uint32_t l1, l2, a1, a2;

	l1 = do_listen(h, LID_B, OB, SID + 1, 0);
	l2 = do_listen(h, LID_B, OB2, SID + 2, 0);
	h->auto_accept = 1;
	a1 = do_connect(h, LID_A, OA, LID_B, SID + 1, 0x100);
	a2 = do_connect(h, LID_A, OA, LID_B, SID + 2, 0x101);
	deliver(h);
	assert_int_equal(nev(h, OB, FAB_CM_EV_CONNECT_REQUEST), 1);
	assert_int_equal(nev(h, OB2, FAB_CM_EV_CONNECT_REQUEST), 1);
	assert_int_equal(last(h, OB, FAB_CM_EV_CONNECT_REQUEST)->listen_handle,
			 l1);
	assert_int_equal(last(h, OB2,
			      FAB_CM_EV_CONNECT_REQUEST)->listen_handle, l2);
	assert_int_equal(last(h, OB, FAB_CM_EV_CONNECT_REQUEST)->peer_qpn,
			 0x100);
	assert_int_equal(last(h, OB2, FAB_CM_EV_CONNECT_REQUEST)->peer_qpn,
			 0x101);
	assert_int_equal(nev(h, OB, FAB_CM_EV_ESTABLISHED), 1);
	assert_int_equal(nev(h, OB2, FAB_CM_EV_ESTABLISHED), 1);
	assert_int_equal(nev(h, OA, FAB_CM_EV_ESTABLISHED), 2);
	/* one owner's disconnect leaves the other's connection */
	{
		char err[128];

		assert_int_equal(fsw_cm_disconnect(h->cm, OB2,
			last(h, OB2, FAB_CM_EV_ESTABLISHED)->handle, err,
			sizeof(err)), 0);
	}
	deliver(h);
	assert_int_equal(nev(h, OA, FAB_CM_EV_DISCONNECTED), 1);
	assert_int_equal(last(h, OA, FAB_CM_EV_DISCONNECTED)->handle, a2);
	assert_int_equal(nev(h, OB, FAB_CM_EV_DISCONNECTED), 0);
	assert_int_not_equal(a1, a2);
}

static void test_connect_errors(void **state)
{
	struct h *h = *state;
	struct fsp_cm_connect c;
	uint32_t handle;
	char err[128];

	memset(&c, 0, sizeof(c));
	c.service_id = SID;
	c.o.qpn = 0x100;
	gid_of(LID_B, c.gid);
	c.gid[15] ^= 1;
	assert_int_equal(fsw_cm_connect(h->cm, LID_A, OA, &c, PKEY, &handle,
					err, sizeof(err)), -1);
	assert_int_equal(errno, EHOSTUNREACH);
	gid_of(LID_B, c.gid);
	assert_int_equal(fsw_cm_connect(h->cm, LID_DOWN, OA, &c, PKEY,
					&handle, err, sizeof(err)), -1);
	assert_int_equal(errno, ENETDOWN);
	c.o.priv_len = CM_REQ_PRIV_LEN + 1;
	assert_int_equal(fsw_cm_connect(h->cm, LID_A, OA, &c, PKEY, &handle,
					err, sizeof(err)), -1);
	assert_int_equal(errno, EINVAL);
	c.o.priv_len = 0;
	c.o.psn = 0x1000000;
	assert_int_equal(fsw_cm_connect(h->cm, LID_A, OA, &c, PKEY, &handle,
					err, sizeof(err)), -1);
	assert_int_equal(errno, EINVAL);
	c.o.psn = 0;
	assert_int_equal(fsw_cm_connect(h->cm, LID_A, OA, &c, PKEY, &handle,
					err, sizeof(err)), 0);
	assert_int_equal(fsw_cm_connect(h->cm, LID_A, OA, &c, PKEY, &handle,
					err, sizeof(err)), -1);
	assert_int_equal(errno, EBUSY);
	/* by LID, defaults for 0 counts */
	memset(c.gid, 0, 16);
	c.dlid = LID_C;
	c.o.qpn = 0x101;
	assert_int_equal(fsw_cm_connect(h->cm, LID_A, OA, &c, PKEY, &handle,
					err, sizeof(err)), 0);
	{
		struct cm_msg m;

		assert_int_equal(cm_mad_parse(h->q[(h->qt - 1) % QMAX].mad,
					      MAD_LEN, &m), CM_MAD_OK);
		assert_int_equal(m.u.req.retry_count, 7);
		assert_int_equal(m.u.req.rnr_retry_count, 7);
		assert_int_equal(m.u.req.responder_resources, 1);
		assert_int_equal(m.u.req.initiator_depth, 1);
		assert_int_equal(m.u.req.path_mtu, 3);
		assert_int_equal(h->q[(h->qt - 1) % QMAX].dlid, LID_C);
	}
	assert_int_equal(fsw_cm_disconnect(h->cm, OA, handle, err,
					   sizeof(err)), -1);
	assert_int_equal(errno, EPROTO);
	/* destroying a REQ_SENT one tells the peer (REJ timeout) */
	assert_int_equal(fsw_cm_destroy(h->cm, OA, handle), 0);
	assert_int_equal(h->rej_reason[CM_REJ_TIMEOUT], 1);
}

static void test_malformed(void **state)
{
	struct h *h = *state;
	const struct fsw_cm_stats *st = fsw_cm_stats(h->cm);
	uint8_t mad[MAD_LEN], good[MAD_LEN];
	struct cm_msg m;
	enum cm_mad_err e;
	uint32_t ah, ph;
	unsigned int n;

	ph = establish(h, &ah);
	(void)ph;
	n = h->nev;

	/* truncated */
	forge_req(good, 0x777, 0x900);
	input_raw(h, LID_A, LID_B, PKEY, good, 100);
	assert_int_equal(st->bad_mad, 1);
	/* an attribute CM does not have */
	memcpy(mad, good, MAD_LEN);
	mad[16] = 0;
	mad[17] = 0x20;
	input_raw(h, LID_A, LID_B, PKEY, mad, MAD_LEN);
	assert_int_equal(st->bad_mad, 2);
	/* not a Send */
	memcpy(mad, good, MAD_LEN);
	mad[3] = 0x01;
	input_raw(h, LID_A, LID_B, PKEY, mad, MAD_LEN);
	assert_int_equal(st->bad_mad, 3);
	/* path MTU 0 */
	memcpy(mad, good, MAD_LEN);
	mad[MAD_HDR_LEN + 50] &= 0x0f;
	input_raw(h, LID_A, LID_B, PKEY, mad, MAD_LEN);
	assert_int_equal(st->bad_mad, 4);
	assert_int_equal(h->qh, h->qt);

	/* a REP naming comm IDs no one has: REJ invalid comm ID */
	memset(&m, 0, sizeof(m));
	m.hdr.attr_id = CM_ATTR_REP;
	m.u.rep.local_comm_id = 0xdead;
	m.u.rep.remote_comm_id = 0xbeef;
	m.u.rep.local_qpn = 0x300;
	assert_int_equal(cm_mad_build(&m, mad, &e), 0);
	input_raw(h, LID_B, LID_A, PKEY, mad, MAD_LEN);
	assert_int_equal(st->unknown, 1);
	assert_int_equal(h->rej_reason[CM_REJ_INVALID_COMM_ID], 1);
	/* an RTU too */
	m.hdr.attr_id = CM_ATTR_RTU;
	assert_int_equal(cm_mad_build(&m, mad, &e), 0);
	input_raw(h, LID_A, LID_B, PKEY, mad, MAD_LEN);
	assert_int_equal(st->unknown, 2);
	assert_int_equal(h->rej_reason[CM_REJ_INVALID_COMM_ID], 2);
	/* those REJs name nothing either */
	deliver(h);
	assert_int_equal(st->unknown, 4);

	/* a DREQ with the right comm IDs naming another QPN */
	{
		struct cm_msg req;
		unsigned int i;
		uint32_t aid = 0, bid = 0;

		/* the comm IDs from the REP the wire carried: rebuild them
		 * from the report would be fragile; take them from a
		 * duplicate REP's RTU instead: none needed, read the
		 * report's "comm" fields */
		static char buf[4096];
		char *p;

		fsw_cm_report(h->cm, buf, sizeof(buf));
		p = strstr(buf, "active ESTABLISHED");
		assert_non_null(p);
		assert_int_equal(sscanf(p, "active ESTABLISHED qpn %*x comm %x peer %*x qpn %*x comm %x",
					&aid, &bid), 2);
		memset(&req, 0, sizeof(req));
		req.hdr.attr_id = CM_ATTR_DREQ;
		req.u.dreq.local_comm_id = aid;
		req.u.dreq.remote_comm_id = bid;
		req.u.dreq.remote_qpn = 0x301;	/* B's is 0x300 */
		assert_int_equal(cm_mad_build(&req, mad, &e), 0);
		input_raw(h, LID_A, LID_B, PKEY, mad, MAD_LEN);
		assert_int_equal(st->unknown, 5);
		/* from the wrong port with the right QPN */
		req.u.dreq.remote_qpn = 0x300;
		assert_int_equal(cm_mad_build(&req, mad, &e), 0);
		input_raw(h, LID_C, LID_B, PKEY, mad, MAD_LEN);
		assert_int_equal(st->unknown, 6);
		/* the right QPN, B's comm ID, not A's */
		req.u.dreq.local_comm_id = aid + 1;
		assert_int_equal(cm_mad_build(&req, mad, &e), 0);
		input_raw(h, LID_A, LID_B, PKEY, mad, MAD_LEN);
		assert_int_equal(st->unknown, 7);
		h->qh = h->qt;	/* its DREP */
		/* a REJ with our comm ID but another's: nothing */
		memset(&req, 0, sizeof(req));
		req.hdr.attr_id = CM_ATTR_REJ;
		req.u.rej.local_comm_id = aid + 1;
		req.u.rej.remote_comm_id = bid;
		req.u.rej.reason = CM_REJ_STALE_CONN;
		assert_int_equal(cm_mad_build(&req, mad, &e), 0);
		input_raw(h, LID_A, LID_B, PKEY, mad, MAD_LEN);
		assert_int_equal(st->unknown, 8);
		for (i = 0; i < 3; i++)
			deliver(h);
	}
	assert_true(report_has(h, "passive ESTABLISHED"));
	assert_true(report_has(h, "active ESTABLISHED"));
	assert_int_equal(h->nev, n);
	assert_true(report_has(h, "bad_mad 4"));
}

/* A REP naming a QPN of B that A is already connected to: REJ 10, the
 * new connection's owner told, the live one untouched. */
static void test_rep_stale(void **state)
{
	struct h *h = *state;
	uint8_t mad[MAD_LEN];
	struct cm_msg m;
	enum cm_mad_err e;
	uint32_t ah, a2, cid;

	establish(h, &ah);
	h->drop[0] = 1;
	a2 = do_connect(h, LID_A, OA, LID_B, SID, 0x101);
	assert_int_equal(cm_mad_parse(h->q[(h->qt - 1) % QMAX].mad, MAD_LEN,
				      &m), CM_MAD_OK);
	cid = m.u.req.local_comm_id;
	deliver(h);
	memset(&m, 0, sizeof(m));
	m.hdr.attr_id = CM_ATTR_REP;
	m.u.rep.local_comm_id = 0x999;
	m.u.rep.remote_comm_id = cid;
	m.u.rep.local_qpn = 0x300;	/* B's QP of the live connection */
	assert_int_equal(cm_mad_build(&m, mad, &e), 0);
	input_raw(h, LID_B, LID_A, PKEY, mad, MAD_LEN);
	assert_int_equal(h->rej_reason[CM_REJ_STALE_CONN], 1);
	assert_int_equal(fsw_cm_stats(h->cm)->stale, 1);
	assert_non_null(last(h, OA, FAB_CM_EV_REJECTED));
	assert_int_equal(last(h, OA, FAB_CM_EV_REJECTED)->handle, a2);
	assert_int_equal(last(h, OA, FAB_CM_EV_REJECTED)->status,
			 CM_REJ_STALE_CONN);
	assert_int_equal(nev(h, OA, FAB_CM_EV_ESTABLISHED), 1);
	deliver(h);
	assert_true(report_has(h, "active ESTABLISHED"));
	assert_true(report_has(h, "passive ESTABLISHED"));
	assert_int_equal(nev(h, OB, FAB_CM_EV_DISCONNECTED), 0);
	/* and its REQ timer is gone */
	advance(h, 20 * TO_MS);
	assert_int_equal(h->sent[0], 2);
}

/* The QP destroyed under a live connection: DREQ, the owner's handle
 * gone; under a REQ_SENT one: REJ timeout with the CA GUID. */
static void test_qp_gone(void **state)
{
	struct h *h = *state;
	struct fsw_cm_port pa;
	struct cm_msg m;
	uint32_t ah, a2;
	unsigned int n;

	establish(h, &ah);
	n = nev_owner(h, OA);
	fsw_cm_qp_gone(h->cm, LID_A, 0x999);	/* not ours */
	assert_int_equal(h->qh, h->qt);
	fsw_cm_qp_gone(h->cm, LID_B, 0x100);	/* the peer's QPN, our port */
	assert_int_equal(h->qh, h->qt);
	fsw_cm_qp_gone(h->cm, LID_A, 0x100);
	assert_int_equal(h->qt - h->qh, 1);
	assert_int_equal(attr_of(h->q[h->qh % QMAX].mad), CM_ATTR_DREQ);
	assert_int_equal(fsw_cm_destroy(h->cm, OA, ah), -1);
	deliver(h);
	assert_int_equal(nev(h, OB, FAB_CM_EV_DISCONNECTED), 1);
	assert_int_equal(nev_owner(h, OA), n);

	h->drop[0] = 1;
	a2 = do_connect(h, LID_A, OA, LID_B, SID, 0x101);
	(void)a2;
	deliver(h);
	fsw_cm_qp_gone(h->cm, LID_A, 0x101);
	assert_int_equal(h->qt - h->qh, 1);
	assert_int_equal(cm_mad_parse(h->q[h->qh % QMAX].mad, MAD_LEN, &m),
			 CM_MAD_OK);
	assert_int_equal(m.hdr.attr_id, CM_ATTR_REJ);
	assert_int_equal(m.u.rej.reason, CM_REJ_TIMEOUT);
	assert_int_equal(m.u.rej.ari_len, 8);
	op_by_lid(NULL, LID_A, &pa);
	assert_int_equal(m.u.rej.ari[7], (uint8_t)pa.node_guid);
	assert_int_equal(m.u.rej.ari[0], (uint8_t)(pa.node_guid >> 56));
	deliver(h);
	advance(h, 60000);
	assert_int_equal(nev_owner(h, OA), n);
	assert_false(report_has(h, "(gone)"));
}

/* A flood of REQs from "A": a port holds FSW_CM_MAX_PORT_CONNS, the
 * rest are turned away with REJ 3, and a connect there gets ENOMEM. */
static void test_bounds(void **state)
{
	struct h *h = *state;
	uint8_t mad[MAD_LEN];
	uint32_t i, handle;

	do_listen(h, LID_B, OB, SID, 100000);
	for (i = 0; i < FSW_CM_MAX_PORT_CONNS + 10; i++) {
		forge_req(mad, 0x10000 + i, 0x1000 + i);
		input_raw(h, LID_A, LID_B, PKEY, mad, MAD_LEN);
		h->qh = h->qt;
	}
	assert_int_equal(h->nev_all, FSW_CM_MAX_PORT_CONNS);
	assert_int_equal(h->rej_reason[CM_REJ_NO_RESOURCES], 10);
	assert_int_equal(try_connect(h, LID_B, OB, LID_A, SID, 0x42,
				     &handle), -1);
	assert_int_equal(errno, ENOMEM);
	h->nev = 0;
	/* other ports are not held up */
	do_listen(h, LID_C, OC, SID, 0);
	do_connect(h, LID_A, OA, LID_C, SID, 0x100);
	deliver(h);
	assert_int_equal(nev(h, OC, FAB_CM_EV_CONNECT_REQUEST), 1);
	/* the owner leaving rejects them all */
	h->rej_reason[CM_REJ_CONSUMER_DEFINED] = 0;
	fsw_cm_owner_gone(h->cm, OB);
	h->gone = OB;
	assert_int_equal(h->rej_reason[CM_REJ_CONSUMER_DEFINED],
			 FSW_CM_MAX_PORT_CONNS);
	h->qh = h->qt;
	assert_true(report_has(h, "conn port 0x0004"));
	assert_false(report_has(h, "conn port 0x0003"));
}

static void test_report(void **state)
{
	struct h *h = *state;
	char small[16];
	uint32_t ah;
	size_t n;

	establish(h, &ah);
	assert_true(report_has(h, "listen port 0x0003"));
	assert_true(report_has(h, "conn port 0x0002"));
	assert_true(report_has(h, "qpn 0x000100"));
	assert_true(report_has(h, "stats REQ 1/1"));
	n = fsw_cm_report(h->cm, small, sizeof(small));
	assert_true(n <= sizeof(small));
	assert_true(memchr(small, 0, sizeof(small)) != NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
		T(test_connect_accept_disconnect),
		T(test_reject_private_data),
		T(test_no_listener),
		T(test_backlog_full),
		T(test_req_lost_once),
		T(test_req_all_lost),
		T(test_rep_lost),
		T(test_rtu_lost),
		T(test_slow_accept_mra),
		T(test_req_withdrawn),
		T(test_dup_dreq),
		T(test_dreq_after_timewait),
		T(test_dreq_timeout),
		T(test_stale_connection),
		T(test_owner_gone),
		T(test_timewait_churn),
		T(test_listen_in_use),
		T(test_listen_by_pkey),
		T(test_two_owners_one_port),
		T(test_connect_errors),
		T(test_malformed),
		T(test_rep_stale),
		T(test_qp_gone),
		T(test_bounds),
		T(test_report),
#undef T
	};

	(void)H;
	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ibfabricd's subnet manager / SA (fsw_sa.c) driven through real MADs, as
 * a node's MAD agent sends them, without sockets: every request is a UD
 * packet from a node's GSI agent to the SM (LID 1, QP1, Q_Key 0x80010000)
 * fed to fsw_input_qp(), and every answer is the packet the switch
 * delivers back to that agent.  The expected values are OpenSM 3.3's
 * (osm_sa_mcmember_record.c, osm_multicast.c, osm_sa_path_record.c,
 * osm_prtn.c, osm_inform.c, osm_sa.c).
 *
 * p1 has rate=7 (40 Gb/s), more than a port of this subnet has (10 Gb/s),
 * so no port can join p1's broadcast group (OpenSM's validate_port_caps);
 * the membership rules are checked on p2, an ipoib partition at the
 * default rate.  p3 is a partition without ipoib (no broadcast group).
 *
 * The test_opensm_* tests at the end each pin one detail where OpenSM's
 * source is explicit (the function is named in each).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "subnet/fsw.h"
#include "fabric/ib_pkt.h"
#include "subnet/partitions.h"
#include "fabric/sa_mad.h"
#include "tests/unit/fsw_slots.h"

#define NCAP		16
#define SM_KEY		1ull	/* OpenSM's default SM_Key: trusted */
#define IPOIB_QKEY	0x0b1bu

#define JOIN_MASK	(SA_MCM_MGID | SA_MCM_PORT_GID | SA_MCM_JOIN_STATE)
#define CREATE_MASK	(JOIN_MASK | SA_MCM_QKEY | SA_MCM_TCLASS | \
			 SA_MCM_PKEY | SA_MCM_FLOW_LABEL | SA_MCM_SL)

/* the MGIDs of the tests */
#define BCAST		"ff12:401b:ffff::ffff:ffff"	/* Default */
#define BCAST_P1	"ff12:401b:8001::ffff:ffff"
#define BCAST_P2	"ff12:401b:8002::ffff:ffff"
#define BCAST_P3	"ff12:401b:8003::ffff:ffff"	/* p3 has no ipoib */

/* ---- the switch's outputs ---------------------------------------------- */

struct cap {
	struct fsw_qp *qp;	/* the owner's slot names it */
	size_t len;
	uint8_t pkt[IB_MAX_PKT];
};

static struct cap caps[NCAP];
static unsigned int ncap;	/* packets delivered since the last send */
static unsigned int nrereg;	/* CLIENT_REREGISTER events */

/* The switch under test, for the port helpers below. */
static struct fsw *sut;

/* The port as a process on the node sees it. */
static struct fsp_port_info port_info(const struct fsw_node *n)
{
	struct fsp_port_info pi;

	fsw_port_info(sut, n, &pi);
	return pi;
}

static int cap_deliver(void *ctx, void *owner, const uint8_t *pkt,
		       size_t len)
{
	(void)ctx;
	if (ncap >= NCAP || len > IB_MAX_PKT)
		fail_msg("more packets delivered than the test expects");
	caps[ncap].qp = *(struct fsw_qp **)owner;
	caps[ncap].len = len;
	memcpy(caps[ncap].pkt, pkt, len);
	ncap++;
	return 0;
}

static void cap_event(void *ctx, struct fsw_node *node,
		      enum fab_event_type type)
{
	(void)ctx;
	(void)node;
	if (type == FAB_EV_CLIENT_REREGISTER)
		nrereg++;
}

static const struct fsw_ops cap_ops = {
	.deliver = cap_deliver,
	.event = cap_event,
};

/* ---- fixture ------------------------------------------------------------- */

struct env {
	struct prtn_conf pc;
	struct fsw *sw;
	struct fsw_node *a, *b, *l, *c;
	struct fsw_qp *ga, *gb, *gl, *gc;	/* their SA agents */
};

static int setup(void **state)
{
	static const char conf[] =
		"Default=0x7fff, ipoib : ALL=full ;\n"
		"p1=0x8001, ipoib, mtu=5, rate=7, sl=2, qkey=0x1234 : "
		"a=full, b=full, l=limited ;\n"
		"p2=0x8002, ipoib : a=full, b=full, l=limited ;\n"
		"p3=0x8003 : a=full ;\n";
	static struct env e;
	char err[256];

	memset(&e, 0, sizeof(e));
	assert_int_equal(prtn_conf_parse(conf, sizeof(conf) - 1, "t", &e.pc,
					 err, sizeof(err)), 0);
	slots_reset();
	e.sw = fsw_new(&e.pc, &cap_ops, NULL);
	assert_non_null(e.sw);
	sut = e.sw;
	e.a = fsw_node_attach(e.sw, "a", err, sizeof(err));
	e.b = fsw_node_attach(e.sw, "b", err, sizeof(err));
	e.l = fsw_node_attach(e.sw, "l", err, sizeof(err));
	e.c = fsw_node_attach(e.sw, "c", err, sizeof(err));
	assert_non_null(e.a);
	assert_non_null(e.b);
	assert_non_null(e.l);
	assert_non_null(e.c);
	e.ga = slot_gsi_create(e.sw, e.a, MAD_CLASS_SUBN_ADM, err, sizeof(err));
	e.gb = slot_gsi_create(e.sw, e.b, MAD_CLASS_SUBN_ADM, err, sizeof(err));
	e.gl = slot_gsi_create(e.sw, e.l, MAD_CLASS_SUBN_ADM, err, sizeof(err));
	e.gc = slot_gsi_create(e.sw, e.c, MAD_CLASS_SUBN_ADM, err, sizeof(err));
	assert_non_null(e.ga);
	assert_non_null(e.gb);
	assert_non_null(e.gl);
	assert_non_null(e.gc);
	/* the tables the tests rely on: Default at index 0 everywhere */
	assert_int_equal(port_info(e.a).pkeys[0], 0xffff);
	assert_int_equal(port_info(e.c).pkeys[0], 0xffff);
	assert_int_equal(port_info(e.c).npkeys, 1);
	ncap = 0;
	nrereg = 0;
	*state = &e;
	return 0;
}

static int teardown(void **state)
{
	struct env *e = *state;

	fsw_free(e->sw);
	prtn_conf_free(&e->pc);
	return 0;
}

/* ---- helpers ------------------------------------------------------------- */

static union fab_gid gid(const char *s)
{
	union fab_gid g;

	assert_int_equal(fab_gid_from_str(s, &g), 0);
	return g;
}

/* fe80::<port GUID>, the port's GID index 0 */
static union fab_gid port_gid(const struct fsw_node *n)
{
	union fab_gid g;
	int i;

	memset(&g, 0, sizeof(g));
	g.raw[0] = 0xfe;
	g.raw[1] = 0x80;
	for (i = 0; i < 8; i++)
		g.raw[8 + i] = (uint8_t)(port_info(n).port_guid >>
					 (56 - 8 * i));
	return g;
}

static uint64_t drops(const struct env *e, enum fsw_drop d)
{
	return fsw_stats(e->sw)->drop[d];
}

/*
 * Send len bytes of MAD from a node's agent to the SM as the HCA would:
 * LRH SLID = the node's LID, DLID 1; BTH P_Key = the node's index 0
 * (0xffff), DestQP 1; DETH Q_Key qkey, SrcQP 1.  Forgets what was
 * delivered before.
 */
static void send_to_sm(struct env *e, struct fsw_qp *agent,
		       const uint8_t *mad, size_t len, uint32_t qkey)
{
	static uint32_t psn;
	uint8_t pkt[IB_MAX_PKT];
	struct ib_ud u;
	size_t n;

	memset(&u, 0, sizeof(u));
	u.lrh.dlid = 1;
	u.lrh.slid = fsw_node_lid(fsw_qp_node(agent));
	u.bth.pkey = port_info(fsw_qp_node(agent)).pkeys[0];
	u.bth.destqp = 1;
	u.bth.psn = ++psn & 0xffffff;
	u.deth.qkey = qkey;
	u.deth.srcqp = 1;
	u.payload = mad;
	u.payload_len = len;
	n = ib_ud_build(&u, pkt, sizeof(pkt));
	assert_true(n > 0);
	ncap = 0;
	fsw_input_qp(e->sw, agent, pkt, n);
}

/* A MAD as the switch delivered it to an agent. */
struct reply {
	struct ib_ud u;
	struct sa_hdr h;
	uint8_t mad[MAD_LEN];
};

static void decode_cap(const struct cap *cp, struct reply *r)
{
	assert_int_equal(ib_ud_parse(cp->pkt, cp->len, &r->u), IB_PKT_OK);
	assert_int_equal(r->u.payload_len, MAD_LEN);
	memcpy(r->mad, r->u.payload, MAD_LEN);
	assert_int_equal(sa_mad_parse(r->mad, MAD_LEN, &r->h), SA_MAD_OK);
}

/* How many packets went to qp since the last send; the last in *r. */
static unsigned int got_for(const struct fsw_qp *qp, struct reply *r)
{
	unsigned int i, n = 0;

	for (i = 0; i < ncap; i++) {
		if (caps[i].qp != qp)
			continue;
		n++;
		if (r)
			decode_cap(&caps[i], r);
	}
	return n;
}

/* Records in an answer: the non-zero slots of AttributeOffset * 8 bytes */
static unsigned int nrecs(const struct reply *r, size_t rec_len)
{
	static const uint8_t zero[SA_DATA_LEN];
	size_t stride = (size_t)r->h.attr_offset * 8, off;
	unsigned int n = 0;

	if (!stride)
		return 0;
	assert_true(stride >= rec_len);
	for (off = 0; off + rec_len <= SA_DATA_LEN; off += stride)
		if (memcmp(r->mad + SA_HDR_LEN + off, zero, rec_len))
			n++;
	return n;
}

static void mad_header(struct sa_hdr *h, struct fsw_qp *agent, uint8_t method,
		       uint16_t attr, uint64_t mask, uint64_t sm_key)
{
	static uint32_t seq;

	memset(h, 0, sizeof(*h));
	h->mad.base_version = MAD_BASE_VERSION;
	h->mad.mgmt_class = MAD_CLASS_SUBN_ADM;
	h->mad.class_version = SA_CLASS_VERSION;
	h->mad.method = method;
	/* the kernel puts the agent's number in the high half */
	h->mad.tid = (uint64_t)fsw_qp_qpn(agent) << 32 | ++seq;
	h->mad.attr_id = attr;
	h->comp_mask = mask;
	h->sm_key = sm_key;
}

/*
 * One SA request from agent and its answer: exactly one packet comes back
 * to the agent, from the SM's QP1, carrying the request's TID and
 * attribute with the response method.  Returns the MAD status.
 */
static uint16_t sa_req(struct env *e, struct fsw_qp *agent, uint8_t method,
		       uint16_t attr, uint64_t mask, uint64_t sm_key,
		       const void *rec, size_t rec_len, struct reply *r)
{
	uint8_t mad[MAD_LEN];
	struct sa_hdr h;

	mad_header(&h, agent, method, attr, mask, sm_key);
	assert_int_equal(sa_mad_build(&h, rec, rec_len, mad), MAD_LEN);
	send_to_sm(e, agent, mad, MAD_LEN, FAB_QP1_QKEY);
	assert_int_equal(got_for(agent, r), 1);
	assert_int_equal(r->u.lrh.slid, 1);
	assert_int_equal(r->u.lrh.dlid, fsw_node_lid(fsw_qp_node(agent)));
	assert_int_equal(r->u.bth.destqp, 1);
	assert_int_equal(r->u.deth.srcqp, 1);
	assert_int_equal(r->u.deth.qkey, FAB_QP1_QKEY);
	assert_int_equal(r->h.mad.tid, h.mad.tid);
	assert_int_equal(r->h.mad.attr_id, attr);
	assert_int_equal(r->h.mad.method,
			 (method == MAD_METHOD_SET ? MAD_METHOD_GET : method) |
			 MAD_METHOD_RESP);
	return r->h.mad.status;
}

/* ---- MCMemberRecord ------------------------------------------------------ */

static void mcm_init(struct sa_mcmember *q, const char *mgid,
		     const struct fsw_node *port, uint8_t join_state)
{
	memset(q, 0, sizeof(*q));
	if (mgid)
		q->mgid = gid(mgid);
	if (port)
		q->port_gid = port_gid(port);
	q->join_state = join_state;
}

static uint16_t mcm_req(struct env *e, struct fsw_qp *agent, uint8_t method,
			uint64_t mask, uint64_t sm_key,
			const struct sa_mcmember *q, struct sa_mcmember *out,
			struct reply *r)
{
	uint8_t rec[SA_MCMEMBER_LEN];
	struct reply tmp;
	uint16_t st;

	if (!r)
		r = &tmp;
	sa_mcmember_encode(q, rec);
	st = sa_req(e, agent, method, SA_ATTR_MCMEMBER_RECORD, mask, sm_key,
		    rec, sizeof(rec), r);
	if (out)
		sa_mcmember_decode(r->mad + SA_HDR_LEN, out);
	return st;
}

/* The agent's port joins mgid (an existing group) with join_state. */
static uint16_t mcm_join(struct env *e, struct fsw_qp *agent,
			 const char *mgid, uint8_t join_state,
			 struct sa_mcmember *out)
{
	struct sa_mcmember q;

	mcm_init(&q, mgid, fsw_qp_node(agent), join_state);
	return mcm_req(e, agent, MAD_METHOD_SET, JOIN_MASK, 0, &q, out, NULL);
}

/* Join, creating the group: every component OpenSM wants for a create. */
static uint16_t mcm_create(struct env *e, struct fsw_qp *agent,
			   const char *mgid, uint32_t qkey, uint16_t pkey,
			   uint8_t join_state, struct sa_mcmember *out)
{
	struct sa_mcmember q;

	mcm_init(&q, mgid, fsw_qp_node(agent), join_state);
	q.qkey = qkey;
	q.pkey = pkey;
	return mcm_req(e, agent, MAD_METHOD_SET, CREATE_MASK, 0, &q, out,
		       NULL);
}

static uint16_t mcm_leave(struct env *e, struct fsw_qp *agent,
			  const char *mgid, uint8_t join_state,
			  struct sa_mcmember *out)
{
	struct sa_mcmember q;

	mcm_init(&q, mgid, fsw_qp_node(agent), join_state);
	return mcm_req(e, agent, MAD_METHOD_DELETE, JOIN_MASK, 0, &q, out,
		       NULL);
}

/* SubnAdmGet by MGID, as an untrusted (SM_Key 0) requester. */
static uint16_t mcm_get(struct env *e, struct fsw_qp *agent, const char *mgid,
			struct sa_mcmember *out)
{
	struct sa_mcmember q;

	mcm_init(&q, mgid, NULL, 0);
	return mcm_req(e, agent, MAD_METHOD_GET, SA_MCM_MGID, 0, &q, out,
		       NULL);
}

/* A port's membership record, as a trusted requester sees it. */
static uint16_t mcm_member(struct env *e, struct fsw_qp *agent,
			   const char *mgid, const struct fsw_node *port,
			   struct sa_mcmember *out)
{
	struct sa_mcmember q;

	mcm_init(&q, mgid, port, 0);
	return mcm_req(e, agent, MAD_METHOD_GET,
		       SA_MCM_MGID | SA_MCM_PORT_GID, SM_KEY, &q, out, NULL);
}

/* ---- (1) well-known groups ----------------------------------------------- */

static void test_well_known_groups(void **state)
{
	struct env *e = *state;
	union fab_gid zero, mg = gid(BCAST);
	struct sa_mcmember r;
	struct reply rp;
	struct sa_mcmember q;

	memset(&zero, 0, sizeof(zero));
	/* Default's IPoIB broadcast group with osm_prtn_add_mcgroup()'s
	 * parameters: Q_Key 0x0B1B, 2048 bytes, 10 Gb/s, SL 0 */
	mcm_init(&q, BCAST, NULL, 0);
	assert_int_equal(mcm_req(e, e->ga, MAD_METHOD_GET, SA_MCM_MGID, 0, &q,
				 &r, &rp), 0);
	assert_int_equal(rp.h.attr_offset, 7);
	assert_memory_equal(r.mgid.raw, mg.raw, 16);
	assert_int_equal(r.mlid, 0xc000);
	assert_int_equal(r.qkey, 0x0b1b);
	assert_int_equal(r.mtu, 4);
	assert_int_equal(r.mtu_sel, SA_SEL_EQ);
	assert_int_equal(r.rate, 3);
	assert_int_equal(r.rate_sel, SA_SEL_EQ);
	assert_int_equal(r.life, 18);		/* subnet_timeout */
	assert_int_equal(r.life_sel, SA_SEL_EQ);
	assert_int_equal(r.sl, 0);
	assert_int_equal(r.pkey, 0xffff);
	assert_int_equal(r.tclass, 0);
	assert_int_equal(r.flow_label, 0);
	assert_int_equal(r.hop_limit, 0);	/* link-local scope */
	assert_int_equal(r.scope, 2);
	/* p923: PortGID and JoinState hidden from untrusted requesters */
	assert_int_equal(r.join_state, 0);
	assert_memory_equal(r.port_gid.raw, zero.raw, 16);

	/* p1's group, with the partition's own parameters */
	mg = gid(BCAST_P1);
	assert_int_equal(mcm_get(e, e->ga, BCAST_P1, &r), 0);
	assert_memory_equal(r.mgid.raw, mg.raw, 16);
	assert_int_equal(r.mlid, 0xc001);
	assert_int_equal(r.mtu, 5);
	assert_int_equal(r.mtu_sel, SA_SEL_EQ);
	assert_int_equal(r.rate, 7);
	assert_int_equal(r.rate_sel, SA_SEL_EQ);
	assert_int_equal(r.sl, 2);
	assert_int_equal(r.qkey, 0x1234);
	assert_int_equal(r.pkey, 0x8001);
	assert_int_equal(r.scope, 2);

	/* p2's (defaults), MLIDs in partition order */
	assert_int_equal(mcm_get(e, e->ga, BCAST_P2, &r), 0);
	assert_int_equal(r.mlid, 0xc002);
	assert_int_equal(r.qkey, 0x0b1b);
	assert_int_equal(r.mtu, 4);
	assert_int_equal(r.rate, 3);
	assert_int_equal(r.pkey, 0x8002);

	/* a port outside p1 does not see p1's group; p3 (no ipoib) has no
	 * broadcast group */
	assert_int_equal(mcm_get(e, e->gc, BCAST_P1, &r),
			 SA_STATUS_NO_RECORDS);
	assert_int_equal(mcm_get(e, e->ga, BCAST_P3, &r),
			 SA_STATUS_NO_RECORDS);
	/* a limited member of p1 does */
	assert_int_equal(mcm_get(e, e->gl, BCAST_P1, &r), 0);
	assert_int_equal(r.mlid, 0xc001);
}

/* ---- (2) join and create ------------------------------------------------- */

static void test_join_and_create(void **state)
{
	struct env *e = *state;
	static const uint64_t need[] = {
		SA_MCM_MGID, SA_MCM_PORT_GID, SA_MCM_JOIN_STATE
	};
	union fab_gid mg = gid(BCAST), pg = port_gid(e->a);
	struct sa_mcmember q, r;
	unsigned int i;

	/* a full member joins the broadcast group: the group's values */
	assert_int_equal(mcm_join(e, e->ga, BCAST, SA_JOIN_FULL, &r), 0);
	assert_memory_equal(r.mgid.raw, mg.raw, 16);
	assert_memory_equal(r.port_gid.raw, pg.raw, 16);
	assert_int_equal(r.mlid, 0xc000);
	assert_int_equal(r.qkey, 0x0b1b);
	assert_int_equal(r.mtu, 4);
	assert_int_equal(r.mtu_sel, SA_SEL_EQ);
	assert_int_equal(r.rate, 3);
	assert_int_equal(r.rate_sel, SA_SEL_EQ);
	assert_int_equal(r.life, 18);
	assert_int_equal(r.sl, 0);
	assert_int_equal(r.pkey, 0xffff);
	assert_int_equal(r.join_state, SA_JOIN_FULL);
	assert_int_equal(fsw_stats(e->sw)->sa_joins, 1);

	/* a join needs MGID, PortGID and JoinState (o15-0.1.8) */
	for (i = 0; i < sizeof(need) / sizeof(need[0]); i++) {
		mcm_init(&q, BCAST, e->b, SA_JOIN_FULL);
		assert_int_equal(mcm_req(e, e->gb, MAD_METHOD_SET,
					 JOIN_MASK & ~need[i], 0, &q, NULL,
					 NULL),
				 SA_STATUS_INSUFFICIENT_COMPS);
	}
	assert_int_equal(fsw_node_groups(e->sw, e->b), 0);

	/* a missing group is only created with the create components */
	assert_int_equal(mcm_join(e, e->gb, "ff12:1234::1", SA_JOIN_FULL,
				  NULL), SA_STATUS_INSUFFICIENT_COMPS);
	/* ... and for a (SendOnly)FullMember (o15.0.1.9) */
	assert_int_equal(mcm_create(e, e->gb, "ff12:1234::1", 0x5555, 0xffff,
				    SA_JOIN_NON, NULL), SA_STATUS_REQ_INVALID);
	assert_int_equal(mcm_get(e, e->gb, "ff12:1234::1", &r),
			 SA_STATUS_NO_RECORDS);

	mg = gid("ff12:1234::1");
	pg = port_gid(e->b);
	assert_int_equal(mcm_create(e, e->gb, "ff12:1234::1", 0x5555, 0xffff,
				    SA_JOIN_FULL, &r), 0);
	assert_memory_equal(r.mgid.raw, mg.raw, 16);
	assert_memory_equal(r.port_gid.raw, pg.raw, 16);
	assert_int_equal(r.mlid, 0xc003);	/* after the three broadcast */
	assert_int_equal(r.qkey, 0x5555);
	assert_int_equal(r.pkey, 0xffff);
	assert_int_equal(r.mtu, 5);		/* the port's: 4096 */
	assert_int_equal(r.mtu_sel, SA_SEL_EQ);
	assert_int_equal(r.rate, 3);		/* the port's: 10 Gb/s */
	assert_int_equal(r.join_state, SA_JOIN_FULL);
	assert_int_equal(mcm_get(e, e->ga, "ff12:1234::1", &r), 0);
	assert_int_equal(r.mlid, 0xc003);
	assert_int_equal(r.qkey, 0x5555);

	/* an IPoIB MGID must agree with its partition's broadcast group */
	assert_int_equal(mcm_create(e, e->gb, "ff12:401b:ffff::1", 0x1111,
				    0xffff, SA_JOIN_FULL, NULL),
			 SA_STATUS_REQ_INVALID);
	assert_int_equal(mcm_get(e, e->gb, "ff12:401b:ffff::1", &r),
			 SA_STATUS_NO_RECORDS);
	assert_int_equal(mcm_create(e, e->gb, "ff12:401b:ffff::1", IPOIB_QKEY,
				    0xffff, SA_JOIN_FULL, &r), 0);
	assert_int_equal(r.mlid, 0xc004);	/* the refusal used none */
	assert_int_equal(r.qkey, IPOIB_QKEY);
	/* ... and its partition must have one: p3 is not ipoib */
	assert_int_equal(mcm_create(e, e->ga, "ff12:401b:8003::1", IPOIB_QKEY,
				    0x8003, SA_JOIN_FULL, NULL),
			 SA_STATUS_REQ_INVALID);
	assert_int_equal(mcm_get(e, e->ga, "ff12:401b:8003::1", &r),
			 SA_STATUS_NO_RECORDS);

	/* a zero MGID: the SA makes one (signature 0xA01B, link-local) */
	assert_int_equal(mcm_create(e, e->ga, "::", 0x77, 0xffff,
				    SA_JOIN_FULL, &r), 0);
	assert_int_equal(r.mgid.raw[0], 0xff);
	assert_int_equal(r.mgid.raw[1], 0x12);
	assert_int_equal(r.mgid.raw[2], 0xa0);
	assert_int_equal(r.mgid.raw[3], 0x1b);
	assert_int_equal(r.mlid, 0xc005);
}

/* ---- (3) partitions ------------------------------------------------------ */

static void test_partition_enforcement(void **state)
{
	struct env *e = *state;
	struct sa_mcmember r;

	/* p1's group runs at 40 Gb/s; the ports at 10 Gb/s cannot join it
	 * (validate_port_caps), full member of p1 or not */
	assert_int_equal(mcm_join(e, e->ga, BCAST_P1, SA_JOIN_FULL, NULL),
			 SA_STATUS_REQ_INVALID);
	assert_int_equal(fsw_node_groups(e->sw, e->a), 0);

	/* c is not in p2 */
	assert_int_equal(mcm_join(e, e->gc, BCAST_P2, SA_JOIN_FULL, NULL),
			 SA_STATUS_REQ_INVALID);
	assert_int_equal(fsw_node_groups(e->sw, e->c), 0);
	/* neither by naming p2's P_Key in the request */
	{
		struct sa_mcmember q;

		mcm_init(&q, BCAST_P2, e->c, SA_JOIN_FULL);
		q.pkey = 0x8002;
		assert_int_equal(mcm_req(e, e->gc, MAD_METHOD_SET,
					 JOIN_MASK | SA_MCM_PKEY, 0, &q, NULL,
					 NULL), SA_STATUS_REQ_INVALID);
	}
	/* a full and a limited member may (OpenSM: osm_physp_has_pkey) */
	assert_int_equal(mcm_join(e, e->ga, BCAST_P2, SA_JOIN_FULL, &r), 0);
	assert_int_equal(r.mlid, 0xc002);
	assert_int_equal(r.pkey, 0x8002);
	assert_int_equal(mcm_join(e, e->gl, BCAST_P2, SA_JOIN_FULL, &r), 0);
	assert_int_equal(r.mlid, 0xc002);
	assert_int_equal(r.pkey, 0x8002);
	assert_int_equal(r.join_state, SA_JOIN_FULL);
	assert_int_equal(fsw_node_groups(e->sw, e->l), 1);
	{
		char out[1024];

		/* l is in 0xc002 as a full member */
		assert_int_equal(fsw_ctl(e->sw, "groups " BCAST_P2, out,
					 sizeof(out)), 0);
		assert_non_null(strstr(out, " 0xc002 "));
		assert_non_null(strstr(out, "l:F"));
	}

	/* a group created in p1's P_Key by a (at the port's rate): c cannot
	 * join it, l can */
	assert_int_equal(mcm_create(e, e->ga, "ff12:1234::11", 0x42, 0x8001,
				    SA_JOIN_FULL, &r), 0);
	assert_int_equal(r.pkey, 0x8001);
	assert_int_equal(mcm_join(e, e->gc, "ff12:1234::11", SA_JOIN_FULL,
				  NULL), SA_STATUS_REQ_INVALID);
	assert_int_equal(mcm_join(e, e->gl, "ff12:1234::11", SA_JOIN_NON,
				  &r), 0);
	assert_int_equal(r.join_state, SA_JOIN_NON);
	/* and c cannot create a group in a P_Key it does not hold */
	assert_int_equal(mcm_create(e, e->gc, "ff12:1234::12", 0x42, 0x8001,
				    SA_JOIN_FULL, NULL), SA_STATUS_REQ_INVALID);
	assert_int_equal(mcm_get(e, e->ga, "ff12:1234::12", &r),
			 SA_STATUS_NO_RECORDS);
}

/* ---- (4) JoinState accounting -------------------------------------------- */

static void test_join_state_accounting(void **state)
{
	struct env *e = *state;
	struct sa_mcmember r;
	uint16_t mlid;

	/* bits accumulate */
	assert_int_equal(mcm_join(e, e->ga, BCAST, SA_JOIN_NON, &r), 0);
	assert_int_equal(r.join_state, SA_JOIN_NON);
	assert_int_equal(mcm_join(e, e->ga, BCAST, SA_JOIN_FULL, &r), 0);
	assert_int_equal(r.join_state, SA_JOIN_FULL | SA_JOIN_NON);
	assert_int_equal(mcm_member(e, e->ga, BCAST, e->a, &r), 0);
	assert_int_equal(r.join_state, SA_JOIN_FULL | SA_JOIN_NON);

	/* a leave names only bits the port holds (o15-0.1.14) */
	assert_int_equal(mcm_leave(e, e->ga, BCAST, SA_JOIN_SENDONLY_NON,
				   NULL), SA_STATUS_REQ_INVALID);
	assert_int_equal(mcm_leave(e, e->ga, BCAST,
				   SA_JOIN_FULL | SA_JOIN_SENDONLY_NON, NULL),
			 SA_STATUS_REQ_INVALID);
	/* only the port itself may change its (non-proxy) membership */
	{
		struct sa_mcmember q;

		mcm_init(&q, BCAST, e->a, SA_JOIN_FULL);
		assert_int_equal(mcm_req(e, e->gb, MAD_METHOD_DELETE,
					 JOIN_MASK, 0, &q, NULL, NULL),
				 SA_STATUS_REQ_INVALID);
	}
	assert_int_equal(mcm_member(e, e->ga, BCAST, e->a, &r), 0);
	assert_int_equal(r.join_state, SA_JOIN_FULL | SA_JOIN_NON);

	/* the last full member leaving Full takes its NonMember bit too
	 * (osm_mgrp_remove_port); a well-known group outlives it */
	assert_int_equal(mcm_leave(e, e->ga, BCAST, SA_JOIN_FULL, &r), 0);
	assert_int_equal(r.join_state, 0);
	assert_int_equal(fsw_stats(e->sw)->sa_leaves, 4);
	assert_int_equal(mcm_member(e, e->ga, BCAST, e->a, &r),
			 SA_STATUS_NO_RECORDS);
	assert_int_equal(fsw_node_groups(e->sw, e->a), 0);
	assert_int_equal(mcm_get(e, e->ga, BCAST, &r), 0);
	assert_int_equal(r.mlid, 0xc000);

	/* an ordinary group goes with its last full member, and the
	 * non-members with it */
	assert_int_equal(mcm_create(e, e->ga, "ff12:1234::2", 0x99, 0xffff,
				    SA_JOIN_FULL, &r), 0);
	mlid = r.mlid;
	assert_int_equal(mlid, 0xc003);
	assert_int_equal(mcm_join(e, e->gb, "ff12:1234::2", SA_JOIN_NON, &r),
			 0);
	assert_int_equal(r.mlid, mlid);
	assert_int_equal(fsw_node_groups(e->sw, e->b), 1);
	assert_int_equal(mcm_leave(e, e->ga, "ff12:1234::2", SA_JOIN_FULL, &r),
			 0);
	assert_int_equal(r.join_state, 0);
	assert_int_equal(mcm_get(e, e->gb, "ff12:1234::2", &r),
			 SA_STATUS_NO_RECORDS);
	assert_int_equal(fsw_node_groups(e->sw, e->b), 0);
	/* leaving twice */
	assert_int_equal(mcm_leave(e, e->ga, "ff12:1234::2", SA_JOIN_FULL,
				   NULL), SA_STATUS_REQ_INVALID);
	/* the MLID is free again */
	assert_int_equal(mcm_create(e, e->gb, "ff12:1234::3", 0x99, 0xffff,
				    SA_JOIN_FULL, &r), 0);
	assert_int_equal(r.mlid, mlid);

	/* a group with a SendOnlyFullMember stays when a full member goes */
	assert_int_equal(mcm_join(e, e->ga, "ff12:1234::3",
				  SA_JOIN_SENDONLY_FULL, &r), 0);
	assert_int_equal(r.join_state, SA_JOIN_SENDONLY_FULL);
	assert_int_equal(mcm_leave(e, e->gb, "ff12:1234::3", SA_JOIN_FULL,
				   NULL), 0);
	assert_int_equal(mcm_get(e, e->gb, "ff12:1234::3", &r), 0);
	assert_int_equal(r.mlid, mlid);
	assert_int_equal(mcm_leave(e, e->ga, "ff12:1234::3",
				   SA_JOIN_SENDONLY_FULL, NULL), 0);
	assert_int_equal(mcm_get(e, e->gb, "ff12:1234::3", &r),
			 SA_STATUS_NO_RECORDS);
}

/* ---- (5) forwarding follows the memberships ------------------------------ */

static size_t mcast_pkt(uint8_t *buf, const struct fsw_qp *from,
			uint16_t mlid, const char *mgid)
{
	struct ib_ud u;

	memset(&u, 0, sizeof(u));
	u.lrh.dlid = mlid;
	u.lrh.slid = fsw_node_lid(fsw_qp_node(from));
	u.has_grh = 1;
	u.grh.dgid = gid(mgid);
	u.grh.sgid = port_gid(fsw_qp_node(from));
	u.bth.pkey = 0xffff;
	u.bth.destqp = FAB_MCAST_QPN;
	u.deth.qkey = IPOIB_QKEY;
	u.deth.srcqp = fsw_qp_qpn(from);
	u.payload = (const uint8_t *)"arp who-has";
	u.payload_len = 11;
	return ib_ud_build(&u, buf, IB_MAX_PKT);
}

static void test_forwarding_by_membership(void **state)
{
	struct env *e = *state;
	union fab_gid mg = gid(BCAST), other = gid("ff12:1234::9");
	struct fsw_qp *qa, *qb, *qc, *ql;
	uint8_t pkt[IB_MAX_PKT];
	struct sa_mcmember r;
	char err[256];
	uint64_t nm;
	size_t n;

	assert_int_equal(mcm_join(e, e->ga, BCAST, SA_JOIN_FULL, NULL), 0);
	assert_int_equal(mcm_join(e, e->gb, BCAST, SA_JOIN_SENDONLY_NON, &r),
			 0);
	assert_int_equal(r.join_state, SA_JOIN_SENDONLY_NON);
	qa = slot_qp_create(e->sw, e->a, IPOIB_QKEY, 0, 0, err, sizeof(err));
	qb = slot_qp_create(e->sw, e->b, IPOIB_QKEY, 0, 0, err, sizeof(err));
	qc = slot_qp_create(e->sw, e->c, IPOIB_QKEY, 0, 0, err, sizeof(err));
	ql = slot_qp_create(e->sw, e->l, IPOIB_QKEY, 0, 0, err, sizeof(err));
	assert_non_null(qa);
	assert_non_null(qb);
	assert_non_null(qc);
	assert_non_null(ql);
	assert_int_equal(fsw_mcast_attach(e->sw, qa, &mg, 0xc000, err,
					  sizeof(err)), 0);
	assert_int_equal(fsw_mcast_attach(e->sw, qb, &mg, 0xc000, err,
					  sizeof(err)), 0);
	assert_int_equal(fsw_mcast_attach(e->sw, qc, &mg, 0xc000, err,
					  sizeof(err)), 0);

	/* only the full member's QP receives; send-only and not-joined
	 * ports are counted */
	n = mcast_pkt(pkt, ql, 0xc000, BCAST);
	assert_true(n > 0);
	nm = drops(e, FSW_DROP_MCAST_NOT_MEMBER);
	ncap = 0;
	fsw_input_qp(e->sw, ql, pkt, n);
	assert_int_equal(ncap, 1);
	assert_ptr_equal(caps[0].qp, qa);
	assert_int_equal(drops(e, FSW_DROP_MCAST_NOT_MEMBER), nm + 2);

	/* an MLID the SA never gave out is not forwarded, attached or not */
	assert_int_equal(fsw_mcast_attach(e->sw, qa, &other, 0xc0ff, err,
					  sizeof(err)), 0);
	ncap = 0;
	fsw_input_qp(e->sw, ql, pkt, mcast_pkt(pkt, ql, 0xc0ff,
					       "ff12:1234::9"));
	assert_int_equal(ncap, 0);
	assert_int_equal(drops(e, FSW_DROP_UNKNOWN_MLID), 1);

	/* a port going down loses its memberships; a was the last full
	 * member, so the send-only member goes with it (osm_mgrp_cleanup()
	 * of a well-known group drops every port) */
	assert_int_equal(fsw_port_set(e->sw, e->a, 0), 1);
	assert_int_equal(fsw_node_groups(e->sw, e->a), 0);
	assert_int_equal(fsw_node_groups(e->sw, e->b), 0);
	assert_int_equal(mcm_member(e, e->gb, BCAST, e->a, &r),
			 SA_STATUS_NO_RECORDS);
	assert_int_equal(mcm_member(e, e->gb, BCAST, e->b, &r),
			 SA_STATUS_NO_RECORDS);
	assert_int_equal(mcm_get(e, e->gb, BCAST, &r), 0);
	assert_int_equal(fsw_port_set(e->sw, e->a, 1), 1);
	n = mcast_pkt(pkt, ql, 0xc000, BCAST);
	nm = drops(e, FSW_DROP_MCAST_NOT_MEMBER);
	ncap = 0;
	fsw_input_qp(e->sw, ql, pkt, n);
	assert_int_equal(ncap, 0);
	assert_int_equal(drops(e, FSW_DROP_MCAST_NOT_MEMBER), nm + 3);
	/* a port down while another full member stays: only its own go */
	assert_int_equal(mcm_join(e, e->ga, BCAST, SA_JOIN_FULL, NULL), 0);
	assert_int_equal(mcm_join(e, e->gc, BCAST, SA_JOIN_FULL, NULL), 0);
	assert_int_equal(fsw_port_set(e->sw, e->a, 0), 1);
	assert_int_equal(fsw_node_groups(e->sw, e->a), 0);
	assert_int_equal(fsw_node_groups(e->sw, e->c), 1);
	assert_int_equal(mcm_member(e, e->gc, BCAST, e->c, &r), 0);
	assert_int_equal(r.join_state, SA_JOIN_FULL);
	assert_int_equal(fsw_port_set(e->sw, e->a, 1), 1);
	ncap = 0;
	fsw_input_qp(e->sw, ql, pkt, n);
	assert_int_equal(ncap, 1);
	assert_ptr_equal(caps[0].qp, qc);

	/* an SM restart forgets ordinary groups, keeps the well-known ones
	 * empty, and tells every port to register again */
	assert_int_equal(mcm_join(e, e->ga, BCAST, SA_JOIN_FULL, NULL), 0);
	assert_int_equal(mcm_create(e, e->ga, "ff12:1234::4", 0x44, 0xffff,
				    SA_JOIN_FULL, &r), 0);
	assert_int_equal(r.mlid, 0xc003);
	{
		struct sa_mcmember q;
		struct reply rp;

		mcm_init(&q, BCAST, NULL, 0);
		assert_int_equal(mcm_req(e, e->ga, MAD_METHOD_GET_TABLE,
					 SA_MCM_MGID, SM_KEY, &q, &r, &rp), 0);
		assert_int_equal(rp.h.attr_offset, 7);
		assert_int_equal(nrecs(&rp, SA_MCMEMBER_LEN), 2); /* a, c */
		fsw_client_reregister(e->sw);
		assert_int_equal(nrereg, 4);
		assert_int_equal(mcm_req(e, e->ga, MAD_METHOD_GET_TABLE,
					 SA_MCM_MGID, SM_KEY, &q, &r, &rp), 0);
		assert_int_equal(nrecs(&rp, SA_MCMEMBER_LEN), 0);
	}
	assert_int_equal(mcm_get(e, e->ga, "ff12:1234::4", &r),
			 SA_STATUS_NO_RECORDS);
	assert_int_equal(mcm_get(e, e->ga, BCAST, &r), 0);
	assert_int_equal(r.mlid, 0xc000);
	assert_int_equal(r.qkey, 0x0b1b);
	assert_int_equal(mcm_get(e, e->ga, BCAST_P1, &r), 0);
	assert_int_equal(r.mlid, 0xc001);
	assert_int_equal(mcm_member(e, e->ga, BCAST, e->a, &r),
			 SA_STATUS_NO_RECORDS);
	assert_int_equal(fsw_node_groups(e->sw, e->a), 0);
	assert_int_equal(fsw_node_groups(e->sw, e->b), 0);
	ncap = 0;
	fsw_input_qp(e->sw, ql, pkt, n);
	assert_int_equal(ncap, 0);
	/* the MLID of the forgotten group is unknown to the switch now */
	fsw_input_qp(e->sw, ql, pkt, mcast_pkt(pkt, ql, 0xc003,
					       "ff12:1234::4"));
	assert_int_equal(drops(e, FSW_DROP_UNKNOWN_MLID), 2);
}

/* ---- (6) PathRecord ------------------------------------------------------ */

static uint16_t path_get(struct env *e, struct fsw_qp *agent, uint8_t method,
			 uint64_t mask, const struct sa_path *q,
			 struct sa_path *out, struct reply *r)
{
	uint8_t rec[SA_PATH_RECORD_LEN];
	struct reply tmp;
	uint16_t st;

	if (!r)
		r = &tmp;
	sa_path_encode(q, rec);
	st = sa_req(e, agent, method, SA_ATTR_PATH_RECORD, mask, 0, rec,
		    sizeof(rec), r);
	if (out)
		sa_path_decode(r->mad + SA_HDR_LEN, out);
	return st;
}

/* SGID = from's port, DGID = to's port, one path (as rdma_cm asks) */
static void path_init(struct sa_path *q, const struct fsw_node *from,
		      const struct fsw_node *to)
{
	memset(q, 0, sizeof(*q));
	q->sgid = port_gid(from);
	q->dgid = port_gid(to);
	q->numb_path = 1;
}

#define PR_MASK	(SA_PR_SGID | SA_PR_DGID | SA_PR_NUMB_PATH)

static void test_path_record(void **state)
{
	struct env *e = *state;
	union fab_gid ga = port_gid(e->a), gb = port_gid(e->b);
	struct sa_path q, r;
	struct reply rp;

	path_init(&q, e->a, e->b);
	assert_int_equal(path_get(e, e->ga, MAD_METHOD_GET, PR_MASK, &q, &r,
				  &rp), 0);
	assert_int_equal(rp.h.attr_offset, 8);
	assert_memory_equal(r.sgid.raw, ga.raw, 16);
	assert_memory_equal(r.dgid.raw, gb.raw, 16);
	assert_int_equal(r.dlid, fsw_node_lid(e->b));
	assert_int_equal(r.slid, fsw_node_lid(e->a));
	/* no P_Key asked: the lowest key both share (OpenSM walks the
	 * sorted P_Key maps, osm_physp_find_common_pkey()), here p1's, and
	 * the partition's SL with it */
	assert_int_equal(r.pkey, 0x8001);
	assert_int_equal(r.sl, 2);
	assert_int_equal(r.mtu, 5);
	assert_int_equal(r.mtu_sel, SA_SEL_EQ);
	assert_int_equal(r.rate, 3);
	assert_int_equal(r.rate_sel, SA_SEL_EQ);
	assert_int_equal(r.life, 18);
	assert_int_equal(r.life_sel, SA_SEL_EQ);
	assert_int_equal(r.reversible, 1);
	assert_int_equal(r.hop_limit, 0);
	assert_int_equal(fsw_stats(e->sw)->sa_path_queries, 1);

	/* in Default: its P_Key and SL 0 */
	q.pkey = 0xffff;
	assert_int_equal(path_get(e, e->ga, MAD_METHOD_GET,
				  PR_MASK | SA_PR_PKEY, &q, &r, NULL), 0);
	assert_int_equal(r.pkey, 0xffff);
	assert_int_equal(r.sl, 0);
	assert_int_equal(r.dlid, fsw_node_lid(e->b));

	/* in p1 asked explicitly: its P_Key and its SL */
	q.pkey = 0x8001;
	assert_int_equal(path_get(e, e->ga, MAD_METHOD_GET,
				  PR_MASK | SA_PR_PKEY, &q, &r, NULL), 0);
	assert_int_equal(r.pkey, 0x8001);
	assert_int_equal(r.sl, 2);
	assert_int_equal(r.dlid, fsw_node_lid(e->b));
	assert_int_equal(r.mtu, 5);

	/* a limited member reaches a full one in p1 */
	path_init(&q, e->l, e->b);
	q.pkey = 0x0001;
	assert_int_equal(path_get(e, e->gl, MAD_METHOD_GET,
				  PR_MASK | SA_PR_PKEY, &q, &r, NULL), 0);
	assert_int_equal(r.slid, fsw_node_lid(e->l));
	assert_int_equal(r.sl, 2);

	/* by LIDs */
	memset(&q, 0, sizeof(q));
	q.slid = fsw_node_lid(e->a);
	q.dlid = fsw_node_lid(e->b);
	assert_int_equal(path_get(e, e->ga, MAD_METHOD_GET,
				  SA_PR_SLID | SA_PR_DLID, &q, &r, NULL), 0);
	assert_memory_equal(r.dgid.raw, gb.raw, 16);

	/* c is not in p1 */
	path_init(&q, e->a, e->c);
	q.pkey = 0x8001;
	assert_int_equal(path_get(e, e->ga, MAD_METHOD_GET,
				  PR_MASK | SA_PR_PKEY, &q, &r, NULL),
			 SA_STATUS_NO_RECORDS);
	/* but shares Default with a: 0xffff when no P_Key is asked */
	assert_int_equal(path_get(e, e->ga, MAD_METHOD_GET, PR_MASK, &q, &r,
				  NULL), 0);
	assert_int_equal(r.dlid, fsw_node_lid(e->c));
	assert_int_equal(r.slid, fsw_node_lid(e->a));
	assert_int_equal(r.pkey, 0xffff);
	assert_int_equal(r.sl, 0);
	assert_int_equal(r.mtu, 5);
	assert_int_equal(r.rate, 3);
	assert_int_equal(r.life, 18);
	assert_int_equal(r.reversible, 1);

	/* a GID nobody has */
	path_init(&q, e->a, e->b);
	q.dgid = gid("fe80::2:c903:dead:beef");
	assert_int_equal(path_get(e, e->ga, MAD_METHOD_GET, PR_MASK, &q, &r,
				  NULL), SA_STATUS_NO_RECORDS);

	/* PathRecords cannot be deleted */
	path_init(&q, e->a, e->b);
	assert_int_equal(path_get(e, e->ga, MAD_METHOD_DELETE, PR_MASK, &q,
				  &r, &rp), MAD_STATUS_METHOD_ATTR_UNSUPP);
	assert_int_equal(rp.h.mad.method, MAD_METHOD_DELETE_RESP);
}

/* ---- (7) malformed MADs to the SM ---------------------------------------- */

static void test_malformed_mads(void **state)
{
	struct env *e = *state;
	uint8_t rec[SA_MCMEMBER_LEN], mad[MAD_LEN];
	struct sa_mcmember q;
	struct sa_hdr h;
	struct reply r;
	uint64_t answered;

	mcm_init(&q, BCAST, NULL, 0);
	sa_mcmember_encode(&q, rec);
	mad_header(&h, e->ga, MAD_METHOD_GET, SA_ATTR_MCMEMBER_RECORD,
		   SA_MCM_MGID, 0);
	sa_mad_build(&h, rec, sizeof(rec), mad);

	/* class version 1: answered BAD_VERSION */
	mad[2] = 1;
	send_to_sm(e, e->ga, mad, MAD_LEN, FAB_QP1_QKEY);
	assert_int_equal(got_for(e->ga, NULL), 1);
	assert_int_equal(ib_ud_parse(caps[0].pkt, caps[0].len, &r.u),
			 IB_PKT_OK);
	sa_hdr_decode(r.u.payload, &r.h);
	assert_int_equal(r.h.mad.status, MAD_STATUS_BAD_VERSION);
	assert_int_equal(r.h.mad.method, MAD_METHOD_GET_RESP);
	assert_int_equal(r.h.mad.tid, h.mad.tid);
	mad[2] = SA_CLASS_VERSION;
	answered = fsw_stats(e->sw)->sa_requests;

	/* shorter than a MAD: not answered */
	send_to_sm(e, e->ga, mad, 200, FAB_QP1_QKEY);
	assert_int_equal(ncap, 0);
	assert_int_equal(drops(e, FSW_DROP_BAD_MAD), 1);
	/* base version 2: not answered */
	mad[0] = 2;
	send_to_sm(e, e->ga, mad, MAD_LEN, FAB_QP1_QKEY);
	assert_int_equal(ncap, 0);
	assert_int_equal(drops(e, FSW_DROP_BAD_MAD), 2);
	mad[0] = MAD_BASE_VERSION;
	/* not QP1's Q_Key */
	send_to_sm(e, e->ga, mad, MAD_LEN, 0x1234);
	assert_int_equal(ncap, 0);
	assert_int_equal(drops(e, FSW_DROP_QKEY_MISMATCH), 1);
	assert_int_equal(fsw_stats(e->sw)->sa_requests, answered);

	/* the same MAD, intact, is answered */
	send_to_sm(e, e->ga, mad, MAD_LEN, FAB_QP1_QKEY);
	assert_int_equal(got_for(e->ga, &r), 1);
	assert_int_equal(r.h.mad.status, 0);
	assert_int_equal(fsw_stats(e->sw)->sa_requests, answered + 1);
}

/* ---- (8) responses go to the agent that asked ---------------------------- */

static void test_agents(void **state)
{
	struct env *e = *state;
	struct fsw_qp *ga2;
	struct sa_mcmember r;
	uint8_t rec[SA_MCMEMBER_LEN], mad[MAD_LEN];
	struct sa_mcmember q;
	struct sa_hdr h;
	char err[256];
	uint64_t unk;

	ga2 = slot_gsi_create(e->sw, e->a, MAD_CLASS_SUBN_ADM, err, sizeof(err));
	assert_non_null(ga2);
	assert_int_not_equal(fsw_qp_qpn(ga2), fsw_qp_qpn(e->ga));

	assert_int_equal(mcm_get(e, ga2, BCAST, &r), 0);
	assert_int_equal(ncap, 1);		/* not to e->ga */
	assert_ptr_equal(caps[0].qp, ga2);
	assert_int_equal(r.mlid, 0xc000);
	assert_int_equal(mcm_get(e, e->ga, BCAST_P1, &r), 0);
	assert_int_equal(ncap, 1);
	assert_ptr_equal(caps[0].qp, e->ga);
	assert_int_equal(r.mlid, 0xc001);

	/* an answer for an agent that is not there goes nowhere */
	mcm_init(&q, BCAST, NULL, 0);
	sa_mcmember_encode(&q, rec);
	mad_header(&h, e->ga, MAD_METHOD_GET, SA_ATTR_MCMEMBER_RECORD,
		   SA_MCM_MGID, 0);
	h.mad.tid = (uint64_t)0x00ab0000 << 32 | 7;
	sa_mad_build(&h, rec, sizeof(rec), mad);
	unk = drops(e, FSW_DROP_UNKNOWN_QP);
	send_to_sm(e, e->ga, mad, MAD_LEN, FAB_QP1_QKEY);
	assert_int_equal(ncap, 0);
	assert_int_equal(drops(e, FSW_DROP_UNKNOWN_QP), unk + 1);
}

/* ---- (9) a port's processes join apart ---------------------------------- */

/* Does a QP of node a attached to the broadcast group hear a broadcast
 * from c?  (c's QP is made on first use.) */
static int a_hears_broadcast(struct env *e, struct fsw_qp *qa)
{
	static struct fsw_qp *qc;
	uint8_t pkt[IB_MAX_PKT];
	char err[256];

	if (!qc || fsw_qp_node(qc) != e->c)
		qc = slot_qp_create(e->sw, e->c, IPOIB_QKEY, 0, 0, err,
				    sizeof(err));
	assert_non_null(qc);
	ncap = 0;
	fsw_input_qp(e->sw, qc, pkt, mcast_pkt(pkt, qc, 0xc000, BCAST));
	return got_for(qa, NULL) == 1;
}

/*
 * Several processes on one port (two ipoibd with one node name) each join
 * the broadcast group.  As a host's multicast layer counts its local
 * joiners (drivers/infiniband/core/multicast.c), the port's JoinState is
 * the union of theirs: one process leaving, or exiting, takes from the
 * port only the bits no other process of it holds, and the others keep
 * receiving.
 */
static void test_processes_join_apart(void **state)
{
	static int p1, p2, p3;	/* the processes' tokens */
	struct env *e = *state;
	struct fsw_qp *g1, *g2, *g3, *qa;
	union fab_gid mg = gid(BCAST);
	struct sa_mcmember r;
	char err[256];
	uint64_t leaves;

	/* besides the setup's process (its agent e->ga is no process's),
	 * three more on a, each with its SA agent */
	assert_ptr_equal(fsw_node_attach(e->sw, "a", err, sizeof(err)), e->a);
	assert_ptr_equal(fsw_node_attach(e->sw, "a", err, sizeof(err)), e->a);
	assert_ptr_equal(fsw_node_attach(e->sw, "a", err, sizeof(err)), e->a);
	g1 = slot_gsi_create_proc(e->sw, e->a, &p1, MAD_CLASS_SUBN_ADM, err,
				  sizeof(err));
	g2 = slot_gsi_create_proc(e->sw, e->a, &p2, MAD_CLASS_SUBN_ADM, err,
				  sizeof(err));
	g3 = slot_gsi_create_proc(e->sw, e->a, &p3, MAD_CLASS_SUBN_ADM, err,
				  sizeof(err));
	assert_non_null(g1);
	assert_non_null(g2);
	assert_non_null(g3);
	qa = slot_qp_create(e->sw, e->a, IPOIB_QKEY, 0, 0, err, sizeof(err));
	assert_non_null(qa);
	assert_int_equal(fsw_mcast_attach(e->sw, qa, &mg, 0xc000, err,
					  sizeof(err)), 0);
	/* b is a full member throughout, so that a port of non-members
	 * stays in the group */
	assert_int_equal(mcm_join(e, e->gb, BCAST, SA_JOIN_FULL, NULL), 0);

	/* the answers are the port's record: bits accumulate as before */
	assert_int_equal(mcm_join(e, g1, BCAST, SA_JOIN_FULL, &r), 0);
	assert_int_equal(r.join_state, SA_JOIN_FULL);
	assert_int_equal(mcm_join(e, g2, BCAST, SA_JOIN_FULL, &r), 0);
	assert_int_equal(r.join_state, SA_JOIN_FULL);
	assert_int_equal(mcm_join(e, g3, BCAST, SA_JOIN_NON, &r), 0);
	assert_int_equal(r.join_state, SA_JOIN_FULL | SA_JOIN_NON);
	assert_true(a_hears_broadcast(e, qa));

	/* the first process leaves: answered, counted, and the port stays a
	 * full member for the second */
	leaves = fsw_stats(e->sw)->sa_leaves;
	assert_int_equal(mcm_leave(e, g1, BCAST, SA_JOIN_FULL, &r), 0);
	assert_int_equal(r.join_state, SA_JOIN_FULL | SA_JOIN_NON);
	assert_int_equal(fsw_stats(e->sw)->sa_leaves, leaves + 1);
	assert_int_equal(mcm_member(e, e->gb, BCAST, e->a, &r), 0);
	assert_int_equal(r.join_state, SA_JOIN_FULL | SA_JOIN_NON);
	assert_int_equal(fsw_node_groups(e->sw, e->a), 1);
	assert_true(a_hears_broadcast(e, qa));
	/* a leave of bits the port holds, though not from this process,
	 * takes nothing another process holds */
	assert_int_equal(mcm_leave(e, g1, BCAST, SA_JOIN_FULL, &r), 0);
	assert_int_equal(r.join_state, SA_JOIN_FULL | SA_JOIN_NON);
	/* bits the port does not hold are refused, as before */
	assert_int_equal(mcm_leave(e, g1, BCAST, SA_JOIN_SENDONLY_NON, NULL),
			 SA_STATUS_REQ_INVALID);

	/* the second process exits without leaving: its FullMember goes,
	 * the third's NonMember stays (and still receives) */
	fsw_node_detach(e->sw, e->a, &p2);
	assert_int_equal(mcm_member(e, e->gb, BCAST, e->a, &r), 0);
	assert_int_equal(r.join_state, SA_JOIN_NON);
	assert_true(a_hears_broadcast(e, qa));
	/* the exit was no Delete on the wire (three were) */
	assert_int_equal(fsw_stats(e->sw)->sa_leaves, leaves + 3);

	/* the third process leaves what it alone holds: the port is out */
	assert_int_equal(mcm_leave(e, g3, BCAST, SA_JOIN_NON, &r), 0);
	assert_int_equal(r.join_state, 0);
	assert_int_equal(mcm_member(e, e->gb, BCAST, e->a, &r),
			 SA_STATUS_NO_RECORDS);
	assert_int_equal(fsw_node_groups(e->sw, e->a), 0);
	assert_false(a_hears_broadcast(e, qa));

	/* it joins again and exits: its bits go though the port has
	 * processes left */
	assert_int_equal(mcm_join(e, g3, BCAST, SA_JOIN_FULL, &r), 0);
	assert_int_equal(fsw_node_groups(e->sw, e->a), 1);
	fsw_node_detach(e->sw, e->a, &p3);
	assert_int_equal(fsw_node_groups(e->sw, e->a), 0);
	/* b, another port, is untouched throughout */
	assert_int_equal(mcm_member(e, e->gb, BCAST, e->b, &r), 0);
	assert_int_equal(r.join_state, SA_JOIN_FULL);

	/* what the port itself joined (no process) is left only by a
	 * Delete or by the port going */
	assert_int_equal(mcm_join(e, e->ga, BCAST, SA_JOIN_FULL, NULL), 0);
	assert_int_equal(mcm_join(e, g1, BCAST, SA_JOIN_FULL, NULL), 0);
	fsw_node_detach(e->sw, e->a, &p1);
	assert_int_equal(mcm_member(e, e->gb, BCAST, e->a, &r), 0);
	assert_int_equal(r.join_state, SA_JOIN_FULL);
	/* the last process: the port's memberships go */
	fsw_node_detach(e->sw, e->a, NULL);
	assert_int_equal(fsw_node_groups(e->sw, e->a), 0);
}

/*
 * An ordinary group created by one process of a port and joined by
 * another: the creator's leave keeps the group, the other's exit then
 * deletes it (the last full member gone), with trap 67 as on a Delete.
 */
static void test_process_exit_deletes_group(void **state)
{
	static int p1, p2;
	struct env *e = *state;
	struct fsw_qp *g1, *g2;
	struct sa_mcmember r;
	char err[256];

	assert_ptr_equal(fsw_node_attach(e->sw, "b", err, sizeof(err)), e->b);
	assert_ptr_equal(fsw_node_attach(e->sw, "b", err, sizeof(err)), e->b);
	g1 = slot_gsi_create_proc(e->sw, e->b, &p1, MAD_CLASS_SUBN_ADM, err,
				  sizeof(err));
	g2 = slot_gsi_create_proc(e->sw, e->b, &p2, MAD_CLASS_SUBN_ADM, err,
				  sizeof(err));
	assert_non_null(g1);
	assert_non_null(g2);
	assert_int_equal(mcm_create(e, g1, "ff12:1234::77", 0x99, 0xffff,
				    SA_JOIN_FULL, &r), 0);
	assert_int_equal(mcm_join(e, g2, "ff12:1234::77", SA_JOIN_FULL, &r),
			 0);
	assert_int_equal(mcm_leave(e, g1, "ff12:1234::77", SA_JOIN_FULL, &r),
			 0);
	assert_int_equal(r.join_state, SA_JOIN_FULL);
	assert_int_equal(mcm_get(e, e->ga, "ff12:1234::77", &r), 0);
	fsw_node_detach(e->sw, e->b, &p2);
	assert_int_equal(mcm_get(e, e->ga, "ff12:1234::77", &r),
			 SA_STATUS_NO_RECORDS);
	assert_int_equal(fsw_node_groups(e->sw, e->b), 0);
	/* the process that left stays attached; its later join makes the
	 * group again */
	assert_int_equal(mcm_create(e, g1, "ff12:1234::77", 0x99, 0xffff,
				    SA_JOIN_FULL, &r), 0);
	assert_int_equal(fsw_node_groups(e->sw, e->b), 1);
}

/* ---- InformInfo and the traps of group creation and deletion ------------- */

static uint16_t subscribe(struct env *e, struct fsw_qp *agent, int on,
			  struct sa_inform_info *out)
{
	struct sa_inform_info q;
	uint8_t rec[SA_INFORM_INFO_LEN];
	struct reply r;
	uint16_t st;

	/* everything: no GID, LID range 0xFFFF, any type, trap, producer */
	memset(&q, 0, sizeof(q));
	q.lid_range_begin = 0xffff;
	q.is_generic = 1;
	q.subscribe = (uint8_t)on;
	q.type = 0xffff;
	q.trap_number = 0xffff;
	q.producer_type = 0xffffff;
	sa_inform_info_encode(&q, rec);
	st = sa_req(e, agent, MAD_METHOD_SET, SA_ATTR_INFORM_INFO, 0, 0, rec,
		    sizeof(rec), &r);
	if (out)
		sa_inform_info_decode(r.mad + SA_HDR_LEN, out);
	return st;
}

/* The Reports delivered to agent since the last send; the last in *nt. */
static unsigned int reports_for(const struct fsw_qp *agent,
				struct sa_notice *nt, union fab_gid *subject)
{
	unsigned int i, n = 0;
	struct reply r;

	for (i = 0; i < ncap; i++) {
		if (caps[i].qp != agent)
			continue;
		decode_cap(&caps[i], &r);
		if (r.h.mad.method != MAD_METHOD_REPORT)
			continue;
		assert_int_equal(r.h.mad.attr_id, SA_ATTR_NOTICE);
		assert_int_equal(r.u.lrh.slid, 1);
		assert_int_equal(r.u.deth.srcqp, 1);
		assert_int_equal(r.u.deth.qkey, FAB_QP1_QKEY);
		sa_notice_decode(r.mad + SA_HDR_LEN, nt);
		memcpy(subject->raw, nt->data_details + 6, 16);
		n++;
	}
	return n;
}

static void test_inform_traps(void **state)
{
	struct env *e = *state;
	union fab_gid mg = gid("ff12:1234::5"), subject;
	struct sa_inform_info ii;
	struct sa_mcmember r;
	struct sa_notice nt;

	assert_int_equal(subscribe(e, e->gb, 1, &ii), 0);
	assert_int_equal(ii.is_generic, 1);
	assert_int_equal(ii.subscribe, 1);
	assert_int_equal(ii.trap_number, 0xffff);

	/* a creates a group: b hears trap 66 with the MGID */
	assert_int_equal(mcm_create(e, e->ga, "ff12:1234::5", 0x55, 0xffff,
				    SA_JOIN_FULL, &r), 0);
	assert_int_equal(reports_for(e->gb, &nt, &subject), 1);
	assert_int_equal(nt.is_generic, 1);
	assert_int_equal(nt.trap_number, SA_TRAP_MCG_CREATED);
	assert_int_equal(nt.issuer_lid, 1);
	assert_memory_equal(subject.raw, mg.raw, 16);
	assert_int_equal(reports_for(e->ga, &nt, &subject), 0);
	assert_int_equal(fsw_stats(e->sw)->sm_traps, 1);

	/* a non-member joining is no news */
	assert_int_equal(mcm_join(e, e->gb, "ff12:1234::5", SA_JOIN_NON, NULL),
			 0);
	assert_int_equal(reports_for(e->gb, &nt, &subject), 0);

	/* the last full member leaves: trap 67 */
	assert_int_equal(mcm_leave(e, e->ga, "ff12:1234::5", SA_JOIN_FULL,
				   NULL), 0);
	assert_int_equal(reports_for(e->gb, &nt, &subject), 1);
	assert_int_equal(nt.trap_number, SA_TRAP_MCG_DELETED);
	assert_memory_equal(subject.raw, mg.raw, 16);
	assert_int_equal(fsw_stats(e->sw)->sm_traps, 2);

	/* unsubscribed, b hears nothing; unsubscribing again is an error */
	assert_int_equal(subscribe(e, e->gb, 0, NULL), 0);
	assert_int_equal(subscribe(e, e->gb, 0, NULL), SA_STATUS_REQ_INVALID);
	assert_int_equal(mcm_create(e, e->ga, "ff12:1234::6", 0x55, 0xffff,
				    SA_JOIN_FULL, NULL), 0);
	assert_int_equal(reports_for(e->gb, &nt, &subject), 0);
	assert_int_equal(fsw_stats(e->sw)->sm_traps, 2);
}

/* ---- behaviour checked against OpenSM's source --------------------------- */

/*
 * The join answer and the stored membership carry the group's scope:
 * mcmr_rcv_join_mgrp() copy_from_create_mc_rec() takes scope_state's high
 * nibble from the group, and osm_mgrp_add_port() stores that.  Linux IPoIB
 * leaves the scope 0 in its request.
 */
static void test_opensm_join_takes_group_scope(void **state)
{
	struct env *e = *state;
	struct sa_mcmember r;

	assert_int_equal(mcm_join(e, e->ga, BCAST, SA_JOIN_FULL, &r), 0);
	assert_int_equal(r.join_state, SA_JOIN_FULL);
	assert_int_equal(r.scope, 2);
	assert_int_equal(mcm_member(e, e->ga, BCAST, e->a, &r), 0);
	assert_int_equal(r.scope, 2);
}

/* C15-0.1.5 (osm_sa_respond, osm_sa_send_error): SM_Key 0 in answers. */
static void test_opensm_answers_carry_no_sm_key(void **state)
{
	struct env *e = *state;
	struct sa_mcmember q, r;
	struct reply rp;

	mcm_init(&q, BCAST, NULL, 0);
	assert_int_equal(mcm_req(e, e->ga, MAD_METHOD_GET_TABLE, SA_MCM_MGID,
				 SM_KEY, &q, &r, &rp), 0);
	assert_int_equal(rp.h.sm_key, 0);
	mcm_init(&q, "ff12:1234::77", NULL, 0);
	assert_int_equal(mcm_req(e, e->ga, MAD_METHOD_GET, SA_MCM_MGID,
				 SM_KEY, &q, &r, &rp), SA_STATUS_NO_RECORDS);
	assert_int_equal(rp.h.sm_key, 0);
}

/* osm_sa_mad_ctrl.c: a non-zero SM_Key other than the SM's is ignored. */
static void test_opensm_wrong_sm_key_ignored(void **state)
{
	struct env *e = *state;
	uint8_t rec[SA_MCMEMBER_LEN], mad[MAD_LEN];
	struct sa_mcmember q;
	struct sa_hdr h;

	mcm_init(&q, BCAST, NULL, 0);
	sa_mcmember_encode(&q, rec);
	mad_header(&h, e->ga, MAD_METHOD_GET, SA_ATTR_MCMEMBER_RECORD,
		   SA_MCM_MGID, 0x1234);
	sa_mad_build(&h, rec, sizeof(rec), mad);
	send_to_sm(e, e->ga, mad, MAD_LEN, FAB_QP1_QKEY);
	assert_int_equal(ncap, 0);
}

/*
 * pr_rcv_get_path_parms(), rate selector "exactly": the path's rate must
 * be the one asked (ib_path_compare_rates() != 0 -> no path); the path
 * runs at 10 Gb/s, 2.5 Gb/s is asked.
 */
static void test_opensm_path_rate_exactly(void **state)
{
	struct env *e = *state;
	struct sa_path q, r;

	path_init(&q, e->a, e->b);
	q.rate_sel = SA_SEL_EQ;
	q.rate = 2;
	assert_int_equal(path_get(e, e->ga, MAD_METHOD_GET,
				  PR_MASK | SA_PR_RATE_SEL | SA_PR_RATE, &q,
				  &r, NULL), SA_STATUS_NO_RECORDS);
	q.rate = 3;
	assert_int_equal(path_get(e, e->ga, MAD_METHOD_GET,
				  PR_MASK | SA_PR_RATE_SEL | SA_PR_RATE, &q,
				  &r, NULL), 0);
	assert_int_equal(r.rate, 3);
}

/*
 * pr_rcv_get_path_parms(), rate selector "less than" a rate the path
 * reaches: the next lower rate, ib_path_rate_get_prev(10 Gb/s) = 5 Gb/s
 * (code 5).
 */
static void test_opensm_path_rate_less_than(void **state)
{
	struct env *e = *state;
	struct sa_path q, r;

	path_init(&q, e->a, e->b);
	q.rate_sel = SA_SEL_LT;
	q.rate = 3;
	assert_int_equal(path_get(e, e->ga, MAD_METHOD_GET,
				  PR_MASK | SA_PR_RATE_SEL | SA_PR_RATE, &q,
				  &r, NULL), 0);
	assert_int_equal(r.rate, 5);
}

/* pr_rcv_get_path_parms(): an SL in the request is used as given (the
 * partition's SL only when none is asked; no QoS policy). */
static void test_opensm_path_sl_as_asked(void **state)
{
	struct env *e = *state;
	struct sa_path q, r;

	path_init(&q, e->a, e->b);
	q.pkey = 0x8001;
	q.sl = 5;
	assert_int_equal(path_get(e, e->ga, MAD_METHOD_GET,
				  PR_MASK | SA_PR_PKEY | SA_PR_SL, &q, &r,
				  NULL), 0);
	assert_int_equal(r.sl, 5);
	assert_int_equal(r.pkey, 0x8001);
}

/* mgrp_request_is_realizable(): a new group asked "rate less than" the
 * port's rate gets the next lower rate (ib_path_rate_get_prev). */
static void test_opensm_create_rate_less_than(void **state)
{
	struct env *e = *state;
	struct sa_mcmember q, r;

	mcm_init(&q, "ff12:1234::21", e->a, SA_JOIN_FULL);
	q.qkey = 0x21;
	q.pkey = 0xffff;
	q.rate_sel = SA_SEL_LT;
	q.rate = 3;
	assert_int_equal(mcm_req(e, e->ga, MAD_METHOD_SET,
				 CREATE_MASK | SA_MCM_RATE_SEL | SA_MCM_RATE,
				 0, &q, &r, NULL), 0);
	assert_int_equal(r.rate, 5);
	assert_int_equal(mcm_get(e, e->ga, "ff12:1234::21", &r), 0);
	assert_int_equal(r.rate, 5);
}

/* get_new_mlid(): a create naming a free MLID gets it. */
static void test_opensm_create_requested_mlid(void **state)
{
	struct env *e = *state;
	struct sa_mcmember q, r;

	mcm_init(&q, "ff12:1234::22", e->a, SA_JOIN_FULL);
	q.qkey = 0x22;
	q.pkey = 0xffff;
	q.mlid = 0xc010;
	assert_int_equal(mcm_req(e, e->ga, MAD_METHOD_SET,
				 CREATE_MASK | SA_MCM_MLID, 0, &q, &r, NULL),
			 0);
	assert_int_equal(r.mlid, 0xc010);
}

/*
 * is_access_permitted() (osm_inform.c, o13-17.1.1): a Report of trap
 * 66/67 goes only to subscribers in the group's partition.
 */
static void test_opensm_mcg_traps_need_pkey(void **state)
{
	struct env *e = *state;
	union fab_gid subject;
	struct sa_notice nt;

	assert_int_equal(subscribe(e, e->gb, 1, NULL), 0);
	assert_int_equal(subscribe(e, e->gc, 1, NULL), 0);
	assert_int_equal(mcm_create(e, e->ga, "ff12:1234::31", 0x31, 0x8001,
				    SA_JOIN_FULL, NULL), 0);
	assert_int_equal(reports_for(e->gb, &nt, &subject), 1);
	assert_int_equal(nt.trap_number, SA_TRAP_MCG_CREATED);
	assert_int_equal(reports_for(e->gc, &nt, &subject), 0);
}

/*
 * A port with FullMember and SendOnlyFullMember that leaves FullMember is
 * removed (osm_mgrp_remove_port keeps only a FullMember or a port with
 * other full members around); OpenSM then still counts it as a full member
 * and the group lingers with none.  We count it out: the group goes.
 */
static void test_removed_port_is_no_full_member(void **state)
{
	struct env *e = *state;
	struct sa_mcmember r;

	assert_int_equal(mcm_create(e, e->ga, "ff15:9::1", 0x9, 0xffff,
				    SA_JOIN_FULL, NULL), 0);
	assert_int_equal(mcm_join(e, e->ga, "ff15:9::1",
				  SA_JOIN_SENDONLY_FULL, &r), 0);
	assert_int_equal(r.join_state, SA_JOIN_FULL | SA_JOIN_SENDONLY_FULL);
	assert_int_equal(mcm_leave(e, e->ga, "ff15:9::1", SA_JOIN_FULL, &r),
			 0);
	assert_int_equal(r.join_state, 0);	/* the port is out */
	assert_int_equal(mcm_get(e, e->ga, "ff15:9::1", NULL),
			 SA_STATUS_NO_RECORDS);
}

/*
 * A port that is only a limited member of the partition it asks in still
 * hears the SA: the SM's port is a full member of every partition and
 * answers with the full key.
 */
static void test_limited_requester_answered(void **state)
{
	static const char conf[] = "p1=0x8001, ipoib : x=full ;\n";
	struct env *e = *state, le = *e;
	struct prtn_conf pc;
	struct fsw_node *x;
	struct fsw_qp *gx;
	struct reply rp;
	struct sa_mcmember q;
	uint8_t rec[SA_MCMEMBER_LEN];
	char err[256];

	assert_int_equal(prtn_conf_parse(conf, sizeof(conf) - 1, "t", &pc,
					 err, sizeof(err)), 0);
	le.sw = fsw_new(&pc, &cap_ops, NULL);
	sut = le.sw;
	x = fsw_node_attach(le.sw, "x", err, sizeof(err));
	assert_non_null(x);
	/* OpenSM's implicit Default: ALL=limited, SELF=full */
	assert_int_equal(port_info(x).pkeys[0], 0x7fff);
	gx = slot_gsi_create(le.sw, x, MAD_CLASS_SUBN_ADM, err, sizeof(err));
	assert_non_null(gx);
	mcm_init(&q, "ff12:401b:8001::ffff:ffff", x, SA_JOIN_FULL);
	sa_mcmember_encode(&q, rec);
	assert_int_equal(sa_req(&le, gx, MAD_METHOD_SET,
				SA_ATTR_MCMEMBER_RECORD, JOIN_MASK, 0, rec,
				sizeof(rec), &rp), 0);
	assert_int_equal(rp.u.bth.pkey, 0xffff);	/* the full key */
	assert_int_equal(drops(&le, FSW_DROP_PKEY_MISMATCH), 0);
	fsw_free(le.sw);
	sut = e->sw;
	prtn_conf_free(&pc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_well_known_groups, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_join_and_create, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_partition_enforcement,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_join_state_accounting,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_forwarding_by_membership,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_path_record, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_malformed_mads, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_agents, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_processes_join_apart, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_process_exit_deletes_group, setup, teardown),
		cmocka_unit_test_setup_teardown(test_inform_traps, setup,
						teardown),
		cmocka_unit_test_setup_teardown(
			test_opensm_join_takes_group_scope, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_opensm_answers_carry_no_sm_key, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_opensm_wrong_sm_key_ignored, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_opensm_path_rate_exactly, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_opensm_path_rate_less_than, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_opensm_path_sl_as_asked, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_opensm_create_rate_less_than, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_opensm_create_requested_mlid, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_opensm_mcg_traps_need_pkey, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_removed_port_is_no_full_member, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_limited_requester_answered, setup, teardown),
	};

	return cmocka_run_group_tests_name("fsw_sa", tests, NULL, NULL);
}

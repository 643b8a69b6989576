// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The switch pipeline without sockets: P_Key membership matrix, Q_Key
 * rules, multicast replication and group lifetime, LID/QPN assignment and
 * the rule that every packet is delivered or counted once per receiver.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "subnet/fsw.h"
#include "fabric/ib_pkt.h"
#include "subnet/partitions.h"
#include "fabric/sa_mad.h"
#include "tests/unit/fsw_slots.h"

static struct fsw_qp *got[16];
static unsigned int ngot;
static int last_status = -1;	/* of the last MAD delivered */

/* The port as a process on the node sees it. */
static struct fsp_port_info port_info(struct fsw *sw,
				      const struct fsw_node *n)
{
	struct fsp_port_info pi;

	fsw_port_info(sw, n, &pi);
	return pi;
}

static int cap_deliver(void *ctx, void *owner, const uint8_t *pkt,
		       size_t len)
{
	struct ib_ud u;

	(void)ctx;
	if (ngot < 16)
		got[ngot++] = *(struct fsw_qp **)owner;
	/* to QP1: a MAD for an agent */
	if (ib_ud_parse(pkt, len, &u) == IB_PKT_OK && u.bth.destqp == 1 &&
	    u.payload_len >= MAD_HDR_LEN)
		last_status = u.payload[4] << 8 | u.payload[5];
	return 0;
}

/* PKEY_CHANGE events, by node (nodes named as setup attaches them). */
static struct fsw_node *pkey_events[16];
static unsigned int npkey_events;

static void cap_event(void *ctx, struct fsw_node *node,
		      enum fab_event_type type)
{
	(void)ctx;
	if (type == FAB_EV_PKEY_CHANGE && npkey_events < 16)
		pkey_events[npkey_events++] = node;
}

static int got_pkey_event(const struct fsw_node *n)
{
	unsigned int i;

	for (i = 0; i < npkey_events; i++)
		if (pkey_events[i] == n)
			return 1;
	return 0;
}

static const struct fsw_ops ops = { .deliver = cap_deliver,
				    .event = cap_event };

struct env {
	struct prtn_conf pc;
	struct fsw *sw;
	struct fsw_node *full1, *full2, *lim1, *lim2, *out;
};

static int setup(void **state)
{
	static const char conf[] =
		"Default=0x7fff, ipoib : ALL=full ;\n"
		"p=0x8001 : full1=full, full2=full, lim1=limited, lim2 ;\n";
	static struct env e;
	char err[256];

	memset(&e, 0, sizeof(e));
	assert_int_equal(prtn_conf_parse(conf, sizeof(conf) - 1, "t", &e.pc,
					 err, sizeof(err)), 0);
	slots_reset();
	e.sw = fsw_new(&e.pc, &ops, NULL);
	assert_non_null(e.sw);
	e.full1 = fsw_node_attach(e.sw, "full1", err, sizeof(err));
	e.full2 = fsw_node_attach(e.sw, "full2", err, sizeof(err));
	e.lim1 = fsw_node_attach(e.sw, "lim1", err, sizeof(err));
	e.lim2 = fsw_node_attach(e.sw, "lim2", err, sizeof(err));
	e.out = fsw_node_attach(e.sw, "out", err, sizeof(err));
	assert_non_null(e.out);
	ngot = 0;
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

/* Build a UD packet from node 'from' with its table's P_Key 'pkey'. */
static size_t mkpkt(uint8_t *buf, const struct fsw_node *from, uint16_t dlid,
		    uint32_t dqpn, uint16_t pkey, uint32_t qkey,
		    const union fab_gid *mgid)
{
	struct ib_ud u;

	memset(&u, 0, sizeof(u));
	u.lrh.dlid = dlid;
	u.lrh.slid = fsw_node_lid(from);
	u.bth.pkey = pkey;
	u.bth.destqp = dqpn;
	u.deth.qkey = qkey;
	u.deth.srcqp = 0x48;
	u.payload = (const uint8_t *)"data";
	u.payload_len = 4;
	if (mgid) {
		u.has_grh = 1;
		u.grh.dgid = *mgid;
	}
	return ib_ud_build(&u, buf, IB_MAX_PKT);
}

/* The node's port joins a group through the SA, as FullMember; returns the
 * MAD status of the answer (the agent's delivery is counted in ngot). */
static int sa_join(struct fsw *sw, struct fsw_node *n,
		   const union fab_gid *mgid)
{
	char err[256];
	struct fsw_qp *agent = slot_gsi_create(sw, n, 0x03, err, sizeof(err));
	struct sa_mcmember r;
	struct sa_hdr h;
	struct ib_ud u;
	uint8_t rec[SA_MCMEMBER_LEN], mad[MAD_LEN], pkt[IB_MAX_PKT];
	unsigned int before = ngot;
	int i;

	assert_non_null(agent);
	memset(&r, 0, sizeof(r));
	r.mgid = *mgid;
	r.port_gid.raw[0] = 0xfe;
	r.port_gid.raw[1] = 0x80;
	for (i = 0; i < 8; i++)
		r.port_gid.raw[8 + i] = (uint8_t)(port_info(sw, n).port_guid >>
						  (56 - 8 * i));
	r.join_state = SA_JOIN_FULL;
	sa_mcmember_encode(&r, rec);
	memset(&h, 0, sizeof(h));
	h.mad.base_version = 1;
	h.mad.mgmt_class = MAD_CLASS_SUBN_ADM;
	h.mad.class_version = SA_CLASS_VERSION;
	h.mad.method = MAD_METHOD_SET;
	h.mad.tid = (uint64_t)fsw_qp_qpn(agent) << 32 | 7;
	h.mad.attr_id = SA_ATTR_MCMEMBER_RECORD;
	h.comp_mask = SA_MCM_MGID | SA_MCM_PORT_GID | SA_MCM_JOIN_STATE;
	sa_mad_build(&h, rec, sizeof(rec), mad);
	memset(&u, 0, sizeof(u));
	u.lrh.dlid = 1;
	u.lrh.slid = fsw_node_lid(n);
	u.bth.pkey = 0xffff;
	u.bth.destqp = 1;
	u.deth.qkey = FAB_QP1_QKEY;
	u.deth.srcqp = 1;
	u.payload = mad;
	u.payload_len = sizeof(mad);
	fsw_input_qp(sw, agent, pkt, ib_ud_build(&u, pkt, sizeof(pkt)));
	assert_int_equal(ngot, before + 1);
	assert_ptr_equal(got[before], agent);
	ngot = before;
	fsw_qp_destroy(sw, agent);
	return last_status;
}

static uint64_t drops(const struct fsw *sw, enum fsw_drop d)
{
	return fsw_stats(sw)->drop[d];
}

/* The PROCS column of the node's line in the "nodes" report. */
static unsigned int node_procs(struct fsw *sw, const char *name)
{
	static char buf[4096];
	char who[64], state[16];
	unsigned long long guid;
	unsigned int lid, procs;
	const char *line;

	assert_true(fsw_report(sw, "nodes", buf, sizeof(buf)) > 0);
	for (line = strchr(buf, '\n'); line; line = strchr(line, '\n')) {
		line++;
		if (sscanf(line, "%63s 0x%llx 0x%x %15s %u", who, &guid, &lid,
			   state, &procs) == 5 && !strcmp(who, name))
			return procs;
	}
	fail_msg("node %s not in the report", name);
	return 0;
}

static void test_identity(void **state)
{
	struct env *e = *state;
	struct fsp_port_info pi;
	char err[256];

	/* LIDs in attach order after the SM's, GUIDs stable per name */
	assert_int_equal(fsw_node_lid(e->full1), 2);
	assert_int_equal(fsw_node_lid(e->out), 6);
	pi = port_info(e->sw, e->full1);
	assert_int_equal(pi.port_guid, pi.node_guid | 1);
	assert_ptr_equal(fsw_node_attach(e->sw, "full1", err, sizeof(err)),
			 e->full1);
	assert_int_equal(node_procs(e->sw, "full1"), 2);
	assert_null(fsw_node_attach(e->sw, "bad name", err, sizeof(err)));
	assert_non_null(strstr(err, "invalid node name"));
	/* P_Key tables: default first, then the partition by membership */
	assert_int_equal(pi.npkeys, 2);
	assert_int_equal(pi.pkeys[0], 0xffff);
	assert_int_equal(pi.pkeys[1], 0x8001);
	assert_int_equal(port_info(e->sw, e->lim2).pkeys[1], 0x0001);
	assert_int_equal(port_info(e->sw, e->out).npkeys, 1);
}

static void test_pkey_matrix(void **state)
{
	struct env *e = *state;
	struct {
		struct fsw_node **from, **to;
		int delivered;
	} m[] = {
		{ &e->full1, &e->full2, 1 },
		{ &e->full1, &e->lim1, 1 },
		{ &e->lim1, &e->full1, 1 },
		{ &e->lim1, &e->lim2, 0 },	/* two limited members */
	};
	uint8_t pkt[IB_MAX_PKT];
	char err[256];
	unsigned int i;

	for (i = 0; i < sizeof(m) / sizeof(m[0]); i++) {
		struct fsw_node *from = *m[i].from, *to = *m[i].to;
		struct fsw_qp *rq = slot_qp_create(e->sw, to, 0x11, 1, 0, err,
					      sizeof(err));
		uint64_t before = drops(e->sw, FSW_DROP_PKEY_MISMATCH);
		size_t n;

		assert_non_null(rq);
		slot_qp_create(e->sw, from, 0x11, 1, 0, err, sizeof(err));
		n = mkpkt(pkt, from, fsw_node_lid(to), fsw_qp_qpn(rq),
			  port_info(e->sw, from).pkeys[1], 0x11, NULL);
		ngot = 0;
		fsw_input(e->sw, from, pkt, n);
		assert_int_equal(ngot, m[i].delivered);
		assert_int_equal(drops(e->sw, FSW_DROP_PKEY_MISMATCH),
				 before + !m[i].delivered);
	}
	/* the outsider has no 0x8001 entry: no QP there, no forged sends */
	assert_null(slot_qp_create(e->sw, e->out, 0x11, 1, 0, err, sizeof(err)));
	ngot = 0;
	fsw_input(e->sw, e->out, pkt, mkpkt(pkt, e->out,
					    fsw_node_lid(e->full2), 0x48,
					    0x8001, 0x11, NULL));
	assert_int_equal(ngot, 0);
	assert_int_equal(drops(e->sw, FSW_DROP_SEND_PKEY), 1);
}

static void test_qkey_rules(void **state)
{
	struct env *e = *state;
	uint8_t pkt[IB_MAX_PKT];
	char err[256];
	struct fsw_qp *rq = slot_qp_create(e->sw, e->full2, 0x22, 0, 0, err,
				      sizeof(err));
	uint16_t dlid = fsw_node_lid(e->full2);
	uint32_t dqpn = fsw_qp_qpn(rq);

	slot_qp_create(e->sw, e->full1, 0x22, 0, 0, err, sizeof(err));
	fsw_input(e->sw, e->full1, pkt, mkpkt(pkt, e->full1, dlid, dqpn,
					      0xffff, 0x23, NULL));
	assert_int_equal(ngot, 0);
	assert_int_equal(drops(e->sw, FSW_DROP_QKEY_MISMATCH), 1);
	fsw_input(e->sw, e->full1, pkt, mkpkt(pkt, e->full1, dlid, dqpn,
					      0xffff, 0x80010000, NULL));
	assert_int_equal(drops(e->sw, FSW_DROP_QKEY_PRIVILEGED), 1);
	assert_null(slot_qp_create(e->sw, e->full1, 0x80010000, 0, 0, err,
			      sizeof(err)));
	fsw_input(e->sw, e->full1, pkt, mkpkt(pkt, e->full1, dlid, dqpn,
					      0xffff, 0x22, NULL));
	assert_int_equal(ngot, 1);
	assert_ptr_equal(got[0], rq);
	/* an unknown QPN and an unknown LID are counted, not delivered */
	fsw_input(e->sw, e->full1, pkt, mkpkt(pkt, e->full1, dlid, 0x777,
					      0xffff, 0x22, NULL));
	fsw_input(e->sw, e->full1, pkt, mkpkt(pkt, e->full1, 0x99, dqpn,
					      0xffff, 0x22, NULL));
	assert_int_equal(drops(e->sw, FSW_DROP_UNKNOWN_QP), 1);
	assert_int_equal(drops(e->sw, FSW_DROP_UNKNOWN_DLID), 1);
	assert_int_equal(ngot, 1);
}

static void test_multicast(void **state)
{
	struct env *e = *state;
	/* the Default partition's IPoIB broadcast group, MLID 0xC000 */
	union fab_gid mgid = { .raw = { 0xff, 0x12, 0x40, 0x1b, 0xff, 0xff,
					0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff,
					0xff } };
	union fab_gid other = { .raw = { 0xff, 0x12, 0x40, 0x1b, 0x12, 0x34 } };
	struct fsw_node *nodes[3] = { e->full2, e->lim1, e->lim2 };
	struct fsw_qp *q[3];
	uint8_t pkt[IB_MAX_PKT];
	char err[256];
	size_t n;
	int i;

	for (i = 0; i < 3; i++) {
		assert_int_equal(sa_join(e->sw, nodes[i], &mgid), 0);
		q[i] = slot_qp_create(e->sw, nodes[i], 0x0b1b, 0, 0, err,
				 sizeof(err));
		assert_int_equal(fsw_mcast_attach(e->sw, q[i], &mgid, 0xc000,
						  err, sizeof(err)), 0);
	}
	/* attaching twice is harmless; another MGID on the MLID is refused */
	assert_int_equal(fsw_mcast_attach(e->sw, q[0], &mgid, 0xc000, err,
					  sizeof(err)), 0);
	assert_int_equal(fsw_mcast_attach(e->sw, q[0], &other, 0xc000, err,
					  sizeof(err)), -1);
	n = mkpkt(pkt, e->full1, 0xc000, FAB_MCAST_QPN, 0xffff, 0x0b1b, &mgid);
	fsw_input(e->sw, e->full1, pkt, n);
	assert_int_equal(ngot, 3);
	/* a detached member no longer receives */
	assert_int_equal(fsw_mcast_detach(e->sw, q[1], &mgid, 0xc000, err,
					  sizeof(err)), 0);
	assert_int_equal(fsw_mcast_detach(e->sw, q[1], &mgid, 0xc000, err,
					  sizeof(err)), -1);
	ngot = 0;
	fsw_input(e->sw, e->full1, pkt, n);
	assert_int_equal(ngot, 2);
	/* destroying the last attached QPs: the SA group stays, nothing
	 * is delivered */
	fsw_qp_destroy(e->sw, q[0]);
	fsw_qp_destroy(e->sw, q[2]);
	ngot = 0;
	fsw_input(e->sw, e->full1, pkt, n);
	assert_int_equal(ngot, 0);
	assert_int_equal(fsw_stats(e->sw)->mcast_no_receivers, 1);
	/* an MLID the SM never assigned is dropped */
	n = mkpkt(pkt, e->full1, 0xc0ff, FAB_MCAST_QPN, 0xffff, 0x0b1b, &mgid);
	fsw_input(e->sw, e->full1, pkt, n);
	assert_int_equal(drops(e->sw, FSW_DROP_UNKNOWN_MLID), 1);
	/* multicast needs QPN 0xFFFFFF and a GRH */
	fsw_input(e->sw, e->full1, pkt, mkpkt(pkt, e->full1, 0xc000, 0x48,
					      0xffff, 0x0b1b, &mgid));
	assert_int_equal(drops(e->sw, FSW_DROP_MCAST_QPN), 1);
	fsw_input(e->sw, e->full1, pkt, mkpkt(pkt, e->full1, 0xc000,
					      FAB_MCAST_QPN, 0xffff, 0x0b1b,
					      NULL));
	assert_int_equal(drops(e->sw, FSW_DROP_MCAST_NO_GRH), 1);
}

static void test_spoofed_slid(void **state)
{
	struct env *e = *state;
	uint8_t pkt[IB_MAX_PKT];
	size_t n = mkpkt(pkt, e->full2, fsw_node_lid(e->full1), 0x48, 0xffff,
			 1, NULL);

	fsw_input(e->sw, e->full1, pkt, n);	/* full1 claims full2's LID */
	assert_int_equal(drops(e->sw, FSW_DROP_BAD_SLID), 1);
	assert_int_equal(ngot, 0);
}

/* Past the first table size: every node is found by name, and by its
 * port GUID (the SA's join looks the port up by it). */
static void test_many_nodes(void **state)
{
	struct env *e = *state;
	union fab_gid mgid = { .raw = { 0xff, 0x12, 0x40, 0x1b, 0xff, 0xff,
					0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff,
					0xff } };
	static struct fsw_node *n[300];
	char name[16], err[256];
	unsigned int i;

	for (i = 0; i < 300; i++) {
		snprintf(name, sizeof(name), "m%u", i);
		n[i] = fsw_node_attach(e->sw, name, err, sizeof(err));
		assert_non_null(n[i]);
		assert_int_equal(fsw_node_lid(n[i]), 7 + i);
	}
	for (i = 0; i < 300; i++) {
		snprintf(name, sizeof(name), "m%u", i);
		assert_ptr_equal(fsw_node_find(e->sw, name), n[i]);
	}
	assert_null(fsw_node_find(e->sw, "m300"));
	assert_ptr_equal(fsw_node_find(e->sw, "full1"), e->full1);
	assert_int_equal(sa_join(e->sw, n[0], &mgid), 0);
	assert_int_equal(sa_join(e->sw, n[299], &mgid), 0);
	assert_int_equal(fsw_node_groups(e->sw, n[299]), 1);
}

/*
 * New partitions: tables made again with the indexes of kept keys
 * unchanged (a new key takes a slot never used before one a removed key
 * left), PKEY_CHANGE on exactly the ports whose table changed, a QP on a
 * removed key's index left with no P_Key, and a deleted partition's
 * groups gone.
 */
static void test_reload(void **state)
{
	static const char conf2[] =
		"Default=0x7fff, ipoib : ALL=full ;\n"
		"q=0x8002, ipoib : full1=full, out=full ;\n"
		"p=0x8001 : full2=full, lim1=limited ;\n";
	static const char conf3[] =
		"Default=0x7fff, ipoib : ALL=full ;\n"
		"p=0x8001 : full2=full, lim1=limited ;\n";
	struct env *e = *state;
	struct prtn_conf pc2, pc3;
	struct fsp_port_info pi;
	struct fsw_qp *q;
	static char buf[65536];
	char err[256];
	unsigned int deleted = 0;

	q = slot_qp_create(e->sw, e->full1, 0x11, 1, 0, err, sizeof(err));
	assert_non_null(q);
	assert_int_equal(fsw_qp_pkey(q), 0x8001);
	assert_int_equal(prtn_conf_parse(conf2, sizeof(conf2) - 1, "t2", &pc2,
					 err, sizeof(err)), 0);
	npkey_events = 0;
	assert_int_equal(fsw_set_partitions(e->sw, &pc2, NULL), 3);
	assert_int_equal(npkey_events, 3);
	assert_true(got_pkey_event(e->full1));
	assert_true(got_pkey_event(e->lim2));
	assert_true(got_pkey_event(e->out));
	assert_false(got_pkey_event(e->full2));
	assert_false(got_pkey_event(e->lim1));
	pi = port_info(e->sw, e->full1);
	assert_int_equal(pi.npkeys, 3);
	assert_int_equal(pi.pkeys[0], 0xffff);
	assert_int_equal(pi.pkeys[1], 0);
	assert_int_equal(pi.pkeys[2], 0x8002);
	assert_int_equal(fsw_qp_pkey(q), 0);
	pi = port_info(e->sw, e->full2);
	assert_int_equal(pi.npkeys, 2);
	assert_int_equal(pi.pkeys[1], 0x8001);
	pi = port_info(e->sw, e->lim1);
	assert_int_equal(pi.pkeys[1], 0x0001);
	pi = port_info(e->sw, e->out);
	assert_int_equal(pi.npkeys, 2);
	assert_int_equal(pi.pkeys[1], 0x8002);
	fsw_ctl(e->sw, "groups", buf, sizeof(buf));
	assert_non_null(strstr(buf, "0x8002"));

	/* q goes: its group with it, its ports get PKEY_CHANGE */
	assert_int_equal(prtn_conf_parse(conf3, sizeof(conf3) - 1, "t3", &pc3,
					 err, sizeof(err)), 0);
	npkey_events = 0;
	assert_int_equal(fsw_set_partitions(e->sw, &pc3, &deleted), 2);
	assert_true(got_pkey_event(e->full1));
	assert_true(got_pkey_event(e->out));
	assert_int_equal(deleted, 1);
	fsw_ctl(e->sw, "groups", buf, sizeof(buf));
	assert_null(strstr(buf, "0x8002"));
	pi = port_info(e->sw, e->out);
	assert_int_equal(pi.npkeys, 1);
	/* the switch holds pc3 now; the setup's conf is freed at teardown */
	prtn_conf_free(&pc2);
	fsw_free(e->sw);
	e->sw = NULL;
	prtn_conf_free(&pc3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_identity, setup, teardown),
		cmocka_unit_test_setup_teardown(test_many_nodes, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_pkey_matrix, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_qkey_rules, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_multicast, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_spoofed_slid, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_reload, setup, teardown),
	};

	return cmocka_run_group_tests_name("fsw", tests, NULL, NULL);
}

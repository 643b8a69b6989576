// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* CM MADs: offsets checked byte by byte against IBTA vol. 1 tables
 * 106-113 (as the Linux kernel's ibta_vol1_c12.h lays them out), round
 * trips, and every way a MAD can be refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "fabric/cm_mad.h"

#define D(off)	(MAD_HDR_LEN + (off))	/* MAD data offset to MAD offset */

static const uint8_t priv92[CM_REQ_PRIV_LEN] = { 'p', 'r', 'i', 'v' };

static void sample_req(struct cm_msg *m)
{
	struct cm_req *r = &m->u.req;
	int i;

	memset(m, 0, sizeof(*m));
	m->hdr.tid = 0x0102030405060708ull;
	m->hdr.attr_id = CM_ATTR_REQ;
	r->local_comm_id = 0x11223344;
	r->service_id = 0x1000000000000123ull;
	r->local_ca_guid = 0x0002c90300a1b2c3ull;
	r->local_qkey = 0;
	r->local_qpn = 0x000abc;
	r->responder_resources = 4;
	r->initiator_depth = 8;
	r->remote_cm_resp_timeout = 20;
	r->transport = CM_TRANSPORT_RC;
	r->e2e_flow_ctrl = 1;
	r->starting_psn = 0xfedcba;
	r->local_cm_resp_timeout = 19;
	r->retry_count = 7;
	r->pkey = 0xffff;
	r->path_mtu = 5;
	r->rnr_retry_count = 6;
	r->max_cm_retries = 15;
	r->srq = 1;
	r->primary.local_lid = 0x0001;
	r->primary.remote_lid = 0x0002;
	for (i = 0; i < 16; i++) {
		r->primary.local_gid.raw[i] = (uint8_t)(0xa0 + i);
		r->primary.remote_gid.raw[i] = (uint8_t)(0xb0 + i);
	}
	r->primary.flow_label = 0xabcde;
	r->primary.packet_rate = 3;
	r->primary.traffic_class = 0x42;
	r->primary.hop_limit = 0xff;
	r->primary.sl = 9;
	r->primary.subnet_local = 1;
	r->primary.local_ack_timeout = 18;
	m->priv = priv92;
	m->priv_len = sizeof(priv92);
}

static void test_req_vector(void **state)
{
	uint8_t mad[MAD_LEN];
	struct cm_msg m, d;
	enum cm_mad_err err;

	(void)state;
	sample_req(&m);
	assert_int_equal(cm_mad_build(&m, mad, &err), 0);
	assert_int_equal(err, CM_MAD_OK);
	/* MAD header: base 1, class 7, version 2, Send, TID, attr 0x0010 */
	assert_int_equal(mad[0], 1);
	assert_int_equal(mad[1], 0x07);
	assert_int_equal(mad[2], 2);
	assert_int_equal(mad[3], 0x03);
	assert_int_equal(mad[8], 0x01);
	assert_int_equal(mad[15], 0x08);
	assert_int_equal(mad[16], 0x00);
	assert_int_equal(mad[17], 0x10);
	/* data by hand */
	assert_memory_equal(mad + D(0), "\x11\x22\x33\x44\0\0\0\0", 8);
	assert_memory_equal(mad + D(8), "\x10\0\0\0\0\0\x01\x23", 8);
	assert_memory_equal(mad + D(16), "\x00\x02\xc9\x03\x00\xa1\xb2\xc3", 8);
	assert_memory_equal(mad + D(32), "\x00\x0a\xbc\x04", 4);
	assert_memory_equal(mad + D(36), "\x00\x00\x00\x08", 4);
	/* Remote CM Response Timeout 20 << 3 | RC 0 << 1 | E2E 1 */
	assert_int_equal(mad[D(43)], 0xa1);
	assert_memory_equal(mad + D(44), "\xfe\xdc\xba", 3);
	assert_int_equal(mad[D(47)], 19 << 3 | 7);
	assert_memory_equal(mad + D(48), "\xff\xff", 2);
	assert_int_equal(mad[D(50)], 0x56);	/* MTU 5, RDC 0, RNR 6 */
	assert_int_equal(mad[D(51)], 0xf8);	/* retries 15, SRQ 1 */
	assert_memory_equal(mad + D(52), "\x00\x01\x00\x02\xa0\xa1", 6);
	assert_int_equal(mad[D(72)], 0xb0);
	assert_int_equal(mad[D(87)], 0xbf);
	/* Flow Label 0xabcde : 20, reserved 6, Packet Rate 3 : 6 */
	assert_memory_equal(mad + D(88), "\xab\xcd\xe0\x03", 4);
	assert_int_equal(mad[D(92)], 0x42);
	assert_int_equal(mad[D(93)], 0xff);
	assert_int_equal(mad[D(94)], 0x98);	/* SL 9, subnet local */
	assert_int_equal(mad[D(95)], 18 << 3);
	assert_int_equal(mad[D(96)], 0);	/* no alternate path */
	assert_memory_equal(mad + D(140), "priv", 4);
	assert_int_equal(mad[255], 0);

	assert_int_equal(cm_mad_parse(mad, sizeof(mad), &d), CM_MAD_OK);
	assert_int_equal(d.hdr.attr_id, CM_ATTR_REQ);
	assert_true(d.hdr.tid == 0x0102030405060708ull);
	assert_int_equal(d.u.req.local_comm_id, 0x11223344);
	assert_true(d.u.req.service_id == 0x1000000000000123ull);
	assert_true(d.u.req.local_ca_guid == 0x0002c90300a1b2c3ull);
	assert_int_equal(d.u.req.local_qpn, 0xabc);
	assert_int_equal(d.u.req.responder_resources, 4);
	assert_int_equal(d.u.req.initiator_depth, 8);
	assert_int_equal(d.u.req.remote_cm_resp_timeout, 20);
	assert_int_equal(d.u.req.e2e_flow_ctrl, 1);
	assert_int_equal(d.u.req.starting_psn, 0xfedcba);
	assert_int_equal(d.u.req.local_cm_resp_timeout, 19);
	assert_int_equal(d.u.req.retry_count, 7);
	assert_int_equal(d.u.req.path_mtu, 5);
	assert_int_equal(d.u.req.rnr_retry_count, 6);
	assert_int_equal(d.u.req.max_cm_retries, 15);
	assert_int_equal(d.u.req.srq, 1);
	assert_memory_equal(&d.u.req.primary, &m.u.req.primary,
			    sizeof(struct cm_path));
	assert_ptr_equal(d.priv, mad + D(140));
	assert_int_equal(d.priv_len, CM_REQ_PRIV_LEN);
	assert_memory_equal(d.priv, priv92, CM_REQ_PRIV_LEN);
	assert_int_equal(D(140) + CM_REQ_PRIV_LEN, MAD_LEN);
}

/* the other messages: fields at their offsets, and back */
static void test_other_vectors(void **state)
{
	static const uint8_t pd[] = "private";
	uint8_t mad[MAD_LEN];
	struct cm_msg m, d;
	enum cm_mad_err err;

	(void)state;
	memset(&m, 0, sizeof(m));
	m.hdr.attr_id = CM_ATTR_MRA;
	m.u.mra.local_comm_id = 1;
	m.u.mra.remote_comm_id = 0x11223344;
	m.u.mra.msg_mraed = CM_MSG_REP;
	m.u.mra.service_timeout = 17;
	m.priv = pd;
	m.priv_len = sizeof(pd);
	assert_int_equal(cm_mad_build(&m, mad, &err), 0);
	assert_int_equal(mad[17], 0x11);
	assert_memory_equal(mad + D(0), "\0\0\0\x01\x11\x22\x33\x44", 8);
	assert_int_equal(mad[D(8)], 0x40);
	assert_int_equal(mad[D(9)], 17 << 3);
	assert_memory_equal(mad + D(10), pd, sizeof(pd));
	assert_int_equal(cm_mad_parse(mad, sizeof(mad), &d), CM_MAD_OK);
	assert_int_equal(d.u.mra.msg_mraed, CM_MSG_REP);
	assert_int_equal(d.u.mra.service_timeout, 17);
	assert_int_equal(d.priv_len, CM_MRA_PRIV_LEN);

	memset(&m, 0, sizeof(m));
	m.hdr.attr_id = CM_ATTR_REJ;
	m.u.rej.local_comm_id = 2;
	m.u.rej.remote_comm_id = 0x11223344;
	m.u.rej.msg_rejected = CM_MSG_REQ;
	m.u.rej.reason = CM_REJ_INVALID_SERVICE_ID;
	m.u.rej.ari_len = 8;
	memcpy(m.u.rej.ari, "\x10\0\0\0\0\0\x01\x23", 8);
	m.priv = pd;
	m.priv_len = sizeof(pd);
	assert_int_equal(cm_mad_build(&m, mad, &err), 0);
	assert_int_equal(mad[17], 0x12);
	assert_int_equal(mad[D(8)], 0x00);
	assert_int_equal(mad[D(9)], 8 << 1);
	assert_memory_equal(mad + D(10), "\x00\x08\x10", 3);
	assert_memory_equal(mad + D(84), pd, sizeof(pd));
	assert_int_equal(cm_mad_parse(mad, sizeof(mad), &d), CM_MAD_OK);
	assert_int_equal(d.u.rej.reason, 8);
	assert_int_equal(d.u.rej.ari_len, 8);
	assert_memory_equal(d.u.rej.ari, m.u.rej.ari, 8);
	assert_string_equal(cm_rej_reason_name(d.u.rej.reason),
			    "invalid_service_id");
	assert_string_equal(cm_rej_reason_name(CM_REJ_STALE_CONN),
			    "stale_connection");
	assert_string_equal(cm_rej_reason_name(34), "unknown");
	assert_string_equal(cm_rej_reason_name(0xffff), "unknown");

	memset(&m, 0, sizeof(m));
	m.hdr.attr_id = CM_ATTR_REP;
	m.u.rep.local_comm_id = 0x55667788;
	m.u.rep.remote_comm_id = 0x11223344;
	m.u.rep.local_qkey = 0x12345678;
	m.u.rep.local_qpn = 0xdef;
	m.u.rep.starting_psn = 0x123456;
	m.u.rep.responder_resources = 1;
	m.u.rep.initiator_depth = 2;
	m.u.rep.target_ack_delay = 15;
	m.u.rep.failover_accepted = 0;
	m.u.rep.e2e_flow_ctrl = 1;
	m.u.rep.rnr_retry_count = 7;
	m.u.rep.srq = 1;
	m.u.rep.local_ca_guid = 0x0002c90300d4e5f6ull;
	assert_int_equal(cm_mad_build(&m, mad, &err), 0);
	assert_int_equal(mad[17], 0x13);
	assert_memory_equal(mad + D(8), "\x12\x34\x56\x78\0\x0d\xef\0", 8);
	assert_memory_equal(mad + D(20), "\x12\x34\x56\0\x01\x02", 6);
	assert_int_equal(mad[D(26)], 15 << 3 | 1);
	assert_int_equal(mad[D(27)], 0xf0);
	assert_memory_equal(mad + D(28), "\x00\x02\xc9\x03\x00\xd4\xe5\xf6", 8);
	assert_int_equal(cm_mad_parse(mad, sizeof(mad), &d), CM_MAD_OK);
	assert_int_equal(d.u.rep.local_qpn, 0xdef);
	assert_int_equal(d.u.rep.starting_psn, 0x123456);
	assert_int_equal(d.u.rep.target_ack_delay, 15);
	assert_int_equal(d.u.rep.rnr_retry_count, 7);
	assert_int_equal(d.u.rep.srq, 1);
	assert_ptr_equal(d.priv, mad + D(36));
	assert_int_equal(d.priv_len, CM_REP_PRIV_LEN);

	memset(&m, 0, sizeof(m));
	m.hdr.attr_id = CM_ATTR_DREQ;
	m.u.dreq.local_comm_id = 3;
	m.u.dreq.remote_comm_id = 4;
	m.u.dreq.remote_qpn = 0xabcdef;
	assert_int_equal(cm_mad_build(&m, mad, &err), 0);
	assert_memory_equal(mad + D(8), "\xab\xcd\xef\0", 4);
	assert_int_equal(cm_mad_parse(mad, sizeof(mad), &d), CM_MAD_OK);
	assert_int_equal(d.u.dreq.remote_qpn, 0xabcdef);
	assert_ptr_equal(d.priv, mad + D(12));

	memset(&m, 0, sizeof(m));
	m.hdr.attr_id = CM_ATTR_RTU;
	m.u.rtu.local_comm_id = 5;
	m.u.rtu.remote_comm_id = 6;
	assert_int_equal(cm_mad_build(&m, mad, &err), 0);
	assert_int_equal(cm_mad_parse(mad, sizeof(mad), &d), CM_MAD_OK);
	assert_int_equal(d.u.rtu.remote_comm_id, 6);
	assert_ptr_equal(d.priv, mad + D(8));
	m.hdr.attr_id = CM_ATTR_DREP;
	assert_int_equal(cm_mad_build(&m, mad, &err), 0);
	assert_int_equal(mad[17], 0x16);
	assert_int_equal(cm_mad_parse(mad, sizeof(mad), &d), CM_MAD_OK);
	assert_int_equal(d.u.rtu.local_comm_id, 5);
	assert_int_equal(d.priv_len, CM_DREP_PRIV_LEN);
}

static void set_priv(struct cm_msg *m, const uint8_t *p, size_t len)
{
	m->priv = p;
	m->priv_len = len;
}

static void test_priv_sizes(void **state)
{
	static const struct {
		uint16_t attr;
		size_t len;
	} v[] = {
		{ CM_ATTR_REQ, 92 }, { CM_ATTR_MRA, 222 }, { CM_ATTR_REJ, 148 },
		{ CM_ATTR_REP, 196 }, { CM_ATTR_RTU, 224 },
		{ CM_ATTR_DREQ, 220 }, { CM_ATTR_DREP, 224 },
	};
	static uint8_t big[256];
	uint8_t mad[MAD_LEN];
	struct cm_msg m;
	enum cm_mad_err err;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		assert_int_equal(cm_priv_max(v[i].attr), v[i].len);
		assert_string_not_equal(cm_attr_name(v[i].attr), "unknown");
		if (v[i].attr == CM_ATTR_REQ)
			sample_req(&m);
		else
			memset(&m, 0, sizeof(m));
		m.hdr.attr_id = v[i].attr;
		set_priv(&m, big, v[i].len);
		assert_int_equal(cm_mad_build(&m, mad, &err), 0);
		set_priv(&m, big, v[i].len + 1);
		assert_int_equal(cm_mad_build(&m, mad, &err), -1);
		assert_int_equal(err, CM_MAD_PRIV_TOO_LONG);
	}
	assert_int_equal(cm_priv_max(0x0001), 0);
	assert_int_equal(cm_priv_max(0x0017), 0);
}

static void test_rejects(void **state)
{
	uint8_t mad[MAD_LEN], bad[MAD_LEN];
	struct cm_msg m, d;
	enum cm_mad_err err;

	(void)state;
	sample_req(&m);
	assert_int_equal(cm_mad_build(&m, mad, &err), 0);
	assert_int_equal(cm_mad_parse(mad, MAD_LEN - 1, &d), CM_MAD_TRUNCATED);
	assert_int_equal(cm_mad_parse(mad, 0, &d), CM_MAD_TRUNCATED);
#define EDIT(off, val, want) do {					\
		memcpy(bad, mad, MAD_LEN);				\
		bad[off] = (val);					\
		assert_int_equal(cm_mad_parse(bad, MAD_LEN, &d), want);	\
	} while (0)
	EDIT(0, 2, CM_MAD_BAD_BASE_VERSION);
	EDIT(1, MAD_CLASS_SUBN_ADM, CM_MAD_BAD_CLASS);
	EDIT(2, 1, CM_MAD_BAD_CLASS_VERSION);
	EDIT(3, MAD_METHOD_GET, CM_MAD_BAD_METHOD);
	EDIT(17, 0x17, CM_MAD_BAD_ATTR);	/* LAP: not carried */
	EDIT(17, 0x01, CM_MAD_BAD_ATTR);	/* ClassPortInfo: no */
	EDIT(16, 0x01, CM_MAD_BAD_ATTR);
	EDIT(D(50), 0x06, CM_MAD_BAD_FIELD);	/* path MTU 0 */
	EDIT(D(50), 0x76, CM_MAD_BAD_FIELD);	/* path MTU 7 */
	EDIT(D(50), 0x16, CM_MAD_OK);		/* MTU 256 */

	/* the build refuses what the parse refuses, and more */
	sample_req(&m);
	m.u.req.local_qpn = 0x1000000;
	assert_int_equal(cm_mad_build(&m, mad, &err), -1);
	assert_int_equal(err, CM_MAD_BAD_FIELD);
	sample_req(&m);
	m.u.req.starting_psn = 0x1000000;
	assert_int_equal(cm_mad_build(&m, mad, &err), -1);
	sample_req(&m);
	m.u.req.primary.flow_label = 0x100000;
	assert_int_equal(cm_mad_build(&m, mad, &err), -1);
	sample_req(&m);
	m.u.req.alt.local_ack_timeout = 32;
	assert_int_equal(cm_mad_build(&m, mad, &err), -1);
	sample_req(&m);
	m.u.req.retry_count = 8;
	assert_int_equal(cm_mad_build(&m, mad, &err), -1);
	sample_req(&m);
	m.priv = NULL;
	assert_int_equal(cm_mad_build(&m, mad, &err), -1);
	assert_int_equal(err, CM_MAD_PRIV_TOO_LONG);
	m.hdr.attr_id = 0x0099;
	assert_int_equal(cm_mad_build(&m, mad, &err), -1);
	assert_int_equal(err, CM_MAD_BAD_ATTR);

	memset(&m, 0, sizeof(m));
	m.hdr.attr_id = CM_ATTR_MRA;
	m.u.mra.msg_mraed = 3;
	assert_int_equal(cm_mad_build(&m, mad, &err), -1);
	assert_int_equal(err, CM_MAD_BAD_FIELD);
	m.u.mra.msg_mraed = 0;
	assert_int_equal(cm_mad_build(&m, mad, &err), 0);
	EDIT(D(8), 0xc0, CM_MAD_BAD_FIELD);	/* message MRAed 3 */

	memset(&m, 0, sizeof(m));
	m.hdr.attr_id = CM_ATTR_REJ;
	m.u.rej.ari_len = CM_REJ_ARI_LEN + 1;
	assert_int_equal(cm_mad_build(&m, mad, &err), -1);
	assert_int_equal(err, CM_MAD_BAD_FIELD);
	m.u.rej.ari_len = CM_REJ_ARI_LEN;
	assert_int_equal(cm_mad_build(&m, mad, &err), 0);
	EDIT(D(9), (CM_REJ_ARI_LEN + 1) << 1, CM_MAD_BAD_FIELD);
	EDIT(D(9), 0xfe, CM_MAD_BAD_FIELD);
	EDIT(D(8), 0xc0, CM_MAD_BAD_FIELD);	/* message rejected 3 */
#undef EDIT
	assert_string_equal(cm_mad_strerror(CM_MAD_PRIV_TOO_LONG),
			    "private_data_too_long");
	assert_string_equal(cm_mad_strerror(CM_MAD_ERR_MAX), "unknown");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_req_vector),
		cmocka_unit_test(test_other_vectors),
		cmocka_unit_test(test_priv_sizes),
		cmocka_unit_test(test_rejects),
	};

	return cmocka_run_group_tests_name("cm_mad", tests, NULL, NULL);
}

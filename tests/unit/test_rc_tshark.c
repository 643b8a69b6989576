// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * An outside oracle for the RC and CM codecs: a capture of packets our
 * encoders built (RC sends, RDMA writes, reads, ACK/NAKs; CM MADs on QP1
 * in UD packets) decodes in tshark with the values we meant, as the
 * opcodes and messages we meant, and without malformed packets or errors.
 * Skipped when tshark is not installed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/time.h>
#include <cmocka.h>

#include "fabric/cm_mad.h"
#include "fabric/ib_rc.h"
#include "subnet/pcap.h"
#include "tests/unit/tshark_cap.h"

#define NPKT	32

/* the fields asked of tshark, in this order */
static const char *const fields[] = {
	"infiniband.bth.opcode",	/* 0 */
	"infiniband.bth.psn",
	"infiniband.reth.va",
	"infiniband.reth.r_key",
	"infiniband.reth.dmalen",
	"infiniband.aeth.syndrome",	/* 5 */
	"infiniband.aeth.msn",
	"infiniband.bth.destqp",
	"infiniband.cm.req",		/* REQ Local Communication ID */
	"infiniband.cm.req.serviceid",
	"infiniband.cm.req.localqpn",	/* 10 */
	"infiniband.cm.req.startpsn",
	"infiniband.cm.req.pppmtu",
	"infiniband.cm.req.prim_locallid",
	"infiniband.cm.rep",		/* REP Local Communication ID */
	"infiniband.cm.rep.remotecommid",	/* 15 */
	"infiniband.cm.rep.localqpn",
	"infiniband.cm.rep.startpsn",
	"infiniband.cm.rtu.localcommid",
	"infiniband.cm.rej.reason",
	"infiniband.cm.rej.remotecommid",	/* 20 */
	"infiniband.cm.dreq.remotecommid",
	"infiniband.cm.req.remoteqpneecn",	/* DREQ's remote QPN */
	"infiniband.cm.drsp.localcommid",
	"infiniband.mad.attributeid",
	"infiniband.mad.mgmtclass",	/* 25 */
	"infiniband.cm.req.localcaguid",
	"infiniband.cm.rep.localcaguid",
	"infiniband.cm.req.prim_sl",
	"infiniband.immdt",		/* bytes: hex without 0x */
};
#define F_IMMDT	29
#define NFIELDS	(sizeof(fields) / sizeof(fields[0]))

struct want {
	unsigned int field;
	unsigned long long value;
};

struct pkt {
	uint8_t buf[IB_MAX_PKT];
	size_t len;
	struct want want[10];
};

static struct pkt pkts[NPKT];
static unsigned int npkts;
static uint8_t payload[4096];

static struct pkt *rc_pkt(uint8_t op, uint32_t psn, size_t plen,
			  struct ib_rc *r)
{
	struct pkt *p = &pkts[npkts++];
	enum ib_rc_err err;

	r->lrh.dlid = 2;
	r->lrh.slid = 1;
	r->bth.opcode = op;
	r->bth.pkey = 0xffff;
	r->bth.destqp = 0x000022;
	r->bth.psn = psn;
	r->payload = payload;
	r->payload_len = plen;
	p->len = ib_rc_build(r, 256, p->buf, sizeof(p->buf), &err);
	assert_int_equal(err, IB_RC_OK);
	p->want[0] = (struct want){ 0, op };
	p->want[1] = (struct want){ 1, psn };
	return p;
}

static void cm_pkt(const struct cm_msg *m, const struct want *w, size_t nw)
{
	struct pkt *p = &pkts[npkts++];
	uint8_t mad[MAD_LEN];
	enum cm_mad_err err;
	struct ib_ud u;

	assert_int_equal(cm_mad_build(m, mad, &err), 0);
	memset(&u, 0, sizeof(u));
	u.lrh.dlid = 2;
	u.lrh.slid = 1;
	u.bth.pkey = 0xffff;
	u.bth.destqp = 1;
	u.deth.qkey = 0x80010000;
	u.deth.srcqp = 1;
	u.payload = mad;
	u.payload_len = MAD_LEN;
	p->len = ib_ud_build(&u, p->buf, sizeof(p->buf));
	assert_int_not_equal(p->len, 0);
	p->want[0] = (struct want){ 0, IB_OP_UD_SEND_ONLY };
	p->want[1] = (struct want){ 24, m->hdr.attr_id };
	p->want[2] = (struct want){ 25, MAD_CLASS_CM };
	if (nw)
		memcpy(p->want + 3, w, nw * sizeof(*w));
}

static void build_all(void)
{
	struct ib_rc r;
	struct cm_msg m;
	struct pkt *p;

	npkts = 0;
	memset(&r, 0, sizeof(r));
	rc_pkt(IB_OP_RC_SEND_FIRST, 0xfffffe, 256, &r);
	memset(&r, 0, sizeof(r));
	rc_pkt(IB_OP_RC_SEND_MIDDLE, 0xffffff, 256, &r);
	memset(&r, 0, sizeof(r));
	r.bth.ackreq = 1;
	rc_pkt(IB_OP_RC_SEND_LAST, 0, 13, &r);

	memset(&r, 0, sizeof(r));
	r.reth.va = 0x00007f0012345000ull;
	r.reth.rkey = 0xcafebeef;
	r.reth.dma_len = 100;
	p = rc_pkt(IB_OP_RC_WRITE_ONLY, 1, 100, &r);
	p->want[2] = (struct want){ 2, 0x00007f0012345000ull };
	p->want[3] = (struct want){ 3, 0xcafebeef };
	p->want[4] = (struct want){ 4, 100 };

	memset(&r, 0, sizeof(r));
	r.reth.va = 0x1000;
	r.reth.rkey = 0x1234;
	r.reth.dma_len = 7;
	r.imm = 0xdeadbeef;
	p = rc_pkt(IB_OP_RC_WRITE_ONLY_IMM, 2, 7, &r);
	p->want[2] = (struct want){ 2, 0x1000 };
	p->want[3] = (struct want){ 3, 0x1234 };
	p->want[4] = (struct want){ 4, 7 };
	p->want[5] = (struct want){ 29, 0xdeadbeef };

	memset(&r, 0, sizeof(r));
	r.reth.va = 0x2000;
	r.reth.rkey = 0x5678;
	r.reth.dma_len = 200;
	p = rc_pkt(IB_OP_RC_READ_REQUEST, 3, 0, &r);
	p->want[2] = (struct want){ 2, 0x2000 };
	p->want[3] = (struct want){ 3, 0x5678 };
	p->want[4] = (struct want){ 4, 200 };

	memset(&r, 0, sizeof(r));
	r.aeth.msn = 4;
	r.aeth.value = 5;
	p = rc_pkt(IB_OP_RC_READ_RESP_ONLY, 3, 200, &r);
	p->want[2] = (struct want){ 5, 0x05 };
	p->want[3] = (struct want){ 6, 4 };

	memset(&r, 0, sizeof(r));
	r.aeth.value = IB_AETH_CREDIT_INVALID;
	r.aeth.msn = 0xabcdef;
	p = rc_pkt(IB_OP_RC_ACK, 2, 0, &r);
	p->want[2] = (struct want){ 5, 0x1f };
	p->want[3] = (struct want){ 6, 0xabcdef };

	memset(&r, 0, sizeof(r));
	r.aeth.type = IB_AETH_NAK;
	r.aeth.value = IB_NAK_PSN_SEQ_ERR;
	r.aeth.msn = 5;
	p = rc_pkt(IB_OP_RC_ACK, 4, 0, &r);
	p->want[2] = (struct want){ 5, 0x60 };
	p->want[3] = (struct want){ 6, 5 };

	memset(&r, 0, sizeof(r));
	r.aeth.type = IB_AETH_RNR_NAK;
	r.aeth.value = 14;
	r.aeth.msn = 6;
	p = rc_pkt(IB_OP_RC_ACK, 4, 0, &r);
	p->want[2] = (struct want){ 5, 0x2e };

	memset(&m, 0, sizeof(m));
	m.hdr.attr_id = CM_ATTR_REQ;
	m.hdr.tid = 0x42;
	m.u.req.local_comm_id = 0x11223344;
	m.u.req.service_id = 0x1000000000000123ull;
	m.u.req.local_ca_guid = 0x0002c90300a1b2c3ull;
	m.u.req.local_qpn = 0x000022;
	m.u.req.responder_resources = 4;
	m.u.req.initiator_depth = 4;
	m.u.req.remote_cm_resp_timeout = 20;
	m.u.req.starting_psn = 0xfffffe;
	m.u.req.local_cm_resp_timeout = 20;
	m.u.req.retry_count = 7;
	m.u.req.pkey = 0xffff;
	m.u.req.path_mtu = 1;
	m.u.req.rnr_retry_count = 7;
	m.u.req.max_cm_retries = 15;
	m.u.req.primary.local_lid = 1;
	m.u.req.primary.remote_lid = 2;
	m.u.req.primary.local_gid.raw[0] = 0xfe;
	m.u.req.primary.local_gid.raw[1] = 0x80;
	m.u.req.primary.remote_gid.raw[0] = 0xfe;
	m.u.req.primary.remote_gid.raw[1] = 0x80;
	m.u.req.primary.packet_rate = 3;
	m.u.req.primary.hop_limit = 0xff;
	m.u.req.primary.sl = 5;
	m.u.req.primary.subnet_local = 1;
	m.u.req.primary.local_ack_timeout = 18;
	cm_pkt(&m, (const struct want[]){ { 8, 0x11223344 },
		   { 9, 0x1000000000000123ull }, { 10, 0x22 },
		   { 11, 0xfffffe }, { 12, 1 }, { 13, 1 },
		   { 26, 0x0002c90300a1b2c3ull }, { 28, 5 } }, 8);

	memset(&m, 0, sizeof(m));
	m.hdr.attr_id = CM_ATTR_MRA;
	m.u.mra.local_comm_id = 0x55667788;
	m.u.mra.remote_comm_id = 0x11223344;
	m.u.mra.service_timeout = 20;
	cm_pkt(&m, NULL, 0);

	memset(&m, 0, sizeof(m));
	m.hdr.attr_id = CM_ATTR_REP;
	m.u.rep.local_comm_id = 0x55667788;
	m.u.rep.remote_comm_id = 0x11223344;
	m.u.rep.local_qpn = 0x000033;
	m.u.rep.starting_psn = 0x123456;
	m.u.rep.responder_resources = 4;
	m.u.rep.initiator_depth = 4;
	m.u.rep.rnr_retry_count = 7;
	m.u.rep.local_ca_guid = 0x0002c90300d4e5f6ull;
	cm_pkt(&m, (const struct want[]){ { 14, 0x55667788 },
		   { 15, 0x11223344 }, { 16, 0x33 }, { 17, 0x123456 },
		   { 27, 0x0002c90300d4e5f6ull } }, 5);

	memset(&m, 0, sizeof(m));
	m.hdr.attr_id = CM_ATTR_RTU;
	m.u.rtu.local_comm_id = 0x11223344;
	m.u.rtu.remote_comm_id = 0x55667788;
	cm_pkt(&m, (const struct want[]){ { 18, 0x11223344 } }, 1);

	memset(&m, 0, sizeof(m));
	m.hdr.attr_id = CM_ATTR_REJ;
	m.u.rej.remote_comm_id = 0x11223344;
	m.u.rej.msg_rejected = CM_MSG_REQ;
	m.u.rej.reason = CM_REJ_INVALID_SERVICE_ID;
	cm_pkt(&m, (const struct want[]){ { 19, CM_REJ_INVALID_SERVICE_ID },
		   { 20, 0x11223344 } }, 2);

	memset(&m, 0, sizeof(m));
	m.hdr.attr_id = CM_ATTR_DREQ;
	m.u.dreq.local_comm_id = 0x11223344;
	m.u.dreq.remote_comm_id = 0x55667788;
	m.u.dreq.remote_qpn = 0x33;
	cm_pkt(&m, (const struct want[]){ { 21, 0x55667788 }, { 22, 0x33 } },
	       2);

	memset(&m, 0, sizeof(m));
	m.hdr.attr_id = CM_ATTR_DREP;
	m.u.rtu.local_comm_id = 0x55667788;
	m.u.rtu.remote_comm_id = 0x11223344;
	cm_pkt(&m, (const struct want[]){ { 23, 0x55667788 } }, 1);
}

static const uint8_t *frame(unsigned int i, size_t *len)
{
	*len = pkts[i].len;
	return pkts[i].buf;
}

static void test_tshark_decodes_rc_and_cm(void **state)
{
	char path[] = "/tmp/ibgw_rc_tshark.XXXXXX", cmd[2048], line[4096];
	char val[128];
	unsigned int i, j, lines = 0;
	FILE *f;
	int fd;

	(void)state;
	if (system("command -v tshark >/dev/null 2>&1") != 0)
		skip();
	for (i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(i * 13);
	build_all();
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	tcap_write(path, frame, npkts);

	f = tcap_fields(path, fields, NFIELDS);
	while (fgets(line, sizeof(line), f)) {
		struct pkt *p;

		if (lines >= npkts)
			fail_msg("tshark: extra line '%s'", line);
		p = &pkts[lines++];
		for (j = 0; j < 10 && (j < 2 || p->want[j].field); j++) {
			unsigned long long v;
			char *end;

			tcap_field(line, p->want[j].field, val, sizeof(val));
			v = strtoull(val, &end,
				     p->want[j].field == F_IMMDT ? 16 : 0);
			if (!val[0] || *end || v != p->want[j].value)
				fail_msg("packet %u %s: tshark '%s', want "
					 "0x%llx", lines,
					 fields[p->want[j].field], val,
					 p->want[j].value);
		}
	}
	assert_int_equal(pclose(f), 0);
	assert_int_equal(lines, npkts);

	/* nothing malformed, no expert errors, none anywhere in -V */
	snprintf(cmd, sizeof(cmd),
		 "tshark -r %s -Y '_ws.malformed || "
		 "_ws.expert.severity >= \"error\"' 2>/dev/null | wc -l", path);
	f = popen(cmd, "r");
	assert_non_null(f);
	assert_non_null(fgets(line, sizeof(line), f));
	pclose(f);
	assert_string_equal(line, "0\n");
	snprintf(cmd, sizeof(cmd),
		 "tshark -r %s -V 2>/dev/null | grep -ci malformed", path);
	f = popen(cmd, "r");
	assert_non_null(f);
	assert_non_null(fgets(line, sizeof(line), f));
	pclose(f);
	assert_string_equal(line, "0\n");
	if (!getenv("IBGW_KEEP_CAPTURE"))
		unlink(path);
	else
		print_message("capture kept in %s\n", path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tshark_decodes_rc_and_cm),
	};

	return cmocka_run_group_tests_name("rc_tshark", tests, NULL, NULL);
}

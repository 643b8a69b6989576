// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * An outside oracle for the SDP codecs: a capture of an SDP connection as
 * our encoders build it (a CM REQ to service ID 0x10000 | port carrying
 * our Hello, the REP carrying our HelloAck, then RC SENDs of the message
 * layer's BSDHs: Data with a payload, a credit-only Data, DisConn each
 * way) decodes in tshark's infiniband_sdp dissector with the values we
 * meant, and nothing is malformed.  tshark finds SDP by the REQ's service
 * ID (REFERENCE.md): no -d, no preference.  Skipped without tshark.
 */
#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <cmocka.h>

#include "fabric/cm_mad.h"
#include "fabric/ib_rc.h"
#include "subnet/pcap.h"
#include "tests/unit/tshark_cap.h"
#include "ulp/sdp/sdp_conn.h"
#include "ulp/sdp/sdp_wire.h"
#include "tests/unit/vectors.h"

#define NPKT		8
#define NWANT		16
#define PORT		5001
#define LID_A		1
#define LID_B		2
#define QPN_A		0x000022
#define QPN_B		0x000033
#define RCVSZ		(32768 + SDP_BSDH_LEN)
/* a credit-only update, as a display filter */
#define CREDIT_ONLY	"infiniband_sdp.bsdh.mid == 0xff && " \
			"infiniband_sdp.bsdh.len == 16"

/* the fields asked of tshark, in this order */
enum {
	F_OPCODE, F_SERVICEID, F_MID, F_FLAGS, F_BUFS, F_LEN, F_MSEQ,
	F_MSEQACK, F_MAJV, F_MINV, F_IPV, F_CAP, F_MAXADV, F_DESREM,
	F_LOCALRCV, F_PORT, F_SRC_IP, F_DST_IP, F_PROTOCOLS, NFIELDS
};
static const char *const fields[NFIELDS] = {
	[F_OPCODE] = "infiniband.bth.opcode",
	[F_SERVICEID] = "infiniband.cm.req.serviceid",
	[F_MID] = "infiniband_sdp.bsdh.mid",
	[F_FLAGS] = "infiniband_sdp.bsdh.flags",
	[F_BUFS] = "infiniband_sdp.bsdh.bufs",
	[F_LEN] = "infiniband_sdp.bsdh.len",
	[F_MSEQ] = "infiniband_sdp.bsdh.mseq",
	[F_MSEQACK] = "infiniband_sdp.bsdh.mseqack",
	[F_MAJV] = "infiniband_sdp.hh.majv",
	[F_MINV] = "infiniband_sdp.hh.minv",
	[F_IPV] = "infiniband_sdp.hh.ipv",
	[F_CAP] = "infiniband_sdp.hh.cap",
	[F_MAXADV] = "infiniband_sdp.hh.maxadverts",
	[F_DESREM] = "infiniband_sdp.hh.desremrcvsz",
	[F_LOCALRCV] = "infiniband_sdp.hh.localrcvsz",
	[F_PORT] = "infiniband_sdp.hh.localport",
	[F_SRC_IP] = "infiniband_sdp.hh.src_ip",
	[F_DST_IP] = "infiniband_sdp.hh.dst_ip",
	[F_PROTOCOLS] = "frame.protocols",
};

struct want {
	unsigned int field;
	unsigned long long value;
};

struct pkt {
	uint8_t buf[IB_MAX_PKT];
	size_t len;
	struct want want[NWANT];
	unsigned int nwant;
	int sdp;		/* SDP must be among the frame's protocols */
};

static struct pkt pkts[NPKT];
static unsigned int npkts;

static void want(struct pkt *p, unsigned int field, unsigned long long v)
{
	assert_true(p->nwant < NWANT);
	p->want[p->nwant++] = (struct want){ field, v };
}

/* the BSDH fields as our encoder was given them */
static void want_bsdh(struct pkt *p, const struct sdp_bsdh *h)
{
	want(p, F_MID, h->mid);
	want(p, F_FLAGS, h->flags);
	want(p, F_BUFS, h->bufs);
	want(p, F_LEN, h->len);
	want(p, F_MSEQ, h->mseq);
	want(p, F_MSEQACK, h->mseq_ack);
}

static struct pkt *cm_pkt(struct cm_msg *m, uint16_t slid, uint16_t dlid)
{
	struct pkt *p = &pkts[npkts++];
	uint8_t mad[MAD_LEN];
	enum cm_mad_err err;
	struct ib_ud u;

	memset(p, 0, sizeof(*p));
	m->hdr.tid = 0x5344500000000001ull;	/* REQ and REP share it */
	assert_int_equal(cm_mad_build(m, mad, &err), 0);
	memset(&u, 0, sizeof(u));
	u.lrh.dlid = dlid;
	u.lrh.slid = slid;
	u.bth.pkey = 0xffff;
	u.bth.destqp = 1;
	u.deth.qkey = 0x80010000;
	u.deth.srcqp = 1;
	u.payload = mad;
	u.payload_len = MAD_LEN;
	p->len = ib_ud_build(&u, p->buf, sizeof(p->buf));
	assert_int_not_equal(p->len, 0);
	want(p, F_OPCODE, IB_OP_UD_SEND_ONLY);
	p->sdp = 1;
	return p;
}

/* an RC SEND ONLY of one SDP message */
static void rc_pkt(const uint8_t *msg, size_t len, uint16_t slid,
		   uint16_t dlid, uint32_t destqp, uint32_t psn)
{
	struct pkt *p = &pkts[npkts++];
	struct sdp_bsdh h;
	enum ib_rc_err err;
	struct ib_rc r;

	memset(p, 0, sizeof(*p));
	memset(&r, 0, sizeof(r));
	r.lrh.dlid = dlid;
	r.lrh.slid = slid;
	r.bth.opcode = IB_OP_RC_SEND_ONLY;
	r.bth.pkey = 0xffff;
	r.bth.destqp = destqp;
	r.bth.psn = psn;
	r.bth.ackreq = 1;
	r.payload = msg;
	r.payload_len = len;
	p->len = ib_rc_build(&r, 4096, p->buf, sizeof(p->buf), &err);
	assert_int_equal(err, IB_RC_OK);
	/* what we check tshark against is what our decoder reads back, and
	 * the decoder is vector-tested on its own (test_sdp_wire) */
	assert_int_equal(sdp_bsdh_get(msg, len, &h), 0);
	want(p, F_OPCODE, IB_OP_RC_SEND_ONLY);
	want_bsdh(p, &h);
	p->sdp = 1;
}

static struct sdp_hello hello;
static struct sdp_hello_ack hello_ack;

static void build_all(void)
{
	static uint8_t req_priv[SDP_HELLO_LEN], rep_priv[SDP_HELLO_ACK_LEN];
	static uint8_t msg[4][RCVSZ];
	struct in_addr src = tv_ip4("10.1.0.2"), dst = tv_ip4("10.1.0.1");
	struct sdp_conn a, b;
	struct cm_msg m;
	struct pkt *p;
	int n;

	npkts = 0;
	/* REQ A -> B, Hello: 16 buffers posted */
	memset(&hello, 0, sizeof(hello));
	hello.bsdh.bufs = 16;
	hello.majv_minv = SDP_MAJV_MINV;
	hello.ipv = 4;
	hello.caps = 0;
	hello.max_adverts = 4;
	hello.desremrcvsz = RCVSZ;
	hello.localrcvsz = RCVSZ;
	hello.port = 40001;
	inet_addr_v4(&hello.src, &src);
	inet_addr_v4(&hello.dst, &dst);
	assert_int_equal(sdp_hello_build(req_priv, sizeof(req_priv), &hello),
			 SDP_HELLO_LEN);

	memset(&m, 0, sizeof(m));
	m.hdr.attr_id = CM_ATTR_REQ;
	m.u.req.local_comm_id = 0x0a0b0c0d;
	m.u.req.service_id = SDP_SID(PORT);
	m.u.req.local_ca_guid = 0x0002c90300a1b2c3ull;
	m.u.req.local_qpn = QPN_A;
	m.u.req.responder_resources = 4;
	m.u.req.initiator_depth = 4;
	m.u.req.remote_cm_resp_timeout = 20;
	m.u.req.starting_psn = 0x000100;
	m.u.req.local_cm_resp_timeout = 20;
	m.u.req.retry_count = 7;
	m.u.req.pkey = 0xffff;
	m.u.req.path_mtu = 5;
	m.u.req.rnr_retry_count = 7;
	m.u.req.max_cm_retries = 15;
	m.u.req.primary.local_lid = LID_A;
	m.u.req.primary.remote_lid = LID_B;
	m.u.req.primary.local_gid.raw[0] = 0xfe;
	m.u.req.primary.local_gid.raw[1] = 0x80;
	m.u.req.primary.remote_gid.raw[0] = 0xfe;
	m.u.req.primary.remote_gid.raw[1] = 0x80;
	m.u.req.primary.packet_rate = 3;
	m.u.req.primary.hop_limit = 0xff;
	m.u.req.primary.subnet_local = 1;
	m.u.req.primary.local_ack_timeout = 18;
	m.priv = req_priv;
	m.priv_len = sizeof(req_priv);
	p = cm_pkt(&m, LID_A, LID_B);
	want(p, F_SERVICEID, 0x10000 | PORT);
	want_bsdh(p, &(struct sdp_bsdh){ .mid = SDP_MID_HELLO, .bufs = 16,
					 .len = SDP_HELLO_LEN });
	want(p, F_MAJV, 2);
	want(p, F_MINV, 2);
	want(p, F_IPV, 4);
	want(p, F_CAP, 0);
	want(p, F_MAXADV, 4);
	want(p, F_DESREM, RCVSZ);
	want(p, F_LOCALRCV, RCVSZ);
	want(p, F_PORT, 40001);

	/* REP B -> A, HelloAck: 8 buffers posted */
	memset(&hello_ack, 0, sizeof(hello_ack));
	hello_ack.bsdh.bufs = 8;
	hello_ack.majv_minv = SDP_MAJV_MINV;
	hello_ack.ext_max_adverts = 1;
	hello_ack.actrcvsz = RCVSZ;
	assert_int_equal(sdp_hello_ack_build(rep_priv, sizeof(rep_priv),
					     &hello_ack), SDP_HELLO_ACK_LEN);
	memset(&m, 0, sizeof(m));
	m.hdr.attr_id = CM_ATTR_REP;
	m.u.rep.local_comm_id = 0x01020304;
	m.u.rep.remote_comm_id = 0x0a0b0c0d;
	m.u.rep.local_qpn = QPN_B;
	m.u.rep.starting_psn = 0x000200;
	m.u.rep.responder_resources = 4;
	m.u.rep.initiator_depth = 4;
	m.u.rep.rnr_retry_count = 7;
	m.u.rep.local_ca_guid = 0x0002c90300d4e5f6ull;
	m.priv = rep_priv;
	m.priv_len = sizeof(rep_priv);
	p = cm_pkt(&m, LID_B, LID_A);
	want_bsdh(p, &(struct sdp_bsdh){ .mid = SDP_MID_HELLO_ACK, .bufs = 8,
					 .len = SDP_HELLO_ACK_LEN });

	/* the message layer on each side, from the Hello and HelloAck */
	sdp_conn_init(&a, RCVSZ, RCVSZ, 16, 8);
	sdp_conn_init(&b, RCVSZ, RCVSZ, 8, 16);

	/* A -> B: Data, 1000 bytes, urgent */
	memset(msg[0] + SDP_BSDH_LEN, 'x', 1000);
	n = sdp_conn_tx(&a, msg[0], SDP_MID_DATA, SDP_FLAG_OOB_PRES, 1000);
	assert_int_equal(n, 1016);
	rc_pkt(msg[0], (size_t)n, LID_A, LID_B, QPN_B, 0x100);
	/* B -> A: a credit-only update */
	assert_int_equal(sdp_conn_rx(&b, msg[0], (size_t)n,
				     &(struct sdp_rx){ 0 }), 0);
	sdp_conn_rx_posted(&b, 1);
	n = sdp_conn_tx(&b, msg[1], SDP_MID_DATA, 0, 0);
	assert_int_equal(n, 16);
	rc_pkt(msg[1], (size_t)n, LID_B, LID_A, QPN_A, 0x200);
	/* A -> B: DisConn */
	assert_int_equal(sdp_conn_rx(&a, msg[1], 16, &(struct sdp_rx){ 0 }),
			 0);
	n = sdp_conn_tx(&a, msg[2], SDP_MID_DISCONN, 0, 0);
	assert_int_equal(n, 16);
	rc_pkt(msg[2], (size_t)n, LID_A, LID_B, QPN_B, 0x101);
	/* B -> A: DisConn */
	assert_int_equal(sdp_conn_rx(&b, msg[2], 16, &(struct sdp_rx){ 0 }),
			 0);
	n = sdp_conn_tx(&b, msg[3], SDP_MID_DISCONN, 0, 0);
	assert_int_equal(n, 16);
	rc_pkt(msg[3], (size_t)n, LID_B, LID_A, QPN_A, 0x201);
	assert_int_equal(sdp_conn_rx(&a, msg[3], 16, &(struct sdp_rx){ 0 }),
			 0);
	assert_true(sdp_conn_closed(&a) && sdp_conn_closed(&b));
}

static const uint8_t *frame(unsigned int i, size_t *len)
{
	*len = pkts[i].len;
	return pkts[i].buf;
}

/* tshark shows the Hello's addresses as IPv6: compare the 16 bytes */
static void check_ip(const char *line, unsigned int field,
		     const struct in_addr *v4)
{
	uint8_t want16[16] = { 0 }, got[16];
	char val[128];

	memcpy(want16 + 12, &v4->s_addr, 4);
	tcap_field(line, field, val, sizeof(val));
	if (inet_pton(AF_INET6, val, got) != 1 ||
	    memcmp(got, want16, 16) != 0)
		fail_msg("%s: tshark '%s'", fields[field], val);
}

static void check_line(const char *line, unsigned int i)
{
	const struct pkt *p = &pkts[i];
	unsigned int j;
	char val[512];

	for (j = 0; j < p->nwant; j++) {
		unsigned long long v;
		char *end;

		tcap_field(line, p->want[j].field, val, sizeof(val));
		v = strtoull(val, &end, 0);
		if (!val[0] || *end || v != p->want[j].value)
			fail_msg("packet %u %s: tshark '%s', want 0x%llx",
				 i + 1, fields[p->want[j].field], val,
				 p->want[j].value);
	}
	tcap_field(line, F_PROTOCOLS, val, sizeof(val));
	if (p->sdp && !strstr(val, "infiniband_sdp"))
		fail_msg("packet %u not SDP: %s", i + 1, val);
	if (i == 0) {
		struct in_addr s = tv_ip4("10.1.0.2"), d = tv_ip4("10.1.0.1");

		check_ip(line, F_SRC_IP, &s);
		check_ip(line, F_DST_IP, &d);
	}
}

static void count_lines(const char *cmd, const char *want_out)
{
	char line[256];
	FILE *f = popen(cmd, "r");

	assert_non_null(f);
	assert_non_null(fgets(line, sizeof(line), f));
	pclose(f);
	if (strcmp(line, want_out))
		fail_msg("%s: %s", cmd, line);
}

static void test_tshark_decodes_sdp(void **state)
{
	char path[] = "/tmp/ibgw_sdp_tshark.XXXXXX", cmd[2048], line[8192];
	unsigned int lines = 0;
	FILE *f;
	int fd;

	(void)state;
	if (system("command -v tshark >/dev/null 2>&1") != 0)
		skip();
	build_all();
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	tcap_write(path, frame, npkts);

	f = tcap_fields(path, fields, NFIELDS);
	while (fgets(line, sizeof(line), f)) {
		if (lines >= npkts)
			fail_msg("tshark: extra line '%s'", line);
		check_line(line, lines++);
	}
	assert_int_equal(pclose(f), 0);
	assert_int_equal(lines, npkts);

	/*
	 * Nothing malformed, no expert errors, none anywhere in -V, but for
	 * tshark's own fault: its SDP dissector adds the Data payload item
	 * (infiniband_sdp.Data, length -1) even when no byte follows the
	 * BSDH, and 4.0 throws at the end of the buffer.  A 16-byte Data is
	 * the protocol's credit-only update (OFED sends them all the time),
	 * so such a frame must be malformed that way only: its BSDH was
	 * decoded in full above, and exactly those frames are.
	 */
	snprintf(cmd, sizeof(cmd),
		 "tshark -r %s -Y '(_ws.malformed || "
		 "_ws.expert.severity >= \"error\") && !(%s)' 2>/dev/null "
		 "| wc -l", path, CREDIT_ONLY);
	count_lines(cmd, "0\n");
	snprintf(cmd, sizeof(cmd),
		 "tshark -r %s -Y '_ws.malformed && (%s)' 2>/dev/null | wc -l",
		 path, CREDIT_ONLY);
	count_lines(cmd, "1\n");
	snprintf(cmd, sizeof(cmd),
		 "tshark -r %s -Y '!(%s)' -V 2>/dev/null | grep -ci malformed",
		 path, CREDIT_ONLY);
	count_lines(cmd, "0\n");
	/* every frame is SDP's, as the Info column says */
	snprintf(cmd, sizeof(cmd),
		 "tshark -r %s 2>/dev/null | grep -c 'SDP'", path);
	snprintf(line, sizeof(line), "%u\n", npkts);
	count_lines(cmd, line);
	if (!getenv("IBGW_KEEP_CAPTURE"))
		unlink(path);
	else
		print_message("capture kept in %s\n", path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tshark_decodes_sdp),
	};

	return cmocka_run_group_tests_name("sdp_tshark", tests, NULL, NULL);
}

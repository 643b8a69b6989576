// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * SA MAD codec.  The byte vectors below are written out by hand from the
 * IBTA layouts (13.4.3 MAD header, 15.2 SA header and attributes), not
 * produced by the encoder, so a wrong offset in the codec shows up here.
 */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "fabric/sa_mad.h"
#include "tests/unit/vectors.h"

static void gid_hex(const char *s, union fab_gid *g)
{
	assert_int_equal(tv_unhex(s, g->raw, sizeof(g->raw)), 16);
}

/* ff12:401b:ffff::ffff:ffff, the IPoIB broadcast group of P_Key ffff */
#define BCAST_MGID	"ff12401b ffff0000 00000000 ffffffff"
#define PORT_GID	"fe800000 00000000 0002c903 00012345"
#define PEER_GID	"fe800000 00000000 0002c903 00012346"

/*
 * MCMemberRecord join as Linux IPoIB sends it (ipoib_mcast_join through
 * ib_sa_mcmember_rec_query): SubnAdmSet, mask MGID|PortGID|P_Key|
 * JoinState = 0x10083, JoinState 1 (full member), scope left 0 in the
 * record (it is in the MGID).  Linux never sets AttributeOffset in a
 * request, so bytes 44-45 are zero.
 */
static const char join_req_hex[] =
	/*  0 */ "01 03 02 02  0000 0000  00000001 0000002a"
	/* 16 */ "0038 0000  00000000"
	/* 24 */ "00 00 00 00  00000000 00000000"
	/* 36 */ "00000000 00000000  0000 0000  00000000 00010083"
	/* 56 MGID, PortGID */ BCAST_MGID PORT_GID
	/* 88 Q_Key, MLID, MTU, TClass */ "00000000 0000 00 00"
	/* 96 P_Key, rate, life, SL/flow/hop */ "ffff 00 00 00000000"
	/* 104 scope/join, proxy, rsvd */ "01 00 0000";

/*
 * OpenSM's SubnAdmGetResp to that join for the default broadcast group
 * (as OpenSM 3.3.23 answers: MLID 0xC000, Q_Key 0x0B1B, MTU 4, rate 3, SL 0, scope 2):
 * AttributeOffset 7, MTU selector 2 / MTU 4 (0x84), rate selector 2 /
 * rate 3 (0x83).  PacketLifeTime is not recorded there; 0x92 (selector 2,
 * 18) stands in for it.
 */
static const char join_resp_hex[] =
	/*  0 */ "01 03 02 81  0000 0000  00000001 0000002a"
	/* 16 */ "0038 0000  00000000"
	/* 24 */ "00 00 00 00  00000000 00000000"
	/* 36 */ "00000000 00000000  0007 0000  00000000 00010083"
	/* 56 */ BCAST_MGID PORT_GID
	/* 88 */ "00000b1b c000 84 00"
	/* 96 */ "ffff 83 92 00000000"
	/* 104 */ "21 00 0000";

static void check_join_record(const struct sa_mcmember *r, uint8_t join_state,
			      uint8_t scope)
{
	union fab_gid mgid, pgid;

	gid_hex(BCAST_MGID, &mgid);
	gid_hex(PORT_GID, &pgid);
	assert_memory_equal(r->mgid.raw, mgid.raw, 16);
	assert_memory_equal(r->port_gid.raw, pgid.raw, 16);
	assert_int_equal(r->pkey, 0xffff);
	assert_int_equal(r->join_state, join_state);
	assert_int_equal(r->scope, scope);
	assert_int_equal(r->proxy_join, 0);
}

static void test_mcmember_join_request(void **state)
{
	uint8_t want[MAD_LEN], got[MAD_LEN];
	struct sa_mcmember r;
	struct sa_hdr h;
	enum sa_mad_err err = SA_MAD_ERR_MAX;
	const uint8_t *rec;

	(void)state;
	assert_int_equal(tv_unhex(join_req_hex, want, sizeof(want)), 108);
	assert_int_equal(sa_mad_parse(want, MAD_LEN, &h), SA_MAD_OK);
	assert_int_equal(h.mad.method, MAD_METHOD_SET);
	assert_int_equal(h.mad.status, 0);
	assert_true(h.mad.tid == 0x000000010000002aull);
	assert_int_equal(h.mad.attr_id, SA_ATTR_MCMEMBER_RECORD);
	assert_int_equal(h.mad.attr_mod, 0);
	assert_int_equal(h.attr_offset, 0);
	assert_true(h.comp_mask == (SA_MCM_MGID | SA_MCM_PORT_GID |
				    SA_MCM_PKEY | SA_MCM_JOIN_STATE));
	assert_true(h.comp_mask == 0x10083);

	rec = sa_mad_record(want, MAD_LEN, &h, SA_ATTR_MCMEMBER_RECORD, 0,
			    &err);
	assert_int_equal(err, SA_MAD_OK);
	assert_ptr_equal(rec, want + SA_HDR_LEN);
	sa_mcmember_decode(rec, &r);
	check_join_record(&r, SA_JOIN_FULL, 0);
	assert_int_equal(r.qkey, 0);
	assert_int_equal(r.mlid, 0);
	/* AttributeOffset 0: one record only */
	assert_null(sa_mad_record(want, MAD_LEN, &h, SA_ATTR_MCMEMBER_RECORD,
				  1, &err));
	assert_int_equal(err, SA_MAD_TRUNCATED);

	/* the encoders put back exactly these bytes */
	memset(got, 0x5a, sizeof(got));
	sa_hdr_encode(&h, got);
	sa_mcmember_encode(&r, got + SA_HDR_LEN);
	memset(got + SA_HDR_LEN + SA_MCMEMBER_LEN, 0,
	       MAD_LEN - SA_HDR_LEN - SA_MCMEMBER_LEN);
	assert_memory_equal(got, want, MAD_LEN);

	/* sa_mad_build fills in AttributeOffset 7 (ceil(52 / 8)) */
	memset(got, 0x5a, sizeof(got));
	assert_int_equal(sa_mad_build(&h, want + SA_HDR_LEN, SA_MCMEMBER_LEN,
				      got), MAD_LEN);
	want[45] = 7;
	assert_memory_equal(got, want, MAD_LEN);
}

/* The RMPP bytes sit at 24..35: a stray byte there is seen there only. */
static void test_rmpp_and_sa_header_offsets(void **state)
{
	uint8_t m[MAD_LEN], out[SA_HDR_LEN];
	struct sa_hdr h;

	(void)state;
	tv_unhex("01 03 02 92  0001 8000  0123456789abcdef"
	      "0035 0000  deadbeef"
	      "01 01 f5 00  00000001 000000c8"
	      "1122334455667788  0008 0000  00000000 0000340c", m, sizeof(m));
	assert_int_equal(sa_mad_parse(m, MAD_LEN, &h), SA_MAD_OK);
	assert_int_equal(h.mad.method, MAD_METHOD_GET_TABLE_RESP);
	assert_int_equal(h.mad.status, 0x0001);
	assert_int_equal(h.mad.class_specific, 0x8000);
	assert_true(h.mad.tid == 0x0123456789abcdefull);
	assert_int_equal(h.mad.attr_id, SA_ATTR_PATH_RECORD);
	assert_int_equal(h.mad.attr_mod, 0xdeadbeef);
	assert_int_equal(h.rmpp_version, 1);
	assert_int_equal(h.rmpp_type, 1);
	/* RRespTime 0x1e (bits 7-3), flags 5 (ACTIVE | LAST) */
	assert_int_equal(h.rmpp_rtime_flags, 0xf5);
	assert_int_equal(h.rmpp_rtime_flags >> 3, 0x1e);
	assert_int_equal(h.rmpp_rtime_flags & 7, 5);
	assert_int_equal(h.rmpp_status, 0);
	assert_int_equal(h.rmpp_data1, 1);
	assert_int_equal(h.rmpp_data2, 200);
	assert_true(h.sm_key == 0x1122334455667788ull);
	assert_int_equal(h.attr_offset, 8);
	assert_true(h.comp_mask == (SA_PR_DGID | SA_PR_SGID | SA_PR_TCLASS |
				    SA_PR_NUMB_PATH | SA_PR_PKEY));

	/* reserved bytes 18-19 and 46-47 are written as zero */
	m[18] = 0xff;
	m[19] = 0xff;
	m[46] = 0xff;
	m[47] = 0xff;
	sa_hdr_decode(m, &h);
	sa_hdr_encode(&h, out);
	m[18] = m[19] = m[46] = m[47] = 0;
	assert_memory_equal(out, m, SA_HDR_LEN);
}

static void test_mcmember_getresp_opensm(void **state)
{
	uint8_t want[MAD_LEN], got[MAD_LEN], enc[SA_MCMEMBER_LEN];
	struct sa_mcmember r;
	struct sa_hdr h;
	enum sa_mad_err err;
	const uint8_t *rec;

	(void)state;
	assert_int_equal(tv_unhex(join_resp_hex, want, sizeof(want)), 108);
	assert_int_equal(sa_mad_parse(want, MAD_LEN, &h), SA_MAD_OK);
	assert_int_equal(h.mad.method, MAD_METHOD_GET_RESP);
	assert_true(h.mad.method & MAD_METHOD_RESP);
	assert_int_equal(h.attr_offset, 7);
	rec = sa_mad_record(want, MAD_LEN, &h, SA_ATTR_MCMEMBER_RECORD, 0,
			    &err);
	assert_ptr_equal(rec, want + 56);
	sa_mcmember_decode(rec, &r);
	check_join_record(&r, SA_JOIN_FULL, 2);
	assert_int_equal(r.qkey, 0x00000b1b);
	assert_int_equal(r.mlid, 0xc000);
	assert_int_equal(r.mtu_sel, SA_SEL_EQ);
	assert_int_equal(r.mtu, 4);
	assert_int_equal(r.tclass, 0);
	assert_int_equal(r.rate_sel, SA_SEL_EQ);
	assert_int_equal(r.rate, 3);
	assert_int_equal(sa_rate_tenths_gbps(r.rate), 100);
	assert_int_equal(r.life_sel, SA_SEL_EQ);
	assert_int_equal(r.life, 18);
	assert_int_equal(r.sl, 0);
	assert_int_equal(r.flow_label, 0);
	assert_int_equal(r.hop_limit, 0);

	/* next 56-byte slot would end at 168 + 52 > 108 */
	assert_null(sa_mad_record(want, 108, &h, SA_ATTR_MCMEMBER_RECORD, 1,
				  &err));
	assert_int_equal(err, SA_MAD_TRUNCATED);
	/* inside the 256 bytes it exists (all zero) */
	assert_ptr_equal(sa_mad_record(want, MAD_LEN, &h,
				       SA_ATTR_MCMEMBER_RECORD, 1, &err),
			 want + 56 + 56);

	/* decoded, encoded again and built: the same 256 bytes */
	sa_mcmember_encode(&r, enc);
	memset(got, 0xa5, sizeof(got));
	assert_int_equal(sa_mad_build(&h, enc, SA_MCMEMBER_LEN, got), MAD_LEN);
	assert_memory_equal(got, want, MAD_LEN);
}

/* Every MCMemberRecord bit field at a distinct value. */
static void test_mcmember_bit_fields(void **state)
{
	uint8_t p[SA_MCMEMBER_LEN], out[SA_MCMEMBER_LEN];
	struct sa_mcmember r;

	(void)state;
	tv_unhex(BCAST_MGID PORT_GID
	      /* 32 */ "80010000 fffe 7f 99"
	      /* 40 */ "7fff c0 15 a543217e"
	      /* 48 */ "ef 80 0000", p, sizeof(p));
	sa_mcmember_decode(p, &r);
	assert_int_equal(r.qkey, 0x80010000);
	assert_int_equal(r.mlid, 0xfffe);
	assert_int_equal(r.mtu_sel, 1);
	assert_int_equal(r.mtu, 0x3f);
	assert_int_equal(r.tclass, 0x99);
	assert_int_equal(r.pkey, 0x7fff);
	assert_int_equal(r.rate_sel, 3);
	assert_int_equal(r.rate, 0);
	assert_int_equal(r.life_sel, 0);
	assert_int_equal(r.life, 0x15);
	assert_int_equal(r.sl, 0xa);
	assert_int_equal(r.flow_label, 0x54321);
	assert_int_equal(r.hop_limit, 0x7e);
	assert_int_equal(r.scope, 0xe);
	assert_int_equal(r.join_state, 0xf);
	assert_int_equal(r.proxy_join, 1);
	sa_mcmember_encode(&r, out);
	assert_memory_equal(out, p, sizeof(p));

	/* ProxyJoin is the top bit of byte 49, nothing else there */
	p[49] = 0x7f;
	sa_mcmember_decode(p, &r);
	assert_int_equal(r.proxy_join, 0);
	/* out-of-range struct values are masked, not spilled */
	r.sl = 0xff;
	r.flow_label = 0xffffffff;
	r.hop_limit = 0;
	r.scope = 0xff;
	r.join_state = 0;
	r.proxy_join = 0xfe;
	r.mtu_sel = 0xff;
	r.mtu = 0;
	sa_mcmember_encode(&r, out);
	assert_int_equal(out[38], 0xc0);
	assert_memory_equal(out + 44, "\xff\xff\xff\x00", 4);
	assert_int_equal(out[48], 0xf0);
	assert_int_equal(out[49], 0x00);
}

/*
 * PathRecord query as IPoIB makes it (SubnAdmGet, mask DGID|SGID|TClass|
 * NumbPath|P_Key = 0x340c, Reversible 1, NumbPath 1) and the SA's answer.
 */
static void test_path_record_request_response(void **state)
{
	uint8_t req[MAD_LEN], resp[MAD_LEN], got[MAD_LEN];
	uint8_t enc[SA_PATH_RECORD_LEN];
	union fab_gid dgid, sgid;
	struct sa_path r;
	struct sa_hdr h;
	enum sa_mad_err err;
	const uint8_t *rec;

	(void)state;
	gid_hex(PEER_GID, &dgid);
	gid_hex(PORT_GID, &sgid);
	assert_int_equal(tv_unhex(
		/*  0 */ "01 03 02 01  0000 0000  00000001 0000002b"
		/* 16 */ "0035 0000  00000000  00 00 00 00  00000000 00000000"
		/* 36 */ "00000000 00000000  0000 0000  00000000 0000340c"
		/* 56 */ "00000000 00000000" PEER_GID PORT_GID
		/* 96 */ "0000 0000  00000000  00 81 ffff  0000 00 00 00 00"
		/* 114 */ "0000 0000 0000", req, sizeof(req)), 120);
	assert_int_equal(sa_mad_parse(req, MAD_LEN, &h), SA_MAD_OK);
	assert_int_equal(h.mad.method, MAD_METHOD_GET);
	assert_true(h.comp_mask == (SA_PR_DGID | SA_PR_SGID | SA_PR_TCLASS |
				    SA_PR_NUMB_PATH | SA_PR_PKEY));
	rec = sa_mad_record(req, MAD_LEN, &h, SA_ATTR_PATH_RECORD, 0, &err);
	assert_ptr_equal(rec, req + 56);
	sa_path_decode(rec, &r);
	assert_true(r.service_id == 0);
	assert_memory_equal(r.dgid.raw, dgid.raw, 16);
	assert_memory_equal(r.sgid.raw, sgid.raw, 16);
	assert_int_equal(r.reversible, 1);
	assert_int_equal(r.numb_path, 1);
	assert_int_equal(r.pkey, 0xffff);
	sa_path_encode(&r, enc);
	memset(got, 0x77, sizeof(got));
	sa_mad_build(&h, enc, SA_PATH_RECORD_LEN, got);
	req[45] = 8;
	assert_memory_equal(got, req, MAD_LEN);

	assert_int_equal(tv_unhex(
		/*  0 */ "01 03 02 81  0000 0000  00000001 0000002b"
		/* 16 */ "0035 0000  00000000  00 00 00 00  00000000 00000000"
		/* 36 */ "00000000 00000000  0008 0000  00000000 0000340c"
		/* 56 */ "00000000 00000000" PEER_GID PORT_GID
		/* 96 */ "0005 0003  00000040  00 81 ffff  0000 84 83 92 00"
		/* 114 */ "0000 0000 0000", resp, sizeof(resp)), 120);
	assert_int_equal(sa_mad_parse(resp, MAD_LEN, &h), SA_MAD_OK);
	rec = sa_mad_record(resp, MAD_LEN, &h, SA_ATTR_PATH_RECORD, 0, &err);
	assert_non_null(rec);
	sa_path_decode(rec, &r);
	assert_int_equal(r.dlid, 5);
	assert_int_equal(r.slid, 3);
	assert_int_equal(r.raw_traffic, 0);
	assert_int_equal(r.flow_label, 0);
	assert_int_equal(r.hop_limit, 0x40);
	assert_int_equal(r.sl, 0);
	assert_int_equal(r.qos_class, 0);
	assert_int_equal(r.mtu_sel, SA_SEL_EQ);
	assert_int_equal(r.mtu, 4);
	assert_int_equal(r.rate_sel, SA_SEL_EQ);
	assert_int_equal(r.rate, 3);
	assert_int_equal(r.life_sel, SA_SEL_EQ);
	assert_int_equal(r.life, 18);
	assert_int_equal(r.preference, 0);
	sa_path_encode(&r, enc);
	memset(got, 0x77, sizeof(got));
	sa_mad_build(&h, enc, SA_PATH_RECORD_LEN, got);
	assert_memory_equal(got, resp, MAD_LEN);
}

static void test_path_record_bit_fields(void **state)
{
	uint8_t p[SA_PATH_RECORD_LEN], out[SA_PATH_RECORD_LEN];
	struct sa_path r;

	(void)state;
	tv_unhex(/*  0 */ "0000000000010050" PEER_GID PORT_GID
	      /* 40 */ "1234 abcd  8abcde40  5a ff 8001"
	      /* 52 */ "fedc c5 50 3f 77  000000000000", p, sizeof(p));
	sa_path_decode(p, &r);
	assert_true(r.service_id == 0x10050ull);
	assert_int_equal(r.dlid, 0x1234);
	assert_int_equal(r.slid, 0xabcd);
	assert_int_equal(r.raw_traffic, 1);
	assert_int_equal(r.flow_label, 0xabcde);
	assert_int_equal(r.hop_limit, 0x40);
	assert_int_equal(r.tclass, 0x5a);
	assert_int_equal(r.reversible, 1);
	assert_int_equal(r.numb_path, 0x7f);
	assert_int_equal(r.pkey, 0x8001);
	assert_int_equal(r.qos_class, 0xfed);
	assert_int_equal(r.sl, 0xc);
	assert_int_equal(r.mtu_sel, 3);
	assert_int_equal(r.mtu, 5);
	assert_int_equal(r.rate_sel, 1);
	assert_int_equal(r.rate, 16);
	assert_int_equal(r.life_sel, 0);
	assert_int_equal(r.life, 0x3f);
	assert_int_equal(r.preference, 0x77);
	sa_path_encode(&r, out);
	assert_memory_equal(out, p, sizeof(p));

	/* the three reserved bits after RawTraffic are ignored */
	p[44] = 0x70;
	sa_path_decode(p, &r);
	assert_int_equal(r.raw_traffic, 0);
	assert_int_equal(r.flow_label, 0x0bcde);
}

/* InformInfo Set subscribing to trap 66 (MCG created), generic form. */
static void test_inform_info_roundtrip(void **state)
{
	uint8_t m[MAD_LEN], got[MAD_LEN], rec_out[SA_INFORM_INFO_LEN];
	struct sa_inform_info r;
	struct sa_hdr h;
	enum sa_mad_err err;
	const uint8_t *rec;

	(void)state;
	assert_int_equal(tv_unhex(
		/*  0 */ "01 03 02 02  0000 0000  00000001 00000030"
		/* 16 */ "0003 0000  00000000  00 00 00 00  00000000 00000000"
		/* 36 */ "00000000 00000000  0005 0000  00000000 00000000"
		/* 56 */ PORT_GID
		/* 72 */ "ffff 0000  0000  01 01  0004 0042"
		/* 84 */ "abcdef13  00000004", m, sizeof(m)), 92);
	assert_int_equal(sa_mad_parse(m, MAD_LEN, &h), SA_MAD_OK);
	assert_int_equal(h.attr_offset, 5);
	rec = sa_mad_record(m, MAD_LEN, &h, SA_ATTR_INFORM_INFO, 0, &err);
	assert_ptr_equal(rec, m + 56);
	sa_inform_info_decode(rec, &r);
	assert_memory_equal(r.gid.raw, m + 56, 16);
	assert_int_equal(r.lid_range_begin, 0xffff);
	assert_int_equal(r.lid_range_end, 0);
	assert_int_equal(r.is_generic, 1);
	assert_int_equal(r.subscribe, 1);
	assert_int_equal(r.type, 4);
	assert_int_equal(r.trap_number, SA_TRAP_MCG_CREATED);
	assert_int_equal(r.qpn, 0xabcdef);
	assert_int_equal(r.resp_time_value, 0x13);
	assert_int_equal(r.producer_type, 4);
	sa_inform_info_encode(&r, rec_out);
	memset(got, 0xee, sizeof(got));
	sa_mad_build(&h, rec_out, SA_INFORM_INFO_LEN, got);
	assert_memory_equal(got, m, MAD_LEN);
	/* attr_offset 0 in the header: build computes ceil(36 / 8) = 5 */
	h.attr_offset = 0;
	sa_mad_build(&h, rec_out, SA_INFORM_INFO_LEN, got);
	assert_memory_equal(got, m, MAD_LEN);

	/* vendor form; reserved bits (20-21, 31 bits 7-5, 32) are dropped */
	tv_unhex(PEER_GID "0001 00ff  ffff  00 00  ffff 1234  000001ff  ff0002c9",
	      m, SA_INFORM_INFO_LEN);
	sa_inform_info_decode(m, &r);
	assert_int_equal(r.lid_range_begin, 1);
	assert_int_equal(r.lid_range_end, 0xff);
	assert_int_equal(r.is_generic, 0);
	assert_int_equal(r.subscribe, 0);
	assert_int_equal(r.type, 0xffff);
	assert_int_equal(r.trap_number, 0x1234);
	assert_int_equal(r.qpn, 1);
	assert_int_equal(r.resp_time_value, 0x1f);
	assert_int_equal(r.producer_type, 0x0002c9);
	sa_inform_info_encode(&r, rec_out);
	m[20] = m[21] = 0;
	m[31] &= 0x1f;
	m[32] = 0;
	assert_memory_equal(rec_out, m, SA_INFORM_INFO_LEN);
}

/* Notice of trap 66 as an SM reports it: the group's GID at details+6. */
static void test_notice_roundtrip(void **state)
{
	uint8_t m[MAD_LEN], got[MAD_LEN], enc[SA_NOTICE_LEN];
	union fab_gid mgid;
	struct sa_notice r;
	struct sa_hdr h;
	enum sa_mad_err err;
	const uint8_t *rec;
	unsigned int i;

	(void)state;
	gid_hex(BCAST_MGID, &mgid);
	assert_int_equal(tv_unhex(
		/*  0 */ "01 03 02 06  0000 0000  00000000 00001234"
		/* 16 */ "0002 0000  00000000  00 00 00 00  00000000 00000000"
		/* 36 */ "00000000 00000000  000a 0000  00000000 00000000"
		/* 56 */ "84 000004  0042  0001  8005"
		/* 66 */ "000000000000" BCAST_MGID
		/* 88 */ "0000000000000000 0000000000000000"
		/* 104 */ "0000000000000000 0000000000000000"
		/* 120 */ "fe80000000000000 0002c90300012340", m, sizeof(m)),
		136);
	assert_int_equal(sa_mad_parse(m, MAD_LEN, &h), SA_MAD_OK);
	assert_int_equal(h.mad.method, MAD_METHOD_REPORT);
	assert_int_equal(h.attr_offset, 10);
	rec = sa_mad_record(m, MAD_LEN, &h, SA_ATTR_NOTICE, 0, &err);
	assert_ptr_equal(rec, m + 56);
	sa_notice_decode(rec, &r);
	assert_int_equal(r.is_generic, 1);
	assert_int_equal(r.type, 4);
	assert_int_equal(r.producer_type, 4);
	assert_int_equal(r.trap_number, SA_TRAP_MCG_CREATED);
	assert_int_equal(r.issuer_lid, 1);
	assert_int_equal(r.notice_toggle, 1);
	assert_int_equal(r.notice_count, 5);
	for (i = 0; i < 6; i++)
		assert_int_equal(r.data_details[i], 0);
	assert_memory_equal(r.data_details + 6, mgid.raw, 16);
	assert_memory_equal(r.issuer_gid.raw, m + 120, 16);
	assert_int_equal(r.issuer_gid.raw[15], 0x40);
	sa_notice_encode(&r, enc);
	memset(got, 0x11, sizeof(got));
	sa_mad_build(&h, enc, SA_NOTICE_LEN, got);
	assert_memory_equal(got, m, MAD_LEN);

	/* vendor notice: IsGeneric 0, Type 0x7f, 24-bit vendor id */
	tv_unhex("7f 123456  beef  fffe  7fff", m, 10);
	sa_notice_decode(m, &r);
	assert_int_equal(r.is_generic, 0);
	assert_int_equal(r.type, 0x7f);
	assert_int_equal(r.producer_type, 0x123456);
	assert_int_equal(r.trap_number, 0xbeef);
	assert_int_equal(r.issuer_lid, 0xfffe);
	assert_int_equal(r.notice_toggle, 0);
	assert_int_equal(r.notice_count, 0x7fff);
	sa_notice_encode(&r, got);
	assert_memory_equal(got, m, SA_NOTICE_LEN);
}

/* xorshift32: the same "random" bytes on every run */
static uint32_t rnd(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

/* reserved bits of each record, as a list of (byte, mask) */
struct rsvd {
	unsigned int off;
	uint8_t mask;
};

static void fill(uint8_t *p, size_t n, uint32_t *s, const struct rsvd *rv,
		 size_t nrv)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)rnd(s);
	for (i = 0; i < nrv; i++)
		p[rv[i].off] &= (uint8_t)~rv[i].mask;
}

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static void test_random_roundtrips(void **state)
{
	static const struct rsvd hdr_rv[] = {
		{ 18, 0xff }, { 19, 0xff }, { 46, 0xff }, { 47, 0xff },
	};
	static const struct rsvd mcm_rv[] = {
		{ 49, 0x7f }, { 50, 0xff }, { 51, 0xff },
	};
	static const struct rsvd pr_rv[] = {
		{ 44, 0x70 }, { 58, 0xff }, { 59, 0xff }, { 60, 0xff },
		{ 61, 0xff }, { 62, 0xff }, { 63, 0xff },
	};
	static const struct rsvd ii_rv[] = {
		{ 20, 0xff }, { 21, 0xff }, { 31, 0xe0 }, { 32, 0xff },
	};
	uint8_t in[MAD_LEN], out[MAD_LEN];
	struct sa_hdr h;
	struct sa_mcmember mc;
	struct sa_path pr;
	struct sa_inform_info ii;
	struct sa_notice nt;
	uint32_t s = 0x2545f491;
	int i;

	(void)state;
	for (i = 0; i < 200; i++) {
		fill(in, SA_HDR_LEN, &s, hdr_rv, NELEM(hdr_rv));
		sa_hdr_decode(in, &h);
		memset(out, 0, sizeof(out));
		sa_hdr_encode(&h, out);
		assert_memory_equal(out, in, SA_HDR_LEN);

		fill(in, SA_MCMEMBER_LEN, &s, mcm_rv, NELEM(mcm_rv));
		sa_mcmember_decode(in, &mc);
		sa_mcmember_encode(&mc, out);
		assert_memory_equal(out, in, SA_MCMEMBER_LEN);

		fill(in, SA_PATH_RECORD_LEN, &s, pr_rv, NELEM(pr_rv));
		sa_path_decode(in, &pr);
		sa_path_encode(&pr, out);
		assert_memory_equal(out, in, SA_PATH_RECORD_LEN);

		fill(in, SA_INFORM_INFO_LEN, &s, ii_rv, NELEM(ii_rv));
		sa_inform_info_decode(in, &ii);
		sa_inform_info_encode(&ii, out);
		assert_memory_equal(out, in, SA_INFORM_INFO_LEN);

		fill(in, SA_NOTICE_LEN, &s, NULL, 0);
		sa_notice_decode(in, &nt);
		sa_notice_encode(&nt, out);
		assert_memory_equal(out, in, SA_NOTICE_LEN);
	}
}

static void test_parse_rejects(void **state)
{
	uint8_t m[MAD_LEN];
	struct sa_hdr h;

	(void)state;
	tv_unhex(join_resp_hex, m, sizeof(m));
	assert_int_equal(sa_mad_parse(m, 0, &h), SA_MAD_TRUNCATED);
	assert_int_equal(sa_mad_parse(m, 23, &h), SA_MAD_TRUNCATED);
	assert_int_equal(sa_mad_parse(m, MAD_HDR_LEN, &h), SA_MAD_TRUNCATED);
	assert_int_equal(sa_mad_parse(m, 55, &h), SA_MAD_TRUNCATED);
	assert_int_equal(sa_mad_parse(m, 56, &h), SA_MAD_OK);

	m[0] = 2;
	memset(&h, 0, sizeof(h));
	assert_int_equal(sa_mad_parse(m, MAD_LEN, &h), SA_MAD_BAD_BASE_VERSION);
	/* the header is still decoded so that an SA can answer it */
	assert_true(h.mad.tid == 0x000000010000002aull);
	m[0] = 1;
	m[1] = 0x01;	/* SubnMgmt (LID routed SMP) */
	assert_int_equal(sa_mad_parse(m, MAD_LEN, &h), SA_MAD_BAD_CLASS);
	m[1] = 0x83;
	assert_int_equal(sa_mad_parse(m, MAD_LEN, &h), SA_MAD_BAD_CLASS);
	m[1] = 0x03;
	m[2] = 1;
	assert_int_equal(sa_mad_parse(m, MAD_LEN, &h),
			 SA_MAD_BAD_CLASS_VERSION);
	m[2] = 2;
	assert_int_equal(sa_mad_parse(m, MAD_LEN, &h), SA_MAD_OK);
}

static void test_record_rejects(void **state)
{
	uint8_t m[MAD_LEN];
	struct sa_hdr h;
	enum sa_mad_err err;

	(void)state;
	tv_unhex(join_resp_hex, m, sizeof(m));
	assert_int_equal(sa_mad_parse(m, MAD_LEN, &h), SA_MAD_OK);

	/* record cut short: 52 bytes needed after the 56 */
	err = SA_MAD_OK;
	assert_null(sa_mad_record(m, 56 + 51, &h, SA_ATTR_MCMEMBER_RECORD, 0,
				  &err));
	assert_int_equal(err, SA_MAD_TRUNCATED);
	assert_non_null(sa_mad_record(m, 56 + 52, &h, SA_ATTR_MCMEMBER_RECORD,
				      0, &err));
	assert_int_equal(err, SA_MAD_OK);
	assert_null(sa_mad_record(m, 56, &h, SA_ATTR_MCMEMBER_RECORD, 0,
				  &err));
	assert_int_equal(err, SA_MAD_TRUNCATED);
	assert_null(sa_mad_record(m, 10, &h, SA_ATTR_MCMEMBER_RECORD, 0,
				  &err));
	assert_int_equal(err, SA_MAD_TRUNCATED);

	/* not the attribute the MAD carries */
	assert_null(sa_mad_record(m, MAD_LEN, &h, SA_ATTR_PATH_RECORD, 0,
				  &err));
	assert_int_equal(err, SA_MAD_BAD_ATTR);
	/* an attribute this codec has no size for */
	h.mad.attr_id = 0x0001;
	assert_null(sa_mad_record(m, MAD_LEN, &h, 0x0001, 0, &err));
	assert_int_equal(err, SA_MAD_BAD_ATTR);
	h.mad.attr_id = SA_ATTR_MCMEMBER_RECORD;

	/* AttributeOffset too small for 52 bytes */
	h.attr_offset = 1;
	assert_null(sa_mad_record(m, MAD_LEN, &h, SA_ATTR_MCMEMBER_RECORD, 0,
				  &err));
	assert_int_equal(err, SA_MAD_BAD_ATTR_OFFSET);
	h.attr_offset = 6;
	assert_null(sa_mad_record(m, MAD_LEN, &h, SA_ATTR_MCMEMBER_RECORD, 0,
				  &err));
	assert_int_equal(err, SA_MAD_BAD_ATTR_OFFSET);

	/* absurd AttributeOffset: record 0 is fine, record 1 is far away */
	h.attr_offset = 0xffff;
	assert_ptr_equal(sa_mad_record(m, MAD_LEN, &h,
				       SA_ATTR_MCMEMBER_RECORD, 0, &err),
			 m + 56);
	assert_null(sa_mad_record(m, MAD_LEN, &h, SA_ATTR_MCMEMBER_RECORD, 1,
				  &err));
	assert_int_equal(err, SA_MAD_TRUNCATED);
	assert_null(sa_mad_record(m, MAD_LEN, &h, SA_ATTR_MCMEMBER_RECORD,
				  UINT_MAX, &err));
	assert_int_equal(err, SA_MAD_TRUNCATED);

	/* large n with a sane offset */
	h.attr_offset = 7;
	assert_null(sa_mad_record(m, MAD_LEN, &h, SA_ATTR_MCMEMBER_RECORD,
				  UINT_MAX, &err));
	assert_int_equal(err, SA_MAD_TRUNCATED);
	assert_null(sa_mad_record(m, MAD_LEN, &h, SA_ATTR_MCMEMBER_RECORD,
				  4, &err));
	assert_int_equal(err, SA_MAD_TRUNCATED);
	/* 56 + 3 * 56 + 52 = 276 > 256 */
	assert_null(sa_mad_record(m, MAD_LEN, &h, SA_ATTR_MCMEMBER_RECORD,
				  3, &err));
	assert_int_equal(err, SA_MAD_TRUNCATED);
	assert_ptr_equal(sa_mad_record(m, MAD_LEN, &h,
				       SA_ATTR_MCMEMBER_RECORD, 2, &err),
			 m + 56 + 2 * 56);

	/* a NULL err is allowed */
	assert_null(sa_mad_record(m, 0, &h, SA_ATTR_MCMEMBER_RECORD, 0, NULL));
}

/* GetTableResp with three PathRecords at 56, 120 and 184. */
static void test_get_table_records(void **state)
{
	uint8_t m[MAD_LEN];
	struct sa_path r;
	struct sa_hdr h;
	enum sa_mad_err err;
	const uint8_t *rec;
	unsigned int n;

	(void)state;
	tv_unhex("01 03 02 92  0000 0000  0000000000000001"
	      "0035 0000 00000000  01 01 04 00  00000001 000000c0"
	      "0000000000000000  0008 0000  0000000000000000", m, sizeof(m));
	/* record n: DLID (low byte at 41) n + 1, Preference (57) 0x10 * n */
	for (n = 0; n < 3; n++) {
		m[56 + n * 64 + 41] = (uint8_t)(n + 1);
		m[56 + n * 64 + 57] = (uint8_t)(0x10 * n);
	}
	assert_int_equal(sa_mad_parse(m, MAD_LEN, &h), SA_MAD_OK);
	for (n = 0; n < 3; n++) {
		rec = sa_mad_record(m, MAD_LEN, &h, SA_ATTR_PATH_RECORD, n,
				    &err);
		assert_ptr_equal(rec, m + 56 + n * 64);
		sa_path_decode(rec, &r);
		assert_int_equal(r.dlid, n + 1);
		assert_int_equal(r.preference, 0x10 * n);
	}
	/* 56 + 3 * 64 + 64 = 312 > 256 */
	assert_null(sa_mad_record(m, MAD_LEN, &h, SA_ATTR_PATH_RECORD, 3,
				  &err));
	assert_int_equal(err, SA_MAD_TRUNCATED);
	/* a reassembled RMPP answer may be longer than one MAD */
	{
		static uint8_t big[56 + 4 * 64];

		memcpy(big, m, sizeof(m));
		assert_ptr_equal(sa_mad_record(big, sizeof(big), &h,
					       SA_ATTR_PATH_RECORD, 3, &err),
				 big + 56 + 3 * 64);
		assert_null(sa_mad_record(big, sizeof(big) - 1, &h,
					  SA_ATTR_PATH_RECORD, 3, &err));
	}
}

static void test_build(void **state)
{
	uint8_t m[MAD_LEN], rec[SA_DATA_LEN + 8];
	struct sa_hdr h;
	unsigned int i;

	(void)state;
	memset(&h, 0, sizeof(h));
	h.mad.base_version = MAD_BASE_VERSION;
	h.mad.mgmt_class = MAD_CLASS_SUBN_ADM;
	h.mad.class_version = SA_CLASS_VERSION;
	h.mad.method = MAD_METHOD_DELETE;
	h.mad.attr_id = SA_ATTR_MCMEMBER_RECORD;
	memset(rec, 0xcc, sizeof(rec));

	memset(m, 0xff, sizeof(m));
	assert_int_equal(sa_mad_build(&h, rec, SA_MCMEMBER_LEN, m), MAD_LEN);
	assert_int_equal(m[3], 0x15);
	assert_int_equal(m[44], 0);
	assert_int_equal(m[45], 7);
	for (i = 0; i < SA_MCMEMBER_LEN; i++)
		assert_int_equal(m[SA_HDR_LEN + i], 0xcc);
	for (i = SA_HDR_LEN + SA_MCMEMBER_LEN; i < MAD_LEN; i++)
		assert_int_equal(m[i], 0);

	/* a given AttributeOffset is kept */
	h.attr_offset = 0x0102;
	sa_mad_build(&h, rec, 8, m);
	assert_int_equal(m[44], 1);
	assert_int_equal(m[45], 2);

	/* no record: AttributeOffset 0, all data zero */
	h.attr_offset = 0;
	memset(m, 0xff, sizeof(m));
	sa_mad_build(&h, NULL, 0, m);
	assert_int_equal(m[45], 0);
	for (i = SA_HDR_LEN - 8; i < MAD_LEN; i++)
		assert_int_equal(m[i], 0);

	/* ceil: 1 byte -> 1, 9 bytes -> 2, 80 -> 10 */
	sa_mad_build(&h, rec, 1, m);
	assert_int_equal(m[45], 1);
	sa_mad_build(&h, rec, 9, m);
	assert_int_equal(m[45], 2);
	sa_mad_build(&h, rec, SA_NOTICE_LEN, m);
	assert_int_equal(m[45], 10);

	/* too long a record is cut at the end of the MAD */
	sa_mad_build(&h, rec, sizeof(rec), m);
	assert_int_equal(m[45], SA_DATA_LEN / 8);
	assert_int_equal(m[MAD_LEN - 1], 0xcc);
}

static void test_ipoib_bcast_mgid(void **state)
{
	union fab_gid g, want;

	(void)state;
	sa_ipoib_bcast_mgid(0x7fff, 2, &g);
	gid_hex("ff12401b ffff0000 00000000 ffffffff", &want);
	assert_memory_equal(g.raw, want.raw, 16);
	sa_ipoib_bcast_mgid(0xffff, 2, &g);
	assert_memory_equal(g.raw, want.raw, 16);

	sa_ipoib_bcast_mgid(0x8001, 5, &g);
	gid_hex("ff15401b 80010000 00000000 ffffffff", &want);
	assert_memory_equal(g.raw, want.raw, 16);
	sa_ipoib_bcast_mgid(0x0001, 5, &g);
	assert_memory_equal(g.raw, want.raw, 16);

	/* scope is 4 bits */
	sa_ipoib_bcast_mgid(0x8123, 0xfe, &g);
	gid_hex("ff1e401b 81230000 00000000 ffffffff", &want);
	assert_memory_equal(g.raw, want.raw, 16);
}

static void test_mgid_is_ipoib(void **state)
{
	static const char *const yes[] = {
		"ff12401b ffff0000 00000000 ffffffff",
		"ff15401b 80010000 00000000 ffffffff",
		"ff12401b ffff0000 00000000 e0000001",	/* 224.0.0.1 */
		"ff12601b ffff0000 00000001 ff000001",	/* IPv6 mcast */
		"ff1e601b 80010000 00000000 00000000",
	};
	static const char *const no[] = {
		"00000000 00000000 00000000 00000000",
		"fe80401b ffff0000 00000000 ffffffff",
		"ff02401b ffff0000 00000000 ffffffff",	/* flags 0 */
		"ff32401b ffff0000 00000000 ffffffff",	/* flags 3 */
		"ff12401c ffff0000 00000000 ffffffff",
		"ff12501b ffff0000 00000000 ffffffff",
		"ff12411b ffff0000 00000000 ffffffff",
		"fe12401b ffff0000 00000000 ffffffff",
	};
	union fab_gid g;
	size_t i;

	(void)state;
	for (i = 0; i < NELEM(yes); i++) {
		gid_hex(yes[i], &g);
		assert_true(sa_mgid_is_ipoib(&g));
	}
	for (i = 0; i < NELEM(no); i++) {
		gid_hex(no[i], &g);
		assert_false(sa_mgid_is_ipoib(&g));
	}
	sa_ipoib_bcast_mgid(0x1234, 8, &g);
	assert_true(sa_mgid_is_ipoib(&g));
}

static void test_rate(void **state)
{
	(void)state;
	assert_int_equal(sa_rate_tenths_gbps(2), 25);
	assert_int_equal(sa_rate_tenths_gbps(3), 100);
	assert_int_equal(sa_rate_tenths_gbps(4), 300);
	assert_int_equal(sa_rate_tenths_gbps(5), 50);
	assert_int_equal(sa_rate_tenths_gbps(6), 200);
	assert_int_equal(sa_rate_tenths_gbps(7), 400);
	assert_int_equal(sa_rate_tenths_gbps(8), 600);
	assert_int_equal(sa_rate_tenths_gbps(9), 800);
	assert_int_equal(sa_rate_tenths_gbps(10), 1200);
	assert_int_equal(sa_rate_tenths_gbps(11), 140);
	assert_int_equal(sa_rate_tenths_gbps(12), 560);
	assert_int_equal(sa_rate_tenths_gbps(13), 1120);
	assert_int_equal(sa_rate_tenths_gbps(14), 1680);
	assert_int_equal(sa_rate_tenths_gbps(15), 250);
	assert_int_equal(sa_rate_tenths_gbps(16), 1000);
	assert_int_equal(sa_rate_tenths_gbps(17), 2000);
	assert_int_equal(sa_rate_tenths_gbps(18), 3000);
	/* later codes, as verbs' enum ibv_rate and OpenSM's ib_types.h */
	assert_int_equal(sa_rate_tenths_gbps(19), 280);
	assert_int_equal(sa_rate_tenths_gbps(20), 500);
	assert_int_equal(sa_rate_tenths_gbps(21), 4000);
	assert_int_equal(sa_rate_tenths_gbps(24), 12000);
	assert_int_equal(sa_rate_tenths_gbps(0), 0);
	assert_int_equal(sa_rate_tenths_gbps(1), 0);
	assert_int_equal(sa_rate_tenths_gbps(25), 0);
	assert_int_equal(sa_rate_tenths_gbps(63), 0);
	assert_int_equal(sa_rate_tenths_gbps(255), 0);
}

static void test_names(void **state)
{
	(void)state;
	assert_string_equal(mad_method_name(MAD_METHOD_GET), "Get");
	assert_string_equal(mad_method_name(MAD_METHOD_SET), "Set");
	assert_string_equal(mad_method_name(MAD_METHOD_GET_RESP), "GetResp");
	assert_string_equal(mad_method_name(MAD_METHOD_REPORT), "Report");
	assert_string_equal(mad_method_name(MAD_METHOD_REPORT_RESP),
			    "ReportResp");
	assert_string_equal(mad_method_name(MAD_METHOD_GET_TABLE), "GetTable");
	assert_string_equal(mad_method_name(MAD_METHOD_GET_TABLE_RESP),
			    "GetTableResp");
	assert_string_equal(mad_method_name(MAD_METHOD_DELETE), "Delete");
	assert_string_equal(mad_method_name(MAD_METHOD_DELETE_RESP),
			    "DeleteResp");
	assert_string_equal(mad_method_name(0x7f), "0x7f");
	assert_string_equal(mad_method_name(0x00), "0x00");

	assert_string_equal(sa_attr_name(SA_ATTR_MCMEMBER_RECORD),
			    "MCMemberRecord");
	assert_string_equal(sa_attr_name(SA_ATTR_PATH_RECORD), "PathRecord");
	assert_string_equal(sa_attr_name(SA_ATTR_INFORM_INFO), "InformInfo");
	assert_string_equal(sa_attr_name(SA_ATTR_NOTICE), "Notice");
	assert_string_equal(sa_attr_name(0x1234), "0x1234");

	assert_string_equal(sa_status_name(MAD_STATUS_OK), "OK");
	assert_string_equal(sa_status_name(SA_STATUS_REQ_INVALID),
			    "REQ_INVALID");
	assert_string_equal(sa_status_name(SA_STATUS_NO_RECORDS),
			    "NO_RECORDS");
	assert_string_equal(sa_status_name(SA_STATUS_INSUFFICIENT_COMPS),
			    "INSUFFICIENT_COMPS");
	assert_string_equal(sa_status_name(MAD_STATUS_INVALID_FIELD),
			    "INVALID_FIELD");
	assert_string_equal(sa_status_name(0x0900), "0x0900");
	assert_string_equal(sa_status_name(0xffff), "0xffff");

	/* one buffer per function: these may share a log line */
	{
		const char *a = mad_method_name(0x42);
		const char *b = sa_attr_name(0xbeef);
		const char *c = sa_status_name(0x1d00);

		assert_string_equal(a, "0x42");
		assert_string_equal(b, "0xbeef");
		assert_string_equal(c, "0x1d00");
	}

	assert_string_equal(sa_mad_strerror(SA_MAD_OK), "ok");
	assert_string_equal(sa_mad_strerror(SA_MAD_TRUNCATED), "truncated");
	assert_string_equal(sa_mad_strerror(SA_MAD_BAD_ATTR_OFFSET),
			    "bad_attr_offset");
	assert_string_equal(sa_mad_strerror(SA_MAD_ERR_MAX), "unknown");
	assert_string_equal(sa_mad_strerror((enum sa_mad_err)-1), "unknown");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mcmember_join_request),
		cmocka_unit_test(test_rmpp_and_sa_header_offsets),
		cmocka_unit_test(test_mcmember_getresp_opensm),
		cmocka_unit_test(test_mcmember_bit_fields),
		cmocka_unit_test(test_path_record_request_response),
		cmocka_unit_test(test_path_record_bit_fields),
		cmocka_unit_test(test_inform_info_roundtrip),
		cmocka_unit_test(test_notice_roundtrip),
		cmocka_unit_test(test_random_roundtrips),
		cmocka_unit_test(test_parse_rejects),
		cmocka_unit_test(test_record_rejects),
		cmocka_unit_test(test_get_table_records),
		cmocka_unit_test(test_build),
		cmocka_unit_test(test_ipoib_bcast_mgid),
		cmocka_unit_test(test_mgid_is_ipoib),
		cmocka_unit_test(test_rate),
		cmocka_unit_test(test_names),
	};

	return cmocka_run_group_tests_name("sa_mad", tests, NULL, NULL);
}

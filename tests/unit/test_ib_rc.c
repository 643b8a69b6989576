// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* RC transport headers: opcodes, RETH/AETH/ImmDt, payload rules, PSNs,
 * the RNR timer table; byte vectors written from IBTA vol. 1 ch. 9. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "fabric/ib_rc.h"

static void reseal(uint8_t *p, size_t n)
{
	uint32_t c = ib_icrc_native(p, n - 6);
	uint16_t v;

	p[n - 6] = (uint8_t)c;
	p[n - 5] = (uint8_t)(c >> 8);
	p[n - 4] = (uint8_t)(c >> 16);
	p[n - 3] = (uint8_t)(c >> 24);
	v = ib_vcrc(p, n - 2);
	p[n - 2] = (uint8_t)v;
	p[n - 1] = (uint8_t)(v >> 8);
}

static void sample(struct ib_rc *r, uint8_t op)
{
	memset(r, 0, sizeof(*r));
	r->lrh.sl = 0;
	r->lrh.dlid = 0x0002;
	r->lrh.slid = 0x0001;
	r->bth.opcode = op;
	r->bth.pkey = 0xffff;
	r->bth.destqp = 0x000012;
	r->bth.psn = 0x000100;
}

/* RDMA WRITE ONLY, 5 bytes: LRH, BTH, RETH, payload, pad 3, ICRC, VCRC */
static void test_write_only_vector(void **state)
{
	static const uint8_t want[] = {
		/* LRH: VL 0 LVer 0, SL 0 LNH 2, DLID 2, PktLen 12, SLID 1 */
		0x00, 0x02, 0x00, 0x02, 0x00, 0x0c, 0x00, 0x01,
		/* BTH: op 0x0A, PadCnt 3, P_Key, QP 0x12, A, PSN 0x100 */
		0x0a, 0x30, 0xff, 0xff, 0x00, 0x00, 0x00, 0x12,
		0x80, 0x00, 0x01, 0x00,
		/* RETH: VA, R_Key, DMA length 5 */
		0x00, 0x00, 0x7f, 0x00, 0x12, 0x34, 0x50, 0x00,
		0xca, 0xfe, 0xbe, 0xef, 0x00, 0x00, 0x00, 0x05,
		'h', 'e', 'l', 'l', 'o', 0, 0, 0,
	};
	uint8_t buf[128];
	struct ib_rc r, d;
	enum ib_rc_err err;
	size_t n;

	(void)state;
	sample(&r, IB_OP_RC_WRITE_ONLY);
	r.bth.ackreq = 1;
	r.reth.va = 0x00007f0012345000ull;
	r.reth.rkey = 0xcafebeef;
	r.reth.dma_len = 5;
	r.payload = (const uint8_t *)"hello";
	r.payload_len = 5;
	n = ib_rc_build(&r, 1024, buf, sizeof(buf), &err);
	assert_int_equal(err, IB_RC_OK);
	assert_int_equal(n, sizeof(want) + 6);
	assert_memory_equal(buf, want, sizeof(want));

	assert_int_equal(ib_rc_parse(buf, n, 1024, &d), IB_RC_OK);
	assert_int_equal(d.bth.opcode, IB_OP_RC_WRITE_ONLY);
	assert_int_equal(d.bth.ackreq, 1);
	assert_int_equal(d.bth.psn, 0x100);
	assert_true(d.reth.va == 0x00007f0012345000ull);
	assert_int_equal(d.reth.rkey, 0xcafebeef);
	assert_int_equal(d.reth.dma_len, 5);
	assert_int_equal(d.payload_len, 5);
	assert_memory_equal(d.payload, "hello", 5);
	assert_ptr_equal(d.payload, buf + 36);
	assert_int_equal(ib_rc_parse_checked(buf, n, 1024, &d), IB_RC_OK);

	/* one bit flipped: the VCRC catches it, the checked parse does not */
	buf[40] ^= 1;
	assert_int_equal(ib_rc_parse(buf, n, 1024, &d), IB_RC_BAD_VCRC);
	assert_int_equal(ib_rc_parse_checked(buf, n, 1024, &d), IB_RC_OK);
}

/* ACKNOWLEDGE: AETH only; syndrome bits by hand */
static void test_ack_vectors(void **state)
{
	static const struct {
		uint8_t type, value, syndrome;
	} v[] = {
		{ IB_AETH_ACK, 0x1f, 0x1f },		/* no credits */
		{ IB_AETH_ACK, 3, 0x03 },
		{ IB_AETH_RNR_NAK, 14, 0x2e },		/* 1.28 ms */
		{ IB_AETH_NAK, IB_NAK_PSN_SEQ_ERR, 0x60 },
		{ IB_AETH_NAK, IB_NAK_INVALID_REQ, 0x61 },
		{ IB_AETH_NAK, IB_NAK_REMOTE_ACCESS, 0x62 },
		{ IB_AETH_NAK, IB_NAK_REMOTE_OP_ERR, 0x63 },
	};
	uint8_t buf[64];
	struct ib_rc r, d;
	enum ib_rc_err err;
	size_t i, n;

	(void)state;
	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		sample(&r, IB_OP_RC_ACK);
		r.aeth.type = v[i].type;
		r.aeth.value = v[i].value;
		r.aeth.msn = 0xabcdef;
		n = ib_rc_build(&r, 0, buf, sizeof(buf), &err);
		assert_int_equal(err, IB_RC_OK);
		/* 8 LRH + 12 BTH + 4 AETH + 4 ICRC + 2 VCRC */
		assert_int_equal(n, 30);
		assert_int_equal(buf[5], 7);	/* PktLen words */
		assert_int_equal(buf[8], 0x11);
		assert_int_equal(buf[20], v[i].syndrome);
		assert_int_equal(buf[21], 0xab);
		assert_int_equal(buf[22], 0xcd);
		assert_int_equal(buf[23], 0xef);
		assert_int_equal(ib_rc_parse(buf, n, 0, &d), IB_RC_OK);
		assert_int_equal(d.aeth.type, v[i].type);
		assert_int_equal(d.aeth.value, v[i].value);
		assert_int_equal(d.aeth.msn, 0xabcdef);
		assert_int_equal(ib_aeth_syndrome(&d.aeth), v[i].syndrome);
		assert_int_equal(d.payload_len, 0);
	}
	/* reserved bit 7, type 2, NAK code 5 and up */
	sample(&r, IB_OP_RC_ACK);
	n = ib_rc_build(&r, 0, buf, sizeof(buf), &err);
	buf[20] = 0x80;
	reseal(buf, n);
	assert_int_equal(ib_rc_parse(buf, n, 0, &d), IB_RC_BAD_AETH);
	buf[20] = 0x40;
	reseal(buf, n);
	assert_int_equal(ib_rc_parse(buf, n, 0, &d), IB_RC_BAD_AETH);
	buf[20] = 0x65;
	reseal(buf, n);
	assert_int_equal(ib_rc_parse(buf, n, 0, &d), IB_RC_BAD_AETH);
	r.aeth.type = IB_AETH_NAK;
	r.aeth.value = 9;
	assert_int_equal(ib_rc_build(&r, 0, buf, sizeof(buf), &err), 0);
	assert_int_equal(err, IB_RC_BAD_AETH);
}

/* which extended headers each opcode carries, and where the payload is */
static void test_opcode_table(void **state)
{
	static const struct {
		uint8_t op;
		size_t ext;
		unsigned int f;
	} v[] = {
		{ 0x00, 0, IB_RC_F_FIRST }, { 0x01, 0, IB_RC_F_MIDDLE },
		{ 0x02, 0, IB_RC_F_LAST }, { 0x03, 4, IB_RC_F_IMM },
		{ 0x04, 0, IB_RC_F_ONLY }, { 0x05, 4, IB_RC_F_IMM },
		{ 0x06, 16, IB_RC_F_RETH }, { 0x07, 0, IB_RC_F_MIDDLE },
		{ 0x08, 0, IB_RC_F_LAST }, { 0x09, 4, IB_RC_F_IMM },
		{ 0x0a, 16, IB_RC_F_RETH }, { 0x0b, 20, IB_RC_F_IMM },
		{ 0x0c, 16, IB_RC_F_RETH }, { 0x0d, 4, IB_RC_F_AETH },
		{ 0x0e, 0, IB_RC_F_MIDDLE }, { 0x0f, 4, IB_RC_F_AETH },
		{ 0x10, 4, IB_RC_F_AETH }, { 0x11, 4, IB_RC_F_AETH },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		assert_int_equal(ib_rc_ext_len(v[i].op), v[i].ext);
		assert_true(ib_rc_op_flags(v[i].op) & v[i].f);
		assert_string_not_equal(ib_rc_op_name(v[i].op), "unknown");
	}
	assert_false(ib_rc_op_flags(IB_OP_RC_READ_REQUEST) & IB_RC_F_PAYLOAD);
	assert_false(ib_rc_op_flags(IB_OP_RC_ACK) & IB_RC_F_PAYLOAD);
	assert_true(ib_rc_op_flags(IB_OP_RC_ACK) & IB_RC_F_RESPONSE);
	/* UD, atomics and beyond are not ours */
	assert_int_equal(ib_rc_op_flags(0x12), 0);
	assert_int_equal(ib_rc_op_flags(IB_OP_UD_SEND_ONLY), 0);
	assert_int_equal(ib_rc_op_flags(0xff), 0);
	assert_int_equal(ib_rc_ext_len(0x64), 0);
	assert_string_equal(ib_rc_op_name(0x64), "unknown");
}

/* a three-packet SEND at PMTU 256 over a GRH, and a read response */
static void test_send_sequence_grh(void **state)
{
	static uint8_t msg[256 * 2 + 7];
	static const uint8_t op[3] = { IB_OP_RC_SEND_FIRST,
				       IB_OP_RC_SEND_MIDDLE,
				       IB_OP_RC_SEND_LAST_IMM };
	uint8_t buf[IB_MAX_PKT];
	struct ib_rc r, d;
	enum ib_rc_err err;
	size_t i, n;

	(void)state;
	for (i = 0; i < sizeof(msg); i++)
		msg[i] = (uint8_t)i;
	for (i = 0; i < 3; i++) {
		sample(&r, op[i]);
		r.has_grh = 1;
		r.grh.hoplmt = 64;
		r.grh.dgid.raw[0] = 0xfe;
		r.grh.dgid.raw[1] = 0x80;
		r.bth.psn = ib_psn_add(0xfffffe, (uint32_t)i);
		r.imm = 0x01020304;
		r.payload = msg + 256 * i;
		r.payload_len = i < 2 ? 256 : 7;
		n = ib_rc_build(&r, 256, buf, sizeof(buf), &err);
		assert_int_equal(err, IB_RC_OK);
		assert_int_equal(n, 8 + 40 + 12 + (i == 2 ? 4 + 8 : 256) + 6);
		assert_int_equal(ib_rc_parse(buf, n, 256, &d), IB_RC_OK);
		assert_true(d.has_grh);
		assert_int_equal(d.grh.paylen, n - 2 - 48);
		assert_int_equal(d.bth.opcode, op[i]);
		assert_int_equal(d.bth.padcnt, i == 2 ? 1 : 0);
		assert_int_equal(d.bth.psn, (0xfffffe + i) & 0xffffff);
		assert_int_equal(d.payload_len, r.payload_len);
		assert_memory_equal(d.payload, r.payload, r.payload_len);
		if (i == 2)
			assert_int_equal(d.imm, 0x01020304);
	}
	/* READ RESPONSE FIRST: AETH then a full PMTU */
	sample(&r, IB_OP_RC_READ_RESP_FIRST);
	r.aeth.msn = 7;
	r.payload = msg;
	r.payload_len = 512;
	n = ib_rc_build(&r, 512, buf, sizeof(buf), &err);
	assert_int_equal(err, IB_RC_OK);
	assert_int_equal(ib_rc_parse(buf, n, 512, &d), IB_RC_OK);
	assert_int_equal(d.aeth.msn, 7);
	assert_ptr_equal(d.payload, buf + 8 + 12 + 4);
	/* the same at another PMTU is not a full packet */
	assert_int_equal(ib_rc_parse(buf, n, 1024, &d), IB_RC_BAD_LEN);
	assert_int_equal(ib_rc_parse(buf, n, 256, &d), IB_RC_BAD_LEN);
	assert_int_equal(ib_rc_parse(buf, n, 300, &d), IB_RC_BAD_MTU);
}

/* every way a packet can be wrong for its opcode */
static void test_rejects(void **state)
{
	static uint8_t pl[4096 + 4];
	uint8_t buf[IB_MAX_PKT + 64];
	struct ib_rc r, d;
	enum ib_rc_err err;
	size_t n;

	(void)state;
	/* build refuses what parse would refuse */
	sample(&r, IB_OP_RC_SEND_FIRST);
	r.payload = pl;
	r.payload_len = 100;
	assert_int_equal(ib_rc_build(&r, 256, buf, sizeof(buf), &err), 0);
	assert_int_equal(err, IB_RC_BAD_LEN);
	r.payload_len = 0;
	assert_int_equal(ib_rc_build(&r, 0, buf, sizeof(buf), &err), 0);
	assert_int_equal(err, IB_RC_BAD_LEN);
	sample(&r, IB_OP_RC_SEND_LAST);	/* a last packet carries 1 .. PMTU */
	assert_int_equal(ib_rc_build(&r, 256, buf, sizeof(buf), &err), 0);
	assert_int_equal(err, IB_RC_BAD_LEN);
	sample(&r, IB_OP_RC_SEND_ONLY);	/* an only one 0 .. PMTU */
	assert_int_not_equal(ib_rc_build(&r, 256, buf, sizeof(buf), &err), 0);
	r.payload = pl;
	r.payload_len = 257;
	assert_int_equal(ib_rc_build(&r, 256, buf, sizeof(buf), &err), 0);
	assert_int_equal(err, IB_RC_BAD_LEN);
	r.payload_len = 4097;	/* over the largest MTU */
	assert_int_equal(ib_rc_build(&r, 4096, buf, sizeof(buf), &err), 0);
	assert_int_equal(err, IB_RC_BAD_LEN);
	assert_int_equal(ib_rc_build(&r, 8192, buf, sizeof(buf), &err), 0);
	assert_int_equal(err, IB_RC_BAD_MTU);
	sample(&r, IB_OP_RC_READ_REQUEST);
	r.payload = pl;
	r.payload_len = 4;
	assert_int_equal(ib_rc_build(&r, 0, buf, sizeof(buf), &err), 0);
	assert_int_equal(err, IB_RC_BAD_LEN);
	r.payload_len = 0;
	r.reth.dma_len = IB_RC_MAX_DMA_LEN + 1;
	assert_int_equal(ib_rc_build(&r, 0, buf, sizeof(buf), &err), 0);
	assert_int_equal(err, IB_RC_BAD_RETH);
	sample(&r, IB_OP_RC_WRITE_ONLY);	/* DMA length = payload */
	r.payload = pl;
	r.payload_len = 8;
	r.reth.dma_len = 9;
	assert_int_equal(ib_rc_build(&r, 0, buf, sizeof(buf), &err), 0);
	assert_int_equal(err, IB_RC_BAD_RETH);
	sample(&r, IB_OP_RC_WRITE_FIRST);	/* and more than the first */
	r.payload = pl;
	r.payload_len = 256;
	r.reth.dma_len = 256;
	assert_int_equal(ib_rc_build(&r, 256, buf, sizeof(buf), &err), 0);
	assert_int_equal(err, IB_RC_BAD_RETH);
	sample(&r, IB_OP_RC_READ_RESP_ONLY);	/* responses ACK only */
	r.aeth.type = IB_AETH_RNR_NAK;
	assert_int_equal(ib_rc_build(&r, 0, buf, sizeof(buf), &err), 0);
	assert_int_equal(err, IB_RC_BAD_AETH);
	sample(&r, 0x64);
	assert_int_equal(ib_rc_build(&r, 0, buf, sizeof(buf), &err), 0);
	assert_int_equal(err, IB_RC_BAD_OPCODE);
	sample(&r, IB_OP_RC_ACK);
	assert_int_equal(ib_rc_build(&r, 0, buf, 29, &err), 0);
	assert_int_equal(err, IB_RC_TRUNCATED);

	/* parse: a READ REQUEST (RETH, no payload), edited */
	sample(&r, IB_OP_RC_READ_REQUEST);
	r.reth.dma_len = 1 << 20;
	n = ib_rc_build(&r, 0, buf, sizeof(buf), &err);
	assert_int_equal(n, 8 + 12 + 16 + 6);
	assert_int_equal(ib_rc_parse(buf, n, 0, &d), IB_RC_OK);
	assert_int_equal(d.reth.dma_len, 1 << 20);
	buf[9] |= 0x10;		/* PadCnt 1 with no payload */
	reseal(buf, n);
	assert_int_equal(ib_rc_parse(buf, n, 0, &d), IB_RC_BAD_PAD);
	buf[9] &= 0x0f;
	buf[9] |= 1;		/* TVer 1 */
	reseal(buf, n);
	assert_int_equal(ib_rc_parse(buf, n, 0, &d), IB_RC_BAD_TVER);
	buf[9] = 0;
	buf[8] = IB_OP_RC_ACK;	/* an ACK with 12 bytes of payload */
	reseal(buf, n);
	assert_int_equal(ib_rc_parse(buf, n, 0, &d), IB_RC_BAD_LEN);
	buf[8] = IB_OP_RC_WRITE_ONLY_IMM;	/* RETH + ImmDt: 20 > 16 */
	reseal(buf, n);
	assert_int_equal(ib_rc_parse(buf, n, 0, &d), IB_RC_TRUNCATED);
	buf[8] = 0x13;		/* atomic: not carried */
	reseal(buf, n);
	assert_int_equal(ib_rc_parse(buf, n, 0, &d), IB_RC_BAD_OPCODE);
	buf[8] = IB_OP_UD_SEND_ONLY;
	reseal(buf, n);
	assert_int_equal(ib_rc_parse(buf, n, 0, &d), IB_RC_BAD_OPCODE);
	assert_int_equal(ib_rc_parse(buf, n - 4, 0, &d), IB_RC_BAD_PKTLEN);
	assert_int_equal(ib_rc_parse(buf, 10, 0, &d), IB_RC_TRUNCATED);
	assert_int_equal(ib_rc_parse(buf, 0, 0, &d), IB_RC_TRUNCATED);

	/* a SEND ONLY of 1 byte whose PadCnt says 3 is fine; of 0 bytes
	 * with PadCnt 3 wrong; a FIRST with a pad wrong */
	sample(&r, IB_OP_RC_SEND_ONLY);
	r.payload = pl;
	r.payload_len = 1;
	n = ib_rc_build(&r, 256, buf, sizeof(buf), &err);
	assert_int_equal(n, 8 + 12 + 4 + 6);
	assert_int_equal(ib_rc_parse(buf, n, 256, &d), IB_RC_OK);
	assert_int_equal(d.payload_len, 1);
	buf[8] = IB_OP_RC_SEND_LAST_IMM;	/* the 4 bytes are ImmDt now */
	reseal(buf, n);
	assert_int_equal(ib_rc_parse(buf, n, 256, &d), IB_RC_BAD_PAD);
	buf[8] = IB_OP_RC_SEND_FIRST;
	reseal(buf, n);
	assert_int_equal(ib_rc_parse(buf, n, 0, &d), IB_RC_BAD_PAD);
	buf[9] = 0;
	reseal(buf, n);
	assert_int_equal(ib_rc_parse(buf, n, 0, &d), IB_RC_OK);
	assert_int_equal(ib_rc_parse(buf, n, 256, &d), IB_RC_BAD_LEN);

	assert_string_equal(ib_rc_strerror(IB_RC_BAD_PAD), "bad_pad");
	assert_string_equal(ib_rc_strerror(IB_RC_BAD_ICRC), "bad_icrc");
	assert_string_equal(ib_rc_strerror(IB_RC_ERR_MAX), "unknown");
}

static void test_psn_arith(void **state)
{
	(void)state;
	assert_int_equal(ib_psn_add(0xffffff, 1), 0);
	assert_int_equal(ib_psn_add(0xfffff0, 0x20), 0x10);
	assert_int_equal(ib_psn_dist(0xfffff0, 0x10), 0x20);
	assert_int_equal(ib_psn_dist(0x10, 0xfffff0), 0xffffe0);
	assert_int_equal(ib_psn_dist(5, 5), 0);
	assert_true(ib_psn_cmp(0, 0xffffff) > 0);	/* 0 follows 2^24-1 */
	assert_true(ib_psn_cmp(0xffffff, 0) < 0);
	assert_int_equal(ib_psn_cmp(0x123456, 0x123456), 0);
	assert_int_equal(ib_psn_cmp(0x10, 0xfffff0), 0x20);
	assert_int_equal(ib_psn_cmp(0xfffff0, 0x10), -0x20);
	/* half the space apart: 2^23 ahead reads as behind */
	assert_true(ib_psn_cmp(0x800000, 0) < 0);
	assert_true(ib_psn_cmp(0x7fffff, 0) > 0);
	/* bits above 24 are ignored */
	assert_int_equal(ib_psn_cmp(0x1000005, 5), 0);
}

static void test_rnr_timer(void **state)
{
	(void)state;
	assert_int_equal(ib_rnr_timer_usec(0), 655360);
	assert_int_equal(ib_rnr_timer_usec(1), 10);
	assert_int_equal(ib_rnr_timer_usec(5), 60);
	assert_int_equal(ib_rnr_timer_usec(14), 1280);
	assert_int_equal(ib_rnr_timer_usec(18), 5120);
	assert_int_equal(ib_rnr_timer_usec(31), 491520);
	assert_int_equal(ib_rnr_timer_usec(32), 0);
	assert_int_equal(ib_rnr_timer_code(1), 1);
	assert_int_equal(ib_rnr_timer_code(10), 1);
	assert_int_equal(ib_rnr_timer_code(11), 2);
	assert_int_equal(ib_rnr_timer_code(1000), 14);
	assert_int_equal(ib_rnr_timer_code(491520), 31);
	assert_int_equal(ib_rnr_timer_code(500000), 0);
	assert_int_equal(ib_rnr_timer_code(700000), 31);
	assert_int_equal(ib_mtu_bytes(1), 256);
	assert_int_equal(ib_mtu_bytes(5), 4096);
	assert_int_equal(ib_mtu_bytes(0), 0);
	assert_int_equal(ib_mtu_bytes(6), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_write_only_vector),
		cmocka_unit_test(test_ack_vectors),
		cmocka_unit_test(test_opcode_table),
		cmocka_unit_test(test_send_sequence_grh),
		cmocka_unit_test(test_rejects),
		cmocka_unit_test(test_psn_arith),
		cmocka_unit_test(test_rnr_timer),
	};

	return cmocka_run_group_tests_name("ib_rc", tests, NULL, NULL);
}

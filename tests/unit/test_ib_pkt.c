// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* LRH/GRH/BTH/DETH codec, ICRC and VCRC against captured packets. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "fabric/ib_pkt.h"
#include "tests/unit/vectors.h"

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

/* Recompute the CRCs at the end of a packet after a test edited it:
 * the VCRC always, the ICRC too when asked. */
static void reseal(uint8_t *p, size_t n, int icrc_too)
{
	uint16_t v;

	if (icrc_too) {
		uint32_t c = ib_icrc_native(p, n - 6);

		p[n - 6] = (uint8_t)c;
		p[n - 5] = (uint8_t)(c >> 8);
		p[n - 4] = (uint8_t)(c >> 16);
		p[n - 3] = (uint8_t)(c >> 24);
	}
	v = ib_vcrc(p, n - 2);
	p[n - 2] = (uint8_t)v;
	p[n - 1] = (uint8_t)(v >> 8);
}

/* zlib's published check value for "123456789" */
static void test_crc32_check_value(void **state)
{
	(void)state;
	assert_int_equal(ib_crc32(0, "123456789", 9), 0xCBF43926u);
}

/* Bit-at-a-time references, written from the polynomials alone. */
static uint32_t ref_crc32(const uint8_t *p, size_t n)
{
	uint32_t c = 0xffffffffu;
	int k;

	while (n--) {
		c ^= *p++;
		for (k = 0; k < 8; k++)
			c = (c & 1) ? (c >> 1) ^ 0xEDB88320u : c >> 1;
	}
	return ~c;
}

static uint16_t ref_crc16(const uint8_t *p, size_t n)
{
	uint16_t c = 0xffff;
	int k;

	while (n--) {
		c ^= *p++;
		for (k = 0; k < 8; k++)
			c = (c & 1) ? (uint16_t)((c >> 1) ^ 0xD008u) :
				      (uint16_t)(c >> 1);
	}
	return (uint16_t)~c;
}

/* The fast CRCs (tables eight bytes a step, and carry-less folding where
 * the CPU has it) agree with the bitwise ones for every length and
 * alignment, and a running CRC-32 can be split anywhere. */
static void crc_paths(void)
{
	static uint8_t buf[4400], copy[4400];
	size_t len, off, cut;
	uint32_t x = 12345;

	for (len = 0; len < sizeof(buf); len++) {
		x = x * 1103515245u + 12345u;
		buf[len] = (uint8_t)(x >> 16);
	}
	for (off = 0; off < 16; off++) {
		for (len = 0; len + off <= 300; len++) {
			assert_int_equal(ib_crc32(0, buf + off, len),
					 ref_crc32(buf + off, len));
			assert_int_equal(ib_vcrc(buf + off, len),
					 ref_crc16(buf + off, len));
		}
	}
	/* packet sizes up to a 4096-byte MTU and beyond; the copying
	 * CRC copies every byte and nothing more */
	for (len = 0; len + 16 <= sizeof(buf); len += len < 300 ? 1 : 37) {
		off = len % 16;
		if (len >= 300) {
			assert_int_equal(ib_crc32(0, buf + off, len),
					 ref_crc32(buf + off, len));
			assert_int_equal(ib_vcrc(buf + off, len),
					 ref_crc16(buf + off, len));
		}
		memset(copy, 0xa5, sizeof(copy));
		assert_int_equal(ib_crc32_copy(0, copy + 1, buf + off, len),
				 ref_crc32(buf + off, len));
		assert_memory_equal(copy + 1, buf + off, len);
		assert_int_equal(copy[0], 0xa5);
		assert_int_equal(copy[len + 1], 0xa5);
		memset(copy, 0xa5, sizeof(copy));
		assert_int_equal(ib_vcrc_copy(copy + 1, buf + off, len),
				 ref_crc16(buf + off, len));
		assert_memory_equal(copy + 1, buf + off, len);
		assert_int_equal(copy[0], 0xa5);
		assert_int_equal(copy[len + 1], 0xa5);
	}
	for (cut = 0; cut <= 200; cut++)
		assert_int_equal(ib_crc32(ib_crc32(0, buf, cut), buf + cut,
					  200 - cut), ref_crc32(buf, 200));
	/* all ones (the state the folding starts from) and all zeros */
	memset(buf, 0xff, 1000);
	assert_int_equal(ib_crc32(0, buf, 1000), ref_crc32(buf, 1000));
	assert_int_equal(ib_vcrc(buf, 1000), ref_crc16(buf, 1000));
	memset(buf, 0, 1000);
	assert_int_equal(ib_crc32(0, buf, 1000), ref_crc32(buf, 1000));
	assert_int_equal(ib_vcrc(buf, 1000), ref_crc16(buf, 1000));
}

/*
 * Each CRC path on its own, asking which one is in force: ib_crc_clmul()
 * caps a request at what the CPU has, and a path the CPU lacks is shown
 * as skipped rather than passed by the tables again.
 */
static void crc_path(int level, const char *what)
{
	int was = ib_crc_clmul(level), got = ib_crc_clmul(-1);

	if (got != level) {
		ib_crc_clmul(was);
		print_message("CPU lacks %s (best here: %d)\n", what, got);
		skip();
	}
	crc_paths();
	assert_int_equal(ib_crc_clmul(-1), level);
	ib_crc_clmul(was);
}

static void test_crc_tables(void **state)
{
	(void)state;
	crc_path(0, "nothing");
}

static void test_crc_clmul128(void **state)
{
	(void)state;
	crc_path(1, "PCLMULQDQ (128-bit folding)");
}

static void test_crc_clmul256(void **state)
{
	(void)state;
	crc_path(2, "VPCLMULQDQ with AVX2 (256-bit folding)");
}

/*
 * RoCEv2 CNP captured on a ConnectX-4 Lx (scapy test/contrib/roce.uts):
 * Ethernet + IPv4 + UDP + BTH (byte 4 = 0x40, BECN) + 16 bytes + ICRC.
 */
static void test_icrc_rocev2_hw_capture(void **state)
{
	uint8_t f[128];
	size_t n = tv_unhex("e41d2dab2bc27cfe90643b32080045c2003c718c40004011"
			 "91610a0011010a001201000012b7002800008100ffff4000"
			 "0118000000000000000000000000000000000000000082fd"
			 "002a", f, sizeof(f));

	(void)state;
	assert_int_equal(n, 74);
	assert_int_equal(ib_icrc_rocev2_ipv4(f + 14, n - 14 - 4),
			 le32(f + n - 4));
}

/* UC SEND_ONLY over RoCEv2 from the same test file. */
static void test_icrc_rocev2_uc_send(void **state)
{
	uint8_t f[128];
	size_t n = tv_unhex("45010040047840004011b4d5c0a80007c0a80007c00012b7"
			 "002caca22460ffff000000d300cf17104630818be28935d9"
			 "0e9a95505401be885e50000078f353f3", f, sizeof(f));

	(void)state;
	assert_int_equal(ib_icrc_rocev2_ipv4(f, n - 4), le32(f + n - 4));
	/* a flipped payload bit must change it */
	f[40] ^= 1;
	assert_int_not_equal(ib_icrc_rocev2_ipv4(f, n - 4), le32(f + n - 4));
}

/* Native RC ACK, LRH only, from a real IB capture: ICRC and VCRC. */
static void test_native_local_capture(void **state)
{
	uint8_t f[64];
	size_t n = tv_unhex("00020004000700011140ffff0087040800d40a551f000001"
			 "a80355503081", f, sizeof(f));
	uint16_t vcrc;

	(void)state;
	assert_int_equal(n, 30);
	assert_int_equal(ib_icrc_native(f, n - 6), le32(f + n - 6));
	vcrc = (uint16_t)(f[n - 2] | f[n - 1] << 8);
	assert_int_equal(ib_vcrc(f, n - 2), vcrc);
}

/* Native RC RDMA WRITE with VL 7: the VL nibble must be masked. */
static void test_native_vl_masked(void **state)
{
	uint8_t f[96];
	size_t n = tv_unhex("7012375c000e17d20a20248700 87b1b3000dec2a01710a1c01"
			 "5d400238f27a050000000ebb884d85fd5cfba4728bc0690e"
			 "d400009625b75a", f, sizeof(f));

	(void)state;
	assert_int_equal(ib_icrc_native(f, n - 4), le32(f + n - 4));
}

/* UD multicast with GRH from a real capture (IPoIB ARP). */
static const char *grh_frame =
	"0003c000002100046000000000541b00fe800000000000000002c9020024f636"
	"ff12401bffff000000000000ffffffff6440ffff00ffffff000020af00000b1b"
	"0000040508060000002008001404000180000405fe800000000000000002c902"
	"0024f6360a00012200000000000000000000000000000000000000000a00003a"
	"bd6bd6a88883";

static void test_native_grh_capture(void **state)
{
	uint8_t f[160];
	size_t n = tv_unhex(grh_frame, f, sizeof(f));
	struct ib_ud u;

	(void)state;
	assert_int_equal(n, 134);
	assert_int_equal(ib_icrc_native(f, n - 6), le32(f + n - 6));
	assert_int_equal(ib_vcrc(f, n - 2), f[n - 2] | f[n - 1] << 8);
	/* and the whole parse agrees with what tshark shows for it */
	assert_int_equal(ib_ud_parse(f, n, &u), IB_PKT_OK);
	assert_true(u.has_grh);
	assert_int_equal(u.lrh.dlid, 0xc000);
	assert_int_equal(u.lrh.slid, 0x0004);
	assert_int_equal(u.lrh.pktlen, 0x21);
	assert_int_equal(u.grh.dgid.raw[0], 0xff);
	assert_int_equal(u.grh.dgid.raw[1], 0x12);
	assert_int_equal(u.bth.opcode, IB_OP_UD_SEND_ONLY);
	assert_int_equal(u.bth.pkey, 0xffff);
	assert_int_equal(u.bth.destqp, 0xffffff);
	assert_int_equal(u.deth.qkey, 0x0b1b);
	assert_int_equal(u.deth.srcqp, 0x000405);
	/* IPoIB header + ARP (28) + zero fill the sender added */
	assert_int_equal(u.payload_len, 60);
	assert_int_equal(u.payload[0], 0x08);	/* IPoIB: ARP ethertype */
	assert_int_equal(u.payload[1], 0x06);
}

static void build_sample(struct ib_ud *u, const uint8_t *payload, size_t len)
{
	memset(u, 0, sizeof(*u));
	u->lrh.sl = 3;
	u->lrh.dlid = 0x0012;
	u->lrh.slid = 0x0034;
	u->bth.pkey = 0x8001;
	u->bth.destqp = 0x123456;
	u->bth.psn = 0xabcdef;
	u->deth.qkey = 0x0b1b;
	u->deth.srcqp = 0x000049;
	u->payload = payload;
	u->payload_len = len;
}

static void test_build_parse_roundtrip(void **state)
{
	uint8_t buf[IB_MAX_PKT], payload[37];
	struct ib_ud u, d;
	size_t n, i;

	(void)state;
	for (i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(i * 7);
	build_sample(&u, payload, sizeof(payload));
	n = ib_ud_build(&u, buf, sizeof(buf));
	/* 8 + 12 + 8 + 37 + 3 pad + 4 + 2 */
	assert_int_equal(n, 74);
	assert_int_equal(buf[1] & 3, IB_LNH_IBA_LOCAL);
	assert_int_equal(ib_ud_parse(buf, n, &d), IB_PKT_OK);
	assert_int_equal(d.lrh.sl, 3);
	assert_int_equal(d.lrh.dlid, 0x12);
	assert_int_equal(d.lrh.slid, 0x34);
	assert_int_equal(d.lrh.pktlen, (n - 2) / 4);
	assert_int_equal(d.bth.pkey, 0x8001);
	assert_int_equal(d.bth.destqp, 0x123456);
	assert_int_equal(d.bth.psn, 0xabcdef);
	assert_int_equal(d.bth.padcnt, 3);
	assert_int_equal(d.deth.qkey, 0x0b1b);
	assert_int_equal(d.deth.srcqp, 0x49);
	assert_int_equal(d.payload_len, sizeof(payload));
	assert_memory_equal(d.payload, payload, sizeof(payload));
}

static void test_build_parse_grh(void **state)
{
	uint8_t buf[IB_MAX_PKT], payload[64] = { 1, 2, 3 };
	struct ib_ud u, d;
	size_t n;

	(void)state;
	build_sample(&u, payload, sizeof(payload));
	u.has_grh = 1;
	u.lrh.dlid = 0xc001;
	u.grh.hoplmt = 0xff;
	u.grh.tclass = 0x12;
	u.grh.flow_label = 0xabcde;
	u.grh.dgid.raw[0] = 0xff;
	u.grh.dgid.raw[15] = 0x01;
	u.grh.sgid.raw[0] = 0xfe;
	u.grh.sgid.raw[1] = 0x80;
	n = ib_ud_build(&u, buf, sizeof(buf));
	assert_int_equal(n, 8 + 40 + 12 + 8 + 64 + 6);
	assert_int_equal(ib_ud_parse(buf, n, &d), IB_PKT_OK);
	assert_true(d.has_grh);
	assert_int_equal(d.grh.paylen, 12 + 8 + 64 + 4);
	assert_int_equal(d.grh.tclass, 0x12);
	assert_int_equal(d.grh.flow_label, 0xabcde);
	assert_memory_equal(d.grh.dgid.raw, u.grh.dgid.raw, 16);
	/* variant fields may change in flight without breaking the ICRC */
	buf[8 + 7] = 0x01;	/* HopLmt */
	buf[0] = 0x30;		/* VL 3 */
	buf[2] ^= 0xff;		/* LRH rewritten by a router */
	reseal(buf, n, 0);
	assert_int_equal(ib_ud_parse(buf, n, &d), IB_PKT_OK);
}

static void test_parse_rejects(void **state)
{
	uint8_t buf[IB_MAX_PKT], bad[IB_MAX_PKT], payload[16] = { 9 };
	struct ib_ud u, d;
	size_t n, i;

	(void)state;
	build_sample(&u, payload, sizeof(payload));
	n = ib_ud_build(&u, buf, sizeof(buf));

	/* every truncation is refused, never read past the end */
	for (i = 0; i < n; i++)
		assert_int_not_equal(ib_ud_parse(buf, i, &d), IB_PKT_OK);
	assert_int_equal(ib_ud_parse(buf, 10, &d), IB_PKT_TRUNCATED);
	assert_int_equal(ib_ud_parse(buf, n - 4, &d), IB_PKT_BAD_PKTLEN);

	/* flipped payload bit: VCRC first */
	memcpy(bad, buf, n);
	bad[30] ^= 0x10;
	assert_int_equal(ib_ud_parse(bad, n, &d), IB_PKT_BAD_VCRC);

	/* payload change with a fixed-up VCRC: ICRC catches it */
	reseal(bad, n, 0);
	assert_int_equal(ib_ud_parse(bad, n, &d), IB_PKT_BAD_ICRC);

	/* LVer 1 */
	build_sample(&u, payload, sizeof(payload));
	u.lrh.lver = 1;
	n = ib_ud_build(&u, bad, sizeof(bad));
	assert_int_equal(ib_ud_parse(bad, n, &d), IB_PKT_BAD_LVER);

	/* RC opcode is not a UD packet */
	build_sample(&u, payload, sizeof(payload));
	n = ib_ud_build(&u, bad, sizeof(bad));
	bad[8] = 0x04;
	reseal(bad, n, 1);
	assert_int_equal(ib_ud_parse(bad, n, &d), IB_PKT_BAD_OPCODE);

	/* cap too small */
	assert_int_equal(ib_ud_build(&u, bad, 20), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_crc32_check_value),
		cmocka_unit_test(test_crc_tables),
		cmocka_unit_test(test_crc_clmul128),
		cmocka_unit_test(test_crc_clmul256),
		cmocka_unit_test(test_icrc_rocev2_hw_capture),
		cmocka_unit_test(test_icrc_rocev2_uc_send),
		cmocka_unit_test(test_native_local_capture),
		cmocka_unit_test(test_native_vl_masked),
		cmocka_unit_test(test_native_grh_capture),
		cmocka_unit_test(test_build_parse_roundtrip),
		cmocka_unit_test(test_build_parse_grh),
		cmocka_unit_test(test_parse_rejects),
	};

	return cmocka_run_group_tests_name("ib_pkt", tests, NULL, NULL);
}

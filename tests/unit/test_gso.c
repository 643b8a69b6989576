// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* TCP segmentation / coalescing for virtio-net headers (inet/gso.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "inet/gso.h"

/* ---- references written from RFC 791/793/1071/8200 alone ---------------- */

static unsigned int rd16(const uint8_t *p)
{
	return (unsigned int)p[0] << 8 | p[1];
}

static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static void wr16(uint8_t *p, unsigned int v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* the ones' complement sum of big-endian 16-bit words, byte by byte */
static uint32_t ref_sum(uint32_t s, const uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i + 1 < n; i += 2)
		s += rd16(p + i);
	if (n & 1)
		s += (uint32_t)p[n - 1] << 8;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return s;
}

/* does a TCP (or UDP, proto) packet's checksum verify? */
static int ref_l4_ok(const uint8_t *ip, size_t len, int proto)
{
	uint8_t ph[40];
	uint32_t s;
	size_t iphl;

	if (ip[0] >> 4 == 6) {
		iphl = 40;
		s = ref_sum(0, ip + 8, 32);
		memset(ph, 0, 8);
		ph[2] = (uint8_t)((len - iphl) >> 8);
		ph[3] = (uint8_t)(len - iphl);
		ph[7] = (uint8_t)proto;
		s = ref_sum(s, ph, 8);
	} else {
		iphl = (size_t)(ip[0] & 15) * 4;
		s = ref_sum(0, ip + 12, 8);
		ph[0] = 0;
		ph[1] = (uint8_t)proto;
		ph[2] = (uint8_t)((len - iphl) >> 8);
		ph[3] = (uint8_t)(len - iphl);
		s = ref_sum(s, ph, 4);
	}
	return ref_sum(s, ip + iphl, len - iphl) == 0xffff;
}

static int ref_ipv4_hdr_ok(const uint8_t *ip)
{
	return ref_sum(0, ip, (size_t)(ip[0] & 15) * 4) == 0xffff;
}

/* ---- packet builders --------------------------------------------------- */

#define PAY 10000
#define MSS 1448

static size_t build_tcp(uint8_t *p, int v6, size_t payload, uint8_t flags,
			uint32_t seq)
{
	size_t iphl = v6 ? 40 : 20, thl = 32, i;
	uint8_t *t = p + iphl;

	memset(p, 0, iphl + thl);
	if (v6) {
		p[0] = 0x60;
		wr16(p + 4, (unsigned int)(thl + payload));
		p[6] = 6;
		p[7] = 64;
		p[8] = 0xfd;
		p[23] = 1;
		p[24] = 0xfd;
		p[39] = 2;
	} else {
		p[0] = 0x45;
		wr16(p + 2, (unsigned int)(iphl + thl + payload));
		wr16(p + 4, 0x1234);
		p[6] = 0x40;		/* DF */
		p[8] = 64;
		p[9] = 6;
		p[12] = 10; p[15] = 1;
		p[16] = 10; p[19] = 2;
	}
	wr16(t, 40000);
	wr16(t + 2, 5201);
	t[4] = (uint8_t)(seq >> 24);
	t[5] = (uint8_t)(seq >> 16);
	t[6] = (uint8_t)(seq >> 8);
	t[7] = (uint8_t)seq;
	t[11] = 7;			/* ACK number */
	t[12] = (uint8_t)((thl / 4) << 4);
	t[13] = flags;
	wr16(t + 14, 512);
	t[20] = 1; t[21] = 1; t[22] = 8; t[23] = 10;	/* NOP NOP TS */
	t[27] = 99; t[31] = 42;
	for (i = 0; i < payload; i++)
		p[iphl + thl + i] = (uint8_t)(i * 7 + (i >> 8));
	return iphl + thl + payload;
}

/* fill in correct checksums (reference) */
static void seal(uint8_t *p, size_t len)
{
	size_t iphl = p[0] >> 4 == 6 ? 40 : (size_t)(p[0] & 15) * 4;
	uint8_t *t = p + iphl;
	uint32_t s;

	if (p[0] >> 4 == 4) {
		p[10] = p[11] = 0;
		wr16(p + 10, ~ref_sum(0, p, iphl) & 0xffff);
	}
	t[16] = t[17] = 0;
	/* the verifying sum with a zero field is the complement we want */
	s = 0;
	{
		uint8_t ph[8] = { 0 };

		if (iphl == 40) {
			s = ref_sum(0, p + 8, 32);
			ph[2] = (uint8_t)((len - iphl) >> 8);
			ph[3] = (uint8_t)(len - iphl);
			ph[7] = 6;
			s = ref_sum(s, ph, 8);
		} else {
			s = ref_sum(0, p + 12, 8);
			ph[1] = 6;
			ph[2] = (uint8_t)((len - iphl) >> 8);
			ph[3] = (uint8_t)(len - iphl);
			s = ref_sum(s, ph, 4);
		}
	}
	s = ref_sum(s, t, len - iphl);
	wr16(t + 16, ~s & 0xffff);
}

struct sink {
	unsigned int n;
	uint8_t pkt[64][GSO_MAX_PKT];
	size_t len[64];
	struct gso_vnet_hdr h[64];
};

static struct sink sink;

static void emit(void *arg, const uint8_t *p, size_t len)
{
	struct sink *s = arg;

	assert_true(s->n < 64);
	memcpy(s->pkt[s->n], p, len);
	s->len[s->n] = len;
	memset(&s->h[s->n], 0, sizeof(s->h[0]));
	s->n++;
}

static void out(void *arg, const struct gso_vnet_hdr *h, const uint8_t *p,
		size_t len)
{
	struct sink *s = arg;

	emit(arg, p, len);
	s->h[s->n - 1] = *h;
}

static uint8_t big[GSO_MAX_PKT];

/* ---- tests --------------------------------------------------------------- */

static void check_segments(int v6, uint8_t flags)
{
	size_t iphl = v6 ? 40 : 20, hlen = iphl + 32, len, off = 0;
	struct gso_vnet_hdr h = { 0 };
	unsigned int i, want = (PAY + MSS - 1) / MSS;
	uint8_t ref[GSO_MAX_PKT];

	len = build_tcp(big, v6, PAY, flags, 0xfffff000u);
	memcpy(ref, big, len);
	h.gso_type = v6 ? GSO_TYPE_TCPV6 : GSO_TYPE_TCPV4;
	h.gso_size = MSS;
	h.flags = GSO_F_NEEDS_CSUM;
	h.csum_start = (uint16_t)iphl;
	h.csum_offset = 16;
	h.hdr_len = (uint16_t)hlen;
	sink.n = 0;
	assert_int_equal(gso_segment(&h, big, len, emit, &sink), GSO_OK);
	assert_int_equal(sink.n, want);
	for (i = 0; i < sink.n; i++) {
		const uint8_t *s = sink.pkt[i], *t = s + iphl;
		size_t n = i + 1 < want ? MSS : PAY - off;
		uint8_t f = flags;

		assert_int_equal(sink.len[i], hlen + n);
		if (v6) {
			assert_int_equal(rd16(s + 4), 32 + n);
		} else {
			assert_int_equal(rd16(s + 2), hlen + n);
			assert_int_equal(rd16(s + 4), 0x1234 + i);
			assert_true(ref_ipv4_hdr_ok(s));
		}
		assert_int_equal(rd32(t + 4), 0xfffff000u + (uint32_t)off);
		if (i + 1 < want)
			f &= (uint8_t)~0x09;	/* FIN, PSH: last only */
		if (i)
			f &= (uint8_t)~0x80;	/* CWR: first only */
		assert_int_equal(t[13], f);
		assert_memory_equal(t + 20, ref + iphl + 20, 12);
		assert_memory_equal(s + hlen, ref + hlen + off, n);
		assert_true(ref_l4_ok(s, sink.len[i], 6));
		off += n;
	}
	assert_int_equal(off, PAY);
}

static void test_segment_v4(void **state)
{
	(void)state;
	check_segments(0, 0x10 | 0x08);
	check_segments(0, 0x10 | 0x80 | 0x01);
}

static void test_segment_v6(void **state)
{
	(void)state;
	check_segments(1, 0x10 | 0x08);
}

/* no GSO: a partial checksum (UDP here) is completed; none: untouched */
static void test_partial_csum(void **state)
{
	uint8_t p[60] = { 0x45, 0, 0, 48, 0, 0, 0, 0, 64, 17, 0, 0,
			  10, 0, 0, 1, 10, 0, 0, 2 };
	struct gso_vnet_hdr h = { 0 };
	uint8_t ph[4] = { 0, 17, 0, 28 };
	uint32_t s;
	size_t i;

	(void)state;
	wr16(p + 20, 1000);
	wr16(p + 22, 2000);
	wr16(p + 24, 28);
	for (i = 28; i < 48; i++)
		p[i] = (uint8_t)i;
	/* what the kernel leaves: the pseudo-header sum, not complemented */
	s = ref_sum(ref_sum(0, p + 12, 8), ph, 4);
	wr16(p + 26, s);
	h.flags = GSO_F_NEEDS_CSUM;
	h.csum_start = 20;
	h.csum_offset = 6;
	sink.n = 0;
	assert_int_equal(gso_segment(&h, p, 48, emit, &sink), GSO_OK);
	assert_int_equal(sink.n, 1);
	assert_true(ref_l4_ok(sink.pkt[0], 48, 17));
	/* no flags: emitted byte for byte */
	memset(&h, 0, sizeof(h));
	sink.n = 0;
	p[26] = 0x55;
	assert_int_equal(gso_segment(&h, p, 48, emit, &sink), GSO_OK);
	assert_int_equal(sink.len[0], 48);
	assert_memory_equal(sink.pkt[0], p, 48);
}

static void test_segment_rejects(void **state)
{
	struct gso_vnet_hdr h = { 0 };
	size_t len;

	(void)state;
	len = build_tcp(big, 0, 3000, 0x10, 1);
	h.gso_type = GSO_TYPE_TCPV4;
	h.gso_size = 0;
	sink.n = 0;
	assert_int_equal(gso_segment(&h, big, len, emit, &sink),
			 GSO_BAD_HEADER);
	h.gso_size = MSS;
	h.gso_type = GSO_TYPE_TCPV6;	/* IPv4 inside */
	assert_int_equal(gso_segment(&h, big, len, emit, &sink),
			 GSO_BAD_PACKET);
	h.gso_type = GSO_TYPE_UDP;
	assert_int_equal(gso_segment(&h, big, len, emit, &sink),
			 GSO_UNSUPPORTED);
	h.gso_type = GSO_TYPE_TCPV4 | GSO_TYPE_ECN;
	assert_int_equal(gso_segment(&h, big, len, emit, &sink),
			 GSO_UNSUPPORTED);
	h.gso_type = GSO_TYPE_TCPV4;
	assert_int_equal(gso_segment(&h, big, 30, emit, &sink),
			 GSO_BAD_PACKET);	/* total length disagrees */
	big[20 + 12] = 0xf0;			/* data offset 60 */
	wr16(big + 2, 60);
	assert_int_equal(gso_segment(&h, big, 60, emit, &sink),
			 GSO_BAD_PACKET);
	memset(&h, 0, sizeof(h));
	h.flags = GSO_F_NEEDS_CSUM;
	h.csum_start = 50;
	h.csum_offset = 9;
	assert_int_equal(gso_segment(&h, big, 60, emit, &sink),
			 GSO_BAD_HEADER);
	assert_int_equal(gso_segment(&h, big, 0, emit, &sink),
			 GSO_BAD_PACKET);
	assert_int_equal(sink.n, 0);
}

static struct gso_gro gro;

/* segments cut by gso_segment come back together as the original */
static void roundtrip(int v6)
{
	size_t iphl = v6 ? 40 : 20, hlen = iphl + 32, len;
	struct gso_vnet_hdr h = { 0 };
	static struct sink segs;
	uint8_t ref[GSO_MAX_PKT], *m;
	unsigned int i;

	len = build_tcp(big, v6, PAY, 0x10 | 0x08, 5000);
	seal(big, len);
	memcpy(ref, big, len);
	h.gso_type = v6 ? GSO_TYPE_TCPV6 : GSO_TYPE_TCPV4;
	h.gso_size = MSS;
	segs.n = 0;
	assert_int_equal(gso_segment(&h, big, len, emit, &segs), GSO_OK);
	memset(&gro, 0, sizeof(gro));
	sink.n = 0;
	for (i = 0; i < segs.n; i++)
		gso_gro_receive(&gro, segs.pkt[i], segs.len[i], out, &sink);
	gso_gro_flush(&gro, out, &sink);	/* nothing left: PSH ended it */
	assert_int_equal(sink.n, 1);
	assert_int_equal(gro.merged, segs.n);
	assert_int_equal(sink.len[0], len);
	m = sink.pkt[0];
	assert_int_equal(sink.h[0].gso_type,
			 v6 ? GSO_TYPE_TCPV6 : GSO_TYPE_TCPV4);
	assert_int_equal(sink.h[0].gso_size, MSS);
	assert_int_equal(sink.h[0].hdr_len, hlen);
	assert_int_equal(sink.h[0].flags, GSO_F_NEEDS_CSUM);
	assert_int_equal(sink.h[0].csum_start, iphl);
	assert_int_equal(sink.h[0].csum_offset, 16);
	if (!v6)
		assert_true(ref_ipv4_hdr_ok(m));
	assert_memory_equal(m + iphl, ref + iphl, 16);	/* ports..window */
	assert_memory_equal(m + hlen - 12, ref + hlen - 12, 12 + PAY);
	/* completing the partial checksum as a device would gives a
	 * packet whose checksum verifies */
	memset(&h, 0, sizeof(h));
	h.flags = GSO_F_NEEDS_CSUM;
	h.csum_start = (uint16_t)iphl;
	h.csum_offset = 16;
	sink.n = 0;
	memcpy(big, m, len);
	assert_int_equal(gso_segment(&h, big, len, emit, &sink), GSO_OK);
	assert_true(ref_l4_ok(sink.pkt[0], len, 6));
}

static void test_gro_roundtrip(void **state)
{
	(void)state;
	roundtrip(0);
	roundtrip(1);
}

/* four MSS segments at seq; returns their total length in *lens */
static unsigned int make_train(struct sink *s, int v6, uint32_t seq,
			       unsigned int n, size_t pay)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		s->len[s->n] = build_tcp(s->pkt[s->n], v6, pay, 0x10,
					 seq + (uint32_t)(i * pay));
		seal(s->pkt[s->n], s->len[s->n]);
		s->n++;
	}
	return n;
}

static void feed(struct sink *in)
{
	unsigned int i;

	memset(&gro, 0, sizeof(gro));
	sink.n = 0;
	for (i = 0; i < in->n; i++)
		gso_gro_receive(&gro, in->pkt[i], in->len[i], out, &sink);
	gso_gro_flush(&gro, out, &sink);
}

static void test_gro_rules(void **state)
{
	static struct sink in;

	(void)state;
	/* a corrupted segment is passed on unmerged, and counted */
	in.n = 0;
	make_train(&in, 0, 100, 4, 1000);
	in.pkt[2][500] ^= 1;
	feed(&in);
	assert_int_equal(sink.n, 3);	/* [0,1] merged, 2 alone, 3 alone */
	assert_int_equal(gro.bad_csum, 1);
	assert_int_equal(sink.h[0].gso_type, GSO_TYPE_TCPV4);
	assert_int_equal(sink.h[1].gso_type, GSO_TYPE_NONE);
	assert_memory_equal(sink.pkt[1], in.pkt[2], in.len[2]);

	/* a gap in sequence numbers ends a train */
	in.n = 0;
	make_train(&in, 0, 100, 2, 1000);
	make_train(&in, 0, 5000, 2, 1000);
	feed(&in);
	assert_int_equal(sink.n, 2);
	assert_int_equal(sink.len[0], 52 + 2000);

	/* a short segment is the last of its train */
	in.n = 0;
	make_train(&in, 0, 100, 1, 1000);
	make_train(&in, 0, 1100, 1, 500);
	make_train(&in, 0, 1600, 1, 500);
	feed(&in);
	assert_int_equal(sink.n, 2);
	assert_int_equal(sink.len[0], 52 + 1500);
	assert_int_equal(sink.h[1].gso_type, GSO_TYPE_NONE);

	/* another connection (port) and another family do not merge */
	in.n = 0;
	make_train(&in, 0, 100, 1, 1000);
	make_train(&in, 0, 1100, 1, 1000);
	in.pkt[1][20 + 1] ^= 1;
	seal(in.pkt[1], in.len[1]);
	make_train(&in, 1, 2100, 1, 1000);
	feed(&in);
	assert_int_equal(sink.n, 3);
	assert_int_equal(gro.merged, 0);

	/* SYN, FIN, no payload, not TCP: passed on as they are */
	in.n = 0;
	make_train(&in, 0, 100, 1, 1000);
	in.pkt[0][20 + 13] = 0x12;
	seal(in.pkt[0], in.len[0]);
	make_train(&in, 0, 1100, 1, 0);
	make_train(&in, 0, 1100, 1, 1000);
	in.pkt[2][9] = 17;
	feed(&in);
	assert_int_equal(sink.n, 3);
	assert_int_equal(gro.merged, 0);
	assert_int_equal(sink.h[0].gso_type, GSO_TYPE_NONE);
	assert_memory_equal(sink.pkt[2], in.pkt[2], in.len[2]);

	/* a segment no other of its size could join (a connected-mode
	 * frame of 64 KB) goes on at once, as it is, its TCP checksum left
	 * to the kernel (not counted here even when bad); the next one too */
	in.n = 0;
	make_train(&in, 0, 100, 2, 40000);
	in.pkt[1][30000] ^= 1;
	feed(&in);
	assert_int_equal(sink.n, 2);
	assert_int_equal(gro.merged, 0);
	assert_int_equal(gro.bad_csum, 0);
	assert_int_equal(sink.h[0].gso_type, GSO_TYPE_NONE);
	assert_int_equal(sink.h[0].flags, 0);
	assert_int_equal(sink.len[0], in.len[0]);
	assert_memory_equal(sink.pkt[0], in.pkt[0], in.len[0]);
	assert_memory_equal(sink.pkt[1], in.pkt[1], in.len[1]);
	/* ... and one just small enough that another may join still
	 * starts a train */
	in.n = 0;
	make_train(&in, 0, 100, 2, (GSO_MAX_PKT - 52) / 2);
	feed(&in);
	assert_int_equal(sink.n, 1);
	assert_int_equal(gro.merged, 2);

	/* garbage of every length below a header does not crash */
	memset(&gro, 0, sizeof(gro));
	sink.n = 0;
	gso_gro_receive(&gro, big, 0, out, &sink);
	gso_gro_receive(&gro, big, 19, out, &sink);
	assert_int_equal(sink.n, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_segment_v4),
		cmocka_unit_test(test_segment_v6),
		cmocka_unit_test(test_partial_csum),
		cmocka_unit_test(test_segment_rejects),
		cmocka_unit_test(test_gro_roundtrip),
		cmocka_unit_test(test_gro_rules),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * IPv4 fragmentation (inet/frag.c): fragments that reassemble to the
 * original, with offsets, MF and only the copied options as RFC 791 says;
 * refusals of DF, bad headers and MTUs too small.  Checksums are this
 * file's own.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "inet/frag.h"
#include "tests/unit/vectors.h"

static unsigned int rd16(const uint8_t *p)
{
	return (unsigned int)p[0] << 8 | p[1];
}

/* the fragments as they come, and the payload put back together */
static struct {
	unsigned int n;
	uint8_t data[65536];
	size_t end;
	uint8_t hdr[8][60];
	size_t hl[8], len[8];
} got;

static void collect(void *arg, const uint8_t *f, size_t n)
{
	size_t hl = (size_t)(f[0] & 15) * 4, off = (rd16(f + 6) & 0x1fff) * 8u;

	(void)arg;
	assert_true(got.n < 8);
	assert_int_equal(tv_csum(f, hl, 0), 0);
	assert_int_equal(rd16(f + 2), n);
	memcpy(got.hdr[got.n], f, hl);
	got.hl[got.n] = hl;
	got.len[got.n] = n;
	memcpy(got.data + off, f + hl, n - hl);
	if (off + n - hl > got.end)
		got.end = off + n - hl;
	got.n++;
}

/* IPv4 UDP with ihl*4 bytes of header (options as given) and pay bytes */
static size_t sample(uint8_t *p, const uint8_t *opts, size_t olen,
		     size_t pay, uint16_t frag)
{
	size_t hl = 20 + olen, i;
	uint16_t c;

	memset(p, 0, 20);
	p[0] = (uint8_t)(0x40 | hl / 4);
	p[2] = (uint8_t)((hl + pay) >> 8);
	p[3] = (uint8_t)(hl + pay);
	p[4] = 0x12;
	p[5] = 0x34;
	p[6] = (uint8_t)(frag >> 8);
	p[7] = (uint8_t)frag;
	p[8] = 64;
	p[9] = 17;
	p[12] = 10;
	p[15] = 1;
	p[16] = 10;
	p[17] = 9;
	p[19] = 50;
	if (olen)
		memcpy(p + 20, opts, olen);
	for (i = 0; i < pay; i++)
		p[hl + i] = (uint8_t)(i * 7 + 1);
	c = tv_csum(p, hl, 0);
	p[10] = (uint8_t)(c >> 8);
	p[11] = (uint8_t)c;
	return hl + pay;
}

static void test_plain(void **state)
{
	static uint8_t p[4000];
	size_t n = sample(p, NULL, 0, 3000, 0), i;

	(void)state;
	memset(&got, 0, sizeof(got));
	assert_int_equal(inet_frag_ipv4(p, n, 1500, collect, NULL), 3);
	assert_int_equal(got.end, 3000);
	assert_memory_equal(got.data, p + 20, 3000);
	for (i = 0; i < 3; i++) {
		assert_true(got.len[i] <= 1500);
		/* MF on all but the last; the ID kept */
		assert_int_equal(!!(rd16(got.hdr[i] + 6) & 0x2000), i < 2);
		assert_int_equal(rd16(got.hdr[i] + 4), 0x1234);
		if (i < 2)
			assert_int_equal((got.len[i] - 20) % 8, 0);
	}
	assert_int_equal(got.len[0], 1500);	/* 1480 of data: 185 units */
}

/* options: record route (no copy bit) stays in the first fragment only,
 * a security option (copy bit, type 130) goes into every one */
static void test_options(void **state)
{
	static uint8_t p[4000];
	const uint8_t opts[20] = { 7, 7, 4, 0, 0, 0, 0,		/* RR */
				   130, 11, 1, 2, 3, 4, 5, 6, 7, 8, 9,
				   0, 0 };
	size_t n = sample(p, opts, 20, 2000, 0);

	(void)state;
	memset(&got, 0, sizeof(got));
	assert_int_equal(inet_frag_ipv4(p, n, 1000, collect, NULL), 3);
	assert_int_equal(got.hl[0], 40);
	assert_memory_equal(got.hdr[0] + 20, opts, 20);
	assert_int_equal(got.hl[1], 32);	/* 11 bytes, padded to 12 */
	assert_memory_equal(got.hdr[1] + 20, opts + 7, 11);
	assert_int_equal(got.hdr[1][31], 0);
	assert_int_equal(got.end, 2000);
	assert_memory_equal(got.data, p + 40, 2000);
}

/* a packet already a fragment: offsets add, MF of the last one kept */
static void test_refragment(void **state)
{
	static uint8_t p[4000];
	size_t n = sample(p, NULL, 0, 2000, 0x2000 | 100);

	(void)state;
	memset(&got, 0, sizeof(got));
	assert_int_equal(inet_frag_ipv4(p, n, 1500, collect, NULL), 2);
	assert_int_equal(rd16(got.hdr[0] + 6), 0x2000 | 100);
	assert_int_equal(rd16(got.hdr[1] + 6), 0x2000 | (100 + 185));
}

static void test_refusals(void **state)
{
	static uint8_t p[4000];
	const uint8_t bad_opt[4] = { 130, 9, 0, 0 };	/* past the header */
	size_t n;

	(void)state;
	memset(&got, 0, sizeof(got));
	n = sample(p, NULL, 0, 2000, 0x4000);		/* DF */
	assert_int_equal(inet_frag_ipv4(p, n, 1500, collect, NULL), -1);
	n = sample(p, NULL, 0, 2000, 0);
	assert_int_equal(inet_frag_ipv4(p, n - 1, 1500, collect, NULL), -1);
	assert_int_equal(inet_frag_ipv4(p, 19, 1500, collect, NULL), -1);
	/* room for one 8-byte unit after the header, or not */
	n = sample(p, NULL, 0, 16, 0);
	assert_int_equal(inet_frag_ipv4(p, n, 28, collect, NULL), -1);
	assert_int_equal(inet_frag_ipv4(p, n, 29, collect, NULL), 2);
	p[0] = 0x44;					/* IHL 4 */
	assert_int_equal(inet_frag_ipv4(p, n, 1500, collect, NULL), -1);
	p[0] = 0x65;					/* IPv6 */
	assert_int_equal(inet_frag_ipv4(p, n, 1500, collect, NULL), -1);
	n = sample(p, bad_opt, 4, 100, 0);
	memset(&got, 0, sizeof(got));
	assert_int_equal(inet_frag_ipv4(p, n, 60, collect, NULL), -1);
	assert_int_equal(got.n, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain),
		cmocka_unit_test(test_options),
		cmocka_unit_test(test_refragment),
		cmocka_unit_test(test_refusals),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The Internet checksum (inet/csum.c) against RFC 1071 done byte by byte:
 * every length up to a few vector blocks, odd ones included, at every
 * alignment of source and destination, added in one piece or several,
 * plain and copying; the pseudo-headers; the RFC 1624 update.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "inet/csum.h"

/* RFC 1071 the slow way: big-endian 16-bit words, folded, not inverted */
static uint32_t ref_sum(uint32_t s, const uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		s += (i & 1) ? p[i] : (uint32_t)p[i] << 8;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return s;
}

/* the folded checksum as it lands in the packet, read big-endian */
static unsigned int stored(uint16_t c)
{
	uint8_t b[2];

	inet_csum_put(b, c);
	return (unsigned int)b[0] << 8 | b[1];
}

static unsigned int ref_csum(const uint8_t *p, size_t n)
{
	return ~ref_sum(0, p, n) & 0xffff;
}

static uint8_t src[4200], dst[4200];

static void fill_random(unsigned int seed)
{
	size_t i;

	srand(seed);
	for (i = 0; i < sizeof(src); i++)
		src[i] = (uint8_t)rand();
}

/* RFC 1071's usual worked example: an IPv4 header, checksum 0xb861 */
static void test_vector(void **state)
{
	uint8_t h[20] = { 0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00,
			  0x40, 0x11, 0x00, 0x00, 0xc0, 0xa8, 0x00, 0x01,
			  0xc0, 0xa8, 0x00, 0xc7 };

	(void)state;
	inet_csum_put(h + 10, inet_csum_fold(inet_csum_add(0, h, 20)));
	assert_int_equal(h[10], 0xb8);
	assert_int_equal(h[11], 0x61);
	assert_int_equal(inet_csum_fold(inet_csum_add(0, h, 20)), 0);
	/* nothing summed: all ones */
	assert_int_equal(stored(inet_csum_fold(0)), 0xffff);
}

static void test_lengths_alignments(void **state)
{
	size_t n, off;

	(void)state;
	fill_random(1);
	for (n = 0; n <= 700; n++)
		for (off = 0; off < 8; off++)
			assert_int_equal(stored(inet_csum_fold(
					inet_csum_add(0, src + off, n))),
					 ref_csum(src + off, n));
}

static void test_random_lengths(void **state)
{
	unsigned int i;

	(void)state;
	fill_random(2);
	for (i = 0; i < 3000; i++) {
		size_t off = (size_t)rand() % 64;
		size_t n = (size_t)rand() % (sizeof(src) - 64);

		assert_int_equal(stored(inet_csum_fold(
				inet_csum_add(0, src + off, n))),
				 ref_csum(src + off, n));
	}
}

/* pieces of even length, then any: the same sum as one piece */
static void test_pieces(void **state)
{
	unsigned int i;

	(void)state;
	fill_random(3);
	for (i = 0; i < 2000; i++) {
		size_t off = (size_t)rand() % 16, n = 0, k;
		uint64_t sum = 0;

		for (k = 0; k < 4; k++) {
			size_t m = ((size_t)rand() % 600) & ~(size_t)1;

			sum = inet_csum_add(sum, src + off + n, m);
			n += m;
		}
		k = (size_t)rand() % 9;
		sum = inet_csum_add(sum, src + off + n, k);
		n += k;
		assert_int_equal(stored(inet_csum_fold(sum)),
				 ref_csum(src + off, n));
	}
}

/* the copying sum writes exactly the len bytes and sums as the plain one */
static void test_copy(void **state)
{
	unsigned int i;

	(void)state;
	fill_random(4);
	for (i = 0; i < 3000; i++) {
		size_t so = (size_t)rand() % 32, d = (size_t)rand() % 32;
		size_t n = (size_t)rand() % (i < 1000 ? 300 : 4096);
		uint64_t sum;

		memset(dst, 0xa5, sizeof(dst));
		sum = inet_csum_copy(0, dst + d, src + so, n);
		assert_int_equal(stored(inet_csum_fold(sum)),
				 ref_csum(src + so, n));
		assert_memory_equal(dst + d, src + so, n);
		if (d)
			assert_int_equal(dst[d - 1], 0xa5);
		assert_int_equal(dst[d + n], 0xa5);
	}
}

/* a sum carried in from before: a large start value still folds right */
static void test_start_sum(void **state)
{
	uint64_t start = 0xfefefefefefefefeull;
	uint32_t r;
	size_t n;

	(void)state;
	fill_random(5);
	for (n = 0; n < 300; n += 7) {
		/* four words 0xfefe (the same in either byte order, as a
		 * native sum must be to compare): 0xfbfb once folded */
		r = ref_sum(0xfbfb, src, n);
		assert_int_equal(stored((uint16_t)~inet_csum_fold(
					inet_csum_add(start, src, n))) % 0xffff,
				 r % 0xffff);
	}
}

static void test_pseudo(void **state)
{
	/* 192.0.2.1 -> 198.51.100.2, UDP, 12 bytes */
	const uint8_t s4[4] = { 192, 0, 2, 1 }, d4[4] = { 198, 51, 100, 2 };
	const uint8_t ph4[12] = { 192, 0, 2, 1, 198, 51, 100, 2, 0, 17, 0, 12 };
	uint8_t s6[17], d6[16], ph6[40];
	size_t i;

	(void)state;
	assert_int_equal(stored((uint16_t)~inet_csum_fold(
				inet_csum_pseudo4(s4, d4, 17, 12))),
			 ref_sum(0, ph4, 12));
	/* the source misaligned on purpose */
	for (i = 0; i < 16; i++) {
		s6[i + 1] = (uint8_t)(0x20 + i * 3);
		d6[i] = (uint8_t)(0xfe - i);
	}
	memcpy(ph6, s6 + 1, 16);
	memcpy(ph6 + 16, d6, 16);
	memset(ph6 + 32, 0, 8);
	ph6[33] = 0x01;			/* 70000 bytes: a jumbogram length */
	ph6[34] = 0x11;
	ph6[35] = 0x70;
	ph6[39] = 58;
	assert_int_equal(stored((uint16_t)~inet_csum_fold(
				inet_csum_pseudo6(s6 + 1, d6, 58, 70000))),
			 ref_sum(0, ph6, 40));
}

/* RFC 1624: the update equals a checksum computed again */
static void test_replace16(void **state)
{
	uint8_t p[64];
	unsigned int i;

	(void)state;
	fill_random(6);
	for (i = 0; i < 1000; i++) {
		unsigned int at = ((unsigned int)rand() % 32) * 2;
		uint16_t c, old, new = (uint16_t)rand();

		memcpy(p, src + i, sizeof(p));
		c = (uint16_t)ref_csum(p, sizeof(p));
		old = (uint16_t)(p[at] << 8 | p[at + 1]);
		p[at] = (uint8_t)(new >> 8);
		p[at + 1] = (uint8_t)new;
		/* 0 and 0xffff are the same number in ones' complement */
		assert_int_equal(inet_csum_replace16(c, old, new) % 0xffff,
				 ref_csum(p, sizeof(p)) % 0xffff);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vector),
		cmocka_unit_test(test_lengths_alignments),
		cmocka_unit_test(test_random_lengths),
		cmocka_unit_test(test_pieces),
		cmocka_unit_test(test_copy),
		cmocka_unit_test(test_start_sum),
		cmocka_unit_test(test_pseudo),
		cmocka_unit_test(test_replace16),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

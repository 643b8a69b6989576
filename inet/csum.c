// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Internet checksum (see csum.h).  Ones' complement sum, eight bytes a step
 * with the carry folded back in; the sum of native 16-bit words is the
 * byte-swapped sum of big-endian ones where the machine is little-endian,
 * and storing the result natively swaps it back (RFC 1071, "byte order
 * independence").  With AVX2, 64 bytes a step: 32-bit words summed into
 * 64-bit lanes (2^32 = 1 modulo 2^16 - 1, so 32-bit words sum as their
 * 16-bit halves do), which cannot overflow below 2^32 steps.
 */
#include <string.h>

#include "inet/byteorder.h"
#include "inet/csum.h"

static inline uint64_t csum_add_carry(uint64_t sum, uint64_t w)
{
	sum += w;
	return sum + (sum < w);
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define HAVE_AVX2_CSUM 1

static int csum_avx2_ok = -1;

__attribute__((target("avx2")))
static uint64_t csum_avx2(uint64_t sum, uint8_t *dst, const uint8_t *p,
			  size_t n)
{
	const __m256i zero = _mm256_setzero_si256();
	__m256i a0 = zero, a1 = zero;
	uint64_t lanes[8];
	int i;

	for (; n >= 64; n -= 64, p += 64) {
		__m256i x = _mm256_loadu_si256((const __m256i *)p);
		__m256i y = _mm256_loadu_si256((const __m256i *)(p + 32));

		if (dst) {
			_mm256_storeu_si256((__m256i *)dst, x);
			_mm256_storeu_si256((__m256i *)(dst + 32), y);
			dst += 64;
		}
		a0 = _mm256_add_epi64(a0, _mm256_unpacklo_epi32(x, zero));
		a1 = _mm256_add_epi64(a1, _mm256_unpackhi_epi32(x, zero));
		a0 = _mm256_add_epi64(a0, _mm256_unpacklo_epi32(y, zero));
		a1 = _mm256_add_epi64(a1, _mm256_unpackhi_epi32(y, zero));
	}
	_mm256_storeu_si256((__m256i *)lanes, a0);
	_mm256_storeu_si256((__m256i *)(lanes + 4), a1);
	for (i = 0; i < 8; i++)
		sum = csum_add_carry(sum, lanes[i]);
	return sum;
}

static int csum_use_avx2(void)
{
	if (csum_avx2_ok < 0) {
		__builtin_cpu_init();
		csum_avx2_ok = __builtin_cpu_supports("avx2");
	}
	return csum_avx2_ok;
}
#endif

static uint64_t csum_run(uint64_t sum, uint8_t *dst, const uint8_t *p,
			 size_t len)
{
	uint64_t w;

#ifdef HAVE_AVX2_CSUM
	/* below two blocks the set-up costs more than the vector saves */
	if (len >= 128 && csum_use_avx2()) {
		size_t n = len & ~(size_t)63;

		sum = csum_avx2(sum, dst, p, n);
		p += n;
		dst = dst ? dst + n : NULL;
		len -= n;
	}
#endif
	while (len >= 8) {
		memcpy(&w, p, 8);
		if (dst) {
			memcpy(dst, &w, 8);
			dst += 8;
		}
		sum = csum_add_carry(sum, w);
		p += 8;
		len -= 8;
	}
	if (len) {
		/* the tail in the low-address bytes of a zeroed word: an odd
		 * last byte is padded with zero, as RFC 1071 says */
		w = 0;
		memcpy(&w, p, len);
		if (dst)
			memcpy(dst, p, len);
		sum = csum_add_carry(sum, w);
	}
	return sum;
}

uint64_t inet_csum_add(uint64_t sum, const uint8_t *p, size_t len)
{
	return csum_run(sum, NULL, p, len);
}

uint64_t inet_csum_copy(uint64_t sum, uint8_t *dst, const uint8_t *p,
			size_t len)
{
	return csum_run(sum, dst, p, len);
}

uint16_t inet_csum_fold(uint64_t sum)
{
	sum = (sum & 0xffffffffu) + (sum >> 32);
	sum = (sum & 0xffffffffu) + (sum >> 32);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

uint64_t inet_csum_pseudo4(const uint8_t *saddr, const uint8_t *daddr,
			   uint8_t proto, size_t len)
{
	uint8_t t[12];

	memcpy(t, saddr, 4);
	memcpy(t + 4, daddr, 4);
	t[8] = 0;
	t[9] = proto;
	be16_put(t + 10, (uint16_t)len);
	return csum_run(0, NULL, t, sizeof(t));
}

uint64_t inet_csum_pseudo6(const uint8_t *saddr, const uint8_t *daddr,
			   uint8_t next_hdr, size_t len)
{
	uint8_t t[8] = { 0 };
	uint64_t sum;

	be32_put(t, (uint32_t)len);
	t[7] = next_hdr;
	sum = csum_run(0, NULL, saddr, 16);
	sum = csum_run(sum, NULL, daddr, 16);
	return csum_run(sum, NULL, t, sizeof(t));
}

uint16_t inet_csum_replace16(uint16_t hc, uint16_t old, uint16_t new)
{
	uint32_t s = (uint16_t)~hc;

	s += (uint16_t)~old;
	s += new;
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

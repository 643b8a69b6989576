// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ICRC and VCRC (IBTA vol. 1, 7.8).
 *
 * ICRC: CRC-32 as zlib computes it (reflected 0x04C11DB7, seed and final
 * XOR all ones) over the packet with the variant fields set to ones, written
 * least significant byte first.  Variant fields: the VL nibble of the LRH
 * (the whole LRH when a GRH follows, since routers rewrite it), the GRH
 * TClass, FlowLabel and HopLmt, and BTH byte 4 (FECN/BECN and reserved).
 * RoCEv2 uses the same recipe with eight 0xFF bytes in place of the LRH.
 * These rules were checked against hardware captures (a ConnectX-4 Lx RoCEv2
 * CNP in scapy's RoCE tests and native IB frames with and without GRH).
 *
 * VCRC: CRC-16, polynomial 0x100B, reflected, seed 0xFFFF, final XOR 0xFFFF,
 * over LRH .. ICRC, written least significant byte first.
 */
#include <string.h>

#include "fabric/ib_pkt.h"

/*
 * Every packet is sealed and checked on its way through the soft fabric,
 * so the CRCs are on the data path.  Long runs fold 64 bytes a step with
 * carry-less multiplication where the CPU has it (below); the rest goes
 * through tables eight bytes a step ("slicing-by-8": table k gives the CRC
 * of a byte followed by k zero bytes).
 */
static uint32_t crc32_table[8][256];
static uint16_t crc16_table[8][256];

static void crc_tables_init(void)
{
	static int done;
	uint32_t c;
	uint16_t s;
	int i, k;

	if (done)
		return;
	for (i = 0; i < 256; i++) {
		c = (uint32_t)i;
		for (k = 0; k < 8; k++)
			c = (c & 1) ? (c >> 1) ^ 0xEDB88320u : c >> 1;
		crc32_table[0][i] = c;
		s = (uint16_t)i;
		for (k = 0; k < 8; k++)
			s = (s & 1) ? (uint16_t)((s >> 1) ^ 0xD008u) : s >> 1;
		crc16_table[0][i] = s;
	}
	for (i = 0; i < 256; i++) {
		for (k = 1; k < 8; k++) {
			c = crc32_table[k - 1][i];
			crc32_table[k][i] = (c >> 8) ^ crc32_table[0][c & 0xff];
			s = crc16_table[k - 1][i];
			crc16_table[k][i] = (uint16_t)((s >> 8) ^
						       crc16_table[0][s & 0xff]);
		}
	}
	done = 1;
}

/* The table CRC-32 on the inverted register. */
static uint32_t crc32_raw(uint32_t crc, const uint8_t *p, size_t len)
{
	while (len >= 8) {
		uint32_t lo = crc ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 |
				     (uint32_t)p[2] << 16 |
				     (uint32_t)p[3] << 24);

		crc = crc32_table[7][lo & 0xff] ^
		      crc32_table[6][(lo >> 8) & 0xff] ^
		      crc32_table[5][(lo >> 16) & 0xff] ^
		      crc32_table[4][lo >> 24] ^
		      crc32_table[3][p[4]] ^ crc32_table[2][p[5]] ^
		      crc32_table[1][p[6]] ^ crc32_table[0][p[7]];
		p += 8;
		len -= 8;
	}
	while (len--)
		crc = crc32_table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return crc;
}

static uint16_t crc16_raw(uint16_t crc, const uint8_t *buf, size_t len)
{
	while (len >= 8) {
		uint16_t x = (uint16_t)(crc ^ (buf[0] | buf[1] << 8));

		crc = (uint16_t)(crc16_table[7][x & 0xff] ^
				 crc16_table[6][x >> 8] ^
				 crc16_table[5][buf[2]] ^ crc16_table[4][buf[3]] ^
				 crc16_table[3][buf[4]] ^ crc16_table[2][buf[5]] ^
				 crc16_table[1][buf[6]] ^ crc16_table[0][buf[7]]);
		buf += 8;
		len -= 8;
	}
	while (len--)
		crc = (uint16_t)(crc16_table[0][(crc ^ *buf++) & 0xff] ^
				 (crc >> 8));
	return crc;
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define HAVE_CLMUL_FOLD 1

/*
 * Carry-less multiplication folding (the method of Intel's "Fast CRC
 * Computation for Generic Polynomials Using PCLMULQDQ"), for any reflected
 * CRC of degree up to 32.  Sixteen message bytes loaded little-endian are
 * the polynomial sum(bit j * x^(127-j)): the first eight bytes carry the
 * high half.  A block A followed by the rest of the message at distance D
 * bits stands for A*x^D; replacing A by Alo*(x^(D+64) mod P) +
 * Ahi*(x^D mod P) keeps the message's value mod P, so its CRC, and the
 * products fit in 128 bits.  Reflected 64-bit operands multiply into a
 * product one bit short of the 128-bit reflected layout, so the constants
 * carry one power of x less.  Four lanes run 64 bytes apart to hide the
 * multiplier's latency; the lanes fold into one, and the tables finish the
 * last 16 bytes and the tail.  The constants are computed here from the
 * polynomial, not carried as magic numbers.
 */
struct clmul_k {
	__m128i by64;	/* lo: x^(575) mod P, hi: x^(511) mod P */
	__m128i by16;	/* lo: x^(191) mod P, hi: x^(127) mod P */
	/* for both halves of a 256-bit register: lo, hi */
	long long by128[2];	/* x^(1087), x^(1023) */
	long long by32[2];	/* x^(319), x^(255) */
};

static struct clmul_k k_crc32, k_crc16;
static int clmul_on = -1;	/* 0 tables, 1 128-bit, 2 256-bit */
static int clmul_best;

/* x^n mod P, P given with its leading term (degree deg). */
static uint64_t xpow_mod(unsigned n, uint64_t poly, unsigned deg)
{
	uint64_t r = 1;

	while (n--) {
		r <<= 1;
		if (r >> deg & 1)
			r ^= poly;
	}
	return r;
}

/* A polynomial of degree < 64 as a reflected word: bit i = x^(63-i). */
static uint64_t refl64(uint64_t p)
{
	uint64_t w = 0;
	int i;

	for (i = 0; i < 64; i++)
		if (p >> i & 1)
			w |= 1ull << (63 - i);
	return w;
}

static void consts256(long long k[2], unsigned int d, uint64_t poly,
		      unsigned deg)
{
	k[0] = (long long)refl64(xpow_mod(d + 63, poly, deg));
	k[1] = (long long)refl64(xpow_mod(d - 1, poly, deg));
}

static void clmul_consts(struct clmul_k *k, uint64_t poly, unsigned deg,
			 int wide)
{
	k->by64 = _mm_set_epi64x((long long)refl64(xpow_mod(511, poly, deg)),
				 (long long)refl64(xpow_mod(575, poly, deg)));
	k->by16 = _mm_set_epi64x((long long)refl64(xpow_mod(127, poly, deg)),
				 (long long)refl64(xpow_mod(191, poly, deg)));
	if (wide) {
		consts256(k->by128, 1024, poly, deg);
		consts256(k->by32, 256, poly, deg);
	}
}

__attribute__((target("pclmul,sse2")))
static inline __m128i fold(__m128i x, __m128i k, __m128i next)
{
	return _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00),
					   _mm_clmulepi64_si128(x, k, 0x11)),
			     next);
}

/*
 * Fold len (>= 64, a multiple of 16) bytes into 16, the register crc
 * (already inverted, as the tables keep it) entering through the first
 * bytes.
 */
/* 16 bytes from p, also stored at dst (when copying) */
__attribute__((target("pclmul,sse2")))
static inline __m128i ld(const uint8_t *p, uint8_t *dst, size_t off)
{
	__m128i v = _mm_loadu_si128((const __m128i *)(p + off));

	if (dst)
		_mm_storeu_si128((__m128i *)(dst + off), v);
	return v;
}

/* With dst, the bytes are copied there on the way (one pass for both). */
__attribute__((target("pclmul,sse2")))
static void clmul_fold(const struct clmul_k *k, uint32_t crc, const uint8_t *p,
		       uint8_t *dst, size_t len, uint8_t out[16])
{
	__m128i x0, x1, x2, x3;

	x0 = _mm_xor_si128(ld(p, dst, 0), _mm_cvtsi32_si128((int)crc));
	x1 = ld(p, dst, 16);
	x2 = ld(p, dst, 32);
	x3 = ld(p, dst, 48);
	p += 64;
	dst = dst ? dst + 64 : NULL;
	len -= 64;
	while (len >= 64) {
		x0 = fold(x0, k->by64, ld(p, dst, 0));
		x1 = fold(x1, k->by64, ld(p, dst, 16));
		x2 = fold(x2, k->by64, ld(p, dst, 32));
		x3 = fold(x3, k->by64, ld(p, dst, 48));
		p += 64;
		dst = dst ? dst + 64 : NULL;
		len -= 64;
	}
	x1 = fold(x0, k->by16, x1);
	x2 = fold(x1, k->by16, x2);
	x3 = fold(x2, k->by16, x3);
	while (len >= 16) {
		x3 = fold(x3, k->by16, ld(p, dst, 0));
		p += 16;
		dst = dst ? dst + 16 : NULL;
		len -= 16;
	}
	_mm_storeu_si128((__m128i *)out, x3);
}

/*
 * 256-bit registers (VPCLMULQDQ): two 16-byte blocks per register, four
 * registers 128 bytes apart; the registers fold into one 32 bytes at a
 * time, its halves into one 16-byte block, and the 16-byte loop above
 * takes the rest.  Twice the multiplications per instruction.
 */
__attribute__((target("vpclmulqdq,avx2")))
static inline __m256i fold256(__m256i x, __m256i k, __m256i next)
{
	return _mm256_xor_si256(
		_mm256_xor_si256(_mm256_clmulepi64_epi128(x, k, 0x00),
				 _mm256_clmulepi64_epi128(x, k, 0x11)), next);
}

__attribute__((target("vpclmulqdq,avx2")))
static inline __m256i ld256(const uint8_t *p, uint8_t *dst, size_t off)
{
	__m256i v = _mm256_loadu_si256((const __m256i *)(p + off));

	if (dst)
		_mm256_storeu_si256((__m256i *)(dst + off), v);
	return v;
}

/* len >= 128, a multiple of 16 */
__attribute__((target("vpclmulqdq,avx2,pclmul")))
static void clmul_fold256(const struct clmul_k *k, uint32_t crc,
			  const uint8_t *p, uint8_t *dst, size_t len,
			  uint8_t out[16])
{
	__m256i y0, y1, y2, y3;
	__m256i by128 = _mm256_set_epi64x(k->by128[1], k->by128[0],
					  k->by128[1], k->by128[0]);
	__m256i by32 = _mm256_set_epi64x(k->by32[1], k->by32[0],
					 k->by32[1], k->by32[0]);
	__m128i x;

	y0 = _mm256_xor_si256(ld256(p, dst, 0),
			      _mm256_zextsi128_si256(
				      _mm_cvtsi32_si128((int)crc)));
	y1 = ld256(p, dst, 32);
	y2 = ld256(p, dst, 64);
	y3 = ld256(p, dst, 96);
	p += 128;
	dst = dst ? dst + 128 : NULL;
	len -= 128;
	while (len >= 128) {
		y0 = fold256(y0, by128, ld256(p, dst, 0));
		y1 = fold256(y1, by128, ld256(p, dst, 32));
		y2 = fold256(y2, by128, ld256(p, dst, 64));
		y3 = fold256(y3, by128, ld256(p, dst, 96));
		p += 128;
		dst = dst ? dst + 128 : NULL;
		len -= 128;
	}
	y1 = fold256(y0, by32, y1);
	y2 = fold256(y1, by32, y2);
	y3 = fold256(y2, by32, y3);
	x = fold(_mm256_castsi256_si128(y3), k->by16,
		 _mm256_extracti128_si256(y3, 1));
	while (len >= 16) {
		x = fold(x, k->by16, ld(p, dst, 0));
		p += 16;
		dst = dst ? dst + 16 : NULL;
		len -= 16;
	}
	_mm_storeu_si128((__m128i *)out, x);
}

static int clmul_usable(void)
{
	if (clmul_on < 0) {
		__builtin_cpu_init();
		clmul_best = !__builtin_cpu_supports("pclmul") ? 0 :
			     __builtin_cpu_supports("vpclmulqdq") &&
			     __builtin_cpu_supports("avx2") ? 2 : 1;
		clmul_consts(&k_crc32, 0x104C11DB7ull, 32, clmul_best == 2);
		clmul_consts(&k_crc16, 0x1100Bull, 16, clmul_best == 2);
		clmul_on = clmul_best;
	}
	return clmul_on;
}

/* Fold with the widest registers allowed (len >= 64, a multiple of 16). */
static void fold_any(const struct clmul_k *k, uint32_t crc, const uint8_t *p,
		     uint8_t *dst, size_t len, uint8_t out[16])
{
	if (clmul_on == 2 && len >= 128)
		clmul_fold256(k, crc, p, dst, len, out);
	else
		clmul_fold(k, crc, p, dst, len, out);
}
#endif

int ib_crc_clmul(int on)
{
#ifdef HAVE_CLMUL_FOLD
	int was;

	crc_tables_init();
	was = clmul_usable();
	if (on >= 0)
		clmul_on = on < clmul_best ? on : clmul_best;
	return was;
#else
	(void)on;
	return 0;
#endif
}

/*
 * The CRC register (the inverted CRC) run over p, and p copied to dst on
 * the way when dst is not NULL: CRC-32 (the ICRC's) or, with is16, CRC-16
 * (the VCRC's).  Long runs fold with carry-less multiplication, the rest
 * goes through the tables; with dst the tail's CRC is taken over the copy,
 * so every byte is read once.
 */
static uint32_t crc_run(int is16, uint32_t reg, uint8_t *dst,
			const uint8_t *p, size_t len)
{
	crc_tables_init();
#ifdef HAVE_CLMUL_FOLD
	if (len >= 64 && clmul_usable()) {
		uint8_t r[16];
		size_t n = len & ~(size_t)15;

		fold_any(is16 ? &k_crc16 : &k_crc32, reg, p, dst, n, r);
		reg = is16 ? crc16_raw(0, r, sizeof(r)) :
			     crc32_raw(0, r, sizeof(r));
		p += n;
		dst = dst ? dst + n : NULL;
		len -= n;
	}
#endif
	if (dst) {
		memcpy(dst, p, len);
		p = dst;
	}
	return is16 ? crc16_raw((uint16_t)reg, p, len) : crc32_raw(reg, p, len);
}

/* Running CRC-32: pass 0 to start, like zlib's crc32(). */
uint32_t ib_crc32(uint32_t crc, const void *buf, size_t len)
{
	return ~crc_run(0, ~crc, NULL, buf, len);
}

/* The same, copying the bytes to dst on the way. */
uint32_t ib_crc32_copy(uint32_t crc, void *dst, const void *src, size_t len)
{
	return ~crc_run(0, ~crc, dst, src, len);
}

static uint32_t crc32_ones(uint32_t crc, size_t n)
{
	static const uint8_t ones[8] = { 0xff, 0xff, 0xff, 0xff,
					 0xff, 0xff, 0xff, 0xff };

	while (n > 0) {
		size_t k = n < sizeof(ones) ? n : sizeof(ones);

		crc = ib_crc32(crc, ones, k);
		n -= k;
	}
	return crc;
}

/* CRC over the BTH and what follows, with BTH byte 4 masked. */
static uint32_t icrc_from_bth(uint32_t crc, const uint8_t *bth, size_t len)
{
	uint8_t b[IB_BTH_LEN];

	if (len < IB_BTH_LEN)
		return ib_crc32(crc, bth, len);
	memcpy(b, bth, IB_BTH_LEN);
	b[4] = 0xff;
	crc = ib_crc32(crc, b, IB_BTH_LEN);
	return ib_crc32(crc, bth + IB_BTH_LEN, len - IB_BTH_LEN);
}

static uint32_t icrc_grh(uint32_t crc, const uint8_t *grh)
{
	uint8_t g[IB_GRH_LEN];

	memcpy(g, grh, IB_GRH_LEN);
	g[0] |= 0x0f;			/* TClass high nibble */
	g[1] = g[2] = g[3] = 0xff;	/* TClass low nibble, FlowLabel */
	g[7] = 0xff;			/* HopLmt */
	return ib_crc32(crc, g, IB_GRH_LEN);
}

uint32_t ib_icrc_native(const uint8_t *buf, size_t len)
{
	uint8_t lrh[IB_LRH_LEN];
	uint32_t crc;

	if (len < IB_LRH_LEN)
		return ib_crc32(0, buf, len);
	if ((buf[1] & 0x3) == IB_LNH_IBA_GLOBAL && len >= IB_LRH_LEN + IB_GRH_LEN) {
		crc = crc32_ones(0, IB_LRH_LEN);
		crc = icrc_grh(crc, buf + IB_LRH_LEN);
		return icrc_from_bth(crc, buf + IB_LRH_LEN + IB_GRH_LEN,
				     len - IB_LRH_LEN - IB_GRH_LEN);
	}
	memcpy(lrh, buf, IB_LRH_LEN);
	lrh[0] |= 0xf0;			/* VL */
	crc = ib_crc32(0, lrh, IB_LRH_LEN);
	return icrc_from_bth(crc, buf + IB_LRH_LEN, len - IB_LRH_LEN);
}

/* RoCEv2 over IPv4: buf starts at the IPv4 header (IHL honoured). */
uint32_t ib_icrc_rocev2_ipv4(const uint8_t *buf, size_t len)
{
	uint8_t ip[60], udp[8];
	size_t ihl;
	uint32_t crc;

	if (len < 20)
		return 0;
	ihl = (size_t)(buf[0] & 0x0f) * 4;
	if (ihl < 20 || len < ihl + 8)
		return 0;
	memcpy(ip, buf, ihl);
	ip[1] = 0xff;			/* TOS */
	ip[8] = 0xff;			/* TTL */
	ip[10] = ip[11] = 0xff;		/* header checksum */
	memcpy(udp, buf + ihl, 8);
	udp[6] = udp[7] = 0xff;		/* UDP checksum */
	crc = crc32_ones(0, IB_LRH_LEN);
	crc = ib_crc32(crc, ip, ihl);
	crc = ib_crc32(crc, udp, 8);
	return icrc_from_bth(crc, buf + ihl + 8, len - ihl - 8);
}

uint16_t ib_vcrc(const uint8_t *buf, size_t len)
{
	return (uint16_t)~crc_run(1, 0xffff, NULL, buf, len);
}

uint16_t ib_vcrc_copy(void *dst, const void *src, size_t len)
{
	return (uint16_t)~crc_run(1, 0xffff, dst, src, len);
}

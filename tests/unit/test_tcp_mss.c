// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* TCP MSS clamping (inet/tcp_mss.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "inet/tcp_mss.h"

/* RFC 1071 over the pseudo-header and segment, byte by byte */
static int l4_ok(const uint8_t *ip, size_t len)
{
	size_t iphl = ip[0] >> 4 == 6 ? 40 : (size_t)(ip[0] & 15) * 4, i;
	uint32_t s = 6 + (uint32_t)(len - iphl);

	if (ip[0] >> 4 == 6)
		for (i = 8; i < 40; i++)
			s += (i & 1) ? ip[i] : (uint32_t)ip[i] << 8;
	else
		for (i = 12; i < 20; i++)
			s += (i & 1) ? ip[i] : (uint32_t)ip[i] << 8;
	for (i = iphl; i < len; i++)
		s += ((i - iphl) & 1) ? ip[i] : (uint32_t)ip[i] << 8;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return s == 0xffff;
}

static void seal(uint8_t *ip, size_t len)
{
	size_t iphl = ip[0] >> 4 == 6 ? 40 : 20, i;
	uint32_t s = 6 + (uint32_t)(len - iphl);
	uint8_t *t = ip + iphl;

	t[16] = t[17] = 0;
	for (i = ip[0] >> 4 == 6 ? 8 : 12; i < iphl; i++)
		s += (i & 1) ? ip[i] : (uint32_t)ip[i] << 8;
	for (i = iphl; i < len; i++)
		s += ((i - iphl) & 1) ? ip[i] : (uint32_t)ip[i] << 8;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	s = ~s & 0xffff;
	t[16] = (uint8_t)(s >> 8);
	t[17] = (uint8_t)s;
}

/* a SYN with options opts (olen bytes, a multiple of 4) */
static size_t syn(uint8_t *p, int v6, uint8_t flags, const uint8_t *opts,
		  size_t olen)
{
	size_t iphl = v6 ? 40 : 20, len = iphl + 20 + olen;
	uint8_t *t = p + iphl;

	memset(p, 0, len);
	if (v6) {
		p[0] = 0x60;
		p[5] = (uint8_t)(20 + olen);
		p[6] = 6;
		p[7] = 64;
		p[8] = 0xfd; p[23] = 1; p[24] = 0xfd; p[39] = 2;
	} else {
		p[0] = 0x45;
		p[3] = (uint8_t)len;
		p[8] = 64;
		p[9] = 6;
		p[12] = 10; p[15] = 1; p[16] = 10; p[19] = 2;
	}
	t[1] = 80; t[3] = 99;
	t[7] = 1;
	t[12] = (uint8_t)((20 + olen) / 4 << 4);
	t[13] = flags;
	t[14] = 0xff;
	memcpy(t + 20, opts, olen);
	seal(p, len);
	return len;
}

static unsigned int mss_of(const uint8_t *p, size_t off)
{
	return (unsigned int)p[off] << 8 | p[off + 1];
}

static void test_clamp(void **state)
{
	/* MSS 8960 at an even offset; then timestamps */
	static const uint8_t even[12] = { 2, 4, 0x23, 0x00, 1, 1, 8, 10,
					  0, 0, 0, 1 };
	/* NOP first: MSS at an odd offset */
	static const uint8_t odd[8] = { 1, 2, 4, 0x23, 0x00, 3, 3, 7 };
	uint8_t p[100];
	size_t len;
	int v6;

	(void)state;
	for (v6 = 0; v6 <= 1; v6++) {
		size_t t = v6 ? 40 : 20;

		len = syn(p, v6, 0x02, even, sizeof(even));
		assert_int_equal(tcp_mss_clamp(p, len, 1500), 1);
		assert_int_equal(mss_of(p, t + 22), v6 ? 1440 : 1460);
		assert_true(l4_ok(p, len));
		/* already small enough: untouched */
		assert_int_equal(tcp_mss_clamp(p, len, 9000), 0);
		assert_int_equal(mss_of(p, t + 22), v6 ? 1440 : 1460);

		len = syn(p, v6, 0x12, odd, sizeof(odd));	/* SYN+ACK */
		assert_int_equal(tcp_mss_clamp(p, len, 2044), 1);
		assert_int_equal(mss_of(p, t + 23), v6 ? 1984 : 2004);
		assert_true(l4_ok(p, len));
	}
}

static void test_no_clamp(void **state)
{
	static const uint8_t mss[4] = { 2, 4, 0x23, 0x00 };
	static const uint8_t none[4] = { 1, 1, 1, 0 };
	static const uint8_t bad[4] = { 1, 2, 9, 0 };	/* runs past */
	uint8_t p[100], q[100];
	size_t len;

	(void)state;
	len = syn(p, 0, 0x10, mss, 4);		/* not a SYN */
	memcpy(q, p, len);
	assert_int_equal(tcp_mss_clamp(p, len, 1500), 0);
	assert_memory_equal(p, q, len);
	len = syn(p, 0, 0x02, none, 4);		/* no MSS option */
	assert_int_equal(tcp_mss_clamp(p, len, 1500), 0);
	len = syn(p, 0, 0x02, bad, 4);		/* broken options */
	memcpy(q, p, len);
	assert_int_equal(tcp_mss_clamp(p, len, 1500), 0);
	assert_memory_equal(p, q, len);
	len = syn(p, 0, 0x02, mss, 4);
	p[9] = 17;				/* UDP */
	assert_int_equal(tcp_mss_clamp(p, len, 1500), 0);
	p[9] = 6;
	p[7] = 8;				/* a later fragment */
	assert_int_equal(tcp_mss_clamp(p, len, 1500), 0);
	p[7] = 0;
	assert_int_equal(tcp_mss_clamp(p, 30, 1500), 0);	/* truncated */
	assert_int_equal(tcp_mss_clamp(p, 0, 1500), 0);
	p[32] = 0xf0;				/* data offset past the end */
	assert_int_equal(tcp_mss_clamp(p, len, 1500), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_clamp),
		cmocka_unit_test(test_no_clamp),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

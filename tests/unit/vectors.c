// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Shared test vectors and references (see vectors.h). */
#include <arpa/inet.h>
#include <ctype.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "tests/unit/vectors.h"

size_t tv_unhex(const char *s, uint8_t *out, size_t cap)
{
	size_t n = 0;
	unsigned int v;

	memset(out, 0, cap);
	while (*s) {
		if (isspace((unsigned char)*s) || *s == '|') {
			s++;
			continue;
		}
		if (n == cap)
			fail_msg("hex vector longer than %zu bytes", cap);
		if (!isxdigit((unsigned char)s[0]) ||
		    !isxdigit((unsigned char)s[1]) ||
		    sscanf(s, "%2x", &v) != 1)
			fail_msg("bad hex at \"%.16s\"", s);
		out[n++] = (uint8_t)v;
		s += 2;
	}
	return n;
}

uint16_t tv_csum(const uint8_t *p, size_t n, uint32_t start)
{
	uint64_t sum = start;
	size_t i;

	for (i = 0; i < n; i++)
		sum += (i % 2 == 0) ? (uint32_t)p[i] << 8 : p[i];
	while (sum > 0xffff)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

uint32_t tv_pseudo6(const uint8_t *ip6, uint32_t len, uint8_t nh)
{
	uint32_t sum = 0;
	size_t i;

	for (i = 8; i < 40; i += 2)	/* source and destination */
		sum += (uint32_t)ip6[i] << 8 | ip6[i + 1];
	sum += len >> 16;
	sum += len & 0xffff;
	sum += nh;
	return sum;
}

int tv_icmp6_csum_good(const uint8_t *ip6)
{
	uint32_t len = (uint32_t)(ip6[4] << 8 | ip6[5]);

	return tv_csum(ip6 + 40, len, tv_pseudo6(ip6, len, 58)) == 0;
}

struct in_addr tv_ip4(const char *s)
{
	struct in_addr a;

	assert_int_equal(inet_pton(AF_INET, s, &a), 1);
	return a;
}

struct in6_addr tv_ip6(const char *s)
{
	struct in6_addr a;

	assert_int_equal(inet_pton(AF_INET6, s, &a), 1);
	return a;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer: the ND validator (inet/nd.c).  Byte 0 picks the link's
 * option length (even: Ethernet's 1 unit, odd: IPoIB's 3), the rest is an
 * IPv6 packet.  The validator must refuse, never misread: what it takes
 * has hop limit 255, a checksum that verifies by an independent sum, and
 * link-layer pointers inside the packet; an NS or NA it takes must rebuild
 * into one it takes again with the same values.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "inet/nd.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c) do { if (!(c)) __builtin_trap(); } while (0)

/* RFC 1071 over big-endian words, kept apart from the code under test */
static uint32_t fz_sum(const uint8_t *p, size_t n, uint32_t s)
{
	size_t i;

	for (i = 0; i < n; i++)
		s += (i & 1) ? p[i] : (uint32_t)p[i] << 8;
	while (s > 0xffff)
		s = (s & 0xffff) + (s >> 16);
	return s;
}

static int icmp6_csum_good(const uint8_t *ip6)
{
	uint32_t len = (uint32_t)(ip6[4] << 8 | ip6[5]), s;

	s = fz_sum(ip6 + 8, 32, 0);
	s = fz_sum((const uint8_t[]){ 0, 0, (uint8_t)(len >> 8), (uint8_t)len,
				      0, 0, 0, 58 }, 8, s);
	return fz_sum(ip6 + 40, len, s) == 0xffff;
}

static void inside(const uint8_t *opt, unsigned int units, const uint8_t *p,
		   size_t n)
{
	if (!opt)
		return;
	CHECK(opt >= p + 40 + 8 && opt + units * 8 - 2 <= p + n);
	CHECK(opt[-1] == units);
}

static void rebuild(const struct inet_nd *nd, unsigned int units)
{
	uint8_t out[128];
	struct inet_nd again;
	size_t len;

	if (nd->type == INET_ND_NS) {
		len = inet_nd_build_ns(&nd->ip.src, &nd->ip.dst, &nd->target,
				       nd->slla, units, out, sizeof(out));
	} else if (nd->type == INET_ND_NA) {
		len = inet_nd_build_na(&nd->ip.src, &nd->ip.dst, &nd->target,
				       nd->flags, nd->tlla, units, out,
				       sizeof(out));
	} else {
		return;
	}
	CHECK(len >= 64 && icmp6_csum_good(out));
	CHECK(inet_nd_parse(out, len, units, &again) == INET_OK);
	CHECK(again.type == nd->type && again.flags == nd->flags);
	CHECK(!memcmp(&again.target, &nd->target, 16));
	/* the builders write only the option the type uses */
	if (nd->type == INET_ND_NS) {
		CHECK(!!again.slla == !!nd->slla && !again.tlla);
		if (nd->slla)
			CHECK(!memcmp(again.slla, nd->slla, units * 8 - 2));
	} else {
		CHECK(!!again.tlla == !!nd->tlla && !again.slla);
		if (nd->tlla)
			CHECK(!memcmp(again.tlla, nd->tlla, units * 8 - 2));
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct inet_nd nd;
	unsigned int units;
	enum inet_err err;

	if (size < 1)
		return 0;
	units = (data[0] & 1) ? 3 : 1;
	data++;
	size--;
	err = inet_nd_parse(data, size, units, &nd);
	CHECK((unsigned int)err < INET_ERR_MAX);
	if (err != INET_OK)
		return 0;
	CHECK(nd.ip.hop_limit == INET_ND_HOP_LIMIT);
	CHECK(icmp6_csum_good(data));
	CHECK(!IN6_IS_ADDR_MULTICAST(&nd.target) ||
	      (nd.type != INET_ND_NS && nd.type != INET_ND_NA));
	inside(nd.slla, units, data, size);
	inside(nd.tlla, units, data, size);
	rebuild(&nd, units);
	return 0;
}

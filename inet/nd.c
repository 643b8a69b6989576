// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * IPv6 neighbour discovery (see nd.h).  One validator for every link: it
 * used to be two, the IPoIB one checking all of RFC 4861's receive rules
 * and the Ethernet one only NS/NA framing; the rules kept are the union.
 */
#include <string.h>

#include "inet/byteorder.h"
#include "inet/csum.h"
#include "inet/nd.h"

void inet_solicited_node(const struct in6_addr *addr, struct in6_addr *out)
{
	uint8_t s[16] = { 0xff, 0x02, 0, 0, 0, 0, 0, 0,
			  0, 0, 0, 0x01, 0xff, 0, 0, 0 };

	memcpy(s + 13, addr->s6_addr + 13, 3);
	memcpy(out->s6_addr, s, 16);
}

bool inet_is_solicited_node(const struct in6_addr *addr)
{
	static const uint8_t prefix[13] = { 0xff, 0x02, 0, 0, 0, 0, 0, 0,
					    0, 0, 0, 0x01, 0xff };

	return memcmp(addr->s6_addr, prefix, sizeof(prefix)) == 0;
}

/* fixed part of each ND message, ICMPv6 header included (RFC 4861 4.x) */
static size_t nd_min_len(uint8_t type)
{
	switch (type) {
	case INET_ND_RS:
		return 8;
	case INET_ND_RA:
		return 16;
	case INET_ND_NS:
	case INET_ND_NA:
		return INET_ND_NS_NA_MSG_LEN;
	case INET_ND_REDIRECT:
		return 40;
	default:
		return 0;
	}
}

/* Link-layer options seen of a length other than the link's */
struct nd_bad_lla {
	bool slla;
	bool tlla;
};

/*
 * Walk the options after the fixed part (ndisc_parse_options): every
 * option's length in 8-byte units is non-zero and inside the message.
 */
static enum inet_err nd_options(const uint8_t *opt, size_t len,
				unsigned int lla_units, struct inet_nd *nd,
				struct nd_bad_lla *bad)
{
	size_t l;

	while (len > 0) {
		if (len < 2)
			return INET_ND_OPT_OVERRUN;
		l = (size_t)opt[1] * 8;
		if (l == 0)
			return INET_ND_OPT_ZERO_LEN;
		if (l > len)
			return INET_ND_OPT_OVERRUN;
		if (opt[0] == INET_ND_OPT_SLLA && !nd->slla && !bad->slla) {
			if (opt[1] == lla_units)
				nd->slla = opt + 2;
			else
				bad->slla = true;
		} else if (opt[0] == INET_ND_OPT_TLLA && !nd->tlla &&
			   !bad->tlla) {
			if (opt[1] == lla_units)
				nd->tlla = opt + 2;
			else
				bad->tlla = true;
		}
		opt += l;
		len -= l;
	}
	return INET_OK;
}

/* The fields of the fixed part past the ICMPv6 header */
static void nd_fixed(const uint8_t *m, struct inet_nd *nd)
{
	switch (nd->type) {
	case INET_ND_RA:
		nd->flags = m[5] & 0xc0;
		break;
	case INET_ND_NA:
		nd->flags = m[4] & (INET_NA_FLAG_ROUTER |
				    INET_NA_FLAG_SOLICITED |
				    INET_NA_FLAG_OVERRIDE);
		/* fall through */
	case INET_ND_NS:
		memcpy(&nd->target, m + 8, 16);
		break;
	case INET_ND_REDIRECT:
		memcpy(&nd->target, m + 8, 16);
		memcpy(&nd->redirect_dst, m + 24, 16);
		break;
	}
}

/* RFC 4861 6.1, 7.1 and 8.1: what each type must be to be taken */
static enum inet_err nd_semantics(const struct inet_nd *nd,
				  const struct nd_bad_lla *bad)
{
	switch (nd->type) {
	case INET_ND_NS:
		if (IN6_IS_ADDR_MULTICAST(&nd->target))
			return INET_ND_MCAST_TARGET;
		if (bad->slla)
			return INET_ND_BAD_LLA_LEN;
		if (IN6_IS_ADDR_UNSPECIFIED(&nd->ip.src) &&
		    (!inet_is_solicited_node(&nd->ip.dst) || nd->slla))
			return INET_ND_BAD_DAD;
		break;
	case INET_ND_NA:
		if (IN6_IS_ADDR_MULTICAST(&nd->target))
			return INET_ND_MCAST_TARGET;
		if (IN6_IS_ADDR_MULTICAST(&nd->ip.dst) &&
		    (nd->flags & INET_NA_FLAG_SOLICITED))
			return INET_ND_MCAST_SOLICITED;
		if (bad->tlla)
			return INET_ND_BAD_LLA_LEN;
		break;
	case INET_ND_RS:
		if (bad->slla)
			return INET_ND_BAD_LLA_LEN;
		break;
	case INET_ND_RA:
		if (!IN6_IS_ADDR_LINKLOCAL(&nd->ip.src))
			return INET_ND_BAD_SOURCE;
		if (bad->slla)
			return INET_ND_BAD_LLA_LEN;
		break;
	case INET_ND_REDIRECT:
		if (!IN6_IS_ADDR_LINKLOCAL(&nd->ip.src))
			return INET_ND_BAD_SOURCE;
		if (bad->tlla)
			return INET_ND_BAD_LLA_LEN;
		break;
	}
	return INET_OK;
}

enum inet_err inet_nd_parse(const uint8_t *buf, size_t len,
			    unsigned int lla_units, struct inet_nd *nd)
{
	struct nd_bad_lla bad = { false, false };
	enum inet_err err;
	const uint8_t *m;
	size_t mlen, fixed;
	uint64_t sum;

	memset(nd, 0, sizeof(*nd));
	err = inet_ipv6_check(buf, len, &nd->ip);
	if (err != INET_OK)
		return err;
	m = buf + INET_IPV6_HDR_LEN;
	mlen = nd->ip.payload_len;
	if (nd->ip.next_hdr != INET_PROTO_ICMPV6)
		return INET_NOT_ND;
	if (mlen < 1)
		return INET_TRUNCATED;
	fixed = nd_min_len(m[0]);
	if (fixed == 0)
		return INET_NOT_ND;
	nd->type = m[0];
	if (nd->ip.hop_limit != INET_ND_HOP_LIMIT)
		return INET_ND_BAD_HOP_LIMIT;
	if (mlen < 4)
		return INET_ND_SHORT;
	sum = inet_csum_pseudo6(buf + 8, buf + 24, INET_PROTO_ICMPV6, mlen);
	if (inet_csum_fold(inet_csum_add(sum, m, mlen)) != 0)
		return INET_ND_BAD_CSUM;
	if (m[1] != 0)
		return INET_ND_BAD_CODE;
	if (mlen < fixed)
		return INET_ND_SHORT;
	nd_fixed(m, nd);
	err = nd_options(m + fixed, mlen - fixed, lla_units, nd, &bad);
	if (err != INET_OK)
		return err;
	return nd_semantics(nd, &bad);
}

/* NS and NA share their layout: type, code, csum, 4 bytes, target, option */
static size_t nd_build(uint8_t type, uint8_t flags,
		       const struct in6_addr *src, const struct in6_addr *dst,
		       const struct in6_addr *target, uint8_t opt_type,
		       const uint8_t *lla, unsigned int lla_units,
		       uint8_t *out, size_t cap)
{
	size_t mlen = INET_ND_NS_NA_MSG_LEN + (lla ? lla_units * 8u : 0);
	uint8_t *m = out + INET_IPV6_HDR_LEN;
	uint64_t sum;

	if (cap < INET_IPV6_HDR_LEN + mlen)
		return 0;
	inet_ipv6_hdr_put(out, (uint16_t)mlen, INET_PROTO_ICMPV6,
			  INET_ND_HOP_LIMIT, src, dst);
	m[0] = type;
	m[1] = 0;
	m[2] = m[3] = 0;
	m[4] = flags;
	m[5] = m[6] = m[7] = 0;
	memcpy(m + 8, target->s6_addr, 16);
	if (lla) {
		m[24] = opt_type;
		m[25] = (uint8_t)lla_units;
		memcpy(m + 26, lla, inet_nd_lla_body_len(lla_units));
	}
	sum = inet_csum_pseudo6(src->s6_addr, dst->s6_addr,
				INET_PROTO_ICMPV6, mlen);
	inet_csum_put(m + 2, inet_csum_fold(inet_csum_add(sum, m, mlen)));
	return INET_IPV6_HDR_LEN + mlen;
}

size_t inet_nd_build_ns(const struct in6_addr *src,
			const struct in6_addr *dst,
			const struct in6_addr *target, const uint8_t *slla,
			unsigned int lla_units, uint8_t *out, size_t cap)
{
	struct in6_addr snm;

	if (!dst) {
		inet_solicited_node(target, &snm);
		dst = &snm;
	}
	if (IN6_IS_ADDR_UNSPECIFIED(src))
		slla = NULL;
	return nd_build(INET_ND_NS, 0, src, dst, target, INET_ND_OPT_SLLA,
			slla, lla_units, out, cap);
}

size_t inet_nd_build_na(const struct in6_addr *src,
			const struct in6_addr *dst,
			const struct in6_addr *target, uint8_t flags,
			const uint8_t *tlla, unsigned int lla_units,
			uint8_t *out, size_t cap)
{
	flags &= INET_NA_FLAG_ROUTER | INET_NA_FLAG_SOLICITED |
		 INET_NA_FLAG_OVERRIDE;
	return nd_build(INET_ND_NA, flags, src, dst, target,
			INET_ND_OPT_TLLA, tlla, lla_units, out, cap);
}

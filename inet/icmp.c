// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* ICMP errors for oversize packets (see icmp.h). */
#include <string.h>

#include "inet/byteorder.h"
#include "inet/csum.h"
#include "inet/icmp.h"
#include "inet/ip.h"

#define ICMP_DEST_UNREACH	3
#define ICMP_FRAG_NEEDED	4
#define ICMPV6_PKT_TOOBIG	2
#define ICMPV6_INFOMSG_MASK	0x80

/* ICMP types Linux answers errors about (icmp_pointers[].error == 0) */
static bool icmp4_is_query(uint8_t type)
{
	switch (type) {
	case 0:		/* echo reply */
	case 8:		/* echo */
	case 13:	/* timestamp */
	case 14:	/* timestamp reply */
	case 15:	/* information request */
	case 16:	/* information reply */
	case 17:	/* address mask request */
	case 18:	/* address mask reply */
		return true;
	default:
		return false;
	}
}

/* A source that names one host (RFC 1812 4.3.2.7, 5.3.7) */
static bool icmp4_is_host(const struct in_addr *a)
{
	const uint8_t *b = (const uint8_t *)&a->s_addr;

	return b[0] != 0 && b[0] != 127 && b[0] < 224;
}

enum inet_err inet_icmp4_frag_needed(const uint8_t *orig, size_t orig_len,
				     const struct in_addr *src, uint16_t mtu,
				     uint16_t ip_id, uint8_t *out, size_t cap,
				     size_t *out_len)
{
	const uint8_t *dst_b;
	struct inet_ipv4_info ip;
	enum inet_err err;
	size_t quote, total;
	uint8_t *icmp;

	*out_len = 0;
	err = inet_ipv4_check(orig, orig_len, &ip);
	if (err != INET_OK)
		return err;
	if (ip.frag & INET_IPV4_OFFSET)
		return INET_ICMP_FRAGMENT;
	dst_b = (const uint8_t *)&ip.dst.s_addr;
	if (!icmp4_is_host(&ip.src) || dst_b[0] >= 224)
		return INET_ICMP_BAD_ADDR;
	if (ip.proto == INET_PROTO_ICMP &&
	    (ip.tot_len <= ip.hdr_len || !icmp4_is_query(orig[ip.hdr_len])))
		return INET_ICMP_ABOUT_ERROR;

	quote = ip.tot_len;
	if (quote > INET_ICMP4_MAX_LEN - 20 - 8)
		quote = INET_ICMP4_MAX_LEN - 20 - 8;
	total = 20 + 8 + quote;
	if (cap < total)
		return INET_NO_ROOM;

	out[0] = 0x45;
	out[1] = (uint8_t)((ip.tos & 0x1e) | 0xc0);
	be16_put(out + 2, (uint16_t)total);
	be16_put(out + 4, ip_id);
	be16_put(out + 6, 0);
	out[8] = INET_ICMP_TTL;
	out[9] = INET_PROTO_ICMP;
	be16_put(out + 10, 0);
	memcpy(out + 12, &src->s_addr, 4);
	memcpy(out + 16, &ip.src.s_addr, 4);
	inet_csum_put(out + 10, inet_csum_fold(inet_csum_add(0, out, 20)));

	icmp = out + 20;
	icmp[0] = ICMP_DEST_UNREACH;
	icmp[1] = ICMP_FRAG_NEEDED;
	be16_put(icmp + 2, 0);
	be16_put(icmp + 4, 0);
	be16_put(icmp + 6, mtu);
	/* the quote is copied and summed in one pass */
	inet_csum_put(icmp + 2, inet_csum_fold(inet_csum_copy(
		inet_csum_add(0, icmp, 8), icmp + 8, orig, quote)));
	*out_len = total;
	return INET_OK;
}

/*
 * Whether an IPv6 packet is an ICMPv6 error, looking past extension
 * headers as Linux is_ineligible() does: an unreadable chain counts as not
 * an error, an ICMPv6 header whose type cannot be read counts as one.
 */
static bool icmp6_is_error(const uint8_t *pkt, size_t len)
{
	struct inet_ipv6_upper up;
	enum inet_err e = inet_ipv6_upper(pkt, len, &up);

	if ((e != INET_OK && e != INET_TRUNCATED) ||
	    up.proto != INET_PROTO_ICMPV6)
		return false;
	return up.off >= len || !(pkt[up.off] & ICMPV6_INFOMSG_MASK);
}

enum inet_err inet_icmp6_pkt_too_big(const uint8_t *orig, size_t orig_len,
				     const struct in6_addr *src, uint32_t mtu,
				     uint8_t *out, size_t cap,
				     size_t *out_len)
{
	struct inet_ipv6_info ip;
	enum inet_err err;
	size_t quote, mlen;
	uint64_t sum;
	uint8_t *m;

	*out_len = 0;
	err = inet_ipv6_check(orig, orig_len, &ip);
	if (err != INET_OK)
		return err;
	if (IN6_IS_ADDR_UNSPECIFIED(&ip.src) || IN6_IS_ADDR_MULTICAST(&ip.src))
		return INET_ICMP_BAD_ADDR;
	quote = INET_IPV6_HDR_LEN + (size_t)ip.payload_len;
	if (icmp6_is_error(orig, quote))
		return INET_ICMP_ABOUT_ERROR;
	if (quote > INET_ICMP6_MAX_LEN - INET_IPV6_HDR_LEN - 8)
		quote = INET_ICMP6_MAX_LEN - INET_IPV6_HDR_LEN - 8;
	mlen = 8 + quote;
	if (cap < INET_IPV6_HDR_LEN + mlen)
		return INET_NO_ROOM;

	inet_ipv6_hdr_put(out, (uint16_t)mlen, INET_PROTO_ICMPV6,
			  INET_ICMP_TTL, src, &ip.src);
	m = out + INET_IPV6_HDR_LEN;
	m[0] = ICMPV6_PKT_TOOBIG;
	m[1] = 0;
	be16_put(m + 2, 0);
	be32_put(m + 4, mtu);
	sum = inet_csum_pseudo6(src->s6_addr, ip.src.s6_addr,
				INET_PROTO_ICMPV6, mlen);
	sum = inet_csum_add(sum, m, 8);
	sum = inet_csum_copy(sum, m + 8, orig, quote);
	inet_csum_put(m + 2, inet_csum_fold(sum));
	*out_len = INET_IPV6_HDR_LEN + mlen;
	return INET_OK;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* IPv4 / IPv6 header checks (see ip.h; RFC 791, RFC 8200). */
#include <string.h>

#include "inet/byteorder.h"
#include "inet/csum.h"
#include "inet/ip.h"

enum inet_err inet_ipv4_check(const uint8_t *buf, size_t len,
			      struct inet_ipv4_info *ip)
{
	size_t hl, tl;

	if (len < 1)
		return INET_TRUNCATED;
	if (buf[0] >> 4 != 4)
		return INET_IP_BAD_VERSION;
	hl = (size_t)(buf[0] & 0xf) * 4;
	if (len < INET_IPV4_HDR_LEN)
		return INET_TRUNCATED;
	if (hl < INET_IPV4_HDR_LEN || hl > len)
		return INET_IP_BAD_HDR_LEN;
	tl = be16_get(buf + 2);
	if (tl < hl || tl > len)
		return INET_IP_BAD_LEN;
	ip->hdr_len = (uint8_t)hl;
	ip->tos = buf[1];
	ip->tot_len = (uint16_t)tl;
	ip->id = be16_get(buf + 4);
	ip->frag = be16_get(buf + 6);
	ip->ttl = buf[8];
	ip->proto = buf[9];
	memcpy(&ip->src, buf + 12, 4);
	memcpy(&ip->dst, buf + 16, 4);
	return INET_OK;
}

bool inet_ipv4_hdr_csum_ok(const uint8_t *buf)
{
	return inet_csum_fold(inet_csum_add(0, buf,
					    (size_t)(buf[0] & 0xf) * 4)) == 0;
}

bool inet_ipv4_df(const uint8_t *buf, size_t len)
{
	struct inet_ipv4_info ip;

	if (inet_ipv4_check(buf, len, &ip) != INET_OK)
		return false;
	return (ip.frag & INET_IPV4_DF) != 0;
}

enum inet_err inet_ipv6_check(const uint8_t *buf, size_t len,
			      struct inet_ipv6_info *ip)
{
	if (len < 1)
		return INET_TRUNCATED;
	if (buf[0] >> 4 != 6)
		return INET_IP_BAD_VERSION;
	if (len < INET_IPV6_HDR_LEN)
		return INET_TRUNCATED;
	ip->payload_len = be16_get(buf + 4);
	if ((size_t)ip->payload_len > len - INET_IPV6_HDR_LEN)
		return INET_IP_BAD_LEN;
	ip->tclass = (uint8_t)((buf[0] & 0xf) << 4 | buf[1] >> 4);
	ip->flow = (uint32_t)(buf[1] & 0xf) << 16 | (uint32_t)buf[2] << 8 |
		   buf[3];
	ip->next_hdr = buf[6];
	ip->hop_limit = buf[7];
	memcpy(&ip->src, buf + 8, 16);
	memcpy(&ip->dst, buf + 24, 16);
	return INET_OK;
}

enum inet_err inet_ipv6_upper(const uint8_t *buf, size_t len,
			      struct inet_ipv6_upper *up)
{
	size_t off = INET_IPV6_HDR_LEN, hl;
	uint8_t nh;

	memset(up, 0, sizeof(*up));
	if (len < INET_IPV6_HDR_LEN)
		return INET_TRUNCATED;
	nh = buf[6];
	for (;;) {
		up->proto = nh;
		up->off = off;
		switch (nh) {
		case INET_PROTO_HOPOPTS:
		case INET_PROTO_ROUTING:
		case INET_PROTO_DSTOPTS:
			if (off + 2 > len)
				return INET_TRUNCATED;
			hl = ((size_t)buf[off + 1] + 1) * 8;
			break;
		case INET_PROTO_FRAGMENT:
			if (off + 8 > len)
				return INET_TRUNCATED;
			if (be16_get(buf + off + 2) & 0xfff8)
				return INET_IP_LATER_FRAGMENT;
			up->fragment = true;
			hl = 8;
			break;
		case INET_PROTO_AH:
			if (off + 2 > len)
				return INET_TRUNCATED;
			up->auth = true;
			hl = ((size_t)buf[off + 1] + 2) * 4;
			break;
		default:
			return off > len ? INET_TRUNCATED : INET_OK;
		}
		/* the header's own length may run past len: the next step
		 * finds it, and knows what would have followed */
		nh = buf[off];
		off += hl;
	}
}

void inet_ipv6_hdr_put(uint8_t *p, uint16_t payload_len, uint8_t next_hdr,
		       uint8_t hop_limit, const struct in6_addr *src,
		       const struct in6_addr *dst)
{
	p[0] = 0x60;
	p[1] = p[2] = p[3] = 0;
	be16_put(p + 4, payload_len);
	p[6] = next_hdr;
	p[7] = hop_limit;
	memcpy(p + 8, src->s6_addr, 16);
	memcpy(p + 24, dst->s6_addr, 16);
}

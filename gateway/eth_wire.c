// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The Ethernet side of the gateway on the wire (see eth_wire.h). */
#include <string.h>

#include "inet/byteorder.h"
#include "gateway/eth_wire.h"

enum eth_err eth_parse(const uint8_t *f, size_t len, struct eth_hdr *h)
{
	uint16_t t;

	if (len < ETH_HDR_LEN)
		return ETH_TRUNCATED;
	memcpy(h->dst, f, 6);
	memcpy(h->src, f + 6, 6);
	t = be16_get(f + 12);
	h->tagged = 0;
	h->vid = 0;
	h->pcp = 0;
	h->hdr_len = ETH_HDR_LEN;
	if (t == ETH_P_8021Q_) {
		if (len < ETH_HDR_LEN + ETH_VLAN_LEN)
			return ETH_TRUNCATED;
		h->tagged = 1;
		h->pcp = f[14] >> 5;
		h->vid = be16_get(f + 14) & 0x0fff;
		t = be16_get(f + 16);
		h->hdr_len = ETH_HDR_LEN + ETH_VLAN_LEN;
		if (t == ETH_P_8021Q_)
			return ETH_BAD;		/* stacked tags: not ours */
	}
	if (t < 0x0600)
		return ETH_BAD;			/* 802.3 length, not a type */
	h->type = t;
	return ETH_OK;
}

size_t eth_build(uint8_t *out, const uint8_t dst[6], const uint8_t src[6],
		 uint16_t vid, uint16_t type)
{
	memcpy(out, dst, 6);
	memcpy(out + 6, src, 6);
	if (vid) {
		be16_put(out + 12, ETH_P_8021Q_);
		be16_put(out + 14, vid & 0x0fff);
		be16_put(out + 16, type);
		return ETH_HDR_LEN + ETH_VLAN_LEN;
	}
	be16_put(out + 12, type);
	return ETH_HDR_LEN;
}

void eth_mcast_mac_v4(const struct in_addr *group, uint8_t mac[6])
{
	const uint8_t *g = (const uint8_t *)&group->s_addr;

	mac[0] = 0x01;
	mac[1] = 0x00;
	mac[2] = 0x5e;
	mac[3] = g[1] & 0x7f;
	mac[4] = g[2];
	mac[5] = g[3];
}

void eth_mcast_mac_v6(const struct in6_addr *group, uint8_t mac[6])
{
	mac[0] = 0x33;
	mac[1] = 0x33;
	memcpy(mac + 2, group->s6_addr + 12, 4);
}

void eth_mac_of_ib(const struct ipoib_addr *a, uint8_t mac[6])
{
	uint8_t in[19];
	uint64_t h = 0xcbf29ce484222325ull;
	unsigned int i;

	in[0] = (uint8_t)(a->qpn >> 16);
	in[1] = (uint8_t)(a->qpn >> 8);
	in[2] = (uint8_t)a->qpn;
	memcpy(in + 3, a->gid.raw, 16);
	for (i = 0; i < sizeof(in); i++) {
		h ^= in[i];
		h *= 0x100000001b3ull;
	}
	mac[0] = (uint8_t)(((h >> 56) & 0xfc) | 0x02);
	for (i = 1; i < 6; i++)
		mac[i] = (uint8_t)(h >> (56 - 8 * i));
}

enum eth_err eth_arp_parse(const uint8_t *p, size_t len, struct eth_arp *a)
{
	if (len < ETH_ARP_LEN)
		return ETH_TRUNCATED;
	/* Ethernet (1), IPv4, 6 and 4 bytes */
	if (be16_get(p) != 1 || be16_get(p + 2) != ETH_P_IP_ || p[4] != 6 ||
	    p[5] != 4)
		return ETH_BAD;
	a->op = be16_get(p + 6);
	if (a->op != 1 && a->op != 2)
		return ETH_BAD;
	memcpy(a->sha, p + 8, 6);
	memcpy(&a->spa, p + 14, 4);
	memcpy(a->tha, p + 18, 6);
	memcpy(&a->tpa, p + 24, 4);
	if (eth_is_multicast(a->sha))
		return ETH_BAD;		/* RFC 1812 4.3.2.7 / Linux */
	return ETH_OK;
}

size_t eth_arp_build(uint8_t *out, size_t cap, const struct eth_arp *a)
{
	if (cap < ETH_ARP_LEN)
		return 0;
	be16_put(out, 1);
	be16_put(out + 2, ETH_P_IP_);
	out[4] = 6;
	out[5] = 4;
	be16_put(out + 6, a->op);
	memcpy(out + 8, a->sha, 6);
	memcpy(out + 14, &a->spa, 4);
	memcpy(out + 18, a->tha, 6);
	memcpy(out + 24, &a->tpa, 4);
	return ETH_ARP_LEN;
}

enum inet_err eth_nd_decode(const uint8_t *buf, size_t len,
			    struct eth_nd *nd)
{
	enum inet_err err;

	err = inet_nd_parse(buf, len, ETH_ND_LLA_UNITS, &nd->nd);
	nd->has_slla = err == INET_OK && nd->nd.slla;
	nd->has_tlla = err == INET_OK && nd->nd.tlla;
	if (nd->has_slla)
		memcpy(nd->slla, nd->nd.slla, ETH_ALEN_);
	if (nd->has_tlla)
		memcpy(nd->tlla, nd->nd.tlla, ETH_ALEN_);
	return err;
}

size_t eth_nd_build_ns(const struct in6_addr *src, const struct in6_addr *dst,
		       const struct in6_addr *target, const uint8_t *slla,
		       uint8_t *out, size_t cap)
{
	return inet_nd_build_ns(src, dst, target, slla, ETH_ND_LLA_UNITS, out,
				cap);
}

size_t eth_nd_build_na(const struct in6_addr *src, const struct in6_addr *dst,
		       const struct in6_addr *target, uint8_t flags,
		       const uint8_t *tlla, uint8_t *out, size_t cap)
{
	return inet_nd_build_na(src, dst, target, flags, tlla,
				ETH_ND_LLA_UNITS, out, cap);
}

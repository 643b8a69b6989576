// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The Ethernet side of the gateway on the wire (see eth_wire.h). */
#include <string.h>

#include "inet/byteorder.h"
#include "gateway/eth_wire.h"
#include "inet/csum.h"

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

static uint16_t icmp6_csum(const uint8_t *ip6, size_t plen)
{
	return inet_csum_fold(inet_csum_add(
		inet_csum_pseudo6(ip6 + 8, ip6 + 24, 58, plen), ip6 + 40, plen));
}

enum eth_err eth_nd_parse(const uint8_t *buf, size_t len, struct eth_nd *nd)
{
	size_t plen, o;
	const uint8_t *m;

	if (len < 40 || buf[0] >> 4 != 6 || buf[6] != 58)
		return ETH_NOT_ND;
	plen = be16_get(buf + 4);
	if (40 + plen > len || plen < 24)
		return ETH_NOT_ND;
	m = buf + 40;
	if (m[0] != 135 && m[0] != 136)
		return ETH_NOT_ND;
	if (buf[7] != 255 || m[1] != 0)
		return ETH_BAD;
	if (icmp6_csum(buf, plen) != 0)
		return ETH_BAD;
	nd->type = m[0];
	memcpy(&nd->src, buf + 8, 16);
	memcpy(&nd->dst, buf + 24, 16);
	memcpy(&nd->target, m + 8, 16);
	if (nd->target.s6_addr[0] == 0xff)
		return ETH_BAD;
	nd->na_flags = m[0] == 136 ? m[4] & 0xe0 : 0;
	nd->has_lla = 0;
	for (o = 24; o < plen;) {
		size_t olen;

		if (o + 2 > plen)
			return ETH_BAD;
		olen = (size_t)m[o + 1] * 8;
		if (!olen || o + olen > plen)
			return ETH_BAD;
		/* the option the type carries, first one wins; 8 bytes on
		 * Ethernet, any other length ignored (as Linux does) */
		if (!nd->has_lla && olen == 8 &&
		    m[o] == (nd->type == 135 ? 1 : 2)) {
			nd->has_lla = 1;
			memcpy(nd->lla, m + o + 2, 6);
		}
		o += olen;
	}
	return ETH_OK;
}

size_t eth_nd_build(uint8_t *out, size_t cap, uint8_t type,
		    const struct in6_addr *src, const struct in6_addr *dst,
		    const struct in6_addr *target, uint8_t na_flags,
		    const uint8_t *lla)
{
	size_t plen = 24 + (lla ? 8 : 0);
	uint8_t *m = out + 40;
	uint16_t c;

	if (cap < 40 + plen)
		return 0;
	memset(out, 0, 40 + plen);
	out[0] = 0x60;
	be16_put(out + 4, (uint16_t)plen);
	out[6] = 58;
	out[7] = 255;
	memcpy(out + 8, src, 16);
	memcpy(out + 24, dst, 16);
	m[0] = type;
	if (type == 136)
		m[4] = na_flags & 0xe0;
	memcpy(m + 8, target, 16);
	if (lla) {
		m[24] = type == 135 ? 1 : 2;
		m[25] = 1;
		memcpy(m + 26, lla, 6);
	}
	c = icmp6_csum(out, plen);
	memcpy(m + 2, &c, 2);
	return 40 + plen;
}

int eth_ipv4_fragment(const uint8_t *pkt, size_t len, unsigned int mtu,
		      void (*emit)(void *arg, const uint8_t *frag, size_t n),
		      void *arg)
{
	uint8_t f[65536], opts[60];
	size_t ihl, olen = 0, off, data, unit, hl, n, o;
	uint16_t frag, c;
	int count = 0;

	if (len < 20 || pkt[0] >> 4 != 4)
		return -1;
	ihl = (size_t)(pkt[0] & 0x0f) * 4;
	if (ihl < 20 || ihl > len || be16_get(pkt + 2) != len)
		return -1;
	frag = be16_get(pkt + 6);
	if (frag & 0x4000)
		return -1;			/* DF: not ours to cut */
	/* options that later fragments carry: those with the copy bit */
	for (o = 20; o < ihl;) {
		uint8_t t = pkt[o], l;

		if (t == 0)
			break;
		if (t == 1) {
			o++;
			continue;
		}
		if (o + 1 >= ihl || (l = pkt[o + 1]) < 2 || o + l > ihl)
			return -1;
		if (t & 0x80) {
			memcpy(opts + olen, pkt + o, l);
			olen += l;
		}
		o += l;
	}
	while (olen & 3)
		opts[olen++] = 0;		/* end of options */
	data = len - ihl;
	for (off = 0; off < data; off += n) {
		hl = off ? 20 + olen : ihl;
		if (mtu <= hl + 8)
			return -1;
		unit = ((mtu - hl) / 8) * 8;
		n = data - off > unit ? unit : data - off;
		if (off) {
			memcpy(f, pkt, 20);
			memcpy(f + 20, opts, olen);
			f[0] = (uint8_t)(0x40 | (hl / 4));
		} else {
			memcpy(f, pkt, ihl);
		}
		memcpy(f + hl, pkt + ihl + off, n);
		be16_put(f + 2, (uint16_t)(hl + n));
		/* offsets add to those of a packet already a fragment */
		be16_put(f + 6, (uint16_t)(((frag & 0x1fff) + off / 8) |
					   ((off + n < data) ? 0x2000 :
					    (frag & 0x2000))));
		f[10] = f[11] = 0;
		c = inet_csum_fold(inet_csum_add(0, f, hl));
		memcpy(f + 10, &c, 2);
		emit(arg, f, hl + n);
		count++;
	}
	return count;
}

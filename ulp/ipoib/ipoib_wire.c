// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * IPoIB link codec: encapsulation header and link address (RFC 4391
 * sections 6 and 9.1), ARP over IB (9.1), IPv6 ND with the IB
 * link-layer option (9.1.1, RFC 4861), multicast-to-MGID mapping (4), and
 * the ICMP errors an IPoIB sender returns for packets over the MTU (RFC 1191,
 * RFC 4443).  Where the RFCs leave room, this follows what the Linux driver
 * and stack put on the wire; the functions named in comments are Linux's.
 */
#include <string.h>

#include "inet/byteorder.h"

#include "ulp/ipoib/ipoib_wire.h"

static const char *const ipoib_errstr[IPOIB_WIRE_ERR_MAX] = {
	[IPOIB_WIRE_OK] = "ok",
	[IPOIB_WIRE_TRUNCATED] = "truncated",
	[IPOIB_WIRE_BAD_RESERVED] = "bad_reserved",
	[IPOIB_WIRE_BAD_ETHERTYPE] = "bad_ethertype",
	[IPOIB_WIRE_ARP_BAD_HTYPE] = "arp_bad_htype",
	[IPOIB_WIRE_ARP_BAD_PTYPE] = "arp_bad_ptype",
	[IPOIB_WIRE_ARP_BAD_HLEN] = "arp_bad_hlen",
	[IPOIB_WIRE_ARP_BAD_PLEN] = "arp_bad_plen",
	[IPOIB_WIRE_ARP_BAD_OP] = "arp_bad_op",
	[IPOIB_WIRE_IP_BAD_VERSION] = "ip_bad_version",
	[IPOIB_WIRE_IP_BAD_HDR_LEN] = "ip_bad_hdr_len",
	[IPOIB_WIRE_IP_BAD_LEN] = "ip_bad_len",
	[IPOIB_WIRE_NOT_ND] = "not_nd",
	[IPOIB_WIRE_ND_BAD_HOP_LIMIT] = "nd_bad_hop_limit",
	[IPOIB_WIRE_ND_BAD_CODE] = "nd_bad_code",
	[IPOIB_WIRE_ND_BAD_CSUM] = "nd_bad_csum",
	[IPOIB_WIRE_ND_SHORT] = "nd_short",
	[IPOIB_WIRE_ND_OPT_ZERO_LEN] = "nd_opt_zero_len",
	[IPOIB_WIRE_ND_OPT_OVERRUN] = "nd_opt_overrun",
	[IPOIB_WIRE_ND_BAD_LLA_LEN] = "nd_bad_lla_len",
	[IPOIB_WIRE_ND_MCAST_TARGET] = "nd_mcast_target",
	[IPOIB_WIRE_ND_BAD_DAD] = "nd_bad_dad",
	[IPOIB_WIRE_ND_MCAST_SOLICITED] = "nd_mcast_solicited",
	[IPOIB_WIRE_ND_BAD_SOURCE] = "nd_bad_source",
	[IPOIB_WIRE_NO_ROOM] = "no_room",
	[IPOIB_WIRE_ICMP_ABOUT_ERROR] = "icmp_about_error",
	[IPOIB_WIRE_ICMP_FRAGMENT] = "icmp_fragment",
	[IPOIB_WIRE_ICMP_BAD_ADDR] = "icmp_bad_addr",
	[IPOIB_WIRE_BAD_SYNTAX] = "bad_syntax",
};

const char *ipoib_wire_strerror(enum ipoib_wire_err err)
{
	if ((unsigned int)err >= IPOIB_WIRE_ERR_MAX)
		return "unknown";
	return ipoib_errstr[err];
}

/*
 * Internet checksum (RFC 1071): one's complement sum of 16-bit big-endian
 * words, an odd last byte padded with zero.  Returns the unfolded sum so
 * that pseudo-headers can be added piecewise; csum_fold() finishes it.
 */
static uint32_t csum_add(uint32_t sum, const uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i + 1 < n; i += 2)
		sum += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (n & 1)
		sum += (uint32_t)p[n - 1] << 8;
	/* keep headroom: fold before the sum could overflow on long input */
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return sum;
}

static uint16_t csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* Sum of the IPv6 pseudo-header (RFC 8200 8.1) for an upper-layer length */
static uint32_t csum_ipv6_pseudo(const struct in6_addr *src,
				 const struct in6_addr *dst, uint32_t len,
				 uint8_t next_hdr)
{
	uint8_t tail[8];
	uint32_t sum;

	sum = csum_add(0, src->s6_addr, 16);
	sum = csum_add(sum, dst->s6_addr, 16);
	be32_put(tail, len);
	tail[4] = tail[5] = tail[6] = 0;
	tail[7] = next_hdr;
	return csum_add(sum, tail, sizeof(tail));
}

/* --- link address ------------------------------------------------------ */

void ipoib_addr_encode(const struct ipoib_addr *a, uint8_t *out)
{
	out[0] = a->flags;
	out[1] = (uint8_t)(a->qpn >> 16);
	out[2] = (uint8_t)(a->qpn >> 8);
	out[3] = (uint8_t)a->qpn;
	memcpy(out + 4, a->gid.raw, 16);
}

void ipoib_addr_decode(const uint8_t *in, struct ipoib_addr *a)
{
	a->flags = in[0];
	a->qpn = (uint32_t)in[1] << 16 | (uint32_t)in[2] << 8 | in[3];
	memcpy(a->gid.raw, in + 4, 16);
}

char *ipoib_addr_ntop(const struct ipoib_addr *a, char *buf, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	uint8_t raw[IPOIB_HWADDR_LEN];
	size_t i;

	if (len < IPOIB_ADDR_STRLEN)
		return NULL;
	ipoib_addr_encode(a, raw);
	for (i = 0; i < IPOIB_HWADDR_LEN; i++) {
		buf[3 * i] = hex[raw[i] >> 4];
		buf[3 * i + 1] = hex[raw[i] & 0xf];
		buf[3 * i + 2] = i + 1 < IPOIB_HWADDR_LEN ? ':' : '\0';
	}
	return buf;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

enum ipoib_wire_err ipoib_addr_pton(const char *s, struct ipoib_addr *a)
{
	uint8_t raw[IPOIB_HWADDR_LEN];
	size_t i;
	int hi, lo;

	for (i = 0; i < IPOIB_HWADDR_LEN; i++) {
		hi = hexval(*s);
		if (hi < 0)
			return IPOIB_WIRE_BAD_SYNTAX;
		s++;
		lo = hexval(*s);
		if (lo >= 0) {
			raw[i] = (uint8_t)(hi << 4 | lo);
			s++;
		} else {
			raw[i] = (uint8_t)hi;
		}
		if (i + 1 < IPOIB_HWADDR_LEN) {
			if (*s != ':')
				return IPOIB_WIRE_BAD_SYNTAX;
			s++;
		}
	}
	if (*s != '\0')
		return IPOIB_WIRE_BAD_SYNTAX;
	ipoib_addr_decode(raw, a);
	return IPOIB_WIRE_OK;
}

bool ipoib_addr_is_mcast(const struct ipoib_addr *a)
{
	return a->gid.raw[0] == 0xff;
}

void ipoib_bcast_mgid(uint16_t pkey, uint8_t scope, union fab_gid *mgid)
{
	memset(mgid->raw, 0, sizeof(mgid->raw));
	mgid->raw[0] = 0xff;
	mgid->raw[1] = (uint8_t)(0x10 | (scope & 0xf));
	be16_put(mgid->raw + 2, IPOIB_MGID_SIG_IPV4);
	be16_put(mgid->raw + 4, (uint16_t)(pkey | IPOIB_PKEY_FULL));
	memset(mgid->raw + 12, 0xff, 4);
}

void ipoib_bcast_addr(uint16_t pkey, uint8_t scope, struct ipoib_addr *a)
{
	a->flags = 0;
	a->qpn = IPOIB_QPN_MCAST;
	ipoib_bcast_mgid(pkey, scope, &a->gid);
}

/* --- encapsulation header ---------------------------------------------- */

bool ipoib_ethertype_ok(uint16_t ethertype)
{
	switch (ethertype) {
	case IPOIB_ETH_P_IP:
	case IPOIB_ETH_P_IPV6:
	case IPOIB_ETH_P_ARP:
	case IPOIB_ETH_P_RARP:
	case IPOIB_ETH_P_TIPC:
		return true;
	default:
		return false;
	}
}

enum ipoib_wire_err ipoib_hdr_parse(const uint8_t *buf, size_t len,
				    uint16_t *ethertype)
{
	if (len < IPOIB_HDR_LEN)
		return IPOIB_WIRE_TRUNCATED;
	*ethertype = be16_get(buf);
	if (buf[2] != 0 || buf[3] != 0)
		return IPOIB_WIRE_BAD_RESERVED;
	if (!ipoib_ethertype_ok(*ethertype))
		return IPOIB_WIRE_BAD_ETHERTYPE;
	return IPOIB_WIRE_OK;
}

size_t ipoib_hdr_build(uint16_t ethertype, uint8_t *out, size_t cap)
{
	if (cap < IPOIB_HDR_LEN)
		return 0;
	be16_put(out, ethertype);
	out[2] = out[3] = 0;
	return IPOIB_HDR_LEN;
}

/* --- ARP over InfiniBand ----------------------------------------------- */

/*
 * struct arphdr (RFC 826) with 20-byte hardware addresses:
 *   0 hrd  2 pro  4 hln  5 pln  6 op  8 sha  28 spa  32 tha  52 tpa  56
 */
#define ARP_OFF_HRD	0
#define ARP_OFF_PRO	2
#define ARP_OFF_HLN	4
#define ARP_OFF_PLN	5
#define ARP_OFF_OP	6
#define ARP_OFF_SHA	8
#define ARP_OFF_SPA	28
#define ARP_OFF_THA	32
#define ARP_OFF_TPA	52

enum ipoib_wire_err ipoib_arp_parse(const uint8_t *buf, size_t len,
				    struct ipoib_arp *arp)
{
	uint16_t op;

	/* the fixed part first, so that a short packet names its fault */
	if (len < ARP_OFF_SHA)
		return IPOIB_WIRE_TRUNCATED;
	if (be16_get(buf + ARP_OFF_HRD) != IPOIB_ARPHRD_INFINIBAND)
		return IPOIB_WIRE_ARP_BAD_HTYPE;
	if (be16_get(buf + ARP_OFF_PRO) != IPOIB_ETH_P_IP)
		return IPOIB_WIRE_ARP_BAD_PTYPE;
	if (buf[ARP_OFF_HLN] != IPOIB_HWADDR_LEN)
		return IPOIB_WIRE_ARP_BAD_HLEN;
	if (buf[ARP_OFF_PLN] != 4)
		return IPOIB_WIRE_ARP_BAD_PLEN;
	op = be16_get(buf + ARP_OFF_OP);
	if (op != IPOIB_ARPOP_REQUEST && op != IPOIB_ARPOP_REPLY)
		return IPOIB_WIRE_ARP_BAD_OP;
	if (len < IPOIB_ARP_LEN)
		return IPOIB_WIRE_TRUNCATED;
	arp->op = op;
	ipoib_addr_decode(buf + ARP_OFF_SHA, &arp->sha);
	memcpy(&arp->spa, buf + ARP_OFF_SPA, 4);
	ipoib_addr_decode(buf + ARP_OFF_THA, &arp->tha);
	memcpy(&arp->tpa, buf + ARP_OFF_TPA, 4);
	return IPOIB_WIRE_OK;
}

size_t ipoib_arp_build(const struct ipoib_arp *arp, uint8_t *out, size_t cap)
{
	if (cap < IPOIB_ARP_LEN)
		return 0;
	be16_put(out + ARP_OFF_HRD, IPOIB_ARPHRD_INFINIBAND);
	be16_put(out + ARP_OFF_PRO, IPOIB_ETH_P_IP);
	out[ARP_OFF_HLN] = IPOIB_HWADDR_LEN;
	out[ARP_OFF_PLN] = 4;
	be16_put(out + ARP_OFF_OP, arp->op);
	ipoib_addr_encode(&arp->sha, out + ARP_OFF_SHA);
	memcpy(out + ARP_OFF_SPA, &arp->spa, 4);
	ipoib_addr_encode(&arp->tha, out + ARP_OFF_THA);
	memcpy(out + ARP_OFF_TPA, &arp->tpa, 4);
	return IPOIB_ARP_LEN;
}

size_t ipoib_arp_build_request(const struct ipoib_addr *sha,
			       const struct in_addr *spa,
			       const struct in_addr *tpa, uint8_t *out,
			       size_t cap)
{
	struct ipoib_arp a;

	memset(&a, 0, sizeof(a));
	a.op = IPOIB_ARPOP_REQUEST;
	a.sha = *sha;
	a.spa = *spa;
	a.tpa = *tpa;
	return ipoib_arp_build(&a, out, cap);
}

size_t ipoib_arp_build_reply(const struct ipoib_addr *sha,
			     const struct in_addr *spa,
			     const struct ipoib_addr *tha,
			     const struct in_addr *tpa, uint8_t *out,
			     size_t cap)
{
	struct ipoib_arp a;

	a.op = IPOIB_ARPOP_REPLY;
	a.sha = *sha;
	a.spa = *spa;
	a.tha = *tha;
	a.tpa = *tpa;
	return ipoib_arp_build(&a, out, cap);
}

size_t ipoib_arp_build_announce(const struct ipoib_addr *sha,
				const struct in_addr *ip, uint8_t *out,
				size_t cap)
{
	return ipoib_arp_build_request(sha, ip, ip, out, cap);
}

/* --- IPv4 / IPv6 headers ----------------------------------------------- */

enum ipoib_wire_err ipoib_ipv4_check(const uint8_t *buf, size_t len,
				     struct ipoib_ipv4_info *ip)
{
	size_t hl, tl;

	if (len < 1)
		return IPOIB_WIRE_TRUNCATED;
	if (buf[0] >> 4 != 4)
		return IPOIB_WIRE_IP_BAD_VERSION;
	hl = (size_t)(buf[0] & 0xf) * 4;
	if (len < 20)
		return IPOIB_WIRE_TRUNCATED;
	if (hl < 20 || hl > len)
		return IPOIB_WIRE_IP_BAD_HDR_LEN;
	tl = be16_get(buf + 2);
	if (tl < hl || tl > len)
		return IPOIB_WIRE_IP_BAD_LEN;
	ip->hdr_len = (uint8_t)hl;
	ip->tos = buf[1];
	ip->tot_len = (uint16_t)tl;
	ip->id = be16_get(buf + 4);
	ip->frag = be16_get(buf + 6);
	ip->ttl = buf[8];
	ip->proto = buf[9];
	memcpy(&ip->src, buf + 12, 4);
	memcpy(&ip->dst, buf + 16, 4);
	return IPOIB_WIRE_OK;
}

bool ipoib_ipv4_hdr_csum_ok(const uint8_t *buf)
{
	return csum_fold(csum_add(0, buf, (size_t)(buf[0] & 0xf) * 4)) == 0;
}

bool ipoib_ipv4_df(const uint8_t *buf, size_t len)
{
	struct ipoib_ipv4_info ip;

	if (ipoib_ipv4_check(buf, len, &ip) != IPOIB_WIRE_OK)
		return false;
	return (ip.frag & 0x4000) != 0;
}

enum ipoib_wire_err ipoib_ipv6_check(const uint8_t *buf, size_t len,
				     struct ipoib_ipv6_info *ip)
{
	if (len < 1)
		return IPOIB_WIRE_TRUNCATED;
	if (buf[0] >> 4 != 6)
		return IPOIB_WIRE_IP_BAD_VERSION;
	if (len < IPOIB_IPV6_HDR_LEN)
		return IPOIB_WIRE_TRUNCATED;
	ip->payload_len = be16_get(buf + 4);
	if ((size_t)ip->payload_len > len - IPOIB_IPV6_HDR_LEN)
		return IPOIB_WIRE_IP_BAD_LEN;
	ip->tclass = (uint8_t)((buf[0] & 0xf) << 4 | buf[1] >> 4);
	ip->flow = (uint32_t)(buf[1] & 0xf) << 16 | (uint32_t)buf[2] << 8 |
		   buf[3];
	ip->next_hdr = buf[6];
	ip->hop_limit = buf[7];
	memcpy(&ip->src, buf + 8, 16);
	memcpy(&ip->dst, buf + 24, 16);
	return IPOIB_WIRE_OK;
}

/* --- IPv6 neighbour discovery ------------------------------------------ */

#define IPPROTO_ICMPV6_NUM	58

static bool in6_is_mcast(const struct in6_addr *a)
{
	return a->s6_addr[0] == 0xff;
}

static bool in6_is_unspec(const struct in6_addr *a)
{
	static const uint8_t zero[16];

	return memcmp(a->s6_addr, zero, 16) == 0;
}

/* fe80::/10 */
static bool in6_is_linklocal(const struct in6_addr *a)
{
	return a->s6_addr[0] == 0xfe && (a->s6_addr[1] & 0xc0) == 0x80;
}

void ipoib_link_local(const union fab_gid *gid, struct in6_addr *out)
{
	memset(out, 0, sizeof(*out));
	out->s6_addr[0] = 0xfe;
	out->s6_addr[1] = 0x80;
	memcpy(out->s6_addr + 8, gid->raw + 8, 8);
	out->s6_addr[8] |= 0x02;
}

void ipoib_solicited_node(const struct in6_addr *addr, struct in6_addr *out)
{
	uint8_t s[16] = { 0xff, 0x02, 0, 0, 0, 0, 0, 0,
			  0, 0, 0, 0x01, 0xff, 0, 0, 0 };

	memcpy(s + 13, addr->s6_addr + 13, 3);
	memcpy(out->s6_addr, s, 16);
}

bool ipoib_is_solicited_node(const struct in6_addr *addr)
{
	static const uint8_t prefix[13] = { 0xff, 0x02, 0, 0, 0, 0, 0, 0,
					    0, 0, 0, 0x01, 0xff };

	return memcmp(addr->s6_addr, prefix, sizeof(prefix)) == 0;
}

/* fixed part of each ND message, ICMPv6 header included (RFC 4861 4.x) */
static size_t nd_min_len(uint8_t type)
{
	switch (type) {
	case IPOIB_ND_RS:
		return 8;
	case IPOIB_ND_RA:
		return 16;
	case IPOIB_ND_NS:
	case IPOIB_ND_NA:
		return 24;
	case IPOIB_ND_REDIRECT:
		return 40;
	default:
		return 0;
	}
}

/*
 * Walk the options after the fixed part (ndisc_parse_options): every
 * option's length in 8-byte units is non-zero and inside the message.
 */
static enum ipoib_wire_err nd_options(const uint8_t *opt, size_t len,
				      struct ipoib_nd *nd, bool *slla_bad,
				      bool *tlla_bad)
{
	size_t l;

	while (len > 0) {
		if (len < 2)
			return IPOIB_WIRE_ND_OPT_OVERRUN;
		l = (size_t)opt[1] * 8;
		if (l == 0)
			return IPOIB_WIRE_ND_OPT_ZERO_LEN;
		if (l > len)
			return IPOIB_WIRE_ND_OPT_OVERRUN;
		if (opt[0] == IPOIB_ND_OPT_SLLA && !nd->has_slla &&
		    !*slla_bad) {
			if (l == IPOIB_ND_LLA_OPT_LEN) {
				ipoib_addr_decode(opt + 4, &nd->slla);
				nd->has_slla = true;
			} else {
				*slla_bad = true;
			}
		} else if (opt[0] == IPOIB_ND_OPT_TLLA && !nd->has_tlla &&
			   !*tlla_bad) {
			if (l == IPOIB_ND_LLA_OPT_LEN) {
				ipoib_addr_decode(opt + 4, &nd->tlla);
				nd->has_tlla = true;
			} else {
				*tlla_bad = true;
			}
		}
		opt += l;
		len -= l;
	}
	return IPOIB_WIRE_OK;
}

enum ipoib_wire_err ipoib_nd_parse(const uint8_t *buf, size_t len,
				   struct ipoib_nd *nd)
{
	enum ipoib_wire_err err;
	const uint8_t *m;
	size_t mlen, fixed;
	bool slla_bad = false, tlla_bad = false;
	uint32_t sum;

	memset(nd, 0, sizeof(*nd));
	err = ipoib_ipv6_check(buf, len, &nd->ip);
	if (err != IPOIB_WIRE_OK)
		return err;
	m = buf + IPOIB_IPV6_HDR_LEN;
	mlen = nd->ip.payload_len;
	if (nd->ip.next_hdr != IPPROTO_ICMPV6_NUM)
		return IPOIB_WIRE_NOT_ND;
	if (mlen < 1)
		return IPOIB_WIRE_TRUNCATED;
	fixed = nd_min_len(m[0]);
	if (fixed == 0)
		return IPOIB_WIRE_NOT_ND;
	nd->type = m[0];
	if (nd->ip.hop_limit != IPOIB_ND_HOP_LIMIT)
		return IPOIB_WIRE_ND_BAD_HOP_LIMIT;
	if (mlen < 4)
		return IPOIB_WIRE_ND_SHORT;
	sum = csum_ipv6_pseudo(&nd->ip.src, &nd->ip.dst, (uint32_t)mlen,
			       IPPROTO_ICMPV6_NUM);
	if (csum_fold(csum_add(sum, m, mlen)) != 0)
		return IPOIB_WIRE_ND_BAD_CSUM;
	if (m[1] != 0)
		return IPOIB_WIRE_ND_BAD_CODE;
	if (mlen < fixed)
		return IPOIB_WIRE_ND_SHORT;

	switch (nd->type) {
	case IPOIB_ND_RA:
		nd->flags = m[5] & 0xc0;
		break;
	case IPOIB_ND_NA:
		nd->flags = m[4] & (IPOIB_NA_FLAG_ROUTER |
				    IPOIB_NA_FLAG_SOLICITED |
				    IPOIB_NA_FLAG_OVERRIDE);
		/* fall through */
	case IPOIB_ND_NS:
		memcpy(&nd->target, m + 8, 16);
		break;
	case IPOIB_ND_REDIRECT:
		memcpy(&nd->target, m + 8, 16);
		memcpy(&nd->redirect_dst, m + 24, 16);
		break;
	}

	err = nd_options(m + fixed, mlen - fixed, nd, &slla_bad, &tlla_bad);
	if (err != IPOIB_WIRE_OK)
		return err;

	switch (nd->type) {
	case IPOIB_ND_NS:
		if (in6_is_mcast(&nd->target))
			return IPOIB_WIRE_ND_MCAST_TARGET;
		if (slla_bad)
			return IPOIB_WIRE_ND_BAD_LLA_LEN;
		/* RFC 4861 7.1.1 */
		if (in6_is_unspec(&nd->ip.src) &&
		    (!ipoib_is_solicited_node(&nd->ip.dst) || nd->has_slla))
			return IPOIB_WIRE_ND_BAD_DAD;
		break;
	case IPOIB_ND_NA:
		if (in6_is_mcast(&nd->target))
			return IPOIB_WIRE_ND_MCAST_TARGET;
		if (in6_is_mcast(&nd->ip.dst) &&
		    (nd->flags & IPOIB_NA_FLAG_SOLICITED))
			return IPOIB_WIRE_ND_MCAST_SOLICITED;
		if (tlla_bad)
			return IPOIB_WIRE_ND_BAD_LLA_LEN;
		break;
	case IPOIB_ND_RS:
		if (slla_bad)
			return IPOIB_WIRE_ND_BAD_LLA_LEN;
		break;
	case IPOIB_ND_RA:
		if (!in6_is_linklocal(&nd->ip.src))
			return IPOIB_WIRE_ND_BAD_SOURCE;
		if (slla_bad)
			return IPOIB_WIRE_ND_BAD_LLA_LEN;
		break;
	case IPOIB_ND_REDIRECT:
		if (!in6_is_linklocal(&nd->ip.src))
			return IPOIB_WIRE_ND_BAD_SOURCE;
		if (tlla_bad)
			return IPOIB_WIRE_ND_BAD_LLA_LEN;
		break;
	}
	return IPOIB_WIRE_OK;
}

static void ipv6_hdr_put(uint8_t *p, uint16_t payload_len, uint8_t next_hdr,
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

static void nd_lla_put(uint8_t *p, uint8_t type, const struct ipoib_addr *a)
{
	p[0] = type;
	p[1] = IPOIB_ND_LLA_OPT_LEN / 8;
	p[2] = p[3] = 0;		/* ndisc_addr_option_pad() = 2 */
	ipoib_addr_encode(a, p + 4);
}

/* NS and NA share their layout: type, code, csum, 4 bytes, target, option */
static size_t nd_build(uint8_t type, uint8_t flags,
		       const struct in6_addr *src, const struct in6_addr *dst,
		       const struct in6_addr *target, uint8_t opt_type,
		       const struct ipoib_addr *lla, uint8_t *out, size_t cap)
{
	size_t mlen = 24 + (lla ? IPOIB_ND_LLA_OPT_LEN : 0);
	uint8_t *m = out + IPOIB_IPV6_HDR_LEN;
	uint32_t sum;

	if (cap < IPOIB_IPV6_HDR_LEN + mlen)
		return 0;
	ipv6_hdr_put(out, (uint16_t)mlen, IPPROTO_ICMPV6_NUM,
		     IPOIB_ND_HOP_LIMIT, src, dst);
	m[0] = type;
	m[1] = 0;
	m[2] = m[3] = 0;
	m[4] = flags;
	m[5] = m[6] = m[7] = 0;
	memcpy(m + 8, target->s6_addr, 16);
	if (lla)
		nd_lla_put(m + 24, opt_type, lla);
	sum = csum_ipv6_pseudo(src, dst, (uint32_t)mlen, IPPROTO_ICMPV6_NUM);
	be16_put(m + 2, csum_fold(csum_add(sum, m, mlen)));
	return IPOIB_IPV6_HDR_LEN + mlen;
}

size_t ipoib_nd_build_ns(const struct in6_addr *src,
			 const struct in6_addr *dst,
			 const struct in6_addr *target,
			 const struct ipoib_addr *slla, uint8_t *out,
			 size_t cap)
{
	struct in6_addr snm;

	if (!dst) {
		ipoib_solicited_node(target, &snm);
		dst = &snm;
	}
	if (in6_is_unspec(src))
		slla = NULL;
	return nd_build(IPOIB_ND_NS, 0, src, dst, target, IPOIB_ND_OPT_SLLA,
			slla, out, cap);
}

size_t ipoib_nd_build_na(const struct in6_addr *src,
			 const struct in6_addr *dst,
			 const struct in6_addr *target, uint8_t flags,
			 const struct ipoib_addr *tlla, uint8_t *out,
			 size_t cap)
{
	flags &= IPOIB_NA_FLAG_ROUTER | IPOIB_NA_FLAG_SOLICITED |
		 IPOIB_NA_FLAG_OVERRIDE;
	return nd_build(IPOIB_ND_NA, flags, src, dst, target,
			IPOIB_ND_OPT_TLLA, tlla, out, cap);
}

/* --- multicast mapping ------------------------------------------------- */

/* What ip_ib_mc_map() and ipv6_ib_mc_map() keep of the broadcast MGID */
static void mgid_prefix(const union fab_gid *bcast, uint16_t sig,
			union fab_gid *mgid)
{
	memset(mgid->raw, 0, sizeof(mgid->raw));
	mgid->raw[0] = 0xff;
	mgid->raw[1] = (uint8_t)(0x10 | (bcast->raw[1] & 0xf));
	be16_put(mgid->raw + 2, sig);
	mgid->raw[4] = bcast->raw[4];
	mgid->raw[5] = bcast->raw[5];
}

void ipoib_mcast_mgid_ipv4(const struct in_addr *group,
			   const union fab_gid *bcast, union fab_gid *mgid)
{
	const uint8_t *g = (const uint8_t *)&group->s_addr;

	mgid_prefix(bcast, IPOIB_MGID_SIG_IPV4, mgid);
	mgid->raw[12] = g[0] & 0x0f;
	mgid->raw[13] = g[1];
	mgid->raw[14] = g[2];
	mgid->raw[15] = g[3];
}

void ipoib_mcast_mgid_ipv6(const struct in6_addr *group,
			   const union fab_gid *bcast, union fab_gid *mgid)
{
	mgid_prefix(bcast, IPOIB_MGID_SIG_IPV6, mgid);
	memcpy(mgid->raw + 6, group->s6_addr + 6, 10);
}

void ipoib_mcast_addr(const union fab_gid *mgid, struct ipoib_addr *a)
{
	a->flags = 0;
	a->qpn = IPOIB_QPN_MCAST;
	a->gid = *mgid;
}

bool ipoib_mgid_joinable(const union fab_gid *mgid,
			 const union fab_gid *bcast)
{
	/* link-address bytes 4-5 and 7-9, the flags/QPN being fixed */
	return mgid->raw[0] == bcast->raw[0] && mgid->raw[1] == bcast->raw[1] &&
	       memcmp(mgid->raw + 3, bcast->raw + 3, 3) == 0;
}

/* --- ICMP errors for oversize packets ---------------------------------- */

#define IPPROTO_ICMP_NUM	1
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
static bool ipv4_is_host(const struct in_addr *a)
{
	const uint8_t *b = (const uint8_t *)&a->s_addr;

	return b[0] != 0 && b[0] != 127 && b[0] < 224;
}

enum ipoib_wire_err ipoib_icmp4_frag_needed(const uint8_t *orig,
					    size_t orig_len,
					    const struct in_addr *src,
					    uint16_t mtu, uint16_t ip_id,
					    uint8_t *out, size_t cap,
					    size_t *out_len)
{
	const uint8_t *dst_b;
	struct ipoib_ipv4_info ip;
	enum ipoib_wire_err err;
	size_t quote, total;
	uint8_t *icmp;

	*out_len = 0;
	err = ipoib_ipv4_check(orig, orig_len, &ip);
	if (err != IPOIB_WIRE_OK)
		return err;
	if (ip.frag & 0x1fff)
		return IPOIB_WIRE_ICMP_FRAGMENT;
	dst_b = (const uint8_t *)&ip.dst.s_addr;
	if (!ipv4_is_host(&ip.src) || dst_b[0] >= 224)
		return IPOIB_WIRE_ICMP_BAD_ADDR;
	if (ip.proto == IPPROTO_ICMP_NUM &&
	    (ip.tot_len <= ip.hdr_len || !icmp4_is_query(orig[ip.hdr_len])))
		return IPOIB_WIRE_ICMP_ABOUT_ERROR;

	quote = ip.tot_len;
	if (quote > IPOIB_ICMP4_MAX_LEN - 20 - 8)
		quote = IPOIB_ICMP4_MAX_LEN - 20 - 8;
	total = 20 + 8 + quote;
	if (cap < total)
		return IPOIB_WIRE_NO_ROOM;

	out[0] = 0x45;
	out[1] = (uint8_t)((ip.tos & 0x1e) | 0xc0);
	be16_put(out + 2, (uint16_t)total);
	be16_put(out + 4, ip_id);
	be16_put(out + 6, 0);
	out[8] = IPOIB_ICMP_TTL;
	out[9] = IPPROTO_ICMP_NUM;
	be16_put(out + 10, 0);
	memcpy(out + 12, &src->s_addr, 4);
	memcpy(out + 16, &ip.src.s_addr, 4);
	be16_put(out + 10, csum_fold(csum_add(0, out, 20)));

	icmp = out + 20;
	icmp[0] = ICMP_DEST_UNREACH;
	icmp[1] = ICMP_FRAG_NEEDED;
	be16_put(icmp + 2, 0);
	be16_put(icmp + 4, 0);
	be16_put(icmp + 6, mtu);
	memcpy(icmp + 8, orig, quote);
	be16_put(icmp + 2, csum_fold(csum_add(0, icmp, 8 + quote)));
	*out_len = total;
	return IPOIB_WIRE_OK;
}

/*
 * Whether an IPv6 packet is an ICMPv6 error, looking past extension
 * headers as ipv6_skip_exthdr() does: an unreadable chain counts as not an
 * error, an ICMPv6 header whose type cannot be read counts as one.
 */
static bool ipv6_is_icmp_error(const uint8_t *pkt, size_t len, uint8_t nh)
{
	size_t off = IPOIB_IPV6_HDR_LEN, hl;

	for (;;) {
		switch (nh) {
		case 0:		/* hop-by-hop */
		case 43:	/* routing */
		case 60:	/* destination options */
			if (off + 2 > len)
				return false;
			hl = ((size_t)pkt[off + 1] + 1) * 8;
			break;
		case 44:	/* fragment: a later fragment ends the chain */
			if (off + 8 > len)
				return false;
			if (be16_get(pkt + off + 2) & 0xfff8)
				return false;
			hl = 8;
			break;
		case 51:	/* authentication header */
			if (off + 2 > len)
				return false;
			hl = ((size_t)pkt[off + 1] + 2) * 4;
			break;
		case IPPROTO_ICMPV6_NUM:
			if (off >= len)
				return true;
			return !(pkt[off] & ICMPV6_INFOMSG_MASK);
		default:
			return false;
		}
		nh = pkt[off];
		off += hl;
	}
}

enum ipoib_wire_err ipoib_icmp6_pkt_too_big(const uint8_t *orig,
					    size_t orig_len,
					    const struct in6_addr *src,
					    uint32_t mtu, uint8_t *out,
					    size_t cap, size_t *out_len)
{
	struct ipoib_ipv6_info ip;
	enum ipoib_wire_err err;
	size_t quote, mlen;
	uint8_t *m;
	uint32_t sum;

	*out_len = 0;
	err = ipoib_ipv6_check(orig, orig_len, &ip);
	if (err != IPOIB_WIRE_OK)
		return err;
	if (in6_is_unspec(&ip.src) || in6_is_mcast(&ip.src))
		return IPOIB_WIRE_ICMP_BAD_ADDR;
	quote = IPOIB_IPV6_HDR_LEN + (size_t)ip.payload_len;
	if (ipv6_is_icmp_error(orig, quote, ip.next_hdr))
		return IPOIB_WIRE_ICMP_ABOUT_ERROR;
	if (quote > IPOIB_ICMP6_MAX_LEN - IPOIB_IPV6_HDR_LEN - 8)
		quote = IPOIB_ICMP6_MAX_LEN - IPOIB_IPV6_HDR_LEN - 8;
	mlen = 8 + quote;
	if (cap < IPOIB_IPV6_HDR_LEN + mlen)
		return IPOIB_WIRE_NO_ROOM;

	ipv6_hdr_put(out, (uint16_t)mlen, IPPROTO_ICMPV6_NUM, IPOIB_ICMP_TTL,
		     src, &ip.src);
	m = out + IPOIB_IPV6_HDR_LEN;
	m[0] = ICMPV6_PKT_TOOBIG;
	m[1] = 0;
	be16_put(m + 2, 0);
	be32_put(m + 4, mtu);
	memcpy(m + 8, orig, quote);
	sum = csum_ipv6_pseudo(src, &ip.src, (uint32_t)mlen,
			       IPPROTO_ICMPV6_NUM);
	be16_put(m + 2, csum_fold(csum_add(sum, m, mlen)));
	*out_len = IPOIB_IPV6_HDR_LEN + mlen;
	return IPOIB_WIRE_OK;
}

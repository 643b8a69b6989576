// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * IPoIB link codec: encapsulation header and link address (RFC 4391
 * sections 6 and 9.1), ARP over IB (9.1), the IB link-layer option of IPv6
 * ND (9.1.1) around inet/nd.c, and multicast-to-MGID mapping (4).  Where
 * the RFCs leave room, this follows what the Linux driver
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
	[IPOIB_WIRE_BAD_SYNTAX] = "bad_syntax",
};

const char *ipoib_wire_strerror(enum ipoib_wire_err err)
{
	if ((unsigned int)err >= IPOIB_WIRE_ERR_MAX)
		return "unknown";
	return ipoib_errstr[err];
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

/* --- IPv6 neighbour discovery with the IB option ----------------------- */

void ipoib_link_local(const union fab_gid *gid, struct in6_addr *out)
{
	memset(out, 0, sizeof(*out));
	out->s6_addr[0] = 0xfe;
	out->s6_addr[1] = 0x80;
	memcpy(out->s6_addr + 8, gid->raw + 8, 8);
	out->s6_addr[8] |= 0x02;
}

enum inet_err ipoib_nd_decode(const uint8_t *buf, size_t len,
			      struct ipoib_nd *nd)
{
	struct inet_nd g;
	enum inet_err err;

	memset(nd, 0, sizeof(*nd));
	err = inet_nd_parse(buf, len, IPOIB_ND_LLA_UNITS, &g);
	nd->ip = g.ip;
	nd->type = g.type;
	nd->flags = g.flags;
	nd->target = g.target;
	nd->redirect_dst = g.redirect_dst;
	if (err != INET_OK)
		return err;
	if (g.slla) {
		ipoib_addr_decode(g.slla + IPOIB_ND_LLA_PAD, &nd->slla);
		nd->has_slla = true;
	}
	if (g.tlla) {
		ipoib_addr_decode(g.tlla + IPOIB_ND_LLA_PAD, &nd->tlla);
		nd->has_tlla = true;
	}
	return INET_OK;
}

/* The option's body: the pad bytes Linux writes as zero, then the address */
static const uint8_t *nd_lla_body(const struct ipoib_addr *a,
				  uint8_t body[IPOIB_ND_LLA_OPT_LEN - 2])
{
	if (!a)
		return NULL;
	memset(body, 0, IPOIB_ND_LLA_PAD);
	ipoib_addr_encode(a, body + IPOIB_ND_LLA_PAD);
	return body;
}

size_t ipoib_nd_build_ns(const struct in6_addr *src,
			 const struct in6_addr *dst,
			 const struct in6_addr *target,
			 const struct ipoib_addr *slla, uint8_t *out,
			 size_t cap)
{
	uint8_t body[IPOIB_ND_LLA_OPT_LEN - 2];

	return inet_nd_build_ns(src, dst, target, nd_lla_body(slla, body),
				IPOIB_ND_LLA_UNITS, out, cap);
}

size_t ipoib_nd_build_na(const struct in6_addr *src,
			 const struct in6_addr *dst,
			 const struct in6_addr *target, uint8_t flags,
			 const struct ipoib_addr *tlla, uint8_t *out,
			 size_t cap)
{
	uint8_t body[IPOIB_ND_LLA_OPT_LEN - 2];

	return inet_nd_build_na(src, dst, target, flags,
				nd_lla_body(tlla, body), IPOIB_ND_LLA_UNITS,
				out, cap);
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

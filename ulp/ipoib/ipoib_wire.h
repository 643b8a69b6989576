/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * IPoIB link codec (RFC 4391, RFC 4392; the Linux driver
 * drivers/infiniband/ulp/ipoib as the behaviour real IB hosts show): the one
 * place where the encapsulation header, the 20-byte link address, ARP over
 * InfiniBand, the IPv6 ND link-layer address option for IB and the
 * multicast-to-MGID mapping are laid out.  Used by ipoibd and the gateway.
 * What is IP whatever the link (header checks, ND, ICMP errors, checksums)
 * is in inet/; the ND here only reads and writes the IB link-layer option
 * around inet/nd.h.
 *
 * Pure and allocation-free: no I/O, no logging, no global state.
 *
 * Parsers take (buf, len), never read past len, and return an
 * ipoib_wire_err naming the first thing wrong (ipoib_nd_decode() an
 * inet_err: what can be wrong with ND is IP's); the reasons are meant to be
 * drop counters, ipoib_wire_strerror() gives their names.  Builders return
 * the bytes written, 0 when cap is too small.
 *
 * Byte order: IPv4/IPv6 addresses are struct in_addr / struct in6_addr
 * (network order, as in the packet); every other field is in host order.
 *
 * What sits where in a received UD datagram (the 40-byte GRH slot is the
 * fabric's business and is not part of anything here):
 *
 *   IPoIB header (4)  | ARP (56) or IPv4 / IPv6 packet ...
 */
#ifndef IBGW_IPOIB_WIRE_H
#define IBGW_IPOIB_WIRE_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fabric/fabric.h"
#include "inet/nd.h"

/* --- constants --------------------------------------------------------- */

#define IPOIB_HDR_LEN		4	/* be16 ethertype, u16 zero */
#define IPOIB_HWADDR_LEN	20	/* flags, QPN:24, GID:128 */
#define IPOIB_ADDR_STRLEN	60	/* "80:00:00:48:fe:80:...", NUL */
#define IPOIB_ARPHRD_INFINIBAND	32	/* ARP hardware type */

/* Ethertypes Linux ipoib_start_xmit() sends (others are dropped there). */
#define IPOIB_ETH_P_IP		0x0800
#define IPOIB_ETH_P_ARP		0x0806
#define IPOIB_ETH_P_RARP	0x8035
#define IPOIB_ETH_P_IPV6	0x86DD
#define IPOIB_ETH_P_TIPC	0x88CA

/* Link address byte 0 (Linux IPOIB_FLAGS_RC / IPOIB_FLAGS_UC). */
#define IPOIB_ADDR_FLAG_RC	0x80	/* connected mode, RFC 4755 */
#define IPOIB_ADDR_FLAG_UC	0x40
#define IPOIB_QPN_MASK		0xFFFFFFu
#define IPOIB_QPN_MCAST		0xFFFFFFu	/* multicast QPN */

/* MGIDs (RFC 4391 section 4) */
#define IPOIB_PKEY_FULL		0x8000	/* full-membership bit */
#define IPOIB_MGID_SIG_IPV4	0x401B
#define IPOIB_MGID_SIG_IPV6	0x601B
#define IPOIB_SCOPE_LINK	0x2
#define IPOIB_SCOPE_SITE	0x5
#define IPOIB_SCOPE_ORG		0x8
#define IPOIB_SCOPE_GLOBAL	0xE

/* ARP over IB (RFC 4391 section 9.1): 8 + 2 * (20 + 4) bytes */
#define IPOIB_ARP_LEN		56
#define IPOIB_ARPOP_REQUEST	1
#define IPOIB_ARPOP_REPLY	2

/* The IPv6 ND link-layer address option for IB (RFC 4391 9.1.1) */
#define IPOIB_ND_LLA_UNITS	3	/* type, len 3, 2 pad, address */
#define IPOIB_ND_LLA_OPT_LEN	(IPOIB_ND_LLA_UNITS * 8)
#define IPOIB_ND_LLA_PAD	2	/* ndisc_addr_option_pad() */
/* NS or NA with the IB option: IPv6 header + 24-byte message + option */
#define IPOIB_ND_NS_NA_LEN	\
	(INET_IPV6_HDR_LEN + INET_ND_NS_NA_MSG_LEN + IPOIB_ND_LLA_OPT_LEN)

/* --- errors ------------------------------------------------------------ */

enum ipoib_wire_err {
	IPOIB_WIRE_OK = 0,
	IPOIB_WIRE_TRUNCATED,		/* buffer shorter than needed */
	IPOIB_WIRE_BAD_RESERVED,	/* IPoIB header reserved bytes not 0 */
	IPOIB_WIRE_BAD_ETHERTYPE,	/* not a type IPoIB carries */
	IPOIB_WIRE_ARP_BAD_HTYPE,	/* hardware type not 32 */
	IPOIB_WIRE_ARP_BAD_PTYPE,	/* protocol type not 0x0800 */
	IPOIB_WIRE_ARP_BAD_HLEN,	/* hardware length not 20 */
	IPOIB_WIRE_ARP_BAD_PLEN,	/* protocol length not 4 */
	IPOIB_WIRE_ARP_BAD_OP,		/* neither request nor reply */
	IPOIB_WIRE_BAD_SYNTAX,		/* text address not parseable */
	IPOIB_WIRE_ERR_MAX
};

/* "ok", "truncated", "bad_reserved", ...: stable, usable as counter names */
const char *ipoib_wire_strerror(enum ipoib_wire_err err);

/* --- link address ------------------------------------------------------ */

struct ipoib_addr {
	uint8_t flags;		/* IPOIB_ADDR_FLAG_* */
	uint32_t qpn;		/* 24 bits */
	union fab_gid gid;	/* port GID, or MGID for multicast */
};

/* 20 bytes: flags, QPN (big-endian 24 bits), GID.  QPN is masked to 24. */
void ipoib_addr_encode(const struct ipoib_addr *a, uint8_t *out);
void ipoib_addr_decode(const uint8_t *in, struct ipoib_addr *a);

/*
 * Text form as Linux shows dev_addr ("ip link"): 20 lowercase two-digit hex
 * bytes separated by ':'.  ntop needs IPOIB_ADDR_STRLEN bytes; it returns
 * buf, or NULL (and writes nothing) if len is too small.  pton takes 20
 * groups of one or two hex digits (either case), nothing else.
 */
char *ipoib_addr_ntop(const struct ipoib_addr *a, char *buf, size_t len);
enum ipoib_wire_err ipoib_addr_pton(const char *s, struct ipoib_addr *a);

/* A multicast destination: GID byte 0 is 0xff (as ipoib_start_xmit tests) */
bool ipoib_addr_is_mcast(const struct ipoib_addr *a);

/*
 * Broadcast group of a partition: MGID ff1S:401b:PPPP::ffff:ffff with the
 * full-membership bit forced into PPPP and S = scope & 0xf; the address has
 * flags 0 and QPN 0xFFFFFF.
 */
void ipoib_bcast_mgid(uint16_t pkey, uint8_t scope, union fab_gid *mgid);
void ipoib_bcast_addr(uint16_t pkey, uint8_t scope, struct ipoib_addr *a);

/* --- encapsulation header ---------------------------------------------- */

/* IPv4, IPv6, ARP, RARP, TIPC: what Linux IPoIB transmits */
bool ipoib_ethertype_ok(uint16_t ethertype);

/*
 * The first IPOIB_HDR_LEN bytes of a received UD payload: reserved must be
 * zero (RFC 4391 section 6; Linux does not check it on receive, tshark's
 * heuristic does) and the ethertype one of the above.  The payload follows
 * at buf + IPOIB_HDR_LEN.  *ethertype is set whenever len >= 4.
 */
enum ipoib_wire_err ipoib_hdr_parse(const uint8_t *buf, size_t len,
				    uint16_t *ethertype);
size_t ipoib_hdr_build(uint16_t ethertype, uint8_t *out, size_t cap);

/* --- ARP over InfiniBand ----------------------------------------------- */

struct ipoib_arp {
	uint16_t op;			/* IPOIB_ARPOP_* */
	struct ipoib_addr sha;		/* sender hardware address */
	struct in_addr spa;		/* sender IPv4 */
	struct ipoib_addr tha;		/* target hardware (request: 0) */
	struct in_addr tpa;		/* target IPv4 */
};

/*
 * ARP payload (after the IPoIB header): hardware type 32, protocol 0x0800,
 * hlen 20, plen 4, op request or reply, 56 bytes; trailing bytes are
 * ignored.  Checked in that order.
 */
enum ipoib_wire_err ipoib_arp_parse(const uint8_t *buf, size_t len,
				    struct ipoib_arp *arp);
/* Any ARP, fields as given: IPOIB_ARP_LEN bytes or 0 */
size_t ipoib_arp_build(const struct ipoib_arp *arp, uint8_t *out,
		       size_t cap);
/* Request "who has tpa": target hardware address zero (Linux arp_create) */
size_t ipoib_arp_build_request(const struct ipoib_addr *sha,
			       const struct in_addr *spa,
			       const struct in_addr *tpa, uint8_t *out,
			       size_t cap);
/* Reply "spa is at sha" to the requester (tha, tpa) */
size_t ipoib_arp_build_reply(const struct ipoib_addr *sha,
			     const struct in_addr *spa,
			     const struct ipoib_addr *tha,
			     const struct in_addr *tpa, uint8_t *out,
			     size_t cap);
/*
 * Gratuitous ARP as Linux sends it on address change
 * (inetdev_send_gratuitous_arp): a request with sender IP = target IP = ip
 * and target hardware zero (an RFC 5227 announcement), sent to broadcast.
 */
size_t ipoib_arp_build_announce(const struct ipoib_addr *sha,
				const struct in_addr *ip, uint8_t *out,
				size_t cap);

/* --- IPv6 neighbour discovery with the IB option ----------------------- */

struct ipoib_nd {
	struct inet_ipv6_info ip;
	uint8_t type;			/* INET_ND_RS .. _REDIRECT */
	uint8_t flags;			/* NA: R/S/O (INET_NA_FLAG_*);
					 * RA: M 0x80, O 0x40; else 0 */
	struct in6_addr target;		/* NS, NA, Redirect */
	struct in6_addr redirect_dst;	/* Redirect destination */
	bool has_slla;			/* source link-layer option */
	bool has_tlla;			/* target link-layer option */
	struct ipoib_addr slla;
	struct ipoib_addr tlla;
};

/*
 * inet_nd_parse() with the 24-byte IB link-layer option, its addresses
 * decoded (the pad bytes are not checked); same results.
 */
enum inet_err ipoib_nd_decode(const uint8_t *buf, size_t len,
			      struct ipoib_nd *nd);

/*
 * inet_nd_build_ns() / inet_nd_build_na() with the IB option for slla /
 * tlla (NULL: none).  Return IPOIB_ND_NS_NA_LEN, or 24 less without the
 * option, or 0 when cap is too small.
 */
size_t ipoib_nd_build_ns(const struct in6_addr *src,
			 const struct in6_addr *dst,
			 const struct in6_addr *target,
			 const struct ipoib_addr *slla, uint8_t *out,
			 size_t cap);
size_t ipoib_nd_build_na(const struct in6_addr *src,
			 const struct in6_addr *dst,
			 const struct in6_addr *target, uint8_t flags,
			 const struct ipoib_addr *tlla, uint8_t *out,
			 size_t cap);

/* The IPv6 link-local address of a port, as Linux IPoIB makes it
 * (addrconf_ifid_infiniband): fe80::/64 and the port GUID (GID bytes
 * 8..15) with the universal/local bit set. */
void ipoib_link_local(const union fab_gid *gid, struct in6_addr *out);

/* --- multicast mapping (RFC 4391 section 4, Linux ip_ib_mc_map and
 *     ipv6_ib_mc_map) ---------------------------------------------------- */

/*
 * IPv4 group -> ff1S:401b:PPPP:0000:0000:0000:0GGG:GGGG (low 28 bits of
 * the group).  IPv6 group -> ff1S:601b:PPPP: + bytes 6..15 of the group.
 * S (the low nibble of MGID byte 1) and PPPP (MGID bytes 4-5) come from the
 * broadcast MGID; the flags nibble is always 1 (transient) and the group's
 * own scope is dropped, as Linux does.  Neither checks that group is
 * multicast.
 */
void ipoib_mcast_mgid_ipv4(const struct in_addr *group,
			   const union fab_gid *bcast, union fab_gid *mgid);
void ipoib_mcast_mgid_ipv6(const struct in6_addr *group,
			   const union fab_gid *bcast, union fab_gid *mgid);
/* The link address of a group: flags 0, QPN 0xFFFFFF, the MGID */
void ipoib_mcast_addr(const union fab_gid *mgid, struct ipoib_addr *a);

/*
 * Whether Linux would join mgid on an interface with this broadcast MGID
 * (ipoib_mcast_addr_is_valid): equal to it except for the signature's upper
 * byte (0x40/0x60), i.e. same flags/scope, signature low byte and P_Key.
 */
bool ipoib_mgid_joinable(const union fab_gid *mgid,
			 const union fab_gid *bcast);

#endif /* IBGW_IPOIB_WIRE_H */

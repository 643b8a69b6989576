/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * IPoIB link codec (RFC 4391, RFC 4392; the Linux driver
 * drivers/infiniband/ulp/ipoib as the behaviour real IB hosts show): the one
 * place where the encapsulation header, the 20-byte link address, ARP over
 * InfiniBand, the IPv6 ND link-layer address option for IB, the
 * multicast-to-MGID mapping and the ICMP errors for oversize packets are laid
 * out.  Used by ipoibd and the gateway.
 *
 * Pure and allocation-free: no I/O, no logging, no global state.
 *
 * Parsers take (buf, len), never read past len, and return an
 * ipoib_wire_err naming the first thing wrong; the reasons are meant to be
 * drop counters, ipoib_wire_strerror() gives their names.  Builders that can
 * only fail for lack of room return the bytes written, 0 when cap is too
 * small; builders that may refuse for other reasons return an ipoib_wire_err
 * and the length through *out_len.
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

/* IPv6 ND (RFC 4861) with the IB link-layer option (RFC 4391 9.1.1) */
#define IPOIB_IPV6_HDR_LEN	40
#define IPOIB_ND_OPT_SLLA	1	/* source link-layer address */
#define IPOIB_ND_OPT_TLLA	2	/* target link-layer address */
#define IPOIB_ND_LLA_OPT_LEN	24	/* type, len 3, 2 pad, address */
#define IPOIB_ND_RS		133
#define IPOIB_ND_RA		134
#define IPOIB_ND_NS		135
#define IPOIB_ND_NA		136
#define IPOIB_ND_REDIRECT	137
#define IPOIB_ND_HOP_LIMIT	255
#define IPOIB_NA_FLAG_ROUTER	0x80
#define IPOIB_NA_FLAG_SOLICITED	0x40
#define IPOIB_NA_FLAG_OVERRIDE	0x20
/* NS or NA with the IB option: IPv6 header + 24-byte message + option */
#define IPOIB_ND_NS_NA_LEN	\
	(IPOIB_IPV6_HDR_LEN + 24 + IPOIB_ND_LLA_OPT_LEN)

/* ICMP errors for oversize packets */
#define IPOIB_ICMP4_MAX_LEN	576	/* RFC 1812 4.3.2.3 */
#define IPOIB_ICMP6_MAX_LEN	1280	/* RFC 4443 2.4 (c) */
#define IPOIB_ICMP_TTL		64	/* Linux ip_default_ttl */

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
	IPOIB_WIRE_IP_BAD_VERSION,	/* version nibble not 4 (6) */
	IPOIB_WIRE_IP_BAD_HDR_LEN,	/* IHL < 5, or past the buffer */
	IPOIB_WIRE_IP_BAD_LEN,		/* total/payload length wrong */
	IPOIB_WIRE_NOT_ND,		/* IPv6 but not ND: no drop */
	IPOIB_WIRE_ND_BAD_HOP_LIMIT,	/* ND not sent with hop limit 255 */
	IPOIB_WIRE_ND_BAD_CODE,		/* ICMPv6 code not 0 */
	IPOIB_WIRE_ND_BAD_CSUM,		/* ICMPv6 checksum wrong */
	IPOIB_WIRE_ND_SHORT,		/* shorter than its fixed part */
	IPOIB_WIRE_ND_OPT_ZERO_LEN,	/* an option of length 0 */
	IPOIB_WIRE_ND_OPT_OVERRUN,	/* an option running past the end */
	IPOIB_WIRE_ND_BAD_LLA_LEN,	/* IB link-layer option not 3 units */
	IPOIB_WIRE_ND_MCAST_TARGET,	/* NS/NA target is multicast */
	IPOIB_WIRE_ND_BAD_DAD,		/* DAD NS to a non solicited-node
					 * address, or with a source option */
	IPOIB_WIRE_ND_MCAST_SOLICITED,	/* solicited NA to multicast */
	IPOIB_WIRE_ND_BAD_SOURCE,	/* RA/Redirect not from link-local */
	IPOIB_WIRE_NO_ROOM,		/* output buffer too small */
	IPOIB_WIRE_ICMP_ABOUT_ERROR,	/* original is an ICMP error */
	IPOIB_WIRE_ICMP_FRAGMENT,	/* original is a non-first fragment */
	IPOIB_WIRE_ICMP_BAD_ADDR,	/* original src/dst may not get one */
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

/* --- IPv4 / IPv6 headers ----------------------------------------------- */

struct ipoib_ipv4_info {
	uint8_t hdr_len;	/* bytes, 20..60 */
	uint8_t tos;
	uint16_t tot_len;	/* from the header; <= the buffer */
	uint16_t id;
	uint16_t frag;		/* DF 0x4000, MF 0x2000, offset */
	uint8_t ttl;
	uint8_t proto;
	struct in_addr src;
	struct in_addr dst;
};

/*
 * Version 4, IHL >= 5 with the header inside len, IHL*4 <= total length
 * <= len (link padding after the total length is allowed).  The header
 * checksum is not checked here: see ipoib_ipv4_hdr_csum_ok().
 */
enum ipoib_wire_err ipoib_ipv4_check(const uint8_t *buf, size_t len,
				     struct ipoib_ipv4_info *ip);
/* The header checksum of a packet that passed ipoib_ipv4_check() */
bool ipoib_ipv4_hdr_csum_ok(const uint8_t *buf);
/* DF set in a valid IPv4 header (false for anything ipv4_check refuses) */
bool ipoib_ipv4_df(const uint8_t *buf, size_t len);

struct ipoib_ipv6_info {
	uint8_t tclass;
	uint32_t flow;		/* 20 bits */
	uint16_t payload_len;	/* 40 + payload_len <= the buffer */
	uint8_t next_hdr;
	uint8_t hop_limit;
	struct in6_addr src;
	struct in6_addr dst;
};

/* Version 6, 40-byte header and payload length inside len. */
enum ipoib_wire_err ipoib_ipv6_check(const uint8_t *buf, size_t len,
				     struct ipoib_ipv6_info *ip);

/* --- IPv6 neighbour discovery ------------------------------------------ */

struct ipoib_nd {
	struct ipoib_ipv6_info ip;
	uint8_t type;			/* IPOIB_ND_RS .. _REDIRECT */
	uint8_t flags;			/* NA: R/S/O (IPOIB_NA_FLAG_*);
					 * RA: M 0x80, O 0x40; else 0 */
	struct in6_addr target;		/* NS, NA, Redirect */
	struct in6_addr redirect_dst;	/* Redirect destination */
	bool has_slla;			/* source link-layer option */
	bool has_tlla;			/* target link-layer option */
	struct ipoib_addr slla;
	struct ipoib_addr tlla;
};

/*
 * An IPv6 packet (after the IPoIB header) carrying RS/RA/NS/NA/Redirect
 * directly after the IPv6 header.  Returns IPOIB_WIRE_NOT_ND for any other
 * IPv6 packet (pass it on, do not count a drop).  Checks, as RFC 4861 and
 * Linux ndisc_rcv() do: hop limit 255, ICMPv6 checksum, code 0, the
 * type's minimum length, options (none of length 0, none past the end),
 * NS/NA target not multicast, DAD NS (source ::) only to a solicited-node
 * address and without a source option, no solicited NA to multicast, RA and
 * Redirect only from link-local sources.  The link-layer option the type
 * uses (source for RS/RA/NS, target for NA/Redirect) must be the 24-byte IB
 * form; the other one is taken only if it is, and ignored otherwise (as
 * Linux does).  The first of duplicated options wins (ndisc_parse_options).
 * Unknown options are skipped.  Pad bytes of the option are not checked.
 */
enum ipoib_wire_err ipoib_nd_parse(const uint8_t *buf, size_t len,
				   struct ipoib_nd *nd);

/*
 * Neighbour Solicitation for target from src, with hop limit 255, traffic
 * class 0 and a correct checksum.  dst NULL means the solicited-node
 * multicast address of target (address resolution); give the target for a
 * unicast probe.  slla NULL, or src unspecified (DAD), leaves the source
 * link-layer option out (RFC 4861 7.2.2, Linux ndisc_ns_create).  Returns
 * the length (IPOIB_ND_NS_NA_LEN, or 24 less) or 0 when cap is too small.
 */
size_t ipoib_nd_build_ns(const struct in6_addr *src,
			 const struct in6_addr *dst,
			 const struct in6_addr *target,
			 const struct ipoib_addr *slla, uint8_t *out,
			 size_t cap);
/*
 * Neighbour Advertisement for target, flags IPOIB_NA_FLAG_*, with the target
 * link-layer option when tlla is not NULL.  Same conventions as above.
 */
size_t ipoib_nd_build_na(const struct in6_addr *src,
			 const struct in6_addr *dst,
			 const struct in6_addr *target, uint8_t flags,
			 const struct ipoib_addr *tlla, uint8_t *out,
			 size_t cap);

/* ff02::1:ffXX:XXXX from the low 24 bits of addr (RFC 4291 2.7.1) */
void ipoib_solicited_node(const struct in6_addr *addr, struct in6_addr *out);
/* The IPv6 link-local address of a port, as Linux IPoIB makes it
 * (addrconf_ifid_infiniband): fe80::/64 and the port GUID (GID bytes
 * 8..15) with the universal/local bit set. */
void ipoib_link_local(const union fab_gid *gid, struct in6_addr *out);
bool ipoib_is_solicited_node(const struct in6_addr *addr);

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

/* --- ICMP errors for oversize packets ---------------------------------- */

/*
 * ICMP Destination Unreachable / Fragmentation Needed (type 3, code 4,
 * next-hop MTU in the low 16 bits of the second word, RFC 1191) about the
 * IPv4 packet orig, from src to the packet's source.  It quotes the
 * original from its IP header on, up to its total length, with the whole
 * message at most 576 bytes (RFC 1812 4.3.2.3, as Linux __icmp_send); IP
 * header without options, TOS (orig & 0x1e) | 0xc0, DF clear, TTL 64, the
 * given id, correct header and ICMP checksums.  DF of the original is not
 * looked at: whether to fragment instead is the caller's choice (see
 * ipoib_ipv4_df()).  Refuses, as RFC 1122 3.2.2 / RFC 1812 4.3.2.7 and Linux
 * do: originals that are ICMP errors (or unknown ICMP types, or too short
 * to tell), non-first fragments, and sources that are not one host (0/8,
 * 127/8, multicast, 240/4 and broadcast) or destinations that were
 * multicast or 255.255.255.255.
 */
enum ipoib_wire_err ipoib_icmp4_frag_needed(const uint8_t *orig,
					    size_t orig_len,
					    const struct in_addr *src,
					    uint16_t mtu, uint16_t ip_id,
					    uint8_t *out, size_t cap,
					    size_t *out_len);

/*
 * ICMPv6 Packet Too Big (type 2, code 0, 32-bit MTU) about the IPv6 packet
 * orig, from src to its source, quoting as much of it as keeps the message
 * within 1280 bytes (RFC 4443 2.4 (c)); hop limit 64, traffic class and flow
 * label 0.  Refuses originals whose source is :: or multicast, and ICMPv6
 * errors (found after any extension headers, as Linux is_ineligible()).  A
 * multicast destination is allowed: RFC 4443 2.4 (e.2) makes Packet Too Big
 * the exception.
 */
enum ipoib_wire_err ipoib_icmp6_pkt_too_big(const uint8_t *orig,
					    size_t orig_len,
					    const struct in6_addr *src,
					    uint32_t mtu, uint8_t *out,
					    size_t cap, size_t *out_len);

#endif /* IBGW_IPOIB_WIRE_H */

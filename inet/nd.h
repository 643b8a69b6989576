/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * IPv6 neighbour discovery (RFC 4861) for any link: the one validator of
 * RS/RA/NS/NA/Redirect as received, the NS/NA builders, and solicited-node
 * addresses.  What differs between links is only the link-layer address
 * option: its length in 8-byte units (Ethernet 1: a 6-byte MAC, RFC 2464;
 * IPoIB 3: 2 pad bytes and a 20-byte address, RFC 4391 9.1.1) and how the
 * bytes after its type and length are read, which stays with the link's
 * codec (eth_wire.c, ipoib_wire.c).
 *
 * Pure and allocation-free; the parser never reads past len.
 */
#ifndef IBGW_INET_ND_H
#define IBGW_INET_ND_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "inet/err.h"
#include "inet/ip.h"

#define INET_ND_RS		133
#define INET_ND_RA		134
#define INET_ND_NS		135
#define INET_ND_NA		136
#define INET_ND_REDIRECT	137
#define INET_ND_OPT_SLLA	1	/* source link-layer address */
#define INET_ND_OPT_TLLA	2	/* target link-layer address */
#define INET_ND_HOP_LIMIT	255
#define INET_NA_FLAG_ROUTER	0x80
#define INET_NA_FLAG_SOLICITED	0x40
#define INET_NA_FLAG_OVERRIDE	0x20
#define INET_ND_NS_NA_MSG_LEN	24	/* NS/NA without options */

/* The bytes of a link-layer option after its type and length byte */
static inline size_t inet_nd_lla_body_len(unsigned int lla_units)
{
	return (size_t)lla_units * 8 - 2;
}

struct inet_nd {
	struct inet_ipv6_info ip;
	uint8_t type;			/* INET_ND_RS .. _REDIRECT */
	uint8_t flags;			/* NA: R/S/O (INET_NA_FLAG_*);
					 * RA: M 0x80, O 0x40; else 0 */
	struct in6_addr target;		/* NS, NA, Redirect */
	struct in6_addr redirect_dst;	/* Redirect destination */
	/* the link-layer options of the link's length: pointers into the
	 * parsed buffer at the option's third byte, or NULL */
	const uint8_t *slla;
	const uint8_t *tlla;
};

/*
 * An IPv6 packet carrying RS/RA/NS/NA/Redirect directly after the IPv6
 * header, on a link whose link-layer option is lla_units long.  Returns
 * INET_NOT_ND for any other IPv6 packet (pass it on, do not count a drop).
 * Checks, as RFC 4861 (4.6, 6.1, 7.1, 8.1) and Linux ndisc_rcv() do: hop
 * limit 255, ICMPv6 checksum, code 0, the type's minimum length, options
 * (none of length 0, none past the end), NS/NA target not multicast, DAD
 * NS (source ::) only to a solicited-node address and without a source
 * option, no solicited NA to multicast, RA and Redirect only from
 * link-local sources.  The link-layer option the type uses (source for
 * RS/RA/NS, target for NA/Redirect) must be lla_units long; the other one
 * is taken only if it is, and ignored otherwise (as Linux does).  The
 * first of duplicated options wins (ndisc_parse_options).  Unknown options
 * are skipped.
 */
enum inet_err inet_nd_parse(const uint8_t *buf, size_t len,
			    unsigned int lla_units, struct inet_nd *nd);

/*
 * Neighbour Solicitation for target from src, with hop limit 255, traffic
 * class 0 and a correct checksum.  dst NULL means the solicited-node
 * multicast address of target (address resolution); give the target for a
 * unicast probe.  slla (inet_nd_lla_body_len(lla_units) bytes) NULL, or
 * src unspecified (DAD), leaves the source link-layer option out (RFC 4861
 * 7.2.2, Linux ndisc_ns_create).  Returns the length (40 + 24, plus the
 * option) or 0 when cap is too small.
 */
size_t inet_nd_build_ns(const struct in6_addr *src,
			const struct in6_addr *dst,
			const struct in6_addr *target, const uint8_t *slla,
			unsigned int lla_units, uint8_t *out, size_t cap);
/*
 * Neighbour Advertisement for target, flags INET_NA_FLAG_*, with the target
 * link-layer option when tlla is not NULL.  Same conventions as above.
 */
size_t inet_nd_build_na(const struct in6_addr *src,
			const struct in6_addr *dst,
			const struct in6_addr *target, uint8_t flags,
			const uint8_t *tlla, unsigned int lla_units,
			uint8_t *out, size_t cap);

/* ff02::1:ffXX:XXXX from the low 24 bits of addr (RFC 4291 2.7.1) */
void inet_solicited_node(const struct in6_addr *addr, struct in6_addr *out);
bool inet_is_solicited_node(const struct in6_addr *addr);

#endif

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * IPv4 and IPv6 header checks, for every link the gateway and ipoibd
 * carry IP over (IPoIB, Ethernet): whether a buffer holds a header that
 * can be read safely, and what is in it.  Pure, allocation-free, never
 * reads past len.
 *
 * Byte order: addresses are struct in_addr / struct in6_addr (network
 * order, as in the packet); every other field is in host order.
 */
#ifndef IBGW_INET_IP_H
#define IBGW_INET_IP_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "inet/err.h"

#define INET_IPV4_HDR_LEN	20	/* without options */
#define INET_IPV6_HDR_LEN	40
#define INET_IPV4_DF		0x4000
#define INET_IPV4_MF		0x2000
#define INET_IPV4_OFFSET	0x1fff	/* in units of 8 bytes */
#define INET_PROTO_ICMP		1
#define INET_PROTO_IGMP		2
#define INET_PROTO_HOPOPTS	0	/* IPv6 extension headers */
#define INET_PROTO_ROUTING	43
#define INET_PROTO_FRAGMENT	44
#define INET_PROTO_AH		51
#define INET_PROTO_ICMPV6	58
#define INET_PROTO_DSTOPTS	60

struct inet_ipv4_info {
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
 * checksum is not checked here: see inet_ipv4_hdr_csum_ok().
 */
enum inet_err inet_ipv4_check(const uint8_t *buf, size_t len,
			      struct inet_ipv4_info *ip);
/* The header checksum of a packet that passed inet_ipv4_check() */
bool inet_ipv4_hdr_csum_ok(const uint8_t *buf);
/* DF set in a valid IPv4 header (false for anything ipv4_check refuses) */
bool inet_ipv4_df(const uint8_t *buf, size_t len);

struct inet_ipv6_info {
	uint8_t tclass;
	uint32_t flow;		/* 20 bits */
	uint16_t payload_len;	/* 40 + payload_len <= the buffer */
	uint8_t next_hdr;
	uint8_t hop_limit;
	struct in6_addr src;
	struct in6_addr dst;
};

/* Version 6, 40-byte header and payload length inside len. */
enum inet_err inet_ipv6_check(const uint8_t *buf, size_t len,
			      struct inet_ipv6_info *ip);

/* Where the upper-layer header of an IPv6 packet is. */
struct inet_ipv6_upper {
	size_t off;		/* from the IPv6 header's start */
	uint8_t proto;		/* its protocol (next header value) */
	bool fragment;		/* a fragment header (offset 0) was passed */
	bool auth;		/* an authentication header was passed */
};

/*
 * Walk the extension headers of the IPv6 packet in buf[0..len) (len
 * already cut to 40 + payload length, see inet_ipv6_check()) as Linux
 * ipv6_skip_exthdr() does: hop-by-hop, routing, destination options,
 * authentication (RFC 4302 lengths) and the fragment header of a first
 * fragment are passed; anything else is the upper layer.  Every step
 * advances by 8 bytes or more and stops at len, so a chain of any length
 * ends.
 *  INET_OK: every extension header lies within len; the upper header
 *    starts at up->off <= len (it may be empty: off == len).
 *  INET_TRUNCATED: the chain runs past len: up->proto is the header that
 *    does not fit and up->off (which may exceed len) where it would start.
 *    An extension header needs its first 2 bytes (a fragment header all 8)
 *    to be read; an upper header past len is reported here, not read.
 *  INET_IP_LATER_FRAGMENT: a fragment header with a non-zero offset, at
 *    up->off: what follows is not an upper-layer header.
 */
enum inet_err inet_ipv6_upper(const uint8_t *buf, size_t len,
			      struct inet_ipv6_upper *up);

/*
 * Write a 40-byte IPv6 header with traffic class and flow label 0, for the
 * messages inet builds itself (ND, ICMPv6 errors).
 */
void inet_ipv6_hdr_put(uint8_t *p, uint16_t payload_len, uint8_t next_hdr,
		       uint8_t hop_limit, const struct in6_addr *src,
		       const struct in6_addr *dst);

#endif

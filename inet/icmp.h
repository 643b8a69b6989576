/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The ICMP errors a hop returns for packets over its MTU: IPv4
 * Fragmentation Needed (RFC 1191) and ICMPv6 Packet Too Big (RFC 4443),
 * built as Linux builds them, and refused where RFC 1122 / RFC 1812 /
 * RFC 4443 forbid sending one.  Used by ipoibd (its link MTU) and the
 * gateway (the narrower side's MTU).
 *
 * Results are enum inet_err: INET_OK with the message in out and its
 * length in *out_len, or why not (*out_len 0).
 */
#ifndef IBGW_INET_ICMP_H
#define IBGW_INET_ICMP_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>

#include "inet/err.h"

#define INET_ICMP4_MAX_LEN	576	/* RFC 1812 4.3.2.3 */
#define INET_ICMP6_MAX_LEN	1280	/* RFC 4443 2.4 (c) */
#define INET_ICMP_TTL		64	/* Linux ip_default_ttl */

/*
 * ICMP Destination Unreachable / Fragmentation Needed (type 3, code 4,
 * next-hop MTU in the low 16 bits of the second word, RFC 1191) about the
 * IPv4 packet orig, from src to the packet's source.  It quotes the
 * original from its IP header on, up to its total length, with the whole
 * message at most 576 bytes (RFC 1812 4.3.2.3, as Linux __icmp_send); IP
 * header without options, TOS (orig & 0x1e) | 0xc0, DF clear, TTL 64, the
 * given id, correct header and ICMP checksums.  DF of the original is not
 * looked at: whether to fragment instead is the caller's choice (see
 * inet_ipv4_df()).  Refuses, as RFC 1122 3.2.2 / RFC 1812 4.3.2.7 and Linux
 * do: originals that are ICMP errors (or unknown ICMP types, or too short
 * to tell), non-first fragments, and sources that are not one host (0/8,
 * 127/8, multicast, 240/4 and broadcast) or destinations that were
 * multicast or 255.255.255.255.
 */
enum inet_err inet_icmp4_frag_needed(const uint8_t *orig, size_t orig_len,
				     const struct in_addr *src, uint16_t mtu,
				     uint16_t ip_id, uint8_t *out, size_t cap,
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
enum inet_err inet_icmp6_pkt_too_big(const uint8_t *orig, size_t orig_len,
				     const struct in6_addr *src, uint32_t mtu,
				     uint8_t *out, size_t cap,
				     size_t *out_len);

#endif

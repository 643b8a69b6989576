/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the unit tests share to state their vectors and check results
 * independently of the code under test: hex dumps, RFC 1071 the slow way,
 * address literals.  Test-only; failures are cmocka failures.
 */
#ifndef IBGW_TESTS_VECTORS_H
#define IBGW_TESTS_VECTORS_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>

/* Hex bytes into out (zero-filled first), skipping white space and '|'
 * (which the vectors use to mark header boundaries); anything else, or an
 * odd digit, fails the test.  Returns the byte count. */
size_t tv_unhex(const char *s, uint8_t *out, size_t cap);

/* The Internet checksum byte by byte: start (a partial sum, e.g. of a
 * pseudo-header) plus the 16-bit words of p, folded and complemented. */
uint16_t tv_csum(const uint8_t *p, size_t n, uint32_t start);
/* The (uncomplemented) sum of an IPv6 packet's pseudo-header for an
 * upper-layer length len and next header nh. */
uint32_t tv_pseudo6(const uint8_t *ip6, uint32_t len, uint8_t nh);
/* Does the ICMPv6 message in this IPv6 packet check out? */
int tv_icmp6_csum_good(const uint8_t *ip6);

/* Address literals; a bad one fails the test. */
struct in_addr tv_ip4(const char *s);
struct in6_addr tv_ip6(const char *s);

#endif

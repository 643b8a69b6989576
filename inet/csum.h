/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The Internet checksum (RFC 1071), the one implementation every codec and
 * offload uses: IPv4 headers, ICMP, ICMPv6/ND, TCP/UDP in GSO/GRO, MSS
 * clamping and fragmentation.
 *
 * A sum is built piecewise: inet_csum_add() over each range in order, every
 * range but the last of even length (a range starts at an even offset of
 * the checksummed data), then inet_csum_fold() gives the 16 bits to store.
 * Sums are of native 16-bit words (RFC 1071 2(B), byte order
 * independence): the folded value is stored with inet_csum_put() as it is,
 * never through be16_put(); a range that sums correctly folds to 0 in
 * either order.
 */
#ifndef IBGW_INET_CSUM_H
#define IBGW_INET_CSUM_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

uint64_t inet_csum_add(uint64_t sum, const uint8_t *p, size_t len);
/* The same, copying the len bytes to dst in the same pass. */
uint64_t inet_csum_copy(uint64_t sum, uint8_t *dst, const uint8_t *p,
			size_t len);
/* Folded and complemented: what goes into the checksum field. */
uint16_t inet_csum_fold(uint64_t sum);

/*
 * Pseudo-header sums: IPv4 (RFC 793 3.1, RFC 768) with a 16-bit length,
 * IPv6 (RFC 8200 8.1) with a 32-bit one.  Addresses are 4 or 16 bytes in
 * network order at any alignment (a packet's own header will do).
 */
uint64_t inet_csum_pseudo4(const uint8_t *saddr, const uint8_t *daddr,
			   uint8_t proto, size_t len);
uint64_t inet_csum_pseudo6(const uint8_t *saddr, const uint8_t *daddr,
			   uint8_t next_hdr, size_t len);

/*
 * RFC 1624 eqn. 3: the stored checksum hc after one 16-bit word of the
 * data changed from old to new (all three in the same byte order).
 */
uint16_t inet_csum_replace16(uint16_t hc, uint16_t old, uint16_t new);

/* Store a folded checksum at p (any alignment). */
static inline void inet_csum_put(uint8_t *p, uint16_t c)
{
	memcpy(p, &c, 2);
}

#endif

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * IPv4 fragmentation (RFC 791 3.2, RFC 815 for what receivers expect), as
 * a router does it for a packet without DF on a narrower next hop.
 */
#ifndef IBGW_INET_FRAG_H
#define IBGW_INET_FRAG_H

#include <stddef.h>
#include <stdint.h>

/* One fragment, valid only during the call. */
typedef void (*inet_frag_emit_fn)(void *arg, const uint8_t *frag, size_t n);

/*
 * Cut the IPv4 packet pkt (len bytes, its total length, no DF) into
 * fragments of at most mtu bytes (offsets in units of 8, options copied
 * into later fragments only when their copy flag says so, offsets and MF
 * of a packet that is itself a fragment carried on), each with a correct
 * header checksum, calling emit for each.  Returns the number of
 * fragments, or -1 (a bad header or options, DF set, or an mtu too small
 * for one 8-byte unit) having emitted nothing.
 */
int inet_frag_ipv4(const uint8_t *pkt, size_t len, unsigned int mtu,
		   inet_frag_emit_fn emit, void *arg);

#endif

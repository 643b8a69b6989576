/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The Ethernet side of the gateway on the wire: Ethernet II and 802.1Q
 * headers, ARP for IPv4 over Ethernet (RFC 826), IPv6 neighbour discovery
 * with the 6-byte link-layer option (RFC 2464 section 6, around
 * inet/nd.c), multicast MACs (RFC 1112, RFC 2464) and the MACs the gateway
 * gives InfiniBand hosts.  Every parser is bounds-checked and fuzzed
 * through the bridge (tests/fuzz/fuzz_gw_bridge.c; the ND validator also
 * on its own, tests/fuzz/fuzz_inet_nd.c).
 */
#ifndef IBGW_ETH_WIRE_H
#define IBGW_ETH_WIRE_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "inet/nd.h"
#include "ulp/ipoib/ipoib_wire.h"

#define ETH_ALEN_	6
#define ETH_HDR_LEN	14
#define ETH_VLAN_LEN	4
#define ETH_P_IP_	0x0800
#define ETH_P_ARP_	0x0806
#define ETH_P_8021Q_	0x8100
#define ETH_P_IPV6_	0x86dd
#define ETH_ARP_LEN	28
#define ETH_ND_LLA_UNITS	1	/* type, len 1, MAC */
/* NS/NA with the Ethernet option */
#define ETH_ND_LEN	(INET_IPV6_HDR_LEN + INET_ND_NS_NA_MSG_LEN + 8)

struct eth_hdr {
	uint8_t dst[6], src[6];
	int tagged;		/* an 802.1Q tag was present */
	uint16_t vid;		/* its VLAN ID (12 bits) */
	uint8_t pcp;		/* and priority */
	uint16_t type;		/* the ethertype after any tag */
	size_t hdr_len;		/* 14 or 18 */
};

enum eth_err {
	ETH_OK = 0,
	ETH_TRUNCATED,
	ETH_BAD,		/* a field with a value the format forbids */
};

enum eth_err eth_parse(const uint8_t *f, size_t len, struct eth_hdr *h);
/* Write a header (with a tag when vid != 0); returns its length. */
size_t eth_build(uint8_t *out, const uint8_t dst[6], const uint8_t src[6],
		 uint16_t vid, uint16_t type);

static inline int eth_is_multicast(const uint8_t *mac)
{
	return mac[0] & 1;
}

/* 01:00:5e + low 23 bits of the group; 33:33 + low 32 bits. */
void eth_mcast_mac_v4(const struct in_addr *group, uint8_t mac[6]);
void eth_mcast_mac_v6(const struct in6_addr *group, uint8_t mac[6]);

/*
 * The MAC an InfiniBand endpoint gets on Ethernet: locally administered,
 * unicast, from the 64-bit FNV-1a hash of its QPN (3 bytes, big-endian)
 * and port GID (16 bytes); the flags byte of the 20-byte address is left
 * out, so the same endpoint keeps its MAC whatever it advertises.  The
 * first byte is (hash bits 63..56 & 0xfc) | 0x02, the other five the next
 * hash bytes.  Distinct endpoints may collide: the gateway detects it.
 */
void eth_mac_of_ib(const struct ipoib_addr *a, uint8_t mac[6]);

struct eth_arp {
	uint16_t op;		/* 1 request, 2 reply */
	uint8_t sha[6], tha[6];
	struct in_addr spa, tpa;
};

enum eth_err eth_arp_parse(const uint8_t *p, size_t len, struct eth_arp *a);
size_t eth_arp_build(uint8_t *out, size_t cap, const struct eth_arp *a);

/* ND over Ethernet: inet_nd_parse() with the 6-byte MAC options. */
struct eth_nd {
	struct inet_nd nd;	/* type, addresses, flags, target */
	bool has_slla;		/* source link-layer option */
	bool has_tlla;		/* target link-layer option */
	uint8_t slla[ETH_ALEN_];
	uint8_t tlla[ETH_ALEN_];
};

/* buf is an IPv6 packet; results as inet_nd_parse() */
enum inet_err eth_nd_decode(const uint8_t *buf, size_t len,
			    struct eth_nd *nd);
/* inet_nd_build_ns() / _na() with a MAC option (NULL: none); returns the
 * length (at most ETH_ND_LEN) or 0. */
size_t eth_nd_build_ns(const struct in6_addr *src, const struct in6_addr *dst,
		       const struct in6_addr *target, const uint8_t *slla,
		       uint8_t *out, size_t cap);
size_t eth_nd_build_na(const struct in6_addr *src, const struct in6_addr *dst,
		       const struct in6_addr *target, uint8_t flags,
		       const uint8_t *tlla, uint8_t *out, size_t cap);

#endif

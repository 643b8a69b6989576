/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * IP addresses and prefixes: the one address type of the project, used by
 * the configuration, netlink, the IPoIB link and the gateway alike.  Owns
 * the type, its strict text parsers and printers, and prefix matching;
 * nothing here allocates or touches the network.
 */
#ifndef IBGW_INET_ADDR_H
#define IBGW_INET_ADDR_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define INET_ADDR_STRLEN	INET6_ADDRSTRLEN	/* inet_addr_str() */
#define INET_PREFIX_STRLEN	(INET6_ADDRSTRLEN + 4)	/* inet_prefix_str() */

/* An IPv4 or IPv6 address; family is AF_INET or AF_INET6 (0: none). */
struct inet_addr {
	int	family;
	union {
		struct in_addr	v4;
		struct in6_addr	v6;
		uint8_t		raw[16];
	};
};

/* An address with its prefix length (CIDR), e.g. 10.1.0.1/24. */
struct inet_prefix {
	struct inet_addr	addr;
	unsigned int		plen;	/* 0..32 or 0..128 */
};

/* 4, 16, or 0 for a family that is neither. */
static inline size_t inet_addr_len(int family)
{
	return family == AF_INET ? 4 : family == AF_INET6 ? 16 : 0;
}

void inet_addr_v4(struct inet_addr *a, const struct in_addr *v4);
void inet_addr_v6(struct inet_addr *a, const struct in6_addr *v6);
/* Same family and the same bytes of that family. */
static inline bool inet_addr_equal(const struct inet_addr *a,
				   const struct inet_addr *b)
{
	size_t n = inet_addr_len(a->family);

	return a->family == b->family && n &&
	       memcmp(a->raw, b->raw, n) == 0;
}
/* a lies in p (same family, the first p->plen bits equal). */
bool inet_prefix_contains(const struct inet_prefix *p,
			  const struct inet_addr *a);
/*
 * a is the directed broadcast of the IPv4 prefix p (host bits all ones).
 * Only prefixes /1 to /30 have one: /31 (RFC 3021) and /32 have no host
 * part to spare, and /0 would make 255.255.255.255 a subnet's.
 */
bool inet_prefix_is_bcast(const struct inet_prefix *p,
			  const struct in_addr *a);
/*
 * FNV-1a over the address bytes of a's family (none for family 0), for
 * hash tables of neighbours; the caller reduces it to its bucket count.
 */
static inline uint32_t inet_addr_hash(const struct inet_addr *a)
{
	size_t i, n = inet_addr_len(a->family);
	uint32_t h = 2166136261u;

	for (i = 0; i < n; i++)
		h = (h ^ a->raw[i]) * 16777619u;
	return h;
}

/*
 * Strict parsers: 0, or -1 with errno EINVAL.  inet_addr_parse() takes a
 * bare address.  A prefix is ADDR/LEN: an IPv4 address in dotted quad or
 * an IPv6 one (inet_pton's syntax, no zone) and a decimal length without
 * leading zeros, at most 32 or 128.  A missing length is an error, not
 * /32, since an interface address without one is almost always a mistake;
 * host bits may be set (10.0.0.1/24 is an interface address).
 * inet_prefix_scan() leaves *out untouched on error and says why in a
 * static string (for the configuration's file:line messages); the others
 * write "bad CIDR 'TEXT': why" into err.
 */
int inet_addr_parse(const char *s, struct inet_addr *out, char *err,
		    size_t errlen);
int inet_prefix_scan(const char *s, struct inet_prefix *out,
		     const char **why);
int inet_prefix_parse(const char *s, struct inet_prefix *out, char *err,
		      size_t errlen);
/* Why a cannot be an interface's own address (the unspecified, loopback,
 * multicast or broadcast address, 0.0.0.0/8), or NULL if it can. */
const char *inet_addr_not_host(const struct inet_addr *a);
/* Text forms ("?" for no family); buf of INET_ADDR_STRLEN or
 * INET_PREFIX_STRLEN.  Return buf. */
const char *inet_addr_str(const struct inet_addr *a, char *buf, size_t len);
const char *inet_prefix_str(const struct inet_prefix *p, char *buf,
			    size_t len);

#endif

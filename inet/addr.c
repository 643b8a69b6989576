// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * IP addresses and prefixes (see addr.h).
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "conf/errbuf.h"
#include "inet/addr.h"

static int scan_fail(const char **why, const char *reason)
{
	if (why)
		*why = reason;
	errno = EINVAL;
	return -1;
}

void inet_addr_v4(struct inet_addr *a, const struct in_addr *v4)
{
	memset(a, 0, sizeof(*a));
	a->family = AF_INET;
	a->v4 = *v4;
}

void inet_addr_v6(struct inet_addr *a, const struct in6_addr *v6)
{
	memset(a, 0, sizeof(*a));
	a->family = AF_INET6;
	a->v6 = *v6;
}

bool inet_prefix_contains(const struct inet_prefix *p,
			  const struct inet_addr *a)
{
	unsigned int bits = p->plen, i;
	const uint8_t *x = p->addr.raw, *y = a->raw;

	if (p->addr.family != a->family || bits > 8 * inet_addr_len(a->family))
		return false;
	for (i = 0; bits >= 8; i++, bits -= 8)
		if (x[i] != y[i])
			return false;
	return !bits || !((x[i] ^ y[i]) & (uint8_t)(0xff << (8 - bits)));
}

bool inet_prefix_is_bcast(const struct inet_prefix *p,
			  const struct in_addr *a)
{
	uint32_t mask;

	if (p->addr.family != AF_INET || !p->plen || p->plen > 30)
		return false;
	mask = ~0u << (32 - p->plen);
	return ntohl(a->s_addr) == ((ntohl(p->addr.v4.s_addr) & mask) | ~mask);
}

static int addr_pton(const char *s, struct inet_addr *out)
{
	memset(out, 0, sizeof(*out));
	if (inet_pton(AF_INET, s, &out->v4) == 1)
		out->family = AF_INET;
	else if (inet_pton(AF_INET6, s, &out->v6) == 1)
		out->family = AF_INET6;
	else
		return -1;
	return 0;
}

int inet_addr_parse(const char *s, struct inet_addr *out, char *err,
		    size_t errlen)
{
	if (addr_pton(s, out) < 0)
		return errbuf_fail(err, errlen, EINVAL,
				   "bad address '%s': not an IPv4 or IPv6 address",
				   s);
	return 0;
}

int inet_prefix_scan(const char *s, struct inet_prefix *out, const char **why)
{
	char abuf[INET6_ADDRSTRLEN];
	struct inet_prefix c;
	const char *slash, *p;
	unsigned int len = 0, max;
	size_t alen;

	if (s == NULL || *s == '\0')
		return scan_fail(why, "empty value");
	slash = strchr(s, '/');
	if (slash == NULL)
		return scan_fail(why, "missing /prefix length");
	alen = slash - s;
	if (alen == 0)
		return scan_fail(why, "missing address");
	if (alen >= sizeof(abuf))
		return scan_fail(why, "invalid address");
	memcpy(abuf, s, alen);
	abuf[alen] = '\0';

	/* the family from the text, so that the error names the right one */
	memset(&c, 0, sizeof(c));
	if (strchr(abuf, ':') != NULL) {
		c.addr.family = AF_INET6;
		max = 128;
		if (inet_pton(AF_INET6, abuf, &c.addr.v6) != 1)
			return scan_fail(why, "invalid IPv6 address");
	} else {
		c.addr.family = AF_INET;
		max = 32;
		if (inet_pton(AF_INET, abuf, &c.addr.v4) != 1)
			return scan_fail(why, "invalid IPv4 address");
	}

	/* decimal without leading zeros or signs: "024" and "+8" are typos */
	p = slash + 1;
	if (*p == '\0')
		return scan_fail(why, "missing prefix length");
	if (p[0] == '0' && p[1] != '\0')
		return scan_fail(why, "invalid prefix length");
	for (; *p != '\0'; p++) {
		if (!isdigit((unsigned char)*p) || len > max)
			return scan_fail(why, "invalid prefix length");
		len = len * 10 + (*p - '0');
	}
	if (len > max)
		return scan_fail(why, "prefix length out of range");
	c.plen = len;
	*out = c;
	return 0;
}

int inet_prefix_parse(const char *s, struct inet_prefix *out, char *err,
		      size_t errlen)
{
	const char *why;

	if (inet_prefix_scan(s, out, &why) < 0)
		return errbuf_fail(err, errlen, EINVAL,
				   "bad CIDR '%.64s%s': %s", s,
				   strlen(s) > 64 ? "..." : "", why);
	return 0;
}

const char *inet_addr_not_host(const struct inet_addr *a)
{
	const uint8_t *b = a->raw;
	static const uint8_t zero[16];

	if (a->family == AF_INET) {
		if (b[0] == 0)
			return "in 0.0.0.0/8 (this network)";
		if (b[0] == 127)
			return "a loopback address";
		if ((b[0] & 0xf0) == 0xe0)
			return "a multicast address";
		if (b[0] == 255 && b[1] == 255 && b[2] == 255 && b[3] == 255)
			return "the broadcast address";
		return NULL;
	}
	if (a->family == AF_INET6) {
		if (!memcmp(b, zero, 16))
			return "the unspecified address";
		if (!memcmp(b, zero, 15) && b[15] == 1)
			return "a loopback address";
		if (b[0] == 0xff)
			return "a multicast address";
		return NULL;
	}
	return "not an IP address";
}

const char *inet_addr_str(const struct inet_addr *a, char *buf, size_t len)
{
	if (!inet_addr_len(a->family) ||
	    !inet_ntop(a->family, a->raw, buf, len))
		snprintf(buf, len, "?");
	return buf;
}

const char *inet_prefix_str(const struct inet_prefix *p, char *buf,
			    size_t len)
{
	char a[INET_ADDR_STRLEN];

	snprintf(buf, len, "%s/%u", inet_addr_str(&p->addr, a, sizeof(a)),
		 p->plen);
	return buf;
}

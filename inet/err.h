/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What inet's codecs (ip.c, nd.c, icmp.c, mcast.c) return: the first thing wrong
 * with a packet, each value meant as a drop counter.  The names
 * inet_strerror() gives are stable (they are the ones the IPoIB codec
 * used to give the same faults) and usable as counter names.
 */
#ifndef IBGW_INET_ERR_H
#define IBGW_INET_ERR_H

enum inet_err {
	INET_OK = 0,
	INET_TRUNCATED,			/* buffer shorter than needed */
	INET_IP_BAD_VERSION,		/* version nibble not 4 (6) */
	INET_IP_BAD_HDR_LEN,		/* IHL < 5, or past the buffer */
	INET_IP_BAD_LEN,		/* total/payload length wrong */
	INET_NOT_ND,			/* IPv6 but not ND: no drop */
	INET_ND_BAD_HOP_LIMIT,		/* ND not sent with hop limit 255 */
	INET_ND_BAD_CODE,		/* ICMPv6 code not 0 */
	INET_ND_BAD_CSUM,		/* ICMPv6 checksum wrong */
	INET_ND_SHORT,			/* shorter than its fixed part */
	INET_ND_OPT_ZERO_LEN,		/* an option of length 0 */
	INET_ND_OPT_OVERRUN,		/* an option running past the end */
	INET_ND_BAD_LLA_LEN,		/* link-layer option not the link's */
	INET_ND_MCAST_TARGET,		/* NS/NA target is multicast */
	INET_ND_BAD_DAD,		/* DAD NS to a non solicited-node
					 * address, or with a source option */
	INET_ND_MCAST_SOLICITED,	/* solicited NA to multicast */
	INET_ND_BAD_SOURCE,		/* RA/Redirect not from link-local */
	INET_NO_ROOM,			/* output buffer too small */
	INET_ICMP_ABOUT_ERROR,		/* original is an ICMP error */
	INET_ICMP_FRAGMENT,		/* original is a non-first fragment */
	INET_ICMP_BAD_ADDR,		/* original src/dst may not get one */
	INET_IP_LATER_FRAGMENT,		/* IPv6 non-first fragment: no upper
					 * header to find */
	INET_MCAST_NOT_REPORT,		/* IGMP/MLD but not a report or
					 * leave: no drop */
	INET_MCAST_BAD_RECORD,		/* v3 record running past the end */
	INET_ERR_MAX
};

/* "ok", "truncated", "ip_bad_version", ...; "unknown" out of range */
const char *inet_strerror(enum inet_err err);

#endif

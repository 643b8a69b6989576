/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Multicast listener reports: which groups a host says it listens to, or
 * stops listening to, in IGMPv1/v2/v3 (RFC 1112, 2236, 3376) and MLDv1/v2
 * (RFC 2710, 3810) messages.  Owns their decoding only; what a link does
 * with a group (IPoIB's joins and leaves) is the caller's.  Pure,
 * allocation-free, never reads past len.
 *
 * The decoding is what a snooping link needs from its own host's reports,
 * and no more: it does not check the IGMP or ICMPv6 checksum, the hop
 * limit or the router alert, since the packet goes out either way and the
 * host's kernel is the one that built it.
 */
#ifndef IBGW_INET_MCAST_H
#define IBGW_INET_MCAST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "inet/addr.h"
#include "inet/err.h"

/* IGMP message types (RFC 3376 4, RFC 2236 2.1, RFC 1112 appendix I) */
#define INET_IGMP_QUERY		0x11
#define INET_IGMP_V1_REPORT	0x12
#define INET_IGMP_V2_REPORT	0x16
#define INET_IGMP_V2_LEAVE	0x17
#define INET_IGMP_V3_REPORT	0x22
/* MLD message types (ICMPv6; RFC 2710 3, RFC 3810 5) */
#define INET_MLD_QUERY		130
#define INET_MLD_V1_REPORT	131
#define INET_MLD_V1_DONE	132
#define INET_MLD_V2_REPORT	143
/* IGMPv3 / MLDv2 group record types (RFC 3376 4.2.12, RFC 3810 5.2.12) */
#define INET_MCAST_MODE_IS_INCLUDE	1
#define INET_MCAST_MODE_IS_EXCLUDE	2
#define INET_MCAST_TO_INCLUDE		3
#define INET_MCAST_TO_EXCLUDE		4
#define INET_MCAST_ALLOW_NEW		5
#define INET_MCAST_BLOCK_OLD		6

/* One group the host joins (join) or leaves (!join); group is a copy. */
typedef void (*inet_mcast_cb)(void *arg, const struct inet_addr *group,
			      bool join);

/*
 * Decode the IGMP (family AF_INET) or MLD (AF_INET6, the ICMPv6 message)
 * message msg[0..len) and call cb once per group it names, in message
 * order:
 *  - a v1/v2 report joins its group; an IGMPv2 leave or MLD done leaves;
 *  - a v3/MLDv2 record with no sources joins for EXCLUDE {} (MODE_IS_ or
 *    CHANGE_TO_EXCLUDE: "everything") and leaves for INCLUDE {}
 *    (MODE_IS_ or CHANGE_TO_INCLUDE: "nothing"); records naming sources,
 *    ALLOW/BLOCK and unknown types change nothing.  A record is taken once
 *    its header and group lie inside len: its sources and auxiliary data
 *    are not read.
 * Results:
 *  INET_OK: a report or leave, every group given to cb;
 *  INET_MCAST_NOT_REPORT: a query or another message (no drop), or a
 *    family that is neither;
 *  INET_TRUNCATED: shorter than 8 bytes (MLDv1: 24), or fewer v3 records
 *    than the header counts (those before the cut were given to cb);
 *  INET_MCAST_BAD_RECORD: a v3 record whose sources or auxiliary data run
 *    past len (it and those before it were given to cb).
 */
enum inet_err inet_mcast_report_parse(int family, const uint8_t *msg,
				      size_t len, inet_mcast_cb cb, void *arg);

#endif

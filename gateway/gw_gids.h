/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * rds_gids on a RoCE port: GIDs for LAN addresses without the kernel
 * taking those addresses for its own (ibgwd(8), "RDS on RoCE").  An IB
 * host's rdma_cm puts a LAN host's address in the DGID of the packets it
 * sends through the gateway, and rdma_rxe (a RoCE NIC as well) drops a
 * packet whose DGID is not in the port's GID table.  RoCE GIDs are the
 * addresses of the port's netdev, so for each address A:
 *   ip addr add A/32 dev NETDEV noprefixroute   (IPv6: /128 ... nodad)
 *   ip route del local A dev NETDEV table local (A still routed to the LAN)
 *   ip route add local A dev lo table GW_GIDS_TABLE
 * and once per family
 *   ip rule add pref GW_GIDS_PREF iif NETDEV ipproto udp dport 4791 \
 *	lookup GW_GIDS_TABLE
 * so that RoCE v2 (UDP 4791) for A arriving on the port is delivered to
 * the RoCE device while everything else for A is forwarded to the LAN.
 * gw_gids_del takes all of it back.  ibgwd owns what rds_gids names: an
 * address, route or rule already there counts as added, and goes at the
 * end (a gateway that was killed leaves them to its next start).
 */
#ifndef IBGW_GW_GIDS_H
#define IBGW_GW_GIDS_H

#include <stddef.h>

#include "inet/addr.h"
#include "netlink/nl_link.h"

#define GW_GIDS_TABLE	18634u	/* the RDS port: easy to recognise */
#define GW_GIDS_PREF	18634u
#define GW_GIDS_UDP	4791u	/* RoCE v2 */

/*
 * Everything above for every address of the N entries of GIDS on the
 * netdev IFINDEX.  Returns the number of addresses, or -1 with the first
 * failure in err (what was done stays: gw_gids_del undoes it).
 */
int gw_gids_add(struct nl_sock_ctx *nl, int ifindex,
		const struct inet_prefix *gids, unsigned int n, char *err,
		size_t errlen);
/* Undo gw_gids_add (the same arguments); what is not there is skipped.
 * Returns 0, or -1 with the first failure in err (the rest still done). */
int gw_gids_del(struct nl_sock_ctx *nl, int ifindex,
		const struct inet_prefix *gids, unsigned int n, char *err,
		size_t errlen);

#endif

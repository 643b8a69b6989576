/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The gateway's end of RDS (rds = on in a partition): an RDS endpoint
 * (ulp/rds/rds_ep.h) on a fabric device of its own, owning every address
 * of the Ethernet side on the RDS side.  A datagram an IB host sends to a
 * LAN address goes on as one UDP datagram from a socket of the gateway
 * kept for the IB sender (address, port): a mapping, as a NAT keeps one;
 * UDP answers to that socket come back as RDS from the LAN host.  Each
 * export (rds_exports) is a UDP socket whose datagrams go on as RDS to an
 * IB host, from the LAN client's own address and port; the IB host's
 * answers go back from the export's port.  Owns the endpoint, its device,
 * the mappings, the export sockets and the counters below; the
 * partition's IPoIB link answers which addresses are on the IB side.
 */
#ifndef IBGW_GW_RDS_H
#define IBGW_GW_RDS_H

#include <stddef.h>
#include <stdint.h>

#include "conf/counters.h"
#include "ulp/rds/rds_ep.h"

struct part;
struct gw_rds;

struct gw_rds_stats {
	uint64_t udp_tx, udp_tx_bytes;	/* RDS datagrams sent on as UDP */
	uint64_t udp_rx, udp_rx_bytes;	/* UDP datagrams sent on as RDS */
	uint64_t exported;		/* of udp_rx: through an export */
	uint64_t mappings_now;		/* IB senders with a UDP socket */
	uint64_t flows_now;		/* export clients known */
	uint64_t mappings_made;		/* both kinds, ever */
	uint64_t reaped;		/* both kinds, idle and closed */
	uint64_t held_now;		/* datagrams waiting on congestion */
	uint64_t congested;		/* ENOBUFS from the endpoint */
	uint64_t drop_oversize;		/* over the LAN's UDP payload */
	uint64_t drop_malformed;	/* port 0, families differ */
	uint64_t drop_family;		/* an export's client of the other
					 * family than its IB host */
	uint64_t drop_limit;		/* over rds_max_peers */
	uint64_t drop_congested;	/* past the queue of a mapping */
	uint64_t drop_udp_tx;		/* sendto on the LAN failed */
	uint64_t drop_rds_tx;		/* rds_ep_send failed otherwise */
	uint64_t drop_not_lan;		/* from the IB side */
	uint64_t drop_udp_rx_overflow;	/* the kernel dropped at our UDP
					 * sockets (SO_RXQ_OVFL) */
};

extern const struct counter_desc gw_rds_counters[];

/* Open the device and the endpoint, the exports.  NULL with the reason
 * in err. */
struct gw_rds *gw_rds_new(struct part *p, char *err, size_t errlen);
/* Every mapping and export closed, the endpoint freed. */
void gw_rds_free(struct gw_rds *g);

const struct gw_rds_stats *gw_rds_stats(struct gw_rds *g);
/* NULL before the endpoint is up. */
const struct rds_ep_stats *gw_rds_ep_stats(const struct gw_rds *g);

#endif

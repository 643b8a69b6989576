/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The gateway's end of SDP (sdp = on in a partition): an SDP endpoint
 * (ulp/sdp/sdp_sock.h) on a fabric device of its own, listening on every
 * SDP port.  A connection whose destination is on the Ethernet side is
 * continued as TCP from the gateway (the LAN server sees the gateway's
 * address as the source); each export (sdp_exports) is a TCP listener
 * whose connections are continued as SDP to an IB host.  Owns the
 * endpoint, its device, the export listeners and the counters below;
 * the partition's IPoIB link answers which addresses are on the IB side.
 */
#ifndef IBGW_GW_SDP_H
#define IBGW_GW_SDP_H

#include <stddef.h>
#include <stdint.h>

#include "conf/counters.h"
#include "ulp/sdp/sdp_sock.h"

struct part;
struct gw_sdp;

struct gw_sdp_stats {
	uint64_t terminated;		/* SDP continued as TCP to the LAN */
	uint64_t exported;		/* LAN TCP continued as SDP */
	uint64_t conns_now;		/* both kinds, open now */
	uint64_t refused_limit;		/* over sdp_max_conns */
	uint64_t refused_local;		/* for the gateway or the IB side */
	uint64_t tcp_connect_failed;	/* the LAN server did not answer */
	uint64_t abandoned;		/* the IB host gave up first: the TCP
					 * connect cancelled */
	uint64_t export_unresolved;	/* no IPoIB neighbour for the host */
	uint64_t export_failed;		/* the IB host refused, timed out */
};

extern const struct counter_desc gw_sdp_counters[];

/* Open the device and the endpoint, listen, open the exports.  NULL with
 * the reason in err. */
struct gw_sdp *gw_sdp_new(struct part *p, char *err, size_t errlen);
/* Every connection reset, every listener closed. */
void gw_sdp_free(struct gw_sdp *g);

const struct gw_sdp_stats *gw_sdp_stats(const struct gw_sdp *g);
/* NULL before the endpoint is up. */
const struct sdp_ep_stats *gw_sdp_ep_stats(const struct gw_sdp *g);

#endif

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The counter tables ibgwd renders (ibgwctl show stats, the SIGUSR1
 * report, /metrics) for the structs it does not own the headers of: the
 * bridge's (gw_bridge.h), and its own per-partition and trunk counters
 * (ibgwd.h).  The names are those of ibgwctl(8).  The bridge's belongs
 * beside its struct and moves there when that header is free; static, so
 * each user keeps a copy.
 */
#ifndef IBGW_GW_COUNTERS_H
#define IBGW_GW_COUNTERS_H

#include "conf/counters.h"
#include "gateway/ibgwd.h"

static inline const char *gw_bridge_drop_reason(unsigned int i)
{
	return gw_drop_name((enum gw_drop)i);
}

static const struct counter_desc gw_bridge_counters[] = {
	COUNTER("rx_frames", struct gw_bridge_stats, eth_rx_frames,
		"Frames received from the Ethernet segment."),
	COUNTER("rx_bytes", struct gw_bridge_stats, eth_rx_bytes,
		"Bytes of frames received from the Ethernet segment."),
	COUNTER("tx_frames", struct gw_bridge_stats, eth_tx_frames,
		"Frames sent to the Ethernet segment."),
	COUNTER("tx_bytes", struct gw_bridge_stats, eth_tx_bytes,
		"Bytes of frames sent to the Ethernet segment."),
	COUNTER("to_ib_packets", struct gw_bridge_stats, to_ib_packets,
		"IP packets bridged to the IPoIB link."),
	COUNTER("to_ib_bytes", struct gw_bridge_stats, to_ib_bytes,
		"Bytes of IP packets bridged to the IPoIB link."),
	COUNTER("from_ib_packets", struct gw_bridge_stats, from_ib_packets,
		"IP packets bridged from the IPoIB link."),
	COUNTER("from_ib_bytes", struct gw_bridge_stats, from_ib_bytes,
		"Bytes of IP packets bridged from the IPoIB link."),
	COUNTER("arp_answered", struct gw_bridge_stats, arp_answered,
		"ARP requests answered on Ethernet for IB hosts."),
	COUNTER("nd_answered", struct gw_bridge_stats, nd_answered,
		"Neighbour Solicitations answered on Ethernet for IB hosts."),
	COUNTER("arp_asked", struct gw_bridge_stats, arp_asked,
		"ARP requests sent on Ethernet for IB hosts."),
	COUNTER("nd_asked", struct gw_bridge_stats, nd_asked,
		"Neighbour Solicitations sent on Ethernet for IB hosts."),
	COUNTER("fragmented", struct gw_bridge_stats, fragmented,
		"IPv4 packets fragmented to fit the other side's MTU."),
	COUNTER("icmp_too_big", struct gw_bridge_stats, icmp_too_big,
		"ICMP Fragmentation Needed / Packet Too Big sent to Ethernet."),
	COUNTER("mss_clamped", struct gw_bridge_stats, mss_clamped,
		"TCP SYNs whose MSS was lowered."),
	COUNTER_ARRAY("drop", struct gw_bridge_stats, drop,
		      gw_bridge_drop_reason,
		      "Frames the bridge dropped, by reason."),
	COUNTERS_END
};

/* The transparent partition's own: its tap or trunk side. */
static const struct counter_desc gw_part_counters[] = {
	COUNTER("drop.tx_error", struct part, eth_tx_errors,
		"Frames the tap or the trunk refused."),
	COUNTER("drop.tap_offload_bad", struct part, tap_offload_bad,
		"Frames from the tap whose virtio-net header was unusable."),
	COUNTERS_END
};

static const struct counter_desc gw_trunk_counters[] = {
	COUNTER("drop.unmapped_vlan", struct ibgwd, trunk_unmapped,
		"Frames on the trunk no partition maps the VLAN of."),
	COUNTERS_END
};

#endif

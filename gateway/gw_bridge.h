/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Transparent mode: one IPoIB partition and one Ethernet segment as one IP
 * subnet, as a proxy-ARP gateway joins them.  This is the translation core,
 * with no I/O of its own: frames from the Ethernet side and IP packets
 * from the IPoIB link come in through gw_bridge_eth_rx()/gw_bridge_ib_rx(),
 * and leave through the ops, so that unit tests and the benchmark drive it
 * with synthetic traffic.
 *
 *  - InfiniBand hosts appear on Ethernet with the MACs of eth_mac_of_ib();
 *    ARP requests and Neighbour Solicitations from Ethernet for their
 *    addresses are answered with those MACs once the IPoIB link knows them
 *    (the first request starts resolution on IB; the host's retry gets the
 *    answer).  Two endpoints with one MAC: the second is refused and
 *    counted.
 *  - Ethernet hosts appear on IB behind the gateway's own 20-byte address:
 *    the link answers ARP/ND for every address learned on Ethernet
 *    (gw_bridge_proxy()); for an unknown one it asks Ethernet, so that the
 *    IB host's retry is answered.
 *  - Addresses are learned from ARP, neighbour discovery and, where
 *    unknown, the source of IP frames; a new one is announced on IB.
 *  - Unicast IP goes by the destination MAC (Ethernet -> IB: the endpoint
 *    the MAC stands for) or address (IB -> Ethernet: the learned MAC;
 *    unknown ones are asked for with ARP/NS in the IB sender's name, with
 *    at most 3 packets waiting).  Broadcast and multicast go both ways:
 *    IPv4/IPv6 multicast to the group's MGID (IGMP/MLD reports from
 *    Ethernet make the link join), broadcast frames to the broadcast
 *    group, and what the link receives for its groups to the group MACs.
 *  - MTU: an IPv4 packet without DF that does not fit the other side is
 *    fragmented; with DF (or IPv6), ICMP fragmentation-needed /
 *    packet-too-big goes back to the sender.  SYNs crossing get their MSS
 *    clamped (mss_mtu).
 */
#ifndef IBGW_GW_BRIDGE_H
#define IBGW_GW_BRIDGE_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "conf/counters.h"
#include "gateway/eth_wire.h"
#include "ulp/ipoib/ipoib_link.h"

struct gw_bridge;

struct gw_bridge_cfg {
	uint8_t mac[6];		/* the gateway's own MAC on the segment */
	uint16_t vlan;		/* 0: untagged frames; else this 802.1Q tag */
	unsigned int eth_mtu;	/* 0: 1500 */
	int mss_clamp;		/* clamp SYNs to the smaller MTU of the two */
	unsigned int neigh_max;	/* Ethernet neighbours and IB MACs; 0: 4096 */
	unsigned int neigh_ttl_s; /* Ethernet neighbours; 0: 300 */
	/* the gateway's IPv6 address on IB (its IPoIB link-local): the
	 * source of the Packet Too Big it sends IB hosts about a multicast
	 * packet; unset (::): the link-local of mac */
	struct in6_addr ib_ll;
};

struct gw_bridge_ops {
	/* a frame for the Ethernet segment */
	void (*eth_send)(void *arg, const uint8_t *frame, size_t len);
	/* the same as header and payload, when the output can gather
	 * (optional: saves copying the payload behind the header) */
	void (*eth_sendv)(void *arg, const uint8_t *hdr, size_t hlen,
			  const uint8_t *payload, size_t len);
	/* an IP packet for IB: to next hop nh (unicast), or by its
	 * destination (nh NULL: multicast), or to the broadcast group */
	void (*ib_xmit)(void *arg, const uint8_t *pkt, size_t len,
			const struct inet_addr *nh, int bcast);
	/* the link's neighbour cache; 0 and *hw when known */
	int (*ib_neigh)(void *arg, const struct inet_addr *ip,
			struct ipoib_addr *hw);
	void (*ib_resolve)(void *arg, const struct inet_addr *ip);
	/* (optional) tell IB that ip, newly learned on Ethernet, is behind
	 * the gateway: IB hosts that cached an older address of the
	 * gateway for it (a restart) update it */
	void (*ib_announce)(void *arg, const struct inet_addr *ip);
	unsigned int (*ib_mtu)(void *arg);
};

enum gw_drop {
	GW_DROP_ETH_MALFORMED,	/* header, ARP, ND or IP that does not parse */
	GW_DROP_ETH_VLAN,	/* a tag other than ours, or one we do not use */
	GW_DROP_ETH_TYPE,	/* neither IPv4, IPv6 nor ARP */
	GW_DROP_ETH_LOOP,	/* from one of the MACs we give IB hosts */
	GW_DROP_ETH_NOT_OURS,	/* unicast to a MAC that is not an IB host's */
	GW_DROP_IB_MALFORMED,	/* from IB: not a well-formed IP packet */
	GW_DROP_IB_SRC_UNKNOWN,	/* from an IB host whose address is unknown */
	GW_DROP_NEIGH_QUEUE,	/* > 3 waiting for an Ethernet neighbour */
	GW_DROP_NEIGH_FAILED,	/* the neighbour did not answer */
	GW_DROP_NEIGH_FULL,	/* no room for one more neighbour */
	GW_DROP_MAC_COLLISION,	/* two IB endpoints, one MAC */
	GW_DROP_TOO_BIG,	/* did not fit, DF or IPv6 (ICMP sent) */
	GW_DROP_MAX
};

const char *gw_drop_name(enum gw_drop d);

struct gw_bridge_stats {
	uint64_t eth_rx_frames, eth_rx_bytes;	/* from the segment */
	uint64_t eth_tx_frames, eth_tx_bytes;	/* to the segment */
	uint64_t to_ib_packets, to_ib_bytes;	/* IP packets sent to IB */
	uint64_t from_ib_packets, from_ib_bytes; /* IP packets from IB */
	uint64_t arp_answered, nd_answered;	/* for IB hosts, on Ethernet */
	uint64_t arp_asked, nd_asked;		/* on Ethernet, for IB hosts */
	uint64_t fragmented, icmp_too_big, mss_clamped;
	uint64_t drop[GW_DROP_MAX];
};
/* Their names and help, for every output (conf/counters.h). */
extern const struct counter_desc gw_bridge_counters[];

/* NULL with errno ENOMEM, its only failure (so no error buffer). */
struct gw_bridge *gw_bridge_new(const struct gw_bridge_cfg *cfg,
				const struct gw_bridge_ops *ops, void *arg);
void gw_bridge_free(struct gw_bridge *b);

/* A frame from the Ethernet segment (tagged with cfg.vlan, or untagged). */
void gw_bridge_eth_rx(struct gw_bridge *b, const uint8_t *frame, size_t len);
/* An IP packet the IPoIB link received; group: it came to a multicast
 * group (ipoib_link_rx_group), so an IPv4 one to a unicast-looking
 * address is a directed broadcast and goes out as Ethernet broadcast. */
void gw_bridge_ib_rx(struct gw_bridge *b, const uint8_t *pkt, size_t len,
		     int group);
/* The link's proxy question: is target a host on the Ethernet side?
 * (Asks Ethernet when it does not know.) */
int gw_bridge_proxy(struct gw_bridge *b, const struct inet_addr *target);
/* Timers: ARP/NS retries, expiry.  Call about once a second. */
void gw_bridge_tick(struct gw_bridge *b, time_t now);

const struct gw_bridge_stats *gw_bridge_stats(const struct gw_bridge *b);
unsigned int gw_bridge_neigh_count(const struct gw_bridge *b);
/* The LAN hosts whose MAC is known, at most max of them into out: how
 * many.  A restarted gateway asks for them again (gw_bridge_seek). */
unsigned int gw_bridge_lan_hosts(const struct gw_bridge *b,
				 struct inet_addr *out, unsigned int max);
/* Ask the segment for ip now, as for a destination of an IB host: its
 * answer is learnt and announced to the IB side (ops.ib_announce). */
void gw_bridge_seek(struct gw_bridge *b, const struct inet_addr *ip);
unsigned int gw_bridge_mac_count(const struct gw_bridge *b);
/* "eth IP MAC STATE" and "ib MAC ADDRESS" lines; returns the length. */
size_t gw_bridge_report(const struct gw_bridge *b, char *out, size_t cap);

#endif

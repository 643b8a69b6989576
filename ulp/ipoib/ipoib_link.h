/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * One IPoIB datagram-mode link (RFC 4391, as the Linux driver behaves) on a
 * fabric port, for one partition: the broadcast group join that gives the
 * link its Q_Key and MTU, a UD queue pair, ARP and IPv6 neighbour discovery
 * over 20-byte addresses, a neighbour cache (IP -> link address ->
 * PathRecord -> address handle), multicast groups (full members for what
 * the host listens to, send-only for what it only sends to), ICMP errors
 * for oversize packets, and recovery after SM events.
 *
 * The host side is IP packets: ipoib_link_xmit() takes one from the host,
 * ops->rx hands one to it.  Used by ipoibd (with a TUN interface) and by
 * the gateway, which runs it in transparent mode: its nexthop and proxy
 * hooks answer ARP/ND for the hosts behind it.  Everything runs on the
 * caller's libevent loop.  The implementation is ipoib_link.c,
 * ipoib_neigh.c and ipoib_mcast.c over ipoib_priv.h.
 */
#ifndef IBGW_IPOIB_LINK_H
#define IBGW_IPOIB_LINK_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>

#include "conf/counters.h"
#include "fabric/fabric.h"
#include "inet/addr.h"
#include "ulp/ipoib/ipoib_wire.h"

struct event_base;
struct ipoib_link;

struct ipoib_link_cfg {
	uint16_t pkey;			/* the partition (full bit ignored) */
	unsigned int neigh_max;		/* neighbour entries; 0: 1024 */
	unsigned int neigh_ttl_s;	/* re-resolve after; 0: 60 */
	unsigned int admin_mtu;		/* 0: the broadcast group's - 4 */
	/* also listen to the IGMPv3 and MLDv2 report groups (224.0.0.22,
	 * ff02::16), as a multicast router does: a gateway hears the IB
	 * hosts' memberships */
	int report_groups;
	/* connected mode (RFC 4755): unicast to peers whose address has the
	 * RC flag over RC connections, MTU up to 65520; multicast and other
	 * peers on datagrams (ipoib_cm.c) */
	int connected;
	unsigned int cm_idle_s;		/* reap idle connections; 0: 300 */
};

struct ipoib_link_ops {
	/* An IP packet for the host (IPv4 or IPv6). */
	void (*rx)(void *arg, const uint8_t *pkt, size_t len);
	/* The end of a burst of rx calls (optional): a moment to push out
	 * what was held back to be coalesced. */
	void (*rx_done)(void *arg);
	/* Carrier: up after the broadcast join, with the link MTU. */
	void (*carrier)(void *arg, int up, unsigned int mtu);
	/* The next hop for dst: 0 and *nh set, or -1 (unreachable).  NULL:
	 * every destination is on the link. */
	int (*nexthop)(void *arg, const struct inet_addr *dst,
		       struct inet_addr *nh);
	/* Proxy ARP/ND (optional): an ARP request or Neighbour
	 * Solicitation for target, which is not one of the link's
	 * addresses; return 1 to answer it with the link's own address
	 * (a gateway answering for the hosts behind it). */
	int (*proxy)(void *arg, const struct inet_addr *target);
	/* (optional) Another endpoint hw claims a, one of the link's own
	 * addresses: an ARP with a as its sender, or a Neighbour
	 * Advertisement to a multicast group with a as its target (an
	 * answer to duplicate address detection). */
	void (*conflict)(void *arg, const struct inet_addr *a,
			 const struct ipoib_addr *hw);
	/* (optional) The link takes packets again after
	 * ipoib_link_tx_stopped() said it was full. */
	void (*tx_ready)(void *arg);
};

/* Counters; the drop reasons are also the names printed by ipoibd. */
enum ipoib_drop {
	IPOIB_DROP_NO_CARRIER,		/* host sent while the link is down */
	IPOIB_DROP_BAD_PACKET,		/* host sent something not IP */
	IPOIB_DROP_TOO_BIG,		/* larger than the MTU (ICMP sent) */
	IPOIB_DROP_NO_ROUTE,		/* nexthop said unreachable */
	IPOIB_DROP_NEIGH_QUEUE,		/* >3 packets waiting for a neighbour */
	IPOIB_DROP_NEIGH_FAILED,	/* neighbour did not answer */
	IPOIB_DROP_NEIGH_TABLE_FULL,	/* no entry could be made */
	IPOIB_DROP_PATH_FAILED,		/* no PathRecord for the neighbour */
	IPOIB_DROP_MCAST_QUEUE,		/* >64 waiting for a send-only join */
	IPOIB_DROP_MCAST_FAILED,	/* the join was refused */
	IPOIB_DROP_SEND,		/* the queue pair refused it */
	IPOIB_DROP_RX_MALFORMED,	/* received: bad header/ARP/ND */
	IPOIB_DROP_RX_OWN,		/* received our own multicast */
	IPOIB_DROP_CM_QUEUE,		/* >64 waiting for a connection, or
					 * its queue over CM_QUEUE_LIMIT */
	IPOIB_DROP_CM_FAILED,		/* waited for one that failed */
	IPOIB_DROP_MAX
};

struct ipoib_link_stats {
	uint64_t tx_packets, tx_bytes, rx_packets, rx_bytes;
	uint64_t arp_tx, arp_rx, nd_tx, nd_rx;
	uint64_t icmp_too_big;
	uint64_t joins, join_failures, path_queries, path_failures;
	uint64_t rejoins;		/* after CLIENT_REREGISTER etc. */
	uint64_t neigh_unreachable;	/* link address not confirmed after
					 * an advertisement without
					 * Override offered another */
	uint64_t cm_tx_packets, cm_tx_bytes, cm_rx_packets, cm_rx_bytes;
	uint64_t cm_connects;		/* connections we made */
	uint64_t cm_accepts;		/* connections peers made to us */
	uint64_t cm_failures;		/* ours refused or broken: datagrams */
	uint64_t cm_rejected;		/* peers' we refused */
	uint64_t cm_reaped;		/* idle ones closed */
	uint64_t cm_tx_stops;		/* the host's input stopped: a
					 * connection's queue was full */
	uint64_t cm_stalls;		/* ... and nothing it sent completed
					 * for CM_STALL_S: failed */
	uint64_t drop[IPOIB_DROP_MAX];
};

const char *ipoib_drop_name(enum ipoib_drop d);

/* The counters' names and help, as ipoibd's SIGUSR1 report, ibgwctl show
 * stats and ibgwd's metrics give them (conf/counters.h). */
extern const struct counter_desc ipoib_link_counters[];

/*
 * Errors as fabric.h's: -1 or NULL with errno set and a one-line reason
 * in err (NULL is fine).  ipoib_link_new fails with the fabric's errno
 * and message when the port cannot be asked (ECONNRESET: the fabric is
 * gone), ENOMEM.  A cfg->pkey the port's P_Key table lacks is no error:
 * the link waits for it without carrier (ipoib_link_has_pkey() says so),
 * as the kernel's interface does, and joins when a PKEY_CHANGE event
 * shows the key (the SM added it).  Nothing here logs: what
 * happens later (joins refused, paths not found) is counted in the stats
 * and told through ops->carrier.
 */
struct ipoib_link *ipoib_link_new(struct event_base *base,
				  struct fab_dev *dev,
				  const struct ipoib_link_cfg *cfg,
				  const struct ipoib_link_ops *ops, void *arg,
				  char *err, size_t errlen);
/* Leaves every group (SA leaves, waited for up to timeout_ms in all),
 * then frees. */
void ipoib_link_free(struct ipoib_link *l, unsigned int timeout_ms);

/* Join the broadcast group (retried with backoff until it works); -1
 * (ENOMEM) only when not even the first try could be made. */
int ipoib_link_start(struct ipoib_link *l, char *err, size_t errlen);
/* A local address: answered in ARP/ND, source of ICMP errors; IPv6 ones
 * get their solicited-node group joined.  It is announced now if the
 * carrier is up, and whenever the carrier comes up: a gratuitous ARP, for
 * IPv6 an unsolicited Neighbour Advertisement to all nodes with the
 * override flag (as Linux with ndisc_notify), so that hosts that hold an
 * older link address of ours (another QPN, before a restart) take the new
 * one at once.  -1 with ENOSPC when the link has as many as it can hold. */
int ipoib_link_add_addr(struct ipoib_link *l, const struct inet_prefix *a,
			char *err, size_t errlen);
/* The same for an IPv6 address the host is still checking with duplicate
 * address detection (RFC 4862): answered, but not announced, as a
 * tentative address must not be, until ipoib_link_addr_ready(). */
int ipoib_link_add_addr_tentative(struct ipoib_link *l,
				  const struct inet_prefix *a, char *err,
				  size_t errlen);
/* The duplicate address detection of a, added tentative, succeeded: it is
 * announced now (carrier up) and at every carrier up from now on.
 * Nothing for an address not tentative; -1 with ENOENT when a is not one
 * of the link's (a failed one: ipoib_link_del_addr). */
int ipoib_link_addr_ready(struct ipoib_link *l, const struct inet_addr *a);

/* The addresses a link holds: 16 of the host's and its IPv6 link-local
 * one (ipoib_tun's IPOIB_TUN_MAX_ADDRS is the 16). */
#define IPOIB_LINK_MAX_ADDRS	17

/* Whether a is one of the link's addresses (those added, and the IPv6
 * link-local one the host made from the port GUID). */
int ipoib_link_is_local(struct ipoib_link *l, const struct inet_addr *a);

/* No longer a local address (an IPv6 one whose duplicate address
 * detection failed): -1 with ENOENT when it is not one. */
int ipoib_link_del_addr(struct ipoib_link *l, const struct inet_addr *a);

/* An IP packet from the host.  Never fails: drops are counted. */
void ipoib_link_xmit(struct ipoib_link *l, const uint8_t *pkt, size_t len);
/* The same for a unicast packet through next hop nh (the nexthop callback
 * is not asked); multicast destinations go to their groups as above. */
void ipoib_link_xmit_nh(struct ipoib_link *l, const uint8_t *pkt, size_t len,
			const struct inet_addr *nh);
/* An IPv4 or IPv6 packet to the broadcast group, whatever its destination
 * (a subnet-directed broadcast bridged from another medium). */
void ipoib_link_xmit_bcast(struct ipoib_link *l, const uint8_t *pkt,
			   size_t len);
/* The neighbour cache: 0 and *hw if ip's link address is known, else -1. */
int ipoib_link_neigh_hw(struct ipoib_link *l, const struct inet_addr *ip,
			struct ipoib_addr *hw);
/* A proxy announcing a host it answers for, with the link's own address:
 * a gratuitous ARP for IPv4, for IPv6 an unsolicited Neighbour
 * Advertisement to all nodes with the override flag (RFC 4861 7.2.8
 * allows it in unsolicited ones; neighbours take the address at once). */
void ipoib_link_announce(struct ipoib_link *l, const struct inet_addr *a);
/* Start resolving ip if it is not known or being resolved. */
void ipoib_link_neigh_resolve(struct ipoib_link *l, const struct inet_addr *ip);
/* Around a burst of ipoib_link_xmit() calls: hold 1 collects the
 * datagrams, hold 0 sends what was collected in one batch.  Address
 * handles stay valid in between as long as the event loop does not run. */
void ipoib_link_tx_hold(struct ipoib_link *l, int hold);
/* 1 while a connected-mode connection has more queued than its window
 * takes (CM_QUEUE_STOP bytes): the host should stop handing the link
 * packets, as the Linux driver stops its queue when a connection's send
 * ring is full, until ops->tx_ready.  A host that goes on anyway loses
 * packets beyond CM_QUEUE_LIMIT (counted as drop.cm_queue_full). */
int ipoib_link_tx_stopped(const struct ipoib_link *l);

/* Port events (fab_get_event): CLIENT_REREGISTER / GID change rejoin all
 * groups and re-resolve paths; PORT_ERR drops the carrier; PORT_ACTIVE,
 * LID_CHANGE, SM_CHANGE restart from the broadcast join; PKEY_CHANGE reads
 * the port's table again: the key appearing starts the broadcast join,
 * the key gone drops the carrier, the groups' attachments, the neighbours
 * and the queue pair (a new one, with a new QPN, comes with the key). */
void ipoib_link_event(struct ipoib_link *l, enum fab_event_type type);

const struct ipoib_link_stats *ipoib_link_stats(const struct ipoib_link *l);
/* Our link address (flags, QPN, GID); valid once the QP exists. */
void ipoib_link_hwaddr(const struct ipoib_link *l, struct ipoib_addr *a);
unsigned int ipoib_link_mtu(const struct ipoib_link *l);
/* "datagram", "connected", or "datagram-only" when connected mode was
 * asked for and the provider cannot take its connections. */
const char *ipoib_link_mode_name(const struct ipoib_link *l);
/* The host forwards IPv6 on this interface (net.ipv6.conf.IF.forwarding):
 * the advertisements for our own addresses carry the Router flag, as a
 * router's must (RFC 4861 7.2.4, 7.2.6; a Linux neighbour that had us as
 * a router drops its routes through us on one without it). */
void ipoib_link_set_router(struct ipoib_link *l, int on);
int ipoib_link_carrier(const struct ipoib_link *l);
/* 1 while the port's P_Key table holds the link's P_Key. */
int ipoib_link_has_pkey(const struct ipoib_link *l);
/* 0 while the queue pair's receive side is polled without error (or
 * there is no queue pair yet: the broadcast join makes it); else the
 * errno of the last poll that failed (ECONNRESET: the fabric is gone). */
int ipoib_link_rx_error(const struct ipoib_link *l);
/* In ops.rx: 1 when the packet came to a multicast group (the broadcast
 * group included) rather than to our QP, from the datagram's GRH. */
int ipoib_link_rx_group(const struct ipoib_link *l);
/* Entries of the neighbour cache; multicast groups (any state), as the
 * report's "neighbors" and "groups" list them. */
unsigned int ipoib_link_neigh_count(const struct ipoib_link *l);
unsigned int ipoib_link_group_count(const struct ipoib_link *l);
/* Neighbour and group tables, and the counters, as text (one line each):
 * ipoibd's SIGUSR1 report and ibgwctl show (gw_ctl.c, gw_metrics.c). */
size_t ipoib_link_report(const struct ipoib_link *l, const char *what,
			 char *buf, size_t cap);

#endif

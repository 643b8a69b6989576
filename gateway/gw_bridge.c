// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Transparent mode: the translation core (see gw_bridge.h). */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inet/byteorder.h"
#include "inet/frag.h"
#include "inet/icmp.h"
#include "inet/ip.h"
#include "inet/nd.h"
#include "gateway/gw_bridge.h"
#include "inet/tcp_mss.h"

#define NBUCKETS	256
#define QUEUE_MAX	3	/* packets waiting per neighbour, as Linux */
#define PROBES		3	/* ARP/NS tries, a second apart */
#define FAILED_HOLD	3	/* seconds a failed neighbour is not asked */

struct qpkt {
	struct qpkt *next;
	uint8_t src_mac[6];
	size_t len;
	uint8_t data[];
};

/* An Ethernet neighbour (an address on the segment). */
struct eneigh {
	struct inet_addr ip;
	int have_mac;
	uint8_t mac[6];
	time_t confirmed;
	time_t next_probe;
	unsigned int probes;
	struct qpkt *q, **qtail;
	unsigned int qn;
	struct eneigh *next;
};

/* A MAC handed to an IB endpoint. */
struct ibmac {
	uint8_t mac[6];
	struct ipoib_addr hw;
	struct inet_addr ip4, ip6;	/* family 0 when none yet */
	time_t used;
	struct ibmac *next;
};

struct gw_bridge {
	struct gw_bridge_cfg cfg;
	struct gw_bridge_ops ops;
	void *arg;
	struct eneigh *nb[NBUCKETS];
	struct ibmac *mb[NBUCKETS];
	unsigned int nneigh, nmac;
	struct in6_addr ll;		/* our link-local, for NS we send */
	time_t now;
	uint16_t icmp_id;
	struct gw_bridge_stats st;
	uint8_t frame[ETH_HDR_LEN + ETH_VLAN_LEN + 65536];
	uint8_t scratch[65536];
};

static const char *const drop_names[GW_DROP_MAX] = {
	[GW_DROP_ETH_MALFORMED] = "eth_malformed",
	[GW_DROP_ETH_VLAN] = "eth_vlan",
	[GW_DROP_ETH_TYPE] = "eth_type",
	[GW_DROP_ETH_LOOP] = "eth_loop",
	[GW_DROP_ETH_NOT_OURS] = "eth_not_ours",
	[GW_DROP_IB_MALFORMED] = "ib_malformed",
	[GW_DROP_IB_SRC_UNKNOWN] = "ib_src_unknown",
	[GW_DROP_NEIGH_QUEUE] = "neigh_queue_full",
	[GW_DROP_NEIGH_FAILED] = "neigh_failed",
	[GW_DROP_NEIGH_FULL] = "neigh_table_full",
	[GW_DROP_MAC_COLLISION] = "mac_collision",
	[GW_DROP_TOO_BIG] = "too_big",
};

const char *gw_drop_name(enum gw_drop d)
{
	return d < GW_DROP_MAX ? drop_names[d] : "?";
}

static const char *bridge_drop_reason(unsigned int i)
{
	return gw_drop_name((enum gw_drop)i);
}

const struct counter_desc gw_bridge_counters[] = {
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
		      bridge_drop_reason,
		      "Frames the bridge dropped, by reason."),
	COUNTERS_END
};

static void drop(struct gw_bridge *b, enum gw_drop d)
{
	b->st.drop[d]++;
}

static unsigned int hash_bytes(const uint8_t *p, size_t n)
{
	unsigned int h = 2166136261u;

	while (n--)
		h = (h ^ *p++) * 16777619u;
	return h % NBUCKETS;
}

static unsigned int ip_bucket(const struct inet_addr *ip)
{
	return inet_addr_hash(ip) % NBUCKETS;
}

/* ---- tables -------------------------------------------------------------- */

static struct eneigh *neigh_find(struct gw_bridge *b, const struct inet_addr *ip)
{
	struct eneigh *n;

	for (n = b->nb[ip_bucket(ip)]; n; n = n->next)
		if (inet_addr_equal(&n->ip, ip))
			return n;
	return NULL;
}

static void queue_free(struct eneigh *n)
{
	struct qpkt *p;

	while ((p = n->q)) {
		n->q = p->next;
		free(p);
	}
	n->qtail = &n->q;
	n->qn = 0;
}

static struct eneigh *neigh_new(struct gw_bridge *b, const struct inet_addr *ip)
{
	unsigned int h = ip_bucket(ip);
	struct eneigh *n;

	if (b->nneigh >= b->cfg.neigh_max) {
		drop(b, GW_DROP_NEIGH_FULL);
		return NULL;
	}
	n = calloc(1, sizeof(*n));
	if (!n) {
		drop(b, GW_DROP_NEIGH_FULL);
		return NULL;
	}
	n->ip = *ip;
	n->qtail = &n->q;
	n->next = b->nb[h];
	b->nb[h] = n;
	b->nneigh++;
	return n;
}

static void neigh_del(struct gw_bridge *b, struct eneigh *n)
{
	struct eneigh **pp;

	for (pp = &b->nb[ip_bucket(&n->ip)]; *pp;
	     pp = &(*pp)->next) {
		if (*pp == n) {
			*pp = n->next;
			break;
		}
	}
	queue_free(n);
	free(n);
	b->nneigh--;
}

static struct ibmac *mac_find(struct gw_bridge *b, const uint8_t *mac)
{
	struct ibmac *m;

	for (m = b->mb[hash_bytes(mac, 6)]; m; m = m->next)
		if (!memcmp(m->mac, mac, 6))
			return m;
	return NULL;
}

static int same_endpoint(const struct ipoib_addr *a, const struct ipoib_addr *b)
{
	return a->qpn == b->qpn && !memcmp(a->gid.raw, b->gid.raw, 16);
}

/* The MAC entry of an IB endpoint with address ip; NULL on a collision
 * or when the table is full. */
static struct ibmac *mac_of(struct gw_bridge *b, const struct ipoib_addr *hw,
			    const struct inet_addr *ip)
{
	uint8_t mac[6];
	struct ibmac *m;
	unsigned int h;

	eth_mac_of_ib(hw, mac);
	m = mac_find(b, mac);
	if (m && !same_endpoint(&m->hw, hw)) {
		drop(b, GW_DROP_MAC_COLLISION);
		return NULL;
	}
	if (!m) {
		if (b->nmac >= b->cfg.neigh_max || !(m = calloc(1, sizeof(*m)))) {
			drop(b, GW_DROP_NEIGH_FULL);
			return NULL;
		}
		memcpy(m->mac, mac, 6);
		m->hw = *hw;
		h = hash_bytes(mac, 6);
		m->next = b->mb[h];
		b->mb[h] = m;
		b->nmac++;
	}
	if (ip) {
		if (ip->family == AF_INET)
			m->ip4 = *ip;
		else if (!IN6_IS_ADDR_LINKLOCAL(&ip->v6) ||
			 m->ip6.family != AF_INET6)
			m->ip6 = *ip;
	}
	m->used = b->now;
	return m;
}

/* Is the address an Ethernet host?  Only what was learned there. */
static int on_ethernet(struct gw_bridge *b, const struct inet_addr *ip)
{
	struct eneigh *n = neigh_find(b, ip);

	return n && n->have_mac;
}

/* ---- Ethernet output ------------------------------------------------------- */

static void eth_out(struct gw_bridge *b, const uint8_t *dst,
		    const uint8_t *src, uint16_t type, const uint8_t *p,
		    size_t len)
{
	size_t h = eth_build(b->frame, dst, src, b->cfg.vlan, type);

	b->st.eth_tx_frames++;
	b->st.eth_tx_bytes += h + len;
	if (b->ops.eth_sendv) {
		b->ops.eth_sendv(b->arg, b->frame, h, p, len);
		return;
	}
	memcpy(b->frame + h, p, len);
	b->ops.eth_send(b->arg, b->frame, h + len);
}

/* Ask the segment for ip: an ARP probe (sender 0.0.0.0, so nobody learns
 * from it) or an NS from our link-local address. */
static void probe(struct gw_bridge *b, struct eneigh *n)
{
	static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	uint8_t p[ETH_ND_LEN], mac[6];
	struct in6_addr sn;
	size_t len;

	n->probes++;
	n->next_probe = b->now + 1;
	if (n->ip.family == AF_INET) {
		struct eth_arp a = { .op = 1 };

		memcpy(a.sha, b->cfg.mac, 6);
		a.tpa = n->ip.v4;
		len = eth_arp_build(p, sizeof(p), &a);
		b->st.arp_asked++;
		eth_out(b, bcast, b->cfg.mac, ETH_P_ARP_, p, len);
		return;
	}
	inet_solicited_node(&n->ip.v6, &sn);
	len = eth_nd_build_ns(&b->ll, &sn, &n->ip.v6, b->cfg.mac, p,
			      sizeof(p));
	eth_mcast_mac_v6(&sn, mac);
	b->st.nd_asked++;
	eth_out(b, mac, b->cfg.mac, ETH_P_IPV6_, p, len);
}

/* Ask the segment for ip unless it is known or being asked. */
static void ask(struct gw_bridge *b, const struct inet_addr *ip)
{
	struct eneigh *n = neigh_find(b, ip);

	if (!n && (n = neigh_new(b, ip)))
		probe(b, n);
}

/* Learn ip at mac; send what waited for it. */
static void learn(struct gw_bridge *b, const struct inet_addr *ip,
		  const uint8_t *mac)
{
	struct eneigh *n;
	struct qpkt *q;

	if (eth_is_multicast(mac) || mac_find(b, mac) ||
	    !memcmp(mac, b->cfg.mac, 6))
		return;
	if (ip->family == AF_INET ? !ip->v4.s_addr :
	    IN6_IS_ADDR_UNSPECIFIED(&ip->v6))
		return;
	n = neigh_find(b, ip);
	if (!n && !(n = neigh_new(b, ip)))
		return;
	if ((!n->have_mac || memcmp(n->mac, mac, 6)) && b->ops.ib_announce)
		b->ops.ib_announce(b->arg, ip);
	memcpy(n->mac, mac, 6);
	n->have_mac = 1;
	n->confirmed = b->now;
	n->probes = 0;
	while ((q = n->q)) {
		n->q = q->next;
		eth_out(b, n->mac, q->src_mac, ip->family == AF_INET ?
			ETH_P_IP_ : ETH_P_IPV6_, q->data, q->len);
		free(q);
	}
	n->qtail = &n->q;
	n->qn = 0;
}

/* An IP packet (from IB) for dst on the segment, from src_mac. */
static void to_neigh(struct gw_bridge *b, const struct inet_addr *dst,
		     const uint8_t *src_mac, const uint8_t *pkt, size_t len)
{
	struct eneigh *n = neigh_find(b, dst);
	struct qpkt *q;

	if (n && n->have_mac) {
		eth_out(b, n->mac, src_mac, dst->family == AF_INET ?
			ETH_P_IP_ : ETH_P_IPV6_, pkt, len);
		return;
	}
	if (!n) {
		n = neigh_new(b, dst);
		if (!n)
			return;
		probe(b, n);
	} else if (n->probes >= PROBES) {
		drop(b, GW_DROP_NEIGH_FAILED);	/* failed a moment ago */
		return;
	}
	if (n->qn >= QUEUE_MAX ||
	    !(q = malloc(sizeof(*q) + len))) {
		drop(b, GW_DROP_NEIGH_QUEUE);
		return;
	}
	q->next = NULL;
	memcpy(q->src_mac, src_mac, 6);
	q->len = len;
	memcpy(q->data, pkt, len);
	*n->qtail = q;
	n->qtail = &q->next;
	n->qn++;
}

/* ---- MTU, MSS ---------------------------------------------------------------- */

static unsigned int ib_mtu(struct gw_bridge *b)
{
	return b->ops.ib_mtu ? b->ops.ib_mtu(b->arg) : 2044;
}

/* A SYN gets its MSS clamped in a copy: returns the packet to send. */
static const uint8_t *clamp(struct gw_bridge *b, const uint8_t *pkt,
			    size_t len)
{
	unsigned int m = ib_mtu(b);

	if (!b->cfg.mss_clamp || !tcp_maybe_syn(pkt, len))
		return pkt;
	if (b->cfg.eth_mtu < m)
		m = b->cfg.eth_mtu;
	memcpy(b->scratch, pkt, len);
	if (tcp_mss_clamp(b->scratch, len, m)) {
		b->st.mss_clamped++;
		return b->scratch;
	}
	return pkt;
}

struct frag_ctx {
	struct gw_bridge *b;
	int to_ib;
	const struct inet_addr *nh;
	const uint8_t *dst_mac, *src_mac;
	int bcast;
};

static void frag_out(void *arg, const uint8_t *p, size_t n)
{
	struct frag_ctx *c = arg;

	if (c->to_ib) {
		c->b->st.to_ib_packets++;
		c->b->st.to_ib_bytes += n;
		c->b->ops.ib_xmit(c->b->arg, p, n, c->nh, c->bcast);
	} else {
		eth_out(c->b, c->dst_mac, c->src_mac, ETH_P_IP_, p, n);
	}
}

/*
 * A packet larger than mtu: fragments (IPv4 without DF; 1 returned, sent
 * through c) or an ICMP error from the original destination (about an
 * IPv6 packet to a group: from the gateway's link-local address) back to
 * the sender (0 returned, the error in out/olen), or -1.
 */
static int too_big(struct gw_bridge *b, const uint8_t *pkt, size_t len,
		   unsigned int mtu, struct frag_ctx *c, uint8_t *out,
		   size_t cap, size_t *olen)
{
	enum inet_err e;

	if (pkt[0] >> 4 == 4) {
		struct in_addr src;

		if (!inet_ipv4_df(pkt, len)) {
			if (inet_frag_ipv4(pkt, len, mtu, frag_out, c) > 0) {
				b->st.fragmented++;
				return 1;
			}
			drop(b, GW_DROP_TOO_BIG);
			return -1;
		}
		memcpy(&src, pkt + 16, 4);
		e = inet_icmp4_frag_needed(pkt, len, &src, (uint16_t)mtu,
					   ++b->icmp_id, out, cap, olen);
	} else {
		struct in6_addr src;

		memcpy(&src, pkt + 24, 16);
		/* about a packet to a group: from a unicast address of ours
		 * (RFC 4443 2.2; a multicast source is dropped by every
		 * receiver, Linux ipv6_rcv), on the side it goes to */
		if (IN6_IS_ADDR_MULTICAST(&src))
			src = c->to_ib || IN6_IS_ADDR_UNSPECIFIED(&b->cfg.ib_ll) ?
			      b->ll : b->cfg.ib_ll;
		e = inet_icmp6_pkt_too_big(pkt, len, &src, mtu, out, cap,
					   olen);
	}
	drop(b, GW_DROP_TOO_BIG);
	if (e != INET_OK)
		return -1;
	b->st.icmp_too_big++;
	return 0;
}

/* ---- from Ethernet ------------------------------------------------------------ */

/*
 * A unicast frame to a MAC we do not hold: perhaps one handed out before
 * (by this gateway before a restart, or before the entry expired), which
 * LAN hosts keep in their caches.  If the destination address is an IB
 * host whose MAC is this one, the entry is made again; if the address is
 * not known on IB yet, it is asked for, and the sender's next frames
 * pass.
 */
static struct ibmac *mac_recover(struct gw_bridge *b, const uint8_t *mac,
				 const struct inet_addr *dst)
{
	struct ipoib_addr hw;
	uint8_t want[6];

	if (!(mac[0] & 0x02) || on_ethernet(b, dst))
		return NULL;	/* not a locally administered one of ours */
	if (b->ops.ib_neigh(b->arg, dst, &hw) < 0) {
		b->ops.ib_resolve(b->arg, dst);
		return NULL;
	}
	eth_mac_of_ib(&hw, want);
	if (memcmp(want, mac, 6))
		return NULL;
	return mac_of(b, &hw, dst);
}

static void eth_arp(struct gw_bridge *b, const struct eth_hdr *h,
		    const uint8_t *p, size_t len)
{
	struct eth_arp a, r;
	struct inet_addr sip, tip;
	struct ipoib_addr hw;
	struct ibmac *m;
	uint8_t out[ETH_ARP_LEN];

	if (eth_arp_parse(p, len, &a) != ETH_OK) {
		drop(b, GW_DROP_ETH_MALFORMED);
		return;
	}
	inet_addr_v4(&sip, &a.spa);
	inet_addr_v4(&tip, &a.tpa);
	(void)h;
	learn(b, &sip, a.sha);
	if (a.op != 1 || !a.tpa.s_addr || inet_addr_equal(&sip, &tip) ||
	    on_ethernet(b, &tip))
		return;		/* a reply, an announcement, a LAN host */
	if (b->ops.ib_neigh(b->arg, &tip, &hw) < 0) {
		b->ops.ib_resolve(b->arg, &tip);	/* the retry will do */
		return;
	}
	m = mac_of(b, &hw, &tip);
	if (!m)
		return;
	memset(&r, 0, sizeof(r));
	r.op = 2;
	memcpy(r.sha, m->mac, 6);
	r.spa = a.tpa;
	memcpy(r.tha, a.sha, 6);
	r.tpa = a.spa;
	eth_arp_build(out, sizeof(out), &r);
	b->st.arp_answered++;
	eth_out(b, a.sha, m->mac, ETH_P_ARP_, out, sizeof(out));
}

static const uint8_t all_nodes_mac[6] = { 0x33, 0x33, 0, 0, 0, 1 };
static const struct in6_addr all_nodes = { { { 0xff, 0x02, [15] = 1 } } };

/*
 * A DAD probe from Ethernet (RFC 4862 5.4.3) for an IB host's address:
 * defended in the host's name, as it would itself, with an advertisement
 * to all nodes (no override: a proxy's).  Probes for addresses not known
 * here go on to IB, where the holder defends (ib_nd_from_ib()).
 */
static void eth_dad_defend(struct gw_bridge *b, const struct inet_addr *tgt)
{
	struct ipoib_addr hw;
	struct ibmac *m;
	uint8_t out[ETH_ND_LEN];
	size_t n;

	if (on_ethernet(b, tgt) || b->ops.ib_neigh(b->arg, tgt, &hw) < 0)
		return;
	m = mac_of(b, &hw, tgt);
	if (!m)
		return;
	n = eth_nd_build_na(&tgt->v6, &all_nodes, &tgt->v6, 0, m->mac, out,
			    sizeof(out));
	b->st.nd_answered++;
	eth_out(b, all_nodes_mac, m->mac, ETH_P_IPV6_, out, n);
}

/* An advertisement from Ethernet to a group (a LAN host defending its
 * address against a DAD probe, or announcing it) goes to IB without the
 * 6-byte option; the link gives it the gateway's address. */
static void eth_na_to_ib(struct gw_bridge *b, const struct eth_nd *nd)
{
	uint8_t out[INET_IPV6_HDR_LEN + INET_ND_NS_NA_MSG_LEN];
	size_t n;

	n = inet_nd_build_na(&nd->nd.ip.src, &nd->nd.ip.dst, &nd->nd.target,
			     nd->nd.flags & ~INET_NA_FLAG_OVERRIDE, NULL, 3,
			     out, sizeof(out));
	if (!n)
		return;
	b->st.to_ib_packets++;
	b->st.to_ib_bytes += n;
	b->ops.ib_xmit(b->arg, out, n, NULL, 0);
}

/* 1 when the ND message was the bridge's to take. */
static int eth_nd(struct gw_bridge *b, const uint8_t *smac, const uint8_t *p,
		  size_t len)
{
	struct eth_nd nd;
	struct inet_addr src, tgt;
	struct ipoib_addr hw;
	struct ibmac *m;
	uint8_t out[ETH_ND_LEN], dmac[6];
	enum inet_err e;
	size_t n;

	e = eth_nd_decode(p, len, &nd);
	if (e == INET_NOT_ND)
		return 0;
	if (e != INET_OK) {
		drop(b, GW_DROP_ETH_MALFORMED);
		return 1;
	}
	if (nd.nd.type != INET_ND_NS && nd.nd.type != INET_ND_NA)
		return 0;	/* RS/RA/Redirect: passed on as before */
	inet_addr_v6(&src, &nd.nd.ip.src);
	inet_addr_v6(&tgt, &nd.nd.target);
	if (nd.nd.type == INET_ND_NA) {
		if (nd.has_tlla)
			learn(b, &tgt, nd.tlla);
		if (nd.nd.ip.dst.s6_addr[0] == 0xff)
			eth_na_to_ib(b, &nd);
		return 1;
	}
	if (IN6_IS_ADDR_UNSPECIFIED(&nd.nd.ip.src)) {
		eth_dad_defend(b, &tgt);
		return 0;	/* and on to IB's solicited-node group */
	}
	if (nd.has_slla)
		learn(b, &src, nd.slla);
	if (IN6_ARE_ADDR_EQUAL(&nd.nd.target, &b->ll)) {
		/* our own link-local, the source of the solicitations we
		 * send: hosts that answered one confirm it (RFC 4861 7.3.1,
		 * NUD) before they forget us */
		n = eth_nd_build_na(&b->ll, &nd.nd.ip.src, &b->ll,
				    INET_NA_FLAG_SOLICITED |
				    INET_NA_FLAG_OVERRIDE, b->cfg.mac, out,
				    sizeof(out));
		memcpy(dmac, nd.has_slla ? nd.slla : smac, 6);
		b->st.nd_answered++;
		eth_out(b, dmac, b->cfg.mac, ETH_P_IPV6_, out, n);
		return 1;
	}
	if (on_ethernet(b, &tgt))
		return 1;
	if (b->ops.ib_neigh(b->arg, &tgt, &hw) < 0) {
		b->ops.ib_resolve(b->arg, &tgt);
		return 1;
	}
	m = mac_of(b, &hw, &tgt);
	if (!m)
		return 1;
	n = eth_nd_build_na(&nd.nd.target, &nd.nd.ip.src, &nd.nd.target,
			    INET_NA_FLAG_SOLICITED, m->mac, out,
			    sizeof(out));	/* S, not O: a proxy */
	memcpy(dmac, nd.has_slla ? nd.slla : smac, 6);
	b->st.nd_answered++;
	eth_out(b, dmac, m->mac, ETH_P_IPV6_, out, n);
	return 1;
}

void gw_bridge_eth_rx(struct gw_bridge *b, const uint8_t *f, size_t flen)
{
	struct eth_hdr h;
	struct ibmac *m = NULL;
	struct inet_addr dst, src, nh;
	struct ipoib_addr shw;
	const uint8_t *p;
	size_t len, olen;
	int bcast = 0;

	b->st.eth_rx_frames++;
	b->st.eth_rx_bytes += flen;
	if (eth_parse(f, flen, &h) != ETH_OK) {
		drop(b, GW_DROP_ETH_MALFORMED);
		return;
	}
	if (h.tagged != !!b->cfg.vlan || (h.tagged && h.vid != b->cfg.vlan)) {
		drop(b, GW_DROP_ETH_VLAN);
		return;
	}
	if (eth_is_multicast(h.src)) {
		drop(b, GW_DROP_ETH_MALFORMED);
		return;
	}
	if (mac_find(b, h.src) || !memcmp(h.src, b->cfg.mac, 6)) {
		drop(b, GW_DROP_ETH_LOOP);
		return;
	}
	p = f + h.hdr_len;
	len = flen - h.hdr_len;
	if (h.type == ETH_P_ARP_) {
		eth_arp(b, &h, p, len);
		return;
	}
	memset(&dst, 0, sizeof(dst));
	memset(&src, 0, sizeof(src));
	if (h.type == ETH_P_IP_) {
		struct inet_ipv4_info ip;

		if (inet_ipv4_check(p, len, &ip) != INET_OK) {
			drop(b, GW_DROP_ETH_MALFORMED);
			return;
		}
		len = ip.tot_len;	/* Ethernet pads short frames */
		inet_addr_v4(&dst, &ip.dst);
		inet_addr_v4(&src, &ip.src);
		bcast = ip.dst.s_addr == INADDR_BROADCAST ||
			(!memcmp(h.dst, "\xff\xff\xff\xff\xff\xff", 6) &&
			 (ntohl(ip.dst.s_addr) >> 28) != 0xe);
	} else if (h.type == ETH_P_IPV6_) {
		struct inet_ipv6_info ip;

		if (inet_ipv6_check(p, len, &ip) != INET_OK) {
			drop(b, GW_DROP_ETH_MALFORMED);
			return;
		}
		len = 40 + (size_t)ip.payload_len;
		if (eth_nd(b, h.src, p, len))
			return;
		inet_addr_v6(&dst, &ip.dst);
		inet_addr_v6(&src, &ip.src);
	} else {
		drop(b, GW_DROP_ETH_TYPE);
		return;
	}
	/* a sender we have not heard in ARP/ND: learned from its frame
	 * (an address behind a LAN router is then reached through it) */
	if (!on_ethernet(b, &src) &&
	    (src.family == AF_INET ? (src.v4.s_addr != 0 &&
				      (ntohl(src.v4.s_addr) >> 28) != 0xe) :
	     !IN6_IS_ADDR_UNSPECIFIED(&src.v6) &&
	     src.v6.s6_addr[0] != 0xff) &&
	    b->ops.ib_neigh(b->arg, &src, &shw) < 0)
		learn(b, &src, h.src);
	/* to the gateway's own MAC but the IPv4 broadcast address: an
	 * answer to what went out from that MAC for an IB host without an
	 * address (a DHCP server such as Kea answers to the query's source
	 * MAC), for the partition's broadcast group */
	if (bcast && dst.family == AF_INET &&
	    !memcmp(h.dst, b->cfg.mac, 6)) {
		m = NULL;
	} else if (!eth_is_multicast(h.dst)) {
		m = mac_find(b, h.dst);
		if (!m)
			m = mac_recover(b, h.dst, &dst);
		if (!m) {
			drop(b, GW_DROP_ETH_NOT_OURS);
			return;
		}
		m->used = b->now;
		nh = dst;
		if (dst.family == AF_INET && m->ip4.family)
			nh = m->ip4;
		else if (dst.family == AF_INET6 && m->ip6.family)
			nh = m->ip6;
	}
	p = clamp(b, p, len);
	if (len > ib_mtu(b)) {
		struct frag_ctx c = { .b = b, .to_ib = 1, .nh = m ? &nh : NULL,
				      .bcast = bcast };
		uint8_t err[1280];

		if (too_big(b, p, len, ib_mtu(b), &c, err, sizeof(err),
			    &olen) == 0)
			/* from the destination's MAC, or ours for a group's */
			eth_out(b, h.src,
				eth_is_multicast(h.dst) ? b->cfg.mac : h.dst,
				h.type, err, olen);
		return;
	}
	b->st.to_ib_packets++;
	b->st.to_ib_bytes += len;
	b->ops.ib_xmit(b->arg, p, len, m ? &nh : NULL, bcast);
}

/* ---- from IB ------------------------------------------------------------------ */

/*
 * Neighbour discovery the link hands over (ipoib_neigh_rx_nd): DAD probes
 * from :: (no sender to look up: they go out from the gateway's MAC) and
 * advertisements to groups (a host defending its address), whose 20-byte
 * option becomes the MAC the host has on Ethernet.  1 when taken.
 */
static int nd_from_ib(struct gw_bridge *b, const uint8_t *pkt, size_t len,
		      const uint8_t *dmac)
{
	struct ipoib_nd nd;
	struct inet_addr tgt;
	struct ibmac *m;
	uint8_t out[ETH_ND_LEN];
	size_t n;

	if (len < INET_IPV6_HDR_LEN + INET_ND_NS_NA_MSG_LEN ||
	    pkt[6] != INET_PROTO_ICMPV6 ||
	    (pkt[40] != INET_ND_NS && pkt[40] != INET_ND_NA) ||
	    ipoib_nd_decode(pkt, len, &nd) != INET_OK)
		return 0;
	if (nd.type == INET_ND_NS) {
		if (!IN6_IS_ADDR_UNSPECIFIED(&nd.ip.src))
			return 0;
		b->st.from_ib_packets++;
		b->st.from_ib_bytes += len;
		eth_out(b, dmac, b->cfg.mac, ETH_P_IPV6_, pkt, len);
		return 1;
	}
	if (nd.ip.dst.s6_addr[0] != 0xff || !nd.has_tlla)
		return 0;
	inet_addr_v6(&tgt, &nd.target);
	m = mac_of(b, &nd.tlla, &tgt);
	if (!m)
		return 1;
	n = eth_nd_build_na(&nd.ip.src, &nd.ip.dst, &nd.target, nd.flags,
			    m->mac, out, sizeof(out));
	b->st.from_ib_packets++;
	b->st.from_ib_bytes += len;
	eth_out(b, dmac, m->mac, ETH_P_IPV6_, out, n);
	return 1;
}

void gw_bridge_ib_rx(struct gw_bridge *b, const uint8_t *pkt, size_t len,
		     int group)
{
	static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	struct inet_addr src, dst;
	struct ipoib_addr hw;
	struct ibmac *m;
	uint8_t dmac[6];
	uint16_t type;
	int multi = 0;
	size_t olen;

	if (len >= 20 && pkt[0] >> 4 == 4) {
		struct inet_ipv4_info ip;

		if (inet_ipv4_check(pkt, len, &ip) != INET_OK) {
			drop(b, GW_DROP_IB_MALFORMED);
			return;
		}
		len = ip.tot_len;
		inet_addr_v4(&src, &ip.src);
		inet_addr_v4(&dst, &ip.dst);
		type = ETH_P_IP_;
		if (ip.dst.s_addr == INADDR_BROADCAST) {
			memcpy(dmac, bcast, 6);
			multi = 1;
		} else if ((ntohl(ip.dst.s_addr) >> 28) == 0xe) {
			eth_mcast_mac_v4(&ip.dst, dmac);
			multi = 1;
		} else if (group) {
			/* a directed broadcast (10.0.0.255 of 10.0.0.0/24):
			 * IPoIB sends it to the broadcast group, a bridge
			 * floods it; the gateway knows no prefixes here */
			memcpy(dmac, bcast, 6);
			multi = 1;
		}
	} else if (len >= 40 && pkt[0] >> 4 == 6) {
		struct inet_ipv6_info ip;

		if (inet_ipv6_check(pkt, len, &ip) != INET_OK) {
			drop(b, GW_DROP_IB_MALFORMED);
			return;
		}
		len = 40 + (size_t)ip.payload_len;
		inet_addr_v6(&src, &ip.src);
		inet_addr_v6(&dst, &ip.dst);
		type = ETH_P_IPV6_;
		if (ip.dst.s6_addr[0] == 0xff) {
			eth_mcast_mac_v6(&ip.dst, dmac);
			multi = 1;
			if (nd_from_ib(b, pkt, len, dmac))
				return;
		}
	} else {
		drop(b, GW_DROP_IB_MALFORMED);
		return;
	}
	if (type == ETH_P_IP_ && src.v4.s_addr == INADDR_ANY) {
		/*
		 * From 0.0.0.0: an IPoIB host without an address yet, that
		 * is a DHCP client's DISCOVER or REQUEST (RFC 4390).  No
		 * IPoIB address to make a MAC from (none to resolve either):
		 * a broadcast goes out from the gateway's own MAC, as an
		 * unspecified-source NS does, and the server answers by
		 * broadcast (RFC 4390's client sets the flag), which comes
		 * back to the partition's broadcast group.
		 */
		if (!multi) {
			drop(b, GW_DROP_IB_SRC_UNKNOWN);
			return;
		}
		if (len > b->cfg.eth_mtu) {
			drop(b, GW_DROP_TOO_BIG);
			return;
		}
		b->st.from_ib_packets++;
		b->st.from_ib_bytes += len;
		eth_out(b, dmac, b->cfg.mac, type, pkt, len);
		return;
	}
	b->st.from_ib_packets++;
	b->st.from_ib_bytes += len;
	/* the sender's MAC, from its IPoIB address */
	if (b->ops.ib_neigh(b->arg, &src, &hw) < 0) {
		b->ops.ib_resolve(b->arg, &src);
		drop(b, GW_DROP_IB_SRC_UNKNOWN);
		return;
	}
	m = mac_of(b, &hw, &src);
	if (!m)
		return;
	pkt = clamp(b, pkt, len);
	if (len > b->cfg.eth_mtu) {
		struct frag_ctx c = { .b = b, .to_ib = 0, .src_mac = m->mac };
		uint8_t err[1280];
		struct eneigh *n = multi ? NULL : neigh_find(b, &dst);

		if (!multi && !(n && n->have_mac)) {
			/* fragments need the neighbour: ask for it, the
			 * sender's retransmission will find it */
			ask(b, &dst);
			drop(b, GW_DROP_TOO_BIG);
			return;
		}
		c.dst_mac = multi ? dmac : n->mac;
		if (too_big(b, pkt, len, b->cfg.eth_mtu, &c, err, sizeof(err),
			    &olen) == 0) {
			b->st.to_ib_packets++;
			b->st.to_ib_bytes += olen;
			b->ops.ib_xmit(b->arg, err, olen, &src, 0);
		}
		return;
	}
	if (multi) {
		eth_out(b, dmac, m->mac, type, pkt, len);
		return;
	}
	to_neigh(b, &dst, m->mac, pkt, len);
}

int gw_bridge_proxy(struct gw_bridge *b, const struct inet_addr *target)
{
	if (on_ethernet(b, target))
		return 1;
	ask(b, target);
	return 0;
}

/* ---- timers, life cycle ---------------------------------------------------------- */

void gw_bridge_tick(struct gw_bridge *b, time_t now)
{
	struct eneigh *n, *next;
	struct ibmac **mp, *m;
	unsigned int i;

	b->now = now;
	for (i = 0; i < NBUCKETS; i++) {
		for (n = b->nb[i]; n; n = next) {
			next = n->next;
			if (n->have_mac) {
				if (now - n->confirmed >
				    (time_t)b->cfg.neigh_ttl_s)
					neigh_del(b, n);
				continue;
			}
			if (now < n->next_probe)
				continue;
			if (n->probes < PROBES) {
				probe(b, n);
				continue;
			}
			if (n->qn) {
				b->st.drop[GW_DROP_NEIGH_FAILED] += n->qn;
				queue_free(n);
			}
			/* held as failed a little, then forgotten */
			if (now >= n->next_probe + FAILED_HOLD)
				neigh_del(b, n);
		}
		for (mp = &b->mb[i]; (m = *mp);) {
			if (now - m->used > 2 * (time_t)b->cfg.neigh_ttl_s) {
				*mp = m->next;
				free(m);
				b->nmac--;
				continue;
			}
			mp = &m->next;
		}
	}
}

struct gw_bridge *gw_bridge_new(const struct gw_bridge_cfg *cfg,
				const struct gw_bridge_ops *ops, void *arg)
{
	struct gw_bridge *b = calloc(1, sizeof(*b));

	if (!b)
		return NULL;
	b->cfg = *cfg;
	if (!b->cfg.eth_mtu)
		b->cfg.eth_mtu = 1500;
	if (!b->cfg.neigh_max)
		b->cfg.neigh_max = 4096;
	if (!b->cfg.neigh_ttl_s)
		b->cfg.neigh_ttl_s = 300;
	b->ops = *ops;
	b->arg = arg;
	b->now = time(NULL);
	/* fe80:: + modified EUI-64 of our MAC (RFC 4291 appendix A) */
	b->ll.s6_addr[0] = 0xfe;
	b->ll.s6_addr[1] = 0x80;
	b->ll.s6_addr[8] = cfg->mac[0] ^ 0x02;
	b->ll.s6_addr[9] = cfg->mac[1];
	b->ll.s6_addr[10] = cfg->mac[2];
	b->ll.s6_addr[11] = 0xff;
	b->ll.s6_addr[12] = 0xfe;
	b->ll.s6_addr[13] = cfg->mac[3];
	b->ll.s6_addr[14] = cfg->mac[4];
	b->ll.s6_addr[15] = cfg->mac[5];
	return b;
}

void gw_bridge_free(struct gw_bridge *b)
{
	struct eneigh *n;
	struct ibmac *m;
	unsigned int i;

	if (!b)
		return;
	for (i = 0; i < NBUCKETS; i++) {
		while ((n = b->nb[i]))
			neigh_del(b, n);
		while ((m = b->mb[i])) {
			b->mb[i] = m->next;
			free(m);
		}
	}
	free(b);
}

const struct gw_bridge_stats *gw_bridge_stats(const struct gw_bridge *b)
{
	return &b->st;
}

unsigned int gw_bridge_lan_hosts(const struct gw_bridge *b,
				 struct inet_addr *out, unsigned int max)
{
	const struct eneigh *n;
	unsigned int i, k = 0;

	for (i = 0; i < NBUCKETS; i++)
		for (n = b->nb[i]; n && k < max; n = n->next)
			if (n->have_mac)
				out[k++] = n->ip;
	return k;
}

void gw_bridge_seek(struct gw_bridge *b, const struct inet_addr *ip)
{
	if (ip->family == AF_INET ? !ip->v4.s_addr :
	    ip->family != AF_INET6 || IN6_IS_ADDR_UNSPECIFIED(&ip->v6) ||
	    IN6_IS_ADDR_MULTICAST(&ip->v6))
		return;
	ask(b, ip);
}

unsigned int gw_bridge_neigh_count(const struct gw_bridge *b)
{
	return b->nneigh;
}

unsigned int gw_bridge_mac_count(const struct gw_bridge *b)
{
	return b->nmac;
}

static void mac_str(const uint8_t *m, char *s)
{
	snprintf(s, 18, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2],
		 m[3], m[4], m[5]);
}

size_t gw_bridge_report(const struct gw_bridge *b, char *out, size_t cap)
{
	char ip[INET6_ADDRSTRLEN], mac[18], hw[IPOIB_ADDR_STRLEN];
	size_t o = 0;
	unsigned int i;
	int n;

	if (!cap)
		return 0;
	out[0] = '\0';
	for (i = 0; i < NBUCKETS && o < cap; i++) {
		const struct eneigh *e;
		const struct ibmac *m;

		for (e = b->nb[i]; e && o < cap; e = e->next) {
			inet_ntop(e->ip.family, e->ip.raw, ip, sizeof(ip));
			if (e->have_mac)
				mac_str(e->mac, mac);
			else
				strcpy(mac, "-");
			n = snprintf(out + o, cap - o, "eth %s %s %s\n", ip, mac,
				     e->have_mac ? "REACHABLE" :
				     e->probes >= PROBES ? "FAILED" :
				     "INCOMPLETE");
			o += n > 0 ? (size_t)n : 0;
		}
		for (m = b->mb[i]; m && o < cap; m = m->next) {
			mac_str(m->mac, mac);
			ipoib_addr_ntop(&m->hw, hw, sizeof(hw));
			n = snprintf(out + o, cap - o, "ib %s %s\n", mac, hw);
			o += n > 0 ? (size_t)n : 0;
		}
	}
	return o < cap ? o : cap - 1;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * An IPoIB datagram-mode link (see ipoib_link.h).  What it does follows the
 * Linux driver (drivers/infiniband/ulp/ipoib) and the kernel's neighbour
 * code as far as a user-space host needs:
 *  - the broadcast group is joined first (FullMember); its record gives the
 *    Q_Key, MTU (link MTU = group MTU - 4), SL and rate; carrier follows it;
 *  - other groups are joined with the broadcast group's parameters so that
 *    they can be created: FullMember for groups the host listens to (all-
 *    hosts, all-nodes, our solicited-node groups, what IGMP/MLD reports from
 *    the host name), SendOnlyFullMember for groups we only send to, with up
 *    to 64 packets waiting and the retry backoff doubling to 16 s;
 *  - unicast goes through a neighbour: ARP (IPv4) or NS (IPv6) finds the
 *    20-byte address, a PathRecord the DLID/SL, then an address handle; at
 *    most 3 packets wait per unresolved neighbour (IPOIB_MAX_PATH_REC_QUEUE);
 *  - our addresses are announced as the carrier comes up (a gratuitous ARP;
 *    for IPv6 an unsolicited NA with Override, as Linux with ndisc_notify,
 *    never for a tentative address), so that a restart's new QPN is seen;
 *  - our own multicast coming back is dropped, as the driver does.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>

#include "conf/errbuf.h"
#include "fabric/fabric.h"
#include "fabric/sa_client.h"
#include "inet/icmp.h"
#include "inet/ip.h"
#include "inet/nd.h"
#include "ulp/ipoib/ipoib_priv.h"

static const char *const drop_names[IPOIB_DROP_MAX] = {
	[IPOIB_DROP_NO_CARRIER] = "no_carrier",
	[IPOIB_DROP_BAD_PACKET] = "bad_packet",
	[IPOIB_DROP_TOO_BIG] = "too_big",
	[IPOIB_DROP_NO_ROUTE] = "no_route",
	[IPOIB_DROP_NEIGH_QUEUE] = "neigh_queue_full",
	[IPOIB_DROP_NEIGH_FAILED] = "neigh_failed",
	[IPOIB_DROP_NEIGH_TABLE_FULL] = "neigh_table_full",
	[IPOIB_DROP_PATH_FAILED] = "path_failed",
	[IPOIB_DROP_MCAST_QUEUE] = "mcast_queue_full",
	[IPOIB_DROP_MCAST_FAILED] = "mcast_join_failed",
	[IPOIB_DROP_SEND] = "send_failed",
	[IPOIB_DROP_RX_MALFORMED] = "rx_malformed",
	[IPOIB_DROP_RX_OWN] = "rx_own_multicast",
	[IPOIB_DROP_CM_QUEUE] = "cm_queue_full",
	[IPOIB_DROP_CM_FAILED] = "cm_failed",
};

const char *ipoib_drop_name(enum ipoib_drop d)
{
	return (unsigned int)d < IPOIB_DROP_MAX ? drop_names[d] : "unknown";
}

static void tx_flush(struct ipoib_link *l)
{
	unsigned int i, done = 0;
	int n;

	while (done < l->ntx) {
		n = l->qp ? fab_qp_send(l->qp, l->txwr + done,
					(int)(l->ntx - done)) : -1;
		if (n <= 0)
			break;
		for (i = done; i < done + (unsigned int)n; i++) {
			l->st.tx_packets++;
			l->st.tx_bytes += l->txwr[i].len;
		}
		done += (unsigned int)n;
	}
	l->st.drop[IPOIB_DROP_SEND] += l->ntx - done;
	l->ntx = 0;
}

/*
 * Send a frame of IPoIB header + payload now, or with the burst it belongs
 * to (tx_hold): the frame is assembled once, in its send slot.  With
 * ethertype 0 the payload already carries its header (a queued frame).
 */
void ipoib_link_send(struct ipoib_link *l, struct fab_ah *ah, uint32_t qpn,
		     uint16_t ethertype, const uint8_t *data, size_t len)
{
	size_t hdr = ethertype ? IPOIB_HDR_LEN : 0;
	struct fab_send_wr *wr;
	uint8_t *buf;

	if (!l->qp || hdr + len > FRAME_MAX) {
		drop(l, IPOIB_DROP_SEND);
		return;
	}
	buf = l->txbuf[l->ntx];
	if (hdr)
		ipoib_hdr_build(ethertype, buf, hdr);
	memcpy(buf + hdr, data, len);
	wr = &l->txwr[l->ntx];
	wr->ah = ah;
	wr->remote_qpn = qpn;
	wr->remote_qkey = l->bcast.qkey;
	wr->buf = buf;
	wr->len = (uint32_t)(hdr + len);
	l->ntx++;
	if (!l->tx_hold || l->ntx == TX_BATCH)
		tx_flush(l);
}

void ipoib_link_tx_hold(struct ipoib_link *l, int hold)
{
	l->tx_hold = hold;
	if (!hold) {
		tx_flush(l);
		ipoib_cm_flush(l);
	}
}

int ipoib_link_tx_stopped(const struct ipoib_link *l)
{
	return l->cm_stopping > 0;
}

const struct inet_addr *ipoib_link_local_addr(struct ipoib_link *l, int family)
{
	unsigned int i;

	for (i = 0; i < l->naddrs; i++)
		if (l->addrs[i].p.addr.family == family)
			return &l->addrs[i].p.addr;
	return NULL;
}

static struct link_addr *addr_find(struct ipoib_link *l,
				   const struct inet_addr *a)
{
	unsigned int i;

	for (i = 0; i < l->naddrs; i++)
		if (inet_addr_equal(&l->addrs[i].p.addr, a))
			return &l->addrs[i];
	return NULL;
}

int ipoib_link_is_local(struct ipoib_link *l, const struct inet_addr *a)
{
	return addr_find(l, a) != NULL;
}

static void addr_announce(struct ipoib_link *l, const struct link_addr *la);

/* A change while the link is up is told to the link's hosts at once with
 * an unsolicited Neighbour Advertisement per IPv6 address (RFC 4861
 * 7.2.6), not only in the next answers to their solicitations: a Linux
 * host marks its neighbour entry from the flag, and drops its routes
 * through a neighbour whose advertisement no longer has it. */
void ipoib_link_set_router(struct ipoib_link *l, int on)
{
	unsigned int i;

	if (l->router == !!on)
		return;
	l->router = !!on;
	if (!l->carrier)
		return;
	for (i = 0; i < l->naddrs; i++)
		if (l->addrs[i].p.addr.family == AF_INET6)
			addr_announce(l, &l->addrs[i]);
}

int ipoib_link_is_tentative(struct ipoib_link *l, const struct inet_addr *a)
{
	struct link_addr *la = addr_find(l, a);

	return la && la->tentative;
}

/* The directed broadcast of one of our IPv4 prefixes. */
static int is_subnet_bcast(struct ipoib_link *l, const struct in_addr *dst)
{
	unsigned int i;

	for (i = 0; i < l->naddrs; i++)
		if (inet_prefix_is_bcast(&l->addrs[i].p, dst))
			return 1;
	return 0;
}

static void to_host(struct ipoib_link *l, const uint8_t *pkt, size_t len)
{
	l->st.rx_packets++;
	l->st.rx_bytes += len;
	if (l->ops.rx)
		l->ops.rx(l->arg, pkt, len);
}

/*
 * A packet above the link MTU: ICMP fragmentation-needed / packet-too-big
 * back to the host.  In Linux the host's own stack sends it; from here it
 * has to come from an address that is not the host's own (the kernel drops
 * ICMP "from itself" arriving on an interface), so it names the original
 * destination as its source, as a hop on the way would.  The kernel takes
 * the MTU from it either way (it only looks at the quoted header).  An
 * IPv6 packet to a group (connected mode's multicast above the datagram
 * MTU) is answered from the link's own IPv6 address instead: the kernel
 * drops any packet from a multicast source (ipv6_rcv, RFC 4291 2.7), and
 * for IPv6 a packet from its own address is taken.
 */
void ipoib_link_too_big(struct ipoib_link *l, const uint8_t *pkt, size_t len,
			unsigned int mtu)
{
	uint8_t out[INET_ICMP6_MAX_LEN];
	size_t olen = 0;
	enum inet_err e;

	drop(l, IPOIB_DROP_TOO_BIG);
	if ((pkt[0] >> 4) == 4) {
		struct in_addr src;

		memcpy(&src, pkt + 16, 4);
		e = inet_icmp4_frag_needed(pkt, len, &src,
					   (uint16_t)mtu, ++l->icmp_id,
					   out, sizeof(out), &olen);
	} else {
		struct in6_addr src;

		memcpy(&src, pkt + 24, 16);
		if (IN6_IS_ADDR_MULTICAST(&src)) {
			const struct inet_addr *me =
				ipoib_link_local_addr(l, AF_INET6);

			if (!me)
				return;
			src = me->v6;
		}
		e = inet_icmp6_pkt_too_big(pkt, len, &src, mtu, out,
					   sizeof(out), &olen);
	}
	if (e == INET_OK) {
		l->st.icmp_too_big++;
		to_host(l, out, olen);
	}
}

/*
 * A Neighbour Advertisement from the host without a target link-layer
 * option (a TUN has no link address, so the kernel's answers to DAD
 * probes carry none; a bridge's from Ethernet are rebuilt without one)
 * gets ours, in buf: the receivers learn where the target is.
 */
static const uint8_t *na_with_tlla(struct ipoib_link *l, const uint8_t *pkt,
				   size_t *len, uint8_t *buf)
{
	struct ipoib_nd nd;
	struct ipoib_addr me;
	size_t n;

	if (*len < INET_IPV6_HDR_LEN + INET_ND_NS_NA_MSG_LEN ||
	    pkt[6] != INET_PROTO_ICMPV6 || pkt[40] != INET_ND_NA ||
	    ipoib_nd_decode(pkt, *len, &nd) != INET_OK || nd.has_tlla)
		return pkt;
	ipoib_link_hwaddr(l, &me);
	n = ipoib_nd_build_na(&nd.ip.src, &nd.ip.dst, &nd.target, nd.flags,
			      &me, buf, IPOIB_ND_NS_NA_LEN);
	if (!n)
		return pkt;
	*len = n;
	return buf;
}

/* Multicast is datagrams: in connected mode their MTU is below the
 * link's, and what exceeds it gets ICMP too big with it. */
static void mcast_out(struct ipoib_link *l, const union fab_gid *mgid,
		      uint16_t et, const uint8_t *pkt, size_t len)
{
	if (len > l->ud_mtu) {
		ipoib_link_too_big(l, pkt, len, l->ud_mtu);
		return;
	}
	ipoib_mcast_send(l, mgid, et, pkt, len);
}

static void xmit(struct ipoib_link *l, const uint8_t *pkt, size_t len,
		 const struct inet_addr *via, int bcast)
{
	uint8_t na[IPOIB_ND_NS_NA_LEN];
	struct inet_addr dst, nh;
	union fab_gid mgid;
	uint16_t et;

	if (!l->carrier) {
		drop(l, IPOIB_DROP_NO_CARRIER);
		return;
	}
	memset(&dst, 0, sizeof(dst));
	if (len >= 20 && (pkt[0] >> 4) == 4) {
		struct inet_ipv4_info ip;

		if (inet_ipv4_check(pkt, len, &ip) != INET_OK) {
			drop(l, IPOIB_DROP_BAD_PACKET);
			return;
		}
		len = ip.tot_len;
		if (len > l->mtu) {
			/* the kernel fragments for our MTU; what still comes
			 * too big had DF, or the MTU just shrank */
			ipoib_link_too_big(l, pkt, len, l->mtu);
			return;
		}
		et = IPOIB_ETH_P_IP;
		dst.family = AF_INET;
		dst.v4 = ip.dst;
		if (ip.proto == INET_PROTO_IGMP &&
		    !(ip.frag & INET_IPV4_OFFSET))
			ipoib_mcast_snoop(l, AF_INET, pkt + ip.hdr_len,
					 len - ip.hdr_len);
		if (bcast) {
			mcast_out(l, &l->bcast_mgid, et, pkt, len);
			return;
		}
		if ((ntohl(ip.dst.s_addr) >> 28) == 0xe) {
			ipoib_mcast_mgid_ipv4(&ip.dst, &l->bcast_mgid, &mgid);
			mcast_out(l, &mgid, et, pkt, len);
			return;
		}
		if (ip.dst.s_addr == INADDR_BROADCAST ||
		    is_subnet_bcast(l, &ip.dst)) {
			mcast_out(l, &l->bcast_mgid, et, pkt, len);
			return;
		}
	} else if (len >= INET_IPV6_HDR_LEN && (pkt[0] >> 4) == 6) {
		struct inet_ipv6_info ip;
		struct inet_ipv6_upper up;

		if (inet_ipv6_check(pkt, len, &ip) != INET_OK) {
			drop(l, IPOIB_DROP_BAD_PACKET);
			return;
		}
		len = INET_IPV6_HDR_LEN + ip.payload_len;
		if (len > l->mtu) {
			ipoib_link_too_big(l, pkt, len, l->mtu);
			return;
		}
		pkt = na_with_tlla(l, pkt, &len, na);
		et = IPOIB_ETH_P_IPV6;
		dst.family = AF_INET6;
		dst.v6 = ip.dst;
		/* MLD comes after hop-by-hop options (router alert); one
		 * behind a fragment or authentication header is not
		 * looked at, as it never was */
		if (inet_ipv6_upper(pkt, len, &up) == INET_OK &&
		    up.proto == INET_PROTO_ICMPV6 && !up.fragment && !up.auth)
			ipoib_mcast_snoop(l, AF_INET6, pkt + up.off,
					  len - up.off);
		if (bcast) {
			mcast_out(l, &l->bcast_mgid, et, pkt, len);
			return;
		}
		if (ip.dst.s6_addr[0] == 0xff) {
			ipoib_mcast_mgid6(l, &ip.dst, &mgid);
			mcast_out(l, &mgid, et, pkt, len);
			return;
		}
	} else {
		drop(l, IPOIB_DROP_BAD_PACKET);
		return;
	}
	/* subnet broadcast is the caller's route business: nexthop gives
	 * back the address; unicast from here */
	nh = dst;
	if (via)
		nh = *via;
	else if (l->ops.nexthop && l->ops.nexthop(l->arg, &dst, &nh) < 0) {
		drop(l, IPOIB_DROP_NO_ROUTE);
		return;
	}
	ipoib_neigh_output(l, &nh, et, pkt, len);
}

void ipoib_link_xmit(struct ipoib_link *l, const uint8_t *pkt, size_t len)
{
	xmit(l, pkt, len, NULL, 0);
}

void ipoib_link_xmit_nh(struct ipoib_link *l, const uint8_t *pkt, size_t len,
			const struct inet_addr *nh)
{
	xmit(l, pkt, len, nh, 0);
}

void ipoib_link_xmit_bcast(struct ipoib_link *l, const uint8_t *pkt,
			   size_t len)
{
	xmit(l, pkt, len, NULL, 1);
}

/* One received frame, IPoIB header first (a UD datagram's after its GRH
 * slot, or an RC SEND of connected mode). */
void ipoib_link_rx_frame(struct ipoib_link *l, const uint8_t *p, size_t len)
{
	uint16_t et;

	if (ipoib_hdr_parse(p, len, &et) != IPOIB_WIRE_OK) {
		drop(l, IPOIB_DROP_RX_MALFORMED);
		return;
	}
	p += IPOIB_HDR_LEN;
	len -= IPOIB_HDR_LEN;
	if (et == IPOIB_ETH_P_ARP) {
		ipoib_neigh_rx_arp(l, p, len);
	} else if (et == IPOIB_ETH_P_IP) {
		struct inet_ipv4_info ip;

		if (inet_ipv4_check(p, len, &ip) != INET_OK) {
			drop(l, IPOIB_DROP_RX_MALFORMED);
			return;
		}
		to_host(l, p, ip.tot_len);
	} else if (et == IPOIB_ETH_P_IPV6) {
		struct inet_ipv6_info ip;

		if (inet_ipv6_check(p, len, &ip) != INET_OK) {
			drop(l, IPOIB_DROP_RX_MALFORMED);
			return;
		}
		len = INET_IPV6_HDR_LEN + ip.payload_len;
		if (!ipoib_neigh_rx_nd(l, p, len))
			to_host(l, p, len);
	} else {
		drop(l, IPOIB_DROP_RX_MALFORMED);
	}
}

static void rx_cb(evutil_socket_t fd, short what, void *arg)
{
	struct ipoib_link *l = arg;
	struct fab_recv rc[RX_BATCH];
	int i, n = 0, budget = 8;

	(void)fd;
	(void)what;
	while (budget-- > 0) {
		for (i = 0; i < RX_BATCH; i++) {
			rc[i].buf = l->rxbuf[i];
			rc[i].buf_len = sizeof(l->rxbuf[i]);
		}
		n = fab_qp_recv(l->qp, rc, RX_BATCH);
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			l->rx_err = errno;	/* for ipoib_link_rx_error */
		if (n <= 0)
			break;
		l->rx_err = 0;
		for (i = 0; i < n; i++) {
			if (rc[i].truncated || rc[i].byte_len < FAB_GRH_LEN) {
				drop(l, IPOIB_DROP_RX_MALFORMED);
				continue;
			}
			/* our own multicast, looped back by the fabric */
			if (rc[i].slid == l->pa.lid &&
			    rc[i].src_qp == fab_qp_num(l->qp)) {
				drop(l, IPOIB_DROP_RX_OWN);
				continue;
			}
			/* the GRH's DGID (bytes 24..39): a group's, as the
			 * kernel's IPoIB marks PACKET_BROADCAST/MULTICAST */
			l->rx_group = rc[i].grh_present &&
				      rc[i].buf[24] == 0xff;
			ipoib_link_rx_frame(l, rc[i].buf + FAB_GRH_LEN,
					    rc[i].byte_len - FAB_GRH_LEN);
			l->rx_group = 0;
		}
		if (n < RX_BATCH)
			break;
	}
	/* budget used up: the provider may hold more than its descriptor
	 * shows (fab_qp_recv), so come back on the next loop pass */
	if (budget < 0 && n == RX_BATCH)
		event_active(l->rx_ev, EV_READ, 0);
	if (l->ops.rx_done)
		l->ops.rx_done(l->arg);
}

static void set_carrier(struct ipoib_link *l, int up)
{
	if (l->carrier == up)
		return;
	l->carrier = up;
	if (l->ops.carrier)
		l->ops.carrier(l->arg, up, l->mtu);
}

/*
 * Tell the link's hosts where one of our addresses is, so that those
 * holding an older link address of ours (another QPN, before a restart)
 * take the new one at once: a gratuitous ARP, or for IPv6 an unsolicited
 * Neighbour Advertisement with Override, once duplicate address detection
 * is done with it (a tentative address is never advertised, RFC 4862 5.4).
 */
static void addr_announce(struct ipoib_link *l, const struct link_addr *la)
{
	if (!la->tentative)
		ipoib_neigh_announce(l, &la->p.addr);
}

static void bcast_joined(void *arg, const struct sa_result *res)
{
	struct mc *m = arg;
	struct ipoib_link *l = m->l;
	struct fab_qp_init qi;
	struct fab_ah_attr aa;
	unsigned int i, n;

	if (res->err == SA_CLIENT_CANCELLED)
		return;
	m->req = 0;
	if (!sa_result_ok(res) || !res->nrec) {
		m->st = MC_IDLE;
		ipoib_mcast_failed(l, m);
		return;
	}
	l->bcast = res->rec.mcm[0];
	l->ud_mtu = (unsigned int)fab_mtu_to_bytes(l->bcast.mtu) -
		    IPOIB_HDR_LEN;
	if (l->cfg.admin_mtu && l->cfg.admin_mtu < l->ud_mtu)
		l->ud_mtu = l->cfg.admin_mtu;
	if (!l->qp) {
		memset(&qi, 0, sizeof(qi));
		qi.type = FAB_QPT_UD;
		qi.qkey = l->bcast.qkey;
		qi.pkey_index = (uint16_t)l->pkey_index;
		l->qp = fab_qp_create(l->dev, &qi, NULL, 0);
		if (!l->qp) {
			ipoib_mcast_failed(l, m);
			return;
		}
		l->rx_ev = event_new(l->base, fab_qp_fd(l->qp),
				     EV_READ | EV_PERSIST, rx_cb, l);
		event_add(l->rx_ev, NULL);
	}
	/* connected mode: listen on the UD QPN's service ID; the link MTU
	 * is then connected mode's, datagrams keep theirs */
	ipoib_cm_start(l);
	l->mtu = l->ud_mtu;
	if (l->cm_on) {
		l->mtu = IPOIB_CM_MTU;
		if (l->cfg.admin_mtu && l->cfg.admin_mtu < l->mtu)
			l->mtu = l->cfg.admin_mtu;
	}
	memset(&aa, 0, sizeof(aa));
	aa.dlid = l->bcast.mlid;
	aa.sl = l->bcast.sl;
	aa.is_global = 1;
	aa.dgid = l->bcast_mgid;
	if (m->ah)
		fab_ah_destroy(m->ah);
	m->ah = fab_ah_create(l->dev, &aa, NULL, 0);
	m->mlid = l->bcast.mlid;
	m->js = l->bcast.join_state;
	if (!m->attached &&
	    fab_attach_mcast(l->qp, &m->mgid, m->mlid, NULL, 0) == 0)
		m->attached = 1;
	m->st = MC_JOINED;
	m->backoff_s = 0;
	l->st.joins++;
	/* the groups we listen to are listed before the host hears of the
	 * carrier: what it sends to them meanwhile (the announcement of an
	 * address it adds) goes with a FullMember join, not a send-only
	 * one; and addresses it adds are announced as they are added
	 * (ipoib_link_add_addr), not twice */
	ipoib_mcast_join_listen(l);
	n = l->naddrs;
	set_carrier(l, 1);
	/* the groups, and anything that waited for the carrier */
	for (m = l->mcs; m; m = m->next)
		if (m->st == MC_IDLE)
			ipoib_mcast_join(l, m);
	for (i = 0; i < n && i < l->naddrs; i++) {
		ipoib_neigh_probe_own(l, &l->addrs[i].p.addr);
		addr_announce(l, &l->addrs[i]);
	}
}

/* Failures of the join are retried after a backoff; -1 (ENOMEM) only
 * when there is no group entry to retry with. */
static int bcast_join(struct ipoib_link *l)
{
	struct sa_mcmember r;
	struct mc *m = ipoib_mcast_find(l, &l->bcast_mgid);

	if (!m) {
		m = calloc(1, sizeof(*m));
		if (!m) {
			errno = ENOMEM;
			return -1;
		}
		m->l = l;
		m->mgid = l->bcast_mgid;
		m->full = 1;
		m->own = 1;
		m->next = l->mcs;
		l->mcs = m;
	}
	if (m->st == MC_JOINING || l->pkey_index < 0)
		return 0;	/* no P_Key: PKEY_CHANGE brings it */
	if (fab_query_port(l->dev, &l->pa, NULL, 0) < 0) {
		ipoib_mcast_failed(l, m);	/* try again after a backoff */
		return 0;
	}
	memset(&r, 0, sizeof(r));
	r.mgid = l->bcast_mgid;
	r.port_gid = l->pa.gid;
	r.join_state = SA_JOIN_FULL;
	m->st = MC_JOINING;
	m->req = sa_mcm_join(l->sa, &r, SA_MCM_JOIN_MASK, bcast_joined, m);
	if (!m->req) {
		m->st = MC_IDLE;
		ipoib_mcast_failed(l, m);
	}
	return 0;
}

static void tick_cb(evutil_socket_t fd, short what, void *arg)
{
	struct ipoib_link *l = arg;
	time_t t = now_s();
	struct mc *m;

	(void)fd;
	(void)what;
	for (m = l->mcs; m; m = m->next) {
		if (m->st != MC_WAIT || t < m->retry_at)
			continue;
		m->st = MC_IDLE;
		if (!memcmp(m->mgid.raw, l->bcast_mgid.raw, 16))
			bcast_join(l);
		else
			ipoib_mcast_join(l, m);
	}
	ipoib_neigh_tick(l, t);
	ipoib_cm_tick(l, t);
}

struct ipoib_link *ipoib_link_new(struct event_base *base,
				  struct fab_dev *dev,
				  const struct ipoib_link_cfg *cfg,
				  const struct ipoib_link_ops *ops, void *arg,
				  char *err, size_t errlen)
{
	struct ipoib_link *l = calloc(1, sizeof(*l));
	struct timeval one = { 1, 0 };
	int e;

	if (!l) {
		errbuf_fail(err, errlen, ENOMEM, "out of memory");
		return NULL;
	}
	l->base = base;
	l->dev = dev;
	l->cfg = *cfg;
	if (!l->cfg.neigh_max)
		l->cfg.neigh_max = 1024;
	if (!l->cfg.neigh_ttl_s)
		l->cfg.neigh_ttl_s = 60;
	if (ops)
		l->ops = *ops;
	l->arg = arg;
	l->pkey = cfg->pkey | 0x8000;
	if (fab_query_port(dev, &l->pa, err, errlen) < 0)
		goto fail;
	if (l->pa.link_layer == FAB_LINK_ETHERNET) {
		/* as the kernel's ib_ipoib, which skips RoCE ports */
		errbuf_fail(err, errlen, EOPNOTSUPP, "IPoIB runs on an "
			    "InfiniBand link layer only: this port is RoCE "
			    "(Ethernet link layer), which has no subnet "
			    "manager or SA for IPoIB's multicast joins and "
			    "path queries");
		goto fail;
	}
	/* without the P_Key the link waits for it, without carrier, as
	 * the kernel's interface does until the SM adds the key */
	l->pkey_index = fab_pkey_find(&l->pa, l->pkey);
	ipoib_bcast_mgid(l->pkey, IPOIB_SCOPE_LINK, &l->bcast_mgid);
	l->sa = sa_client_new(base, dev, NULL, err, errlen);
	if (!l->sa)
		goto fail;
	l->tick_ev = event_new(base, -1, EV_PERSIST, tick_cb, l);
	if (!l->tick_ev) {
		errbuf_fail(err, errlen, ENOMEM, "out of memory");
		goto fail;
	}
	event_add(l->tick_ev, &one);
	return l;
fail:
	e = errno;
	ipoib_link_free(l, 0);
	errno = e;
	return NULL;
}

int ipoib_link_start(struct ipoib_link *l, char *err, size_t errlen)
{
	if (bcast_join(l) < 0)
		return errbuf_fail(err, errlen, errno,
				   "broadcast group: %s", strerror(errno));
	return 0;
}

static int add_addr(struct ipoib_link *l, const struct inet_prefix *p,
		    int tentative, char *err, size_t errlen)
{
	const struct inet_addr *a = &p->addr;
	struct link_addr *la;
	struct in6_addr sn;
	union fab_gid mgid;
	char s[INET_PREFIX_STRLEN];

	if (l->naddrs == sizeof(l->addrs) / sizeof(l->addrs[0]))
		return errbuf_fail(err, errlen, ENOSPC, "address %s: the link "
				   "has %zu already", inet_prefix_str(p, s,
				   sizeof(s)), sizeof(l->addrs) /
				   sizeof(l->addrs[0]));
	la = &l->addrs[l->naddrs++];
	la->p = *p;
	la->tentative = tentative && a->family == AF_INET6;
	if (l->carrier) {
		if (a->family == AF_INET6) {
			inet_solicited_node(&a->v6, &sn);
			ipoib_mcast_mgid6(l, &sn, &mgid);
			ipoib_mcast_own(l, &mgid);
		}
		addr_announce(l, la);
	}
	return 0;
}

int ipoib_link_add_addr(struct ipoib_link *l, const struct inet_prefix *p,
			char *err, size_t errlen)
{
	return add_addr(l, p, 0, err, errlen);
}

int ipoib_link_add_addr_tentative(struct ipoib_link *l,
				  const struct inet_prefix *p, char *err,
				  size_t errlen)
{
	return add_addr(l, p, 1, err, errlen);
}

int ipoib_link_addr_ready(struct ipoib_link *l, const struct inet_addr *a)
{
	struct link_addr *la = addr_find(l, a);

	if (!la) {
		errno = ENOENT;
		return -1;
	}
	if (!la->tentative)
		return 0;
	la->tentative = 0;
	if (l->carrier)
		addr_announce(l, la);
	return 0;
}

int ipoib_link_del_addr(struct ipoib_link *l, const struct inet_addr *a)
{
	unsigned int i;

	for (i = 0; i < l->naddrs; i++) {
		if (!inet_addr_equal(&l->addrs[i].p.addr, a))
			continue;
		memmove(&l->addrs[i], &l->addrs[i + 1],
			(l->naddrs - i - 1) * sizeof(l->addrs[0]));
		l->naddrs--;
		return 0;	/* its solicited-node group stays joined */
	}
	errno = ENOENT;
	return -1;
}

static void restart(struct ipoib_link *l, int keep_carrier)
{
	struct mc *m;

	l->st.rejoins++;
	ipoib_neigh_flush_paths(l);
	for (m = l->mcs; m; m = m->next) {
		if (m->req)
			sa_cancel(l->sa, m->req);
		m->req = 0;
		m->st = MC_IDLE;
		m->backoff_s = 0;
	}
	if (!keep_carrier)
		set_carrier(l, 0);
	sa_client_refresh(l->sa);
	bcast_join(l);
}

/*
 * The P_Key left the port's table: carrier off, and the link forgets what
 * it had in the partition (group attachments and joins, neighbours,
 * paths, the queue pair, which held the key's index); the groups stay
 * listed to be joined again when the key comes back.  The SM has already
 * taken the port out of the partition's groups.
 */
static void pkey_lost(struct ipoib_link *l)
{
	struct mc *m;

	set_carrier(l, 0);
	ipoib_neigh_free_all(l);
	for (m = l->mcs; m; m = m->next) {
		if (m->req)
			sa_cancel(l->sa, m->req);
		m->req = 0;
		if (m->attached && l->qp)
			fab_detach_mcast(l->qp, &m->mgid, m->mlid, NULL, 0);
		m->attached = 0;
		if (m->ah)
			fab_ah_destroy(m->ah);
		m->ah = NULL;
		m->st = MC_IDLE;
		m->backoff_s = 0;
		l->st.drop[IPOIB_DROP_MCAST_FAILED] += fq_drain(&m->q);
	}
	ipoib_cm_stop(l);
	if (l->rx_ev) {
		event_free(l->rx_ev);
		l->rx_ev = NULL;
	}
	if (l->qp) {
		fab_qp_destroy(l->qp);
		l->qp = NULL;
	}
	l->ntx = 0;
	l->pkey_index = -1;
}

/* PKEY_CHANGE: read the port's table again; the key appearing starts the
 * broadcast join (carrier follows it), disappearing drops the carrier, a
 * key that moved to another index is the two in turn. */
static void pkey_check(struct ipoib_link *l)
{
	int idx;

	if (fab_query_port(l->dev, &l->pa, NULL, 0) < 0)
		return;
	idx = fab_pkey_find(&l->pa, l->pkey);
	if (idx == l->pkey_index)
		return;
	if (l->pkey_index >= 0)
		pkey_lost(l);
	if (idx < 0)
		return;
	l->pkey_index = idx;
	l->st.rejoins++;
	sa_client_refresh(l->sa);
	bcast_join(l);
}

void ipoib_link_event(struct ipoib_link *l, enum fab_event_type type)
{
	switch (type) {
	case FAB_EV_PKEY_CHANGE:
		pkey_check(l);
		break;
	case FAB_EV_CLIENT_REREGISTER:
	case FAB_EV_GID_CHANGE:
		/* the SM forgot us: rejoin everything, re-resolve paths;
		 * the queue pair and its attachments stay */
		restart(l, 1);
		break;
	case FAB_EV_PORT_ERR:
		set_carrier(l, 0);
		ipoib_neigh_flush_paths(l);
		break;
	case FAB_EV_PORT_ACTIVE:
	case FAB_EV_LID_CHANGE:
	case FAB_EV_SM_CHANGE:
		restart(l, 0);
		break;
	default:
		break;
	}
}

void ipoib_link_free(struct ipoib_link *l, unsigned int timeout_ms)
{
	struct mc *m;

	if (!l)
		return;
	/* closing: while the leaves are waited for below, the event loop
	 * runs; nothing may make new groups, neighbours or frames then (a
	 * gateway's tap still delivers) */
	l->carrier = 0;
	if (l->rx_ev)
		event_del(l->rx_ev);
	if (l->tick_ev)
		event_del(l->tick_ev);
	while ((m = l->mcs)) {
		l->mcs = m->next;
		ipoib_mcast_free(l, m, l->sa != NULL);
	}
	/* let the leaves go out and be answered */
	if (l->sa && timeout_ms) {
		struct timeval tv = { timeout_ms / 1000,
				      (long)(timeout_ms % 1000) * 1000 };
		unsigned int spins = 0;

		event_base_loopexit(l->base, &tv);
		while (sa_pending(l->sa) && spins++ < 1000 &&
		       event_base_loop(l->base, EVLOOP_ONCE) == 0 &&
		       !event_base_got_exit(l->base))
			;
	}
	ipoib_neigh_free_all(l);
	ipoib_cm_stop(l);
	if (l->sa)
		sa_client_free(l->sa);
	if (l->rx_ev)
		event_free(l->rx_ev);
	if (l->tick_ev)
		event_free(l->tick_ev);
	if (l->qp)
		fab_qp_destroy(l->qp);
	free(l);
}

/* The accessors take NULL for a partition without IPoIB (ibgwd on a RoCE
 * port): no carrier, no key, no neighbours, zero counters. */
static const struct ipoib_link_stats no_link_stats;

const struct ipoib_link_stats *ipoib_link_stats(const struct ipoib_link *l)
{
	if (!l)
		return &no_link_stats;
	return &l->st;
}

void ipoib_link_hwaddr(const struct ipoib_link *l, struct ipoib_addr *a)
{
	memset(a, 0, sizeof(*a));
	if (!l)
		return;
	/* the RC flag: we take connections (RFC 4755 section 4) */
	a->flags = l->cm_on ? IPOIB_ADDR_FLAG_RC : 0;
	a->qpn = l->qp ? fab_qp_num(l->qp) : 0;
	a->gid = l->pa.gid;
}

const char *ipoib_link_mode_name(const struct ipoib_link *l)
{
	if (!l)
		return "none";
	if (l->cm_on)
		return "connected";
	return l->cfg.connected && l->cm_err ? "datagram-only" : "datagram";
}

unsigned int ipoib_link_mtu(const struct ipoib_link *l)
{
	if (!l)
		return 0;
	return l->mtu;
}

int ipoib_link_carrier(const struct ipoib_link *l)
{
	if (!l)
		return 0;
	return l->carrier;
}

int ipoib_link_has_pkey(const struct ipoib_link *l)
{
	if (!l)
		return 0;
	return l->pkey_index >= 0;
}

int ipoib_link_rx_group(const struct ipoib_link *l)
{
	return l ? l->rx_group : 0;
}

int ipoib_link_rx_error(const struct ipoib_link *l)
{
	if (!l)
		return 0;
	return l->rx_err;
}

unsigned int ipoib_link_neigh_count(const struct ipoib_link *l)
{
	if (!l)
		return 0;
	return l->nneigh;
}

unsigned int ipoib_link_group_count(const struct ipoib_link *l)
{
	const struct mc *m;
	unsigned int n = 0;

	if (!l)
		return 0;
	for (m = l->mcs; m; m = m->next)
		n++;
	return n;
}

static const char *link_drop_reason(unsigned int i)
{
	return ipoib_drop_name((enum ipoib_drop)i);
}

const struct counter_desc ipoib_link_counters[] = {
	COUNTER("tx_packets", struct ipoib_link_stats, tx_packets,
		"IP packets sent on the IPoIB link."),
	COUNTER("tx_bytes", struct ipoib_link_stats, tx_bytes,
		"Bytes of IP packets sent on the IPoIB link."),
	COUNTER("rx_packets", struct ipoib_link_stats, rx_packets,
		"IP packets received on the IPoIB link."),
	COUNTER("rx_bytes", struct ipoib_link_stats, rx_bytes,
		"Bytes of IP packets received on the IPoIB link."),
	COUNTER("arp_tx", struct ipoib_link_stats, arp_tx,
		"ARP packets sent."),
	COUNTER("arp_rx", struct ipoib_link_stats, arp_rx,
		"ARP packets received."),
	COUNTER("nd_tx", struct ipoib_link_stats, nd_tx,
		"Neighbour Discovery packets sent."),
	COUNTER("nd_rx", struct ipoib_link_stats, nd_rx,
		"Neighbour Discovery packets received."),
	COUNTER("icmp_too_big", struct ipoib_link_stats, icmp_too_big,
		"ICMP Fragmentation Needed / Packet Too Big sent to the host."),
	COUNTER("joins", struct ipoib_link_stats, joins,
		"Multicast joins sent to the SA."),
	COUNTER("join_failures", struct ipoib_link_stats, join_failures,
		"Multicast joins the SA refused or did not answer."),
	COUNTER("path_queries", struct ipoib_link_stats, path_queries,
		"PathRecord queries sent to the SA."),
	COUNTER("path_failures", struct ipoib_link_stats, path_failures,
		"PathRecord queries refused or not answered."),
	COUNTER("rejoins", struct ipoib_link_stats, rejoins,
		"Rejoins of every group after CLIENT_REREGISTER and the like."),
	COUNTER("neigh_unreachable", struct ipoib_link_stats,
		neigh_unreachable,
		"IPv6 neighbours whose link address no answer confirmed after "
		"an advertisement without Override offered another: "
		"resolved again."),
	COUNTER("cm_tx_packets", struct ipoib_link_stats, cm_tx_packets,
		"Frames sent on connected-mode RC connections."),
	COUNTER("cm_tx_bytes", struct ipoib_link_stats, cm_tx_bytes,
		"Bytes of frames sent on connected-mode RC connections."),
	COUNTER("cm_rx_packets", struct ipoib_link_stats, cm_rx_packets,
		"Frames received on connected-mode RC connections."),
	COUNTER("cm_rx_bytes", struct ipoib_link_stats, cm_rx_bytes,
		"Bytes of frames received on connected-mode RC connections."),
	COUNTER("cm_connects", struct ipoib_link_stats, cm_connects,
		"Connected-mode connections this link made to peers."),
	COUNTER("cm_accepts", struct ipoib_link_stats, cm_accepts,
		"Connected-mode connections peers made to this link."),
	COUNTER("cm_failures", struct ipoib_link_stats, cm_failures,
		"Connections of ours refused or broken (then datagrams)."),
	COUNTER("cm_rejected", struct ipoib_link_stats, cm_rejected,
		"Peers' connection requests this link refused."),
	COUNTER("cm_reaped", struct ipoib_link_stats, cm_reaped,
		"Idle connected-mode connections closed."),
	COUNTER("cm_tx_stops", struct ipoib_link_stats, cm_tx_stops,
		"Times a connected-mode connection's full queue stopped the host's input."),
	COUNTER("cm_stalls", struct ipoib_link_stats, cm_stalls,
		"Connections failed for completing nothing while they stopped the host's input."),
	COUNTER_ARRAY("drop", struct ipoib_link_stats, drop,
		      link_drop_reason,
		      "Packets the IPoIB link dropped, by reason."),
	COUNTERS_END
};

size_t ipoib_link_report(const struct ipoib_link *l, const char *what,
			 char *buf, size_t cap)
{
	size_t off = 0;
	int n;
	unsigned int i;
	char ip[INET6_ADDRSTRLEN], hw[IPOIB_ADDR_STRLEN], g[64];
	const struct neigh *ne;
	const struct mc *m;

	if (cap)
		buf[0] = '\0';
	if (!l)
		return 0;
#define APPEND(...) do { \
	n = snprintf(buf + off, off < cap ? cap - off : 0, __VA_ARGS__); \
	if (n > 0) \
		off += (size_t)n; \
	} while (0)
	if (!cap)
		return 0;
	buf[0] = '\0';
	if (!strcmp(what, "neighbors")) {
		for (i = 0; i < NEIGH_HASH; i++) {
			for (ne = l->neigh[i]; ne; ne = ne->next) {
				inet_ntop(ne->ip.family, ne->ip.raw, ip,
					  sizeof(ip));
				if (ne->have_hw)
					ipoib_addr_ntop(&ne->hw, hw,
							sizeof(hw));
				else
					snprintf(hw, sizeof(hw), "-");
				APPEND("%s %s %s queued=%u\n", ip, hw,
				       !ne->have_hw ? "INCOMPLETE" :
				       ne->nud_at ? "PROBE" :
				       ne->path && ne->path->st == PATH_OK ?
				       "REACHABLE" : "RESOLVING", ne->q.n);
			}
		}
	} else if (!strcmp(what, "groups")) {
		for (m = l->mcs; m; m = m->next) {
			fab_gid_to_str(&m->mgid, g, sizeof(g));
			APPEND("%s %s mlid=0x%04x %s\n", g,
			       m->full ? "full" : "sendonly", m->mlid,
			       m->st == MC_JOINED ? "joined" :
			       m->st == MC_JOINING ? "joining" :
			       m->st == MC_WAIT ? "backoff" : "idle");
		}
	} else if (!strcmp(what, "cm")) {
		off = ipoib_cm_report(l, buf, cap);
	} else if (!strcmp(what, "stats")) {
		struct counter_buf cb = { buf, 0, cap };
		struct counter_out o = { counter_buf_vprintf, &cb };

		APPEND("carrier %d\nmtu %u\n", l->carrier, l->mtu);
		if (l->cm_on)
			APPEND("datagram_mtu %u\n", l->ud_mtu);
		cb.len = off < cap ? off : cap - 1;
		counters_text(&o, ipoib_link_counters, &l->st, "", 0);
		off = cb.len;
	}
#undef APPEND
	return off < cap ? off : cap - 1;
}

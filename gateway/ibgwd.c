// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ibgwd: the gateway.  One node on the fabric; per configured partition
 * either
 *  - router mode: an IPoIB interface of this host (ulp/ipoib/ipoib_tun.c) with
 *    the gateway's address, and the kernel routes between it and the LAN
 *    (forwarding is switched on); or
 *  - transparent mode: the partition and an Ethernet segment are one IP
 *    subnet (gateway/gw_bridge.c), the segment being an access tap this
 *    daemon creates (and enslaves to a bridge if asked) or a VLAN on a
 *    trunk interface, tagged and untagged here so that kernels without
 *    8021q do too.
 * Configuration: gateway/gw_conf.c, docs/ibgw.conf.5.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <net/ethernet.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "conf/daemon.h"
#include "conf/log.h"
#include "conf/notify.h"
#include "inet/byteorder.h"
#include "fabric/fabric.h"
#include "gateway/gw_bridge.h"
#include "gateway/gw_conf.h"
#include "gateway/gw_gids.h"
#include "gateway/gw_rds.h"
#include "gateway/gw_sdp.h"
#include "netlink/nl_link.h"
#include "gateway/ibgwd.h"
#include "inet/gso.h"
#include "ulp/ipoib/ipoib_tun.h"

static void usage(FILE *f)
{
	fprintf(f,
"usage: ibgwd [-c CONFIG] [-n] [-f] [-v]\n"
"  -c, --config FILE   configuration (default /etc/ibgw/ibgw.conf)\n"
"  -n, --check         check the configuration and exit: 'configuration OK'\n"
"                      or every error; touches no device, needs no root\n"
"  -f, --foreground    stay in the foreground, log to stderr\n"
"  -v, --verbose       debug logging\n"
"  -h, --help, -V, --version\n"
"Signals: TERM/INT leave the groups and remove the interfaces; USR1 logs\n"
"every partition's counters, neighbours and groups.\n");
}

static void tap_flush(struct part *p);

static unsigned int parts_used(const struct ibgwd *d)
{
	unsigned int i, n = 0;

	for (i = 0; i < d->nparts; i++)
		n += d->parts[i].used;
	return n;
}

/* ---- readiness, status and the watchdog (conf/notify.h) ------------------ */

static void gw_notify(struct ibgwd *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* A message to systemd; a socket that refuses is logged once, not at
 * every watchdog ping. */
static void gw_notify(struct ibgwd *d, const char *fmt, ...)
{
	char msg[512], err[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (notify_send(err, sizeof(err), "%s", msg) < 0) {
		if (!d->notify_warned)
			log_warnx("%s", err);
		d->notify_warned = 1;
	} else {
		d->notify_warned = 0;
	}
}

/* STATUS=: how many partitions have carrier, when that changes. */
static void status_carrier(struct ibgwd *d)
{
	unsigned int i, n = 0;

	if (!d->ready || d->dp_dead)
		return;
	for (i = 0; i < d->nparts; i++)
		if (d->parts[i].used && part_link(&d->parts[i]) &&
		    ipoib_link_carrier(part_link(&d->parts[i])))
			n++;
	if (d->status_sent && n == d->status_carrier &&
	    parts_used(d) == d->status_parts)
		return;
	d->status_carrier = n;
	d->status_parts = parts_used(d);
	d->status_sent = 1;
	gw_notify(d, "STATUS=%u of %u partition(s) with carrier", n,
		  parts_used(d));
}

static void check_ready(struct ibgwd *d)
{
	char err[256];
	unsigned int i;

	if (d->ready) {
		status_carrier(d);
		return;
	}
	/* a partition whose P_Key the port lacks does not hold the
	 * gateway back: it gets its carrier when the SM adds the key */
	for (i = 0; i < d->nparts; i++)
		if (d->parts[i].used && !d->parts[i].up &&
		    part_link(&d->parts[i]) &&
		    ipoib_link_has_pkey(part_link(&d->parts[i])))
			return;
	d->ready = 1;
	log_info("ready: %u partition(s)", parts_used(d));
	gw_notify(d, "READY=1");
	status_carrier(d);
	if (!d->foreground &&
	    daemon_detach("ibgwd", d->verbose, d->base, err, sizeof(err)) < 0)
		fatalx("%s", err);	/* still starting: as ibfabricd does */
}

/*
 * Is a partition's data path alive?  Its descriptors are all watched by
 * the event loop and none has failed for good: the fabric queue pair's
 * receive side (none yet is fine: the broadcast join makes it), the TUN
 * (router mode), the tap (transparent) or the trunk and its interface
 * (a VLAN).  Carrier is not part of it: it is the subnet's to give, and
 * a restart would not bring it.  0 with the reason in why when dead.
 */
static int part_alive(struct part *p, char *why, size_t len)
{
	struct ibgwd *d = p->d;
	struct ipoib_link *l = part_link(p);
	char ifn[IF_NAMESIZE];
	int e;

	if (!l && part_roce(p))
		return 1;	/* the kernel's netdev carries IP */
	if (!l) {
		snprintf(why, len, "no IPoIB link");
		return 0;
	}
	e = ipoib_link_rx_error(l);
	if (e) {
		snprintf(why, len, "queue pair: %s", strerror(e));
		return 0;
	}
	if (p->tun && (e = ipoib_tun_error(p->tun))) {
		snprintf(why, len, "%s: %s", ipoib_tun_ifname(p->tun),
			 strerror(e));
		return 0;
	}
	if (p->tun)
		return 1;
	if (p->pc->tap[0]) {
		if (p->tap_fd < 0 || p->tap_err) {
			snprintf(why, len, "tap %s: %s", p->pc->tap,
				 strerror(p->tap_err ? p->tap_err : EBADF));
			return 0;
		}
		return 1;
	}
	if (d->trunk_fd < 0 || d->trunk_err) {
		snprintf(why, len, "trunk %s: %s", d->conf.trunk,
			 strerror(d->trunk_err ? d->trunk_err : EBADF));
		return 0;
	}
	if (!if_indextoname((unsigned int)d->trunk_ifindex, ifn)) {
		snprintf(why, len, "trunk %s: %s", d->conf.trunk,
			 strerror(errno));
		return 0;
	}
	return 1;
}

/* Every partition's data path alive?  A change is logged and told in
 * STATUS=, once. */
static int health_check(struct ibgwd *d)
{
	char why[256];
	unsigned int i;

	for (i = 0; i < d->nparts; i++)
		if (d->parts[i].used &&
		    !part_alive(&d->parts[i], why, sizeof(why)))
			break;
	if (i == d->nparts) {
		if (d->dp_dead) {
			log_info("every partition's data path is alive again");
			d->dp_dead = 0;
			d->status_sent = 0;
			status_carrier(d);
		}
		return 1;
	}
	if (!d->dp_dead) {
		log_warnx("partition %s: data path stopped (%s)%s",
			  d->parts[i].pc->name, why, d->wd_usec ?
			  ": no more watchdog pings" : "");
		gw_notify(d, "STATUS=partition %s: data path stopped (%s)",
			  d->parts[i].pc->name, why);
		d->dp_dead = 1;
	}
	return 0;
}

/* WatchdogSec=: WATCHDOG=1 from the loop, while the data paths live. */
static void watchdog_cb(evutil_socket_t fd, short what, void *arg)
{
	struct ibgwd *d = arg;

	(void)fd;
	(void)what;
	if (health_check(d))
		gw_notify(d, "WATCHDOG=1");
}

static int watchdog_start(struct ibgwd *d)
{
	uint64_t half;
	struct timeval tv;

	d->wd_usec = notify_watchdog_usec();
	if (!d->wd_usec)
		return 0;
	half = d->wd_usec / 2;
	tv.tv_sec = (time_t)(half / 1000000u);
	tv.tv_usec = (suseconds_t)(half % 1000000u);
	d->wd_ev = event_new(d->base, -1, EV_PERSIST, watchdog_cb, d);
	if (!d->wd_ev || event_add(d->wd_ev, &tv) < 0)
		return -1;
	log_debug("watchdog: WATCHDOG=1 every %llu ms while the data paths "
		  "live", (unsigned long long)(half / 1000u));
	return 0;
}

static void tun_carrier(void *arg, struct ipoib_tun *t, int up,
			unsigned int mtu)
{
	struct part *p = arg;

	log_info("%s: carrier %s, MTU %u", ipoib_tun_ifname(t),
		 up ? "up" : "down", mtu);
	status_carrier(p->d);
}

/* Set-up steps that failed without stopping the interface. */
static void tun_error(void *arg, struct ipoib_tun *t, const char *msg)
{
	(void)arg;
	(void)t;
	log_warnx("%s", msg);
}

static void tun_ready(void *arg, struct ipoib_tun *t)
{
	struct part *p = arg;
	struct ipoib_addr hw;
	char hws[IPOIB_ADDR_STRLEN];

	ipoib_link_hwaddr(ipoib_tun_link(t), &hw);
	ipoib_addr_ntop(&hw, hws, sizeof(hws));
	log_info("partition %s: router, %s up, MTU %u, address %s",
		 p->pc->name, ipoib_tun_ifname(t),
		 ipoib_link_mtu(ipoib_tun_link(t)), hws);
	p->up = 1;
	check_ready(p->d);
}

/* ---- transparent mode: the link's side ------------------------------------- */

static void link_rx(void *arg, const uint8_t *pkt, size_t len)
{
	struct part *p = arg;

	gw_bridge_ib_rx(p->br, pkt, len, ipoib_link_rx_group(p->link));
}

static void link_rx_done(void *arg)
{
	tap_flush(arg);
}

static void link_tx_ready(void *arg)
{
	struct part *p = arg;

	if (!p->tap_stopped)
		return;
	p->tap_stopped = 0;
	if (p->tap_err || !p->tap_ev)
		return;
	event_add(p->tap_ev, NULL);
	event_active(p->tap_ev, EV_READ, 0);
}

static void link_carrier(void *arg, int up, unsigned int mtu)
{
	struct part *p = arg;
	struct ipoib_addr hw;
	char hws[IPOIB_ADDR_STRLEN];

	if (!up) {
		log_info("partition %s: carrier down", p->pc->name);
		status_carrier(p->d);
		return;
	}
	ipoib_link_hwaddr(p->link, &hw);
	ipoib_addr_ntop(&hw, hws, sizeof(hws));
	log_info("partition %s: transparent, carrier up, MTU %u, address %s",
		 p->pc->name, mtu, hws);
	if (!p->up)
		p->up = 1;
	gw_seed_part(p);
	check_ready(p->d);
}

/* every destination is on the link: the bridge names next hops itself */
static int link_nexthop(void *arg, const struct inet_addr *dst,
			struct inet_addr *nh)
{
	(void)arg;
	*nh = *dst;
	return 0;
}

static int link_proxy(void *arg, const struct inet_addr *target)
{
	struct part *p = arg;

	return gw_bridge_proxy(p->br, target);
}

/* ---- transparent mode: the bridge's outputs --------------------------------- */

/* A frame to the tap: the virtio-net header (its offsets count from the
 * frame's start), the Ethernet header, the IP packet. */
static void tap_write(void *arg, const struct gso_vnet_hdr *h,
		      const uint8_t *pkt, size_t len)
{
	struct part *p = arg;
	struct gso_vnet_hdr vh = *h;
	uint8_t v[GSO_VNET_HDR_LEN];
	struct iovec iov[3] = {
		{ .iov_base = v, .iov_len = sizeof(v) },
		{ .iov_base = p->gro_eth, .iov_len = ETH_HDR_LEN },
		{ .iov_base = (void *)pkt, .iov_len = len },
	};

	if (vh.gso_type != GSO_TYPE_NONE || (vh.flags & GSO_F_NEEDS_CSUM)) {
		vh.csum_start += ETH_HDR_LEN;
		vh.hdr_len += ETH_HDR_LEN;
	}
	gso_hdr_put(v, &vh);
	if (writev(p->tap_fd, iov, 3) < 0)
		p->eth_tx_errors++;
}

static void tap_flush(struct part *p)
{
	if (p->gro)
		gso_gro_flush(p->gro, tap_write, p);
}

static void to_gro(struct part *p, const uint8_t *eth, const uint8_t *pkt,
		   size_t len)
{
	if (p->gro->len && memcmp(p->gro_eth, eth, ETH_HDR_LEN))
		tap_flush(p);
	memcpy(p->gro_eth, eth, ETH_HDR_LEN);
	gso_gro_receive(p->gro, pkt, len, tap_write, p);
}

static void br_eth_send(void *arg, const uint8_t *f, size_t len);

/* The bridge's frames in two pieces: IP towards a tap with offloads goes
 * to the coalescer without being put together first. */
static void br_eth_sendv(void *arg, const uint8_t *hdr, size_t hlen,
			 const uint8_t *payload, size_t len)
{
	struct part *p = arg;
	uint16_t type = hlen == ETH_HDR_LEN ?
			(uint16_t)(hdr[12] << 8 | hdr[13]) : 0;

	if (p->tap_fd >= 0 && p->tap_vnet &&
	    (type == ETH_P_IP_ || type == ETH_P_IPV6_)) {
		to_gro(p, hdr, payload, len);
		return;
	}
	if (hlen + len > sizeof(p->d->out))
		return;
	memcpy(p->d->out, hdr, hlen);
	memcpy(p->d->out + hlen, payload, len);
	br_eth_send(p, p->d->out, hlen + len);
}

static void br_eth_send(void *arg, const uint8_t *f, size_t len)
{
	static const struct gso_vnet_hdr none;
	struct part *p = arg;
	uint8_t v[GSO_VNET_HDR_LEN];
	uint16_t type;

	if (p->tap_fd < 0) {
		if (send(p->d->trunk_fd, f, len, MSG_DONTWAIT) < 0)
			p->eth_tx_errors++;
		return;
	}
	if (!p->tap_vnet) {
		if (write(p->tap_fd, f, len) < 0)
			p->eth_tx_errors++;
		return;
	}
	/* untagged IP (the tap's frames): through the coalescer, which
	 * holds TCP trains behind one Ethernet header */
	type = len >= ETH_HDR_LEN ? (uint16_t)(f[12] << 8 | f[13]) : 0;
	if (type == ETH_P_IP_ || type == ETH_P_IPV6_) {
		to_gro(p, f, f + ETH_HDR_LEN, len - ETH_HDR_LEN);
		return;
	}
	tap_flush(p);
	{
		struct iovec iov[2] = {
			{ .iov_base = v, .iov_len = sizeof(v) },
			{ .iov_base = (void *)f, .iov_len = len },
		};

		gso_hdr_put(v, &none);
		if (writev(p->tap_fd, iov, 2) < 0)
			p->eth_tx_errors++;
	}
}

static void br_ib_xmit(void *arg, const uint8_t *pkt, size_t len,
		       const struct inet_addr *nh, int bcast)
{
	struct part *p = arg;

	if (bcast)
		ipoib_link_xmit_bcast(p->link, pkt, len);
	else if (nh)
		ipoib_link_xmit_nh(p->link, pkt, len, nh);
	else
		ipoib_link_xmit(p->link, pkt, len);
}

static int br_ib_neigh(void *arg, const struct inet_addr *ip,
		       struct ipoib_addr *hw)
{
	struct part *p = arg;

	return ipoib_link_neigh_hw(p->link, ip, hw);
}

static void br_ib_resolve(void *arg, const struct inet_addr *ip)
{
	struct part *p = arg;

	ipoib_link_neigh_resolve(p->link, ip);
}

static void br_ib_announce(void *arg, const struct inet_addr *ip)
{
	struct part *p = arg;

	ipoib_link_announce(p->link, ip);
}

static unsigned int br_ib_mtu(void *arg)
{
	struct part *p = arg;

	return ipoib_link_mtu(p->link);
}

/* ---- Ethernet input ------------------------------------------------------------ */

/* A segment cut from a super-frame: the Ethernet header goes back in
 * front of it, over bytes already sent (see gso_segment). */
static void tap_segment(void *arg, const uint8_t *pkt, size_t len)
{
	struct part *p = arg;
	uint8_t *f = (uint8_t *)pkt - ETH_HDR_LEN;

	memcpy(f, p->gro_eth, ETH_HDR_LEN);
	gw_bridge_eth_rx(p->br, f, len + ETH_HDR_LEN);
}

static void tap_cb(evutil_socket_t fd, short what, void *arg)
{
	struct part *p = arg;
	/* A frame lands at the buffer's start: the IP header at 24 behind a
	 * virtio-net header (10) and the Ethernet header (14), at 14 without
	 * one.  Nothing here needs it aligned: the codecs load through
	 * inet/byteorder.h at any alignment.  (An offset of 2 that meant to
	 * align it, and did not, is gone.) */
	uint8_t *buf = p->tapbuf;
	struct gso_vnet_hdr h;
	ssize_t n;
	size_t fl;
	int i;

	(void)what;
	ipoib_link_tx_hold(p->link, 1);
	for (i = 0; i < TAP_BATCH; i++) {
		if (ipoib_link_tx_stopped(p->link)) {
			/* a connected-mode connection's queue is full:
			 * frames wait in the tap's queue, not lost here */
			p->tap_stopped = 1;
			event_del(p->tap_ev);
			break;
		}
		n = read(fd, buf, sizeof(p->tapbuf));
		if (n < 0 && errno != EAGAIN && errno != EINTR) {
			/* the tap was deleted under us (EBADFD): readable,
			 * in error, for good; the watchdog hears of it */
			p->tap_err = errno;
			event_del(p->tap_ev);
			break;
		}
		if (n <= 0)
			break;
		if (!p->tap_vnet) {
			gw_bridge_eth_rx(p->br, buf, (size_t)n);
			continue;
		}
		if (n < GSO_VNET_HDR_LEN + ETH_HDR_LEN) {
			p->tap_offload_bad++;
			continue;
		}
		gso_hdr_get(&h, buf);
		fl = (size_t)n - GSO_VNET_HDR_LEN;
		if (h.gso_type == GSO_TYPE_NONE &&
		    !(h.flags & GSO_F_NEEDS_CSUM)) {
			gw_bridge_eth_rx(p->br, buf + GSO_VNET_HDR_LEN, fl);
			continue;
		}
		/* offsets from the IP header on, for gso_segment */
		if (h.csum_start < ETH_HDR_LEN) {
			p->tap_offload_bad++;
			continue;
		}
		h.csum_start -= ETH_HDR_LEN;
		h.hdr_len = h.hdr_len > ETH_HDR_LEN ?
			    (uint16_t)(h.hdr_len - ETH_HDR_LEN) : 0;
		memcpy(p->gro_eth, buf + GSO_VNET_HDR_LEN, ETH_HDR_LEN);
		if (gso_segment(&h, buf + GSO_VNET_HDR_LEN + ETH_HDR_LEN,
				fl - ETH_HDR_LEN, tap_segment, p) != GSO_OK)
			p->tap_offload_bad++;
	}
	ipoib_link_tx_hold(p->link, 0);
	tap_flush(p);	/* what answering the segment made for it */
}

/*
 * The trunk: a packet socket.  The kernel takes the 802.1Q tag off into
 * the packet's metadata (even without the 8021q module); it is put back
 * so that the bridge of the partition mapped to the VLAN sees a tagged
 * frame.  Frames of unmapped VLANs, and untagged ones, are counted.
 */
static void trunk_cb(evutil_socket_t fd, short what, void *arg)
{
	struct ibgwd *d = arg;
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(struct tpacket_auxdata))];
	} cm;
	struct sockaddr_ll sll;
	struct iovec iov;
	struct msghdr mh;
	struct cmsghdr *c;
	uint8_t *f = d->frame + ETH_VLAN_LEN;
	ssize_t n;
	size_t len;
	unsigned int i, j, vid;
	int tagged;

	(void)what;
	for (i = 0; i < TAP_BATCH; i++) {
		iov.iov_base = f;
		iov.iov_len = sizeof(d->frame) - ETH_VLAN_LEN;
		memset(&mh, 0, sizeof(mh));
		mh.msg_name = &sll;
		mh.msg_namelen = sizeof(sll);
		mh.msg_iov = &iov;
		mh.msg_iovlen = 1;
		mh.msg_control = cm.buf;
		mh.msg_controllen = sizeof(cm.buf);
		n = recvmsg(fd, &mh, MSG_DONTWAIT);
		/* ENETDOWN: the interface went down or away; whether it is
		 * gone the watchdog asks by its index */
		if (n < 0 && errno != EAGAIN && errno != EINTR &&
		    errno != ENETDOWN) {
			d->trunk_err = errno;
			event_del(d->trunk_ev);
		}
		if (n < 0)
			break;
		if (sll.sll_pkttype == PACKET_OUTGOING)
			continue;
		len = (size_t)n;
		tagged = 0;
		vid = 0;
		for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
			struct tpacket_auxdata aux;

			if (c->cmsg_level != SOL_PACKET ||
			    c->cmsg_type != PACKET_AUXDATA)
				continue;
			memcpy(&aux, CMSG_DATA(c), sizeof(aux));
			if ((aux.tp_status & TP_STATUS_VLAN_VALID) &&
			    len >= ETH_HDR_LEN) {
				/* put the tag back after the MACs */
				memmove(d->frame, f, 12);
				be16_put(d->frame + 12, ETH_P_8021Q_);
				be16_put(d->frame + 14, aux.tp_vlan_tci);
				f = d->frame;
				len += ETH_VLAN_LEN;
				tagged = 1;
				vid = aux.tp_vlan_tci & 0x0fff;
			}
		}
		if (!tagged && len >= ETH_HDR_LEN + ETH_VLAN_LEN &&
		    be16_get(f + 12) == ETH_P_8021Q_) {
			tagged = 1;
			vid = be16_get(f + 14) & 0x0fff;
		}
		for (j = 0; tagged && j < d->nparts; j++)
			if (d->parts[j].used && d->parts[j].pc->vlan == vid &&
			    d->parts[j].br)
				break;
		if (!tagged || j == d->nparts) {
			d->trunk_unmapped++;
		} else {
			ipoib_link_tx_hold(d->parts[j].link, 1);
			gw_bridge_eth_rx(d->parts[j].br, f, len);
			ipoib_link_tx_hold(d->parts[j].link, 0);
		}
		f = d->frame + ETH_VLAN_LEN;
	}
}

static int open_trunk(struct ibgwd *d, char *err, size_t errlen)
{
	struct sockaddr_ll sll;
	struct packet_mreq mr;
	unsigned int idx = if_nametoindex(d->conf.trunk);
	int one = 1, fd;

	if (!idx) {
		snprintf(err, errlen, "trunk '%s': %s", d->conf.trunk,
			 strerror(errno));
		return -1;
	}
	fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC,
		    htons(ETH_P_ALL));
	if (fd < 0) {
		snprintf(err, errlen, "trunk '%s': packet socket: %s",
			 d->conf.trunk, strerror(errno));
		return -1;
	}
	memset(&sll, 0, sizeof(sll));
	sll.sll_family = AF_PACKET;
	sll.sll_protocol = htons(ETH_P_ALL);
	sll.sll_ifindex = (int)idx;
	memset(&mr, 0, sizeof(mr));
	mr.mr_ifindex = (int)idx;
	mr.mr_type = PACKET_MR_PROMISC;	/* frames for IB hosts' MACs */
	if (bind(fd, (struct sockaddr *)&sll, sizeof(sll)) < 0 ||
	    setsockopt(fd, SOL_PACKET, PACKET_AUXDATA, &one,
		       sizeof(one)) < 0 ||
	    setsockopt(fd, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mr,
		       sizeof(mr)) < 0) {
		snprintf(err, errlen, "trunk '%s': %s", d->conf.trunk,
			 strerror(errno));
		close(fd);
		return -1;
	}
	d->trunk_fd = fd;
	d->trunk_ifindex = (int)idx;
	return 0;
}

static void drop_caps(int verbs)
{
	char err[256];

	if (gw_drop_caps(verbs, err, sizeof(err)) < 0)
		log_warnx("keeping all capabilities: %s", err);
	else
		log_debug("capabilities: CAP_NET_ADMIN, CAP_NET_BIND_SERVICE%s "
			  "kept (if held), the rest dropped",
			  verbs ? ", CAP_IPC_LOCK, CAP_NET_RAW" : "");
}

/* ---- setting partitions up ------------------------------------------------------ */

/*
 * On a RoCE port (Soft-RoCE, a RoCE NIC) there is no IPoIB: IP on the
 * fabric side is the kernel's own, on the port's netdev, and routing to
 * the LAN is the kernel's.  A partition there runs no link and no
 * interface of ours, only its RDS endpoint (router mode only: a
 * transparent bridge needs IPoIB's link addresses; not SDP: gw_sdp finds
 * IB hosts among IPoIB neighbours).
 */
static int start_roce(struct part *p, char *err, size_t errlen)
{
	char why[NL_ERRLEN];
	int n;

	if (p->pc->mode != GW_MODE_ROUTER || p->pc->sdp || !p->pc->rds) {
		snprintf(err, errlen, "the port is RoCE (no IPoIB): only "
			 "mode = router with rds = on and sdp = off runs on "
			 "it");
		return -1;
	}
	if (p->pc->nrds_gids) {
		if (!p->d->pa.sgid_ifindex) {
			snprintf(err, errlen, "rds_gids: the port's GID has "
				 "no netdev");
			return -1;
		}
		/* before the endpoint: the GIDs are there once it is */
		p->gids = 1;
		n = gw_gids_add(p->d->nl, (int)p->d->pa.sgid_ifindex,
				p->pc->rds_gids, p->pc->nrds_gids, why,
				sizeof(why));
		if (n < 0) {
			snprintf(err, errlen, "rds_gids: %s", why);
			return -1;
		}
		log_info("partition %s: rds_gids: %d LAN address(es) are GIDs "
			 "of the port's netdev (ifindex %u), RoCE v2 for them "
			 "delivered here by rule %u, table %u", p->pc->name, n,
			 p->d->pa.sgid_ifindex, GW_GIDS_PREF, GW_GIDS_TABLE);
	}
	p->up = 1;
	return 0;
}

static int start_router(struct part *p, char *err, size_t errlen)
{
	static const struct ipoib_tun_ops tops = { .ready = tun_ready,
						   .carrier = tun_carrier,
						   .error = tun_error };
	struct ipoib_tun_cfg tc;
	unsigned int i;

	memset(&tc, 0, sizeof(tc));
	tc.ifname = p->pc->ifname;
	tc.link.pkey = p->pc->pkey;
	tc.link.admin_mtu = p->pc->mtu;
	tc.link.neigh_max = p->d->conf.neigh_max;
	tc.link.connected = p->pc->ipoib_connected;
	for (i = 0; i < p->pc->naddrs; i++)
		tc.addrs[tc.naddrs++] = p->pc->addrs[i];
	tc.mss_mtu = p->pc->mss_clamp ? p->pc->eth_mtu : 0;
	p->tun = ipoib_tun_new(p->d->base, p->d->dev, p->d->nl, &tc, &tops,
			       p, err, errlen);
	return p->tun ? 0 : -1;
}

static int open_tap(struct part *p, char *err, size_t errlen)
{
	struct nl_link_info br;

	/* with a virtio-net header: TSO from the segment, and coalesced
	 * TCP trains towards it (as a NIC with offloads) */
	p->tap_fd = nl_tun_open(p->pc->tap, NL_TUN_TAP | NL_TUN_VNET_HDR,
				&p->tap_ifindex, err, errlen);
	if (p->tap_fd < 0)
		return -1;
	p->gro = calloc(1, sizeof(*p->gro));
	if (!p->gro) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	p->tap_vnet = 1;
	if (nl_tun_set_offload(p->tap_fd, 1, err, errlen) < 0)
		log_warnx("%s: %s: frames go one by one", p->pc->tap, err);
	if (nl_link_set_mtu(p->d->nl, p->tap_ifindex, p->pc->eth_mtu, err,
			    errlen) < 0)
		return -1;
	if (p->pc->bridge[0]) {
		if (nl_link_get(p->d->nl, p->pc->bridge, &br, err,
				errlen) < 0 ||
		    nl_link_set_master(p->d->nl, p->tap_ifindex, br.ifindex,
				       err, errlen) < 0)
			return -1;
	}
	if (nl_link_set_up(p->d->nl, p->tap_ifindex, 1, err, errlen) < 0)
		return -1;
	p->tap_ev = event_new(p->d->base, p->tap_fd, EV_READ | EV_PERSIST,
			      tap_cb, p);
	event_add(p->tap_ev, NULL);
	return 0;
}

static int start_transparent(struct part *p, char *err, size_t errlen)
{
	struct ipoib_link_cfg lc = { .pkey = p->pc->pkey,
				     .admin_mtu = p->pc->mtu,
				     .neigh_max = p->d->conf.neigh_max,
				     .report_groups = 1,
				     .connected = p->pc->ipoib_connected };
	struct ipoib_link_ops lops = { .rx = link_rx,
				       .rx_done = link_rx_done,
				       .carrier = link_carrier,
				       .nexthop = link_nexthop,
				       .proxy = link_proxy,
				       .tx_ready = link_tx_ready };
	struct gw_bridge_ops bops = { .eth_send = br_eth_send,
				      .eth_sendv = br_eth_sendv,
				      .ib_xmit = br_ib_xmit,
				      .ib_neigh = br_ib_neigh,
				      .ib_resolve = br_ib_resolve,
				      .ib_announce = br_ib_announce,
				      .ib_mtu = br_ib_mtu };
	struct gw_bridge_cfg bc;
	struct ipoib_addr me;
	struct inet_prefix ll;
	char why[FAB_ERRLEN];

	memset(&bc, 0, sizeof(bc));
	/* the gateway's MAC on the segment: stable across restarts, from
	 * the port GID and the P_Key (not a QPN, which changes) */
	memset(&me, 0, sizeof(me));
	me.qpn = p->pc->pkey | 0x8000;
	me.gid = p->d->pa.gid;
	eth_mac_of_ib(&me, bc.mac);
	bc.vlan = (uint16_t)p->pc->vlan;
	bc.eth_mtu = p->pc->eth_mtu;
	bc.mss_clamp = p->pc->mss_clamp;
	bc.neigh_max = p->d->conf.neigh_max;
	ipoib_link_local(&p->d->pa.gid, &bc.ib_ll);
	p->br = gw_bridge_new(&bc, &bops, p);
	if (!p->br) {
		snprintf(err, errlen, "out of memory");	/* ENOMEM */
		return -1;
	}
	p->link = ipoib_link_new(p->d->base, p->d->dev, &lc, &lops, p, why,
				 sizeof(why));
	if (!p->link) {
		snprintf(err, errlen, "IPoIB link: %s", why);
		return -1;
	}
	/* an IPv6 link-local address, as IPoIB makes it from the port GUID,
	 * so that the neighbour solicitations it sends for the bridge have
	 * a source to answer (an IPv4 one it does without: hosts answer
	 * ARP probes) */
	memset(&ll, 0, sizeof(ll));
	ll.addr.family = AF_INET6;
	ipoib_link_local(&p->d->pa.gid, &ll.addr.v6);
	ll.plen = 64;
	if (ipoib_link_add_addr(p->link, &ll, why, sizeof(why)) < 0) {
		snprintf(err, errlen, "IPoIB link: %s", why);
		return -1;
	}
	if (p->pc->tap[0] && open_tap(p, err, errlen) < 0)
		return -1;
	return 0;
}

/* ---- events, reports ------------------------------------------------------------ */

/* SIGUSR1: the tables of ibgwctl show stats, neighbors and groups, a log
 * line each. */
static void report(struct ibgwd *d)
{
	static char out[256 * 1024];
	const char *what[] = { "stats", "neighbors", "groups" };
	char *line, *save = NULL;
	unsigned int k;

	for (k = 0; k < 3; k++) {
		gw_ctl_render(d, what[k], out, sizeof(out));
		for (line = strtok_r(out, "\n", &save); line;
		     line = strtok_r(NULL, "\n", &save))
			log_info("%s %s", what[k], line);
	}
}

static void sdp_start(struct part *p);
static void rds_start(struct part *p);

/* The partition's P_Key came into the port's table: SDP and RDS, which
 * could not start without it (sdp = on, rds = on), start now. */
static void pkey_added(struct part *p)
{
	if (p->pc->sdp && !p->sdp)
		sdp_start(p);
	if (p->pc->rds && !p->rds)
		rds_start(p);
}

static void dev_cb(evutil_socket_t fd, short what, void *arg)
{
	struct ibgwd *d = arg;
	struct fab_event ev;
	unsigned int i;

	(void)fd;
	(void)what;
	while (fab_get_event(d->dev, &ev) == 1) {
		log_info("port event %s", fab_event_name(ev.type));
		if (ev.type <= FAB_EV_DEVICE_FATAL)
			d->fab_events[ev.type]++;
		if (ev.type == FAB_EV_PORT_ERR)
			log_warnx("port down, waiting for the subnet");
		if (ev.type == FAB_EV_DEVICE_FATAL) {
			log_warnx("the fabric is gone");
			d->exit_code = 1;
			event_base_loopbreak(d->base);
			return;
		}
		for (i = 0; i < d->nparts; i++) {
			struct ipoib_link *l;
			int had;

			if (!d->parts[i].used)
				continue;
			l = part_link(&d->parts[i]);
			had = l && ipoib_link_has_pkey(l);
			if (d->parts[i].tun)
				ipoib_tun_event(d->parts[i].tun, ev.type);
			else if (d->parts[i].link)
				ipoib_link_event(d->parts[i].link, ev.type);
			if (l && had != ipoib_link_has_pkey(l))
				log_info("partition %s: P_Key 0x%04x %s the "
					 "port's table", d->parts[i].pc->name,
					 d->parts[i].pc->pkey | 0x8000,
					 had ? "removed from" : "added to");
			if (l && !had && ipoib_link_has_pkey(l))
				pkey_added(&d->parts[i]);
		}
	}
}

static void monitor_cb(evutil_socket_t fd, short what, void *arg)
{
	struct ibgwd *d = arg;
	char err[NL_ERRLEN];
	unsigned int i;
	int r;

	(void)fd;
	(void)what;
	r = nl_monitor_read(d->nl, err, sizeof(err));
	for (i = 0; r && i < d->nparts; i++) {
		if (!d->parts[i].used || !d->parts[i].tun)
			continue;
		if (r < 0 || (r & NL_CHG_ROUTE))
			ipoib_tun_routes_changed(d->parts[i].tun);
		if (r < 0 || (r & NL_CHG_LINK))	/* ip link set mtu ... */
			ipoib_tun_links_changed(d->parts[i].tun);
		if (r < 0 || (r & NL_CHG_ADDR))	/* ip addr add ... */
			ipoib_tun_addrs_changed(d->parts[i].tun);
	}
}

static void tick_cb(evutil_socket_t fd, short what, void *arg)
{
	struct ibgwd *d = arg;
	time_t now = time(NULL);
	unsigned int i;

	(void)fd;
	(void)what;
	for (i = 0; i < d->nparts; i++) {
		if (!d->parts[i].used)
			continue;
		if (d->parts[i].br)
			gw_bridge_tick(d->parts[i].br, now);
		tap_flush(&d->parts[i]);
	}
	if (++d->ticks % 5 == 0)	/* every 5 ticks, late ones too */
		gw_seed_save(d);
	health_check(d);	/* logged even without a watchdog */
}

static void signal_cb(evutil_socket_t sig, short what, void *arg)
{
	struct ibgwd *d = arg;

	(void)what;
	if (sig == SIGUSR1) {
		report(d);
		return;
	}
	if (sig == SIGHUP) {
		char err[1024];

		log_info("SIGHUP: reloading %s", d->conf.path);
		ibgwd_reload(d, err, sizeof(err));
		return;
	}
	log_info("signal %d: leaving the groups", (int)sig);
	gw_notify(d, "STOPPING=1");
	event_base_loopbreak(d->base);
}

/* Routing between the partitions' interfaces and the LAN is the kernel's. */
static void enable_forwarding(void)
{
	static const char *const knobs[] = {
		"/proc/sys/net/ipv4/ip_forward",
		"/proc/sys/net/ipv6/conf/all/forwarding",
	};
	unsigned int i;
	FILE *f;

	for (i = 0; i < 2; i++) {
		f = fopen(knobs[i], "w");
		if (!f || fputs("1\n", f) < 0 || fclose(f) != 0)
			log_warn("%s", knobs[i]);
		else
			log_debug("%s = 1", knobs[i]);
	}
}

/* Stop a partition: leave its groups (waiting at most ms for the SA),
 * remove its tap or interface, free the slot. */
static void part_stop(struct part *p, unsigned int ms)
{
	if (!p->used)
		return;
	gw_sdp_free(p->sdp);	/* its connections reset */
	p->sdp = NULL;
	gw_rds_free(p->rds);	/* its mappings closed */
	p->rds = NULL;
	if (p->gids) {
		char why[NL_ERRLEN];

		if (gw_gids_del(p->d->nl, (int)p->d->pa.sgid_ifindex,
				p->pc->rds_gids, p->pc->nrds_gids, why,
				sizeof(why)) < 0)
			log_warnx("partition %s: rds_gids: %s", p->pc->name,
				  why);
		p->gids = 0;
	}
	if (p->tun)
		ipoib_tun_free(p->tun, ms);
	if (p->link)
		ipoib_link_free(p->link, ms);
	if (p->tap_ev)
		event_free(p->tap_ev);
	if (p->tap_fd >= 0)
		close(p->tap_fd);	/* the tap goes with it */
	gw_bridge_free(p->br);
	free(p->gro);
	p->tun = NULL;
	p->link = NULL;
	p->tap_ev = NULL;
	p->tap_fd = -1;
	p->br = NULL;
	p->gro = NULL;
	p->used = 0;
	p->up = 0;
}

static void teardown(struct ibgwd *d)
{
	unsigned int i;

	for (i = 0; i < d->nparts; i++)
		part_stop(&d->parts[i], d->exit_code ? 0 : 1000);
}

/* sdp = on: the endpoint and the exports, before the capabilities go
 * (an export's port may be below 1024).  Without them the partition runs
 * on, without SDP. */
static void sdp_start(struct part *p)
{
	char err[512];

	p->sdp = gw_sdp_new(p, err, sizeof(err));
	if (!p->sdp) {
		log_warnx("partition %s: %s: no SDP", p->pc->name, err);
		return;
	}
	log_info("partition %s: SDP on, up to %u connections, %u export(s)",
		 p->pc->name, p->pc->sdp_max_conns, p->pc->nsdp_exports);
}

/* rds = on: the endpoint and the exports, as SDP's. */
static void rds_start(struct part *p)
{
	char err[512];

	p->rds = gw_rds_new(p, err, sizeof(err));
	if (!p->rds) {
		log_warnx("partition %s: %s: no RDS", p->pc->name, err);
		return;
	}
	log_info("partition %s: RDS on, up to %u peers, %u export(s)",
		 p->pc->name, p->pc->rds_max_peers, p->pc->nrds_exports);
}

/* Set a partition up in a free slot (its link not started yet). */
static struct part *part_new(struct ibgwd *d, const struct gw_part_conf *pc,
			     char *err, size_t errlen)
{
	struct part *p = NULL;
	unsigned int i;
	int n;

	for (i = 0; i < GW_MAX_PARTS; i++) {
		if (!d->parts[i].used) {
			p = &d->parts[i];
			break;
		}
	}
	if (!p) {
		snprintf(err, errlen, "no room for more than %d partitions",
			 GW_MAX_PARTS);
		return NULL;
	}
	memset(p, 0, offsetof(struct part, tapbuf));
	p->d = d;
	p->conf = *pc;
	p->pc = &p->conf;
	p->tap_fd = -1;
	p->used = 1;
	if (i >= d->nparts)
		d->nparts = i + 1;
	if (pc->nrds_gids && d->pa.link_layer != FAB_LINK_ETHERNET) {
		/* InfiniBand: the DGID is the gateway's own GID */
		snprintf(err, errlen, "rds_gids is for a RoCE port only; "
			 "this one is InfiniBand");
		n = -1;
	} else if (d->pa.link_layer == FAB_LINK_ETHERNET)
		n = start_roce(p, err, errlen);
	else if (pc->mode == GW_MODE_ROUTER)
		n = start_router(p, err, errlen);
	else
		n = start_transparent(p, err, errlen);
	if (n < 0) {
		part_stop(p, 0);
		return NULL;
	}
	if (pc->mode == GW_MODE_ROUTER)
		enable_forwarding();
	if (pc->sdp)
		sdp_start(p);
	if (pc->rds)
		rds_start(p);
	return p;
}

static void part_go(struct part *p)
{
	char err[FAB_ERRLEN];

	if (part_roce(p)) {
		log_info("partition %s: RoCE port: no IPoIB, IP is the "
			 "kernel's; RDS%s only", p->pc->name,
			 p->rds ? "" : " (failed)");
		check_ready(p->d);
		return;
	}
	if (p->tun ? ipoib_tun_start(p->tun, err, sizeof(err)) :
	    ipoib_link_start(p->link, err, sizeof(err))) {
		log_warnx("partition %s: %s", p->pc->name, err);
		return;
	}
	if (!ipoib_link_has_pkey(part_link(p))) {
		/* it waits for the subnet manager to add the key */
		log_warnx("partition %s: P_Key 0x%04x is not in the port's "
			  "table: no carrier until the subnet manager adds it",
			  p->pc->name, p->pc->pkey | 0x8000);
		check_ready(p->d);
		return;
	}
	log_info("partition %s: P_Key 0x%04x, %s, joining the broadcast group",
		 p->pc->name, p->pc->pkey | 0x8000, gw_mode_name(p->pc->mode));
}

static struct part *part_find(struct ibgwd *d, const char *name)
{
	unsigned int i;

	for (i = 0; i < d->nparts; i++)
		if (d->parts[i].used && !strcmp(d->parts[i].pc->name, name))
			return &d->parts[i];
	return NULL;
}

/* ---- run-time changes -------------------------------------------------------------- */

/* The running configuration in its canonical form (every key spelled
 * out), skip left out and extra (a section's text) appended, to path. */
static int write_running(struct ibgwd *d, const char *path, const char *skip,
			 const char *extra, char *err, size_t errlen)
{
	unsigned int i;
	FILE *f;

	f = fopen(path, "w");
	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	fprintf(f, "# written by ibgwd after a change at run time\n");
	gw_conf_write_gateway(f, &d->conf);
	for (i = 0; i < d->nparts; i++)
		if (d->parts[i].used &&
		    (!skip || strcmp(d->parts[i].pc->name, skip)))
			gw_conf_write_part(f, d->parts[i].pc);
	if (extra)
		fputs(extra, f);
	if (fclose(f) != 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		unlink(path);
		return -1;
	}
	return 0;
}

/* Write the running configuration, with extra appended (a section
 * text) and skip left out, to PATH.new; check it; on success *out holds
 * it.  Returns 0, or -1 with the errors, joined, in err. */
static int candidate(struct ibgwd *d, const char *skip, const char *extra,
		     struct gw_conf *out, char *err, size_t errlen)
{
	char tmp[4096 + 8], *msg = NULL;
	size_t msglen = 0;
	FILE *e;
	int n;

	snprintf(tmp, sizeof(tmp), "%s.new", d->conf.path);
	if (write_running(d, tmp, skip, extra, err, errlen) < 0)
		return -1;
	e = open_memstream(&msg, &msglen);
	if (!e) {
		snprintf(err, errlen, "out of memory");
		unlink(tmp);
		return -1;
	}
	n = gw_conf_load(tmp, out, e);
	fclose(e);
	if (n) {
		/* one line: the reasons, "; " between them, without the
		 * temporary file's name and line (a file the operator never
		 * wrote), nor the count line */
		size_t off = 0, tl = strlen(tmp);
		char *line, *next, *p;

		err[0] = '\0';
		for (line = msg; line && *line; line = next) {
			next = strchr(line, '\n');
			if (next)
				*next++ = '\0';
			p = line;
			if (!strncmp(p, tmp, tl) && p[tl] == ':') {
				p += tl + 1;
				while (*p >= '0' && *p <= '9')
					p++;
				if (*p == ':')
					p++;
				while (*p == ' ')
					p++;
			}
			if (!*p || strstr(p, " error(s)"))
				continue;
			if (off < errlen)
				off += (size_t)snprintf(err + off, errlen - off,
							"%s%s", off ? "; " : "",
							p);
		}
		if (!err[0])
			snprintf(err, errlen, "invalid");
		free(msg);
		unlink(tmp);
		return -1;
	}
	free(msg);
	return 0;
}

static void drop_candidate(struct ibgwd *d)
{
	char tmp[4096 + 8];

	snprintf(tmp, sizeof(tmp), "%s.new", d->conf.path);
	unlink(tmp);
}

/* The candidate becomes the configuration file. */
static int commit(struct ibgwd *d, char *err, size_t errlen)
{
	char tmp[4096 + 8];

	snprintf(tmp, sizeof(tmp), "%s.new", d->conf.path);
	if (rename(tmp, d->conf.path) < 0) {
		snprintf(err, errlen, "%s: %s (the change is applied, not "
			 "saved)", d->conf.path, strerror(errno));
		unlink(tmp);
		return -1;
	}
	return 0;
}

/*
 * One KEY=VALUE of a partition add, as the file will hold it: a key once,
 * and a value the file's grammar keeps as given (';' and '#' would start
 * a comment there and cut it silently, quotes would be taken off, a
 * backslash at the end would join the next line).  0, or -1 with err.
 */
static int kv_check(char **kv, int k, const char *eq, char *err,
		    size_t errlen)
{
	size_t klen = (size_t)(eq - kv[k]);
	const char *v;
	int j;

	for (v = kv[k]; v < eq; v++)
		if (!isalnum((unsigned char)*v) && *v != '_') {
			snprintf(err, errlen, "'%.*s': not a key", (int)klen,
				 kv[k]);
			return -1;
		}
	for (v = eq + 1; *v; v++)
		if (strchr("#;\"'\\", *v) || (unsigned char)*v < 0x20 ||
		    *v == 0x7f) {
			snprintf(err, errlen, "%.*s: '%s': %s cannot be in a "
				 "value of ibgw.conf", (int)klen, kv[k],
				 eq + 1, (unsigned char)*v < 0x20 ||
				 *v == 0x7f ? "a control character" :
				 *v == '#' ? "'#'" : *v == ';' ? "';'" :
				 *v == '\\' ? "a backslash" : "a quote");
			return -1;
		}
	for (j = 0; j < k; j++)
		if (!strncasecmp(kv[j], kv[k], klen) && kv[j][klen] == '=') {
			snprintf(err, errlen, "%.*s: given twice", (int)klen,
				 kv[k]);
			return -1;
		}
	return 0;
}

int ibgwd_partition_add(struct ibgwd *d, const char *name, char **kv,
			int nkv, char *err, size_t errlen)
{
	static struct gw_conf cand;
	char sec[4096], *eq;
	size_t o;
	unsigned int i;
	struct part *p;
	int k;

	if (part_find(d, name)) {
		snprintf(err, errlen, "partition %s exists", name);
		return -1;
	}
	for (i = 0; name[i]; i++)
		if (!((name[i] >= 'a' && name[i] <= 'z') ||
		      (name[i] >= '0' && name[i] <= '9') || name[i] == '_' ||
		      name[i] == '.' || name[i] == '-') || i >= GW_NAME_MAX) {
			snprintf(err, errlen, "bad partition name '%s'",
				 name);
			return -1;
		}
	o = (size_t)snprintf(sec, sizeof(sec), "\n[partition %s]\n", name);
	for (k = 0; k < nkv; k++) {
		eq = strchr(kv[k], '=');
		if (!eq || eq == kv[k] || strchr(kv[k], '[') ||
		    o + strlen(kv[k]) + 8 >= sizeof(sec)) {
			snprintf(err, errlen, "'%s': KEY=VALUE wanted", kv[k]);
			return -1;
		}
		if (kv_check(kv, k, eq, err, errlen) < 0)
			return -1;
		o += (size_t)snprintf(sec + o, sizeof(sec) - o, "%.*s = %s\n",
				      (int)(eq - kv[k]), kv[k], eq + 1);
	}
	if (candidate(d, NULL, sec, &cand, err, errlen) < 0)
		return -1;
	for (i = 0; i < cand.nparts; i++)
		if (!strcmp(cand.parts[i].name, name))
			break;
	if (i == cand.nparts || (cand.parts[i].vlan && d->trunk_fd < 0)) {
		snprintf(err, errlen, i == cand.nparts ? "internal error" :
			 "a VLAN partition needs the trunk, opened at start");
		drop_candidate(d);
		return -1;
	}
	p = part_new(d, &cand.parts[i], err, errlen);
	if (!p) {
		drop_candidate(d);
		return -1;
	}
	part_go(p);
	log_info("partition %s added", name);
	/* the candidate had the new section as given: written again, now
	 * running, with every key spelled out as the others */
	{
		char tmp[4096 + 8];

		snprintf(tmp, sizeof(tmp), "%s.new", d->conf.path);
		if (write_running(d, tmp, NULL, NULL, err, errlen) < 0)
			return -1;
	}
	return commit(d, err, errlen);
}

int ibgwd_partition_del(struct ibgwd *d, const char *name, char *err,
			size_t errlen)
{
	static struct gw_conf cand;
	struct part *p = part_find(d, name);

	if (!p) {
		snprintf(err, errlen, "no partition %s", name);
		return -1;
	}
	if (parts_used(d) == 1) {
		snprintf(err, errlen, "partition %s is the last one: a "
			 "configuration needs one (stop ibgwd instead)", name);
		return -1;
	}
	if (candidate(d, name, NULL, &cand, err, errlen) < 0)
		return -1;
	part_stop(p, 0);	/* leaves sent, not waited for: the loop runs */
	log_info("partition %s deleted", name);
	return commit(d, err, errlen);
}

static int reload(struct ibgwd *d, char *err, size_t errlen);

/* Re-read the file: partitions gone are stopped, new ones started,
 * changed ones restarted; [gateway] changes need a restart. */
int ibgwd_reload(struct ibgwd *d, char *err, size_t errlen)
{
	int n;

	/* systemd's reload is over at READY=1, whether the file was
	 * taken or not */
	gw_notify(d, "RELOADING=1\nMONOTONIC_USEC=%llu",
		  (unsigned long long)notify_monotonic_usec());
	n = reload(d, err, errlen);
	gw_notify(d, "READY=1");
	status_carrier(d);
	return n;
}

/* The loader's lines as one: "; " between them, none at the end
 * (malloc'd; NULL without memory). */
static char *join_lines(const char *msg)
{
	size_t n = 0, o = 0;
	const char *p, *nl;
	char *out;

	for (p = msg; p && *p; p++)
		n += *p == '\n' ? 2 : 1;
	out = malloc(n + 1);
	if (!out)
		return NULL;
	for (p = msg; p && *p; p = nl) {
		nl = strchr(p, '\n');
		if (!nl)
			nl = p + strlen(p);
		if (nl > p) {
			if (o) {
				out[o++] = ';';
				out[o++] = ' ';
			}
			memcpy(out + o, p, (size_t)(nl - p));
			o += (size_t)(nl - p);
		}
		if (*nl)
			nl++;
	}
	out[o] = '\0';
	return out;
}

static int reload(struct ibgwd *d, char *err, size_t errlen)
{
	static struct gw_conf nc;
	char *msg = NULL;
	size_t msglen = 0;
	unsigned int i, j, added = 0, removed = 0, changed = 0;
	FILE *e = open_memstream(&msg, &msglen);
	int n;

	if (!e) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	n = gw_conf_load(d->conf.path, &nc, e);
	fclose(e);
	if (n) {
		char *why = join_lines(msg);

		log_warnx("reload: %s has errors, the running configuration "
			  "stays: %s", d->conf.path, why ? why : "");
		snprintf(err, errlen, "%s has errors, nothing changed: %s",
			 d->conf.path, why ? why : "");
		free(why);
		free(msg);
		return -1;
	}
	free(msg);
	if (strcmp(nc.fabric, d->conf.fabric) || strcmp(nc.node, d->conf.node) ||
	    strcmp(nc.trunk, d->conf.trunk) ||
	    strcmp(nc.control, d->conf.control))
		log_warnx("reload: [gateway] changed: it takes a restart");
	for (i = 0; i < d->nparts; i++) {
		struct part *p = &d->parts[i];

		if (!p->used)
			continue;
		for (j = 0; j < nc.nparts; j++)
			if (!strcmp(nc.parts[j].name, p->pc->name))
				break;
		if (j == nc.nparts) {
			log_info("reload: partition %s removed", p->pc->name);
			part_stop(p, 0);	/* leaves sent, not waited for: the loop runs */
			removed++;
			continue;
		}
		nc.parts[j].line = p->pc->line;
		if (memcmp(&nc.parts[j], p->pc, sizeof(*p->pc))) {
			log_info("reload: partition %s changed", p->pc->name);
			part_stop(p, 0);	/* leaves sent, not waited for: the loop runs */
			removed++;
			changed++;
		}
	}
	for (j = 0; j < nc.nparts; j++) {
		struct part *p;

		if (part_find(d, nc.parts[j].name))
			continue;
		p = part_new(d, &nc.parts[j], err, errlen);
		if (!p) {
			log_warnx("reload: partition %s: %s", nc.parts[j].name,
				  err);
			continue;
		}
		part_go(p);
		added++;
	}
	log_info("reload: %u added, %u removed (%u of them changed)",
		 added - changed, removed - changed, changed);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "check", no_argument, NULL, 'n' },
		{ "foreground", no_argument, NULL, 'f' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	static struct ibgwd d;
	const char *path = "/etc/ibgw/ibgw.conf";
	int verbs;
	int ch, check = 0, n, sigs[4] = { SIGTERM, SIGINT, SIGUSR1, SIGHUP };
	char err[512];
	unsigned int i;
	struct timeval sec = { 1, 0 };

	opterr = 0;
	while ((ch = getopt_long(argc, argv, "c:nfvhV", opts, NULL)) != -1) {
		switch (ch) {
		case 'c': path = optarg; break;
		case 'n': check = 1; break;
		case 'f': d.foreground = 1; break;
		case 'v': d.verbose = 1; break;
		case 'h': usage(stdout); return 0;
		case 'V': printf("ibgwd %s\n", IBGW_VERSION); return 0;
		default:
			fprintf(stderr, "ibgwd: bad option '%s' (see --help)\n",
				argv[optind - 1]);
			return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "ibgwd: unexpected argument '%s'\n",
			argv[optind]);
		return 2;
	}
	log_init("ibgwd", 1, d.verbose);
	n = gw_conf_load(path, &d.conf, stderr);
	if (n) {
		fprintf(stderr, "ibgwd: %s: %d error(s)\n", path, n < 0 ? 1 : n);
		return 2;
	}
	if (check) {
		printf("configuration OK\n");
		return 0;
	}
	signal(SIGPIPE, SIG_IGN);
	d.trunk_fd = -1;
	verbs = !strncmp(d.conf.fabric, "verbs:", 6);
	if (verbs)
		drop_caps(1);
	d.dev = fab_open(d.conf.fabric, d.conf.node, err, sizeof(err));
	if (!d.dev) {
		log_warnx("%s: %s", d.conf.fabric, err);
		return 1;
	}
	if (fab_query_port(d.dev, &d.pa, err, sizeof(err)) < 0) {
		log_warnx("%s: %s", d.conf.fabric, err);
		return 1;
	}
	d.nl = nl_ctx_open(err, sizeof(err));
	if (!d.nl) {
		log_warnx("%s", err);
		return 1;
	}
	d.base = event_base_new();
	if (!d.base)
		fatalx("event_base_new");
	for (i = 0; i < d.conf.nparts; i++) {
		if (!part_new(&d, &d.conf.parts[i], err, sizeof(err))) {
			log_warnx("partition %s: %s", d.conf.parts[i].name,
				  err);
			d.exit_code = 1;
			teardown(&d);
			return 1;
		}
	}
	if (d.conf.trunk[0]) {
		if (open_trunk(&d, err, sizeof(err)) < 0) {
			log_warnx("%s", err);
			d.exit_code = 1;
			teardown(&d);
			return 1;
		}
		d.trunk_ev = event_new(d.base, d.trunk_fd,
				       EV_READ | EV_PERSIST, trunk_cb, &d);
		event_add(d.trunk_ev, NULL);
	}
	d.started = time(NULL);
	{
		/* the socket's directory (/run/ibgw) may not exist yet */
		char dir[4096], *sl;

		snprintf(dir, sizeof(dir), "%s", d.conf.control);
		sl = strrchr(dir, '/');
		if (sl && sl != dir) {
			*sl = '\0';
			if (mkdir(dir, 0750) < 0 && errno != EEXIST)
				log_warn("mkdir %s", dir);
		}
	}
	gw_seed_load(&d);
	d.ctl = gw_ctl_open(&d, d.conf.control, err, sizeof(err));
	if (!d.ctl) {
		log_warnx("%s", err);
		d.exit_code = 1;
		teardown(&d);
		return 1;
	}
	if (d.conf.metrics_addr[0]) {
		d.metrics = gw_metrics_open(&d, d.conf.metrics_addr,
					    d.conf.metrics_port, err,
					    sizeof(err));
		if (!d.metrics) {
			log_warnx("%s", err);
			gw_ctl_close(d.ctl);
			d.exit_code = 1;
			teardown(&d);
			return 1;
		}
	}
	d.dev_ev = event_new(d.base, fab_dev_fd(d.dev), EV_READ | EV_PERSIST,
			     dev_cb, &d);
	event_add(d.dev_ev, NULL);
	if (nl_monitor_open(d.nl, NL_CHG_ROUTE | NL_CHG_LINK | NL_CHG_ADDR,
			    err, sizeof(err)) >= 0) {
		d.mon_ev = event_new(d.base, nl_monitor_fd(d.nl),
				     EV_READ | EV_PERSIST, monitor_cb, &d);
		event_add(d.mon_ev, NULL);
	} else {
		log_warnx("route monitor: %s (next hops are looked up for "
			  "every packet, an MTU set above the link's is not "
			  "put back)", err);
		for (i = 0; i < d.nparts; i++)
			if (d.parts[i].used && d.parts[i].tun)
				ipoib_tun_set_nocache(d.parts[i].tun, 1);
	}
	d.tick_ev = event_new(d.base, -1, EV_PERSIST, tick_cb, &d);
	event_add(d.tick_ev, &sec);
	for (i = 0; i < 4; i++) {
		d.sig_ev[i] = evsignal_new(d.base, sigs[i], signal_cb, &d);
		event_add(d.sig_ev[i], NULL);
	}
	if (watchdog_start(&d) < 0)
		fatalx("watchdog timer");
	/* set up: from here on only what run-time changes need (on verbs
	 * done before the fabric was opened: gw_caps.c) */
	if (!verbs)
		drop_caps(0);
	for (i = 0; i < d.nparts; i++)
		if (d.parts[i].used)
			part_go(&d.parts[i]);
	event_base_dispatch(d.base);

	gw_seed_save(&d);
	gw_seed_free(&d);
	gw_metrics_close(d.metrics);
	gw_ctl_close(d.ctl);
	teardown(&d);
	if (d.trunk_ev)
		event_free(d.trunk_ev);
	if (d.trunk_fd >= 0)
		close(d.trunk_fd);
	event_free(d.dev_ev);
	event_free(d.tick_ev);
	if (d.wd_ev)
		event_free(d.wd_ev);
	if (d.mon_ev)
		event_free(d.mon_ev);
	for (i = 0; i < 4; i++)
		event_free(d.sig_ev[i]);
	nl_ctx_close(d.nl);
	fab_close(d.dev);
	event_base_free(d.base);
	log_info("stopped");
	return d.exit_code;
}

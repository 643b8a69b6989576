// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ipoibd: a user-space IPoIB host.  It attaches to a fabric as a node,
 * runs one IPoIB datagram-mode link in a partition on a Linux TUN
 * interface in the current network namespace (ulp/ipoib/ipoib_tun.c: the
 * link, the offloads and the interface's configuration; why TUN and not
 * TAP is written there), so that unmodified programs there act as IB
 * hosts.
 * Next hops for off-link destinations come from the kernel's routing table,
 * cached and flushed when routes change (this file watches them).
 *
 * With --sdp-only there is no IPoIB at all: just the host's SDP and RDS
 * services on the fabric port, for RoCE (verbs on an Ethernet link
 * layer), where IP addresses are the GIDs and rdma_cm resolves them
 * itself.
 */
#include <netinet/in.h>
#include <sys/socket.h>
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "conf/conf.h"
#include "conf/daemon.h"
#include "conf/log.h"
#include "fabric/fabric.h"
#include "fabric/soft_proto.h"
#include "inet/byteorder.h"
#include "inet/csum.h"
#include "netlink/nl_link.h"
#include "ulp/ipoib/ipoib_dhcp.h"
#include "ulp/ipoib/ipoib_tun.h"
#include "ulp/rds/rds_service.h"
#include "ulp/sdp/sdp_service.h"

struct ipoibd {
	struct event_base *base;
	struct fab_dev *dev;
	struct ipoib_tun *tun;
	struct nl_sock_ctx *nl;
	int foreground, verbose;
	int detached;		/* daemon_detach() done */
	struct event *dev_ev, *mon_ev, *sig_ev[3];
	int exit_code;
	uint16_t pkey;		/* with the full bit, for messages */
	/* the host's SDP service (libibgw_preload.so's), on a device of
	 * its own: it takes that device's CM events */
	struct fab_dev *sdp_dev;
	struct sdp_service *sdp;
	struct event *sdp_dev_ev;
	int sdp_only;		/* --sdp-only: no TUN, no IPoIB */
	int sdp_keepalive_ms;	/* --sdp-keepalive: 0 default, -1 off */
	struct inet_addr sdp_own;	/* RoCE: the port's source GID's IP */
	/* the host's RDS service, the same way */
	struct fab_dev *rds_dev;
	struct rds_service *rds;
	struct event *rds_dev_ev;
	struct inet_addr rds_own;	/* RoCE */
	const char *rds_name;	/* --rds-socket */
	int no_rds;
	/* a service that did not start for want of the P_Key starts when
	 * the subnet manager adds it (PKEY_CHANGE) */
	const char *spec, *node, *sdp_name;
	int sdp_pkey_wait, rds_pkey_wait;
	/* --dhcp: the IPv4 address from a DHCP server (RFC 4390) */
	int dhcp;
	struct dhcp4_client dhcpc;
	struct event *dhcp_ev;
	struct inet_addr dhcp_router;	/* the default route we added */
};

static void usage(FILE *f)
{
	fprintf(f,
"usage: ipoibd --fabric SPEC --node NAME [--pkey PKEY] [--ifname IFNAME]\n"
"              [--address CIDR]... [--dhcp] [--mtu BYTES]\n"
"              [--mode datagram|connected]\n"
"              [--cm-idle SECONDS] [--no-sdp] [--sdp-socket NAME]\n"
"              [--sdp-keepalive SECONDS] [--no-rds] [--rds-socket NAME]\n"
"              [-f] [-v]\n"
"       ipoibd --sdp-only --fabric verbs:DEV[:PORT] [--sdp-socket NAME]\n"
"              [--sdp-keepalive SECONDS] [--no-rds] [--rds-socket NAME]\n"
"              [-f] [-v]\n"
"  -F, --fabric SPEC    soft:PATH (ibfabricd), verbs:DEV[:PORT]\n"
"  -n, --node NAME      the node to attach as (soft fabric)\n"
"  -p, --pkey PKEY      partition (default 0xffff)\n"
"  -i, --ifname IFNAME  interface name (default ib%%d)\n"
"  -a, --address CIDR   an IPv4 or IPv6 address with prefix; repeatable\n"
"  -D, --dhcp           an IPv4 address, prefix and default route from a DHCP\n"
"                       server (RFC 4390 client-identifier from the port GUID)\n"
"  -m, --mtu BYTES      at most this MTU (default: the broadcast group's - 4,\n"
"                       65520 in connected mode)\n"
"  -M, --mode MODE      datagram (default) or connected (RFC 4755: RC\n"
"                       connections to peers that take them)\n"
"      --cm-idle SECONDS  close connections idle this long (default 300)\n"
"      --no-sdp         no SDP service for libibgw_preload.so\n"
"      --sdp-only       only the SDP and RDS services, no IPoIB interface\n"
"                       (RoCE: the GIDs are the IP addresses)\n"
"      --sdp-socket NAME  the SDP service's socket (default @ibgw-sdp,\n"
"                       abstract: one per network namespace)\n"
"      --sdp-keepalive SECONDS  probe SDP connections idle this long; a\n"
"                       dead peer resets them (default 60, 0: off)\n"
"      --no-rds         no RDS service (AF_RDS) for libibgw_preload.so\n"
"      --rds-socket NAME  the RDS service's socket (default @ibgw-rds)\n"
"  -f, --foreground     stay in the foreground, log to stderr\n"
"  -v, --verbose        debug logging\n"
"  -h, --help, -V, --version\n"
"Signals: TERM/INT leave the groups and remove the interface; USR1 logs\n"
"the link's counters, neighbours and groups, and the SDP and RDS\n"
"services' counters and sockets.\n");
}

static void monitor_cb(evutil_socket_t fd, short what, void *arg)
{
	struct ipoibd *d = arg;
	char err[NL_ERRLEN];
	int r;

	(void)fd;
	(void)what;
	r = nl_monitor_read(d->nl, err, sizeof(err));
	if (r < 0 || (r & NL_CHG_ROUTE))
		ipoib_tun_routes_changed(d->tun);
	if (r < 0 || (r & NL_CHG_LINK))	/* ip link set mtu ... */
		ipoib_tun_links_changed(d->tun);
	if (r < 0 || (r & NL_CHG_ADDR))	/* ip addr add ... */
		ipoib_tun_addrs_changed(d->tun);
}

/* ---- DHCP (--dhcp) ------------------------------------------------------- */

static void report_counter(void *arg, const struct counter_desc *cd,
			   const char *name, const char *reason, uint64_t v);

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* A message of the client as the host's kernel would send it: IPv4, UDP
 * 68 -> 67, into the link as a packet from the interface. */
static void dhcp_send(void *arg, const uint8_t *msg, size_t len,
		      struct in_addr src, struct in_addr dst)
{
	struct ipoibd *d = arg;
	uint8_t pkt[28 + DHCP4_MSG_MAX], *u = pkt + 20;
	uint64_t sum;

	if (len > DHCP4_MSG_MAX)
		return;
	memset(pkt, 0, 28);
	pkt[0] = 0x45;
	be16_put(pkt + 2, (uint16_t)(28 + len));
	pkt[8] = 64;				/* TTL */
	pkt[9] = IPPROTO_UDP;
	memcpy(pkt + 12, &src.s_addr, 4);
	memcpy(pkt + 16, &dst.s_addr, 4);
	inet_csum_put(pkt + 10, inet_csum_fold(inet_csum_add(0, pkt, 20)));
	be16_put(u, DHCP4_CLIENT_PORT);
	be16_put(u + 2, DHCP4_SERVER_PORT);
	be16_put(u + 4, (uint16_t)(8 + len));
	memcpy(u + 8, msg, len);
	sum = inet_csum_pseudo4(pkt + 12, pkt + 16, IPPROTO_UDP, 8 + len);
	sum = inet_csum_add(sum, u, 8 + len);
	inet_csum_put(u + 6, inet_csum_fold(sum) ? inet_csum_fold(sum) :
		      0xffff);
	ipoib_link_xmit(ipoib_tun_link(d->tun), pkt, 28 + len);
}

static void dhcp_arm(void *arg, uint64_t ms)
{
	struct ipoibd *d = arg;
	struct timeval tv;

	evtimer_del(d->dhcp_ev);
	if (ms == UINT64_MAX)
		return;
	tv.tv_sec = (time_t)(ms / 1000);
	tv.tv_usec = (suseconds_t)(ms % 1000) * 1000;
	evtimer_add(d->dhcp_ev, &tv);
}

static void dhcp_timer(evutil_socket_t fd, short what, void *arg)
{
	struct ipoibd *d = arg;

	(void)fd;
	(void)what;
	dhcp4_client_timer(&d->dhcpc, mono_ms());
}

static void dhcp_rx(void *arg, const uint8_t *msg, size_t len)
{
	struct ipoibd *d = arg;

	if (d->dhcp)
		dhcp4_client_input(&d->dhcpc, msg, len, mono_ms());
}

static unsigned int mask_len(struct in_addr m)
{
	uint32_t v = ntohl(m.s_addr);
	unsigned int n = 0;

	while (n < 32 && (v & (0x80000000u >> n)))
		n++;
	return n;
}

/* The lease's prefix: its mask, else the address's class (RFC 2132
 * 3.3: a server should send the mask; old ones do not) */
static void lease_prefix(const struct dhcp4_lease *l, struct inet_prefix *p)
{
	uint32_t a = ntohl(l->addr.s_addr);

	memset(p, 0, sizeof(*p));
	inet_addr_v4(&p->addr, &l->addr);
	if (l->mask.s_addr && mask_len(l->mask) > 0)
		p->plen = mask_len(l->mask);
	else
		p->plen = a >> 31 == 0 ? 8 : a >> 30 == 2 ? 16 : 24;
}

static void route_del(struct ipoibd *d)
{
	struct inet_prefix any = { .addr = { .family = AF_INET } };
	char err[NL_ERRLEN];

	if (!d->dhcp_router.family)
		return;
	if (nl_route_via(d->nl, 0, &any, &d->dhcp_router,
			 ipoib_tun_ifindex(d->tun), err, sizeof(err)) < 0 &&
	    errno != ESRCH)
		log_warnx("dhcp: %s", err);
	memset(&d->dhcp_router, 0, sizeof(d->dhcp_router));
}

static void dhcp_unbind(void *arg, const struct dhcp4_lease *l,
			const char *why)
{
	struct ipoibd *d = arg;
	struct inet_addr a;
	char as[INET_ADDR_STRLEN];

	route_del(d);
	inet_addr_v4(&a, &l->addr);
	ipoib_tun_addr_del(d->tun, &a);
	log_warnx("dhcp: %s: %s dropped: %s", ipoib_tun_ifname(d->tun),
		  inet_addr_str(&a, as, sizeof(as)), why);
}

static void dhcp_bind(void *arg, const struct dhcp4_lease *l,
		      const struct dhcp4_lease *old)
{
	struct ipoibd *d = arg;
	struct inet_prefix p, op;
	struct inet_prefix any = { .addr = { .family = AF_INET } };
	struct inet_addr gw;
	char err[NL_ERRLEN], ps[INET_PREFIX_STRLEN], ss[INET_ADDR_STRLEN];

	lease_prefix(l, &p);
	if (old->addr.s_addr) {
		lease_prefix(old, &op);
		if (op.addr.v4.s_addr == p.addr.v4.s_addr &&
		    op.plen == p.plen &&
		    old->router.s_addr == l->router.s_addr) {
			if (ipoib_tun_is_own(d->tun, &p.addr)) {
				log_info("dhcp: %s: %s renewed for %u s",
					 ipoib_tun_ifname(d->tun),
					 inet_prefix_str(&p, ps, sizeof(ps)),
					 l->lease);
				return;
			}
			/* deleted by hand meanwhile (with the route through
			 * it): the lease puts it back, as dhclient-script's
			 * RENEW does */
			log_warnx("dhcp: %s: %s was gone from the interface: "
				  "added again", ipoib_tun_ifname(d->tun),
				  inet_prefix_str(&p, ps, sizeof(ps)));
		}
		route_del(d);
		ipoib_tun_addr_del(d->tun, &op.addr);
	}
	if (ipoib_tun_addr_add(d->tun, &p, err, sizeof(err)) < 0 &&
	    errno != EEXIST)
		log_warnx("dhcp: %s", err);
	inet_addr_v4(&gw, &l->server);
	log_info("dhcp: %s: %s from %s, lease %u s (renew at %u s)",
		 ipoib_tun_ifname(d->tun), inet_prefix_str(&p, ps, sizeof(ps)),
		 inet_addr_str(&gw, ss, sizeof(ss)), l->lease, l->t1);
	if (!l->router.s_addr)
		return;
	inet_addr_v4(&gw, &l->router);
	if (nl_route_via(d->nl, 1, &any, &gw, ipoib_tun_ifindex(d->tun), err,
			 sizeof(err)) < 0) {
		/* another default route (the operator's) stays first */
		log_warnx("dhcp: default route via %s not added: %s",
			  inet_addr_str(&gw, ss, sizeof(ss)), err);
		return;
	}
	d->dhcp_router = gw;
}

static void dhcp_log(void *arg, const char *line)
{
	(void)arg;
	log_info("%s", line);
}

static int dhcp_init(struct ipoibd *d)
{
	static const struct dhcp4_client_ops ops = {
		.send = dhcp_send, .arm = dhcp_arm, .bind = dhcp_bind,
		.unbind = dhcp_unbind, .log = dhcp_log,
	};
	uint8_t id[DHCP4_CLIENT_ID_LEN];
	struct ipoib_addr hw;

	d->dhcp_ev = evtimer_new(d->base, dhcp_timer, d);
	if (!d->dhcp_ev)
		return -1;
	ipoib_link_hwaddr(ipoib_tun_link(d->tun), &hw);
	dhcp4_client_id_ib(hw.gid.raw + 8, id);
	dhcp4_client_init(&d->dhcpc, &ops, d, id,
			  (uint32_t)mono_ms() ^ ((uint32_t)getpid() << 16) ^
			  be32_get(hw.gid.raw + 12));
	return 0;
}

static void dhcp_report(struct ipoibd *d)
{
	const struct dhcp4_lease *l = &d->dhcpc.lease;
	char as[INET_ADDR_STRLEN];
	uint64_t now = mono_ms(), end;

	if (!d->dhcp)
		return;
	counters_walk(dhcp4_client_counters, &d->dhcpc.st, report_counter,
		      (void *)"dhcp");
	if (!l->addr.s_addr) {
		log_info("dhcp %s, no lease",
			 dhcp4_state_name(d->dhcpc.state));
		return;
	}
	end = d->dhcpc.bound_ms + (uint64_t)l->lease * 1000;
	log_info("dhcp %s, %s from %s, %llu s left",
		 dhcp4_state_name(d->dhcpc.state),
		 inet_ntop(AF_INET, &l->addr, as, sizeof(as)),
		 inet_ntoa(l->server),
		 (unsigned long long)(end > now ? (end - now) / 1000 : 0));
}

static void tun_carrier(void *arg, struct ipoib_tun *t, int up,
			unsigned int mtu)
{
	struct ipoibd *d = arg;

	log_info("%s: carrier %s, MTU %u", ipoib_tun_ifname(t),
		 up ? "up" : "down", mtu);
	if (!d->dhcp)
		return;
	if (up)
		dhcp4_client_start(&d->dhcpc, mono_ms());
	else
		dhcp4_client_pause(&d->dhcpc, mono_ms());
}

/* Set-up steps that failed without stopping the interface. */
static void tun_error(void *arg, struct ipoib_tun *t, const char *msg)
{
	(void)arg;
	(void)t;
	log_warnx("%s", msg);
}

/* Duplicate address detection (IPv6) and conflict detection (IPv4). */
static void tun_conflict(void *arg, struct ipoib_tun *t,
			 const struct inet_addr *a, const struct ipoib_addr *hw,
			 int dad_failed)
{
	char as[INET6_ADDRSTRLEN], hws[IPOIB_ADDR_STRLEN] = "?";

	(void)arg;
	inet_ntop(a->family, a->raw, as, sizeof(as));
	if (hw)
		ipoib_addr_ntop(hw, hws, sizeof(hws));
	if (dad_failed)
		log_warnx("%s: duplicate address %s: in use by %s, DAD "
			  "failed: dadfailed, not answered for",
			  ipoib_tun_ifname(t), as, hws);
	else if (a->family == AF_INET6)
		log_warnx("%s: duplicate address %s: in use by %s",
			  ipoib_tun_ifname(t), as, hws);
	else
		log_warnx("%s: address conflict: %s is claimed by %s",
			  ipoib_tun_ifname(t), as, hws);
}

static void ready(void *arg, struct ipoib_tun *t)
{
	struct ipoibd *d = arg;
	struct ipoib_addr hw;
	char hws[IPOIB_ADDR_STRLEN], err[256];

	ipoib_link_hwaddr(ipoib_tun_link(t), &hw);
	ipoib_addr_ntop(&hw, hws, sizeof(hws));
	log_info("ready: %s up, MTU %u, address %s", ipoib_tun_ifname(t),
		 ipoib_link_mtu(ipoib_tun_link(t)), hws);
	if (!d->foreground && !d->detached++ &&
	    daemon_detach("ipoibd", d->verbose, d->base, err, sizeof(err)) < 0)
		fatalx("%s", err);	/* still starting: as ibfabricd does */
}

static void report_line(void *arg, const char *what, const char *text)
{
	(void)arg;
	log_info("%s %s", what, text);
}

static void report_counter(void *arg, const struct counter_desc *cd,
			   const char *name, const char *reason, uint64_t v)
{
	(void)cd;
	(void)reason;
	log_info("stats %s.%s %llu", (const char *)arg, name,
		 (unsigned long long)v);
}

static int sdp_start(struct ipoibd *d, const char *spec, const char *node,
		     const char *name);
static int rds_start(struct ipoibd *d, const char *spec, const char *node,
		     const char *name);

/* The partition's P_Key came into the port's table: the services that
 * waited for it start. */
static void pkey_added(struct ipoibd *d)
{
	if (d->sdp_pkey_wait && !d->sdp) {
		d->sdp_pkey_wait = 0;
		sdp_start(d, d->spec, d->node, d->sdp_name);
	}
	if (d->rds_pkey_wait && !d->rds) {
		d->rds_pkey_wait = 0;
		rds_start(d, d->spec, d->node, d->rds_name);
	}
}

static void dev_cb(evutil_socket_t fd, short what, void *arg)
{
	struct ipoibd *d = arg;
	struct fab_event ev;
	int r;

	(void)fd;
	(void)what;
	while ((r = fab_get_event(d->dev, &ev)) == 1) {
		log_info("port event %s", fab_event_name(ev.type));
		if (ev.type == FAB_EV_PKEY_CHANGE) {
			struct ipoib_link *l = ipoib_tun_link(d->tun);
			int had = ipoib_link_has_pkey(l);

			ipoib_tun_event(d->tun, ev.type);
			if (had != ipoib_link_has_pkey(l))
				log_info("%s: P_Key 0x%04x %s the port's "
					 "table", ipoib_tun_ifname(d->tun),
					 d->pkey, had ? "removed from" :
					 "added to");
			if (!had && ipoib_link_has_pkey(l))
				pkey_added(d);
			continue;
		}
		if (ev.type == FAB_EV_PORT_ERR)
			log_warnx("%s: port down, waiting for the subnet",
				  ipoib_tun_ifname(d->tun));
		if (ev.type == FAB_EV_DEVICE_FATAL) {
			log_warnx("the fabric is gone");
			d->exit_code = 1;
			event_base_loopbreak(d->base);
			return;
		}
		ipoib_tun_event(d->tun, ev.type);
	}
}

/* ---- the SDP service ---------------------------------------------------- */

/* Which port GID dst is behind: the IPoIB neighbour of its next hop
 * over our interface, as rdma_cm resolves over IPoIB (EAGAIN while the
 * neighbour is being resolved). */
static int ib_resolve(struct ipoibd *d, const struct inet_addr *dst,
		      union fab_gid *gid)
{
	struct ipoib_link *l = ipoib_tun_link(d->tun);
	struct ipoib_addr hw;
	struct inet_addr nh;

	if (!ipoib_link_carrier(l)) {
		errno = ENETDOWN;
		return -1;
	}
	if (ipoib_tun_nexthop(d->tun, dst, &nh) < 0) {
		errno = ENETUNREACH;
		return -1;
	}
	if (ipoib_tun_is_own(d->tun, &nh) || ipoib_link_is_local(l, &nh)) {
		ipoib_link_hwaddr(l, &hw);	/* ourselves */
		*gid = hw.gid;
		return 0;
	}
	if (ipoib_link_neigh_hw(l, &nh, &hw) == 0) {
		*gid = hw.gid;
		return 0;
	}
	ipoib_link_neigh_resolve(l, &nh);
	errno = EAGAIN;
	return -1;
}

/* ... and the source address SDP's Hello carries */
static int sdp_resolve(void *arg, const struct inet_addr *dst,
		       union fab_gid *gid, struct inet_addr *src)
{
	struct ipoibd *d = arg;

	if (!ipoib_link_carrier(ipoib_tun_link(d->tun))) {
		errno = ENETDOWN;
		return -1;
	}
	if (ipoib_tun_src_addr(d->tun, dst->family, src) < 0) {
		errno = EADDRNOTAVAIL;
		return -1;
	}
	/* A link-local peer must see a link-local source, as TCP's would
	 * (the kernel's own fe80:: address, which is not ours to use, and
	 * SDP's names carry no scope): not over SDP.  A 'both' socket goes
	 * on over TCP. */
	if (dst->family == AF_INET6 && IN6_IS_ADDR_LINKLOCAL(&dst->v6) &&
	    !IN6_IS_ADDR_LINKLOCAL(&src->v6)) {
		errno = EADDRNOTAVAIL;
		return -1;
	}
	return ib_resolve(d, dst, gid);
}

/*
 * Which GID dst is on RoCE, as rdma_cm resolves it: the address itself
 * (::ffff:a.b.c.d for IPv4), from our own address on the RDMA device's
 * netdev (the port's source GID, what rdma_cm binds our ids to).  A route
 * lookup (a UDP socket's connect) says whether dst is reached from that
 * address: one reached from another (another interface, the loopback) is
 * not an SDP destination.
 */
static int roce_gid(const struct inet_addr *own, const struct inet_addr *dst,
		    union fab_gid *gid)
{
	struct sockaddr_storage ss;
	struct inet_addr via;
	socklen_t sl;
	int fd, ok;

	if (dst->family != own->family) {
		errno = ENETUNREACH;
		return -1;
	}
	memset(&ss, 0, sizeof(ss));
	if (dst->family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)&ss;

		sin->sin_family = AF_INET;
		sin->sin_port = htons(9);
		sin->sin_addr = dst->v4;
		sl = sizeof(*sin);
	} else {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(9);
		sin6->sin6_addr = dst->v6;
		sl = sizeof(*sin6);
	}
	fd = socket(dst->family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	ok = connect(fd, (struct sockaddr *)&ss, sl) == 0;
	sl = sizeof(ss);
	ok = ok && getsockname(fd, (struct sockaddr *)&ss, &sl) == 0;
	close(fd);
	if (!ok) {
		errno = ENETUNREACH;
		return -1;
	}
	if (ss.ss_family == AF_INET)
		inet_addr_v4(&via, &((struct sockaddr_in *)&ss)->sin_addr);
	else
		inet_addr_v6(&via, &((struct sockaddr_in6 *)&ss)->sin6_addr);
	if (!inet_addr_equal(&via, own)) {
		errno = ENETUNREACH;
		return -1;
	}
	memset(gid, 0, sizeof(*gid));
	if (dst->family == AF_INET) {
		gid->raw[10] = gid->raw[11] = 0xff;
		memcpy(gid->raw + 12, dst->raw, 4);
	} else {
		memcpy(gid->raw, dst->raw, 16);
	}
	return 0;
}

static int sdp_resolve_roce(void *arg, const struct inet_addr *dst,
			    union fab_gid *gid, struct inet_addr *src)
{
	struct ipoibd *d = arg;

	if (roce_gid(&d->sdp_own, dst, gid) < 0)
		return -1;
	*src = d->sdp_own;
	return 0;
}

static void sdp_stop(struct ipoibd *d)
{
	if (d->sdp)
		sdp_service_free(d->sdp);
	d->sdp = NULL;
	if (d->sdp_dev_ev)
		event_free(d->sdp_dev_ev);
	d->sdp_dev_ev = NULL;
	if (d->sdp_dev)
		fab_close(d->sdp_dev);
	d->sdp_dev = NULL;
}

/* Port events of the SDP device: the IPoIB device hears the same ones;
 * only the fabric's end matters here. */
static void sdp_dev_cb(evutil_socket_t fd, short what, void *arg)
{
	struct ipoibd *d = arg;
	struct fab_event ev;

	(void)fd;
	(void)what;
	while (fab_get_event(d->sdp_dev, &ev) == 1) {
		if (ev.type == FAB_EV_DEVICE_FATAL) {
			sdp_stop(d);
			if (d->sdp_only) {
				log_warnx("the RDMA device is gone");
				d->exit_code = 1;
				event_base_loopbreak(d->base);
			}
			return;
		}
	}
}

/* No SDP is no failure: IPoIB runs on without it, and says why (-1; with
 * --sdp-only the caller stops). */
static int sdp_start(struct ipoibd *d, const char *spec, const char *node,
		     const char *name)
{
	static const struct sdp_service_ops ops = { .resolve = sdp_resolve };
	static const struct sdp_service_ops roce_ops = {
		.resolve = sdp_resolve_roce,
	};
	struct sdp_ep_cfg cfg;
	struct fab_port_attr attr;
	char err[256];
	int idx;

	d->sdp_dev = fab_open(spec, node, err, sizeof(err));
	if (!d->sdp_dev || fab_query_port(d->sdp_dev, &attr, err,
					  sizeof(err)) < 0) {
		log_warnx("SDP service: %s", err);
		sdp_stop(d);
		return -1;
	}
	if (d->sdp_only && attr.link_layer != FAB_LINK_ETHERNET) {
		/* rdma_cm resolves an IP address there through the kernel's
		 * IPoIB, which --sdp-only does not consult */
		log_warnx("SDP service: --sdp-only: %s is an InfiniBand port: "
			  "IP addresses are not GIDs there and need IPoIB to "
			  "resolve (run ipoibd without --sdp-only); "
			  "--sdp-only is for RoCE", spec);
		sdp_stop(d);
		return -1;
	}
	idx = fab_pkey_find(&attr, d->pkey);
	if (idx < 0) {
		log_warnx("SDP service: P_Key 0x%04x not in the port's table: "
			  "no SDP until it is added", d->pkey);
		sdp_stop(d);
		d->sdp_pkey_wait = !d->sdp_only;
		return -1;
	}
	memset(&cfg, 0, sizeof(cfg));
	cfg.pkey_index = (uint16_t)idx;
	cfg.listen_pkey = d->pkey;	/* another partition's ipoibd may
					 * serve SDP there too */
	cfg.keepalive_ms = d->sdp_keepalive_ms;
	if (attr.link_layer == FAB_LINK_ETHERNET) {
		/* rdma_cm on RoCE: its TCP port space, the 56-byte Hello */
		static const uint8_t v4[12] = { [10] = 0xff, [11] = 0xff };

		cfg.profile = SDP_PROFILE_RDMA_CM;
		if (!memcmp(attr.sgid.raw, v4, sizeof(v4)))
			inet_addr_v4(&d->sdp_own, (const struct in_addr *)
				     (const void *)(attr.sgid.raw + 12));
		else
			inet_addr_v6(&d->sdp_own, (const struct in6_addr *)
				     (const void *)attr.sgid.raw);
	}
	d->sdp = sdp_service_new(d->base, d->sdp_dev, &cfg, name,
				 cfg.profile == SDP_PROFILE_RDMA_CM ? &roce_ops :
				 &ops, d, err, sizeof(err));
	if (!d->sdp) {
		log_warnx("%s: no SDP", err);
		sdp_stop(d);
		return -1;
	}
	d->sdp_dev_ev = event_new(d->base, fab_dev_fd(d->sdp_dev),
				  EV_READ | EV_PERSIST, sdp_dev_cb, d);
	if (d->sdp_dev_ev)
		event_add(d->sdp_dev_ev, NULL);
	if (cfg.profile == SDP_PROFILE_RDMA_CM) {
		char as[INET6_ADDRSTRLEN];

		inet_ntop(d->sdp_own.family, d->sdp_own.raw, as, sizeof(as));
		log_info("SDP service on %s, over rdma_cm on RoCE from %s "
			 "(RDMA_PS_TCP ports)", sdp_service_name(d->sdp), as);
	} else {
		log_info("SDP service on %s", sdp_service_name(d->sdp));
	}
	return 0;
}

static void sdp_report(struct ipoibd *d)
{
	char buf[8192];
	size_t n;
	char *line, *save;

	if (!d->sdp)
		return;
	counters_walk(sdp_service_counters, sdp_service_stats(d->sdp),
		      report_counter, (void *)"sdp_service");
	counters_walk(sdp_ep_counters, sdp_service_ep_stats(d->sdp),
		      report_counter, (void *)"sdp");
	n = sdp_service_report(d->sdp, buf, sizeof(buf) - 1);
	buf[n] = 0;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		log_info("%s", line);
}

/* ---- the RDS service ---------------------------------------------------- */

/* Which port GID faddr is behind: as for SDP, the IPoIB neighbour of its
 * next hop (the kernel's rds_rdma resolves through rdma_cm, over IPoIB);
 * the bound address is the source whatever it is (a link-local one for a
 * link-local peer, as the kernel's RDS makes its connection from it). */
static int rds_resolve(void *arg, const struct inet_addr *laddr,
		       const struct inet_addr *faddr, union fab_gid *gid,
		       uint16_t *lid)
{
	(void)laddr;
	*lid = 0;
	return ib_resolve(arg, faddr, gid);
}

/* Our addresses and the link-local one the link made (add_link_local) */
static bool rds_is_local(void *arg, const struct inet_addr *a)
{
	struct ipoibd *d = arg;

	return ipoib_tun_is_own(d->tun, a) ||
	       ipoib_link_is_local(ipoib_tun_link(d->tun), a);
}

static unsigned int rds_ifindex(void *arg)
{
	struct ipoibd *d = arg;

	return (unsigned int)ipoib_tun_ifindex(d->tun);
}

static int rds_resolve_roce(void *arg, const struct inet_addr *laddr,
			    const struct inet_addr *faddr, union fab_gid *gid,
			    uint16_t *lid)
{
	struct ipoibd *d = arg;

	(void)laddr;
	*lid = 0;
	return roce_gid(&d->rds_own, faddr, gid);
}

static bool rds_is_local_roce(void *arg, const struct inet_addr *a)
{
	struct ipoibd *d = arg;

	return inet_addr_equal(a, &d->rds_own);
}

static void rds_stop(struct ipoibd *d)
{
	if (d->rds)
		rds_service_free(d->rds);
	d->rds = NULL;
	if (d->rds_dev_ev)
		event_free(d->rds_dev_ev);
	d->rds_dev_ev = NULL;
	if (d->rds_dev)
		fab_close(d->rds_dev);
	d->rds_dev = NULL;
}

static void rds_dev_cb(evutil_socket_t fd, short what, void *arg)
{
	struct ipoibd *d = arg;
	struct fab_event ev;

	(void)fd;
	(void)what;
	while (fab_get_event(d->rds_dev, &ev) == 1) {
		if (ev.type == FAB_EV_DEVICE_FATAL) {
			log_warnx("RDS service: the device is gone");
			rds_stop(d);
			return;
		}
	}
}

static void rds_log(void *arg, const char *line)
{
	(void)arg;
	log_info("%s", line);
}

/* No RDS is no failure either: it says why and runs on. */
static int rds_start(struct ipoibd *d, const char *spec, const char *node,
		     const char *name)
{
	static const struct rds_service_ops ops = {
		.resolve = rds_resolve, .is_local = rds_is_local,
		.ifindex = rds_ifindex, .log = rds_log,
	};
	static const struct rds_service_ops roce_ops = {
		.resolve = rds_resolve_roce, .is_local = rds_is_local_roce,
		.log = rds_log,
	};
	struct rds_ep_cfg cfg;
	struct fab_port_attr attr;
	char err[256];
	int idx;

	d->rds_dev = fab_open(spec, node, err, sizeof(err));
	if (!d->rds_dev || fab_query_port(d->rds_dev, &attr, err,
					  sizeof(err)) < 0) {
		log_warnx("RDS service: %s", err);
		rds_stop(d);
		return -1;
	}
	idx = fab_pkey_find(&attr, d->pkey);
	if (idx < 0) {
		log_warnx("RDS service: P_Key 0x%04x not in the port's table: "
			  "no RDS until it is added", d->pkey);
		rds_stop(d);
		d->rds_pkey_wait = !d->sdp_only;
		return -1;
	}
	memset(&cfg, 0, sizeof(cfg));
	cfg.pkey_index = (uint16_t)idx;
	cfg.listen_pkey = d->pkey;
	if (attr.link_layer == FAB_LINK_ETHERNET) {
		static const uint8_t v4[12] = { [10] = 0xff, [11] = 0xff };

		cfg.profile = RDS_PROFILE_RDMA_CM;
		if (!memcmp(attr.sgid.raw, v4, sizeof(v4)))
			inet_addr_v4(&d->rds_own, (const struct in_addr *)
				     (const void *)(attr.sgid.raw + 12));
		else
			inet_addr_v6(&d->rds_own, (const struct in6_addr *)
				     (const void *)attr.sgid.raw);
	}
	d->rds = rds_service_new(d->base, d->rds_dev, &cfg, name,
				 cfg.profile == RDS_PROFILE_RDMA_CM ? &roce_ops :
				 &ops, d, err, sizeof(err));
	if (!d->rds) {
		log_warnx("%s: no RDS", err);
		rds_stop(d);
		return -1;
	}
	d->rds_dev_ev = event_new(d->base, fab_dev_fd(d->rds_dev),
				  EV_READ | EV_PERSIST, rds_dev_cb, d);
	if (d->rds_dev_ev)
		event_add(d->rds_dev_ev, NULL);
	log_info("RDS service on %s%s", rds_service_name(d->rds),
		 cfg.profile == RDS_PROFILE_RDMA_CM ? ", over rdma_cm on RoCE" :
		 "");
	return 0;
}

static void rds_report(struct ipoibd *d)
{
	static char buf[65536];
	size_t n;
	char *line, *save;

	if (!d->rds)
		return;
	counters_walk(rds_service_counters, rds_service_stats(d->rds),
		      report_counter, (void *)"rds_service");
	counters_walk(rds_ep_counters, rds_service_ep_stats(d->rds),
		      report_counter, (void *)"rds");
	n = rds_service_report(d->rds, buf, sizeof(buf) - 1);
	buf[n] = 0;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		log_info("%s", line);
}

static void signal_cb(evutil_socket_t sig, short what, void *arg)
{
	struct ipoibd *d = arg;

	(void)what;
	if (sig == SIGUSR1) {
		if (d->tun)
			ipoib_tun_report(d->tun, report_line, d);
		dhcp_report(d);
		sdp_report(d);
		rds_report(d);
		return;
	}
	log_info("signal %d: leaving the groups", (int)sig);
	event_base_loopbreak(d->base);
}

/* --sdp-only: the SDP service alone, on the fabric port. */
static int sdp_only_main(struct ipoibd *d, const char *spec,
			 const char *node, const char *name)
{
	int sigs[3] = { SIGTERM, SIGINT, SIGUSR1 };
	char err[256];
	unsigned int i;

	d->base = event_base_new();
	if (!d->base)
		fatalx("event_base_new");
	d->pkey = 0xffff;
	for (i = 0; i < 3; i++) {
		d->sig_ev[i] = evsignal_new(d->base, sigs[i], signal_cb, d);
		event_add(d->sig_ev[i], NULL);
	}
	if (sdp_start(d, spec, node, name) < 0)
		return 1;
	if (!d->no_rds)
		rds_start(d, spec, node, d->rds_name);
	log_info("ready: SDP only, no IPoIB");
	if (!d->foreground && !d->detached++ &&
	    daemon_detach("ipoibd", d->verbose, d->base, err,
			  sizeof(err)) < 0)
		fatalx("%s", err);
	event_base_dispatch(d->base);
	if (d->rds && !d->exit_code)
		rds_service_drain(d->rds, 500);
	rds_stop(d);
	sdp_stop(d);
	for (i = 0; i < 3; i++)
		event_free(d->sig_ev[i]);
	event_base_free(d->base);
	log_info("stopped");
	return d->exit_code;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "fabric", required_argument, NULL, 'F' },
		{ "node", required_argument, NULL, 'n' },
		{ "pkey", required_argument, NULL, 'p' },
		{ "ifname", required_argument, NULL, 'i' },
		{ "address", required_argument, NULL, 'a' },
		{ "dhcp", no_argument, NULL, 'D' },
		{ "mtu", required_argument, NULL, 'm' },
		{ "mode", required_argument, NULL, 'M' },
		{ "cm-idle", required_argument, NULL, 'I' },
		{ "no-sdp", no_argument, NULL, 'S' },
		{ "sdp-only", no_argument, NULL, 'O' },
		{ "sdp-socket", required_argument, NULL, 'K' },
		{ "sdp-keepalive", required_argument, NULL, 'A' },
		{ "no-rds", no_argument, NULL, 'R' },
		{ "rds-socket", required_argument, NULL, 'L' },
		{ "foreground", no_argument, NULL, 'f' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	static struct ipoibd d;
	static struct ipoib_tun_cfg tc = { .link = { .pkey = 0xffff } };
	struct ipoib_tun_ops tops = { .ready = ready, .carrier = tun_carrier,
				      .error = tun_error,
				      .conflict = tun_conflict };
	const char *spec = NULL, *node = NULL, *ifname = "ib%d", *why;
	const char *sdp_name = NULL;
	int no_sdp = 0;
	char err[NL_ERRLEN];
	unsigned long long v;
	int ch, verbose = 0, sigs[3] = { SIGTERM, SIGINT, SIGUSR1 };
	unsigned int i;

	opterr = 0;
	while ((ch = getopt_long(argc, argv, "F:n:p:i:a:Dm:M:fvhV", opts,
				 NULL)) != -1) {
		switch (ch) {
		case 'F': spec = optarg; break;
		case 'n': node = optarg; break;
		case 'p':
			if (conf_parse_uint(optarg, 1, 0xffff, &v, &why) < 0) {
				fprintf(stderr, "ipoibd: --pkey '%s': %s\n",
					optarg, why);
				return 2;
			}
			if (!(v & 0x7fff)) {	/* 0x0000 and 0x8000 */
				fprintf(stderr, "ipoibd: --pkey '%s': not a "
					"P_Key\n", optarg);
				return 2;
			}
			tc.link.pkey = (uint16_t)v;
			break;
		case 'i':
			if (nl_ifname_check(optarg, err, sizeof(err)) < 0) {
				fprintf(stderr, "ipoibd: --ifname: %s\n", err);
				return 2;
			}
			ifname = optarg;
			break;
		case 'a':
			if (tc.naddrs == IPOIB_TUN_MAX_ADDRS) {
				fprintf(stderr, "ipoibd: at most %d "
					"--address\n", IPOIB_TUN_MAX_ADDRS);
				return 2;
			}
			if (inet_prefix_parse(optarg, &tc.addrs[tc.naddrs], err,
					    sizeof(err)) < 0) {
				fprintf(stderr, "ipoibd: --address: %s\n",
					err);
				return 2;
			}
			if ((why = inet_addr_not_host(
				     &tc.addrs[tc.naddrs].addr))) {
				fprintf(stderr, "ipoibd: --address %s: %s, not "
					"an interface's address\n", optarg,
					why);
				return 2;
			}
			if (tc.addrs[tc.naddrs].plen == 0) {
				fprintf(stderr, "ipoibd: --address %s: a prefix "
					"of length 0 is every address\n",
					optarg);
				return 2;
			}
			tc.naddrs++;
			break;
		case 'D': d.dhcp = 1; break;
		case 'm':
			if (conf_parse_uint(optarg, 68, 65520, &v, &why) < 0) {
				fprintf(stderr, "ipoibd: --mtu '%s': %s\n",
					optarg, why);
				return 2;
			}
			tc.link.admin_mtu = (unsigned int)v;
			break;
		case 'M':
			if (!strcmp(optarg, "connected")) {
				tc.link.connected = 1;
			} else if (strcmp(optarg, "datagram")) {
				fprintf(stderr, "ipoibd: --mode '%s': datagram "
					"or connected\n", optarg);
				return 2;
			}
			break;
		case 'I':
			if (conf_parse_uint(optarg, 1, 86400, &v, &why) < 0) {
				fprintf(stderr, "ipoibd: --cm-idle '%s': %s\n",
					optarg, why);
				return 2;
			}
			tc.link.cm_idle_s = (unsigned int)v;
			break;
		case 'S': no_sdp = 1; break;
		case 'A':
			if (conf_parse_uint(optarg, 0, 86400, &v, &why) < 0) {
				fprintf(stderr, "ipoibd: --sdp-keepalive '%s': "
					"%s\n", optarg, why);
				return 2;
			}
			d.sdp_keepalive_ms = v ? (int)v * 1000 : -1;
			break;
		case 'O': d.sdp_only = 1; break;
		case 'K':
			if (!*optarg || strlen(optarg) > 100) {
				fprintf(stderr, "ipoibd: --sdp-socket '%s': "
					"1 to 100 characters\n", optarg);
				return 2;
			}
			sdp_name = optarg;
			break;
		case 'R': d.no_rds = 1; break;
		case 'L':
			if (!*optarg || strlen(optarg) > 100) {
				fprintf(stderr, "ipoibd: --rds-socket '%s': "
					"1 to 100 characters\n", optarg);
				return 2;
			}
			d.rds_name = optarg;
			break;
		case 'f': d.foreground = 1; break;
		case 'v': verbose = 1; break;
		case 'h': usage(stdout); return 0;
		case 'V': printf("ipoibd %s\n", IBGW_VERSION); return 0;
		default:
			fprintf(stderr, "ipoibd: bad option '%s' (see "
				"--help)\n", argv[optind - 1]);
			return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "ipoibd: unexpected argument '%s'\n",
			argv[optind]);
		return 2;
	}
	if (spec && strncmp(spec, "soft:", 5) &&
	    (strncmp(spec, "verbs:", 6) || !spec[6])) {
		fprintf(stderr, "ipoibd: --fabric '%s': soft:PATH or "
			"verbs:DEVICE[:PORT[:GID]]\n", spec);
		return 2;
	}
	if (node && !fsp_node_name_ok(node)) {
		fprintf(stderr, "ipoibd: --node '%s': 1 to %d letters, digits, "
			"'-', '_' and '.'\n", node, FSP_NODE_MAX - 1);
		return 2;
	}
	if (d.sdp_only && no_sdp) {
		fprintf(stderr, "ipoibd: --sdp-only and --no-sdp exclude each "
			"other\n");
		return 2;
	}
	/* the kernel turns IPv6 off on an interface below 1280 */
	for (v = 0; tc.link.admin_mtu && tc.link.admin_mtu < 1280 &&
		    v < tc.naddrs; v++)
		if (tc.addrs[v].addr.family == AF_INET6) {
			fprintf(stderr, "ipoibd: --mtu %u: IPv6 (--address "
				"%s) needs 1280 or more\n",
				tc.link.admin_mtu, inet_prefix_str(
					&tc.addrs[v], err, sizeof(err)));
			return 2;
		}
	if (d.sdp_only && spec && !node && !strncmp(spec, "verbs:", 6))
		node = "ipoibd";	/* a real HCA has its own identity */
	if (!spec || !node) {
		fprintf(stderr, "ipoibd: --fabric and --node are required "
			"(see --help)\n");
		return 2;
	}
	/* start-up errors go to the terminal; syslog from readiness on */
	log_init("ipoibd", 1, verbose);
	d.verbose = verbose;
	signal(SIGPIPE, SIG_IGN);
	if (d.sdp_only)
		return sdp_only_main(&d, spec, node, sdp_name);
	d.spec = spec;
	d.node = node;
	d.sdp_name = sdp_name;

	d.dev = fab_open(spec, node, err, sizeof(err));
	if (!d.dev) {
		log_warnx("%s: %s", spec, err);
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
	tc.ifname = ifname;
	if (d.dhcp)
		tops.dhcp_rx = dhcp_rx;
	d.tun = ipoib_tun_new(d.base, d.dev, d.nl, &tc, &tops, &d, err,
			      sizeof(err));
	if (!d.tun) {
		log_warnx("%s", err);
		return 1;
	}
	if (d.dhcp && dhcp_init(&d) < 0)
		fatalx("out of memory");
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
		ipoib_tun_set_nocache(d.tun, 1);
	}
	for (i = 0; i < 3; i++) {
		d.sig_ev[i] = evsignal_new(d.base, sigs[i], signal_cb, &d);
		event_add(d.sig_ev[i], NULL);
	}
	if (ipoib_tun_start(d.tun, err, sizeof(err)) < 0) {
		log_warnx("%s: %s", ipoib_tun_ifname(d.tun), err);
		return 1;
	}
	d.pkey = tc.link.pkey | 0x8000;
	if (!ipoib_link_has_pkey(ipoib_tun_link(d.tun))) {
		/* as the kernel's interface: there, without carrier, until
		 * the subnet manager adds the key (PKEY_CHANGE) */
		log_warnx("%s (ifindex %d): P_Key 0x%04x is not in the port's "
			  "table: no carrier until the subnet manager adds it",
			  ipoib_tun_ifname(d.tun), ipoib_tun_ifindex(d.tun),
			  d.pkey);
		if (!d.foreground && !d.detached++ &&
		    daemon_detach("ipoibd", d.verbose, d.base, err,
				  sizeof(err)) < 0)
			fatalx("%s", err);
	} else {
		log_info("%s (ifindex %d): joining the broadcast group of "
			 "P_Key 0x%04x", ipoib_tun_ifname(d.tun),
			 ipoib_tun_ifindex(d.tun), d.pkey);
	}
	if (!no_sdp)
		sdp_start(&d, spec, node, sdp_name);
	if (!d.no_rds)
		rds_start(&d, spec, node, d.rds_name);
	event_base_dispatch(d.base);

	/* clean shutdown: SA leaves (waited for, briefly), then the
	 * interface goes with its fd */
	if (d.rds && !d.exit_code)
		rds_service_drain(d.rds, 500);	/* its last ACKs out */
	event_free(d.dev_ev);
	rds_stop(&d);
	sdp_stop(&d);
	if (d.dhcp_ev) {
		/* the lease stays the server's until it ends (no RELEASE,
		 * as dhclient's default): the address goes with the
		 * interface */
		route_del(&d);
		event_free(d.dhcp_ev);
	}
	ipoib_tun_free(d.tun, d.exit_code ? 0 : 1000);
	if (d.mon_ev)
		event_free(d.mon_ev);
	for (i = 0; i < 3; i++)
		event_free(d.sig_ev[i]);
	nl_ctx_close(d.nl);
	fab_close(d.dev);
	event_base_free(d.base);
	log_info("stopped");
	return d.exit_code;
}

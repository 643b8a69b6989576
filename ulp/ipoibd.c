// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ipoibd: a user-space IPoIB host.  It attaches to a fabric as a node,
 * runs one IPoIB datagram-mode link (ulp/ipoib_link.c) in a partition and
 * moves IP packets between it and a Linux TUN interface in the current
 * network namespace, so that unmodified programs there act as IB hosts.
 *
 * Why TUN and not TAP: IPoIB has no Ethernet header and 20-byte link
 * addresses.  A TUN interface carries IP packets as IPoIB does; the link
 * module does ARP and neighbour discovery with the real 20-byte addresses
 * (the kernel marks a TUN interface NOARP and never invents 6-byte MACs that
 * exist nowhere); IPv4 and IPv6 work unchanged above it.  Next hops for
 * off-link destinations come from the kernel's routing table (rtnetlink),
 * cached and flushed when routes change.
 *
 * The TUN device has a virtio-net header (IFF_VNET_HDR) and offers TSO and
 * checksum offload, as the offloads of an IPoIB HCA do: the kernel hands
 * over TCP super-packets that are cut here into segments of the link MTU
 * (ulp/ip_gso.c), and received segments of one connection are coalesced
 * into super-packets again before they go up, so that both TCP stacks
 * handle one packet where the wire carried dozens.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include <event2/event.h>

#include "conf/conf.h"
#include "conf/log.h"
#include "fabric/fabric.h"
#include "netlink/nl_link.h"
#include "ulp/ip_gso.h"
#include "ulp/ipoib_link.h"

#define MAX_ADDRS	16
#define NH_CACHE	256
#define TUN_BATCH	64
#define TUN_HEADROOM	6	/* + GSO_VNET_HDR_LEN = 16 */

struct nh_entry {
	int valid;
	struct ipoib_ip dst, nh;
	int unreachable;
};

struct ipoibd {
	struct event_base *base;
	struct fab_dev *dev;
	struct ipoib_link *link;
	struct nl_sock_ctx *nl;
	int tun_fd, ifindex;
	char ifname[IFNAMSIZ];
	struct nl_prefix addrs[MAX_ADDRS];
	unsigned int naddrs;
	int configured, ready, foreground, verbose;
	int no_nh_cache;	/* no route monitor: look up every time */
	struct event *tun_ev, *dev_ev, *mon_ev, *sig_ev[3];
	struct nh_entry nh[NH_CACHE];
	int exit_code;
	int vnet;		/* the TUN has a virtio-net header */
	uint64_t tx_offload_bad;	/* super-packets we could not cut */
	uint64_t tx_super;		/* TCP super-packets cut */
	struct gso_gro gro;
	/* the IP packet after the virtio-net header starts 16-byte aligned */
	uint8_t buf[TUN_HEADROOM + GSO_VNET_HDR_LEN + GSO_MAX_PKT + 1]
		__attribute__((aligned(16)));
};

static void usage(FILE *f)
{
	fprintf(f,
"usage: ipoibd --fabric SPEC --node NAME [--pkey PKEY] [--ifname IFNAME]\n"
"              [--address CIDR]... [--mtu BYTES] [-f] [-v]\n"
"  -F, --fabric SPEC    soft:PATH (ibfabricd), verbs:DEV[:PORT]\n"
"  -n, --node NAME      the node to attach as (soft fabric)\n"
"  -p, --pkey PKEY      partition (default 0xffff)\n"
"  -i, --ifname IFNAME  interface name (default ib%%d)\n"
"  -a, --address CIDR   an IPv4 or IPv6 address with prefix; repeatable\n"
"  -m, --mtu BYTES      at most this MTU (default: the broadcast group's - 4)\n"
"  -f, --foreground     stay in the foreground, log to stderr\n"
"  -v, --verbose        debug logging\n"
"  -h, --help, -V, --version\n"
"Signals: TERM/INT leave the groups and remove the interface; USR1 logs\n"
"the link's counters, neighbours and groups.\n");
}

static void to_ipoib_ip(const struct nl_ipaddr *a, struct ipoib_ip *o)
{
	memset(o, 0, sizeof(*o));
	o->family = a->family;
	memcpy(o->raw, a->raw, a->family == AF_INET ? 4 : 16);
}

/* ---- next hops ----------------------------------------------------------- */

static int prefix_match(const struct nl_prefix *p, const struct ipoib_ip *a)
{
	unsigned int bits = p->plen, i;
	const uint8_t *x = p->addr.raw, *y = a->raw;

	if (p->addr.family != a->family)
		return 0;
	for (i = 0; bits >= 8; i++, bits -= 8)
		if (x[i] != y[i])
			return 0;
	return !bits || !((x[i] ^ y[i]) & (uint8_t)(0xff << (8 - bits)));
}

static int nexthop(void *arg, const struct ipoib_ip *dst, struct ipoib_ip *nh)
{
	struct ipoibd *d = arg;
	unsigned int i, h = 0, n = dst->family == AF_INET ? 4 : 16;
	struct nh_entry *e;
	struct nl_ipaddr q;
	struct nl_route r;
	char err[NL_ERRLEN];

	/* on one of our prefixes: the destination itself */
	for (i = 0; i < d->naddrs; i++) {
		if (prefix_match(&d->addrs[i], dst)) {
			*nh = *dst;
			return 0;
		}
	}
	if (dst->family == AF_INET6 && IN6_IS_ADDR_LINKLOCAL(&dst->v6)) {
		*nh = *dst;
		return 0;
	}
	for (i = 0; i < n; i++)
		h = h * 31 + dst->raw[i];
	e = &d->nh[h % NH_CACHE];
	if (d->no_nh_cache)
		e->valid = 0;
	if (e->valid && e->dst.family == dst->family &&
	    !memcmp(e->dst.raw, dst->raw, n)) {
		*nh = e->nh;
		return e->unreachable ? -1 : 0;
	}
	memset(&q, 0, sizeof(q));
	q.family = dst->family;
	memcpy(q.raw, dst->raw, n);
	e->valid = 1;
	e->dst = *dst;
	e->unreachable = 0;
	/* no oif in the lookup: with one, Linux answers an IPv4 destination
	 * that no route covers as if it were on that link */
	if (nl_route_get(d->nl, &q, 0, &r, err, sizeof(err)) < 0 ||
	    (r.oif && r.oif != d->ifindex)) {
		e->unreachable = 1;
		return -1;
	}
	if (r.has_gateway && r.gateway.family == dst->family)
		to_ipoib_ip(&r.gateway, &e->nh);
	else
		e->nh = *dst;
	*nh = e->nh;
	return 0;
}

static void monitor_cb(evutil_socket_t fd, short what, void *arg)
{
	struct ipoibd *d = arg;
	char err[NL_ERRLEN];

	(void)fd;
	(void)what;
	if (nl_monitor_read(d->nl, err, sizeof(err)) != 0)
		memset(d->nh, 0, sizeof(d->nh));	/* routes changed */
}

/* ---- the interface ------------------------------------------------------- */

static void tun_write(void *arg, const struct gso_vnet_hdr *h,
		      const uint8_t *pkt, size_t len)
{
	struct ipoibd *d = arg;
	uint8_t vh[GSO_VNET_HDR_LEN];
	struct iovec iov[2] = {
		{ .iov_base = vh, .iov_len = sizeof(vh) },
		{ .iov_base = (void *)pkt, .iov_len = len },
	};

	gso_hdr_put(vh, h);
	if (writev(d->tun_fd, iov, 2) < 0 && errno != EAGAIN)
		log_debug("tun write: %s", strerror(errno));
}

static void rx(void *arg, const uint8_t *pkt, size_t len)
{
	struct ipoibd *d = arg;

	if (d->vnet) {
		gso_gro_receive(&d->gro, pkt, len, tun_write, d);
		return;
	}
	if (write(d->tun_fd, pkt, len) < 0 && errno != EAGAIN)
		log_debug("tun write: %s", strerror(errno));
}

static void rx_done(void *arg)
{
	struct ipoibd *d = arg;

	if (d->vnet)
		gso_gro_flush(&d->gro, tun_write, d);
}

/*
 * The IPv6 link-local address, as Linux IPoIB makes it
 * (addrconf_ifid_infiniband): fe80:: and the port GUID with the
 * universal/local bit set.  The kernel's own (addr_gen_mode, turned off
 * before the link comes up) would be an address nobody answers for.
 */
static void add_link_local(struct ipoibd *d)
{
	struct nl_prefix p;
	struct ipoib_addr hw;
	struct ipoib_ip a;
	char err[NL_ERRLEN];

	ipoib_link_hwaddr(d->link, &hw);
	memset(&p, 0, sizeof(p));
	p.addr.family = AF_INET6;
	p.addr.raw[0] = 0xfe;
	p.addr.raw[1] = 0x80;
	memcpy(p.addr.raw + 8, hw.gid.raw + 8, 8);
	p.addr.raw[8] |= 0x02;
	p.plen = 64;
	if (nl_ifaddr_add(d->nl, d->ifindex, &p, NL_ADDR_NODAD, err,
			  sizeof(err)) < 0 && errno != EEXIST) {
		log_warnx("%s", err);
		return;
	}
	to_ipoib_ip(&p.addr, &a);
	a.plen = 64;
	ipoib_link_add_addr(d->link, &a);
}

/* No kernel-made IPv6 link-local address on the interface. */
static void no_addr_gen(const char *ifname)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/sys/net/ipv6/conf/%s/"
		 "addr_gen_mode", ifname);
	f = fopen(path, "w");
	if (!f)
		return;		/* no IPv6 in this namespace */
	fputs("1\n", f);
	fclose(f);
}

static void carrier(void *arg, int up, unsigned int mtu)
{
	struct ipoibd *d = arg;
	char err[NL_ERRLEN], p[NL_PREFIXSTRLEN];
	struct ipoib_addr hw;
	char hws[IPOIB_ADDR_STRLEN];
	unsigned int i;

	log_info("%s: carrier %s, MTU %u", d->ifname, up ? "up" : "down",
		 mtu);
	if (!up)
		return;
	if (nl_link_set_mtu(d->nl, d->ifindex, mtu, err, sizeof(err)) < 0)
		log_warnx("%s", err);
	if (!d->configured) {
		for (i = 0; i < d->naddrs; i++) {
			if (nl_ifaddr_add(d->nl, d->ifindex, &d->addrs[i],
					  NL_ADDR_NODAD, err,
					  sizeof(err)) < 0 && errno != EEXIST)
				log_warnx("%s", err);
			else
				log_debug("%s: address %s", d->ifname,
					  nl_prefix_str(&d->addrs[i], p,
							sizeof(p)));
		}
		if (nl_link_set_up(d->nl, d->ifindex, 1, err,
				   sizeof(err)) < 0)
			log_warnx("%s", err);
		add_link_local(d);
		d->configured = 1;
	}
	if (!d->ready) {
		d->ready = 1;
		ipoib_link_hwaddr(d->link, &hw);
		ipoib_addr_ntop(&hw, hws, sizeof(hws));
		log_info("ready: %s up, MTU %u, address %s", d->ifname, mtu,
			 hws);
		if (!d->foreground) {
			log_init("ipoibd", 0, d->verbose);
			if (daemon(0, 0) < 0)
				log_warn("daemon");
		}
	}
}

static void xmit(void *arg, const uint8_t *pkt, size_t len)
{
	struct ipoibd *d = arg;

	ipoib_link_xmit(d->link, pkt, len);
}

static void tun_cb(evutil_socket_t fd, short what, void *arg)
{
	struct ipoibd *d = arg;
	enum gso_err e;
	int i;
	ssize_t n;

	(void)what;
	ipoib_link_tx_hold(d->link, 1);
	for (i = 0; i < TUN_BATCH; i++) {
		uint8_t *p = d->buf + (d->vnet ? TUN_HEADROOM : 0);

		n = read(fd, p, sizeof(d->buf) - TUN_HEADROOM);
		if (n <= 0)
			break;
		if (!d->vnet) {
			ipoib_link_xmit(d->link, p, (size_t)n);
			continue;
		}
		if (n > GSO_VNET_HDR_LEN) {
			struct gso_vnet_hdr h;

			gso_hdr_get(&h, p);
			e = gso_segment(&h, p + GSO_VNET_HDR_LEN,
					(size_t)n - GSO_VNET_HDR_LEN, xmit, d);
			if (e == GSO_OK && h.gso_type != GSO_TYPE_NONE)
				d->tx_super++;
		} else {
			e = GSO_BAD_HEADER;
		}
		if (e != GSO_OK) {
			d->tx_offload_bad++;
			log_debug("%s: dropped a packet from the kernel: %s",
				  d->ifname, gso_strerror(e));
		}
	}
	ipoib_link_tx_hold(d->link, 0);
}

static void report(struct ipoibd *d)
{
	static char out[65536];
	const char *what[] = { "stats", "neighbors", "groups" };
	char *line, *save = NULL;
	unsigned int i;

	for (i = 0; i < 3; i++) {
		ipoib_link_report(d->link, what[i], out, sizeof(out));
		for (line = strtok_r(out, "\n", &save); line;
		     line = strtok_r(NULL, "\n", &save))
			log_info("%s %s", what[i], line);
	}
	log_info("stats offload.tx_super_packets %llu",
		 (unsigned long long)d->tx_super);
	log_info("stats offload.rx_coalesced %llu",
		 (unsigned long long)d->gro.merged);
	log_info("stats offload.rx_bad_checksum %llu",
		 (unsigned long long)d->gro.bad_csum);
	log_info("stats drop.tx_offload_bad %llu",
		 (unsigned long long)d->tx_offload_bad);
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
		if (ev.type == FAB_EV_DEVICE_FATAL) {
			log_warnx("the fabric is gone");
			d->exit_code = 1;
			event_base_loopbreak(d->base);
			return;
		}
		ipoib_link_event(d->link, ev.type);
	}
}

static void signal_cb(evutil_socket_t sig, short what, void *arg)
{
	struct ipoibd *d = arg;

	(void)what;
	if (sig == SIGUSR1) {
		report(d);
		return;
	}
	log_info("signal %d: leaving the groups", (int)sig);
	event_base_loopbreak(d->base);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "fabric", required_argument, NULL, 'F' },
		{ "node", required_argument, NULL, 'n' },
		{ "pkey", required_argument, NULL, 'p' },
		{ "ifname", required_argument, NULL, 'i' },
		{ "address", required_argument, NULL, 'a' },
		{ "mtu", required_argument, NULL, 'm' },
		{ "foreground", no_argument, NULL, 'f' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	static struct ipoibd d;
	struct ipoib_link_cfg cfg = { .pkey = 0xffff };
	struct ipoib_link_ops ops = { .rx = rx, .rx_done = rx_done,
				      .carrier = carrier, .nexthop = nexthop };
	const char *spec = NULL, *node = NULL, *ifname = "ib%d", *why;
	char err[NL_ERRLEN];
	unsigned long long v;
	int ch, verbose = 0, sigs[3] = { SIGTERM, SIGINT, SIGUSR1 };
	unsigned int i;

	opterr = 0;
	while ((ch = getopt_long(argc, argv, "F:n:p:i:a:m:fvhV", opts,
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
			cfg.pkey = (uint16_t)v;
			break;
		case 'i':
			if (nl_ifname_check(optarg, err, sizeof(err)) < 0) {
				fprintf(stderr, "ipoibd: --ifname: %s\n", err);
				return 2;
			}
			ifname = optarg;
			break;
		case 'a':
			if (d.naddrs == MAX_ADDRS) {
				fprintf(stderr, "ipoibd: at most %d "
					"--address\n", MAX_ADDRS);
				return 2;
			}
			if (nl_prefix_parse(optarg, &d.addrs[d.naddrs], err,
					    sizeof(err)) < 0) {
				fprintf(stderr, "ipoibd: --address: %s\n",
					err);
				return 2;
			}
			d.naddrs++;
			break;
		case 'm':
			if (conf_parse_uint(optarg, 68, 65520, &v, &why) < 0) {
				fprintf(stderr, "ipoibd: --mtu '%s': %s\n",
					optarg, why);
				return 2;
			}
			cfg.admin_mtu = (unsigned int)v;
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
	if (!spec || !node) {
		fprintf(stderr, "ipoibd: --fabric and --node are required "
			"(see --help)\n");
		return 2;
	}
	/* start-up errors go to the terminal; syslog from readiness on */
	log_init("ipoibd", 1, verbose);
	d.verbose = verbose;
	signal(SIGPIPE, SIG_IGN);

	if (fab_open(spec, node, &d.dev) < 0) {
		log_warnx("%s: %s", spec, fab_strerror());
		return 1;
	}
	d.nl = nl_ctx_open(err, sizeof(err));
	if (!d.nl) {
		log_warnx("%s", err);
		return 1;
	}
	/* IFF_NAPI: what we write goes through GRO as well */
	d.tun_fd = nl_tun_open(ifname, NL_TUN_VNET_HDR | NL_TUN_NAPI,
			       &d.ifindex, err, sizeof(err));
	if (d.tun_fd < 0 && errno == EINVAL)	/* a kernel without it */
		d.tun_fd = nl_tun_open(ifname, NL_TUN_VNET_HDR, &d.ifindex,
				       err, sizeof(err));
	if (d.tun_fd < 0) {
		log_warnx("%s", err);
		return 1;
	}
	d.vnet = 1;
	if (nl_tun_set_offload(d.tun_fd, 1, err, sizeof(err)) < 0)
		log_warnx("%s: packets go one by one", err);
	if (!if_indextoname((unsigned int)d.ifindex, d.ifname))
		snprintf(d.ifname, sizeof(d.ifname), "%s", ifname);
	no_addr_gen(d.ifname);
	d.base = event_base_new();
	if (!d.base)
		fatalx("event_base_new");
	d.link = ipoib_link_new(d.base, d.dev, &cfg, &ops, &d);
	if (!d.link) {
		log_warnx("IPoIB link: %s", fab_strerror());
		return 1;
	}
	for (i = 0; i < d.naddrs; i++) {
		struct ipoib_ip a;

		to_ipoib_ip(&d.addrs[i].addr, &a);
		a.plen = (uint8_t)d.addrs[i].plen;
		ipoib_link_add_addr(d.link, &a);
	}
	d.tun_ev = event_new(d.base, d.tun_fd, EV_READ | EV_PERSIST, tun_cb,
			     &d);
	d.dev_ev = event_new(d.base, fab_dev_fd(d.dev), EV_READ | EV_PERSIST,
			     dev_cb, &d);
	event_add(d.tun_ev, NULL);
	event_add(d.dev_ev, NULL);
	if (nl_monitor_open(d.nl, NL_CHG_ROUTE, err, sizeof(err)) >= 0) {
		d.mon_ev = event_new(d.base, nl_monitor_fd(d.nl),
				     EV_READ | EV_PERSIST, monitor_cb, &d);
		event_add(d.mon_ev, NULL);
	} else {
		log_warnx("route monitor: %s (next hops are looked up for "
			  "every packet)", err);
		d.no_nh_cache = 1;
	}
	for (i = 0; i < 3; i++) {
		d.sig_ev[i] = evsignal_new(d.base, sigs[i], signal_cb, &d);
		event_add(d.sig_ev[i], NULL);
	}
	ipoib_link_start(d.link);
	log_info("%s (ifindex %d): joining the broadcast group of P_Key "
		 "0x%04x", d.ifname, d.ifindex, cfg.pkey | 0x8000);
	event_base_dispatch(d.base);

	/* clean shutdown: SA leaves (waited for, briefly), then the
	 * interface goes with its fd */
	event_free(d.tun_ev);
	event_free(d.dev_ev);
	ipoib_link_free(d.link, d.exit_code ? 0 : 1000);
	close(d.tun_fd);
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

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * An IPoIB link on a Linux TUN interface (see ipoib_tun.h): the glue that
 * ipoibd and ibgwd's router mode share.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/if_addr.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <event2/event.h>

#include "conf/errbuf.h"
#include "fabric/fabric.h"
#include "inet/byteorder.h"
#include "inet/gso.h"
#include "inet/ip.h"
#include "inet/nd.h"
#include "inet/tcp_mss.h"
#include "ulp/ipoib/ipoib_tun.h"

#define NH_CACHE	256
#define TUN_BATCH	64
#define TUN_HEADROOM	6	/* + GSO_VNET_HDR_LEN = 16 */
#define DAD_POLL_MS	200	/* tentative addresses are looked at so often */

_Static_assert(IPOIB_TUN_MAX_ADDRS <= 32, "dad_pending holds a bit each");

struct nh_entry {
	int valid;
	struct inet_addr dst, nh;
	int unreachable;
};

struct ipoib_tun {
	struct event_base *base;
	struct ipoib_link *link;
	struct nl_sock_ctx *nl;
	struct ipoib_tun_cfg cfg;
	struct ipoib_tun_ops ops;
	void *arg;
	int tun_fd, ifindex;
	char ifname[IFNAMSIZ];
	int configured, ready;
	/* the MTU we last gave the interface, and one the operator set
	 * over it (ip link set mtu), kept as the kernel's admin_mtu */
	unsigned int mtu_set, mtu_admin;
	/* TUNSETCARRIER works: the interface's carrier is the link's */
	int carrier_ctl;
	int no_nh_cache;	/* no route monitor: look up every time */
	struct event *tun_ev;
	/* cfg.addrs (bit i) the kernel's duplicate address detection has
	 * not finished with, and the timer that looks at them */
	uint32_t dad_pending;	/* IPOIB_TUN_MAX_ADDRS bits */
	struct event *dad_ev;
	int rd_err;		/* errno that stopped the reads, or 0 */
	int rd_stopped;		/* reads wait for the link (tx_ready) */
	struct nh_entry nh[NH_CACHE];
	int vnet;		/* the TUN has a virtio-net header */
	struct ipoib_tun_stats st;
	struct gso_gro gro;
	/* the IP packet after the virtio-net header starts 16-byte aligned */
	uint8_t buf[TUN_HEADROOM + GSO_VNET_HDR_LEN + GSO_MAX_PKT + 1]
		__attribute__((aligned(16)));
};

/* ---- next hops ----------------------------------------------------------- */

static int nexthop(void *arg, const struct inet_addr *dst, struct inet_addr *nh)
{
	struct ipoib_tun *d = arg;
	unsigned int i, h = 0, n = dst->family == AF_INET ? 4 : 16;
	struct nh_entry *e;
	struct nl_route r;
	char err[NL_ERRLEN];

	/* on one of our prefixes: the destination itself */
	for (i = 0; i < d->cfg.naddrs; i++) {
		if (inet_prefix_contains(&d->cfg.addrs[i], dst)) {
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
	if (e->valid && inet_addr_equal(&e->dst, dst)) {
		*nh = e->nh;
		return e->unreachable ? -1 : 0;
	}
	e->valid = 1;
	e->dst = *dst;
	e->unreachable = 0;
	/* no oif in the lookup: with one, Linux answers an IPv4 destination
	 * that no route covers as if it were on that link */
	if (nl_route_get(d->nl, dst, 0, &r, err, sizeof(err)) < 0 ||
	    (r.oif && r.oif != d->ifindex)) {
		e->unreachable = 1;
		return -1;
	}
	if (r.has_gateway && r.gateway.family == dst->family)
		e->nh = r.gateway;
	else
		e->nh = *dst;
	*nh = e->nh;
	return 0;
}

int ipoib_tun_nexthop(struct ipoib_tun *t, const struct inet_addr *dst,
		      struct inet_addr *nh)
{
	return nexthop(t, dst, nh);
}

int ipoib_tun_src_addr(const struct ipoib_tun *t, int family,
		       struct inet_addr *src)
{
	const struct inet_addr *a, *found = NULL;
	unsigned int i;

	for (i = 0; i < t->cfg.naddrs; i++) {
		a = &t->cfg.addrs[i].addr;
		if (a->family != family)
			continue;
		if (!found || (IN6_IS_ADDR_LINKLOCAL(&found->v6) &&
			       family == AF_INET6))
			found = a;
	}
	if (!found)
		return -1;
	*src = *found;
	return 0;
}

static void tun_error(struct ipoib_tun *d, const char *msg);

int ipoib_tun_addr_add(struct ipoib_tun *t, const struct inet_prefix *p,
		       char *err, size_t errlen)
{
	char why[NL_ERRLEN];

	if (ipoib_tun_is_own(t, &p->addr))
		return errbuf_fail(err, errlen, EEXIST, "%s: address there "
				   "already", t->ifname);
	if (p->addr.family != AF_INET || t->cfg.naddrs >= IPOIB_TUN_MAX_ADDRS)
		return errbuf_fail(err, errlen, p->addr.family != AF_INET ?
				   EAFNOSUPPORT : ENOSPC, "%s: no room for "
				   "another address", t->ifname);
	if (ipoib_link_add_addr(t->link, p, why, sizeof(why)) < 0)
		return errbuf_fail(err, errlen, errno, "%s", why);
	t->cfg.addrs[t->cfg.naddrs++] = *p;
	memset(t->nh, 0, sizeof(t->nh));
	/* before the carrier first comes, carrier() adds cfg.addrs */
	if (t->configured &&
	    nl_ifaddr_add(t->nl, t->ifindex, p, 0, why, sizeof(why)) < 0 &&
	    errno != EEXIST) {
		ipoib_tun_addr_del(t, &p->addr);
		return errbuf_fail(err, errlen, errno, "%s", why);
	}
	return 0;
}

/* cfg.addrs[i] no longer ours: out of the table and the link */
static void cfg_remove(struct ipoib_tun *t, unsigned int i)
{
	struct inet_addr a = t->cfg.addrs[i].addr;
	uint32_t low;

	memmove(&t->cfg.addrs[i], &t->cfg.addrs[i + 1],
		(t->cfg.naddrs - i - 1) * sizeof(t->cfg.addrs[0]));
	t->cfg.naddrs--;
	/* the pending DAD bits of the ones after it move down with them */
	low = t->dad_pending & ((1u << i) - 1);
	t->dad_pending = low | ((t->dad_pending >> 1) & ~((1u << i) - 1));
	memset(t->nh, 0, sizeof(t->nh));
	ipoib_link_del_addr(t->link, &a);
}

int ipoib_tun_addr_del(struct ipoib_tun *t, const struct inet_addr *a)
{
	struct inet_prefix p;
	char why[NL_ERRLEN];
	unsigned int i;

	for (i = 0; i < t->cfg.naddrs; i++)
		if (inet_addr_equal(&t->cfg.addrs[i].addr, a))
			break;
	if (i == t->cfg.naddrs) {
		errno = ENOENT;
		return -1;
	}
	p = t->cfg.addrs[i];
	cfg_remove(t, i);
	if (t->configured &&
	    nl_ifaddr_del(t->nl, t->ifindex, &p, why, sizeof(why)) < 0 &&
	    errno != EADDRNOTAVAIL)
		tun_error(t, why);
	return 0;
}

int ipoib_tun_is_own(const struct ipoib_tun *t, const struct inet_addr *a)
{
	unsigned int i;

	for (i = 0; i < t->cfg.naddrs; i++)
		if (inet_addr_equal(&t->cfg.addrs[i].addr, a))
			return 1;
	return 0;
}

/* IPv6 forwarding on the interface, as the kernel has it: our
 * advertisements say whether we are a router (ipoib_link_set_router). */
static void router_check(struct ipoib_tun *t)
{
	char path[64 + IFNAMSIZ], v = '0';
	FILE *f;

	snprintf(path, sizeof(path), "/proc/sys/net/ipv6/conf/%s/forwarding",
		 t->ifname);
	f = fopen(path, "re");
	if (!f)
		return;
	if (fread(&v, 1, 1, f) != 1)
		v = '0';
	fclose(f);
	ipoib_link_set_router(t->link, v != '0');
}

void ipoib_tun_routes_changed(struct ipoib_tun *t)
{
	memset(t->nh, 0, sizeof(t->nh));
	router_check(t);
}

void ipoib_tun_set_nocache(struct ipoib_tun *t, int nocache)
{
	t->no_nh_cache = nocache;
}

/* ---- packets ------------------------------------------------------------- */

static void tun_write(void *arg, const struct gso_vnet_hdr *h,
		      const uint8_t *pkt, size_t len)
{
	struct ipoib_tun *d = arg;
	uint8_t vh[GSO_VNET_HDR_LEN];
	struct iovec iov[2] = {
		{ .iov_base = vh, .iov_len = sizeof(vh) },
		{ .iov_base = (void *)pkt, .iov_len = len },
	};

	gso_hdr_put(vh, h);
	if (writev(d->tun_fd, iov, 2) < 0 && errno != EAGAIN)
		d->st.rx_tun_write++;
}

/*
 * A Neighbour Advertisement the link hands up (one to a group: an answer
 * to duplicate address detection) loses its 20-byte link-layer option:
 * the kernel takes only options of the TUN's address length (none) and
 * drops the message otherwise, and it needs only the target.
 */
static const uint8_t *na_strip(const uint8_t *pkt, size_t *len, uint8_t *buf,
			       size_t cap)
{
	struct ipoib_nd nd;
	size_t n;

	if (*len < INET_IPV6_HDR_LEN + INET_ND_NS_NA_MSG_LEN ||
	    pkt[0] >> 4 != 6 || pkt[6] != INET_PROTO_ICMPV6 ||
	    pkt[40] != INET_ND_NA || ipoib_nd_decode(pkt, *len, &nd) !=
	    INET_OK || !nd.has_tlla)
		return pkt;
	n = ipoib_nd_build_na(&nd.ip.src, &nd.ip.dst, &nd.target, nd.flags,
			      NULL, buf, cap);
	if (!n)
		return pkt;
	*len = n;
	return buf;
}

/* An unfragmented IPv4 UDP datagram to port 68: its payload to
 * ops.dhcp_rx (an empty one when the UDP length is wrong, which the client
 * counts as malformed), 1; else 0 (the TUN's). */
static int dhcp_take(struct ipoib_tun *d, const uint8_t *pkt, size_t len)
{
	struct inet_ipv4_info ip;
	const uint8_t *u;
	size_t ulen;

	if (len < 28 || pkt[0] >> 4 != 4 || pkt[9] != IPPROTO_UDP ||
	    inet_ipv4_check(pkt, len, &ip) != INET_OK ||
	    (ip.frag & 0x3fff) || ip.tot_len < ip.hdr_len + 8u)
		return 0;
	u = pkt + ip.hdr_len;
	if (be16_get(u + 2) != 68)
		return 0;
	ulen = be16_get(u + 4);
	if (ulen < 8 || ulen > (size_t)(ip.tot_len - ip.hdr_len))
		ulen = 8;
	d->ops.dhcp_rx(d->arg, u + 8, ulen - 8);
	return 1;
}

/* A packet from the link for the host. */
static void rx(void *arg, const uint8_t *pkt, size_t len)
{
	struct ipoib_tun *d = arg;
	uint8_t na[IPOIB_ND_NS_NA_LEN];

	pkt = na_strip(pkt, &len, na, sizeof(na));
	if (d->ops.dhcp_rx && dhcp_take(d, pkt, len))
		return;

	if (d->cfg.mss_mtu && len <= GSO_MAX_PKT && tcp_maybe_syn(pkt, len)) {
		/* a SYN to clamp is changed in a copy (pkt is the link's) */
		static uint8_t cp[GSO_MAX_PKT];

		memcpy(cp, pkt, len);
		if (tcp_mss_clamp(cp, len, d->cfg.mss_mtu)) {
			d->st.mss_clamped++;
			pkt = cp;
		}
	}
	if (d->vnet) {
		gso_gro_receive(&d->gro, pkt, len, tun_write, d);
		return;
	}
	if (write(d->tun_fd, pkt, len) < 0 && errno != EAGAIN)
		d->st.rx_tun_write++;
}

static void rx_done(void *arg)
{
	struct ipoib_tun *d = arg;

	if (d->vnet)
		gso_gro_flush(&d->gro, tun_write, d);
}

static void tx_ready(void *arg)
{
	struct ipoib_tun *d = arg;

	if (!d->rd_stopped)
		return;
	d->rd_stopped = 0;
	if (d->rd_err)
		return;
	event_add(d->tun_ev, NULL);
	event_active(d->tun_ev, EV_READ, 0);
}

/* A packet from the host for the link (cut and checksummed). */
static void xmit(void *arg, const uint8_t *pkt, size_t len)
{
	struct ipoib_tun *d = arg;

	if (d->cfg.mss_mtu &&
	    tcp_mss_clamp((uint8_t *)pkt, len, d->cfg.mss_mtu))
		d->st.mss_clamped++;
	ipoib_link_xmit(d->link, pkt, len);
}

static void tun_cb(evutil_socket_t fd, short what, void *arg)
{
	struct ipoib_tun *d = arg;
	enum gso_err e;
	int i;
	ssize_t n;

	(void)what;
	ipoib_link_tx_hold(d->link, 1);
	for (i = 0; i < TUN_BATCH; i++) {
		uint8_t *p = d->buf + (d->vnet ? TUN_HEADROOM : 0);

		if (ipoib_link_tx_stopped(d->link)) {
			/* a connection's queue is full: what the host
			 * sends waits in the kernel (its TCP backs off)
			 * instead of being lost here */
			d->rd_stopped = 1;
			event_del(d->tun_ev);
			break;
		}
		n = read(fd, p, sizeof(d->buf) - TUN_HEADROOM);
		if (n < 0 && errno != EAGAIN && errno != EINTR) {
			/* the interface was deleted under us (EBADFD): the
			 * descriptor stays readable, in error, for good */
			d->rd_err = errno;
			event_del(d->tun_ev);
			break;
		}
		if (n <= 0)
			break;
		if (!d->vnet) {
			xmit(d, p, (size_t)n);
			continue;
		}
		if (n > GSO_VNET_HDR_LEN) {
			struct gso_vnet_hdr h;

			gso_hdr_get(&h, p);
			e = gso_segment(&h, p + GSO_VNET_HDR_LEN,
					(size_t)n - GSO_VNET_HDR_LEN, xmit, d);
			if (e == GSO_OK && h.gso_type != GSO_TYPE_NONE)
				d->st.tx_super++;
		} else {
			e = GSO_BAD_HEADER;
		}
		if (e != GSO_OK)
			d->st.tx_offload_bad++;
	}
	ipoib_link_tx_hold(d->link, 0);
}

/* ---- the interface ------------------------------------------------------- */

/* A set-up step that failed but leaves the interface usable: the owner
 * hears it (and logs it) through ops->error. */
static void tun_error(struct ipoib_tun *d, const char *msg)
{
	if (d->ops.error)
		d->ops.error(d->arg, d, msg);
}

/*
 * The IPv6 link-local address, as Linux IPoIB makes it
 * (addrconf_ifid_infiniband): fe80:: and the port GUID with the
 * universal/local bit set.  The kernel's own (addr_gen_mode, turned off
 * before the link comes up) would be an address nobody answers for.
 */
static void add_link_local(struct ipoib_tun *d, unsigned int mtu)
{
	struct inet_prefix p;
	struct ipoib_addr hw;
	char err[NL_ERRLEN];

	if (mtu < 1280)
		return;		/* the kernel has IPv6 off on the interface */
	ipoib_link_hwaddr(d->link, &hw);
	memset(&p, 0, sizeof(p));
	p.addr.family = AF_INET6;
	ipoib_link_local(&hw.gid, &p.addr.v6);
	p.plen = 64;
	if (nl_ifaddr_add(d->nl, d->ifindex, &p, NL_ADDR_NODAD, err,
			  sizeof(err)) < 0 && errno != EEXIST) {
		tun_error(d, err);
		return;
	}
	if (ipoib_link_add_addr(d->link, &p, err, sizeof(err)) < 0)
		tun_error(d, err);
}

static void ipv6_conf(const char *ifname, const char *key, const char *val)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/sys/net/ipv6/conf/%s/%s",
		 ifname, key);
	f = fopen(path, "w");
	if (!f)
		return;		/* no IPv6 in this namespace */
	fputs(val, f);
	fclose(f);
}

/*
 * No kernel-made IPv6 link-local address on the interface; duplicate
 * address detection on its addresses, as on an IPoIB interface.  A TUN
 * is made IFF_NOARP, and for such a device the kernel sets accept_dad to
 * -1 and skips DAD (addresses are at once preferred): ARP is turned on
 * (the TUN has no link header, so neighbours stay NOARP entries) and
 * accept_dad set to 1.  The kernel then sends its DAD probes from ::
 * through the TUN, and the link hands back the advertisements that
 * defend the address.
 */
static void no_addr_gen(struct ipoib_tun *d)
{
	struct ifreq ifr;
	int s;

	ipv6_conf(d->ifname, "addr_gen_mode", "1\n");
	ipv6_conf(d->ifname, "accept_dad", "1\n");
	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", d->ifname);
	if (ioctl(s, SIOCGIFFLAGS, &ifr) == 0 &&
	    (ifr.ifr_flags & IFF_NOARP)) {
		ifr.ifr_flags &= ~IFF_NOARP;
		if (ioctl(s, SIOCSIFFLAGS, &ifr) < 0)
			tun_error(d, "turning ARP on (for DAD): no DAD");
	}
	close(s);
}

/* The IPv6 address a's IFA_F_* flags on the interface, as the kernel
 * lists them in /proc/net/if_inet6: 0 and *flags, or -1 when the
 * interface does not have it (or the file cannot be read). */
static int addr6_flags(struct ipoib_tun *d, const struct inet_addr *a,
		       unsigned int *flags)
{
	char hex[33], name[IFNAMSIZ + 1], want[33];
	unsigned int idx, plen, scope, fl, i;
	int r = -1;
	FILE *f;

	for (i = 0; i < 16; i++)
		snprintf(want + 2 * i, 3, "%02x", a->v6.s6_addr[i]);
	f = fopen("/proc/net/if_inet6", "r");
	if (!f)
		return -1;
	while (fscanf(f, "%32s %x %x %x %x %16s", hex, &idx, &plen, &scope,
		      &fl, name) == 6) {
		if ((int)idx == d->ifindex && !strcmp(hex, want)) {
			*flags = fl;
			r = 0;
			break;
		}
	}
	fclose(f);
	return r;
}

/* Is a still tentative on the interface? */
static int tentative(struct ipoib_tun *d, const struct inet_addr *a)
{
	unsigned int flags;

	return addr6_flags(d, a, &flags) == 0 &&
	       (flags & IFA_F_TENTATIVE) != 0;
}

static void dad_arm(struct ipoib_tun *d)
{
	struct timeval tv = { 0, DAD_POLL_MS * 1000 };

	evtimer_add(d->dad_ev, &tv);
}

static int dumped(const struct nl_ifaddr *ka, int n, const struct inet_addr *a)
{
	int i;

	for (i = 0; i < n; i++)
		if (inet_addr_equal(&ka[i].p.addr, a))
			return 1;
	return 0;
}

/*
 * The interface's addresses as the kernel has them, so that `ip addr add`
 * and `ip addr del` (or any tool that configures addresses through
 * rtnetlink) work as on the Linux driver's interface, whose ARP and
 * neighbour discovery answer for the kernel's addresses: one the kernel
 * no longer has is no longer answered for, one it has that the link lacks
 * is taken (an IPv6 one still tentative followed through DAD as the
 * configured ones are, a dadfailed one left alone).  Nothing before the
 * interface is first configured (cfg.addrs are not the kernel's yet).
 */
void ipoib_tun_addrs_changed(struct ipoib_tun *t)
{
	struct nl_ifaddr ka[2 * IPOIB_TUN_MAX_ADDRS + 8];
	char err[NL_ERRLEN], ps[INET_PREFIX_STRLEN], msg[NL_ERRLEN + 64];
	const struct nl_ifaddr *a;
	unsigned int j;
	int n, i, r;

	if (!t->configured)
		return;
	n = nl_ifaddr_dump(t->nl, t->ifindex, ka,
			   sizeof(ka) / sizeof(ka[0]), err, sizeof(err));
	if (n < 0) {
		tun_error(t, err);
		return;
	}
	for (j = 0; j < t->cfg.naddrs;) {
		if (!dumped(ka, n, &t->cfg.addrs[j].addr)) {
			cfg_remove(t, j);
			continue;
		}
		j++;
	}
	for (i = 0; i < n; i++) {
		a = &ka[i];
		if (a->scope == RT_SCOPE_HOST || (a->flags & IFA_F_DADFAILED) ||
		    ipoib_link_is_local(t->link, &a->p.addr))
			continue;
		if (t->cfg.naddrs == IPOIB_TUN_MAX_ADDRS) {
			snprintf(msg, sizeof(msg), "%s: address %s not answered "
				 "for: the interface has %d already",
				 t->ifname, inet_prefix_str(&a->p, ps,
							    sizeof(ps)),
				 IPOIB_TUN_MAX_ADDRS);
			tun_error(t, msg);
			continue;
		}
		if (a->p.addr.family == AF_INET6 &&
		    (a->flags & IFA_F_TENTATIVE)) {
			r = ipoib_link_add_addr_tentative(t->link, &a->p, err,
							  sizeof(err));
			if (r == 0) {
				t->dad_pending |= 1u << t->cfg.naddrs;
				dad_arm(t);
			}
		} else {
			r = ipoib_link_add_addr(t->link, &a->p, err,
						sizeof(err));
		}
		if (r < 0) {
			tun_error(t, err);
			continue;
		}
		t->cfg.addrs[t->cfg.naddrs++] = a->p;
		memset(t->nh, 0, sizeof(t->nh));
	}
}

/*
 * The kernel's duplicate address detection of the configured IPv6
 * addresses (cfg.addrs), followed until it ends: one that became
 * preferred is made ready on the link, which announces it (an unsolicited
 * Neighbour Advertisement, as Linux sends with ndisc_notify, never for a
 * tentative address: RFC 4862 5.4); one that went dadfailed is given up,
 * as conflict() does when the link sees the defence; one that is gone
 * (never added, or deleted) is not followed further.
 * The end of DAD shows only as a change of the address's flags (an
 * RTM_NEWADDR to a monitor that the owner, not this module, holds), and
 * it comes a second or two after the address is added: looking every
 * DAD_POLL_MS while an address is tentative keeps it here, for ipoibd
 * and ibgwd's router mode alike.
 */
static void dad_check(evutil_socket_t fd, short what, void *arg)
{
	struct ipoib_tun *d = arg;
	const struct inet_addr *a;
	unsigned int i, flags;
	int gone;

	(void)fd;
	(void)what;
	for (i = 0; i < d->cfg.naddrs; i++) {
		if (!(d->dad_pending & (1u << i)))
			continue;
		a = &d->cfg.addrs[i].addr;
		gone = addr6_flags(d, a, &flags) < 0;
		if (!gone && (flags & IFA_F_TENTATIVE) &&
		    !(flags & IFA_F_DADFAILED))
			continue;	/* still being checked */
		d->dad_pending &= ~(1u << i);
		if (gone)
			continue;
		if (!(flags & IFA_F_DADFAILED)) {
			ipoib_link_addr_ready(d->link, a);
		} else if (ipoib_link_del_addr(d->link, a) == 0 &&
			   d->ops.conflict) {
			/* failed without the link seeing the defence (another
			 * host probing for it at the same time) */
			d->ops.conflict(d->arg, d, a, NULL, 1);
		}
	}
	if (d->dad_pending)
		dad_arm(d);
}

/*
 * Another host claims one of our addresses.  For an IPv6 one still
 * tentative, the advertisement about to be handed up makes the kernel's
 * DAD fail: the link stops answering for it, as the kernel does for a
 * dadfailed address.
 */
static void conflict(void *arg, const struct inet_addr *a,
		     const struct ipoib_addr *hw)
{
	struct ipoib_tun *d = arg;
	int failed = 0;

	if (a->family == AF_INET6 && tentative(d, a))
		failed = ipoib_link_del_addr(d->link, a) == 0;
	if (d->ops.conflict)
		d->ops.conflict(d->arg, d, a, hw, failed);
}

/* The TUN's carrier, as the link's: NO-CARRIER while the port is down or
 * the broadcast group is not joined (the Linux driver's
 * netif_carrier_off), so the kernel sends nothing to the interface.  The
 * kernel keeps the addresses, IPv6 ones stay preferred; routes through it
 * show linkdown meanwhile. */
static void set_tun_carrier(struct ipoib_tun *d, int on)
{
	char err[NL_ERRLEN];

	if (d->carrier_ctl &&
	    nl_tun_set_carrier(d->tun_fd, on, err, sizeof(err)) < 0)
		tun_error(d, err);
}

/*
 * An MTU on the interface other than the one we set is the operator's
 * (ip link set mtu).  One at or below the link MTU (limit) stays, also
 * over later carrier changes, as IPoIB keeps its admin_mtu and applies
 * min(admin_mtu, the broadcast group's) after a rejoin; 0.  One above it
 * the Linux driver would refuse (EINVAL), which a TUN cannot: it is
 * forgotten, the interface is to get the link MTU again; 1.
 */
static int operator_mtu(struct ipoib_tun *d, unsigned int now,
			unsigned int limit)
{
	if (now > limit) {
		d->mtu_admin = 0;
		return 1;
	}
	d->mtu_admin = now;
	return 0;
}

/* An MTU above the link MTU was put back (ops->error, as the log line
 * the Linux driver's EINVAL would stand for). */
static void mtu_refused(struct ipoib_tun *d, unsigned int asked,
			unsigned int limit)
{
	char msg[IFNAMSIZ + 128];

	snprintf(msg, sizeof(msg), "%s: MTU %u refused: the link carries at "
		 "most %u (%s mode); MTU %u again", d->ifname, asked, limit,
		 ipoib_link_mode_name(d->link), limit);
	tun_error(d, msg);
}

void ipoib_tun_links_changed(struct ipoib_tun *t)
{
	unsigned int limit = ipoib_link_mtu(t->link);
	struct nl_link_info li;
	char err[NL_ERRLEN];

	/* before the first carrier the MTU is not ours to keep: the
	 * carrier sets it */
	if (!t->mtu_set || !limit)
		return;
	if (nl_link_get_index(t->nl, t->ifindex, &li, err, sizeof(err)) < 0 ||
	    li.mtu == t->mtu_set)
		return;
	if (!operator_mtu(t, li.mtu, limit)) {
		t->mtu_set = li.mtu;
		return;
	}
	/* meanwhile the link sent nothing above its MTU: the kernel's
	 * packets that were bigger got ICMP too big (drop.too_big) */
	if (nl_link_set_mtu(t->nl, t->ifindex, limit, err, sizeof(err)) < 0) {
		tun_error(t, err);
		return;
	}
	t->mtu_set = limit;
	mtu_refused(t, li.mtu, limit);
}

static void carrier(void *arg, int up, unsigned int mtu)
{
	struct ipoib_tun *d = arg;
	struct nl_link_info li;
	char err[NL_ERRLEN];
	unsigned int i, refused = 0, limit = mtu;

	if (up) {
		/* an MTU set on the interface since ours is the operator's
		 * (operator_mtu) */
		if (d->mtu_set &&
		    nl_link_get_index(d->nl, d->ifindex, &li, err,
				      sizeof(err)) == 0 &&
		    li.mtu != d->mtu_set && operator_mtu(d, li.mtu, mtu))
			refused = li.mtu;
		if (d->mtu_admin && d->mtu_admin < mtu)
			mtu = d->mtu_admin;
	}
	if (d->ops.carrier)
		d->ops.carrier(d->arg, d, up, mtu);
	if (!up) {
		set_tun_carrier(d, 0);
		return;
	}
	if (nl_link_set_mtu(d->nl, d->ifindex, mtu, err, sizeof(err)) < 0) {
		tun_error(d, err);
	} else {
		d->mtu_set = mtu;
		if (refused)
			mtu_refused(d, refused, limit);
	}
	if (!d->configured) {
		for (i = 0; i < d->cfg.naddrs; i++) {
			/* IPv6 ones tentative until the kernel's DAD is
			 * done (it starts with the carrier): preferred, or
			 * dadfailed */
			if (nl_ifaddr_add(d->nl, d->ifindex, &d->cfg.addrs[i],
					  0, err,
					  sizeof(err)) < 0 && errno != EEXIST)
				tun_error(d, err);
		}
	}
	set_tun_carrier(d, 1);
	router_check(d);
	if (!d->configured) {
		/* up already since ipoib_tun_start, unless the kernel has
		 * no TUNSETCARRIER */
		if (nl_link_set_up(d->nl, d->ifindex, 1, err,
				   sizeof(err)) < 0)
			tun_error(d, err);
		add_link_local(d, mtu);
		d->configured = 1;
	}
	if (d->dad_pending)
		dad_arm(d);
	if (!d->ready) {
		d->ready = 1;
		if (d->ops.ready)
			d->ops.ready(d->arg, d);
	}
}

struct ipoib_tun *ipoib_tun_new(struct event_base *base, struct fab_dev *dev,
				struct nl_sock_ctx *nl,
				const struct ipoib_tun_cfg *cfg,
				const struct ipoib_tun_ops *ops, void *arg,
				char *err, size_t errlen)
{
	struct ipoib_link_ops lops = { .rx = rx, .rx_done = rx_done,
				       .carrier = carrier,
				       .conflict = conflict,
				       .nexthop = nexthop,
				       .tx_ready = tx_ready };
	struct ipoib_tun *d;
	char why[FAB_ERRLEN], off[NL_ERRLEN + 64];
	unsigned int i;
	int e, r;

	d = calloc(1, sizeof(*d));
	if (!d) {
		errbuf_fail(err, errlen, ENOMEM, "out of memory");
		return NULL;
	}
	d->base = base;
	d->nl = nl;
	d->cfg = *cfg;
	if (ops)
		d->ops = *ops;
	d->arg = arg;
	/* IFF_NAPI: what we write goes through GRO as well */
	d->tun_fd = nl_tun_open(cfg->ifname, NL_TUN_VNET_HDR | NL_TUN_NAPI,
				&d->ifindex, err, errlen);
	if (d->tun_fd < 0 && errno == EINVAL)	/* a kernel without it */
		d->tun_fd = nl_tun_open(cfg->ifname, NL_TUN_VNET_HDR,
					&d->ifindex, err, errlen);
	if (d->tun_fd < 0) {
		free(d);
		return NULL;
	}
	d->vnet = 1;
	if (!if_indextoname((unsigned int)d->ifindex, d->ifname))
		snprintf(d->ifname, sizeof(d->ifname), "%s", cfg->ifname);
	/* a new TUN has carrier; the link has none until its broadcast
	 * join */
	if (nl_tun_set_carrier(d->tun_fd, 0, why, NL_ERRLEN) == 0) {
		d->carrier_ctl = 1;
	} else {
		snprintf(off, sizeof(off), "%s: the interface shows a "
			 "carrier without the link's", why);
		tun_error(d, off);
	}
	if (nl_tun_set_offload(d->tun_fd, 1, why, NL_ERRLEN) < 0) {
		snprintf(off, sizeof(off), "%s: packets go one by one", why);
		tun_error(d, off);
	}
	no_addr_gen(d);
	d->link = ipoib_link_new(base, dev, &cfg->link, &lops, d, why,
				 sizeof(why));
	if (!d->link) {
		errbuf_fail(err, errlen, errno, "IPoIB link: %s", why);
		goto fail;
	}
	for (i = 0; i < cfg->naddrs; i++) {
		/* the kernel runs DAD on IPv6 ones (carrier() adds them
		 * without NODAD): the link announces them once it is done
		 * (dad_check) */
		if (cfg->addrs[i].addr.family == AF_INET6) {
			r = ipoib_link_add_addr_tentative(d->link,
							  &cfg->addrs[i], why,
							  sizeof(why));
			d->dad_pending |= 1u << i;
		} else {
			r = ipoib_link_add_addr(d->link, &cfg->addrs[i], why,
						sizeof(why));
		}
		if (r < 0) {
			errbuf_fail(err, errlen, errno, "IPoIB link: %s", why);
			goto fail;
		}
	}
	d->tun_ev = event_new(base, d->tun_fd, EV_READ | EV_PERSIST, tun_cb,
			      d);
	d->dad_ev = evtimer_new(base, dad_check, d);
	if (!d->tun_ev || !d->dad_ev) {
		errbuf_fail(err, errlen, ENOMEM, "out of memory");
		goto fail;
	}
	event_add(d->tun_ev, NULL);
	return d;
fail:
	e = errno;
	if (d->tun_ev)
		event_free(d->tun_ev);
	if (d->dad_ev)
		event_free(d->dad_ev);
	ipoib_link_free(d->link, 0);
	close(d->tun_fd);
	free(d);
	errno = e;
	return NULL;
}

int ipoib_tun_start(struct ipoib_tun *t, char *err, size_t errlen)
{
	char why[NL_ERRLEN];

	/* up at once, without carrier (NO-CARRIER) until the broadcast
	 * join brings the link's, as an IPoIB interface set up before its
	 * port joined; without TUNSETCARRIER it would look ready, so it
	 * stays down until then */
	if (t->carrier_ctl &&
	    nl_link_set_up(t->nl, t->ifindex, 1, why, sizeof(why)) < 0)
		tun_error(t, why);
	return ipoib_link_start(t->link, err, errlen);
}

void ipoib_tun_free(struct ipoib_tun *t, unsigned int timeout_ms)
{
	if (!t)
		return;
	event_free(t->tun_ev);
	event_free(t->dad_ev);
	ipoib_link_free(t->link, timeout_ms);
	close(t->tun_fd);	/* the interface goes with it */
	free(t);
}

void ipoib_tun_event(struct ipoib_tun *t, enum fab_event_type type)
{
	ipoib_link_event(t->link, type);
}

const char *ipoib_tun_ifname(const struct ipoib_tun *t)
{
	return t->ifname;
}

int ipoib_tun_ifindex(const struct ipoib_tun *t)
{
	return t->ifindex;
}

int ipoib_tun_error(const struct ipoib_tun *t)
{
	return t->rd_err;
}

struct ipoib_link *ipoib_tun_link(struct ipoib_tun *t)
{
	return t->link;
}

void ipoib_tun_stats(const struct ipoib_tun *t, struct ipoib_tun_stats *st)
{
	*st = t->st;
	st->rx_coalesced = t->gro.merged;
	st->rx_bad_csum = t->gro.bad_csum;
}

/* Named as ipoibd's report and ibgwctl show stats name them. */
const struct counter_desc ipoib_tun_counters[] = {
	COUNTER("mss_clamped", struct ipoib_tun_stats, mss_clamped,
		"TCP SYNs whose MSS was lowered."),
	COUNTER("tx_super_packets", struct ipoib_tun_stats, tx_super,
		"TCP super-packets from the TUN cut into segments."),
	COUNTER("rx_coalesced", struct ipoib_tun_stats, rx_coalesced,
		"TCP segments merged on their way to the TUN."),
	COUNTER("rx_bad_checksum", struct ipoib_tun_stats, rx_bad_csum,
		"TCP segments passed up unmerged: bad checksum."),
	COUNTER("drop.tx_offload_bad", struct ipoib_tun_stats, tx_offload_bad,
		"Super-packets from the TUN that could not be cut."),
	COUNTER("drop.rx_tun_write", struct ipoib_tun_stats, rx_tun_write,
		"Packets for the host the TUN refused (a write error)."),
	COUNTERS_END
};

static void report_lines(char *text, const char *what,
			 void (*line)(void *arg, const char *what,
				      const char *text), void *arg)
{
	char *l, *save = NULL;

	for (l = strtok_r(text, "\n", &save); l;
	     l = strtok_r(NULL, "\n", &save))
		line(arg, what, l);
}

void ipoib_tun_report(const struct ipoib_tun *t,
		      void (*line)(void *arg, const char *what,
				   const char *text), void *arg)
{
	static char out[65536];
	const char *what[] = { "stats", "neighbors", "groups" };
	struct counter_buf cb = { out, 0, sizeof(out) };
	struct counter_out o = { counter_buf_vprintf, &cb };
	struct ipoib_tun_stats st;
	unsigned int i;

	for (i = 0; i < 3; i++) {
		ipoib_link_report(t->link, what[i], out, sizeof(out));
		report_lines(out, what[i], line, arg);
	}
	ipoib_tun_stats(t, &st);
	out[0] = '\0';
	counters_text(&o, ipoib_tun_counters, &st, "", 0);
	report_lines(out, "stats", line, arg);
}

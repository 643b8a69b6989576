/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Linux interface plumbing for ipoibd and the gateway: a TUN device, and
 * rtnetlink for links, addresses, route lookups and change notifications
 * (libnl-route-3 objects and caches; requests acked through libmnl so a
 * refusal keeps the kernel's extended-ack text; docs/architecture.md).
 *
 * Owns the kernel interfaces, nothing else: no policy, no logging, no
 * event loop.  Every call works in the network namespace of the calling
 * thread at the time the TUN fd or the nl_sock_ctx was made.
 *
 * Error conventions: functions return -1 (or NULL) on failure with errno
 * set (the kernel's errno for a refused request, e.g. EEXIST, ENODEV,
 * ENETUNREACH) and fill err with one line naming the operation, its
 * arguments and the errno text, plus the kernel's extended-ack message
 * when it gave one:
 *	set mtu 70000 on ifindex 4: Invalid argument (kernel: ...)
 * err may be NULL; when errlen > 0 it is always NUL-terminated.  Nothing
 * here aborts or exits.
 *
 * Names stay clear of libnl-3's (nl_close, nl_addr_*, struct nl_addr), so a
 * program may link both.  This header includes <net/if.h>; include it
 * before any <linux/if.h>.  A struct nl_sock_ctx is for one thread at a
 * time.
 */
#ifndef IBGW_NL_LINK_H
#define IBGW_NL_LINK_H

#include <net/if.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>

#include "inet/addr.h"

#define NL_ERRLEN	256			/* a comfortable err size */

/*
 * Check an interface name as the kernel's dev_valid_name() does: 1 to 15
 * bytes, not "." or "..", no '/', ':' or white space; control characters
 * are refused as well.  0, or -1 with errno ENAMETOOLONG or EINVAL.
 */
int nl_ifname_check(const char *name, char *err, size_t errlen);

/* --- TUN ------------------------------------------------------------------ */

#define NL_TUN_VNET_HDR		0x01	/* IFF_VNET_HDR: virtio_net_hdr first */
#define NL_TUN_MULTI_QUEUE	0x02	/* IFF_MULTI_QUEUE */
#define NL_TUN_TAP		0x08	/* IFF_TAP: Ethernet frames, not IP */
#define NL_TUN_NAPI		0x04	/* IFF_NAPI: writes go through NAPI
					 * and GRO, so TCP segments written one
					 * by one are coalesced */

/*
 * Create a TUN interface (IFF_TUN | IFF_NO_PI, plus FLAGS) and return its
 * fd: non-blocking, close-on-exec; each read or write is one IP packet (after
 * the virtio_net_hdr with NL_TUN_VNET_HDR).  The device is not persistent:
 * it disappears when the last fd attached to it is closed.  NAME may hold a
 * "%d" (the kernel picks the number) or be NULL or "" (tun%d); get the
 * result with if_indextoname(*ifindex).  With NL_TUN_MULTI_QUEUE, calling
 * again with the same name and flags attaches one more queue.  Attaching to
 * an existing persistent TUN device is refused (EEXIST), as it would outlive
 * the fd.  *ifindex (may be NULL) gets the interface index.
 */
int nl_tun_open(const char *name, unsigned int flags, int *ifindex,
		char *err, size_t errlen);
/* Offloads for a TUN opened with NL_TUN_VNET_HDR: the kernel may hand over
 * packets with partial checksums and, with tso, TCP super-packets
 * (TUNSETOFFLOAD with TUN_F_CSUM, TUN_F_TSO4, TUN_F_TSO6). */
int nl_tun_set_offload(int fd, int tso, char *err, size_t errlen);
/* The interface's carrier (TUNSETCARRIER, Linux 5.0): off, it shows
 * NO-CARRIER and the kernel sends nothing to it, as a NIC whose link is
 * down; a new TUN has it on.  EINVAL from an older kernel. */
int nl_tun_set_carrier(int fd, int on, char *err, size_t errlen);


/* --- rtnetlink ------------------------------------------------------------ */

struct nl_sock_ctx;

/* A request socket (blocking; each call waits for the kernel's answer). */
struct nl_sock_ctx *nl_ctx_open(char *err, size_t errlen);
/* Closes the request socket and the monitor, if any.  NULL is fine. */
void nl_ctx_close(struct nl_sock_ctx *nl);

struct nl_link_info {
	int		ifindex;
	char		name[IFNAMSIZ];
	unsigned int	flags;		/* IFF_UP, IFF_RUNNING... */
	unsigned int	mtu;
	uint8_t		operstate;	/* IF_OPER_* (linux/if.h) */
};

/* Look a link up by name (ENODEV when there is none) or by index. */
int nl_link_get(struct nl_sock_ctx *nl, const char *name,
		struct nl_link_info *out, char *err, size_t errlen);
int nl_link_get_index(struct nl_sock_ctx *nl, int ifindex,
		      struct nl_link_info *out, char *err, size_t errlen);
int nl_link_set_mtu(struct nl_sock_ctx *nl, int ifindex, unsigned int mtu,
		    char *err, size_t errlen);
/* Administrative state: up != 0 sets IFF_UP, 0 clears it. */
/* Enslave ifindex to the bridge (or bond) master_ifindex; 0 releases. */
int nl_link_set_master(struct nl_sock_ctx *nl, int ifindex, int master_ifindex,
		       char *err, size_t errlen);
int nl_link_set_up(struct nl_sock_ctx *nl, int ifindex, int up, char *err,
		   size_t errlen);
/* RTM_DELLINK.  A TUN device deleted so stays gone; its fds see EBADFD. */
int nl_link_del(struct nl_sock_ctx *nl, int ifindex, char *err,
		size_t errlen);

#define NL_ADDR_NODAD		0x01	/* IPv6: IFA_F_NODAD, usable at once */
#define NL_ADDR_NOPREFIXROUTE	0x02	/* IFA_F_NOPREFIXROUTE */

/*
 * Add an address (EEXIST if the link already has it) or delete one
 * (EADDRNOTAVAIL if it has not).  FLAGS are NL_ADDR_*; NL_ADDR_NODAD means
 * nothing for IPv4 and is ignored there.
 */
int nl_ifaddr_add(struct nl_sock_ctx *nl, int ifindex,
		  const struct inet_prefix *p, unsigned int flags, char *err,
		  size_t errlen);
int nl_ifaddr_del(struct nl_sock_ctx *nl, int ifindex,
		  const struct inet_prefix *p, char *err, size_t errlen);

/* One address of an interface as the kernel has it (nl_ifaddr_dump). */
struct nl_ifaddr {
	struct inet_prefix p;
	uint32_t flags;			/* IFA_F_* (IFA_FLAGS when given) */
	uint8_t scope;			/* RT_SCOPE_* */
};

/*
 * The IPv4 and IPv6 addresses of ifindex ("ip addr show dev"), at most
 * max into out: their number (those past max are not counted), or -1
 * with err.
 */
int nl_ifaddr_dump(struct nl_sock_ctx *nl, int ifindex,
		   struct nl_ifaddr *out, unsigned int max, char *err,
		   size_t errlen);

struct nl_route {
	int			has_gateway;	/* 0: on link (or local) */
	struct inet_addr	gateway;	/* IPv6 possible for IPv4 */
	int			oif;		/* 0 if the kernel gave none */
	int			has_prefsrc;
	struct inet_addr	prefsrc;
	uint8_t			type;		/* RTN_UNICAST, RTN_LOCAL... */
	uint32_t		table;
};

/*
 * RTM_GETROUTE: the route the kernel would use to send to DST now, as
 * "ip route get" shows it.  OIF, if not 0, constrains the lookup to that
 * interface (needed for IPv6 link-local destinations).  No route gives
 * errno ENETUNREACH (or EHOSTUNREACH, EACCES for prohibit routes...).
 * Beware, kernel behaviour: with OIF set, an IPv4 lookup that matches no
 * route through OIF answers as if DST were on link there (no gateway, no
 * error); IPv6 answers ENETUNREACH.  Pass OIF 0 to learn whether DST is
 * reachable at all, then compare out->oif.
 */
int nl_route_get(struct nl_sock_ctx *nl, const struct inet_addr *dst,
		 int oif, struct nl_route *out, char *err, size_t errlen);
/* "unicast", "local", "blackhole"... or "type N". */
const char *nl_route_type_str(uint8_t type, char *buf, size_t len);

/*
 * A host route of type local (delivered to this host) to DST alone (/32 or
 * /128) in TABLE through OIF, as "ip route add|del local DST dev OIF table
 * TABLE".  ADD 1 adds (EEXIST if it is there), 0 deletes (ESRCH if it is
 * not).  TABLE 255 is the kernel's local table, where it keeps one such
 * route for each address of the host.
 */
int nl_route_local(struct nl_sock_ctx *nl, int add, uint32_t table,
		   const struct inet_addr *dst, int oif, char *err,
		   size_t errlen);

/*
 * A route to the prefix DST (0.0.0.0/0: the default route) through the
 * gateway GW over OIF in the main table, as "ip route add|del DST via GW
 * dev OIF proto dhcp" (RTPROT_DHCP, so that `ip route` shows where it
 * came from).  ADD 1 adds (EEXIST if it is there), 0 deletes (ESRCH if
 * it is not).
 */
int nl_route_via(struct nl_sock_ctx *nl, int add, const struct inet_prefix *dst,
		 const struct inet_addr *gw, int oif, char *err,
		 size_t errlen);

/*
 * A policy rule "pref PREF iif IIF ipproto udp dport DPORT lookup TABLE"
 * for FAMILY (AF_INET or AF_INET6).  ADD 1 adds (EEXIST if an identical
 * one is there), 0 deletes (ENOENT if there is none).
 */
int nl_rule_udp_dport(struct nl_sock_ctx *nl, int add, int family,
		      uint32_t pref, const char *iif, uint16_t dport,
		      uint32_t table, char *err, size_t errlen);

/* --- change notifications ------------------------------------------------- */

#define NL_CHG_ROUTE	0x01	/* IPv4/IPv6 routes, rules, nexthop objects,
				 * IPv6 forwarding switched (netconf) */
#define NL_CHG_ADDR	0x02	/* IPv4/IPv6 addresses */
#define NL_CHG_LINK	0x04	/* links: new, gone, up/down, mtu... */
#define NL_CHG_OVERRUN	0x08	/* notifications were lost: assume all */
#define NL_CHG_ALL	(NL_CHG_ROUTE | NL_CHG_ADDR | NL_CHG_LINK)

/*
 * Subscribe (on a socket of its own, non-blocking) to the notifications
 * named by KINDS (NL_CHG_ROUTE, _ADDR, _LINK).  Returns the fd to poll for
 * reading, or -1.  Calling it again replaces the earlier subscription.
 * Behind it is a libnl cache manager holding the kernel's routes, rules,
 * addresses or links (each kind's whole table, filled here); only
 * changes to what those caches hold are reported.
 */
int nl_monitor_open(struct nl_sock_ctx *nl, unsigned int kinds, char *err,
		    size_t errlen);
/* The monitor fd, or -1 if there is none. */
int nl_monitor_fd(const struct nl_sock_ctx *nl);
/*
 * Read every pending notification without blocking.  Returns the NL_CHG_*
 * bits seen (0: nothing, e.g. a spurious wakeup), or -1.  When the socket
 * overran, the result is NL_CHG_OVERRUN | NL_CHG_ALL: a caller keeping a
 * next-hop cache should flush it whenever NL_CHG_ROUTE (or anything) is set.
 */
int nl_monitor_read(struct nl_sock_ctx *nl, char *err, size_t errlen);

#endif

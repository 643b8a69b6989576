// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * TUN devices and rtnetlink through libmnl; see nl_link.h.
 *
 * Requests go out one at a time on a blocking socket, always with
 * NLM_F_ACK, and the answer is read until the kernel's ack or error for
 * that sequence number; anything else on the socket (a stale answer to an
 * earlier, interrupted request) is skipped.  NETLINK_EXT_ACK is asked for,
 * so a refusal carries the kernel's own words when it has them.
 */
#include "conf/errbuf.h"
#include "netlink/nl_link.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <libmnl/libmnl.h>
#include <linux/if.h>
#include <linux/if_addr.h>
#include <linux/if_tun.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#define NL_BUFSZ	32768		/* answers and notifications */
#define NL_EXTLEN	160		/* extended-ack message kept */
#define NL_MON_RCVBUF	(1 << 20)	/* asked for, best effort */
#define NL_MON_BATCH	64		/* recv()s per nl_monitor_read() */

struct nl_sock_ctx {
	struct mnl_socket	*req;
	unsigned int		 portid;
	unsigned int		 seq;
	struct mnl_socket	*mon;
	unsigned int		 mon_kinds;
	char			 ext[NL_EXTLEN];	/* last extended ack */
	char			 buf[NL_BUFSZ];
};

/* "OP: errno text[ (kernel: extack)]" into err; errno = e; returns -1. */
static int nl_fail(char *err, size_t errlen, int e, const char *ext,
		   const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static int nl_fail(char *err, size_t errlen, int e, const char *ext,
		   const char *fmt, ...)
{
	char op[192];
	va_list ap;

	if (err && errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(op, sizeof(op), fmt, ap);
		va_end(ap);
		if (ext && *ext)
			snprintf(err, errlen, "%s: %s (kernel: %s)", op,
				 strerror(e), ext);
		else
			snprintf(err, errlen, "%s: %s", op, strerror(e));
	}
	errno = e;
	return -1;
}

/* --- names --------------------------------------------------------------- */

int nl_ifname_check(const char *name, char *err, size_t errlen)
{
	const unsigned char *p;

	if (!name || !*name)
		return errbuf_fail(err, errlen, EINVAL,
				   "bad interface name '': empty");
	if (strlen(name) >= IFNAMSIZ)
		return errbuf_fail(err, errlen, ENAMETOOLONG,
				   "bad interface name '%.40s%s': longer than %d characters",
				   name, strlen(name) > 40 ? "..." : "",
				   IFNAMSIZ - 1);
	if (!strcmp(name, ".") || !strcmp(name, ".."))
		return errbuf_fail(err, errlen, EINVAL,
				   "bad interface name '%s'", name);
	for (p = (const unsigned char *)name; *p; p++)
		/* the kernel's isspace() counts 0xa0; UTF-8 is fine */
		if (*p == '/' || *p == ':' || *p <= ' ' || *p == 0x7f ||
		    *p == 0xa0)
			return errbuf_fail(err, errlen, EINVAL,
					   "bad interface name '%s': no '/', ':', blanks or control characters",
					   name);
	return 0;
}

/* --- TUN ------------------------------------------------------------------ */

int nl_tun_open(const char *name, unsigned int flags, int *ifindex,
		char *err, size_t errlen)
{
	struct ifreq ifr;
	unsigned int idx;
	int fd, e;

	if (!name)
		name = "";
	if (*name && nl_ifname_check(name, err, errlen) < 0)
		return -1;
	if (flags & ~(NL_TUN_VNET_HDR | NL_TUN_MULTI_QUEUE | NL_TUN_NAPI |
		      NL_TUN_TAP))
		return errbuf_fail(err, errlen, EINVAL,
				   "create tun '%s': unknown flags 0x%x", name,
				   flags);
	fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return nl_fail(err, errlen, errno, NULL,
			       "create tun '%s': open /dev/net/tun", name);

	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	ifr.ifr_flags = ((flags & NL_TUN_TAP) ? IFF_TAP : IFF_TUN) | IFF_NO_PI;
	if (flags & NL_TUN_VNET_HDR)
		ifr.ifr_flags |= IFF_VNET_HDR;
	if (flags & NL_TUN_MULTI_QUEUE)
		ifr.ifr_flags |= IFF_MULTI_QUEUE;
	else
		ifr.ifr_flags |= IFF_TUN_EXCL;	/* not an existing device */
	if (flags & NL_TUN_NAPI)
		ifr.ifr_flags |= IFF_NAPI;
	if (ioctl(fd, TUNSETIFF, &ifr) < 0) {
		e = errno;
		close(fd);
		if (*name && !strchr(name, '%') && if_nametoindex(name))
			return errbuf_fail(err, errlen, e,
					   "create tun '%s' (TUNSETIFF): %s: an interface of that name exists",
					   name, strerror(e));
		return nl_fail(err, errlen, e, NULL,
			       "create tun '%s' (TUNSETIFF)", name);
	}
	/* ifr_name is the real name now; a persistent device outlives us */
	if (ioctl(fd, TUNGETIFF, &ifr) < 0) {
		e = errno;
		close(fd);
		return nl_fail(err, errlen, e, NULL,
			       "create tun '%s' (TUNGETIFF)", name);
	}
	if (ifr.ifr_flags & IFF_PERSIST) {
		close(fd);
		return errbuf_fail(err, errlen, EEXIST,
				   "create tun '%s': a persistent tun device of that name exists",
				   ifr.ifr_name);
	}
	idx = if_nametoindex(ifr.ifr_name);
	if (!idx) {
		e = errno;
		close(fd);
		return nl_fail(err, errlen, e, NULL,
			       "create tun '%s': ifindex of '%s'", name,
			       ifr.ifr_name);
	}
	if (ifindex)
		*ifindex = (int)idx;
	return fd;
}

int nl_tun_set_offload(int fd, int tso, char *err, size_t errlen)
{
	unsigned long off = TUN_F_CSUM;

	if (tso)
		off |= TUN_F_TSO4 | TUN_F_TSO6;
	if (ioctl(fd, TUNSETOFFLOAD, off) < 0)
		return nl_fail(err, errlen, errno, NULL,
			       "tun offloads (TUNSETOFFLOAD)");
	return 0;
}

/* --- rtnetlink requests --------------------------------------------------- */

struct nl_sock_ctx *nl_ctx_open(char *err, size_t errlen)
{
	struct nl_sock_ctx *nl;
	int one = 1, e;

	nl = calloc(1, sizeof(*nl));
	if (!nl) {
		nl_fail(err, errlen, errno, NULL, "open rtnetlink");
		return NULL;
	}
	nl->req = mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC);
	if (!nl->req) {
		e = errno;
		free(nl);
		nl_fail(err, errlen, e, NULL, "open rtnetlink socket");
		return NULL;
	}
	if (mnl_socket_bind(nl->req, 0, MNL_SOCKET_AUTOPID) < 0) {
		e = errno;
		nl_ctx_close(nl);
		nl_fail(err, errlen, e, NULL, "bind rtnetlink socket");
		return NULL;
	}
	/* both are refinements: an older kernel without them still works */
	mnl_socket_setsockopt(nl->req, NETLINK_EXT_ACK, &one, sizeof(one));
	mnl_socket_setsockopt(nl->req, NETLINK_CAP_ACK, &one, sizeof(one));
	nl->portid = mnl_socket_get_portid(nl->req);
	nl->seq = (unsigned int)getpid() << 8;	/* any start will do */
	return nl;
}

void nl_ctx_close(struct nl_sock_ctx *nl)
{
	if (!nl)
		return;
	if (nl->req)
		mnl_socket_close(nl->req);
	if (nl->mon)
		mnl_socket_close(nl->mon);
	free(nl);
}

static int nl_ext_attr_cb(const struct nlattr *attr, void *data)
{
	struct nl_sock_ctx *nl = data;
	const char *s;
	size_t i;

	if (mnl_attr_get_type(attr) != NLMSGERR_ATTR_MSG ||
	    mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) < 0)
		return MNL_CB_OK;
	s = mnl_attr_get_str(attr);
	snprintf(nl->ext, sizeof(nl->ext), "%s", s);
	for (i = 0; nl->ext[i]; i++)	/* keep the error on one line */
		if (!isprint((unsigned char)nl->ext[i]))
			nl->ext[i] = ' ';
	return MNL_CB_OK;
}

/*
 * An NLMSG_ERROR for our request: 0 for an ack, -1 with errno for an
 * error (the extended-ack message, if any, lands in nl->ext).
 */
static int nl_ack(struct nl_sock_ctx *nl, const struct nlmsghdr *nlh)
{
	const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);
	size_t plen = mnl_nlmsg_get_payload_len(nlh), off;

	if (plen < sizeof(*e)) {
		errno = EPROTO;
		return -1;
	}
	if (e->error == 0)
		return 0;
	if (nlh->nlmsg_flags & NLM_F_ACK_TLVS) {
		off = sizeof(*e);
		if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
			off += MNL_ALIGN(e->msg.nlmsg_len) -
			       sizeof(struct nlmsghdr);
		if (off < plen)
			mnl_attr_parse_payload((const char *)e + off,
					       plen - off, nl_ext_attr_cb, nl);
	}
	errno = e->error < 0 ? -e->error : EPROTO;
	return -1;
}

/*
 * Send the request in nl->buf and read up to its ack.  Each answer other
 * than the ack goes to cb (may be NULL), which returns 0 or -1 with errno.
 * Returns 0 or -1 with errno; nl->ext holds any extended-ack text.
 */
static int nl_talk(struct nl_sock_ctx *nl, struct nlmsghdr *req,
		   int (*cb)(const struct nlmsghdr *, void *), void *data)
{
	const struct nlmsghdr *nlh;
	unsigned int seq;
	ssize_t n;
	int len;

	nl->ext[0] = '\0';
	req->nlmsg_flags |= NLM_F_REQUEST | NLM_F_ACK;
	req->nlmsg_seq = seq = ++nl->seq;
	for (;;) {
		n = mnl_socket_sendto(nl->req, req, req->nlmsg_len);
		if (n >= 0 || errno != EINTR)
			break;
	}
	if (n < 0)
		return -1;
	if ((size_t)n != req->nlmsg_len) {
		errno = EMSGSIZE;
		return -1;
	}
	for (;;) {
		n = mnl_socket_recvfrom(nl->req, nl->buf, sizeof(nl->buf));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		len = (int)n;
		for (nlh = (const struct nlmsghdr *)nl->buf;
		     mnl_nlmsg_ok(nlh, len); nlh = mnl_nlmsg_next(nlh, &len)) {
			if (nlh->nlmsg_seq != seq ||
			    (nlh->nlmsg_pid && nlh->nlmsg_pid != nl->portid))
				continue;	/* an earlier request's */
			switch (nlh->nlmsg_type) {
			case NLMSG_ERROR:
				return nl_ack(nl, nlh);
			case NLMSG_DONE:
				return 0;
			case NLMSG_NOOP:
			case NLMSG_OVERRUN:
				break;
			default:
				if (cb && cb(nlh, data) < 0)
					return -1;
			}
		}
	}
}

struct nl_attrs {
	const struct nlattr	**tb;
	unsigned int		  max;
};

static int nl_attr_cb(const struct nlattr *attr, void *data)
{
	struct nl_attrs *a = data;
	unsigned int type = mnl_attr_get_type(attr);

	if (type <= a->max)
		a->tb[type] = attr;
	return MNL_CB_OK;
}

static int nl_attr_u32(const struct nlattr *attr, uint32_t *v)
{
	if (!attr || mnl_attr_validate(attr, MNL_TYPE_U32) < 0)
		return -1;
	*v = mnl_attr_get_u32(attr);
	return 0;
}

static int nl_attr_addr(const struct nlattr *attr, int family,
			struct inet_addr *out)
{
	size_t alen = inet_addr_len(family);

	if (!attr || !alen || mnl_attr_get_payload_len(attr) != alen)
		return -1;
	memset(out, 0, sizeof(*out));
	out->family = family;
	memcpy(out->raw, mnl_attr_get_payload(attr), alen);
	return 0;
}

/* --- links ---------------------------------------------------------------- */

static struct nlmsghdr *nl_link_msg(struct nl_sock_ctx *nl, uint16_t type,
				    int ifindex)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(nl->buf);
	struct ifinfomsg *ifi;

	nlh->nlmsg_type = type;
	ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_family = AF_UNSPEC;
	ifi->ifi_index = ifindex;
	return nlh;
}

static int nl_link_parse(const struct nlmsghdr *nlh, void *data)
{
	struct nl_link_info *out = data;
	const struct nlattr *tb[IFLA_MAX + 1] = { NULL };
	struct nl_attrs a = { tb, IFLA_MAX };
	const struct ifinfomsg *ifi;
	uint32_t v;

	if (nlh->nlmsg_type != RTM_NEWLINK)
		return 0;
	if (mnl_nlmsg_get_payload_len(nlh) < sizeof(*ifi)) {
		errno = EPROTO;
		return -1;
	}
	ifi = mnl_nlmsg_get_payload(nlh);
	mnl_attr_parse(nlh, sizeof(*ifi), nl_attr_cb, &a);
	memset(out, 0, sizeof(*out));
	out->ifindex = ifi->ifi_index;
	out->flags = ifi->ifi_flags;
	if (tb[IFLA_IFNAME] &&
	    mnl_attr_validate(tb[IFLA_IFNAME], MNL_TYPE_NUL_STRING) == 0)
		snprintf(out->name, sizeof(out->name), "%s",
			 mnl_attr_get_str(tb[IFLA_IFNAME]));
	if (nl_attr_u32(tb[IFLA_MTU], &v) == 0)
		out->mtu = v;
	if (tb[IFLA_OPERSTATE] &&
	    mnl_attr_validate(tb[IFLA_OPERSTATE], MNL_TYPE_U8) == 0)
		out->operstate = mnl_attr_get_u8(tb[IFLA_OPERSTATE]);
	return 0;
}

static int nl_link_query(struct nl_sock_ctx *nl, struct nlmsghdr *nlh,
			 struct nl_link_info *out)
{
	memset(out, 0, sizeof(*out));
	out->ifindex = -1;
	mnl_attr_put_u32(nlh, IFLA_EXT_MASK, RTEXT_FILTER_SKIP_STATS);
	if (nl_talk(nl, nlh, nl_link_parse, out) < 0)
		return -1;
	if (out->ifindex < 0) {		/* an ack with no answer */
		errno = ENODEV;
		return -1;
	}
	return 0;
}

int nl_link_get(struct nl_sock_ctx *nl, const char *name,
		struct nl_link_info *out, char *err, size_t errlen)
{
	struct nlmsghdr *nlh;

	if (nl_ifname_check(name, err, errlen) < 0)
		return -1;
	nlh = nl_link_msg(nl, RTM_GETLINK, 0);
	mnl_attr_put_strz(nlh, IFLA_IFNAME, name);
	if (nl_link_query(nl, nlh, out) < 0)
		return nl_fail(err, errlen, errno, nl->ext, "get link '%s'",
			       name);
	return 0;
}

int nl_link_get_index(struct nl_sock_ctx *nl, int ifindex,
		      struct nl_link_info *out, char *err, size_t errlen)
{
	if (ifindex <= 0)
		return errbuf_fail(err, errlen, EINVAL,
				   "get link ifindex %d: not an ifindex", ifindex);
	if (nl_link_query(nl, nl_link_msg(nl, RTM_GETLINK, ifindex), out) < 0)
		return nl_fail(err, errlen, errno, nl->ext,
			       "get link ifindex %d", ifindex);
	return 0;
}

int nl_link_set_mtu(struct nl_sock_ctx *nl, int ifindex, unsigned int mtu,
		    char *err, size_t errlen)
{
	struct nlmsghdr *nlh = nl_link_msg(nl, RTM_SETLINK, ifindex);

	mnl_attr_put_u32(nlh, IFLA_MTU, mtu);
	if (nl_talk(nl, nlh, NULL, NULL) < 0)
		return nl_fail(err, errlen, errno, nl->ext,
			       "set mtu %u on ifindex %d", mtu, ifindex);
	return 0;
}

int nl_link_set_master(struct nl_sock_ctx *nl, int ifindex, int master_ifindex,
		       char *err, size_t errlen)
{
	struct nlmsghdr *nlh = nl_link_msg(nl, RTM_SETLINK, ifindex);

	mnl_attr_put_u32(nlh, IFLA_MASTER, (uint32_t)master_ifindex);
	if (nl_talk(nl, nlh, NULL, NULL) < 0)
		return nl_fail(err, errlen, errno, nl->ext,
			       "set master of ifindex %d to ifindex %d",
			       ifindex, master_ifindex);
	return 0;
}

int nl_link_set_up(struct nl_sock_ctx *nl, int ifindex, int up, char *err,
		   size_t errlen)
{
	struct nlmsghdr *nlh = nl_link_msg(nl, RTM_SETLINK, ifindex);
	struct ifinfomsg *ifi = mnl_nlmsg_get_payload(nlh);

	ifi->ifi_change = IFF_UP;
	ifi->ifi_flags = up ? IFF_UP : 0;
	if (nl_talk(nl, nlh, NULL, NULL) < 0)
		return nl_fail(err, errlen, errno, nl->ext,
			       "set ifindex %d %s", ifindex,
			       up ? "up" : "down");
	return 0;
}

int nl_link_del(struct nl_sock_ctx *nl, int ifindex, char *err,
		size_t errlen)
{
	if (nl_talk(nl, nl_link_msg(nl, RTM_DELLINK, ifindex), NULL, NULL) < 0)
		return nl_fail(err, errlen, errno, nl->ext,
			       "delete link ifindex %d", ifindex);
	return 0;
}

/* --- addresses on links --------------------------------------------------- */

static struct nlmsghdr *nl_ifaddr_msg(struct nl_sock_ctx *nl, uint16_t type,
				      int ifindex, const struct inet_prefix *p,
				      unsigned int ifa_flags)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(nl->buf);
	struct ifaddrmsg *ifa;
	size_t alen = inet_addr_len(p->addr.family);

	nlh->nlmsg_type = type;
	ifa = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifa));
	ifa->ifa_family = (uint8_t)p->addr.family;
	ifa->ifa_prefixlen = (uint8_t)p->plen;
	ifa->ifa_flags = (uint8_t)ifa_flags;
	ifa->ifa_scope = RT_SCOPE_UNIVERSE;
	ifa->ifa_index = (uint32_t)ifindex;
	mnl_attr_put(nlh, IFA_LOCAL, alen, p->addr.raw);
	mnl_attr_put(nlh, IFA_ADDRESS, alen, p->addr.raw);
	if (ifa_flags)
		mnl_attr_put_u32(nlh, IFA_FLAGS, ifa_flags);
	return nlh;
}

static int nl_prefix_ok(const struct inet_prefix *p, const char *op,
			int ifindex, char *err, size_t errlen)
{
	if (!inet_addr_len(p->addr.family) ||
	    p->plen > (p->addr.family == AF_INET ? 32u : 128u))
		return errbuf_fail(err, errlen, EINVAL,
				   "%s address on ifindex %d: bad family or prefix length",
				   op, ifindex);
	return 0;
}

int nl_ifaddr_add(struct nl_sock_ctx *nl, int ifindex,
		  const struct inet_prefix *p, unsigned int flags, char *err,
		  size_t errlen)
{
	char s[INET_PREFIX_STRLEN];
	struct nlmsghdr *nlh;
	unsigned int f = 0;

	if (nl_prefix_ok(p, "add", ifindex, err, errlen) < 0)
		return -1;
	if ((flags & NL_ADDR_NODAD) && p->addr.family == AF_INET6)
		f |= IFA_F_NODAD;
	if (flags & NL_ADDR_NOPREFIXROUTE)
		f |= IFA_F_NOPREFIXROUTE;
	nlh = nl_ifaddr_msg(nl, RTM_NEWADDR, ifindex, p, f);
	nlh->nlmsg_flags |= NLM_F_CREATE | NLM_F_EXCL;
	if (nl_talk(nl, nlh, NULL, NULL) < 0)
		return nl_fail(err, errlen, errno, nl->ext,
			       "add address %s on ifindex %d",
			       inet_prefix_str(p, s, sizeof(s)), ifindex);
	return 0;
}

int nl_ifaddr_del(struct nl_sock_ctx *nl, int ifindex,
		  const struct inet_prefix *p, char *err, size_t errlen)
{
	char s[INET_PREFIX_STRLEN];

	if (nl_prefix_ok(p, "delete", ifindex, err, errlen) < 0)
		return -1;
	if (nl_talk(nl, nl_ifaddr_msg(nl, RTM_DELADDR, ifindex, p, 0), NULL,
		    NULL) < 0)
		return nl_fail(err, errlen, errno, nl->ext,
			       "delete address %s on ifindex %d",
			       inet_prefix_str(p, s, sizeof(s)), ifindex);
	return 0;
}

/* --- route lookup --------------------------------------------------------- */

struct nl_route_ans {
	struct nl_route	*out;
	int		 got;
};

static int nl_route_parse(const struct nlmsghdr *nlh, void *data)
{
	struct nl_route_ans *ans = data;
	struct nl_route *out = ans->out;
	const struct nlattr *tb[RTA_MAX + 1] = { NULL };
	struct nl_attrs a = { tb, RTA_MAX };
	const struct rtmsg *rtm;
	const struct rtvia *via;
	uint32_t v;

	if (nlh->nlmsg_type != RTM_NEWROUTE || ans->got)
		return 0;
	if (mnl_nlmsg_get_payload_len(nlh) < sizeof(*rtm)) {
		errno = EPROTO;
		return -1;
	}
	rtm = mnl_nlmsg_get_payload(nlh);
	mnl_attr_parse(nlh, sizeof(*rtm), nl_attr_cb, &a);
	memset(out, 0, sizeof(*out));
	ans->got = 1;
	out->type = rtm->rtm_type;
	out->table = rtm->rtm_table;
	if (nl_attr_u32(tb[RTA_TABLE], &v) == 0)
		out->table = v;
	if (nl_attr_u32(tb[RTA_OIF], &v) == 0)
		out->oif = (int)v;
	if (nl_attr_addr(tb[RTA_GATEWAY], rtm->rtm_family, &out->gateway) == 0)
		out->has_gateway = 1;
	else if (tb[RTA_VIA] &&
		 mnl_attr_get_payload_len(tb[RTA_VIA]) >= sizeof(*via)) {
		/* an IPv4 route through an IPv6 next hop (RFC 5549) */
		via = mnl_attr_get_payload(tb[RTA_VIA]);
		if (mnl_attr_get_payload_len(tb[RTA_VIA]) ==
		    sizeof(*via) + inet_addr_len(via->rtvia_family) &&
		    inet_addr_len(via->rtvia_family)) {
			out->gateway.family = via->rtvia_family;
			memcpy(out->gateway.raw, via->rtvia_addr,
			       inet_addr_len(via->rtvia_family));
			out->has_gateway = 1;
		}
	}
	if (nl_attr_addr(tb[RTA_PREFSRC], rtm->rtm_family, &out->prefsrc) == 0)
		out->has_prefsrc = 1;
	return 0;
}

int nl_route_get(struct nl_sock_ctx *nl, const struct inet_addr *dst,
		 int oif, struct nl_route *out, char *err, size_t errlen)
{
	char s[INET_ADDR_STRLEN], o[32] = "";
	struct nl_route_ans ans = { out, 0 };
	struct nlmsghdr *nlh;
	struct rtmsg *rtm;
	size_t alen = inet_addr_len(dst->family);

	if (oif)
		snprintf(o, sizeof(o), " oif %d", oif);
	if (!alen)
		return errbuf_fail(err, errlen, EAFNOSUPPORT,
				   "route get: address family %d", dst->family);
	nlh = mnl_nlmsg_put_header(nl->buf);
	nlh->nlmsg_type = RTM_GETROUTE;
	rtm = mnl_nlmsg_put_extra_header(nlh, sizeof(*rtm));
	rtm->rtm_family = (uint8_t)dst->family;
	rtm->rtm_dst_len = (uint8_t)(alen * 8);
	mnl_attr_put(nlh, RTA_DST, alen, dst->raw);
	if (oif)
		mnl_attr_put_u32(nlh, RTA_OIF, (uint32_t)oif);
	if (nl_talk(nl, nlh, nl_route_parse, &ans) < 0)
		return nl_fail(err, errlen, errno, nl->ext, "route get %s%s",
			       inet_addr_str(dst, s, sizeof(s)), o);
	if (!ans.got)
		return errbuf_fail(err, errlen, EPROTO,
				   "route get %s%s: the kernel sent no route",
				   inet_addr_str(dst, s, sizeof(s)), o);
	return 0;
}

const char *nl_route_type_str(uint8_t type, char *buf, size_t len)
{
	static const char *const names[] = {
		[RTN_UNSPEC] = "none", [RTN_UNICAST] = "unicast",
		[RTN_LOCAL] = "local", [RTN_BROADCAST] = "broadcast",
		[RTN_ANYCAST] = "anycast", [RTN_MULTICAST] = "multicast",
		[RTN_BLACKHOLE] = "blackhole",
		[RTN_UNREACHABLE] = "unreachable",
		[RTN_PROHIBIT] = "prohibit", [RTN_THROW] = "throw",
		[RTN_NAT] = "nat", [RTN_XRESOLVE] = "xresolve",
	};

	if (type < sizeof(names) / sizeof(names[0]) && names[type])
		snprintf(buf, len, "%s", names[type]);
	else
		snprintf(buf, len, "type %u", type);
	return buf;
}

/* --- change notifications ------------------------------------------------- */

static const struct {
	unsigned int	kind;
	unsigned int	group;
	int		optional;	/* newer than the rest */
} nl_mon_groups[] = {
	{ NL_CHG_ROUTE, RTNLGRP_IPV4_ROUTE, 0 },
	{ NL_CHG_ROUTE, RTNLGRP_IPV6_ROUTE, 0 },
	{ NL_CHG_ROUTE, RTNLGRP_IPV4_RULE, 0 },
	{ NL_CHG_ROUTE, RTNLGRP_IPV6_RULE, 0 },
	{ NL_CHG_ROUTE, RTNLGRP_NEXTHOP, 1 },
	{ NL_CHG_ADDR, RTNLGRP_IPV4_IFADDR, 0 },
	{ NL_CHG_ADDR, RTNLGRP_IPV6_IFADDR, 0 },
	{ NL_CHG_LINK, RTNLGRP_LINK, 0 },
};

int nl_monitor_open(struct nl_sock_ctx *nl, unsigned int kinds, char *err,
		    size_t errlen)
{
	struct mnl_socket *mon;
	unsigned int i, g;
	int rcvbuf = NL_MON_RCVBUF, e;

	kinds &= NL_CHG_ALL;
	if (!kinds)
		return errbuf_fail(err, errlen, EINVAL,
				   "monitor rtnetlink: nothing to watch");
	mon = mnl_socket_open2(NETLINK_ROUTE, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (!mon)
		return nl_fail(err, errlen, errno, NULL,
			       "monitor rtnetlink: socket");
	if (mnl_socket_bind(mon, 0, MNL_SOCKET_AUTOPID) < 0) {
		e = errno;
		mnl_socket_close(mon);
		return nl_fail(err, errlen, e, NULL, "monitor rtnetlink: bind");
	}
	/* a bigger queue makes overruns rarer; they are survivable anyway */
	setsockopt(mnl_socket_get_fd(mon), SOL_SOCKET, SO_RCVBUF, &rcvbuf,
		   sizeof(rcvbuf));
	for (i = 0; i < sizeof(nl_mon_groups) / sizeof(nl_mon_groups[0]); i++) {
		if (!(kinds & nl_mon_groups[i].kind))
			continue;
		g = nl_mon_groups[i].group;
		if (mnl_socket_setsockopt(mon, NETLINK_ADD_MEMBERSHIP, &g,
					  sizeof(g)) == 0 ||
		    nl_mon_groups[i].optional)
			continue;
		e = errno;
		mnl_socket_close(mon);
		return nl_fail(err, errlen, e, NULL,
			       "monitor rtnetlink: join group %u", g);
	}
	if (nl->mon)
		mnl_socket_close(nl->mon);
	nl->mon = mon;
	nl->mon_kinds = kinds;
	return mnl_socket_get_fd(mon);
}

int nl_monitor_fd(const struct nl_sock_ctx *nl)
{
	return nl && nl->mon ? mnl_socket_get_fd(nl->mon) : -1;
}

static unsigned int nl_mon_kind(uint16_t type)
{
	switch (type) {
	case RTM_NEWROUTE:
	case RTM_DELROUTE:
	case RTM_NEWRULE:
	case RTM_DELRULE:
	case RTM_NEWNEXTHOP:
	case RTM_DELNEXTHOP:
		return NL_CHG_ROUTE;
	case RTM_NEWADDR:
	case RTM_DELADDR:
		return NL_CHG_ADDR;
	case RTM_NEWLINK:
	case RTM_DELLINK:
		return NL_CHG_LINK;
	case NLMSG_OVERRUN:
		return NL_CHG_OVERRUN | NL_CHG_ALL;
	default:
		return 0;
	}
}

int nl_monitor_read(struct nl_sock_ctx *nl, char *err, size_t errlen)
{
	const struct nlmsghdr *nlh;
	unsigned int seen = 0;
	ssize_t n;
	int i, len;

	if (!nl->mon)
		return errbuf_fail(err, errlen, EBADF,
				   "read rtnetlink notifications: no monitor open");
	for (i = 0; i < NL_MON_BATCH; i++) {
		n = mnl_socket_recvfrom(nl->mon, nl->buf, sizeof(nl->buf));
		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				break;
			if (errno == EINTR)
				continue;
			if (errno == ENOBUFS || errno == ENOSPC) {
				/* the queue overflowed, or a message was cut */
				seen |= NL_CHG_OVERRUN | NL_CHG_ALL;
				continue;
			}
			return nl_fail(err, errlen, errno, NULL,
				       "read rtnetlink notifications");
		}
		len = (int)n;
		for (nlh = (const struct nlmsghdr *)nl->buf;
		     mnl_nlmsg_ok(nlh, len); nlh = mnl_nlmsg_next(nlh, &len))
			seen |= nl_mon_kind(nlh->nlmsg_type);
	}
	if (seen & NL_CHG_OVERRUN)
		return (int)(NL_CHG_OVERRUN | nl->mon_kinds);
	return (int)(seen & nl->mon_kinds);
}

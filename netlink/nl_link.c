// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * TUN devices and rtnetlink; see nl_link.h.
 *
 * libnl-route-3 owns the object model: link lookups (rtnl_link_get_kernel),
 * the link and address change requests are built from rtnl_link and
 * rtnl_addr objects, and change notifications come from an nl_cache_mngr
 * keeping route, rule, address and link caches.  libnl 3.7 neither asks
 * for nor hands over the kernel's extended acks, and folds errnos into
 * NLE_* codes (ENETUNREACH and EHOSTUNREACH both become NLE_FAILURE), so
 * the requests a user's error message comes from go out through libmnl:
 * one at a time on a blocking socket, always with NLM_F_ACK, reading until
 * the kernel's ack or error for that sequence number (anything else on
 * the socket, a stale answer to an earlier, interrupted request, is
 * skipped).  NETLINK_EXT_ACK is asked for, so a refusal carries the
 * kernel's own words when it has them.
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
#include <netlink/cache.h>
#include <netlink/errno.h>
#include <netlink/netlink.h>
#include <netlink/route/addr.h>
#include <netlink/route/link.h>
#include <linux/if.h>
#include <linux/if_addr.h>
#include <linux/fib_rules.h>
#include <linux/if_tun.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#define NL_BUFSZ	32768		/* answers and notifications */
#define NL_EXTLEN	160		/* extended-ack message kept */
#define NL_MON_RCVBUF	(1 << 20)	/* asked for, best effort */
#define NL_MON_BATCH	64		/* data_ready calls per read */
#define NL_MON_CACHES	4		/* route, rule, addr, link */
#ifndef TUNSETCARRIER			/* Linux 5.0; older headers */
#define TUNSETCARRIER	_IOW('T', 226, int)
#endif

struct nl_sock_ctx;

/* One cache of the manager and the NL_CHG_* bit its changes set. */
struct nl_mon_cache {
	struct nl_sock_ctx	*nl;
	struct nl_cache		*cache;		/* the manager's */
	unsigned int		 kind;
};

struct nl_sock_ctx {
	struct mnl_socket	*req;		/* requests that may fail */
	unsigned int		 portid;
	unsigned int		 seq;
	struct nl_sock		*sk;		/* libnl: lookups, refills */
	struct nl_sock		*mon_sk;	/* the manager's event socket */
	struct nl_cache_mngr	*mngr;
	struct nl_mon_cache	 mon[NL_MON_CACHES];
	unsigned int		 mon_kinds;
	unsigned int		 mon_seen;	/* during nl_monitor_read() */
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

/*
 * An errno for a (negative) libnl error code.  libnl keeps only a class of
 * the kernel's errno; this gives back the usual member of each class.
 */
static int nl_errno(int nlerr)
{
	static const struct {
		int	nle;
		int	e;
	} map[] = {
		{ NLE_INTR, EINTR }, { NLE_AGAIN, EAGAIN },
		{ NLE_BAD_SOCK, EBADF }, { NLE_NOMEM, ENOMEM },
		{ NLE_EXIST, EEXIST }, { NLE_INVAL, EINVAL },
		{ NLE_RANGE, ERANGE }, { NLE_MSGSIZE, EMSGSIZE },
		{ NLE_OPNOTSUPP, EOPNOTSUPP },
		{ NLE_AF_NOSUPPORT, EAFNOSUPPORT },
		{ NLE_OBJ_NOTFOUND, ENOENT }, { NLE_NOATTR, EPROTO },
		{ NLE_MISSING_ATTR, EINVAL }, { NLE_NOACCESS, EACCES },
		{ NLE_PERM, EPERM }, { NLE_NODEV, ENODEV },
		{ NLE_NOADDR, EADDRNOTAVAIL }, { NLE_BUSY, EBUSY },
		{ NLE_PARSE_ERR, EPROTO }, { NLE_MSG_TRUNC, EMSGSIZE },
		{ NLE_MSG_OVERFLOW, EMSGSIZE },
		{ NLE_PROTO_MISMATCH, EPROTONOSUPPORT },
	};
	size_t i;

	nlerr = nlerr < 0 ? -nlerr : nlerr;
	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (map[i].nle == nlerr)
			return map[i].e;
	return EIO;
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

int nl_tun_set_carrier(int fd, int on, char *err, size_t errlen)
{
	int v = !!on;

	if (ioctl(fd, TUNSETCARRIER, &v) < 0)
		return nl_fail(err, errlen, errno, NULL,
			       "tun carrier %s (TUNSETCARRIER)",
			       on ? "on" : "off");
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
	nl->sk = nl_socket_alloc();
	if (!nl->sk) {
		nl_ctx_close(nl);
		nl_fail(err, errlen, ENOMEM, NULL, "open rtnetlink (libnl)");
		return NULL;
	}
	e = nl_connect(nl->sk, NETLINK_ROUTE);
	if (e < 0) {
		nl_ctx_close(nl);
		errbuf_fail(err, errlen, nl_errno(e),
			    "open rtnetlink (libnl): %s", nl_geterror(e));
		return NULL;
	}
	return nl;
}

static void nl_monitor_close(struct nl_sock_ctx *nl)
{
	if (nl->mngr)
		nl_cache_mngr_free(nl->mngr);	/* and its caches */
	if (nl->mon_sk)
		nl_socket_free(nl->mon_sk);
	nl->mngr = NULL;
	nl->mon_sk = NULL;
	memset(nl->mon, 0, sizeof(nl->mon));
	nl->mon_kinds = 0;
}

void nl_ctx_close(struct nl_sock_ctx *nl)
{
	if (!nl)
		return;
	nl_monitor_close(nl);
	if (nl->req)
		mnl_socket_close(nl->req);
	if (nl->sk)
		nl_socket_free(nl->sk);
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

/* --- libnl objects sent through libmnl ------------------------------------ */

/*
 * Send a request libnl built (consumed) through nl_talk, so a refusal keeps
 * the kernel's errno and extended ack.  NLE is what building it returned.
 */
static int nl_talk_msg(struct nl_sock_ctx *nl, int nle, struct nl_msg *msg)
{
	struct nlmsghdr *h;

	if (nle < 0) {
		errno = nl_errno(nle);
		return -1;
	}
	h = nlmsg_hdr(msg);
	if (h->nlmsg_len > sizeof(nl->buf)) {
		nlmsg_free(msg);
		errno = EMSGSIZE;
		return -1;
	}
	memcpy(nl->buf, h, h->nlmsg_len);
	nlmsg_free(msg);
	return nl_talk(nl, (struct nlmsghdr *)nl->buf, NULL, NULL);
}

/* --- links ---------------------------------------------------------------- */

static int nl_link_lookup(struct nl_sock_ctx *nl, int ifindex,
			  const char *name, struct nl_link_info *out)
{
	struct rtnl_link *l = NULL;
	int r;

	memset(out, 0, sizeof(*out));
	out->ifindex = -1;
	r = rtnl_link_get_kernel(nl->sk, ifindex, name, &l);
	if (r < 0) {
		errno = nl_errno(r);
		return -1;
	}
	if (!l) {			/* an ack with no answer */
		errno = ENODEV;
		return -1;
	}
	out->ifindex = rtnl_link_get_ifindex(l);
	snprintf(out->name, sizeof(out->name), "%s",
		 rtnl_link_get_name(l) ? rtnl_link_get_name(l) : "");
	out->flags = rtnl_link_get_flags(l);
	out->mtu = rtnl_link_get_mtu(l);
	out->operstate = rtnl_link_get_operstate(l);
	rtnl_link_put(l);
	return 0;
}

int nl_link_get(struct nl_sock_ctx *nl, const char *name,
		struct nl_link_info *out, char *err, size_t errlen)
{
	if (nl_ifname_check(name, err, errlen) < 0)
		return -1;
	if (nl_link_lookup(nl, 0, name, out) < 0)
		return nl_fail(err, errlen, errno, NULL, "get link '%s'", name);
	return 0;
}

int nl_link_get_index(struct nl_sock_ctx *nl, int ifindex,
		      struct nl_link_info *out, char *err, size_t errlen)
{
	if (ifindex <= 0)
		return errbuf_fail(err, errlen, EINVAL,
				   "get link ifindex %d: not an ifindex", ifindex);
	if (nl_link_lookup(nl, ifindex, NULL, out) < 0)
		return nl_fail(err, errlen, errno, NULL,
			       "get link ifindex %d", ifindex);
	return 0;
}

/* Apply CHANGES (consumed) to the link IFINDEX. */
static int nl_link_change(struct nl_sock_ctx *nl, int ifindex,
			  struct rtnl_link *changes)
{
	struct rtnl_link *orig = rtnl_link_alloc();
	struct nl_msg *msg = NULL;
	int r;

	if (!orig || !changes) {
		rtnl_link_put(orig);
		rtnl_link_put(changes);
		errno = ENOMEM;
		return -1;
	}
	rtnl_link_set_ifindex(orig, ifindex);
	r = rtnl_link_build_change_request(orig, changes, 0, &msg);
	rtnl_link_put(orig);
	rtnl_link_put(changes);
	return nl_talk_msg(nl, r, msg);
}

int nl_link_set_mtu(struct nl_sock_ctx *nl, int ifindex, unsigned int mtu,
		    char *err, size_t errlen)
{
	struct rtnl_link *c = rtnl_link_alloc();

	if (c)
		rtnl_link_set_mtu(c, mtu);
	if (nl_link_change(nl, ifindex, c) < 0)
		return nl_fail(err, errlen, errno, nl->ext,
			       "set mtu %u on ifindex %d", mtu, ifindex);
	return 0;
}

int nl_link_set_master(struct nl_sock_ctx *nl, int ifindex, int master_ifindex,
		       char *err, size_t errlen)
{
	struct rtnl_link *c = rtnl_link_alloc();

	if (c)
		rtnl_link_set_master(c, master_ifindex);
	if (nl_link_change(nl, ifindex, c) < 0)
		return nl_fail(err, errlen, errno, nl->ext,
			       "set master of ifindex %d to ifindex %d",
			       ifindex, master_ifindex);
	return 0;
}

int nl_link_set_up(struct nl_sock_ctx *nl, int ifindex, int up, char *err,
		   size_t errlen)
{
	struct rtnl_link *c = rtnl_link_alloc();

	if (c && up)
		rtnl_link_set_flags(c, IFF_UP);
	else if (c)
		rtnl_link_unset_flags(c, IFF_UP);
	if (nl_link_change(nl, ifindex, c) < 0)
		return nl_fail(err, errlen, errno, nl->ext,
			       "set ifindex %d %s", ifindex,
			       up ? "up" : "down");
	return 0;
}

int nl_link_del(struct nl_sock_ctx *nl, int ifindex, char *err,
		size_t errlen)
{
	struct rtnl_link *l = rtnl_link_alloc();
	struct nl_msg *msg = NULL;
	int r = -NLE_NOMEM;

	if (l) {
		rtnl_link_set_ifindex(l, ifindex);
		r = rtnl_link_build_delete_request(l, &msg);
		rtnl_link_put(l);
	}
	if (nl_talk_msg(nl, r, msg) < 0)
		return nl_fail(err, errlen, errno, nl->ext,
			       "delete link ifindex %d", ifindex);
	return 0;
}

/* --- addresses on links --------------------------------------------------- */

/* An rtnl_addr for P on IFINDEX with IFA_F_* FLAGS, or NULL (ENOMEM). */
static struct rtnl_addr *nl_ifaddr_obj(int ifindex,
				       const struct inet_prefix *p,
				       unsigned int flags)
{
	struct rtnl_addr *a = rtnl_addr_alloc();
	struct nl_addr *local;

	local = nl_addr_build(p->addr.family, p->addr.raw,
			      inet_addr_len(p->addr.family));
	if (!a || !local || rtnl_addr_set_local(a, local) < 0) {
		nl_addr_put(local);
		rtnl_addr_put(a);
		errno = ENOMEM;
		return NULL;
	}
	nl_addr_put(local);
	rtnl_addr_set_ifindex(a, ifindex);
	rtnl_addr_set_prefixlen(a, (int)p->plen);
	rtnl_addr_set_scope(a, RT_SCOPE_UNIVERSE);
	if (flags)
		rtnl_addr_set_flags(a, flags);
	return a;
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
	struct nl_msg *msg = NULL;
	struct rtnl_addr *a;
	unsigned int f = 0;
	int r = -NLE_NOMEM;

	if (nl_prefix_ok(p, "add", ifindex, err, errlen) < 0)
		return -1;
	if ((flags & NL_ADDR_NODAD) && p->addr.family == AF_INET6)
		f |= IFA_F_NODAD;
	if (flags & NL_ADDR_NOPREFIXROUTE)
		f |= IFA_F_NOPREFIXROUTE;
	a = nl_ifaddr_obj(ifindex, p, f);
	if (a) {
		r = rtnl_addr_build_add_request(a, NLM_F_CREATE | NLM_F_EXCL,
						&msg);
		rtnl_addr_put(a);
	}
	if (nl_talk_msg(nl, r, msg) < 0)
		return nl_fail(err, errlen, errno, nl->ext,
			       "add address %s on ifindex %d",
			       inet_prefix_str(p, s, sizeof(s)), ifindex);
	return 0;
}

int nl_ifaddr_del(struct nl_sock_ctx *nl, int ifindex,
		  const struct inet_prefix *p, char *err, size_t errlen)
{
	char s[INET_PREFIX_STRLEN];
	struct nl_msg *msg = NULL;
	struct rtnl_addr *a;
	int r = -NLE_NOMEM;

	if (nl_prefix_ok(p, "delete", ifindex, err, errlen) < 0)
		return -1;
	a = nl_ifaddr_obj(ifindex, p, 0);
	if (a) {
		r = rtnl_addr_build_delete_request(a, 0, &msg);
		rtnl_addr_put(a);
	}
	if (nl_talk_msg(nl, r, msg) < 0)
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

struct nl_ifaddr_ans {
	int ifindex;
	struct nl_ifaddr *out;
	unsigned int max, n;
};

static int nl_ifaddr_parse_attr(const struct nlattr *attr, void *data)
{
	const struct nlattr **tb = data;
	int type = mnl_attr_get_type(attr);

	if (mnl_attr_type_valid(attr, IFA_MAX) > 0)
		tb[type] = attr;
	return MNL_CB_OK;
}

static int nl_ifaddr_parse(const struct nlmsghdr *nlh, void *data)
{
	struct nl_ifaddr_ans *ans = data;
	const struct nlattr *tb[IFA_MAX + 1] = { NULL };
	const struct ifaddrmsg *ifa;
	struct nl_ifaddr *a;
	uint32_t fl;

	if (nlh->nlmsg_type != RTM_NEWADDR ||
	    nlh->nlmsg_len < NLMSG_LENGTH(sizeof(*ifa)))
		return 0;
	ifa = mnl_nlmsg_get_payload(nlh);
	if ((int)ifa->ifa_index != ans->ifindex ||
	    (ifa->ifa_family != AF_INET && ifa->ifa_family != AF_INET6) ||
	    ans->n >= ans->max)
		return 0;
	mnl_attr_parse(nlh, sizeof(*ifa), nl_ifaddr_parse_attr, tb);
	a = &ans->out[ans->n];
	memset(a, 0, sizeof(*a));
	/* IFA_LOCAL is the address itself (IFA_ADDRESS the peer's on a
	 * point-to-point link); IPv6 has IFA_ADDRESS alone */
	if (nl_attr_addr(tb[IFA_LOCAL], ifa->ifa_family, &a->p.addr) < 0 &&
	    nl_attr_addr(tb[IFA_ADDRESS], ifa->ifa_family, &a->p.addr) < 0)
		return 0;
	a->p.plen = ifa->ifa_prefixlen;
	a->flags = ifa->ifa_flags;
	if (nl_attr_u32(tb[IFA_FLAGS], &fl) == 0)
		a->flags = fl;
	a->scope = ifa->ifa_scope;
	ans->n++;
	return 0;
}

int nl_ifaddr_dump(struct nl_sock_ctx *nl, int ifindex,
		   struct nl_ifaddr *out, unsigned int max, char *err,
		   size_t errlen)
{
	struct nl_ifaddr_ans ans = { ifindex, out, max, 0 };
	struct nlmsghdr *nlh;
	struct ifaddrmsg *ifa;

	nlh = mnl_nlmsg_put_header(nl->buf);
	nlh->nlmsg_type = RTM_GETADDR;
	nlh->nlmsg_flags = NLM_F_DUMP;
	ifa = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifa));
	ifa->ifa_family = AF_UNSPEC;
	ifa->ifa_index = (uint32_t)ifindex;	/* filtered here all the same */
	if (nl_talk(nl, nlh, nl_ifaddr_parse, &ans) < 0)
		return nl_fail(err, errlen, errno, nl->ext,
			       "addresses of ifindex %d", ifindex);
	return (int)ans.n;
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

/* --- local routes and rules ---------------------------------------------- */

int nl_route_local(struct nl_sock_ctx *nl, int add, uint32_t table,
		   const struct inet_addr *dst, int oif, char *err,
		   size_t errlen)
{
	char s[INET_ADDR_STRLEN];
	struct nlmsghdr *nlh;
	struct rtmsg *rtm;
	size_t alen = inet_addr_len(dst->family);

	if (!alen || oif <= 0)
		return errbuf_fail(err, errlen, EINVAL,
				   "%s local route: family %d, ifindex %d",
				   add ? "add" : "delete", dst->family, oif);
	nlh = mnl_nlmsg_put_header(nl->buf);
	nlh->nlmsg_type = add ? RTM_NEWROUTE : RTM_DELROUTE;
	if (add)
		nlh->nlmsg_flags = NLM_F_CREATE | NLM_F_EXCL;
	rtm = mnl_nlmsg_put_extra_header(nlh, sizeof(*rtm));
	rtm->rtm_family = (uint8_t)dst->family;
	rtm->rtm_dst_len = (uint8_t)(alen * 8);
	rtm->rtm_table = table < 256 ? (uint8_t)table : RT_TABLE_UNSPEC;
	rtm->rtm_protocol = add ? RTPROT_STATIC : RTPROT_UNSPEC;
	rtm->rtm_scope = add ? RT_SCOPE_HOST : RT_SCOPE_NOWHERE;
	rtm->rtm_type = RTN_LOCAL;
	mnl_attr_put(nlh, RTA_DST, alen, dst->raw);
	mnl_attr_put_u32(nlh, RTA_OIF, (uint32_t)oif);
	mnl_attr_put_u32(nlh, RTA_TABLE, table);
	if (nl_talk(nl, nlh, NULL, NULL) < 0)
		return nl_fail(err, errlen, errno, nl->ext,
			       "%s local route %s ifindex %d table %u",
			       add ? "add" : "delete",
			       inet_addr_str(dst, s, sizeof(s)), oif, table);
	return 0;
}

int nl_route_via(struct nl_sock_ctx *nl, int add, const struct inet_prefix *dst,
		 const struct inet_addr *gw, int oif, char *err,
		 size_t errlen)
{
	char s[INET_PREFIX_STRLEN], g[INET_ADDR_STRLEN];
	struct nlmsghdr *nlh;
	struct rtmsg *rtm;
	size_t alen = inet_addr_len(dst->addr.family);

	if (!alen || gw->family != dst->addr.family || oif <= 0 ||
	    dst->plen > alen * 8)
		return errbuf_fail(err, errlen, EINVAL,
				   "%s route: family %d via family %d, "
				   "ifindex %d", add ? "add" : "delete",
				   dst->addr.family, gw->family, oif);
	nlh = mnl_nlmsg_put_header(nl->buf);
	nlh->nlmsg_type = add ? RTM_NEWROUTE : RTM_DELROUTE;
	if (add)
		nlh->nlmsg_flags = NLM_F_CREATE | NLM_F_EXCL;
	rtm = mnl_nlmsg_put_extra_header(nlh, sizeof(*rtm));
	rtm->rtm_family = (uint8_t)dst->addr.family;
	rtm->rtm_dst_len = (uint8_t)dst->plen;
	rtm->rtm_table = RT_TABLE_MAIN;
	rtm->rtm_protocol = add ? RTPROT_DHCP : RTPROT_UNSPEC;
	rtm->rtm_scope = add ? RT_SCOPE_UNIVERSE : RT_SCOPE_NOWHERE;
	rtm->rtm_type = RTN_UNICAST;
	if (dst->plen)
		mnl_attr_put(nlh, RTA_DST, alen, dst->addr.raw);
	mnl_attr_put(nlh, RTA_GATEWAY, alen, gw->raw);
	mnl_attr_put_u32(nlh, RTA_OIF, (uint32_t)oif);
	if (nl_talk(nl, nlh, NULL, NULL) < 0)
		return nl_fail(err, errlen, errno, nl->ext,
			       "%s route %s via %s ifindex %d",
			       add ? "add" : "delete",
			       inet_prefix_str(dst, s, sizeof(s)),
			       inet_addr_str(gw, g, sizeof(g)), oif);
	return 0;
}

int nl_rule_udp_dport(struct nl_sock_ctx *nl, int add, int family,
		      uint32_t pref, const char *iif, uint16_t dport,
		      uint32_t table, char *err, size_t errlen)
{
	struct fib_rule_port_range r = { dport, dport };
	struct fib_rule_hdr *frh;
	struct nlmsghdr *nlh;

	if ((family != AF_INET && family != AF_INET6) || !iif ||
	    !*iif || strlen(iif) >= IFNAMSIZ)
		return errbuf_fail(err, errlen, EINVAL,
				   "%s rule: family %d, iif '%s'",
				   add ? "add" : "delete", family,
				   iif ? iif : "");
	nlh = mnl_nlmsg_put_header(nl->buf);
	nlh->nlmsg_type = add ? RTM_NEWRULE : RTM_DELRULE;
	if (add)
		nlh->nlmsg_flags = NLM_F_CREATE | NLM_F_EXCL;
	frh = mnl_nlmsg_put_extra_header(nlh, sizeof(*frh));
	frh->family = (uint8_t)family;
	frh->action = FR_ACT_TO_TBL;
	frh->table = table < 256 ? (uint8_t)table : RT_TABLE_UNSPEC;
	mnl_attr_put_u32(nlh, FRA_PRIORITY, pref);
	mnl_attr_put_strz(nlh, FRA_IIFNAME, iif);
	mnl_attr_put_u8(nlh, FRA_IP_PROTO, IPPROTO_UDP);
	mnl_attr_put(nlh, FRA_DPORT_RANGE, sizeof(r), &r);
	mnl_attr_put_u32(nlh, FRA_TABLE, table);
	if (nl_talk(nl, nlh, NULL, NULL) < 0)
		return nl_fail(err, errlen, errno, nl->ext,
			       "%s rule pref %u iif %s udp dport %u table %u "
			       "(%s)", add ? "add" : "delete", pref, iif,
			       dport, table,
			       family == AF_INET ? "IPv4" : "IPv6");
	return 0;
}

/* --- change notifications ------------------------------------------------- */

/*
 * The caches the manager keeps, by kind.  libnl 3.7 has no cache for
 * nexthop objects (RTM_NEWNEXTHOP): those are joined by hand and seen in
 * nl_mon_msg_in.
 */
static const struct {
	unsigned int	kind;
	const char	*name;
} nl_mon_caches[NL_MON_CACHES] = {
	{ NL_CHG_ROUTE, "route/route" },
	{ NL_CHG_ROUTE, "route/rule" },
	{ NL_CHG_ADDR, "route/addr" },
	{ NL_CHG_LINK, "route/link" },
};

static void nl_mon_change(struct nl_cache *cache, struct nl_object *obj,
			  int action, void *data)
{
	struct nl_mon_cache *mc = data;

	(void)cache;
	(void)obj;
	(void)action;
	mc->nl->mon_seen |= mc->kind;
}

/* Every message on the event socket, before the manager sees it. */
static int nl_mon_msg_in(struct nl_msg *msg, void *data)
{
	struct nl_sock_ctx *nl = data;
	uint16_t type = nlmsg_hdr(msg)->nlmsg_type;

	/* a netconf change (IPv6 forwarding switched) counts as a route
	 * change: the owner looks at forwarding again then */
	if (type == RTM_NEWNEXTHOP || type == RTM_DELNEXTHOP ||
	    type == RTM_NEWNETCONF)
		nl->mon_seen |= NL_CHG_ROUTE;
	return NL_OK;
}

static int nl_mon_fail(struct nl_sock_ctx *nl, int nle, char *err,
		       size_t errlen, const char *what)
{
	nl_monitor_close(nl);
	return errbuf_fail(err, errlen, nl_errno(nle),
			   "monitor rtnetlink: %s: %s", what, nl_geterror(nle));
}

/* The manager, its event socket and one cache per wanted kind. */
static int nl_mon_setup(struct nl_sock_ctx *nl, unsigned int kinds,
			char *err, size_t errlen)
{
	struct nl_mon_cache *mc;
	unsigned int i;
	int r;

	nl->mon_sk = nl_socket_alloc();
	if (!nl->mon_sk)
		return nl_mon_fail(nl, -NLE_NOMEM, err, errlen, "socket");
	r = nl_cache_mngr_alloc(nl->mon_sk, NETLINK_ROUTE, 0, &nl->mngr);
	if (r < 0)
		return nl_mon_fail(nl, r, err, errlen, "cache manager");
	/* a bigger queue makes overruns rarer; they are survivable anyway */
	nl_socket_set_buffer_size(nl->mon_sk, NL_MON_RCVBUF, 0);
	nl_socket_modify_cb(nl->mon_sk, NL_CB_MSG_IN, NL_CB_CUSTOM,
			    nl_mon_msg_in, nl);
	if (kinds & NL_CHG_ROUTE) {	/* newer kernels only: best effort */
		nl_socket_add_membership(nl->mon_sk, RTNLGRP_NEXTHOP);
		nl_socket_add_membership(nl->mon_sk, RTNLGRP_IPV6_NETCONF);
	}
	for (i = 0; i < NL_MON_CACHES; i++) {
		if (!(kinds & nl_mon_caches[i].kind))
			continue;
		mc = &nl->mon[i];
		mc->nl = nl;
		mc->kind = nl_mon_caches[i].kind;
		r = nl_cache_mngr_add(nl->mngr, nl_mon_caches[i].name,
				      nl_mon_change, mc, &mc->cache);
		if (r < 0)
			return nl_mon_fail(nl, r, err, errlen,
					   nl_mon_caches[i].name);
	}
	nl->mon_kinds = kinds;
	return 0;
}

int nl_monitor_open(struct nl_sock_ctx *nl, unsigned int kinds, char *err,
		    size_t errlen)
{
	kinds &= NL_CHG_ALL;
	if (!kinds)
		return errbuf_fail(err, errlen, EINVAL,
				   "monitor rtnetlink: nothing to watch");
	nl_monitor_close(nl);
	if (nl_mon_setup(nl, kinds, err, errlen) < 0)
		return -1;
	return nl_cache_mngr_get_fd(nl->mngr);
}

int nl_monitor_fd(const struct nl_sock_ctx *nl)
{
	return nl && nl->mngr ? nl_cache_mngr_get_fd(nl->mngr) : -1;
}

/* After an overrun the caches missed changes: fill them afresh. */
static int nl_mon_refill(struct nl_sock_ctx *nl, char *err, size_t errlen)
{
	unsigned int i;
	int r;

	for (i = 0; i < NL_MON_CACHES; i++) {
		if (!nl->mon[i].cache)
			continue;
		r = nl_cache_refill(nl->sk, nl->mon[i].cache);
		if (r < 0)
			return errbuf_fail(err, errlen, nl_errno(r),
					   "read rtnetlink notifications: refill %s: %s",
					   nl_mon_caches[i].name,
					   nl_geterror(r));
	}
	return 0;
}

int nl_monitor_read(struct nl_sock_ctx *nl, char *err, size_t errlen)
{
	int i, r, overrun = 0;

	if (!nl->mngr)
		return errbuf_fail(err, errlen, EBADF,
				   "read rtnetlink notifications: no monitor open");
	nl->mon_seen = 0;
	for (i = 0; i < NL_MON_BATCH; i++) {
		r = nl_cache_mngr_data_ready(nl->mngr);	/* up to EAGAIN */
		if (r >= 0)
			break;
		if (r == -NLE_INTR)
			continue;
		if (r == -NLE_NOMEM || r == -NLE_MSG_TRUNC) {
			/* ENOBUFS: the queue overflowed */
			overrun = 1;
			continue;
		}
		return errbuf_fail(err, errlen, nl_errno(r),
				   "read rtnetlink notifications: %s",
				   nl_geterror(r));
	}
	if (overrun) {
		if (nl_mon_refill(nl, err, errlen) < 0)
			return -1;
		return (int)(NL_CHG_OVERRUN | nl->mon_kinds);
	}
	return (int)(nl->mon_seen & nl->mon_kinds);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * nltest: drives netlink/nl_link.h from the command line and prints what
 * happened as greppable lines, one fact per line, for the integration tests.
 *
 *   nltest tun NAME [--mtu N] [--addr CIDR]... [--dad] [--up] [--vnet-hdr]
 *              [--multi-queue [--queues N]] [--hold SECONDS]
 *        prints "tun name=... ifindex=... queues=... nonblock=1 ...",
 *        "mtu N", "addr CIDR nodad|dad", "up", "link ...", then "ready";
 *        with --hold it keeps the device for SECONDS (or until SIGTERM or
 *        SIGINT), printing "rx ..." per packet read from the device, and
 *        "gone ..." if the device is deleted under it; "closed" at the end.
 *        IPv6 addresses get IFA_F_NODAD unless --dad is given.
 *   nltest link NAME | nltest link --index N
 *   nltest link-del NAME
 *   nltest mtu NAME MTU
 *   nltest up NAME | nltest down NAME
 *   nltest addr-add NAME CIDR [--dad]
 *   nltest addr-del NAME CIDR
 *   nltest route-get ADDR [--oif NAME]
 *        "route dst=... type=... gateway=ADDR|none oif=N dev=NAME
 *         prefsrc=ADDR|none table=N"
 *   nltest gids-add NAME PREFIX... | nltest gids-del NAME PREFIX...
 *        gateway/gw_gids.c (ibgwd's rds_gids) on NAME: PREFIXes are
 *        CIDRs (ADDR/32 for one address); prints "gids-add n=N" or
 *        "gids-del"
 *   nltest monitor [--watch route,addr,link] [--until route|addr|link]
 *                  [--timeout SECONDS]
 *        "ready", then "changed route|addr|link" and "overrun" lines; with
 *        --until, exits 0 at the first change of that kind, 1 on timeout.
 *
 * Link commands print the link after the change:
 *   "link name=... ifindex=... mtu=... flags=0x... up=0|1 running=0|1
 *    lower_up=0|1 operstate=..."
 * Exit status: 0 done, 1 a run-time failure (the kernel refused...),
 * 2 bad arguments.  Every error is one line on stderr, "nltest: ...".
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "netlink/nl_link.h"	/* <net/if.h> before <linux/if.h> */
#include "gateway/gw_conf.h"
#include "gateway/gw_gids.h"

#include <linux/if.h>
#include <linux/if_tun.h>

#define MAX_ADDRS	16
#define MAX_QUEUES	16
#define PKT_MAX		(65536 + 64)

static volatile sig_atomic_t stop_sig;
static struct nl_sock_ctx *g_nl;	/* opened once arguments are checked */

static void usage_err(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));

static void usage_err(const char *fmt, ...)
{
	va_list ap;

	fputs("nltest: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

static int run_err(const char *msg)
{
	fprintf(stderr, "nltest: %s\n", msg);
	return 1;
}

/* the rtnetlink context, opened on first use; NULL after printing why */
static struct nl_sock_ctx *nl_get(void)
{
	char err[NL_ERRLEN];

	if (!g_nl && !(g_nl = nl_ctx_open(err, sizeof(err))))
		run_err(err);
	return g_nl;
}

static void usage(void)
{
	puts("usage: nltest tun NAME [--mtu N] [--addr CIDR]... [--dad] [--up]\n"
	     "                  [--vnet-hdr] [--multi-queue [--queues N]] [--hold SECONDS]\n"
	     "       nltest link NAME | link --index N\n"
	     "       nltest link-del NAME\n"
	     "       nltest mtu NAME MTU\n"
	     "       nltest up NAME | down NAME\n"
	     "       nltest addr-add NAME CIDR [--dad]\n"
	     "       nltest addr-del NAME CIDR\n"
	     "       nltest route-get ADDR [--oif NAME]\n"
	     "       nltest monitor [--watch route,addr,link] [--until KIND] [--timeout SECONDS]");
}

static unsigned long parse_ulong(const char *opt, const char *s,
				 unsigned long max)
{
	unsigned long v;
	char *end;

	errno = 0;
	if (*s < '0' || *s > '9')
		usage_err("%s '%s': not a number", opt, s);
	v = strtoul(s, &end, 10);
	if (errno || *end || v > max)
		usage_err("%s '%s': not a number up to %lu", opt, s, max);
	return v;
}

static double parse_secs(const char *opt, const char *s)
{
	double v;
	char *end;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= 0) || isinf(v))
		usage_err("%s '%s': not a number of seconds", opt, s);
	return v;
}

static const char *check_name(const char *name)
{
	char err[NL_ERRLEN];

	if (nl_ifname_check(name, err, sizeof(err)) < 0)
		usage_err("%s", err);
	return name;
}

static void check_prefix(const char *s, struct inet_prefix *p)
{
	char err[NL_ERRLEN];

	if (inet_prefix_parse(s, p, err, sizeof(err)) < 0)
		usage_err("%s", err);
}

/* the value of option argv[*i], moving *i past it */
static const char *optval(int argc, char **argv, int *i)
{
	if (*i + 1 >= argc)
		usage_err("%s needs a value", argv[*i]);
	return argv[++*i];
}

static const char *operstate_str(uint8_t s)
{
	static const char *const names[] = {
		"unknown", "notpresent", "down", "lowerlayerdown", "testing",
		"dormant", "up",
	};

	return s < sizeof(names) / sizeof(names[0]) ? names[s] : "?";
}

static void print_link(const struct nl_link_info *li)
{
	printf("link name=%s ifindex=%d mtu=%u flags=0x%x up=%d running=%d "
	       "lower_up=%d operstate=%s\n", li->name, li->ifindex, li->mtu,
	       li->flags, !!(li->flags & IFF_UP), !!(li->flags & IFF_RUNNING),
	       !!(li->flags & IFF_LOWER_UP), operstate_str(li->operstate));
}

static void on_signal(int sig)
{
	stop_sig = sig;
}

/*
 * Block the stop signals (to be let through only inside ppoll) and catch
 * them; *waitmask is the mask for ppoll.
 */
static void catch_stop_signals(sigset_t *waitmask)
{
	struct sigaction sa;
	sigset_t block;

	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGHUP);
	sigprocmask(SIG_BLOCK, &block, waitmask);
	sigdelset(waitmask, SIGTERM);
	sigdelset(waitmask, SIGINT);
	sigdelset(waitmask, SIGHUP);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

static double now_mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ppoll until DEADLINE (seconds, CLOCK_MONOTONIC); 0 means time is up */
static int wait_fds(struct pollfd *pfd, nfds_t n, double deadline,
		    const sigset_t *mask)
{
	struct timespec ts;
	double left = deadline - now_mono();
	int r;

	if (left <= 0)
		return 0;
	if (left > 86400)
		left = 86400;
	ts.tv_sec = (time_t)left;
	ts.tv_nsec = (long)((left - (double)ts.tv_sec) * 1e9);
	r = ppoll(pfd, n, &ts, mask);
	if (r < 0 && errno == EINTR)
		return -1;	/* a signal: the caller checks stop_sig */
	return r < 0 ? -2 : r == 0 ? (now_mono() >= deadline ? 0 : -1) : r;
}

static void print_packet(int q, const unsigned char *p, size_t len,
			 size_t hdr)
{
	struct inet_addr s, d;
	char ss[INET_ADDR_STRLEN], ds[INET_ADDR_STRLEN];

	memset(&s, 0, sizeof(s));
	memset(&d, 0, sizeof(d));
	if (len < hdr) {
		printf("rx queue=%d len=%zu short\n", q, len);
		return;
	}
	p += hdr;
	len -= hdr;
	if (len >= 20 && p[0] >> 4 == 4) {
		s.family = d.family = AF_INET;
		memcpy(s.raw, p + 12, 4);
		memcpy(d.raw, p + 16, 4);
		printf("rx queue=%d len=%zu ipv4 src=%s dst=%s proto=%u\n", q,
		       len, inet_addr_str(&s, ss, sizeof(ss)),
		       inet_addr_str(&d, ds, sizeof(ds)), p[9]);
	} else if (len >= 40 && p[0] >> 4 == 6) {
		s.family = d.family = AF_INET6;
		memcpy(s.raw, p + 8, 16);
		memcpy(d.raw, p + 24, 16);
		printf("rx queue=%d len=%zu ipv6 src=%s dst=%s next=%u\n", q,
		       len, inet_addr_str(&s, ss, sizeof(ss)),
		       inet_addr_str(&d, ds, sizeof(ds)), p[6]);
	} else {
		printf("rx queue=%d len=%zu other\n", q, len);
	}
}

/* Read every packet waiting on FD; 0, or -1 when the device is gone. */
static int drain_tun(int q, int fd, size_t hdr)
{
	static unsigned char pkt[PKT_MAX];
	ssize_t n;

	for (;;) {
		n = read(fd, pkt, sizeof(pkt));
		if (n >= 0) {
			print_packet(q, pkt, (size_t)n, hdr);
			continue;
		}
		if (errno == EAGAIN || errno == EINTR)
			return 0;
		printf("gone queue=%d read: %s\n", q, strerror(errno));
		return -1;
	}
}

static int hold_tun(const int *fds, int nq, size_t hdr, double hold)
{
	struct pollfd pfd[MAX_QUEUES];
	double deadline = now_mono() + hold;
	sigset_t mask;
	int i, r;

	catch_stop_signals(&mask);
	for (i = 0; i < nq; i++) {
		pfd[i].fd = fds[i];
		pfd[i].events = POLLIN;
	}
	while (!stop_sig) {
		r = wait_fds(pfd, (nfds_t)nq, deadline, &mask);
		if (r == 0)
			break;
		if (r == -1)
			continue;
		if (r < 0) {
			fprintf(stderr, "nltest: poll: %s\n", strerror(errno));
			return 1;
		}
		for (i = 0; i < nq; i++) {
			if (!pfd[i].revents)
				continue;
			if (pfd[i].revents & (POLLERR | POLLHUP | POLLNVAL)) {
				/* a deleted device: poll says POLLERR */
				if (drain_tun(i, fds[i], hdr) == 0)
					printf("gone queue=%d poll revents=0x%x\n",
					       i, pfd[i].revents);
				return 0;
			}
			if (drain_tun(i, fds[i], hdr) < 0)
				return 0;
		}
	}
	if (stop_sig)
		printf("signal %d\n", (int)stop_sig);
	return 0;
}

static int cmd_tun(int argc, char **argv)
{
	struct inet_prefix addrs[MAX_ADDRS];
	struct nl_link_info li;
	struct nl_sock_ctx *nl;
	char err[NL_ERRLEN], s[INET_PREFIX_STRLEN], name[IF_NAMESIZE] = "";
	const char *want = NULL;
	unsigned int flags = 0, mtu = 0;
	int fds[MAX_QUEUES], nq = 0, queues = 1, naddr = 0, up = 0, dad = 0;
	int ifindex = -1, ix, i, rc = 1, hdrsz = 0;
	double hold = 0;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--mtu"))
			mtu = (unsigned int)parse_ulong(a, optval(argc, argv, &i),
							0xffffffffUL);
		else if (!strcmp(a, "--addr")) {
			if (naddr == MAX_ADDRS)
				usage_err("more than %d --addr", MAX_ADDRS);
			check_prefix(optval(argc, argv, &i), &addrs[naddr++]);
		} else if (!strcmp(a, "--dad"))
			dad = 1;
		else if (!strcmp(a, "--up"))
			up = 1;
		else if (!strcmp(a, "--vnet-hdr"))
			flags |= NL_TUN_VNET_HDR;
		else if (!strcmp(a, "--multi-queue"))
			flags |= NL_TUN_MULTI_QUEUE;
		else if (!strcmp(a, "--queues"))
			queues = (int)parse_ulong(a, optval(argc, argv, &i),
						  MAX_QUEUES);
		else if (!strcmp(a, "--hold"))
			hold = parse_secs(a, optval(argc, argv, &i));
		else if (a[0] == '-' && a[1])
			usage_err("tun: unknown option '%s'", a);
		else if (want)
			usage_err("tun: unexpected argument '%s'", a);
		else
			want = check_name(a);
	}
	if (!want)
		usage_err("tun: missing interface name");
	if (queues < 1 || (queues > 1 && !(flags & NL_TUN_MULTI_QUEUE)))
		usage_err("tun: --queues %d needs --multi-queue (and N >= 1)",
			  queues);

	for (nq = 0; nq < queues; nq++) {
		fds[nq] = nl_tun_open(nq ? name : want, flags, &ix, err,
				      sizeof(err));
		if (fds[nq] < 0) {
			run_err(err);
			goto out;
		}
		if (!nq) {
			ifindex = ix;
			if (!if_indextoname((unsigned int)ix, name)) {
				fprintf(stderr, "nltest: if_indextoname %d: %s\n",
					ix, strerror(errno));
				nq++;
				goto out;
			}
		}
	}
	if (flags & NL_TUN_VNET_HDR)
		ioctl(fds[0], TUNGETVNETHDRSZ, &hdrsz);
	printf("tun name=%s ifindex=%d queues=%d nonblock=%d vnet_hdr=%d "
	       "multi_queue=%d\n", name, ifindex, nq,
	       !!(fcntl(fds[0], F_GETFL) & O_NONBLOCK), hdrsz,
	       !!(flags & NL_TUN_MULTI_QUEUE));

	if (!(nl = nl_get()))
		goto out;
	if (mtu) {
		if (nl_link_set_mtu(nl, ifindex, mtu, err, sizeof(err)) < 0) {
			run_err(err);
			goto out;
		}
		printf("mtu %u\n", mtu);
	}
	for (i = 0; i < naddr; i++) {
		unsigned int af = dad ? 0 : NL_ADDR_NODAD;
		int v6 = addrs[i].addr.family == AF_INET6;

		if (nl_ifaddr_add(nl, ifindex, &addrs[i], af, err,
				  sizeof(err)) < 0) {
			run_err(err);
			goto out;
		}
		printf("addr %s%s\n", inet_prefix_str(&addrs[i], s, sizeof(s)),
		       v6 ? (dad ? " dad" : " nodad") : "");
	}
	if (up) {
		if (nl_link_set_up(nl, ifindex, 1, err, sizeof(err)) < 0) {
			run_err(err);
			goto out;
		}
		printf("up\n");
	}
	if (nl_link_get(nl, name, &li, err, sizeof(err)) < 0) {
		run_err(err);
		goto out;
	}
	print_link(&li);
	printf("ready\n");
	rc = 0;
	if (hold > 0)
		rc = hold_tun(fds, nq, (size_t)hdrsz, hold);
out:
	for (i = 0; i < nq; i++)
		close(fds[i]);
	if (nq)
		printf("closed\n");
	return rc;
}

/* NAME to its ifindex through nl_link_get; prints nothing on success */
static int resolve(struct nl_sock_ctx *nl, const char *name,
		   struct nl_link_info *li)
{
	char err[NL_ERRLEN];

	if (nl_link_get(nl, name, li, err, sizeof(err)) < 0)
		return run_err(err);
	return 0;
}

/* after a change: print the link as it is now */
static int show_index(struct nl_sock_ctx *nl, int ifindex)
{
	struct nl_link_info li;
	char err[NL_ERRLEN];

	if (nl_link_get_index(nl, ifindex, &li, err, sizeof(err)) < 0)
		return run_err(err);
	print_link(&li);
	return 0;
}

static int cmd_link(const char *cmd, int argc, char **argv)
{
	struct nl_sock_ctx *nl;
	struct nl_link_info li;
	struct inet_prefix p;
	char err[NL_ERRLEN], s[INET_PREFIX_STRLEN];
	unsigned int mtu = 0;
	int add = !strcmp(cmd, "addr-add"), dad = 0, r;

	if (!strcmp(cmd, "link") && argc == 3 && !strcmp(argv[1], "--index")) {
		r = (int)parse_ulong(argv[1], argv[2], 0x7fffffff);
		if (!(nl = nl_get()))
			return 1;
		if (nl_link_get_index(nl, r, &li, err, sizeof(err)) < 0)
			return run_err(err);
		print_link(&li);
		return 0;
	}
	if (argc < 2)
		usage_err("%s: missing interface name", cmd);
	check_name(argv[1]);
	if (!strcmp(cmd, "mtu")) {
		if (argc != 3)
			usage_err("mtu: usage: mtu NAME MTU");
		mtu = (unsigned int)parse_ulong("mtu", argv[2], 0xffffffffUL);
	} else if (add || !strcmp(cmd, "addr-del")) {
		if (argc < 3 || argc > 4)
			usage_err("%s: usage: %s NAME CIDR%s", cmd, cmd,
				  add ? " [--dad]" : "");
		check_prefix(argv[2], &p);
		if (argc == 4) {
			if (strcmp(argv[3], "--dad") || !add)
				usage_err("%s: unexpected argument '%s'", cmd,
					  argv[3]);
			dad = 1;
		}
	} else if (argc != 2) {
		usage_err("%s: unexpected argument '%s'", cmd, argv[2]);
	}

	if (!(nl = nl_get()) || resolve(nl, argv[1], &li))
		return 1;
	if (!strcmp(cmd, "link")) {
		print_link(&li);
		return 0;
	}
	if (!strcmp(cmd, "link-del")) {
		if (nl_link_del(nl, li.ifindex, err, sizeof(err)) < 0)
			return run_err(err);
		printf("deleted name=%s ifindex=%d\n", li.name, li.ifindex);
		return 0;
	}
	if (!strcmp(cmd, "mtu"))
		r = nl_link_set_mtu(nl, li.ifindex, mtu, err, sizeof(err));
	else if (!strcmp(cmd, "up") || !strcmp(cmd, "down"))
		r = nl_link_set_up(nl, li.ifindex, cmd[0] == 'u', err,
				   sizeof(err));
	else if (add)
		r = nl_ifaddr_add(nl, li.ifindex, &p, dad ? 0 : NL_ADDR_NODAD,
				  err, sizeof(err));
	else
		r = nl_ifaddr_del(nl, li.ifindex, &p, err, sizeof(err));
	if (r < 0)
		return run_err(err);
	if (!strncmp(cmd, "addr-", 5))
		printf("%s name=%s %s\n", cmd, li.name,
		       inet_prefix_str(&p, s, sizeof(s)));
	return show_index(nl, li.ifindex);
}

static int cmd_route_get(int argc, char **argv)
{
	struct nl_sock_ctx *nl;
	struct nl_link_info li;
	struct inet_addr dst;
	struct nl_route rt;
	char err[NL_ERRLEN], a[INET_ADDR_STRLEN], g[INET_ADDR_STRLEN];
	char ps[INET_ADDR_STRLEN], ts[32], dev[IF_NAMESIZE];
	const char *oifname = NULL, *d = NULL;
	int i, oif = 0;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--oif"))
			oifname = check_name(optval(argc, argv, &i));
		else if (argv[i][0] == '-' && argv[i][1] && !strchr(argv[i], ':'))
			usage_err("route-get: unknown option '%s'", argv[i]);
		else if (d)
			usage_err("route-get: unexpected argument '%s'", argv[i]);
		else
			d = argv[i];
	}
	if (!d)
		usage_err("route-get: missing destination address");
	if (inet_addr_parse(d, &dst, err, sizeof(err)) < 0)
		usage_err("route-get: %s", err);
	if (!(nl = nl_get()))
		return 1;
	if (oifname) {
		if (resolve(nl, oifname, &li))
			return 1;
		oif = li.ifindex;
	}
	if (nl_route_get(nl, &dst, oif, &rt, err, sizeof(err)) < 0)
		return run_err(err);
	if (!rt.oif || !if_indextoname((unsigned int)rt.oif, dev))
		snprintf(dev, sizeof(dev), "none");
	printf("route dst=%s type=%s gateway=%s oif=%d dev=%s prefsrc=%s "
	       "table=%u\n", inet_addr_str(&dst, a, sizeof(a)),
	       nl_route_type_str(rt.type, ts, sizeof(ts)),
	       rt.has_gateway ? inet_addr_str(&rt.gateway, g, sizeof(g)) :
	       "none", rt.oif, dev,
	       rt.has_prefsrc ? inet_addr_str(&rt.prefsrc, ps, sizeof(ps)) :
	       "none", rt.table);
	return 0;
}

static unsigned int parse_kinds(const char *opt, const char *s)
{
	unsigned int k = 0;
	const char *p = s, *e;
	size_t n;

	while (*p) {
		e = strchr(p, ',');
		n = e ? (size_t)(e - p) : strlen(p);
		if (n == 5 && !strncmp(p, "route", 5))
			k |= NL_CHG_ROUTE;
		else if (n == 4 && !strncmp(p, "addr", 4))
			k |= NL_CHG_ADDR;
		else if (n == 4 && !strncmp(p, "link", 4))
			k |= NL_CHG_LINK;
		else
			usage_err("%s '%s': kinds are route, addr, link", opt, s);
		p += n;
		if (*p == ',')
			p++;
	}
	if (!k)
		usage_err("%s '%s': kinds are route, addr, link", opt, s);
	return k;
}

static int cmd_monitor(int argc, char **argv)
{
	struct nl_sock_ctx *nl;
	unsigned int kinds = NL_CHG_ALL, until = 0;
	double timeout = 10, deadline;
	char err[NL_ERRLEN];
	struct pollfd pfd;
	sigset_t mask;
	int i, r, fd;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--watch"))
			kinds = parse_kinds(argv[i], optval(argc, argv, &i));
		else if (!strcmp(argv[i], "--until"))
			until = parse_kinds(argv[i], optval(argc, argv, &i));
		else if (!strcmp(argv[i], "--timeout"))
			timeout = parse_secs(argv[i], optval(argc, argv, &i));
		else
			usage_err("monitor: unexpected argument '%s'", argv[i]);
	}
	kinds |= until;
	if (!(nl = nl_get()))
		return 1;
	fd = nl_monitor_open(nl, kinds, err, sizeof(err));
	if (fd < 0)
		return run_err(err);
	if (nl_monitor_fd(nl) != fd)
		return run_err("monitor: nl_monitor_fd disagrees");
	catch_stop_signals(&mask);
	printf("ready\n");
	pfd.fd = fd;
	pfd.events = POLLIN;
	deadline = now_mono() + timeout;
	while (!stop_sig) {
		r = wait_fds(&pfd, 1, deadline, &mask);
		if (r == 0)
			break;
		if (r == -1)
			continue;
		if (r < 0) {
			fprintf(stderr, "nltest: poll: %s\n", strerror(errno));
			return 1;
		}
		r = nl_monitor_read(nl, err, sizeof(err));
		if (r < 0)
			return run_err(err);
		if (r & NL_CHG_OVERRUN)
			printf("overrun\n");
		if (r & NL_CHG_ROUTE)
			printf("changed route\n");
		if (r & NL_CHG_ADDR)
			printf("changed addr\n");
		if (r & NL_CHG_LINK)
			printf("changed link\n");
		if (until && (r & until))
			return 0;
	}
	if (until && !stop_sig) {
		fprintf(stderr, "nltest: monitor: no awaited change within %g s\n",
			timeout);
		return 1;
	}
	return 0;
}

static int cmd_gids(const char *cmd, int argc, char **argv)
{
	struct inet_prefix p[GW_RDS_GIDS_MAX];
	struct nl_sock_ctx *nl;
	struct nl_link_info li;
	char err[NL_ERRLEN];
	int i, n;

	if (argc < 3 || argc - 2 > GW_RDS_GIDS_MAX)
		usage_err("%s: usage: %s NAME PREFIX... (up to %d)", cmd, cmd,
			  GW_RDS_GIDS_MAX);
	check_name(argv[1]);
	for (i = 2; i < argc; i++) {
		check_prefix(argv[i], &p[i - 2]);
		if (gw_gid_count(&p[i - 2]) > GW_RDS_GID_ADDRS_MAX)
			usage_err("%s: '%s': more than %d addresses", cmd,
				  argv[i], GW_RDS_GID_ADDRS_MAX);
	}
	if (!(nl = nl_get()) || resolve(nl, argv[1], &li))
		return 1;
	if (!strcmp(cmd, "gids-add")) {
		n = gw_gids_add(nl, li.ifindex, p, (unsigned int)argc - 2, err,
				sizeof(err));
		if (n < 0)
			return run_err(err);
		printf("gids-add n=%d\n", n);
		return 0;
	}
	if (gw_gids_del(nl, li.ifindex, p, (unsigned int)argc - 2, err,
			sizeof(err)) < 0)
		return run_err(err);
	printf("gids-del\n");
	return 0;
}

int main(int argc, char **argv)
{
	const char *cmd;
	int rc;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2)
		usage_err("missing command (tun, link, link-del, mtu, up, down, "
			  "addr-add, addr-del, route-get, gids-add, gids-del, "
			  "monitor; --help)");
	cmd = argv[1];
	if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
		usage();
		return 0;
	}
	if (!strcmp(cmd, "tun"))
		rc = cmd_tun(argc - 1, argv + 1);
	else if (!strcmp(cmd, "route-get"))
		rc = cmd_route_get(argc - 1, argv + 1);
	else if (!strcmp(cmd, "monitor"))
		rc = cmd_monitor(argc - 1, argv + 1);
	else if (!strcmp(cmd, "gids-add") || !strcmp(cmd, "gids-del"))
		rc = cmd_gids(cmd, argc - 1, argv + 1);
	else if (!strcmp(cmd, "link") || !strcmp(cmd, "link-del") ||
		 !strcmp(cmd, "mtu") || !strcmp(cmd, "up") ||
		 !strcmp(cmd, "down") || !strcmp(cmd, "addr-add") ||
		 !strcmp(cmd, "addr-del"))
		rc = cmd_link(cmd, argc - 1, argv + 1);
	else
		usage_err("unknown command '%s'", cmd);
	nl_ctx_close(g_nl);
	return rc;
}

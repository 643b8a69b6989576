// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ibgwd's control socket.  A SOCK_SEQPACKET unix socket (mode 0660: root
 * and the socket's group); each request is one message of words separated
 * by single spaces, the first "text" or "json" (the output wanted), e.g.
 * "json show stats"; each answer one message, "OK\n" and the output, or
 * "ERR " and a one-line reason that ibgwctl prints as it is.  An answer is
 * at most GW_CTL_MAX bytes (a longer listing is cut, and says so).
 * The JSON field names are documented in ibgwctl(8) and kept stable.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <event2/event.h>

#include "gateway/gw_rds.h"
#include "gateway/gw_sdp.h"
#include "gateway/ibgwd.h"

#define GW_CTL_MAX	(256 * 1024)
#define GW_CTL_REQ	4096

struct gw_ctl_conn {
	struct gw_ctl *c;
	int fd;
	struct event *ev;
	struct gw_ctl_conn *next;
};

struct gw_ctl {
	struct ibgwd *d;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	int fd;
	struct event *ev;
	struct gw_ctl_conn *conns;
};

/* ---- output ----------------------------------------------------------------- */

struct out {
	char *buf;
	size_t len, cap;
	int json, cut;
};

/* The transparent partition's own: its tap or trunk side. */
const struct counter_desc gw_part_counters[] = {
	COUNTER("drop.tx_error", struct part, eth_tx_errors,
		"Frames the tap or the trunk refused."),
	COUNTER("drop.tap_offload_bad", struct part, tap_offload_bad,
		"Frames from the tap whose virtio-net header was unusable."),
	COUNTERS_END
};

const struct counter_desc gw_trunk_counters[] = {
	COUNTER("drop.unmapped_vlan", struct ibgwd, trunk_unmapped,
		"Frames on the trunk no partition maps the VLAN of."),
	COUNTERS_END
};

static void out_vprintf(void *arg, const char *fmt, va_list ap)
{
	struct out *o = arg;
	int n;

	if (o->cut)
		return;
	n = vsnprintf(o->buf + o->len, o->cap - o->len, fmt, ap);
	if (n < 0 || (size_t)n >= o->cap - o->len) {
		o->cut = 1;
		return;
	}
	o->len += (size_t)n;
}

static void put(struct out *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void put(struct out *o, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	out_vprintf(o, fmt, ap);
	va_end(ap);
}

/* a JSON string (the names we print need no escapes but quotes and \) */
static void jstr(struct out *o, const char *s)
{
	put(o, "\"");
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			put(o, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			put(o, "\\u%04x", *s);
		else
			put(o, "%c", *s);
	}
	put(o, "\"");
}

static const char *part_iface(const struct part *p, char *buf, size_t cap)
{
	if (p->tun)
		snprintf(buf, cap, "%s", ipoib_tun_ifname(p->tun));
	else if (part_roce(p))	/* the kernel's netdev of the port */
		snprintf(buf, cap, "-");
	else if (p->pc->tap[0])
		snprintf(buf, cap, "%s", p->pc->tap);
	else
		snprintf(buf, cap, "%s.%u", p->d->conf.trunk, p->pc->vlan);
	return buf;
}

/* ---- commands ---------------------------------------------------------------- */

static void show_summary(struct ibgwd *d, struct out *o)
{
	char gid[64];
	unsigned int i, up = 0, n = 0;

	for (i = 0; i < d->nparts; i++) {
		if (!d->parts[i].used)
			continue;
		n++;
		up += !!ipoib_link_carrier(part_link(&d->parts[i]));
	}
	fab_gid_to_str(&d->pa.gid, gid, sizeof(gid));
	if (o->json) {
		put(o, "{\"version\":");
		jstr(o, IBGW_VERSION);
		put(o, ",\"uptime_s\":%lld,\"fabric\":",
		    (long long)(time(NULL) - d->started));
		jstr(o, d->conf.fabric);
		put(o, ",\"node\":");
		jstr(o, d->conf.node);
		put(o, ",\"lid\":%u,\"gid\":", d->pa.lid);
		jstr(o, gid);
		put(o, ",\"partitions\":%u,\"partitions_up\":%u,"
		    "\"ready\":%s}\n", n, up,
		    d->ready ? "true" : "false");
		return;
	}
	put(o, "ibgwd %s, up %lld s, %s\n", IBGW_VERSION,
	    (long long)(time(NULL) - d->started),
	    d->ready ? "ready" : "starting");
	put(o, "fabric %s, node %s, LID 0x%04x, GID %s\n", d->conf.fabric,
	    d->conf.node[0] ? d->conf.node : "-", d->pa.lid, gid);
	put(o, "partitions %u, %u with carrier\n", n, up);
}

/* The RDS column of show partitions, when a partition has rds = on: the
 * table stays as it was for gateways without RDS. */
static const char *rds_column(const struct ibgwd *d, const struct part *p)
{
	unsigned int i;

	for (i = 0; i < d->nparts; i++)
		if (d->parts[i].used && d->parts[i].pc->rds)
			break;
	if (i == d->nparts)
		return "";
	return !p ? "RDS    " : !p->pc->rds ? "off    " :
	       p->rds ? "on     " : "failed ";
}

static void show_partitions(struct ibgwd *d, struct out *o)
{
	char ifn[64], hw[IPOIB_ADDR_STRLEN];
	struct ipoib_addr a;
	unsigned int i;
	int first = 1;

	if (o->json)
		put(o, "{\"partitions\":[");
	else
		put(o, "%-16s %-6s %-11s %-16s %-7s %-5s %-7s %-59s %-10s "
		    "%s%s\n", "NAME", "PKEY", "MODE", "INTERFACE",
		    "CARRIER", "MTU", "ETH_MTU", "IPOIB_ADDRESS", "IPOIB_MODE",
		    rds_column(d, NULL), "SDP");
	for (i = 0; i < d->nparts; i++) {
		struct part *p = &d->parts[i];
		struct ipoib_link *l;

		if (!p->used)
			continue;
		l = part_link(p);
		part_iface(p, ifn, sizeof(ifn));
		ipoib_link_hwaddr(l, &a);
		ipoib_addr_ntop(&a, hw, sizeof(hw));
		if (o->json) {
			put(o, "%s{\"name\":", first ? "" : ",");
			first = 0;
			jstr(o, p->pc->name);
			put(o, ",\"pkey\":\"0x%04x\",\"mode\":\"%s\","
			    "\"interface\":", p->pc->pkey | 0x8000,
			    gw_mode_name(p->pc->mode));
			jstr(o, ifn);
			put(o, ",\"vlan\":%u,\"bridge\":", p->pc->vlan);
			jstr(o, p->pc->bridge);
			put(o, ",\"carrier\":%s,\"mtu\":%u,\"eth_mtu\":%u,"
			    "\"ipoib_address\":",
			    ipoib_link_carrier(l) ? "true" : "false",
			    ipoib_link_mtu(l), p->pc->eth_mtu);
			jstr(o, hw);
			put(o, ",\"ipoib_mode\":\"%s\",\"sdp\":%s,"
			    "\"sdp_running\":%s,\"sdp_max_conns\":%u,"
			    "\"sdp_exports\":%u,\"rds\":%s,\"rds_running\":%s,"
			    "\"rds_max_peers\":%u,\"rds_exports\":%u}",
			    ipoib_link_mode_name(l),
			    p->pc->sdp ? "true" : "false",
			    p->sdp ? "true" : "false", p->pc->sdp_max_conns,
			    p->pc->nsdp_exports,
			    p->pc->rds ? "true" : "false",
			    p->rds ? "true" : "false", p->pc->rds_max_peers,
			    p->pc->nrds_exports);
		} else {
			put(o, "%-16s 0x%04x %-11s %-16s %-7s %-5u %-7u %-59s "
			    "%-10s %s%s\n", p->pc->name,
			    p->pc->pkey | 0x8000,
			    gw_mode_name(p->pc->mode), ifn,
			    ipoib_link_carrier(l) ? "up" : "down",
			    ipoib_link_mtu(l), p->pc->eth_mtu, hw,
			    ipoib_link_mode_name(l), rds_column(d, p),
			    !p->pc->sdp ? "off" :
			    p->sdp ? "on" : "failed");
		}
	}
	if (o->json)
		put(o, "]}\n");
}

/* Split "a b c\n" report lines into words; calls fn per line. */
static void each_line(char *text, void (*fn)(void *arg, char **w, int n),
		      void *arg)
{
	char *line, *save = NULL, *w[8], *s2;
	int n;

	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		n = 0;
		for (w[n] = strtok_r(line, " ", &s2); w[n] && n < 7;
		     w[++n] = strtok_r(NULL, " ", &s2))
			;
		fn(arg, w, n);
	}
}

struct lctx {
	struct out *o;
	const char *part;
	int *first;
};

static void neigh_line(void *arg, char **w, int n)
{
	struct lctx *c = arg;
	struct out *o = c->o;

	/* ib: IP LLADDR STATE queued=N;  eth: "eth" IP MAC STATE;
	 * "ib" MAC LLADDR (the MACs handed to IB hosts) */
	if (n == 4 && !strncmp(w[3], "queued=", 7)) {
		if (o->json) {
			put(o, "%s{\"partition\":", *c->first ? "" : ",");
			jstr(o, c->part);
			put(o, ",\"side\":\"ib\",\"ip\":");
			jstr(o, w[0]);
			put(o, ",\"lladdr\":");
			jstr(o, w[1]);
			put(o, ",\"state\":");
			jstr(o, w[2]);
			put(o, ",\"queued\":%s}", w[3] + 7);
		} else {
			put(o, "%-16s ib  %-39s %-59s %s\n", c->part, w[0],
			    w[1], w[2]);
		}
		*c->first = 0;
	} else if (n == 4 && !strcmp(w[0], "eth")) {
		if (o->json) {
			put(o, "%s{\"partition\":", *c->first ? "" : ",");
			jstr(o, c->part);
			put(o, ",\"side\":\"eth\",\"ip\":");
			jstr(o, w[1]);
			put(o, ",\"lladdr\":");
			jstr(o, w[2]);
			put(o, ",\"state\":");
			jstr(o, w[3]);
			put(o, "}");
		} else {
			put(o, "%-16s eth %-39s %-59s %s\n", c->part, w[1],
			    w[2], w[3]);
		}
		*c->first = 0;
	} else if (n == 3 && !strcmp(w[0], "ib")) {
		if (o->json) {
			put(o, "%s{\"partition\":", *c->first ? "" : ",");
			jstr(o, c->part);
			put(o, ",\"side\":\"mac\",\"mac\":");
			jstr(o, w[1]);
			put(o, ",\"lladdr\":");
			jstr(o, w[2]);
			put(o, "}");
		} else {
			put(o, "%-16s mac %-39s %s\n", c->part, w[1], w[2]);
		}
		*c->first = 0;
	}
}

static void show_neighbors(struct ibgwd *d, struct out *o)
{
	static char text[65536];
	unsigned int i;
	int first = 1;

	if (o->json)
		put(o, "{\"neighbors\":[");
	else
		put(o, "%-16s %-3s %-39s %-59s %s\n", "PARTITION", "", "IP",
		    "LLADDR", "STATE");
	for (i = 0; i < d->nparts; i++) {
		struct part *p = &d->parts[i];
		struct lctx c = { o, p->pc->name, &first };

		if (!p->used)
			continue;
		ipoib_link_report(part_link(p), "neighbors", text,
				  sizeof(text));
		each_line(text, neigh_line, &c);
		if (p->br) {
			gw_bridge_report(p->br, text, sizeof(text));
			each_line(text, neigh_line, &c);
		}
	}
	if (o->json)
		put(o, "]}\n");
}

static void group_line(void *arg, char **w, int n)
{
	struct lctx *c = arg;
	struct out *o = c->o;

	if (n != 4 || strncmp(w[2], "mlid=", 5))
		return;
	if (o->json) {
		put(o, "%s{\"partition\":", *c->first ? "" : ",");
		jstr(o, c->part);
		put(o, ",\"mgid\":");
		jstr(o, w[0]);
		put(o, ",\"join\":");
		jstr(o, w[1]);
		put(o, ",\"mlid\":");
		jstr(o, w[2] + 5);
		put(o, ",\"state\":");
		jstr(o, w[3]);
		put(o, "}");
	} else {
		put(o, "%-16s %-40s %-8s %-6s %s\n", c->part, w[0], w[1],
		    w[2] + 5, w[3]);
	}
	*c->first = 0;
}

static void show_groups(struct ibgwd *d, struct out *o)
{
	static char text[65536];
	unsigned int i;
	int first = 1;

	if (o->json)
		put(o, "{\"groups\":[");
	else
		put(o, "%-16s %-40s %-8s %-6s %s\n", "PARTITION", "MGID",
		    "JOIN", "MLID", "STATE");
	for (i = 0; i < d->nparts; i++) {
		struct lctx c = { o, d->parts[i].pc->name, &first };

		if (!d->parts[i].used)
			continue;
		ipoib_link_report(part_link(&d->parts[i]), "groups", text,
				  sizeof(text));
		each_line(text, group_line, &c);
	}
	if (o->json)
		put(o, "]}\n");
}

static void stat_u(struct out *o, const char *part, const char *side,
		   const char *name, unsigned long long v, int *first)
{
	if (o->json) {
		put(o, "%s\"%s\":%llu", *first ? "" : ",", name, v);
		*first = 0;
	} else {
		put(o, "%-16s %-3s %-24s %llu\n", part, side, name, v);
	}
}

/* A counter table as JSON members, or as lines of the text table. */
static void stat_table(struct out *o, const char *part, const char *side,
		       const struct counter_desc *t, const void *stats,
		       int *first)
{
	struct counter_out co = { out_vprintf, o };
	char prefix[256];

	if (o->json) {
		counters_json(&co, t, stats, first);
		return;
	}
	snprintf(prefix, sizeof(prefix), "%-16s %-3s ", part, side);
	counters_text(&co, t, stats, prefix, 24);
}

static void show_stats_eth(struct part *p, struct out *o)
{
	const char *nm = p->pc->name;
	int f = 1;

	if (p->br) {
		stat_table(o, nm, "eth", gw_bridge_counters,
			   gw_bridge_stats(p->br), &f);
		stat_table(o, nm, "eth", gw_part_counters, p, &f);
		stat_u(o, nm, "eth", "neighbors",
		       gw_bridge_neigh_count(p->br), &f);
		stat_u(o, nm, "eth", "ib_macs", gw_bridge_mac_count(p->br),
		       &f);
	} else if (p->tun) {
		struct ipoib_tun_stats t;

		ipoib_tun_stats(p->tun, &t);
		stat_table(o, nm, "eth", ipoib_tun_counters, &t, &f);
	}
}

/* sdp = on: the endpoint's counters and the gateway's own, side "sdp"
 * (a JSON member "sdp" of the partition). */
static void show_stats_sdp(struct part *p, struct out *o)
{
	const struct sdp_ep_stats *es;
	int f = 1;

	if (!p->sdp)
		return;
	if (o->json)
		put(o, ",\"sdp\":{");
	es = gw_sdp_ep_stats(p->sdp);
	if (es)
		stat_table(o, p->pc->name, "sdp", sdp_ep_counters, es, &f);
	stat_table(o, p->pc->name, "sdp", gw_sdp_counters,
		   gw_sdp_stats(p->sdp), &f);
	if (o->json)
		put(o, "}");
}

/* rds = on: the same, side "rds" (a JSON member "rds"). */
static void show_stats_rds(struct part *p, struct out *o)
{
	const struct rds_ep_stats *es;
	int f = 1;

	if (!p->rds)
		return;
	if (o->json)
		put(o, ",\"rds\":{");
	es = gw_rds_ep_stats(p->rds);
	if (es)
		stat_table(o, p->pc->name, "rds", rds_ep_counters, es, &f);
	stat_table(o, p->pc->name, "rds", gw_rds_counters,
		   gw_rds_stats(p->rds), &f);
	if (o->json)
		put(o, "}");
}

static void show_stats(struct ibgwd *d, struct out *o)
{
	unsigned int i;
	int firstp = 1;

	if (o->json)
		put(o, "{\"partitions\":[");
	for (i = 0; i < d->nparts; i++) {
		struct part *p = &d->parts[i];
		int f = 1;

		if (!p->used)
			continue;
		if (o->json) {
			put(o, "%s{\"name\":", firstp ? "" : ",");
			firstp = 0;
			jstr(o, p->pc->name);
			put(o, ",\"ib\":{");
		}
		stat_table(o, p->pc->name, "ib", ipoib_link_counters,
			   ipoib_link_stats(part_link(p)), &f);
		if (o->json)
			put(o, "},\"eth\":{");
		show_stats_eth(p, o);
		if (o->json)
			put(o, "}");
		show_stats_sdp(p, o);
		show_stats_rds(p, o);
		if (o->json)
			put(o, "}");
	}
	if (o->json) {
		int f = 1;

		put(o, "],\"trunk\":{");
		stat_table(o, "trunk", "eth", gw_trunk_counters, d, &f);
		put(o, "}}\n");
	} else if (d->trunk_fd >= 0) {
		stat_table(o, "trunk", "eth", gw_trunk_counters, d, NULL);
	}
}

/* Run one request; the answer in o (without the OK line).  Returns 0, or
 * -1 with the reason in err. */
static int run(struct ibgwd *d, char *req, struct out *o, char *err,
	       size_t errlen)
{
	char *w[40], *save = NULL;
	int n = 0;

	for (w[n] = strtok_r(req, " ", &save); w[n] && n < 39;
	     w[++n] = strtok_r(NULL, " ", &save))
		;
	if (n < 2 || (strcmp(w[0], "text") && strcmp(w[0], "json"))) {
		snprintf(err, errlen, "malformed request");
		return -1;
	}
	o->json = !strcmp(w[0], "json");
	if (!strcmp(w[1], "show") && n == 3) {
		if (!strcmp(w[2], "summary"))
			show_summary(d, o);
		else if (!strcmp(w[2], "partitions"))
			show_partitions(d, o);
		else if (!strcmp(w[2], "neighbors"))
			show_neighbors(d, o);
		else if (!strcmp(w[2], "groups"))
			show_groups(d, o);
		else if (!strcmp(w[2], "stats"))
			show_stats(d, o);
		else {
			snprintf(err, errlen, "show what? '%s': summary, "
				 "partitions, neighbors, groups or stats",
				 w[2]);
			return -1;
		}
		return 0;
	}
	if (!strcmp(w[1], "show")) {
		snprintf(err, errlen, "show summary|partitions|neighbors|"
			 "groups|stats");
		return -1;
	}
	if (!strcmp(w[1], "partition") && n >= 4 && !strcmp(w[2], "add")) {
		if (ibgwd_partition_add(d, w[3], w + 4, n - 4, err,
					errlen) < 0)
			return -1;
		put(o, o->json ? "{\"added\":\"%s\"}\n" :
		    "partition %s added\n", w[3]);
		return 0;
	}
	if (!strcmp(w[1], "partition") && n == 4 && !strcmp(w[2], "del")) {
		if (ibgwd_partition_del(d, w[3], err, errlen) < 0)
			return -1;
		put(o, o->json ? "{\"deleted\":\"%s\"}\n" :
		    "partition %s deleted\n", w[3]);
		return 0;
	}
	if (!strcmp(w[1], "partition")) {
		snprintf(err, errlen, "partition add NAME KEY=VALUE... | "
			 "partition del NAME");
		return -1;
	}
	if (!strcmp(w[1], "reload") && n == 2) {
		if (ibgwd_reload(d, err, errlen) < 0)
			return -1;
		put(o, o->json ? "{\"reloaded\":true}\n" : "reloaded\n");
		return 0;
	}
	snprintf(err, errlen, "unknown command '%s'", w[1]);
	return -1;
}

size_t gw_ctl_render(struct ibgwd *d, const char *what, char *buf, size_t cap)
{
	struct out o = { .buf = buf, .cap = cap };

	if (!cap)
		return 0;
	buf[0] = '\0';
	if (!strcmp(what, "stats"))
		show_stats(d, &o);
	else if (!strcmp(what, "neighbors"))
		show_neighbors(d, &o);
	else if (!strcmp(what, "groups"))
		show_groups(d, &o);
	return o.len;
}

/* ---- the socket --------------------------------------------------------------- */

static void conn_free(struct gw_ctl_conn *k)
{
	struct gw_ctl_conn **pp;

	for (pp = &k->c->conns; *pp; pp = &(*pp)->next) {
		if (*pp == k) {
			*pp = k->next;
			break;
		}
	}
	event_free(k->ev);
	close(k->fd);
	free(k);
}

static void conn_cb(evutil_socket_t fd, short what, void *arg)
{
	static char answer[GW_CTL_MAX];
	struct gw_ctl_conn *k = arg;
	char req[GW_CTL_REQ + 1], err[256];
	struct out o = { .buf = answer, .cap = sizeof(answer) };
	ssize_t n;

	(void)what;
	n = recv(fd, req, GW_CTL_REQ + 1, MSG_DONTWAIT | MSG_TRUNC);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		conn_free(k);
		return;
	}
	if (n > GW_CTL_REQ || memchr(req, '\0', (size_t)n)) {
		const char e[] = "ERR malformed request";

		send(fd, e, sizeof(e) - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
		conn_free(k);
		return;
	}
	req[n] = '\0';
	put(&o, "OK\n");
	if (run(k->c->d, req, &o, err, sizeof(err)) < 0) {
		o.len = 0;
		o.cut = 0;
		put(&o, "ERR %s", err);
	} else if (o.cut) {
		o.cut = 0;
		o.len = o.cap - 64;
		put(&o, "\n(cut at %u bytes)\n", GW_CTL_MAX);
	}
	if (send(fd, o.buf, o.len, MSG_NOSIGNAL) < 0)
		conn_free(k);
}

static void accept_cb(evutil_socket_t lfd, short what, void *arg)
{
	struct gw_ctl *c = arg;
	struct gw_ctl_conn *k;
	int fd, sz = GW_CTL_MAX + 4096;

	(void)what;
	fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd < 0)
		return;
	setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	k = calloc(1, sizeof(*k));
	if (!k) {
		close(fd);
		return;
	}
	k->c = c;
	k->fd = fd;
	k->ev = event_new(c->d->base, fd, EV_READ | EV_PERSIST, conn_cb, k);
	event_add(k->ev, NULL);
	k->next = c->conns;
	c->conns = k;
}

struct gw_ctl *gw_ctl_open(struct ibgwd *d, const char *path, char *err,
			   size_t errlen)
{
	struct sockaddr_un sa;
	struct gw_ctl *c;
	int probe;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(err, errlen, "control socket %s: path too long",
			 path);
		errno = ENAMETOOLONG;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		snprintf(err, errlen, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	c->d = d;
	snprintf(c->path, sizeof(c->path), "%s", path);
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path, path, strlen(path));
	/* a live ibgwd keeps its socket; a stale file is replaced */
	probe = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (probe >= 0 && connect(probe, (struct sockaddr *)&sa,
				  sizeof(sa)) == 0) {
		close(probe);
		free(c);
		snprintf(err, errlen, "control socket %s: another ibgwd "
			 "answers on it", path);
		errno = EADDRINUSE;
		return NULL;
	}
	if (probe >= 0)
		close(probe);
	unlink(path);
	c->fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC,
		       0);
	if (c->fd < 0 || bind(c->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    chmod(path, 0660) < 0 || listen(c->fd, 16) < 0) {
		int e = errno;

		snprintf(err, errlen, "control socket %s: %s", path,
			 strerror(e));
		if (c->fd >= 0)
			close(c->fd);
		free(c);
		errno = e;
		return NULL;
	}
	c->ev = event_new(d->base, c->fd, EV_READ | EV_PERSIST, accept_cb, c);
	event_add(c->ev, NULL);
	return c;
}

void gw_ctl_close(struct gw_ctl *c)
{
	if (!c)
		return;
	while (c->conns)
		conn_free(c->conns);
	event_free(c->ev);
	close(c->fd);
	unlink(c->path);
	free(c);
}

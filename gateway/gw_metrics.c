// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ibgwd's metrics in the Prometheus text format (version 0.0.4), served by
 * libevent's evhttp at /metrics on the address of [gateway] metrics.
 * Names and labels are documented in ibgwd(8) and kept stable.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/http.h>

#include "gateway/gw_rds.h"
#include "gateway/gw_sdp.h"
#include "gateway/ibgwd.h"

struct gw_metrics {
	struct ibgwd *d;
	struct evhttp *http;
};

static void head(struct evbuffer *b, const char *name, const char *type,
		 const char *help)
{
	evbuffer_add_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help,
			    name, type);
}

/* One sample of packets (bytes 0) or bytes per partition, side and
 * direction. */
static void traffic(struct ibgwd *d, struct evbuffer *b, const char *name,
		    int bytes)
{
	unsigned int i;

	for (i = 0; i < d->nparts; i++) {
		struct part *p = &d->parts[i];
		const struct ipoib_link_stats *s;
		unsigned long long v[4];
		const char *side[4] = { "ib", "ib", "eth", "eth" };
		const char *dir[4] = { "tx", "rx", "rx", "tx" };
		unsigned int k, n = 2;

		if (!p->used)
			continue;
		s = ipoib_link_stats(part_link(p));
		v[0] = bytes ? s->tx_bytes : s->tx_packets;
		v[1] = bytes ? s->rx_bytes : s->rx_packets;
		if (p->br) {
			const struct gw_bridge_stats *e = gw_bridge_stats(p->br);

			v[2] = bytes ? e->eth_rx_bytes : e->eth_rx_frames;
			v[3] = bytes ? e->eth_tx_bytes : e->eth_tx_frames;
			n = 4;
		}
		for (k = 0; k < n; k++)
			evbuffer_add_printf(b, "%s{partition=\"%s\",side=\"%s\","
					    "direction=\"%s\"} %llu\n", name,
					    p->pc->name, side[k], dir[k], v[k]);
	}
}

static void buf_vprintf(void *arg, const char *fmt, va_list ap)
{
	evbuffer_add_vprintf(arg, fmt, ap);
}

/* ibgw_drops_total: the drop arrays of the link's and the bridge's
 * tables, one family with a side label */
static void drops(struct part *p, const struct counter_out *o)
{
	const struct counter_desc *t;
	char lab[128];

	snprintf(lab, sizeof(lab), "partition=\"%s\",side=\"ib\"",
		 p->pc->name);
	for (t = ipoib_link_counters; t->name; t++)
		if (t->n)
			counters_prom_sample(o, "ibgw_drops_total", t,
					     ipoib_link_stats(part_link(p)),
					     lab);
	if (!p->br)
		return;
	snprintf(lab, sizeof(lab), "partition=\"%s\",side=\"eth\"",
		 p->pc->name);
	for (t = gw_bridge_counters; t->name; t++)
		if (t->n)
			counters_prom_sample(o, "ibgw_drops_total", t,
					     gw_bridge_stats(p->br), lab);
}

/* Every single counter of ibgwctl show stats, a family each:
 * ibgw_ib_NAME_total (the link), ibgw_eth_NAME_total (the bridge and the
 * partition's tap or trunk), ibgw_tun_NAME_total (router mode). */
static void tables(struct ibgwd *d, const struct counter_out *o)
{
	static char lab[GW_MAX_PARTS][GW_NAME_MAX + 16];
	const void *ib[GW_MAX_PARTS], *br[GW_MAX_PARTS], *pt[GW_MAX_PARTS];
	const void *tn[GW_MAX_PARTS], *se[GW_MAX_PARTS], *sg[GW_MAX_PARTS];
	const char *ibl[GW_MAX_PARTS], *brl[GW_MAX_PARTS], *tnl[GW_MAX_PARTS];
	const char *sl[GW_MAX_PARTS];
	const void *re[GW_MAX_PARTS], *rg[GW_MAX_PARTS];
	const char *rl[GW_MAX_PARTS];
	static struct ipoib_tun_stats ts[GW_MAX_PARTS];
	unsigned int i, nib = 0, nbr = 0, ntn = 0, ns = 0, nr = 0;

	for (i = 0; i < d->nparts; i++) {
		struct part *p = &d->parts[i];

		if (!p->used)
			continue;
		snprintf(lab[i], sizeof(lab[i]), "partition=\"%s\"",
			 p->pc->name);
		ib[nib] = ipoib_link_stats(part_link(p));
		ibl[nib++] = lab[i];
		if (p->br) {
			br[nbr] = gw_bridge_stats(p->br);
			pt[nbr] = p;
			brl[nbr++] = lab[i];
		} else if (p->tun) {
			ipoib_tun_stats(p->tun, &ts[ntn]);
			tn[ntn] = &ts[ntn];
			tnl[ntn++] = lab[i];
		}
		if (p->sdp && gw_sdp_ep_stats(p->sdp)) {
			se[ns] = gw_sdp_ep_stats(p->sdp);
			sg[ns] = gw_sdp_stats(p->sdp);
			sl[ns++] = lab[i];
		}
		if (p->rds && gw_rds_ep_stats(p->rds)) {
			re[nr] = gw_rds_ep_stats(p->rds);
			rg[nr] = gw_rds_stats(p->rds);
			rl[nr++] = lab[i];
		}
	}
	counters_prom(o, "ibgw_ib_", ipoib_link_counters, ib, ibl, nib);
	counters_prom(o, "ibgw_eth_", gw_bridge_counters, br, brl, nbr);
	counters_prom(o, "ibgw_eth_", gw_part_counters, pt, brl, nbr);
	counters_prom(o, "ibgw_tun_", ipoib_tun_counters, tn, tnl, ntn);
	counters_prom(o, "ibgw_sdp_", sdp_ep_counters, se, sl, ns);
	counters_prom(o, "ibgw_sdp_", gw_sdp_counters, sg, sl, ns);
	counters_prom(o, "ibgw_rds_", rds_ep_counters, re, rl, nr);
	counters_prom(o, "ibgw_rds_", gw_rds_counters, rg, rl, nr);
}

static void render(struct ibgwd *d, struct evbuffer *b)
{
	struct counter_out o = { buf_vprintf, b };
	unsigned int i, r;

	head(b, "ibgw_up", "gauge",
	     "1 once every partition has its carrier at start, else 0.");
	evbuffer_add_printf(b, "ibgw_up %d\n", d->ready);
	head(b, "ibgw_partition_carrier", "gauge",
	     "1 when the partition's IPoIB link has its carrier.");
	for (i = 0; i < d->nparts; i++) {
		struct part *p = &d->parts[i];

		if (!p->used)
			continue;
		evbuffer_add_printf(b, "ibgw_partition_carrier{partition=\"%s\","
				    "pkey=\"0x%04x\",mode=\"%s\"} %d\n",
				    p->pc->name, p->pc->pkey | 0x8000,
				    gw_mode_name(p->pc->mode),
				    ipoib_link_carrier(part_link(p)));
	}
	head(b, "ibgw_packets_total", "counter",
	     "Packets by partition, side (ib: the IPoIB link, eth: the "
	     "Ethernet segment) and direction (rx, tx).");
	traffic(d, b, "ibgw_packets_total", 0);
	head(b, "ibgw_bytes_total", "counter",
	     "Bytes, labelled as ibgw_packets_total.");
	traffic(d, b, "ibgw_bytes_total", 1);
	head(b, "ibgw_drops_total", "counter",
	     "Packets dropped, by partition, side and reason.");
	for (i = 0; i < d->nparts; i++)
		if (d->parts[i].used)
			drops(&d->parts[i], &o);
	/* each family's samples together, as the format wants them */
	head(b, "ibgw_neighbors", "gauge",
	     "Neighbour entries, by partition and side.");
	for (i = 0; i < d->nparts; i++) {
		struct part *p = &d->parts[i];

		if (!p->used)
			continue;
		evbuffer_add_printf(b, "ibgw_neighbors{partition=\"%s\","
				    "side=\"ib\"} %u\n", p->pc->name,
				    ipoib_link_neigh_count(part_link(p)));
		if (p->br)
			evbuffer_add_printf(b, "ibgw_neighbors{partition="
					    "\"%s\",side=\"eth\"} %u\n",
					    p->pc->name,
					    gw_bridge_neigh_count(p->br));
	}
	head(b, "ibgw_groups", "gauge",
	     "Multicast groups of the partition's IPoIB link.");
	for (i = 0; i < d->nparts; i++)
		if (d->parts[i].used)
			evbuffer_add_printf(b, "ibgw_groups{partition=\"%s\"} "
					    "%u\n", d->parts[i].pc->name,
					    ipoib_link_group_count(
						    part_link(&d->parts[i])));
	head(b, "ibgw_sa_errors_total", "counter",
	     "Refused or failed SA requests (joins and PathRecords).");
	for (i = 0; i < d->nparts; i++) {
		const struct ipoib_link_stats *s;

		if (!d->parts[i].used)
			continue;
		s = ipoib_link_stats(part_link(&d->parts[i]));
		evbuffer_add_printf(b, "ibgw_sa_errors_total{partition=\"%s\"}"
				    " %llu\n", d->parts[i].pc->name,
				    (unsigned long long)(s->join_failures +
							 s->path_failures));
	}
	head(b, "ibgw_fabric_events_total", "counter",
	     "Port events from the fabric (PORT_ERR, CLIENT_REREGISTER ...).");
	for (r = FAB_EV_PORT_ACTIVE; r <= FAB_EV_DEVICE_FATAL; r++)
		evbuffer_add_printf(b, "ibgw_fabric_events_total{event=\"%s\"}"
				    " %llu\n", fab_event_name(r),
				    (unsigned long long)d->fab_events[r]);
	head(b, "ibgw_fabric_send_errors_total", "counter",
	     "Frames the fabric refused to send, by partition.");
	for (i = 0; i < d->nparts; i++)
		if (d->parts[i].used)
			evbuffer_add_printf(b, "ibgw_fabric_send_errors_total{"
					    "partition=\"%s\"} %llu\n",
					    d->parts[i].pc->name,
					    (unsigned long long)ipoib_link_stats(
						    part_link(&d->parts[i]))->
					    drop[IPOIB_DROP_SEND]);
	head(b, "ibgw_trunk_drops_total", "counter",
	     "Frames on the trunk dropped: no partition maps their VLAN.");
	evbuffer_add_printf(b, "ibgw_trunk_drops_total{reason="
			    "\"unmapped_vlan\"} %llu\n",
			    (unsigned long long)d->trunk_unmapped);
	tables(d, &o);
}

static void metrics_cb(struct evhttp_request *req, void *arg)
{
	struct gw_metrics *m = arg;
	struct evbuffer *b;

	if (evhttp_request_get_command(req) != EVHTTP_REQ_GET &&
	    evhttp_request_get_command(req) != EVHTTP_REQ_HEAD) {
		evhttp_send_error(req, 405, "Method Not Allowed");
		return;
	}
	b = evbuffer_new();
	if (!b) {
		evhttp_send_error(req, 500, "Out of memory");
		return;
	}
	render(m->d, b);
	evhttp_add_header(evhttp_request_get_output_headers(req),
			  "Content-Type", "text/plain; version=0.0.4");
	evhttp_send_reply(req, 200, "OK", b);
	evbuffer_free(b);
}

static void other_cb(struct evhttp_request *req, void *arg)
{
	(void)arg;
	evhttp_send_error(req, 404, "Not Found (try /metrics)");
}

static int listen_on(const char *addr, unsigned int port)
{
	struct sockaddr_in6 s6;
	struct sockaddr_in s4;
	int fd, one = 1, v6 = strchr(addr, ':') != NULL;

	fd = socket(v6 ? AF_INET6 : AF_INET,
		    SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (v6) {
		memset(&s6, 0, sizeof(s6));
		s6.sin6_family = AF_INET6;
		s6.sin6_port = htons((uint16_t)port);
		inet_pton(AF_INET6, addr, &s6.sin6_addr);
		if (bind(fd, (struct sockaddr *)&s6, sizeof(s6)) < 0)
			goto fail;
	} else {
		memset(&s4, 0, sizeof(s4));
		s4.sin_family = AF_INET;
		s4.sin_port = htons((uint16_t)port);
		inet_pton(AF_INET, addr, &s4.sin_addr);
		if (bind(fd, (struct sockaddr *)&s4, sizeof(s4)) < 0)
			goto fail;
	}
	if (listen(fd, 16) < 0)
		goto fail;
	return fd;
fail:
	{
		int e = errno;

		close(fd);
		errno = e;
	}
	return -1;
}

struct gw_metrics *gw_metrics_open(struct ibgwd *d, const char *addr,
				   unsigned int port, char *err,
				   size_t errlen)
{
	struct gw_metrics *m = calloc(1, sizeof(*m));
	int fd;

	if (!m || !(m->http = evhttp_new(d->base))) {
		free(m);
		snprintf(err, errlen, "metrics: out of memory");
		errno = ENOMEM;
		return NULL;
	}
	m->d = d;
	/* our own socket: evhttp_bind_socket() resolves with AI_ADDRCONFIG,
	 * which refuses 127.0.0.1 in a namespace with no other IPv4 address */
	fd = listen_on(addr, port);
	if (fd < 0 || evhttp_accept_socket(m->http, fd) < 0) {
		int e = errno;

		snprintf(err, errlen, "metrics: cannot listen on %s port %u: %s",
			 addr, port, strerror(e));
		if (fd >= 0)
			close(fd);
		evhttp_free(m->http);
		free(m);
		errno = e;
		return NULL;
	}
	evhttp_set_cb(m->http, "/metrics", metrics_cb, m);
	evhttp_set_gencb(m->http, other_cb, m);
	return m;
}

void gw_metrics_close(struct gw_metrics *m)
{
	if (!m)
		return;
	evhttp_free(m->http);
	free(m);
}

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* ibgwd's state, shared by the daemon (ibgwd.c) and its control socket
 * (gw_ctl.c). */
#ifndef IBGW_IBGWD_H
#define IBGW_IBGWD_H

#include <stdint.h>
#include <time.h>

#include "fabric/fabric.h"
#include "gateway/gw_bridge.h"
#include "gateway/gw_conf.h"
#include "netlink/nl_link.h"
#include "inet/gso.h"
#include "ulp/ipoib/ipoib_tun.h"

struct event;
struct event_base;
struct gw_ctl;
struct gw_metrics;
struct gw_sdp;
struct gw_rds;

#define TAP_BATCH	64
#define FRAME_MAX	(ETH_HDR_LEN + ETH_VLAN_LEN + 65536)

struct ibgwd;

struct part {
	struct ibgwd *d;
	int used;			/* the slot holds a partition */
	struct gw_part_conf conf;	/* its configuration */
	const struct gw_part_conf *pc;	/* = &conf */
	int up;				/* carrier seen */
	int seeded;			/* its LAN hosts of before asked for */
	/* router */
	struct ipoib_tun *tun;
	/* transparent */
	struct ipoib_link *link;
	struct gw_bridge *br;
	int tap_fd, tap_ifindex;
	int tap_vnet;			/* the tap has a virtio-net header */
	int tap_err;			/* errno that stopped its reads, or 0 */
	int tap_stopped;		/* reads wait for the link's tx_ready */
	struct event *tap_ev;
	uint64_t eth_tx_errors, tap_offload_bad;
	struct gw_sdp *sdp;		/* sdp = on: gateway/gw_sdp.c */
	struct gw_rds *rds;		/* rds = on: gateway/gw_rds.c */
	int gids;			/* rds_gids given to the port's netdev
					 * (gateway/gw_gids.c) */
	/* TCP segments for the tap coalesced, behind one Ethernet header */
	struct gso_gro *gro;
	uint8_t gro_eth[ETH_HDR_LEN];
	/* a frame and the virtio-net header before it */
	uint8_t tapbuf[16 + FRAME_MAX] __attribute__((aligned(16)));
};

struct ibgwd {
	struct gw_conf conf;
	struct event_base *base;
	struct fab_dev *dev;
	struct fab_port_attr pa;
	struct nl_sock_ctx *nl;
	struct part parts[GW_MAX_PARTS];
	unsigned int nparts;		/* slots up to the last one used */
	int trunk_fd, trunk_ifindex;
	struct event *trunk_ev;
	uint64_t trunk_unmapped;
	int trunk_err;			/* errno that stopped its reads, or 0 */
	uint64_t fab_events[FAB_EV_DEVICE_FATAL + 1];	/* port events seen */
	struct event *dev_ev, *mon_ev, *tick_ev, *sig_ev[4];
	int ready, foreground, verbose, exit_code;
	/* systemd (conf/notify.h): the watchdog's interval (0: none) and
	 * timer, a data path found stopped, the last STATUS= sent */
	uint64_t wd_usec;
	struct event *wd_ev;
	int dp_dead, notify_warned, status_sent;
	unsigned int status_carrier, status_parts;
	time_t started;
	struct gw_ctl *ctl;		/* the control socket */
	struct gw_metrics *metrics;	/* the Prometheus endpoint */
	/* LAN hosts known before a restart (gateway/gw_seed.c) */
	struct gw_seed *seed;
	unsigned int nseed;
	char *seed_saved;		/* the file's text as last written */
	unsigned long ticks;		/* tick_cb's calls */
	int seed_warned;
	uint8_t frame[FRAME_MAX];	/* the trunk's receive buffer */
	uint8_t out[FRAME_MAX];		/* frames put together to send */
};

/* The link of a partition, whatever its mode. */
static inline struct ipoib_link *part_link(struct part *p)
{
	return p->tun ? ipoib_tun_link(p->tun) : p->link;
}

/* A partition on a RoCE port: no IPoIB link (part_link() NULL). */
static inline int part_roce(const struct part *p)
{
	return p->d->pa.link_layer == FAB_LINK_ETHERNET;
}

/* The LAN hosts a restarted gateway asks for again (gw_seed.c): read
 * back at start, asked for when a transparent partition's carrier first
 * comes up, written when they change (from the tick) and at a stop. */
void gw_seed_load(struct ibgwd *d);
void gw_seed_part(struct part *p);
void gw_seed_save(struct ibgwd *d);
void gw_seed_free(struct ibgwd *d);

/* Run-time changes (ibgwd.c), for the control socket.  Each returns 0,
 * or -1 with a one-line reason in err; the configuration file is
 * rewritten after a change (its canonical form, comments are not kept). */
int ibgwd_partition_add(struct ibgwd *d, const char *name, char **kv,
			int nkv, char *err, size_t errlen);
int ibgwd_partition_del(struct ibgwd *d, const char *name, char *err,
			size_t errlen);
int ibgwd_reload(struct ibgwd *d, char *err, size_t errlen);

/* The control socket (gw_ctl.c): listen on path (mode 0660), serve the
 * commands of ibgwctl(8) from the event loop.  NULL with errno set and
 * the reason in err. */
struct gw_ctl *gw_ctl_open(struct ibgwd *d, const char *path, char *err,
			   size_t errlen);
void gw_ctl_close(struct gw_ctl *c);
/* The text of ibgwctl show WHAT (stats, neighbors, groups) into buf. */
size_t gw_ctl_render(struct ibgwd *d, const char *what, char *buf,
		     size_t cap);
/* ibgwd's own counters, as ibgwctl(8) names them (gw_ctl.c): a transparent
 * partition's tap or trunk side (struct part), and the trunk's (struct
 * ibgwd). */
extern const struct counter_desc gw_part_counters[];
extern const struct counter_desc gw_trunk_counters[];

/* Least privilege (gw_caps.c): keep CAP_NET_ADMIN and
 * CAP_NET_BIND_SERVICE, drop the rest everywhere; verbs: also
 * CAP_IPC_LOCK and CAP_NET_RAW (dropped before set-up, which still needs
 * them).  Only what is held is kept.  0, or -1 with err. */
int gw_drop_caps(int verbs, char *err, size_t errlen);

/* Metrics (gw_metrics.c): /metrics over HTTP on addr:port.  NULL with
 * errno set and the reason in err. */
struct gw_metrics *gw_metrics_open(struct ibgwd *d, const char *addr,
				   unsigned int port, char *err,
				   size_t errlen);
void gw_metrics_close(struct gw_metrics *m);

#endif

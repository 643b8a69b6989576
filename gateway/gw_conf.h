/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * ibgw.conf: the gateway's configuration (docs/ibgw.conf.5), read with the
 * strict helpers of conf/conf.h and then checked as a whole (one P_Key,
 * VLAN, tap and interface name per partition, the keys each mode takes).
 * Reading it touches no device: ibgwd -n works without root.
 */
#ifndef IBGW_GW_CONF_H
#define IBGW_GW_CONF_H

#include <net/if.h>
#include <stdint.h>
#include <stdio.h>

#include "netlink/nl_link.h"

#define GW_MAX_PARTS	64
#define GW_NAME_MAX	64
#define GW_SDP_EXPORTS_MAX	16
#define GW_RDS_EXPORTS_MAX	16
/* rds_gids: at most this many entries, and addresses in all */
#define GW_RDS_GIDS_MAX		16
#define GW_RDS_GID_ADDRS_MAX	256

/* sdp_exports: TCP from the LAN on lan_port, continued as SDP to an IB
 * host. */
struct gw_sdp_export {
	uint16_t lan_port;
	uint16_t ib_port;
	struct inet_addr ib_addr;
};

/* rds_exports: UDP from the LAN on lan_port, continued as RDS to an IB
 * host's ib_addr:ib_port (the fields of an SDP export). */
struct gw_rds_export {
	uint16_t lan_port;
	uint16_t ib_port;
	struct inet_addr ib_addr;
};

enum gw_mode { GW_MODE_TRANSPARENT, GW_MODE_ROUTER };

struct gw_part_conf {
	char name[GW_NAME_MAX + 1];	/* the section's instance name */
	int line;			/* its header line */
	uint16_t pkey;
	enum gw_mode mode;
	char tap[IFNAMSIZ];		/* transparent: access tap, or "" */
	unsigned int vlan;		/* transparent: tag on the trunk, or 0 */
	char bridge[IFNAMSIZ];		/* enslave the tap to it, or "" */
	char ifname[IFNAMSIZ];		/* router: the IP interface */
	struct inet_prefix addrs[2];	/* router: address, address6 */
	unsigned int naddrs;
	unsigned int mtu;		/* IPoIB MTU cap; 0: the group's */
	unsigned int eth_mtu;		/* the Ethernet side's MTU */
	int mss_clamp;
	int ipoib_connected;		/* ipoib_mode = connected */
	int sdp;			/* sdp = on: terminate SDP here */
	unsigned int sdp_max_conns;	/* SDP connections at once */
	struct gw_sdp_export sdp_exports[GW_SDP_EXPORTS_MAX];
	unsigned int nsdp_exports;
	int rds;			/* rds = on: bridge RDS to UDP here */
	unsigned int rds_max_peers;	/* RDS<->UDP mappings at once */
	struct gw_rds_export rds_exports[GW_RDS_EXPORTS_MAX];
	unsigned int nrds_exports;
	/* RoCE: LAN addresses the port gets GIDs for (host routes as /32
	 * or /128) */
	struct inet_prefix rds_gids[GW_RDS_GIDS_MAX];
	unsigned int nrds_gids;
};

/* How many addresses rds_gids entry p stands for. */
unsigned int gw_gid_count(const struct inet_prefix *p);

struct gw_conf {
	char path[4096];
	char fabric[4096];
	char node[GW_NAME_MAX + 1];
	char control[4096];
	char trunk[IFNAMSIZ];
	unsigned int neigh_max;
	char metrics_addr[64];		/* "" when not served */
	unsigned int metrics_port;
	struct gw_part_conf parts[GW_MAX_PARTS];
	unsigned int nparts;
};

/*
 * Read and check path.  Returns 0, or the number of errors, each printed to
 * err as one line naming the file, line, section and key; -1 when the file
 * could not be read at all (also printed).
 */
int gw_conf_load(const char *path, struct gw_conf *out, FILE *err);

const char *gw_mode_name(enum gw_mode m);

/* The canonical text of a [gateway] section and of a partition's. */
void gw_conf_write_gateway(FILE *f, const struct gw_conf *g);
void gw_conf_write_part(FILE *f, const struct gw_part_conf *p);

#endif

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Inside ibfabricd's switch: the state shared by the forwarding pipeline
 * (fsw_switch.c) and the subnet manager / SA (fsw_sa.c).  Not for use
 * outside those two files.
 */
#ifndef IBGW_FSW_INT_H
#define IBGW_FSW_INT_H

#include "subnet/fsw.h"
#include "fabric/ib_pkt.h"
#include "fabric/sa_mad.h"

#define FSW_SM_LID		1
#define FSW_FIRST_LID		2
#define FSW_MAX_UNICAST_LID	0xBFFF
#define FSW_FIRST_QPN		0x48	/* as mlx HCAs start, above QP0/1 */
#define FSW_PORT_MTU		5	/* 4096, unless --mtu says otherwise */
#define FSW_MLIDS		(FAB_LID_MCAST_MAX - FAB_LID_MCAST_MIN + 1)
#define FSW_GUID_OUI		0x0002c9ull	/* looks like an HCA GUID */

#define FSW_SM_KEY		1	/* OpenSM's default SM_Key */
#define FSW_PORT_RATE		3	/* 10 Gb/s (4x SDR) */
#define FSW_SUBNET_TIMEOUT	18	/* OpenSM's default, PacketLifeTime */
#define FSW_SA_HASH		16384	/* MGID hash buckets, power of two */

struct sa_group;
struct sa_inform;

struct fsw {
	const struct prtn_conf *pc;
	const struct fsw_ops *ops;
	void *ctx;
	struct fsw_stats stats;
	struct fsw_node **nodes;
	unsigned int nnodes, nodes_cap;
	struct fsw_node *by_lid[FSW_MAX_UNICAST_LID + 1];
	struct fsw_mgroup *groups[FSW_MLIDS];
	uint16_t next_lid;
	uint8_t port_mtu;		/* every port's MTU code */
	struct fsw_fault fault;
	int faults_on;
	uint8_t held[IB_MAX_PKT];	/* --reorder: one packet held back */
	size_t held_len;
	/* subnet administration (fsw_sa.c) */
	struct sa_group *sa_hash[FSW_SA_HASH];	/* by MGID */
	struct sa_group *sa_by_mlid[FSW_MLIDS];
	unsigned int sa_ngroups;
	uint16_t sa_mlid_hint;		/* no free MLID below this one */
	uint32_t sa_mgid_seq;		/* SA-assigned MGIDs */
	uint32_t sm_psn;
	uint32_t sm_tid;		/* TIDs of the SM's own Reports */
	struct sa_inform *informs;	/* trap subscriptions */
};

/* Switch a packet the SM sends (SLID = SM LID), as if it came from a port. */
void fsw_sm_send(struct fsw *sw, const uint8_t *pkt, size_t len);
struct fsw_node *fsw_node_by_guid(struct fsw *sw, uint64_t port_guid);
/* A node's port GID: the default subnet prefix fe80:: and its port GUID. */
void fsw_node_gid(const struct fsw_node *n, union fab_gid *gid);

/* fsw_sa.c */
int fsw_sa_init(struct fsw *sw);
void fsw_sa_free(struct fsw *sw);
/* A UD packet addressed to the SM's QP1, already checked by the switch. */
void fsw_sa_input(struct fsw *sw, const struct ib_ud *u);
/* Does a node's port receive MLID (FullMember or NonMember)? */
int fsw_sa_port_receives(const struct fsw_node *n, uint16_t mlid);
int fsw_sa_mlid_known(const struct fsw *sw, uint16_t mlid);
/* The port left the subnet (down, or its last process went): its
 * memberships go, as OpenSM drops those of a vanished port. */
void fsw_sa_port_gone(struct fsw *sw, struct fsw_node *n);
/* A port came up: trap 64 (GID in service) to subscribers. */
void fsw_sa_port_up(struct fsw *sw, struct fsw_node *n);
/* An SM restart: every membership is forgotten (well-known groups stay). */
void fsw_sa_forget_all(struct fsw *sw);
/* "groups" (all, or one MGID in arg) and "partitions" tables */
size_t fsw_sa_report(struct fsw *sw, const char *what, const char *arg,
		     char *buf, size_t cap);
/* The PathRecord the SA would answer from node src to node dst (P_Key
 * optional): 0, or -1 with the reason in buf. */
int fsw_sa_path_text(struct fsw *sw, const char *src, const char *dst,
		     const char *pkey, char *buf, size_t cap);

#endif

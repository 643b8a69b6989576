/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The switch and subnet state of ibfabricd, apart from its sockets.
 *
 * fsw owns nodes (name -> GUID, LID, P_Key table), their queue pairs and
 * multicast groups.  fsw_input() takes one native IB packet from a node,
 * checks it as a switch and the receiving HCA would, and hands it to
 * ops->deliver once per receiving QP.  Every packet that is not delivered
 * is counted under one drop reason.  Nothing here does I/O; ibfabricd.c
 * binds it to sockets and the event loop.
 */
#ifndef IBGW_FSW_H
#define IBGW_FSW_H

#include <stddef.h>
#include <stdint.h>

#include "fabric/fabric.h"
#include "fabric/soft_proto.h"

struct prtn_conf;
struct fsw_cm;

enum fsw_drop {
	FSW_DROP_TRUNCATED,
	FSW_DROP_BAD_PKTLEN,
	FSW_DROP_BAD_VCRC,
	FSW_DROP_BAD_ICRC,
	FSW_DROP_BAD_LVER,
	FSW_DROP_BAD_LNH,
	FSW_DROP_BAD_GRH,
	FSW_DROP_BAD_TVER,
	FSW_DROP_BAD_OPCODE,
	FSW_DROP_BAD_SLID,	/* SLID is not the sending node's LID */
	FSW_DROP_SEND_PKEY,	/* P_Key not in the sender's table */
	FSW_DROP_QKEY_PRIVILEGED, /* controlled Q_Key from a plain QP */
	FSW_DROP_TOO_LONG,	/* payload above the port MTU */
	FSW_DROP_UNKNOWN_DLID,
	FSW_DROP_UNKNOWN_QP,
	FSW_DROP_UNKNOWN_MLID,
	FSW_DROP_MCAST_NO_GRH,
	FSW_DROP_MCAST_QPN,	/* multicast DLID without QPN 0xFFFFFF */
	FSW_DROP_PORT_DOWN,
	FSW_DROP_PKEY_MISMATCH,	/* at the receiving QP */
	FSW_DROP_QKEY_MISMATCH,	/* at the receiving QP */
	FSW_DROP_RX_OVERRUN,	/* receiver not reading: UD drops */
	FSW_DROP_FAULT_LOSS,	/* --loss */
	FSW_DROP_BAD_SRCQP,	/* DETH SrcQP is not the sending QP */
	FSW_DROP_MCAST_NOT_MEMBER, /* attached, but the port never joined */
	FSW_DROP_BAD_MAD,	/* to the SM: not a well-formed SA MAD */
	FSW_DROP_BAD_RING,	/* a QP's shared ring held impossible values */
	FSW_DROP_BAD_TRANSPORT,	/* RC to a UD QP, UD to an RC QP, RC from
				 * a UD QP or to a multicast LID */
	FSW_DROP_BAD_RC,	/* RC headers, pad or length (ib_rc_parse) */
	FSW_DROP_MAX
};

struct fsw_stats {
	uint64_t rx_packets;	/* packets into the switch */
	uint64_t rx_bytes;
	uint64_t delivered;	/* packets handed to receiving QPs */
	uint64_t delivered_bytes;
	uint64_t fault_dup;
	uint64_t fault_reorder;
	uint64_t ctl_malformed;	/* garbage on the control socket */
	uint64_t mcast_no_receivers; /* valid MLID, no attached QP */
	uint64_t sa_requests;	/* MADs the SA answered */
	uint64_t sa_errors;	/* of those, answered with a non-zero status */
	uint64_t sa_joins, sa_leaves, sa_path_queries;
	uint64_t sm_traps;	/* Reports sent to subscribers */
	uint64_t sm_acks;	/* responses to the SM (ReportResp), taken */
	uint64_t events;	/* port events raised to nodes */
	uint64_t rc_packets;	/* RC packets delivered */
	uint64_t cm_mads_sent;	/* MADs the nodes' CMs sent */
	uint64_t cm_mads_rcvd;	/* CM MADs handed to a node's CM */
	uint64_t qps_recycled;	/* RC QPs renewed in place (QP_RECYCLE) */
	uint64_t drop[FSW_DROP_MAX];
};

/* Opaque: the switch owns both; a caller holds handles, and keeps what
 * it owns itself (its connection, its rings) behind the owner pointer it
 * gives fsw_qp_create(). */
struct fsw_node;
struct fsw_qp;

struct fsw_ops {
	/* Hand a packet to a QP, named by the owner it was made with; 0,
	 * or -1 when its queue is full. */
	int (*deliver)(void *ctx, void *owner, const uint8_t *pkt,
		       size_t len);
	/* Every packet entering the switch (--pcap). */
	void (*capture)(void *ctx, const uint8_t *pkt, size_t len);
	/* A port event for every process of a node (may be NULL). */
	void (*event)(void *ctx, struct fsw_node *node,
		      enum fab_event_type type);
	/* A connection manager's event for a process (the owner it gave
	 * with its fsw_cm_* request; may be NULL). */
	void (*cm_event)(void *ctx, void *owner,
			 const struct fsp_cm_event *ev);
	/* A monotonic clock in milliseconds for the CMs' timers (NULL:
	 * CLOCK_MONOTONIC). */
	uint64_t (*now_ms)(void *ctx);
};

struct fsw_fault_cfg {
	double loss, dup, reorder;
	uint64_t seed;
};

struct fsw;

struct fsw *fsw_new(const struct prtn_conf *pc, const struct fsw_ops *ops,
		    void *ctx);
void fsw_free(struct fsw *sw);
/* The MTU of every port (IB code 1..5); before any node attaches. */
int fsw_set_port_mtu(struct fsw *sw, uint8_t mtu_code);
void fsw_set_faults(struct fsw *sw, const struct fsw_fault_cfg *cfg);
const struct fsw_stats *fsw_stats(const struct fsw *sw);
void fsw_count_ctl_malformed(struct fsw *sw);
void fsw_count_qp_recycled(struct fsw *sw);
/* Count a packet ibfabricd itself dropped before the switch saw it. */
void fsw_drop(struct fsw *sw, enum fsw_drop why);
const char *fsw_drop_name(enum fsw_drop d);

/* Keep lid for the port GUID (a guid2lid entry from an earlier run);
 * before any node attaches.  0, or -1 with errno EINVAL (a LID outside
 * 0x0002..0xBFFF or kept already) or EEXIST (the GUID has one). */
int fsw_lid_reserve(struct fsw *sw, uint64_t port_guid, uint16_t lid);
/* A process attaches to node name; the node is made on first use. */
struct fsw_node *fsw_node_attach(struct fsw *sw, const char *name,
				 char *err, size_t errlen);
/* The process proc (the token its MAD agents were made with; NULL if it
 * made none) detaches: when it was the node's last, the port's SA
 * memberships go; else only the JoinState bits it joined that no other
 * process of the node holds. */
void fsw_node_detach(struct fsw *sw, struct fsw_node *node, const void *proc);
/* Port down (SM: PORT_ERR to its processes, memberships dropped) or up. */
int fsw_port_set(struct fsw *sw, struct fsw_node *node, int up);
/* As an SM restart: memberships forgotten, CLIENT_REREGISTER to every
 * port that is up; returns how many. */
unsigned int fsw_client_reregister(struct fsw *sw);
/*
 * New partitions (a reload; pc replaces the configuration given before and
 * must live as long as the switch).  Every port's P_Key table is made
 * again keeping the indexes of the keys it still has; PKEY_CHANGE goes to
 * exactly the ports whose table changed, which leave the groups of keys
 * they lost; the groups of partitions that are gone are deleted (their
 * number in *groups_deleted, if not NULL).  Returns how many ports
 * changed.
 */
unsigned int fsw_set_partitions(struct fsw *sw, const struct prtn_conf *pc,
				unsigned int *groups_deleted);
struct fsw_node *fsw_node_find(struct fsw *sw, const char *name);
/* The i-th node in attach order, NULL past the last. */
struct fsw_node *fsw_node_at(const struct fsw *sw, unsigned int i);
/* How many multicast groups the SA has the node's port in. */
unsigned int fsw_node_groups(const struct fsw *sw, const struct fsw_node *node);
/* What a process on the node sees of its port: LID, GUIDs, P_Keys. */
void fsw_port_info(const struct fsw *sw, const struct fsw_node *node,
		   struct fsp_port_info *pi);
const char *fsw_node_name(const struct fsw_node *node);
uint16_t fsw_node_lid(const struct fsw_node *node);

/* A UD QP; owner is the caller's, handed back by ops->deliver. */
struct fsw_qp *fsw_qp_create(struct fsw *sw, struct fsw_node *node,
			     void *owner, uint32_t qkey, uint16_t pkey_index,
			     int privileged, char *err, size_t errlen);
/* An RC QP: packets to it are RC opcodes only, checked against its
 * P_Key; its transport runs in the process (fabric/soft_rc.h). */
struct fsw_qp *fsw_rc_qp_create(struct fsw *sw, struct fsw_node *node,
				void *owner, uint16_t pkey_index, char *err,
				size_t errlen);
int fsw_qp_is_rc(const struct fsw_qp *qp);
/* The switch's connection managers, one per port (subnet/fsw_cm.h): the
 * process-facing calls are fsw_cm_*() on this, with the node's LID. */
struct fsw_cm *fsw_cm(struct fsw *sw);
/* A MAD agent: the node's QP1 for one management class, per process.
 * proc names the process (the same token for all its agents, and again
 * to fsw_node_detach()): the SA counts the multicast joins each process
 * makes for the node's port, as a host's multicast layer counts its local
 * joiners (subnet/fsw_sa.h).  NULL: the agent's joins are the port's. */
struct fsw_qp *fsw_gsi_create(struct fsw *sw, struct fsw_node *node,
			      void *owner, const void *proc,
			      uint8_t mgmt_class, char *err, size_t errlen);
struct fsw_qp *fsw_qp_find(struct fsw_node *node, uint32_t qpn);
/* Give a QP just made the number qpn instead (a node re-attaching after
 * an ibfabricd restart asks for its QPNs back).  0, or -1 with errno
 * EINVAL (0, 1, 0xFFFFFF or beyond) or EADDRINUSE. */
int fsw_qp_renumber(struct fsw_node *node, struct fsw_qp *qp, uint32_t qpn);
uint32_t fsw_qp_qpn(const struct fsw_qp *qp);
/* The P_Key at the QP's P_Key index, as it was made. */
uint16_t fsw_qp_pkey(const struct fsw_qp *qp);
struct fsw_node *fsw_qp_node(const struct fsw_qp *qp);
void fsw_qp_destroy(struct fsw *sw, struct fsw_qp *qp);
int fsw_mcast_attach(struct fsw *sw, struct fsw_qp *qp,
		     const union fab_gid *mgid, uint16_t mlid, char *err,
		     size_t errlen);
int fsw_mcast_detach(struct fsw *sw, struct fsw_qp *qp,
		     const union fab_gid *mgid, uint16_t mlid, char *err,
		     size_t errlen);

/* One packet from a node (from may be NULL only in unit tests); for
 * packets injected or replayed as the node, without a sending QP. */
void fsw_input(struct fsw *sw, struct fsw_node *from, const uint8_t *pkt,
	       size_t len);
/* One packet sent on a QP: its DETH SrcQP must be that QP's (1 for MAD
 * agents), and only privileged QPs may use controlled Q_Keys. */
void fsw_input_qp(struct fsw *sw, struct fsw_qp *qp, const uint8_t *pkt,
		  size_t len);
/* The same with the VCRC of pkt[0 .. len - 2) computed on the way in
 * (ib_vcrc_copy), so that the switch does not read the packet for it. */
void fsw_input_qp_vcrc(struct fsw *sw, struct fsw_qp *qp, const uint8_t *pkt,
		       size_t len, uint16_t vcrc);
/* Forward a packet held back for --reorder; 1 if one was held. */
int fsw_flush(struct fsw *sw);
/* n packets (bytes in all) that ops->deliver accepted could not be handed
 * over after all (a burst the receiver's socket refused): counted as
 * receive overruns instead of deliveries. */
void fsw_undeliver(struct fsw *sw, struct fsw_qp *qp, unsigned int n,
		   uint64_t bytes);
int fsw_held(const struct fsw *sw);

/* Text reports for ibfabricctl; return bytes written (truncated at cap). */
size_t fsw_report(struct fsw *sw, const char *what, char *buf, size_t cap);
/*
 * A control command (reports, and the subnet manager's actions:
 * "rereg", "port NODE down|up", "path SRC DST [PKEY]").  Writes the answer
 * to buf; returns 0, or -1 with an error message in buf.
 */
int fsw_ctl(struct fsw *sw, const char *cmd, char *buf, size_t cap);

#endif

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * ibfabricd's subnet manager and subnet administrator, as the switch
 * (fsw_switch.c) uses it.
 *
 * The SA owns multicast groups, which port is in which group with which
 * JoinState, PathRecords, InformInfo subscriptions and the traps sent to
 * them.  It owns no ports: the switch owns the node table and lends it
 * through struct fsw_sa_ops, handed over at fsw_sa_new().  The SA names a
 * port by its LID, which the switch never gives to another port, and keeps
 * nothing of a port but that LID and its GUID, and of the port's processes
 * only the opaque tokens the switch hands in with their MADs.
 */
#ifndef IBGW_FSW_SA_H
#define IBGW_FSW_SA_H

#include <stddef.h>
#include <stdint.h>

#include "fabric/fabric.h"

#define FSW_SA_LID	1	/* the SM's port; QP1 there is the SA */

struct ib_ud;
struct prtn_conf;
struct fsw_sa;

/* A port as the SA sees it.  name and pkeys point into the switch's node,
 * which lives as long as the switch. */
struct fsw_sa_port {
	const char *name;
	uint64_t guid;			/* port GUID */
	union fab_gid gid;		/* port GID (subnet prefix, GUID) */
	uint16_t lid;
	uint8_t mtu;			/* active MTU, IB code */
	int up;
	const uint16_t *pkeys;		/* the port's P_Key table */
	unsigned int npkeys;
};

/* What the SA counts; the counters are the switch's (struct fsw_stats). */
enum fsw_sa_count {
	FSW_SA_ANSWERED,	/* a MAD answered */
	FSW_SA_ANSWERED_ERR,	/* ... with a non-zero status */
	FSW_SA_JOIN,
	FSW_SA_LEAVE,
	FSW_SA_PATH_QUERY,
	FSW_SA_TRAP_SENT,	/* a Report to a subscriber */
	FSW_SA_ACK,		/* a response to the SM (ReportResp) */
	FSW_SA_BAD_MAD,		/* not a well-formed SA MAD: dropped */
};

/* The node table and the wire, lent by the switch.  The lookups fill *p
 * and return 0, or return -1 when there is no such port. */
struct fsw_sa_ops {
	int (*port_by_lid)(void *ctx, uint16_t lid, struct fsw_sa_port *p);
	int (*port_by_guid)(void *ctx, uint64_t guid, struct fsw_sa_port *p);
	/* the i-th port in the order the ports attached */
	int (*port_at)(void *ctx, unsigned int i, struct fsw_sa_port *p);
	/* Switch a packet from the SM's port (SLID FSW_SA_LID). */
	void (*send)(void *ctx, const uint8_t *pkt, size_t len);
	void (*count)(void *ctx, enum fsw_sa_count what);
};

/*
 * An SM for partitions pc (may be NULL: no partitions), with the
 * well-known groups of pc already made; NULL when out of memory or
 * multicast LIDs.  Calls no op before it returns.
 */
struct fsw_sa *fsw_sa_new(const struct prtn_conf *pc,
			  const struct fsw_sa_ops *ops, void *ctx);
void fsw_sa_free(struct fsw_sa *sa);

/* A UD packet for the SM's QP1, its Q_Key already checked.  proc is the
 * sending process's token (the switch's, opaque here), or NULL when no
 * process sent it (a packet injected as the node): the JoinState bits a
 * process joins for its own port are counted as that process's, and its
 * Delete takes from the port only the bits no other process of the port
 * holds, as a host's multicast layer counts its local joiners. */
void fsw_sa_input(struct fsw_sa *sa, const struct ib_ud *u, const void *proc);

/* Does a group have this MLID (the SM programmed it into the switch)? */
int fsw_sa_mlid_known(const struct fsw_sa *sa, uint16_t mlid);
/* Does the port receive MLID (FullMember or NonMember)? */
int fsw_sa_port_receives(const struct fsw_sa *sa, uint16_t lid,
			 uint16_t mlid);
/* How many groups the port is in, whatever its JoinState. */
unsigned int fsw_sa_port_groups(const struct fsw_sa *sa, uint16_t lid);

/* A port came up (new, or up again): trap 64 (GID in service). */
void fsw_sa_port_up(struct fsw_sa *sa, uint16_t lid);
/* The port left the subnet (down, or its last process went): its
 * memberships and subscriptions go, as OpenSM drops those of a vanished
 * port, and trap 65 (GID out of service) goes to the others. */
void fsw_sa_port_gone(struct fsw_sa *sa, uint16_t lid);
/* One process of the port went (it exited) while others stay: the bits
 * it joined leave, except those another process of the port, or the port
 * itself, still holds; groups left without a full member go as on a
 * Delete.  NULL does nothing. */
void fsw_sa_process_gone(struct fsw_sa *sa, uint16_t lid, const void *proc);
/* The port's P_Key table changed: it leaves the groups whose P_Key it
 * no longer has. */
void fsw_sa_port_pkeys_changed(struct fsw_sa *sa, uint16_t lid);
/* New partitions (a reload; pc replaces the one given before and must
 * live as long as the SA): the well-known groups of partitions that are
 * new are made, and the groups of partitions that are gone deleted, their
 * members losing them; a group the file no longer names but whose
 * partition stays is kept while it has full members.  Returns how many
 * groups were deleted. */
unsigned int fsw_sa_set_partitions(struct fsw_sa *sa,
				   const struct prtn_conf *pc);
/* An SM restart: every membership and subscription is forgotten
 * (well-known groups stay, empty). */
void fsw_sa_forget_all(struct fsw_sa *sa);

/* "groups" (all, or one MGID in arg) and "partitions" tables; returns the
 * bytes written (truncated at cap), 0 for another what. */
size_t fsw_sa_report(struct fsw_sa *sa, const char *what, const char *arg,
		     char *buf, size_t cap);
/* The PathRecord the SA would answer from port slid to port dlid (P_Key
 * optional), as text: 0, or -1 with the reason in buf. */
int fsw_sa_path_text(struct fsw_sa *sa, uint16_t slid, uint16_t dlid,
		     const char *pkey, char *buf, size_t cap);

#endif

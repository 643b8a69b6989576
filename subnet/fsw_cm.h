/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * ibfabricd's connection managers: one CM per port, as each host's kernel
 * runs one (ib_cm), serving every process of the node.  Processes ask
 * through soft_proto.h's FSP_CM_* requests (ibfabricd.c checks their
 * lengths and that the QPN is the process's own RC QP, then calls here);
 * the CMs talk to each other only in CM MADs (fabric/cm_mad.h: REQ, MRA,
 * REJ, REP, RTU, DREQ, DREP) on QP1 through the switch, so that the
 * capture shows them and --loss/--dup/--reorder reach them.
 *
 * As IBTA vol. 1 12.9 and the kernel's ib_cm do it:
 *  - REQ, REP and DREQ are sent again after the response timeout
 *    (FSW_CM_RESP_TIMEOUT: 4.096 us * 2^n) up to FSW_CM_MAX_RETRIES
 *    times; then the active side's process gets UNREACHABLE ETIMEDOUT
 *    (and the peer a REJ reason 4, timeout), the passive one
 *    CONNECT_ERROR ETIMEDOUT (and the peer the same REJ), a DREQ's
 *    sender DISCONNECTED (status ETIMEDOUT);
 *  - a REQ that waits for its process's accept longer than half the
 *    active side's timeout is answered with an MRA, and again for each
 *    duplicate of it; an MRA received stretches the timer by its service
 *    timeout;
 *  - duplicates are recognised by (remote comm ID, remote port): a
 *    duplicate REQ gets the MRA or REP again, a duplicate REP the RTU, a
 *    duplicate DREQ the DREP; nothing is delivered twice;
 *  - a REQ from a (port, QPN) that is part of a live connection under
 *    another comm ID is rejected with reason 10 (stale connection), as
 *    is a REP naming such a QPN;
 *  - REQ for a service ID nobody listens on (at that port): REJ reason 8;
 *    a listener's backlog full: REJ reason 3 (no resources);
 *  - a DREQ is answered with a DREP at once (the process is told
 *    DISCONNECTED and moves its QP to the error state); a connection
 *    then waits FSW_CM_TIMEWAIT_MS in timewait (duplicate DREQs answered)
 *    before TIMEWAIT_EXIT; a process that goes away or destroys the id
 *    of a live connection makes its CM send the DREQ, and pending REQs
 *    of its listeners are rejected (reason 28 without data);
 *  - MADs that are not well formed, name comm IDs that do not exist or
 *    arrive in a state that does not take them are dropped and counted
 *    (a REP/RTU for an unknown comm ID gets a REJ reason 6, invalid
 *    comm ID; a DREQ for one a DREP, as ib_cm's cm_issue_drep answers,
 *    so that its sender stops asking; a DREQ naming another QPN than
 *    the connection's is dropped); they never change a connection they
 *    do not name.
 *
 * A handle lives until fsw_cm_destroy (or owner_gone): after REJECTED,
 * UNREACHABLE, CONNECT_ERROR or TIMEWAIT_EXIT it names nothing on the
 * wire.  A destroyed connection that still needs its DREQ or timewait
 * stays (shown "(gone)" in the report) and tells no one.  A REQ_SENT
 * connection destroyed sends REJ reason 4 with the CA GUID as ARI, as
 * ib_cm's cm_destroy_id does; the passive side finds the REQ it
 * withdraws by the sender's port and comm ID (its remote comm ID is 0
 * when the sender never had a REP) and tells its process REJECTED.
 */
#ifndef IBGW_FSW_CM_H
#define IBGW_FSW_CM_H

#include <stddef.h>
#include <stdint.h>

#include "fabric/fabric.h"
#include "fabric/soft_proto.h"

#define FSW_CM_RESP_TIMEOUT	18	/* 4.096 us * 2^18: 1.07 s */
#define FSW_CM_MAX_RETRIES	8
#define FSW_CM_TIMEWAIT_MS	500
#define FSW_CM_ACK_TIMEOUT	14	/* the path's local ACK timeout:
					 * 4.096 us * 2^14 = 67 ms */
#define FSW_CM_BACKLOG		64	/* backlog 0 means this; it counts the
					 * CONNECT_REQUESTs told and not yet
					 * accepted or rejected */
#define FSW_CM_MRA_TIMEOUT	(FSW_CM_RESP_TIMEOUT + 2) /* an MRA's service
					 * timeout: 4.3 s more */
#define FSW_CM_PACKET_RATE	3	/* REQ path rate: 10 Gb/s, as the
					 * SA's PathRecords say */
/* Bounds: past them a REQ gets REJ reason 3, a connect/listen ENOMEM.
 * Connections in timewait do not count: at 2,000 connections a second a
 * port has 1,000 of them at any time (they hold no QP), and counting
 * them refused new ones.  They are bounded on their own: past
 * FSW_CM_MAX_TIMEWAIT the oldest ends its timewait early, as Linux's TCP
 * drops time-wait sockets past tcp_max_tw_buckets. */
#define FSW_CM_MAX_CONNS	4096
#define FSW_CM_MAX_PORT_CONNS	1024
#define FSW_CM_MAX_LISTENERS	1024
#define FSW_CM_MAX_TIMEWAIT	8192

struct ib_ud;
struct fsw_cm;

/* A port as the CM sees it (the switch's node). */
struct fsw_cm_port {
	uint16_t lid;
	uint64_t port_guid;
	uint64_t node_guid;
	union fab_gid gid;
	uint8_t mtu;		/* active MTU, IB code */
	int up;
};

struct fsw_cm_ops {
	int (*port_by_lid)(void *ctx, uint16_t lid, struct fsw_cm_port *p);
	int (*port_by_gid)(void *ctx, const union fab_gid *gid,
			   struct fsw_cm_port *p);
	/* Switch a CM MAD (MAD_LEN bytes) from port slid's QP1 to port
	 * dlid's QP1 with P_Key pkey: the switch builds the UD packet and
	 * takes it through its pipeline as from that node. */
	void (*send)(void *ctx, uint16_t slid, uint16_t dlid, uint16_t pkey,
		     const uint8_t *mad);
	/* An event for the process owner (as given with its requests). */
	void (*event)(void *ctx, void *owner, const struct fsp_cm_event *ev);
	/* A monotonic clock, milliseconds. */
	uint64_t (*now_ms)(void *ctx);
};

struct fsw_cm_stats {
	uint64_t sent[8];	/* by attribute: index attr_id - 0x10 */
	uint64_t rcvd[8];
	uint64_t retransmits;	/* REQ, REP, DREQ sent again */
	uint64_t timeouts;	/* retries run out */
	uint64_t duplicates;	/* MADs recognised as sent again */
	uint64_t stale;		/* REJ stale connection sent */
	uint64_t bad_mad;	/* cm_mad_parse refused it */
	uint64_t unknown;	/* no such comm ID or listener */
	uint64_t bad_state;	/* a message the connection cannot take now */
	uint64_t bad_pkey;	/* REQs whose P_Key is not the one they came in */
	uint64_t established;
	uint64_t timewait_cut;	/* timewaits ended early (the bound) */
};

struct fsw_cm *fsw_cm_new(const struct fsw_cm_ops *ops, void *ctx);
void fsw_cm_free(struct fsw_cm *cm);

/*
 * Requests of a process (owner) on port lid; each returns 0 or -1 with
 * errno and a reason in err: EINVAL (fields out of range, private data
 * over the message's field), ENOENT (no such handle of this owner),
 * EADDRINUSE (a service ID someone at that port already listens on, or
 * overlapping under the masks), EBUSY (the QPN is in another
 * connection), EHOSTUNREACH (no port with that GID or LID), ENETDOWN
 * (our port is down), EPROTO (the handle is in a state that does not
 * take it: accept twice, disconnect before established).  qp_pkey is the
 * P_Key of the QP being connected (ibfabricd checked the QP is the
 * owner's).
 */
int fsw_cm_listen(struct fsw_cm *cm, uint16_t lid, void *owner,
		  const struct fsp_cm_listen *l, uint32_t *handle, char *err,
		  size_t errlen);
int fsw_cm_connect(struct fsw_cm *cm, uint16_t lid, void *owner,
		   const struct fsp_cm_connect *c, uint16_t qp_pkey,
		   uint32_t *handle, char *err, size_t errlen);
int fsw_cm_accept(struct fsw_cm *cm, void *owner,
		  const struct fsp_cm_accept *a, char *err, size_t errlen);
int fsw_cm_reject(struct fsw_cm *cm, void *owner,
		  const struct fsp_cm_reject *r, char *err, size_t errlen);
int fsw_cm_disconnect(struct fsw_cm *cm, void *owner, uint32_t handle,
		      char *err, size_t errlen);
/* The handle is forgotten; a live connection is torn down (DREQ), a
 * pending REQ rejected, a listener closed.  -1 ENOENT. */
int fsw_cm_destroy(struct fsw_cm *cm, void *owner, uint32_t handle);
/* The process went away: as fsw_cm_destroy on each of its handles. */
void fsw_cm_owner_gone(struct fsw_cm *cm, void *owner);
/* The QP (lid, qpn) was destroyed: its connection, if any, as
 * fsw_cm_destroy. */
void fsw_cm_qp_gone(struct fsw_cm *cm, uint16_t lid, uint32_t qpn);

/* A CM MAD that reached port dlid's QP1 (the switch checked its P_Key
 * against the port and its Q_Key). */
void fsw_cm_input(struct fsw_cm *cm, uint16_t dlid, const struct ib_ud *u);
/* Retransmissions and timewait: run when fsw_cm_next() says. */
void fsw_cm_tick(struct fsw_cm *cm);
/* The now_ms() value at which fsw_cm_tick() must run; UINT64_MAX for
 * none. */
uint64_t fsw_cm_next(const struct fsw_cm *cm);
const struct fsw_cm_stats *fsw_cm_stats(const struct fsw_cm *cm);
/* One line per connection and listener, for ibfabricctl ("cm"). */
size_t fsw_cm_report(const struct fsw_cm *cm, char *buf, size_t cap);

#endif

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The soft provider's objects, shared by its files: prov_soft.c (the
 * device, UD QPs, MAD agents, attaching again) and what is split from it.
 */
#ifndef IBGW_PROV_SOFT_INT_H
#define IBGW_PROV_SOFT_INT_H

#include <stddef.h>
#include <stdint.h>

#include "fabric/fabric_prov.h"
#include "fabric/soft_proto.h"
#include "fabric/soft_ring.h"

#define SOFT_CALL_TIMEOUT_MS	5000
#define SOFT_EVQ		64
#define SOFT_SOCKBUF		(4 << 20)
#define SOFT_BACKOFF_MIN_MS	100
#define SOFT_BACKOFF_MAX_MS	1000

struct soft_qp;
struct soft_mad;
struct soft_mr;
struct soft_cm_id;

/* How long a responder's ACK may wait to acknowledge more requests with
 * it (IBGW_SOFT_ACK_DELAY_US to change, 0: one ACK per batch of input).
 * An HCA's ACK costs the host nothing; here every ACK is a packet through
 * ibfabricd and a wake-up of the requester's process.  An owed ACK also
 * goes with the QP's next request, so request/response traffic does not
 * wait for it; a sender that waits for each one-way message's completion
 * before the next (and sends nothing back) waits up to the delay each
 * time.  Below a round trip (100 us was measured) the delay's timer is
 * armed and fires every round trip and costs more than it saves. */
#define SOFT_ACK_DELAY_US	500
#define SOFT_ACK_DELAY_MAX_US	1000000
/* RC QPs kept for reuse (FSP_QP_RECYCLE) per device; IBGW_SOFT_QP_POOL
 * sets it, 0 turns it off */
#define SOFT_QP_POOL		4
#define SOFT_QP_POOL_MAX	64

/*
 * ibfabricd going away is a port going down, not the end of the device:
 * the sockets are closed, the port reported PORT_ERR, and the device
 * attaches again (FSP_HELLO_REATTACH, its QPs with their numbers back,
 * its MAD agents, its multicast attachments) when ibfabricd is back,
 * then reports PORT_ACTIVE.  So that callers can keep their descriptors
 * on an event loop across that, each device, QP and MAD agent hands out
 * a private epoll descriptor holding its current socket; the device's
 * also holds the timerfd that paces the attempts to attach again.
 */
struct soft_dev {
	struct fab_dev base;
	int fd;			/* the device socket; -1 while down */
	int epfd;		/* fab_dev_fd(): fd and tfd */
	int tfd;		/* reattach timer */
	uint32_t seq;
	int up;			/* attached to ibfabricd */
	int reattaching;	/* events wait in held[] for PORT_ACTIVE */
	unsigned int backoff_ms;
	int rings;		/* ask for FSP_QP_SHM (IBGW_SOFT_RINGS != 0) */
	uint32_t ack_delay_us;	/* RC ACK delay (IBGW_SOFT_ACK_DELAY_US) */
	uint32_t hello_flags;
	char path[108];
	char node[FSP_NODE_MAX];
	struct fab_port_attr attr;
	enum fab_event_type evq[SOFT_EVQ];
	unsigned int evq_head, evq_len;
	enum fab_event_type held[SOFT_EVQ];
	unsigned int nheld;
	struct soft_qp *qps;
	struct soft_qp *pool;	/* destroyed RC QPs, renewed, for reuse */
	unsigned int npool;
	uint32_t pool_max;
	struct soft_mad *mads;
	uint64_t tx_lost;	/* sends dropped while the port was down */
	/* RC and CM (prov_soft_rc.c) */
	struct soft_mr *mrs;
	uint32_t next_key;
	int cm_sock;		/* FSP_CM_OPEN's event socket; -1: none */
	int cm_epfd;		/* fab_cm_fd(); -1 until first asked for */
	int cm_efd;		/* in cm_epfd: events of our own are queued */
	struct fab_cm_event *cm_own;	/* those events */
	unsigned int cm_nown, cm_own_cap;
	uint32_t psn_seed;
	struct soft_cm_id *ids;
};

struct soft_att {
	union fab_gid mgid;
	uint16_t mlid;
};

struct soft_qp {
	struct fab_qp base;
	struct soft_qp *next;
	int fd;			/* the QP socket; -1 while down */
	int epfd;		/* fab_qp_fd() */
	uint16_t flags;		/* as created: FSP_QP_BURST, FSP_QP_SHM */
	struct soft_att *att;	/* multicast attachments, replayed */
	unsigned int natt, att_cap;
	uint16_t pkey;
	uint32_t psn;
	uint8_t *rxbuf;		/* the last burst received */
	size_t rx_len, rx_off;	/* its length; what was taken of it */
	uint8_t *shm;		/* FSP_QP_SHM rings, else NULL */
	struct soft_ring tx, rx;
	int armed;		/* asked ibfabricd for a kick */
	/* RC (prov_soft_rc.c): the transport and its timer in epfd */
	struct soft_rc *rc;
	int tfd;
	uint64_t tdl;		/* when tfd fires (us); UINT64_MAX: disarmed */
	int rc_more;		/* input left in the ring: come back at once */
	int tx_unkicked;	/* packets committed to the TX ring */
};

/* A MAD agent: ibfabricd gives it its own socket; packets on it leave
 * from the node's QP1, and responses whose TID carries the agent number
 * in its high half come back on it. */
struct soft_mad {
	struct fab_mad_agent base;
	struct soft_mad *next;
	int fd;			/* -1 while down */
	int epfd;		/* fab_mad_fd() */
	uint32_t agent;
	uint32_t psn;
};

static inline struct soft_dev *to_sdev(struct fab_dev *d)
{
	return (struct soft_dev *)d;
}

static inline struct soft_qp *to_sqp(struct fab_qp *q)
{
	return (struct soft_qp *)q;
}

/* prov_soft.c for prov_soft_rc.c */
ssize_t soft_call(struct soft_dev *d, uint16_t type, const void *req,
		  size_t reqlen, void *rep, size_t repcap, int *fds,
		  char *err, size_t errlen);
struct fab_qp *soft_qp_create(struct fab_dev *dev,
			      const struct fab_qp_init *init, char *err,
			      size_t errlen);
void soft_qp_destroy(struct fab_qp *qp);
void soft_lost(struct soft_dev *d);
/* Read the kicks off a ring QP's socket if we asked for one (q->armed);
 * -1 when that shows ibfabricd gone (soft_lost called). */
int soft_qp_take_kicks(struct soft_qp *q);
/* The next packet from a QP socket's bursts: 1 (*pkt, *len), 0 none
 * waiting, -1 error, -2 end of file. */
int soft_burst_next(struct soft_qp *q, const uint8_t **pkt, size_t *len);

/* prov_soft_rc.c: memory regions, RC QPs and the CM */
struct fab_mr *soft_mr_reg(struct fab_dev *dev, void *addr, size_t len,
			   unsigned int access, char *err, size_t errlen);
void soft_mr_dereg(struct fab_mr *mr);
int soft_qp_post_send(struct fab_qp *qp, const struct fab_rc_wr *wr, int n);
int soft_qp_post_recv(struct fab_qp *qp, const struct fab_recv_wr *wr, int n);
int soft_qp_poll(struct fab_qp *qp, struct fab_wc *wc, int n);
int soft_qp_set_error(struct fab_qp *qp);
int soft_cm_fd(struct fab_dev *dev);
int soft_cm_get_event(struct fab_dev *dev, struct fab_cm_event *ev);
struct fab_cm_id *soft_cm_listen(struct fab_dev *dev,
				 const struct fab_cm_addr *addr, int backlog,
				 char *err, size_t errlen);
struct fab_cm_id *soft_cm_create_id(struct fab_dev *dev, char *err,
				    size_t errlen);
struct fab_qp *soft_cm_qp_create(struct fab_cm_id *id,
				 const struct fab_qp_init *init, char *err,
				 size_t errlen);
int soft_cm_connect(struct fab_cm_id *id, const struct fab_cm_addr *dst,
		    const struct fab_cm_param *param, char *err,
		    size_t errlen);
int soft_cm_accept(struct fab_cm_id *id, const struct fab_cm_param *param,
		   char *err, size_t errlen);
int soft_cm_reject(struct fab_cm_id *id, const void *private_data,
		   uint8_t len, char *err, size_t errlen);
int soft_cm_disconnect(struct fab_cm_id *id, char *err, size_t errlen);
void soft_cm_destroy(struct fab_cm_id *id);
/* an RC QP's part of soft_qp_destroy; the device's of soft_close; the
 * CM's part of losing ibfabricd */
void soft_rc_qp_free(struct soft_qp *q);
void soft_rc_qp_park(struct soft_qp *q);
void soft_cm_reattach(struct soft_dev *d);
void soft_rc_dev_free(struct soft_dev *d);
void soft_cm_lost(struct soft_dev *d);

#endif

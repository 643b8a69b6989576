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
	uint32_t hello_flags;
	char path[108];
	char node[FSP_NODE_MAX];
	struct fab_port_attr attr;
	enum fab_event_type evq[SOFT_EVQ];
	unsigned int evq_head, evq_len;
	enum fab_event_type held[SOFT_EVQ];
	unsigned int nheld;
	struct soft_qp *qps;
	struct soft_mad *mads;
	uint64_t tx_lost;	/* sends dropped while the port was down */
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

static struct soft_dev *to_sdev(struct fab_dev *d)
{
	return (struct soft_dev *)d;
}

static struct soft_qp *to_sqp(struct fab_qp *q)
{
	return (struct soft_qp *)q;
}

#endif

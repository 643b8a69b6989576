/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Extras of the soft provider that only tools use (ibfabricctl). */
#ifndef IBGW_PROV_SOFT_H
#define IBGW_PROV_SOFT_H

#include <stddef.h>

#include "fabric/fabric.h"

/* Open with node "-" to attach as an observer holding no port. */
#define FAB_SOFT_OBSERVER "-"

/* Switch a raw packet as if this node had sent it (pcap replay).  Both
 * fail as fabric.h's set-up calls do; EOPNOTSUPP on another provider. */
int fab_soft_inject(struct fab_dev *dev, const void *pkt, size_t len,
		    char *err, size_t errlen);
/* Run a text command in ibfabricd ("stats", "nodes" ...). */
int fab_soft_ctl(struct fab_dev *dev, const char *cmd, char *out, size_t cap,
		 char *err, size_t errlen);
/* A QP's shared rings (FSP_SHM_BYTES, layout in soft_ring.h), or NULL when
 * it has none; for tests that write garbage into them. */
void *fab_soft_qp_rings(struct fab_qp *qp);
/* The QP's socket to ibfabricd (fab_qp_fd() is an epoll descriptor that
 * wraps it), -1 while the port is down; for tests that write to it. */
int fab_soft_qp_sock(struct fab_qp *qp);

/* An RC QP's transport counters (fabric/soft_rc.h) as one line of
 * "name value" pairs; the length, or -1 with errno EOPNOTSUPP (another
 * provider) or EINVAL (not an RC QP). */
int fab_soft_qp_rc_counters(struct fab_qp *qp, char *buf, size_t cap);

#endif

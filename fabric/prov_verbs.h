/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Inside the verbs provider: the device it shares between prov_verbs.c
 * (ports, UD QPs, address handles) and prov_verbs_cm.c (memory regions,
 * RC QPs on rdma_cm ids, connection management).
 */
#ifndef IBGW_FABRIC_PROV_VERBS_H
#define IBGW_FABRIC_PROV_VERBS_H

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "fabric/fabric_prov.h"

/* How the source GID is picked (the spec's third field, see above). */
enum pv_gid_sel {
	PV_GID_DEFAULT,
	PV_GID_INDEX,
	PV_GID_IPV4,
	PV_GID_IPV6,
};

struct pv_dev {
	struct fab_dev base;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	uint8_t port;
	uint8_t phys_ports;
	uint64_t node_guid;	/* host order, read once: it never changes */
	enum fab_link_layer link_layer;
	char name[IBV_SYSFS_NAME_MAX];

	enum pv_gid_sel gid_sel;
	uint32_t gid_want;	/* PV_GID_INDEX */
	/* the pick, as of the last pv_pick_gid */
	uint8_t sgid_index;
	enum fab_gid_type sgid_type;
	union fab_gid sgid;
	uint32_t sgid_ifindex;	/* RoCE: the GID's netdev (0: none) */

	int ctx_cm;		/* ctx is librdmacm's: not ours to close */
	struct rdma_event_channel *cm_ch;	/* on first CM use */
};

static inline struct pv_dev *pv_dev_of(struct fab_dev *dev)
{
	return (struct pv_dev *)dev;
}

int pv_fail(char *err, size_t errlen, const char *call, int ret);
int pv_fail_null(char *err, size_t errlen, const char *call);
int pv_set_nonblock(int fd);

/* prov_verbs_cm.c */
void pv_cm_close(struct pv_dev *dev);
void pv_rc_qp_destroy(struct fab_qp *qp);
int pv_rc_qp_fd(struct fab_qp *qp);
struct fab_mr *pv_mr_reg(struct fab_dev *dev, void *addr, size_t len,
			 unsigned int access, char *err, size_t errlen);
void pv_mr_dereg(struct fab_mr *mr);
int pv_rc_post_send(struct fab_qp *qp, const struct fab_rc_wr *wr, int n);
int pv_rc_post_recv(struct fab_qp *qp, const struct fab_recv_wr *wr, int n);
int pv_rc_poll(struct fab_qp *qp, struct fab_wc *wc, int n);
int pv_rc_set_error(struct fab_qp *qp);
int pv_cm_fd(struct fab_dev *dev);
int pv_cm_get_event(struct fab_dev *dev, struct fab_cm_event *ev);
struct fab_cm_id *pv_cm_listen(struct fab_dev *dev,
			       const struct fab_cm_addr *addr, int backlog,
			       char *err, size_t errlen);
struct fab_cm_id *pv_cm_create_id(struct fab_dev *dev, char *err,
				  size_t errlen);
struct fab_qp *pv_cm_qp_create(struct fab_cm_id *id,
			       const struct fab_qp_init *init, char *err,
			       size_t errlen);
int pv_cm_connect(struct fab_cm_id *id, const struct fab_cm_addr *dst,
		  const struct fab_cm_param *param, char *err, size_t errlen);
int pv_cm_accept(struct fab_cm_id *id, const struct fab_cm_param *param,
		 char *err, size_t errlen);
int pv_cm_reject(struct fab_cm_id *id, const void *private_data,
		 uint8_t len, char *err, size_t errlen);
int pv_cm_disconnect(struct fab_cm_id *id, char *err, size_t errlen);
void pv_cm_destroy(struct fab_cm_id *id);

#endif

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The verbs provider: "verbs:DEVICE[:PORT]", real InfiniBand hardware
 * through rdma-core's libibverbs.
 *
 * THIS PROVIDER HAS NEVER BEEN RUN ON HARDWARE.  It was written against the
 * rdma-core headers (libibverbs 1.14 / rdma-core 44) and only compiled and
 * reviewed; no test exercises it, because the machines that build ibgw have
 * no HCA.  Treat every path here as untested until it has run on a real port.
 *
 * It is deliberately thin: it maps the fabric interface onto verbs objects
 * one to one (device context + PD per fab_dev; completion channel, CQs, QP
 * and one registered buffer per fab_qp; ibv_ah per fab_ah) and holds no
 * policy.  Everything that can be tested without hardware lives above it.
 *
 * What it owns:
 *   - a receive ring of max_recv slots, each (FAB_GRH_LEN + port max MTU)
 *     bytes, all posted at QP creation and reposted as soon as a completion
 *     has been copied out;
 *   - a send ring of max_send slots of port-MTU bytes.  The caller's data is
 *     copied into a slot (or sent inline when small enough), so the
 *     caller never has to register memory or keep buffers alive until
 *     completion.  The copy costs one memcpy per datagram; a zero-copy
 *     variant would need registered buffers in the fabric interface.
 *
 * Not thread-safe: one event loop owns a fab_dev and its QPs, as everywhere
 * in ibgw.  Objects must be destroyed before the fab_dev they came from.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "fabric/fabric_prov.h"
#include "fabric/prov_umad.h"

#define PV_DEFAULT_SEND		256
#define PV_DEFAULT_RECV		512
#define PV_WANT_INLINE		64	/* asked for; may get more */
#define PV_BATCH		32	/* CQEs / WRs per verbs call */

struct pv_dev {
	struct fab_dev base;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	uint8_t port;
	uint64_t node_guid;	/* host order, read once: it never changes */
};

struct pv_qp {
	struct fab_qp base;
	struct pv_dev *dev;
	struct ibv_comp_channel *channel;
	struct ibv_cq *send_cq;
	struct ibv_cq *recv_cq;	/* the only CQ on the channel */
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;		/* recv ring, then send ring; one MR */
	size_t buf_len;

	uint32_t nrecv;
	uint32_t recv_slot;	/* bytes per receive slot, GRH included */
	uint32_t recv_posted;

	uint32_t nsend;
	uint32_t send_slot;	/* bytes per send slot = largest payload */
	uint32_t max_inline;
	/* Send slots are used and completed in order (UD, all signaled):
	 * the send_inflight slots before send_next are in the HCA. */
	uint32_t send_next;
	uint32_t send_inflight;

	/* Not exported yet (see the report on fabric.h). */
	uint64_t recv_errors;
	uint64_t send_errors;
};

struct pv_ah {
	struct fab_ah base;
	struct ibv_ah *ah;
};

static struct pv_dev *pv_dev_of(struct fab_dev *dev)
{
	return (struct pv_dev *)dev;
}

static struct pv_qp *pv_qp_of(struct fab_qp *qp)
{
	return (struct pv_qp *)qp;
}

/*
 * rdma-core is not uniform about failures: most verbs return a positive
 * errno value, the sysfs readers (ibv_query_gid, ibv_query_pkey) and the
 * event readers return -1 with errno set, and a few providers return
 * -errno.  Accept all three.
 */
static int pv_fail(char *err, size_t errlen, const char *call, int ret)
{
	int e;

	if (ret > 0)
		e = ret;
	else if (ret < -1)
		e = -ret;
	else
		e = errno ? errno : EIO;
	return fab_fail(err, errlen, e, "verbs: %s: %s", call, strerror(e));
}

/* For calls that return NULL with errno set. */
static int pv_fail_null(char *err, size_t errlen, const char *call)
{
	return pv_fail(err, errlen, call, -1);
}

static int pv_set_nonblock(int fd)
{
	int flags = fcntl(fd, F_GETFL);

	if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
		return -1;
	return 0;
}

static enum fab_port_state pv_port_state(enum ibv_port_state st)
{
	switch (st) {
	case IBV_PORT_INIT:
		return FAB_PORT_INIT;
	case IBV_PORT_ARMED:
		return FAB_PORT_ARMED;
	case IBV_PORT_ACTIVE:
		return FAB_PORT_ACTIVE;
	case IBV_PORT_ACTIVE_DEFER:
		/* Link up but not forwarding data: not usable yet. */
		return FAB_PORT_ARMED;
	default:
		return FAB_PORT_DOWN;
	}
}

/* ---- device ------------------------------------------------------------- */

static int pv_query_port(struct fab_dev *base, struct fab_port_attr *attr,
			 char *err, size_t errlen)
{
	struct pv_dev *dev = pv_dev_of(base);
	struct ibv_port_attr pa;
	union ibv_gid gid;
	unsigned int i, n;
	int ret;

	ret = ibv_query_port(dev->ctx, dev->port, &pa);
	if (ret)
		return pv_fail(err, errlen, "ibv_query_port", ret);
	ret = ibv_query_gid(dev->ctx, dev->port, 0, &gid);
	if (ret)
		return pv_fail(err, errlen, "ibv_query_gid", ret);

	memset(attr, 0, sizeof(*attr));
	attr->state = pv_port_state(pa.state);
	attr->lid = pa.lid;
	attr->sm_lid = pa.sm_lid;
	attr->lmc = pa.lmc;
	attr->sm_sl = pa.sm_sl;
	attr->active_mtu = (uint8_t)pa.active_mtu;	/* same codes 1..5 */
	attr->port_num = dev->port;
	attr->node_guid = dev->node_guid;
	memcpy(attr->gid.raw, gid.raw, sizeof(attr->gid.raw));
	attr->port_guid = be64toh(gid.global.interface_id);

	/*
	 * Entries keep their hardware index, because a P_Key's position in
	 * this table is the pkey_index a QP is created with.  Invalid keys
	 * (0x0000, 0x8000) become empty slots, and npkeys stops after the
	 * last valid one.  Keys at index >= FAB_MAX_PKEYS are not visible.
	 */
	n = pa.pkey_tbl_len;
	if (n > FAB_MAX_PKEYS)
		n = FAB_MAX_PKEYS;
	for (i = 0; i < n; i++) {
		__be16 pkey;
		uint16_t host;

		ret = ibv_query_pkey(dev->ctx, dev->port, (int)i, &pkey);
		if (ret)
			return pv_fail(err, errlen, "ibv_query_pkey", ret);
		host = be16toh(pkey);
		if ((host & 0x7fff) == 0)
			continue;
		attr->pkeys[i] = host;
		attr->npkeys = i + 1;
	}
	return 0;
}

static void pv_close(struct fab_dev *base)
{
	struct pv_dev *dev = pv_dev_of(base);

	if (!dev)
		return;
	if (dev->pd)
		ibv_dealloc_pd(dev->pd);	/* EBUSY if QPs/AHs leaked */
	if (dev->ctx)
		ibv_close_device(dev->ctx);
	free(dev);
}

static struct ibv_context *pv_open_by_name(const char *name, char *err,
					   size_t errlen)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	int i, num = 0;

	list = ibv_get_device_list(&num);
	if (!list) {
		pv_fail_null(err, errlen, "ibv_get_device_list");
		return NULL;
	}
	for (i = 0; i < num; i++) {
		if (strcmp(ibv_get_device_name(list[i]), name) == 0)
			break;
	}
	if (i == num)
		fab_fail(err, errlen, ENODEV, "verbs: no RDMA device \"%s\" "
			 "(%d found)", name, num);
	else if (!(ctx = ibv_open_device(list[i])))
		pv_fail_null(err, errlen, "ibv_open_device");
	/* The context stays valid after the list is freed. */
	ibv_free_device_list(list);
	return ctx;
}

static struct fab_dev *pv_open(const char *arg, const char *node, char *err,
			       size_t errlen)
{
	char name[IBV_SYSFS_NAME_MAX];
	struct ibv_device_attr da;
	struct ibv_port_attr pa;
	struct fab_port_attr check;
	struct pv_dev *dev;
	uint8_t port;
	int ret, e;

	(void)node;	/* a real HCA has its own identity */
	if (fab_parse_dev_port("verbs", arg, name, sizeof(name), &port, err,
			       errlen) < 0)
		return NULL;

	dev = calloc(1, sizeof(*dev));
	if (!dev) {
		fab_fail(err, errlen, ENOMEM, "verbs: %s", strerror(ENOMEM));
		return NULL;
	}
	dev->base.prov = &fab_verbs_provider;
	dev->port = port;

	dev->ctx = pv_open_by_name(name, err, errlen);
	if (!dev->ctx)
		goto fail;

	ret = ibv_query_port(dev->ctx, port, &pa);
	if (ret) {
		pv_fail(err, errlen, "ibv_query_port", ret);
		goto fail;
	}
	/* Old kernels report UNSPECIFIED for InfiniBand ports. */
	if (pa.link_layer != IBV_LINK_LAYER_INFINIBAND &&
	    pa.link_layer != IBV_LINK_LAYER_UNSPECIFIED) {
		fab_fail(err, errlen, EOPNOTSUPP, "verbs: %s port %u is not "
			 "InfiniBand (RoCE/iWARP are not supported)", name,
			 port);
		goto fail;
	}

	ret = ibv_query_device(dev->ctx, &da);
	if (ret) {
		pv_fail(err, errlen, "ibv_query_device", ret);
		goto fail;
	}
	dev->node_guid = be64toh(da.node_guid);

	dev->pd = ibv_alloc_pd(dev->ctx);
	if (!dev->pd) {
		pv_fail_null(err, errlen, "ibv_alloc_pd");
		goto fail;
	}

	if (pv_set_nonblock(dev->ctx->async_fd) < 0) {
		pv_fail_null(err, errlen, "async_fd O_NONBLOCK");
		goto fail;
	}

	/* Fail now, not at first use, if GID or P_Key table cannot be read. */
	if (pv_query_port(&dev->base, &check, err, errlen) < 0)
		goto fail;

	return &dev->base;
fail:
	e = errno;
	pv_close(&dev->base);
	errno = e;
	return NULL;
}

static int pv_dev_fd(struct fab_dev *base)
{
	return pv_dev_of(base)->ctx->async_fd;
}

/* 0 when the event is not ours to report. */
static int pv_event_type(const struct pv_dev *dev,
			 const struct ibv_async_event *ae,
			 enum fab_event_type *type)
{
	switch (ae->event_type) {
	case IBV_EVENT_DEVICE_FATAL:
		*type = FAB_EV_DEVICE_FATAL;	/* device-wide */
		return 1;
	case IBV_EVENT_PORT_ACTIVE:
		*type = FAB_EV_PORT_ACTIVE;
		break;
	case IBV_EVENT_PORT_ERR:
		*type = FAB_EV_PORT_ERR;
		break;
	case IBV_EVENT_LID_CHANGE:
		*type = FAB_EV_LID_CHANGE;
		break;
	case IBV_EVENT_PKEY_CHANGE:
		*type = FAB_EV_PKEY_CHANGE;
		break;
	case IBV_EVENT_SM_CHANGE:
		*type = FAB_EV_SM_CHANGE;
		break;
	case IBV_EVENT_CLIENT_REREGISTER:
		*type = FAB_EV_CLIENT_REREGISTER;
		break;
	case IBV_EVENT_GID_CHANGE:
		*type = FAB_EV_GID_CHANGE;
		break;
	default:
		/* QP/CQ/SRQ-affiliated events: no fab_event for them yet. */
		return 0;
	}
	return ae->element.port_num == dev->port;
}

static int pv_get_event(struct fab_dev *base, struct fab_event *ev)
{
	struct pv_dev *dev = pv_dev_of(base);
	struct ibv_async_event ae;
	enum fab_event_type type;

	for (;;) {
		int ours;

		if (ibv_get_async_event(dev->ctx, &ae) < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			return pv_fail_null(NULL, 0, "ibv_get_async_event");
		}
		ours = pv_event_type(dev, &ae, &type);
		/* Every get must be acked, or destroying the object hangs. */
		ibv_ack_async_event(&ae);
		if (ours) {
			ev->type = type;
			return 1;
		}
	}
}

/* ---- queue pairs -------------------------------------------------------- */

static uint8_t *pv_recv_addr(const struct pv_qp *qp, uint32_t slot)
{
	return qp->buf + (size_t)slot * qp->recv_slot;
}

static uint8_t *pv_send_addr(const struct pv_qp *qp, uint32_t slot)
{
	return qp->buf + (size_t)qp->nrecv * qp->recv_slot +
	       (size_t)slot * qp->send_slot;
}

static void pv_recv_wr(struct pv_qp *qp, uint32_t slot,
		       struct ibv_recv_wr *wr, struct ibv_sge *sge)
{
	const uint8_t *addr = pv_recv_addr(qp, slot);

	sge->addr = (uintptr_t)addr;
	sge->length = qp->recv_slot;
	sge->lkey = qp->mr->lkey;
	memset(wr, 0, sizeof(*wr));
	wr->wr_id = slot;
	wr->sg_list = sge;
	wr->num_sge = 1;
}

/* Post the slots in wrs[0..n) as one chain. */
static int pv_post_recv_chain(struct pv_qp *qp, struct ibv_recv_wr *wrs,
			      unsigned int n, char *err, size_t errlen)
{
	struct ibv_recv_wr *bad = NULL;
	unsigned int i;
	int ret;

	if (n == 0)
		return 0;
	for (i = 0; i + 1 < n; i++)
		wrs[i].next = &wrs[i + 1];
	wrs[n - 1].next = NULL;
	ret = ibv_post_recv(qp->qp, wrs, &bad);
	if (ret) {
		/* Everything before bad went in. */
		qp->recv_posted += bad ? (uint32_t)(bad - wrs) : 0;
		return pv_fail(err, errlen, "ibv_post_recv", ret);
	}
	qp->recv_posted += n;
	return 0;
}

static int pv_post_all_recv(struct pv_qp *qp, char *err, size_t errlen)
{
	struct ibv_recv_wr wrs[PV_BATCH];
	struct ibv_sge sges[PV_BATCH];
	uint32_t slot = 0;

	while (slot < qp->nrecv) {
		unsigned int n = 0;

		while (n < PV_BATCH && slot < qp->nrecv) {
			pv_recv_wr(qp, slot++, &wrs[n], &sges[n]);
			n++;
		}
		if (pv_post_recv_chain(qp, wrs, n, err, errlen) < 0)
			return -1;
	}
	return 0;
}

static int pv_modify(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask,
		     const char *what, char *err, size_t errlen)
{
	int ret = ibv_modify_qp(qp, a, mask);

	if (ret)
		return pv_fail(err, errlen, what, ret);
	return 0;
}

static int pv_qp_to_rts(struct pv_qp *qp, const struct fab_qp_init *init,
			char *err, size_t errlen)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.pkey_index = init->pkey_index;
	a.port_num = qp->dev->port;
	a.qkey = init->qkey;
	if (pv_modify(qp->qp, &a,
		      IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
		      IBV_QP_QKEY, "ibv_modify_qp INIT", err, errlen) < 0)
		return -1;

	/* Receives go in before RTR so that nothing arriving is dropped. */
	if (pv_post_all_recv(qp, err, errlen) < 0)
		return -1;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	if (pv_modify(qp->qp, &a, IBV_QP_STATE, "ibv_modify_qp RTR", err,
		      errlen) < 0)
		return -1;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0;	/* UD: no PSN checking at the receiver */
	return pv_modify(qp->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN,
			 "ibv_modify_qp RTS", err, errlen);
}

static void pv_qp_destroy(struct fab_qp *base)
{
	struct pv_qp *qp = pv_qp_of(base);

	if (!qp)
		return;
	/* Reverse order of creation; CQ events are acked as they are read,
	 * so ibv_destroy_cq does not wait. */
	if (qp->qp)
		ibv_destroy_qp(qp->qp);
	if (qp->send_cq)
		ibv_destroy_cq(qp->send_cq);
	if (qp->recv_cq)
		ibv_destroy_cq(qp->recv_cq);
	if (qp->channel)
		ibv_destroy_comp_channel(qp->channel);
	if (qp->mr)
		ibv_dereg_mr(qp->mr);
	free(qp->buf);
	free(qp);
}

static int pv_qp_buffers(struct pv_qp *qp, const struct ibv_port_attr *pa,
			 char *err, size_t errlen)
{
	int active = fab_mtu_to_bytes((uint8_t)pa->active_mtu);
	int max = fab_mtu_to_bytes((uint8_t)pa->max_mtu);
	long page = sysconf(_SC_PAGESIZE);
	void *mem;

	if (active <= 0 || max <= 0)
		return fab_fail(err, errlen, EIO, "verbs: port reports "
				"unknown MTU %d/%d", (int)pa->active_mtu,
				(int)pa->max_mtu);
	/*
	 * Receive slots take the port's max MTU, not the active one, so a
	 * link that retrains to a larger MTU cannot deliver a datagram
	 * bigger than a posted buffer.  Sends are limited to the MTU that
	 * was active at creation, which the HCA will certainly accept.
	 */
	qp->recv_slot = FAB_GRH_LEN + (uint32_t)max;
	qp->send_slot = (uint32_t)active;
	qp->buf_len = (size_t)qp->nrecv * qp->recv_slot +
		      (size_t)qp->nsend * qp->send_slot;

	if (page <= 0)
		page = 4096;
	if (posix_memalign(&mem, (size_t)page, qp->buf_len))
		return fab_fail(err, errlen, ENOMEM, "verbs: cannot allocate "
				"%zu bytes", qp->buf_len);
	qp->buf = mem;
	memset(qp->buf, 0, qp->buf_len);

	qp->mr = ibv_reg_mr(qp->dev->pd, qp->buf, qp->buf_len,
			    IBV_ACCESS_LOCAL_WRITE);
	if (!qp->mr)
		return pv_fail_null(err, errlen, "ibv_reg_mr");
	return 0;
}

static int pv_qp_queues(struct pv_qp *qp, char *err, size_t errlen)
{
	struct ibv_context *ctx = qp->dev->ctx;
	struct ibv_qp_init_attr ia;
	int ret;

	qp->channel = ibv_create_comp_channel(ctx);
	if (!qp->channel)
		return pv_fail_null(err, errlen, "ibv_create_comp_channel");
	if (pv_set_nonblock(qp->channel->fd) < 0)
		return pv_fail_null(err, errlen, "completion channel O_NONBLOCK");

	/*
	 * Only receive completions wake the caller.  Send completions are
	 * reaped by fab_qp_send itself before it posts, so the send CQ has
	 * no channel.  Each CQ holds one entry per work request in flight.
	 */
	qp->recv_cq = ibv_create_cq(ctx, (int)qp->nrecv, qp, qp->channel, 0);
	if (!qp->recv_cq)
		return pv_fail_null(err, errlen, "ibv_create_cq (recv)");
	qp->send_cq = ibv_create_cq(ctx, (int)qp->nsend, qp, NULL, 0);
	if (!qp->send_cq)
		return pv_fail_null(err, errlen, "ibv_create_cq (send)");

	memset(&ia, 0, sizeof(ia));
	ia.qp_context = qp;
	ia.send_cq = qp->send_cq;
	ia.recv_cq = qp->recv_cq;
	ia.qp_type = IBV_QPT_UD;
	ia.sq_sig_all = 1;	/* every send frees its slot by a completion */
	ia.cap.max_send_wr = qp->nsend;
	ia.cap.max_recv_wr = qp->nrecv;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	ia.cap.max_inline_data = PV_WANT_INLINE;
	qp->qp = ibv_create_qp(qp->dev->pd, &ia);
	if (!qp->qp && errno == EINVAL) {
		/* Some devices have no inline send on UD. */
		ia.cap.max_inline_data = 0;
		qp->qp = ibv_create_qp(qp->dev->pd, &ia);
	}
	if (!qp->qp)
		return pv_fail_null(err, errlen, "ibv_create_qp");
	/* ibv_create_qp writes back what the device actually gave. */
	qp->max_inline = ia.cap.max_inline_data;

	ret = ibv_req_notify_cq(qp->recv_cq, 0);
	if (ret)
		return pv_fail(err, errlen, "ibv_req_notify_cq", ret);
	return 0;
}

static struct fab_qp *pv_qp_create(struct fab_dev *base,
				   const struct fab_qp_init *init, char *err,
				   size_t errlen)
{
	struct pv_dev *dev = pv_dev_of(base);
	struct ibv_port_attr pa;
	struct pv_qp *qp;
	int ret, e;

	if (init->type != FAB_QPT_UD) {
		fab_fail(err, errlen, EINVAL,
			 "verbs: only UD queue pairs are supported");
		return NULL;
	}
	ret = ibv_query_port(dev->ctx, dev->port, &pa);
	if (ret) {
		pv_fail(err, errlen, "ibv_query_port", ret);
		return NULL;
	}

	qp = calloc(1, sizeof(*qp));
	if (!qp) {
		fab_fail(err, errlen, ENOMEM, "verbs: %s", strerror(ENOMEM));
		return NULL;
	}
	qp->dev = dev;
	qp->nsend = init->max_send ? init->max_send : PV_DEFAULT_SEND;
	qp->nrecv = init->max_recv ? init->max_recv : PV_DEFAULT_RECV;
	if (qp->nsend > INT32_MAX || qp->nrecv > INT32_MAX) {
		fab_fail(err, errlen, EINVAL, "verbs: queue depth too large");
		goto fail;
	}

	if (pv_qp_buffers(qp, &pa, err, errlen) < 0 ||
	    pv_qp_queues(qp, err, errlen) < 0 ||
	    pv_qp_to_rts(qp, init, err, errlen) < 0)
		goto fail;

	qp->base.dev = base;
	qp->base.qpn = qp->qp->qp_num;
	qp->base.type = init->type;
	qp->base.qkey = init->qkey;
	qp->base.pkey_index = init->pkey_index;
	return &qp->base;
fail:
	e = errno;
	pv_qp_destroy(&qp->base);
	errno = e;
	return NULL;
}

static int pv_qp_fd(struct fab_qp *base)
{
	return pv_qp_of(base)->channel->fd;
}

/* Collect send completions so their slots can be reused. */
static int pv_send_reap(struct pv_qp *qp)
{
	struct ibv_wc wc[PV_BATCH];
	int got, i;

	do {
		got = ibv_poll_cq(qp->send_cq, PV_BATCH, wc);
		if (got < 0)
			return pv_fail(NULL, 0, "ibv_poll_cq (send)", got);
		for (i = 0; i < got; i++) {
			if (wc[i].status != IBV_WC_SUCCESS)
				qp->send_errors++;
			if (qp->send_inflight)
				qp->send_inflight--;
		}
	} while (got == PV_BATCH);
	return 0;
}

/* 0 if w can be posted on qp, else -1 with errno: EMSGSIZE for more than
 * the port MTU, EINVAL without an address handle of this device or from
 * NULL. */
static int pv_send_check(const struct pv_qp *qp, const struct fab_send_wr *w)
{
	if (!w->ah || w->ah->dev != qp->base.dev || (!w->buf && w->len)) {
		errno = EINVAL;
		return -1;
	}
	if (w->len > qp->send_slot) {
		errno = EMSGSIZE;
		return -1;
	}
	return 0;
}

static void pv_send_wr(struct pv_qp *qp, const struct fab_send_wr *w,
		       uint32_t slot, struct ibv_send_wr *s,
		       struct ibv_sge *sge)
{
	memset(s, 0, sizeof(*s));
	s->wr_id = slot;
	s->opcode = IBV_WR_SEND;
	s->send_flags = IBV_SEND_SIGNALED;
	s->sg_list = sge;
	s->num_sge = 1;
	s->wr.ud.ah = ((const struct pv_ah *)w->ah)->ah;
	s->wr.ud.remote_qpn = w->remote_qpn;
	s->wr.ud.remote_qkey = w->remote_qkey;
	sge->length = w->len;
	sge->lkey = qp->mr->lkey;
	if (w->len <= qp->max_inline) {
		/* The HCA copies inline data at post time. */
		s->send_flags |= IBV_SEND_INLINE;
		sge->addr = (uintptr_t)w->buf;
	} else {
		uint8_t *dst = pv_send_addr(qp, slot);

		if (w->len)
			memcpy(dst, w->buf, w->len);
		sge->addr = (uintptr_t)dst;
	}
}

static int pv_qp_send(struct fab_qp *base, const struct fab_send_wr *wr,
		      int n)
{
	struct pv_qp *qp = pv_qp_of(base);
	struct ibv_send_wr wrs[PV_BATCH], *bad;
	struct ibv_sge sges[PV_BATCH];
	int done = 0;

	if (n <= 0)
		return 0;
	if (pv_send_reap(qp) < 0)
		return -1;

	while (done < n) {
		uint32_t slot = qp->send_next;
		int k = 0, i, ret;

		while (done + k < n && k < PV_BATCH &&
		       qp->send_inflight + (uint32_t)k < qp->nsend) {
			if (pv_send_check(qp, &wr[done + k]) < 0) {
				if (done + k == 0)
					return -1;
				break;	/* reported on the next call */
			}
			pv_send_wr(qp, &wr[done + k], slot, &wrs[k],
				   &sges[k]);
			slot = (slot + 1) % qp->nsend;
			k++;
		}
		if (k == 0)
			break;	/* ring full, or a bad request after good */
		for (i = 0; i + 1 < k; i++)
			wrs[i].next = &wrs[i + 1];
		wrs[k - 1].next = NULL;

		bad = NULL;
		ret = ibv_post_send(qp->qp, wrs, &bad);
		if (ret)
			k = bad ? (int)(bad - wrs) : 0;
		qp->send_next = (qp->send_next + (uint32_t)k) % qp->nsend;
		qp->send_inflight += (uint32_t)k;
		done += k;
		if (ret) {
			if (done == 0)
				return pv_fail(NULL, 0, "ibv_post_send", ret);
			break;
		}
	}
	return done;
}

static void pv_fill_recv(const struct pv_qp *qp, const struct ibv_wc *wc,
			 struct fab_recv *rc)
{
	const uint8_t *src = pv_recv_addr(qp, (uint32_t)wc->wr_id);
	uint32_t len = wc->byte_len;
	uint32_t copy = len < rc->buf_len ? len : rc->buf_len;

	if (copy)
		memcpy(rc->buf, src, copy);
	rc->grh_present = (wc->wc_flags & IBV_WC_GRH) != 0;
	if (!rc->grh_present && copy) {
		/* The slot holds an older datagram's GRH: do not pass it on. */
		memset(rc->buf, 0, copy < FAB_GRH_LEN ? copy : FAB_GRH_LEN);
	}
	rc->byte_len = len;
	rc->truncated = len > rc->buf_len;
	rc->src_qp = wc->src_qp;
	rc->slid = wc->slid;
	rc->pkey_index = wc->pkey_index;
	rc->sl = wc->sl;
}

/* Fill up to n from the receive CQ until it is empty; 0..n or -1. */
static int pv_recv_poll(struct pv_qp *qp, struct fab_recv *rc, int n)
{
	struct ibv_wc wc[PV_BATCH];
	struct ibv_recv_wr wrs[PV_BATCH];
	struct ibv_sge sges[PV_BATCH];
	int filled = 0;

	while (filled < n) {
		int want = n - filled < PV_BATCH ? n - filled : PV_BATCH;
		unsigned int repost = 0;
		int got, i;

		got = ibv_poll_cq(qp->recv_cq, want, wc);
		if (got < 0)
			return pv_fail(NULL, 0, "ibv_poll_cq (recv)", got);
		for (i = 0; i < got; i++) {
			uint32_t slot = (uint32_t)wc[i].wr_id;

			qp->recv_posted--;
			if (slot >= qp->nrecv) {
				qp->recv_errors++;	/* cannot happen */
				continue;
			}
			if (wc[i].status != IBV_WC_SUCCESS) {
				qp->recv_errors++;
				/* Flushed: the QP is in error; reposting
				 * would only flush again. */
				if (wc[i].status == IBV_WC_WR_FLUSH_ERR)
					continue;
			} else {
				pv_fill_recv(qp, &wc[i], &rc[filled++]);
			}
			pv_recv_wr(qp, slot, &wrs[repost], &sges[repost]);
			repost++;
		}
		if (pv_post_recv_chain(qp, wrs, repost, NULL, 0) < 0)
			return filled ? filled : -1;
		if (got < want)
			break;
	}
	return filled;
}

static int pv_qp_recv(struct fab_qp *base, struct fab_recv *rc, int n)
{
	struct pv_qp *qp = pv_qp_of(base);
	struct ibv_cq *ev_cq;
	void *ev_ctx;
	int got, ret;

	if (n <= 0)
		return 0;
	got = pv_recv_poll(qp, rc, n);
	if (got != 0)
		return got;

	/*
	 * The CQ is empty: consume the channel event (if any) so the fd
	 * stops being readable, re-arm, and poll once more, because a
	 * completion that arrived before the re-arm raises no event.
	 */
	if (ibv_get_cq_event(qp->channel, &ev_cq, &ev_ctx) == 0)
		ibv_ack_cq_events(ev_cq, 1);
	else if (errno != EAGAIN && errno != EWOULDBLOCK)
		return pv_fail_null(NULL, 0, "ibv_get_cq_event");
	ret = ibv_req_notify_cq(qp->recv_cq, 0);
	if (ret)
		return pv_fail(NULL, 0, "ibv_req_notify_cq", ret);
	return pv_recv_poll(qp, rc, n);
}

static int pv_mcast(struct fab_qp *base, const union fab_gid *mgid,
		    uint16_t mlid, int attach, char *err, size_t errlen)
{
	struct pv_qp *qp = pv_qp_of(base);
	union ibv_gid gid;
	int ret;

	memcpy(gid.raw, mgid->raw, sizeof(gid.raw));
	if (attach)
		ret = ibv_attach_mcast(qp->qp, &gid, mlid);
	else
		ret = ibv_detach_mcast(qp->qp, &gid, mlid);
	if (ret)
		return pv_fail(err, errlen, attach ? "ibv_attach_mcast" :
			       "ibv_detach_mcast", ret);
	return 0;
}

static int pv_attach(struct fab_qp *base, const union fab_gid *mgid,
		     uint16_t mlid, char *err, size_t errlen)
{
	return pv_mcast(base, mgid, mlid, 1, err, errlen);
}

static int pv_detach(struct fab_qp *base, const union fab_gid *mgid,
		     uint16_t mlid, char *err, size_t errlen)
{
	return pv_mcast(base, mgid, mlid, 0, err, errlen);
}

/* ---- address handles ---------------------------------------------------- */

static struct fab_ah *pv_ah_create(struct fab_dev *base,
				   const struct fab_ah_attr *attr, char *err,
				   size_t errlen)
{
	struct pv_dev *dev = pv_dev_of(base);
	struct ibv_ah_attr a;
	struct pv_ah *ah;

	memset(&a, 0, sizeof(a));
	a.dlid = attr->dlid;
	a.sl = attr->sl;
	a.static_rate = attr->static_rate;
	a.port_num = dev->port;
	a.is_global = attr->is_global ? 1 : 0;
	if (a.is_global) {
		memcpy(a.grh.dgid.raw, attr->dgid.raw, sizeof(a.grh.dgid.raw));
		a.grh.flow_label = attr->flow_label;
		a.grh.sgid_index = attr->sgid_index;
		a.grh.hop_limit = attr->hop_limit;
		a.grh.traffic_class = attr->traffic_class;
	}

	ah = calloc(1, sizeof(*ah));
	if (!ah) {
		fab_fail(err, errlen, ENOMEM, "verbs: %s", strerror(ENOMEM));
		return NULL;
	}
	ah->ah = ibv_create_ah(dev->pd, &a);
	if (!ah->ah) {
		pv_fail_null(err, errlen, "ibv_create_ah");
		free(ah);
		return NULL;
	}
	ah->base.dev = base;
	ah->base.attr = *attr;
	return &ah->base;
}

static void pv_ah_destroy(struct fab_ah *base)
{
	struct pv_ah *ah = (struct pv_ah *)base;

	if (!ah)
		return;
	ibv_destroy_ah(ah->ah);
	free(ah);
}

/* ---- MAD agents --------------------------------------------------------- */

/* QP1 of this port through its umad device (libibumad, prov_umad.c). */
static struct fab_mad_agent *pv_mad_open(struct fab_dev *base,
					 uint8_t mgmt_class, char *err,
					 size_t errlen)
{
	struct pv_dev *dev = pv_dev_of(base);

	return fab_umad_agent_open(base, ibv_get_device_name(dev->ctx->device),
				   dev->port, mgmt_class, err, errlen);
}

const struct fab_provider fab_verbs_provider = {
	.name = "verbs",
	.open = pv_open,
	.close = pv_close,
	.query_port = pv_query_port,
	.dev_fd = pv_dev_fd,
	.get_event = pv_get_event,
	.qp_create = pv_qp_create,
	.qp_destroy = pv_qp_destroy,
	.qp_fd = pv_qp_fd,
	.qp_send = pv_qp_send,
	.qp_recv = pv_qp_recv,
	.attach = pv_attach,
	.detach = pv_detach,
	.ah_create = pv_ah_create,
	.ah_destroy = pv_ah_destroy,
	.mad_open = pv_mad_open,
	.mad_close = fab_umad_agent_close,
	.mad_fd = fab_umad_agent_fd,
	.mad_send = fab_umad_agent_send,
	.mad_recv = fab_umad_agent_recv,
};

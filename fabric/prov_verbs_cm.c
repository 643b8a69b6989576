// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The verbs provider's reliable connections: memory regions on the
 * fab_dev's PD, RC queue pairs created on rdma_cm ids (rdma_create_qp, one
 * CQ for both queues behind a completion channel), and connection
 * management through librdmacm, one event channel per fab_dev.  A thin
 * mapping: fab_cm_id is an rdma_cm_id, fab_cm_connect is
 * rdma_resolve_addr -> rdma_resolve_route -> rdma_connect (the two
 * resolution steps are taken inside fab_cm_get_event), fab_cm_accept is
 * rdma_accept, fab_cm_reject rdma_reject, fab_cm_disconnect
 * rdma_disconnect.
 *
 * Addresses (fabric.h's fab_cm_addr):
 *   RoCE        AF_INET (an IPv4-mapped GID) or AF_INET6, RDMA_PS_TCP: the
 *               service ID must be FAB_CM_SID_TCP(port) and a listen's
 *               mask exact, since rdma_cm binds IP ports, not masks.  The
 *               REQ carries rdma_cm's 36-byte header before the caller's
 *               private data, which leaves 56 bytes (FAB_CM_REQ_PRIV_IP).
 *   InfiniBand  AF_IB (struct sockaddr_ib: GID, service ID and mask).  The
 *               kernel's rdma_cm takes only service IDs of its port
 *               spaces: FAB_CM_SID_IB(port) and FAB_CM_SID_TCP(port), so
 *               IBA service IDs such as IPoIB CM's are out of its reach.
 *               The REQ's 92 bytes are all the caller's.  Written from the
 *               librdmacm and kernel sources, never run: there is no
 *               InfiniBand HCA here.
 * The received private data is the CM message's whole field (after
 * rdma_cm's header), zero-padded: 56/92 bytes for a REQ, 196 for a REP,
 * 148 for a REJ.  rdma_reject sends reason 28 (consumer defined); the
 * connector's REJECTED event has the reason in status.  There is no MRA
 * (rdma_cm has none to offer) and disconnects carry no private data
 * (rdma_disconnect takes none).
 *
 * The fab_dev's context must be librdmacm's (prov_verbs.c opens it through
 * rdma_get_devices when the rdma_ucm module is there), so that ids bound
 * to its address get rdma_create_qp on our PD; otherwise every call here
 * fails with EOPNOTSUPP and says why.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <infiniband/ib.h>

#include "fabric/prov_verbs.h"

#define PVC_DEFAULT_DEPTH	128
#define PVC_RESOLVE_MS		2000
#define PVC_BATCH		32
#define PVC_MAX_SGE		16	/* per work request, our limit */

struct pvc_id {
	struct fab_cm_id base;
	struct rdma_cm_id *id;
	struct rdma_conn_param cp;	/* to connect once the route is in */
	uint8_t pdata[FAB_CM_REQ_PRIV];
	uint8_t req_initiator_depth;	/* what the REQ asked */
	uint8_t req_responder_resources;
	uint8_t min_rnr_timer;		/* fab_cm_param's; 0: rdma_cm's */
	int disconnecting;		/* we sent the DREQ (or the DREP) */
	int dying;			/* given to the reaper: its events
					 * are dropped */
};

struct pvc_mr {
	struct fab_mr base;
	struct ibv_mr *mr;
};

struct pvc_qp {
	struct fab_qp base;
	struct pvc_id *cid;
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq;
	uint32_t max_sge;
};

static struct pvc_id *pvc_id_of(struct fab_cm_id *id)
{
	return (struct pvc_id *)id;
}

static struct pvc_qp *pvc_qp_of(struct fab_qp *qp)
{
	return (struct pvc_qp *)qp;
}

/* ---- destruction off the caller's thread -------------------------------- */

/*
 * Linux 6.1's rxe waits up to 50 s in ibv_destroy_qp for references its
 * retry path left on a queue pair whose peer stopped answering
 * (rxe_pool.c, __rxe_cleanup: "Shouldn't happen"), and the caller's one
 * event loop answered nothing meanwhile: the guest tier saw a kernel RDS
 * peer's REQ wait 50 s and the connection never come back.  So queue
 * pairs (with their CQ and channel), rdma_cm ids and memory regions are
 * destroyed by a thread of the process's own, in the order they were
 * given up (a QP before its id, an MR after the QPs that used it).  A
 * given-up id's events are dropped (acknowledged: rdma_destroy_id waits
 * for that).  pv_cm_close waits until everything given up is gone, since
 * the PD and the device go next.  Without the thread (pthread_create
 * failed) the destruction is done at once, as before.
 */
enum pvc_job_kind { PVC_JOB_QP, PVC_JOB_ID, PVC_JOB_MR };

struct pvc_job {
	struct pvc_job *next;
	enum pvc_job_kind kind;
	void *obj;
};

static pthread_mutex_t pvc_rq_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pvc_rq_work = PTHREAD_COND_INITIALIZER;
static pthread_cond_t pvc_rq_done = PTHREAD_COND_INITIALIZER;
static struct pvc_job *pvc_rq_head, **pvc_rq_tail = &pvc_rq_head;
static unsigned int pvc_rq_pending;	/* queued or being destroyed */
static int pvc_rq_state;		/* 0: no thread yet, 1: up, -1: none */

static void pvc_job_run(enum pvc_job_kind kind, void *obj)
{
	switch (kind) {
	case PVC_JOB_QP: {
		struct pvc_qp *qp = obj;

		if (qp->cid)
			rdma_destroy_qp(qp->cid->id);
		if (qp->cq)
			ibv_destroy_cq(qp->cq);	/* events are acked as read */
		if (qp->ch)
			ibv_destroy_comp_channel(qp->ch);
		free(qp);
		break;
	}
	case PVC_JOB_ID: {
		struct pvc_id *cid = obj;

		if (cid->id)
			rdma_destroy_id(cid->id);
		free(cid);
		break;
	}
	case PVC_JOB_MR: {
		struct pvc_mr *mr = obj;

		ibv_dereg_mr(mr->mr);
		free(mr);
		break;
	}
	}
}

static void *pvc_reaper(void *arg)
{
	struct pvc_job *j;

	(void)arg;
	pthread_mutex_lock(&pvc_rq_lock);
	for (;;) {
		while (!pvc_rq_head)
			pthread_cond_wait(&pvc_rq_work, &pvc_rq_lock);
		j = pvc_rq_head;
		pvc_rq_head = j->next;
		if (!pvc_rq_head)
			pvc_rq_tail = &pvc_rq_head;
		pthread_mutex_unlock(&pvc_rq_lock);
		pvc_job_run(j->kind, j->obj);
		free(j);
		pthread_mutex_lock(&pvc_rq_lock);
		if (--pvc_rq_pending == 0)
			pthread_cond_broadcast(&pvc_rq_done);
	}
	return NULL;
}

static void pvc_give_up(enum pvc_job_kind kind, void *obj)
{
	struct pvc_job *j = malloc(sizeof(*j));
	sigset_t all, old;
	pthread_t t;

	pthread_mutex_lock(&pvc_rq_lock);
	if (pvc_rq_state == 0) {
		/* the thread takes no signal: the caller's stay its own */
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		pvc_rq_state = pthread_create(&t, NULL, pvc_reaper, NULL) == 0 ?
			       1 : -1;
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		if (pvc_rq_state == 1)
			pthread_detach(t);
	}
	if (pvc_rq_state < 0 || !j) {
		pthread_mutex_unlock(&pvc_rq_lock);
		free(j);
		pvc_job_run(kind, obj);
		return;
	}
	j->next = NULL;
	j->kind = kind;
	j->obj = obj;
	*pvc_rq_tail = j;
	pvc_rq_tail = &j->next;
	pvc_rq_pending++;
	pthread_cond_signal(&pvc_rq_work);
	pthread_mutex_unlock(&pvc_rq_lock);
}

/* Until everything given up is destroyed. */
static void pvc_reap_wait(void)
{
	pthread_mutex_lock(&pvc_rq_lock);
	while (pvc_rq_pending)
		pthread_cond_wait(&pvc_rq_done, &pvc_rq_lock);
	pthread_mutex_unlock(&pvc_rq_lock);
}

/* ---- memory regions ----------------------------------------------------- */

struct fab_mr *pv_mr_reg(struct fab_dev *base, void *addr, size_t len,
			 unsigned int access, char *err, size_t errlen)
{
	struct pv_dev *dev = pv_dev_of(base);
	struct pvc_mr *mr;
	int a = 0;

	if (access & FAB_ACCESS_LOCAL_WRITE)
		a |= IBV_ACCESS_LOCAL_WRITE;
	if (access & FAB_ACCESS_REMOTE_WRITE)
		a |= IBV_ACCESS_REMOTE_WRITE;
	if (access & FAB_ACCESS_REMOTE_READ)
		a |= IBV_ACCESS_REMOTE_READ;
	mr = calloc(1, sizeof(*mr));
	if (!mr) {
		fab_fail(err, errlen, ENOMEM, "verbs: %s", strerror(ENOMEM));
		return NULL;
	}
	mr->mr = ibv_reg_mr(dev->pd, addr, len, a);
	if (!mr->mr) {
		pv_fail_null(err, errlen, "ibv_reg_mr");
		free(mr);
		return NULL;
	}
	mr->base.dev = base;
	mr->base.addr = addr;
	mr->base.len = len;
	mr->base.lkey = mr->mr->lkey;
	mr->base.rkey = mr->mr->rkey;
	return &mr->base;
}

void pv_mr_dereg(struct fab_mr *base)
{
	pvc_give_up(PVC_JOB_MR, base);
}

/* ---- RC queue pairs ------------------------------------------------------ */

int pv_rc_qp_fd(struct fab_qp *base)
{
	return pvc_qp_of(base)->ch->fd;
}

void pv_rc_qp_destroy(struct fab_qp *base)
{
	struct pvc_qp *qp = pvc_qp_of(base);

	if (qp->cid && qp->cid->id->qp) {
		/* in the error state now, not when the thread gets to it:
		 * nothing is written to the caller's buffers, which it may
		 * free when this returns (its MR keeps the pages pinned) */
		struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };

		ibv_modify_qp(qp->cid->id->qp, &a, IBV_QP_STATE);
		qp->cid->base.qp = NULL;
	} else {
		qp->cid = NULL;		/* no rdma_destroy_qp */
	}
	pvc_give_up(PVC_JOB_QP, qp);
}

struct fab_qp *pv_cm_qp_create(struct fab_cm_id *base,
			       const struct fab_qp_init *init, char *err,
			       size_t errlen)
{
	struct pvc_id *cid = pvc_id_of(base);
	struct pv_dev *dev = pv_dev_of(base->dev);
	struct ibv_qp_init_attr qa = { .qp_type = IBV_QPT_RC };
	struct pvc_qp *qp;
	uint32_t ns = init->max_send ? init->max_send : PVC_DEFAULT_DEPTH;
	uint32_t nr = init->max_recv ? init->max_recv : PVC_DEFAULT_DEPTH;
	int ret;

	qp = calloc(1, sizeof(*qp));
	if (!qp) {
		fab_fail(err, errlen, ENOMEM, "verbs: %s", strerror(ENOMEM));
		return NULL;
	}
	qp->base.dev = base->dev;
	qp->base.type = FAB_QPT_RC;
	qp->base.pkey_index = init->pkey_index;
	qp->max_sge = init->max_sge ? init->max_sge : 1;
	if (qp->max_sge > PVC_MAX_SGE) {
		fab_fail(err, errlen, EINVAL, "verbs: max_sge %u over %d",
			 qp->max_sge, PVC_MAX_SGE);
		goto fail;
	}
	qp->ch = ibv_create_comp_channel(dev->ctx);
	if (!qp->ch) {
		pv_fail_null(err, errlen, "ibv_create_comp_channel");
		goto fail;
	}
	if (pv_set_nonblock(qp->ch->fd) < 0) {
		pv_fail_null(err, errlen, "comp channel O_NONBLOCK");
		goto fail;
	}
	qp->cq = ibv_create_cq(dev->ctx, (int)(ns + nr), NULL, qp->ch, 0);
	if (!qp->cq) {
		pv_fail_null(err, errlen, "ibv_create_cq");
		goto fail;
	}
	ret = ibv_req_notify_cq(qp->cq, 0);
	if (ret) {
		pv_fail(err, errlen, "ibv_req_notify_cq", ret);
		goto fail;
	}
	qa.send_cq = qp->cq;
	qa.recv_cq = qp->cq;
	qa.cap.max_send_wr = ns;
	qa.cap.max_recv_wr = nr;
	qa.cap.max_send_sge = qp->max_sge;
	qa.cap.max_recv_sge = qp->max_sge;
	qa.cap.max_inline_data = init->max_inline;
	if (rdma_create_qp(cid->id, dev->pd, &qa)) {
		pv_fail_null(err, errlen, "rdma_create_qp");
		goto fail;
	}
	qp->cid = cid;
	qp->base.qpn = cid->id->qp->qp_num;
	qp->base.cm = base;
	base->qp = &qp->base;
	return &qp->base;
fail:
	ret = errno;
	pv_rc_qp_destroy(&qp->base);
	errno = ret;
	return NULL;
}

static int pvc_send_op(enum fab_wr_opcode op, enum ibv_wr_opcode *out)
{
	switch (op) {
	case FAB_WR_SEND: *out = IBV_WR_SEND; return 0;
	case FAB_WR_SEND_WITH_IMM: *out = IBV_WR_SEND_WITH_IMM; return 0;
	case FAB_WR_RDMA_WRITE: *out = IBV_WR_RDMA_WRITE; return 0;
	case FAB_WR_RDMA_WRITE_WITH_IMM:
		*out = IBV_WR_RDMA_WRITE_WITH_IMM;
		return 0;
	case FAB_WR_RDMA_READ: *out = IBV_WR_RDMA_READ; return 0;
	}
	return -1;
}

/* fab_sge and ibv_sge have one layout; copy rather than cast. */
static void pvc_sges(const struct fab_sge *in, unsigned int n,
		     struct ibv_sge *out)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		out[i].addr = in[i].addr;
		out[i].length = in[i].length;
		out[i].lkey = in[i].lkey;
	}
}

/* w -> one ibv_send_wr whose SGEs are sge[]: -1 (EINVAL) for what verbs
 * could not carry. */
static int pvc_send_wr(const struct pvc_qp *qp, const struct fab_rc_wr *w,
		       struct ibv_send_wr *wr, struct ibv_sge *sge)
{
	memset(wr, 0, sizeof(*wr));
	wr->wr_id = w->wr_id;
	if (w->num_sge > qp->max_sge || pvc_send_op(w->opcode, &wr->opcode)) {
		errno = EINVAL;
		return -1;
	}
	pvc_sges(w->sg_list, w->num_sge, sge);
	wr->sg_list = w->num_sge ? sge : NULL;
	wr->num_sge = (int)w->num_sge;
	if (w->flags & FAB_SEND_SIGNALED)
		wr->send_flags |= IBV_SEND_SIGNALED;
	if (w->flags & FAB_SEND_INLINE)
		wr->send_flags |= IBV_SEND_INLINE;
	if (w->flags & FAB_SEND_FENCE)
		wr->send_flags |= IBV_SEND_FENCE;
	if (w->flags & FAB_SEND_SOLICITED)
		wr->send_flags |= IBV_SEND_SOLICITED;
	wr->imm_data = htobe32(w->imm_data);
	wr->wr.rdma.remote_addr = w->remote_addr;
	wr->wr.rdma.rkey = w->rkey;
	return 0;
}

/*
 * Up to PVC_POST_CHAIN requests per ibv_post_send: one doorbell for a
 * batch (on rxe a doorbell is a system call, on an HCA a write to its
 * page).  bad_wr says which one was refused, so the count returned is as
 * exact as one call per request would make it.
 */
#define PVC_POST_CHAIN	16

int pv_rc_post_send(struct fab_qp *base, const struct fab_rc_wr *wr, int n)
{
	struct pvc_qp *qp = pvc_qp_of(base);
	struct ibv_sge sge[PVC_POST_CHAIN][PVC_MAX_SGE];
	struct ibv_send_wr w[PVC_POST_CHAIN], *bad;
	int done = 0, k, i, ret;

	while (done < n) {
		k = n - done < PVC_POST_CHAIN ? n - done : PVC_POST_CHAIN;
		for (i = 0; i < k; i++) {
			if (pvc_send_wr(qp, &wr[done + i], &w[i], sge[i]) < 0)
				break;
			if (i)
				w[i - 1].next = &w[i];
		}
		if (i == 0)
			return done ? done : -1;	/* errno: EINVAL */
		bad = NULL;
		ret = ibv_post_send(qp->cid->id->qp, w, &bad);
		if (ret) {
			int took = bad ? (int)(bad - w) : 0;

			if (took < 0 || took > i)
				took = 0;
			errno = ret > 0 ? ret : (ret < -1 ? -ret : errno);
			done += took;
			return done ? done : -1;
		}
		done += i;
		if (i < k) {			/* wr[done] is malformed */
			errno = EINVAL;
			return done;
		}
	}
	return done;
}

int pv_rc_post_recv(struct fab_qp *base, const struct fab_recv_wr *wr, int n)
{
	struct pvc_qp *qp = pvc_qp_of(base);
	int i, ret;

	for (i = 0; i < n; i++) {
		struct ibv_sge sge[PVC_MAX_SGE];
		struct ibv_recv_wr r = { .wr_id = wr[i].wr_id }, *bad;

		if (wr[i].num_sge > qp->max_sge) {
			errno = EINVAL;
			return i ? i : -1;
		}
		pvc_sges(wr[i].sg_list, wr[i].num_sge, sge);
		r.sg_list = wr[i].num_sge ? sge : NULL;
		r.num_sge = (int)wr[i].num_sge;
		ret = ibv_post_recv(qp->cid->id->qp, &r, &bad);
		if (ret) {
			errno = ret > 0 ? ret : (ret < -1 ? -ret : errno);
			return i ? i : -1;
		}
	}
	return n < 0 ? 0 : n;
}

static enum fab_wc_status pvc_status(enum ibv_wc_status s)
{
	switch (s) {
	case IBV_WC_SUCCESS: return FAB_WC_SUCCESS;
	case IBV_WC_LOC_LEN_ERR: return FAB_WC_LOC_LEN_ERR;
	case IBV_WC_LOC_QP_OP_ERR: return FAB_WC_LOC_QP_OP_ERR;
	case IBV_WC_LOC_PROT_ERR: return FAB_WC_LOC_PROT_ERR;
	case IBV_WC_WR_FLUSH_ERR: return FAB_WC_WR_FLUSH_ERR;
	case IBV_WC_BAD_RESP_ERR: return FAB_WC_BAD_RESP_ERR;
	case IBV_WC_LOC_ACCESS_ERR: return FAB_WC_LOC_ACCESS_ERR;
	case IBV_WC_REM_INV_REQ_ERR: return FAB_WC_REM_INV_REQ_ERR;
	case IBV_WC_REM_ACCESS_ERR: return FAB_WC_REM_ACCESS_ERR;
	case IBV_WC_REM_OP_ERR: return FAB_WC_REM_OP_ERR;
	case IBV_WC_RETRY_EXC_ERR: return FAB_WC_RETRY_EXC_ERR;
	case IBV_WC_RNR_RETRY_EXC_ERR: return FAB_WC_RNR_RETRY_EXC_ERR;
	case IBV_WC_REM_ABORT_ERR: return FAB_WC_REM_ABORT_ERR;
	default: return FAB_WC_GENERAL_ERR;
	}
}

static enum fab_wc_opcode pvc_wc_op(enum ibv_wc_opcode op)
{
	switch (op) {
	case IBV_WC_RDMA_WRITE: return FAB_WC_RDMA_WRITE;
	case IBV_WC_RDMA_READ: return FAB_WC_RDMA_READ;
	case IBV_WC_RECV: return FAB_WC_RECV;
	case IBV_WC_RECV_RDMA_WITH_IMM: return FAB_WC_RECV_RDMA_WITH_IMM;
	default: return FAB_WC_SEND;
	}
}

static int pvc_poll_once(struct pvc_qp *qp, struct fab_wc *out, int n)
{
	struct ibv_wc wc[PVC_BATCH];
	int filled = 0;

	while (filled < n) {
		int want = n - filled < PVC_BATCH ? n - filled : PVC_BATCH;
		int got, i;

		got = ibv_poll_cq(qp->cq, want, wc);
		if (got < 0)
			return pv_fail(NULL, 0, "ibv_poll_cq", got);
		for (i = 0; i < got; i++) {
			struct fab_wc *o = &out[filled++];

			memset(o, 0, sizeof(*o));
			o->wr_id = wc[i].wr_id;
			o->status = pvc_status(wc[i].status);
			o->vendor_err = wc[i].vendor_err;
			o->recv = (wc[i].opcode & IBV_WC_RECV) != 0;
			if (wc[i].status != IBV_WC_SUCCESS)
				continue;
			o->opcode = pvc_wc_op(wc[i].opcode);
			o->byte_len = wc[i].byte_len;
			o->src_qp = wc[i].src_qp;
			if (wc[i].wc_flags & IBV_WC_WITH_IMM) {
				o->imm_valid = 1;
				o->imm_data = be32toh(wc[i].imm_data);
			}
		}
		if (got < want)
			break;
	}
	return filled;
}

/*
 * Flushed completions may not say which queue they came from (verbs
 * leaves opcode undefined on error): rxe and mlx5 set the receive bit
 * for receives, and callers who need certainty keep wr_ids apart.
 */
int pv_rc_poll(struct fab_qp *base, struct fab_wc *wc, int n)
{
	struct pvc_qp *qp = pvc_qp_of(base);
	struct ibv_cq *ev_cq;
	void *ev_ctx;
	int got, ret;

	if (n <= 0)
		return 0;
	got = pvc_poll_once(qp, wc, n);
	if (got < 0 || got == n)
		return got;	/* full: the caller comes back for more */
	/*
	 * Drained.  No event on the channel: the CQ is still armed (an
	 * event disarms it), nothing to do.  An event: consume it (the fd
	 * stops being readable), re-arm, and poll once more, because a
	 * completion that arrived before the re-arm raises no event.
	 * Doing this when the CQ is drained, not only when a poll finds
	 * it empty, spares the event loop a second wake-up per event
	 * only to find the CQ empty (on rxe a wake-up, a read and an ioctl
	 * are each a system call).
	 */
	if (ibv_get_cq_event(qp->ch, &ev_cq, &ev_ctx) != 0) {
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return pv_fail_null(NULL, 0, "ibv_get_cq_event");
		return got;
	}
	ibv_ack_cq_events(ev_cq, 1);
	ret = ibv_req_notify_cq(qp->cq, 0);
	if (ret)
		return pv_fail(NULL, 0, "ibv_req_notify_cq", ret);
	ret = pvc_poll_once(qp, wc + got, n - got);
	return ret < 0 ? (got ? got : ret) : got + ret;
}

int pv_rc_set_error(struct fab_qp *base)
{
	struct pvc_qp *qp = pvc_qp_of(base);
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
	int ret = ibv_modify_qp(qp->cid->id->qp, &a, IBV_QP_STATE);

	if (ret)
		return pv_fail(NULL, 0, "ibv_modify_qp(ERR)", ret);
	return 0;
}

/* ---- addresses ------------------------------------------------------------ */

union pvc_sa {
	struct sockaddr sa;
	struct sockaddr_in sin;
	struct sockaddr_in6 sin6;
	struct sockaddr_ib sib;
};

static int pvc_v4mapped(const union fab_gid *g)
{
	static const uint8_t pfx[12] = { [10] = 0xff, [11] = 0xff };

	return !memcmp(g->raw, pfx, sizeof(pfx));
}

/* fab_cm_addr -> a sockaddr for rdma_cm, and its port space.  A zero GID
 * is the dev's source GID.  listen: the mask matters (AF_IB only). */
static int pvc_addr(const struct pv_dev *dev, const struct fab_cm_addr *a,
		    int listen, union pvc_sa *out, enum rdma_port_space *ps,
		    char *err, size_t errlen)
{
	static const union fab_gid zero;
	const union fab_gid *gid = a ? &a->gid : &zero;
	uint64_t sid = a ? a->service_id : FAB_CM_SID_TCP(0);
	uint64_t mask = a && a->service_mask ? a->service_mask :
			FAB_CM_SID_EXACT;
	unsigned int space = (unsigned int)(sid >> 16);

	if (!memcmp(gid, &zero, sizeof(zero)))
		gid = &dev->sgid;
	memset(out, 0, sizeof(*out));
	if (dev->link_layer == FAB_LINK_ETHERNET) {
		if (space != FAB_CM_PS_TCP)
			return fab_fail(err, errlen, EINVAL, "verbs: on RoCE "
					"rdma_cm takes RDMA_PS_TCP ports: "
					"service ID 0x%016llx is not one",
					(unsigned long long)sid);
		if (listen && mask != FAB_CM_SID_EXACT)
			return fab_fail(err, errlen, EINVAL, "verbs: on RoCE "
					"rdma_cm listens on one port, not a "
					"service ID mask");
		*ps = RDMA_PS_TCP;
		if (pvc_v4mapped(gid)) {
			out->sin.sin_family = AF_INET;
			memcpy(&out->sin.sin_addr, gid->raw + 12, 4);
			out->sin.sin_port = htons((uint16_t)sid);
		} else {
			out->sin6.sin6_family = AF_INET6;
			memcpy(&out->sin6.sin6_addr, gid->raw, 16);
			out->sin6.sin6_port = htons((uint16_t)sid);
			if (gid->raw[0] == 0xfe && (gid->raw[1] & 0xc0) == 0x80)
				out->sin6.sin6_scope_id = dev->sgid_ifindex;
		}
		return 0;
	}
	/* InfiniBand: AF_IB, as far as the kernel's rdma_cm lets it */
	if (space != FAB_CM_PS_TCP && space != FAB_CM_PS_IB)
		return fab_fail(err, errlen, EINVAL, "verbs: rdma_cm takes "
				"only service IDs of its port spaces "
				"(0x%04x or 0x%04x << 16 | port), not 0x%016llx",
				FAB_CM_PS_IB, FAB_CM_PS_TCP,
				(unsigned long long)sid);
	*ps = space == FAB_CM_PS_TCP ? RDMA_PS_TCP : RDMA_PS_IB;
	out->sib.sib_family = AF_IB;
	out->sib.sib_pkey = htons(0xffff);
	memcpy(&out->sib.sib_addr, gid->raw, 16);
	out->sib.sib_sid = htobe64(sid);
	out->sib.sib_sid_mask = htobe64(listen ? mask : FAB_CM_SID_EXACT);
	return 0;
}

static void pvc_addr_back(const struct sockaddr *sa, struct fab_cm_addr *a)
{
	memset(a, 0, sizeof(*a));
	if (!sa)
		return;
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *sin = (const void *)sa;

		a->gid.raw[10] = a->gid.raw[11] = 0xff;
		memcpy(a->gid.raw + 12, &sin->sin_addr, 4);
		a->service_id = FAB_CM_SID_TCP(ntohs(sin->sin_port));
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *sin6 = (const void *)sa;

		memcpy(a->gid.raw, &sin6->sin6_addr, 16);
		a->service_id = FAB_CM_SID_TCP(ntohs(sin6->sin6_port));
	} else if (sa->sa_family == AF_IB) {
		const struct sockaddr_ib *sib = (const void *)sa;

		memcpy(a->gid.raw, &sib->sib_addr, 16);
		a->service_id = be64toh(sib->sib_sid);
	}
}

/* ---- connection management ------------------------------------------------ */

int pv_cm_fd(struct fab_dev *base)
{
	struct pv_dev *dev = pv_dev_of(base);

	if (dev->cm_ch)
		return dev->cm_ch->fd;
	if (!dev->ctx_cm) {
		errno = EOPNOTSUPP;
		return -1;
	}
	dev->cm_ch = rdma_create_event_channel();
	if (!dev->cm_ch)
		return -1;
	if (pv_set_nonblock(dev->cm_ch->fd) < 0) {
		rdma_destroy_event_channel(dev->cm_ch);
		dev->cm_ch = NULL;
		return -1;
	}
	return dev->cm_ch->fd;
}

void pv_cm_close(struct pv_dev *dev)
{
	pvc_reap_wait();
	if (dev->cm_ch)
		rdma_destroy_event_channel(dev->cm_ch);	/* ids destroyed */
	dev->cm_ch = NULL;
}

static struct pvc_id *pvc_new(struct pv_dev *dev, enum rdma_port_space ps,
			      char *err, size_t errlen)
{
	struct pvc_id *cid;

	if (!dev->ctx_cm) {
		fab_fail(err, errlen, EOPNOTSUPP, "verbs: %s: no rdma_cm "
			 "(is the rdma_ucm module loaded?), so no RC",
			 dev->name);
		return NULL;
	}
	if (pv_cm_fd(&dev->base) < 0) {
		pv_fail_null(err, errlen, "rdma_create_event_channel");
		return NULL;
	}
	cid = calloc(1, sizeof(*cid));
	if (!cid) {
		fab_fail(err, errlen, ENOMEM, "verbs: %s", strerror(ENOMEM));
		return NULL;
	}
	cid->base.dev = &dev->base;
	if (rdma_create_id(dev->cm_ch, &cid->id, cid, ps)) {
		pv_fail_null(err, errlen, "rdma_create_id");
		free(cid);
		return NULL;
	}
	return cid;
}

static int pvc_bind(struct pvc_id *cid, union pvc_sa *sa, char *err,
		    size_t errlen)
{
	struct pv_dev *dev = pv_dev_of(cid->base.dev);

	if (rdma_bind_addr(cid->id, &sa->sa))
		return pv_fail_null(err, errlen, "rdma_bind_addr");
	/* a listener on the any address is on no device until a REQ
	 * comes (pvc_conn_req keeps those of this device) */
	if (!cid->id->verbs && cid->base.listener)
		return 0;
	if (cid->id->verbs != dev->ctx)
		return fab_fail(err, errlen, EADDRNOTAVAIL, "verbs: the "
				"address is on another RDMA device than %s",
				dev->name);
	return 0;
}

struct fab_cm_id *pv_cm_listen(struct fab_dev *base,
			       const struct fab_cm_addr *addr, int backlog,
			       char *err, size_t errlen)
{
	struct pv_dev *dev = pv_dev_of(base);
	enum rdma_port_space ps;
	union pvc_sa sa;
	struct pvc_id *cid;

	if (pvc_addr(dev, addr, 1, &sa, &ps, err, errlen) < 0)
		return NULL;
	cid = pvc_new(dev, ps, err, errlen);
	if (!cid)
		return NULL;
	cid->base.listener = 1;
	if (pvc_bind(cid, &sa, err, errlen) < 0)
		goto fail;
	if (rdma_listen(cid->id, backlog)) {
		pv_fail_null(err, errlen, "rdma_listen");
		goto fail;
	}
	return &cid->base;
fail:
	backlog = errno;
	pv_cm_destroy(&cid->base);
	errno = backlog;
	return NULL;
}

struct fab_cm_id *pv_cm_create_id(struct fab_dev *base, char *err,
				  size_t errlen)
{
	struct pv_dev *dev = pv_dev_of(base);
	struct fab_cm_addr src = {
		.service_id = dev->link_layer == FAB_LINK_ETHERNET ?
			      FAB_CM_SID_TCP(0) : FAB_CM_SID_IB(0),
	};
	enum rdma_port_space ps;
	union pvc_sa sa;
	struct pvc_id *cid;
	int e;

	if (pvc_addr(dev, &src, 0, &sa, &ps, err, errlen) < 0)
		return NULL;
	cid = pvc_new(dev, ps, err, errlen);
	if (!cid)
		return NULL;
	if (pvc_bind(cid, &sa, err, errlen) < 0) {
		e = errno;
		pv_cm_destroy(&cid->base);
		errno = e;
		return NULL;
	}
	return &cid->base;
}

/* 0 in a count: the default; the passive side cannot exceed the REQ. */
static void pvc_conn_param(struct rdma_conn_param *cp,
			   const struct fab_cm_param *p)
{
	memset(cp, 0, sizeof(*cp));
	cp->responder_resources = p && p->responder_resources ?
				  p->responder_resources : 1;
	cp->initiator_depth = p && p->initiator_depth ? p->initiator_depth : 1;
	cp->retry_count = p && p->retry_count ? p->retry_count : 7;
	cp->rnr_retry_count = p && p->rnr_retry_count ? p->rnr_retry_count :
			      7;
	if (cp->retry_count > 7)
		cp->retry_count = 7;
	if (cp->rnr_retry_count > 7)
		cp->rnr_retry_count = 7;
	if (p) {
		cp->private_data = p->private_data;
		cp->private_data_len = p->private_data_len;
	}
}

/*
 * rdma_cm moves the QP to RTR with min_rnr_timer 0 (655.36 ms: ib_cm's
 * cm_init_qp_rtr_attr) unless a kernel caller set it (the kernel's RDS
 * does, rdma_set_min_rnr_timer, 0.32 ms); librdmacm cannot.  It is one
 * of an RC QP's optional attributes from RTS to RTS (the kernel's
 * qp_state_table, verbs.c, as IBA's QP state table has it), so it is set
 * once the QP is in RTS: after rdma_accept, and at ESTABLISHED.
 * Best effort: the default still works, only slower after an RNR NAK.
 */
static void pvc_set_rnr_timer(struct pvc_id *cid)
{
	struct ibv_qp_attr a;

	if (!cid || !cid->min_rnr_timer || !cid->id || !cid->id->qp)
		return;
	memset(&a, 0, sizeof(a));
	a.min_rnr_timer = cid->min_rnr_timer;
	(void)ibv_modify_qp(cid->id->qp, &a, IBV_QP_MIN_RNR_TIMER);
}

int pv_cm_connect(struct fab_cm_id *base, const struct fab_cm_addr *dst,
		  const struct fab_cm_param *param, char *err, size_t errlen)
{
	struct pvc_id *cid = pvc_id_of(base);
	struct pv_dev *dev = pv_dev_of(base->dev);
	int max = dev->link_layer == FAB_LINK_ETHERNET ? FAB_CM_REQ_PRIV_IP :
		  FAB_CM_REQ_PRIV;
	enum rdma_port_space ps;
	union pvc_sa sa;

	if (param && param->private_data_len > max)
		return fab_fail(err, errlen, EINVAL, "verbs: connect: %u "
				"bytes of private data; rdma_cm's REQ has "
				"room for %d", param->private_data_len, max);
	if (pvc_addr(dev, dst, 0, &sa, &ps, err, errlen) < 0)
		return -1;
	pvc_conn_param(&cid->cp, param);
	if (cid->cp.private_data_len) {
		memcpy(cid->pdata, param->private_data,
		       cid->cp.private_data_len);
		cid->cp.private_data = cid->pdata;
	}
	cid->min_rnr_timer = param && param->min_rnr_timer <= 31 ?
			     param->min_rnr_timer : 0;	/* at ESTABLISHED */
	if (rdma_resolve_addr(cid->id, NULL, &sa.sa, PVC_RESOLVE_MS))
		return pv_fail_null(err, errlen, "rdma_resolve_addr");
	return 0;
}

int pv_cm_accept(struct fab_cm_id *base, const struct fab_cm_param *param,
		 char *err, size_t errlen)
{
	struct pvc_id *cid = pvc_id_of(base);
	struct rdma_conn_param cp;

	pvc_conn_param(&cp, param);
	if (cp.responder_resources > cid->req_initiator_depth)
		cp.responder_resources = cid->req_initiator_depth;
	if (cp.initiator_depth > cid->req_responder_resources)
		cp.initiator_depth = cid->req_responder_resources;
	if (rdma_accept(cid->id, &cp))
		return pv_fail_null(err, errlen, "rdma_accept");
	cid->min_rnr_timer = param && param->min_rnr_timer <= 31 ?
			     param->min_rnr_timer : 0;
	pvc_set_rnr_timer(cid);
	return 0;
}

int pv_cm_reject(struct fab_cm_id *base, const void *private_data,
		 uint8_t len, char *err, size_t errlen)
{
	if (rdma_reject(pvc_id_of(base)->id, private_data, len))
		return pv_fail_null(err, errlen, "rdma_reject");
	return 0;
}

int pv_cm_disconnect(struct fab_cm_id *base, char *err, size_t errlen)
{
	struct pvc_id *cid = pvc_id_of(base);

	if (cid->disconnecting)
		return 0;	/* the DREQ (or DREP) went already */
	cid->disconnecting = 1;
	if (rdma_disconnect(cid->id))
		return pv_fail_null(err, errlen, "rdma_disconnect");
	return 0;
}

/*
 * A DREQ arrived.  The kernel's CM sends the DREP only when told
 * (rdma_disconnect), and librdmacm leaves the QP as it is: answer now and
 * move the QP to the error state, so that both ends see what fabric.h
 * promises (DISCONNECTED, a QP in error, flushed work requests) without
 * the caller having to call anything.
 */
static void pvc_dreq(struct pvc_id *cid)
{
	if (cid->disconnecting)
		return;
	cid->disconnecting = 1;
	rdma_disconnect(cid->id);	/* QP to ERR, then the DREP */
}

void pv_cm_destroy(struct fab_cm_id *base)
{
	struct pvc_id *cid = pvc_id_of(base);

	if (base->qp)
		pv_rc_qp_destroy(base->qp);
	cid->dying = 1;
	pvc_give_up(PVC_JOB_ID, cid);
}

static void pvc_copy_pdata(struct fab_cm_event *ev, const void *p,
			   uint8_t len)
{
	if (!p)
		return;
	if (len > FAB_CM_PRIV_MAX)
		len = FAB_CM_PRIV_MAX;
	memcpy(ev->private_data, p, len);
	ev->private_data_len = len;
}

/* A REQ: wrap the new rdma_cm id (its context is the listener's). */
static int pvc_conn_req(struct pv_dev *dev, struct rdma_cm_event *e,
			struct fab_cm_event *ev)
{
	struct pvc_id *cid;

	if (e->id->verbs != dev->ctx) {	/* an any-address listener's REQ
					 * on another device */
		rdma_reject(e->id, NULL, 0);
		rdma_destroy_id(e->id);
		return 0;
	}
	cid = calloc(1, sizeof(*cid));
	if (!cid) {
		rdma_reject(e->id, NULL, 0);
		rdma_destroy_id(e->id);	/* allowed for a REQ's new id */
		errno = ENOMEM;
		return -1;
	}
	cid->base.dev = &dev->base;
	cid->id = e->id;
	cid->req_initiator_depth = e->param.conn.initiator_depth;
	cid->req_responder_resources = e->param.conn.responder_resources;
	e->id->context = cid;
	ev->id = &cid->base;
	ev->listen_id = e->listen_id ? e->listen_id->context : NULL;
	ev->peer_qpn = e->param.conn.qp_num;
	pvc_addr_back(rdma_get_peer_addr(e->id), &ev->peer);
	pvc_copy_pdata(ev, e->param.conn.private_data,
		       e->param.conn.private_data_len);
	return 1;
}

/* The connect steps taken here: 1 with an event for the caller (a step
 * that failed), 0 when the step is under way. */
static int pvc_step(struct rdma_cm_event *e, struct fab_cm_event *ev)
{
	struct pvc_id *cid = e->id->context;
	int ret;

	if (e->event == RDMA_CM_EVENT_ADDR_RESOLVED)
		ret = rdma_resolve_route(e->id, PVC_RESOLVE_MS);
	else
		ret = rdma_connect(e->id, &cid->cp);
	if (ret == 0)
		return 0;
	ev->type = e->event == RDMA_CM_EVENT_ADDR_RESOLVED ?
		   FAB_CM_EV_UNREACHABLE : FAB_CM_EV_CONNECT_ERROR;
	ev->status = errno;
	return 1;
}

static int pvc_translate(struct pv_dev *dev, struct rdma_cm_event *e,
			 struct fab_cm_event *ev)
{
	struct pvc_id *cid = e->id->context;

	/* given up (for a REQ: its listener): acknowledged, nothing more */
	if (cid && cid->dying) {
		if (e->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
			rdma_reject(e->id, NULL, 0);
			rdma_destroy_id(e->id);
		}
		return 0;
	}
	memset(ev, 0, sizeof(*ev));
	ev->id = e->id->context;
	switch (e->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		return pvc_step(e, ev);
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
		ev->type = FAB_CM_EV_UNREACHABLE;
		ev->status = e->status < 0 ? -e->status : e->status;
		return 1;
	case RDMA_CM_EVENT_CONNECT_ERROR:
		ev->type = FAB_CM_EV_CONNECT_ERROR;
		ev->status = e->status < 0 ? -e->status : e->status;
		return 1;
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		ev->type = FAB_CM_EV_CONNECT_REQUEST;
		return pvc_conn_req(dev, e, ev);
	case RDMA_CM_EVENT_REJECTED:
		ev->type = FAB_CM_EV_REJECTED;
		ev->status = e->status;	/* the IB CM's reject reason */
		pvc_copy_pdata(ev, e->param.conn.private_data,
			       e->param.conn.private_data_len);
		return 1;
	case RDMA_CM_EVENT_ESTABLISHED:
		ev->type = FAB_CM_EV_ESTABLISHED;
		pvc_set_rnr_timer(ev->id ? e->id->context : NULL);
		ev->peer_qpn = e->param.conn.qp_num;
		pvc_copy_pdata(ev, e->param.conn.private_data,
			       e->param.conn.private_data_len);
		return 1;
	case RDMA_CM_EVENT_DISCONNECTED:
		ev->type = FAB_CM_EV_DISCONNECTED;
		if (ev->id)
			pvc_dreq(e->id->context);
		return 1;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		ev->type = FAB_CM_EV_DEVICE_REMOVAL;
		return 1;
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		ev->type = FAB_CM_EV_TIMEWAIT_EXIT;
		return 1;
	default:	/* CONNECT_RESPONSE (we always have a QP), mcast ... */
		return 0;
	}
}

int pv_cm_get_event(struct fab_dev *base, struct fab_cm_event *ev)
{
	struct pv_dev *dev = pv_dev_of(base);
	struct rdma_cm_event *e;
	int ret;

	if (pv_cm_fd(base) < 0)
		return -1;
	for (;;) {
		if (rdma_get_cm_event(dev->cm_ch, &e)) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			return -1;
		}
		ret = pvc_translate(dev, e, ev);
		rdma_ack_cm_event(e);
		if (ret != 0)
			return ret;
	}
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * soft:PATH provider: this process is (part of) a node attached to
 * ibfabricd.  It plays the HCA: builds native IB packets (LRH, GRH for
 * multicast and global routes, BTH, DETH, ICRC, VCRC) on send and decodes
 * them into completions on receive.  Control goes over the device socket
 * (soft_proto.h), each QP's packets over its own socketpair.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "inet/byteorder.h"
#include "fabric/fabric_prov.h"
#include "fabric/ib_pkt.h"
#include "fabric/prov_soft.h"
#include "fabric/prov_soft_int.h"
#include "fabric/soft_proto.h"
#include "fabric/soft_ring.h"

static void port_info_to_attr(const struct fsp_port_info *pi,
			      struct fab_port_attr *a)
{
	unsigned int i;

	memset(a, 0, sizeof(*a));
	a->state = (enum fab_port_state)pi->state;
	a->lid = pi->lid;
	a->sm_lid = pi->sm_lid;
	a->lmc = pi->lmc;
	a->sm_sl = pi->sm_sl;
	a->active_mtu = pi->active_mtu;
	a->port_num = pi->port_num;
	a->node_guid = pi->node_guid;
	a->port_guid = pi->port_guid;
	memcpy(a->gid.raw, pi->gid, 16);
	a->link_layer = FAB_LINK_IB;
	a->sgid_type = FAB_GID_IB;
	a->sgid = a->gid;
	a->npkeys = pi->npkeys > FAB_MAX_PKEYS ? FAB_MAX_PKEYS : pi->npkeys;
	for (i = 0; i < a->npkeys; i++)
		a->pkeys[i] = pi->pkeys[i];
}

static void evq_push(struct soft_dev *d, uint32_t type)
{
	if (d->reattaching) {	/* after PORT_ACTIVE */
		if (d->nheld < SOFT_EVQ)
			d->held[d->nheld++] = (enum fab_event_type)type;
		return;
	}
	if (d->evq_len == SOFT_EVQ)	/* overflow: drop the oldest */
		d->evq_head = (d->evq_head + 1) % SOFT_EVQ, d->evq_len--;
	d->evq[(d->evq_head + d->evq_len) % SOFT_EVQ] =
		(enum fab_event_type)type;
	d->evq_len++;
}

/* Handle an unsolicited message that arrived while waiting or polling. */
static void soft_async(struct soft_dev *d, const struct fsp_hdr *h,
		       const void *body)
{
	struct fsp_event ev;

	if (h->type == FSP_EVENT && h->len == sizeof(ev)) {
		memcpy(&ev, body, sizeof(ev));
		evq_push(d, ev.type);
	}
}


static void close_fds(int *fd)
{
	int i;

	for (i = 0; i < FSP_FDS_MAX; i++)
		if (fd[i] >= 0)
			close(fd[i]);
}

/* Synchronous request: returns the reply body length, or -1 with errno
 * (ibfabricd's status when it refused) and the reason in err. */
/* fds: NULL, or room for FSP_FDS_MAX passed descriptors (-1: none). */
ssize_t soft_call(struct soft_dev *d, uint16_t type, const void *req,
		  size_t reqlen, void *rep, size_t repcap, int *fds,
		  char *err, size_t errlen)
{
	static __thread uint8_t buf[FSP_MSG_MAX];
	struct fsp_hdr h;
	struct pollfd pfd = { .fd = d->fd, .events = POLLIN };
	uint32_t seq = ++d->seq;
	struct timespec t0, t1;
	ssize_t n;
	int fd[FSP_FDS_MAX], left = SOFT_CALL_TIMEOUT_MS, i;

	for (i = 0; fds && i < FSP_FDS_MAX; i++)
		fds[i] = -1;
	if (d->fd < 0)
		return fab_fail(err, errlen, ECONNRESET,
				"soft: the port is down (no ibfabricd)");
	pfd.fd = d->fd;
	if (fsp_send(d->fd, type, seq, 0, req, reqlen, -1) < 0) {
		if (errno == EPIPE || errno == ECONNRESET) {
			soft_lost(d);
			errno = ECONNRESET;
		}
		return fab_fail(err, errlen, errno, "soft: send to ibfabricd: "
				"%s", strerror(errno));
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		int r = poll(&pfd, 1, left);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return fab_fail(err, errlen, r < 0 ? errno : ETIMEDOUT,
					"soft: ibfabricd did not answer "
					"within %d ms", SOFT_CALL_TIMEOUT_MS);
		n = fsp_recv_fds(d->fd, &h, buf, sizeof(buf), fd, FSP_FDS_MAX);
		if (n < 0 && errno == EAGAIN)
			goto again;
		if (n < 0 && (errno == EPIPE || errno == ECONNRESET)) {
			soft_lost(d);
			return fab_fail(err, errlen, ECONNRESET, "soft: receive "
					"from ibfabricd: connection closed");
		}
		if (n < 0)
			return fab_fail(err, errlen, errno, "soft: receive from "
					"ibfabricd: %s", strerror(errno));
		if (h.type == FSP_REPLY && h.seq == seq) {
			if (h.status) {
				close_fds(fd);
				return fab_fail(err, errlen, (int)h.status,
						"ibfabricd: %.*s",
						(int)(n > 200 ? 200 : n),
						(const char *)buf);
			}
			if ((size_t)n > repcap)
				n = (ssize_t)repcap;
			if (n)
				memcpy(rep, buf, (size_t)n);
			if (fds)
				memcpy(fds, fd, sizeof(fd));
			else
				close_fds(fd);
			return n;
		}
		close_fds(fd);
		soft_async(d, &h, buf);
again:
		clock_gettime(CLOCK_MONOTONIC, &t1);
		left = SOFT_CALL_TIMEOUT_MS -
		       (int)((t1.tv_sec - t0.tv_sec) * 1000 +
			     (t1.tv_nsec - t0.tv_nsec) / 1000000);
		if (left < 0)
			left = 0;
	}
}

static int soft_refresh(struct soft_dev *d, char *err, size_t errlen)
{
	struct fsp_port_info pi;
	ssize_t n;

	n = soft_call(d, FSP_PORT_QUERY, NULL, 0, &pi, sizeof(pi), NULL, err,
		      errlen);
	if (n < 0)
		return -1;
	if ((size_t)n != sizeof(pi))
		return fab_fail(err, errlen, EPROTO,
				"soft: short port info from ibfabricd");
	port_info_to_attr(&pi, &d->attr);
	return 0;
}

/* Watch fd (or nothing: -1) in the private epoll descriptor ep. */
static void ep_add(int ep, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };

	epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
}

static void close_sock(int ep, int *fd)
{
	if (*fd < 0)
		return;
	epoll_ctl(ep, EPOLL_CTL_DEL, *fd, NULL);
	close(*fd);
	*fd = -1;
}

static void arm_timer(struct soft_dev *d, unsigned int ms)
{
	struct itimerspec it = {
		.it_value.tv_sec = ms / 1000,
		.it_value.tv_nsec = (long)(ms % 1000) * 1000000 + 1,
	};

	timerfd_settime(d->tfd, 0, &it, NULL);
}

static void qp_drop_sock(struct soft_qp *q);
static void pool_free(struct soft_dev *d);
static struct soft_qp *pool_take(struct soft_dev *d,
				 const struct fab_qp_init *init);

/* Every socket closed, nothing mapped: so nothing polls readable. */
static void drop_sockets(struct soft_dev *d)
{
	struct soft_qp *q;
	struct soft_mad *m;

	pool_free(d);	/* their QPs went with ibfabricd */
	close_sock(d->epfd, &d->fd);
	for (q = d->qps; q; q = q->next)
		qp_drop_sock(q);
	for (m = d->mads; m; m = m->next)
		close_sock(m->epfd, &m->fd);
}

/* ibfabricd went away (end of file on any of our sockets): the port is
 * down until it is back. */
void soft_lost(struct soft_dev *d)
{
	if (!d->up)
		return;
	d->up = 0;
	drop_sockets(d);
	soft_cm_lost(d);
	d->attr.state = FAB_PORT_DOWN;
	evq_push(d, FAB_EV_PORT_ERR);
	d->backoff_ms = 0;
	arm_timer(d, 0);	/* at once: the first try, and PORT_ERR seen */
}

/* Connect and say HELLO: 0 and the port in d->attr, or -1. */
static int dev_connect(struct soft_dev *d, uint32_t flags, char *err,
		       size_t errlen)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct fsp_hello hello = { .version = FSP_VERSION, .flags = flags };
	struct fsp_port_info pi;
	ssize_t n;

	strcpy(sun.sun_path, d->path);
	d->fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (d->fd < 0)
		return fab_fail(err, errlen, errno, "soft: socket: %s",
				strerror(errno));
	if (connect(d->fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		fab_fail(err, errlen, errno, "soft: connect to ibfabricd at "
			 "%s: %s", d->path, strerror(errno));
		goto fail;
	}
	snprintf(hello.node, sizeof(hello.node), "%s", d->node);
	n = soft_call(d, FSP_HELLO, &hello, sizeof(hello), &pi, sizeof(pi),
		      NULL, err, errlen);
	if (n < 0)
		goto fail;
	if ((size_t)n != sizeof(pi)) {
		fab_fail(err, errlen, EPROTO,
			 "soft: short port info from ibfabricd");
		goto fail;
	}
	port_info_to_attr(&pi, &d->attr);
	fcntl(d->fd, F_SETFL, fcntl(d->fd, F_GETFL) | O_NONBLOCK);
	return 0;
fail:
	if (d->fd >= 0) {
		int e = errno;

		close(d->fd);
		d->fd = -1;
		errno = e;
	}
	return -1;
}

static int qp_connect(struct soft_dev *d, struct soft_qp *q, int again,
		      char *err, size_t errlen);
static int mad_connect(struct soft_dev *d, struct soft_mad *m, char *err,
		       size_t errlen);
static int att_replay(struct soft_qp *q);

/* The timer fired: try to attach again; on failure, later. */
static void soft_reattach(struct soft_dev *d)
{
	struct soft_qp *q;
	struct soft_mad *m;
	uint64_t exp;
	unsigned int i;

	if (read(d->tfd, &exp, sizeof(exp)) < 0 || d->up)
		return;
	d->reattaching = 1;
	d->nheld = 0;
	if (dev_connect(d, d->hello_flags | FSP_HELLO_REATTACH, NULL, 0) < 0)
		goto fail;
	for (q = d->qps; q; q = q->next)
		if (qp_connect(d, q, 1, NULL, 0) < 0 || att_replay(q) < 0)
			goto fail;
	for (m = d->mads; m; m = m->next)
		if (mad_connect(d, m, NULL, 0) < 0)
			goto fail;
	soft_cm_reattach(d);
	ep_add(d->epfd, d->fd);
	d->up = 1;
	d->reattaching = 0;
	evq_push(d, FAB_EV_PORT_ACTIVE);
	for (i = 0; i < d->nheld; i++)	/* CLIENT_REREGISTER, say */
		evq_push(d, d->held[i]);
	d->nheld = 0;
	return;
fail:
	d->reattaching = 0;
	drop_sockets(d);
	d->attr.state = FAB_PORT_DOWN;
	d->backoff_ms = d->backoff_ms ? d->backoff_ms * 2 : SOFT_BACKOFF_MIN_MS;
	if (d->backoff_ms > SOFT_BACKOFF_MAX_MS)
		d->backoff_ms = SOFT_BACKOFF_MAX_MS;
	arm_timer(d, d->backoff_ms);
}

/* A count from the environment: def when unset, at most max; 0, or -1
 * with the variable named in err. */
static int env_uint(const char *name, const char *what, unsigned int def,
		    unsigned int max, uint32_t *out, char *err, size_t errlen)
{
	const char *env = getenv(name);
	char *end;
	unsigned long v;

	*out = def;
	if (!env)
		return 0;
	errno = 0;
	v = strtoul(env, &end, 10);
	if (!*env || *end || errno || v > max || *env == '-')
		return fab_fail(err, errlen, EINVAL, "soft: %s '%s' is not a "
				"number of %s up to %u", name, env, what, max);
	*out = (uint32_t)v;
	return 0;
}

static struct fab_dev *soft_open(const char *arg, const char *node,
				 char *err, size_t errlen)
{
	struct soft_dev *d;
	const char *path = *arg ? arg : FAB_DEFAULT_SOFT_PATH, *env;
	int e;

	if (!node || !*node) {
		fab_fail(err, errlen, EINVAL, "soft: a node name is required");
		return NULL;
	}
	if (strlen(node) >= FSP_NODE_MAX) {
		fab_fail(err, errlen, ENAMETOOLONG, "soft: node name '%s' "
			 "longer than %d", node, FSP_NODE_MAX - 1);
		return NULL;
	}
	d = calloc(1, sizeof(*d));
	if (!d) {
		fab_fail(err, errlen, ENOMEM, "soft: out of memory");
		return NULL;
	}
	if (strlen(path) >= sizeof(d->path)) {
		free(d);
		fab_fail(err, errlen, ENAMETOOLONG,
			 "soft: socket path '%s' too long", path);
		return NULL;
	}
	strcpy(d->path, path);
	strcpy(d->node, node);
	d->fd = d->tfd = -1;
	d->cm_sock = d->cm_epfd = d->cm_efd = -1;
	d->base.prov = &fab_soft_provider;
	/* IBGW_SOFT_RINGS=0: QP sockets carry the packets (bursts) instead
	 * of shared rings; for comparisons and for tests of that path */
	env = getenv("IBGW_SOFT_RINGS");
	d->rings = !(env && !strcmp(env, "0"));
	if (env_uint("IBGW_SOFT_QP_POOL", "QPs", SOFT_QP_POOL,
		     SOFT_QP_POOL_MAX, &d->pool_max, err, errlen) < 0 ||
	    env_uint("IBGW_SOFT_ACK_DELAY_US", "microseconds",
		     SOFT_ACK_DELAY_US, SOFT_ACK_DELAY_MAX_US,
		     &d->ack_delay_us, err, errlen) < 0) {
		free(d);
		return NULL;
	}
	if (!strcmp(node, FAB_SOFT_OBSERVER))
		d->hello_flags |= FSP_HELLO_OBSERVER;
	d->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (d->epfd >= 0)
		d->tfd = timerfd_create(CLOCK_MONOTONIC,
					TFD_NONBLOCK | TFD_CLOEXEC);
	if (d->epfd < 0 || d->tfd < 0) {
		fab_fail(err, errlen, errno, "soft: epoll/timerfd: %s",
			 strerror(errno));
		goto fail;
	}
	/* the first attach fails plainly: nothing is running yet */
	if (dev_connect(d, d->hello_flags, err, errlen) < 0)
		goto fail;
	ep_add(d->epfd, d->fd);
	ep_add(d->epfd, d->tfd);
	d->up = 1;
	return &d->base;
fail:
	e = errno;
	if (d->tfd >= 0)
		close(d->tfd);
	if (d->epfd >= 0)
		close(d->epfd);
	free(d);
	errno = e;
	return NULL;
}

static void soft_close(struct fab_dev *dev)
{
	struct soft_dev *d = to_sdev(dev);

	pool_free(d);
	soft_rc_dev_free(d);
	if (d->fd >= 0)
		close(d->fd);
	close(d->tfd);
	close(d->epfd);
	free(d);
}

static int soft_query_port(struct fab_dev *dev, struct fab_port_attr *attr,
			   char *err, size_t errlen)
{
	struct soft_dev *d = to_sdev(dev);

	/* down: what the port was, in state DOWN */
	if (d->up && soft_refresh(d, err, errlen) < 0)
		return -1;
	*attr = d->attr;
	return 0;
}

static int soft_dev_fd(struct fab_dev *dev)
{
	return to_sdev(dev)->epfd;
}

static int soft_get_event(struct fab_dev *dev, struct fab_event *ev)
{
	static __thread uint8_t buf[FSP_MSG_MAX];
	struct soft_dev *d = to_sdev(dev);
	struct fsp_hdr h;
	ssize_t n;

	if (!d->up && !d->evq_len)
		soft_reattach(d);
	while (!d->evq_len && d->up) {
		n = fsp_recv(d->fd, &h, buf, sizeof(buf), NULL);
		if (n < 0) {
			if (errno == EAGAIN)
				break;
			soft_lost(d);	/* PORT_ERR */
			break;
		}
		soft_async(d, &h, buf);
	}
	if (d->evq_len) {
		ev->type = d->evq[d->evq_head];
		d->evq_head = (d->evq_head + 1) % SOFT_EVQ;
		d->evq_len--;
		/* keep the cached attributes right for packet building */
		if (d->up && (ev->type == FAB_EV_LID_CHANGE ||
		    ev->type == FAB_EV_PKEY_CHANGE ||
		    ev->type == FAB_EV_PORT_ACTIVE ||
		    ev->type == FAB_EV_SM_CHANGE ||
		    ev->type == FAB_EV_GID_CHANGE))
			soft_refresh(d, NULL, 0);
		return 1;
	}
	/* no DEVICE_FATAL: a soft port stays down while ibfabricd is away,
	 * however long, as a port whose cable is pulled */
	return 0;
}

static void setbufs(int fd)
{
	int sz = SOFT_SOCKBUF;

	setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
}

/* Map the rings ibfabricd passed (the memfd is closed here). */
static int map_rings(struct soft_qp *q, int mfd, char *err, size_t errlen)
{
	struct stat st;
	void *m = MAP_FAILED;
	int e = EPROTO;	/* not the size ibfabricd should have made */

	if (fstat(mfd, &st) == 0 && st.st_size == (off_t)FSP_SHM_BYTES) {
		m = mmap(NULL, FSP_SHM_BYTES, PROT_READ | PROT_WRITE,
			 MAP_SHARED, mfd, 0);
		e = errno;
	}
	close(mfd);
	if (m == MAP_FAILED)
		return fab_fail(err, errlen, e,
				"soft: cannot map the QP rings");
	q->shm = m;
	soft_ring_attach(q->shm, 1, &q->tx, &q->rx);
	q->armed = 1;	/* the RX ring starts out asking for a kick */
	return 0;
}

static void qp_drop_sock(struct soft_qp *q)
{
	close_sock(q->epfd, &q->fd);
	if (q->shm)
		munmap(q->shm, FSP_SHM_BYTES);
	q->shm = NULL;
	q->rx_len = q->rx_off = 0;
}

/* Make the QP at ibfabricd (again: with its number back). */
static int qp_connect(struct soft_dev *d, struct soft_qp *q, int again,
		      char *err, size_t errlen)
{
	struct fsp_qp_create_qpn req = {
		.c = { .type = q->base.type, .qkey = q->base.qkey,
		       .pkey_index = q->base.pkey_index, .flags = q->flags },
		.qpn = q->base.qpn,
	};
	struct fsp_qp_ref ref;
	int fds[FSP_FDS_MAX], fd;

	if (again)
		req.c.flags |= FSP_QP_QPN;
	if (soft_call(d, FSP_QP_CREATE, &req,
		      again ? sizeof(req) : sizeof(req.c), &ref, sizeof(ref),
		      fds, err, errlen) < 0)
		return -1;
	fd = fds[0];
	if (fd < 0) {
		if (fds[1] >= 0)
			close(fds[1]);
		return fab_fail(err, errlen, EPROTO,
				"soft: ibfabricd sent no QP socket");
	}
	if (fds[1] >= 0 && map_rings(q, fds[1], err, errlen) < 0) {
		close(fd);
		return -1;
	}
	if (again && ref.qpn != q->base.qpn) {	/* ibfabricd must honour it */
		close(fd);
		return fab_fail(err, errlen, EPROTO, "soft: QPN changed");
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	setbufs(fd);
	q->fd = fd;
	q->base.qpn = ref.qpn;
	q->pkey = d->attr.pkeys[q->base.pkey_index];
	ep_add(q->epfd, fd);
	return 0;
}

struct fab_qp *soft_qp_create(struct fab_dev *dev,
			      const struct fab_qp_init *init, char *err,
			      size_t errlen)
{
	struct soft_dev *d = to_sdev(dev);
	struct soft_qp *q;
	int e;

	if (init->pkey_index >= d->attr.npkeys ||
	    !d->attr.pkeys[init->pkey_index]) {
		fab_fail(err, errlen, EINVAL, "soft: P_Key index %u is not in "
			 "the port's table", init->pkey_index);
		return NULL;
	}
	if (init->type == FAB_QPT_RC && (q = pool_take(d, init)))
		return &q->base;
	q = calloc(1, sizeof(*q));
	if (!q || !(q->rxbuf = malloc(FSP_BURST_MAX))) {
		free(q);
		fab_fail(err, errlen, ENOMEM, "soft: out of memory");
		return NULL;
	}
	q->fd = q->tfd = -1;
	q->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (q->epfd < 0) {
		fab_fail(err, errlen, errno, "soft: epoll: %s",
			 strerror(errno));
		goto fail;
	}
	q->flags = FSP_QP_BURST | (d->rings ? FSP_QP_SHM : 0);
	q->base.dev = dev;
	q->base.type = init->type;
	q->base.qkey = init->qkey;
	q->base.pkey_index = init->pkey_index;
	if (qp_connect(d, q, 0, err, errlen) < 0)
		goto fail;
	q->next = d->qps;
	d->qps = q;
	return &q->base;
fail:
	e = errno;
	if (q->epfd >= 0)
		close(q->epfd);
	free(q->rxbuf);
	free(q);
	errno = e;
	return NULL;
}

/* Everything of a QP that is ours: ibfabricd's side is gone or going. */
static void qp_free(struct soft_qp *q)
{
	qp_drop_sock(q);
	soft_rc_qp_free(q);
	close(q->epfd);
	free(q->att);
	free(q->rxbuf);
	free(q);
}

static void pool_free(struct soft_dev *d)
{
	struct soft_qp *q;

	while ((q = d->pool)) {
		d->pool = q->next;
		qp_free(q);
	}
	d->npool = 0;
}

/* What ibfabricd delivered to the old QPN before the recycle: dropped,
 * as an HCA drops packets for a QP that is gone. */
static void rx_ring_flush(struct soft_qp *q)
{
	const uint8_t *pkt;
	size_t plen;
	int r;

	/* kicks waiting on the socket are read by the next receive (armed
	 * below); reading them here could find ibfabricd gone, and that
	 * frees the pool under pool_put */
	for (;;) {
		r = soft_ring_peek(&q->rx, &pkt, &plen);
		if (r < 0) {
			soft_ring_skip(&q->rx);
			break;
		}
		if (r == 0) {
			if (soft_ring_arm(&q->rx))
				continue;
			break;
		}
		soft_ring_next(&q->rx, plen);
	}
	soft_ring_release(&q->rx);
	q->armed = 1;
}

/*
 * Keep a destroyed RC QP for the next soft_qp_create: ibfabricd renews it
 * in place (FSP_QP_RECYCLE: a new QPN behind the same socket and rings),
 * so the next connection neither waits for a QP_CREATE nor pays for the
 * memfd, the mappings and the sockets (munmap alone was a tenth of the
 * CPU of a benchmark making SDP connections).  0 when kept.
 */
static int pool_put(struct soft_dev *d, struct soft_qp *q)
{
	struct fsp_qp_recycle rq = {
		.qpn = q->base.qpn, .pkey_index = q->base.pkey_index,
	};
	struct fsp_qp_ref ref;

	if (q->base.type != FAB_QPT_RC || !q->shm || q->fd < 0 || !d->up ||
	    d->npool >= d->pool_max || q->natt)
		return -1;
	if (soft_call(d, FSP_QP_RECYCLE, &rq, sizeof(rq), &ref, sizeof(ref),
		      NULL, NULL, 0) != (ssize_t)sizeof(ref) || q->fd < 0)
		return -1;
	soft_rc_qp_park(q);
	q->base.qpn = ref.qpn;
	q->base.cm = NULL;
	rx_ring_flush(q);
	q->next = d->pool;
	d->pool = q;
	d->npool++;
	return 0;
}

/* A kept QP for this P_Key index, now the caller's; NULL: none. */
static struct soft_qp *pool_take(struct soft_dev *d,
				 const struct fab_qp_init *init)
{
	struct soft_qp *q, **pp;

	for (pp = &d->pool; (q = *pp); pp = &q->next) {
		if (q->base.pkey_index != init->pkey_index)
			continue;
		*pp = q->next;
		d->npool--;
		q->base.qkey = init->qkey;
		q->pkey = d->attr.pkeys[q->base.pkey_index];
		q->next = d->qps;
		d->qps = q;
		return q;
	}
	return NULL;
}

void soft_qp_destroy(struct fab_qp *qp)
{
	struct soft_qp *q = to_sqp(qp), **pp;
	struct soft_dev *d = to_sdev(qp->dev);
	struct fsp_qp_ref ref = { .qpn = qp->qpn };

	for (pp = &d->qps; *pp; pp = &(*pp)->next)
		if (*pp == q) {
			*pp = q->next;
			break;
		}
	if (pool_put(d, q) == 0)
		return;
	/* closing the socketpair alone is enough; the request makes the
	 * release synchronous for the caller */
	if (q->fd >= 0)
		soft_call(d, FSP_QP_DESTROY, &ref, sizeof(ref), NULL, 0, NULL,
			  NULL, 0);
	qp_free(q);
}

static int soft_qp_fd(struct fab_qp *qp)
{
	return to_sqp(qp)->epfd;
}

/*
 * Send: the packets are built straight into bursts (FSP_QP_BURST), up to
 * SOFT_BURSTS messages per sendmmsg.  A burst the socket refuses is not
 * sent at all, so the count returned is always a prefix of wr[].
 */
#define SOFT_BURSTS	8

/* The packet headers of a work request, as the HCA fills them in. */
static void wr_to_ud(struct soft_qp *q, const struct fab_send_wr *w,
		     struct ib_ud *u)
{
	const struct soft_dev *d = to_sdev(q->base.dev);
	const struct fab_ah_attr *ah = &w->ah->attr;

	memset(u, 0, sizeof(*u));
	u->lrh.sl = ah->sl;
	u->lrh.dlid = ah->dlid;
	u->lrh.slid = d->attr.lid;
	u->has_grh = ah->is_global || ah->dlid >= FAB_LID_MCAST_MIN;
	if (u->has_grh) {
		u->grh.tclass = ah->traffic_class;
		u->grh.flow_label = ah->flow_label;
		u->grh.hoplmt = ah->hop_limit;
		u->grh.sgid = d->attr.gid;
		u->grh.dgid = ah->dgid;
	}
	u->bth.pkey = q->pkey;
	u->bth.destqp = w->remote_qpn;
	u->bth.psn = q->psn & 0xffffff;
	u->deth.qkey = (w->remote_qkey & FAB_QKEY_CONTROLLED) ?
		       q->base.qkey : w->remote_qkey;
	u->deth.srcqp = q->base.qpn;
	u->payload = w->buf;
	u->payload_len = w->len;
}

/* Send with rings: packets are built in the TX ring itself; one kick when
 * ibfabricd sleeps.  A full ring ends the batch (a full send queue). */
static int ring_send(struct soft_qp *q, const struct fab_send_wr *wr, int n)
{
	const struct soft_dev *d = to_sdev(q->base.dev);
	uint32_t mtu = (uint32_t)fab_mtu_to_bytes(d->attr.active_mtu);
	struct ib_ud u;
	uint8_t *slot;
	size_t len;
	int i;

	for (i = 0; i < n; i++) {
		if (wr[i].len > mtu) {	/* a UD message is at most one MTU */
			if (i == 0) {
				errno = EMSGSIZE;
				return -1;
			}
			break;
		}
		if (!(slot = soft_ring_reserve(&q->tx, IB_MAX_PKT)))
			break;
		wr_to_ud(q, &wr[i], &u);
		len = ib_ud_build(&u, slot, IB_MAX_PKT);
		if (!len)
			break;
		soft_ring_commit(&q->tx, len);
		q->psn++;
	}
	if (soft_ring_publish(&q->tx))
		soft_ring_kick(q->fd);
	return i;
}

static int soft_qp_send(struct fab_qp *qp, const struct fab_send_wr *wr, int n)
{
	static __thread uint8_t bursts[SOFT_BURSTS][FSP_BURST_MAX];
	struct soft_qp *q = to_sqp(qp);
	struct soft_dev *d = to_sdev(qp->dev);
	struct mmsghdr mm[SOFT_BURSTS];
	struct iovec iov[SOFT_BURSTS];
	int count[SOFT_BURSTS];
	uint32_t mtu = (uint32_t)fab_mtu_to_bytes(d->attr.active_mtu);
	int done = 0;

	if (q->fd < 0) {	/* the port is down: lost on the wire */
		d->tx_lost += (uint64_t)n;
		return n;
	}
	if (q->shm)
		return ring_send(q, wr, n);
	while (done < n) {
		int nb = 0, i = done, sent, b;
		size_t off = 0;

		while (i < n) {
			const struct fab_send_wr *w = &wr[i];
			struct ib_ud u;
			size_t len;

			if (off + FSP_BURST_REC + IB_MAX_PKT > FSP_BURST_MAX) {
				iov[nb].iov_len = off;
				if (++nb == SOFT_BURSTS)
					break;
				off = 0;
			}
			if (!off) {
				iov[nb].iov_base = bursts[nb];
				count[nb] = 0;
			}
			wr_to_ud(q, w, &u);
			/* as an HCA: a UD message is at most one MTU */
			len = w->len > mtu ? 0 :
			      ib_ud_build(&u, bursts[nb] + off + FSP_BURST_REC,
					  IB_MAX_PKT);
			if (!len) {
				if (i == 0) {
					errno = EMSGSIZE;
					return -1;
				}
				n = i;	/* send what came before it */
				break;
			}
			q->psn++;
			bursts[nb][off] = (uint8_t)(len >> 8);
			bursts[nb][off + 1] = (uint8_t)len;
			off += FSP_BURST_REC + len;
			count[nb]++;
			i++;
		}
		if (off && nb < SOFT_BURSTS)
			iov[nb++].iov_len = off;
		if (!nb)
			break;
		for (b = 0; b < nb; b++) {
			memset(&mm[b].msg_hdr, 0, sizeof(mm[b].msg_hdr));
			mm[b].msg_hdr.msg_iov = &iov[b];
			mm[b].msg_hdr.msg_iovlen = 1;
		}
		sent = sendmmsg(q->fd, mm, (unsigned int)nb, MSG_NOSIGNAL);
		if (sent < 0) {
			if (errno == EAGAIN || errno == EINTR)
				break;	/* send queue full */
			if (errno == EPIPE || errno == ECONNRESET) {
				/* ibfabricd is gone: the port goes down */
				soft_lost(d);
				d->tx_lost += (uint64_t)(n - done);
				return n;
			}
			if (done)
				break;
			return -1;
		}
		for (b = 0; b < sent; b++)
			done += count[b];
		if (sent < nb)
			break;
	}
	return done;
}

/* The next packet of the current burst, reading another when it is used
 * up: 1 and the packet in *pkt, *len; 0 nothing waiting, -1 error, -2 end of file. */
int soft_burst_next(struct soft_qp *q, const uint8_t **pkt, size_t *len)
{
	size_t l;
	ssize_t got;

	while (q->rx_off + FSP_BURST_REC > q->rx_len) {
		got = recv(q->fd, q->rxbuf, FSP_BURST_MAX, MSG_DONTWAIT);
		if (got < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : -1;
		if (got == 0)
			return -2;
		q->rx_len = (size_t)got;
		q->rx_off = 0;
	}
	l = (size_t)q->rxbuf[q->rx_off] << 8 | q->rxbuf[q->rx_off + 1];
	q->rx_off += FSP_BURST_REC;
	if (l > q->rx_len - q->rx_off)	/* ibfabricd framed it: a bug */
		l = q->rx_len - q->rx_off;
	*pkt = q->rxbuf + q->rx_off;
	*len = l;
	q->rx_off += l;
	return 1;
}

/* A received packet as a completion in *rv: 1, or 0 when it is dropped. */
static int complete(struct soft_qp *q, const uint8_t *pkt, size_t plen,
		    struct fab_recv *rv)
{
	const struct soft_dev *d = to_sdev(q->base.dev);
	struct ib_ud u;
	size_t room;
	int pi;

	/* ibfabricd checked the packet, CRCs included (see
	 * ib_ud_parse_checked); a framing failure here is a bug in one of
	 * us, and the datagram is dropped as an HCA would */
	if (ib_ud_parse_checked(pkt, plen, &u))
		return 0;
	rv->src_qp = u.deth.srcqp;
	rv->slid = u.lrh.slid;
	rv->sl = u.lrh.sl;
	pi = fab_pkey_find(&d->attr, u.bth.pkey);
	rv->pkey_index = pi < 0 ? q->base.pkey_index : (uint16_t)pi;
	rv->grh_present = (uint8_t)u.has_grh;
	rv->truncated = 0;
	if (rv->buf_len < FAB_GRH_LEN) {
		rv->truncated = 1;
		rv->byte_len = 0;
		return 1;
	}
	if (u.has_grh)
		ib_grh_encode(&u.grh, rv->buf);
	else
		memset(rv->buf, 0, FAB_GRH_LEN);
	room = rv->buf_len - FAB_GRH_LEN;
	if (u.payload_len > room) {
		rv->truncated = 1;
		memcpy(rv->buf + FAB_GRH_LEN, u.payload, room);
		rv->byte_len = (uint32_t)(FAB_GRH_LEN + room);
	} else {
		memcpy(rv->buf + FAB_GRH_LEN, u.payload, u.payload_len);
		rv->byte_len = (uint32_t)(FAB_GRH_LEN + u.payload_len);
	}
	return 1;
}

/*
 * Receive with rings: completions straight from the RX ring.  Kicks are
 * read off the socket only after we asked for one (there is none
 * otherwise); that read also sees ibfabricd's end of file.  Before
 * returning fewer than n we ask for a kick and look once more.
 */
int soft_qp_take_kicks(struct soft_qp *q)
{
	if (!q->armed)
		return 0;
	q->armed = 0;
	if (soft_ring_take_kicks(q->fd)) {
		soft_lost(to_sdev(q->base.dev));	/* PORT_ERR follows */
		return -1;
	}
	return 0;
}

static int ring_recv(struct soft_qp *q, struct fab_recv *rc, int n)
{
	const uint8_t *pkt;
	size_t plen;
	int out = 0, r, skipped = 0;

	if (soft_qp_take_kicks(q) < 0)
		return 0;
	while (out < n) {
		r = soft_ring_peek(&q->rx, &pkt, &plen);
		if (r < 0) {	/* ibfabricd wrote it: a bug in one of us */
			soft_ring_skip(&q->rx);
			if (skipped++)
				break;
			continue;
		}
		if (r == 0) {
			q->armed = 1;
			if (soft_ring_arm(&q->rx))
				continue;
			break;
		}
		out += complete(q, pkt, plen, &rc[out]);
		soft_ring_next(&q->rx, plen);
	}
	soft_ring_release(&q->rx);
	return out;
}

/*
 * Receive: fewer than n completions only when nothing is left, as with a
 * CQ polled empty; a caller that stops earlier must come back without
 * waiting for the descriptor (part of a burst may be buffered here).
 */
static int soft_qp_recv(struct fab_qp *qp, struct fab_recv *rc, int n)
{
	struct soft_qp *q = to_sqp(qp);
	struct soft_dev *d = to_sdev(qp->dev);
	int out = 0, r;

	if (q->fd < 0)
		return 0;
	if (q->shm)
		return ring_recv(q, rc, n);
	while (out < n) {
		struct fab_recv *rv = &rc[out];
		const uint8_t *pkt;
		size_t plen;

		r = soft_burst_next(q, &pkt, &plen);
		if (r == 0)
			break;
		if (r == -2) {	/* ibfabricd exited */
			soft_lost(d);	/* a PORT_ERR event follows */
			break;
		}
		if (r < 0) {
			if (out)
				break;
			return -1;	/* recv's errno */
		}
		out += complete(q, pkt, plen, rv);
	}
	return out;
}

static int soft_mcast(struct fab_qp *qp, uint16_t type,
		      const union fab_gid *mgid, uint16_t mlid, char *err,
		      size_t errlen)
{
	struct fsp_mcast m = { .qpn = qp->qpn, .mlid = mlid };

	memcpy(m.mgid, mgid->raw, 16);
	return soft_call(to_sdev(qp->dev), type, &m, sizeof(m), NULL, 0,
			 NULL, err, errlen) < 0 ? -1 : 0;
}

static int att_find(const struct soft_qp *q, const union fab_gid *mgid,
		    uint16_t mlid)
{
	unsigned int i;

	for (i = 0; i < q->natt; i++)
		if (q->att[i].mlid == mlid &&
		    !memcmp(q->att[i].mgid.raw, mgid->raw, 16))
			return (int)i;
	return -1;
}

/* The attachments again, at a new ibfabricd. */
static int att_replay(struct soft_qp *q)
{
	unsigned int i;

	for (i = 0; i < q->natt; i++)
		if (soft_mcast(&q->base, FSP_MCAST_ATTACH, &q->att[i].mgid,
			       q->att[i].mlid, NULL, 0) < 0 &&
		    errno == ECONNRESET)
			return -1;
	return 0;
}

/* Attachments are recorded, to be made again after ibfabricd restarts;
 * while the port is down they are only recorded. */
static int soft_attach(struct fab_qp *qp, const union fab_gid *mgid,
		       uint16_t mlid, char *err, size_t errlen)
{
	struct soft_qp *q = to_sqp(qp);

	if (q->fd >= 0 &&
	    soft_mcast(qp, FSP_MCAST_ATTACH, mgid, mlid, err, errlen) < 0)
		return -1;
	if (att_find(q, mgid, mlid) >= 0)
		return 0;
	if (q->natt == q->att_cap) {
		unsigned int cap = q->att_cap ? 2 * q->att_cap : 8;
		struct soft_att *a = realloc(q->att, cap * sizeof(*a));

		if (!a)
			return fab_fail(err, errlen, ENOMEM,
					"soft: out of memory");
		q->att = a;
		q->att_cap = cap;
	}
	q->att[q->natt].mgid = *mgid;
	q->att[q->natt++].mlid = mlid;
	return 0;
}

static int soft_detach(struct fab_qp *qp, const union fab_gid *mgid,
		       uint16_t mlid, char *err, size_t errlen)
{
	struct soft_qp *q = to_sqp(qp);
	int i = att_find(q, mgid, mlid);

	if (i >= 0)
		q->att[i] = q->att[--q->natt];
	if (q->fd < 0)
		return i < 0 ? fab_fail(err, errlen, EINVAL, "soft: detach: "
					"not attached") : 0;
	return soft_mcast(qp, FSP_MCAST_DETACH, mgid, mlid, err, errlen);
}

static struct fab_ah *soft_ah_create(struct fab_dev *dev,
				     const struct fab_ah_attr *attr,
				     char *err, size_t errlen)
{
	struct fab_ah *ah;

	if (attr->dlid == 0 || attr->dlid == FAB_LID_PERMISSIVE) {
		fab_fail(err, errlen, EINVAL, "soft: address handle with "
			 "DLID 0x%04x", attr->dlid);
		return NULL;
	}
	if (attr->dlid >= FAB_LID_MCAST_MIN && attr->dgid.raw[0] != 0xff) {
		fab_fail(err, errlen, EINVAL,
			 "soft: multicast DLID needs a multicast DGID");
		return NULL;
	}
	ah = calloc(1, sizeof(*ah));
	if (!ah) {
		fab_fail(err, errlen, ENOMEM, "soft: out of memory");
		return NULL;
	}
	ah->dev = dev;
	ah->attr = *attr;
	return ah;
}

static void soft_ah_destroy(struct fab_ah *ah)
{
	free(ah);
}

int fab_soft_inject(struct fab_dev *dev, const void *pkt, size_t len,
		    char *err, size_t errlen)
{
	if (dev->prov != &fab_soft_provider)
		return fab_fail(err, errlen, EOPNOTSUPP,
				"inject: not a soft fabric");
	return soft_call(to_sdev(dev), FSP_INJECT, pkt, len, NULL, 0, NULL,
			 err, errlen) < 0 ? -1 : 0;
}

void *fab_soft_qp_rings(struct fab_qp *qp)
{
	if (qp->dev->prov != &fab_soft_provider)
		return NULL;
	return to_sqp(qp)->shm;
}

int fab_soft_qp_sock(struct fab_qp *qp)
{
	if (qp->dev->prov != &fab_soft_provider)
		return -1;
	return to_sqp(qp)->fd;
}

int fab_soft_ctl(struct fab_dev *dev, const char *cmd, char *out, size_t cap,
		 char *err, size_t errlen)
{
	ssize_t n;

	if (dev->prov != &fab_soft_provider)
		return fab_fail(err, errlen, EOPNOTSUPP,
				"ctl: not a soft fabric");
	n = soft_call(to_sdev(dev), FSP_CTL, cmd, strlen(cmd), out, cap - 1,
		      NULL, err, errlen);
	if (n < 0)
		return -1;
	out[n] = '\0';
	return 0;
}

static int mad_connect(struct soft_dev *d, struct soft_mad *m, char *err,
		       size_t errlen)
{
	struct fsp_qp_create req = {
		.type = FAB_QPT_UD, .qkey = m->base.mgmt_class,
		.pkey_index = 0, .flags = FSP_QP_GSI,
	};
	struct fsp_qp_ref ref;
	int fds[FSP_FDS_MAX], fd;

	if (soft_call(d, FSP_QP_CREATE, &req, sizeof(req), &ref, sizeof(ref),
		      fds, err, errlen) < 0)
		return -1;
	fd = fds[0];
	if (fds[1] >= 0)
		close(fds[1]);
	if (fd < 0)
		return fab_fail(err, errlen, EPROTO,
				"soft: ibfabricd sent no MAD socket");
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	m->fd = fd;
	m->agent = ref.qpn;	/* a new one after a restart: TIDs differ */
	ep_add(m->epfd, fd);
	return 0;
}

static struct fab_mad_agent *soft_mad_open(struct fab_dev *dev,
					   uint8_t mgmt_class, char *err,
					   size_t errlen)
{
	struct soft_dev *d = to_sdev(dev);
	struct soft_mad *m = calloc(1, sizeof(*m));

	if (!m) {
		fab_fail(err, errlen, ENOMEM, "soft: out of memory");
		return NULL;
	}
	m->fd = -1;
	m->base.dev = dev;
	m->base.mgmt_class = mgmt_class;
	m->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (m->epfd < 0) {
		fab_fail(err, errlen, errno, "soft: epoll: %s",
			 strerror(errno));
		free(m);
		return NULL;
	}
	if (mad_connect(d, m, err, errlen) < 0) {
		int e = errno;

		close(m->epfd);
		free(m);
		errno = e;
		return NULL;
	}
	m->next = d->mads;
	d->mads = m;
	return &m->base;
}

static void soft_mad_close(struct fab_mad_agent *agent)
{
	struct soft_mad *m = (struct soft_mad *)agent, **pp;
	struct soft_dev *d = to_sdev(agent->dev);
	struct fsp_qp_ref ref = { .qpn = m->agent };

	for (pp = &d->mads; *pp; pp = &(*pp)->next)
		if (*pp == m) {
			*pp = m->next;
			break;
		}
	if (m->fd >= 0)
		soft_call(d, FSP_QP_DESTROY, &ref, sizeof(ref), NULL, 0, NULL,
			  NULL, 0);
	close_sock(m->epfd, &m->fd);
	close(m->epfd);
	free(m);
}

static int soft_mad_fd(struct fab_mad_agent *agent)
{
	return ((struct soft_mad *)agent)->epfd;
}

static int soft_mad_send(struct fab_mad_agent *agent,
			 const struct fab_mad_addr *to, const void *mad,
			 size_t len)
{
	struct soft_mad *m = (struct soft_mad *)agent;
	struct soft_dev *d = to_sdev(agent->dev);
	uint8_t pkt[IB_MAX_PKT], tmp[256];
	struct ib_ud u;
	size_t plen;
	ssize_t n;

	if (to->pkey_index >= d->attr.npkeys ||
	    !d->attr.pkeys[to->pkey_index]) {
		errno = EINVAL;	/* not in the port's P_Key table */
		return -1;
	}
	if (m->fd < 0)		/* the port is down: lost on the wire */
		return 0;
	memcpy(tmp, mad, len);
	/* the high half of the TID routes the response back to us */
	be32_put(tmp + 8, m->agent);
	memset(&u, 0, sizeof(u));
	u.lrh.sl = to->sl;
	u.lrh.dlid = to->lid;
	u.lrh.slid = d->attr.lid;
	u.bth.pkey = d->attr.pkeys[to->pkey_index];
	u.bth.destqp = to->qpn;
	u.bth.psn = m->psn++ & 0xffffff;
	u.deth.qkey = to->qkey;
	u.deth.srcqp = 1;
	if (to->grh_present) {	/* one GID per port: sgid_index is moot */
		u.has_grh = 1;
		u.grh.tclass = to->traffic_class;
		u.grh.flow_label = to->flow_label & 0xfffff;
		u.grh.hoplmt = to->hop_limit ? to->hop_limit : 64;
		u.grh.sgid = d->attr.gid;
		u.grh.dgid = to->gid;
	}
	u.payload = tmp;
	u.payload_len = len;
	plen = ib_ud_build(&u, pkt, sizeof(pkt));
	n = send(m->fd, pkt, plen, MSG_NOSIGNAL | MSG_DONTWAIT);
	if (n < 0 && (errno == EPIPE || errno == ECONNRESET)) {
		soft_lost(d);
		return 0;
	}
	if (n < 0)
		return -1;	/* EAGAIN: the queue is full */
	if (n != (ssize_t)plen) {
		errno = EIO;
		return -1;
	}
	return 0;
}

static int soft_mad_recv(struct fab_mad_agent *agent, void *buf, size_t cap,
			 struct fab_mad_addr *from)
{
	struct soft_mad *m = (struct soft_mad *)agent;
	struct soft_dev *d = to_sdev(agent->dev);
	uint8_t pkt[IB_MAX_PKT];
	struct ib_ud u;
	ssize_t n;
	int pi;

	for (;;) {
		if (m->fd < 0)
			return 0;
		n = recv(m->fd, pkt, sizeof(pkt), MSG_DONTWAIT);
		if (n < 0 && errno == ECONNRESET)
			n = 0;
		if (n < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : -1;
		if (n == 0) {	/* ibfabricd is gone: the port goes down */
			soft_lost(d);
			return 0;
		}
		if (ib_ud_parse(pkt, (size_t)n, &u) == IB_PKT_OK)
			break;
	}
	if (from) {
		memset(from, 0, sizeof(*from));
		from->lid = u.lrh.slid;
		from->sl = u.lrh.sl;
		from->qpn = u.deth.srcqp;
		from->qkey = u.deth.qkey;
		pi = fab_pkey_find(&d->attr, u.bth.pkey);
		from->pkey_index = pi < 0 ? 0 : (uint16_t)pi;
		if (u.has_grh) {
			from->grh_present = 1;
			from->hop_limit = u.grh.hoplmt;
			from->traffic_class = u.grh.tclass;
			from->flow_label = u.grh.flow_label;
			from->gid = u.grh.sgid;
		}
	}
	if (u.payload_len < cap)
		cap = u.payload_len;
	memcpy(buf, u.payload, cap);
	return (int)cap;
}

const struct fab_provider fab_soft_provider = {
	.name = "soft",
	.open = soft_open,
	.close = soft_close,
	.query_port = soft_query_port,
	.dev_fd = soft_dev_fd,
	.get_event = soft_get_event,
	.qp_create = soft_qp_create,
	.qp_destroy = soft_qp_destroy,
	.qp_fd = soft_qp_fd,
	.qp_send = soft_qp_send,
	.qp_recv = soft_qp_recv,
	.attach = soft_attach,
	.detach = soft_detach,
	.ah_create = soft_ah_create,
	.ah_destroy = soft_ah_destroy,
	.mad_open = soft_mad_open,
	.mad_close = soft_mad_close,
	.mad_fd = soft_mad_fd,
	.mad_send = soft_mad_send,
	.mad_recv = soft_mad_recv,
	.mr_reg = soft_mr_reg,
	.mr_dereg = soft_mr_dereg,
	.qp_post_send = soft_qp_post_send,
	.qp_post_recv = soft_qp_post_recv,
	.qp_poll = soft_qp_poll,
	.qp_set_error = soft_qp_set_error,
	.cm_fd = soft_cm_fd,
	.cm_get_event = soft_cm_get_event,
	.cm_listen = soft_cm_listen,
	.cm_create_id = soft_cm_create_id,
	.cm_qp_create = soft_cm_qp_create,
	.cm_connect = soft_cm_connect,
	.cm_accept = soft_cm_accept,
	.cm_reject = soft_cm_reject,
	.cm_disconnect = soft_cm_disconnect,
	.cm_destroy = soft_cm_destroy,
};

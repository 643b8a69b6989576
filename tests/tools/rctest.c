// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rctest: RC queue pairs and connection management over the fabric
 * interface, for the test scripts (tests/vm/rc_verbs.sh); it prints lines
 * they grep.
 *
 *   rctest -F SPEC server [--port P] [--conns K] [--count N] [--sizes LIST]
 *                         [--timeout MS]
 *   rctest -F SPEC client --dst GID [--port P] [--count N] [--sizes LIST]
 *                         [--pdata TEXT] [--pdata-len L] [--timeout MS]
 *
 * The server listens on FAB_CM_SID_TCP(P) (default 7471) at its port's
 * source GID and serves K connections (default 1) one after the other.
 * A REQ whose private data says "reject-me" is rejected with private data
 * "rejected-by-server"; any other is accepted with a REP carrying
 * "hello-from-server" and the address, rkey and length of a registered
 * buffer of 2 x 32 KiB.
 * The client connects with private data TEXT (default "hello-from-client";
 * --pdata-len pads it with 'x' to L bytes, to try the limits), then:
 *   1. sends N messages of each size in LIST (default 1,64,1000,1024,1025,
 *      4096,10000: past the RoCE MTU of 1024, so multi-packet), each byte
 *      a function of the message's number; the server checks every one;
 *   2. RDMA WRITEs a pattern into the first half of the server's buffer,
 *      and RDMA WRITE with immediate 0x1234abcd the second half; on the
 *      immediate's completion the server checks both halves, inverts the
 *      buffer and SENDs "flipped";
 *   3. RDMA READs the whole buffer back and checks it is inverted;
 *   4. disconnects.  Both sides report DISCONNECTED.  The server then
 *      counts its receives flushed by the error state, and posts one more
 *      send to the QP in error, which must complete in error.
 *
 *   rctest -F SPEC stream-server [--port P] [--out FILE] [--recv-delay MS]
 *   rctest -F SPEC stream-client --dst GID [--port P] [--in FILE]
 *                                [--sizes SIZE]
 *
 * Streams, for the reliability tests and benchmarks: the client SENDs the
 * bytes of FILE (default standard input) in messages of SIZE (the first of
 * --sizes, default 65536), RT_WINDOW in flight, then disconnects; the
 * server writes what it receives, in order, to FILE (default none: only
 * counted).  --recv-delay: the server posts no receive for MS after the
 * connection is up (RNR for the sender).  Both print "stream sent|recv
 * bytes N msgs M ms T" and, on the soft provider, the QP's transport
 * counters ("rc retransmits N ...").  A failed completion prints "error
 * stream: STATUS after T ms" and exits 3.
 *   rctest -F SPEC pingpong-server [--port P] [--sizes LIST]
 *   rctest -F SPEC pingpong-client --dst GID [--port P] [--count N]
 *                                  [--sizes LIST]
 *
 * Latency: the client SENDs a message of each size in LIST (default 64),
 * the server answers each with a SEND of the same bytes, one round trip
 * at a time, N (--count) per size; the client checks every answer and
 * prints per size "pingpong size S count N rtt_us_avg A p50 B p99 C"
 * (from posting the send to the answer's receive completion), then
 * disconnects.  The server's --sizes only sizes its receives (at least
 * the largest the client sends); it prints "pingpong served N" when the
 * client has disconnected and exits 0.
 *
 * --node N: the soft provider's node name (default "rctest").
 * --sid SID: the client connects to this service ID instead of port P's
 * (to knock on other services, such as IPoIB connected mode's), and the
 * stream-server listens on it (to stand in for one).
 *
 * Private data travels as [length byte][text], since rdma_cm zero-pads
 * what it delivers to the CM message's field size.
 * Exit: 0 when everything checked out, 2 rejected or unreachable, 1
 * anything else.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fabric/fabric.h"
#include "fabric/prov_soft.h"

#define RT_HALF		32768u
#define RT_BUF		(2 * RT_HALF)
#define RT_IMM		0x1234abcdu
#define RT_MAXSIZES	16
#define RT_RECVS	64	/* receives kept posted */
#define RT_WINDOW	32	/* sends in flight */
#define RT_MSGMAX	65536u	/* server, client */
#define RT_STREAMMAX	(16u << 20)	/* streams, ping-pong */

#define WR_RECV		0x10000u	/* wr_id: receive slot | this */
#define WR_SEND_MSG	1u
#define WR_WRITE	2u
#define WR_WRITE_IMM	3u
#define WR_READ		4u
#define WR_FLIPPED	5u
#define WR_PROBE	6u
#define WR_PING		7u
#define WR_PONG		8u

struct rt {
	const char *spec;
	const char *node;
	const char *in, *out;
	int recv_delay_ms;
	int sizes_set;
	uint64_t sid;		/* --sid: the service ID as given (client, stream-server) */
	uint16_t port;
	unsigned int conns, count, nsizes;
	uint32_t sizes[RT_MAXSIZES];
	const char *dst;
	const char *pdata;
	int pdata_len;
	int timeout_ms;
	struct timespec start;

	struct fab_dev *dev;
	struct fab_cm_id *listen, *id;
	struct fab_qp *qp;
	struct fab_mr *mr_msg, *mr_buf;
	uint8_t *msg;		/* RT_RECVS receive slots, then a send slot */
	uint8_t *buf;		/* the RDMA target (server) or source (client) */
	int established, disconnected;
};

static uint32_t rt_msgsz(const struct rt *t)
{
	uint32_t m = 16;
	unsigned int i;

	for (i = 0; i < t->nsizes; i++)
		if (t->sizes[i] > m)
			m = t->sizes[i];
	return m;
}

static uint8_t *rt_slot(const struct rt *t, unsigned int i)
{
	return t->msg + (size_t)i * rt_msgsz(t);
}

static uint8_t rt_msg_byte(uint32_t k, uint32_t j)
{
	return (uint8_t)(k * 31u + j);
}

static uint8_t rt_buf_byte(uint32_t j)
{
	return (uint8_t)(j * 13u + 5u);
}

static long rt_elapsed_ms(const struct rt *t)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - t->start.tv_sec) * 1000 +
	       (now.tv_nsec - t->start.tv_nsec) / 1000000;
}

static void rt_die(const char *what, const char *err)
{
	printf("error %s: %s\n", what, err);
	fflush(stdout);
	exit(1);
}

static void rt_pdata_text(const uint8_t *p, unsigned int len, char *out,
			  size_t outlen)
{
	unsigned int n = len ? p[0] : 0;

	if (n + 1 > len)
		n = len ? len - 1 : 0;
	if (n >= outlen)
		n = (unsigned int)outlen - 1;
	memcpy(out, p + 1, n);
	out[n] = '\0';
}

static uint8_t rt_pdata_make(uint8_t *p, size_t cap, const char *text)
{
	size_t n = strlen(text);

	if (n + 1 > cap)
		n = cap - 1;
	p[0] = (uint8_t)n;
	memcpy(p + 1, text, n);
	return (uint8_t)(n + 1);
}

static void rt_open(struct rt *t)
{
	char err[FAB_ERRLEN];

	t->dev = fab_open(t->spec, t->node, err, sizeof(err));
	if (!t->dev)
		rt_die("open", err);
	t->msg = calloc(RT_RECVS + 1, rt_msgsz(t));
	t->buf = calloc(1, RT_BUF);
	if (!t->msg || !t->buf)
		rt_die("alloc", strerror(errno));
	t->mr_msg = fab_mr_reg(t->dev, t->msg,
			       (size_t)(RT_RECVS + 1) * rt_msgsz(t),
			       FAB_ACCESS_LOCAL_WRITE, err, sizeof(err));
	if (!t->mr_msg)
		rt_die("mr_reg", err);
	t->mr_buf = fab_mr_reg(t->dev, t->buf, RT_BUF,
			       FAB_ACCESS_LOCAL_WRITE |
			       FAB_ACCESS_REMOTE_WRITE |
			       FAB_ACCESS_REMOTE_READ, err, sizeof(err));
	if (!t->mr_buf)
		rt_die("mr_reg", err);
}

static void rt_post_recv(struct rt *t, unsigned int slot)
{
	struct fab_sge sge = {
		.addr = (uintptr_t)rt_slot(t, slot),
		.length = rt_msgsz(t),
		.lkey = fab_mr_lkey(t->mr_msg),
	};
	struct fab_recv_wr wr = {
		.wr_id = WR_RECV | slot, .sg_list = &sge, .num_sge = 1,
	};

	if (fab_qp_post_recv(t->qp, &wr, 1) != 1)
		rt_die("post_recv", strerror(errno));
}

static void rt_qp(struct rt *t, struct fab_cm_id *id)
{
	struct fab_qp_init init = {
		.type = FAB_QPT_RC, .max_send = 2 * RT_WINDOW,
		.max_recv = RT_RECVS,
	};
	char err[FAB_ERRLEN];
	unsigned int i;

	t->qp = fab_cm_qp_create(id, &init, err, sizeof(err));
	if (!t->qp)
		rt_die("cm_qp_create", err);
	if (t->recv_delay_ms)
		return;	/* posted later (rt_stream_server) */
	for (i = 0; i < RT_RECVS; i++)
		rt_post_recv(t, i);
}

/* Wait for the CM fd or the QP's, up to what is left of the timeout. */
static void rt_wait(struct rt *t, const char *what)
{
	struct pollfd p[2] = {
		{ .fd = fab_cm_fd(t->dev), .events = POLLIN },
		{ .fd = t->qp ? fab_qp_fd(t->qp) : -1, .events = POLLIN },
	};
	long left = t->timeout_ms - rt_elapsed_ms(t);

	if (left <= 0) {
		printf("error timeout waiting for %s\n", what);
		fflush(stdout);
		exit(1);
	}
	poll(p, 2, left > 200 ? 200 : (int)left);
}

/* One completion (blocking up to the timeout); CM events on the way are
 * handled by cm (may be NULL: then they are fatal but DISCONNECTED). */
static int rt_cm_event(struct rt *t, struct fab_cm_event *ev)
{
	int r = fab_cm_get_event(t->dev, ev);

	if (r < 0)
		rt_die("cm_get_event", strerror(errno));
	if (r == 1)	/* the timeout counts from the last thing seen */
		clock_gettime(CLOCK_MONOTONIC, &t->start);
	if (r == 1 && ev->type == FAB_CM_EV_DISCONNECTED) {
		printf("disconnected\n");
		t->disconnected = 1;
	}
	return r;
}

static void rt_wc(struct rt *t, struct fab_wc *wc, const char *what)
{
	struct fab_cm_event ev;

	for (;;) {
		int r = fab_qp_poll(t->qp, wc, 1);

		if (r < 0)
			rt_die("qp_poll", strerror(errno));
		if (r == 1) {
			clock_gettime(CLOCK_MONOTONIC, &t->start);
			return;
		}
		while (rt_cm_event(t, &ev) == 1) {
			if (ev.type != FAB_CM_EV_DISCONNECTED)
				printf("event %s\n", fab_cm_event_name(ev.type));
		}
		rt_wait(t, what);
	}
}

static void rt_wc_ok(const struct fab_wc *wc, const char *what)
{
	if (wc->status != FAB_WC_SUCCESS) {
		printf("error %s: completion wr_id 0x%" PRIx64 " %s "
		       "(vendor 0x%x)\n", what, wc->wr_id,
		       fab_wc_status_name(wc->status), wc->vendor_err);
		fflush(stdout);
		exit(1);
	}
}

/* ---- server ------------------------------------------------------------- */

static void rt_srv_reply(struct rt *t, struct fab_cm_id *id,
			 const char *text)
{
	uint8_t p[FAB_CM_REP_PRIV];
	struct fab_cm_param cp = { .private_data = p };
	uint64_t addr = (uintptr_t)t->buf;
	uint32_t rkey = fab_mr_rkey(t->mr_buf), len = RT_BUF;
	char err[FAB_ERRLEN];
	uint8_t n;

	if (!strcmp(text, "reject-me")) {
		n = rt_pdata_make(p, sizeof(p), "rejected-by-server");
		if (fab_cm_reject(id, p, n, err, sizeof(err)) < 0)
			rt_die("cm_reject", err);
		printf("rejected request pdata '%s'\n", text);
		fab_cm_destroy(id);
		return;
	}
	rt_qp(t, id);
	n = rt_pdata_make(p, 64, "hello-from-server");
	memcpy(p + n, &addr, 8);
	memcpy(p + n + 8, &rkey, 4);
	memcpy(p + n + 12, &len, 4);
	cp.private_data_len = (uint8_t)(n + 16);
	if (fab_cm_accept(id, &cp, err, sizeof(err)) < 0)
		rt_die("cm_accept", err);
	t->id = id;
	printf("accepted qpn 0x%06x\n", fab_qp_num(t->qp));
}

/* Until a connection is established (1) or the server is done (0). */
static void rt_srv_accept(struct rt *t)
{
	struct fab_cm_event ev;
	char text[FAB_CM_PRIV_MAX], gid[64];

	while (!t->established) {
		while (rt_cm_event(t, &ev) == 1) {
			switch (ev.type) {
			case FAB_CM_EV_CONNECT_REQUEST:
				rt_pdata_text(ev.private_data,
					      ev.private_data_len, text,
					      sizeof(text));
				fab_gid_to_str(&ev.peer.gid, gid, sizeof(gid));
				printf("request pdata '%s' len %u peer %s "
				       "peer_qpn 0x%06x\n", text,
				       ev.private_data_len, gid, ev.peer_qpn);
				if (t->id) {	/* one at a time */
					fab_cm_reject(ev.id, NULL, 0, NULL, 0);
					fab_cm_destroy(ev.id);
				} else
					rt_srv_reply(t, ev.id, text);
				break;
			case FAB_CM_EV_ESTABLISHED:
				printf("established\n");
				t->established = 1;
				break;
			default:
				printf("event %s status %d\n",
				       fab_cm_event_name(ev.type), ev.status);
				break;
			}
		}
		fflush(stdout);
		if (!t->established)
			rt_wait(t, "a connection");
	}
}

static void rt_srv_send_flipped(struct rt *t)
{
	uint8_t *s = rt_slot(t, RT_RECVS);
	struct fab_sge sge = {
		.addr = (uintptr_t)s, .length = 7,
		.lkey = fab_mr_lkey(t->mr_msg),
	};
	struct fab_rc_wr wr = {
		.wr_id = WR_FLIPPED, .opcode = FAB_WR_SEND,
		.flags = FAB_SEND_SIGNALED, .sg_list = &sge, .num_sge = 1,
	};

	memcpy(s, "flipped", 7);
	if (fab_qp_post_send(t->qp, &wr, 1) != 1)
		rt_die("post_send", strerror(errno));
}

static int rt_check_msg(const struct rt *t, const uint8_t *m, uint32_t len,
			uint32_t k)
{
	uint32_t want = t->sizes[k / t->count], j;

	if (len != want)
		return 0;
	for (j = 0; j < len; j++)
		if (m[j] != rt_msg_byte(k, j))
			return 0;
	return 1;
}

static void rt_srv_check_buf(struct rt *t)
{
	uint32_t j, bad = 0;

	for (j = 0; j < RT_BUF; j++)
		if (t->buf[j] != rt_buf_byte(j))
			bad++;
	if (bad) {
		printf("error write: %u of %u bytes wrong\n", bad, RT_BUF);
		exit(1);
	}
	for (j = 0; j < RT_BUF; j++)
		t->buf[j] = (uint8_t)~t->buf[j];
}

/* After the DREQ: the receives still posted are flushed, and a send to
 * the QP in error completes in error (or is refused). */
static void rt_srv_after(struct rt *t, unsigned int flushed)
{
	struct fab_sge sge = {
		.addr = (uintptr_t)rt_slot(t, RT_RECVS), .length = 8,
		.lkey = fab_mr_lkey(t->mr_msg),
	};
	struct fab_rc_wr wr = {
		.wr_id = WR_PROBE, .opcode = FAB_WR_SEND,
		.flags = FAB_SEND_SIGNALED, .sg_list = &sge, .num_sge = 1,
	};
	struct fab_wc wc;

	while (flushed < RT_RECVS) {
		rt_wc(t, &wc, "flushed receives");
		if (!(wc.wr_id & WR_RECV) || wc.status != FAB_WC_WR_FLUSH_ERR) {
			printf("error flush: wr_id 0x%" PRIx64 " %s\n",
			       wc.wr_id, fab_wc_status_name(wc.status));
			exit(1);
		}
		flushed++;
	}
	printf("flushed %u receives\n", flushed);
	if (fab_qp_post_send(t->qp, &wr, 1) != 1) {
		printf("post-in-error: refused %s\n", strerror(errno));
		return;
	}
	rt_wc(t, &wc, "the send to a QP in error");
	printf("post-in-error: completion %s recv %u\n",
	       fab_wc_status_name(wc.status), wc.recv);
}

static void rt_srv_conn(struct rt *t)
{
	uint32_t total = t->count * t->nsizes, k = 0, bad = 0, bytes = 0;
	int write_done = 0;
	unsigned int flushed = 0;
	struct fab_wc wc;

	memset(t->buf, 0, RT_BUF);
	rt_srv_accept(t);
	fflush(stdout);
	while (!t->disconnected) {
		rt_wc(t, &wc, "messages");
		if (wc.status == FAB_WC_WR_FLUSH_ERR && (wc.wr_id & WR_RECV)) {
			flushed = 1;	/* the peer went; counted below */
			break;
		}
		rt_wc_ok(&wc, "server");
		if (!wc.recv)
			continue;	/* "flipped" went */
		/* the slot is checked before it is posted again: a posted
		 * buffer is the HCA's to write at any time */
		if (wc.opcode != FAB_WC_RECV_RDMA_WITH_IMM) {
			if (k >= total ||
			    !rt_check_msg(t, rt_slot(t, wc.wr_id & 0xffff),
					  wc.byte_len, k))
				bad++;
			bytes += wc.byte_len;
		}
		rt_post_recv(t, (unsigned int)(wc.wr_id & 0xffff));
		if (wc.opcode == FAB_WC_RECV_RDMA_WITH_IMM) {
			if (!wc.imm_valid || wc.imm_data != RT_IMM) {
				printf("error imm 0x%08x\n", wc.imm_data);
				exit(1);
			}
			rt_srv_check_buf(t);
			printf("write ok imm 0x%08x bytes %u\n", wc.imm_data,
			       RT_BUF);
			rt_srv_send_flipped(t);
			write_done = 1;
			fflush(stdout);
			/* now the client reads, then disconnects */
			while (!t->disconnected) {
				rt_wc(t, &wc, "the disconnect");
				if (wc.status == FAB_WC_WR_FLUSH_ERR &&
				    (wc.wr_id & WR_RECV)) {
					flushed = 1;
					break;
				}
				rt_wc_ok(&wc, "server");
				if (wc.recv)	/* nothing more is sent */
					rt_post_recv(t, wc.wr_id & 0xffff);
			}
			break;
		}
		if (++k == total)
			printf("recv ok %u bad %u bytes %u\n", k - bad, bad,
			       bytes);
		fflush(stdout);
	}
	while (!t->disconnected) {
		struct fab_cm_event ev;

		while (rt_cm_event(t, &ev) == 1)
			;
		if (!t->disconnected)
			rt_wait(t, "DISCONNECTED");
	}
	if (!write_done || k != total || bad) {
		printf("error connection ended early: %u of %u messages, "
		       "%u bad, write %s\n", k, total, bad,
		       write_done ? "done" : "not done");
		exit(1);
	}
	rt_srv_after(t, flushed);	/* one may have been seen above */
	fab_cm_destroy(t->id);
	t->id = NULL;
	t->qp = NULL;
	t->established = t->disconnected = 0;
}

static int rt_server(struct rt *t)
{
	struct fab_cm_addr a = { .service_id = FAB_CM_SID_TCP(t->port) };
	char err[FAB_ERRLEN];
	unsigned int c;

	rt_open(t);
	t->listen = fab_cm_listen(t->dev, &a, 0, NULL, err, sizeof(err));
	if (!t->listen)
		rt_die("cm_listen", err);
	printf("listening port %u\n", t->port);
	fflush(stdout);
	for (c = 0; c < t->conns; c++)
		rt_srv_conn(t);
	printf("served %u\n", c);
	fab_cm_destroy(t->listen);
	fab_mr_dereg(t->mr_msg);
	fab_mr_dereg(t->mr_buf);
	fab_close(t->dev);
	return 0;
}

/* ---- streams ------------------------------------------------------------ */

static void rt_rc_counters(struct rt *t)
{
	char line[512];

	if (t->qp && fab_soft_qp_rc_counters(t->qp, line, sizeof(line)) > 0)
		printf("rc %s\n", line);
}

static void rt_stream_fail(struct rt *t, const struct fab_wc *wc)
{
	printf("error stream: %s after %ld ms\n",
	       fab_wc_status_name(wc->status), rt_elapsed_ms(t));
	rt_rc_counters(t);
	fflush(stdout);
	exit(3);
}

static int rt_stream_server(struct rt *t)
{
	struct fab_cm_addr a = {
		.service_id = t->sid ? t->sid : FAB_CM_SID_TCP(t->port),
	};
	struct timespec t0, now;
	uint64_t bytes = 0, msgs = 0;
	char err[FAB_ERRLEN];
	FILE *out = NULL;
	struct fab_wc wc[16];
	int posted = 0, i, n;
	long ms;

	rt_open(t);
	if (t->out && !(out = fopen(t->out, "w")))
		rt_die(t->out, strerror(errno));
	t->listen = fab_cm_listen(t->dev, &a, 0, NULL, err, sizeof(err));
	if (!t->listen)
		rt_die("cm_listen", err);
	printf("listening port %u\n", t->port);
	fflush(stdout);
	rt_srv_accept(t);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	posted = !t->recv_delay_ms;	/* rt_qp posted them */
	while (!t->disconnected) {
		struct fab_cm_event ev;

		clock_gettime(CLOCK_MONOTONIC, &now);
		ms = (now.tv_sec - t0.tv_sec) * 1000 +
		     (now.tv_nsec - t0.tv_nsec) / 1000000;
		if (!posted && ms >= t->recv_delay_ms) {
			for (i = 0; i < RT_RECVS; i++)
				rt_post_recv(t, (unsigned int)i);
			posted = 1;
			if (t->recv_delay_ms)
				printf("receives posted after %ld ms\n", ms);
		}
		n = fab_qp_poll(t->qp, wc, 16);
		if (n < 0)
			rt_die("qp_poll", strerror(errno));
		for (i = 0; i < n; i++) {
			if (wc[i].status == FAB_WC_WR_FLUSH_ERR && t->disconnected)
				continue;
			if (wc[i].status != FAB_WC_SUCCESS) {
				if (wc[i].status == FAB_WC_WR_FLUSH_ERR)
					continue;	/* the DREQ came */
				rt_stream_fail(t, &wc[i]);
			}
			if (!wc[i].recv)
				continue;
			if (out && fwrite(rt_slot(t, wc[i].wr_id & 0xffff), 1,
					  wc[i].byte_len, out) != wc[i].byte_len)
				rt_die("write", strerror(errno));
			bytes += wc[i].byte_len;
			msgs++;
			rt_post_recv(t, (unsigned int)(wc[i].wr_id & 0xffff));
		}
		if (n)
			clock_gettime(CLOCK_MONOTONIC, &t->start);
		while (rt_cm_event(t, &ev) == 1)
			;
		if (n < 16 && !t->disconnected)
			rt_wait(t, "stream data");
	}
	/* what arrived before the DREQ is in the CQ still */
	while ((n = fab_qp_poll(t->qp, wc, 16)) > 0) {
		for (i = 0; i < n; i++) {
			if (wc[i].status != FAB_WC_SUCCESS || !wc[i].recv)
				continue;
			if (out && fwrite(rt_slot(t, wc[i].wr_id & 0xffff), 1,
					  wc[i].byte_len, out) != wc[i].byte_len)
				rt_die("write", strerror(errno));
			bytes += wc[i].byte_len;
			msgs++;
		}
	}
	if (out && fclose(out) != 0)
		rt_die("close", strerror(errno));
	clock_gettime(CLOCK_MONOTONIC, &now);
	printf("stream recv bytes %" PRIu64 " msgs %" PRIu64 " ms %ld\n",
	       bytes, msgs, (long)((now.tv_sec - t0.tv_sec) * 1000 +
				   (now.tv_nsec - t0.tv_nsec) / 1000000));
	rt_rc_counters(t);
	fflush(stdout);
	fab_cm_destroy(t->id);
	fab_cm_destroy(t->listen);
	fab_mr_dereg(t->mr_msg);
	fab_mr_dereg(t->mr_buf);
	fab_close(t->dev);
	return 0;
}

/* ---- client ------------------------------------------------------------- */

struct rt_remote {
	uint64_t addr;
	uint32_t rkey, len;
};

/* 0 established, 2 rejected/unreachable (printed), exits on errors */
static int rt_cli_connect(struct rt *t, struct rt_remote *rem)
{
	struct fab_cm_addr dst = {
		.service_id = t->sid ? t->sid : FAB_CM_SID_TCP(t->port),
	};
	uint8_t p[256];
	struct fab_cm_param cp = { .private_data = p };
	struct fab_cm_event ev;
	char err[FAB_ERRLEN], text[FAB_CM_PRIV_MAX];
	size_t n;

	if (fab_gid_from_str(t->dst, &dst.gid) < 0)
		rt_die("dst", "not a GID (IPv4 as ::ffff:a.b.c.d)");
	n = rt_pdata_make(p, sizeof(p), t->pdata);
	while ((int)n < t->pdata_len && n < 255)
		p[n++] = 'x';
	cp.private_data_len = (uint8_t)n;
	t->id = fab_cm_create_id(t->dev, NULL, err, sizeof(err));
	if (!t->id)
		rt_die("cm_create_id", err);
	rt_qp(t, t->id);
	if (fab_cm_connect(t->id, &dst, &cp, err, sizeof(err)) < 0) {
		printf("connect refused %s: %s\n",
		       errno == EINVAL ? "EINVAL" : strerror(errno), err);
		return 1;
	}
	for (;;) {
		while (rt_cm_event(t, &ev) == 1) {
			rt_pdata_text(ev.private_data, ev.private_data_len,
				      text, sizeof(text));
			switch (ev.type) {
			case FAB_CM_EV_ESTABLISHED:
				n = (size_t)ev.private_data[0] + 1;
				memcpy(&rem->addr, ev.private_data + n, 8);
				memcpy(&rem->rkey, ev.private_data + n + 8, 4);
				memcpy(&rem->len, ev.private_data + n + 12, 4);
				printf("established pdata '%s' len %u "
				       "peer_qpn 0x%06x rkey 0x%08x bytes %u\n",
				       text, ev.private_data_len, ev.peer_qpn,
				       rem->rkey, rem->len);
				return 0;
			case FAB_CM_EV_REJECTED:
				printf("rejected reason %d pdata '%s'\n",
				       ev.status, text);
				return 2;
			case FAB_CM_EV_UNREACHABLE:
			case FAB_CM_EV_CONNECT_ERROR:
				printf("%s %s\n", ev.type ==
				       FAB_CM_EV_UNREACHABLE ? "unreachable" :
				       "connect-error", strerror(ev.status));
				return 2;
			default:
				printf("event %s\n",
				       fab_cm_event_name(ev.type));
				break;
			}
		}
		rt_wait(t, "the connection");
	}
}

static void rt_cli_send_all(struct rt *t)
{
	uint32_t total = t->count * t->nsizes, k, done = 0, inflight = 0;
	uint32_t msz = rt_msgsz(t);
	uint8_t *src = malloc((size_t)RT_WINDOW * msz);
	struct fab_mr *mr;
	char err[FAB_ERRLEN];
	uint64_t bytes = 0;
	struct fab_wc wc;

	if (!src)
		rt_die("alloc", strerror(errno));
	mr = fab_mr_reg(t->dev, src, (size_t)RT_WINDOW * msz, 0, err,
			sizeof(err));
	if (!mr)
		rt_die("mr_reg", err);
	for (k = 0; k < total || inflight; ) {
		if (k < total && inflight < RT_WINDOW) {
			uint32_t sz = t->sizes[k / t->count], j;
			uint8_t *m = src + (size_t)(k % RT_WINDOW) * msz;
			struct fab_sge sge = {
				.addr = (uintptr_t)m, .length = sz,
				.lkey = fab_mr_lkey(mr),
			};
			struct fab_rc_wr wr = {
				.wr_id = WR_SEND_MSG, .opcode = FAB_WR_SEND,
				.flags = FAB_SEND_SIGNALED, .sg_list = &sge,
				.num_sge = 1,
			};

			for (j = 0; j < sz; j++)
				m[j] = rt_msg_byte(k, j);
			if (fab_qp_post_send(t->qp, &wr, 1) != 1)
				rt_die("post_send", strerror(errno));
			bytes += sz;
			k++;
			inflight++;
			continue;
		}
		rt_wc(t, &wc, "send completions");
		rt_wc_ok(&wc, "send");
		if (wc.recv) {
			rt_post_recv(t, wc.wr_id & 0xffff);
			continue;
		}
		inflight--;
		done++;
	}
	printf("sent %u bytes %" PRIu64 "\n", done, bytes);
	fab_mr_dereg(mr);
	free(src);
}

static void rt_cli_rdma(struct rt *t, const struct rt_remote *rem,
			enum fab_wr_opcode op, uint32_t off, uint32_t len,
			uint64_t id)
{
	struct fab_sge sge = {
		.addr = (uintptr_t)t->buf + off, .length = len,
		.lkey = fab_mr_lkey(t->mr_buf),
	};
	struct fab_rc_wr wr = {
		.wr_id = id, .opcode = op, .flags = FAB_SEND_SIGNALED,
		.sg_list = &sge, .num_sge = 1, .imm_data = RT_IMM,
		.remote_addr = rem->addr + off, .rkey = rem->rkey,
	};

	if (fab_qp_post_send(t->qp, &wr, 1) != 1)
		rt_die("post_send (rdma)", strerror(errno));
}

/* Wait for the send completion with this wr_id, noting a "flipped". */
static void rt_cli_wait(struct rt *t, uint64_t id, int *flipped)
{
	struct fab_wc wc;

	for (;;) {
		rt_wc(t, &wc, "an RDMA completion");
		rt_wc_ok(&wc, "rdma");
		if (wc.recv) {
			uint8_t *m = rt_slot(t, wc.wr_id & 0xffff);

			if (wc.byte_len == 7 && !memcmp(m, "flipped", 7))
				*flipped = 1;
			rt_post_recv(t, wc.wr_id & 0xffff);
			if (id == ~0ull && *flipped)
				return;
			continue;
		}
		if (wc.wr_id == id || (id == ~0ull && *flipped))
			return;
	}
}

static int rt_cli_rdma_all(struct rt *t, const struct rt_remote *rem)
{
	uint32_t j, bad = 0;
	int flipped = 0;

	if (rem->len < RT_BUF)
		rt_die("rdma", "the server's buffer is too small");
	for (j = 0; j < RT_BUF; j++)
		t->buf[j] = rt_buf_byte(j);
	rt_cli_rdma(t, rem, FAB_WR_RDMA_WRITE, 0, RT_HALF, WR_WRITE);
	rt_cli_rdma(t, rem, FAB_WR_RDMA_WRITE_WITH_IMM, RT_HALF, RT_HALF,
		    WR_WRITE_IMM);
	rt_cli_wait(t, WR_WRITE_IMM, &flipped);
	printf("write ok bytes %u imm 0x%08x\n", RT_BUF, RT_IMM);
	while (!flipped)
		rt_cli_wait(t, ~0ull, &flipped);
	memset(t->buf, 0, RT_BUF);
	rt_cli_rdma(t, rem, FAB_WR_RDMA_READ, 0, RT_BUF, WR_READ);
	rt_cli_wait(t, WR_READ, &flipped);
	for (j = 0; j < RT_BUF; j++) {
		uint8_t want = rt_buf_byte(j) ^ 0xffu;

		if (t->buf[j] != want)
			bad++;
	}
	if (bad) {
		printf("error read: %u of %u bytes not as the server left "
		       "them\n", bad, RT_BUF);
		return -1;
	}
	printf("read ok bytes %u (inverted by the server)\n", RT_BUF);
	return 0;
}

static int rt_client(struct rt *t)
{
	struct rt_remote rem;
	struct fab_cm_event ev;
	char err[FAB_ERRLEN];
	int r;

	rt_open(t);
	r = rt_cli_connect(t, &rem);
	fflush(stdout);
	if (r)
		return r;
	rt_cli_send_all(t);
	if (rt_cli_rdma_all(t, &rem) < 0)
		return 1;
	if (fab_cm_disconnect(t->id, err, sizeof(err)) < 0)
		rt_die("cm_disconnect", err);
	printf("disconnect sent\n");
	fflush(stdout);
	while (!t->disconnected) {
		while (rt_cm_event(t, &ev) == 1)
			;
		if (!t->disconnected)
			rt_wait(t, "DISCONNECTED");
	}
	fab_cm_destroy(t->id);
	fab_mr_dereg(t->mr_msg);
	fab_mr_dereg(t->mr_buf);
	fab_close(t->dev);
	return 0;
}

static int rt_stream_client(struct rt *t)
{
	uint32_t msz = t->sizes[0], inflight = 0;
	struct timespec t0, now;
	uint64_t bytes = 0, msgs = 0;
	struct rt_remote rem;
	struct fab_cm_event ev;
	char err[FAB_ERRLEN];
	uint8_t *src;
	struct fab_mr *mr;
	FILE *in = stdin;
	int eof = 0, r, i, n;
	struct fab_wc wc[16];
	unsigned int next = 0;

	rt_open(t);
	if (t->in && !(in = fopen(t->in, "r")))
		rt_die(t->in, strerror(errno));
	src = malloc((size_t)RT_WINDOW * msz);
	if (!src)
		rt_die("alloc", strerror(errno));
	mr = fab_mr_reg(t->dev, src, (size_t)RT_WINDOW * msz, 0, err,
			sizeof(err));
	if (!mr)
		rt_die("mr_reg", err);
	r = rt_cli_connect(t, &rem);
	fflush(stdout);
	if (r)
		return r;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!eof || inflight) {
		while (!eof && inflight < RT_WINDOW) {
			uint8_t *m = src + (size_t)next * msz;
			size_t got = fread(m, 1, msz, in);
			struct fab_sge sge = {
				.addr = (uintptr_t)m, .length = (uint32_t)got,
				.lkey = fab_mr_lkey(mr),
			};
			struct fab_rc_wr wr = {
				.wr_id = next, .opcode = FAB_WR_SEND,
				.flags = FAB_SEND_SIGNALED, .sg_list = &sge,
				.num_sge = 1,
			};

			if (got < msz)
				eof = 1;
			if (!got)
				break;
			if (fab_qp_post_send(t->qp, &wr, 1) != 1)
				rt_die("post_send", strerror(errno));
			next = (next + 1) % RT_WINDOW;
			inflight++;
			bytes += got;
			msgs++;
		}
		n = fab_qp_poll(t->qp, wc, 16);
		if (n < 0)
			rt_die("qp_poll", strerror(errno));
		for (i = 0; i < n; i++) {
			if (wc[i].status != FAB_WC_SUCCESS)
				rt_stream_fail(t, &wc[i]);
			if (wc[i].recv)
				rt_post_recv(t, wc[i].wr_id & 0xffff);
			else
				inflight--;
		}
		if (n) {
			clock_gettime(CLOCK_MONOTONIC, &t->start);
			continue;
		}
		while (rt_cm_event(t, &ev) == 1)
			if (ev.type == FAB_CM_EV_DISCONNECTED) {
				printf("error stream: disconnected by the peer "
				       "after %ld ms\n", rt_elapsed_ms(t));
				rt_rc_counters(t);
				exit(3);
			}
		rt_wait(t, "send completions");
	}
	clock_gettime(CLOCK_MONOTONIC, &now);
	printf("stream sent bytes %" PRIu64 " msgs %" PRIu64 " ms %ld\n",
	       bytes, msgs, (long)((now.tv_sec - t0.tv_sec) * 1000 +
				   (now.tv_nsec - t0.tv_nsec) / 1000000));
	rt_rc_counters(t);
	fflush(stdout);
	if (fab_cm_disconnect(t->id, err, sizeof(err)) < 0)
		rt_die("cm_disconnect", err);
	while (!t->disconnected) {
		while (rt_cm_event(t, &ev) == 1)
			;
		if (!t->disconnected)
			rt_wait(t, "DISCONNECTED");
	}
	fab_cm_destroy(t->id);
	fab_mr_dereg(mr);
	free(src);
	fab_mr_dereg(t->mr_msg);
	fab_mr_dereg(t->mr_buf);
	fab_close(t->dev);
	return 0;
}

/* ---- ping-pong ---------------------------------------------------------- */

static void rt_pp_send(struct rt *t, struct fab_mr *mr, uint8_t *m,
		       uint32_t len, uint64_t id)
{
	struct fab_sge sge = {
		.addr = (uintptr_t)m, .length = len, .lkey = fab_mr_lkey(mr),
	};
	struct fab_rc_wr wr = {
		.wr_id = id, .opcode = FAB_WR_SEND,
		.flags = FAB_SEND_SIGNALED, .sg_list = &sge, .num_sge = 1,
	};

	if (fab_qp_post_send(t->qp, &wr, 1) != 1)
		rt_die("post_send", strerror(errno));
}

/* Answer every message with the same bytes until the client goes. */
static int rt_pp_server(struct rt *t)
{
	struct fab_cm_addr a = { .service_id = FAB_CM_SID_TCP(t->port) };
	uint8_t *s;
	uint64_t served = 0;
	unsigned int inflight = 0;
	char err[FAB_ERRLEN];
	struct fab_wc wc;

	rt_open(t);
	s = rt_slot(t, RT_RECVS);
	t->listen = fab_cm_listen(t->dev, &a, 0, NULL, err, sizeof(err));
	if (!t->listen)
		rt_die("cm_listen", err);
	printf("listening port %u\n", t->port);
	fflush(stdout);
	rt_srv_accept(t);
	while (!t->disconnected) {
		rt_wc(t, &wc, "pings");
		if (wc.status == FAB_WC_WR_FLUSH_ERR)
			break;	/* the peer went */
		rt_wc_ok(&wc, "pingpong server");
		if (!wc.recv) {
			inflight--;
			continue;
		}
		/* one ping at a time: the send slot is free once the answer
		 * to the previous one completed, which the client's next
		 * ping implies (it had our answer); be safe all the same */
		while (inflight) {
			struct fab_wc w2;

			rt_wc(t, &w2, "the answer's completion");
			if (w2.status == FAB_WC_WR_FLUSH_ERR)
				goto gone;
			rt_wc_ok(&w2, "pingpong server");
			if (w2.recv) {
				printf("error pingpong: a ping before the "
				       "last answer completed\n");
				exit(1);
			}
			inflight--;
		}
		memcpy(s, rt_slot(t, wc.wr_id & 0xffff), wc.byte_len);
		rt_post_recv(t, (unsigned int)(wc.wr_id & 0xffff));
		rt_pp_send(t, t->mr_msg, s, wc.byte_len, WR_PONG);
		inflight++;
		served++;
	}
gone:
	while (!t->disconnected) {
		struct fab_cm_event ev;

		while (rt_cm_event(t, &ev) == 1)
			;
		if (!t->disconnected)
			rt_wait(t, "DISCONNECTED");
	}
	printf("pingpong served %" PRIu64 "\n", served);
	fflush(stdout);
	fab_cm_destroy(t->id);
	fab_cm_destroy(t->listen);
	fab_mr_dereg(t->mr_msg);
	fab_mr_dereg(t->mr_buf);
	fab_close(t->dev);
	free(t->msg);
	free(t->buf);
	return 0;
}

static int rt_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double rt_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int rt_pp_client(struct rt *t)
{
	uint32_t msz = rt_msgsz(t), j;
	double *rtt = calloc(t->count, sizeof(double));
	struct rt_remote rem;
	struct fab_cm_event ev;
	char err[FAB_ERRLEN];
	struct fab_mr *mr;
	unsigned int si, k;
	uint8_t *src;
	int r;

	rt_open(t);
	src = malloc(msz);
	if (!src || !rtt)
		rt_die("alloc", strerror(errno));
	mr = fab_mr_reg(t->dev, src, msz, 0, err, sizeof(err));
	if (!mr)
		rt_die("mr_reg", err);
	r = rt_cli_connect(t, &rem);
	fflush(stdout);
	if (r)
		return r;
	for (si = 0; si < t->nsizes; si++) {
		uint32_t sz = t->sizes[si];
		double sum = 0;

		for (k = 0; k < t->count; k++) {
			int sent = 0, answered = 0;
			double t0, t1 = 0;
			struct fab_wc wc;

			for (j = 0; j < sz; j++)
				src[j] = rt_msg_byte(si * t->count + k, j);
			t0 = rt_now_us();
			rt_pp_send(t, mr, src, sz, WR_PING);
			while (!sent || !answered) {
				rt_wc(t, &wc, "the answer");
				rt_wc_ok(&wc, "pingpong");
				if (!wc.recv) {
					sent = 1;
					continue;
				}
				t1 = rt_now_us();
				if (wc.byte_len != sz ||
				    memcmp(rt_slot(t, wc.wr_id & 0xffff), src,
					   sz)) {
					printf("error pingpong: answer %u of "
					       "size %u: %u bytes, not the "
					       "ping's\n", k, sz, wc.byte_len);
					exit(1);
				}
				rt_post_recv(t, wc.wr_id & 0xffff);
				answered = 1;
			}
			rtt[k] = t1 - t0;
			sum += rtt[k];
		}
		qsort(rtt, t->count, sizeof(double), rt_cmp_double);
		printf("pingpong size %u count %u rtt_us_avg %.1f p50 %.1f "
		       "p99 %.1f\n", sz, t->count, sum / t->count,
		       rtt[(t->count - 1) / 2],
		       rtt[(size_t)((t->count - 1) * 0.99)]);
		fflush(stdout);
	}
	if (fab_cm_disconnect(t->id, err, sizeof(err)) < 0)
		rt_die("cm_disconnect", err);
	while (!t->disconnected) {
		while (rt_cm_event(t, &ev) == 1)
			;
		if (!t->disconnected)
			rt_wait(t, "DISCONNECTED");
	}
	rt_rc_counters(t);
	fab_cm_destroy(t->id);
	fab_mr_dereg(mr);
	free(src);
	free(rtt);
	fab_mr_dereg(t->mr_msg);
	fab_mr_dereg(t->mr_buf);
	fab_close(t->dev);
	free(t->msg);
	free(t->buf);
	return 0;
}

static int rt_sizes(struct rt *t, const char *s)
{
	char *end;

	t->nsizes = 0;
	while (*s && t->nsizes < RT_MAXSIZES) {
		unsigned long v = strtoul(s, &end, 0);

		if (end == s || v == 0 || v > RT_STREAMMAX)
			return -1;
		t->sizes[t->nsizes++] = (uint32_t)v;
		s = *end == ',' ? end + 1 : end;
		if (*end && *end != ',')
			return -1;
	}
	return t->nsizes ? 0 : -1;
}

static void rt_usage(void)
{
	fprintf(stderr, "usage: rctest -F SPEC [--node N] server|client|"
		"stream-server|stream-client|pingpong-server|pingpong-client "
		"[--port P] [--conns K] "
		"[--count N] [--sizes LIST] [--dst GID] [--pdata TEXT] "
		"[--pdata-len L] [--timeout MS] [--in FILE] [--out FILE] "
		"[--recv-delay MS] [--sid SID]\n");
	exit(1);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "fabric", required_argument, NULL, 'F' },
		{ "port", required_argument, NULL, 'p' },
		{ "conns", required_argument, NULL, 'k' },
		{ "count", required_argument, NULL, 'n' },
		{ "sizes", required_argument, NULL, 'S' },
		{ "dst", required_argument, NULL, 'd' },
		{ "pdata", required_argument, NULL, 'P' },
		{ "pdata-len", required_argument, NULL, 'L' },
		{ "timeout", required_argument, NULL, 't' },
		{ "node", required_argument, NULL, 'N' },
		{ "in", required_argument, NULL, 'i' },
		{ "out", required_argument, NULL, 'o' },
		{ "recv-delay", required_argument, NULL, 'R' },
		{ "sid", required_argument, NULL, 'I' },
		{ NULL, 0, NULL, 0 },
	};
	/* static: what it points to stays reachable at exit (LSan) */
	static struct rt t = {
		.port = 7471, .conns = 1, .count = 20,
		.pdata = "hello-from-client", .timeout_ms = 60000,
		.node = "rctest",
	};
	int ch;

	setvbuf(stdout, NULL, _IOLBF, 0);
	rt_sizes(&t, "1,64,1000,1024,1025,4096,10000");
	while ((ch = getopt_long(argc, argv, "F:", lo, NULL)) != -1) {
		switch (ch) {
		case 'F': t.spec = optarg; break;
		case 'p': t.port = (uint16_t)atoi(optarg); break;
		case 'k': t.conns = (unsigned int)atoi(optarg); break;
		case 'n': t.count = (unsigned int)atoi(optarg); break;
		case 'S':
			if (rt_sizes(&t, optarg) < 0)
				rt_usage();
			t.sizes_set = 1;
			break;
		case 'd': t.dst = optarg; break;
		case 'P': t.pdata = optarg; break;
		case 'L': t.pdata_len = atoi(optarg); break;
		case 't': t.timeout_ms = atoi(optarg); break;
		case 'N': t.node = optarg; break;
		case 'i': t.in = optarg; break;
		case 'o': t.out = optarg; break;
		case 'R': t.recv_delay_ms = atoi(optarg); break;
		case 'I': t.sid = strtoull(optarg, NULL, 0); break;
		default: rt_usage();
		}
	}
	if (!t.spec || optind + 1 != argc || !t.count)
		rt_usage();
	clock_gettime(CLOCK_MONOTONIC, &t.start);
	if (!strcmp(argv[optind], "server") ||
	    !strcmp(argv[optind], "client")) {
		if (rt_msgsz(&t) > RT_MSGMAX)
			rt_usage();
		if (!strcmp(argv[optind], "server"))
			return rt_server(&t);
		if (t.dst)
			return rt_client(&t);
	}
	if (!strcmp(argv[optind], "pingpong-server") ||
	    !strcmp(argv[optind], "pingpong-client")) {
		if (!t.sizes_set)
			rt_sizes(&t, "64");
		if (!strcmp(argv[optind], "pingpong-server"))
			return rt_pp_server(&t);
		if (t.dst)
			return rt_pp_client(&t);
	}
	if (!strcmp(argv[optind], "stream-server") ||
	    !strcmp(argv[optind], "stream-client")) {
		if (!t.sizes_set)
			rt_sizes(&t, "65536");
		if (!strcmp(argv[optind], "stream-server"))
			return rt_stream_server(&t);
		if (t.dst)
			return rt_stream_client(&t);
	}
	rt_usage();
	return 1;
}

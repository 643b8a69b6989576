// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rdspeer --evil MODE (rdspeer_evil.h): RDS/IB on the raw fabric API,
 * to a victim that must drop us, reject us, or shrug, and never crash.
 *
 * REQ modes -- the victim must REJ with consumer-defined reason 28 and
 * private data host-endian int 1 (never more: the kernel stays stuck in
 * CONNECTING on a REJ with an int > 1):
 *   req-none   no private data at all (not even rdma_cm's header)
 *   req-short  rdma_cm's header and 4 bytes of RDS's private data
 *   req-zero   rdma_cm's header and 32 zero bytes (major 0: 4.0, but
 *              the addresses 0.0.0.0 are not the victim's)
 *   req-v30    a whole private data proposing version 3.0
 *   req-addr   version 3.1 to an RDS address the victim does not have
 *   req-lo     version 3.1 from 127.0.0.1 (::1): a loopback address no
 *              peer has, whose datagrams a program would take as its
 *              own host's
 * Data modes -- connect as RDS does, send one good message (index 0, to
 * --evil-port, default 4000, from a source port of the mode's own), then:
 *   bad-csum   a message whose header checksum is wrong   -> dropped
 *   short      a SEND of 20 bytes                          -> dropped
 *   long       a SEND of 4200 bytes (over the 4144 the victim posts:
 *              its receive fails)                          -> dropped
 *   bad-len    a message whose SEND carries fewer bytes than h_len
 *              says of its only fragment                  -> dropped
 *   frag-mismatch  the first 4096 bytes of an 8192-byte message, then a
 *              fragment of another sequence number         -> dropped
 *   too-big    h_len 2 MiB                                 -> dropped
 *   ack-beyond a good message whose h_ack is far past anything the
 *              victim sent: clamped, counted, the connection stays
 *   dup        message 0 again, flagged RETRANSMITTED: not delivered
 *              twice; then message 1, delivered; the connection stays
 *   stall      the first 4096 bytes of an 8192-byte message, then
 *              nothing (a peer whose queue pair stopped): kept for a
 *              second, then dropped within 10 s (victim --stall-ms
 *              2000)
 * "Dropped" means the victim disconnects us (DREQ) or our QP fails.
 * Exit 0 when the victim did what it should, 1 if not.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "inet/byteorder.h"
#include "tests/tools/rdspeer_evil.h"
#include "ulp/rds/rds_wire.h"

#define NSLOT	64
#define SLOT	8192

struct evil {
	const struct rdspeer_evil *e;
	struct fab_cm_id *id;
	struct fab_qp *qp;
	struct fab_mr *mr;
	uint8_t *mem;
	unsigned int tx_next;
	bool up, gone, rejected;
	int rej_reason;
	uint8_t rej_pd[FAB_CM_PRIV_MAX];
	uint64_t seq;
	uint16_t sport;
};

static const char *const modes[] = {
	"req-none", "req-short", "req-zero", "req-v30", "req-addr", "req-lo",
	"bad-csum", "short", "long", "bad-len", "frag-mismatch", "too-big",
	"ack-beyond", "dup", "stall", NULL
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void say(const struct evil *v, const char *fmt, const char *what)
{
	printf("rdspeer: evil %s: ", v->e->mode);
	printf(fmt, what);
	printf("\n");
	fflush(stdout);
}

/* Take what events and completions there are, for up to ms, or until
 * the connection is up or gone (until 1), or gone (until 2). */
static void pump_until(struct evil *v, int ms, int until)
{
	struct pollfd p[2];
	struct fab_cm_event ev;
	struct fab_wc wc[16];
	double end = now_s() + ms / 1e3;
	int i, n, nfd;

	for (;;) {
		while (fab_cm_get_event(v->e->dev, &ev) == 1) {
			if (ev.id != v->id)
				continue;
			switch (ev.type) {
			case FAB_CM_EV_ESTABLISHED:
				v->up = true;
				break;
			case FAB_CM_EV_REJECTED:
				v->rejected = true;
				v->rej_reason = ev.status;
				memcpy(v->rej_pd, ev.private_data,
				       sizeof(v->rej_pd));
				v->gone = true;
				break;
			case FAB_CM_EV_DISCONNECTED:
			case FAB_CM_EV_UNREACHABLE:
			case FAB_CM_EV_CONNECT_ERROR:
			case FAB_CM_EV_DEVICE_REMOVAL:
				v->gone = true;
				break;
			default:
				break;
			}
		}
		while (v->qp && (n = fab_qp_poll(v->qp, wc, 16)) > 0) {
			for (i = 0; i < n; i++) {
				if (wc[i].status != FAB_WC_SUCCESS) {
					v->gone = true;
					continue;
				}
				if (wc[i].recv) {
					struct fab_sge sge = {
						(uintptr_t)(v->mem +
							    wc[i].wr_id * SLOT),
						SLOT, fab_mr_lkey(v->mr) };
					struct fab_recv_wr rw = {
						wc[i].wr_id, &sge, 1 };

					fab_qp_post_recv(v->qp, &rw, 1);
				}
			}
		}
		if (now_s() >= end || (until == 1 && (v->up || v->gone)) ||
		    (until == 2 && v->gone))
			return;
		nfd = 0;
		p[nfd].fd = fab_cm_fd(v->e->dev);
		p[nfd++].events = POLLIN;
		if (v->qp) {
			p[nfd].fd = fab_qp_fd(v->qp);
			p[nfd++].events = POLLIN;
		}
		poll(p, (nfds_t)nfd, 10);
	}
}

static void pump(struct evil *v, int ms)
{
	pump_until(v, ms, 0);
}

static int setup(struct evil *v)
{
	struct fab_qp_init qi = { .type = FAB_QPT_RC, .max_send = NSLOT,
				  .max_recv = NSLOT / 2, .max_sge = 1 };
	char err[FAB_ERRLEN];
	unsigned int i;

	v->mem = calloc(NSLOT, SLOT);
	v->id = fab_cm_create_id(v->e->dev, v, err, sizeof(err));
	if (!v->mem || !v->id)
		goto fail;
	v->mr = fab_mr_reg(v->e->dev, v->mem, (size_t)NSLOT * SLOT,
			   FAB_ACCESS_LOCAL_WRITE, err, sizeof(err));
	if (!v->mr)
		goto fail;
	v->qp = fab_cm_qp_create(v->id, &qi, err, sizeof(err));
	if (!v->qp)
		goto fail;
	for (i = 0; i < NSLOT / 2; i++) {
		struct fab_sge sge = { (uintptr_t)(v->mem + i * SLOT), SLOT,
				       fab_mr_lkey(v->mr) };
		struct fab_recv_wr rw = { i, &sge, 1 };

		if (fab_qp_post_recv(v->qp, &rw, 1) != 1)
			goto fail;
	}
	return 0;
fail:
	fprintf(stderr, "rdspeer: evil: set-up: %s\n", err);
	return -1;
}

static void teardown(struct evil *v)
{
	if (v->id) {
		if (v->up && !v->gone) {
			fab_cm_disconnect(v->id, NULL, 0);
			pump(v, 200);
		}
		fab_cm_destroy(v->id);
	}
	if (v->mr)
		fab_mr_dereg(v->mr);
	free(v->mem);
	v->id = NULL;
	v->qp = NULL;
	v->mr = NULL;
	v->mem = NULL;
}

/* The REQ's private data for mode; its length. */
static int req_pdata(const struct evil *v, uint8_t *p, size_t cap)
{
	const struct rdspeer_evil *e = v->e;
	const char *m = e->mode;
	struct rds_cma_hdr h = { .sport = 40001, .src = e->laddr,
				 .dst = e->faddr };
	struct rds_ib_priv d;
	size_t off = 0;
	int n;

	if (!strcmp(m, "req-none"))
		return 0;
	memset(p, 0, cap);
	if (e->soft) {
		if (rds_cma_hdr_build(p, cap, &h) < 0)
			return -1;
		off = RDS_CMA_HDR_LEN;
	}
	if (!strcmp(m, "req-zero"))
		return (int)off + RDS_IB_PRIV4_LEN;
	memset(&d, 0, sizeof(d));
	d.saddr = e->laddr;
	d.daddr = e->faddr;
	d.major = 3;
	d.minor = !strcmp(m, "req-v30") ? 0 : 1;
	d.minor_mask = RDS_IB_MINOR_MASK;
	if (!strcmp(m, "req-addr"))
		d.daddr.raw[3] ^= 0x55;
	if (!strcmp(m, "req-lo")) {
		memset(d.saddr.raw, 0, sizeof(d.saddr.raw));
		if (d.saddr.family == AF_INET)
			d.saddr.raw[0] = 127, d.saddr.raw[3] = 1;
		else
			d.saddr.raw[15] = 1;
	}
	n = rds_ib_priv_build(p + off, cap - off, &d);
	if (n < 0)
		return -1;
	if (!strcmp(m, "req-short"))
		return (int)off + 4;
	return (int)off + n;
}

static int do_connect(struct evil *v)
{
	uint8_t pd[FAB_CM_REQ_PRIV];
	struct fab_cm_param cp = { .private_data = pd, .retry_count = 1,
				   .rnr_retry_count = 7 };
	struct fab_cm_addr dst;
	char err[FAB_ERRLEN];
	int n;

	n = req_pdata(v, pd, sizeof(pd));
	if (n < 0)
		return -1;
	cp.private_data_len = (uint8_t)n;
	memset(&dst, 0, sizeof(dst));
	dst.gid = v->e->gid;
	dst.lid = v->e->lid;
	dst.service_id = FAB_CM_SID_TCP(v->e->faddr.family == AF_INET6 ?
					RDS_CM_PORT : RDS_PORT);
	if (fab_cm_connect(v->id, &dst, &cp, err, sizeof(err)) < 0) {
		fprintf(stderr, "rdspeer: evil: connect: %s\n", err);
		return -1;
	}
	return 0;
}

static int post(struct evil *v, const uint8_t *buf, size_t len)
{
	uint8_t *slot = v->mem + (size_t)(NSLOT / 2 + v->tx_next) * SLOT;
	struct fab_sge sge = { (uintptr_t)slot, (uint32_t)len,
			       fab_mr_lkey(v->mr) };
	struct fab_rc_wr wr;

	memcpy(slot, buf, len);
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 1000 + v->tx_next;
	wr.opcode = FAB_WR_SEND;
	wr.flags = FAB_SEND_SIGNALED;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	v->tx_next = (v->tx_next + 1) % (NSLOT / 2);
	return fab_qp_post_send(v->qp, &wr, 1) == 1 ? 0 : -1;
}

/* A good one-fragment message of rdspeer's payload: index idx. */
static size_t good_msg(struct evil *v, uint8_t *b, uint64_t seq, uint32_t idx,
		       uint8_t flags, uint64_t ack)
{
	struct rds_header h;
	uint32_t len = 100, k;

	memset(&h, 0, sizeof(h));
	h.seq = seq;
	h.ack = ack;
	h.len = len;
	h.sport = v->sport;
	h.dport = v->e->port ? v->e->port : 4000;
	h.flags = flags | RDS_FLAG_ACK_REQUIRED;
	rds_hdr_put(b, &h);
	memcpy(b + RDS_HDR_LEN, "RDSP", 4);
	be16_put(b + RDS_HDR_LEN + 4, h.sport);
	be16_put(b + RDS_HDR_LEN + 6, h.dport);
	be32_put(b + RDS_HDR_LEN + 8, idx);
	be32_put(b + RDS_HDR_LEN + 12, len);
	for (k = 16; k < len; k++)
		b[RDS_HDR_LEN + k] = (uint8_t)(idx * 7 + k);
	return RDS_HDR_LEN + len;
}

/* The bad thing of a data mode; 1 when the victim should keep us. */
static int misbehave(struct evil *v, const char *m)
{
	static uint8_t b[2 * SLOT];
	struct rds_header h;
	size_t n;

	memset(b, 0xa5, sizeof(b));
	if (!strcmp(m, "bad-csum")) {
		n = good_msg(v, b, 2, 1, 0, 0);
		b[30] ^= 0x5a;
		b[31] ^= 0x01;
		if (!b[30] && !b[31])
			b[31] = 1;
		post(v, b, n);
		return 0;
	}
	if (!strcmp(m, "short")) {
		post(v, b, 20);
		return 0;
	}
	if (!strcmp(m, "long")) {
		n = good_msg(v, b, 2, 1, 0, 0);
		post(v, b, 4200);
		return 0;
	}
	if (!strcmp(m, "bad-len")) {
		n = good_msg(v, b, 2, 1, 0, 0);
		post(v, b, n - 10);	/* h_len 100, 90 data bytes */
		return 0;
	}
	memset(&h, 0, sizeof(h));
	h.sport = v->sport;
	h.dport = v->e->port ? v->e->port : 4000;
	if (!strcmp(m, "frag-mismatch")) {
		h.seq = 2;
		h.len = 8192;
		rds_hdr_put(b, &h);
		post(v, b, RDS_HDR_LEN + RDS_FRAG_SIZE);
		h.seq = 3;
		rds_hdr_put(b, &h);
		post(v, b, RDS_HDR_LEN + RDS_FRAG_SIZE);
		return 0;
	}
	if (!strcmp(m, "stall")) {
		h.seq = 2;
		h.len = 8192;
		rds_hdr_put(b, &h);
		post(v, b, RDS_HDR_LEN + RDS_FRAG_SIZE);
		return 0;
	}
	if (!strcmp(m, "too-big")) {
		h.seq = 2;
		h.len = 2u << 20;
		rds_hdr_put(b, &h);
		post(v, b, RDS_HDR_LEN + RDS_FRAG_SIZE);
		return 0;
	}
	if (!strcmp(m, "ack-beyond")) {
		n = good_msg(v, b, 2, 1, 0, 1000000);
		post(v, b, n);
		return 1;
	}
	/* dup */
	n = good_msg(v, b, 1, 0, RDS_FLAG_RETRANSMITTED, 0);
	post(v, b, n);
	n = good_msg(v, b, 2, 1, 0, 0);
	post(v, b, n);
	return 1;
}

static int run_req(struct evil *v)
{
	int code;

	pump_until(v, (int)(v->e->timeout_s * 1000 > 5000 ? 5000 :
			    v->e->timeout_s * 1000), 1);
	if (v->up) {
		say(v, "%s", "FAIL: the victim accepted the REQ");
		return 1;
	}
	if (!v->rejected) {
		say(v, "%s", "FAIL: no REJ");
		return 1;
	}
	memcpy(&code, v->rej_pd, sizeof(code));
	if (v->rej_reason != FAB_CM_REJ_CONSUMER_DEFINED || code != 1) {
		printf("rdspeer: evil %s: FAIL: REJ reason %d code %d\n",
		       v->e->mode, v->rej_reason, code);
		return 1;
	}
	say(v, "%s", "ok: rejected, reason 28, int 1");
	return 0;
}

static int run_data(struct evil *v, unsigned int mi)
{
	static uint8_t b[SLOT];
	const char *m = v->e->mode;
	int tries, keep;
	double t0;
	size_t n;

	/* a REQ may meet the victim's last connection from us still up
	 * (a stale REQ: it drops that one and rejects): try again */
	for (tries = 0; tries < 10; tries++) {
		if (setup(v) < 0 || do_connect(v) < 0)
			return 1;
		pump_until(v, 2000, 1);
		if (v->up)
			break;
		teardown(v);
		v->gone = v->rejected = false;
		pump(v, 100 + 100 * tries);
	}
	if (!v->up) {
		say(v, "%s", "FAIL: could not connect");
		return 1;
	}
	v->sport = (uint16_t)(10 + mi);
	n = good_msg(v, b, 1, 0, 0, 0);
	post(v, b, n);
	pump(v, 100);
	keep = misbehave(v, m);
	t0 = now_s();
	if (keep)
		pump(v, 500);
	else if (!strcmp(m, "stall"))
		pump_until(v, 10000, 2);
	else
		pump_until(v, (int)(v->e->timeout_s * 1000 > 5000 ? 5000 :
				    v->e->timeout_s * 1000), 2);
	if (!strcmp(m, "stall") && v->gone && now_s() - t0 < 1.0) {
		say(v, "%s", "FAIL: dropped at once, not after waiting");
		return 1;
	}
	if (keep) {
		pump(v, 0);
		if (v->gone) {
			say(v, "%s", "FAIL: the victim dropped us");
			return 1;
		}
		say(v, "%s", "ok: still connected");
		return 0;
	}
	if (!v->gone) {
		say(v, "%s", "FAIL: the victim kept the connection");
		return 1;
	}
	if (!strcmp(m, "stall")) {
		printf("rdspeer: evil stall: ok: dropped after %.1f s\n",
		       now_s() - t0);
		return 0;
	}
	say(v, "%s", "ok: dropped");
	return 0;
}

int rdspeer_evil_run(const struct rdspeer_evil *e)
{
	struct evil v;
	unsigned int i;
	int rc;

	for (i = 0; modes[i]; i++)
		if (!strcmp(modes[i], e->mode))
			break;
	if (!modes[i]) {
		fprintf(stderr, "rdspeer: --evil modes:");
		for (i = 0; modes[i]; i++)
			fprintf(stderr, " %s", modes[i]);
		fprintf(stderr, "\n");
		return 2;
	}
	memset(&v, 0, sizeof(v));
	v.e = e;
	if (!strncmp(e->mode, "req-", 4)) {
		if (setup(&v) < 0 || do_connect(&v) < 0) {
			teardown(&v);
			return 1;
		}
		rc = run_req(&v);
	} else {
		rc = run_data(&v, i);
	}
	teardown(&v);
	return rc;
}

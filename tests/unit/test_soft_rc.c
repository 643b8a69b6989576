// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The soft RC engine: two of them connected by a link in memory (a
 * packet queue each way, a fake clock, seeded loss, duplication, adjacent
 * swaps and a direction held down), memory regions in a small table.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <cmocka.h>

#include "fabric/ib_rc.h"
#include "fabric/soft_rc.h"

#define QMAX	16384
#define NMR	8

struct pq {
	uint8_t *p[QMAX];
	size_t len[QMAX];
	unsigned int n;
};

struct link;

struct mr {
	uint32_t key;
	uint8_t *base;
	uint64_t len;
	unsigned int access;
};

struct side {
	struct soft_rc *rc;
	struct link *l;
	int dir;			/* queue its packets go into */
	struct mr mr[NMR];
	int nmr;
};

struct link {
	struct pq q[2];			/* 0: A to B, 1: B to A */
	uint64_t now;
	uint64_t rng;
	unsigned int loss, dup, swap;	/* per mille */
	int down[2];
	unsigned int drop_at[2];	/* drop the nth packet (1-based) */
	unsigned int cap;		/* queue room; 0: QMAX */
	unsigned int count[2];
	struct side a, b;
};

static uint32_t rnd(struct link *l)
{
	l->rng ^= l->rng << 13;
	l->rng ^= l->rng >> 7;
	l->rng ^= l->rng << 17;
	return (uint32_t)(l->rng >> 16);
}

static int chance(struct link *l, unsigned int permille)
{
	return permille && rnd(l) % 1000 < permille;
}

static void pq_add(struct pq *q, const uint8_t *p, size_t n)
{
	q->p[q->n] = malloc(n);
	assert_non_null(q->p[q->n]);
	memcpy(q->p[q->n], p, n);
	q->len[q->n++] = n;
}

static int xmit(void *ctx, const uint8_t *pkt, size_t len)
{
	struct side *s = ctx;
	struct link *l = s->l;
	struct pq *q = &l->q[s->dir];

	if (q->n + 2 > (l->cap ? l->cap : QMAX))
		return -1;
	if (++l->count[s->dir] == l->drop_at[s->dir])
		return 0;
	if (l->down[s->dir] || chance(l, l->loss))
		return 0;
	pq_add(q, pkt, len);
	if (chance(l, l->dup))
		pq_add(q, pkt, len);
	if (q->n >= 2 && chance(l, l->swap)) {
		uint8_t *tp = q->p[q->n - 1];
		size_t tl = q->len[q->n - 1];

		q->p[q->n - 1] = q->p[q->n - 2];
		q->len[q->n - 1] = q->len[q->n - 2];
		q->p[q->n - 2] = tp;
		q->len[q->n - 2] = tl;
	}
	return 0;
}

static void *mr_find(void *ctx, uint32_t key, int remote, uint64_t addr,
		     uint64_t len, unsigned int access)
{
	struct side *s = ctx;
	int i;

	(void)remote;
	for (i = 0; i < s->nmr; i++) {
		struct mr *m = &s->mr[i];
		uint64_t base = (uintptr_t)m->base;

		if (m->key != key)
			continue;
		if ((m->access & access) != access)
			return NULL;
		if (!len)
			return m->base;
		if (addr < base || len > m->len || addr - base > m->len - len)
			return NULL;
		return m->base + (addr - base);
	}
	return NULL;
}

static const struct soft_rc_ops ops = { xmit, mr_find };

static void add_mr(struct side *s, uint32_t key, void *base, uint64_t len,
		   unsigned int access)
{
	assert_true(s->nmr < NMR);
	s->mr[s->nmr++] = (struct mr){ key, base, len, access };
}

static struct soft_rc_conn conn_a(void)
{
	struct soft_rc_conn c = {
		.qpn = 0x11, .dest_qpn = 0x22, .slid = 1, .dlid = 2,
		.pkey = 0xffff, .path_mtu = 3, .sq_psn = 0x100,
		.rq_psn = 0x200, .timeout = 10, .retry_cnt = 7,
		.rnr_retry = 7, .min_rnr_timer = 1, .max_rd_atomic = 4,
		.max_dest_rd_atomic = 4,
	};

	return c;
}

static struct soft_rc_conn peer_of(const struct soft_rc_conn *a)
{
	struct soft_rc_conn c = *a;

	c.qpn = a->dest_qpn;
	c.dest_qpn = a->qpn;
	c.slid = a->dlid;
	c.dlid = a->slid;
	c.sq_psn = a->rq_psn;
	c.rq_psn = a->sq_psn;
	return c;
}

static struct link *mklink(const struct soft_rc_cfg *cfg,
			   const struct soft_rc_conn *ca,
			   const struct soft_rc_conn *cb)
{
	struct link *l = calloc(1, sizeof(*l));
	struct soft_rc_conn a = ca ? *ca : conn_a();
	struct soft_rc_conn b = cb ? *cb : peer_of(&a);

	assert_non_null(l);
	/* SOFT_RC_SEED=n runs the lossy cases with another fault pattern */
	l->rng = 0x9e3779b97f4a7c15ull ^
		 strtoull(getenv("SOFT_RC_SEED") ? getenv("SOFT_RC_SEED") :
			  "0", NULL, 0) * 0x2545f4914f6cdd1dull;
	l->now = 1000;
	l->a.l = l->b.l = l;
	l->a.dir = 0;
	l->b.dir = 1;
	l->a.rc = soft_rc_new(cfg, &ops, &l->a);
	l->b.rc = soft_rc_new(cfg, &ops, &l->b);
	assert_non_null(l->a.rc);
	assert_non_null(l->b.rc);
	assert_int_equal(soft_rc_connect(l->a.rc, &a, l->now), 0);
	assert_int_equal(soft_rc_connect(l->b.rc, &b, l->now), 0);
	return l;
}

static void pq_clear(struct pq *q)
{
	unsigned int i;

	for (i = 0; i < q->n; i++)
		free(q->p[i]);
	q->n = 0;
}

static void link_free(struct link *l)
{
	pq_clear(&l->q[0]);
	pq_clear(&l->q[1]);
	soft_rc_free(l->a.rc);
	soft_rc_free(l->b.rc);
	free(l);
}

/* Hand over what each queue holds now, one batch each way, then let both
 * engines progress. */
static void deliver(struct link *l)
{
	static struct pq batch;
	int d;
	unsigned int i;

	for (d = 0; d < 2; d++) {
		struct side *to = d == 0 ? &l->b : &l->a;

		batch = l->q[d];
		l->q[d].n = 0;
		for (i = 0; i < batch.n; i++) {
			soft_rc_input(to->rc, batch.p[i], batch.len[i],
				      l->now);
			free(batch.p[i]);
		}
		batch.n = 0;
	}
	soft_rc_progress(l->a.rc, l->now);
	soft_rc_progress(l->b.rc, l->now);
}

/* Run until nothing moves or waits (1), or steps ran out (0). */
static int pump(struct link *l, unsigned int steps)
{
	while (steps--) {
		uint64_t da, db, d;

		if (l->q[0].n || l->q[1].n) {
			l->now += 1;
			deliver(l);
			continue;
		}
		da = soft_rc_deadline(l->a.rc);
		db = soft_rc_deadline(l->b.rc);
		d = da < db ? da : db;
		if (d == UINT64_MAX)
			return 1;
		if (d > l->now)
			l->now = d;
		deliver(l);
	}
	return 0;
}

static void fill(uint8_t *p, size_t n, uint32_t seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(seed * 31 + i * 7 + (i >> 8));
}

static int post_recv(struct side *s, uint64_t id, void *buf, uint32_t len,
		     uint32_t lkey)
{
	struct fab_sge sge = { (uintptr_t)buf, len, lkey };
	struct fab_recv_wr wr = { id, &sge, 1 };

	return soft_rc_post_recv(s->rc, &wr, 1);
}

static int post(struct link *l, struct side *s, uint64_t id,
		enum fab_wr_opcode op, unsigned int flags, void *buf,
		uint32_t len, uint32_t lkey, uint64_t raddr, uint32_t rkey,
		uint32_t imm)
{
	struct fab_sge sge = { (uintptr_t)buf, len, lkey };
	struct fab_rc_wr wr = {
		.wr_id = id, .opcode = op, .flags = flags, .sg_list = &sge,
		.num_sge = 1, .imm_data = imm, .remote_addr = raddr,
		.rkey = rkey,
	};

	return soft_rc_post_send(s->rc, &wr, 1, l->now);
}

static int poll1(struct side *s, struct fab_wc *wc)
{
	return soft_rc_poll(s->rc, wc, 1);
}

/* --- cases --------------------------------------------------------------- */

static void test_send_sizes(void **state)
{
	static const uint32_t sizes[] = { 0, 1, 1023, 1024, 1025, 10000 };
	static uint8_t src[16384], dst[16384];
	struct fab_wc wc;
	struct link *l;
	size_t i;

	(void)state;
	l = mklink(NULL, NULL, NULL);
	add_mr(&l->a, 1, src, sizeof(src), 0);
	add_mr(&l->b, 2, dst, sizeof(dst), FAB_ACCESS_LOCAL_WRITE);
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		fill(src, sizeof(src), (uint32_t)i + 1);
		memset(dst, 0xee, sizeof(dst));
		assert_int_equal(post_recv(&l->b, 100 + i, dst, sizeof(dst), 2),
				 1);
		assert_int_equal(post(l, &l->a, i, FAB_WR_SEND,
				      FAB_SEND_SIGNALED, src, sizes[i], 1, 0,
				      0, 0), 1);
		assert_true(pump(l, 10000));
		assert_int_equal(poll1(&l->a, &wc), 1);
		assert_int_equal(wc.status, FAB_WC_SUCCESS);
		assert_int_equal(wc.opcode, FAB_WC_SEND);
		assert_int_equal(wc.wr_id, i);
		assert_int_equal(poll1(&l->b, &wc), 1);
		assert_int_equal(wc.status, FAB_WC_SUCCESS);
		assert_int_equal(wc.opcode, FAB_WC_RECV);
		assert_int_equal(wc.recv, 1);
		assert_int_equal(wc.wr_id, 100 + i);
		assert_int_equal(wc.byte_len, sizes[i]);
		assert_int_equal(wc.imm_valid, 0);
		assert_memory_equal(dst, src, sizes[i]);
		assert_int_equal(dst[sizes[i]], 0xee);
		assert_int_equal(poll1(&l->a, &wc), 0);
		assert_int_equal(poll1(&l->b, &wc), 0);
	}
	assert_int_equal(soft_rc_stats(l->a.rc)->retransmits, 0);
	link_free(l);
}

static void test_send_imm_multi_sge(void **state)
{
	static uint8_t src[3000], dst[4096];
	struct soft_rc_cfg cfg = { .max_sge = 3 };
	struct fab_sge sg[3];
	struct fab_rc_wr wr;
	struct fab_wc wc;
	struct link *l;

	(void)state;
	l = mklink(&cfg, NULL, NULL);
	fill(src, sizeof(src), 9);
	add_mr(&l->a, 1, src, sizeof(src), 0);
	add_mr(&l->b, 2, dst, sizeof(dst), FAB_ACCESS_LOCAL_WRITE);
	assert_int_equal(post_recv(&l->b, 7, dst, sizeof(dst), 2), 1);
	sg[0] = (struct fab_sge){ (uintptr_t)src, 10, 1 };
	sg[1] = (struct fab_sge){ (uintptr_t)src + 10, 1500, 1 };
	sg[2] = (struct fab_sge){ (uintptr_t)src + 1510, 1490, 1 };
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 5;
	wr.opcode = FAB_WR_SEND_WITH_IMM;
	wr.flags = FAB_SEND_SIGNALED;
	wr.sg_list = sg;
	wr.num_sge = 3;
	wr.imm_data = 0xdeadbeef;
	assert_int_equal(soft_rc_post_send(l->a.rc, &wr, 1, l->now), 1);
	assert_true(pump(l, 1000));
	assert_int_equal(poll1(&l->b, &wc), 1);
	assert_int_equal(wc.status, FAB_WC_SUCCESS);
	assert_int_equal(wc.opcode, FAB_WC_RECV);
	assert_int_equal(wc.byte_len, 3000);
	assert_int_equal(wc.imm_valid, 1);
	assert_int_equal(wc.imm_data, 0xdeadbeef);
	assert_memory_equal(dst, src, 3000);
	assert_int_equal(poll1(&l->a, &wc), 1);
	assert_int_equal(wc.status, FAB_WC_SUCCESS);
	link_free(l);
}

static void test_send_inline(void **state)
{
	struct soft_rc_cfg cfg = { .max_inline = 64 };
	static uint8_t dst[256];
	char msg[64] = "inline, no lkey at all";
	struct fab_wc wc;
	struct link *l;

	(void)state;
	l = mklink(&cfg, NULL, NULL);
	add_mr(&l->b, 2, dst, sizeof(dst), FAB_ACCESS_LOCAL_WRITE);
	assert_int_equal(post_recv(&l->b, 1, dst, sizeof(dst), 2), 1);
	assert_int_equal(post(l, &l->a, 1, FAB_WR_SEND,
			      FAB_SEND_SIGNALED | FAB_SEND_INLINE, msg, 64,
			      0xbad, 0, 0, 0), 1);
	memset(msg, 0, sizeof(msg));	/* copied at post time */
	assert_true(pump(l, 1000));
	assert_int_equal(poll1(&l->b, &wc), 1);
	assert_int_equal(wc.byte_len, 64);
	assert_string_equal((char *)dst, "inline, no lkey at all");
	/* over max_inline */
	errno = 0;
	assert_int_equal(post(l, &l->a, 2, FAB_WR_SEND, FAB_SEND_INLINE, msg,
			      65, 0, 0, 0, 0), -1);
	assert_int_equal(errno, EINVAL);
	link_free(l);
}

static void test_write(void **state)
{
	static uint8_t src[8192], dst[8192], rbuf[16];
	struct fab_wc wc;
	struct link *l;

	(void)state;
	l = mklink(NULL, NULL, NULL);
	fill(src, sizeof(src), 3);
	add_mr(&l->a, 1, src, sizeof(src), 0);
	add_mr(&l->b, 0x77, dst, sizeof(dst),
	       FAB_ACCESS_LOCAL_WRITE | FAB_ACCESS_REMOTE_WRITE);
	add_mr(&l->b, 2, rbuf, sizeof(rbuf), FAB_ACCESS_LOCAL_WRITE);
	assert_int_equal(post_recv(&l->b, 9, rbuf, sizeof(rbuf), 2), 1);
	assert_int_equal(post(l, &l->a, 1, FAB_WR_RDMA_WRITE,
			      FAB_SEND_SIGNALED, src, 5000, 1,
			      (uintptr_t)dst + 100, 0x77, 0), 1);
	assert_true(pump(l, 1000));
	assert_int_equal(poll1(&l->a, &wc), 1);
	assert_int_equal(wc.status, FAB_WC_SUCCESS);
	assert_int_equal(wc.opcode, FAB_WC_RDMA_WRITE);
	assert_memory_equal(dst + 100, src, 5000);
	assert_int_equal(dst[99], 0);
	assert_int_equal(dst[5100], 0);
	assert_int_equal(poll1(&l->b, &wc), 0);	/* no receive used */

	/* with immediate: the receive is consumed, nothing lands in it */
	assert_int_equal(post(l, &l->a, 2, FAB_WR_RDMA_WRITE_WITH_IMM,
			      FAB_SEND_SIGNALED, src + 7, 3000, 1,
			      (uintptr_t)dst + 5000, 0x77, 42), 1);
	assert_true(pump(l, 1000));
	assert_int_equal(poll1(&l->a, &wc), 1);
	assert_int_equal(wc.status, FAB_WC_SUCCESS);
	assert_int_equal(poll1(&l->b, &wc), 1);
	assert_int_equal(wc.status, FAB_WC_SUCCESS);
	assert_int_equal(wc.opcode, FAB_WC_RECV_RDMA_WITH_IMM);
	assert_int_equal(wc.wr_id, 9);
	assert_int_equal(wc.byte_len, 3000);
	assert_int_equal(wc.imm_valid, 1);
	assert_int_equal(wc.imm_data, 42);
	assert_memory_equal(dst + 5000, src + 7, 3000);
	link_free(l);
}

static void test_read(void **state)
{
	static uint8_t rsrc[20000], dst[20000];
	static const uint32_t sizes[] = { 10000, 0, 1024, 1, 20000 };
	struct soft_rc_conn c = conn_a();
	struct fab_wc wc;
	struct link *l;
	size_t i;

	(void)state;
	c.max_rd_atomic = c.max_dest_rd_atomic = 1;
	l = mklink(NULL, &c, NULL);
	fill(rsrc, sizeof(rsrc), 5);
	add_mr(&l->b, 0x55, rsrc, sizeof(rsrc), FAB_ACCESS_REMOTE_READ);
	add_mr(&l->a, 1, dst, sizeof(dst), FAB_ACCESS_LOCAL_WRITE);
	/* queued together: max_rd_atomic 1 sends them one at a time */
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		assert_int_equal(post(l, &l->a, i, FAB_WR_RDMA_READ,
				      FAB_SEND_SIGNALED, dst, sizes[i], 1,
				      (uintptr_t)rsrc, 0x55, 0), 1);
	assert_true(pump(l, 10000));
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		assert_int_equal(poll1(&l->a, &wc), 1);
		assert_int_equal(wc.status, FAB_WC_SUCCESS);
		assert_int_equal(wc.opcode, FAB_WC_RDMA_READ);
		assert_int_equal(wc.wr_id, i);
		assert_int_equal(wc.byte_len, sizes[i]);
	}
	assert_memory_equal(dst, rsrc, 20000);
	assert_int_equal(poll1(&l->b, &wc), 0);
	link_free(l);
}

static void test_read_lossy(void **state)
{
	static uint8_t rsrc[256 * 1024], dst[256 * 1024];
	const uint32_t chunk = 32768;
	struct fab_wc wc;
	struct link *l;
	uint32_t i, n = sizeof(rsrc) / chunk;

	(void)state;
	l = mklink(NULL, NULL, NULL);
	l->loss = 20;
	l->swap = 20;
	l->dup = 10;
	fill(rsrc, sizeof(rsrc), 11);
	memset(dst, 0, sizeof(dst));
	add_mr(&l->b, 0x55, rsrc, sizeof(rsrc), FAB_ACCESS_REMOTE_READ);
	add_mr(&l->a, 1, dst, sizeof(dst), FAB_ACCESS_LOCAL_WRITE);
	for (i = 0; i < n; i++)
		assert_int_equal(post(l, &l->a, i, FAB_WR_RDMA_READ,
				      FAB_SEND_SIGNALED, dst + i * chunk,
				      chunk, 1, (uintptr_t)rsrc + i * chunk,
				      0x55, 0), 1);
	assert_true(pump(l, 200000));
	for (i = 0; i < n; i++) {
		assert_int_equal(poll1(&l->a, &wc), 1);
		assert_int_equal(wc.status, FAB_WC_SUCCESS);
		assert_int_equal(wc.wr_id, i);
	}
	assert_memory_equal(dst, rsrc, sizeof(rsrc));
	assert_true(soft_rc_stats(l->a.rc)->retransmits > 0);
	link_free(l);
}

static void test_unsignaled(void **state)
{
	struct soft_rc_cfg cfg = { .max_send = 8 };
	static uint8_t src[64], dst[64];
	struct fab_wc wc;
	struct link *l;
	int i;

	(void)state;
	l = mklink(&cfg, NULL, NULL);
	add_mr(&l->a, 1, src, sizeof(src), 0);
	add_mr(&l->b, 0x77, dst, sizeof(dst),
	       FAB_ACCESS_LOCAL_WRITE | FAB_ACCESS_REMOTE_WRITE);
	for (i = 0; i < 7; i++)
		assert_int_equal(post(l, &l->a, i, FAB_WR_RDMA_WRITE, 0, src,
				      8, 1, (uintptr_t)dst, 0x77, 0), 1);
	assert_int_equal(post(l, &l->a, 7, FAB_WR_RDMA_WRITE,
			      FAB_SEND_SIGNALED, src, 8, 1, (uintptr_t)dst,
			      0x77, 0), 1);
	errno = 0;
	assert_int_equal(post(l, &l->a, 8, FAB_WR_RDMA_WRITE, 0, src, 8, 1,
			      (uintptr_t)dst, 0x77, 0), -1);
	assert_int_equal(errno, ENOMEM);
	assert_true(pump(l, 1000));
	/* one completion, for the signaled one; all eight slots free */
	assert_int_equal(poll1(&l->a, &wc), 1);
	assert_int_equal(wc.wr_id, 7);
	assert_int_equal(poll1(&l->a, &wc), 0);
	for (i = 0; i < 8; i++)
		assert_int_equal(post(l, &l->a, 10 + i, FAB_WR_RDMA_WRITE, 0,
				      src, 8, 1, (uintptr_t)dst, 0x77, 0), 1);
	assert_true(pump(l, 1000));
	/* done, but unsignaled only: their slots wait for a signaled one */
	assert_int_equal(poll1(&l->a, &wc), 0);
	errno = 0;
	assert_int_equal(post(l, &l->a, 20, FAB_WR_RDMA_WRITE,
			      FAB_SEND_SIGNALED, src, 8, 1, (uintptr_t)dst,
			      0x77, 0), -1);
	assert_int_equal(errno, ENOMEM);
	link_free(l);
}

static void test_lossy_4mb(void **state)
{
	const uint32_t total = 4u << 20, chunk = 65536;
	uint8_t *src = malloc(total), *dst = calloc(1, total);
	const struct soft_rc_stats *sa, *sb;
	struct fab_wc wc;
	struct link *l;
	uint32_t sent = 0, posted = 0, done = 0, rdone = 0;
	unsigned int guard = 0;

	(void)state;
	assert_non_null(src);
	assert_non_null(dst);
	l = mklink(NULL, NULL, NULL);
	l->loss = 20;
	l->swap = 20;
	l->dup = 10;
	fill(src, total, 77);
	add_mr(&l->a, 1, src, total, 0);
	add_mr(&l->b, 2, dst, total, FAB_ACCESS_LOCAL_WRITE);
	while (rdone < total / chunk && guard++ < 2000) {
		while (posted < total / chunk &&
		       post_recv(&l->b, posted, dst + posted * chunk, chunk,
				 2) == 1)
			posted++;
		while (sent < posted &&
		       post(l, &l->a, sent, FAB_WR_SEND, FAB_SEND_SIGNALED,
			    src + sent * chunk, chunk, 1, 0, 0, 0) == 1)
			sent++;
		pump(l, 200);
		while (poll1(&l->a, &wc) == 1) {
			assert_int_equal(wc.status, FAB_WC_SUCCESS);
			assert_int_equal(wc.wr_id, done);
			done++;
		}
		while (poll1(&l->b, &wc) == 1) {
			assert_int_equal(wc.status, FAB_WC_SUCCESS);
			assert_int_equal(wc.wr_id, rdone);
			assert_int_equal(wc.byte_len, chunk);
			rdone++;
		}
	}
	assert_true(pump(l, 100000));
	while (poll1(&l->a, &wc) == 1)
		done++;
	assert_int_equal(rdone, total / chunk);
	assert_int_equal(done, total / chunk);
	assert_memory_equal(dst, src, total);
	sa = soft_rc_stats(l->a.rc);
	sb = soft_rc_stats(l->b.rc);
	print_message("4 MB: tx %llu retx %llu timeouts %llu seq_naks %llu "
		      "dups %llu ooo %llu acks %llu\n",
		      (unsigned long long)sa->tx_packets,
		      (unsigned long long)sa->retransmits,
		      (unsigned long long)sa->timeouts,
		      (unsigned long long)sb->seq_naks_sent,
		      (unsigned long long)sb->dup_requests,
		      (unsigned long long)sb->out_of_seq,
		      (unsigned long long)sb->acks_sent);
	assert_true(sa->retransmits > 0);
	assert_true(sb->dup_requests > 0);
	assert_true(sb->seq_naks_sent > 0);
	assert_true(sa->seq_naks_rcvd > 0);
	assert_int_equal(soft_rc_state(l->a.rc), SOFT_RC_RTS);
	link_free(l);
	free(src);
	free(dst);
}

static void test_ack_coalescing(void **state)
{
	struct soft_rc_cfg cfg = { .max_send = 256, .max_recv = 256 };
	static uint8_t src[1 << 20], dst[1 << 20];
	const struct soft_rc_stats *sb;
	struct fab_wc wc;
	struct link *l;
	uint64_t acks0, rx0;
	int i;

	(void)state;
	l = mklink(&cfg, NULL, NULL);
	add_mr(&l->a, 1, src, sizeof(src), 0);
	add_mr(&l->b, 2, dst, sizeof(dst),
	       FAB_ACCESS_LOCAL_WRITE | FAB_ACCESS_REMOTE_WRITE);
	sb = soft_rc_stats(l->b.rc);
	/* 200 one-packet SENDs, each with AckReq */
	for (i = 0; i < 200; i++)
		assert_int_equal(post_recv(&l->b, i, dst + i * 64, 64, 2), 1);
	for (i = 0; i < 200; i++)
		assert_int_equal(post(l, &l->a, i, FAB_WR_SEND, 0, src, 64, 1,
				      0, 0, 0), 1);
	assert_true(pump(l, 1000));
	assert_int_equal(sb->rx_packets, 200);
	print_message("200 sends: %llu ACKs\n",
		      (unsigned long long)sb->acks_sent);
	assert_true(sb->acks_sent > 0 && sb->acks_sent <= 200 / 20);
	for (i = 0; i < 200; i++)
		assert_int_equal(poll1(&l->b, &wc), 1);
	/* one 1 MB WRITE: 1024 packets, AckReq every 64 */
	acks0 = sb->acks_sent;
	rx0 = sb->rx_packets;
	assert_int_equal(post(l, &l->a, 1000, FAB_WR_RDMA_WRITE,
			      FAB_SEND_SIGNALED, src, sizeof(src), 1,
			      (uintptr_t)dst, 2, 0), 1);
	assert_true(pump(l, 1000));
	assert_int_equal(sb->rx_packets - rx0, 1024);
	print_message("1 MB write: %llu ACKs\n",
		      (unsigned long long)(sb->acks_sent - acks0));
	assert_true(sb->acks_sent - acks0 <= 1024 / 16);
	assert_int_equal(poll1(&l->a, &wc), 1);
	assert_int_equal(wc.wr_id, 1000);
	assert_int_equal(wc.status, FAB_WC_SUCCESS);
	link_free(l);
}

/* n 64-byte SENDs from a to b, each delivered in its own step of 1 us,
 * each answered by b with one of its own when pong is set (a and b have
 * receives posted); with pong, a's SEND has completed by the time its
 * answer arrives, whatever the ACK delay. */
static void exchange(struct link *l, uint8_t *src, int n, int pong)
{
	struct fab_wc wc;
	int i;

	for (i = 0; i < n; i++) {
		assert_int_equal(post(l, &l->a, i, FAB_WR_SEND,
				      FAB_SEND_SIGNALED, src, 64, 1, 0, 0, 0),
				 1);
		l->now += 1;
		deliver(l);
		if (!pong)
			continue;
		/* the ping (after the completion of b's last pong, whose
		 * ACK came with it) */
		do
			assert_int_equal(poll1(&l->b, &wc), 1);
		while (!wc.recv);
		assert_int_equal(post(l, &l->b, i, FAB_WR_SEND,
				      FAB_SEND_SIGNALED, src, 64, 2, 0, 0, 0),
				 1);
		l->now += 1;
		deliver(l);
		/* the ping's completion came with the pong */
		assert_int_equal(poll1(&l->a, &wc), 1);
		assert_false(wc.recv);
		assert_int_equal(wc.wr_id, i);
		assert_int_equal(wc.status, FAB_WC_SUCCESS);
		assert_int_equal(poll1(&l->a, &wc), 1);
		assert_true(wc.recv);
	}
	/* the owed ACKs go by the deadline, and every send completes */
	assert_true(pump(l, 1000));
	while (poll1(&l->a, &wc) == 1)
		assert_int_equal(wc.status, FAB_WC_SUCCESS);
	while (poll1(&l->b, &wc) == 1)
		assert_int_equal(wc.status, FAB_WC_SUCCESS);
}

/* With an ACK delay the owed ACK waits for its deadline (capped by the
 * ACK timeout), goes at once when 16 packets are owed, for a duplicate
 * and on soft_rc_ack_now(); request/response traffic then costs a few
 * ACKs instead of one per message. */
static void test_ack_delay(void **state)
{
	struct soft_rc_cfg cfg = { .max_send = 256, .max_recv = 256 };
	static uint8_t src[4096], dst[256 * 64];
	const struct soft_rc_stats *sb;
	struct soft_rc_conn c = conn_a();
	struct fab_wc wc;
	struct link *l;
	uint8_t *copy;
	size_t clen;
	uint64_t t0;
	int i;

	(void)state;
	c.timeout = 14;			/* 67 ms: the delay is not capped */
	c.ack_delay_us = 500;
	l = mklink(&cfg, &c, NULL);
	add_mr(&l->a, 1, src, sizeof(src), FAB_ACCESS_LOCAL_WRITE);
	add_mr(&l->b, 2, dst, sizeof(dst), FAB_ACCESS_LOCAL_WRITE);
	sb = soft_rc_stats(l->b.rc);
	for (i = 0; i < 256; i++)
		assert_int_equal(post_recv(&l->b, i, dst + i * 64, 64, 2), 1);

	/* one SEND: its ACK waits 500 us, then goes */
	assert_int_equal(post(l, &l->a, 1, FAB_WR_SEND, FAB_SEND_SIGNALED,
			      src, 64, 1, 0, 0, 0), 1);
	l->now += 1;
	deliver(l);
	t0 = l->now;
	assert_int_equal(sb->rx_packets, 1);
	assert_int_equal(sb->acks_sent, 0);
	assert_int_equal(soft_rc_deadline(l->b.rc), t0 + 500);
	l->now = t0 + 499;
	deliver(l);
	assert_int_equal(sb->acks_sent, 0);
	assert_int_equal(poll1(&l->a, &wc), 0);
	l->now = t0 + 500;
	deliver(l);
	assert_int_equal(sb->acks_sent, 1);
	l->now += 1;
	deliver(l);
	assert_int_equal(poll1(&l->a, &wc), 1);
	assert_int_equal(wc.wr_id, 1);
	assert_int_equal(wc.status, FAB_WC_SUCCESS);
	assert_int_equal(poll1(&l->b, &wc), 1);

	/* 16 packets owed: the ACK goes at once */
	for (i = 0; i < 16; i++)
		assert_int_equal(post(l, &l->a, 100 + i, FAB_WR_SEND, 0, src,
				      64, 1, 0, 0, 0), 1);
	l->now += 1;
	deliver(l);
	assert_int_equal(sb->acks_sent, 2);
	for (i = 0; i < 16; i++)
		assert_int_equal(poll1(&l->b, &wc), 1);

	/* a duplicate request (a retransmission) is ACKed at once */
	assert_int_equal(post(l, &l->a, 200, FAB_WR_SEND, 0, src, 64, 1, 0,
			      0, 0), 1);
	assert_int_equal(l->q[0].n, 1);
	clen = l->q[0].len[0];
	copy = malloc(clen);
	assert_non_null(copy);
	memcpy(copy, l->q[0].p[0], clen);
	l->now += 1;
	deliver(l);
	assert_int_equal(sb->acks_sent, 2);	/* owed, waiting */
	soft_rc_input(l->b.rc, copy, clen, l->now);
	free(copy);
	soft_rc_progress(l->b.rc, l->now);
	assert_int_equal(sb->dup_requests, 1);
	assert_int_equal(sb->acks_sent, 3);
	assert_int_equal(poll1(&l->b, &wc), 1);

	/* soft_rc_ack_now: before a disconnect */
	assert_int_equal(post(l, &l->a, 300, FAB_WR_SEND, 0, src, 64, 1, 0,
			      0, 0), 1);
	l->now += 1;
	deliver(l);
	assert_int_equal(sb->acks_sent, 3);
	soft_rc_ack_now(l->b.rc, l->now);
	assert_int_equal(sb->acks_sent, 4);
	assert_int_equal(poll1(&l->b, &wc), 1);
	assert_true(pump(l, 1000));
	while (poll1(&l->a, &wc) == 1)
		assert_int_equal(wc.status, FAB_WC_SUCCESS);
	link_free(l);

	/* 100 one-way SENDs 1 us apart (within one delay) cost one ACK
	 * per 16 with the delay, one per message without it; 100 ping-pongs
	 * complete each ping with its pong either way */
	for (i = 0; i < 4; i++) {
		struct soft_rc_conn cb;
		int k;

		c.ack_delay_us = i & 1 ? 0 : 500;
		cb = peer_of(&c);
		l = mklink(&cfg, &c, &cb);
		add_mr(&l->a, 1, dst, sizeof(dst), FAB_ACCESS_LOCAL_WRITE);
		add_mr(&l->b, 2, dst, sizeof(dst), FAB_ACCESS_LOCAL_WRITE);
		for (k = 0; k < 100; k++) {
			assert_int_equal(post_recv(&l->a, k, dst + k * 64, 64,
						   1), 1);
			assert_int_equal(post_recv(&l->b, k, dst + k * 64, 64,
						   2), 1);
		}
		sb = soft_rc_stats(l->b.rc);
		exchange(l, dst, 100, i >= 2);
		print_message("100 %s, ACK delay %u: b sent %llu ACKs\n",
			      i >= 2 ? "ping-pongs" : "one-way sends",
			      c.ack_delay_us,
			      (unsigned long long)sb->acks_sent);
		if (i < 2 && c.ack_delay_us)
			assert_true(sb->acks_sent >= 6 && sb->acks_sent <= 7);
		else if (i < 2)
			assert_int_equal(sb->acks_sent, 100);
		link_free(l);
	}

	/* the delay is at most 1/64 of the ACK timeout: timeout 10 is
	 * 4194 us, so 65 */
	c = conn_a();
	c.ack_delay_us = 500;
	l = mklink(&cfg, &c, NULL);
	add_mr(&l->a, 1, src, sizeof(src), FAB_ACCESS_LOCAL_WRITE);
	add_mr(&l->b, 2, dst, sizeof(dst), FAB_ACCESS_LOCAL_WRITE);
	assert_int_equal(post_recv(&l->b, 0, dst, 64, 2), 1);
	assert_int_equal(post(l, &l->a, 1, FAB_WR_SEND, 0, src, 64, 1, 0, 0,
			      0), 1);
	l->now += 1;
	deliver(l);
	assert_int_equal(soft_rc_deadline(l->b.rc), l->now + 65);
	link_free(l);
}

static void test_rnr(void **state)
{
	static uint8_t src[100], dst[100];
	struct fab_wc wc;
	struct link *l;

	(void)state;
	l = mklink(NULL, NULL, NULL);
	add_mr(&l->a, 1, src, sizeof(src), 0);
	add_mr(&l->b, 2, dst, sizeof(dst), FAB_ACCESS_LOCAL_WRITE);
	fill(src, sizeof(src), 1);
	assert_int_equal(post(l, &l->a, 1, FAB_WR_SEND, FAB_SEND_SIGNALED,
			      src, 100, 1, 0, 0, 0), 1);
	assert_false(pump(l, 50));	/* rnr_retry 7: for ever */
	assert_true(soft_rc_stats(l->b.rc)->rnr_naks_sent > 1);
	assert_true(soft_rc_stats(l->a.rc)->rnr_naks_rcvd > 1);
	assert_int_equal(poll1(&l->a, &wc), 0);
	assert_int_equal(post_recv(&l->b, 2, dst, sizeof(dst), 2), 1);
	assert_true(pump(l, 100));
	assert_int_equal(poll1(&l->a, &wc), 1);
	assert_int_equal(wc.status, FAB_WC_SUCCESS);
	assert_int_equal(poll1(&l->b, &wc), 1);
	assert_int_equal(wc.status, FAB_WC_SUCCESS);
	assert_memory_equal(dst, src, 100);
	link_free(l);
}

static void test_rnr_exceeded(void **state)
{
	static uint8_t src[100], rbuf[16];
	static const uint8_t tries[] = { 0, 2 };
	struct fab_wc wc;
	size_t t;

	(void)state;
	for (t = 0; t < sizeof(tries); t++) {
		struct soft_rc_conn c = conn_a();
		struct link *l;

		c.rnr_retry = tries[t];
		l = mklink(NULL, &c, NULL);
		add_mr(&l->a, 1, src, sizeof(src), 0);
		add_mr(&l->b, 0x77, src, sizeof(src),
		       FAB_ACCESS_LOCAL_WRITE | FAB_ACCESS_REMOTE_WRITE);
		/* a WRITE with immediate needs a receive too */
		assert_int_equal(post(l, &l->a, 1,
				      FAB_WR_RDMA_WRITE_WITH_IMM, 0, src, 10,
				      1, (uintptr_t)src, 0x77, 1), 1);
		assert_int_equal(post(l, &l->a, 2, FAB_WR_SEND, 0, src, 10, 1,
				      0, 0, 0), 1);
		assert_true(pump(l, 1000));
		assert_int_equal(soft_rc_stats(l->a.rc)->rnr_naks_rcvd,
				 tries[t] + 1);
		assert_int_equal(poll1(&l->a, &wc), 1);
		assert_int_equal(wc.wr_id, 1);
		assert_int_equal(wc.status, FAB_WC_RNR_RETRY_EXC_ERR);
		assert_int_equal(poll1(&l->a, &wc), 1);
		assert_int_equal(wc.wr_id, 2);
		assert_int_equal(wc.status, FAB_WC_WR_FLUSH_ERR);
		assert_int_equal(soft_rc_state(l->a.rc), SOFT_RC_ERROR);
		/* the responder is fine: a receive now posted stays */
		assert_int_equal(post_recv(&l->b, 3, rbuf, 16, 0), 1);
		assert_int_equal(poll1(&l->b, &wc), 0);
		link_free(l);
	}
}

static void test_peer_gone(void **state)
{
	static uint8_t src[100], rbuf[16];
	struct soft_rc_conn c = conn_a();
	struct fab_wc wc;
	struct link *l;

	(void)state;
	c.retry_cnt = 3;
	l = mklink(NULL, &c, NULL);
	add_mr(&l->a, 1, src, sizeof(src), 0);
	l->down[0] = 1;
	assert_int_equal(post_recv(&l->a, 50, rbuf, 16, 1), 1);
	assert_int_equal(post(l, &l->a, 1, FAB_WR_SEND, 0, src, 100, 1, 0, 0,
			      0), 1);
	assert_int_equal(post(l, &l->a, 2, FAB_WR_SEND, FAB_SEND_SIGNALED,
			      src, 100, 1, 0, 0, 0), 1);
	assert_true(pump(l, 1000));
	assert_int_equal(soft_rc_stats(l->a.rc)->timeouts, 4);
	assert_int_equal(soft_rc_stats(l->a.rc)->retransmits, 6);
	assert_true(l->now >= 1000 + 4 * 4194);
	assert_int_equal(soft_rc_state(l->a.rc), SOFT_RC_ERROR);
	assert_int_equal(poll1(&l->a, &wc), 1);
	assert_int_equal(wc.wr_id, 1);
	assert_int_equal(wc.status, FAB_WC_RETRY_EXC_ERR);
	assert_int_equal(poll1(&l->a, &wc), 1);
	assert_int_equal(wc.wr_id, 2);
	assert_int_equal(wc.status, FAB_WC_WR_FLUSH_ERR);
	assert_int_equal(poll1(&l->a, &wc), 1);
	assert_int_equal(wc.wr_id, 50);
	assert_int_equal(wc.recv, 1);
	assert_int_equal(wc.status, FAB_WC_WR_FLUSH_ERR);
	/* later posts are accepted and flushed */
	assert_int_equal(post(l, &l->a, 3, FAB_WR_SEND, 0, src, 1, 1, 0, 0,
			      0), 1);
	assert_int_equal(poll1(&l->a, &wc), 1);
	assert_int_equal(wc.wr_id, 3);
	assert_int_equal(wc.status, FAB_WC_WR_FLUSH_ERR);
	assert_int_equal(poll1(&l->a, &wc), 0);
	link_free(l);
}

/* FAB_SEND_SOLICITED sets BTH SE on the last packet of the SEND only
 * (what the kernel's RDS arms its completion queue for); a SEND without
 * it, and an RDMA WRITE with it, carry no SE. */
static void test_solicited(void **state)
{
	static uint8_t src[10000];
	static const struct {
		enum fab_wr_opcode op;
		unsigned int flags;
		int se_last;
	} c[] = {
		{ FAB_WR_SEND, FAB_SEND_SOLICITED, 1 },
		{ FAB_WR_SEND, 0, 0 },
		{ FAB_WR_RDMA_WRITE, FAB_SEND_SOLICITED, 0 },
	};
	struct ib_rc r;
	struct link *l;
	size_t i, k;

	(void)state;
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		l = mklink(NULL, NULL, NULL);
		add_mr(&l->a, 1, src, sizeof(src), 0);
		assert_int_equal(post(l, &l->a, 1, c[i].op, FAB_SEND_SIGNALED |
				      c[i].flags, src, sizeof(src), 1, 0, 0,
				      0), 1);
		assert_true(l->q[0].n >= 3);	/* FIRST, MIDDLE..., LAST */
		for (k = 0; k < l->q[0].n; k++) {
			assert_int_equal(ib_rc_parse(l->q[0].p[k],
						     l->q[0].len[k], 0, &r),
					 IB_RC_OK);
			assert_int_equal(r.bth.se, k + 1 == l->q[0].n ?
					 c[i].se_last : 0);
		}
		link_free(l);
	}
}

/* A zero-length WRITE (a keepalive probe) names no memory: it succeeds
 * with rkey 0 and no SGE, and changes nothing at the responder; one byte
 * to the same rkey is a remote access error. */
static void test_write_zero_length(void **state)
{
	static uint8_t src[16], dst[16];
	struct fab_rc_wr wr = {
		.wr_id = 5, .opcode = FAB_WR_RDMA_WRITE,
		.flags = FAB_SEND_SIGNALED,
	};
	struct fab_wc wc;
	struct link *l;

	(void)state;
	l = mklink(NULL, NULL, NULL);
	add_mr(&l->a, 1, src, sizeof(src), 0);
	add_mr(&l->b, 0x77, dst, sizeof(dst),
	       FAB_ACCESS_LOCAL_WRITE | FAB_ACCESS_REMOTE_WRITE);
	assert_int_equal(soft_rc_post_send(l->a.rc, &wr, 1, l->now), 1);
	assert_true(pump(l, 1000));
	assert_int_equal(poll1(&l->a, &wc), 1);
	assert_int_equal(wc.wr_id, 5);
	assert_int_equal(wc.status, FAB_WC_SUCCESS);
	assert_int_equal(wc.opcode, FAB_WC_RDMA_WRITE);
	assert_int_equal(poll1(&l->b, &wc), 0);
	assert_int_equal(soft_rc_state(l->b.rc), SOFT_RC_RTS);
	fill(src, sizeof(src), 3);
	assert_int_equal(post(l, &l->a, 6, FAB_WR_RDMA_WRITE,
			      FAB_SEND_SIGNALED, src, 1, 1, 0, 0, 0), 1);
	assert_true(pump(l, 1000));
	assert_int_equal(poll1(&l->a, &wc), 1);
	assert_int_equal(wc.status, FAB_WC_REM_ACCESS_ERR);
	link_free(l);
}

static void test_bad_keys(void **state)
{
	static uint8_t src[100], dst[100];
	struct fab_wc wc;
	struct link *l;

	(void)state;
	/* bad rkey: NAK remote access error, both ends in error */
	l = mklink(NULL, NULL, NULL);
	add_mr(&l->a, 1, src, sizeof(src), 0);
	add_mr(&l->b, 0x77, dst, sizeof(dst), FAB_ACCESS_LOCAL_WRITE);
	assert_int_equal(post(l, &l->a, 1, FAB_WR_RDMA_WRITE, 0, src, 10, 1,
			      (uintptr_t)dst, 0x77, 0), 1);	/* no rights */
	assert_true(pump(l, 100));
	assert_int_equal(poll1(&l->a, &wc), 1);
	assert_int_equal(wc.status, FAB_WC_REM_ACCESS_ERR);
	assert_int_equal(soft_rc_stats(l->b.rc)->naks_sent, 1);
	assert_int_equal(soft_rc_state(l->b.rc), SOFT_RC_ERROR);
	link_free(l);

	/* out of the region */
	l = mklink(NULL, NULL, NULL);
	add_mr(&l->a, 1, src, sizeof(src), FAB_ACCESS_LOCAL_WRITE);
	add_mr(&l->b, 0x55, dst, sizeof(dst), FAB_ACCESS_REMOTE_READ);
	assert_int_equal(post(l, &l->a, 1, FAB_WR_RDMA_READ, 0, src, 100, 1,
			      (uintptr_t)dst + 1, 0x55, 0), 1);
	assert_true(pump(l, 100));
	assert_int_equal(poll1(&l->a, &wc), 1);
	assert_int_equal(wc.status, FAB_WC_REM_ACCESS_ERR);
	link_free(l);

	/* bad lkey: local protection error, nothing sent */
	l = mklink(NULL, NULL, NULL);
	add_mr(&l->a, 1, src, sizeof(src), 0);
	assert_int_equal(post(l, &l->a, 1, FAB_WR_SEND, 0, src, 10, 9, 0, 0,
			      0), 1);
	assert_int_equal(post(l, &l->a, 2, FAB_WR_SEND, 0, src, 10, 1, 0, 0,
			      0), 1);
	assert_int_equal(poll1(&l->a, &wc), 1);
	assert_int_equal(wc.status, FAB_WC_LOC_PROT_ERR);
	assert_int_equal(poll1(&l->a, &wc), 1);
	assert_int_equal(wc.status, FAB_WC_WR_FLUSH_ERR);
	assert_int_equal(soft_rc_stats(l->a.rc)->tx_packets, 0);
	link_free(l);
}

static void test_recv_too_small(void **state)
{
	static uint8_t src[200], dst[200];
	struct fab_wc wc;
	struct link *l;

	(void)state;
	l = mklink(NULL, NULL, NULL);
	add_mr(&l->a, 1, src, sizeof(src), 0);
	add_mr(&l->b, 2, dst, sizeof(dst), FAB_ACCESS_LOCAL_WRITE);
	assert_int_equal(post_recv(&l->b, 1, dst, 100, 2), 1);
	assert_int_equal(post_recv(&l->b, 2, dst + 100, 100, 2), 1);
	assert_int_equal(post(l, &l->a, 1, FAB_WR_SEND, 0, src, 200, 1, 0, 0,
			      0), 1);
	assert_true(pump(l, 100));
	assert_int_equal(poll1(&l->a, &wc), 1);
	assert_int_equal(wc.status, FAB_WC_REM_INV_REQ_ERR);
	assert_int_equal(poll1(&l->b, &wc), 1);
	assert_int_equal(wc.wr_id, 1);
	assert_int_equal(wc.status, FAB_WC_LOC_LEN_ERR);
	assert_int_equal(poll1(&l->b, &wc), 1);
	assert_int_equal(wc.wr_id, 2);
	assert_int_equal(wc.status, FAB_WC_WR_FLUSH_ERR);
	assert_int_equal(soft_rc_state(l->b.rc), SOFT_RC_ERROR);
	link_free(l);
}

static void test_set_error(void **state)
{
	static uint8_t src[100], rbuf[16];
	struct fab_wc wc[8];
	struct link *l;
	int i;

	(void)state;
	l = mklink(NULL, NULL, NULL);
	add_mr(&l->a, 1, src, sizeof(src), 0);
	l->down[0] = 1;
	for (i = 0; i < 3; i++)
		assert_int_equal(post(l, &l->a, i, FAB_WR_SEND, 0, src, 100,
				      1, 0, 0, 0), 1);
	assert_int_equal(post_recv(&l->a, 10, rbuf, 16, 1), 1);
	assert_int_equal(post_recv(&l->a, 11, rbuf, 16, 1), 1);
	soft_rc_set_error(l->a.rc);
	assert_int_equal(soft_rc_state(l->a.rc), SOFT_RC_ERROR);
	assert_int_equal(soft_rc_poll(l->a.rc, wc, 8), 5);
	for (i = 0; i < 5; i++) {
		assert_int_equal(wc[i].status, FAB_WC_WR_FLUSH_ERR);
		assert_int_equal(wc[i].wr_id, i < 3 ? (uint64_t)i :
					      (uint64_t)(10 + i - 3));
		assert_int_equal(wc[i].recv, i >= 3);
	}
	assert_int_equal(post_recv(&l->a, 12, rbuf, 16, 1), 1);
	assert_int_equal(soft_rc_poll(l->a.rc, wc, 8), 1);
	assert_int_equal(wc[0].wr_id, 12);
	assert_int_equal(soft_rc_deadline(l->a.rc), UINT64_MAX);
	/* input in the error state is dropped */
	l->down[0] = 0;
	assert_true(pump(l, 100));
	link_free(l);
}

/* --- hostile packets ------------------------------------------------------ */

static size_t craft(uint8_t *buf, uint8_t op, uint32_t psn, uint32_t qpn,
		    uint16_t slid, uint16_t pkey, const void *pl, size_t n,
		    uint64_t va, uint32_t rkey, uint32_t dma_len)
{
	struct ib_rc r;
	enum ib_rc_err err;
	size_t len;

	memset(&r, 0, sizeof(r));
	r.lrh.dlid = 2;
	r.lrh.slid = slid;
	r.bth.opcode = op;
	r.bth.pkey = pkey;
	r.bth.destqp = qpn;
	r.bth.psn = psn;
	r.reth.va = va;
	r.reth.rkey = rkey;
	r.reth.dma_len = dma_len;
	r.aeth.type = IB_AETH_ACK;
	r.aeth.value = IB_AETH_CREDIT_INVALID;
	r.payload = pl;
	r.payload_len = n;
	len = ib_rc_build(&r, 1024, buf, IB_MAX_PKT, &err);
	assert_int_equal(err, IB_RC_OK);
	return len;
}

static void test_hostile_responder(void **state)
{
	static uint8_t dst[4096], pl[1024], buf[IB_MAX_PKT];
	const struct soft_rc_stats *sb;
	struct soft_rc *b;
	struct link *l;
	size_t n;

	(void)state;
	l = mklink(NULL, NULL, NULL);
	b = l->b.rc;
	sb = soft_rc_stats(b);
	add_mr(&l->b, 0x77, dst, sizeof(dst),
	       FAB_ACCESS_LOCAL_WRITE | FAB_ACCESS_REMOTE_WRITE);
	memset(pl, 0xab, sizeof(pl));

	/* not ours: QPN, SLID, P_Key; the 15-bit compare lets 0x7fff in */
	n = craft(buf, IB_OP_RC_WRITE_ONLY, 0x100, 0x23, 1, 0xffff, pl, 8,
		  (uintptr_t)dst, 0x77, 8);
	soft_rc_input(b, buf, n, l->now);
	n = craft(buf, IB_OP_RC_WRITE_ONLY, 0x100, 0x22, 9, 0xffff, pl, 8,
		  (uintptr_t)dst, 0x77, 8);
	soft_rc_input(b, buf, n, l->now);
	n = craft(buf, IB_OP_RC_WRITE_ONLY, 0x100, 0x22, 1, 0x8001, pl, 8,
		  (uintptr_t)dst, 0x77, 8);
	soft_rc_input(b, buf, n, l->now);
	assert_int_equal(sb->drop_not_ours, 3);
	/* garbage and truncation */
	memset(buf, 0x5a, 64);
	soft_rc_input(b, buf, 64, l->now);
	soft_rc_input(b, buf, 3, l->now);
	soft_rc_input(b, buf, 0, l->now);
	assert_int_equal(sb->drop_malformed, 3);
	assert_int_equal(dst[0], 0);
	assert_int_equal(l->q[1].n, 0);

	/* a 7fff P_Key is the same partition: accepted */
	n = craft(buf, IB_OP_RC_WRITE_ONLY, 0x100, 0x22, 1, 0x7fff, pl, 8,
		  (uintptr_t)dst, 0x77, 8);
	soft_rc_input(b, buf, n, l->now);
	assert_int_equal(dst[0], 0xab);
	assert_int_equal(dst[8], 0);
	/* far ahead: one NAK, and no more for the next ones */
	n = craft(buf, IB_OP_RC_WRITE_ONLY, 0x150, 0x22, 1, 0xffff, pl, 8,
		  (uintptr_t)dst + 100, 0x77, 8);
	soft_rc_input(b, buf, n, l->now);
	soft_rc_input(b, buf, n, l->now);
	assert_int_equal(sb->out_of_seq, 2);
	assert_int_equal(sb->seq_naks_sent, 1);
	assert_int_equal(dst[100], 0);

	/* a WRITE FIRST for pmtu + 10 bytes, then a LAST of 100 */
	n = craft(buf, IB_OP_RC_WRITE_FIRST, 0x101, 0x22, 1, 0xffff, pl,
		  1024, (uintptr_t)dst + 1024, 0x77, 1034);
	soft_rc_input(b, buf, n, l->now);
	assert_int_equal(dst[1024], 0xab);
	n = craft(buf, IB_OP_RC_WRITE_LAST, 0x102, 0x22, 1, 0xffff, pl, 100,
		  0, 0, 0);
	soft_rc_input(b, buf, n, l->now);
	assert_int_equal(dst[2048], 0);		/* nothing past the RETH */
	assert_int_equal(sb->naks_sent, 1);
	assert_int_equal(soft_rc_state(b), SOFT_RC_ERROR);
	soft_rc_input(b, buf, n, l->now);
	assert_int_equal(sb->drop_state, 1);
	link_free(l);

	/* the same FIRST, then a LAST shorter than what is left */
	l = mklink(NULL, NULL, NULL);
	b = l->b.rc;
	sb = soft_rc_stats(b);
	memset(dst, 0, sizeof(dst));
	add_mr(&l->b, 0x77, dst, sizeof(dst),
	       FAB_ACCESS_LOCAL_WRITE | FAB_ACCESS_REMOTE_WRITE);
	n = craft(buf, IB_OP_RC_WRITE_FIRST, 0x100, 0x22, 1, 0xffff, pl,
		  1024, (uintptr_t)dst, 0x77, 1034);
	soft_rc_input(b, buf, n, l->now);
	n = craft(buf, IB_OP_RC_WRITE_LAST, 0x101, 0x22, 1, 0xffff, pl, 5,
		  0, 0, 0);
	soft_rc_input(b, buf, n, l->now);
	assert_int_equal(dst[1024], 0);
	assert_int_equal(sb->naks_sent, 1);
	assert_int_equal(soft_rc_state(b), SOFT_RC_ERROR);
	link_free(l);

	/* MIDDLE without FIRST */
	l = mklink(NULL, NULL, NULL);
	b = l->b.rc;
	sb = soft_rc_stats(b);
	n = craft(buf, IB_OP_RC_SEND_MIDDLE, 0x100, 0x22, 1, 0xffff, pl, 1024,
		  0, 0, 0);
	soft_rc_input(b, buf, n, l->now);
	assert_int_equal(sb->naks_sent, 1);
	assert_int_equal(soft_rc_state(b), SOFT_RC_ERROR);
	link_free(l);

	/* a read longer than a message may be */
	l = mklink(NULL, NULL, NULL);
	b = l->b.rc;
	sb = soft_rc_stats(b);
	add_mr(&l->b, 0x55, dst, sizeof(dst), FAB_ACCESS_REMOTE_READ);
	n = craft(buf, IB_OP_RC_READ_REQUEST, 0x100, 0x22, 1, 0xffff, NULL, 0,
		  (uintptr_t)dst, 0x55, 0x80000000u);
	soft_rc_input(b, buf, n, l->now);
	assert_int_equal(sb->naks_sent, 1);
	assert_int_equal(l->q[1].n, 1);		/* the NAK, no data */
	link_free(l);
}

static void test_hostile_requester(void **state)
{
	static uint8_t src[100], buf[IB_MAX_PKT], pl[1024];
	const struct soft_rc_stats *sa;
	struct fab_wc wc;
	struct soft_rc *a;
	struct link *l;
	size_t n;

	(void)state;
	l = mklink(NULL, NULL, NULL);
	a = l->a.rc;
	sa = soft_rc_stats(a);
	add_mr(&l->a, 1, src, sizeof(src), 0);

	/* nothing sent: an ACK is a ghost, so is a read response */
	n = craft(buf, IB_OP_RC_ACK, 0x100, 0x11, 2, 0xffff, NULL, 0, 0, 0,
		  0);
	soft_rc_input(a, buf, n, l->now);
	n = craft(buf, IB_OP_RC_READ_RESP_ONLY, 0x100, 0x11, 2, 0xffff, pl,
		  10, 0, 0, 0);
	soft_rc_input(a, buf, n, l->now);
	assert_int_equal(sa->ghost_acks, 2);

	/* one SEND out (held): a read response for its PSN matches no read,
	 * an ACK past it is a ghost, an old one is nothing */
	l->down[0] = 1;
	assert_int_equal(post(l, &l->a, 1, FAB_WR_SEND, FAB_SEND_SIGNALED,
			      src, 100, 1, 0, 0, 0), 1);
	n = craft(buf, IB_OP_RC_READ_RESP_ONLY, 0x100, 0x11, 2, 0xffff, pl,
		  100, 0, 0, 0);
	soft_rc_input(a, buf, n, l->now);
	assert_int_equal(sa->bad_responses, 1);
	n = craft(buf, IB_OP_RC_ACK, 0x101, 0x11, 2, 0xffff, NULL, 0, 0, 0, 0);
	soft_rc_input(a, buf, n, l->now);
	assert_int_equal(sa->ghost_acks, 3);
	n = craft(buf, IB_OP_RC_ACK, 0xff, 0x11, 2, 0xffff, NULL, 0, 0, 0, 0);
	soft_rc_input(a, buf, n, l->now);
	assert_int_equal(sa->acks_rcvd, 0);
	assert_int_equal(poll1(&l->a, &wc), 0);
	/* a NAK naming it makes it go again */
	n = craft(buf, IB_OP_RC_ACK, 0x100, 0x11, 2, 0xffff, NULL, 0, 0, 0, 0);
	buf[20] = 0x60;		/* NAK PSN sequence error */
	soft_rc_input(a, buf, n, l->now);
	assert_int_equal(sa->seq_naks_rcvd, 1);
	assert_int_equal(sa->retransmits, 1);
	/* the real ACK completes it */
	n = craft(buf, IB_OP_RC_ACK, 0x100, 0x11, 2, 0xffff, NULL, 0, 0, 0, 0);
	soft_rc_input(a, buf, n, l->now);
	assert_int_equal(sa->acks_rcvd, 1);
	assert_int_equal(poll1(&l->a, &wc), 1);
	assert_int_equal(wc.status, FAB_WC_SUCCESS);
	assert_int_equal(soft_rc_state(a), SOFT_RC_RTS);
	link_free(l);
}

static void test_psn_wrap(void **state)
{
	static uint8_t src[65536], dst[65536], rd[8192];
	struct soft_rc_conn c = conn_a();
	struct fab_wc wc;
	struct link *l;
	int i;

	(void)state;
	c.sq_psn = 0xfffff0;
	c.rq_psn = 0xfffffa;
	l = mklink(NULL, &c, NULL);
	l->loss = 20;
	l->swap = 20;
	fill(src, sizeof(src), 4);
	add_mr(&l->a, 1, src, sizeof(src), FAB_ACCESS_REMOTE_READ);
	add_mr(&l->b, 2, dst, sizeof(dst), FAB_ACCESS_LOCAL_WRITE);
	add_mr(&l->a, 3, rd, sizeof(rd), FAB_ACCESS_LOCAL_WRITE);
	for (i = 0; i < 2; i++) {
		memset(dst, 0, sizeof(dst));
		assert_int_equal(post_recv(&l->b, i, dst, sizeof(dst), 2), 1);
		assert_int_equal(post(l, &l->a, i, FAB_WR_SEND,
				      FAB_SEND_SIGNALED, src, 65536, 1, 0, 0,
				      0), 1);
		assert_true(pump(l, 100000));
		assert_int_equal(poll1(&l->a, &wc), 1);
		assert_int_equal(wc.status, FAB_WC_SUCCESS);
		assert_int_equal(poll1(&l->b, &wc), 1);
		assert_int_equal(wc.status, FAB_WC_SUCCESS);
		assert_memory_equal(dst, src, 65536);
	}
	/* and a read back across B's own wrap */
	assert_int_equal(post(l, &l->b, 9, FAB_WR_RDMA_READ, FAB_SEND_SIGNALED,
			      dst, 8192, 2, (uintptr_t)src, 1, 0), 1);
	assert_true(pump(l, 100000));
	assert_int_equal(poll1(&l->b, &wc), 1);
	assert_int_equal(wc.status, FAB_WC_SUCCESS);
	assert_memory_equal(dst, src, 8192);
	link_free(l);
}

static void test_fence_and_rd_atomic(void **state)
{
	static uint8_t rsrc[4096], dst[4096], src[64], rbuf[64];
	struct soft_rc_conn c = conn_a();
	struct fab_wc wc;
	struct link *l;
	int i;

	(void)state;
	c.max_rd_atomic = 2;
	l = mklink(NULL, &c, NULL);
	add_mr(&l->b, 0x55, rsrc, sizeof(rsrc), FAB_ACCESS_REMOTE_READ);
	add_mr(&l->b, 2, rbuf, sizeof(rbuf), FAB_ACCESS_LOCAL_WRITE);
	add_mr(&l->a, 1, dst, sizeof(dst), FAB_ACCESS_LOCAL_WRITE);
	add_mr(&l->a, 3, src, sizeof(src), 0);
	assert_int_equal(post_recv(&l->b, 1, rbuf, sizeof(rbuf), 2), 1);
	l->down[1] = 1;		/* no responses yet */
	for (i = 0; i < 3; i++)
		assert_int_equal(post(l, &l->a, i, FAB_WR_RDMA_READ,
				      FAB_SEND_SIGNALED, dst, 2048, 1,
				      (uintptr_t)rsrc, 0x55, 0), 1);
	assert_int_equal(post(l, &l->a, 3, FAB_WR_SEND,
			      FAB_SEND_SIGNALED | FAB_SEND_FENCE, src, 64, 3,
			      0, 0, 0), 1);
	/* two reads out, the third waits for max_rd_atomic */
	assert_int_equal(soft_rc_stats(l->a.rc)->tx_packets, 2);
	l->down[1] = 0;
	l->now += 1;
	/* B answers both reads, A takes them: the third read goes, the
	 * fenced SEND waits for it */
	deliver(l);
	assert_int_equal(soft_rc_stats(l->a.rc)->tx_packets, 3);
	deliver(l);		/* the last read done: now the SEND */
	assert_int_equal(soft_rc_stats(l->a.rc)->tx_packets, 4);
	assert_true(pump(l, 1000));
	for (i = 0; i < 4; i++) {
		assert_int_equal(poll1(&l->a, &wc), 1);
		assert_int_equal(wc.wr_id, i);
		assert_int_equal(wc.status, FAB_WC_SUCCESS);
	}
	link_free(l);
}

static void test_api_errors(void **state)
{
	struct soft_rc_conn c = conn_a();
	struct soft_rc_cfg big = { .max_sge = SOFT_RC_MAX_SGE + 1 };
	static uint8_t src[16];
	struct soft_rc *rc;
	struct link *l;

	(void)state;
	errno = 0;
	assert_null(soft_rc_new(&big, &ops, NULL));
	assert_int_equal(errno, EINVAL);
	rc = soft_rc_new(NULL, &ops, NULL);
	assert_non_null(rc);
	assert_int_equal(soft_rc_state(rc), SOFT_RC_RESET);
	assert_int_equal(soft_rc_deadline(rc), UINT64_MAX);
	{
		struct fab_sge sge = { (uintptr_t)src, 16, 1 };
		struct fab_rc_wr wr = { .opcode = FAB_WR_SEND,
					.sg_list = &sge, .num_sge = 1 };
		struct fab_recv_wr rwr = { 1, &sge, 1 };

		errno = 0;
		assert_int_equal(soft_rc_post_send(rc, &wr, 1, 0), -1);
		assert_int_equal(errno, EINVAL);
		assert_int_equal(soft_rc_post_recv(rc, &rwr, 1), 1);
	}
	c.path_mtu = 6;
	errno = 0;
	assert_int_equal(soft_rc_connect(rc, &c, 0), -1);
	assert_int_equal(errno, EINVAL);
	c = conn_a();
	c.max_rd_atomic = 0;
	assert_int_equal(soft_rc_connect(rc, &c, 0), -1);
	c = conn_a();
	assert_int_equal(soft_rc_connect(rc, &c, 0), 0);
	errno = 0;
	assert_int_equal(soft_rc_connect(rc, &c, 0), -1);
	assert_int_equal(errno, EISCONN);
	soft_rc_free(rc);

	/* a bad opcode, too many SGEs */
	l = mklink(NULL, NULL, NULL);
	errno = 0;
	assert_int_equal(post(l, &l->a, 1, (enum fab_wr_opcode)99, 0, src, 1,
			      1, 0, 0, 0), -1);
	assert_int_equal(errno, EINVAL);
	{
		struct fab_sge sg[2] = { { (uintptr_t)src, 1, 1 },
					 { (uintptr_t)src, 1, 1 } };
		struct fab_rc_wr wr = { .opcode = FAB_WR_SEND, .sg_list = sg,
					.num_sge = 2 };

		errno = 0;
		assert_int_equal(soft_rc_post_send(l->a.rc, &wr, 1, l->now),
				 -1);
		assert_int_equal(errno, EINVAL);
	}
	link_free(l);
}

/* A read's first response lost, no timer at all: the responses after it
 * (and the ACK of the SEND behind it) are an implied NAK, and the read is
 * asked again. */
static void test_read_implied_nak(void **state)
{
	static uint8_t rsrc[2048], dst[2048], src[16], rbuf[16];
	struct soft_rc_conn c = conn_a();
	struct fab_wc wc;
	struct link *l;

	(void)state;
	c.timeout = 0;
	l = mklink(NULL, &c, NULL);
	fill(rsrc, sizeof(rsrc), 8);
	add_mr(&l->b, 0x55, rsrc, sizeof(rsrc), FAB_ACCESS_REMOTE_READ);
	add_mr(&l->b, 2, rbuf, sizeof(rbuf), FAB_ACCESS_LOCAL_WRITE);
	add_mr(&l->a, 1, dst, sizeof(dst), FAB_ACCESS_LOCAL_WRITE);
	add_mr(&l->a, 3, src, sizeof(src), 0);
	assert_int_equal(post_recv(&l->b, 1, rbuf, sizeof(rbuf), 2), 1);
	l->drop_at[1] = 1;
	assert_int_equal(post(l, &l->a, 1, FAB_WR_RDMA_READ,
			      FAB_SEND_SIGNALED, dst, 2048, 1,
			      (uintptr_t)rsrc, 0x55, 0), 1);
	assert_int_equal(post(l, &l->a, 2, FAB_WR_SEND, FAB_SEND_SIGNALED,
			      src, 16, 3, 0, 0, 0), 1);
	assert_true(pump(l, 1000));
	assert_int_equal(poll1(&l->a, &wc), 1);
	assert_int_equal(wc.wr_id, 1);
	assert_int_equal(wc.status, FAB_WC_SUCCESS);
	assert_int_equal(poll1(&l->a, &wc), 1);
	assert_int_equal(wc.wr_id, 2);
	assert_int_equal(wc.status, FAB_WC_SUCCESS);
	assert_memory_equal(dst, rsrc, sizeof(rsrc));
	assert_int_equal(soft_rc_stats(l->a.rc)->timeouts, 0);
	assert_true(soft_rc_stats(l->b.rc)->dup_requests > 0);
	link_free(l);
}

/* A link with room for 8 packets: the engines keep what xmit refused and
 * send it from progress. */
static void test_link_full(void **state)
{
	static uint8_t src[256 * 1024], dst[256 * 1024], rsrc[64 * 1024],
		       rdst[64 * 1024];
	struct fab_wc wc;
	struct link *l;

	(void)state;
	l = mklink(NULL, NULL, NULL);
	l->cap = 8;
	fill(src, sizeof(src), 21);
	fill(rsrc, sizeof(rsrc), 22);
	add_mr(&l->a, 1, src, sizeof(src), 0);
	add_mr(&l->a, 3, rdst, sizeof(rdst), FAB_ACCESS_LOCAL_WRITE);
	add_mr(&l->b, 2, dst, sizeof(dst), FAB_ACCESS_LOCAL_WRITE);
	add_mr(&l->b, 0x55, rsrc, sizeof(rsrc), FAB_ACCESS_REMOTE_READ);
	assert_int_equal(post_recv(&l->b, 1, dst, sizeof(dst), 2), 1);
	assert_int_equal(post(l, &l->a, 1, FAB_WR_SEND, FAB_SEND_SIGNALED,
			      src, sizeof(src), 1, 0, 0, 0), 1);
	assert_int_equal(post(l, &l->a, 2, FAB_WR_RDMA_READ,
			      FAB_SEND_SIGNALED, rdst, sizeof(rdst), 3,
			      (uintptr_t)rsrc, 0x55, 0), 1);
	assert_int_equal(soft_rc_deadline(l->a.rc), 0);	/* refused */
	assert_true(pump(l, 100000));
	assert_int_equal(poll1(&l->a, &wc), 1);
	assert_int_equal(wc.status, FAB_WC_SUCCESS);
	assert_int_equal(poll1(&l->a, &wc), 1);
	assert_int_equal(wc.status, FAB_WC_SUCCESS);
	assert_int_equal(poll1(&l->b, &wc), 1);
	assert_int_equal(wc.byte_len, sizeof(src));
	assert_memory_equal(dst, src, sizeof(src));
	assert_memory_equal(rdst, rsrc, sizeof(rsrc));
	assert_int_equal(soft_rc_stats(l->a.rc)->retransmits, 0);
	assert_int_equal(soft_rc_stats(l->a.rc)->timeouts, 0);
	link_free(l);
}

/* Duplicate READs: the remembered one is answered again from memory, an
 * older one gets NAK invalid request and changes nothing else. */
static void test_dup_read(void **state)
{
	static uint8_t rsrc[1024], dst[1024], buf[IB_MAX_PKT];
	struct soft_rc_conn c = conn_a();
	const struct soft_rc_stats *sb;
	struct fab_wc wc;
	struct link *l;
	uint64_t tx;
	size_t n;
	int i;

	(void)state;
	c.max_rd_atomic = c.max_dest_rd_atomic = 1;
	l = mklink(NULL, &c, NULL);
	sb = soft_rc_stats(l->b.rc);
	fill(rsrc, sizeof(rsrc), 2);
	add_mr(&l->b, 0x55, rsrc, sizeof(rsrc), FAB_ACCESS_REMOTE_READ);
	add_mr(&l->a, 1, dst, sizeof(dst), FAB_ACCESS_LOCAL_WRITE);
	for (i = 0; i < 2; i++)
		assert_int_equal(post(l, &l->a, i, FAB_WR_RDMA_READ,
				      FAB_SEND_SIGNALED, dst, 1024, 1,
				      (uintptr_t)rsrc, 0x55, 0), 1);
	assert_true(pump(l, 1000));
	assert_int_equal(poll1(&l->a, &wc), 1);
	assert_int_equal(poll1(&l->a, &wc), 1);
	assert_int_equal(wc.status, FAB_WC_SUCCESS);
	/* the second read (PSN 0x101) is remembered */
	tx = sb->tx_packets;
	n = craft(buf, IB_OP_RC_READ_REQUEST, 0x101, 0x22, 1, 0xffff, NULL, 0,
		  (uintptr_t)rsrc, 0x55, 1024);
	soft_rc_input(l->b.rc, buf, n, l->now);
	assert_int_equal(sb->dup_requests, 1);
	assert_int_equal(sb->tx_packets, tx + 1);
	assert_int_equal(sb->naks_sent, 0);
	/* the first (0x100) no longer */
	n = craft(buf, IB_OP_RC_READ_REQUEST, 0x100, 0x22, 1, 0xffff, NULL, 0,
		  (uintptr_t)rsrc, 0x55, 1024);
	soft_rc_input(l->b.rc, buf, n, l->now);
	assert_int_equal(sb->dup_requests, 2);
	assert_int_equal(sb->naks_sent, 1);
	assert_int_equal(soft_rc_state(l->b.rc), SOFT_RC_RTS);
	/* A takes neither the old response nor the old NAK */
	assert_true(pump(l, 1000));
	assert_int_equal(soft_rc_state(l->a.rc), SOFT_RC_RTS);
	assert_int_equal(poll1(&l->a, &wc), 0);
	link_free(l);
}

/* A peer that NAKs the same PSN again and again: each one a retry. */
static void test_nak_storm(void **state)
{
	static uint8_t src[100], buf[IB_MAX_PKT];
	struct soft_rc_conn c = conn_a();
	struct fab_wc wc;
	struct link *l;
	size_t n;
	int i;

	(void)state;
	c.retry_cnt = 3;
	l = mklink(NULL, &c, NULL);
	add_mr(&l->a, 1, src, sizeof(src), 0);
	l->down[0] = 1;
	assert_int_equal(post(l, &l->a, 1, FAB_WR_SEND, 0, src, 100, 1, 0, 0,
			      0), 1);
	n = craft(buf, IB_OP_RC_ACK, 0x100, 0x11, 2, 0xffff, NULL, 0, 0, 0, 0);
	buf[20] = 0x60;
	for (i = 0; i < 3; i++)
		soft_rc_input(l->a.rc, buf, n, l->now);
	assert_int_equal(soft_rc_state(l->a.rc), SOFT_RC_RTS);
	soft_rc_input(l->a.rc, buf, n, l->now);
	assert_int_equal(soft_rc_state(l->a.rc), SOFT_RC_ERROR);
	assert_int_equal(poll1(&l->a, &wc), 1);
	assert_int_equal(wc.status, FAB_WC_RETRY_EXC_ERR);
	link_free(l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_send_sizes),
		cmocka_unit_test(test_send_imm_multi_sge),
		cmocka_unit_test(test_send_inline),
		cmocka_unit_test(test_write),
		cmocka_unit_test(test_read),
		cmocka_unit_test(test_read_lossy),
		cmocka_unit_test(test_unsignaled),
		cmocka_unit_test(test_lossy_4mb),
		cmocka_unit_test(test_ack_coalescing),
		cmocka_unit_test(test_ack_delay),
		cmocka_unit_test(test_rnr),
		cmocka_unit_test(test_rnr_exceeded),
		cmocka_unit_test(test_peer_gone),
		cmocka_unit_test(test_write_zero_length),
		cmocka_unit_test(test_solicited),
		cmocka_unit_test(test_bad_keys),
		cmocka_unit_test(test_recv_too_small),
		cmocka_unit_test(test_set_error),
		cmocka_unit_test(test_hostile_responder),
		cmocka_unit_test(test_hostile_requester),
		cmocka_unit_test(test_psn_wrap),
		cmocka_unit_test(test_fence_and_rd_atomic),
		cmocka_unit_test(test_api_errors),
		cmocka_unit_test(test_read_implied_nak),
		cmocka_unit_test(test_link_full),
		cmocka_unit_test(test_dup_read),
		cmocka_unit_test(test_nak_storm),
	};

	return cmocka_run_group_tests_name("soft_rc", tests, NULL, NULL);
}

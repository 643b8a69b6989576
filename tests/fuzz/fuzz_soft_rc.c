// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer: a connected RC engine as a hostile peer drives it.  The QP
 * (path MTU 256, ours QPN 0x22 LID 2, the peer QPN 0x11 LID 1, P_Key
 * 0xffff, we expect PSN 0x100 and send from 0x200) has receives posted
 * and regions registered; the input is a list of records, each starting
 * with a byte t:
 *   t % 4 == 0  a raw packet: 2 bytes length (big-endian), the bytes;
 *   t % 4 == 1  a packet built from fields, so that the fuzzer gets past
 *               the framing: opcode, PSN offset (from the PSN the peer
 *               starts at for requests, ours for responses), payload
 *               length, RETH (va offset into a region, rkey choice, DMA
 *               length), AETH syndrome, and t's high bits spoil the QPN,
 *               SLID or P_Key;
 *   t % 4 == 2  time passes (2 bytes * 64 us) and progress runs;
 *   t % 4 == 3  we post: a send, write, read or receive (1 byte picks).
 * The engine must only touch memory through mr_find, and never past the
 * regions (guard bytes after each are checked), nor crash, nor spin.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "fabric/ib_rc.h"
#include "fabric/soft_rc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c) do { if (!(c)) __builtin_trap(); } while (0)

#define REG	4096
#define GUARD	64

enum { K_LOCAL = 1, K_WRITE = 0x77, K_READ = 0x55, K_RO = 0x66 };

static struct {
	uint32_t key;
	unsigned int access;
	uint8_t mem[REG + GUARD];
} mr[4] = {
	{ K_LOCAL, FAB_ACCESS_LOCAL_WRITE, { 0 } },
	{ K_WRITE, FAB_ACCESS_LOCAL_WRITE | FAB_ACCESS_REMOTE_WRITE, { 0 } },
	{ K_READ, FAB_ACCESS_REMOTE_READ, { 0 } },
	{ K_RO, 0, { 0 } },
};

static uint64_t sent;

static int xmit(void *ctx, const uint8_t *pkt, size_t len)
{
	struct ib_rc r;

	(void)ctx;
	/* what we send must parse */
	CHECK(ib_rc_parse(pkt, len, 256, &r) == IB_RC_OK);
	CHECK(r.bth.destqp == 0x11 && r.lrh.dlid == 1);
	sent++;
	return (sent & 63) == 63 ? -1 : 0;	/* now and then, no room */
}

static void *mr_find(void *ctx, uint32_t key, int remote, uint64_t addr,
		     uint64_t len, unsigned int access)
{
	unsigned int i;

	(void)ctx;
	(void)remote;
	for (i = 0; i < 4; i++) {
		uint64_t base = (uintptr_t)mr[i].mem;

		if (mr[i].key != key)
			continue;
		if ((mr[i].access & access) != access)
			return NULL;
		if (!len)
			return mr[i].mem;
		if (addr < base || len > REG || addr - base > REG - len)
			return NULL;
		return mr[i].mem + (addr - base);
	}
	return NULL;
}

static const struct soft_rc_ops ops = { xmit, mr_find };

static uint16_t be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static void build(struct soft_rc *rc, const uint8_t *p, uint8_t t,
		  uint64_t now)
{
	static const uint32_t keys[4] = { K_WRITE, K_READ, K_RO, 0xdead };
	static uint8_t pl[256], pkt[IB_MAX_PKT];
	struct ib_rc r;
	enum ib_rc_err err;
	unsigned int f;
	size_t n;

	memset(&r, 0, sizeof(r));
	r.bth.opcode = p[0] % (IB_OP_RC_ACK + 1);
	f = ib_rc_op_flags(r.bth.opcode);
	r.lrh.dlid = 2;
	r.lrh.slid = t & 0x10 ? 7 : 1;
	r.bth.pkey = t & 0x20 ? 0x1234 : 0xffff;
	r.bth.destqp = t & 0x40 ? 0x23 : 0x22;
	r.bth.ackreq = !!(t & 0x80);
	r.bth.psn = ((f & IB_RC_F_REQUEST ? 0x100 : 0x200) + be16(p + 1) -
		     0x80) & IB_PSN_MASK;
	n = p[3];
	if (f & (IB_RC_F_FIRST | IB_RC_F_MIDDLE))
		n = 256;
	else if ((f & IB_RC_F_LAST) && !n)
		n = 1;
	if (!(f & IB_RC_F_PAYLOAD))
		n = 0;
	memset(pl, p[4], n);
	r.payload = pl;
	r.payload_len = n;
	r.reth.va = (uintptr_t)mr[1 + p[5] % 3].mem + be16(p + 6) - 0x100;
	r.reth.rkey = keys[p[8] & 3];
	r.reth.dma_len = (f & IB_RC_F_ONLY) ? (uint32_t)n : be16(p + 9);
	if ((f & IB_RC_F_FIRST) && r.reth.dma_len <= n)
		r.reth.dma_len = (uint32_t)n + 1 + p[9];
	r.aeth.type = (p[11] >> 5) & 3;
	if (r.aeth.type == 2 || (f & IB_RC_F_PAYLOAD))
		r.aeth.type = IB_AETH_ACK;
	r.aeth.value = p[11] & 0x1f;
	if (r.aeth.type == IB_AETH_NAK && r.aeth.value > 4)
		r.aeth.value = 4;
	r.aeth.msn = 0;
	r.imm = 0x01020304;
	n = ib_rc_build(&r, 256, pkt, sizeof(pkt), &err);
	if (n)
		soft_rc_input(rc, pkt, n, now);
}

static void do_post(struct soft_rc *rc, uint8_t b, uint64_t now)
{
	static const enum fab_wr_opcode ops_[] = {
		FAB_WR_SEND, FAB_WR_SEND_WITH_IMM, FAB_WR_RDMA_WRITE,
		FAB_WR_RDMA_READ,
	};
	struct fab_sge sge = { (uintptr_t)mr[0].mem, (b >> 3) * 100u,
			       K_LOCAL };
	struct fab_rc_wr wr;
	struct fab_recv_wr rwr = { b, &sge, 1 };

	if ((b & 7) == 7) {
		soft_rc_post_recv(rc, &rwr, 1);
		return;
	}
	if ((b & 7) == 6) {
		soft_rc_set_error(rc);
		return;
	}
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = b;
	wr.opcode = ops_[b & 3];
	wr.flags = b & 4 ? FAB_SEND_SIGNALED : FAB_SEND_FENCE;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.remote_addr = 0x10000;
	wr.rkey = 0x99;
	soft_rc_post_send(rc, &wr, 1, now);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct soft_rc_conn c = {
		.qpn = 0x22, .dest_qpn = 0x11, .slid = 2, .dlid = 1,
		.pkey = 0xffff, .path_mtu = 1, .sq_psn = 0x200,
		.rq_psn = 0x100, .timeout = 1, .retry_cnt = 3,
		.rnr_retry = 2, .min_rnr_timer = 1, .max_rd_atomic = 2,
		.max_dest_rd_atomic = 2,
	};
	struct soft_rc_cfg cfg = { .max_send = 16, .max_recv = 8 };
	struct fab_sge sge = { (uintptr_t)mr[0].mem, 1000, K_LOCAL };
	struct fab_recv_wr rwr = { 0, &sge, 1 };
	struct fab_wc wc[16];
	struct soft_rc *rc;
	uint64_t now = 1000;
	unsigned int i, steps = 0;
	size_t off = 0;

	for (i = 0; i < 4; i++) {
		memset(mr[i].mem, 0x11 * i, REG);
		memset(mr[i].mem + REG, 0xa5, GUARD);
	}
	/* odd-sized inputs run with a delayed ACK (timeout 12: 16.8 ms,
	 * the delay not capped) */
	if (size & 1) {
		c.timeout = 12;
		c.ack_delay_us = 200;
	}
	rc = soft_rc_new(&cfg, &ops, NULL);
	CHECK(rc);
	for (i = 0; i < 3; i++)
		CHECK(soft_rc_post_recv(rc, &rwr, 1) == 1);
	CHECK(soft_rc_connect(rc, &c, now) == 0);

	while (off < size && steps++ < 2000) {
		uint8_t t = data[off++];

		switch (t & 3) {
		case 0: {
			size_t n;

			if (size - off < 2)
				goto out;
			n = be16(data + off);
			off += 2;
			if (n > size - off)
				n = size - off;
			soft_rc_input(rc, data + off, n, now);
			off += n;
			break;
		}
		case 1:
			if (size - off < 12)
				goto out;
			build(rc, data + off, t, now);
			off += 12;
			break;
		case 2:
			if (size - off < 2)
				goto out;
			now += be16(data + off) * 64u;
			off += 2;
			soft_rc_progress(rc, now);
			CHECK(soft_rc_deadline(rc) != 0 ||
			      soft_rc_state(rc) != SOFT_RC_RESET);
			break;
		default:
			if (size - off < 1)
				goto out;
			do_post(rc, data[off++], now);
			break;
		}
		soft_rc_poll(rc, wc, 16);
	}
out:
	soft_rc_progress(rc, now);
	while (soft_rc_poll(rc, wc, 16) > 0)
		;
	for (i = 0; i < 4; i++) {
		uint8_t g[GUARD];

		memset(g, 0xa5, GUARD);
		CHECK(memcmp(mr[i].mem + REG, g, GUARD) == 0);
	}
	/* read-only and read regions are never written */
	for (i = 2; i < 4; i++) {
		unsigned int j;

		for (j = 0; j < REG; j++)
			CHECK(mr[i].mem[j] == 0x11 * i);
	}
	soft_rc_free(rc);
	return 0;
}

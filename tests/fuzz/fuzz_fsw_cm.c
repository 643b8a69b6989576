// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer: arbitrary CM MADs into ibfabricd's CMs (fsw_cm.c) while port
 * B listens and A and B hold a live connection.  The input is records:
 * a control byte, then a MAD of up to 256 bytes (the last may be short).
 * The control byte picks the sending and receiving port, whether the
 * MAD's comm IDs are overwritten with the live connection's (so that the
 * fuzzer reaches its states), whether time passes (300 ms times the low
 * nibble, the port bits again) and whether the owners accept the requests
 * they are told of.  Checks: no crash or sanitizer report, events
 * only for owners that exist, and once every owner is gone and the timers
 * have run, nothing is left.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fabric/cm_mad.h"
#include "fabric/ib_pkt.h"
#include "subnet/fsw_cm.h"

#define check(c)	do { if (!(c)) __builtin_trap(); } while (0)

#define QMAX	256
#define REC	(1 + MAD_LEN)

struct fq {
	uint16_t slid, dlid, pkey;
	uint8_t mad[MAD_LEN];
};

static struct {
	struct fsw_cm *cm;
	uint64_t now;
	struct fq q[QMAX];
	unsigned int qh, qt;
	int accept;
	int gone;
	uint32_t qpn;
} F;

static int owner_a, owner_b;
static const uint16_t lids[4] = { 2, 3, 4, 9 };	/* 9: no such port */

static int fport(uint16_t lid, struct fsw_cm_port *p)
{
	unsigned int i;

	for (i = 0; i < 3; i++) {
		if (lids[i] != lid)
			continue;
		memset(p, 0, sizeof(*p));
		p->lid = lid;
		p->node_guid = p->port_guid = 0x1000 + lid;
		p->gid.raw[0] = 0xfe;
		p->gid.raw[1] = 0x80;
		p->gid.raw[15] = (uint8_t)lid;
		p->mtu = (uint8_t)(3 + i % 3);
		p->up = 1;
		return 0;
	}
	return -1;
}

static int op_by_lid(void *ctx, uint16_t lid, struct fsw_cm_port *p)
{
	(void)ctx;
	return fport(lid, p);
}

static int op_by_gid(void *ctx, const union fab_gid *gid,
		     struct fsw_cm_port *p)
{
	(void)ctx;
	if (gid->raw[0] != 0xfe || gid->raw[1] != 0x80)
		return -1;
	return fport(gid->raw[15], p);
}

static void op_send(void *ctx, uint16_t slid, uint16_t dlid, uint16_t pkey,
		    const uint8_t *mad)
{
	struct fq *m;

	(void)ctx;
	if (F.qt - F.qh >= QMAX)
		return;		/* lost */
	m = &F.q[F.qt++ % QMAX];
	m->slid = slid;
	m->dlid = dlid;
	m->pkey = pkey;
	memcpy(m->mad, mad, MAD_LEN);
}

static void op_event(void *ctx, void *owner, const struct fsp_cm_event *ev)
{
	struct fsp_cm_accept a;
	char err[64];

	(void)ctx;
	check(owner == &owner_a || owner == &owner_b);
	check(!F.gone);
	check(ev->handle != 0);
	check(ev->priv_len <= FSP_CM_PRIV_MAX);
	if (F.accept && ev->type == FAB_CM_EV_CONNECT_REQUEST) {
		memset(&a, 0, sizeof(a));
		a.handle = ev->handle;
		a.o.qpn = ++F.qpn & 0xffffff;
		(void)fsw_cm_accept(F.cm, owner, &a, err, sizeof(err));
	}
}

static uint64_t op_now(void *ctx)
{
	(void)ctx;
	return F.now;
}

static const struct fsw_cm_ops ops = {
	.port_by_lid = op_by_lid,
	.port_by_gid = op_by_gid,
	.send = op_send,
	.event = op_event,
	.now_ms = op_now,
};

static void input(uint16_t slid, uint16_t dlid, uint16_t pkey,
		  const uint8_t *mad, size_t len)
{
	struct ib_ud u;

	memset(&u, 0, sizeof(u));
	u.lrh.slid = slid;
	u.lrh.dlid = dlid;
	u.bth.pkey = pkey;
	u.payload = mad;
	u.payload_len = len;
	fsw_cm_input(F.cm, dlid, &u);
}

static void deliver(void)
{
	unsigned int n = 0;

	while (F.qh != F.qt && n++ < 4 * QMAX) {
		struct fq m = F.q[F.qh++ % QMAX];

		input(m.slid, m.dlid, m.pkey, m.mad, MAD_LEN);
	}
	F.qh = F.qt;
}

static void advance(uint64_t ms)
{
	uint64_t end = F.now + ms, next;
	unsigned int n = 0;

	deliver();
	while ((next = fsw_cm_next(F.cm)) <= end && n++ < 10000) {
		check(next >= F.now);
		F.now = next;
		fsw_cm_tick(F.cm);
		deliver();
	}
	F.now = end;
}

/* the comm ID fields of the last MAD on the wire with this attribute */
static uint32_t wire_id(uint16_t attr)
{
	unsigned int i;

	for (i = F.qt; i-- > F.qh;) {
		const uint8_t *m = F.q[i % QMAX].mad;

		if ((m[16] << 8 | m[17]) == attr)
			return (uint32_t)m[24] << 24 | m[25] << 16 |
			       m[26] << 8 | m[27];
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fsp_cm_listen l = { .service_id = 0x1000, .backlog = 4 };
	/* one partition's listener beside it: REQs of any P_Key come */
	struct fsp_cm_listen lp = { .service_id = 0x2000, .backlog = 4,
				    .pkey = 0x0001 };
	struct fsp_cm_connect c;
	uint32_t lh, ah, a_id = 0, b_id = 0;
	char err[64], rep[8192];
	uint8_t mad[MAD_LEN];
	size_t off;

	memset(&F, 0, sizeof(F));
	F.now = 5000;
	F.qpn = 0x1000;
	F.cm = fsw_cm_new(&ops, NULL);
	check(F.cm);
	check(fsw_cm_listen(F.cm, 3, &owner_b, &l, &lh, err, sizeof(err)) == 0);
	check(fsw_cm_listen(F.cm, 3, &owner_b, &lp, &ah, err, sizeof(err)) == 0);

	/* the live connection A -> B, its comm IDs taken off the wire */
	memset(&c, 0, sizeof(c));
	c.service_id = 0x1000;
	c.dlid = 3;
	c.o.qpn = 0x42;
	check(fsw_cm_connect(F.cm, 2, &owner_a, &c, 0xffff, &ah, err,
			     sizeof(err)) == 0);
	a_id = wire_id(CM_ATTR_REQ);
	F.accept = 1;
	deliver();
	F.accept = 0;

	for (off = 0; off < size; off += REC) {
		uint8_t ctl = data[off];
		size_t len = size - off - 1;
		uint16_t slid = lids[ctl & 3], dlid = lids[(ctl >> 2) & 3];

		if (len > MAD_LEN)
			len = MAD_LEN;
		memset(mad, 0, sizeof(mad));
		memcpy(mad, data + off + 1, len);
		if (!b_id) {
			/* B's comm ID: the REP's, now gone from the queue;
			 * the report has it */
			char *p;

			fsw_cm_report(F.cm, rep, sizeof(rep));
			p = strstr(rep, "passive");
			if (p) {
				p = strstr(p, "comm 0x");
				if (p)
					b_id = (uint32_t)strtoul(p + 5, NULL,
								 16);
			}
		}
		if (ctl & 0x10) {
			/* the live connection's comm IDs, as its peer puts
			 * them: local = the sender's */
			uint32_t lo = slid == 2 ? a_id : b_id;
			uint32_t ro = slid == 2 ? b_id : a_id;
			int i;

			for (i = 0; i < 4; i++) {
				mad[24 + i] = (uint8_t)(lo >> (24 - 8 * i));
				mad[28 + i] = (uint8_t)(ro >> (24 - 8 * i));
			}
		}
		F.accept = !!(ctl & 0x20);
		input(slid, dlid, 0xffff, mad, (ctl & 0x80) ? len : MAD_LEN);
		deliver();
		if (ctl & 0x40)
			advance((uint64_t)(ctl & 0x0f) * 300);
	}
	(void)fsw_cm_report(F.cm, rep, sizeof(rep));
	(void)fsw_cm_report(F.cm, rep, 7);

	/* everyone leaves: every timer runs out and frees what it holds */
	fsw_cm_owner_gone(F.cm, &owner_a);
	fsw_cm_owner_gone(F.cm, &owner_b);
	F.gone = 1;
	advance(120000);
	check(fsw_cm_next(F.cm) == UINT64_MAX);
	fsw_cm_report(F.cm, rep, sizeof(rep));
	check(!strstr(rep, "conn ") && !strstr(rep, "listen "));
	fsw_cm_free(F.cm);
	return 0;
}

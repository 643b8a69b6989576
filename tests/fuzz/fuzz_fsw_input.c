// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer: the whole ibfabricd switch pipeline, subnet manager and SA
 * included.  A small subnet (three nodes, QPs, a multicast group, MAD
 * agents) takes each input as a packet from a node; every packet must be
 * delivered, answered by the SA, or counted as a drop.
 * Inputs that start with a valid header get their CRCs fixed up half of
 * the time, so that the fuzzer reaches the checks behind the CRCs.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "subnet/fsw.h"
#include "fabric/ib_pkt.h"
#include "subnet/partitions.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct fsw *sw;
static struct prtn_conf pc;
static struct fsw_node *nodes[3];
static struct fsw_qp *agents[3];
static uint64_t delivered;

static int fz_deliver(void *ctx, void *owner, const uint8_t *pkt,
		      size_t len)
{
	(void)ctx;
	(void)owner;
	if (len < 26)
		__builtin_trap();
	delivered++;
	return pkt[len - 1] & 1 ? 0 : -1;	/* sometimes "queue full" */
}

static const struct fsw_ops ops = { .deliver = fz_deliver };

static void setup(void)
{
	static const char conf[] =
		"Default=0x7fff, ipoib : ALL=full ;\n"
		"p1=0x8001 : n0=full, n1=limited, n2=limited ;\n";
	union fab_gid mgid = { .raw = { 0xff, 0x12, 0x40, 0x1b } };
	char err[256];
	int i;

	if (prtn_conf_parse(conf, sizeof(conf) - 1, "fuzz", &pc, err,
			    sizeof(err)) < 0)
		abort();
	sw = fsw_new(&pc, &ops, NULL);
	for (i = 0; i < 3; i++) {
		char name[8] = "n0";
		struct fsw_qp *q;

		name[1] = (char)('0' + i);
		nodes[i] = fsw_node_attach(sw, name, err, sizeof(err));
		q = fsw_qp_create(sw, nodes[i], NULL, 0x0b1b, 0, 0, err,
				  sizeof(err));
		fsw_mcast_attach(sw, q, &mgid, 0xc000, err, sizeof(err));
		fsw_qp_create(sw, nodes[i], NULL, 0x1234, 1, 0, err,
			      sizeof(err));
		/* a MAD agent: packets sent to the SM are answered to it */
		agents[i] = fsw_gsi_create(sw, nodes[i], NULL, &agents[i],
					   0x03, err, sizeof(err));
	}
}

static void fix_crcs(uint8_t *p, size_t len)
{
	uint32_t icrc;
	uint16_t vcrc;

	if (len < 26)
		return;
	p[4] = (uint8_t)((p[4] & 0xf8) | ((((len - 2) / 4) >> 8) & 7));
	p[5] = (uint8_t)((len - 2) / 4);
	icrc = ib_icrc_native(p, len - 6);
	memcpy(p + len - 6, (uint8_t[]){ (uint8_t)icrc, (uint8_t)(icrc >> 8),
		(uint8_t)(icrc >> 16), (uint8_t)(icrc >> 24) }, 4);
	vcrc = ib_vcrc(p, len - 2);
	p[len - 2] = (uint8_t)vcrc;
	p[len - 1] = (uint8_t)(vcrc >> 8);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t pkt[IB_MAX_PKT + 16];
	const struct fsw_stats *st;
	uint64_t before, after, drops = 0;
	int i;

	if (!sw)
		setup();
	if (size < 2 || size - 1 > sizeof(pkt))
		return 0;
	memcpy(pkt, data + 1, size - 1);
	if (data[0] & 1)
		fix_crcs(pkt, size - 1);
	st = fsw_stats(sw);
	for (i = 0; i < FSW_DROP_MAX; i++)
		drops += st->drop[i];
	/* ends that are neither: an MLID nobody attached to, a response
	 * the SM takes, a CM MAD a node's connection manager takes */
	before = drops + delivered + st->mcast_no_receivers + st->sm_acks +
		 st->cm_mads_rcvd;
	/* bit 2: sent on node 0's MAD agent (QP1), as MADs to the SM are */
	if (data[0] & 4)
		fsw_input_qp(sw, agents[0], pkt, size - 1);
	else
		fsw_input(sw, nodes[data[0] >> 1 & 1 ? 1 : 0], pkt, size - 1);
	drops = 0;
	for (i = 0; i < FSW_DROP_MAX; i++)
		drops += st->drop[i];
	after = drops + delivered + st->mcast_no_receivers + st->sm_acks +
		st->cm_mads_rcvd;
	/* each packet ends somewhere: at least one delivery or drop */
	if (after == before)
		__builtin_trap();
	return 0;
}

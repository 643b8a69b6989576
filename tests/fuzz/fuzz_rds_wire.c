// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer: the RDS/IB codecs must refuse, never misread.  Byte 0 picks
 * (0 the header of a SEND, 1 IPv4 private data, 2 IPv6, 3 the
 * congestion map, else all), the rest is the input.  What parses
 * rebuilds and parses back to the same fields; the version rules give
 * only what the kernel can answer.  ASan catches any read past the input.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

#include "ulp/rds/rds_wire.h"

#define check(c)	do { if (!(c)) __builtin_trap(); } while (0)

static void header(const uint8_t *p, size_t len)
{
	struct rds_header h, d;
	uint8_t out[RDS_HDR_LEN];
	enum rds_drop why;

	why = rds_hdr_get(p, len, &h);
	check(rds_drop_name(why) != NULL);
	if (why != RDS_DROP_NONE) {
		check(why == RDS_DROP_SHORT || why == RDS_DROP_LONG ||
		      why == RDS_DROP_BAD_CSUM);
		check(why != RDS_DROP_SHORT || len < RDS_HDR_LEN);
		check(why != RDS_DROP_LONG || len > RDS_SEND_MAX);
		return;
	}
	check(len >= RDS_HDR_LEN && len <= RDS_SEND_MAX);
	rds_hdr_put(out, &h);
	check(rds_hdr_csum_ok(out));
	/* every field but the padding and h_csum comes back */
	check(memcmp(out, p, 26) == 0 && memcmp(out + 32, p + 32, 16) == 0);
	check(rds_hdr_get(out, RDS_HDR_LEN, &d) == RDS_DROP_NONE);
	check(d.seq == h.seq && d.ack == h.ack && d.len == h.len &&
	      d.sport == h.sport && d.dport == h.dport &&
	      d.flags == h.flags && d.credit == h.credit);
	(void)rds_hdr_is_ack(&h, len - RDS_HDR_LEN);
	check(rds_msg_kind(&h) <= RDS_MSG_HS_PONG);
}

static void version_ok(uint16_t v)
{
	check(v == 0 || v == RDS_VERSION_3_1 || v == RDS_VERSION_4_0 ||
	      v == RDS_VERSION_4_1);
}

static void priv(const uint8_t *p, size_t len, int family)
{
	uint8_t out[RDS_IB_PRIV6_LEN];
	struct rds_ib_priv d, e;
	size_t need = family == AF_INET ? RDS_IB_PRIV4_LEN : RDS_IB_PRIV6_LEN;
	size_t cmn = need - 24;
	uint16_t v;

	version_ok(rds_ib_version_accept(p, len, family));
	v = rds_ib_version_confirm(p, len, family, RDS_VERSION_3_1);
	check(v == 0 || v >= RDS_VERSION_3_1);
	if (rds_ib_priv_parse(p, len, family, &d)) {
		check(len < need);
		return;
	}
	check(d.saddr.family == family && d.daddr.family == family);
	check(rds_ib_priv_build(out, sizeof(out), &d) == (int)need);
	/* all but the reserved bytes of the common block */
	check(memcmp(out, p, cmn + 5) == 0);
	check(memcmp(out + cmn + 8, p + cmn + 8, 12) == 0);
	check(rds_ib_priv_parse(out, need, family, &e) == 0);
	check(e.major == d.major && e.minor == d.minor &&
	      e.minor_mask == d.minor_mask && e.tos == d.tos &&
	      e.ack_seq == d.ack_seq && e.credit == d.credit);
}

static void cong(const uint8_t *p, size_t len)
{
	static struct rds_cong_map m;
	struct rds_cong_map before;
	size_t i;
	int freed = 0;

	for (i = 0; i + 2 <= len; i += 2) {
		uint16_t port = (uint16_t)(p[i] << 8 | p[i + 1]);

		if (port & 1)
			rds_cong_set(&m, port);
		else
			rds_cong_clear(&m, port);
		check(rds_cong_test(&m, port) == (port & 1));
	}
	if (len >= RDS_CONG_MAP_BYTES) {
		before = m;
		for (i = 0; i < RDS_CONG_MAP_BYTES; i++)
			freed |= before.bits[i] & ~p[i];
		check(rds_cong_update(&m, p) == (freed != 0));
		check(memcmp(m.bits, p, RDS_CONG_MAP_BYTES) == 0);
	}
}

/* rdma_cm's header before a REQ's private data (the soft profile's):
 * what parses rebuilds to 36 bytes that parse to the same fields. */
static void cma(const uint8_t *p, size_t len)
{
	struct rds_cma_hdr h, g;
	uint8_t out[64];

	if (rds_cma_hdr_parse(p, len, &h)) {
		check(len < 36 || p[0] != 0 || (p[1] >> 4 != 4 && p[1] >> 4 != 6));
		return;
	}
	check(h.src.family == h.dst.family);
	check(rds_cma_hdr_build(out, sizeof(out), &h) == 36);
	check(rds_cma_hdr_parse(out, 36, &g) == 0);
	check(g.sport == h.sport && inet_addr_equal(&g.src, &h.src) &&
	      inet_addr_equal(&g.dst, &h.dst));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *p;
	size_t len;

	if (size < 1)
		return 0;
	len = size - 1;
	p = data + 1;
	switch (data[0]) {
	case 0:
		header(p, len);
		break;
	case 1:
		priv(p, len, AF_INET);
		break;
	case 2:
		priv(p, len, AF_INET6);
		break;
	case 3:
		cong(p, len);
		break;
	case 4:
		cma(p, len);
		break;
	default:
		header(p, len);
		priv(p, len, AF_INET);
		priv(p, len, AF_INET6);
		cong(p, len);
		cma(p, len);
	}
	return 0;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer: RDS/IB reassembly over a run of SENDs on one connection.
 * Each record is ctl:1, header:48, dlen:2 (big-endian); the SEND is the
 * header and dlen bytes of a fixed pattern, so large fragments cost the
 * input nothing.  ctl bit 0 re-sums the header (to get past the
 * checksum), bit 1 resets the connection first.  A drop resets, as the
 * caller does.  Checked: a message is exactly its h_len of pattern, at
 * most 1 MiB; a retransmitted old sequence is never delivered, a new one
 * always is; maps are 8192 bytes with flags exactly 0x01.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "inet/csum.h"
#include "ulp/rds/rds_frag.h"

#define check(c)	do { if (!(c)) __builtin_trap(); } while (0)

#define REC_LEN		(1 + RDS_HDR_LEN + 2)
#define DLEN_MAX	(RDS_FRAG_SIZE + 64)	/* past the limit too */

static uint8_t pattern[RDS_FRAG_SIZE + 64];
static uint8_t send_buf[RDS_HDR_LEN + DLEN_MAX];
static struct rds_frag fr;
static int ready;

static void check_msg(const struct rds_in *in, uint64_t next_before)
{
	size_t off;
	int old = in->hdr.seq < next_before &&
		  (in->hdr.flags & RDS_FLAG_RETRANSMITTED);

	check(in->len == in->hdr.len && in->len <= RDS_MAX_MSG_SIZE);
	for (off = 0; off < in->len; off += RDS_FRAG_SIZE) {
		size_t n = in->len - off;

		if (n > RDS_FRAG_SIZE)
			n = RDS_FRAG_SIZE;
		check(memcmp(in->data + off, pattern, n) == 0);
	}
	switch (in->kind) {
	case RDS_IN_MSG:
		check(!old && !rds_hdr_is_cong(&in->hdr));
		check(fr.next_rx == in->hdr.seq + 1);
		break;
	case RDS_IN_DUP:
		check(old && fr.next_rx == next_before);
		break;
	case RDS_IN_CONG:
		check(in->hdr.flags == RDS_FLAG_CONG_BITMAP &&
		      in->len == RDS_CONG_MAP_BYTES);
		check(fr.next_rx == next_before);
		break;
	case RDS_IN_CONG_BAD:
		check(in->hdr.flags == RDS_FLAG_CONG_BITMAP &&
		      in->len != RDS_CONG_MAP_BYTES);
		break;
	default:
		check(0);
	}
}

static void one(const uint8_t *rec)
{
	size_t dlen = (size_t)(rec[1 + RDS_HDR_LEN] << 8 |
			       rec[2 + RDS_HDR_LEN]) % (DLEN_MAX + 1);
	uint64_t next_before = fr.next_rx;
	enum rds_drop why;
	struct rds_in in;

	if (rec[0] & 2)
		rds_frag_reset(&fr);
	memcpy(send_buf, rec + 1, RDS_HDR_LEN);
	if (rec[0] & 1) {
		memset(send_buf + 30, 0, 2);
		inet_csum_put(send_buf + 30, inet_csum_fold(
			inet_csum_add(0, send_buf, RDS_HDR_LEN)));
	}
	memcpy(send_buf + RDS_HDR_LEN, pattern, dlen);
	why = rds_frag_input(&fr, send_buf, RDS_HDR_LEN + dlen, &in);
	if (why != RDS_DROP_NONE) {
		check(why < RDS_DROP_MAX);
		check(strcmp(rds_drop_name(why), "unknown") != 0);
		check(fr.next_rx == next_before);
		rds_frag_reset(&fr);
		return;
	}
	if (in.kind == RDS_IN_NONE || in.kind == RDS_IN_ACK) {
		check(fr.next_rx == next_before);
		check(in.kind != RDS_IN_ACK || rds_hdr_is_ack(&in.hdr, dlen));
		return;
	}
	check_msg(&in, next_before);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t i;

	if (!ready) {
		for (i = 0; i < sizeof(pattern); i++)
			pattern[i] = (uint8_t)(i * 31 + 7);
		if (rds_frag_init(&fr))
			return 0;
		ready = 1;
	}
	rds_frag_reset(&fr);
	fr.next_rx = 0;
	for (i = 0; i + REC_LEN <= size; i += REC_LEN)
		one(data + i);
	return 0;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * RDS/IB reassembly (rds_frag.h).
 *
 * Stricter than the kernel in two places, both on input the kernel never
 * sends: it takes a short non-last fragment as 4096 bytes and an h_len
 * over 1 MiB as it comes; we drop the connection (bad_len, too_big)
 * rather than deliver bytes that were not sent.  The ACK in the
 * completed message's ack_next follows ib_recv.c: it is set for every
 * complete message but a congestion map, duplicates included.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ulp/rds/rds_frag.h"

int rds_frag_init(struct rds_frag *f)
{
	memset(f, 0, sizeof(*f));
	f->buf = malloc(RDS_MAX_MSG_SIZE);
	if (!f->buf) {
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

void rds_frag_fini(struct rds_frag *f)
{
	free(f->buf);
	f->buf = NULL;
	f->busy = false;
}

void rds_frag_reset(struct rds_frag *f)
{
	f->busy = false;
	f->have = 0;
}

static bool same_message(const struct rds_header *a,
			 const struct rds_header *b)
{
	return a->seq == b->seq && a->len == b->len &&
	       a->sport == b->sport && a->dport == b->dport;
}

/* The data bytes the next fragment of a message of len must carry. */
static uint32_t frag_expected(uint32_t len, uint32_t have)
{
	uint32_t rem = len - have;

	return rem > RDS_FRAG_SIZE ? RDS_FRAG_SIZE : rem;
}

/* A message is complete: classify it as the kernel would. */
static void frag_complete(struct rds_frag *f, struct rds_in *in)
{
	const struct rds_header *h = &in->hdr;

	in->ack_required = (h->flags & RDS_FLAG_ACK_REQUIRED) != 0;
	if (rds_hdr_is_cong(h)) {
		in->kind = h->len == RDS_CONG_MAP_BYTES ? RDS_IN_CONG :
							  RDS_IN_CONG_BAD;
		return;
	}
	f->ack_valid = true;
	f->ack_next = h->seq;
	if (h->seq < f->next_rx && (h->flags & RDS_FLAG_RETRANSMITTED)) {
		in->kind = RDS_IN_DUP;
		return;
	}
	f->next_rx = h->seq + 1;
	in->kind = RDS_IN_MSG;
}

/* The first fragment of a message. */
static enum rds_drop frag_first(struct rds_frag *f, const struct rds_header *h,
				const uint8_t *data, size_t dlen,
				struct rds_in *in)
{
	if (h->len > RDS_MAX_MSG_SIZE)
		return RDS_DROP_TOO_BIG;
	if (dlen != frag_expected(h->len, 0))
		return RDS_DROP_BAD_LEN;
	in->hdr = *h;
	if (dlen == h->len) {
		in->data = data;
		in->len = dlen;
		frag_complete(f, in);
		return RDS_DROP_NONE;
	}
	memcpy(f->buf, data, dlen);
	f->hdr = *h;
	f->have = (uint32_t)dlen;
	f->busy = true;
	in->kind = RDS_IN_NONE;
	return RDS_DROP_NONE;
}

/* A later fragment of the message under way. */
static enum rds_drop frag_next(struct rds_frag *f, const struct rds_header *h,
			       const uint8_t *data, size_t dlen,
			       struct rds_in *in)
{
	if (!same_message(&f->hdr, h))
		return RDS_DROP_FRAG_MISMATCH;
	if (dlen != frag_expected(f->hdr.len, f->have))
		return RDS_DROP_BAD_LEN;
	memcpy(f->buf + f->have, data, dlen);
	f->have += (uint32_t)dlen;
	in->hdr = f->hdr;
	if (f->have < f->hdr.len) {
		in->kind = RDS_IN_NONE;
		return RDS_DROP_NONE;
	}
	f->busy = false;
	in->data = f->buf;
	in->len = f->have;
	f->have = 0;
	frag_complete(f, in);
	return RDS_DROP_NONE;
}

enum rds_drop rds_frag_input(struct rds_frag *f, const uint8_t *send,
			     size_t len, struct rds_in *in)
{
	struct rds_header h;
	enum rds_drop why;
	size_t dlen;

	why = rds_hdr_get(send, len, &h);
	if (why != RDS_DROP_NONE)
		return why;
	dlen = len - RDS_HDR_LEN;
	memset(in, 0, sizeof(*in));
	in->ack = h.ack;
	in->credit = h.credit;
	if (rds_hdr_is_ack(&h, dlen)) {
		in->kind = RDS_IN_ACK;
		in->hdr = h;
		return RDS_DROP_NONE;
	}
	if (f->busy)
		return frag_next(f, &h, send + RDS_HDR_LEN, dlen, in);
	return frag_first(f, &h, send + RDS_HDR_LEN, dlen, in);
}

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Reassembly of one RDS/IB connection's incoming SENDs into messages, the
 * rules of the kernel's rds_ib_process_recv() and rds_recv_incoming():
 *
 *  - every SEND is 48..4144 bytes and its header checks out;
 *  - a SEND with ports 0 and no data is ACK-only, taken whenever it comes,
 *    even between the fragments of a message;
 *  - otherwise one message at a time: its fragments carry equal h_sequence,
 *    h_len, h_sport and h_dport (h_ack and h_credit may change), every one
 *    but the last exactly 4096 data bytes, h_len the whole message (at
 *    most 1 MiB; the kernel never sends more);
 *  - a complete message with flags exactly CONG_BITMAP is a map update
 *    (one of a length other than 8192 ignored, as the kernel does); any
 *    other is dropped as a duplicate if seq < next and RETRANSMITTED, else
 *    next = seq + 1 (sequences may skip and, unflagged, go back).
 *
 * A SEND breaking a rule returns its enum rds_drop: the caller drops the
 * connection (and counts it by rds_drop_name()), then calls
 * rds_frag_reset() for the next one.  The sequence state survives that,
 * as the kernel's cp_next_rx_seq survives reconnects.
 *
 * Pure: no I/O.  Owns one reassembly buffer of RDS_MAX_MSG_SIZE, taken at
 * init (a single-fragment message is never copied into it).
 */
#ifndef IBGW_RDS_FRAG_H
#define IBGW_RDS_FRAG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ulp/rds/rds_wire.h"

enum rds_in_kind {
	RDS_IN_NONE,		/* a fragment taken, message incomplete */
	RDS_IN_ACK,		/* ACK-only frame */
	RDS_IN_MSG,		/* a complete message: hdr, data, len */
	RDS_IN_CONG,		/* a complete congestion map: data, 8192 */
	RDS_IN_CONG_BAD,	/* a map of another length: ignored */
	RDS_IN_DUP,		/* a retransmitted message already had */
};

/* What one SEND gave.  data points into the SEND or the reassembly
 * buffer: valid until the next rds_frag_input() or rds_frag_reset(). */
struct rds_in {
	enum rds_in_kind kind;
	uint64_t ack;		/* this SEND's h_ack (every SEND has one) */
	uint8_t credit;		/* this SEND's h_credit */
	bool ack_required;	/* complete message flagged ACK_REQUIRED */
	struct rds_header hdr;	/* the message's first fragment's header */
	const uint8_t *data;
	size_t len;
};

struct rds_frag {
	uint8_t *buf;		/* RDS_MAX_MSG_SIZE bytes */
	bool busy;		/* a message under way */
	struct rds_header hdr;	/* its first fragment's header */
	uint32_t have;		/* data bytes received of it */
	uint64_t next_rx;	/* the kernel's cp_next_rx_seq */
	bool ack_valid;		/* a message completed since init */
	uint64_t ack_next;	/* seq of the last complete message: ACK it */
};

/* 0, or -1 (ENOMEM). */
int rds_frag_init(struct rds_frag *f);
void rds_frag_fini(struct rds_frag *f);
/* Drop a partial message (the connection went down); keep next_rx. */
void rds_frag_reset(struct rds_frag *f);
/* One received SEND of len bytes.  RDS_DROP_NONE with *in filled, or
 * why the connection must go (then *in is unspecified). */
enum rds_drop rds_frag_input(struct rds_frag *f, const uint8_t *send,
			     size_t len, struct rds_in *in);

#endif

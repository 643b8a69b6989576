/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Reliable Connected transport headers (IBTA vol. 1 chapter 9): the RC BTH
 * opcodes, RETH, AETH and ImmDt, which extended headers each opcode
 * carries, payload rules, 24-bit PSN arithmetic and the RNR NAK timer
 * table.  Builds and parses whole packets (LRH [+GRH] + BTH + extended
 * headers + payload + pad + ICRC + VCRC) on top of ib_pkt.
 *
 * Parsing never trusts a length: it takes the buffer size and the path
 * MTU and returns an ib_rc_err naming the first thing wrong, for the
 * caller's drop counters.
 */
#ifndef IBGW_IB_RC_H
#define IBGW_IB_RC_H

#include <stddef.h>
#include <stdint.h>

#include "fabric/ib_pkt.h"

#define IB_RETH_LEN	16
#define IB_AETH_LEN	4

/* RC opcodes (BTH OpCode, transport bits 000) */
#define IB_OP_RC_SEND_FIRST		0x00
#define IB_OP_RC_SEND_MIDDLE		0x01
#define IB_OP_RC_SEND_LAST		0x02
#define IB_OP_RC_SEND_LAST_IMM		0x03
#define IB_OP_RC_SEND_ONLY		0x04
#define IB_OP_RC_SEND_ONLY_IMM		0x05
#define IB_OP_RC_WRITE_FIRST		0x06
#define IB_OP_RC_WRITE_MIDDLE		0x07
#define IB_OP_RC_WRITE_LAST		0x08
#define IB_OP_RC_WRITE_LAST_IMM		0x09
#define IB_OP_RC_WRITE_ONLY		0x0A
#define IB_OP_RC_WRITE_ONLY_IMM		0x0B
#define IB_OP_RC_READ_REQUEST		0x0C
#define IB_OP_RC_READ_RESP_FIRST	0x0D
#define IB_OP_RC_READ_RESP_MIDDLE	0x0E
#define IB_OP_RC_READ_RESP_LAST		0x0F
#define IB_OP_RC_READ_RESP_ONLY		0x10
#define IB_OP_RC_ACK			0x11

/* what an opcode carries (ib_rc_op_flags) */
#define IB_RC_F_RETH		0x0001
#define IB_RC_F_AETH		0x0002
#define IB_RC_F_IMM		0x0004
#define IB_RC_F_PAYLOAD		0x0008	/* may carry payload */
#define IB_RC_F_FIRST		0x0010	/* payload exactly one PMTU */
#define IB_RC_F_MIDDLE		0x0020	/* payload exactly one PMTU */
#define IB_RC_F_LAST		0x0040	/* payload 1 .. PMTU */
#define IB_RC_F_ONLY		0x0080	/* payload 0 .. PMTU */
#define IB_RC_F_REQUEST		0x0100	/* requester to responder */
#define IB_RC_F_RESPONSE	0x0200	/* responder to requester */

/* AETH syndrome: bit 7 reserved, bits 6-5 type, bits 4-0 value */
#define IB_AETH_ACK		0
#define IB_AETH_RNR_NAK		1
#define IB_AETH_NAK		3
#define IB_AETH_CREDIT_INVALID	0x1F	/* ACK: no credit count */
#define IB_NAK_PSN_SEQ_ERR	0
#define IB_NAK_INVALID_REQ	1
#define IB_NAK_REMOTE_ACCESS	2
#define IB_NAK_REMOTE_OP_ERR	3
#define IB_NAK_INVALID_RD_REQ	4

#define IB_PSN_MASK		0xffffffu
#define IB_MSN_MASK		0xffffffu
/* largest RDMA READ a RETH may ask for (DMA length 0 .. 2^31) */
#define IB_RC_MAX_DMA_LEN	0x80000000u

struct ib_reth {
	uint64_t va;
	uint32_t rkey;
	uint32_t dma_len;
};

struct ib_aeth {
	uint8_t type;		/* IB_AETH_ACK, _RNR_NAK or _NAK */
	uint8_t value;		/* credit count, RNR timer code or NAK code */
	uint32_t msn;		/* 24 bits */
};

/* A decoded RC packet; payload points into the parsed buffer. */
struct ib_rc {
	struct ib_lrh lrh;
	int has_grh;
	struct ib_grh grh;
	struct ib_bth bth;	/* opcode says which headers below are set */
	struct ib_reth reth;
	struct ib_aeth aeth;
	uint32_t imm;
	const uint8_t *payload;
	size_t payload_len;
};

/* The first values are ib_pkt_err's (framing), the rest RC's own. */
enum ib_rc_err {
	IB_RC_OK = IB_PKT_OK,
	IB_RC_TRUNCATED = IB_PKT_TRUNCATED,
	IB_RC_BAD_PKTLEN = IB_PKT_BAD_PKTLEN,
	IB_RC_BAD_VCRC = IB_PKT_BAD_VCRC,
	IB_RC_BAD_ICRC = IB_PKT_BAD_ICRC,
	IB_RC_BAD_LVER = IB_PKT_BAD_LVER,
	IB_RC_BAD_LNH = IB_PKT_BAD_LNH,
	IB_RC_BAD_GRH = IB_PKT_BAD_GRH,
	IB_RC_BAD_TVER = IB_PKT_BAD_TVER,
	IB_RC_BAD_OPCODE = IB_PKT_BAD_OPCODE,	/* not an RC opcode we carry */
	IB_RC_BAD_PAD = IB_PKT_ERR_MAX,	/* PadCnt where none may be */
	IB_RC_BAD_LEN,		/* payload length against opcode and PMTU */
	IB_RC_BAD_RETH,		/* DMA length impossible for the opcode */
	IB_RC_BAD_AETH,		/* reserved syndrome bit or type or code */
	IB_RC_BAD_MTU,		/* PMTU not 256 .. 4096, a power of 2 */
	IB_RC_ERR_MAX
};

const char *ib_rc_strerror(enum ib_rc_err err);

/* Extended headers and payload class of an opcode; 0 if not RC. */
unsigned int ib_rc_op_flags(uint8_t opcode);
const char *ib_rc_op_name(uint8_t opcode);
/* Bytes of extended headers (RETH, AETH, ImmDt) an opcode carries. */
size_t ib_rc_ext_len(uint8_t opcode);

void ib_reth_encode(const struct ib_reth *h, uint8_t *p);
void ib_reth_decode(const uint8_t *p, struct ib_reth *h);
void ib_aeth_encode(const struct ib_aeth *h, uint8_t *p);
void ib_aeth_decode(const uint8_t *p, struct ib_aeth *h);
uint8_t ib_aeth_syndrome(const struct ib_aeth *h);

/* 24-bit PSN arithmetic (IBTA 9.7.1: the window is half the space). */
static inline uint32_t ib_psn_add(uint32_t psn, uint32_t n)
{
	return (psn + n) & IB_PSN_MASK;
}

/* (b - a) mod 2^24: how far b is ahead of a */
static inline uint32_t ib_psn_dist(uint32_t a, uint32_t b)
{
	return (b - a) & IB_PSN_MASK;
}

/* <0 if a is before b, 0 if equal, >0 if after, modulo 2^24 */
static inline int ib_psn_cmp(uint32_t a, uint32_t b)
{
	return (int32_t)((a - b) << 8) >> 8;
}

/* RNR NAK timer code (0..31) to microseconds (IBTA table 45); 0 for a
 * code out of range. */
uint32_t ib_rnr_timer_usec(uint8_t code);
/* The smallest code whose time is at least usec (31 if none). */
uint8_t ib_rnr_timer_code(uint32_t usec);

/* Path MTU enum (1..5, as in PathRecord and the CM) to bytes; 0 if bad. */
unsigned int ib_mtu_bytes(unsigned int mtu_enum);

/*
 * Build a complete RC packet from *r: the opcode in r->bth.opcode says
 * which of reth/aeth/imm go in; fills LNH, PktLen, PadCnt, GRH PayLen,
 * ICRC and VCRC.  Checks the payload against the opcode and pmtu (bytes,
 * 0: no MTU check) as ib_rc_parse does.  Returns the packet length, or 0
 * with *err set (IB_RC_TRUNCATED: cap too small).
 */
size_t ib_rc_build(const struct ib_rc *r, unsigned int pmtu, uint8_t *buf,
		   size_t cap, enum ib_rc_err *err);

/* Check framing, CRCs, opcode, extended headers, pad and payload length
 * (against pmtu in bytes, 0: no MTU check) and decode. */
enum ib_rc_err ib_rc_parse(const uint8_t *buf, size_t len, unsigned int pmtu,
			   struct ib_rc *r);
/* The same without the CRCs, for packets the switch already checked. */
enum ib_rc_err ib_rc_parse_checked(const uint8_t *buf, size_t len,
				   unsigned int pmtu, struct ib_rc *r);

#endif

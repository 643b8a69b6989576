/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Native InfiniBand packet codec (IBTA vol. 1, chapter 9 transport headers,
 * chapter 7 link layer): LRH, GRH, BTH, DETH, ICRC and VCRC.  The one place
 * where these headers are laid out; offsets are named after the spec.
 *
 * Decoding never trusts a length: every parse takes the buffer size and
 * returns an ib_pkt_err naming the first thing wrong.
 */
#ifndef IBGW_IB_PKT_H
#define IBGW_IB_PKT_H

#include <stddef.h>
#include <stdint.h>

#include "fabric/fabric.h"

#define IB_LRH_LEN	8
#define IB_GRH_LEN	40
#define IB_BTH_LEN	12
#define IB_DETH_LEN	8
#define IB_IMMDT_LEN	4
#define IB_ICRC_LEN	4
#define IB_VCRC_LEN	2
/* largest packet we carry: headers + 4096 payload + pad + CRCs; the
 * largest extended headers are an RC RDMA WRITE Only with Immediate's
 * (RETH 16 + ImmDt 4), above UD's DETH + ImmDt */
#define IB_EXT_MAX	20
#define IB_MAX_PKT	(IB_LRH_LEN + IB_GRH_LEN + IB_BTH_LEN + IB_EXT_MAX + \
			 4096 + 4 + IB_ICRC_LEN + IB_VCRC_LEN)

/* LRH Link Next Header */
#define IB_LNH_RAW		0
#define IB_LNH_IP_NONIBA	1
#define IB_LNH_IBA_LOCAL	2	/* BTH follows */
#define IB_LNH_IBA_GLOBAL	3	/* GRH follows */

#define IB_GRH_NXTHDR		0x1B	/* IBA transport follows the GRH */

#define IB_OP_UD_SEND_ONLY	0x64
#define IB_OP_UD_SEND_ONLY_IMM	0x65

struct ib_lrh {
	uint8_t vl;		/* 4 bits */
	uint8_t lver;		/* 4 bits */
	uint8_t sl;		/* 4 bits */
	uint8_t lnh;		/* 2 bits */
	uint16_t dlid;
	uint16_t pktlen;	/* 11 bits: 4-byte words LRH..ICRC */
	uint16_t slid;
};

struct ib_grh {
	uint8_t ipver;		/* 4 bits, 6 */
	uint8_t tclass;
	uint32_t flow_label;	/* 20 bits */
	uint16_t paylen;	/* bytes after the GRH up to and incl. ICRC */
	uint8_t nxthdr;
	uint8_t hoplmt;
	union fab_gid sgid;
	union fab_gid dgid;
};

struct ib_bth {
	uint8_t opcode;
	uint8_t se;		/* 1 bit */
	uint8_t m;		/* 1 bit */
	uint8_t padcnt;		/* 2 bits */
	uint8_t tver;		/* 4 bits */
	uint16_t pkey;
	uint8_t resv8a;		/* byte 4; F/B bits in later specs */
	uint32_t destqp;	/* 24 bits */
	uint8_t ackreq;		/* 1 bit */
	uint32_t psn;		/* 24 bits */
};

struct ib_deth {
	uint32_t qkey;
	uint32_t srcqp;		/* 24 bits */
};

/* A decoded UD packet; payload points into the parsed buffer. */
struct ib_ud {
	struct ib_lrh lrh;
	int has_grh;
	struct ib_grh grh;
	struct ib_bth bth;
	struct ib_deth deth;
	int has_imm;
	uint32_t imm;
	const uint8_t *payload;
	size_t payload_len;
};

enum ib_pkt_err {
	IB_PKT_OK = 0,
	IB_PKT_TRUNCATED,	/* shorter than the headers it announces */
	IB_PKT_BAD_PKTLEN,	/* LRH PktLen disagrees with the length */
	IB_PKT_BAD_VCRC,
	IB_PKT_BAD_ICRC,
	IB_PKT_BAD_LVER,
	IB_PKT_BAD_LNH,		/* raw packets are not carried */
	IB_PKT_BAD_GRH,		/* IPVer/NxtHdr/PayLen wrong */
	IB_PKT_BAD_TVER,
	IB_PKT_BAD_OPCODE,	/* not a transport we carry yet */
	IB_PKT_ERR_MAX
};

const char *ib_pkt_strerror(enum ib_pkt_err err);

void ib_lrh_encode(const struct ib_lrh *h, uint8_t *p);
void ib_lrh_decode(const uint8_t *p, struct ib_lrh *h);
void ib_grh_encode(const struct ib_grh *h, uint8_t *p);
void ib_grh_decode(const uint8_t *p, struct ib_grh *h);
void ib_bth_encode(const struct ib_bth *h, uint8_t *p);
void ib_bth_decode(const uint8_t *p, struct ib_bth *h);
void ib_deth_encode(const struct ib_deth *h, uint8_t *p);
void ib_deth_decode(const uint8_t *p, struct ib_deth *h);

/*
 * Build a complete UD packet (headers from *u, payload from u->payload) into
 * buf: fills PktLen, PadCnt, GRH PayLen, ICRC and VCRC.  Returns the packet
 * length or 0 if cap is too small.
 */
size_t ib_ud_build(const struct ib_ud *u, uint8_t *buf, size_t cap);
/* A MAD (len bytes) from QP1 of port slid to QP1 of port dlid, LID routed:
 * UD SEND Only, P_Key pkey, Q_Key 0x80010000, as a port's GSI sends it
 * (the SM's answers, the nodes' CMs).  As ib_ud_build. */
size_t ib_mad_build(uint16_t slid, uint16_t dlid, uint16_t pkey,
		    uint32_t psn, const uint8_t *mad, size_t len,
		    uint8_t *buf, size_t cap);

/*
 * The pieces every builder shares.  ib_pkt_put_route writes the LRH (LNH
 * from grh: NULL for none; PktLen from body, the bytes from the LRH through
 * the pad) and the GRH (IPVer, NxtHdr, PayLen filled in) and returns their
 * length.  ib_pkt_seal, once the transport headers end at off, copies the
 * payload in, zeroes the pad and appends ICRC and VCRC computed on the way;
 * it returns the packet's length.  buf must hold it all.
 */
size_t ib_pkt_put_route(uint8_t *buf, const struct ib_lrh *lrh,
			const struct ib_grh *grh, size_t body);
size_t ib_pkt_seal(uint8_t *buf, size_t off, const void *payload,
		   size_t payload_len, size_t pad);

/* Check framing, VCRC and ICRC, and decode a UD packet. */
enum ib_pkt_err ib_ud_parse(const uint8_t *buf, size_t len, struct ib_ud *u);
/* The same without recomputing the CRCs, for a packet whose CRCs were
 * checked on the way (the soft provider receives only what ibfabricd's
 * switch checked, over a local socket that cannot corrupt it; an HCA checks
 * in hardware, at no cost to the host).  Framing is still checked. */
enum ib_pkt_err ib_ud_parse_checked(const uint8_t *buf, size_t len,
				    struct ib_ud *u);

/* Only the routing part: LRH (and GRH if LNH says so), lengths and CRCs;
 * for the switch, which forwards transports it does not parse. */
enum ib_pkt_err ib_pkt_check(const uint8_t *buf, size_t len,
			     struct ib_lrh *lrh, struct ib_grh *grh,
			     size_t *bth_off);
/* The same without the CRCs (framing only), for packets already checked. */
enum ib_pkt_err ib_pkt_check_nocrc(const uint8_t *buf, size_t len,
				   struct ib_lrh *lrh, struct ib_grh *grh,
				   size_t *bth_off);
/* The same with the VCRC of buf[0 .. len - 2) already computed (vcrc, as
 * ib_vcrc_copy gives it while copying the packet in); -1: compute it. */
enum ib_pkt_err ib_pkt_check_vcrc(const uint8_t *buf, size_t len, int vcrc,
				  struct ib_lrh *lrh, struct ib_grh *grh,
				  size_t *bth_off);

/* CRCs (ib_crc.c). */
uint32_t ib_crc32(uint32_t crc, const void *buf, size_t len);
/* The same, copying src to dst (no overlap) in the same pass. */
uint32_t ib_crc32_copy(uint32_t crc, void *dst, const void *src, size_t len);
/* ICRC of a native packet: buf = LRH .. last payload byte (ICRC excluded). */
uint32_t ib_icrc_native(const uint8_t *buf, size_t len);
/* ICRC of a RoCEv2 packet: buf = IPv4 header .. payload (ICRC excluded). */
uint32_t ib_icrc_rocev2_ipv4(const uint8_t *buf, size_t len);
uint16_t ib_vcrc(const uint8_t *buf, size_t len);
/* The VCRC of src, copying it to dst (no overlap) in the same pass; every
 * byte is read once, so the CRC is that of the copy even while src
 * changes. */
uint16_t ib_vcrc_copy(void *dst, const void *src, size_t len);
/* Carry-less multiplication for long runs (x86-64): 0 off (tables only),
 * 1 128-bit PCLMULQDQ, 2 also 256-bit VPCLMULQDQ, -1 leave; capped at what
 * the CPU has; returns the previous setting.  For tests and benchmarks;
 * the default is the best the CPU has. */
int ib_crc_clmul(int on);

#endif

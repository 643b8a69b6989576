// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <string.h>

#include "inet/byteorder.h"
#include "fabric/ib_rc.h"

static const char *const rc_errstr[IB_RC_ERR_MAX] = {
	[IB_RC_OK] = "ok",
	[IB_RC_TRUNCATED] = "truncated",
	[IB_RC_BAD_PKTLEN] = "bad_pktlen",
	[IB_RC_BAD_VCRC] = "bad_vcrc",
	[IB_RC_BAD_ICRC] = "bad_icrc",
	[IB_RC_BAD_LVER] = "bad_lver",
	[IB_RC_BAD_LNH] = "bad_lnh",
	[IB_RC_BAD_GRH] = "bad_grh",
	[IB_RC_BAD_TVER] = "bad_tver",
	[IB_RC_BAD_OPCODE] = "bad_opcode",
	[IB_RC_BAD_PAD] = "bad_pad",
	[IB_RC_BAD_LEN] = "bad_len",
	[IB_RC_BAD_RETH] = "bad_reth",
	[IB_RC_BAD_AETH] = "bad_aeth",
	[IB_RC_BAD_MTU] = "bad_mtu",
};

const char *ib_rc_strerror(enum ib_rc_err err)
{
	if ((unsigned int)err >= IB_RC_ERR_MAX || !rc_errstr[err])
		return "unknown";
	return rc_errstr[err];
}

#define REQ_PL	(IB_RC_F_REQUEST | IB_RC_F_PAYLOAD)
#define RSP_PL	(IB_RC_F_RESPONSE | IB_RC_F_PAYLOAD)

/* IBTA vol. 1 table 38 (opcodes) and 9.2-9.4 (headers per opcode) */
static const struct {
	unsigned int flags;
	const char *name;
} rc_ops[IB_OP_RC_ACK + 1] = {
	[IB_OP_RC_SEND_FIRST] = { REQ_PL | IB_RC_F_FIRST, "SEND_FIRST" },
	[IB_OP_RC_SEND_MIDDLE] = { REQ_PL | IB_RC_F_MIDDLE, "SEND_MIDDLE" },
	[IB_OP_RC_SEND_LAST] = { REQ_PL | IB_RC_F_LAST, "SEND_LAST" },
	[IB_OP_RC_SEND_LAST_IMM] = { REQ_PL | IB_RC_F_LAST | IB_RC_F_IMM,
				     "SEND_LAST_IMM" },
	[IB_OP_RC_SEND_ONLY] = { REQ_PL | IB_RC_F_ONLY, "SEND_ONLY" },
	[IB_OP_RC_SEND_ONLY_IMM] = { REQ_PL | IB_RC_F_ONLY | IB_RC_F_IMM,
				     "SEND_ONLY_IMM" },
	[IB_OP_RC_WRITE_FIRST] = { REQ_PL | IB_RC_F_FIRST | IB_RC_F_RETH,
				   "RDMA_WRITE_FIRST" },
	[IB_OP_RC_WRITE_MIDDLE] = { REQ_PL | IB_RC_F_MIDDLE,
				    "RDMA_WRITE_MIDDLE" },
	[IB_OP_RC_WRITE_LAST] = { REQ_PL | IB_RC_F_LAST, "RDMA_WRITE_LAST" },
	[IB_OP_RC_WRITE_LAST_IMM] = { REQ_PL | IB_RC_F_LAST | IB_RC_F_IMM,
				      "RDMA_WRITE_LAST_IMM" },
	[IB_OP_RC_WRITE_ONLY] = { REQ_PL | IB_RC_F_ONLY | IB_RC_F_RETH,
				  "RDMA_WRITE_ONLY" },
	[IB_OP_RC_WRITE_ONLY_IMM] = { REQ_PL | IB_RC_F_ONLY | IB_RC_F_RETH |
				      IB_RC_F_IMM, "RDMA_WRITE_ONLY_IMM" },
	[IB_OP_RC_READ_REQUEST] = { IB_RC_F_REQUEST | IB_RC_F_RETH,
				    "RDMA_READ_REQUEST" },
	[IB_OP_RC_READ_RESP_FIRST] = { RSP_PL | IB_RC_F_FIRST | IB_RC_F_AETH,
				       "RDMA_READ_RESPONSE_FIRST" },
	[IB_OP_RC_READ_RESP_MIDDLE] = { RSP_PL | IB_RC_F_MIDDLE,
					"RDMA_READ_RESPONSE_MIDDLE" },
	[IB_OP_RC_READ_RESP_LAST] = { RSP_PL | IB_RC_F_LAST | IB_RC_F_AETH,
				      "RDMA_READ_RESPONSE_LAST" },
	[IB_OP_RC_READ_RESP_ONLY] = { RSP_PL | IB_RC_F_ONLY | IB_RC_F_AETH,
				      "RDMA_READ_RESPONSE_ONLY" },
	[IB_OP_RC_ACK] = { IB_RC_F_RESPONSE | IB_RC_F_AETH, "ACKNOWLEDGE" },
};

unsigned int ib_rc_op_flags(uint8_t opcode)
{
	return opcode <= IB_OP_RC_ACK ? rc_ops[opcode].flags : 0;
}

const char *ib_rc_op_name(uint8_t opcode)
{
	return opcode <= IB_OP_RC_ACK ? rc_ops[opcode].name : "unknown";
}

size_t ib_rc_ext_len(uint8_t opcode)
{
	unsigned int f = ib_rc_op_flags(opcode);

	return (f & IB_RC_F_RETH ? IB_RETH_LEN : 0) +
	       (f & IB_RC_F_AETH ? IB_AETH_LEN : 0) +
	       (f & IB_RC_F_IMM ? IB_IMMDT_LEN : 0);
}

/* RETH: 0 VA:64 | 8 R_Key | 12 DMA Length */
void ib_reth_encode(const struct ib_reth *h, uint8_t *p)
{
	be32_put(p, (uint32_t)(h->va >> 32));
	be32_put(p + 4, (uint32_t)h->va);
	be32_put(p + 8, h->rkey);
	be32_put(p + 12, h->dma_len);
}

void ib_reth_decode(const uint8_t *p, struct ib_reth *h)
{
	h->va = (uint64_t)be32_get(p) << 32 | be32_get(p + 4);
	h->rkey = be32_get(p + 8);
	h->dma_len = be32_get(p + 12);
}

uint8_t ib_aeth_syndrome(const struct ib_aeth *h)
{
	return (uint8_t)((h->type & 3) << 5 | (h->value & 0x1f));
}

/* AETH: 0 Syndrome:8 | 1 MSN:24 */
void ib_aeth_encode(const struct ib_aeth *h, uint8_t *p)
{
	be32_put(p, (uint32_t)ib_aeth_syndrome(h) << 24 |
		    (h->msn & IB_MSN_MASK));
}

void ib_aeth_decode(const uint8_t *p, struct ib_aeth *h)
{
	h->type = (p[0] >> 5) & 3;
	h->value = p[0] & 0x1f;
	h->msn = be32_get(p) & IB_MSN_MASK;
}

/* IBTA vol. 1 table 45: RNR NAK timer field, in microseconds */
static const uint32_t rnr_usec[32] = {
	655360, 10, 20, 30, 40, 60, 80, 120,
	160, 240, 320, 480, 640, 960, 1280, 1920,
	2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720,
	40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520,
};

uint32_t ib_rnr_timer_usec(uint8_t code)
{
	return code < 32 ? rnr_usec[code] : 0;
}

uint8_t ib_rnr_timer_code(uint32_t usec)
{
	uint8_t c;

	for (c = 1; c < 32; c++)
		if (rnr_usec[c] >= usec)
			return c;
	return usec <= rnr_usec[0] ? 0 : 31;
}

unsigned int ib_mtu_bytes(unsigned int mtu_enum)
{
	return mtu_enum >= 1 && mtu_enum <= 5 ? 128u << mtu_enum : 0;
}

static int aeth_valid(const struct ib_aeth *a)
{
	if (a->type == IB_AETH_NAK)
		return a->value <= IB_NAK_INVALID_RD_REQ;
	return a->type == IB_AETH_ACK || a->type == IB_AETH_RNR_NAK;
}

/* The rules both ends share: pad, payload length, RETH and AETH. */
static enum ib_rc_err rc_check(const struct ib_rc *r, unsigned int f,
			       unsigned int pmtu)
{
	size_t n = r->payload_len;

	if (pmtu && (pmtu < 256 || pmtu > 4096 || (pmtu & (pmtu - 1))))
		return IB_RC_BAD_MTU;
	if (!(f & IB_RC_F_PAYLOAD)) {
		if (r->bth.padcnt)
			return IB_RC_BAD_PAD;
		if (n)
			return IB_RC_BAD_LEN;
	} else if (f & (IB_RC_F_FIRST | IB_RC_F_MIDDLE)) {
		if (r->bth.padcnt)
			return IB_RC_BAD_PAD;
		if (pmtu ? n != pmtu : (n == 0 || (n & 3)))
			return IB_RC_BAD_LEN;
	} else {
		if (r->bth.padcnt && n == 0)
			return IB_RC_BAD_PAD;
		if ((pmtu && n > pmtu) || ((f & IB_RC_F_LAST) && n == 0))
			return IB_RC_BAD_LEN;
	}
	if (f & IB_RC_F_RETH) {
		if (r->reth.dma_len > IB_RC_MAX_DMA_LEN)
			return IB_RC_BAD_RETH;
		/* an only packet is the whole transfer, a first one part */
		if ((f & IB_RC_F_ONLY) && r->reth.dma_len != n)
			return IB_RC_BAD_RETH;
		if ((f & IB_RC_F_FIRST) && r->reth.dma_len <= n)
			return IB_RC_BAD_RETH;
	}
	if ((f & IB_RC_F_AETH) && !aeth_valid(&r->aeth))
		return IB_RC_BAD_AETH;
	/* read responses carry ACKs only */
	if ((f & IB_RC_F_PAYLOAD) && (f & IB_RC_F_AETH) &&
	    r->aeth.type != IB_AETH_ACK)
		return IB_RC_BAD_AETH;
	return IB_RC_OK;
}

size_t ib_rc_build(const struct ib_rc *r, unsigned int pmtu, uint8_t *buf,
		   size_t cap, enum ib_rc_err *err)
{
	struct ib_rc chk = *r;
	unsigned int f = ib_rc_op_flags(r->bth.opcode);
	size_t hdr, pad, body, total, off;
	enum ib_rc_err e;

	if (!f) {
		*err = IB_RC_BAD_OPCODE;
		return 0;
	}
	pad = (4 - (r->payload_len & 3)) & 3;
	chk.bth.padcnt = (uint8_t)pad;
	e = rc_check(&chk, f, pmtu);
	if (e) {
		*err = e;
		return 0;
	}
	hdr = IB_LRH_LEN + (r->has_grh ? IB_GRH_LEN : 0) + IB_BTH_LEN +
	      ib_rc_ext_len(r->bth.opcode);
	body = hdr + r->payload_len + pad;
	total = body + IB_ICRC_LEN + IB_VCRC_LEN;
	if (total > cap || (body + IB_ICRC_LEN) / 4 > 0x7ff) {
		*err = IB_RC_TRUNCATED;
		return 0;
	}

	off = ib_pkt_put_route(buf, &r->lrh, r->has_grh ? &r->grh : NULL,
			       body);
	ib_bth_encode(&chk.bth, buf + off);
	off += IB_BTH_LEN;
	/* IBTA order: RETH, AETH, ImmDt (no RC opcode has RETH and AETH) */
	if (f & IB_RC_F_RETH) {
		ib_reth_encode(&r->reth, buf + off);
		off += IB_RETH_LEN;
	}
	if (f & IB_RC_F_AETH) {
		ib_aeth_encode(&r->aeth, buf + off);
		off += IB_AETH_LEN;
	}
	if (f & IB_RC_F_IMM) {
		be32_put(buf + off, r->imm);
		off += IB_IMMDT_LEN;
	}
	*err = IB_RC_OK;
	return ib_pkt_seal(buf, off, r->payload, r->payload_len, pad);
}

static enum ib_rc_err rc_parse(const uint8_t *buf, size_t len,
			       unsigned int pmtu, struct ib_rc *r, int crcs)
{
	enum ib_pkt_err perr;
	unsigned int f;
	size_t off, end;

	memset(r, 0, sizeof(*r));
	perr = crcs ? ib_pkt_check(buf, len, &r->lrh, &r->grh, &off) :
		      ib_pkt_check_nocrc(buf, len, &r->lrh, &r->grh, &off);
	if (perr)
		return (enum ib_rc_err)perr;
	r->has_grh = r->lrh.lnh == IB_LNH_IBA_GLOBAL;
	end = len - IB_VCRC_LEN - IB_ICRC_LEN;
	if (end - off < IB_BTH_LEN)
		return IB_RC_TRUNCATED;
	ib_bth_decode(buf + off, &r->bth);
	off += IB_BTH_LEN;
	if (r->bth.tver != 0)
		return IB_RC_BAD_TVER;
	f = ib_rc_op_flags(r->bth.opcode);
	if (!f)
		return IB_RC_BAD_OPCODE;
	if (end - off < ib_rc_ext_len(r->bth.opcode))
		return IB_RC_TRUNCATED;
	if (f & IB_RC_F_RETH) {
		ib_reth_decode(buf + off, &r->reth);
		off += IB_RETH_LEN;
	}
	if (f & IB_RC_F_AETH) {
		if (buf[off] & 0x80)
			return IB_RC_BAD_AETH;
		ib_aeth_decode(buf + off, &r->aeth);
		off += IB_AETH_LEN;
	}
	if (f & IB_RC_F_IMM) {
		r->imm = be32_get(buf + off);
		off += IB_IMMDT_LEN;
	}
	if (end - off < r->bth.padcnt)
		return IB_RC_BAD_PAD;
	r->payload = buf + off;
	r->payload_len = end - off - r->bth.padcnt;
	return rc_check(r, f, pmtu);
}

enum ib_rc_err ib_rc_parse(const uint8_t *buf, size_t len, unsigned int pmtu,
			   struct ib_rc *r)
{
	return rc_parse(buf, len, pmtu, r, 1);
}

enum ib_rc_err ib_rc_parse_checked(const uint8_t *buf, size_t len,
				   unsigned int pmtu, struct ib_rc *r)
{
	return rc_parse(buf, len, pmtu, r, 0);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <string.h>

#include "inet/byteorder.h"
#include "fabric/ib_pkt.h"

static const char *const pkt_errstr[IB_PKT_ERR_MAX] = {
	[IB_PKT_OK] = "ok",
	[IB_PKT_TRUNCATED] = "truncated",
	[IB_PKT_BAD_PKTLEN] = "bad_pktlen",
	[IB_PKT_BAD_VCRC] = "bad_vcrc",
	[IB_PKT_BAD_ICRC] = "bad_icrc",
	[IB_PKT_BAD_LVER] = "bad_lver",
	[IB_PKT_BAD_LNH] = "bad_lnh",
	[IB_PKT_BAD_GRH] = "bad_grh",
	[IB_PKT_BAD_TVER] = "bad_tver",
	[IB_PKT_BAD_OPCODE] = "bad_opcode",
};

const char *ib_pkt_strerror(enum ib_pkt_err err)
{
	if ((unsigned int)err >= IB_PKT_ERR_MAX)
		return "unknown";
	return pkt_errstr[err];
}

/* LRH: 0 VL:4 LVer:4 | 1 SL:4 rsvd:2 LNH:2 | 2 DLID | 4 rsvd:5 PktLen:11 |
 * 6 SLID */
void ib_lrh_encode(const struct ib_lrh *h, uint8_t *p)
{
	p[0] = (uint8_t)((h->vl & 0xf) << 4 | (h->lver & 0xf));
	p[1] = (uint8_t)((h->sl & 0xf) << 4 | (h->lnh & 0x3));
	be16_put(p + 2, h->dlid);
	be16_put(p + 4, h->pktlen & 0x7ff);
	be16_put(p + 6, h->slid);
}

void ib_lrh_decode(const uint8_t *p, struct ib_lrh *h)
{
	h->vl = p[0] >> 4;
	h->lver = p[0] & 0xf;
	h->sl = p[1] >> 4;
	h->lnh = p[1] & 0x3;
	h->dlid = be16_get(p + 2);
	h->pktlen = be16_get(p + 4) & 0x7ff;
	h->slid = be16_get(p + 6);
}

/* GRH: 0 IPVer:4 TClass:8 FlowLabel:20 | 4 PayLen | 6 NxtHdr | 7 HopLmt |
 * 8 SGID | 24 DGID */
void ib_grh_encode(const struct ib_grh *h, uint8_t *p)
{
	be32_put(p, (uint32_t)(h->ipver & 0xf) << 28 | (uint32_t)h->tclass << 20 |
		 (h->flow_label & 0xfffff));
	be16_put(p + 4, h->paylen);
	p[6] = h->nxthdr;
	p[7] = h->hoplmt;
	memcpy(p + 8, h->sgid.raw, 16);
	memcpy(p + 24, h->dgid.raw, 16);
}

void ib_grh_decode(const uint8_t *p, struct ib_grh *h)
{
	uint32_t w = be32_get(p);

	h->ipver = (uint8_t)(w >> 28);
	h->tclass = (uint8_t)(w >> 20);
	h->flow_label = w & 0xfffff;
	h->paylen = be16_get(p + 4);
	h->nxthdr = p[6];
	h->hoplmt = p[7];
	memcpy(h->sgid.raw, p + 8, 16);
	memcpy(h->dgid.raw, p + 24, 16);
}

/* BTH: 0 OpCode | 1 SE:1 M:1 PadCnt:2 TVer:4 | 2 P_Key | 4 rsvd8 |
 * 5 DestQP:24 | 8 A:1 rsvd:7 | 9 PSN:24 */
void ib_bth_encode(const struct ib_bth *h, uint8_t *p)
{
	p[0] = h->opcode;
	p[1] = (uint8_t)((h->se & 1) << 7 | (h->m & 1) << 6 |
			 (h->padcnt & 3) << 4 | (h->tver & 0xf));
	be16_put(p + 2, h->pkey);
	be32_put(p + 4, (uint32_t)h->resv8a << 24 | (h->destqp & 0xffffff));
	be32_put(p + 8, (uint32_t)(h->ackreq & 1) << 31 | (h->psn & 0xffffff));
}

void ib_bth_decode(const uint8_t *p, struct ib_bth *h)
{
	h->opcode = p[0];
	h->se = p[1] >> 7;
	h->m = (p[1] >> 6) & 1;
	h->padcnt = (p[1] >> 4) & 3;
	h->tver = p[1] & 0xf;
	h->pkey = be16_get(p + 2);
	h->resv8a = p[4];
	h->destqp = be32_get(p + 4) & 0xffffff;
	h->ackreq = p[8] >> 7;
	h->psn = be32_get(p + 8) & 0xffffff;
}

/* DETH: 0 Q_Key | 4 rsvd8 | 5 SrcQP:24 */
void ib_deth_encode(const struct ib_deth *h, uint8_t *p)
{
	be32_put(p, h->qkey);
	be32_put(p + 4, h->srcqp & 0xffffff);
}

void ib_deth_decode(const uint8_t *p, struct ib_deth *h)
{
	h->qkey = be32_get(p);
	h->srcqp = be32_get(p + 4) & 0xffffff;
}

size_t ib_pkt_put_route(uint8_t *buf, const struct ib_lrh *lrh_in,
			const struct ib_grh *grh_in, size_t body)
{
	struct ib_lrh lrh = *lrh_in;
	size_t off = IB_LRH_LEN;

	lrh.lnh = grh_in ? IB_LNH_IBA_GLOBAL : IB_LNH_IBA_LOCAL;
	lrh.pktlen = (uint16_t)((body + IB_ICRC_LEN) / 4);
	ib_lrh_encode(&lrh, buf);
	if (grh_in) {
		struct ib_grh grh = *grh_in;

		grh.ipver = 6;
		grh.nxthdr = IB_GRH_NXTHDR;
		grh.paylen = (uint16_t)(body + IB_ICRC_LEN - IB_LRH_LEN -
					IB_GRH_LEN);
		ib_grh_encode(&grh, buf + off);
		off += IB_GRH_LEN;
	}
	return off;
}

size_t ib_pkt_seal(uint8_t *buf, size_t off, const void *payload,
		   size_t payload_len, size_t pad)
{
	uint32_t icrc;
	uint16_t vcrc;

	/* the ICRC of the headers (variant fields masked), then of the
	 * payload as it is copied in, then of the pad */
	icrc = ib_icrc_native(buf, off);
	if (payload_len)
		icrc = ib_crc32_copy(icrc, buf + off, payload, payload_len);
	off += payload_len;
	memset(buf + off, 0, pad);
	icrc = ib_crc32(icrc, buf + off, pad);
	off += pad;

	buf[off++] = (uint8_t)icrc;
	buf[off++] = (uint8_t)(icrc >> 8);
	buf[off++] = (uint8_t)(icrc >> 16);
	buf[off++] = (uint8_t)(icrc >> 24);
	vcrc = ib_vcrc(buf, off);
	buf[off++] = (uint8_t)vcrc;
	buf[off++] = (uint8_t)(vcrc >> 8);
	return off;
}

size_t ib_ud_build(const struct ib_ud *u, uint8_t *buf, size_t cap)
{
	struct ib_bth bth = u->bth;
	size_t hdr, pad, body, total, off;

	hdr = IB_LRH_LEN + (u->has_grh ? IB_GRH_LEN : 0) + IB_BTH_LEN +
	      IB_DETH_LEN + (u->has_imm ? IB_IMMDT_LEN : 0);
	pad = (4 - (u->payload_len & 3)) & 3;
	body = hdr + u->payload_len + pad;
	total = body + IB_ICRC_LEN + IB_VCRC_LEN;
	if (total > cap || (body + IB_ICRC_LEN) / 4 > 0x7ff)
		return 0;

	off = ib_pkt_put_route(buf, &u->lrh, u->has_grh ? &u->grh : NULL,
			       body);
	bth.opcode = u->has_imm ? IB_OP_UD_SEND_ONLY_IMM : IB_OP_UD_SEND_ONLY;
	bth.padcnt = (uint8_t)pad;
	ib_bth_encode(&bth, buf + off);
	off += IB_BTH_LEN;
	ib_deth_encode(&u->deth, buf + off);
	off += IB_DETH_LEN;
	if (u->has_imm) {
		be32_put(buf + off, u->imm);
		off += IB_IMMDT_LEN;
	}
	return ib_pkt_seal(buf, off, u->payload, u->payload_len, pad);
}

size_t ib_mad_build(uint16_t slid, uint16_t dlid, uint16_t pkey,
		    uint32_t psn, const uint8_t *mad, size_t len,
		    uint8_t *buf, size_t cap)
{
	struct ib_ud u;

	memset(&u, 0, sizeof(u));
	u.lrh.lnh = IB_LNH_IBA_LOCAL;
	u.lrh.dlid = dlid;
	u.lrh.slid = slid;
	u.bth.opcode = IB_OP_UD_SEND_ONLY;
	u.bth.pkey = pkey;
	u.bth.destqp = 1;
	u.bth.psn = psn & 0xffffff;
	u.deth.qkey = FAB_QP1_QKEY;
	u.deth.srcqp = 1;
	u.payload = mad;
	u.payload_len = len;
	return ib_ud_build(&u, buf, cap);
}

/* crcs: check the CRCs; vcrc >= 0: the VCRC already computed */
static enum ib_pkt_err pkt_check(const uint8_t *buf, size_t len,
				 struct ib_lrh *lrh, struct ib_grh *grh,
				 size_t *bth_off, int crcs, int vcrc_in)
{
	size_t crc_off, off = IB_LRH_LEN;
	uint32_t icrc;
	uint16_t vcrc;

	if (len < IB_LRH_LEN + IB_BTH_LEN + IB_ICRC_LEN + IB_VCRC_LEN)
		return IB_PKT_TRUNCATED;
	ib_lrh_decode(buf, lrh);
	if ((size_t)lrh->pktlen * 4 + IB_VCRC_LEN != len)
		return IB_PKT_BAD_PKTLEN;
	crc_off = len - IB_VCRC_LEN - IB_ICRC_LEN;
	vcrc = (uint16_t)(buf[len - 2] | buf[len - 1] << 8);
	if (crcs && (vcrc_in >= 0 ? (uint16_t)vcrc_in :
		     ib_vcrc(buf, len - IB_VCRC_LEN)) != vcrc)
		return IB_PKT_BAD_VCRC;
	if (lrh->lver != 0)
		return IB_PKT_BAD_LVER;
	if (lrh->lnh != IB_LNH_IBA_LOCAL && lrh->lnh != IB_LNH_IBA_GLOBAL)
		return IB_PKT_BAD_LNH;
	if (lrh->lnh == IB_LNH_IBA_GLOBAL) {
		if (crc_off < IB_LRH_LEN + IB_GRH_LEN + IB_BTH_LEN)
			return IB_PKT_TRUNCATED;
		ib_grh_decode(buf + off, grh);
		if (grh->ipver != 6 || grh->nxthdr != IB_GRH_NXTHDR ||
		    (size_t)grh->paylen != len - IB_VCRC_LEN - IB_LRH_LEN -
					   IB_GRH_LEN)
			return IB_PKT_BAD_GRH;
		off += IB_GRH_LEN;
	}
	icrc = (uint32_t)buf[crc_off] | (uint32_t)buf[crc_off + 1] << 8 |
	       (uint32_t)buf[crc_off + 2] << 16 |
	       (uint32_t)buf[crc_off + 3] << 24;
	if (crcs && ib_icrc_native(buf, crc_off) != icrc)
		return IB_PKT_BAD_ICRC;
	*bth_off = off;
	return IB_PKT_OK;
}

enum ib_pkt_err ib_pkt_check(const uint8_t *buf, size_t len,
			     struct ib_lrh *lrh, struct ib_grh *grh,
			     size_t *bth_off)
{
	return pkt_check(buf, len, lrh, grh, bth_off, 1, -1);
}

enum ib_pkt_err ib_pkt_check_nocrc(const uint8_t *buf, size_t len,
				   struct ib_lrh *lrh, struct ib_grh *grh,
				   size_t *bth_off)
{
	return pkt_check(buf, len, lrh, grh, bth_off, 0, -1);
}

enum ib_pkt_err ib_pkt_check_vcrc(const uint8_t *buf, size_t len, int vcrc,
				  struct ib_lrh *lrh, struct ib_grh *grh,
				  size_t *bth_off)
{
	return pkt_check(buf, len, lrh, grh, bth_off, 1, vcrc);
}

static enum ib_pkt_err ud_parse(const uint8_t *buf, size_t len,
				struct ib_ud *u, int crcs)
{
	enum ib_pkt_err err;
	size_t off, end;

	memset(u, 0, sizeof(*u));
	err = pkt_check(buf, len, &u->lrh, &u->grh, &off, crcs, -1);
	if (err)
		return err;
	u->has_grh = u->lrh.lnh == IB_LNH_IBA_GLOBAL;
	end = len - IB_VCRC_LEN - IB_ICRC_LEN;
	if (end - off < IB_BTH_LEN)
		return IB_PKT_TRUNCATED;
	ib_bth_decode(buf + off, &u->bth);
	off += IB_BTH_LEN;
	if (u->bth.tver != 0)
		return IB_PKT_BAD_TVER;
	if (u->bth.opcode != IB_OP_UD_SEND_ONLY &&
	    u->bth.opcode != IB_OP_UD_SEND_ONLY_IMM)
		return IB_PKT_BAD_OPCODE;
	u->has_imm = u->bth.opcode == IB_OP_UD_SEND_ONLY_IMM;
	if (end - off < IB_DETH_LEN + (u->has_imm ? IB_IMMDT_LEN : 0u) +
			u->bth.padcnt)
		return IB_PKT_TRUNCATED;
	ib_deth_decode(buf + off, &u->deth);
	off += IB_DETH_LEN;
	if (u->has_imm) {
		u->imm = be32_get(buf + off);
		off += IB_IMMDT_LEN;
	}
	u->payload = buf + off;
	u->payload_len = end - off - u->bth.padcnt;
	return IB_PKT_OK;
}

enum ib_pkt_err ib_ud_parse(const uint8_t *buf, size_t len, struct ib_ud *u)
{
	return ud_parse(buf, len, u, 1);
}

enum ib_pkt_err ib_ud_parse_checked(const uint8_t *buf, size_t len,
				    struct ib_ud *u)
{
	return ud_parse(buf, len, u, 0);
}

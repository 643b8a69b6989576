// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The BSDH, Hello and HelloAck codecs (sdp_wire.h).  Offsets are named
 * after OFED's struct sdp_bsdh / sdp_hh / sdp_hah.
 *
 * The BSDH len of a Hello is SDP_HELLO_LEN (92) and of a HelloAck
 * SDP_HELLO_ACK_LEN (196): OFED sets it to sizeof(struct sdp_hh) and
 * sizeof(struct sdp_hah), the whole private data, and tshark shows it as
 * the message's length.  Parsing, a len from the fields' length up to
 * that size is taken (rdma_cm may hand a peer's private data over
 * shortened or zero-padded; the len is not what we rely on), anything
 * else is refused.
 *
 * OFED's HelloAck leaves ipv_cap zero (sdp_cma.c never sets it), so a
 * HelloAck's ipv may be 0 as well as 4 or 6; a Hello's must be 4 or 6.
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "inet/byteorder.h"
#include "ulp/sdp/sdp_wire.h"

/* BSDH */
#define BSDH_MID		0
#define BSDH_FLAGS		1
#define BSDH_BUFS		2
#define BSDH_LEN		4
#define BSDH_MSEQ		8
#define BSDH_MSEQ_ACK		12

/* Hello (sdp_hh) and HelloAck (sdp_hah) after the BSDH */
#define HH_MAJV_MINV		16
#define HH_IPV_CAP		17
#define HH_MAX_ADVERTS		19
#define HH_DESREMRCVSZ		20
#define HH_LOCALRCVSZ		24
#define HH_PORT			28
#define HH_SRC_ADDR		32
#define HH_DST_ADDR		48
#define HAH_EXT_MAX_ADVERTS	19
#define HAH_ACTRCVSZ		20

#define IP_ADDR_LEN		16
#define IPV4_IN_16		12	/* where an IPv4 address starts */

void sdp_bsdh_put(uint8_t *p, const struct sdp_bsdh *h)
{
	p[BSDH_MID] = h->mid;
	p[BSDH_FLAGS] = h->flags;
	be16_put(p + BSDH_BUFS, h->bufs);
	be32_put(p + BSDH_LEN, h->len);
	be32_put(p + BSDH_MSEQ, h->mseq);
	be32_put(p + BSDH_MSEQ_ACK, h->mseq_ack);
}

static void bsdh_read(const uint8_t *p, struct sdp_bsdh *h)
{
	h->mid = p[BSDH_MID];
	h->flags = p[BSDH_FLAGS];
	h->bufs = be16_get(p + BSDH_BUFS);
	h->len = be32_get(p + BSDH_LEN);
	h->mseq = be32_get(p + BSDH_MSEQ);
	h->mseq_ack = be32_get(p + BSDH_MSEQ_ACK);
}

int sdp_bsdh_get(const uint8_t *p, size_t len, struct sdp_bsdh *h)
{
	if (len < SDP_BSDH_LEN)
		goto inval;
	bsdh_read(p, h);
	if (h->len != len)
		goto inval;
	return 0;
inval:
	errno = EINVAL;
	return -1;
}

const char *sdp_mid_name(uint8_t mid)
{
	switch (mid) {
	case SDP_MID_HELLO:		return "Hello";
	case SDP_MID_HELLO_ACK:		return "HelloAck";
	case SDP_MID_DISCONN:		return "DisConn";
	case SDP_MID_ABORT:		return "AbortConn";
	case SDP_MID_SENDSM:		return "SendSM";
	case SDP_MID_RDMARDCOMPL:	return "RdmaRdCompl";
	case SDP_MID_SRCAVAIL_CANCEL:	return "SrcAvailCancel";
	case SDP_MID_CHRCVBUF:		return "ChRcvBuf";
	case SDP_MID_CHRCVBUF_ACK:	return "ChRcvBufAck";
	case SDP_MID_SINKAVAIL:		return "SinkAvail";
	case SDP_MID_SRCAVAIL:		return "SrcAvail";
	case SDP_MID_DATA:		return "Data";
	}
	return "unknown";
}

static int rcvsz_ok(uint32_t sz)
{
	return sz >= SDP_BSDH_LEN + 1 && sz <= SDP_MAX_RCVSZ;
}

static int ipv_family(uint8_t ipv)
{
	return ipv == 4 ? AF_INET : ipv == 6 ? AF_INET6 : 0;
}

static int addr_put(uint8_t *p, int family, const struct inet_addr *a)
{
	if (a->family != family)
		return -1;
	if (family == AF_INET)
		memcpy(p + IPV4_IN_16, a->raw, 4);
	else
		memcpy(p, a->raw, IP_ADDR_LEN);
	return 0;
}

static void addr_get(const uint8_t *p, int family, struct inet_addr *a)
{
	memset(a, 0, sizeof(*a));
	a->family = family;
	if (family == AF_INET)
		memcpy(a->raw, p + IPV4_IN_16, 4);
	else
		memcpy(a->raw, p, IP_ADDR_LEN);
}

/* the BSDH of a Hello or HelloAck: mid and len ours, the rest h's */
static void hello_bsdh_put(uint8_t *p, const struct sdp_bsdh *h, uint8_t mid,
			   uint32_t len)
{
	struct sdp_bsdh b = *h;

	b.mid = mid;
	b.len = len;
	sdp_bsdh_put(p, &b);
}

/* len: SDP_HELLO_LEN (every field) or SDP_HELLO_CM_LEN (no dst_addr) */
static int hello_build(uint8_t *p, size_t cap, const struct sdp_hello *h,
		       size_t len)
{
	int family = ipv_family(h->ipv);

	if (cap < len || !family || h->caps > 0xf ||
	    !h->max_adverts || SDP_MAJOR(h->majv_minv) != 2 ||
	    !rcvsz_ok(h->desremrcvsz) || !rcvsz_ok(h->localrcvsz))
		goto inval;
	memset(p, 0, len);
	if (addr_put(p + HH_SRC_ADDR, family, &h->src) ||
	    (len >= SDP_HELLO_FIELDS_LEN &&
	     addr_put(p + HH_DST_ADDR, family, &h->dst)))
		goto inval;
	hello_bsdh_put(p, &h->bsdh, SDP_MID_HELLO, (uint32_t)len);
	p[HH_MAJV_MINV] = h->majv_minv;
	p[HH_IPV_CAP] = (uint8_t)(h->ipv << 4 | h->caps);
	p[HH_MAX_ADVERTS] = h->max_adverts;
	be32_put(p + HH_DESREMRCVSZ, h->desremrcvsz);
	be32_put(p + HH_LOCALRCVSZ, h->localrcvsz);
	be16_put(p + HH_PORT, h->port);
	return (int)len;
inval:
	errno = EINVAL;
	return -1;
}

int sdp_hello_build(uint8_t *p, size_t cap, const struct sdp_hello *h)
{
	return hello_build(p, cap, h, SDP_HELLO_LEN);
}

int sdp_hello_build_cm(uint8_t *p, size_t cap, const struct sdp_hello *h)
{
	return hello_build(p, cap, h, SDP_HELLO_CM_LEN);
}

int sdp_hello_ack_build(uint8_t *p, size_t cap,
			const struct sdp_hello_ack *h)
{
	if (cap < SDP_HELLO_ACK_LEN || (h->ipv && !ipv_family(h->ipv)) ||
	    h->caps > 0xf || SDP_MAJOR(h->majv_minv) != 2 ||
	    !rcvsz_ok(h->actrcvsz)) {
		errno = EINVAL;
		return -1;
	}
	memset(p, 0, SDP_HELLO_ACK_LEN);
	hello_bsdh_put(p, &h->bsdh, SDP_MID_HELLO_ACK, SDP_HELLO_ACK_LEN);
	p[HH_MAJV_MINV] = h->majv_minv;
	p[HH_IPV_CAP] = (uint8_t)(h->ipv << 4 | h->caps);
	p[HAH_EXT_MAX_ADVERTS] = h->ext_max_adverts;
	be32_put(p + HAH_ACTRCVSZ, h->actrcvsz);
	return SDP_HELLO_ACK_LEN;
}

/* the BSDH, version and ipv_cap that Hello and HelloAck share */
static int hello_common(const uint8_t *p, size_t len, uint8_t mid,
			size_t fields, size_t full, struct sdp_bsdh *b,
			uint8_t *majv_minv, uint8_t *ipv, uint8_t *caps)
{
	if (len < fields)
		return -1;
	bsdh_read(p, b);
	if (b->mid != mid || b->len < fields || b->len > full)
		return -1;
	*majv_minv = p[HH_MAJV_MINV];
	*ipv = p[HH_IPV_CAP] >> 4;
	*caps = p[HH_IPV_CAP] & 0xf;
	return SDP_MAJOR(*majv_minv) == 2 ? 0 : -1;
}

/* fields: SDP_HELLO_FIELDS_LEN, or SDP_HELLO_CM_FIELDS_LEN (no dst_addr:
 * h->dst all zero) */
static int hello_parse(const uint8_t *p, size_t len, struct sdp_hello *h,
		       size_t fields)
{
	int family;

	if (hello_common(p, len, SDP_MID_HELLO, fields,
			 SDP_HELLO_LEN, &h->bsdh, &h->majv_minv, &h->ipv,
			 &h->caps))
		goto inval;
	family = ipv_family(h->ipv);
	h->max_adverts = p[HH_MAX_ADVERTS];
	h->desremrcvsz = be32_get(p + HH_DESREMRCVSZ);
	h->localrcvsz = be32_get(p + HH_LOCALRCVSZ);
	h->port = be16_get(p + HH_PORT);
	if (!family || !h->max_adverts || !rcvsz_ok(h->desremrcvsz) ||
	    !rcvsz_ok(h->localrcvsz))
		goto inval;
	addr_get(p + HH_SRC_ADDR, family, &h->src);
	if (fields >= SDP_HELLO_FIELDS_LEN) {
		addr_get(p + HH_DST_ADDR, family, &h->dst);
	} else {
		memset(&h->dst, 0, sizeof(h->dst));
		h->dst.family = family;
	}
	return 0;
inval:
	errno = EINVAL;
	return -1;
}

int sdp_hello_parse(const uint8_t *p, size_t len, struct sdp_hello *h)
{
	return hello_parse(p, len, h, SDP_HELLO_FIELDS_LEN);
}

int sdp_hello_parse_cm(const uint8_t *p, size_t len, struct sdp_hello *h)
{
	return hello_parse(p, len, h, SDP_HELLO_CM_FIELDS_LEN);
}

int sdp_hello_ack_parse(const uint8_t *p, size_t len,
			struct sdp_hello_ack *h)
{
	if (hello_common(p, len, SDP_MID_HELLO_ACK, SDP_HELLO_ACK_FIELDS_LEN,
			 SDP_HELLO_ACK_LEN, &h->bsdh, &h->majv_minv, &h->ipv,
			 &h->caps))
		goto inval;
	h->ext_max_adverts = p[HAH_EXT_MAX_ADVERTS];
	h->actrcvsz = be32_get(p + HAH_ACTRCVSZ);
	if ((h->ipv && !ipv_family(h->ipv)) || !rcvsz_ok(h->actrcvsz))
		goto inval;
	return 0;
inval:
	errno = EINVAL;
	return -1;
}

/* ---- REJ private data ---------------------------------------------------- */

#define REJ_FORMAT		1

static const struct {
	uint8_t code;
	int err;
} rej_codes[] = {
	{ 1, ECONNREFUSED },
	{ 2, EHOSTUNREACH },
	{ 3, ENETUNREACH },
	{ 4, ETIMEDOUT },
	/* refusals of the gateway's own network: a route of type prohibit
	 * (EACCES), a firewall's drop of its SYN (EPERM), its interface
	 * down (ENETDOWN), a neighbour known dead (EHOSTDOWN) */
	{ 5, EACCES },
	{ 6, EPERM },
	{ 7, ENETDOWN },
	{ 8, EHOSTDOWN },
};

int sdp_rej_build(uint8_t *p, size_t cap, int err)
{
	size_t i;

	if (cap < SDP_REJ_LEN) {
		errno = EINVAL;
		return -1;
	}
	memset(p, 0, SDP_REJ_LEN);
	memcpy(p, "IBGW", 4);
	p[4] = REJ_FORMAT;
	p[5] = rej_codes[0].code;
	for (i = 0; i < sizeof(rej_codes) / sizeof(rej_codes[0]); i++)
		if (rej_codes[i].err == err)
			p[5] = rej_codes[i].code;
	return SDP_REJ_LEN;
}

int sdp_rej_parse(const uint8_t *p, size_t len)
{
	size_t i;

	if (len >= SDP_REJ_LEN && !memcmp(p, "IBGW", 4) &&
	    p[4] == REJ_FORMAT)
		for (i = 0; i < sizeof(rej_codes) / sizeof(rej_codes[0]); i++)
			if (rej_codes[i].code == p[5])
				return rej_codes[i].err;
	errno = EINVAL;
	return -1;
}

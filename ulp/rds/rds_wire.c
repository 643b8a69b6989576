// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The RDS/IB codecs (rds_wire.h).  Offsets are named after the kernel's
 * struct rds_header (rds.h) and struct rds_ib_conn_priv_cmn (ib.h).
 *
 * The checksum is the kernel's ip_fast_csum() over the 12 words of the
 * header: the Internet checksum of the 48 bytes with h_csum 0, stored in
 * native order (inet_csum_put), and a header whose h_csum is 0 passes
 * unchecked (rds_message_verify_checksum()).
 */
#include <errno.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "inet/byteorder.h"
#include "inet/csum.h"
#include "ulp/rds/rds_wire.h"

/* rds_header */
#define H_SEQUENCE		0
#define H_ACK			8
#define H_LEN			16
#define H_SPORT			20
#define H_DPORT			22
#define H_FLAGS			24
#define H_CREDIT		25
#define H_PADDING		26	/* 4 bytes */
#define H_CSUM			30
#define H_EXTHDR		32

/* rds_ib_conn_priv_cmn, from the start of the common block */
#define CMN_MAJOR		0
#define CMN_MINOR		1
#define CMN_MINOR_MASK		2
#define CMN_TOS			4
#define CMN_RESERVED		5	/* 3 bytes */
#define CMN_ACK_SEQ		8
#define CMN_CREDIT		16
#define CMN_LEN			20

#define PRIV4_CMN		8	/* after two __be32 */
#define PRIV6_CMN		32	/* after two in6_addr */

static const char *const drop_names[RDS_DROP_MAX] = {
	[RDS_DROP_NONE]		 = "none",
	[RDS_DROP_SHORT]	 = "short",
	[RDS_DROP_LONG]		 = "long",
	[RDS_DROP_BAD_CSUM]	 = "bad_csum",
	[RDS_DROP_BAD_LEN]	 = "bad_len",
	[RDS_DROP_FRAG_MISMATCH] = "frag_mismatch",
	[RDS_DROP_TOO_BIG]	 = "too_big",
};

const char *rds_drop_name(enum rds_drop why)
{
	if ((unsigned)why >= RDS_DROP_MAX)
		return "unknown";
	return drop_names[why];
}

void rds_hdr_put(uint8_t *p, const struct rds_header *h)
{
	be64_put(p + H_SEQUENCE, h->seq);
	be64_put(p + H_ACK, h->ack);
	be32_put(p + H_LEN, h->len);
	be16_put(p + H_SPORT, h->sport);
	be16_put(p + H_DPORT, h->dport);
	p[H_FLAGS] = h->flags;
	p[H_CREDIT] = h->credit;
	memset(p + H_PADDING, 0, 4);
	memset(p + H_CSUM, 0, 2);
	memcpy(p + H_EXTHDR, h->exthdr, RDS_EXTHDR_LEN);
	inet_csum_put(p + H_CSUM,
		      inet_csum_fold(inet_csum_add(0, p, RDS_HDR_LEN)));
}

int rds_hdr_csum_ok(const uint8_t *p)
{
	if (p[H_CSUM] == 0 && p[H_CSUM + 1] == 0)
		return 1;
	return inet_csum_fold(inet_csum_add(0, p, RDS_HDR_LEN)) == 0;
}

enum rds_drop rds_hdr_get(const uint8_t *p, size_t len,
			  struct rds_header *h)
{
	if (len < RDS_HDR_LEN)
		return RDS_DROP_SHORT;
	if (len > RDS_SEND_MAX)
		return RDS_DROP_LONG;
	if (!rds_hdr_csum_ok(p))
		return RDS_DROP_BAD_CSUM;
	h->seq = be64_get(p + H_SEQUENCE);
	h->ack = be64_get(p + H_ACK);
	h->len = be32_get(p + H_LEN);
	h->sport = be16_get(p + H_SPORT);
	h->dport = be16_get(p + H_DPORT);
	h->flags = p[H_FLAGS];
	h->credit = p[H_CREDIT];
	h->csum = be16_get(p + H_CSUM);
	memcpy(h->exthdr, p + H_EXTHDR, RDS_EXTHDR_LEN);
	return RDS_DROP_NONE;
}

void rds_ack_put(uint8_t *p, uint64_t ack)
{
	struct rds_header h;

	memset(&h, 0, sizeof(h));
	h.ack = ack;
	rds_hdr_put(p, &h);
}

int rds_hdr_is_ack(const struct rds_header *h, size_t data_len)
{
	return h->sport == 0 && h->dport == 0 && data_len == 0;
}

enum rds_msg_kind rds_msg_kind(const struct rds_header *h)
{
	if (h->dport == 0)
		return h->sport ? RDS_MSG_PING : RDS_MSG_PING_NULL;
	if (h->sport == 0 && h->dport == RDS_PROBE_PORT)
		return RDS_MSG_HS_PONG;
	return RDS_MSG_DATA;
}

void rds_pong_hdr(struct rds_header *pong, const struct rds_header *ping,
		  uint64_t seq)
{
	memset(pong, 0, sizeof(*pong));
	pong->seq = seq;
	pong->dport = ping->sport;
}

/* --- CM private data ------------------------------------------------------ */

static size_t priv_len(int family)
{
	return family == AF_INET ? RDS_IB_PRIV4_LEN :
	       family == AF_INET6 ? RDS_IB_PRIV6_LEN : 0;
}

static size_t priv_cmn(int family)
{
	return family == AF_INET ? PRIV4_CMN : PRIV6_CMN;
}

int rds_ib_priv_build(uint8_t *p, size_t cap, const struct rds_ib_priv *d)
{
	int family = d->saddr.family;
	size_t len = priv_len(family), alen;
	uint8_t *c;

	if (!len || d->daddr.family != family || cap < len) {
		errno = EINVAL;
		return -1;
	}
	alen = inet_addr_len(family);
	memset(p, 0, len);
	memcpy(p, d->saddr.raw, alen);
	memcpy(p + alen, d->daddr.raw, alen);
	c = p + priv_cmn(family);
	c[CMN_MAJOR] = d->major;
	c[CMN_MINOR] = d->minor;
	be16_put(c + CMN_MINOR_MASK, d->minor_mask);
	c[CMN_TOS] = d->tos;
	be64_put(c + CMN_ACK_SEQ, d->ack_seq);
	be32_put(c + CMN_CREDIT, d->credit);
	return (int)len;
}

int rds_ib_priv_parse(const uint8_t *p, size_t len, int family,
		      struct rds_ib_priv *d)
{
	size_t need = priv_len(family), alen;
	const uint8_t *c;

	if (!need || len < need) {
		errno = EINVAL;
		return -1;
	}
	alen = inet_addr_len(family);
	memset(d, 0, sizeof(*d));
	d->saddr.family = d->daddr.family = family;
	memcpy(d->saddr.raw, p, alen);
	memcpy(d->daddr.raw, p + alen, alen);
	c = p + priv_cmn(family);
	d->major = c[CMN_MAJOR];
	d->minor = c[CMN_MINOR];
	d->minor_mask = be16_get(c + CMN_MINOR_MASK);
	d->tos = c[CMN_TOS];
	d->ack_seq = be64_get(c + CMN_ACK_SEQ);
	d->credit = be32_get(c + CMN_CREDIT);
	return 0;
}

uint16_t rds_ib_version_accept(const uint8_t *p, size_t len, int family)
{
	struct rds_ib_priv d;
	uint16_t common, version;

	if (len == 0 || !priv_len(family))
		return 0;
	if (rds_ib_priv_parse(p, len, family, &d) || d.major == 0)
		return RDS_VERSION_4_0;
	common = d.minor_mask & RDS_IB_MINOR_MASK;
	if (d.major == 4 && common) {
		version = RDS_VERSION_4_0;
		while ((common >>= 1) != 0)
			version++;
		return version;
	}
	if (RDS_VERSION(d.major, d.minor) == RDS_VERSION_3_1)
		return RDS_VERSION_3_1;
	return 0;
}

uint16_t rds_ib_version_confirm(const uint8_t *p, size_t len, int family,
				uint16_t proposed)
{
	struct rds_ib_priv d;
	uint16_t version = proposed;

	if (rds_ib_priv_parse(p, len, family, &d) == 0 && d.major)
		version = RDS_VERSION(d.major, d.minor);
	return version < RDS_VERSION_3_1 ? 0 : version;
}

/* --- congestion map ------------------------------------------------------- */

int rds_cma_hdr_build(uint8_t *p, size_t cap, const struct rds_cma_hdr *h)
{
	int v = h->src.family == AF_INET ? 4 : h->src.family == AF_INET6 ? 6 : 0;

	if (cap < RDS_CMA_HDR_LEN || !v || h->dst.family != h->src.family) {
		errno = EINVAL;
		return -1;
	}
	memset(p, 0, RDS_CMA_HDR_LEN);
	p[0] = RDS_CMA_VERSION;
	p[1] = (uint8_t)(v << 4);
	be16_put(p + 2, h->sport);
	if (v == 4) {
		memcpy(p + 4 + 12, h->src.raw, 4);
		memcpy(p + 20 + 12, h->dst.raw, 4);
	} else {
		memcpy(p + 4, h->src.raw, 16);
		memcpy(p + 20, h->dst.raw, 16);
	}
	return RDS_CMA_HDR_LEN;
}

int rds_cma_hdr_parse(const uint8_t *p, size_t len, struct rds_cma_hdr *h)
{
	int v;

	if (len < RDS_CMA_HDR_LEN || p[0] != RDS_CMA_VERSION) {
		errno = EINVAL;
		return -1;
	}
	v = p[1] >> 4;
	if (v != 4 && v != 6) {
		errno = EINVAL;
		return -1;
	}
	memset(h, 0, sizeof(*h));
	h->sport = be16_get(p + 2);
	h->src.family = h->dst.family = v == 4 ? AF_INET : AF_INET6;
	if (v == 4) {
		memcpy(h->src.raw, p + 4 + 12, 4);
		memcpy(h->dst.raw, p + 20 + 12, 4);
	} else {
		memcpy(h->src.raw, p + 4, 16);
		memcpy(h->dst.raw, p + 20, 16);
	}
	return 0;
}

void rds_cong_set(struct rds_cong_map *m, uint16_t port)
{
	m->bits[port / 8] |= (uint8_t)(1u << (port % 8));
}

void rds_cong_clear(struct rds_cong_map *m, uint16_t port)
{
	m->bits[port / 8] &= (uint8_t)~(1u << (port % 8));
}

int rds_cong_test(const struct rds_cong_map *m, uint16_t port)
{
	return (m->bits[port / 8] >> (port % 8)) & 1;
}

void rds_cong_hdr(struct rds_header *h, uint64_t ack)
{
	memset(h, 0, sizeof(*h));
	h->ack = ack;
	h->len = RDS_CONG_MAP_BYTES;
	h->flags = RDS_FLAG_CONG_BITMAP;
}

int rds_hdr_is_cong(const struct rds_header *h)
{
	return h->flags == RDS_FLAG_CONG_BITMAP;
}

int rds_cong_update(struct rds_cong_map *m, const uint8_t *bits)
{
	uint8_t freed = 0;
	size_t i;

	for (i = 0; i < RDS_CONG_MAP_BYTES; i++) {
		freed |= (uint8_t)(m->bits[i] & ~bits[i]);
		m->bits[i] = bits[i];
	}
	return freed != 0;
}

bool rds_addr_loopback(const struct inet_addr *a)
{
	if (a->family == AF_INET)
		return a->raw[0] == 127;
	return a->family == AF_INET6 && IN6_IS_ADDR_LOOPBACK(&a->v6);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * TCP segmentation and coalescing for TUN/TAP with virtio-net headers
 * (see gso.h).  The rules follow what Linux does for its own devices:
 * TSO cuts at gso_size, increments the IPv4 ID per segment, keeps FIN and
 * PSH for the last segment and CWR for the first; GRO merges only
 * in-order segments of one connection that carry nothing but ACK (PSH ends
 * a train), with identical IP fields, ACK number, window and options, and
 * a train ends at a segment shorter than the first.
 */
#include <string.h>

#include "inet/byteorder.h"
#include "inet/csum.h"
#include "inet/gso.h"

#define TCP_FIN		0x01
#define TCP_SYN		0x02
#define TCP_RST		0x04
#define TCP_PSH		0x08
#define TCP_ACK		0x10
#define TCP_URG		0x20
#define TCP_ECE		0x40
#define TCP_CWR		0x80
#define IPPROTO_TCP_	6

const char *gso_strerror(enum gso_err e)
{
	switch (e) {
	case GSO_OK:
		return "ok";
	case GSO_BAD_HEADER:
		return "inconsistent virtio-net header";
	case GSO_BAD_PACKET:
		return "IP/TCP headers do not parse";
	case GSO_UNSUPPORTED:
		return "unsupported GSO type";
	}
	return "?";
}

void gso_hdr_get(struct gso_vnet_hdr *h, const uint8_t *p)
{
	h->flags = p[0];
	h->gso_type = p[1];
	memcpy(&h->hdr_len, p + 2, 2);
	memcpy(&h->gso_size, p + 4, 2);
	memcpy(&h->csum_start, p + 6, 2);
	memcpy(&h->csum_offset, p + 8, 2);
}

void gso_hdr_put(uint8_t *p, const struct gso_vnet_hdr *h)
{
	p[0] = h->flags;
	p[1] = h->gso_type;
	memcpy(p + 2, &h->hdr_len, 2);
	memcpy(p + 4, &h->gso_size, 2);
	memcpy(p + 6, &h->csum_start, 2);
	memcpy(p + 8, &h->csum_offset, 2);
}

/* The TCP pseudo-header's sum for a segment of tcp_len bytes. */
static uint64_t pseudo_sum(const uint8_t *ip, int v6, size_t tcp_len)
{
	if (v6)
		return inet_csum_pseudo6(ip + 8, ip + 24, IPPROTO_TCP_,
					 tcp_len);
	return inet_csum_pseudo4(ip + 12, ip + 16, IPPROTO_TCP_, tcp_len);
}

static void ipv4_fix(uint8_t *ip, size_t tot_len)
{
	uint16_t c;

	be16_put(ip + 2, (uint16_t)tot_len);
	ip[10] = ip[11] = 0;
	c = inet_csum_fold(inet_csum_add(0, ip, (size_t)(ip[0] & 0x0f) * 4));
	inet_csum_put(ip + 10, c);
}

/* IP and TCP header lengths of a TCP packet, or -1. */
static int tcp_headers(const uint8_t *pkt, size_t len, int *v6, size_t *iphl,
		       size_t *hlen)
{
	size_t thl;

	if (len < 20)
		return -1;
	if (pkt[0] >> 4 == 4) {
		*v6 = 0;
		*iphl = (size_t)(pkt[0] & 0x0f) * 4;
		if (*iphl < 20 || pkt[9] != IPPROTO_TCP_ ||
		    be16_get(pkt + 2) != len)
			return -1;
	} else if (pkt[0] >> 4 == 6) {
		*v6 = 1;
		*iphl = 40;
		if (len < 40 || pkt[6] != IPPROTO_TCP_ ||
		    (size_t)be16_get(pkt + 4) + 40 != len)
			return -1;
	} else {
		return -1;
	}
	if (*iphl + 20 > len)
		return -1;
	thl = (size_t)(pkt[*iphl + 12] >> 4) * 4;
	if (thl < 20 || *iphl + thl > len)
		return -1;
	*hlen = *iphl + thl;
	return 0;
}

enum gso_err gso_segment(const struct gso_vnet_hdr *h, uint8_t *pkt,
			 size_t len, gso_emit_fn emit, void *arg)
{
	uint8_t hdr[60 + 60], *seg, *tcp, fl;
	size_t iphl, hlen, payload, off, n, tcp_len;
	uint32_t seq0;
	uint16_t id0, c;
	unsigned int i;
	int v6;

	if (!len || len > GSO_MAX_PKT)
		return GSO_BAD_PACKET;
	if ((h->gso_type & ~GSO_TYPE_ECN) == GSO_TYPE_NONE) {
		if (h->gso_type & GSO_TYPE_ECN)
			return GSO_BAD_HEADER;
		if (h->flags & GSO_F_NEEDS_CSUM) {
			off = (size_t)h->csum_start + h->csum_offset;
			if (h->csum_start >= len || off + 2 > len)
				return GSO_BAD_HEADER;
			c = inet_csum_fold(inet_csum_add(0, pkt + h->csum_start,
						       len - h->csum_start));
			if (!c)
				c = 0xffff;	/* 0 means "none" in UDP */
			inet_csum_put(pkt + off, c);
		}
		emit(arg, pkt, len);
		return GSO_OK;
	}
	if (h->gso_type != GSO_TYPE_TCPV4 && h->gso_type != GSO_TYPE_TCPV6)
		return GSO_UNSUPPORTED;	/* UDP, ECN: not offered */
	if (tcp_headers(pkt, len, &v6, &iphl, &hlen) < 0 ||
	    v6 != (h->gso_type == GSO_TYPE_TCPV6))
		return GSO_BAD_PACKET;
	if (!h->gso_size || hlen + h->gso_size > GSO_MAX_PKT)
		return GSO_BAD_HEADER;
	memcpy(hdr, pkt, hlen);
	payload = len - hlen;
	seq0 = be32_get(hdr + iphl + 4);
	id0 = be16_get(hdr + 4);
	off = 0;
	i = 0;
	do {
		n = payload - off < h->gso_size ? payload - off : h->gso_size;
		/* the headers go just before this segment's payload, over
		 * the tail of the segment already emitted */
		seg = pkt + off;
		memcpy(seg, hdr, hlen);
		tcp = seg + iphl;
		tcp_len = hlen - iphl + n;
		be32_put(tcp + 4, seq0 + (uint32_t)off);
		fl = hdr[iphl + 13];
		if (off + n < payload)
			fl &= (uint8_t)~(TCP_FIN | TCP_PSH);
		if (off)
			fl &= (uint8_t)~TCP_CWR;
		tcp[13] = fl;
		if (v6) {
			be16_put(seg + 4, (uint16_t)tcp_len);
		} else {
			be16_put(seg + 4, (uint16_t)(id0 + i));
			ipv4_fix(seg, hlen + n);
		}
		tcp[16] = tcp[17] = 0;
		c = inet_csum_fold(inet_csum_add(pseudo_sum(seg, v6, tcp_len),
					       tcp, tcp_len));
		inet_csum_put(tcp + 16, c);
		emit(arg, seg, hlen + n);
		off += n;
		i++;
	} while (off < payload);
	return GSO_OK;
}

/* ---- coalescing ---------------------------------------------------------- */

struct seg {
	int v6;
	size_t iphl, hlen, payload;
	uint32_t seq;
	uint8_t flags;
};

/* A segment that may join a train: plain IP (no IPv4 options or
 * fragments, no IPv6 extension headers), TCP with data and only ACK/PSH,
 * a correct IPv4 header checksum (the TCP checksum is checked by gro_take
 * as the payload is copied).  0 yes, -1 no (pass it on as it is), -2 bad
 * checksum. */
static int gro_candidate(const uint8_t *pkt, size_t len, struct seg *s)
{
	if (tcp_headers(pkt, len, &s->v6, &s->iphl, &s->hlen) < 0)
		return -1;
	if (!s->v6 && (s->iphl != 20 || (be16_get(pkt + 6) & 0x3fff)))
		return -1;
	s->payload = len - s->hlen;
	s->flags = pkt[s->iphl + 13];
	if (!s->payload || !(s->flags & TCP_ACK) ||
	    (s->flags & (TCP_FIN | TCP_SYN | TCP_RST | TCP_URG | TCP_ECE |
			 TCP_CWR)))
		return -1;
	s->seq = be32_get(pkt + s->iphl + 4);
	if (!s->v6 && inet_csum_fold(inet_csum_add(0, pkt, 20)) != 0)
		return -2;
	return 0;
}

/* Copy the segment's payload to dst, checking its TCP checksum on the
 * way: 0 good, -2 bad. */
static int gro_take(const uint8_t *pkt, const struct seg *s, uint8_t *dst)
{
	uint64_t sum;

	sum = pseudo_sum(pkt, s->v6, s->hlen - s->iphl + s->payload);
	sum = inet_csum_add(sum, pkt + s->iphl, s->hlen - s->iphl);
	sum = inet_csum_copy(sum, dst, pkt + s->hlen, s->payload);
	return inet_csum_fold(sum) ? -2 : 0;
}

/* Does the segment continue the pending train? */
static int gro_match(const struct gso_gro *g, const uint8_t *pkt,
		     const struct seg *s)
{
	const uint8_t *p = g->pkt;

	if (s->v6 != g->v6 || s->hlen != g->hlen || s->seq != g->next_seq ||
	    s->payload > g->mss || g->len + s->payload > GSO_MAX_PKT)
		return 0;
	if (s->v6) {
		/* version, class, flow label; addresses; hop limit */
		if (memcmp(p, pkt, 4) || memcmp(p + 8, pkt + 8, 32) ||
		    p[7] != pkt[7])
			return 0;
	} else {
		/* TOS, DF, TTL, protocol, addresses */
		if (p[1] != pkt[1] || p[6] != pkt[6] || p[8] != pkt[8] ||
		    memcmp(p + 12, pkt + 12, 8))
			return 0;
	}
	p += s->iphl;
	pkt += s->iphl;
	/* ports; ACK number; data offset, window; options */
	return !memcmp(p, pkt, 4) && !memcmp(p + 8, pkt + 8, 5) &&
	       !memcmp(p + 14, pkt + 14, 2) &&
	       !memcmp(p + 20, pkt + 20, s->hlen - s->iphl - 20);
}

static const struct gso_vnet_hdr no_offload;

void gso_gro_flush(struct gso_gro *g, gso_out_fn out, void *arg)
{
	struct gso_vnet_hdr h;
	size_t iphl = g->v6 ? 40 : 20;
	uint16_t c;

	if (!g->len)
		return;
	if (g->segs == 1) {
		out(arg, &no_offload, g->pkt, g->len);
		g->len = 0;
		return;
	}
	if (g->v6)
		be16_put(g->pkt + 4, (uint16_t)(g->len - 40));
	else
		ipv4_fix(g->pkt, g->len);
	/* a partial checksum: the pseudo-header's sum, as a NIC that
	 * checked every segment hands it up (CHECKSUM_PARTIAL counts as
	 * verified in the kernel) */
	c = (uint16_t)~inet_csum_fold(pseudo_sum(g->pkt, g->v6,
						g->len - iphl));
	inet_csum_put(g->pkt + iphl + 16, c);
	memset(&h, 0, sizeof(h));
	h.flags = GSO_F_NEEDS_CSUM;
	h.gso_type = g->v6 ? GSO_TYPE_TCPV6 : GSO_TYPE_TCPV4;
	h.hdr_len = (uint16_t)g->hlen;
	h.gso_size = g->mss;
	h.csum_start = (uint16_t)iphl;
	h.csum_offset = 16;
	g->merged += g->segs;
	out(arg, &h, g->pkt, g->len);
	g->len = 0;
}

void gso_gro_receive(struct gso_gro *g, const uint8_t *pkt, size_t len,
		     gso_out_fn out, void *arg)
{
	struct seg s;
	int r;

	r = gro_candidate(pkt, len, &s);
	if (r == 0 && g->len && gro_match(g, pkt, &s)) {
		if (gro_take(pkt, &s, g->pkt + g->len) < 0) {
			gso_gro_flush(g, out, arg);
			g->bad_csum++;
			out(arg, &no_offload, pkt, len);
			return;
		}
		g->len += s.payload;
		g->next_seq += (uint32_t)s.payload;
		g->segs++;
		g->pkt[s.iphl + 13] |= s.flags & TCP_PSH;
		if ((s.flags & TCP_PSH) || s.payload < g->mss)
			gso_gro_flush(g, out, arg);
		return;
	}
	gso_gro_flush(g, out, arg);
	if (r == -2)
		g->bad_csum++;
	/* one that no segment of its size could join (a connected-mode
	 * frame of 64 KB, one TCP segment) goes on as it is, not copied to
	 * start a train of one: the kernel checks its checksum itself */
	if (r < 0 || (s.flags & TCP_PSH) || len > sizeof(g->pkt) ||
	    len + s.payload > GSO_MAX_PKT) {
		out(arg, &no_offload, pkt, len);
		return;
	}
	/* the first of a train: its checksum too is checked here, since
	 * the merged packet's will be taken on trust by the kernel */
	if (gro_take(pkt, &s, g->pkt + s.hlen) < 0) {
		g->bad_csum++;
		out(arg, &no_offload, pkt, len);
		return;
	}
	memcpy(g->pkt, pkt, s.hlen);
	g->len = len;
	g->hlen = s.hlen;
	g->v6 = s.v6;
	g->segs = 1;
	g->mss = (uint16_t)s.payload;
	g->next_seq = s.seq + (uint32_t)s.payload;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer: what a TUN device with a virtio-net header hands to ipoibd
 * (byte 0 even: a 10-byte header and a packet for gso_segment) and what
 * the wire hands to the coalescer (byte 0 odd: packets, each behind a
 * 16-bit length, for gso_gro_receive).  Nothing may read or write out of
 * bounds; every segment cut from a TCP super-packet and every merged
 * super-packet must carry a checksum that verifies, and no segment may be
 * lost or made up by the coalescer.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "inet/gso.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c) do { if (!(c)) __builtin_trap(); } while (0)

/* RFC 1071 over big-endian words, kept apart from the code under test */
static uint32_t fz_sum(const uint8_t *p, size_t n, uint32_t s)
{
	size_t i;

	for (i = 0; i < n; i++)
		s += (i & 1) ? p[i] : (uint32_t)p[i] << 8;
	while (s > 0xffff)
		s = (s & 0xffff) + (s >> 16);
	return s;
}

static int tcp_csum_ok(const uint8_t *ip, size_t len)
{
	size_t iphl = ip[0] >> 4 == 6 ? 40 : (size_t)(ip[0] & 15) * 4;
	uint32_t s = ip[0] >> 4 == 6 ? fz_sum(ip + 8, 32, 0) :
				      fz_sum(ip + 12, 8, 0);

	s += 6 + (uint32_t)(len - iphl);
	return fz_sum(ip + iphl, len - iphl, s) == 0xffff;
}

static uint8_t pkt[GSO_MAX_PKT + 16];
static struct gso_gro gro;
static size_t in_len, n_emitted, n_out, n_segs_out;
static int tso;
static uint16_t mss;

static void emit(void *arg, const uint8_t *p, size_t len)
{
	(void)arg;
	CHECK(p >= pkt && p + len <= pkt + in_len);
	n_emitted++;
	if (tso) {
		size_t iphl = p[0] >> 4 == 6 ? 40 : (size_t)(p[0] & 15) * 4;
		size_t hlen = iphl + (size_t)(p[iphl + 12] >> 4) * 4;

		CHECK(len >= hlen && len - hlen <= mss);
		CHECK(tcp_csum_ok(p, len));
	}
}

static void out(void *arg, const struct gso_vnet_hdr *h, const uint8_t *p,
		size_t len)
{
	static uint8_t tmp[GSO_MAX_PKT];
	uint32_t s;
	size_t iphl;

	(void)arg;
	CHECK(len <= GSO_MAX_PKT);
	n_out++;
	if (h->gso_type == GSO_TYPE_NONE) {
		CHECK(h->flags == 0);
		n_segs_out++;
		return;
	}
	CHECK(h->flags == GSO_F_NEEDS_CSUM && h->gso_size > 0);
	CHECK(h->hdr_len < len && h->csum_start + h->csum_offset + 2u <= len);
	/* at least two segments: more payload than one MSS */
	CHECK(len - h->hdr_len > h->gso_size);
	n_segs_out += (len - h->hdr_len + h->gso_size - 1) / h->gso_size;
	/* complete the partial checksum as a device would; it must verify */
	memcpy(tmp, p, len);
	iphl = h->csum_start;
	s = fz_sum(tmp + iphl, len - iphl, 0);
	s = ~s & 0xffff;
	tmp[iphl + 16] = (uint8_t)(s >> 8);
	tmp[iphl + 17] = (uint8_t)s;
	CHECK(tcp_csum_ok(tmp, len));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gso_vnet_hdr h;
	size_t off, n, segs_in = 0;

	if (size < 1)
		return 0;
	if (!(data[0] & 1)) {
		if (size < 1 + GSO_VNET_HDR_LEN)
			return 0;
		gso_hdr_get(&h, data + 1);
		in_len = size - 1 - GSO_VNET_HDR_LEN;
		if (in_len > GSO_MAX_PKT)
			return 0;
		memcpy(pkt, data + 1 + GSO_VNET_HDR_LEN, in_len);
		tso = h.gso_type != GSO_TYPE_NONE;
		mss = h.gso_size;
		n_emitted = 0;
		if (gso_segment(&h, pkt, in_len, emit, NULL) == GSO_OK)
			CHECK(n_emitted >= 1);
		else
			CHECK(n_emitted == 0);
		return 0;
	}
	memset(&gro, 0, sizeof(gro));
	n_out = n_segs_out = 0;
	for (off = 1; off + 2 <= size; off += n) {
		n = (size_t)data[off] << 8 | data[off + 1];
		off += 2;
		if (n > size - off)
			n = size - off;
		memcpy(pkt, data + off, n);
		gso_gro_receive(&gro, pkt, n, out, NULL);
		segs_in++;
	}
	gso_gro_flush(&gro, out, NULL);
	/* every segment went up, merged or not; none was made up */
	CHECK(n_segs_out == segs_in);
	CHECK(gro.len == 0);
	return 0;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer: SDP's BSDH, Hello, HelloAck and REJ private data parsers
 * must refuse, never misread.  Byte 0 picks the parser (0 BSDH, 1 Hello,
 * 2 HelloAck, 3 REJ, else all four), the rest is the message or private
 * data.  What parses rebuilds and parses back to the same fields; a BSDH rebuilds to the
 * very bytes.  ASan catches any read past the input.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

#include "ulp/sdp/sdp_wire.h"

#define check(c)	do { if (!(c)) __builtin_trap(); } while (0)

static void bsdh(const uint8_t *p, size_t len)
{
	struct sdp_bsdh h;
	uint8_t out[SDP_BSDH_LEN];

	if (sdp_bsdh_get(p, len, &h)) {
		check(errno == EINVAL);
		return;
	}
	check(len >= SDP_BSDH_LEN && h.len == len);
	sdp_bsdh_put(out, &h);
	check(memcmp(out, p, SDP_BSDH_LEN) == 0);
	check(sdp_mid_name(h.mid) != NULL);
}

static void hello(const uint8_t *p, size_t len)
{
	uint8_t out[SDP_HELLO_LEN];
	struct sdp_hello h, d;

	if (sdp_hello_parse(p, len, &h)) {
		check(errno == EINVAL);
		return;
	}
	check(len >= SDP_HELLO_FIELDS_LEN && h.bsdh.mid == SDP_MID_HELLO);
	check(h.ipv == 4 || h.ipv == 6);
	check(h.max_adverts && h.caps <= 0xf);
	check(h.localrcvsz > SDP_BSDH_LEN && h.localrcvsz <= SDP_MAX_RCVSZ);
	check(h.src.family == (h.ipv == 4 ? AF_INET : AF_INET6));
	check(sdp_hello_build(out, sizeof(out), &h) == SDP_HELLO_LEN);
	check(sdp_hello_parse(out, sizeof(out), &d) == 0);
	check(d.bsdh.bufs == h.bsdh.bufs && d.bsdh.mseq == h.bsdh.mseq &&
	      d.bsdh.mseq_ack == h.bsdh.mseq_ack &&
	      d.bsdh.flags == h.bsdh.flags && d.bsdh.len == SDP_HELLO_LEN);
	check(d.majv_minv == h.majv_minv && d.ipv == h.ipv &&
	      d.caps == h.caps && d.max_adverts == h.max_adverts &&
	      d.desremrcvsz == h.desremrcvsz &&
	      d.localrcvsz == h.localrcvsz && d.port == h.port);
	check(inet_addr_equal(&d.src, &h.src) &&
	      inet_addr_equal(&d.dst, &h.dst));
	/* the defined fields come back as they came (not the reserved
	 * bytes 18 and 30-31, nor the 12 an IPv4 address leaves) */
	check(out[16] == p[16] && out[17] == p[17]);
	check(memcmp(out + 19, p + 19, 11) == 0);
}

static void hello_ack(const uint8_t *p, size_t len)
{
	uint8_t out[SDP_HELLO_ACK_LEN];
	struct sdp_hello_ack h, d;

	if (sdp_hello_ack_parse(p, len, &h)) {
		check(errno == EINVAL);
		return;
	}
	check(len >= SDP_HELLO_ACK_FIELDS_LEN);
	check(h.bsdh.mid == SDP_MID_HELLO_ACK);
	check(h.actrcvsz > SDP_BSDH_LEN && h.actrcvsz <= SDP_MAX_RCVSZ);
	check(sdp_hello_ack_build(out, sizeof(out), &h) ==
	      SDP_HELLO_ACK_LEN);
	check(sdp_hello_ack_parse(out, sizeof(out), &d) == 0);
	check(d.majv_minv == h.majv_minv && d.ipv == h.ipv &&
	      d.caps == h.caps && d.ext_max_adverts == h.ext_max_adverts &&
	      d.actrcvsz == h.actrcvsz && d.bsdh.bufs == h.bsdh.bufs);
	check(out[16] == p[16] && out[17] == p[17]);	/* not rsvd 18 */
	check(memcmp(out + 19, p + 19, 5) == 0);
}

static void rej(const uint8_t *p, size_t len)
{
	uint8_t out[SDP_REJ_LEN];
	int e = sdp_rej_parse(p, len);

	if (e < 0) {
		check(errno == EINVAL);
		return;
	}
	check(len >= SDP_REJ_LEN && e > 0);
	check(sdp_rej_build(out, sizeof(out), e) == SDP_REJ_LEN);
	check(memcmp(out, p, 6) == 0 && sdp_rej_parse(out, sizeof(out)) == e);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *p;
	size_t len;

	if (size < 1)
		return 0;
	/* libFuzzer's buffer ends at data + size: ASan sees any overread */
	len = size - 1;
	p = data + 1;
	switch (data[0]) {
	case 0:
		bsdh(p, len);
		break;
	case 1:
		hello(p, len);
		break;
	case 2:
		hello_ack(p, len);
		break;
	case 3:
		rej(p, len);
		break;
	default:
		bsdh(p, len);
		hello(p, len);
		hello_ack(p, len);
		rej(p, len);
	}
	return 0;
}

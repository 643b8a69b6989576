// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* IPv4 fragmentation (see frag.h). */
#include <string.h>

#include "inet/byteorder.h"
#include "inet/csum.h"
#include "inet/frag.h"
#include "inet/ip.h"

/*
 * The options later fragments carry: those with the copy bit (RFC 791
 * 3.1), padded to a 4-byte boundary with end-of-options.  Returns their
 * length, or -1 for options that do not parse.
 */
static int frag_copied_options(const uint8_t *pkt, size_t ihl,
			       uint8_t opts[40])
{
	size_t o, olen = 0;
	uint8_t t, l;

	for (o = INET_IPV4_HDR_LEN; o < ihl;) {
		t = pkt[o];
		if (t == 0)
			break;
		if (t == 1) {
			o++;
			continue;
		}
		if (o + 1 >= ihl || (l = pkt[o + 1]) < 2 || o + l > ihl)
			return -1;
		if (t & 0x80) {
			memcpy(opts + olen, pkt + o, l);
			olen += l;
		}
		o += l;
	}
	while (olen & 3)
		opts[olen++] = 0;
	return (int)olen;
}

int inet_frag_ipv4(const uint8_t *pkt, size_t len, unsigned int mtu,
		   inet_frag_emit_fn emit, void *arg)
{
	uint8_t f[65536], opts[40];
	size_t ihl, olen, off, data, unit, hl, n;
	uint16_t frag;
	int count = 0, r;

	if (len < INET_IPV4_HDR_LEN || pkt[0] >> 4 != 4)
		return -1;
	ihl = (size_t)(pkt[0] & 0x0f) * 4;
	if (ihl < INET_IPV4_HDR_LEN || ihl > len || be16_get(pkt + 2) != len)
		return -1;
	frag = be16_get(pkt + 6);
	if (frag & INET_IPV4_DF)
		return -1;			/* DF: not ours to cut */
	r = frag_copied_options(pkt, ihl, opts);
	if (r < 0)
		return -1;
	olen = (size_t)r;
	/* the later fragments' header is the larger one only if the first
	 * has none of the options: check the smallest unit fits both */
	if (mtu <= ihl + 8 || mtu <= INET_IPV4_HDR_LEN + olen + 8)
		return -1;
	data = len - ihl;
	for (off = 0; off < data; off += n) {
		hl = off ? INET_IPV4_HDR_LEN + olen : ihl;
		unit = ((mtu - hl) / 8) * 8;
		n = data - off > unit ? unit : data - off;
		if (off) {
			memcpy(f, pkt, INET_IPV4_HDR_LEN);
			memcpy(f + INET_IPV4_HDR_LEN, opts, olen);
			f[0] = (uint8_t)(0x40 | (hl / 4));
		} else {
			memcpy(f, pkt, ihl);
		}
		memcpy(f + hl, pkt + ihl + off, n);
		be16_put(f + 2, (uint16_t)(hl + n));
		/* offsets add to those of a packet already a fragment */
		be16_put(f + 6, (uint16_t)(((frag & INET_IPV4_OFFSET) +
					    off / 8) |
					   ((off + n < data) ? INET_IPV4_MF :
					    (frag & INET_IPV4_MF))));
		f[10] = f[11] = 0;
		inet_csum_put(f + 10, inet_csum_fold(inet_csum_add(0, f, hl)));
		emit(arg, f, hl + n);
		count++;
	}
	return count;
}

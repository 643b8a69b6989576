// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* TCP MSS clamping (see tcp_mss.h). */
#include <string.h>

#include "inet/byteorder.h"
#include "inet/csum.h"
#include "inet/tcp_mss.h"

int tcp_mss_clamp(uint8_t *pkt, size_t len, unsigned int mtu)
{
	size_t iphl, thl, o;
	uint8_t *tcp;
	int v6;

	if (len < 20)
		return 0;
	if (pkt[0] >> 4 == 4) {
		v6 = 0;
		iphl = (size_t)(pkt[0] & 0x0f) * 4;
		/* TCP, not a fragment other than the first */
		if (iphl < 20 || pkt[9] != 6 || (be16_get(pkt + 6) & 0x1fff))
			return 0;
	} else if (pkt[0] >> 4 == 6) {
		v6 = 1;
		iphl = 40;
		if (len < 40 || pkt[6] != 6)	/* no extension headers */
			return 0;
	} else {
		return 0;
	}
	if (len < iphl + 20)
		return 0;
	tcp = pkt + iphl;
	if (!(tcp[13] & 0x02))			/* SYN */
		return 0;
	thl = (size_t)(tcp[12] >> 4) * 4;
	if (thl < 20 || iphl + thl > len)
		return 0;
	for (o = 20; o < thl;) {
		uint8_t kind = tcp[o], olen;

		if (kind == 0)			/* end of options */
			break;
		if (kind == 1) {		/* NOP */
			o++;
			continue;
		}
		if (o + 1 >= thl)
			return 0;
		olen = tcp[o + 1];
		if (olen < 2 || o + olen > thl)
			return 0;
		if (kind == 2 && olen == 4) {
			uint16_t cur = be16_get(tcp + o + 2);
			uint16_t want = tcp_mss_for_mtu(mtu, v6);
			uint16_t c = be16_get(tcp + 16);

			if (cur <= want)
				return 0;
			be16_put(tcp + o + 2, want);
			/* the option starts at an even offset or not: the
			 * sum sees the two bytes in the word they sit in */
			if (!(o & 1)) {
				c = inet_csum_replace16(c, cur, want);
			} else {
				uint8_t l = tcp[o + 1], n = tcp[o + 4];

				c = inet_csum_replace16(c,
					(uint16_t)(l << 8 | cur >> 8),
					(uint16_t)(l << 8 | want >> 8));
				c = inet_csum_replace16(c,
					(uint16_t)((cur & 0xff) << 8 | n),
					(uint16_t)((want & 0xff) << 8 | n));
			}
			be16_put(tcp + 16, c);
			return 1;
		}
		o += olen;
	}
	return 0;
}

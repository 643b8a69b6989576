// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ICRC and VCRC (IBTA vol. 1, 7.8).
 *
 * ICRC: CRC-32 as zlib computes it (reflected 0x04C11DB7, seed and final
 * XOR all ones) over the packet with the variant fields set to ones, written
 * least significant byte first.  Variant fields: the VL nibble of the LRH
 * (the whole LRH when a GRH follows, since routers rewrite it), the GRH
 * TClass, FlowLabel and HopLmt, and BTH byte 4 (FECN/BECN and reserved).
 * RoCEv2 uses the same recipe with eight 0xFF bytes in place of the LRH.
 * These rules were checked against hardware captures (a ConnectX-4 Lx RoCEv2
 * CNP in scapy's RoCE tests and native IB frames with and without GRH).
 *
 * VCRC: CRC-16, polynomial 0x100B, reflected, seed 0xFFFF, final XOR 0xFFFF,
 * over LRH .. ICRC, written least significant byte first.
 */
#include <string.h>

#include "fabric/ib_pkt.h"

/*
 * Table-driven, eight bytes a step ("slicing-by-8": table k gives the CRC
 * of a byte followed by k zero bytes), since every packet is checked or
 * sealed several times on its way through the soft fabric.
 */
static uint32_t crc32_table[8][256];
static uint16_t crc16_table[8][256];

static void crc_tables_init(void)
{
	static int done;
	uint32_t c;
	uint16_t s;
	int i, k;

	if (done)
		return;
	for (i = 0; i < 256; i++) {
		c = (uint32_t)i;
		for (k = 0; k < 8; k++)
			c = (c & 1) ? (c >> 1) ^ 0xEDB88320u : c >> 1;
		crc32_table[0][i] = c;
		s = (uint16_t)i;
		for (k = 0; k < 8; k++)
			s = (s & 1) ? (uint16_t)((s >> 1) ^ 0xD008u) : s >> 1;
		crc16_table[0][i] = s;
	}
	for (i = 0; i < 256; i++) {
		for (k = 1; k < 8; k++) {
			c = crc32_table[k - 1][i];
			crc32_table[k][i] = (c >> 8) ^ crc32_table[0][c & 0xff];
			s = crc16_table[k - 1][i];
			crc16_table[k][i] = (uint16_t)((s >> 8) ^
						       crc16_table[0][s & 0xff]);
		}
	}
	done = 1;
}

/* Running CRC-32: pass 0 to start, like zlib's crc32(). */
uint32_t ib_crc32(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	crc_tables_init();
	crc = ~crc;
	while (len >= 8) {
		uint32_t lo = crc ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 |
				     (uint32_t)p[2] << 16 |
				     (uint32_t)p[3] << 24);

		crc = crc32_table[7][lo & 0xff] ^
		      crc32_table[6][(lo >> 8) & 0xff] ^
		      crc32_table[5][(lo >> 16) & 0xff] ^
		      crc32_table[4][lo >> 24] ^
		      crc32_table[3][p[4]] ^ crc32_table[2][p[5]] ^
		      crc32_table[1][p[6]] ^ crc32_table[0][p[7]];
		p += 8;
		len -= 8;
	}
	while (len--)
		crc = crc32_table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}

static uint32_t crc32_ones(uint32_t crc, size_t n)
{
	static const uint8_t ones[8] = { 0xff, 0xff, 0xff, 0xff,
					 0xff, 0xff, 0xff, 0xff };

	while (n > 0) {
		size_t k = n < sizeof(ones) ? n : sizeof(ones);

		crc = ib_crc32(crc, ones, k);
		n -= k;
	}
	return crc;
}

/* CRC over the BTH and what follows, with BTH byte 4 masked. */
static uint32_t icrc_from_bth(uint32_t crc, const uint8_t *bth, size_t len)
{
	uint8_t b[IB_BTH_LEN];

	if (len < IB_BTH_LEN)
		return ib_crc32(crc, bth, len);
	memcpy(b, bth, IB_BTH_LEN);
	b[4] = 0xff;
	crc = ib_crc32(crc, b, IB_BTH_LEN);
	return ib_crc32(crc, bth + IB_BTH_LEN, len - IB_BTH_LEN);
}

static uint32_t icrc_grh(uint32_t crc, const uint8_t *grh)
{
	uint8_t g[IB_GRH_LEN];

	memcpy(g, grh, IB_GRH_LEN);
	g[0] |= 0x0f;			/* TClass high nibble */
	g[1] = g[2] = g[3] = 0xff;	/* TClass low nibble, FlowLabel */
	g[7] = 0xff;			/* HopLmt */
	return ib_crc32(crc, g, IB_GRH_LEN);
}

uint32_t ib_icrc_native(const uint8_t *buf, size_t len)
{
	uint8_t lrh[IB_LRH_LEN];
	uint32_t crc;

	if (len < IB_LRH_LEN)
		return ib_crc32(0, buf, len);
	if ((buf[1] & 0x3) == IB_LNH_IBA_GLOBAL && len >= IB_LRH_LEN + IB_GRH_LEN) {
		crc = crc32_ones(0, IB_LRH_LEN);
		crc = icrc_grh(crc, buf + IB_LRH_LEN);
		return icrc_from_bth(crc, buf + IB_LRH_LEN + IB_GRH_LEN,
				     len - IB_LRH_LEN - IB_GRH_LEN);
	}
	memcpy(lrh, buf, IB_LRH_LEN);
	lrh[0] |= 0xf0;			/* VL */
	crc = ib_crc32(0, lrh, IB_LRH_LEN);
	return icrc_from_bth(crc, buf + IB_LRH_LEN, len - IB_LRH_LEN);
}

/* RoCEv2 over IPv4: buf starts at the IPv4 header (IHL honoured). */
uint32_t ib_icrc_rocev2_ipv4(const uint8_t *buf, size_t len)
{
	uint8_t ip[60], udp[8];
	size_t ihl;
	uint32_t crc;

	if (len < 20)
		return 0;
	ihl = (size_t)(buf[0] & 0x0f) * 4;
	if (ihl < 20 || len < ihl + 8)
		return 0;
	memcpy(ip, buf, ihl);
	ip[1] = 0xff;			/* TOS */
	ip[8] = 0xff;			/* TTL */
	ip[10] = ip[11] = 0xff;		/* header checksum */
	memcpy(udp, buf + ihl, 8);
	udp[6] = udp[7] = 0xff;		/* UDP checksum */
	crc = crc32_ones(0, IB_LRH_LEN);
	crc = ib_crc32(crc, ip, ihl);
	crc = ib_crc32(crc, udp, 8);
	return icrc_from_bth(crc, buf + ihl + 8, len - ihl - 8);
}

uint16_t ib_vcrc(const uint8_t *buf, size_t len)
{
	uint16_t crc = 0xffff;

	crc_tables_init();
	while (len >= 8) {
		uint16_t x = (uint16_t)(crc ^ (buf[0] | buf[1] << 8));

		crc = (uint16_t)(crc16_table[7][x & 0xff] ^
				 crc16_table[6][x >> 8] ^
				 crc16_table[5][buf[2]] ^ crc16_table[4][buf[3]] ^
				 crc16_table[3][buf[4]] ^ crc16_table[2][buf[5]] ^
				 crc16_table[1][buf[6]] ^ crc16_table[0][buf[7]]);
		buf += 8;
		len -= 8;
	}
	while (len--)
		crc = (uint16_t)(crc16_table[0][(crc ^ *buf++) & 0xff] ^
				 (crc >> 8));
	return (uint16_t)~crc;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer: a received IPoIB UD payload (4-byte IPoIB header and what
 * follows) through the IPoIB link codec as ipoibd and the gateway use it.
 * Parsers must refuse, never misread; whatever parses must rebuild into
 * something that parses back to the same values, and the ICMP errors built
 * about it must be well-formed.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <arpa/inet.h>

#include "inet/icmp.h"
#include "inet/ip.h"
#include "inet/nd.h"
#include "ulp/ipoib/ipoib_wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c) do { if (!(c)) __builtin_trap(); } while (0)

/* RFC 1071 sum, kept apart from the codec's own */
static uint16_t fz_csum(const uint8_t *p, size_t n, uint32_t sum)
{
	size_t i;

	for (i = 0; i < n; i++)
		sum += (i & 1) ? p[i] : (uint32_t)p[i] << 8;
	while (sum > 0xffff)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

static int icmp6_csum_good(const uint8_t *ip6)
{
	uint32_t len = (uint32_t)(ip6[4] << 8 | ip6[5]), sum = 0;
	size_t i;

	for (i = 8; i < 40; i += 2)
		sum += (uint32_t)ip6[i] << 8 | ip6[i + 1];
	sum += (len >> 16) + (len & 0xffff) + 58;
	return fz_csum(ip6 + 40, len, sum) == 0;
}

static int addr_eq(const struct ipoib_addr *a, const struct ipoib_addr *b)
{
	return a->flags == b->flags && a->qpn == b->qpn &&
	       memcmp(a->gid.raw, b->gid.raw, 16) == 0;
}

static void text_roundtrip(const struct ipoib_addr *a)
{
	char s[IPOIB_ADDR_STRLEN];
	struct ipoib_addr b;

	CHECK(ipoib_addr_ntop(a, s, sizeof(s)) == s);
	CHECK(strlen(s) == IPOIB_ADDR_STRLEN - 1);
	CHECK(ipoib_addr_pton(s, &b) == IPOIB_WIRE_OK);
	CHECK(addr_eq(a, &b));
}

static void rx_arp(const uint8_t *p, size_t n)
{
	uint8_t out[IPOIB_ARP_LEN];
	struct ipoib_arp arp, again;

	if (ipoib_arp_parse(p, n, &arp) != IPOIB_WIRE_OK)
		return;
	CHECK(n >= IPOIB_ARP_LEN);
	/* every field is kept: the encoder gives back the same 56 bytes */
	CHECK(ipoib_arp_build(&arp, out, sizeof(out)) == IPOIB_ARP_LEN);
	CHECK(memcmp(out, p, IPOIB_ARP_LEN) == 0);
	text_roundtrip(&arp.sha);
	text_roundtrip(&arp.tha);

	/* answering it as the gateway would */
	CHECK(ipoib_arp_build_reply(&arp.tha, &arp.tpa, &arp.sha, &arp.spa,
				    out, sizeof(out)) == IPOIB_ARP_LEN);
	CHECK(ipoib_arp_parse(out, sizeof(out), &again) == IPOIB_WIRE_OK);
	CHECK(again.op == IPOIB_ARPOP_REPLY);
	CHECK(addr_eq(&again.sha, &arp.tha) && addr_eq(&again.tha, &arp.sha));
	CHECK(again.spa.s_addr == arp.tpa.s_addr);
	CHECK(again.tpa.s_addr == arp.spa.s_addr);
}

static void rx_ipv4(const uint8_t *p, size_t n)
{
	static uint8_t out[INET_ICMP4_MAX_LEN];
	struct inet_ipv4_info ip, icmp_ip;
	struct in_addr gw = { .s_addr = htonl(0x0a0000fe) };
	const uint8_t *d;
	union fab_gid bc, mgid;
	enum inet_err err;
	size_t len = 0, quote;

	if (inet_ipv4_check(p, n, &ip) != INET_OK) {
		CHECK(!inet_ipv4_df(p, n));
		return;
	}
	CHECK(ip.hdr_len >= 20 && ip.hdr_len <= ip.tot_len && ip.tot_len <= n);
	CHECK(inet_ipv4_df(p, n) == !!(ip.frag & 0x4000));

	d = (const uint8_t *)&ip.dst.s_addr;
	if (d[0] >= 224 && d[0] < 240) {
		ipoib_bcast_mgid(0xffff, IPOIB_SCOPE_LINK, &bc);
		ipoib_mcast_mgid_ipv4(&ip.dst, &bc, &mgid);
		CHECK(mgid.raw[12] == (d[0] & 0xf) && mgid.raw[13] == d[1] &&
		      mgid.raw[14] == d[2] && mgid.raw[15] == d[3]);
		CHECK(ipoib_mgid_joinable(&mgid, &bc));
	}

	err = inet_icmp4_frag_needed(p, n, &gw, 2044, 0x4242, out,
				      sizeof(out), &len);
	if (err != INET_OK) {
		/* a refusal, never a lack of room in the documented maximum */
		CHECK(len == 0);
		CHECK(err == INET_ICMP_FRAGMENT ||
		      err == INET_ICMP_BAD_ADDR ||
		      err == INET_ICMP_ABOUT_ERROR);
		if (err == INET_ICMP_FRAGMENT)
			CHECK(ip.frag & 0x1fff);
		if (err == INET_ICMP_ABOUT_ERROR)
			CHECK(ip.proto == 1);
		return;
	}
	CHECK((ip.frag & 0x1fff) == 0);
	CHECK(len >= 28 && len <= INET_ICMP4_MAX_LEN);
	CHECK(inet_ipv4_check(out, len, &icmp_ip) == INET_OK);
	CHECK(icmp_ip.tot_len == len && icmp_ip.proto == 1);
	CHECK(inet_ipv4_hdr_csum_ok(out));
	CHECK(fz_csum(out, 20, 0) == 0);
	CHECK(fz_csum(out + 20, len - 20, 0) == 0);
	CHECK(icmp_ip.dst.s_addr == ip.src.s_addr);
	CHECK(out[20] == 3 && out[21] == 4 && out[26] == 0x07 &&
	      out[27] == 0xfc);
	quote = len - 28;
	CHECK(quote == (ip.tot_len < 548 ? ip.tot_len : 548u));
	CHECK(memcmp(out + 28, p, quote) == 0);
}

static void rx_nd(const uint8_t *p, size_t n, const struct ipoib_nd *nd)
{
	static uint8_t out[IPOIB_ND_NS_NA_LEN];
	struct ipoib_nd again;
	size_t len;

	if (nd->has_slla)
		text_roundtrip(&nd->slla);
	if (nd->has_tlla)
		text_roundtrip(&nd->tlla);
	CHECK(nd->ip.hop_limit == INET_ND_HOP_LIMIT);
	CHECK(icmp6_csum_good(p));
	(void)n;

	/* NS and NA rebuild from what was parsed and parse back the same */
	switch (nd->type) {
	case INET_ND_NS:
		len = ipoib_nd_build_ns(&nd->ip.src, &nd->ip.dst, &nd->target,
					nd->has_slla ? &nd->slla : NULL, out,
					sizeof(out));
		CHECK(len == IPOIB_ND_NS_NA_LEN - (nd->has_slla ? 0 : 24));
		CHECK(ipoib_nd_decode(out, len, &again) == INET_OK);
		CHECK(again.type == INET_ND_NS);
		CHECK(again.has_slla == nd->has_slla && !again.has_tlla);
		if (nd->has_slla)
			CHECK(addr_eq(&again.slla, &nd->slla));
		break;
	case INET_ND_NA:
		len = ipoib_nd_build_na(&nd->ip.src, &nd->ip.dst, &nd->target,
					nd->flags,
					nd->has_tlla ? &nd->tlla : NULL, out,
					sizeof(out));
		CHECK(len == IPOIB_ND_NS_NA_LEN - (nd->has_tlla ? 0 : 24));
		CHECK(ipoib_nd_decode(out, len, &again) == INET_OK);
		CHECK(again.type == INET_ND_NA && again.flags == nd->flags);
		CHECK(again.has_tlla == nd->has_tlla && !again.has_slla);
		if (nd->has_tlla)
			CHECK(addr_eq(&again.tlla, &nd->tlla));
		break;
	default:
		return;
	}
	CHECK(memcmp(&again.target, &nd->target, 16) == 0);
	CHECK(memcmp(&again.ip.src, &nd->ip.src, 16) == 0);
	CHECK(memcmp(&again.ip.dst, &nd->ip.dst, 16) == 0);
	CHECK(icmp6_csum_good(out));
}

static void rx_ipv6(const uint8_t *p, size_t n)
{
	static uint8_t out[INET_ICMP6_MAX_LEN];
	struct inet_ipv6_info ip, icmp_ip;
	struct in6_addr gw = { .s6_addr = { 0x20, 0x01, 0x0d, 0xb8,
					    [15] = 0xfe } };
	union fab_gid bc, mgid;
	struct ipoib_nd nd;
	enum inet_err err;
	size_t len = 0, quote;

	err = ipoib_nd_decode(p, n, &nd);
	if (err == INET_OK)
		rx_nd(p, n, &nd);
	if (inet_ipv6_check(p, n, &ip) != INET_OK) {
		CHECK(err != INET_OK && err != INET_NOT_ND);
		return;
	}
	CHECK(40u + ip.payload_len <= n);

	if (ip.dst.s6_addr[0] == 0xff) {
		ipoib_bcast_mgid(0x8001, IPOIB_SCOPE_SITE, &bc);
		ipoib_mcast_mgid_ipv6(&ip.dst, &bc, &mgid);
		CHECK(memcmp(mgid.raw + 6, ip.dst.s6_addr + 6, 10) == 0);
		CHECK(mgid.raw[1] == 0x15 && mgid.raw[4] == 0x80 &&
		      mgid.raw[5] == 0x01);
		CHECK(ipoib_mgid_joinable(&mgid, &bc));
	}

	err = inet_icmp6_pkt_too_big(p, n, &gw, 2044, out, sizeof(out),
				      &len);
	if (err != INET_OK) {
		CHECK(len == 0);
		CHECK(err == INET_ICMP_BAD_ADDR ||
		      err == INET_ICMP_ABOUT_ERROR);
		if (err == INET_ICMP_BAD_ADDR)
			CHECK(ip.src.s6_addr[0] == 0xff ||
			      IN6_IS_ADDR_UNSPECIFIED(&ip.src));
		return;
	}
	CHECK(len >= 48 && len <= INET_ICMP6_MAX_LEN);
	CHECK(inet_ipv6_check(out, len, &icmp_ip) == INET_OK);
	CHECK(40u + icmp_ip.payload_len == len && icmp_ip.next_hdr == 58);
	CHECK(memcmp(&icmp_ip.dst, &ip.src, 16) == 0);
	CHECK(out[40] == 2 && out[41] == 0);
	CHECK(icmp6_csum_good(out));
	quote = len - 48;
	CHECK(quote == (40u + ip.payload_len < 1232 ? 40u + ip.payload_len :
			1232u));
	CHECK(memcmp(out + 48, p, quote) == 0);
}

/*
 * Random bytes rarely carry a right ICMPv6 checksum and hop limit 255, so
 * the ND option walk would hardly be reached: give ND messages a second
 * run with both made right, as a well-behaved but odd sender would.
 */
static void rx_ipv6_resealed(const uint8_t *p, size_t n)
{
	static uint8_t copy[4096];
	struct inet_ipv6_info ip;
	uint32_t sum = 0, len;
	uint16_t c;
	size_t i;

	if (n > sizeof(copy) || inet_ipv6_check(p, n, &ip) != INET_OK ||
	    ip.next_hdr != 58 || ip.payload_len < 4 || p[40] < 133 ||
	    p[40] > 137)
		return;
	memcpy(copy, p, n);
	copy[7] = INET_ND_HOP_LIMIT;
	copy[42] = copy[43] = 0;
	len = ip.payload_len;
	for (i = 8; i < 40; i += 2)
		sum += (uint32_t)copy[i] << 8 | copy[i + 1];
	sum += (len >> 16) + (len & 0xffff) + 58;
	c = fz_csum(copy + 40, len, sum);
	copy[42] = (uint8_t)(c >> 8);
	copy[43] = (uint8_t)c;
	CHECK(icmp6_csum_good(copy));
	rx_ipv6(copy, n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t hdr[IPOIB_HDR_LEN];
	uint16_t et;

	if (ipoib_hdr_parse(data, size, &et) != IPOIB_WIRE_OK)
		return 0;
	CHECK(ipoib_hdr_build(et, hdr, sizeof(hdr)) == IPOIB_HDR_LEN);
	CHECK(memcmp(hdr, data, IPOIB_HDR_LEN) == 0);
	data += IPOIB_HDR_LEN;
	size -= IPOIB_HDR_LEN;

	switch (et) {
	case IPOIB_ETH_P_ARP:
		rx_arp(data, size);
		break;
	case IPOIB_ETH_P_IP:
		rx_ipv4(data, size);
		break;
	case IPOIB_ETH_P_IPV6:
		rx_ipv6(data, size);
		rx_ipv6_resealed(data, size);
		break;
	}
	return 0;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer: the IPv4/IPv6 header checks and the IPv6 extension header
 * walk (inet/ip.c) and what is built on them: the ICMP errors
 * (inet/icmp.c) and fragmentation (inet/frag.c).
 * Byte 0 is the MTU to cut at, in units of 8 bytes past 28.  A check must
 * refuse, never misread; what it takes has its lengths inside the buffer,
 * and every ICMP error and fragment built from it must pass the checks
 * again with correct checksums by an independent sum.  The walk ends on
 * a header it does not pass, inside the buffer unless it says truncated.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "inet/frag.h"
#include "inet/icmp.h"
#include "inet/ip.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c) do { if (!(c)) __builtin_trap(); } while (0)

static uint32_t fz_sum(const uint8_t *p, size_t n, uint32_t s)
{
	size_t i;

	for (i = 0; i < n; i++)
		s += (i & 1) ? p[i] : (uint32_t)p[i] << 8;
	while (s > 0xffff)
		s = (s & 0xffff) + (s >> 16);
	return s;
}

struct frag_seen {
	unsigned int mtu;
	size_t data;
};

static void frag_check(void *arg, const uint8_t *f, size_t n)
{
	struct frag_seen *fs = arg;
	struct inet_ipv4_info ip;

	CHECK(n <= fs->mtu);
	CHECK(inet_ipv4_check(f, n, &ip) == INET_OK && ip.tot_len == n);
	CHECK(fz_sum(f, ip.hdr_len, 0) == 0xffff);
	CHECK(inet_ipv4_hdr_csum_ok(f));
	fs->data += n - ip.hdr_len;
}

static void fuzz_v4(const uint8_t *p, size_t n, unsigned int mtu)
{
	static uint8_t out[INET_ICMP4_MAX_LEN];
	const struct in_addr gw = { htonl(0x0a0000fe) };
	struct inet_ipv4_info ip, icmp;
	struct frag_seen fs = { mtu, 0 };
	size_t len = 0;
	int r;

	if (inet_ipv4_check(p, n, &ip) != INET_OK) {
		CHECK(!inet_ipv4_df(p, n));
		return;
	}
	CHECK(ip.hdr_len >= 20 && ip.hdr_len <= ip.tot_len && ip.tot_len <= n);
	CHECK(inet_ipv4_df(p, n) == !!(ip.frag & INET_IPV4_DF));
	if (inet_icmp4_frag_needed(p, n, &gw, (uint16_t)mtu, 1, out,
				   sizeof(out), &len) == INET_OK) {
		CHECK(inet_ipv4_check(out, len, &icmp) == INET_OK);
		CHECK(fz_sum(out, 20, 0) == 0xffff);
		CHECK(fz_sum(out + 20, len - 20, 0) == 0xffff);
	} else {
		CHECK(len == 0);
	}
	r = inet_frag_ipv4(p, ip.tot_len, mtu, frag_check, &fs);
	if (r > 0)
		CHECK(fs.data == (size_t)ip.tot_len - ip.hdr_len);
	else
		CHECK(fs.data == 0);
}

static bool ext_hdr(uint8_t proto)
{
	return proto == INET_PROTO_HOPOPTS || proto == INET_PROTO_ROUTING ||
	       proto == INET_PROTO_DSTOPTS || proto == INET_PROTO_AH ||
	       proto == INET_PROTO_FRAGMENT;
}

static void fuzz_v6_upper(const uint8_t *p, size_t n)
{
	struct inet_ipv6_upper up;

	switch (inet_ipv6_upper(p, n, &up)) {
	case INET_OK:
		CHECK(up.off >= 40 && up.off <= n && up.off % 4 == 0);
		CHECK(!ext_hdr(up.proto));
		CHECK(up.off > 40 || (!up.fragment && !up.auth));
		break;
	case INET_TRUNCATED:
		if (n < 40)
			break;
		CHECK(up.off >= 40 && up.off % 4 == 0);
		if (up.proto == INET_PROTO_FRAGMENT)
			CHECK(up.off + 8 > n);
		else if (ext_hdr(up.proto))
			CHECK(up.off + 2 > n);
		else
			CHECK(up.off > n);
		break;
	case INET_IP_LATER_FRAGMENT:
		CHECK(up.proto == INET_PROTO_FRAGMENT && up.off + 8 <= n);
		break;
	default:
		CHECK(0);
	}
}

static void fuzz_v6(const uint8_t *p, size_t n, unsigned int mtu)
{
	static uint8_t out[INET_ICMP6_MAX_LEN];
	struct inet_ipv6_info ip, icmp;
	struct in6_addr gw = IN6ADDR_LOOPBACK_INIT;
	size_t len = 0;
	uint32_t s;

	fuzz_v6_upper(p, n);
	if (inet_ipv6_check(p, n, &ip) != INET_OK)
		return;
	CHECK(40u + ip.payload_len <= n);
	fuzz_v6_upper(p, 40u + ip.payload_len);
	if (inet_icmp6_pkt_too_big(p, n, &gw, mtu, out, sizeof(out), &len) !=
	    INET_OK) {
		CHECK(len == 0);
		return;
	}
	CHECK(len <= INET_ICMP6_MAX_LEN);
	CHECK(inet_ipv6_check(out, len, &icmp) == INET_OK);
	CHECK(40u + icmp.payload_len == len);
	s = fz_sum(out + 8, 32, 0);
	s = fz_sum((const uint8_t[]){ 0, 0, out[4], out[5], 0, 0, 0, 58 }, 8,
		   s);
	CHECK(fz_sum(out + 40, len - 40, s) == 0xffff);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned int mtu;

	if (size < 1)
		return 0;
	mtu = 28 + 8u * data[0];
	fuzz_v4(data + 1, size - 1, mtu);
	fuzz_v6(data + 1, size - 1, mtu);
	return 0;
}

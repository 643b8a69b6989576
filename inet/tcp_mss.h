/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * TCP MSS clamping: the MSS option of a SYN crossing a gateway is lowered
 * to what the narrower side can carry, with the TCP checksum updated
 * incrementally (RFC 1624), as iptables' TCPMSS target and nftables'
 * "tcp option maxseg size set" do.
 */
#ifndef IBGW_INET_TCP_MSS_H
#define IBGW_INET_TCP_MSS_H

#include <stddef.h>
#include <stdint.h>

/* The MSS for an MTU: MTU - 40 (IPv4) or - 60 (IPv6, RFC 8200). */
static inline uint16_t tcp_mss_for_mtu(unsigned int mtu, int v6)
{
	unsigned int h = v6 ? 60 : 40;

	return (uint16_t)(mtu > h + 1 ? mtu - h : 1);
}

/* A cheap look: might pkt be a TCP SYN?  (What clamping would look at.) */
static inline int tcp_maybe_syn(const uint8_t *pkt, size_t len)
{
	size_t iphl;

	if (len < 40)
		return 0;
	if (pkt[0] >> 4 == 4) {
		iphl = (size_t)(pkt[0] & 0x0f) * 4;
		if (pkt[9] != 6)
			return 0;
	} else if (pkt[0] >> 4 == 6) {
		iphl = 40;
		if (pkt[6] != 6)
			return 0;
	} else {
		return 0;
	}
	return len > iphl + 13 && (pkt[iphl + 13] & 0x02);
}

/*
 * pkt (len bytes) is an IPv4 or IPv6 packet.  If it is a TCP SYN (with or
 * without ACK) carrying an MSS option above the MSS for mtu, lower the
 * option and fix the checksum: returns 1.  Otherwise (not TCP, not a SYN,
 * no MSS option, small enough, malformed, a fragment) 0, untouched.
 */
int tcp_mss_clamp(uint8_t *pkt, size_t len, unsigned int mtu);

#endif

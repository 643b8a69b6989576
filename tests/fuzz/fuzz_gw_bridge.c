// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer: the gateway's translation core (gateway/gw_bridge.c) and the
 * Ethernet codec under it (gateway/eth_wire.c).  The input is a series of
 * records, each a byte saying where it comes from (even: an Ethernet
 * frame from the segment, odd: an IP packet from the IPoIB link; bit 1:
 * the link knows every IB address or none; bit 2: a timer tick first;
 * bit 3: an IB packet came to a multicast group),
 * a 16-bit length and the bytes.  Nothing may crash or read out of bounds;
 * every frame the bridge sends must parse as Ethernet with our VLAN tag,
 * and every packet it sends to IB must be an IP packet that fits the MTU.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gateway/eth_wire.h"
#include "gateway/gw_bridge.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c) do { if (!(c)) __builtin_trap(); } while (0)

static int know;

static void eth_send(void *arg, const uint8_t *f, size_t len)
{
	struct eth_hdr h;

	(void)arg;
	CHECK(eth_parse(f, len, &h) == ETH_OK);
	CHECK(h.tagged && h.vid == 7);
	CHECK(len - h.hdr_len <= 1500 + 0u || h.type == ETH_P_ARP_);
}

static void ib_xmit(void *arg, const uint8_t *p, size_t len,
		    const struct inet_addr *nh, int bcast)
{
	(void)arg;
	(void)nh;
	(void)bcast;
	CHECK(len >= 20 && len <= 2044);
	CHECK(p[0] >> 4 == 4 || p[0] >> 4 == 6);
}

static int ib_neigh(void *arg, const struct inet_addr *ip,
		    struct ipoib_addr *hw)
{
	(void)arg;
	if (!know)
		return -1;
	memset(hw, 0, sizeof(*hw));
	hw->qpn = ip->raw[3];		/* a few distinct endpoints */
	hw->gid.raw[0] = 0xfe;
	hw->gid.raw[1] = 0x80;
	hw->gid.raw[15] = ip->raw[2];
	return 0;
}

static void ib_resolve(void *arg, const struct inet_addr *ip)
{
	(void)arg;
	(void)ip;
}

static unsigned int ib_mtu(void *arg)
{
	(void)arg;
	return 2044;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct gw_bridge_ops ops = {
		.eth_send = eth_send, .ib_xmit = ib_xmit, .ib_neigh = ib_neigh,
		.ib_resolve = ib_resolve, .ib_mtu = ib_mtu,
	};
	struct gw_bridge_cfg cfg = { .mac = { 2, 0, 0, 0, 0, 1 }, .vlan = 7,
				     .eth_mtu = 1500, .mss_clamp = 1,
				     .neigh_max = 32 };
	uint8_t *buf;
	struct gw_bridge *b = gw_bridge_new(&cfg, &ops, NULL);
	size_t off = 0, n;
	time_t t = 1000;

	if (!b)
		return 0;
	while (off + 3 <= size) {
		uint8_t kind = data[off];

		n = (size_t)data[off + 1] << 8 | data[off + 2];
		off += 3;
		if (n > size - off)
			n = size - off;
		buf = malloc(n ? n : 1);	/* exact bounds for ASan */
		if (!buf)
			break;
		memcpy(buf, data + off, n);
		off += n;
		know = kind & 2;
		if (kind & 4)
			gw_bridge_tick(b, t += 2);
		if (kind & 1)
			gw_bridge_ib_rx(b, buf, n, kind & 8);
		else
			gw_bridge_eth_rx(b, buf, n);
		free(buf);
	}
	gw_bridge_tick(b, t + 1000);
	gw_bridge_free(b);
	return 0;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer: received IPoIB datagrams (4-byte IPoIB header and what
 * follows, as the seeds of fuzz_ipoib_rx) into a live IPoIB link over the
 * in-memory provider, with IPv4 and IPv6 addresses and the carrier up.
 * The link keeps its state from one input to the next (neighbours learnt,
 * paths asked), as a daemon does; what it sends and asks is thrown away.
 * Sanitizers judge: no crash, no leak, no read outside a packet.
 */
#include <arpa/inet.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "tests/unit/prov_mem.h"
#include "ulp/ipoib/ipoib_link.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct event_base *fz_base;
static struct fab_dev *fz_dev;
static struct ipoib_link *fz_link;

static void fz_rx(void *arg, const uint8_t *pkt, size_t len)
{
	volatile uint8_t sink = 0;
	size_t i;

	(void)arg;
	for (i = 0; i < len; i++)	/* every byte handed up is readable */
		sink ^= pkt[i];
	(void)sink;
}

static const struct ipoib_link_ops fz_ops = { .rx = fz_rx };

static void fz_pump(void)
{
	int i;

	for (i = 0; i < 8; i++)
		event_base_loop(fz_base, EVLOOP_NONBLOCK);
	mem_sent_clear(fz_dev);
	mem_sa_clear(fz_dev);
}

static void fz_addr(int family, const char *s, unsigned int plen)
{
	struct inet_prefix p;

	memset(&p, 0, sizeof(p));
	p.addr.family = family;
	p.plen = plen;
	if (inet_pton(family, s, p.addr.raw) != 1 ||
	    ipoib_link_add_addr(fz_link, &p, NULL, 0) < 0)
		abort();
}

static void fz_init(void)
{
	struct ipoib_link_cfg cfg = { .pkey = 0xffff, .neigh_max = 64 };
	union fab_gid peer;

	mem_register();
	fz_base = event_base_new();
	if (fz_base)
		fz_dev = fab_open("mem:", NULL, NULL, 0);
	if (!fz_dev)
		abort();
	mem_port_gid(&peer);
	peer.raw[15] ^= 1;
	mem_sa_add_path(fz_dev, &peer, 7, 0);
	fz_link = ipoib_link_new(fz_base, fz_dev, &cfg, &fz_ops, NULL, NULL,
				 0);
	if (!fz_link)
		abort();
	fz_addr(AF_INET, "10.0.0.1", 24);
	fz_addr(AF_INET6, "2001:db8::1", 64);
	ipoib_link_start(fz_link, NULL, 0);
	fz_pump();
	if (!ipoib_link_carrier(fz_link))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!fz_link)
		fz_init();
	if (size > MEM_PKT_MAX)
		return 0;
	mem_inject(fz_dev, 7, 0x222, data, size);
	fz_pump();
	return 0;
}

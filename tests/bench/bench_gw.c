// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The gateway's translation path alone (gateway/gw_bridge.c), on synthetic
 * traffic, without system calls: Ethernet frames to IPoIB packets and back,
 * for a TCP data segment (1448 bytes) and a small UDP datagram (64 bytes).
 * The outputs go to stubs that only count.  Beside each figure, a
 * baseline measured in the same run: copying the same bytes once, the
 * least any translation must do.  A benchmark, not a test.
 *
 *   bench_gw [--seconds S]        packets per second and ns per packet
 *   bench_gw --count N MODE       exactly N packets of MODE (eth-tcp,
 *                                 ib-tcp, eth-udp, ib-udp), for counting
 *                                 instructions under callgrind
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gateway/eth_wire.h"
#include "gateway/gw_bridge.h"

static unsigned long long n_eth, n_ib;
static struct ipoib_addr a_hw;
static uint8_t sink[70000];

static void eth_send(void *arg, const uint8_t *f, size_t len)
{
	(void)arg;
	(void)f;
	(void)len;
	n_eth++;
}

static void ib_xmit(void *arg, const uint8_t *p, size_t len,
		    const struct inet_addr *nh, int bcast)
{
	(void)arg;
	(void)p;
	(void)len;
	(void)nh;
	(void)bcast;
	n_ib++;
}

static int ib_neigh(void *arg, const struct inet_addr *ip,
		    struct ipoib_addr *hw)
{
	(void)arg;
	(void)ip;
	*hw = a_hw;		/* every IB address is host A */
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

static uint16_t csum(const uint8_t *p, size_t n, uint32_t s)
{
	size_t i;

	for (i = 0; i < n; i++)
		s += (i & 1) ? p[i] : (uint32_t)p[i] << 8;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

/* IPv4 + TCP (ACK, 1448 bytes) or UDP (64 bytes), checksums right */
static size_t packet(uint8_t *p, int tcp, const char *src, const char *dst)
{
	size_t l4 = tcp ? 20 + 1448 : 8 + 64, i;
	uint8_t ph[12];
	uint16_t c;

	memset(p, 0, 20 + l4);
	p[0] = 0x45;
	p[2] = (uint8_t)((20 + l4) >> 8);
	p[3] = (uint8_t)(20 + l4);
	p[6] = 0x40;
	p[8] = 64;
	p[9] = tcp ? 6 : 17;
	inet_pton(AF_INET, src, p + 12);
	inet_pton(AF_INET, dst, p + 16);
	c = csum(p, 20, 0);
	p[10] = (uint8_t)(c >> 8);
	p[11] = (uint8_t)c;
	for (i = 20 + (tcp ? 20 : 8); i < 20 + l4; i++)
		p[i] = (uint8_t)i;
	if (tcp) {
		p[20 + 12] = 5 << 4;
		p[20 + 13] = 0x10;
	} else {
		p[20 + 5] = (uint8_t)l4;
	}
	memcpy(ph, p + 12, 8);
	ph[8] = 0;
	ph[9] = p[9];
	ph[10] = (uint8_t)(l4 >> 8);
	ph[11] = (uint8_t)l4;
	c = csum(p + 20, l4, (uint16_t)~csum(ph, 12, 0));
	p[20 + (tcp ? 16 : 6)] = (uint8_t)(c >> 8);
	p[20 + (tcp ? 17 : 7)] = (uint8_t)c;
	return 20 + l4;
}

static const uint8_t LMAC[6] = { 0x52, 0x54, 0, 0x12, 0x34, 0x56 };

struct work {
	const char *name;
	int from_eth;
	uint8_t buf[2100];
	size_t len;
};

static struct gw_bridge *setup(void)
{
	static const struct gw_bridge_ops ops = {
		.eth_send = eth_send, .ib_xmit = ib_xmit,
		.ib_neigh = ib_neigh, .ib_resolve = ib_resolve,
		.ib_mtu = ib_mtu,
	};
	struct gw_bridge_cfg cfg = { .mac = { 2, 0, 0, 0, 0, 1 },
				     .eth_mtu = 1500, .mss_clamp = 1 };
	struct gw_bridge *b;
	struct eth_arp a = { .op = 1 };
	uint8_t f[64];
	size_t h;

	a_hw.qpn = 0x48;
	a_hw.gid.raw[0] = 0xfe;
	a_hw.gid.raw[1] = 0x80;
	a_hw.gid.raw[15] = 7;
	b = gw_bridge_new(&cfg, &ops, NULL);
	if (!b)
		exit(1);
	/* the LAN host asks for A: both are known afterwards */
	memcpy(a.sha, LMAC, 6);
	inet_pton(AF_INET, "10.9.0.50", &a.spa);
	inet_pton(AF_INET, "10.9.0.1", &a.tpa);
	h = eth_build(f, (const uint8_t[6]){ 0xff, 0xff, 0xff, 0xff, 0xff,
					     0xff }, LMAC, 0, ETH_P_ARP_);
	eth_arp_build(f + h, sizeof(f) - h, &a);
	gw_bridge_eth_rx(b, f, h + ETH_ARP_LEN);
	return b;
}

static void make_work(struct work *w, int from_eth, int tcp)
{
	uint8_t amac[6];
	size_t h = 0;

	w->from_eth = from_eth;
	w->name = from_eth ? (tcp ? "eth-tcp" : "eth-udp") :
			     (tcp ? "ib-tcp" : "ib-udp");
	if (from_eth) {
		eth_mac_of_ib(&a_hw, amac);
		h = eth_build(w->buf, amac, LMAC, 0, ETH_P_IP_);
		w->len = h + packet(w->buf + h, tcp, "10.9.0.50", "10.9.0.1");
	} else {
		w->len = packet(w->buf, tcp, "10.9.0.1", "10.9.0.50");
	}
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void run(struct gw_bridge *b, const struct work *w,
		unsigned long long n)
{
	unsigned long long i;

	for (i = 0; i < n; i++) {
		if (w->from_eth)
			gw_bridge_eth_rx(b, w->buf, w->len);
		else
			gw_bridge_ib_rx(b, w->buf, w->len, 0);
	}
}

/* the baseline: the same bytes copied once */
static void copy(const struct work *w, unsigned long long n)
{
	unsigned long long i;

	for (i = 0; i < n; i++) {
		memcpy(sink, w->buf, w->len);
		__asm__ volatile("" : : "r"(sink) : "memory");
	}
}

int main(int argc, char **argv)
{
	struct gw_bridge *b = setup();
	static struct work ws[4];
	double secs = 1.0;
	unsigned int i;

	make_work(&ws[0], 1, 1);
	make_work(&ws[1], 0, 1);
	make_work(&ws[2], 1, 0);
	make_work(&ws[3], 0, 0);
	if (argc == 4 && !strcmp(argv[1], "--count")) {
		unsigned long long n = strtoull(argv[2], NULL, 10);

		for (i = 0; i < 4; i++) {
			if (!strcmp(argv[3], ws[i].name)) {
				run(b, &ws[i], n);
				printf("%llu packets\n", n);
				gw_bridge_free(b);
				return 0;
			}
		}
		fprintf(stderr, "bench_gw: unknown mode '%s'\n", argv[3]);
		return 2;
	}
	if (argc == 3 && !strcmp(argv[1], "--seconds"))
		secs = atof(argv[2]);
	printf("%-8s %6s %12s %10s %14s %8s\n", "path", "bytes", "packets/s",
	       "ns/packet", "copy only ns", "ratio");
	for (i = 0; i < 4; i++) {
		unsigned long long n = 0, step = 20000, e0 = n_eth, i0 = n_ib;
		double t0 = now(), t, tc;

		while ((t = now() - t0) < secs) {
			run(b, &ws[i], step);
			n += step;
		}
		if (n_eth - e0 + n_ib - i0 != n) {
			fprintf(stderr, "bench_gw: %s: %llu in, %llu out\n",
				ws[i].name, n, n_eth - e0 + n_ib - i0);
			return 1;
		}
		t0 = now();
		copy(&ws[i], n);
		tc = now() - t0;
		printf("%-8s %6zu %12.0f %10.1f %14.1f %8.1f\n", ws[i].name,
		       ws[i].len, (double)n / t, t / (double)n * 1e9,
		       tc / (double)n * 1e9, t / tc);
	}
	gw_bridge_free(b);
	return 0;
}

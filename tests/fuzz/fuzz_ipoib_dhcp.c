// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer: the DHCPv4 client of IPoIB hosts (ulp/ipoib/ipoib_dhcp.c).
 * The input is a run of records: a control byte (low 2 bits: 0 a message,
 * 1 the timer fires, 2 the link goes down, 3 up; the rest, times 1000 ms,
 * how far the clock moves first), then for a message a 16-bit length and
 * that many bytes, whose transaction ID (bytes 4..7) is replaced by the
 * client's when byte 4 is even, so that the states past SELECTING are
 * reached.  Checked: the parser's answer never depends on bytes past the
 * length; whatever happens, a lease held is an address with T1 <= T2 <=
 * lease, what the client sends is a well-formed request of its own, and
 * bind and unbind come in pairs.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ulp/ipoib/ipoib_dhcp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c) do { if (!(c)) __builtin_trap(); } while (0)

static int held;		/* bind without unbind */

static void f_send(void *arg, const uint8_t *msg, size_t len,
		   struct in_addr src, struct in_addr dst)
{
	(void)arg;
	(void)src;
	(void)dst;
	CHECK(len >= 300 && len <= DHCP4_MSG_MAX);
	CHECK(msg[0] == 1 && msg[1] == 32 && msg[2] == 0);
	CHECK(msg[236] == 99 && msg[237] == 130 && msg[238] == 83 &&
	      msg[239] == 99);
}

static void f_arm(void *arg, uint64_t ms)
{
	(void)arg;
	(void)ms;
}

static void f_bind(void *arg, const struct dhcp4_lease *l,
		   const struct dhcp4_lease *old)
{
	(void)arg;
	CHECK(l->addr.s_addr != 0 && l->lease > 0);
	CHECK(l->t1 <= l->t2 && l->t2 <= l->lease);
	if (!old->addr.s_addr) {
		CHECK(!held);
		held = 1;
	}
}

static void f_unbind(void *arg, const struct dhcp4_lease *l, const char *why)
{
	(void)arg;
	(void)why;
	CHECK(held && l->addr.s_addr);
	held = 0;
}

static const struct dhcp4_client_ops ops = {
	.send = f_send, .arm = f_arm, .bind = f_bind, .unbind = f_unbind,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t guid[8] = { 0, 2, 0xc9, 1, 2, 3, 4, 5 };
	struct dhcp4_client c;
	struct dhcp4_reply r1, r2;
	uint8_t id[DHCP4_CLIENT_ID_LEN], *m;
	uint64_t now = 0;
	size_t i = 0, len;
	const char *why;
	int rc;

	held = 0;
	dhcp4_client_id_ib(guid, id);
	dhcp4_client_init(&c, &ops, NULL, id, 1);
	dhcp4_client_start(&c, now);
	while (i < size) {
		uint8_t ctl = data[i++];

		now += (uint64_t)(ctl >> 2) * 1000;
		switch (ctl & 3) {
		case 1:
			dhcp4_client_timer(&c, now);
			continue;
		case 2:
			dhcp4_client_pause(&c, now);
			continue;
		case 3:
			dhcp4_client_start(&c, now);
			continue;
		}
		if (i + 2 > size)
			break;
		len = (size_t)data[i] << 8 | data[i + 1];
		i += 2;
		if (len > size - i)
			len = size - i;
		/* a copy of its own size: ASan sees any read past it */
		m = malloc(len ? len : 1);
		if (!m)
			return 0;
		memcpy(m, data + i, len);
		if (len > 7 && !(m[4] & 1)) {
			m[4] = (uint8_t)(c.xid >> 24);
			m[5] = (uint8_t)(c.xid >> 16);
			m[6] = (uint8_t)(c.xid >> 8);
			m[7] = (uint8_t)c.xid;
		}
		rc = dhcp4_parse(m, len, &r1, &why);
		CHECK(rc == dhcp4_parse(m, len, &r2, &why));
		CHECK(rc < 0 || !memcmp(&r1, &r2, sizeof(r1)));
		CHECK(rc < 0 || r1.op == 2);
		dhcp4_client_input(&c, m, len, now);
		free(m);
		i += len;
		if (c.lease.addr.s_addr)
			CHECK(c.lease.t1 <= c.lease.t2 &&
			      c.lease.t2 <= c.lease.lease);
	}
	return 0;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer: IGMP/MLD membership reports (inet/mcast.c).  Byte 0's low
 * bit picks the family (0 IGMP, 1 MLD), the rest is the message.  The
 * decoder must never read past the end, and must name exactly the groups
 * a plain second reading of RFC 3376 / 3810 layouts here finds, in the
 * same order, with a result that says why it stopped.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "inet/mcast.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c) do { if (!(c)) __builtin_trap(); } while (0)
#define MAX_SEEN 4096

struct seen {
	const uint8_t *msg;
	size_t len;
	int family;
	unsigned int n;
	struct {
		size_t off;	/* where the reference found the group */
		bool join;
	} g[MAX_SEEN];
};

static void seen_add(struct seen *s, size_t off, bool join)
{
	if (s->n < MAX_SEEN) {
		s->g[s->n].off = off;
		s->g[s->n].join = join;
	}
	s->n++;
}

static unsigned int rd16(const uint8_t *p)
{
	return (unsigned int)p[0] << 8 | p[1];
}

/* The reference: the layouts read again, the slow obvious way. */
static void reference(struct seen *s, const uint8_t *m, size_t len)
{
	const bool v4 = s->family == AF_INET;
	const size_t al = v4 ? 4 : 16;
	size_t off, end;
	unsigned int i, nrec, ns;

	if (len < 8)
		return;
	if (v4 ? (m[0] == 0x12 || m[0] == 0x16 || m[0] == 0x17) :
		 (m[0] == 131 || m[0] == 132)) {
		if (len >= (v4 ? 4 : 8) + al)
			seen_add(s, v4 ? 4 : 8, m[0] != 0x17 && m[0] != 132);
		return;
	}
	if (m[0] != (v4 ? 0x22 : 143))
		return;
	nrec = rd16(m + 6);
	for (i = 0, off = 8; i < nrec; i++, off = end) {
		if (len < off + 4 + al)
			return;
		ns = rd16(m + off + 2);
		if (ns == 0 && (m[off] == 2 || m[off] == 4))
			seen_add(s, off + 4, true);
		if (ns == 0 && (m[off] == 1 || m[off] == 3))
			seen_add(s, off + 4, false);
		end = off + 4 + al * (1 + (size_t)ns) + 4 * (size_t)m[off + 1];
		if (end > len)
			return;
	}
}

struct got {
	const struct seen *ref;
	unsigned int n;
};

static void got_cb(void *arg, const struct inet_addr *g, bool join)
{
	struct got *got = arg;
	const struct seen *r = got->ref;
	size_t al = inet_addr_len(r->family);

	CHECK(g->family == r->family);
	CHECK(got->n < r->n);
	if (got->n < MAX_SEEN) {
		CHECK(r->g[got->n].join == join);
		CHECK(r->g[got->n].off + al <= r->len);
		CHECK(!memcmp(g->raw, r->msg + r->g[got->n].off, al));
	}
	got->n++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct seen ref;
	struct got got = { &ref, 0 };
	enum inet_err e;

	if (size < 1)
		return 0;
	memset(&ref, 0, sizeof(ref));
	ref.family = data[0] & 1 ? AF_INET6 : AF_INET;
	ref.msg = data + 1;
	ref.len = size - 1;
	reference(&ref, ref.msg, ref.len);
	e = inet_mcast_report_parse(ref.family, ref.msg, ref.len, got_cb,
				    &got);
	CHECK(got.n == ref.n);
	CHECK(e == INET_OK || e == INET_MCAST_NOT_REPORT ||
	      e == INET_TRUNCATED || e == INET_MCAST_BAD_RECORD);
	CHECK(e != INET_TRUNCATED || ref.len < 8 || ref.msg[0] == 0x22 ||
	      ref.msg[0] == 143 || ref.msg[0] == 131 || ref.msg[0] == 132);
	if (e == INET_MCAST_NOT_REPORT)
		CHECK(got.n == 0);
	return 0;
}

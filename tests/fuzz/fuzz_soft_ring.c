// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer: a shared QP ring as a hostile peer may leave it.  The input
 * is the ring: bytes 0-3 the producer's tail, 4-7 the consumer's head,
 * the rest the start of the data area (256 bytes, zero-padded).  The
 * consumer (what ibfabricd runs on a node's TX ring) may only return
 * records inside the data area and must stop; the producer (what it runs
 * on a node's RX ring) may only write inside it, whatever head says.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "fabric/soft_ring.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c) do { if (!(c)) __builtin_trap(); } while (0)
#define SZ 256u

static struct fsp_ring_ctl ctl;
static uint8_t area[SZ + 64];	/* a guard after the data */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct soft_ring r;
	const uint8_t *rec;
	size_t len, i;
	uint32_t tail = 0, head = 0;
	int rc, steps;

	if (size >= 8) {
		memcpy(&tail, data, 4);
		memcpy(&head, data + 4, 4);
		data += 8;
		size -= 8;
	}
	memset(area, 0, sizeof(area));
	memcpy(area, data, size > SZ ? SZ : size);
	memset(area + SZ, 0xa5, 64);

	/* consumer */
	soft_ring_ctl_reset(&ctl);
	atomic_store(&ctl.head, head);
	atomic_store(&ctl.tail, tail);
	soft_ring_init_consumer(&r, &ctl, area, SZ);
	for (steps = 0; steps < 1000; steps++) {
		rc = soft_ring_peek(&r, &rec, &len);
		if (rc < 0) {
			soft_ring_skip(&r);
			CHECK(!soft_ring_arm(&r));
			break;
		}
		if (rc == 0)
			break;
		CHECK(rec >= area && rec + len <= area + SZ);
		soft_ring_next(&r, len);
	}
	CHECK(steps < 1000);
	soft_ring_release(&r);

	/* producer against the same head */
	soft_ring_ctl_reset(&ctl);
	atomic_store(&ctl.head, head);
	atomic_store(&ctl.tail, tail);
	soft_ring_init_producer(&r, &ctl, area, SZ);
	for (i = 0; i < 64; i++) {
		size_t want = (i * 7 + (size ? data[i % size] : 0)) % 70;
		uint8_t *s = soft_ring_reserve(&r, want);

		if (!s)
			break;
		CHECK(s >= area && s + want <= area + SZ);
		memset(s, 0x5a, want);
		soft_ring_commit(&r, want);
	}
	soft_ring_publish(&r);
	for (i = SZ; i < SZ + 64; i++)
		CHECK(area[i] == 0xa5);
	return 0;
}

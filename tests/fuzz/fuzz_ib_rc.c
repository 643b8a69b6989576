// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer: the RC packet decoder must refuse, never misread.  Byte 0
 * picks the path MTU (0: none, 1..5: 256..4096, else an invalid one), the
 * rest is the packet.  What parses lies inside the input, rebuilds, and
 * parses back to the same headers and payload.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "fabric/ib_rc.h"

#define check(c)	do { if (!(c)) __builtin_trap(); } while (0)

static void one(const uint8_t *data, size_t size, unsigned int pmtu, int crcs)
{
	static uint8_t out[IB_MAX_PKT + 64];
	struct ib_rc r, d;
	enum ib_rc_err err, err2;
	size_t n;

	err = crcs ? ib_rc_parse(data, size, pmtu, &r) :
		     ib_rc_parse_checked(data, size, pmtu, &r);
	check(err < IB_RC_ERR_MAX);
	check(strcmp(ib_rc_strerror(err), "unknown") != 0);
	if (err != IB_RC_OK)
		return;
	check(r.payload >= data && r.payload + r.payload_len <= data + size);
	check(ib_rc_op_flags(r.bth.opcode) != 0);
	check(!pmtu || r.payload_len <= pmtu);
	check(r.aeth.type != 2 && r.bth.psn <= IB_PSN_MASK);

	n = ib_rc_build(&r, pmtu, out, sizeof(out), &err2);
	check(err2 == IB_RC_OK && n == size);
	check(ib_rc_parse(out, n, pmtu, &d) == IB_RC_OK);
	check(d.bth.opcode == r.bth.opcode && d.bth.psn == r.bth.psn &&
	      d.bth.destqp == r.bth.destqp && d.bth.padcnt == r.bth.padcnt);
	check(d.reth.va == r.reth.va && d.reth.rkey == r.reth.rkey &&
	      d.reth.dma_len == r.reth.dma_len);
	check(d.aeth.type == r.aeth.type && d.aeth.value == r.aeth.value &&
	      d.aeth.msn == r.aeth.msn && d.imm == r.imm);
	check(d.payload_len == r.payload_len &&
	      memcmp(d.payload, r.payload, r.payload_len) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned int pmtu;

	if (size < 1)
		return 0;
	pmtu = data[0] <= 5 ? (data[0] ? 128u << data[0] : 0) : data[0];
	one(data + 1, size - 1, pmtu, 1);
	one(data + 1, size - 1, pmtu, 0);
	return 0;
}

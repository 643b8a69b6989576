// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* libFuzzer: the native IB packet decoder must refuse, never misread. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "fabric/ib_pkt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t out[IB_MAX_PKT];
	struct ib_ud u;
	size_t n;

	if (ib_ud_parse(data, size, &u) != IB_PKT_OK)
		return 0;
	/* whatever parses must lie inside the input and rebuild */
	if (u.payload < data || u.payload + u.payload_len > data + size)
		__builtin_trap();
	n = ib_ud_build(&u, out, sizeof(out));
	if (n && memcmp(out + n - 6 - u.payload_len - u.bth.padcnt,
			u.payload, u.payload_len))
		__builtin_trap();
	return 0;
}

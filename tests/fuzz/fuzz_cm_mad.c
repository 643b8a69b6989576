// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer: CM MADs must parse inside their bounds; what parses rebuilds
 * into a MAD equal to the input but for reserved bits, and parses back to
 * the same message.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "fabric/cm_mad.h"

#define check(c)	do { if (!(c)) __builtin_trap(); } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t out[MAD_LEN], again[MAD_LEN];
	struct cm_msg m, m2;
	enum cm_mad_err err;
	const uint8_t *priv;
	size_t plen;

	err = cm_mad_parse(data, size, &m);
	check(err < CM_MAD_ERR_MAX);
	check(strcmp(cm_mad_strerror(err), "unknown") != 0);
	if (size < MAD_LEN)
		check(err == CM_MAD_TRUNCATED);
	if (err != CM_MAD_OK)
		return 0;
	check(cm_attr_name(m.hdr.attr_id)[0] != 'u');
	(void)cm_rej_reason_name(m.u.rej.reason);
	priv = m.priv;
	plen = m.priv_len;
	check(plen == cm_priv_max(m.hdr.attr_id));
	check(priv >= data + MAD_HDR_LEN && priv + plen == data + MAD_LEN);

	check(cm_mad_build(&m, out, &err) == 0 && err == CM_MAD_OK);
	/* the same header (bytes 18-19 are reserved) and private data */
	check(memcmp(out, data, 18) == 0 &&
	      memcmp(out + 20, data + 20, 4) == 0);
	check(memcmp(out + MAD_LEN - plen, priv, plen) == 0);
	check(cm_mad_parse(out, MAD_LEN, &m2) == CM_MAD_OK);
	check(cm_mad_build(&m2, again, &err) == 0);
	check(memcmp(out, again, MAD_LEN) == 0);
	return 0;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer target for the pcap reader.
 *
 * The input is parsed twice: once as a whole capture file, and once as the
 * body of a single record behind a valid global and record header (linktype
 * 252 or 247, chosen by the first byte), so the exported-PDU tag walker is
 * reached without the fuzzer first having to discover the pcap framing.
 *
 *   clang -fsanitize=fuzzer,address,undefined -I. -D_GNU_SOURCE \
 *       tests/fuzz/fuzz_pcap.c subnet/pcap.c -o /tmp/fzp
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "subnet/pcap.h"

#define FUZZ_MAX_RECORDS	1024

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_drain(const uint8_t *buf, size_t len)
{
	struct pcap_reader *r;
	struct timespec ts;
	const uint8_t *pkt;
	char err[256];
	size_t plen, orig, sum = 0;
	int i, rc;

	r = pcap_reader_open_mem(buf, len, "fuzz", err, sizeof(err));
	if (!r) {
		if (!memchr(err, '\0', sizeof(err)))
			abort();
		return;
	}
	for (i = 0; i < FUZZ_MAX_RECORDS; i++) {
		rc = pcap_reader_next(r, &pkt, &plen, err, sizeof(err));
		if (rc == 0)
			break;
		if (rc < 0) {
			if (!memchr(err, '\0', sizeof(err)))
				abort();
			continue;	/* tag errors are skippable */
		}
		/* the packet must lie inside the input */
		if (plen && (pkt < buf || pkt + plen > buf + len))
			abort();
		if (plen)
			sum += pkt[0] + pkt[plen - 1];
		pcap_reader_meta(r, &ts, &orig);
		if (orig < plen || ts.tv_nsec < 0 || ts.tv_nsec >= 1000000000)
			abort();
	}
	(void)sum;
	pcap_reader_close(r);
}

static void fuzz_put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, sizeof(v));	/* host order, as a writer would */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint16_t version[2] = { 2, 4 };
	uint8_t *img;
	size_t body;

	fuzz_drain(data, size);

	if (size < 1 || size - 1 > PCAP_MAX_CAPLEN)
		return 0;
	body = size - 1;
	img = malloc(24 + 16 + body);
	if (!img)
		return 0;
	fuzz_put32(img, 0xa1b2c3d4u);
	memcpy(img + 4, version, sizeof(version));
	fuzz_put32(img + 8, 0);
	fuzz_put32(img + 12, 0);
	fuzz_put32(img + 16, 0);
	fuzz_put32(img + 20, data[0] & 1 ? PCAP_LINKTYPE_INFINIBAND :
				       PCAP_LINKTYPE_UPPER_PDU);
	fuzz_put32(img + 24, 1);
	fuzz_put32(img + 28, 2);
	fuzz_put32(img + 32, (uint32_t)body);
	fuzz_put32(img + 36, (uint32_t)body);
	memcpy(img + 40, data + 1, body);
	fuzz_drain(img, 40 + body);
	free(img);
	return 0;
}

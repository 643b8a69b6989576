// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer target for what stays ours in subnet/pcap.c now that libpcap
 * reads the files: the exported-PDU tag walker (pcap_record_payload()) and
 * the reader's glue around pcap_next_ex() (record numbers, sticky framing
 * errors, timestamps, original lengths).
 *
 * The input is used three ways: as one record's bytes handed straight to
 * pcap_record_payload() (linktype 252 or 247 by the first byte), as the
 * body of a single record behind a valid pcap global and record header, and
 * as a whole capture file (pcap or pcapng, through libpcap: not ours, but
 * our glue must survive whatever it returns).
 *
 *   make fuzz && build-fuzz/fuzz_pcap tests/fuzz/seeds/pcap
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "subnet/pcap.h"

#define FUZZ_MAX_RECORDS	1024

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_check_err(const char *err, size_t errlen)
{
	if (!memchr(err, '\0', errlen) || !err[0])
		abort();
}

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
		fuzz_check_err(err, sizeof(err));
		return;
	}
	for (i = 0; i < FUZZ_MAX_RECORDS; i++) {
		rc = pcap_reader_next(r, &pkt, &plen, err, sizeof(err));
		if (rc == 0)
			break;
		if (rc < 0) {
			fuzz_check_err(err, sizeof(err));
			continue;	/* tag errors are skippable */
		}
		if (plen > PCAP_MAX_CAPLEN || (plen && !pkt))
			abort();
		if (plen)	/* ASan: both ends must be readable */
			sum += pkt[0] + pkt[plen - 1];
		pcap_reader_meta(r, &ts, &orig);
		if (orig < plen || ts.tv_nsec < 0 || ts.tv_nsec >= 1000000000)
			abort();
	}
	(void)sum;
	pcap_reader_close(r);
}

static void fuzz_payload(uint32_t linktype, const uint8_t *d, size_t n)
{
	char err[256];
	ssize_t off;

	off = pcap_record_payload(linktype, d, n, err, sizeof(err));
	if (off < 0)
		fuzz_check_err(err, sizeof(err));
	else if ((size_t)off > n)
		abort();
}

static void fuzz_put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, sizeof(v));	/* host order, as a writer would */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint16_t version[2] = { 2, 4 };
	uint32_t linktype;
	uint8_t *img;
	size_t body;

	fuzz_drain(data, size);

	if (size < 1 || size - 1 > PCAP_MAX_CAPLEN)
		return 0;
	body = size - 1;
	linktype = data[0] & 1 ? PCAP_LINKTYPE_INFINIBAND :
				 PCAP_LINKTYPE_UPPER_PDU;
	fuzz_payload(linktype, data + 1, body);
	img = malloc(24 + 16 + body);
	if (!img)
		return 0;
	fuzz_put32(img, 0xa1b2c3d4u);
	memcpy(img + 4, version, sizeof(version));
	fuzz_put32(img + 8, 0);
	fuzz_put32(img + 12, 0);
	fuzz_put32(img + 16, 0);
	fuzz_put32(img + 20, linktype);
	fuzz_put32(img + 24, 1);
	fuzz_put32(img + 28, 2);
	fuzz_put32(img + 32, (uint32_t)body);
	fuzz_put32(img + 36, (uint32_t)body);
	memcpy(img + 40, data + 1, body);
	fuzz_drain(img, 40 + body);
	free(img);
	return 0;
}

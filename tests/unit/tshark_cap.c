// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/time.h>
#include <cmocka.h>

#include "subnet/pcap.h"
#include "tests/unit/tshark_cap.h"

void tcap_write(const char *path,
		const uint8_t *(*frame)(unsigned int i, size_t *len),
		unsigned int n)
{
	struct timeval ts = { .tv_sec = 1700000000, .tv_usec = 0 };
	struct pcap_writer *w;
	const uint8_t *buf;
	unsigned int i;
	size_t len;

	w = pcap_writer_open(path, NULL, 0);
	assert_non_null(w);
	for (i = 0; i < n; i++) {
		ts.tv_usec = (suseconds_t)i;
		buf = frame(i, &len);
		assert_int_equal(pcap_writer_write(w, &ts, buf, len), 0);
	}
	assert_int_equal(pcap_writer_close(w), 0);
}

void tcap_field(const char *line, unsigned int n, char *out, size_t cap)
{
	const char *s = line, *e;
	size_t l;

	while (n--) {
		s = strchr(s, '\t');
		if (!s) {
			out[0] = '\0';
			return;
		}
		s++;
	}
	e = s + strcspn(s, "\t\n");
	l = (size_t)(e - s) < cap - 1 ? (size_t)(e - s) : cap - 1;
	memcpy(out, s, l);
	out[l] = '\0';
}

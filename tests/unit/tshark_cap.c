// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
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

FILE *tcap_fields(const char *path, const char *const *fields,
		  unsigned int n)
{
	char cmd[2048];
	size_t off;
	unsigned int i;
	FILE *f;

	off = (size_t)snprintf(cmd, sizeof(cmd),
			       "tshark -r %s -T fields -E occurrence=f", path);
	for (i = 0; i < n && off < sizeof(cmd); i++)
		off += (size_t)snprintf(cmd + off, sizeof(cmd) - off,
					" -e %s", fields[i]);
	assert_true(off + sizeof(" 2>/dev/null") <= sizeof(cmd));
	snprintf(cmd + off, sizeof(cmd) - off, " 2>/dev/null");
	f = popen(cmd, "r");
	assert_non_null(f);
	return f;
}

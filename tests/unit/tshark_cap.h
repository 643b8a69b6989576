/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * For the unit tests that hand tshark a capture of packets we built
 * (test_rc_tshark, test_sdp_tshark): writing the capture and reading
 * tshark's -T fields lines.
 */
#ifndef IBGW_TESTS_TSHARK_CAP_H
#define IBGW_TESTS_TSHARK_CAP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Write frames 0..n-1 (frame(i, &len) gives each) to path as
 * subnet/pcap.c writes ibfabricd's captures, one microsecond apart;
 * cmocka assertions on failure. */
void tcap_write(const char *path,
		const uint8_t *(*frame)(unsigned int i, size_t *len),
		unsigned int n);

/* tshark on path, one line per frame of the n fields (-T fields, first
 * occurrence each); pclose() it.  cmocka assertion on failure. */
FILE *tcap_fields(const char *path, const char *const *fields,
		  unsigned int n);

/* The n-th (0-based) tab-separated field of line into out ("" when the
 * line has fewer). */
void tcap_field(const char *line, unsigned int n, char *out, size_t cap);

#endif

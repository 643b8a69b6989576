// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unit tests for subnet/pcap.c: writer/reader round trip, both byte orders,
 * nanosecond files, linktype 247, pcapng, and damaged files (libpcap's
 * errors for the framing, ours for the exported-PDU tags).  The last test
 * hands a written file to tshark when it is installed, to prove the
 * exported-PDU encoding is what Wireshark reads; it is skipped otherwise.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "subnet/pcap.h"

/* A native IB UD SEND_ONLY packet: LRH BTH DETH, 8 bytes payload, ICRC VCRC */
static const uint8_t ud_pkt[] = {
	/* LRH: VL0 LVer0, SL0 LNH2 (BTH), DLID 3, PktLen 10 words, SLID 2 */
	0x00, 0x02, 0x00, 0x03, 0x00, 0x0a, 0x00, 0x02,
	/* BTH: opcode 0x64, flags 0, P_Key ffff, rsvd, DestQP 0x48, A 0, PSN 0 */
	0x64, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x48,
	0x00, 0x00, 0x00, 0x00,
	/* DETH: Q_Key 0x00000b1b, rsvd, SrcQP 0x49 */
	0x00, 0x00, 0x0b, 0x1b, 0x00, 0x00, 0x00, 0x49,
	/* payload */
	'i', 'b', 'g', 'w', 0x01, 0x02, 0x03, 0x04,
	/* ICRC (not checked by tshark), VCRC */
	0xde, 0xad, 0xbe, 0xef, 0x12, 0x34,
};

/* The tag block every linktype-252 record of ours starts with */
static const uint8_t ib_tags[] = {
	0x00, 0x0c, 0x00, 0x0c, 'i', 'n', 'f', 'i', 'n', 'i', 'b', 'a',
	'n', 'd', 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
};

/* ---- building capture images in memory ---- */

struct img {
	uint8_t d[8192];
	size_t n;
	int be;		/* write header fields big-endian */
};

static void put(struct img *m, const void *p, size_t n)
{
	assert_true(m->n + n <= sizeof(m->d));
	if (n)	/* p may be NULL then */
		memcpy(m->d + m->n, p, n);
	m->n += n;
}

static void put16(struct img *m, uint16_t v)
{
	uint8_t b[2];

	if (m->be) {
		b[0] = (uint8_t)(v >> 8);
		b[1] = (uint8_t)v;
	} else {
		b[0] = (uint8_t)v;
		b[1] = (uint8_t)(v >> 8);
	}
	put(m, b, 2);
}

static void put32(struct img *m, uint32_t v)
{
	if (m->be) {
		put16(m, (uint16_t)(v >> 16));
		put16(m, (uint16_t)v);
	} else {
		put16(m, (uint16_t)v);
		put16(m, (uint16_t)(v >> 16));
	}
}

static void global_hdr(struct img *m, int be, int nsec, uint32_t snaplen,
		       uint32_t linktype)
{
	m->n = 0;
	m->be = be;
	put32(m, nsec ? 0xa1b23c4du : 0xa1b2c3d4u);
	put16(m, 2);
	put16(m, 4);
	put32(m, 0);
	put32(m, 0);
	put32(m, snaplen);
	put32(m, linktype);
}

static void rec_hdr(struct img *m, uint32_t sec, uint32_t sub,
		    uint32_t caplen, uint32_t orig)
{
	put32(m, sec);
	put32(m, sub);
	put32(m, caplen);
	put32(m, orig);
}

/* a linktype 252 record holding ud_pkt behind TAGS */
static void rec_252(struct img *m, uint32_t sec, uint32_t sub,
		    const void *tags, size_t tlen)
{
	uint32_t n = (uint32_t)(tlen + sizeof(ud_pkt));

	rec_hdr(m, sec, sub, n, n);
	put(m, tags, tlen);
	put(m, ud_pkt, sizeof(ud_pkt));
}

/* pcapng: a section header and one interface of LINKTYPE, SNAPLEN */
static void ng_head(struct img *m, int be, uint16_t linktype,
		    uint32_t snaplen)
{
	m->n = 0;
	m->be = be;
	put32(m, 0x0a0d0d0au);		/* section header block */
	put32(m, 28);
	put32(m, 0x1a2b3c4du);		/* byte-order magic */
	put16(m, 1);
	put16(m, 0);
	put32(m, 0xffffffffu);		/* section length: unknown */
	put32(m, 0xffffffffu);
	put32(m, 28);
	put32(m, 1);			/* interface description block */
	put32(m, 20);
	put16(m, linktype);
	put16(m, 0);
	put32(m, snaplen);
	put32(m, 20);
}

/* pcapng: an enhanced packet block, microseconds (the default resolution) */
static void ng_epb(struct img *m, uint64_t usec, const void *tags,
		   size_t tlen, const void *pkt, size_t plen)
{
	static const uint8_t zero[3];
	uint32_t caplen = (uint32_t)(tlen + plen);
	uint32_t total = 32 + ((caplen + 3) & ~3u);

	put32(m, 6);
	put32(m, total);
	put32(m, 0);			/* interface 0 */
	put32(m, (uint32_t)(usec >> 32));
	put32(m, (uint32_t)usec);
	put32(m, caplen);
	put32(m, caplen);
	put(m, tags, tlen);
	put(m, pkt, plen);
	put(m, zero, ((caplen + 3) & ~3u) - caplen);
	put32(m, total);
}

/* Open IMG; expect the open to fail with an error containing WANT. */
static void expect_open_error(const struct img *m, const char *want)
{
	char err[256] = "";
	struct pcap_reader *r;

	r = pcap_reader_open_mem(m->d, m->n, "img.pcap", err, sizeof(err));
	if (r)
		pcap_reader_close(r);
	assert_null(r);
	if (!strstr(err, want))
		fail_msg("error '%s' lacks '%s'", err, want);
}

/* Open IMG; expect record 1 to fail with an error containing WANT. */
static struct pcap_reader *expect_rec_error(const struct img *m,
					    const char *want)
{
	char err[256] = "";
	struct pcap_reader *r;
	const uint8_t *p;
	size_t len;

	r = pcap_reader_open_mem(m->d, m->n, "img.pcap", err, sizeof(err));
	assert_non_null(r);
	assert_int_equal(pcap_reader_next(r, &p, &len, err, sizeof(err)), -1);
	if (!strstr(err, want))
		fail_msg("error '%s' lacks '%s'", err, want);
	return r;
}

static void tmp_path(char *path, size_t n)
{
	int fd;

	snprintf(path, n, "/tmp/test_pcap.XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
}

static size_t slurp(const char *path, uint8_t *buf, size_t cap)
{
	FILE *f = fopen(path, "rb");
	size_t n;

	assert_non_null(f);
	n = fread(buf, 1, cap, f);
	fclose(f);
	return n;
}

/* ---- tests ---- */

static void test_roundtrip_file(void **state)
{
	struct timeval ts = { .tv_sec = 1700000000, .tv_usec = 123456 };
	struct pcap_writer *w;
	struct pcap_reader *r;
	struct timespec rts;
	char path[64], err[256];
	const uint8_t *p;
	uint8_t big[300];
	size_t len, orig;

	(void)state;
	memset(big, 0x5a, sizeof(big));
	tmp_path(path, sizeof(path));
	w = pcap_writer_open(path, err, sizeof(err));
	assert_non_null(w);
	assert_int_equal(pcap_writer_write(w, &ts, ud_pkt, sizeof(ud_pkt)), 0);
	assert_int_equal(pcap_writer_write(w, NULL, big, sizeof(big)), 0);
	assert_int_equal(pcap_writer_write(w, &ts, NULL, 0), 0);
	assert_int_equal(pcap_writer_flush(w), 0);
	assert_int_equal(pcap_writer_close(w), 0);

	r = pcap_reader_open(path, err, sizeof(err));
	assert_non_null(r);
	assert_int_equal(pcap_reader_linktype(r), PCAP_LINKTYPE_UPPER_PDU);

	assert_int_equal(pcap_reader_next(r, &p, &len, err, sizeof(err)), 1);
	assert_int_equal(len, sizeof(ud_pkt));
	assert_memory_equal(p, ud_pkt, len);
	pcap_reader_meta(r, &rts, &orig);
	assert_int_equal(rts.tv_sec, 1700000000);
	assert_int_equal(rts.tv_nsec, 123456000);
	assert_int_equal(orig, sizeof(ud_pkt));

	assert_int_equal(pcap_reader_next(r, &p, &len, err, sizeof(err)), 1);
	assert_int_equal(len, sizeof(big));
	assert_memory_equal(p, big, len);
	pcap_reader_meta(r, &rts, NULL);
	assert_true(rts.tv_sec > 1700000000);	/* "now" */

	assert_int_equal(pcap_reader_next(r, &p, &len, err, sizeof(err)), 1);
	assert_int_equal(len, 0);

	assert_int_equal(pcap_reader_next(r, &p, &len, err, sizeof(err)), 0);
	assert_int_equal(pcap_reader_next(r, &p, &len, err, sizeof(err)), 0);
	pcap_reader_close(r);
	unlink(path);
}

static void test_writer_bytes(void **state)
{
	struct timeval ts = { .tv_sec = 1, .tv_usec = 2 };
	struct pcap_writer *w;
	uint8_t buf[256];
	struct img m;
	char path[64];
	size_t n;

	(void)state;
	tmp_path(path, sizeof(path));
	w = pcap_writer_open(path, NULL, 0);
	assert_non_null(w);
	assert_int_equal(pcap_writer_write(w, &ts, ud_pkt, sizeof(ud_pkt)), 0);
	assert_int_equal(pcap_writer_close(w), 0);
	n = slurp(path, buf, sizeof(buf));
	unlink(path);

	/* the writer uses host order; rebuild the expected image the same way */
	global_hdr(&m, __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__, 0, 65535, 252);
	rec_252(&m, 1, 2, ib_tags, sizeof(ib_tags));
	assert_int_equal(n, m.n);
	assert_memory_equal(buf, m.d, n);
	assert_int_equal(n, 24 + 16 + 20 + sizeof(ud_pkt));
}

static void test_writer_truncates_to_snaplen(void **state)
{
	struct timeval ts = { .tv_sec = 5, .tv_usec = 0 };
	static uint8_t huge[70000];
	struct pcap_writer *w;
	struct pcap_reader *r;
	char path[64], err[256];
	const uint8_t *p;
	size_t len, orig;

	(void)state;
	huge[0] = 0x11;
	huge[sizeof(huge) - 1] = 0x22;
	tmp_path(path, sizeof(path));
	w = pcap_writer_open(path, err, sizeof(err));
	assert_non_null(w);
	assert_int_equal(pcap_writer_write(w, &ts, huge, sizeof(huge)), 0);
	assert_int_equal(pcap_writer_close(w), 0);
	r = pcap_reader_open(path, err, sizeof(err));
	assert_non_null(r);
	assert_int_equal(pcap_reader_next(r, &p, &len, err, sizeof(err)), 1);
	assert_int_equal(len, 65535 - sizeof(ib_tags));
	assert_int_equal(p[0], 0x11);
	pcap_reader_meta(r, NULL, &orig);
	assert_int_equal(orig, sizeof(huge));
	pcap_reader_close(r);
	unlink(path);
}

static void test_writer_errors(void **state)
{
	struct timeval bad = { .tv_sec = 1, .tv_usec = 1000000 };
	struct pcap_writer *w;
	char path[64], err[256] = "";

	(void)state;
	assert_null(pcap_writer_open("/nonexistent-dir/x.pcap", err,
				     sizeof(err)));
	assert_non_null(strstr(err, "/nonexistent-dir/x.pcap: "));
	if (access("/dev/full", W_OK) == 0) {
		assert_null(pcap_writer_open("/dev/full", err, sizeof(err)));
		assert_string_equal(err, "/dev/full: No space left on device");
	}

	tmp_path(path, sizeof(path));
	w = pcap_writer_open(path, err, sizeof(err));
	assert_non_null(w);
	assert_int_equal(pcap_writer_write(w, &bad, ud_pkt, 4), -1);
	bad.tv_usec = 0;
	bad.tv_sec = -1;
	assert_int_equal(pcap_writer_write(w, &bad, ud_pkt, 4), -1);
	assert_int_equal(pcap_writer_write(w, NULL, NULL, 4), -1);
	assert_int_equal(pcap_writer_close(w), 0);
	assert_int_equal(pcap_writer_close(NULL), 0);
	unlink(path);
}

static void read_two(struct img *m, int nsec)
{
	struct pcap_reader *r;
	struct timespec ts;
	char err[256];
	const uint8_t *p;
	size_t len;

	r = pcap_reader_open_mem(m->d, m->n, "img.pcap", err, sizeof(err));
	assert_non_null(r);
	assert_int_equal(pcap_reader_next(r, &p, &len, err, sizeof(err)), 1);
	assert_int_equal(len, sizeof(ud_pkt));
	assert_memory_equal(p, ud_pkt, len);
	pcap_reader_meta(r, &ts, NULL);
	assert_int_equal(ts.tv_sec, 100);
	assert_int_equal(ts.tv_nsec, nsec ? 999999999 : 999999000);
	assert_int_equal(pcap_reader_next(r, &p, &len, err, sizeof(err)), 1);
	assert_memory_equal(p, ud_pkt, len);
	pcap_reader_meta(r, &ts, NULL);
	assert_int_equal(ts.tv_sec, 101);
	assert_int_equal(ts.tv_nsec, nsec ? 7 : 7000);
	assert_int_equal(pcap_reader_next(r, &p, &len, err, sizeof(err)), 0);
	pcap_reader_close(r);
}

static void test_both_byte_orders(void **state)
{
	struct img m;
	int be;

	(void)state;
	for (be = 0; be <= 1; be++) {
		global_hdr(&m, be, 0, 65535, 252);
		rec_252(&m, 100, 999999, ib_tags, sizeof(ib_tags));
		rec_252(&m, 101, 7, ib_tags, sizeof(ib_tags));
		read_two(&m, 0);
	}
}

static void test_nsec_magic(void **state)
{
	struct img m;
	int be;

	(void)state;
	for (be = 0; be <= 1; be++) {
		global_hdr(&m, be, 1, 65535, 252);
		rec_252(&m, 100, 999999999, ib_tags, sizeof(ib_tags));
		rec_252(&m, 101, 7, ib_tags, sizeof(ib_tags));
		read_two(&m, 1);
	}
}

static void test_other_tags_and_unpadded_name(void **state)
{
	/* options-length tag, an IPv4 tag, a name without padding */
	static const uint8_t tags[] = {
		0x00, 0x0a, 0x00, 0x04, 0x00, 0x00, 0x00, 0x1a,
		0x00, 0x14, 0x00, 0x04, 10, 0, 0, 1,
		0x00, 0x0c, 0x00, 0x0a, 'i', 'n', 'f', 'i', 'n', 'i', 'b',
		'a', 'n', 'd',
		0x00, 0x00, 0x00, 0x00,
	};
	struct pcap_reader *r;
	const uint8_t *p;
	struct img m;
	size_t len;

	(void)state;
	global_hdr(&m, 0, 0, 0, 252);	/* snaplen 0: no limit but ours */
	rec_252(&m, 1, 0, tags, sizeof(tags));
	r = pcap_reader_open_mem(m.d, m.n, NULL, NULL, 0);
	assert_non_null(r);
	assert_int_equal(pcap_reader_next(r, &p, &len, NULL, 0), 1);
	assert_int_equal(len, sizeof(ud_pkt));
	assert_memory_equal(p, ud_pkt, len);
	pcap_reader_close(r);
}

static void test_linktype_247(void **state)
{
	struct pcap_reader *r;
	char err[256];
	const uint8_t *p;
	struct img m;
	size_t len;

	(void)state;
	global_hdr(&m, 1, 0, 4096, 247);
	rec_hdr(&m, 1, 0, sizeof(ud_pkt), sizeof(ud_pkt));
	put(&m, ud_pkt, sizeof(ud_pkt));
	r = pcap_reader_open_mem(m.d, m.n, "ib.pcap", err, sizeof(err));
	assert_non_null(r);
	assert_int_equal(pcap_reader_linktype(r), PCAP_LINKTYPE_INFINIBAND);
	assert_int_equal(pcap_reader_next(r, &p, &len, err, sizeof(err)), 1);
	assert_int_equal(len, sizeof(ud_pkt));
	assert_memory_equal(p, ud_pkt, len);
	assert_int_equal(pcap_reader_next(r, &p, &len, err, sizeof(err)), 0);
	pcap_reader_close(r);
}

static void test_bad_global_header(void **state)
{
	char err[256] = "";
	struct img m;

	(void)state;
	global_hdr(&m, 0, 0, 65535, 252);
	m.n = 10;
	expect_open_error(&m, "img.pcap: truncated dump file; tried to read 24 file header bytes");
	m.n = 0;
	expect_open_error(&m, "img.pcap: empty, not a capture file");

	global_hdr(&m, 0, 0, 65535, 252);
	m.d[0] ^= 0xff;
	expect_open_error(&m, "img.pcap: unknown file format");
	/* a pcapng section header whose length is a pcap header's fields */
	global_hdr(&m, 0, 0, 65535, 252);
	memcpy(m.d, "\x0a\x0d\x0d\x0a", 4);
	expect_open_error(&m, "img.pcap: ");

	global_hdr(&m, 0, 0, 65535, 1);
	expect_open_error(&m, "img.pcap: unsupported linktype 1");
	global_hdr(&m, 1, 0, 65535, 242);
	expect_open_error(&m, "unsupported linktype 242");

	global_hdr(&m, 0, 0, 65535, 252);
	m.d[4] = 3;
	expect_open_error(&m, "unsupported pcap savefile version 3.4");

	assert_null(pcap_reader_open_mem(NULL, 0, "x", err, sizeof(err)));
	assert_null(pcap_reader_open("/nonexistent-dir/x.pcap", err,
				     sizeof(err)));
	assert_string_equal(err,
			    "/nonexistent-dir/x.pcap: No such file or directory");
}

static void test_truncated_records(void **state)
{
	struct pcap_reader *r;
	char err[256];
	const uint8_t *p;
	struct img m;
	size_t len, full;

	(void)state;
	global_hdr(&m, 0, 0, 65535, 252);
	rec_252(&m, 1, 0, ib_tags, sizeof(ib_tags));
	full = m.n;

	m.n = 24 + 7;
	r = expect_rec_error(&m,
		"img.pcap: record 1: truncated dump file; tried to read 16 header bytes, only got 7");
	pcap_reader_close(r);

	m.n = full - 1;
	r = expect_rec_error(&m, "img.pcap: record 1: truncated dump file; tried to read 62 captured bytes, only got 61");
	/* framing is lost: the error sticks */
	assert_int_equal(pcap_reader_next(r, &p, &len, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "record 1: truncated"));
	pcap_reader_close(r);

	/* second record truncated; the first still reads */
	m.n = full;
	rec_252(&m, 2, 0, ib_tags, sizeof(ib_tags));
	m.n -= 3;
	r = pcap_reader_open_mem(m.d, m.n, "img.pcap", err, sizeof(err));
	assert_non_null(r);
	assert_int_equal(pcap_reader_next(r, &p, &len, err, sizeof(err)), 1);
	assert_int_equal(pcap_reader_next(r, &p, &len, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "img.pcap: record 2: truncated"));
	pcap_reader_close(r);
}

static void test_truncated_file_record(void **state)
{
	struct pcap_reader *r;
	char path[64], err[256];
	const uint8_t *p;
	struct img m;
	size_t len;
	FILE *f;

	(void)state;
	global_hdr(&m, 1, 0, 65535, 252);
	rec_252(&m, 1, 0, ib_tags, sizeof(ib_tags));
	rec_252(&m, 2, 0, ib_tags, sizeof(ib_tags));
	tmp_path(path, sizeof(path));
	f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(m.d, 1, m.n - 5, f), m.n - 5);
	fclose(f);

	r = pcap_reader_open(path, err, sizeof(err));
	assert_non_null(r);
	assert_int_equal(pcap_reader_next(r, &p, &len, err, sizeof(err)), 1);
	assert_memory_equal(p, ud_pkt, sizeof(ud_pkt));
	assert_int_equal(pcap_reader_next(r, &p, &len, err, sizeof(err)), -1);
	assert_non_null(strstr(err, ": record 2: truncated dump file"));
	assert_int_equal(strncmp(err, path, strlen(path)), 0);
	pcap_reader_close(r);
	unlink(path);
}

static void test_absurd_caplen(void **state)
{
	struct pcap_reader *r;
	struct img m;

	(void)state;
	global_hdr(&m, 1, 0, 0xffffffffu, 252);
	rec_hdr(&m, 0, 0, 0xffffffffu, 0);
	r = expect_rec_error(&m, "record 1: invalid packet capture length 4294967295");
	pcap_reader_close(r);

	global_hdr(&m, 0, 1, 0, 247);
	rec_hdr(&m, 0, 0, 256 * 1024 + 1, 0);
	r = expect_rec_error(&m, "record 1: invalid packet capture length 262145");
	pcap_reader_close(r);
}

/* A record longer than the file's snaplen is cut to it (libpcap's way
 * with writers that overran their own snaplen); the next one still reads. */
static void test_record_over_snaplen(void **state)
{
	struct pcap_reader *r;
	char err[256];
	const uint8_t *p;
	struct img m;
	size_t len;

	(void)state;
	global_hdr(&m, 0, 0, 40, 252);
	rec_252(&m, 1, 0, ib_tags, sizeof(ib_tags));
	rec_252(&m, 2, 0, ib_tags, sizeof(ib_tags));
	r = pcap_reader_open_mem(m.d, m.n, "img.pcap", err, sizeof(err));
	assert_non_null(r);
	assert_int_equal(pcap_reader_next(r, &p, &len, err, sizeof(err)), 1);
	assert_int_equal(len, 40 - sizeof(ib_tags));
	assert_memory_equal(p, ud_pkt, len);
	assert_int_equal(pcap_reader_next(r, &p, &len, err, sizeof(err)), 1);
	assert_int_equal(len, 40 - sizeof(ib_tags));
	assert_int_equal(pcap_reader_next(r, &p, &len, err, sizeof(err)), 0);
	pcap_reader_close(r);
}

/* pcapng, as tshark and dumpcap write by default, in both byte orders */
static void test_pcapng(void **state)
{
	struct pcap_reader *r;
	struct timespec ts;
	char err[256];
	const uint8_t *p;
	struct img m;
	size_t len;
	int be;

	(void)state;
	for (be = 0; be <= 1; be++) {
		ng_head(&m, be, 252, 65535);
		ng_epb(&m, 100999999ull, ib_tags, sizeof(ib_tags), ud_pkt,
		       sizeof(ud_pkt));
		ng_epb(&m, 101000007ull, ib_tags, sizeof(ib_tags), ud_pkt,
		       sizeof(ud_pkt) - 1);	/* needs padding */
		r = pcap_reader_open_mem(m.d, m.n, "img.pcapng", err,
					 sizeof(err));
		if (!r)
			fail_msg("%s", err);
		assert_int_equal(pcap_reader_linktype(r),
				 PCAP_LINKTYPE_UPPER_PDU);
		assert_int_equal(pcap_reader_next(r, &p, &len, err,
						  sizeof(err)), 1);
		assert_int_equal(len, sizeof(ud_pkt));
		assert_memory_equal(p, ud_pkt, len);
		pcap_reader_meta(r, &ts, NULL);
		assert_int_equal(ts.tv_sec, 100);
		assert_int_equal(ts.tv_nsec, 999999000);
		assert_int_equal(pcap_reader_next(r, &p, &len, err,
						  sizeof(err)), 1);
		assert_int_equal(len, sizeof(ud_pkt) - 1);
		pcap_reader_meta(r, &ts, NULL);
		assert_int_equal(ts.tv_sec, 101);
		assert_int_equal(ts.tv_nsec, 7000);
		assert_int_equal(pcap_reader_next(r, &p, &len, err,
						  sizeof(err)), 0);
		pcap_reader_close(r);
	}

	ng_head(&m, 0, 247, 0);
	ng_epb(&m, 1, NULL, 0, ud_pkt, sizeof(ud_pkt));
	r = pcap_reader_open_mem(m.d, m.n, "ib.pcapng", err, sizeof(err));
	assert_non_null(r);
	assert_int_equal(pcap_reader_linktype(r), PCAP_LINKTYPE_INFINIBAND);
	assert_int_equal(pcap_reader_next(r, &p, &len, err, sizeof(err)), 1);
	assert_memory_equal(p, ud_pkt, sizeof(ud_pkt));
	pcap_reader_close(r);
}

static void test_bad_pcapng(void **state)
{
	struct pcap_reader *r;
	char err[256];
	const uint8_t *p;
	struct img m;
	size_t len, full;

	(void)state;
	ng_head(&m, 0, 1, 65535);
	expect_open_error(&m, "img.pcap: unsupported linktype 1");

	/* cut inside the interface block */
	ng_head(&m, 0, 252, 65535);
	m.n -= 6;
	expect_open_error(&m, "img.pcap: truncated pcapng dump file");

	/* a block length that is no multiple of 4 */
	ng_head(&m, 1, 252, 65535);
	m.d[28 + 7] = 21;
	m.d[28 + 19] = 21;
	expect_open_error(&m, "img.pcap: block in pcapng dump file has a length of 21");

	/* the second packet cut short: the first reads, the error sticks */
	ng_head(&m, 0, 252, 65535);
	ng_epb(&m, 1, ib_tags, sizeof(ib_tags), ud_pkt, sizeof(ud_pkt));
	full = m.n;
	ng_epb(&m, 2, ib_tags, sizeof(ib_tags), ud_pkt, sizeof(ud_pkt));
	m.n -= 9;
	r = pcap_reader_open_mem(m.d, m.n, "img.pcap", err, sizeof(err));
	assert_non_null(r);
	assert_int_equal(pcap_reader_next(r, &p, &len, err, sizeof(err)), 1);
	assert_int_equal(pcap_reader_next(r, &p, &len, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "img.pcap: record 2: truncated pcapng dump file"));
	assert_int_equal(pcap_reader_next(r, &p, &len, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "img.pcap: record 2: truncated pcapng"));
	pcap_reader_close(r);

	/* a packet claiming more bytes than its block holds */
	m.n = full;
	m.d[28 + 20 + 20] = 0xff;	/* caplen, little-endian low byte */
	r = expect_rec_error(&m, "img.pcap: record 1: block of type 6 in pcapng");
	pcap_reader_close(r);

	/* an unknown block type is skipped; a bad one after it is not */
	ng_head(&m, 0, 252, 65535);
	put32(&m, 0x0badu);
	put32(&m, 12);
	put32(&m, 12);
	ng_epb(&m, 1, ib_tags, sizeof(ib_tags), ud_pkt, sizeof(ud_pkt));
	put32(&m, 6);
	put32(&m, 4);			/* shorter than a block header */
	r = pcap_reader_open_mem(m.d, m.n, "img.pcap", err, sizeof(err));
	assert_non_null(r);
	assert_int_equal(pcap_reader_next(r, &p, &len, err, sizeof(err)), 1);
	assert_int_equal(pcap_reader_next(r, &p, &len, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "img.pcap: record 2: block in pcapng dump file has a length of 4"));
	pcap_reader_close(r);

	/* tag errors inside pcapng are ours, as in pcap */
	ng_head(&m, 0, 252, 65535);
	ng_epb(&m, 1, NULL, 0, ud_pkt, sizeof(ud_pkt));
	r = expect_rec_error(&m, "img.pcap: record 1: exported PDU tag 612");
	pcap_reader_close(r);
}

static void test_bad_tags(void **state)
{
	static const uint8_t overrun[] = {
		0x00, 0x0c, 0x00, 0xf0, 'i', 'n', 'f', 'i',
	};
	static const uint8_t no_end[] = {
		0x00, 0x0c, 0x00, 0x0c, 'i', 'n', 'f', 'i', 'n', 'i', 'b',
		'a', 'n', 'd', 0x00, 0x00,
	};
	static const uint8_t half_hdr[] = {
		0x00, 0x0c, 0x00, 0x0a, 'i', 'n', 'f', 'i', 'n', 'i', 'b',
		'a', 'n', 'd', 0x00,
	};
	static const uint8_t wrong_name[] = {
		0x00, 0x0c, 0x00, 0x04, 's', 'i', 'p', 0x00,
		0x00, 0x00, 0x00, 0x00,
	};
	static const uint8_t unnamed[] = { 0x00, 0x00, 0x00, 0x00 };
	struct pcap_reader *r;
	char err[256];
	const uint8_t *p;
	struct img m;
	size_t len;

	(void)state;
	global_hdr(&m, 0, 0, 65535, 252);
	rec_hdr(&m, 0, 0, sizeof(overrun), sizeof(overrun));
	put(&m, overrun, sizeof(overrun));
	r = expect_rec_error(&m,
		"record 1: exported PDU tag 12 length 240 overruns the record (4 bytes left)");
	pcap_reader_close(r);

	global_hdr(&m, 0, 0, 65535, 252);
	rec_hdr(&m, 0, 0, sizeof(no_end), sizeof(no_end));
	put(&m, no_end, sizeof(no_end));
	r = expect_rec_error(&m, "record 1: exported PDU tags lack the end tag");
	pcap_reader_close(r);

	global_hdr(&m, 0, 0, 65535, 252);
	rec_hdr(&m, 0, 0, sizeof(half_hdr), sizeof(half_hdr));
	put(&m, half_hdr, sizeof(half_hdr));
	r = expect_rec_error(&m, "exported PDU tag header truncated at offset 14");
	pcap_reader_close(r);

	global_hdr(&m, 0, 0, 65535, 252);
	rec_252(&m, 0, 0, wrong_name, sizeof(wrong_name));
	r = expect_rec_error(&m, "exported PDU for dissector 'sip', not infiniband");
	pcap_reader_close(r);

	global_hdr(&m, 0, 0, 65535, 252);
	rec_252(&m, 0, 0, unnamed, sizeof(unnamed));
	/* a good record after the bad one: tag errors do not lose framing */
	rec_252(&m, 9, 0, ib_tags, sizeof(ib_tags));
	r = expect_rec_error(&m, "record 1: exported PDU has no dissector name");
	assert_int_equal(pcap_reader_next(r, &p, &len, err, sizeof(err)), 1);
	assert_memory_equal(p, ud_pkt, sizeof(ud_pkt));
	assert_int_equal(pcap_reader_next(r, &p, &len, err, sizeof(err)), 0);
	pcap_reader_close(r);

	/* an empty 252 record has no end tag either */
	global_hdr(&m, 1, 0, 65535, 252);
	rec_hdr(&m, 0, 0, 0, 0);
	r = expect_rec_error(&m, "lack the end tag");
	pcap_reader_close(r);
}

/* Let tshark decode a file we wrote; skip when tshark is not installed. */
static void test_tshark_decodes(void **state)
{
	struct timeval ts = { .tv_sec = 1700000000, .tv_usec = 1 };
	static const unsigned long want[] = { 3, 0x48, 0xb1b, 0x49, 10 };
	struct pcap_writer *w;
	char path[64], cmd[256], out[256] = "";
	char *s = out, *end;
	size_t n, i;
	FILE *f;

	(void)state;
	if (system("command -v tshark >/dev/null 2>&1") != 0)
		skip();
	tmp_path(path, sizeof(path));
	w = pcap_writer_open(path, NULL, 0);
	assert_non_null(w);
	assert_int_equal(pcap_writer_write(w, &ts, ud_pkt, sizeof(ud_pkt)), 0);
	assert_int_equal(pcap_writer_close(w), 0);

	snprintf(cmd, sizeof(cmd),
		 "tshark -r %s -T fields -e infiniband.lrh.dlid "
		 "-e infiniband.bth.destqp -e infiniband.deth.q_key "
		 "-e infiniband.deth.srcqp -e infiniband.lrh.pktlen "
		 "2>/dev/null", path);
	f = popen(cmd, "r");
	assert_non_null(f);
	n = fread(out, 1, sizeof(out) - 1, f);
	out[n] = '\0';
	pclose(f);
	unlink(path);
	/* compare values, not tshark's display widths (Q_Key shows 64-bit) */
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		unsigned long v = strtoul(s, &end, 0);

		if (end == s || v != want[i])
			fail_msg("tshark field %zu: got '%s'", i, out);
		s = end + (*end == '\t');
	}
	assert_string_equal(s, "\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip_file),
		cmocka_unit_test(test_writer_bytes),
		cmocka_unit_test(test_writer_truncates_to_snaplen),
		cmocka_unit_test(test_writer_errors),
		cmocka_unit_test(test_both_byte_orders),
		cmocka_unit_test(test_nsec_magic),
		cmocka_unit_test(test_other_tags_and_unpadded_name),
		cmocka_unit_test(test_linktype_247),
		cmocka_unit_test(test_bad_global_header),
		cmocka_unit_test(test_truncated_records),
		cmocka_unit_test(test_truncated_file_record),
		cmocka_unit_test(test_absurd_caplen),
		cmocka_unit_test(test_record_over_snaplen),
		cmocka_unit_test(test_pcapng),
		cmocka_unit_test(test_bad_pcapng),
		cmocka_unit_test(test_bad_tags),
		cmocka_unit_test(test_tshark_decodes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

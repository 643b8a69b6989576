// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Classic pcap writer and reader for InfiniBand packets; see pcap.h.
 *
 * Format references: the pcap file format (draft-ietf-opsawg-pcap) and
 * Wireshark's wsutil/exported_pdu_tlvs.h for linktype 252.
 */
#include "conf/errbuf.h"
#include "inet/byteorder.h"
#include "subnet/pcap.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#define PCAP_MAGIC_USEC		0xa1b2c3d4u
#define PCAP_MAGIC_NSEC		0xa1b23c4du
#define PCAP_MAGIC_USEC_SWAP	0xd4c3b2a1u
#define PCAP_MAGIC_NSEC_SWAP	0x4d3cb2a1u
#define PCAPNG_MAGIC		0x0a0d0d0au	/* section header block */

#define PCAP_GLOBAL_HDR_LEN	24
#define PCAP_REC_HDR_LEN	16
#define PCAP_VERSION_MAJOR	2
#define PCAP_VERSION_MINOR	4

/* Upper 6 bits of the linktype field carry FCS information. */
#define PCAP_LINKTYPE_MASK	0x03ffffffu

#define IB_DISSECTOR_NAME	"infiniband"

/*
 * Tags written before every packet: the dissector name TLV, its value
 * NUL-padded to a multiple of 4 with the padding counted in the length (as
 * epan/exported_pdu.c writes it), then the end-of-options TLV.
 */
static const uint8_t pcap_ib_tags[] = {
	0x00, PCAP_EXP_PDU_TAG_DISSECTOR_NAME, 0x00, 12,
	'i', 'n', 'f', 'i', 'n', 'i', 'b', 'a', 'n', 'd', 0x00, 0x00,
	0x00, PCAP_EXP_PDU_TAG_END_OF_OPT, 0x00, 0x00,
};

struct pcap_writer {
	FILE *fp;
};

struct pcap_reader {
	char *name;
	FILE *fp;		/* file reader */
	const uint8_t *mem;	/* memory reader */
	size_t mem_len;
	size_t mem_off;
	uint8_t *buf;		/* file reader: current record */
	size_t buf_cap;
	bool swap;
	bool nsec;
	uint32_t snaplen;
	uint32_t linktype;
	uint64_t recno;		/* 1-based number of the current record */
	bool failed;		/* framing broken: no further records */
	char errmsg[256];
	struct timespec ts;
	size_t orig_len;
};

/* ---- writer ---- */

struct pcap_writer *pcap_writer_open(const char *path, char *err,
				     size_t errlen)
{
	struct pcap_writer *w;
	/* written in host order, as libpcap does; readers detect it by magic */
	uint32_t hdr[6] = {
		PCAP_MAGIC_USEC,
		0,			/* version, filled below */
		0,			/* thiszone */
		0,			/* sigfigs */
		PCAP_WRITER_SNAPLEN,
		PCAP_LINKTYPE_UPPER_PDU,
	};
	uint16_t ver[2] = { PCAP_VERSION_MAJOR, PCAP_VERSION_MINOR };

	memcpy(&hdr[1], ver, sizeof(ver));	/* two host-order u16 fields */
	if (!path) {
		errbuf_fail(err, errlen, EINVAL, "pcap: no file name");
		return NULL;
	}
	w = calloc(1, sizeof(*w));
	if (!w) {
		errbuf_fail(err, errlen, errno, "%s: %s", path, strerror(errno));
		return NULL;
	}
	w->fp = fopen(path, "wb");
	if (!w->fp) {
		int e = errno;

		free(w);
		errbuf_fail(err, errlen, e, "%s: %s", path, strerror(e));
		return NULL;
	}
	if (fwrite(hdr, sizeof(hdr), 1, w->fp) != 1 || fflush(w->fp)) {
		int e = errno;

		fclose(w->fp);
		free(w);
		errbuf_fail(err, errlen, e, "%s: %s", path, strerror(e));
		return NULL;
	}
	return w;
}

int pcap_writer_write(struct pcap_writer *w, const struct timeval *ts,
		      const void *pkt, size_t len)
{
	struct timespec now;
	uint32_t rec[4];
	uint64_t sec, usec;
	size_t caplen, orig;

	if (!w || (!pkt && len)) {
		errno = EINVAL;
		return -1;
	}
	/* after a short write the file ends in half a record: stop there */
	if (ferror(w->fp)) {
		errno = EIO;
		return -1;
	}
	if (ts) {
		if (ts->tv_sec < 0 || (uint64_t)ts->tv_sec > UINT32_MAX ||
		    ts->tv_usec < 0 || ts->tv_usec >= 1000000) {
			errno = EINVAL;
			return -1;
		}
		sec = (uint64_t)ts->tv_sec;
		usec = (uint64_t)ts->tv_usec;
	} else {
		clock_gettime(CLOCK_REALTIME, &now);
		sec = (uint64_t)now.tv_sec;
		usec = (uint64_t)now.tv_nsec / 1000;
	}
	if (len > UINT32_MAX - sizeof(pcap_ib_tags)) {
		errno = EMSGSIZE;
		return -1;
	}
	orig = sizeof(pcap_ib_tags) + len;
	caplen = orig < PCAP_WRITER_SNAPLEN ? orig : PCAP_WRITER_SNAPLEN;

	rec[0] = (uint32_t)sec;
	rec[1] = (uint32_t)usec;
	rec[2] = (uint32_t)caplen;
	rec[3] = (uint32_t)orig;
	if (fwrite(rec, sizeof(rec), 1, w->fp) != 1 ||
	    fwrite(pcap_ib_tags, sizeof(pcap_ib_tags), 1, w->fp) != 1)
		return -1;
	caplen -= sizeof(pcap_ib_tags);
	if (caplen && fwrite(pkt, caplen, 1, w->fp) != 1)
		return -1;
	return 0;
}

int pcap_writer_flush(struct pcap_writer *w)
{
	if (!w) {
		errno = EINVAL;
		return -1;
	}
	return fflush(w->fp) ? -1 : 0;
}

int pcap_writer_close(struct pcap_writer *w)
{
	int ret, e;

	if (!w)
		return 0;
	ret = ferror(w->fp) ? -1 : 0;
	e = ret ? EIO : 0;
	if (fclose(w->fp)) {
		ret = -1;
		e = errno;
	}
	free(w);
	if (ret)
		errno = e;
	return ret;
}

/* ---- reader ---- */

static uint32_t pcap_rd32(const struct pcap_reader *r, const uint8_t *p)
{
	if (r->swap)
		return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
		       (uint32_t)p[2] << 8 | p[3];
	return (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[1] << 8 | p[0];
}

static uint16_t pcap_rd16(const struct pcap_reader *r, const uint8_t *p)
{
	if (r->swap)
		return be16_get(p);
	return (uint16_t)(p[1] << 8 | p[0]);
}

/*
 * Make N bytes of input available at *out.  Returns how many are available
 * (less than N at the end of input), or -1 on an I/O error.
 */
static ssize_t pcap_read(struct pcap_reader *r, size_t n, const uint8_t **out)
{
	size_t got;

	if (r->mem) {
		size_t left = r->mem_len - r->mem_off;

		got = n < left ? n : left;
		*out = r->mem + r->mem_off;
		r->mem_off += got;
		return (ssize_t)got;
	}
	if (n > r->buf_cap) {
		uint8_t *nb = realloc(r->buf, n);

		if (!nb)
			return -1;
		r->buf = nb;
		r->buf_cap = n;
	}
	*out = r->buf;
	got = fread(r->buf, 1, n, r->fp);
	if (got < n && ferror(r->fp))
		return -1;
	return (ssize_t)got;
}

/*
 * Record an error as "NAME: [record N: ]what".  FATAL errors stop the
 * reader; the message is then repeated by every later call.
 */
static int pcap_rfail(struct pcap_reader *r, bool fatal, bool in_record,
		      char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

static int pcap_rfail(struct pcap_reader *r, bool fatal, bool in_record,
		      char *err, size_t errlen, const char *fmt, ...)
{
	char what[192];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (in_record)
		snprintf(r->errmsg, sizeof(r->errmsg), "%s: record %llu: %s",
			 r->name, (unsigned long long)r->recno, what);
	else
		snprintf(r->errmsg, sizeof(r->errmsg), "%s: %s", r->name,
			 what);
	if (fatal)
		r->failed = true;
	return errbuf_fail(err, errlen, EINVAL, "%s", r->errmsg);
}

static int pcap_read_global(struct pcap_reader *r, char *err, size_t errlen)
{
	const uint8_t *h;
	ssize_t got;
	uint32_t magic;

	got = pcap_read(r, PCAP_GLOBAL_HDR_LEN, &h);
	if (got < 0)
		return pcap_rfail(r, true, false, err, errlen, "read: %s",
				  strerror(errno));
	if (got < PCAP_GLOBAL_HDR_LEN)
		return pcap_rfail(r, true, false, err, errlen,
				  "truncated global header (%zd of %d bytes)",
				  got, PCAP_GLOBAL_HDR_LEN);

	/* Read the magic as little-endian; a match decides the byte order. */
	magic = (uint32_t)h[3] << 24 | (uint32_t)h[2] << 16 |
		(uint32_t)h[1] << 8 | h[0];
	switch (magic) {
	case PCAP_MAGIC_USEC:
		break;
	case PCAP_MAGIC_NSEC:
		r->nsec = true;
		break;
	case PCAP_MAGIC_USEC_SWAP:
		r->swap = true;
		break;
	case PCAP_MAGIC_NSEC_SWAP:
		r->swap = true;
		r->nsec = true;
		break;
	case PCAPNG_MAGIC:
		return pcap_rfail(r, true, false, err, errlen,
				  "pcapng is not supported, only classic pcap");
	default:
		return pcap_rfail(r, true, false, err, errlen,
				  "bad magic 0x%08x, not a pcap file", magic);
	}
	if (pcap_rd16(r, h + 4) != PCAP_VERSION_MAJOR)
		return pcap_rfail(r, true, false, err, errlen,
				  "unsupported pcap version %u.%u",
				  pcap_rd16(r, h + 4), pcap_rd16(r, h + 6));
	r->snaplen = pcap_rd32(r, h + 16);
	r->linktype = pcap_rd32(r, h + 20) & PCAP_LINKTYPE_MASK;
	if (r->linktype != PCAP_LINKTYPE_UPPER_PDU &&
	    r->linktype != PCAP_LINKTYPE_INFINIBAND)
		return pcap_rfail(r, true, false, err, errlen,
				  "unsupported linktype %u (want %u exported PDU or %u InfiniBand)",
				  r->linktype, PCAP_LINKTYPE_UPPER_PDU,
				  PCAP_LINKTYPE_INFINIBAND);
	return 0;
}

static struct pcap_reader *pcap_reader_new(const char *name, char *err,
					   size_t errlen)
{
	struct pcap_reader *r = calloc(1, sizeof(*r));

	if (r)
		r->name = strdup(name);
	if (!r || !r->name) {
		errbuf_fail(err, errlen, ENOMEM, "%s: %s", name,
			    strerror(ENOMEM));
		free(r);
		return NULL;
	}
	return r;
}

struct pcap_reader *pcap_reader_open(const char *path, char *err,
				     size_t errlen)
{
	struct pcap_reader *r;

	if (!path) {
		errbuf_fail(err, errlen, EINVAL, "pcap: no file name");
		return NULL;
	}
	r = pcap_reader_new(path, err, errlen);
	if (!r)
		return NULL;
	r->fp = fopen(path, "rb");
	if (!r->fp) {
		int e = errno;

		pcap_reader_close(r);
		errbuf_fail(err, errlen, e, "%s: %s", path, strerror(e));
		return NULL;
	}
	if (pcap_read_global(r, err, errlen)) {
		pcap_reader_close(r);
		return NULL;
	}
	return r;
}

struct pcap_reader *pcap_reader_open_mem(const void *buf, size_t len,
					 const char *name, char *err,
					 size_t errlen)
{
	/* non-NULL even for an empty buffer: it marks the memory source */
	static const uint8_t empty[1];
	struct pcap_reader *r;

	r = pcap_reader_new(name ? name : "<memory>", err, errlen);
	if (!r)
		return NULL;
	r->mem = buf && len ? buf : empty;
	r->mem_len = buf ? len : 0;
	if (pcap_read_global(r, err, errlen)) {
		pcap_reader_close(r);
		return NULL;
	}
	return r;
}

/*
 * Walk the exported-PDU TLVs of a linktype 252 record and find where the
 * packet starts.  Returns the offset of the packet, or -1 with an error.
 */
static ssize_t pcap_strip_tags(struct pcap_reader *r, const uint8_t *d,
			       size_t caplen, char *err, size_t errlen)
{
	static const char want[] = IB_DISSECTOR_NAME;
	bool named = false;
	size_t off = 0;

	for (;;) {
		uint16_t type, tlen;

		if (off == caplen)
			return pcap_rfail(r, false, true, err, errlen,
					  "exported PDU tags lack the end tag");
		if (caplen - off < 4)
			return pcap_rfail(r, false, true, err, errlen,
					  "exported PDU tag header truncated at offset %zu",
					  off);
		type = be16_get(d + off);
		tlen = be16_get(d + off + 2);
		off += 4;
		if (tlen > caplen - off)
			return pcap_rfail(r, false, true, err, errlen,
					  "exported PDU tag %u length %u overruns the record (%zu bytes left)",
					  type, tlen, caplen - off);
		if (type == PCAP_EXP_PDU_TAG_END_OF_OPT) {
			off += tlen;
			break;
		}
		if (type == PCAP_EXP_PDU_TAG_DISSECTOR_NAME) {
			size_t n = tlen;

			/* trailing NULs are padding, not part of the name */
			while (n && d[off + n - 1] == '\0')
				n--;
			if (n != sizeof(want) - 1 || memcmp(d + off, want, n))
				return pcap_rfail(r, false, true, err, errlen,
						  "exported PDU for dissector '%.*s', not " IB_DISSECTOR_NAME,
						  (int)(n < 32 ? n : 32),
						  (const char *)(d + off));
			named = true;
		}
		off += tlen;
	}
	if (!named)
		return pcap_rfail(r, false, true, err, errlen,
				  "exported PDU has no dissector name tag");
	return (ssize_t)off;
}

int pcap_reader_next(struct pcap_reader *r, const uint8_t **pkt, size_t *len,
		     char *err, size_t errlen)
{
	const uint8_t *h, *d;
	uint32_t sec, sub, caplen, orig, limit;
	ssize_t got, start = 0;
	bool by_snaplen;

	if (!r || !pkt || !len) {
		return errbuf_fail(err, errlen, EINVAL, "pcap: invalid argument");
	}
	if (r->failed)
		return errbuf_fail(err, errlen, EINVAL, "%s", r->errmsg);
	r->recno++;
	got = pcap_read(r, PCAP_REC_HDR_LEN, &h);
	if (got < 0)
		return pcap_rfail(r, true, true, err, errlen, "read: %s",
				  strerror(errno));
	if (got == 0) {
		r->recno--;
		return 0;
	}
	if (got < PCAP_REC_HDR_LEN)
		return pcap_rfail(r, true, true, err, errlen,
				  "truncated record header (%zd of %d bytes)",
				  got, PCAP_REC_HDR_LEN);
	sec = pcap_rd32(r, h);
	sub = pcap_rd32(r, h + 4);
	caplen = pcap_rd32(r, h + 8);
	orig = pcap_rd32(r, h + 12);

	/* snaplen 0 is written by some tools for "no limit" */
	by_snaplen = r->snaplen && r->snaplen < PCAP_MAX_CAPLEN;
	limit = by_snaplen ? r->snaplen : PCAP_MAX_CAPLEN;
	if (caplen > limit)
		return pcap_rfail(r, true, true, err, errlen,
				  "caplen %u exceeds %s %u", caplen,
				  by_snaplen ? "snaplen" : "limit", limit);
	got = pcap_read(r, caplen, &d);
	if (got < 0)
		return pcap_rfail(r, true, true, err, errlen, "read: %s",
				  strerror(errno));
	if ((size_t)got < caplen)
		return pcap_rfail(r, true, true, err, errlen,
				  "truncated (%zd of %u bytes)", got, caplen);

	if (r->linktype == PCAP_LINKTYPE_UPPER_PDU) {
		start = pcap_strip_tags(r, d, caplen, err, errlen);
		if (start < 0)
			return -1;
	}
	r->ts.tv_sec = (time_t)sec;
	if (r->nsec) {
		r->ts.tv_sec += sub / 1000000000u;
		r->ts.tv_nsec = (long)(sub % 1000000000u);
	} else {
		r->ts.tv_sec += sub / 1000000u;
		r->ts.tv_nsec = (long)(sub % 1000000u) * 1000;
	}
	/* the original length covers the tags too; never report less than we have */
	r->orig_len = orig > (uint32_t)start ? orig - (size_t)start : 0;
	if (r->orig_len < caplen - (size_t)start)
		r->orig_len = caplen - (size_t)start;
	*pkt = d + start;
	*len = caplen - (size_t)start;
	return 1;
}

void pcap_reader_meta(const struct pcap_reader *r, struct timespec *ts,
		      size_t *orig_len)
{
	if (ts)
		*ts = r->ts;
	if (orig_len)
		*orig_len = r->orig_len;
}

uint32_t pcap_reader_linktype(const struct pcap_reader *r)
{
	return r->linktype;
}

void pcap_reader_close(struct pcap_reader *r)
{
	if (!r)
		return;
	if (r->fp)
		fclose(r->fp);
	free(r->buf);
	free(r->name);
	free(r);
}

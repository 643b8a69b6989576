// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Capture files of InfiniBand packets; see pcap.h.
 *
 * libpcap owns the file format: pcap_dump() writes classic pcap, and
 * pcap_fopen_offline() reads classic pcap (either byte order, micro- or
 * nanosecond) and pcapng, what tshark and dumpcap write by default.  Ours
 * is what lies inside a record: the exported-PDU tags of linktype 252
 * (Wireshark's wsutil/exported_pdu_tlvs.h), which pcap_record_payload()
 * walks and checks, and the record numbers in the errors.
 */
#include "conf/errbuf.h"
#include "inet/byteorder.h"
#include "subnet/pcap.h"

#include <errno.h>
#include <pcap/pcap.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#define IB_DISSECTOR_NAME	"infiniband"

_Static_assert(PCAP_LINKTYPE_UPPER_PDU == DLT_WIRESHARK_UPPER_PDU,
	       "libpcap's DLT for exported PDUs is the linktype");
_Static_assert(PCAP_LINKTYPE_INFINIBAND == DLT_INFINIBAND,
	       "libpcap's DLT for InfiniBand is the linktype");

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
	pcap_t *dead;		/* no device: only the linktype and snaplen */
	pcap_dumper_t *dump;
	uint8_t rec[PCAP_WRITER_SNAPLEN];	/* tags and packet in one */
};

struct pcap_reader {
	char *name;
	pcap_t *p;
	uint32_t linktype;
	uint64_t recno;		/* 1-based number of the current record */
	bool failed;		/* framing broken: no further records */
	char errmsg[PCAP_ERRBUF_SIZE + 128];
	struct timespec ts;
	size_t orig_len;
};

/* ---- writer ---- */

static void pcap_writer_free(struct pcap_writer *w)
{
	if (w->dump)
		pcap_dump_close(w->dump);
	if (w->dead)
		pcap_close(w->dead);
	free(w);
}

struct pcap_writer *pcap_writer_open(const char *path, char *err,
				     size_t errlen)
{
	struct pcap_writer *w;
	FILE *fp;
	int e;

	if (!path) {
		errbuf_fail(err, errlen, EINVAL, "pcap: no file name");
		return NULL;
	}
	w = calloc(1, sizeof(*w));
	if (!w) {
		errbuf_fail(err, errlen, errno, "%s: %s", path, strerror(errno));
		return NULL;
	}
	w->dead = pcap_open_dead_with_tstamp_precision(PCAP_LINKTYPE_UPPER_PDU,
			PCAP_WRITER_SNAPLEN, PCAP_TSTAMP_PRECISION_MICRO);
	if (!w->dead) {
		free(w);
		errbuf_fail(err, errlen, ENOMEM, "%s: %s", path,
			    strerror(ENOMEM));
		return NULL;
	}
	/* our fopen, so that errno and the message are the system's */
	fp = fopen(path, "wb");
	if (!fp) {
		e = errno;
		pcap_writer_free(w);
		errbuf_fail(err, errlen, e, "%s: %s", path, strerror(e));
		return NULL;
	}
	w->dump = pcap_dump_fopen(w->dead, fp);
	if (!w->dump) {
		errbuf_fail(err, errlen, EIO, "%s: %s", path,
			    pcap_geterr(w->dead));
		fclose(fp);
		pcap_writer_free(w);
		return NULL;
	}
	/* the global header reaches the file now, or we say why not */
	if (pcap_dump_flush(w->dump) < 0) {
		e = errno ? errno : EIO;
		pcap_writer_free(w);
		errbuf_fail(err, errlen, e, "%s: %s", path, strerror(e));
		return NULL;
	}
	return w;
}

/* errno after a failed stdio write, EIO when stdio left none */
static int pcap_writer_failed(int e)
{
	errno = e ? e : EIO;
	return -1;
}

int pcap_writer_write(struct pcap_writer *w, const struct timeval *ts,
		      const void *pkt, size_t len)
{
	struct pcap_pkthdr h;
	struct timespec now;
	size_t caplen, orig;
	FILE *fp;

	if (!w || (!pkt && len)) {
		errno = EINVAL;
		return -1;
	}
	fp = pcap_dump_file(w->dump);
	/* after a short write the file ends in half a record: stop there */
	if (ferror(fp)) {
		errno = EIO;
		return -1;
	}
	if (ts) {
		if (ts->tv_sec < 0 || (uint64_t)ts->tv_sec > UINT32_MAX ||
		    ts->tv_usec < 0 || ts->tv_usec >= 1000000) {
			errno = EINVAL;
			return -1;
		}
		h.ts = *ts;
	} else {
		clock_gettime(CLOCK_REALTIME, &now);
		h.ts.tv_sec = now.tv_sec;
		h.ts.tv_usec = now.tv_nsec / 1000;
	}
	if (len > UINT32_MAX - sizeof(pcap_ib_tags)) {
		errno = EMSGSIZE;
		return -1;
	}
	/* pcap_dump() writes caplen bytes as told: the snaplen is ours */
	orig = sizeof(pcap_ib_tags) + len;
	caplen = orig < PCAP_WRITER_SNAPLEN ? orig : PCAP_WRITER_SNAPLEN;
	h.caplen = (bpf_u_int32)caplen;
	h.len = (bpf_u_int32)orig;
	memcpy(w->rec, pcap_ib_tags, sizeof(pcap_ib_tags));
	if (caplen > sizeof(pcap_ib_tags))
		memcpy(w->rec + sizeof(pcap_ib_tags), pkt,
		       caplen - sizeof(pcap_ib_tags));
	errno = 0;
	pcap_dump((u_char *)w->dump, &h, w->rec);
	if (ferror(fp))
		return pcap_writer_failed(errno);
	return 0;
}

int pcap_writer_flush(struct pcap_writer *w)
{
	if (!w) {
		errno = EINVAL;
		return -1;
	}
	errno = 0;
	if (pcap_dump_flush(w->dump) < 0)
		return pcap_writer_failed(errno);
	return 0;
}

int pcap_writer_close(struct pcap_writer *w)
{
	int ret = 0, e = 0;

	if (!w)
		return 0;
	/* pcap_dump_close() cannot fail: flush first, while we can tell */
	errno = 0;
	if (ferror(pcap_dump_file(w->dump))) {
		ret = -1;
		e = EIO;
	} else if (pcap_dump_flush(w->dump) < 0) {
		ret = -1;
		e = errno ? errno : EIO;
	}
	pcap_writer_free(w);
	if (ret)
		errno = e;
	return ret;
}

/* ---- the inside of a record: ours ---- */

ssize_t pcap_record_payload(uint32_t linktype, const uint8_t *d,
			    size_t caplen, char *err, size_t errlen)
{
	static const char want[] = IB_DISSECTOR_NAME;
	bool named = false;
	size_t off = 0;

	if (linktype == PCAP_LINKTYPE_INFINIBAND)
		return 0;
	if (linktype != PCAP_LINKTYPE_UPPER_PDU || (!d && caplen))
		return errbuf_fail(err, errlen, EINVAL,
				   "unsupported linktype %u", linktype);
	for (;;) {
		uint16_t type, tlen;

		if (off == caplen)
			return errbuf_fail(err, errlen, EINVAL,
					   "exported PDU tags lack the end tag");
		if (caplen - off < 4)
			return errbuf_fail(err, errlen, EINVAL,
					   "exported PDU tag header truncated at offset %zu",
					   off);
		type = be16_get(d + off);
		tlen = be16_get(d + off + 2);
		off += 4;
		if (tlen > caplen - off)
			return errbuf_fail(err, errlen, EINVAL,
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
				return errbuf_fail(err, errlen, EINVAL,
						   "exported PDU for dissector '%.*s', not " IB_DISSECTOR_NAME,
						   (int)(n < 32 ? n : 32),
						   (const char *)(d + off));
			named = true;
		}
		off += tlen;
	}
	if (!named)
		return errbuf_fail(err, errlen, EINVAL,
				   "exported PDU has no dissector name tag");
	return (ssize_t)off;
}

/* ---- reader ---- */

/*
 * Record an error as "NAME: [record N: ]what".  FATAL errors stop the
 * reader; the message is then repeated by every later call.
 */
static int pcap_rfail(struct pcap_reader *r, bool fatal, bool in_record,
		      char *err, size_t errlen, const char *what)
{
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

/* Hand FP to libpcap and check the linktype; FP is closed either way. */
static struct pcap_reader *pcap_reader_start(struct pcap_reader *r, FILE *fp,
					     char *err, size_t errlen)
{
	char ebuf[PCAP_ERRBUF_SIZE] = "";
	char what[160];

	/* nanoseconds: libpcap scales microsecond files up, never down */
	r->p = pcap_fopen_offline_with_tstamp_precision(fp,
			PCAP_TSTAMP_PRECISION_NANO, ebuf);
	if (!r->p) {
		fclose(fp);
		pcap_rfail(r, true, false, err, errlen,
			   ebuf[0] ? ebuf : "not a capture file");
		pcap_reader_close(r);
		return NULL;
	}
	r->linktype = (uint32_t)pcap_datalink(r->p);
	if (r->linktype != PCAP_LINKTYPE_UPPER_PDU &&
	    r->linktype != PCAP_LINKTYPE_INFINIBAND) {
		snprintf(what, sizeof(what),
			 "unsupported linktype %u (want %u exported PDU or %u InfiniBand)",
			 r->linktype, PCAP_LINKTYPE_UPPER_PDU,
			 PCAP_LINKTYPE_INFINIBAND);
		pcap_rfail(r, true, false, err, errlen, what);
		pcap_reader_close(r);
		return NULL;
	}
	return r;
}

struct pcap_reader *pcap_reader_open(const char *path, char *err,
				     size_t errlen)
{
	struct pcap_reader *r;
	FILE *fp;
	int e;

	if (!path) {
		errbuf_fail(err, errlen, EINVAL, "pcap: no file name");
		return NULL;
	}
	r = pcap_reader_new(path, err, errlen);
	if (!r)
		return NULL;
	/* our fopen, so that errno and the message are the system's */
	fp = fopen(path, "rb");
	if (!fp) {
		e = errno;
		pcap_reader_close(r);
		errbuf_fail(err, errlen, e, "%s: %s", path, strerror(e));
		return NULL;
	}
	return pcap_reader_start(r, fp, err, errlen);
}

struct pcap_reader *pcap_reader_open_mem(const void *buf, size_t len,
					 const char *name, char *err,
					 size_t errlen)
{
	struct pcap_reader *r;
	FILE *fp;
	int e;

	r = pcap_reader_new(name ? name : "<memory>", err, errlen);
	if (!r)
		return NULL;
	if (!buf || !len) {
		pcap_rfail(r, true, false, err, errlen,
			   "empty, not a capture file");
		pcap_reader_close(r);
		return NULL;
	}
	/* read-only: the cast only meets fmemopen()'s prototype */
	fp = fmemopen((void *)buf, len, "rb");
	if (!fp) {
		e = errno;
		errbuf_fail(err, errlen, e, "%s: %s", r->name, strerror(e));
		pcap_reader_close(r);
		errno = e;
		return NULL;
	}
	return pcap_reader_start(r, fp, err, errlen);
}

int pcap_reader_next(struct pcap_reader *r, const uint8_t **pkt, size_t *len,
		     char *err, size_t errlen)
{
	struct pcap_pkthdr *h;
	const u_char *d;
	char what[160];
	uint64_t sub;
	ssize_t start;
	int rc;

	if (!r || !pkt || !len)
		return errbuf_fail(err, errlen, EINVAL,
				   "pcap: invalid argument");
	if (r->failed)
		return errbuf_fail(err, errlen, EINVAL, "%s", r->errmsg);
	r->recno++;
	rc = pcap_next_ex(r->p, &h, &d);
	if (rc == PCAP_ERROR_BREAK) {	/* the clean end of the file */
		r->recno--;
		return 0;
	}
	if (rc != 1)
		return pcap_rfail(r, true, true, err, errlen,
				  pcap_geterr(r->p));
	/* libpcap bounds caplen by the linktype's maximum; so do we */
	if (h->caplen > PCAP_MAX_CAPLEN) {
		snprintf(what, sizeof(what), "caplen %u exceeds limit %u",
			 h->caplen, PCAP_MAX_CAPLEN);
		return pcap_rfail(r, true, true, err, errlen, what);
	}
	start = pcap_record_payload(r->linktype, d, h->caplen, what,
				    sizeof(what));
	if (start < 0)
		return pcap_rfail(r, false, true, err, errlen, what);
	/* nanoseconds asked for; a damaged file may still hold >= 1 s */
	sub = h->ts.tv_usec > 0 ? (uint64_t)h->ts.tv_usec : 0;
	r->ts.tv_sec = (time_t)h->ts.tv_sec + (time_t)(sub / 1000000000u);
	r->ts.tv_nsec = (long)(sub % 1000000000u);
	/* the original length covers the tags too; never less than we have */
	r->orig_len = h->len > (size_t)start ? h->len - (size_t)start : 0;
	if (r->orig_len < h->caplen - (size_t)start)
		r->orig_len = h->caplen - (size_t)start;
	*pkt = d + start;
	*len = h->caplen - (size_t)start;
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
	if (r->p)
		pcap_close(r->p);	/* closes the file too */
	free(r->name);
	free(r);
}

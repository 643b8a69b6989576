/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Capture files of InfiniBand packets, written and read through libpcap.
 *
 * Owns what lies inside a record, nothing else: no capture policy, no
 * logging, and the file format is libpcap's.
 *
 * Writer: classic pcap, microsecond timestamps, snaplen 65535, linktype 252
 * (LINKTYPE_WIRESHARK_UPPER_PDU).  Every record is
 *     TLV EXP_PDU_TAG_DISSECTOR_NAME (12) = "infiniband" (NUL-padded to 12)
 *     TLV EXP_PDU_TAG_END_OF_OPT (0), length 0
 *     the raw packet, LRH first, through ICRC and VCRC
 * which tshark 4.0 dissects without options.  TLVs are a big-endian u16 type
 * and u16 length; the length counts the value including its padding, as
 * Wireshark's wsutil/exported_pdu_tlvs.h and epan/exported_pdu.c define it.
 * Output goes through stdio buffering; pcap_writer_flush() or close push it.
 *
 * Reader: whatever libpcap's pcap_fopen_offline() reads -- classic pcap in
 * either byte order with micro- or nanosecond timestamps, and pcapng (what
 * tshark, dumpcap and editcap write by default) -- of linktype 252 (tags
 * walked, checked and stripped by pcap_record_payload(); the dissector name
 * must be "infiniband") or 247 (LINKTYPE_INFINIBAND, packet as is).  A
 * record holds at most PCAP_MAX_CAPLEN bytes.  A damaged file gives a
 * one-line error "NAME: what" or "NAME: record N: what" (libpcap's words
 * for the framing, ours for the tags), never a crash.
 *
 * Error conventions: functions taking (err, errlen) fill it on failure
 * (err may be NULL).  Writer calls return -1 with errno set.
 */
#ifndef IBGW_PCAP_H
#define IBGW_PCAP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/time.h>
#include <sys/types.h>
#include <time.h>

#define PCAP_LINKTYPE_INFINIBAND	247	/* raw IB, LRH first */
#define PCAP_LINKTYPE_UPPER_PDU		252	/* Wireshark exported PDU */
#define PCAP_WRITER_SNAPLEN		65535u
#define PCAP_MAX_CAPLEN			(256u * 1024u)

/* Exported PDU tag numbers (wsutil/exported_pdu_tlvs.h) */
#define PCAP_EXP_PDU_TAG_END_OF_OPT		0
#define PCAP_EXP_PDU_TAG_DISSECTOR_NAME		12

struct pcap_writer;
struct pcap_reader;

/* Create (truncate) PATH and write the global header.  NULL with errno set
 * and the reason in err, as for the readers below. */
struct pcap_writer *pcap_writer_open(const char *path, char *err,
				     size_t errlen);

/*
 * Append one packet.  ts NULL means now (CLOCK_REALTIME).  A packet longer
 * than the snaplen allows is stored truncated, with its full original length.
 * Returns 0, or -1 with errno (EINVAL bad argument, or the stdio error).
 */
int pcap_writer_write(struct pcap_writer *w, const struct timeval *ts,
		      const void *pkt, size_t len);

/* Push buffered records to the file.  0 or -1 with errno. */
int pcap_writer_flush(struct pcap_writer *w);

/* Flush and close; returns -1 with errno if any buffered data was lost. */
int pcap_writer_close(struct pcap_writer *w);

/*
 * Where the packet starts in one record's captured bytes D of CAPLEN:
 * behind the exported-PDU tags for linktype 252 (walked and checked: the
 * tags must fit, end with the end tag and name the "infiniband"
 * dissector), at 0 for 247.  The offset, or -1 with errno EINVAL and what
 * is wrong in err (without file or record; the reader adds those).
 */
ssize_t pcap_record_payload(uint32_t linktype, const uint8_t *d,
			    size_t caplen, char *err, size_t errlen);

/* Open a capture file (pcap or pcapng) and check its linktype. */
struct pcap_reader *pcap_reader_open(const char *path, char *err,
				     size_t errlen);

/*
 * Read a capture held in memory (through fmemopen()).  BUF is not copied
 * and must outlive the reader; NAME (may be NULL) prefixes error messages.
 */
struct pcap_reader *pcap_reader_open_mem(const void *buf, size_t len,
					 const char *name, char *err,
					 size_t errlen);

/*
 * Next packet: returns 1 with *pkt and *len set (valid until the next call or
 * close), 0 at the clean end of the file, -1 on error (errno EINVAL, the
 * file and record and what is wrong with it in err).  After an error in a
 * record's exported-PDU tags the reader has moved past that record and may be
 * called again; after a framing error (libpcap's: truncation, absurd
 * length, a bad pcapng block, I/O) it keeps returning -1.
 */
int pcap_reader_next(struct pcap_reader *r, const uint8_t **pkt, size_t *len,
		     char *err, size_t errlen);

/*
 * About the packet last returned: its timestamp and its length before
 * capture truncation (tags excluded).  Either pointer may be NULL.
 */
void pcap_reader_meta(const struct pcap_reader *r, struct timespec *ts,
		      size_t *orig_len);

/* PCAP_LINKTYPE_UPPER_PDU or PCAP_LINKTYPE_INFINIBAND */
uint32_t pcap_reader_linktype(const struct pcap_reader *r);

void pcap_reader_close(struct pcap_reader *r);

#endif /* IBGW_PCAP_H */

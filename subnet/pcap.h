/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Classic pcap files of InfiniBand packets.
 *
 * Owns the on-disk format, nothing else: no capture policy, no logging.
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
 * Reader: classic pcap in either byte order, micro- or nanosecond magic,
 * linktype 252 (tags are walked, checked and stripped; the dissector name
 * must be "infiniband") or 247 (LINKTYPE_INFINIBAND, packet as is).  Every
 * length is checked against the file; a record may hold at most the file's
 * snaplen and never more than PCAP_MAX_CAPLEN bytes.  A damaged file gives a
 * one-line error "NAME: record N: what", never a crash.
 *
 * Error conventions: functions taking (err, errlen) fill it on failure
 * (err may be NULL).  Writer calls return -1 with errno set.
 */
#ifndef IBGW_PCAP_H
#define IBGW_PCAP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/time.h>
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

/* Open a capture file and check its global header. */
struct pcap_reader *pcap_reader_open(const char *path, char *err,
				     size_t errlen);

/*
 * Parse a capture held in memory.  BUF is not copied and must outlive the
 * reader; NAME (may be NULL) prefixes error messages.
 */
struct pcap_reader *pcap_reader_open_mem(const void *buf, size_t len,
					 const char *name, char *err,
					 size_t errlen);

/*
 * Next packet: returns 1 with *pkt and *len set (valid until the next call or
 * close), 0 at the clean end of the file, -1 on error (errno EINVAL, the
 * file and record and what is wrong with it in err).  After an error in a
 * record's exported-PDU tags the reader has moved past that record and may be
 * called again; after a framing error (truncation, absurd length, I/O) it
 * keeps returning -1.
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

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * SDP (IBTA vol. 1 Annex A4) on the wire: the Base Sockets Direct Header
 * (BSDH) that starts every SDP message, and the Hello / HelloAck that ride
 * in the CM REQ's and REP's private data.  Field offsets as
 * ../shared/REFERENCE.md lists them (and OFED's sdp.h, tshark's
 * packet-infiniband_sdp.c decode); all multi-byte fields big-endian.
 *
 * Pure codecs: no allocation, no I/O.  Parsers take untrusted bytes and
 * return 0 or -1 with errno EINVAL (too short, a field out of range); they
 * never read past len.
 */
#ifndef IBGW_SDP_WIRE_H
#define IBGW_SDP_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "inet/addr.h"

#define SDP_BSDH_LEN		16
#define SDP_HELLO_LEN		92	/* all of a REQ's private data */
#define SDP_HELLO_ACK_LEN	196	/* all of a REP's private data */
#define SDP_HELLO_FIELDS_LEN	64	/* what Hello defines; the rest 0 */
#define SDP_HELLO_ACK_FIELDS_LEN 24	/* what HelloAck defines */

#define SDP_MAJV_MINV		0x22	/* SDP 2.2, as OFED sends */
#define SDP_MAJOR(v)		((uint8_t)(v) >> 4)

/* Service ID of an SDP listener on TCP port p (host order). */
#define SDP_SID_BASE		0x0000000000010000ull
#define SDP_SID(port)		(SDP_SID_BASE | (uint16_t)(port))
#define SDP_SID_MASK_PORT	0xffffffffffff0000ull	/* any port */

/* Message IDs (OFED's sdp.h; Annex A4 table). */
enum sdp_mid {
	SDP_MID_HELLO		= 0x00,
	SDP_MID_HELLO_ACK	= 0x01,
	SDP_MID_DISCONN		= 0x02,
	SDP_MID_ABORT		= 0x03,
	SDP_MID_SENDSM		= 0x04,
	SDP_MID_RDMARDCOMPL	= 0x06,
	SDP_MID_SRCAVAIL_CANCEL	= 0x08,
	SDP_MID_CHRCVBUF	= 0x0b,
	SDP_MID_CHRCVBUF_ACK	= 0x0c,
	SDP_MID_SINKAVAIL	= 0xfd,
	SDP_MID_SRCAVAIL	= 0xfe,
	SDP_MID_DATA		= 0xff,
};

/* BSDH flags */
#define SDP_FLAG_OOB_PRES	0x01	/* urgent data in this message */
#define SDP_FLAG_OOB_PEND	0x02	/* urgent data on its way */

struct sdp_bsdh {
	uint8_t mid;
	uint8_t flags;
	uint16_t bufs;		/* receive buffers the sender has posted */
	uint32_t len;		/* the whole message, BSDH included */
	uint32_t mseq;		/* the sender's message sequence number */
	uint32_t mseq_ack;	/* the last mseq it received from us */
};

/* Write the 16 bytes at p. */
void sdp_bsdh_put(uint8_t *p, const struct sdp_bsdh *h);
/* Read the BSDH of a received message of len bytes: -1 (EINVAL) when
 * len < 16 or h->len != len (a message says how long it is, and an RC
 * SEND's byte count is that length). */
int sdp_bsdh_get(const uint8_t *p, size_t len, struct sdp_bsdh *h);
/* "Data", "DisConn", ... or "0x%02x" for an unknown MID (static buffer
 * per call site is not needed: unknown ones give "unknown"). */
const char *sdp_mid_name(uint8_t mid);

/* Hello: the active side's REQ private data. */
struct sdp_hello {
	struct sdp_bsdh bsdh;		/* mid HELLO, len 92 */
	uint8_t majv_minv;		/* SDP_MAJV_MINV */
	uint8_t ipv;			/* 4 or 6 (high nibble of ipv_cap) */
	uint8_t caps;			/* low nibble of ipv_cap */
	uint8_t max_adverts;		/* > 0 */
	uint32_t desremrcvsz;		/* receive size wanted of the peer */
	uint32_t localrcvsz;		/* our receive buffers' size */
	uint16_t port;			/* the active side's TCP port */
	struct inet_addr src;		/* its IP address (ipv's family) */
	struct inet_addr dst;		/* the destination's */
};

/* HelloAck: the passive side's REP private data. */
struct sdp_hello_ack {
	struct sdp_bsdh bsdh;		/* mid HELLO_ACK, len 196 (.c) */
	uint8_t majv_minv;
	uint8_t ipv;			/* 4, 6, or 0 as OFED sends */
	uint8_t caps;
	uint8_t ext_max_adverts;
	uint32_t actrcvsz;		/* the passive side's buffer size */
};

/* Build into p (cap >= SDP_HELLO_LEN / SDP_HELLO_ACK_LEN; bytes past the
 * fields zeroed); the BSDH's mid and len are set here, the rest taken
 * from h.  Return the length written, or -1 (EINVAL: cap too small, an
 * address of the wrong family). IPv4 addresses sit in the last 4 of the
 * 16 bytes, the first 12 zero (OFED's cma_ip_addr). */
int sdp_hello_build(uint8_t *p, size_t cap, const struct sdp_hello *h);
int sdp_hello_ack_build(uint8_t *p, size_t cap,
			const struct sdp_hello_ack *h);
/* Parse a REQ's / REP's private data (len as the CM event gives it, at
 * least the fields' length; rdma_cm may zero-pad).  -1 (EINVAL): too
 * short, wrong MID, major version not 2, ipv not 4 or 6, max_adverts 0
 * (Hello), a receive size below SDP_BSDH_LEN + 1 or above
 * SDP_MAX_RCVSZ. */
#define SDP_MAX_RCVSZ		(1u << 20)
int sdp_hello_parse(const uint8_t *p, size_t len, struct sdp_hello *h);
int sdp_hello_ack_parse(const uint8_t *p, size_t len,
			struct sdp_hello_ack *h);

/*
 * The rdma_cm profile (verbs; sdp_sock.h): on an IP address rdma_cm puts
 * its own 36-byte header (cma_hdr: IP version, source port, source and
 * destination addresses) before the REQ's private data, which leaves 56
 * bytes.  The Hello is cut to them: the same offsets, BSDH len 56, the
 * fields through src_addr (offset 32..47), and the 8 bytes left of
 * dst_addr's slot zero.  The parser takes 48 bytes or more (BSDH len 48
 * to 92) and leaves h->dst of ipv's family, all zero: the destination is
 * the listener's own address, as rdma_cm's header has it.  The HelloAck
 * is unchanged (a REP's 196 bytes pass verbatim).
 */
#define SDP_HELLO_CM_LEN	56
#define SDP_HELLO_CM_FIELDS_LEN	48	/* through src_addr */
int sdp_hello_build_cm(uint8_t *p, size_t cap, const struct sdp_hello *h);
int sdp_hello_parse_cm(const uint8_t *p, size_t len, struct sdp_hello *h);

/*
 * Why a connection was refused, in a REJ's private data (ours: Annex A4
 * defines none, and a REJ alone says only "refused").  The gateway holds
 * an SDP request until its TCP connect to the LAN is over and refuses a
 * failed one with the reason, so that the IB program's connect() fails as
 * the TCP one did.  8 bytes: "IBGW", format 1, a reason code (not an
 * errno: the codes are the wire's), two zero bytes.  A peer that does not
 * know it (OFED's SDP) sees a REJ: ECONNREFUSED.
 */
#define SDP_REJ_LEN		8
/* Build the REJ private data for err (ECONNREFUSED, EHOSTUNREACH,
 * ENETUNREACH, ETIMEDOUT, EACCES, EPERM, ENETDOWN, EHOSTDOWN; any other
 * as ECONNREFUSED) into p (cap >= SDP_REJ_LEN): the length, or -1
 * (EINVAL).  A peer that knows fewer codes takes an unknown one as
 * ECONNREFUSED. */
int sdp_rej_build(uint8_t *p, size_t cap, int err);
/* The errno a REJ's private data names, or -1 (EINVAL): not ours, an
 * unknown format or code (the caller takes ECONNREFUSED). */
int sdp_rej_parse(const uint8_t *p, size_t len);

#endif

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * RDS on the wire as the Linux kernel's RDS/IB (net/rds, Debian 12's 6.1)
 * puts it there: the 48-byte rds_header that starts every IB SEND, the
 * private data of the CM REQ/REP and the version negotiation over it, the
 * ACK-only frame, the congestion map and ping/pong recognition.  Offsets
 * as ../shared/REFERENCE.md lists them ("RDS/IB as the Debian 12 kernel
 * does it"); all multi-byte fields big-endian.
 *
 * Owns the formats, nothing else: no allocation, no I/O, no state.
 * Parsers take untrusted bytes and never read past len.  What a
 * connection must drop on is an enum rds_drop, named for its counter.
 */
#ifndef IBGW_RDS_WIRE_H
#define IBGW_RDS_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "inet/addr.h"

#define RDS_HDR_LEN		48
#define RDS_EXTHDR_LEN		16	/* h_exthdr[]: type byte + body */
#define RDS_EXTHDR_NONE		0
#define RDS_FRAG_SIZE		4096	/* data bytes per SEND */
#define RDS_SEND_MAX		(RDS_HDR_LEN + RDS_FRAG_SIZE)
#define RDS_MAX_MSG_SIZE	(1u << 20)
#define RDS_MAX_FRAGS		(RDS_MAX_MSG_SIZE / RDS_FRAG_SIZE)

/* rdma_cm listeners of the kernel (RDMA_PS_TCP): IPv4 peers, IPv6 peers */
#define RDS_PORT		18634
#define RDS_CM_PORT		16385

/* h_flags */
#define RDS_FLAG_CONG_BITMAP	0x01
#define RDS_FLAG_ACK_REQUIRED	0x02
#define RDS_FLAG_RETRANSMITTED	0x04

/* The sport of a handshake ping (multipath probe, rds.h). */
#define RDS_PROBE_PORT		1

/* Why a connection is dropped: the kernel's rds_ib_conn_error() cases. */
enum rds_drop {
	RDS_DROP_NONE = 0,
	RDS_DROP_SHORT,		/* SEND under 48 bytes: no header */
	RDS_DROP_LONG,		/* over 48 + 4096: the receive SGEs' size */
	RDS_DROP_BAD_CSUM,	/* header checksum wrong */
	RDS_DROP_BAD_LEN,	/* data bytes disagree with h_len */
	RDS_DROP_FRAG_MISMATCH,	/* seq/len/ports differ mid-message */
	RDS_DROP_TOO_BIG,	/* h_len over RDS_MAX_MSG_SIZE */
	RDS_DROP_MAX
};
/* "short", "long", "bad_csum", ...: counter names; "unknown" past MAX. */
const char *rds_drop_name(enum rds_drop why);

struct rds_header {
	uint64_t seq;		/* h_sequence */
	uint64_t ack;		/* h_ack: last sequence the sender received */
	uint32_t len;		/* h_len: the whole message's data bytes */
	uint16_t sport;
	uint16_t dport;
	uint8_t flags;
	uint8_t credit;
	uint16_t csum;		/* as read (get); ignored by put */
	uint8_t exthdr[RDS_EXTHDR_LEN];
};

/* Write the 48 bytes at p with the checksum the kernel's
 * rds_message_make_checksum() gives (over the 48 bytes, h_csum 0). */
void rds_hdr_put(uint8_t *p, const struct rds_header *h);
/* Read the header of a received SEND of len bytes (header + data):
 * RDS_DROP_SHORT under 48, RDS_DROP_LONG over RDS_SEND_MAX,
 * RDS_DROP_BAD_CSUM when h_csum is non-zero and wrong, else
 * RDS_DROP_NONE with h filled. */
enum rds_drop rds_hdr_get(const uint8_t *p, size_t len,
			  struct rds_header *h);
/* The checksum rule alone over 48 bytes: 0 (none) or summing to 0. */
int rds_hdr_csum_ok(const uint8_t *p);

/* ACK-only frame: ports 0, seq 0, flags 0, len 0, h_ack = ack. */
void rds_ack_put(uint8_t *p, uint64_t ack);
/* Is a received frame ACK-only?  As ib_recv.c: ports 0 and no data
 * bytes in the SEND (data_len = SEND length - 48), whatever else. */
int rds_hdr_is_ack(const struct rds_header *h, size_t data_len);

/* What a complete non-congestion message is to the receiver (recv.c). */
enum rds_msg_kind {
	RDS_MSG_DATA,		/* to the socket bound at dport */
	RDS_MSG_PING,		/* dport 0, sport != 0: answer a pong */
	RDS_MSG_PING_NULL,	/* dport 0, sport 0: ignored */
	RDS_MSG_HS_PONG,	/* sport 0, dport RDS_PROBE_PORT: consumed */
};
/* A pong (sport 0, dport = ping's sport) to any other port is DATA: the
 * kernel hands it to the socket that pinged, as a zero-length message. */
enum rds_msg_kind rds_msg_kind(const struct rds_header *h);
/* The header of the pong answering ping (seq from the sender's count). */
void rds_pong_hdr(struct rds_header *pong, const struct rds_header *ping,
		  uint64_t seq);

/*
 * CM private data (after rdma_cm's 36-byte cma_hdr), struct
 * rds_ib_connect_private (IPv4, 32 bytes) and rds6_ib_connect_private
 * (IPv6, 56 bytes) of ib.h: saddr, daddr, then the common block.
 */
#define RDS_IB_PRIV4_LEN	32
#define RDS_IB_PRIV6_LEN	56
#define RDS_IB_MINOR_MASK	0x0003	/* RDS_IB_SUPPORTED_PROTOCOLS */

#define RDS_VERSION(maj, min)	((uint16_t)((maj) << 8 | (min)))
#define RDS_VERSION_3_0		RDS_VERSION(3, 0)
#define RDS_VERSION_3_1		RDS_VERSION(3, 1)	/* what we propose */
#define RDS_VERSION_4_0		RDS_VERSION(4, 0)
#define RDS_VERSION_4_1		RDS_VERSION(4, 1)

struct rds_ib_priv {
	struct inet_addr saddr;	/* the sender's RDS address */
	struct inet_addr daddr;	/* the peer's, as the sender names it */
	uint8_t major;
	uint8_t minor;
	uint16_t minor_mask;
	uint8_t tos;
	uint64_t ack_seq;	/* the sender's piggybacked ACK */
	uint32_t credit;	/* non-zero enables flow control */
};

/* Into p (cap >= the family's length; reserved bytes zeroed): the length
 * written, or -1 (EINVAL: cap short, addresses not of one family). */
int rds_ib_priv_build(uint8_t *p, size_t cap, const struct rds_ib_priv *d);
/* From len bytes of private data of family AF_INET or AF_INET6 (rdma_cm
 * may hand more, zero-padded): 0, or -1 (EINVAL) when shorter than the
 * family's length or the family is neither. */
int rds_ib_priv_parse(const uint8_t *p, size_t len, int family,
		      struct rds_ib_priv *d);

/* The passive side's answer to a REQ's private data, exactly as
 * ib_cm.c's rds_ib_protocol_compatible(): none -> 0 (refuse); shorter
 * than the family's struct or major 0 -> 4.0; major 4 with mask bits in
 * RDS_IB_MINOR_MASK -> 4.(highest common bit); 3.1 -> 3.1; anything else
 * (3.0 among them) -> 0.  The REJ for 0 carries host-endian int 1. */
uint16_t rds_ib_version_accept(const uint8_t *p, size_t len, int family);
/* The active side on the REP (rds_ib_cm_connect_complete()): the REP's
 * major.minor if it has private data of the family's length with major
 * != 0, else proposed; 0 (drop the connection) if that is below 3.1. */
uint16_t rds_ib_version_confirm(const uint8_t *p, size_t len, int family,
				uint16_t proposed);

/*
 * rdma_cm's struct cma_hdr (drivers/infiniband/core/cma.c), the 36 bytes
 * it puts before a REQ's private data on an IP address: 0 cma_version
 * (0), 1 ip_version (4 << 4 or 6 << 4), 2 the source port, 4 the source
 * address, 20 the destination, each a union cma_ip_addr (IPv4: 12 zero
 * bytes, then the address).  The REP carries no such header.
 */
#define RDS_CMA_HDR_LEN		36
#define RDS_CMA_VERSION		0

struct rds_cma_hdr {
	uint16_t sport;		/* host order */
	struct inet_addr src;
	struct inet_addr dst;
};

/* Into p (cap >= 36): 36, or -1 (EINVAL: cap short, families differ or
 * neither IPv4 nor IPv6). */
int rds_cma_hdr_build(uint8_t *p, size_t cap, const struct rds_cma_hdr *h);
/* From len bytes: 0, or -1 (EINVAL: shorter than 36, cma_version not 0,
 * an IP version neither 4 nor 6), as cma_save_ip_info() refuses. */
int rds_cma_hdr_parse(const uint8_t *p, size_t len, struct rds_cma_hdr *h);

/*
 * Congestion map: one bit per port, bit p % 8 of byte p / 8 (the
 * kernel's little-endian bitops over its map pages), sent as a message
 * of exactly RDS_CONG_MAP_BYTES with flags exactly RDS_FLAG_CONG_BITMAP,
 * ports 0, seq 0.
 */
#define RDS_CONG_MAP_BYTES	8192

struct rds_cong_map {
	uint8_t bits[RDS_CONG_MAP_BYTES];
};

void rds_cong_set(struct rds_cong_map *m, uint16_t port);
void rds_cong_clear(struct rds_cong_map *m, uint16_t port);
int rds_cong_test(const struct rds_cong_map *m, uint16_t port);
/* Header of a map update carrying h_ack = ack. */
void rds_cong_hdr(struct rds_header *h, uint64_t ack);
/* Is a complete message a map update (flags exactly 0x01)?  One with
 * another h_len the kernel ignores: check len == RDS_CONG_MAP_BYTES. */
int rds_hdr_is_cong(const struct rds_header *h);
/* Take a received map into m; 1 if some port went from congested to
 * not (the kernel then wakes its senders), else 0. */
int rds_cong_update(struct rds_cong_map *m, const uint8_t *bits);

/* 127.0.0.0/8 or ::1: the addresses of the kernel's loop transport
 * (rds_trans_get_preferred), which every host has and no peer reaches. */
bool rds_addr_loopback(const struct inet_addr *a);

#endif

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Segmentation and coalescing offload for TUN/TAP devices opened with
 * IFF_VNET_HDR (a virtio-net header before every packet).
 *
 * Towards the wire: the kernel hands over TCP super-packets of up to 64 KiB
 * (TSO) and packets whose checksum is left to us (partial checksums);
 * gso_segment() turns them into ordinary packets no larger than gso_size
 * of payload each, with every checksum complete, as a NIC would.
 *
 * From the wire: consecutive in-order segments of one TCP connection are
 * coalesced into one super-packet (GRO), written to the kernel with a
 * virtio-net header, so that its TCP stack handles one packet where there
 * were dozens.  Each segment's checksums are verified before it is merged;
 * a segment that fails goes to the kernel unchanged, which drops and counts
 * it.
 */
#ifndef IBGW_INET_GSO_H
#define IBGW_INET_GSO_H

#include <stddef.h>
#include <stdint.h>

/* The virtio-net header (struct virtio_net_hdr, native byte order). */
struct gso_vnet_hdr {
	uint8_t flags;
	uint8_t gso_type;
	uint16_t hdr_len;
	uint16_t gso_size;
	uint16_t csum_start;
	uint16_t csum_offset;
};

#define GSO_VNET_HDR_LEN	10
#define GSO_F_NEEDS_CSUM	1
#define GSO_F_DATA_VALID	2
#define GSO_TYPE_NONE		0
#define GSO_TYPE_TCPV4		1
#define GSO_TYPE_UDP		3
#define GSO_TYPE_TCPV6		4
#define GSO_TYPE_ECN		0x80
#define GSO_MAX_PKT		65535	/* largest IP packet handled */

enum gso_err {
	GSO_OK = 0,
	GSO_BAD_HEADER,		/* virtio-net header inconsistent */
	GSO_BAD_PACKET,		/* IP/TCP headers do not parse */
	GSO_UNSUPPORTED,	/* a GSO type we did not offer */
};

const char *gso_strerror(enum gso_err e);

void gso_hdr_get(struct gso_vnet_hdr *h, const uint8_t *p);
void gso_hdr_put(uint8_t *p, const struct gso_vnet_hdr *h);

typedef void (*gso_emit_fn)(void *arg, const uint8_t *pkt, size_t len);

/*
 * Finish a packet read from the device: pkt (len bytes, writable) is the IP
 * packet after the virtio-net header h.  Calls emit once per resulting
 * packet (the buffer is only valid during the call; pkt is overwritten as
 * segments are cut).  Returns GSO_OK, or an error and emits nothing.
 */
enum gso_err gso_segment(const struct gso_vnet_hdr *h, uint8_t *pkt,
			 size_t len, gso_emit_fn emit, void *arg);

/* Coalescing state: one super-packet being built. */
struct gso_gro {
	uint8_t pkt[GSO_MAX_PKT];
	size_t len;		/* 0: nothing pending */
	size_t hlen;		/* IP + TCP header length */
	unsigned int segs;
	uint16_t mss;		/* payload of the first segment */
	uint32_t next_seq;
	int v6;
	uint64_t merged;	/* segments that went into super-packets */
	uint64_t bad_csum;	/* segments passed on unmerged: bad checksum */
};

/* Write one packet to the device: virtio-net header h, then pkt. */
typedef void (*gso_out_fn)(void *arg, const struct gso_vnet_hdr *h,
			   const uint8_t *pkt, size_t len);

/* A packet for the host: merged into the pending super-packet, or the
 * pending one written and this one started or written as it is. */
void gso_gro_receive(struct gso_gro *g, const uint8_t *pkt, size_t len,
		     gso_out_fn out, void *arg);
/* Write what is pending (at the end of a receive batch). */
void gso_gro_flush(struct gso_gro *g, gso_out_fn out, void *arg);

#endif

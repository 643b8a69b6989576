/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Shared-memory rings between a soft-provider QP and ibfabricd
 * (FSP_QP_SHM): one single-producer single-consumer ring each way, in a
 * sealed memfd that ibfabricd creates and passes with the QP socket.  The
 * QP socket stays for wake-ups ("kicks", one-byte messages) and for the end
 * of file that tells either side the other is gone.
 *
 * Layout of the memfd (FSP_SHM_BYTES):
 *   0                       control block of the TX ring (node -> switch)
 *   FSP_RING_CTL_BYTES      control block of the RX ring (switch -> node)
 *   FSP_SHM_DATA            TX data, FSP_RING_SIZE bytes
 *   FSP_SHM_DATA + SIZE     RX data, FSP_RING_SIZE bytes
 *
 * A control block holds three 32-bit counters, each in its own cache line:
 * tail (bytes the producer has written, free-running), head (bytes the
 * consumer has taken) and wait (the consumer is about to sleep and wants a
 * kick).  Records are a 32-bit length in host order and that many bytes,
 * padded to 8; a record never wraps: where the next one would not fit
 * before the end of the data, the producer writes FSP_RING_WRAP and goes
 * on at offset 0.
 *
 * Each side keeps its own position privately and only publishes it, so a
 * peer that scribbles on the control block or the records can make the
 * other side see an impossible ring (soft_ring_peek returns -1; the caller
 * counts it and skips what was there), never make it read or write
 * outside the mapping.  A consumer that must not trust the producer copies
 * each record before it looks at it (ibfabricd does).
 *
 * Sleeping without losing a kick: the consumer sets wait, then looks at
 * tail again (soft_ring_arm); the producer publishes tail, then takes wait
 * (soft_ring_publish), both with full barriers between.
 */
#ifndef IBGW_SOFT_RING_H
#define IBGW_SOFT_RING_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define FSP_RING_SIZE		(1u << 22)	/* data bytes each way */
#define FSP_RING_CTL_BYTES	256
#define FSP_SHM_DATA		4096
#define FSP_SHM_BYTES		(FSP_SHM_DATA + 2 * (size_t)FSP_RING_SIZE)
#define FSP_RING_WRAP		0xffffffffu	/* record: go on at offset 0 */
#define FSP_RING_REC		4		/* length field */
#define FSP_RING_ALIGN		8

struct fsp_ring_ctl {
	_Atomic uint32_t tail;
	uint8_t pad0[60];
	_Atomic uint32_t head;
	uint8_t pad1[60];
	_Atomic uint32_t wait;
	uint8_t pad2[60];
};

_Static_assert(sizeof(struct fsp_ring_ctl) <= FSP_RING_CTL_BYTES &&
	       2 * FSP_RING_CTL_BYTES <= FSP_SHM_DATA,
	       "ring control blocks overlap");

/* One side's view of one ring. */
struct soft_ring {
	struct fsp_ring_ctl *ctl;
	uint8_t *data;
	uint32_t size;		/* a power of two, at least 64 */
	uint32_t pos;		/* producer: tail; consumer: head (private) */
	uint32_t seen;		/* producer: head as last read; consumer: tail */
	uint32_t unpublished;	/* records written or taken since publish */
};

/* Bind a view to a control block and data area of size bytes (a power of
 * two); the position starts from what the control block says. */
void soft_ring_init_producer(struct soft_ring *r, struct fsp_ring_ctl *ctl,
			     uint8_t *data, uint32_t size);
void soft_ring_init_consumer(struct soft_ring *r, struct fsp_ring_ctl *ctl,
			     uint8_t *data, uint32_t size);
/* A fresh control block (both counters 0, consumer waiting). */
void soft_ring_ctl_reset(struct fsp_ring_ctl *ctl);
/* Both views on a QP's mapping (FSP_SHM_BYTES at shm): the node produces
 * on tx and consumes rx; ibfabricd (node = 0) the other way round. */
void soft_ring_attach(uint8_t *shm, int node, struct soft_ring *tx,
		      struct soft_ring *rx);

/*
 * Producer: room for a record of up to max bytes, contiguous; NULL when the
 * ring is full.  soft_ring_commit(len <= max) then writes the record;
 * nothing is visible to the consumer until soft_ring_publish, which
 * returns 1 when the consumer asked for a kick (the caller sends it).
 */
uint8_t *soft_ring_reserve(struct soft_ring *r, size_t max);
void soft_ring_commit(struct soft_ring *r, size_t len);
int soft_ring_publish(struct soft_ring *r);

/*
 * Consumer: the next record in *rec, *len: 1; 0 when the ring is empty;
 * -1 when the ring is impossible (counters or a length out of range); the
 * caller then calls soft_ring_skip, which drops everything published.
 * soft_ring_next steps past the record just peeked; soft_ring_release
 * hands the space back to the producer (publishes head).
 */
int soft_ring_peek(struct soft_ring *r, const uint8_t **rec, size_t *len);
void soft_ring_next(struct soft_ring *r, size_t len);
void soft_ring_release(struct soft_ring *r);
void soft_ring_skip(struct soft_ring *r);
/*
 * Consumer about to sleep: asks for a kick, then looks again.  Returns 1
 * when records arrived meanwhile (keep going; a kick may still come), 0
 * when it may sleep.
 */
int soft_ring_arm(struct soft_ring *r);
/* Wake the other side (it asked for it): a one-byte message on the QP
 * socket fd. */
void soft_ring_kick(int fd);
/* Read every kick waiting on the QP socket fd (non-blocking), in as few
 * system calls as it takes (one when fewer than 16 wait): 0 when none is
 * left, 1 at the end of file (the peer is gone), -1 on another error
 * (errno). */
int soft_ring_take_kicks(int fd);

#endif

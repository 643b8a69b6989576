// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Single-producer single-consumer record rings in memory shared between
 * two processes that do not trust each other's bookkeeping (soft_ring.h).
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "fabric/soft_ring.h"

static uint32_t rec_bytes(size_t len)
{
	return (uint32_t)((FSP_RING_REC + len + FSP_RING_ALIGN - 1) &
			  ~(size_t)(FSP_RING_ALIGN - 1));
}

void soft_ring_ctl_reset(struct fsp_ring_ctl *ctl)
{
	memset(ctl, 0, sizeof(*ctl));
	atomic_store(&ctl->wait, 1);
}

void soft_ring_init_producer(struct soft_ring *r, struct fsp_ring_ctl *ctl,
			     uint8_t *data, uint32_t size)
{
	r->ctl = ctl;
	r->data = data;
	r->size = size;
	r->pos = atomic_load(&ctl->tail) & ~(uint32_t)(FSP_RING_ALIGN - 1);
	r->seen = atomic_load(&ctl->head);
	r->unpublished = 0;
}

void soft_ring_init_consumer(struct soft_ring *r, struct fsp_ring_ctl *ctl,
			     uint8_t *data, uint32_t size)
{
	r->ctl = ctl;
	r->data = data;
	r->size = size;
	r->pos = atomic_load(&ctl->head) & ~(uint32_t)(FSP_RING_ALIGN - 1);
	r->seen = r->pos;
	r->unpublished = 0;
}

void soft_ring_attach(uint8_t *shm, int node, struct soft_ring *tx,
		      struct soft_ring *rx)
{
	struct fsp_ring_ctl *tctl = (struct fsp_ring_ctl *)shm;
	struct fsp_ring_ctl *rctl = (struct fsp_ring_ctl *)(shm +
						FSP_RING_CTL_BYTES);
	uint8_t *tdata = shm + FSP_SHM_DATA, *rdata = tdata + FSP_RING_SIZE;

	if (node) {
		soft_ring_init_producer(tx, tctl, tdata, FSP_RING_SIZE);
		soft_ring_init_consumer(rx, rctl, rdata, FSP_RING_SIZE);
	} else {
		soft_ring_init_consumer(tx, tctl, tdata, FSP_RING_SIZE);
		soft_ring_init_producer(rx, rctl, rdata, FSP_RING_SIZE);
	}
}

uint8_t *soft_ring_reserve(struct soft_ring *r, size_t max)
{
	uint32_t need, off = r->pos & (r->size - 1), skip = 0, used;

	if (max > r->size / 4)
		return NULL;
	need = rec_bytes(max);
	if (off + need > r->size)
		skip = r->size - off;
	used = r->pos - r->seen;
	if (used > r->size || (uint64_t)used + skip + need > r->size) {
		/* look at what the consumer has given back; a head that is
		 * ahead of us or too far behind reads as a full ring */
		r->seen = atomic_load_explicit(&r->ctl->head,
					       memory_order_acquire);
		used = r->pos - r->seen;
		if (used > r->size || (uint64_t)used + skip + need > r->size)
			return NULL;
	}
	if (skip) {
		uint32_t w = FSP_RING_WRAP;

		memcpy(r->data + off, &w, sizeof(w));
		r->pos += skip;
		off = 0;
	}
	return r->data + off + FSP_RING_REC;
}

void soft_ring_commit(struct soft_ring *r, size_t len)
{
	uint32_t l = (uint32_t)len;

	memcpy(r->data + (r->pos & (r->size - 1)), &l, sizeof(l));
	r->pos += rec_bytes(len);
	r->unpublished++;
}

int soft_ring_publish(struct soft_ring *r)
{
	if (!r->unpublished)
		return 0;
	r->unpublished = 0;
	/* seq_cst store, then load: the consumer's arm does the mirror */
	atomic_store(&r->ctl->tail, r->pos);
	if (!atomic_load(&r->ctl->wait))
		return 0;
	return atomic_exchange(&r->ctl->wait, 0) != 0;
}

int soft_ring_peek(struct soft_ring *r, const uint8_t **rec, size_t *len)
{
	uint32_t avail, off, l, skip;

	for (;;) {
		avail = r->seen - r->pos;
		if (!avail) {
			r->seen = atomic_load_explicit(&r->ctl->tail,
						       memory_order_acquire);
			avail = r->seen - r->pos;
			if (!avail)
				return 0;
		}
		off = r->pos & (r->size - 1);
		if (avail > r->size || avail < FSP_RING_ALIGN ||
		    (off & (FSP_RING_ALIGN - 1)))
			return -1;
		memcpy(&l, r->data + off, sizeof(l));	/* read once */
		if (l == FSP_RING_WRAP) {
			skip = r->size - off;
			if (skip > avail)
				return -1;
			r->pos += skip;
			continue;
		}
		if (l > r->size - off - FSP_RING_REC || rec_bytes(l) > avail)
			return -1;
		*rec = r->data + off + FSP_RING_REC;
		*len = l;
		return 1;
	}
}

void soft_ring_next(struct soft_ring *r, size_t len)
{
	r->pos += rec_bytes(len);
	r->unpublished++;
}

void soft_ring_release(struct soft_ring *r)
{
	if (!r->unpublished)
		return;
	r->unpublished = 0;
	atomic_store_explicit(&r->ctl->head, r->pos, memory_order_release);
}

void soft_ring_skip(struct soft_ring *r)
{
	r->pos = r->seen;
	r->unpublished++;
	soft_ring_release(r);
}

int soft_ring_arm(struct soft_ring *r)
{
	soft_ring_release(r);
	atomic_store(&r->ctl->wait, 1);
	r->seen = atomic_load(&r->ctl->tail);
	return r->seen != r->pos;
}

void soft_ring_kick(int fd)
{
	/* a full socket holds kicks enough already */
	(void)!send(fd, "k", 1, MSG_DONTWAIT | MSG_NOSIGNAL);
}

int soft_ring_take_kicks(int fd)
{
	enum { N = 16 };
	char b[N][8];			/* kicks are read to be dropped */
	struct mmsghdr mm[N];
	struct iovec iov[N];
	int i, n;

	for (i = 0; i < N; i++) {
		iov[i].iov_base = b[i];
		iov[i].iov_len = sizeof(b[i]);
		memset(&mm[i].msg_hdr, 0, sizeof(mm[i].msg_hdr));
		mm[i].msg_hdr.msg_iov = &iov[i];
		mm[i].msg_hdr.msg_iovlen = 1;
	}
	for (;;) {
		n = recvmmsg(fd, mm, N, MSG_DONTWAIT, NULL);
		if (n < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : -1;
		/* a SOCK_SEQPACKET's end of file reads as an empty message;
		 * a kick is never empty */
		for (i = 0; i < n; i++)
			if (!mm[i].msg_len)
				return 1;
		if (n < N)
			return 0;
	}
}

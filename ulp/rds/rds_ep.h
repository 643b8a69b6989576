/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * An RDS endpoint on a fabric port: what the kernel's rds + rds_rdma
 * modules are to a host, in user space, wire-compatible with Debian 12's
 * RDS/IB (net/rds of 6.1; the facts in ../shared/REFERENCE.md and
 * rds_wire.h).
 *
 *  - One RC connection per address pair (laddr, faddr), tos 0, made
 *    through the CM as the kernel makes it: RDMA_PS_TCP service IDs of
 *    port RDS_PORT (IPv4 pairs) or RDS_CM_PORT (IPv6), the rds_ib
 *    private data, version 3.1 proposed, the passive side's rules of
 *    rds_ib_protocol_compatible(), the connect race settled as the
 *    kernel settles it (a REQ while we connect: REJ with host-endian
 *    int 1; while up: ours dropped, REJ; then both retry with random
 *    backoff up to 1 s).  A connection exists from the first message
 *    to or from its peer and lives until rds_ep_free; its sequence
 *    numbers (from 1) and unacknowledged messages survive reconnects.
 *  - Messages of up to RDS_MAX_MSG_SIZE bytes are copied in, cut into
 *    SENDs of the 48-byte header + up to 4096 bytes, kept until the
 *    peer's h_ack covers them, resent with RETRANSMITTED after a
 *    reconnect; ACK_REQUIRED now and then; ACKs for the peer's
 *    ACK_REQUIRED messages; the congestion map sent first on every new
 *    connection and on every change of ours; pings answered.
 *  - While a peer is unreachable, messages to it wait (the kernel has
 *    no ECONNREFUSED): the endpoint retries the connection with backoff
 *    for as long as it has something to send.
 *
 * Profiles, as for SDP: on the software subnet the endpoint writes
 * rdma_cm's 36-byte cma_hdr before the private data itself (the REQ is
 * byte for byte what rdma_cm sends on InfiniBand) and strips it from
 * REQs it takes; through the verbs provider librdmacm does both.
 *
 * Runs on the caller's libevent loop and takes every CM event of its
 * fab_dev: give it a dev of its own.
 */
#ifndef IBGW_RDS_EP_H
#define IBGW_RDS_EP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "conf/counters.h"
#include "fabric/fabric.h"
#include "inet/addr.h"
#include "ulp/rds/rds_wire.h"

struct event_base;
struct rds_ep;

enum rds_profile {
	RDS_PROFILE_SOFT = 0,	/* we write and strip the cma_hdr */
	RDS_PROFILE_RDMA_CM,	/* verbs: librdmacm does */
};

/* An RDS socket's name: address and port (host order). */
struct rds_name {
	struct inet_addr addr;
	uint16_t port;
};

struct rds_ep_cfg {
	enum rds_profile profile;
	uint16_t pkey_index;		/* the partition of every QP */
	uint16_t listen_pkey;		/* listeners take this partition's
					 * REQs alone; 0: every partition's */
	unsigned int recv_wrs;		/* receives posted per connection;
					 * 0: 1024 (4 MiB), as the kernel */
	unsigned int send_wrs;		/* SENDs outstanding; 0: 256 */
	unsigned int max_conns;		/* 0: 1024; more REQs refused,
					 * more sends ENOBUFS */
	unsigned int connect_timeout_ms;	/* 0: the CM's own */
	unsigned int stall_ms;		/* a connection whose queue pair
					 * completes nothing this long with
					 * work outstanding is dropped (rds_ep.c,
					 * wd_cb); 0: 10 s */
	bool listen_any;		/* IPv4 REQs for every address (a
					 * RoCE gateway: rdma_cm names the
					 * destination IP), not only the
					 * port's */
};

/* Counters; the names (rds_ep_counters) are what reports print. */
struct rds_ep_stats {
	uint64_t conns_active;		/* connections we made */
	uint64_t conns_passive;		/* connections we took */
	uint64_t conns_up;		/* up now */
	uint64_t connect_failed;	/* REJ, unreachable, timeout */
	uint64_t reconnects;		/* attempts after a drop */
	uint64_t races;			/* REQ while we connected: REJ 1 */
	uint64_t stale;			/* REQ while up: ours dropped */
	uint64_t rejected;		/* REQs refused (version, address,
					 * max_conns) */
	uint64_t tx_msgs, tx_bytes, tx_frags;
	uint64_t rx_msgs, rx_bytes, rx_frags;
	uint64_t retransmits;		/* messages resent after reconnect */
	uint64_t dups;			/* retransmitted ones already had */
	uint64_t acks_tx, acks_rx;	/* ACK-only frames */
	uint64_t acks_beyond;		/* h_ack past what we sent: clamped */
	uint64_t cong_tx, cong_rx;	/* congestion map updates */
	uint64_t pings_rx, pongs_tx;
	uint64_t no_socket;		/* data for a port nobody bound */
	uint64_t qp_errors;		/* a completion with an error status */
	uint64_t drops[RDS_DROP_MAX];	/* connections dropped, by reason */
	uint64_t disconnects;		/* the peer's DREQ while up */
	uint64_t stalls;		/* dropped: the queue pair stopped
					 * moving (STALL watchdog) */
	uint64_t window_full;		/* sending stopped at RDS_CONN_WINDOW
					 * unacknowledged fragments */
	uint64_t loop_msgs;		/* to one of this host's addresses:
					 * handed over, no connection */
};

extern const struct counter_desc rds_ep_counters[];

struct rds_ep_ops {
	/*
	 * The port GID behind the RDS address faddr, seen from laddr (an
	 * IPoIB neighbour, or the next hop; on RoCE ::ffff:a.b.c.d or the
	 * IPv6 address itself).  0 with *gid (and *lid, 0 if unknown); -1
	 * with errno EAGAIN (being resolved: asked again shortly),
	 * EHOSTUNREACH / ENETUNREACH (messages wait; asked again with the
	 * connect backoff).
	 */
	int (*resolve)(void *arg, const struct inet_addr *laddr,
		       const struct inet_addr *faddr, union fab_gid *gid,
		       uint16_t *lid);
	/* Is a one of this host's addresses?  A REQ whose dp_daddr is not
	 * is refused (the kernel finds no rds_conn for it). */
	bool (*is_local)(void *arg, const struct inet_addr *a);
	/*
	 * A data message (a pong is one: zero bytes) for dst from src.  The
	 * bytes are valid during the call only.  Return 0 (taken), or -1
	 * with ENOENT: nobody has dst bound (counted in no_socket, dropped
	 * as the kernel drops it).  Back-pressure is not here: a receiver
	 * that cannot keep up says so with rds_ep_set_cong() and holds what
	 * it took, as the kernel queues past the receive buffer.
	 */
	int (*deliver)(void *arg, const struct rds_name *dst,
		       const struct rds_name *src, const uint8_t *data,
		       size_t len);
	/* A message given to rds_ep_send() is acknowledged by the peer and
	 * freed (err 0), or thrown away (err: ECANCELED by
	 * rds_ep_cancel_to).  ctx as given; never after rds_ep_forget().
	 * Optional. */
	void (*done)(void *arg, void *ctx, size_t len, int err);
	/* The peer faddr cleared a congested port of its map: sends that
	 * got ENOBUFS towards it may be tried again.  Optional. */
	void (*uncongested)(void *arg, const struct inet_addr *faddr);
	/* Every congestion map faddr sends, as it came (RDS_CONG_MAP_BYTES
	 * bytes).  Optional. */
	void (*cong_map)(void *arg, const struct inet_addr *faddr,
			 const uint8_t *bits);
	/* A connection came up or went down (and why), one line as the
	 * kernel's RDS/IB writes to dmesg.  Optional. */
	void (*log)(void *arg, const char *line);
};

/* NULL with errno and err: the CM's (EOPNOTSUPP: none), EADDRINUSE (the
 * RDS ports are listened on already, e.g. by a kernel RDS). */
struct rds_ep *rds_ep_new(struct event_base *base, struct fab_dev *dev,
			  const struct rds_ep_cfg *cfg,
			  const struct rds_ep_ops *ops, void *arg, char *err,
			  size_t errlen);
/* Every connection torn down (DREQ), every message freed without done(). */
void rds_ep_free(struct rds_ep *ep);

/*
 * Queue one message from src to dst (dst->port 0: a ping), gathered from
 * iov and copied.  0, or -1 with errno: EMSGSIZE (over RDS_MAX_MSG_SIZE),
 * EINVAL (families differ, src not local, src->port 0, dst's address
 * unspecified or multicast), ENOBUFS (dst's port is congested in its
 * host's map: the kernel's answer to a non-blocking sender; retry after
 * ops->uncongested, or max_conns reached), ENOMEM.  ctx comes back in
 * ops->done.  Messages of one (src, dst) pair arrive in order.
 */
int rds_ep_send(struct rds_ep *ep, const struct rds_name *src,
		const struct rds_name *dst, const struct iovec *iov,
		int iovcnt, void *ctx);
/* The same with flags: RDS_EP_SEND_ANYWAY sends to a congested port too
 * (a message its sender checked the map for when it took it: the kernel
 * transmits what it queued before the map said congested). */
#define RDS_EP_SEND_ANYWAY	0x1
int rds_ep_send_flags(struct rds_ep *ep, const struct rds_name *src,
		      const struct rds_name *dst, const struct iovec *iov,
		      int iovcnt, void *ctx, unsigned int flags);
/* Is dst's port congested in the map its host last sent (false when no
 * map has come yet)? */
bool rds_ep_congested(const struct rds_ep *ep, const struct rds_name *src,
		      const struct rds_name *dst);
/* Mark our port on laddr congested or not (the receiver holds more than
 * its buffer); a change goes out as a map update on every connection
 * from laddr, at once. */
void rds_ep_set_cong(struct rds_ep *ep, const struct inet_addr *laddr,
		     uint16_t port, bool congested);
/* The sender ctx is gone (its socket closed): its messages are still
 * sent, but ops->done never names ctx again. */
void rds_ep_forget(struct rds_ep *ep, void *ctx);
/* RDS_CANCEL_SENT_TO: drop ctx's messages to dst not yet sent (done()
 * with ECANCELED for each).  The number dropped. */
unsigned int rds_ep_cancel_to(struct rds_ep *ep, void *ctx,
			      const struct rds_name *dst);

const struct rds_ep_stats *rds_ep_stats(const struct rds_ep *ep);
/* Nothing owed to a peer: no ACK or map update waiting, every SEND
 * posted completed (the peer's HCA has it).  For a program about to
 * exit after its last delivery, so that the peer gets its ACKs. */
bool rds_ep_idle(const struct rds_ep *ep);
/* One line per connection ("rds LADDR FADDR state up|connecting|down
 * next_tx N next_rx N unacked N queued N ...") into buf; the length. */
size_t rds_ep_report(const struct rds_ep *ep, char *buf, size_t cap);

#endif

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * An SDP endpoint on a fabric port: listeners on SDP's service IDs
 * (0x10000 | TCP port, or rdma_cm's TCP port space in the rdma_cm
 * profile: enum sdp_profile), connections made and taken through the CM
 * with Hello / HelloAck, and each connection's byte stream spliced to a file
 * descriptor: the host service's end of a program's unix socket pair
 * (sdp_service.c), or a TCP socket (the gateway, which continues SDP as
 * TCP).  Between the two, the buffer-copy data path of Annex A4 with
 * credit flow control (sdp_conn.c) and back-pressure both ways: the fd is
 * read only while the peer has buffers for us, and our receive buffers
 * are reposted only once their bytes are written to the fd.
 *
 * Close and reset are carried across as TCP carries them:
 *   end of file on the fd           -> DisConn (half-close), after the
 *                                      data read before it
 *   DisConn from the peer           -> shutdown(fd, SHUT_WR), after the
 *                                      data that came before it
 *   both DisConns                   -> the CM's DREQ, then the fd closed
 *   AbortConn, the peer's DREQ
 *   without DisConn                 -> what came before it still goes
 *                                      to the fd (a unix fd is shut for
 *                                      reading meanwhile; a TCP fd's send
 *                                      queue is waited for, bounded),
 *                                      then the fd closed as a reset (a
 *                                      TCP fd with SO_LINGER 0: the LAN
 *                                      side sees an RST)
 *   a broken QP, a protocol
 *   violation by the peer           -> the fd closed at once, as a reset
 *   an error reading or writing the
 *   fd (ECONNRESET, EPIPE)          -> AbortConn, then DREQ
 *
 * Runs on the caller's libevent loop.  The endpoint takes every CM event
 * of its fab_dev: give it a dev of its own (fab_open the same spec and
 * node once more), never one whose CM another user reads (IPoIB
 * connected mode).
 */
#ifndef IBGW_SDP_SOCK_H
#define IBGW_SDP_SOCK_H

#include <stddef.h>
#include <stdint.h>

#include "conf/counters.h"
#include "fabric/fabric.h"
#include "inet/addr.h"
#include "ulp/sdp/sdp_conn.h"

struct event_base;
struct sdp_ep;
struct sdp_sock;

/*
 * How SDP meets the CM.  The soft profile is Annex A4's: service ID
 * 0x10000 | port (SDP_SID), the whole 92-byte Hello in the REQ.  The
 * rdma_cm profile is for the verbs provider on RoCE, where librdmacm
 * cannot listen on those service IDs and takes 36 of the REQ's bytes for
 * its own header: service ID FAB_CM_SID_TCP(port) (RDMA_PS_TCP), the
 * 56-byte Hello (sdp_hello_build_cm), one listener per port (no port 0),
 * and a taken connection named by the CM's addresses: the destination is
 * the listener's own (the port's source GID as an IP address), the source
 * the REQ's peer (::ffff:a.b.c.d is IPv4).  HelloAck and data alike.
 */
enum sdp_profile {
	SDP_PROFILE_SOFT = 0,
	SDP_PROFILE_RDMA_CM,
};

struct sdp_ep_cfg {
	enum sdp_profile profile;	/* 0: the soft profile */
	uint16_t pkey_index;		/* the partition of every QP */
	uint16_t listen_pkey;		/* listeners take this partition's
					 * REQs alone; 0: every partition's */
	uint32_t buf_size;		/* our receive buffers; 0: 64 KiB */
	uint32_t rx_bufs;		/* posted per connection; 0: 32 */
	uint32_t tx_bufs;		/* send slots per connection; 0: 32 */
	unsigned int max_conns;		/* 0: 1024; more are refused */
	unsigned int connect_timeout_ms;	/* 0: the CM's own */
	unsigned int accept_wait_ms;	/* a connecting accept's fd; 0: 30000 */
	/* Keepalive: a connection with no completion for this long gets a
	 * probe, a zero-length RDMA WRITE (it takes no buffer or credit of
	 * the peer's; IBA C9-88 lets it carry no R_Key).  A dead or hung
	 * peer leaves it unacknowledged, the RC retries run out and the
	 * connection is reset as for any failed send: the program sees its
	 * socket end.  0: 60000; negative: off. */
	int keepalive_ms;
	/* A connection with sends (or a probe) posted that completes
	 * nothing, neither success nor error, for this long is reset with
	 * ETIMEDOUT and counted (stalls): a peer that answers RNR NAK for
	 * ever although its credits say it has buffers (rnr_retry 7 never
	 * runs out), or a provider whose requester stopped (rxe was seen
	 * to).  0: 10000. */
	unsigned int stall_ms;
};

/* Both ends of a connection as TCP names them. */
struct sdp_sock_info {
	struct inet_addr local, remote;
	uint16_t lport, rport;
	union fab_gid peer_gid;
	uint32_t peer_qpn;
};

/* Counters of the endpoint; the names (sdp_ep_counters) are what reports
 * and metrics print. */
struct sdp_ep_stats {
	uint64_t conns_active;		/* connections we made */
	uint64_t conns_passive;		/* connections we took */
	uint64_t conns_now;
	uint64_t connect_failed;	/* ours refused, unreachable, timed out */
	uint64_t rejected;		/* REQs we refused */
	uint64_t bad_hello;		/* a Hello / HelloAck we could not use */
	uint64_t tx_msgs, tx_bytes, rx_msgs, rx_bytes;
	uint64_t credit_updates_tx, credit_updates_rx;
	uint64_t disconn_tx, disconn_rx;
	uint64_t aborts_tx, aborts_rx;
	uint64_t qp_errors;		/* a completion with an error status */
	uint64_t keepalive_probes;	/* probes sent to idle connections */
	uint64_t keepalive_dead;	/* connections a probe found dead */
	uint64_t stalls;		/* reset: nothing completed for
					 * stall_ms with sends posted */
	uint64_t peer_resets;		/* the peer left without DisConn (its
					 * DREQ alone: its host or service
					 * went, or it was killed) */
	uint64_t linger_aborts;		/* reset at the fd's peer's last close
					 * (sdp_sock_abort_on_close) */
	uint64_t rx_dropped_shut;	/* bytes for a program after its
					 * shutdown(SHUT_RD): dropped */
	uint64_t proto_errors[SDP_ERR_MAX];	/* peers aborted, by reason */
};

extern const struct counter_desc sdp_ep_counters[];

struct sdp_ep_ops {
	/*
	 * A Hello for info->local:lport (the destination the peer asked
	 * for) from info->remote:rport arrived on a port we listen on.
	 * Return the fd to splice the connection to (the endpoint owns it
	 * from then on and closes it at the end), or -1 with errno to refuse
	 * it (a REJ naming errno as below: ECONNREFUSED for a plain
	 * refusal).  *ctx is handed back to closed().  An fd that is still
	 * connecting (a non-blocking TCP connect) is returned with
	 * *connecting set: the endpoint answers the request only when it
	 * is over, within accept_wait_ms (the CM keeps the peer waiting
	 * with MRAs): connected, the REP; failed, a REJ naming the errno
	 * (sdp_rej_build), so that the peer's connect fails as this one
	 * did.  accepted() says which.
	 */
	int (*accept)(void *arg, const struct sdp_sock_info *info, void **ctx,
		      int *connecting);
	/* The connecting fd of an accept is connected (err 0: the REP goes
	 * now) or failed (err: SO_ERROR, or ETIMEDOUT past accept_wait_ms;
	 * the REJ goes, then closed() with s NULL), or the peer gave up
	 * first (err ECANCELED: its REJ or the CM's timeout; the fd is
	 * closed with a reset before its connect is over, then closed()).
	 * Optional. */
	void (*accepted)(void *arg, void *ctx, int err);
	/* A connection made by sdp_ep_connect is up (err 0: the fd is
	 * spliced now) or failed (err: ECONNREFUSED for a REJ, ETIMEDOUT,
	 * EHOSTUNREACH, ECONNABORTED for a bad HelloAck, ...; the fd was
	 * not touched and is the caller's again).  Optional. */
	void (*connected)(void *arg, struct sdp_sock *s, void *ctx, int err);
	/* A spliced connection is over and its fd closed (s NULL: one whose
	 * accept succeeded could not be set up, or whose connecting fd
	 * failed).  Optional. */
	void (*closed)(void *arg, struct sdp_sock *s, void *ctx);
	/* The connection is reset (AbortConn, a broken QP, a peer gone,
	 * a protocol violation) and its fd, not a TCP socket, is about to
	 * close: err is what TCP would report (ECONNRESET, or ETIMEDOUT
	 * when the peer stopped answering).  closed() follows.  Optional. */
	void (*reset)(void *arg, struct sdp_sock *s, void *ctx, int fd,
		      int err);
};

/* NULL with errno and err: the CM's (EOPNOTSUPP: the provider has none). */
struct sdp_ep *sdp_ep_new(struct event_base *base, struct fab_dev *dev,
			  const struct sdp_ep_cfg *cfg,
			  const struct sdp_ep_ops *ops, void *arg, char *err,
			  size_t errlen);
/* Every connection is aborted, every fd closed, the listeners go. */
void sdp_ep_free(struct sdp_ep *ep);

/* Listen on SDP's service ID of port (0: every port, for a gateway;
 * not in the rdma_cm profile: EOPNOTSUPP).
 * Several calls for one port share one CM listener; -1 with errno
 * (EADDRINUSE from the CM, ENOMEM). */
int sdp_ep_listen(struct sdp_ep *ep, uint16_t port, char *err,
		  size_t errlen);
void sdp_ep_unlisten(struct sdp_ep *ep, uint16_t port);

/*
 * Connect to SDP's service ID of info->rport at info->peer_gid (a LID of
 * 0: the provider resolves it), with a Hello naming info->local:lport
 * and info->remote:rport.  fd is spliced to the connection once it is
 * up (ops->connected says when, or why not).  NULL with errno: ENOBUFS
 * (max_conns), the CM's.
 */
struct sdp_sock *sdp_ep_connect(struct sdp_ep *ep,
				const struct sdp_sock_info *info, int fd,
				void *ctx, char *err, size_t errlen);
/* Forget a connection before ops->connected: it is torn down, its fd
 * left to the caller (not closed), no callback follows. */
void sdp_sock_cancel(struct sdp_sock *s);

/*
 * SO_LINGER {1, 0} on the program's end (on: 1): when that end is released
 * (POLLHUP on our unix fd: the last close of all its dups, in every
 * process) the connection is reset, AbortConn with the data not yet sent
 * dropped, where end of file would be DisConn.  Before the connection is
 * up it is remembered.  Not for TCP fds.
 */
void sdp_sock_abort_on_close(struct sdp_sock *s, int on);
/* Probe s after idle_ms without a completion if that is sooner than the
 * endpoint's keepalive (its program's SO_KEEPALIVE and TCP_KEEPIDLE);
 * 0: the endpoint's alone. */
void sdp_sock_keepalive(struct sdp_sock *s, uint32_t idle_ms);
/*
 * cb(arg, 0) once our DisConn is sent and everything we sent is
 * acknowledged (SO_LINGER's wait: TCP's close waits for its FIN's ACK),
 * cb(arg, err) if the connection is reset or freed first.  One waiter
 * per connection; cb may come at once.  sdp_ep_cancel_when_sent forgets
 * every waiter whose arg is arg.
 */
void sdp_sock_when_sent(struct sdp_sock *s, void (*cb)(void *arg, int err),
			void *arg);
void sdp_ep_cancel_when_sent(struct sdp_ep *ep, void *arg);
/* The spliced fd, or -1 once closed. */
int sdp_sock_fd(const struct sdp_sock *s);
/* The connection whose ctx (sdp_ep_ops) is ctx, or NULL. */
struct sdp_sock *sdp_ep_sock_of(struct sdp_ep *ep, const void *ctx);

const struct sdp_sock_info *sdp_sock_info(const struct sdp_sock *s);
/* In ops->connected with an error: 1 when it was the peer's REJ (a
 * refusal, its reason the gateway's), 0 when the CM found no way there. */
int sdp_sock_rejected(const struct sdp_sock *s);
const struct sdp_ep_stats *sdp_ep_stats(const struct sdp_ep *ep);
/* One line per connection ("sdp LOCAL:PORT REMOTE:PORT state ... credits
 * N ...") into buf; returns the length. */
size_t sdp_ep_report(const struct sdp_ep *ep, char *buf, size_t cap);

#endif

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Between libibgw_preload.so and the host's SDP service (ipoibd's: the
 * part of a host kernel that OFED's ib_sdp module was).  Local only: a
 * SOCK_SEQPACKET unix socket in the abstract namespace, so that each
 * network namespace (each IB host of the software subnet) has its own;
 * host byte order; one request, one reply, in order.
 *
 * An SDP socket, as the program holds it, is one end of a SOCK_STREAM
 * unix socket pair whose other end the service holds: the program's
 * read, write, send, recv, poll, select, epoll, fcntl, dup, fork and exec
 * are the kernel's own, and the service moves the bytes between its end
 * and the SDP connection (with back-pressure both ways: it stops reading
 * its end when the peer has no buffers for us, and stops reposting ours
 * while the program does not read).  shutdown(SHUT_WR) reaches the
 * service as end of file and goes out as DisConn; the last close
 * anywhere (all processes) as end of file with POLLHUP.
 *
 * Requests:
 *  CONNECT  req.local (the socket's bound address, or family 0),
 *           req.remote, req.timeout_ms (0: the service's default).  The
 *           reply's err is 0 with local/remote filled and the connected
 *           stream end passed as SCM_RIGHTS; else a positive errno:
 *           ECONNREFUSED (no SDP listener there: REJ), ETIMEDOUT,
 *           ENETUNREACH / EHOSTUNREACH (no route over this host's IPoIB,
 *           or no neighbour: not an SDP destination), EADDRNOTAVAIL,
 *           ENOBUFS (limits), ECONNABORTED (bad HelloAck).
 *           req.flags SDP_CTL_F_ABORT: the socket has SO_LINGER {1, 0}
 *           (see LINGER); req.sndbuf: the SO_SNDBUF the program set on
 *           its TCP socket (as set, 0: none), for SDP_CTL_F_ASYNC.
 *           With SDP_CTL_F_ASYNC (a non-blocking socket) the service
 *           answers at once once the destination is known to be one it
 *           may reach over IPoIB (a synchronous error as above
 *           otherwise): err 0, flags SDP_CTL_R_PENDING, local/remote,
 *           and the program's stream end, connecting.  Until the outcome
 *           that end is neither readable nor writable: the service has
 *           written filler from it until it would block (an af_unix
 *           stream end is writable only while its bytes in the peer's
 *           queue are at most a quarter of its SO_SNDBUF) and keeps a
 *           copy of it.  Up: the service reads the filler back and
 *           discards it, sets req.sndbuf, lets its copy go: writable.
 *           Failed: the service closes its end with the filler unread,
 *           so that the program's end shows POLLERR and POLLHUP (POLLOUT
 *           a moment later, as the filler is freed) and its SO_ERROR
 *           (the kernel's) says ECONNRESET; INFO then tells the real
 *           errno.  Draining first would make it writable before the
 *           error is set.  With SDP_CTL_F_BOTH too, a failed SDP
 *           attempt goes on as TCP from the service (a TCP connection to
 *           the destination relayed to the stream), and only TCP's
 *           failure is a failure.  With SDP_CTL_F_ROUTE (the preload
 *           has other services to ask: one per partition), a destination
 *           this service's interface does not reach is answered
 *           ENETUNREACH at once and not counted as a failure (only in
 *           connects_elsewhere), and never goes on as TCP from here.
 *  LISTEN   req.local (address and port; port 0 asks the service for
 *           one), req.backlog, req.flags SDP_CTL_F_BOTH with a TCP
 *           listening socket passed as SCM_RIGHTS: the service accepts
 *           TCP on it too (listen on both), handing those connections to
 *           the program the same way.  With SDP_CTL_F_ADOPT instead
 *           (the preload, where several services are named: one per
 *           partition of the node), the socket passed is a listener
 *           another service handed over by LISTEN, to take this
 *           service's partition's connections for it as well (no TCP
 *           half: the first service has it); the reply carries no
 *           socket.  Reply: err, local (the port
 *           bound) and a listening SOCK_STREAM unix socket as
 *           SCM_RIGHTS.  EADDRINUSE when a live SDP listener has the
 *           port, unless both have SDP_CTL_F_REUSEPORT and one user
 *           (they then take connections in turn), or one is AF_INET and
 *           the other AF_INET6 with SDP_CTL_F_V6ONLY.  A listener takes
 *           the connections TCP's would: AF_INET IPv4 ones, AF_INET6
 *           IPv6 ones and, without SDP_CTL_F_V6ONLY, IPv4 ones.
 *  RELEASE  req.local: a bind to it failed with EADDRINUSE.  The
 *           service holds the TCP listener of a 'both' listen after the
 *           program closed its end (it learns that lazily): it checks
 *           its listeners of that port and lets go of those no program
 *           holds any more.  err 0: one was let go, bind again;
 *           EADDRINUSE: a live one (or none) has it.
 *  INFO     req.ino: the inode of an fd (fstat) that may be one of the
 *           service's stream ends handed over by CONNECT; with
 *           SDP_CTL_F_BYID the N of its peer's name instead (accepted
 *           streams), or of a listening socket handed over by LISTEN
 *           (the program's by another route: inherited across exec,
 *           passed as SCM_RIGHTS), answered with its local address.
 *           Reply err 0 with local/remote, or ENOENT; flags
 *           SDP_CTL_R_PENDING (an SDP_CTL_F_ASYNC connect still under
 *           way), SDP_CTL_R_FAILED (it failed: err is then its errno, 0
 *           once taken -- SDP_CTL_F_TAKE in the request clears it, as
 *           reading SO_ERROR clears TCP's), SDP_CTL_R_TCP (carried by the
 *           service's TCP connection), SDP_CTL_R_RESET (the connection
 *           was reset while the program's end was open, and the service
 *           closed its end: err is what TCP would report, ECONNRESET, or
 *           ETIMEDOUT for a peer that stopped answering; remote is
 *           none; with SDP_CTL_F_TAKE_RESET the record goes and later
 *           requests get ENOENT, as TCP reports an RST's error once).
 *           The request and reply keep their sizes, so that programs
 *           started with an older preload go on working with this
 *           service.
 *  LINGER   req.ino (and SDP_CTL_F_BYID) as INFO: the program set
 *           SO_LINGER on the stream; SDP_CTL_F_ABORT when it is {1, 0}.
 *           Then the stream's last close (the kernel's release of the
 *           program's end, in whichever process and however many dups
 *           it had: POLLHUP on the service's end) resets the connection
 *           (AbortConn, data not yet sent dropped), as TCP's close sends
 *           RST, instead of DisConn.  err 0, or ENOENT.
 *
 *  KEEPALIVE req.ino (and SDP_CTL_F_BYID) as INFO: the program's
 *           SO_KEEPALIVE and TCP_KEEPIDLE on the stream, as
 *           req.timeout_ms: probe the connection after that long idle
 *           when it is sooner than the service's own keepalive (0: the
 *           service's alone).  err 0, or ENOENT (no such SDP connection:
 *           gone, failed, or carried by the TCP relay).
 *  LINGER_WAIT  req.ino with SDP_CTL_F_BYID (the N of the stream's peer
 *           name, read before the program closed it), req.timeout_ms:
 *           the program closed a stream with SO_LINGER {1, N > 0}; if
 *           that was its last descriptor, the reply waits until the
 *           service has sent everything and DisConn and the peer has
 *           acknowledged it (err 0), the connection is reset (its
 *           errno), or timeout_ms (ETIMEDOUT); else it comes at once.
 *           The close waits for the reply, as TCP's close waits for its
 *           FIN's ACK.
 *
 * Accepted connections: the service connects to the listening unix
 * socket it passed and writes one struct sdp_ctl_accept on the new
 * stream before any data; with SDP_CTL_ACC_TCP (a TCP connection from the
 * 'both' listener) the TCP socket comes with it as SCM_RIGHTS and the
 * unix stream is then closed by the service: the preload's accept
 * returns the TCP socket.  SDP_CTL_ACC_PROBE: a liveness probe of the
 * service (it checks a listener still exists), to be closed and skipped.
 */
#ifndef IBGW_SDP_CTL_H
#define IBGW_SDP_CTL_H

#include <netinet/in.h>
#include <stdint.h>

/* The service's socket: abstract name (leading NUL not included here);
 * IBGW_SDP_SOCKET in the environment overrides it for both sides (a
 * leading '@' means abstract, else a filesystem path). */
#define SDP_CTL_NAME		"ibgw-sdp"
#define SDP_CTL_ENV		"IBGW_SDP_SOCKET"
#define SDP_CTL_MAGIC		0x53445031u	/* "SDP1" */

enum sdp_ctl_op {
	SDP_CTL_CONNECT = 1,
	SDP_CTL_LISTEN = 2,
	SDP_CTL_INFO = 3,
	SDP_CTL_RELEASE = 4,
	SDP_CTL_LINGER = 5,
	SDP_CTL_KEEPALIVE = 6,
	SDP_CTL_LINGER_WAIT = 7,
};

#define SDP_CTL_F_BOTH		0x1	/* LISTEN: a TCP listener passed;
					 * CONNECT (with ASYNC): TCP next */
#define SDP_CTL_F_BYID		0x2	/* INFO: ino is the N of the peer's
					 * name "ibgw-sdp-c/PID.N" (an
					 * accepted stream, whose inode the
					 * service never knew) */
#define SDP_CTL_F_ASYNC		0x4	/* CONNECT: non-blocking socket */
#define SDP_CTL_F_TAKE		0x8	/* INFO: clear so_error */
#define SDP_CTL_F_ABORT		0x10	/* CONNECT, LINGER: SO_LINGER {1,0} */
#define SDP_CTL_F_TAKE_RESET	0x20	/* INFO: take a reset's record (not
					 * a failed connect's so_error) */
#define SDP_CTL_F_V6ONLY	0x40	/* LISTEN: an AF_INET6 socket with
					 * IPV6_V6ONLY: no IPv4 connections */
#define SDP_CTL_F_REUSEPORT	0x80	/* LISTEN: SO_REUSEPORT: shares the
					 * port with others of the same user
					 * that have it, in turn */
#define SDP_CTL_F_ROUTE		0x100	/* CONNECT: others to ask (see
					 * CONNECT) */
#define SDP_CTL_F_ADOPT		0x200	/* LISTEN: another service's
					 * listener passed (see LISTEN) */

/* Reply flags. */
#define SDP_CTL_R_PENDING	0x1
#define SDP_CTL_R_FAILED	0x2
#define SDP_CTL_R_TCP		0x4
#define SDP_CTL_R_RESET		0x8

/* Addresses as the program sees them: sockaddr_in or sockaddr_in6
 * (family 0: none), in a sockaddr_in6-sized slot. */
union sdp_ctl_addr {
	sa_family_t family;
	struct sockaddr_in v4;
	struct sockaddr_in6 v6;
};

struct sdp_ctl_req {
	uint32_t magic;			/* SDP_CTL_MAGIC */
	uint32_t op;			/* enum sdp_ctl_op */
	uint32_t id;			/* echoed in the reply */
	uint32_t flags;
	union sdp_ctl_addr local;
	union sdp_ctl_addr remote;
	uint32_t timeout_ms;
	union {
		int32_t backlog;	/* LISTEN */
		uint32_t sndbuf;	/* CONNECT */
	};
	uint64_t ino;			/* INFO */
	char program[32];		/* for the service's log lines */
};

struct sdp_ctl_reply {
	uint32_t magic;
	uint32_t id;			/* the request's */
	int32_t err;			/* 0 or a positive errno */
	uint32_t flags;
	union sdp_ctl_addr local;
	union sdp_ctl_addr remote;
};

enum sdp_ctl_acc_kind {
	SDP_CTL_ACC_SDP = 1,		/* an SDP connection: data follows */
	SDP_CTL_ACC_TCP = 2,		/* a TCP socket comes as SCM_RIGHTS */
	SDP_CTL_ACC_PROBE = 3,		/* skip it */
};

struct sdp_ctl_accept {
	uint32_t magic;
	uint32_t kind;			/* enum sdp_ctl_acc_kind */
	union sdp_ctl_addr local;	/* getsockname of the new socket */
	union sdp_ctl_addr remote;	/* getpeername */
};

#endif

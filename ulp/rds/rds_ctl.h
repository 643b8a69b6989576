/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Between libibgw_preload.so and the host's RDS service (ipoibd's: what
 * the kernel's rds and rds_rdma modules are to a host).  Local only; host
 * byte order except inside the sockaddrs (network order, as always).
 *
 * An RDS socket, as the program holds it, is one end of a unix
 * SOCK_SEQPACKET socket pair whose other end the service holds.  The
 * service binds the program's end to the abstract name
 * "ibgw-rds-s/PID.N" (PID the service's), so that the preload knows an
 * RDS socket by one getsockname after dup, fork or exec.  Every datagram
 * is one seqpacket message: struct rds_ctl_hdr, then the payload.  From
 * the program, hdr.peer is the destination (port 0: a ping); to the
 * program, the sender (port 0: a pong).  poll, select, epoll, O_NONBLOCK,
 * fork and exec are the kernel's own on that pair.  The program's last
 * close reaches the service as end of file: it unbinds the socket.
 *
 * Requests go on a SEQPACKET connection of their own to the control
 * socket, one request and one reply, the socket concerned passed as
 * SCM_RIGHTS (so that only a holder of an RDS socket can change it; the
 * service knows it by its inode).  reply.err is 0 or a positive errno.
 *  SOCKET   no fd: the reply carries the program's end as SCM_RIGHTS.
 *  BIND     req.addr: EINVAL (any, broadcast, multicast; bound already),
 *           EADDRNOTAVAIL (not one of this host's IPoIB addresses),
 *           EADDRINUSE; port 0 picks one.  reply.local: the name bound.
 *  CONNECT  req.addr: the default destination (send, write).
 *  INFO     reply.local (family 0: unbound), reply.peer (family 0: not
 *           connected), reply.sndbuf, reply.rcvbuf.
 *  SETOPT   req.level, req.name, req.val (SO_SNDBUF, SO_RCVBUF and their
 *           FORCE forms, as the kernel takes them: capped at
 *           net.core.[wr]mem_max unless FORCE by root, doubled, a
 *           minimum), RDS_CANCEL_SENT_TO with req.addr.  The reply as for
 *           INFO.
 *  BOARD    no fd: the reply carries the congestion board, read-only
 *           (struct rds_board below), which the preload maps: a
 *           non-blocking send to a port the board shows congested fails
 *           with ENOBUFS before anything is queued, as the kernel's
 *           rds_cong_wait() answers.
 */
#ifndef IBGW_RDS_CTL_H
#define IBGW_RDS_CTL_H

#include <netinet/in.h>
#include <stdint.h>

/* The service's socket: abstract name (no leading NUL here);
 * IBGW_RDS_SOCKET in the environment overrides it for both sides (a
 * leading '@' means abstract, else a filesystem path). */
#define RDS_CTL_NAME		"ibgw-rds"
#define RDS_CTL_ENV		"IBGW_RDS_SOCKET"
#define RDS_CTL_MAGIC		0x52445331u	/* "RDS1" */
#define RDS_HDR_MAGIC		0x52445344u	/* "RDSD" */
/* The program's end of the pair (abstract). */
#define RDS_CTL_SOCK_PREFIX	"ibgw-rds-s/"

/* The kernel's numbers (linux/rds.h), which glibc does not carry. */
#ifndef AF_RDS
#define AF_RDS			21
#endif
#ifndef SOL_RDS
#define SOL_RDS			276
#endif
#define RDS_CTL_CANCEL_SENT_TO	1
#define RDS_CTL_GET_MR		2
#define RDS_CTL_FREE_MR		3
#define RDS_CTL_RECVERR		5
#define RDS_CTL_CONG_MONITOR	6
#define RDS_CTL_GET_MR_FOR_DEST	7
#define RDS_CTL_SO_TRANSPORT	8
#define RDS_CTL_TRANS_IB	0	/* SO_RDS_TRANSPORT's answer */
#define RDS_CTL_TRANS_COUNT	3	/* the kernel's: IB, the old iWARP, TCP */
#define RDS_CTL_TRANS_LOOP	3	/* the kernel's loop transport's (rds.h) */

enum rds_ctl_op {
	RDS_CTL_SOCKET = 1,
	RDS_CTL_BIND = 2,
	RDS_CTL_CONNECT = 3,
	RDS_CTL_INFO = 4,
	RDS_CTL_SETOPT = 5,
	RDS_CTL_BOARD = 6,
};

/* sockaddr_in or sockaddr_in6 (family 0: none), port included. */
union rds_ctl_addr {
	sa_family_t family;
	struct sockaddr_in v4;
	struct sockaddr_in6 v6;
};

/* From the program: its preload checked the destination port on the
 * congestion board when it took the datagram, so the service sends it
 * even if the port is congested by now (as the kernel transmits what it
 * queued); without it the service holds the datagram until the port
 * clears. */
#define RDS_HDR_F_CHECKED	0x1

/* Before every datagram on the pair. */
struct rds_ctl_hdr {
	uint32_t magic;			/* RDS_HDR_MAGIC */
	uint32_t flags;			/* RDS_HDR_F_* */
	union rds_ctl_addr peer;	/* to (from the program) / from */
};

struct rds_ctl_req {
	uint32_t magic;			/* RDS_CTL_MAGIC */
	uint32_t op;			/* enum rds_ctl_op */
	uint32_t id;			/* echoed in the reply */
	int32_t level, name, val;	/* SETOPT */
	union rds_ctl_addr addr;	/* BIND, CONNECT, CANCEL_SENT_TO */
	char program[32];		/* for the service's log lines */
};

struct rds_ctl_reply {
	uint32_t magic;
	uint32_t id;
	int32_t err;
	uint32_t sock_id;		/* the N of the socket's name */
	union rds_ctl_addr local;
	union rds_ctl_addr peer;
	int32_t sndbuf, rcvbuf;		/* as getsockopt says them */
	uint32_t flags;			/* RDS_CTL_R_* */
};
#define RDS_CTL_R_SENT	0x1	/* the socket has sent (the kernel's rs_conn) */

/*
 * The congestion board: the maps the service's peers last sent (one bit
 * per port, RDS's own layout), one slot per peer address, shared
 * read-only with the programs.  A slot is written under a sequence count
 * (odd while it changes); readers retry while it is odd or moved.
 * Addresses as 16 bytes, IPv4 mapped (::ffff:a.b.c.d).
 */
#define RDS_BOARD_MAGIC		0x52444243u	/* "RDBC" */
#define RDS_BOARD_SLOTS		64
#define RDS_BOARD_MAP_BYTES	8192		/* RDS_CONG_MAP_BYTES */

struct rds_board_slot {
	uint32_t seq;			/* even: stable */
	uint32_t used;
	uint8_t addr[16];
	uint8_t bits[RDS_BOARD_MAP_BYTES];
};

struct rds_board {
	uint32_t magic;			/* RDS_BOARD_MAGIC */
	uint32_t nslots;		/* RDS_BOARD_SLOTS */
	uint32_t owner;			/* the service's pid, as in its
					 * sockets' names: a board from a
					 * service since restarted is
					 * fetched again */
	uint32_t pad;
	struct rds_board_slot slot[RDS_BOARD_SLOTS];
};

#endif

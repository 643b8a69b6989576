/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The protocol between a soft-provider node and ibfabricd.
 *
 * A process attaches on a SOCK_SEQPACKET unix socket (the "device socket")
 * and sends FSP_HELLO with its node name.  Control requests and replies,
 * and asynchronous port events, travel on the device socket as one message
 * each: struct fsp_hdr followed by a type-specific body.  Each queue pair
 * gets its own SOCK_SEQPACKET socketpair, passed with SCM_RIGHTS in the
 * reply to FSP_QP_CREATE; on it every message is one native IB packet, LRH
 * through VCRC, in both directions.  Peers are on the same machine, so the
 * control bodies use host byte order; ibfabricd still validates every
 * length and field, as it would a wire format.
 */
#ifndef IBGW_SOFT_PROTO_H
#define IBGW_SOFT_PROTO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define FSP_VERSION	1
#define FSP_NODE_MAX	64	/* node name incl. NUL */
#define FSP_MSG_MAX	65536	/* largest control message */

enum fsp_type {
	FSP_HELLO = 1,		/* c->s fsp_hello; reply fsp_port_info */
	FSP_PORT_QUERY,		/* c->s; reply fsp_port_info */
	FSP_QP_CREATE,		/* c->s fsp_qp_create; reply fsp_qp_ref+fd */
	FSP_QP_DESTROY,		/* c->s fsp_qp_ref; reply empty */
	FSP_MCAST_ATTACH,	/* c->s fsp_mcast; reply empty */
	FSP_MCAST_DETACH,	/* c->s fsp_mcast; reply empty */
	FSP_INJECT,		/* c->s raw packet, switched as from the node */
	FSP_CTL,		/* c->s text command; reply text */
	FSP_REPLY,		/* s->c: status in the header, body per type */
	FSP_EVENT,		/* s->c async: fsp_event */
	FSP_TYPE_MAX
};

#define FSP_HELLO_OBSERVER	0x1	/* a tool: holds no port, no QPs */
/* the node was attached to an ibfabricd that went away and is coming
 * back (its QPs follow with FSP_QP_QPN); the SM answers with
 * CLIENT_REREGISTER, as OpenSM does to the ports of a subnet it finds */
#define FSP_HELLO_REATTACH	0x2

struct fsp_hdr {
	uint16_t type;
	uint16_t resv;
	uint32_t seq;		/* echoed in the reply */
	int32_t status;		/* replies: 0 or a positive errno */
	uint32_t len;		/* body length */
};

struct fsp_hello {
	uint32_t version;
	uint32_t flags;
	char node[FSP_NODE_MAX];
};

struct fsp_port_info {
	uint32_t state;
	uint16_t lid;
	uint16_t sm_lid;
	uint8_t lmc;
	uint8_t sm_sl;
	uint8_t active_mtu;
	uint8_t port_num;
	uint64_t node_guid;
	uint64_t port_guid;
	uint8_t gid[16];
	uint32_t npkeys;
	uint16_t pkeys[32];
};

#define FSP_QP_PRIVILEGED	0x1	/* may send controlled Q_Keys */
#define FSP_QP_GSI		0x2	/* a MAD agent on QP1; qkey holds the
					 * management class */
/* Bursts: every message on the QP socket, both ways, carries one or more
 * packets, each as a 16-bit big-endian length and the packet (LRH ..
 * VCRC), at most FSP_BURST_MAX bytes in all.  One message per burst
 * instead of one per packet, as an HCA rings one doorbell for a chain of
 * work requests.  Not for FSP_QP_GSI. */
#define FSP_QP_BURST		0x4
#define FSP_BURST_MAX		65536
#define FSP_BURST_REC		2	/* length field */
/* Shared-memory rings (with FSP_QP_BURST): the reply passes a second
 * descriptor, a sealed memfd with one ring each way (soft_ring.h); the QP
 * socket then carries only one-byte kicks and its end of file. */
#define FSP_QP_SHM		0x8
#define FSP_FDS_MAX		2
/* the QP wants its number back (re-attaching): the body is
 * struct fsp_qp_create_qpn; EADDRINUSE when the number is taken */
#define FSP_QP_QPN		0x10

struct fsp_qp_create {
	uint32_t type;
	uint32_t qkey;
	uint16_t pkey_index;
	uint16_t flags;
};

struct fsp_qp_create_qpn {
	struct fsp_qp_create c;
	uint32_t qpn;
};

struct fsp_qp_ref {
	uint32_t qpn;
};

struct fsp_mcast {
	uint32_t qpn;
	uint16_t mlid;
	uint16_t resv;
	uint8_t mgid[16];
};

struct fsp_event {
	uint32_t type;		/* enum fab_event_type */
};

/* Send one message, optionally passing a file descriptor (-1: none). */
int fsp_send(int fd, uint16_t type, uint32_t seq, int32_t status,
	     const void *body, size_t len, int pass_fd);
/* The same with nfds (at most FSP_FDS_MAX) descriptors. */
int fsp_send_fds(int fd, uint16_t type, uint32_t seq, int32_t status,
		 const void *body, size_t len, const int *fds, unsigned int nfds);
/*
 * Receive one message: header into *hdr, body into body (cap bytes).
 * Returns the body length; -1 with errno EPIPE (peer closed), EBADMSG
 * (malformed) or EAGAIN (nothing pending).  A passed file
 * descriptor lands in *fd_out (else -1).
 */
ssize_t fsp_recv(int fd, struct fsp_hdr *hdr, void *body, size_t cap,
		 int *fd_out);
/* The same keeping up to nfds passed descriptors in fds[] (the rest, -1;
 * descriptors beyond nfds are closed). */
ssize_t fsp_recv_fds(int fd, struct fsp_hdr *hdr, void *body, size_t cap,
		     int *fds, unsigned int nfds);

#endif

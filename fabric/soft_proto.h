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

/* A node name ibfabricd takes: 1 to FSP_NODE_MAX - 1 letters, digits,
 * '-', '_' and '.'. */
static inline int fsp_node_name_ok(const char *s)
{
	size_t n = 0;

	for (; s[n]; n++)
		if (!((s[n] >= 'a' && s[n] <= 'z') ||
		      (s[n] >= 'A' && s[n] <= 'Z') ||
		      (s[n] >= '0' && s[n] <= '9') || s[n] == '-' ||
		      s[n] == '_' || s[n] == '.'))
			return 0;
	return n > 0 && n < FSP_NODE_MAX;
}
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
	/* connection management (the node's CM runs in ibfabricd) */
	FSP_CM_OPEN,		/* c->s; reply empty + the CM event socket */
	FSP_CM_LISTEN,		/* c->s fsp_cm_listen; reply fsp_cm_ref */
	FSP_CM_CONNECT,		/* c->s fsp_cm_connect; reply fsp_cm_ref */
	FSP_CM_ACCEPT,		/* c->s fsp_cm_accept; reply empty */
	FSP_CM_REJECT,		/* c->s fsp_cm_reject; reply empty */
	FSP_CM_DISCONNECT,	/* c->s fsp_cm_ref; reply empty */
	FSP_CM_DESTROY,		/* c->s fsp_cm_ref; reply empty */
	FSP_CM_EVENT,		/* s->c on the CM event socket: fsp_cm_event */
	FSP_QP_RECYCLE,		/* c->s fsp_qp_recycle; reply fsp_qp_ref */
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

/*
 * FSP_QP_RECYCLE: the RC QP qpn (made with FSP_QP_SHM) is destroyed as
 * by FSP_QP_DESTROY -- what it posted is switched, its number is gone,
 * packets to it are dropped -- and a new RC QP on pkey_index takes over
 * its socket and rings; the reply gives the new QPN.  No descriptors
 * pass, nothing is mapped or unmapped: a process keeps destroyed QPs
 * this way and hands them out again without asking (the provider's pool
 * of spare QPs, fabric/prov_soft.c).  Deliveries to the old QPN that
 * were already in the RX ring stay there; the process drops them.
 */
struct fsp_qp_recycle {
	uint32_t qpn;
	uint16_t pkey_index;
	uint16_t resv;
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

/*
 * Connection management.  A host kernel's CM runs once per node and
 * serves every process of it; so does ibfabricd's (subnet/fsw_cm.h): it
 * exchanges the CM MADs on the node's QP1 and tells processes what
 * happened.  A process asks for its event socket once (FSP_CM_OPEN: the
 * reply passes one end of a SOCK_SEQPACKET socketpair on which only
 * FSP_CM_EVENT messages come); requests go on the device socket and are
 * answered there.  Connections and listeners are named by handles
 * ibfabricd gives (never 0), unique per process.  The RC QP itself is a
 * FSP_QP_CREATE of type FAB_QPT_RC; its transport runs in the process
 * (fabric/soft_rc.h), which gives its QPN and starting PSN here and gets
 * the peer's in the events.
 */
#define FSP_CM_PRIV_MAX		196

struct fsp_cm_listen {
	uint64_t service_id;
	uint64_t service_mask;	/* 0: exact */
	uint32_t backlog;	/* 0: a default */
	uint16_t pkey;		/* 0: every partition; else its REQs alone */
};

struct fsp_cm_ref {
	uint32_t handle;
};

/* what a side offers; 0 counts mean the defaults of fab_cm_param */
struct fsp_cm_offer {
	uint32_t qpn;		/* this process's RC QP, not yet connected */
	uint32_t psn;		/* its first PSN, 24 bits */
	uint8_t responder_resources;
	uint8_t initiator_depth;
	uint8_t retry_count;	/* 0..7 */
	uint8_t rnr_retry_count; /* 0..7 */
	uint8_t priv_len;
	uint8_t resv[3];
	uint8_t priv[FSP_CM_PRIV_MAX];
};

struct fsp_cm_connect {
	uint64_t service_id;
	uint8_t gid[16];	/* the destination port's GID */
	uint16_t dlid;		/* 0: the port with that GID */
	uint16_t pkey_index;	/* must be the QP's */
	uint32_t resv;
	struct fsp_cm_offer o;	/* priv_len up to FAB_CM_REQ_PRIV */
};

struct fsp_cm_accept {
	uint32_t handle;	/* a CONNECT_REQUEST's */
	uint32_t resv;
	struct fsp_cm_offer o;	/* priv_len up to FAB_CM_REP_PRIV */
};

struct fsp_cm_reject {
	uint32_t handle;
	uint8_t priv_len;	/* up to FAB_CM_REJ_PRIV */
	uint8_t resv[3];
	uint8_t priv[FSP_CM_PRIV_MAX];
};

/*
 * An event.  On CONNECT_REQUEST (handle new, listen_handle the listener)
 * and on ESTABLISHED at the active side, the path and peer fields say
 * what the QP needs to connect (soft_rc_conn): the peer's QPN, LID and
 * first PSN, the path MTU, the local ACK timeout, the counts and read
 * depths as negotiated for this side.  Private data: the REQ's, the
 * REP's or the REJ's whole field (zero padded), as fab_cm_event has it.
 */
struct fsp_cm_event {
	uint32_t type;		/* enum fab_cm_event_type */
	uint32_t handle;
	uint32_t listen_handle;
	int32_t status;		/* reject reason, or positive errno */
	uint64_t service_id;
	uint8_t peer_gid[16];
	uint16_t peer_lid;
	uint16_t pkey;
	uint32_t peer_qpn;
	uint32_t peer_psn;
	uint8_t path_mtu;	/* IB MTU code */
	uint8_t ack_timeout;	/* 4.096 us * 2^n */
	uint8_t retry_count;
	uint8_t rnr_retry_count; /* for this side's sends */
	uint8_t responder_resources; /* reads this side serves */
	uint8_t initiator_depth;	/* reads this side may issue */
	uint8_t priv_len;
	uint8_t resv;
	uint8_t priv[FSP_CM_PRIV_MAX];
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

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The fabric interface: every InfiniBand access of ibgw goes through here.
 *
 * Shaped after the verbs object model (and rdma_cm for connections):
 *   fab_dev  an opened HCA port (device context + port + protection domain)
 *   fab_qp   a queue pair with its own completion file descriptor: UD, or
 *            RC on a fab_cm_id
 *   fab_ah   an address handle (where a UD datagram goes)
 *   fab_mr   a registered memory region (lkey, rkey) for RC work requests
 *   fab_cm_id  one end of a reliable connection, or a listener
 *   fab_mad_agent  a management-class agent on the port's GSI (QP1), as a
 *            kernel MAD agent / umad registration is
 *
 * Providers are chosen by a spec string:
 *   soft:PATH               a node attached to ibfabricd at unix socket PATH
 *   verbs:DEVICE[:PORT[:GID]]  an HCA through rdma-core: InfiniBand, or
 *                           RoCE (Ethernet link layer: Soft-RoCE rdma_rxe,
 *                           RoCE NICs).  GID picks the source GID: a GID
 *                           table index, "ipv4" or "ipv6" (the first
 *                           RoCE v2 GID of that family); see prov_verbs.c
 *   umad:DEVICE[:PORT]      MADs only, through libibumad (no queue pairs):
 *                           for SA clients, and for OpenSM on ibsim
 *
 * Error conventions, as netlink/nl_link.h: functions return 0 (or a count)
 * on success and -1 -- NULL for a constructor -- on failure, with errno set.
 * Constructors and set-up calls (fab_open, fab_query_port, fab_qp_create,
 * fab_ah_create, fab_attach_mcast, fab_detach_mcast, fab_mad_open) also
 * fill err with a one-line reason that names the provider ("soft: connect
 * to ibfabricd at PATH: No such file or directory"); err may be NULL, and
 * when errlen > 0 it is always NUL-terminated.  The per-packet calls
 * (fab_qp_send, fab_qp_recv, fab_mad_send, fab_mad_recv, fab_get_event)
 * set errno only, as read(2) does.  The errno values callers may act on:
 *   EPROTONOSUPPORT  no provider of that name
 *   EINVAL           a bad spec, argument or attribute (P_Key index ...)
 *   ENAMETOOLONG     a node name or socket path too long
 *   ENOENT, ECONNREFUSED  no ibfabricd at the socket path
 *   ECONNRESET       the fabric is gone (ibfabricd exited, the HCA died):
 *                    a FAB_EV_DEVICE_FATAL event follows
 *   ETIMEDOUT        ibfabricd did not answer a request in time
 *   EPROTO           ibfabricd's answer did not make sense
 *   EOPNOTSUPP       the provider has no such object (umad: queue pairs)
 *   EMSGSIZE         a datagram larger than the port MTU
 *   EAGAIN           a MAD send queue is full
 *   ENOMEM           out of memory
 * and what ibfabricd or the kernel refused a request with.  Nothing here
 * logs.
 */
#ifndef IBGW_FABRIC_H
#define IBGW_FABRIC_H

#include <stddef.h>
#include <stdint.h>

#define FAB_GRH_LEN		40	/* GRH slot before every UD payload */
#define FAB_MAX_PKEYS		32
#define FAB_DEFAULT_SOFT_PATH	"/run/ibgw/fabric.sock"
#define FAB_QKEY_CONTROLLED	0x80000000u	/* high bit: privileged */
#define FAB_QP1_QKEY		0x80010000u
#define FAB_MCAST_QPN		0xFFFFFFu
#define FAB_LID_MCAST_MIN	0xC000
#define FAB_LID_MCAST_MAX	0xFFFE
#define FAB_LID_PERMISSIVE	0xFFFF
#define FAB_ERRLEN		256	/* a comfortable err size */

union fab_gid {
	uint8_t raw[16];
	struct {
		uint64_t subnet_prefix;	/* big-endian on the wire */
		uint64_t interface_id;	/* big-endian on the wire */
	} global;
};

/* What the port's link is.  Ethernet means RoCE: GIDs address the ports
 * (LIDs are 0), every address handle carries a GRH, and there is no subnet
 * manager or SA, so IPoIB and SA queries need an InfiniBand port. */
enum fab_link_layer {
	FAB_LINK_IB = 1,
	FAB_LINK_ETHERNET = 2,
};

/* The kind of a GID table entry (the source GID a port sends from). */
enum fab_gid_type {
	FAB_GID_IB = 1,
	FAB_GID_ROCE_V1 = 2,	/* RoCE over Ethernet, EtherType 0x8915 */
	FAB_GID_ROCE_V2 = 3,	/* RoCE over UDP/IP, port 4791 */
};

enum fab_port_state {
	FAB_PORT_DOWN = 1,
	FAB_PORT_INIT = 2,
	FAB_PORT_ARMED = 3,
	FAB_PORT_ACTIVE = 4,
};

struct fab_port_attr {
	enum fab_port_state state;
	uint16_t lid;
	uint16_t sm_lid;
	uint8_t lmc;
	uint8_t sm_sl;
	uint8_t active_mtu;	/* IB MTU code: 1=256 ... 5=4096 */
	uint8_t port_num;
	uint64_t node_guid;	/* host byte order */
	uint64_t port_guid;	/* host byte order */
	union fab_gid gid;	/* GID index 0 */
	uint16_t pkeys[FAB_MAX_PKEYS];	/* P_Key table; 0 = empty slot */
	unsigned int npkeys;
	enum fab_link_layer link_layer;
	/* The source GID address handles use unless they name another
	 * (fab_ah_attr.use_sgid_index): index 0 on InfiniBand, the spec's
	 * choice on RoCE, where sgid is what a peer's dgid must be. */
	uint8_t sgid_index;
	enum fab_gid_type sgid_type;
	union fab_gid sgid;
	/* RoCE: the ifindex of the netdev sgid is an address of (the
	 * kernel's GID attribute); 0 on InfiniBand and the soft fabric */
	unsigned int sgid_ifindex;
};

enum fab_event_type {
	FAB_EV_PORT_ACTIVE = 1,
	FAB_EV_PORT_ERR,
	FAB_EV_LID_CHANGE,
	FAB_EV_PKEY_CHANGE,
	FAB_EV_SM_CHANGE,
	FAB_EV_CLIENT_REREGISTER,
	FAB_EV_GID_CHANGE,
	FAB_EV_DEVICE_FATAL,	/* the fabric is gone (ibfabricd exited) */
};

struct fab_event {
	enum fab_event_type type;
};

enum fab_qp_type {
	FAB_QPT_UD = 1,
	FAB_QPT_RC = 2,		/* only through fab_cm_qp_create() */
};

struct fab_qp_init {
	enum fab_qp_type type;
	uint32_t qkey;		/* the QP's Q_Key (UD) */
	uint16_t pkey_index;	/* index into the port's P_Key table */
	uint32_t max_send;	/* send queue depth (0: provider default) */
	uint32_t max_recv;	/* receive queue depth (0: provider default) */
	uint32_t max_sge;	/* RC: SGEs per work request (0: 1) */
	uint32_t max_inline;	/* RC: inline send bytes wanted (0: none) */
};

/* On RoCE (FAB_LINK_ETHERNET) an address handle must be global (a GRH:
 * dgid, hop_limit; 0 becomes 64) and dlid is ignored; to a multicast group
 * the dgid is its MGID. */
struct fab_ah_attr {
	uint16_t dlid;
	uint8_t sl;
	uint8_t static_rate;
	uint8_t is_global;	/* send a GRH (always for multicast) */
	uint8_t hop_limit;
	uint8_t traffic_class;
	uint8_t sgid_index;	/* only with use_sgid_index */
	uint8_t use_sgid_index;	/* 0: the port's fab_port_attr.sgid_index */
	uint32_t flow_label;
	union fab_gid dgid;
};

struct fab_dev;
struct fab_qp;
struct fab_ah;

/* One UD datagram to send.  A remote_qkey with the high bit set means "use
 * the QP's own Q_Key", as in verbs. */
struct fab_send_wr {
	struct fab_ah *ah;
	uint32_t remote_qpn;
	uint32_t remote_qkey;
	const void *buf;
	uint32_t len;
};

/* One received UD datagram.  The caller sets buf/buf_len; the provider
 * writes the 40-byte GRH slot (valid when grh_present) followed by the
 * payload, and sets byte_len = 40 + payload length, as verbs does. */
struct fab_recv {
	uint8_t *buf;
	uint32_t buf_len;
	uint32_t byte_len;
	uint32_t src_qp;
	uint16_t slid;
	uint16_t pkey_index;
	uint8_t sl;
	uint8_t grh_present;
	uint8_t truncated;	/* payload did not fit buf_len */
};

/* Open a port.  node names the software node (soft provider); verbs
 * ignores it.  NULL with errno: EPROTONOSUPPORT for an unknown provider,
 * EINVAL for a spec without one, else the provider's. */
struct fab_dev *fab_open(const char *spec, const char *node, char *err,
			 size_t errlen);
void fab_close(struct fab_dev *dev);
int fab_query_port(struct fab_dev *dev, struct fab_port_attr *attr,
		   char *err, size_t errlen);
/* Readable when fab_get_event() may return an event. */
int fab_dev_fd(struct fab_dev *dev);
/* 1: *ev filled; 0: no event pending; -1: error (errno). */
int fab_get_event(struct fab_dev *dev, struct fab_event *ev);
const char *fab_event_name(enum fab_event_type type);

struct fab_qp *fab_qp_create(struct fab_dev *dev,
			     const struct fab_qp_init *init, char *err,
			     size_t errlen);
void fab_qp_destroy(struct fab_qp *qp);
uint32_t fab_qp_num(const struct fab_qp *qp);
/* Readable when fab_qp_recv() may return completions. */
int fab_qp_fd(struct fab_qp *qp);
/* Send n datagrams; returns how many were accepted (may be < n when the
 * send queue is full, or when wr[k] is refused after k were accepted), or
 * -1 with errno when the first is refused (EMSGSIZE: larger than the
 * port MTU). */
int fab_qp_send(struct fab_qp *qp, const struct fab_send_wr *wr, int n);
/* Non-blocking; returns 0..n completions filled, or -1 with errno
 * (ECONNRESET: the fabric is gone).  Fewer than n
 * only when nothing is left (a CQ polled empty), which re-arms the file
 * descriptor; a caller that stops after a full batch must call again
 * without waiting for the descriptor. */
int fab_qp_recv(struct fab_qp *qp, struct fab_recv *rc, int n);
/* On RoCE the MLID means nothing (any value in the multicast range does)
 * and no SA is asked: the provider joins the MGID's IP multicast group
 * (::ffff:a.b.c.d is IPv4 a.b.c.d) on the source GID's netdev. */
int fab_attach_mcast(struct fab_qp *qp, const union fab_gid *mgid,
		     uint16_t mlid, char *err, size_t errlen);
int fab_detach_mcast(struct fab_qp *qp, const union fab_gid *mgid,
		     uint16_t mlid, char *err, size_t errlen);

struct fab_ah *fab_ah_create(struct fab_dev *dev,
			     const struct fab_ah_attr *attr, char *err,
			     size_t errlen);
void fab_ah_destroy(struct fab_ah *ah);

/*
 * Reliable connections: memory regions, RC queue pairs and connection
 * management, shaped after verbs and rdma_cm (docs/rc-cm.md).  Providers
 * without them (umad, the unit tests' mem) fail every call
 * below with EOPNOTSUPP; fabric.c does that for a provider whose op is
 * NULL.  Set-up calls fill err as the constructors above do; the data
 * path calls (fab_qp_post_send, fab_qp_post_recv, fab_qp_poll,
 * fab_cm_get_event) set errno only.
 */

/* Memory regions: what RC work requests point into.  Access flags as
 * verbs has them; a region is always locally readable. */
#define FAB_ACCESS_LOCAL_WRITE	0x1	/* receives and RDMA read land here */
#define FAB_ACCESS_REMOTE_WRITE	0x2	/* needs LOCAL_WRITE, as in verbs */
#define FAB_ACCESS_REMOTE_READ	0x4

struct fab_mr;

/* Register [addr, addr + len) of this process on dev's protection domain
 * (the one its RC QPs use).  NULL with errno: EINVAL (len 0, REMOTE_WRITE
 * without LOCAL_WRITE, unknown flags), EOPNOTSUPP, or the kernel's
 * (ENOMEM: over RLIMIT_MEMLOCK).  The memory must stay mapped until
 * fab_mr_dereg; a region must be deregistered before its fab_dev closes. */
struct fab_mr *fab_mr_reg(struct fab_dev *dev, void *addr, size_t len,
			  unsigned int access, char *err, size_t errlen);
void fab_mr_dereg(struct fab_mr *mr);
uint32_t fab_mr_lkey(const struct fab_mr *mr);	/* for our own SGEs */
uint32_t fab_mr_rkey(const struct fab_mr *mr);	/* what a peer puts in RETH */

/* A piece of a registered region, as ibv_sge: addr is a virtual address
 * inside the region whose lkey is given. */
struct fab_sge {
	uint64_t addr;
	uint32_t length;
	uint32_t lkey;
};

enum fab_wr_opcode {
	FAB_WR_SEND = 1,
	FAB_WR_SEND_WITH_IMM,
	FAB_WR_RDMA_WRITE,
	FAB_WR_RDMA_WRITE_WITH_IMM,	/* consumes a receive at the peer */
	FAB_WR_RDMA_READ,
};

#define FAB_SEND_SIGNALED	0x1	/* a completion even on success */
#define FAB_SEND_INLINE		0x2	/* copied at post time, no lkey */
#define FAB_SEND_FENCE		0x4	/* after earlier RDMA reads complete */
#define FAB_SEND_SOLICITED	0x8	/* BTH SE on the last packet: wakes a
					 * peer that armed its CQ for solicited
					 * completions only (the kernel's RDS) */

/* One RC send-queue work request.  Unsignaled requests that succeed
 * produce no completion (a failed one always does); the send queue frees
 * their slots when a later signaled one completes, so a caller that
 * posts only unsignaled requests fills the queue.  imm_data is in host
 * order (the wire carries it big-endian). */
struct fab_rc_wr {
	uint64_t wr_id;
	enum fab_wr_opcode opcode;
	unsigned int flags;		/* FAB_SEND_* */
	const struct fab_sge *sg_list;
	unsigned int num_sge;
	uint32_t imm_data;		/* *_WITH_IMM */
	uint64_t remote_addr;		/* RDMA_*: the peer's virtual address */
	uint32_t rkey;			/* RDMA_*: the peer region's rkey */
};

/* One receive buffer (scatter list) for an incoming SEND or the
 * immediate of an RDMA WRITE with immediate. */
struct fab_recv_wr {
	uint64_t wr_id;
	const struct fab_sge *sg_list;
	unsigned int num_sge;
};

/* Completion status, as ibv_wc_status names them.  Once a request fails
 * the QP is in the error state: every request still queued, and every
 * one posted later, completes with FAB_WC_WR_FLUSH_ERR. */
enum fab_wc_status {
	FAB_WC_SUCCESS = 0,
	FAB_WC_LOC_LEN_ERR,		/* a receive too small for the SEND */
	FAB_WC_LOC_QP_OP_ERR,
	FAB_WC_LOC_PROT_ERR,		/* bad lkey or address */
	FAB_WC_WR_FLUSH_ERR,		/* flushed: the QP is in error */
	FAB_WC_BAD_RESP_ERR,
	FAB_WC_LOC_ACCESS_ERR,
	FAB_WC_REM_INV_REQ_ERR,		/* NAK: invalid request */
	FAB_WC_REM_ACCESS_ERR,		/* NAK: bad rkey, range or rights */
	FAB_WC_REM_OP_ERR,
	FAB_WC_RETRY_EXC_ERR,		/* no ACK after retry_count tries */
	FAB_WC_RNR_RETRY_EXC_ERR,	/* RNR NAKs beyond rnr_retry_count */
	FAB_WC_REM_ABORT_ERR,
	FAB_WC_GENERAL_ERR,		/* anything else (vendor_err says) */
};

enum fab_wc_opcode {
	FAB_WC_SEND = 1,
	FAB_WC_RDMA_WRITE,
	FAB_WC_RDMA_READ,
	FAB_WC_RECV,			/* a SEND [with immediate] arrived */
	FAB_WC_RECV_RDMA_WITH_IMM,	/* an RDMA WRITE with immediate did */
};

/* One completion of an RC QP (send and receive queue share one CQ).
 * opcode is valid only with FAB_WC_SUCCESS (verbs leaves it undefined
 * otherwise); recv says which queue the wr_id came from, always. */
struct fab_wc {
	uint64_t wr_id;
	enum fab_wc_status status;
	enum fab_wc_opcode opcode;
	uint32_t byte_len;		/* receives: bytes written */
	uint32_t imm_data;		/* host order, when imm_valid */
	uint32_t vendor_err;
	uint32_t src_qp;
	uint8_t imm_valid;
	uint8_t recv;			/* 1: a receive-queue completion */
};

/* Post n requests in order; returns how many were accepted (< n when the
 * queue is full, or when wr[k] is refused after k were accepted), or -1
 * with errno when the first is refused: EINVAL (a bad opcode, num_sge over
 * max_sge, not an RC QP; verbs also for a send before the connection is
 * up), ENOMEM (queue full).  Receives may be posted as soon as the QP
 * exists, and should be, before accepting or connecting; sends once
 * FAB_CM_EV_ESTABLISHED has been seen.  A QP in the error state
 * accepts requests and flushes them (FAB_WC_WR_FLUSH_ERR), as verbs does;
 * a provider that refuses instead says so in its own documentation. */
int fab_qp_post_send(struct fab_qp *qp, const struct fab_rc_wr *wr, int n);
int fab_qp_post_recv(struct fab_qp *qp, const struct fab_recv_wr *wr, int n);
/* Non-blocking, for RC QPs: 0..n completions, or -1 with errno.  As
 * fab_qp_recv: fewer than n only when the CQ is empty, which re-arms
 * fab_qp_fd(); a caller that stops after a full batch must call again. */
int fab_qp_poll(struct fab_qp *qp, struct fab_wc *wc, int n);
/* Move an RC QP to the error state (flushing what is queued). */
int fab_qp_set_error(struct fab_qp *qp);
const char *fab_wc_status_name(enum fab_wc_status status);

/*
 * Connection management, shaped after rdma_cm.  A fab_cm_id is one end of
 * a connection, or a listener.  The CM events of all of a fab_dev's ids
 * come through one pollable descriptor, fab_cm_fd(), drained by
 * fab_cm_get_event(), on the caller's event loop.
 *
 * An address is a GID and a service ID.  On InfiniBand the GID is the
 * port's (AF_IB in rdma_cm); on RoCE it is an IP address: ::ffff:a.b.c.d
 * for IPv4, else IPv6, as the port's RoCE v2 GIDs are.  The all-zero GID
 * in a listen means the dev's own source GID (fab_port_attr.sgid): an id
 * is always bound to its fab_dev.  Service IDs as the IB CM has them, in
 * host order; rdma_cm's IP port spaces are service IDs too:
 * FAB_CM_SID_TCP(port) is RDMA_PS_TCP's port (what rdma_cm on RoCE and
 * rping use).  lid is a hint for providers without path resolution (0:
 * find it from the GID); verbs ignores it.
 */
#define FAB_CM_PS_TCP		0x0106
#define FAB_CM_PS_IB		0x013f
#define FAB_CM_SID_PS(ps, port)	(((uint64_t)(ps) << 16) | (uint16_t)(port))
#define FAB_CM_SID_TCP(port)	FAB_CM_SID_PS(FAB_CM_PS_TCP, port)
#define FAB_CM_SID_IB(port)	FAB_CM_SID_PS(FAB_CM_PS_IB, port)
#define FAB_CM_SID_PORT_MASK	0xffffffffffff0000ull	/* any port */
#define FAB_CM_SID_EXACT	0xffffffffffffffffull

/* Private data sizes of the CM messages (IBA 12.6).  rdma_cm on an IP
 * address prepends its own 36-byte header to a REQ's, which leaves the
 * caller 56 bytes (FAB_CM_REQ_PRIV_IP); AF_IB and providers of their own
 * CM give the whole 92.  Over the limit: EINVAL. */
#define FAB_CM_REQ_PRIV		92
#define FAB_CM_REQ_PRIV_IP	56
#define FAB_CM_REP_PRIV		196
#define FAB_CM_REJ_PRIV		148
#define FAB_CM_PRIV_MAX		196	/* the largest an event carries */

/* The CM's reject reasons (IBA table 112) callers may see. */
#define FAB_CM_REJ_TIMEOUT		1	/* no reply to the REQ */
#define FAB_CM_REJ_INVALID_SERVICE_ID	8	/* nobody listens */
#define FAB_CM_REJ_STALE_CONN		10
#define FAB_CM_REJ_CONSUMER_DEFINED	28	/* fab_cm_reject() */

struct fab_cm_addr {
	union fab_gid gid;
	uint64_t service_id;
	uint64_t service_mask;	/* listen only: 0 means FAB_CM_SID_EXACT */
	uint16_t lid;		/* hint; 0: resolve from gid */
	/* listen only: take the REQs of this partition alone (the low 15
	 * bits of the REQ's P_Key compared), as rdma_cm's listener on an
	 * IPoIB interface's address takes its partition's; listeners of
	 * other partitions may then share the service IDs.  0: every
	 * partition.  The verbs provider listens on an address and leaves
	 * the partition to rdma_cm: it ignores this. */
	uint16_t pkey;
};

/* What a connection negotiates.  0 in a count field means the provider's
 * default: 1 outstanding RDMA read each way (responder_resources,
 * initiator_depth), retry_count 7, rnr_retry_count 7 (retry for ever).
 * min_rnr_timer is not negotiated: the code (IBA table 45, 1..31) that
 * our QP's RNR NAKs carry, how long a peer that finds no receive posted
 * waits before it tries again; 0 leaves the provider's (rdma_cm's is 0,
 * which means 655.36 ms; the soft provider's SOFT_MIN_RNR_TIMER). */
struct fab_cm_param {
	const void *private_data;
	uint8_t private_data_len;
	uint8_t responder_resources;	/* reads we serve at once */
	uint8_t initiator_depth;	/* reads we have outstanding */
	uint8_t retry_count;
	uint8_t rnr_retry_count;
	uint8_t min_rnr_timer;
};

enum fab_cm_event_type {
	FAB_CM_EV_CONNECT_REQUEST = 1,	/* on a listener: a REQ */
	FAB_CM_EV_ESTABLISHED,		/* REP received (active), RTU (passive) */
	FAB_CM_EV_REJECTED,		/* REJ: status is its reason */
	FAB_CM_EV_UNREACHABLE,		/* address, route or REQ timed out */
	FAB_CM_EV_CONNECT_ERROR,	/* any other failure to connect */
	FAB_CM_EV_DISCONNECTED,		/* DREQ received, or ours answered */
	FAB_CM_EV_DEVICE_REMOVAL,
	FAB_CM_EV_TIMEWAIT_EXIT,	/* the QP may be reused or destroyed */
};

struct fab_cm_id;

/*
 * A CM event, copied out: nothing needs acknowledging.  id is the
 * connection it is about; on FAB_CM_EV_CONNECT_REQUEST it is a new id,
 * the caller's to fab_cm_accept, fab_cm_reject or fab_cm_destroy, and
 * listen_id is the listener (NULL otherwise).  status: the reject reason
 * for REJECTED, a positive errno for UNREACHABLE and CONNECT_ERROR, else
 * 0.  private_data: the REQ's (CONNECT_REQUEST), the REP's (ESTABLISHED,
 * active side) or the REJ's (REJECTED); private_data_len is at least what
 * the peer sent -- rdma_cm zero-pads to the message's field size -- so a
 * protocol carries its own lengths, as IPoIB CM and RDS do.  peer: the
 * remote address (CONNECT_REQUEST); peer_qpn its QP number when known.
 */
struct fab_cm_event {
	enum fab_cm_event_type type;
	struct fab_cm_id *id;
	struct fab_cm_id *listen_id;
	int status;
	uint32_t peer_qpn;
	struct fab_cm_addr peer;
	uint8_t private_data_len;
	uint8_t private_data[FAB_CM_PRIV_MAX];
};

/* Readable when fab_cm_get_event() may return an event; created on first
 * use, stable for the fab_dev's life.  -1 with errno EOPNOTSUPP. */
int fab_cm_fd(struct fab_dev *dev);
/* Non-blocking: 1 with *ev filled, 0 when nothing is pending, -1 with
 * errno.  Steps of the provider's own (address and route resolution)
 * are taken here and never surface. */
int fab_cm_get_event(struct fab_dev *dev, struct fab_cm_event *ev);
const char *fab_cm_event_name(enum fab_cm_event_type type);

/* Listen on addr's service ID under its mask (rdma_cm on an IP address:
 * an exact port only; EINVAL for another mask).  backlog 0: a default. */
struct fab_cm_id *fab_cm_listen(struct fab_dev *dev,
				const struct fab_cm_addr *addr, int backlog,
				void *context, char *err, size_t errlen);
/* An id to connect from, bound to dev (so that its QP can be created and
 * receives posted before fab_cm_connect). */
struct fab_cm_id *fab_cm_create_id(struct fab_dev *dev, void *context,
				   char *err, size_t errlen);
/* The id's RC QP on dev's protection domain, its send and receive
 * completions on one CQ behind fab_qp_fd().  init->type must be
 * FAB_QPT_RC; one QP per id; the id owns it (fab_cm_destroy destroys it,
 * and so may fab_qp_destroy, earlier).  On a CONNECT_REQUEST's id: before
 * fab_cm_accept. */
struct fab_qp *fab_cm_qp_create(struct fab_cm_id *id,
				const struct fab_qp_init *init, char *err,
				size_t errlen);
struct fab_qp *fab_cm_qp(const struct fab_cm_id *id);	/* NULL: none */
/* Connect id (with its QP) to dst: resolves the address and route, sends
 * the REQ; the outcome is an ESTABLISHED, REJECTED, UNREACHABLE or
 * CONNECT_ERROR event.  Private data over the REQ's limit: EINVAL. */
int fab_cm_connect(struct fab_cm_id *id, const struct fab_cm_addr *dst,
		   const struct fab_cm_param *param, char *err, size_t errlen);
/* Answer a CONNECT_REQUEST with a REP (ESTABLISHED follows the RTU)... */
int fab_cm_accept(struct fab_cm_id *id, const struct fab_cm_param *param,
		  char *err, size_t errlen);
/* ... or a REJ, reason FAB_CM_REJ_CONSUMER_DEFINED, carrying private data
 * (up to FAB_CM_REJ_PRIV); the id is then the caller's to destroy. */
int fab_cm_reject(struct fab_cm_id *id, const void *private_data,
		  uint8_t len, char *err, size_t errlen);
/* Send a DREQ (the QP goes to the error state); a DISCONNECTED event
 * follows the DREP or its timeout, and the peer sees one too. */
int fab_cm_disconnect(struct fab_cm_id *id, char *err, size_t errlen);
/* Destroy the id, its QP if any, and its connection (a live one is torn
 * down as by the peer's view of a vanished node). */
void fab_cm_destroy(struct fab_cm_id *id);
void *fab_cm_context(const struct fab_cm_id *id);
void fab_cm_set_context(struct fab_cm_id *id, void *context);

/*
 * No MRA call: rdma_cm does not expose the MRA (the kernel's CM sends it
 * by itself when a REQ or REP waits long for its answer), so a provider
 * mapped onto it cannot offer one.  A provider with its own CM sends MRA
 * as it sees fit.
 */

/*
 * MADs on the general services interface (QP1).  An agent registers for one
 * management class; MADs sent through it leave the port's QP1 (Q_Key
 * 0x80010000), and responses to its requests come back to it.  The provider
 * may rewrite the high 32 bits of the TransactionID to route responses (as
 * the kernel MAD layer does); callers match responses on the low 32 bits.
 */
struct fab_mad_agent;

/*
 * Where a MAD goes, or where it came from.  The GRH fields matter on RoCE
 * (an Ethernet link layer: Soft-RoCE, RoCE NICs), where ports have no LIDs
 * and every MAD must carry a GRH, and on InfiniBand across subnets.
 * Sending with grh_present: gid is the destination GID, sgid_index the
 * entry of our GID table to send from (on RoCE it picks RoCE v1 or v2 and
 * IPv4 or IPv6), hop_limit 0 means 64.  Received with grh_present: gid is
 * the sender's GID and sgid_index the entry the MAD was sent to, so that
 * sending a reply to the address as received goes back the same way.
 * Zero-initialised: no GRH, LID routing, as on a single IB subnet.
 */
struct fab_mad_addr {
	uint16_t lid;		/* destination / source LID; 0 on RoCE */
	uint32_t qpn;		/* normally 1 */
	uint32_t qkey;		/* normally FAB_QP1_QKEY */
	uint16_t pkey_index;
	uint8_t sl;
	uint8_t grh_present;
	uint8_t sgid_index;
	uint8_t hop_limit;
	uint8_t traffic_class;
	uint32_t flow_label;	/* 20 bits */
	union fab_gid gid;
};

/* NULL with errno EOPNOTSUPP when the provider has no MAD interface.  The
 * agent receives only the responses to its own requests. */
struct fab_mad_agent *fab_mad_open(struct fab_dev *dev, uint8_t mgmt_class,
				   char *err, size_t errlen);

/*
 * An agent that also serves: besides the responses to its own requests it
 * receives the requests of its class and class version whose method has
 * its bit set in methods (method m: bit m % 64 of methods[m / 64]), as a
 * connection manager must (the CM's REQ, REP, RTU, DREQ ... are all Send,
 * 0x03, of class 0x07 version 2) and any server of a class.  A method of a
 * class version belongs to one agent per port: the kernel refuses a second
 * (EINVAL), such as ours for the CM's Send while its ib_cm is loaded.
 * class_version 0 is the class's usual one: 2 for SA (0x03) and CM (0x07),
 * else 1.  With no methods this is fab_mad_open(); with methods, providers
 * without such agents fail with EOPNOTSUPP.
 */
struct fab_mad_reg {
	uint8_t mgmt_class;
	uint8_t class_version;
	uint64_t methods[2];
};

struct fab_mad_agent *fab_mad_register(struct fab_dev *dev,
				       const struct fab_mad_reg *reg,
				       char *err, size_t errlen);
void fab_mad_close(struct fab_mad_agent *agent);
/* Readable when fab_mad_recv() may return a MAD. */
int fab_mad_fd(struct fab_mad_agent *agent);
/* Send one MAD (256 bytes) to 'to'.  -1 with errno: EINVAL for another
 * length, EAGAIN when the send queue is full. */
int fab_mad_send(struct fab_mad_agent *agent, const struct fab_mad_addr *to,
		 const void *mad, size_t len);
/* Non-blocking: the MAD's length, 0 if none is pending, or -1 with errno
 * (ECONNRESET: the fabric is gone). */
int fab_mad_recv(struct fab_mad_agent *agent, void *buf, size_t cap,
		 struct fab_mad_addr *from);

/* Helpers shared by providers and users. */
int fab_pkey_find(const struct fab_port_attr *attr, uint16_t pkey);
int fab_pkey_index(const uint16_t *table, unsigned int n, uint16_t pkey);
int fab_mtu_to_bytes(uint8_t mtu_code);
void fab_gid_to_str(const union fab_gid *gid, char *buf, size_t len);
int fab_gid_from_str(const char *s, union fab_gid *gid);

#endif

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The fabric interface: every InfiniBand access of ibgw goes through here.
 *
 * Shaped after the verbs object model so that RC queue pairs, connection
 * management and shared-memory paths can be added beside what exists:
 *   fab_dev  an opened HCA port (device context + port + protection domain)
 *   fab_qp   a queue pair with its own completion file descriptor
 *   fab_ah   an address handle (where a UD datagram goes)
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
};

struct fab_qp_init {
	enum fab_qp_type type;
	uint32_t qkey;		/* the QP's Q_Key */
	uint16_t pkey_index;	/* index into the port's P_Key table */
	uint32_t max_send;	/* send queue depth (0: provider default) */
	uint32_t max_recv;	/* receive queue depth (0: provider default) */
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

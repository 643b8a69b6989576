/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Communication management MADs (IBTA vol. 1 chapter 12.6, class 0x07
 * version 2): REQ, MRA, REJ, REP, RTU, DREQ and DREP, the one place where
 * they are laid out.  Offsets are from the start of the MAD data (byte 24,
 * after the common MAD header of sa_mad.h), bit fields from the most
 * significant bit, as the spec's tables give them.
 *
 * All structs hold host-order values.  Parsing takes the buffer length,
 * never reads past it, and points private data into the MAD (the wire
 * field has a fixed size; the consumer's protocol says how much is used).
 * Building checks every field's range and the private data's length.
 * Both report the first thing wrong as a cm_mad_err.
 */
#ifndef IBGW_CM_MAD_H
#define IBGW_CM_MAD_H

#include <stddef.h>
#include <stdint.h>

#include "fabric/fabric.h"
#include "fabric/sa_mad.h"

#define MAD_CLASS_CM		0x07
#define CM_CLASS_VERSION	2
#define CM_DATA_LEN		(MAD_LEN - MAD_HDR_LEN)	/* 232 */

#define CM_ATTR_REQ		0x0010
#define CM_ATTR_MRA		0x0011
#define CM_ATTR_REJ		0x0012
#define CM_ATTR_REP		0x0013
#define CM_ATTR_RTU		0x0014
#define CM_ATTR_DREQ		0x0015
#define CM_ATTR_DREP		0x0016

/* private data sizes (bytes) */
#define CM_REQ_PRIV_LEN		92
#define CM_MRA_PRIV_LEN		222
#define CM_REJ_PRIV_LEN		148
#define CM_REJ_ARI_LEN		72
#define CM_REP_PRIV_LEN		196
#define CM_RTU_PRIV_LEN		224
#define CM_DREQ_PRIV_LEN	220
#define CM_DREP_PRIV_LEN	224

/* REQ Transport Service Type */
#define CM_TRANSPORT_RC		0
#define CM_TRANSPORT_UC		1
#define CM_TRANSPORT_RD		2

/* MRA Message MRAed, REJ Message Rejected */
#define CM_MSG_REQ		0
#define CM_MSG_REP		1
#define CM_MSG_OTHER		2	/* LAP (MRA), other (REJ) */

/* REJ reasons (IBTA table 112) */
#define CM_REJ_NO_QP			1
#define CM_REJ_NO_EEC			2
#define CM_REJ_NO_RESOURCES		3
#define CM_REJ_TIMEOUT			4
#define CM_REJ_UNSUPPORTED		5
#define CM_REJ_INVALID_COMM_ID		6
#define CM_REJ_INVALID_COMM_INSTANCE	7
#define CM_REJ_INVALID_SERVICE_ID	8
#define CM_REJ_INVALID_TRANSPORT_TYPE	9
#define CM_REJ_STALE_CONN		10
#define CM_REJ_RDC_NOT_EXIST		11
#define CM_REJ_INVALID_GID		12
#define CM_REJ_INVALID_LID		13
#define CM_REJ_INVALID_SL		14
#define CM_REJ_INVALID_TRAFFIC_CLASS	15
#define CM_REJ_INVALID_HOP_LIMIT	16
#define CM_REJ_INVALID_PACKET_RATE	17
#define CM_REJ_INVALID_ALT_GID		18
#define CM_REJ_INVALID_ALT_LID		19
#define CM_REJ_INVALID_ALT_SL		20
#define CM_REJ_INVALID_ALT_TRAFFIC_CLASS 21
#define CM_REJ_INVALID_ALT_HOP_LIMIT	22
#define CM_REJ_INVALID_ALT_PACKET_RATE	23
#define CM_REJ_PORT_CM_REDIRECT		24
#define CM_REJ_PORT_REDIRECT		25
#define CM_REJ_INVALID_MTU		26
#define CM_REJ_INSUFFICIENT_RESP_RES	27
#define CM_REJ_CONSUMER_DEFINED		28
#define CM_REJ_INVALID_RNR_RETRY	29
#define CM_REJ_DUPLICATE_LOCAL_COMM_ID	30
#define CM_REJ_INVALID_CLASS_VERSION	31
#define CM_REJ_INVALID_FLOW_LABEL	32
#define CM_REJ_INVALID_ALT_FLOW_LABEL	33
#define CM_REJ_VENDOR_OPTION_UNSUPP	35

/* a REQ's primary or alternate path (IBTA table 106, bytes 52-95) */
struct cm_path {
	uint16_t local_lid;
	uint16_t remote_lid;
	union fab_gid local_gid;
	union fab_gid remote_gid;
	uint32_t flow_label;	/* 20 bits */
	uint8_t packet_rate;	/* 6 bits */
	uint8_t traffic_class;
	uint8_t hop_limit;
	uint8_t sl;		/* 4 bits */
	uint8_t subnet_local;	/* 1 bit */
	uint8_t local_ack_timeout;	/* 5 bits */
};

struct cm_req {
	uint32_t local_comm_id;
	uint64_t service_id;
	uint64_t local_ca_guid;
	uint32_t local_qkey;
	uint32_t local_qpn;		/* 24 bits */
	uint8_t responder_resources;
	uint32_t local_eecn;		/* 24 bits */
	uint8_t initiator_depth;
	uint32_t remote_eecn;		/* 24 bits */
	uint8_t remote_cm_resp_timeout;	/* 5 bits */
	uint8_t transport;		/* 2 bits, CM_TRANSPORT_* */
	uint8_t e2e_flow_ctrl;		/* 1 bit */
	uint32_t starting_psn;		/* 24 bits */
	uint8_t local_cm_resp_timeout;	/* 5 bits */
	uint8_t retry_count;		/* 3 bits */
	uint16_t pkey;
	uint8_t path_mtu;		/* 4 bits, 1..5 = 256..4096 */
	uint8_t rdc_exists;		/* 1 bit */
	uint8_t rnr_retry_count;	/* 3 bits */
	uint8_t max_cm_retries;		/* 4 bits */
	uint8_t srq;			/* 1 bit */
	uint8_t ext_transport;		/* 3 bits */
	struct cm_path primary;
	struct cm_path alt;		/* all zero: no alternate path */
};

struct cm_mra {
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint8_t msg_mraed;		/* 2 bits, CM_MSG_* */
	uint8_t service_timeout;	/* 5 bits: 4.096 us * 2^n */
};

struct cm_rej {
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint8_t msg_rejected;		/* 2 bits, CM_MSG_* */
	uint8_t ari_len;		/* 7 bits, 0..CM_REJ_ARI_LEN */
	uint16_t reason;		/* CM_REJ_* */
	uint8_t ari[CM_REJ_ARI_LEN];
};

struct cm_rep {
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint32_t local_qkey;
	uint32_t local_qpn;		/* 24 bits */
	uint32_t local_eecn;		/* 24 bits */
	uint32_t starting_psn;		/* 24 bits */
	uint8_t responder_resources;
	uint8_t initiator_depth;
	uint8_t target_ack_delay;	/* 5 bits */
	uint8_t failover_accepted;	/* 2 bits */
	uint8_t e2e_flow_ctrl;		/* 1 bit */
	uint8_t rnr_retry_count;	/* 3 bits */
	uint8_t srq;			/* 1 bit */
	uint64_t local_ca_guid;
};

/* RTU and DREP; DREQ adds the remote QPN */
struct cm_rtu {
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
};

struct cm_dreq {
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint32_t remote_qpn;		/* 24 bits, QPN or EECN */
};

/* One CM MAD: hdr.attr_id says which member of u is meant. */
struct cm_msg {
	struct mad_hdr hdr;
	union {
		struct cm_req req;
		struct cm_mra mra;
		struct cm_rej rej;
		struct cm_rep rep;
		struct cm_rtu rtu;	/* also DREP */
		struct cm_dreq dreq;
	} u;
	/* every message's last field, up to cm_priv_max(hdr.attr_id) */
	const uint8_t *priv;
	size_t priv_len;
};

enum cm_mad_err {
	CM_MAD_OK = 0,
	CM_MAD_TRUNCATED,		/* shorter than a MAD */
	CM_MAD_BAD_BASE_VERSION,
	CM_MAD_BAD_CLASS,		/* not communication management */
	CM_MAD_BAD_CLASS_VERSION,
	CM_MAD_BAD_METHOD,		/* CM messages are Sends */
	CM_MAD_BAD_ATTR,		/* not a CM message we carry */
	CM_MAD_BAD_FIELD,		/* a value out of its range */
	CM_MAD_PRIV_TOO_LONG,		/* private data over the field */
	CM_MAD_ERR_MAX
};

const char *cm_mad_strerror(enum cm_mad_err err);
const char *cm_attr_name(uint16_t attr_id);
const char *cm_rej_reason_name(uint16_t reason);
/* Private data capacity of an attribute; 0 if not a CM message. */
size_t cm_priv_max(uint16_t attr_id);

/*
 * Build a whole 256-byte MAD from m: the header's base and class version,
 * class and (if m->hdr.method is 0) method Send are filled in; reserved
 * bits are zero, unused private data zero-filled.  0, or -1 with *err.
 */
int cm_mad_build(const struct cm_msg *m, uint8_t mad[MAD_LEN],
		 enum cm_mad_err *err);

/* Check and decode a CM MAD of len bytes; private data points into mad. */
enum cm_mad_err cm_mad_parse(const uint8_t *mad, size_t len,
			     struct cm_msg *m);

#endif

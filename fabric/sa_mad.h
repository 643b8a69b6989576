/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Subnet administration MADs (IBTA vol. 1 chapter 13.4 MAD header,
 * chapter 15.2 SA header and attributes): the one place where MAD, SA
 * header, MCMemberRecord, PathRecord, InformInfo and Notice are laid out.
 * Used by the SA client (sa_client.c) and ibfabricd's SA (fsw_sa.c).
 *
 * All structs hold host-order values; encode/decode convert.  Decoding
 * takes the buffer length and never reads past it; it reports the first
 * thing wrong as an sa_mad_err.  A MAD is always 256 bytes on the wire.
 */
#ifndef IBGW_SA_MAD_H
#define IBGW_SA_MAD_H

#include <stddef.h>
#include <stdint.h>

#include "fabric/fabric.h"

#define MAD_LEN			256
#define MAD_HDR_LEN		24
#define SA_HDR_LEN		56	/* MAD header + RMPP + SA header */
#define SA_DATA_LEN		(MAD_LEN - SA_HDR_LEN)	/* 200 */

#define MAD_BASE_VERSION	1
#define MAD_CLASS_SUBN_ADM	0x03
#define SA_CLASS_VERSION	2

/* methods */
#define MAD_METHOD_GET		0x01
#define MAD_METHOD_SET		0x02
#define MAD_METHOD_GET_RESP	0x81
#define MAD_METHOD_SEND		0x03
#define MAD_METHOD_TRAP		0x05
#define MAD_METHOD_REPORT	0x06
#define MAD_METHOD_REPORT_RESP	0x86
#define MAD_METHOD_GET_TABLE	0x12
#define MAD_METHOD_GET_TABLE_RESP 0x92
#define MAD_METHOD_DELETE	0x15
#define MAD_METHOD_DELETE_RESP	0x95
#define MAD_METHOD_RESP		0x80	/* OR-ed into a response */

/* attributes */
#define SA_ATTR_NOTICE		0x0002
#define SA_ATTR_INFORM_INFO	0x0003
#define SA_ATTR_PATH_RECORD	0x0035
#define SA_ATTR_MCMEMBER_RECORD	0x0038

/*
 * MAD status (16 bits).  Bits 0-4 are the common field (bit 0 busy,
 * bit 1 redirect, bits 2-4 code), bits 8-14 the class-specific SA code.
 */
#define MAD_STATUS_OK			0x0000
#define MAD_STATUS_BAD_VERSION		0x0004
#define MAD_STATUS_METHOD_UNSUPP	0x0008
#define MAD_STATUS_METHOD_ATTR_UNSUPP	0x000C
#define MAD_STATUS_INVALID_FIELD	0x001C
#define SA_STATUS_NO_RESOURCES		0x0100
#define SA_STATUS_REQ_INVALID		0x0200
#define SA_STATUS_NO_RECORDS		0x0300
#define SA_STATUS_TOO_MANY_RECORDS	0x0400
#define SA_STATUS_INVALID_GID		0x0500
#define SA_STATUS_INSUFFICIENT_COMPS	0x0600
#define SA_STATUS_DENIED		0x0700

/* MCMemberRecord JoinState bits */
#define SA_JOIN_FULL		0x1
#define SA_JOIN_NON		0x2
#define SA_JOIN_SENDONLY_NON	0x4
#define SA_JOIN_SENDONLY_FULL	0x8

/* MCMemberRecord component mask bits */
#define SA_MCM_MGID		(1ull << 0)
#define SA_MCM_PORT_GID		(1ull << 1)
#define SA_MCM_QKEY		(1ull << 2)
#define SA_MCM_MLID		(1ull << 3)
#define SA_MCM_MTU_SEL		(1ull << 4)
#define SA_MCM_MTU		(1ull << 5)
#define SA_MCM_TCLASS		(1ull << 6)
#define SA_MCM_PKEY		(1ull << 7)
#define SA_MCM_RATE_SEL		(1ull << 8)
#define SA_MCM_RATE		(1ull << 9)
#define SA_MCM_LIFE_SEL		(1ull << 10)
#define SA_MCM_LIFE		(1ull << 11)
#define SA_MCM_SL		(1ull << 12)
#define SA_MCM_FLOW_LABEL	(1ull << 13)
#define SA_MCM_HOP_LIMIT	(1ull << 14)
#define SA_MCM_SCOPE		(1ull << 15)
#define SA_MCM_JOIN_STATE	(1ull << 16)
#define SA_MCM_PROXY_JOIN	(1ull << 17)

/* PathRecord component mask bits */
#define SA_PR_SERVICE_ID	(3ull << 0)	/* two bits, 0 and 1 */
#define SA_PR_DGID		(1ull << 2)
#define SA_PR_SGID		(1ull << 3)
#define SA_PR_DLID		(1ull << 4)
#define SA_PR_SLID		(1ull << 5)
#define SA_PR_RAW_TRAFFIC	(1ull << 6)
#define SA_PR_FLOW_LABEL	(1ull << 8)
#define SA_PR_HOP_LIMIT		(1ull << 9)
#define SA_PR_TCLASS		(1ull << 10)
#define SA_PR_REVERSIBLE	(1ull << 11)
#define SA_PR_NUMB_PATH		(1ull << 12)
#define SA_PR_PKEY		(1ull << 13)
#define SA_PR_QOS_CLASS		(1ull << 14)
#define SA_PR_SL		(1ull << 15)
#define SA_PR_MTU_SEL		(1ull << 16)
#define SA_PR_MTU		(1ull << 17)
#define SA_PR_RATE_SEL		(1ull << 18)
#define SA_PR_RATE		(1ull << 19)
#define SA_PR_LIFE_SEL		(1ull << 20)
#define SA_PR_LIFE		(1ull << 21)
#define SA_PR_PREFERENCE	(1ull << 22)

/* selectors (MTU, rate, packet life) */
#define SA_SEL_GT		0
#define SA_SEL_LT		1
#define SA_SEL_EQ		2
#define SA_SEL_MAX		3

/* Notice trap numbers the SM raises (IBTA 14.2.5.1; InformInfo 15.2.5.12) */
#define SA_TRAP_GID_IN_SERVICE		64
#define SA_TRAP_GID_OUT_OF_SERVICE	65
#define SA_TRAP_MCG_CREATED		66
#define SA_TRAP_MCG_DELETED		67

/* The 24-byte common MAD header. */
struct mad_hdr {
	uint8_t base_version;
	uint8_t mgmt_class;
	uint8_t class_version;
	uint8_t method;
	uint16_t status;
	uint16_t class_specific;
	uint64_t tid;
	uint16_t attr_id;
	uint32_t attr_mod;
};

/* MAD header + RMPP header (bytes 24-35) + SA header (36-55). */
struct sa_hdr {
	struct mad_hdr mad;
	uint8_t rmpp_version;
	uint8_t rmpp_type;
	uint8_t rmpp_rtime_flags;
	uint8_t rmpp_status;
	uint32_t rmpp_data1;
	uint32_t rmpp_data2;
	uint64_t sm_key;
	uint16_t attr_offset;	/* record size in 8-byte units */
	uint64_t comp_mask;
};

#define SA_MCMEMBER_LEN		52	/* AttributeOffset 7 (56 bytes) */
#define SA_PATH_RECORD_LEN	64	/* AttributeOffset 8 */
#define SA_INFORM_INFO_LEN	36	/* AttributeOffset 5 (40 bytes) */
#define SA_NOTICE_LEN		80	/* AttributeOffset 10 */

struct sa_mcmember {
	union fab_gid mgid;
	union fab_gid port_gid;
	uint32_t qkey;
	uint16_t mlid;
	uint8_t mtu_sel;	/* 2 bits */
	uint8_t mtu;		/* 6 bits */
	uint8_t tclass;
	uint16_t pkey;
	uint8_t rate_sel;	/* 2 bits */
	uint8_t rate;		/* 6 bits */
	uint8_t life_sel;	/* 2 bits */
	uint8_t life;		/* 6 bits */
	uint8_t sl;		/* 4 bits */
	uint32_t flow_label;	/* 20 bits */
	uint8_t hop_limit;
	uint8_t scope;		/* 4 bits */
	uint8_t join_state;	/* 4 bits */
	uint8_t proxy_join;	/* 1 bit (bit 7 of byte 49) */
};

struct sa_path {
	uint64_t service_id;
	union fab_gid dgid;
	union fab_gid sgid;
	uint16_t dlid;
	uint16_t slid;
	uint8_t raw_traffic;	/* 1 bit */
	uint32_t flow_label;	/* 20 bits */
	uint8_t hop_limit;
	uint8_t tclass;
	uint8_t reversible;	/* 1 bit */
	uint8_t numb_path;	/* 7 bits */
	uint16_t pkey;
	uint16_t qos_class;	/* 12 bits */
	uint8_t sl;		/* 4 bits */
	uint8_t mtu_sel;
	uint8_t mtu;
	uint8_t rate_sel;
	uint8_t rate;
	uint8_t life_sel;
	uint8_t life;
	uint8_t preference;
};

/* InformInfo (15.2.5.12), GID form only: enough to subscribe to traps. */
struct sa_inform_info {
	union fab_gid gid;
	uint16_t lid_range_begin;
	uint16_t lid_range_end;
	uint8_t is_generic;
	uint8_t subscribe;
	uint16_t type;
	uint16_t trap_number;	/* generic: trap number; else device id */
	uint32_t qpn;		/* 24 bits */
	uint8_t resp_time_value;	/* 5 bits */
	uint32_t producer_type;	/* 24 bits (vendor id if not generic) */
};

/* Notice (13.4.8.2), generic form; data_details carries the trap data
 * (for traps 64-67 the GID at offset 6 of the details). */
struct sa_notice {
	uint8_t is_generic;
	uint8_t type;		/* 7 bits */
	uint32_t producer_type;	/* 24 bits */
	uint16_t trap_number;
	uint16_t issuer_lid;
	uint8_t notice_toggle;
	uint16_t notice_count;	/* 15 bits */
	uint8_t data_details[54];
	union fab_gid issuer_gid;
};

enum sa_mad_err {
	SA_MAD_OK = 0,
	SA_MAD_TRUNCATED,	/* shorter than the header or the record */
	SA_MAD_BAD_BASE_VERSION,
	SA_MAD_BAD_CLASS,	/* not subnet administration */
	SA_MAD_BAD_CLASS_VERSION,
	SA_MAD_BAD_ATTR,	/* attribute not the one asked to decode */
	SA_MAD_BAD_ATTR_OFFSET,	/* record size that cannot hold the record */
	SA_MAD_ERR_MAX
};

const char *sa_mad_strerror(enum sa_mad_err err);

/* Headers.  Encoders write exactly MAD_HDR_LEN / SA_HDR_LEN bytes. */
void mad_hdr_encode(const struct mad_hdr *h, uint8_t *p);
void mad_hdr_decode(const uint8_t *p, struct mad_hdr *h);
void sa_hdr_encode(const struct sa_hdr *h, uint8_t *p);
void sa_hdr_decode(const uint8_t *p, struct sa_hdr *h);

/* Records, at p (SA_*_LEN bytes). */
void sa_mcmember_encode(const struct sa_mcmember *r, uint8_t *p);
void sa_mcmember_decode(const uint8_t *p, struct sa_mcmember *r);
void sa_path_encode(const struct sa_path *r, uint8_t *p);
void sa_path_decode(const uint8_t *p, struct sa_path *r);
void sa_inform_info_encode(const struct sa_inform_info *r, uint8_t *p);
void sa_inform_info_decode(const uint8_t *p, struct sa_inform_info *r);
void sa_notice_encode(const struct sa_notice *r, uint8_t *p);
void sa_notice_decode(const uint8_t *p, struct sa_notice *r);

/*
 * Check an SA MAD of len bytes: base version 1, class 0x03, class
 * version 2, at least SA_HDR_LEN bytes, and decode its headers into *h.
 */
enum sa_mad_err sa_mad_parse(const uint8_t *mad, size_t len,
			     struct sa_hdr *h);

/*
 * The n-th record (from 0) of attribute attr in an SA MAD, after
 * sa_mad_parse: checks the attribute id, that AttributeOffset (when
 * non-zero) is at least the record size, and that the record lies inside
 * len bytes.  Returns a pointer to the record or NULL with *err set.
 * AttributeOffset 0 is accepted for a single record (requests from some
 * clients leave it zero).
 */
const uint8_t *sa_mad_record(const uint8_t *mad, size_t len,
			     const struct sa_hdr *h, uint16_t attr,
			     unsigned int n, enum sa_mad_err *err);

/*
 * Build a complete 256-byte SA MAD: header from *h (attr_offset filled in
 * from rec_len when zero), one record of rec_len bytes copied after it,
 * the rest zero.  Returns MAD_LEN.
 */
size_t sa_mad_build(const struct sa_hdr *h, const void *rec, size_t rec_len,
		    uint8_t *mad);

/* Names for logs and tools: "GetResp", "MCMemberRecord", "REQ_INVALID" */
const char *mad_method_name(uint8_t method);
const char *sa_attr_name(uint16_t attr);
const char *sa_status_name(uint16_t status);

/* MTU code (1..5) <-> bytes, rate code -> Gb/s * 10 (e.g. 3 -> 100) */
unsigned int sa_rate_tenths_gbps(uint8_t rate);

/* MGID of the IPoIB broadcast group of a P_Key (full bit forced), scope 2 */
void sa_ipoib_bcast_mgid(uint16_t pkey, uint8_t scope, union fab_gid *mgid);
/* True if mgid carries the IPoIB signature ff1x:401b or ff1x:601b */
int sa_mgid_is_ipoib(const union fab_gid *mgid);

#endif

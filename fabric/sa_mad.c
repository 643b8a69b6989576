// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * SA MAD codec: MAD header (IBTA vol. 1 13.4.3), RMPP header (13.6.2.1),
 * SA header and the MCMemberRecord, PathRecord, InformInfo and Notice
 * attributes (15.2).  Bit fields are numbered as the spec numbers them:
 * the first field of a byte or word is its most significant bits.
 * Encoders write reserved bits as zero; decoders ignore them.
 */
#include <stdio.h>
#include <string.h>

#include "inet/byteorder.h"
#include "fabric/sa_mad.h"

static const char *const sa_errstr[SA_MAD_ERR_MAX] = {
	[SA_MAD_OK] = "ok",
	[SA_MAD_TRUNCATED] = "truncated",
	[SA_MAD_BAD_BASE_VERSION] = "bad_base_version",
	[SA_MAD_BAD_CLASS] = "bad_class",
	[SA_MAD_BAD_CLASS_VERSION] = "bad_class_version",
	[SA_MAD_BAD_ATTR] = "bad_attr",
	[SA_MAD_BAD_ATTR_OFFSET] = "bad_attr_offset",
};

const char *sa_mad_strerror(enum sa_mad_err err)
{
	if ((unsigned int)err >= SA_MAD_ERR_MAX)
		return "unknown";
	return sa_errstr[err];
}

/* selector:2 | value:6, as MTU, rate and packet life time are packed */
static uint8_t sel6(uint8_t sel, uint8_t val)
{
	return (uint8_t)((sel & 0x3) << 6 | (val & 0x3f));
}

/*
 * MAD header: 0 BaseVersion | 1 MgmtClass | 2 ClassVersion |
 * 3 R:1 Method:7 | 4 Status | 6 ClassSpecific | 8 TransactionID |
 * 16 AttributeID | 18 reserved | 20 AttributeModifier
 */
void mad_hdr_encode(const struct mad_hdr *h, uint8_t *p)
{
	p[0] = h->base_version;
	p[1] = h->mgmt_class;
	p[2] = h->class_version;
	p[3] = h->method;
	be16_put(p + 4, h->status);
	be16_put(p + 6, h->class_specific);
	be64_put(p + 8, h->tid);
	be16_put(p + 16, h->attr_id);
	be16_put(p + 18, 0);
	be32_put(p + 20, h->attr_mod);
}

void mad_hdr_decode(const uint8_t *p, struct mad_hdr *h)
{
	h->base_version = p[0];
	h->mgmt_class = p[1];
	h->class_version = p[2];
	h->method = p[3];
	h->status = be16_get(p + 4);
	h->class_specific = be16_get(p + 6);
	h->tid = be64_get(p + 8);
	h->attr_id = be16_get(p + 16);
	h->attr_mod = be32_get(p + 20);
}

/*
 * RMPP: 24 RMPPVersion | 25 RMPPType | 26 RRespTime:5 RMPPFlags:3 (kept as
 * one byte) | 27 RMPPStatus | 28 Data1 | 32 Data2.
 * SA: 36 SM_Key | 44 AttributeOffset | 46 reserved | 48 ComponentMask
 */
void sa_hdr_encode(const struct sa_hdr *h, uint8_t *p)
{
	mad_hdr_encode(&h->mad, p);
	p[24] = h->rmpp_version;
	p[25] = h->rmpp_type;
	p[26] = h->rmpp_rtime_flags;
	p[27] = h->rmpp_status;
	be32_put(p + 28, h->rmpp_data1);
	be32_put(p + 32, h->rmpp_data2);
	be64_put(p + 36, h->sm_key);
	be16_put(p + 44, h->attr_offset);
	be16_put(p + 46, 0);
	be64_put(p + 48, h->comp_mask);
}

void sa_hdr_decode(const uint8_t *p, struct sa_hdr *h)
{
	mad_hdr_decode(p, &h->mad);
	h->rmpp_version = p[24];
	h->rmpp_type = p[25];
	h->rmpp_rtime_flags = p[26];
	h->rmpp_status = p[27];
	h->rmpp_data1 = be32_get(p + 28);
	h->rmpp_data2 = be32_get(p + 32);
	h->sm_key = be64_get(p + 36);
	h->attr_offset = be16_get(p + 44);
	h->comp_mask = be64_get(p + 48);
}

/*
 * MCMemberRecord (15.2.5.17): 0 MGID | 16 PortGID | 32 Q_Key | 36 MLID |
 * 38 MTUSelector:2 MTU:6 | 39 TClass | 40 P_Key | 42 RateSelector:2 Rate:6 |
 * 43 PacketLifeTimeSelector:2 PacketLifeTime:6 |
 * 44 SL:4 FlowLabel:20 HopLimit:8 | 48 Scope:4 JoinState:4 |
 * 49 ProxyJoin:1 reserved:7 | 50 reserved:16
 */
void sa_mcmember_encode(const struct sa_mcmember *r, uint8_t *p)
{
	memcpy(p, r->mgid.raw, 16);
	memcpy(p + 16, r->port_gid.raw, 16);
	be32_put(p + 32, r->qkey);
	be16_put(p + 36, r->mlid);
	p[38] = sel6(r->mtu_sel, r->mtu);
	p[39] = r->tclass;
	be16_put(p + 40, r->pkey);
	p[42] = sel6(r->rate_sel, r->rate);
	p[43] = sel6(r->life_sel, r->life);
	be32_put(p + 44, (uint32_t)(r->sl & 0xf) << 28 |
		      (r->flow_label & 0xfffff) << 8 | r->hop_limit);
	p[48] = (uint8_t)((r->scope & 0xf) << 4 | (r->join_state & 0xf));
	p[49] = (uint8_t)((r->proxy_join & 1) << 7);
	be16_put(p + 50, 0);
}

void sa_mcmember_decode(const uint8_t *p, struct sa_mcmember *r)
{
	uint32_t w;

	memcpy(r->mgid.raw, p, 16);
	memcpy(r->port_gid.raw, p + 16, 16);
	r->qkey = be32_get(p + 32);
	r->mlid = be16_get(p + 36);
	r->mtu_sel = p[38] >> 6;
	r->mtu = p[38] & 0x3f;
	r->tclass = p[39];
	r->pkey = be16_get(p + 40);
	r->rate_sel = p[42] >> 6;
	r->rate = p[42] & 0x3f;
	r->life_sel = p[43] >> 6;
	r->life = p[43] & 0x3f;
	w = be32_get(p + 44);
	r->sl = (uint8_t)(w >> 28);
	r->flow_label = (w >> 8) & 0xfffff;
	r->hop_limit = (uint8_t)w;
	r->scope = p[48] >> 4;
	r->join_state = p[48] & 0xf;
	r->proxy_join = p[49] >> 7;
}

/*
 * PathRecord (15.2.5.16): 0 ServiceID | 8 DGID | 24 SGID | 40 DLID |
 * 42 SLID | 44 RawTraffic:1 reserved:3 FlowLabel:20 HopLimit:8 |
 * 48 TClass | 49 Reversible:1 NumbPath:7 | 50 P_Key | 52 QoSClass:12 SL:4 |
 * 54 MTUSelector:2 MTU:6 | 55 RateSelector:2 Rate:6 |
 * 56 PacketLifeTimeSelector:2 PacketLifeTime:6 | 57 Preference |
 * 58 reserved:48
 */
void sa_path_encode(const struct sa_path *r, uint8_t *p)
{
	be64_put(p, r->service_id);
	memcpy(p + 8, r->dgid.raw, 16);
	memcpy(p + 24, r->sgid.raw, 16);
	be16_put(p + 40, r->dlid);
	be16_put(p + 42, r->slid);
	be32_put(p + 44, (uint32_t)(r->raw_traffic & 1) << 31 |
		      (r->flow_label & 0xfffff) << 8 | r->hop_limit);
	p[48] = r->tclass;
	p[49] = (uint8_t)((r->reversible & 1) << 7 | (r->numb_path & 0x7f));
	be16_put(p + 50, r->pkey);
	be16_put(p + 52, (uint16_t)((r->qos_class & 0xfff) << 4 | (r->sl & 0xf)));
	p[54] = sel6(r->mtu_sel, r->mtu);
	p[55] = sel6(r->rate_sel, r->rate);
	p[56] = sel6(r->life_sel, r->life);
	p[57] = r->preference;
	memset(p + 58, 0, 6);
}

void sa_path_decode(const uint8_t *p, struct sa_path *r)
{
	uint32_t w;
	uint16_t q;

	r->service_id = be64_get(p);
	memcpy(r->dgid.raw, p + 8, 16);
	memcpy(r->sgid.raw, p + 24, 16);
	r->dlid = be16_get(p + 40);
	r->slid = be16_get(p + 42);
	w = be32_get(p + 44);
	r->raw_traffic = (uint8_t)(w >> 31);
	r->flow_label = (w >> 8) & 0xfffff;
	r->hop_limit = (uint8_t)w;
	r->tclass = p[48];
	r->reversible = p[49] >> 7;
	r->numb_path = p[49] & 0x7f;
	r->pkey = be16_get(p + 50);
	q = be16_get(p + 52);
	r->qos_class = q >> 4;
	r->sl = q & 0xf;
	r->mtu_sel = p[54] >> 6;
	r->mtu = p[54] & 0x3f;
	r->rate_sel = p[55] >> 6;
	r->rate = p[55] & 0x3f;
	r->life_sel = p[56] >> 6;
	r->life = p[56] & 0x3f;
	r->preference = p[57];
}

/*
 * InformInfo (13.4.8.3, 15.2.5.12): 0 GID | 16 LIDRangeBegin |
 * 18 LIDRangeEnd | 20 reserved:16 | 22 IsGeneric | 23 Subscribe | 24 Type |
 * 26 TrapNumber/DeviceID | 28 QPN:24 reserved:3 RespTimeValue:5 |
 * 32 reserved:8 ProducerType/VendorID:24
 */
void sa_inform_info_encode(const struct sa_inform_info *r, uint8_t *p)
{
	memcpy(p, r->gid.raw, 16);
	be16_put(p + 16, r->lid_range_begin);
	be16_put(p + 18, r->lid_range_end);
	be16_put(p + 20, 0);
	p[22] = r->is_generic;
	p[23] = r->subscribe;
	be16_put(p + 24, r->type);
	be16_put(p + 26, r->trap_number);
	be32_put(p + 28, (r->qpn & 0xffffff) << 8 | (r->resp_time_value & 0x1f));
	be32_put(p + 32, r->producer_type & 0xffffff);
}

void sa_inform_info_decode(const uint8_t *p, struct sa_inform_info *r)
{
	uint32_t w;

	memcpy(r->gid.raw, p, 16);
	r->lid_range_begin = be16_get(p + 16);
	r->lid_range_end = be16_get(p + 18);
	r->is_generic = p[22];
	r->subscribe = p[23];
	r->type = be16_get(p + 24);
	r->trap_number = be16_get(p + 26);
	w = be32_get(p + 28);
	r->qpn = w >> 8;
	r->resp_time_value = w & 0x1f;
	r->producer_type = be32_get(p + 32) & 0xffffff;
}

/*
 * Notice (13.4.8.2): 0 IsGeneric:1 Type:7 | 1 ProducerType/VendorID:24 |
 * 4 TrapNumber/DeviceID | 6 IssuerLID | 8 NoticeToggle:1 NoticeCount:15 |
 * 10 DataDetails[54] | 64 IssuerGID
 */
void sa_notice_encode(const struct sa_notice *r, uint8_t *p)
{
	be32_put(p, (uint32_t)(r->is_generic & 1) << 31 |
		 (uint32_t)(r->type & 0x7f) << 24 |
		 (r->producer_type & 0xffffff));
	be16_put(p + 4, r->trap_number);
	be16_put(p + 6, r->issuer_lid);
	be16_put(p + 8, (uint16_t)((r->notice_toggle & 1) << 15 |
				(r->notice_count & 0x7fff)));
	memcpy(p + 10, r->data_details, sizeof(r->data_details));
	memcpy(p + 64, r->issuer_gid.raw, 16);
}

void sa_notice_decode(const uint8_t *p, struct sa_notice *r)
{
	uint16_t tc;

	r->is_generic = p[0] >> 7;
	r->type = p[0] & 0x7f;
	r->producer_type = be32_get(p) & 0xffffff;
	r->trap_number = be16_get(p + 4);
	r->issuer_lid = be16_get(p + 6);
	tc = be16_get(p + 8);
	r->notice_toggle = (uint8_t)(tc >> 15);
	r->notice_count = tc & 0x7fff;
	memcpy(r->data_details, p + 10, sizeof(r->data_details));
	memcpy(r->issuer_gid.raw, p + 64, 16);
}

/*
 * The headers are decoded into *h whenever the MAD holds them (len at
 * least SA_HDR_LEN), also when a version or class is wrong: an SA can
 * then still answer with the request's TransactionID.
 */
enum sa_mad_err sa_mad_parse(const uint8_t *mad, size_t len,
			     struct sa_hdr *h)
{
	if (len < SA_HDR_LEN)
		return SA_MAD_TRUNCATED;
	sa_hdr_decode(mad, h);
	if (h->mad.base_version != MAD_BASE_VERSION)
		return SA_MAD_BAD_BASE_VERSION;
	if (h->mad.mgmt_class != MAD_CLASS_SUBN_ADM)
		return SA_MAD_BAD_CLASS;
	if (h->mad.class_version != SA_CLASS_VERSION)
		return SA_MAD_BAD_CLASS_VERSION;
	return SA_MAD_OK;
}

/* Wire size of the attributes this codec knows; 0 for any other. */
static size_t sa_attr_len(uint16_t attr)
{
	switch (attr) {
	case SA_ATTR_NOTICE:
		return SA_NOTICE_LEN;
	case SA_ATTR_INFORM_INFO:
		return SA_INFORM_INFO_LEN;
	case SA_ATTR_PATH_RECORD:
		return SA_PATH_RECORD_LEN;
	case SA_ATTR_MCMEMBER_RECORD:
		return SA_MCMEMBER_LEN;
	}
	return 0;
}

static const uint8_t *rec_fail(enum sa_mad_err *err, enum sa_mad_err e)
{
	if (err)
		*err = e;
	return NULL;
}

/*
 * With AttributeOffset 0 there is exactly one record; asking for n > 0
 * then answers TRUNCATED, as for any record past the end.  Every size is
 * compared by division first, so no offset or n can overflow.
 */
const uint8_t *sa_mad_record(const uint8_t *mad, size_t len,
			     const struct sa_hdr *h, uint16_t attr,
			     unsigned int n, enum sa_mad_err *err)
{
	size_t rec_len = sa_attr_len(attr);
	size_t stride = (size_t)h->attr_offset * 8;
	size_t room, off;

	if (h->mad.attr_id != attr || rec_len == 0)
		return rec_fail(err, SA_MAD_BAD_ATTR);
	if (stride != 0 && stride < rec_len)
		return rec_fail(err, SA_MAD_BAD_ATTR_OFFSET);
	if (len < SA_HDR_LEN)
		return rec_fail(err, SA_MAD_TRUNCATED);
	room = len - SA_HDR_LEN;
	if (stride == 0) {
		if (n != 0)
			return rec_fail(err, SA_MAD_TRUNCATED);
		off = 0;
	} else {
		if (n > room / stride)
			return rec_fail(err, SA_MAD_TRUNCATED);
		off = (size_t)n * stride;
	}
	if (room - off < rec_len)
		return rec_fail(err, SA_MAD_TRUNCATED);
	if (err)
		*err = SA_MAD_OK;
	return mad + SA_HDR_LEN + off;
}

/* A record longer than SA_DATA_LEN is cut to SA_DATA_LEN. */
size_t sa_mad_build(const struct sa_hdr *h, const void *rec, size_t rec_len,
		    uint8_t *mad)
{
	struct sa_hdr hh = *h;

	if (rec_len > SA_DATA_LEN)
		rec_len = SA_DATA_LEN;
	if (hh.attr_offset == 0)
		hh.attr_offset = (uint16_t)((rec_len + 7) / 8);
	memset(mad, 0, MAD_LEN);
	sa_hdr_encode(&hh, mad);
	if (rec_len)
		memcpy(mad + SA_HDR_LEN, rec, rec_len);
	return MAD_LEN;
}

/*
 * Names.  An unknown value is printed as hex into a small buffer that is
 * thread-local and separate for each function: it stays valid until the
 * same function is called again in the same thread, so one log line may
 * combine the three functions but not two calls of one of them.
 */
const char *mad_method_name(uint8_t method)
{
	static _Thread_local char buf[8];

	switch (method) {
	case MAD_METHOD_GET:
		return "Get";
	case MAD_METHOD_SET:
		return "Set";
	case MAD_METHOD_GET_RESP:
		return "GetResp";
	case MAD_METHOD_SEND:
		return "Send";
	case MAD_METHOD_TRAP:
		return "Trap";
	case MAD_METHOD_REPORT:
		return "Report";
	case MAD_METHOD_REPORT_RESP:
		return "ReportResp";
	case 0x07:
		return "TrapRepress";
	case MAD_METHOD_GET_TABLE:
		return "GetTable";
	case MAD_METHOD_GET_TABLE_RESP:
		return "GetTableResp";
	case MAD_METHOD_DELETE:
		return "Delete";
	case MAD_METHOD_DELETE_RESP:
		return "DeleteResp";
	}
	snprintf(buf, sizeof(buf), "0x%02x", method);
	return buf;
}

const char *sa_attr_name(uint16_t attr)
{
	static _Thread_local char buf[8];

	switch (attr) {
	case 0x0001:
		return "ClassPortInfo";
	case SA_ATTR_NOTICE:
		return "Notice";
	case SA_ATTR_INFORM_INFO:
		return "InformInfo";
	case 0x0011:
		return "NodeRecord";
	case 0x0012:
		return "PortInfoRecord";
	case 0x0031:
		return "ServiceRecord";
	case 0x0033:
		return "PKeyTableRecord";
	case SA_ATTR_PATH_RECORD:
		return "PathRecord";
	case SA_ATTR_MCMEMBER_RECORD:
		return "MCMemberRecord";
	case 0x003A:
		return "MultiPathRecord";
	case 0x00F3:
		return "InformInfoRecord";
	}
	snprintf(buf, sizeof(buf), "0x%04x", attr);
	return buf;
}

/* Exact values only: a busy or redirect bit next to a code is not named. */
const char *sa_status_name(uint16_t status)
{
	static _Thread_local char buf[8];

	switch (status) {
	case MAD_STATUS_OK:
		return "OK";
	case 0x0001:
		return "BUSY";
	case 0x0002:
		return "REDIRECT";
	case MAD_STATUS_BAD_VERSION:
		return "BAD_VERSION";
	case MAD_STATUS_METHOD_UNSUPP:
		return "METHOD_UNSUPP";
	case MAD_STATUS_METHOD_ATTR_UNSUPP:
		return "METHOD_ATTR_UNSUPP";
	case MAD_STATUS_INVALID_FIELD:
		return "INVALID_FIELD";
	case SA_STATUS_NO_RESOURCES:
		return "NO_RESOURCES";
	case SA_STATUS_REQ_INVALID:
		return "REQ_INVALID";
	case SA_STATUS_NO_RECORDS:
		return "NO_RECORDS";
	case SA_STATUS_TOO_MANY_RECORDS:
		return "TOO_MANY_RECORDS";
	case SA_STATUS_INVALID_GID:
		return "INVALID_GID";
	case SA_STATUS_INSUFFICIENT_COMPS:
		return "INSUFFICIENT_COMPS";
	case SA_STATUS_DENIED:
		return "DENIED";
	case 0x0800:
		return "PRIO_SUGGESTED";
	}
	snprintf(buf, sizeof(buf), "0x%04x", status);
	return buf;
}

/* IBTA static rate codes (also verbs' enum ibv_rate); 0 if unknown. */
unsigned int sa_rate_tenths_gbps(uint8_t rate)
{
	static const uint16_t tenths[] = {
		[2] = 25, [3] = 100, [4] = 300, [5] = 50, [6] = 200,
		[7] = 400, [8] = 600, [9] = 800, [10] = 1200, [11] = 140,
		[12] = 560, [13] = 1120, [14] = 1680, [15] = 250,
		[16] = 1000, [17] = 2000, [18] = 3000, [19] = 280,
		[20] = 500, [21] = 4000, [22] = 6000, [23] = 8000,
		[24] = 12000,
	};

	if (rate >= sizeof(tenths) / sizeof(tenths[0]))
		return 0;
	return tenths[rate];
}

/* ff1S:401b:PPPP:0000:0000:0000:ffff:ffff, P_Key with the full bit set */
void sa_ipoib_bcast_mgid(uint16_t pkey, uint8_t scope, union fab_gid *mgid)
{
	memset(mgid->raw, 0, sizeof(mgid->raw));
	mgid->raw[0] = 0xff;
	mgid->raw[1] = (uint8_t)(0x10 | (scope & 0xf));
	mgid->raw[2] = 0x40;
	mgid->raw[3] = 0x1b;
	be16_put(mgid->raw + 4, (uint16_t)(pkey | 0x8000));
	memset(mgid->raw + 12, 0xff, 4);
}

int sa_mgid_is_ipoib(const union fab_gid *mgid)
{
	const uint8_t *g = mgid->raw;

	return g[0] == 0xff && (g[1] & 0xf0) == 0x10 &&
	       (g[2] == 0x40 || g[2] == 0x60) && g[3] == 0x1b;
}

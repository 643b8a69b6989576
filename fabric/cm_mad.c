// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <string.h>

#include "inet/byteorder.h"
#include "fabric/cm_mad.h"

static const char *const cm_errstr[CM_MAD_ERR_MAX] = {
	[CM_MAD_OK] = "ok",
	[CM_MAD_TRUNCATED] = "truncated",
	[CM_MAD_BAD_BASE_VERSION] = "bad_base_version",
	[CM_MAD_BAD_CLASS] = "bad_class",
	[CM_MAD_BAD_CLASS_VERSION] = "bad_class_version",
	[CM_MAD_BAD_METHOD] = "bad_method",
	[CM_MAD_BAD_ATTR] = "bad_attr",
	[CM_MAD_BAD_FIELD] = "bad_field",
	[CM_MAD_PRIV_TOO_LONG] = "private_data_too_long",
};

const char *cm_mad_strerror(enum cm_mad_err err)
{
	if ((unsigned int)err >= CM_MAD_ERR_MAX)
		return "unknown";
	return cm_errstr[err];
}

const char *cm_attr_name(uint16_t attr_id)
{
	switch (attr_id) {
	case CM_ATTR_REQ:	return "REQ";
	case CM_ATTR_MRA:	return "MRA";
	case CM_ATTR_REJ:	return "REJ";
	case CM_ATTR_REP:	return "REP";
	case CM_ATTR_RTU:	return "RTU";
	case CM_ATTR_DREQ:	return "DREQ";
	case CM_ATTR_DREP:	return "DREP";
	}
	return "unknown";
}

static const char *const rej_names[] = {
	[CM_REJ_NO_QP] = "no_qp",
	[CM_REJ_NO_EEC] = "no_eec",
	[CM_REJ_NO_RESOURCES] = "no_resources",
	[CM_REJ_TIMEOUT] = "timeout",
	[CM_REJ_UNSUPPORTED] = "unsupported_request",
	[CM_REJ_INVALID_COMM_ID] = "invalid_comm_id",
	[CM_REJ_INVALID_COMM_INSTANCE] = "invalid_comm_instance",
	[CM_REJ_INVALID_SERVICE_ID] = "invalid_service_id",
	[CM_REJ_INVALID_TRANSPORT_TYPE] = "invalid_transport_type",
	[CM_REJ_STALE_CONN] = "stale_connection",
	[CM_REJ_RDC_NOT_EXIST] = "rdc_not_exist",
	[CM_REJ_INVALID_GID] = "invalid_gid",
	[CM_REJ_INVALID_LID] = "invalid_lid",
	[CM_REJ_INVALID_SL] = "invalid_sl",
	[CM_REJ_INVALID_TRAFFIC_CLASS] = "invalid_traffic_class",
	[CM_REJ_INVALID_HOP_LIMIT] = "invalid_hop_limit",
	[CM_REJ_INVALID_PACKET_RATE] = "invalid_packet_rate",
	[CM_REJ_INVALID_ALT_GID] = "invalid_alt_gid",
	[CM_REJ_INVALID_ALT_LID] = "invalid_alt_lid",
	[CM_REJ_INVALID_ALT_SL] = "invalid_alt_sl",
	[CM_REJ_INVALID_ALT_TRAFFIC_CLASS] = "invalid_alt_traffic_class",
	[CM_REJ_INVALID_ALT_HOP_LIMIT] = "invalid_alt_hop_limit",
	[CM_REJ_INVALID_ALT_PACKET_RATE] = "invalid_alt_packet_rate",
	[CM_REJ_PORT_CM_REDIRECT] = "port_cm_redirect",
	[CM_REJ_PORT_REDIRECT] = "port_redirect",
	[CM_REJ_INVALID_MTU] = "invalid_mtu",
	[CM_REJ_INSUFFICIENT_RESP_RES] = "insufficient_resp_resources",
	[CM_REJ_CONSUMER_DEFINED] = "consumer_defined",
	[CM_REJ_INVALID_RNR_RETRY] = "invalid_rnr_retry",
	[CM_REJ_DUPLICATE_LOCAL_COMM_ID] = "duplicate_local_comm_id",
	[CM_REJ_INVALID_CLASS_VERSION] = "invalid_class_version",
	[CM_REJ_INVALID_FLOW_LABEL] = "invalid_flow_label",
	[CM_REJ_INVALID_ALT_FLOW_LABEL] = "invalid_alt_flow_label",
	[CM_REJ_VENDOR_OPTION_UNSUPP] = "vendor_option_not_supported",
};

const char *cm_rej_reason_name(uint16_t reason)
{
	if (reason >= sizeof(rej_names) / sizeof(rej_names[0]) ||
	    !rej_names[reason])
		return "unknown";
	return rej_names[reason];
}

size_t cm_priv_max(uint16_t attr_id)
{
	switch (attr_id) {
	case CM_ATTR_REQ:	return CM_REQ_PRIV_LEN;
	case CM_ATTR_MRA:	return CM_MRA_PRIV_LEN;
	case CM_ATTR_REJ:	return CM_REJ_PRIV_LEN;
	case CM_ATTR_REP:	return CM_REP_PRIV_LEN;
	case CM_ATTR_RTU:	return CM_RTU_PRIV_LEN;
	case CM_ATTR_DREQ:	return CM_DREQ_PRIV_LEN;
	case CM_ATTR_DREP:	return CM_DREP_PRIV_LEN;
	}
	return 0;
}

/* Where each message's private data starts in the MAD data. */
static size_t priv_off(uint16_t attr_id)
{
	return CM_DATA_LEN - cm_priv_max(attr_id);
}

/* 24 bits and 8 in one big-endian word */
static void put24_8(uint8_t *p, uint32_t hi24, uint8_t lo8)
{
	be32_put(p, (hi24 & 0xffffff) << 8 | lo8);
}

/* REQ bytes 52..95 (primary) or 96..139 (alternate), relative to p */
static void path_encode(const struct cm_path *c, uint8_t *p)
{
	be16_put(p, c->local_lid);
	be16_put(p + 2, c->remote_lid);
	memcpy(p + 4, c->local_gid.raw, 16);
	memcpy(p + 20, c->remote_gid.raw, 16);
	be32_put(p + 36, (c->flow_label & 0xfffff) << 12 |
			 (c->packet_rate & 0x3f));
	p[40] = c->traffic_class;
	p[41] = c->hop_limit;
	p[42] = (uint8_t)((c->sl & 0xf) << 4 | (c->subnet_local & 1) << 3);
	p[43] = (uint8_t)((c->local_ack_timeout & 0x1f) << 3);
}

static void path_decode(const uint8_t *p, struct cm_path *c)
{
	c->local_lid = be16_get(p);
	c->remote_lid = be16_get(p + 2);
	memcpy(c->local_gid.raw, p + 4, 16);
	memcpy(c->remote_gid.raw, p + 20, 16);
	c->flow_label = be32_get(p + 36) >> 12;
	c->packet_rate = p[39] & 0x3f;
	c->traffic_class = p[40];
	c->hop_limit = p[41];
	c->sl = p[42] >> 4;
	c->subnet_local = (p[42] >> 3) & 1;
	c->local_ack_timeout = p[43] >> 3;
}

static int path_ok(const struct cm_path *c)
{
	return c->flow_label <= 0xfffff && c->packet_rate <= 0x3f &&
	       c->sl <= 0xf && c->subnet_local <= 1 &&
	       c->local_ack_timeout <= 0x1f;
}

static int req_ok(const struct cm_req *r)
{
	return r->local_qpn <= 0xffffff && r->local_eecn <= 0xffffff &&
	       r->remote_eecn <= 0xffffff &&
	       r->remote_cm_resp_timeout <= 0x1f && r->transport <= 3 &&
	       r->e2e_flow_ctrl <= 1 && r->starting_psn <= 0xffffff &&
	       r->local_cm_resp_timeout <= 0x1f && r->retry_count <= 7 &&
	       r->path_mtu >= 1 && r->path_mtu <= 5 && r->rdc_exists <= 1 &&
	       r->rnr_retry_count <= 7 && r->max_cm_retries <= 0xf &&
	       r->srq <= 1 && r->ext_transport <= 7 &&
	       path_ok(&r->primary) && path_ok(&r->alt);
}

static void req_encode(const struct cm_req *r, uint8_t *d)
{
	be32_put(d, r->local_comm_id);
	be64_put(d + 8, r->service_id);
	be64_put(d + 16, r->local_ca_guid);
	be32_put(d + 28, r->local_qkey);
	put24_8(d + 32, r->local_qpn, r->responder_resources);
	put24_8(d + 36, r->local_eecn, r->initiator_depth);
	put24_8(d + 40, r->remote_eecn,
		(uint8_t)(r->remote_cm_resp_timeout << 3 | r->transport << 1 |
			  r->e2e_flow_ctrl));
	put24_8(d + 44, r->starting_psn,
		(uint8_t)(r->local_cm_resp_timeout << 3 | r->retry_count));
	be16_put(d + 48, r->pkey);
	d[50] = (uint8_t)(r->path_mtu << 4 | r->rdc_exists << 3 |
			  r->rnr_retry_count);
	d[51] = (uint8_t)(r->max_cm_retries << 4 | r->srq << 3 |
			  r->ext_transport);
	path_encode(&r->primary, d + 52);
	path_encode(&r->alt, d + 96);
}

static void req_decode(const uint8_t *d, struct cm_req *r)
{
	r->local_comm_id = be32_get(d);
	r->service_id = be64_get(d + 8);
	r->local_ca_guid = be64_get(d + 16);
	r->local_qkey = be32_get(d + 28);
	r->local_qpn = be32_get(d + 32) >> 8;
	r->responder_resources = d[35];
	r->local_eecn = be32_get(d + 36) >> 8;
	r->initiator_depth = d[39];
	r->remote_eecn = be32_get(d + 40) >> 8;
	r->remote_cm_resp_timeout = d[43] >> 3;
	r->transport = (d[43] >> 1) & 3;
	r->e2e_flow_ctrl = d[43] & 1;
	r->starting_psn = be32_get(d + 44) >> 8;
	r->local_cm_resp_timeout = d[47] >> 3;
	r->retry_count = d[47] & 7;
	r->pkey = be16_get(d + 48);
	r->path_mtu = d[50] >> 4;
	r->rdc_exists = (d[50] >> 3) & 1;
	r->rnr_retry_count = d[50] & 7;
	r->max_cm_retries = d[51] >> 4;
	r->srq = (d[51] >> 3) & 1;
	r->ext_transport = d[51] & 7;
	path_decode(d + 52, &r->primary);
	path_decode(d + 96, &r->alt);
}

static int rep_ok(const struct cm_rep *r)
{
	return r->local_qpn <= 0xffffff && r->local_eecn <= 0xffffff &&
	       r->starting_psn <= 0xffffff && r->target_ack_delay <= 0x1f &&
	       r->failover_accepted <= 3 && r->e2e_flow_ctrl <= 1 &&
	       r->rnr_retry_count <= 7 && r->srq <= 1;
}

static void rep_encode(const struct cm_rep *r, uint8_t *d)
{
	be32_put(d, r->local_comm_id);
	be32_put(d + 4, r->remote_comm_id);
	be32_put(d + 8, r->local_qkey);
	put24_8(d + 12, r->local_qpn, 0);
	put24_8(d + 16, r->local_eecn, 0);
	put24_8(d + 20, r->starting_psn, 0);
	d[24] = r->responder_resources;
	d[25] = r->initiator_depth;
	d[26] = (uint8_t)(r->target_ack_delay << 3 |
			  r->failover_accepted << 1 | r->e2e_flow_ctrl);
	d[27] = (uint8_t)(r->rnr_retry_count << 5 | r->srq << 4);
	be64_put(d + 28, r->local_ca_guid);
}

static void rep_decode(const uint8_t *d, struct cm_rep *r)
{
	r->local_comm_id = be32_get(d);
	r->remote_comm_id = be32_get(d + 4);
	r->local_qkey = be32_get(d + 8);
	r->local_qpn = be32_get(d + 12) >> 8;
	r->local_eecn = be32_get(d + 16) >> 8;
	r->starting_psn = be32_get(d + 20) >> 8;
	r->responder_resources = d[24];
	r->initiator_depth = d[25];
	r->target_ack_delay = d[26] >> 3;
	r->failover_accepted = (d[26] >> 1) & 3;
	r->e2e_flow_ctrl = d[26] & 1;
	r->rnr_retry_count = d[27] >> 5;
	r->srq = (d[27] >> 4) & 1;
	r->local_ca_guid = be64_get(d + 28);
}

/* the range checks of a message's fields */
static int msg_fields(const struct cm_msg *m)
{
	switch (m->hdr.attr_id) {
	case CM_ATTR_REQ:
		return req_ok(&m->u.req);
	case CM_ATTR_MRA:
		return m->u.mra.msg_mraed <= CM_MSG_OTHER &&
		       m->u.mra.service_timeout <= 0x1f;
	case CM_ATTR_REJ:
		return m->u.rej.msg_rejected <= CM_MSG_OTHER &&
		       m->u.rej.ari_len <= CM_REJ_ARI_LEN;
	case CM_ATTR_REP:
		return rep_ok(&m->u.rep);
	case CM_ATTR_RTU:
	case CM_ATTR_DREP:
		return 1;
	case CM_ATTR_DREQ:
		return m->u.dreq.remote_qpn <= 0xffffff;
	}
	return 0;
}

int cm_mad_build(const struct cm_msg *m, uint8_t mad[MAD_LEN],
		 enum cm_mad_err *err)
{
	struct mad_hdr h = m->hdr;
	uint8_t *d = mad + MAD_HDR_LEN;
	const uint8_t *priv = m->priv;
	size_t len = m->priv_len, max = cm_priv_max(h.attr_id);

	if (!max) {
		*err = CM_MAD_BAD_ATTR;
		return -1;
	}
	if (!msg_fields(m)) {
		*err = CM_MAD_BAD_FIELD;
		return -1;
	}
	if (len > max || (len && !priv)) {
		*err = CM_MAD_PRIV_TOO_LONG;
		return -1;
	}
	memset(mad, 0, MAD_LEN);
	h.base_version = MAD_BASE_VERSION;
	h.mgmt_class = MAD_CLASS_CM;
	h.class_version = CM_CLASS_VERSION;
	if (!h.method)
		h.method = MAD_METHOD_SEND;
	mad_hdr_encode(&h, mad);

	switch (h.attr_id) {
	case CM_ATTR_REQ:
		req_encode(&m->u.req, d);
		break;
	case CM_ATTR_MRA:
		be32_put(d, m->u.mra.local_comm_id);
		be32_put(d + 4, m->u.mra.remote_comm_id);
		d[8] = (uint8_t)(m->u.mra.msg_mraed << 6);
		d[9] = (uint8_t)(m->u.mra.service_timeout << 3);
		break;
	case CM_ATTR_REJ:
		be32_put(d, m->u.rej.local_comm_id);
		be32_put(d + 4, m->u.rej.remote_comm_id);
		d[8] = (uint8_t)(m->u.rej.msg_rejected << 6);
		d[9] = (uint8_t)(m->u.rej.ari_len << 1);
		be16_put(d + 10, m->u.rej.reason);
		memcpy(d + 12, m->u.rej.ari, m->u.rej.ari_len);
		break;
	case CM_ATTR_REP:
		rep_encode(&m->u.rep, d);
		break;
	case CM_ATTR_RTU:
	case CM_ATTR_DREP:
		be32_put(d, m->u.rtu.local_comm_id);
		be32_put(d + 4, m->u.rtu.remote_comm_id);
		break;
	case CM_ATTR_DREQ:
		be32_put(d, m->u.dreq.local_comm_id);
		be32_put(d + 4, m->u.dreq.remote_comm_id);
		put24_8(d + 8, m->u.dreq.remote_qpn, 0);
		break;
	}
	if (len)
		memcpy(d + priv_off(h.attr_id), priv, len);
	*err = CM_MAD_OK;
	return 0;
}

enum cm_mad_err cm_mad_parse(const uint8_t *mad, size_t len,
			     struct cm_msg *m)
{
	const uint8_t *d = mad + MAD_HDR_LEN;
	const uint8_t *priv;
	size_t plen;

	memset(m, 0, sizeof(*m));
	if (len < MAD_LEN)
		return CM_MAD_TRUNCATED;
	mad_hdr_decode(mad, &m->hdr);
	if (m->hdr.base_version != MAD_BASE_VERSION)
		return CM_MAD_BAD_BASE_VERSION;
	if (m->hdr.mgmt_class != MAD_CLASS_CM)
		return CM_MAD_BAD_CLASS;
	if (m->hdr.class_version != CM_CLASS_VERSION)
		return CM_MAD_BAD_CLASS_VERSION;
	plen = cm_priv_max(m->hdr.attr_id);
	if (!plen)
		return CM_MAD_BAD_ATTR;
	if (m->hdr.method != MAD_METHOD_SEND)
		return CM_MAD_BAD_METHOD;
	priv = d + priv_off(m->hdr.attr_id);

	switch (m->hdr.attr_id) {
	case CM_ATTR_REQ:
		req_decode(d, &m->u.req);
		break;
	case CM_ATTR_MRA:
		m->u.mra.local_comm_id = be32_get(d);
		m->u.mra.remote_comm_id = be32_get(d + 4);
		m->u.mra.msg_mraed = d[8] >> 6;
		m->u.mra.service_timeout = d[9] >> 3;
		break;
	case CM_ATTR_REJ:
		m->u.rej.local_comm_id = be32_get(d);
		m->u.rej.remote_comm_id = be32_get(d + 4);
		m->u.rej.msg_rejected = d[8] >> 6;
		m->u.rej.ari_len = d[9] >> 1;
		m->u.rej.reason = be16_get(d + 10);
		if (m->u.rej.ari_len <= CM_REJ_ARI_LEN)
			memcpy(m->u.rej.ari, d + 12, m->u.rej.ari_len);
		break;
	case CM_ATTR_REP:
		rep_decode(d, &m->u.rep);
		break;
	case CM_ATTR_RTU:
	case CM_ATTR_DREP:
		m->u.rtu.local_comm_id = be32_get(d);
		m->u.rtu.remote_comm_id = be32_get(d + 4);
		break;
	case CM_ATTR_DREQ:
		m->u.dreq.local_comm_id = be32_get(d);
		m->u.dreq.remote_comm_id = be32_get(d + 4);
		m->u.dreq.remote_qpn = be32_get(d + 8) >> 8;
		break;
	}
	/* every message's private data is its last field */
	m->priv = priv;
	m->priv_len = plen;
	if (!msg_fields(m))
		return CM_MAD_BAD_FIELD;
	return CM_MAD_OK;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Provider selection and dispatch for the fabric interface. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/errbuf.h"
#include "fabric/fabric_prov.h"

int fab_fail(char *err, size_t errlen, int e, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	errbuf_vfail(err, errlen, e, fmt, ap);
	va_end(ap);
	return -1;
}

static const struct fab_provider *const providers[] = {
	&fab_soft_provider,
	&fab_verbs_provider,
	&fab_umad_provider,
};

/* Providers added at run time (tests' in-memory fabric), after the
 * built-in ones so that none of those can be shadowed. */
static const struct fab_provider *registered[4];
static unsigned int nregistered;

int fab_provider_register(const struct fab_provider *prov)
{
	if (nregistered == sizeof(registered) / sizeof(registered[0])) {
		errno = ENOSPC;
		return -1;
	}
	registered[nregistered++] = prov;
	return 0;
}

struct fab_dev *fab_open(const char *spec, const char *node, char *err,
			 size_t errlen)
{
	const char *colon = strchr(spec, ':');
	size_t plen, i;

	if (!colon) {
		fab_fail(err, errlen, EINVAL, "fabric spec '%s': expected "
			 "soft:PATH or verbs:DEVICE[:PORT]", spec);
		return NULL;
	}
	plen = (size_t)(colon - spec);
	for (i = 0; i < sizeof(providers) / sizeof(providers[0]); i++) {
		if (strlen(providers[i]->name) == plen &&
		    !strncmp(spec, providers[i]->name, plen))
			return providers[i]->open(colon + 1, node, err, errlen);
	}
	for (i = 0; i < nregistered; i++) {
		if (strlen(registered[i]->name) == plen &&
		    !strncmp(spec, registered[i]->name, plen))
			return registered[i]->open(colon + 1, node, err,
						   errlen);
	}
	fab_fail(err, errlen, EPROTONOSUPPORT,
		 "fabric spec '%s': unknown provider '%.*s'", spec, (int)plen,
		 spec);
	return NULL;
}

void fab_close(struct fab_dev *dev)
{
	if (dev)
		dev->prov->close(dev);
}

int fab_query_port(struct fab_dev *dev, struct fab_port_attr *attr,
		   char *err, size_t errlen)
{
	memset(attr, 0, sizeof(*attr));	/* what a provider leaves is 0 */
	return dev->prov->query_port(dev, attr, err, errlen);
}

int fab_dev_fd(struct fab_dev *dev)
{
	return dev->prov->dev_fd(dev);
}

int fab_get_event(struct fab_dev *dev, struct fab_event *ev)
{
	return dev->prov->get_event(dev, ev);
}

const char *fab_event_name(enum fab_event_type type)
{
	switch (type) {
	case FAB_EV_PORT_ACTIVE: return "PORT_ACTIVE";
	case FAB_EV_PORT_ERR: return "PORT_ERR";
	case FAB_EV_LID_CHANGE: return "LID_CHANGE";
	case FAB_EV_PKEY_CHANGE: return "PKEY_CHANGE";
	case FAB_EV_SM_CHANGE: return "SM_CHANGE";
	case FAB_EV_CLIENT_REREGISTER: return "CLIENT_REREGISTER";
	case FAB_EV_GID_CHANGE: return "GID_CHANGE";
	case FAB_EV_DEVICE_FATAL: return "DEVICE_FATAL";
	}
	return "UNKNOWN";
}

struct fab_qp *fab_qp_create(struct fab_dev *dev,
			     const struct fab_qp_init *init, char *err,
			     size_t errlen)
{
	if (init->type != FAB_QPT_UD) {
		fab_fail(err, errlen, EINVAL, "unsupported QP type %d%s",
			 init->type, init->type == FAB_QPT_RC ?
			 " (RC QPs come from fab_cm_qp_create)" : "");
		return NULL;
	}
	return dev->prov->qp_create(dev, init, err, errlen);
}

void fab_qp_destroy(struct fab_qp *qp)
{
	struct fab_cm_id *id;

	if (!qp)
		return;
	id = qp->cm;
	qp->dev->prov->qp_destroy(qp);
	if (id)
		id->qp = NULL;
}

uint32_t fab_qp_num(const struct fab_qp *qp)
{
	return qp->qpn;
}

int fab_qp_fd(struct fab_qp *qp)
{
	return qp->dev->prov->qp_fd(qp);
}

int fab_qp_send(struct fab_qp *qp, const struct fab_send_wr *wr, int n)
{
	return qp->dev->prov->qp_send(qp, wr, n);
}

int fab_qp_recv(struct fab_qp *qp, struct fab_recv *rc, int n)
{
	return qp->dev->prov->qp_recv(qp, rc, n);
}

int fab_attach_mcast(struct fab_qp *qp, const union fab_gid *mgid,
		     uint16_t mlid, char *err, size_t errlen)
{
	static const uint8_t v4mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
					      0xff, 0xff };

	/* ff00::/8, or (RoCE v2 over IPv4) ::ffff:224.0.0.0/100 */
	if (mgid->raw[0] != 0xff &&
	    (memcmp(mgid->raw, v4mapped, sizeof(v4mapped)) ||
	     (mgid->raw[12] & 0xf0) != 0xe0))
		return fab_fail(err, errlen, EINVAL,
				"attach: not a multicast GID");
	if (mlid < FAB_LID_MCAST_MIN || mlid > FAB_LID_MCAST_MAX)
		return fab_fail(err, errlen, EINVAL, "attach: MLID 0x%04x "
				"outside 0xc000-0xfffe", mlid);
	return qp->dev->prov->attach(qp, mgid, mlid, err, errlen);
}

int fab_detach_mcast(struct fab_qp *qp, const union fab_gid *mgid,
		     uint16_t mlid, char *err, size_t errlen)
{
	return qp->dev->prov->detach(qp, mgid, mlid, err, errlen);
}

struct fab_ah *fab_ah_create(struct fab_dev *dev,
			     const struct fab_ah_attr *attr, char *err,
			     size_t errlen)
{
	return dev->prov->ah_create(dev, attr, err, errlen);
}

void fab_ah_destroy(struct fab_ah *ah)
{
	if (ah)
		ah->dev->prov->ah_destroy(ah);
}

int fab_parse_dev_port(const char *prov, const char *arg, char *name,
		       size_t name_len, uint8_t *port, char *err,
		       size_t errlen)
{
	const char *colon;
	size_t len;

	if (!arg || !*arg)
		return fab_fail(err, errlen, EINVAL,
				"%s: expected DEVICE[:PORT]", prov);
	colon = strchr(arg, ':');
	len = colon ? (size_t)(colon - arg) : strlen(arg);
	if (len == 0 || len >= name_len)
		return fab_fail(err, errlen, EINVAL,
				"%s: bad device name in \"%s\"", prov, arg);
	memcpy(name, arg, len);
	name[len] = '\0';
	*port = 1;
	if (colon) {
		char *end;
		unsigned long v;

		errno = 0;
		v = strtoul(colon + 1, &end, 10);
		if (errno || end == colon + 1 || *end || v < 1 || v > 255)
			return fab_fail(err, errlen, EINVAL,
					"%s: bad port in \"%s\"", prov, arg);
		*port = (uint8_t)v;
	}
	return 0;
}

struct fab_mad_agent *fab_mad_open(struct fab_dev *dev, uint8_t mgmt_class,
				   char *err, size_t errlen)
{
	if (!dev->prov->mad_open) {
		fab_fail(err, errlen, EOPNOTSUPP,
			 "%s provider has no MAD interface", dev->prov->name);
		return NULL;
	}
	return dev->prov->mad_open(dev, mgmt_class, err, errlen);
}

struct fab_mad_agent *fab_mad_register(struct fab_dev *dev,
				       const struct fab_mad_reg *reg,
				       char *err, size_t errlen)
{
	if (dev->prov->mad_register)
		return dev->prov->mad_register(dev, reg, err, errlen);
	if (!reg->methods[0] && !reg->methods[1] && !reg->class_version)
		return fab_mad_open(dev, reg->mgmt_class, err, errlen);
	fab_fail(err, errlen, EOPNOTSUPP, "%s provider has no MAD agents "
		 "that serve requests", dev->prov->name);
	return NULL;
}

void fab_mad_close(struct fab_mad_agent *agent)
{
	if (agent)
		agent->dev->prov->mad_close(agent);
}

int fab_mad_fd(struct fab_mad_agent *agent)
{
	return agent->dev->prov->mad_fd(agent);
}

int fab_mad_send(struct fab_mad_agent *agent, const struct fab_mad_addr *to,
		 const void *mad, size_t len)
{
	if (len != 256) {	/* a MAD is 256 bytes */
		errno = EINVAL;
		return -1;
	}
	return agent->dev->prov->mad_send(agent, to, mad, len);
}

int fab_mad_recv(struct fab_mad_agent *agent, void *buf, size_t cap,
		 struct fab_mad_addr *from)
{
	return agent->dev->prov->mad_recv(agent, buf, cap, from);
}

/* Index of a P_Key in a table, comparing the 15-bit key and preferring
 * an exact match (full/limited bit too); -1 if absent. */
int fab_pkey_index(const uint16_t *table, unsigned int n, uint16_t pkey)
{
	unsigned int i;
	int base = -1;

	for (i = 0; i < n; i++) {
		if (table[i] == pkey)
			return (int)i;
		if (base < 0 && table[i] &&
		    (table[i] & 0x7fff) == (pkey & 0x7fff))
			base = (int)i;
	}
	return base;
}

int fab_pkey_find(const struct fab_port_attr *attr, uint16_t pkey)
{
	return fab_pkey_index(attr->pkeys, attr->npkeys, pkey);
}

int fab_mtu_to_bytes(uint8_t mtu_code)
{
	if (mtu_code < 1 || mtu_code > 5)
		return -1;
	return 128 << mtu_code;
}

void fab_gid_to_str(const union fab_gid *gid, char *buf, size_t len)
{
	char tmp[INET6_ADDRSTRLEN];

	if (!inet_ntop(AF_INET6, gid->raw, tmp, sizeof(tmp)))
		tmp[0] = '\0';
	snprintf(buf, len, "%s", tmp);
}

int fab_gid_from_str(const char *s, union fab_gid *gid)
{
	if (inet_pton(AF_INET6, s, gid->raw) != 1) {
		errno = EINVAL;
		return -1;
	}
	return 0;
}

/* --- reliable connections ------------------------------------------------ */

static int fab_nosup(char *err, size_t errlen, const struct fab_dev *dev,
		     const char *what)
{
	return fab_fail(err, errlen, EOPNOTSUPP, "%s provider has no %s",
			dev->prov->name, what);
}

struct fab_mr *fab_mr_reg(struct fab_dev *dev, void *addr, size_t len,
			  unsigned int access, char *err, size_t errlen)
{
	const unsigned int all = FAB_ACCESS_LOCAL_WRITE |
				 FAB_ACCESS_REMOTE_WRITE |
				 FAB_ACCESS_REMOTE_READ;

	if (!dev->prov->mr_reg) {
		fab_nosup(err, errlen, dev, "memory regions");
		return NULL;
	}
	if (!addr || !len || (access & ~all) ||
	    ((access & FAB_ACCESS_REMOTE_WRITE) &&
	     !(access & FAB_ACCESS_LOCAL_WRITE))) {
		fab_fail(err, errlen, EINVAL, "mr_reg: bad region or access "
			 "0x%x", access);
		return NULL;
	}
	return dev->prov->mr_reg(dev, addr, len, access, err, errlen);
}

void fab_mr_dereg(struct fab_mr *mr)
{
	if (mr)
		mr->dev->prov->mr_dereg(mr);
}

uint32_t fab_mr_lkey(const struct fab_mr *mr)
{
	return mr->lkey;
}

uint32_t fab_mr_rkey(const struct fab_mr *mr)
{
	return mr->rkey;
}

static int fab_rc_check(const struct fab_qp *qp, int op_missing)
{
	if (qp->type != FAB_QPT_RC) {
		errno = EINVAL;
		return -1;
	}
	if (op_missing) {
		errno = EOPNOTSUPP;
		return -1;
	}
	return 0;
}

int fab_qp_post_send(struct fab_qp *qp, const struct fab_rc_wr *wr, int n)
{
	if (fab_rc_check(qp, !qp->dev->prov->qp_post_send) < 0)
		return -1;
	return qp->dev->prov->qp_post_send(qp, wr, n);
}

int fab_qp_post_recv(struct fab_qp *qp, const struct fab_recv_wr *wr, int n)
{
	if (fab_rc_check(qp, !qp->dev->prov->qp_post_recv) < 0)
		return -1;
	return qp->dev->prov->qp_post_recv(qp, wr, n);
}

int fab_qp_poll(struct fab_qp *qp, struct fab_wc *wc, int n)
{
	if (fab_rc_check(qp, !qp->dev->prov->qp_poll) < 0)
		return -1;
	return qp->dev->prov->qp_poll(qp, wc, n);
}

int fab_qp_set_error(struct fab_qp *qp)
{
	if (fab_rc_check(qp, !qp->dev->prov->qp_set_error) < 0)
		return -1;
	return qp->dev->prov->qp_set_error(qp);
}

const char *fab_wc_status_name(enum fab_wc_status status)
{
	static const char *const names[] = {
		[FAB_WC_SUCCESS] = "success",
		[FAB_WC_LOC_LEN_ERR] = "local length error",
		[FAB_WC_LOC_QP_OP_ERR] = "local QP operation error",
		[FAB_WC_LOC_PROT_ERR] = "local protection error",
		[FAB_WC_WR_FLUSH_ERR] = "work request flushed",
		[FAB_WC_BAD_RESP_ERR] = "bad response",
		[FAB_WC_LOC_ACCESS_ERR] = "local access error",
		[FAB_WC_REM_INV_REQ_ERR] = "remote invalid request",
		[FAB_WC_REM_ACCESS_ERR] = "remote access error",
		[FAB_WC_REM_OP_ERR] = "remote operation error",
		[FAB_WC_RETRY_EXC_ERR] = "transport retry counter exceeded",
		[FAB_WC_RNR_RETRY_EXC_ERR] = "RNR retry counter exceeded",
		[FAB_WC_REM_ABORT_ERR] = "remote aborted",
		[FAB_WC_GENERAL_ERR] = "general error",
	};

	if ((unsigned int)status < sizeof(names) / sizeof(names[0]) &&
	    names[status])
		return names[status];
	return "unknown status";
}

int fab_cm_fd(struct fab_dev *dev)
{
	if (!dev->prov->cm_fd) {
		errno = EOPNOTSUPP;
		return -1;
	}
	return dev->prov->cm_fd(dev);
}

int fab_cm_get_event(struct fab_dev *dev, struct fab_cm_event *ev)
{
	if (!dev->prov->cm_get_event) {
		errno = EOPNOTSUPP;
		return -1;
	}
	return dev->prov->cm_get_event(dev, ev);
}

const char *fab_cm_event_name(enum fab_cm_event_type type)
{
	switch (type) {
	case FAB_CM_EV_CONNECT_REQUEST: return "CONNECT_REQUEST";
	case FAB_CM_EV_ESTABLISHED: return "ESTABLISHED";
	case FAB_CM_EV_REJECTED: return "REJECTED";
	case FAB_CM_EV_UNREACHABLE: return "UNREACHABLE";
	case FAB_CM_EV_CONNECT_ERROR: return "CONNECT_ERROR";
	case FAB_CM_EV_DISCONNECTED: return "DISCONNECTED";
	case FAB_CM_EV_DEVICE_REMOVAL: return "DEVICE_REMOVAL";
	case FAB_CM_EV_TIMEWAIT_EXIT: return "TIMEWAIT_EXIT";
	}
	return "UNKNOWN";
}

static struct fab_cm_id *fab_cm_new(struct fab_cm_id *id, void *context)
{
	if (id)
		id->context = context;
	return id;
}

struct fab_cm_id *fab_cm_listen(struct fab_dev *dev,
				const struct fab_cm_addr *addr, int backlog,
				void *context, char *err, size_t errlen)
{
	if (!dev->prov->cm_listen) {
		fab_nosup(err, errlen, dev, "connection manager");
		return NULL;
	}
	if (backlog < 0) {
		fab_fail(err, errlen, EINVAL, "listen: backlog %d", backlog);
		return NULL;
	}
	return fab_cm_new(dev->prov->cm_listen(dev, addr, backlog ? backlog :
					       16, err, errlen), context);
}

struct fab_cm_id *fab_cm_create_id(struct fab_dev *dev, void *context,
				   char *err, size_t errlen)
{
	if (!dev->prov->cm_create_id) {
		fab_nosup(err, errlen, dev, "connection manager");
		return NULL;
	}
	return fab_cm_new(dev->prov->cm_create_id(dev, err, errlen), context);
}

struct fab_qp *fab_cm_qp_create(struct fab_cm_id *id,
				const struct fab_qp_init *init, char *err,
				size_t errlen)
{
	if (!id->dev->prov->cm_qp_create) {
		fab_nosup(err, errlen, id->dev, "RC queue pairs");
		return NULL;
	}
	if (init->type != FAB_QPT_RC || id->qp || id->listener) {
		fab_fail(err, errlen, EINVAL, "cm_qp_create: %s",
			 init->type != FAB_QPT_RC ? "not an RC QP" :
			 id->qp ? "the id has a QP" : "a listener");
		return NULL;
	}
	return id->dev->prov->cm_qp_create(id, init, err, errlen);
}

struct fab_qp *fab_cm_qp(const struct fab_cm_id *id)
{
	return id->qp;
}

int fab_cm_connect(struct fab_cm_id *id, const struct fab_cm_addr *dst,
		   const struct fab_cm_param *param, char *err, size_t errlen)
{
	if (!id->dev->prov->cm_connect)
		return fab_nosup(err, errlen, id->dev, "connection manager");
	if (param && param->private_data_len > FAB_CM_REQ_PRIV)
		return fab_fail(err, errlen, EINVAL, "connect: %u bytes of "
				"private data, a REQ has room for %d",
				param->private_data_len, FAB_CM_REQ_PRIV);
	if (!id->qp || id->listener)
		return fab_fail(err, errlen, EINVAL, "connect: %s",
				id->listener ? "a listener" : "no QP");
	return id->dev->prov->cm_connect(id, dst, param, err, errlen);
}

int fab_cm_accept(struct fab_cm_id *id, const struct fab_cm_param *param,
		  char *err, size_t errlen)
{
	if (!id->dev->prov->cm_accept)
		return fab_nosup(err, errlen, id->dev, "connection manager");
	if (param && param->private_data_len > FAB_CM_REP_PRIV)
		return fab_fail(err, errlen, EINVAL, "accept: %u bytes of "
				"private data, a REP has room for %d",
				param->private_data_len, FAB_CM_REP_PRIV);
	if (!id->qp || id->listener)
		return fab_fail(err, errlen, EINVAL, "accept: %s",
				id->listener ? "a listener" : "no QP");
	return id->dev->prov->cm_accept(id, param, err, errlen);
}

int fab_cm_reject(struct fab_cm_id *id, const void *private_data,
		  uint8_t len, char *err, size_t errlen)
{
	if (!id->dev->prov->cm_reject)
		return fab_nosup(err, errlen, id->dev, "connection manager");
	if (len > FAB_CM_REJ_PRIV)
		return fab_fail(err, errlen, EINVAL, "reject: %u bytes of "
				"private data, a REJ has room for %d", len,
				FAB_CM_REJ_PRIV);
	return id->dev->prov->cm_reject(id, private_data, len, err, errlen);
}

int fab_cm_disconnect(struct fab_cm_id *id, char *err, size_t errlen)
{
	if (!id->dev->prov->cm_disconnect)
		return fab_nosup(err, errlen, id->dev, "connection manager");
	return id->dev->prov->cm_disconnect(id, err, errlen);
}

void fab_cm_destroy(struct fab_cm_id *id)
{
	if (id)
		id->dev->prov->cm_destroy(id);
}

void *fab_cm_context(const struct fab_cm_id *id)
{
	return id->context;
}

void fab_cm_set_context(struct fab_cm_id *id, void *context)
{
	id->context = context;
}

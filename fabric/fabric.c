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
		fab_fail(err, errlen, EINVAL, "unsupported QP type %d",
			 init->type);
		return NULL;
	}
	return dev->prov->qp_create(dev, init, err, errlen);
}

void fab_qp_destroy(struct fab_qp *qp)
{
	if (qp)
		qp->dev->prov->qp_destroy(qp);
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

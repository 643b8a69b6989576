// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The verbs provider: "verbs:DEVICE[:PORT[:GID]]", an RDMA device through
 * rdma-core's libibverbs, on an InfiniBand or an Ethernet (RoCE) link layer.
 *
 * It has run on Soft-RoCE (the kernel's rdma_rxe, in the guest tier:
 * tests/vm/verbs_*.sh) but never on an InfiniBand HCA: the machines that
 * build ibgw have none.  The InfiniBand-only paths (LID-routed address
 * handles, MLIDs) are reviewed, not tested.
 *
 * RoCE.  On an Ethernet link layer GIDs are the addresses (LIDs are 0):
 * every address handle carries a GRH (is_global, dgid, sgid_index,
 * hop_limit; dlid 0), and there is no SM or SA.  The source GID is chosen
 * once per fab_dev, by the spec's third field:
 *   (none)   the first RoCE v2 GID whose address is IPv4-mapped
 *            (::ffff:a.b.c.d, RoCE v2 over IPv4), else the first RoCE v2
 *            IPv6 one (global before link-local), else the lowest valid
 *            entry; on InfiniBand, index 0
 *   N        GID table index N, whatever its type
 *   ipv4     the first RoCE v2 IPv4-mapped GID, or fail
 *   ipv6     the first RoCE v2 IPv6 GID (global before link-local), or fail
 * e.g. verbs:rxe0 (port 1, the IPv4 GID), verbs:rxe0:1:ipv6, verbs:mlx5_0:1:3.
 * The table is read with ibv_query_gid_table (types and netdevs included),
 * and read again by every fab_query_port, so that an address added later
 * is found; fab_port_attr.sgid/sgid_index say what was picked.  Multicast
 * on RoCE needs no SA: fab_attach_mcast also joins the MGID's IP group
 * (IPv4 for ::ffff:a.b.c.d, else IPv6) on the source GID's netdev, as
 * rdma_cm does, so that the IP layer (and IGMP/MLD snooping switches) let
 * the group's datagrams in.
 *
 * RC queue pairs, memory regions and connection management are in
 * prov_verbs_cm.c, through librdmacm (docs/rc-cm.md); for them the device
 * context is librdmacm's own (rdma_get_devices), when rdma_cm is there.
 *
 * It is deliberately thin: it maps the fabric interface onto verbs objects
 * one to one (device context + PD per fab_dev; completion channel, CQs, QP
 * and one registered buffer per fab_qp; ibv_ah per fab_ah) and holds no
 * policy.  Everything that can be tested without hardware lives above it.
 *
 * What it owns:
 *   - a receive ring of max_recv slots, each (FAB_GRH_LEN + port max MTU)
 *     bytes, all posted at QP creation and reposted as soon as a completion
 *     has been copied out;
 *   - a send ring of max_send slots of port-MTU bytes.  The caller's data is
 *     copied into a slot (or sent inline when small enough), so the
 *     caller never has to register memory or keep buffers alive until
 *     completion.  The copy costs one memcpy per datagram; a zero-copy
 *     variant would need registered buffers in the fabric interface.
 *
 * Not thread-safe: one event loop owns a fab_dev and its QPs, as everywhere
 * in ibgw.  Objects must be destroyed before the fab_dev they came from.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "fabric/fabric_prov.h"
#include "fabric/prov_umad.h"
#include "fabric/prov_verbs.h"

#define PV_DEFAULT_SEND		256
#define PV_DEFAULT_RECV		512
#define PV_WANT_INLINE		64	/* asked for; may get more */
#define PV_BATCH		32	/* CQEs / WRs per verbs call */
#define PV_DRAIN_MS		2000	/* destroy: gives up after so long idle */

#define PV_ROCE_HOP_LIMIT	64	/* a RoCE v2 AH without one: IP TTL */

/* An IP multicast membership held for a RoCE attach. */
struct pv_mc {
	struct pv_mc *next;
	union fab_gid mgid;
	int fd;			/* the socket holding the membership */
};

struct pv_qp {
	struct fab_qp base;
	struct pv_dev *dev;
	struct ibv_comp_channel *channel;
	struct ibv_cq *send_cq;
	struct ibv_cq *recv_cq;	/* the only CQ on the channel */
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;		/* recv ring, then send ring; one MR */
	size_t buf_len;

	uint32_t nrecv;
	uint32_t recv_slot;	/* bytes per receive slot, GRH included */
	uint32_t recv_posted;

	uint32_t nsend;
	uint32_t send_slot;	/* bytes per send slot = largest payload */
	uint32_t max_inline;
	/* Send slots are used and completed in order (UD, all signaled):
	 * the send_inflight slots before send_next are in the HCA. */
	uint32_t send_next;
	uint32_t send_inflight;

	struct pv_mc *mcs;	/* RoCE: IP group memberships */

	/* Not exported yet (see the report on fabric.h). */
	uint64_t recv_errors;
	uint64_t send_errors;
};

struct pv_ah {
	struct fab_ah base;
	struct ibv_ah *ah;
};

static struct pv_qp *pv_qp_of(struct fab_qp *qp)
{
	return (struct pv_qp *)qp;
}

/*
 * rdma-core is not uniform about failures: most verbs return a positive
 * errno value, the sysfs readers (ibv_query_gid, ibv_query_pkey) and the
 * event readers return -1 with errno set, and a few providers return
 * -errno.  Accept all three.
 */
int pv_fail(char *err, size_t errlen, const char *call, int ret)
{
	int e;

	if (ret > 0)
		e = ret;
	else if (ret < -1)
		e = -ret;
	else
		e = errno ? errno : EIO;
	return fab_fail(err, errlen, e, "verbs: %s: %s", call, strerror(e));
}

/* For calls that return NULL with errno set. */
int pv_fail_null(char *err, size_t errlen, const char *call)
{
	return pv_fail(err, errlen, call, -1);
}

int pv_set_nonblock(int fd)
{
	int flags = fcntl(fd, F_GETFL);

	if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
		return -1;
	return 0;
}

static enum fab_port_state pv_port_state(enum ibv_port_state st)
{
	switch (st) {
	case IBV_PORT_INIT:
		return FAB_PORT_INIT;
	case IBV_PORT_ARMED:
		return FAB_PORT_ARMED;
	case IBV_PORT_ACTIVE:
		return FAB_PORT_ACTIVE;
	case IBV_PORT_ACTIVE_DEFER:
		/* Link up but not forwarding data: not usable yet. */
		return FAB_PORT_ARMED;
	default:
		return FAB_PORT_DOWN;
	}
}

/* ---- source GID --------------------------------------------------------- */

static int pv_gid_v4mapped(const union ibv_gid *g)
{
	static const uint8_t pre[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
					 0xff, 0xff };

	return !memcmp(g->raw, pre, sizeof(pre));
}

static int pv_gid_linklocal(const union ibv_gid *g)
{
	return g->raw[0] == 0xfe && (g->raw[1] & 0xc0) == 0x80;
}

static enum fab_gid_type pv_gid_type(uint32_t t)
{
	switch (t) {
	case IBV_GID_TYPE_ROCE_V1:
		return FAB_GID_ROCE_V1;
	case IBV_GID_TYPE_ROCE_V2:
		return FAB_GID_ROCE_V2;
	default:
		return FAB_GID_IB;
	}
}

/*
 * The port's valid GID entries into *tab (malloc'd), their number or -1.
 * ibv_query_gid_table reads the whole device (all ports) in one call; a
 * kernel or provider without it is read entry by entry.
 */
static ssize_t pv_gid_table(struct pv_dev *dev, int tbl_len,
			    struct ibv_gid_entry **tab, char *err,
			    size_t errlen)
{
	size_t max = (size_t)tbl_len * (dev->phys_ports ? dev->phys_ports : 1);
	struct ibv_gid_entry *t;
	ssize_t n, i, k = 0;

	if (max == 0)
		max = 1;
	t = calloc(max, sizeof(*t));
	if (!t)
		return fab_fail(err, errlen, ENOMEM, "verbs: %s",
				strerror(ENOMEM));
	n = ibv_query_gid_table(dev->ctx, t, max, 0);
	if (n < 0) {
		/* entry by entry; an empty slot fails with ENODATA */
		for (i = 0; i < tbl_len; i++) {
			if (ibv_query_gid_ex(dev->ctx, dev->port, (uint32_t)i,
					     &t[k], 0) == 0)
				k++;
		}
		n = k;
	} else {
		for (i = 0; i < n; i++) {
			if (t[i].port_num == dev->port)
				t[k++] = t[i];
		}
		n = k;
	}
	*tab = t;
	return n;
}

/* The first entry of tab[0..n) that is RoCE v2 and of family v4 (1: IPv4-
 * mapped) or IPv6 (0: global before link-local); NULL if none. */
static const struct ibv_gid_entry *pv_gid_find(const struct ibv_gid_entry *tab,
					       ssize_t n, int v4)
{
	const struct ibv_gid_entry *ll = NULL, *best = NULL;
	ssize_t i;

	for (i = 0; i < n; i++) {
		const struct ibv_gid_entry *e = &tab[i];

		if (e->gid_type != IBV_GID_TYPE_ROCE_V2 ||
		    pv_gid_v4mapped(&e->gid) != v4)
			continue;
		if (!v4 && pv_gid_linklocal(&e->gid)) {
			if (!ll || e->gid_index < ll->gid_index)
				ll = e;
			continue;
		}
		if (!best || e->gid_index < best->gid_index)
			best = e;
	}
	return best ? best : ll;
}

/* Choose the source GID as dev->gid_sel says (see the top of the file). */
static int pv_pick_gid(struct pv_dev *dev, const struct ibv_port_attr *pa,
		       char *err, size_t errlen)
{
	const struct ibv_gid_entry *e = NULL;
	struct ibv_gid_entry *tab = NULL;
	ssize_t n, i;
	int ret = 0;

	if (dev->link_layer == FAB_LINK_IB &&
	    dev->gid_sel == PV_GID_DEFAULT) {
		union ibv_gid g;

		if (ibv_query_gid(dev->ctx, dev->port, 0, &g))
			return pv_fail_null(err, errlen, "ibv_query_gid");
		dev->sgid_index = 0;
		dev->sgid_type = FAB_GID_IB;
		memcpy(dev->sgid.raw, g.raw, sizeof(dev->sgid.raw));
		dev->sgid_ifindex = 0;
		return 0;
	}
	n = pv_gid_table(dev, pa->gid_tbl_len, &tab, err, errlen);
	if (n < 0)
		return -1;
	switch (dev->gid_sel) {
	case PV_GID_INDEX:
		for (i = 0; i < n && !e; i++) {
			if (tab[i].gid_index == dev->gid_want)
				e = &tab[i];
		}
		if (!e)
			ret = fab_fail(err, errlen, ENOENT, "verbs: %s port %u "
				       "has no GID at index %u", dev->name,
				       dev->port, dev->gid_want);
		break;
	case PV_GID_IPV4:
	case PV_GID_IPV6:
		e = pv_gid_find(tab, n, dev->gid_sel == PV_GID_IPV4);
		if (!e)
			ret = fab_fail(err, errlen, ENOENT, "verbs: %s port %u "
				       "has no RoCE v2 %s GID (no such address "
				       "on its netdev?)", dev->name, dev->port,
				       dev->gid_sel == PV_GID_IPV4 ? "IPv4" :
				       "IPv6");
		break;
	case PV_GID_DEFAULT:
		e = pv_gid_find(tab, n, 1);
		if (!e)
			e = pv_gid_find(tab, n, 0);
		for (i = 0; i < n && !e; i++)
			e = &tab[i];	/* the lowest index comes first */
		if (!e)
			ret = fab_fail(err, errlen, ENOENT, "verbs: %s port %u "
				       "has no valid GID", dev->name,
				       dev->port);
		break;
	}
	if (e) {
		if (e->gid_index > 255) {
			ret = fab_fail(err, errlen, ERANGE, "verbs: GID index "
				       "%u does not fit an address handle",
				       e->gid_index);
		} else {
			dev->sgid_index = (uint8_t)e->gid_index;
			dev->sgid_type = pv_gid_type(e->gid_type);
			memcpy(dev->sgid.raw, e->gid.raw,
			       sizeof(dev->sgid.raw));
			dev->sgid_ifindex = e->ndev_ifindex;
		}
	}
	free(tab);
	return ret;
}

/* The spec's GID field: an index, "ipv4" or "ipv6". */
static int pv_parse_gid_sel(struct pv_dev *dev, const char *s, char *err,
			    size_t errlen)
{
	char *end;
	unsigned long v;

	if (!strcmp(s, "ipv4")) {
		dev->gid_sel = PV_GID_IPV4;
		return 0;
	}
	if (!strcmp(s, "ipv6")) {
		dev->gid_sel = PV_GID_IPV6;
		return 0;
	}
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v > 255)
		return fab_fail(err, errlen, EINVAL, "verbs: bad GID \"%s\" "
				"(a GID index 0-255, ipv4 or ipv6)", s);
	dev->gid_sel = PV_GID_INDEX;
	dev->gid_want = (uint32_t)v;
	return 0;
}

/* ---- device ------------------------------------------------------------- */

static int pv_query_port(struct fab_dev *base, struct fab_port_attr *attr,
			 char *err, size_t errlen)
{
	struct pv_dev *dev = pv_dev_of(base);
	struct ibv_port_attr pa;
	union ibv_gid gid;
	unsigned int i, n;
	int ret;

	ret = ibv_query_port(dev->ctx, dev->port, &pa);
	if (ret)
		return pv_fail(err, errlen, "ibv_query_port", ret);
	ret = ibv_query_gid(dev->ctx, dev->port, 0, &gid);
	if (ret)
		return pv_fail(err, errlen, "ibv_query_gid", ret);
	if (pv_pick_gid(dev, &pa, err, errlen) < 0)
		return -1;

	memset(attr, 0, sizeof(*attr));
	attr->state = pv_port_state(pa.state);
	attr->lid = pa.lid;
	attr->sm_lid = pa.sm_lid;
	attr->lmc = pa.lmc;
	attr->sm_sl = pa.sm_sl;
	attr->active_mtu = (uint8_t)pa.active_mtu;	/* same codes 1..5 */
	attr->port_num = dev->port;
	attr->node_guid = dev->node_guid;
	memcpy(attr->gid.raw, gid.raw, sizeof(attr->gid.raw));
	attr->port_guid = be64toh(gid.global.interface_id);
	attr->link_layer = dev->link_layer;
	attr->sgid_index = dev->sgid_index;
	attr->sgid_type = dev->sgid_type;
	attr->sgid = dev->sgid;
	attr->sgid_ifindex = dev->sgid_ifindex;

	/*
	 * Entries keep their hardware index, because a P_Key's position in
	 * this table is the pkey_index a QP is created with.  Invalid keys
	 * (0x0000, 0x8000) become empty slots, and npkeys stops after the
	 * last valid one.  Keys at index >= FAB_MAX_PKEYS are not visible.
	 */
	n = pa.pkey_tbl_len;
	if (n > FAB_MAX_PKEYS)
		n = FAB_MAX_PKEYS;
	for (i = 0; i < n; i++) {
		__be16 pkey;
		uint16_t host;

		ret = ibv_query_pkey(dev->ctx, dev->port, (int)i, &pkey);
		if (ret)
			return pv_fail(err, errlen, "ibv_query_pkey", ret);
		host = be16toh(pkey);
		if ((host & 0x7fff) == 0)
			continue;
		attr->pkeys[i] = host;
		attr->npkeys = i + 1;
	}
	return 0;
}

static void pv_close(struct fab_dev *base)
{
	struct pv_dev *dev = pv_dev_of(base);

	if (!dev)
		return;
	pv_cm_close(dev);
	if (dev->pd)
		ibv_dealloc_pd(dev->pd);	/* EBUSY if QPs/AHs leaked */
	if (dev->ctx && !dev->ctx_cm)
		ibv_close_device(dev->ctx);	/* rdma_cm's stay open */
	free(dev);
}

/*
 * The device's context as librdmacm holds it, so that rdma_cm ids bound
 * to this port use our PD and memory regions (rdma_create_qp wants a PD
 * of id->verbs); NULL when rdma_cm is not there (no rdma_ucm module), and
 * the provider opens a context of its own without RC.
 */
static struct ibv_context *pv_open_cm_ctx(const char *name)
{
	struct ibv_context **list, *ctx = NULL;
	int i, num = 0;

	list = rdma_get_devices(&num);
	if (!list)
		return NULL;
	for (i = 0; i < num; i++) {
		if (!strcmp(ibv_get_device_name(list[i]->device), name)) {
			ctx = list[i];
			break;
		}
	}
	rdma_free_devices(list);
	return ctx;
}

static struct ibv_context *pv_open_by_name(const char *name, char *err,
					   size_t errlen)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	int i, num = 0;

	list = ibv_get_device_list(&num);
	if (!list) {
		pv_fail_null(err, errlen, "ibv_get_device_list");
		return NULL;
	}
	for (i = 0; i < num; i++) {
		if (strcmp(ibv_get_device_name(list[i]), name) == 0)
			break;
	}
	if (i == num)
		fab_fail(err, errlen, ENODEV, "verbs: no RDMA device \"%s\" "
			 "(%d found)", name, num);
	else if (!(ctx = ibv_open_device(list[i])))
		pv_fail_null(err, errlen, "ibv_open_device");
	/* The context stays valid after the list is freed. */
	ibv_free_device_list(list);
	return ctx;
}

static struct fab_dev *pv_open(const char *arg, const char *node, char *err,
			       size_t errlen)
{
	char devport[IBV_SYSFS_NAME_MAX + 8];
	struct ibv_device_attr da;
	struct ibv_port_attr pa;
	struct fab_port_attr check;
	struct pv_dev *dev;
	const char *gidsel = NULL, *c;
	uint8_t port;
	int ret, e;

	(void)node;	/* a real HCA has its own identity */
	dev = calloc(1, sizeof(*dev));
	if (!dev) {
		fab_fail(err, errlen, ENOMEM, "verbs: %s", strerror(ENOMEM));
		return NULL;
	}
	dev->base.prov = &fab_verbs_provider;

	/* DEVICE[:PORT[:GID]]: split the GID off, the rest is common */
	c = arg ? strchr(arg, ':') : NULL;
	if (c)
		c = strchr(c + 1, ':');
	if (c) {
		gidsel = c + 1;
		if ((size_t)(c - arg) >= sizeof(devport)) {
			fab_fail(err, errlen, EINVAL, "verbs: bad device name "
				 "in \"%s\"", arg);
			goto fail;
		}
		snprintf(devport, sizeof(devport), "%.*s", (int)(c - arg),
			 arg);
	} else {
		snprintf(devport, sizeof(devport), "%s", arg ? arg : "");
	}
	if (fab_parse_dev_port("verbs", devport, dev->name, sizeof(dev->name),
			       &port, err, errlen) < 0)
		goto fail;
	if (gidsel && pv_parse_gid_sel(dev, gidsel, err, errlen) < 0)
		goto fail;
	dev->port = port;

	dev->ctx = pv_open_cm_ctx(dev->name);
	if (dev->ctx)
		dev->ctx_cm = 1;
	else
		dev->ctx = pv_open_by_name(dev->name, err, errlen);
	if (!dev->ctx)
		goto fail;
	if (dev->ctx->device->transport_type != IBV_TRANSPORT_IB) {
		/* iWARP (Ethernet too): no UD queue pairs */
		fab_fail(err, errlen, EOPNOTSUPP, "verbs: %s is not an "
			 "InfiniBand/RoCE device (transport %d, iWARP?)",
			 dev->name, (int)dev->ctx->device->transport_type);
		goto fail;
	}

	ret = ibv_query_device(dev->ctx, &da);
	if (ret) {
		pv_fail(err, errlen, "ibv_query_device", ret);
		goto fail;
	}
	dev->node_guid = be64toh(da.node_guid);
	dev->phys_ports = da.phys_port_cnt;
	if (port > da.phys_port_cnt) {
		fab_fail(err, errlen, ENODEV, "verbs: %s has no port %u (%u "
			 "port%s)", dev->name, port, da.phys_port_cnt,
			 da.phys_port_cnt == 1 ? "" : "s");
		goto fail;
	}

	ret = ibv_query_port(dev->ctx, port, &pa);
	if (ret) {
		pv_fail(err, errlen, "ibv_query_port", ret);
		goto fail;
	}
	/* Old kernels report UNSPECIFIED for InfiniBand ports. */
	switch (pa.link_layer) {
	case IBV_LINK_LAYER_INFINIBAND:
	case IBV_LINK_LAYER_UNSPECIFIED:
		dev->link_layer = FAB_LINK_IB;
		if (dev->gid_sel == PV_GID_IPV4 ||
		    dev->gid_sel == PV_GID_IPV6) {
			fab_fail(err, errlen, EINVAL, "verbs: %s port %u is "
				 "InfiniBand: no %s GIDs (give a GID index)",
				 dev->name, port, gidsel);
			goto fail;
		}
		break;
	case IBV_LINK_LAYER_ETHERNET:
		dev->link_layer = FAB_LINK_ETHERNET;	/* RoCE */
		break;
	default:
		fab_fail(err, errlen, EOPNOTSUPP, "verbs: %s port %u has link "
			 "layer %u (neither InfiniBand nor Ethernet)",
			 dev->name, port, (unsigned int)pa.link_layer);
		goto fail;
	}

	dev->pd = ibv_alloc_pd(dev->ctx);
	if (!dev->pd) {
		pv_fail_null(err, errlen, "ibv_alloc_pd");
		goto fail;
	}

	if (pv_set_nonblock(dev->ctx->async_fd) < 0) {
		pv_fail_null(err, errlen, "async_fd O_NONBLOCK");
		goto fail;
	}

	/* Fail now, not at first use, if GID or P_Key table cannot be read. */
	if (pv_query_port(&dev->base, &check, err, errlen) < 0)
		goto fail;

	return &dev->base;
fail:
	e = errno;
	pv_close(&dev->base);
	errno = e;
	return NULL;
}

static int pv_dev_fd(struct fab_dev *base)
{
	return pv_dev_of(base)->ctx->async_fd;
}

/* 0 when the event is not ours to report. */
static int pv_event_type(const struct pv_dev *dev,
			 const struct ibv_async_event *ae,
			 enum fab_event_type *type)
{
	switch (ae->event_type) {
	case IBV_EVENT_DEVICE_FATAL:
		*type = FAB_EV_DEVICE_FATAL;	/* device-wide */
		return 1;
	case IBV_EVENT_PORT_ACTIVE:
		*type = FAB_EV_PORT_ACTIVE;
		break;
	case IBV_EVENT_PORT_ERR:
		*type = FAB_EV_PORT_ERR;
		break;
	case IBV_EVENT_LID_CHANGE:
		*type = FAB_EV_LID_CHANGE;
		break;
	case IBV_EVENT_PKEY_CHANGE:
		*type = FAB_EV_PKEY_CHANGE;
		break;
	case IBV_EVENT_SM_CHANGE:
		*type = FAB_EV_SM_CHANGE;
		break;
	case IBV_EVENT_CLIENT_REREGISTER:
		*type = FAB_EV_CLIENT_REREGISTER;
		break;
	case IBV_EVENT_GID_CHANGE:
		*type = FAB_EV_GID_CHANGE;
		break;
	default:
		/* QP/CQ/SRQ-affiliated events: no fab_event for them yet. */
		return 0;
	}
	return ae->element.port_num == dev->port;
}

static int pv_get_event(struct fab_dev *base, struct fab_event *ev)
{
	struct pv_dev *dev = pv_dev_of(base);
	struct ibv_async_event ae;
	enum fab_event_type type;

	for (;;) {
		int ours;

		if (ibv_get_async_event(dev->ctx, &ae) < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			return pv_fail_null(NULL, 0, "ibv_get_async_event");
		}
		ours = pv_event_type(dev, &ae, &type);
		/* Every get must be acked, or destroying the object hangs. */
		ibv_ack_async_event(&ae);
		if (ours) {
			ev->type = type;
			return 1;
		}
	}
}

/* ---- queue pairs -------------------------------------------------------- */

static uint8_t *pv_recv_addr(const struct pv_qp *qp, uint32_t slot)
{
	return qp->buf + (size_t)slot * qp->recv_slot;
}

static uint8_t *pv_send_addr(const struct pv_qp *qp, uint32_t slot)
{
	return qp->buf + (size_t)qp->nrecv * qp->recv_slot +
	       (size_t)slot * qp->send_slot;
}

static void pv_recv_wr(struct pv_qp *qp, uint32_t slot,
		       struct ibv_recv_wr *wr, struct ibv_sge *sge)
{
	const uint8_t *addr = pv_recv_addr(qp, slot);

	sge->addr = (uintptr_t)addr;
	sge->length = qp->recv_slot;
	sge->lkey = qp->mr->lkey;
	memset(wr, 0, sizeof(*wr));
	wr->wr_id = slot;
	wr->sg_list = sge;
	wr->num_sge = 1;
}

/* Post the slots in wrs[0..n) as one chain. */
static int pv_post_recv_chain(struct pv_qp *qp, struct ibv_recv_wr *wrs,
			      unsigned int n, char *err, size_t errlen)
{
	struct ibv_recv_wr *bad = NULL;
	unsigned int i;
	int ret;

	if (n == 0)
		return 0;
	for (i = 0; i + 1 < n; i++)
		wrs[i].next = &wrs[i + 1];
	wrs[n - 1].next = NULL;
	ret = ibv_post_recv(qp->qp, wrs, &bad);
	if (ret) {
		/* Everything before bad went in. */
		qp->recv_posted += bad ? (uint32_t)(bad - wrs) : 0;
		return pv_fail(err, errlen, "ibv_post_recv", ret);
	}
	qp->recv_posted += n;
	return 0;
}

static int pv_post_all_recv(struct pv_qp *qp, char *err, size_t errlen)
{
	struct ibv_recv_wr wrs[PV_BATCH];
	struct ibv_sge sges[PV_BATCH];
	uint32_t slot = 0;

	while (slot < qp->nrecv) {
		unsigned int n = 0;

		while (n < PV_BATCH && slot < qp->nrecv) {
			pv_recv_wr(qp, slot++, &wrs[n], &sges[n]);
			n++;
		}
		if (pv_post_recv_chain(qp, wrs, n, err, errlen) < 0)
			return -1;
	}
	return 0;
}

static int pv_modify(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask,
		     const char *what, char *err, size_t errlen)
{
	int ret = ibv_modify_qp(qp, a, mask);

	if (ret)
		return pv_fail(err, errlen, what, ret);
	return 0;
}

static int pv_qp_to_rts(struct pv_qp *qp, const struct fab_qp_init *init,
			char *err, size_t errlen)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.pkey_index = init->pkey_index;
	a.port_num = qp->dev->port;
	a.qkey = init->qkey;
	if (pv_modify(qp->qp, &a,
		      IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
		      IBV_QP_QKEY, "ibv_modify_qp INIT", err, errlen) < 0)
		return -1;

	/* Receives go in before RTR so that nothing arriving is dropped. */
	if (pv_post_all_recv(qp, err, errlen) < 0)
		return -1;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	if (pv_modify(qp->qp, &a, IBV_QP_STATE, "ibv_modify_qp RTR", err,
		      errlen) < 0)
		return -1;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0;	/* UD: no PSN checking at the receiver */
	return pv_modify(qp->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN,
			 "ibv_modify_qp RTS", err, errlen);
}

static int pv_send_reap(struct pv_qp *qp);

/*
 * Wait until what fab_qp_send accepted has left, so that destroying a QP
 * right after a send does not drop it (a device flushes the WQEs of a QP
 * it destroys; rdma_rxe sends from a tasklet, behind the poster).  The
 * soft provider gives the same guarantee.  It waits as long as sends keep
 * completing (a software device under load is slow), and gives up after
 * PV_DRAIN_MS without one: a dead port must not hang the caller.
 */
static void pv_send_drain(struct pv_qp *qp)
{
	uint32_t before;
	int idle = 0;

	while (qp->send_inflight && idle < PV_DRAIN_MS) {
		before = qp->send_inflight;
		if (pv_send_reap(qp) < 0)
			break;
		if (qp->send_inflight == before) {
			usleep(1000);
			idle++;
		} else {
			idle = 0;
		}
	}
}

static void pv_qp_destroy(struct fab_qp *base)
{
	struct pv_qp *qp = pv_qp_of(base);

	if (!qp)
		return;
	if (base->type == FAB_QPT_RC) {
		pv_rc_qp_destroy(base);
		return;
	}
	if (qp->qp && qp->send_cq)
		pv_send_drain(qp);
	/* Reverse order of creation; CQ events are acked as they are read,
	 * so ibv_destroy_cq does not wait. */
	if (qp->qp)
		ibv_destroy_qp(qp->qp);
	while (qp->mcs) {
		struct pv_mc *mc = qp->mcs;

		qp->mcs = mc->next;
		close(mc->fd);
		free(mc);
	}
	if (qp->send_cq)
		ibv_destroy_cq(qp->send_cq);
	if (qp->recv_cq)
		ibv_destroy_cq(qp->recv_cq);
	if (qp->channel)
		ibv_destroy_comp_channel(qp->channel);
	if (qp->mr)
		ibv_dereg_mr(qp->mr);
	free(qp->buf);
	free(qp);
}

static int pv_qp_buffers(struct pv_qp *qp, const struct ibv_port_attr *pa,
			 char *err, size_t errlen)
{
	int active = fab_mtu_to_bytes((uint8_t)pa->active_mtu);
	int max = fab_mtu_to_bytes((uint8_t)pa->max_mtu);
	long page = sysconf(_SC_PAGESIZE);
	void *mem;

	if (active <= 0 || max <= 0)
		return fab_fail(err, errlen, EIO, "verbs: port reports "
				"unknown MTU %d/%d", (int)pa->active_mtu,
				(int)pa->max_mtu);
	/*
	 * Receive slots take the port's max MTU, not the active one, so a
	 * link that retrains to a larger MTU cannot deliver a datagram
	 * bigger than a posted buffer.  Sends are limited to the MTU that
	 * was active at creation, which the HCA will certainly accept.
	 */
	qp->recv_slot = FAB_GRH_LEN + (uint32_t)max;
	qp->send_slot = (uint32_t)active;
	qp->buf_len = (size_t)qp->nrecv * qp->recv_slot +
		      (size_t)qp->nsend * qp->send_slot;

	if (page <= 0)
		page = 4096;
	if (posix_memalign(&mem, (size_t)page, qp->buf_len))
		return fab_fail(err, errlen, ENOMEM, "verbs: cannot allocate "
				"%zu bytes", qp->buf_len);
	qp->buf = mem;
	memset(qp->buf, 0, qp->buf_len);

	qp->mr = ibv_reg_mr(qp->dev->pd, qp->buf, qp->buf_len,
			    IBV_ACCESS_LOCAL_WRITE);
	if (!qp->mr)
		return pv_fail_null(err, errlen, "ibv_reg_mr");
	return 0;
}

static int pv_qp_queues(struct pv_qp *qp, char *err, size_t errlen)
{
	struct ibv_context *ctx = qp->dev->ctx;
	struct ibv_qp_init_attr ia;
	int ret;

	qp->channel = ibv_create_comp_channel(ctx);
	if (!qp->channel)
		return pv_fail_null(err, errlen, "ibv_create_comp_channel");
	if (pv_set_nonblock(qp->channel->fd) < 0)
		return pv_fail_null(err, errlen, "completion channel O_NONBLOCK");

	/*
	 * Only receive completions wake the caller.  Send completions are
	 * reaped by fab_qp_send itself before it posts, so the send CQ has
	 * no channel.  Each CQ holds one entry per work request in flight.
	 */
	qp->recv_cq = ibv_create_cq(ctx, (int)qp->nrecv, qp, qp->channel, 0);
	if (!qp->recv_cq)
		return pv_fail_null(err, errlen, "ibv_create_cq (recv)");
	qp->send_cq = ibv_create_cq(ctx, (int)qp->nsend, qp, NULL, 0);
	if (!qp->send_cq)
		return pv_fail_null(err, errlen, "ibv_create_cq (send)");

	memset(&ia, 0, sizeof(ia));
	ia.qp_context = qp;
	ia.send_cq = qp->send_cq;
	ia.recv_cq = qp->recv_cq;
	ia.qp_type = IBV_QPT_UD;
	ia.sq_sig_all = 1;	/* every send frees its slot by a completion */
	ia.cap.max_send_wr = qp->nsend;
	ia.cap.max_recv_wr = qp->nrecv;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	ia.cap.max_inline_data = PV_WANT_INLINE;
	qp->qp = ibv_create_qp(qp->dev->pd, &ia);
	if (!qp->qp && errno == EINVAL) {
		/* Some devices have no inline send on UD. */
		ia.cap.max_inline_data = 0;
		qp->qp = ibv_create_qp(qp->dev->pd, &ia);
	}
	if (!qp->qp)
		return pv_fail_null(err, errlen, "ibv_create_qp");
	/* ibv_create_qp writes back what the device actually gave. */
	qp->max_inline = ia.cap.max_inline_data;

	ret = ibv_req_notify_cq(qp->recv_cq, 0);
	if (ret)
		return pv_fail(err, errlen, "ibv_req_notify_cq", ret);
	return 0;
}

static struct fab_qp *pv_qp_create(struct fab_dev *base,
				   const struct fab_qp_init *init, char *err,
				   size_t errlen)
{
	struct pv_dev *dev = pv_dev_of(base);
	struct ibv_port_attr pa;
	struct pv_qp *qp;
	int ret, e;

	if (init->type != FAB_QPT_UD) {
		fab_fail(err, errlen, EINVAL,
			 "verbs: only UD queue pairs are supported");
		return NULL;
	}
	ret = ibv_query_port(dev->ctx, dev->port, &pa);
	if (ret) {
		pv_fail(err, errlen, "ibv_query_port", ret);
		return NULL;
	}

	qp = calloc(1, sizeof(*qp));
	if (!qp) {
		fab_fail(err, errlen, ENOMEM, "verbs: %s", strerror(ENOMEM));
		return NULL;
	}
	qp->dev = dev;
	qp->nsend = init->max_send ? init->max_send : PV_DEFAULT_SEND;
	qp->nrecv = init->max_recv ? init->max_recv : PV_DEFAULT_RECV;
	if (qp->nsend > INT32_MAX || qp->nrecv > INT32_MAX) {
		fab_fail(err, errlen, EINVAL, "verbs: queue depth too large");
		goto fail;
	}

	if (pv_qp_buffers(qp, &pa, err, errlen) < 0 ||
	    pv_qp_queues(qp, err, errlen) < 0 ||
	    pv_qp_to_rts(qp, init, err, errlen) < 0)
		goto fail;

	qp->base.dev = base;
	qp->base.qpn = qp->qp->qp_num;
	qp->base.type = init->type;
	qp->base.qkey = init->qkey;
	qp->base.pkey_index = init->pkey_index;
	return &qp->base;
fail:
	e = errno;
	pv_qp_destroy(&qp->base);
	errno = e;
	return NULL;
}

static int pv_qp_fd(struct fab_qp *base)
{
	if (base->type == FAB_QPT_RC)
		return pv_rc_qp_fd(base);
	return pv_qp_of(base)->channel->fd;
}

/* Collect send completions so their slots can be reused. */
static int pv_send_reap(struct pv_qp *qp)
{
	struct ibv_wc wc[PV_BATCH];
	int got, i;

	do {
		got = ibv_poll_cq(qp->send_cq, PV_BATCH, wc);
		if (got < 0)
			return pv_fail(NULL, 0, "ibv_poll_cq (send)", got);
		for (i = 0; i < got; i++) {
			if (wc[i].status != IBV_WC_SUCCESS)
				qp->send_errors++;
			if (qp->send_inflight)
				qp->send_inflight--;
		}
	} while (got == PV_BATCH);
	return 0;
}

/* 0 if w can be posted on qp, else -1 with errno: EMSGSIZE for more than
 * the port MTU, EINVAL without an address handle of this device or from
 * NULL. */
static int pv_send_check(const struct pv_qp *qp, const struct fab_send_wr *w)
{
	if (!w->ah || w->ah->dev != qp->base.dev || (!w->buf && w->len)) {
		errno = EINVAL;
		return -1;
	}
	if (w->len > qp->send_slot) {
		errno = EMSGSIZE;
		return -1;
	}
	return 0;
}

static void pv_send_wr(struct pv_qp *qp, const struct fab_send_wr *w,
		       uint32_t slot, struct ibv_send_wr *s,
		       struct ibv_sge *sge)
{
	memset(s, 0, sizeof(*s));
	s->wr_id = slot;
	s->opcode = IBV_WR_SEND;
	s->send_flags = IBV_SEND_SIGNALED;
	s->sg_list = sge;
	s->num_sge = 1;
	s->wr.ud.ah = ((const struct pv_ah *)w->ah)->ah;
	s->wr.ud.remote_qpn = w->remote_qpn;
	s->wr.ud.remote_qkey = w->remote_qkey;
	sge->length = w->len;
	sge->lkey = qp->mr->lkey;
	if (w->len <= qp->max_inline) {
		/* The HCA copies inline data at post time. */
		s->send_flags |= IBV_SEND_INLINE;
		sge->addr = (uintptr_t)w->buf;
	} else {
		uint8_t *dst = pv_send_addr(qp, slot);

		if (w->len)
			memcpy(dst, w->buf, w->len);
		sge->addr = (uintptr_t)dst;
	}
}

static int pv_qp_send(struct fab_qp *base, const struct fab_send_wr *wr,
		      int n)
{
	struct pv_qp *qp = pv_qp_of(base);
	struct ibv_send_wr wrs[PV_BATCH], *bad;
	struct ibv_sge sges[PV_BATCH];
	int done = 0;

	if (base->type != FAB_QPT_UD) {
		errno = EINVAL;	/* RC: fab_qp_post_send */
		return -1;
	}

	if (n <= 0)
		return 0;
	if (pv_send_reap(qp) < 0)
		return -1;

	while (done < n) {
		uint32_t slot = qp->send_next;
		int k = 0, i, ret;

		while (done + k < n && k < PV_BATCH &&
		       qp->send_inflight + (uint32_t)k < qp->nsend) {
			if (pv_send_check(qp, &wr[done + k]) < 0) {
				if (done + k == 0)
					return -1;
				break;	/* reported on the next call */
			}
			pv_send_wr(qp, &wr[done + k], slot, &wrs[k],
				   &sges[k]);
			slot = (slot + 1) % qp->nsend;
			k++;
		}
		if (k == 0)
			break;	/* ring full, or a bad request after good */
		for (i = 0; i + 1 < k; i++)
			wrs[i].next = &wrs[i + 1];
		wrs[k - 1].next = NULL;

		bad = NULL;
		ret = ibv_post_send(qp->qp, wrs, &bad);
		if (ret)
			k = bad ? (int)(bad - wrs) : 0;
		qp->send_next = (qp->send_next + (uint32_t)k) % qp->nsend;
		qp->send_inflight += (uint32_t)k;
		done += k;
		if (ret) {
			if (done == 0)
				return pv_fail(NULL, 0, "ibv_post_send", ret);
			break;
		}
	}
	return done;
}

static void pv_fill_recv(const struct pv_qp *qp, const struct ibv_wc *wc,
			 struct fab_recv *rc)
{
	const uint8_t *src = pv_recv_addr(qp, (uint32_t)wc->wr_id);
	uint32_t len = wc->byte_len;
	uint32_t copy = len < rc->buf_len ? len : rc->buf_len;

	if (copy)
		memcpy(rc->buf, src, copy);
	rc->grh_present = (wc->wc_flags & IBV_WC_GRH) != 0;
	if (!rc->grh_present && copy) {
		/* The slot holds an older datagram's GRH: do not pass it on. */
		memset(rc->buf, 0, copy < FAB_GRH_LEN ? copy : FAB_GRH_LEN);
	}
	rc->byte_len = len;
	rc->truncated = len > rc->buf_len;
	rc->src_qp = wc->src_qp;
	rc->slid = wc->slid;
	rc->pkey_index = wc->pkey_index;
	rc->sl = wc->sl;
}

/* Fill up to n from the receive CQ until it is empty; 0..n or -1. */
static int pv_recv_poll(struct pv_qp *qp, struct fab_recv *rc, int n)
{
	struct ibv_wc wc[PV_BATCH];
	struct ibv_recv_wr wrs[PV_BATCH];
	struct ibv_sge sges[PV_BATCH];
	int filled = 0;

	while (filled < n) {
		int want = n - filled < PV_BATCH ? n - filled : PV_BATCH;
		unsigned int repost = 0;
		int got, i;

		got = ibv_poll_cq(qp->recv_cq, want, wc);
		if (got < 0)
			return pv_fail(NULL, 0, "ibv_poll_cq (recv)", got);
		for (i = 0; i < got; i++) {
			uint32_t slot = (uint32_t)wc[i].wr_id;

			qp->recv_posted--;
			if (slot >= qp->nrecv) {
				qp->recv_errors++;	/* cannot happen */
				continue;
			}
			if (wc[i].status != IBV_WC_SUCCESS) {
				qp->recv_errors++;
				/* Flushed: the QP is in error; reposting
				 * would only flush again. */
				if (wc[i].status == IBV_WC_WR_FLUSH_ERR)
					continue;
			} else {
				pv_fill_recv(qp, &wc[i], &rc[filled++]);
			}
			pv_recv_wr(qp, slot, &wrs[repost], &sges[repost]);
			repost++;
		}
		if (pv_post_recv_chain(qp, wrs, repost, NULL, 0) < 0)
			return filled ? filled : -1;
		if (got < want)
			break;
	}
	return filled;
}

static int pv_qp_recv(struct fab_qp *base, struct fab_recv *rc, int n)
{
	struct pv_qp *qp = pv_qp_of(base);
	struct ibv_cq *ev_cq;
	void *ev_ctx;
	int got, ret;

	if (base->type != FAB_QPT_UD) {
		errno = EINVAL;		/* RC: fab_qp_poll */
		return -1;
	}
	if (n <= 0)
		return 0;
	got = pv_recv_poll(qp, rc, n);
	if (got < 0 || got == n)
		return got;

	/*
	 * Drained (as pv_rc_poll): no event on the channel, the CQ is
	 * still armed; an event: consume it so the fd stops being
	 * readable, re-arm, and poll once more, because a completion that
	 * arrived before the re-arm raises no event.
	 */
	if (ibv_get_cq_event(qp->channel, &ev_cq, &ev_ctx) != 0) {
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return pv_fail_null(NULL, 0, "ibv_get_cq_event");
		return got;
	}
	ibv_ack_cq_events(ev_cq, 1);
	ret = ibv_req_notify_cq(qp->recv_cq, 0);
	if (ret)
		return pv_fail(NULL, 0, "ibv_req_notify_cq", ret);
	ret = pv_recv_poll(qp, rc + got, n - got);
	return ret < 0 ? (got ? got : ret) : got + ret;
}

/*
 * RoCE: hold the MGID's IP multicast group on the source GID's netdev
 * with a socket of our own, as rdma_cm's RoCE join does.  Without it the
 * IP layer drops the group's datagrams before the RoCE device sees them
 * (rdma_rxe), and IGMP/MLD snooping switches never forward them.
 */
static int pv_ip_join(const struct pv_qp *qp, const union fab_gid *mgid,
		      char *err, size_t errlen)
{
	const struct pv_dev *dev = qp->dev;
	union ibv_gid g;
	int fd, ret;

	memcpy(g.raw, mgid->raw, sizeof(g.raw));
	if (pv_gid_v4mapped(&g)) {
		struct ip_mreqn mr;

		memset(&mr, 0, sizeof(mr));
		memcpy(&mr.imr_multiaddr.s_addr, mgid->raw + 12, 4);
		mr.imr_ifindex = (int)dev->sgid_ifindex;
		fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return pv_fail_null(err, errlen, "socket (IPv4 join)");
		ret = setsockopt(fd, IPPROTO_IP, IP_ADD_MEMBERSHIP, &mr,
				 sizeof(mr));
	} else {
		struct ipv6_mreq mr;

		memset(&mr, 0, sizeof(mr));
		memcpy(mr.ipv6mr_multiaddr.s6_addr, mgid->raw, 16);
		mr.ipv6mr_interface = dev->sgid_ifindex;
		fd = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return pv_fail_null(err, errlen, "socket (IPv6 join)");
		ret = setsockopt(fd, IPPROTO_IPV6, IPV6_JOIN_GROUP, &mr,
				 sizeof(mr));
	}
	if (ret < 0) {
		int e = errno;

		close(fd);
		errno = e;
		return pv_fail_null(err, errlen, "IP multicast join of the "
				    "MGID");
	}
	return fd;
}

static struct pv_mc **pv_mc_find(struct pv_qp *qp, const union fab_gid *mgid)
{
	struct pv_mc **p;

	for (p = &qp->mcs; *p; p = &(*p)->next) {
		if (!memcmp((*p)->mgid.raw, mgid->raw, sizeof(mgid->raw)))
			break;
	}
	return p;
}

static int pv_mcast(struct fab_qp *base, const union fab_gid *mgid,
		    uint16_t mlid, int attach, char *err, size_t errlen)
{
	struct pv_qp *qp = pv_qp_of(base);
	int roce = qp->dev->link_layer == FAB_LINK_ETHERNET;
	struct pv_mc **at = NULL, *mc = NULL;
	union ibv_gid gid;
	int ret;

	if (roce) {
		at = pv_mc_find(qp, mgid);
		if (attach && !*at) {
			mc = calloc(1, sizeof(*mc));
			if (!mc)
				return fab_fail(err, errlen, ENOMEM,
						"verbs: %s", strerror(ENOMEM));
			mc->mgid = *mgid;
			mc->fd = pv_ip_join(qp, mgid, err, errlen);
			if (mc->fd < 0) {
				free(mc);
				return -1;
			}
		}
	}
	memcpy(gid.raw, mgid->raw, sizeof(gid.raw));
	if (attach)
		ret = ibv_attach_mcast(qp->qp, &gid, mlid);
	else
		ret = ibv_detach_mcast(qp->qp, &gid, mlid);
	if (ret) {
		if (mc) {
			close(mc->fd);
			free(mc);
		}
		return pv_fail(err, errlen, attach ? "ibv_attach_mcast" :
			       "ibv_detach_mcast", ret);
	}
	if (mc) {
		*at = mc;	/* at the end of the list */
	} else if (roce && !attach && *at) {
		mc = *at;
		*at = mc->next;
		close(mc->fd);
		free(mc);
	}
	return 0;
}

static int pv_attach(struct fab_qp *base, const union fab_gid *mgid,
		     uint16_t mlid, char *err, size_t errlen)
{
	return pv_mcast(base, mgid, mlid, 1, err, errlen);
}

static int pv_detach(struct fab_qp *base, const union fab_gid *mgid,
		     uint16_t mlid, char *err, size_t errlen)
{
	return pv_mcast(base, mgid, mlid, 0, err, errlen);
}

/* ---- address handles ---------------------------------------------------- */

/*
 * RoCE v2 puts the GIDs in an IP header: an IPv4-mapped source reaches
 * IPv4-mapped destinations only, an IPv6 source IPv6 ones (the kernel
 * would take the wrong four bytes for an address, not refuse).  Checked
 * for the port's own source GID; an explicit index is the caller's.
 */
static int pv_ah_family_check(const struct pv_dev *dev,
			      const struct fab_ah_attr *attr, char *err,
			      size_t errlen)
{
	union ibv_gid s, d;
	char ss[64], ds[64];

	if (attr->use_sgid_index || dev->sgid_type != FAB_GID_ROCE_V2)
		return 0;
	memcpy(s.raw, dev->sgid.raw, sizeof(s.raw));
	memcpy(d.raw, attr->dgid.raw, sizeof(d.raw));
	if (pv_gid_v4mapped(&s) == pv_gid_v4mapped(&d))
		return 0;
	fab_gid_to_str(&dev->sgid, ss, sizeof(ss));
	fab_gid_to_str(&attr->dgid, ds, sizeof(ds));
	return fab_fail(err, errlen, EAFNOSUPPORT, "verbs: source GID %s "
			"(RoCE v2 over %s) cannot reach %s: choose a GID of "
			"the other family (verbs:%s:%u:%s)", ss,
			pv_gid_v4mapped(&s) ? "IPv4" : "IPv6", ds, dev->name,
			dev->port, pv_gid_v4mapped(&s) ? "ipv6" : "ipv4");
}

static struct fab_ah *pv_ah_create(struct fab_dev *base,
				   const struct fab_ah_attr *attr, char *err,
				   size_t errlen)
{
	struct pv_dev *dev = pv_dev_of(base);
	struct ibv_ah_attr a;
	struct pv_ah *ah;

	memset(&a, 0, sizeof(a));
	a.dlid = attr->dlid;
	a.sl = attr->sl;
	a.static_rate = attr->static_rate;
	a.port_num = dev->port;
	a.is_global = attr->is_global ? 1 : 0;
	if (dev->link_layer == FAB_LINK_ETHERNET) {
		/* RoCE: the GRH is the address (IP header on RoCE v2) */
		if (!a.is_global) {
			fab_fail(err, errlen, EINVAL, "verbs: %s port %u is "
				 "RoCE (Ethernet link layer): an address "
				 "handle needs a destination GID, not a LID",
				 dev->name, dev->port);
			return NULL;
		}
		if (pv_ah_family_check(dev, attr, err, errlen) < 0)
			return NULL;
		a.dlid = 0;
	}
	if (a.is_global) {
		memcpy(a.grh.dgid.raw, attr->dgid.raw, sizeof(a.grh.dgid.raw));
		a.grh.flow_label = attr->flow_label;
		a.grh.sgid_index = attr->use_sgid_index ? attr->sgid_index :
				   dev->sgid_index;
		a.grh.hop_limit = attr->hop_limit;
		if (!a.grh.hop_limit && dev->link_layer == FAB_LINK_ETHERNET)
			a.grh.hop_limit = PV_ROCE_HOP_LIMIT;
		a.grh.traffic_class = attr->traffic_class;
	}

	ah = calloc(1, sizeof(*ah));
	if (!ah) {
		fab_fail(err, errlen, ENOMEM, "verbs: %s", strerror(ENOMEM));
		return NULL;
	}
	ah->ah = ibv_create_ah(dev->pd, &a);
	if (!ah->ah) {
		pv_fail_null(err, errlen, "ibv_create_ah");
		free(ah);
		return NULL;
	}
	ah->base.dev = base;
	ah->base.attr = *attr;
	return &ah->base;
}

static void pv_ah_destroy(struct fab_ah *base)
{
	struct pv_ah *ah = (struct pv_ah *)base;

	if (!ah)
		return;
	ibv_destroy_ah(ah->ah);
	free(ah);
}

/* ---- MAD agents --------------------------------------------------------- */

/* QP1 of this port through its umad device (libibumad, prov_umad.c). */
static struct fab_mad_agent *pv_mad_open(struct fab_dev *base,
					 uint8_t mgmt_class, char *err,
					 size_t errlen)
{
	struct pv_dev *dev = pv_dev_of(base);

	return fab_umad_agent_open(base, ibv_get_device_name(dev->ctx->device),
				   dev->port, mgmt_class, err, errlen);
}

const struct fab_provider fab_verbs_provider = {
	.name = "verbs",
	.open = pv_open,
	.close = pv_close,
	.query_port = pv_query_port,
	.dev_fd = pv_dev_fd,
	.get_event = pv_get_event,
	.qp_create = pv_qp_create,
	.qp_destroy = pv_qp_destroy,
	.qp_fd = pv_qp_fd,
	.qp_send = pv_qp_send,
	.qp_recv = pv_qp_recv,
	.attach = pv_attach,
	.detach = pv_detach,
	.ah_create = pv_ah_create,
	.ah_destroy = pv_ah_destroy,
	.mad_open = pv_mad_open,
	.mad_close = fab_umad_agent_close,
	.mad_fd = fab_umad_agent_fd,
	.mad_send = fab_umad_agent_send,
	.mad_recv = fab_umad_agent_recv,
	.mr_reg = pv_mr_reg,
	.mr_dereg = pv_mr_dereg,
	.qp_post_send = pv_rc_post_send,
	.qp_post_recv = pv_rc_post_recv,
	.qp_poll = pv_rc_poll,
	.qp_set_error = pv_rc_set_error,
	.cm_fd = pv_cm_fd,
	.cm_get_event = pv_cm_get_event,
	.cm_listen = pv_cm_listen,
	.cm_create_id = pv_cm_create_id,
	.cm_qp_create = pv_cm_qp_create,
	.cm_connect = pv_cm_connect,
	.cm_accept = pv_cm_accept,
	.cm_reject = pv_cm_reject,
	.cm_disconnect = pv_cm_disconnect,
	.cm_destroy = pv_cm_destroy,
};

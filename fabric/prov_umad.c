// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The umad provider: "umad:DEVICE[:PORT]", MADs only, through rdma-core's
 * libibumad (44).  It is what an SA client needs and nothing more: the
 * port's attributes from sysfs and MAD agents on the port's GSI (QP1).
 * It has no queue pairs, address handles or multicast; those fail with a
 * message that points at verbs:.  Its reason to exist is ibsim: under the
 * umad2sim preload (LD_PRELOAD=.../umad2sim/libumad2sim.so SIM_HOST=node)
 * libibumad talks to the simulator, where verbs cannot run at all.
 *
 * The MAD agent functions are also the verbs provider's mad ops
 * (prov_umad.h): a verbs port reaches its QP1 through the same umad device.
 *
 * What the layers underneath do, checked against rdma-core 44, Linux
 * drivers/infiniband/core/user_mad.c and mad.c, and umad2sim/ibsim 0.10:
 *
 *   TransactionID.  The kernel overwrites the high 32 bits of a request's
 *   TID with its agent's hi_tid and routes the response back by them.
 *   umad2sim puts its agent id into bits 32-47 and ibsim its client id
 *   into bits 48-63, for the same purpose.  Either way the response comes
 *   back with the rewritten TID; only the low 32 bits are the caller's.
 *
 *   Outstanding requests.  The kernel drops a response whose request is no
 *   longer outstanding, so requests (method without the response bit, and
 *   not TrapRepress) are sent with PU_REQ_TIMEOUT_MS and no retries.  A
 *   request still unanswered then comes back from read() with status
 *   ETIMEDOUT; fab_mad_recv skips it, callers keep their own timers.
 *   umad2sim ignores timeouts and delivers every response.
 *
 *   Method mask.  Agents register with none, as the kernel's own SA client
 *   does: they receive responses to their requests, never unsolicited
 *   requests (such as SA Report(Notice)).  umad2sim ignores the mask and
 *   routes every MAD of a class to that class's one agent in the process.
 *
 *   Serving.  fab_mad_register() agents give the kernel a method mask, and
 *   it routes requests (unsolicited MADs) of the class version by method to
 *   the one agent per port that registered it, or, for a Get or Set nobody
 *   took, answers itself with status 0x000c (unsupported method/attribute;
 *   mad.c's generate_unmatched_resp()).  A method already taken -- the CM
 *   class's Send by the kernel's ib_cm, loaded with rdma_cm -- makes the
 *   registration fail with EINVAL.  libibumad's umad_register() returns
 *   -EPERM for every failure; the ioctl's errno is the real reason.
 *
 *   CM class.  The kernel drops, on receipt and silently, a CM MAD (class
 *   0x07) whose method is not Send unless its attribute is ClassPortInfo
 *   (mad.c's validate_mad()): CM messages are all Sends.
 *
 *   RoCE (Soft-RoCE rdma_rxe, seen on Linux 6.1 with ib_umad loaded): the
 *   port has a umad device and a GSI, so GSI classes work between RoCE
 *   ports, with a GRH on every MAD: the kernel refuses to send one without
 *   (write() fails with EINVAL: rdma_check_ah_attr()), and received ones
 *   carry it (fab_mad_addr's GRH fields).  LIDs are 0.  There is no QP0
 *   (registering SMP classes fails; smpquery says "client_register for
 *   mgmt 1 failed"), no subnet manager and so no SA: an SA agent on an
 *   Ethernet port is refused here with EOPNOTSUPP rather than left to time
 *   out.  Between IPv4 GIDs (::ffff:a.b.c.d, RoCE v2) a response never
 *   reaches its requester: the receive's GRH slot holds the IPv4 header,
 *   and mad.c's rcv_has_same_gid() compares it as a GRH's DGID with the
 *   request's SGID.  Requests (Send, as all CM messages are) get through;
 *   Get/GetResp pairs need IPv6 GIDs, such as the fe80:: one at index 0.
 *
 *   umad2sim limits (seen with ibsim 0.10 and OpenSM 3.3.23):
 *   - its umad "file descriptors" are numbers >= 1024 that only its own
 *     poll() wrapper understands, so fab_mad_fd() can go to poll() (alone
 *     in the set: the wrapper ignores every other descriptor in it) but
 *     not to select, epoll or libevent;
 *   - one agent per management class per process, 8 umad opens per
 *     process; by its source, a MAD of a class with no agent (a late
 *     response after fab_mad_close) is a NULL dereference in its
 *     receiver thread (ibsim only forwards requests to the SM's node);
 *   - received MADs carry only LID and QPN: Q_Key and SL are 0 and the
 *     P_Key index is whatever its malloc'ed buffer held;
 *   - bytes 224-255 of every received MAD are garbage: its read() copies
 *     64 + 256 bytes out of a 288-byte buffer (ASan reports the overread
 *     from its memcpy interceptor).  A single SA record ends before;
 *     the third PathRecord of a GetTableResp does not;
 *   - the sysfs it fakes (./sys-<pid>) is written once, when the process
 *     first touches sysfs or /dev/infiniband, so fab_query_port() shows
 *     the port as it was then: start clients after "SUBNET UP".
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <infiniband/umad.h>

#include "fabric/fabric_prov.h"
#include "fabric/prov_umad.h"

#define PU_MAD_LEN		256
#define PU_MAD_HDR_LEN		24
#define PU_REQ_TIMEOUT_MS	2000
#define PU_CLASS_SUBN_LID	0x01	/* SMPs: QP0, not for agents here */
#define PU_CLASS_SUBN_DR	0x81
#define PU_CLASS_SUBN_ADM	0x03
#define PU_CLASS_CM		0x07
#define PU_DEFAULT_HOP_LIMIT	64
#define PU_LONG_BITS		(8 * sizeof(long))
#define PU_METHOD_TRAP_REPRESS	0x07
/*
 * The active MTU a umad port reports.  There is nowhere to read it from:
 * the kernel's sysfs port directory has no MTU attribute (verbs gets it
 * from the driver), and neither has umad2sim's copy.  An SMP PortInfo
 * query would need a QP0 agent, far more than this provider is for.  4
 * (2048) is what ibsim's ports have (NeighborMTU and MtuCap 2048 in
 * `smpquery portinfo`) and the MTU of OpenSM's default IPoIB broadcast
 * group.  Nothing is sized by it here: this provider sends no datagrams,
 * and an SA client takes MTUs from the SA's records.
 */
#define PU_ACTIVE_MTU		4

struct pu_dev {
	struct fab_dev base;
	char ca[UMAD_CA_NAME_LEN];
	uint8_t port;
	int evfd;	/* dev_fd: never readable, no port events here */
};

struct pu_agent {
	struct fab_mad_agent base;
	int fd;		/* umad port; a fake number >= 1024 under umad2sim */
	int id;		/* agent id from umad_register */
	uint8_t *umad;	/* struct ib_user_mad + one MAD, for send and recv */
	uint64_t unanswered;	/* requests returned with a status */
};

static struct pu_dev *pu_dev_of(struct fab_dev *dev)
{
	return (struct pu_dev *)dev;
}

static struct pu_agent *pu_agent_of(struct fab_mad_agent *agent)
{
	return (struct pu_agent *)agent;
}

/* libibumad returns -errno from most calls and sets errno as well. */
static int pu_fail(char *err, size_t errlen, const char *call, int ret)
{
	int e = ret < -1 ? -ret : (errno ? errno : EIO);

	return fab_fail(err, errlen, e, "umad: %s: %s", call, strerror(e));
}

/*
 * umad_init() no longer checks anything (rdma-core 44 returns 0 without
 * any sysfs), so look for the ABI file ourselves.  Through open(), which
 * umad2sim redirects to its ./sys-<pid> copy (access() it does not).
 */
static int pu_init(char *err, size_t errlen)
{
	int fd = open(IB_UMAD_ABI_DIR "/" IB_UMAD_ABI_FILE, O_RDONLY);

	if (fd < 0)
		return fab_fail(err, errlen, errno, "umad: %s/%s: %s: no "
				"ib_umad module (or, for ibsim, no umad2sim "
				"preload)", IB_UMAD_ABI_DIR, IB_UMAD_ABI_FILE,
				strerror(errno));
	close(fd);
	umad_init();
	return 0;
}

static int pu_no_port(const char *ca, uint8_t port, int ret, char *err,
		      size_t errlen)
{
	char names[UMAD_MAX_DEVICES][UMAD_CA_NAME_LEN];
	char list[160] = "";
	size_t used = 0;
	int n, i;

	n = umad_get_cas_names(names, UMAD_MAX_DEVICES);
	for (i = 0; i < n && used < sizeof(list); i++)
		used += (size_t)snprintf(list + used, sizeof(list) - used,
					 "%s%.*s", i ? ", " : "",
					 UMAD_CA_NAME_LEN, names[i]);
	return fab_fail(err, errlen, -ret, "umad: no port %u on device \"%s\" "
			"(%s; devices: %s)", port, ca, strerror(-ret),
			n > 0 ? list : "none");
}

static enum fab_port_state pu_port_state(unsigned int st)
{
	switch (st) {
	case 2:
		return FAB_PORT_INIT;
	case 3:
		return FAB_PORT_ARMED;
	case 4:
		return FAB_PORT_ACTIVE;
	case 5:	/* ACTIVE_DEFER: link up but not forwarding data */
		return FAB_PORT_ARMED;
	default:
		return FAB_PORT_DOWN;
	}
}

/* The type of a RoCE port's GID 0 (sysfs gid_attrs/types/0: "RoCE v2" or
 * "IB/RoCE v1"); RoCE v2 when sysfs does not say. */
static enum fab_gid_type pu_gid0_type(const char *ca, unsigned int port)
{
	char path[256], buf[32] = "";
	FILE *f;

	snprintf(path, sizeof(path),
		 "/sys/class/infiniband/%s/ports/%u/gid_attrs/types/0", ca, port);
	f = fopen(path, "re");
	if (f) {
		if (!fgets(buf, sizeof(buf), f))
			buf[0] = 0;
		fclose(f);
	}
	return strstr(buf, "v1") ? FAB_GID_ROCE_V1 : FAB_GID_ROCE_V2;
}

/* sysfs says "InfiniBand"; umad2sim's copy of it "IB" */
static int pu_link_is_ib(const char *link_layer)
{
	return !strcmp(link_layer, "InfiniBand") || !strcmp(link_layer, "IB");
}

/* RoCE: Soft-RoCE, RoCE NICs */
static int pu_link_is_eth(const char *link_layer)
{
	return !strcmp(link_layer, "Ethernet");
}

/* ---- device ------------------------------------------------------------- */

static int pu_query_port(struct fab_dev *base, struct fab_port_attr *attr,
			 char *err, size_t errlen)
{
	struct pu_dev *dev = pu_dev_of(base);
	umad_port_t up;
	umad_ca_t uc;
	unsigned int i, n;
	int ret;

	memset(&up, 0, sizeof(up));
	ret = umad_get_port(dev->ca, dev->port, &up);
	if (ret < 0)
		return pu_no_port(dev->ca, dev->port, ret, err, errlen);
	if (!pu_link_is_ib(up.link_layer) && !pu_link_is_eth(up.link_layer)) {
		fab_fail(err, errlen, EOPNOTSUPP, "umad: %s port %u is neither "
			 "InfiniBand nor RoCE (%s)", dev->ca, dev->port,
			 up.link_layer);
		umad_release_port(&up);
		return -1;
	}

	memset(attr, 0, sizeof(*attr));
	attr->state = pu_port_state(up.state);
	attr->lid = (uint16_t)up.base_lid;
	attr->sm_lid = (uint16_t)up.sm_lid;
	attr->lmc = (uint8_t)up.lmc;
	attr->sm_sl = (uint8_t)up.sm_sl;
	attr->active_mtu = PU_ACTIVE_MTU;
	attr->port_num = dev->port;
	/* gids/0 split in two, both still in network order */
	memcpy(attr->gid.raw, &up.gid_prefix, 8);
	memcpy(attr->gid.raw + 8, &up.port_guid, 8);
	attr->port_guid = be64toh(up.port_guid);
	attr->sgid = attr->gid;		/* GID index 0 */
	if (pu_link_is_eth(up.link_layer)) {
		attr->link_layer = FAB_LINK_ETHERNET;
		attr->sgid_type = pu_gid0_type(dev->ca, dev->port);
	} else {
		attr->link_layer = FAB_LINK_IB;
		attr->sgid_type = FAB_GID_IB;
	}

	/* As in the verbs provider: entries keep their index (the P_Key
	 * index of a MAD), invalid keys are empty slots, npkeys ends after
	 * the last valid one. */
	n = up.pkeys_size < FAB_MAX_PKEYS ? up.pkeys_size : FAB_MAX_PKEYS;
	for (i = 0; i < n && up.pkeys; i++) {
		if ((up.pkeys[i] & 0x7fff) == 0)
			continue;
		attr->pkeys[i] = up.pkeys[i];
		attr->npkeys = i + 1;
	}
	umad_release_port(&up);

	/* The node GUID is a nicety: a port without it is still usable. */
	memset(&uc, 0, sizeof(uc));
	if (umad_get_ca(dev->ca, &uc) == 0) {
		attr->node_guid = be64toh(uc.node_guid);
		umad_release_ca(&uc);
	}
	return 0;
}

static void pu_close(struct fab_dev *base)
{
	struct pu_dev *dev = pu_dev_of(base);

	if (!dev)
		return;
	if (dev->evfd >= 0)
		close(dev->evfd);
	free(dev);
}

static struct fab_dev *pu_open(const char *arg, const char *node, char *err,
			       size_t errlen)
{
	struct fab_port_attr check;
	struct pu_dev *dev;
	int e;

	(void)node;	/* the port is the node (under ibsim: SIM_HOST) */
	dev = calloc(1, sizeof(*dev));
	if (!dev) {
		fab_fail(err, errlen, ENOMEM, "umad: %s", strerror(ENOMEM));
		return NULL;
	}
	dev->base.prov = &fab_umad_provider;
	dev->evfd = -1;
	if (fab_parse_dev_port("umad", arg, dev->ca, sizeof(dev->ca),
			       &dev->port, err, errlen) < 0 ||
	    pu_init(err, errlen) < 0 ||
	    pu_query_port(&dev->base, &check, err, errlen) < 0)
		goto fail;

	/*
	 * libibumad has no port events (the kernel reports them through
	 * verbs' async events only), but callers put fab_dev_fd() into
	 * their event loops unconditionally: give them an eventfd nobody
	 * ever writes.  Port changes are seen by calling fab_query_port().
	 */
	dev->evfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (dev->evfd < 0) {
		fab_fail(err, errlen, errno, "umad: eventfd: %s",
			 strerror(errno));
		goto fail;
	}
	return &dev->base;
fail:
	e = errno;
	pu_close(&dev->base);
	errno = e;
	return NULL;
}

static int pu_dev_fd(struct fab_dev *base)
{
	return pu_dev_of(base)->evfd;
}

static int pu_get_event(struct fab_dev *base, struct fab_event *ev)
{
	(void)base;
	(void)ev;
	return 0;
}

/* ---- no queue pairs ----------------------------------------------------- */

static int pu_no_qp(char *err, size_t errlen)
{
	return fab_fail(err, errlen, EOPNOTSUPP, "umad provider has no queue "
			"pairs: use verbs:DEVICE[:PORT] for datagrams");
}

static struct fab_qp *pu_qp_create(struct fab_dev *dev,
				   const struct fab_qp_init *init, char *err,
				   size_t errlen)
{
	(void)dev;
	(void)init;
	pu_no_qp(err, errlen);
	return NULL;
}

static void pu_qp_destroy(struct fab_qp *qp)
{
	(void)qp;	/* none was ever created */
}

static int pu_qp_fd(struct fab_qp *qp)
{
	(void)qp;
	return pu_no_qp(NULL, 0);
}

static int pu_qp_send(struct fab_qp *qp, const struct fab_send_wr *wr, int n)
{
	(void)qp;
	(void)wr;
	(void)n;
	return pu_no_qp(NULL, 0);
}

static int pu_qp_recv(struct fab_qp *qp, struct fab_recv *rc, int n)
{
	(void)qp;
	(void)rc;
	(void)n;
	return pu_no_qp(NULL, 0);
}

static int pu_mcast(struct fab_qp *qp, const union fab_gid *mgid,
		    uint16_t mlid, char *err, size_t errlen)
{
	(void)qp;
	(void)mgid;
	(void)mlid;
	return pu_no_qp(err, errlen);
}

static struct fab_ah *pu_ah_create(struct fab_dev *dev,
				   const struct fab_ah_attr *attr, char *err,
				   size_t errlen)
{
	(void)dev;
	(void)attr;
	pu_no_qp(err, errlen);
	return NULL;
}

static void pu_ah_destroy(struct fab_ah *ah)
{
	(void)ah;
}

/* ---- MAD agents (shared with the verbs provider) ------------------------ */

/* An SA agent on a RoCE port could only time out: there is no SM. */
static int pu_check_class(const char *ca_name, uint8_t port,
			  uint8_t mgmt_class, char *err, size_t errlen)
{
	umad_port_t up;
	int roce;

	if (mgmt_class == PU_CLASS_SUBN_LID ||
	    mgmt_class == PU_CLASS_SUBN_DR)
		return fab_fail(err, errlen, EINVAL, "umad: class 0x%02x is "
				"for SMPs on QP0, not for a GSI agent",
				mgmt_class);
	if (mgmt_class != PU_CLASS_SUBN_ADM)
		return 0;
	memset(&up, 0, sizeof(up));
	if (umad_get_port(ca_name, port, &up) < 0)
		return 0;	/* umad_open_port() will say what is wrong */
	roce = pu_link_is_eth(up.link_layer);
	umad_release_port(&up);
	if (roce)
		return fab_fail(err, errlen, EOPNOTSUPP, "umad: %s port %u is "
				"RoCE (link layer Ethernet): no subnet "
				"manager, so no SA", ca_name, port);
	return 0;
}

static uint8_t pu_class_version(const struct fab_mad_reg *reg)
{
	if (reg->class_version)
		return reg->class_version;
	return reg->mgmt_class == PU_CLASS_SUBN_ADM ||
	       reg->mgmt_class == PU_CLASS_CM ? 2 : 1;
}

/* fab_mad_reg's methods as the kernel's bitmap of longs */
static void pu_method_mask(const struct fab_mad_reg *reg,
			   long mask[16 / sizeof(long)])
{
	unsigned int m;

	memset(mask, 0, 16);
	for (m = 0; m < 128; m++)
		if (reg->methods[m / 64] >> (m % 64) & 1)
			mask[m / PU_LONG_BITS] |=
				(long)(1UL << (m % PU_LONG_BITS));
}

struct fab_mad_agent *fab_umad_agent_open(struct fab_dev *dev,
					  const char *ca_name, uint8_t port,
					  uint8_t mgmt_class, char *err,
					  size_t errlen)
{
	struct fab_mad_reg reg = { .mgmt_class = mgmt_class };

	return fab_umad_agent_register(dev, ca_name, port, &reg, err, errlen);
}

struct fab_mad_agent *fab_umad_agent_register(struct fab_dev *dev,
					      const char *ca_name,
					      uint8_t port,
					      const struct fab_mad_reg *reg,
					      char *err, size_t errlen)
{
	long mask[16 / sizeof(long)];
	uint8_t version = pu_class_version(reg);
	struct pu_agent *a;
	int ret, e;

	if (pu_check_class(ca_name, port, reg->mgmt_class, err, errlen) < 0 ||
	    pu_init(err, errlen) < 0)
		return NULL;
	a = calloc(1, sizeof(*a));
	if (!a) {
		fab_fail(err, errlen, ENOMEM, "umad: %s", strerror(ENOMEM));
		return NULL;
	}
	a->fd = -1;
	a->id = -1;
	/* Not umad_size(): it is 8 bytes less until umad_open_port() has
	 * found that the kernel takes P_Key indexes (libibumad's global
	 * new_user_mad_api), and then it grows. */
	a->umad = calloc(1, sizeof(struct ib_user_mad) + PU_MAD_LEN);
	if (!a->umad) {
		fab_fail(err, errlen, ENOMEM, "umad: %s", strerror(ENOMEM));
		goto fail;
	}

	ret = umad_open_port(ca_name, port);
	if (ret < 0) {
		pu_fail(err, errlen, "umad_open_port", ret);
		goto fail;
	}
	a->fd = ret;
	/* No RMPP: segments arrive one by one. */
	pu_method_mask(reg, mask);
	errno = 0;
	ret = umad_register(a->fd, reg->mgmt_class, version, 0, mask);
	if (ret < 0) {
		e = errno ? errno : EIO;
		fab_fail(err, errlen, e, "umad: cannot register an agent for "
			 "class 0x%02x version %u on %s port %u: %s%s",
			 reg->mgmt_class, version, ca_name, port, strerror(e),
			 e == EINVAL && (reg->methods[0] || reg->methods[1]) ?
			 " (another agent, such as the kernel's ib_cm, serves "
			 "one of those methods?)" : "");
		goto fail;
	}
	a->id = ret;
	a->base.dev = dev;
	a->base.mgmt_class = reg->mgmt_class;
	return &a->base;
fail:
	e = errno;
	fab_umad_agent_close(&a->base);
	errno = e;
	return NULL;
}

void fab_umad_agent_close(struct fab_mad_agent *base)
{
	struct pu_agent *a = pu_agent_of(base);

	if (!a)
		return;
	if (a->id >= 0)
		umad_unregister(a->fd, a->id);
	if (a->fd >= 0)
		umad_close_port(a->fd);
	free(a->umad);
	free(a);
}

int fab_umad_agent_fd(struct fab_mad_agent *base)
{
	return umad_get_fd(pu_agent_of(base)->fd);
}

/* As the kernel's ib_response_mad() (the BM class's special case aside). */
static int pu_is_response(const uint8_t *mad)
{
	return (mad[3] & 0x80) || mad[3] == PU_METHOD_TRAP_REPRESS;
}

/* Not umad_set_grh(): it leaves gid_index alone. */
static void pu_set_grh(ib_mad_addr_t *ma, const struct fab_mad_addr *to)
{
	ma->grh_present = 1;
	ma->gid_index = to->sgid_index;
	ma->hop_limit = to->hop_limit ? to->hop_limit : PU_DEFAULT_HOP_LIMIT;
	ma->traffic_class = to->traffic_class;
	ma->flow_label = htobe32(to->flow_label & 0xfffff);
	memcpy(ma->gid, to->gid.raw, sizeof(ma->gid));
}

/* As the kernel fills it from the receive's GRH (user_mad.c): gid is the
 * sender's, gid_index the entry of ours it was sent to. */
static void pu_get_grh(const ib_mad_addr_t *ma, struct fab_mad_addr *from)
{
	from->grh_present = 1;
	from->sgid_index = ma->gid_index;
	from->hop_limit = ma->hop_limit;
	from->traffic_class = ma->traffic_class;
	from->flow_label = be32toh(ma->flow_label) & 0xfffff;
	memcpy(from->gid.raw, ma->gid, sizeof(from->gid.raw));
}

int fab_umad_agent_send(struct fab_mad_agent *base,
			const struct fab_mad_addr *to, const void *mad,
			size_t len)
{
	struct pu_agent *a = pu_agent_of(base);
	int ret;

	if (len != PU_MAD_LEN) {
		errno = EINVAL;
		return -1;
	}
	memset(a->umad, 0, umad_size());
	memcpy(umad_get_mad(a->umad), mad, len);
	/* umad_set_addr() takes the 32-bit Q_Key as an int; the _net
	 * variant takes it as it goes into the struct. */
	umad_set_addr_net(a->umad, htobe16(to->lid), htobe32(to->qpn),
			  to->sl, htobe32(to->qkey));
	umad_set_pkey(a->umad, to->pkey_index);
	if (to->grh_present)
		pu_set_grh(umad_get_mad_addr(a->umad), to);
	/* umad_send() returns -EIO for every failure; write()'s errno says
	 * why (EINVAL: no GRH on RoCE, a bad GID index ...). */
	ret = umad_send(a->fd, a->id, a->umad, (int)len,
			pu_is_response(mad) ? 0 : PU_REQ_TIMEOUT_MS, 0);
	if (ret < 0) {
		if (!errno)
			errno = EIO;
		return -1;
	}
	return 0;
}

int fab_umad_agent_recv(struct fab_mad_agent *base, void *buf, size_t cap,
			struct fab_mad_addr *from)
{
	struct pu_agent *a = pu_agent_of(base);

	if (cap < PU_MAD_LEN) {	/* a MAD needs 256 bytes */
		errno = EINVAL;
		return -1;
	}
	for (;;) {
		const ib_mad_addr_t *ma;
		int len = PU_MAD_LEN;
		int ret;

		ret = umad_recv(a->fd, a->umad, &len, 0);
		/* Nothing pending: -EAGAIN from the kernel's non-blocking
		 * read, -EWOULDBLOCK (the same on Linux) from umad2sim. */
		if (ret == -EAGAIN || ret == -EWOULDBLOCK)
			return 0;
		if (ret < 0)
			return pu_fail(NULL, 0, "umad_recv", ret);
		if (umad_status(a->umad)) {
			/* A request of ours, back unanswered (ETIMEDOUT). */
			a->unanswered++;
			continue;
		}
		if (len < PU_MAD_HDR_LEN || len > PU_MAD_LEN)
			continue;	/* cannot happen without RMPP */

		memcpy(buf, umad_get_mad(a->umad), (size_t)len);
		if (len < PU_MAD_LEN)
			memset((uint8_t *)buf + len, 0,
			       (size_t)(PU_MAD_LEN - len));
		if (!from)	/* the caller does not want the address */
			return PU_MAD_LEN;
		ma = umad_get_mad_addr(a->umad);
		memset(from, 0, sizeof(*from));
		from->lid = be16toh(ma->lid);
		from->qpn = be32toh(ma->qpn) & 0xffffff;
		/* The kernel's read() leaves the Q_Key 0 (user_mad.c reports
		 * QPN, LID, SL, path bits, P_Key index and GRH), as umad2sim
		 * does; GSI MADs all carry QP1's. */
		from->qkey = be32toh(ma->qkey) ? be32toh(ma->qkey) :
			     FAB_QP1_QKEY;
		from->sl = ma->sl;
		from->pkey_index = (uint16_t)umad_get_pkey(a->umad);
		if (ma->grh_present)
			pu_get_grh(ma, from);
		return PU_MAD_LEN;
	}
}

static struct fab_mad_agent *pu_mad_register(struct fab_dev *base,
					     const struct fab_mad_reg *reg,
					     char *err, size_t errlen)
{
	struct pu_dev *dev = pu_dev_of(base);

	return fab_umad_agent_register(base, dev->ca, dev->port, reg, err,
				       errlen);
}

static struct fab_mad_agent *pu_mad_open(struct fab_dev *base,
					 uint8_t mgmt_class, char *err,
					 size_t errlen)
{
	struct pu_dev *dev = pu_dev_of(base);

	return fab_umad_agent_open(base, dev->ca, dev->port, mgmt_class, err,
				   errlen);
}

const struct fab_provider fab_umad_provider = {
	.name = "umad",
	.open = pu_open,
	.close = pu_close,
	.query_port = pu_query_port,
	.dev_fd = pu_dev_fd,
	.get_event = pu_get_event,
	.qp_create = pu_qp_create,
	.qp_destroy = pu_qp_destroy,
	.qp_fd = pu_qp_fd,
	.qp_send = pu_qp_send,
	.qp_recv = pu_qp_recv,
	.attach = pu_mcast,
	.detach = pu_mcast,
	.ah_create = pu_ah_create,
	.ah_destroy = pu_ah_destroy,
	.mad_open = pu_mad_open,
	.mad_register = pu_mad_register,
	.mad_close = fab_umad_agent_close,
	.mad_fd = fab_umad_agent_fd,
	.mad_send = fab_umad_agent_send,
	.mad_recv = fab_umad_agent_recv,
};

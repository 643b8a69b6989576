/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * An in-memory fabric provider for unit tests, as net/rds has loop.c: one
 * port with a scriptable subnet administrator behind it and nothing else
 * on the wire.  The test sees every datagram sent and every SA request,
 * and injects datagrams and port events.  Registered as "mem" through
 * fab_provider_register(); open it with fab_open("mem:", NULL, err, errlen).
 *
 * Completion, MAD and event file descriptors are eventfds that stay
 * readable while something is queued, so libevent loops work unchanged.
 * The SA answers with the real codec (fabric/sa_mad.c).
 */
#ifndef IBGW_TESTS_PROV_MEM_H
#define IBGW_TESTS_PROV_MEM_H

#include <stddef.h>
#include <stdint.h>

#include "fabric/fabric.h"
#include "fabric/sa_mad.h"

#define MEM_LID		5
#define MEM_SM_LID	1
#define MEM_QKEY	0x00000b1bu	/* broadcast group Q_Key */
#define MEM_MTU		4		/* group MTU code: 2048 */
#define MEM_PKT_MAX	4200

/* A datagram the port sent. */
struct mem_pkt {
	struct fab_ah_attr ah;	/* the address handle it went through */
	uint32_t qpn, qkey;
	size_t len;
	uint8_t data[MEM_PKT_MAX];
};

/* An SA request the port sent, decoded. */
struct mem_sa_req {
	struct sa_hdr h;
	union {
		struct sa_mcmember mcm;
		struct sa_path path;
	} rec;
	int answered;
};

/* What the SA does with a request class (joins, path queries). */
enum mem_sa_mode {
	MEM_SA_ANSWER,		/* answer at once */
	MEM_SA_HOLD,		/* keep it until mem_sa_release() */
	MEM_SA_REFUSE,		/* answer with a failure status */
};

/* Register the provider (once per process; later calls do nothing). */
void mem_register(void);

/* Datagrams sent since the last mem_sent_clear(). */
unsigned int mem_sent_count(struct fab_dev *dev);
const struct mem_pkt *mem_sent(struct fab_dev *dev, unsigned int i);
void mem_sent_clear(struct fab_dev *dev);

/* A datagram (IPoIB header and payload) arriving on every queue pair of
 * the port from slid / src_qp. */
void mem_inject(struct fab_dev *dev, uint16_t slid, uint32_t src_qp,
		const void *data, size_t len);

/* Is mgid attached to a queue pair of the port? */
int mem_attached(struct fab_dev *dev, const union fab_gid *mgid);
/* Our QPN (the first queue pair made on the port), 0 if none. */
uint32_t mem_qpn(struct fab_dev *dev);
void mem_port_gid(union fab_gid *gid);

/* The SA.  Joins (MCMemberRecord Set) and path queries each follow their
 * mode; leaves are always answered.  Held requests are answered, in
 * order, by mem_sa_release(). */
void mem_sa_joins(struct fab_dev *dev, enum mem_sa_mode mode);
void mem_sa_paths(struct fab_dev *dev, enum mem_sa_mode mode);
void mem_sa_release(struct fab_dev *dev);
/* A port the SA knows a path to. */
void mem_sa_add_path(struct fab_dev *dev, const union fab_gid *gid,
		     uint16_t lid, uint8_t sl);
/* Paths to GIDs never added answered too (LID 0x100 | last GID byte). */
void mem_sa_any_path(struct fab_dev *dev, int on);
/* Address handles created and not yet destroyed. */
unsigned int mem_ah_live(struct fab_dev *dev);
/* The MLID the SA gave mgid, 0 if never joined. */
uint16_t mem_sa_mlid(struct fab_dev *dev, const union fab_gid *mgid);
/* Requests seen since the last clear; count of those with method and
 * attribute (and, if mgid is not NULL, that MGID in the record). */
unsigned int mem_sa_count(struct fab_dev *dev, uint8_t method, uint16_t attr,
			  const union fab_gid *mgid);
unsigned int mem_sa_nreq(struct fab_dev *dev);
const struct mem_sa_req *mem_sa_req(struct fab_dev *dev, unsigned int i);
void mem_sa_clear(struct fab_dev *dev);

/* A port event: PORT_ERR takes the port down, PORT_ACTIVE up (MADs are
 * lost while it is down); every type is queued for fab_get_event(). */
void mem_port_event(struct fab_dev *dev, enum fab_event_type type);
/* The port's P_Key table (what fab_query_port reads), as an SM sets it;
 * no event: send FAB_EV_PKEY_CHANGE with mem_port_event(). */
void mem_set_pkeys(struct fab_dev *dev, const uint16_t *pkeys,
		   unsigned int n);

#endif

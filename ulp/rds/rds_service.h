/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The host's RDS service: what the kernel's rds socket layer is to a
 * program, in user space, over an RDS endpoint (rds_ep.h).  It answers
 * libibgw_preload.so on the control socket (rds_ctl.h), holds the other
 * end of every program's RDS socket (a unix SOCK_SEQPACKET pair), keeps
 * the bindings (address, port) and moves datagrams between the pairs and
 * the endpoint.  ipoibd runs one per IB host, beside the SDP service.
 *
 * Owns: the sockets' names, buffers and queues, and the mapping of the
 * kernel's back-pressure onto the pair:
 *  - send: a message the endpoint refuses with ENOBUFS (the port is
 *    congested at its host) is held, and the socket's end is not read
 *    until the peer uncongests (or a retry timer fires): a blocking
 *    sender blocks, a non-blocking one sees EAGAIN (the kernel's answer
 *    is ENOBUFS).  The socket's end is not read either while the bytes
 *    not yet acknowledged by the peers exceed half the socket's sndbuf
 *    (the kernel's rds_sk_sndbuf);
 *  - receive: a datagram the program's end cannot take now is held, in
 *    order, and the port is marked congested in this host's map until
 *    the held ones are written; past a hard limit they are counted and
 *    dropped.  A datagram for a port nobody bound is refused (ENOENT to
 *    the endpoint, which counts and drops it as the kernel does).
 */
#ifndef IBGW_RDS_SERVICE_H
#define IBGW_RDS_SERVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "conf/counters.h"
#include "fabric/fabric.h"
#include "inet/addr.h"
#include "ulp/rds/rds_ep.h"

struct event_base;
struct rds_service;

struct rds_service_ops {
	/* As rds_ep_ops.resolve and .is_local (the service passes them
	 * through); is_local also decides what a program may bind. */
	int (*resolve)(void *arg, const struct inet_addr *laddr,
		       const struct inet_addr *faddr, union fab_gid *gid,
		       uint16_t *lid);
	bool (*is_local)(void *arg, const struct inet_addr *a);
	/* The interface an IPv6 link-local name must be scoped to
	 * (sin6_scope_id) to be ours, as rds_bind() finds the address on
	 * the scope's device; NULL or 0: link-local names are not ours. */
	unsigned int (*ifindex)(void *arg);
	/* As rds_ep_ops.log: connections up and down.  Optional. */
	void (*log)(void *arg, const char *line);
};

struct rds_service_stats {
	uint64_t requests;		/* control requests taken */
	uint64_t bad_requests;		/* malformed, dropped or refused */
	uint64_t sockets_opened;
	uint64_t sockets_closed;
	uint64_t binds;
	uint64_t bind_failures;
	uint64_t tx_msgs, tx_bytes;	/* given to the endpoint */
	uint64_t tx_bad;		/* malformed from a program: dropped */
	uint64_t tx_errors;		/* the endpoint refused: dropped */
	uint64_t tx_unbound;		/* sent before bind (bypassing the
					 * preload): dropped */
	uint64_t tx_cong_holds;		/* ENOBUFS: held until uncongested */
	uint64_t tx_sndbuf_waits;	/* reading stopped: sndbuf full */
	uint64_t rx_msgs, rx_bytes;	/* written to programs */
	uint64_t rx_held;		/* held: the program's end was full */
	uint64_t rx_dropped;		/* past the hard limit */
	uint64_t rx_no_socket;		/* for a port nobody bound */
	uint64_t cong_set, cong_cleared;	/* our ports' map bits */
	uint64_t cancelled;		/* RDS_CANCEL_SENT_TO drops */
};

extern const struct counter_desc rds_service_counters[];

/*
 * name: the control socket (NULL: $IBGW_RDS_SOCKET, else the abstract
 * RDS_CTL_NAME); a leading '@' means abstract.  The endpoint takes the CM
 * events of dev (rds_ep.h).  NULL with errno and err (EADDRINUSE:
 * another service has the name, or the RDS ports are taken).
 */
struct rds_service *rds_service_new(struct event_base *base,
				    struct fab_dev *dev,
				    const struct rds_ep_cfg *cfg,
				    const char *name,
				    const struct rds_service_ops *ops,
				    void *arg, char *err, size_t errlen);
void rds_service_free(struct rds_service *sv);
/* Before a clean stop: run the caller's loop until the endpoint owes its
 * peers nothing (its last ACKs and map updates out, rds_ep_idle), for at
 * most ms milliseconds. */
void rds_service_drain(struct rds_service *sv, unsigned int ms);

const struct rds_service_stats *rds_service_stats(const struct rds_service *sv);
const struct rds_ep_stats *rds_service_ep_stats(const struct rds_service *sv);
const char *rds_service_name(const struct rds_service *sv);
/* One line per bound socket ("rds sock ADDR:PORT ..."), then the
 * endpoint's connection lines. */
size_t rds_service_report(const struct rds_service *sv, char *buf,
			  size_t cap);

#endif

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The host's SDP service: what OFED's ib_sdp kernel module was to libsdp,
 * in user space.  It answers libibgw_preload.so on the control socket
 * (sdp_ctl.h): connects SDP for a program and hands it one end of a unix
 * socket pair spliced to the connection, listens on SDP ports for it and
 * hands it a unix listening socket that accepted SDP connections (and,
 * for 'both', TCP ones) arrive on.  ipoibd runs one per IB host; address
 * resolution (which port GID an IP address is behind) is the caller's,
 * through ops->resolve.
 *
 * A program's non-blocking connect gets its stream end at once, not
 * readable or writable until the outcome (sdp_ctl.h, CONNECT with
 * SDP_CTL_F_ASYNC); for 'both' a failed SDP attempt goes on as a TCP
 * connection of the service's, relayed to that end (sdp_relay.h).
 *
 * Local ports of connections we make are reserved in the host's TCP port
 * space (a TCP socket bound to the source address, port 0, kept for the
 * connection's life), so SDP and TCP never hand out the same one.
 * Listeners whose programs closed them are found within a second (the
 * kernel's sock_diag, asked about the unix listeners handed out), and at
 * once when a connection for one comes (the unix connect is refused),
 * when another listen wants its port (a probe), or when a program's bind
 * finds the port taken (RELEASE).
 */
#ifndef IBGW_SDP_SERVICE_H
#define IBGW_SDP_SERVICE_H

#include <stddef.h>
#include <stdint.h>

#include "conf/counters.h"
#include "fabric/fabric.h"
#include "inet/addr.h"
#include "ulp/sdp/sdp_sock.h"

struct event_base;
struct sdp_service;

struct sdp_service_ops {
	/*
	 * Where dst is over this host's IPoIB: 0 with *gid (the port GID of
	 * dst or of its next hop) and *src (our address towards it); or -1
	 * with errno EAGAIN (being resolved: the service asks again),
	 * ENETUNREACH (not routed over this IPoIB interface: not an SDP
	 * destination), EHOSTUNREACH (no neighbour answered), ENETDOWN.
	 */
	int (*resolve)(void *arg, const struct inet_addr *dst,
		       union fab_gid *gid, struct inet_addr *src);
};

struct sdp_service_stats {
	uint64_t requests;		/* control requests taken */
	uint64_t bad_requests;		/* malformed, dropped */
	uint64_t connects;		/* CONNECT requests that connected */
	uint64_t connect_failures;	/* ... refused, unreachable ... */
	uint64_t connect_retries;	/* tried again: a port was down */
	uint64_t listens;		/* LISTEN requests granted */
	uint64_t listen_failures;
	uint64_t accepted_sdp;		/* SDP connections handed over */
	uint64_t accepted_tcp;		/* TCP ones ('both' listeners) */
	uint64_t refused;		/* REQs no live listener took */
	uint64_t stale_listeners;	/* listeners found closed */
	uint64_t listener_probes;	/* liveness by connecting (no
					 * sock_diag) */
	uint64_t connects_async;	/* non-blocking: EINPROGRESS given */
	uint64_t async_failures;	/* ... that failed afterwards */
	uint64_t tcp_relays;		/* ... 'both', carried by our TCP */
	uint64_t tcp_relay_bytes;	/* what finished relays carried */
	uint64_t async_now;		/* ... held now (a gauge) */
	uint64_t lingers;		/* SO_LINGER requests */
	uint64_t keepalives;		/* KEEPALIVE requests */
	uint64_t linger_waits;		/* LINGER_WAIT requests */
	uint64_t linger_waits_done;	/* ... all acknowledged in time */
	uint64_t resets;		/* reset with the program's end open */
	uint64_t resets_told;		/* ... its error taken (INFO TAKE) */
	uint64_t tcp_accept_pauses;	/* 'both' TCP halves out of fds */
	uint64_t tcp_listeners_lost;	/* ... no longer listening */
	uint64_t listens_restored;	/* a predecessor's, at start */
	uint64_t restore_tcp_failures;
	uint64_t listens_adopted;	/* LISTENs of another partition's
					 * service's listener */
	uint64_t connects_elsewhere;	/* CONNECTs not through this
					 * interface, left to the next */
};

extern const struct counter_desc sdp_service_counters[];

/*
 * name: the control socket (NULL: $IBGW_SDP_SOCKET, else the abstract
 * SDP_CTL_NAME); a leading '@' means abstract.  The service takes the CM
 * events of dev (sdp_sock.h).  NULL with errno and err (EADDRINUSE:
 * another service has the name in this namespace).
 */
struct sdp_service *sdp_service_new(struct event_base *base,
				    struct fab_dev *dev,
				    const struct sdp_ep_cfg *cfg,
				    const char *name,
				    const struct sdp_service_ops *ops,
				    void *arg, char *err, size_t errlen);
void sdp_service_free(struct sdp_service *sv);

const struct sdp_service_stats *sdp_service_stats(const struct sdp_service *sv);
const struct sdp_ep_stats *sdp_service_ep_stats(const struct sdp_service *sv);
/* The name it listens on, as given or defaulted ("@ibgw-sdp"). */
const char *sdp_service_name(const struct sdp_service *sv);
/* Listener lines, non-blocking connects not (or not by SDP) up, the
 * endpoint's connection lines. */
size_t sdp_service_report(const struct sdp_service *sv, char *buf,
			  size_t cap);

#endif

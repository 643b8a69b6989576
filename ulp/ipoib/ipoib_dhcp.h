/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A DHCPv4 client for IPoIB (RFC 2131, RFC 2132, and RFC 4390 for
 * InfiniBand), without I/O: the owner feeds it the time, the DHCP messages
 * that came to UDP port 68 and its timer's expiry, and it answers with
 * messages to send, a timer to arm and the lease to take or drop.  ipoibd
 * runs one for `--dhcp`.
 *
 * RFC 4390 on the wire: htype 32, hlen 0, chaddr all zeros, the broadcast
 * flag set (an IPoIB client cannot take a unicast reply before it has an
 * address: the server would need its 20-byte link address), and a
 * client-identifier (option 61), which is then the only name of the
 * client.  Ours is what the Linux tools send on IPoIB and what DHCP
 * servers' documentation shows for it: type 0xff, IAID 0, a DUID-EN of
 * enterprise 0x2c9 with one zero byte and the port GUID
 * (ff:00:00:00:00:00:02:00:00:02:c9:00:GUID).
 *
 * The states are RFC 2131's: INIT -> SELECTING (DISCOVER, the first OFFER
 * taken) -> REQUESTING (REQUEST with the offer's address and server) ->
 * BOUND (ACK) -> RENEWING at T1 (REQUEST to the server, unicast) ->
 * REBINDING at T2 (REQUEST broadcast) -> lease expired: INIT again.  A
 * NAK drops the lease and starts over after 1 to 2 s.  A link back up
 * while bound checks the lease with an INIT-REBOOT REQUEST (REBOOTING);
 * without an answer the lease is kept until it ends.
 *
 * Everything received is checked (op, xid, magic cookie, option lengths,
 * the message type for the state, a client-identifier echoed as RFC 6842
 * allows must be ours); what fails is counted and ignored.
 */
#ifndef IBGW_IPOIB_DHCP_H
#define IBGW_IPOIB_DHCP_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>

#include "conf/counters.h"

#define DHCP4_SERVER_PORT	67
#define DHCP4_CLIENT_PORT	68
#define DHCP4_MSG_MAX		1024	/* what we build or accept whole */
#define DHCP4_CLIENT_ID_LEN	20	/* ff, IAID, DUID-EN 0x2c9, 0, GUID */

enum dhcp4_type {
	DHCP4_DISCOVER = 1, DHCP4_OFFER, DHCP4_REQUEST, DHCP4_DECLINE,
	DHCP4_ACK, DHCP4_NAK, DHCP4_RELEASE, DHCP4_INFORM,
};

/* What a server's message says (dhcp4_parse). */
struct dhcp4_reply {
	uint8_t op, htype, hlen;
	uint32_t xid;
	uint16_t flags;
	struct in_addr yiaddr, siaddr, giaddr;
	int type;			/* option 53; 0: none (BOOTP) */
	struct in_addr server;		/* option 54 (0: none) */
	struct in_addr mask;		/* option 1 (0: none) */
	struct in_addr router;		/* the first of option 3 (0: none) */
	struct in_addr dns[3];		/* option 6, up to three */
	unsigned int ndns;
	uint32_t lease, t1, t2;		/* options 51, 58, 59 (0: none) */
	uint16_t mtu;			/* option 26 (0: none) */
	uint8_t client_id[64];		/* option 61 as sent back */
	size_t client_id_len;		/* 0: none */
};

/* Parse a message (the UDP payload).  0, or -1 with the reason in *why
 * (a static string): too short, not a reply, no magic cookie, an option
 * running past the end or its field, a known option of a wrong length. */
int dhcp4_parse(const uint8_t *p, size_t len, struct dhcp4_reply *r,
		const char **why);

/* What the client sends (dhcp4_build). */
struct dhcp4_request {
	int type;			/* DISCOVER, REQUEST, RELEASE */
	uint32_t xid;
	uint16_t secs;
	struct in_addr ciaddr;		/* ours when bound, else 0 */
	struct in_addr requested;	/* option 50 (0: none) */
	struct in_addr server;		/* option 54 (0: none) */
	const uint8_t *client_id;	/* option 61 */
	size_t client_id_len;
};

/* The message into buf (at least 300 bytes, BOOTP's minimum, padded):
 * its length, or 0 when cap is too small. */
size_t dhcp4_build(uint8_t *buf, size_t cap, const struct dhcp4_request *q);

/* The RFC 4390 client-identifier of a port GUID (8 bytes, network
 * order) into id[DHCP4_CLIENT_ID_LEN]. */
void dhcp4_client_id_ib(const uint8_t guid[8],
			uint8_t id[DHCP4_CLIENT_ID_LEN]);

/* ---- the client ------------------------------------------------------- */

enum dhcp4_state {
	DHCP4_S_STOPPED, DHCP4_S_INIT, DHCP4_S_SELECTING, DHCP4_S_REQUESTING,
	DHCP4_S_BOUND, DHCP4_S_RENEWING, DHCP4_S_REBINDING,
	DHCP4_S_REBOOTING,
};

const char *dhcp4_state_name(enum dhcp4_state s);

struct dhcp4_lease {
	struct in_addr addr, mask, router, server;
	struct in_addr dns[3];
	unsigned int ndns;
	uint32_t lease, t1, t2;		/* seconds, as granted */
	uint16_t mtu;
};

struct dhcp4_client_ops {
	/* A message to send: UDP from port 68 at src (0.0.0.0 before an
	 * address) to port 67 at dst (255.255.255.255: broadcast). */
	void (*send)(void *arg, const uint8_t *msg, size_t len,
		     struct in_addr src, struct in_addr dst);
	/* The one timer: fire dhcp4_client_timer() in ms milliseconds
	 * (replaces any armed one; UINT64_MAX: none). */
	void (*arm)(void *arg, uint64_t ms);
	/* A lease to take (a new one, or renewed: same addr); old is the
	 * lease held before (addr 0: none), to drop first when its address
	 * or prefix differs. */
	void (*bind)(void *arg, const struct dhcp4_lease *l,
		     const struct dhcp4_lease *old);
	/* The lease is gone (expired, NAKed): drop its address. */
	void (*unbind)(void *arg, const struct dhcp4_lease *l,
		       const char *why);
	/* One line for the owner's log.  Optional. */
	void (*log)(void *arg, const char *line);
};

struct dhcp4_client_stats {
	uint64_t tx_discover, tx_request;
	uint64_t rx_offer, rx_ack, rx_nak;
	uint64_t rx_bad;		/* malformed: dropped */
	uint64_t rx_ignored;		/* not for us or not now */
	uint64_t binds, renewals, expiries;
};

extern const struct counter_desc dhcp4_client_counters[];

struct dhcp4_client {
	struct dhcp4_client_ops ops;
	void *arg;
	uint8_t client_id[DHCP4_CLIENT_ID_LEN];
	enum dhcp4_state state;
	uint32_t xid;
	uint64_t start_ms;		/* this exchange's first message */
	uint64_t next_ms;		/* the timer armed for */
	unsigned int tries;		/* sent in this state */
	struct in_addr offer, offer_server;
	struct dhcp4_lease lease;	/* addr 0: none */
	uint64_t bound_ms;		/* when the lease was granted */
	uint32_t rand;			/* xorshift state */
	struct dhcp4_client_stats st;
};

/* Ready to start; seed makes the xids and jitter (any value). */
void dhcp4_client_init(struct dhcp4_client *c,
		       const struct dhcp4_client_ops *ops, void *arg,
		       const uint8_t client_id[DHCP4_CLIENT_ID_LEN],
		       uint32_t seed);
/* The link is up: INIT (DISCOVER now), or with a lease REBOOTING. */
void dhcp4_client_start(struct dhcp4_client *c, uint64_t now_ms);
/* The link is down: nothing sent until dhcp4_client_start again; the
 * lease is kept (its expiry still counts: the timer stays). */
void dhcp4_client_pause(struct dhcp4_client *c, uint64_t now_ms);
/* A UDP payload that came to port 68. */
void dhcp4_client_input(struct dhcp4_client *c, const uint8_t *p,
			size_t len, uint64_t now_ms);
void dhcp4_client_timer(struct dhcp4_client *c, uint64_t now_ms);

#endif

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Private to the IPoIB link: struct ipoib_link and what its files share.
 *   ipoib_link.c   the link: create/free, carrier, port events, the
 *                  broadcast group, rx/tx dispatch, the host's hooks
 *   ipoib_neigh.c  neighbours and paths: the neighbour cache, PathRecords,
 *                  address handles, ARP/ND, packets waiting for them, ageing
 *   ipoib_mcast.c  multicast: full and send-only joins, listen groups,
 *                  rejoins, leaves
 * Users of the link see only ipoib_link.h.
 */
#ifndef IBGW_IPOIB_PRIV_H
#define IBGW_IPOIB_PRIV_H

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fabric/sa_client.h"
#include "ulp/ipoib/ipoib_link.h"

#define NEIGH_QUEUE_MAX		3
#define MC_QUEUE_MAX		64
#define NEIGH_HASH		256
#define ARP_RETRIES		3	/* then the neighbour fails */
/* Linux's defaults for IPv6 unreachability detection: DELAY_FIRST_PROBE_
 * TIME, then MAX_UNICAST_SOLICIT probes RETRANS_TIMER (1 s) apart */
#define NUD_DELAY_S		5
#define NUD_PROBES		3
#define BACKOFF_MAX_S		16
#define RX_BATCH		32
#define FRAME_MAX		(IPOIB_HDR_LEN + 4096)
#define TX_BATCH		32

struct frame {
	struct frame *next;
	size_t len;
	uint8_t data[];
};

struct fqueue {
	struct frame *head, *tail;
	unsigned int n;
};

/* One of the link's own addresses. */
struct link_addr {
	struct inet_prefix p;
	/* IPv6: the host's duplicate address detection is running; the
	 * address is not advertised yet (RFC 4862 5.4) */
	int tentative;
};

enum mc_state { MC_IDLE, MC_JOINING, MC_JOINED, MC_WAIT };

struct mc {
	struct ipoib_link *l;	/* the callbacks' way back */
	union fab_gid mgid;
	int full;		/* FullMember (we listen), else send-only */
	int asked_full;		/* what the join on its way asked for */
	enum mc_state st;
	uint16_t mlid;
	struct fab_ah *ah;
	uint32_t req;
	unsigned int backoff_s;
	time_t retry_at;
	int attached;
	uint8_t js;		/* the port's JoinState the SA answered */
	int own;		/* joined by the link itself, not the host */
	struct fqueue q;	/* waiting for a send-only join */
	struct mc *next;
};

enum path_state { PATH_NONE, PATH_QUERYING, PATH_OK, PATH_FAILED };

struct path {
	struct ipoib_link *l;
	union fab_gid dgid;
	enum path_state st;
	uint32_t req;
	struct fab_ah *ah;
	time_t updated;
	unsigned int refs;	/* neighbours using it; freed at 0 */
	struct path *next;
};

struct neigh {
	struct inet_addr ip;
	int have_hw;
	struct ipoib_addr hw;
	struct path *path;
	struct fqueue q;	/* frames waiting for hw + path */
	time_t created, confirmed;
	unsigned int probes;
	time_t next_probe;
	/* unreachability detection (RFC 4861 7.3): 0, or when the next
	 * step is due; nud_probes of NUD_PROBES sent */
	time_t nud_at;
	unsigned int nud_probes;
	struct neigh *next;
};

/* Connected mode (RFC 4755, as the Linux driver does it): ipoib_cm.c */
#define IPOIB_CM_MTU		65520	/* the link MTU in connected mode */
#define IPOIB_CM_BUF		(IPOIB_CM_MTU + IPOIB_HDR_LEN)	/* 65524 */
#define IPOIB_CM_SID		0x1000000000000000ull	/* | UD QPN */
#define CM_TX_DEPTH		512	/* sends in flight per connection */
#define CM_RX_DEPTH		512	/* receives posted per connection */
#define CM_QUEUE_MAX		64	/* frames waiting for a connection */
/* Bytes queued on a connection that is up, beyond its window: from
 * CM_QUEUE_STOP the host's input stops (ipoib_link_tx_stopped) until half
 * of it is left; beyond CM_QUEUE_LIMIT frames are dropped.  The gap takes
 * what the host already read: a 64 KB super-packet cut into segments. */
#define CM_QUEUE_STOP		(256u * 1024)
#define CM_QUEUE_LIMIT		(1024u * 1024)
/* A connection that stops the host's input and completes no send for
 * this long fails (datagrams to its peer for CM_FAIL_HOLD_S): a peer
 * that answers RNR NAK for ever (it posts no receive; rnr_retry 7 never
 * runs out) would otherwise stop the host's input for good. */
#define CM_STALL_S		5
#define CM_FAIL_HOLD_S		10	/* datagrams to a peer whose connection
					 * failed, this long */
#define CM_CONNS_MAX		256	/* each way */

enum cm_state { CM_CONNECTING, CM_UP, CM_DEAD };

/* One RC connection: ours to send on (tx, we connected), or a peer's to
 * receive on (rx, we accepted), as the Linux driver keeps them apart. */
struct cm_conn {
	struct ipoib_link *l;
	struct cm_conn *next;
	int tx;
	enum cm_state st;
	struct ipoib_addr peer;	/* tx: the peer's GID and UD QPN */
	uint32_t peer_qpn;	/* rx: the UD QPN its REQ named */
	struct fab_cm_id *id;
	struct fab_qp *qp;
	struct event *ev;
	struct fab_mr *mr;
	uint8_t *bufs;		/* depth x IPOIB_CM_BUF */
	unsigned int depth;
	uint32_t mtu;		/* tx: the most the peer takes (its buffer
				 * size less the header) */
	unsigned int head, inflight;	/* tx slots */
	/* frames written to their slots and not posted yet: while the host
	 * hands the link a burst (tx_hold) they go in one post, one ring
	 * publication and at most one kick, as UD bursts do */
	struct fab_sge sge[CM_TX_DEPTH];
	struct fab_rc_wr wr[CM_TX_DEPTH];
	unsigned int nbatch;
	struct cm_conn *batch_next;	/* on ipoib_link.cm_batched */
	int batched;
	struct fqueue q;	/* tx: waiting for the connection or a slot */
	size_t qbytes;		/* in q */
	int stopping;		/* qbytes reached CM_QUEUE_STOP */
	time_t progress;	/* tx: a send completed, or stopping began */
	time_t used;
};

/* A peer whose connection failed: datagrams to it until until. */
struct cm_hold {
	struct ipoib_addr peer;
	time_t until;
	struct cm_hold *next;
};

struct ipoib_link {
	struct event_base *base;
	struct fab_dev *dev;
	struct ipoib_link_cfg cfg;
	struct ipoib_link_ops ops;
	void *arg;
	struct sa_client *sa;
	struct fab_port_attr pa;
	uint16_t pkey;		/* with the full bit, as the group's */
	int pkey_index;
	struct fab_qp *qp;
	struct event *rx_ev, *tick_ev;
	/* broadcast group */
	struct sa_mcmember bcast;
	union fab_gid bcast_mgid;
	int carrier;
	int router;		/* IPv6 forwarding: our NAs carry R */
	int rx_err;		/* errno of the last failed QP poll, or 0 */
	int rx_group;		/* the datagram being delivered came to a
				 * multicast group (the broadcast one too) */
	unsigned int mtu;
	struct mc *mcs;
	struct path *paths;
	struct neigh *neigh[NEIGH_HASH];
	unsigned int nneigh;
	struct link_addr addrs[IPOIB_LINK_MAX_ADDRS];
	unsigned int naddrs;
	struct ipoib_link_stats st;
	uint16_t icmp_id;
	/* connected mode */
	int cm_on;		/* listening; our address has the RC flag */
	int cm_err;		/* why not, when asked for (errno) */
	unsigned int ud_mtu;	/* datagrams: multicast, peers without RC */
	struct fab_cm_id *cm_listen;
	struct ipoib_link *cm_next;	/* listening links (one device may
				 * carry several: ibgwd's partitions) */
	struct event *cm_ev;
	struct cm_conn *conns;
	unsigned int ntx_conns, nrx_conns;
	struct cm_hold *holds;
	struct cm_conn *cm_batched;	/* connections with frames to post */
	unsigned int cm_stopping;	/* connections stopping the input */
	int cm_closing;			/* in ipoib_cm_stop */
	/* sends held while the host hands us a burst (ipoib_link_tx_hold) */
	int tx_hold;
	unsigned int ntx;
	struct fab_send_wr txwr[TX_BATCH];
	uint8_t txbuf[TX_BATCH][FRAME_MAX];
	uint8_t rxbuf[RX_BATCH][FAB_GRH_LEN + 4096];
};

static inline void drop(struct ipoib_link *l, enum ipoib_drop d)
{
	l->st.drop[d]++;
}

static inline time_t now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec;
}

static inline struct frame *frame_new(uint16_t ethertype, const uint8_t *pkt,
				      size_t len)
{
	struct frame *f = malloc(sizeof(*f) + IPOIB_HDR_LEN + len);

	if (!f)
		return NULL;
	f->next = NULL;
	f->len = IPOIB_HDR_LEN + len;
	ipoib_hdr_build(ethertype, f->data, IPOIB_HDR_LEN);
	memcpy(f->data + IPOIB_HDR_LEN, pkt, len);
	return f;
}

static inline void fq_push(struct fqueue *q, struct frame *f)
{
	if (q->tail)
		q->tail->next = f;
	else
		q->head = f;
	q->tail = f;
	q->n++;
}

static inline struct frame *fq_pop(struct fqueue *q)
{
	struct frame *f = q->head;

	if (f) {
		q->head = f->next;
		if (!q->head)
			q->tail = NULL;
		q->n--;
	}
	return f;
}

static inline unsigned int fq_drain(struct fqueue *q)
{
	struct frame *f;
	unsigned int n = 0;

	while ((f = fq_pop(q))) {
		free(f);
		n++;
	}
	return n;
}

/* ipoib_link.c */
void ipoib_link_send(struct ipoib_link *l, struct fab_ah *ah, uint32_t qpn,
		     uint16_t ethertype, const uint8_t *data, size_t len);
const struct inet_addr *ipoib_link_local_addr(struct ipoib_link *l, int family);
int ipoib_link_is_tentative(struct ipoib_link *l, const struct inet_addr *a);

void ipoib_link_too_big(struct ipoib_link *l, const uint8_t *pkt, size_t len,
			unsigned int mtu);
void ipoib_link_rx_frame(struct ipoib_link *l, const uint8_t *p, size_t len);

/* ipoib_cm.c */
void ipoib_cm_start(struct ipoib_link *l);
void ipoib_cm_stop(struct ipoib_link *l);
/* A frame (ethertype 0: data holds its header) for a peer with the RC
 * flag: 0 taken (sent, queued or dropped and counted), -1 use datagrams. */
int ipoib_cm_send(struct ipoib_link *l, const struct ipoib_addr *peer,
		  uint16_t ethertype, const uint8_t *data, size_t len);
void ipoib_cm_tick(struct ipoib_link *l, time_t t);
/* Post what a held burst left in the connections' slots. */
void ipoib_cm_flush(struct ipoib_link *l);
size_t ipoib_cm_report(const struct ipoib_link *l, char *buf, size_t cap);

/* ipoib_mcast.c */
struct mc *ipoib_mcast_find(struct ipoib_link *l, const union fab_gid *mgid);
void ipoib_mcast_failed(struct ipoib_link *l, struct mc *m);
void ipoib_mcast_join(struct ipoib_link *l, struct mc *m);
void ipoib_mcast_send(struct ipoib_link *l, const union fab_gid *mgid,
		      uint16_t ethertype, const uint8_t *pkt, size_t len);
void ipoib_mcast_own(struct ipoib_link *l, const union fab_gid *mgid);
void ipoib_mcast_free(struct ipoib_link *l, struct mc *m, int leave);
void ipoib_mcast_mgid6(struct ipoib_link *l, const struct in6_addr *g,
		       union fab_gid *mgid);
void ipoib_mcast_snoop(struct ipoib_link *l, int family,
		       const uint8_t *p, size_t len);
void ipoib_mcast_join_listen(struct ipoib_link *l);

/* ipoib_neigh.c */
void ipoib_neigh_output(struct ipoib_link *l, const struct inet_addr *nh,
			uint16_t ethertype, const uint8_t *pkt, size_t len);
void ipoib_neigh_rx_arp(struct ipoib_link *l, const uint8_t *p, size_t len);
int ipoib_neigh_rx_nd(struct ipoib_link *l, const uint8_t *p, size_t len);
void ipoib_neigh_announce(struct ipoib_link *l, const struct inet_addr *a);
void ipoib_neigh_defend(struct ipoib_link *l, const struct inet_addr *target);
void ipoib_neigh_probe_own(struct ipoib_link *l, const struct inet_addr *a);
void ipoib_neigh_flush_paths(struct ipoib_link *l);
void ipoib_neigh_tick(struct ipoib_link *l, time_t t);
/* Neighbours and paths, at the link's end. */
void ipoib_neigh_free_all(struct ipoib_link *l);

#endif

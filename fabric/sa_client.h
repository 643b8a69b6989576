/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * An asynchronous SA client on a libevent loop: MCMemberRecord join,
 * leave and get, PathRecord queries, InformInfo subscriptions and the
 * Notices they bring.  It talks to the SM through the fabric interface's
 * MAD agent (fab_mad_*), so it works over the soft provider (ibfabricd),
 * the verbs provider and the umad provider (libibumad, e.g. OpenSM on
 * ibsim) alike.
 *
 * Every request gets a transaction ID, a timeout and a bounded number of
 * retries (the same TID, as the kernel's MAD layer retries); its callback
 * runs exactly once, with the SA's answer or a local error, unless the
 * request is cancelled first.
 */
#ifndef IBGW_SA_CLIENT_H
#define IBGW_SA_CLIENT_H

#include <stdint.h>

#include "fabric/fabric.h"
#include "fabric/sa_mad.h"

struct event_base;
struct sa_client;

#define SA_MAX_RECORDS	4	/* records one answer MAD can hold */

enum sa_client_err {
	SA_CLIENT_OK = 0,	/* the SA answered; see status */
	SA_CLIENT_TIMEOUT,	/* no answer after every retry */
	SA_CLIENT_SEND,		/* the MAD could not be sent */
	SA_CLIENT_BAD_ANSWER,	/* an answer that does not decode */
	SA_CLIENT_CANCELLED,	/* sa_client_free() with requests pending */
};

struct sa_result {
	enum sa_client_err err;
	int errnum;		/* errno when err == SA_CLIENT_SEND */
	uint16_t status;	/* MAD status when err == SA_CLIENT_OK */
	uint8_t method;		/* of the answer */
	uint16_t attr_id;
	unsigned int tries;	/* sends it took */
	unsigned int nrec;
	union {
		struct sa_mcmember mcm[SA_MAX_RECORDS];
		struct sa_path path[SA_MAX_RECORDS];
		struct sa_inform_info inform;
	} rec;
};

/* success: the SA answered with status 0 */
static inline int sa_result_ok(const struct sa_result *r)
{
	return r->err == SA_CLIENT_OK && r->status == 0;
}

typedef void (*sa_cb)(void *arg, const struct sa_result *res);
typedef void (*sa_notice_cb)(void *arg, const struct sa_notice *n);

struct sa_client_cfg {
	unsigned int timeout_ms;	/* per try; 0: 1000 */
	unsigned int retries;		/* after the first try; 0: 3 */
	uint16_t pkey_index;		/* for MADs to the SM; default 0 */
};

/* NULL with errno (the fabric's, from fab_mad_open) and the reason in err,
 * "SA client: ...". */
struct sa_client *sa_client_new(struct event_base *base, struct fab_dev *dev,
				const struct sa_client_cfg *cfg, char *err,
				size_t errlen);
/* Pending callbacks run with SA_CLIENT_CANCELLED before it returns. */
void sa_client_free(struct sa_client *c);

/*
 * Requests return a non-zero request id (for sa_cancel), or 0 -- an id
 * is never 0, so it plays NULL's part -- with errno set when nothing was
 * sent (callback not called): ENOMEM, or the fabric's errno for the MAD
 * send (EAGAIN: the queue is full; ECONNRESET: the fabric is gone).  Like
 * fabric.h's per-packet calls they fill no error buffer.  mask is the SA
 * ComponentMask; the record's fields outside it are sent as given.
 */
uint32_t sa_mcm_join(struct sa_client *c, const struct sa_mcmember *rec,
		     uint64_t mask, sa_cb cb, void *arg);
uint32_t sa_mcm_leave(struct sa_client *c, const struct sa_mcmember *rec,
		      uint64_t mask, sa_cb cb, void *arg);
uint32_t sa_mcm_get(struct sa_client *c, const struct sa_mcmember *rec,
		    uint64_t mask, sa_cb cb, void *arg);
uint32_t sa_path_get(struct sa_client *c, const struct sa_path *rec,
		     uint64_t mask, sa_cb cb, void *arg);
/* Subscribe (or not) to a trap number (0xFFFF: all). */
uint32_t sa_inform(struct sa_client *c, uint16_t trap, int subscribe,
		   sa_cb cb, void *arg);
/* Forget a request: its callback will not run. */
void sa_cancel(struct sa_client *c, uint32_t id);
unsigned int sa_pending(const struct sa_client *c);
/* The client remembers where the SM is; call this after the port's
 * SM_CHANGE, LID_CHANGE, CLIENT_REREGISTER or PORT_ACTIVE events (retries
 * ask again by themselves).  0, or -1 with errno. */
int sa_client_refresh(struct sa_client *c);
/* Notices (Reports from the SM) go to cb; the client acknowledges them. */
void sa_client_on_notice(struct sa_client *c, sa_notice_cb cb, void *arg);

/* "OK", "REQ_INVALID (0x0200)", "timeout after 4 tries", ... */
const char *sa_result_str(const struct sa_result *r, char *buf, size_t len);

/* The usual masks: join an existing group; create one (Linux IPoIB). */
#define SA_MCM_JOIN_MASK	(SA_MCM_MGID | SA_MCM_PORT_GID | \
				 SA_MCM_JOIN_STATE)
#define SA_MCM_CREATE_MASK	(SA_MCM_JOIN_MASK | SA_MCM_QKEY | \
				 SA_MCM_TCLASS | SA_MCM_PKEY | \
				 SA_MCM_FLOW_LABEL | SA_MCM_SL)

#endif

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * DHCPv4 client for IPoIB (RFC 2131, 2132, 4390): see ipoib_dhcp.h.
 *
 * The BOOTP header (RFC 2131 figure 1): op 0, htype 1, hlen 2, hops 3,
 * xid 4, secs 8, flags 10, ciaddr 12, yiaddr 16, siaddr 20, giaddr 24,
 * chaddr 28 (16), sname 44 (64), file 108 (128), options 236 after the
 * magic cookie 99.130.83.99.
 */
#include "ulp/ipoib/ipoib_dhcp.h"

#include <arpa/inet.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "inet/byteorder.h"

#define OFF_OP		0
#define OFF_HTYPE	1
#define OFF_HLEN	2
#define OFF_XID		4
#define OFF_SECS	8
#define OFF_FLAGS	10
#define OFF_CIADDR	12
#define OFF_YIADDR	16
#define OFF_SIADDR	20
#define OFF_GIADDR	24
#define OFF_SNAME	44
#define OFF_FILE	108
#define OFF_COOKIE	236
#define OFF_OPTIONS	240
#define BOOTP_MIN	300	/* RFC 1542: what relays and old servers want */

#define HTYPE_IB	32	/* RFC 4390 */
#define FLAG_BROADCAST	0x8000

enum {
	OPT_PAD = 0, OPT_MASK = 1, OPT_ROUTER = 3, OPT_DNS = 6, OPT_MTU = 26,
	OPT_REQUESTED = 50, OPT_LEASE = 51, OPT_OVERLOAD = 52, OPT_TYPE = 53,
	OPT_SERVER = 54, OPT_PARAMS = 55, OPT_MAXSIZE = 57, OPT_T1 = 58,
	OPT_T2 = 59, OPT_CLIENT_ID = 61, OPT_END = 255,
};

static const uint8_t cookie[4] = { 99, 130, 83, 99 };

/* ---- codec -------------------------------------------------------------- */

static void addr_get(struct in_addr *a, const uint8_t *p)
{
	memcpy(&a->s_addr, p, 4);
}

/* One option's value into r; -1 with *why for a known one of a wrong
 * length.  *overload takes option 52. */
static int opt_take(struct dhcp4_reply *r, uint8_t code, const uint8_t *v,
		    uint8_t len, int *overload, const char **why)
{
	unsigned int i;

	switch (code) {
	case OPT_TYPE:
		if (len != 1)
			goto bad;
		r->type = v[0];
		break;
	case OPT_SERVER:
	case OPT_MASK:
		if (len != 4)
			goto bad;
		addr_get(code == OPT_SERVER ? &r->server : &r->mask, v);
		break;
	case OPT_ROUTER:
	case OPT_DNS:
		if (!len || len % 4)
			goto bad;
		if (code == OPT_ROUTER) {
			addr_get(&r->router, v);
			break;
		}
		for (i = 0; i < len / 4u && r->ndns < 3; i++)
			addr_get(&r->dns[r->ndns++], v + 4 * i);
		break;
	case OPT_LEASE:
	case OPT_T1:
	case OPT_T2:
		if (len != 4)
			goto bad;
		*(code == OPT_LEASE ? &r->lease : code == OPT_T1 ? &r->t1 :
		  &r->t2) = be32_get(v);
		break;
	case OPT_MTU:
		if (len != 2)
			goto bad;
		r->mtu = be16_get(v);
		break;
	case OPT_OVERLOAD:
		if (len != 1 || v[0] < 1 || v[0] > 3)
			goto bad;
		*overload = v[0];
		break;
	case OPT_CLIENT_ID:
		if (!len || len > sizeof(r->client_id))
			goto bad;
		memcpy(r->client_id, v, len);
		r->client_id_len = len;
		break;
	default:
		break;		/* not ours to read */
	}
	return 0;
bad:
	*why = "an option of a wrong length";
	return -1;
}

/* The options in p[0..len): to the end option (needed in the options
 * field, RFC 2131 4.1: sname and file may just run out). */
static int opts_parse(struct dhcp4_reply *r, const uint8_t *p, size_t len,
		      int need_end, int *overload, const char **why)
{
	size_t i = 0;

	while (i < len) {
		uint8_t code = p[i], olen;

		if (code == OPT_PAD) {
			i++;
			continue;
		}
		if (code == OPT_END)
			return 0;
		if (i + 2 > len || i + 2 + (size_t)p[i + 1] > len) {
			*why = "an option running past its field";
			return -1;
		}
		olen = p[i + 1];
		if (opt_take(r, code, p + i + 2, olen, overload, why) < 0)
			return -1;
		i += 2 + (size_t)olen;
	}
	if (need_end) {
		*why = "no end option";
		return -1;
	}
	return 0;
}

int dhcp4_parse(const uint8_t *p, size_t len, struct dhcp4_reply *r,
		const char **why)
{
	int overload = 0, unused = 0;

	memset(r, 0, sizeof(*r));
	if (len < OFF_OPTIONS) {
		*why = "shorter than a DHCP message";
		return -1;
	}
	r->op = p[OFF_OP];
	r->htype = p[OFF_HTYPE];
	r->hlen = p[OFF_HLEN];
	r->xid = be32_get(p + OFF_XID);
	r->flags = be16_get(p + OFF_FLAGS);
	addr_get(&r->yiaddr, p + OFF_YIADDR);
	addr_get(&r->siaddr, p + OFF_SIADDR);
	addr_get(&r->giaddr, p + OFF_GIADDR);
	if (r->op != 2) {
		*why = "not a reply (op 2)";
		return -1;
	}
	if (memcmp(p + OFF_COOKIE, cookie, 4)) {
		*why = "no DHCP magic cookie";
		return -1;
	}
	if (opts_parse(r, p + OFF_OPTIONS, len - OFF_OPTIONS, 1, &overload,
		       why) < 0)
		return -1;
	/* RFC 2132 9.3: options continued in file, then sname (an option
	 * 52 there is not read again) */
	if ((overload & 1) && opts_parse(r, p + OFF_FILE, 128, 0, &unused,
					 why) < 0)
		return -1;
	if ((overload & 2) && opts_parse(r, p + OFF_SNAME, 64, 0, &unused,
					 why) < 0)
		return -1;
	return 0;
}

static size_t opt_put(uint8_t *b, size_t i, uint8_t code, const void *v,
		      uint8_t len)
{
	b[i] = code;
	b[i + 1] = len;
	memcpy(b + i + 2, v, len);
	return i + 2 + len;
}

size_t dhcp4_build(uint8_t *buf, size_t cap, const struct dhcp4_request *q)
{
	/* subnet mask, router, DNS, domain name, MTU, broadcast address,
	 * lease, server, T1, T2 */
	static const uint8_t params[] = { 1, 3, 6, 15, 26, 28, 51, 54, 58,
					  59 };
	uint8_t type = (uint8_t)q->type, maxsize[2];
	size_t i, need = OFF_OPTIONS + 3 + 2 + q->client_id_len + 6 + 6 +
			 2 + sizeof(params) + 4 + 1;

	if (q->client_id_len > 255)
		return 0;
	if (need < BOOTP_MIN)
		need = BOOTP_MIN;
	if (cap < need)
		return 0;
	memset(buf, 0, need);
	buf[OFF_OP] = 1;
	buf[OFF_HTYPE] = HTYPE_IB;
	buf[OFF_HLEN] = 0;		/* RFC 4390: chaddr stays zero */
	be32_put(buf + OFF_XID, q->xid);
	be16_put(buf + OFF_SECS, q->secs);
	/* RFC 4390 2.1: the client cannot take a unicast reply before it
	 * has an address; once it has one (renewing) it can */
	be16_put(buf + OFF_FLAGS, q->ciaddr.s_addr ? 0 : FLAG_BROADCAST);
	memcpy(buf + OFF_CIADDR, &q->ciaddr.s_addr, 4);
	memcpy(buf + OFF_COOKIE, cookie, 4);
	i = OFF_OPTIONS;
	i = opt_put(buf, i, OPT_TYPE, &type, 1);
	i = opt_put(buf, i, OPT_CLIENT_ID, q->client_id,
		    (uint8_t)q->client_id_len);
	if (q->requested.s_addr)
		i = opt_put(buf, i, OPT_REQUESTED, &q->requested.s_addr, 4);
	if (q->server.s_addr)
		i = opt_put(buf, i, OPT_SERVER, &q->server.s_addr, 4);
	if (q->type != DHCP4_RELEASE) {
		i = opt_put(buf, i, OPT_PARAMS, params, sizeof(params));
		be16_put(maxsize, 576);	/* what every server can send */
		i = opt_put(buf, i, OPT_MAXSIZE, maxsize, 2);
	}
	buf[i++] = OPT_END;
	return i > need ? i : need;
}

void dhcp4_client_id_ib(const uint8_t guid[8],
			uint8_t id[DHCP4_CLIENT_ID_LEN])
{
	/* type 0xff (RFC 4361), IAID 0, DUID type 2 (DUID-EN), enterprise
	 * 0x2c9, then a zero byte and the GUID */
	static const uint8_t head[12] = { 0xff, 0, 0, 0, 0, 0, 2, 0, 0, 2,
					  0xc9, 0 };

	memcpy(id, head, sizeof(head));
	memcpy(id + sizeof(head), guid, 8);
}

/* ---- the client ---------------------------------------------------------- */

const struct counter_desc dhcp4_client_counters[] = {
	COUNTER("tx_discover", struct dhcp4_client_stats, tx_discover,
		"DHCPDISCOVER messages sent."),
	COUNTER("tx_request", struct dhcp4_client_stats, tx_request,
		"DHCPREQUEST messages sent (selecting, renewing, rebinding, "
		"rebooting)."),
	COUNTER("rx_offer", struct dhcp4_client_stats, rx_offer,
		"DHCPOFFER messages taken."),
	COUNTER("rx_ack", struct dhcp4_client_stats, rx_ack,
		"DHCPACK messages taken."),
	COUNTER("rx_nak", struct dhcp4_client_stats, rx_nak,
		"DHCPNAK messages taken (the lease dropped)."),
	COUNTER("rx_bad", struct dhcp4_client_stats, rx_bad,
		"Malformed DHCP messages dropped."),
	COUNTER("rx_ignored", struct dhcp4_client_stats, rx_ignored,
		"DHCP messages for another client or exchange, or not "
		"expected in the state, ignored."),
	COUNTER("binds", struct dhcp4_client_stats, binds,
		"Leases taken."),
	COUNTER("renewals", struct dhcp4_client_stats, renewals,
		"Leases extended (renewing, rebinding, rebooting)."),
	COUNTER("expiries", struct dhcp4_client_stats, expiries,
		"Leases that ran out or were refused: address dropped."),
	COUNTERS_END
};

static const char *const state_names[] = {
	[DHCP4_S_STOPPED] = "stopped", [DHCP4_S_INIT] = "init",
	[DHCP4_S_SELECTING] = "selecting", [DHCP4_S_REQUESTING] = "requesting",
	[DHCP4_S_BOUND] = "bound", [DHCP4_S_RENEWING] = "renewing",
	[DHCP4_S_REBINDING] = "rebinding", [DHCP4_S_REBOOTING] = "rebooting",
};

const char *dhcp4_state_name(enum dhcp4_state s)
{
	return (unsigned int)s < sizeof(state_names) / sizeof(state_names[0]) ?
	       state_names[s] : "?";
}

#define REQUEST_TRIES	4	/* REQUESTING, REBOOTING: then give up */
#define RETRY_MAX_MS	64000	/* RFC 2131 4.1: 4, 8, ... 64 s */
#define RENEW_MIN_MS	60000	/* RFC 2131 4.4.5 */

static uint32_t rnd(struct dhcp4_client *c)
{
	uint32_t x = c->rand;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	c->rand = x ? x : 0x9e3779b9u;
	return c->rand;
}

static void logf_(struct dhcp4_client *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void logf_(struct dhcp4_client *c, const char *fmt, ...)
{
	char line[200];
	va_list ap;

	if (!c->ops.log)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	c->ops.log(c->arg, line);
}

/* a.b.c.d in a static buffer of the pair (two in one log line) */
static const char *ip4(struct in_addr a)
{
	static char b[2][INET_ADDRSTRLEN];
	static unsigned int i;

	i ^= 1;
	return inet_ntop(AF_INET, &a, b[i], sizeof(b[i]));
}

static void arm_at(struct dhcp4_client *c, uint64_t now, uint64_t at)
{
	c->next_ms = at;
	c->ops.arm(c->arg, at > now ? at - now : 0);
}

/* RFC 2131 4.1: 4 s, doubling to 64 s, each -1 to +1 s at random */
static uint64_t backoff_ms(struct dhcp4_client *c)
{
	uint64_t ms = 4000;
	unsigned int i;

	for (i = 1; i < c->tries && ms < RETRY_MAX_MS; i++)
		ms *= 2;
	if (ms > RETRY_MAX_MS)
		ms = RETRY_MAX_MS;
	return ms - 1000 + rnd(c) % 2001;
}

static uint64_t lease_end(const struct dhcp4_client *c)
{
	return c->bound_ms + (uint64_t)c->lease.lease * 1000;
}

static void send_msg(struct dhcp4_client *c, int type, uint64_t now)
{
	struct dhcp4_request q;
	uint8_t buf[DHCP4_MSG_MAX];
	struct in_addr src = { 0 }, dst = { INADDR_BROADCAST };
	uint64_t secs = (now - c->start_ms) / 1000;
	size_t n;

	memset(&q, 0, sizeof(q));
	q.type = type;
	q.xid = c->xid;
	q.secs = (uint16_t)(secs > 0xffff ? 0xffff : secs);
	q.client_id = c->client_id;
	q.client_id_len = sizeof(c->client_id);
	switch (c->state) {
	case DHCP4_S_REQUESTING:	/* RFC 2131 4.3.2's table */
		q.requested = c->offer;
		q.server = c->offer_server;
		break;
	case DHCP4_S_REBOOTING:
		q.requested = c->lease.addr;
		break;
	case DHCP4_S_RENEWING:
		q.ciaddr = src = c->lease.addr;
		if (c->lease.server.s_addr)	/* else broadcast */
			dst = c->lease.server;
		break;
	case DHCP4_S_REBINDING:
		q.ciaddr = src = c->lease.addr;
		break;
	default:
		break;
	}
	n = dhcp4_build(buf, sizeof(buf), &q);
	if (!n)
		return;
	if (type == DHCP4_DISCOVER)
		c->st.tx_discover++;
	else
		c->st.tx_request++;
	c->ops.send(c->arg, buf, n, src, dst);
}

static void new_exchange(struct dhcp4_client *c, enum dhcp4_state s,
			 uint64_t now)
{
	c->state = s;
	c->xid = rnd(c);
	c->start_ms = now;
	c->tries = 0;
}

static void drop_lease(struct dhcp4_client *c, const char *why)
{
	struct dhcp4_lease old = c->lease;

	if (!c->lease.addr.s_addr)
		return;
	memset(&c->lease, 0, sizeof(c->lease));
	c->st.expiries++;
	c->ops.unbind(c->arg, &old, why);
}

/* INIT: DISCOVER now (after a NAK: after 1 to 2 s, RFC 2131 3.1 5's
 * wait, so that a server that refuses every request is not flooded) */
static void discover(struct dhcp4_client *c, uint64_t now)
{
	if (c->state == DHCP4_S_INIT)
		new_exchange(c, DHCP4_S_SELECTING, now);
	c->tries++;
	send_msg(c, DHCP4_DISCOVER, now);
	arm_at(c, now, now + backoff_ms(c));
}

static void to_init(struct dhcp4_client *c, uint64_t now, uint64_t delay)
{
	new_exchange(c, DHCP4_S_INIT, now);
	if (delay)
		arm_at(c, now, now + delay);
	else
		discover(c, now);
}

/* REQUESTING and REBOOTING: the same request again, a few times */
static void request_again(struct dhcp4_client *c, uint64_t now)
{
	if (c->tries >= REQUEST_TRIES) {
		if (c->state == DHCP4_S_REBOOTING) {
			/* RFC 2131 3.2: no answer, the lease stands */
			logf_(c, "dhcp: no answer to the lease check, "
			      "keeping %s", ip4(c->lease.addr));
			c->state = DHCP4_S_BOUND;
			arm_at(c, now, c->bound_ms + c->lease.t1 * 1000ull);
			return;
		}
		to_init(c, now, 0);
		return;
	}
	c->tries++;
	send_msg(c, DHCP4_REQUEST, now);
	arm_at(c, now, now + backoff_ms(c));
}

/* RENEWING/REBINDING: again at half the time left to end (T2 or the
 * lease's end), but at least 60 s apart, and at end itself */
static void extend_again(struct dhcp4_client *c, uint64_t now,
			 uint64_t end)
{
	uint64_t next;

	c->tries++;
	send_msg(c, DHCP4_REQUEST, now);
	next = now + (end - now) / 2;
	if (next < now + RENEW_MIN_MS)
		next = now + RENEW_MIN_MS;
	arm_at(c, now, next < end ? next : end);
}

void dhcp4_client_init(struct dhcp4_client *c,
		       const struct dhcp4_client_ops *ops, void *arg,
		       const uint8_t client_id[DHCP4_CLIENT_ID_LEN],
		       uint32_t seed)
{
	memset(c, 0, sizeof(*c));
	c->ops = *ops;
	c->arg = arg;
	memcpy(c->client_id, client_id, DHCP4_CLIENT_ID_LEN);
	c->rand = seed ? seed : 0x9e3779b9u;
	c->state = DHCP4_S_STOPPED;
}

void dhcp4_client_start(struct dhcp4_client *c, uint64_t now)
{
	if (c->state != DHCP4_S_STOPPED)
		return;
	if (c->lease.addr.s_addr && now < lease_end(c)) {
		/* RFC 2131 3.2: INIT-REBOOT, the lease checked */
		new_exchange(c, DHCP4_S_REBOOTING, now);
		request_again(c, now);
		return;
	}
	drop_lease(c, "expired while the link was down");
	to_init(c, now, 0);
}

void dhcp4_client_pause(struct dhcp4_client *c, uint64_t now)
{
	if (c->state == DHCP4_S_STOPPED)
		return;
	c->state = DHCP4_S_STOPPED;
	if (c->lease.addr.s_addr)
		arm_at(c, now, lease_end(c));	/* the expiry still runs */
	else
		c->ops.arm(c->arg, UINT64_MAX);	/* nothing to do */
}

void dhcp4_client_timer(struct dhcp4_client *c, uint64_t now)
{
	if (now < c->next_ms) {		/* early: armed again */
		arm_at(c, now, c->next_ms);
		return;
	}
	if (c->lease.addr.s_addr && now >= lease_end(c)) {
		logf_(c, "dhcp: lease of %s ended", ip4(c->lease.addr));
		drop_lease(c, "the lease ended");
		if (c->state != DHCP4_S_STOPPED)
			to_init(c, now, 0);
		else
			c->ops.arm(c->arg, UINT64_MAX);
		return;
	}
	switch (c->state) {
	case DHCP4_S_INIT:
	case DHCP4_S_SELECTING:
		discover(c, now);
		break;
	case DHCP4_S_REQUESTING:
	case DHCP4_S_REBOOTING:
		request_again(c, now);
		break;
	case DHCP4_S_BOUND:
		new_exchange(c, DHCP4_S_RENEWING, now);
		/* fall through */
	case DHCP4_S_RENEWING:
		if (now >= c->bound_ms + c->lease.t2 * 1000ull) {
			c->state = DHCP4_S_REBINDING;
			extend_again(c, now, lease_end(c));
			break;
		}
		extend_again(c, now, c->bound_ms + c->lease.t2 * 1000ull);
		break;
	case DHCP4_S_REBINDING:
		extend_again(c, now, lease_end(c));
		break;
	case DHCP4_S_STOPPED:
		break;
	}
}

/* An ACK: the lease taken (RFC 2131 4.4.1: T1 0.5 and T2 0.875 of the
 * lease unless the server says; kept in order T1 <= T2 <= lease) */
static void ack(struct dhcp4_client *c, const struct dhcp4_reply *r,
		uint64_t now)
{
	struct dhcp4_lease l, old = c->lease;
	int renewal = old.addr.s_addr == r->yiaddr.s_addr;

	memset(&l, 0, sizeof(l));
	l.addr = r->yiaddr;
	l.mask = r->mask;
	l.router = r->router;
	/* an ACK without option 54 (RFC 2131 requires it): the server of
	 * the lease held, or of the offer */
	l.server = r->server.s_addr ? r->server :
		   c->lease.server.s_addr ? c->lease.server : c->offer_server;
	memcpy(l.dns, r->dns, sizeof(l.dns));
	l.ndns = r->ndns;
	l.lease = r->lease;
	l.t1 = r->t1 ? r->t1 : r->lease / 2;
	l.t2 = r->t2 ? r->t2 : (uint32_t)((uint64_t)r->lease * 7 / 8);
	if (l.t2 > l.lease)
		l.t2 = l.lease;
	if (l.t1 > l.t2)
		l.t1 = l.t2;
	l.mtu = r->mtu;
	c->lease = l;
	c->bound_ms = now;
	c->state = DHCP4_S_BOUND;
	c->tries = 0;
	if (renewal)
		c->st.renewals++;
	else
		c->st.binds++;
	c->ops.bind(c->arg, &c->lease, &old);
	arm_at(c, now, now + l.t1 * 1000ull);
}

void dhcp4_client_input(struct dhcp4_client *c, const uint8_t *p,
			size_t len, uint64_t now)
{
	struct dhcp4_reply r;
	const char *why;

	if (dhcp4_parse(p, len, &r, &why) < 0) {
		c->st.rx_bad++;
		return;
	}
	if (c->state == DHCP4_S_STOPPED || c->state == DHCP4_S_INIT ||
	    c->state == DHCP4_S_BOUND || r.xid != c->xid ||
	    (r.client_id_len &&
	     (r.client_id_len != sizeof(c->client_id) ||
	      memcmp(r.client_id, c->client_id, r.client_id_len)))) {
		c->st.rx_ignored++;
		return;
	}
	switch (r.type) {
	case DHCP4_OFFER:
		if (c->state != DHCP4_S_SELECTING || !r.server.s_addr ||
		    !r.yiaddr.s_addr || r.yiaddr.s_addr == INADDR_BROADCAST) {
			c->st.rx_ignored++;
			return;
		}
		c->st.rx_offer++;
		c->offer = r.yiaddr;
		c->offer_server = r.server;
		c->state = DHCP4_S_REQUESTING;
		c->tries = 0;
		request_again(c, now);
		return;
	case DHCP4_ACK:
		if (c->state == DHCP4_S_SELECTING || !r.yiaddr.s_addr ||
		    r.yiaddr.s_addr == INADDR_BROADCAST || !r.lease ||
		    (c->state == DHCP4_S_REQUESTING &&
		     r.yiaddr.s_addr != c->offer.s_addr)) {
			c->st.rx_ignored++;
			return;
		}
		c->st.rx_ack++;
		ack(c, &r, now);
		return;
	case DHCP4_NAK:
		if (c->state == DHCP4_S_SELECTING) {
			c->st.rx_ignored++;
			return;
		}
		c->st.rx_nak++;
		logf_(c, "dhcp: refused by %s", ip4(r.server));
		drop_lease(c, "refused (DHCPNAK)");
		to_init(c, now, 1000 + rnd(c) % 1001);
		return;
	default:
		c->st.rx_ignored++;
		return;
	}
}

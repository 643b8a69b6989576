// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The IPoIB link tests' harness (see ipoib_harness.h).
 */
#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include <event2/event.h>

#include "fabric/sa_mad.h"
#include "tests/unit/ipoib_harness.h"

/* ---- the clock and the tick (-Wl,--wrap=...) ----------------------------- */

/*
 * Only CLOCK_MONOTONIC and only while a link test runs (setup to
 * teardown): the soft provider's tests, run without setup, wait on real
 * time and would spin on a stopped clock.
 */
static int h_fake;
static time_t h_now = H_T0;

int __real_clock_gettime(clockid_t id, struct timespec *ts);
int __wrap_clock_gettime(clockid_t id, struct timespec *ts);

int __wrap_clock_gettime(clockid_t id, struct timespec *ts)
{
	if (!h_fake || id != CLOCK_MONOTONIC)
		return __real_clock_gettime(id, ts);
	ts->tv_sec = h_now;
	ts->tv_nsec = 0;
	return 0;
}

time_t h_clock(void)
{
	return h_now;
}

void h_clock_advance(unsigned int s)
{
	h_now += s;
}

/* Persistent pure timers made by our objects: the link's tick is the one
 * whose argument is the link (sa_client's timers are one-shot). */
#define H_TIMERS_MAX	8
static struct {
	struct event *ev;
	void *arg;
} h_timers[H_TIMERS_MAX];

struct event *__real_event_new(struct event_base *base, evutil_socket_t fd,
			       short what, event_callback_fn cb, void *arg);
struct event *__wrap_event_new(struct event_base *base, evutil_socket_t fd,
			       short what, event_callback_fn cb, void *arg);
void __real_event_free(struct event *ev);
void __wrap_event_free(struct event *ev);

struct event *__wrap_event_new(struct event_base *base, evutil_socket_t fd,
			       short what, event_callback_fn cb, void *arg)
{
	struct event *ev = __real_event_new(base, fd, what, cb, arg);
	unsigned int i;

	if (!ev || fd != -1 || !(what & EV_PERSIST))
		return ev;
	for (i = 0; i < H_TIMERS_MAX; i++) {
		if (!h_timers[i].ev) {
			h_timers[i].ev = ev;
			h_timers[i].arg = arg;
			return ev;
		}
	}
	fail_msg("harness: more than %d persistent timers", H_TIMERS_MAX);
	return ev;
}

void __wrap_event_free(struct event *ev)
{
	unsigned int i;

	for (i = 0; i < H_TIMERS_MAX; i++)
		if (h_timers[i].ev == ev)
			h_timers[i].ev = NULL;
	__real_event_free(ev);
}

void h_tick(struct t *t)
{
	unsigned int i;

	for (i = 0; i < H_TIMERS_MAX; i++)
		if (h_timers[i].ev && h_timers[i].arg == t->l)
			break;
	assert_true(i < H_TIMERS_MAX);
	/* as the timer firing: the callback runs on the next loop pass and
	 * the persistent timeout stays armed */
	event_active(h_timers[i].ev, EV_TIMEOUT, 1);
	pump(t);
}

void h_tick_for(struct t *t, unsigned int s)
{
	while (s--) {
		h_clock_advance(1);
		h_tick(t);
	}
}

/* ---- the host ------------------------------------------------------------ */

void host_rx(void *arg, const uint8_t *pkt, size_t len)
{
	struct t *t = arg;

	if (t->nrx < H_RX_MAX && len <= sizeof(t->rx[0])) {
		memcpy(t->rx[t->nrx], pkt, len);
		t->rxlen[t->nrx] = len;
	}
	t->nrx++;
}

void host_carrier(void *arg, int up, unsigned int mtu)
{
	struct t *t = arg;

	t->carrier = up;
	t->mtu = mtu;
	if (up)
		t->carrier_ups++;
	else
		t->carrier_downs++;
}

const struct ipoib_link_ops host_ops = {
	.rx = host_rx,
	.carrier = host_carrier,
};

/* ---- the link ------------------------------------------------------------ */

/* Answers are fds, so a few passes: each answer may make the link ask
 * something else. */
void pump(struct t *t)
{
	int i;

	for (i = 0; i < 32; i++)
		event_base_loop(t->base, EVLOOP_NONBLOCK);
}

void port_event(struct t *t, enum fab_event_type type)
{
	struct fab_event ev;

	mem_port_event(t->dev, type);
	while (fab_get_event(t->dev, &ev) == 1)
		ipoib_link_event(t->l, ev.type);
	pump(t);
}

int setup(void **state)
{
	struct ipoib_link_cfg cfg = { .pkey = 0xffff };
	static const uint8_t pg[16] = { 0xfe, 0x80, [8] = 0x00, 0x02, 0xc9,
					0x03, 0x00, 0x01, 0x99, 0x99 };
	struct t *t = calloc(1, sizeof(*t));

	assert_non_null(t);
	h_now = H_T0;
	h_fake = 1;
	mem_register();
	t->base = event_base_new();
	assert_non_null(t->base);
	t->dev = fab_open("mem:", NULL, NULL, 0);
	assert_non_null(t->dev);
	t->l = ipoib_link_new(t->base, t->dev, &cfg, &host_ops, t, NULL, 0);
	assert_non_null(t->l);
	ipoib_bcast_mgid(0xffff, IPOIB_SCOPE_LINK, &t->bcast);
	t->peer.qpn = PEER_QPN;
	memcpy(t->peer.gid.raw, pg, 16);
	mem_sa_add_path(t->dev, &t->peer.gid, PEER_LID, PEER_SL);
	*state = t;
	return 0;
}

int teardown(void **state)
{
	struct t *t = *state;

	ipoib_link_free(t->l, 0);
	fab_close(t->dev);
	event_base_free(t->base);
	free(t);
	h_fake = 0;
	return 0;
}

void relink(struct t *t, const struct ipoib_link_cfg *cfg,
	    const struct ipoib_link_ops *ops)
{
	ipoib_link_free(t->l, 0);
	t->l = ipoib_link_new(t->base, t->dev, cfg, ops, t, NULL, 0);
	assert_non_null(t->l);
}

void bring_up(struct t *t)
{
	assert_int_equal(ipoib_link_start(t->l, NULL, 0), 0);
	pump(t);
	assert_true(ipoib_link_carrier(t->l));
	ipoib_link_hwaddr(t->l, &t->me);
}

/* ---- addresses ----------------------------------------------------------- */

void addr4(struct ipoib_link *l, const char *s, unsigned int plen)
{
	struct inet_prefix p;

	memset(&p, 0, sizeof(p));
	p.addr = h_ip(s);
	p.plen = (uint8_t)plen;
	assert_int_equal(ipoib_link_add_addr(l, &p, NULL, 0), 0);
}

void addr6(struct ipoib_link *l, const char *s, unsigned int plen)
{
	addr4(l, s, plen);	/* h_ip tells the family */
}

struct inet_addr h_ip(const char *s)
{
	struct inet_addr a;

	memset(&a, 0, sizeof(a));
	if (strchr(s, ':')) {
		a.family = AF_INET6;
		assert_int_equal(inet_pton(AF_INET6, s, &a.v6), 1);
	} else {
		a.family = AF_INET;
		assert_int_equal(inet_pton(AF_INET, s, &a.v4), 1);
	}
	return a;
}

struct in_addr h_in4(const char *s)
{
	struct in_addr a;

	assert_int_equal(inet_pton(AF_INET, s, &a), 1);
	return a;
}

struct in6_addr h_in6(const char *s)
{
	struct in6_addr a;

	assert_int_equal(inet_pton(AF_INET6, s, &a), 1);
	return a;
}

/* ---- packets ------------------------------------------------------------- */

size_t udp4_len(const char *src, const char *dst, size_t len, int df,
		uint8_t *p)
{
	assert_true(len >= 28 && len <= 0xffff);
	memset(p, 0, len);
	p[0] = 0x45;
	p[2] = (uint8_t)(len >> 8);
	p[3] = (uint8_t)len;
	if (df)
		p[6] = 0x40;
	p[8] = 64;
	p[9] = 17;
	assert_int_equal(inet_pton(AF_INET, src, p + 12), 1);
	assert_int_equal(inet_pton(AF_INET, dst, p + 16), 1);
	p[21] = 9;		/* ports 9 -> 9 */
	p[23] = 9;
	p[24] = (uint8_t)((len - 20) >> 8);	/* UDP length */
	p[25] = (uint8_t)(len - 20);
	return len;
}

size_t udp4(const char *src, const char *dst, uint8_t mark, uint8_t *p)
{
	udp4_len(src, dst, 29, 0, p);
	p[28] = mark;
	return 29;
}

size_t udp6_len(const char *src, const char *dst, size_t len, uint8_t *p)
{
	assert_true(len >= 48 && len - 40 <= 0xffff);
	memset(p, 0, len);
	p[0] = 0x60;
	p[4] = (uint8_t)((len - 40) >> 8);	/* payload length */
	p[5] = (uint8_t)(len - 40);
	p[6] = 17;
	p[7] = 64;
	assert_int_equal(inet_pton(AF_INET6, src, p + 8), 1);
	assert_int_equal(inet_pton(AF_INET6, dst, p + 24), 1);
	p[41] = 9;
	p[43] = 9;
	p[44] = p[4];
	p[45] = p[5];
	return len;
}

size_t udp6(const char *src, const char *dst, uint8_t mark, uint8_t *p)
{
	udp6_len(src, dst, 49, p);
	p[48] = mark;
	return 49;
}

void from_hw(struct t *t, const struct ipoib_addr *hw, uint16_t ethertype,
	     const uint8_t *pl, size_t len)
{
	uint8_t f[2048];

	assert_true(len + IPOIB_HDR_LEN <= sizeof(f));
	ipoib_hdr_build(ethertype, f, IPOIB_HDR_LEN);
	memcpy(f + IPOIB_HDR_LEN, pl, len);
	mem_inject(t->dev, PEER_LID, hw ? hw->qpn : PEER_QPN, f,
		   len + IPOIB_HDR_LEN);
	pump(t);
}

void from_peer(struct t *t, uint16_t ethertype, const uint8_t *pl,
	       size_t len)
{
	from_hw(t, NULL, ethertype, pl, len);
}

void arp_reply_from(struct t *t, const struct ipoib_addr *hw, const char *ip,
		    const char *our_ip)
{
	struct in_addr sip = h_in4(ip), tip = h_in4(our_ip);
	uint8_t buf[IPOIB_ARP_LEN];
	size_t len;

	len = ipoib_arp_build_reply(hw, &sip, &t->me, &tip, buf, sizeof(buf));
	assert_int_equal(len, IPOIB_ARP_LEN);
	from_hw(t, hw, IPOIB_ETH_P_ARP, buf, len);
}

void na_from(struct t *t, const struct ipoib_addr *hw, const char *ip,
	     const char *our_ip, uint8_t flags)
{
	struct in6_addr a = h_in6(ip), to;
	uint8_t buf[128];
	size_t len;

	to = h_in6(flags & INET_NA_FLAG_SOLICITED ? our_ip : "ff02::1");
	len = ipoib_nd_build_na(&a, &to, &a, flags, hw, buf, sizeof(buf));
	assert_int_not_equal(len, 0);
	from_hw(t, hw, IPOIB_ETH_P_IPV6, buf, len);
}

uint16_t pkt_ethertype(const struct mem_pkt *p)
{
	uint16_t et = 0;

	assert_true(p->len >= IPOIB_HDR_LEN);
	assert_int_equal(ipoib_hdr_parse(p->data, p->len, &et), IPOIB_WIRE_OK);
	return et;
}

void pkt_arp(const struct mem_pkt *p, struct ipoib_arp *arp)
{
	assert_int_equal(pkt_ethertype(p), IPOIB_ETH_P_ARP);
	assert_int_equal(ipoib_arp_parse(p->data + IPOIB_HDR_LEN,
					 p->len - IPOIB_HDR_LEN, arp),
			 IPOIB_WIRE_OK);
}

unsigned int arp_requests_for(struct t *t, const char *tpa)
{
	struct in_addr a = h_in4(tpa);
	const struct mem_pkt *p;
	struct ipoib_arp arp;
	unsigned int i, n = 0;
	uint16_t et;

	for (i = 0; (p = mem_sent(t->dev, i)); i++) {
		if (ipoib_hdr_parse(p->data, p->len, &et) != IPOIB_WIRE_OK ||
		    et != IPOIB_ETH_P_ARP)
			continue;
		pkt_arp(p, &arp);
		if (arp.op == IPOIB_ARPOP_REQUEST && arp.tpa.s_addr == a.s_addr)
			n++;
	}
	return n;
}

/* ---- groups and destinations --------------------------------------------- */

void mgid4(struct t *t, const char *group, union fab_gid *mgid)
{
	struct in_addr g = h_in4(group);

	ipoib_mcast_mgid_ipv4(&g, &t->bcast, mgid);
}

void mgid6(struct t *t, const char *group, union fab_gid *mgid)
{
	struct in6_addr g = h_in6(group);

	ipoib_mcast_mgid_ipv6(&g, &t->bcast, mgid);
}

const struct sa_mcmember *join_of(struct t *t, const union fab_gid *mgid)
{
	const struct mem_sa_req *r;
	unsigned int i;

	assert_int_equal(mem_sa_count(t->dev, MAD_METHOD_SET,
				      SA_ATTR_MCMEMBER_RECORD, mgid), 1);
	for (i = 0; (r = mem_sa_req(t->dev, i)); i++)
		if (r->h.mad.method == MAD_METHOD_SET &&
		    !memcmp(r->rec.mcm.mgid.raw, mgid->raw, 16))
			return &r->rec.mcm;
	return NULL;
}

void assert_to_group(struct t *t, const struct mem_pkt *p,
		     const union fab_gid *mgid)
{
	assert_int_equal(p->qpn, IPOIB_QPN_MCAST);
	assert_int_equal(p->ah.dlid, mem_sa_mlid(t->dev, mgid));
	assert_true(p->ah.is_global);
	assert_memory_equal(p->ah.dgid.raw, mgid->raw, 16);
	assert_int_equal(p->qkey, MEM_QKEY);
}

void assert_to_peer(const struct mem_pkt *p)
{
	assert_int_equal(p->qpn, PEER_QPN);
	assert_int_equal(p->ah.dlid, PEER_LID);
	assert_int_equal(p->ah.sl, PEER_SL);
	assert_int_equal(p->qkey, MEM_QKEY);
}

int neigh_listed(struct t *t, const char *ip)
{
	char buf[4096], *line;
	size_t n = strlen(ip);

	ipoib_link_report(t->l, "neighbors", buf, sizeof(buf));
	for (line = buf; *line; line = strchr(line, '\n') + 1) {
		if (!strncmp(line, ip, n) && line[n] == ' ')
			return 1;
		if (!strchr(line, '\n'))
			break;
	}
	return 0;
}

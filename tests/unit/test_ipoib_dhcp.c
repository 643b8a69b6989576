// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The DHCPv4 client of IPoIB hosts (ulp/ipoib/ipoib_dhcp.c): the RFC 4390
 * fields of what it sends, by offset; the parser's refusals; the RFC 2131
 * states against a server written out here by hand, on a fake clock. */
#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "ulp/ipoib/ipoib_dhcp.h"

static const uint8_t guid[8] = { 0x00, 0x02, 0xc9, 0x07, 0xb5, 0x5f, 0x07,
				 0xd3 };

/* ---- a server's replies, byte by byte ------------------------------------ */

struct srv_msg {
	uint8_t b[600];
	size_t len;
};

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static void srv_start(struct srv_msg *m, uint32_t xid, const char *yiaddr)
{
	memset(m, 0, sizeof(*m));
	m->b[0] = 2;
	m->b[1] = 32;
	put32(m->b + 4, xid);
	m->b[10] = 0x80;
	inet_pton(AF_INET, yiaddr, m->b + 16);
	m->b[236] = 99;
	m->b[237] = 130;
	m->b[238] = 83;
	m->b[239] = 99;
	m->len = 240;
}

static void srv_opt(struct srv_msg *m, uint8_t code, const void *v,
		    uint8_t len)
{
	m->b[m->len++] = code;
	m->b[m->len++] = len;
	memcpy(m->b + m->len, v, len);
	m->len += len;
}

static void srv_opt_ip(struct srv_msg *m, uint8_t code, const char *ip)
{
	uint8_t a[4];

	inet_pton(AF_INET, ip, a);
	srv_opt(m, code, a, 4);
}

static void srv_opt32(struct srv_msg *m, uint8_t code, uint32_t v)
{
	uint8_t a[4];

	put32(a, v);
	srv_opt(m, code, a, 4);
}

/* type, server 10.9.0.1, lease, mask /24, router 10.9.0.254; end */
static void srv_reply(struct srv_msg *m, uint32_t xid, uint8_t type,
		      const char *yiaddr, uint32_t lease)
{
	srv_start(m, xid, yiaddr);
	srv_opt(m, 53, &type, 1);
	srv_opt_ip(m, 54, "10.9.0.1");
	if (lease)
		srv_opt32(m, 51, lease);
	srv_opt_ip(m, 1, "255.255.255.0");
	srv_opt_ip(m, 3, "10.9.0.254");
	m->b[m->len++] = 255;
}

/* ---- the client's world -------------------------------------------------- */

struct sent {
	uint8_t b[DHCP4_MSG_MAX];
	size_t len;
	struct in_addr src, dst;
};

struct world {
	struct sent sent[16];
	unsigned int nsent;
	uint64_t armed;			/* ms from the call, or UINT64_MAX */
	struct dhcp4_lease bound, old;
	unsigned int binds, unbinds;
};

static struct world W;

static void w_send(void *arg, const uint8_t *msg, size_t len,
		   struct in_addr src, struct in_addr dst)
{
	struct sent *s = &W.sent[W.nsent++ % 16];

	(void)arg;
	assert_true(len <= sizeof(s->b));
	memcpy(s->b, msg, len);
	s->len = len;
	s->src = src;
	s->dst = dst;
}

static void w_arm(void *arg, uint64_t ms)
{
	(void)arg;
	W.armed = ms;
}

static void w_bind(void *arg, const struct dhcp4_lease *l,
		   const struct dhcp4_lease *old)
{
	(void)arg;
	W.bound = *l;
	W.old = *old;
	W.binds++;
}

static void w_unbind(void *arg, const struct dhcp4_lease *l, const char *why)
{
	(void)arg;
	(void)why;
	assert_int_equal(l->addr.s_addr, W.bound.addr.s_addr);
	memset(&W.bound, 0, sizeof(W.bound));
	W.unbinds++;
}

static const struct dhcp4_client_ops w_ops = {
	.send = w_send, .arm = w_arm, .bind = w_bind, .unbind = w_unbind,
};

static struct sent *last(void)
{
	assert_true(W.nsent > 0);
	return &W.sent[(W.nsent - 1) % 16];
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

/* option code of a message we sent: its value's offset, or 0 */
static size_t opt_at(const struct sent *s, uint8_t code)
{
	size_t i = 240;

	while (i < s->len && s->b[i] != 255) {
		if (s->b[i] == 0) {
			i++;
			continue;
		}
		if (s->b[i] == code)
			return i + 2;
		i += 2 + s->b[i + 1];
	}
	return 0;
}

static int msg_type(const struct sent *s)
{
	size_t o = opt_at(s, 53);

	return o ? s->b[o] : -1;
}

static uint32_t ip(const char *s)
{
	struct in_addr a;

	inet_pton(AF_INET, s, &a);
	return a.s_addr;
}

static void client_new(struct dhcp4_client *c)
{
	uint8_t id[DHCP4_CLIENT_ID_LEN];

	memset(&W, 0, sizeof(W));
	dhcp4_client_id_ib(guid, id);
	dhcp4_client_init(c, &w_ops, NULL, id, 12345);
}

/* INIT -> BOUND at time t0 with lease seconds, T1/T2 from the server */
static void get_bound(struct dhcp4_client *c, uint64_t t0, uint32_t lease,
		      uint32_t t1, uint32_t t2)
{
	struct srv_msg m;
	uint32_t xid;

	dhcp4_client_start(c, t0);
	assert_int_equal(msg_type(last()), DHCP4_DISCOVER);
	xid = get32(last()->b + 4);
	srv_reply(&m, xid, DHCP4_OFFER, "10.9.0.114", lease);
	dhcp4_client_input(c, m.b, m.len, t0 + 10);
	assert_int_equal(msg_type(last()), DHCP4_REQUEST);
	assert_int_equal(get32(last()->b + 4), xid);
	srv_start(&m, xid, "10.9.0.114");
	srv_opt(&m, 53, (uint8_t[]){ DHCP4_ACK }, 1);
	srv_opt_ip(&m, 54, "10.9.0.1");
	srv_opt32(&m, 51, lease);
	if (t1)
		srv_opt32(&m, 58, t1);
	if (t2)
		srv_opt32(&m, 59, t2);
	srv_opt_ip(&m, 1, "255.255.255.0");
	srv_opt_ip(&m, 3, "10.9.0.254");
	m.b[m.len++] = 255;
	dhcp4_client_input(c, m.b, m.len, t0 + 20);
	assert_int_equal(c->state, DHCP4_S_BOUND);
}

/* ---- tests ------------------------------------------------------------- */

/* RFC 4390 2.1 and RFC 2131 by offset: op 1, htype 32, hlen 0, chaddr
 * zero, the broadcast flag, the magic cookie, option 61 the IB
 * client-identifier, 300 bytes at least */
static void test_discover_fields(void **state)
{
	static const uint8_t want_id[20] = {
		0xff, 0, 0, 0, 0, 0, 2, 0, 0, 2, 0xc9, 0,
		0x00, 0x02, 0xc9, 0x07, 0xb5, 0x5f, 0x07, 0xd3 };
	struct dhcp4_client c;
	struct sent *s;
	uint8_t zero[16] = { 0 };
	size_t o;

	(void)state;
	client_new(&c);
	dhcp4_client_start(&c, 1000);
	assert_int_equal(W.nsent, 1);
	s = last();
	assert_true(s->len >= 300);
	assert_int_equal(s->b[0], 1);
	assert_int_equal(s->b[1], 32);
	assert_int_equal(s->b[2], 0);
	assert_int_equal(s->b[10], 0x80);
	assert_int_equal(s->b[11], 0);
	assert_memory_equal(s->b + 12, zero, 16);	/* ci, yi, si, giaddr */
	assert_memory_equal(s->b + 28, zero, 16);	/* chaddr */
	assert_memory_equal(s->b + 236, "\x63\x82\x53\x63", 4);
	assert_int_equal(msg_type(s), DHCP4_DISCOVER);
	o = opt_at(s, 61);
	assert_true(o != 0);
	assert_int_equal(s->b[o - 1], 20);
	assert_memory_equal(s->b + o, want_id, 20);
	assert_int_equal(s->src.s_addr, 0);
	assert_int_equal(s->dst.s_addr, INADDR_BROADCAST);
	/* RFC 2131 4.1: the first retransmission 4 s (+-1 s) later */
	assert_true(W.armed >= 3000 && W.armed <= 5000);
}

static void test_parse_refusals(void **state)
{
	struct dhcp4_reply r;
	struct srv_msg m;
	const char *why;

	(void)state;
	srv_reply(&m, 1, DHCP4_OFFER, "10.9.0.5", 60);
	assert_int_equal(dhcp4_parse(m.b, m.len, &r, &why), 0);
	assert_int_equal(r.type, DHCP4_OFFER);
	assert_int_equal(r.yiaddr.s_addr, ip("10.9.0.5"));
	assert_int_equal(r.server.s_addr, ip("10.9.0.1"));
	assert_int_equal(r.mask.s_addr, ip("255.255.255.0"));
	assert_int_equal(r.router.s_addr, ip("10.9.0.254"));
	assert_int_equal(r.lease, 60);
	/* short */
	assert_int_equal(dhcp4_parse(m.b, 239, &r, &why), -1);
	/* a request, not a reply */
	m.b[0] = 1;
	assert_int_equal(dhcp4_parse(m.b, m.len, &r, &why), -1);
	m.b[0] = 2;
	/* no cookie */
	m.b[236] = 0;
	assert_int_equal(dhcp4_parse(m.b, m.len, &r, &why), -1);
	m.b[236] = 99;
	/* no end option */
	assert_int_equal(dhcp4_parse(m.b, m.len - 1, &r, &why), -1);
	/* an option running past the end */
	srv_start(&m, 1, "10.9.0.5");
	m.b[m.len++] = 51;
	m.b[m.len++] = 200;
	m.b[m.len++] = 1;
	assert_int_equal(dhcp4_parse(m.b, m.len, &r, &why), -1);
	/* a known option of a wrong length */
	srv_start(&m, 1, "10.9.0.5");
	srv_opt(&m, 54, "\x0a\x09\x00", 3);
	m.b[m.len++] = 255;
	assert_int_equal(dhcp4_parse(m.b, m.len, &r, &why), -1);
	srv_start(&m, 1, "10.9.0.5");
	srv_opt(&m, 3, "\x0a\x09\x00\x01\x02", 5);
	m.b[m.len++] = 255;
	assert_int_equal(dhcp4_parse(m.b, m.len, &r, &why), -1);
	/* unknown options are skipped; overload (52) reads file too */
	srv_start(&m, 1, "10.9.0.5");
	srv_opt(&m, 200, "abc", 3);
	srv_opt(&m, 52, "\x01", 1);
	m.b[m.len++] = 255;
	m.b[108] = 53;
	m.b[109] = 1;
	m.b[110] = DHCP4_ACK;
	m.b[111] = 255;
	assert_int_equal(dhcp4_parse(m.b, m.len, &r, &why), 0);
	assert_int_equal(r.type, DHCP4_ACK);
	/* ... whose options must fit in it too */
	m.b[108] = 51;
	m.b[109] = 4;
	memset(m.b + 110, 0, 126);
	m.b[232] = 51;
	m.b[233] = 9;
	assert_int_equal(dhcp4_parse(m.b, m.len, &r, &why), -1);
}

/* DISCOVER, OFFER, REQUEST (50 and 54 the offer's), ACK: bound with the
 * lease's values; T1 at half the lease */
static void test_bind(void **state)
{
	struct dhcp4_client c;
	struct srv_msg m;
	struct sent *s;
	uint32_t xid;
	size_t o;

	(void)state;
	client_new(&c);
	dhcp4_client_start(&c, 0);
	xid = get32(last()->b + 4);
	/* another exchange's offer, and a NAK while selecting: ignored */
	srv_reply(&m, xid + 1, DHCP4_OFFER, "10.9.0.99", 60);
	dhcp4_client_input(&c, m.b, m.len, 5);
	srv_reply(&m, xid, DHCP4_NAK, "0.0.0.0", 0);
	dhcp4_client_input(&c, m.b, m.len, 5);
	assert_int_equal(c.st.rx_ignored, 2);
	assert_int_equal(W.nsent, 1);
	/* an offer without a server identifier: ignored */
	srv_start(&m, xid, "10.9.0.114");
	srv_opt(&m, 53, (uint8_t[]){ DHCP4_OFFER }, 1);
	m.b[m.len++] = 255;
	dhcp4_client_input(&c, m.b, m.len, 6);
	assert_int_equal(c.st.rx_ignored, 3);
	/* garbage: counted bad */
	dhcp4_client_input(&c, (const uint8_t *)"junk", 4, 7);
	assert_int_equal(c.st.rx_bad, 1);
	srv_reply(&m, xid, DHCP4_OFFER, "10.9.0.114", 600);
	dhcp4_client_input(&c, m.b, m.len, 10);
	s = last();
	assert_int_equal(msg_type(s), DHCP4_REQUEST);
	assert_int_equal(s->dst.s_addr, INADDR_BROADCAST);
	o = opt_at(s, 50);
	assert_true(o);
	assert_memory_equal(s->b + o, "\x0a\x09\x00\x72", 4);
	o = opt_at(s, 54);
	assert_true(o);
	assert_memory_equal(s->b + o, "\x0a\x09\x00\x01", 4);
	assert_true(opt_at(s, 61));
	/* an ACK for another address than offered: ignored */
	srv_reply(&m, xid, DHCP4_ACK, "10.9.0.115", 600);
	dhcp4_client_input(&c, m.b, m.len, 15);
	assert_int_equal(W.binds, 0);
	/* an ACK that echoes another client's identifier: ignored */
	srv_reply(&m, xid, DHCP4_ACK, "10.9.0.114", 600);
	m.len--;
	srv_opt(&m, 61, "\xff\x01\x02", 3);
	m.b[m.len++] = 255;
	dhcp4_client_input(&c, m.b, m.len, 15);
	assert_int_equal(W.binds, 0);
	srv_reply(&m, xid, DHCP4_ACK, "10.9.0.114", 600);
	dhcp4_client_input(&c, m.b, m.len, 20);
	assert_int_equal(W.binds, 1);
	assert_int_equal(W.bound.addr.s_addr, ip("10.9.0.114"));
	assert_int_equal(W.bound.mask.s_addr, ip("255.255.255.0"));
	assert_int_equal(W.bound.router.s_addr, ip("10.9.0.254"));
	assert_int_equal(W.bound.server.s_addr, ip("10.9.0.1"));
	assert_int_equal(W.bound.lease, 600);
	assert_int_equal(W.bound.t1, 300);
	assert_int_equal(W.bound.t2, 525);
	assert_int_equal(W.old.addr.s_addr, 0);
	assert_int_equal(W.armed, 300000);
	/* bound: replies are nobody's business */
	dhcp4_client_input(&c, m.b, m.len, 30);
	assert_int_equal(W.binds, 1);
}

/* T1: REQUEST unicast to the server from the address (ciaddr, no 50/54,
 * no broadcast flag); an ACK renews; T2: broadcast; the end: unbound and
 * DISCOVER again */
static void test_renew_rebind_expire(void **state)
{
	struct dhcp4_client c;
	struct srv_msg m;
	struct sent *s;
	uint32_t xid;

	(void)state;
	client_new(&c);
	get_bound(&c, 0, 600, 100, 200);
	assert_int_equal(W.armed, 100000);	/* bound at 20 ms */
	dhcp4_client_timer(&c, 100020);
	s = last();
	assert_int_equal(c.state, DHCP4_S_RENEWING);
	assert_int_equal(msg_type(s), DHCP4_REQUEST);
	assert_int_equal(s->src.s_addr, ip("10.9.0.114"));
	assert_int_equal(s->dst.s_addr, ip("10.9.0.1"));
	assert_memory_equal(s->b + 12, "\x0a\x09\x00\x72", 4);
	assert_int_equal(s->b[10], 0);
	assert_int_equal(opt_at(s, 50), 0);
	assert_int_equal(opt_at(s, 54), 0);
	/* the next try: in 60 s (half of the 100 s left to T2 is less;
	 * RFC 2131 4.4.5's minimum) */
	assert_int_equal(W.armed, 60000);
	xid = get32(s->b + 4);
	srv_reply(&m, xid, DHCP4_ACK, "10.9.0.114", 600);
	dhcp4_client_input(&c, m.b, m.len, 101000);
	assert_int_equal(c.state, DHCP4_S_BOUND);
	assert_int_equal(c.st.renewals, 1);
	assert_int_equal(W.binds, 2);
	assert_int_equal(W.old.addr.s_addr, ip("10.9.0.114"));
	/* no answers now: renewing at T1, rebinding at T2, gone at the end */
	dhcp4_client_timer(&c, 101000 + 300000);
	assert_int_equal(c.state, DHCP4_S_RENEWING);
	dhcp4_client_timer(&c, 101000 + 525000);
	assert_int_equal(c.state, DHCP4_S_REBINDING);
	s = last();
	assert_int_equal(s->dst.s_addr, INADDR_BROADCAST);
	assert_int_equal(s->src.s_addr, ip("10.9.0.114"));
	assert_int_equal(W.unbinds, 0);
	dhcp4_client_timer(&c, 101000 + 600000);
	assert_int_equal(W.unbinds, 1);
	assert_int_equal(c.st.expiries, 1);
	assert_int_equal(msg_type(last()), DHCP4_DISCOVER);
	assert_int_equal(last()->src.s_addr, 0);
}

/* A NAK drops the lease and DISCOVERs after 1 to 2 s */
static void test_nak(void **state)
{
	struct dhcp4_client c;
	struct srv_msg m;
	unsigned int n;

	(void)state;
	client_new(&c);
	get_bound(&c, 0, 600, 0, 0);
	dhcp4_client_timer(&c, 300020);
	srv_reply(&m, get32(last()->b + 4), DHCP4_NAK, "0.0.0.0", 0);
	n = W.nsent;
	dhcp4_client_input(&c, m.b, m.len, 300100);
	assert_int_equal(W.unbinds, 1);
	assert_int_equal(c.st.rx_nak, 1);
	assert_int_equal(W.nsent, n);
	assert_true(W.armed >= 1000 && W.armed <= 2000);
	dhcp4_client_timer(&c, 300100 + W.armed);
	assert_int_equal(msg_type(last()), DHCP4_DISCOVER);
}

/* Retransmissions: DISCOVER at 4, 8, 16, 32, 64, 64 s (+-1 s); REQUEST
 * four times, then DISCOVER again */
static void test_backoff(void **state)
{
	static const unsigned int want[] = { 4, 8, 16, 32, 64, 64 };
	struct dhcp4_client c;
	struct srv_msg m;
	uint64_t now = 0;
	unsigned int i;

	(void)state;
	client_new(&c);
	dhcp4_client_start(&c, now);
	for (i = 0; i < 6; i++) {
		assert_true(W.armed >= want[i] * 1000 - 1000 &&
			    W.armed <= want[i] * 1000 + 1000);
		now += W.armed;
		dhcp4_client_timer(&c, now);
		assert_int_equal(msg_type(last()), DHCP4_DISCOVER);
	}
	assert_int_equal(c.st.tx_discover, 7);
	/* secs counts from the first DISCOVER */
	assert_true(((unsigned int)last()->b[8] << 8 | last()->b[9]) >=
		    now / 1000 - 1);
	srv_reply(&m, get32(last()->b + 4), DHCP4_OFFER, "10.9.0.114", 60);
	dhcp4_client_input(&c, m.b, m.len, now);
	for (i = 0; i < 4; i++) {
		now += W.armed;
		dhcp4_client_timer(&c, now);
	}
	assert_int_equal(c.st.tx_request, 4);
	assert_int_equal(msg_type(last()), DHCP4_DISCOVER);
	assert_int_equal(c.state, DHCP4_S_SELECTING);
}

/* Link down and up while bound: the lease checked (INIT-REBOOT: 50, no
 * 54, broadcast); no answer: kept; expired while down: dropped */
static void test_reboot(void **state)
{
	struct dhcp4_client c;
	struct sent *s;
	uint64_t now;
	unsigned int i;

	(void)state;
	client_new(&c);
	get_bound(&c, 0, 600, 0, 0);
	dhcp4_client_pause(&c, 1000);
	assert_int_equal(c.state, DHCP4_S_STOPPED);
	dhcp4_client_start(&c, 2000);
	s = last();
	assert_int_equal(c.state, DHCP4_S_REBOOTING);
	assert_int_equal(msg_type(s), DHCP4_REQUEST);
	assert_true(opt_at(s, 50));
	assert_int_equal(opt_at(s, 54), 0);
	assert_int_equal(s->dst.s_addr, INADDR_BROADCAST);
	now = 2000;
	for (i = 0; i < 4; i++) {
		now += W.armed;
		dhcp4_client_timer(&c, now);
	}
	assert_int_equal(c.state, DHCP4_S_BOUND);
	assert_int_equal(W.unbinds, 0);
	/* down past the lease's end: gone, DISCOVER at the link's return */
	dhcp4_client_pause(&c, now);
	dhcp4_client_timer(&c, 700000);
	assert_int_equal(W.unbinds, 1);
	assert_int_equal(c.state, DHCP4_S_STOPPED);
	dhcp4_client_start(&c, 710000);
	assert_int_equal(msg_type(last()), DHCP4_DISCOVER);
}

/* An ACK without a server identifier: the renewal goes to the server of
 * the offer, not to 0.0.0.0 */
static void test_ack_without_server(void **state)
{
	struct dhcp4_client c;
	struct srv_msg m;
	uint32_t xid;

	(void)state;
	client_new(&c);
	dhcp4_client_start(&c, 0);
	xid = get32(last()->b + 4);
	srv_reply(&m, xid, DHCP4_OFFER, "10.9.0.114", 600);
	dhcp4_client_input(&c, m.b, m.len, 10);
	srv_start(&m, xid, "10.9.0.114");
	srv_opt(&m, 53, (uint8_t[]){ DHCP4_ACK }, 1);
	srv_opt32(&m, 51, 600);
	m.b[m.len++] = 255;
	dhcp4_client_input(&c, m.b, m.len, 20);
	assert_int_equal(c.state, DHCP4_S_BOUND);
	assert_int_equal(W.bound.server.s_addr, ip("10.9.0.1"));
	dhcp4_client_timer(&c, 300020);
	assert_int_equal(last()->dst.s_addr, ip("10.9.0.1"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_discover_fields),
		cmocka_unit_test(test_parse_refusals),
		cmocka_unit_test(test_bind),
		cmocka_unit_test(test_renew_rebind_expire),
		cmocka_unit_test(test_nak),
		cmocka_unit_test(test_backoff),
		cmocka_unit_test(test_reboot),
		cmocka_unit_test(test_ack_without_server),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

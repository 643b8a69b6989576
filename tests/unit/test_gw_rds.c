// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The gateway's RDS exports (gateway/gw_rds.c) over loopback UDP, with
 * the RDS endpoint replaced by a recorder: a LAN datagram becomes one
 * send named after the LAN client, the IB host's answer goes back from
 * the export's port; under congestion (ENOBUFS) datagrams wait in order
 * and go when the host clears its map or on the tick, past the queue
 * they are dropped and counted; oversize, malformed, the other family
 * and the limit are counted drops; idle flows are reaped (the module's
 * clock wrapped).  The fabric is wrapped: no device.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include <event2/event.h>

#include "gateway/gw_rds.h"
#include "gateway/ibgwd.h"

/* ---- the endpoint, recorded ---------------------------------------------- */

#define SENT_MAX	256

static struct {
	struct rds_ep_ops ops;
	void *arg;
	int enobufs;		/* sends refused while set */
	unsigned int nsent;
	struct rds_name src[SENT_MAX], dst[SENT_MAX];
	size_t len[SENT_MAX];
	uint8_t first[SENT_MAX];	/* the first byte of each */
	struct rds_ep_stats st;
} ep;
static int ep_dummy;

struct rds_ep *rds_ep_new(struct event_base *base, struct fab_dev *dev,
			  const struct rds_ep_cfg *cfg,
			  const struct rds_ep_ops *ops, void *arg, char *err,
			  size_t errlen)
{
	(void)base;
	(void)dev;
	(void)err;
	(void)errlen;
	assert_int_equal(cfg->profile, RDS_PROFILE_SOFT);
	ep.ops = *ops;
	ep.arg = arg;
	return (struct rds_ep *)&ep_dummy;
}

void rds_ep_free(struct rds_ep *e)
{
	assert_ptr_equal(e, &ep_dummy);
}

int rds_ep_send(struct rds_ep *e, const struct rds_name *src,
		const struct rds_name *dst, const struct iovec *iov,
		int iovcnt, void *ctx)
{
	(void)e;
	(void)ctx;
	assert_int_equal(iovcnt, 1);
	if (ep.enobufs) {
		errno = ENOBUFS;
		return -1;
	}
	assert_true(ep.nsent < SENT_MAX);
	ep.src[ep.nsent] = *src;
	ep.dst[ep.nsent] = *dst;
	ep.len[ep.nsent] = iov[0].iov_len;
	ep.first[ep.nsent] = iov[0].iov_len ?
			     ((const uint8_t *)iov[0].iov_base)[0] : 0;
	ep.nsent++;
	return 0;
}

const struct rds_ep_stats *rds_ep_stats(const struct rds_ep *e)
{
	(void)e;
	return &ep.st;
}

/* ---- the fabric, wrapped ------------------------------------------------- */

static int devfd[2] = { -1, -1 };

struct fab_dev *__wrap_fab_open(const char *spec, const char *node,
				char *err, size_t errlen);
struct fab_dev *__wrap_fab_open(const char *spec, const char *node,
				char *err, size_t errlen)
{
	(void)spec;
	(void)node;
	(void)err;
	(void)errlen;
	return (struct fab_dev *)&devfd;
}

void __wrap_fab_close(struct fab_dev *dev);
void __wrap_fab_close(struct fab_dev *dev)
{
	(void)dev;
}

int __wrap_fab_query_port(struct fab_dev *dev, struct fab_port_attr *attr,
			  char *err, size_t errlen);
int __wrap_fab_query_port(struct fab_dev *dev, struct fab_port_attr *attr,
			  char *err, size_t errlen)
{
	(void)dev;
	(void)err;
	(void)errlen;
	memset(attr, 0, sizeof(*attr));
	return 0;
}

int __wrap_fab_pkey_find(const struct fab_port_attr *attr, uint16_t pkey);
int __wrap_fab_pkey_find(const struct fab_port_attr *attr, uint16_t pkey)
{
	(void)attr;
	(void)pkey;
	return 0;
}

int __wrap_fab_dev_fd(struct fab_dev *dev);
int __wrap_fab_dev_fd(struct fab_dev *dev)
{
	(void)dev;
	return devfd[0];
}

int __wrap_fab_get_event(struct fab_dev *dev, struct fab_event *ev);
int __wrap_fab_get_event(struct fab_dev *dev, struct fab_event *ev)
{
	(void)dev;
	(void)ev;
	return 0;
}

/* The module's clock, ahead of the real one by skew seconds. */
static time_t skew;

time_t __real_time(time_t *t);
time_t __wrap_time(time_t *t);
time_t __wrap_time(time_t *t)
{
	time_t now = __real_time(NULL) + skew;

	if (t)
		*t = now;
	return now;
}

/* ---- the harness --------------------------------------------------------- */

static struct ibgwd d;
static struct part part;
static struct gw_rds *g;
static uint16_t xport;		/* the export's LAN port */
static int cl = -1, cl2 = -1;	/* LAN clients on 127.0.0.1 */

static const struct gw_rds_stats *st(void)
{
	return gw_rds_stats(g);
}

static void spin(void)
{
	int i;

	for (i = 0; i < 20; i++)
		event_base_loop(d.base, EVLOOP_NONBLOCK);
}

static int client(uint16_t *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t sl = sizeof(a);
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	assert_true(fd >= 0);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &sl), 0);
	*port = ntohs(a.sin_port);
	return fd;
}

static void to_export(int fd, uint16_t port, uint8_t first, size_t len)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	static uint8_t buf[65536];

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a.sin_port = htons(port);
	memset(buf, 0x5a, len);
	if (len)
		buf[0] = first;
	assert_int_equal(sendto(fd, buf, len, 0, (struct sockaddr *)&a,
				sizeof(a)), (ssize_t)len);
}

static int setup(void **state)
{
	struct gw_part_conf *pc = &part.conf;
	struct gw_rds_export *x;
	char err[256];
	unsigned int tries;

	(void)state;
	memset(&ep, 0, sizeof(ep));
	memset(&part, 0, sizeof(part));
	skew = 0;
	d.base = event_base_new();
	assert_non_null(d.base);
	snprintf(d.conf.fabric, sizeof(d.conf.fabric), "soft:/nowhere");
	assert_int_equal(pipe(devfd), 0);
	part.d = &d;
	part.pc = pc;
	snprintf(pc->name, sizeof(pc->name), "p");
	pc->pkey = 0x7fff;
	pc->rds = 1;
	pc->rds_max_peers = 2;
	pc->nrds_exports = 2;
	x = &pc->rds_exports[0];
	x->ib_port = 7000;
	assert_int_equal(inet_pton(AF_INET, "10.43.0.1", &x->ib_addr.v4), 1);
	x->ib_addr.family = AF_INET;
	x = &pc->rds_exports[1];
	x->ib_port = 7000;
	assert_int_equal(inet_pton(AF_INET6, "fd43::1", &x->ib_addr.v6), 1);
	x->ib_addr.family = AF_INET6;
	for (tries = 0; tries < 50 && !g; tries++) {
		xport = (uint16_t)(20000 +
				   (getpid() * 7 + tries * 131) % 30000);
		pc->rds_exports[0].lan_port = xport;
		pc->rds_exports[1].lan_port = xport + 1;
		g = gw_rds_new(&part, err, sizeof(err));
	}
	if (!g)
		fail_msg("gw_rds_new: %s", err);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	gw_rds_free(g);
	g = NULL;
	if (cl >= 0)
		close(cl);
	if (cl2 >= 0)
		close(cl2);
	cl = cl2 = -1;
	close(devfd[0]);
	close(devfd[1]);
	event_base_free(d.base);
	return 0;
}

/* ---- the cases ----------------------------------------------------------- */

static void export_both_ways(void **state)
{
	struct rds_name ib = { .port = 7000 }, me = { .port = 0 };
	struct sockaddr_in from;
	socklen_t sl = sizeof(from);
	uint8_t buf[100];
	uint16_t cport;

	(void)state;
	cl = client(&cport);
	to_export(cl, xport, 0x11, 100);
	spin();
	assert_int_equal(ep.nsent, 1);
	assert_int_equal(ep.src[0].addr.family, AF_INET);
	assert_int_equal(ntohl(ep.src[0].addr.v4.s_addr), INADDR_LOOPBACK);
	assert_int_equal(ep.src[0].port, cport);
	assert_int_equal(ep.dst[0].port, 7000);
	assert_int_equal(ntohl(ep.dst[0].addr.v4.s_addr), 0x0a2b0001);
	assert_int_equal(ep.len[0], 100);
	assert_int_equal(st()->udp_rx, 1);
	assert_int_equal(st()->exported, 1);
	assert_int_equal(st()->flows_now, 1);

	/* the IB host answers the client's name: UDP from the export */
	ib.addr = ep.dst[0].addr;
	me = ep.src[0];
	memset(buf, 0x22, sizeof(buf));
	assert_int_equal(ep.ops.deliver(ep.arg, &me, &ib, buf, 60), 0);
	assert_int_equal(recvfrom(cl, buf, sizeof(buf), MSG_DONTWAIT,
				  (struct sockaddr *)&from, &sl), 60);
	assert_int_equal(ntohs(from.sin_port), xport);
	assert_int_equal(buf[0], 0x22);
	assert_int_equal(st()->udp_tx, 1);

	/* a second datagram of the client: the same flow */
	to_export(cl, xport, 0x12, 10);
	spin();
	assert_int_equal(ep.nsent, 2);
	assert_int_equal(st()->flows_now, 1);
	assert_int_equal(st()->mappings_made, 1);
}

static void congestion_holds_in_order(void **state)
{
	uint16_t cport;
	unsigned int i;
	struct inet_addr ib;

	(void)state;
	cl = client(&cport);
	ep.enobufs = 1;
	for (i = 0; i < 5; i++)
		to_export(cl, xport, (uint8_t)i, 20);
	spin();
	assert_int_equal(ep.nsent, 0);
	assert_int_equal(st()->congested, 1);	/* the first try only */
	assert_int_equal(st()->held_now, 5);
	ep.enobufs = 0;
	/* a datagram while others wait goes behind them */
	to_export(cl, xport, 5, 20);
	spin();
	assert_int_equal(ep.nsent, 0);
	assert_int_equal(st()->held_now, 6);
	ib.family = AF_INET;
	inet_pton(AF_INET, "10.43.0.1", &ib.v4);
	ep.ops.uncongested(ep.arg, &ib);
	assert_int_equal(ep.nsent, 6);
	for (i = 0; i < 6; i++)
		assert_int_equal(ep.first[i], i);
	assert_int_equal(st()->held_now, 0);
	assert_int_equal(st()->udp_rx, 6);
	assert_int_equal(st()->drop_congested, 0);
}

static void congestion_queue_bounded(void **state)
{
	uint16_t cport;
	unsigned int i;

	(void)state;
	cl = client(&cport);
	ep.enobufs = 1;
	for (i = 0; i < 70; i++) {
		to_export(cl, xport, (uint8_t)i, 20);
		if (i % 16 == 15)
			spin();
	}
	spin();
	assert_int_equal(st()->held_now, 64);
	assert_int_equal(st()->drop_congested, 6);
}

static void tick_retries(void **state)
{
	uint16_t cport;
	int i;

	(void)state;
	cl = client(&cport);
	ep.enobufs = 1;
	to_export(cl, xport, 1, 20);
	spin();
	assert_int_equal(st()->held_now, 1);
	ep.enobufs = 0;		/* no uncongested: max_conns, say */
	for (i = 0; i < 60 && ep.nsent == 0; i++) {
		usleep(50000);
		spin();
	}
	assert_int_equal(ep.nsent, 1);
	assert_int_equal(st()->held_now, 0);
}

static void drops_counted(void **state)
{
	static uint8_t big[65508];
	struct rds_name ib = { .port = 7000 }, me, bad;
	uint16_t cport, cport2;

	(void)state;
	cl = client(&cport);
	to_export(cl, xport, 1, 8);
	spin();
	assert_int_equal(ep.nsent, 1);
	ib.addr = ep.dst[0].addr;
	me = ep.src[0];

	/* over the LAN's UDP limit */
	assert_int_equal(ep.ops.deliver(ep.arg, &me, &ib, big, 65508), 0);
	assert_int_equal(st()->drop_oversize, 1);
	assert_int_equal(ep.ops.deliver(ep.arg, &me, &ib, big, 65507), 0);
	assert_int_equal(st()->udp_tx, 1);

	/* port 0, families differ */
	bad = ib;
	bad.port = 0;
	assert_int_equal(ep.ops.deliver(ep.arg, &me, &bad, big, 10), 0);
	bad = ib;
	bad.addr.family = AF_INET6;
	assert_int_equal(ep.ops.deliver(ep.arg, &me, &bad, big, 10), 0);
	assert_int_equal(st()->drop_malformed, 2);

	/* an IPv4 client of the IPv6 host's export */
	to_export(cl, xport + 1, 1, 8);
	spin();
	assert_int_equal(st()->drop_family, 1);
	assert_int_equal(ep.nsent, 1);

	/* rds_max_peers = 2: the third client is over */
	cl2 = client(&cport2);
	to_export(cl2, xport, 1, 8);
	spin();
	assert_int_equal(st()->flows_now, 2);
	{
		uint16_t p3;
		int fd3 = client(&p3);

		to_export(fd3, xport, 1, 8);
		spin();
		close(fd3);
	}
	assert_int_equal(st()->drop_limit, 1);
	assert_int_equal(st()->flows_now, 2);
	assert_int_equal(ep.nsent, 2);
}

/* Wait for the 1 s tick to have run (with the clock as it is). */
static void next_tick(void)
{
	int i;

	for (i = 0; i < 25; i++) {
		usleep(50000);
		spin();
	}
}

static void idle_reaped(void **state)
{
	uint16_t cport, cport2;

	(void)state;
	cl = client(&cport);
	cl2 = client(&cport2);
	to_export(cl, xport, 1, 8);
	spin();
	ep.enobufs = 1;		/* cl2's datagram waits */
	to_export(cl2, xport, 2, 8);
	spin();
	assert_int_equal(st()->flows_now, 2);
	assert_int_equal(st()->held_now, 1);
	skew = 57;	/* with the real seconds that pass */
	next_tick();
	assert_int_equal(st()->reaped, 0);
	skew = 61;		/* idle: the flow without a queue goes */
	next_tick();
	assert_int_equal(st()->reaped, 1);
	assert_int_equal(st()->flows_now, 1);
	assert_int_equal(st()->held_now, 1);
	skew = 121;		/* twice that: the queue is given up */
	next_tick();
	assert_int_equal(st()->reaped, 2);
	assert_int_equal(st()->flows_now, 0);
	assert_int_equal(st()->held_now, 0);
	assert_int_equal(st()->drop_congested, 1);
	/* the client comes back: a new flow */
	ep.enobufs = 0;
	to_export(cl, xport, 3, 8);
	spin();
	assert_int_equal(st()->flows_now, 1);
	assert_int_equal(st()->mappings_made, 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(export_both_ways, setup,
						teardown),
		cmocka_unit_test_setup_teardown(congestion_holds_in_order,
						setup, teardown),
		cmocka_unit_test_setup_teardown(congestion_queue_bounded,
						setup, teardown),
		cmocka_unit_test_setup_teardown(tick_retries, setup,
						teardown),
		cmocka_unit_test_setup_teardown(drops_counted, setup,
						teardown),
		cmocka_unit_test_setup_teardown(idle_reaped, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

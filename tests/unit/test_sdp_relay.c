// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The SDP service's TCP relay (ulp/sdp/sdp_relay.c), between a unix
 * stream pair (the program's end P, the relay's S) and a loopback TCP
 * connection (the relay's T, the "server" L): bytes both ways intact,
 * half-close each way, back-pressure (a server that does not read stops
 * the program's writes), a reset from the server, and SO_LINGER 0's
 * abort at the program's close reaching the server as an RST.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <event2/event.h>

#include "ulp/sdp/sdp_relay.h"

struct rig {
	struct event_base *base;
	struct sdp_relay *r;
	int p, l;		/* the program's end, the server's */
	int done;
	uint64_t bytes;
	int err;		/* done()'s */
};

static void on_done(void *arg, uint64_t bytes, int err)
{
	struct rig *g = arg;

	g->done++;
	g->bytes = bytes;
	g->err = err;
}

static void spin(struct rig *g, int ms)
{
	struct timespec ts = { 0, 1000000 };
	int i;

	for (i = 0; i < ms; i++) {
		event_base_loop(g->base, EVLOOP_NONBLOCK);
		nanosleep(&ts, NULL);
	}
}

static void rig_up(struct rig *g)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof(a);
	int sp[2], ls, t;

	memset(g, 0, sizeof(*g));
	g->base = event_base_new();
	assert_non_null(g->base);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sp), 0);
	ls = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(ls >= 0);
	assert_int_equal(bind(ls, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(ls, (struct sockaddr *)&a, &al), 0);
	assert_int_equal(listen(ls, 1), 0);
	t = socket(AF_INET, SOCK_STREAM, 0);
	assert_int_equal(connect(t, (struct sockaddr *)&a, sizeof(a)), 0);
	g->l = accept(ls, NULL, NULL);
	assert_true(g->l >= 0);
	close(ls);
	g->p = sp[0];
	g->r = sdp_relay_new(g->base, sp[1], t, on_done, g);
	assert_non_null(g->r);
	fcntl(g->p, F_SETFL, O_NONBLOCK);
	fcntl(g->l, F_SETFL, O_NONBLOCK);
}

static void rig_down(struct rig *g)
{
	if (!g->done)
		sdp_relay_free(g->r);
	if (g->p >= 0)
		close(g->p);
	if (g->l >= 0)
		close(g->l);
	event_base_free(g->base);
}

/* Move len bytes from fd a to fd b through the relay: what b reads. */
static size_t pump(struct rig *g, int a, int b, const uint8_t *src,
		   uint8_t *dst, size_t len)
{
	size_t sent = 0, got = 0;
	int rounds = 0;
	ssize_t n;

	while (got < len && rounds++ < 20000) {
		if (sent < len) {
			n = send(a, src + sent, len - sent,
				 MSG_DONTWAIT | MSG_NOSIGNAL);
			if (n > 0)
				sent += (size_t)n;
		}
		event_base_loop(g->base, EVLOOP_NONBLOCK);
		n = recv(b, dst + got, len - got, MSG_DONTWAIT);
		if (n > 0)
			got += (size_t)n;
	}
	return got;
}

static void test_both_ways(void **state)
{
	static uint8_t src[1 << 20], dst[1 << 20];
	struct rig g;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(src); i++)
		src[i] = (uint8_t)(i * 7 + (i >> 11));
	rig_up(&g);
	assert_int_equal(pump(&g, g.p, g.l, src, dst, sizeof(src)),
			 sizeof(src));
	assert_memory_equal(src, dst, sizeof(src));
	memset(dst, 0, sizeof(dst));
	assert_int_equal(pump(&g, g.l, g.p, src, dst, sizeof(src)),
			 sizeof(src));
	assert_memory_equal(src, dst, sizeof(src));
	assert_int_equal(g.done, 0);
	rig_down(&g);
}

static void test_half_close(void **state)
{
	struct rig g;
	char b[16];

	(void)state;
	rig_up(&g);
	/* the program's FIN reaches the server; the server still sends */
	assert_int_equal(send(g.p, "ping", 4, 0), 4);
	shutdown(g.p, SHUT_WR);
	spin(&g, 50);
	assert_int_equal(recv(g.l, b, sizeof(b), 0), 4);
	assert_int_equal(recv(g.l, b, sizeof(b), 0), 0);
	assert_int_equal(send(g.l, "pong", 4, 0), 4);
	spin(&g, 50);
	assert_int_equal(recv(g.p, b, sizeof(b), 0), 4);
	assert_memory_equal(b, "pong", 4);
	assert_int_equal(g.done, 0);
	/* the server's FIN: both ways closed, the relay is over */
	shutdown(g.l, SHUT_WR);
	spin(&g, 50);
	assert_int_equal(recv(g.p, b, sizeof(b), 0), 0);
	assert_int_equal(g.done, 1);
	assert_int_equal(g.bytes, 8);
	rig_down(&g);
}

static void test_back_pressure(void **state)
{
	static uint8_t buf[65536];
	struct rig g;
	size_t sent = 0;
	int quiet = 0;
	ssize_t n;

	(void)state;
	rig_up(&g);
	/* the server reads nothing: the program must come to EAGAIN */
	while (quiet < 50 && sent < (64u << 20)) {
		n = send(g.p, buf, sizeof(buf), MSG_DONTWAIT);
		if (n > 0) {
			sent += (size_t)n;
			quiet = 0;
		} else {
			assert_int_equal(errno, EAGAIN);
			quiet++;
		}
		event_base_loop(g.base, EVLOOP_NONBLOCK);
	}
	assert_true(quiet >= 50);
	assert_true(sent < (64u << 20));
	rig_down(&g);
}

static void test_server_reset(void **state)
{
	struct linger lg = { 1, 0 };
	struct rig g;
	char b[16];

	(void)state;
	rig_up(&g);
	assert_int_equal(send(g.p, "x", 1, 0), 1);
	spin(&g, 20);
	/* the server answers, then resets: the answer reaches the program,
	 * and the relay ends with ECONNRESET for it */
	assert_int_equal(send(g.l, "answer", 6, 0), 6);
	spin(&g, 20);
	setsockopt(g.l, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	close(g.l);
	g.l = -1;
	spin(&g, 50);
	assert_int_equal(g.done, 1);
	assert_int_equal(g.err, ECONNRESET);
	assert_int_equal(recv(g.p, b, sizeof(b), 0), 6);
	assert_memory_equal(b, "answer", 6);
	/* the program's end: the relay's end is gone */
	assert_int_equal(recv(g.p, b, sizeof(b), 0), 0);
	rig_down(&g);
}

/* An orderly close by the server, then by the program: no error. */
static void test_clean_end_no_err(void **state)
{
	struct rig g;
	char b[16];

	(void)state;
	rig_up(&g);
	shutdown(g.l, SHUT_WR);
	spin(&g, 30);
	assert_int_equal(recv(g.p, b, sizeof(b), 0), 0);
	shutdown(g.p, SHUT_WR);
	spin(&g, 30);
	assert_int_equal(g.done, 1);
	assert_int_equal(g.err, 0);
	rig_down(&g);
}

static void abort_case(int on)
{
	static uint8_t buf[65536], sink[65536];
	struct rig g;
	size_t sent = 0, got = 0;
	ssize_t n;
	int i, err = 0;

	rig_up(&g);
	sdp_relay_abort_on_close(g.r, on);
	/* until every buffer on the way is full: nothing moves any more */
	for (i = 0; i < 50; ) {
		n = send(g.p, buf, sizeof(buf), MSG_DONTWAIT);
		if (n > 0) {
			sent += (size_t)n;
			i = 0;
		} else {
			i++;
		}
		event_base_loop(g.base, EVLOOP_NONBLOCK);
	}
	close(g.p);
	g.p = -1;
	if (on) {
		/* seen without anything moving: the server has read nothing */
		spin(&g, 20);
		assert_int_equal(g.done, 1);
	}
	for (i = 0; i < 2000 && !err; i++) {
		event_base_loop(g.base, EVLOOP_NONBLOCK);
		n = recv(g.l, sink, sizeof(sink), MSG_DONTWAIT);
		if (n > 0)
			got += (size_t)n;
		else if (n == 0)
			break;
		else if (errno != EAGAIN)
			err = errno;
	}
	if (on) {
		assert_int_equal(err, ECONNRESET);
		assert_true(got < sent);
	} else {
		assert_int_equal(err, 0);
		assert_int_equal(got, sent);
	}
	assert_int_equal(g.done, on ? 1 : 0);
	rig_down(&g);
}

static void test_abort_on_close(void **state)
{
	(void)state;
	abort_case(1);
}

static void test_clean_close(void **state)
{
	(void)state;
	abort_case(0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_both_ways),
		cmocka_unit_test(test_half_close),
		cmocka_unit_test(test_back_pressure),
		cmocka_unit_test(test_server_reset),
		cmocka_unit_test(test_clean_end_no_err),
		cmocka_unit_test(test_abort_on_close),
		cmocka_unit_test(test_clean_close),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

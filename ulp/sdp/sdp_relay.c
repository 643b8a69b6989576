// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The service's TCP relay (sdp_relay.h).  Side 0 is the unix stream end,
 * side 1 the TCP socket; buf[i] holds what was read from side i for side
 * 1 - i.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/event.h>

#include "ulp/sdp/sdp_relay.h"

#define RELAY_BUF	65536

struct sdp_relay {
	int fd[2];
	struct event *rd[2], *wr[2];
	int rd_on[2], wr_on[2];
	char buf[2][RELAY_BUF];
	size_t len[2], off[2];
	int eof[2], shut[2];
	int abort_close;
	struct event *hup_ev;		/* abort_close: on a dup of fd[0] */
	int hup_fd;
	struct event_base *base;
	uint64_t bytes[2];
	int err;			/* the TCP side's error, if it ended so */
	void (*done)(void *arg, uint64_t bytes, int err);
	void *arg;
};

static void ev_set(struct event *ev, int *on, int want)
{
	if (*on == want)
		return;
	*on = want;
	if (want)
		event_add(ev, NULL);
	else
		event_del(ev);
}

static void hup_unwatch(struct sdp_relay *r)
{
	if (r->hup_ev)
		event_free(r->hup_ev);
	r->hup_ev = NULL;
	if (r->hup_fd >= 0)
		close(r->hup_fd);
	r->hup_fd = -1;
}

static void relay_close(struct sdp_relay *r, int reset)
{
	struct linger lg = { 1, 0 };
	int i;

	hup_unwatch(r);
	for (i = 0; i < 2; i++) {
		if (r->rd[i])
			event_free(r->rd[i]);
		if (r->wr[i])
			event_free(r->wr[i]);
		r->rd[i] = r->wr[i] = NULL;
	}
	if (reset)
		setsockopt(r->fd[1], SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	close(r->fd[0]);
	close(r->fd[1]);
}

static void relay_end(struct sdp_relay *r, int reset)
{
	void (*done)(void *, uint64_t, int) = r->done;
	void *arg = r->arg;
	uint64_t bytes = r->bytes[0] + r->bytes[1];
	int err = r->err;

	relay_close(r, reset);
	free(r);
	if (done)
		done(arg, bytes, err);
}

/*
 * The TCP side failed (an RST came, or the peer stopped answering): what
 * it sent before is given to the program as far as its end takes it
 * now, and the error is the relay's end, for the program's next read or
 * write (the service reports it as an SDP connection's reset).
 */
static void tcp_failed(struct sdp_relay *r, int e)
{
	ssize_t n;

	while (r->len[1] > r->off[1]) {
		n = send(r->fd[0], r->buf[1] + r->off[1],
			 r->len[1] - r->off[1], MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n <= 0)
			break;
		r->off[1] += (size_t)n;
		r->bytes[1] += (uint64_t)n;
	}
	r->err = e == EPIPE ? ECONNRESET : e;
	relay_end(r, 1);
}

/* The program released its end (POLLHUP); once we shut the unix side's
 * write half, its shutdown looks the same: then not told apart. */
static int unix_gone(const struct sdp_relay *r)
{
	struct pollfd p = { .fd = r->fd[0], .events = 0 };

	return !r->shut[1] && poll(&p, 1, 0) == 1 && (p.revents & POLLHUP);
}

/* Move what can move; 1 when the relay ended (r is freed). */
static int relay_run(struct sdp_relay *r)
{
	int i, o;
	ssize_t n;

	if (r->abort_close && unix_gone(r)) {
		relay_end(r, 1);
		return 1;
	}
	for (i = 0; i < 2; i++) {
		o = 1 - i;
		/* read side i while its buffer is empty */
		if (!r->eof[i] && r->len[i] == 0) {
			n = recv(r->fd[i], r->buf[i], RELAY_BUF, MSG_DONTWAIT);
			if (n > 0) {
				r->len[i] = (size_t)n;
				r->off[i] = 0;
			} else if (n == 0) {
				if (i == 0 && r->abort_close && unix_gone(r)) {
					relay_end(r, 1);
					return 1;
				}
				r->eof[i] = 1;
			} else if (errno != EAGAIN && errno != EINTR) {
				if (i == 1)
					tcp_failed(r, errno);
				else
					relay_end(r, 1);
				return 1;
			}
		}
		/* write it to the other side */
		while (r->len[i] > r->off[i]) {
			n = send(r->fd[o], r->buf[i] + r->off[i],
				 r->len[i] - r->off[i],
				 MSG_DONTWAIT | MSG_NOSIGNAL);
			if (n < 0) {
				if (errno == EAGAIN || errno == EINTR)
					break;
				if (o == 1)
					tcp_failed(r, errno);
				else
					relay_end(r, 1);
				return 1;
			}
			r->off[i] += (size_t)n;
			r->bytes[i] += (uint64_t)n;
		}
		if (r->len[i] && r->off[i] == r->len[i])
			r->len[i] = r->off[i] = 0;
		if (r->eof[i] && !r->len[i] && !r->shut[i]) {
			shutdown(r->fd[o], SHUT_WR);
			r->shut[i] = 1;
		}
	}
	if (r->shut[0] && r->shut[1]) {
		relay_end(r, 0);
		return 1;
	}
	for (i = 0; i < 2; i++) {
		ev_set(r->rd[i], &r->rd_on[i], !r->eof[i] && !r->len[i]);
		ev_set(r->wr[1 - i], &r->wr_on[1 - i], r->len[i] > 0);
	}
	return 0;
}

static void relay_cb(evutil_socket_t fd, short what, void *arg)
{
	struct sdp_relay *r = arg;
	int k;

	(void)fd;
	(void)what;
	/* a few rounds while both sides keep up */
	for (k = 0; k < 8; k++)
		if (relay_run(r) || (!r->len[0] && !r->len[1]))
			return;
}

struct sdp_relay *sdp_relay_new(struct event_base *base, int unix_fd,
				int tcp_fd,
				void (*done)(void *arg, uint64_t bytes,
					     int err),
				void *arg)
{
	struct sdp_relay *r = calloc(1, sizeof(*r));
	int i;

	if (!r)
		return NULL;
	r->fd[0] = unix_fd;
	r->fd[1] = tcp_fd;
	r->hup_fd = -1;
	r->base = base;
	r->done = done;
	r->arg = arg;
	for (i = 0; i < 2; i++) {
		fcntl(r->fd[i], F_SETFL, fcntl(r->fd[i], F_GETFL) | O_NONBLOCK);
		r->rd[i] = event_new(base, r->fd[i], EV_READ | EV_PERSIST,
				     relay_cb, r);
		r->wr[i] = event_new(base, r->fd[i], EV_WRITE | EV_PERSIST,
				     relay_cb, r);
		if (!r->rd[i] || !r->wr[i]) {
			for (i = 0; i < 2; i++) {
				if (r->rd[i])
					event_free(r->rd[i]);
				if (r->wr[i])
					event_free(r->wr[i]);
			}
			free(r);
			errno = ENOMEM;
			return NULL;
		}
	}
	for (i = 0; i < 2; i++)
		ev_set(r->rd[i], &r->rd_on[i], 1);
	return r;
}

void sdp_relay_free(struct sdp_relay *r)
{
	if (!r)
		return;
	relay_close(r, 1);
	free(r);
}

/*
 * The program's release of its end, seen while neither side moves (the
 * server reads nothing): edge-triggered EPOLLRDHUP on a dup of the unix
 * fd, as sdp_sock.c watches (libevent will not mix edge- and
 * level-triggered events on one fd); relay_run tells it by POLLHUP.
 */
void sdp_relay_abort_on_close(struct sdp_relay *r, int on)
{
	r->abort_close = on;
	if (!on) {
		hup_unwatch(r);
		return;
	}
	if (!r->hup_ev) {
		r->hup_fd = fcntl(r->fd[0], F_DUPFD_CLOEXEC, 0);
		if (r->hup_fd >= 0)
			r->hup_ev = event_new(r->base, r->hup_fd,
					      EV_CLOSED | EV_ET | EV_PERSIST,
					      relay_cb, r);
		if (!r->hup_ev || event_add(r->hup_ev, NULL) < 0)
			hup_unwatch(r);
	}
	relay_cb(-1, 0, r);
}

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A byte relay between two connected stream sockets, for the host's SDP
 * service: a program's non-blocking 'both' connect whose SDP attempt
 * failed goes on as the service's TCP connection, relayed to the stream
 * end the program already holds (its fd, and any epoll registration made
 * after EINPROGRESS, stay valid).  As the SDP path carries a connection:
 * back-pressure (64 KiB each way; a side is read only while its buffer
 * has room), half-close (end of file on one side, once its bytes are out,
 * is shutdown(SHUT_WR) on the other) and reset (an error on either side
 * closes both, the TCP side with SO_LINGER 0: an RST; the TCP side's
 * error is told to done(), for the program).  With abort on
 * close (SO_LINGER {1, 0} on the program's end), the release of the unix
 * side (POLLHUP) resets the TCP side, dropping what was not yet sent.
 */
#ifndef IBGW_SDP_RELAY_H
#define IBGW_SDP_RELAY_H

#include <stdint.h>

struct event_base;
struct sdp_relay;

/* Both fds are the relay's (closed at the end); done(arg, bytes, err)
 * is called once when it is over, after both are closed and the relay
 * freed, with the bytes it carried both ways and err the TCP side's
 * error when that ended it (ECONNRESET for an RST or a write that found
 * the connection gone, ETIMEDOUT ...; 0 otherwise: an orderly end, or
 * the unix side's).  What the TCP side had sent before its error is
 * written to the unix side as far as it takes it at once.  NULL with
 * errno. */
struct sdp_relay *sdp_relay_new(struct event_base *base, int unix_fd,
				int tcp_fd,
				void (*done)(void *arg, uint64_t bytes,
					     int err),
				void *arg);
/* Close both at once (the TCP side reset); done() is not called. */
void sdp_relay_free(struct sdp_relay *r);
/* May end the relay at once (done() called) if the unix side is gone. */
void sdp_relay_abort_on_close(struct sdp_relay *r, int on);

#endif

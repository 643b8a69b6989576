/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Detaching a daemon, one way for ibfabricd, ipoibd and ibgwd.  Owns the
 * order of the steps, nothing of what a daemon does before or after.
 */
#ifndef IBGW_DAEMON_H
#define IBGW_DAEMON_H

#include <stddef.h>

struct event_base;

/*
 * daemon(0, 0): the parent exits (whoever started us sees it return),
 * the child runs in / with its standard descriptors on /dev/null.  Then
 * logging goes to syslog as progname, and base -- the event base made
 * before, or NULL when it is made after -- is reinitialised, because an
 * epoll set and libevent's signal pipe do not carry over a fork as they
 * are.  0, or -1 with errno set and a reason in err, for the caller to
 * log (on stderr still, when daemon() itself failed).
 */
int daemon_detach(const char *progname, int verbose, struct event_base *base,
		  char *err, size_t errlen);

#endif

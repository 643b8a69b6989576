/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * systemd's notification protocol (sd_notify(3)), for ibfabricd and ibgwd:
 * one module, ours, rather than libsystemd's sd_notify.  The protocol is a
 * datagram of "KEY=VALUE" lines to the unix socket named by $NOTIFY_SOCKET,
 * stable and documented; it does not seem worth a link dependency of both
 * daemons on libsystemd (and its own dependencies, inside processes that
 * run with the hardening of their units) for forty lines, and the daemons
 * then behave the same on a system without systemd, where the variable is
 * simply not set.  Owns the variables' meaning ($NOTIFY_SOCKET,
 * $WATCHDOG_USEC, $WATCHDOG_PID), nothing of what a daemon says or when.
 */
#ifndef IBGW_NOTIFY_H
#define IBGW_NOTIFY_H

#include <stddef.h>
#include <stdint.h>

/*
 * Send the message (printf-style; lines "KEY=VALUE" joined by '\n') to
 * $NOTIFY_SOCKET: a path, or "@name" in the abstract namespace.  1 when
 * sent, 0 when the variable is not set (not run by systemd), -1 with errno
 * and a one-line reason in err (a path too long: ENAMETOOLONG; what
 * socket(2) or sendmsg(2) said).  Never blocks.
 */
int notify_send(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * The watchdog interval systemd asks this process for ($WATCHDOG_USEC,
 * WatchdogSec= in the unit), in microseconds; 0 when there is none, when
 * the value is not a number, or when $WATCHDOG_PID names another process.
 * "WATCHDOG=1" is due at least that often; sd_watchdog_enabled(3) advises
 * half of it.
 */
uint64_t notify_watchdog_usec(void);

/* CLOCK_MONOTONIC in microseconds, as "RELOADING=1" wants it beside
 * (MONOTONIC_USEC=). */
uint64_t notify_monotonic_usec(void);

#endif

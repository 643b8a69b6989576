/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Logging for every ibgw program, in the OpenBSD daemon manner.
 *
 * log_warn() appends strerror(errno), log_warnx() does not; log_debug()
 * prints only when verbose; fatal()/fatalx() are for start-up failures and
 * broken invariants and exit(1).  Until log_init() is told otherwise, output
 * goes to stderr; a detached daemon logs to syslog.
 */
#ifndef IBGW_LOG_H
#define IBGW_LOG_H

#include <stdarg.h>

void log_init(const char *progname, int to_stderr, int verbose);
void log_setverbose(int verbose);
int  log_getverbose(void);

void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warnx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void fatal(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));
void fatalx(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));

#endif

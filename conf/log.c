// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>

#include "conf/log.h"

static const char *log_prog = "ibgw";
static int log_stderr = 1;
static int log_verbose;

void log_init(const char *progname, int to_stderr, int verbose)
{
	log_prog = progname;
	log_stderr = to_stderr;
	log_verbose = verbose;
	if (!to_stderr)
		openlog(progname, LOG_PID | LOG_NDELAY, LOG_DAEMON);
}

void log_setverbose(int verbose)
{
	log_verbose = verbose;
}

int log_getverbose(void)
{
	return log_verbose;
}

static void log_vemit(int pri, const char *fmt, va_list ap, int err)
{
	char msg[1024];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (log_stderr) {
		if (err)
			fprintf(stderr, "%s: %s: %s\n", log_prog, msg,
				strerror(err));
		else
			fprintf(stderr, "%s: %s\n", log_prog, msg);
		fflush(stderr);
	} else {
		if (err)
			syslog(pri, "%s: %s", msg, strerror(err));
		else
			syslog(pri, "%s", msg);
	}
}

void log_warn(const char *fmt, ...)
{
	int err = errno;
	va_list ap;

	va_start(ap, fmt);
	log_vemit(LOG_WARNING, fmt, ap, err);
	va_end(ap);
	errno = err;
}

void log_warnx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vemit(LOG_WARNING, fmt, ap, 0);
	va_end(ap);
}

void log_info(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vemit(LOG_INFO, fmt, ap, 0);
	va_end(ap);
}

void log_debug(const char *fmt, ...)
{
	va_list ap;

	if (!log_verbose)
		return;
	va_start(ap, fmt);
	log_vemit(LOG_DEBUG, fmt, ap, 0);
	va_end(ap);
}

void fatal(const char *fmt, ...)
{
	int err = errno;
	va_list ap;

	va_start(ap, fmt);
	log_vemit(LOG_CRIT, fmt, ap, err);
	va_end(ap);
	exit(1);
}

void fatalx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vemit(LOG_CRIT, fmt, ap, 0);
	va_end(ap);
	exit(1);
}

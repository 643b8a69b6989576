// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "conf/daemon.h"
#include "conf/log.h"

int daemon_detach(const char *progname, int verbose, struct event_base *base,
		  char *err, size_t errlen)
{
	if (daemon(0, 0) < 0) {
		int e = errno;

		snprintf(err, errlen, "cannot detach: %s", strerror(e));
		errno = e;
		return -1;
	}
	log_init(progname, 0, verbose);
	if (base && event_reinit(base) < 0) {
		snprintf(err, errlen, "event_reinit after detaching failed");
		errno = EINVAL;
		return -1;
	}
	return 0;
}

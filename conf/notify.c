// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* systemd's notification protocol: see notify.h. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "conf/errbuf.h"
#include "conf/notify.h"

/* the longest message the daemons send: a STATUS= line or two */
#define NOTIFY_MSG_MAX	1024

static int notify_addr(const char *path, struct sockaddr_un *sa,
		       socklen_t *len, char *err, size_t errlen)
{
	size_t n = strlen(path);

	if (n < 2 && path[0] == '@')
		return errbuf_fail(err, errlen, EINVAL,
				   "NOTIFY_SOCKET '%s': no name", path);
	if (n >= sizeof(sa->sun_path))
		return errbuf_fail(err, errlen, ENAMETOOLONG,
				   "NOTIFY_SOCKET '%s': too long", path);
	if (path[0] != '/' && path[0] != '@')
		return errbuf_fail(err, errlen, EAFNOSUPPORT,
				   "NOTIFY_SOCKET '%s': not a unix socket",
				   path);
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	memcpy(sa->sun_path, path, n);
	if (sa->sun_path[0] == '@')
		sa->sun_path[0] = '\0';	/* the abstract namespace */
	*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n +
			   (path[0] == '/'));
	return 0;
}

int notify_send(char *err, size_t errlen, const char *fmt, ...)
{
	const char *path = getenv("NOTIFY_SOCKET");
	char msg[NOTIFY_MSG_MAX];
	struct sockaddr_un sa;
	socklen_t salen = 0;
	va_list ap;
	int fd, n, e;

	if (!path || !*path)
		return 0;
	if (notify_addr(path, &sa, &salen, err, errlen) < 0)
		return -1;
	va_start(ap, fmt);
	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(msg))
		return errbuf_fail(err, errlen, EMSGSIZE,
				   "notify: message too long");
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return errbuf_fail(err, errlen, errno, "notify: socket: %s",
				   strerror(errno));
	if (sendto(fd, msg, (size_t)n, MSG_NOSIGNAL, (struct sockaddr *)&sa,
		   salen) < 0) {
		e = errno;
		close(fd);
		return errbuf_fail(err, errlen, e, "notify %s: %s", path,
				   strerror(e));
	}
	close(fd);
	return 1;
}

static int env_u64(const char *name, uint64_t *out)
{
	const char *s = getenv(name);
	unsigned long long v;
	char *end;

	if (!s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

uint64_t notify_watchdog_usec(void)
{
	uint64_t usec, pid;

	if (env_u64("WATCHDOG_USEC", &usec) < 0 || !usec)
		return 0;
	if (getenv("WATCHDOG_PID") &&
	    (env_u64("WATCHDOG_PID", &pid) < 0 || pid != (uint64_t)getpid()))
		return 0;
	return usec;
}

uint64_t notify_monotonic_usec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

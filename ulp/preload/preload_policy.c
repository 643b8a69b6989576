// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Which sockets to redirect: libsdp.conf (LIBSDP_CONFIG_FILE, else
 * /etc/libsdp.conf), read once at first use.  No file: every TCP socket
 * is 'both'.  A file: its rules, a socket no rule matches is left alone.
 * A bad file: one line on stderr and every socket TCP, so that the
 * program runs on.  Its 'log' line directs the preload's own lines.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "ulp/preload/preload.h"

#define POLICY_DEFAULT_FILE	"/etc/libsdp.conf"
#define POLICY_FILE_MAX		(1 << 20)
#define POLICY_LOG_DEFAULT	9

enum policy_mode {
	POLICY_ALL_BOTH,	/* no file */
	POLICY_RULES,
	POLICY_ALL_TCP,		/* a bad file */
};

static enum policy_mode policy_mode;
static struct sdp_conf policy_conf;
/* 1 once the file was read or found bad or missing; a transient failure
 * (out of descriptors or memory) leaves it 0: TCP until a later socket
 * call reads it */
static atomic_int policy_loaded;
static pthread_mutex_t policy_lock = PTHREAD_MUTEX_INITIALIZER;

/* The whole file, NUL-terminated, or NULL with errno (ENOENT: none;
 * EFBIG: over POLICY_FILE_MAX). */
static char *policy_read(const char *path, size_t *len)
{
	char *buf = NULL;
	size_t n = 0;
	ssize_t r;
	int fd, e;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	buf = malloc(POLICY_FILE_MAX + 1);
	if (!buf)
		goto fail;
	while (n < POLICY_FILE_MAX) {
		r = preload_real.read(fd, buf + n, POLICY_FILE_MAX - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			goto fail;
		if (r == 0)
			break;
		n += (size_t)r;
	}
	if (n == POLICY_FILE_MAX) {
		/* read whole or not at all: a rule past the end would be
		 * lost without a word */
		r = preload_real.read(fd, buf, 1);
		if (r != 0) {
			errno = r > 0 ? EFBIG : errno;
			goto fail;
		}
	}
	preload_real.close(fd);
	buf[n] = '\0';
	*len = n;
	return buf;
fail:
	e = errno;
	free(buf);
	preload_real.close(fd);
	errno = e;
	return NULL;
}

static void policy_load(void)
{
	static atomic_int told;
	const char *path = getenv("LIBSDP_CONFIG_FILE");
	unsigned int line = 0;
	char err[160] = "";
	size_t len = 0;
	char *text;

	if (!path || !*path)
		path = POLICY_DEFAULT_FILE;
	text = policy_read(path, &len);
	if (!text) {
		if (errno == ENOENT) {
			policy_mode = POLICY_ALL_BOTH;
			atomic_store(&policy_loaded, 1);
			return;
		}
		policy_mode = POLICY_ALL_TCP;
		if (errno == EMFILE || errno == ENFILE || errno == ENOMEM) {
			/* the process's state, not the file's: this socket
			 * goes TCP, a later one tries again */
			if (!atomic_exchange(&told, 1))
				fprintf(stderr, "libibgw_preload: %s: %s; TCP "
					"until it can be read\n", path,
					strerror(errno));
			return;
		}
		fprintf(stderr, "libibgw_preload: %s: %s; using TCP only\n",
			path, strerror(errno));
		atomic_store(&policy_loaded, 1);
		return;
	}
	if (sdp_conf_parse(&policy_conf, text, len, &line, err,
			   sizeof(err)) < 0) {
		fprintf(stderr, "libibgw_preload: %s:%u: %s; using TCP only\n",
			path, line, err);
		memset(&policy_conf, 0, sizeof(policy_conf));
		policy_mode = POLICY_ALL_TCP;
	} else {
		policy_mode = POLICY_RULES;
	}
	free(text);
	atomic_store(&policy_loaded, 1);
}

static void policy_get(void)
{
	if (atomic_load(&policy_loaded))
		return;
	pthread_mutex_lock(&policy_lock);
	if (!atomic_load(&policy_loaded))
		policy_load();
	pthread_mutex_unlock(&policy_lock);
}

static int policy_inet(const struct sockaddr *sa, struct inet_addr *a,
		       uint16_t *port)
{
	const struct sockaddr_in *in = (const void *)sa;
	const struct sockaddr_in6 *in6 = (const void *)sa;

	if (sa->sa_family == AF_INET) {
		inet_addr_v4(a, &in->sin_addr);
		*port = ntohs(in->sin_port);
	} else if (sa->sa_family == AF_INET6) {
		inet_addr_v6(a, &in6->sin6_addr);
		*port = ntohs(in6->sin6_port);
	} else {
		return -1;
	}
	return 0;
}

enum sdp_use preload_policy(enum sdp_role role, const struct sockaddr *sa)
{
	struct inet_addr a;
	uint16_t port;

	policy_get();
	switch (policy_mode) {
	case POLICY_ALL_BOTH:
		return SDP_USE_BOTH;
	case POLICY_ALL_TCP:
		return SDP_USE_TCP;
	case POLICY_RULES:
		break;
	}
	if (policy_inet(sa, &a, &port) < 0)
		return SDP_USE_NONE;
	return sdp_conf_match(&policy_conf, role,
			      program_invocation_short_name, &a, port, NULL);
}

const char *preload_sa_str(const struct sockaddr *sa, char *buf, size_t len)
{
	const struct sockaddr_in *in = (const void *)sa;
	const struct sockaddr_in6 *in6 = (const void *)sa;
	char a[INET6_ADDRSTRLEN];

	if (sa->sa_family == AF_INET)
		snprintf(buf, len, "%s:%u",
			 inet_ntop(AF_INET, &in->sin_addr, a, sizeof(a)),
			 ntohs(in->sin_port));
	else if (sa->sa_family == AF_INET6)
		snprintf(buf, len, "[%s]:%u",
			 inet_ntop(AF_INET6, &in6->sin6_addr, a, sizeof(a)),
			 ntohs(in6->sin6_port));
	else
		snprintf(buf, len, "?");
	return buf;
}

/* One line, written with a single write(2) so that processes sharing the
 * destination do not interleave within a line. */
static void policy_write(int fd, const char *line, size_t n)
{
	while (n) {
		ssize_t r = preload_real.write(fd, line, n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return;
		line += r;
		n -= (size_t)r;
	}
}

bool preload_log_wants(int level)
{
	policy_get();
	return policy_mode == POLICY_RULES &&
	       policy_conf.log_dest != SDP_LOG_NONE &&
	       level >= (policy_conf.log_level ? policy_conf.log_level
						: POLICY_LOG_DEFAULT);
}

void preload_log_tcp(const char *call, const struct sockaddr *sa,
		     enum sdp_use use)
{
	char a[PRELOAD_SA_STRLEN];

	if (!preload_log_wants(PRELOAD_LOG_INFO))
		return;
	preload_log(PRELOAD_LOG_INFO, "%s %s: TCP (%s)", call,
		    preload_sa_str(sa, a, sizeof(a)),
		    use == SDP_USE_TCP ? "a 'use tcp' rule" : "no rule");
}

void preload_log(int level, const char *fmt, ...)
{
	int min, e = errno, fd;
	char line[512];
	va_list ap;
	int n;

	policy_get();
	if (policy_mode != POLICY_RULES || policy_conf.log_dest == SDP_LOG_NONE)
		goto out;
	min = policy_conf.log_level ? policy_conf.log_level
				    : POLICY_LOG_DEFAULT;
	if (level < min)
		goto out;
	n = snprintf(line, sizeof(line), "libibgw_preload[%d] %s: ",
		     (int)getpid(), program_invocation_short_name);
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (policy_conf.log_dest == SDP_LOG_SYSLOG) {
		syslog(level >= PRELOAD_LOG_ERR ? LOG_ERR : LOG_INFO, "%s",
		       line);
		goto out;
	}
	strcat(line, "\n");
	if (policy_conf.log_dest == SDP_LOG_STDERR) {
		policy_write(STDERR_FILENO, line, strlen(line));
		goto out;
	}
	fd = open(policy_conf.log_file, O_WRONLY | O_APPEND | O_CREAT |
		  O_CLOEXEC, 0644);
	if (fd >= 0) {
		policy_write(fd, line, strlen(line));
		preload_real.close(fd);
	}
out:
	errno = e;
}

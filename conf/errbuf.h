/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * How a run-time module fails (docs/architecture.md, "Conventions"):
 * errno set and a one-line reason in the caller's buffer, -1 returned.
 * Header-only and dependent on nothing but libc, so that every layer,
 * fabric/ and inet/ included, fails the same way without linking conf/.
 */
#ifndef IBGW_ERRBUF_H
#define IBGW_ERRBUF_H

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

/* errno = e and the reason into err (none when err is NULL or errlen 0;
 * else always NUL-terminated, cut to fit); returns -1. */
static inline int errbuf_vfail(char *err, size_t errlen, int e,
			       const char *fmt, va_list ap)
{
	if (err && errlen > 0)
		vsnprintf(err, errlen, fmt, ap);
	errno = e;
	return -1;
}

static inline int errbuf_fail(char *err, size_t errlen, int e,
			      const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static inline int errbuf_fail(char *err, size_t errlen, int e,
			      const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	errbuf_vfail(err, errlen, e, fmt, ap);
	va_end(ap);
	return -1;
}

#endif

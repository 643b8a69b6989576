// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libsdp.conf: the grammar of libsdp's config_parser.y, read a line at a
 * time into fixed arrays, and the first-match lookup the preload asks for
 * each bind/listen and connect.  See sdp_conf.h for the contract.
 */
#include <arpa/inet.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ulp/sdp/sdp_conf.h"

#define SDP_CONF_FIELDS_MAX	16	/* a valid line has at most 7 */

struct sdp_parse {
	struct sdp_conf *conf;
	char *err;
	size_t errlen;
};

static int __attribute__((format(printf, 2, 3)))
sdp_conf_fail(struct sdp_parse *p, const char *fmt, ...)
{
	va_list ap;

	if (p->err != NULL && p->errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(p->err, p->errlen, fmt, ap);
		va_end(ap);
	}
	return -1;
}

static int sdp_is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* Splits line in place at blanks; returns the field count (at most max). */
static size_t sdp_conf_split(char *line, char **field, size_t max)
{
	size_t n = 0;
	char *s = line;

	for (;;) {
		while (sdp_is_blank(*s))
			s++;
		if (*s == '\0' || n == max)
			return n;
		field[n++] = s;
		while (*s != '\0' && !sdp_is_blank(*s))
			s++;
		if (*s != '\0')
			*s++ = '\0';
	}
}

/* Decimal digits only, value <= max; leading zeros are fine ("080"). */
static int sdp_conf_number(const char *s, size_t len, unsigned long max,
			   unsigned long *out)
{
	unsigned long v = 0;
	size_t i;

	if (len == 0)
		return -1;
	for (i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (unsigned long)(s[i] - '0');
		if (v > max)
			return -1;
	}
	*out = v;
	return 0;
}

/* PORT: *, N or LOW-HIGH. */
static int sdp_conf_port(struct sdp_parse *p, const char *s,
			 struct sdp_rule *r)
{
	const char *dash = strchr(s, '-');
	unsigned long lo, hi;

	if (strcmp(s, "*") == 0) {
		r->port_lo = 0;
		r->port_hi = 65535;
		return 0;
	}
	if (dash == NULL) {
		if (sdp_conf_number(s, strlen(s), 65535, &lo) < 0)
			return sdp_conf_fail(p, "bad port '%s' (0-65535 or *)",
					     s);
		r->port_lo = r->port_hi = (uint16_t)lo;
		return 0;
	}
	if (sdp_conf_number(s, (size_t)(dash - s), 65535, &lo) < 0 ||
	    sdp_conf_number(dash + 1, strlen(dash + 1), 65535, &hi) < 0)
		return sdp_conf_fail(p, "bad port range '%s' (LOW-HIGH, "
				     "0-65535)", s);
	if (lo > hi)
		return sdp_conf_fail(p, "bad port range '%s' (LOW above HIGH)",
				     s);
	r->port_lo = (uint16_t)lo;
	r->port_hi = (uint16_t)hi;
	return 0;
}

/*
 * ADDR[/LEN] without the brackets, of the family the syntax allows: an
 * unbracketed address is IPv4 only (libsdp's older form), a bracketed
 * one IPv6 only, so that "[10.0.0.1]" or "fe80::1" are not guessed at.
 */
static int sdp_conf_prefix(struct sdp_parse *p, char *s, int family,
			   struct inet_prefix *out)
{
	char *slash = strchr(s, '/');
	unsigned long len, max = family == AF_INET ? 32 : 128;
	const char *fam = family == AF_INET ? "IPv4" : "IPv6";

	if (slash != NULL)
		*slash = '\0';
	if (inet_addr_parse(s, &out->addr, NULL, 0) < 0 ||
	    out->addr.family != family) {
		if (slash != NULL)
			*slash = '/';
		return sdp_conf_fail(p, "bad address '%s' (not an %s "
				     "address%s)", s, fam, family == AF_INET ?
				     "; IPv6 goes in brackets" : "");
	}
	out->plen = (unsigned int)max;
	if (slash == NULL)
		return 0;
	*slash = '/';
	/* no leading zeros: "/024" is a typo, as inet_prefix_scan says */
	if (slash[1] == '\0' || (slash[1] == '0' && slash[2] != '\0') ||
	    strspn(slash + 1, "0123456789") != strlen(slash + 1))
		return sdp_conf_fail(p, "bad prefix length '%s'", s);
	if (sdp_conf_number(slash + 1, strlen(slash + 1), max, &len) < 0)
		return sdp_conf_fail(p, "prefix too long '%s' (at most /%lu)",
				     s, max);
	out->plen = (unsigned int)len;
	return 0;
}

/* ADDR of ADDR:PORT: *, a.b.c.d[/LEN] or [IPV6][/LEN]. */
static int sdp_conf_addr(struct sdp_parse *p, char *abuf, int family,
			 struct sdp_rule *r)
{
	char *close;

	memset(&r->addr, 0, sizeof(r->addr));
	if (strcmp(abuf, "*") == 0) {
		r->any_addr = 1;
		return 0;
	}
	r->any_addr = 0;
	if (family == AF_INET)
		return sdp_conf_prefix(p, abuf, AF_INET, &r->addr);

	/* "[ADDR]" then "/LEN" or nothing */
	close = strchr(abuf, ']');
	if ((close[1] != '\0' && close[1] != '/') ||
	    memchr(abuf, '/', (size_t)(close - abuf)) != NULL)
		return sdp_conf_fail(p, "bad address '%s' ([ADDR]/LEN)",
				     abuf);
	memmove(close, close + 1, strlen(close + 1) + 1);
	return sdp_conf_prefix(p, abuf + 1, AF_INET6, &r->addr);
}

/* ADDR:PORT; the port separator is the first ':' outside brackets. */
static int sdp_conf_endpoint(struct sdp_parse *p, char *s, struct sdp_rule *r)
{
	char abuf[SDP_CONF_LINE_MAX + 1];
	char *colon, *close;
	int family = AF_INET;

	if (s[0] == '[') {
		close = strchr(s, ']');
		if (close == NULL)
			return sdp_conf_fail(p, "bad address '%s' (no ']')", s);
		colon = strchr(close, ':');
		family = AF_INET6;
	} else {
		colon = strchr(s, ':');
	}
	if (colon == NULL)
		return sdp_conf_fail(p, "missing ':PORT' in '%s'", s);
	if (family == AF_INET && strchr(colon + 1, ':') != NULL)
		return sdp_conf_fail(p, "bad address '%s' (IPv6 goes in "
				     "brackets: [ADDR]/LEN:PORT)", s);
	memcpy(abuf, s, (size_t)(colon - s));
	abuf[colon - s] = '\0';
	if (sdp_conf_addr(p, abuf, family, r) < 0)
		return -1;
	return sdp_conf_port(p, colon + 1, r);
}

static int sdp_conf_use(struct sdp_parse *p, char **f, size_t n,
			unsigned int line)
{
	static const char *const uses[] = { "tcp", "sdp", "both" };
	struct sdp_conf *c = p->conf;
	struct sdp_rule r;
	enum sdp_role role;
	size_t i;

	memset(&r, 0, sizeof(r));
	r.line = line;
	if (n < 2)
		return sdp_conf_fail(p, "missing tcp|sdp|both after 'use'");
	for (i = 0; i < 3 && strcmp(f[1], uses[i]) != 0; i++)
		;
	if (i == 3)
		return sdp_conf_fail(p, "unknown use '%s' (tcp, sdp or both)",
				     f[1]);
	r.use = SDP_USE_TCP + (int)i;
	if (n < 3)
		return sdp_conf_fail(p, "missing server|client after '%s'",
				     f[1]);
	if (strcmp(f[2], "server") == 0 || strcmp(f[2], "listen") == 0)
		role = SDP_ROLE_SERVER;
	else if (strcmp(f[2], "client") == 0 || strcmp(f[2], "connect") == 0)
		role = SDP_ROLE_CLIENT;
	else
		return sdp_conf_fail(p, "unknown role '%s' (server, listen, "
				     "client or connect)", f[2]);
	if (n < 4)
		return sdp_conf_fail(p, "missing program after '%s'", f[2]);
	if (strlen(f[3]) >= sizeof(r.program))
		return sdp_conf_fail(p, "program pattern too long '%s' (at "
				     "most %zu bytes)", f[3],
				     sizeof(r.program) - 1);
	strcpy(r.program, f[3]);
	if (n < 5)
		return sdp_conf_fail(p, "missing ADDR:PORT after '%s'", f[3]);
	if (n > 5)
		return sdp_conf_fail(p, "extra field '%s'", f[5]);
	if (sdp_conf_endpoint(p, f[4], &r) < 0)
		return -1;
	if (c->n[role] == SDP_CONF_RULES_MAX)
		return sdp_conf_fail(p, "too many rules: more than %d %s rules",
				     SDP_CONF_RULES_MAX,
				     role == SDP_ROLE_SERVER ? "server" :
				     "client");
	c->rules[role][c->n[role]++] = r;
	return 0;
}

static int sdp_conf_log_dest(struct sdp_parse *p, char **f, size_t n,
			     size_t *i)
{
	struct sdp_conf *c = p->conf;
	const char *d;

	if (*i + 1 >= n)
		return sdp_conf_fail(p, "missing stderr|syslog|file after "
				     "'destination'");
	d = f[++*i];
	c->log_file[0] = '\0';	/* a new destination drops the old path */
	if (strcmp(d, "stderr") == 0) {
		c->log_dest = SDP_LOG_STDERR;
	} else if (strcmp(d, "syslog") == 0) {
		c->log_dest = SDP_LOG_SYSLOG;
	} else if (strcmp(d, "file") == 0) {
		if (*i + 1 >= n)
			return sdp_conf_fail(p, "missing path after 'file'");
		d = f[++*i];
		if (strlen(d) >= sizeof(c->log_file))
			return sdp_conf_fail(p, "log file path too long '%s'",
					     d);
		strcpy(c->log_file, d);
		c->log_dest = SDP_LOG_FILE;
	} else {
		return sdp_conf_fail(p, "unknown destination '%s' (stderr, "
				     "syslog or file)", d);
	}
	return 0;
}

/* log [destination stderr|syslog|file PATH] [min-level N], any order. */
static int sdp_conf_log(struct sdp_parse *p, char **f, size_t n)
{
	int seen_dest = 0, seen_level = 0;
	const char *v;
	size_t i;

	for (i = 1; i < n; i++) {
		if (strcmp(f[i], "destination") == 0) {
			if (seen_dest++)
				return sdp_conf_fail(p, "duplicate "
						     "'destination'");
			if (sdp_conf_log_dest(p, f, n, &i) < 0)
				return -1;
		} else if (strcmp(f[i], "min-level") == 0) {
			if (seen_level++)
				return sdp_conf_fail(p, "duplicate "
						     "'min-level'");
			if (i + 1 >= n)
				return sdp_conf_fail(p, "missing level after "
						     "'min-level'");
			v = f[++i];
			if (v[0] < '1' || v[0] > '9' || v[1] != '\0')
				return sdp_conf_fail(p, "bad min-level '%s' "
						     "(1-9)", v);
			p->conf->log_level = v[0] - '0';
		} else {
			return sdp_conf_fail(p, "unknown log option '%s' "
					     "(destination or min-level)",
					     f[i]);
		}
	}
	return 0;
}

static int sdp_conf_line(struct sdp_parse *p, const char *s, size_t len,
			 unsigned int line)
{
	char buf[SDP_CONF_LINE_MAX + 1], *hash;
	char *f[SDP_CONF_FIELDS_MAX];
	size_t n;

	if (len > 0 && s[len - 1] == '\r')
		len--;
	if (len > SDP_CONF_LINE_MAX)
		return sdp_conf_fail(p, "line too long (more than %d bytes)",
				     SDP_CONF_LINE_MAX);
	if (memchr(s, '\0', len) != NULL)
		return sdp_conf_fail(p, "NUL byte in line");
	memcpy(buf, s, len);
	buf[len] = '\0';
	hash = strchr(buf, '#');
	if (hash != NULL)
		*hash = '\0';
	n = sdp_conf_split(buf, f, SDP_CONF_FIELDS_MAX);
	if (n == 0)
		return 0;
	/*
	 * The fields past SDP_CONF_FIELDS_MAX are never looked at: a use
	 * line fails at its sixth, a log line at its eighth at the latest.
	 */
	if (strcmp(f[0], "use") == 0)
		return sdp_conf_use(p, f, n, line);
	if (strcmp(f[0], "log") == 0)
		return sdp_conf_log(p, f, n);
	return sdp_conf_fail(p, "unknown keyword '%s' (use or log)", f[0]);
}

int sdp_conf_parse(struct sdp_conf *conf, const char *text, size_t len,
		   unsigned int *err_line, char *err, size_t errlen)
{
	struct sdp_parse p = { conf, err, errlen };
	const char *s = text, *end = text + len, *nl;
	unsigned int line = 0;

	memset(conf, 0, sizeof(*conf));
	if (err_line != NULL)
		*err_line = 0;
	if (err != NULL && errlen > 0)
		err[0] = '\0';
	while (s < end) {
		nl = memchr(s, '\n', (size_t)(end - s));
		if (nl == NULL)
			nl = end;
		line++;
		if (sdp_conf_line(&p, s, (size_t)(nl - s), line) < 0) {
			/* nothing half-read: the preload falls back to TCP */
			memset(conf, 0, sizeof(*conf));
			if (err_line != NULL)
				*err_line = line;
			return -1;
		}
		s = nl + 1;
	}
	return 0;
}

/* a in r's prefix; an IPv4 rule takes ::ffff:a.b.c.d as a.b.c.d. */
static int sdp_rule_addr_match(const struct sdp_rule *r,
			       const struct inet_addr *a)
{
	struct inet_addr v4;

	if (r->any_addr)
		return 1;
	if (a == NULL)
		return 0;
	if (r->addr.addr.family == AF_INET && a->family == AF_INET6 &&
	    IN6_IS_ADDR_V4MAPPED(&a->v6)) {
		memset(&v4, 0, sizeof(v4));
		v4.family = AF_INET;
		memcpy(&v4.v4, &a->raw[12], 4);
		return inet_prefix_contains(&r->addr, &v4);
	}
	return inet_prefix_contains(&r->addr, a);
}

enum sdp_use sdp_conf_match(const struct sdp_conf *conf, enum sdp_role role,
			    const char *program, const struct inet_addr *a,
			    uint16_t port, const struct sdp_rule **rule)
{
	const struct sdp_rule *r;
	unsigned int i;

	if (rule != NULL)
		*rule = NULL;
	if ((unsigned int)role > SDP_ROLE_CLIENT)
		return SDP_USE_NONE;
	if (program == NULL)
		program = "";
	for (i = 0; i < conf->n[role]; i++) {
		r = &conf->rules[role][i];
		if (port < r->port_lo || port > r->port_hi ||
		    !sdp_rule_addr_match(r, a) ||
		    fnmatch(r->program, program, 0) != 0)
			continue;
		if (rule != NULL)
			*rule = r;
		return r->use;
	}
	return SDP_USE_NONE;
}

const char *sdp_use_name(enum sdp_use u)
{
	switch (u) {
	case SDP_USE_NONE:
		return "none";
	case SDP_USE_TCP:
		return "tcp";
	case SDP_USE_SDP:
		return "sdp";
	case SDP_USE_BOTH:
		return "both";
	}
	return "?";
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Strict configuration files: schema walk over iniparser, value parsers,
 * error collection.  See conf.h for what is promised.
 *
 * Two readers look at the file.  iniparser is the authority on names and
 * values.  Our own line scan mirrors iniparser's line rules only to learn
 * line numbers and to catch what iniparser hides: duplicate sections and
 * keys (merged or overwritten), text after a closing quote (dropped), a
 * "\" continuation at end of file (the key is lost), and syntax errors
 * (iniparser prints them to stderr and returns nothing).
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include <iniparser.h>

#include "conf/conf.h"
#include "conf/log.h"

struct conf_inst {
	struct conf_inst		*next;
	const struct conf_section_desc	*desc;
	char				*section;	/* "partition x" */
	const char			*name;		/* "storage", or "" */
	int				 line;		/* 0: not in the file */
	size_t				 nkeys;
	struct conf_value		*vals;		/* one per desc key */
	unsigned char			*seen;	/* in the file, valid or not */
};

struct conf_err {
	struct conf_error	 pub;	/* points at the strings below */
	char			*msg;
	char			*section;
	char			*key;
	unsigned int		 seq;
};

struct conf {
	char				*path;
	const struct conf_section_desc	*schema;
	struct conf_inst		*insts;
	struct conf_inst		**tail;
	struct conf_err			*errs;
	int				 nerrs;
	int				 errcap;
	int				 oom;
};

/* One logical line of the file that named a section or a key. */
struct conf_line {
	char	*sec;	/* header: name as iniparser stores it */
	char	*norm;	/* header: conf_normalize(sec) */
	char	*key;	/* key: lowercase name; NULL for a header */
	int	 hdr;	/* index of the header in force, -1 before any */
	int	 line;
};

struct conf_scan {
	struct conf_line	*lines;
	int			 n;
	int			 cap;
	int			 broken;	/* do not trust iniparser */
	int			 readerr;
	int			 bad_lines;	/* too long or not text */
};

/* A configuration is small: a file larger than this is something else,
 * and past this many unreadable lines the scan stops. */
#define CONF_FILE_MAX		(1 << 20)
#define CONF_BAD_LINES_MAX	20

static const char conf_why_empty[] = "empty value";
static const char conf_why_nan[] = "not a number";
static const char conf_why_trail[] = "trailing characters after number";
static const char conf_why_range[] = "out of range";

/* ---- value parsers ------------------------------------------------------ */

static int conf_fail(const char **why, const char *reason)
{
	if (why != NULL)
		*why = reason;
	return -1;
}

static unsigned int conf_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return 99;
}

/*
 * Digits only, by hand: strtoull() would take blanks, a sign (even "-1"
 * on an unsigned), and a leading 0 as octal.
 */
static int conf_parse_mag(const char *s, unsigned long long *out,
			  const char **why)
{
	unsigned long long v = 0;
	unsigned int base = 10, d;
	const char *p = s;

	if (*p == '\0')
		return conf_fail(why, conf_why_empty);
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
		base = 16;
		p += 2;
		if (*p == '\0')
			return conf_fail(why, "no digits after 0x");
	}
	if (conf_digit(*p) >= base)
		return conf_fail(why, conf_why_nan);
	for (; *p != '\0'; p++) {
		d = conf_digit(*p);
		if (d >= base)
			return conf_fail(why, conf_why_trail);
		if (v > (ULLONG_MAX - d) / base)
			return conf_fail(why, "number too large");
		v = v * base + d;
	}
	*out = v;
	return 0;
}

int conf_parse_uint(const char *s, unsigned long long min,
		    unsigned long long max, unsigned long long *out,
		    const char **why)
{
	unsigned long long v;

	if (s == NULL || *s == '\0')
		return conf_fail(why, conf_why_empty);
	if (*s == '-')
		return conf_fail(why, "must not be negative");
	if (conf_parse_mag(s, &v, why) == -1)
		return -1;
	if (v < min || v > max)
		return conf_fail(why, conf_why_range);
	*out = v;
	return 0;
}

int conf_parse_int(const char *s, long long min, long long max,
		   long long *out, const char **why)
{
	unsigned long long mag;
	long long v;
	int neg;

	if (s == NULL || *s == '\0')
		return conf_fail(why, conf_why_empty);
	neg = (*s == '-');
	if (neg && s[1] == '\0')
		return conf_fail(why, conf_why_nan);
	if (conf_parse_mag(s + neg, &mag, why) == -1)
		return -1;
	if (neg) {
		if (mag > (unsigned long long)LLONG_MAX + 1)
			return conf_fail(why, conf_why_range);
		v = (mag == (unsigned long long)LLONG_MAX + 1) ?
			LLONG_MIN : -(long long)mag;
	} else {
		if (mag > (unsigned long long)LLONG_MAX)
			return conf_fail(why, conf_why_range);
		v = (long long)mag;
	}
	if (v < min || v > max)
		return conf_fail(why, conf_why_range);
	*out = v;
	return 0;
}

/*
 * The grammar is checked before strtod() so that "inf", "nan", hex floats
 * and blanks never reach it.  strtod() follows LC_NUMERIC; ibgw programs
 * do not call setlocale(), and a locale with another decimal point shows
 * up as a mismatch below rather than a wrong number.
 */
int conf_parse_double_range(const char *s, double min, double max,
			    double *out, const char **why)
{
	const char *p = s;
	char *end;
	double v;
	int ndig = 0;

	if (s == NULL || *s == '\0')
		return conf_fail(why, conf_why_empty);
	if (*p == '+' || *p == '-')
		p++;
	for (; isdigit((unsigned char)*p); p++)
		ndig++;
	if (*p == '.')
		for (p++; isdigit((unsigned char)*p); p++)
			ndig++;
	if (ndig == 0)
		return conf_fail(why, conf_why_nan);
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '+' || *p == '-')
			p++;
		if (!isdigit((unsigned char)*p))
			return conf_fail(why, "bad exponent");
		while (isdigit((unsigned char)*p))
			p++;
	}
	if (*p != '\0')
		return conf_fail(why, conf_why_trail);

	errno = 0;
	v = strtod(s, &end);
	if (end != p)
		return conf_fail(why, conf_why_nan);
	if (errno == ERANGE || !isfinite(v))
		return conf_fail(why, "number too large or too small");
	if (!(v >= min && v <= max))
		return conf_fail(why, conf_why_range);
	*out = v;
	return 0;
}

int conf_parse_bool(const char *s, int *out, const char **why)
{
	static const struct {
		const char	*word;
		int		 val;
	} words[] = {
		{ "yes", 1 }, { "no", 0 }, { "true", 1 }, { "false", 0 },
		{ "on", 1 }, { "off", 0 }, { "1", 1 }, { "0", 0 },
	};
	size_t i;

	if (s == NULL || *s == '\0')
		return conf_fail(why, conf_why_empty);
	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		if (strcasecmp(s, words[i].word) == 0) {
			*out = words[i].val;
			return 0;
		}
	}
	return conf_fail(why, "not a boolean");
}

int conf_parse_enum(const char *s, const char *const *words,
		    unsigned int *idx, const char **why)
{
	unsigned int i;

	if (s == NULL || *s == '\0')
		return conf_fail(why, conf_why_empty);
	for (i = 0; words != NULL && words[i] != NULL; i++) {
		if (strcasecmp(s, words[i]) == 0) {
			*idx = i;
			return 0;
		}
	}
	return conf_fail(why, "not an allowed word");
}

int conf_parse_pkey(const char *s, uint16_t *out, const char **why)
{
	unsigned long long v;

	if (s == NULL || *s == '\0')
		return conf_fail(why, conf_why_empty);
	if (s[0] != '0' || (s[1] != 'x' && s[1] != 'X'))
		return conf_fail(why, "P_Key must be hex with a 0x prefix");
	if (conf_parse_mag(s, &v, why) == -1)
		return -1;
	if (v > 0xffff)
		return conf_fail(why, "P_Key above 0xffff");
	if ((v & 0x7fff) == 0)
		return conf_fail(why, "invalid P_Key "
				 "(0x0000 and 0x8000 are reserved)");
	*out = (uint16_t)v;
	return 0;
}

int conf_parse_cidr(const char *s, struct inet_prefix *out, const char **why)
{
	return inet_prefix_scan(s, out, why);
}

static int conf_has_cntrl(const char *s)
{
	for (; *s != '\0'; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return 1;
	return 0;
}

int conf_parse_path(const char *s, const char **why)
{
	if (s == NULL || *s == '\0')
		return conf_fail(why, conf_why_empty);
	if (*s != '/')
		return conf_fail(why, "path must be absolute");
	if (strlen(s) >= PATH_MAX)
		return conf_fail(why, "path too long");
	if (conf_has_cntrl(s))
		return conf_fail(why, "control character in path");
	return 0;
}

static int conf_parse_string(const char *s, const char **why)
{
	if (s == NULL || *s == '\0')
		return conf_fail(why, conf_why_empty);
	if (conf_has_cntrl(s))
		return conf_fail(why, "control character in value");
	return 0;
}

/* Parse text by kd into v->v; v->text and v->line are the caller's. */
static int conf_value_parse(const struct conf_key_desc *kd, const char *text,
			    struct conf_value *v, const char **why)
{
	switch (kd->type) {
	case CONF_STRING:
		return conf_parse_string(text, why);
	case CONF_PATH:
		return conf_parse_path(text, why);
	case CONF_BOOL:
		return conf_parse_bool(text, &v->v.b, why);
	case CONF_UINT:
		return conf_parse_uint(text, kd->umin, kd->umax, &v->v.u, why);
	case CONF_INT:
		return conf_parse_int(text, kd->imin, kd->imax, &v->v.i, why);
	case CONF_DOUBLE:
		return conf_parse_double_range(text, kd->dmin, kd->dmax,
					       &v->v.d, why);
	case CONF_ENUM:
		return conf_parse_enum(text, kd->words, &v->v.e, why);
	case CONF_PKEY:
		return conf_parse_pkey(text, &v->v.pkey, why);
	case CONF_CIDR:
		return conf_parse_cidr(text, &v->v.cidr, why);
	}
	return conf_fail(why, "unknown type");
}

/* ---- schema ------------------------------------------------------------- */

/* [a-z0-9][a-z0-9_.-]*, at most max characters. */
static int conf_valid_name(const char *s, size_t max)
{
	size_t n;

	if (!islower((unsigned char)*s) && !isdigit((unsigned char)*s))
		return 0;
	for (n = 0; s[n] != '\0'; n++) {
		if (n >= max)
			return 0;
		if (!islower((unsigned char)s[n]) &&
		    !isdigit((unsigned char)s[n]) &&
		    s[n] != '_' && s[n] != '.' && s[n] != '-')
			return 0;
	}
	return 1;
}

static int conf_key_check(const struct conf_section_desc *sd,
			  const struct conf_key_desc *kd)
{
	const struct conf_key_desc *k2;
	struct conf_value tmp;
	const char *why;
	int bad = 0;

	if (!conf_valid_name(kd->name, CONF_INSTANCE_MAX)) {
		log_warnx("conf: schema: [%s] %s: invalid key name",
			  sd->name, kd->name);
		bad++;
	}
	for (k2 = sd->keys; k2 != kd; k2++) {
		if (strcmp(k2->name, kd->name) == 0) {
			log_warnx("conf: schema: [%s] %s: duplicate key",
				  sd->name, kd->name);
			bad++;
		}
	}
	switch (kd->type) {
	case CONF_UINT:
		if (kd->umin > kd->umax)
			goto range;
		break;
	case CONF_INT:
		if (kd->imin > kd->imax)
			goto range;
		break;
	case CONF_DOUBLE:
		if (!(kd->dmin <= kd->dmax))
			goto range;
		break;
	case CONF_ENUM:
		if (kd->words == NULL || kd->words[0] == NULL) {
			log_warnx("conf: schema: [%s] %s: enum without words",
				  sd->name, kd->name);
			return bad + 1;
		}
		break;
	case CONF_STRING:
	case CONF_PATH:
	case CONF_BOOL:
	case CONF_PKEY:
	case CONF_CIDR:
		break;
	default:
		log_warnx("conf: schema: [%s] %s: unknown type %d",
			  sd->name, kd->name, (int)kd->type);
		return bad + 1;
	}
	if (kd->required && kd->def != NULL) {
		log_warnx("conf: schema: [%s] %s: required key with a default",
			  sd->name, kd->name);
		bad++;
	}
	memset(&tmp, 0, sizeof(tmp));
	if (kd->def != NULL && conf_value_parse(kd, kd->def, &tmp, &why)) {
		log_warnx("conf: schema: [%s] %s: default \"%s\": %s",
			  sd->name, kd->name, kd->def, why);
		bad++;
	}
	return bad;
range:
	log_warnx("conf: schema: [%s] %s: minimum above maximum",
		  sd->name, kd->name);
	return bad + 1;
}

/* Flaws in the schema are the programmer's: log each, return how many. */
static int conf_schema_check(const struct conf_section_desc *schema)
{
	const struct conf_section_desc *sd, *s2;
	const struct conf_key_desc *kd;
	int bad = 0;

	if (schema == NULL) {
		log_warnx("conf: schema: none given");
		return 1;
	}
	for (sd = schema; sd->name != NULL; sd++) {
		if (!conf_valid_name(sd->name, CONF_INSTANCE_MAX)) {
			log_warnx("conf: schema: [%s]: invalid section name",
				  sd->name);
			bad++;
		}
		for (s2 = schema; s2 != sd; s2++) {
			if (strcmp(s2->name, sd->name) == 0) {
				log_warnx("conf: schema: [%s]: duplicate "
					  "section", sd->name);
				bad++;
			}
		}
		if (sd->flags & ~(CONF_MULTI | CONF_REQUIRED)) {
			log_warnx("conf: schema: [%s]: unknown flags",
				  sd->name);
			bad++;
		}
		if (sd->keys == NULL) {
			log_warnx("conf: schema: [%s]: no key table",
				  sd->name);
			bad++;
			continue;
		}
		for (kd = sd->keys; kd->name != NULL; kd++)
			bad += conf_key_check(sd, kd);
	}
	return bad;
}

/* ---- errors ------------------------------------------------------------- */

/* Quote a value safely in a message: no control bytes, bounded length. */
static const char *conf_vis(const char *s, char *buf, size_t size)
{
	size_t i;

	for (i = 0; s[i] != '\0' && i + 1 < size; i++)
		buf[i] = ((unsigned char)s[i] < 0x20 || s[i] == 0x7f) ?
			'?' : s[i];
	buf[i] = '\0';
	if (s[i] != '\0' && size > 4)
		memcpy(buf + size - 4, "...", 4);
	return buf;
}

static void conf_err(struct conf *cfg, int line, const char *sec,
		     const char *key, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/* Store one error; msg is taken over. */
static void conf_err_add(struct conf *cfg, int line, const char *sec,
			 const char *key, char *msg)
{
	struct conf_err *e, *errs;
	int cap;

	if (cfg->nerrs == cfg->errcap) {
		cap = cfg->errcap ? cfg->errcap * 2 : 8;
		errs = reallocarray(cfg->errs, cap, sizeof(*errs));
		if (errs == NULL)
			goto oom;
		cfg->errs = errs;
		cfg->errcap = cap;
	}
	e = &cfg->errs[cfg->nerrs];
	memset(e, 0, sizeof(*e));
	if ((sec && (e->section = strdup(sec)) == NULL) ||
	    (key && (e->key = strdup(key)) == NULL)) {
		free(e->section);
		goto oom;
	}
	e->msg = msg;
	e->pub.msg = e->msg;
	e->pub.section = e->section;
	e->pub.key = e->key;
	e->pub.line = line;
	e->seq = cfg->nerrs++;
	return;
oom:
	free(msg);
	cfg->oom = 1;
}

static void conf_err(struct conf *cfg, int line, const char *sec,
		     const char *key, const char *fmt, ...)
{
	char lbuf[16] = "", *what, *msg;
	va_list ap;
	int r;

	if (cfg->nerrs > CONF_MAX_ERRORS)
		return;
	if (cfg->nerrs == CONF_MAX_ERRORS) {
		if (asprintf(&msg, "%s: too many errors, the rest are not "
			     "shown", cfg->path) == -1)
			cfg->oom = 1;
		else
			conf_err_add(cfg, 0, NULL, NULL, msg);
		return;
	}

	va_start(ap, fmt);
	r = vasprintf(&what, fmt, ap);
	va_end(ap);
	if (r == -1) {
		cfg->oom = 1;
		return;
	}
	if (line > 0)
		snprintf(lbuf, sizeof(lbuf), ":%d", line);
	r = asprintf(&msg, "%s%s: %s%s%s%s%s%s", cfg->path, lbuf,
		     sec ? "[" : "", sec ? sec : "",
		     sec ? (key ? "] " : "]: ") : "",
		     key ? key : "", key ? ": " : "", what);
	free(what);
	if (r == -1) {
		cfg->oom = 1;
		return;
	}
	conf_err_add(cfg, line, sec, key, msg);
}

static int conf_err_cmp(const void *a, const void *b)
{
	const struct conf_err *ea = a, *eb = b;
	int la = ea->pub.line ? ea->pub.line : INT_MAX;
	int lb = eb->pub.line ? eb->pub.line : INT_MAX;

	if (la != lb)
		return la < lb ? -1 : 1;
	return ea->seq < eb->seq ? -1 : ea->seq > eb->seq;
}

static void conf_err_value(struct conf *cfg, int line, const char *sec,
			   const struct conf_key_desc *kd, const char *text,
			   const char *why)
{
	char vis[48], list[160];
	size_t off = 0;
	int i;

	conf_vis(text, vis, sizeof(vis));
	switch (kd->type) {
	case CONF_UINT:
		conf_err(cfg, line, sec, kd->name, "\"%s\": %s (expected "
			 "%llu..%llu)", vis, why, kd->umin, kd->umax);
		break;
	case CONF_INT:
		conf_err(cfg, line, sec, kd->name, "\"%s\": %s (expected "
			 "%lld..%lld)", vis, why, kd->imin, kd->imax);
		break;
	case CONF_DOUBLE:
		conf_err(cfg, line, sec, kd->name, "\"%s\": %s (expected "
			 "%g..%g)", vis, why, kd->dmin, kd->dmax);
		break;
	case CONF_BOOL:
		conf_err(cfg, line, sec, kd->name, "\"%s\": %s (expected "
			 "yes or no)", vis, why);
		break;
	case CONF_ENUM:
		list[0] = '\0';
		for (i = 0; kd->words[i] != NULL && off < sizeof(list); i++)
			off += snprintf(list + off, sizeof(list) - off,
					"%s%s", i ? ", " : "", kd->words[i]);
		conf_err(cfg, line, sec, kd->name, "\"%s\": %s (expected one "
			 "of: %s)", vis, why, list);
		break;
	default:
		conf_err(cfg, line, sec, kd->name, "\"%s\": %s", vis, why);
		break;
	}
}

/* ---- line scan ---------------------------------------------------------- */

static void conf_lower(char *s)
{
	for (; *s != '\0'; s++)
		*s = tolower((unsigned char)*s);
}

/* Trim blanks both ends in place, as iniparser's strstrip() does. */
static char *conf_trim(char *s)
{
	size_t n;

	while (isspace((unsigned char)*s))
		s++;
	n = strlen(s);
	while (n > 0 && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
	return s;
}

/* "partition \t storage" -> "partition storage"; NULL on ENOMEM. */
static char *conf_normalize(const char *raw)
{
	size_t base = strcspn(raw, " \t\n\v\f\r");
	const char *rest = raw + base;
	char *out;

	if (*rest == '\0')
		return strdup(raw);
	while (isspace((unsigned char)*rest))
		rest++;
	if (asprintf(&out, "%.*s %s", (int)base, raw, rest) == -1)
		return NULL;
	return out;
}

static struct conf_line *conf_scan_add(struct conf *cfg, struct conf_scan *sc)
{
	struct conf_line *l;
	int cap;

	if (sc->n == sc->cap) {
		cap = sc->cap ? sc->cap * 2 : 32;
		l = reallocarray(sc->lines, cap, sizeof(*l));
		if (l == NULL) {
			cfg->oom = 1;
			return NULL;
		}
		sc->lines = l;
		sc->cap = cap;
	}
	l = &sc->lines[sc->n++];
	memset(l, 0, sizeof(*l));
	return l;
}

static const char *conf_scan_norm(const struct conf_scan *sc, int hdr)
{
	return hdr < 0 ? NULL : sc->lines[hdr].norm;
}

static int conf_same(const char *a, const char *b)
{
	if (a == NULL || b == NULL)
		return a == b;
	return strcmp(a, b) == 0;
}

/* Line of a header (key NULL) or key, by the name iniparser gave it. */
static int conf_scan_find(const struct conf_scan *sc, const char *sec,
			  const char *key)
{
	const struct conf_line *l;
	int i;

	/* From the end: iniparser keeps the last of duplicate keys. */
	for (i = sc->n - 1; i >= 0; i--) {
		l = &sc->lines[i];
		if (!conf_same(l->key, key))
			continue;
		if (conf_same(l->hdr < 0 ? NULL : sc->lines[l->hdr].sec, sec))
			return l->line;
	}
	return 0;
}

static void conf_scan_header(struct conf *cfg, struct conf_scan *sc,
			     char *s, size_t len, int line, int *hdr)
{
	struct conf_line *l;
	char *close = strchr(s, ']'), *name;
	int i;

	/* iniparser would take the name up to the first ']'; so do we. */
	if (close != s + len - 1)
		conf_err(cfg, line, NULL, NULL, "text after ']' in section "
			 "header");
	*close = '\0';
	name = conf_trim(s + 1);
	conf_lower(name);
	if ((l = conf_scan_add(cfg, sc)) == NULL)
		return;
	l->line = line;
	l->hdr = *hdr = sc->n - 1;
	if ((l->sec = strdup(name)) == NULL ||
	    (l->norm = conf_normalize(name)) == NULL) {
		cfg->oom = 1;
		return;
	}
	if (*name == '\0') {
		/* iniparser then reuses a truncated earlier name */
		conf_err(cfg, line, NULL, NULL, "empty section name");
		sc->broken = 1;
		return;
	}
	for (i = 0; i < sc->n - 1; i++) {
		if (sc->lines[i].key == NULL &&
		    strcmp(sc->lines[i].norm, l->norm) == 0) {
			conf_err(cfg, line, l->norm, NULL, "duplicate section "
				 "(first at line %d)", sc->lines[i].line);
			break;
		}
	}
}

static void conf_scan_key(struct conf *cfg, struct conf_scan *sc, char *s,
			  char *eq, int line, int hdr)
{
	const char *norm = conf_scan_norm(sc, hdr);
	struct conf_line *l;
	char *key, *v, *end;
	int i;

	*eq = '\0';
	key = conf_trim(s);
	if (*key == '\0') {
		conf_err(cfg, line, NULL, NULL, "syntax error: no key before "
			 "'='");
		sc->broken = 1;
		return;
	}
	conf_lower(key);

	/* iniparser silently drops whatever follows a closing quote. */
	for (v = eq + 1; isspace((unsigned char)*v); v++)
		;
	if (*v == '"' || *v == '\'') {
		end = strchr(v + 1, *v);
		if (end == NULL) {
			conf_err(cfg, line, norm, key, "unterminated quote");
		} else {
			for (end++; isspace((unsigned char)*end); end++)
				;
			if (*end != '\0' && *end != '#' && *end != ';')
				conf_err(cfg, line, norm, key, "text after "
					 "closing quote");
		}
	}

	if ((l = conf_scan_add(cfg, sc)) == NULL)
		return;
	l->line = line;
	l->hdr = hdr;
	if ((l->key = strdup(key)) == NULL) {
		cfg->oom = 1;
		return;
	}
	for (i = 0; i < sc->n - 1; i++) {
		if (sc->lines[i].key != NULL &&
		    conf_same(conf_scan_norm(sc, sc->lines[i].hdr), norm) &&
		    strcmp(sc->lines[i].key, key) == 0) {
			conf_err(cfg, line, norm, key, "duplicate key (first "
				 "at line %d)", sc->lines[i].line);
			break;
		}
	}
}

/* One logical line, already stripped at the end, as iniparser_line(). */
static void conf_scan_line(struct conf *cfg, struct conf_scan *sc, char *s,
			   int line, int *hdr)
{
	char *eq;
	size_t len;

	s = conf_trim(s);
	len = strlen(s);
	if (len == 0 || *s == '#' || *s == ';')
		return;
	if (s[0] == '[' && s[len - 1] == ']') {
		conf_scan_header(cfg, sc, s, len, line, hdr);
		return;
	}
	eq = strchr(s, '=');
	if (eq == NULL) {
		conf_err(cfg, line, NULL, NULL, "syntax error: expected "
			 "[section], key = value or a comment");
		sc->broken = 1;
		return;
	}
	conf_scan_key(cfg, sc, s, eq, line, *hdr);
}

/*
 * Join "\" continuations into one buffer and apply the same length limit
 * as iniparser_load() (a fixed 1024-byte buffer filled by fgets()).
 */
static void conf_scan(struct conf *cfg, FILE *fp, struct conf_scan *sc)
{
	char phys[CONF_LINE_MAX + 2], buf[CONF_LINE_MAX + 2];
	size_t last = 0, len, n;
	int lineno = 0, start = 0, hdr = -1, toolong, nul, c;

	for (;;) {
		/* one physical line; a NUL byte is no text (fgets would cut
		 * the line there, and iniparser too) */
		len = 0;
		toolong = nul = 0;
		while ((c = getc(fp)) != EOF && c != '\n') {
			if (c == '\0')
				nul = 1;
			if (len < CONF_LINE_MAX)
				phys[len++] = (char)c;
			else
				toolong = 1;
		}
		if (c == EOF && len == 0 && !toolong && !nul)
			break;
		phys[len] = '\0';
		lineno++;
		if (nul) {
			conf_err(cfg, lineno, NULL, NULL, "a NUL byte in the "
				 "line (not a text file?)");
			sc->broken = 1;
			last = 0;
			if (++sc->bad_lines >= CONF_BAD_LINES_MAX)
				break;
			continue;
		}
		if (toolong || last + len > CONF_LINE_MAX) {
			conf_err(cfg, lineno, NULL, NULL, "line longer than "
				 "%d characters", CONF_LINE_MAX);
			sc->broken = 1;
			last = 0;
			if (++sc->bad_lines >= CONF_BAD_LINES_MAX)
				break;
			continue;
		}
		if (last == 0)
			start = lineno;
		memcpy(buf + last, phys, len + 1);
		n = last + len;
		while (n > 0 && isspace((unsigned char)buf[n - 1]))
			buf[--n] = '\0';
		if (n > 0 && buf[n - 1] == '\\') {
			last = n - 1;
			continue;
		}
		last = 0;
		conf_scan_line(cfg, sc, buf, start, &hdr);
	}
	if (ferror(fp)) {
		conf_err(cfg, 0, NULL, NULL, "read error: %s",
			 strerror(errno));
		sc->readerr = 1;
	} else if (last > 0) {
		conf_err(cfg, start, NULL, NULL, "line continuation at end of "
			 "file");
	}
}

static void conf_scan_free(struct conf_scan *sc)
{
	int i;

	for (i = 0; i < sc->n; i++) {
		free(sc->lines[i].sec);
		free(sc->lines[i].norm);
		free(sc->lines[i].key);
	}
	free(sc->lines);
}

/* ---- schema walk -------------------------------------------------------- */

static struct conf_inst *conf_inst_new(struct conf *cfg,
				       const struct conf_section_desc *sd,
				       const char *full, int line)
{
	struct conf_inst *inst;
	size_t base = strlen(sd->name);

	if ((inst = calloc(1, sizeof(*inst))) == NULL)
		goto oom;
	for (inst->nkeys = 0; sd->keys[inst->nkeys].name; inst->nkeys++)
		;
	inst->vals = calloc(inst->nkeys + 1, sizeof(*inst->vals));
	inst->seen = calloc(inst->nkeys + 1, sizeof(*inst->seen));
	inst->section = strdup(full);
	if (inst->vals == NULL || inst->seen == NULL ||
	    inst->section == NULL) {
		free(inst->vals);
		free(inst->seen);
		free(inst->section);
		free(inst);
		goto oom;
	}
	inst->desc = sd;
	inst->line = line;
	inst->name = inst->section + base + (full[base] != '\0');
	*cfg->tail = inst;
	cfg->tail = &inst->next;
	return inst;
oom:
	cfg->oom = 1;
	return NULL;
}

/* Returns the instance keys of raw go to, or NULL to ignore them. */
static struct conf_inst *conf_walk_section(struct conf *cfg, const char *raw,
					   const struct conf_scan *sc)
{
	const struct conf_section_desc *sd;
	struct conf_inst *inst = NULL;
	size_t base = strcspn(raw, " \t\n\v\f\r");
	const char *name = raw + base;
	int line = conf_scan_find(sc, raw, NULL);
	char *norm, vis[48];

	if (*raw == '\0')
		return NULL;	/* "[]", reported by the scan */
	if ((norm = conf_normalize(raw)) == NULL) {
		cfg->oom = 1;
		return NULL;
	}
	while (isspace((unsigned char)*name))
		name++;
	for (sd = cfg->schema; sd->name != NULL; sd++)
		if (strlen(sd->name) == base &&
		    strncmp(sd->name, raw, base) == 0)
			break;

	if (sd->name == NULL) {
		conf_err(cfg, line, norm, NULL, "unknown section");
	} else if (!(sd->flags & CONF_MULTI) && *name != '\0') {
		conf_err(cfg, line, norm, NULL, "unknown section ([%s] takes "
			 "no instance name)", sd->name);
	} else if ((sd->flags & CONF_MULTI) && *name == '\0') {
		conf_err(cfg, line, norm, NULL, "missing instance name "
			 "(expected [%s NAME])", sd->name);
	} else if ((sd->flags & CONF_MULTI) &&
		   !conf_valid_name(name, CONF_INSTANCE_MAX)) {
		conf_err(cfg, line, norm, NULL, "invalid instance name \"%s\" "
			 "(expected up to %d of a-z 0-9 _ . -)",
			 conf_vis(name, vis, sizeof(vis)), CONF_INSTANCE_MAX);
	} else {
		/* A second "[x]" was reported by the scan; keep the first. */
		inst = (struct conf_inst *)conf_inst_find(cfg, norm);
		if (inst == NULL)
			inst = conf_inst_new(cfg, sd, norm, line);
	}
	free(norm);
	return inst;
}

static void conf_set_value(struct conf *cfg, struct conf_inst *inst,
			   size_t k, const char *text, int line)
{
	const struct conf_key_desc *kd = &inst->desc->keys[k];
	struct conf_value v;
	const char *why;

	memset(&v, 0, sizeof(v));
	if (conf_value_parse(kd, text, &v, &why) == -1) {
		conf_err_value(cfg, line, inst->section, kd, text, why);
		return;
	}
	if ((v.text = strdup(text)) == NULL) {
		cfg->oom = 1;
		return;
	}
	v.desc = kd;
	v.line = line;
	free((char *)inst->vals[k].text);
	inst->vals[k] = v;
}

static void conf_walk_key(struct conf *cfg, struct conf_inst *inst,
			  const char *raw, const char *key, const char *val,
			  const struct conf_scan *sc)
{
	int line = conf_scan_find(sc, raw, key);
	size_t k;

	for (k = 0; k < inst->nkeys; k++)
		if (strcmp(inst->desc->keys[k].name, key) == 0)
			break;
	if (k == inst->nkeys) {
		conf_err(cfg, line, inst->section, key, "unknown key");
		return;
	}
	/* Rejected or not, it was given: no default, no "missing". */
	inst->seen[k] = 1;
	conf_set_value(cfg, inst, k, val, line);
}

struct conf_dsec {
	const char		*raw;
	size_t			 len;
	struct conf_inst	*inst;
};

/*
 * iniparser stores "section" (value NULL) and "section:key" entries in
 * file order.  A key's section is the longest section name it starts
 * with, so a ':' in a name cannot make us guess wrong.
 */
static void conf_walk(struct conf *cfg, const dictionary *d,
		      const struct conf_scan *sc)
{
	struct conf_dsec *ds, *best;
	const char *key;
	size_t nds = 0, j;
	ssize_t i;

	if ((ds = calloc(d->size + 1, sizeof(*ds))) == NULL) {
		cfg->oom = 1;
		return;
	}
	for (i = 0; i < d->size; i++) {
		if (d->key[i] == NULL || d->val[i] != NULL)
			continue;
		ds[nds].raw = d->key[i];
		ds[nds].len = strlen(d->key[i]);
		ds[nds].inst = conf_walk_section(cfg, d->key[i], sc);
		nds++;
	}
	for (i = 0; i < d->size; i++) {
		if ((key = d->key[i]) == NULL || d->val[i] == NULL)
			continue;
		best = NULL;
		for (j = 0; j < nds; j++)
			if (strncmp(key, ds[j].raw, ds[j].len) == 0 &&
			    key[ds[j].len] == ':' &&
			    (best == NULL || ds[j].len > best->len))
				best = &ds[j];
		if (best == NULL) {
			key += (*key == ':');
			conf_err(cfg, conf_scan_find(sc, NULL, key), NULL, key,
				 "key outside any section");
			continue;
		}
		if (best->inst != NULL)
			conf_walk_key(cfg, best->inst, best->raw,
				      key + best->len + 1, d->val[i], sc);
	}
	free(ds);
}

/* Absent sections, required keys and sections, defaults; schema order. */
static void conf_finish(struct conf *cfg)
{
	char pat[CONF_INSTANCE_MAX + sizeof(" NAME")];
	const struct conf_section_desc *sd;
	const struct conf_key_desc *kd;
	struct conf_inst *inst;
	size_t k;

	for (sd = cfg->schema; sd->name != NULL; sd++) {
		if (conf_inst_first(cfg, sd->name) == NULL) {
			if (sd->flags & CONF_REQUIRED) {
				snprintf(pat, sizeof(pat), "%s%s", sd->name,
					 sd->flags & CONF_MULTI ? " NAME" : "");
				conf_err(cfg, 0, pat, NULL, "required section "
					 "missing");
			}
			if (!(sd->flags & CONF_MULTI))
				conf_inst_new(cfg, sd, sd->name, 0);
		}
		for (inst = cfg->insts; inst != NULL; inst = inst->next) {
			if (inst->desc != sd)
				continue;
			for (k = 0; k < inst->nkeys; k++) {
				kd = &sd->keys[k];
				if (inst->seen[k])
					continue;
				if (kd->def != NULL)
					conf_set_value(cfg, inst, k, kd->def,
						       0);
				else if (kd->required && (inst->line > 0 ||
				    !(sd->flags & CONF_REQUIRED)))
					conf_err(cfg, inst->line,
						 inst->section, kd->name,
						 "required key missing");
			}
		}
	}
}

static int conf_ini_quiet(const char *fmt, ...)
{
	(void)fmt;
	return 0;
}

int conf_load(const char *path, const struct conf_section_desc *schema,
	      struct conf **cfgp)
{
	struct conf_scan sc;
	struct conf *cfg;
	dictionary *d;
	FILE *fp;
	struct stat st;

	*cfgp = NULL;
	if (conf_schema_check(schema) > 0) {
		errno = EINVAL;
		return -1;
	}
	if ((cfg = calloc(1, sizeof(*cfg))) == NULL)
		return -1;
	if ((cfg->path = strdup(path)) == NULL) {
		free(cfg);
		return -1;
	}
	cfg->schema = schema;
	cfg->tail = &cfg->insts;
	memset(&sc, 0, sizeof(sc));

	if ((fp = fopen(path, "r")) == NULL) {
		conf_err(cfg, 0, NULL, NULL, "%s", strerror(errno));
		goto done;
	}
	/* iniparser reads the file again by its name: a regular file of a
	 * configuration's size (not a device that never ends, a pipe that
	 * empties) */
	if (fstat(fileno(fp), &st) < 0 || !S_ISREG(st.st_mode) ||
	    st.st_size > CONF_FILE_MAX) {
		conf_err(cfg, 0, NULL, NULL, "%s",
			 fstat(fileno(fp), &st) < 0 ? strerror(errno) :
			 !S_ISREG(st.st_mode) ? "not a regular file" :
			 "larger than 1 MiB: not a configuration");
		fclose(fp);
		goto done;
	}
	conf_scan(cfg, fp, &sc);
	fclose(fp);
	if (sc.readerr)
		goto done;

	/*
	 * The scan has reported, with their lines, the faults that make
	 * iniparser refuse the file or misread it; nothing more to learn.
	 */
	if (sc.broken)
		goto done;
	iniparser_set_error_callback(conf_ini_quiet);
	d = iniparser_load(path);
	iniparser_set_error_callback(NULL);
	if (d == NULL) {
		conf_err(cfg, 0, NULL, NULL, "iniparser could not read the "
			 "file");
		goto done;
	}
	conf_walk(cfg, d, &sc);
	iniparser_freedict(d);
	conf_finish(cfg);
done:
	conf_scan_free(&sc);
	if (cfg->oom) {
		conf_free(cfg);
		errno = ENOMEM;
		return -1;
	}
	if (cfg->nerrs > 1)
		qsort(cfg->errs, cfg->nerrs, sizeof(*cfg->errs),
		      conf_err_cmp);
	*cfgp = cfg;
	return cfg->nerrs;
}

void conf_free(struct conf *cfg)
{
	struct conf_inst *inst, *next;
	size_t k;
	int i;

	if (cfg == NULL)
		return;
	for (inst = cfg->insts; inst != NULL; inst = next) {
		next = inst->next;
		for (k = 0; k < inst->nkeys; k++)
			free((char *)inst->vals[k].text);
		free(inst->vals);
		free(inst->seen);
		free(inst->section);
		free(inst);
	}
	for (i = 0; i < cfg->nerrs; i++) {
		free(cfg->errs[i].msg);
		free(cfg->errs[i].section);
		free(cfg->errs[i].key);
	}
	free(cfg->errs);
	free(cfg->path);
	free(cfg);
}

/* ---- access ------------------------------------------------------------- */

int conf_nerrors(const struct conf *cfg)
{
	return cfg ? cfg->nerrs : 0;
}

const struct conf_error *conf_error(const struct conf *cfg, int i)
{
	if (cfg == NULL || i < 0 || i >= cfg->nerrs)
		return NULL;
	return &cfg->errs[i].pub;
}

void conf_log_errors(const struct conf *cfg)
{
	int i;

	for (i = 0; i < conf_nerrors(cfg); i++)
		log_warnx("%s", cfg->errs[i].msg);
}

const struct conf_inst *conf_inst_find(const struct conf *cfg,
				       const char *section)
{
	const struct conf_inst *inst;

	if (cfg == NULL || section == NULL)
		return NULL;
	for (inst = cfg->insts; inst != NULL; inst = inst->next)
		if (strcasecmp(inst->section, section) == 0)
			return inst;
	return NULL;
}

const struct conf_inst *conf_inst_first(const struct conf *cfg,
					const char *name)
{
	const struct conf_inst *inst;

	if (cfg == NULL || name == NULL)
		return NULL;
	for (inst = cfg->insts; inst != NULL; inst = inst->next)
		if (strcasecmp(inst->desc->name, name) == 0)
			return inst;
	return NULL;
}

const struct conf_inst *conf_inst_next(const struct conf_inst *inst)
{
	const struct conf_inst *n;

	if (inst == NULL)
		return NULL;
	for (n = inst->next; n != NULL; n = n->next)
		if (n->desc == inst->desc)
			return n;
	return NULL;
}

int conf_inst_count(const struct conf *cfg, const char *name)
{
	const struct conf_inst *inst;
	int n = 0;

	for (inst = conf_inst_first(cfg, name); inst != NULL;
	     inst = conf_inst_next(inst))
		n++;
	return n;
}

const char *conf_inst_section(const struct conf_inst *inst)
{
	return inst->section;
}

const char *conf_inst_name(const struct conf_inst *inst)
{
	return inst->name;
}

int conf_inst_line(const struct conf_inst *inst)
{
	return inst->line;
}

const struct conf_value *conf_inst_get(const struct conf_inst *inst,
				       const char *key)
{
	size_t k;

	if (inst == NULL || key == NULL) {
		errno = ENOENT;
		return NULL;
	}
	for (k = 0; k < inst->nkeys; k++) {
		if (strcasecmp(inst->desc->keys[k].name, key) != 0)
			continue;
		if (inst->vals[k].text == NULL) {
			errno = ENOENT;
			return NULL;
		}
		return &inst->vals[k];
	}
	errno = EINVAL;
	return NULL;
}

const struct conf_value *conf_get(const struct conf *cfg,
				  const char *section, const char *key)
{
	return conf_inst_get(conf_inst_find(cfg, section), key);
}

static const struct conf_value *conf_get_typed(const struct conf *cfg,
					       const char *section,
					       const char *key,
					       enum conf_type type)
{
	const struct conf_value *v = conf_get(cfg, section, key);

	if (v != NULL && v->desc->type != type) {
		errno = EINVAL;
		return NULL;
	}
	return v;
}

const char *conf_get_str(const struct conf *cfg, const char *section,
			 const char *key)
{
	const struct conf_value *v = conf_get(cfg, section, key);

	return v ? v->text : NULL;
}

int conf_get_bool(const struct conf *cfg, const char *section,
		  const char *key, int *out)
{
	const struct conf_value *v;

	if ((v = conf_get_typed(cfg, section, key, CONF_BOOL)) == NULL)
		return -1;
	*out = v->v.b;
	return 0;
}

int conf_get_uint(const struct conf *cfg, const char *section,
		  const char *key, unsigned long long *out)
{
	const struct conf_value *v;

	if ((v = conf_get_typed(cfg, section, key, CONF_UINT)) == NULL)
		return -1;
	*out = v->v.u;
	return 0;
}

int conf_get_int(const struct conf *cfg, const char *section,
		 const char *key, long long *out)
{
	const struct conf_value *v;

	if ((v = conf_get_typed(cfg, section, key, CONF_INT)) == NULL)
		return -1;
	*out = v->v.i;
	return 0;
}

int conf_get_double(const struct conf *cfg, const char *section,
		    const char *key, double *out)
{
	const struct conf_value *v;

	if ((v = conf_get_typed(cfg, section, key, CONF_DOUBLE)) == NULL)
		return -1;
	*out = v->v.d;
	return 0;
}

int conf_get_enum(const struct conf *cfg, const char *section,
		  const char *key, unsigned int *out)
{
	const struct conf_value *v;

	if ((v = conf_get_typed(cfg, section, key, CONF_ENUM)) == NULL)
		return -1;
	*out = v->v.e;
	return 0;
}

int conf_get_pkey(const struct conf *cfg, const char *section,
		  const char *key, uint16_t *out)
{
	const struct conf_value *v;

	if ((v = conf_get_typed(cfg, section, key, CONF_PKEY)) == NULL)
		return -1;
	*out = v->v.pkey;
	return 0;
}

int conf_get_cidr(const struct conf *cfg, const char *section,
		  const char *key, struct inet_prefix *out)
{
	const struct conf_value *v;

	if ((v = conf_get_typed(cfg, section, key, CONF_CIDR)) == NULL)
		return -1;
	*out = v->v.cidr;
	return 0;
}

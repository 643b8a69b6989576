// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The renderers of counter tables (see counters.h).  Each format walks
 * the table once; the formats differ only in how a name and a value are
 * written, as bgpctl's output plug-ins do.
 */
#include <stdio.h>
#include <string.h>

#include "conf/counters.h"

static void out(const struct counter_out *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void out(const struct counter_out *o, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	o->vprintf(o->arg, fmt, ap);
	va_end(ap);
}

static uint64_t counter_get(const void *stats, size_t off, unsigned int i)
{
	uint64_t v;

	/* stats is any struct: copy rather than cast an unaligned pointer */
	memcpy(&v, (const char *)stats + off + i * sizeof(v), sizeof(v));
	return v;
}

void counters_walk(const struct counter_desc *t, const void *stats,
		   void (*fn)(void *arg, const struct counter_desc *d,
			      const char *name, const char *reason,
			      uint64_t v),
		   void *arg)
{
	char name[96];
	unsigned int i;

	for (; t->name; t++) {
		if (!t->n) {
			fn(arg, t, t->name, NULL, counter_get(stats, t->off, 0));
			continue;
		}
		for (i = 0; i < t->n; i++) {
			const char *r = t->reason(i);

			snprintf(name, sizeof(name), "%s.%s", t->name, r);
			fn(arg, t, name, r, counter_get(stats, t->off, i));
		}
	}
}

struct text_ctx {
	const struct counter_out *o;
	const char *prefix;
	int width;
	int *first;
};

static void text_one(void *arg, const struct counter_desc *d,
		     const char *name, const char *reason, uint64_t v)
{
	struct text_ctx *c = arg;

	(void)d;
	(void)reason;
	out(c->o, "%s%-*s %llu\n", c->prefix, c->width, name,
	    (unsigned long long)v);
}

void counters_text(const struct counter_out *o, const struct counter_desc *t,
		   const void *stats, const char *prefix, int width)
{
	struct text_ctx c = { o, prefix, width, NULL };

	counters_walk(t, stats, text_one, &c);
}

/* the names are C identifiers and dots: nothing to escape */
static void json_one(void *arg, const struct counter_desc *d,
		     const char *name, const char *reason, uint64_t v)
{
	struct text_ctx *c = arg;

	(void)d;
	(void)reason;
	out(c->o, "%s\"%s\":%llu", *c->first ? "" : ",", name,
	    (unsigned long long)v);
	*c->first = 0;
}

void counters_json(const struct counter_out *o, const struct counter_desc *t,
		   const void *stats, int *first)
{
	struct text_ctx c = { o, NULL, 0, first };

	counters_walk(t, stats, json_one, &c);
}

void counters_prom_head(const struct counter_out *o, const char *family,
			const char *type, const char *help)
{
	out(o, "# HELP %s %s\n# TYPE %s %s\n", family, help, family, type);
}

void counters_prom_sample(const struct counter_out *o, const char *family,
			  const struct counter_desc *d, const void *stats,
			  const char *labels)
{
	unsigned int i;

	if (!d->n) {
		out(o, "%s%s%s%s %llu\n", family, *labels ? "{" : "", labels,
		    *labels ? "}" : "",
		    (unsigned long long)counter_get(stats, d->off, 0));
		return;
	}
	for (i = 0; i < d->n; i++)
		out(o, "%s{%s%sreason=\"%s\"} %llu\n", family, labels,
		    *labels ? "," : "", d->reason(i),
		    (unsigned long long)counter_get(stats, d->off, i));
}

void counters_prom(const struct counter_out *o, const char *prefix,
		   const struct counter_desc *t, const void *const *stats,
		   const char *const *labels, unsigned int ninst)
{
	char family[128], *p;
	unsigned int i;

	size_t len;
	int gauge;

	for (; t->name; t++) {
		if (t->n)
			continue;
		/* "..._now" is a level, not a count: a gauge, no _total */
		len = strlen(t->name);
		gauge = len > 4 && !strcmp(t->name + len - 4, "_now");
		snprintf(family, sizeof(family), gauge ? "%s%s" : "%s%s_total",
			 prefix, t->name);
		/* "drop.x" is a name in text and JSON, not in Prometheus */
		for (p = family; *p; p++)
			if (*p == '.')
				*p = '_';
		counters_prom_head(o, family, gauge ? "gauge" : "counter",
				   t->help);
		for (i = 0; i < ninst; i++)
			counters_prom_sample(o, family, t, stats[i], labels[i]);
	}
}

void counter_buf_vprintf(void *arg, const char *fmt, va_list ap)
{
	struct counter_buf *b = arg;
	int n;

	if (b->len + 1 >= b->cap)
		return;
	n = vsnprintf(b->buf + b->len, b->cap - b->len, fmt, ap);
	if (n < 0)
		return;
	if ((size_t)n >= b->cap - b->len)
		b->len = b->cap - 1;	/* cut: what fit stays */
	else
		b->len += (size_t)n;
}

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Counters, declared once per statistics struct and rendered from that
 * declaration: text ("name value" lines), JSON members and Prometheus
 * samples.  Owns the formats, not the structs: a module keeps its table
 * beside its struct, one line per counter, e.g.
 *
 *	static const struct counter_desc foo_counters[] = {
 *		COUNTER("rx_packets", struct foo_stats, rx_packets, "..."),
 *		COUNTER_ARRAY("drop", struct foo_stats, drop, foo_drop_reason,
 *			      "..."),
 *		COUNTERS_END
 *	};
 *
 * Every counter is a uint64_t.  An array (drops by reason) is one entry
 * whose elements are named "drop.<reason>" in text and JSON and carry
 * reason="<reason>" in Prometheus.  Output goes through a printf-like
 * callback, so the same renderer fills a control-socket answer, an
 * evbuffer or a plain buffer.
 */
#ifndef IBGW_COUNTERS_H
#define IBGW_COUNTERS_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

struct counter_desc {
	const char *name;	/* text and JSON name, Prometheus suffix */
	size_t off;		/* of the uint64_t (or its array) */
	const char *help;	/* Prometheus HELP, and what ibgwctl(8) says */
	unsigned int n;		/* 0: one counter; else an array of n */
	const char *(*reason)(unsigned int i);	/* an array's element names */
};

#define COUNTER(name, type, field, help) \
	{ name, offsetof(type, field), help, 0, NULL }
#define COUNTER_ARRAY(name, type, field, reason, help) \
	{ name, offsetof(type, field), help, \
	  sizeof(((type *)0)->field) / sizeof(uint64_t), reason }
#define COUNTERS_END	{ NULL, 0, NULL, 0, NULL }

/* Where rendered text goes: printf(arg, fmt, ap). */
struct counter_out {
	void (*vprintf)(void *arg, const char *fmt, va_list ap);
	void *arg;
};

/* Calls fn for every counter of table t in stats, in table order:
 * name is the full name ("drop.no_carrier"), reason the element's name
 * (NULL for a single counter). */
void counters_walk(const struct counter_desc *t, const void *stats,
		   void (*fn)(void *arg, const struct counter_desc *d,
			      const char *name, const char *reason,
			      uint64_t v),
		   void *arg);

/* One line per counter: prefix, the name padded to width, a space and the
 * value ("tx_packets 12\n" with prefix "" and width 0). */
void counters_text(const struct counter_out *o, const struct counter_desc *t,
		   const void *stats, const char *prefix, int width);

/* JSON members "name":value, separated by commas; *first says whether
 * one was written before (and is cleared once one is). */
void counters_json(const struct counter_out *o, const struct counter_desc *t,
		   const void *stats, int *first);

/* A Prometheus family's # HELP and # TYPE lines. */
void counters_prom_head(const struct counter_out *o, const char *family,
			const char *type, const char *help);
/* The samples of counter d of stats in family, labelled with labels
 * ('a="x",b="y"', or "" for none) and, for an array, reason="...". */
void counters_prom_sample(const struct counter_out *o, const char *family,
			  const struct counter_desc *d, const void *stats,
			  const char *labels);
/* Every single counter of t as a family of its own, prefix + name +
 * "_total" (dots made underscores), with one sample per instance
 * (stats[i], labels[i]).  Arrays
 * are left out: their caller puts them in a family of its choice with
 * counters_prom_sample(). */
void counters_prom(const struct counter_out *o, const char *prefix,
		   const struct counter_desc *t, const void *const *stats,
		   const char *const *labels, unsigned int ninst);

/* A counter_out that appends to a NUL-terminated buffer, cut at its end. */
struct counter_buf {
	char *buf;
	size_t len, cap;
};
void counter_buf_vprintf(void *arg, const char *fmt, va_list ap);

#endif

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Counter tables (conf/counters.c): one small table in every format. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "conf/counters.h"

struct demo_stats {
	uint32_t pad;			/* the counters need not come first */
	uint64_t rx_packets, tx_error;
	uint64_t drop[2];
};

static const char *demo_reason(unsigned int i)
{
	return i ? "too_big" : "no_route";
}

static const struct counter_desc demo_counters[] = {
	COUNTER("rx_packets", struct demo_stats, rx_packets, "Packets in."),
	COUNTER("drop.tx_error", struct demo_stats, tx_error, "Refused."),
	COUNTER_ARRAY("drop", struct demo_stats, drop, demo_reason,
		      "Dropped, by reason."),
	COUNTERS_END
};

static const struct demo_stats demo = { 0, 7, 1, { 2, 18446744073709551615ULL } };

static char text[1024];
static struct counter_buf cb;
static struct counter_out out = { counter_buf_vprintf, &cb };

static int setup(void **state)
{
	(void)state;
	memset(text, 0, sizeof(text));
	cb.buf = text;
	cb.len = 0;
	cb.cap = sizeof(text);
	return 0;
}

static void test_array_length(void **state)
{
	(void)state;
	assert_int_equal(demo_counters[0].n, 0);
	assert_int_equal(demo_counters[2].n, 2);
	assert_int_equal(demo_counters[2].off, offsetof(struct demo_stats, drop));
}

static void test_text_plain(void **state)
{
	(void)state;
	counters_text(&out, demo_counters, &demo, "", 0);
	assert_string_equal(text,
			    "rx_packets 7\n"
			    "drop.tx_error 1\n"
			    "drop.no_route 2\n"
			    "drop.too_big 18446744073709551615\n");
	assert_int_equal(cb.len, strlen(text));
}

static void test_text_table(void **state)
{
	(void)state;
	counters_text(&out, demo_counters, &demo, "p1   ib  ", 14);
	assert_string_equal(text,
			    "p1   ib  rx_packets     7\n"
			    "p1   ib  drop.tx_error  1\n"
			    "p1   ib  drop.no_route  2\n"
			    "p1   ib  drop.too_big   18446744073709551615\n");
}

static void test_json(void **state)
{
	int first = 1;

	(void)state;
	counters_json(&out, demo_counters, &demo, &first);
	assert_int_equal(first, 0);
	/* a second table continues the same object */
	counters_json(&out, demo_counters, &demo, &first);
	assert_string_equal(text,
			    "\"rx_packets\":7,\"drop.tx_error\":1,"
			    "\"drop.no_route\":2,"
			    "\"drop.too_big\":18446744073709551615,"
			    "\"rx_packets\":7,\"drop.tx_error\":1,"
			    "\"drop.no_route\":2,"
			    "\"drop.too_big\":18446744073709551615");
}

static void test_prom_families(void **state)
{
	const struct demo_stats two = { 0, 9, 0, { 0, 0 } };
	const void *stats[] = { &demo, &two };
	const char *labels[] = { "partition=\"a\"", "partition=\"b\"" };

	(void)state;
	counters_prom(&out, "x_", demo_counters, stats, labels, 2);
	assert_string_equal(text,
			    "# HELP x_rx_packets_total Packets in.\n"
			    "# TYPE x_rx_packets_total counter\n"
			    "x_rx_packets_total{partition=\"a\"} 7\n"
			    "x_rx_packets_total{partition=\"b\"} 9\n"
			    "# HELP x_drop_tx_error_total Refused.\n"
			    "# TYPE x_drop_tx_error_total counter\n"
			    "x_drop_tx_error_total{partition=\"a\"} 1\n"
			    "x_drop_tx_error_total{partition=\"b\"} 0\n");
}

/* A "..._now" counter is a level: a gauge, named without _total. */
static void test_prom_gauge(void **state)
{
	static const struct counter_desc t[] = {
		COUNTER("conns_now", struct demo_stats, rx_packets, "Now."),
		COUNTER("know", struct demo_stats, tx_error, "Not a level."),
		COUNTERS_END
	};
	const void *stats[] = { &demo };
	const char *labels[] = { "partition=\"a\"" };

	(void)state;
	counters_prom(&out, "x_", t, stats, labels, 1);
	assert_string_equal(text,
			    "# HELP x_conns_now Now.\n"
			    "# TYPE x_conns_now gauge\n"
			    "x_conns_now{partition=\"a\"} 7\n"
			    "# HELP x_know_total Not a level.\n"
			    "# TYPE x_know_total counter\n"
			    "x_know_total{partition=\"a\"} 1\n");
}

static void test_prom_samples(void **state)
{
	(void)state;
	counters_prom_head(&out, "x_drops_total", "counter", "Drops.");
	counters_prom_sample(&out, "x_drops_total", &demo_counters[2], &demo,
			     "side=\"ib\"");
	counters_prom_sample(&out, "x_drops_total", &demo_counters[2], &demo,
			     "");
	counters_prom_sample(&out, "x_in", &demo_counters[0], &demo, "");
	assert_string_equal(text,
			    "# HELP x_drops_total Drops.\n"
			    "# TYPE x_drops_total counter\n"
			    "x_drops_total{side=\"ib\",reason=\"no_route\"} 2\n"
			    "x_drops_total{side=\"ib\",reason=\"too_big\"} "
			    "18446744073709551615\n"
			    "x_drops_total{reason=\"no_route\"} 2\n"
			    "x_drops_total{reason=\"too_big\"} "
			    "18446744073709551615\n"
			    "x_in 7\n");
}

/* a full buffer keeps what fit, NUL-terminated, and takes no more */
static void test_buf_cut(void **state)
{
	char small[20];
	struct counter_buf b = { small, 0, sizeof(small) };
	struct counter_out o = { counter_buf_vprintf, &b };

	(void)state;
	counters_text(&o, demo_counters, &demo, "", 0);
	assert_int_equal(b.len, sizeof(small) - 1);
	assert_string_equal(small, "rx_packets 7\ndrop.t");
}

struct walk_ctx {
	char seen[256];
	uint64_t sum;
};

static void walk_one(void *arg, const struct counter_desc *d,
		     const char *name, const char *reason, uint64_t v)
{
	struct walk_ctx *c = arg;

	strcat(c->seen, name);
	strcat(c->seen, reason ? "/" : "|");
	if (reason)
		strcat(c->seen, reason);
	strcat(c->seen, d->n ? "A " : "S ");
	c->sum += v;
}

static void test_walk(void **state)
{
	struct walk_ctx c = { "", 0 };
	const struct demo_stats s = { 0, 1, 2, { 3, 4 } };

	(void)state;
	counters_walk(demo_counters, &s, walk_one, &c);
	assert_string_equal(c.seen, "rx_packets|S drop.tx_error|S "
			    "drop.no_route/no_routeA drop.too_big/too_bigA ");
	assert_int_equal(c.sum, 10);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_array_length),
		cmocka_unit_test_setup(test_text_plain, setup),
		cmocka_unit_test_setup(test_text_table, setup),
		cmocka_unit_test_setup(test_json, setup),
		cmocka_unit_test_setup(test_prom_families, setup),
		cmocka_unit_test_setup(test_prom_gauge, setup),
		cmocka_unit_test_setup(test_prom_samples, setup),
		cmocka_unit_test(test_buf_cut),
		cmocka_unit_test(test_walk),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

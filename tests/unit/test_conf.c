// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unit tests for conf/: the value parsers on their own, then whole files
 * written to a private temporary directory and loaded against a schema
 * shaped like the gateway's.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "conf/conf.h"

/* ---- schema under test --------------------------------------------------- */

static const char *const gw_modes[] = { "datagram", "connected", NULL };

static const struct conf_key_desc gw_keys[] = {
	{ .name = "name", .type = CONF_STRING, .required = 1 },
	{ .name = "mtu", .type = CONF_UINT, .umin = 68, .umax = 65520,
	  .def = "2044" },
	{ .name = "mode", .type = CONF_ENUM, .words = gw_modes,
	  .def = "datagram" },
	{ .name = "offload", .type = CONF_BOOL, .def = "no" },
	{ .name = "pidfile", .type = CONF_PATH, .def = "/run/ibgw.pid" },
	{ .name = "drop", .type = CONF_DOUBLE, .dmin = 0.0, .dmax = 1.0,
	  .def = "0" },
	{ .name = "skew", .type = CONF_INT, .imin = -100, .imax = 100 },
	{ .name = NULL }
};

static const struct conf_key_desc part_keys[] = {
	{ .name = "pkey", .type = CONF_PKEY, .required = 1 },
	{ .name = "address", .type = CONF_CIDR, .required = 1 },
	{ .name = "vlan", .type = CONF_UINT, .umin = 1, .umax = 4094 },
	{ .name = NULL }
};

static const struct conf_key_desc log_keys[] = {
	{ .name = "verbose", .type = CONF_BOOL, .def = "off" },
	{ .name = "facility", .type = CONF_STRING, .def = "daemon" },
	{ .name = NULL }
};

static const struct conf_section_desc schema[] = {
	{ .name = "gateway", .keys = gw_keys },
	{ .name = "partition", .flags = CONF_MULTI | CONF_REQUIRED,
	  .keys = part_keys },
	{ .name = "log", .keys = log_keys },
	{ .name = NULL }
};

/* ---- fixtures ------------------------------------------------------------ */

static char tmpdir[] = "/tmp/test_conf.XXXXXX";
static char path[PATH_MAX];
static struct conf *cfg;

static int group_setup(void **state)
{
	(void)state;
	if (mkdtemp(tmpdir) == NULL)
		return -1;
	snprintf(path, sizeof(path), "%s/ibgw.conf", tmpdir);
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	unlink(path);
	return rmdir(tmpdir);
}

static int test_teardown(void **state)
{
	(void)state;
	conf_free(cfg);
	cfg = NULL;
	return 0;
}

/* Write text as the config file and load it; returns the error count. */
static int load(const char *text)
{
	FILE *fp;
	int n;

	fp = fopen(path, "w");
	assert_non_null(fp);
	assert_int_equal(fputs(text, fp) >= 0, 1);
	assert_int_equal(fclose(fp), 0);
	conf_free(cfg);
	cfg = NULL;
	n = conf_load(path, schema, &cfg);
	assert_non_null(cfg);
	assert_int_equal(n, conf_nerrors(cfg));
	return n;
}

static void dump_errors(void)
{
	int i;

	for (i = 0; i < conf_nerrors(cfg); i++)
		print_message("  error %d: %s\n", i, conf_error(cfg, i)->msg);
}

/* Load text and insist on n errors, showing them all if not. */
#define assert_load(text, n)						\
	do {								\
		int got_ = load(text);					\
									\
		if (got_ != (n)) {					\
			dump_errors();					\
			fail_msg("%d errors, expected %d", got_, (n));	\
		}							\
	} while (0)

/* Assert that error i reads exactly "PATH<rest>". */
static void assert_error(int i, const char *rest)
{
	const struct conf_error *e = conf_error(cfg, i);
	char want[PATH_MAX + 256];

	snprintf(want, sizeof(want), "%s%s", path, rest);
	if (e == NULL)
		dump_errors();
	assert_non_null(e);
	assert_string_equal(e->msg, want);
}

/* Assert that one error contains text; returns it. */
static const struct conf_error *assert_has_error(const char *text)
{
	const struct conf_error *e;
	int i;

	for (i = 0; i < conf_nerrors(cfg); i++) {
		e = conf_error(cfg, i);
		if (strstr(e->msg, text) != NULL)
			return e;
	}
	print_message("no error contains \"%s\"\n", text);
	dump_errors();
	fail();
	return NULL;
}

#define PART_OK "[partition default]\npkey = 0xffff\naddress = 10.0.0.1/24\n"

/* ---- conf_parse_uint ----------------------------------------------------- */

static void test_parse_uint_good(void **state)
{
	unsigned long long v;

	(void)state;
	assert_int_equal(conf_parse_uint("0", 0, 10, &v, NULL), 0);
	assert_int_equal(v, 0);
	assert_int_equal(conf_parse_uint("42", 0, 100, &v, NULL), 0);
	assert_int_equal(v, 42);
	assert_int_equal(conf_parse_uint("007", 0, 100, &v, NULL), 0);
	assert_int_equal(v, 7);		/* decimal, never octal */
	assert_int_equal(conf_parse_uint("0x10", 0, 100, &v, NULL), 0);
	assert_int_equal(v, 16);
	assert_int_equal(conf_parse_uint("0XfF", 0, 255, &v, NULL), 0);
	assert_int_equal(v, 255);
	assert_int_equal(conf_parse_uint("18446744073709551615", 0,
					 ULLONG_MAX, &v, NULL), 0);
	assert_true(v == ULLONG_MAX);
	assert_int_equal(conf_parse_uint("0xffffffffffffffff", 0,
					 ULLONG_MAX, &v, NULL), 0);
	assert_true(v == ULLONG_MAX);
	/* bounds are inclusive */
	assert_int_equal(conf_parse_uint("1", 1, 4094, &v, NULL), 0);
	assert_int_equal(conf_parse_uint("4094", 1, 4094, &v, NULL), 0);
}

static void test_parse_uint_bad(void **state)
{
	static const char *const bad[] = {
		"", "-1", "-0", "+1", " 1", "1 ", "1x", "12abc", "0x", "0xg",
		"0x1g", "1.0", "1e3", "x10", "18446744073709551616",
		"99999999999999999999999", "0x10000000000000000", "\t5",
	};
	unsigned long long v = 1234;
	const char *why;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why = NULL;
		if (conf_parse_uint(bad[i], 0, ULLONG_MAX, &v, &why) != -1)
			fail_msg("accepted \"%s\"", bad[i]);
		assert_non_null(why);
		assert_int_equal(v, 1234);	/* untouched */
	}
	assert_int_equal(conf_parse_uint(NULL, 0, 1, &v, &why), -1);
	assert_string_equal(why, "empty value");
	assert_int_equal(conf_parse_uint("-1", 0, 10, &v, &why), -1);
	assert_string_equal(why, "must not be negative");
	assert_int_equal(conf_parse_uint("5x", 0, 10, &v, &why), -1);
	assert_string_equal(why, "trailing characters after number");
	assert_int_equal(conf_parse_uint("0", 1, 4094, &v, &why), -1);
	assert_string_equal(why, "out of range");
	assert_int_equal(conf_parse_uint("4095", 1, 4094, &v, &why), -1);
	assert_string_equal(why, "out of range");
	assert_int_equal(conf_parse_uint("18446744073709551616", 0,
					 ULLONG_MAX, &v, &why), -1);
	assert_string_equal(why, "number too large");
	/* why may be NULL */
	assert_int_equal(conf_parse_uint("x", 0, 1, &v, NULL), -1);
}

/* ---- conf_parse_int ------------------------------------------------------ */

static void test_parse_int(void **state)
{
	static const char *const bad[] = {
		"", "-", "--1", "+1", "1-", " -1", "-1 ", "-x",
		"9223372036854775808", "-9223372036854775809", "0x",
	};
	long long v = 99;
	const char *why;
	size_t i;

	(void)state;
	assert_int_equal(conf_parse_int("-5", -10, 10, &v, NULL), 0);
	assert_int_equal(v, -5);
	assert_int_equal(conf_parse_int("0", -10, 10, &v, NULL), 0);
	assert_int_equal(v, 0);
	assert_int_equal(conf_parse_int("-0x10", -100, 100, &v, NULL), 0);
	assert_int_equal(v, -16);
	assert_int_equal(conf_parse_int("-9223372036854775808", LLONG_MIN,
					LLONG_MAX, &v, NULL), 0);
	assert_true(v == LLONG_MIN);
	assert_int_equal(conf_parse_int("9223372036854775807", LLONG_MIN,
					LLONG_MAX, &v, NULL), 0);
	assert_true(v == LLONG_MAX);

	v = 99;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (conf_parse_int(bad[i], LLONG_MIN, LLONG_MAX, &v,
				   &why) != -1)
			fail_msg("accepted \"%s\"", bad[i]);
		assert_int_equal(v, 99);
	}
	assert_int_equal(conf_parse_int("-11", -10, 10, &v, &why), -1);
	assert_string_equal(why, "out of range");
	assert_int_equal(conf_parse_int("11", -10, 10, &v, &why), -1);
	assert_string_equal(why, "out of range");
}

/* ---- conf_parse_double_range --------------------------------------------- */

static void test_parse_double(void **state)
{
	static const char *const bad[] = {
		"", "nan", "NaN", "inf", "-inf", "infinity", "0x1p-3", ".",
		"-", "1e", "1e+", "0.05x", " 0.5", "0.5 ", "1,5", "e5",
		"1e400", "--1", "0.5.1",
	};
	double v = 7.0;
	const char *why;
	size_t i;

	(void)state;
	assert_int_equal(conf_parse_double_range("0.05", 0, 1, &v, NULL), 0);
	assert_true(v == 0.05);
	assert_int_equal(conf_parse_double_range("1", 0, 1, &v, NULL), 0);
	assert_true(v == 1.0);
	assert_int_equal(conf_parse_double_range("0", 0, 1, &v, NULL), 0);
	assert_true(v == 0.0);
	assert_int_equal(conf_parse_double_range(".5", 0, 1, &v, NULL), 0);
	assert_true(v == 0.5);
	assert_int_equal(conf_parse_double_range("5e-2", 0, 1, &v, NULL), 0);
	assert_true(v == 0.05);
	assert_int_equal(conf_parse_double_range("-2.5E1", -100, 0, &v,
						 NULL), 0);
	assert_true(v == -25.0);

	v = 7.0;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (conf_parse_double_range(bad[i], -1e300, 1e300, &v,
					    &why) != -1)
			fail_msg("accepted \"%s\"", bad[i]);
		assert_non_null(why);
		assert_true(v == 7.0);
	}
	assert_int_equal(conf_parse_double_range("1.01", 0, 1, &v, &why), -1);
	assert_string_equal(why, "out of range");
	assert_int_equal(conf_parse_double_range("-0.1", 0, 1, &v, &why), -1);
	assert_string_equal(why, "out of range");
	assert_int_equal(conf_parse_double_range("0.5x", 0, 1, &v, &why), -1);
	assert_string_equal(why, "trailing characters after number");
	/* overflow, and underflow that a [0, 1] range would not catch */
	assert_int_equal(conf_parse_double_range("1e400", -INFINITY, INFINITY,
						 &v, &why), -1);
	assert_string_equal(why, "number too large or too small");
	assert_int_equal(conf_parse_double_range("1e-400", 0, 1, &v, &why),
			 -1);
	assert_string_equal(why, "number too large or too small");
	assert_true(v == 7.0);
}

/* ---- conf_parse_bool / conf_parse_enum ----------------------------------- */

static void test_parse_bool(void **state)
{
	static const char *const yes[] = { "yes", "true", "on", "1", "YES",
					   "True", "On" };
	static const char *const no[] = { "no", "false", "off", "0", "NO",
					  "False", "oFF" };
	static const char *const bad[] = { "", "y", "n", "2", "yes ",
					   " no", "oui", "01", "enable" };
	const char *why;
	size_t i;
	int b;

	(void)state;
	for (i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		b = -1;
		assert_int_equal(conf_parse_bool(yes[i], &b, NULL), 0);
		assert_int_equal(b, 1);
	}
	for (i = 0; i < sizeof(no) / sizeof(no[0]); i++) {
		b = -1;
		assert_int_equal(conf_parse_bool(no[i], &b, NULL), 0);
		assert_int_equal(b, 0);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		b = -1;
		if (conf_parse_bool(bad[i], &b, &why) != -1)
			fail_msg("accepted \"%s\"", bad[i]);
		assert_int_equal(b, -1);
	}
	assert_int_equal(conf_parse_bool(NULL, &b, &why), -1);
	assert_string_equal(why, "empty value");
}

static void test_parse_enum(void **state)
{
	const char *why;
	unsigned int idx = 77;

	(void)state;
	assert_int_equal(conf_parse_enum("connected", gw_modes, &idx, NULL),
			 0);
	assert_int_equal(idx, 1);
	assert_int_equal(conf_parse_enum("DataGram", gw_modes, &idx, NULL),
			 0);
	assert_int_equal(idx, 0);
	idx = 77;
	assert_int_equal(conf_parse_enum("connect", gw_modes, &idx, &why),
			 -1);
	assert_non_null(why);
	assert_int_equal(conf_parse_enum("", gw_modes, &idx, &why), -1);
	assert_int_equal(conf_parse_enum("datagram ", gw_modes, &idx, &why),
			 -1);
	assert_int_equal(idx, 77);
}

/* ---- conf_parse_pkey ----------------------------------------------------- */

static void test_parse_pkey(void **state)
{
	static const struct {
		const char	*s;
		uint16_t	 v;
	} good[] = {
		{ "0x8001", 0x8001 }, { "0x0001", 0x0001 }, { "0x1", 1 },
		{ "0x7fff", 0x7fff }, { "0xffff", 0xffff }, { "0X00fF", 0xff },
		{ "0x0000ffff", 0xffff },
	};
	static const char *const bad[] = {
		"", "0x0000", "0x0", "0x8000", "0x00008000", "8001", "32769",
		"0x10000", "0x", "0xg", "0x8001 ", " 0x8001", "-0x1", "0x-1",
		"x8001", "0x8001/1",
	};
	uint16_t pkey;
	const char *why;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		pkey = 0;
		if (conf_parse_pkey(good[i].s, &pkey, &why) != 0)
			fail_msg("rejected \"%s\": %s", good[i].s, why);
		assert_int_equal(pkey, good[i].v);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		pkey = 0x1234;
		if (conf_parse_pkey(bad[i], &pkey, &why) != -1)
			fail_msg("accepted \"%s\"", bad[i]);
		assert_non_null(why);
		assert_int_equal(pkey, 0x1234);
	}
	assert_int_equal(conf_parse_pkey("0x8000", &pkey, &why), -1);
	assert_non_null(strstr(why, "reserved"));
	assert_int_equal(conf_parse_pkey("8001", &pkey, &why), -1);
	assert_non_null(strstr(why, "0x prefix"));
}

/* ---- conf_parse_cidr ----------------------------------------------------- */

static void test_parse_cidr_good(void **state)
{
	struct inet_prefix c;
	struct in6_addr a6;

	(void)state;
	assert_int_equal(conf_parse_cidr("10.0.0.1/24", &c, NULL), 0);
	assert_int_equal(c.addr.family, AF_INET);
	assert_int_equal(c.plen, 24);
	assert_int_equal(c.addr.v4.s_addr, htonl(0x0a000001));

	assert_int_equal(conf_parse_cidr("0.0.0.0/0", &c, NULL), 0);
	assert_int_equal(c.plen, 0);
	assert_int_equal(conf_parse_cidr("255.255.255.255/32", &c, NULL), 0);
	assert_int_equal(c.plen, 32);

	assert_int_equal(conf_parse_cidr("fe80::1/64", &c, NULL), 0);
	assert_int_equal(c.addr.family, AF_INET6);
	assert_int_equal(c.plen, 64);
	assert_int_equal(inet_pton(AF_INET6, "fe80::1", &a6), 1);
	assert_memory_equal(&c.addr.v6, &a6, sizeof(a6));

	assert_int_equal(conf_parse_cidr("::/0", &c, NULL), 0);
	assert_int_equal(conf_parse_cidr("2001:db8::/128", &c, NULL), 0);
	assert_int_equal(c.plen, 128);
	assert_int_equal(conf_parse_cidr("::ffff:192.0.2.1/96", &c, NULL), 0);
	assert_int_equal(c.addr.family, AF_INET6);
}

static void test_parse_cidr_bad(void **state)
{
	static const char *const bad[] = {
		"", "10.0.0.1", "10.0.0.1/", "/24", "10.0.0.1/33",
		"10.0.0.1/100", "10.0.0.256/24", "10.0.0/24", "10.0.0.1.1/8",
		"010.0.0.1/8", "10.0.0.1/024", "10.0.0.1/24x", "10.0.0.1/-1",
		"10.0.0.1/+8", "10.0.0.1/0x18", "10.0.0.1/ 8", " 10.0.0.1/8",
		"10.0.0.1 /8", "10.0.0.1/24/1", "fe80::1/129",
		"fe80::1%eth0/64",
		"fe80:::1/64", "gateway/24", "1.2.3.4/99999999999999999999",
		"2001:db8:0:0:0:0:0:0:1/64",
		"ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255.1/64",
	};
	struct inet_prefix c;
	const char *why;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&c, 0xa5, sizeof(c));
		why = NULL;
		if (conf_parse_cidr(bad[i], &c, &why) != -1)
			fail_msg("accepted \"%s\"", bad[i]);
		assert_non_null(why);
		assert_int_equal(c.plen, 0xa5a5a5a5);	/* untouched */
	}
	assert_int_equal(conf_parse_cidr("10.0.0.1", &c, &why), -1);
	assert_string_equal(why, "missing /prefix length");
	assert_int_equal(conf_parse_cidr("10.0.0.1/33", &c, &why), -1);
	assert_string_equal(why, "prefix length out of range");
	assert_int_equal(conf_parse_cidr("fe80::1/129", &c, &why), -1);
	assert_string_equal(why, "prefix length out of range");
	assert_int_equal(conf_parse_cidr("10.1/8", &c, &why), -1);
	assert_string_equal(why, "invalid IPv4 address");
}

static void test_parse_path(void **state)
{
	const char *why;

	(void)state;
	assert_int_equal(conf_parse_path("/run/ibgw.pid", NULL), 0);
	assert_int_equal(conf_parse_path("/", NULL), 0);
	assert_int_equal(conf_parse_path("run/ibgw.pid", &why), -1);
	assert_string_equal(why, "path must be absolute");
	assert_int_equal(conf_parse_path("", &why), -1);
	assert_int_equal(conf_parse_path("/a\tb", &why), -1);
	assert_int_equal(conf_parse_path(NULL, &why), -1);
}

/* ---- whole files: good ------------------------------------------------- */

static void test_load_good(void **state)
{
	const struct conf_inst *inst;
	const struct conf_value *v;
	unsigned long long u;
	struct inet_prefix c;
	unsigned int e;
	uint16_t pkey;
	long long i;
	double d;
	int b;

	(void)state;
	if (load("# ibgw test configuration\n"
		 "; another comment style\n"
		 "\n"
		 "[Gateway]\n"
		 "  Name = \"gw #1; main\"   # comment after a quote\n"
		 "MTU=4092\n"
		 "mode = Connected\n"
		 "offload = yes ; inline comment\n"
		 "drop = 0.05\n"
		 "skew = -7\n"
		 "\n"
		 "[partition storage]\n"
		 "pkey = 0x8001\n"
		 "address = 10.1.0.1/16\n"
		 "vlan = 0x10\n"
		 "\n"
		 "[Partition  Compute]\n"
		 "PKey = 0x0002\n"
		 "address = fd00::1/64\n") != 0)
		dump_errors();
	assert_int_equal(conf_nerrors(cfg), 0);

	assert_string_equal(conf_get_str(cfg, "gateway", "name"),
			    "gw #1; main");
	assert_int_equal(conf_get_uint(cfg, "gateway", "mtu", &u), 0);
	assert_int_equal(u, 4092);
	assert_int_equal(conf_get_enum(cfg, "gateway", "mode", &e), 0);
	assert_int_equal(e, 1);
	assert_string_equal(conf_get_str(cfg, "gateway", "mode"),
			    "Connected");	/* text keeps its case */
	assert_int_equal(conf_get_bool(cfg, "gateway", "offload", &b), 0);
	assert_int_equal(b, 1);
	assert_int_equal(conf_get_double(cfg, "gateway", "drop", &d), 0);
	assert_true(d == 0.05);
	assert_int_equal(conf_get_int(cfg, "gateway", "skew", &i), 0);
	assert_int_equal(i, -7);
	/* default */
	assert_string_equal(conf_get_str(cfg, "gateway", "pidfile"),
			    "/run/ibgw.pid");
	v = conf_get(cfg, "gateway", "pidfile");
	assert_non_null(v);
	assert_int_equal(v->line, 0);
	v = conf_get(cfg, "gateway", "mtu");
	assert_non_null(v);
	assert_int_equal(v->line, 6);
	assert_ptr_equal(v->desc, &gw_keys[1]);

	/* instances, in file order, names lowercased and normalized */
	assert_int_equal(conf_inst_count(cfg, "partition"), 2);
	inst = conf_inst_first(cfg, "partition");
	assert_non_null(inst);
	assert_string_equal(conf_inst_name(inst), "storage");
	assert_string_equal(conf_inst_section(inst), "partition storage");
	assert_int_equal(conf_inst_line(inst), 12);
	v = conf_inst_get(inst, "vlan");
	assert_non_null(v);
	assert_int_equal(v->v.u, 16);
	inst = conf_inst_next(inst);
	assert_non_null(inst);
	assert_string_equal(conf_inst_name(inst), "compute");
	assert_string_equal(conf_inst_section(inst), "partition compute");
	assert_null(conf_inst_next(inst));

	assert_int_equal(conf_get_pkey(cfg, "partition storage", "pkey",
				       &pkey), 0);
	assert_int_equal(pkey, 0x8001);
	assert_int_equal(conf_get_pkey(cfg, "PARTITION COMPUTE", "PKEY",
				       &pkey), 0);
	assert_int_equal(pkey, 0x0002);
	assert_int_equal(conf_get_cidr(cfg, "partition compute", "address",
				       &c), 0);
	assert_int_equal(c.addr.family, AF_INET6);
	assert_int_equal(c.plen, 64);
	assert_int_equal(conf_get_cidr(cfg, "partition storage", "address",
				       &c), 0);
	assert_int_equal(c.addr.family, AF_INET);
	assert_int_equal(c.plen, 16);
	assert_int_equal(c.addr.v4.s_addr, htonl(0x0a010001));

	/* the absent single section reads as empty: defaults */
	inst = conf_inst_find(cfg, "log");
	assert_non_null(inst);
	assert_int_equal(conf_inst_line(inst), 0);
	assert_string_equal(conf_inst_name(inst), "");
	assert_int_equal(conf_get_bool(cfg, "log", "verbose", &b), 0);
	assert_int_equal(b, 0);
	assert_string_equal(conf_get_str(cfg, "log", "facility"), "daemon");
}

static void test_load_lookups_fail(void **state)
{
	unsigned long long u;
	uint16_t pkey;

	(void)state;
	assert_load(("[gateway]\nname = gw\n" PART_OK), 0);

	/* optional key without default, not set */
	errno = 0;
	assert_null(conf_get(cfg, "partition default", "vlan"));
	assert_int_equal(errno, ENOENT);
	assert_int_equal(conf_get_uint(cfg, "partition default", "vlan", &u),
			 -1);
	assert_int_equal(errno, ENOENT);
	/* no such instance */
	assert_null(conf_get_str(cfg, "partition nope", "pkey"));
	assert_int_equal(errno, ENOENT);
	assert_null(conf_inst_find(cfg, "partition"));
	assert_null(conf_inst_first(cfg, "nosuch"));
	assert_int_equal(conf_inst_count(cfg, "nosuch"), 0);
	/* key not in the schema */
	assert_null(conf_get(cfg, "gateway", "nosuch"));
	assert_int_equal(errno, EINVAL);
	/* wrong type */
	assert_int_equal(conf_get_pkey(cfg, "gateway", "mtu", &pkey), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(conf_get_uint(cfg, "gateway", "mtu", &u), 0);
	assert_int_equal(u, 2044);
}

static void test_load_continuation(void **state)
{
	(void)state;
	assert_load(("[gateway]\n"
			      "name = first \\\n"
			      "  second\n"
			      "mtu = bad\n" PART_OK), 1);
	assert_string_equal(conf_get_str(cfg, "gateway", "name"),
			    "first   second");
	/* the logical line is numbered from its first physical line */
	assert_error(0, ":4: [gateway] mtu: \"bad\": not a number "
		     "(expected 68..65520)");
}

/* ---- whole files: bad ---------------------------------------------------- */

static void test_unknown_key(void **state)
{
	const struct conf_error *e;

	(void)state;
	assert_load(("[gateway]\nname = gw\nmtuu = 1500\n" PART_OK),
			 1);
	assert_error(0, ":3: [gateway] mtuu: unknown key");
	e = conf_error(cfg, 0);
	assert_int_equal(e->line, 3);
	assert_string_equal(e->section, "gateway");
	assert_string_equal(e->key, "mtuu");
	assert_null(conf_error(cfg, 1));
	assert_null(conf_error(cfg, -1));
}

static void test_unknown_section(void **state)
{
	const struct conf_error *e;

	(void)state;
	assert_load(("[gateway]\nname = gw\n" PART_OK
			      "[Bridge]\nports = 4\n"), 1);
	/* its keys are not reported once more */
	assert_error(0, ":6: [bridge]: unknown section");
	e = conf_error(cfg, 0);
	assert_string_equal(e->section, "bridge");
	assert_null(e->key);
}

static void test_instance_names(void **state)
{
	(void)state;
	assert_load(("[gateway]\nname = gw\n" PART_OK
			      "[gateway main]\n"
			      "[partition]\n"
			      "[partition a!b]\n"
			      "[partition a:b]\n"
			      "pkey = 0x2\n"), 4);
	assert_error(0, ":6: [gateway main]: unknown section ([gateway] "
		     "takes no instance name)");
	assert_error(1, ":7: [partition]: missing instance name (expected "
		     "[partition NAME])");
	assert_has_error(":8: [partition a!b]: invalid instance name");
	assert_has_error(":9: [partition a:b]: invalid instance name");
	assert_int_equal(conf_inst_count(cfg, "partition"), 1);
}

static void test_out_of_range(void **state)
{
	(void)state;
	assert_load(("[gateway]\nname = gw\nmtu = 70000\n" PART_OK
			      "vlan = 4095\n"), 2);
	assert_error(0, ":3: [gateway] mtu: \"70000\": out of range "
		     "(expected 68..65520)");
	assert_error(1, ":7: [partition default] vlan: \"4095\": out of "
		     "range (expected 1..4094)");
	/* a rejected value is not stored, and no default replaces it */
	assert_null(conf_get(cfg, "partition default", "vlan"));
}

static void test_trailing_garbage(void **state)
{
	(void)state;
	assert_load(("[gateway]\nname = gw\nmtu = 1500x\n"
			      "drop = 0.5%\nskew = -1-\n" PART_OK), 3);
	assert_error(0, ":3: [gateway] mtu: \"1500x\": trailing characters "
		     "after number (expected 68..65520)");
	assert_has_error(":4: [gateway] drop: \"0.5%\": trailing");
	assert_has_error(":5: [gateway] skew: \"-1-\": trailing");
}

static void test_negative_unsigned(void **state)
{
	(void)state;
	assert_load(("[gateway]\nname = gw\nmtu = -1500\n" PART_OK),
			 1);
	assert_error(0, ":3: [gateway] mtu: \"-1500\": must not be negative "
		     "(expected 68..65520)");
}

static void test_empty_value(void **state)
{
	(void)state;
	assert_load(("[gateway]\nname =\nmtu = \"\"\n"
			      "mode = ; comment\n" PART_OK), 3);
	assert_error(0, ":2: [gateway] name: \"\": empty value");
	assert_has_error(":3: [gateway] mtu: \"\": empty value");
	assert_has_error(":4: [gateway] mode: \"\": empty value");
}

static void test_missing_required(void **state)
{
	(void)state;
	assert_load(("[gateway]\nmtu = 1500\n"
			      "[partition storage]\npkey = 0x8001\n"), 2);
	assert_error(0, ":1: [gateway] name: required key missing");
	assert_error(1, ":3: [partition storage] address: required key "
		     "missing");
}

static void test_missing_sections(void **state)
{
	(void)state;
	/* no [partition NAME] at all, and no [gateway] with its name */
	assert_load(("[log]\nverbose = on\n"), 2);
	assert_error(0, ": [gateway] name: required key missing");
	assert_error(1, ": [partition NAME]: required section missing");
	assert_int_equal(conf_error(cfg, 0)->line, 0);
}

static void test_bad_bool(void **state)
{
	(void)state;
	assert_load(("[gateway]\nname = gw\noffload = maybe\n"
			      PART_OK "[log]\nverbose = 2\n"), 2);
	assert_error(0, ":3: [gateway] offload: \"maybe\": not a boolean "
		     "(expected yes or no)");
	assert_error(1, ":8: [log] verbose: \"2\": not a boolean (expected "
		     "yes or no)");
}

static void test_bad_enum(void **state)
{
	(void)state;
	assert_load(("[gateway]\nname = gw\nmode = ud\n" PART_OK),
			 1);
	assert_error(0, ":3: [gateway] mode: \"ud\": not an allowed word "
		     "(expected one of: datagram, connected)");
}

static void test_bad_cidr(void **state)
{
	(void)state;
	assert_load(("[gateway]\nname = gw\n"
			      "[partition a]\npkey = 0x1\n"
			      "address = 10.0.0.1\n"
			      "[partition b]\npkey = 0x2\n"
			      "address = 10.0.0.1/33\n"
			      "[partition c]\npkey = 0x3\n"
			      "address = 2001:db8::zz/64\n"), 3);
	assert_error(0, ":5: [partition a] address: \"10.0.0.1\": missing "
		     "/prefix length");
	assert_error(1, ":8: [partition b] address: \"10.0.0.1/33\": prefix "
		     "length out of range");
	assert_error(2, ":11: [partition c] address: \"2001:db8::zz/64\": "
		     "invalid IPv6 address");
}

static void test_bad_pkey(void **state)
{
	(void)state;
	assert_load(("[gateway]\nname = gw\n"
			      "[partition a]\npkey = 0x8000\n"
			      "address = 10.0.0.1/8\n"
			      "[partition b]\npkey = 8001\n"
			      "address = 10.0.0.2/8\n"
			      "[partition c]\npkey = 0x0000\n"
			      "address = 10.0.0.3/8\n"), 3);
	assert_error(0, ":4: [partition a] pkey: \"0x8000\": invalid P_Key "
		     "(0x0000 and 0x8000 are reserved)");
	assert_error(1, ":7: [partition b] pkey: \"8001\": P_Key must be hex "
		     "with a 0x prefix");
	assert_has_error(":10: [partition c] pkey: \"0x0000\": invalid");
}

static void test_many_errors_collected(void **state)
{
	int i;

	(void)state;
	assert_load(("top = 1\n"
			      "[gateway]\n"
			      "mtu = 10\n"
			      "colour = blue\n"
			      "offload = perhaps\n"
			      "[partition x]\n"
			      "pkey = 0x8000\n"
			      "address = 300.1.1.1/8\n"
			      "[nosuch]\n"
			      "a = b\n"), 8);
	assert_error(0, ":1: top: key outside any section");
	assert_error(1, ":2: [gateway] name: required key missing");
	assert_error(2, ":3: [gateway] mtu: \"10\": out of range (expected "
		     "68..65520)");
	assert_error(3, ":4: [gateway] colour: unknown key");
	assert_error(4, ":5: [gateway] offload: \"perhaps\": not a boolean "
		     "(expected yes or no)");
	assert_error(5, ":7: [partition x] pkey: \"0x8000\": invalid P_Key "
		     "(0x0000 and 0x8000 are reserved)");
	assert_error(6, ":8: [partition x] address: \"300.1.1.1/8\": invalid "
		     "IPv4 address");
	assert_error(7, ":9: [nosuch]: unknown section");
	/* sorted by line, every one names the file */
	for (i = 1; i < conf_nerrors(cfg); i++) {
		assert_true(conf_error(cfg, i)->line >=
			    conf_error(cfg, i - 1)->line);
		assert_true(strncmp(conf_error(cfg, i)->msg, path,
				    strlen(path)) == 0);
	}
}

static void test_syntax_errors(void **state)
{
	(void)state;
	/* iniparser refuses the file: only the scan's errors, with lines */
	assert_load(("[gateway]\n"
			      "name = gw\n"
			      "this line has no equals sign\n"
			      "= 5\n"
			      "[unterminated\n" PART_OK), 3);
	assert_error(0, ":3: syntax error: expected [section], key = value "
		     "or a comment");
	assert_error(1, ":4: syntax error: no key before '='");
	assert_error(2, ":5: syntax error: expected [section], key = value "
		     "or a comment");
}

static void test_duplicates(void **state)
{
	(void)state;
	/* iniparser would merge the sections and keep the last mtu */
	assert_load(("[gateway]\n"
			      "name = gw\n"
			      "mtu = 1500\n"
			      "MTU = 9000\n"
			      PART_OK
			      "[Partition   DEFAULT]\n"
			      "vlan = 5\n"
			      "[gateway]\n"), 3);
	assert_error(0, ":4: [gateway] mtu: duplicate key (first at line 3)");
	assert_error(1, ":8: [partition default]: duplicate section (first "
		     "at line 5)");
	assert_error(2, ":10: [gateway]: duplicate section (first at line "
		     "1)");
}

static void test_quotes(void **state)
{
	(void)state;
	/* iniparser would silently read "gw" and "/run/x" */
	assert_load(("[gateway]\n"
		     "name = \"gw\" trailing\n"
		     "pidfile = \"/run/x\n"
		     "mode = 'datagram' ; fine\n" PART_OK), 2);
	assert_error(0, ":2: [gateway] name: text after closing quote");
	assert_error(1, ":3: [gateway] pidfile: unterminated quote");
}

static void test_header_junk(void **state)
{
	(void)state;
	assert_load(("[gateway]]\nname = gw\n" PART_OK "[]\n"), 2);
	assert_error(0, ":1: text after ']' in section header");
	assert_error(1, ":6: empty section name");
}

static void test_continuation_at_eof(void **state)
{
	(void)state;
	/* iniparser would drop the key without a word */
	assert_load(("[gateway]\nname = gw\n" PART_OK
			      "vlan = 5 \\\n"), 1);
	assert_error(0, ":6: line continuation at end of file");
}

static void test_long_line(void **state)
{
	char text[2 * CONF_LINE_MAX];
	int n;

	(void)state;
	n = snprintf(text, sizeof(text), "[gateway]\nname = ");
	memset(text + n, 'x', CONF_LINE_MAX);
	strcpy(text + n + CONF_LINE_MAX, "\n" PART_OK);
	assert_load((text), 1);
	assert_has_error(":2: line longer than 1022 characters");

	/* exactly the limit is fine */
	n = snprintf(text, sizeof(text), "[gateway]\nname = ");
	memset(text + n, 'y', CONF_LINE_MAX - 7);
	strcpy(text + n + CONF_LINE_MAX - 7, "\n" PART_OK);
	assert_load((text), 0);
	assert_int_equal(strlen(conf_get_str(cfg, "gateway", "name")),
			 CONF_LINE_MAX - 7);
}

static void test_control_character(void **state)
{
	(void)state;
	assert_load(("[gateway]\nname = \"a\tb\"\n" PART_OK), 1);
	/* shown with the control character defanged */
	assert_error(0, ":2: [gateway] name: \"a?b\": control character in "
		     "value");
}

static void test_too_many_errors(void **state)
{
	char *text, *p;
	int i;

	(void)state;
	text = malloc(400 * 32);
	assert_non_null(text);
	p = text + sprintf(text, "[gateway]\nname = gw\n" PART_OK);
	for (i = 0; i < 300; i++)
		p += sprintf(p, "bogus%d = 1\n", i);
	assert_load((text), CONF_MAX_ERRORS + 1);
	free(text);
	assert_error(CONF_MAX_ERRORS, ": too many errors, the rest are not "
		     "shown");
	assert_error(0, ":6: [partition default] bogus0: unknown key");
}

static void test_missing_file(void **state)
{
	char missing[PATH_MAX + 16];

	(void)state;
	snprintf(missing, sizeof(missing), "%s/nonexistent.conf", tmpdir);
	assert_int_equal(conf_load(missing, schema, &cfg), 1);
	assert_non_null(strstr(conf_error(cfg, 0)->msg, missing));
	assert_non_null(strstr(conf_error(cfg, 0)->msg,
			       "No such file or directory"));
	assert_int_equal(conf_error(cfg, 0)->line, 0);
}

static void test_directory(void **state)
{
	(void)state;
	assert_int_equal(conf_load(tmpdir, schema, &cfg), 1);
	assert_non_null(strstr(conf_error(cfg, 0)->msg, "not a regular file"));
}

/* A device that never ends (the scan read it for ever) and a pipe's
 * kind of file: refused at once. */
static void test_not_regular(void **state)
{
	(void)state;
	assert_int_equal(conf_load("/dev/zero", schema, &cfg), 1);
	assert_non_null(strstr(conf_error(cfg, 0)->msg, "not a regular file"));
	conf_free(cfg);
	cfg = NULL;
	assert_int_equal(conf_load("/dev/null", schema, &cfg), 1);
	assert_non_null(strstr(conf_error(cfg, 0)->msg, "not a regular file"));
}

/* A NUL byte is not text: said as such (it read as a line too long),
 * and a file of them stops the scan after a few lines. */
static void test_nul_byte(void **state)
{
	static const char text[] = "[gateway]\nname = g\0w\n" PART_OK;
	char zeros[4096];
	FILE *fp;
	int i;

	(void)state;
	fp = fopen(path, "w");
	assert_non_null(fp);
	assert_int_equal(fwrite(text, 1, sizeof(text) - 1, fp),
			 sizeof(text) - 1);
	assert_int_equal(fclose(fp), 0);
	assert_int_equal(conf_load(path, schema, &cfg), 1);
	assert_error(0, ":2: a NUL byte in the line (not a text file?)");
	conf_free(cfg);
	cfg = NULL;

	memset(zeros, 0, sizeof(zeros));
	fp = fopen(path, "w");
	assert_non_null(fp);
	for (i = 0; i < 100; i++) {
		assert_int_equal(fwrite(zeros, 1, sizeof(zeros), fp),
				 sizeof(zeros));
		fputc('\n', fp);
	}
	assert_int_equal(fclose(fp), 0);
	assert_int_equal(conf_load(path, schema, &cfg), 20);
}

static void test_crlf(void **state)
{
	unsigned long long u;

	(void)state;
	assert_load(("[gateway]\r\nname = gw\r\nmtu = 1500\r\n"
		     "[partition default]\r\npkey = 0xffff\r\n"
		     "address = 10.0.0.1/24\r\n"), 0);
	assert_int_equal(conf_get_uint(cfg, "gateway", "mtu", &u), 0);
	assert_int_equal(u, 1500);
	assert_string_equal(conf_get_str(cfg, "gateway", "name"), "gw");
}

static void test_empty_file(void **state)
{
	(void)state;
	assert_load((""), 2);
	assert_has_error("[gateway] name: required key missing");
	assert_has_error("[partition NAME]: required section missing");
}

static void test_required_single_section(void **state)
{
	static const struct conf_key_desc keys[] = {
		{ .name = "k", .type = CONF_STRING, .required = 1 },
		{ .name = NULL }
	};
	static const struct conf_section_desc s[] = {
		{ .name = "main", .flags = CONF_REQUIRED, .keys = keys },
		{ .name = NULL }
	};
	FILE *fp;

	(void)state;
	fp = fopen(path, "w");
	assert_non_null(fp);
	fputs("# nothing\n", fp);
	fclose(fp);
	/* one error for the section, not one more per key */
	assert_int_equal(conf_load(path, s, &cfg), 1);
	assert_error(0, ": [main]: required section missing");
}

static void test_bad_schema(void **state)
{
	static const struct conf_key_desc bad_def[] = {
		{ .name = "n", .type = CONF_UINT, .umin = 1, .umax = 10,
		  .def = "11" },
		{ .name = NULL }
	};
	static const struct conf_key_desc bad_range[] = {
		{ .name = "n", .type = CONF_INT, .imin = 5, .imax = 1 },
		{ .name = NULL }
	};
	static const struct conf_key_desc req_def[] = {
		{ .name = "n", .type = CONF_BOOL, .required = 1, .def = "no" },
		{ .name = NULL }
	};
	static const struct conf_key_desc no_type[] = {
		{ .name = "n" },
		{ .name = NULL }
	};
	static const struct conf_section_desc schemas[][2] = {
		{ { .name = "s", .keys = bad_def }, { .name = NULL } },
		{ { .name = "s", .keys = bad_range }, { .name = NULL } },
		{ { .name = "s", .keys = req_def }, { .name = NULL } },
		{ { .name = "s", .keys = no_type }, { .name = NULL } },
		{ { .name = "Upper", .keys = no_type + 1 }, { .name = NULL } },
		{ { .name = "s" }, { .name = NULL } },
	};
	struct conf *c = (struct conf *)&c;
	size_t i;

	(void)state;
	print_message("(schema flaws below are expected)\n");
	for (i = 0; i < sizeof(schemas) / sizeof(schemas[0]); i++) {
		errno = 0;
		assert_int_equal(conf_load(path, schemas[i], &c), -1);
		assert_int_equal(errno, EINVAL);
		assert_null(c);
	}
	assert_int_equal(conf_load(path, NULL, &c), -1);
	assert_int_equal(errno, EINVAL);
}

static void test_free_null(void **state)
{
	(void)state;
	conf_free(NULL);
	assert_int_equal(conf_nerrors(NULL), 0);
	assert_null(conf_error(NULL, 0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_uint_good),
		cmocka_unit_test(test_parse_uint_bad),
		cmocka_unit_test(test_parse_int),
		cmocka_unit_test(test_parse_double),
		cmocka_unit_test(test_parse_bool),
		cmocka_unit_test(test_parse_enum),
		cmocka_unit_test(test_parse_pkey),
		cmocka_unit_test(test_parse_cidr_good),
		cmocka_unit_test(test_parse_cidr_bad),
		cmocka_unit_test(test_parse_path),
#define T(f) cmocka_unit_test_teardown(f, test_teardown)
		T(test_load_good),
		T(test_load_lookups_fail),
		T(test_load_continuation),
		T(test_unknown_key),
		T(test_unknown_section),
		T(test_instance_names),
		T(test_out_of_range),
		T(test_trailing_garbage),
		T(test_negative_unsigned),
		T(test_empty_value),
		T(test_missing_required),
		T(test_missing_sections),
		T(test_bad_bool),
		T(test_bad_enum),
		T(test_bad_cidr),
		T(test_bad_pkey),
		T(test_many_errors_collected),
		T(test_syntax_errors),
		T(test_duplicates),
		T(test_quotes),
		T(test_header_junk),
		T(test_continuation_at_eof),
		T(test_long_line),
		T(test_control_character),
		T(test_too_many_errors),
		T(test_missing_file),
		T(test_directory),
		T(test_not_regular),
		T(test_nul_byte),
		T(test_crlf),
		T(test_empty_file),
		T(test_required_single_section),
		T(test_bad_schema),
		T(test_free_null),
#undef T
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}

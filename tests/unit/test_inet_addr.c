// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The one address type (inet/addr.c): parsers, printers, matching. */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "inet/addr.h"

static void test_addr_parse(void **state)
{
	struct inet_addr a;
	char err[128], buf[INET_ADDR_STRLEN];

	(void)state;
	assert_int_equal(inet_addr_parse("192.0.2.7", &a, err, sizeof(err)), 0);
	assert_int_equal(a.family, AF_INET);
	assert_int_equal(a.v4.s_addr, htonl(0xc0000207));
	assert_string_equal(inet_addr_str(&a, buf, sizeof(buf)), "192.0.2.7");
	assert_int_equal(inet_addr_parse("2001:db8::1", &a, err, sizeof(err)),
			 0);
	assert_int_equal(a.family, AF_INET6);
	assert_int_equal(a.raw[0], 0x20);
	assert_int_equal(a.raw[15], 1);
	assert_string_equal(inet_addr_str(&a, buf, sizeof(buf)),
			    "2001:db8::1");

	errno = 0;
	assert_int_equal(inet_addr_parse("192.0.2", &a, err, sizeof(err)), -1);
	assert_int_equal(errno, EINVAL);
	assert_string_equal(err, "bad address '192.0.2': not an IPv4 or "
			    "IPv6 address");
	assert_int_equal(inet_addr_parse("", &a, NULL, 0), -1);
	assert_int_equal(inet_addr_parse("10.0.0.1/8", &a, NULL, 0), -1);

	memset(&a, 0, sizeof(a));
	assert_string_equal(inet_addr_str(&a, buf, sizeof(buf)), "?");
}

static void test_prefix_parse(void **state)
{
	static const char *const bad[] = {
		"", "10.0.0.1", "10.0.0.1/", "/24", "10.0.0.1/33",
		"10.0.0.1/024", "10.0.0.1/+8", "10.0.0.1/ 8", "fe80::1/129",
		"fe80::1%eth0/64", "10.0.0/24", "1.2.3.4/99999999999999999999",
	};
	struct inet_prefix p;
	char err[128], buf[INET_PREFIX_STRLEN];
	const char *why;
	size_t i;

	(void)state;
	assert_int_equal(inet_prefix_parse("10.1.0.1/24", &p, err,
					   sizeof(err)), 0);
	assert_int_equal(p.addr.family, AF_INET);
	assert_int_equal(p.plen, 24);
	assert_string_equal(inet_prefix_str(&p, buf, sizeof(buf)),
			    "10.1.0.1/24");
	assert_int_equal(inet_prefix_parse("fd00::1/128", &p, err,
					   sizeof(err)), 0);
	assert_int_equal(p.addr.family, AF_INET6);
	assert_int_equal(p.plen, 128);
	assert_int_equal(inet_prefix_parse("0.0.0.0/0", &p, err, sizeof(err)),
			 0);
	assert_int_equal(p.plen, 0);

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&p, 0xa5, sizeof(p));
		why = NULL;
		if (inet_prefix_scan(bad[i], &p, &why) != -1)
			fail_msg("accepted \"%s\"", bad[i]);
		assert_non_null(why);
		assert_int_equal(p.plen, 0xa5a5a5a5);	/* untouched */
		errno = 0;
		if (inet_prefix_parse(bad[i], &p, err, sizeof(err)) != -1)
			fail_msg("accepted \"%s\"", bad[i]);
		assert_int_equal(errno, EINVAL);
		assert_memory_equal(err, "bad CIDR '", 10);
	}
	assert_int_equal(inet_prefix_parse("10.1.0.1/33", &p, err,
					   sizeof(err)), -1);
	assert_string_equal(err, "bad CIDR '10.1.0.1/33': prefix length out "
			    "of range");
	assert_int_equal(inet_prefix_parse("fd00::1", &p, err, sizeof(err)),
			 -1);
	assert_string_equal(err, "bad CIDR 'fd00::1': missing /prefix length");
}

static void pfx(struct inet_prefix *p, const char *s)
{
	assert_int_equal(inet_prefix_parse(s, p, NULL, 0), 0);
}

static void addr(struct inet_addr *a, const char *s)
{
	assert_int_equal(inet_addr_parse(s, a, NULL, 0), 0);
}

static void test_match(void **state)
{
	struct inet_prefix p;
	struct inet_addr a, b;
	struct in_addr v4 = { htonl(0x0a010203) };

	(void)state;
	pfx(&p, "10.1.0.0/16");
	addr(&a, "10.1.255.1");
	assert_true(inet_prefix_contains(&p, &a));
	addr(&a, "10.2.0.1");
	assert_false(inet_prefix_contains(&p, &a));
	pfx(&p, "10.1.2.0/23");			/* a prefix off a byte edge */
	addr(&a, "10.1.3.9");
	assert_true(inet_prefix_contains(&p, &a));
	addr(&a, "10.1.4.9");
	assert_false(inet_prefix_contains(&p, &a));
	pfx(&p, "0.0.0.0/0");
	assert_true(inet_prefix_contains(&p, &a));
	addr(&a, "::a01:409");			/* same bytes, other family */
	assert_false(inet_prefix_contains(&p, &a));
	pfx(&p, "fe80::/10");
	addr(&a, "febf::1");
	assert_true(inet_prefix_contains(&p, &a));
	addr(&a, "fec0::1");
	assert_false(inet_prefix_contains(&p, &a));
	pfx(&p, "fd00::5/128");
	addr(&a, "fd00::5");
	assert_true(inet_prefix_contains(&p, &a));

	inet_addr_v4(&a, &v4);
	addr(&b, "10.1.2.3");
	assert_true(inet_addr_equal(&a, &b));
	b.raw[8] = 1;			/* bytes past an IPv4 address ignored */
	assert_true(inet_addr_equal(&a, &b));
	addr(&b, "10.1.2.4");
	assert_false(inet_addr_equal(&a, &b));
	inet_addr_v6(&b, &(struct in6_addr){ { { 10, 1, 2, 3 } } });
	assert_false(inet_addr_equal(&a, &b));
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	assert_false(inet_addr_equal(&a, &b));	/* no family: no address */
}

static bool is_bcast(const char *prefix, const char *a)
{
	struct inet_prefix p;
	struct in_addr v4;

	pfx(&p, prefix);
	assert_int_equal(inet_pton(AF_INET, a, &v4), 1);
	return inet_prefix_is_bcast(&p, &v4);
}

/* The directed broadcast: host bits all ones, whatever the host bits of
 * the prefix's own address; nothing for /0, /31, /32 or IPv6. */
static void test_bcast(void **state)
{
	struct inet_prefix p;
	struct in_addr v4 = { htonl(0xffffffff) };

	(void)state;
	assert_true(is_bcast("10.1.0.1/24", "10.1.0.255"));
	assert_true(is_bcast("10.1.0.0/24", "10.1.0.255"));
	assert_false(is_bcast("10.1.0.1/24", "10.1.1.255"));
	assert_false(is_bcast("10.1.0.1/24", "10.1.0.254"));
	assert_false(is_bcast("10.1.0.1/24", "10.1.0.0"));
	assert_false(is_bcast("10.1.0.1/24", "255.255.255.255"));
	assert_true(is_bcast("10.1.2.9/23", "10.1.3.255"));
	assert_false(is_bcast("10.1.2.9/23", "10.1.2.255"));
	assert_true(is_bcast("172.16.5.4/12", "172.31.255.255"));
	assert_true(is_bcast("192.0.2.1/30", "192.0.2.3"));
	assert_false(is_bcast("192.0.2.1/30", "192.0.2.2"));
	assert_true(is_bcast("128.0.0.1/1", "255.255.255.255"));
	assert_true(is_bcast("1.2.3.4/1", "127.255.255.255"));
	/* /31 and /32 have no broadcast, /0 none of its own */
	assert_false(is_bcast("192.0.2.0/31", "192.0.2.1"));
	assert_false(is_bcast("192.0.2.1/32", "192.0.2.1"));
	assert_false(is_bcast("0.0.0.0/0", "255.255.255.255"));
	/* an IPv6 prefix whose first bytes spell it */
	pfx(&p, "ffff:ffff::/16");
	assert_false(inet_prefix_is_bcast(&p, &v4));
	memset(&p, 0, sizeof(p));
	p.plen = 8;
	assert_false(inet_prefix_is_bcast(&p, &v4));	/* no family */
}

/* FNV-1a 32 of the family's bytes; values computed apart from the code. */
/* What an interface's own address cannot be. */
static void test_not_host(void **state)
{
	static const char *const bad[] = {
		"0.0.0.0", "0.1.2.3", "127.0.0.1", "127.255.0.9", "224.0.0.1",
		"239.1.1.1", "255.255.255.255", "::", "::1", "ff02::1",
		"ff0e::9",
	};
	static const char *const good[] = {
		"10.0.0.1", "192.0.2.255", "1.0.0.0", "223.255.255.254",
		"fe80::1", "2001:db8::1", "::2", "fd00::",
	};
	struct inet_addr a;
	char err[128];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(inet_addr_parse(bad[i], &a, err, sizeof(err)),
				 0);
		if (!inet_addr_not_host(&a))
			fail_msg("%s taken as a host address", bad[i]);
	}
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		assert_int_equal(inet_addr_parse(good[i], &a, err,
						 sizeof(err)), 0);
		if (inet_addr_not_host(&a))
			fail_msg("%s refused: %s", good[i],
				 inet_addr_not_host(&a));
	}
	memset(&a, 0, sizeof(a));
	assert_non_null(inet_addr_not_host(&a));	/* no family */
}

static void test_hash(void **state)
{
	struct inet_addr a, b;

	(void)state;
	addr(&a, "10.1.2.3");
	assert_int_equal(inet_addr_hash(&a), 0x796eabb3);
	b = a;
	b.raw[4] = 7;			/* bytes past an IPv4 address ignored */
	assert_int_equal(inet_addr_hash(&b), 0x796eabb3);
	addr(&a, "fe80::1");
	assert_int_equal(inet_addr_hash(&a), 0xe08432e8);
	memset(&a, 0, sizeof(a));
	a.raw[0] = 1;
	assert_int_equal(inet_addr_hash(&a), 0x811c9dc5);	/* no family */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_addr_parse),
		cmocka_unit_test(test_prefix_parse),
		cmocka_unit_test(test_match),
		cmocka_unit_test(test_bcast),
		cmocka_unit_test(test_not_host),
		cmocka_unit_test(test_hash),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

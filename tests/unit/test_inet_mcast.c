// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * IGMP and MLD membership reports (inet/mcast.c): the groups each kind of
 * message joins and leaves, in order, from report bytes laid out here as
 * the host's kernel sends them (checksums by this suite's own sum), and
 * what a cut, overrunning or foreign message gives.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include <cmocka.h>

#include "inet/ip.h"
#include "inet/mcast.h"
#include "tests/unit/vectors.h"

/* What the decoder said, as "+group" (join) and "-group" (leave). */
struct seen {
	char s[512];
	unsigned int n;
};

static void seen_cb(void *arg, const struct inet_addr *g, bool join)
{
	struct seen *sn = arg;
	char a[INET_ADDR_STRLEN];
	size_t l = strlen(sn->s);

	assert_true(g->family == AF_INET || g->family == AF_INET6);
	snprintf(sn->s + l, sizeof(sn->s) - l, "%s%c%s", sn->n ? " " : "",
		 join ? '+' : '-', inet_addr_str(g, a, sizeof(a)));
	sn->n++;
}

static enum inet_err parse(int family, const uint8_t *p, size_t len,
			   struct seen *sn)
{
	memset(sn, 0, sizeof(*sn));
	return inet_mcast_report_parse(family, p, len, seen_cb, sn);
}

static void expect(int family, const uint8_t *p, size_t len,
		   enum inet_err err, const char *groups)
{
	struct seen sn;

	assert_int_equal(parse(family, p, len, &sn), err);
	assert_string_equal(sn.s, groups);
}

/* An IGMP message from hex, its checksum filled in (RFC 2236 2.3). */
static size_t igmp(const char *hex, uint8_t *p, size_t cap)
{
	size_t n = tv_unhex(hex, p, cap);
	uint16_t c;

	p[2] = p[3] = 0;
	c = tv_csum(p, n, 0);
	p[2] = (uint8_t)(c >> 8);
	p[3] = (uint8_t)c;
	assert_int_equal(tv_csum(p, n, 0), 0);
	return n;
}

/*
 * An MLD message as Linux sends it: IPv6 from fe80::1 to dst, hop limit 1,
 * a hop-by-hop header with the router alert (RFC 2711, value 0: MLD), then
 * the ICMPv6 message from hex with its checksum over the pseudo-header
 * (RFC 4443 2.3).  Returns the packet length.
 */
static size_t mld(const char *dst, const char *hex, uint8_t *p, size_t cap)
{
	char h[1024];
	size_t n, m;
	uint16_t c;

	snprintf(h, sizeof(h), "60000000 0000 00 01 %s %s"
		 "| 3a00 0502 0000 0100 | %s",
		 "fe800000000000000000000000000001", dst, hex);
	n = tv_unhex(h, p, cap);
	m = n - 48;
	p[4] = (uint8_t)((n - 40) >> 8);
	p[5] = (uint8_t)(n - 40);
	p[50] = p[51] = 0;
	c = tv_csum(p + 48, m, tv_pseudo6(p, (uint32_t)m, 58));
	p[50] = (uint8_t)(c >> 8);
	p[51] = (uint8_t)c;
	assert_int_equal(tv_csum(p + 48, m, tv_pseudo6(p, (uint32_t)m, 58)),
			 0);
	return n;
}

#define FF02_16		"ff020000000000000000000000000016"
#define FF02_1		"ff020000000000000000000000000001"

/* v1 and v2 reports join their group, a v2 leave leaves it. */
static void test_igmp_v1_v2(void **state)
{
	uint8_t p[64];
	size_t n;

	(void)state;
	n = igmp("12 00 0000 e0010101", p, sizeof(p));
	expect(AF_INET, p, n, INET_OK, "+224.1.1.1");
	n = igmp("16 00 0000 efffff01", p, sizeof(p));
	expect(AF_INET, p, n, INET_OK, "+239.255.255.1");
	n = igmp("17 00 0000 efffff01", p, sizeof(p));
	expect(AF_INET, p, n, INET_OK, "-239.255.255.1");
	/* link padding after the message changes nothing */
	n = igmp("16 00 0000 e9090909 00000000 0000", p, sizeof(p));
	expect(AF_INET, p, n, INET_OK, "+233.9.9.9");
}

/* IGMPv3 (RFC 3376 4.2): only records without sources say something. */
static void test_igmp_v3(void **state)
{
	uint8_t p[256];
	size_t n;

	(void)state;
	/* Linux joining 225.1.2.3: one CHANGE_TO_EXCLUDE {} record */
	n = igmp("22 00 0000 0000 0001 | 04 00 0000 e1010203", p, sizeof(p));
	expect(AF_INET, p, n, INET_OK, "+225.1.2.3");
	/* and leaving it: CHANGE_TO_INCLUDE {} */
	n = igmp("22 00 0000 0000 0001 | 03 00 0000 e1010203", p, sizeof(p));
	expect(AF_INET, p, n, INET_OK, "-225.1.2.3");
	/* a General Query's answer: every mode, in record order; the
	 * record with aux data is skipped by its length */
	n = igmp("22 00 0000 0000 0006"
		 "| 02 00 0000 e0000001"		/* IS_EX {}: join */
		 "| 01 00 0000 e0000002"		/* IS_IN {}: leave */
		 "| 04 01 0000 e0000003 aabbccdd"	/* TO_EX {} + aux */
		 "| 05 00 0001 e0000004 0a000001"	/* ALLOW {S} */
		 "| 06 00 0001 e0000005 0a000001"	/* BLOCK {S} */
		 "| 03 00 0000 e0000006",		/* TO_IN {}: leave */
		 p, sizeof(p));
	expect(AF_INET, p, n, INET_OK,
	       "+224.0.0.1 -224.0.0.2 +224.0.0.3 -224.0.0.6");
	/* source-specific records, and unknown types, change nothing */
	n = igmp("22 00 0000 0000 0006"
		 "| 01 00 0001 e0000001 0a000001"	/* IS_IN {S} */
		 "| 02 00 0002 e0000002 0a000001 0a000002" /* IS_EX {S,T} */
		 "| 03 00 0001 e0000003 0a000001"	/* TO_IN {S} */
		 "| 04 00 0001 e0000004 0a000001"	/* TO_EX {S} */
		 "| 00 00 0000 e0000005"		/* type 0 */
		 "| 07 00 0000 e0000006",		/* type 7 */
		 p, sizeof(p));
	expect(AF_INET, p, n, INET_OK, "");
	/* no records at all */
	n = igmp("22 00 0000 0000 0000", p, sizeof(p));
	expect(AF_INET, p, n, INET_OK, "");
}

/* MLDv1 (RFC 2710) and MLDv2 (RFC 3810), found behind hop-by-hop. */
static void test_mld(void **state)
{
	struct inet_ipv6_upper up;
	uint8_t p[256];
	size_t n;

	(void)state;
	n = mld("ff020000000000000000000000010003",
		"83 00 0000 0000 0000 ff020000000000000000000000010003",
		p, sizeof(p));
	assert_int_equal(inet_ipv6_upper(p, n, &up), INET_OK);
	assert_int_equal(up.proto, INET_PROTO_ICMPV6);
	assert_int_equal(up.off, 48);
	expect(AF_INET6, p + up.off, n - up.off, INET_OK, "+ff02::1:3");
	n = mld("ff020000000000000000000000000002",	/* all-routers */
		"84 00 0000 0000 0000 ff020000000000000000000000010003",
		p, sizeof(p));
	expect(AF_INET6, p + 48, n - 48, INET_OK, "-ff02::1:3");
	/* Linux after DAD: its solicited-node group, TO_EX {} */
	n = mld(FF02_16, "8f 00 0000 0000 0001"
		"| 04 00 0000 ff0200000000000000000001ff0ab1c1",
		p, sizeof(p));
	expect(AF_INET6, p + 48, n - 48, INET_OK, "+ff02::1:ff0a:b1c1");
	/* the same record rules as IGMPv3, with 16-byte sources */
	n = mld(FF02_16, "8f 00 0000 0000 0004"
		"| 02 00 0000 ff0e0000000000000000000000000101"
		"| 01 00 0001 ff0e0000000000000000000000000102"
		"  20010db8000000000000000000000001"
		"| 03 02 0000 ff0e0000000000000000000000000103"
		"  0000000000000000"
		"| 01 00 0000 ff0e0000000000000000000000000104",
		p, sizeof(p));
	expect(AF_INET6, p + 48, n - 48, INET_OK,
	       "+ff0e::101 -ff0e::103 -ff0e::104");
}

/* Queries and other messages: nothing, and no drop. */
static void test_not_report(void **state)
{
	uint8_t p[256];
	size_t n;

	(void)state;
	n = igmp("11 64 0000 00000000", p, sizeof(p));	/* general query */
	expect(AF_INET, p, n, INET_MCAST_NOT_REPORT, "");
	n = igmp("11 0a 0000 e0010101 02 7d 0000", p, sizeof(p));
	expect(AF_INET, p, n, INET_MCAST_NOT_REPORT, "");	/* v3 query */
	n = mld(FF02_1, "82 00 0000 2710 0000 00000000000000000000000000000000",
		p, sizeof(p));
	expect(AF_INET6, p + 48, n - 48, INET_MCAST_NOT_REPORT, "");
	n = mld(FF02_1, "80 00 0000 1234 0001", p, sizeof(p));	/* echo */
	expect(AF_INET6, p + 48, n - 48, INET_MCAST_NOT_REPORT, "");
	/* the type numbers belong to their family */
	n = tv_unhex("16 00 0000 efffff01 00000000 00000000 00000000", p,
		     sizeof(p));
	expect(AF_INET6, p, n, INET_MCAST_NOT_REPORT, "");
	n = tv_unhex("83 00 0000 efffff01", p, sizeof(p));
	expect(AF_INET, p, n, INET_MCAST_NOT_REPORT, "");
	n = igmp("16 00 0000 efffff01", p, sizeof(p));
	expect(AF_UNSPEC, p, n, INET_MCAST_NOT_REPORT, "");
}

/* Shorter than the fixed part, or than the records counted. */
static void test_truncated(void **state)
{
	uint8_t p[256];
	size_t n, i;

	(void)state;
	n = igmp("16 00 0000 efffff01", p, sizeof(p));
	for (i = 0; i < n; i++)
		expect(AF_INET, p, i, INET_TRUNCATED, "");
	n = mld(FF02_1, "83 00 0000 0000 0000 ff020000000000000000000000010003",
		p, sizeof(p));
	for (i = 0; i < n - 48; i++)
		expect(AF_INET6, p + 48, i, INET_TRUNCATED, "");
	/* three records counted, two there: those two are taken */
	n = igmp("22 00 0000 0000 0003 | 04 00 0000 e0000001"
		 "| 03 00 0000 e0000002", p, sizeof(p));
	expect(AF_INET, p, n, INET_TRUNCATED, "+224.0.0.1 -224.0.0.2");
	/* cut anywhere in the second record's header or group */
	for (i = 16; i < 24; i++)
		expect(AF_INET, p, i, INET_TRUNCATED, "+224.0.0.1");
	for (i = 8; i < 16; i++)
		expect(AF_INET, p, i, INET_TRUNCATED, "");
	n = mld(FF02_16, "8f 00 0000 0000 0002"
		"| 04 00 0000 ff0e0000000000000000000000000101",
		p, sizeof(p));
	expect(AF_INET6, p + 48, n - 48, INET_TRUNCATED, "+ff0e::101");
	expect(AF_INET6, p + 48, n - 49, INET_TRUNCATED, "");
}

/* Sources or aux data past the end: what came before still counts. */
static void test_bad_record(void **state)
{
	uint8_t p[256];
	size_t n;

	(void)state;
	/* 1000 sources in a 16-byte report */
	n = igmp("22 00 0000 0000 0001 | 02 00 03e8 e0000001", p, sizeof(p));
	expect(AF_INET, p, n, INET_MCAST_BAD_RECORD, "");
	/* 65535 sources: no wrap, still past the end */
	n = igmp("22 00 0000 0000 0001 | 02 00 ffff e0000001 0a000001", p,
		 sizeof(p));
	expect(AF_INET, p, n, INET_MCAST_BAD_RECORD, "");
	/* one source named, none there, then a record never reached */
	n = igmp("22 00 0000 0000 0002 | 04 00 0000 e0000001"
		 "| 04 00 0001 e0000002 | 04 00 0000 e0000003",
		 p, sizeof(p));
	/* 04 00 0000 e0000003 is read as the second record's source */
	expect(AF_INET, p, n, INET_OK, "+224.0.0.1");
	n = igmp("22 00 0000 0000 0003 | 04 00 0000 e0000001"
		 "| 04 00 0002 e0000002 0a000001", p, sizeof(p));
	expect(AF_INET, p, n, INET_MCAST_BAD_RECORD, "+224.0.0.1");
	/* a record without sources whose aux data overruns: its header
	 * and group are in, so it is taken (as the IPoIB snoop always
	 * did), then the walk stops */
	n = igmp("22 00 0000 0000 0002 | 04 ff 0000 e0000001"
		 "| 04 00 0000 e0000002", p, sizeof(p));
	expect(AF_INET, p, n, INET_MCAST_BAD_RECORD, "+224.0.0.1");
	n = mld(FF02_16, "8f 00 0000 0000 0001"
		"| 02 00 0001 ff0e0000000000000000000000000101"
		"  20010db800000000", p, sizeof(p));
	expect(AF_INET6, p + 48, n - 48, INET_MCAST_BAD_RECORD, "");
}

/*
 * The checksums are not what decides: the snoop learns from its own
 * host's packets, which go out either way, and never looked at them.
 */
static void test_checksum_not_checked(void **state)
{
	uint8_t p[256];
	size_t n;

	(void)state;
	n = igmp("22 00 0000 0000 0001 | 04 00 0000 e1010203", p, sizeof(p));
	p[3] ^= 0xff;
	assert_int_not_equal(tv_csum(p, n, 0), 0);
	expect(AF_INET, p, n, INET_OK, "+225.1.2.3");
	n = mld(FF02_16, "8f 00 0000 0000 0001"
		"| 04 00 0000 ff0200000000000000000001ff0ab1c1",
		p, sizeof(p));
	p[51] ^= 0x01;
	expect(AF_INET6, p + 48, n - 48, INET_OK, "+ff02::1:ff0a:b1c1");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_igmp_v1_v2),
		cmocka_unit_test(test_igmp_v3),
		cmocka_unit_test(test_mld),
		cmocka_unit_test(test_not_report),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_bad_record),
		cmocka_unit_test(test_checksum_not_checked),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

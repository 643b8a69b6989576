/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Unit tests of subnet/partitions.c: the partitions.conf parser (good
 * files, and bad ones with their exact "FILE:LINE: ..." messages), the
 * membership rules and P_Key table building.
 *
 * Fixtures are in tests/unit/data/partitions/, found from the repository
 * root (where tests/run starts us) or from $PRTN_TEST_DATA.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "subnet/partitions.h"

#define ERRLEN 4096

static char err[ERRLEN];

static const char *data_path(const char *name)
{
	static char path[512];
	const char *dir = getenv("PRTN_TEST_DATA");

	snprintf(path, sizeof(path), "%s/%s",
		 dir ? dir : "tests/unit/data/partitions", name);
	return path;
}

static void load_ok(const char *name, struct prtn_conf *c)
{
	int rc = prtn_conf_load(data_path(name), c, err, sizeof(err));

	if (rc != 0)
		print_error("unexpected errors:\n%s\n", err);
	assert_int_equal(rc, 0);
	assert_string_equal(err, "");
}

static void parse_ok(const char *text, struct prtn_conf *c)
{
	int rc = prtn_conf_parse(text, strlen(text), "t.conf", c, err,
				 sizeof(err));

	if (rc != 0)
		print_error("unexpected errors:\n%s\n", err);
	assert_int_equal(rc, 0);
}

/* Parse must fail; returns the number of error lines. */
static unsigned int parse_bad(const char *text, size_t len)
{
	struct prtn_conf c = { (struct prtn *)1, 99 };
	unsigned int lines = 1;
	const char *p;

	assert_int_equal(prtn_conf_parse(text, len, "t.conf", &c, err,
					 sizeof(err)), -1);
	assert_null(c.parts);
	assert_int_equal(c.nparts, 0);
	assert_true(err[0] != '\0');
	for (p = err; *p; p++)
		if (*p == '\n')
			lines++;
	return lines;
}

static unsigned int bad(const char *text)
{
	return parse_bad(text, strlen(text));
}

static unsigned int load_bad(const char *name)
{
	struct prtn_conf c;
	unsigned int lines = 1;
	const char *p;

	assert_int_equal(prtn_conf_load(data_path(name), &c, err,
					sizeof(err)), -1);
	assert_null(c.parts);
	for (p = err; *p; p++)
		if (*p == '\n')
			lines++;
	return lines;
}

/* want is a whole error line, or the start of one. */
static void assert_error(const char *want)
{
	const char *p = err;
	size_t n = strlen(want);

	for (;;) {
		const char *hit = strstr(p, want);

		if (!hit)
			break;
		/* At a line start, or after the directory of a fixture. */
		if (hit == err || hit[-1] == '\n' || hit[-1] == '/')
			return;
		p = hit + n;
	}
	print_error("expected an error line starting\n  %s\ngot:\n%s\n", want,
		    err);
	fail();
}

/* Every error line reads "NAME:LINE: text". */
static void assert_error_format(const char *name)
{
	char copy[ERRLEN];
	char *line, *save = NULL;
	size_t n = strlen(name);

	snprintf(copy, sizeof(copy), "%s", err);
	for (line = strtok_r(copy, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		const char *q = strstr(line, name);
		char *end;

		assert_non_null(q);
		q += n;
		assert_int_equal(*q, ':');
		assert_true(strtoul(q + 1, &end, 10) >= 1);
		assert_true(end[0] == ':' && end[1] == ' ' && end[2] != '\0');
	}
}

static const struct prtn *find(const struct prtn_conf *c, uint16_t pkey)
{
	const struct prtn *p = prtn_conf_find(c, pkey);

	assert_non_null(p);
	return p;
}

static int mem(const struct prtn *p, const char *node, uint64_t guid,
	       int is_sm)
{
	return prtn_membership(p, node, guid, is_sm, NULL);
}

/* --- good files --------------------------------------------------------- */

static void test_conf_default(void **state)
{
	struct prtn_conf c;
	const struct prtn *p;
	uint16_t key = 0, t[8];
	unsigned int n;

	(void)state;
	assert_int_equal(prtn_conf_default(&c), 0);
	assert_int_equal(c.nparts, 1);
	p = &c.parts[0];
	assert_string_equal(p->name, "Default");
	assert_int_equal(p->pkey, 0x7fff);
	assert_true(p->ipoib);
	assert_int_equal(p->qkey, 0x0b1b);
	assert_int_equal(p->mtu, 4);
	assert_int_equal(p->rate, 3);
	assert_int_equal(p->sl, 0);
	assert_int_equal(p->scope_mask, 1u << 2);
	assert_int_equal(prtn_membership(p, "h1", 0x1, 0, &key), PRTN_FULL);
	assert_int_equal(key, 0xffff);
	assert_int_equal(prtn_pkey_table(&c, "h1", 1, 0, t, 8, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(t[0], 0xffff);
	prtn_conf_free(&c);
	assert_null(c.parts);
	assert_int_equal(c.nparts, 0);
}

static void test_file_default(void **state)
{
	struct prtn_conf c;
	uint16_t t[8];
	unsigned int n;

	(void)state;
	load_ok("default.conf", &c);
	assert_int_equal(c.nparts, 1);
	assert_string_equal(c.parts[0].name, "Default");
	assert_true(c.parts[0].ipoib);
	assert_int_equal(c.parts[0].line, 2);
	/* implicit ALL=limited, SELF=full, then the file's ALL=full */
	assert_int_equal(c.parts[0].nmembers, 3);
	assert_int_equal(c.parts[0].members[0].line, 0);
	assert_int_equal(c.parts[0].members[2].membership, PRTN_FULL);
	assert_int_equal(mem(&c.parts[0], "h1", 5, 0), PRTN_FULL);
	assert_int_equal(prtn_pkey_table(&c, "h1", 5, 0, t, 8, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(t[0], 0xffff);
	prtn_conf_free(&c);
}

/* A file without a Default rule: Default=0x7fff : ALL=limited, SELF=full. */
static void test_implicit_default(void **state)
{
	struct prtn_conf c;
	uint16_t t[8];
	unsigned int n;

	(void)state;
	parse_ok("A=0x10 : h1 ;", &c);
	assert_int_equal(c.nparts, 2);
	assert_string_equal(c.parts[0].name, "Default");
	assert_int_equal(c.parts[0].pkey, 0x7fff);
	assert_false(c.parts[0].ipoib);
	assert_int_equal(c.parts[0].line, 0);
	assert_int_equal(mem(&c.parts[0], "h1", 1, 0), PRTN_LIMITED);
	assert_int_equal(mem(&c.parts[0], "sm", 2, 1), PRTN_FULL);
	/* no defmember: limited, as OpenSM */
	assert_int_equal(mem(&c.parts[1], "h1", 1, 0), PRTN_LIMITED);
	assert_int_equal(mem(&c.parts[1], "h2", 1, 0), PRTN_NONE);

	assert_int_equal(prtn_pkey_table(&c, "h1", 1, 0, t, 8, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(t[0], 0x7fff);
	assert_int_equal(t[1], 0x0010);
	assert_int_equal(prtn_pkey_table(&c, "sm", 2, 1, t, 8, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(t[0], 0xffff);
	prtn_conf_free(&c);
}

static void test_multiline(void **state)
{
	struct prtn_conf c;
	const struct prtn *p;

	(void)state;
	load_ok("multiline.conf", &c);
	assert_int_equal(c.nparts, 5);

	p = find(&c, 0x10);
	assert_string_equal(p->name, "Storage");
	assert_true(p->ipoib);
	assert_int_equal(p->mtu, 5);
	assert_int_equal(p->line, 6);
	assert_int_equal(p->nmembers, 4);
	assert_int_equal(p->members[0].kind, PRTN_M_NAME);
	assert_string_equal(p->members[0].name, "h1");
	assert_int_equal(p->members[0].membership, PRTN_LIMITED);
	assert_int_equal(p->members[0].line, 7);
	assert_string_equal(p->members[1].name, "h2");
	assert_int_equal(p->members[1].membership, PRTN_FULL);
	assert_int_equal(p->members[1].line, 8);
	assert_string_equal(p->members[2].name, "gw-a");
	assert_int_equal(p->members[2].membership, PRTN_BOTH);
	assert_int_equal(p->members[3].kind, PRTN_M_GUID);
	assert_int_equal(p->members[3].guid, 0x0002c90300000abcull);
	assert_int_equal(p->members[3].line, 11);

	/* defmember=full applies to "ALL" of the Default definition */
	assert_int_equal(mem(&c.parts[0], "x", 9, 0), PRTN_FULL);

	assert_string_equal(find(&c, 0x20)->name, "Mgmt");
	assert_string_equal(find(&c, 0x30)->name, "Backup");
	p = find(&c, 0x40);
	assert_string_equal(p->name, "Lab");
	assert_true(p->indx0);
	assert_int_equal(p->line, 14);
	assert_int_equal(p->nmembers, 2);
	assert_string_equal(c.parts[2].name, "Mgmt");	/* file order */
	prtn_conf_free(&c);
}

static void test_flags(void **state)
{
	struct prtn_conf c;
	const struct prtn *p;

	(void)state;
	load_ok("flags.conf", &c);
	p = find(&c, 0x7fff);
	assert_true(p->ipoib);
	assert_int_equal(p->qkey, 0x0b1b);
	assert_int_equal(p->scope_mask, 1u << 2);

	p = find(&c, 0x7001);
	assert_string_equal(p->name, "Fast");
	assert_true(p->ipoib);
	assert_int_equal(p->mtu, 5);
	assert_int_equal(p->rate, 7);
	assert_int_equal(p->sl, 3);
	assert_int_equal(p->scope_mask, (1u << 2) | (1u << 5));
	assert_int_equal(p->qkey, 0x1234);
	assert_int_equal(p->tclass, 16);
	assert_int_equal(p->flow_label, 0xabcde);
	assert_int_equal(p->set & (PRTN_F_MTU | PRTN_F_QKEY),
			 PRTN_F_MTU | PRTN_F_QKEY);

	p = find(&c, 0x7002);
	assert_false(p->ipoib);
	assert_int_equal(p->sl, 15);
	assert_int_equal(p->mtu, 4);		/* defaults */
	assert_int_equal(p->rate, 3);
	assert_int_equal(p->qkey, 0x0b1b);

	p = find(&c, 0x7003);			/* OpenSM spellings */
	assert_int_equal(p->qkey, 0xcafe);
	assert_int_equal(p->tclass, 1);
	assert_int_equal(p->flow_label, 7);
	assert_int_equal(p->members[0].membership, PRTN_FULL);	/* "f" */

	p = find(&c, 0x7004);
	assert_true(p->indx0);
	assert_int_equal(p->defmember, PRTN_BOTH);
	assert_int_equal(p->members[0].membership, PRTN_BOTH);
	prtn_conf_free(&c);
}

static void test_names_and_guids(void **state)
{
	struct prtn_conf c;
	const struct prtn *p;
	uint16_t key;

	(void)state;
	load_ok("names.conf", &c);
	p = find(&c, 0x100);
	assert_int_equal(p->nmembers, 7);	/* NONE adds nothing */
	assert_int_equal(p->members[2].kind, PRTN_M_NAME);
	assert_string_equal(p->members[2].name, "node_3");
	assert_string_equal(p->members[3].name, "gw-a.rack1");
	assert_int_equal(p->members[4].kind, PRTN_M_GUID);
	assert_int_equal(p->members[4].guid, 0x0002c90300001234ull);
	assert_int_equal(p->members[5].guid, 1234567);	/* decimal */
	assert_int_equal(p->members[6].kind, PRTN_M_SELF);
	assert_int_equal(p->members[4].line, 5);

	assert_int_equal(prtn_membership(p, "h1", 7, 0, &key), PRTN_FULL);
	assert_int_equal(key, 0x8100);
	assert_int_equal(prtn_membership(p, "h2", 7, 0, &key), PRTN_LIMITED);
	assert_int_equal(key, 0x0100);
	assert_int_equal(mem(p, "node_3", 7, 0), PRTN_BOTH);
	assert_int_equal(mem(p, "x", 0x0002c90300001234ull, 0), PRTN_FULL);
	assert_int_equal(mem(p, "x", 1234567, 0), PRTN_LIMITED);
	assert_int_equal(mem(p, "x", 8, 1), PRTN_FULL);	/* SELF */
	assert_int_equal(mem(p, "x", 8, 0), PRTN_NONE);
	assert_int_equal(mem(p, NULL, 8, 0), PRTN_NONE);
	assert_int_equal(mem(p, "H1", 8, 0), PRTN_NONE);	/* exact */

	/* software-subnet nodes are CAs, never switches or routers */
	assert_int_equal(mem(find(&c, 0x101), "h1", 1, 0), PRTN_NONE);
	assert_int_equal(mem(find(&c, 0x101), "sm", 1, 1), PRTN_NONE);
	assert_int_equal(mem(find(&c, 0x102), "h9", 1, 0), PRTN_LIMITED);
	assert_int_equal(mem(find(&c, 0x102), "h1", 1, 0), PRTN_FULL);

	/* 0x8103 in the file is P_Key 0x0103 */
	p = find(&c, 0x103);
	assert_string_equal(p->name, "Masked");
	assert_int_equal(p->pkey, 0x0103);
	prtn_conf_free(&c);
}

static void test_opensm_doc(void **state)
{
	struct prtn_conf c;
	const struct prtn *p;
	static const uint8_t igmp[16] = { 0xff, 0x12, 0x40, 0x1b, 0xff, 0xff,
					  0, 0, 0, 0, 0, 0, 0, 0, 0, 0x16 };
	static const struct {
		uint64_t guid;
		int m;
	} share[] = {
		{ 0x123451, PRTN_FULL }, { 0x123452, PRTN_FULL },
		{ 0x123453, PRTN_LIMITED }, { 0x123454, PRTN_LIMITED },
		{ 0x123455, PRTN_FULL }, { 0x123456, PRTN_LIMITED },
		{ 0x123457, PRTN_LIMITED }, { 0x123458, PRTN_FULL },
		{ 0x123459, PRTN_FULL }, { 0x12345a, PRTN_FULL },
		{ 0x12345b, PRTN_FULL }, { 0x12345c, PRTN_LIMITED },
		{ 0x12345d, PRTN_FULL }, { 0x12345e, PRTN_NONE },
	};
	size_t i;

	(void)state;
	load_ok("opensm-doc.conf", &c);
	assert_int_equal(c.nparts, 4);

	p = find(&c, 0x80);
	assert_string_equal(p->name, "ShareIO");
	assert_int_equal(p->line, 12);
	for (i = 0; i < sizeof(share) / sizeof(share[0]); i++)
		assert_int_equal(mem(p, "x", share[i].guid, 0), share[i].m);

	p = find(&c, 5);
	assert_int_equal(mem(p, "x", 0x3456789034ull, 0), PRTN_LIMITED);
	assert_int_equal(mem(p, "x", 0x123456, 0), PRTN_FULL);

	/* SELF=full, then ALL=limited: the last rule decides */
	p = find(&c, 0x300);
	assert_int_equal(mem(p, "sm", 1, 1), PRTN_LIMITED);

	p = find(&c, 0x7fff);
	assert_true(p->ipoib);
	assert_int_equal(p->nmgroups, 5);
	assert_memory_equal(p->mgroups[2].mgid, igmp, 16);
	assert_int_equal(p->mgroups[2].qkey, 0x0b1b);
	assert_int_equal(p->mgroups[2].line, 24);
	assert_int_equal(p->mgroups[0].sl, 1);
	assert_int_equal(p->mgroups[1].sl, 0);
	assert_int_equal(p->mgroups[4].mgid[2], 0);	/* not an IP group */
	assert_int_equal(p->mgroups[4].qkey, 0xdeadbeef);
	assert_int_equal(p->mgroups[4].mtu, 2);
	assert_int_equal(p->mgroups[4].scope_mask, 1u << 2);
	assert_int_equal(mem(p, "x", 1, 0), PRTN_FULL);
	prtn_conf_free(&c);
}

static void test_comments_and_blanks(void **state)
{
	struct prtn_conf c;

	(void)state;
	parse_ok("# a; b, c: d\r\n"
		 "\t A = 0x10 ,ipoib: # caf\xc3\xa9 ; not the end\r\n"
		 "   h1 # , h2\n"
		 "   ;   B=0x11:h2;# x\n"
		 "C=0x12:h3 ; # last line has no newline", &c);
	assert_int_equal(c.nparts, 4);
	assert_int_equal(find(&c, 0x10)->nmembers, 1);
	assert_string_equal(find(&c, 0x10)->members[0].name, "h1");
	assert_int_equal(find(&c, 0x11)->line, 4);
	assert_int_equal(find(&c, 0x12)->line, 5);
	prtn_conf_free(&c);
}

static void test_merge_and_auto_pkey(void **state)
{
	struct prtn_conf c;
	const struct prtn *p;

	(void)state;
	parse_ok("A=0x10,ipoib,scope=2 : h1 ;\n"
		 "A=0x10,mtu=4,scope=5 : h2=full ;\n"	/* mtu=4 agrees */
		 "A : h3 ;\n"				/* joins by name */
		 "Auto : h4 ;\n"			/* gets 0x0001 */
		 "Two=0x2 : h5 ;\n"
		 "Auto2 : h6 ;\n"			/* 2 used: 0x0003 */
		 "Dflt=0xffff, ipoib : h7=full ;\n",	/* renames Default */
		 &c);
	p = find(&c, 0x10);
	assert_int_equal(p->nmembers, 3);
	assert_true(p->ipoib);
	assert_int_equal(p->scope_mask, (1u << 2) | (1u << 5));
	assert_int_equal(p->members[2].line, 3);
	p = find(&c, 1);
	assert_string_equal(p->name, "Auto");
	assert_true(p->auto_pkey);
	assert_string_equal(find(&c, 3)->name, "Auto2");
	assert_false(find(&c, 2)->auto_pkey);
	p = &c.parts[0];
	assert_string_equal(p->name, "Dflt");
	assert_int_equal(p->pkey, 0x7fff);
	assert_true(p->ipoib);
	assert_int_equal(p->line, 7);
	assert_int_equal(mem(p, "h7", 1, 0), PRTN_FULL);
	assert_int_equal(mem(p, "h1", 1, 0), PRTN_LIMITED);
	prtn_conf_free(&c);
}

static void test_limits_accepted(void **state)
{
	struct prtn_conf c;
	char name[PRTN_NAME_MAX], *text;
	size_t n;

	(void)state;
	memset(name, 'n', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	text = malloc(PRTN_LINE_MAX + 256);
	assert_non_null(text);

	/* 63-character names */
	snprintf(text, PRTN_LINE_MAX + 256, "%s=0x10 : %s ;", name, name);
	parse_ok(text, &c);
	assert_string_equal(find(&c, 0x10)->name, name);
	assert_string_equal(find(&c, 0x10)->members[0].name, name);
	prtn_conf_free(&c);

	/* a line of PRTN_LINE_MAX - 1 characters */
	n = (size_t)snprintf(text, 64, "A=0x10 : h1 ; #");
	memset(text + n, 'c', PRTN_LINE_MAX - 1 - n);
	text[PRTN_LINE_MAX - 1] = '\0';
	parse_ok(text, &c);
	prtn_conf_free(&c);
	free(text);
}

static void test_many_members(void **state)
{
	struct prtn_conf c;
	size_t cap = PRTN_MAX_MEMBERS * 24 + 64, n, i;
	char *text = malloc(cap);

	(void)state;
	assert_non_null(text);
	n = (size_t)snprintf(text, cap, "A=0x10 :\n");
	for (i = 0; i < PRTN_MAX_MEMBERS; i++)
		n += (size_t)snprintf(text + n, cap - n, "h%zu,\n", i);
	snprintf(text + n, cap - n, ";\n");
	parse_ok(text, &c);
	assert_int_equal(find(&c, 0x10)->nmembers, PRTN_MAX_MEMBERS);
	assert_string_equal(find(&c, 0x10)->members[1023].name, "h1023");
	prtn_conf_free(&c);

	/* one more is an error, on the line of the 1025th member */
	snprintf(text + n, cap - n, "extra ;\n");
	parse_bad(text, strlen(text));
	assert_error("t.conf:1026: partition 'A' has more than 1024 members");
	free(text);
}

/* --- bad files ---------------------------------------------------------- */

static void test_bad_missing_semicolon(void **state)
{
	(void)state;
	assert_int_equal(load_bad("missing-semicolon.conf"), 1);
	assert_error("missing-semicolon.conf:2: missing ';' at the end of partition 'NoSemi'");
	assert_int_equal(load_bad("missing-semicolon-eof.conf"), 1);
	assert_error("missing-semicolon-eof.conf:3: missing ';' at the end of partition 'Last'");
	assert_error_format("missing-semicolon-eof.conf");

	bad("A=0x10 : h1, h2");
	assert_error("t.conf:1: missing ';' at the end of partition 'A'");
	bad("A=0x10 : h1, B=0x11 : h2 ;");
	assert_error("t.conf:1: unexpected ':' after member 'B' of partition 'A' (missing ';'?)");
}

static void test_bad_pkey(void **state)
{
	(void)state;
	assert_int_equal(load_bad("bad-pkey.conf"), 2);
	assert_error("bad-pkey.conf:3: bad P_Key '0x1zz' (expected 0x0001..0x7fff)");
	assert_error("bad-pkey.conf:4: bad P_Key '0x10000' (expected 0x0001..0x7fff)");
	assert_error_format("bad-pkey.conf");

	assert_int_equal(load_bad("pkey-zero.conf"), 2);
	assert_error("pkey-zero.conf:1: P_Key 0x0000 is not valid");
	assert_error("pkey-zero.conf:2: P_Key 0x8000 is not valid");

	bad("A= : h1 ;");
	assert_error("t.conf:1: P_Key missing after '='");
	bad("A=010 : h1 ;");		/* octal to OpenSM */
	assert_error("t.conf:1: bad P_Key '010'");
	bad("A=+5 : h1 ;");
	assert_error("t.conf:1: bad P_Key '+5'");
	bad("A=0x00000000000000000001 : h1 ;");
	assert_error("t.conf:1: bad P_Key '0x00000000000000000001'");
}

static void test_bad_flags(void **state)
{
	(void)state;
	assert_int_equal(load_bad("unknown-flag.conf"), 1);
	assert_error("unknown-flag.conf:1: unknown partition flag 'speed'");
	assert_int_equal(load_bad("bad-mtu.conf"), 1);
	assert_error("bad-mtu.conf:3: bad mtu value '6' (expected 1..5)");

	assert_int_equal(bad("A=0x10,mtu=0:h1;\n"
				   "B=0x11,rate=25:h1;\n"
				   "C=0x12,sl=16:h1;\n"
				   "D=0x13,scope=0:h1;\n"
				   "E=0x14,qkey=0:h1;\n"
				   "F=0x15,tclass=256:h1;\n"
				   "G=0x16,flowlabel=0x100000:h1;\n"
				   "H=0x17,defmember=most:h1;\n"
				   "I=0x18,ipoib=yes:h1;\n"
				   "J=0x19,mtu:h1;\n"
				   "K=0x1a,mtu=4,mtu=4:h1;\n"
				   "L=0x1b,,ipoib:h1;\n"
				   "M=0x1c,mt=4:h1;\n"
				   "N=0x1d,ipoib\n: h1;\n"), 14);
	assert_error("t.conf:1: bad mtu value '0' (expected 1..5)");
	assert_error("t.conf:2: bad rate value '25' (expected 2..24)");
	assert_error("t.conf:3: bad sl value '16' (expected 0..15)");
	assert_error("t.conf:4: bad scope value '0' (expected 1..15)");
	assert_error("t.conf:5: bad qkey value '0' (expected 0x1..0xffffffff)");
	assert_error("t.conf:6: bad tclass value '256' (expected 0..255)");
	assert_error("t.conf:7: bad flowlabel value '0x100000' (expected 0..0xfffff)");
	assert_error("t.conf:8: bad defmember value 'most' (full, limited or both)");
	assert_error("t.conf:9: flag 'ipoib' takes no value");
	assert_error("t.conf:10: flag 'mtu' needs a value (1..5)");
	assert_error("t.conf:11: flag 'mtu' given twice");
	assert_error("t.conf:12: empty flag after ','");
	assert_error("t.conf:13: unknown partition flag 'mt'");	/* no prefixes */
	assert_error("t.conf:14: missing ':' after the partition header (the header must be on one line)");
	assert_error_format("t.conf");
}

static void test_bad_names(void **state)
{
	(void)state;
	assert_int_equal(load_bad("long-names.conf"), 2);
	assert_error("long-names.conf:2: partition name 'ThisPartitionNameIsMuchTooLongForIbgw...' is too long (at most 63 characters)");
	assert_error("long-names.conf:3: node name 'this-node-name-is-also-far-too-long-f...' is too long (at most 63 characters)");
	assert_int_equal(load_bad("empty-name.conf"), 1);
	assert_error("empty-name.conf:2: partition name missing before '='");

	bad(": h1 ;");
	assert_error("t.conf:1: partition name missing before ':'");
	bad("0x10 : h1 ;");
	assert_error("t.conf:1: partition name missing ('0x10' is a P_Key to OpenSM; write NAME=0x10)");
	bad("A$=0x10 : h1 ;");
	assert_error("t.conf:1: invalid character '$' in partition name 'A$'");
	bad("A=0x10 : h1 ;\n;\n");
	assert_error("t.conf:2: empty partition definition before ';'");
}

static void test_bad_members(void **state)
{
	(void)state;
	assert_int_equal(load_bad("bad-members.conf"), 6);
	assert_error("bad-members.conf:1: expected ',' or ';' before 'h2' in the member list of partition 'A'");
	assert_error("bad-members.conf:2: member name missing before '=' in partition 'B'");
	assert_error("bad-members.conf:3: member 'h1': bad membership 'ful1' (full, limited or both)");
	assert_error("bad-members.conf:4: 'all' is not a member: keywords are upper case (ALL)");
	assert_error("bad-members.conf:5: bad port GUID '0x'");
	assert_error("bad-members.conf:6: port GUID 0 is not valid");

	bad("A=0x10 : 0x10000000000000000 ;");
	assert_error("t.conf:1: bad port GUID '0x10000000000000000'");
	bad("A=0x10 : 18446744073709551616 ;");
	assert_error("t.conf:1: bad port GUID '18446744073709551616'");
	bad("A=0x10 : h1= ;");
	assert_error("t.conf:1: member 'h1': membership missing after '='");
	bad("A=0x10 : h1=full=x ;");
	assert_error("t.conf:1: unexpected '=' after member 'h1' of partition 'A'");
	bad("A=0x10 : _ok, -bad ;");
	assert_error("t.conf:1: node name '-bad' must start with a letter or '_'");
	bad("A=0x10 : Mgid=ff12::1 ;");
	assert_error("t.conf:1: 'Mgid' is not a member: write mgid=GID");
}

/* After an error the parser resumes, and keeps counting lines. */
static void test_bad_recovery(void **state)
{
	(void)state;
	assert_int_equal(bad("A=0x10 h1 ;\n"
			     "B=0x11\n"
			     "  : h1,\n"
			     "  h2 ;\n"
			     "C=0 : x ;\n"
			     "D=0x12 : h1 # ; a comment hides this ';'\n"
			     "  h2=bad, h3=worse ;\n"
			     "E=0x13 : h1\n"
			     "F=0x14,mtu=9 : h1 ;\n"), 7);
	assert_error("t.conf:1: unexpected 'h' in the partition header");
	assert_error("t.conf:2: missing ':' after the partition header");
	assert_error("t.conf:5: P_Key 0x0000 is not valid");
	assert_error("t.conf:7: member 'h2': bad membership 'bad'");
	assert_error("t.conf:7: member 'h3': bad membership 'worse'");
	assert_error("t.conf:8: missing ';' at the end of partition 'E'");
	assert_error("t.conf:9: bad mtu value '9' (expected 1..5)");
}

static void test_bad_duplicates(void **state)
{
	(void)state;
	assert_int_equal(bad("A=0x10,mtu=4 : h1 ;\n"
				   "A=0x10,mtu=5 : h2 ;\n"
				   "B=0x10 : h3 ;\n"
				   "A=0x11 : h4 ;\n"
				   "C : h5 ;\n"
				   "D=0x1 : h6 ;\n"
				   "E=0x20,qkey=0x1 : h1;\n"
				   "E=0x20,qkey=0x2 : h1;\n"
				   "Default=0x20 : h1;\n"), 6);
	assert_error("t.conf:2: partition 'A' (P_Key 0x0010): mtu=5 conflicts with mtu=4 given earlier");
	assert_error("t.conf:3: P_Key 0x0010 is already partition 'A' (line 1); a repeated P_Key must repeat its name");
	assert_error("t.conf:4: partition name 'A' is already used for P_Key 0x0010 (line 1)");
	assert_error("t.conf:6: P_Key 0x0001 was given automatically to partition 'C' at line 5; give that partition an explicit P_Key");
	assert_error("t.conf:8: partition 'E' (P_Key 0x0020): q_key=0x2 conflicts with q_key=0x1 given earlier");
	assert_error("t.conf:9: partition name 'Default' is already used for P_Key 0x7fff (the implicit default partition)");
}

static void test_bad_mgid(void **state)
{
	(void)state;
	assert_int_equal(bad("A=0x10,ipoib : mgid=fe80::1 ;\n"
				   "B=0x11,ipoib : mgid=zz ;\n"
				   "C=0x12,ipoib : mgid=ff12:401b:1234::1 ;\n"
				   "D=0x13,ipoib : mgid=ff12:401b::1,rate=7 ;\n"
				   "E=0x14 : mgid=ff12::9 ;\n"
				   "F=0x15 : mgid=ff12::9 ;\n"
				   "G=0x16 : mgid=ff12::8, h1 ;\n"
				   "H=0x17 : mgid=ff12::7 h1 ;\n"
				   "I=0x18 : mgid=ff12::6,ipoib ;\n"), 8);
	assert_error("t.conf:1: mgid 'fe80::1' is not a multicast GID");
	assert_error("t.conf:2: bad mgid 'zz'");
	assert_error("t.conf:3: IP mgid 'ff12:401b:1234::1' carries P_Key 0x1234, not 0x8012 of partition 'C' (or 0 to fill in)");
	assert_error("t.conf:4: IP mgid 'ff12:401b::1' needs the partition's rate=3 and mtu=4 (has rate=7 mtu=4)");
	assert_error("t.conf:6: mgid 'ff12::9' already given at line 5");
	assert_error("t.conf:7: unknown multicast group flag 'h1'");
	assert_error("t.conf:8: unexpected 'h' after mgid");
	assert_error("t.conf:9: unknown multicast group flag 'ipoib'");
	assert_error_format("t.conf");
}

static void test_bad_bytes(void **state)
{
	static const char nul[] = "A=0x10 : h1 ;\nB=0x11 :\0 h2 ;\n";
	char *text;
	int i;

	(void)state;
	assert_int_equal(load_bad("garbage.bin"), 3);
	assert_error("garbage.bin:2: invalid byte 0x00 (not a text file?)");
	assert_error("garbage.bin:3: invalid byte 0x01 (not a text file?)");
	assert_error("garbage.bin:4: invalid byte 0x00 (not a text file?)");

	assert_int_equal(parse_bad(nul, sizeof(nul) - 1), 1);
	assert_error("t.conf:2: invalid byte 0x00 (not a text file?)");
	bad("A=0x10 : h\xc3\xa9 ;");
	assert_error("t.conf:1: invalid byte 0xc3 (not a text file?)");
	bad("A=0x10 : h1 \x1b;");
	assert_error("t.conf:1: invalid byte 0x1b (not a text file?)");

	/* a line of PRTN_LINE_MAX characters */
	text = malloc(PRTN_LINE_MAX + 64);
	assert_non_null(text);
	i = snprintf(text, 64, "A=0x10 : h1 ;\n#");
	memset(text + i, 'c', PRTN_LINE_MAX - 1);
	text[i + PRTN_LINE_MAX - 1] = '\0';
	assert_int_equal(parse_bad(text, strlen(text)), 1);
	assert_error("t.conf:2: line longer than 4095 characters");
	free(text);

	/* pure binary: capped, never more than the limit plus one line */
	text = malloc(10000);
	assert_non_null(text);
	for (i = 0; i < 10000; i++)
		text[i] = (char)((i * 7919) % 251);
	assert_int_equal(parse_bad(text, 10000), PRTN_MAX_ERRORS + 1);
	assert_non_null(strstr(err, ": too many errors, giving up"));
	assert_error_format("t.conf");
	free(text);
}

static void test_bad_empty(void **state)
{
	(void)state;
	bad("");
	assert_string_equal(err, "t.conf:1: no partition definitions (OpenSM would use its default configuration)");
	bad("# only\n# comments\n");
	assert_error("t.conf:2: no partition definitions");
	parse_bad(NULL, 0);
	assert_error("t.conf:1: no partition definitions");
}

static void test_error_buffer(void **state)
{
	struct prtn_conf c;
	char small[12];

	(void)state;
	memset(small, 'x', sizeof(small));
	assert_int_equal(prtn_conf_parse("A=0 : h1;", 9, "t.conf", &c, small,
					 sizeof(small)), -1);
	assert_string_equal(small, "t.conf:1: P");
	assert_int_equal(prtn_conf_parse("A=0 : h1;", 9, "t.conf", &c, NULL,
					 0), -1);
	/* a file name cannot break the one-line format */
	assert_int_equal(prtn_conf_parse("A=0 : h1;", 9, "a\nb", &c, err,
					 sizeof(err)), -1);
	assert_null(strchr(err, '\n'));
	assert_error("a?b:1: P_Key 0x0000 is not valid");
}

static void test_load_errors(void **state)
{
	struct prtn_conf c;

	(void)state;
	errno = 0;
	assert_int_equal(prtn_conf_load(data_path("no-such-file.conf"), &c,
					err, sizeof(err)), -1);
	assert_int_equal(errno, ENOENT);
	assert_non_null(strstr(err, "no-such-file.conf: cannot open: "));
	assert_int_equal(prtn_conf_load(data_path(""), &c, err, sizeof(err)),
			 -1);
	assert_non_null(strstr(err, ": not a regular file"));
	assert_null(c.parts);
}

/* --- membership and tables ---------------------------------------------- */

static void test_membership_last_wins(void **state)
{
	struct prtn_conf c;
	const struct prtn *p;
	uint16_t key = 0x1234;

	(void)state;
	parse_ok("A=0x10 : ALL=full, h1=limited, 0x99=both ;\n"
		 "A=0x10 : h2=limited ;\n"
		 "A=0x10 : ALL_CAS ;\n"
		 "A=0x10 : h3=full, SELF=both ;\n", &c);
	p = find(&c, 0x10);
	assert_int_equal(mem(p, "h1", 1, 0), PRTN_LIMITED);
	assert_int_equal(mem(p, "h2", 1, 0), PRTN_LIMITED);
	assert_int_equal(mem(p, "h3", 1, 0), PRTN_FULL);
	assert_int_equal(mem(p, "h4", 0x99, 0), PRTN_LIMITED);
	assert_int_equal(prtn_membership(p, "sm", 2, 1, &key), PRTN_BOTH);
	assert_int_equal(key, 0x8010);
	prtn_conf_free(&c);

	parse_ok("B=0x11 : h1=full ;", &c);
	key = 0x1234;
	assert_int_equal(prtn_membership(find(&c, 0x11), "h2", 1, 0, &key),
			 PRTN_NONE);
	assert_int_equal(key, 0x1234);		/* untouched */
	prtn_conf_free(&c);
}

static void test_table_order(void **state)
{
	struct prtn_conf c;
	uint16_t t[32];
	unsigned int n;

	(void)state;
	parse_ok("Z=0x300 : h1=full ;\n"
		 "A=0x0010 : h1, h2 ;\n"
		 "Default=0x7fff, ipoib : ALL=full ;\n"
		 "M=0x200 : h1=both ;\n"
		 "Q=0x50 : h2 ;\n", &c);
	assert_int_equal(prtn_pkey_table(&c, "h1", 1, 0, t, 32, &n), 0);
	assert_int_equal(n, 5);
	assert_int_equal(t[0], 0xffff);		/* default first */
	assert_int_equal(t[1], 0x8300);		/* then file order */
	assert_int_equal(t[2], 0x0010);
	assert_int_equal(t[3], 0x8200);		/* both: full, limited */
	assert_int_equal(t[4], 0x0200);

	assert_int_equal(prtn_pkey_table(&c, "h2", 2, 0, t, 32, &n), 0);
	assert_int_equal(n, 3);
	assert_int_equal(t[0], 0xffff);
	assert_int_equal(t[1], 0x0010);
	assert_int_equal(t[2], 0x0050);

	/* too small: the first max entries and -1 */
	assert_int_equal(prtn_pkey_table(&c, "h1", 1, 0, t, 3, &n), -1);
	assert_int_equal(n, 3);
	assert_int_equal(t[2], 0x0010);
	assert_int_equal(prtn_pkey_table(&c, "h1", 1, 0, t, 0, &n), -1);
	assert_int_equal(n, 0);
	prtn_conf_free(&c);
}

static void test_table_indx0(void **state)
{
	struct prtn_conf c;
	uint16_t t[8];
	unsigned int n;

	(void)state;
	parse_ok("A=0x10 : h1 ;\n"
		 "I=0x20, indx0 : h1=full, h2 ;\n"
		 "J=0x30, indx0 : h2=full ;\n", &c);
	assert_int_equal(prtn_pkey_table(&c, "h1", 1, 0, t, 8, &n), 0);
	assert_int_equal(n, 3);
	assert_int_equal(t[0], 0x8020);
	assert_int_equal(t[1], 0x7fff);
	assert_int_equal(t[2], 0x0010);
	/* in two indx0 partitions: the last one in the file */
	assert_int_equal(prtn_pkey_table(&c, "h2", 1, 0, t, 8, &n), 0);
	assert_int_equal(n, 3);
	assert_int_equal(t[0], 0x8030);
	assert_int_equal(t[1], 0x7fff);
	assert_int_equal(t[2], 0x0020);
	prtn_conf_free(&c);
}

static void test_table_hand_built(void **state)
{
	struct prtn_member m = { .kind = PRTN_M_NAME,
				 .membership = PRTN_FULL, .name = "h1" };
	struct prtn p = { .name = "X", .pkey = 0x40, .members = &m,
			  .nmembers = 1 };
	struct prtn_conf c = { &p, 1 };
	uint16_t t[4];
	unsigned int n;

	(void)state;
	/* no default partition: index 0 stays an empty slot */
	assert_int_equal(prtn_pkey_table(&c, "h1", 1, 0, t, 4, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(t[0], 0);
	assert_int_equal(t[1], 0x8040);
	assert_int_equal(prtn_pkey_table(&c, "h2", 1, 0, t, 4, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(t[0], 0);
	assert_null(prtn_conf_find(&c, 0x7fff));
	assert_ptr_equal(prtn_conf_find(&c, 0x8040), &p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_conf_default),
		cmocka_unit_test(test_file_default),
		cmocka_unit_test(test_implicit_default),
		cmocka_unit_test(test_multiline),
		cmocka_unit_test(test_flags),
		cmocka_unit_test(test_names_and_guids),
		cmocka_unit_test(test_opensm_doc),
		cmocka_unit_test(test_comments_and_blanks),
		cmocka_unit_test(test_merge_and_auto_pkey),
		cmocka_unit_test(test_limits_accepted),
		cmocka_unit_test(test_many_members),
		cmocka_unit_test(test_bad_missing_semicolon),
		cmocka_unit_test(test_bad_pkey),
		cmocka_unit_test(test_bad_flags),
		cmocka_unit_test(test_bad_names),
		cmocka_unit_test(test_bad_members),
		cmocka_unit_test(test_bad_recovery),
		cmocka_unit_test(test_bad_duplicates),
		cmocka_unit_test(test_bad_mgid),
		cmocka_unit_test(test_bad_bytes),
		cmocka_unit_test(test_bad_empty),
		cmocka_unit_test(test_error_buffer),
		cmocka_unit_test(test_load_errors),
		cmocka_unit_test(test_membership_last_wins),
		cmocka_unit_test(test_table_order),
		cmocka_unit_test(test_table_indx0),
		cmocka_unit_test(test_table_hand_built),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

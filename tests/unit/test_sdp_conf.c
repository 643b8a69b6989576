// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* libsdp.conf (ulp/sdp/sdp_conf.c): the grammar, first match, the errors. */
#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ulp/sdp/sdp_conf.h"

static struct sdp_conf conf;

static int parse(const char *text, unsigned int *line, char *err,
		 size_t errlen)
{
	return sdp_conf_parse(&conf, text, strlen(text), line, err, errlen);
}

static void parse_ok(const char *text)
{
	unsigned int line = 99;
	char err[256];

	if (parse(text, &line, err, sizeof(err)) != 0)
		fail_msg("rejected \"%s\": line %u: %s", text, line, err);
	assert_int_equal(line, 0);
}

/* text fails at line with a message holding want (the bad token). */
static void parse_bad(const char *text, unsigned int want_line,
		      const char *want)
{
	unsigned int line = 0;
	char err[256];

	memset(err, 'x', sizeof(err));
	if (parse(text, &line, err, sizeof(err)) != -1)
		fail_msg("accepted \"%s\"", text);
	if (line != want_line || strstr(err, want) == NULL)
		fail_msg("\"%s\": line %u: %s (wanted line %u, '%s')", text,
			 line, err, want_line, want);
	assert_null(strchr(err, '\n'));
	/* nothing half-read */
	assert_int_equal(conf.n[0], 0);
	assert_int_equal(conf.n[1], 0);
	assert_int_equal(conf.log_dest, SDP_LOG_NONE);
}

static struct inet_addr addr(const char *s)
{
	struct inet_addr a;

	if (inet_addr_parse(s, &a, NULL, 0) < 0)
		fail_msg("bad test address %s", s);
	return a;
}

static enum sdp_use match(enum sdp_role role, const char *prog,
			  const char *a, uint16_t port)
{
	struct inet_addr ia = addr(a);

	return sdp_conf_match(&conf, role, prog, &ia, port, NULL);
}

static void test_use_keywords(void **state)
{
	const struct sdp_rule *r;

	(void)state;
	parse_ok("use tcp server * *:*\n"
		 "use sdp listen * *:*\n"
		 "use both client * *:*\n"
		 "use sdp connect * *:*\n");
	assert_int_equal(conf.n[SDP_ROLE_SERVER], 2);
	assert_int_equal(conf.n[SDP_ROLE_CLIENT], 2);
	r = &conf.rules[SDP_ROLE_SERVER][0];
	assert_int_equal(r->use, SDP_USE_TCP);
	assert_string_equal(r->program, "*");
	assert_true(r->any_addr);
	assert_int_equal(r->port_lo, 0);
	assert_int_equal(r->port_hi, 65535);
	assert_int_equal(r->line, 1);
	assert_int_equal(conf.rules[SDP_ROLE_SERVER][1].use, SDP_USE_SDP);
	assert_int_equal(conf.rules[SDP_ROLE_SERVER][1].line, 2);
	assert_int_equal(conf.rules[SDP_ROLE_CLIENT][0].use, SDP_USE_BOTH);
	assert_int_equal(conf.rules[SDP_ROLE_CLIENT][1].use, SDP_USE_SDP);
	assert_int_equal(conf.rules[SDP_ROLE_CLIENT][1].line, 4);
	assert_int_equal(conf.log_dest, SDP_LOG_NONE);
	assert_int_equal(conf.log_level, 0);

	assert_string_equal(sdp_use_name(SDP_USE_TCP), "tcp");
	assert_string_equal(sdp_use_name(SDP_USE_SDP), "sdp");
	assert_string_equal(sdp_use_name(SDP_USE_BOTH), "both");
	assert_string_equal(sdp_use_name(SDP_USE_NONE), "none");
	assert_string_equal(sdp_use_name((enum sdp_use)42), "?");
}

static void test_ports(void **state)
{
	const struct sdp_rule *r = &conf.rules[SDP_ROLE_SERVER][0];

	(void)state;
	parse_ok("use sdp server * *:5000");
	assert_int_equal(r->port_lo, 5000);
	assert_int_equal(r->port_hi, 5000);
	parse_ok("use sdp server * *:0");
	assert_int_equal(r->port_lo, 0);
	assert_int_equal(r->port_hi, 0);
	parse_ok("use sdp server * *:65535");
	assert_int_equal(r->port_lo, 65535);
	parse_ok("use sdp server * *:5000-5010");
	assert_int_equal(r->port_lo, 5000);
	assert_int_equal(r->port_hi, 5010);
	parse_ok("use sdp server * *:80-80");
	assert_int_equal(r->port_lo, 80);
	assert_int_equal(r->port_hi, 80);
	parse_ok("use sdp server * *:0-65535");
	assert_int_equal(r->port_hi, 65535);

	parse_ok("use sdp server * *:5000-5010");
	assert_int_equal(match(SDP_ROLE_SERVER, "a", "10.0.0.1", 4999),
			 SDP_USE_NONE);
	assert_int_equal(match(SDP_ROLE_SERVER, "a", "10.0.0.1", 5000),
			 SDP_USE_SDP);
	assert_int_equal(match(SDP_ROLE_SERVER, "a", "10.0.0.1", 5010),
			 SDP_USE_SDP);
	assert_int_equal(match(SDP_ROLE_SERVER, "a", "10.0.0.1", 5011),
			 SDP_USE_NONE);
}

static void test_addresses(void **state)
{
	const struct sdp_rule *r = &conf.rules[SDP_ROLE_CLIENT][0];
	char buf[INET_PREFIX_STRLEN];

	(void)state;
	parse_ok("use sdp client * 192.168.1.7:80");
	assert_false(r->any_addr);
	assert_string_equal(inet_prefix_str(&r->addr, buf, sizeof(buf)),
			    "192.168.1.7/32");
	parse_ok("use sdp client * 192.168.0.0/16:*");
	assert_string_equal(inet_prefix_str(&r->addr, buf, sizeof(buf)),
			    "192.168.0.0/16");
	parse_ok("use sdp client * 0.0.0.0/0:*");
	assert_int_equal(r->addr.plen, 0);
	parse_ok("use sdp client * [fe80::1]:80");
	assert_int_equal(r->addr.addr.family, AF_INET6);
	assert_string_equal(inet_prefix_str(&r->addr, buf, sizeof(buf)),
			    "fe80::1/128");
	parse_ok("use sdp client * [fe80::1]/64:80");
	assert_string_equal(inet_prefix_str(&r->addr, buf, sizeof(buf)),
			    "fe80::1/64");
	assert_int_equal(r->port_lo, 80);
	parse_ok("use sdp client * [::]/0:1-2");
	assert_int_equal(r->addr.plen, 0);
	parse_ok("use sdp client * [::ffff:10.0.0.1]:*");
	assert_int_equal(r->addr.addr.family, AF_INET6);

	parse_ok("use sdp client * 10.1.0.0/16:*\n"
		 "use tcp client * [2001:db8::]/32:*\n");
	assert_int_equal(match(SDP_ROLE_CLIENT, "p", "10.1.2.3", 1),
			 SDP_USE_SDP);
	assert_int_equal(match(SDP_ROLE_CLIENT, "p", "10.2.0.1", 1),
			 SDP_USE_NONE);
	assert_int_equal(match(SDP_ROLE_CLIENT, "p", "2001:db8:1::5", 1),
			 SDP_USE_TCP);
	assert_int_equal(match(SDP_ROLE_CLIENT, "p", "2001:db9::5", 1),
			 SDP_USE_NONE);
	/* an IPv4 rule takes the IPv4-mapped IPv6 form, not other v6 */
	assert_int_equal(match(SDP_ROLE_CLIENT, "p", "::ffff:10.1.9.9", 1),
			 SDP_USE_SDP);
	assert_int_equal(match(SDP_ROLE_CLIENT, "p", "::ffff:10.2.9.9", 1),
			 SDP_USE_NONE);
	assert_int_equal(match(SDP_ROLE_CLIENT, "p", "::a01:909", 1),
			 SDP_USE_NONE);
	/* an IPv6 rule does not take an IPv4 address */
	parse_ok("use tcp client * [::]/0:*");
	assert_int_equal(match(SDP_ROLE_CLIENT, "p", "10.1.2.3", 1),
			 SDP_USE_NONE);
	assert_int_equal(match(SDP_ROLE_CLIENT, "p", "::1", 1), SDP_USE_TCP);
	/* * takes any address, and none */
	parse_ok("use both client * *:*");
	assert_int_equal(sdp_conf_match(&conf, SDP_ROLE_CLIENT, "p", NULL, 1,
					NULL), SDP_USE_BOTH);
	parse_ok("use both client * 0.0.0.0/0:*");
	assert_int_equal(sdp_conf_match(&conf, SDP_ROLE_CLIENT, "p", NULL, 1,
					NULL), SDP_USE_NONE);
}

static void test_log(void **state)
{
	(void)state;
	parse_ok("log destination stderr");
	assert_int_equal(conf.log_dest, SDP_LOG_STDERR);
	assert_int_equal(conf.log_level, 0);
	parse_ok("log destination syslog min-level 9");
	assert_int_equal(conf.log_dest, SDP_LOG_SYSLOG);
	assert_int_equal(conf.log_level, 9);
	parse_ok("log min-level 1 destination file /var/log/libsdp.log");
	assert_int_equal(conf.log_dest, SDP_LOG_FILE);
	assert_string_equal(conf.log_file, "/var/log/libsdp.log");
	assert_int_equal(conf.log_level, 1);
	parse_ok("log min-level 4");
	assert_int_equal(conf.log_dest, SDP_LOG_NONE);
	assert_int_equal(conf.log_level, 4);
	parse_ok("log");
	assert_int_equal(conf.log_dest, SDP_LOG_NONE);
	assert_int_equal(conf.log_level, 0);
	/* a later log line overrides what it names */
	parse_ok("log destination stderr min-level 3\n"
		 "log destination syslog\n");
	assert_int_equal(conf.log_dest, SDP_LOG_SYSLOG);
	assert_int_equal(conf.log_level, 3);
	parse_ok("log destination file /tmp/a\nlog destination stderr\n");
	assert_int_equal(conf.log_dest, SDP_LOG_STDERR);
	assert_string_equal(conf.log_file, "");
}

static void test_layout(void **state)
{
	(void)state;
	parse_ok("");
	assert_int_equal(conf.n[0] + conf.n[1], 0);
	parse_ok("\n\n   \n\t\n# only a comment\n   # indented\n");
	assert_int_equal(conf.n[0] + conf.n[1], 0);
	parse_ok("# head\r\n"
		 "\r\n"
		 "use sdp server * *:5000 # trailing\r\n"
		 "  \tuse\ttcp  client\t*   10.0.0.1:80#tight\r\n"
		 "log destination file /tmp/l # why\r\n"
		 "use both client * *:*");	/* no final newline */
	assert_int_equal(conf.n[SDP_ROLE_SERVER], 1);
	assert_int_equal(conf.n[SDP_ROLE_CLIENT], 2);
	assert_int_equal(conf.rules[SDP_ROLE_SERVER][0].line, 3);
	assert_int_equal(conf.rules[SDP_ROLE_SERVER][0].port_lo, 5000);
	assert_int_equal(conf.rules[SDP_ROLE_CLIENT][0].line, 4);
	assert_int_equal(conf.rules[SDP_ROLE_CLIENT][0].use, SDP_USE_TCP);
	assert_int_equal(conf.rules[SDP_ROLE_CLIENT][0].port_hi, 80);
	assert_int_equal(conf.rules[SDP_ROLE_CLIENT][1].line, 6);
	assert_string_equal(conf.log_file, "/tmp/l");

	/* the text is len bytes, not a string: what follows is ignored */
	assert_int_equal(sdp_conf_parse(&conf, "use sdp server * *:1garbage",
					20, NULL, NULL, 0), 0);
	assert_int_equal(conf.rules[SDP_ROLE_SERVER][0].port_lo, 1);
	/* parse empties the configuration first */
	parse_ok("log min-level 2");
	assert_int_equal(conf.n[SDP_ROLE_SERVER], 0);
}

static void test_first_match(void **state)
{
	const struct sdp_rule *r;
	struct inet_addr a = addr("10.0.0.5");

	(void)state;
	parse_ok("use tcp server * *:22\n"
		 "use sdp server * 10.0.0.0/8:*\n"
		 "use both server * *:*\n"
		 "use sdp client * *:5000\n");
	assert_int_equal(match(SDP_ROLE_SERVER, "x", "10.0.0.5", 22),
			 SDP_USE_TCP);
	assert_int_equal(sdp_conf_match(&conf, SDP_ROLE_SERVER, "x", &a, 80,
					&r), SDP_USE_SDP);
	assert_non_null(r);
	assert_int_equal(r->line, 2);
	assert_int_equal(match(SDP_ROLE_SERVER, "x", "11.0.0.5", 80),
			 SDP_USE_BOTH);
	/* the client list is its own */
	assert_int_equal(match(SDP_ROLE_CLIENT, "x", "10.0.0.5", 22),
			 SDP_USE_NONE);
	assert_int_equal(sdp_conf_match(&conf, SDP_ROLE_CLIENT, "x", &a, 5000,
					&r), SDP_USE_SDP);
	assert_int_equal(r->line, 4);
	r = (const struct sdp_rule *)&a;
	assert_int_equal(sdp_conf_match(&conf, SDP_ROLE_CLIENT, "x", &a, 1,
					&r), SDP_USE_NONE);
	assert_null(r);
	/* the server list is its own too */
	parse_ok("use sdp client * *:*");
	assert_int_equal(match(SDP_ROLE_SERVER, "x", "10.0.0.5", 1),
			 SDP_USE_NONE);
	assert_int_equal(match(SDP_ROLE_CLIENT, "x", "10.0.0.5", 1),
			 SDP_USE_SDP);
}

static void test_programs(void **state)
{
	(void)state;
	parse_ok("use sdp client iperf* *:*\n"
		 "use tcp client netperf *:*\n"
		 "use both client ?sh *:*\n"
		 "use sdp client [a-c]test *:*\n");
	assert_int_equal(match(SDP_ROLE_CLIENT, "iperf", "1.2.3.4", 1),
			 SDP_USE_SDP);
	assert_int_equal(match(SDP_ROLE_CLIENT, "iperf3", "1.2.3.4", 1),
			 SDP_USE_SDP);
	assert_int_equal(match(SDP_ROLE_CLIENT, "netperf", "1.2.3.4", 1),
			 SDP_USE_TCP);
	assert_int_equal(match(SDP_ROLE_CLIENT, "netperf2", "1.2.3.4", 1),
			 SDP_USE_NONE);
	assert_int_equal(match(SDP_ROLE_CLIENT, "ssh", "1.2.3.4", 1),
			 SDP_USE_BOTH);
	assert_int_equal(match(SDP_ROLE_CLIENT, "bash", "1.2.3.4", 1),
			 SDP_USE_NONE);
	assert_int_equal(match(SDP_ROLE_CLIENT, "btest", "1.2.3.4", 1),
			 SDP_USE_SDP);
	assert_int_equal(match(SDP_ROLE_CLIENT, "dtest", "1.2.3.4", 1),
			 SDP_USE_NONE);
	assert_int_equal(match(SDP_ROLE_CLIENT, "xiperf", "1.2.3.4", 1),
			 SDP_USE_NONE);
	/* no program name: only * */
	assert_int_equal(sdp_conf_match(&conf, SDP_ROLE_CLIENT, NULL, NULL, 1,
					NULL), SDP_USE_NONE);
	/* a 63-byte pattern is the longest */
	parse_ok("use sdp client "
		 "abcdefghijabcdefghijabcdefghijabcdefghijabcdefghijabcdefghij"
		 "abc *:*");
	assert_int_equal(strlen(conf.rules[SDP_ROLE_CLIENT][0].program), 63);
}

static void test_errors_lines(void **state)
{
	(void)state;
	parse_bad("usee sdp server * *:*", 1, "unknown keyword 'usee'");
	parse_bad("# c\n\nUse sdp server * *:*", 3, "'Use'");
	parse_bad("use sdp server * *:*\nlogg\n", 2, "'logg'");
	parse_bad("use sdp server * *:*\r\nuse sdp server * *:*\r\nx\r\n", 3,
		  "'x'");
	/* a bad line after good ones fails the whole file */
	parse_bad("use sdp server * *:*\nuse sdp client * *:*\n"
		  "log destination stderr\nuse sdp server * *:99999\n", 4,
		  "'99999'");
}

static void test_errors_use(void **state)
{
	(void)state;
	parse_bad("use", 1, "after 'use'");
	parse_bad("use tpc server * *:*", 1, "unknown use 'tpc'");
	parse_bad("use SDP server * *:*", 1, "'SDP'");
	parse_bad("use sdp", 1, "missing server|client after 'sdp'");
	parse_bad("use sdp srv * *:*", 1, "unknown role 'srv'");
	parse_bad("use sdp server", 1, "missing program after 'server'");
	parse_bad("use sdp server iperf", 1, "missing ADDR:PORT after "
		  "'iperf'");
	parse_bad("use sdp server * *:* extra", 1, "extra field 'extra'");
	parse_bad("use sdp server * *:* # ok\nuse sdp client * *:* a b c d e "
		  "f g h i j k l m n o p q r s t", 2, "extra field 'a'");
	parse_bad("use sdp client "
		  "abcdefghijabcdefghijabcdefghijabcdefghijabcdefghijabcdefghij"
		  "abcd *:*", 1, "program pattern too long 'abcdefghij");
}

static void test_errors_addr(void **state)
{
	(void)state;
	parse_bad("use sdp server * *", 1, "missing ':PORT' in '*'");
	parse_bad("use sdp server * 10.0.0.1", 1, "in '10.0.0.1'");
	parse_bad("use sdp server * 10.0.0:80", 1, "bad address '10.0.0'");
	parse_bad("use sdp server * host:80", 1, "bad address 'host'");
	parse_bad("use sdp server * :80", 1, "bad address ''");
	parse_bad("use sdp server * fe80::1:80", 1, "bad address "
		  "'fe80::1:80'");
	parse_bad("use sdp server * [10.0.0.1]:80", 1, "bad address "
		  "'10.0.0.1'");
	parse_bad("use sdp server * [fe80::1:80", 1, "bad address "
		  "'[fe80::1:80'");
	parse_bad("use sdp server * [fe80::1]", 1, "missing ':PORT' in "
		  "'[fe80::1]'");
	parse_bad("use sdp server * [fe80::1]x:80", 1, "bad address "
		  "'[fe80::1]x'");
	parse_bad("use sdp server * [fe80::1%eth0]:80", 1, "bad address "
		  "'fe80::1%eth0'");
	parse_bad("use sdp server * [fe80::1/64]:80", 1, "bad address "
		  "'[fe80::1/64]'");
	parse_bad("use sdp server * */8:80", 1, "bad address '*/8'");
	parse_bad("use sdp server * 10.0.0.0/33:80", 1, "prefix too long "
		  "'10.0.0.0/33'");
	parse_bad("use sdp server * 10.0.0.0/99999999999999999999999:80", 1,
		  "prefix too long '10.0.0.0/9999");
	parse_bad("use sdp server * [fe80::]/129:80", 1, "prefix too long "
		  "'fe80::/129'");
	parse_bad("use sdp server * 10.0.0.0/:80", 1, "bad prefix length "
		  "'10.0.0.0/'");
	parse_bad("use sdp server * 10.0.0.0/024:80", 1, "bad prefix length "
		  "'10.0.0.0/024'");
	parse_bad("use sdp server * 10.0.0.0/-8:80", 1, "bad prefix length "
		  "'10.0.0.0/-8'");
}

static void test_errors_port(void **state)
{
	(void)state;
	parse_bad("use sdp server * *:", 1, "bad port ''");
	parse_bad("use sdp server * *:65536", 1, "bad port '65536'");
	parse_bad("use sdp server * *:99999999999999999999", 1,
		  "bad port '99999999999999999999'");
	parse_bad("use sdp server * *:http", 1, "bad port 'http'");
	parse_bad("use sdp server * *:+80", 1, "bad port '+80'");
	parse_bad("use sdp server * *:**", 1, "bad port '**'");
	parse_bad("use sdp server * *:90-80", 1, "bad port range '90-80'");
	parse_bad("use sdp server * *:80-65536", 1, "bad port range "
		  "'80-65536'");
	parse_bad("use sdp server * *:80-", 1, "bad port range '80-'");
	parse_bad("use sdp server * *:-80", 1, "bad port range '-80'");
	parse_bad("use sdp server * *:1-2-3", 1, "bad port range '1-2-3'");
	parse_bad("use sdp server * *:*-80", 1, "bad port range '*-80'");
	parse_bad("use sdp server * [fe80::1]:80:90", 1, "bad port '80:90'");
	/* the address is checked first */
	parse_bad("use sdp server * 10.0.0.0/33:70000", 1, "'10.0.0.0/33'");
}

static void test_errors_log(void **state)
{
	(void)state;
	parse_bad("log destination", 1, "after 'destination'");
	parse_bad("log destination stdout", 1, "unknown destination 'stdout'");
	parse_bad("log destination file", 1, "missing path after 'file'");
	parse_bad("log destination file # no path", 1, "after 'file'");
	parse_bad("log min-level", 1, "after 'min-level'");
	parse_bad("log min-level 0", 1, "bad min-level '0'");
	parse_bad("log min-level 10", 1, "bad min-level '10'");
	parse_bad("log min-level x", 1, "bad min-level 'x'");
	parse_bad("log min-level 3 min-level 4", 1, "duplicate 'min-level'");
	parse_bad("log destination stderr destination syslog", 1,
		  "duplicate 'destination'");
	parse_bad("log level 3", 1, "unknown log option 'level'");
	parse_bad("log destination stderr min-level 3 extra", 1,
		  "unknown log option 'extra'");
}

static void test_errors_limits(void **state)
{
	char line[SDP_CONF_LINE_MAX + 64], path[300];
	static char big[(SDP_CONF_RULES_MAX + 2) * 32];
	unsigned int i, n = 0;

	(void)state;
	/* a line of exactly SDP_CONF_LINE_MAX bytes is fine, CR aside */
	memset(line, ' ', sizeof(line));
	memcpy(line, "use sdp server * *:*", 20);
	strcpy(line + SDP_CONF_LINE_MAX, "\r\n");
	parse_ok(line);
	assert_int_equal(conf.n[SDP_ROLE_SERVER], 1);
	strcpy(line + SDP_CONF_LINE_MAX, " \n");
	parse_bad(line, 1, "line too long");
	memmove(line + 4, line, SDP_CONF_LINE_MAX + 3);
	memcpy(line, "#\n\n\n", 4);
	parse_bad(line, 4, "line too long");

	assert_int_equal(sdp_conf_parse(&conf, "use sdp\0 server * *:*", 21,
					&i, path, sizeof(path)), -1);
	assert_int_equal(i, 1);
	assert_non_null(strstr(path, "NUL"));

	memset(path, 'a', sizeof(path));
	path[0] = '/';
	snprintf(line, sizeof(line), "log destination file %.*s", 255, path);
	parse_ok(line);
	assert_int_equal(strlen(conf.log_file), 255);
	snprintf(line, sizeof(line), "log destination file %.*s", 256, path);
	parse_bad(line, 1, "log file path too long '/aaaa");

	for (i = 0; i < SDP_CONF_RULES_MAX; i++)
		n += (unsigned int)sprintf(big + n, "use sdp client * *:%u\n",
					   i);
	n += (unsigned int)sprintf(big + n, "use sdp server * *:1\n");
	parse_ok(big);
	assert_int_equal(conf.n[SDP_ROLE_CLIENT], SDP_CONF_RULES_MAX);
	assert_int_equal(conf.rules[SDP_ROLE_CLIENT][255].port_lo, 255);
	sprintf(big + n, "use sdp connect * *:1\n");
	parse_bad(big, SDP_CONF_RULES_MAX + 2, "too many rules");
}

static void test_err_buffers(void **state)
{
	char err[8];
	unsigned int line;

	(void)state;
	/* no err, no line: still fails */
	assert_int_equal(sdp_conf_parse(&conf, "bad", 3, NULL, NULL, 0), -1);
	/* a short buffer is truncated, terminated */
	memset(err, 'x', sizeof(err));
	assert_int_equal(sdp_conf_parse(&conf, "bad", 3, &line, err,
					sizeof(err)), -1);
	assert_int_equal(line, 1);
	assert_int_equal(strlen(err), sizeof(err) - 1);
	/* success clears err */
	assert_int_equal(sdp_conf_parse(&conf, "", 0, &line, err,
					sizeof(err)), 0);
	assert_string_equal(err, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_use_keywords),
		cmocka_unit_test(test_ports),
		cmocka_unit_test(test_addresses),
		cmocka_unit_test(test_log),
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_first_match),
		cmocka_unit_test(test_programs),
		cmocka_unit_test(test_errors_lines),
		cmocka_unit_test(test_errors_use),
		cmocka_unit_test(test_errors_addr),
		cmocka_unit_test(test_errors_port),
		cmocka_unit_test(test_errors_log),
		cmocka_unit_test(test_errors_limits),
		cmocka_unit_test(test_err_buffers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * libsdp.conf, the rules file of OFED's libsdp (its config_parser.y), read
 * by libibgw_preload.so:
 *
 *   # comment
 *   log [destination stderr|syslog|file PATH] [min-level 1-9]
 *   use tcp|sdp|both server|listen|client|connect PROGRAM ADDR:PORT
 *
 * PROGRAM is an fnmatch(3) pattern on the program's short name
 * (program_invocation_short_name) or *; ADDR is an IPv4 or IPv6 address
 * with an optional /PREFIX, or *; IPv6 addresses in brackets
 * ([fe80::1]/64:80) so that the port separator is plain; PORT is a
 * number, a range LOW-HIGH, or *.  server and listen are one list (rules
 * for bind/listen), client and connect the other (rules for connect);
 * the first rule of a list that matches wins.  Keywords are lower case,
 * fields separated by blanks, a line at most SDP_CONF_LINE_MAX bytes.
 *
 * Pure parser and matcher: no I/O beyond reading the text it is given,
 * nothing logged; errors come back with the line number.
 */
#ifndef IBGW_SDP_CONF_H
#define IBGW_SDP_CONF_H

#include <stddef.h>
#include <stdint.h>

#include "inet/addr.h"

#define SDP_CONF_LINE_MAX	1024
#define SDP_CONF_RULES_MAX	256	/* per list */

enum sdp_use {
	SDP_USE_NONE = 0,	/* no rule matched: leave the socket alone */
	SDP_USE_TCP,
	SDP_USE_SDP,
	SDP_USE_BOTH,
};

enum sdp_role {
	SDP_ROLE_SERVER = 0,	/* bind/listen */
	SDP_ROLE_CLIENT = 1,	/* connect */
};

enum sdp_log_dest {
	SDP_LOG_NONE = 0,	/* no log line: nothing logged */
	SDP_LOG_STDERR,
	SDP_LOG_SYSLOG,
	SDP_LOG_FILE,
};

struct sdp_rule {
	enum sdp_use use;
	char program[64];		/* fnmatch pattern; "*" any */
	int any_addr;			/* ADDR was * */
	struct inet_prefix addr;	/* else this (plen full if none) */
	uint16_t port_lo, port_hi;	/* * is 0-65535 */
	unsigned int line;
};

struct sdp_conf {
	struct sdp_rule rules[2][SDP_CONF_RULES_MAX];	/* by sdp_role */
	unsigned int n[2];
	enum sdp_log_dest log_dest;
	char log_file[256];
	int log_level;			/* 1-9; 0: not given */
};

/*
 * Parse text (len bytes, not necessarily NUL-terminated) into *conf
 * (emptied first).  0, or -1 with *err_line the first bad line's number
 * (1-based) and err a one-line reason ("unknown keyword 'usee'", "bad
 * port range '90-80'", ...).  A bad line makes the whole file fail: the
 * preload then reports file:line and treats every socket as TCP.
 */
int sdp_conf_parse(struct sdp_conf *conf, const char *text, size_t len,
		   unsigned int *err_line, char *err, size_t errlen);

/*
 * The first rule of role's list matching program (short name), the
 * address a and port (host order) -- the bind address for server rules,
 * the destination for client rules.  A rule's address with a prefix
 * matches addresses inside it; an IPv4 rule also matches the
 * IPv4-mapped IPv6 form ::ffff:a.b.c.d.  SDP_USE_NONE when none does.
 * *rule (may be NULL) is set to the matching rule.
 */
enum sdp_use sdp_conf_match(const struct sdp_conf *conf, enum sdp_role role,
			    const char *program, const struct inet_addr *a,
			    uint16_t port, const struct sdp_rule **rule);

const char *sdp_use_name(enum sdp_use u);	/* "tcp", "sdp", "both" */

#endif

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Partitions of the software subnet, read from a file in OpenSM's
 * partitions.conf syntax (OpenSM doc/partition-config.txt), and the P_Key
 * tables they give each port.
 *
 * This module owns the text parser, the parsed configuration and the
 * membership rules.  It does not log: every function reports failure by its
 * return value, and the parser collects every error it finds (up to
 * PRTN_MAX_ERRORS) into the caller's buffer, one line each, separated by
 * '\n':
 *
 *	FILE:LINE: what is wrong
 *
 * Failures that have no line (file cannot be opened, too large) read
 * "FILE: what is wrong".  On failure the output configuration is empty.
 * Exceeding a hard limit (PRTN_MAX_PARTITIONS, PRTN_MAX_MEMBERS,
 * PRTN_MAX_MGROUPS, PRTN_FILE_MAX) is reported once and ends the parse.
 *
 * Syntax, as OpenSM reads it:
 *
 *	# comment to end of line, anywhere
 *	Name[=PKey][,flag[=value]]... : member[=full|limited|both], ... ;
 *
 *  - The header, up to ':', is on one line (OpenSM requires it); the member
 *    list may span lines and ends at ';'.  Members are separated by ',' or
 *    by a line end; empty elements (",,") are ignored.  Several definitions
 *    may share a line.  Blanks are allowed around '=', ',', ':' and ';'.
 *  - Flags (names matched without regard to case; OpenSM's spellings Q_Key,
 *    TClass, FlowLabel work): ipoib, indx0, defmember=full|limited|both,
 *    mtu=1..5, rate=2..24, sl=0..15, scope=1..15 (repeatable: one group per
 *    scope, as OpenSM), q_key|qkey=1..0xffffffff, tclass=0..255,
 *    flowlabel=0..0xfffff.
 *  - Members: ALL, ALL_CAS, ALL_SWITCHES, ALL_ROUTERS, SELF, NONE (no
 *    member), a port GUID (0x-prefixed hex or decimal, non-zero), or, our
 *    extension, a node name: [A-Za-z_][A-Za-z0-9_.-]*, at most
 *    PRTN_NAME_MAX - 1 characters.  A member word starting with a digit is
 *    a GUID.  Keywords are exact and upper case; "all" or "Self" is an
 *    error rather than a node name.
 *  - Membership words may be abbreviated as OpenSM allows ("limi", "f").
 *    A member without one takes the definition's defmember, which is
 *    "limited" unless given (OpenSM's default).
 *  - "mgid=GID[,flag=value]..." inside a member list defines a multicast
 *    group and, as in OpenSM, takes the rest of the line (up to ';').  Its
 *    flags are mtu, rate, sl, scope, q_key, tclass, flowlabel; it inherits
 *    the partition's mtu, rate, sl, scope, flowlabel and an explicit Q_Key
 *    (not tclass, as OpenSM).  The GID must be multicast.  For IP groups
 *    (signature 0x401b/0x601b) the P_Key bits must be 0 or the partition's
 *    full P_Key, and are filled in; rate and mtu must equal the
 *    partition's; Q_Key defaults to 0x0B1B.  An mgid given twice is an
 *    error.
 *
 * Where ibgw is stricter than OpenSM (which warns, guesses and goes on),
 * every case below is an error: unknown flags or membership words,
 * abbreviated flag names or keywords, out-of-range values (OpenSM accepts
 * any non-zero mtu or rate), a value on ipoib/indx0, a flag given twice in
 * one header (except scope), numbers with a leading zero (octal to OpenSM),
 * a missing final ';', a file with no definitions (OpenSM then falls back to
 * its built-in default), NUL bytes, control characters, non-ASCII bytes
 * outside comments, lines of PRTN_LINE_MAX characters or more.
 *
 * Names and P_Keys:
 *  - A name is required, starts with a letter or '_', and is made of
 *    [A-Za-z0-9_.-], at most PRTN_NAME_MAX - 1 characters.  (OpenSM takes
 *    a leading-digit name as the P_Key and names the partition by its hex
 *    value; we reject it.)
 *  - A P_Key is 0x0001..0xffff in the file.  As in OpenSM only the low 15
 *    bits are the key: 0xffff is 0x7fff and 0x8001 is 0x0001.  A key whose
 *    low 15 bits are zero (0, 0x8000) is an error (OpenSM reads 0 as
 *    "generate one").
 *  - A P_Key given again merges into the earlier definition (OpenSM's way
 *    of splitting a partition); the names must agree.  Members are
 *    appended; ipoib, indx0 and scopes accumulate; mtu, rate, sl, q_key,
 *    tclass, flowlabel given in both with different values is an error.
 *  - A name given again with a different P_Key is an error (OpenSM allows
 *    it; it is nearly always a typing mistake).
 *  - A definition without P_Key joins the partition of that name, else gets
 *    the lowest unused key counting up from 0x0001 as OpenSM does.  A later
 *    explicit use of a key assigned that way is an error (OpenSM silently
 *    merges the two).
 *
 * The default partition.  As in OpenSM, a parsed file always yields
 * parts[0] = "Default", P_Key 0x7fff, members ALL=limited, SELF=full (line
 * 0), no ipoib; definitions of 0x7fff in the file merge into it and may
 * rename it.  prtn_conf_default() is the configuration without a file:
 * Default=0x7fff,ipoib : ALL=full, SELF=full with the ipoib group defaults
 * (Q_Key 0x0B1B, mtu 4 = 2048, rate 3 = 10 Gb/s, sl 0, scope 2).
 * Partitions whose member list is empty are kept (OpenSM drops partitions
 * with no port present in the subnet at run time, which the caller knows).
 *
 * Membership.  For a port the member entries of a partition are taken in
 * file order and the last one that matches decides, because that is what
 * OpenSM's port tables end up holding (every add replaces the port's
 * earlier entry).  "both" is OpenSM's allow_both_pkeys meaning: the port
 * gets the full and the limited key, two table entries.  Every node of the
 * software subnet is a CA, so ALL_CAS matches every port and ALL_SWITCHES,
 * ALL_ROUTERS none; SELF matches the SM's port (is_sm).
 *
 * P_Key table order: index 0 is the default partition's key (left 0, an
 * empty slot, if the port is not a member), then the other partitions in
 * the order of their first definition in the file.  OpenSM orders the rest
 * by its internal map; file order is deterministic and readable.  A
 * partition with indx0 takes index 0 for its members and the default key
 * follows it; if a port is in several indx0 partitions the last in the file
 * wins.  (OpenSM applies indx0 per definition; we apply it to the whole
 * partition.)  "both" puts the full key before the limited one.
 */
#ifndef IBGW_PARTITIONS_H
#define IBGW_PARTITIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PRTN_NAME_MAX		64	/* names, with the NUL */
#define PRTN_LINE_MAX		4096	/* a line is shorter than this */
#define PRTN_FILE_MAX		(1024 * 1024)
#define PRTN_MAX_PARTITIONS	1024
#define PRTN_MAX_MEMBERS	1024	/* per partition, all definitions */
#define PRTN_MAX_MGROUPS	256	/* in the whole file */
#define PRTN_MAX_ERRORS		20	/* then "too many errors" */

#define PRTN_PKEY_MASK		0x7fff
#define PRTN_PKEY_FULL		0x8000
#define PRTN_DEFAULT_PKEY	0x7fff
#define PRTN_DEFAULT_QKEY	0x0b1bu
#define PRTN_DEFAULT_MTU	4	/* 2048 bytes */
#define PRTN_DEFAULT_RATE	3	/* 10 Gb/s */
#define PRTN_DEFAULT_SL		0
#define PRTN_DEFAULT_SCOPE	2	/* link-local */

enum prtn_member_kind {
	PRTN_M_ALL,
	PRTN_M_ALL_CAS,
	PRTN_M_ALL_SWITCHES,
	PRTN_M_ALL_ROUTERS,
	PRTN_M_SELF,
	PRTN_M_GUID,
	PRTN_M_NAME,
};

/* A bit set: BOTH is LIMITED | FULL; 0 is "not a member". */
enum prtn_membership {
	PRTN_NONE = 0,
	PRTN_LIMITED = 1,
	PRTN_FULL = 2,
	PRTN_BOTH = 3,
};

struct prtn_member {
	enum prtn_member_kind kind;
	enum prtn_membership membership;	/* defmember already applied */
	uint64_t guid;				/* PRTN_M_GUID */
	char name[PRTN_NAME_MAX];		/* PRTN_M_NAME */
	unsigned int line;			/* 0: implicit */
};

struct prtn_mgroup {
	uint8_t mgid[16];	/* as given; IP groups get the P_Key filled */
	uint8_t mtu, rate, sl, tclass;
	uint16_t scope_mask;	/* bit n: a group with scope n */
	uint32_t qkey;
	uint32_t flow_label;
	unsigned int line;
};

/* Which flags the file gave explicitly (struct prtn.set). */
#define PRTN_F_IPOIB		(1u << 0)
#define PRTN_F_INDX0		(1u << 1)
#define PRTN_F_DEFMEMBER	(1u << 2)
#define PRTN_F_MTU		(1u << 3)
#define PRTN_F_RATE		(1u << 4)
#define PRTN_F_SL		(1u << 5)
#define PRTN_F_SCOPE		(1u << 6)
#define PRTN_F_QKEY		(1u << 7)
#define PRTN_F_TCLASS		(1u << 8)
#define PRTN_F_FLOWLABEL	(1u << 9)

struct prtn {
	char name[PRTN_NAME_MAX];
	uint16_t pkey;			/* 15-bit: 0x0001..0x7fff */
	bool ipoib;			/* has an IPoIB broadcast group */
	uint8_t mtu, rate, sl, tclass;	/* of the broadcast group */
	uint16_t scope_mask;		/* bit n: scope n; default bit 2 */
	uint32_t qkey;
	uint32_t flow_label;
	bool indx0;
	enum prtn_membership defmember;	/* of the first definition */
	bool auto_pkey;			/* P_Key generated, not given */
	unsigned int set;		/* PRTN_F_* given in the file */
	unsigned int line;		/* first definition; 0: implicit */
	struct prtn_member *members;
	size_t nmembers;
	struct prtn_mgroup *mgroups;
	size_t nmgroups;
};

struct prtn_conf {
	struct prtn *parts;	/* parts[0] is the default partition */
	size_t nparts;
};

/*
 * Parse len bytes of text (need not be NUL-terminated) named filename in
 * messages.  Returns 0 and fills *out, or -1 with *out empty and the errors
 * in err (always NUL-terminated when errlen > 0).
 */
int prtn_conf_parse(const char *text, size_t len, const char *filename,
		    struct prtn_conf *out, char *err, size_t errlen);

/*
 * Read and parse a file of at most PRTN_FILE_MAX bytes.  If it cannot be
 * opened, -1 with errno set (ENOENT: OpenSM would use prtn_conf_default()).
 */
int prtn_conf_load(const char *path, struct prtn_conf *out, char *err,
		   size_t errlen);

/* The configuration without a file.  -1 only if out of memory. */
int prtn_conf_default(struct prtn_conf *out);

void prtn_conf_free(struct prtn_conf *c);

/* The partition with this P_Key (full bit ignored), or NULL. */
const struct prtn *prtn_conf_find(const struct prtn_conf *c, uint16_t pkey);

/*
 * Membership of one port: node_name (may be NULL), port_guid, is_sm (the
 * SM's own port, "SELF").  Returns PRTN_NONE (0) or the membership; then
 * *pkey_out (if not NULL) is the P_Key with the full bit set for FULL and
 * BOTH, clear for LIMITED.
 */
int prtn_membership(const struct prtn *p, const char *node_name,
		    uint64_t port_guid, int is_sm, uint16_t *pkey_out);

/*
 * Build a port's P_Key table (see "P_Key table order" above).  Writes at
 * most max entries and their number to *n.  Returns 0, or -1 if the table
 * needed more than max entries (the first max are written).
 */
int prtn_pkey_table(const struct prtn_conf *c, const char *node_name,
		    uint64_t port_guid, int is_sm, uint16_t *table,
		    unsigned int max, unsigned int *n);

#endif

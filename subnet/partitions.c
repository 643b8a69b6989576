/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * OpenSM partitions.conf parser and P_Key table builder.  The grammar and
 * the choices where ibgw differs from OpenSM are described in partitions.h.
 *
 * The parser works on the text in place: a byte check first (so that
 * everything after it sees printable ASCII outside comments, and bounded
 * lines), then a hand-written descent over characters, because line ends
 * are part of the grammar (the header is on one line, an mgid takes the rest
 * of its line, a line end separates members).  After an error it skips to
 * the next separator or ';' and goes on, so one run reports every error.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "subnet/partitions.h"

#define WORD_SHOW	40	/* at most this much of a word in a message */

struct span {
	const char *s;
	size_t len;
};

/* One definition (header up to ':') while its member list is read. */
struct def {
	unsigned int line;
	bool bad;		/* bad header: members are checked, not kept */
	char name[PRTN_NAME_MAX];
	bool has_pkey;
	uint16_t pkey;
	enum prtn_membership defmember;
};

struct parser {
	const char *buf;
	size_t len, pos;
	unsigned int line;
	char file[256];
	char *err;
	size_t errlen, errused;
	unsigned int nerr;
	bool stop;		/* too many errors, a hard limit, no memory */
	struct prtn_conf conf;
	uint16_t next_auto;	/* OpenSM's global_pkey_counter */
	size_t nmgroups;	/* in all partitions */
};

/* --- errors ------------------------------------------------------------- */

static void err_append(struct parser *P, const char *msg)
{
	size_t room, n;

	if (!P->err || P->errlen == 0)
		return;
	if (P->errused > 0 && P->errused + 1 < P->errlen)
		P->err[P->errused++] = '\n';
	room = P->errlen - P->errused;
	if (room <= 1) {
		P->err[P->errlen - 1] = '\0';
		return;
	}
	n = strlen(msg);
	if (n >= room)
		n = room - 1;
	memcpy(P->err + P->errused, msg, n);
	P->errused += n;
	P->err[P->errused] = '\0';
}

static void perr(struct parser *P, unsigned int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void perr(struct parser *P, unsigned int line, const char *fmt, ...)
{
	char msg[512];
	int off;
	va_list ap;

	if (P->stop)
		return;
	if (P->nerr == PRTN_MAX_ERRORS) {
		snprintf(msg, sizeof(msg), "%s:%u: too many errors, giving up",
			 P->file, line);
		err_append(P, msg);
		P->nerr++;
		P->stop = true;
		return;
	}
	off = snprintf(msg, sizeof(msg), "%s:%u: ", P->file, line);
	if (off < 0 || (size_t)off >= sizeof(msg))
		off = 0;
	va_start(ap, fmt);
	vsnprintf(msg + off, sizeof(msg) - (size_t)off, fmt, ap);
	va_end(ap);
	err_append(P, msg);
	P->nerr++;
}

static void oom(struct parser *P)
{
	perr(P, P->line, "out of memory");
	P->stop = true;
}

/* A word fit for a one-line message (the byte check made it printable). */
static const char *show(struct span w, char out[WORD_SHOW + 4])
{
	size_t n = w.len > WORD_SHOW ? WORD_SHOW - 3 : w.len;

	memcpy(out, w.s, n);
	if (w.len > WORD_SHOW) {
		memcpy(out + n, "...", 3);
		n += 3;
	}
	out[n] = '\0';
	return out;
}

static void set_filename(struct parser *P, const char *filename)
{
	size_t i;

	snprintf(P->file, sizeof(P->file), "%s",
		 filename ? filename : "(input)");
	for (i = 0; P->file[i]; i++)
		if ((unsigned char)P->file[i] < 0x20 || P->file[i] == 0x7f)
			P->file[i] = '?';
}

/* --- byte check --------------------------------------------------------- */

/*
 * Reject what is not a text file before reading any syntax: NUL and other
 * control bytes anywhere, non-ASCII outside comments (UTF-8 comments are
 * fine), and over-long lines.  One complaint per line.
 */
static int check_bytes(struct parser *P)
{
	unsigned int line = 1;
	size_t i, col = 0;
	bool comment = false, told = false;

	for (i = 0; i < P->len && !P->stop; i++) {
		unsigned char c = (unsigned char)P->buf[i];
		bool bad;

		if (c == '\n') {
			line++;
			col = 0;
			comment = told = false;
			continue;
		}
		if (++col == PRTN_LINE_MAX && !told) {
			perr(P, line, "line longer than %d characters",
			     PRTN_LINE_MAX - 1);
			told = true;
		}
		if (c == '#')
			comment = true;
		if (c == '\t' || c == '\r')
			bad = false;
		else if (c < 0x20 || c == 0x7f)
			bad = true;
		else
			bad = c >= 0x80 && !comment;
		if (bad && !told) {
			perr(P, line, "invalid byte 0x%02x (not a text file?)",
			     c);
			told = true;
		}
	}
	return P->nerr ? -1 : 0;
}

/* --- characters and words ----------------------------------------------- */

static int peek(const struct parser *P)
{
	return P->pos < P->len ? (unsigned char)P->buf[P->pos] : -1;
}

/* Blanks and a comment, never the line end. */
static void skip_blank(struct parser *P)
{
	for (;;) {
		int c = peek(P);

		if (c == ' ' || c == '\t' || c == '\r') {
			P->pos++;
		} else if (c == '#') {
			while (peek(P) != -1 && peek(P) != '\n')
				P->pos++;
		} else {
			return;
		}
	}
}

static bool is_delim(int c)
{
	return c == -1 || c == ' ' || c == '\t' || c == '\r' || c == '\n' ||
	       c == '=' || c == ',' || c == ':' || c == ';' || c == '#';
}

static struct span read_word(struct parser *P)
{
	struct span w = { P->buf + P->pos, 0 };

	while (!is_delim(peek(P))) {
		P->pos++;
		w.len++;
	}
	return w;
}

static bool word_is(struct span w, const char *s)
{
	return strlen(s) == w.len && memcmp(w.s, s, w.len) == 0;
}

static bool word_is_nocase(struct span w, const char *s)
{
	return strlen(s) == w.len && strncasecmp(w.s, s, w.len) == 0;
}

/* Skip to the next ',' or line end or ';' (left unread): member recovery. */
static void skip_element(struct parser *P)
{
	for (;;) {
		int c = peek(P);

		if (c == -1 || c == ',' || c == '\n' || c == ';')
			return;
		if (c == '#')
			skip_blank(P);
		else
			P->pos++;
	}
}

/* Skip past the next ';' (or to the end): definition recovery. */
static void skip_definition(struct parser *P)
{
	for (;;) {
		int c = peek(P);

		if (c == -1)
			return;
		P->pos++;
		if (c == ';')
			return;
		if (c == '\n')
			P->line++;
		else if (c == '#')
			skip_blank(P);
	}
}

/*
 * Unsigned number: "0x" and 1..16 hex digits, or decimal without a leading
 * zero (OpenSM's strtoul(.., 0) would read it as octal).  No sign, no
 * trailing text, no overflow.
 */
static bool parse_number(struct span w, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;
	size_t i;

	if (w.len > 2 && w.s[0] == '0' && (w.s[1] == 'x' || w.s[1] == 'X')) {
		if (w.len - 2 > 16)
			return false;
		for (i = 2; i < w.len; i++) {
			char c = w.s[i];
			unsigned int d;

			if (c >= '0' && c <= '9')
				d = (unsigned int)(c - '0');
			else if (c >= 'a' && c <= 'f')
				d = (unsigned int)(c - 'a' + 10);
			else if (c >= 'A' && c <= 'F')
				d = (unsigned int)(c - 'A' + 10);
			else
				return false;
			v = v << 4 | d;
		}
	} else {
		if (w.len == 0 || (w.s[0] == '0' && w.len > 1))
			return false;
		for (i = 0; i < w.len; i++) {
			unsigned int d;

			if (w.s[i] < '0' || w.s[i] > '9')
				return false;
			d = (unsigned int)(w.s[i] - '0');
			if (v > (UINT64_MAX - d) / 10)
				return false;
			v = v * 10 + d;
		}
	}
	if (v > max)
		return false;
	*out = v;
	return true;
}

/* full, limited, both, or a non-empty prefix of one (OpenSM: "limi"). */
static enum prtn_membership parse_membership(struct span w)
{
	static const struct {
		const char *word;
		enum prtn_membership m;
	} words[] = {
		{ "full", PRTN_FULL },
		{ "limited", PRTN_LIMITED },
		{ "both", PRTN_BOTH },
	};
	size_t i;

	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (w.len > 0 && w.len <= strlen(words[i].word) &&
		    memcmp(w.s, words[i].word, w.len) == 0)
			return words[i].m;
	return PRTN_NONE;
}

static bool is_name_start(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool is_name_char(char c)
{
	return is_name_start(c) || (c >= '0' && c <= '9') || c == '-' ||
	       c == '.';
}

/* Checks a partition or node name; what names it in messages. */
static bool check_name(struct parser *P, struct span w, const char *what)
{
	char sh[WORD_SHOW + 4];
	size_t i;

	if (w.len >= PRTN_NAME_MAX) {
		perr(P, P->line, "%s '%s' is too long (at most %d characters)",
		     what, show(w, sh), PRTN_NAME_MAX - 1);
		return false;
	}
	if (!is_name_start(w.s[0])) {
		perr(P, P->line, "%s '%s' must start with a letter or '_'",
		     what, show(w, sh));
		return false;
	}
	for (i = 1; i < w.len; i++) {
		if (!is_name_char(w.s[i])) {
			perr(P, P->line, "invalid character '%c' in %s '%s'",
			     w.s[i], what, show(w, sh));
			return false;
		}
	}
	return true;
}

static void copy_word(char *dst, struct span w)
{
	memcpy(dst, w.s, w.len);
	dst[w.len] = '\0';
}

/* --- flags -------------------------------------------------------------- */

struct flag_desc {
	const char *name;
	unsigned int bit;
	bool mgroup;		/* also a flag of an mgid line */
	uint64_t min, max;
	const char *range;
};

static const struct flag_desc flag_table[] = {
	{ "ipoib", PRTN_F_IPOIB, false, 0, 0, NULL },
	{ "indx0", PRTN_F_INDX0, false, 0, 0, NULL },
	{ "defmember", PRTN_F_DEFMEMBER, false, 0, 0, "full, limited or both" },
	{ "mtu", PRTN_F_MTU, true, 1, 5, "1..5" },
	{ "rate", PRTN_F_RATE, true, 2, 24, "2..24" },
	{ "sl", PRTN_F_SL, true, 0, 15, "0..15" },
	{ "scope", PRTN_F_SCOPE, true, 1, 15, "1..15" },
	{ "q_key", PRTN_F_QKEY, true, 1, 0xffffffffu, "0x1..0xffffffff" },
	{ "qkey", PRTN_F_QKEY, true, 1, 0xffffffffu, "0x1..0xffffffff" },
	{ "tclass", PRTN_F_TCLASS, true, 0, 255, "0..255" },
	{ "flowlabel", PRTN_F_FLOWLABEL, true, 0, 0xfffff, "0..0xfffff" },
};

/* The values a header or an mgid line sets. */
struct flagvals {
	unsigned int set;
	bool ipoib, indx0;
	enum prtn_membership defmember;
	uint8_t mtu, rate, sl, tclass;
	uint16_t scope_mask;
	uint32_t qkey, flow_label;
};

/*
 * One "flag[=value]"; val.s is NULL when there is no '='.  mgroup: only the
 * flags an mgid line takes.  Returns false on error (reported).
 */
static bool apply_flag(struct parser *P, struct flagvals *fv, bool mgroup,
		       struct span flag, struct span val)
{
	char sh[WORD_SHOW + 4], sv[WORD_SHOW + 4];
	const struct flag_desc *d = NULL;
	uint64_t v = 0;
	size_t i;

	for (i = 0; i < sizeof(flag_table) / sizeof(flag_table[0]); i++)
		if (word_is_nocase(flag, flag_table[i].name))
			d = &flag_table[i];
	if (!d || (mgroup && !d->mgroup)) {
		perr(P, P->line, "unknown %s flag '%s'",
		     mgroup ? "multicast group" : "partition",
		     show(flag, sh));
		return false;
	}
	if ((fv->set & d->bit) && d->bit != PRTN_F_SCOPE) {
		perr(P, P->line, "flag '%s' given twice", show(flag, sh));
		return false;
	}
	if (d->bit == PRTN_F_IPOIB || d->bit == PRTN_F_INDX0) {
		if (val.s) {
			perr(P, P->line, "flag '%s' takes no value",
			     show(flag, sh));
			return false;
		}
		fv->set |= d->bit;
		if (d->bit == PRTN_F_IPOIB)
			fv->ipoib = true;
		else
			fv->indx0 = true;
		return true;
	}
	if (!val.s || val.len == 0) {
		perr(P, P->line, "flag '%s' needs a value (%s)",
		     show(flag, sh), d->range);
		return false;
	}
	if (d->bit == PRTN_F_DEFMEMBER) {
		enum prtn_membership m = parse_membership(val);

		if (m == PRTN_NONE) {
			perr(P, P->line, "bad defmember value '%s' (%s)",
			     show(val, sv), d->range);
			return false;
		}
		fv->defmember = m;
		fv->set |= d->bit;
		return true;
	}
	if (!parse_number(val, d->max, &v) || v < d->min) {
		perr(P, P->line, "bad %s value '%s' (expected %s)",
		     d->name, show(val, sv), d->range);
		return false;
	}
	fv->set |= d->bit;
	switch (d->bit) {
	case PRTN_F_MTU:
		fv->mtu = (uint8_t)v;
		break;
	case PRTN_F_RATE:
		fv->rate = (uint8_t)v;
		break;
	case PRTN_F_SL:
		fv->sl = (uint8_t)v;
		break;
	case PRTN_F_SCOPE:
		fv->scope_mask |= (uint16_t)(1u << v);
		break;
	case PRTN_F_QKEY:
		fv->qkey = (uint32_t)v;
		break;
	case PRTN_F_TCLASS:
		fv->tclass = (uint8_t)v;
		break;
	case PRTN_F_FLOWLABEL:
		fv->flow_label = (uint32_t)v;
		break;
	}
	return true;
}

/* ",flag[=value]" repeated; sets *bad on an error (reported). */
static void read_flags(struct parser *P, struct flagvals *fv, bool mgroup,
		       bool *bad)
{
	for (;;) {
		struct span flag, val = { NULL, 0 };

		skip_blank(P);
		if (peek(P) != ',')
			return;
		P->pos++;
		skip_blank(P);
		flag = read_word(P);
		skip_blank(P);
		if (flag.len == 0 && (peek(P) == '\n' || peek(P) == -1))
			return;	/* the caller reports the cut header */
		if (flag.len == 0) {
			perr(P, P->line, "empty flag after ','");
			*bad = true;
			if (peek(P) != '=')
				continue;
		}
		if (peek(P) == '=') {
			P->pos++;
			skip_blank(P);
			val = read_word(P);
		}
		if (flag.len && !apply_flag(P, fv, mgroup, flag, val))
			*bad = true;
	}
}

/* --- partitions --------------------------------------------------------- */

static void prtn_init(struct prtn *p, const char *name, uint16_t pkey,
		      unsigned int line)
{
	memset(p, 0, sizeof(*p));
	snprintf(p->name, sizeof(p->name), "%s", name);
	p->pkey = pkey;
	p->mtu = PRTN_DEFAULT_MTU;
	p->rate = PRTN_DEFAULT_RATE;
	p->sl = PRTN_DEFAULT_SL;
	p->qkey = PRTN_DEFAULT_QKEY;
	p->defmember = PRTN_LIMITED;
	p->line = line;
}

static void prtn_free_one(struct prtn *p)
{
	free(p->members);
	free(p->mgroups);
	p->members = NULL;
	p->mgroups = NULL;
	p->nmembers = p->nmgroups = 0;
}

void prtn_conf_free(struct prtn_conf *c)
{
	size_t i;

	if (!c)
		return;
	for (i = 0; i < c->nparts; i++)
		prtn_free_one(&c->parts[i]);
	free(c->parts);
	c->parts = NULL;
	c->nparts = 0;
}

static struct prtn *conf_add(struct prtn_conf *c)
{
	struct prtn *np;

	/* Capacity is the power of two at or above the count. */
	if ((c->nparts & (c->nparts - 1)) == 0) {
		size_t cap = c->nparts ? c->nparts * 2 : 1;

		np = realloc(c->parts, cap * sizeof(*np));
		if (!np)
			return NULL;
		c->parts = np;
	}
	return &c->parts[c->nparts++];
}

static int member_push(struct prtn *p, const struct prtn_member *m)
{
	if (p->nmembers == 0 || (p->nmembers & (p->nmembers - 1)) == 0) {
		size_t cap = p->nmembers ? p->nmembers * 2 : 1;
		struct prtn_member *nm;

		nm = realloc(p->members, cap * sizeof(*nm));
		if (!nm)
			return -1;
		p->members = nm;
	}
	p->members[p->nmembers++] = *m;
	return 0;
}

static int mgroup_push(struct prtn *p, const struct prtn_mgroup *g)
{
	if (p->nmgroups == 0 || (p->nmgroups & (p->nmgroups - 1)) == 0) {
		size_t cap = p->nmgroups ? p->nmgroups * 2 : 1;
		struct prtn_mgroup *ng;

		ng = realloc(p->mgroups, cap * sizeof(*ng));
		if (!ng)
			return -1;
		p->mgroups = ng;
	}
	p->mgroups[p->nmgroups++] = *g;
	return 0;
}

const struct prtn *prtn_conf_find(const struct prtn_conf *c, uint16_t pkey)
{
	size_t i;

	pkey &= PRTN_PKEY_MASK;
	for (i = 0; c && i < c->nparts; i++)
		if (c->parts[i].pkey == pkey)
			return &c->parts[i];
	return NULL;
}

static long find_pkey(const struct prtn_conf *c, uint16_t pkey)
{
	size_t i;

	for (i = 0; i < c->nparts; i++)
		if (c->parts[i].pkey == pkey)
			return (long)i;
	return -1;
}

static long find_name(const struct prtn_conf *c, const char *name)
{
	size_t i;

	for (i = 0; i < c->nparts; i++)
		if (strcmp(c->parts[i].name, name) == 0)
			return (long)i;
	return -1;
}

static void where(const struct prtn *p, char *buf, size_t len)
{
	if (p->line)
		snprintf(buf, len, "line %u", p->line);
	else
		snprintf(buf, len, "the implicit default partition");
}

/* Merge a header's explicit flags into a (new or earlier) partition. */
static bool merge_flags(struct parser *P, struct prtn *p,
			const struct flagvals *fv, unsigned int line)
{
	static const struct {
		unsigned int bit;
		const char *name;
	} vals[] = {
		{ PRTN_F_MTU, "mtu" }, { PRTN_F_RATE, "rate" },
		{ PRTN_F_SL, "sl" }, { PRTN_F_QKEY, "q_key" },
		{ PRTN_F_TCLASS, "tclass" }, { PRTN_F_FLOWLABEL, "flowlabel" },
	};
	bool ok = true;
	size_t i;

	for (i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		unsigned int bit = vals[i].bit;
		uint32_t have, want;

		if (!(fv->set & bit))
			continue;
		switch (bit) {
		case PRTN_F_MTU:
			have = p->mtu, want = fv->mtu;
			break;
		case PRTN_F_RATE:
			have = p->rate, want = fv->rate;
			break;
		case PRTN_F_SL:
			have = p->sl, want = fv->sl;
			break;
		case PRTN_F_QKEY:
			have = p->qkey, want = fv->qkey;
			break;
		case PRTN_F_TCLASS:
			have = p->tclass, want = fv->tclass;
			break;
		default:
			have = p->flow_label, want = fv->flow_label;
			break;
		}
		if ((p->set & bit) && have != want) {
			perr(P, line, bit == PRTN_F_QKEY ?
			     "partition '%s' (P_Key 0x%04x): %s=%#x conflicts with %s=%#x given earlier" :
			     "partition '%s' (P_Key 0x%04x): %s=%u conflicts with %s=%u given earlier",
			     p->name, p->pkey, vals[i].name, want,
			     vals[i].name, have);
			ok = false;
			continue;
		}
		switch (bit) {
		case PRTN_F_MTU:
			p->mtu = fv->mtu;
			break;
		case PRTN_F_RATE:
			p->rate = fv->rate;
			break;
		case PRTN_F_SL:
			p->sl = fv->sl;
			break;
		case PRTN_F_QKEY:
			p->qkey = fv->qkey;
			break;
		case PRTN_F_TCLASS:
			p->tclass = fv->tclass;
			break;
		default:
			p->flow_label = fv->flow_label;
			break;
		}
	}
	p->ipoib = p->ipoib || fv->ipoib;
	p->indx0 = p->indx0 || fv->indx0;
	p->scope_mask |= fv->scope_mask;
	p->set |= fv->set;
	return ok;
}

/*
 * Find or create the partition a header names.  Returns its index, or -1
 * after reporting why not.
 */
static long resolve_partition(struct parser *P, const struct def *d,
			      const struct flagvals *fv)
{
	struct prtn_conf *c = &P->conf;
	char w[64];
	long i = -1, j;
	uint16_t pkey = 0;

	j = find_name(c, d->name);
	if (d->has_pkey) {
		pkey = d->pkey;
		i = find_pkey(c, pkey);
		if (j >= 0 && j != i) {
			where(&c->parts[j], w, sizeof(w));
			perr(P, d->line,
			     "partition name '%s' is already used for P_Key 0x%04x (%s)",
			     d->name, c->parts[j].pkey, w);
			return -1;
		}
		if (i >= 0) {
			struct prtn *p = &c->parts[i];

			if (p->auto_pkey) {
				perr(P, d->line,
				     "P_Key 0x%04x was given automatically to partition '%s' at line %u; give that partition an explicit P_Key",
				     pkey, p->name, p->line);
				return -1;
			}
			if (strcmp(p->name, d->name) != 0) {
				if (p->line != 0) {
					perr(P, d->line,
					     "P_Key 0x%04x is already partition '%s' (line %u); a repeated P_Key must repeat its name",
					     pkey, p->name, p->line);
					return -1;
				}
				/* The implicit default takes this name. */
				snprintf(p->name, sizeof(p->name), "%s",
					 d->name);
			}
		}
	} else if (j >= 0) {
		i = j;
	} else {
		/* OpenSM's generate_pkey(): count up, skip keys in use. */
		for (;;) {
			if (P->next_auto >= PRTN_DEFAULT_PKEY - 1) {
				perr(P, d->line,
				     "no free P_Key left for partition '%s'",
				     d->name);
				return -1;
			}
			pkey = ++P->next_auto;
			if (find_pkey(c, pkey) < 0)
				break;
		}
	}
	if (i < 0) {
		struct prtn *p;

		if (c->nparts >= PRTN_MAX_PARTITIONS) {
			perr(P, d->line, "more than %d partitions",
			     PRTN_MAX_PARTITIONS);
			P->stop = true;
			return -1;
		}
		p = conf_add(c);
		if (!p) {
			oom(P);
			return -1;
		}
		prtn_init(p, d->name, pkey, d->line);
		p->auto_pkey = !d->has_pkey;
		p->defmember = d->defmember;
		i = (long)(c->nparts - 1);
	}
	if (c->parts[i].line == 0) {	/* implicit default, first named */
		c->parts[i].line = d->line;
		c->parts[i].defmember = d->defmember;
	}
	if (!merge_flags(P, &c->parts[i], fv, d->line))
		return -1;
	return i;
}

/* --- member list -------------------------------------------------------- */

static const struct {
	const char *word;
	int kind;		/* -1: NONE */
} keywords[] = {
	{ "ALL", PRTN_M_ALL },
	{ "ALL_CAS", PRTN_M_ALL_CAS },
	{ "ALL_SWITCHES", PRTN_M_ALL_SWITCHES },
	{ "ALL_ROUTERS", PRTN_M_ALL_ROUTERS },
	{ "SELF", PRTN_M_SELF },
	{ "NONE", -1 },
};

/* The target of members: the partition, or scratch after a bad header. */
struct target {
	struct prtn *p;		/* NULL: scratch, parse only */
	struct def *d;
};

static void add_member(struct parser *P, struct target *t,
		       const struct prtn_member *m)
{
	if (!t->p)
		return;
	if (t->p->nmembers >= PRTN_MAX_MEMBERS) {
		perr(P, P->line, "partition '%s' has more than %d members",
		     t->p->name, PRTN_MAX_MEMBERS);
		P->stop = true;
		return;
	}
	if (member_push(t->p, m) < 0)
		oom(P);
}

static void read_member(struct parser *P, struct target *t, struct span w)
{
	char sh[WORD_SHOW + 4], sv[WORD_SHOW + 4];
	struct prtn_member m;
	bool ok = true;
	size_t i;
	int kind = PRTN_M_NAME;

	memset(&m, 0, sizeof(m));
	m.line = P->line;
	m.membership = t->d->defmember;

	skip_blank(P);
	if (peek(P) == '=') {
		struct span v;

		P->pos++;
		skip_blank(P);
		v = read_word(P);
		if (v.len == 0) {
			perr(P, P->line, "member '%s': membership missing after '=' (full, limited or both)",
			     show(w, sh));
			ok = false;
		} else if ((m.membership = parse_membership(v)) == PRTN_NONE) {
			perr(P, P->line, "member '%s': bad membership '%s' (full, limited or both)",
			     show(w, sh), show(v, sv));
			ok = false;
		}
	}

	for (i = 0; i < sizeof(keywords) / sizeof(keywords[0]); i++) {
		if (word_is(w, keywords[i].word)) {
			kind = keywords[i].kind;
			break;
		}
		if (word_is_nocase(w, keywords[i].word)) {
			perr(P, P->line,
			     "'%s' is not a member: keywords are upper case (%s)",
			     show(w, sh), keywords[i].word);
			return;
		}
	}
	if (word_is_nocase(w, "mgid")) {
		perr(P, P->line, "'%s' is not a member: write mgid=GID",
		     show(w, sh));
		return;
	}
	if (kind == PRTN_M_NAME && w.s[0] >= '0' && w.s[0] <= '9') {
		if (!parse_number(w, UINT64_MAX, &m.guid)) {
			perr(P, P->line, "bad port GUID '%s'", show(w, sh));
			return;
		}
		if (m.guid == 0) {
			perr(P, P->line, "port GUID 0 is not valid");
			return;
		}
		kind = PRTN_M_GUID;
	} else if (kind == PRTN_M_NAME) {
		if (!check_name(P, w, "node name"))
			return;
		copy_word(m.name, w);
	}
	if (!ok || kind < 0)
		return;
	m.kind = (enum prtn_member_kind)kind;
	add_member(P, t, &m);
}

static const uint8_t ipoib_bcast_mgid[16] = {
	0xff, 0x12, 0x40, 0x1b, 0xff, 0xff, 0, 0,
	0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff,
};

/* "mgid=GID[,flag=value]..." up to the line end or ';' ("mgid" read). */
static void read_mgid(struct parser *P, struct target *t)
{
	char sh[WORD_SHOW + 4], text[64];
	struct prtn_mgroup g;
	struct flagvals fv;
	struct span gid;
	unsigned int line = P->line;
	bool bad = false;
	struct prtn *p = t->p;
	size_t i, k;
	int c;

	skip_blank(P);
	P->pos++;		/* '=' */
	skip_blank(P);
	gid.s = P->buf + P->pos;
	gid.len = 0;
	/* A GID holds ':', which is a delimiter elsewhere. */
	while ((c = peek(P)) != -1 && (c == ':' || c == '.' ||
				       (c >= '0' && c <= '9') ||
				       (c >= 'a' && c <= 'f') ||
				       (c >= 'A' && c <= 'F'))) {
		P->pos++;
		gid.len++;
	}
	memset(&g, 0, sizeof(g));
	g.line = line;
	if (gid.len == 0 || !is_delim(peek(P)) || gid.len >= sizeof(text)) {
		gid.len += read_word(P).len;
		perr(P, line, "bad mgid '%s'", show(gid, sh));
		bad = true;
	} else {
		copy_word(text, gid);
		if (inet_pton(AF_INET6, text, g.mgid) != 1) {
			perr(P, line, "bad mgid '%s'", text);
			bad = true;
		} else if (g.mgid[0] != 0xff) {
			perr(P, line, "mgid '%s' is not a multicast GID", text);
			bad = true;
		}
	}

	memset(&fv, 0, sizeof(fv));
	read_flags(P, &fv, true, &bad);
	if ((c = peek(P)) != -1 && c != '\n' && c != ';') {
		perr(P, P->line,
		     "unexpected '%c' after mgid (an mgid takes the rest of its line; its flags are separated by ',')",
		     c);
		while ((c = peek(P)) != -1 && c != '\n' && c != ';') {
			if (c == '#')
				skip_blank(P);
			else
				P->pos++;
		}
		return;
	}
	if (bad || !p)
		return;

	/* Inherit from the partition, as OpenSM (tclass is not inherited). */
	g.mtu = (fv.set & PRTN_F_MTU) ? fv.mtu : p->mtu;
	g.rate = (fv.set & PRTN_F_RATE) ? fv.rate : p->rate;
	g.sl = (fv.set & PRTN_F_SL) ? fv.sl : p->sl;
	g.tclass = fv.tclass;
	g.flow_label = (fv.set & PRTN_F_FLOWLABEL) ? fv.flow_label :
						       p->flow_label;
	g.scope_mask = fv.scope_mask ? fv.scope_mask : p->scope_mask;
	g.qkey = (fv.set & PRTN_F_QKEY) ? fv.qkey :
		 (p->set & PRTN_F_QKEY) ? p->qkey : 0;

	if ((g.mgid[2] == 0x40 || g.mgid[2] == 0x60) && g.mgid[3] == 0x1b) {
		uint16_t mp = (uint16_t)(g.mgid[4] << 8 | g.mgid[5]);
		uint16_t full = p->pkey | PRTN_PKEY_FULL;

		if (memcmp(g.mgid, ipoib_bcast_mgid, 16) != 0 && mp != 0 &&
		    mp != full) {
			perr(P, line,
			     "IP mgid '%s' carries P_Key 0x%04x, not 0x%04x of partition '%s' (or 0 to fill in)",
			     text, mp, full, p->name);
			return;
		}
		if (g.rate != p->rate || g.mtu != p->mtu) {
			perr(P, line,
			     "IP mgid '%s' needs the partition's rate=%u and mtu=%u (has rate=%u mtu=%u)",
			     text, p->rate, p->mtu, g.rate, g.mtu);
			return;
		}
		g.mgid[4] = (uint8_t)(full >> 8);
		g.mgid[5] = (uint8_t)full;
		if (g.qkey == 0)
			g.qkey = PRTN_DEFAULT_QKEY;
	}
	for (i = 0; i < P->conf.nparts; i++) {
		const struct prtn *q = &P->conf.parts[i];

		for (k = 0; k < q->nmgroups; k++) {
			if (memcmp(q->mgroups[k].mgid, g.mgid, 16) == 0) {
				perr(P, line, "mgid '%s' already given at line %u",
				     text, q->mgroups[k].line);
				return;
			}
		}
	}
	if (P->nmgroups >= PRTN_MAX_MGROUPS) {
		perr(P, line, "more than %d mgid groups in the file",
		     PRTN_MAX_MGROUPS);
		P->stop = true;
		return;
	}
	if (mgroup_push(p, &g) < 0)
		oom(P);
	else
		P->nmgroups++;
}

/*
 * Does the line from here look like a partition header ("X... :")?  Then
 * the previous definition lacks its ';'.  An mgid line holds ':' too.
 */
static bool line_is_header(const struct parser *P)
{
	size_t i = P->pos;
	bool first = true;

	while (i < P->len) {
		char c = P->buf[i];

		if (c == '\n' || c == '#' || c == ';')
			return false;
		if (c == ':')
			return true;
		if (first && P->len - i >= 4 &&
		    strncasecmp(P->buf + i, "mgid", 4) == 0) {
			size_t k = i + 4;

			while (k < P->len && (P->buf[k] == ' ' ||
					      P->buf[k] == '\t'))
				k++;
			if (k < P->len && P->buf[k] == '=')
				return false;
		}
		first = false;
		i++;
	}
	return false;
}

/*
 * Members up to ';'.  Returns true if the definition ended with ';', false
 * if it ended at EOF or at the next header (both reported).
 */
static bool read_members(struct parser *P, struct target *t, const char *name)
{
	unsigned int last = P->line;
	bool need_sep = false, line_start = false;

	for (;;) {
		struct span w;
		int c;
		char sh[WORD_SHOW + 4];

		if (P->stop)
			return false;
		skip_blank(P);
		c = peek(P);
		if (c == -1) {
			perr(P, last, "missing ';' at the end of partition '%s'",
			     name);
			return false;
		}
		if (c == ';') {
			P->pos++;
			return true;
		}
		if (c == '\n') {
			P->pos++;
			P->line++;
			need_sep = false;
			line_start = true;
			continue;
		}
		if (c == ',') {
			P->pos++;
			need_sep = false;
			continue;
		}
		if (line_start && line_is_header(P)) {
			perr(P, last, "missing ';' at the end of partition '%s'",
			     name);
			return false;
		}
		line_start = false;
		last = P->line;
		if (need_sep) {
			w = read_word(P);
			if (w.len == 0)
				w = (struct span){ P->buf + P->pos, 1 };
			perr(P, P->line,
			     "expected ',' or ';' before '%s' in the member list of partition '%s'",
			     show(w, sh), name);
			skip_element(P);
			continue;
		}
		w = read_word(P);
		if (w.len == 0) {
			if (c == ':')
				perr(P, P->line,
				     "unexpected ':' in the member list of partition '%s' (missing ';'?)",
				     name);
			else
				perr(P, P->line,
				     "member name missing before '%c' in partition '%s'",
				     c, name);
			P->pos++;
			skip_element(P);
			continue;
		}
		skip_blank(P);
		if (word_is(w, "mgid") && peek(P) == '=') {
			read_mgid(P, t);
			continue;
		}
		read_member(P, t, w);
		skip_blank(P);
		c = peek(P);
		if (c == '=' || c == ':') {
			perr(P, P->line,
			     "unexpected '%c' after member '%s' of partition '%s'%s",
			     c, show(w, sh), name,
			     c == ':' ? " (missing ';'?)" : "");
			skip_element(P);
		}
		need_sep = true;
	}
}

/* --- definitions -------------------------------------------------------- */

static void read_definition(struct parser *P)
{
	char sh[WORD_SHOW + 4];
	struct flagvals fv;
	struct def d;
	struct target t;
	struct span w;
	long idx = -1;
	int c;

	memset(&d, 0, sizeof(d));
	memset(&fv, 0, sizeof(fv));
	fv.defmember = PRTN_LIMITED;
	d.line = P->line;

	w = read_word(P);
	skip_blank(P);
	c = peek(P);
	if (w.len == 0 && c == ';') {
		perr(P, d.line, "empty partition definition before ';'");
		P->pos++;
		return;
	}
	if (w.len == 0) {
		perr(P, d.line, "partition name missing before '%c'", c);
		d.bad = true;
	} else if (w.s[0] >= '0' && w.s[0] <= '9') {
		perr(P, d.line,
		     "partition name missing ('%s' is a P_Key to OpenSM; write NAME=%s)",
		     show(w, sh), show(w, sh));
		d.bad = true;
	} else if (!check_name(P, w, "partition name")) {
		d.bad = true;
	} else {
		copy_word(d.name, w);
	}

	if (c == '=') {
		uint64_t v;

		P->pos++;
		skip_blank(P);
		w = read_word(P);
		if (w.len == 0) {
			perr(P, d.line, "P_Key missing after '='");
			d.bad = true;
		} else if (!parse_number(w, UINT64_MAX, &v) || v > 0xffff) {
			perr(P, d.line, "bad P_Key '%s' (expected 0x0001..0x7fff)",
			     show(w, sh));
			d.bad = true;
		} else if ((v & PRTN_PKEY_MASK) == 0) {
			perr(P, d.line,
			     "P_Key 0x%04x is not valid (its low 15 bits are 0; expected 0x0001..0x7fff)",
			     (unsigned int)v);
			d.bad = true;
		} else {
			d.has_pkey = true;
			d.pkey = (uint16_t)(v & PRTN_PKEY_MASK);
		}
	}
	read_flags(P, &fv, false, &d.bad);
	skip_blank(P);
	c = peek(P);
	if (c != ':') {
		if (c == -1 || c == '\n' || c == ';')
			perr(P, d.line,
			     "missing ':' after the partition header (the header must be on one line)");
		else
			perr(P, d.line, "unexpected '%c' in the partition header",
			     c);
		if (c == '\n')
			P->line++;
		if (c != -1)
			P->pos++;
		if (c != ';')
			skip_definition(P);
		return;
	}
	P->pos++;
	d.defmember = fv.defmember;

	if (!d.bad)
		idx = resolve_partition(P, &d, &fv);
	t.d = &d;
	t.p = idx >= 0 ? &P->conf.parts[idx] : NULL;
	/* After a bad header the members are still checked, into nothing. */
	read_members(P, &t, d.name[0] ? d.name : "?");
}

static int finish(struct parser *P)
{
	size_t i, k;

	for (i = 0; i < P->conf.nparts; i++) {
		struct prtn *p = &P->conf.parts[i];

		if (!p->scope_mask)
			p->scope_mask = 1u << PRTN_DEFAULT_SCOPE;
		for (k = 0; k < p->nmgroups; k++)
			if (!p->mgroups[k].scope_mask)
				p->mgroups[k].scope_mask =
					1u << PRTN_DEFAULT_SCOPE;
	}
	return 0;
}

static int add_implicit_default(struct prtn_conf *c, bool ipoib,
				enum prtn_membership all)
{
	struct prtn_member m;
	struct prtn *p;

	p = conf_add(c);
	if (!p)
		return -1;
	prtn_init(p, "Default", PRTN_DEFAULT_PKEY, 0);
	p->ipoib = ipoib;
	p->scope_mask = 1u << PRTN_DEFAULT_SCOPE;
	memset(&m, 0, sizeof(m));
	m.kind = PRTN_M_ALL;
	m.membership = all;
	if (member_push(p, &m) < 0)
		return -1;
	m.kind = PRTN_M_SELF;
	m.membership = PRTN_FULL;
	if (member_push(p, &m) < 0)
		return -1;
	return 0;
}

int prtn_conf_default(struct prtn_conf *out)
{
	memset(out, 0, sizeof(*out));
	if (add_implicit_default(out, true, PRTN_FULL) < 0) {
		prtn_conf_free(out);
		return -1;
	}
	return 0;
}

int prtn_conf_parse(const char *text, size_t len, const char *filename,
		    struct prtn_conf *out, char *err, size_t errlen)
{
	struct parser P;
	bool any = false;

	memset(&P, 0, sizeof(P));
	memset(out, 0, sizeof(*out));
	P.buf = text ? text : "";
	P.len = text ? len : 0;
	P.line = 1;
	P.err = err;
	P.errlen = errlen;
	if (err && errlen)
		err[0] = '\0';
	set_filename(&P, filename);

	if (P.len > PRTN_FILE_MAX) {
		perr(&P, 1, "file too large (more than %d bytes)",
		     PRTN_FILE_MAX);
		return -1;
	}
	if (check_bytes(&P) < 0)
		return -1;
	if (add_implicit_default(&P.conf, false, PRTN_LIMITED) < 0) {
		oom(&P);
		prtn_conf_free(&P.conf);
		return -1;
	}
	P.conf.parts[0].scope_mask = 0;	/* set by finish() */

	while (!P.stop) {
		int c;

		skip_blank(&P);
		c = peek(&P);
		if (c == -1)
			break;
		if (c == '\n') {
			P.pos++;
			P.line++;
			continue;
		}
		any = true;
		read_definition(&P);
	}
	if (!any && P.nerr == 0) {
		unsigned int last = P.line;

		if (last > 1 && P.len && P.buf[P.len - 1] == '\n')
			last--;
		perr(&P, last, "no partition definitions (OpenSM would use its default configuration)");
	}
	if (P.nerr) {
		prtn_conf_free(&P.conf);
		return -1;
	}
	finish(&P);
	*out = P.conf;
	return 0;
}

int prtn_conf_load(const char *path, struct prtn_conf *out, char *err,
		   size_t errlen)
{
	struct stat st;
	char *buf = NULL;
	size_t used = 0;
	int fd, e, rc;

	memset(out, 0, sizeof(*out));
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		e = errno;
		snprintf(err, errlen, "%s: cannot open: %s", path, strerror(e));
		errno = e;
		return -1;
	}
	if (fstat(fd, &st) < 0) {
		e = errno;
		snprintf(err, errlen, "%s: %s", path, strerror(e));
		close(fd);
		errno = e;
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file", path);
		close(fd);
		errno = EINVAL;
		return -1;
	}
	buf = malloc(PRTN_FILE_MAX + 1);
	if (!buf) {
		close(fd);
		snprintf(err, errlen, "%s: out of memory", path);
		errno = ENOMEM;
		return -1;
	}
	for (;;) {
		ssize_t r = read(fd, buf + used, PRTN_FILE_MAX + 1 - used);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			e = errno;
			snprintf(err, errlen, "%s: read: %s", path,
				 strerror(e));
			close(fd);
			free(buf);
			errno = e;
			return -1;
		}
		if (r == 0)
			break;
		used += (size_t)r;
		if (used > PRTN_FILE_MAX) {
			snprintf(err, errlen,
				 "%s: file too large (more than %d bytes)",
				 path, PRTN_FILE_MAX);
			close(fd);
			free(buf);
			errno = EFBIG;
			return -1;
		}
	}
	close(fd);
	rc = prtn_conf_parse(buf, used, path, out, err, errlen);
	free(buf);
	if (rc < 0)
		errno = EINVAL;
	return rc;
}

/* --- membership and tables ---------------------------------------------- */

static bool member_matches(const struct prtn_member *m, const char *node_name,
			   uint64_t port_guid, int is_sm)
{
	switch (m->kind) {
	case PRTN_M_ALL:
	case PRTN_M_ALL_CAS:		/* every soft-subnet node is a CA */
		return true;
	case PRTN_M_ALL_SWITCHES:
	case PRTN_M_ALL_ROUTERS:
		return false;
	case PRTN_M_SELF:
		return is_sm != 0;
	case PRTN_M_GUID:
		return m->guid == port_guid;
	case PRTN_M_NAME:
		return node_name && strcmp(m->name, node_name) == 0;
	}
	return false;
}

int prtn_membership(const struct prtn *p, const char *node_name,
		    uint64_t port_guid, int is_sm, uint16_t *pkey_out)
{
	enum prtn_membership r = PRTN_NONE;
	size_t i;

	/* The last matching entry decides, as in OpenSM's port tables. */
	for (i = 0; i < p->nmembers; i++)
		if (member_matches(&p->members[i], node_name, port_guid, is_sm))
			r = p->members[i].membership;
	if (r != PRTN_NONE && pkey_out)
		*pkey_out = (uint16_t)((p->pkey & PRTN_PKEY_MASK) |
				       ((r & PRTN_FULL) ? PRTN_PKEY_FULL : 0));
	return r;
}

struct table {
	uint16_t *t;
	unsigned int max, n;
	bool overflow;
};

static void table_put(struct table *tb, uint16_t key)
{
	if (tb->n < tb->max)
		tb->t[tb->n++] = key;
	else
		tb->overflow = true;
}

static void table_put_prtn(struct table *tb, const struct prtn *p, int m)
{
	uint16_t key = p->pkey & PRTN_PKEY_MASK;

	if (m & PRTN_FULL)
		table_put(tb, key | PRTN_PKEY_FULL);
	if (m & PRTN_LIMITED)
		table_put(tb, key);
}

int prtn_pkey_table(const struct prtn_conf *c, const char *node_name,
		    uint64_t port_guid, int is_sm, uint16_t *table,
		    unsigned int max, unsigned int *n)
{
	const struct prtn *dflt, *i0 = NULL;
	struct table tb = { table, max, 0, false };
	int dm = PRTN_NONE, i0m = PRTN_NONE;
	size_t i;

	dflt = prtn_conf_find(c, PRTN_DEFAULT_PKEY);
	if (dflt)
		dm = prtn_membership(dflt, node_name, port_guid, is_sm, NULL);
	for (i = 0; c && i < c->nparts; i++) {
		const struct prtn *p = &c->parts[i];
		int m;

		if (!p->indx0 || p == dflt)
			continue;
		m = prtn_membership(p, node_name, port_guid, is_sm, NULL);
		if (m) {
			i0 = p;
			i0m = m;
		}
	}
	if (i0)
		table_put_prtn(&tb, i0, i0m);
	else if (!dm)
		table_put(&tb, 0);	/* index 0 stays the default's slot */
	if (dm)
		table_put_prtn(&tb, dflt, dm);
	for (i = 0; c && i < c->nparts; i++) {
		const struct prtn *p = &c->parts[i];
		int m;

		if (p == dflt || p == i0)
			continue;
		m = prtn_membership(p, node_name, port_guid, is_sm, NULL);
		if (m)
			table_put_prtn(&tb, p, m);
	}
	*n = tb.n;
	return tb.overflow ? -1 : 0;
}

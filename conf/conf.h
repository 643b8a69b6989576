/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Strict configuration files for every ibgw program.
 *
 * iniparser only splits the file into sections and keys.  This module owns
 * everything after that: it walks every section and key against a schema
 * given by the caller, parses each value with a strict range-checked parser,
 * and collects every error (not only the first) as
 *
 *	FILE:LINE: [SECTION] KEY: what is wrong
 *
 * LINE is recovered by a small scan of the file made alongside iniparser
 * (iniparser keeps no line numbers); it is left out, "FILE: [SECTION] KEY:
 * ...", when there is no line to point at, e.g. a required key missing from
 * a section that is not in the file.
 *
 * What the module promises:
 *  - Unknown sections, unknown keys, keys outside any section, missing
 *    required keys and sections, duplicate sections and duplicate keys
 *    (iniparser would silently merge or overwrite them) and lines iniparser
 *    would misread (text after a closing quote, an unterminated quote, text
 *    after "]", a "\" continuation at end of file) are all errors.
 *  - Values never have trailing garbage, overflow, a sign on an unsigned
 *    number or an empty text: see the conf_parse_*() functions, which are
 *    public so that command-line options get exactly the same rules.
 *  - A loaded configuration is read-only; nothing is re-parsed on access.
 *  - Every error is collected, with one exception: when a line is beyond
 *    iniparser (a syntax error, an over-long line, an empty "[]"), its
 *    reading of the file cannot be trusted, so only those lines are
 *    reported and the schema walk is skipped.
 *
 * Case.  iniparser lowercases section names and keys, so they are
 * case-insensitive: "[Partition Storage]" is the instance "storage" of
 * section "partition", and it is reported and looked up in lowercase.
 * Schema names must therefore be lowercase (a schema that is not is
 * rejected).  Keywords in values (booleans, enum words) are matched
 * case-insensitively too; free text (strings, paths) keeps its case.
 *
 * Syntax (iniparser's): "[section]" or "[base NAME]" headers, "key = value"
 * lines, "#" or ";" comment lines, a trailing "\" continues a line.  In an
 * unquoted value "#" and ";" start a comment even without a space before
 * them: quote a value ("..." or '...') that must contain one.  A physical
 * line is at most CONF_LINE_MAX characters.
 *
 * Multi-instance sections.  A section descriptor with CONF_MULTI matches
 * "[NAME INSTANCE]"; INSTANCE is 1..CONF_INSTANCE_MAX characters of
 * [a-z0-9_.-] starting with a letter or digit.  Any run of blanks between
 * the two words is read as one space, so the section is always named
 * "partition storage" in messages and look-ups.
 *
 * A single (non-CONF_MULTI) section that is absent from the file reads as
 * if it were present and empty: its keys take their defaults, and its
 * required keys are reported missing.
 *
 * Not thread-safe: conf_load() briefly replaces iniparser's global error
 * callback to keep it quiet.  Load from one thread; a loaded struct conf
 * may then be read from any number of threads.
 */
#ifndef IBGW_CONF_H
#define IBGW_CONF_H

#include <stdint.h>
#include <netinet/in.h>

#include "inet/addr.h"

/* Longest physical line iniparser 4.1 accepts, newline excluded. */
#define CONF_LINE_MAX		1022
#define CONF_INSTANCE_MAX	64
/* Errors recorded before the load gives up and says so (one more entry). */
#define CONF_MAX_ERRORS		200

/* ---- value parsers ------------------------------------------------------
 *
 * Each returns 0 and stores the value, or returns -1, leaves *out untouched
 * and points *why (if why is not NULL) at a short static reason such as
 * "out of range".  None accepts leading or trailing blanks or an empty
 * string.
 */

/* Decimal, or hexadecimal with a 0x prefix; no sign, no octal; min..max. */
int conf_parse_uint(const char *s, unsigned long long min,
		    unsigned long long max, unsigned long long *out,
		    const char **why);

/* As conf_parse_uint() with an optional leading '-'; min..max. */
int conf_parse_int(const char *s, long long min, long long max,
		   long long *out, const char **why);

/*
 * A finite decimal number such as 0.05, 5e-2 or 1; no hex, inf or nan, no
 * overflow or underflow (1e-400 is an error, not 0); min <= value <= max
 * (e.g. 0.0, 1.0 for a probability).
 */
int conf_parse_double_range(const char *s, double min, double max,
			    double *out, const char **why);

/* yes/no, true/false, on/off, 1/0, any case; *out is 1 or 0. */
int conf_parse_bool(const char *s, int *out, const char **why);

/*
 * One of words[] (NULL-terminated), any case; *idx is its index.
 */
int conf_parse_enum(const char *s, const char *const *words,
		    unsigned int *idx, const char **why);

/*
 * An InfiniBand P_Key: hexadecimal with a mandatory 0x prefix (so that
 * "8001" is not silently read as decimal 8001 = 0x1f41), at most 0xffff.
 * The top bit is the membership type (1 full, 0 limited) and is kept.
 * 0x0000 and 0x8000 are rejected: IBTA reserves partition number 0 as the
 * invalid P_Key.  0x7fff and 0xffff (default partition) are accepted.
 */
int conf_parse_pkey(const char *s, uint16_t *out, const char **why);

/* "ADDRESS/PREFIXLEN", strictly: inet_prefix_scan() (inet/addr.h). */
int conf_parse_cidr(const char *s, struct inet_prefix *out, const char **why);

/*
 * An absolute path shorter than PATH_MAX without control characters.  The
 * file is not looked at: checking a configuration touches nothing.
 */
int conf_parse_path(const char *s, const char **why);

/* ---- schema -------------------------------------------------------------- */

enum conf_type {
	CONF_STRING = 1,	/* non-empty text without control characters */
	CONF_PATH,		/* conf_parse_path() */
	CONF_BOOL,		/* conf_parse_bool() */
	CONF_UINT,		/* conf_parse_uint(umin, umax) */
	CONF_INT,		/* conf_parse_int(imin, imax) */
	CONF_DOUBLE,		/* conf_parse_double_range(dmin, dmax) */
	CONF_ENUM,		/* conf_parse_enum(words) */
	CONF_PKEY,		/* conf_parse_pkey() */
	CONF_CIDR,		/* conf_parse_cidr() */
};

struct conf_key_desc {
	const char		*name;		/* lowercase; NULL ends */
	enum conf_type		 type;
	int			 required;	/* must be in the file */
	const char		*def;		/* default text, or NULL */
	unsigned long long	 umin, umax;	/* CONF_UINT */
	long long		 imin, imax;	/* CONF_INT */
	double			 dmin, dmax;	/* CONF_DOUBLE */
	const char *const	*words;		/* CONF_ENUM, NULL-terminated */
};

#define CONF_MULTI	0x1	/* "[name INSTANCE]", any number of them */
#define CONF_REQUIRED	0x2	/* must appear (CONF_MULTI: at least once) */

struct conf_section_desc {
	const char			*name;	/* lowercase; NULL ends */
	unsigned int			 flags;
	const struct conf_key_desc	*keys;	/* ends with a NULL name */
};

/* ---- loading ------------------------------------------------------------- */

struct conf;		/* a loaded file and its errors */
struct conf_inst;	/* one section instance in it */

/*
 * Read and validate path against schema (an array ending with a NULL name,
 * which must outlive *cfgp).  Returns the number of errors, 0 when the file
 * is valid, with *cfgp set either way: read errors with conf_error(),
 * then conf_free() it.  Values of a file with errors are incomplete; use
 * them for nothing but reporting (keep the old configuration on reload).
 *
 * Returns -1 with *cfgp = NULL and errno set on ENOMEM, or on EINVAL for a
 * broken schema (each flaw logged once with log_warnx(); a programming
 * error, also caught for defaults that do not parse).
 */
int conf_load(const char *path, const struct conf_section_desc *schema,
	      struct conf **cfgp);
void conf_free(struct conf *cfg);

struct conf_error {
	const char	*msg;		/* the whole "FILE:LINE: ..." text */
	const char	*section;	/* as named in msg, or NULL */
	const char	*key;		/* or NULL */
	int		 line;		/* 0 when unknown */
};

/* Errors are kept in file order; those without a line come last. */
int conf_nerrors(const struct conf *cfg);
const struct conf_error *conf_error(const struct conf *cfg, int i);
void conf_log_errors(const struct conf *cfg);	/* log_warnx() each */

/* ---- instances ----------------------------------------------------------- */

/* "gateway" or "partition storage", any case; NULL if there is none. */
const struct conf_inst *conf_inst_find(const struct conf *cfg,
				       const char *section);
/* Instances of one descriptor ("partition") in file order. */
const struct conf_inst *conf_inst_first(const struct conf *cfg,
					const char *name);
const struct conf_inst *conf_inst_next(const struct conf_inst *inst);
int conf_inst_count(const struct conf *cfg, const char *name);

const char *conf_inst_section(const struct conf_inst *inst); /* full name */
const char *conf_inst_name(const struct conf_inst *inst); /* "" if single */
int conf_inst_line(const struct conf_inst *inst);	/* 0 if absent */

/* ---- values -------------------------------------------------------------- */

struct conf_value {
	const struct conf_key_desc	*desc;
	const char			*text;	/* as written, or the default */
	int				 line;	/* 0 for a default */
	union {
		int			b;	/* CONF_BOOL */
		unsigned long long	u;	/* CONF_UINT */
		long long		i;	/* CONF_INT */
		double			d;	/* CONF_DOUBLE */
		unsigned int		e;	/* CONF_ENUM: index in words */
		uint16_t		pkey;	/* CONF_PKEY */
		struct inet_prefix	cidr;	/* CONF_CIDR */
	} v;
};

/*
 * NULL with errno ENOENT when the key is neither set nor defaulted or the
 * section does not exist, EINVAL when the schema has no such key.
 */
const struct conf_value *conf_inst_get(const struct conf_inst *inst,
				       const char *key);
const struct conf_value *conf_get(const struct conf *cfg,
				  const char *section, const char *key);

/*
 * Typed short-cuts: 0, or -1 with errno as conf_get(), or EINVAL when the
 * key has another type.  conf_get_str() gives the text of any type.
 */
const char *conf_get_str(const struct conf *cfg, const char *section,
			 const char *key);
int conf_get_bool(const struct conf *cfg, const char *section,
		  const char *key, int *out);
int conf_get_uint(const struct conf *cfg, const char *section,
		  const char *key, unsigned long long *out);
int conf_get_int(const struct conf *cfg, const char *section,
		 const char *key, long long *out);
int conf_get_double(const struct conf *cfg, const char *section,
		    const char *key, double *out);
int conf_get_enum(const struct conf *cfg, const char *section,
		  const char *key, unsigned int *out);
int conf_get_pkey(const struct conf *cfg, const char *section,
		  const char *key, uint16_t *out);
int conf_get_cidr(const struct conf *cfg, const char *section,
		  const char *key, struct inet_prefix *out);

#endif

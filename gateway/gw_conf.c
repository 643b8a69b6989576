// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* ibgw.conf: schema and whole-file checks (see gw_conf.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "conf/conf.h"
#include "fabric/soft_proto.h"
#include "gateway/gw_conf.h"
#include "inet/addr.h"

static const char *const modes[] = { "transparent", "router", NULL };
static const char *const ipoib_modes[] = { "datagram", "connected", NULL };

static const struct conf_key_desc gateway_keys[] = {
	{ .name = "fabric", .type = CONF_STRING, .required = 1 },
	{ .name = "node", .type = CONF_STRING },
	{ .name = "control", .type = CONF_PATH,
	  .def = "/run/ibgw/ibgwd.sock" },
	{ .name = "trunk", .type = CONF_STRING },
	{ .name = "neigh_max", .type = CONF_UINT, .def = "4096",
	  .umin = 16, .umax = 1000000 },
	{ .name = "metrics", .type = CONF_STRING },
	{ .name = NULL },
};

static const struct conf_key_desc partition_keys[] = {
	{ .name = "pkey", .type = CONF_PKEY, .required = 1 },
	{ .name = "mode", .type = CONF_ENUM, .words = modes,
	  .def = "transparent" },
	{ .name = "tap", .type = CONF_STRING },
	{ .name = "vlan", .type = CONF_UINT, .umin = 1, .umax = 4094 },
	{ .name = "bridge", .type = CONF_STRING },
	{ .name = "ifname", .type = CONF_STRING },
	{ .name = "address", .type = CONF_CIDR },
	{ .name = "address6", .type = CONF_CIDR },
	{ .name = "mtu", .type = CONF_UINT, .umin = 1280, .umax = 65520 },
	{ .name = "eth_mtu", .type = CONF_UINT, .def = "1500",
	  .umin = 1280, .umax = 9216 },
	{ .name = "mss_clamp", .type = CONF_BOOL, .def = "yes" },
	{ .name = "ipoib_mode", .type = CONF_ENUM, .words = ipoib_modes,
	  .def = "datagram" },
	{ .name = "sdp", .type = CONF_BOOL, .def = "off" },
	{ .name = "sdp_max_conns", .type = CONF_UINT, .def = "1024",
	  .umin = 1, .umax = 65536 },
	{ .name = "sdp_exports", .type = CONF_STRING },
	{ .name = "rds", .type = CONF_BOOL, .def = "off" },
	{ .name = "rds_max_peers", .type = CONF_UINT, .def = "1024",
	  .umin = 1, .umax = 65536 },
	{ .name = "rds_exports", .type = CONF_STRING },
	{ .name = "rds_gids", .type = CONF_STRING },
	{ .name = NULL },
};

static const struct conf_section_desc schema[] = {
	{ .name = "gateway", .flags = CONF_REQUIRED, .keys = gateway_keys },
	{ .name = "partition", .flags = CONF_MULTI | CONF_REQUIRED,
	  .keys = partition_keys },
	{ .name = NULL },
};

const char *gw_mode_name(enum gw_mode m)
{
	return m == GW_MODE_ROUTER ? "router" : "transparent";
}

struct ctx {
	const char *path;
	FILE *err;
	int n;
};

static void perr(struct ctx *c, int line, const char *part, const char *key,
		 const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static void perr(struct ctx *c, int line, const char *part, const char *key,
		 const char *fmt, ...)
{
	va_list ap;

	if (line)
		fprintf(c->err, "%s:%d: ", c->path, line);
	else
		fprintf(c->err, "%s: ", c->path);
	if (part)
		fprintf(c->err, "[partition %s] ", part);
	else
		fprintf(c->err, "[gateway] ");
	if (key)
		fprintf(c->err, "%s: ", key);
	va_start(ap, fmt);
	vfprintf(c->err, fmt, ap);
	va_end(ap);
	fputc('\n', c->err);
	c->n++;
}

/* A value's line, else the section's. */
static int line_of(const struct conf_inst *in, const char *key)
{
	const struct conf_value *v = conf_inst_get(in, key);

	return v && v->line ? v->line : conf_inst_line(in);
}

static int get_name(struct ctx *c, const struct conf_inst *in,
		    const char *part, const char *key, char *out, size_t cap)
{
	const struct conf_value *v = conf_inst_get(in, key);
	char e[NL_ERRLEN];

	out[0] = '\0';
	if (!v)
		return 0;
	if (nl_ifname_check(v->text, e, sizeof(e)) < 0) {
		perr(c, v->line, part, key, "'%s' is not an interface name",
		     v->text);
		return -1;
	}
	snprintf(out, cap, "%s", v->text);
	return 1;
}

/* One export, "LANPORT=IBADDR:PORT" or "LANPORT=[IBADDR6]:PORT", spaces
 * around the parts allowed.  NULL, or why not. */
static const char *parse_export(char *s, struct gw_sdp_export *x)
{
	char *eq = strchr(s, '='), *colon, *a, *end;
	unsigned long long v;
	const char *why;
	char e[128];

	if (!eq)
		return "LANPORT=IBADDR:PORT wanted";
	*eq = '\0';
	while (*s == ' ' || *s == '\t')
		s++;
	for (end = eq; end > s && (end[-1] == ' ' || end[-1] == '\t');)
		*--end = '\0';
	if (conf_parse_uint(s, 1, 65535, &v, &why) < 0)
		return "LANPORT: a port 1..65535 wanted";
	x->lan_port = (uint16_t)v;
	a = eq + 1;
	while (*a == ' ' || *a == '\t')
		a++;
	for (end = a + strlen(a); end > a &&
	     (end[-1] == ' ' || end[-1] == '\t');)
		*--end = '\0';
	colon = strrchr(a, ':');
	if (!colon)
		return "IBADDR:PORT wanted after '='";
	*colon = '\0';
	if (conf_parse_uint(colon + 1, 1, 65535, &v, &why) < 0)
		return "PORT: a port 1..65535 wanted";
	x->ib_port = (uint16_t)v;
	if (a[0] == '[') {
		size_t n = strlen(a);

		if (n < 3 || a[n - 1] != ']')
			return "IBADDR: [IPv6 address] wanted";
		a[n - 1] = '\0';
		a++;
		if (inet_addr_parse(a, &x->ib_addr, e, sizeof(e)) < 0 ||
		    x->ib_addr.family != AF_INET6)
			return "IBADDR: not an IPv6 address";
	} else if (inet_addr_parse(a, &x->ib_addr, e, sizeof(e)) < 0 ||
		   x->ib_addr.family != AF_INET) {
		return "IBADDR: an IPv4 address, or an IPv6 one in [ ]";
	}
	/* one IB host's address: not the unspecified, loopback, multicast
	 * or broadcast one */
	if (inet_addr_not_host(&x->ib_addr))
		return "IBADDR: not an IB host's address";
	return NULL;
}

/* sdp_exports or rds_exports = LANPORT=IBADDR:PORT[, ...], into out[]
 * (up to max, *n of them) */
static void check_exports(struct ctx *c, const struct conf_value *v,
			  struct gw_part_conf *p, const char *key,
			  struct gw_sdp_export *out, unsigned int *n,
			  unsigned int max)
{
	char buf[4096], *tok, *save = NULL;
	const char *why;
	unsigned int i;

	snprintf(buf, sizeof(buf), "%s", v->text);
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		struct gw_sdp_export x;
		char orig[256];

		snprintf(orig, sizeof(orig), "%s", tok);
		memset(&x, 0, sizeof(x));
		why = parse_export(tok, &x);
		if (why) {
			perr(c, v->line, p->name, key, "'%s': %s", orig, why);
			continue;
		}
		for (i = 0; i < *n; i++)
			if (out[i].lan_port == x.lan_port)
				break;
		if (i < *n) {
			perr(c, v->line, p->name, key,
			     "LAN port %u exported twice", x.lan_port);
			continue;
		}
		if (*n == max) {
			perr(c, v->line, p->name, key, "more than %u exports",
			     max);
			return;
		}
		out[(*n)++] = x;
	}
	if (!*n && v)
		perr(c, v->line, p->name, key,
		     "no LANPORT=IBADDR:PORT in '%s'", v->text);
}

static void check_sdp(struct ctx *c, const struct conf_inst *in,
		      struct gw_part_conf *p)
{
	const struct conf_value *v;
	static const char *const skeys[] = { "sdp_max_conns",
					     "sdp_exports" };
	unsigned int i;

	v = conf_inst_get(in, "sdp");
	p->sdp = v ? v->v.b : 0;
	v = conf_inst_get(in, "sdp_max_conns");
	p->sdp_max_conns = v ? (unsigned int)v->v.u : 1024;
	if (!p->sdp) {
		for (i = 0; i < 2; i++)
			if ((v = conf_inst_get(in, skeys[i])) && v->line)
				perr(c, v->line, p->name, skeys[i],
				     "only with sdp = on");
		return;
	}
	if ((v = conf_inst_get(in, "sdp_exports")))
		check_exports(c, v, p, "sdp_exports", p->sdp_exports,
			      &p->nsdp_exports, GW_SDP_EXPORTS_MAX);
}

unsigned int gw_gid_count(const struct inet_prefix *p)
{
	unsigned int bits = (p->addr.family == AF_INET ? 32u : 128u) -
			    p->plen;

	return bits > 8 ? GW_RDS_GID_ADDRS_MAX + 1 : 1u << bits;
}

/* Host bits of p all zero. */
static int prefix_clean(const struct inet_prefix *p)
{
	size_t n = inet_addr_len(p->addr.family);
	unsigned int i;

	for (i = p->plen; i < n * 8; i++)
		if (p->addr.raw[i / 8] & (0x80 >> (i % 8)))
			return 0;
	return 1;
}

/* rds_gids = ADDR[/LEN][, ...]: LAN addresses, alone or as a prefix of
 * at most GW_RDS_GID_ADDRS_MAX addresses, all of them together too */
static void check_gids(struct ctx *c, const struct conf_value *v,
		       struct gw_part_conf *p)
{
	char buf[4096], *tok, *save = NULL, *end;
	struct inet_prefix x;
	const char *why;
	char e[128];
	unsigned int i, total = 0;

	snprintf(buf, sizeof(buf), "%s", v->text);
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		while (*tok == ' ' || *tok == '\t')
			tok++;
		for (end = tok + strlen(tok);
		     end > tok && (end[-1] == ' ' || end[-1] == '\t');)
			*--end = '\0';
		memset(&x, 0, sizeof(x));
		if (strchr(tok, '/')) {
			if (inet_prefix_scan(tok, &x, &why) < 0) {
				perr(c, v->line, p->name, "rds_gids",
				     "'%s': %s", tok, why);
				continue;
			}
			if (!prefix_clean(&x)) {
				perr(c, v->line, p->name, "rds_gids",
				     "'%s': host bits set (a prefix, or one "
				     "address without /LEN)", tok);
				continue;
			}
		} else if (inet_addr_parse(tok, &x.addr, e, sizeof(e)) < 0) {
			perr(c, v->line, p->name, "rds_gids",
			     "'%s': an address or ADDR/LEN wanted", tok);
			continue;
		} else {
			x.plen = x.addr.family == AF_INET ? 32 : 128;
		}
		if (x.addr.family == AF_INET ?
		    (x.addr.raw[0] == 0 || x.addr.raw[0] == 127 ||
		     x.addr.raw[0] >= 224) :
		    (IN6_IS_ADDR_MULTICAST(&x.addr.v6) ||
		     IN6_IS_ADDR_LINKLOCAL(&x.addr.v6) ||
		     IN6_IS_ADDR_UNSPECIFIED(&x.addr.v6) ||
		     IN6_IS_ADDR_LOOPBACK(&x.addr.v6))) {
			perr(c, v->line, p->name, "rds_gids",
			     "'%s': not a LAN host's address (unspecified, "
			     "loopback, multicast%s)", tok,
			     x.addr.family == AF_INET6 ? " or link-local" : "");
			continue;
		}
		for (i = 0; i < p->nrds_gids; i++)
			if (p->rds_gids[i].addr.family == x.addr.family &&
			    (inet_prefix_contains(&p->rds_gids[i], &x.addr) ||
			     inet_prefix_contains(&x, &p->rds_gids[i].addr)))
				break;
		if (i < p->nrds_gids) {
			perr(c, v->line, p->name, "rds_gids",
			     "'%s' overlaps an earlier entry", tok);
			continue;
		}
		total += gw_gid_count(&x);
		if (total > GW_RDS_GID_ADDRS_MAX) {
			perr(c, v->line, p->name, "rds_gids",
			     "more than %u addresses", GW_RDS_GID_ADDRS_MAX);
			return;
		}
		if (p->nrds_gids == GW_RDS_GIDS_MAX) {
			perr(c, v->line, p->name, "rds_gids",
			     "more than %u entries", GW_RDS_GIDS_MAX);
			return;
		}
		p->rds_gids[p->nrds_gids++] = x;
	}
	if (!p->nrds_gids)
		perr(c, v->line, p->name, "rds_gids", "no address in '%s'",
		     v->text);
}

/* rds = on and its keys, as SDP's */
static void check_rds(struct ctx *c, const struct conf_inst *in,
		      struct gw_part_conf *p)
{
	struct gw_sdp_export x[GW_RDS_EXPORTS_MAX];
	static const char *const rkeys[] = { "rds_max_peers",
					     "rds_exports", "rds_gids" };
	const struct conf_value *v;
	unsigned int i;

	v = conf_inst_get(in, "rds");
	p->rds = v ? v->v.b : 0;
	v = conf_inst_get(in, "rds_max_peers");
	p->rds_max_peers = v ? (unsigned int)v->v.u : 1024;
	if (!p->rds) {
		for (i = 0; i < 3; i++)
			if ((v = conf_inst_get(in, rkeys[i])) && v->line)
				perr(c, v->line, p->name, rkeys[i],
				     "only with rds = on");
		return;
	}
	if ((v = conf_inst_get(in, "rds_gids")))
		check_gids(c, v, p);
	if (!(v = conf_inst_get(in, "rds_exports")))
		return;
	check_exports(c, v, p, "rds_exports", x, &p->nrds_exports,
		      GW_RDS_EXPORTS_MAX);
	for (i = 0; i < p->nrds_exports; i++) {
		p->rds_exports[i].lan_port = x[i].lan_port;
		p->rds_exports[i].ib_port = x[i].ib_port;
		p->rds_exports[i].ib_addr = x[i].ib_addr;
	}
}

/* A router partition's address: one an interface can have. */
static void add_address(struct ctx *c, const struct conf_value *v,
			struct gw_part_conf *p, const char *key)
{
	const char *why = inet_addr_not_host(&v->v.cidr.addr);

	if (!why && !v->v.cidr.plen)
		why = "a prefix of length 0";
	if (why)
		perr(c, v->line, p->name, key,
		     "'%s': %s, not an interface's address", v->text, why);
	else
		p->addrs[p->naddrs++] = v->v.cidr;
}

static void check_part(struct ctx *c, struct gw_conf *g,
		       const struct conf_inst *in, struct gw_part_conf *p)
{
	const struct conf_value *v;
	const char *nm = p->name;
	static const char *const tkeys[] = { "tap", "vlan", "bridge" };
	static const char *const rkeys[] = { "ifname", "address",
					     "address6" };
	unsigned int i;

	v = conf_inst_get(in, "pkey");
	p->pkey = v ? v->v.pkey : 0;
	v = conf_inst_get(in, "mode");
	p->mode = v && v->v.e == 1 ? GW_MODE_ROUTER : GW_MODE_TRANSPARENT;
	get_name(c, in, nm, "tap", p->tap, sizeof(p->tap));
	get_name(c, in, nm, "bridge", p->bridge, sizeof(p->bridge));
	get_name(c, in, nm, "ifname", p->ifname, sizeof(p->ifname));
	v = conf_inst_get(in, "vlan");
	p->vlan = v ? (unsigned int)v->v.u : 0;
	v = conf_inst_get(in, "mtu");
	p->mtu = v ? (unsigned int)v->v.u : 0;
	v = conf_inst_get(in, "eth_mtu");
	p->eth_mtu = v ? (unsigned int)v->v.u : 1500;
	v = conf_inst_get(in, "mss_clamp");
	p->mss_clamp = v ? v->v.b : 1;
	v = conf_inst_get(in, "ipoib_mode");
	p->ipoib_connected = v && v->v.e == 1;
	check_sdp(c, in, p);
	check_rds(c, in, p);
	if ((v = conf_inst_get(in, "address")))
		add_address(c, v, p, "address");
	if ((v = conf_inst_get(in, "address6"))) {
		if (v->v.cidr.addr.family != AF_INET6)
			perr(c, v->line, nm, "address6",
			     "'%s' is not an IPv6 prefix", v->text);
		else
			add_address(c, v, p, "address6");
	}
	if (p->mode == GW_MODE_TRANSPARENT) {
		for (i = 0; i < 3; i++)
			if ((v = conf_inst_get(in, rkeys[i])) && v->line)
				perr(c, v->line, nm, rkeys[i],
				     "only for mode = router");
		if (!!p->tap[0] == !!p->vlan)
			perr(c, conf_inst_line(in), nm, NULL,
			     "transparent mode takes tap = NAME or vlan = ID "
			     "(one of them)");
		if (p->vlan && !g->trunk[0])
			perr(c, line_of(in, "vlan"), nm, "vlan",
			     "needs trunk = IFNAME in [gateway]");
		if (p->bridge[0] && !p->tap[0])
			perr(c, line_of(in, "bridge"), nm, "bridge",
			     "only with tap");
	} else {
		for (i = 0; i < 3; i++)
			if ((v = conf_inst_get(in, tkeys[i])) && v->line)
				perr(c, v->line, nm, tkeys[i],
				     "only for mode = transparent");
		if (!p->naddrs && !conf_inst_get(in, "address") &&
		    !conf_inst_get(in, "address6"))
			perr(c, conf_inst_line(in), nm, "address",
			     "router mode needs the gateway's address on "
			     "the partition");
		if (!p->ifname[0])
			snprintf(p->ifname, sizeof(p->ifname), "ib%04x",
				 p->pkey | 0x8000);
	}
}

/*
 * No two partitions share a P_Key, VLAN or interface name, or export the
 * same LAN port (exports listen on every address of the gateway's host).
 * SDP and RDS may be on in several: each partition's endpoint listens in
 * its own partition (the listeners' P_Key).
 */
static void check_unique(struct ctx *c, struct gw_conf *g)
{
	char abuf[INET_ADDR_STRLEN];
	unsigned int i, j;

	for (i = 0; i < g->nparts; i++) {
		struct gw_part_conf *a = &g->parts[i];

		for (j = 0; j < i; j++) {
			struct gw_part_conf *b = &g->parts[j];
			const char *na[] = { a->tap, a->ifname };
			const char *nb[] = { b->tap, b->ifname };
			unsigned int x, y;

			if ((a->pkey & 0x7fff) == (b->pkey & 0x7fff))
				perr(c, a->line, a->name, "pkey",
				     "0x%04x is partition %s's already",
				     a->pkey, b->name);
			if (a->vlan && a->vlan == b->vlan)
				perr(c, a->line, a->name, "vlan",
				     "%u is partition %s's already", a->vlan,
				     b->name);
			for (x = 0; x < 2; x++)
				for (y = 0; y < 2; y++)
					if (na[x][0] && !strcmp(na[x], nb[y]))
						perr(c, a->line, a->name, NULL,
						     "interface '%s' is "
						     "partition %s's already",
						     na[x], b->name);
			/* two router interfaces with one address: the
			 * kernel would route it to either */
			for (x = 0; x < a->naddrs; x++)
				for (y = 0; y < b->naddrs; y++)
					if (inet_addr_equal(&a->addrs[x].addr,
							    &b->addrs[y].addr))
						perr(c, a->line, a->name,
						     "address", "%s is "
						     "partition %s's already",
						     inet_addr_str(
							     &a->addrs[x].addr,
							     abuf,
							     sizeof(abuf)),
						     b->name);
			for (x = 0; x < a->nsdp_exports; x++)
				for (y = 0; y < b->nsdp_exports; y++)
					if (a->sdp_exports[x].lan_port ==
					    b->sdp_exports[y].lan_port)
						perr(c, a->line, a->name,
						     "sdp_exports", "LAN port "
						     "%u is exported by "
						     "partition %s already",
						     a->sdp_exports[x].lan_port,
						     b->name);
			for (x = 0; x < a->nrds_exports; x++)
				for (y = 0; y < b->nrds_exports; y++)
					if (a->rds_exports[x].lan_port ==
					    b->rds_exports[y].lan_port)
						perr(c, a->line, a->name,
						     "rds_exports", "LAN port "
						     "%u is exported by "
						     "partition %s already",
						     a->rds_exports[x].lan_port,
						     b->name);
		}
		if (g->trunk[0] && (!strcmp(a->tap, g->trunk) ||
				    !strcmp(a->ifname, g->trunk)))
			perr(c, a->line, a->name, NULL,
			     "interface '%s' is the trunk", g->trunk);
		/* the tap is made and then put into the bridge: one name
		 * cannot be both */
		if (a->tap[0] && !strcmp(a->tap, a->bridge))
			perr(c, a->line, a->name, "bridge",
			     "'%s' is the tap's name too", a->bridge);
		for (j = 0; j < g->nparts; j++)
			if (j != i && g->parts[j].bridge[0] &&
			    (!strcmp(g->parts[j].bridge, a->tap) ||
			     !strcmp(g->parts[j].bridge, a->ifname)))
				perr(c, a->line, a->name, NULL,
				     "interface '%s' is partition %s's "
				     "bridge", g->parts[j].bridge,
				     g->parts[j].name);
	}
}

/* "1.2.3.4:PORT" or "[v6]:PORT", port 1..65535 */
static int parse_listen(const char *s, char *addr, size_t cap,
			unsigned int *port)
{
	const char *colon = strrchr(s, ':');
	unsigned long long v;
	const char *why;
	struct in6_addr a6;
	struct in_addr a4;
	size_t n;

	if (!colon || conf_parse_uint(colon + 1, 1, 65535, &v, &why) < 0)
		return -1;
	n = (size_t)(colon - s);
	if (n >= 2 && s[0] == '[' && s[n - 1] == ']') {
		s++;
		n -= 2;
		if (n >= cap)
			return -1;
		memcpy(addr, s, n);
		addr[n] = '\0';
		if (inet_pton(AF_INET6, addr, &a6) != 1)
			return -1;
	} else {
		if (n >= cap)
			return -1;
		memcpy(addr, s, n);
		addr[n] = '\0';
		if (inet_pton(AF_INET, addr, &a4) != 1)
			return -1;
	}
	*port = (unsigned int)v;
	return 0;
}

int gw_conf_load(const char *path, struct gw_conf *g, FILE *err)
{
	struct conf *cfg = NULL;
	const struct conf_inst *in, *gw;
	const char *s;
	struct ctx c = { .path = path, .err = err };
	int n, i;

	memset(g, 0, sizeof(*g));
	snprintf(g->path, sizeof(g->path), "%s", path);
	n = conf_load(path, schema, &cfg);
	if (n < 0) {
		fprintf(err, "%s: %s\n", path, strerror(errno));
		return -1;
	}
	for (i = 0; i < conf_nerrors(cfg); i++)
		fprintf(err, "%s\n", conf_error(cfg, i)->msg);
	c.n = n;
	/* the whole-file checks run too, on what did parse, so that one
	 * run shows every error */
	gw = conf_inst_find(cfg, "gateway");
	if (!gw) {
		conf_free(cfg);
		return c.n ? c.n : 1;
	}
	s = conf_get_str(cfg, "gateway", "fabric");
	snprintf(g->fabric, sizeof(g->fabric), "%s", s ? s : "");
	if (g->fabric[0] && strncmp(g->fabric, "soft:", 5) &&
	    strncmp(g->fabric, "verbs:", 6))
		perr(&c, line_of(gw, "fabric"), NULL, "fabric",
		     "'%s': soft:PATH or verbs:DEVICE[:PORT]", g->fabric);
	s = conf_get_str(cfg, "gateway", "node");
	if (s && strlen(s) > FSP_NODE_MAX - 1)
		perr(&c, line_of(gw, "node"), NULL, "node",
		     "longer than %d characters", FSP_NODE_MAX - 1);
	else if (s && !fsp_node_name_ok(s))
		/* the soft fabric's rule (ibfabricd refuses the attach) */
		perr(&c, line_of(gw, "node"), NULL, "node",
		     "'%s': letters, digits, '-', '_' and '.' only", s);
	else if (s)
		snprintf(g->node, sizeof(g->node), "%s", s);
	if (!strncmp(g->fabric, "soft:", 5) && !s)
		perr(&c, conf_inst_line(gw), NULL, "node",
		     "a soft fabric needs the node's name");
	s = conf_get_str(cfg, "gateway", "control");
	snprintf(g->control, sizeof(g->control), "%s", s ? s : "");
	get_name(&c, gw, NULL, "trunk", g->trunk, sizeof(g->trunk));
	{
		unsigned long long u = 4096;

		conf_get_uint(cfg, "gateway", "neigh_max", &u);
		g->neigh_max = (unsigned int)u;
	}
	s = conf_get_str(cfg, "gateway", "metrics");
	if (s && parse_listen(s, g->metrics_addr, sizeof(g->metrics_addr),
			      &g->metrics_port) < 0)
		perr(&c, line_of(gw, "metrics"), NULL, "metrics",
		     "'%s': ADDRESS:PORT wanted, such as 127.0.0.1:9477 or "
		     "[::1]:9477", s);
	for (in = conf_inst_first(cfg, "partition"); in;
	     in = conf_inst_next(in)) {
		struct gw_part_conf *p;

		if (g->nparts == GW_MAX_PARTS) {
			perr(&c, conf_inst_line(in), conf_inst_name(in), NULL,
			     "more than %d partitions", GW_MAX_PARTS);
			break;
		}
		p = &g->parts[g->nparts++];
		snprintf(p->name, sizeof(p->name), "%s", conf_inst_name(in));
		p->line = conf_inst_line(in);
		check_part(&c, g, in, p);
	}
	check_unique(&c, g);
	conf_free(cfg);
	return c.n;
}

void gw_conf_write_gateway(FILE *f, const struct gw_conf *g)
{
	fprintf(f, "[gateway]\nfabric = %s\n", g->fabric);
	if (g->node[0])
		fprintf(f, "node = %s\n", g->node);
	fprintf(f, "control = %s\n", g->control);
	if (g->trunk[0])
		fprintf(f, "trunk = %s\n", g->trunk);
	fprintf(f, "neigh_max = %u\n", g->neigh_max);
	if (g->metrics_addr[0])
		fprintf(f, strchr(g->metrics_addr, ':') ?
			"metrics = [%s]:%u\n" : "metrics = %s:%u\n",
			g->metrics_addr, g->metrics_port);
}

static void gw_conf_write_rds(FILE *f, const struct gw_part_conf *p)
{
	char a[INET_ADDR_STRLEN];
	unsigned int i;

	fprintf(f, "rds = %s\n", p->rds ? "on" : "off");
	if (!p->rds)
		return;
	fprintf(f, "rds_max_peers = %u\n", p->rds_max_peers);
	for (i = 0; i < p->nrds_exports; i++) {
		const struct gw_rds_export *x = &p->rds_exports[i];

		fprintf(f, "%s%u=%s%s%s:%u", i ? ", " : "rds_exports = ",
			x->lan_port, x->ib_addr.family == AF_INET6 ? "[" : "",
			inet_addr_str(&x->ib_addr, a, sizeof(a)),
			x->ib_addr.family == AF_INET6 ? "]" : "", x->ib_port);
	}
	if (p->nrds_exports)
		fputc('\n', f);
	for (i = 0; i < p->nrds_gids; i++) {
		const struct inet_prefix *g = &p->rds_gids[i];
		char b[INET_PREFIX_STRLEN];

		fprintf(f, "%s%s", i ? ", " : "rds_gids = ",
			gw_gid_count(g) == 1 ?
			inet_addr_str(&g->addr, b, sizeof(b)) :
			inet_prefix_str(g, b, sizeof(b)));
	}
	if (p->nrds_gids)
		fputc('\n', f);
}

void gw_conf_write_part(FILE *f, const struct gw_part_conf *p)
{
	char a[INET_PREFIX_STRLEN];
	unsigned int i;

	fprintf(f, "\n[partition %s]\npkey = 0x%04x\nmode = %s\n", p->name,
		p->pkey, gw_mode_name(p->mode));
	if (p->mode == GW_MODE_TRANSPARENT) {
		if (p->tap[0])
			fprintf(f, "tap = %s\n", p->tap);
		if (p->vlan)
			fprintf(f, "vlan = %u\n", p->vlan);
		if (p->bridge[0])
			fprintf(f, "bridge = %s\n", p->bridge);
	} else {
		fprintf(f, "ifname = %s\n", p->ifname);
		for (i = 0; i < p->naddrs; i++)
			fprintf(f, "%s = %s\n", i ? "address6" : "address",
				inet_prefix_str(&p->addrs[i], a, sizeof(a)));
	}
	if (p->mtu)
		fprintf(f, "mtu = %u\n", p->mtu);
	fprintf(f, "eth_mtu = %u\nmss_clamp = %s\nipoib_mode = %s\n",
		p->eth_mtu, p->mss_clamp ? "yes" : "no",
		p->ipoib_connected ? "connected" : "datagram");
	gw_conf_write_rds(f, p);
	fprintf(f, "sdp = %s\n", p->sdp ? "on" : "off");
	if (!p->sdp)
		return;
	fprintf(f, "sdp_max_conns = %u\n", p->sdp_max_conns);
	for (i = 0; i < p->nsdp_exports; i++) {
		const struct gw_sdp_export *x = &p->sdp_exports[i];

		fprintf(f, "%s%u=%s%s%s:%u", i ? ", " : "sdp_exports = ",
			x->lan_port, x->ib_addr.family == AF_INET6 ? "[" : "",
			inet_addr_str(&x->ib_addr, a, sizeof(a)),
			x->ib_addr.family == AF_INET6 ? "]" : "", x->ib_port);
	}
	if (p->nsdp_exports)
		fputc('\n', f);
}

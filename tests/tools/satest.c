// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * satest: runs SA requests through ibgw's SA client, one after another,
 * and prints each answer as one line of fields, so that the same
 * scenario can be run against ibfabricd and against OpenSM (on ibsim,
 * through the umad provider) and the outputs compared.
 *
 *   satest [-F SPEC | -s SOCK] [--timeout MS] [--retries N] [--show-tries]
 *          NODE OP...
 *
 * Each OP is one argument of words:
 *   join MGID STATE [create] [qkey=Q] [pkey=P] [sl=N] [tclass=N] [flow=N]
 *        [scope=N] [mtu=SEL:CODE] [rate=SEL:CODE] [port=GID]
 *   leave MGID STATE [port=GID]
 *   get MGID
 *   path DGID [pkey=P] [sgid=GID]
 *   inform TRAP on|off
 *   notices MS          wait MS milliseconds, print Notices received
 * STATE is full, non, sonon, sofull or a number (JoinState bits).
 * The first line printed is "self gid=... lid=... sm_lid=...".
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "fabric/fabric.h"
#include "fabric/sa_client.h"

static int show_tries;

struct ctx {
	struct event_base *base;
	int done;
	struct sa_result res;
};

static void done_cb(void *arg, const struct sa_result *res)
{
	struct ctx *x = arg;

	x->res = *res;
	x->done = 1;
	event_base_loopbreak(x->base);
}

static void notice_cb(void *arg, const struct sa_notice *n)
{
	union fab_gid g;
	char gs[64];

	(void)arg;
	memcpy(g.raw, n->data_details + 6, 16);
	fab_gid_to_str(&g, gs, sizeof(gs));
	printf("notice trap=%u issuer_lid=0x%04x gid=%s\n", n->trap_number,
	       n->issuer_lid, gs);
	fflush(stdout);
}

static int parse_num(const char *s, unsigned long max, unsigned long *out)
{
	char *end;

	errno = 0;
	*out = strtoul(s, &end, 0);
	return errno || end == s || *end || *out > max ? -1 : 0;
}

static int parse_state(const char *s, uint8_t *out)
{
	unsigned long v;

	if (!strcmp(s, "full"))
		*out = SA_JOIN_FULL;
	else if (!strcmp(s, "non"))
		*out = SA_JOIN_NON;
	else if (!strcmp(s, "sonon"))
		*out = SA_JOIN_SENDONLY_NON;
	else if (!strcmp(s, "sofull"))
		*out = SA_JOIN_SENDONLY_FULL;
	else if (parse_num(s, 15, &v) == 0)
		*out = (uint8_t)v;
	else
		return -1;
	return 0;
}

static void print_mcm(const struct sa_mcmember *m)
{
	char g[64], p[64];

	fab_gid_to_str(&m->mgid, g, sizeof(g));
	fab_gid_to_str(&m->port_gid, p, sizeof(p));
	printf(" mgid=%s port=%s mlid=0x%04x qkey=0x%08x pkey=0x%04x "
	       "mtu=%u:%u rate=%u:%u life=%u:%u sl=%u tclass=%u flow=0x%x "
	       "hop=%u scope=%u join=0x%x proxy=%u", g, p, m->mlid, m->qkey,
	       m->pkey, m->mtu_sel, m->mtu, m->rate_sel, m->rate, m->life_sel,
	       m->life, m->sl, m->tclass, m->flow_label, m->hop_limit,
	       m->scope, m->join_state, m->proxy_join);
}

static void print_path(const struct sa_path *r)
{
	char d[64], s[64];

	fab_gid_to_str(&r->dgid, d, sizeof(d));
	fab_gid_to_str(&r->sgid, s, sizeof(s));
	printf(" dgid=%s sgid=%s dlid=0x%04x slid=0x%04x pkey=0x%04x sl=%u "
	       "mtu=%u:%u rate=%u:%u life=%u:%u hop=%u tclass=%u "
	       "reversible=%u numb_path=%u raw=%u", d, s, r->dlid, r->slid,
	       r->pkey, r->sl, r->mtu_sel, r->mtu, r->rate_sel, r->rate,
	       r->life_sel, r->life, r->hop_limit, r->tclass, r->reversible,
	       r->numb_path, r->raw_traffic);
}

static int bad(const char *op, const char *why)
{
	fprintf(stderr, "satest: op '%s': %s\n", op, why);
	return 2;
}

static int sel_code(const char *v, uint8_t *sel, uint8_t *code)
{
	unsigned long a, b;
	char tmp[32], *colon;

	snprintf(tmp, sizeof(tmp), "%s", v);
	colon = strchr(tmp, ':');
	if (!colon)
		return -1;
	*colon = '\0';
	if (parse_num(tmp, 3, &a) || parse_num(colon + 1, 63, &b))
		return -1;
	*sel = (uint8_t)a;
	*code = (uint8_t)b;
	return 0;
}

/* Runs one op; returns 0, 1 (local failure) or 2 (bad op). */
static int run_op(struct sa_client *sa, struct ctx *x, const char *opstr,
		  const struct fab_port_attr *pa)
{
	char buf[512], *w[16], *save = NULL, *t;
	int nw = 0, i;
	struct sa_mcmember m;
	struct sa_path pr;
	uint64_t mask = 0;
	unsigned long v;
	uint32_t id = 0;
	char rs[96];

	snprintf(buf, sizeof(buf), "%s", opstr);
	for (t = strtok_r(buf, " ", &save); t && nw < 16;
	     t = strtok_r(NULL, " ", &save))
		w[nw++] = t;
	if (!nw)
		return bad(opstr, "empty");
	memset(&m, 0, sizeof(m));
	memset(&pr, 0, sizeof(pr));
	if (!strcmp(w[0], "notices")) {
		struct timeval tv;

		if (nw != 2 || parse_num(w[1], 600000, &v))
			return bad(opstr, "notices MS");
		tv.tv_sec = (long)(v / 1000);
		tv.tv_usec = (long)(v % 1000) * 1000;
		event_base_loopexit(x->base, &tv);
		event_base_dispatch(x->base);
		return 0;
	}
	if (!strcmp(w[0], "join") || !strcmp(w[0], "leave") ||
	    !strcmp(w[0], "get")) {
		int is_get = !strcmp(w[0], "get");

		if (nw < (is_get ? 2 : 3) ||
		    fab_gid_from_str(w[1], &m.mgid) < 0)
			return bad(opstr, "MGID expected");
		mask = SA_MCM_MGID;
		if (!is_get) {
			if (parse_state(w[2], &m.join_state) < 0)
				return bad(opstr, "bad JoinState");
			m.port_gid = pa->gid;
			mask = SA_MCM_JOIN_MASK;
		}
		for (i = is_get ? 2 : 3; i < nw; i++) {
			char *eq = strchr(w[i], '=');
			const char *k = w[i], *val = eq ? eq + 1 : "";

			if (eq)
				*eq = '\0';
			if (!strcmp(k, "create")) {
				mask |= SA_MCM_CREATE_MASK;
			} else if (!strcmp(k, "qkey") &&
				   !parse_num(val, 0xffffffff, &v)) {
				m.qkey = (uint32_t)v;
				mask |= SA_MCM_QKEY;
			} else if (!strcmp(k, "pkey") &&
				   !parse_num(val, 0xffff, &v)) {
				m.pkey = (uint16_t)v;
				mask |= SA_MCM_PKEY;
			} else if (!strcmp(k, "sl") && !parse_num(val, 15, &v)) {
				m.sl = (uint8_t)v;
				mask |= SA_MCM_SL;
			} else if (!strcmp(k, "tclass") &&
				   !parse_num(val, 255, &v)) {
				m.tclass = (uint8_t)v;
				mask |= SA_MCM_TCLASS;
			} else if (!strcmp(k, "flow") &&
				   !parse_num(val, 0xfffff, &v)) {
				m.flow_label = (uint32_t)v;
				mask |= SA_MCM_FLOW_LABEL;
			} else if (!strcmp(k, "scope") &&
				   !parse_num(val, 15, &v)) {
				m.scope = (uint8_t)v;
				mask |= SA_MCM_SCOPE;
			} else if (!strcmp(k, "mtu") &&
				   !sel_code(val, &m.mtu_sel, &m.mtu)) {
				mask |= SA_MCM_MTU_SEL | SA_MCM_MTU;
			} else if (!strcmp(k, "rate") &&
				   !sel_code(val, &m.rate_sel, &m.rate)) {
				mask |= SA_MCM_RATE_SEL | SA_MCM_RATE;
			} else if (!strcmp(k, "port") &&
				   !fab_gid_from_str(val, &m.port_gid)) {
				mask |= SA_MCM_PORT_GID;
			} else {
				return bad(opstr, "unknown or bad option");
			}
		}
		if (!strcmp(w[0], "join"))
			id = sa_mcm_join(sa, &m, mask, done_cb, x);
		else if (!strcmp(w[0], "leave"))
			id = sa_mcm_leave(sa, &m, mask, done_cb, x);
		else
			id = sa_mcm_get(sa, &m, mask, done_cb, x);
	} else if (!strcmp(w[0], "path")) {
		if (nw < 2 || fab_gid_from_str(w[1], &pr.dgid) < 0)
			return bad(opstr, "DGID expected");
		pr.sgid = pa->gid;
		pr.numb_path = 1;
		pr.reversible = 1;
		mask = SA_PR_DGID | SA_PR_SGID | SA_PR_NUMB_PATH;
		for (i = 2; i < nw; i++) {
			if (!strncmp(w[i], "pkey=", 5) &&
			    !parse_num(w[i] + 5, 0xffff, &v)) {
				pr.pkey = (uint16_t)v;
				mask |= SA_PR_PKEY;
			} else if (!strncmp(w[i], "sgid=", 5) &&
				   !fab_gid_from_str(w[i] + 5, &pr.sgid)) {
				;
			} else {
				return bad(opstr, "unknown or bad option");
			}
		}
		id = sa_path_get(sa, &pr, mask, done_cb, x);
	} else if (!strcmp(w[0], "inform")) {
		if (nw != 3 || parse_num(w[1], 0xffff, &v) ||
		    (strcmp(w[2], "on") && strcmp(w[2], "off")))
			return bad(opstr, "inform TRAP on|off");
		id = sa_inform(sa, (uint16_t)v, !strcmp(w[2], "on"), done_cb,
			       x);
	} else {
		return bad(opstr, "unknown op");
	}
	if (!id) {
		printf("%s: error %s\n", opstr, strerror(errno));
		return 1;
	}
	x->done = 0;
	while (!x->done)
		if (event_base_dispatch(x->base) < 0)
			break;
	printf("%s: %s status=0x%04x", opstr,
	       sa_result_str(&x->res, rs, sizeof(rs)), x->res.status);
	if (show_tries)
		printf(" tries=%u", x->res.tries);
	if (sa_result_ok(&x->res)) {
		printf(" method=0x%02x nrec=%u", x->res.method, x->res.nrec);
		if (x->res.nrec && x->res.attr_id == SA_ATTR_MCMEMBER_RECORD)
			print_mcm(&x->res.rec.mcm[0]);
		else if (x->res.nrec && x->res.attr_id == SA_ATTR_PATH_RECORD)
			print_path(&x->res.rec.path[0]);
	}
	printf("\n");
	fflush(stdout);
	return x->res.err == SA_CLIENT_OK ? 0 : 1;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "fabric", required_argument, NULL, 'F' },
		{ "socket", required_argument, NULL, 's' },
		{ "timeout", required_argument, NULL, 't' },
		{ "retries", required_argument, NULL, 'r' },
		{ "show-tries", no_argument, NULL, 'T' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char spec[512] = "soft:" FAB_DEFAULT_SOFT_PATH;
	struct sa_client_cfg cfg = { 0 };
	struct fab_port_attr pa;
	struct fab_dev *dev;
	struct sa_client *sa;
	struct ctx x;
	unsigned long v;
	char gs[64], err[FAB_ERRLEN];
	int ch, i, rc = 0, r;

	while ((ch = getopt_long(argc, argv, "F:s:h", lo, NULL)) != -1) {
		switch (ch) {
		case 'F': snprintf(spec, sizeof(spec), "%s", optarg); break;
		case 's': snprintf(spec, sizeof(spec), "soft:%s", optarg);
			  break;
		case 't':
			if (parse_num(optarg, 600000, &v) || !v) {
				fprintf(stderr, "satest: bad --timeout\n");
				return 2;
			}
			cfg.timeout_ms = (unsigned int)v;
			break;
		case 'r':
			if (parse_num(optarg, 100, &v) || !v) {
				fprintf(stderr, "satest: bad --retries\n");
				return 2;
			}
			cfg.retries = (unsigned int)v;
			break;
		case 'T': show_tries = 1; break;
		case 'h':
			printf("usage: satest [-F SPEC | -s SOCK] [--timeout MS]"
			       " [--retries N] NODE OP...\n");
			return 0;
		default:
			return 2;
		}
	}
	if (argc - optind < 1) {
		fprintf(stderr, "usage: satest [-F SPEC | -s SOCK] NODE OP...\n");
		return 2;
	}
	dev = fab_open(spec, argv[optind], err, sizeof(err));
	if (!dev || fab_query_port(dev, &pa, err, sizeof(err)) < 0) {
		fprintf(stderr, "satest: %s\n", err);
		return 1;
	}
	memset(&x, 0, sizeof(x));
	/* under umad2sim (OpenSM on ibsim) MAD descriptors are fakes that
	 * only its poll() wrapper understands: no epoll there */
	if (!strncmp(spec, "umad:", 5)) {
		struct event_config *ec = event_config_new();

		event_config_avoid_method(ec, "epoll");
		event_config_avoid_method(ec, "select");
		x.base = event_base_new_with_config(ec);
		event_config_free(ec);
	} else {
		x.base = event_base_new();
	}
	if (!x.base)
		snprintf(err, sizeof(err), "SA client: no event base");
	sa = x.base ? sa_client_new(x.base, dev, &cfg, err, sizeof(err)) :
		      NULL;
	if (!sa) {
		fprintf(stderr, "satest: %s\n", err);
		return 1;
	}
	sa_client_on_notice(sa, notice_cb, NULL);
	fab_gid_to_str(&pa.gid, gs, sizeof(gs));
	printf("self gid=%s lid=0x%04x sm_lid=0x%04x\n", gs, pa.lid,
	       pa.sm_lid);
	for (i = optind + 1; i < argc; i++) {
		r = run_op(sa, &x, argv[i], &pa);
		if (r == 2) {
			rc = 2;
			break;
		}
		if (r)
			rc = 1;
	}
	sa_client_free(sa);
	event_base_free(x.base);
	fab_close(dev);
	return rc;
}

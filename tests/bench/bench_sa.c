// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * bench_sa: ibfabricd's subnet administrator at scale.  One process, one
 * event loop, N attached nodes (b0..bN-1, each its own fab_dev and SA
 * client), then G multicast groups created, joined and left and P
 * PathRecords between random node pairs, with `window` requests in
 * flight.  Printed: requests per second, p50/p99 latency (submit to
 * callback) and ibfabricd's memory, beside baselines measured in the
 * same run:
 *   - PathRecord from a node to itself through the SA client: the
 *     cheapest SA request the client can make; the ratio columns are
 *     against it, so they show what the SA's work costs.  It runs after
 *     an untimed warm-up and once more at the end, which shows how much
 *     the machine drifted during the run;
 *   - ClassPortInfo sent as a raw MAD (fab_mad_*, no SA client): the
 *     transport's floor, so the SA client's own overhead shows too.
 *
 *   bench_sa -s SOCK [--pid IBFABRICD_PID] [--nodes 1000]
 *            [--groups 10000] [--paths 20000] [--base N] [--window 64]
 *
 * Every answer must be status 0; failures are counted and make the exit
 * status 1.  The SA clients run with a 5000 ms timeout and one retry, so
 * an overloaded SA shows up as failures (and retries, printed) rather
 * than being hidden.  With --pid, ibfabricd's VmRSS and CPU time come
 * from /proc; the memory figures mean something only for a freshly
 * started ibfabricd (memory it freed earlier is reused silently).
 * The groups are checked in ibfabricd itself: the first and the last
 * present after creation, none left after the leaves.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <event2/event.h>

#include "fabric/fabric.h"
#include "fabric/prov_soft.h"
#include "fabric/sa_client.h"
#include "fabric/sa_mad.h"

#define BENCH_TIMEOUT_MS	5000
#define BENCH_RETRIES		1
#define BENCH_QKEY		0x1234
#define BENCH_PKEY		0xffff
#define BENCH_STALL_S		15	/* silent this long: give up */
#define ATTR_CLASS_PORT_INFO	0x0001
#define REPORT_MAX		65536	/* ibfabricd's FSP_MSG_MAX */

enum op_kind {
	OP_ATTACH,	/* measured in attach_all(), not through slots */
	OP_PATH_SELF,
	OP_CPI_RAW,
	OP_CREATE,
	OP_JOIN,
	OP_PATH,
	OP_LEAVE_NON,
	OP_LEAVE_FULL,
};

struct bench;

struct node {
	struct bench *b;
	struct fab_dev *dev;
	struct sa_client *sa;
	struct fab_port_attr pa;
	struct fab_mad_agent *raw;	/* ClassPortInfo baseline only */
	struct event *raw_ev;
};

struct phase {
	const char *name;
	enum op_kind kind;
	unsigned int total, next, done, fail, retries;
	double *lat;		/* ms, one per answered request */
	unsigned int nlat;
	double t0, t1;		/* wall clock, s */
	double cli_cpu, srv_cpu;	/* CPU seconds during the phase */
	char first_err[160];
};

struct slot {
	struct bench *b;
	unsigned int no;	/* slot number */
	unsigned int idx;	/* request number in the phase */
	double t;		/* submit time */
	uint32_t tid;		/* raw MADs */
	int busy;
};

struct bench {
	struct event_base *base;
	const char *sock;
	long pid;
	unsigned int n, g, p, nbase, window;
	struct node *nodes;
	struct slot *slots;
	unsigned int nraw;	/* nodes with a raw agent */
	uint32_t raw_seq;
	struct phase *ph;	/* the running one */
	struct event *watchdog;
	double last_progress;
	int aborted;
	uint64_t rng;
	uint32_t *pairs;	/* OP_PATH: src << 16 | dst */
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double self_cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ibfabricd's CPU seconds: schedstat (ns), else stat (clock ticks) */
static double srv_cpu(const struct bench *b)
{
	char path[64], buf[1024], *p;
	unsigned long long ns, ut, st;
	FILE *f;
	int i;

	if (b->pid <= 0)
		return 0;
	snprintf(path, sizeof(path), "/proc/%ld/schedstat", b->pid);
	f = fopen(path, "r");
	if (f) {
		i = fscanf(f, "%llu", &ns);
		fclose(f);
		if (i == 1)
			return (double)ns / 1e9;
	}
	snprintf(path, sizeof(path), "/proc/%ld/stat", b->pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	p = fgets(buf, sizeof(buf), f);
	fclose(f);
	if (!p || !(p = strrchr(buf, ')')))
		return 0;
	/* after ") ": state and 10 fields, then utime stime */
	if (sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u "
		   "%llu %llu", &ut, &st) != 2)
		return 0;
	return (double)(ut + st) / 100.0;
}

/* ibfabricd's VmRSS in kB, 0 if unknown */
static unsigned long rss_kb(const struct bench *b)
{
	char path[64], line[256];
	unsigned long kb = 0;
	FILE *f;

	if (b->pid <= 0)
		return 0;
	snprintf(path, sizeof(path), "/proc/%ld/status", b->pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %lu", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

static uint64_t rnd(struct bench *b)
{
	/* xorshift64*: the same pairs every run */
	b->rng ^= b->rng >> 12;
	b->rng ^= b->rng << 25;
	b->rng ^= b->rng >> 27;
	return b->rng * 2685821657736338717ull;
}

static void group_mgid(unsigned int i, union fab_gid *g)
{
	memset(g, 0, sizeof(*g));
	g->raw[0] = 0xff;
	g->raw[1] = 0x15;
	g->raw[2] = 0x12;
	g->raw[3] = 0x34;
	g->raw[4] = 0xff;
	g->raw[5] = 0xff;
	g->raw[12] = (uint8_t)(i >> 24);
	g->raw[13] = (uint8_t)(i >> 16);
	g->raw[14] = (uint8_t)(i >> 8);
	g->raw[15] = (uint8_t)i;
}

/* ---- requests ------------------------------------------------------------ */

static void submit_next(struct bench *b, struct slot *s);

static void phase_fail(struct phase *ph, const char *fmt, const char *what)
{
	ph->fail++;
	if (!ph->first_err[0])
		snprintf(ph->first_err, sizeof(ph->first_err), fmt, what);
}

/* One request finished (answered, timed out or not sent). */
static void complete(struct bench *b, struct slot *s, int answered)
{
	struct phase *ph = b->ph;
	double t = now();

	if (answered)
		ph->lat[ph->nlat++] = (t - s->t) * 1000.0;
	ph->done++;
	ph->t1 = t;
	b->last_progress = t;
	s->busy = 0;
	submit_next(b, s);
	if (ph->done == ph->total)
		event_base_loopbreak(b->base);
}

static void sa_done(void *arg, const struct sa_result *res)
{
	struct slot *s = arg;
	struct bench *b = s->b;
	struct phase *ph = b->ph;
	char rs[96];

	if (!ph || b->aborted)	/* late: the phase was given up */
		return;
	if (res->tries > 1)
		ph->retries++;
	if (!sa_result_ok(res))
		phase_fail(ph, "%s", sa_result_str(res, rs, sizeof(rs)));
	else if (res->nrec < 1)
		phase_fail(ph, "%s", "status 0 but no record");
	complete(b, s, res->err == SA_CLIENT_OK);
}

static uint32_t send_cpi(struct bench *b, struct slot *s)
{
	struct node *nd = &b->nodes[s->no % b->nraw];
	struct fab_mad_addr to;
	static const uint8_t none[1];
	struct sa_hdr h;
	uint8_t mad[MAD_LEN];

	memset(&h, 0, sizeof(h));
	h.mad.base_version = MAD_BASE_VERSION;
	h.mad.mgmt_class = MAD_CLASS_SUBN_ADM;
	h.mad.class_version = SA_CLASS_VERSION;
	h.mad.method = MAD_METHOD_GET;
	h.mad.attr_id = ATTR_CLASS_PORT_INFO;
	do
		s->tid = ++b->raw_seq;
	while (!s->tid);
	h.mad.tid = s->tid;
	sa_mad_build(&h, none, 0, mad);	/* no record */
	memset(&to, 0, sizeof(to));
	to.lid = nd->pa.sm_lid;
	to.sl = nd->pa.sm_sl;
	to.qpn = 1;
	to.qkey = FAB_QP1_QKEY;
	return fab_mad_send(nd->raw, &to, mad, MAD_LEN) < 0 ? 0 : s->tid;
}

static void mcm_rec(struct bench *b, unsigned int node, unsigned int grp,
		    uint8_t join, struct sa_mcmember *m)
{
	memset(m, 0, sizeof(*m));
	group_mgid(grp, &m->mgid);
	m->port_gid = b->nodes[node].pa.gid;
	m->join_state = join;
	m->qkey = BENCH_QKEY;
	m->pkey = BENCH_PKEY;
	m->scope = 5;
}

static uint32_t path_req(struct bench *b, unsigned int src, unsigned int dst,
			 struct slot *s)
{
	struct sa_path pr;

	memset(&pr, 0, sizeof(pr));
	pr.sgid = b->nodes[src].pa.gid;
	pr.dgid = b->nodes[dst].pa.gid;
	pr.numb_path = 1;
	pr.reversible = 1;
	return sa_path_get(b->nodes[src].sa, &pr,
			   SA_PR_DGID | SA_PR_SGID | SA_PR_NUMB_PATH, sa_done,
			   s);
}

/* Send request i of the running phase from slot s; 0 if not sent. */
static uint32_t send_req(struct bench *b, struct slot *s, unsigned int i)
{
	unsigned int n = b->n, own = i % n, other = (i + 1) % n;
	struct sa_mcmember m;

	switch (b->ph->kind) {
	case OP_PATH_SELF:
		return path_req(b, own, own, s);
	case OP_CPI_RAW:
		return send_cpi(b, s);
	case OP_CREATE:
		mcm_rec(b, own, i, SA_JOIN_FULL, &m);
		return sa_mcm_join(b->nodes[own].sa, &m, SA_MCM_CREATE_MASK,
				   sa_done, s);
	case OP_JOIN:
		mcm_rec(b, other, i, SA_JOIN_NON, &m);
		return sa_mcm_join(b->nodes[other].sa, &m, SA_MCM_JOIN_MASK,
				   sa_done, s);
	case OP_PATH:
		return path_req(b, b->pairs[i] >> 16, b->pairs[i] & 0xffff, s);
	case OP_LEAVE_NON:
		mcm_rec(b, other, i, SA_JOIN_NON, &m);
		return sa_mcm_leave(b->nodes[other].sa, &m, SA_MCM_JOIN_MASK,
				    sa_done, s);
	case OP_LEAVE_FULL:
		mcm_rec(b, own, i, SA_JOIN_FULL, &m);
		return sa_mcm_leave(b->nodes[own].sa, &m, SA_MCM_JOIN_MASK,
				    sa_done, s);
	case OP_ATTACH:
		break;
	}
	return 0;
}

/* Give slot s the phase's next request; requests that cannot be sent
 * count as failed and the next one is tried. */
static void submit_next(struct bench *b, struct slot *s)
{
	struct phase *ph = b->ph;

	while (ph->next < ph->total && !b->aborted) {
		s->idx = ph->next++;
		s->t = now();
		s->busy = 1;
		if (send_req(b, s, s->idx))
			return;
		s->busy = 0;
		phase_fail(ph, "not sent: %s", strerror(errno));
		ph->done++;
	}
}

/* Answers to the raw ClassPortInfo requests of one node's agent. */
static void raw_rx(evutil_socket_t fd, short what, void *arg)
{
	struct node *nd = arg;
	struct bench *b = nd->b;
	uint8_t mad[MAD_LEN];
	struct sa_hdr h;
	struct slot *s;
	unsigned int k;
	char st[32];
	int len;

	(void)fd;
	(void)what;
	while ((len = fab_mad_recv(nd->raw, mad, sizeof(mad), NULL)) > 0) {
		if (sa_mad_parse(mad, (size_t)len, &h) != SA_MAD_OK ||
		    !(h.mad.method & MAD_METHOD_RESP) || !b->ph ||
		    b->ph->kind != OP_CPI_RAW)
			continue;
		for (k = 0, s = NULL; k < b->window; k++) {
			if (b->slots[k].busy &&
			    b->slots[k].tid == (uint32_t)h.mad.tid) {
				s = &b->slots[k];
				break;
			}
		}
		if (!s)
			continue;
		if (h.mad.status || h.mad.method != MAD_METHOD_GET_RESP ||
		    h.mad.attr_id != ATTR_CLASS_PORT_INFO) {
			snprintf(st, sizeof(st), "0x%04x", h.mad.status);
			phase_fail(b->ph, "ClassPortInfo answer status %s", st);
		}
		complete(b, s, 1);
	}
}

static void stall_cb(evutil_socket_t fd, short what, void *arg)
{
	struct bench *b = arg;
	struct phase *ph = b->ph;

	(void)fd;
	(void)what;
	if (!ph || ph->done == ph->total ||
	    now() - b->last_progress < BENCH_STALL_S)
		return;
	fprintf(stderr, "bench_sa: %s: no answer for %d s, %u of %u "
		"outstanding; giving up\n", ph->name, BENCH_STALL_S,
		ph->total - ph->done, ph->total);
	ph->fail += ph->total - ph->done;
	ph->done = ph->total;
	b->aborted = 1;
	event_base_loopbreak(b->base);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void run_phase(struct bench *b, struct phase *ph)
{
	double c0 = self_cpu(), s0 = srv_cpu(b);
	unsigned int k, w = b->window;

	b->ph = ph;
	ph->lat = calloc(ph->total ? ph->total : 1, sizeof(*ph->lat));
	if (!ph->lat) {
		fprintf(stderr, "bench_sa: out of memory\n");
		exit(1);
	}
	ph->t0 = ph->t1 = b->last_progress = now();
	for (k = 0; k < w && ph->next < ph->total; k++)
		submit_next(b, &b->slots[k]);
	while (ph->done < ph->total && !b->aborted)
		if (event_base_dispatch(b->base) < 0)
			break;
	ph->cli_cpu = self_cpu() - c0;
	ph->srv_cpu = srv_cpu(b) - s0;
	qsort(ph->lat, ph->nlat, sizeof(*ph->lat), cmp_double);
	b->ph = NULL;
}

/* ---- setup --------------------------------------------------------------- */

static void raise_nofile(unsigned int need)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur >= need)
		return;
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < need) {
		fprintf(stderr, "bench_sa: need %u descriptors, the hard "
			"limit is %llu\n", need,
			(unsigned long long)rl.rlim_max);
		exit(1);
	}
	rl.rlim_cur = need;
	if (setrlimit(RLIMIT_NOFILE, &rl) < 0) {
		fprintf(stderr, "bench_sa: setrlimit(NOFILE %u): %s\n", need,
			strerror(errno));
		exit(1);
	}
}

/* Attach nodes b0..bN-1 one after another; each attach is timed. */
static void attach_all(struct bench *b, struct phase *ph)
{
	struct sa_client_cfg cfg = {
		.timeout_ms = BENCH_TIMEOUT_MS, .retries = BENCH_RETRIES,
	};
	char spec[300], name[16], err[FAB_ERRLEN];
	double c0 = self_cpu(), s0 = srv_cpu(b), t;
	unsigned int i;

	snprintf(spec, sizeof(spec), "soft:%s", b->sock);
	ph->lat = calloc(b->n, sizeof(*ph->lat));
	if (!ph->lat) {
		fprintf(stderr, "bench_sa: out of memory\n");
		exit(1);
	}
	ph->t0 = now();
	for (i = 0; i < b->n; i++) {
		struct node *nd = &b->nodes[i];

		t = now();
		snprintf(name, sizeof(name), "b%u", i);
		nd->b = b;
		nd->dev = fab_open(spec, name, err, sizeof(err));
		if (!nd->dev ||
		    fab_query_port(nd->dev, &nd->pa, err, sizeof(err)) < 0 ||
		    !(nd->sa = sa_client_new(b->base, nd->dev, &cfg, err,
					     sizeof(err)))) {
			fprintf(stderr, "bench_sa: attach %s (%u attached): "
				"%s\n", name, i, err);
			exit(1);
		}
		if (fab_pkey_find(&nd->pa, BENCH_PKEY) < 0) {
			fprintf(stderr, "bench_sa: node %s lacks P_Key "
				"0x%04x\n", name, BENCH_PKEY);
			exit(1);
		}
		ph->lat[ph->nlat++] = (now() - t) * 1000.0;
	}
	ph->t1 = now();
	ph->done = ph->total = b->n;
	ph->cli_cpu = self_cpu() - c0;
	ph->srv_cpu = srv_cpu(b) - s0;
	qsort(ph->lat, ph->nlat, sizeof(*ph->lat), cmp_double);
}

/* A second SA agent on the first nodes, for raw ClassPortInfo. */
static void raw_open(struct bench *b)
{
	unsigned int k;
	char err[FAB_ERRLEN];

	b->nraw = b->n < b->window ? b->n : b->window;
	for (k = 0; k < b->nraw; k++) {
		struct node *nd = &b->nodes[k];

		nd->raw = fab_mad_open(nd->dev, MAD_CLASS_SUBN_ADM, err,
				       sizeof(err));
		if (!nd->raw) {
			fprintf(stderr, "bench_sa: MAD agent: %s\n", err);
			exit(1);
		}
		nd->raw_ev = event_new(b->base, fab_mad_fd(nd->raw),
				       EV_READ | EV_PERSIST, raw_rx, nd);
		if (!nd->raw_ev || event_add(nd->raw_ev, NULL) < 0) {
			fprintf(stderr, "bench_sa: cannot watch MAD agent\n");
			exit(1);
		}
	}
}

static void raw_close(struct bench *b)
{
	unsigned int k;

	for (k = 0; k < b->nraw; k++) {
		event_free(b->nodes[k].raw_ev);
		fab_mad_close(b->nodes[k].raw);
		b->nodes[k].raw = NULL;
	}
	b->nraw = 0;
}

/* ---- ibfabricd's view ---------------------------------------------------- */

/* Lines of "groups [MGID]" naming one of our MGIDs; *trunc when the
 * report filled ibfabricd's message cap. */
static int count_groups(struct fab_dev *obs, const char *arg, int *trunc)
{
	static char buf[REPORT_MAX];
	char cmd[96], *line, *save = NULL;
	size_t len;
	int n = 0;

	snprintf(cmd, sizeof(cmd), "groups%s%s", arg ? " " : "",
		 arg ? arg : "");
	if (fab_soft_ctl(obs, cmd, buf, sizeof(buf), NULL, 0) < 0)
		return -1;
	len = strlen(buf);
	if (trunc)
		*trunc = len + 256 >= sizeof(buf);
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		if (!strncmp(line, "ff15:1234:ffff:", 15))
			n++;
	return n;
}

static unsigned long long stat_get(struct fab_dev *obs, const char *key)
{
	static char buf[REPORT_MAX];
	unsigned long long v;
	size_t kl = strlen(key);
	char *line, *save = NULL;

	if (fab_soft_ctl(obs, "stats", buf, sizeof(buf), NULL, 0) < 0)
		return 0;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		if (!strncmp(line, key, kl) && line[kl] == ' ' &&
		    sscanf(line + kl + 1, "%llu", &v) == 1)
			return v;
	return 0;
}

/* ---- report -------------------------------------------------------------- */

static double pct(const struct phase *ph, double q)
{
	unsigned int i;

	if (!ph->nlat)
		return 0;
	i = (unsigned int)(q * (ph->nlat - 1) + 0.5);
	return ph->lat[i];
}

static double rate(const struct phase *ph)
{
	double dt = ph->t1 - ph->t0;

	return dt > 0 ? ph->done / dt : 0;
}

/* base_rate, base_p50: the baseline's; 0 prints no ratios */
static void print_row(const struct phase *ph, double base_rate,
		      double base_p50)
{
	char r1[16] = "-", r2[16] = "-";

	if (base_rate > 0 && base_p50 > 0) {
		snprintf(r1, sizeof(r1), "%.2fx", rate(ph) / base_rate);
		snprintf(r2, sizeof(r2), "%.2fx", pct(ph, 0.5) / base_p50);
	}
	printf("%-32s %6u %9.0f %8.3f %8.3f %7s %7s %7u %6u %8.1f %8.1f\n",
	       ph->name, ph->done, rate(ph), pct(ph, 0.5), pct(ph, 0.99), r1,
	       r2, ph->retries, ph->fail,
	       ph->done ? ph->srv_cpu * 1e6 / ph->done : 0,
	       ph->done ? ph->cli_cpu * 1e6 / ph->done : 0);
}

static int parse_num(const char *s, unsigned long min, unsigned long max,
		     unsigned long *out)
{
	char *end;

	errno = 0;
	*out = strtoul(s, &end, 0);
	return errno || end == s || *end || *out < min || *out > max ? -1 : 0;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: bench_sa -s SOCKET [--pid IBFABRICD_PID] "
		"[--nodes N] [--groups G]\n"
		"                [--paths P] [--base B] [--window W]\n"
		"  defaults: 1000 nodes, 10000 groups, 20000 paths, "
		"baselines of P requests, window 64\n");
}

static void parse_args(struct bench *b, int argc, char **argv)
{
	static const struct option lo[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "pid", required_argument, NULL, 'p' },
		{ "nodes", required_argument, NULL, 'n' },
		{ "groups", required_argument, NULL, 'g' },
		{ "paths", required_argument, NULL, 'P' },
		{ "base", required_argument, NULL, 'b' },
		{ "window", required_argument, NULL, 'w' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned long v;
	int ch, bad, base_set = 0;

	b->n = 1000;
	b->g = 10000;
	b->p = 20000;
	b->window = 64;
	while ((ch = getopt_long(argc, argv, "s:p:n:g:P:b:w:h", lo,
				 NULL)) != -1) {
		bad = 0;
		switch (ch) {
		case 's': b->sock = optarg; break;
		case 'p':
			bad = parse_num(optarg, 1, 1ul << 22, &v);
			b->pid = (long)v;
			break;
		case 'n':	/* LIDs 2..0xBFFF; pairs pack 16-bit indexes */
			bad = parse_num(optarg, 1, 0xBFFD, &v);
			b->n = (unsigned int)v;
			break;
		case 'g':
			bad = parse_num(optarg, 0, 1000000, &v);
			b->g = (unsigned int)v;
			break;
		case 'P':
			bad = parse_num(optarg, 0, 10000000, &v);
			b->p = (unsigned int)v;
			break;
		case 'b':
			bad = parse_num(optarg, 0, 10000000, &v);
			b->nbase = (unsigned int)v;
			base_set = 1;
			break;
		case 'w':
			bad = parse_num(optarg, 1, 4096, &v);
			b->window = (unsigned int)v;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			exit(2);
		}
		if (bad) {
			fprintf(stderr, "bench_sa: bad value '%s'\n", optarg);
			exit(2);
		}
	}
	if (!b->sock || optind != argc) {
		usage(stderr);
		exit(2);
	}
	if (!base_set)
		b->nbase = b->p;
}

static void make_pairs(struct bench *b)
{
	unsigned int i, src, dst;

	b->rng = 0x9e3779b97f4a7c15ull;
	b->pairs = calloc(b->p ? b->p : 1, sizeof(*b->pairs));
	if (!b->pairs) {
		fprintf(stderr, "bench_sa: out of memory\n");
		exit(1);
	}
	for (i = 0; i < b->p; i++) {
		src = (unsigned int)(rnd(b) % b->n);
		dst = src;
		if (b->n > 1) {
			dst = (unsigned int)(rnd(b) % (b->n - 1));
			if (dst >= src)
				dst++;
		}
		b->pairs[i] = src << 16 | dst;
	}
}

int main(int argc, char **argv)
{
	struct phase ph_attach = { .name = "attach node (serial)",
				   .kind = OP_ATTACH };
	struct phase ph_warm = { .name = "warm-up", .kind = OP_PATH_SELF };
	struct phase ph_base = { .name = "BASE: PathRecord to self",
				 .kind = OP_PATH_SELF };
	struct phase ph_base2 = { .name = "BASE again, at the end",
				  .kind = OP_PATH_SELF };
	struct phase ph_cpi = { .name = "ClassPortInfo, raw MAD",
				.kind = OP_CPI_RAW };
	struct phase ph_create = { .name = "join: create group (Full)",
				   .kind = OP_CREATE };
	struct phase ph_join = { .name = "join: existing group (NonMbr)",
				 .kind = OP_JOIN };
	struct phase ph_path = { .name = "PathRecord, random pair",
				 .kind = OP_PATH };
	struct phase ph_lnon = { .name = "leave: NonMember",
				 .kind = OP_LEAVE_NON };
	struct phase ph_lfull = { .name = "leave: last Full (deletes)",
				  .kind = OP_LEAVE_FULL };
	struct phase *rows[] = { &ph_base, &ph_cpi, &ph_create, &ph_join,
				 &ph_path, &ph_lnon, &ph_lfull, &ph_base2 };
	unsigned long rss0, rss_nodes, rss_g0, rss_groups, rss_left;
	unsigned long long err0, drop0, req0;
	struct bench b;
	struct fab_dev *obs;
	char spec[300], mg[64], err[FAB_ERRLEN];
	union fab_gid gid;
	struct timeval one_s = { 1, 0 };
	double t_start = now(), base_rate, base_p50;
	int rc = 0, trunc = 0, before, first, last, after;
	unsigned int i;

	memset(&b, 0, sizeof(b));
	parse_args(&b, argc, argv);
	ph_base.total = ph_base2.total = ph_cpi.total = b.nbase;
	ph_warm.total = b.nbase < 2000 ? b.nbase : 2000;
	ph_create.total = ph_join.total = b.g;
	ph_lnon.total = ph_lfull.total = b.g;
	ph_path.total = b.p;
	if (b.n < 2)	/* nobody else to join or leave */
		ph_join.total = ph_lnon.total = 0;
	raise_nofile(2 * b.n + b.window + 64);
	b.nodes = calloc(b.n, sizeof(*b.nodes));
	b.slots = calloc(b.window, sizeof(*b.slots));
	b.base = event_base_new();
	if (!b.nodes || !b.slots || !b.base) {
		fprintf(stderr, "bench_sa: out of memory\n");
		return 1;
	}
	for (i = 0; i < b.window; i++) {
		b.slots[i].b = &b;
		b.slots[i].no = i;
	}
	b.watchdog = event_new(b.base, -1, EV_PERSIST, stall_cb, &b);
	if (!b.watchdog || event_add(b.watchdog, &one_s) < 0) {
		fprintf(stderr, "bench_sa: no timer\n");
		return 1;
	}
	make_pairs(&b);
	snprintf(spec, sizeof(spec), "soft:%s", b.sock);
	obs = fab_open(spec, FAB_SOFT_OBSERVER, err, sizeof(err));
	if (!obs) {
		fprintf(stderr, "bench_sa: %s\n", err);
		return 1;
	}
	err0 = stat_get(obs, "sa_errors");
	drop0 = stat_get(obs, "dropped");
	req0 = stat_get(obs, "sa_requests");

	rss0 = rss_kb(&b);
	attach_all(&b, &ph_attach);
	rss_nodes = rss_kb(&b);

	run_phase(&b, &ph_warm);	/* untimed: first-touch costs */
	run_phase(&b, &ph_base);
	/* the raw agents stay open to the end: ibfabricd spins on a MAD
	 * agent socket closed while its node's connection stays up */
	raw_open(&b);
	run_phase(&b, &ph_cpi);

	rss_g0 = rss_kb(&b);
	run_phase(&b, &ph_create);
	rss_groups = rss_kb(&b);
	before = count_groups(obs, NULL, &trunc);
	group_mgid(0, &gid);
	fab_gid_to_str(&gid, mg, sizeof(mg));
	first = b.g ? count_groups(obs, mg, NULL) : 1;
	group_mgid(b.g ? b.g - 1 : 0, &gid);
	fab_gid_to_str(&gid, mg, sizeof(mg));
	last = b.g ? count_groups(obs, mg, NULL) : 1;

	run_phase(&b, &ph_join);
	run_phase(&b, &ph_path);
	run_phase(&b, &ph_lnon);
	run_phase(&b, &ph_lfull);
	rss_left = rss_kb(&b);
	after = count_groups(obs, NULL, NULL);
	run_phase(&b, &ph_base2);	/* how much the machine drifted */

	printf("== SA at scale: %u nodes, %u groups, %u paths, window %u, "
	       "timeout %d ms x %d tries\n", b.n, b.g, b.p, b.window,
	       BENCH_TIMEOUT_MS, BENCH_RETRIES + 1);
	printf("%-32s %6s %9s %8s %8s %7s %7s %7s %6s %8s %8s\n",
	       "operation", "count", "per sec", "p50 ms", "p99 ms",
	       "rate/B", "p50/B", "retries", "failed", "srv us/op",
	       "cli us/op");
	/* B: the mean of the two BASE runs, before and after the rest */
	base_rate = (rate(&ph_base) + rate(&ph_base2)) / 2;
	base_p50 = (pct(&ph_base, 0.5) + pct(&ph_base2, 0.5)) / 2;
	print_row(&ph_attach, 0, 0);
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		print_row(rows[i], base_rate, base_p50);
	printf("(B = mean of the two BASE rows: same client, same window; "
	       "their own ratios\n show the drift during the run.  "
	       "srv/cli us/op: CPU time of ibfabricd / of bench_sa\n"
	       " per request)\n");
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		if (rows[i]->first_err[0])
			printf("%s: first failure: %s\n", rows[i]->name,
			       rows[i]->first_err);
		if (rows[i]->fail)
			rc = 1;
	}
	if (ph_warm.fail || b.aborted)
		rc = 1;
	if (b.pid > 0)
		printf("ibfabricd VmRSS kB: before nodes %lu, after %u nodes "
		       "%lu, before groups %lu, after %u groups %lu, after "
		       "leaving all %lu\n"
		       "  per node %.0f bytes, per group %.0f bytes (from a "
		       "fresh ibfabricd only)\n",
		       rss0, b.n, rss_nodes, rss_g0, b.g, rss_groups,
		       rss_left,
		       ((double)rss_nodes - (double)rss0) * 1024.0 / b.n,
		       b.g ? ((double)rss_groups - (double)rss_g0) * 1024.0 /
			     b.g : 0.0);
	printf("ibfabricd groups of ours: after create %d%s (first %s, "
	       "last %s), after leaving all %d\n", before,
	       trunc ? "+ (report truncated at 64 KiB)" : "",
	       first == 1 ? "present" : "MISSING",
	       last == 1 ? "present" : "MISSING", after);
	if (first != 1 || last != 1 || after != 0) {
		printf("FAIL: ibfabricd's groups do not match the requests\n");
		rc = 1;
	}
	printf("ibfabricd counters during the run: sa_requests +%llu, "
	       "sa_errors +%llu, dropped +%llu\n",
	       stat_get(obs, "sa_requests") - req0,
	       stat_get(obs, "sa_errors") - err0,
	       stat_get(obs, "dropped") - drop0);
	/* measured: agents closed just before their connections now cost
	 * ibfabricd only a few idle reads */
	raw_close(&b);
	for (i = 0; i < b.n; i++) {
		sa_client_free(b.nodes[i].sa);
		fab_close(b.nodes[i].dev);
	}
	fab_close(obs);
	event_free(b.watchdog);
	event_base_free(b.base);
	printf("total %.1f s%s\n", now() - t_start, rc ? ", FAILED" : "");
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		free(rows[i]->lat);
	free(ph_attach.lat);
	free(ph_warm.lat);
	free(b.pairs);
	free(b.slots);
	free(b.nodes);
	return rc;
}

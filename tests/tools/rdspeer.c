// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rdspeer: an RDS endpoint (ulp/rds/rds_ep.h) on a fabric port, for the
 * tests (tests/integration/rds_soft.sh, rds_hostile.sh, the guest tier's
 * Python twin against the kernel):
 *
 *   rdspeer --fabric SPEC [--node NAME] --addr IP [--route IP=GID]...
 *           [--bind PORT]... [--send DST_IP:DPORT:SPORT:COUNT:SIZE[-MAX]]...
 *           [--expect SRC_IP:SPORT:DPORT:COUNT]... [--echo PORT]...
 *           [--ping DST_IP[:SPORT]]... [--timeout SEC] [--linger SEC]
 *           [--stats] [--log FILE] [--seed N] [--cong PORT:MS]
 *           [--stall-ms MS] [-v]
 *
 * soft: specs run the SOFT profile, verbs: ones RDMA_CM.  A peer's GID
 * is its --route, else ::ffff:a.b.c.d.  Payload (big-endian): 0 "RDSP",
 * 4 sport, 6 dport, 8 index, 12 total length, then byte k = (index * 7
 * + k) & 0xff; at least 16 bytes.  --send: COUNT messages, sizes SIZE or
 * uniform in SIZE..MAX (seeded), at most 1024 unacknowledged at once,
 * ENOBUFS waited out.  --expect: COUNT messages in order, none lost,
 * duplicated or corrupt.  --echo: every message to PORT goes back to its
 * sender from PORT.  --ping: a ping (to port 0) and its pong.  --log:
 * every message received, "SRC SPORT DPORT INDEX LEN".  --cong: our
 * PORT congested in our map from the start, cleared after MS.
 * --stall-ms: rds_ep_cfg's stall_ms (a stopped connection dropped).
 * Exit 0 once every send is acknowledged, every expect complete and every
 * ping answered (after --linger); 1 on a violation or --timeout.
 *
 *   rdspeer ... --evil MODE --dst IP [--evil-port P]
 *
 * A hostile peer on the raw fabric API (no rds_ep): connects to IP as RDS
 * does and then misbehaves (rdspeer --evil help lists the modes).
 */
#include <errno.h>
#include <signal.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <event2/event.h>

#include "conf/counters.h"
#include "fabric/fabric.h"
#include "inet/byteorder.h"
#include "ulp/rds/rds_ep.h"
#include "ulp/rds/rds_wire.h"
#include "tests/tools/rdspeer_evil.h"

#define MAX_ITEMS	64
#define MAX_INFLIGHT	1024
#define PAYLOAD_MIN	16

struct route {
	struct inet_addr ip;
	union fab_gid gid;
};

struct sendspec {
	struct inet_addr dst;
	uint16_t dport, sport;
	uint32_t count, min, max;
	uint32_t next, acked, inflight;
	uint64_t rng;
	uint64_t bytes;
};

struct expect {
	struct inet_addr src;
	uint16_t sport, dport;
	uint32_t count, got;
};

struct ping {
	struct inet_addr dst;
	uint16_t sport;
	bool sent, answered;
	double t0;
};

struct echo_msg {
	struct echo_msg *next;
	struct rds_name src, dst;
	size_t len;
	uint8_t data[];
};

static struct peer {
	struct event_base *base;
	struct rds_ep *ep;
	struct inet_addr addr;
	struct route routes[MAX_ITEMS];
	unsigned int nroutes;
	uint16_t binds[MAX_ITEMS];
	unsigned int nbinds;
	struct sendspec sends[MAX_ITEMS];
	unsigned int nsends;
	struct expect expects[MAX_ITEMS];
	unsigned int nexpects;
	uint16_t echoes[MAX_ITEMS];
	unsigned int nechoes;
	struct ping pings[MAX_ITEMS];
	unsigned int npings;
	unsigned int inflight;
	struct echo_msg *eq_head, *eq_tail;
	uint64_t echoed, rx_other;
	uint64_t enobufs;		/* sends that met a congested port */
	uint16_t cong_port;		/* --cong: congested at start */
	unsigned int cong_ms;
	double t_start, t_done;
	int verbose;
	int failed;
	bool finishing;
	FILE *log;
	struct event *tick;
} P;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: rdspeer --fabric SPEC [--node NAME] --addr IP "
		"[--route IP=GID]...\n"
		"        [--bind PORT]... [--send DST:DPORT:SPORT:COUNT:SIZE"
		"[-MAX]]...\n"
		"        [--expect SRC:SPORT:DPORT:COUNT]... [--echo PORT]... "
		"[--ping DST[:SPORT]]...\n"
		"        [--timeout SEC] [--linger SEC] [--stats] [--log FILE] "
		"[--seed N] [--cong PORT:MS]\n"
		"        [--stall-ms MS] [-v]\n"
		"       rdspeer ... --evil MODE --dst IP [--evil-port P]\n");
	exit(2);
}

static void die(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "rdspeer: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

static const char *astr(const struct inet_addr *a)
{
	static char b[4][INET6_ADDRSTRLEN];
	static int i;

	i = (i + 1) % 4;
	inet_ntop(a->family ? a->family : AF_INET, a->raw, b[i],
		  sizeof(b[i]));
	return b[i];
}

static unsigned long num(const char *s, unsigned long max, const char *what)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || end == s || *end || v > max)
		die("bad %s '%s'", what, s);
	return v;
}

static void parse_ip(const char *s, struct inet_addr *a)
{
	if (inet_addr_parse(s, a, NULL, 0) < 0)
		die("bad address '%s'", s);
}

/* Split s at ':' into at most n fields (an IPv6 address in [brackets]). */
static int split(char *s, char **f, int n)
{
	int k = 0;

	if (*s == '[') {
		char *e = strchr(s, ']');

		if (!e)
			return -1;
		*e = '\0';
		f[k++] = s + 1;
		s = e + 1;
		if (*s == ':')
			s++;
		else if (*s)
			return -1;
		if (!*s)
			return k;
	}
	while (k < n) {
		f[k++] = s;
		s = strchr(s, ':');
		if (!s)
			break;
		*s++ = '\0';
	}
	return s ? -1 : k;
}

static uint64_t rng_next(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* ---- payload ------------------------------------------------------------- */

static void fill(uint8_t *p, uint16_t sport, uint16_t dport, uint32_t idx,
		 uint32_t len)
{
	uint32_t k;

	memcpy(p, "RDSP", 4);
	be16_put(p + 4, sport);
	be16_put(p + 6, dport);
	be32_put(p + 8, idx);
	be32_put(p + 12, len);
	for (k = 16; k < len; k++)
		p[k] = (uint8_t)(idx * 7 + k);
}

/* NULL if the payload is right, else what is wrong; *idx its index. */
static const char *check(const uint8_t *p, size_t len, uint16_t sport,
			 uint16_t dport, uint32_t *idx)
{
	static char why[128];
	size_t k;

	*idx = 0;
	if (len < PAYLOAD_MIN)
		return "shorter than 16 bytes";
	if (memcmp(p, "RDSP", 4))
		return "no RDSP magic";
	*idx = be32_get(p + 8);
	if (be16_get(p + 4) != sport || be16_get(p + 6) != dport)
		return "ports in the payload differ";
	if (be32_get(p + 12) != len) {
		snprintf(why, sizeof(why), "length %zu, payload says %u", len,
			 be32_get(p + 12));
		return why;
	}
	for (k = 16; k < len; k++) {
		if (p[k] != (uint8_t)(*idx * 7 + k)) {
			snprintf(why, sizeof(why), "byte %zu is 0x%02x, not "
				 "0x%02x", k, p[k], (uint8_t)(*idx * 7 + k));
			return why;
		}
	}
	return NULL;
}

/* ---- completion ---------------------------------------------------------- */

static bool all_done(void)
{
	unsigned int i;

	for (i = 0; i < P.nsends; i++)
		if (P.sends[i].acked < P.sends[i].count)
			return false;
	for (i = 0; i < P.nexpects; i++)
		if (P.expects[i].got < P.expects[i].count)
			return false;
	for (i = 0; i < P.npings; i++)
		if (!P.pings[i].answered)
			return false;
	return true;
}

static void stats_vprintf(void *arg, const char *fmt, va_list ap)
{
	vfprintf(arg, fmt, ap);
}

static void print_summary(void)
{
	uint64_t msgs = 0, bytes = 0;
	double t = (P.t_done ? P.t_done : now_s()) - P.t_start;
	unsigned int i;

	for (i = 0; i < P.nsends; i++) {
		msgs += P.sends[i].acked;
		bytes += P.sends[i].bytes;
	}
	if (t <= 0)
		t = 1e-6;
	if (P.enobufs)
		printf("rdspeer: %" PRIu64 " sends met a congested port\n",
		       P.enobufs);
	printf("rdspeer: sent %" PRIu64 " msgs %" PRIu64 " bytes in %.3f s "
	       "(%.0f msg/s, %.2f MB/s)\n", msgs, bytes, t, msgs / t,
	       bytes / t / 1e6);
}

static void print_stats(void)
{
	struct counter_out o = { stats_vprintf, stdout };
	char rep[8192];

	counters_text(&o, rds_ep_counters, rds_ep_stats(P.ep), "", 0);
	rds_ep_report(P.ep, rep, sizeof(rep));
	fputs(rep, stdout);
}

static int stats_on;

static void finish(int rc, const char *msg)
{
	if (msg)
		printf("rdspeer: %s\n", msg);
	print_summary();
	if (stats_on)
		print_stats();
	fflush(stdout);
	P.failed = rc;
	event_base_loopbreak(P.base);
}

static void violation(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
static void violation(const char *fmt, ...)
{
	va_list ap;

	if (P.failed)
		return;
	printf("rdspeer: FAIL: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	finish(1, NULL);
}

/* ---- sending ------------------------------------------------------------- */

static void pump(void)
{
	static uint8_t buf[RDS_MAX_MSG_SIZE];
	unsigned int i;

	for (i = 0; i < P.nsends; i++) {
		struct sendspec *s = &P.sends[i];

		while (s->next < s->count && P.inflight < MAX_INFLIGHT) {
			struct rds_name src = { P.addr, s->sport };
			struct rds_name dst = { s->dst, s->dport };
			uint32_t len = s->min;
			struct iovec iov;
			uint64_t save = s->rng;

			if (s->max > s->min)
				len = s->min + (uint32_t)(rng_next(&s->rng) %
					(s->max - s->min + 1));
			fill(buf, s->sport, s->dport, s->next, len);
			iov.iov_base = buf;
			iov.iov_len = len;
			if (rds_ep_send(P.ep, &src, &dst, &iov, 1, s) < 0) {
				s->rng = save;
				if (errno == ENOBUFS) {
					P.enobufs++;
					break;
				}
				violation("send to %s:%u: %s", astr(&s->dst),
					  s->dport, strerror(errno));
				return;
			}
			s->next++;
			s->inflight++;
			P.inflight++;
		}
	}
}

static void echo_flush(void)
{
	struct echo_msg *m;
	struct iovec iov;

	while ((m = P.eq_head)) {
		iov.iov_base = m->data;
		iov.iov_len = m->len;
		if (rds_ep_send(P.ep, &m->dst, &m->src, &iov, 1, NULL) < 0) {
			if (errno == ENOBUFS)
				return;
			violation("echo to %s:%u: %s", astr(&m->src.addr),
				  m->src.port, strerror(errno));
			return;
		}
		P.echoed++;
		P.eq_head = m->next;
		if (!P.eq_head)
			P.eq_tail = NULL;
		free(m);
	}
}

static void send_pings(void)
{
	unsigned int i;

	for (i = 0; i < P.npings; i++) {
		struct ping *p = &P.pings[i];
		struct rds_name src = { P.addr, p->sport };
		struct rds_name dst = { p->dst, 0 };

		if (p->sent)
			continue;
		p->t0 = now_s();
		if (rds_ep_send(P.ep, &src, &dst, NULL, 0, NULL) < 0) {
			if (errno == ENOBUFS)
				continue;
			violation("ping %s: %s", astr(&p->dst),
				  strerror(errno));
			return;
		}
		p->sent = true;
	}
}

static void check_done(void);

static void linger_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
	finish(0, "ok");
}

static double linger_s;

static void check_done(void)
{
	struct timeval tv;

	if (P.finishing || P.failed || !all_done() || !rds_ep_idle(P.ep))
		return;
	P.finishing = true;
	P.t_done = now_s();
	tv.tv_sec = (time_t)linger_s;
	tv.tv_usec = (suseconds_t)((linger_s - (double)tv.tv_sec) * 1e6);
	event_base_once(P.base, -1, EV_TIMEOUT, linger_cb, NULL, &tv);
}

/* ---- rds_ep callbacks ---------------------------------------------------- */

static int op_resolve(void *arg, const struct inet_addr *laddr,
		      const struct inet_addr *faddr, union fab_gid *gid,
		      uint16_t *lid)
{
	unsigned int i;

	(void)arg;
	(void)laddr;
	*lid = 0;
	for (i = 0; i < P.nroutes; i++) {
		if (inet_addr_equal(&P.routes[i].ip, faddr)) {
			*gid = P.routes[i].gid;
			return 0;
		}
	}
	memset(gid, 0, sizeof(*gid));
	if (faddr->family == AF_INET) {
		gid->raw[10] = gid->raw[11] = 0xff;
		memcpy(gid->raw + 12, faddr->raw, 4);
	} else {
		memcpy(gid->raw, faddr->raw, 16);
	}
	return 0;
}

static bool op_is_local(void *arg, const struct inet_addr *a)
{
	(void)arg;
	return inet_addr_equal(a, &P.addr);
}

static bool bound(uint16_t port)
{
	unsigned int i;

	for (i = 0; i < P.nbinds; i++)
		if (P.binds[i] == port)
			return true;
	for (i = 0; i < P.nechoes; i++)
		if (P.echoes[i] == port)
			return true;
	for (i = 0; i < P.nexpects; i++)
		if (P.expects[i].dport == port)
			return true;
	for (i = 0; i < P.npings; i++)
		if (P.pings[i].sport == port)
			return true;
	for (i = 0; i < P.nsends; i++)
		if (P.sends[i].sport == port)
			return true;
	return false;
}

static bool is_echo(uint16_t port)
{
	unsigned int i;

	for (i = 0; i < P.nechoes; i++)
		if (P.echoes[i] == port)
			return true;
	return false;
}

static void take_pong(const struct rds_name *dst, const struct rds_name *src)
{
	unsigned int i;

	for (i = 0; i < P.npings; i++) {
		struct ping *p = &P.pings[i];

		if (p->sent && !p->answered && p->sport == dst->port &&
		    inet_addr_equal(&p->dst, &src->addr)) {
			p->answered = true;
			printf("rdspeer: pong from %s in %.3f ms\n",
			       astr(&src->addr), (now_s() - p->t0) * 1e3);
			return;
		}
	}
}

static void take_expected(struct expect *e, const uint8_t *data, size_t len)
{
	const char *why;
	uint32_t idx;

	why = check(data, len, e->sport, e->dport, &idx);
	if (why) {
		violation("expect %s:%u:%u: message %u is corrupt: %s",
			  astr(&e->src), e->sport, e->dport, e->got, why);
		return;
	}
	if (idx != e->got) {
		violation("expect %s:%u:%u: message %u has index %u (%s)",
			  astr(&e->src), e->sport, e->dport, e->got, idx,
			  idx < e->got ? "duplicated or reordered" :
			  "lost or reordered");
		return;
	}
	if (e->got >= e->count) {
		violation("expect %s:%u:%u: message %u beyond the %u expected",
			  astr(&e->src), e->sport, e->dport, idx, e->count);
		return;
	}
	e->got++;
}

static int op_deliver(void *arg, const struct rds_name *dst,
		      const struct rds_name *src, const uint8_t *data,
		      size_t len)
{
	unsigned int i;

	(void)arg;
	if (!bound(dst->port)) {
		errno = ENOENT;
		return -1;
	}
	if (P.log) {
		uint32_t idx = len >= 12 ? be32_get(data + 8) : 0;

		fprintf(P.log, "%s %u %u %u %zu\n", astr(&src->addr),
			src->port, dst->port, idx, len);
	}
	if (P.verbose > 1)
		printf("rdspeer: rx %s:%u -> %u len %zu\n", astr(&src->addr),
		       src->port, dst->port, len);
	if (src->port == 0 && len == 0) {
		take_pong(dst, src);
		check_done();
		return 0;
	}
	for (i = 0; i < P.nexpects; i++) {
		struct expect *e = &P.expects[i];

		if (e->sport == src->port && e->dport == dst->port &&
		    inet_addr_equal(&e->src, &src->addr)) {
			take_expected(e, data, len);
			check_done();
			return 0;
		}
	}
	if (is_echo(dst->port)) {
		struct echo_msg *m = malloc(sizeof(*m) + len);

		if (!m) {
			violation("out of memory");
			return 0;
		}
		m->next = NULL;
		m->src = *src;
		m->dst = *dst;
		m->len = len;
		memcpy(m->data, data, len);
		if (P.eq_tail)
			P.eq_tail->next = m;
		else
			P.eq_head = m;
		P.eq_tail = m;
		echo_flush();
		return 0;
	}
	P.rx_other++;
	return 0;
}

static void op_done(void *arg, void *ctx, size_t len, int err)
{
	struct sendspec *s = ctx;

	(void)arg;
	if (err) {
		violation("send to %s:%u: done with %s", astr(&s->dst),
			  s->dport, strerror(err));
		return;
	}
	s->acked++;
	s->bytes += len;
	s->inflight--;
	P.inflight--;
	pump();
	check_done();
}

static void op_uncongested(void *arg, const struct inet_addr *faddr)
{
	(void)arg;
	(void)faddr;
	pump();
	echo_flush();
	send_pings();
}

static void tick_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
	pump();
	echo_flush();
	send_pings();
	check_done();
}

static void timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	char msg[256];
	unsigned int i;
	size_t off = 0;

	(void)fd;
	(void)what;
	(void)arg;
	off += (size_t)snprintf(msg + off, sizeof(msg) - off,
				"FAIL: timeout:");
	for (i = 0; i < P.nsends && off < sizeof(msg); i++)
		off += (size_t)snprintf(msg + off, sizeof(msg) - off,
					" send %u/%u acked", P.sends[i].acked,
					P.sends[i].count);
	for (i = 0; i < P.nexpects && off < sizeof(msg); i++)
		off += (size_t)snprintf(msg + off, sizeof(msg) - off,
					" expect %u/%u", P.expects[i].got,
					P.expects[i].count);
	for (i = 0; i < P.npings && off < sizeof(msg); i++)
		off += (size_t)snprintf(msg + off, sizeof(msg) - off,
					" ping %s", P.pings[i].answered ?
					"answered" : "unanswered");
	finish(1, msg);
}

static void uncong_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
	if (P.verbose)
		printf("rdspeer: port %u uncongested\n", P.cong_port);
	rds_ep_set_cong(P.ep, &P.addr, P.cong_port, false);
}

static void term_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
	if (P.finishing || all_done())
		finish(0, "ok (terminated)");
	else
		timeout_cb(-1, 0, NULL);
}

/* ---- options ------------------------------------------------------------- */

static void opt_route(char *s)
{
	char *eq = strchr(s, '=');
	struct route *r;

	if (!eq || P.nroutes >= MAX_ITEMS)
		die("bad --route '%s' (IP=GID)", s);
	*eq = '\0';
	r = &P.routes[P.nroutes++];
	parse_ip(s, &r->ip);
	if (fab_gid_from_str(eq + 1, &r->gid) < 0)
		die("bad GID '%s'", eq + 1);
}

static void opt_send(char *s, uint64_t seed)
{
	struct sendspec *x;
	char *f[5], *dash;

	if (P.nsends >= MAX_ITEMS || split(s, f, 5) != 5)
		die("bad --send (DST_IP:DPORT:SPORT:COUNT:SIZE[-MAXSIZE])");
	x = &P.sends[P.nsends];
	parse_ip(f[0], &x->dst);
	x->dport = (uint16_t)num(f[1], 65535, "port");
	x->sport = (uint16_t)num(f[2], 65535, "port");
	if (!x->sport)
		die("--send: source port 0");
	x->count = (uint32_t)num(f[3], 0xffffffffu, "count");
	dash = strchr(f[4], '-');
	if (dash)
		*dash++ = '\0';
	x->min = (uint32_t)num(f[4], RDS_MAX_MSG_SIZE, "size");
	x->max = dash ? (uint32_t)num(dash, RDS_MAX_MSG_SIZE, "size") : x->min;
	if (x->min < PAYLOAD_MIN || x->max < x->min)
		die("--send: sizes %u-%u (at least 16)", x->min, x->max);
	x->rng = seed * 0x9e3779b97f4a7c15ull + (P.nsends + 1) * 7919u +
		 x->sport;
	if (!x->rng)
		x->rng = 1;
	P.nsends++;
}

static void opt_expect(char *s)
{
	struct expect *e;
	char *f[4];

	if (P.nexpects >= MAX_ITEMS || split(s, f, 4) != 4)
		die("bad --expect (SRC_IP:SPORT:DPORT:COUNT)");
	e = &P.expects[P.nexpects++];
	parse_ip(f[0], &e->src);
	e->sport = (uint16_t)num(f[1], 65535, "port");
	e->dport = (uint16_t)num(f[2], 65535, "port");
	e->count = (uint32_t)num(f[3], 0xffffffffu, "count");
}

static void opt_ping(char *s)
{
	struct ping *p;
	char *f[2];
	int n;

	if (P.npings >= MAX_ITEMS)
		die("too many --ping");
	if (strchr(s, ':') && strchr(s, ':') != strrchr(s, ':') &&
	    *s != '[') {	/* a bare IPv6 address */
		f[0] = s;
		n = 1;
	} else {
		n = split(s, f, 2);
	}
	if (n < 1)
		die("bad --ping (DST_IP[:SPORT])");
	p = &P.pings[P.npings];
	parse_ip(f[0], &p->dst);
	p->sport = n == 2 ? (uint16_t)num(f[1], 65535, "port") :
		   (uint16_t)(40000 + P.npings);
	if (!p->sport)
		die("--ping: source port 0");
	P.npings++;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "fabric", required_argument, NULL, 'F' },
		{ "node", required_argument, NULL, 'n' },
		{ "addr", required_argument, NULL, 'a' },
		{ "route", required_argument, NULL, 'r' },
		{ "bind", required_argument, NULL, 'b' },
		{ "send", required_argument, NULL, 's' },
		{ "expect", required_argument, NULL, 'e' },
		{ "echo", required_argument, NULL, 'E' },
		{ "ping", required_argument, NULL, 'p' },
		{ "timeout", required_argument, NULL, 't' },
		{ "linger", required_argument, NULL, 'l' },
		{ "stats", no_argument, NULL, 'S' },
		{ "log", required_argument, NULL, 'L' },
		{ "seed", required_argument, NULL, 'x' },
		{ "evil", required_argument, NULL, 'X' },
		{ "cong", required_argument, NULL, 'C' },
		{ "dst", required_argument, NULL, 'D' },
		{ "evil-port", required_argument, NULL, 'P' },
		{ "stall-ms", required_argument, NULL, 'W' },
		{ "verbose", no_argument, NULL, 'v' },
		{ NULL, 0, NULL, 0 }
	};
	struct rds_ep_ops ops = {
		.resolve = op_resolve, .is_local = op_is_local,
		.deliver = op_deliver, .done = op_done,
		.uncongested = op_uncongested,
	};
	struct rds_ep_cfg cfg;
	const char *spec = NULL, *node = "rdspeer", *evil = NULL;
	char *sends[MAX_ITEMS];
	unsigned int nsend_args = 0, i;
	double timeout = 60;
	uint64_t seed = 1;
	struct inet_addr evil_dst = { 0 };
	unsigned int evil_port = 0, stall_ms = 0;
	char err[FAB_ERRLEN];
	struct fab_dev *dev;
	struct timeval tv = { 0, 20000 };
	struct event *sig;
	int ch, have_addr = 0;

	while ((ch = getopt_long(argc, argv, "v", opts, NULL)) != -1) {
		switch (ch) {
		case 'F': spec = optarg; break;
		case 'n': node = optarg; break;
		case 'a': parse_ip(optarg, &P.addr); have_addr = 1; break;
		case 'r': opt_route(optarg); break;
		case 'b':
			if (P.nbinds >= MAX_ITEMS)
				die("too many --bind");
			P.binds[P.nbinds++] = (uint16_t)num(optarg, 65535,
							    "port");
			break;
		case 's':
			if (nsend_args >= MAX_ITEMS)
				die("too many --send");
			sends[nsend_args++] = optarg;
			break;
		case 'e': opt_expect(optarg); break;
		case 'E':
			if (P.nechoes >= MAX_ITEMS)
				die("too many --echo");
			P.echoes[P.nechoes++] = (uint16_t)num(optarg, 65535,
							      "port");
			break;
		case 'p': opt_ping(optarg); break;
		case 't': timeout = strtod(optarg, NULL); break;
		case 'l': linger_s = strtod(optarg, NULL); break;
		case 'S': stats_on = 1; break;
		case 'L':
			P.log = fopen(optarg, "w");
			if (!P.log)
				die("%s: %s", optarg, strerror(errno));
			setvbuf(P.log, NULL, _IOLBF, 0);
			break;
		case 'x': seed = num(optarg, ~0ul, "seed"); break;
		case 'X': evil = optarg; break;
		case 'C': {
			char *f[2];

			if (split(optarg, f, 2) != 2)
				die("bad --cong (PORT:MS)");
			P.cong_port = (uint16_t)num(f[0], 65535, "port");
			P.cong_ms = (unsigned int)num(f[1], 3600000, "ms");
			break;
		}
		case 'D': parse_ip(optarg, &evil_dst); break;
		case 'P': evil_port = (unsigned int)num(optarg, 65535, "port");
			break;
		case 'W': stall_ms = (unsigned int)num(optarg, 3600000, "ms");
			break;
		case 'v': P.verbose++; break;
		default: usage();
		}
	}
	if (optind != argc || !spec || !have_addr)
		usage();
	for (i = 0; i < nsend_args; i++)
		opt_send(sends[i], seed);
	srandom((unsigned int)(seed ^ (uint64_t)getpid() ^
			       (uint64_t)time(NULL)));
	dev = fab_open(spec, node, err, sizeof(err));
	if (!dev)
		die("%s", err);
	if (evil) {
		struct rdspeer_evil ev = {
			.dev = dev, .mode = evil, .laddr = P.addr,
			.faddr = evil_dst, .port = (uint16_t)evil_port,
			.timeout_s = timeout, .verbose = P.verbose,
			.soft = strncmp(spec, "soft:", 5) == 0,
		};

		if (!evil_dst.family && strcmp(evil, "help"))
			die("--evil needs --dst");
		op_resolve(NULL, &P.addr, &evil_dst, &ev.gid, &ev.lid);
		ch = rdspeer_evil_run(&ev);
		fab_close(dev);
		return ch;
	}
	P.base = event_base_new();
	if (!P.base)
		die("event_base_new failed");
	memset(&cfg, 0, sizeof(cfg));
	cfg.profile = strncmp(spec, "verbs:", 6) == 0 ? RDS_PROFILE_RDMA_CM :
		      RDS_PROFILE_SOFT;
	cfg.stall_ms = stall_ms;
	P.ep = rds_ep_new(P.base, dev, &cfg, &ops, NULL, err, sizeof(err));
	if (!P.ep)
		die("%s", err);
	if (P.verbose)
		printf("rdspeer: %s on %s, node %s\n", astr(&P.addr), spec,
		       node);
	fflush(stdout);
	P.t_start = now_s();
	P.tick = event_new(P.base, -1, EV_PERSIST, tick_cb, NULL);
	event_add(P.tick, &tv);
	tv.tv_sec = (time_t)timeout;
	tv.tv_usec = (suseconds_t)((timeout - (double)tv.tv_sec) * 1e6);
	event_base_once(P.base, -1, EV_TIMEOUT, timeout_cb, NULL, &tv);
	if (P.cong_port) {
		struct timeval ct = { P.cong_ms / 1000,
				      (P.cong_ms % 1000) * 1000 };

		rds_ep_set_cong(P.ep, &P.addr, P.cong_port, true);
		event_base_once(P.base, -1, EV_TIMEOUT, uncong_cb, NULL, &ct);
	}
	sig = evsignal_new(P.base, SIGTERM, term_cb, NULL);
	evsignal_add(sig, NULL);
	send_pings();
	pump();
	check_done();
	event_base_dispatch(P.base);
	event_free(sig);
	rds_ep_free(P.ep);
	event_free(P.tick);
	event_base_free(P.base);
	fab_close(dev);
	while (P.eq_head) {
		struct echo_msg *m = P.eq_head;

		P.eq_head = m->next;
		free(m);
	}
	if (P.log)
		fclose(P.log);
	return P.failed ? 1 : 0;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * bench_rds_rr: RDS round trips on our endpoint (ulp/rds/rds_ep.h), one
 * message at a time, what rds_kpeer.py --rtt does on the kernel's RDS.
 *
 *   bench_rds_rr --fabric SPEC --addr IP --echo PORT [--timeout SEC]
 *   bench_rds_rr --fabric SPEC --addr IP --to IP:PORT [--count N]
 *                [--size BYTES] [--warmup N] [--timeout SEC]
 *
 * --echo: every message to PORT goes back to its sender (until killed or
 * --timeout).  --to: WARMUP messages (default 10: the connection made,
 * not timed), then COUNT (default 1000) each sent once the previous one
 * came back, checked byte for byte; prints
 *   "bench_rds_rr: N round trips of S bytes median_us M p90_us P min_us L"
 * A peer's GID is ::ffff:a.b.c.d (RoCE).  Exit 0 when every round trip
 * is done, 1 on a wrong echo or the timeout.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include <event2/event.h>

#include "fabric/fabric.h"
#include "inet/addr.h"
#include "ulp/rds/rds_ep.h"

#define RR_SPORT	41000

static struct {
	struct event_base *base;
	struct rds_ep *ep;
	struct rds_name me, to;
	uint16_t echo_port;
	unsigned int count, warmup, done;
	size_t size;
	uint8_t *msg;
	double t0;
	double *rtt;
	int rc;
} R;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void rr_die(const char *what)
{
	fprintf(stderr, "bench_rds_rr: %s\n", what);
	exit(2);
}

static int rr_resolve(void *arg, const struct inet_addr *laddr,
		      const struct inet_addr *faddr, union fab_gid *gid,
		      uint16_t *lid)
{
	(void)arg;
	(void)laddr;
	memset(gid, 0, sizeof(*gid));
	*lid = 0;
	if (faddr->family != AF_INET) {
		memcpy(gid->raw, faddr->raw, 16);
		return 0;
	}
	gid->raw[10] = gid->raw[11] = 0xff;
	memcpy(gid->raw + 12, faddr->raw, 4);
	return 0;
}

static bool rr_is_local(void *arg, const struct inet_addr *a)
{
	(void)arg;
	return inet_addr_equal(a, &R.me.addr);
}

static void rr_send(void)
{
	struct iovec iov = { R.msg, R.size };

	R.msg[0] = (uint8_t)R.done;
	R.t0 = now_s();
	if (rds_ep_send(R.ep, &R.me, &R.to, &iov, 1, NULL) < 0) {
		fprintf(stderr, "bench_rds_rr: send: %s\n", strerror(errno));
		R.rc = 1;
		event_base_loopbreak(R.base);
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void rr_report(void)
{
	qsort(R.rtt, R.count, sizeof(*R.rtt), cmp_double);
	printf("bench_rds_rr: %u round trips of %zu bytes median_us %.0f "
	       "p90_us %.0f min_us %.0f\n", R.count, R.size,
	       R.rtt[R.count / 2] * 1e6, R.rtt[R.count * 9 / 10] * 1e6,
	       R.rtt[0] * 1e6);
	fflush(stdout);
}

static int rr_deliver(void *arg, const struct rds_name *dst,
		      const struct rds_name *src, const uint8_t *data,
		      size_t len)
{
	struct iovec iov = { (void *)data, len };

	(void)arg;
	if (R.echo_port) {
		if (dst->port != R.echo_port) {
			errno = ENOENT;
			return -1;
		}
		if (rds_ep_send(R.ep, dst, src, &iov, 1, NULL) < 0)
			fprintf(stderr, "bench_rds_rr: echo: %s\n",
				strerror(errno));
		return 0;
	}
	if (dst->port != R.me.port || !inet_addr_equal(&src->addr, &R.to.addr)
	    || src->port != R.to.port) {
		errno = ENOENT;
		return -1;
	}
	R.msg[0] = (uint8_t)R.done;
	if (len != R.size || memcmp(data, R.msg, len)) {
		fprintf(stderr, "bench_rds_rr: echo %u is wrong\n", R.done);
		R.rc = 1;
		event_base_loopbreak(R.base);
		return 0;
	}
	if (R.done >= R.warmup)
		R.rtt[R.done - R.warmup] = now_s() - R.t0;
	if (++R.done == R.warmup + R.count) {
		rr_report();
		R.rc = 0;
		event_base_loopbreak(R.base);
		return 0;
	}
	rr_send();
	return 0;
}

static void rr_timeout(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
	if (!R.echo_port)
		fprintf(stderr, "bench_rds_rr: timeout after %u round trips\n",
			R.done);
	else
		R.rc = 0;
	event_base_loopbreak(R.base);
}

static void rr_parse_to(char *s)
{
	char *colon = strrchr(s, ':');

	if (!colon)
		rr_die("--to IP:PORT");
	*colon = '\0';
	if (inet_addr_parse(s, &R.to.addr, NULL, 0) < 0)
		rr_die("--to: bad address");
	R.to.port = (uint16_t)atoi(colon + 1);
	if (!R.to.port)
		rr_die("--to: port 0");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "fabric", required_argument, NULL, 'F' },
		{ "addr", required_argument, NULL, 'a' },
		{ "echo", required_argument, NULL, 'e' },
		{ "to", required_argument, NULL, 'o' },
		{ "count", required_argument, NULL, 'c' },
		{ "size", required_argument, NULL, 's' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "timeout", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 }
	};
	struct rds_ep_ops ops = {
		.resolve = rr_resolve, .is_local = rr_is_local,
		.deliver = rr_deliver,
	};
	struct rds_ep_cfg cfg;
	const char *spec = NULL;
	char err[FAB_ERRLEN];
	struct fab_dev *dev;
	struct timeval tv = { 60, 0 };
	int ch;

	R.count = 1000;
	R.warmup = 10;
	R.size = 64;
	R.rc = 1;
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (ch) {
		case 'F': spec = optarg; break;
		case 'a':
			if (inet_addr_parse(optarg, &R.me.addr, NULL, 0) < 0)
				rr_die("--addr: bad address");
			break;
		case 'e': R.echo_port = (uint16_t)atoi(optarg); break;
		case 'o': rr_parse_to(optarg); break;
		case 'c': R.count = (unsigned int)atoi(optarg); break;
		case 's': R.size = (size_t)atol(optarg); break;
		case 'w': R.warmup = (unsigned int)atoi(optarg); break;
		case 't': tv.tv_sec = atol(optarg); break;
		default: rr_die("bad option (see the header of bench_rds_rr.c)");
		}
	}
	if (!spec || !R.me.addr.family || (!R.echo_port && !R.to.port) ||
	    !R.count || R.size < 1 || R.size > RDS_MAX_MSG_SIZE)
		rr_die("usage: --fabric SPEC --addr IP (--echo PORT | --to "
		       "IP:PORT [--count N] [--size B] [--warmup N])");
	R.me.port = R.echo_port ? R.echo_port : RR_SPORT;
	R.msg = calloc(1, R.size);
	R.rtt = calloc(R.count, sizeof(*R.rtt));
	if (!R.msg || !R.rtt)
		rr_die("out of memory");
	memset(R.msg, 0xa5, R.size);
	dev = fab_open(spec, "bench_rds_rr", err, sizeof(err));
	if (!dev)
		rr_die(err);
	R.base = event_base_new();
	if (!R.base)
		rr_die("event_base_new failed");
	memset(&cfg, 0, sizeof(cfg));
	cfg.profile = strncmp(spec, "verbs:", 6) == 0 ? RDS_PROFILE_RDMA_CM :
		      RDS_PROFILE_SOFT;
	R.ep = rds_ep_new(R.base, dev, &cfg, &ops, NULL, err, sizeof(err));
	if (!R.ep)
		rr_die(err);
	event_base_once(R.base, -1, EV_TIMEOUT, rr_timeout, NULL, &tv);
	if (!R.echo_port)
		rr_send();
	event_base_dispatch(R.base);
	rds_ep_free(R.ep);
	event_base_free(R.base);
	fab_close(dev);
	free(R.msg);
	free(R.rtt);
	return R.rc;
}

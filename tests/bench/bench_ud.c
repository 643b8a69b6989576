// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * bench_ud: UD messages per second and Gb/s between two nodes through
 * ibfabricd, beside a baseline measured in the same run: a plain unix
 * stream socket carrying the same message sizes between two processes.
 *
 *   bench_ud -s SOCKET [--seconds N] SIZE...
 *
 * Each side runs in its own process.  The receiver counts what arrives
 * between its first and last message; the sender keeps its queue full.
 *
 *   bench_ud -s SOCKET --pingpong [--count N] SIZE...
 *
 * Latency instead: one datagram of SIZE at a time goes to the other
 * process, which sends it straight back; N round trips (default 1000,
 * after 10 not counted) per size, and the same over the unix stream
 * socket.  Per size: the average, median and 99th percentile round trip
 * in microseconds of both, and the ratio of the averages.  A datagram
 * lost (none should be, one at a time) is counted after 1 s and sent
 * again.
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "conf/conf.h"
#include "fabric/fabric.h"

#define BATCH 32

struct result {
	unsigned long long msgs;
	double secs;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The reason a set-up call gave; the per-packet calls give errno only. */
static char fab_err[FAB_ERRLEN];

static void die(const char *what)
{
	fprintf(stderr, "bench_ud: %s: %s\n", what,
		fab_err[0] ? fab_err : strerror(errno));
	exit(1);
}

static struct fab_qp *open_qp(const char *sock, const char *node,
			      struct fab_dev **dev, struct fab_port_attr *pa)
{
	struct fab_qp_init init = { .type = FAB_QPT_UD, .qkey = 0x0b1b };
	char spec[300];
	struct fab_qp *qp;

	snprintf(spec, sizeof(spec), "soft:%s", sock);
	*dev = fab_open(spec, node, fab_err, sizeof(fab_err));
	if (!*dev || fab_query_port(*dev, pa, fab_err, sizeof(fab_err)) < 0)
		die("open");
	qp = fab_qp_create(*dev, &init, fab_err, sizeof(fab_err));
	if (!qp)
		die("create QP");
	return qp;
}

/* Receive until 300 ms pass without a message. */
static void fabric_receiver(const char *sock, int wfd, struct result *res)
{
	static uint8_t bufs[BATCH][FAB_GRH_LEN + 4096];
	struct fab_recv rc[BATCH];
	struct fab_port_attr pa;
	struct fab_dev *dev;
	struct fab_qp *qp = open_qp(sock, "bench-rx", &dev, &pa);
	uint32_t addr[2] = { fab_qp_num(qp), pa.lid };
	double first = 0, last = 0;
	int i, n = 0;

	if (write(wfd, addr, sizeof(addr)) != sizeof(addr))
		exit(1);
	for (;;) {
		struct pollfd p = { .fd = fab_qp_fd(qp), .events = POLLIN };

		/* after a full batch more may be buffered: no waiting */
		if (n != BATCH && poll(&p, 1, res->msgs ? 300 : 10000) <= 0)
			break;
		for (i = 0; i < BATCH; i++) {
			rc[i].buf = bufs[i];
			rc[i].buf_len = sizeof(bufs[i]);
		}
		n = fab_qp_recv(qp, rc, BATCH);
		if (n < 0)
			die("recv");
		if (n && !res->msgs)
			first = now();
		res->msgs += (unsigned long long)n;
		if (n)
			last = now();
	}
	/* the first message only starts the clock */
	res->secs = last - first;
	if (res->msgs)
		res->msgs--;
	fab_qp_destroy(qp);
	fab_close(dev);
}

static void fabric_sender(const char *sock, int rfd, size_t size,
			  double secs)
{
	static uint8_t payload[4096];
	struct fab_send_wr wr[BATCH];
	struct fab_port_attr pa;
	struct fab_dev *dev;
	struct fab_qp *qp = open_qp(sock, "bench-tx", &dev, &pa);
	struct fab_ah_attr aa = { 0 };
	struct fab_ah *ah;
	uint32_t addr[2];
	double end;
	int i;

	if (read(rfd, addr, sizeof(addr)) != sizeof(addr))
		exit(1);
	aa.dlid = (uint16_t)addr[1];
	ah = fab_ah_create(dev, &aa, fab_err, sizeof(fab_err));
	if (!ah)
		die("address handle");
	for (i = 0; i < BATCH; i++) {
		wr[i].ah = ah;
		wr[i].remote_qpn = addr[0];
		wr[i].remote_qkey = 0x0b1b;
		wr[i].buf = payload;
		wr[i].len = (uint32_t)size;
	}
	end = now() + secs;
	while (now() < end) {
		int n = fab_qp_send(qp, wr, BATCH);

		if (n < 0)
			die("send");
		if (n < BATCH) {
			struct pollfd p = { .fd = fab_qp_fd(qp),
					    .events = POLLOUT };

			poll(&p, 1, 10);
		}
	}
	fab_ah_destroy(ah);
	fab_qp_destroy(qp);
	fab_close(dev);
}

static void stream_receiver(int fd, size_t size, struct result *res)
{
	static uint8_t buf[1 << 16];
	unsigned long long bytes = 0;
	double first = 0, last = 0;
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		if (!bytes)
			first = now();
		bytes += (unsigned long long)n;
		last = now();
	}
	res->msgs = bytes / size;
	res->secs = last - first;
}

static void stream_sender(int fd, size_t size, double secs)
{
	static uint8_t buf[BATCH * 4096];
	double end = now() + secs;

	/* same batching as the fabric side: BATCH messages per call */
	while (now() < end)
		if (write(fd, buf, size * BATCH) < 0)
			break;
}

/* Run one side in a child; the result comes back over a pipe. */
static struct result measure(const char *sock, size_t size, double secs,
			     int fabric)
{
	struct result res = { 0 };
	int sv[2], rp[2];
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0 || pipe(rp) < 0) {
		perror("bench_ud");
		exit(1);
	}
	pid = fork();
	if (pid == 0) {
		close(sv[0]);
		close(rp[0]);
		if (fabric)
			fabric_receiver(sock, sv[1], &res);
		else
			stream_receiver(sv[1], size, &res);
		if (write(rp[1], &res, sizeof(res)) != sizeof(res))
			_exit(1);
		_exit(0);
	}
	close(sv[1]);
	close(rp[1]);
	if (fabric)
		fabric_sender(sock, sv[0], size, secs);
	else
		stream_sender(sv[0], size, secs);
	close(sv[0]);
	if (read(rp[0], &res, sizeof(res)) != sizeof(res))
		memset(&res, 0, sizeof(res));
	close(rp[0]);
	waitpid(pid, NULL, 0);
	return res;
}

/* ---- ping-pong ---------------------------------------------------------- */

#define PP_WARMUP	10

struct pp_result {
	double avg, p50, p99;
	unsigned long lost;
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void pp_stats(double *rtt, unsigned int n, struct pp_result *r)
{
	double sum = 0;
	unsigned int i;

	for (i = 0; i < n; i++)
		sum += rtt[i];
	qsort(rtt, n, sizeof(*rtt), cmp_double);
	r->avg = sum / n;
	r->p50 = rtt[(n - 1) / 2];
	r->p99 = rtt[(size_t)((n - 1) * 0.99)];
}

/* Both ends of the fabric ping-pong: QPN and LID out over fd, the
 * peer's in, then an AH to it. */
static struct fab_qp *pp_open(const char *sock, const char *node, int fd,
			      struct fab_dev **dev, struct fab_ah **ah,
			      uint32_t *peer_qpn)
{
	struct fab_port_attr pa;
	struct fab_ah_attr aa = { 0 };
	struct fab_qp *qp = open_qp(sock, node, dev, &pa);
	uint32_t addr[2] = { fab_qp_num(qp), pa.lid }, peer[2];

	if (write(fd, addr, sizeof(addr)) != sizeof(addr) ||
	    read(fd, peer, sizeof(peer)) != sizeof(peer))
		exit(1);
	aa.dlid = (uint16_t)peer[1];
	*ah = fab_ah_create(*dev, &aa, fab_err, sizeof(fab_err));
	if (!*ah)
		die("address handle");
	*peer_qpn = peer[0];
	return qp;
}

static void pp_send(struct fab_qp *qp, struct fab_ah *ah, uint32_t qpn,
		    const void *buf, uint32_t len)
{
	struct fab_send_wr wr = {
		.ah = ah, .remote_qpn = qpn, .remote_qkey = 0x0b1b,
		.buf = buf, .len = len,
	};
	int n;

	while ((n = fab_qp_send(qp, &wr, 1)) != 1) {
		struct pollfd p = { .fd = fab_qp_fd(qp), .events = POLLOUT };

		if (n < 0)
			die("send");
		poll(&p, 1, 10);
	}
}

/* Wait up to ms for one datagram: its payload length, or -1. */
static int pp_recv(struct fab_qp *qp, uint8_t *buf, uint32_t len, int ms)
{
	struct fab_recv rc = { .buf = buf, .buf_len = len };
	double end = now() + ms / 1e3;

	for (;;) {
		struct pollfd p = { .fd = fab_qp_fd(qp), .events = POLLIN };
		int n = fab_qp_recv(qp, &rc, 1);
		double left;

		if (n < 0)
			die("recv");
		if (n == 1)
			return (int)(rc.byte_len - FAB_GRH_LEN);
		left = end - now();
		if (left <= 0)
			return -1;
		poll(&p, 1, (int)(left * 1e3) + 1);
	}
}

/* Echo every datagram until the pinger closes fd. */
static void pp_fabric_echo(const char *sock, int fd)
{
	static uint8_t buf[FAB_GRH_LEN + 4096];
	struct fab_dev *dev;
	struct fab_ah *ah;
	uint32_t qpn;
	struct fab_qp *qp = pp_open(sock, "bench-echo", fd, &dev, &ah, &qpn);

	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int n = pp_recv(qp, buf, sizeof(buf), 100);

		if (n >= 0) {
			pp_send(qp, ah, qpn, buf + FAB_GRH_LEN, (uint32_t)n);
			continue;
		}
		if (poll(&p, 1, 0) > 0)
			break;	/* the pinger is done */
	}
	fab_ah_destroy(ah);
	fab_qp_destroy(qp);
	fab_close(dev);
}

static void pp_fabric_ping(const char *sock, int fd, size_t size,
			   unsigned int count, struct pp_result *r)
{
	static uint8_t payload[4096], buf[FAB_GRH_LEN + 4096];
	double *rtt = calloc(count, sizeof(*rtt));
	struct fab_dev *dev;
	struct fab_ah *ah;
	uint32_t qpn;
	struct fab_qp *qp = pp_open(sock, "bench-ping", fd, &dev, &ah, &qpn);
	unsigned int k;

	if (!rtt)
		die("alloc");
	for (k = 0; k < PP_WARMUP + count; ) {
		double t0 = now();
		int n;

		memset(payload, (int)(k & 0xff), size);
		pp_send(qp, ah, qpn, payload, (uint32_t)size);
		n = pp_recv(qp, buf, sizeof(buf), 1000);
		if (n < 0) {
			r->lost++;
			continue;
		}
		if ((size_t)n != size || buf[FAB_GRH_LEN] != (k & 0xff))
			continue;	/* a late answer to a lost one */
		if (k >= PP_WARMUP)
			rtt[k - PP_WARMUP] = (now() - t0) * 1e6;
		k++;
	}
	pp_stats(rtt, count, r);
	free(rtt);
	fab_ah_destroy(ah);
	fab_qp_destroy(qp);
	fab_close(dev);
}

static int read_full(int fd, uint8_t *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, buf + got, len - got);

		if (n <= 0)
			return -1;
		got += (size_t)n;
	}
	return 0;
}

static void pp_unix_echo(int fd, size_t size)
{
	static uint8_t buf[4096];

	while (read_full(fd, buf, size) == 0)
		if (write(fd, buf, size) != (ssize_t)size)
			break;
}

static void pp_unix_ping(int fd, size_t size, unsigned int count,
			 struct pp_result *r)
{
	static uint8_t buf[4096];
	double *rtt = calloc(count, sizeof(*rtt));
	unsigned int k;

	if (!rtt)
		die("alloc");
	for (k = 0; k < PP_WARMUP + count; k++) {
		double t0 = now();

		if (write(fd, buf, size) != (ssize_t)size ||
		    read_full(fd, buf, size) < 0)
			die("unix ping-pong");
		if (k >= PP_WARMUP)
			rtt[k - PP_WARMUP] = (now() - t0) * 1e6;
	}
	pp_stats(rtt, count, r);
	free(rtt);
}

static struct pp_result pingpong(const char *sock, size_t size,
				 unsigned int count, int fabric)
{
	struct pp_result r = { 0 };
	int sv[2];
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0) {
		perror("bench_ud");
		exit(1);
	}
	pid = fork();
	if (pid == 0) {
		close(sv[0]);
		if (fabric)
			pp_fabric_echo(sock, sv[1]);
		else
			pp_unix_echo(sv[1], size);
		_exit(0);
	}
	close(sv[1]);
	if (fabric)
		pp_fabric_ping(sock, sv[0], size, count, &r);
	else
		pp_unix_ping(sv[0], size, count, &r);
	close(sv[0]);
	waitpid(pid, NULL, 0);
	return r;
}

static int pingpong_all(const char *sock, unsigned int count, int argc,
			char **argv)
{
	unsigned long long v;
	const char *why;
	int i;

	printf("%-6s %10s %8s %8s %10s %8s %8s %7s %5s\n", "size",
	       "fabric_us", "p50", "p99", "unix_us", "p50", "p99", "ratio",
	       "lost");
	for (i = 0; i < argc; i++) {
		struct pp_result f, u;

		if (conf_parse_uint(argv[i], 1, 4096, &v, &why) < 0) {
			fprintf(stderr, "bench_ud: size '%s': %s\n", argv[i],
				why);
			return 2;
		}
		f = pingpong(sock, (size_t)v, count, 1);
		u = pingpong(sock, (size_t)v, count, 0);
		printf("%-6llu %10.1f %8.1f %8.1f %10.1f %8.1f %8.1f %7.2f "
		       "%5lu\n", v, f.avg, f.p50, f.p99, u.avg, u.p50, u.p99,
		       u.avg > 0 ? f.avg / u.avg : 0, f.lost);
		fflush(stdout);
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "seconds", required_argument, NULL, 't' },
		{ "pingpong", no_argument, NULL, 'P' },
		{ "count", required_argument, NULL, 'n' },
		{ NULL, 0, NULL, 0 },
	};
	const char *sock = FAB_DEFAULT_SOFT_PATH, *why;
	double secs = 3;
	unsigned long long v, count = 1000;
	int ch, i, pp = 0;

	while ((ch = getopt_long(argc, argv, "s:t:", lo, NULL)) != -1) {
		switch (ch) {
		case 's': sock = optarg; break;
		case 't':
			if (conf_parse_double_range(optarg, 0.1, 600, &secs,
						    &why) < 0) {
				fprintf(stderr, "bench_ud: --seconds: %s\n",
					why);
				return 2;
			}
			break;
		case 'P': pp = 1; break;
		case 'n':
			if (conf_parse_uint(optarg, 1, 10000000, &count,
					    &why) < 0) {
				fprintf(stderr, "bench_ud: --count: %s\n",
					why);
				return 2;
			}
			break;
		default: return 2;
		}
	}
	if (optind == argc) {
		fprintf(stderr, "usage: bench_ud [-s SOCKET] [--seconds N] "
			"SIZE...\n"
			"       bench_ud [-s SOCKET] --pingpong [--count N] "
			"SIZE...\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	if (pp)
		return pingpong_all(sock, (unsigned int)count, argc - optind,
				    argv + optind);
	printf("%-6s %14s %9s %14s %9s %7s\n", "size", "fabric msg/s",
	       "Gb/s", "unix msg/s", "Gb/s", "ratio");
	for (i = optind; i < argc; i++) {
		struct result f, u;
		double fr, ur;

		if (conf_parse_uint(argv[i], 1, 4096, &v, &why) < 0) {
			fprintf(stderr, "bench_ud: size '%s': %s\n", argv[i],
				why);
			return 2;
		}
		f = measure(sock, (size_t)v, secs, 1);
		u = measure(sock, (size_t)v, secs, 0);
		fr = f.secs > 0 ? (double)f.msgs / f.secs : 0;
		ur = u.secs > 0 ? (double)u.msgs / u.secs : 0;
		printf("%-6llu %14.0f %9.3f %14.0f %9.3f %7.3f\n", v, fr,
		       fr * (double)v * 8 / 1e9, ur, ur * (double)v * 8 / 1e9,
		       ur > 0 ? fr / ur : 0);
		fflush(stdout);
	}
	return 0;
}

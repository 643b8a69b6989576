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

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "seconds", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 },
	};
	const char *sock = FAB_DEFAULT_SOFT_PATH, *why;
	double secs = 3;
	unsigned long long v;
	int ch, i;

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
		default: return 2;
		}
	}
	if (optind == argc) {
		fprintf(stderr, "usage: bench_ud [-s SOCKET] [--seconds N] "
			"SIZE...\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
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

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tcp_rr: TCP request/response latency, an ordinary TCP program (no
 * project libraries), so that it runs unmodified under
 * libibgw_preload.so as well as over plain TCP.
 *
 *   tcp_rr -s [-p PORT] [-1]
 *   tcp_rr -c HOST [-p PORT] [-n COUNT] [-S SIZE] [-w WARMUP] [-t SECS] [-C]
 *
 * The server listens on the IPv4 wildcard, accepts one connection at a
 * time and echoes what it reads until end of file (-1: one connection,
 * then exit).  The client connects
 * (TCP_NODELAY), sends WARMUP (default 100) unmeasured messages, then
 * COUNT (default 10000) messages of SIZE bytes (default 64), one at a
 * time, each time waiting for the whole echo, and prints on stdout one
 * line of "name value" pairs:
 *
 *   tcp_rr: n N size S median_us M p90_us P p99_us Q min_us A mean_us B tps T
 *
 * (round-trip times in microseconds; transactions per second over the
 * measured messages).  -t stops the measurement after SECS seconds even
 * if fewer than COUNT messages went (n says how many).  -C: each
 * transaction on a connection of its own (connect, TCP_NODELAY, one
 * message and its echo, close: netperf's TCP_CRR), timed from the
 * connect.  Exit 0 on success, 1 on any error.
 */
#include <errno.h>
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: tcp_rr -s [-p PORT] [-1]\n"
		"       tcp_rr -c HOST [-p PORT] [-n COUNT] [-S SIZE] [-w WARMUP] [-t SECS] [-C]\n");
	exit(2);
}

static int write_all(int fd, const char *b, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, b, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		b += w;
		n -= (size_t)w;
	}
	return 0;
}

/* 0 when N bytes came, 1 at end of file first, -1 on an error */
static int read_all(int fd, char *b, size_t n)
{
	while (n > 0) {
		ssize_t r = read(fd, b, n);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (r == 0)
			return 1;
		b += r;
		n -= (size_t)r;
	}
	return 0;
}

static void nodelay(int fd)
{
	int one = 1;

	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) < 0)
		fprintf(stderr, "tcp_rr: TCP_NODELAY: %s\n", strerror(errno));
}

static int serve(const char *port, int once)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY) };
	int one = 1, lfd;
	char buf[65536];
	long p = atol(port);

	if (p < 1 || p > 65535)
		usage();
	sin.sin_port = htons((uint16_t)p);
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	if (lfd < 0) {
		perror("tcp_rr: socket");
		return 1;
	}
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(lfd, (struct sockaddr *)&sin, sizeof(sin)) < 0 || listen(lfd, 16) < 0) {
		perror("tcp_rr: bind/listen");
		return 1;
	}
	for (;;) {
		int fd = accept(lfd, NULL, NULL);

		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			perror("tcp_rr: accept");
			return 1;
		}
		nodelay(fd);
		for (;;) {
			ssize_t r = read(fd, buf, sizeof(buf));

			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0)
				break;
			if (write_all(fd, buf, (size_t)r) < 0)
				break;
		}
		close(fd);
		if (once)
			return 0;
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* the value at fraction Q of the sorted V[0..N-1] (nearest rank) */
static double pct_us(const uint64_t *v, long n, double q)
{
	long i = (long)(q * (double)n + 0.999999) - 1;

	if (i < 0)
		i = 0;
	if (i >= n)
		i = n - 1;
	return (double)v[i] / 1000.0;
}

/* A connected socket with TCP_NODELAY, or -1 (said on stderr). */
static int dial(const struct addrinfo *ai, const char *host, const char *port)
{
	const struct addrinfo *a;
	int fd = -1, e;

	for (a = ai; a; a = a->ai_next) {
		fd = socket(a->ai_family, SOCK_STREAM, 0);
		if (fd < 0)
			continue;
		if (connect(fd, a->ai_addr, a->ai_addrlen) == 0)
			break;
		e = errno;
		close(fd);
		fd = -1;
		errno = e;
	}
	if (fd < 0) {
		fprintf(stderr, "tcp_rr: connect %s:%s: %s\n", host, port, strerror(errno));
		return -1;
	}
	nodelay(fd);
	return fd;
}

static int client(const char *host, const char *port, long count, long size,
		  long warmup, double secs, int crr)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
	struct addrinfo *ai;
	uint64_t *rtt, t0 = 0, t1, tend = UINT64_MAX, sum = 0;
	char *out, *in;
	int fd = -1, e;
	long i, n = 0;

	e = getaddrinfo(host, port, &hints, &ai);
	if (e) {
		fprintf(stderr, "tcp_rr: %s:%s: %s\n", host, port, gai_strerror(e));
		return 1;
	}
	if (!crr && (fd = dial(ai, host, port)) < 0)
		return 1;
	out = malloc((size_t)size);
	in = malloc((size_t)size);
	rtt = calloc((size_t)count, sizeof(*rtt));
	if (!out || !in || !rtt) {
		fprintf(stderr, "tcp_rr: out of memory\n");
		return 1;
	}
	for (i = 0; i < size; i++)
		out[i] = (char)('a' + i % 26);
	for (i = 0; i < warmup + count; i++) {
		uint64_t s = now_ns();

		if (crr && (fd = dial(ai, host, port)) < 0)
			return 1;
		if (write_all(fd, out, (size_t)size) < 0) {
			perror("tcp_rr: write");
			return 1;
		}
		e = read_all(fd, in, (size_t)size);
		if (e) {
			fprintf(stderr, "tcp_rr: read: %s\n", e > 0 ? "end of file" : strerror(errno));
			return 1;
		}
		if (crr)
			close(fd);
		if (i == warmup)
			t0 = s;
		if (i >= warmup) {
			rtt[n] = now_ns() - s;
			sum += rtt[n];
			n++;
		}
		if (i == warmup)
			tend = secs > 0 ? t0 + (uint64_t)(secs * 1e9) : UINT64_MAX;
		if (i >= warmup && now_ns() >= tend)
			break;
	}
	t1 = now_ns();
	if (memcmp(in, out, (size_t)size)) {
		fprintf(stderr, "tcp_rr: the echo differs from what was sent\n");
		return 1;
	}
	freeaddrinfo(ai);
	if (!crr)
		close(fd);
	if (n == 0) {
		fprintf(stderr, "tcp_rr: nothing measured\n");
		return 1;
	}
	qsort(rtt, (size_t)n, sizeof(*rtt), cmp_u64);
	printf("tcp_rr: n %ld size %ld median_us %.1f p90_us %.1f p99_us %.1f min_us %.1f mean_us %.1f tps %.0f\n",
	       n, size, pct_us(rtt, n, 0.5), pct_us(rtt, n, 0.9), pct_us(rtt, n, 0.99),
	       (double)rtt[0] / 1000.0, (double)sum / (double)n / 1000.0,
	       (double)n * 1e9 / (double)(t1 - t0));
	return 0;
}

int main(int argc, char **argv)
{
	const char *host = NULL, *port = "7100";
	long count = 10000, size = 64, warmup = 100;
	double secs = 0;
	int srv = 0, once = 0, crr = 0, c;

	while ((c = getopt(argc, argv, "sc:p:n:S:w:t:1Ch")) != -1) {
		switch (c) {
		case 's': srv = 1; break;
		case 'c': host = optarg; break;
		case 'p': port = optarg; break;
		case 'n': count = atol(optarg); break;
		case 'S': size = atol(optarg); break;
		case 'w': warmup = atol(optarg); break;
		case 't': secs = atof(optarg); break;
		case '1': once = 1; break;
		case 'C': crr = 1; break;
		default: usage();
		}
	}
	if (optind != argc || srv == !!host || count < 1 || size < 1 || warmup < 0 ||
	    size > (1L << 24))
		usage();
	signal(SIGPIPE, SIG_IGN);
	return srv ? serve(port, once) :
	       client(host, port, count, size, warmup, secs, crr);
}

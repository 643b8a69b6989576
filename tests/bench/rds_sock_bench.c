// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rds_sock_bench: RDS rate and round trips on the AF_RDS socket API only
 * (socket, bind, sendto, recvfrom, poll, setsockopt), so that the same
 * binary measures the kernel's RDS and ours under libibgw_preload.so
 * (tests/bench/rds_vm_bench.sh).
 *
 *   rds_sock_bench [-t SEC] [-b BYTES] sink ADDR PORT
 *   rds_sock_bench [-t SEC] [-b BYTES] send LADDR RADDR RPORT COUNT SIZE
 *   rds_sock_bench [-t SEC] [-b BYTES] echo ADDR PORT
 *   rds_sock_bench [-t SEC] [-b BYTES] rr LADDR RADDR RPORT N SIZE
 *   rds_sock_bench info
 *
 * Every message starts with a 16-byte header: "RSBK", a type, a sequence
 * number and a count (big-endian).  sink counts DATA messages and answers
 * a SYNC with the count so far, a FIN with the count and then exits
 * (1 s later: a closed kernel RDS socket drops what it has not sent).
 * send: one SYNC answered (the connection is made, not timed), then COUNT
 * DATA messages of SIZE bytes, then a FIN, timed until its answer comes:
 *   "rds_sock_bench: sent N msgs B bytes in S s: R msgs/s M MB/s, received K"
 * (exit 1 when K != N).  echo: every message back to its sender, until a
 * QUIT (answered).  rr: 10 round trips not timed, then N one at a time,
 * each checked, then a QUIT to the echo port, its answer waited for:
 *   "rds_sock_bench: N round trips of S bytes median_us M p99_us P min_us L"
 * EAGAIN (send buffer) waits in poll(POLLOUT); ENOBUFS (a congested
 * destination port, which poll does not report) retries after 100 us.
 * Addresses are IPv4 or IPv6 (sockaddr_in6, as the kernel's RDS takes);
 * rr checks that each echo comes from the echo's address and port.
 * -b: SO_SNDBUF and SO_RCVBUF (SO_*BUFFORCE first, as root; default
 * 4 MiB).  -t: the whole run's limit (default 120 s), exit 1 after it.
 * info: the kernel's RDS state as rds-info shows it (rds-tools is not in
 * Debian), for a failed test to print: the counters that are not 0, the
 * connections with their next sequence numbers, and the messages on the
 * send, retransmit and receive queues (IPv4 and IPv6).
 */
#include <arpa/inet.h>
#include <linux/rds.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#ifndef AF_RDS
#define AF_RDS 21
#endif
#ifndef SO_SNDBUFFORCE
#define SO_SNDBUFFORCE 32
#endif
#ifndef SO_RCVBUFFORCE
#define SO_RCVBUFFORCE 33
#endif

#define MAGIC	0x5253424bu	/* "RSBK" */
#define HDR	16
enum { T_DATA = 1, T_SYNC, T_FIN, T_ACK, T_QUIT, T_PING };
#define WARMUP	10
#define MAXMSG	(1u << 20)

static int bufsize = 4 << 20;

static void on_alarm(int sig)
{
	static const char m[] = "rds_sock_bench: timed out\n";

	(void)sig;
	if (write(2, m, sizeof(m) - 1) < 0)
		_exit(1);
	_exit(1);
}

static void die(const char *what)
{
	fprintf(stderr, "rds_sock_bench: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: rds_sock_bench [-t SEC] [-b BYTES] sink ADDR PORT\n"
		"       rds_sock_bench [-t SEC] [-b BYTES] send LADDR RADDR RPORT COUNT SIZE\n"
		"       rds_sock_bench [-t SEC] [-b BYTES] echo ADDR PORT\n"
		"       rds_sock_bench [-t SEC] [-b BYTES] rr LADDR RADDR RPORT N SIZE\n"
		"       rds_sock_bench info\n");
	exit(2);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static unsigned long num(const char *s, unsigned long lo, unsigned long hi)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi) {
		fprintf(stderr, "rds_sock_bench: '%s': want %lu..%lu\n", s, lo, hi);
		exit(2);
	}
	return v;
}

/* An RDS address: IPv4, or IPv6 (the kernel's RDS takes both). */
union sa {
	struct sockaddr sa;
	struct sockaddr_in v4;
	struct sockaddr_in6 v6;
};

static socklen_t sa_len(const union sa *a)
{
	return a->sa.sa_family == AF_INET6 ? sizeof(a->v6) : sizeof(a->v4);
}

static union sa sin_of(const char *ip, const char *port)
{
	uint16_t p = htons((uint16_t)num(port, 0, 65535));
	union sa a;

	memset(&a, 0, sizeof(a));
	if (inet_pton(AF_INET, ip, &a.v4.sin_addr) == 1) {
		a.v4.sin_family = AF_INET;
		a.v4.sin_port = p;
	} else if (inet_pton(AF_INET6, ip, &a.v6.sin6_addr) == 1) {
		a.v6.sin6_family = AF_INET6;
		a.v6.sin6_port = p;
	} else {
		fprintf(stderr, "rds_sock_bench: '%s': not an IP address\n",
			ip);
		exit(2);
	}
	return a;
}

/* the same address and port */
static int sa_same(const union sa *a, const union sa *b)
{
	if (a->sa.sa_family != b->sa.sa_family)
		return 0;
	if (a->sa.sa_family == AF_INET6)
		return a->v6.sin6_port == b->v6.sin6_port &&
		       !memcmp(&a->v6.sin6_addr, &b->v6.sin6_addr, 16);
	return a->v4.sin_port == b->v4.sin_port &&
	       a->v4.sin_addr.s_addr == b->v4.sin_addr.s_addr;
}

static void setbuf_(int fd, int force, int plain, const char *what)
{
	if (setsockopt(fd, SOL_SOCKET, force, &bufsize, sizeof(bufsize)) == 0)
		return;
	if (setsockopt(fd, SOL_SOCKET, plain, &bufsize, sizeof(bufsize)) < 0)
		die(what);
}

static int rds_socket(const union sa *me)
{
	int fd = socket(AF_RDS, SOCK_SEQPACKET, 0);

	if (fd < 0)
		die("socket(AF_RDS)");
	setbuf_(fd, SO_SNDBUFFORCE, SO_SNDBUF, "SO_SNDBUF");
	setbuf_(fd, SO_RCVBUFFORCE, SO_RCVBUF, "SO_RCVBUF");
	if (bind(fd, &me->sa, sa_len(me)) < 0)
		die("bind");
	return fd;
}

static void put32(uint8_t *p, uint32_t v)
{
	v = htonl(v);
	memcpy(p, &v, 4);
}

static uint32_t get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return ntohl(v);
}

static void mkmsg(uint8_t *m, uint32_t type, uint32_t seq, uint32_t n)
{
	put32(m, MAGIC);
	put32(m + 4, type);
	put32(m + 8, seq);
	put32(m + 12, n);
}

/* one datagram out, waiting out a full send buffer or a congested port */
static void send_one(int fd, const void *m, size_t len,
		     const union sa *to)
{
	struct pollfd p = { .fd = fd, .events = POLLOUT };
	struct timespec pause = { 0, 100000 };

	for (;;) {
		if (sendto(fd, m, len, MSG_DONTWAIT, &to->sa,
			   sa_len(to)) == (ssize_t)len)
			return;
		if (errno == EAGAIN || errno == EWOULDBLOCK) {
			if (poll(&p, 1, 1000) < 0 && errno != EINTR)
				die("poll");
		} else if (errno == ENOBUFS) {
			nanosleep(&pause, NULL);
		} else if (errno != EINTR) {
			die("sendto");
		}
	}
}

/* the next datagram: its length, its type in *type (0 when not ours) */
static ssize_t recv_one(int fd, uint8_t *m, union sa *from,
			uint32_t *type)
{
	socklen_t fl = sizeof(*from);
	ssize_t n;

	for (;;) {
		n = recvfrom(fd, m, MAXMSG, 0, &from->sa, &fl);
		if (n >= 0)
			break;
		if (errno != EINTR)
			die("recvfrom");
	}
	*type = n >= HDR && get32(m) == MAGIC ? get32(m + 4) : 0;
	return n;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int run_sink(int fd, uint8_t *m)
{
	union sa from;
	uint32_t type, n = 0, bad = 0;
	uint8_t ack[HDR];
	ssize_t len;

	for (;;) {
		len = recv_one(fd, m, &from, &type);
		if (type == T_DATA) {
			n++;
		} else if (type == T_SYNC || type == T_FIN) {
			mkmsg(ack, T_ACK, get32(m + 8), n);
			send_one(fd, ack, sizeof(ack), &from);
			if (type == T_FIN)
				break;	/* (the ack goes out before the close) */
		} else {
			bad++;
		}
		(void)len;
	}
	sleep(1);	/* the kernel drops what is unsent at close */
	printf("rds_sock_bench: sink received %u msgs (%u not ours)\n", n, bad);
	return 0;
}

static int run_echo(int fd, uint8_t *m)
{
	union sa from;
	uint32_t type, n = 0;
	ssize_t len;

	for (;;) {
		len = recv_one(fd, m, &from, &type);
		if (type == T_QUIT) {
			mkmsg(m, T_ACK, get32(m + 8), n);
			send_one(fd, m, HDR, &from);
			break;
		}
		send_one(fd, m, (size_t)len, &from);
		n++;
	}
	sleep(1);
	printf("rds_sock_bench: echoed %u msgs\n", n);
	return 0;
}

/* send a control message and wait for its T_ACK: the count it carries */
static uint32_t handshake(int fd, uint8_t *m, uint32_t type, uint32_t seq,
			  const union sa *to)
{
	union sa from;
	uint8_t c[HDR];
	uint32_t t;

	mkmsg(c, type, seq, 0);
	send_one(fd, c, sizeof(c), to);
	for (;;) {
		recv_one(fd, m, &from, &t);
		if (t == T_ACK && get32(m + 8) == seq)
			return get32(m + 12);
	}
}

static int run_send(int fd, uint8_t *m, const union sa *to,
		    unsigned long count, size_t size)
{
	uint8_t *d = calloc(1, size);
	unsigned long i;
	uint32_t got;
	double t0, t;

	if (!d)
		die("calloc");
	handshake(fd, m, T_SYNC, 1, to);
	for (i = HDR; i < size; i++)
		d[i] = (uint8_t)i;
	t0 = now_s();
	for (i = 0; i < count; i++) {
		mkmsg(d, T_DATA, (uint32_t)i, 0);
		send_one(fd, d, size, to);
	}
	got = handshake(fd, m, T_FIN, 2, to);
	t = now_s() - t0;
	printf("rds_sock_bench: sent %lu msgs %lu bytes in %.3f s: %.0f msgs/s "
	       "%.2f MB/s, received %u\n", count, count * size, t, count / t,
	       count * size / t / 1e6, got);
	free(d);
	return got == count ? 0 : 1;
}

static int run_rr(int fd, uint8_t *m, const union sa *to,
		  unsigned long n, size_t size)
{
	uint8_t *d = calloc(1, size);
	double *rtt = calloc(n, sizeof(*rtt));
	union sa from;
	unsigned long i;
	uint32_t type;
	ssize_t len;
	double t0;

	if (!d || !rtt)
		die("calloc");
	for (i = HDR; i < size; i++)
		d[i] = (uint8_t)(i * 7);
	for (i = 0; i < WARMUP + n; i++) {
		mkmsg(d, T_PING, (uint32_t)i, 0);
		t0 = now_s();
		send_one(fd, d, size, to);
		len = recv_one(fd, m, &from, &type);
		if (type != T_PING || (size_t)len != size ||
		    memcmp(m, d, size) != 0 || !sa_same(&from, to)) {
			fprintf(stderr, "rds_sock_bench: round trip %lu: a wrong "
				"echo (%zd bytes, type %u%s)\n", i, len, type,
				sa_same(&from, to) ? "" :
				", not from the echo's address");
			return 1;
		}
		if (i >= WARMUP)
			rtt[i - WARMUP] = (now_s() - t0) * 1e6;
	}
	handshake(fd, m, T_QUIT, 0xffffffffu, to);	/* the echo is gone */
	qsort(rtt, n, sizeof(*rtt), cmp_d);
	printf("rds_sock_bench: %lu round trips of %zu bytes median_us %.0f "
	       "p99_us %.0f min_us %.0f\n", n, size, rtt[(n - 1) / 2],
	       rtt[(n * 99 + 99) / 100 - 1], rtt[0]);
	free(rtt);
	free(d);
	return 0;
}

#ifndef SOL_RDS
#define SOL_RDS 276
#endif

/* one RDS_INFO_* table into buf: its length, each entry's in *each */
static size_t info_get(int fd, int opt, uint8_t *buf, size_t cap,
		       size_t *each)
{
	socklen_t len = (socklen_t)cap;
	int r = getsockopt(fd, SOL_RDS, opt, buf, &len);

	if (r < 0) {
		printf("info| option %d: %s\n", opt, strerror(errno));
		return 0;
	}
	*each = (size_t)r;	/* the kernel returns the entry size */
	return len;
}

static void info_addr(char *s, size_t n, int v6, const void *a)
{
	inet_ntop(v6 ? AF_INET6 : AF_INET, a, s, (socklen_t)n);
}

/* The v4 and v6 tables have the same fields, the addresses 4 or 16 bytes:
 * one printer each, reading the fields at the table's own offsets. */
#define INFO_OFF(v6, type, field) \
	((v6) ? offsetof(struct rds6_##type, field) : \
		offsetof(struct rds_##type, field))

static void info_conns(int fd, uint8_t *buf, size_t cap, int v6)
{
	size_t len, each = 0, i;
	char l[INET6_ADDRSTRLEN], f[INET6_ADDRSTRLEN];
	uint64_t tx, rx;
	const uint8_t *e;

	len = info_get(fd, v6 ? RDS6_INFO_CONNECTIONS : RDS_INFO_CONNECTIONS,
		       buf, cap, &each);
	for (i = 0; each && i + each <= len; i += each) {
		e = buf + i;
		memcpy(&tx, e + INFO_OFF(v6, info_connection, next_tx_seq), 8);
		memcpy(&rx, e + INFO_OFF(v6, info_connection, next_rx_seq), 8);
		info_addr(l, sizeof(l), v6,
			  e + INFO_OFF(v6, info_connection, laddr));
		info_addr(f, sizeof(f), v6,
			  e + INFO_OFF(v6, info_connection, faddr));
		printf("info| conn %s -> %s %.16s next_tx %llu next_rx %llu flags %#x\n",
		       l, f, (const char *)e +
		       INFO_OFF(v6, info_connection, transport),
		       (unsigned long long)tx, (unsigned long long)rx,
		       e[INFO_OFF(v6, info_connection, flags)]);
	}
}

static void info_messages(int fd, uint8_t *buf, size_t cap, int opt,
			  int v6, const char *what)
{
	size_t len, each = 0, i, shown = 0;
	char l[INET6_ADDRSTRLEN], f[INET6_ADDRSTRLEN];
	uint16_t lport, fport;
	const uint8_t *e;
	uint64_t seq;
	uint32_t mlen;

	len = info_get(fd, opt, buf, cap, &each);
	if (!each)
		return;
	printf("info| %s%s: %zu messages\n", what, v6 ? " (IPv6)" : "",
	       len / each);
	for (i = 0; i + each <= len && shown < 8; i += each, shown++) {
		e = buf + i;
		memcpy(&seq, e + INFO_OFF(v6, info_message, seq), 8);
		memcpy(&mlen, e + INFO_OFF(v6, info_message, len), 4);
		memcpy(&lport, e + INFO_OFF(v6, info_message, lport), 2);
		memcpy(&fport, e + INFO_OFF(v6, info_message, fport), 2);
		info_addr(l, sizeof(l), v6, e + INFO_OFF(v6, info_message, laddr));
		info_addr(f, sizeof(f), v6, e + INFO_OFF(v6, info_message, faddr));
		printf("info|   seq %llu len %u %s.%u -> %s.%u flags %#x\n",
		       (unsigned long long)seq, mlen, l, ntohs(lport), f,
		       ntohs(fport), e[INFO_OFF(v6, info_message, flags)]);
	}
}

static int run_info(void)
{
	size_t cap = 4 << 20, len, each = 0, i;
	uint8_t *buf = malloc(cap);
	int fd = socket(AF_RDS, SOCK_SEQPACKET, 0);

	if (fd < 0)
		die("socket(AF_RDS)");
	if (!buf)
		die("malloc");
	len = info_get(fd, RDS_INFO_COUNTERS, buf, cap, &each);
	for (i = 0; each && i + each <= len; i += each) {
		struct rds_info_counter c;

		memcpy(&c, buf + i, sizeof(c));
		c.name[sizeof(c.name) - 1] = 0;
		if (c.value)
			printf("info| counter %s %llu\n", (char *)c.name,
			       (unsigned long long)c.value);
	}
	info_conns(fd, buf, cap, 0);
	info_conns(fd, buf, cap, 1);
	info_messages(fd, buf, cap, RDS_INFO_SEND_MESSAGES, 0, "send queue");
	info_messages(fd, buf, cap, RDS6_INFO_SEND_MESSAGES, 1, "send queue");
	info_messages(fd, buf, cap, RDS_INFO_RETRANS_MESSAGES, 0, "retransmit queue");
	info_messages(fd, buf, cap, RDS6_INFO_RETRANS_MESSAGES, 1, "retransmit queue");
	info_messages(fd, buf, cap, RDS_INFO_RECV_MESSAGES, 0, "receive queues");
	info_messages(fd, buf, cap, RDS6_INFO_RECV_MESSAGES, 1, "receive queues");
	free(buf);
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	union sa me, to;
	unsigned long secs = 120;
	const char *mode;
	uint8_t *m;
	int c, fd;

	while ((c = getopt(argc, argv, "+t:b:")) != -1) {
		switch (c) {
		case 't':
			secs = num(optarg, 1, 86400);
			break;
		case 'b':
			bufsize = (int)num(optarg, 4096, 1 << 30);
			break;
		default:
			usage();
		}
	}
	argc -= optind;
	argv += optind;
	if (argc == 1 && !strcmp(argv[0], "info"))
		return run_info();
	if (argc < 3)
		usage();
	mode = argv[0];
	signal(SIGALRM, on_alarm);
	alarm((unsigned int)secs);
	setvbuf(stdout, NULL, _IOLBF, 0);
	m = malloc(MAXMSG);
	if (!m)
		die("malloc");
	if (!strcmp(mode, "sink") || !strcmp(mode, "echo")) {
		if (argc != 3)
			usage();
		me = sin_of(argv[1], argv[2]);
		fd = rds_socket(&me);
		return mode[0] == 's' ? run_sink(fd, m) : run_echo(fd, m);
	}
	if (strcmp(mode, "send") && strcmp(mode, "rr"))
		usage();
	if (argc != 6)
		usage();
	me = sin_of(argv[1], "0");
	to = sin_of(argv[2], argv[3]);
	unsigned long n = num(argv[4], 1, 100000000);
	size_t size = num(argv[5], HDR, MAXMSG);

	fd = rds_socket(&me);
	if (mode[1] == 'e')
		return run_send(fd, m, &to, n, size);
	return run_rr(fd, m, &to, n, size);
}

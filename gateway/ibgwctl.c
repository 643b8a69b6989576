// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ibgwctl: talk to ibgwd over its control socket (gateway/gw_ctl.c): one
 * request, one answer; the daemon's errors are printed as they come, with
 * exit status 1.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define ANSWER_MAX	(256 * 1024 + 4096)

static void usage(FILE *f)
{
	fprintf(f,
"usage: ibgwctl [-s SOCKET] [-j] COMMAND [ARGS]\n"
"  -s, --socket PATH   ibgwd's control socket (default /run/ibgw/ibgwd.sock)\n"
"  -j, --json          JSON output (field names in ibgwctl(8))\n"
"  -h, --help, -V, --version\n"
"commands:\n"
"  show WHAT           summary, partitions, neighbors, groups or stats\n"
"  partition add NAME KEY=VALUE...   a partition, keys as in ibgw.conf(5)\n"
"  partition del NAME  stop a partition and remove its interface\n"
"  reload              re-read the configuration file\n");
}

/* A command's words as ibgwctl(8) gives them: 1 (said on stderr) when
 * they are not, before anything is asked of ibgwd. */
static int usage_error(int n, char **w)
{
	static const char *const what[] = { "summary", "partitions",
					    "neighbors", "groups", "stats" };
	size_t i;

	if (!strcmp(w[0], "show")) {
		for (i = 0; n == 2 && i < sizeof(what) / sizeof(what[0]); i++)
			if (!strcmp(w[1], what[i]))
				return 0;
		fprintf(stderr, "ibgwctl: usage: show summary|partitions|"
			"neighbors|groups|stats\n");
		return 1;
	}
	if (!strcmp(w[0], "reload")) {
		if (n == 1)
			return 0;
		fprintf(stderr, "ibgwctl: usage: reload (no arguments)\n");
		return 1;
	}
	/* partition */
	if ((n >= 3 && !strcmp(w[1], "add")) ||
	    (n == 3 && !strcmp(w[1], "del")))
		return 0;
	fprintf(stderr, "ibgwctl: usage: partition add NAME KEY=VALUE... | "
		"partition del NAME\n");
	return 1;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *path = "/run/ibgw/ibgwd.sock";
	static char req[4096], answer[ANSWER_MAX + 1];
	struct sockaddr_un sa;
	size_t len;
	ssize_t n;
	int ch, json = 0, fd, i;

	opterr = 0;
	while ((ch = getopt_long(argc, argv, "+s:jhV", opts, NULL)) != -1) {
		switch (ch) {
		case 's': path = optarg; break;
		case 'j': json = 1; break;
		case 'h': usage(stdout); return 0;
		case 'V': printf("ibgwctl %s\n", IBGW_VERSION); return 0;
		default:
			fprintf(stderr, "ibgwctl: bad option '%s' (see "
				"--help)\n", argv[optind - 1]);
			return 2;
		}
	}
	if (optind == argc) {
		fprintf(stderr, "ibgwctl: no command (see --help)\n");
		return 2;
	}
	if (strcmp(argv[optind], "show") && strcmp(argv[optind], "partition") &&
	    strcmp(argv[optind], "reload")) {
		fprintf(stderr, "ibgwctl: unknown command '%s' (see --help)\n",
			argv[optind]);
		return 2;
	}
	if (usage_error(argc - optind, argv + optind))
		return 2;
	len = (size_t)snprintf(req, sizeof(req), "%s", json ? "json" : "text");
	for (i = optind; i < argc; i++) {
		if (!*argv[i] || strpbrk(argv[i], " \t\n") ||
		    len + 1 + strlen(argv[i]) >= sizeof(req)) {
			fprintf(stderr, "ibgwctl: bad argument '%s'\n",
				argv[i]);
			return 2;
		}
		len += (size_t)snprintf(req + len, sizeof(req) - len, " %s",
					argv[i]);
	}
	if (strlen(path) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "ibgwctl: socket path too long\n");
		return 2;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path, path, strlen(path));
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		fprintf(stderr, "ibgwctl: connect to ibgwd at %s: %s\n", path,
			strerror(errno));
		return 1;
	}
	{
		struct timeval tv = { 10, 0 };

		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	}
	if (send(fd, req, len, MSG_NOSIGNAL) != (ssize_t)len) {
		fprintf(stderr, "ibgwctl: send to ibgwd: %s\n",
			strerror(errno));
		return 1;
	}
	n = recv(fd, answer, ANSWER_MAX, 0);
	close(fd);
	if (n <= 0) {
		fprintf(stderr, "ibgwctl: no answer from ibgwd%s%s\n",
			n < 0 ? ": " : "", n < 0 ? strerror(errno) : "");
		return 1;
	}
	answer[n] = '\0';
	if (!strncmp(answer, "OK\n", 3)) {
		fputs(answer + 3, stdout);
		return 0;
	}
	if (!strncmp(answer, "ERR ", 4)) {
		fprintf(stderr, "ibgwctl: %s\n", answer + 4);
		return 1;
	}
	fprintf(stderr, "ibgwctl: unexpected answer from ibgwd\n");
	return 1;
}

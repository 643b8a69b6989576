// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ibfabricctl: look into a running ibfabricd (counters, nodes, queue pairs,
 * multicast groups) and replay pcap captures into it as a named node.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabric/fabric.h"
#include "subnet/pcap.h"
#include "fabric/prov_soft.h"
#include "fabric/soft_proto.h"

static void usage(FILE *f)
{
	fprintf(f,
"usage: ibfabricctl [-s SOCKET] COMMAND\n"
"  stats              switch counters, drops by reason\n"
"  nodes              attached nodes: GUID, LID, state, P_Key table\n"
"  qps                queue pairs: Q_Key, P_Key, multicast attachments\n"
"  mcast              multicast groups and their member QPs\n"
"  cm                 the nodes' connection managers: listeners,\n"
"                     connections and their states, CM counters\n"
"  get COUNTER        one counter from stats (e.g. drop.bad_icrc)\n"
"  partitions         partitions and the attached nodes in each\n"
"  groups [MGID]      SA multicast groups: parameters, members, JoinStates\n"
"  path SRC DST [PKEY]  the PathRecord the SA answers between two nodes\n"
"  rereg              as an SM restart: forget memberships, raise\n"
"                     CLIENT_REREGISTER on every node\n"
"  reload             re-read the partitions file (as SIGHUP); a bad file\n"
"                     is refused with its errors, the old one kept\n"
"  port NODE down|up  take a node's port down (PORT_ERR) or up (PORT_ACTIVE)\n"
"  capture off|on     pause or resume ibfabricd's packet capture\n"
"  replay FILE NODE   switch every packet of a pcap as if NODE sent it\n"
"  -s, --socket PATH  ibfabricd socket (default %s)\n"
"  -h, --help, -V, --version\n", FAB_DEFAULT_SOFT_PATH);
}

static int open_fabric(const char *sock, const char *node,
		       struct fab_dev **dev)
{
	char spec[256], err[FAB_ERRLEN];

	snprintf(spec, sizeof(spec), "soft:%s", sock);
	*dev = fab_open(spec, node, err, sizeof(err));
	if (!*dev) {
		fprintf(stderr, "ibfabricctl: %s\n", err);
		return -1;
	}
	return 0;
}

static int cmd_report(const char *sock, const char *what, const char *key)
{
	static char out[FSP_MSG_MAX];
	struct fab_dev *dev;
	size_t klen;
	char *line, err[FAB_ERRLEN];

	if (open_fabric(sock, FAB_SOFT_OBSERVER, &dev) < 0)
		return 1;
	if (fab_soft_ctl(dev, what, out, sizeof(out), err, sizeof(err)) < 0) {
		fprintf(stderr, "ibfabricctl: %s\n", err);
		fab_close(dev);
		return 1;
	}
	fab_close(dev);
	if (!key) {
		fputs(out, stdout);
		return 0;
	}
	klen = strlen(key);
	for (line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
		if (!strncmp(line, key, klen) && line[klen] == ' ') {
			printf("%s\n", line + klen + 1);
			return 0;
		}
	}
	fprintf(stderr, "ibfabricctl: no counter '%s'\n", key);
	return 2;
}

static int cmd_replay(const char *sock, const char *file, const char *node)
{
	struct pcap_reader *r;
	struct fab_dev *dev;
	const uint8_t *pkt;
	size_t len;
	char err[512];
	unsigned long n = 0;
	int rc;

	r = pcap_reader_open(file, err, sizeof(err));
	if (!r) {
		fprintf(stderr, "ibfabricctl: %s\n", err);
		return 2;
	}
	if (open_fabric(sock, node, &dev) < 0) {
		pcap_reader_close(r);
		return 1;
	}
	while ((rc = pcap_reader_next(r, &pkt, &len, err, sizeof(err))) == 1) {
		if (fab_soft_inject(dev, pkt, len, err, sizeof(err)) < 0) {
			fprintf(stderr, "ibfabricctl: packet %lu: %s\n", n + 1,
				err);
			rc = -2;
			break;
		}
		n++;
	}
	if (rc == -1)
		fprintf(stderr, "ibfabricctl: %s\n", err);
	printf("replayed %lu packet(s) as %s\n", n, node);
	fab_close(dev);
	pcap_reader_close(r);
	return rc == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *sock = FAB_DEFAULT_SOFT_PATH, *cmd;
	int ch, nargs;

	opterr = 0;
	while ((ch = getopt_long(argc, argv, "+s:hV", opts, NULL)) != -1) {
		switch (ch) {
		case 's': sock = optarg; break;
		case 'h': usage(stdout); return 0;
		case 'V': printf("ibfabricctl %s\n", IBGW_VERSION); return 0;
		default:
			fprintf(stderr, "ibfabricctl: bad option '%s' (see "
				"--help)\n", argv[optind - 1]);
			return 2;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "ibfabricctl: a command is required (see "
			"--help)\n");
		return 2;
	}
	cmd = argv[optind];
	nargs = argc - optind - 1;
	if (!strcmp(cmd, "stats") || !strcmp(cmd, "nodes") ||
	    !strcmp(cmd, "qps") || !strcmp(cmd, "mcast") ||
	    !strcmp(cmd, "cm")) {
		if (nargs)
			goto extra;
		return cmd_report(sock, cmd, NULL);
	}
	if (!strcmp(cmd, "partitions") || !strcmp(cmd, "rereg") ||
	    !strcmp(cmd, "reload") ||
	    !strcmp(cmd, "groups") || !strcmp(cmd, "path") ||
	    !strcmp(cmd, "port") || !strcmp(cmd, "capture")) {
		char line[160];
		size_t off = 0;
		int i, want = !strcmp(cmd, "groups") ? -1 :
			      !strcmp(cmd, "path") ? -2 :
			      !strcmp(cmd, "port") ? 2 :
			      !strcmp(cmd, "capture") ? 1 : 0;

		if ((want >= 0 && nargs != want) ||
		    (want == -1 && nargs > 1) ||
		    (want == -2 && (nargs < 2 || nargs > 3))) {
			fprintf(stderr, "ibfabricctl: usage: %s\n",
				want == -1 ? "groups [MGID]" :
				want == -2 ? "path SRC DST [PKEY]" :
				want == 2 ? "port NODE down|up" :
				want == 1 ? "capture off|on" : cmd);
			return 2;
		}
		for (i = optind; i < argc; i++) {
			int n;

			/* the daemon splits the line at blanks: an argument
			 * with one would become two */
			if (!*argv[i] || argv[i][strcspn(argv[i], " \t\r\n")]) {
				fprintf(stderr, "ibfabricctl: %s: bad argument "
					"'%s' (empty, or with a blank)\n", cmd,
					argv[i]);
				return 2;
			}
			n = snprintf(line + off, sizeof(line) - off, "%s%s",
				     off ? " " : "", argv[i]);

			if (n < 0 || (size_t)n >= sizeof(line) - off) {
				fprintf(stderr, "ibfabricctl: command too "
					"long\n");
				return 2;
			}
			off += (size_t)n;
		}
		return cmd_report(sock, line, NULL);
	}
	if (!strcmp(cmd, "get")) {
		if (nargs != 1) {
			fprintf(stderr, "ibfabricctl: get COUNTER\n");
			return 2;
		}
		return cmd_report(sock, "stats", argv[optind + 1]);
	}
	if (!strcmp(cmd, "replay")) {
		if (nargs != 2) {
			fprintf(stderr, "ibfabricctl: replay FILE NODE\n");
			return 2;
		}
		return cmd_replay(sock, argv[optind + 1], argv[optind + 2]);
	}
	fprintf(stderr, "ibfabricctl: unknown command '%s' (see --help)\n",
		cmd);
	return 2;
extra:
	fprintf(stderr, "ibfabricctl: '%s' takes no arguments\n", cmd);
	return 2;
}

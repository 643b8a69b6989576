// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * madtest: MADs between two ports through the fabric interface's agents,
 * for tests on a real MAD layer (the guest tier's umad_rxe.sh: the kernel's
 * ib_mad over Soft-RoCE).  It prints what happened in lines scripts grep.
 *
 *   madtest -F SPEC [--node N] ping [--class C] [--version V] [--method M]
 *           [--attr A] [--dlid L] [--dgid GID] [--gid-index I]
 *           [--hop-limit H] [--tid T] [--data TEXT] [--timeout MS]
 *   madtest -F SPEC [--node N] echo [--class C] [--version V]
 *           [--methods M[,M...]] [--count N] [--timeout MS]
 *   madtest -F SPEC [--node N] open [--class C] [--version V]
 *           [--methods M[,M...]]
 *
 * ping sends one request (class C, default 0x07 CM; version V, default
 * the class's usual; method M, default Get; attribute A, default 0xff01)
 * with TEXT in bytes 24.. and waits for the answer that has its
 * TransactionID (low 32 bits: the kernel owns the rest): a GetResp, or for
 * a Send another Send, as CM messages answer each other.  With --dgid the
 * MAD carries a GRH (required on RoCE) sent from GID table entry I.
 * (A receiving Linux drops a CM-class MAD that is neither a Send nor
 * about ClassPortInfo, attribute 0x0001: Get and Set need --attr 1.)
 * Exit 0 when the answer has status 0 and our bytes back, 3 when it has
 * another status (a kernel with no agent for the method answers 0x000c),
 * 4 when its bytes differ, 1 when none came.
 * echo registers an agent serving the methods (default Get and Send),
 * answers each request with the same bytes (Get and Set by GetResp, Send
 * by Send) to the address it came from, as received (GRH included), and
 * exits 0 after N (default 1) of them, 1 on timeout.
 * open only registers the agent, to see whether that is refused.
 *   madtest -F SPEC [--node N] raw --data FILE --dlid L [--class C]
 * raw sends each 256-byte block of FILE as a MAD, as it is (hostile-peer
 * tests), and waits for nothing.
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "conf/conf.h"
#include "inet/byteorder.h"
#include "fabric/fabric.h"
#include "tests/tools/tool.h"

#define MAD_LEN		256
#define MAD_DATA	24	/* after the common MAD header */
#define METHOD_GET	0x01
#define METHOD_SET	0x02
#define METHOD_SEND	0x03
#define METHOD_GET_RESP	0x81
#define CLASS_SA	0x03
#define CLASS_CM	0x07

struct opts {
	const char *spec;
	const char *node;
	uint8_t mgmt_class;
	uint8_t version;		/* 0: the class's usual */
	uint8_t method;
	uint16_t attr;
	uint64_t methods[2];
	int methods_set;
	uint16_t dlid;
	union fab_gid dgid;
	int dgid_set;
	uint8_t gid_index;
	uint8_t hop_limit;
	uint64_t tid;
	const char *data;
	unsigned long count;
	unsigned long timeout_ms;
};

static char fab_err[FAB_ERRLEN];

static void die(const char *what)
{
	fprintf(stderr, "madtest: %s: %s\n", what,
		fab_err[0] ? fab_err : strerror(errno));
	exit(1);
}

static unsigned long long num(const char *opt, const char *s,
			      unsigned long long max)
{
	return tool_num("madtest", opt, s, max);
}

static void parse_methods(struct opts *o, const char *s)
{
	char tmp[256], *tok, *save = NULL;
	unsigned int m;

	snprintf(tmp, sizeof(tmp), "%s", s);
	memset(o->methods, 0, sizeof(o->methods));
	for (tok = strtok_r(tmp, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		m = (unsigned int)num("--methods", tok, 0x7f);
		o->methods[m / 64] |= 1ull << (m % 64);
	}
	o->methods_set = 1;
}

/* The version the MAD header carries: the agent's, as fabric.h defaults
 * it, since the receiving kernel routes requests by it. */
static uint8_t class_version(const struct opts *o)
{
	if (o->version)
		return o->version;
	return o->mgmt_class == CLASS_SA || o->mgmt_class == CLASS_CM ? 2 : 1;
}

static struct fab_mad_agent *open_agent(const struct opts *o,
					struct fab_dev **devp,
					const uint64_t methods[2])
{
	struct fab_mad_reg reg = {
		.mgmt_class = o->mgmt_class,
		.class_version = o->version,	/* 0: as class_version() */
		.methods = { methods[0], methods[1] },
	};
	struct fab_mad_agent *agent;
	struct fab_dev *dev;

	if (!o->spec) {
		fprintf(stderr, "madtest: no -F SPEC\n");
		exit(2);
	}
	dev = fab_open(o->spec, o->node, fab_err, sizeof(fab_err));
	if (!dev)
		die("open");
	agent = fab_mad_register(dev, &reg, fab_err, sizeof(fab_err));
	if (!agent)
		die("MAD agent");
	*devp = dev;
	return agent;
}

static void print_mad(const char *what, const uint8_t *mad)
{
	printf("%s tid 0x%016llx class 0x%02x version %u method 0x%02x "
	       "status 0x%04x attr 0x%04x\n", what,
	       (unsigned long long)be64_get(mad + 8), mad[1], mad[2], mad[3],
	       (unsigned)be16_get(mad + 4), (unsigned)be16_get(mad + 16));
}

static void print_addr(const char *what, const struct fab_mad_addr *a)
{
	char gid[64] = "-";

	if (a->grh_present)
		fab_gid_to_str(&a->gid, gid, sizeof(gid));
	printf("%s lid 0x%04x qpn 0x%06x qkey 0x%08x pkey_index %u sl %u "
	       "grh %u gid %s sgid_index %u hop_limit %u tclass %u "
	       "flow 0x%05x\n", what, a->lid, a->qpn, a->qkey, a->pkey_index,
	       a->sl, a->grh_present, gid, a->sgid_index, a->hop_limit,
	       a->traffic_class, a->flow_label);
}

/* Non-blocking receive, waiting on the agent's descriptor until deadline:
 * 1 with a MAD in mad/from, 0 on timeout. */
static int mad_next(struct fab_mad_agent *agent, long long deadline,
		    uint8_t *mad, struct fab_mad_addr *from)
{
	for (;;) {
		struct pollfd pfd = { .fd = fab_mad_fd(agent),
				      .events = POLLIN };
		long long left = deadline - tool_now_ms();
		int n;

		n = fab_mad_recv(agent, mad, MAD_LEN, from);
		if (n < 0)
			die("MAD receive");
		if (n > 0)
			return 1;
		if (left <= 0)
			return 0;
		if (poll(&pfd, 1, left > 100 ? 100 : (int)left) < 0 &&
		    errno != EINTR)
			return 0;
	}
}

static int cmd_ping(const struct opts *o)
{
	uint64_t methods[2] = { 0, 0 };
	struct fab_mad_addr to = { .qpn = 1, .qkey = FAB_QP1_QKEY };
	struct fab_mad_addr from;
	struct fab_mad_agent *agent;
	struct fab_dev *dev;
	uint8_t req[MAD_LEN], rsp[MAD_LEN];
	long long deadline;
	char gid[64] = "-";

	/* A Send is answered by a Send, which comes to whoever serves the
	 * method, not back by the TransactionID as a response does. */
	if (o->method == METHOD_SEND)
		methods[0] = 1ull << METHOD_SEND;
	agent = open_agent(o, &dev, methods);

	memset(req, 0, sizeof(req));
	req[0] = 1;		/* BaseVersion */
	req[1] = o->mgmt_class;
	req[2] = class_version(o);
	req[3] = o->method;
	be64_put(req + 8, o->tid);
	be16_put(req + 16, o->attr);
	snprintf((char *)req + MAD_DATA, MAD_LEN - MAD_DATA, "%s", o->data);

	to.lid = o->dlid;
	if (o->dgid_set) {
		to.grh_present = 1;
		to.gid = o->dgid;
		to.sgid_index = o->gid_index;
		to.hop_limit = o->hop_limit;
		fab_gid_to_str(&o->dgid, gid, sizeof(gid));
	}
	if (fab_mad_send(agent, &to, req, sizeof(req)) < 0)
		die("MAD send");
	printf("mad sent tid 0x%016llx class 0x%02x version %u method 0x%02x "
	       "attr 0x%04x dlid 0x%04x grh %u dgid %s sgid_index %u\n",
	       (unsigned long long)o->tid, req[1], req[2], req[3], o->attr,
	       to.lid, to.grh_present, gid, to.sgid_index);
	fflush(stdout);

	deadline = tool_now_ms() + (long long)o->timeout_ms;
	for (;;) {
		if (!mad_next(agent, deadline, rsp, &from)) {
			fprintf(stderr, "madtest: no answer within %lu ms\n",
				o->timeout_ms);
			return 1;
		}
		if ((be64_get(rsp + 8) & 0xffffffff) ==
		    (o->tid & 0xffffffff))
			break;
		print_mad("mad ignored", rsp);
	}
	print_mad("mad rx", rsp);
	print_addr("mad rx from", &from);
	fflush(stdout);
	fab_mad_close(agent);
	fab_close(dev);
	if (be16_get(rsp + 4))
		return 3;
	if (memcmp(rsp + MAD_DATA, req + MAD_DATA, MAD_LEN - MAD_DATA)) {
		printf("mad rx data differs\n");
		return 4;
	}
	printf("mad rx data '%.*s' ok\n", MAD_LEN - MAD_DATA,
	       (const char *)rsp + MAD_DATA);
	return 0;
}

static int cmd_echo(const struct opts *o)
{
	uint64_t methods[2] = { 1ull << METHOD_GET | 1ull << METHOD_SEND, 0 };
	struct fab_mad_agent *agent;
	struct fab_mad_addr from;
	struct fab_dev *dev;
	uint8_t mad[MAD_LEN];
	long long deadline;
	unsigned long done = 0;

	if (o->methods_set)
		memcpy(methods, o->methods, sizeof(methods));
	agent = open_agent(o, &dev, methods);
	printf("mad echo class 0x%02x version %u methods 0x%016llx%016llx\n",
	       o->mgmt_class, class_version(o),
	       (unsigned long long)methods[1], (unsigned long long)methods[0]);
	fflush(stdout);
	deadline = tool_now_ms() + (long long)o->timeout_ms;
	while (done < o->count) {
		if (!mad_next(agent, deadline, mad, &from)) {
			fprintf(stderr, "madtest: %lu of %lu requests within "
				"%lu ms\n", done, o->count, o->timeout_ms);
			return 1;
		}
		print_mad("mad rx", mad);
		print_addr("mad rx from", &from);
		if (mad[3] & 0x80)
			continue;	/* a response: not ours to answer */
		if (mad[3] == METHOD_GET || mad[3] == METHOD_SET)
			mad[3] = METHOD_GET_RESP;
		be16_put(mad + 4, 0);	/* status */
		if (fab_mad_send(agent, &from, mad, sizeof(mad)) < 0)
			die("MAD send");
		print_mad("mad echoed", mad);
		fflush(stdout);
		done++;
	}
	fab_mad_close(agent);
	fab_close(dev);
	return 0;
}

/* raw: every 256-byte block of FILE (--data) leaves as one MAD through
 * an agent of --class to --dlid, whatever the block says; for the hostile
 * peers of the tests.  Answers are not waited for. */
static int cmd_raw(const struct opts *o)
{
	uint64_t methods[2] = { 0, 0 };
	struct fab_mad_addr to = { .qpn = 1, .qkey = FAB_QP1_QKEY };
	struct fab_mad_agent *agent;
	struct fab_dev *dev;
	uint8_t mad[MAD_LEN];
	unsigned long sent = 0;
	FILE *f = fopen(o->data, "r");

	if (!f) {
		fprintf(stderr, "madtest: %s: %s\n", o->data, strerror(errno));
		return 2;
	}
	agent = open_agent(o, &dev, methods);
	to.lid = o->dlid;
	while (fread(mad, 1, sizeof(mad), f) == sizeof(mad)) {
		if (fab_mad_send(agent, &to, mad, sizeof(mad)) < 0)
			die("MAD send");
		sent++;
	}
	fclose(f);
	printf("mad raw sent %lu\n", sent);
	fab_mad_close(agent);
	fab_close(dev);
	return 0;
}

static int cmd_open(const struct opts *o)
{
	struct fab_mad_agent *agent;
	struct fab_dev *dev;

	agent = open_agent(o, &dev, o->methods);
	printf("mad agent class 0x%02x version %u methods "
	       "0x%016llx%016llx open\n", o->mgmt_class, class_version(o),
	       (unsigned long long)o->methods[1],
	       (unsigned long long)o->methods[0]);
	fab_mad_close(agent);
	fab_close(dev);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "fabric", required_argument, NULL, 'F' },
		{ "node", required_argument, NULL, 'n' },
		{ "class", required_argument, NULL, 'C' },
		{ "version", required_argument, NULL, 'V' },
		{ "method", required_argument, NULL, 'M' },
		{ "methods", required_argument, NULL, 'm' },
		{ "attr", required_argument, NULL, 'a' },
		{ "dlid", required_argument, NULL, 'l' },
		{ "dgid", required_argument, NULL, 'g' },
		{ "gid-index", required_argument, NULL, 'i' },
		{ "hop-limit", required_argument, NULL, 'h' },
		{ "tid", required_argument, NULL, 'T' },
		{ "data", required_argument, NULL, 'D' },
		{ "count", required_argument, NULL, 'c' },
		{ "timeout", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 },
	};
	struct opts o = {
		.node = "madtest", .mgmt_class = CLASS_CM, .method = METHOD_GET,
		.attr = 0xff01, .tid = 0x00000000cafe0001ull,
		.data = "madtest ping", .count = 1, .timeout_ms = 10000,
	};
	const char *cmd;
	int ch;

	while ((ch = getopt_long(argc, argv, "F:", lo, NULL)) != -1) {
		switch (ch) {
		case 'F': o.spec = optarg; break;
		case 'n': o.node = optarg; break;
		case 'C': o.mgmt_class = (uint8_t)num("--class", optarg, 0xff);
			  break;
		case 'V': o.version = (uint8_t)num("--version", optarg, 0xff);
			  break;
		case 'M': o.method = (uint8_t)num("--method", optarg, 0x7f);
			  break;
		case 'm': parse_methods(&o, optarg); break;
		case 'a': o.attr = (uint16_t)num("--attr", optarg, 0xffff);
			  break;
		case 'l': o.dlid = (uint16_t)num("--dlid", optarg, 0xffff);
			  break;
		case 'g':
			if (fab_gid_from_str(optarg, &o.dgid) < 0) {
				fprintf(stderr, "madtest: bad GID '%s'\n",
					optarg);
				return 2;
			}
			o.dgid_set = 1;
			break;
		case 'i': o.gid_index = (uint8_t)num("--gid-index", optarg,
						     0xff); break;
		case 'h': o.hop_limit = (uint8_t)num("--hop-limit", optarg,
						     0xff); break;
		case 'T': o.tid = num("--tid", optarg, ~0ull); break;
		case 'D': o.data = optarg; break;
		case 'c': o.count = (unsigned long)num("--count", optarg,
						       1000000); break;
		case 't': o.timeout_ms = (unsigned long)num("--timeout", optarg,
							    3600000); break;
		default: return 2;
		}
	}
	if (argc - optind != 1) {
		fprintf(stderr, "usage: madtest -F SPEC [--node N] "
			"ping|echo|open|raw [options]\n");
		return 2;
	}
	cmd = argv[optind];
	if (!strcmp(cmd, "ping"))
		return cmd_ping(&o);
	if (!strcmp(cmd, "echo"))
		return cmd_echo(&o);
	if (!strcmp(cmd, "open"))
		return cmd_open(&o);
	if (!strcmp(cmd, "raw"))
		return cmd_raw(&o);
	fprintf(stderr, "madtest: unknown command '%s'\n", cmd);
	return 2;
}

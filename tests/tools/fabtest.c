// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * fabtest: a node process for integration tests.  It opens a port on a
 * fabric through the fabric interface, then sends or receives UD datagrams
 * and prints what happened in lines the test scripts grep.
 *
 *   fabtest [-s SOCK | -F SPEC] info NODE
 *   fabtest [-s SOCK] recv NODE [--qkey Q] [--pkey P] [--mcast MGID@MLID]...
 *                          [--join MGID]... [--join-state N]
 *                          [--count N] [--timeout MS] [--idle MS]
 *                          [--qpn-file F] [--depth N] [--verify]
 *   fabtest [-s SOCK] send NODE --dlid L [--dqpn Q] [--qkey Q] [--pkey P]
 *                          [--own-qkey Q] [--mgid G | --dgid G]
 *                          [--gid-index N] [--count N] [--batch N]
 *                          [--size N] [--data TEXT | --pattern]
 *                          [--interval-us U] [--depth N] [--linger MS]
 *   fabtest [-s SOCK | -F SPEC] mad-ping NODE [--dlid L] [--tid T]
 *                          [--timeout MS]
 *
 * -F (--fabric) takes a whole fabric spec (umad:ibsim0:1, verbs:mlx5_0);
 * without it the node attaches to ibfabricd at soft:SOCK.
 * In --data, "%n" stands for the message number (0, 1, ...).
 * --dgid and --mgid give the AH a GRH to that GID (on RoCE the only way
 * to address a port: --dlid is ignored there); a multicast GID (ff..,
 * or ::ffff:224.0.0.0/4 on RoCE v2 over IPv4) goes to QPN 0xffffff.
 * --gid-index picks the source GID (default: the port's, see info).
 * --batch posts N datagrams per fab_qp_send call.  --pattern fills each
 * datagram of --size bytes with "SEQ" and its number in 8 digits, then
 * bytes (number * 7 + offset) & 0xff; recv --verify checks every datagram
 * against that and prints "verify ok N bad B dup D missing M" at the end
 * (missing against --count), and no rx line per datagram.
 * --depth sets both queue depths of the QP (0: the provider's default).
 * --linger keeps the QP MS milliseconds after the last send: rdma_rxe
 * completes UD sends it has not transmitted yet when it is short of
 * socket buffers, and drops them if the QP goes away meanwhile.
 * --join joins MGID through the SA (creating it with the QP's Q_Key and
 * P_Key if it does not exist), then attaches the QP to the MLID the SA
 * gave; the qpn file then holds "QPN LID MLID" (of the first join).
 * mad-ping sends an SA Get(ClassPortInfo) through a MAD agent to --dlid
 * (default: the port's SM LID) and prints the response.
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <sys/socket.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "conf/conf.h"
#include "inet/byteorder.h"
#include "fabric/fabric.h"
#include "tests/tools/tool.h"
#include "fabric/sa_client.h"
#include "fabric/ib_pkt.h"
#include "fabric/prov_soft.h"
#include "fabric/soft_proto.h"
#include "fabric/soft_ring.h"

#define MAX_MCAST 8
#define MAD_LEN 256

struct opts {
	const char *sock;
	const char *spec;		/* -F: overrides soft:sock */
	const char *node;
	uint32_t qkey, own_qkey;
	int qkey_set, own_qkey_set;
	int pkey;			/* -1: index 0 */
	uint16_t dlid;
	uint32_t dqpn;
	int dqpn_set;
	union fab_gid mgid;
	int mgid_set;
	struct { union fab_gid gid; uint16_t mlid; } mc[MAX_MCAST];
	int nmc;
	union fab_gid join[MAX_MCAST];
	int njoin;
	uint8_t join_state;
	unsigned long count;
	unsigned long size;
	const char *data;
	unsigned long timeout_ms;
	unsigned long idle_ms;		/* recv: stop after this long quiet */
	unsigned long interval_us;
	const char *qpn_file;
	uint64_t tid;
	int gid_index;			/* -1: the port's source GID */
	unsigned long batch;
	int pattern, verify;
	uint32_t depth;
	unsigned long linger_ms;
};

#define PAT_HDR 11	/* "SEQ" and 8 digits */

/* The reason a set-up call gave (fabric.h's err); the per-packet calls
 * give errno only. */
static char fab_err[FAB_ERRLEN];

static void die(const char *what)
{
	fprintf(stderr, "fabtest: %s: %s\n", what,
		fab_err[0] ? fab_err : strerror(errno));
	exit(1);
}

static void die_send(const struct fab_send_wr *wr)
{
	if (errno == EMSGSIZE) {
		fprintf(stderr, "fabtest: send: a datagram of %u bytes "
			"exceeds the port MTU\n", wr->len);
		exit(1);
	}
	die("send");
}

static unsigned long long num(const char *opt, const char *s,
			      unsigned long long max)
{
	return tool_num("fabtest", opt, s, max);
}

static struct fab_dev *open_dev(const struct opts *o,
				struct fab_port_attr *pa)
{
	struct fab_dev *dev;
	char spec[300];

	if (o->spec)
		snprintf(spec, sizeof(spec), "%s", o->spec);
	else
		snprintf(spec, sizeof(spec), "soft:%s", o->sock);
	dev = fab_open(spec, o->node, fab_err, sizeof(fab_err));
	if (!dev)
		die("open");
	if (fab_query_port(dev, pa, fab_err, sizeof(fab_err)) < 0)
		die("query port");
	return dev;
}

static struct fab_qp *make_qp(const struct opts *o, struct fab_dev *dev,
			      const struct fab_port_attr *pa, uint32_t qkey)
{
	struct fab_qp_init init = { .type = FAB_QPT_UD, .qkey = qkey,
				    .max_send = o->depth,
				    .max_recv = o->depth };
	struct fab_qp *qp;
	int idx = 0;

	if (o->pkey >= 0) {
		idx = fab_pkey_find(pa, (uint16_t)o->pkey);
		if (idx < 0) {
			fprintf(stderr, "fabtest: P_Key 0x%04x not in %s's "
				"table\n", o->pkey, o->node);
			exit(1);
		}
	}
	init.pkey_index = (uint16_t)idx;
	qp = fab_qp_create(dev, &init, fab_err, sizeof(fab_err));
	if (!qp)
		die("create QP");
	return qp;
}

static const char *link_layer_name(enum fab_link_layer ll)
{
	switch (ll) {
	case FAB_LINK_IB: return "ib";
	case FAB_LINK_ETHERNET: return "ethernet";
	}
	return "unknown";
}

static const char *gid_type_name(enum fab_gid_type t)
{
	switch (t) {
	case FAB_GID_IB: return "ib";
	case FAB_GID_ROCE_V1: return "roce-v1";
	case FAB_GID_ROCE_V2: return "roce-v2";
	}
	return "unknown";
}

static int cmd_info(const struct opts *o)
{
	struct fab_port_attr pa;
	struct fab_dev *dev = open_dev(o, &pa);
	char gid[64];
	unsigned int i;

	fab_gid_to_str(&pa.sgid, gid, sizeof(gid));
	printf("link_layer %s\nsgid_index %u\nsgid_type %s\nsgid %s\n",
	       link_layer_name(pa.link_layer), pa.sgid_index,
	       gid_type_name(pa.sgid_type), gid);
	fab_gid_to_str(&pa.gid, gid, sizeof(gid));
	printf("node %s\nlid 0x%04x\nsm_lid 0x%04x\nsm_sl %u\nlmc %u\n"
	       "port %u\nstate %d\nmtu %d\n"
	       "node_guid 0x%016llx\nport_guid 0x%016llx\ngid %s\npkeys",
	       o->node, pa.lid, pa.sm_lid, pa.sm_sl, pa.lmc, pa.port_num,
	       pa.state, fab_mtu_to_bytes(pa.active_mtu),
	       (unsigned long long)pa.node_guid,
	       (unsigned long long)pa.port_guid, gid);
	for (i = 0; i < pa.npkeys; i++)
		printf(" 0x%04x", pa.pkeys[i]);
	printf("\n");
	fab_close(dev);
	return 0;
}

/* Print pending port events; 1 if the fabric is gone. */
static int print_events(struct fab_dev *dev)
{
	struct fab_event ev;
	int fatal = 0;

	while (fab_get_event(dev, &ev) == 1) {
		printf("event %s\n", fab_event_name(ev.type));
		fflush(stdout);
		if (ev.type == FAB_EV_DEVICE_FATAL)
			fatal = 1;
	}
	return fatal;
}

struct join_ctx {
	struct event_base *base;
	struct sa_result res;
	int done;
};

static void join_cb(void *arg, const struct sa_result *res)
{
	struct join_ctx *j = arg;

	j->res = *res;
	j->done = 1;
	event_base_loopbreak(j->base);
}

/* SA join of every --join group; attaches qp; returns the first MLID */
static uint16_t join_groups(const struct opts *o, struct fab_dev *dev,
			    const struct fab_port_attr *pa, struct fab_qp *qp)
{
	struct join_ctx j = { .base = event_base_new() };
	struct sa_client_cfg cfg = { .timeout_ms = 1000, .retries = 3 };
	struct sa_client *sa = j.base ? sa_client_new(j.base, dev, &cfg,
						      fab_err,
						      sizeof(fab_err)) : NULL;
	uint16_t first = 0;
	char rs[96], gs[64];
	int i;

	if (!sa) {
		fprintf(stderr, "fabtest: %s\n", fab_err);
		exit(1);
	}
	for (i = 0; i < o->njoin; i++) {
		struct sa_mcmember r;

		memset(&r, 0, sizeof(r));
		r.mgid = o->join[i];
		r.port_gid = pa->gid;
		r.qkey = o->qkey_set ? o->qkey : 0x0b1b;
		r.pkey = (o->pkey >= 0 ? (uint16_t)o->pkey : pa->pkeys[0]) |
			 0x8000;
		r.join_state = o->join_state;
		j.done = 0;
		if (!sa_mcm_join(sa, &r, SA_MCM_CREATE_MASK, join_cb, &j))
			die("SA join");
		while (!j.done)
			event_base_dispatch(j.base);
		fab_gid_to_str(&o->join[i], gs, sizeof(gs));
		if (!sa_result_ok(&j.res) || !j.res.nrec) {
			fprintf(stderr, "fabtest: join %s: %s\n", gs,
				sa_result_str(&j.res, rs, sizeof(rs)));
			exit(1);
		}
		printf("joined %s mlid 0x%04x qkey 0x%08x\n", gs,
		       j.res.rec.mcm[0].mlid, j.res.rec.mcm[0].qkey);
		if (fab_attach_mcast(qp, &o->join[i], j.res.rec.mcm[0].mlid,
				     fab_err, sizeof(fab_err)) < 0)
			die("attach");
		if (!first)
			first = j.res.rec.mcm[0].mlid;
	}
	/* the memberships stay with the port while this process lives */
	sa_client_free(sa);
	event_base_free(j.base);
	return first;
}

/* A multicast GID: ff00::/8, or IPv4-mapped 224.0.0.0/4 (RoCE v2). */
static int gid_is_mcast(const union fab_gid *g)
{
	static const uint8_t v4[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff,
					0xff };

	return g->raw[0] == 0xff ||
	       (!memcmp(g->raw, v4, sizeof(v4)) && (g->raw[12] & 0xf0) == 0xe0);
}

/* --pattern's datagram number seq, len bytes */
static void pattern_fill(uint8_t *p, uint32_t len, unsigned long seq)
{
	char hdr[PAT_HDR + 1];
	uint32_t i;

	snprintf(hdr, sizeof(hdr), "SEQ%08lu", seq % 100000000ul);
	memcpy(p, hdr, PAT_HDR);
	for (i = PAT_HDR; i < len; i++)
		p[i] = (uint8_t)(seq * 7 + i);
}

/* The number of a --pattern datagram, or -1 if it is not one. */
static long pattern_check(const uint8_t *p, uint32_t len)
{
	unsigned long seq = 0;
	uint32_t i;

	if (len < PAT_HDR || memcmp(p, "SEQ", 3))
		return -1;
	for (i = 3; i < PAT_HDR; i++) {
		if (p[i] < '0' || p[i] > '9')
			return -1;
		seq = seq * 10 + (unsigned long)(p[i] - '0');
	}
	for (i = PAT_HDR; i < len; i++) {
		if (p[i] != (uint8_t)(seq * 7 + i))
			return -1;
	}
	return (long)seq;
}

/*
 * The addresses in a received GRH slot: an IB/RoCE v1/RoCE v2-over-IPv6
 * GRH (IP version 6) has SGID and DGID at 8 and 24; for RoCE v2 over
 * IPv4 verbs leaves 20 bytes, then the IPv4 header (addresses at 12, 16
 * of it), shown IPv4-mapped as the GIDs are.
 */
static void grh_addrs(const uint8_t *g, char *s, char *d, size_t len)
{
	union fab_gid a, b;

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	if (g[0] >> 4 == 6) {
		memcpy(a.raw, g + 8, 16);
		memcpy(b.raw, g + 24, 16);
	} else if (g[20] >> 4 == 4) {
		a.raw[10] = a.raw[11] = b.raw[10] = b.raw[11] = 0xff;
		memcpy(a.raw + 12, g + 32, 4);
		memcpy(b.raw + 12, g + 36, 4);
	}
	fab_gid_to_str(&a, s, len);
	fab_gid_to_str(&b, d, len);
}

static int cmd_recv(const struct opts *o)
{
	struct fab_port_attr pa;
	struct fab_dev *dev = open_dev(o, &pa);
	struct fab_qp *qp = make_qp(o, dev, &pa, o->qkey_set ? o->qkey : 0x0b1b);
	static uint8_t bufs[16][FAB_GRH_LEN + 4096];
	struct fab_recv rc[16];
	unsigned long got = 0;
	int more = 0;
	long long deadline = tool_now_ms() + (long long)o->timeout_ms;
	uint16_t mlid = 0;
	unsigned long v_ok = 0, v_bad = 0, v_dup = 0, v_bytes = 0;
	uint8_t *seen = NULL;
	int i, n;

	if (o->verify && o->count) {
		seen = calloc(o->count, 1);
		if (!seen)
			return 1;
	}

	for (i = 0; i < o->nmc; i++)
		if (fab_attach_mcast(qp, &o->mc[i].gid, o->mc[i].mlid,
				     fab_err, sizeof(fab_err)) < 0)
			die("attach");
	if (o->njoin)
		mlid = join_groups(o, dev, &pa, qp);
	if (o->qpn_file) {
		FILE *f = fopen(o->qpn_file, "w");

		if (!f) {
			perror(o->qpn_file);
			return 1;
		}
		if (o->njoin)
			fprintf(f, "0x%06x 0x%04x 0x%04x\n", fab_qp_num(qp),
				pa.lid, mlid);
		else
			fprintf(f, "0x%06x 0x%04x\n", fab_qp_num(qp), pa.lid);
		fclose(f);
	}
	printf("qpn 0x%06x lid 0x%04x\n", fab_qp_num(qp), pa.lid);
	/* which data path the soft provider took (shared rings or socket) */
	if (!o->spec || !strncmp(o->spec, "soft:", 5))
		printf("rings %d\n", fab_soft_qp_rings(qp) != NULL);
	fflush(stdout);
	while (!o->count || got < o->count) {
		struct pollfd pfd[2] = {
			{ .fd = fab_qp_fd(qp), .events = POLLIN },
			{ .fd = fab_dev_fd(dev), .events = POLLIN },
		};
		long long left = deadline - tool_now_ms();

		/* --idle: once traffic has started, a quiet spell ends it */
		if (o->idle_ms && got && left > (long long)o->idle_ms)
			left = (long long)o->idle_ms;
		if (left <= 0)
			break;
		/* a full batch: more may be buffered, the fd tells nothing */
		n = poll(pfd, 2, more ? 0 : (int)left);
		if (n < 0 && errno != EINTR)
			break;
		if (n == 0 && o->idle_ms && got && !more)
			break;
		if (print_events(dev))
			exit(1);
		for (i = 0; i < 16; i++) {
			rc[i].buf = bufs[i];
			rc[i].buf_len = sizeof(bufs[i]);
		}
		n = fab_qp_recv(qp, rc, 16);
		if (n < 0) {
			print_events(dev);
			die("recv");
		}
		more = n == 16;
		for (i = 0; i < n; i++) {
			uint32_t len = rc[i].byte_len - FAB_GRH_LEN;
			uint32_t show = len > 64 ? 64 : len;
			char addrs[160] = "", s[64], d[64];

			if (o->verify) {
				long seq = pattern_check(rc[i].buf +
							 FAB_GRH_LEN, len);

				v_bytes += len;
				if (seq < 0 || rc[i].truncated)
					v_bad++;
				else if (seen && (unsigned long)seq >= o->count)
					v_bad++;
				else if (seen && seen[seq])
					v_dup++;
				else
					v_ok++;
				if (seen && seq >= 0 &&
				    (unsigned long)seq < o->count)
					seen[seq] = 1;
				if (got + (unsigned long)i > 0)
					continue;	/* the first is shown */
			}
			if (rc[i].grh_present) {
				grh_addrs(rc[i].buf, s, d, sizeof(s));
				snprintf(addrs, sizeof(addrs),
					 " sgid=%s dgid=%s", s, d);
			}
			printf("rx slid=0x%04x src_qp=0x%06x pkey_index=%u "
			       "grh=%u%s len=%u data=%.*s\n", rc[i].slid,
			       rc[i].src_qp, rc[i].pkey_index,
			       rc[i].grh_present, addrs, len,
			       o->verify ? PAT_HDR : (int)show,
			       (const char *)rc[i].buf + FAB_GRH_LEN);
		}
		got += (unsigned long)n;
		fflush(stdout);
	}
	printf("received %lu\n", got);
	if (o->verify) {
		unsigned long miss = 0, k;

		for (k = 0; seen && k < o->count; k++)
			miss += !seen[k];
		printf("verify ok %lu bad %lu dup %lu missing %lu bytes %lu\n",
		       v_ok, v_bad, v_dup, miss, v_bytes);
		free(seen);
	}
	fab_qp_destroy(qp);
	fab_close(dev);
	return 0;
}

/* The text of datagram seq into buf (cap bytes); its length. */
static uint32_t send_fill(const struct opts *o, uint8_t *buf, size_t cap,
			  unsigned long seq)
{
	const char *at = o->data ? strstr(o->data, "%n") : NULL;

	if (o->pattern) {
		pattern_fill(buf, (uint32_t)o->size, seq);
		return (uint32_t)o->size;
	}
	if (at)	/* "%n" in --data: the message number */
		return (uint32_t)snprintf((char *)buf, cap, "%.*s%lu%s",
					  (int)(at - o->data), o->data, seq,
					  at + 2);
	if (o->data) {
		memcpy(buf, o->data, strlen(o->data));
		return (uint32_t)strlen(o->data);
	}
	memset(buf, 'x', o->size);
	return (uint32_t)o->size;
}

static int cmd_send(const struct opts *o)
{
	struct fab_port_attr pa;
	struct fab_dev *dev = open_dev(o, &pa);
	struct fab_qp *qp = make_qp(o, dev, &pa,
				    o->own_qkey_set ? o->own_qkey : 0x0b1b);
	struct fab_ah_attr aa = { .dlid = o->dlid, .hop_limit = 0xff };
	unsigned long batch = o->batch ? o->batch : 1;
	struct fab_send_wr *wrs;
	struct fab_ah *ah;
	uint8_t *bufs;
	size_t cap = (o->data ? strlen(o->data) : o->size) + 24;
	unsigned long sent = 0, calls = 0, k;
	uint32_t dqpn;

	if (o->pattern && o->size < PAT_HDR) {
		fprintf(stderr, "fabtest: --pattern needs --size %d or more\n",
			PAT_HDR);
		return 2;
	}
	if (o->mgid_set) {
		aa.is_global = 1;
		aa.dgid = o->mgid;
	}
	if (o->gid_index >= 0) {
		aa.use_sgid_index = 1;
		aa.sgid_index = (uint8_t)o->gid_index;
	}
	ah = fab_ah_create(dev, &aa, fab_err, sizeof(fab_err));
	if (!ah)
		die("address handle");
	wrs = calloc(batch, sizeof(*wrs));
	bufs = calloc(batch, cap);
	if (!wrs || !bufs)
		return 1;
	if (o->dqpn_set)
		dqpn = o->dqpn;
	else if ((o->mgid_set && gid_is_mcast(&o->mgid)) ||
		 o->dlid >= FAB_LID_MCAST_MIN)
		dqpn = FAB_MCAST_QPN;
	else
		dqpn = 0;
	while (sent < o->count) {
		unsigned long n = o->count - sent < batch ? o->count - sent :
				  batch, off = 0;

		for (k = 0; k < n; k++) {
			wrs[k].ah = ah;
			wrs[k].remote_qpn = dqpn;
			wrs[k].remote_qkey = o->qkey_set ? o->qkey : 0x0b1b;
			wrs[k].buf = bufs + k * cap;
			wrs[k].len = send_fill(o, bufs + k * cap, cap,
					       sent + k);
		}
		/* what the send queue did not take is offered again */
		while (off < n) {
			int m = fab_qp_send(qp, wrs + off, (int)(n - off));

			calls++;
			if (m < 0)
				die_send(&wrs[off]);
			if (m == 0)
				usleep(100);
			off += (unsigned long)m;
		}
		sent += n;
		if (o->interval_us)
			usleep((useconds_t)o->interval_us);
	}
	if (o->linger_ms)
		usleep((useconds_t)(o->linger_ms * 1000));
	printf("sent %lu\n", sent);
	if (o->batch)
		printf("send calls %lu\n", calls);
	free(bufs);
	free(wrs);
	fab_ah_destroy(ah);
	fab_qp_destroy(qp);
	fab_close(dev);
	return 0;
}

/*
 * burst-garbage: bursts (FSP_QP_BURST) with broken framing written straight
 * to the QP socket, around two well-formed packets ("ok-1", "ok-2") that
 * must still arrive: a length past the end, a zero length, a lone byte.
 */
static int cmd_burst_garbage(const struct opts *o)
{
	struct fab_port_attr pa;
	struct fab_dev *dev = open_dev(o, &pa);
	struct fab_qp *qp = make_qp(o, dev, &pa, 0x0b1b);
	uint8_t b[2 * (FSP_BURST_REC + IB_MAX_PKT)];
	struct ib_ud u;
	size_t n, len;
	int fd = fab_soft_qp_sock(qp), i;

	if (fab_soft_qp_rings(qp)) {
		fprintf(stderr, "fabtest: burst-garbage needs "
			"IBGW_SOFT_RINGS=0\n");
		return 1;
	}
	for (i = 1; i <= 2; i++) {
		char msg[8];

		snprintf(msg, sizeof(msg), "ok-%d", i);
		memset(&u, 0, sizeof(u));
		u.lrh.dlid = o->dlid;
		u.lrh.slid = pa.lid;
		u.bth.pkey = pa.pkeys[0];
		u.bth.destqp = o->dqpn;
		u.deth.qkey = o->qkey_set ? o->qkey : 0x0b1b;
		u.deth.srcqp = fab_qp_num(qp);
		u.payload = (const uint8_t *)msg;
		u.payload_len = (uint32_t)strlen(msg);
		len = ib_ud_build(&u, b + FSP_BURST_REC, IB_MAX_PKT);
		if (!len)
			return 1;
		b[0] = (uint8_t)(len >> 8);
		b[1] = (uint8_t)len;
		n = FSP_BURST_REC + len;
		if (i == 1) {
			/* then a record claiming more than is left */
			static const uint8_t tail[12] = { 0xff, 0xff, '0', '1',
							  '2', '3', '4', '5',
							  '6', '7', '8', '9' };

			memcpy(b + n, tail, sizeof(tail));
			n += sizeof(tail);
		}
		if (send(fd, b, n, 0) != (ssize_t)n)
			return 1;
		if (i == 1) {
			if (send(fd, "\0\0", 2, 0) != 2 ||	/* length 0 */
			    send(fd, "\x07", 1, 0) != 1)	/* lone byte */
				return 1;
		}
	}
	printf("sent 2 good packets, 3 broken records\n");
	fab_qp_destroy(qp);
	fab_close(dev);
	return 0;
}

/* One datagram with text from qp to (dlid, dqpn) with Q_Key qkey. */
static void send_text(struct fab_dev *dev, struct fab_qp *qp, uint16_t dlid,
		      uint32_t dqpn, uint32_t qkey, const char *text)
{
	struct fab_ah_attr aa = { .dlid = dlid, .hop_limit = 0xff };
	struct fab_ah *ah = fab_ah_create(dev, &aa, fab_err, sizeof(fab_err));
	struct fab_send_wr wr = {
		.ah = ah, .remote_qpn = dqpn, .remote_qkey = qkey,
		.buf = text, .len = (uint32_t)strlen(text),
	};

	int n;

	if (!ah)
		die("address handle");
	while ((n = fab_qp_send(qp, &wr, 1)) == 0)
		usleep(100);	/* the send queue is full */
	if (n != 1)
		die_send(&wr);
	fab_ah_destroy(ah);
}

/* Publish tail on a ring as a producer would, kick ibfabricd if it asked,
 * and wait (5 s at most) until it has taken everything. */
static int ring_poke(struct fsp_ring_ctl *ctl, int fd, uint32_t tail)
{
	int i;

	atomic_store(&ctl->tail, tail);
	if (atomic_exchange(&ctl->wait, 0) && send(fd, "k", 1, 0) != 1)
		return -1;
	for (i = 0; i < 5000; i++) {
		if (atomic_load(&ctl->head) == tail)
			return 0;
		usleep(1000);
	}
	fprintf(stderr, "fabtest: ibfabricd did not take the ring\n");
	return -1;
}

/*
 * ring-garbage: impossible shared rings (FSP_QP_SHM) on a second QP,
 * between two well-formed packets ("ok-1", "ok-2") sent from a first QP
 * that must still arrive: a record longer than what was published, a
 * wrap marker skipping more than was published, a tail beyond the ring,
 * an unaligned tail (each counted once as bad_ring), and two well-framed
 * packets with a bad VCRC and a bad ICRC; then a receive ring
 * whose head lies, flooded: what does not fit is lost as rx_overrun.
 */
static int cmd_ring_garbage(const struct opts *o)
{
	struct fab_port_attr pa;
	struct fab_dev *dev = open_dev(o, &pa);
	struct fab_qp *qp = make_qp(o, dev, &pa, 0x0b1b);
	struct fab_qp *g = make_qp(o, dev, &pa, 0x0b1c);
	uint8_t *m = fab_soft_qp_rings(g), *data;
	struct fsp_ring_ctl *tx, *rx;
	uint32_t qkey = o->qkey_set ? o->qkey : 0x0b1b, h, v;
	int fd = fab_soft_qp_sock(g);
	static char big[4001];

	if (!m) {
		fprintf(stderr, "fabtest: the QP has no rings\n");
		return 1;
	}
	tx = (struct fsp_ring_ctl *)m;
	rx = (struct fsp_ring_ctl *)(m + FSP_RING_CTL_BYTES);
	data = m + FSP_SHM_DATA;
	send_text(dev, qp, (uint16_t)o->dlid, o->dqpn, qkey, "ok-1");
	/* a record longer than what was published */
	h = atomic_load(&tx->head);
	v = 0x7fffffff;
	memcpy(data + (h & (FSP_RING_SIZE - 1)), &v, 4);
	if (ring_poke(tx, fd, h + 8) < 0)
		return 1;
	/* a wrap marker that skips more than was published */
	h = atomic_load(&tx->head);
	v = FSP_RING_WRAP;
	memcpy(data + (h & (FSP_RING_SIZE - 1)), &v, 4);
	if (ring_poke(tx, fd, h + 8) < 0)
		return 1;
	/* well-framed records whose packet has a bad VCRC, then a bad
	 * ICRC: the switch's checks still run on ring packets */
	for (v = 0; v < 2; v++) {
		struct ib_ud u;
		uint8_t *at;
		uint32_t l;

		h = atomic_load(&tx->head);
		at = data + (h & (FSP_RING_SIZE - 1));
		memset(&u, 0, sizeof(u));
		u.lrh.dlid = (uint16_t)o->dlid;
		u.lrh.slid = pa.lid;
		u.bth.pkey = pa.pkeys[0];
		u.bth.destqp = o->dqpn;
		u.deth.qkey = qkey;
		u.deth.srcqp = fab_qp_num(g);
		u.payload = (const uint8_t *)"bad crc, this must not arrive";
		u.payload_len = 29;
		l = (uint32_t)ib_ud_build(&u, at + FSP_RING_REC, IB_MAX_PKT);
		if (!l)
			return 1;
		/* VCRC: the last byte; ICRC: the fourth byte from last but
		 * two (the VCRC is then recomputed to match) */
		if (v == 0) {
			at[FSP_RING_REC + l - 1] ^= 0x01;
		} else {
			uint16_t vc;

			at[FSP_RING_REC + l - 6] ^= 0x01;
			vc = ib_vcrc(at + FSP_RING_REC, l - IB_VCRC_LEN);
			at[FSP_RING_REC + l - 2] = (uint8_t)vc;
			at[FSP_RING_REC + l - 1] = (uint8_t)(vc >> 8);
		}
		memcpy(at, &l, 4);
		if (ring_poke(tx, fd, h + ((FSP_RING_REC + l + 7) & ~7u)) < 0)
			return 1;
	}
	/* a tail beyond what a ring holds, then an unaligned one */
	h = atomic_load(&tx->head);
	if (ring_poke(tx, fd, h + 3 * FSP_RING_SIZE) < 0)
		return 1;
	h = atomic_load(&tx->head);
	if (ring_poke(tx, fd, h + 5) < 0)
		return 1;
	/* the receive ring's head out of range: once ibfabricd looks at
	 * it (when the ring seems full) it reads as full; nothing is read
	 * from G, so more 4000-byte datagrams than the ring holds overrun
	 * it either way */
	atomic_store(&rx->head, atomic_load(&rx->tail) + 3 * FSP_RING_SIZE);
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	for (v = 0; v < FSP_RING_SIZE / 4000 + 64; v++)
		send_text(dev, qp, pa.lid, fab_qp_num(g), 0x0b1c, big);
	send_text(dev, qp, (uint16_t)o->dlid, o->dqpn, qkey, "ok-2");
	printf("sent 2 good packets, 6 broken records or rings, %u to a "
	       "lying ring\n", FSP_RING_SIZE / 4000 + 64);
	/* qp first: its destroy switches all it sent, while G still takes
	 * packets */
	fab_qp_destroy(qp);
	fab_qp_destroy(g);
	fab_close(dev);
	return 0;
}

/*
 * mad-ping ends on SIGTERM/SIGINT/SIGHUP as on a timeout, through exit():
 * a umad2sim client that dies by a signal skips its atexit cleanup and
 * keeps its ibsim client slot (10 in all) until ibsim exits.
 */
static volatile sig_atomic_t stop_signal;

static void on_stop_signal(int sig)
{
	stop_signal = sig;
}

static void catch_stop_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop_signal;	/* no SA_RESTART: poll returns */
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

/* Wait for the response to 'tid' (low 32 bits: the provider may rewrite
 * the rest); 1 when it is in mad/from, 0 on timeout or a stop signal. */
static int mad_wait(struct fab_mad_agent *agent, uint64_t tid,
		    long long deadline, uint8_t *mad,
		    struct fab_mad_addr *from)
{
	for (;;) {
		struct pollfd pfd = { .fd = fab_mad_fd(agent),
				      .events = POLLIN };
		long long left = deadline - tool_now_ms();
		int n;

		n = fab_mad_recv(agent, mad, MAD_LEN, from);
		if (n < 0)
			die("MAD receive");
		if (n > 0) {
			uint64_t got = be64_get(mad + 8);

			if ((got & 0xffffffff) == (tid & 0xffffffff))
				return 1;
			printf("mad ignored tid 0x%016llx method 0x%02x\n",
			       (unsigned long long)got, mad[3]);
			continue;
		}
		if (left <= 0 || stop_signal)
			return 0;
		/* Only this descriptor: under umad2sim it is a fake one
		 * that only its poll() wrapper knows (see prov_umad.c). */
		if (poll(&pfd, 1, left > 100 ? 100 : (int)left) < 0 &&
		    errno != EINTR)
			return 0;
	}
}

static int cmd_mad_ping(const struct opts *o)
{
	struct fab_port_attr pa;
	struct fab_dev *dev = open_dev(o, &pa);
	struct fab_mad_agent *agent;
	struct fab_mad_addr to = { .qpn = 1, .qkey = FAB_QP1_QKEY };
	struct fab_mad_addr from;
	uint8_t req[MAD_LEN], rsp[MAD_LEN];
	const uint8_t *cpi = rsp + 56;	/* SA header is 56 bytes */
	uint32_t cap2_resp;

	catch_stop_signals();
	agent = fab_mad_open(dev, 0x03, fab_err, sizeof(fab_err));
	if (!agent)
		die("MAD agent");
	to.lid = o->dlid ? o->dlid : pa.sm_lid;
	to.sl = pa.sm_sl;
	memset(req, 0, sizeof(req));
	req[0] = 1;		/* BaseVersion */
	req[1] = 0x03;		/* MgmtClass: SA */
	req[2] = 2;		/* ClassVersion */
	req[3] = 0x01;		/* Method: Get */
	be64_put(req + 8, o->tid);
	be16_put(req + 16, 0x0001);	/* ClassPortInfo */
	if (fab_mad_send(agent, &to, req, sizeof(req)) < 0)
		die("MAD send");
	printf("mad sent dlid 0x%04x tid 0x%016llx\n", to.lid,
	       (unsigned long long)o->tid);
	fflush(stdout);
	if (!mad_wait(agent, o->tid, tool_now_ms() + (long long)o->timeout_ms,
		      rsp, &from)) {
		if (stop_signal)
			fprintf(stderr, "fabtest: stopped by signal %d\n",
				(int)stop_signal);
		else
			fprintf(stderr, "fabtest: no response within %lu ms\n",
				o->timeout_ms);
		exit(1);
	}
	cap2_resp = (uint32_t)be32_get(cpi + 4);
	printf("mad rx slid 0x%04x src_qp 0x%06x qkey 0x%08x sl %u\n"
	       "mad method 0x%02x status 0x%04x class 0x%02x version %u "
	       "attr 0x%04x tid 0x%016llx\n"
	       "cpi base_version %u class_version %u capmask 0x%04x "
	       "capmask2 0x%07x resp_time 0x%02x\n",
	       from.lid, from.qpn, from.qkey, from.sl,
	       rsp[3], (unsigned)be16_get(rsp + 4), rsp[1], rsp[2],
	       (unsigned)be16_get(rsp + 16),
	       (unsigned long long)be64_get(rsp + 8),
	       cpi[0], cpi[1], (unsigned)be16_get(cpi + 2),
	       cap2_resp >> 5, cap2_resp & 0x1f);
	fab_mad_close(agent);
	fab_close(dev);
	return 0;
}

static void parse_mc(struct opts *o, const char *s)
{
	char tmp[128];
	char *at;

	snprintf(tmp, sizeof(tmp), "%s", s);
	at = strchr(tmp, '@');
	if (!at || o->nmc == MAX_MCAST) {
		fprintf(stderr, "fabtest: --mcast MGID@MLID\n");
		exit(2);
	}
	*at = '\0';
	if (fab_gid_from_str(tmp, &o->mc[o->nmc].gid) < 0) {
		fprintf(stderr, "fabtest: bad MGID '%s'\n", tmp);
		exit(2);
	}
	o->mc[o->nmc].mlid = (uint16_t)num("--mcast", at + 1, 0xffff);
	o->nmc++;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "fabric", required_argument, NULL, 'F' },
		{ "qkey", required_argument, NULL, 'q' },
		{ "own-qkey", required_argument, NULL, 'Q' },
		{ "pkey", required_argument, NULL, 'p' },
		{ "dlid", required_argument, NULL, 'l' },
		{ "dqpn", required_argument, NULL, 'd' },
		{ "mgid", required_argument, NULL, 'g' },
		{ "dgid", required_argument, NULL, 'g' },
		{ "gid-index", required_argument, NULL, 'G' },
		{ "batch", required_argument, NULL, 'B' },
		{ "pattern", no_argument, NULL, 'P' },
		{ "verify", no_argument, NULL, 'V' },
		{ "depth", required_argument, NULL, 'E' },
		{ "linger", required_argument, NULL, 'L' },
		{ "mcast", required_argument, NULL, 'm' },
		{ "count", required_argument, NULL, 'c' },
		{ "size", required_argument, NULL, 'z' },
		{ "data", required_argument, NULL, 'D' },
		{ "timeout", required_argument, NULL, 't' },
		{ "join", required_argument, NULL, 'J' },
		{ "join-state", required_argument, NULL, 'j' },
		{ "idle", required_argument, NULL, 'I' },
		{ "interval-us", required_argument, NULL, 'i' },
		{ "qpn-file", required_argument, NULL, 'f' },
		{ "tid", required_argument, NULL, 'T' },
		{ NULL, 0, NULL, 0 },
	};
	struct opts o = {
		.sock = FAB_DEFAULT_SOFT_PATH, .pkey = -1, .count = 1,
		.size = 32, .timeout_ms = 20000, .tid = 0xfeedbeefc0ffee01ull,
		.join_state = 1, .gid_index = -1,
	};
	const char *cmd;
	int ch;

	while ((ch = getopt_long(argc, argv, "s:F:", lo, NULL)) != -1) {
		switch (ch) {
		case 's': o.sock = optarg; break;
		case 'F': o.spec = optarg; break;
		case 'q': o.qkey = (uint32_t)num("--qkey", optarg, 0xffffffff);
			  o.qkey_set = 1; break;
		case 'Q': o.own_qkey = (uint32_t)num("--own-qkey", optarg,
						     0xffffffff);
			  o.own_qkey_set = 1; break;
		case 'p': o.pkey = (int)num("--pkey", optarg, 0xffff); break;
		case 'l': o.dlid = (uint16_t)num("--dlid", optarg, 0xffff);
			  break;
		case 'd': o.dqpn = (uint32_t)num("--dqpn", optarg, 0xffffff);
			  o.dqpn_set = 1; break;
		case 'g':
			if (fab_gid_from_str(optarg, &o.mgid) < 0) {
				fprintf(stderr, "fabtest: bad GID '%s'\n",
					optarg);
				return 2;
			}
			o.mgid_set = 1;
			break;
		case 'm': parse_mc(&o, optarg); break;
		case 'J':
			if (o.njoin == MAX_MCAST ||
			    fab_gid_from_str(optarg, &o.join[o.njoin]) < 0) {
				fprintf(stderr, "fabtest: bad --join '%s'\n",
					optarg);
				return 2;
			}
			o.njoin++;
			break;
		case 'j': o.join_state = (uint8_t)num("--join-state", optarg,
						      15); break;
		case 'c': o.count = (unsigned long)num("--count", optarg,
						       1ul << 31); break;
		case 'z': o.size = (unsigned long)num("--size", optarg, 8192);
			  break;
		case 'D': o.data = optarg; break;
		case 't': o.timeout_ms = (unsigned long)num("--timeout", optarg,
							    3600000); break;
		case 'I': o.idle_ms = (unsigned long)num("--idle", optarg,
							 3600000); break;
		case 'i': o.interval_us = (unsigned long)num("--interval-us",
							     optarg, 10000000);
			  break;
		case 'f': o.qpn_file = optarg; break;
		case 'T': o.tid = num("--tid", optarg, ~0ull); break;
		case 'G': o.gid_index = (int)num("--gid-index", optarg, 255);
			  break;
		case 'B': o.batch = (unsigned long)num("--batch", optarg,
						       4096); break;
		case 'P': o.pattern = 1; break;
		case 'V': o.verify = 1; break;
		case 'L': o.linger_ms = (unsigned long)num("--linger", optarg,
							   60000); break;
		case 'E': o.depth = (uint32_t)num("--depth", optarg, 65536);
			  break;
		default: return 2;
		}
	}
	if (argc - optind != 2) {
		fprintf(stderr, "usage: fabtest [-s SOCK | -F SPEC] "
			"info|recv|send|mad-ping|burst-garbage|ring-garbage NODE [options]\n");
		return 2;
	}
	cmd = argv[optind];
	o.node = argv[optind + 1];
	if (!strcmp(cmd, "info"))
		return cmd_info(&o);
	if (!strcmp(cmd, "recv"))
		return cmd_recv(&o);
	if (!strcmp(cmd, "send"))
		return cmd_send(&o);
	if (!strcmp(cmd, "mad-ping"))
		return cmd_mad_ping(&o);
	if (!strcmp(cmd, "burst-garbage"))
		return cmd_burst_garbage(&o);
	if (!strcmp(cmd, "ring-garbage"))
		return cmd_ring_garbage(&o);
	fprintf(stderr, "fabtest: unknown command '%s'\n", cmd);
	return 2;
}

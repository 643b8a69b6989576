// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sdptest: an SDP peer that breaks the rules on purpose, for the tests of
 * what our SDP endpoint does with hostile input (issue 14, item 8).  It
 * connects to an SDP port through the CM with a Hello (a bad one for the
 * hello-* cases), sends one well-formed Data message "good:CASE\n", then
 * the violation, and reports what the victim did:
 *
 *   rejected     the REQ was refused (hello-* cases)
 *   aborted      an AbortConn came, or the connection went (DREQ)
 *   alive        neither within --wait seconds (a failure for the
 *                hostile cases)
 *
 * Cases: data (no violation: N bytes then DisConn, "closed" when the
 * victim's DisConn comes back), hello-version, hello-ipv, hello-adverts,
 * bad-mseq, bad-mid, zcopy-mid, ack-beyond, bad-len, after-disconn,
 * credit-lie (claims fewer buffers than the victim's messages in
 * flight), rnr (claims buffers in its Hello and posts none, so that the
 * victim's first send, a credit update, is answered with RNR NAK for
 * ever: the victim must give up on its own, give --wait beyond its stall
 * time).  The output is one line; the exit status
 * 0 when the victim did what a correct one does for the case.
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <arpa/inet.h>

#include "fabric/fabric.h"
#include "inet/byteorder.h"
#include "ulp/sdp/sdp_wire.h"

#define BUFSZ	65536u
#define NRX	16u
#define NTX	64u

struct st {
	struct fab_dev *dev;
	struct fab_cm_id *id;
	struct fab_qp *qp;
	struct fab_mr *mr;
	uint8_t *mem;
	uint32_t mseq, peer_mseq, peer_bufs, peer_ack;
	uint32_t tx_slot;
	int aborted, closed, disconnected;
	int wait_s;
};

static void die(const char *what, const char *why)
{
	printf("error %s: %s\n", what, why);
	exit(2);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint8_t *rxb(struct st *s, uint32_t i)
{
	return s->mem + (size_t)i * BUFSZ;
}

static uint8_t *txb(struct st *s, uint32_t i)
{
	return s->mem + (size_t)(NRX + i) * BUFSZ;
}

static void post_recv(struct st *s, uint32_t i)
{
	struct fab_sge sge = { (uintptr_t)rxb(s, i), BUFSZ,
			       fab_mr_lkey(s->mr) };
	struct fab_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 };

	if (fab_qp_post_recv(s->qp, &wr, 1) != 1)
		die("post_recv", strerror(errno));
}

/* Send a message: BSDH fields as given (len: the BSDH's, bytes: what
 * goes on the wire), payload after it. */
static void send_raw(struct st *s, uint8_t mid, uint16_t bufs, uint32_t len,
		     uint32_t mseq, uint32_t ack, const void *pl, size_t plen)
{
	uint8_t *b = txb(s, s->tx_slot);
	struct sdp_bsdh h = { mid, 0, bufs, len, mseq, ack };
	struct fab_sge sge = { (uintptr_t)b, (uint32_t)(SDP_BSDH_LEN + plen),
			       fab_mr_lkey(s->mr) };
	struct fab_rc_wr wr;

	sdp_bsdh_put(b, &h);
	if (plen)
		memcpy(b + SDP_BSDH_LEN, pl, plen);
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = s->tx_slot;
	wr.opcode = FAB_WR_SEND;
	wr.flags = FAB_SEND_SIGNALED;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	if (fab_qp_post_send(s->qp, &wr, 1) != 1)
		die("post_send", strerror(errno));
	s->tx_slot = (s->tx_slot + 1) % NTX;
}

/* A correct message: the next mseq, our buffers, the last we saw. */
static void send_ok(struct st *s, uint8_t mid, const void *pl, size_t plen)
{
	s->mseq++;
	send_raw(s, mid, NRX, (uint32_t)(SDP_BSDH_LEN + plen), s->mseq,
		 s->peer_mseq, pl, plen);
}

/* Take completions and CM events for up to secs. */
static void pump(struct st *s, double secs)
{
	double end = now_s() + secs;
	struct fab_cm_event ev;
	struct fab_wc wc[16];
	struct sdp_bsdh h;
	int i, n;

	while (now_s() < end && !s->disconnected) {
		struct pollfd p[2] = {
			{ .fd = fab_cm_fd(s->dev), .events = POLLIN },
			{ .fd = fab_qp_fd(s->qp), .events = POLLIN },
		};

		while (fab_cm_get_event(s->dev, &ev) == 1)
			if (ev.type == FAB_CM_EV_DISCONNECTED)
				s->disconnected = 1;
		while ((n = fab_qp_poll(s->qp, wc, 16)) > 0) {
			for (i = 0; i < n; i++) {
				if (wc[i].status != FAB_WC_SUCCESS) {
					s->disconnected = 1;
					continue;
				}
				if (!wc[i].recv)
					continue;
				if (sdp_bsdh_get(rxb(s, (uint32_t)wc[i].wr_id),
						 wc[i].byte_len, &h) == 0) {
					s->peer_mseq = h.mseq;
					s->peer_bufs = h.bufs;
					s->peer_ack = h.mseq_ack;
					if (h.mid == SDP_MID_ABORT)
						s->aborted = 1;
					if (h.mid == SDP_MID_DISCONN)
						s->closed = 1;
				}
				post_recv(s, (uint32_t)wc[i].wr_id);
			}
		}
		if (s->aborted || (s->closed && secs > 0.5) || secs <= 0)
			return;
		poll(p, 2, 20);
	}
}

static void usage(void)
{
	fprintf(stderr, "usage: sdptest --fabric SPEC --node NAME --gid GID "
		"--port PORT --src IP --dst IP [--bytes N] [--wait S] CASE\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "fabric", required_argument, NULL, 'F' },
		{ "node", required_argument, NULL, 'n' },
		{ "gid", required_argument, NULL, 'g' },
		{ "port", required_argument, NULL, 'p' },
		{ "src", required_argument, NULL, 's' },
		{ "dst", required_argument, NULL, 'd' },
		{ "bytes", required_argument, NULL, 'b' },
		{ "wait", required_argument, NULL, 'w' },
		{ NULL, 0, NULL, 0 },
	};
	const char *spec = NULL, *node = "sdptest", *gid = NULL, *cs;
	const char *src = "0.0.0.0", *dst = "0.0.0.0";
	static struct st s;
	struct fab_qp_init qi = { .type = FAB_QPT_RC, .max_send = NTX,
				  .max_recv = NRX };
	uint8_t pd[SDP_HELLO_LEN];
	struct fab_cm_param cp = { .private_data = pd,
				   .private_data_len = SDP_HELLO_LEN,
				   .retry_count = 7, .rnr_retry_count = 7 };
	struct fab_cm_addr a;
	struct fab_cm_event ev;
	struct sdp_hello h;
	struct sdp_hello_ack ha;
	char err[256], good[64];
	unsigned long bytes = 100000;
	unsigned int port = 0, i;
	double end;
	int ch;

	s.wait_s = 5;
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (ch) {
		case 'F': spec = optarg; break;
		case 'n': node = optarg; break;
		case 'g': gid = optarg; break;
		case 'p': port = (unsigned int)atoi(optarg); break;
		case 's': src = optarg; break;
		case 'd': dst = optarg; break;
		case 'b': bytes = strtoul(optarg, NULL, 0); break;
		case 'w': s.wait_s = atoi(optarg); break;
		default: usage();
		}
	}
	if (!spec || !gid || !port || optind != argc - 1)
		usage();
	cs = argv[optind];
	s.dev = fab_open(spec, node, err, sizeof(err));
	if (!s.dev)
		die("open", err);
	s.mem = calloc(NRX + NTX, BUFSZ);
	if (!s.mem)
		die("calloc", "out of memory");
	s.mr = fab_mr_reg(s.dev, s.mem, (size_t)(NRX + NTX) * BUFSZ,
			  FAB_ACCESS_LOCAL_WRITE, err, sizeof(err));
	if (!s.mr)
		die("mr", err);
	s.id = fab_cm_create_id(s.dev, NULL, err, sizeof(err));
	if (!s.id)
		die("cm id", err);
	s.qp = fab_cm_qp_create(s.id, &qi, err, sizeof(err));
	if (!s.qp)
		die("qp", err);
	/* rnr: the Hello claims NRX buffers, none is posted */
	for (i = 0; strcmp(cs, "rnr") && i < NRX; i++)
		post_recv(&s, i);

	memset(&h, 0, sizeof(h));
	h.bsdh.bufs = NRX;
	h.majv_minv = SDP_MAJV_MINV;
	h.ipv = 4;
	h.max_adverts = 1;
	h.desremrcvsz = BUFSZ;
	h.localrcvsz = BUFSZ;
	h.port = 4242;
	h.src.family = h.dst.family = AF_INET;
	if (inet_pton(AF_INET, src, &h.src.v4) != 1 ||
	    inet_pton(AF_INET, dst, &h.dst.v4) != 1)
		die("address", "--src/--dst take IPv4 addresses");
	if (sdp_hello_build(pd, sizeof(pd), &h) < 0)
		die("hello", "build");
	if (!strcmp(cs, "hello-version"))
		pd[16] = 0x92;		/* major 9 */
	else if (!strcmp(cs, "hello-ipv"))
		pd[17] = 0x50;		/* IP version 5 */
	else if (!strcmp(cs, "hello-adverts"))
		pd[19] = 0;		/* max_adverts 0 */
	memset(&a, 0, sizeof(a));
	if (fab_gid_from_str(gid, &a.gid) < 0)
		die("gid", gid);
	a.service_id = SDP_SID(port);
	if (fab_cm_connect(s.id, &a, &cp, err, sizeof(err)) < 0)
		die("connect", err);
	end = now_s() + 10;
	for (;;) {
		struct pollfd p = { .fd = fab_cm_fd(s.dev), .events = POLLIN };

		if (fab_cm_get_event(s.dev, &ev) == 1) {
			if (ev.type == FAB_CM_EV_ESTABLISHED)
				break;
			if (ev.type == FAB_CM_EV_REJECTED) {
				printf("rejected reason %d\n", ev.status);
				return !strncmp(cs, "hello-", 6) ? 0 : 1;
			}
			printf("error connect: %s\n",
			       fab_cm_event_name(ev.type));
			return 2;
		}
		if (now_s() > end)
			die("connect", "timed out");
		poll(&p, 1, 50);
	}
	if (!strncmp(cs, "hello-", 6)) {
		printf("accepted a bad Hello\n");
		return 1;
	}
	if (sdp_hello_ack_parse(ev.private_data, ev.private_data_len,
				&ha) < 0)
		die("helloack", "did not parse");
	s.peer_bufs = ha.bsdh.bufs;

	if (!strcmp(cs, "data")) {
		static uint8_t pl[BUFSZ - SDP_BSDH_LEN];
		unsigned long sent = 0;
		uint32_t k;

		for (k = 0; k < sizeof(pl); k++)
			pl[k] = (uint8_t)('a' + k % 26);
		while (sent < bytes && !s.aborted && !s.disconnected) {
			size_t n = bytes - sent < 8000 ? bytes - sent : 8000;

			/* within the credits the victim gives */
			if ((int32_t)(s.peer_bufs - (s.mseq - s.peer_ack)) <=
			    2) {
				pump(&s, 0.01);
				continue;
			}
			send_ok(&s, SDP_MID_DATA, pl + sent % 26, n);
			sent += n;
			pump(&s, 0);
		}
		send_ok(&s, SDP_MID_DISCONN, NULL, 0);
		pump(&s, s.wait_s);
		printf("%s\n", s.closed ? "closed" : s.aborted ? "aborted" :
		       "alive");
		return s.closed && !s.aborted ? 0 : 1;
	}

	snprintf(good, sizeof(good), "good:%s\n", cs);
	send_ok(&s, SDP_MID_DATA, good, strlen(good));
	pump(&s, 0.3);
	if (!strcmp(cs, "bad-mseq")) {
		send_raw(&s, SDP_MID_DATA, NRX, SDP_BSDH_LEN + 4, s.mseq + 5,
			 s.peer_mseq, "bad\n", 4);
	} else if (!strcmp(cs, "bad-mid")) {
		send_ok(&s, 0x42, "bad\n", 4);
	} else if (!strcmp(cs, "zcopy-mid")) {
		send_ok(&s, SDP_MID_SRCAVAIL, "bad\n", 4);
	} else if (!strcmp(cs, "ack-beyond")) {
		s.mseq++;
		send_raw(&s, SDP_MID_DATA, NRX, SDP_BSDH_LEN + 4, s.mseq,
			 s.peer_mseq + 1000, "bad\n", 4);
	} else if (!strcmp(cs, "bad-len")) {
		s.mseq++;
		send_raw(&s, SDP_MID_DATA, NRX, SDP_BSDH_LEN + 400, s.mseq,
			 s.peer_mseq, "bad\n", 4);
	} else if (!strcmp(cs, "after-disconn")) {
		send_ok(&s, SDP_MID_DISCONN, NULL, 0);
		send_ok(&s, SDP_MID_DATA, "bad\n", 4);
	} else if (!strcmp(cs, "rnr")) {
		/* more than half of the victim's buffers used: it owes us a
		 * credit update, which finds no receive posted */
		unsigned int most = s.peer_bufs * 3 / 4;

		for (i = 0; i < most; i++)
			send_ok(&s, SDP_MID_DATA, "g", 1);
	} else if (!strcmp(cs, "credit-lie")) {
		/* make the victim send (a credit update, after we used more
		 * than half its buffers), then claim 0 buffers while acking
		 * none of it: a peer cannot take posted buffers back.
		 * Three quarters of what it posted: more than half, and
		 * within the credits it gave us */
		unsigned int most = s.peer_bufs * 3 / 4;

		for (i = 0; i < most; i++) {
			send_ok(&s, SDP_MID_DATA, "g", 1);
			pump(&s, 0.02);
		}
		pump(&s, 0.3);
		if (!s.peer_mseq)
			die("credit-lie", "the victim sent no update");
		s.mseq++;
		send_raw(&s, SDP_MID_DATA, 0, SDP_BSDH_LEN + 4, s.mseq, 0,
			 "lie\n", 4);
	} else {
		die("case", cs);
	}
	pump(&s, s.wait_s);
	printf("%s\n", s.aborted || s.disconnected ? "aborted" : "alive");
	return s.aborted || s.disconnected ? 0 : 1;
}

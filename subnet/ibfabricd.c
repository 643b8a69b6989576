// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ibfabricd: the software InfiniBand subnet.  This file binds the switch
 * (fsw_switch.c) to its unix socket, the per-QP socketpairs and the
 * libevent loop; the subnet logic itself lives in fsw.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "conf/conf.h"
#include "conf/daemon.h"
#include "conf/log.h"
#include "conf/notify.h"
#include "subnet/fsw.h"
#include "subnet/fsw_cm.h"
#include "fabric/ib_pkt.h"
#include "subnet/partitions.h"
#include "subnet/pcap.h"
#include "fabric/soft_proto.h"
#include "fabric/soft_ring.h"

#define FABD_RX_BATCH		32
#define FABD_RX_BURSTS		8	/* burst messages per recvmmsg */
#define FABD_RX_BUDGET		256	/* packets per QP per wakeup */
#define FABD_SOCKBUF		(4 << 20)
#define FABD_REPORT_MAX		(FSP_MSG_MAX - sizeof(struct fsp_hdr))

struct fabd;
struct conn;

/* A QP as ibfabricd serves it: the switch's handle, and the socket and
 * rings it is served through (the switch's owner pointer for the QP). */
struct qpio {
	struct fsw_qp *qp;
	uint32_t qpn;
	struct conn *conn;
	int fd;
	struct event *ev;
	struct qpio *next;
	int burst;		/* FSP_QP_BURST framing */
	uint8_t *out;		/* the burst being filled for this QP */
	size_t out_len;
	unsigned int out_n;
	int dirty;		/* on fabd.dirty */
	struct qpio *dirty_next;
	uint8_t *shm;		/* FSP_QP_SHM: the rings, else NULL */
	struct soft_ring tx;	/* the process's sends: we consume */
	struct soft_ring rx;	/* what we deliver: we produce */
	int busy;		/* on fabd.busy: TX ring not drained */
	struct qpio *busy_next;
};

struct conn {
	struct fabd *d;
	int fd;
	struct event *ev;
	struct fsw_node *node;
	int observer;
	struct qpio *qps;
	int cm_fd;		/* FSP_CM_OPEN: our end of its CM events */
	struct conn *next;
};

struct fabd {
	struct event_base *base;
	struct fsw *sw;
	struct prtn_conf pc;
	const char *prtn_path;	/* -P, re-read on SIGHUP and reload */
	const char *sockpath;
	const char *lid_file;	/* --lid-file: guid2lid kept across runs */
	int lfd;
	struct event *lev;
	struct event *flush_ev;
	struct event *pcap_ev;
	struct pcap_writer *pcap;
	int pcap_paused;	/* ibfabricctl capture off */
	struct conn *conns;
	time_t last_complaint;
	struct qpio *dirty;	/* QPs with a burst to send */
	struct event *out_ev;	/* sends them, once per loop pass */
	struct qpio *busy;	/* QPs whose TX ring had more than a budget */
	struct event *busy_ev;	/* drains them after the next poll */
	struct event *cm_ev;	/* the CMs' retransmission and timewait tick */
	uint64_t cm_events_lost; /* a process's CM socket was full */
};

static void usage(FILE *f)
{
	fprintf(f,
"usage: ibfabricd [-f] [-v] [-s SOCKET] [-P PARTITIONS_CONF] [--pcap FILE]\n"
"                 [--mtu BYTES] [--loss P] [--dup P] [--reorder P] [--seed N]\n"
"                 [--lid-file FILE]\n"
"  -f, --foreground      stay in the foreground, log to stderr\n"
"  -v, --verbose         debug logging\n"
"  -s, --socket PATH     node socket (default %s)\n"
"  -P, --partitions FILE OpenSM-syntax partitions.conf\n"
"      --pcap FILE       write every packet entering the switch (linktype 252)\n"
"      --mtu BYTES       every port's MTU: 256, 512, 1024, 2048, 4096 (default)\n"
"      --lid-file FILE   keep LIDs across runs (guid2lid: GUID LID LID a line)\n"
"      --loss P          drop packets with probability P (0..1)\n"
"      --dup P           duplicate packets with probability P\n"
"      --reorder P       hold a packet back behind the next with probability P\n"
"      --seed N          seed for the fault generator (default 1)\n"
"  -h, --help, -V, --version\n", FAB_DEFAULT_SOFT_PATH);
}

/* Complaints about peers are rate-limited to one a second. */
static int complain_ok(struct fabd *d)
{
	time_t now = time(NULL);

	if (now == d->last_complaint)
		return 0;
	d->last_complaint = now;
	return 1;
}

/* Send a QP's burst (a receiver whose socket is full loses all of it, as
 * UD receivers without posted buffers lose datagrams), or publish what was
 * written into its ring. */
static void out_send(struct fabd *d, struct qpio *io)
{
	ssize_t n;

	if (io->shm) {
		if (soft_ring_publish(&io->rx))
			soft_ring_kick(io->fd);
		return;
	}
	if (!io->out_len)
		return;
	n = send(io->fd, io->out, io->out_len, MSG_DONTWAIT | MSG_NOSIGNAL);
	if (n != (ssize_t)io->out_len)
		fsw_undeliver(d->sw, io->qp, io->out_n, io->out_len -
			      (size_t)io->out_n * FSP_BURST_REC);
	io->out_len = 0;
	io->out_n = 0;
}

static void out_flush_cb(evutil_socket_t fd, short what, void *arg)
{
	struct fabd *d = arg;
	struct qpio *io;

	(void)fd;
	(void)what;
	while ((io = d->dirty)) {
		d->dirty = io->dirty_next;
		io->dirty = 0;
		out_send(d, io);
	}
}

static int fabd_deliver(void *ctx, void *owner, const uint8_t *pkt,
			size_t len)
{
	struct fabd *d = ctx;
	struct qpio *io = owner;
	uint8_t *slot;
	ssize_t n;

	if (io->shm) {
		/* straight into the receiver's ring, published once per
		 * loop pass; a full ring loses the packet (a UD receiver
		 * without posted buffers) */
		if (!(slot = soft_ring_reserve(&io->rx, len)))
			return -1;
		memcpy(slot, pkt, len);
		soft_ring_commit(&io->rx, len);
	} else if (!io->burst) {
		n = send(io->fd, pkt, len, MSG_DONTWAIT | MSG_NOSIGNAL);
		return n == (ssize_t)len ? 0 : -1;
	} else {
		/* packets for a QP gather into one burst per loop pass */
		if (!io->out && !(io->out = malloc(FSP_BURST_MAX)))
			return -1;
		if (io->out_len + FSP_BURST_REC + len > FSP_BURST_MAX)
			out_send(d, io);
		io->out[io->out_len] = (uint8_t)(len >> 8);
		io->out[io->out_len + 1] = (uint8_t)len;
		memcpy(io->out + io->out_len + FSP_BURST_REC, pkt, len);
		io->out_len += FSP_BURST_REC + len;
		io->out_n++;
	}
	if (!io->dirty) {
		if (!d->dirty)
			event_active(d->out_ev, EV_TIMEOUT, 0);
		io->dirty = 1;
		io->dirty_next = d->dirty;
		d->dirty = io;
	}
	return 0;
}

static void fabd_capture(void *ctx, const uint8_t *pkt, size_t len)
{
	struct fabd *d = ctx;

	if (d->pcap && !d->pcap_paused &&
	    pcap_writer_write(d->pcap, NULL, pkt, len) < 0 &&
	    complain_ok(d))
		log_warn("pcap write");
}

/* A port event to every process attached as that node. */
static void fabd_event(void *ctx, struct fsw_node *node,
		       enum fab_event_type type)
{
	struct fabd *d = ctx;
	struct fsp_event ev = { .type = type };
	struct conn *c;

	for (c = d->conns; c; c = c->next)
		if (c->node == node)
			fsp_send(c->fd, FSP_EVENT, 0, 0, &ev, sizeof(ev), -1);
	log_info("node %s: %s", fsw_node_name(node), fab_event_name(type));
}

/* A CM event for the process that asked (owner is its conn). */
static void fabd_cm_event(void *ctx, void *owner,
			  const struct fsp_cm_event *ev)
{
	struct fabd *d = ctx;
	struct conn *c = owner;

	if (c->cm_fd < 0 ||
	    fsp_send(c->cm_fd, FSP_CM_EVENT, 0, 0, ev, sizeof(*ev), -1) < 0) {
		d->cm_events_lost++;
		if (complain_ok(d))
			log_warnx("node %s: a CM event (%s) could not be "
				  "given to its process", c->node ?
				  fsw_node_name(c->node) : "?",
				  fab_cm_event_name(ev->type));
	}
}

static const struct fsw_ops fabd_ops = {
	.deliver = fabd_deliver,
	.capture = fabd_capture,
	.event = fabd_event,
	.cm_event = fabd_cm_event,
};

static void schedule_flush(struct fabd *d)
{
	struct timeval tv = { 0, 2000 };

	if (!evtimer_pending(d->flush_ev, NULL))
		evtimer_add(d->flush_ev, &tv);
}

static void flush_cb(evutil_socket_t fd, short what, void *arg)
{
	struct fabd *d = arg;

	(void)fd;
	(void)what;
	fsw_flush(d->sw);
}

/* The capture is buffered; push it out once a second so that tshark can
 * read a running subnet's file. */
static void pcap_flush_cb(evutil_socket_t fd, short what, void *arg)
{
	struct fabd *d = arg;

	(void)fd;
	(void)what;
	if (pcap_writer_flush(d->pcap) < 0 && complain_ok(d))
		log_warn("pcap flush");
}

/* Off the dirty list, what it had for the QP sent or published. */
static void out_flush_one(struct fabd *d, struct qpio *io)
{
	struct qpio **pp;

	if (!io->dirty)
		return;
	for (pp = &d->dirty; *pp; pp = &(*pp)->dirty_next) {
		if (*pp == io) {
			*pp = io->dirty_next;
			break;
		}
	}
	io->dirty = 0;
	out_send(d, io);
}

static void qpio_free(struct qpio *io)
{
	struct fabd *d = io->conn->d;
	struct qpio **pp;

	out_flush_one(d, io);
	if (io->busy) {
		for (pp = &d->busy; *pp; pp = &(*pp)->busy_next) {
			if (*pp == io) {
				*pp = io->busy_next;
				break;
			}
		}
	}
	free(io->out);
	if (io->shm)
		munmap(io->shm, FSP_SHM_BYTES);

	for (pp = &io->conn->qps; *pp; pp = &(*pp)->next) {
		if (*pp == io) {
			*pp = io->next;
			break;
		}
	}
	fsw_qp_destroy(io->conn->d->sw, io->qp);
	event_free(io->ev);
	close(io->fd);
	free(io);
}

/*
 * Switch what is waiting on a QP socket, up to budget packets (0: all).
 * Returns 1 when the process closed the socket (end of file, or the
 * zero-length message SOCK_SEQPACKET gives for it), else 0.
 */
/* The packets of one burst; a length running past the end is passed on
 * as it is (the switch drops it as truncated) and ends the burst.
 * Returns the number of packets. */
static int burst_input(struct fabd *d, struct qpio *io, const uint8_t *p,
		       size_t len)
{
	size_t l;
	int n = 0;

	while (len) {
		n++;
		if (len < FSP_BURST_REC) {
			fsw_input_qp(d->sw, io->qp, p, len);
			break;
		}
		l = (size_t)p[0] << 8 | p[1];
		p += FSP_BURST_REC;
		len -= FSP_BURST_REC;
		if (l > len) {
			fsw_input_qp(d->sw, io->qp, p, len);
			break;
		}
		fsw_input_qp(d->sw, io->qp, p, l);
		p += l;
		len -= l;
	}
	return n;
}

static int qp_drain(struct qpio *io, int budget)
{
	static uint8_t bufs[FABD_RX_BATCH][IB_MAX_PKT + 1];
	static uint8_t bursts[FABD_RX_BURSTS][FSP_BURST_MAX + 1];
	struct fabd *d = io->conn->d;
	struct mmsghdr mm[FABD_RX_BATCH];
	struct iovec iov[FABD_RX_BATCH];
	int i, n, got, eof = 0;
	int want = io->burst ? FABD_RX_BURSTS : FABD_RX_BATCH;

	while (!eof && (!budget || budget > 0)) {
		for (i = 0; i < want; i++) {
			iov[i].iov_base = io->burst ? bursts[i] : bufs[i];
			iov[i].iov_len = io->burst ? sizeof(bursts[i]) :
						     sizeof(bufs[i]);
			memset(&mm[i].msg_hdr, 0, sizeof(mm[i].msg_hdr));
			mm[i].msg_hdr.msg_iov = &iov[i];
			mm[i].msg_hdr.msg_iovlen = 1;
		}
		n = recvmmsg(io->fd, mm, (unsigned int)want, MSG_DONTWAIT,
			     NULL);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			break;
		if (n <= 0)
			return 1;
		got = 0;
		for (i = 0; i < n; i++) {
			/* a message longer than any packet arrives
			 * truncated: pass its full length so it is dropped */
			size_t len = mm[i].msg_len;

			/* no packet is empty: this is the peer's close;
			 * what came before it is switched */
			if (!len && !(mm[i].msg_hdr.msg_flags & MSG_TRUNC)) {
				eof = 1;
				break;
			}
			if (io->burst) {
				/* a burst cut short by its size: what was
				 * read is switched, the rest is lost */
				if (len > FSP_BURST_MAX)
					len = FSP_BURST_MAX;
				got += burst_input(d, io, bursts[i], len);
				continue;
			}
			if (mm[i].msg_hdr.msg_flags & MSG_TRUNC)
				len = IB_MAX_PKT + 1;
			fsw_input_qp(d->sw, io->qp, bufs[i], len);
			got++;
		}
		if (budget)
			budget = budget > got ? budget - got : -1;
		if (n < want)
			break;
	}
	if (fsw_held(d->sw))
		schedule_flush(d);
	return eof;
}

/*
 * Switch what waits in a QP's TX ring, up to budget packets (0: all).
 * Each packet is copied out before it is looked at: the process can
 * rewrite its ring at any time.  An impossible ring (counters or a length
 * out of range) is counted as bad_ring and what it held skipped.  When the
 * ring is empty we ask for a kick; with packets left over the QP goes on
 * the busy list, drained again after the next poll.
 */
static void ring_drain(struct qpio *io, int budget)
{
	static uint8_t pkt[IB_MAX_PKT + 1];
	struct fabd *d = io->conn->d;
	const uint8_t *rec;
	size_t len;
	uint16_t vcrc;
	int r, n = 0, limit = budget;

	/* budget 0 (the process is gone): at most what a ring can hold */
	if (!budget)
		limit = FSP_RING_SIZE / FSP_RING_ALIGN;
	for (;;) {
		if (n >= limit)
			break;
		r = soft_ring_peek(&io->tx, &rec, &len);
		if (r < 0) {
			/* one count per wake-up: a process rewriting its
			 * counters cannot keep us here */
			fsw_drop(d->sw, FSW_DROP_BAD_RING);
			soft_ring_skip(&io->tx);
			if (soft_ring_arm(&io->tx))
				n = limit;	/* more: after the next poll */
			break;
		}
		if (r == 0) {
			if (!soft_ring_arm(&io->tx))
				break;
			continue;
		}
		if (len > IB_MAX_PKT || len < IB_VCRC_LEN) {
			/* longer than any packet: what fits is enough for
			 * the switch to drop it as too long */
			memcpy(pkt, rec, len > sizeof(pkt) ? sizeof(pkt) : len);
			fsw_input_qp(d->sw, io->qp, pkt,
				     len > sizeof(pkt) ? sizeof(pkt) : len);
		} else {
			/* the VCRC is computed while copying (one pass over
			 * the ring's bytes) */
			vcrc = ib_vcrc_copy(pkt, rec, len - IB_VCRC_LEN);
			memcpy(pkt + len - IB_VCRC_LEN,
			       rec + len - IB_VCRC_LEN, IB_VCRC_LEN);
			fsw_input_qp_vcrc(d->sw, io->qp, pkt, len, vcrc);
		}
		soft_ring_next(&io->tx, len);
		n++;
	}
	soft_ring_release(&io->tx);
	if (n >= limit && !io->busy) {
		if (!d->busy) {
			struct timeval now = { 0, 0 };

			evtimer_add(d->busy_ev, &now);
		}
		io->busy = 1;
		io->busy_next = d->busy;
		d->busy = io;
	}
	if (fsw_held(d->sw))
		schedule_flush(d);
}

static void busy_cb(evutil_socket_t fd, short what, void *arg)
{
	struct fabd *d = arg;
	struct qpio *io, *list = d->busy;

	(void)fd;
	(void)what;
	d->busy = NULL;
	while ((io = list)) {
		list = io->busy_next;
		io->busy = 0;
		ring_drain(io, FABD_RX_BUDGET);
	}
}

/* Everything a QP has sent, before it goes. */
static void qp_drain_all(struct qpio *io)
{
	if (io->shm)
		ring_drain(io, 0);
	else
		qp_drain(io, 0);
}

static void qp_read_cb(evutil_socket_t fd, short what, void *arg)
{
	struct qpio *io = arg;

	(void)fd;
	(void)what;
	if (io->shm) {
		/* kicks, and the end of file (or an error) */
		int eof = soft_ring_take_kicks(io->fd) != 0;

		/* what the process sent before it closed is switched */
		ring_drain(io, eof ? 0 : FABD_RX_BUDGET);
		if (eof) {
			log_debug("node %s: QP 0x%06x closed",
				  fsw_node_name(io->conn->node), io->qpn);
			qpio_free(io);
		}
		return;
	}
	if (qp_drain(io, FABD_RX_BUDGET)) {
		log_debug("node %s: QP 0x%06x closed",
			  fsw_node_name(io->conn->node), io->qpn);
		qpio_free(io);
	}
}

static void conn_free(struct conn *c)
{
	struct fabd *d = c->d;
	struct conn **pp;

	/* its connections are torn down by its node's CM (DREQs), as a
	 * kernel does for a process that exits; then its QPs go */
	fsw_cm_owner_gone(fsw_cm(d->sw), c);
	if (c->cm_fd >= 0)
		close(c->cm_fd);
	/* a process that sent and exited: what it sent is on the wire, as
	 * with an HCA, even if its device socket's close is seen first */
	while (c->qps) {
		qp_drain_all(c->qps);
		qpio_free(c->qps);
	}
	if (c->node) {
		log_debug("node %s: process detached",
			  fsw_node_name(c->node));
		fsw_node_detach(d->sw, c->node, c);
	}
	for (pp = &d->conns; *pp; pp = &(*pp)->next) {
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	}
	event_free(c->ev);
	close(c->fd);
	free(c);
}

static void reply_err(struct conn *c, uint32_t seq, int err, const char *fmt,
		      ...) __attribute__((format(printf, 4, 5)));
static void reply_err(struct conn *c, uint32_t seq, int err, const char *fmt,
		      ...)
{
	char msg[2048];	/* a reload's parse errors, several lines */
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	if ((size_t)n >= sizeof(msg))
		n = sizeof(msg) - 1;
	fsp_send(c->fd, FSP_REPLY, seq, err, msg, (size_t)n, -1);
}

static struct qpio *conn_qp(struct conn *c, uint32_t qpn)
{
	struct qpio *io;

	for (io = c->qps; io; io = io->next)
		if (io->qpn == qpn)
			return io;
	return NULL;
}

/* --lid-file: "GUID LID LID" a line, as OpenSM's guid2lid; rewritten
 * whole (a temporary file renamed over it) when a node is made. */
static void lid_file_save(struct fabd *d)
{
	struct fsp_port_info pi;
	struct fsw_node *n;
	char tmp[4096];
	unsigned int i;
	FILE *f;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", d->lid_file) >=
	    (int)sizeof(tmp))
		return;
	f = fopen(tmp, "w");
	if (!f) {
		log_warn("%s", tmp);
		return;
	}
	for (i = 0; (n = fsw_node_at(d->sw, i)); i++) {
		fsw_port_info(d->sw, n, &pi);
		fprintf(f, "0x%016llx 0x%04x 0x%04x\n",
			(unsigned long long)pi.port_guid, pi.lid, pi.lid);
	}
	if (fclose(f) != 0 || rename(tmp, d->lid_file) < 0) {
		log_warn("%s", d->lid_file);
		unlink(tmp);
	}
}

/* Load the LIDs of an earlier run; a missing file is an empty table. */
static int lid_file_load(struct fabd *d)
{
	unsigned long long guid;
	unsigned int lid, lid2, n = 0, line = 0;
	char buf[256], dir[4096], *slash;
	struct stat st;
	FILE *f;

	/* written later, at every new node: its directory must take it
	 * now, not at the first node */
	snprintf(dir, sizeof(dir), "%s", d->lid_file);
	slash = strrchr(dir, '/');
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == dir)
		dir[1] = '\0';
	else
		*slash = '\0';
	if (access(dir, W_OK | X_OK) < 0) {
		log_warn("--lid-file %s: its directory %s", d->lid_file, dir);
		return -1;
	}
	if (stat(d->lid_file, &st) == 0 && !S_ISREG(st.st_mode)) {
		log_warnx("--lid-file %s: not a regular file", d->lid_file);
		return -1;
	}
	f = fopen(d->lid_file, "r");
	if (!f) {
		if (errno == ENOENT)
			return 0;
		log_warn("%s", d->lid_file);
		return -1;
	}
	while (fgets(buf, sizeof(buf), f)) {
		line++;
		if (buf[0] == '#' || buf[0] == '\n')
			continue;
		if (sscanf(buf, "%llx %x %x", &guid, &lid, &lid2) != 3 ||
		    lid > 0xffff ||
		    fsw_lid_reserve(d->sw, guid, (uint16_t)lid) < 0) {
			log_warnx("%s:%u: ignored (not GUID LID LID, or a "
				  "LID or GUID given twice)", d->lid_file,
				  line);
			continue;
		}
		n++;
	}
	fclose(f);
	log_info("%s: %u LIDs kept from an earlier run", d->lid_file, n);
	return 0;
}

static int handle_hello(struct conn *c, const struct fsp_hdr *h,
			const void *body)
{
	struct fsp_hello hello;
	struct fsp_port_info pi;
	char err[256];

	if (h->len != sizeof(hello)) {
		reply_err(c, h->seq, EBADMSG, "HELLO of %u bytes", h->len);
		return -1;
	}
	memcpy(&hello, body, sizeof(hello));
	if (hello.version != FSP_VERSION) {
		reply_err(c, h->seq, EPROTO, "protocol version %u, this "
			  "ibfabricd speaks %u", hello.version, FSP_VERSION);
		return -1;
	}
	if (!memchr(hello.node, '\0', sizeof(hello.node))) {
		reply_err(c, h->seq, EINVAL, "node name not terminated");
		return -1;
	}
	memset(&pi, 0, sizeof(pi));
	if (hello.flags & FSP_HELLO_OBSERVER) {
		c->observer = 1;
	} else {
		int known = fsw_node_find(c->d->sw, hello.node) != NULL;

		c->node = fsw_node_attach(c->d->sw, hello.node, err,
					  sizeof(err));
		if (!c->node) {
			reply_err(c, h->seq, EINVAL, "%s", err);
			return -1;
		}
		fsw_port_info(c->d->sw, c->node, &pi);
		log_debug("node %s (LID 0x%04x): process attached",
			  fsw_node_name(c->node), pi.lid);
		if (!known && c->d->lid_file)
			lid_file_save(c->d);
	}
	fsp_send(c->fd, FSP_REPLY, h->seq, 0, &pi, sizeof(pi), -1);
	/* a node back from an earlier ibfabricd: the SM tells it to
	 * register again (groups, subscriptions), as OpenSM does after a
	 * restart; it comes after the reply, once the port is up */
	if (c->node && (hello.flags & FSP_HELLO_REATTACH)) {
		struct fsp_event ev = { .type = FAB_EV_CLIENT_REREGISTER };

		log_info("node %s (LID 0x%04x): re-attached",
			 fsw_node_name(c->node), pi.lid);
		fsp_send(c->fd, FSP_EVENT, 0, 0, &ev, sizeof(ev), -1);
	}
	return 0;
}

/* The rings of a FSP_QP_SHM QP: a memfd sealed at its size (the process
 * cannot shrink it under us), mapped here; returns the memfd to pass. */
static int shm_create(struct qpio *io)
{
	int fd, e;
	void *m;

	fd = memfd_create("ibfabricd-qp", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -1;
	if (ftruncate(fd, (off_t)FSP_SHM_BYTES) < 0 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW |
		  F_SEAL_SEAL) < 0)
		goto fail;
	m = mmap(NULL, FSP_SHM_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 0);
	if (m == MAP_FAILED)
		goto fail;
	io->shm = m;
	soft_ring_ctl_reset((struct fsp_ring_ctl *)io->shm);
	soft_ring_ctl_reset((struct fsp_ring_ctl *)(io->shm +
						     FSP_RING_CTL_BYTES));
	soft_ring_attach(io->shm, 0, &io->tx, &io->rx);
	return fd;
fail:
	e = errno;
	close(fd);
	errno = e;
	return -1;
}

static int handle_qp_create(struct conn *c, const struct fsp_hdr *h,
			    const void *body)
{
	struct fabd *d = c->d;
	struct fsp_qp_create_qpn rq;
	struct fsp_qp_create req;
	struct fsp_qp_ref ref;
	struct qpio *io;
	char err[256];
	int sv[2], sz = FABD_SOCKBUF, mfd = -1, fds[2];

	memset(&rq, 0, sizeof(rq));
	if (h->len == sizeof(rq.c) || h->len == sizeof(rq))
		memcpy(&rq, body, h->len);
	req = rq.c;
	if ((h->len != sizeof(rq.c) && h->len != sizeof(rq)) ||
	    !(req.flags & FSP_QP_QPN) != (h->len == sizeof(rq.c))) {
		reply_err(c, h->seq, EBADMSG, "QP_CREATE of %u bytes", h->len);
		return -1;
	}
	if (req.type != FAB_QPT_UD && req.type != FAB_QPT_RC) {
		reply_err(c, h->seq, EOPNOTSUPP, "QP type %u not supported",
			  req.type);
		return 0;
	}
	if (req.type == FAB_QPT_RC && (req.flags & FSP_QP_GSI)) {
		reply_err(c, h->seq, EINVAL, "a MAD agent is not an RC QP");
		return 0;
	}
	if (req.flags & ~(FSP_QP_GSI | FSP_QP_BURST | FSP_QP_SHM |
			  FSP_QP_QPN)) {
		reply_err(c, h->seq, EPERM, "privileged QPs belong to the "
			  "subnet manager");
		return 0;
	}
	if ((req.flags & FSP_QP_GSI) &&
	    (req.flags & (FSP_QP_BURST | FSP_QP_SHM))) {
		reply_err(c, h->seq, EINVAL, "MAD agents take no bursts or "
			  "rings");
		return 0;
	}
	if ((req.flags & FSP_QP_GSI) && req.qkey > 0xff) {
		reply_err(c, h->seq, EINVAL, "management class %u", req.qkey);
		return 0;
	}
	io = calloc(1, sizeof(*io));
	if (!io) {
		reply_err(c, h->seq, ENOMEM, "out of memory");
		return 0;
	}
	if (req.flags & FSP_QP_GSI)
		io->qp = fsw_gsi_create(d->sw, c->node, io, c,
					(uint8_t)req.qkey, err, sizeof(err));
	else if (req.type == FAB_QPT_RC)
		io->qp = fsw_rc_qp_create(d->sw, c->node, io, req.pkey_index,
					  err, sizeof(err));
	else
		io->qp = fsw_qp_create(d->sw, c->node, io, req.qkey,
				       req.pkey_index, 0, err, sizeof(err));
	if (!io->qp) {
		free(io);
		reply_err(c, h->seq, EINVAL, "%s", err);
		return 0;
	}
	if ((req.flags & FSP_QP_QPN) &&
	    fsw_qp_renumber(c->node, io->qp, rq.qpn) < 0) {
		int e = errno;

		fsw_qp_destroy(d->sw, io->qp);
		free(io);
		reply_err(c, h->seq, e, "QPN 0x%06x: %s", rq.qpn,
			  strerror(e));
		return 0;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC,
		       0, sv) < 0) {
		reply_err(c, h->seq, errno, "socketpair: %s", strerror(errno));
		fsw_qp_destroy(d->sw, io->qp);
		free(io);
		return 0;
	}
	if ((req.flags & FSP_QP_SHM) && (mfd = shm_create(io)) < 0) {
		reply_err(c, h->seq, errno, "QP rings: %s", strerror(errno));
		close(sv[0]);
		close(sv[1]);
		fsw_qp_destroy(d->sw, io->qp);
		free(io);
		return 0;
	}
	setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	setsockopt(sv[0], SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	io->qpn = fsw_qp_qpn(io->qp);
	io->conn = c;
	io->burst = !!(req.flags & FSP_QP_BURST);
	io->fd = sv[0];
	io->ev = event_new(d->base, sv[0], EV_READ | EV_PERSIST, qp_read_cb,
			   io);
	event_add(io->ev, NULL);
	io->next = c->qps;
	c->qps = io;
	ref.qpn = io->qpn;
	fds[0] = sv[1];
	fds[1] = mfd;
	fsp_send_fds(c->fd, FSP_REPLY, h->seq, 0, &ref, sizeof(ref), fds,
		     mfd >= 0 ? 2 : 1);
	close(sv[1]);
	if (mfd >= 0)
		close(mfd);
	log_debug("node %s: QP 0x%06x Q_Key 0x%08x P_Key 0x%04x",
		  fsw_node_name(c->node), ref.qpn, req.qkey,
		  fsw_qp_pkey(io->qp));
	return 0;
}

/* FSP_QP_RECYCLE: a new RC QP behind an old one's socket and rings. */
static int handle_qp_recycle(struct conn *c, const struct fsp_hdr *h,
			     const void *body)
{
	struct fabd *d = c->d;
	struct fsp_qp_recycle rq;
	struct fsp_qp_ref ref;
	struct fsw_qp *qp;
	struct qpio *io;
	char err[256];
	uint32_t old;

	if (h->len != sizeof(rq)) {
		reply_err(c, h->seq, EBADMSG, "QP_RECYCLE of %u bytes",
			  h->len);
		return -1;
	}
	memcpy(&rq, body, sizeof(rq));
	io = conn_qp(c, rq.qpn);
	if (!io) {
		reply_err(c, h->seq, ENOENT, "no QP 0x%06x", rq.qpn);
		return 0;
	}
	if (!io->shm || !fsw_qp_is_rc(io->qp)) {
		reply_err(c, h->seq, EINVAL, "QP 0x%06x: only RC QPs with "
			  "rings are recycled", rq.qpn);
		return 0;
	}
	qp = fsw_rc_qp_create(d->sw, c->node, io, rq.pkey_index, err,
			      sizeof(err));
	if (!qp) {
		reply_err(c, h->seq, EINVAL, "%s", err);
		return 0;
	}
	/* as for a destroy: what was posted is on the wire; what we were
	 * delivering is published for the process to drop */
	qp_drain_all(io);
	out_flush_one(d, io);
	old = io->qpn;
	fsw_qp_destroy(d->sw, io->qp);
	io->qp = qp;
	io->qpn = fsw_qp_qpn(qp);
	fsw_count_qp_recycled(d->sw);
	ref.qpn = io->qpn;
	fsp_send(c->fd, FSP_REPLY, h->seq, 0, &ref, sizeof(ref), -1);
	log_debug("node %s: QP 0x%06x recycled as 0x%06x P_Key 0x%04x",
		  fsw_node_name(c->node), old, ref.qpn, fsw_qp_pkey(qp));
	return 0;
}

static int handle_qp_msg(struct conn *c, const struct fsp_hdr *h,
			 const void *body)
{
	struct fsp_mcast m;
	struct fsp_qp_ref ref;
	struct qpio *io;
	char err[256];
	union fab_gid mgid;
	int rc;

	if (h->type == FSP_QP_DESTROY) {
		if (h->len != sizeof(ref)) {
			reply_err(c, h->seq, EBADMSG, "bad QP_DESTROY");
			return -1;
		}
		memcpy(&ref, body, sizeof(ref));
		io = conn_qp(c, ref.qpn);
		if (!io) {
			reply_err(c, h->seq, ENOENT, "no QP 0x%06x", ref.qpn);
			return 0;
		}
		/* what was posted before the destroy is on the wire, as
		 * with an HCA, even if the request is seen first */
		qp_drain_all(io);
		qpio_free(io);
		fsp_send(c->fd, FSP_REPLY, h->seq, 0, NULL, 0, -1);
		return 0;
	}
	if (h->len != sizeof(m)) {
		reply_err(c, h->seq, EBADMSG, "bad multicast request");
		return -1;
	}
	memcpy(&m, body, sizeof(m));
	io = conn_qp(c, m.qpn);
	if (!io) {
		reply_err(c, h->seq, ENOENT, "no QP 0x%06x", m.qpn);
		return 0;
	}
	memcpy(mgid.raw, m.mgid, 16);
	if (h->type == FSP_MCAST_ATTACH)
		rc = fsw_mcast_attach(c->d->sw, io->qp, &mgid, m.mlid, err,
				      sizeof(err));
	else
		rc = fsw_mcast_detach(c->d->sw, io->qp, &mgid, m.mlid, err,
				      sizeof(err));
	if (rc < 0)
		reply_err(c, h->seq, EINVAL, "%s", err);
	else
		fsp_send(c->fd, FSP_REPLY, h->seq, 0, NULL, 0, -1);
	return 0;
}

/*
 * Re-read the partitions file (SIGHUP, ibfabricctl reload), as OpenSM
 * does on SIGHUP.  A file that does not parse leaves the partitions in use
 * as they are.  Writes what happened (or why not) to msg; 0 or -1.
 */
static int fabd_reload(struct fabd *d, char *msg, size_t cap)
{
	static char err[4096];
	struct prtn_conf nc, old;
	unsigned int ports, groups;

	if (!d->prtn_path) {
		snprintf(msg, cap, "no partitions file to re-read (started "
			 "without --partitions)");
		log_warnx("reload: %s", msg);
		return -1;
	}
	if (prtn_conf_load(d->prtn_path, &nc, err, sizeof(err)) < 0) {
		snprintf(msg, cap, "%s\nreload failed: the partitions in use "
			 "are kept", err);
		log_warnx("reload: %s: the partitions in use are kept", err);
		return -1;
	}
	old = d->pc;
	d->pc = nc;
	ports = fsw_set_partitions(d->sw, &d->pc, &groups);
	prtn_conf_free(&old);
	snprintf(msg, cap, "partitions reloaded from %s: %zu partition(s), "
		 "PKEY_CHANGE on %u port(s), %u group(s) deleted\n",
		 d->prtn_path, d->pc.nparts, ports, groups);
	log_info("%.*s", (int)strcspn(msg, "\n"), msg);
	return 0;
}

static int handle_ctl(struct conn *c, const struct fsp_hdr *h,
		      const void *body)
{
	static char out[FABD_REPORT_MAX];
	char cmd[160];

	if (h->len == 0 || h->len >= sizeof(cmd)) {
		reply_err(c, h->seq, EINVAL, "bad control command");
		return 0;
	}
	memcpy(cmd, body, h->len);
	cmd[h->len] = '\0';
	/* the capture is ibfabricd's, not the switch's */
	if (!strcmp(cmd, "capture on") || !strcmp(cmd, "capture off")) {
		if (!c->d->pcap) {
			reply_err(c, h->seq, EINVAL, "not capturing (no --pcap)");
			return 0;
		}
		c->d->pcap_paused = !strcmp(cmd, "capture off");
		snprintf(out, sizeof(out), "capture %s\n",
			 c->d->pcap_paused ? "paused" : "on");
		fsp_send(c->fd, FSP_REPLY, h->seq, 0, out, strlen(out), -1);
		return 0;
	}
	if (!strcmp(cmd, "reload")) {
		if (fabd_reload(c->d, out, sizeof(out)) < 0) {
			reply_err(c, h->seq, EINVAL, "%s", out);
			return 0;
		}
		fsp_send(c->fd, FSP_REPLY, h->seq, 0, out, strlen(out), -1);
		return 0;
	}
	if (fsw_ctl(c->d->sw, cmd, out, sizeof(out)) < 0) {
		reply_err(c, h->seq, EINVAL, "%s", out);
		return 0;
	}
	fsp_send(c->fd, FSP_REPLY, h->seq, 0, out, strlen(out), -1);
	return 0;
}

static void cm_tick_cb(evutil_socket_t fd, short what, void *arg)
{
	struct fabd *d = arg;
	struct fsw_cm *cm = fsw_cm(d->sw);
	struct timespec ts;
	uint64_t now;

	(void)fd;
	(void)what;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
	if (fsw_cm_next(cm) <= now)
		fsw_cm_tick(cm);
	if (fsw_held(d->sw))
		schedule_flush(d);
}

/* The process's own RC QP a connect or accept names, or NULL (refused). */
static struct qpio *cm_rc_qp(struct conn *c, const struct fsp_hdr *h,
			     uint32_t qpn)
{
	struct qpio *io = conn_qp(c, qpn);

	if (!io || !fsw_qp_is_rc(io->qp)) {
		reply_err(c, h->seq, EINVAL, "QP 0x%06x is not an RC QP of "
			  "this process", qpn);
		return NULL;
	}
	return io;
}

/* The CM requests of a process (soft_proto.h, FSP_CM_*): lengths here,
 * that a QPN is the process's own RC QP here, the rest in fsw_cm.c. */
static int handle_cm(struct conn *c, const struct fsp_hdr *h,
		     const void *body)
{
	struct fsw_cm *cm = fsw_cm(c->d->sw);
	static const uint32_t lens[FSP_TYPE_MAX] = {
		[FSP_CM_OPEN] = 0,
		[FSP_CM_LISTEN] = sizeof(struct fsp_cm_listen),
		[FSP_CM_CONNECT] = sizeof(struct fsp_cm_connect),
		[FSP_CM_ACCEPT] = sizeof(struct fsp_cm_accept),
		[FSP_CM_REJECT] = sizeof(struct fsp_cm_reject),
		[FSP_CM_DISCONNECT] = sizeof(struct fsp_cm_ref),
		[FSP_CM_DESTROY] = sizeof(struct fsp_cm_ref),
	};
	union {
		struct fsp_cm_listen l;
		struct fsp_cm_connect cn;
		struct fsp_cm_accept a;
		struct fsp_cm_reject r;
		struct fsp_cm_ref ref;
	} u;
	struct fsp_cm_ref out = { 0 };
	struct qpio *io;
	char err[256] = "";
	int rc = -1, sv[2], sz = FABD_SOCKBUF;

	if (h->len != lens[h->type]) {
		reply_err(c, h->seq, EBADMSG, "CM request %u of %u bytes",
			  h->type, h->len);
		return -1;
	}
	memcpy(&u, body, h->len);
	switch (h->type) {
	case FSP_CM_OPEN:
		if (c->cm_fd >= 0) {
			reply_err(c, h->seq, EALREADY, "CM events already "
				  "open");
			return 0;
		}
		if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK |
			       SOCK_CLOEXEC, 0, sv) < 0) {
			reply_err(c, h->seq, errno, "socketpair: %s",
				  strerror(errno));
			return 0;
		}
		setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
		shutdown(sv[0], SHUT_RD);
		c->cm_fd = sv[0];
		fsp_send(c->fd, FSP_REPLY, h->seq, 0, NULL, 0, sv[1]);
		close(sv[1]);
		return 0;
	case FSP_CM_LISTEN:
		rc = fsw_cm_listen(cm, fsw_node_lid(c->node), c, &u.l,
				   &out.handle, err, sizeof(err));
		break;
	case FSP_CM_CONNECT:
		if (!(io = cm_rc_qp(c, h, u.cn.o.qpn)))
			return 0;
		rc = fsw_cm_connect(cm, fsw_node_lid(c->node), c, &u.cn,
				    fsw_qp_pkey(io->qp), &out.handle, err,
				    sizeof(err));
		break;
	case FSP_CM_ACCEPT:
		if (!(io = cm_rc_qp(c, h, u.a.o.qpn)))
			return 0;
		rc = fsw_cm_accept(cm, c, &u.a, err, sizeof(err));
		break;
	case FSP_CM_REJECT:
		rc = fsw_cm_reject(cm, c, &u.r, err, sizeof(err));
		break;
	case FSP_CM_DISCONNECT:
		rc = fsw_cm_disconnect(cm, c, u.ref.handle, err, sizeof(err));
		break;
	case FSP_CM_DESTROY:
		rc = fsw_cm_destroy(cm, c, u.ref.handle);
		if (rc < 0)
			snprintf(err, sizeof(err), "no CM handle %u",
				 u.ref.handle);
		break;
	}
	if (rc < 0) {
		reply_err(c, h->seq, errno ? errno : EINVAL, "%s", err);
		return 0;
	}
	if (fsw_held(c->d->sw))
		schedule_flush(c->d);
	if (h->type == FSP_CM_LISTEN || h->type == FSP_CM_CONNECT)
		fsp_send(c->fd, FSP_REPLY, h->seq, 0, &out, sizeof(out), -1);
	else
		fsp_send(c->fd, FSP_REPLY, h->seq, 0, NULL, 0, -1);
	return 0;
}

/* Returns -1 when the connection must be closed. */
static int conn_handle(struct conn *c, const struct fsp_hdr *h,
		       const void *body)
{
	if (!c->node && !c->observer && h->type != FSP_HELLO) {
		reply_err(c, h->seq, EPROTO, "HELLO expected first");
		return -1;
	}
	switch (h->type) {
	case FSP_HELLO:
		if (c->node || c->observer) {
			reply_err(c, h->seq, EPROTO, "second HELLO");
			return -1;
		}
		return handle_hello(c, h, body);
	case FSP_CTL:
		return handle_ctl(c, h, body);
	default:
		break;
	}
	if (!c->node) {
		reply_err(c, h->seq, EPERM, "observers hold no port");
		return 0;
	}
	switch (h->type) {
	case FSP_PORT_QUERY: {
		struct fsp_port_info pi;

		fsw_port_info(c->d->sw, c->node, &pi);
		fsp_send(c->fd, FSP_REPLY, h->seq, 0, &pi, sizeof(pi), -1);
		return 0;
	}
	case FSP_QP_CREATE:
		return handle_qp_create(c, h, body);
	case FSP_QP_RECYCLE:
		return handle_qp_recycle(c, h, body);
	case FSP_QP_DESTROY:
	case FSP_MCAST_ATTACH:
	case FSP_MCAST_DETACH:
		return handle_qp_msg(c, h, body);
	case FSP_CM_OPEN:
	case FSP_CM_LISTEN:
	case FSP_CM_CONNECT:
	case FSP_CM_ACCEPT:
	case FSP_CM_REJECT:
	case FSP_CM_DISCONNECT:
	case FSP_CM_DESTROY:
		return handle_cm(c, h, body);
	case FSP_INJECT:
		fsw_input(c->d->sw, c->node, body, h->len);
		if (fsw_held(c->d->sw))
			schedule_flush(c->d);
		fsp_send(c->fd, FSP_REPLY, h->seq, 0, NULL, 0, -1);
		return 0;
	default:
		reply_err(c, h->seq, EPROTO, "unexpected message type %u",
			  h->type);
		return -1;
	}
}

static void conn_read_cb(evutil_socket_t fd, short what, void *arg)
{
	static uint8_t body[FSP_MSG_MAX];
	struct conn *c = arg;
	struct fabd *d = c->d;
	struct fsp_hdr h;
	ssize_t n;

	(void)what;
	n = fsp_recv(fd, &h, body, sizeof(body), NULL);
	if (n < 0) {
		if (errno == EAGAIN || errno == EINTR)
			return;
		if (errno == EBADMSG) {
			fsw_count_ctl_malformed(d->sw);
			if (complain_ok(d))
				log_warnx("%s: malformed control message, "
					  "connection closed",
					  c->node ? fsw_node_name(c->node) :
					  "client");
		}
		conn_free(c);
		return;
	}
	if (conn_handle(c, &h, body) < 0) {
		fsw_count_ctl_malformed(d->sw);
		conn_free(c);
	}
}

static void accept_cb(evutil_socket_t lfd, short what, void *arg)
{
	struct fabd *d = arg;
	struct conn *c;
	int fd;

	(void)what;
	fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd < 0) {
		if (errno != EAGAIN && complain_ok(d))
			log_warn("accept");
		return;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		close(fd);
		return;
	}
	c->d = d;
	c->fd = fd;
	c->cm_fd = -1;
	c->ev = event_new(d->base, fd, EV_READ | EV_PERSIST, conn_read_cb, c);
	event_add(c->ev, NULL);
	c->next = d->conns;
	d->conns = c;
}

/* A notification to systemd, when it runs us (Type=notify). */
static void fabd_notify(const char *msg)
{
	char err[256];

	if (notify_send(err, sizeof(err), "%s", msg) < 0)
		log_warnx("%s", err);
}

static void signal_cb(evutil_socket_t sig, short what, void *arg)
{
	struct fabd *d = arg;
	char msg[4096];

	(void)what;
	if (sig == SIGHUP) {
		log_info("SIGHUP: re-reading the partitions");
		fabd_reload(d, msg, sizeof(msg));
		return;
	}
	log_info("signal %d: shutting down", (int)sig);
	fabd_notify("STOPPING=1");
	event_base_loopbreak(d->base);
}

/* Bind the node socket; refuse to steal one a live ibfabricd holds. */
static int listen_socket(const char *path)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd, probe;

	if (strlen(path) >= sizeof(sun.sun_path)) {
		log_warnx("socket path '%s' too long", path);
		return -1;
	}
	strcpy(sun.sun_path, path);
	probe = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (probe >= 0 &&
	    connect(probe, (struct sockaddr *)&sun, sizeof(sun)) == 0) {
		close(probe);
		log_warnx("%s: another ibfabricd is listening there", path);
		return -1;
	}
	if (probe >= 0)
		close(probe);
	unlink(path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0 ||
	    listen(fd, 128) < 0) {
		log_warn("%s", path);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	chmod(path, 0660);
	return fd;
}

static int parse_prob(const char *opt, const char *s, double *out)
{
	const char *why;

	if (conf_parse_double_range(s, 0.0, 1.0, out, &why) < 0) {
		fprintf(stderr, "ibfabricd: %s '%s': %s\n", opt, s, why);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "foreground", no_argument, NULL, 'f' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "socket", required_argument, NULL, 's' },
		{ "partitions", required_argument, NULL, 'P' },
		{ "pcap", required_argument, NULL, 'p' },
		{ "loss", required_argument, NULL, 'L' },
		{ "dup", required_argument, NULL, 'D' },
		{ "reorder", required_argument, NULL, 'R' },
		{ "seed", required_argument, NULL, 'S' },
		{ "mtu", required_argument, NULL, 'M' },
		{ "lid-file", required_argument, NULL, 'G' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct fsw_fault_cfg faults = { .seed = 1 };
	const char *pcap_path = NULL, *prtn_path = NULL, *why;
	char *abs_sock = NULL, *abs_prtn = NULL, *abs_lid = NULL;
	struct event *sigs[3];
	struct fabd d;
	char err[512];
	int ch, foreground = 0, verbose = 0, i;
	unsigned long long seed, mtu = 4096;
	uint8_t mtu_code = 5;

	memset(&d, 0, sizeof(d));
	opterr = 0;	/* our own one-line messages */
	d.sockpath = FAB_DEFAULT_SOFT_PATH;
	while ((ch = getopt_long(argc, argv, "fvs:P:hV", opts, NULL)) != -1) {
		switch (ch) {
		case 'f': foreground = 1; break;
		case 'v': verbose = 1; break;
		case 's': d.sockpath = optarg; break;
		case 'P': prtn_path = d.prtn_path = optarg; break;
		case 'p': pcap_path = optarg; break;
		case 'G': d.lid_file = optarg; break;
		case 'L':
			if (parse_prob("--loss", optarg, &faults.loss) < 0)
				return 2;
			break;
		case 'D':
			if (parse_prob("--dup", optarg, &faults.dup) < 0)
				return 2;
			break;
		case 'R':
			if (parse_prob("--reorder", optarg, &faults.reorder) < 0)
				return 2;
			break;
		case 'S':
			if (conf_parse_uint(optarg, 0, UINT64_MAX, &seed,
					    &why) < 0) {
				fprintf(stderr, "ibfabricd: --seed '%s': %s\n",
					optarg, why);
				return 2;
			}
			faults.seed = seed;
			break;
		case 'M':
			if (conf_parse_uint(optarg, 256, 4096, &mtu, &why) < 0 ||
			    (mtu & (mtu - 1))) {
				fprintf(stderr, "ibfabricd: --mtu '%s': expected "
					"256, 512, 1024, 2048 or 4096\n", optarg);
				return 2;
			}
			for (mtu_code = 1; (128ull << mtu_code) < mtu;
			     mtu_code++)
				;
			break;
		case 'h': usage(stdout); return 0;
		case 'V': printf("ibfabricd %s\n", IBGW_VERSION); return 0;
		default:
			fprintf(stderr, "ibfabricd: bad option '%s' (see "
				"--help)\n", argv[optind - 1]);
			return 2;
		}
	}
	if (d.sockpath && !*d.sockpath) {
		fprintf(stderr, "ibfabricd: --socket: an empty path\n");
		return 2;
	}
	if (optind != argc) {
		fprintf(stderr, "ibfabricd: unexpected argument '%s' (see "
			"--help)\n", argv[optind]);
		return 2;
	}
	log_init("ibfabricd", 1, verbose);

	if (prtn_path) {
		if (prtn_conf_load(prtn_path, &d.pc, err, sizeof(err)) < 0) {
			fprintf(stderr, "ibfabricd: %s\n", err);
			return 2;
		}
	} else if (prtn_conf_default(&d.pc) < 0) {
		fatalx("out of memory");
	}
	if (pcap_path) {
		d.pcap = pcap_writer_open(pcap_path, err, sizeof(err));
		if (!d.pcap) {
			fprintf(stderr, "ibfabricd: %s\n", err);
			prtn_conf_free(&d.pc);
			return 1;
		}
	}
	signal(SIGPIPE, SIG_IGN);
	d.lfd = listen_socket(d.sockpath);
	if (d.lfd < 0) {
		if (d.pcap)
			pcap_writer_close(d.pcap);
		prtn_conf_free(&d.pc);
		return 1;
	}
	/* a detached daemon runs in /: keep the socket path absolute so it
	 * can be removed at exit */
	if (d.sockpath[0] != '/') {
		char *cwd = getcwd(NULL, 0);

		if (!cwd || asprintf(&abs_sock, "%s/%s", cwd, d.sockpath) < 0)
			fatal("socket path");
		free(cwd);
		d.sockpath = abs_sock;
	}
	/* the same for the partitions file, re-read on SIGHUP */
	if (d.prtn_path && d.prtn_path[0] != '/') {
		abs_prtn = realpath(d.prtn_path, NULL);
		if (!abs_prtn)
			fatal("%s", d.prtn_path);
		d.prtn_path = abs_prtn;
	}
	if (d.lid_file && d.lid_file[0] != '/') {
		char *cwd = getcwd(NULL, 0);

		if (!cwd || asprintf(&abs_lid, "%s/%s", cwd, d.lid_file) < 0)
			fatal("lid file path");
		free(cwd);
		d.lid_file = abs_lid;
	}
	/* detached before the event base is made: nothing to reinit */
	if (!foreground &&
	    daemon_detach("ibfabricd", verbose, NULL, err, sizeof(err)) < 0)
		fatalx("%s", err);
	/* every attached process holds a socket, and every QP one more:
	 * take the descriptors the hard limit allows */
	{
		struct rlimit rl;

		if (getrlimit(RLIMIT_NOFILE, &rl) == 0 &&
		    rl.rlim_cur < rl.rlim_max) {
			rl.rlim_cur = rl.rlim_max;
			setrlimit(RLIMIT_NOFILE, &rl);
		}
	}
	d.base = event_base_new();
	d.sw = fsw_new(&d.pc, &fabd_ops, &d);
	if (!d.base || !d.sw)
		fatalx("out of memory");
	fsw_set_faults(d.sw, &faults);
	fsw_set_port_mtu(d.sw, mtu_code);
	if (d.lid_file && lid_file_load(&d) < 0)
		fatalx("%s: cannot read the LID file", d.lid_file);
	d.lev = event_new(d.base, d.lfd, EV_READ | EV_PERSIST, accept_cb, &d);
	d.flush_ev = evtimer_new(d.base, flush_cb, &d);
	d.out_ev = event_new(d.base, -1, 0, out_flush_cb, &d);
	d.busy_ev = evtimer_new(d.base, busy_cb, &d);
	/* the CMs' timers are hundreds of milliseconds: a 20 ms tick keeps
	 * them within 2% */
	d.cm_ev = event_new(d.base, -1, EV_PERSIST, cm_tick_cb, &d);
	{
		struct timeval tick = { 0, 20000 };

		event_add(d.cm_ev, &tick);
	}
	event_add(d.lev, NULL);
	if (d.pcap) {
		struct timeval sec = { 1, 0 };

		d.pcap_ev = event_new(d.base, -1, EV_PERSIST, pcap_flush_cb,
				      &d);
		event_add(d.pcap_ev, &sec);
	}
	sigs[0] = evsignal_new(d.base, SIGINT, signal_cb, &d);
	sigs[1] = evsignal_new(d.base, SIGTERM, signal_cb, &d);
	sigs[2] = evsignal_new(d.base, SIGHUP, signal_cb, &d);
	for (i = 0; i < 3; i++)
		evsignal_add(sigs[i], NULL);

	log_info("ready: socket %s, %zu partition(s)%s%s", d.sockpath,
		 d.pc.nparts, d.pcap ? ", capturing to " : "",
		 d.pcap ? pcap_path : "");
	/* the socket listens and the loop is about to serve it: whoever is
	 * ordered After= us may connect from now on */
	if (notify_send(err, sizeof(err),
			"READY=1\nSTATUS=serving %s, %zu partition(s)",
			d.sockpath, d.pc.nparts) < 0)
		log_warnx("%s", err);
	event_base_dispatch(d.base);

	while (d.conns)
		conn_free(d.conns);
	for (i = 0; i < 3; i++)
		event_free(sigs[i]);
	event_free(d.lev);
	event_free(d.flush_ev);
	event_free(d.out_ev);
	event_free(d.busy_ev);
	event_free(d.cm_ev);
	if (d.pcap_ev)
		event_free(d.pcap_ev);
	close(d.lfd);
	unlink(d.sockpath);
	if (d.pcap)
		pcap_writer_close(d.pcap);
	fsw_free(d.sw);
	event_base_free(d.base);
	prtn_conf_free(&d.pc);
	free(abs_sock);
	free(abs_prtn);
	free(abs_lid);
	return 0;
}

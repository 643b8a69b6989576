// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sdp_mocksvc: a TEST DOUBLE of the host's SDP service, for the preload's
 * tests only.  It speaks ulp/sdp/sdp_ctl.h on its control socket but has
 * no SDP, no InfiniBand and no network: one process that "connects" an
 * SDP client to an SDP listener of the same host (the same network
 * namespace) by relaying bytes between its two unix stream ends, with
 * back-pressure (a 64 KiB buffer each way, no reading while it is full)
 * and half-close (end of file on one end is shutdown(SHUT_WR) on the
 * other).  Listeners are matched by port alone.  CONNECT to a port
 * without a live listener is ECONNREFUSED, so that 'both' falls back to
 * TCP; a 'both' listener's TCP connections are handed over with
 * SDP_CTL_ACC_TCP.
 *
 *   sdp_mocksvc [-s @NAME|PATH] [-c COUNTS_FILE] [-d PORT:MS]
 *
 * -d delays the answer to CONNECTs to PORT by MS (a request the preload
 * closes meanwhile is cancelled, and counted), for the EINTR test.
 *
 * Its counters (relayed bytes and connections) go to COUNTS_FILE on
 * SIGUSR1 and at exit (SIGTERM, SIGINT), one "name value" a line; "ready"
 * on stdout once it listens.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "ulp/sdp/sdp_ctl.h"

#define MOCK_BUF	65536
#define MOCK_MAX	1024
#define MOCK_PORT_BASE	50000

struct relay {
	int fd[2];
	char buf[2][MOCK_BUF];	/* buf[i]: read from fd[i], for fd[1-i] */
	size_t len[2], off[2];
	int eof[2], shut[2];
};

struct listener {
	int live;
	uint16_t port;
	char name[64];		/* abstract, without the NUL */
	int tcp;		/* 'both': the TCP listener, else -1 */
	union sdp_ctl_addr local;
};

struct info {
	uint64_t ino;
	int by_peer;		/* ino is the mock's end: answer for its peer */
	union sdp_ctl_addr local, remote;
};

static struct relay *relays[MOCK_MAX];
static struct listener listeners[MOCK_MAX];
static struct info infos[MOCK_MAX];
static unsigned int info_next, name_next, port_next;
static const char *counts_file;
static volatile sig_atomic_t got_usr1, got_term;
static unsigned long long c_relayed, c_sdp_conns, c_refused, c_listens,
	c_tcp_handed, c_info, c_cancelled;

static void on_signal(int sig)
{
	if (sig == SIGUSR1)
		got_usr1 = 1;
	else
		got_term = 1;
}

static void counts_write(void)
{
	FILE *f;

	if (!counts_file)
		return;
	f = fopen(counts_file, "w");
	if (!f)
		return;
	fprintf(f, "relayed_bytes %llu\nsdp_connections %llu\n"
		"refused %llu\nlisteners %llu\ntcp_handovers %llu\n"
		"info %llu\ncancelled %llu\n", c_relayed, c_sdp_conns,
		c_refused, c_listens, c_tcp_handed, c_info, c_cancelled);
	fclose(f);
}

static socklen_t abstract_addr(struct sockaddr_un *sun, const char *name)
{
	size_t n = strlen(name);

	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	memcpy(sun->sun_path + 1, name, n);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
}

static int bind_name(int s, const char *prefix, char *name, size_t len)
{
	struct sockaddr_un sun;
	char buf[64];

	snprintf(buf, sizeof(buf), "%s%d.%u", prefix, (int)getpid(),
		 ++name_next);
	if (name)
		snprintf(name, len, "%s", buf);
	return bind(s, (struct sockaddr *)&sun, abstract_addr(&sun, buf));
}

static uint16_t addr_port(const union sdp_ctl_addr *a)
{
	return ntohs(a->family == AF_INET6 ? a->v6.sin6_port : a->v4.sin_port);
}

static void addr_set_port(union sdp_ctl_addr *a, uint16_t port)
{
	if (a->family == AF_INET6)
		a->v6.sin6_port = htons(port);
	else
		a->v4.sin_port = htons(port);
}

static void info_add(int fd, const union sdp_ctl_addr *l,
		     const union sdp_ctl_addr *r, int by_peer)
{
	struct info *i = &infos[info_next++ % MOCK_MAX];
	struct stat st;

	if (fstat(fd, &st) < 0)
		return;
	i->ino = st.st_ino;
	i->by_peer = by_peer;
	i->local = *l;
	i->remote = *r;
}

/*
 * The unix socket whose peer is the socket with inode peer_ino (the
 * program's accepted end, which the mock never held), from the kernel's
 * sock_diag: 0 if none.  How a service can answer INFO for an accepted
 * stream after exec without a change to sdp_ctl.h.
 */
static uint64_t diag_peer_of(uint64_t peer_ino)
{
	struct {
		struct nlmsghdr nh;
		struct unix_diag_req r;
	} q = {
		.nh = { .nlmsg_len = sizeof(q), .nlmsg_type = SOCK_DIAG_BY_FAMILY,
			.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP },
		.r = { .sdiag_family = AF_UNIX, .udiag_states = ~0u,
		       .udiag_show = UDIAG_SHOW_PEER },
	};
	static char buf[32768];
	uint64_t found = 0;
	int s, done = 0;
	ssize_t n;

	s = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (s < 0 || send(s, &q, sizeof(q), 0) < 0)
		goto out;
	while (!done && (n = recv(s, buf, sizeof(buf), 0)) > 0) {
		struct nlmsghdr *nh = (struct nlmsghdr *)buf;

		for (; NLMSG_OK(nh, (size_t)n); nh = NLMSG_NEXT(nh, n)) {
			struct unix_diag_msg *m = NLMSG_DATA(nh);
			struct rtattr *a = (struct rtattr *)(m + 1);
			int len = (int)nh->nlmsg_len - NLMSG_LENGTH(sizeof(*m));
			uint32_t peer;

			if (nh->nlmsg_type == NLMSG_DONE ||
			    nh->nlmsg_type == NLMSG_ERROR) {
				done = 1;
				break;
			}
			for (; RTA_OK(a, len); a = RTA_NEXT(a, len)) {
				if (a->rta_type != UNIX_DIAG_PEER)
					continue;
				memcpy(&peer, RTA_DATA(a), sizeof(peer));
				if (peer == peer_ino)
					found = m->udiag_ino;
			}
		}
	}
out:
	if (s >= 0)
		close(s);
	return found;
}

static int send_fd(int s, const void *data, size_t len, int fd)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} c;
	struct iovec iov = { (void *)data, len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *cm;

	if (fd >= 0) {
		memset(&c, 0, sizeof(c));
		mh.msg_control = c.buf;
		mh.msg_controllen = sizeof(c.buf);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	}
	return sendmsg(s, &mh, MSG_NOSIGNAL) == (ssize_t)len ? 0 : -1;
}

/*
 * A stream connected to the listener (bound to an ibgw-sdp-c/ name);
 * -2 when its backlog is full (try again later: a single-threaded service
 * must never block on a program that is not accepting), -1 when it is
 * gone (then forgotten).
 */
static int listener_connect(struct listener *l)
{
	struct sockaddr_un sun;
	socklen_t len = abstract_addr(&sun, l->name);
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	if (s < 0)
		return -2;
	if (bind_name(s, "ibgw-sdp-c/", NULL, 0) == 0 &&
	    connect(s, (struct sockaddr *)&sun, len) == 0)
		return s;
	if (errno == EAGAIN) {
		close(s);
		return -2;
	}
	close(s);
	if (l->tcp >= 0)
		close(l->tcp);
	l->tcp = -1;
	l->live = 0;
	return -1;
}

static struct listener *listener_find(uint16_t port)
{
	struct sdp_ctl_accept h = { .magic = SDP_CTL_MAGIC,
				    .kind = SDP_CTL_ACC_PROBE };
	unsigned int i;
	int s;

	for (i = 0; i < MOCK_MAX; i++) {
		if (!listeners[i].live || listeners[i].port != port)
			continue;
		s = listener_connect(&listeners[i]);
		if (s == -1)
			continue;
		if (s >= 0) {
			send_fd(s, &h, sizeof(h), -1);
			close(s);
		}
		return &listeners[i];
	}
	return NULL;
}

/* Connections waiting for room in a listener's backlog. */
struct pending {
	struct listener *l;
	struct sdp_ctl_accept h;
	int mine;		/* SDP: the mock's end of the client's pair */
	int tcp;		/* TCP: the socket to hand over */
};
static struct pending pend[MOCK_MAX];
static unsigned int n_pend;

static void relay_add(int a, int b);

/* 0: delivered or dropped; -1: try again later. */
static int deliver(struct pending *p)
{
	int s = p->l->live ? listener_connect(p->l) : -1;

	if (s == -2)
		return -1;
	if (s >= 0 && send_fd(s, &p->h, sizeof(p->h), p->tcp) == 0) {
		if (p->tcp >= 0)
			c_tcp_handed++;
		else
			c_sdp_conns++;
		if (p->mine >= 0) {
			info_add(s, &p->h.local, &p->h.remote, 1);
			relay_add(p->mine, s);
			p->mine = -1;
		} else {
			close(s);
		}
	} else if (s >= 0) {
		close(s);
	}
	if (p->mine >= 0)
		close(p->mine);
	if (p->tcp >= 0)
		close(p->tcp);
	return 0;
}

static void pend_add(struct listener *l, const struct sdp_ctl_accept *h,
		     int mine, int tcp)
{
	struct pending p = { l, *h, mine, tcp };

	if (deliver(&p) == 0)
		return;
	if (n_pend == MOCK_MAX) {
		if (mine >= 0)
			close(mine);
		if (tcp >= 0)
			close(tcp);
		return;
	}
	pend[n_pend++] = p;
}

static void pend_run(void)
{
	unsigned int i = 0;

	while (i < n_pend) {
		if (deliver(&pend[i]) == 0)
			pend[i] = pend[--n_pend];
		else
			i++;
	}
}

static void relay_add(int a, int b)
{
	unsigned int i;

	for (i = 0; i < MOCK_MAX && relays[i]; i++)
		;
	if (i == MOCK_MAX || !(relays[i] = calloc(1, sizeof(struct relay)))) {
		close(a);
		close(b);
		return;
	}
	fcntl(a, F_SETFL, O_NONBLOCK);
	fcntl(b, F_SETFL, O_NONBLOCK);
	relays[i]->fd[0] = a;
	relays[i]->fd[1] = b;
}

static void do_connect(const struct sdp_ctl_req *req, struct sdp_ctl_reply *rep,
		       int *out)
{
	struct sdp_ctl_accept h = { .magic = SDP_CTL_MAGIC,
				    .kind = SDP_CTL_ACC_SDP };
	struct listener *l = listener_find(addr_port(&req->remote));
	int sp[2];

	if (!l) {
		c_refused++;
		rep->err = ECONNREFUSED;
		return;
	}
	rep->remote = req->remote;
	/* an unbound client: the destination's address (this host's), an
	 * ephemeral port */
	rep->local = req->local.family ? req->local : req->remote;
	if (!req->local.family || !addr_port(&rep->local))
		addr_set_port(&rep->local, (uint16_t)(40000 + port_next++ % 9000));
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) < 0 ||
	    bind_name(sp[1], "ibgw-sdp-c/", NULL, 0) < 0) {
		rep->err = ENOBUFS;
		return;
	}
	h.local = rep->remote;
	h.remote = rep->local;
	info_add(sp[0], &rep->local, &rep->remote, 0);
	pend_add(l, &h, sp[1], -1);
	*out = sp[0];
}

static void do_listen(const struct sdp_ctl_req *req, int tcp,
		      struct sdp_ctl_reply *rep, int *out)
{
	uint16_t port = addr_port(&req->local);
	struct listener *l;
	unsigned int i;
	int s;

	if (!port)
		port = (uint16_t)(MOCK_PORT_BASE + port_next++ % 10000);
	if (listener_find(port)) {
		rep->err = EADDRINUSE;
		return;
	}
	for (i = 0; i < MOCK_MAX && listeners[i].live; i++)
		;
	if (i == MOCK_MAX) {
		rep->err = ENOBUFS;
		return;
	}
	l = &listeners[i];
	s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0 || bind_name(s, "ibgw-sdp-l/", l->name, sizeof(l->name)) ||
	    listen(s, req->backlog > 0 ? req->backlog : 128) < 0) {
		if (s >= 0)
			close(s);
		rep->err = ENOBUFS;
		return;
	}
	l->live = 1;
	l->port = port;
	l->local = req->local;
	addr_set_port(&l->local, port);
	l->tcp = -1;
	if ((req->flags & SDP_CTL_F_BOTH) && tcp >= 0) {
		l->tcp = tcp;
		fcntl(tcp, F_SETFL, O_NONBLOCK);
	}
	rep->local = l->local;
	info_add(s, &l->local, &rep->remote, 0);
	c_listens++;
	*out = s;
}

static void do_info(const struct sdp_ctl_req *req, struct sdp_ctl_reply *rep)
{
	unsigned int i;

	uint64_t mine = 0;

	c_info++;
	for (i = 0; i < MOCK_MAX; i++)
		if (infos[i].ino && !infos[i].by_peer &&
		    infos[i].ino == req->ino)
			goto found;
	mine = diag_peer_of(req->ino);
	for (i = 0; mine && i < MOCK_MAX; i++)
		if (infos[i].by_peer && infos[i].ino == mine)
			goto found;
	rep->err = ENOENT;
	return;
found:
	rep->local = infos[i].local;
	rep->remote = infos[i].remote;
}

static void ctl_answer(int s, const struct sdp_ctl_req *req, int tcp)
{
	struct sdp_ctl_reply rep;
	int out = -1;

	memset(&rep, 0, sizeof(rep));
	rep.magic = SDP_CTL_MAGIC;
	rep.id = req->id;
	if (req->op == SDP_CTL_CONNECT)
		do_connect(req, &rep, &out);
	else if (req->op == SDP_CTL_LISTEN)
		do_listen(req, tcp, &rep, &out);
	else if (req->op == SDP_CTL_INFO)
		do_info(req, &rep);
	else
		rep.err = EINVAL;
	send_fd(s, &rep, sizeof(rep), out);
	if (out >= 0)
		close(out);
	if (tcp >= 0 && (req->op != SDP_CTL_LISTEN || rep.err ||
			 !(req->flags & SDP_CTL_F_BOTH)))
		close(tcp);
}

/* CONNECTs to delay_port wait delay_ms before their answer (or until the
 * preload closes the request: cancelled), so that a test can interrupt
 * the wait with a signal. */
struct deferred {
	int s;
	struct sdp_ctl_req req;
	long long due_ms;
};
static struct deferred deferred[MOCK_MAX];
static unsigned int n_deferred;
static unsigned int delay_port, delay_ms;

static long long mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* 1 when it was kept for later (s is then not to be closed). */
static int ctl_request(int s)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} c;
	struct sdp_ctl_req req;
	struct iovec iov = { &req, sizeof(req) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = c.buf,
			     .msg_controllen = sizeof(c.buf) };
	struct timeval tv = { 1, 0 };
	struct cmsghdr *cm;
	int tcp = -1;

	setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (recvmsg(s, &mh, MSG_CMSG_CLOEXEC) != (ssize_t)sizeof(req) ||
	    req.magic != SDP_CTL_MAGIC)
		return 0;
	cm = CMSG_FIRSTHDR(&mh);
	if (cm && cm->cmsg_type == SCM_RIGHTS)
		memcpy(&tcp, CMSG_DATA(cm), sizeof(int));
	if (req.op == SDP_CTL_CONNECT && delay_port && n_deferred < MOCK_MAX &&
	    addr_port(&req.remote) == delay_port) {
		deferred[n_deferred++] = (struct deferred){
			s, req, mono_ms() + delay_ms };
		return 1;
	}
	ctl_answer(s, &req, tcp);
	return 0;
}

/* Answers what is due, drops what the preload cancelled; the poll
 * timeout until the next due one (-1: none). */
static int deferred_run(void)
{
	long long now = mono_ms(), next = -1;
	unsigned int i = 0;
	struct pollfd p;

	while (i < n_deferred) {
		struct deferred *d = &deferred[i];

		p = (struct pollfd){ .fd = d->s, .events = POLLIN };
		if (poll(&p, 1, 0) == 1) {
			c_cancelled++;		/* closed by the preload */
		} else if (d->due_ms <= now) {
			ctl_answer(d->s, &d->req, -1);
		} else {
			if (next < 0 || d->due_ms - now < next)
				next = d->due_ms - now;
			i++;
			continue;
		}
		close(d->s);
		*d = deferred[--n_deferred];
	}
	return (int)next;
}

static void tcp_handover(struct listener *l)
{
	struct sdp_ctl_accept h = { .magic = SDP_CTL_MAGIC,
				    .kind = SDP_CTL_ACC_TCP };
	struct sockaddr_in6 a;
	socklen_t len;
	int t;

	t = accept4(l->tcp, NULL, NULL, SOCK_CLOEXEC);
	if (t < 0)
		return;
	len = sizeof(a);
	getsockname(t, (struct sockaddr *)&a, &len);
	memcpy(&h.local, &a, len < sizeof(h.local) ? len : sizeof(h.local));
	len = sizeof(a);
	getpeername(t, (struct sockaddr *)&a, &len);
	memcpy(&h.remote, &a, len < sizeof(h.remote) ? len : sizeof(h.remote));
	pend_add(l, &h, -1, t);
}

static void relay_close(unsigned int i)
{
	close(relays[i]->fd[0]);
	close(relays[i]->fd[1]);
	free(relays[i]);
	relays[i] = NULL;
}

/* Moves what it can both ways; 0, or -1 when the relay is over. */
static int relay_run(struct relay *r)
{
	int i, o;
	ssize_t n;

	for (i = 0; i < 2; i++) {
		o = 1 - i;
		if (!r->eof[i] && r->len[i] == 0) {
			n = read(r->fd[i], r->buf[i], MOCK_BUF);
			if (n == 0)
				r->eof[i] = 1;
			else if (n < 0 && errno != EAGAIN)
				return -1;
			else if (n > 0) {
				r->len[i] = (size_t)n;
				r->off[i] = 0;
			}
		}
		while (r->len[i]) {
			n = send(r->fd[o], r->buf[i] + r->off[i], r->len[i],
				 MSG_NOSIGNAL);
			if (n < 0 && errno == EAGAIN)
				break;
			if (n < 0)
				return -1;
			r->off[i] += (size_t)n;
			r->len[i] -= (size_t)n;
			c_relayed += (unsigned long long)n;
		}
		if (r->eof[i] && !r->len[i] && !r->shut[i]) {
			shutdown(r->fd[o], SHUT_WR);
			r->shut[i] = 1;
		}
	}
	return r->shut[0] && r->shut[1] ? -1 : 0;
}

static void loop(int ctl)
{
	struct pollfd p[4 * MOCK_MAX + 1];
	short want[2];
	unsigned int n, i, k;
	int s, timeout;

	while (!got_term) {
		if (got_usr1) {
			got_usr1 = 0;
			counts_write();
		}
		n = 0;
		p[n++] = (struct pollfd){ .fd = ctl, .events = POLLIN };
		for (i = 0; i < MOCK_MAX; i++)
			if (listeners[i].live && listeners[i].tcp >= 0)
				p[n++] = (struct pollfd){ .fd = listeners[i].tcp,
							  .events = POLLIN };
		for (i = 0; i < MOCK_MAX; i++) {
			struct relay *r = relays[i];

			if (!r)
				continue;
			for (k = 0; k < 2; k++)
				want[k] = 0;
			for (k = 0; k < 2; k++) {
				if (!r->eof[k] && !r->len[k])
					want[k] |= POLLIN;
				if (r->len[k])
					want[1 - k] |= POLLOUT;
			}
			for (k = 0; k < 2; k++)
				p[n++] = (struct pollfd){ .fd = r->fd[k],
							  .events = want[k] };
		}
		for (i = 0; i < n_deferred; i++)
			p[n++] = (struct pollfd){ .fd = deferred[i].s,
						  .events = POLLIN };
		timeout = deferred_run();
		if (n_pend && (timeout < 0 || timeout > 10))
			timeout = 10;
		if (poll(p, n, timeout) < 0)
			continue;
		deferred_run();
		pend_run();
		if (p[0].revents & POLLIN) {
			s = accept4(ctl, NULL, NULL, SOCK_CLOEXEC);
			if (s >= 0 && !ctl_request(s))
				close(s);
		}
		for (i = 0; i < MOCK_MAX; i++)
			if (listeners[i].live && listeners[i].tcp >= 0)
				tcp_handover(&listeners[i]);
		for (i = 0; i < MOCK_MAX; i++)
			if (relays[i] && relay_run(relays[i]) < 0)
				relay_close(i);
	}
}

static int ctl_listen(const char *where)
{
	struct sockaddr_un sun;
	socklen_t len;
	int s;

	if (where[0] == '@') {
		len = abstract_addr(&sun, where + 1);
	} else {
		memset(&sun, 0, sizeof(sun));
		sun.sun_family = AF_UNIX;
		snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", where);
		unlink(where);
		len = sizeof(sun);
	}
	s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (s < 0 || bind(s, (struct sockaddr *)&sun, len) < 0 ||
	    listen(s, 128) < 0) {
		perror("sdp_mocksvc: control socket");
		exit(1);
	}
	return s;
}

int main(int argc, char **argv)
{
	const char *where = getenv(SDP_CTL_ENV);
	struct sigaction sa;
	int opt, ctl;

	if (!where || !*where)
		where = "@" SDP_CTL_NAME;
	while ((opt = getopt(argc, argv, "s:c:d:h")) != -1) {
		switch (opt) {
		case 's':
			where = optarg;
			break;
		case 'c':
			counts_file = optarg;
			break;
		case 'd':
			if (sscanf(optarg, "%u:%u", &delay_port, &delay_ms) != 2) {
				fprintf(stderr, "sdp_mocksvc: -d PORT:MS\n");
				return 2;
			}
			break;
		default:
			fprintf(stderr, "usage: sdp_mocksvc [-s @NAME|PATH] "
				"[-c COUNTS_FILE] [-d PORT:MS]  (a test double of the SDP "
				"service)\n");
			return opt == 'h' ? 0 : 2;
		}
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	ctl = ctl_listen(where);
	printf("ready\n");
	fflush(stdout);
	loop(ctl);
	counts_write();
	return 0;
}

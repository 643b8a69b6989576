// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The asynchronous SA client (see sa_client.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "fabric/fabric_prov.h"
#include "fabric/sa_client.h"

#define SA_DEFAULT_TIMEOUT_MS	1000
#define SA_DEFAULT_RETRIES	3

struct sa_req {
	struct sa_client *c;
	uint32_t id;		/* low half of the TID */
	uint8_t mad[MAD_LEN];
	unsigned int tries;
	struct event *timer;
	sa_cb cb;
	void *arg;
	struct sa_req *next;
};

struct sa_client {
	struct event_base *base;
	struct fab_dev *dev;
	struct fab_mad_agent *agent;
	struct event *rx;
	struct sa_client_cfg cfg;
	uint32_t next_id;
	struct sa_req *reqs;
	unsigned int npending;
	sa_notice_cb notice_cb;
	void *notice_arg;
	uint16_t sm_lid;	/* where the SA is, as the port last said */
	uint8_t sm_sl;
};

/* Ask the port where the SM is (a round trip to ibfabricd on the soft
 * provider, so not for every request). */
static int refresh_sm(struct sa_client *c)
{
	struct fab_port_attr pa;

	if (fab_query_port(c->dev, &pa, NULL, 0) < 0)
		return -1;
	c->sm_lid = pa.sm_lid;
	c->sm_sl = pa.sm_sl;
	return 0;
}

static void req_unlink(struct sa_client *c, struct sa_req *r)
{
	struct sa_req **pp;

	for (pp = &c->reqs; *pp; pp = &(*pp)->next) {
		if (*pp == r) {
			*pp = r->next;
			c->npending--;
			break;
		}
	}
	event_free(r->timer);
	free(r);
}

static void finish(struct sa_req *r, struct sa_result *res)
{
	sa_cb cb = r->cb;
	void *arg = r->arg;

	res->tries = r->tries;
	req_unlink(r->c, r);
	if (cb)
		cb(arg, res);
}

static int send_req(struct sa_req *r)
{
	struct fab_mad_addr to;
	struct timeval tv;

	/* a retry asks the port again: the SM may have moved */
	if ((r->tries || !r->c->sm_lid) && refresh_sm(r->c) < 0)
		return -1;
	memset(&to, 0, sizeof(to));
	to.lid = r->c->sm_lid;
	to.sl = r->c->sm_sl;
	to.qpn = 1;
	to.qkey = FAB_QP1_QKEY;
	to.pkey_index = r->c->cfg.pkey_index;
	if (fab_mad_send(r->c->agent, &to, r->mad, MAD_LEN) < 0)
		return -1;
	r->tries++;
	tv.tv_sec = r->c->cfg.timeout_ms / 1000;
	tv.tv_usec = (long)(r->c->cfg.timeout_ms % 1000) * 1000;
	evtimer_add(r->timer, &tv);
	return 0;
}

static void timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	struct sa_req *r = arg;
	struct sa_result res;

	(void)fd;
	(void)what;
	if (r->tries <= r->c->cfg.retries && send_req(r) == 0)
		return;
	memset(&res, 0, sizeof(res));
	res.err = r->tries > r->c->cfg.retries ? SA_CLIENT_TIMEOUT :
		  SA_CLIENT_SEND;
	if (res.err == SA_CLIENT_SEND)
		res.errnum = errno;
	finish(r, &res);
}

/* Acknowledge a Report from the SM and hand its Notice over. */
static void handle_report(struct sa_client *c, uint8_t *mad, size_t len,
			  const struct sa_hdr *h, const struct fab_mad_addr *from)
{
	enum sa_mad_err err;
	const uint8_t *p;
	struct sa_notice n;
	struct sa_hdr rh = *h;

	p = sa_mad_record(mad, len, h, SA_ATTR_NOTICE, 0, &err);
	rh.mad.method = MAD_METHOD_REPORT_RESP;
	sa_hdr_encode(&rh, mad);
	fab_mad_send(c->agent, from, mad, MAD_LEN);
	if (p && c->notice_cb) {
		sa_notice_decode(p, &n);
		c->notice_cb(c->notice_arg, &n);
	}
}

static void decode_answer(struct sa_req *r, const uint8_t *mad, size_t len,
			  const struct sa_hdr *h, struct sa_result *res)
{
	enum sa_mad_err err;
	const uint8_t *p;
	unsigned int i;

	res->err = SA_CLIENT_OK;
	res->status = h->mad.status;
	res->method = h->mad.method;
	res->attr_id = h->mad.attr_id;
	if (res->status)
		return;
	for (i = 0; i < SA_MAX_RECORDS && h->attr_offset; i++) {
		p = sa_mad_record(mad, len, h, h->mad.attr_id, i, &err);
		if (!p)
			break;
		/* GetTable pads with zero records after the last one */
		if (i && h->mad.method == MAD_METHOD_GET_TABLE_RESP) {
			static const uint8_t zero[SA_PATH_RECORD_LEN];
			size_t rl = h->mad.attr_id == SA_ATTR_PATH_RECORD ?
				    SA_PATH_RECORD_LEN : SA_MCMEMBER_LEN;

			if ((size_t)(p - mad) + rl <= len &&
			    !memcmp(p, zero, rl))
				break;
		}
		switch (h->mad.attr_id) {
		case SA_ATTR_MCMEMBER_RECORD:
			sa_mcmember_decode(p, &res->rec.mcm[i]);
			break;
		case SA_ATTR_PATH_RECORD:
			sa_path_decode(p, &res->rec.path[i]);
			break;
		case SA_ATTR_INFORM_INFO:
			if (i == 0)
				sa_inform_info_decode(p, &res->rec.inform);
			break;
		default:
			break;
		}
		res->nrec = i + 1;
		if (h->mad.method != MAD_METHOD_GET_TABLE_RESP)
			break;
	}
	(void)r;
}

static void rx_cb(evutil_socket_t fd, short what, void *arg)
{
	struct sa_client *c = arg;
	uint8_t mad[MAD_LEN];
	struct fab_mad_addr from;
	struct sa_hdr h;
	struct sa_req *r;
	struct sa_result res;
	int n, budget = 64;

	(void)fd;
	(void)what;
	while (budget-- > 0) {
		n = fab_mad_recv(c->agent, mad, sizeof(mad), &from);
		if (n <= 0)
			break;	/* errors: the device event reports them */
		if (sa_mad_parse(mad, (size_t)n, &h) != SA_MAD_OK)
			continue;
		if (h.mad.method == MAD_METHOD_REPORT) {
			handle_report(c, mad, (size_t)n, &h, &from);
			continue;
		}
		if (!(h.mad.method & MAD_METHOD_RESP))
			continue;
		for (r = c->reqs; r; r = r->next)
			if (r->id == (uint32_t)h.mad.tid)
				break;
		if (!r)
			continue;	/* late answer to a finished request */
		/* the answer must be to this request's attribute */
		if (h.mad.attr_id != (uint16_t)(r->mad[16] << 8 | r->mad[17]))
			continue;
		memset(&res, 0, sizeof(res));
		decode_answer(r, mad, (size_t)n, &h, &res);
		finish(r, &res);
	}
}

struct sa_client *sa_client_new(struct event_base *base, struct fab_dev *dev,
				const struct sa_client_cfg *cfg, char *err,
				size_t errlen)
{
	struct sa_client *c = calloc(1, sizeof(*c));
	struct fab_port_attr pa;
	char why[FAB_ERRLEN];
	int e;

	if (!c) {
		fab_fail(err, errlen, ENOMEM, "SA client: out of memory");
		return NULL;
	}
	c->base = base;
	c->dev = dev;
	if (cfg)
		c->cfg = *cfg;
	if (!c->cfg.timeout_ms)
		c->cfg.timeout_ms = SA_DEFAULT_TIMEOUT_MS;
	if (!c->cfg.retries)
		c->cfg.retries = SA_DEFAULT_RETRIES;
	/* TIDs differ between runs, so a late answer to an earlier process
	 * is not taken for ours */
	c->next_id = (uint32_t)time(NULL) << 12 ^ (uint32_t)getpid();
	if (fab_query_port(dev, &pa, why, sizeof(why)) < 0) {
		e = errno;
		free(c);
		fab_fail(err, errlen, e, "SA client: %s", why);
		return NULL;
	}
	if (pa.link_layer == FAB_LINK_ETHERNET) {
		free(c);
		fab_fail(err, errlen, EOPNOTSUPP, "SA client: the port is "
			 "RoCE (Ethernet link layer): no subnet administrator "
			 "to ask, an SA needs an InfiniBand port");
		return NULL;
	}
	c->agent = fab_mad_open(dev, MAD_CLASS_SUBN_ADM, why, sizeof(why));
	if (!c->agent) {
		e = errno;
		free(c);
		fab_fail(err, errlen, e, "SA client: %s", why);
		return NULL;
	}
	c->rx = event_new(base, fab_mad_fd(c->agent), EV_READ | EV_PERSIST,
			  rx_cb, c);
	if (!c->rx || event_add(c->rx, NULL) < 0) {
		if (c->rx)
			event_free(c->rx);
		fab_mad_close(c->agent);
		free(c);
		/* libevent fails for want of memory only */
		fab_fail(err, errlen, ENOMEM,
			 "SA client: cannot watch the MAD agent");
		return NULL;
	}
	return c;
}

void sa_client_free(struct sa_client *c)
{
	struct sa_result res;

	if (!c)
		return;
	while (c->reqs) {
		memset(&res, 0, sizeof(res));
		res.err = SA_CLIENT_CANCELLED;
		finish(c->reqs, &res);
	}
	event_free(c->rx);
	fab_mad_close(c->agent);
	free(c);
}

static uint32_t submit(struct sa_client *c, uint8_t method, uint16_t attr,
		       uint64_t mask, const void *rec, size_t rec_len,
		       sa_cb cb, void *arg)
{
	struct sa_req *r = calloc(1, sizeof(*r));
	struct sa_hdr h;
	int e;

	if (!r) {
		errno = ENOMEM;
		return 0;
	}
	do
		r->id = ++c->next_id;
	while (!r->id);
	memset(&h, 0, sizeof(h));
	h.mad.base_version = MAD_BASE_VERSION;
	h.mad.mgmt_class = MAD_CLASS_SUBN_ADM;
	h.mad.class_version = SA_CLASS_VERSION;
	h.mad.method = method;
	h.mad.tid = r->id;
	h.mad.attr_id = attr;
	h.comp_mask = mask;
	sa_mad_build(&h, rec, rec_len, r->mad);
	r->c = c;
	r->cb = cb;
	r->arg = arg;
	r->timer = evtimer_new(c->base, timeout_cb, r);
	if (!r->timer) {
		free(r);
		errno = ENOMEM;
		return 0;
	}
	r->next = c->reqs;
	c->reqs = r;
	c->npending++;
	if (send_req(r) < 0) {
		e = errno;
		req_unlink(c, r);
		errno = e;
		return 0;
	}
	return r->id;
}

uint32_t sa_mcm_join(struct sa_client *c, const struct sa_mcmember *rec,
		     uint64_t mask, sa_cb cb, void *arg)
{
	uint8_t b[SA_MCMEMBER_LEN];

	sa_mcmember_encode(rec, b);
	return submit(c, MAD_METHOD_SET, SA_ATTR_MCMEMBER_RECORD, mask, b,
		      sizeof(b), cb, arg);
}

uint32_t sa_mcm_leave(struct sa_client *c, const struct sa_mcmember *rec,
		      uint64_t mask, sa_cb cb, void *arg)
{
	uint8_t b[SA_MCMEMBER_LEN];

	sa_mcmember_encode(rec, b);
	return submit(c, MAD_METHOD_DELETE, SA_ATTR_MCMEMBER_RECORD, mask, b,
		      sizeof(b), cb, arg);
}

uint32_t sa_mcm_get(struct sa_client *c, const struct sa_mcmember *rec,
		    uint64_t mask, sa_cb cb, void *arg)
{
	uint8_t b[SA_MCMEMBER_LEN];

	sa_mcmember_encode(rec, b);
	return submit(c, MAD_METHOD_GET, SA_ATTR_MCMEMBER_RECORD, mask, b,
		      sizeof(b), cb, arg);
}

uint32_t sa_path_get(struct sa_client *c, const struct sa_path *rec,
		     uint64_t mask, sa_cb cb, void *arg)
{
	uint8_t b[SA_PATH_RECORD_LEN];

	sa_path_encode(rec, b);
	return submit(c, MAD_METHOD_GET, SA_ATTR_PATH_RECORD, mask, b,
		      sizeof(b), cb, arg);
}

uint32_t sa_inform(struct sa_client *c, uint16_t trap, int subscribe,
		   sa_cb cb, void *arg)
{
	struct sa_inform_info in;
	uint8_t b[SA_INFORM_INFO_LEN];

	memset(&in, 0, sizeof(in));
	in.lid_range_begin = 0xFFFF;	/* all sources */
	in.is_generic = 1;
	in.subscribe = subscribe ? 1 : 0;
	in.type = 0xFFFF;
	in.trap_number = trap;
	in.qpn = 1;
	in.producer_type = 0xFFFFFF;
	sa_inform_info_encode(&in, b);
	return submit(c, MAD_METHOD_SET, SA_ATTR_INFORM_INFO, 0, b,
		      sizeof(b), cb, arg);
}

void sa_cancel(struct sa_client *c, uint32_t id)
{
	struct sa_req *r;

	for (r = c->reqs; r; r = r->next) {
		if (r->id == id) {
			req_unlink(c, r);
			return;
		}
	}
}

int sa_client_refresh(struct sa_client *c)
{
	return refresh_sm(c);
}

unsigned int sa_pending(const struct sa_client *c)
{
	return c->npending;
}

void sa_client_on_notice(struct sa_client *c, sa_notice_cb cb, void *arg)
{
	c->notice_cb = cb;
	c->notice_arg = arg;
}

const char *sa_result_str(const struct sa_result *r, char *buf, size_t len)
{
	switch (r->err) {
	case SA_CLIENT_OK:
		if (!r->status)
			snprintf(buf, len, "OK");
		else
			snprintf(buf, len, "%s (0x%04x)",
				 sa_status_name(r->status), r->status);
		break;
	case SA_CLIENT_TIMEOUT:
		snprintf(buf, len, "no answer from the SA after %u tries",
			 r->tries);
		break;
	case SA_CLIENT_SEND:
		snprintf(buf, len, "cannot send to the SA: %s",
			 strerror(r->errnum));
		break;
	case SA_CLIENT_BAD_ANSWER:
		snprintf(buf, len, "malformed answer from the SA");
		break;
	case SA_CLIENT_CANCELLED:
		snprintf(buf, len, "cancelled");
		break;
	}
	return buf;
}

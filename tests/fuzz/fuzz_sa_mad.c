// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer: SA MADs must parse inside their bounds, and every record
 * handed out must decode and encode back to its own bytes (reserved bits
 * cleared), and rebuild into a MAD that parses to the same thing.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "fabric/sa_mad.h"

#define check(c)	do { if (!(c)) __builtin_trap(); } while (0)

/* reserved bits of a record: up to 8 (byte, mask) pairs, mask 0 ends */
struct rsvd {
	uint8_t off;
	uint8_t mask;
};

struct attr_case {
	uint16_t attr;
	size_t len;
	struct rsvd rsvd[8];
};

static const struct attr_case cases[] = {
	{ SA_ATTR_MCMEMBER_RECORD, SA_MCMEMBER_LEN,
	  { { 49, 0x7f }, { 50, 0xff }, { 51, 0xff } } },
	{ SA_ATTR_PATH_RECORD, SA_PATH_RECORD_LEN,
	  { { 44, 0x70 }, { 58, 0xff }, { 59, 0xff }, { 60, 0xff },
	    { 61, 0xff }, { 62, 0xff }, { 63, 0xff } } },
	{ SA_ATTR_INFORM_INFO, SA_INFORM_INFO_LEN,
	  { { 20, 0xff }, { 21, 0xff }, { 31, 0xe0 }, { 32, 0xff } } },
	{ SA_ATTR_NOTICE, SA_NOTICE_LEN, { { 0, 0 } } },
};

static const struct rsvd hdr_rsvd[] = {
	{ 18, 0xff }, { 19, 0xff }, { 46, 0xff }, { 47, 0xff }, { 0, 0 },
};

/* out must equal in with the reserved bits cleared */
static void check_same(const uint8_t *in, const uint8_t *out, size_t len,
		       const struct rsvd *rv, size_t nrv)
{
	uint8_t want[SA_DATA_LEN];
	size_t i;

	memcpy(want, in, len);
	for (i = 0; i < nrv && rv[i].mask; i++)
		want[rv[i].off] &= (uint8_t)~rv[i].mask;
	check(memcmp(want, out, len) == 0);
}

/* decoded fields never wider than their wire fields */
static void check_mcmember(const struct sa_mcmember *r)
{
	check(r->mtu_sel <= 3 && r->mtu <= 0x3f);
	check(r->rate_sel <= 3 && r->rate <= 0x3f);
	check(r->life_sel <= 3 && r->life <= 0x3f);
	check(r->sl <= 0xf && r->flow_label <= 0xfffff);
	check(r->scope <= 0xf && r->join_state <= 0xf && r->proxy_join <= 1);
}

static void check_path(const struct sa_path *r)
{
	check(r->raw_traffic <= 1 && r->flow_label <= 0xfffff);
	check(r->reversible <= 1 && r->numb_path <= 0x7f);
	check(r->qos_class <= 0xfff && r->sl <= 0xf);
	check(r->mtu_sel <= 3 && r->mtu <= 0x3f);
	check(r->rate_sel <= 3 && r->rate <= 0x3f);
	check(r->life_sel <= 3 && r->life <= 0x3f);
}

static void check_inform_info(const struct sa_inform_info *r)
{
	check(r->qpn <= 0xffffff && r->resp_time_value <= 0x1f);
	check(r->producer_type <= 0xffffff);
}

static void check_notice(const struct sa_notice *r)
{
	check(r->is_generic <= 1 && r->type <= 0x7f);
	check(r->producer_type <= 0xffffff);
	check(r->notice_toggle <= 1 && r->notice_count <= 0x7fff);
}

/* decode, encode, decode, encode: both encodings the same */
static void recode(uint16_t attr, const uint8_t *in, uint8_t *out)
{
	uint8_t again[SA_DATA_LEN];
	struct sa_mcmember mc;
	struct sa_path pr;
	struct sa_inform_info ii;
	struct sa_notice nt;
	size_t len = 0;

	switch (attr) {
	case SA_ATTR_MCMEMBER_RECORD:
		sa_mcmember_decode(in, &mc);
		check_mcmember(&mc);
		sa_mcmember_encode(&mc, out);
		(void)sa_rate_tenths_gbps(mc.rate);
		(void)sa_mgid_is_ipoib(&mc.mgid);
		sa_mcmember_decode(out, &mc);
		sa_mcmember_encode(&mc, again);
		len = SA_MCMEMBER_LEN;
		break;
	case SA_ATTR_PATH_RECORD:
		sa_path_decode(in, &pr);
		check_path(&pr);
		sa_path_encode(&pr, out);
		sa_path_decode(out, &pr);
		sa_path_encode(&pr, again);
		len = SA_PATH_RECORD_LEN;
		break;
	case SA_ATTR_INFORM_INFO:
		sa_inform_info_decode(in, &ii);
		check_inform_info(&ii);
		sa_inform_info_encode(&ii, out);
		sa_inform_info_decode(out, &ii);
		sa_inform_info_encode(&ii, again);
		len = SA_INFORM_INFO_LEN;
		break;
	case SA_ATTR_NOTICE:
		sa_notice_decode(in, &nt);
		check_notice(&nt);
		sa_notice_encode(&nt, out);
		sa_notice_decode(out, &nt);
		sa_notice_encode(&nt, again);
		len = SA_NOTICE_LEN;
		break;
	}
	check(len && memcmp(out, again, len) == 0);
}

static void check_record(const uint8_t *data, size_t size,
			 const struct sa_hdr *h, const struct attr_case *c,
			 unsigned int n)
{
	uint8_t out[SA_DATA_LEN], mad[MAD_LEN], hdr_a[SA_HDR_LEN],
		hdr_b[SA_HDR_LEN];
	enum sa_mad_err err = SA_MAD_ERR_MAX;
	struct sa_hdr h2, hx;
	const uint8_t *rec, *rec2;
	size_t stride = (size_t)h->attr_offset * 8;

	rec = sa_mad_record(data, size, h, c->attr, n, &err);
	if (!rec) {
		check(err != SA_MAD_OK && err < SA_MAD_ERR_MAX);
		if (h->mad.attr_id != c->attr)
			check(err == SA_MAD_BAD_ATTR);
		else if (stride && stride < c->len)
			check(err == SA_MAD_BAD_ATTR_OFFSET);
		else
			check(err == SA_MAD_TRUNCATED);
		return;
	}
	check(err == SA_MAD_OK);
	check(h->mad.attr_id == c->attr);
	/* where it must be, and inside the input */
	check((size_t)(rec - data) == SA_HDR_LEN + (size_t)n * stride);
	check(stride || n == 0);
	check((size_t)(rec - data) + c->len <= size);

	recode(c->attr, rec, out);
	check_same(rec, out, c->len, c->rsvd, 8);

	/* one-record MAD from the same header: parses back the same */
	sa_mad_build(h, out, c->len, mad);
	check(sa_mad_parse(mad, MAD_LEN, &h2) == SA_MAD_OK);
	hx = *h;
	if (hx.attr_offset == 0)
		hx.attr_offset = (uint16_t)((c->len + 7) / 8);
	sa_hdr_encode(&hx, hdr_a);
	sa_hdr_encode(&h2, hdr_b);
	check(memcmp(hdr_a, hdr_b, SA_HDR_LEN) == 0);
	rec2 = sa_mad_record(mad, MAD_LEN, &h2, c->attr, 0, &err);
	check(rec2 == mad + SA_HDR_LEN && err == SA_MAD_OK);
	check(memcmp(rec2, out, c->len) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t hdr[SA_HDR_LEN];
	struct sa_hdr h;
	enum sa_mad_err err;
	unsigned int i, n;

	err = sa_mad_parse(data, size, &h);
	if (size < SA_HDR_LEN) {
		check(err == SA_MAD_TRUNCATED);
		return 0;
	}
	check(err != SA_MAD_TRUNCATED && err < SA_MAD_ERR_MAX);
	check(sa_mad_strerror(err)[0] != '\0');
	if (err != SA_MAD_OK)
		return 0;

	sa_hdr_encode(&h, hdr);
	check_same(data, hdr, SA_HDR_LEN, hdr_rsvd,
		   sizeof(hdr_rsvd) / sizeof(hdr_rsvd[0]));
	check(mad_method_name(h.mad.method)[0] != '\0');
	check(sa_attr_name(h.mad.attr_id)[0] != '\0');
	check(sa_status_name(h.mad.status)[0] != '\0');

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		for (n = 0; n < 4; n++)
			check_record(data, size, &h, &cases[i], n);
	return 0;
}

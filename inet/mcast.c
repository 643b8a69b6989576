// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* IGMP and MLD membership reports (see mcast.h). */
#include <string.h>

#include "inet/byteorder.h"
#include "inet/mcast.h"

/*
 * Offsets: the group of a v1/v2 message follows the 4-byte IGMP header
 * (RFC 2236 2) or MLD's 4-byte ICMPv6 header and Maximum Response Delay
 * (RFC 2710 3); a v3 report has its record count at 6 and records from 8
 * (RFC 3376 4.2, RFC 3810 5.2), each a 4-byte header (type, aux data
 * length in 32-bit words, number of sources) and the group.
 */
#define MCAST_MSG_MIN		8
#define MCAST_NREC_OFF		6
#define MCAST_REC_OFF		8
#define MCAST_REC_HDR		4

static void mcast_group(int family, const uint8_t *p, inet_mcast_cb cb,
			void *arg, bool join)
{
	struct inet_addr g;

	/* copied out of the packet: the group may sit at any alignment */
	memset(&g, 0, sizeof(g));
	g.family = family;
	memcpy(g.raw, p, inet_addr_len(family));
	cb(arg, &g, join);
}

static enum inet_err mcast_v3(int family, const uint8_t *p, size_t len,
			      inet_mcast_cb cb, void *arg)
{
	const size_t alen = inet_addr_len(family);
	unsigned int nrec, i, nsrc;
	size_t off = MCAST_REC_OFF;
	uint8_t t;

	nrec = be16_get(p + MCAST_NREC_OFF);
	for (i = 0; i < nrec; i++) {
		if (off + MCAST_REC_HDR + alen > len)
			return INET_TRUNCATED;
		t = p[off];
		nsrc = be16_get(p + off + 2);
		if (!nsrc && (t == INET_MCAST_MODE_IS_EXCLUDE ||
			      t == INET_MCAST_TO_EXCLUDE))
			mcast_group(family, p + off + MCAST_REC_HDR, cb, arg,
				    true);
		else if (!nsrc && (t == INET_MCAST_MODE_IS_INCLUDE ||
				   t == INET_MCAST_TO_INCLUDE))
			mcast_group(family, p + off + MCAST_REC_HDR, cb, arg,
				    false);
		/* at most 4 + 16 + 16 * 65535 + 4 * 255: no overflow */
		off += MCAST_REC_HDR + alen + alen * nsrc + 4u * p[off + 1];
		if (off > len)
			return INET_MCAST_BAD_RECORD;
	}
	return INET_OK;
}

enum inet_err inet_mcast_report_parse(int family, const uint8_t *msg,
				      size_t len, inet_mcast_cb cb, void *arg)
{
	const bool v4 = family == AF_INET;
	const size_t alen = inet_addr_len(family);
	const size_t grp = v4 ? 4 : 8;
	bool join;
	uint8_t t;

	if (!alen)
		return INET_MCAST_NOT_REPORT;
	if (len < MCAST_MSG_MIN)
		return INET_TRUNCATED;
	t = msg[0];
	if (v4 ? t == INET_IGMP_V1_REPORT || t == INET_IGMP_V2_REPORT :
		 t == INET_MLD_V1_REPORT)
		join = true;
	else if (v4 ? t == INET_IGMP_V2_LEAVE : t == INET_MLD_V1_DONE)
		join = false;
	else if (v4 ? t == INET_IGMP_V3_REPORT : t == INET_MLD_V2_REPORT)
		return mcast_v3(family, msg, len, cb, arg);
	else
		return INET_MCAST_NOT_REPORT;
	if (len < grp + alen)
		return INET_TRUNCATED;
	mcast_group(family, msg + grp, cb, arg, join);
	return INET_OK;
}

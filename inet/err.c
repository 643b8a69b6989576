// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Names of inet's codec results (see err.h). */
#include "inet/err.h"

static const char *const inet_errstr[INET_ERR_MAX] = {
	[INET_OK] = "ok",
	[INET_TRUNCATED] = "truncated",
	[INET_IP_BAD_VERSION] = "ip_bad_version",
	[INET_IP_BAD_HDR_LEN] = "ip_bad_hdr_len",
	[INET_IP_BAD_LEN] = "ip_bad_len",
	[INET_NOT_ND] = "not_nd",
	[INET_ND_BAD_HOP_LIMIT] = "nd_bad_hop_limit",
	[INET_ND_BAD_CODE] = "nd_bad_code",
	[INET_ND_BAD_CSUM] = "nd_bad_csum",
	[INET_ND_SHORT] = "nd_short",
	[INET_ND_OPT_ZERO_LEN] = "nd_opt_zero_len",
	[INET_ND_OPT_OVERRUN] = "nd_opt_overrun",
	[INET_ND_BAD_LLA_LEN] = "nd_bad_lla_len",
	[INET_ND_MCAST_TARGET] = "nd_mcast_target",
	[INET_ND_BAD_DAD] = "nd_bad_dad",
	[INET_ND_MCAST_SOLICITED] = "nd_mcast_solicited",
	[INET_ND_BAD_SOURCE] = "nd_bad_source",
	[INET_NO_ROOM] = "no_room",
	[INET_ICMP_ABOUT_ERROR] = "icmp_about_error",
	[INET_ICMP_FRAGMENT] = "icmp_fragment",
	[INET_ICMP_BAD_ADDR] = "icmp_bad_addr",
	[INET_IP_LATER_FRAGMENT] = "ip_later_fragment",
	[INET_MCAST_NOT_REPORT] = "mcast_not_report",
	[INET_MCAST_BAD_RECORD] = "mcast_bad_record",
};

const char *inet_strerror(enum inet_err err)
{
	if ((unsigned int)err >= INET_ERR_MAX)
		return "unknown";
	return inet_errstr[err];
}

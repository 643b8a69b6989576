// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Least privilege for ibgwd: once its interfaces, sockets and links are
 * set up, it keeps only what run-time changes need -- CAP_NET_ADMIN (taps,
 * interfaces, addresses, bridges, forwarding switches) and, on the verbs
 * provider, CAP_IPC_LOCK (registered memory for new queue pairs) -- and
 * drops every other capability from its effective, permitted, inheritable
 * and bounding sets, so that neither it nor anything it could exec gets
 * them back.  Raw capget/capset: no libcap dependency.
 */
#include <errno.h>
#include <linux/capability.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "gateway/ibgwd.h"

static unsigned int last_cap(void)
{
	unsigned int n = 40;
	FILE *f = fopen("/proc/sys/kernel/cap_last_cap", "r");

	if (f) {
		if (fscanf(f, "%u", &n) != 1)
			n = 40;
		fclose(f);
	}
	return n > 63 ? 63 : n;
}

int gw_drop_caps(int keep_ipc_lock, char *err, size_t errlen)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
	struct __user_cap_data_struct c[2];
	uint64_t keep = 1ull << CAP_NET_ADMIN, perm;
	unsigned int i, last = last_cap();

	if (keep_ipc_lock)
		keep |= 1ull << CAP_IPC_LOCK;
	memset(c, 0, sizeof(c));
	if (syscall(SYS_capget, &h, c) < 0) {
		snprintf(err, errlen, "capget: %s", strerror(errno));
		return -1;
	}
	perm = (uint64_t)c[0].permitted | (uint64_t)c[1].permitted << 32;
	keep &= perm;
	/*
	 * The bounding set first: dropping needs CAP_SETPCAP, which goes
	 * next.  Without it -- systemd's CapabilityBoundingSet= leaves it
	 * out -- the bounding set stays the one we were given, already
	 * bounded, and with NoNewPrivileges nothing exec'd could use it.
	 */
	for (i = 0; i <= last && (perm >> CAP_SETPCAP & 1); i++)
		if (!(keep >> i & 1) &&
		    prctl(PR_CAPBSET_READ, i, 0, 0, 0) == 1 &&
		    prctl(PR_CAPBSET_DROP, i, 0, 0, 0) < 0 && errno != EINVAL) {
			snprintf(err, errlen, "drop capability %u from the "
				 "bounding set: %s", i, strerror(errno));
			return -1;
		}
	c[0].effective = c[0].permitted = (uint32_t)keep;
	c[1].effective = c[1].permitted = (uint32_t)(keep >> 32);
	c[0].inheritable = c[1].inheritable = 0;
	if (syscall(SYS_capset, &h, c) < 0) {
		snprintf(err, errlen, "capset: %s", strerror(errno));
		return -1;
	}
	return 0;
}

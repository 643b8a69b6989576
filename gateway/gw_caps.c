// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Least privilege for ibgwd: once its interfaces, sockets and links are
 * set up, it keeps only what run-time changes need -- CAP_NET_ADMIN (taps,
 * interfaces, addresses, bridges, forwarding switches),
 * CAP_NET_BIND_SERVICE (a partition added or restarted by a reload binds
 * its SDP and RDS exports, which may be below 1024, as at start) and, on
 * the verbs provider, CAP_IPC_LOCK (registered memory for new queue
 * pairs) -- and
 * drops every other capability from its effective, permitted, inheritable,
 * ambient and bounding sets, so that neither it nor anything it could exec
 * gets them back.  libcap-ng does the work: it knows the kernel's last
 * capability and drops the bounding set while CAP_SETPCAP is still held.
 * Without CAP_SETPCAP -- systemd's CapabilityBoundingSet= leaves it out --
 * the bounding set stays the one we were given, already bounded, and with
 * NoNewPrivileges nothing exec'd could use it.
 *
 * On verbs the drop comes before set-up, before the fabric is opened: the
 * kernel's rdma_cm refuses every write to /dev/infiniband/rdma_cm from a
 * process whose credentials changed after it opened the file (ucma_write:
 * ib_safe_file_access, "changed security contexts after opening file
 * descriptor"), and a capset is such a change.  So set-up's own needs are
 * kept too there: CAP_NET_RAW (the trunk's packet socket).
 */
#include <cap-ng.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "gateway/ibgwd.h"

int gw_drop_caps(int verbs, char *err, size_t errlen)
{
	const capng_type_t all = CAPNG_EFFECTIVE | CAPNG_PERMITTED |
				 CAPNG_BOUNDING_SET;
	int admin, lock, raw, bind, setpcap, rc;

	if (capng_get_caps_process() < 0) {
		snprintf(err, errlen, "read capabilities: %s", strerror(errno));
		return -1;
	}
	/* keep only what we hold: never ask for a capability we lack */
	admin = capng_have_capability(CAPNG_PERMITTED, CAP_NET_ADMIN);
	lock = verbs && capng_have_capability(CAPNG_PERMITTED, CAP_IPC_LOCK);
	raw = verbs && capng_have_capability(CAPNG_PERMITTED, CAP_NET_RAW);
	bind = capng_have_capability(CAPNG_PERMITTED, CAP_NET_BIND_SERVICE);
	setpcap = capng_have_capability(CAPNG_EFFECTIVE, CAP_SETPCAP);
	capng_clear(CAPNG_SELECT_ALL);
	if ((admin && capng_update(CAPNG_ADD, all, CAP_NET_ADMIN) < 0) ||
	    (lock && capng_update(CAPNG_ADD, all, CAP_IPC_LOCK) < 0) ||
	    (raw && capng_update(CAPNG_ADD, all, CAP_NET_RAW) < 0) ||
	    (bind && capng_update(CAPNG_ADD, all, CAP_NET_BIND_SERVICE) < 0)) {
		snprintf(err, errlen, "capng_update failed");
		return -1;
	}
	errno = 0;
	rc = capng_apply(setpcap ? CAPNG_SELECT_ALL :
			 CAPNG_SELECT_CAPS | CAPNG_SELECT_AMBIENT);
	if (rc < 0) {
		/* its return codes name the step, and differ by version */
		snprintf(err, errlen, "capng_apply: step %d failed: %s", rc,
			 errno ? strerror(errno) : "no reason given");
		return -1;
	}
	return 0;
}

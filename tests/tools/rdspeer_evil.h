/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * rdspeer's hostile peer (--evil MODE): RDS/IB on the raw fabric API,
 * each mode one way of breaking the rules the kernel's RDS/IB enforces.
 */
#ifndef IBGW_TESTS_RDSPEER_EVIL_H
#define IBGW_TESTS_RDSPEER_EVIL_H

#include <stdbool.h>
#include <stdint.h>

#include "fabric/fabric.h"
#include "inet/addr.h"

struct rdspeer_evil {
	struct fab_dev *dev;
	const char *mode;
	struct inet_addr laddr, faddr;
	union fab_gid gid;
	uint16_t lid;
	uint16_t port;		/* the victim's RDS port for data (0: 4000) */
	double timeout_s;
	int verbose;
	bool soft;		/* write the cma_hdr */
};

/* 0: the victim behaved (rejected or dropped us as it should); 1 not;
 * 2 usage. */
int rdspeer_evil_run(const struct rdspeer_evil *e);

#endif

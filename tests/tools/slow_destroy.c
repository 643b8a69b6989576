// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libslow_destroy.so: LD_PRELOADed into a daemon of the guest tier, it
 * makes ibv_destroy_qp of the process's first SLOW_DESTROY_N (default 1)
 * RC queue pairs take SLOW_DESTROY_S seconds (default 15) before the
 * real one, as Linux 6.1's rxe does for up to 50 s when its retry path
 * left references on a queue pair (rxe_pool.c, __rxe_cleanup).
 * tests/vm/rds_slow_destroy.sh shows that the daemon answers its peers
 * meanwhile.  Each delayed destroy is written to stderr ("slow_destroy:
 * ...") so that the test can see it happened.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <infiniband/verbs.h>

int ibv_destroy_qp(struct ibv_qp *qp)
{
	static int (*real)(struct ibv_qp *);
	static int done;	/* slow ones so far */
	const char *s = getenv("SLOW_DESTROY_S");
	const char *n = getenv("SLOW_DESTROY_N");
	struct timespec t = { s ? atoi(s) : 15, 0 };

	if (!real)
		real = (int (*)(struct ibv_qp *))dlvsym(RTLD_NEXT,
							"ibv_destroy_qp",
							"IBVERBS_1.1");
	if (!real)
		real = (int (*)(struct ibv_qp *))dlsym(RTLD_NEXT,
						       "ibv_destroy_qp");
	if (!real)
		abort();
	if (qp->qp_type == IBV_QPT_RC &&
	    __atomic_fetch_add(&done, 1, __ATOMIC_SEQ_CST) < (n ? atoi(n) : 1)) {
		fprintf(stderr, "slow_destroy: QP %u: %ld s\n", qp->qp_num,
			(long)t.tv_sec);
		while (nanosleep(&t, &t) < 0)
			;
		fprintf(stderr, "slow_destroy: QP %u: destroying\n",
			qp->qp_num);
	}
	return real(qp);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The fabric interface's RC and CM calls (fabric/fabric.c) on a provider
 * without them: the in-memory one (tests/unit/prov_mem.c) fails each with
 * EOPNOTSUPP and a reason naming it, and the checks that need no
 * provider (QP type, access flags, names) hold.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "fabric/fabric.h"
#include "tests/unit/prov_mem.h"

static int setup(void **state)
{
	char err[FAB_ERRLEN];

	mem_register();
	*state = fab_open("mem:", NULL, err, sizeof(err));
	return *state ? 0 : -1;
}

static int teardown(void **state)
{
	fab_close(*state);
	return 0;
}

static void test_mr_unsupported(void **state)
{
	char err[FAB_ERRLEN], buf[64];

	errno = 0;
	assert_null(fab_mr_reg(*state, buf, sizeof(buf),
			       FAB_ACCESS_LOCAL_WRITE, err, sizeof(err)));
	assert_int_equal(errno, EOPNOTSUPP);
	assert_non_null(strstr(err, "mem"));
}

static void test_cm_unsupported(void **state)
{
	struct fab_cm_addr a = { .service_id = FAB_CM_SID_TCP(7471) };
	struct fab_cm_event ev;
	char err[FAB_ERRLEN];

	errno = 0;
	assert_null(fab_cm_listen(*state, &a, 0, NULL, err, sizeof(err)));
	assert_int_equal(errno, EOPNOTSUPP);
	errno = 0;
	assert_null(fab_cm_create_id(*state, NULL, err, sizeof(err)));
	assert_int_equal(errno, EOPNOTSUPP);
	errno = 0;
	assert_int_equal(fab_cm_fd(*state), -1);
	assert_int_equal(errno, EOPNOTSUPP);
	errno = 0;
	assert_int_equal(fab_cm_get_event(*state, &ev), -1);
	assert_int_equal(errno, EOPNOTSUPP);
}

static void test_rc_qp_type(void **state)
{
	struct fab_qp_init init = { .type = FAB_QPT_RC };
	char err[FAB_ERRLEN];

	errno = 0;
	assert_null(fab_qp_create(*state, &init, err, sizeof(err)));
	assert_int_equal(errno, EINVAL);
	assert_non_null(strstr(err, "fab_cm_qp_create"));
}

static void test_rc_ops_on_ud(void **state)
{
	struct fab_qp_init init = { .type = FAB_QPT_UD, .qkey = 0x11 };
	struct fab_wc wc;
	char err[FAB_ERRLEN];
	struct fab_qp *qp = fab_qp_create(*state, &init, err, sizeof(err));

	assert_non_null(qp);
	errno = 0;
	assert_int_equal(fab_qp_poll(qp, &wc, 1), -1);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(fab_qp_set_error(qp), -1);
	assert_int_equal(errno, EINVAL);
	fab_qp_destroy(qp);
}

static void test_names(void **state)
{
	(void)state;
	assert_string_equal(fab_wc_status_name(FAB_WC_WR_FLUSH_ERR),
			    "work request flushed");
	assert_string_equal(fab_wc_status_name((enum fab_wc_status)99),
			    "unknown status");
	assert_string_equal(fab_cm_event_name(FAB_CM_EV_REJECTED),
			    "REJECTED");
	assert_int_equal(FAB_CM_SID_TCP(7471), 0x0000000001061d2full);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_mr_unsupported, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_cm_unsupported, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_rc_qp_type, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_rc_ops_on_ud, setup,
						teardown),
		cmocka_unit_test(test_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

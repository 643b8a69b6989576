// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unit tests for conf/notify.c: messages reach a datagram socket named by
 * $NOTIFY_SOCKET (a path, or "@name" in the abstract namespace), nothing
 * happens without it, bad names fail with errno and a reason, and the
 * watchdog interval is read for this process only.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "conf/notify.h"

static char dir[64];

static int group_setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/test_notify.XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int group_teardown(void **state)
{
	char p[128];

	(void)state;
	snprintf(p, sizeof(p), "%s/n.sock", dir);
	unlink(p);
	return rmdir(dir);
}

/* A datagram socket bound at name (a path, or "@x": abstract). */
static int listener(const char *name)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) +
				    strlen(name));
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK, 0);

	assert_true(fd >= 0);
	memcpy(sa.sun_path, name, strlen(name));
	if (name[0] == '@')
		sa.sun_path[0] = '\0';
	unlink(name);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, len), 0);
	return fd;
}

static void expect_msg(int fd, const char *want)
{
	char buf[2048];
	ssize_t n = recv(fd, buf, sizeof(buf) - 1, 0);

	assert_true(n >= 0);
	buf[n] = '\0';
	assert_string_equal(buf, want);
}

static void test_path(void **state)
{
	char err[256], p[128];
	int fd;

	(void)state;
	snprintf(p, sizeof(p), "%s/n.sock", dir);
	fd = listener(p);
	setenv("NOTIFY_SOCKET", p, 1);
	assert_int_equal(notify_send(err, sizeof(err), "READY=1\nSTATUS=%u "
				     "of %u", 1u, 2u), 1);
	expect_msg(fd, "READY=1\nSTATUS=1 of 2");
	assert_int_equal(notify_send(err, sizeof(err), "WATCHDOG=1"), 1);
	expect_msg(fd, "WATCHDOG=1");
	close(fd);
	unsetenv("NOTIFY_SOCKET");
}

static void test_abstract(void **state)
{
	char err[256], name[64];
	int fd;

	(void)state;
	snprintf(name, sizeof(name), "@ibgw-test-notify-%d", (int)getpid());
	fd = listener(name);
	setenv("NOTIFY_SOCKET", name, 1);
	assert_int_equal(notify_send(err, sizeof(err), "STOPPING=1"), 1);
	expect_msg(fd, "STOPPING=1");
	close(fd);
	unsetenv("NOTIFY_SOCKET");
}

static void test_unset(void **state)
{
	char err[16] = "";

	(void)state;
	unsetenv("NOTIFY_SOCKET");
	assert_int_equal(notify_send(err, sizeof(err), "READY=1"), 0);
	setenv("NOTIFY_SOCKET", "", 1);
	assert_int_equal(notify_send(err, sizeof(err), "READY=1"), 0);
	assert_string_equal(err, "");
	unsetenv("NOTIFY_SOCKET");
}

static void test_bad_names(void **state)
{
	char err[256], longp[200];

	(void)state;
	memset(longp, 'x', sizeof(longp) - 1);
	longp[0] = '/';
	longp[sizeof(longp) - 1] = '\0';
	setenv("NOTIFY_SOCKET", longp, 1);
	assert_int_equal(notify_send(err, sizeof(err), "READY=1"), -1);
	assert_int_equal(errno, ENAMETOOLONG);
	assert_non_null(strstr(err, "too long"));
	setenv("NOTIFY_SOCKET", "vsock:2:1234", 1);
	assert_int_equal(notify_send(err, sizeof(err), "READY=1"), -1);
	assert_int_equal(errno, EAFNOSUPPORT);
	setenv("NOTIFY_SOCKET", "@", 1);
	assert_int_equal(notify_send(err, sizeof(err), "READY=1"), -1);
	assert_int_equal(errno, EINVAL);
	/* nobody listening: what sendto said, with the path */
	snprintf(longp, sizeof(longp), "%s/none.sock", dir);
	setenv("NOTIFY_SOCKET", longp, 1);
	assert_int_equal(notify_send(err, sizeof(err), "READY=1"), -1);
	assert_int_equal(errno, ENOENT);
	assert_non_null(strstr(err, "none.sock"));
	unsetenv("NOTIFY_SOCKET");
}

static void test_watchdog(void **state)
{
	char pid[32];

	(void)state;
	unsetenv("WATCHDOG_PID");
	unsetenv("WATCHDOG_USEC");
	assert_int_equal(notify_watchdog_usec(), 0);
	setenv("WATCHDOG_USEC", "2000000", 1);
	assert_int_equal(notify_watchdog_usec(), 2000000);
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	setenv("WATCHDOG_PID", pid, 1);
	assert_int_equal(notify_watchdog_usec(), 2000000);
	snprintf(pid, sizeof(pid), "%d", (int)getpid() + 1);
	setenv("WATCHDOG_PID", pid, 1);
	assert_int_equal(notify_watchdog_usec(), 0);	/* another's */
	unsetenv("WATCHDOG_PID");
	setenv("WATCHDOG_USEC", "0", 1);
	assert_int_equal(notify_watchdog_usec(), 0);
	setenv("WATCHDOG_USEC", "10s", 1);
	assert_int_equal(notify_watchdog_usec(), 0);
	setenv("WATCHDOG_USEC", "-5", 1);
	assert_int_equal(notify_watchdog_usec(), 0);
	unsetenv("WATCHDOG_USEC");
	assert_true(notify_monotonic_usec() > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_path),
		cmocka_unit_test(test_abstract),
		cmocka_unit_test(test_unset),
		cmocka_unit_test(test_bad_names),
		cmocka_unit_test(test_watchdog),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}

/* Tests of platform/notify: the service manager's datagrams as a receiver bound where
 * NOTIFY_SOCKET points gets them (a path, and the abstract namespace), the watchdog's
 * interval read for this process only and fed once a quarter of it, the variables taken
 * out of the environment, and every call a no-op without a manager or with a bad
 * NOTIFY_SOCKET. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "platform/notify.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* A receiver bound at name ("@x": abstract), non-blocking. */
static int receiver(const char *name)
{
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	size_t n = strlen(name);
	assert_true(n < sizeof(a.sun_path));
	memcpy(a.sun_path, name, n);
	if (name[0] == '@')
		a.sun_path[0] = '\0';
	else
		unlink(name);
	assert_int_equal(
	    bind(fd, (struct sockaddr *)&a, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n)),
	    0);
	return fd;
}

/* The next datagram, "" when none is waiting. */
static const char *take(int fd)
{
	static char buf[512];
	ssize_t n = recv(fd, buf, sizeof(buf) - 1, 0);
	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

static void env(const char *sock, const char *usec, const char *pid)
{
	if (sock)
		setenv("NOTIFY_SOCKET", sock, 1);
	else
		unsetenv("NOTIFY_SOCKET");
	if (usec)
		setenv("WATCHDOG_USEC", usec, 1);
	else
		unsetenv("WATCHDOG_USEC");
	if (pid)
		setenv("WATCHDOG_PID", pid, 1);
	else
		unsetenv("WATCHDOG_PID");
}

static void test_path_socket(void **state)
{
	(void)state;
	char path[64];
	snprintf(path, sizeof(path), "/tmp/floe-test-notify.%d", (int)getpid());
	int fd = receiver(path);
	char pid[24];
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	env(path, "400000", pid);
	assert_int_equal(floe_notify_init(), 0);
	/* Taken out of the environment. */
	assert_null(getenv("NOTIFY_SOCKET"));
	assert_null(getenv("WATCHDOG_USEC"));
	assert_null(getenv("WATCHDOG_PID"));
	assert_int_equal(floe_notify_watchdog_us(), 400000);
	assert_int_equal(floe_notify("READY=1\nSTATUS=up"), 0);
	assert_string_equal(take(fd), "READY=1\nSTATUS=up");
	/* Fed at once, then not again within a quarter of the interval (100 ms)... */
	floe_notify_watchdog();
	assert_string_equal(take(fd), "WATCHDOG=1");
	floe_notify_watchdog();
	floe_notify_watchdog();
	assert_string_equal(take(fd), "");
	/* ...and again after it. */
	struct timespec ts = {0, 120 * 1000 * 1000};
	nanosleep(&ts, NULL);
	floe_notify_watchdog();
	assert_string_equal(take(fd), "WATCHDOG=1");
	floe_notify_fini();
	/* After fini: nothing is sent. */
	assert_int_equal(floe_notify("STOPPING=1"), 0);
	floe_notify_watchdog();
	assert_string_equal(take(fd), "");
	close(fd);
	unlink(path);
}

static void test_abstract_socket(void **state)
{
	(void)state;
	char name[64];
	snprintf(name, sizeof(name), "@floe-test-notify-%d", (int)getpid());
	int fd = receiver(name);
	env(name, NULL, NULL);
	assert_int_equal(floe_notify_init(), 0);
	assert_int_equal(floe_notify_watchdog_us(), 0); /* no watchdog asked for */
	floe_notify_watchdog();
	assert_string_equal(take(fd), "");
	assert_int_equal(floe_notify("RELOADING=1"), 0);
	assert_string_equal(take(fd), "RELOADING=1");
	floe_notify_fini();
	close(fd);
}

static void test_watchdog_not_ours(void **state)
{
	(void)state;
	char name[64];
	snprintf(name, sizeof(name), "@floe-test-notify-pid-%d", (int)getpid());
	int fd = receiver(name);
	/* Another process's watchdog (a pid that is not this one), and garbage. */
	char other[24];
	snprintf(other, sizeof(other), "%d", (int)getpid() + 1);
	env(name, "1000000", other);
	assert_int_equal(floe_notify_init(), 0);
	assert_int_equal(floe_notify_watchdog_us(), 0);
	const char *bad[] = {"", "-5", "12x", "99999999999999999999999", "0"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		env(name, bad[i], NULL);
		assert_int_equal(floe_notify_init(), 0);
		assert_int_equal(floe_notify_watchdog_us(), 0);
	}
	floe_notify_watchdog();
	assert_string_equal(take(fd), "");
	floe_notify_fini();
	close(fd);
}

static void test_no_manager(void **state)
{
	(void)state;
	env(NULL, "1000000", NULL);
	assert_int_equal(floe_notify_init(), 0);
	assert_int_equal(floe_notify_watchdog_us(), 0); /* nobody to feed */
	assert_int_equal(floe_notify("READY=1"), 0);
	floe_notify_watchdog();
	/* Unusable: a relative path, one too long for a socket address. */
	env("relative/path", NULL, NULL);
	assert_int_equal(floe_notify_init(), -EINVAL);
	assert_int_equal(floe_notify("READY=1"), 0);
	char longp[200];
	memset(longp, 'a', sizeof(longp) - 1);
	longp[0] = '/';
	longp[sizeof(longp) - 1] = '\0';
	env(longp, "1000000", NULL);
	assert_int_equal(floe_notify_init(), -EINVAL);
	assert_int_equal(floe_notify_watchdog_us(), 0);
	assert_null(getenv("NOTIFY_SOCKET"));
	/* A socket nobody listens on: the send fails, and says so. */
	env("/tmp/floe-test-notify-nobody", NULL, NULL);
	unlink("/tmp/floe-test-notify-nobody");
	assert_int_equal(floe_notify_init(), 0);
	assert_true(floe_notify("READY=1") < 0);
	floe_notify_fini();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_path_socket),
	    cmocka_unit_test(test_abstract_socket),
	    cmocka_unit_test(test_watchdog_not_ours),
	    cmocka_unit_test(test_no_manager),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* The service manager's notification protocol (platform/notify.h). */
#include "notify.h"

#include "clock.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static struct {
	int fd;
	struct sockaddr_un addr;
	socklen_t addr_len;
	int64_t watchdog_us;
	int64_t last_pet_us;
} N = {.fd = -1};

/* WATCHDOG_USEC: decimal µs, > 0. A bad value means no watchdog. */
static int64_t parse_usec(const char *s)
{
	if (!s || !*s)
		return 0;
	int64_t v = 0;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || v > (INT64_MAX - 9) / 10)
			return 0;
		v = v * 10 + (*s - '0');
	}
	return v;
}

int floe_notify_init(void)
{
	floe_notify_fini();
	const char *sock = getenv("NOTIFY_SOCKET");
	const char *wd = getenv("WATCHDOG_USEC");
	const char *wd_pid = getenv("WATCHDOG_PID");
	int64_t us = parse_usec(wd);
	/* The watchdog is this process's only when WATCHDOG_PID is unset or names it. */
	if (us > 0 && wd_pid && *wd_pid && parse_usec(wd_pid) != (int64_t)getpid())
		us = 0;
	int rc = 0;
	if (sock && *sock) {
		size_t n = strlen(sock);
		memset(&N.addr, 0, sizeof(N.addr));
		N.addr.sun_family = AF_UNIX;
		if ((sock[0] != '/' && sock[0] != '@') || n >= sizeof(N.addr.sun_path)) {
			rc = -EINVAL;
		} else {
			memcpy(N.addr.sun_path, sock, n);
			if (sock[0] == '@')
				N.addr.sun_path[0] = '\0'; /* the abstract namespace */
			N.addr_len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
			N.fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
			if (N.fd < 0)
				rc = -errno;
		}
	}
	N.watchdog_us = N.fd >= 0 ? us : 0;
	unsetenv("NOTIFY_SOCKET");
	unsetenv("WATCHDOG_USEC");
	unsetenv("WATCHDOG_PID");
	return rc;
}

int floe_notify(const char *state)
{
	if (N.fd < 0 || !state)
		return 0;
	ssize_t n;
	do
		n = sendto(N.fd, state, strlen(state), MSG_NOSIGNAL, (const struct sockaddr *)&N.addr,
			   N.addr_len);
	while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : 0;
}

int64_t floe_notify_watchdog_us(void)
{
	return N.watchdog_us;
}

void floe_notify_watchdog(void)
{
	if (N.watchdog_us <= 0)
		return;
	/* A quarter: the manager wants one within every interval, and a turn of the loop may
	 * come a little late. A failed send is not tried again before the next quarter
	 * either: a manager that went away is not asked on every turn. */
	int64_t now_us = floe_clock_mono_ns() / 1000;
	if (N.last_pet_us && now_us - N.last_pet_us < N.watchdog_us / 4)
		return;
	N.last_pet_us = now_us;
	(void)floe_notify("WATCHDOG=1");
}

void floe_notify_abandon(int code)
{
	(void)floe_notify("STATUS=a thread is stuck: exiting for a restart");
	_exit(code);
}

void floe_notify_fini(void)
{
	if (N.fd >= 0)
		close(N.fd);
	N.fd = -1;
	N.watchdog_us = 0;
	N.last_pet_us = 0;
}

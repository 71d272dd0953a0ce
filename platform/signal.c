/* Signal flags: the handlers only store to lock-free atomics. Other threads read them
 * too (the committer's S3 requests give up within the stop grace), which a volatile
 * sig_atomic_t does not allow: it is safe only between a handler and the thread it
 * interrupted. */
#include "signal.h"

#include <errno.h>
#include <stdint.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int stop_requested;
static int hangup;
/* When the first stop signal arrived (CLOCK_MONOTONIC, ns), published before the flag.
 * clock_gettime is async-signal-safe, and a lock-free 64-bit atomic store is too (also on
 * armhf, which has 64-bit exclusive stores). */
static int64_t stop_at_ns;
/* Written by the handlers after their flag (floe_signal_wake_fd); -1: none. */
static int wake_fd = -1;

static int64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* write() is async-signal-safe; errno is the interrupted code's and is kept. */
static void wake(void)
{
	int fd = __atomic_load_n(&wake_fd, __ATOMIC_ACQUIRE);
	if (fd < 0)
		return;
	int saved = errno;
	uint64_t one = 1;
	/* A full counter (EAGAIN) means a wake-up is pending anyway. */
	(void)!write(fd, &one, sizeof(one));
	errno = saved;
}

static void on_stop(int sig)
{
	(void)sig;
	if (!__atomic_load_n(&stop_requested, __ATOMIC_RELAXED))
		__atomic_store_n(&stop_at_ns, mono_ns(), __ATOMIC_RELEASE);
	__atomic_store_n(&stop_requested, 1, __ATOMIC_RELEASE);
	wake();
}

static void on_hangup(int sig)
{
	(void)sig;
	__atomic_store_n(&hangup, 1, __ATOMIC_RELEASE);
	wake();
}

void floe_signal_wake_fd(int fd)
{
	__atomic_store_n(&wake_fd, fd, __ATOMIC_RELEASE);
}

int floe_signal_install(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGINT, &sa, NULL) || sigaction(SIGTERM, &sa, NULL))
		return -errno;
	sa.sa_handler = on_hangup;
	if (sigaction(SIGHUP, &sa, NULL))
		return -errno;
	sa.sa_handler = SIG_IGN;
	if (sigaction(SIGPIPE, &sa, NULL))
		return -errno;
	return 0;
}

bool floe_signal_take_hangup(void)
{
	return __atomic_exchange_n(&hangup, 0, __ATOMIC_ACQ_REL) != 0;
}

bool floe_signal_stop_requested(void)
{
	return __atomic_load_n(&stop_requested, __ATOMIC_ACQUIRE) != 0;
}

int64_t floe_signal_stop_age_ms(void)
{
	if (!floe_signal_stop_requested())
		return -1;
	int64_t at = __atomic_load_n(&stop_at_ns, __ATOMIC_ACQUIRE);
	if (at == 0)
		return 0; /* not expected (the flag's release publishes the time): just now */
	int64_t age = (mono_ns() - at) / 1000000;
	return age < 0 ? 0 : age;
}

void floe_signal_sleep_ms(unsigned ms)
{
	while (ms > 0 && !floe_signal_stop_requested()) {
		unsigned step = ms > 50 ? 50 : ms;
		struct timespec ts = {0, (long)step * 1000000L};
		nanosleep(&ts, NULL);
		ms -= step;
	}
}

/* Signal flag: the handler only stores to a sig_atomic_t. */
#include "signal.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <time.h>

static volatile sig_atomic_t stop_requested;
static volatile sig_atomic_t hangup;

static void on_stop(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static void on_hangup(int sig)
{
	(void)sig;
	hangup = 1;
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
	if (!hangup)
		return false;
	hangup = 0;
	return true;
}

bool floe_signal_stop_requested(void)
{
	return stop_requested != 0;
}

void floe_signal_sleep_ms(unsigned ms)
{
	while (ms > 0 && !stop_requested) {
		unsigned step = ms > 50 ? 50 : ms;
		struct timespec ts = {0, (long)step * 1000000L};
		nanosleep(&ts, NULL);
		ms -= step;
	}
}

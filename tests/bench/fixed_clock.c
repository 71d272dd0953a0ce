/* A fixed wall clock, preloaded (LD_PRELOAD) into floe by same_files.sh so that two
 * builds write the same `received_at`, snapshot times and file names from the same
 * input: CLOCK_REALTIME, gettimeofday and time always read 2026-11-30T00:53:20.123456Z.
 * The monotonic clocks (timers, rates) are left as they are. Not part of floe. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <sys/time.h>
#include <time.h>

#define FIXED_S 1796000000
#define FIXED_US 123456

static int (*real_clock_gettime)(clockid_t, struct timespec *);

int clock_gettime(clockid_t c, struct timespec *ts)
{
	if (c == CLOCK_REALTIME || c == CLOCK_REALTIME_COARSE) {
		ts->tv_sec = FIXED_S;
		ts->tv_nsec = FIXED_US * 1000L;
		return 0;
	}
	if (!real_clock_gettime)
		real_clock_gettime = (int (*)(clockid_t, struct timespec *))dlsym(RTLD_NEXT, "clock_gettime");
	return real_clock_gettime(c, ts);
}

int gettimeofday(struct timeval *restrict tv, void *restrict tz)
{
	(void)tz;
	tv->tv_sec = FIXED_S;
	tv->tv_usec = FIXED_US;
	return 0;
}

time_t time(time_t *t)
{
	if (t)
		*t = FIXED_S;
	return FIXED_S;
}

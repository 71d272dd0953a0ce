/* The wall clock as a test wants it, preloaded (LD_PRELOAD) into floe; not part of floe.
 * CLOCK_REALTIME (and its coarse reading), gettimeofday and time:
 * - FLOE_TEST_CLOCK_AT=SECONDS.MICROSECONDS: always that instant, so that two builds
 *   write the same received_at, snapshot times and file names (tests/bench/same_files.sh);
 * - FLOE_TEST_CLOCK_FILE=PATH: the real clock shifted by the seconds PATH holds when it is
 *   read, so that a test steps a running agent's clock back or forward as NTP or an
 *   operator would (tests/integration/lib.sh, clock_shim).
 * The monotonic clocks (timers, rates) are left as they are. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>
#include <time.h>

static int (*real_clock_gettime)(clockid_t, struct timespec *);

/* The fixed instant, when FLOE_TEST_CLOCK_AT gives one. */
static int fixed(struct timespec *ts)
{
	const char *at = getenv("FLOE_TEST_CLOCK_AT");
	long s = 0, us = 0;
	if (!at || sscanf(at, "%ld.%ld", &s, &us) < 1)
		return 0;
	ts->tv_sec = s;
	ts->tv_nsec = us * 1000L;
	return 1;
}

static long offset_s(void)
{
	const char *name = getenv("FLOE_TEST_CLOCK_FILE");
	FILE *f = name ? fopen(name, "r") : NULL;
	long o = 0;
	if (f) {
		if (fscanf(f, "%ld", &o) != 1)
			o = 0;
		fclose(f);
	}
	return o;
}

int clock_gettime(clockid_t c, struct timespec *ts)
{
	if ((c == CLOCK_REALTIME || c == CLOCK_REALTIME_COARSE) && fixed(ts))
		return 0;
	if (!real_clock_gettime)
		real_clock_gettime = (int (*)(clockid_t, struct timespec *))dlsym(RTLD_NEXT, "clock_gettime");
	int rc = real_clock_gettime(c, ts);
	if (rc == 0 && (c == CLOCK_REALTIME || c == CLOCK_REALTIME_COARSE))
		ts->tv_sec += offset_s();
	return rc;
}

int gettimeofday(struct timeval *restrict tv, void *restrict tz)
{
	struct timespec ts;
	(void)tz;
	clock_gettime(CLOCK_REALTIME, &ts);
	tv->tv_sec = ts.tv_sec;
	tv->tv_usec = ts.tv_nsec / 1000;
	return 0;
}

time_t time(time_t *t)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	if (t)
		*t = ts.tv_sec;
	return ts.tv_sec;
}

/* The wall clock shifted by a number of seconds read from the file FLOE_TEST_CLOCK_FILE
 * names at every reading, preloaded (LD_PRELOAD) into floe by test_clock_step.sh, so
 * that the test can step the clock of a running agent back or forward as NTP or an
 * operator would: CLOCK_REALTIME, gettimeofday and time. The monotonic clocks are left
 * as they are. Not part of floe. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>
#include <time.h>

static int (*real_clock_gettime)(clockid_t, struct timespec *);

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

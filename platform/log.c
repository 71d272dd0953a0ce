/* stderr logger: one line per message, written with a single fprintf so that lines from
 * different threads do not interleave. */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <time.h>

/* The one process-wide setting: a log threshold chosen by the CLI before any thread
 * starts, never written afterwards. */
static enum floe_log_level threshold = FLOE_LOG_INFO;

void floe_log_set_level(enum floe_log_level level)
{
	threshold = level;
}

void floe_log(enum floe_log_level level, const char *fmt, ...)
{
	static const char *const names[] = {"debug", "info", "warn", "error"};
	if (level < threshold)
		return;
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	struct tm tm;
	gmtime_r(&ts.tv_sec, &tm);
	fprintf(stderr, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ floe %s: %s\n", tm.tm_year + 1900,
		tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000,
		names[level], msg);
}

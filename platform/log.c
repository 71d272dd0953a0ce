/* stderr logger: one line per message, written with a single call so that lines from
 * different threads do not interleave. */
#include "log.h"

#include "formats/base/utf8.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The process-wide settings: a log threshold and a format chosen by the CLI before any
 * thread starts, never written afterwards. */
static enum floe_log_level threshold = FLOE_LOG_INFO;
static enum floe_log_format format = FLOE_LOG_TEXT;

/* The status line shown at the bottom of a terminal ("" when none), and the lock that
 * keeps its drawing and the log lines written between two of its updates in order. */
static pthread_mutex_t status_lock = PTHREAD_MUTEX_INITIALIZER;
static char status[FLOE_LOG_STATUS_MAX];

/* Writes line (ends in a newline) to stderr, above the status line if one is shown. */
static void emit(const char *line)
{
	pthread_mutex_lock(&status_lock);
	if (status[0])
		fprintf(stderr, "\r\033[K%s%s\033[K", line, status);
	else
		fputs(line, stderr);
	pthread_mutex_unlock(&status_lock);
}

bool floe_log_is_terminal(void)
{
	return isatty(STDERR_FILENO) == 1;
}

void floe_log_status(const char *text)
{
	pthread_mutex_lock(&status_lock);
	size_t n = 0;
	if (text) {
		/* One line: the status stops at a newline, and at the buffer's end. */
		n = strcspn(text, "\n");
		if (n >= sizeof(status))
			n = sizeof(status) - 1;
		memcpy(status, text, n);
	}
	status[n] = '\0';
	fprintf(stderr, "\r%s\033[K", status);
	fflush(stderr);
	pthread_mutex_unlock(&status_lock);
}

void floe_log_set_level(enum floe_log_level level)
{
	threshold = level;
}

void floe_log_set_format(enum floe_log_format f)
{
	format = f;
}

/* Appends s as the inside of a JSON string to out[*n..cap), leaving room for the NUL:
 * quotes, backslashes and control characters escaped, each ill-formed byte replaced by
 * U+FFFD (a message may quote a file name or a line). Stops before a character that
 * would not fit whole, so the result is always valid JSON text. */
static void json_escape(char *out, size_t cap, size_t *n, const char *s)
{
	const uint8_t *p = (const uint8_t *)s;
	size_t len = strlen(s);
	for (size_t i = 0; i < len;) {
		char esc[8];
		const char *add = esc;
		size_t k;
		uint32_t cp = 0;
		size_t l = floe_utf8_get(p + i, len - i, &cp);
		if (l == 0) {
			add = "\xef\xbf\xbd";
			k = 3;
			l = 1;
		} else if (cp == '"' || cp == '\\') {
			esc[0] = '\\';
			esc[1] = (char)cp;
			k = 2;
		} else if (cp == '\n' || cp == '\t' || cp == '\r') {
			esc[0] = '\\';
			esc[1] = cp == '\n' ? 'n' : cp == '\t' ? 't' : 'r';
			k = 2;
		} else if (cp < 0x20 || cp == 0x7f) {
			k = (size_t)snprintf(esc, sizeof(esc), "\\u%04x", (unsigned)cp);
		} else {
			add = (const char *)p + i;
			k = l;
		}
		if (*n + k >= cap)
			break;
		memcpy(out + *n, add, k);
		*n += k;
		i += l;
	}
	out[*n] = '\0';
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
	char when[64];
	snprintf(when, sizeof(when), "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ", tm.tm_year + 1900,
		 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000);
	if (format == FLOE_LOG_TEXT) {
		char line[sizeof(msg) + 96];
		snprintf(line, sizeof(line), "%s floe %s: %s\n", when, names[level], msg);
		emit(line);
		return;
	}
	/* Escaping at most sextuples a byte (\u00XX); a longer message is cut at a character. */
	char line[2048];
	size_t n = (size_t)snprintf(
	    line, sizeof(line), "{\"time\":\"%s\",\"level\":\"%s\",\"msg\":\"", when, names[level]);
	json_escape(line, sizeof(line) - 3, &n, msg);
	memcpy(line + n, "\"}\n", 4);
	emit(line);
}

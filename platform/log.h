/* Logging to stderr with a UTC timestamp and a level, as text or as one JSON object per
 * line (agent.log_format). The threshold and format are set once at start-up by the CLI;
 * messages below the threshold cost one comparison. Secrets never go here. */
#ifndef FLOE_LOG_H
#define FLOE_LOG_H

#include <stdbool.h>

enum floe_log_level { FLOE_LOG_DEBUG, FLOE_LOG_INFO, FLOE_LOG_WARN, FLOE_LOG_ERROR };
/* TEXT: "2026-01-02T03:04:05.678Z floe info: message". JSON: {"time":"2026-01-02T03:04:
 * 05.678Z","level":"info","msg":"message"}, with the message escaped and any ill-formed
 * UTF-8 in it replaced by U+FFFD, so that every line parses for a log collector. */
enum floe_log_format { FLOE_LOG_TEXT, FLOE_LOG_JSON };

void floe_log_set_level(enum floe_log_level level);
/* Call before any thread starts, like floe_log_set_level. */
void floe_log_set_format(enum floe_log_format format);
void floe_log(enum floe_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Whether stderr is a terminal (where a status line may be shown). */
bool floe_log_is_terminal(void);
/* Shows text (copied, one line, cut at FLOE_LOG_STATUS_MAX - 1 bytes) as a status line at
 * the bottom of stderr, replacing the previous one; log lines written while it is shown
 * go above it (it is cleared, the line written, and it is drawn again). NULL clears it.
 * For a terminal only: the caller checks floe_log_is_terminal. Thread-safe. */
void floe_log_status(const char *text);
#define FLOE_LOG_STATUS_MAX 256

#define floe_debug(...) floe_log(FLOE_LOG_DEBUG, __VA_ARGS__)
#define floe_info(...) floe_log(FLOE_LOG_INFO, __VA_ARGS__)
#define floe_warn(...) floe_log(FLOE_LOG_WARN, __VA_ARGS__)
#define floe_error(...) floe_log(FLOE_LOG_ERROR, __VA_ARGS__)

#endif

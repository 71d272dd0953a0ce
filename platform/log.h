/* Logging to stderr with a UTC timestamp and a level. The threshold is set once at
 * start-up by the CLI; messages below it cost one comparison. Secrets never go here. */
#ifndef FLOE_LOG_H
#define FLOE_LOG_H

enum floe_log_level { FLOE_LOG_DEBUG, FLOE_LOG_INFO, FLOE_LOG_WARN, FLOE_LOG_ERROR };

void floe_log_set_level(enum floe_log_level level);
void floe_log(enum floe_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define floe_debug(...) floe_log(FLOE_LOG_DEBUG, __VA_ARGS__)
#define floe_info(...) floe_log(FLOE_LOG_INFO, __VA_ARGS__)
#define floe_warn(...) floe_log(FLOE_LOG_WARN, __VA_ARGS__)
#define floe_error(...) floe_log(FLOE_LOG_ERROR, __VA_ARGS__)

#endif

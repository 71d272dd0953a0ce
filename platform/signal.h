/* Termination signals (SIGINT, SIGTERM) become a flag the run loop polls, so the agent
 * seals, commits and exits cleanly instead of dying mid-write; SIGHUP, which would kill
 * it by default, becomes a flag too. */
#ifndef FLOE_SIGNAL_H
#define FLOE_SIGNAL_H

#include <stdbool.h>
#include <stdint.h>

/* Installs the handlers (SIGINT, SIGTERM, SIGHUP) and ignores SIGPIPE. */
int floe_signal_install(void);
/* True once SIGINT or SIGTERM has arrived. */
bool floe_signal_stop_requested(void);
/* True once for each SIGHUP that arrived since the last call (several may count once). */
bool floe_signal_take_hangup(void);
/* Milliseconds since the first SIGINT or SIGTERM arrived (monotonic clock), or -1 before
 * one has. Network code uses it to give requests in flight a short grace after a stop. */
int64_t floe_signal_stop_age_ms(void);
/* Makes the handlers also write 1 to the eventfd fd (-1: none), so that a thread waiting
 * in epoll on it wakes even when the signal came just before its wait began: a flag alone
 * is seen only at the next wake-up, which an idle loop may put minutes away. Call it from
 * the thread that takes signals (the others block them, platform/worker.c), so that no
 * handler runs between the change and the close of the old descriptor. */
void floe_signal_wake_fd(int fd);
/* Sleeps up to ms milliseconds, returning early when a stop is requested. */
void floe_signal_sleep_ms(unsigned ms);

#endif

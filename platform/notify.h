/* The service manager's notification protocol (systemd's sd_notify, without libsystemd):
 * a service started with Type=notify says when it is ready, reloading and stopping, and
 * with WatchdogSec= it proves at least every half of that interval that it still turns,
 * or the manager restarts it. That is the one restart an unattended device gets when
 * its agent is stuck (a hung read, a lock never given back): its status page then
 * answers 503, but on a device nobody scrapes nobody sees it.
 *
 * The manager names a datagram socket in NOTIFY_SOCKET (a path, or "@name" in the
 * abstract namespace) and the watchdog's interval in WATCHDOG_USEC (for the process
 * WATCHDOG_PID names, when set). Without NOTIFY_SOCKET every call here does nothing. */
#ifndef FLOE_NOTIFY_H
#define FLOE_NOTIFY_H

#include <stdint.h>

/* Reads and removes the variables (so that nothing started from here takes them for its
 * own) and opens the socket. Call it once, before any thread starts. Returns 0, or
 * -errno when NOTIFY_SOCKET is set but unusable (then every call does nothing; the
 * caller says so once). */
int floe_notify_init(void);
/* Sends state ("READY=1", "RELOADING=1", "STOPPING=1", "STATUS=...", several separated
 * by newlines) to the manager. Returns 0 (also without a manager) or -errno. */
int floe_notify(const char *state);
/* The watchdog's interval in µs: 0 when there is none for this process. */
int64_t floe_notify_watchdog_us(void);
/* Pets the watchdog ("WATCHDOG=1") when a quarter of its interval has passed since the
 * last time (monotonic clock): cheap to call on every turn of a loop. One thread only. */
void floe_notify_watchdog(void);
/* Ends the process at once with code, without atexit handlers, flushing or joining
 * threads: for a thread stuck in the kernel (a hung file system), which no join would
 * ever return from. Tells the manager STATUS= first. */
void floe_notify_abandon(int code) __attribute__((noreturn));
/* Closes the socket (tests). */
void floe_notify_fini(void);

#endif

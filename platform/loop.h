/* An event loop over epoll: file descriptors with callbacks, timers on an injectable clock,
 * a read buffer shared by everything the loop reads, and wake-ups from other threads. The
 * agent reads its sockets on the loop's thread while uploads and commits run on another;
 * that thread hands it work or tells it to stop with floe_loop_wake and floe_loop_stop
 * (an eventfd), the only two functions that may be called from another thread. */
#ifndef FLOE_PLATFORM_LOOP_H
#define FLOE_PLATFORM_LOOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct floe_loop;

/* Event bits for floe_loop_io_add/_set and the callback. An error or hang-up on the
 * descriptor is reported as FLOE_IO_READ (the read then sees it) plus FLOE_IO_HUP. */
#define FLOE_IO_READ 1u
#define FLOE_IO_WRITE 2u
#define FLOE_IO_HUP 4u

/* A descriptor watched by a loop, in memory the caller owns (embed it in a connection).
 * The caller sets cb and arg; the rest is the loop's. */
struct floe_io {
	void (*cb)(struct floe_io *io, unsigned events);
	void *arg;
	/* private to the loop */
	int fd;
	unsigned events;
	bool added, kicked;
	struct floe_io *next_kicked;
};

/* A one-shot timer in memory the caller owns. The caller sets cb and arg; the rest is
 * the loop's (a node of a pairing heap: arming and disarming allocate nothing). An armed
 * timer, like an added io, must be disarmed (removed) before its memory is reused. */
struct floe_timer {
	void (*cb)(struct floe_timer *t);
	void *arg;
	/* private to the loop */
	int64_t deadline;
	bool armed;
	struct floe_timer *child, *sibling, *prev;
};

struct floe_loop_opts {
	/* Monotonic milliseconds for timers (NULL: CLOCK_MONOTONIC). Tests inject a clock
	 * and run the loop with floe_loop_run_once(loop, 0) after moving it. */
	int64_t (*clock_ms)(void *arg);
	void *clock_arg;
	/* Called on the loop's thread after floe_loop_wake (several wakes may call it once).
	 * May be NULL. */
	void (*on_wake)(void *arg);
	void *wake_arg;
	/* The read buffer every reader on this loop shares (borrowed; the caller takes it
	 * from its memory budget): bytes read into it are handed on at once, so idle
	 * connections hold no buffer of their own. May be NULL with buffer_len 0. */
	char *buffer;
	size_t buffer_len;
};

/* Creates a loop (an epoll set and an eventfd; the struct is a few hundred bytes). o may
 * be NULL. Returns 0 with *out (owned: floe_loop_free) or -errno. */
int floe_loop_new(const struct floe_loop_opts *o, struct floe_loop **out);
/* Closes the loop's own descriptors; descriptors still added are not closed. NULL ok. */
void floe_loop_free(struct floe_loop *l);

/* Waits up to timeout_ms (-1: until something happens; 0: not at all) for descriptors,
 * due timers and wakes, and runs their callbacks once. Returns the number of callbacks
 * run, or -errno (EINTR is not an error: 0). */
int floe_loop_run_once(struct floe_loop *l, int timeout_ms);
/* Runs floe_loop_run_once until floe_loop_stop. Returns 0 or -errno. */
int floe_loop_run(struct floe_loop *l);

/* Any thread, and signal handlers: makes the loop call on_wake soon. */
void floe_loop_wake(struct floe_loop *l);
/* Makes SIGINT, SIGTERM and SIGHUP wake l (platform/signal.c writes to its eventfd) until
 * floe_loop_free. For one loop at a time: the loop of the thread that takes signals,
 * which must also be the one that frees it. */
void floe_loop_wake_on_signals(struct floe_loop *l);
/* Any thread, and signal handlers: makes floe_loop_run return after the current round. */
void floe_loop_stop(struct floe_loop *l);
/* True once floe_loop_stop was called. */
bool floe_loop_stopping(const struct floe_loop *l);
/* Clears the stop, for a loop that runs again once floe_loop_run returned (the syslog
 * receiver kept across a reload). The loop's thread only, or while none runs it. */
void floe_loop_resume(struct floe_loop *l);

/* The loop's clock, in milliseconds. */
int64_t floe_loop_now(const struct floe_loop *l);
/* The shared read buffer and its length (the one given in the options). */
char *floe_loop_buffer(const struct floe_loop *l, size_t *len);

/* Watches fd (borrowed: never closed here) for events (FLOE_IO_READ|FLOE_IO_WRITE, or 0
 * to add it paused). Level-triggered: a callback that leaves data unread is called again
 * in the next round. Returns 0 or -errno. */
int floe_loop_io_add(struct floe_loop *l, struct floe_io *io, int fd, unsigned events);
/* Changes the events watched (0 pauses: backpressure). Returns 0 or -errno. */
int floe_loop_io_set(struct floe_loop *l, struct floe_io *io, unsigned events);
/* The events watched now. */
unsigned floe_loop_io_events(const struct floe_io *io);
/* Stops watching io, before its descriptor is closed. Safe from any callback, for any io,
 * including one whose event is pending in the current round (it is then not called). */
void floe_loop_io_del(struct floe_loop *l, struct floe_io *io);
/* Calls io's callback with FLOE_IO_READ in the next round without waiting for the kernel:
 * for bytes a reader holds in user space (a TLS record decrypted but not yet taken)
 * that epoll cannot know about. Forgotten by floe_loop_io_del. */
void floe_loop_io_kick(struct floe_loop *l, struct floe_io *io);

/* Arms t to fire once at deadline_ms on the loop's clock (re-arming moves it). Timers due
 * in the same round fire in deadline order. */
void floe_loop_timer_arm(struct floe_loop *l, struct floe_timer *t, int64_t deadline_ms);
/* Disarms t (an unarmed timer is fine). */
void floe_loop_timer_disarm(struct floe_loop *l, struct floe_timer *t);
/* True while t is armed. */
bool floe_loop_timer_armed(const struct floe_timer *t);

#endif

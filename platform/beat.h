/* A thread's heartbeat: a counter the thread bumps at each step of its work, and the name
 * of that step, which another thread reads to tell a thread that stopped making progress
 * (a hung file system's fsync, a deadlock) from one that is slowly making it (a large
 * upload whose bytes move). The thread attaches its heartbeat once; code below it (the
 * store's operations, the HTTP clients' transfers) calls floe_beat() without being handed
 * anything, and does nothing on a thread with none attached. Cheap: a thread-local
 * pointer and two relaxed stores. */
#ifndef FLOE_BEAT_H
#define FLOE_BEAT_H

#include <stdint.h>

struct floe_beat {
	uint64_t n;	   /* atomic: steps so far */
	const char *doing; /* atomic: the last step's name (static storage, or NULL) */
	const char *what;  /* atomic: what the thread works on (outlives the reader), or NULL */
};

/* Makes b (borrowed until detached; NULL: none) this thread's heartbeat and returns the
 * one it had. */
struct floe_beat *floe_beat_attach(struct floe_beat *b);
/* A step named doing (a string literal; NULL keeps the last name): bumps this thread's
 * heartbeat, if it has one. */
void floe_beat(const char *doing);
/* Names what the thread works on (borrowed: it must outlive every reader; NULL: nothing)
 * and counts a step. */
void floe_beat_what(const char *what);
/* The reader's side, from any thread: the count and the names (never NULL: "" then). */
uint64_t floe_beat_count(const struct floe_beat *b);
const char *floe_beat_doing(const struct floe_beat *b);
const char *floe_beat_on(const struct floe_beat *b);

#endif

/* What the agent takes from its surroundings that a test must control: time (the wall
 * clock, the monotonic clock, and waiting) and randomness, as small tables of functions
 * with the system's as defaults (platform/clock.h, platform/signal.h). The runner and the
 * table committer are given them; nothing in run/ or lake/table*.c reads a clock or the
 * kernel's random pool itself, so a unit test can drive a run on a fake clock and get the
 * same snapshot ids every time. */
#ifndef FLOE_ENV_H
#define FLOE_ENV_H

#include "platform/tz.h"

#include <stddef.h>
#include <stdint.h>

struct floe_clock {
	int64_t (*wall_us)(void *ctx);		  /* µs since the Unix epoch (CLOCK_REALTIME) */
	int64_t (*mono_us)(void *ctx);		  /* µs on a monotonic clock, for intervals */
	void (*sleep_ms)(void *ctx, unsigned ms); /* waits up to ms, less when a stop comes */
	void *ctx;
};

struct floe_rand {
	int (*fill)(void *ctx, void *p, size_t n); /* p[0..n) random: 0, or a negative code */
	void *ctx;
};

/* A zone whose offset changes (summer time), for times logs write without an offset:
 * the system's behind zone: local (floe_env_zone_local). The parsers only call it. */
struct floe_zone_fn {
	/* µs UTC of a local civil time given as µs as if it were UTC. A time the zone skips
	 * (spring forward) is read at the offset before the change; one it repeats (fall
	 * back) at the reading nearer hint_us (UTC: the receive time). */
	int64_t (*to_utc)(void *ctx, int64_t local_us, int64_t hint_us);
	/* Seconds east of UTC at utc_us. */
	int32_t (*offset_at)(void *ctx, int64_t utc_us);
	void *ctx;
};

/* The system's zone (platform/tz.h) with its own cache: one per user thread. */
struct floe_env_zone {
	struct floe_zone_fn fn;
	struct floe_tz_cache cache;
};
/* Sets z up; z->fn is then the system's zone (z must stay where it is). */
void floe_env_zone_local(struct floe_env_zone *z);

/* The system's clock (platform/clock.h; sleeping ends early on SIGINT or SIGTERM) and
 * randomness (getrandom): static, never NULL. */
const struct floe_clock *floe_env_clock(void);
const struct floe_rand *floe_env_rand(void);

/* A random (version 4) UUID from r, as 36 lowercase characters plus NUL: 0, or r's error
 * (out untouched). */
int floe_env_uuid4(const struct floe_rand *r, char out[37]);

#endif

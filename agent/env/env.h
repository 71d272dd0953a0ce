/* What the agent takes from its surroundings that a test must control: time (the wall
 * clock, the monotonic clock, and waiting) and randomness, as small tables of functions
 * with the system's as defaults (platform/clock.h, platform/signal.h). The runner and the
 * table committer are given them; nothing in run/ or lake/table*.c reads a clock or the
 * kernel's random pool itself, so a unit test can drive a run on a fake clock and get the
 * same snapshot ids every time. */
#ifndef FLOE_ENV_H
#define FLOE_ENV_H

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

/* The system's clock (platform/clock.h; sleeping ends early on SIGINT or SIGTERM) and
 * randomness (getrandom): static, never NULL. */
const struct floe_clock *floe_env_clock(void);
const struct floe_rand *floe_env_rand(void);

/* A random (version 4) UUID from r, as 36 lowercase characters plus NUL: 0, or r's error
 * (out untouched). */
int floe_env_uuid4(const struct floe_rand *r, char out[37]);

#endif

/* Internal to platform/s3*.c: the limits every S3 and credential request runs under. An
 * attempt has a total deadline that grows with the bytes it has moved, and a stop request
 * ends it (and every wait between attempts) after a short grace. */
#ifndef FLOE_PLATFORM_S3_LIMITS_H
#define FLOE_PLATFORM_S3_LIMITS_H

#include "platform/s3/s3.h"

#include <stdbool.h>
#include <stdint.h>

/* The defaults, and why.
 *
 * Deadline = FLOE_S3_DEADLINE_BASE_MS + bytes moved / FLOE_S3_MIN_RATE seconds.
 * - 30 s of base covers a connect (10 s at most), a TLS handshake on a slow ARM core and
 *   the server's own time to answer (S3 answers small requests in well under a second,
 *   a busy RGW in a few), with room to spare; and a request stuck without an answer is
 *   still noticed and retried within a minute: a 1 KiB GET never takes minutes.
 * - 4 KiB/s (32 kbit/s) of floor rate lies below GPRS/EDGE and LTE-M uplinks, so a 16 MiB
 *   part on a thin link is never cut while it progresses (it may take up to 68 minutes
 *   at exactly the floor); lake.s3.min_rate lowers it for thinner links.
 * - The allowance grows with bytes actually moved, not with bytes announced: a server
 *   that sends a large Content-Length and then drips cannot stretch its own deadline (at
 *   2 bytes/s it is cut after ~30 s, where the 1 byte/s low-speed limit never fires).
 *
 * A stop request gives requests in flight FLOE_S3_STOP_GRACE_MS (from the stop) to end:
 * enough for a healthy store to take the final commit (a few small PUTs on a LAN or a
 * nearby region), short enough that SIGTERM ends the agent within 5 s whatever the
 * network does. What is not committed stays in the spool for the next start. */
#define FLOE_S3_DEADLINE_BASE_MS 30000
#define FLOE_S3_MIN_RATE 4096
#define FLOE_S3_STOP_GRACE_MS 2000

struct floe_s3_limits {
	int64_t base_ms;  /* negative: no deadline */
	int64_t min_rate; /* bytes per second, > 0 */
	int64_t grace_ms; /* >= 0 */
	floe_s3_stop_fn stop_fn;
	void *stop_ctx;
};

/* Fills l from the options' values, with the defaults above for zeros. */
void floe_s3_limits_init(struct floe_s3_limits *l, int64_t base_ms, int64_t min_rate,
			 int64_t grace_ms, floe_s3_stop_fn stop_fn, void *stop_ctx);

/* The deadline of an attempt that has moved bytes so far, in ms (INT64_MAX: none). */
int64_t floe_s3_limits_deadline_ms(const struct floe_s3_limits *l, int64_t moved);

/* Whether a stop was requested long enough ago that nothing may run any more. */
bool floe_s3_limits_stopped(const struct floe_s3_limits *l);

enum { FLOE_S3_LIMITS_GO = 0, FLOE_S3_LIMITS_OVERDUE = 1, FLOE_S3_LIMITS_STOPPED = 2 };
/* What an attempt that has run elapsed_ms and moved bytes must do: go on, or be cut. */
int floe_s3_limits_check(const struct floe_s3_limits *l, int64_t elapsed_ms, int64_t moved);

/* How much of the stop grace is left in ms: -1 when no stop was requested, 0 when it is
 * spent. */
int64_t floe_s3_limits_grace_left_ms(const struct floe_s3_limits *l);

#endif

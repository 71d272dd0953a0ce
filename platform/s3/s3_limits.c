/* The deadline and stop limits of S3 and credential requests (see s3_limits.h). */
#include "platform/s3/s3_limits.h"

#include "platform/signal.h"

static int64_t default_stop(void *ctx)
{
	(void)ctx;
	return floe_signal_stop_age_ms();
}

void floe_s3_limits_init(struct floe_s3_limits *l, int64_t base_ms, int64_t min_rate,
			 int64_t grace_ms, floe_s3_stop_fn stop_fn, void *stop_ctx)
{
	l->base_ms = base_ms == 0 ? FLOE_S3_DEADLINE_BASE_MS : base_ms;
	l->min_rate = min_rate > 0 ? min_rate : FLOE_S3_MIN_RATE;
	l->grace_ms = grace_ms > 0 ? grace_ms : FLOE_S3_STOP_GRACE_MS;
	l->stop_fn = stop_fn ? stop_fn : default_stop;
	l->stop_ctx = stop_fn ? stop_ctx : NULL;
}

int64_t floe_s3_limits_deadline_ms(const struct floe_s3_limits *l, int64_t moved)
{
	if (l->base_ms < 0)
		return INT64_MAX;
	/* moved is at most a part or an object (5 GiB), so moved * 1000 cannot overflow;
	 * the clamp only guards against a counter gone wrong. */
	if (moved < 0)
		moved = 0;
	if (moved > INT64_MAX / 2000)
		return INT64_MAX;
	return l->base_ms + moved * 1000 / l->min_rate;
}

int64_t floe_s3_limits_grace_left_ms(const struct floe_s3_limits *l)
{
	int64_t age = l->stop_fn(l->stop_ctx);
	if (age < 0)
		return -1;
	return age >= l->grace_ms ? 0 : l->grace_ms - age;
}

bool floe_s3_limits_stopped(const struct floe_s3_limits *l)
{
	return floe_s3_limits_grace_left_ms(l) == 0;
}

int floe_s3_limits_check(const struct floe_s3_limits *l, int64_t elapsed_ms, int64_t moved)
{
	if (floe_s3_limits_stopped(l))
		return FLOE_S3_LIMITS_STOPPED;
	if (elapsed_ms > floe_s3_limits_deadline_ms(l, moved))
		return FLOE_S3_LIMITS_OVERDUE;
	return FLOE_S3_LIMITS_GO;
}

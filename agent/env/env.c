/* The system's clock and randomness behind the tables of env.h, and UUIDs from them. */
#include "agent/env/env.h"

#include "platform/clock.h"
#include "platform/signal.h"

static int64_t sys_wall_us(void *ctx)
{
	(void)ctx;
	return floe_clock_now_us();
}

static int64_t sys_mono_us(void *ctx)
{
	(void)ctx;
	return floe_clock_mono_ns() / 1000;
}

static void sys_sleep_ms(void *ctx, unsigned ms)
{
	(void)ctx;
	floe_signal_sleep_ms(ms);
}

static int sys_fill(void *ctx, void *p, size_t n)
{
	(void)ctx;
	return floe_random_bytes(p, n);
}

static const struct floe_clock sys_clock = {sys_wall_us, sys_mono_us, sys_sleep_ms, NULL};
static const struct floe_rand sys_rand = {sys_fill, NULL};

const struct floe_clock *floe_env_clock(void)
{
	return &sys_clock;
}

const struct floe_rand *floe_env_rand(void)
{
	return &sys_rand;
}

int floe_env_uuid4(const struct floe_rand *r, char out[37])
{
	uint8_t b[16];
	int rc = r->fill(r->ctx, b, sizeof(b));
	if (rc)
		return rc;
	b[6] = (uint8_t)((b[6] & 0x0f) | 0x40); /* version 4 */
	b[8] = (uint8_t)((b[8] & 0x3f) | 0x80); /* RFC 4122 variant */
	static const char digits[] = "0123456789abcdef";
	size_t o = 0;
	for (size_t i = 0; i < sizeof(b); i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			out[o++] = '-';
		out[o++] = digits[b[i] >> 4];
		out[o++] = digits[b[i] & 15];
	}
	out[o] = '\0';
	return 0;
}

/* ---- the system's zone ----------------------------------------------------------------- */

static int64_t floor_us(int64_t us, int64_t *frac)
{
	int64_t s = us / 1000000;
	if (us % 1000000 < 0)
		s--;
	*frac = us - s * 1000000;
	return s;
}

static int64_t zone_to_utc(void *ctx, int64_t local_us, int64_t hint_us)
{
	int64_t frac, hfrac;
	int64_t s = floor_us(local_us, &frac);
	int64_t u = floe_tz_to_utc(ctx, s, floor_us(hint_us, &hfrac));
	return u * 1000000 + frac;
}

static int32_t zone_offset_at(void *ctx, int64_t utc_us)
{
	int64_t frac;
	return floe_tz_offset_at(ctx, floor_us(utc_us, &frac));
}

void floe_env_zone_local(struct floe_env_zone *z)
{
	*z = (struct floe_env_zone){.fn = {zone_to_utc, zone_offset_at, &z->cache}};
}

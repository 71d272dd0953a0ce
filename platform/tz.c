/* The system's time zone through localtime_r (platform/tz.h). */
#include "tz.h"

#include <time.h>

#define HOUR 3600
#define NEAR (3 * HOUR) /* changes of offset are at most a few hours apart only in theory */

static int64_t floor_div(int64_t a, int64_t b)
{
	int64_t q = a / b;
	return (a % b != 0 && a < 0) ? q - 1 : q;
}

static uint64_t dist(int64_t a, int64_t b)
{
	return a > b ? (uint64_t)a - (uint64_t)b : (uint64_t)b - (uint64_t)a;
}

static int32_t sys_offset(int64_t utc_s)
{
	time_t t = (time_t)utc_s;
	struct tm tm;
	if ((int64_t)t != utc_s || !localtime_r(&t, &tm))
		return 0; /* beyond a 32-bit time_t, or the library's range */
	return (int32_t)tm.tm_gmtoff;
}

int32_t floe_tz_offset_at(struct floe_tz_cache *c, int64_t utc_s)
{
	if (utc_s >= c->lo && utc_s < c->hi)
		return c->off;
	if (utc_s < -(INT64_C(1) << 40) || utc_s > (INT64_C(1) << 40))
		return sys_offset(utc_s);
	int64_t h = floor_div(utc_s, HOUR) * HOUR;
	int32_t off = sys_offset(h);
	/* Cached only when the whole hour has one offset (a change inside it is not). */
	if (sys_offset(h + HOUR - 1) != off)
		return sys_offset(utc_s);
	c->lo = h;
	c->hi = h + HOUR;
	c->off = off;
	c->clear = sys_offset(h - NEAR) == off && sys_offset(h + HOUR - 1 + NEAR) == off;
	return off;
}

int64_t floe_tz_to_utc(struct floe_tz_cache *c, int64_t local_s, int64_t hint_s)
{
	/* The common case: the cached hour, with no change of offset near it. */
	if (c->clear && c->hi > c->lo && local_s - c->off >= c->lo && local_s - c->off < c->hi)
		return local_s - c->off;
	if (local_s < -(INT64_C(1) << 40) || local_s > (INT64_C(1) << 40))
		return local_s; /* 34,000 years: no zone there */
	/* The offsets in force around it; each gives a reading, valid when the offset at
	 * that reading is the one it was made with. */
	int32_t guess = floe_tz_offset_at(c, local_s);
	int32_t offs[3] = {floe_tz_offset_at(c, local_s - guess),
			   floe_tz_offset_at(c, local_s - guess - NEAR),
			   floe_tz_offset_at(c, local_s - guess + NEAR)};
	int64_t best = 0;
	bool found = false;
	for (int i = 0; i < 3; i++) {
		int64_t u = local_s - offs[i];
		if (floe_tz_offset_at(c, u) != offs[i])
			continue;
		if (!found || dist(u, hint_s) < dist(best, hint_s)) {
			best = u;
			found = true;
		}
	}
	/* None: a time the zone skips, read at the offset before the change. */
	return found ? best : local_s - offs[1];
}

/* The system's time zone (TZ, else /etc/localtime, through the C library), for times
 * that logs write in local time without an offset (zone: local). Conversions are cached
 * per hour: a log's lines of one hour cost one comparison each. */
#ifndef FLOE_PLATFORM_TZ_H
#define FLOE_PLATFORM_TZ_H

#include <stdbool.h>
#include <stdint.h>

/* One user's cache (not shared between threads): an hour of UTC with its offset, and
 * whether no change of offset lies within 3 hours of it (a local time in it then has one
 * reading). Zeroed: empty. */
struct floe_tz_cache {
	int64_t lo, hi; /* UTC seconds [lo, hi) */
	int32_t off;	/* seconds east of UTC there */
	bool clear;	/* no change of offset within 3 hours of [lo, hi) */
};

/* Seconds east of UTC at utc_s (0 where the C library cannot tell). */
int32_t floe_tz_offset_at(struct floe_tz_cache *c, int64_t utc_s);
/* UTC seconds of the local civil time local_s (seconds as if it were UTC). A time the
 * zone skips (spring forward) is read at the offset before the change, as mktime does;
 * one it repeats (fall back) at the reading nearer hint_s (UTC). */
int64_t floe_tz_to_utc(struct floe_tz_cache *c, int64_t local_s, int64_t hint_s);

#endif

/* Iceberg partition transforms and the murmur3 bucket hash (spec Appendix B), with floor
 * division so that instants before 1970 land in the right partition. */
#ifndef FLOE_ICE_TRANSFORM_H
#define FLOE_ICE_TRANSFORM_H

#include <stddef.h>
#include <stdint.h>

enum floe_ice_transform_kind {
	FLOE_ICE_IDENTITY,
	FLOE_ICE_YEAR,
	FLOE_ICE_MONTH,
	FLOE_ICE_DAY,
	FLOE_ICE_HOUR,
	FLOE_ICE_BUCKET,
	FLOE_ICE_TRUNCATE,
	FLOE_ICE_VOID,
};

struct floe_ice_transform {
	enum floe_ice_transform_kind kind;
	int32_t param; /* N for bucket[N], W for truncate[W] */
};

/* Parses "identity", "day", "bucket[16]", ... FLOE_EPARSE when unknown. */
int floe_ice_transform_parse(const char *s, size_t len, struct floe_ice_transform *out);
/* Writes the canonical name ("day", "bucket[16]") into out (cap bytes, NUL-terminated). */
int floe_ice_transform_name(const struct floe_ice_transform *t, char *out, size_t cap);

/* Timestamp transforms over microseconds since the epoch. */
int32_t floe_ice_year_from_us(int64_t us);
int32_t floe_ice_month_from_us(int64_t us);
int32_t floe_ice_day_from_us(int64_t us);
int32_t floe_ice_hour_from_us(int64_t us);

uint32_t floe_ice_murmur3_32(const void *data, size_t len, uint32_t seed);
/* Bucket of a long/int/date/time/timestamp value (hashed as 8-byte LE long). */
int32_t floe_ice_bucket_long(int64_t v, int32_t n);
/* Bucket of a string/binary value. */
int32_t floe_ice_bucket_bytes(const void *p, size_t len, int32_t n);

/* Partition path value for a data file path, e.g. day 19492 -> "2023-05-15", hour
 * 467822 -> "2023-05-15-14", as Java's Transform.toHumanString does. */
int floe_ice_human_day(int32_t day, char *out, size_t cap);
int floe_ice_human_hour(int32_t hour, char *out, size_t cap);
/* Months since 1970-01 as "2026-12", years since 1970 as "2026": the folder names
 * Iceberg's own writers give month(ts) and year(ts) partitions. */
int floe_ice_human_month(int32_t month, char *out, size_t cap);
int floe_ice_human_year(int32_t year, char *out, size_t cap);

/* Truncates UTF-8 s to at most n code points for a lower bound (*out_len gets the byte
 * length; s itself is the output). */
size_t floe_ice_truncate_lower(const char *s, size_t len, size_t n);
/* Upper bound: s truncated to n code points with the last one incremented (skipping the
 * surrogate range), written to out (cap >= 4*n bytes). Returns the length, or 0 if no
 * upper bound exists (every code point at the maximum) or s is not longer than n code
 * points, in which case the caller uses s itself. */
size_t floe_ice_truncate_upper(const char *s, size_t len, size_t n, char *out, size_t cap);

#endif

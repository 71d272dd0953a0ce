/* RFC 3339 date-times, and the ISO 8601 forms log writers use beside them: the one
 * parser behind syslog, container logs, JSON "ts" fields, the configured timestamp
 * formats and AWS credential expiries, so that one string means one instant whichever
 * input it came through. Pure over (ptr, len): no clock, no zone database. */
#ifndef FLOE_BASE_RFC3339_H
#define FLOE_BASE_RFC3339_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A date-time as written. second may be 60 (a leap second); frac_us holds the first six
 * fraction digits (the rest are read and dropped, never rounded). */
struct floe_rfc3339 {
	int64_t year;
	unsigned month, day, hour, minute, second;
	int64_t frac_us;
	int32_t off_s; /* seconds east of UTC, when has_off */
	bool has_off;
};

/* Trailing bytes are allowed: *end says where the date-time stopped. */
#define FLOE_RFC3339_PREFIX 1u
/* The offset may be left out (has_off false): the caller applies its own zone. */
#define FLOE_RFC3339_ZONELESS 2u
/* ISO 8601's other forms too: ',' before the fraction, HH:MM without seconds, a date
 * alone (midnight), the basic forms YYYYMMDD[THHMM[SS[.frac]]], and offsets +HH and
 * +HHMM. Implies ZONELESS. A time that does not parse leaves the date alone. */
#define FLOE_RFC3339_ISO8601 4u
/* At most nine fraction digits (RFC 5424 writes at most six; nanoseconds are common). */
#define FLOE_RFC3339_FRAC9 8u

/* Scans s[0..n) ("YYYY-MM-DD(T|t| )HH:MM:SS[.frac](Z|z|+HH:MM|-HH:MM)" without flags).
 * Returns 0 with *t and *end (the bytes taken: n unless PREFIX), FLOE_EPARSE with *end at
 * the byte that does not fit, or FLOE_EFORMAT with *end at a field out of range (month
 * 13, Feb 30, hour 24, minute 60, second 61, offset hour 24 or minute 60). Borrows s. */
int floe_rfc3339_scan(const char *s, size_t n, unsigned flags, struct floe_rfc3339 *t,
		      size_t *end);

/* µs since the epoch of a scanned date-time, at its own offset or, when it has none, at
 * zone_off_s. A leap second is the last µs of its minute (floe_civil_us). FLOE_ELIMIT
 * beyond int64 µs. */
int floe_rfc3339_us(const struct floe_rfc3339 *t, int32_t zone_off_s, int64_t *us);

/* The whole of p[0..n) as a strict RFC 3339 date-time (offset required) into unix
 * seconds, the fraction dropped (floor); FLOE_EPARSE for any other text or an impossible
 * date. For the wire formats that carry instants (credential expiries, S3 listings). */
int floe_rfc3339_unix_s(const char *p, size_t n, int64_t *unix_s);

#endif

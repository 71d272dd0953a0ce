/* Timestamp strings into µs since the epoch (UTC), by a format chosen once in the
 * configuration: rfc3339, iso8601, epoch numbers, syslog (year inferred from a reference
 * time), apache (error log and common log), or a strftime-like custom format. Pure: no
 * clock, no process time zone, no tz database. RFC 3339 and ISO 8601 text is read, and
 * every date becomes µs, by the base layer (formats/base/rfc3339.h and civil.h, with the
 * one leap-second rule: second 60 is the last µs of its minute). */
#ifndef FLOE_TIMESTAMP_H
#define FLOE_TIMESTAMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct floe_alloc;
struct floe_err;
struct floe_ts_format;
struct floe_zone_fn;

/* Compiles a format. spec is one of:
 *   "rfc3339"   YYYY-MM-DD(T|t| )HH:MM:SS[.frac](Z|z|+HH:MM|-HH:MM) — offset required
 *   "iso8601"   as rfc3339, but also: ',' before the fraction, HH:MM without seconds, a
 *               date alone (midnight), the basic forms YYYYMMDD[THHMMSS[.frac]], offsets
 *               Z, +HH, +HHMM, +HH:MM, or none (then the zone option applies)
 *   "epoch"     seconds, optionally with a fraction ("1700000000.25"), optional '-'
 *   "epoch_ms", "epoch_us", "epoch_ns"   integers (epoch_ms may have a fraction)
 *   "syslog"    "Dec 10 06:55:46" or "Dec  1 06:55:46.123" (RFC 3164); the year is the
 *               one that puts the time within the 12 months before ref_us + 1 day
 *   "apache"    "Sun Dec 04 04:47:44 2005" (optionally ".frac" after seconds, error log)
 *               or "10/Oct/2000:13:55:36 -0700" (common log); either may be in [brackets]
 *   "clf"       the same as "apache" (the name operators know the common log format by)
 *   anything containing '%': a custom format; conversions
 *     %Y 4-digit year   %y 2-digit year (69-99 = 19xx, 00-68 = 20xx)   %m month 1-12
 *     %d day 1-31   %e day, space-padded or not   %j day of year 1-366   %H hour 0-23
 *     %I hour 1-12 with %p AM/PM   %M minute   %S second 0-60   %f fraction digits (1-9
 *     kept, more digits accepted and truncated; write the '.' yourself)   %s epoch seconds
 *     %z Z, +HH, +HHMM or +HH:MM   %b/%h month name, 3 letters   %B full month name
 *     %a/%A weekday name (checked as letters, ignored)   %T = %H:%M:%S   %F = %Y-%m-%d
 *     %% a '%'; a space matches one or more spaces/tabs; other bytes match themselves.
 *     Numbers take 1-2 digits (%j 1-3, %Y exactly 4). Without %Y/%y the year is inferred
 *     as for syslog; missing month/day default to 1, missing time fields to 0.
 * zone applies when the string carries no offset: NULL/empty or "UTC" or "Z" for UTC, or
 * a fixed offset "+HH:MM", "-HHMM", "+HH". Named zones other than UTC ("local",
 * "Europe/Paris") are FLOE_EUNSUPPORTED here: the system's zone is given as a function
 * (floe_ts_format_set_zone), this file never reads a tz database.
 * Returns 0 and the format in *out (owned; floe_ts_format_free), or FLOE_EINVAL for an
 * unknown spec or bad conversion, FLOE_EUNSUPPORTED, FLOE_ENOMEM (*out untouched); err
 * (may be NULL) receives the reason. Borrows spec and zone only during the call. */
int floe_ts_format_new(struct floe_alloc *a, const char *spec, size_t slen, const char *zone,
		       size_t zlen, struct floe_ts_format **out, struct floe_err *err);
void floe_ts_format_free(struct floe_ts_format *f);
/* Makes times without an offset be in zone (borrowed: it must outlive f; NULL: the zone
 * given to floe_ts_format_new again), the system's for zone: local (agent/env/env.h): a
 * time is read as if it were UTC, then converted, ref_us choosing between the two
 * readings of an hour the zone repeats, and a year-less time's year is inferred from
 * ref_us's date in the zone. The parser stays pure: the zone is the caller's function. */
void floe_ts_format_set_zone(struct floe_ts_format *f, const struct floe_zone_fn *zone);

/* Parses s[0..len) (no NUL needed). ref_us is the reference time for year inference
 * (normally the receive time; only read by syslog and year-less custom formats). With
 * consumed == NULL the whole string must match; otherwise trailing bytes are allowed and
 * *consumed receives how many bytes the timestamp took. Fractions below a µs are
 * truncated: toward the past for dates and epoch_ns, toward zero for a negative "epoch"
 * or "epoch_ms" with more fraction digits than µs. Returns 0 with *out_us, or
 * FLOE_EPARSE (bad syntax or an out-of-range field such as Feb 30) or FLOE_ELIMIT (an
 * epoch number out of range). */
int floe_ts_parse(const struct floe_ts_format *f, const char *s, size_t len, int64_t ref_us,
		  int64_t *out_us, size_t *consumed);

/* The month (1-12) of its three-letter English name as Apache and nginx write it
 * ("Jan", "Oct"), read at m[0..3), or 0. A switch over the three bytes as one number: a
 * memcmp call per month cost more than the rest of an access-log time, and a loop over
 * the twelve about 170 instructions a line. */
unsigned floe_ts_month_abbr(const char *m);
/* "10/Oct/2000:13:55:36 -0700" exactly (n must be 26), the time Apache's %t and nginx's
 * $time_local write, read at fixed places into µs since the epoch: false for any other
 * shape or a value out of range (a day past its month's end, an hour of 24, a zone of
 * 24 hours or more). */
bool floe_ts_clf(const char *t, size_t n, int64_t *us);

/* The minute of the last time floe_ts_clf_memo read: caller-owned, zeroed to start (then
 * it holds none), one per stream of lines. */
struct floe_ts_clf_memo {
	int64_t minute_us; /* that time at its minute's second 0, in µs */
	char key[26];	   /* the time as written; its seconds (key[18..20)) are not compared */
	bool set;
};
/* floe_ts_clf, remembering the minute in m: a time of the same day, minute and zone as
 * the last one read (most lines of a log: a minute's lines come in a row) costs a
 * compare and the read of its seconds instead of the whole reading (about 280
 * instructions). The same result as floe_ts_clf's for every t. */
bool floe_ts_clf_memo(struct floe_ts_clf_memo *m, const char *t, size_t n, int64_t *us);

/* floe_ts_parse with the "rfc3339" format, without a format object (container runtimes
 * write RFC 3339 with nanoseconds). */
int floe_ts_parse_rfc3339(const char *s, size_t len, int64_t *out_us, size_t *consumed);

/* Parses a zone option ("UTC", "Z", "+02:00", "-0530", "+02") into seconds east of UTC.
 * Returns 0, FLOE_EUNSUPPORTED for a named zone, FLOE_EINVAL otherwise. */
int floe_ts_zone_parse(const char *z, size_t n, int32_t *off_s);

#endif

/* Internal to the syslog parsers (syslog_detect.c, syslog5424.c, syslog3164.c, syslog.c):
 * the helpers both formats share, which syslog.c defines. Not for other modules: use
 * syslog.h. */
#ifndef FLOE_SYSLOG_INT_H
#define FLOE_SYSLOG_INT_H

#include "syslog.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A BSD timestamp as written, before a year is chosen. */
struct floe_syslog_bsd {
	int mon, day, hour, min, sec; /* mon 1-12 (from the name), the rest as read */
	int64_t year;		      /* 0 when the message carries none */
	int64_t frac_us;
};

/* The length of p[0..len) without its trailing LF, CR and NUL bytes. */
size_t floe_syslog_trim(const char *p, size_t len);

/* Resets m to "the whole of p[0..len) is the message, nothing else known". */
void floe_syslog_init(struct floe_syslog_msg *m, const char *p, size_t len);

/* Marks m as failed at off for why: the caller keeps p[0..len) whole. Returns
 * FLOE_EPARSE. */
int floe_syslog_fail(struct floe_syslog_msg *m, const char *p, size_t len, const char *why,
		     size_t off);

/* Reads `<PRIVAL>` at the start of p: 1-3 digits, no leading zero except "0", 0..191.
 * Returns 0 with *pri and *end (the offset after '>'), or FLOE_EPARSE with *end at the
 * offending byte and *why set. */
int floe_syslog_pri(const char *p, size_t len, int *pri, size_t *end, const char **why);

/* Sets facility and severity from a PRI value. */
void floe_syslog_set_pri(struct floe_syslog_msg *m, int pri);

/* Scans a BSD timestamp at s[0..n): `Mmm dd [yyyy ]hh:mm:ss[.frac]` with a space- or
 * zero-padded or single-digit day; it must be followed by the end, SP or ':'. Returns the
 * bytes it takes (0 when s does not start with one). Only the shape is checked here. */
size_t floe_syslog_bsd_scan(const char *s, size_t n, struct floe_syslog_bsd *t);

/* The time the reading of local (a civil time as if it were UTC, µs) is chosen nearer
 * to where the zone repeats it: o->hint_us when it is within a day of local (the
 * previous line of the same log), else the receive time (no hint, or one of another
 * file of the input far from this line's time). */
static inline int64_t floe_syslog_hint(const struct floe_syslog_opts *o, int64_t local)
{
	const int64_t day = 86400LL * 1000000;
	if (o->hint_us && o->hint_us - day < local && local < o->hint_us + day)
		return o->hint_us;
	return o->received_us;
}

/* Turns a scanned BSD timestamp into µs UTC in zone zone_off_s, or in zone when it is not
 * NULL, inferring the year from o->received_us when t has none
 * (FLOE_SYSLOG_FUTURE_SKEW_S). Returns 0, or FLOE_EFORMAT with *why for an invalid date
 * or time. */
int floe_syslog_bsd_time(const struct floe_syslog_bsd *t, const struct floe_syslog_opts *o,
			 int32_t zone_off_s, const struct floe_zone_fn *zone, int64_t *out_us,
			 const char **why);
/* floe_syslog_ts_rfc3339 with a missing offset allowed: o's zone (or zone_off_s) applies,
 * floe_syslog_hint(o) its hint. */
int floe_syslog_ts_rfc3339_in(const char *s, size_t len, const struct floe_syslog_opts *o,
			      int64_t *out_us, size_t *err_off);

#endif

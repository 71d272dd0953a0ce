/* What both syslog formats share: PRI, RFC 3339 and BSD timestamps (with the year
 * inferred from the receive time) and the message's defaults. RFC 3339 text is read and
 * calendar arithmetic done by the base layer (formats/base/rfc3339.h, civil.h), as for
 * every other input; nothing here reads a clock or a zone (a zone: local is a function
 * the caller gives, struct floe_zone_fn). The files call one
 * way: syslog_detect.c (format detection, failure attributes) -> syslog5424.c and
 * syslog3164.c -> this file. */
#include "syslog.h"
#include "syslog_int.h"

#include "agent/env/env.h"
#include "agent/parse/timestamp.h"
#include "formats/base/civil.h"
#include "formats/base/error.h"
#include "formats/base/rfc3339.h"
#include "formats/base/scan.h"

#include <string.h>

#define US_PER_S INT64_C(1000000)
#define US_PER_DAY (INT64_C(86400) * US_PER_S)
/* Receive times beyond ±3000 years are not times: refusing them keeps every sum below
 * far from int64 overflow. */
#define RECV_LIMIT_US (INT64_C(3000) * 366 * US_PER_DAY)

static bool isdig(char c)
{
	return c >= '0' && c <= '9';
}

size_t floe_syslog_trim(const char *p, size_t len)
{
	while (len > 0 && (p[len - 1] == '\n' || p[len - 1] == '\r' || p[len - 1] == '\0'))
		len--;
	return len;
}

void floe_syslog_init(struct floe_syslog_msg *m, const char *p, size_t len)
{
	memset(m, 0, sizeof(*m));
	m->format = FLOE_SYSLOG_PLAIN;
	/* The message column is never null: an empty input still gives a non-NULL slice. */
	m->message.p = len ? p : "";
	m->message.len = len;
}

int floe_syslog_fail(struct floe_syslog_msg *m, const char *p, size_t len, const char *why,
		     size_t off)
{
	floe_syslog_init(m, p, len);
	m->format = FLOE_SYSLOG_INVALID;
	m->error = why;
	m->error_off = off;
	return FLOE_EPARSE;
}

int floe_syslog_pri(const char *p, size_t len, int *pri, size_t *end, const char **why)
{
	if (len == 0 || p[0] != '<') {
		*end = 0;
		*why = "no PRI";
		return FLOE_EPARSE;
	}
	size_t i = 1;
	int v = 0;
	while (i < len && i <= 4 && isdig(p[i])) {
		v = v * 10 + (p[i] - '0');
		i++;
	}
	size_t nd = i - 1;
	if (nd == 0 || nd > 3 || (nd > 1 && p[1] == '0')) {
		*end = nd > 3 ? 4 : 1;
		*why = nd == 0	? "PRI without digits"
		       : nd > 3 ? "PRI over 3 digits"
				: "PRI with a leading zero";
		return FLOE_EPARSE;
	}
	if (v > 191) {
		*end = 1;
		*why = "PRI over 191";
		return FLOE_EPARSE;
	}
	if (i >= len || p[i] != '>') {
		*end = i;
		*why = "PRI without '>'";
		return FLOE_EPARSE;
	}
	*pri = v;
	*end = i + 1;
	return 0;
}

void floe_syslog_set_pri(struct floe_syslog_msg *m, int pri)
{
	m->has_facility = m->has_severity = true;
	m->facility = pri / 8;
	m->severity = pri % 8;
}

/* Exactly k digits at s[*i]. */
static bool digits(const char *s, size_t n, size_t *i, int k, int *out)
{
	return floe_scan_digits(s, n, i, k, k, out);
}

static bool lit(const char *s, size_t n, size_t *i, char c)
{
	return floe_scan_char(s, n, i, c);
}

/* µs UTC of a validated local date and time at offset off_s, by the one leap-second rule
 * (formats/base/civil.h). The inputs are validated and the years bounded by
 * RECV_LIMIT_US or four digits, so the sum cannot overflow. */
static int64_t to_us(int64_t y, int mon, int day, int h, int mi, int s, int64_t frac, int32_t off_s)
{
	int64_t us = 0;
	(void)floe_civil_us(floe_civil_to_days(y, (unsigned)mon, (unsigned)day), (unsigned)h,
			    (unsigned)mi, (unsigned)s, frac, off_s, &us);
	return us;
}

int floe_syslog_ts_rfc3339(const char *s, size_t len, const int32_t *zone_off_s, int64_t *out_us,
			   size_t *err_off)
{
	size_t dummy;
	if (!err_off)
		err_off = &dummy;
	struct floe_rfc3339 t;
	unsigned flags = FLOE_RFC3339_FRAC9 | (zone_off_s ? FLOE_RFC3339_ZONELESS : 0);
	int rc = floe_rfc3339_scan(s, len, flags, &t, err_off);
	if (rc == 0 && (rc = floe_rfc3339_us(&t, zone_off_s ? *zone_off_s : 0, out_us)))
		rc = FLOE_EFORMAT; /* four-digit years stay far inside int64 µs */
	return rc;
}

int floe_syslog_ts_rfc3339_in(const char *s, size_t len, const struct floe_syslog_opts *o,
			      int64_t *out_us, size_t *err_off)
{
	size_t dummy;
	if (!err_off)
		err_off = &dummy;
	struct floe_rfc3339 t;
	int rc = floe_rfc3339_scan(s, len, FLOE_RFC3339_FRAC9 | FLOE_RFC3339_ZONELESS, &t, err_off);
	bool local = rc == 0 && !t.has_off && o->zone;
	if (rc == 0 && (rc = floe_rfc3339_us(&t, local ? 0 : o->zone_off_s, out_us)))
		rc = FLOE_EFORMAT; /* four-digit years stay far inside int64 µs */
	if (rc == 0 && local)
		*out_us = o->zone->to_utc(o->zone->ctx, *out_us, floe_syslog_hint(o, *out_us));
	return rc;
}

static int month_of(const char *s)
{
	static const char names[] = "janfebmaraprmayjunjulaugsepoctnovdec";
	char l[3];
	for (int j = 0; j < 3; j++)
		l[j] = (char)(s[j] >= 'A' && s[j] <= 'Z' ? s[j] + 32 : s[j]);
	for (int m = 0; m < 12; m++)
		if (memcmp(names + 3 * m, l, 3) == 0)
			return m + 1;
	return 0;
}

size_t floe_syslog_bsd_scan(const char *s, size_t n, struct floe_syslog_bsd *t)
{
	memset(t, 0, sizeof(*t));
	if (n < 3 || !(t->mon = month_of(s)))
		return 0;
	size_t i = 3;
	if (!lit(s, n, &i, ' '))
		return 0;
	(void)lit(s, n, &i, ' ');
	/* One or two day digits: "Jun  4", "Jun 4" and "Jun 04" are all written. */
	if (!digits(s, n, &i, 1, &t->day))
		return 0;
	int d2;
	size_t j = i;
	if (digits(s, n, &j, 1, &d2)) {
		t->day = t->day * 10 + d2;
		i = j;
	}
	if (!lit(s, n, &i, ' '))
		return 0;
	/* Cisco IOS (`service timestamps ... year`) and ASA put the year before the time. */
	int y;
	j = i;
	if (digits(s, n, &j, 4, &y) && lit(s, n, &j, ' ')) {
		t->year = y;
		i = j;
	}
	if (!digits(s, n, &i, 2, &t->hour) || !lit(s, n, &i, ':') ||
	    !digits(s, n, &i, 2, &t->min) || !lit(s, n, &i, ':') || !digits(s, n, &i, 2, &t->sec))
		return 0;
	if (lit(s, n, &i, '.') && !floe_scan_fraction(s, n, &i, 64, &t->frac_us))
		return 0;
	if (i < n && s[i] != ' ' && s[i] != ':')
		return 0;
	return i;
}

static bool bsd_valid(const struct floe_syslog_bsd *t, int64_t y)
{
	return t->day >= 1 && t->day <= (int)floe_civil_days_in_month(y, (unsigned)t->mon);
}

/* The µs UTC of a BSD time in year y: at zone_off_s, or through zone (the civil time read
 * as UTC, then converted; hint, floe_syslog_hint, picks the reading of a repeated hour). */
static int64_t bsd_us(const struct floe_syslog_bsd *t, int64_t y, int32_t zone_off_s,
		      const struct floe_zone_fn *zone, const struct floe_syslog_opts *o)
{
	if (!zone)
		return to_us(y, t->mon, t->day, t->hour, t->min, t->sec, t->frac_us, zone_off_s);
	int64_t local = to_us(y, t->mon, t->day, t->hour, t->min, t->sec, t->frac_us, 0);
	return zone->to_utc(zone->ctx, local, floe_syslog_hint(o, local));
}

int floe_syslog_bsd_time(const struct floe_syslog_bsd *t, const struct floe_syslog_opts *o,
			 int32_t zone_off_s, const struct floe_zone_fn *zone, int64_t *out_us,
			 const char **why)
{
	if (t->hour > 23 || t->min > 59 || t->sec > 60) {
		*why = "time out of range";
		return FLOE_EFORMAT;
	}
	if (t->year) {
		if (!bsd_valid(t, t->year)) {
			*why = "day out of range";
			return FLOE_EFORMAT;
		}
		*out_us = bsd_us(t, t->year, zone_off_s, zone, o);
		return 0;
	}
	int64_t recv = o->received_us;
	if (recv > RECV_LIMIT_US || recv < -RECV_LIMIT_US) {
		*why = "receive time out of range";
		return FLOE_EFORMAT;
	}
	/* The receive time's year in the sender's zone, then the latest of the years around
	 * it that is not further in the future than the allowed skew. */
	int64_t off = zone ? zone->offset_at(zone->ctx, recv) : zone_off_s;
	int64_t local = recv + off * US_PER_S;
	int64_t days = local / US_PER_DAY - (local % US_PER_DAY < 0);
	int64_t y;
	unsigned cm, cd;
	floe_civil_from_days(days, &y, &cm, &cd);
	int64_t limit = recv + (int64_t)FLOE_SYSLOG_FUTURE_SKEW_S * US_PER_S;
	for (int64_t cand = y + 1; cand >= y - 1; cand--) {
		if (!bsd_valid(t, cand))
			continue;
		int64_t us = bsd_us(t, cand, zone_off_s, zone, o);
		if (us <= limit) {
			*out_us = us;
			return 0;
		}
	}
	*why = "day out of range";
	return FLOE_EFORMAT;
}

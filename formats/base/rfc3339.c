/* RFC 3339 and ISO 8601 date-times (see rfc3339.h). The scan checks the syntax first and
 * the ranges last, so that in ISO 8601 mode an unreadable time falls back to the date
 * alone while a readable one out of range is an error, as in strict mode. */
#include "rfc3339.h"

#include "civil.h"
#include "error.h"
#include "scan.h"

/* Exactly k digits at s[*i]; *i stops at the first byte that is not one. */
static bool digits(const char *s, size_t n, size_t *i, int k, unsigned *out)
{
	int v;
	if (!floe_scan_digits(s, n, i, k, k, &v))
		return false;
	*out = (unsigned)v;
	return true;
}

static bool lit(const char *s, size_t n, size_t *i, char c)
{
	return floe_scan_char(s, n, i, c);
}

static bool isdig(char c)
{
	return c >= '0' && c <= '9';
}

/* Where each field starts, for the offset of a range error. */
struct at {
	size_t month, day, hour, minute, second, off;
	unsigned off_h, off_m;
};

/* Z, or a sign and HH:MM (iso: also HH and HHMM). Syntax only: the ranges are checked
 * with the others. */
static bool offset(const char *s, size_t n, size_t *i, bool iso, struct floe_rfc3339 *t,
		   struct at *at)
{
	if (lit(s, n, i, 'Z') || lit(s, n, i, 'z')) {
		t->off_s = 0;
		at->off_h = at->off_m = 0;
		return true;
	}
	if (*i >= n || (s[*i] != '+' && s[*i] != '-'))
		return false;
	int sign = s[*i] == '-' ? -1 : 1;
	at->off = ++(*i);
	at->off_m = 0;
	if (!digits(s, n, i, 2, &at->off_h))
		return false;
	if (lit(s, n, i, ':')) {
		if (!digits(s, n, i, 2, &at->off_m))
			return false;
	} else if (!iso) {
		return false;
	} else if (*i < n && isdig(s[*i]) && !digits(s, n, i, 2, &at->off_m)) {
		return false;
	}
	t->off_s = sign * (int32_t)(at->off_h * 3600 + at->off_m * 60);
	return true;
}

/* HH:MM:SS[.frac] (ext) or HHMM[SS[.frac]]; iso allows ',' and leaving out seconds. */
static bool time_of_day(const char *s, size_t n, size_t *i, bool ext, unsigned flags,
			struct floe_rfc3339 *t, struct at *at)
{
	bool iso = flags & FLOE_RFC3339_ISO8601;
	at->hour = *i;
	if (!digits(s, n, i, 2, &t->hour) || (ext && !lit(s, n, i, ':')))
		return false;
	at->minute = *i;
	if (!digits(s, n, i, 2, &t->minute))
		return false;
	at->second = *i;
	bool has_sec = ext ? lit(s, n, i, ':') : (*i < n && isdig(s[*i]));
	if (!has_sec)
		return iso;
	at->second = *i;
	if (!digits(s, n, i, 2, &t->second))
		return false;
	if (lit(s, n, i, '.') || (iso && lit(s, n, i, ',')))
		return floe_scan_fraction(s, n, i, flags & FLOE_RFC3339_FRAC9 ? 9 : 0, &t->frac_us);
	return true;
}

/* The date at s[0..]: YYYY-MM-DD, or (iso) YYYYMMDD; *ext says which. */
static bool date(const char *s, size_t n, size_t *i, bool iso, bool *ext, struct floe_rfc3339 *t,
		 struct at *at)
{
	unsigned y;
	if (!digits(s, n, i, 4, &y))
		return false;
	t->year = y;
	*ext = lit(s, n, i, '-');
	if (!*ext && !iso)
		return false;
	at->month = *i;
	if (!digits(s, n, i, 2, &t->month) || (*ext && !lit(s, n, i, '-')))
		return false;
	at->day = *i;
	return digits(s, n, i, 2, &t->day);
}

/* The syntax of the whole date-time; *i at the first byte that does not fit. */
static bool syntax(const char *s, size_t n, size_t *i, unsigned flags, struct floe_rfc3339 *t,
		   struct at *at)
{
	bool iso = flags & FLOE_RFC3339_ISO8601, ext;
	if (!date(s, n, i, iso, &ext, t, at))
		return false;
	size_t date_end = *i;
	bool sep = *i < n && (s[*i] == 'T' || s[*i] == 't' || (ext && s[*i] == ' '));
	if (sep) {
		(*i)++;
		if (time_of_day(s, n, i, ext, flags, t, at)) {
			size_t before = *i;
			if (offset(s, n, i, iso, t, at)) {
				t->has_off = true;
				return true;
			}
			/* Without an offset: where one may be left out, or ISO 8601's local
			 * time followed by other text. */
			if (iso || (flags & FLOE_RFC3339_ZONELESS && before == n)) {
				*i = before;
				return true;
			}
			return false;
		}
		if (!iso)
			return false;
	} else if (!iso) {
		return false;
	}
	/* ISO 8601: the date alone, at midnight. */
	*i = date_end;
	t->hour = t->minute = t->second = 0;
	t->frac_us = 0;
	return true;
}

/* The field of t out of range, or 0 when none is (no field starts at byte 0). */
static size_t out_of_range(const struct floe_rfc3339 *t, const struct at *at)
{
	if (t->month < 1 || t->month > 12)
		return at->month;
	if (t->day < 1 || t->day > floe_civil_days_in_month(t->year, t->month))
		return at->day;
	if (t->hour > 23)
		return at->hour;
	if (t->minute > 59)
		return at->minute;
	if (t->second > 60)
		return at->second;
	if (t->has_off && (at->off_h > 23 || at->off_m > 59))
		return at->off;
	return 0;
}

int floe_rfc3339_scan(const char *s, size_t n, unsigned flags, struct floe_rfc3339 *t,
		      size_t *end)
{
	struct floe_rfc3339 v = {.month = 1, .day = 1};
	struct at at = {0};
	size_t i = 0;
	if (!s || !syntax(s, n, &i, flags, &v, &at) || (!(flags & FLOE_RFC3339_PREFIX) && i != n)) {
		*end = i < n ? i : n;
		return FLOE_EPARSE;
	}
	size_t bad = out_of_range(&v, &at);
	if (bad) {
		*end = bad;
		return FLOE_EFORMAT;
	}
	*t = v;
	*end = i;
	return 0;
}

int floe_rfc3339_us(const struct floe_rfc3339 *t, int32_t zone_off_s, int64_t *us)
{
	int64_t days = floe_civil_to_days(t->year, t->month, t->day);
	int64_t off = t->has_off ? t->off_s : zone_off_s;
	return floe_civil_us(days, t->hour, t->minute, t->second, t->frac_us, off, us)
		   ? 0
		   : FLOE_ELIMIT;
}

int floe_rfc3339_unix_s(const char *p, size_t n, int64_t *unix_s)
{
	struct floe_rfc3339 t;
	size_t end;
	int64_t us;
	if (floe_rfc3339_scan(p, n, 0, &t, &end) || floe_rfc3339_us(&t, 0, &us))
		return FLOE_EPARSE;
	*unix_s = us / 1000000 - (us % 1000000 < 0);
	return 0;
}

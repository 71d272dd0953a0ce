/* Timestamp parsing: each format fills a broken-down time, and one function turns that
 * into µs with the base layer's calendar (formats/base/civil.h, which holds the one
 * leap-second rule) and the string's offset (or the zone option). RFC 3339 and ISO 8601
 * strings are read by formats/base/rfc3339.h, as every input reads them. Nothing here
 * touches the process time zone. */
#include "timestamp.h"

#include "agent/env/env.h"

#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/civil.h"
#include "formats/base/error.h"
#include "formats/base/rfc3339.h"
#include "formats/base/scan.h"

#include <stdbool.h>
#include <string.h>

enum ts_kind {
	TS_RFC3339,
	TS_ISO8601,
	TS_EPOCH,
	TS_EPOCH_MS,
	TS_EPOCH_US,
	TS_EPOCH_NS,
	TS_SYSLOG,
	TS_APACHE,
	TS_CUSTOM,
};

struct floe_ts_format {
	struct floe_alloc *alloc;
	enum ts_kind kind;
	int32_t zone_off;
	const struct floe_zone_fn *zone; /* zone: local (floe_ts_format_set_zone), or NULL */
	size_t flen;
	char fmt[]; /* the custom format */
};

/* A broken-down time as read from a string. */
struct tsv {
	int64_t year;
	int mon, day, yday, hour, min, sec;
	int64_t frac_us;
	int32_t off;
	bool has_year, has_off, has_yday, hour12, pm;
	bool has_epoch;
	int64_t epoch_s;
};

#define US_PER_S INT64_C(1000000)
#define US_PER_DAY (INT64_C(86400) * US_PER_S)

static const char *const month_names[12] = {"january",	 "february", "march",	 "april",
					    "may",	 "june",     "july",	 "august",
					    "september", "october",  "november", "december"};

static bool isdig(char c)
{
	return c >= '0' && c <= '9';
}

static char lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c + 32) : c;
}

/* Reads min..max digits at *i. */
static bool num(const char *s, size_t n, size_t *i, int min, int max, int *out)
{
	return floe_scan_digits(s, n, i, min, max, out);
}

static bool lit(const char *s, size_t n, size_t *i, char c)
{
	return floe_scan_char(s, n, i, c);
}

/* Fraction digits: the first six make µs, the rest are read and dropped. */
static bool frac(const char *s, size_t n, size_t *i, int64_t *us)
{
	return floe_scan_fraction(s, n, i, 0, us);
}

/* Z, or +HH, +HHMM, +HH:MM: a custom format's %z and the zone option. */
static bool offset(const char *s, size_t n, size_t *i, int32_t *off)
{
	if (*i < n && (s[*i] == 'Z' || s[*i] == 'z')) {
		(*i)++;
		*off = 0;
		return true;
	}
	if (*i >= n || (s[*i] != '+' && s[*i] != '-'))
		return false;
	int sign = s[*i] == '-' ? -1 : 1;
	(*i)++;
	int h, m = 0;
	if (!num(s, n, i, 2, 2, &h))
		return false;
	if (lit(s, n, i, ':')) {
		if (!num(s, n, i, 2, 2, &m))
			return false;
	} else if (*i < n && isdig(s[*i])) {
		if (!num(s, n, i, 2, 2, &m))
			return false;
	}
	if (h > 23 || m > 59)
		return false;
	*off = sign * (h * 3600 + m * 60);
	return true;
}

static bool month_abbr(const char *s, size_t n, size_t *i, int *mon)
{
	if (n - *i < 3)
		return false;
	for (int k = 0; k < 12; k++) {
		if (lower(s[*i]) == month_names[k][0] && lower(s[*i + 1]) == month_names[k][1] &&
		    lower(s[*i + 2]) == month_names[k][2]) {
			*mon = k + 1;
			*i += 3;
			return true;
		}
	}
	return false;
}

static bool month_full(const char *s, size_t n, size_t *i, int *mon)
{
	for (int k = 0; k < 12; k++) {
		size_t l = strlen(month_names[k]);
		if (n - *i < l)
			continue;
		size_t j = 0;
		while (j < l && lower(s[*i + j]) == month_names[k][j])
			j++;
		if (j == l) {
			*mon = k + 1;
			*i += l;
			return true;
		}
	}
	return false;
}

static bool letters(const char *s, size_t n, size_t *i)
{
	size_t st = *i;
	while (*i < n && ((s[*i] >= 'a' && s[*i] <= 'z') || (s[*i] >= 'A' && s[*i] <= 'Z')))
		(*i)++;
	return *i > st;
}

static bool hms(const char *s, size_t n, size_t *i, struct tsv *t)
{
	return num(s, n, i, 2, 2, &t->hour) && lit(s, n, i, ':') && num(s, n, i, 2, 2, &t->min) &&
	       lit(s, n, i, ':') && num(s, n, i, 2, 2, &t->sec);
}

static bool ymd_ext(const char *s, size_t n, size_t *i, struct tsv *t)
{
	int y;
	if (!num(s, n, i, 4, 4, &y) || !lit(s, n, i, '-') || !num(s, n, i, 2, 2, &t->mon) ||
	    !lit(s, n, i, '-') || !num(s, n, i, 2, 2, &t->day))
		return false;
	t->year = y;
	t->has_year = true;
	return true;
}

/* rfc3339 and iso8601: the base layer's parser, which every input shares. */
static bool p_rfc3339(const char *s, size_t n, size_t *i, bool iso, bool prefix, struct tsv *t)
{
	unsigned flags = (iso ? FLOE_RFC3339_ISO8601 : 0) | (prefix ? FLOE_RFC3339_PREFIX : 0);
	struct floe_rfc3339 r;
	if (floe_rfc3339_scan(s, n, flags, &r, i))
		return false;
	t->year = r.year;
	t->has_year = true;
	t->mon = (int)r.month;
	t->day = (int)r.day;
	t->hour = (int)r.hour;
	t->min = (int)r.minute;
	t->sec = (int)r.second;
	t->frac_us = r.frac_us;
	t->off = r.off_s;
	t->has_off = r.has_off;
	return true;
}

static bool p_syslog(const char *s, size_t n, size_t *i, struct tsv *t)
{
	if (!month_abbr(s, n, i, &t->mon) || !lit(s, n, i, ' '))
		return false;
	lit(s, n, i, ' '); /* "Dec  1": day padded with a space */
	if (!num(s, n, i, 1, 2, &t->day) || !lit(s, n, i, ' ') || !hms(s, n, i, t))
		return false;
	size_t save = *i;
	if (lit(s, n, i, '.') && !frac(s, n, i, &t->frac_us))
		*i = save;
	return true;
}

static bool p_apache(const char *s, size_t n, size_t *i, struct tsv *t)
{
	bool br = lit(s, n, i, '[');
	int y;
	if (*i < n && isdig(s[*i])) {
		/* Common log: 10/Oct/2000:13:55:36 -0700 */
		if (!num(s, n, i, 2, 2, &t->day) || !lit(s, n, i, '/') ||
		    !month_abbr(s, n, i, &t->mon) || !lit(s, n, i, '/') ||
		    !num(s, n, i, 4, 4, &y) || !lit(s, n, i, ':') || !hms(s, n, i, t) ||
		    !lit(s, n, i, ' ') || !offset(s, n, i, &t->off))
			return false;
		t->has_off = true;
	} else {
		/* Error log: Sun Dec 04 04:47:44 2005, or with .frac after the seconds. */
		if (!letters(s, n, i) || !lit(s, n, i, ' ') || !month_abbr(s, n, i, &t->mon) ||
		    !lit(s, n, i, ' '))
			return false;
		lit(s, n, i, ' ');
		if (!num(s, n, i, 1, 2, &t->day) || !lit(s, n, i, ' ') || !hms(s, n, i, t))
			return false;
		if (lit(s, n, i, '.') && !frac(s, n, i, &t->frac_us))
			return false;
		if (!lit(s, n, i, ' ') || !num(s, n, i, 4, 4, &y))
			return false;
	}
	t->year = y;
	t->has_year = true;
	return !br || lit(s, n, i, ']');
}

unsigned floe_ts_month_abbr(const char *m)
{
	uint32_t name = (uint32_t)(unsigned char)m[0] << 16 | (uint32_t)(unsigned char)m[1] << 8 |
			(unsigned char)m[2];
#define MON(a, b, c) ((uint32_t)(a) << 16 | (uint32_t)(b) << 8 | (uint32_t)(c))
	switch (name) {
	case MON('J', 'a', 'n'):
		return 1;
	case MON('F', 'e', 'b'):
		return 2;
	case MON('M', 'a', 'r'):
		return 3;
	case MON('A', 'p', 'r'):
		return 4;
	case MON('M', 'a', 'y'):
		return 5;
	case MON('J', 'u', 'n'):
		return 6;
	case MON('J', 'u', 'l'):
		return 7;
	case MON('A', 'u', 'g'):
		return 8;
	case MON('S', 'e', 'p'):
		return 9;
	case MON('O', 'c', 't'):
		return 10;
	case MON('N', 'o', 'v'):
		return 11;
	case MON('D', 'e', 'c'):
		return 12;
	default:
		return 0;
	}
#undef MON
}

/* Two digits at t into *out: false when either is not a digit. The time's fields have
 * fixed places, so each is read without a loop. */
static inline bool two(const char *t, unsigned *out)
{
	unsigned a = (unsigned)(unsigned char)t[0] - '0', b = (unsigned)(unsigned char)t[1] - '0';
	*out = a * 10 + b;
	return a <= 9 && b <= 9;
}

bool floe_ts_clf(const char *t, size_t n, int64_t *us)
{
	if (n != 26 || t[2] != '/' || t[6] != '/' || t[11] != ':' || t[14] != ':' || t[17] != ':' ||
	    t[20] != ' ' || (t[21] != '+' && t[21] != '-'))
		return false;
	unsigned day, cent, yy, hour, min, sec, zh, zm, month = floe_ts_month_abbr(t + 3);
	if (!two(t, &day) || !two(t + 7, &cent) || !two(t + 9, &yy) || !two(t + 12, &hour) ||
	    !two(t + 15, &min) || !two(t + 18, &sec) || !two(t + 22, &zh) || !two(t + 24, &zm))
		return false;
	unsigned year = cent * 100 + yy;
	if (!month || day < 1 || day > floe_civil_days_in_month(year, month) || hour > 23 ||
	    min > 59 || sec > 60 || zh > 23 || zm > 59)
		return false;
	int64_t zone = ((int64_t)zh * 60 + zm) * 60 * (t[21] == '-' ? -1 : 1);
	return floe_civil_us(floe_civil_to_days(year, month, day), hour, min, sec, 0, zone, us);
}

/* A time of floe_ts_clf's whose bytes but the seconds' are those of one it read before
 * passes the same checks of them, and its value is linear in the seconds: floe_civil_us
 * adds them to the minute's (second 60 as 59.999999, as there), and no sum can overflow
 * for a four-digit year. So the memo keeps a time whole checked and its minute's µs. */
/* Whether the 26 bytes at t and at k are the same but for [18, 20) (the seconds): in
 * words, since memcmp's two calls cost more than the rest of a hit. */
static inline bool same_minute(const char *t, const char *k)
{
	/* Bytes 16, 17 and 20-23 of the third word; the order of the bytes in a word is the
	 * machine's, so the mask is made from bytes too (a constant once compiled). */
	static const unsigned char keep[8] = {0xff, 0xff, 0, 0, 0xff, 0xff, 0xff, 0xff};
	uint64_t a[3], b[3], mask;
	uint16_t c, d;
	memcpy(a, t, 24);
	memcpy(b, k, 24);
	memcpy(&mask, keep, 8);
	memcpy(&c, t + 24, 2);
	memcpy(&d, k + 24, 2);
	return ((a[0] ^ b[0]) | (a[1] ^ b[1]) | ((a[2] ^ b[2]) & mask) | (uint64_t)(c ^ d)) == 0;
}

bool floe_ts_clf_memo(struct floe_ts_clf_memo *m, const char *t, size_t n, int64_t *us)
{
	unsigned sec;
	if (n == 26 && m->set && same_minute(t, m->key)) {
		if (!two(t + 18, &sec) || sec > 60)
			return false;
		*us = m->minute_us + (sec == 60 ? 59999999 : (int64_t)sec * 1000000);
		return true;
	}
	if (!floe_ts_clf(t, n, us))
		return false;
	two(t + 18, &sec);
	memcpy(m->key, t, 26);
	m->minute_us = *us - (sec == 60 ? 59999999 : (int64_t)sec * 1000000);
	m->set = true;
	return true;
}

/* The common log format as Apache and nginx write it, "10/Oct/2000:13:55:36 -0700"
 * (26 bytes, 28 in brackets), read at fixed places (floe_ts_clf): true with the time in
 * *us and the bytes it took in *used, as p_apache and finish give them (the same checks
 * of the values, a day in its month, an hour below 24, a zone below 24 hours). False for
 * any other shape, a month not written as Apache writes it ("Oct") included, and for a
 * value out of range: the general way reads those (and refuses the last). A regex's
 * time field took about 600 instructions a line through the scans and the broken-down
 * time. */
static bool clf_fixed(const char *s, size_t n, int64_t *us, size_t *used)
{
	size_t b = n && s[0] == '[';
	if (n < 26 + 2 * b || (b && s[27] != ']') || !floe_ts_clf(s + b, 26, us))
		return false;
	*used = 26 + 2 * b;
	return true;
}

/* Integer with optional sign; FLOE_ELIMIT on overflow. */
static int p_int(const char *s, size_t n, size_t *i, bool *neg, int64_t *v)
{
	*neg = lit(s, n, i, '-');
	if (*i >= n || !isdig(s[*i]))
		return FLOE_EPARSE;
	int64_t x = 0;
	while (*i < n && isdig(s[*i])) {
		if (__builtin_mul_overflow(x, 10, &x) || __builtin_add_overflow(x, s[*i] - '0', &x))
			return FLOE_ELIMIT;
		(*i)++;
	}
	*v = x;
	return 0;
}

static int p_epoch(enum ts_kind k, const char *s, size_t n, size_t *i, int64_t *out)
{
	bool neg;
	int64_t v, fr = 0, us;
	int rc = p_int(s, n, i, &neg, &v);
	if (rc)
		return rc;
	int64_t scale = k == TS_EPOCH ? US_PER_S : k == TS_EPOCH_MS ? 1000 : 1;
	if ((k == TS_EPOCH || k == TS_EPOCH_MS) && *i < n && s[*i] == '.') {
		size_t save = (*i)++;
		if (!frac(s, n, i, &fr)) {
			*i = save;
			fr = 0;
		}
		if (k == TS_EPOCH_MS)
			fr /= 1000;
	}
	if (k == TS_EPOCH_NS) {
		us = v / 1000;
		/* Floor toward the past for negative values with a sub-µs part. */
		if (neg && v % 1000)
			us++;
		*out = neg ? -us : us;
		return 0;
	}
	if (__builtin_mul_overflow(v, scale, &us) || __builtin_add_overflow(us, fr, &us))
		return FLOE_ELIMIT;
	*out = neg ? -us : us;
	return 0;
}

/* Reads one %-conversion c of a custom format at s[*i..n) into t: 0 or FLOE_EPARSE (and
 * FLOE_ELIMIT from %s). */
static int conversion(char c, const char *s, size_t n, size_t *i, struct tsv *t)
{
	bool ok = true;
	int y;
	switch (c) {
	case 'Y':
		ok = num(s, n, i, 4, 4, &y);
		t->year = y;
		t->has_year = true;
		break;
	case 'y':
		ok = num(s, n, i, 2, 2, &y);
		t->year = y < 69 ? 2000 + y : 1900 + y;
		t->has_year = true;
		break;
	case 'm':
		ok = num(s, n, i, 1, 2, &t->mon);
		break;
	case 'e':
		lit(s, n, i, ' ');
		ok = num(s, n, i, 1, 2, &t->day);
		break;
	case 'd':
		ok = num(s, n, i, 1, 2, &t->day);
		break;
	case 'j':
		ok = num(s, n, i, 1, 3, &t->yday);
		t->has_yday = true;
		break;
	case 'H':
		ok = num(s, n, i, 1, 2, &t->hour);
		break;
	case 'I':
		ok = num(s, n, i, 1, 2, &t->hour);
		t->hour12 = true;
		break;
	case 'M':
		ok = num(s, n, i, 1, 2, &t->min);
		break;
	case 'S':
		ok = num(s, n, i, 1, 2, &t->sec);
		break;
	case 'T':
		ok = hms(s, n, i, t);
		break;
	case 'F':
		ok = ymd_ext(s, n, i, t);
		break;
	case 'f':
		ok = frac(s, n, i, &t->frac_us);
		break;
	case 'z':
		ok = offset(s, n, i, &t->off);
		t->has_off = true;
		break;
	case 'b':
	case 'h':
		ok = month_abbr(s, n, i, &t->mon);
		break;
	case 'B':
		ok = month_full(s, n, i, &t->mon);
		break;
	case 'a':
	case 'A':
		ok = letters(s, n, i);
		break;
	case 'p':
		if (n - *i >= 2 && (lower(s[*i]) == 'a' || lower(s[*i]) == 'p') &&
		    lower(s[*i + 1]) == 'm') {
			t->pm = lower(s[*i]) == 'p';
			*i += 2;
		} else {
			ok = false;
		}
		break;
	case 's': {
		bool neg;
		int64_t v;
		int rc = p_int(s, n, i, &neg, &v);
		if (rc)
			return rc;
		t->has_epoch = true;
		t->epoch_s = neg ? -v : v;
		break;
	}
	case '%':
		ok = lit(s, n, i, '%');
		break;
	default:
		return FLOE_EPARSE;
	}
	return ok ? 0 : FLOE_EPARSE;
}

static int p_custom(const struct floe_ts_format *f, const char *s, size_t n, size_t *i,
		    struct tsv *t)
{
	const char *fm = f->fmt;
	size_t fl = f->flen;
	for (size_t k = 0; k < fl; k++) {
		char c = fm[k];
		if (c == ' ') {
			if (*i >= n || (s[*i] != ' ' && s[*i] != '\t'))
				return FLOE_EPARSE;
			while (*i < n && (s[*i] == ' ' || s[*i] == '\t'))
				(*i)++;
			continue;
		}
		if (c != '%') {
			if (!lit(s, n, i, c))
				return FLOE_EPARSE;
			continue;
		}
		/* Validated at compile time: a '%' is never last. */
		int rc = conversion(fm[++k], s, n, i, t);
		if (rc)
			return rc;
	}
	return 0;
}

/* Time of year (month/day/time) in a given year at offset off, or false if invalid. */
static bool assemble(const struct tsv *t, int64_t year, int32_t off, int64_t *out)
{
	int64_t days;
	if (t->has_yday) {
		if (t->yday < 1 || t->yday > (floe_civil_is_leap(year) ? 366 : 365))
			return false;
		days = floe_civil_to_days(year, 1, 1) + t->yday - 1;
	} else {
		if (t->mon < 1 || t->mon > 12 || t->day < 1 || t->day > (int)floe_civil_days_in_month(year, (unsigned)t->mon))
			return false;
		days = floe_civil_to_days(year, (unsigned)t->mon, (unsigned)t->day);
	}
	if (t->hour < 0 || t->hour > 23 || t->min < 0 || t->min > 59 || t->sec < 0 || t->sec > 60)
		return false;
	/* Checked: an inferred year comes from the caller's reference time, which may be
	 * anything. */
	return floe_civil_us(days, (unsigned)t->hour, (unsigned)t->min, (unsigned)t->sec, t->frac_us, off,
			     out);
}

static int finish(const struct floe_ts_format *f, struct tsv *t, int64_t ref_us, int64_t *out)
{
	if (t->has_epoch) {
		int64_t us;
		if (__builtin_mul_overflow(t->epoch_s, US_PER_S, &us) ||
		    __builtin_add_overflow(us, t->frac_us, &us))
			return FLOE_ELIMIT;
		*out = us;
		return 0;
	}
	if (t->hour12) {
		if (t->hour < 1 || t->hour > 12)
			return FLOE_EPARSE;
		t->hour = t->hour % 12 + (t->pm ? 12 : 0);
	}
	/* A time without an offset in a zone given as a function (zone: local): read as if it
	 * were UTC, then converted, the reference time choosing between the two readings of
	 * an hour the zone repeats. */
	const struct floe_zone_fn *zone = t->has_off ? NULL : f->zone;
	int32_t off = t->has_off ? t->off : zone ? 0 : f->zone_off;
	if (t->has_year) {
		if (!assemble(t, t->year, off, out))
			return FLOE_EPARSE;
		if (zone)
			*out = zone->to_utc(zone->ctx, *out, ref_us);
		return 0;
	}
	/* No year: the latest of the reference's year +1, 0, -1 that is not more than a
	 * day after the reference (so a Dec 31 line read on Jan 1 lands last year, and a
	 * Jan 1 line read a little early on Dec 31 lands next year). */
	int64_t ref_local = ref_us / US_PER_S + (zone ? zone->offset_at(zone->ctx, ref_us) : off);
	if (ref_us % US_PER_S < 0)
		ref_local--;
	int64_t rdays = ref_local / 86400 - (ref_local % 86400 < 0);
	int64_t ry;
	unsigned rm, rd;
	floe_civil_from_days(rdays, &ry, &rm, &rd);
	int64_t limit = ref_us > INT64_MAX - US_PER_DAY ? INT64_MAX : ref_us + US_PER_DAY;
	for (int64_t y = ry + 1; y >= ry - 1; y--) {
		int64_t us;
		if (!assemble(t, y, off, &us))
			continue;
		if (zone)
			us = zone->to_utc(zone->ctx, us, ref_us);
		if (us <= limit) {
			*out = us;
			return 0;
		}
	}
	/* Feb 29 with no leap year among the candidates, or an invalid date. */
	return FLOE_EPARSE;
}

int floe_ts_parse(const struct floe_ts_format *f, const char *s, size_t len, int64_t ref_us,
		  int64_t *out_us, size_t *consumed)
{
	size_t used;
	int64_t fixed;
	if (f->kind == TS_APACHE && clf_fixed(s, len, &fixed, &used) && (consumed || used == len)) {
		*out_us = fixed;
		if (consumed)
			*consumed = used;
		return 0;
	}
	struct tsv t;
	memset(&t, 0, sizeof(t));
	t.mon = 1;
	t.day = 1;
	size_t i = 0;
	int rc = 0;
	int64_t us = 0;
	bool ok = true;
	switch (f->kind) {
	case TS_RFC3339:
	case TS_ISO8601:
		ok = p_rfc3339(s, len, &i, f->kind == TS_ISO8601, consumed != NULL, &t);
		break;
	case TS_SYSLOG:
		ok = p_syslog(s, len, &i, &t);
		break;
	case TS_APACHE:
		ok = p_apache(s, len, &i, &t);
		break;
	case TS_CUSTOM:
		rc = p_custom(f, s, len, &i, &t);
		break;
	case TS_EPOCH:
	case TS_EPOCH_MS:
	case TS_EPOCH_US:
	case TS_EPOCH_NS:
		rc = p_epoch(f->kind, s, len, &i, &us);
		t.has_epoch = true;
		break;
	}
	if (!ok)
		return FLOE_EPARSE;
	if (rc)
		return rc;
	if (!consumed && i != len)
		return FLOE_EPARSE;
	if (t.has_epoch && f->kind != TS_CUSTOM) {
		*out_us = us;
	} else {
		rc = finish(f, &t, ref_us, &us);
		if (rc)
			return rc;
		*out_us = us;
	}
	if (consumed)
		*consumed = i;
	return 0;
}

int floe_ts_parse_rfc3339(const char *s, size_t len, int64_t *out_us, size_t *consumed)
{
	static const struct floe_ts_format rfc = {.kind = TS_RFC3339};
	return floe_ts_parse(&rfc, s, len, 0, out_us, consumed);
}

int floe_ts_zone_parse(const char *z, size_t n, int32_t *off_s)
{
	if (!z || n == 0 || (n == 3 && memcmp(z, "UTC", 3) == 0) || (n == 1 && z[0] == 'Z')) {
		*off_s = 0;
		return 0;
	}
	size_t i = 0;
	int32_t off;
	if ((z[0] == '+' || z[0] == '-') && offset(z, n, &i, &off) && i == n) {
		*off_s = off;
		return 0;
	}
	for (size_t k = 0; k < n; k++)
		if (!((z[k] >= 'A' && z[k] <= 'Z') || (z[k] >= 'a' && z[k] <= 'z') || z[k] == '/' ||
		      z[k] == '_'))
			return FLOE_EINVAL;
	return FLOE_EUNSUPPORTED;
}

int floe_ts_format_new(struct floe_alloc *a, const char *spec, size_t slen, const char *zone,
		       size_t zlen, struct floe_ts_format **out, struct floe_err *err)
{
	static const struct {
		const char *name;
		enum ts_kind kind;
	} named[] = {
	    {"rfc3339", TS_RFC3339},   {"iso8601", TS_ISO8601},	  {"epoch", TS_EPOCH},
	    {"epoch_ms", TS_EPOCH_MS}, {"epoch_us", TS_EPOCH_US}, {"epoch_ns", TS_EPOCH_NS},
	    {"syslog", TS_SYSLOG},     {"apache", TS_APACHE},
	    {"clf", TS_APACHE}, /* the common log format: the apache parser's bracketed form */
	};
	enum ts_kind kind = TS_CUSTOM;
	bool found = false;
	for (size_t k = 0; k < sizeof(named) / sizeof(named[0]); k++) {
		if (strlen(named[k].name) == slen && memcmp(named[k].name, spec, slen) == 0) {
			kind = named[k].kind;
			found = true;
		}
	}
	if (!found) {
		if (slen == 0 || !memchr(spec, '%', slen))
			return floe_err_set(
			    err, FLOE_EINVAL, "%s",
			    "unknown timestamp format (expected rfc3339, iso8601, epoch, "
			    "epoch_ms, epoch_us, epoch_ns, syslog, apache, clf or a "
			    "%-format)");
		for (size_t k = 0; k < slen; k++) {
			if (spec[k] != '%')
				continue;
			if (k + 1 >= slen || !strchr("YymedjHIMSTFfzbhBaAps%", spec[k + 1]) ||
			    spec[k + 1] == 0)
				return floe_err_at(err, FLOE_EINVAL, k,
						   "unsupported %% conversion in timestamp format");
			k++;
		}
	}
	int32_t off;
	int rc = floe_ts_zone_parse(zone, zlen, &off);
	if (rc)
		return floe_err_set(err, rc, "%s",
				    rc == FLOE_EUNSUPPORTED
					? "named time zones are not supported (use UTC or a fixed "
					  "offset like +02:00)"
					: "bad zone (use UTC or a fixed offset like +02:00)");
	size_t total;
	if (__builtin_add_overflow(sizeof(struct floe_ts_format), slen, &total))
		return floe_err_set(err, FLOE_EINVAL, "timestamp format too long");
	struct floe_ts_format *f = floe_malloc(a, total);
	if (!f)
		return floe_err_set(err, FLOE_ENOMEM, "%s", floe_strerror(FLOE_ENOMEM));
	f->alloc = a;
	f->kind = kind;
	f->zone_off = off;
	f->zone = NULL;
	f->flen = kind == TS_CUSTOM ? slen : 0;
	if (kind == TS_CUSTOM)
		memcpy(f->fmt, spec, slen);
	*out = f;
	return 0;
}

void floe_ts_format_free(struct floe_ts_format *f)
{
	if (f)
		floe_free(f->alloc, f);
}

void floe_ts_format_set_zone(struct floe_ts_format *f, const struct floe_zone_fn *zone)
{
	f->zone = zone;
}

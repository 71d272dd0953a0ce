/* Tests of agent/parse/timestamp (its calendar arithmetic is test_civil's): every
 * built-in format and the custom subset with expected µs values computed independently
 * (Python's datetime), syslog year inference around new year and Feb 29, zone options,
 * rejected dates and formats, prefix parsing, and epoch overflow. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "agent/env/env.h"
#include "agent/parse/timestamp.h"
#include "formats/base/alloc.h"
#include "formats/base/error.h"

#include <stdbool.h>
#include <string.h>

static struct floe_ts_format *fmt(const char *spec, const char *zone)
{
	struct floe_err why = {0};
	struct floe_ts_format *f = NULL;
	int err =
	    floe_ts_format_new(NULL, spec, strlen(spec), zone, zone ? strlen(zone) : 0, &f, &why);
	if (err)
		fail_msg("format %s: %d %s", spec, err, why.msg);
	return f;
}

static int64_t ok(const char *spec, const char *zone, const char *s, int64_t ref)
{
	struct floe_ts_format *f = fmt(spec, zone);
	int64_t us = 0;
	int rc = floe_ts_parse(f, s, strlen(s), ref, &us, NULL);
	floe_ts_format_free(f);
	if (rc)
		fail_msg("%s \"%s\": rc %d", spec, s, rc);
	return us;
}

static int bad(const char *spec, const char *s)
{
	struct floe_ts_format *f = fmt(spec, NULL);
	int64_t us = 0;
	int rc = floe_ts_parse(f, s, strlen(s), 0, &us, NULL);
	floe_ts_format_free(f);
	if (rc == 0)
		fail_msg("%s \"%s\" accepted as %lld", spec, s, (long long)us);
	return rc;
}

static void test_rfc3339(void **state)
{
	assert_int_equal(ok("rfc3339", NULL, "1970-01-01T00:00:00Z", 0), 0);
	assert_int_equal(ok("rfc3339", NULL, "2016-10-06T00:17:09.669794202Z", 0),
			 1475713029669794);
	assert_int_equal(ok("rfc3339", NULL, "2016-10-06t02:17:09.669794+02:00", 0),
			 1475713029669794);
	assert_int_equal(ok("rfc3339", NULL, "2016-10-05 21:17:09.669794-03:00", 0),
			 1475713029669794);
	/* A leap second is the last µs of its minute, whatever its fraction. */
	assert_int_equal(ok("rfc3339", NULL, "2024-02-29T23:59:60.5+02:00", 0), 1709243999999999);
	assert_int_equal(ok("rfc3339", NULL, "1969-12-31T23:59:59.999999z", 0), -1);
	/* Digits beyond µs truncate toward the past, also before 1970. */
	assert_int_equal(ok("rfc3339", NULL, "1969-12-31T23:59:59.9999999Z", 0), -1);
	assert_int_equal(ok("rfc3339", NULL, "0001-01-01T00:00:00Z", 0), -62135596800000000);
	assert_int_equal(ok("rfc3339", NULL, "9999-12-31T23:59:59Z", 0), 253402300799000000);
	/* The zone option does not override an explicit offset. */
	assert_int_equal(ok("rfc3339", "+05:00", "1970-01-01T00:00:00Z", 0), 0);
	bad("rfc3339", "2016-10-06T00:17:09");	    /* offset required */
	bad("rfc3339", "2016-10-06T00:17:09+0200"); /* colon required */
	bad("rfc3339", "2016-10-06T00:17:09.Z");    /* empty fraction */
	bad("rfc3339", "2016-13-06T00:17:09Z");
	bad("rfc3339", "2023-02-29T00:00:00Z");
	bad("rfc3339", "2016-10-06T24:00:00Z");
	bad("rfc3339", "2016-10-06T23:60:00Z");
	bad("rfc3339", "2016-10-06T23:59:61Z");
	bad("rfc3339", "2016-10-06T00:17:09+24:00");
	bad("rfc3339", "2016-10-06T00:17:09Zx");
	bad("rfc3339", "2016-10-6T00:17:09Z");
	bad("rfc3339", "");
	bad("rfc3339", "2016-10-06T00:17");
}

static void test_iso8601(void **state)
{
	assert_int_equal(ok("iso8601", NULL, "2024-01-02", 0), 1704153600000000);
	assert_int_equal(ok("iso8601", "+05:30", "2024-01-02", 0), 1704133800000000);
	assert_int_equal(ok("iso8601", NULL, "20240102T030405,25-0130", 0), 1704170045250000);
	assert_int_equal(ok("iso8601", NULL, "2024-01-02T03:04", 0), 1704164640000000);
	assert_int_equal(ok("iso8601", NULL, "2024-01-02 03:04:00.000Z", 0), 1704164640000000);
	assert_int_equal(ok("iso8601", NULL, "2024-01-02T05:04:00+02", 0), 1704164640000000);
	assert_int_equal(ok("iso8601", "-01:00", "2024-01-02T02:04:00", 0), 1704164640000000);
	bad("iso8601", "2024-01-02T");
	bad("iso8601", "2024-0102");
	bad("iso8601", "2024-01-02T03:04:05+5");
}

static void test_epoch(void **state)
{
	assert_int_equal(ok("epoch", NULL, "1700000000", 0), 1700000000000000);
	assert_int_equal(ok("epoch", NULL, "1700000000.25", 0), 1700000000250000);
	assert_int_equal(ok("epoch", NULL, "-1.5", 0), -1500000);
	assert_int_equal(ok("epoch_ms", NULL, "1700000000123", 0), 1700000000123000);
	assert_int_equal(ok("epoch_ms", NULL, "1700000000123.456789", 0), 1700000000123456);
	assert_int_equal(ok("epoch_us", NULL, "1700000000123456", 0), 1700000000123456);
	assert_int_equal(ok("epoch_ns", NULL, "1700000000123456789", 0), 1700000000123456);
	assert_int_equal(ok("epoch_ns", NULL, "-1", 0), -1);
	assert_int_equal(ok("epoch_ns", NULL, "-1000", 0), -1);
	assert_int_equal(ok("epoch_ns", NULL, "-1001", 0), -2);
	assert_int_equal(bad("epoch", "9223372036855"), FLOE_ELIMIT);
	assert_int_equal(bad("epoch_us", "99999999999999999999999"), FLOE_ELIMIT);
	assert_int_equal(bad("epoch", "1e9"), FLOE_EPARSE);
	assert_int_equal(bad("epoch", "-"), FLOE_EPARSE);
	assert_int_equal(bad("epoch_us", "1.5"), FLOE_EPARSE);
	assert_int_equal(bad("epoch", ""), FLOE_EPARSE);
}

static void test_syslog_year(void **state)
{
	/* Read on 2025-03-01: December is last year. */
	int64_t ref = 1740787200000000;
	assert_int_equal(ok("syslog", NULL, "Dec 10 06:55:46", ref), 1733813746000000);
	/* Dec 31 read just after new year: last year. */
	assert_int_equal(ok("syslog", NULL, "Dec 31 23:59:59", 1767225610000000), 1767225599000000);
	/* Jan 1 read 10 s before new year (clock skew): next year, within a day. */
	assert_int_equal(ok("syslog", NULL, "Jan  1 00:00:30", 1767225590000000), 1767225630000000);
	/* Up to a day ahead stays this year; more goes back a year. */
	int64_t noon = 1740830400000000; /* 2025-03-01T12:00:00Z */
	assert_int_equal(ok("syslog", NULL, "Mar  2 10:00:00", noon), 1740909600000000);
	assert_int_equal(ok("syslog", NULL, "Mar  3 10:00:00", noon), 1709460000000000);
	/* Feb 29 read in 2025: 2024. */
	assert_int_equal(ok("syslog", NULL, "Feb 29 12:00:00", 1748736000000000), 1709208000000000);
	/* Fraction, a 2-digit day, lower case month, a zone option. */
	assert_int_equal(ok("syslog", "+01:00", "dec 10 07:55:46.5", ref), 1733813746500000);
	bad("syslog", "Dec 10 06:55");
	bad("syslog", "Dex 10 06:55:46");
	bad("syslog", "Dec 32 06:55:46");
	bad("syslog", "Dec 10 06:55:46 ");
}

static void test_apache(void **state)
{
	assert_int_equal(ok("apache", NULL, "Sun Dec 04 04:47:44 2005", 0), 1133671664000000);
	assert_int_equal(ok("apache", NULL, "[Sun Dec  4 04:47:44.25 2005]", 0), 1133671664250000);
	assert_int_equal(ok("apache", NULL, "[10/Oct/2000:13:55:36 -0700]", 0), 971211336000000);
	assert_int_equal(ok("apache", NULL, "10/Oct/2000:20:55:36 +0000", 0), 971211336000000);
	/* "clf" names the same parser. */
	assert_int_equal(ok("clf", NULL, "[10/Oct/2000:13:55:36 -0700]", 0), 971211336000000);
	bad("apache", "[10/Oct/2000:13:55:36 -0700");
	bad("apache", "10/Oct/2000:13:55:36");
	bad("apache", "Sun Dec 04 04:47:44");
}

/* One parse of s (consumed or not): rc, µs and bytes taken as one comparable triple. */
struct res {
	int rc;
	int64_t us;
	size_t used;
};

static struct res parse(const struct floe_ts_format *f, const char *s, size_t n, bool prefix)
{
	struct res r = {0, 0, 0};
	r.rc = floe_ts_parse(f, s, n, 0, &r.us, prefix ? &r.used : NULL);
	if (r.rc)
		r.us = 0, r.used = 0;
	return r;
}

/* s with its month's letters upper-cased: the fixed-place reading takes the month only as
 * Apache writes it ("Oct"), so this copy goes p_apache's general way. */
static void general_copy(const char *s, size_t n, char *out)
{
	memcpy(out, s, n);
	size_t b = n && s[0] == '[';
	for (size_t k = 3 + b; k < 6 + b && k < n; k++)
		if (out[k] >= 'a' && out[k] <= 'z')
			out[k] = (char)(out[k] - 32);
}

/* The common log format read at fixed places gives what the general reading gives, on
 * good times and on every one-byte change of them, whole or as a prefix. */
static void test_clf_fixed_against_general(void **state)
{
	(void)state;
	static const char *const good[] = {
	    "10/Oct/2000:13:55:36 -0700",   "[10/Oct/2000:13:55:36 -0700]",
	    "29/Feb/2024:23:59:60 +2359",   "29/Feb/2023:00:00:00 +0000",
	    "31/Apr/2024:00:00:00 +0000",   "00/Jan/2024:00:00:00 +0000",
	    "01/Jan/1970:00:00:00 -2359",   "31/Dec/9999:24:00:00 +0000",
	    "15/Jun/2026:12:60:00 +0100",   "15/Jun/2026:12:00:61 +0100",
	    "15/Jun/2026:12:00:00 +2400",   "15/Jun/2026:12:00:00 +0060",
	    "[03/Dec/2026:00:00:00 +0000]x", "03/Dec/2026:00:00:00 +0000 trailing",
	    "[03/Dec/2026:00:00:00 +0000",  "03/Dec/2026:00:00:00 +00:00",
	};
	static const char subst[] = "09x /:+-][.Z";
	struct floe_ts_format *f = fmt("clf", NULL);
	for (size_t g = 0; g < sizeof(good) / sizeof(good[0]); g++) {
		size_t n = strlen(good[g]);
		char s[64], u[64];
		for (size_t at = 0; at <= n; at++) {
			for (size_t c = 0; c < (at < n ? sizeof(subst) : 1); c++) {
				memcpy(s, good[g], n);
				if (at < n)
					s[at] = subst[c]; /* at == n: the string as it is */
				for (size_t len = n > 2 ? n - 2 : 0; len <= n; len++) {
					general_copy(s, len, u);
					for (int prefix = 0; prefix < 2; prefix++) {
						struct res a = parse(f, s, len, prefix), b = parse(f, u, len, prefix);
						if (a.rc != b.rc || a.us != b.us || a.used != b.used)
							fail_msg("\"%.*s\" (prefix %d): %d %lld %zu, the general "
								 "way %d %lld %zu",
								 (int)len, s, prefix, a.rc, (long long)a.us,
								 a.used, b.rc, (long long)b.us, b.used);
					}
				}
			}
		}
	}
	floe_ts_format_free(f);
	static const char *const months[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
					     "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
	for (unsigned m = 0; m < 12; m++)
		assert_int_equal(floe_ts_month_abbr(months[m]), m + 1);
	assert_int_equal(floe_ts_month_abbr("dec"), 0);
	assert_int_equal(floe_ts_month_abbr("DEC"), 0);
	assert_int_equal(floe_ts_month_abbr("Dex"), 0);
	assert_int_equal(floe_ts_month_abbr("Ja\0"), 0);
}

static void test_custom(void **state)
{
	assert_int_equal(
	    ok("%d/%b/%y %I:%M:%S.%f %p %z", NULL, "02/Jan/24 3:04:05.123 PM +0100", 0),
	    1704204245123000);
	assert_int_equal(ok("%Y %j", NULL, "2024 366", 0), 1735603200000000);
	assert_int_equal(ok("%F %T", "+00:00", "2024-01-02 00:00:00", 0), 1704153600000000);
	assert_int_equal(ok("%A, %B %e %Y %H:%M", NULL, "Tuesday, JANUARY  2 2024 00:00", 0),
			 1704153600000000);
	assert_int_equal(ok("%s.%f", NULL, "1700000000.5", 0), 1700000000500000);
	assert_int_equal(ok("[%Y%%%m]", NULL, "[2024%01]", 0), 1704067200000000);
	/* A space matches a run of blanks. */
	assert_int_equal(ok("%Y-%m-%d %H", NULL, "2024-01-02 \t 00", 0), 1704153600000000);
	/* No year: inferred like syslog. */
	assert_int_equal(ok("%m-%d %H:%M:%S", NULL, "12-10 06:55:46", 1740787200000000),
			 1733813746000000);
	/* 12 AM is midnight, 12 PM noon. */
	assert_int_equal(ok("%Y-%m-%d %I %p", NULL, "1970-01-01 12 am", 0), 0);
	assert_int_equal(ok("%Y-%m-%d %I %p", NULL, "1970-01-01 12 PM", 0), INT64_C(43200000000));
	bad("%Y-%m-%d %I %p", "1970-01-01 13 PM");
	bad("%Y %j", "2023 366");
	bad("%Y-%m-%d", "2024-01-02x");
	bad("%Y-%m-%d", "24-01-02");
	bad("%H:%M", "1:");
}

static void test_formats_and_zones(void **state)
{
	struct floe_err why = {0};
	struct floe_ts_format *none = NULL;
	assert_int_equal(floe_ts_format_new(NULL, "rfc", 3, NULL, 0, &none, &why), FLOE_EINVAL);
	assert_int_equal(floe_ts_format_new(NULL, "%Q", 2, NULL, 0, &none, &why), FLOE_EINVAL);
	assert_int_equal(floe_ts_format_new(NULL, "%Y%", 3, NULL, 0, &none, &why), FLOE_EINVAL);
	assert_int_equal(floe_ts_format_new(NULL, "", 0, NULL, 0, &none, &why), FLOE_EINVAL);
	assert_int_equal(floe_ts_format_new(NULL, "epoch", 5, "local", 5, &none, &why),
			 FLOE_EUNSUPPORTED);
	assert_int_equal(floe_ts_format_new(NULL, "epoch", 5, "Europe/Paris", 12, &none, &why),
			 FLOE_EUNSUPPORTED);
	assert_int_equal(floe_ts_format_new(NULL, "epoch", 5, "+2", 2, &none, &why), FLOE_EINVAL);
	int32_t off;
	assert_int_equal(floe_ts_zone_parse("-0530", 5, &off), 0);
	assert_int_equal(off, -19800);
	assert_int_equal(floe_ts_zone_parse("+02", 3, &off), 0);
	assert_int_equal(off, 7200);
	assert_int_equal(floe_ts_zone_parse("Z", 1, &off), 0);
	assert_int_equal(off, 0);
	assert_int_equal(floe_ts_zone_parse("+25:00", 6, &off), FLOE_EINVAL);
	assert_null(none); /* untouched on failure */
	assert_true(why.msg[0] != 0);
	/* Allocation failure. */
	struct floe_alloc a;
	floe_alloc_init(&a, 0);
	a.fail_after = 0;
	assert_int_equal(floe_ts_format_new(&a, "%Y", 2, NULL, 0, &none, &why), FLOE_ENOMEM);
	a.fail_after = -1;
	struct floe_ts_format *f = NULL;
	assert_int_equal(floe_ts_format_new(&a, "%Y", 2, NULL, 0, &f, NULL), 0);
	assert_non_null(f);
	floe_ts_format_free(f);
	assert_int_equal(a.used, 0);
	floe_ts_format_free(NULL);
}

/* A zone given as a function (zone: local): an hour ahead of UTC before CHANGE, two
 * after, as a summer time; calls and hints recorded. */
#define CHANGE 1782900000000000LL /* 2026-07-01T10:00:00Z */
struct fake_zone {
	int calls;
	int64_t hint;
};

static int32_t fz_offset_at(void *ctx, int64_t utc_us)
{
	(void)ctx;
	return utc_us < CHANGE ? 3600 : 7200;
}

static int64_t fz_to_utc(void *ctx, int64_t local_us, int64_t hint_us)
{
	struct fake_zone *z = ctx;
	z->calls++;
	z->hint = hint_us;
	int64_t u = local_us - 3600000000LL;
	return u < CHANGE ? u : local_us - 7200000000LL;
}

static int64_t zoned(const char *spec, const char *s, int64_t ref, struct fake_zone *z)
{
	struct floe_ts_format *f = fmt(spec, NULL);
	struct floe_zone_fn fn = {fz_to_utc, fz_offset_at, z};
	floe_ts_format_set_zone(f, &fn);
	int64_t us = 0;
	int rc = floe_ts_parse(f, s, strlen(s), ref, &us, NULL);
	floe_ts_format_free(f);
	if (rc)
		fail_msg("%s \"%s\": rc %d", spec, s, rc);
	return us;
}

/* Times without an offset go through the zone, with the reference as the hint, before
 * and after its change; those with one do not; a year-less time takes its year from the
 * reference's date in the zone (New Year an hour before it is in UTC). */
static void test_zone_function(void **state)
{
	(void)state;
	struct fake_zone z = {0};
	int64_t ref = CHANGE + 60000000;
	assert_int_equal(zoned("%Y-%m-%d %H:%M:%S", "2026-07-01 11:59:00", ref, &z), CHANGE - 60000000);
	assert_int_equal(z.calls, 1);
	assert_int_equal(z.hint, ref);
	assert_int_equal(zoned("%Y-%m-%d %H:%M:%S", "2026-07-01 12:01:00", ref, &z), CHANGE + 60000000);
	assert_int_equal(zoned("iso8601", "2026-07-01T12:01:00", ref, &z), CHANGE + 60000000);
	z.calls = 0;
	assert_int_equal(zoned("%Y-%m-%d %H:%M:%S%z", "2026-07-01 12:01:00+02:00", ref, &z),
			 CHANGE + 60000000);
	assert_int_equal(zoned("rfc3339", "2026-07-01T10:01:00Z", ref, &z), CHANGE + 60000000);
	assert_int_equal(z.calls, 0);
	/* Jan 1 00:30 local (two hours ahead there) read at 2026-12-31T23:40Z, 01:40 local:
	 * 2027, 22:30 UTC. In UTC the reference's year is still 2026. */
	int64_t ny = 1798761600000000LL; /* 2027-01-01T00:00:00Z */
	assert_int_equal(zoned("syslog", "Jan  1 00:30:00", ny - 1200000000LL, &z), ny - 5400000000LL);
	/* Unset again: the format's own zone (UTC). */
	struct floe_ts_format *f = fmt("%Y-%m-%d %H:%M:%S", NULL);
	struct floe_zone_fn fn = {fz_to_utc, fz_offset_at, &z};
	floe_ts_format_set_zone(f, &fn);
	floe_ts_format_set_zone(f, NULL);
	int64_t us = 0;
	assert_int_equal(floe_ts_parse(f, "2026-07-01 10:00:00", 19, ref, &us, NULL), 0);
	assert_int_equal(us, CHANGE);
	floe_ts_format_free(f);
}

static void test_prefix(void **state)
{
	struct floe_ts_format *f = fmt("rfc3339", NULL);
	const char *s = "2016-10-06T00:17:09.669794202Z stdout F x";
	int64_t us;
	size_t used = 0;
	assert_int_equal(floe_ts_parse(f, s, strlen(s), 0, &us, &used), 0);
	assert_int_equal(used, 30);
	assert_int_equal(us, 1475713029669794);
	assert_int_equal(floe_ts_parse(f, s, strlen(s), 0, &us, NULL), FLOE_EPARSE);
	/* Every cut of a valid string fails cleanly. */
	for (size_t k = 0; k < 30; k++)
		assert_int_not_equal(floe_ts_parse(f, s, k, 0, &us, NULL), 0);
	floe_ts_format_free(f);
	assert_int_equal(floe_ts_parse_rfc3339("1970-01-01T00:00:01Z", 20, &us, NULL), 0);
	assert_int_equal(us, 1000000);
}

/* floe_ts_clf_memo gives floe_ts_clf's result for every time after every other: pairs
 * of times of one minute and of others (each second, the leap second, seconds out of
 * range, other days, hours, zones, a day past its month's end), and each time after a
 * good one with any one byte of it replaced (digits, separators, a bracket, bytes >= 0x80);
 * then a memo left by a time of another length. */
static void test_clf_memo(void **state)
{
	(void)state;
	static const char *const times[] = {
	    "10/Oct/2000:13:55:36 -0700", "10/Oct/2000:13:55:00 -0700", "10/Oct/2000:13:55:59 -0700",
	    "10/Oct/2000:13:55:60 -0700", "10/Oct/2000:13:55:61 -0700", "10/Oct/2000:13:55:6a -0700",
	    "10/Oct/2000:13:55:99 -0700", "10/Oct/2000:13:55:36 +0700", "10/Oct/2000:13:55:36 -0730",
	    "10/Oct/2000:13:56:36 -0700", "10/Oct/2000:14:55:36 -0700", "11/Oct/2000:13:55:36 -0700",
	    "10/Nov/2000:13:55:36 -0700", "10/Oct/2001:13:55:36 -0700", "29/Feb/2000:23:59:60 +0000",
	    "29/Feb/2001:23:59:59 +0000", "31/Dec/9999:23:59:60 -2359", "01/Jan/0000:00:00:00 +2359",
	    "10/Oct/2000:24:55:36 -0700", "10/Oct/2000:13:55:36 -2400", "10/oct/2000:13:55:36 -0700",
	};
	size_t nt = sizeof(times) / sizeof(times[0]);
	for (size_t a = 0; a < nt; a++) {
		for (size_t b = 0; b < nt; b++) {
			struct floe_ts_clf_memo m = {0};
			int64_t ua = 0, ub = 0, wa = 0, wb = 0;
			assert_int_equal(floe_ts_clf_memo(&m, times[a], 26, &ua),
					 floe_ts_clf(times[a], 26, &wa));
			assert_int_equal(ua, wa);
			assert_int_equal(floe_ts_clf_memo(&m, times[b], 26, &ub),
					 floe_ts_clf(times[b], 26, &wb));
			assert_int_equal(ub, wb);
		}
	}
	static const char repl[] = "0123456789/: +-]Jx\x80\xff";
	for (size_t a = 0; a < nt; a++) {
		for (size_t at = 0; at < 26; at++) {
			for (size_t r = 0; r < sizeof(repl) - 1; r++) {
				struct floe_ts_clf_memo m = {0};
				char t[26];
				int64_t u = 0, w = 0;
				(void)floe_ts_clf_memo(&m, times[0], 26, &u);
				memcpy(t, times[a], 26);
				t[at] = repl[r];
				u = w = 0;
				assert_int_equal(floe_ts_clf_memo(&m, t, 26, &u), floe_ts_clf(t, 26, &w));
				assert_int_equal(u, w);
			}
		}
	}
	/* A memo and a time of another length: refused as floe_ts_clf refuses it. */
	struct floe_ts_clf_memo m = {0};
	int64_t u;
	assert_true(floe_ts_clf_memo(&m, times[0], 26, &u));
	assert_false(floe_ts_clf_memo(&m, times[0], 25, &u));
	assert_false(floe_ts_clf_memo(&m, "10/Oct/2000:13:55:36 -07000", 27, &u));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_rfc3339),
	    cmocka_unit_test(test_iso8601),	cmocka_unit_test(test_epoch),
	    cmocka_unit_test(test_syslog_year), cmocka_unit_test(test_apache),
	    cmocka_unit_test(test_custom),	cmocka_unit_test(test_formats_and_zones),
	    cmocka_unit_test(test_prefix),
	    cmocka_unit_test(test_zone_function),
	    cmocka_unit_test(test_clf_fixed_against_general),
	    cmocka_unit_test(test_clf_memo),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

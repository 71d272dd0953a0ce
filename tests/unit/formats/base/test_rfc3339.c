/* Unit tests for formats/base/rfc3339: the strict form and each flag, the offset of
 * each kind of error (syntax, and a field out of range), ISO 8601's other forms and its
 * fall-back to a date alone, and the leap-second rule of the conversion. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "formats/base/error.h"
#include "formats/base/rfc3339.h"

/* µs of s scanned with flags (whole string unless PREFIX); *end the bytes taken. */
static int64_t us_of(const char *s, unsigned flags, size_t *end)
{
	struct floe_rfc3339 t;
	size_t e = 0;
	int64_t us = 0;
	assert_int_equal(floe_rfc3339_scan(s, strlen(s), flags, &t, &e), 0);
	assert_int_equal(floe_rfc3339_us(&t, 3600, &us), 0);
	if (end)
		*end = e;
	return us;
}

/* s fails with rc at byte at. */
static void fails(const char *s, unsigned flags, int rc, size_t at)
{
	struct floe_rfc3339 t;
	size_t e = SIZE_MAX;
	assert_int_equal(floe_rfc3339_scan(s, strlen(s), flags, &t, &e), rc);
	assert_int_equal(e, at);
}

static void test_strict(void **state)
{
	(void)state;
	assert_int_equal(us_of("1970-01-01T00:00:00Z", 0, NULL), 0);
	assert_int_equal(us_of("1970-01-01t01:00:00.25+01:00", 0, NULL), 250000);
	assert_int_equal(us_of("1970-01-01 00:00:00.1234567z", 0, NULL), 123456);
	assert_int_equal(us_of("1969-12-31T23:00:00-01:00", 0, NULL), 0);
	fails("1970-01-01T00:00:00", 0, FLOE_EPARSE, 19);	   /* offset required */
	fails("1970-01-01T00:00:00+0100", 0, FLOE_EPARSE, 22);	   /* colon required */
	fails("1970-01-01T00:00:00.Z", 0, FLOE_EPARSE, 20);	   /* empty fraction */
	fails("1970-01-01T00:00Z", 0, FLOE_EPARSE, 16);		   /* seconds required */
	fails("19700101T000000Z", 0, FLOE_EPARSE, 4);		   /* no basic form */
	fails("1970-01-01T00:00:00Zx", 0, FLOE_EPARSE, 20);	   /* the whole string */
	fails("2023-02-29T00:00:00Z", 0, FLOE_EFORMAT, 8);	   /* no Feb 29 */
	fails("2023-13-01T00:00:00Z", 0, FLOE_EFORMAT, 5);
	fails("2023-01-01T24:00:00Z", 0, FLOE_EFORMAT, 11);
	fails("2023-01-01T23:60:00Z", 0, FLOE_EFORMAT, 14);
	fails("2023-01-01T23:59:61Z", 0, FLOE_EFORMAT, 17);
	fails("2023-01-01T23:59:00+01:60", 0, FLOE_EFORMAT, 20);
	fails("", 0, FLOE_EPARSE, 0);
	/* Bounded by n: a valid time further on in the buffer is not read. */
	struct floe_rfc3339 t;
	size_t e;
	assert_int_equal(floe_rfc3339_scan("2015-08-30T12:36:00Z", 19, 0, &t, &e), FLOE_EPARSE);
}

static void test_flags(void **state)
{
	(void)state;
	size_t end;
	assert_int_equal(us_of("1970-01-01T00:00:00Z rest", FLOE_RFC3339_PREFIX, &end), 0);
	assert_int_equal(end, 20);
	/* Zoneless: the caller's zone (+01:00 here) applies to a time without an offset. */
	assert_int_equal(us_of("1970-01-01T01:00:00", FLOE_RFC3339_ZONELESS, NULL), 0);
	fails("1970-01-01T01:00:00+", FLOE_RFC3339_ZONELESS, FLOE_EPARSE, 20);
	assert_int_equal(us_of("1970-01-01T00:00:00.123456789Z", FLOE_RFC3339_FRAC9, NULL), 123456);
	fails("1970-01-01T00:00:00.1234567890Z", FLOE_RFC3339_FRAC9, FLOE_EPARSE, 29);
}

static void test_iso8601(void **state)
{
	(void)state;
	const unsigned iso = FLOE_RFC3339_ISO8601;
	size_t end;
	assert_int_equal(us_of("19700101T000000,5Z", iso, NULL), 500000);
	assert_int_equal(us_of("19700101T0100", iso, NULL), 0); /* the zone applies */
	assert_int_equal(us_of("1970-01-01T01:00+01", iso, NULL), 0);
	assert_int_equal(us_of("1970-01-01T01:30+0130", iso, NULL), 0);
	assert_int_equal(us_of("1970-01-02", iso, NULL), 82800 * INT64_C(1000000));
	/* A time that does not parse leaves the date alone; what follows is the caller's. */
	assert_int_equal(us_of("1970-01-02Tnoon", iso | FLOE_RFC3339_PREFIX, &end),
			 82800 * INT64_C(1000000));
	assert_int_equal(end, 10);
	fails("1970-01-02Tnoon", iso, FLOE_EPARSE, 10);
	/* One that parses but is out of range is an error, as in strict mode. */
	fails("1970-01-02T25:00", iso, FLOE_EFORMAT, 11);
	fails("1970-0102", iso, FLOE_EPARSE, 7);
}

/* The one leap-second rule: second 60 is the last µs of its minute. */
static void test_leap(void **state)
{
	(void)state;
	int64_t next = us_of("2017-01-01T00:00:00Z", 0, NULL);
	assert_int_equal(us_of("2016-12-31T23:59:60Z", 0, NULL), next - 1);
	assert_int_equal(us_of("2016-12-31T23:59:60.999Z", 0, NULL), next - 1);
	assert_int_equal(us_of("2017-01-01T00:59:60.5+01:00", 0, NULL), next - 1);
	assert_true(us_of("2016-12-31T23:59:59.999998Z", 0, NULL) < next - 1);
	int64_t s = 0;
	assert_int_equal(floe_rfc3339_unix_s("2016-12-31T23:59:60Z", 20, &s), 0);
	assert_int_equal(s, next / 1000000 - 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_strict),
	    cmocka_unit_test(test_flags),
	    cmocka_unit_test(test_iso8601),
	    cmocka_unit_test(test_leap),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Tests of formats/base/civil: day numbers against a day-by-day walk over 800 years and
 * at the far ends of the range, broken-down unix times, and the RFC 3339 parser. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "formats/base/civil.h"
#include "formats/base/error.h"
#include "formats/base/rfc3339.h"

#define T0 INT64_C(1440938160) /* 2015-08-30 12:36:00 UTC */

static void test_days(void **state)
{
	(void)state;
	/* Walk from 1600-01-01 (day -135140) to 2400-12-31 one day at a time. */
	int64_t days = -135140, y = 1600;
	unsigned m = 1, d = 1;
	assert_int_equal(floe_civil_to_days(1600, 1, 1), days);
	for (; y <= 2400; days++) {
		int64_t gy;
		unsigned gm, gd;
		floe_civil_from_days(days, &gy, &gm, &gd);
		assert_int_equal(gy, y);
		assert_int_equal(gm, m);
		assert_int_equal(gd, d);
		assert_int_equal(floe_civil_to_days(y, m, d), days);
		if (++d > floe_civil_days_in_month(y, m)) {
			d = 1;
			if (++m > 12) {
				m = 1;
				y++;
			}
		}
	}
	assert_int_equal(floe_civil_to_days(1970, 1, 1), 0);
	assert_int_equal(floe_civil_to_days(2000, 3, 1), 11017);
	assert_int_equal(floe_civil_to_days(1969, 12, 31), -1);
	assert_int_equal(floe_civil_to_days(2000, 2, 29), 11016);
	assert_int_equal(floe_civil_to_days(1, 1, 1), -719162);
	assert_int_equal(floe_civil_to_days(9999, 12, 31), 2932896);
	assert_true(floe_civil_is_leap(2000) && floe_civil_is_leap(2024));
	assert_false(floe_civil_is_leap(1900) || floe_civil_is_leap(2023));
	assert_int_equal(floe_civil_days_in_month(2024, 2), 29);
	assert_int_equal(floe_civil_days_in_month(2100, 2), 28);
	/* The ends of Iceberg's int32 day range and negative years round-trip. */
	int64_t ends[] = {INT32_MIN, INT32_MAX, -719528, -800000};
	for (size_t i = 0; i < sizeof(ends) / sizeof(ends[0]); i++) {
		int64_t gy;
		unsigned gm, gd;
		floe_civil_from_days(ends[i], &gy, &gm, &gd);
		assert_int_equal(floe_civil_to_days(gy, gm, gd), ends[i]);
	}
}

static void test_from_unix(void **state)
{
	(void)state;
	struct floe_civil_time c;
	floe_civil_from_unix(T0, &c);
	assert_int_equal(c.year, 2015);
	assert_int_equal(c.month, 8);
	assert_int_equal(c.day, 30);
	assert_int_equal(c.hour, 12);
	assert_int_equal(c.minute, 36);
	assert_int_equal(c.second, 0);
	floe_civil_from_unix(-1, &c);
	assert_int_equal(c.year, 1969);
	assert_int_equal(c.month, 12);
	assert_int_equal(c.day, 31);
	assert_int_equal(c.hour * 3600 + c.minute * 60 + c.second, 86399);
}

static void test_rfc3339(void **state)
{
	(void)state;
	int64_t t = -1;
	struct {
		const char *s;
		int64_t want;
	} ok[] = {
	    {"1970-01-01T00:00:00Z", 0},	 {"2015-08-30T12:36:00Z", T0},
	    {"2015-08-30T12:36:00.123456Z", T0}, {"2015-08-30T13:36:00+01:00", T0},
	    {"2015-08-30t11:06:00-01:30", T0},	 {"2024-02-29 00:00:00Z", INT64_C(1709164800)},
	};
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		assert_int_equal(floe_rfc3339_unix_s(ok[i].s, strlen(ok[i].s), &t), 0);
		assert_int_equal(t, ok[i].want);
	}
	const char *bad[] = {"2015-08-30T12:36:00",	 "2015-08-30T12:36:00ZZ",
			     "2023-02-29T00:00:00Z",	 "2015-13-01T00:00:00Z",
			     "2015-08-30T24:00:00Z",	 "2015-08-30T12:36:00.Z",
			     "2015-08-30T12:36:00+0100", "15-08-30T12:36:00Z",
			     "2015-08-30T12:36:00+01:0", "2015-00-10T12:36:00Z"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(floe_rfc3339_unix_s(bad[i], strlen(bad[i]), &t), FLOE_EPARSE);
	/* Bounded by n: a valid prefix of a longer buffer is not read past. */
	assert_int_equal(floe_rfc3339_unix_s("2015-08-30T12:36:00Z", 19, &t), FLOE_EPARSE);
	assert_int_equal(floe_rfc3339_unix_s("2015-08-30T12:36:00+01:00", 24, &t), FLOE_EPARSE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_days),
	    cmocka_unit_test(test_from_unix),
	    cmocka_unit_test(test_rfc3339),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

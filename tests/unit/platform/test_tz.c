/* Tests of platform/tz: the system's zone through the C library, with a POSIX TZ rule
 * (central Europe: CET, CEST from the last Sunday of March 01:00 UTC to the last Sunday
 * of October 01:00 UTC) so that no tz database file is needed. Winter and summer times,
 * the hour spring forward skips, the hour fall back repeats (picked by the hint), the
 * offsets on both sides of a change, every half hour of 2026 round-tripped with the true
 * instant as the hint, and UTC as the identity. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "platform/tz.h"

#include <stdlib.h>
#include <time.h>

static void set_tz(const char *tz)
{
	assert_int_equal(setenv("TZ", tz, 1), 0);
	tzset();
}

static void test_central_europe(void **state)
{
	(void)state;
	set_tz("CET-1CEST,M3.5.0,M10.5.0/3");
	struct floe_tz_cache c = {0};
	/* 2026-12-07 14:19:37 CET is 13:19:37 UTC; 2026-07-01 12:00 CEST is 10:00 UTC. */
	assert_int_equal(floe_tz_to_utc(&c, 1796653177, 0), 1796649577);
	assert_int_equal(floe_tz_to_utc(&c, 1782907200, 0), 1782900000);
	/* 2026-03-29 02:30 does not exist: read at CET, 01:30 UTC (03:30 CEST). */
	assert_int_equal(floe_tz_to_utc(&c, 1774751400, 0), 1774747800);
	/* 2026-10-25 02:30 happens twice: 00:30 UTC (CEST) and 01:30 UTC (CET). */
	assert_int_equal(floe_tz_to_utc(&c, 1792895400, 1792888200 + 300), 1792888200);
	assert_int_equal(floe_tz_to_utc(&c, 1792895400, 1792891800 + 300), 1792891800);
	/* The change itself, 2026-10-25 01:00 UTC. */
	assert_int_equal(floe_tz_offset_at(&c, 1792890000 - 1), 7200);
	assert_int_equal(floe_tz_offset_at(&c, 1792890000), 3600);
	/* Every half hour of the year, from a fresh cache and from a warm one. */
	struct floe_tz_cache warm = {0};
	for (int64_t u = 1767225600; u < 1798761600; u += 1800) {
		time_t t = (time_t)u;
		struct tm tm;
		assert_non_null(localtime_r(&t, &tm));
		int64_t local = u + tm.tm_gmtoff;
		struct floe_tz_cache cold = {0};
		assert_int_equal(floe_tz_to_utc(&cold, local, u), u);
		assert_int_equal(floe_tz_to_utc(&warm, local, u), u);
		assert_int_equal(floe_tz_offset_at(&warm, u), tm.tm_gmtoff);
	}
}

static void test_utc(void **state)
{
	(void)state;
	set_tz("UTC0");
	struct floe_tz_cache c = {0};
	for (int64_t u = -86400LL * 400; u < 86400LL * 400; u += 7919)
		assert_int_equal(floe_tz_to_utc(&c, u, 0), u);
	assert_int_equal(floe_tz_offset_at(&c, 1796649577), 0);
	/* Beyond what a zone can say: left as it is. */
	assert_int_equal(floe_tz_to_utc(&c, INT64_MAX, 0), INT64_MAX);
	assert_int_equal(floe_tz_to_utc(&c, INT64_MIN, 0), INT64_MIN);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_central_europe),
	    cmocka_unit_test(test_utc),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

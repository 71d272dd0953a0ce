/* Tests of platform/clock: clocks in the right unit and range, random bytes, host name
 * and the form of v4 UUIDs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "platform/clock.h"

#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void test_clocks(void **state)
{
	int64_t us = floe_clock_now_us();
	int64_t s = (int64_t)time(NULL);
	/* Same second as time(2) (allowing for a tick in between), in microseconds. */
	assert_true(us / 1000000 >= s - 1 && us / 1000000 <= s + 1);
	assert_true(us > INT64_C(1577836800000000)); /* after 2020-01-01 */
	int64_t a = floe_clock_mono_ns(), b = floe_clock_mono_ns();
	assert_true(a > 0);
	assert_true(b >= a);
}

static void test_random(void **state)
{
	uint8_t x[32] = {0}, y[32] = {0}, zero[32] = {0};
	assert_int_equal(floe_random_bytes(x, sizeof(x)), 0);
	assert_int_equal(floe_random_bytes(y, sizeof(y)), 0);
	assert_memory_not_equal(x, y, sizeof(x));
	assert_memory_not_equal(x, zero, sizeof(x));
	assert_int_equal(floe_random_bytes(NULL, 0), 0);
	/* Larger than one getrandom call may return at once. */
	static uint8_t big[1 << 20];
	assert_int_equal(floe_random_bytes(big, sizeof(big)), 0);
}

static void test_hostname(void **state)
{
	char want[300] = {0}, got[300];
	assert_int_equal(gethostname(want, sizeof(want) - 1), 0);
	assert_int_equal(floe_hostname(got, sizeof(got)), 0);
	assert_string_equal(got, want);
	size_t n = strlen(want);
	assert_int_equal(floe_hostname(got, n), -ENAMETOOLONG);
	assert_int_equal(floe_hostname(got, n + 1), 0);
	assert_string_equal(got, want);
	assert_int_equal(floe_hostname(got, 0), -ENAMETOOLONG);
}

static void test_uuid4(void **state)
{
	char a[37], b[37];
	memset(a, 'z', sizeof(a));
	floe_uuid4(a);
	floe_uuid4(b);
	assert_int_equal(strlen(a), 36);
	assert_string_not_equal(a, b);
	for (int i = 0; i < 36; i++) {
		if (i == 8 || i == 13 || i == 18 || i == 23) {
			assert_int_equal(a[i], '-');
			continue;
		}
		assert_non_null(strchr("0123456789abcdef", a[i]));
	}
	assert_int_equal(a[14], '4');
	assert_non_null(strchr("89ab", a[19]));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_clocks),
	    cmocka_unit_test(test_random),
	    cmocka_unit_test(test_hostname),
	    cmocka_unit_test(test_uuid4),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

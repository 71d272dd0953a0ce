/* Unit tests for platform/libm.h: libm loads, and each function gives the very bits of
 * the libm this test links (so the sketches' buckets and estimates are the same whether
 * floe loads libm or links it). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "platform/libm.h"

static int same(double a, double b)
{
	return memcmp(&a, &b, sizeof(a)) == 0;
}

static void test_load(void **state)
{
	char err[256] = "";
	assert_int_equal(floe_libm_load(err, sizeof(err)), 0);
	assert_string_equal(err, "");
	/* Again, and without room for a reason: the first answer. */
	assert_int_equal(floe_libm_load(NULL, 0), 0);
}

static void test_same_bits(void **state)
{
	assert_int_equal(floe_libm_load(NULL, 0), 0);
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	for (int i = 0; i < 200000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		double d;
		memcpy(&d, &x, sizeof(d));
		double v = fabs(d);
		assert_true(same(floe_libm_log(v), log(v)));
		assert_true(same(floe_libm_sqrt(v), sqrt(v)));
		double small = ldexp((double)(x >> 11), -53); /* [0, 1): log1p's and exp's range */
		assert_true(same(floe_libm_log1p(small), log1p(small)));
		assert_true(same(floe_libm_exp(745.0 * (2 * small - 1)), exp(745.0 * (2 * small - 1))));
	}
	assert_true(same(floe_libm_log(0.0), log(0.0)) && same(floe_libm_exp(-1000.0), 0.0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_load),
	    cmocka_unit_test(test_same_bits),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

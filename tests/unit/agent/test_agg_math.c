/* Unit tests for agent/agg/agg_math.h: exact powers of two over the whole double range
 * (subnormals included), integer ceiling and floor, rounding to the nearest integer (the
 * same as libm's llround, which this test links). The elementary functions are libm's. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "agent/agg/agg_math.h"

static void test_constants(void **state)
{
	assert_true(floe_agg_pow2(10) == 1024.0 && floe_agg_pow2(-1074) == 4.9406564584124654e-324);
	assert_true(floe_agg_pow2(1024) == __builtin_inf() && floe_agg_pow2(-1075) == 0.0);
	assert_true(floe_agg_ceil(2.0) == 2 && floe_agg_ceil(2.1) == 3 &&
		    floe_agg_ceil(-2.1) == -2);
	assert_true(floe_agg_floor(-2.1) == -3 && floe_agg_floor(2.9) == 2);
}

static void test_pow2_bits(void **state)
{
	/* Every power of two: exact, and the same bits as scaling 1.0 step by step. */
	double x = 1.0;
	for (int k = 0; k >= -1074; k--, x *= 0.5)
		assert_true(floe_agg_pow2(k) == x);
	x = 1.0;
	for (int k = 0; k <= 1023; k++, x *= 2.0)
		assert_true(floe_agg_pow2(k) == x);
	assert_true(floe_agg_from_bits(floe_agg_bits(1.5)) == 1.5);
}

static void test_llround(void **state)
{
	/* Halfway cases away from zero, and the largest double below one half. */
	static const double edge[] = {0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5,
				      0.49999999999999994, -0.49999999999999994, 1e15 + 0.5,
				      0x1p52 - 0.5, 0x1p52 + 1.0, 0x1p53, 0x1p62, -0x1p63,
				      0x1p63 - 1024.0, 9.2e18, 1234567.4999999998};
	for (size_t i = 0; i < sizeof(edge) / sizeof(edge[0]); i++)
		assert_true(floe_agg_llround(edge[i]) == llround(edge[i]));
	/* Doubles of every magnitude below 2^63 from their bits, and the HLL estimates' range
	 * (0 to 2^40) in steps that hit every fraction near one half. */
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	for (int i = 0; i < 1000000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		double d = floe_agg_from_bits(x);
		if (!(d == d) || __builtin_fabs(d) >= 0x1p63)
			continue;
		assert_true(floe_agg_llround(d) == llround(d));
		double e = (double)(x >> 24) / 16.0;
		assert_true(floe_agg_llround(e) == llround(e));
	}
	/* Out of llround's range: saturated, and NaN gives 0. */
	assert_true(floe_agg_llround(0x1p63) == INT64_MAX && floe_agg_llround(__builtin_inf()) == INT64_MAX);
	assert_true(floe_agg_llround(-0x1p64) == INT64_MIN && floe_agg_llround(-__builtin_inf()) == INT64_MIN);
	assert_true(floe_agg_llround(__builtin_nan("")) == 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_constants),
	    cmocka_unit_test(test_pow2_bits),
	    cmocka_unit_test(test_llround),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Unit tests for agent/agg/agg_math.h: exact powers of two over the whole double range
 * (subnormals included), integer ceiling and floor. The elementary functions are
 * libm's. */
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

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_constants),
	    cmocka_unit_test(test_pow2_bits),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

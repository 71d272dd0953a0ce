/* Unit tests for agent/agg/agg_math.h (floe links no libm): log, log1p, exp, sqrt,
 * powers of two and ceiling against constants (from CPython's math module) and
 * identities, over the whole double range the sketches use, subnormals included. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "agent/agg/agg_math.h"

static void near(double got, double want, double rel)
{
	double d = got - want;
	if (d < 0)
		d = -d;
	double w = want < 0 ? -want : want;
	if (!(d <= rel * w))
		fail_msg("got %.17g, want %.17g (relative %.3g)", got, want, d / w);
}

static void test_constants(void **state)
{
	near(floe_agg_log(2.0), 0.69314718055994530942, 2e-16);
	near(floe_agg_log(10.0), 2.30258509299404568402, 2e-16);
	near(floe_agg_log(0.001), -6.90775527898213705205, 2e-16);
	near(floe_agg_log(1e300), 690.775527898213705205, 2e-16);
	near(floe_agg_log(4.9406564584124654e-324), -744.440071921381262, 2e-16);
	assert_true(floe_agg_log(1.0) == 0.0);
	near(floe_agg_log1p(0.02 / 0.99), 0.020000666706669525, 2e-16);
	near(floe_agg_log1p(1e-12), 9.999999999995e-13, 2e-16);
	near(floe_agg_exp(1.0), 2.71828182845904523536, 2e-16);
	near(floe_agg_exp(-10.0), 4.53999297624848515356e-05, 4e-16);
	near(floe_agg_exp(700.0), 1.0142320547350045e+304, 4e-16);
	near(floe_agg_exp(-740.0), 4.2e-322, 2e-2); /* subnormal: few bits */
	assert_true(floe_agg_exp(710.0) == __builtin_inf());
	assert_true(floe_agg_exp(-746.0) == 0.0);
	near(floe_agg_sqrt(2.0), 1.41421356237309504880, 2e-16);
	near(floe_agg_sqrt(1e-300), 1e-150, 2e-16);
	assert_true(floe_agg_sqrt(0.0) == 0.0);
	assert_true(floe_agg_pow2(10) == 1024.0 && floe_agg_pow2(-1074) == 4.9406564584124654e-324);
	assert_true(floe_agg_pow2(1024) == __builtin_inf() && floe_agg_pow2(-1075) == 0.0);
	assert_true(floe_agg_ceil(2.0) == 2 && floe_agg_ceil(2.1) == 3 &&
		    floe_agg_ceil(-2.1) == -2);
	assert_true(floe_agg_floor(-2.1) == -3 && floe_agg_floor(2.9) == 2);
}

static void test_identities(void **state)
{
	/* exp(log x) = x and log(2^k) = k ln 2 across the normal range. */
	for (int k = -1020; k <= 1020; k += 7) {
		double x = floe_agg_pow2(k) * 1.37;
		near(floe_agg_exp(floe_agg_log(x)), x, 2e-13); /* |log x| up to 709 */
		near(floe_agg_log(floe_agg_pow2(k)), k * 0.69314718055994530942, 4e-16);
		double s = floe_agg_sqrt(x);
		near(s * s, x, 4e-16);
	}
	/* log is increasing across the mantissa's fold at sqrt(2). */
	double prev = floe_agg_log(1.0);
	for (double x = 1.0 + 1e-3; x < 4.0; x += 1e-3) {
		double l = floe_agg_log(x);
		assert_true(l > prev);
		prev = l;
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_constants),
	    cmocka_unit_test(test_identities),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

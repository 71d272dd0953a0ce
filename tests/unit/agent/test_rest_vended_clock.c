/* Tests of the renewal of a REST catalog's vended storage credentials on a wall clock that
 * steps (agent/lake/catalog_rest_impl.h): due by the wall clock or the monotonic one,
 * whichever comes first. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "agent/lake/catalog_rest_impl.h"

#define YEAR ((int64_t)365 * 24 * 3600 * 1000)
#define HOUR ((int64_t)3600 * 1000)
#define T0 ((int64_t)1800000000000) /* the wall clock when the credentials came */
#define M0 ((int64_t)5000)	    /* the monotonic clock then */

static struct vended got(int64_t expires_ms)
{
	struct vended v = {.expires_ms = expires_ms};
	v.expires_mono_ms = floe_rest_vended_mono(expires_ms, T0, M0);
	return v;
}

/* No step: due VENDED_MARGIN_MS before the expiry, by both clocks alike. */
static void test_steady(void **state)
{
	struct vended v = got(T0 + HOUR);
	assert_int_equal(v.expires_mono_ms, M0 + HOUR);
	int64_t e = HOUR - VENDED_MARGIN_MS;
	assert_false(floe_rest_vended_due(&v, T0 + e - 1, M0 + e - 1));
	assert_true(floe_rest_vended_due(&v, T0 + e, M0 + e));
	struct vended none = got(0); /* no expiry said: never due */
	assert_false(floe_rest_vended_due(&none, T0 + YEAR, M0 + YEAR));
}

/* The wall clock steps back a year after they came: still renewed on time. */
static void test_step_back(void **state)
{
	struct vended v = got(T0 + HOUR);
	assert_false(floe_rest_vended_due(&v, T0 - YEAR + HOUR / 2, M0 + HOUR / 2));
	assert_true(floe_rest_vended_due(&v, T0 - YEAR + HOUR, M0 + HOUR));
}

/* A step forward, or a wall clock wrong when they came (1970 on a device without a
 * real-time clock) set right later: due by the wall clock at once. */
static void test_step_forward(void **state)
{
	struct vended v = got(T0 + HOUR);
	assert_true(floe_rest_vended_due(&v, T0 + YEAR, M0 + 1000));
	struct vended w = {.expires_ms = T0 + HOUR};
	w.expires_mono_ms = floe_rest_vended_mono(w.expires_ms, 1000, M0); /* came at 1970 */
	assert_false(floe_rest_vended_due(&w, 2000, M0 + 1000));
	assert_false(floe_rest_vended_due(&w, T0, M0 + 2000)); /* NTP arrived */
	assert_true(floe_rest_vended_due(&w, T0 + HOUR - VENDED_MARGIN_MS, M0 + 3000));
}

/* Expired already when they came: due at once; extreme expiries saturate. */
static void test_bounds(void **state)
{
	struct vended v = got(T0 - HOUR);
	assert_int_equal(v.expires_mono_ms, M0);
	assert_true(floe_rest_vended_due(&v, T0 - YEAR, M0));
	assert_int_equal(floe_rest_vended_mono(INT64_MAX, -1000, M0), INT64_MAX);
	assert_int_equal(floe_rest_vended_mono(INT64_MAX, 0, M0), INT64_MAX);
	assert_int_equal(floe_rest_vended_mono(1, INT64_MAX, M0), M0);
	struct vended far = got(INT64_MAX);
	assert_false(floe_rest_vended_due(&far, T0 + YEAR, M0 + YEAR));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_steady),
	    cmocka_unit_test(test_step_back),
	    cmocka_unit_test(test_step_forward),
	    cmocka_unit_test(test_bounds),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

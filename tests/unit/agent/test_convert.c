/* Tests for text-to-typed-value conversion: each type's accepted forms, its limits (the
 * extremes convert, one past them does not), what never converts (spaces, hex,
 * separators, impossible dates), and the null conventions. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "agent/schema/convert.h"
#include "formats/parquet/writer.h"

static enum floe_conv conv(enum floe_col_type t, const char *s, struct floe_pq_value *v)
{
	return floe_convert(t, s, strlen(s), v);
}

static void ok_int(enum floe_col_type t, const char *s, int64_t want)
{
	struct floe_pq_value v;
	assert_int_equal(conv(t, s, &v), FLOE_CONV_OK);
	assert_false(v.is_null);
	assert_true(v.i == want);
}

static void fails(enum floe_col_type t, const char *s)
{
	struct floe_pq_value v;
	assert_int_equal(conv(t, s, &v), FLOE_CONV_FAIL);
	assert_true(v.is_null);
}

static void test_integers(void **state)
{
	(void)state;
	ok_int(FLOE_COL_INT, "200", 200);
	ok_int(FLOE_COL_INT, "-17", -17);
	ok_int(FLOE_COL_INT, "+5", 5);
	ok_int(FLOE_COL_INT, "007", 7);
	ok_int(FLOE_COL_INT, "2147483647", INT32_MAX);
	ok_int(FLOE_COL_INT, "-2147483648", INT32_MIN);
	fails(FLOE_COL_INT, "2147483648");
	fails(FLOE_COL_INT, "-2147483649");
	ok_int(FLOE_COL_LONG, "9223372036854775807", INT64_MAX);
	ok_int(FLOE_COL_LONG, "-9223372036854775808", INT64_MIN);
	fails(FLOE_COL_LONG, "9223372036854775808");
	fails(FLOE_COL_LONG, "-9223372036854775809");
	fails(FLOE_COL_LONG, "99999999999999999999999");
	/* Either side of the 18 digits that are read without a check per digit. */
	ok_int(FLOE_COL_LONG, "999999999999999999", 999999999999999999);
	ok_int(FLOE_COL_LONG, "-999999999999999999", -999999999999999999);
	ok_int(FLOE_COL_LONG, "+1000000000000000000", 1000000000000000000);
	ok_int(FLOE_COL_LONG, "00000000000000000000042", 42);
	fails(FLOE_COL_INT, "999999999999999999");
	fails(FLOE_COL_INT, "-000000000002147483649");
	fails(FLOE_COL_LONG, "99999999999999999x");
	static const char *const bad[] = {"+", "--1", " 1", "1 ", "1,000", "0x10", "1.0", "1e3", "abc", "1-"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		fails(FLOE_COL_INT, bad[i]);
		fails(FLOE_COL_LONG, bad[i]);
	}
}

static void test_floats(void **state)
{
	(void)state;
	struct floe_pq_value v;
	assert_int_equal(conv(FLOE_COL_DOUBLE, "0.25", &v), FLOE_CONV_OK);
	assert_true(v.d == 0.25);
	assert_int_equal(conv(FLOE_COL_DOUBLE, "-1.5e3", &v), FLOE_CONV_OK);
	assert_true(v.d == -1500.0);
	assert_int_equal(conv(FLOE_COL_DOUBLE, ".5", &v), FLOE_CONV_OK);
	assert_true(v.d == 0.5);
	assert_int_equal(conv(FLOE_COL_DOUBLE, "5.", &v), FLOE_CONV_OK);
	assert_int_equal(conv(FLOE_COL_DOUBLE, "42", &v), FLOE_CONV_OK);
	assert_true(v.d == 42.0);
	assert_int_equal(conv(FLOE_COL_DOUBLE, "NaN", &v), FLOE_CONV_OK);
	assert_true(v.d != v.d);
	assert_int_equal(conv(FLOE_COL_DOUBLE, "-inf", &v), FLOE_CONV_OK);
	assert_true(v.d < -1e308);
	/* A float holds the nearest single-precision value. */
	assert_int_equal(conv(FLOE_COL_FLOAT, "0.1", &v), FLOE_CONV_OK);
	assert_true(v.d == (double)0.1f);
	static const char *const bad[] = {".", "e5", "1e", "1e+", "0x1p3", " 1.0", "1.0 ", "1,5",
					  "1.2.3", "infinit", "nan(1)"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		fails(FLOE_COL_DOUBLE, bad[i]);
		fails(FLOE_COL_FLOAT, bad[i]);
	}
	char longnum[80];
	memset(longnum, '1', sizeof(longnum) - 1);
	longnum[sizeof(longnum) - 1] = '\0';
	fails(FLOE_COL_DOUBLE, longnum);
}

static void test_booleans_and_dates(void **state)
{
	(void)state;
	static const char *const t[] = {"true", "TRUE", "t", "Yes", "on", "1"};
	static const char *const f[] = {"false", "False", "F", "no", "OFF", "0"};
	for (size_t i = 0; i < 6; i++) {
		ok_int(FLOE_COL_BOOLEAN, t[i], 1);
		ok_int(FLOE_COL_BOOLEAN, f[i], 0);
	}
	fails(FLOE_COL_BOOLEAN, "2");
	fails(FLOE_COL_BOOLEAN, "truth");
	ok_int(FLOE_COL_DATE, "1970-01-01", 0);
	ok_int(FLOE_COL_DATE, "2024-02-29", 19782);
	ok_int(FLOE_COL_DATE, "1969-12-31", -1);
	fails(FLOE_COL_DATE, "2023-02-29");
	fails(FLOE_COL_DATE, "2024-13-01");
	fails(FLOE_COL_DATE, "2024-00-10");
	fails(FLOE_COL_DATE, "2024-1-01");
	fails(FLOE_COL_DATE, "2024-01-01T00:00:00Z");
}

static void test_timestamps(void **state)
{
	(void)state;
	ok_int(FLOE_COL_TIMESTAMPTZ, "1970-01-01T00:00:00Z", 0);
	ok_int(FLOE_COL_TIMESTAMPTZ, "2026-03-01T12:00:00.5+01:00", 1772362800500000);
	ok_int(FLOE_COL_TIMESTAMPTZ, "2026-03-01 11:00:00.500000999z", 1772362800500000);
	ok_int(FLOE_COL_TIMESTAMPTZ, "1969-12-31T23:59:59.999999Z", -1);
	ok_int(FLOE_COL_TIMESTAMPTZ, "2016-12-31T23:59:60Z", 1483228799999999);
	fails(FLOE_COL_TIMESTAMPTZ, "2026-03-01T12:00:00");   /* no offset: a guess */
	fails(FLOE_COL_TIMESTAMPTZ, "2026-02-30T12:00:00Z");  /* no such day */
	fails(FLOE_COL_TIMESTAMPTZ, "2026-03-01T12:00:00Z "); /* not the whole text */
	fails(FLOE_COL_TIMESTAMPTZ, "1772362800");
}

static void test_nulls_and_text(void **state)
{
	(void)state;
	struct floe_pq_value v;
	for (int t = 0; t < FLOE_COL_NTYPES; t++) {
		if (t == FLOE_COL_STRING || t == FLOE_COL_BINARY)
			continue;
		assert_int_equal(conv((enum floe_col_type)t, "-", &v), FLOE_CONV_NULL);
		assert_true(v.is_null);
		assert_int_equal(conv((enum floe_col_type)t, "", &v), FLOE_CONV_NULL);
	}
	const char s[] = "- GET /x";
	assert_int_equal(floe_convert(FLOE_COL_STRING, s, 1, &v), FLOE_CONV_OK);
	assert_ptr_equal(v.s, s);
	assert_int_equal(v.len, 1);
	assert_int_equal(floe_convert(FLOE_COL_BINARY, s, 0, &v), FLOE_CONV_OK);
	assert_false(v.is_null);
	for (int t = 0; t < FLOE_COL_NTYPES; t++) {
		const char *name = floe_col_type_name((enum floe_col_type)t);
		assert_int_equal(floe_col_type_parse(name, strlen(name)), t);
	}
	assert_int_equal(floe_col_type_parse("integer", 7), -1);
	assert_int_equal(floe_col_type_parse("int", 2), -1);
	assert_null(floe_col_type_name(FLOE_COL_NTYPES));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_integers),
	    cmocka_unit_test(test_floats),
	    cmocka_unit_test(test_booleans_and_dates),
	    cmocka_unit_test(test_timestamps),
	    cmocka_unit_test(test_nulls_and_text),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

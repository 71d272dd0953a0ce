/* Tests of agent/parse/multiline: grouping by start pattern with exact record bytes and
 * offsets, the pending offset at every step, max_lines, max_bytes (flush and cut),
 * timeout on an injected clock, flush, leading continuation lines, faults. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "agent/parse/multiline.h"
#include "formats/base/alloc.h"
#include "formats/base/error.h"

#include <string.h>

static struct floe_multiline *ml(const char *start, size_t max_lines, size_t max_bytes)
{
	struct floe_multiline_opts o = {.start = start,
					.start_len = strlen(start),
					.max_lines = max_lines,
					.max_bytes = max_bytes,
					.timeout_us = 1000};
	struct floe_multiline *m = NULL;
	assert_int_equal(floe_multiline_new(NULL, &o, &m, NULL), 0);
	assert_non_null(m);
	return m;
}

/* Pushes lines as if they were consecutive in a file starting at *pos. */
static bool push(struct floe_multiline *m, const char *line, int64_t *pos, int64_t now,
		 struct floe_multiline_rec *out)
{
	bool e = false;
	size_t n = strlen(line);
	assert_int_equal(floe_multiline_push(m, line, n, *pos, *pos + (int64_t)n + 1, now, out, &e),
			 0);
	*pos += (int64_t)n + 1;
	return e;
}

static void expect_rec(const struct floe_multiline_rec *r, const char *text, int64_t off,
		       int64_t end, size_t nlines)
{
	assert_int_equal(r->len, strlen(text));
	assert_memory_equal(r->p, text, r->len);
	assert_int_equal(r->offset, off);
	assert_int_equal(r->end_offset, end);
	assert_int_equal(r->nlines, nlines);
}

static void test_grouping(void **state)
{
	struct floe_multiline *m = ml("^[0-9]{4}-", 0, 0);
	struct floe_multiline_rec r;
	int64_t pos = 0, pend = -1;
	assert_false(floe_multiline_pending(m, &pend));
	/* A continuation line with nothing before it starts a record of its own. */
	assert_false(push(m, "\tat orphan", &pos, 1, &r));
	assert_true(floe_multiline_pending(m, &pend));
	assert_int_equal(pend, 0);
	assert_true(push(m, "2024-01-01 boom", &pos, 2, &r));
	expect_rec(&r, "\tat orphan", 0, 11, 1);
	assert_int_equal(floe_multiline_pending(m, &pend), true);
	assert_int_equal(pend, 11);
	assert_false(push(m, "java.lang.Error: x", &pos, 3, &r));
	assert_false(push(m, "\tat a.b(C.java:1)", &pos, 4, &r));
	assert_false(push(m, "", &pos, 5, &r));
	assert_true(floe_multiline_pending(m, &pend));
	assert_int_equal(pend, 11);
	assert_true(push(m, "2024-01-01 next", &pos, 6, &r));
	expect_rec(&r, "2024-01-01 boom\njava.lang.Error: x\n\tat a.b(C.java:1)\n", 11, 65, 4);
	assert_false(r.truncated);
	assert_true(floe_multiline_pending(m, &pend));
	assert_int_equal(pend, 65);
	/* Flush at end of input. */
	bool e;
	floe_multiline_flush(m, &r, &e);
	assert_true(e);
	expect_rec(&r, "2024-01-01 next", 65, 81, 1);
	assert_false(floe_multiline_pending(m, &pend));
	floe_multiline_flush(m, &r, &e);
	assert_false(e);
	struct floe_multiline_stats st;
	floe_multiline_get_stats(m, &st);
	assert_int_equal(st.records, 3);
	assert_int_equal(st.by_timeout + st.by_max_lines + st.by_max_bytes + st.truncated, 0);
	floe_multiline_free(m);
	floe_multiline_free(NULL);
}

static void test_timeout(void **state)
{
	struct floe_multiline *m = ml("^S", 0, 0);
	struct floe_multiline_rec r;
	int64_t pos = 100;
	bool e;
	floe_multiline_poll(m, 5000, &r, &e);
	assert_false(e);
	assert_false(push(m, "S1", &pos, 1000, &r));
	assert_false(push(m, "c", &pos, 1500, &r));
	floe_multiline_poll(m, 2499, &r, &e); /* 999 µs after the last line */
	assert_false(e);
	floe_multiline_poll(m, 2500, &r, &e);
	assert_true(e);
	expect_rec(&r, "S1\nc", 100, 105, 2);
	int64_t pend;
	assert_false(floe_multiline_pending(m, &pend));
	/* After a timeout, a late continuation starts a new record. */
	assert_false(push(m, "late", &pos, 9000, &r));
	assert_true(floe_multiline_pending(m, &pend));
	assert_int_equal(pend, 105);
	struct floe_multiline_stats st;
	floe_multiline_get_stats(m, &st);
	assert_int_equal(st.by_timeout, 1);
	floe_multiline_free(m);
}

static void test_caps(void **state)
{
	/* max_lines 3. */
	struct floe_multiline *m = ml("^S", 3, 0);
	struct floe_multiline_rec r;
	int64_t pos = 0;
	assert_false(push(m, "S", &pos, 0, &r));
	assert_false(push(m, "a", &pos, 0, &r));
	assert_false(push(m, "b", &pos, 0, &r));
	assert_true(push(m, "c", &pos, 0, &r));
	expect_rec(&r, "S\na\nb", 0, 6, 3);
	struct floe_multiline_stats st;
	floe_multiline_get_stats(m, &st);
	assert_int_equal(st.by_max_lines, 1);
	floe_multiline_free(m);

	/* max_bytes 10: "S1234\nabc" is 9, "+\nd" would make 11. */
	m = ml("^S", 0, 10);
	pos = 0;
	assert_false(push(m, "S1234", &pos, 0, &r));
	assert_false(push(m, "abc", &pos, 0, &r));
	assert_true(push(m, "d", &pos, 0, &r));
	expect_rec(&r, "S1234\nabc", 0, 10, 2);
	/* Exactly 10 fits. */
	assert_false(push(m, "12345678", &pos, 0, &r)); /* "d\n12345678" = 10 */
	assert_true(push(m, "S", &pos, 0, &r));
	expect_rec(&r, "d\n12345678", 10, 21, 2);
	/* A single line over max_bytes is cut. */
	assert_true(push(m, "S234567890ABC", &pos, 0, &r));
	expect_rec(&r, "S", 21, 23, 1);
	bool e;
	floe_multiline_flush(m, &r, &e);
	assert_true(e);
	expect_rec(&r, "S234567890", 23, 37, 1);
	assert_true(r.truncated);
	floe_multiline_get_stats(m, &st);
	assert_int_equal(st.by_max_bytes, 1);
	assert_int_equal(st.truncated, 1);
	floe_multiline_free(m);
}

static void test_long_line_start_test(void **state)
{
	/* The start pattern sees only the first max_line_bytes of a line. */
	struct floe_multiline_opts o = {.start = "^S", .start_len = 2, .max_line_bytes = 4};
	struct floe_multiline *m = NULL;
	assert_int_equal(floe_multiline_new(NULL, &o, &m, NULL), 0);
	assert_non_null(m);
	struct floe_multiline_rec r;
	bool e;
	assert_int_equal(floe_multiline_push(m, "S0123456789", 11, 0, 12, 0, &r, &e), 0);
	assert_false(e);
	assert_int_equal(floe_multiline_push(m, "S0123456789", 11, 12, 24, 0, &r, &e), 0);
	assert_true(e);
	floe_multiline_free(m);
}

static void test_bad_and_faults(void **state)
{
	struct floe_multiline_opts o = {.start = "(", .start_len = 1};
	struct floe_err why = {0};
	struct floe_multiline *none = NULL;
	assert_int_equal(floe_multiline_new(NULL, &o, &none, &why), FLOE_EINVAL);
	assert_null(none);
	assert_int_equal(why.code, FLOE_EINVAL);
	assert_true(why.msg[0] != 0);
	o.start = "^x";
	o.start_len = 2;
	o.max_bytes = 64;
	struct floe_alloc a;
	for (long k = 0;; k++) {
		floe_alloc_init(&a, 0);
		a.fail_after = k;
		struct floe_multiline *m = NULL;
		int err = floe_multiline_new(&a, &o, &m, NULL);
		if (m) {
			floe_multiline_free(m);
			assert_int_equal(a.used, 0);
			break;
		}
		assert_int_equal(err, FLOE_ENOMEM);
		assert_int_equal(a.used, 0);
	}
	/* A budget below the two buffers. */
	floe_alloc_init(&a, 100);
	assert_int_equal(floe_multiline_new(&a, &o, &none, NULL), FLOE_ENOMEM);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_grouping),	   cmocka_unit_test(test_timeout),
	    cmocka_unit_test(test_caps),	   cmocka_unit_test(test_long_line_start_test),
	    cmocka_unit_test(test_bad_and_faults),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

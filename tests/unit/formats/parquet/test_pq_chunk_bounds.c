/* A string column's statistics through the writer (formats/parquet/chunk.c): the chunk
 * decides from a value's first bytes whether it can move a bound, so values that share
 * those bytes with the bounds, are shorter than eight bytes, are empty, or are prefixes
 * of each other must still give exactly the least and the greatest value. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "formats/parquet/bound.h"
#include "formats/parquet/writer.h"
#include "mem_sink.h"

/* Value r of a run: lengths 0 to 19 over a few bytes, many sharing a prefix of 8 or more
 * bytes, so both the short and the long comparisons decide and tie. */
static size_t value(uint32_t *x, char *out)
{
	static const char alphabet[] = {'a', 'b', 'z', '/', '\x7f', '\xc3', '\xa9'};
	*x ^= *x << 13;
	*x ^= *x >> 17;
	*x ^= *x << 5;
	size_t n = *x % 20, shared = (*x >> 8) % 3 ? (n < 9 ? n : 9) : 0;
	memcpy(out, "/api/v1/i", shared);
	for (size_t i = shared; i < n; i++) {
		*x ^= *x << 13;
		*x ^= *x >> 17;
		*x ^= *x << 5;
		out[i] = alphabet[*x % 5]; /* ASCII only: no value needs a repair */
	}
	return n;
}

static void test_string_bounds_are_exact(void **state)
{
	(void)state;
	for (uint32_t seed = 1; seed <= 20; seed++) {
		struct floe_pq_column cols[] = {{"s", 1, FLOE_PQ_STRING, true, 0, 0}};
		struct floe_pq_options o = {0};
		struct mem m = {0};
		struct floe_pq_writer *w = NULL;
		assert_int_equal(floe_pq_writer_new(NULL, cols, 1, &o, mem_sink, &m, &w), 0);
		char lo[32], hi[32], v[32];
		size_t lon = 0, hin = 0;
		bool any = false;
		uint32_t x = seed * 2654435761u;
		for (int r = 0; r < 3000; r++) {
			size_t n = value(&x, v);
			struct floe_pq_value row = {.s = v, .len = n};
			assert_int_equal(floe_pq_writer_add_row(w, &row), 0);
			if (!any || floe_pq_bytes_cmp((const uint8_t *)v, n, (const uint8_t *)lo, lon) < 0)
				memcpy(lo, v, lon = n);
			if (!any || floe_pq_bytes_cmp((const uint8_t *)v, n, (const uint8_t *)hi, hin) > 0)
				memcpy(hi, v, hin = n);
			any = true;
		}
		assert_int_equal(floe_pq_writer_finish(w), 0);
		size_t ns;
		const struct floe_pq_leaf_stats *st = floe_pq_writer_stats(w, &ns);
		assert_int_equal(ns, 1);
		assert_true(st[0].has_min_max);
		assert_int_equal(st[0].min_len, lon);
		assert_memory_equal(st[0].min, lo, lon);
		assert_int_equal(st[0].max_len, hin);
		assert_memory_equal(st[0].max, hi, hin);
		floe_pq_writer_free(w);
		free(m.p);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_string_bounds_are_exact),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

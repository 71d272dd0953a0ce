/* Unit tests for agent/pipeline/parts: a key is found again under the number it first
 * got, whether the last key found (the memo that spares the hash) is the same one or
 * not, and after a clear nothing the memo held is found. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "agent/pipeline/parts.h"
#include "agent/schema/partition.h"
#include "agent/schema/record.h"
#include "formats/base/alloc.h"

#define US_PER_DAY (INT64_C(86400) * 1000000)

/* The key of a record at day `day` from app (NULL: none). */
static void key_of(const struct floe_part_spec *spec, int64_t day, const char *app,
		   struct floe_part_key *key)
{
	struct floe_record rec;
	memset(&rec, 0, sizeof(rec));
	rec.ts = day * US_PER_DAY + 3600;
	if (app)
		rec.app = (struct floe_str){app, strlen(app)};
	assert_int_equal(floe_part_key_of(spec, &rec, key), 0);
}

/* The number a plain look through the keys met so far gives (its order of first
 * arrival), or the next one: what floe_parts_find must give, memo or not. */
static size_t expected(const struct floe_part_spec *spec, struct floe_part_key *seen, size_t *nseen,
		       const struct floe_part_key *key)
{
	for (size_t i = 0; i < *nseen; i++)
		if (floe_part_key_equal(spec, &seen[i], key))
			return i;
	seen[*nseen] = *key;
	for (size_t k = 0; k < spec->n; k++)
		if (seen[*nseen].v[k].s)
			seen[*nseen].v[k].s = seen[*nseen].str[k];
	return (*nseen)++;
}

static void test_find_against_a_plain_look(void **state)
{
	(void)state;
	struct floe_alloc a;
	floe_alloc_init(&a, 0);
	struct floe_part_spec spec;
	char *entries[] = {"day(ts)", "app"};
	assert_int_equal(floe_part_spec_from_config(&spec, entries, 2, NULL), 0);
	struct floe_parts *p;
	assert_int_equal(floe_parts_new(&a, &spec, &p), 0);
	static struct floe_part_key seen[64];
	size_t nseen = 0;
	/* Runs of one key, alternations, a key with no app (null) beside "" and "a", and a
	 * key met again after others, over more keys than the first table's slots hold. */
	static const struct {
		int64_t day;
		const char *app;
	} seq[] = {
	    {1, "a"},  {1, "a"}, {1, "a"},  {1, "b"},  {1, "a"},  {1, "b"}, {1, NULL}, {1, ""},
	    {1, NULL}, {1, ""},  {2, "a"},  {2, "a"},  {1, "a"},  {2, "b"}, {2, "b"},  {3, NULL},
	    {1, "ab"}, {1, "a"}, {1, "ab"}, {1, "ba"}, {1, "b"},  {1, "a"}, {2, NULL}, {2, NULL},
	};
	for (int round = 0; round < 2; round++) {
		for (size_t i = 0; i < sizeof(seq) / sizeof(seq[0]); i++) {
			struct floe_part_key key;
			key_of(&spec, seq[i].day, seq[i].app, &key);
			size_t before = nseen, want = expected(&spec, seen, &nseen, &key), idx = 99;
			assert_int_equal(floe_parts_find(p, &key, &idx), nseen > before ? 1 : 0);
			assert_int_equal(idx, want);
			assert_int_equal(floe_parts_count(p), nseen);
		}
		/* Many keys: the table grows while the memo points at the last one. */
		for (int64_t d = 10; d < 60; d++) {
			struct floe_part_key key;
			for (int twice = 0; twice < 2; twice++) {
				key_of(&spec, d, "x", &key);
				size_t want = expected(&spec, seen, &nseen, &key), idx = 99;
				assert_int_equal(floe_parts_find(p, &key, &idx), twice ? 0 : 1);
				assert_int_equal(idx, want);
			}
		}
		/* After the clear the last key is new again, numbered from 0. */
		floe_parts_clear(p);
		nseen = 0;
		struct floe_part_key key;
		key_of(&spec, 59, "x", &key);
		size_t idx = 99;
		assert_int_equal(floe_parts_find(p, &key, &idx), 1);
		assert_int_equal(idx, 0);
		floe_parts_clear(p);
	}
	floe_parts_free(p);
	assert_int_equal(floe_alloc_used(&a), 0);
}

/* floor(a / b) for b > 0. */
static int64_t floor_div(int64_t a, int64_t b)
{
	return a / b - (a % b != 0 && a < 0);
}

/* A partition known by its time alone (floe_parts_find_time) is the one its key finds,
 * across day and hour boundaries, before 1970, at the ends of int64 and of the int32
 * values; and a time is known whenever the time before it was of the same day or hour,
 * for a spec of that one field only. */
static void test_find_time_against_the_key(void **state)
{
	(void)state;
	const int64_t D = INT64_C(86400000000), H = INT64_C(3600000000);
	const int64_t ts[] = {
	    0,	      1,	 D - 1,	      D,	  D + 1,      5 * H,	 5 * H - 1, 5 * H,
	    -1,	      -D,	 -D - 1,      -D + 1,	  -1,	      3 * D + 7, 3 * D + 8, 2 * D,
	    3 * D,    INT64_MAX, INT64_MAX - 1, INT64_MIN, INT64_MIN + 1, INT64_MIN, 0,
	    (int64_t)INT32_MAX * H, (int64_t)INT32_MAX * H + 5, ((int64_t)INT32_MAX + 1) * H,
	    (int64_t)INT32_MIN * H, (int64_t)INT32_MIN * H - 1, ((int64_t)INT32_MAX + 1) * H + 9,
	    (int64_t)INT32_MIN * H + 9, INT64_MAX / D * D, INT64_MAX / D * D - 1, 42,
	};
	static const struct {
		const char *f[2];
		size_t n;
		int64_t unit; /* 0: never known by time */
	} specs[] = {
	    {{"day(ts)"}, 1, INT64_C(86400000000)},
	    {{"hour(ts)"}, 1, INT64_C(3600000000)},
	    {{"month(ts)"}, 1, 0},
	    {{"day(ts)", "app"}, 2, 0},
	};
	for (size_t s = 0; s < sizeof(specs) / sizeof(specs[0]); s++) {
		struct floe_alloc a;
		floe_alloc_init(&a, 0);
		struct floe_part_spec spec;
		assert_int_equal(floe_part_spec_from_config(&spec, (char *const *)specs[s].f,
							    specs[s].n, NULL),
				 0);
		struct floe_parts *p;
		assert_int_equal(floe_parts_new(&a, &spec, &p), 0);
		for (int round = 0; round < 2; round++) {
			size_t idx = 0;
			assert_false(floe_parts_find_time(p, 0, &idx));
			for (size_t i = 0; i < sizeof(ts) / sizeof(ts[0]); i++) {
				struct floe_record rec;
				memset(&rec, 0, sizeof(rec));
				rec.ts = ts[i];
				rec.app = (struct floe_str){"a", 1};
				size_t by_time = 99, by_key = 98;
				bool known = floe_parts_find_time(p, ts[i], &by_time);
				struct floe_part_key key;
				assert_int_equal(floe_part_key_of(&spec, &rec, &key), 0);
				assert_true(floe_parts_find(p, &key, &by_key) >= 0);
				if (known)
					assert_int_equal(by_time, by_key);
				int64_t u = specs[s].unit;
				bool same_unit = i > 0 && u &&
						 floor_div(ts[i - 1], u) == floor_div(ts[i], u) &&
						 floor_div(ts[i], u) >= INT32_MIN &&
						 floor_div(ts[i], u) <= INT32_MAX &&
						 floor_div(ts[i], u) <= INT64_MAX / u - 1 &&
						 floor_div(ts[i], u) >= INT64_MIN / u;
				if (same_unit)
					assert_true(known);
				if (!u)
					assert_false(known);
			}
			floe_parts_clear(p);
		}
		floe_parts_free(p);
		assert_int_equal(floe_alloc_used(&a), 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_find_against_a_plain_look),
	    cmocka_unit_test(test_find_time_against_the_key),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

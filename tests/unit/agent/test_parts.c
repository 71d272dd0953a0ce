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

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_find_against_a_plain_look),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

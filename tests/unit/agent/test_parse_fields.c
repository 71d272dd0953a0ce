/* Tests of agent/parse/fields: adding slices and null values, last-wins duplicates, the
 * arena protocol, capacity drops, the batched add of a parser with fixed names, the
 * record view, reset, and allocation failure. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "agent/parse/fields.h"
#include "agent/schema/record.h"
#include "formats/base/alloc.h"
#include "formats/base/error.h"

#include <string.h>

static void test_add_find(void **state)
{
	struct floe_alloc a;
	floe_alloc_init(&a, 0);
	struct floe_fields *f = NULL;
	assert_int_equal(floe_fields_new(&a, 3, 16, &f), 0);
	assert_non_null(f);
	const char *line = "k=v x=yy";
	assert_int_equal(floe_fields_add(f, line, 1, line + 2, 1), 0);
	assert_int_equal(floe_fields_add(f, line + 4, 1, NULL, 99), 0);
	assert_int_equal(floe_fields_count(f), 2);
	assert_ptr_equal(floe_fields_keys(f)[0], line);
	assert_int_equal(floe_fields_key_lens(f)[1], 1);
	assert_null(floe_fields_vals(f)[1]);
	assert_int_equal(floe_fields_val_lens(f)[1], 0);
	/* Last one wins, in place. */
	assert_int_equal(floe_fields_add(f, "k", 1, "zz", 2), 0);
	assert_int_equal(floe_fields_count(f), 2);
	const char *v;
	size_t vl;
	assert_true(floe_fields_find(f, "k", 1, &v, &vl));
	assert_int_equal(vl, 2);
	assert_memory_equal(v, "zz", 2);
	assert_true(floe_fields_find(f, "x", 1, &v, &vl));
	assert_null(v);
	assert_false(floe_fields_find(f, "kk", 2, &v, &vl));
	/* An empty key is a key like any other. */
	assert_int_equal(floe_fields_add(f, "", 0, "e", 1), 0);
	assert_true(floe_fields_find(f, "", 0, &v, &vl));
	/* Full: dropped and counted; a duplicate still replaces. */
	assert_int_equal(floe_fields_add(f, "q", 1, "1", 1), FLOE_ELIMIT);
	assert_int_equal(floe_fields_dropped(f), 1);
	assert_int_equal(floe_fields_add(f, "k", 1, "3", 1), 0);
	assert_int_equal(floe_fields_count(f), 3);

	struct floe_record rec;
	memset(&rec, 0, sizeof(rec));
	floe_fields_to_record(f, &rec);
	assert_int_equal(rec.nattrs, 3);
	assert_ptr_equal(rec.attr_keys, floe_fields_keys(f));
	assert_ptr_equal(rec.attr_val_lens, floe_fields_val_lens(f));

	floe_fields_reset(f);
	assert_int_equal(floe_fields_count(f), 0);
	assert_int_equal(floe_fields_dropped(f), 0);
	floe_fields_free(f);
	assert_int_equal(a.used, 0);
	floe_fields_free(NULL);
}

/* Keys of one length and first byte, and keys of every length from 0 to 80 (so that
 * some fold onto one class): each is found with its own value, a duplicate replaces its
 * own pair only, a key never added is not found, and reset forgets them all. */
static void test_key_classes(void **state)
{
	(void)state;
	struct floe_fields *f = NULL;
	assert_int_equal(floe_fields_new(NULL, 128, 16, &f), 0);
	static const char text[] = "hosthosehostnamehost_name"
				   "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
	const char *as = text + 25;
	assert_int_equal(floe_fields_add(f, text, 4, "1", 1), 0);
	assert_int_equal(floe_fields_add(f, text + 4, 4, "2", 1), 0);
	for (size_t n = 0; n <= 80; n++)
		assert_int_equal(floe_fields_add(f, as, n, as, n), 0);
	assert_int_equal(floe_fields_count(f), 83);
	assert_int_equal(floe_fields_add(f, "hose", 4, "3", 1), 0); /* replaces */
	assert_int_equal(floe_fields_count(f), 83);
	const char *v;
	size_t vl;
	assert_true(floe_fields_find(f, "host", 4, &v, &vl));
	assert_memory_equal(v, "1", 1);
	assert_true(floe_fields_find(f, "hose", 4, &v, &vl));
	assert_memory_equal(v, "3", 1);
	for (size_t n = 0; n <= 80; n++) {
		assert_true(floe_fields_find(f, as, n, &v, &vl));
		assert_int_equal(vl, n);
	}
	assert_false(floe_fields_find(f, "hosts", 5, &v, &vl));
	assert_false(floe_fields_find(f, "hist", 4, &v, &vl));
	assert_false(floe_fields_find(f, "b", 1, &v, &vl));
	floe_fields_reset(f);
	assert_false(floe_fields_find(f, "host", 4, &v, &vl));
	assert_false(floe_fields_find(f, as, 0, &v, &vl));
	assert_int_equal(floe_fields_add(f, "host", 4, "4", 1), 0);
	assert_true(floe_fields_find(f, "host", 4, &v, &vl));
	assert_memory_equal(v, "4", 1);
	floe_fields_free(f);
}

static void test_arena(void **state)
{
	struct floe_fields *f = NULL;
	assert_int_equal(floe_fields_new(NULL, 4, 10, &f), 0);
	assert_non_null(f);
	size_t avail;
	char *d = floe_fields_scratch(f, &avail);
	assert_int_equal(avail, 10);
	memcpy(d, "abcdef", 6);
	floe_fields_commit(f, 6);
	char *d2 = floe_fields_scratch(f, &avail);
	assert_ptr_equal(d2, d + 6);
	assert_int_equal(avail, 4);
	floe_fields_commit(f, 4);
	floe_fields_scratch(f, &avail);
	assert_int_equal(avail, 0);
	assert_memory_equal(d, "abcdef", 6);
	floe_fields_drop(f);
	assert_int_equal(floe_fields_dropped(f), 1);
	floe_fields_reset(f);
	assert_ptr_equal(floe_fields_scratch(f, &avail), d);
	assert_int_equal(avail, 10);
	floe_fields_free(f);
}

static void test_bad_args_and_faults(void **state)
{
	struct floe_fields *f = NULL;
	assert_int_equal(floe_fields_new(NULL, 0, 10, &f), FLOE_EINVAL);
	assert_int_equal(floe_fields_new(NULL, SIZE_MAX / 4, 10, &f), FLOE_EINVAL);
	assert_null(f); /* untouched on failure */
	struct floe_alloc a;
	floe_alloc_init(&a, 0);
	a.fail_after = 0;
	assert_int_equal(floe_fields_new(&a, 8, 64, &f), FLOE_ENOMEM);
	a.fail_after = 1;
	assert_int_equal(floe_fields_new(&a, 8, 64, &f), 0);
	assert_non_null(f);
	floe_fields_free(f);
	assert_int_equal(a.used, 0);
	/* A budget too small for the block. */
	floe_alloc_init(&a, 100);
	f = NULL;
	assert_int_equal(floe_fields_new(&a, 8, 64, &f), FLOE_ENOMEM);
	assert_null(f);
}

/* floe_fields_add_ids leaves the same pairs, ids, drops and lookups as one
 * floe_fields_add_id per pair: fresh keys, a key of a held class, the same key twice (last
 * wins in place), a null value, pairs already held, and a full table. */
static void test_add_ids(void **state)
{
	(void)state;
	static const char *const names[] = {"client", "path", "ident", "user", "method", "x"};
	static const unsigned char lens[] = {6, 4, 5, 4, 6, 1};
	/* path and ident share a key class (length * 7 + first byte, mod 64). */
	const uint8_t ids[] = {0, 2, 1, 3, 1, 4, 5};
	const char *vals[] = {"a", "bb", "ccc", NULL, "dddd", "e", "ff"};
	const size_t vlens[] = {1, 2, 3, 7, 4, 1, 2};
	for (size_t cap = 1; cap <= 8; cap++) {
		for (size_t held = 0; held <= 1; held++) {
			struct floe_alloc a;
			floe_alloc_init(&a, 0);
			struct floe_fields *one = NULL, *all = NULL;
			assert_int_equal(floe_fields_new(&a, cap, 16, &one), 0);
			assert_int_equal(floe_fields_new(&a, cap, 16, &all), 0);
			if (held) {
				floe_fields_add(one, "user", 4, "held", 4);
				floe_fields_add(all, "user", 4, "held", 4);
			}
			int want = 0;
			for (size_t j = 0; j < sizeof(ids); j++)
				if (floe_fields_add_id(one, ids[j], names[ids[j]], lens[ids[j]],
						       vals[j], vlens[j]))
					want = FLOE_ELIMIT;
			assert_int_equal(floe_fields_add_ids(all, sizeof(ids), ids, names, lens,
							     vals, vlens),
					 want);
			size_t n = floe_fields_count(one);
			assert_int_equal(floe_fields_count(all), n);
			assert_int_equal(floe_fields_dropped(all), floe_fields_dropped(one));
			for (size_t k = 0; k < n; k++) {
				assert_ptr_equal(floe_fields_keys(all)[k], floe_fields_keys(one)[k]);
				assert_int_equal(floe_fields_key_lens(all)[k],
						 floe_fields_key_lens(one)[k]);
				assert_ptr_equal(floe_fields_vals(all)[k], floe_fields_vals(one)[k]);
				assert_int_equal(floe_fields_val_lens(all)[k],
						 floe_fields_val_lens(one)[k]);
				assert_int_equal(floe_fields_ids(all)[k], floe_fields_ids(one)[k]);
			}
			for (size_t i = 0; i < sizeof(lens); i++) {
				const char *v1 = NULL, *v2 = NULL;
				size_t l1 = 0, l2 = 0;
				assert_int_equal(floe_fields_find(all, names[i], lens[i], &v2, &l2),
						 floe_fields_find(one, names[i], lens[i], &v1, &l1));
				assert_ptr_equal(v2, v1);
				assert_int_equal(l2, l1);
			}
			floe_fields_free(one);
			floe_fields_free(all);
		}
	}
}

/* floe_fields_add_distinct leaves the same pairs, ids, drops, lookups and result as one
 * floe_fields_add_id per pair: every prefix of a list of distinct keys (two of them of
 * one key class, a null value), into an empty table and one that holds a pair, with room
 * for all of them, exactly, and for fewer. */
static void test_add_distinct(void **state)
{
	(void)state;
	static const char *const names[] = {"client", "path", "ident", "user", "method", "x"};
	static const unsigned char lens[] = {6, 4, 5, 4, 6, 1};
	static const uint64_t classes[] = {
	    FLOE_FIELDS_KEY_CLASS(6, 'c'), FLOE_FIELDS_KEY_CLASS(4, 'p'), FLOE_FIELDS_KEY_CLASS(5, 'i'),
	    FLOE_FIELDS_KEY_CLASS(4, 'u'), FLOE_FIELDS_KEY_CLASS(6, 'm'), FLOE_FIELDS_KEY_CLASS(1, 'x'),
	};
	const uint8_t ids[] = {0, 2, 1, 3, 4, 5};
	const char *vals[] = {"a", "bb", NULL, "ccc", "dddd", "e"};
	const size_t vlens[] = {1, 2, 7, 3, 4, 1};
	for (size_t cap = 1; cap <= 8; cap++) {
		for (size_t held = 0; held <= 1; held++) {
			for (size_t n = 0; n <= sizeof(ids); n++) {
				struct floe_fields *one = NULL, *all = NULL;
				assert_int_equal(floe_fields_new(NULL, cap, 16, &one), 0);
				assert_int_equal(floe_fields_new(NULL, cap, 16, &all), 0);
				if (held) {
					floe_fields_add(one, "user", 4, "held", 4);
					floe_fields_add(all, "user", 4, "held", 4);
				}
				int want = 0;
				for (size_t j = 0; j < n; j++)
					if (floe_fields_add_id(one, ids[j], names[ids[j]],
							       lens[ids[j]], vals[j], vlens[j]))
						want = FLOE_ELIMIT;
				assert_int_equal(floe_fields_add_distinct(all, n, ids, names, lens,
									  classes, vals, vlens),
						 want);
				size_t c = floe_fields_count(one);
				assert_int_equal(floe_fields_count(all), c);
				assert_int_equal(floe_fields_dropped(all), floe_fields_dropped(one));
				for (size_t k = 0; k < c; k++) {
					assert_ptr_equal(floe_fields_keys(all)[k],
							 floe_fields_keys(one)[k]);
					assert_int_equal(floe_fields_key_lens(all)[k],
							 floe_fields_key_lens(one)[k]);
					assert_ptr_equal(floe_fields_vals(all)[k],
							 floe_fields_vals(one)[k]);
					assert_int_equal(floe_fields_val_lens(all)[k],
							 floe_fields_val_lens(one)[k]);
					assert_int_equal(floe_fields_ids(all)[k],
							 floe_fields_ids(one)[k]);
				}
				/* The key classes too: every name, and one no pair has. */
				for (size_t i = 0; i <= sizeof(lens); i++) {
					const char *nm = i < sizeof(lens) ? names[i] : "host";
					size_t nl = i < sizeof(lens) ? lens[i] : 4;
					const char *v1 = NULL, *v2 = NULL;
					size_t l1 = 0, l2 = 0;
					assert_int_equal(floe_fields_find(all, nm, nl, &v2, &l2),
							 floe_fields_find(one, nm, nl, &v1, &l1));
					assert_ptr_equal(v2, v1);
					assert_int_equal(l2, l1);
				}
				/* A later add sees the classes: a duplicate replaces in place. */
				if (c) {
					floe_fields_add(one, names[ids[0]], lens[ids[0]], "z", 1);
					floe_fields_add(all, names[ids[0]], lens[ids[0]], "z", 1);
					assert_int_equal(floe_fields_count(all), floe_fields_count(one));
				}
				floe_fields_free(one);
				floe_fields_free(all);
			}
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_add_find),
	    cmocka_unit_test(test_key_classes),
	    cmocka_unit_test(test_add_ids),
	    cmocka_unit_test(test_add_distinct),
	    cmocka_unit_test(test_arena),
	    cmocka_unit_test(test_bad_args_and_faults),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

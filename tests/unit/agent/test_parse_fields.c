/* Tests of agent/parse/fields: adding slices and null values, last-wins duplicates, the
 * arena protocol, capacity drops, the record view, reset, and allocation failure. */
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

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_add_find),
	    cmocka_unit_test(test_arena),
	    cmocka_unit_test(test_bad_args_and_faults),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Unit tests for agent/schema/record's rows: the row made in the row a record lends
 * (floe_record_row) holds what floe_record_to_row fills, with fewer typed values than the
 * writer's columns, as many, more, none, and typed values that lie elsewhere. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "agent/schema/columns.h"
#include "agent/schema/record.h"
#include "formats/parquet/writer.h"

static void same_value(const struct floe_pq_value *a, const struct floe_pq_value *b, size_t col)
{
	if (a->is_null != b->is_null || a->i != b->i || a->s != b->s || a->len != b->len ||
	    a->n != b->n || a->keys != b->keys || a->key_lens != b->key_lens || a->vals != b->vals ||
	    a->val_lens != b->val_lens || a->d != b->d || a->ivals != b->ivals)
		fail_msg("column %zu differs", col);
}

/* A record with attributes and ntyped typed values at typed; variant picks which of its
 * built-in columns are null (odd: most of them), so that a row made in place goes from
 * null to set and back. */
static void record(struct floe_record *rec, struct floe_pq_value *typed, size_t ntyped,
		   unsigned variant)
{
	static const char *const keys[] = {"k1", "k2"}, *const vals[] = {"v1", NULL};
	static const size_t klens[] = {2, 2}, vlens[] = {2, 0};
	memset(rec, 0, sizeof(*rec));
	rec->ts = 1700000000000000;
	rec->received_at = 1700000000000001;
	rec->host = (struct floe_str){"h", 1};
	rec->source = (struct floe_str){"/var/log/x", 10};
	rec->has_offset = true;
	rec->offset = 42;
	rec->has_severity = true;
	rec->severity = 3;
	rec->app = (struct floe_str){"app", 3};
	rec->message = (struct floe_str){"a line", 6};
	if (variant & 1) {
		rec->host = (struct floe_str){NULL, 0};
		rec->has_offset = false;
		rec->has_severity = false;
		rec->has_facility = true;
		rec->facility = 4;
		rec->app = (struct floe_str){NULL, 0};
		rec->proc_id = (struct floe_str){"12", 2};
		rec->msg_id = (struct floe_str){"", 0};
		rec->message = (struct floe_str){NULL, 0};
	}
	rec->nattrs = variant & 2 ? 0 : 2;
	rec->attr_keys = keys;
	rec->attr_key_lens = klens;
	rec->attr_vals = vals;
	rec->attr_val_lens = vlens;
	for (size_t i = 0; i < ntyped; i++) {
		floe_pq_value_init(&typed[i], i % 3 == 2);
		if (i % 3 == 0)
			typed[i].i = (int64_t)i * 1000 + 7;
		if (i % 3 == 1) {
			typed[i].s = "str";
			typed[i].len = 3;
		}
	}
	rec->ntyped = ntyped;
	rec->typed = ntyped ? typed : NULL;
}

static void test_row_in_place_against_a_copy(void **state)
{
	(void)state;
	static struct floe_pq_value lent[FLOE_LOG_MAX_COLS], other[FLOE_COLS_MAX],
	    want[FLOE_LOG_MAX_COLS], values[FLOE_LOG_MAX_COLS];
	/* As its maker sets the lent row, once. */
	for (size_t i = 0; i < FLOE_LOG_MAX_COLS; i++)
		floe_pq_value_init(&lent[i], true);
	unsigned variant = 0;
	for (size_t ncols = FLOE_LOG_NCOLS; ncols <= FLOE_LOG_MAX_COLS; ncols++) {
		for (size_t ntyped = 0; ntyped <= FLOE_COLS_MAX; ntyped++) {
			for (int where = 0; where < 3; where++) {
				struct floe_record rec;
				/* 0: typed in the lent row; 1: elsewhere, a row lent; 2: no row. */
				struct floe_pq_value *typed = where == 0 ? lent + FLOE_LOG_NCOLS : other;
				/* What the typed part held before must not show through. */
				memset(lent + FLOE_LOG_NCOLS, 0x5a, sizeof(lent) - sizeof(lent[0]) * FLOE_LOG_NCOLS);
				record(&rec, typed, ntyped, variant++);
				struct floe_pq_value saved[FLOE_COLS_MAX];
				memcpy(saved, typed, ntyped * sizeof(saved[0]));
				rec.row = where == 2 ? NULL : lent;
				floe_record_to_row(&rec, want, ncols);
				memset(values, 0xa5, sizeof(values));
				const struct floe_pq_value *row = floe_record_row(&rec, values, ncols);
				bool in_place = where == 0 && ntyped > 0;
				assert_ptr_equal(row, in_place ? lent : values);
				for (size_t c = 0; c < ncols; c++)
					same_value(&row[c], &want[c], c);
				/* The typed values themselves are left as they were. */
				for (size_t i = 0; i < ntyped; i++)
					same_value(&typed[i], &saved[i], FLOE_LOG_NCOLS + i);
			}
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_row_in_place_against_a_copy),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

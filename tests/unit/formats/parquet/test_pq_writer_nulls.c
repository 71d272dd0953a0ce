/* Parquet writer: columns left null for long runs, which the writer's row step holds back
 * from their chunks and gives them later in one step (writer_row.c): a run past a page's
 * 8192 level entries after values, runs that end in a value, a map null, empty and full
 * in turns, a column always null, row groups and pages that close within the runs, in
 * both profiles. Every row is read back, the whole file's null and value counts and one
 * column's page boundaries are checked; Debug builds also check the writer's sums at
 * every row (an assertion). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "formats/base/alloc.h"
#include "formats/base/crc.h"
#include "formats/base/error.h"
#include "formats/parquet/reader.h"
#include "formats/parquet/writer.h"

#include "mem_sink.h"
#include "pq_rows.h"
#include "pq_walk.h"

#define NROWS 40000u
#define NC 7

static const struct floe_pq_column cols[NC] = {
    {"id", 1, FLOE_PQ_INT64, false, 0, 0},
    {"a", 2, FLOE_PQ_STRING, true, 0, 0},
    {"b", 3, FLOE_PQ_INT64, true, 0, 0},
    {"m", 4, FLOE_PQ_MAP_STRING, true, 5, 6},
    {"e", 7, FLOE_PQ_STRING, true, 0, 0},
    {"f", 8, FLOE_PQ_STRING, true, 0, 0},
    {"g", 9, FLOE_PQ_DOUBLE, true, 0, 0},
};

static const char *const keys[2] = {"k1", "k2"};
static const size_t key_lens[2] = {2, 2};
static const char *const vals[2] = {"v1", NULL};
static const size_t val_lens[2] = {2, 0};

/* Row i: a has values in rows [0, 10) and [30000, 30010) only; b is null in two runs of
 * 700 rows out of three; m is null, empty, one pair and two pairs (the second value
 * null) in runs of 500; e has a value every 97th row; f is always null; g has a value
 * in runs of 9 rows every 1000. */
static void gen(uint64_t i, struct floe_pq_value *v, char *abuf)
{
	for (size_t k = 0; k < NC; k++)
		floe_pq_value_init(&v[k], false);
	v[0].i = (int64_t)i;
	v[1].is_null = !(i < 10 || (i >= 30000 && i < 30010));
	if (!v[1].is_null) {
		v[1].len = (size_t)snprintf(abuf, 16, "a%u", (unsigned)i);
		v[1].s = abuf;
	}
	v[2].is_null = (i / 700) % 3 != 0;
	v[2].i = (int64_t)(i * 3);
	switch ((i / 500) % 4) {
	case 0:
		v[3].is_null = true;
		break;
	case 1:
		break; /* empty */
	default:
		v[3].n = (i / 500) % 4 - 1;
		v[3].keys = keys;
		v[3].key_lens = key_lens;
		v[3].vals = vals;
		v[3].val_lens = val_lens;
		break;
	}
	v[4].is_null = i % 97 != 0;
	v[4].s = "every 97th";
	v[4].len = 10;
	v[5].is_null = true;
	v[6].is_null = i % 1000 >= 9;
	v[6].d = (double)i / 4;
}

static void same(const struct floe_pq_value *want, const struct floe_pq_value *got)
{
	for (size_t k = 0; k < NC; k++) {
		assert_int_equal(got[k].is_null, want[k].is_null);
		if (want[k].is_null)
			continue;
		switch (cols[k].kind) {
		case FLOE_PQ_STRING:
			assert_int_equal(got[k].len, want[k].len);
			assert_memory_equal(got[k].s, want[k].s, want[k].len);
			break;
		case FLOE_PQ_MAP_STRING:
			assert_int_equal(got[k].n, want[k].n);
			for (size_t j = 0; j < want[k].n; j++) {
				assert_int_equal(got[k].key_lens[j], 2);
				assert_memory_equal(got[k].keys[j], keys[j], 2);
				assert_int_equal(got[k].vals[j] == NULL, vals[j] == NULL);
			}
			break;
		case FLOE_PQ_DOUBLE:
			assert_true(got[k].d == want[k].d);
			break;
		default:
			assert_int_equal(got[k].i, want[k].i);
			break;
		}
	}
}

/* The nulls each leaf holds over the file, and its level entries, counted from gen. */
static void expected_counts(uint64_t *nulls, uint64_t *values)
{
	memset(nulls, 0, 8 * sizeof(*nulls));
	memset(values, 0, 8 * sizeof(*values));
	struct floe_pq_value v[NC];
	char abuf[16];
	for (uint64_t i = 0; i < NROWS; i++) {
		gen(i, v, abuf);
		size_t leaf = 0;
		for (size_t k = 0; k < NC; k++) {
			if (cols[k].kind == FLOE_PQ_MAP_STRING) {
				size_t n = v[k].is_null || v[k].n == 0 ? 1 : v[k].n;
				values[leaf] += n;
				values[leaf + 1] += n;
				if (v[k].is_null || v[k].n == 0) {
					nulls[leaf]++;
					nulls[leaf + 1]++;
				} else if (v[k].n == 2) {
					nulls[leaf + 1]++; /* the second value */
				}
				leaf += 2;
				continue;
			}
			values[leaf]++;
			nulls[leaf] += v[k].is_null;
			leaf++;
		}
	}
}

/* The first rows of leaf a's pages, from the file's offset index (one row group). */
static size_t page_first_rows(const struct mem *m, int64_t *first, size_t cap)
{
	int root = footer(m);
	int rgs = fld(root, 4);
	assert_int_equal(nodes[rgs].nchild, 1);
	int chunk = elem(fld(elem(rgs, 0), 1), 1);
	int64_t off = ival(chunk, 4), len = ival(chunk, 5); /* the offset index */
	int oi = parse(m->p + off, (size_t)len, NULL);
	int locs = fld(oi, 1);
	size_t n = 0;
	for (int c = nodes[locs].child; c >= 0 && n < cap; c = nodes[c].next)
		first[n++] = ival(c, 3);
	return n;
}

static void round_trip(const struct floe_pq_options *o, struct mem *out)
{
	struct mem m;
	memset(&m, 0, sizeof(m));
	struct floe_pq_writer *w = NULL;
	assert_int_equal(floe_pq_writer_new(NULL, cols, NC, o, mem_sink, &m, &w), 0);
	struct floe_pq_value v[NC];
	char abuf[16];
	for (uint64_t i = 0; i < NROWS; i++) {
		gen(i, v, abuf);
		assert_int_equal(floe_pq_writer_add_row(w, v), 0);
		/* The size estimate asks every chunk when the row's sums are not cached. */
		assert_true(floe_pq_writer_size_estimate(w) > 0);
	}
	assert_int_equal(floe_pq_writer_finish(w), 0);
	size_t nst;
	const struct floe_pq_leaf_stats *st = floe_pq_writer_stats(w, &nst);
	assert_int_equal(nst, 8);
	uint64_t nulls[8], values[8];
	expected_counts(nulls, values);
	for (size_t j = 0; j < nst; j++) {
		assert_int_equal(st[j].null_count, nulls[j]);
		assert_int_equal(st[j].value_count, values[j]);
	}
	floe_pq_writer_free(w);

	struct floe_alloc a;
	floe_alloc_init(&a, 0);
	struct pq_memsrc ms;
	struct floe_pq_source src = pq_source(&ms, m.p, m.n);
	struct floe_pq_reader *r = NULL;
	struct floe_err why;
	int rc = floe_pq_reader_open(&a, &src, NULL, &r, &why);
	if (rc)
		fail_msg("open: %d %s", rc, why.msg);
	assert_int_equal(floe_pq_reader_num_rows(r), NROWS);
	const struct floe_pq_value *got;
	uint64_t i = 0;
	while ((rc = floe_pq_reader_next(r, &got)) == 1) {
		assert_true(i < NROWS);
		gen(i, v, abuf);
		same(v, got);
		i++;
	}
	if (rc)
		fail_msg("next: %d %s", rc, floe_pq_reader_error(r)->msg);
	assert_int_equal(i, NROWS);
	floe_pq_reader_free(r);
	assert_int_equal(a.used, 0);
	*out = m;
}

static void test_default(void **state)
{
	(void)state;
	struct floe_pq_options o = {.codec = FLOE_PQ_ZSTD, .created_by = "floe test"};
	struct mem m;
	round_trip(&o, &m);
	/* Leaf a's pages close where a writer that put every null would close them: after
	 * 8192 level entries of a page with a value (rows 0 to 8191), at the end of the row
	 * that gives a page of nulls its first value (30000) and 8192 entries after that;
	 * the last page holds the rest. */
	int64_t first[8];
	size_t n = page_first_rows(&m, first, 8);
	assert_int_equal(n, 4);
	assert_int_equal(first[0], 0);
	assert_int_equal(first[1], 8192);
	assert_int_equal(first[2], 30001);
	assert_int_equal(first[3], 30001 + 8192);
	free(m.p);
}

/* Row groups of a few thousand rows, closing within the runs; small pages. */
static void test_small_row_groups(void **state)
{
	(void)state;
	struct floe_pq_options o = {.codec = FLOE_PQ_UNCOMPRESSED,
				    .created_by = "floe test",
				    .row_group_size = 64 << 10,
				    .page_size = 4 << 10};
	struct mem m;
	round_trip(&o, &m);
	free(m.p);
}

static void test_compact_budget(void **state)
{
	(void)state;
	struct floe_pq_options o = {.codec = FLOE_PQ_ZSTD,
				    .created_by = "floe test",
				    .profile = FLOE_PQ_PROFILE_COMPACT,
				    .memory_budget = 16 << 10,
				    .page_size = 8 << 10};
	struct mem m;
	round_trip(&o, &m);
	free(m.p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_default),
	    cmocka_unit_test(test_small_row_groups),
	    cmocka_unit_test(test_compact_budget),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Tests of the writer's fast paths for values a dictionary already holds
 * (formats/parquet/chunk.c floe_pq_chunk_put_known, formats/parquet/dict.h
 * floe_pq_dict_find): a chunk fed through put_known, falling back to put_bytes when it
 * answers 0, makes the same pages, dictionary page, statistics and bloom filter as one
 * fed through put_bytes alone, across the dictionary's probe (mostly distinct values),
 * its cap (a full dictionary), page closes, v2 pages, delta encodings, repetition and
 * nulls; the dictionary's find gives put's index without ever adding; and nulls in runs
 * of every length around the 8 from which put_null only counts them read back as they
 * were written. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"
#include "formats/parquet/chunk.h"
#include "formats/parquet/compress.h"
#include "formats/parquet/dict.h"
#include "formats/parquet/reader.h"
#include "formats/parquet/writer.h"
#include "mem_sink.h"
#include "pq_rows.h"

static uint32_t rnd(uint32_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 17;
	*x ^= *x << 5;
	return *x;
}

/* Value of row r: from a small set (lengths 0 to 40, sharing prefixes, some equal in
 * length and ends but not in the middle), but for rows 3,000 to 15,000, almost all
 * distinct (the probe gives the dictionary up), then from the set again (PLAIN). */
static size_t value(uint32_t *x, int r, char *out)
{
	static const char *const set[] = {
	    "", "a", "GET", "POST", "HTTP/1.1", "-", "https://example.com/",
	    "https://example.com/search?q=floe", "https://example.com/search?q=flow",
	    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36", "curl/8.5.0", "curl/8.5.1",
	    "host-01", "host-02", "0123456789abcdef", "0123456789abcdeg", "x\xc3\xa9y"};
	uint32_t k = rnd(x);
	if (r >= 3000 && r < 15000 && k % 64)
		return (size_t)snprintf(out, 64, "/api/v1/items?id=%d&k=%u", r, k % 1000);
	const char *s = set[k % (sizeof(set) / sizeof(set[0]))];
	size_t n = strlen(s);
	memcpy(out, s, n);
	return n;
}

struct run {
	struct floe_alloc a;
	struct floe_pq_compressor *z;
	struct floe_buf scratch;
	struct floe_pq_chunk *c;
};

static void run_init(struct run *u, const struct floe_pq_chunk_opts *o)
{
	floe_alloc_init(&u->a, 0);
	assert_int_equal(floe_pq_compressor_new(&u->a, FLOE_PQ_ZSTD, 1, &u->z), 0);
	floe_buf_init(&u->scratch, &u->a, 1 << 24);
	assert_int_equal(floe_pq_chunk_new(&u->a, o, u->z, &u->scratch, &u->c), 0);
}

static void run_fini(struct run *u)
{
	floe_pq_chunk_free(u->c);
	floe_buf_fini(&u->scratch);
	floe_pq_compressor_free(u->z);
}

static void same_bound(const struct floe_pq_bound *a, const struct floe_pq_bound *b)
{
	assert_int_equal(a->set, b->set);
	assert_int_equal(a->unbounded, b->unbounded);
	assert_int_equal(a->exact, b->exact);
	assert_int_equal(a->len, b->len);
	assert_memory_equal(a->v, b->v, a->len);
}

static void same_page(const struct floe_pq_page *a, const struct floe_pq_page *b)
{
	assert_int_equal(a->len, b->len);
	if (a->len)
		assert_memory_equal(a->data, b->data, a->len);
	assert_int_equal(a->first_row, b->first_row);
	assert_int_equal(a->null_count, b->null_count);
	assert_int_equal(a->has_minmax, b->has_minmax);
	same_bound(&a->lo, &b->lo);
	same_bound(&a->hi, &b->hi);
}

/* Rows of one chunk with options o through both paths; returns how many values
 * put_known took. */
static int compare_paths(const struct floe_pq_chunk_opts *o, uint32_t seed, int rows,
			 struct floe_pq_chunk_meta *meta)
{
	struct run plain, known;
	run_init(&plain, o);
	run_init(&known, o);
	uint32_t x = seed, hits = 0;
	char v[64];
	for (int r = 0; r < rows; r++) {
		int nv = o->max_rep ? (int)(rnd(&x) % 4) : 1;
		for (int j = 0; j < nv; j++) {
			int rep = j > 0;
			if (o->max_def && rnd(&x) % 7 == 0) {
				assert_int_equal(floe_pq_chunk_put_null(plain.c, rep, 0), 0);
				assert_int_equal(floe_pq_chunk_put_null(known.c, rep, 0), 0);
				continue;
			}
			size_t n = value(&x, r, v);
			const uint8_t *p = (const uint8_t *)v;
			assert_int_equal(floe_pq_chunk_put_bytes(plain.c, rep, p, n), 0);
			int rc = floe_pq_chunk_put_known(known.c, rep, p, n);
			assert_true(rc == 0 || rc == 1);
			if (rc == 0)
				assert_int_equal(floe_pq_chunk_put_bytes(known.c, rep, p, n), 0);
			hits += (uint32_t)rc;
		}
		if (nv == 0) {
			assert_int_equal(floe_pq_chunk_put_null(plain.c, 0, 0), 0);
			assert_int_equal(floe_pq_chunk_put_null(known.c, 0, 0), 0);
		}
		size_t b1, h1, o1, b2, h2, o2;
		assert_int_equal(floe_pq_chunk_end_row_open(plain.c, &b1, &h1, &o1), 0);
		assert_int_equal(floe_pq_chunk_end_row_open(known.c, &b2, &h2, &o2), 0);
		assert_int_equal(b1, b2);
		assert_int_equal(h1, h2);
		assert_int_equal(o1, o2);
	}
	struct floe_pq_chunk_meta m1, m2;
	const struct floe_pq_page *d1, *d2, *p1, *p2;
	size_t n1, n2;
	assert_int_equal(floe_pq_chunk_finish(plain.c, &m1, &d1, &p1, &n1), 0);
	assert_int_equal(floe_pq_chunk_finish(known.c, &m2, &d2, &p2, &n2), 0);
	assert_int_equal(m1.num_values, m2.num_values);
	assert_int_equal(m1.null_count, m2.null_count);
	assert_int_equal(m1.unc_size, m2.unc_size);
	assert_int_equal(m1.comp_size, m2.comp_size);
	assert_int_equal(m1.dict_len, m2.dict_len);
	assert_int_equal(m1.dict_entries, m2.dict_entries);
	assert_int_equal(m1.dict_pages, m2.dict_pages);
	assert_int_equal(m1.plain_pages, m2.plain_pages);
	assert_memory_equal(m1.enc_pages, m2.enc_pages, sizeof(m1.enc_pages));
	assert_int_equal(m1.has_minmax, m2.has_minmax);
	same_bound(&m1.lo, &m2.lo);
	same_bound(&m1.hi, &m2.hi);
	*meta = m1;
	same_page(d1, d2);
	assert_int_equal(n1, n2);
	for (size_t i = 0; i < n1; i++)
		same_page(&p1[i], &p2[i]);
	const struct floe_pq_bloom *f1 = floe_pq_chunk_bloom(plain.c);
	const struct floe_pq_bloom *f2 = floe_pq_chunk_bloom(known.c);
	assert_int_equal(f1 != NULL, f2 != NULL);
	if (f1) {
		assert_int_equal(f1->nbytes, f2->nbytes);
		assert_memory_equal(f1->bits, f2->bits, f1->nbytes);
	}
	run_fini(&plain);
	run_fini(&known);
	return (int)hits;
}

static void test_known_matches_put_bytes(void **state)
{
	(void)state;
	const struct floe_pq_chunk_opts base = {
	    .ptype = FLOE_PQ_T_BYTE_ARRAY, .max_def = 1, .page_size = 8 << 10, .dict_cap = 1 << 20};
	struct floe_pq_chunk_opts o[7];
	for (int i = 0; i < 7; i++)
		o[i] = base;
	o[1].v2 = true;
	o[2].v2 = o[2].delta = true;
	o[3].bloom = true; /* the filter from the dictionary, then live after the probe */
	o[3].bloom_ndv = 1000;
	o[3].bloom_max = 1 << 20;
	o[4].dict_cap = 600; /* fills: the rest of the chunk PLAIN */
	o[4].bloom = true;
	o[4].bloom_ndv = 1000;
	o[4].bloom_max = 1 << 20;
	o[5].max_def = 2; /* a map's values: repeated, nulls between */
	o[5].max_rep = 1;
	o[6].max_def = 0; /* required */
	o[6].page_size = 1 << 20;
	for (int i = 0; i < 7; i++) {
		struct floe_pq_chunk_meta m;
		int hits = compare_paths(&o[i], 2654435761u * (uint32_t)(i + 1), 20000, &m);
		assert_true(hits > 0);
		/* The stretch of distinct values made the probe (or the cap) give the
		 * dictionary up: pages of both kinds. */
		assert_true(m.dict_pages > 0 || i == 4); /* 600 bytes fill before a page closes */
		assert_true(m.plain_pages > 0 || o[i].delta);
	}
	/* No dictionary: put_known never takes a value. */
	struct floe_pq_chunk_opts none = base;
	none.dict_cap = 0;
	struct floe_pq_chunk_meta m;
	assert_int_equal(compare_paths(&none, 7, 3000, &m), 0);
}

/* find gives put's index and never adds; it tries the last entry, the next (the first
 * after the last) and then the hash table, on an empty dictionary and after a reset. */
static void test_dict_find(void **state)
{
	(void)state;
	struct floe_pq_dict d;
	floe_pq_dict_init(&d, NULL, 0);
	uint32_t idx = 99;
	assert_false(floe_pq_dict_find(&d, "a", 1, &idx)); /* no table yet */
	assert_int_equal(idx, 99);
	static const char *const keys[] = {"client", "time", "", "path", "status", "bytes!"};
	for (uint32_t i = 0; i < 6; i++) {
		bool added;
		assert_int_equal(floe_pq_dict_put(&d, keys[i], strlen(keys[i]), 1 << 20, &idx,
						  &added),
				 0);
		assert_true(added);
	}
	for (int round = 0; round < 3; round++) {
		for (uint32_t i = 0; i < 6; i++) {
			uint32_t k = round == 2 ? (i * 5) % 6 : i; /* last in order, then out of it */
			assert_true(floe_pq_dict_find(&d, keys[k], strlen(keys[k]), &idx));
			assert_int_equal(idx, k);
		}
	}
	/* Absent values: a prefix, an extension, a byte changed; the count stays. */
	assert_false(floe_pq_dict_find(&d, "clien", 5, &idx));
	assert_false(floe_pq_dict_find(&d, "client!", 7, &idx));
	assert_false(floe_pq_dict_find(&d, "bytes?", 6, &idx));
	assert_int_equal(floe_pq_dict_count(&d), 6);
	assert_true(floe_pq_dict_find(&d, "", 0, &idx));
	assert_int_equal(idx, 2);
	floe_pq_dict_reset(&d);
	assert_false(floe_pq_dict_find(&d, "client", 6, &idx));
	floe_pq_dict_fini(&d);

	/* Fixed widths. */
	floe_pq_dict_init(&d, NULL, 4);
	uint32_t v[3] = {200, 404, 500};
	for (int i = 0; i < 3; i++) {
		bool added;
		assert_int_equal(floe_pq_dict_put(&d, &v[i], 4, 1 << 20, &idx, &added), 0);
	}
	uint32_t w = 404, u = 201;
	assert_true(floe_pq_dict_find(&d, &w, 4, &idx));
	assert_int_equal(idx, 1);
	assert_false(floe_pq_dict_find(&d, &u, 4, &idx));
	floe_pq_dict_fini(&d);
}

/* Optional columns (a string, a long, a map) with runs of 1 to 20 nulls between runs of
 * 1 to 11 values, each column its own phase, the map's values empty in runs of 37 rows
 * (null levels in its repeated leaves): written, read back, every cell as it was. */
static void test_null_runs(void **state)
{
	(void)state;
	struct floe_pq_column cols[] = {{"s", 1, FLOE_PQ_STRING, true, 0, 0},
					{"i", 2, FLOE_PQ_INT64, true, 0, 0},
					{"m", 3, FLOE_PQ_MAP_STRING, true, 4, 5}};
	struct floe_pq_options o = {0};
	struct mem m = {0};
	struct floe_pq_writer *w = NULL;
	assert_int_equal(floe_pq_writer_new(NULL, cols, 3, &o, mem_sink, &m, &w), 0);
	enum { ROWS = 20000 };
	static bool null_at[3][ROWS];
	for (int c = 0; c < 3; c++) {
		int r = 0, run = c;
		while (r < ROWS) {
			int nulls = 1 + run % 20, vals = 1 + run % 11;
			for (int k = 0; k < nulls && r < ROWS; k++)
				null_at[c][r++] = true;
			for (int k = 0; k < vals && r < ROWS; k++)
				null_at[c][r++] = false;
			run++;
		}
	}
	const char *key[] = {"k"};
	size_t klen[] = {1};
	char buf[ROWS % 1000 + 16];
	for (int r = 0; r < ROWS; r++) {
		struct floe_pq_value row[3];
		for (int c = 0; c < 3; c++)
			floe_pq_value_init(&row[c], null_at[c][r]);
		int n = snprintf(buf, sizeof(buf), "v%d", r % 5);
		row[0].s = buf;
		row[0].len = (size_t)n;
		row[1].i = r % 3;
		row[2].n = (size_t)(r / 37 % 2); /* empty maps in runs too */
		row[2].keys = key;
		row[2].key_lens = klen;
		assert_int_equal(floe_pq_writer_add_row(w, row), 0);
	}
	assert_int_equal(floe_pq_writer_finish(w), 0);
	floe_pq_writer_free(w);

	struct pq_memsrc ms;
	struct floe_pq_source src = pq_source(&ms, m.p, m.n);
	struct floe_pq_reader *rd = NULL;
	assert_int_equal(floe_pq_reader_open(NULL, &src, NULL, &rd, NULL), 0);
	for (int r = 0; r < ROWS; r++) {
		const struct floe_pq_value *row;
		assert_int_equal(floe_pq_reader_next(rd, &row), 1);
		for (int c = 0; c < 3; c++)
			assert_int_equal(row[c].is_null, null_at[c][r]);
		if (!null_at[0][r]) {
			int n = snprintf(buf, sizeof(buf), "v%d", r % 5);
			assert_int_equal(row[0].len, (size_t)n);
			assert_memory_equal(row[0].s, buf, (size_t)n);
		}
		if (!null_at[1][r])
			assert_int_equal(row[1].i, r % 3);
		if (!null_at[2][r])
			assert_int_equal(row[2].n, (size_t)(r / 37 % 2));
	}
	const struct floe_pq_value *row;
	assert_int_equal(floe_pq_reader_next(rd, &row), 0);
	floe_pq_reader_free(rd);
	free(m.p);
}

/* Distinct strings (the dictionary gives up after its probe, the rest go PLAIN) of every
 * length from 6 to 706 bytes, so that a value meets the end of the page buffer's
 * capacity at every offset (put_bytes tests the fit in line and grows out of line):
 * read back as written. */
static size_t plain_value(int r, char *out)
{
	size_t n = 6 + (size_t)(r * 7 % 701);
	snprintf(out, 7, "%06d", r);
	for (size_t i = 6; i < n; i++)
		out[i] = (char)('a' + (i + (size_t)r) % 26);
	return n;
}

static void test_plain_lengths(void **state)
{
	(void)state;
	struct floe_pq_column cols[] = {{"s", 1, FLOE_PQ_STRING, false, 0, 0}};
	struct floe_pq_options o = {.page_size = 64 << 10};
	struct mem m = {0};
	struct floe_pq_writer *w = NULL;
	assert_int_equal(floe_pq_writer_new(NULL, cols, 1, &o, mem_sink, &m, &w), 0);
	static char v[712];
	enum { ROWS = 4096 + 3 * 701 };
	for (int r = 0; r < ROWS; r++) {
		struct floe_pq_value row = {.s = v, .len = plain_value(r, v)};
		assert_int_equal(floe_pq_writer_add_row(w, &row), 0);
	}
	assert_int_equal(floe_pq_writer_finish(w), 0);
	floe_pq_writer_free(w);
	struct pq_memsrc ms;
	struct floe_pq_source src = pq_source(&ms, m.p, m.n);
	struct floe_pq_reader *rd = NULL;
	assert_int_equal(floe_pq_reader_open(NULL, &src, NULL, &rd, NULL), 0);
	for (int r = 0; r < ROWS; r++) {
		const struct floe_pq_value *row;
		assert_int_equal(floe_pq_reader_next(rd, &row), 1);
		size_t n = plain_value(r, v);
		assert_int_equal(row[0].len, n);
		assert_memory_equal(row[0].s, v, n);
	}
	floe_pq_reader_free(rd);
	free(m.p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_known_matches_put_bytes),
	    cmocka_unit_test(test_dict_find),
	    cmocka_unit_test(test_null_runs),
	    cmocka_unit_test(test_plain_lengths),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

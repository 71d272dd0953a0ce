/* Parquet reader: files made by floe's writer in every codec x profile x (bloom filters,
 * page index, sorted rows) read back row by row equal to what was written, and written
 * again from what was read into the same bytes; 1-row, empty and 1,000,000-row files, row
 * groups of many pages, column projection, and the encodings each profile used. */
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
#include "formats/parquet/reader.h"
#include "formats/parquet/thrift.h"
#include "formats/parquet/utf8.h"
#include "formats/parquet/writer.h"

#include "mem_sink.h"
#include "pq_rows.h"

struct cfg {
	enum floe_pq_codec codec;
	enum floe_pq_profile profile;
	bool bloom, no_index, sorted;
	size_t page_size, budget, row_group, dict_cap;
};

static void opts_of(const struct cfg *c, struct floe_pq_options *o, struct floe_pq_bloom_column *bl)
{
	memset(o, 0, sizeof(*o));
	o->codec = c->codec;
	o->profile = c->profile;
	o->page_size = c->page_size;
	o->memory_budget = c->budget;
	o->row_group_size = c->row_group;
	o->no_page_index = c->no_index;
	o->dictionary_cap = c->dict_cap;
	o->created_by = "floe test";
	static const struct floe_pq_kv kv[] = {{"iceberg.schema", "{}"}, {"empty", NULL}};
	o->kv = kv;
	o->kv_count = 2;
	if (c->bloom) {
		bl[0] = (struct floe_pq_bloom_column){3, 0};
		bl[1] = (struct floe_pq_bloom_column){11, 1000};
		o->bloom = bl;
		o->bloom_count = 2;
	}
}

/* Writes rows [0, n) of seed with configuration c into m. */
static void write_file(const struct cfg *c, uint64_t seed, uint64_t n, struct mem *m)
{
	struct floe_pq_options o;
	struct floe_pq_bloom_column bl[2];
	opts_of(c, &o, bl);
	memset(m, 0, sizeof(*m));
	int err = 0;
	struct floe_pq_writer *w =
	    floe_pq_writer_new(NULL, pq_cols, PQ_NCOLS, &o, mem_sink, m, &err);
	assert_non_null(w);
	static struct pq_row row;
	for (uint64_t i = 0; i < n; i++) {
		pq_gen(&row, seed, i, n, c->sorted);
		assert_int_equal(floe_pq_writer_add_row(w, row.v), 0);
	}
	assert_int_equal(floe_pq_writer_finish(w), 0);
	floe_pq_writer_free(w);
}

static void same_bytes(const char *want, size_t wn, const char *got, size_t gn)
{
	static struct floe_buf scratch;
	static bool init;
	if (!init) {
		floe_buf_init(&scratch, NULL, (size_t)1 << 20);
		init = true;
	}
	const uint8_t *p;
	size_t pn;
	uint64_t rep = 0;
	/* The writer stores invalid UTF-8 replaced: that is the value to find. */
	assert_int_equal(
	    floe_pq_utf8_repair((const uint8_t *)(want ? want : ""), wn, &scratch, &p, &pn, &rep),
	    0);
	assert_int_equal(gn, pn);
	assert_non_null(got);
	if (pn)
		assert_memory_equal(got, p, pn);
}

static void same_value(const struct floe_pq_column *c, const struct floe_pq_value *want,
		       const struct floe_pq_value *got)
{
	assert_int_equal(got->is_null, want->is_null);
	if (want->is_null)
		return;
	switch (c->kind) {
	case FLOE_PQ_STRING:
		same_bytes(want->s, want->len, got->s, got->len);
		break;
	case FLOE_PQ_MAP_STRING:
		assert_int_equal(got->n, want->n);
		for (size_t j = 0; j < want->n; j++) {
			same_bytes(want->keys[j], want->key_lens[j], got->keys[j],
				   got->key_lens[j]);
			assert_int_equal(got->vals[j] == NULL, want->vals[j] == NULL);
			if (want->vals[j])
				same_bytes(want->vals[j], want->val_lens[j], got->vals[j],
					   got->val_lens[j]);
		}
		break;
	default:
		assert_int_equal(got->i, want->i);
		break;
	}
}

static struct floe_pq_reader *open_mem(struct floe_alloc *a, struct pq_memsrc *ms,
				       const struct mem *m)
{
	struct floe_pq_source src = pq_source(ms, m->p, m->n);
	struct floe_pq_reader *r = NULL;
	char why[256];
	int rc = floe_pq_reader_open(a, &src, NULL, &r, why, sizeof(why), NULL);
	if (rc)
		fail_msg("open: %d %s", rc, why);
	return r;
}

/* Reads m back and checks every row against the generator; with rewrite, also writes
 * the rows read with the same options and checks the new file is m, byte for byte. */
static void check_file_(const struct cfg *c, uint64_t seed, uint64_t n, const struct mem *m,
			bool rewrite)
{
	struct floe_alloc a;
	floe_alloc_init(&a, 0);
	struct pq_memsrc ms;
	struct floe_pq_reader *r = open_mem(&a, &ms, m);
	size_t ncols;
	const struct floe_pq_column *cols = floe_pq_reader_columns(r, &ncols);
	assert_int_equal(ncols, PQ_NCOLS);
	for (size_t k = 0; k < ncols; k++) {
		assert_string_equal(cols[k].name, pq_cols[k].name);
		assert_int_equal(cols[k].kind, pq_cols[k].kind);
		assert_int_equal(cols[k].optional, pq_cols[k].optional);
		assert_int_equal(cols[k].field_id, pq_cols[k].field_id);
		assert_int_equal(cols[k].key_field_id, pq_cols[k].key_field_id);
		assert_int_equal(cols[k].value_field_id, pq_cols[k].value_field_id);
	}
	assert_int_equal(floe_pq_reader_num_rows(r), n);
	assert_string_equal(floe_pq_reader_created_by(r), "floe test");
	size_t nkv;
	const struct floe_pq_kv *kv = floe_pq_reader_kv(r, &nkv);
	assert_int_equal(nkv, 2);
	assert_string_equal(kv[0].key, "iceberg.schema");
	assert_string_equal(kv[0].value, "{}");
	assert_null(kv[1].value);
	struct floe_pq_options o;
	struct floe_pq_bloom_column bl[2];
	opts_of(c, &o, bl);
	struct mem again;
	memset(&again, 0, sizeof(again));
	int err = 0;
	struct floe_pq_writer *w =
	    rewrite ? floe_pq_writer_new(NULL, cols, ncols, &o, mem_sink, &again, &err) : NULL;
	assert_true(w || !rewrite);
	static struct pq_row want;
	const struct floe_pq_value *got;
	uint64_t i = 0;
	int rc;
	while ((rc = floe_pq_reader_next(r, &got)) == 1) {
		assert_true(i < n);
		pq_gen(&want, seed, i, n, c->sorted);
		for (size_t k = 0; k < PQ_NCOLS; k++)
			same_value(&pq_cols[k], &want.v[k], &got[k]);
		if (w)
			assert_int_equal(floe_pq_writer_add_row(w, got), 0);
		i++;
	}
	if (rc)
		fail_msg("next: %d %s at %llu", rc, floe_pq_reader_error(r),
			 (unsigned long long)floe_pq_reader_error_offset(r));
	assert_int_equal(i, n);
	assert_int_equal(floe_pq_reader_next(r, &got), 0); /* stays at the end */
	if (w) {
		assert_int_equal(floe_pq_writer_finish(w), 0);
		assert_int_equal(floe_pq_writer_replaced(w), 0);
		assert_int_equal(again.n, m->n);
		assert_memory_equal(again.p, m->p, m->n);
		floe_pq_writer_free(w);
	}
	free(again.p);
	floe_pq_reader_free(r);
	assert_int_equal(a.used, 0);
}

static void check_file(const struct cfg *c, uint64_t seed, uint64_t n, const struct mem *m)
{
	check_file_(c, seed, n, m, true);
}

/* The encodings named in the footer's column chunks, as a bit set, found with the
 * Thrift decoder: FileMetaData.row_groups[].columns[].meta_data.encodings. */
static unsigned footer_encodings(const struct mem *m)
{
	uint32_t len = (uint32_t)m->p[m->n - 8] | (uint32_t)m->p[m->n - 7] << 8 |
		       (uint32_t)m->p[m->n - 6] << 16 | (uint32_t)m->p[m->n - 5] << 24;
	struct floe_thrift_rd t;
	floe_thrift_rd_init(&t, m->p + m->n - 8 - len, len);
	unsigned set = 0;
	int16_t id;
	int ft, et, et2, et3;
	size_t n, n2, n3;
	while (floe_thrift_rd_field(&t, &id, &ft)) {
		if (id != 4) {
			floe_thrift_rd_skip(&t, ft, false);
			continue;
		}
		floe_thrift_rd_list(&t, ft, &et, &n);
		for (size_t g = 0; g < n; g++) {
			floe_thrift_rd_struct(&t, et);
			while (floe_thrift_rd_field(&t, &id, &ft)) {
				if (id != 1) {
					floe_thrift_rd_skip(&t, ft, false);
					continue;
				}
				floe_thrift_rd_list(&t, ft, &et2, &n2);
				for (size_t j = 0; j < n2; j++) {
					floe_thrift_rd_struct(&t, et2);
					while (floe_thrift_rd_field(&t, &id, &ft)) {
						if (id != 3) {
							floe_thrift_rd_skip(&t, ft, false);
							continue;
						}
						floe_thrift_rd_struct(&t, ft);
						while (floe_thrift_rd_field(&t, &id, &ft)) {
							if (id != 2) {
								floe_thrift_rd_skip(&t, ft, false);
								continue;
							}
							floe_thrift_rd_list(&t, ft, &et3, &n3);
							for (size_t e = 0; e < n3; e++)
								set |= 1u << floe_thrift_rd_i32(
									   &t, et3);
						}
					}
				}
			}
		}
	}
	assert_int_equal(t.err, 0);
	return set;
}

static const enum floe_pq_codec codecs[] = {FLOE_PQ_UNCOMPRESSED, FLOE_PQ_ZSTD, FLOE_PQ_LZ4_RAW};

/* Every codec x profile x bloom x page index x sort, small pages and row groups so that
 * a few thousand rows make many of both. */
static void test_round_trip_matrix(void **state)
{
	(void)state;
	unsigned enc[2] = {0, 0};
	int files = 0;
	for (size_t ci = 0; ci < 3; ci++) {
		for (int prof = 0; prof < 2; prof++) {
			for (int bits = 0; bits < 8; bits++) {
				struct cfg c = {.codec = codecs[ci],
						.profile = (enum floe_pq_profile)prof,
						.bloom = bits & 1,
						.no_index = bits & 2,
						.sorted = bits & 4,
						.page_size = 4096,
						.budget = (bits & 1) ? 64 << 10 : 0,
						/* Dictionaries that fill up: chunks
						 * that change encoding midway. */
						.dict_cap = (bits & 2) ? 2048 : 0,
						.row_group = 256 << 10};
				struct mem m;
				uint64_t seed = 100 + (uint64_t)files, n = 3000;
				write_file(&c, seed, n, &m);
				check_file(&c, seed, n, &m);
				enc[prof] |= footer_encodings(&m);
				free(m.p);
				files++;
			}
		}
	}
	/* PLAIN, RLE (levels), RLE_DICTIONARY in both; the delta encodings in the compact
	 * profile only. */
	assert_int_equal(enc[0], (1u << 0) | (1u << 3) | (1u << 8));
	assert_int_equal(enc[1],
			 (1u << 0) | (1u << 3) | (1u << 5) | (1u << 6) | (1u << 7) | (1u << 8));
}

static void test_one_row_and_empty(void **state)
{
	(void)state;
	for (size_t ci = 0; ci < 3; ci++) {
		for (int prof = 0; prof < 2; prof++) {
			struct cfg c = {.codec = codecs[ci], .profile = (enum floe_pq_profile)prof};
			for (uint64_t n = 0; n < 2; n++) {
				struct mem m;
				write_file(&c, 7 + n, n, &m);
				check_file(&c, 7 + n, n, &m);
				free(m.p);
			}
		}
	}
}

/* One row group of many pages (the default row group size, 1 KiB pages). */
static void test_many_pages(void **state)
{
	(void)state;
	for (int prof = 0; prof < 2; prof++) {
		struct cfg c = {.codec = FLOE_PQ_ZSTD,
				.profile = (enum floe_pq_profile)prof,
				.page_size = 1024};
		struct mem m;
		write_file(&c, 42, 20000, &m);
		check_file(&c, 42, 20000, &m);
		free(m.p);
	}
}

/* 1,000,000 rows with the agent's settings (1 MiB budget, bloom filters), in the compact
 * profile, whose pages use every encoding (the matrix above has both profiles). The rows
 * are checked; writing them again (as the smaller files are) would double the time. */
static void test_million_rows(void **state)
{
	(void)state;
	struct cfg c = {.codec = FLOE_PQ_ZSTD,
			.profile = FLOE_PQ_PROFILE_COMPACT,
			.bloom = true,
			.budget = 1 << 20};
	struct mem m;
	write_file(&c, 9, 1000000, &m);
	check_file_(&c, 9, 1000000, &m, false);
	unsigned enc = footer_encodings(&m);
	assert_true(enc & (1u << 5)); /* DELTA_BINARY_PACKED */
	assert_true(enc & (1u << 8)); /* RLE_DICTIONARY */
	free(m.p);
}

/* Projection: a few columns in another order; the others' chunks are never read. */
static void test_select(void **state)
{
	(void)state;
	struct cfg c = {
	    .codec = FLOE_PQ_ZSTD, .profile = FLOE_PQ_PROFILE_COMPACT, .page_size = 2048};
	struct mem m;
	write_file(&c, 5, 5000, &m);
	struct floe_alloc a;
	floe_alloc_init(&a, 0);
	struct pq_memsrc ms;
	struct floe_pq_reader *r = open_mem(&a, &ms, &m);
	size_t bad[] = {3, 3};
	assert_int_equal(floe_pq_reader_select(r, bad, 2), FLOE_EINVAL);
	size_t out_of_range[] = {PQ_NCOLS};
	assert_int_equal(floe_pq_reader_select(r, out_of_range, 1), FLOE_EINVAL);
	size_t sel[] = {13, 10, 0, 4};
	assert_int_equal(floe_pq_reader_select(r, sel, 4), 0);
	const struct floe_pq_value *got;
	static struct pq_row want;
	uint64_t i = 0;
	while (floe_pq_reader_next(r, &got) == 1) {
		pq_gen(&want, 5, i, 5000, false);
		for (size_t k = 0; k < 4; k++)
			same_value(&pq_cols[sel[k]], &want.v[sel[k]], &got[k]);
		i++;
	}
	assert_int_equal(i, 5000);
	assert_int_equal(floe_pq_reader_select(r, sel, 2), FLOE_EINVAL); /* too late */
	size_t peak_sel = a.peak;
	floe_pq_reader_free(r);
	/* Reading all the columns takes more memory than reading four. */
	floe_alloc_init(&a, 0);
	r = open_mem(&a, &ms, &m);
	while (floe_pq_reader_next(r, &got) == 1)
		;
	assert_true(a.peak > peak_sel);
	floe_pq_reader_free(r);
	free(m.p);
}

/* The reader's memory follows the largest page, not the file. */
static void test_memory_fixed(void **state)
{
	(void)state;
	size_t peak[2];
	for (int k = 0; k < 2; k++) {
		struct cfg c = {.codec = FLOE_PQ_ZSTD, .page_size = 8192, .budget = 256 << 10};
		struct mem m;
		write_file(&c, 3, k ? 200000 : 20000, &m);
		struct floe_alloc a;
		floe_alloc_init(&a, 0);
		struct pq_memsrc ms;
		struct floe_pq_reader *r = open_mem(&a, &ms, &m);
		const struct floe_pq_value *got;
		while (floe_pq_reader_next(r, &got) == 1)
			;
		peak[k] = a.peak;
		floe_pq_reader_free(r);
		free(m.p);
	}
	/* Ten times the rows: more row groups in the footer, nothing else. */
	assert_true(peak[1] < peak[0] + peak[0] / 4);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_round_trip_matrix), cmocka_unit_test(test_one_row_and_empty),
	    cmocka_unit_test(test_many_pages),	      cmocka_unit_test(test_select),
	    cmocka_unit_test(test_memory_fixed),      cmocka_unit_test(test_million_rows),
	};
	/* A test by name: test_pq_reader test_select */
	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}

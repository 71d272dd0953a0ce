/* Parquet reader: files made by floe's writer in every codec x profile x (bloom filters,
 * page index, sorted rows) read back row by row equal to what was written, and written
 * again from what was read into the same bytes; 1-row and empty files, row groups of many
 * pages, column projection, and the encodings each profile used. The 1,000,000-row file
 * is in test_pq_reader_big. */
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
#include "formats/base/utf8.h"
#include "formats/parquet/reader.h"
#include "formats/parquet/thrift.h"
#include "formats/parquet/writer.h"

#include "pq_check.h"

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
		write_file(&c, 42, 10000, &m);
		check_file(&c, 42, 10000, &m);
		free(m.p);
	}
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

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_round_trip_matrix),
	    cmocka_unit_test(test_one_row_and_empty),
	    cmocka_unit_test(test_many_pages),
	    cmocka_unit_test(test_select),
	};
	/* A test by name: test_pq_reader test_select */
	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}

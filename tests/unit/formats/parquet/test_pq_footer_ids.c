/* New field ids in a written Parquet file's footer: the file re-id'd is, byte for byte,
 * the file the writer makes with the new ids (so every byte but the ids is kept, and
 * the data before the footer is untouched), and floe's reader reads it back with the
 * new ids and every row as written. A map that would give two columns one id, and
 * footers cut short or damaged, are refused, never read past their end. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "formats/parquet/footer_ids.h"

#include "pq_check.h"

/* The test columns with every id from..to moved by add (a map's leaves included). */
static void moved(struct floe_pq_column *cols, int32_t from, int32_t to, int32_t add)
{
	memcpy(cols, pq_cols, sizeof(pq_cols));
	for (size_t k = 0; k < PQ_NCOLS; k++) {
		if (cols[k].field_id >= from && cols[k].field_id <= to)
			cols[k].field_id += add;
		if (cols[k].key_field_id >= from && cols[k].key_field_id <= to)
			cols[k].key_field_id += add;
		if (cols[k].value_field_id >= from && cols[k].value_field_id <= to)
			cols[k].value_field_id += add;
	}
}

static void write_cols(const struct floe_pq_column *cols, uint64_t seed, uint64_t n, struct mem *m)
{
	struct cfg c = {.codec = FLOE_PQ_ZSTD, .page_size = 4096, .row_group = 64 << 10};
	struct floe_pq_options o;
	struct floe_pq_bloom_column bl[2];
	opts_of(&c, &o, bl);
	memset(m, 0, sizeof(*m));
	struct floe_pq_writer *w = NULL;
	assert_int_equal(floe_pq_writer_new(NULL, cols, PQ_NCOLS, &o, mem_sink, m, &w), 0);
	static struct pq_row row;
	for (uint64_t i = 0; i < n; i++) {
		pq_gen(&row, seed, i, n, false);
		assert_int_equal(floe_pq_writer_add_row(w, row.v), 0);
	}
	assert_int_equal(floe_pq_writer_finish(w), 0);
	floe_pq_writer_free(w);
}

/* m's bytes up to its footer, then the re-id'd footer and frame, into out. */
static int reid_file(const struct mem *m, struct floe_pq_reid *map, size_t n, struct floe_buf *out,
		     struct floe_err *err)
{
	uint64_t off;
	uint32_t len;
	int rc = floe_pq_footer_span(m->p + m->n - FLOE_PQ_TAIL, m->n, &off, &len, err);
	if (rc == 0)
		rc = floe_buf_append(out, m->p, (size_t)off);
	if (rc == 0)
		rc = floe_pq_footer_reid(m->p + off, len, map, n, out, err);
	return rc;
}

/* The typed columns (15..18) and a built-in one (3) get new ids, one of them long enough
 * to take more varint bytes: the re-id'd file is the one written with those ids. */
static void test_same_as_written_with_new_ids(void **state)
{
	(void)state;
	struct floe_pq_column want[PQ_NCOLS];
	moved(want, 15, 18, 70000);
	struct mem old, fresh;
	write_cols(pq_cols, 5, 5000, &old);
	write_cols(want, 5, 5000, &fresh);
	struct floe_pq_reid map[] = {
	    {15, 70015, 0}, {16, 70016, 0}, {17, 70017, 0}, {18, 70018, 0}, {99, 100, 0}};
	struct floe_buf b;
	floe_buf_init(&b, NULL, 64 << 20);
	struct floe_err err = {0};
	assert_int_equal(reid_file(&old, map, 5, &b, &err), 0);
	for (size_t i = 0; i < 4; i++)
		assert_int_equal(map[i].seen, 1);
	assert_int_equal(map[4].seen, 0); /* not in the file: nothing to do */
	assert_int_equal(b.len, fresh.n);
	assert_memory_equal(b.data, fresh.p, fresh.n);
	/* Read back with floe's reader: the new ids, the same rows. */
	struct floe_alloc a;
	floe_alloc_init(&a, 0);
	struct pq_memsrc ms;
	struct mem got = {.p = b.data, .n = b.len};
	struct floe_pq_reader *r = open_mem(&a, &ms, &got);
	size_t nc;
	const struct floe_pq_column *cols = floe_pq_reader_columns(r, &nc);
	assert_int_equal(nc, PQ_NCOLS);
	for (size_t k = 0; k < nc; k++) {
		assert_int_equal(cols[k].field_id, want[k].field_id);
		assert_int_equal(cols[k].key_field_id, want[k].key_field_id);
		assert_int_equal(cols[k].value_field_id, want[k].value_field_id);
	}
	static struct pq_row row;
	const struct floe_pq_value *v;
	uint64_t i = 0;
	while (floe_pq_reader_next(r, &v) == 1) {
		pq_gen(&row, 5, i++, 5000, false);
		for (size_t k = 0; k < PQ_NCOLS; k++)
			same_value(&pq_cols[k], &row.v[k], &v[k]);
	}
	assert_int_equal(i, 5000);
	floe_pq_reader_free(r);
	assert_int_equal(a.used, 0);
	floe_buf_fini(&b);
	free(old.p);
	free(fresh.p);
}

/* Ids swapped between two columns, and an empty map (the file unchanged). */
static void test_swap_and_identity(void **state)
{
	(void)state;
	struct mem old;
	write_cols(pq_cols, 9, 300, &old);
	struct floe_buf b;
	floe_buf_init(&b, NULL, 64 << 20);
	assert_int_equal(reid_file(&old, NULL, 0, &b, NULL), 0);
	assert_int_equal(b.len, old.n);
	assert_memory_equal(b.data, old.p, old.n);
	floe_buf_reset(&b);
	struct floe_pq_reid swap[] = {{15, 16, 0}, {16, 15, 0}};
	assert_int_equal(reid_file(&old, swap, 2, &b, NULL), 0);
	struct floe_alloc a;
	floe_alloc_init(&a, 0);
	struct pq_memsrc ms;
	struct mem got = {.p = b.data, .n = b.len};
	struct floe_pq_reader *r = open_mem(&a, &ms, &got);
	size_t nc;
	const struct floe_pq_column *cols = floe_pq_reader_columns(r, &nc);
	assert_string_equal(cols[12].name, "code");
	assert_int_equal(cols[12].field_id, 16);
	assert_int_equal(cols[13].field_id, 15);
	floe_pq_reader_free(r);
	floe_buf_fini(&b);
	free(old.p);
}

/* Maps that would give one id to two columns are refused, and out is left as it was. */
static void test_bad_maps(void **state)
{
	(void)state;
	struct mem old;
	write_cols(pq_cols, 3, 50, &old);
	struct floe_buf b;
	floe_buf_init(&b, NULL, 64 << 20);
	struct floe_err err = {0};
	struct floe_pq_reid twice[] = {{15, 40, 0}, {15, 41, 0}};
	struct floe_pq_reid one_to[] = {{15, 40, 0}, {16, 40, 0}};
	struct floe_pq_reid taken[] = {{15, 3, 0}}; /* host keeps 3 */
	assert_int_equal(reid_file(&old, twice, 2, &b, &err), FLOE_EINVAL);
	floe_buf_reset(&b);
	assert_int_equal(reid_file(&old, one_to, 2, &b, &err), FLOE_EINVAL);
	floe_buf_reset(&b);
	size_t before = 0;
	assert_int_equal(floe_buf_append(&b, "x", 1), 0);
	before = b.len;
	uint64_t off;
	uint32_t len;
	assert_int_equal(floe_pq_footer_span(old.p + old.n - 8, old.n, &off, &len, NULL), 0);
	assert_int_equal(floe_pq_footer_reid(old.p + off, len, taken, 1, &b, &err), FLOE_EINVAL);
	assert_non_null(strstr(err.msg, "field id 3"));
	assert_int_equal(b.len, before);
	floe_buf_fini(&b);
	free(old.p);
}

/* Every prefix of a footer, and every byte of it flipped, gives 0 or an error: never a
 * read out of bounds (ASan watches), and a failure leaves out as it was. */
static void test_damaged_footers(void **state)
{
	(void)state;
	struct mem old;
	write_cols(pq_cols, 4, 20, &old);
	uint64_t off;
	uint32_t len;
	assert_int_equal(floe_pq_footer_span(old.p + old.n - 8, old.n, &off, &len, NULL), 0);
	struct floe_pq_reid map[] = {{15, 300, 0}, {12, 301, 0}};
	struct floe_buf b;
	floe_buf_init(&b, NULL, 1 << 20);
	for (uint32_t cut = 0; cut < len; cut++) {
		uint8_t *p = malloc(cut ? cut : 1);
		memcpy(p, old.p + off, cut);
		floe_buf_reset(&b);
		int rc = floe_pq_footer_reid(p, cut, map, 2, &b, NULL);
		if (rc)
			assert_int_equal(b.len, 0);
		free(p);
	}
	uint8_t *p = malloc(len);
	for (uint32_t at = 0; at < len; at++) {
		memcpy(p, old.p + off, len);
		p[at] ^= 0xa5;
		floe_buf_reset(&b);
		int rc = floe_pq_footer_reid(p, len, map, 2, &b, NULL);
		if (rc)
			assert_int_equal(b.len, 0);
	}
	free(p);
	/* The frame: no magic, a length past the file. */
	uint8_t tail[8] = {0xff, 0xff, 0, 0, 'P', 'A', 'R', '1'};
	assert_int_equal(floe_pq_footer_span(tail, 100, &off, &len, NULL), FLOE_ECORRUPT);
	memcpy(tail + 4, "PARE", 4);
	assert_int_equal(floe_pq_footer_span(tail, 100, &off, &len, NULL), FLOE_EFORMAT);
	/* A buffer too small for the new footer. */
	struct floe_buf small;
	floe_buf_init(&small, NULL, 16);
	assert_int_equal(floe_pq_footer_span(old.p + old.n - 8, old.n, &off, &len, NULL), 0);
	assert_int_equal(floe_pq_footer_reid(old.p + off, len, map, 2, &small, NULL), FLOE_ELIMIT);
	assert_int_equal(small.len, 0);
	floe_buf_fini(&small);
	floe_buf_fini(&b);
	free(old.p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_same_as_written_with_new_ids),
	    cmocka_unit_test(test_swap_and_identity),
	    cmocka_unit_test(test_bad_maps),
	    cmocka_unit_test(test_damaged_footers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Parquet reader on files built by hand, in shapes floe's writer never makes but other
 * writers may: a map row whose entries span two pages (of the key leaf and, at another
 * entry, of the value leaf), a map with a required value, a page with no values, an
 * index page to skip, a dictionary-encoded integer column, a dictionary page that comes
 * after a data page (refused). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"
#include "formats/base/crc.h"
#include "formats/parquet/reader.h"
#include "formats/parquet/rle.h"
#include "formats/parquet/thrift.h"

#include "pq_rows.h"

/* One data page (v1, uncompressed) of n level entries: levels (when max > 0) and the
 * values' bytes, appended to f with its header. */
static void page(struct floe_buf *f, int type, int max_rep, int max_def, const uint32_t *rep,
		 const uint32_t *def, size_t n, const void *vals, size_t vlen, int enc)
{
	struct floe_buf body, lv;
	floe_buf_init(&body, NULL, 1 << 20);
	floe_buf_init(&lv, NULL, 1 << 20);
	for (int k = 0; k < 2; k++) {
		int max = k ? max_def : max_rep;
		const uint32_t *v = k ? def : rep;
		if (!max)
			continue;
		struct floe_rle r;
		floe_buf_reset(&lv);
		floe_rle_init(&r, &lv, floe_rle_bit_width((uint32_t)max));
		for (size_t i = 0; i < n; i++)
			floe_rle_put(&r, v[i]);
		assert_int_equal(floe_rle_flush(&r), 0);
		assert_int_equal(floe_buf_put_le32(&body, (uint32_t)lv.len), 0);
		assert_int_equal(floe_buf_append(&body, lv.data, lv.len), 0);
	}
	if (vlen)
		assert_int_equal(floe_buf_append(&body, vals, vlen), 0);
	struct floe_thrift t;
	floe_thrift_init(&t, f);
	floe_thrift_i32(&t, 1, type);
	floe_thrift_i32(&t, 2, (int32_t)body.len);
	floe_thrift_i32(&t, 3, (int32_t)body.len);
	floe_thrift_i32(&t, 4, (int32_t)floe_crc32(0, body.data, body.len));
	if (type == 0) {
		floe_thrift_struct(&t, 5);
		floe_thrift_i32(&t, 1, (int32_t)n);
		floe_thrift_i32(&t, 2, enc);
		floe_thrift_i32(&t, 3, 3);
		floe_thrift_i32(&t, 4, 3);
		floe_thrift_end(&t);
	} else if (type == 2) {
		floe_thrift_struct(&t, 7);
		floe_thrift_i32(&t, 1, (int32_t)n);
		floe_thrift_i32(&t, 2, 0);
		floe_thrift_end(&t);
	}
	floe_thrift_end(&t);
	assert_int_equal(floe_thrift_error(&t), 0);
	assert_int_equal(floe_buf_append(f, body.data, body.len), 0);
	floe_buf_fini(&body);
	floe_buf_fini(&lv);
}

/* PLAIN byte arrays from NUL-terminated strings. */
static size_t plain(uint8_t *out, const char *const *s, size_t n)
{
	size_t o = 0;
	for (size_t i = 0; i < n; i++) {
		uint32_t l = (uint32_t)strlen(s[i]);
		memcpy(out + o, &l, 4); /* little-endian hosts only; fine for a test */
		memcpy(out + o + 4, s[i], l);
		o += 4 + l;
	}
	return o;
}

struct chunk {
	const char *path[3];
	int npath, ptype;
	int64_t start, len, values, dict_off;
};

static void schema_elem(struct floe_thrift *t, int type, int rep, const char *name, int nchild,
			int conv)
{
	floe_thrift_elem_struct(t);
	if (type >= 0)
		floe_thrift_i32(t, 1, type);
	if (rep >= 0)
		floe_thrift_i32(t, 3, rep);
	floe_thrift_string(t, 4, name);
	if (nchild > 0)
		floe_thrift_i32(t, 5, nchild);
	if (conv >= 0)
		floe_thrift_i32(t, 6, conv);
	floe_thrift_end(t);
}

/* The footer of one row group of rows, with its chunks and the schema schema() writes,
 * and the frame's end. */
static void footer(struct floe_buf *f, void (*schema)(struct floe_thrift *), int64_t rows,
		   const struct chunk *c, size_t nc)
{
	size_t at = f->len;
	struct floe_thrift t;
	floe_thrift_init(&t, f);
	floe_thrift_i32(&t, 1, 1);
	schema(&t);
	floe_thrift_i64(&t, 3, rows);
	floe_thrift_list(&t, 4, FLOE_THRIFT_STRUCT, 1);
	floe_thrift_elem_struct(&t);
	floe_thrift_list(&t, 1, FLOE_THRIFT_STRUCT, nc);
	for (size_t j = 0; j < nc; j++) {
		floe_thrift_elem_struct(&t);
		floe_thrift_i64(&t, 2, 0);
		floe_thrift_struct(&t, 3);
		floe_thrift_i32(&t, 1, c[j].ptype);
		floe_thrift_list(&t, 2, FLOE_THRIFT_I32, 1);
		floe_thrift_elem_i32(&t, 0);
		floe_thrift_list(&t, 3, FLOE_THRIFT_BINARY, (size_t)c[j].npath);
		for (int k = 0; k < c[j].npath; k++)
			floe_thrift_elem_binary(&t, c[j].path[k], strlen(c[j].path[k]));
		floe_thrift_i32(&t, 4, 0);
		floe_thrift_i64(&t, 5, c[j].values);
		floe_thrift_i64(&t, 6, c[j].len);
		floe_thrift_i64(&t, 7, c[j].len);
		floe_thrift_i64(&t, 9, c[j].start);
		if (c[j].dict_off)
			floe_thrift_i64(&t, 11, c[j].dict_off);
		floe_thrift_end(&t);
		floe_thrift_end(&t);
	}
	floe_thrift_i64(&t, 2, 0);
	floe_thrift_i64(&t, 3, rows);
	floe_thrift_end(&t);
	floe_thrift_end(&t);
	assert_int_equal(floe_thrift_error(&t), 0);
	assert_int_equal(floe_buf_put_le32(f, (uint32_t)(f->len - at)), 0);
	assert_int_equal(floe_buf_append(f, "PAR1", 4), 0);
}

static void map_schema(struct floe_thrift *t)
{
	floe_thrift_list(t, 2, FLOE_THRIFT_STRUCT, 5);
	schema_elem(t, -1, -1, "schema", 1, -1);
	schema_elem(t, -1, 1, "attrs", 1, 1); /* optional group (MAP) */
	schema_elem(t, -1, 2, "key_value", 2, -1);
	schema_elem(t, 6, 0, "key", 0, 0);
	schema_elem(t, 6, 1, "value", 0, 0);
}

static struct floe_pq_reader *open_buf(struct floe_alloc *a, struct pq_memsrc *ms,
				       const struct floe_buf *f, int *rc, char *why)
{
	struct floe_pq_source src = pq_source(ms, f->data, f->len);
	struct floe_pq_reader *r = NULL;
	struct floe_err e;
	floe_err_clear(&e);
	*rc = floe_pq_reader_open(a, &src, NULL, &r, &e);
	(void)!snprintf(why, 256, "%.200s", e.msg);
	return r;
}

static void expect_map(const struct floe_pq_value *v, const char *const *k, const char *const *val,
		       size_t n)
{
	assert_false(v->is_null);
	assert_int_equal(v->n, n);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(v->key_lens[i], strlen(k[i]));
		assert_memory_equal(v->keys[i], k[i], v->key_lens[i]);
		if (!val[i]) {
			assert_null(v->vals[i]);
			continue;
		}
		assert_non_null(v->vals[i]);
		assert_int_equal(v->val_lens[i], strlen(val[i]));
		assert_memory_equal(v->vals[i], val[i], v->val_lens[i]);
	}
}

/* Rows: {a:1, b:2, c:null} (spanning pages), {}, null, {d:""}. The key leaf's pages
 * split after b, the value leaf's after a; an empty page and an index page lie between. */
static void test_map_row_spans_pages(void **state)
{
	(void)state;
	struct floe_buf f;
	floe_buf_init(&f, NULL, 1 << 20);
	assert_int_equal(floe_buf_append(&f, "PAR1", 4), 0);
	static const uint32_t rep[] = {0, 1, 1, 0, 0, 0};
	static const uint32_t kdef[] = {2, 2, 2, 1, 0, 2};
	static const uint32_t vdef[] = {3, 3, 2, 1, 0, 3};
	static const char *const k1[] = {"a", "b"}, *const k2[] = {"c", "d"};
	static const char *const v1[] = {"1"}, *const v2[] = {"2", ""};
	uint8_t vals[256];
	struct chunk c[2] = {{{"attrs", "key_value", "key"}, 3, 6, 0, 0, 6, 0},
			     {{"attrs", "key_value", "value"}, 3, 6, 0, 0, 6, 0}};
	c[0].start = (int64_t)f.len;
	page(&f, 0, 1, 2, rep, kdef, 2, vals, plain(vals, k1, 2), 0);
	page(&f, 0, 1, 2, rep, kdef, 0, NULL, 0, 0);   /* no values */
	page(&f, 1, 0, 0, NULL, NULL, 0, "idx", 3, 0); /* an index page */
	page(&f, 0, 1, 2, rep + 2, kdef + 2, 4, vals, plain(vals, k2, 2), 0);
	c[0].len = (int64_t)f.len - c[0].start;
	c[1].start = (int64_t)f.len;
	page(&f, 0, 1, 3, rep, vdef, 1, vals, plain(vals, v1, 1), 0);
	page(&f, 0, 1, 3, rep + 1, vdef + 1, 5, vals, plain(vals, v2, 2), 0);
	c[1].len = (int64_t)f.len - c[1].start;
	footer(&f, map_schema, 4, c, 2);

	struct floe_alloc a;
	floe_alloc_init(&a, 0);
	struct pq_memsrc ms;
	int rc;
	char why[256];
	struct floe_pq_reader *r = open_buf(&a, &ms, &f, &rc, why);
	if (rc)
		fail_msg("open: %s", why);
	const struct floe_pq_value *row;
	static const char *const rk[] = {"a", "b", "c"}, *const rv[] = {"1", "2", NULL};
	assert_int_equal(floe_pq_reader_next(r, &row), 1);
	expect_map(&row[0], rk, rv, 3);
	assert_int_equal(floe_pq_reader_next(r, &row), 1);
	assert_false(row[0].is_null);
	assert_int_equal(row[0].n, 0);
	assert_int_equal(floe_pq_reader_next(r, &row), 1);
	assert_true(row[0].is_null);
	assert_int_equal(floe_pq_reader_next(r, &row), 1);
	static const char *const dk[] = {"d"}, *const dv[] = {""};
	expect_map(&row[0], dk, dv, 1);
	assert_int_equal(floe_pq_reader_next(r, &row), 0);
	floe_pq_reader_free(r);
	assert_int_equal(a.used, 0);
	floe_buf_fini(&f);
}

static void int_schema(struct floe_thrift *t)
{
	floe_thrift_list(t, 2, FLOE_THRIFT_STRUCT, 2);
	schema_elem(t, -1, -1, "schema", 1, -1);
	schema_elem(t, 1, 1, "n", 0, -1); /* optional INT32 */
}

/* An INT32 column encoded with a dictionary (PLAIN_DICTIONARY), and the same file with
 * its dictionary page after the data page (refused). */
static void test_int_dictionary(void **state)
{
	(void)state;
	for (int misplaced = 0; misplaced < 2; misplaced++) {
		struct floe_buf f;
		floe_buf_init(&f, NULL, 1 << 20);
		assert_int_equal(floe_buf_append(&f, "PAR1", 4), 0);
		int32_t dict[] = {7, -1, INT32_MIN};
		static const uint32_t def[] = {1, 0, 1, 1, 1};
		/* Indices: width 2, then RLE hybrid runs of 2 0 1 2. */
		struct floe_buf idx;
		floe_buf_init(&idx, NULL, 1024);
		assert_int_equal(floe_buf_putc(&idx, 2), 0);
		struct floe_rle e;
		floe_rle_init(&e, &idx, 2);
		static const uint32_t iv[] = {2, 0, 1, 2};
		for (int i = 0; i < 4; i++)
			floe_rle_put(&e, iv[i]);
		assert_int_equal(floe_rle_flush(&e), 0);
		struct chunk c = {{"n"}, 1, 1, (int64_t)f.len, 0, 5, 0};
		if (!misplaced)
			page(&f, 2, 0, 0, NULL, NULL, 3, dict, sizeof(dict), 0);
		c.start = misplaced ? (int64_t)f.len : 4;
		page(&f, 0, 0, 1, NULL, def, 5, idx.data, idx.len, 2);
		if (misplaced)
			page(&f, 2, 0, 0, NULL, NULL, 3, dict, sizeof(dict), 0);
		c.len = (int64_t)f.len - 4;
		c.start = 4;
		footer(&f, int_schema, 5, &c, 1);
		struct floe_alloc a;
		floe_alloc_init(&a, 0);
		struct pq_memsrc ms;
		int rc;
		char why[256];
		struct floe_pq_reader *r = open_buf(&a, &ms, &f, &rc, why);
		assert_int_equal(rc, 0);
		const struct floe_pq_value *row;
		if (misplaced) {
			assert_int_equal(floe_pq_reader_next(r, &row), FLOE_ECORRUPT);
			assert_non_null(strstr(floe_pq_reader_error(r)->msg, "dictionary"));
		} else {
			static const int64_t want[] = {INT32_MIN, 0, 7, -1, INT32_MIN};
			for (int i = 0; i < 5; i++) {
				assert_int_equal(floe_pq_reader_next(r, &row), 1);
				assert_int_equal(row[0].is_null, i == 1);
				if (i != 1)
					assert_int_equal(row[0].i, want[i]);
			}
			assert_int_equal(floe_pq_reader_next(r, &row), 0);
		}
		floe_pq_reader_free(r);
		assert_int_equal(a.used, 0);
		floe_buf_fini(&idx);
		floe_buf_fini(&f);
	}
}

static void required_value_schema(struct floe_thrift *t)
{
	floe_thrift_list(t, 2, FLOE_THRIFT_STRUCT, 5);
	schema_elem(t, -1, -1, "schema", 1, -1);
	schema_elem(t, -1, 0, "m", 1, 1); /* required group (MAP) */
	schema_elem(t, -1, 2, "kv", 2, -1);
	schema_elem(t, 6, 0, "k", 0, 0);
	schema_elem(t, 6, 0, "v", 0, 0); /* required value */
}

/* A required map of required values: max definition levels 1 and 1. */
static void test_required_map_value(void **state)
{
	(void)state;
	struct floe_buf f;
	floe_buf_init(&f, NULL, 1 << 20);
	assert_int_equal(floe_buf_append(&f, "PAR1", 4), 0);
	static const uint32_t rep[] = {0, 1, 0};
	static const uint32_t def[] = {1, 1, 0};
	static const char *const ks[] = {"x", "y"}, *const vs[] = {"1", "2"};
	uint8_t vals[64];
	struct chunk c[2] = {{{"m", "kv", "k"}, 3, 6, 0, 0, 3, 0},
			     {{"m", "kv", "v"}, 3, 6, 0, 0, 3, 0}};
	c[0].start = (int64_t)f.len;
	page(&f, 0, 1, 1, rep, def, 3, vals, plain(vals, ks, 2), 0);
	c[0].len = (int64_t)f.len - c[0].start;
	c[1].start = (int64_t)f.len;
	page(&f, 0, 1, 1, rep, def, 3, vals, plain(vals, vs, 2), 0);
	c[1].len = (int64_t)f.len - c[1].start;
	footer(&f, required_value_schema, 2, c, 2);
	struct floe_alloc a;
	floe_alloc_init(&a, 0);
	struct pq_memsrc ms;
	int rc;
	char why[256];
	struct floe_pq_reader *r = open_buf(&a, &ms, &f, &rc, why);
	if (rc)
		fail_msg("open: %s", why);
	size_t n;
	const struct floe_pq_column *cols = floe_pq_reader_columns(r, &n);
	assert_int_equal(n, 1);
	assert_int_equal(cols[0].kind, FLOE_PQ_MAP_STRING);
	assert_false(cols[0].optional);
	const struct floe_pq_value *row;
	assert_int_equal(floe_pq_reader_next(r, &row), 1);
	expect_map(&row[0], ks, vs, 2);
	assert_int_equal(floe_pq_reader_next(r, &row), 1);
	assert_int_equal(row[0].n, 0);
	assert_int_equal(floe_pq_reader_next(r, &row), 0);
	floe_pq_reader_free(r);
	assert_int_equal(a.used, 0);
	floe_buf_fini(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_map_row_spans_pages),
	    cmocka_unit_test(test_int_dictionary),
	    cmocka_unit_test(test_required_map_value),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

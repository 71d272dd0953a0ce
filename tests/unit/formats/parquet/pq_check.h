/* Helpers of the Parquet reader's round-trip tests (include after cmocka.h): write the
 * generated rows (pq_rows.h) with a configuration, read them back and check each value,
 * write what was read again and compare the files, list the encodings a footer names. */
#ifndef FLOE_TEST_PQ_CHECK_H
#define FLOE_TEST_PQ_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"
#include "formats/base/utf8.h"
#include "formats/parquet/reader.h"
#include "formats/parquet/thrift.h"
#include "formats/parquet/writer.h"

#include "mem_sink.h"
#include "pq_rows.h"

struct cfg {
	enum floe_pq_codec codec;
	enum floe_pq_profile profile;
	bool bloom, no_index, sorted;
	size_t page_size, budget, row_group, dict_cap;
};

static inline void opts_of(const struct cfg *c, struct floe_pq_options *o,
			   struct floe_pq_bloom_column *bl)
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
static inline void write_file(const struct cfg *c, uint64_t seed, uint64_t n, struct mem *m)
{
	struct floe_pq_options o;
	struct floe_pq_bloom_column bl[2];
	opts_of(c, &o, bl);
	memset(m, 0, sizeof(*m));
	struct floe_pq_writer *w = NULL;
	assert_int_equal(floe_pq_writer_new(NULL, pq_cols, PQ_NCOLS, &o, mem_sink, m, &w), 0);
	static struct pq_row row;
	for (uint64_t i = 0; i < n; i++) {
		pq_gen(&row, seed, i, n, c->sorted);
		assert_int_equal(floe_pq_writer_add_row(w, row.v), 0);
	}
	assert_int_equal(floe_pq_writer_finish(w), 0);
	floe_pq_writer_free(w);
}

static inline void same_bytes(const char *want, size_t wn, const char *got, size_t gn)
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
	    floe_utf8_repair((const uint8_t *)(want ? want : ""), wn, &scratch, &p, &pn, &rep),
	    0);
	assert_int_equal(gn, pn);
	assert_non_null(got);
	if (pn)
		assert_memory_equal(got, p, pn);
}

static inline void same_value(const struct floe_pq_column *c, const struct floe_pq_value *want,
			      const struct floe_pq_value *got)
{
	assert_int_equal(got->is_null, want->is_null);
	if (want->is_null)
		return;
	switch (c->kind) {
	case FLOE_PQ_STRING:
		same_bytes(want->s, want->len, got->s, got->len);
		break;
	case FLOE_PQ_BINARY: /* any bytes, kept as they are */
		assert_int_equal(got->len, want->len);
		assert_non_null(got->s);
		if (want->len)
			assert_memory_equal(got->s, want->s, want->len);
		break;
	case FLOE_PQ_FLOAT:
	case FLOE_PQ_DOUBLE:
		/* Bit for bit: -0.0 stays -0.0. */
		assert_memory_equal(&got->d, &want->d, sizeof(double));
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

static inline struct floe_pq_reader *open_mem(struct floe_alloc *a, struct pq_memsrc *ms,
					      const struct mem *m)
{
	struct floe_pq_source src = pq_source(ms, m->p, m->n);
	struct floe_pq_reader *r = NULL;
	struct floe_err why;
	int rc = floe_pq_reader_open(a, &src, NULL, &r, &why);
	if (rc)
		fail_msg("open: %d %s", rc, why.msg);
	return r;
}

/* Reads m back and checks every row against the generator; with rewrite, also writes
 * the rows read with the same options and checks the new file is m, byte for byte. */
static inline void check_file_(const struct cfg *c, uint64_t seed, uint64_t n, const struct mem *m,
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
	struct floe_pq_writer *w = NULL;
	if (rewrite)
		assert_int_equal(floe_pq_writer_new(NULL, cols, ncols, &o, mem_sink, &again, &w), 0);
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
		fail_msg("next: %d %s at %llu", rc, floe_pq_reader_error(r)->msg,
			 (unsigned long long)floe_pq_reader_error(r)->offset);
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

static inline void check_file(const struct cfg *c, uint64_t seed, uint64_t n, const struct mem *m)
{
	check_file_(c, seed, n, m, true);
}

/* The encodings named in the footer's column chunks, as a bit set, found with the
 * Thrift decoder: FileMetaData.row_groups[].columns[].meta_data.encodings. */
static inline unsigned footer_encodings(const struct mem *m)
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

#endif

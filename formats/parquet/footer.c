/* FileMetaData encoder. Field ids and types follow apache/parquet-format
 * src/main/thrift/parquet.thrift; the comments name the struct being written. */
#include "footer.h"

#include "formats/base/buf.h"
#include "formats/parquet/thrift.h"

#include <string.h>

enum { CONV_UTF8 = 0, CONV_MAP = 1, CONV_DATE = 6, CONV_TIMESTAMP_MICROS = 10 };

/* A MAP group (the column's element, opened by the caller), its repeated key_value
 * group, and the key and value leaves; the value's element is left open for the caller
 * to close, as every column's element is. map<string,string> values are optional
 * strings, map<string,long> values required INT64. */
static void put_map_schema(struct floe_thrift *t, const struct floe_pq_column *c, int rep)
{
	bool longs = c->kind == FLOE_PQ_MAP_STRING_LONG;
	floe_thrift_i32(t, 3, rep);
	floe_thrift_string(t, 4, c->name);
	floe_thrift_i32(t, 5, 1);
	floe_thrift_i32(t, 6, CONV_MAP);
	floe_thrift_i32(t, 9, c->field_id);
	floe_thrift_struct(t, 10);
	floe_thrift_struct(t, 2); /* MAP */
	floe_thrift_end(t);
	floe_thrift_end(t);
	floe_thrift_end(t);
	floe_thrift_elem_struct(t);
	floe_thrift_i32(t, 3, FLOE_PQ_REPEATED);
	floe_thrift_string(t, 4, "key_value");
	floe_thrift_i32(t, 5, 2);
	floe_thrift_end(t);
	for (int kv = 0; kv < 2; kv++) {
		bool str = kv == 0 || !longs;
		floe_thrift_elem_struct(t);
		floe_thrift_i32(t, 1, str ? FLOE_PQ_T_BYTE_ARRAY : FLOE_PQ_T_INT64);
		floe_thrift_i32(t, 3, kv && !longs ? FLOE_PQ_OPTIONAL : FLOE_PQ_REQUIRED);
		floe_thrift_string(t, 4, kv ? "value" : "key");
		if (str)
			floe_thrift_i32(t, 6, CONV_UTF8);
		floe_thrift_i32(t, 9, kv ? c->value_field_id : c->key_field_id);
		if (str) {
			floe_thrift_struct(t, 10);
			floe_thrift_struct(t, 1);
			floe_thrift_end(t);
			floe_thrift_end(t);
		}
		if (kv == 0)
			floe_thrift_end(t);
	}
}

/* How a leaf column of kind is typed: its physical type, its converted type (-1: none)
 * and its LogicalType union's field (0: none). */
struct leaf_type {
	int8_t physical, converted, logical;
};

enum { LOGICAL_STRING = 1, LOGICAL_DATE = 6, LOGICAL_TIMESTAMP = 8 };

static struct leaf_type leaf_type(enum floe_pq_kind kind)
{
	switch (kind) {
	case FLOE_PQ_INT32:
		return (struct leaf_type){FLOE_PQ_T_INT32, -1, 0};
	case FLOE_PQ_INT64:
		return (struct leaf_type){FLOE_PQ_T_INT64, -1, 0};
	case FLOE_PQ_TIMESTAMPTZ:
		return (struct leaf_type){FLOE_PQ_T_INT64, CONV_TIMESTAMP_MICROS, LOGICAL_TIMESTAMP};
	case FLOE_PQ_DATE:
		return (struct leaf_type){FLOE_PQ_T_INT32, CONV_DATE, LOGICAL_DATE};
	case FLOE_PQ_DOUBLE:
		return (struct leaf_type){FLOE_PQ_T_DOUBLE, -1, 0};
	case FLOE_PQ_FLOAT:
		return (struct leaf_type){FLOE_PQ_T_FLOAT, -1, 0};
	case FLOE_PQ_BOOLEAN:
		return (struct leaf_type){FLOE_PQ_T_BOOLEAN, -1, 0};
	case FLOE_PQ_STRING:
		return (struct leaf_type){FLOE_PQ_T_BYTE_ARRAY, CONV_UTF8, LOGICAL_STRING};
	default: /* FLOE_PQ_BINARY */
		return (struct leaf_type){FLOE_PQ_T_BYTE_ARRAY, -1, 0};
	}
}

/* One leaf column's SchemaElement fields (the caller opens and ends the struct). */
static void put_leaf(struct floe_thrift *t, const struct floe_pq_column *c, int rep)
{
	struct leaf_type l = leaf_type(c->kind);
	floe_thrift_i32(t, 1, l.physical);
	floe_thrift_i32(t, 3, rep);
	floe_thrift_string(t, 4, c->name);
	if (l.converted >= 0)
		floe_thrift_i32(t, 6, l.converted);
	floe_thrift_i32(t, 9, c->field_id);
	if (!l.logical)
		return;
	floe_thrift_struct(t, 10); /* LogicalType */
	floe_thrift_struct(t, l.logical);
	if (l.logical == LOGICAL_TIMESTAMP) {
		floe_thrift_bool(t, 1, true); /* isAdjustedToUTC */
		floe_thrift_struct(t, 2);     /* TimeUnit */
		floe_thrift_struct(t, 2);     /* MICROS */
		floe_thrift_end(t);
		floe_thrift_end(t);
	}
	floe_thrift_end(t);
	floe_thrift_end(t);
}

static void put_schema(struct floe_thrift *t, const struct floe_pq_footer *f)
{
	size_t n = 1;
	for (size_t i = 0; i < f->ncols; i++)
		n += f->cols[i].kind == FLOE_PQ_MAP_STRING ||
			     f->cols[i].kind == FLOE_PQ_MAP_STRING_LONG
			 ? 4
			 : 1;
	floe_thrift_list(t, 2, FLOE_THRIFT_STRUCT, n);
	floe_thrift_elem_struct(t);
	floe_thrift_string(t, 4, "table");
	floe_thrift_i32(t, 5, (int32_t)f->ncols);
	floe_thrift_end(t);
	for (size_t i = 0; i < f->ncols; i++) {
		const struct floe_pq_column *c = &f->cols[i];
		int rep = c->optional ? FLOE_PQ_OPTIONAL : FLOE_PQ_REQUIRED;
		floe_thrift_elem_struct(t);
		if (c->kind == FLOE_PQ_MAP_STRING || c->kind == FLOE_PQ_MAP_STRING_LONG)
			put_map_schema(t, c, rep);
		else
			put_leaf(t, c, rep);
		floe_thrift_end(t);
	}
}

void floe_pq_le_bytes(uint8_t *d, int64_t v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		d[i] = (uint8_t)((uint64_t)v >> (8 * i));
}

size_t floe_pq_stat_bytes(uint8_t *d, int ptype, int64_t v, bool max)
{
	switch (ptype) {
	case FLOE_PQ_T_BOOLEAN:
		d[0] = v != 0;
		return 1;
	case FLOE_PQ_T_INT32:
		floe_pq_le_bytes(d, v, 4);
		return 4;
	case FLOE_PQ_T_FLOAT: {
		uint32_t bits = (uint32_t)floe_pq_float_key((uint32_t)v);
		if ((uint32_t)(bits << 1) == 0)
			bits = max ? 0 : (uint32_t)1 << 31;
		floe_pq_le_bytes(d, (int64_t)bits, 4);
		return 4;
	}
	case FLOE_PQ_T_DOUBLE: {
		/* The key's transform is its own inverse. */
		uint64_t bits = (uint64_t)floe_pq_double_key((uint64_t)v);
		if ((bits << 1) == 0) /* a zero of either sign */
			bits = max ? 0 : (uint64_t)1 << 63;
		floe_pq_le_bytes(d, (int64_t)bits, 8);
		return 8;
	}
	default:
		floe_pq_le_bytes(d, v, 8);
		return 8;
	}
}

static void put_statistics(struct floe_thrift *t, const struct floe_pq_leaf_desc *l,
			   const struct floe_pq_chunk_meta *m)
{
	floe_thrift_struct(t, 12);
	if (m->has_minmax && l->ptype != FLOE_PQ_T_BYTE_ARRAY) {
		uint8_t mn[8], mx[8];
		size_t n = floe_pq_stat_bytes(mn, l->ptype, m->imin, false);
		floe_pq_stat_bytes(mx, l->ptype, m->imax, true);
		/* Signed integers sort the same in the deprecated order: keep old readers
		 * happy. Doubles and booleans get the new fields only. */
		if (l->ptype == FLOE_PQ_T_INT32 || l->ptype == FLOE_PQ_T_INT64) {
			floe_thrift_binary(t, 1, mx, n);
			floe_thrift_binary(t, 2, mn, n);
		}
		floe_thrift_i64(t, 3, m->null_count);
		floe_thrift_binary(t, 5, mx, n);
		floe_thrift_binary(t, 6, mn, n);
		floe_thrift_bool(t, 7, true);
		floe_thrift_bool(t, 8, true);
	} else if (m->has_minmax) {
		bool has_max = !m->hi.unbounded;
		floe_thrift_i64(t, 3, m->null_count);
		if (has_max)
			floe_thrift_binary(t, 5, m->hi.v, m->hi.len);
		floe_thrift_binary(t, 6, m->lo.v, m->lo.len);
		if (has_max)
			floe_thrift_bool(t, 7, m->hi.exact);
		floe_thrift_bool(t, 8, m->lo.exact);
	} else {
		floe_thrift_i64(t, 3, m->null_count);
	}
	floe_thrift_end(t);
}

static void put_chunk_head(struct floe_thrift *t, enum floe_pq_codec codec,
			   const struct floe_pq_leaf_desc *l, const struct floe_pq_chunk_rec *r)
{
	const struct floe_pq_chunk_meta *m = &r->m;
	floe_thrift_elem_struct(t);
	floe_thrift_i64(t, 2, 0);
	floe_thrift_struct(t, 3);
	floe_thrift_i32(t, 1, l->ptype);
	/* Encodings in id order: PLAIN (dictionary page or plain data), RLE (levels), the
	 * delta encodings, RLE_DICTIONARY (indices). */
	bool used[FLOE_PQ_NENC] = {false};
	used[FLOE_PQ_ENC_PLAIN] = m->dict_len > 0;
	used[FLOE_PQ_ENC_RLE] = true;
	size_t nenc = 0;
	for (int e = 0; e < FLOE_PQ_NENC; e++) {
		used[e] = used[e] || m->enc_pages[e] > 0;
		nenc += used[e];
	}
	floe_thrift_list(t, 2, FLOE_THRIFT_I32, nenc);
	for (int e = 0; e < FLOE_PQ_NENC; e++) {
		if (used[e])
			floe_thrift_elem_i32(t, e);
	}
	floe_thrift_list(t, 3, FLOE_THRIFT_BINARY, (size_t)l->npath);
	for (int i = 0; i < l->npath; i++)
		floe_thrift_elem_binary(t, l->path[i], strlen(l->path[i]));
	floe_thrift_i32(t, 4, (int32_t)codec);
	floe_thrift_i64(t, 5, m->num_values);
	floe_thrift_i64(t, 6, m->unc_size);
	floe_thrift_i64(t, 7, m->comp_size);
	floe_thrift_i64(t, 9, r->data_off);
	if (m->dict_len > 0)
		floe_thrift_i64(t, 11, r->dict_off);
	put_statistics(t, l, m);
	/* PageEncodingStats: the dictionary page, then data pages per encoding. */
	size_t nstats = (size_t)(m->dict_len > 0);
	for (int e = 0; e < FLOE_PQ_NENC; e++)
		nstats += m->enc_pages[e] > 0;
	floe_thrift_list(t, 13, FLOE_THRIFT_STRUCT, nstats);
	if (m->dict_len > 0) {
		floe_thrift_elem_struct(t);
		floe_thrift_i32(t, 1, 2);
		floe_thrift_i32(t, 2, FLOE_PQ_ENC_PLAIN);
		floe_thrift_i32(t, 3, 1);
		floe_thrift_end(t);
	}
	/* RLE_DICTIONARY first: the order floe has always written. */
	static const int order[] = {FLOE_PQ_ENC_RLE_DICTIONARY, 0, 1, 2, 3, 4, 5, 6, 7};
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		int e = order[i];
		if (m->enc_pages[e] == 0)
			continue;
		floe_thrift_elem_struct(t);
		floe_thrift_i32(t, 1, m->data_page_type);
		floe_thrift_i32(t, 2, e);
		floe_thrift_i32(t, 3, m->enc_pages[e]);
		floe_thrift_end(t);
	}
}

int floe_pq_footer_chunk_head(struct floe_buf *out, enum floe_pq_codec codec,
			      const struct floe_pq_leaf_desc *l, const struct floe_pq_chunk_rec *r)
{
	struct floe_thrift t;
	floe_thrift_init(&t, out);
	put_chunk_head(&t, codec, l, r);
	return floe_thrift_error(&t);
}

/* The rest of a ColumnChunk after its head: the bloom filter fields of ColumnMetaData
 * (after field 13), its end, the page index fields of ColumnChunk (after field 3) and
 * its end. */
static void put_chunk_tail(struct floe_buf *out, const struct floe_pq_chunk_loc *c, int *err)
{
	struct floe_thrift t;
	floe_thrift_init(&t, out);
	t.last[0] = 13;
	if (c->bloom_off >= 0) {
		floe_thrift_i64(&t, 14, c->bloom_off);
		floe_thrift_i32(&t, 15, c->bloom_len);
	}
	floe_thrift_end(&t); /* ColumnMetaData */
	t.last[0] = 3;
	if (c->oi_off >= 0) {
		floe_thrift_i64(&t, 4, c->oi_off);
		floe_thrift_i32(&t, 5, c->oi_len);
	}
	if (c->ci_off >= 0) {
		floe_thrift_i64(&t, 6, c->ci_off);
		floe_thrift_i32(&t, 7, c->ci_len);
	}
	floe_thrift_end(&t); /* ColumnChunk */
	if (!*err)
		*err = floe_thrift_error(&t);
}

static void put_footer(struct floe_thrift *t, const struct floe_pq_footer *f)
{
	floe_thrift_i32(t, 1, 1);
	put_schema(t, f);
	floe_thrift_i64(t, 3, (int64_t)f->rows);
	floe_thrift_list(t, 4, FLOE_THRIFT_STRUCT, f->nrgs);
	const uint8_t *head = f->heads;
	for (size_t g = 0; g < f->nrgs; g++) {
		const struct floe_pq_rg_rec *rg = &f->rgs[g];
		floe_thrift_elem_struct(t);
		floe_thrift_list(t, 1, FLOE_THRIFT_STRUCT, f->nleaves);
		for (size_t j = 0; j < f->nleaves; j++) {
			/* Whole elements appended around the encoder, whose state they keep. */
			const struct floe_pq_chunk_loc *c = &f->locs[g * f->nleaves + j];
			if (!t->err)
				t->err = floe_buf_append(t->out, head, c->head_len);
			head += c->head_len;
			put_chunk_tail(t->out, c, &t->err);
		}
		floe_thrift_i64(t, 2, rg->total_byte_size);
		floe_thrift_i64(t, 3, rg->num_rows);
		floe_thrift_i64(t, 5, rg->file_offset);
		floe_thrift_i64(t, 6, rg->total_comp);
		floe_thrift_i16(t, 7, (int16_t)g);
		floe_thrift_end(t);
	}
	if (f->kv_count) {
		floe_thrift_list(t, 5, FLOE_THRIFT_STRUCT, f->kv_count);
		for (size_t i = 0; i < f->kv_count; i++) {
			floe_thrift_elem_struct(t);
			floe_thrift_string(t, 1, f->kv[i].key);
			if (f->kv[i].value)
				floe_thrift_string(t, 2, f->kv[i].value);
			floe_thrift_end(t);
		}
	}
	floe_thrift_string(t, 6, f->created_by);
	floe_thrift_list(t, 7, FLOE_THRIFT_STRUCT, f->nleaves);
	for (size_t j = 0; j < f->nleaves; j++) {
		floe_thrift_elem_struct(t); /* ColumnOrder */
		floe_thrift_struct(t, 1);   /* TYPE_ORDER */
		floe_thrift_end(t);
		floe_thrift_end(t);
	}
	floe_thrift_end(t);
}

int floe_pq_footer_encode(struct floe_buf *out, const struct floe_pq_footer *f)
{
	struct floe_thrift t;
	floe_thrift_init(&t, out);
	put_footer(&t, f);
	return floe_thrift_error(&t);
}

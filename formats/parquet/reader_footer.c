/* The Parquet reader's footer: the file's frame (PAR1 at both ends and the footer's
 * length), FileMetaData in Thrift compact form, its schema mapped onto floe's column
 * kinds, and every row group checked against the file when it is opened, so that reading
 * rows meets no surprise from the footer. Field ids follow apache/parquet-format's
 * parquet.thrift; the comments name the struct being read. */
#include "formats/parquet/reader_impl.h"

#include "formats/base/alloc.h"
#include "formats/base/error.h"
#include "formats/parquet/chunk.h"
#include "formats/parquet/footer.h"
#include "formats/parquet/thrift.h"

#include <stdio.h>
#include <string.h>

/* floe's writer takes at most 4096 columns; a map column is 4 schema elements. */
#define MAX_COLS 4096
#define MAX_ELEMS (1 + 4 * MAX_COLS)

/* One SchemaElement; -1 (or 0 for logical) where the field is absent. */
struct elem {
	int type, rep, conv, nchildren;
	const uint8_t *name;
	size_t name_len;
	int32_t field_id;
	int logical; /* the LogicalType union's member id */
	bool ts_utc;
	int ts_unit; /* TimeUnit member: 1 MILLIS, 2 MICROS, 3 NANOS */
	int int_bits;
	bool int_signed;
};

static const char *const type_names[] = {"BOOLEAN", "INT32",  "INT64",	    "INT96",
					 "FLOAT",   "DOUBLE", "BYTE_ARRAY", "FIXED_LEN_BYTE_ARRAY"};
static const char *const logical_names[] = {"?",       "STRING",  "MAP",      "LIST",	   "ENUM",
					    "DECIMAL", "DATE",	  "TIME",     "TIMESTAMP", "?",
					    "INTEGER", "UNKNOWN", "JSON",     "BSON",	   "UUID",
					    "FLOAT16", "VARIANT", "GEOMETRY", "GEOGRAPHY"};

static const char *type_name(int t)
{
	return t >= 0 && t < 8 ? type_names[t] : "unknown";
}

static const char *logical_name(int l)
{
	return l > 0 && l < (int)(sizeof(logical_names) / sizeof(logical_names[0]))
		   ? logical_names[l]
		   : "an unknown logical type";
}

/* The footer position of the decoder, as a file offset. */
static uint64_t at(const struct floe_pq_reader *r, const struct floe_thrift_rd *t)
{
	return r->footer_off + (t->err ? t->err_pos : t->pos);
}

static int thrift_fail(struct floe_pq_reader *r, const struct floe_thrift_rd *t)
{
	if (t->err == FLOE_ELIMIT)
		return pq_fail(r, FLOE_ELIMIT, at(r, t), "footer nests deeper than %d levels",
			       FLOE_THRIFT_MAX_DEPTH);
	return pq_fail(r, FLOE_EPARSE, at(r, t), "malformed footer (Thrift) at offset %llu",
		       (unsigned long long)at(r, t));
}

/* TimestampType and IntType inside a LogicalType; other members are skipped. */
static void parse_logical(struct floe_thrift_rd *t, int type, struct elem *e)
{
	int16_t id, id2, id3;
	int ft, ft2, ft3;
	floe_thrift_rd_struct(t, type);
	while (floe_thrift_rd_field(t, &id, &ft)) {
		e->logical = id;
		if ((id != 8 && id != 10) || ft != FLOE_THRIFT_STRUCT) {
			floe_thrift_rd_skip(t, ft, false);
			continue;
		}
		floe_thrift_rd_struct(t, ft);
		while (floe_thrift_rd_field(t, &id2, &ft2)) {
			if (id == 8 && id2 == 1) {
				e->ts_utc = floe_thrift_rd_bool(t, ft2);
			} else if (id == 8 && id2 == 2) {
				floe_thrift_rd_struct(t, ft2);
				while (floe_thrift_rd_field(t, &id3, &ft3)) {
					e->ts_unit = id3;
					floe_thrift_rd_skip(t, ft3, false);
				}
			} else if (id == 10 && id2 == 1) {
				e->int_bits = floe_thrift_rd_i32(t, ft2);
			} else if (id == 10 && id2 == 2) {
				e->int_signed = floe_thrift_rd_bool(t, ft2);
			} else {
				floe_thrift_rd_skip(t, ft2, false);
			}
		}
	}
}

/* SchemaElement */
static void parse_elem(struct floe_thrift_rd *t, int type, struct elem *e)
{
	int16_t id;
	int ft;
	memset(e, 0, sizeof(*e));
	e->type = e->rep = e->conv = e->nchildren = -1;
	floe_thrift_rd_struct(t, type);
	while (floe_thrift_rd_field(t, &id, &ft)) {
		switch (id) {
		case 1:
			e->type = floe_thrift_rd_i32(t, ft);
			break;
		case 3:
			e->rep = floe_thrift_rd_i32(t, ft);
			break;
		case 4:
			floe_thrift_rd_binary(t, ft, &e->name, &e->name_len);
			break;
		case 5:
			e->nchildren = floe_thrift_rd_i32(t, ft);
			break;
		case 6:
			e->conv = floe_thrift_rd_i32(t, ft);
			break;
		case 9:
			e->field_id = floe_thrift_rd_i32(t, ft);
			break;
		case 10:
			parse_logical(t, ft, e);
			break;
		default:
			floe_thrift_rd_skip(t, ft, false);
			break;
		}
	}
	if (!e->name) { /* required by the format; an empty name is as good for floe */
		e->name = (const uint8_t *)"";
		e->name_len = 0;
	}
}

/* The floe kind of a primitive leaf, or FLOE_EUNSUPPORTED naming what it is. */
static int leaf_kind(struct floe_pq_reader *r, const struct elem *e, uint64_t off,
		     enum floe_pq_kind *kind)
{
	int n = (int)(e->name_len > 48 ? 48 : e->name_len);
	const char *name = (const char *)e->name;
	bool plain_int = e->logical == 10 && e->int_signed;
	switch (e->type) {
	case FLOE_PQ_T_INT32:
		if ((!e->logical && (e->conv < 0 || e->conv == 17)) ||
		    (plain_int && e->int_bits == 32)) {
			*kind = FLOE_PQ_INT32;
			return 0;
		}
		if (e->logical == 6 || (!e->logical && e->conv == 6)) {
			*kind = FLOE_PQ_DATE;
			return 0;
		}
		break;
	case FLOE_PQ_T_FLOAT:
	case FLOE_PQ_T_DOUBLE:
	case FLOE_PQ_T_BOOLEAN:
		if (!e->logical && e->conv < 0) {
			*kind = e->type == FLOE_PQ_T_FLOAT    ? FLOE_PQ_FLOAT
				: e->type == FLOE_PQ_T_DOUBLE ? FLOE_PQ_DOUBLE
							      : FLOE_PQ_BOOLEAN;
			return 0;
		}
		break;
	case FLOE_PQ_T_INT64:
		if ((!e->logical && (e->conv < 0 || e->conv == 18)) ||
		    (plain_int && e->int_bits == 64)) {
			*kind = FLOE_PQ_INT64;
			return 0;
		}
		if ((e->logical == 8 && e->ts_utc && e->ts_unit == 2) ||
		    (!e->logical && e->conv == 10)) {
			*kind = FLOE_PQ_TIMESTAMPTZ;
			return 0;
		}
		if (e->logical == 8)
			return pq_fail(r, FLOE_EUNSUPPORTED, off,
				       "column '%.*s': floe reads timestamps in microseconds "
				       "adjusted to UTC only",
				       n, name);
		break;
	case FLOE_PQ_T_BYTE_ARRAY:
		if (e->logical == 1 || (!e->logical && e->conv == 0)) {
			*kind = FLOE_PQ_STRING;
			return 0;
		}
		if (!e->logical && e->conv < 0) {
			*kind = FLOE_PQ_BINARY;
			return 0;
		}
		break;
	default:
		return pq_fail(r, FLOE_EUNSUPPORTED, off,
			       "column '%.*s': physical type %s is not supported", n, name,
			       type_name(e->type));
	}
	if (e->logical)
		return pq_fail(r, FLOE_EUNSUPPORTED, off,
			       "column '%.*s': %s annotated %s is not supported", n, name,
			       type_name(e->type), logical_name(e->logical));
	return pq_fail(r, FLOE_EUNSUPPORTED, off,
		       "column '%.*s': %s with converted type %d is not supported", n, name,
		       type_name(e->type), e->conv);
}

static int set_leaf(struct floe_pq_reader *r, struct pq_leaf *l, const struct elem *const *path,
		    int npath, int role)
{
	const struct elem *c = path[0];
	l->role = role;
	l->npath = npath;
	for (int i = 0; i < npath; i++) {
		l->path[i] = path[i]->name;
		l->path_len[i] = path[i]->name_len;
	}
	l->ptype = path[npath - 1]->type;
	snprintf(l->label, sizeof(l->label), "%.*s%s", (int)(c->name_len > 40 ? 40 : c->name_len),
		 (const char *)c->name,
		 role == 1   ? ".key"
		 : role == 2 ? ".value"
			     : "");
	l->next_rep = -1;
	floe_buf_init(&l->prev, r->alloc, r->opt.max_page);
	floe_buf_init(&l->arena, r->alloc, r->opt.max_page);
	return 0;
}

/* A map column at el[0..4): MAP group, repeated key_value group, key and value strings. */
static int map_column(struct floe_pq_reader *r, const struct elem *el, size_t left, uint64_t off,
		      struct floe_pq_column *col, struct pq_leaf *lv)
{
	int n = (int)(el[0].name_len > 48 ? 48 : el[0].name_len);
	const char *name = (const char *)el[0].name;
	bool is_map =
	    el[0].logical == 2 || (!el[0].logical && (el[0].conv == 1 || el[0].conv == 2));
	if (!is_map || el[0].nchildren != 1 || left < 4 || el[1].nchildren != 2 ||
	    el[1].rep != FLOE_PQ_REPEATED || el[2].nchildren > 0 || el[3].nchildren > 0)
		return pq_fail(r, FLOE_EUNSUPPORTED, off,
			       "column '%.*s': nested columns other than map<string,string> are "
			       "not supported",
			       n, name);
	if (el[0].rep == FLOE_PQ_REPEATED || el[2].rep != FLOE_PQ_REQUIRED ||
	    (el[3].rep != FLOE_PQ_REQUIRED && el[3].rep != FLOE_PQ_OPTIONAL))
		return pq_fail(r, FLOE_EUNSUPPORTED, off,
			       "map column '%.*s': unsupported repetition of the map, its key or "
			       "its value",
			       n, name);
	enum floe_pq_kind k, v;
	int rc;
	if ((rc = leaf_kind(r, &el[2], off, &k)) || (rc = leaf_kind(r, &el[3], off, &v)))
		return rc;
	if (k != FLOE_PQ_STRING || v != FLOE_PQ_STRING)
		return pq_fail(r, FLOE_EUNSUPPORTED, off,
			       "map column '%.*s': only string keys and values are supported", n,
			       name);
	int opt = el[0].rep == FLOE_PQ_OPTIONAL;
	col->kind = FLOE_PQ_MAP_STRING;
	col->optional = opt;
	col->key_field_id = el[2].field_id;
	col->value_field_id = el[3].field_id;
	const struct elem *kp[3] = {&el[0], &el[1], &el[2]}, *vp[3] = {&el[0], &el[1], &el[3]};
	set_leaf(r, &lv[0], kp, 3, 1);
	set_leaf(r, &lv[1], vp, 3, 2);
	lv[0].max_rep = lv[1].max_rep = 1;
	lv[0].max_def = opt + 1;
	lv[1].max_def = opt + 1 + (el[3].rep == FLOE_PQ_OPTIONAL);
	return 0;
}

/* Builds the columns and leaves from the n schema elements. */
static int build_schema(struct floe_pq_reader *r, const struct elem *el, size_t n, uint64_t off)
{
	if (n < 2 || el[0].nchildren < 1 || el[0].nchildren > MAX_COLS)
		return pq_fail(r, n < 2 ? FLOE_EFORMAT : FLOE_EUNSUPPORTED, off,
			       "the schema has no columns or more than %d", MAX_COLS);
	/* Room for the leaves if every group is a map (checked column by column below). */
	size_t ncols = (size_t)el[0].nchildren, nleaves = 0;
	for (size_t i = 1, c = 0; c < ncols; c++) {
		if (i >= n)
			return pq_fail(r, FLOE_EFORMAT, off, "the schema ends inside column %zu", c);
		bool group = el[i].nchildren > 0;
		nleaves += group ? 2 : 1;
		i += group ? 4 : 1;
	}
	r->cols = floe_calloc(r->alloc, ncols, sizeof(*r->cols));
	r->col_leaf = floe_calloc(r->alloc, ncols, sizeof(*r->col_leaf));
	r->leaves = floe_calloc(r->alloc, nleaves, sizeof(*r->leaves));
	if (!r->cols || !r->col_leaf || !r->leaves)
		return FLOE_ENOMEM;
	r->ncols = ncols;
	r->nleaves = nleaves; /* zeroed: free takes them as they are until set */
	size_t i = 1, k = 0;
	for (size_t c = 0; c < ncols; c++) {
		const struct elem *e = &el[i];
		struct floe_pq_column *col = &r->cols[c];
		r->col_leaf[c] = k;
		col->field_id = e->field_id;
		if (!(col->name = floe_strndup(r->alloc, (const char *)e->name, e->name_len)))
			return FLOE_ENOMEM;
		int rc;
		if (e->nchildren > 0) {
			if ((rc = map_column(r, e, n - i, off, col, &r->leaves[k])))
				return rc;
			r->leaves[k].col = r->leaves[k + 1].col = c;
			k += 2;
			i += 4;
			continue;
		}
		if (e->rep != FLOE_PQ_REQUIRED && e->rep != FLOE_PQ_OPTIONAL)
			return pq_fail(r, FLOE_EUNSUPPORTED, off,
				       "column '%s': repeated columns are not supported",
				       col->name);
		if ((rc = leaf_kind(r, e, off, &col->kind)))
			return rc;
		col->optional = e->rep == FLOE_PQ_OPTIONAL;
		struct pq_leaf *l = &r->leaves[k];
		const struct elem *p[1] = {e};
		set_leaf(r, l, p, 1, 0);
		l->col = c;
		l->max_def = col->optional;
		k++;
		i++;
	}
	r->nleaves = k;
	if (i != n)
		return pq_fail(r, FLOE_EFORMAT, off, "the schema has %zu elements past its columns",
			       n - i);
	return 0;
}

/* FileMetaData.schema: the list, read into a temporary array and mapped. */
static int parse_schema(struct floe_pq_reader *r, struct floe_thrift_rd *t, int type)
{
	int et;
	size_t n;
	uint64_t off = at(r, t);
	if (r->cols)
		return pq_fail(r, FLOE_EFORMAT, off, "the footer has two schemas");
	floe_thrift_rd_list(t, type, &et, &n);
	if (t->err)
		return thrift_fail(r, t);
	if (n > MAX_ELEMS)
		return pq_fail(r, FLOE_EUNSUPPORTED, off,
			       "the schema has %zu elements, more than %d", n, MAX_ELEMS);
	struct elem *el = floe_calloc(r->alloc, n ? n : 1, sizeof(*el));
	if (!el)
		return FLOE_ENOMEM;
	for (size_t i = 0; i < n && !t->err; i++)
		parse_elem(t, et, &el[i]);
	int rc = t->err ? thrift_fail(r, t) : build_schema(r, el, n, off);
	floe_free(r->alloc, el);
	return rc;
}

static char *dup_bytes(struct floe_pq_reader *r, const uint8_t *p, size_t n)
{
	return floe_strndup(r->alloc, p ? (const char *)p : "", p ? n : 0);
}

/* FileMetaData.key_value_metadata: KeyValue {1: key, 2: value}. */
static int parse_kv(struct floe_pq_reader *r, struct floe_thrift_rd *t, int type)
{
	int et, ft;
	int16_t id;
	size_t n;
	floe_thrift_rd_list(t, type, &et, &n);
	if (t->err || r->kv)
		return t->err ? thrift_fail(r, t)
			      : pq_fail(r, FLOE_EFORMAT, at(r, t), "two key/value lists");
	if (!(r->kv = floe_calloc(r->alloc, n ? n : 1, sizeof(*r->kv))))
		return FLOE_ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const uint8_t *k = NULL, *v = NULL;
		size_t kn = 0, vn = 0;
		bool has_v = false;
		floe_thrift_rd_struct(t, et);
		while (floe_thrift_rd_field(t, &id, &ft)) {
			if (id == 1) {
				floe_thrift_rd_binary(t, ft, &k, &kn);
			} else if (id == 2) {
				floe_thrift_rd_binary(t, ft, &v, &vn);
				has_v = true;
			} else {
				floe_thrift_rd_skip(t, ft, false);
			}
		}
		if (t->err)
			return thrift_fail(r, t);
		struct floe_pq_kv *e = &r->kv[r->nkv++];
		if (!(e->key = dup_bytes(r, k, kn)) || (has_v && !(e->value = dup_bytes(r, v, vn))))
			return FLOE_ENOMEM;
	}
	return 0;
}

static const char *const codec_names[] = {"UNCOMPRESSED", "SNAPPY", "GZIP", "LZO",
					  "BROTLI",	  "LZ4",    "ZSTD", "LZ4_RAW"};

const char *pq_codec_name(int codec)
{
	return codec >= 0 && codec < 8 ? codec_names[codec] : "unknown";
}

static bool path_matches(const struct pq_leaf *l, const uint8_t *const *p, const size_t *n, int np)
{
	if (np != l->npath)
		return false;
	for (int i = 0; i < np; i++) {
		if (n[i] != l->path_len[i] || (n[i] && memcmp(p[i], l->path[i], n[i])))
			return false;
	}
	return true;
}

/* ColumnMetaData of leaf l into ch; offsets are checked by check_chunk. */
static int parse_meta(struct floe_pq_reader *r, struct floe_thrift_rd *t, int type,
		      const struct pq_leaf *l, struct pq_chunk *ch)
{
	int16_t id;
	int ft, et;
	int64_t data_off = -1, dict_off = -1, comp = -1;
	int ptype = -1;
	bool path_ok = false;
	size_t n;
	ch->codec = -1;
	ch->num_values = -1;
	floe_thrift_rd_struct(t, type);
	while (floe_thrift_rd_field(t, &id, &ft)) {
		switch (id) {
		case 1:
			ptype = floe_thrift_rd_i32(t, ft);
			break;
		case 3: {
			const uint8_t *p[3] = {NULL, NULL, NULL};
			size_t pn[3] = {0, 0, 0};
			floe_thrift_rd_list(t, ft, &et, &n);
			for (size_t i = 0; i < n && !t->err; i++) {
				const uint8_t *s;
				size_t sn;
				floe_thrift_rd_binary(t, et, &s, &sn);
				if (i < 3) {
					p[i] = s;
					pn[i] = sn;
				}
			}
			path_ok = n <= 3 && path_matches(l, p, pn, (int)n);
			break;
		}
		case 4:
			ch->codec = floe_thrift_rd_i32(t, ft);
			break;
		case 5:
			ch->num_values = floe_thrift_rd_i64(t, ft);
			break;
		case 7:
			comp = floe_thrift_rd_i64(t, ft);
			break;
		case 9:
			data_off = floe_thrift_rd_i64(t, ft);
			break;
		case 11:
			dict_off = floe_thrift_rd_i64(t, ft);
			break;
		default:
			floe_thrift_rd_skip(t, ft, false);
			break;
		}
	}
	if (t->err)
		return thrift_fail(r, t);
	uint64_t off = at(r, t);
	if (ptype != l->ptype || !path_ok || ch->num_values < 0 || comp < 0 || data_off < 0)
		return pq_fail(r, FLOE_EFORMAT, off,
			       "column chunk of '%s' does not match the schema or lacks a field",
			       l->label);
	if (ch->codec != FLOE_PQ_UNCOMPRESSED && ch->codec != FLOE_PQ_ZSTD &&
	    ch->codec != FLOE_PQ_LZ4_RAW)
		return pq_fail(r, FLOE_EUNSUPPORTED, off,
			       "codec %s (%d) of column '%s' is not supported (floe reads "
			       "UNCOMPRESSED, ZSTD and LZ4_RAW)",
			       pq_codec_name(ch->codec), ch->codec, l->label);
	/* Some writers put 0 for "no dictionary"; a dictionary comes before the data. */
	ch->start = (uint64_t)data_off;
	if (dict_off >= 4 && dict_off < data_off)
		ch->start = (uint64_t)dict_off;
	ch->len = (uint64_t)comp;
	uint64_t end;
	if (ch->start < 4 || __builtin_add_overflow(ch->start, ch->len, &end) ||
	    end > r->footer_off)
		return pq_fail(r, FLOE_ECORRUPT, off,
			       "column chunk of '%s' at offset %llu (%llu bytes) lies outside the "
			       "file's data",
			       l->label, (unsigned long long)ch->start,
			       (unsigned long long)ch->len);
	return 0;
}

/* ColumnChunk */
static int parse_chunk(struct floe_pq_reader *r, struct floe_thrift_rd *t, int type,
		       const struct pq_leaf *l, struct pq_chunk *ch)
{
	int16_t id;
	int ft, rc;
	bool meta = false;
	floe_thrift_rd_struct(t, type);
	while (floe_thrift_rd_field(t, &id, &ft)) {
		if (id == 1 || id == 8 || id == 9)
			return pq_fail(r, FLOE_EUNSUPPORTED, at(r, t),
				       "column chunk of '%s': %s are not supported", l->label,
				       id == 1 ? "chunks in other files" : "encrypted columns");
		if (id == 3 && !meta) {
			if ((rc = parse_meta(r, t, ft, l, ch)))
				return rc;
			meta = true;
		} else {
			floe_thrift_rd_skip(t, ft, false);
		}
	}
	if (t->err)
		return thrift_fail(r, t);
	if (!meta)
		return pq_fail(r, FLOE_EFORMAT, at(r, t), "column chunk of '%s' has no metadata",
			       l->label);
	return 0;
}

/* RowGroup g at the decoder's position: its rows, and, for leaves active (or all when
 * all), their chunks into the leaves. */
static int parse_row_group(struct floe_pq_reader *r, struct floe_thrift_rd *t, int type, size_t g,
			   bool all)
{
	int16_t id;
	int ft, et, rc;
	size_t n;
	bool cols = false;
	int64_t rows = -1;
	floe_thrift_rd_struct(t, type);
	while (floe_thrift_rd_field(t, &id, &ft)) {
		if (id == 3) {
			rows = floe_thrift_rd_i64(t, ft);
		} else if (id == 1 && !cols) {
			floe_thrift_rd_list(t, ft, &et, &n);
			if (!t->err && n != r->nleaves)
				return pq_fail(r, FLOE_EFORMAT, at(r, t),
					       "row group %zu has %zu column chunks for %zu leaves",
					       g, n, r->nleaves);
			for (size_t j = 0; j < n && !t->err; j++) {
				struct pq_leaf *l = &r->leaves[j];
				struct pq_chunk ch;
				if ((rc = parse_chunk(r, t, et, l, &ch)))
					return rc;
				if (all || l->active)
					l->ch = ch;
			}
			cols = true;
		} else {
			floe_thrift_rd_skip(t, ft, false);
		}
	}
	if (t->err)
		return thrift_fail(r, t);
	if (!cols || rows < 0)
		return pq_fail(r, FLOE_EFORMAT, at(r, t), "row group %zu lacks its %s", g,
			       cols ? "row count" : "columns");
	r->rg_rows[g] = rows;
	return 0;
}

/* FileMetaData.row_groups, after the schema: each is checked and its place kept. */
static int parse_row_groups(struct floe_pq_reader *r, size_t list_at, int et, size_t n)
{
	struct floe_thrift_rd t;
	floe_thrift_rd_init(&t, r->footer, r->footer_len);
	t.pos = list_at;
	r->rg_at = floe_calloc(r->alloc, n ? n : 1, sizeof(*r->rg_at));
	r->rg_rows = floe_calloc(r->alloc, n ? n : 1, sizeof(*r->rg_rows));
	if (!r->rg_at || !r->rg_rows)
		return FLOE_ENOMEM;
	uint64_t total = 0;
	for (size_t g = 0; g < n; g++) {
		r->rg_at[g] = t.pos;
		int rc = parse_row_group(r, &t, et, g, true);
		if (rc)
			return rc;
		if (__builtin_add_overflow(total, (uint64_t)r->rg_rows[g], &total))
			return pq_fail(r, FLOE_ECORRUPT, at(r, &t), "row counts overflow");
	}
	r->nrgs = n;
	if (total != r->num_rows)
		return pq_fail(r, FLOE_ECORRUPT, r->footer_off,
			       "the row groups hold %llu rows, the footer says %llu",
			       (unsigned long long)total, (unsigned long long)r->num_rows);
	return 0;
}

/* FileMetaData */
static int parse_file_meta(struct floe_pq_reader *r)
{
	struct floe_thrift_rd t;
	int16_t id;
	int ft, rc = 0, rg_et = 0;
	size_t rg_at = 0, nrg = 0;
	bool rows = false, rgs = false;
	const uint8_t *cb = NULL;
	size_t cbn = 0;
	floe_thrift_rd_init(&t, r->footer, r->footer_len);
	while (!rc && floe_thrift_rd_field(&t, &id, &ft)) {
		if (id == 2) {
			rc = parse_schema(r, &t, ft);
		} else if (id == 3) {
			int64_t n = floe_thrift_rd_i64(&t, ft);
			r->num_rows = n < 0 ? 0 : (uint64_t)n;
			rows = n >= 0;
		} else if (id == 4 && !rgs) {
			/* Read once the schema is known, wherever it is. */
			floe_thrift_rd_list(&t, ft, &rg_et, &nrg);
			rg_at = t.pos;
			for (size_t g = 0; g < nrg && !t.err; g++)
				floe_thrift_rd_skip(&t, rg_et, true);
			rgs = true;
		} else if (id == 5) {
			rc = parse_kv(r, &t, ft);
		} else if (id == 6) {
			floe_thrift_rd_binary(&t, ft, &cb, &cbn);
		} else if (id == 8) {
			rc = pq_fail(r, FLOE_EUNSUPPORTED, at(r, &t),
				     "encrypted files are not supported");
		} else {
			floe_thrift_rd_skip(&t, ft, false);
		}
	}
	if (rc)
		return rc;
	if (t.err)
		return thrift_fail(r, &t);
	if (!r->cols || !rows || !rgs)
		return pq_fail(r, FLOE_EFORMAT, r->footer_off, "the footer lacks its %s",
			       !r->cols ? "schema"
			       : !rows	? "row count"
					: "row groups");
	if (!(r->created_by = dup_bytes(r, cb, cbn)))
		return FLOE_ENOMEM;
	if (!r->kv && !(r->kv = floe_calloc(r->alloc, 1, sizeof(*r->kv))))
		return FLOE_ENOMEM;
	return parse_row_groups(r, rg_at, rg_et, nrg);
}

int pq_footer_load(struct floe_pq_reader *r)
{
	uint64_t size = r->src.size;
	uint8_t tail[8], head[4];
	int rc;
	if (size < 12)
		return pq_fail(r, FLOE_EFORMAT, 0, "%llu bytes are too few for a Parquet file",
			       (unsigned long long)size);
	if ((rc = pq_read(r, size - 8, tail, 8)) || (rc = pq_read(r, 0, head, 4)))
		return rc;
	if (memcmp(tail + 4, "PARE", 4) == 0)
		return pq_fail(r, FLOE_EUNSUPPORTED, size - 4, "encrypted files are not supported");
	if (memcmp(tail + 4, "PAR1", 4) || memcmp(head, "PAR1", 4))
		return pq_fail(r, FLOE_EFORMAT, memcmp(head, "PAR1", 4) ? 0 : size - 4,
			       "not a Parquet file (no PAR1 magic at its %s)",
			       memcmp(head, "PAR1", 4) ? "start" : "end");
	uint32_t len = (uint32_t)tail[0] | (uint32_t)tail[1] << 8 | (uint32_t)tail[2] << 16 |
		       (uint32_t)tail[3] << 24;
	if (len == 0 || len > size - 12)
		return pq_fail(r, FLOE_ECORRUPT, size - 8, "footer length %u does not fit the file",
			       len);
	if (len > r->opt.max_footer)
		return pq_fail(r, FLOE_ELIMIT, size - 8, "footer of %u bytes exceeds the limit %zu",
			       len, r->opt.max_footer);
	r->footer_len = len;
	r->footer_off = size - 8 - len;
	if (!(r->footer = floe_malloc(r->alloc, len)))
		return FLOE_ENOMEM;
	if ((rc = pq_read(r, r->footer_off, r->footer, len)))
		return rc;
	return parse_file_meta(r);
}

int pq_footer_row_group(struct floe_pq_reader *r, size_t g)
{
	struct floe_thrift_rd t;
	floe_thrift_rd_init(&t, r->footer, r->footer_len);
	t.pos = r->rg_at[g];
	return parse_row_group(r, &t, FLOE_THRIFT_STRUCT, g, false);
}

/* Streaming Parquet writer: maps the floe column kinds onto Parquet leaves (a map column
 * is two leaves, key and value, under a MAP group), routes each row's values and levels
 * to the leaves' chunks, writes a row group when enough is buffered and finally the
 * footer (FileMetaData in Thrift compact form). */
#include "writer.h"

#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"
#include "formats/parquet/bound.h"
#include "formats/parquet/chunk.h"
#include "formats/parquet/compress.h"
#include "formats/parquet/footer.h"
#include "formats/parquet/utf8.h"

#include <string.h>

#define FOOTER_MAX ((size_t)256 << 20)

/* parquet.thrift enums */

struct leaf {
	struct floe_pq_chunk *chunk;
	int ptype, max_def, max_rep;
	int col; /* owning column */
	int npath;
	const char *path[3]; /* borrowed from the column or static */
	int32_t field_id;
	/* Whole-file statistics. */
	struct floe_pq_leaf_stats st;
	bool has_minmax;
	int64_t imin, imax;
	struct floe_pq_bound lo, hi;
	uint8_t minb[8], maxb[8];
};

struct floe_pq_writer {
	struct floe_alloc *alloc;
	struct floe_pq_column *cols;
	size_t ncols;
	struct leaf *leaves;
	struct floe_pq_leaf_desc *descs; /* the leaves as the footer names them */
	size_t nleaves;
	struct floe_pq_options opt;
	char *created_by;
	struct floe_pq_kv *kv;
	floe_pq_sink_fn sink;
	void *sink_ctx;
	struct floe_pq_compressor *comp;
	struct floe_buf scratch; /* repaired UTF-8 */
	struct floe_buf body;	 /* page bodies, shared by the chunks */
	int err;		 /* sticky: after a failure the writer only reports it */
	bool started, finished;
	uint64_t rows, rg_rows, written, replaced;
	struct floe_pq_chunk_rec *chunks; /* nleaves per row group */
	struct floe_pq_rg_rec *rgs;
	int64_t *rg_offsets;
	size_t nrgs, rg_cap;
	struct floe_pq_leaf_stats *stats;
};

static int emit(struct floe_pq_writer *w, const void *p, size_t n)
{
	if (n == 0)
		return 0;
	int rc = w->sink(w->sink_ctx, p, n);
	if (rc)
		return rc < 0 ? rc : FLOE_EINVAL;
	w->written += n;
	return 0;
}

static void free_strings(struct floe_pq_writer *w)
{
	if (w->cols) {
		for (size_t i = 0; i < w->ncols; i++)
			floe_free(w->alloc, (char *)w->cols[i].name);
	}
	if (w->kv) {
		for (size_t i = 0; i < w->opt.kv_count; i++) {
			floe_free(w->alloc, (char *)w->kv[i].key);
			floe_free(w->alloc, (char *)w->kv[i].value);
		}
	}
}

void floe_pq_writer_free(struct floe_pq_writer *w)
{
	if (!w)
		return;
	free_strings(w);
	floe_free(w->alloc, w->cols);
	floe_free(w->alloc, w->kv);
	floe_free(w->alloc, w->created_by);
	if (w->leaves) {
		for (size_t i = 0; i < w->nleaves; i++)
			floe_pq_chunk_free(w->leaves[i].chunk);
	}
	floe_free(w->alloc, w->leaves);
	floe_free(w->alloc, w->descs);
	floe_pq_compressor_free(w->comp);
	floe_buf_fini(&w->scratch);
	floe_buf_fini(&w->body);
	floe_free(w->alloc, w->chunks);
	floe_free(w->alloc, w->rgs);
	floe_free(w->alloc, w->rg_offsets);
	floe_free(w->alloc, w->stats);
	floe_free(w->alloc, w);
}

static int check_args(const struct floe_pq_column *cols, size_t ncols,
		      const struct floe_pq_options *opt, floe_pq_sink_fn sink)
{
	if (!cols || ncols == 0 || ncols > 4096 || !opt || !sink)
		return FLOE_EINVAL;
	if (opt->codec != FLOE_PQ_UNCOMPRESSED && opt->codec != FLOE_PQ_ZSTD &&
	    opt->codec != FLOE_PQ_LZ4_RAW)
		return FLOE_EUNSUPPORTED;
	if (opt->kv_count && !opt->kv)
		return FLOE_EINVAL;
	for (size_t i = 0; i < opt->kv_count; i++) {
		if (!opt->kv[i].key)
			return FLOE_EINVAL;
	}
	for (size_t i = 0; i < ncols; i++) {
		if (!cols[i].name || cols[i].kind < FLOE_PQ_INT32 ||
		    cols[i].kind > FLOE_PQ_MAP_STRING)
			return FLOE_EINVAL;
	}
	return 0;
}

static int copy_config(struct floe_pq_writer *w, const struct floe_pq_column *cols, size_t ncols,
		       const struct floe_pq_options *opt)
{
	w->cols = floe_calloc(w->alloc, ncols, sizeof(*w->cols));
	if (!w->cols)
		return FLOE_ENOMEM;
	w->ncols = ncols;
	for (size_t i = 0; i < ncols; i++) {
		w->cols[i] = cols[i];
		w->cols[i].name = NULL;
		if (!(w->cols[i].name = floe_strdup(w->alloc, cols[i].name)))
			return FLOE_ENOMEM;
	}
	w->opt = *opt;
	w->opt.kv = NULL;
	w->opt.created_by = NULL;
	if (opt->kv_count) {
		w->kv = floe_calloc(w->alloc, opt->kv_count, sizeof(*w->kv));
		if (!w->kv)
			return FLOE_ENOMEM;
		for (size_t i = 0; i < opt->kv_count; i++) {
			if (!(w->kv[i].key = floe_strdup(w->alloc, opt->kv[i].key)))
				return FLOE_ENOMEM;
			if (opt->kv[i].value &&
			    !(w->kv[i].value = floe_strdup(w->alloc, opt->kv[i].value)))
				return FLOE_ENOMEM;
		}
	}
	w->created_by =
	    floe_strdup(w->alloc, opt->created_by ? opt->created_by : "floe version " FLOE_VERSION);
	if (!w->created_by)
		return FLOE_ENOMEM;
	if (!w->opt.page_size)
		w->opt.page_size = (size_t)1 << 20;
	if (!w->opt.row_group_size)
		w->opt.row_group_size = (size_t)64 << 20;
	if (!w->opt.dictionary_cap)
		w->opt.dictionary_cap = (size_t)1 << 20;
	if (!w->opt.zstd_level)
		w->opt.zstd_level = 3;
	return 0;
}

static int make_leaves(struct floe_pq_writer *w)
{
	size_t n = 0;
	for (size_t i = 0; i < w->ncols; i++)
		n += w->cols[i].kind == FLOE_PQ_MAP_STRING ? 2 : 1;
	w->leaves = floe_calloc(w->alloc, n, sizeof(*w->leaves));
	w->descs = floe_calloc(w->alloc, n, sizeof(*w->descs));
	if (!w->leaves || !w->descs)
		return FLOE_ENOMEM;
	w->nleaves = n;
	size_t k = 0;
	for (size_t i = 0; i < w->ncols; i++) {
		const struct floe_pq_column *c = &w->cols[i];
		int opt = c->optional ? 1 : 0;
		struct leaf *l = &w->leaves[k];
		l->col = (int)i;
		l->path[0] = c->name;
		if (c->kind == FLOE_PQ_MAP_STRING) {
			/* key: the map's own level (if optional) + the repeated key_value level. */
			struct leaf *v = &w->leaves[k + 1];
			v->col = (int)i;
			l->npath = v->npath = 3;
			v->path[0] = c->name;
			l->path[1] = v->path[1] = "key_value";
			l->path[2] = "key";
			v->path[2] = "value";
			l->ptype = v->ptype = FLOE_PQ_T_BYTE_ARRAY;
			l->max_rep = v->max_rep = 1;
			l->max_def = opt + 1;
			v->max_def = opt + 2;
			l->field_id = c->key_field_id;
			v->field_id = c->value_field_id;
			k += 2;
		} else {
			l->npath = 1;
			l->ptype = c->kind == FLOE_PQ_INT32    ? FLOE_PQ_T_INT32
				   : c->kind == FLOE_PQ_STRING ? FLOE_PQ_T_BYTE_ARRAY
							       : FLOE_PQ_T_INT64;
			l->max_def = opt;
			l->field_id = c->field_id;
			k++;
		}
	}
	for (size_t j = 0; j < n; j++) {
		struct leaf *l = &w->leaves[j];
		struct floe_pq_chunk_opts co = {
		    .ptype = l->ptype,
		    .max_def = l->max_def,
		    .max_rep = l->max_rep,
		    .page_size = w->opt.page_size,
		    .dict_cap = w->opt.dictionary_cap,
		};
		int err = 0;
		if (!(l->chunk = floe_pq_chunk_new(w->alloc, &co, w->comp, &w->body, &err)))
			return err;
		l->st.field_id = l->field_id;
		w->descs[j].ptype = l->ptype;
		w->descs[j].npath = l->npath;
		memcpy(w->descs[j].path, l->path, sizeof(l->path));
		floe_pq_bound_clear(&l->lo);
		floe_pq_bound_clear(&l->hi);
	}
	return 0;
}

struct floe_pq_writer *floe_pq_writer_new(struct floe_alloc *alloc,
					  const struct floe_pq_column *cols, size_t ncols,
					  const struct floe_pq_options *opt, floe_pq_sink_fn sink,
					  void *sink_ctx, int *err)
{
	int rc = check_args(cols, ncols, opt, sink);
	if (rc) {
		*err = rc;
		return NULL;
	}
	struct floe_pq_writer *w = floe_calloc(alloc, 1, sizeof(*w));
	if (!w) {
		*err = FLOE_ENOMEM;
		return NULL;
	}
	w->alloc = alloc;
	w->sink = sink;
	w->sink_ctx = sink_ctx;
	floe_buf_init(&w->scratch, alloc, (size_t)INT32_MAX);
	floe_buf_init(&w->body, alloc, (size_t)INT32_MAX);
	if ((rc = copy_config(w, cols, ncols, opt)))
		goto fail;
	if (!(w->comp = floe_pq_compressor_new(alloc, w->opt.codec, w->opt.zstd_level, &rc)))
		goto fail;
	if ((rc = make_leaves(w)))
		goto fail;
	return w;
fail:
	floe_pq_writer_free(w);
	*err = rc;
	return NULL;
}

/* Checks a row before any of it is written, so that bad input never leaves a half row. */
static int check_row(const struct floe_pq_writer *w, const struct floe_pq_value *vals)
{
	if (!vals)
		return FLOE_EINVAL;
	for (size_t i = 0; i < w->ncols; i++) {
		const struct floe_pq_column *c = &w->cols[i];
		const struct floe_pq_value *v = &vals[i];
		if (v->is_null) {
			if (!c->optional)
				return FLOE_EINVAL;
			continue;
		}
		switch (c->kind) {
		case FLOE_PQ_INT32:
			if (v->i < INT32_MIN || v->i > INT32_MAX)
				return FLOE_EINVAL;
			break;
		case FLOE_PQ_STRING:
			if (!v->s && v->len)
				return FLOE_EINVAL;
			break;
		case FLOE_PQ_MAP_STRING:
			if (v->n && (!v->keys || !v->key_lens || (v->vals && !v->val_lens)))
				return FLOE_EINVAL;
			if (v->n > (size_t)INT32_MAX)
				return FLOE_ELIMIT;
			for (size_t j = 0; j < v->n; j++) {
				if (!v->keys[j] && v->key_lens[j])
					return FLOE_EINVAL;
			}
			break;
		default:
			break;
		}
	}
	return 0;
}

/* Repairs (p, n) if needed and appends it as a value of leaf l. */
static int put_string(struct floe_pq_writer *w, struct leaf *l, int rep, const char *s, size_t n)
{
	const uint8_t *p;
	size_t pn;
	int rc = floe_pq_utf8_repair((const uint8_t *)(s ? s : ""), n, &w->scratch, &p, &pn,
				     &w->replaced);
	if (rc)
		return rc;
	return floe_pq_chunk_put_bytes(l->chunk, rep, p, pn);
}

static int put_map(struct floe_pq_writer *w, struct leaf *k, const struct floe_pq_value *v,
		   int base)
{
	struct leaf *val = k + 1;
	int rc;
	if (v->is_null) {
		if ((rc = floe_pq_chunk_put_null(k->chunk, 0, 0)))
			return rc;
		return floe_pq_chunk_put_null(val->chunk, 0, 0);
	}
	if (v->n == 0) {
		/* An empty map: the map level is defined, the key_value level is not. */
		if ((rc = floe_pq_chunk_put_null(k->chunk, 0, base)))
			return rc;
		return floe_pq_chunk_put_null(val->chunk, 0, base);
	}
	for (size_t j = 0; j < v->n; j++) {
		int rep = j > 0;
		if ((rc = put_string(w, k, rep, v->keys[j], v->key_lens[j])))
			return rc;
		if (v->vals && v->vals[j])
			rc = put_string(w, val, rep, v->vals[j], v->val_lens[j]);
		else
			rc = floe_pq_chunk_put_null(val->chunk, rep, base + 1);
		if (rc)
			return rc;
	}
	return 0;
}

static int flush_row_group(struct floe_pq_writer *w);

int floe_pq_writer_add_row(struct floe_pq_writer *w, const struct floe_pq_value *values)
{
	if (w->err)
		return w->err;
	if (w->finished)
		return FLOE_EINVAL;
	int rc = check_row(w, values);
	if (rc)
		return rc;
	size_t k = 0;
	for (size_t i = 0; i < w->ncols && !rc; i++) {
		const struct floe_pq_column *c = &w->cols[i];
		const struct floe_pq_value *v = &values[i];
		struct leaf *l = &w->leaves[k];
		if (c->kind == FLOE_PQ_MAP_STRING) {
			rc = put_map(w, l, v, c->optional ? 1 : 0);
			k += 2;
			continue;
		}
		k++;
		if (v->is_null)
			rc = floe_pq_chunk_put_null(l->chunk, 0, 0);
		else if (c->kind == FLOE_PQ_STRING)
			rc = put_string(w, l, 0, v->s, v->len);
		else
			rc = floe_pq_chunk_put_int(l->chunk, 0, v->i);
	}
	size_t buffered = 0;
	for (size_t j = 0; j < w->nleaves && !rc; j++) {
		size_t b;
		rc = floe_pq_chunk_end_row(w->leaves[j].chunk, &b);
		buffered += b;
	}
	if (rc)
		goto fail;
	w->rows++;
	w->rg_rows++;
	if (buffered >= w->opt.row_group_size && (rc = flush_row_group(w)))
		goto fail;
	return 0;
fail:
	w->err = rc;
	return rc;
}

static int grow_records(struct floe_pq_writer *w)
{
	if (w->nrgs < w->rg_cap)
		return 0;
	size_t ncap = w->rg_cap ? w->rg_cap * 2 : 4;
	if (ncap > 32767) /* RowGroup.ordinal is an i16 */
		return FLOE_ELIMIT;
	size_t per;
	if (__builtin_mul_overflow(ncap, w->nleaves * sizeof(struct floe_pq_chunk_rec), &per))
		return FLOE_ELIMIT;
	struct floe_pq_chunk_rec *c = floe_realloc(w->alloc, w->chunks, per);
	if (!c)
		return FLOE_ENOMEM;
	w->chunks = c;
	struct floe_pq_rg_rec *r = floe_realloc(w->alloc, w->rgs, ncap * sizeof(*r));
	if (!r)
		return FLOE_ENOMEM;
	w->rgs = r;
	int64_t *o = floe_realloc(w->alloc, w->rg_offsets, ncap * sizeof(*o));
	if (!o)
		return FLOE_ENOMEM;
	w->rg_offsets = o;
	w->rg_cap = ncap;
	return 0;
}

static void merge_stats(struct leaf *l, const struct floe_pq_chunk_meta *m)
{
	l->st.compressed_size += (uint64_t)m->comp_size;
	l->st.value_count += (uint64_t)m->num_values;
	l->st.null_count += (uint64_t)m->null_count;
	if (!m->has_minmax)
		return;
	if (l->ptype == FLOE_PQ_T_BYTE_ARRAY) {
		floe_pq_bound_merge_lower(&l->lo, &m->lo);
		floe_pq_bound_merge_upper(&l->hi, &m->hi);
	} else if (!l->has_minmax) {
		l->imin = m->imin;
		l->imax = m->imax;
	} else {
		if (m->imin < l->imin)
			l->imin = m->imin;
		if (m->imax > l->imax)
			l->imax = m->imax;
	}
	l->has_minmax = true;
}

static int flush_row_group(struct floe_pq_writer *w)
{
	int rc;
	if (w->rg_rows == 0)
		return 0;
	if ((rc = grow_records(w)))
		return rc;
	if (!w->started) {
		if ((rc = emit(w, "PAR1", 4)))
			return rc;
		w->started = true;
	}
	struct floe_pq_rg_rec *rg = &w->rgs[w->nrgs];
	struct floe_pq_chunk_rec *recs = &w->chunks[w->nrgs * w->nleaves];
	rg->num_rows = (int64_t)w->rg_rows;
	rg->file_offset = (int64_t)w->written;
	rg->total_byte_size = 0;
	rg->total_comp = 0;
	for (size_t j = 0; j < w->nleaves; j++) {
		struct leaf *l = &w->leaves[j];
		struct floe_pq_chunk_rec *r = &recs[j];
		const struct floe_pq_page *dict, *pages;
		size_t npages;
		if ((rc = floe_pq_chunk_finish(l->chunk, &r->m, &dict, &pages, &npages)))
			return rc;
		r->dict_off = dict->len ? (int64_t)w->written : -1;
		if ((rc = emit(w, dict->data, dict->len)))
			return rc;
		r->data_off = (int64_t)w->written;
		for (size_t i = 0; i < npages; i++) {
			if ((rc = emit(w, pages[i].data, pages[i].len)))
				return rc;
		}
		rg->total_byte_size += r->m.unc_size;
		rg->total_comp += r->m.comp_size;
		merge_stats(l, &r->m);
		floe_pq_chunk_reset(l->chunk);
	}
	w->rg_offsets[w->nrgs] = rg->file_offset;
	w->nrgs++;
	w->rg_rows = 0;
	return 0;
}

static int build_stats(struct floe_pq_writer *w)
{
	w->stats = floe_calloc(w->alloc, w->nleaves, sizeof(*w->stats));
	if (!w->stats)
		return FLOE_ENOMEM;
	for (size_t j = 0; j < w->nleaves; j++) {
		struct leaf *l = &w->leaves[j];
		struct floe_pq_leaf_stats *s = &w->stats[j];
		*s = l->st;
		if (!l->has_minmax)
			continue;
		if (l->ptype == FLOE_PQ_T_BYTE_ARRAY) {
			/* Capped bounds: see bound.h. A cut lower bound is still a lower bound; an
			 * upper bound that cannot be expressed within the cap is left out. */
			s->min = l->lo.v;
			s->min_len = l->lo.len;
			if (!l->hi.unbounded) {
				s->max = l->hi.v;
				s->max_len = l->hi.len;
			}
		} else {
			size_t n = l->ptype == FLOE_PQ_T_INT32 ? 4 : 8;
			floe_pq_le_bytes(l->minb, l->imin, n);
			floe_pq_le_bytes(l->maxb, l->imax, n);
			s->min = l->minb;
			s->max = l->maxb;
			s->min_len = s->max_len = n;
		}
		s->has_min_max = true;
	}
	return 0;
}

int floe_pq_writer_finish(struct floe_pq_writer *w)
{
	if (w->err)
		return w->err;
	if (w->finished)
		return 0;
	struct floe_buf f;
	floe_buf_init(&f, w->alloc, FOOTER_MAX);
	int rc = flush_row_group(w);
	if (rc)
		goto out;
	if (!w->started) {
		if ((rc = emit(w, "PAR1", 4)))
			goto out;
		w->started = true;
	}
	struct floe_pq_footer meta = {
	    .cols = w->cols,
	    .ncols = w->ncols,
	    .leaves = w->descs,
	    .nleaves = w->nleaves,
	    .rgs = w->rgs,
	    .nrgs = w->nrgs,
	    .chunks = w->chunks,
	    .rows = w->rows,
	    .codec = w->opt.codec,
	    .kv = w->kv,
	    .kv_count = w->opt.kv_count,
	    .created_by = w->created_by,
	};
	if ((rc = floe_pq_footer_encode(&f, &meta)))
		goto out;
	if (f.len > UINT32_MAX) {
		rc = FLOE_ELIMIT;
		goto out;
	}
	uint32_t flen = (uint32_t)f.len;
	if ((rc = floe_buf_put_le32(&f, flen)) || (rc = floe_buf_append(&f, "PAR1", 4)))
		goto out;
	if ((rc = build_stats(w)))
		goto out;
	if ((rc = emit(w, f.data, f.len)))
		goto out;
	w->finished = true;
out:
	floe_buf_fini(&f);
	if (rc)
		w->err = rc;
	return rc;
}

uint64_t floe_pq_writer_rows(const struct floe_pq_writer *w)
{
	return w->rows;
}

size_t floe_pq_writer_buffered(const struct floe_pq_writer *w)
{
	size_t n = 0;
	for (size_t j = 0; j < w->nleaves; j++)
		n += floe_pq_chunk_buffered(w->leaves[j].chunk);
	return n;
}

uint64_t floe_pq_writer_written(const struct floe_pq_writer *w)
{
	return w->written;
}

uint64_t floe_pq_writer_replaced(const struct floe_pq_writer *w)
{
	return w->replaced;
}

uint64_t floe_pq_writer_file_size(const struct floe_pq_writer *w)
{
	return w->finished ? w->written : 0;
}

const struct floe_pq_leaf_stats *floe_pq_writer_stats(const struct floe_pq_writer *w, size_t *count)
{
	*count = w->finished ? w->nleaves : 0;
	return w->finished ? w->stats : NULL;
}

const int64_t *floe_pq_writer_row_group_offsets(const struct floe_pq_writer *w, size_t *count)
{
	*count = w->finished ? w->nrgs : 0;
	return w->finished ? w->rg_offsets : NULL;
}

/* Streaming Parquet writer: maps the floe column kinds onto Parquet leaves (a map column
 * is two leaves, key and value, under a MAP group), routes each row's values and levels
 * to the leaves' chunks, writes a row group when enough is buffered (or its pages reach
 * the memory budget), and finally the bloom filters, the page indexes and the footer
 * (FileMetaData in Thrift compact form). Bloom filters and page indexes are kept encoded
 * until then: a few bytes per page, and the filters are as small as their columns'
 * distinct values allow. */
#include "writer.h"

#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"
#include "formats/parquet/bound.h"
#include "formats/parquet/chunk.h"
#include "formats/parquet/compress.h"
#include "formats/parquet/footer.h"
#include "formats/parquet/pageindex.h"
#include "formats/parquet/utf8.h"

#include <stddef.h>
#include <string.h>

#define FOOTER_MAX ((size_t)256 << 20)
/* Bloom filters and page indexes held until the end of the file. */
#define TRAILER_MAX ((size_t)1 << 30)

/* Profile defaults, chosen by measurement with tests/bench/parquet.sh (1,000,000 log
 * rows, ZSTD): 512 KiB pages compress a little better than 1 MiB pages at level 3
 * (47.63 MB against 47.79 MB) and halve the page buffers; 256 KiB pages fall into zstd's
 * small-input parameters and lose 7 % on the message text. The compact profile trades
 * speed for size: level 6 gives 44.5 MB at about two thirds of DuckDB's single-threaded
 * level-3 speed, level 3 46.2 MB at about its speed, level 9 43.7 MB at half of it. */
#define DEFAULT_ZSTD_LEVEL 3
#define COMPACT_ZSTD_LEVEL 6
#define DEFAULT_PAGE_SIZE ((size_t)512 << 10)
#define COMPACT_PAGE_SIZE ((size_t)512 << 10)
#define BLOOM_NDV 100000u
#define BLOOM_MAX ((size_t)1 << 20)

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
	struct floe_pq_bloom_column *bloom;
	struct floe_buf blooms, cis, ois; /* one row group's, until it is written */
	floe_pq_sink_fn sink;
	void *sink_ctx;
	struct floe_pq_compressor *comp;
	struct floe_pq_compressor *acomp; /* large pages, through opt.offload; or NULL */
	struct floe_buf scratch; /* repaired UTF-8 */
	struct floe_buf body;	 /* page bodies, shared by the chunks */
	int err;		 /* sticky: after a failure the writer only reports it */
	bool started, finished;
	uint64_t rows, rg_rows, written, replaced;
	size_t buffered; /* the open row group's uncompressed bytes, as of the last row */
	struct floe_pq_chunk_rec *recs; /* the open row group's chunks, nleaves */
	struct floe_pq_chunk_loc *locs; /* nleaves per row group */
	struct floe_buf heads;		/* encoded ColumnChunk heads, see footer.h */
	struct floe_pq_rg_rec *rgs;
	int64_t *rg_offsets;
	size_t nrgs, rg_cap;
	struct floe_pq_leaf_stats *stats;
	/* The leaf whose pages go straight to the sink in the open row group (-1: none yet),
	 * and where its first page went (-1: nothing written yet). */
	int stream_leaf;
	int64_t stream_off;
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
	floe_free(w->alloc, w->bloom);
	floe_buf_fini(&w->blooms);
	floe_buf_fini(&w->cis);
	floe_buf_fini(&w->ois);
	floe_free(w->alloc, w->created_by);
	/* A page may be compressing elsewhere: wait for it before its chunk goes. */
	if (w->acomp)
		floe_pq_compressor_drop(w->acomp);
	if (w->leaves) {
		for (size_t i = 0; i < w->nleaves; i++)
			floe_pq_chunk_free(w->leaves[i].chunk);
	}
	floe_free(w->alloc, w->leaves);
	floe_free(w->alloc, w->descs);
	floe_pq_compressor_free(w->comp);
	floe_pq_compressor_free(w->acomp);
	floe_buf_fini(&w->scratch);
	floe_buf_fini(&w->body);
	floe_free(w->alloc, w->recs);
	floe_free(w->alloc, w->locs);
	floe_buf_fini(&w->heads);
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
	if ((opt->bloom_count && !opt->bloom) || opt->bloom_count > 4096)
		return FLOE_EINVAL;
	if (opt->offload && (!opt->offload->submit || !opt->offload->wait))
		return FLOE_EINVAL;
	if (opt->profile != FLOE_PQ_PROFILE_DEFAULT && opt->profile != FLOE_PQ_PROFILE_COMPACT)
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
	w->opt.bloom = NULL;
	if (opt->bloom_count) {
		w->bloom = floe_calloc(w->alloc, opt->bloom_count, sizeof(*w->bloom));
		if (!w->bloom)
			return FLOE_ENOMEM;
		memcpy(w->bloom, opt->bloom, opt->bloom_count * sizeof(*w->bloom));
	}
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
	bool compact = w->opt.profile == FLOE_PQ_PROFILE_COMPACT;
	if (!w->opt.page_size)
		w->opt.page_size = compact ? COMPACT_PAGE_SIZE : DEFAULT_PAGE_SIZE;
	if (!w->opt.row_group_size)
		w->opt.row_group_size = (size_t)64 << 20;
	if (!w->opt.dictionary_cap)
		w->opt.dictionary_cap = (size_t)1 << 20;
	if (!w->opt.zstd_level)
		w->opt.zstd_level = compact ? COMPACT_ZSTD_LEVEL : DEFAULT_ZSTD_LEVEL;
	if (!w->opt.bloom_max_bytes)
		w->opt.bloom_max_bytes = BLOOM_MAX;
	return 0;
}

static int make_leaves(struct floe_pq_writer *w)
{
	size_t n = 0;
	for (size_t i = 0; i < w->ncols; i++)
		n += w->cols[i].kind == FLOE_PQ_MAP_STRING ? 2 : 1;
	w->leaves = floe_calloc(w->alloc, n, sizeof(*w->leaves));
	w->descs = floe_calloc(w->alloc, n, sizeof(*w->descs));
	w->recs = floe_calloc(w->alloc, n, sizeof(*w->recs));
	if (!w->leaves || !w->descs || !w->recs)
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
	bool compact = w->opt.profile == FLOE_PQ_PROFILE_COMPACT;
	for (size_t j = 0; j < n; j++) {
		struct leaf *l = &w->leaves[j];
		struct floe_pq_chunk_opts co = {
		    .ptype = l->ptype,
		    .max_def = l->max_def,
		    .max_rep = l->max_rep,
		    .page_size = w->opt.page_size,
		    .dict_cap = w->opt.dictionary_cap,
		    .v2 = compact,
		    .delta = compact,
		    .bloom_max = w->opt.bloom_max_bytes,
		};
		for (size_t b = 0; b < w->opt.bloom_count; b++) {
			if (w->bloom[b].field_id != l->field_id)
				continue;
			co.bloom = true;
			co.bloom_ndv = w->bloom[b].ndv ? w->bloom[b].ndv : BLOOM_NDV;
		}
		int err = 0;
		if (!(l->chunk = floe_pq_chunk_new(w->alloc, &co, w->comp, &w->body, &err)))
			return err;
		if (w->acomp)
			floe_pq_chunk_set_async(l->chunk, w->acomp);
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
	floe_buf_init(&w->blooms, alloc, TRAILER_MAX);
	floe_buf_init(&w->cis, alloc, TRAILER_MAX);
	floe_buf_init(&w->ois, alloc, TRAILER_MAX);
	floe_buf_init(&w->heads, alloc, FOOTER_MAX);
	if ((rc = copy_config(w, cols, ncols, opt)))
		goto fail;
	if (!(w->comp = floe_pq_compressor_new(alloc, w->opt.codec, w->opt.zstd_level, &rc)))
		goto fail;
	/* Large pages compress elsewhere while the next ones are encoded: a second context,
	 * so that the small pages, compressed here, never wait. */
	if (opt->offload && w->opt.codec != FLOE_PQ_UNCOMPRESSED) {
		if (!(w->acomp = floe_pq_compressor_new(alloc, w->opt.codec, w->opt.zstd_level, &rc)))
			goto fail;
		/* Queued input: one large page and two of the small ones closed beside it. */
		floe_pq_compressor_set_offload(w->acomp, opt->offload,
					       w->opt.page_size + w->opt.page_size / 4);
	}
	if ((rc = make_leaves(w)))
		goto fail;
	w->stream_leaf = -1;
	w->stream_off = -1;
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

/* Sink of the streaming leaf's pages. */
static int stream_page(void *ctx, const void *data, size_t len)
{
	struct floe_pq_writer *w = ctx;
	int rc;
	if (!w->started) {
		if ((rc = emit(w, "PAR1", 4)))
			return rc;
		w->started = true;
	}
	if (w->stream_off < 0)
		w->stream_off = (int64_t)w->written;
	return emit(w, data, len);
}

/* Pages are held until their row group is written because a column chunk must be
 * contiguous. The exception, which keeps memory from growing with the row group: the
 * leaf holding the most (the message text, typically) writes its pages as they are
 * made, and its chunk comes first in the row group. It is chosen once it holds
 * STREAM_MIN bytes. */
#define STREAM_MIN ((size_t)64 << 10)

static int pick_stream_leaf(struct floe_pq_writer *w)
{
	size_t best = 0;
	int pick = -1;
	for (size_t j = 0; j < w->nleaves; j++) {
		size_t h = floe_pq_chunk_held(w->leaves[j].chunk);
		if (h > best) {
			best = h;
			pick = (int)j;
		}
	}
	if (pick < 0)
		return 0;
	w->stream_leaf = pick;
	return floe_pq_chunk_set_stream(w->leaves[pick].chunk, stream_page, w);
}

/* The uncompressed bytes the row group holds so far, and the bytes of finished pages. */
static void sum_chunks(const struct floe_pq_writer *w, size_t *buffered, size_t *held)
{
	*buffered = *held = 0;
	for (size_t j = 0; j < w->nleaves; j++) {
		*buffered += floe_pq_chunk_buffered(w->leaves[j].chunk);
		*held += floe_pq_chunk_held(w->leaves[j].chunk);
	}
}

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
	size_t buffered = 0, held = 0, fly_held = 0, fly_buf = 0;
	unsigned long done0 = w->acomp ? floe_pq_compressor_completed(w->acomp) : 0;
	for (size_t j = 0; j < w->nleaves && !rc; j++) {
		size_t b, h;
		rc = floe_pq_chunk_end_row(w->leaves[j].chunk, &b, &h);
		buffered += b;
		held += h;
	}
	/* Pages the other thread has finished are completed here, then the ones still
	 * queued or in flight are counted. A page completed during the sums above (by a
	 * hand-over that had to wait) or here moved between them: sum again. */
	if (!rc && w->acomp && floe_pq_compressor_busy(w->acomp))
		rc = floe_pq_compressor_pump(w->acomp);
	if (!rc && w->acomp && floe_pq_compressor_completed(w->acomp) != done0) {
		sum_chunks(w, &buffered, &held);
	}
	for (size_t j = 0; !rc && w->acomp && floe_pq_compressor_busy(w->acomp) && j < w->nleaves;
	     j++) {
		size_t fh, fb;
		floe_pq_chunk_in_flight(w->leaves[j].chunk, &fh, &fb);
		fly_held += fh;
		fly_buf += fb;
	}
	if (rc)
		goto fail;
	w->rows++;
	w->rg_rows++;
	/* With a small budget, stream before the budget closes the row group. */
	size_t stream_min = STREAM_MIN;
	if (w->opt.memory_budget && w->opt.memory_budget / 2 < stream_min)
		stream_min = w->opt.memory_budget / 2;
	/* A page in flight adds to these sums once done. When it could tip a decision,
	 * complete it first: the decisions, and so the file, are then exactly those of an
	 * inline writer. That happens about once a row group. */
	if (fly_buf && ((w->stream_leaf < 0 && held + fly_held >= stream_min) ||
			(w->opt.memory_budget && held + fly_held >= w->opt.memory_budget) ||
			buffered + fly_buf >= w->opt.row_group_size)) {
		if ((rc = floe_pq_compressor_sync(w->acomp)))
			goto fail;
		sum_chunks(w, &buffered, &held);
	}
	if (w->stream_leaf < 0 && held >= stream_min) {
		if ((rc = pick_stream_leaf(w)))
			goto fail;
		held = 0;
		for (size_t j = 0; j < w->nleaves; j++)
			held += floe_pq_chunk_held(w->leaves[j].chunk);
	}
	w->buffered = buffered;
	bool full = buffered >= w->opt.row_group_size ||
		    (w->opt.memory_budget && held >= w->opt.memory_budget);
	if (full && (rc = flush_row_group(w)))
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
	/* A quarter more each time: these records are most of what grows with the file. */
	size_t ncap = w->rg_cap + w->rg_cap / 4 + 4;
	if (ncap > 32767) /* RowGroup.ordinal is an i16 */
		ncap = 32767;
	if (ncap <= w->nrgs)
		return FLOE_ELIMIT;
	size_t per;
	if (__builtin_mul_overflow(ncap, w->nleaves * sizeof(struct floe_pq_chunk_loc), &per))
		return FLOE_ELIMIT;
	struct floe_pq_chunk_loc *c = floe_realloc(w->alloc, w->locs, per);
	if (!c)
		return FLOE_ENOMEM;
	w->locs = c;
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

/* Encodes the chunk's bloom filter and page index into the row group's buffers; r
 * gets their offsets relative to each buffer (made absolute by emit_extras). */
static int record_extras(struct floe_pq_writer *w, struct leaf *l, struct floe_pq_chunk_loc *r,
			 int64_t data_off, const struct floe_pq_page *pages, size_t npages)
{
	int rc;
	r->bloom_off = r->ci_off = r->oi_off = -1;
	r->bloom_len = r->ci_len = r->oi_len = 0;
	const struct floe_pq_bloom *bf = floe_pq_chunk_bloom(l->chunk);
	if (bf) {
		size_t at = w->blooms.len;
		if ((rc = floe_pq_bloom_write(bf, &w->blooms)))
			return rc;
		r->bloom_off = (int64_t)at;
		r->bloom_len = (int32_t)(w->blooms.len - at);
	}
	if (w->opt.no_page_index || npages == 0)
		return 0;
	size_t at = w->cis.len;
	bool written;
	if ((rc = floe_pq_column_index_encode(&w->cis, l->ptype, pages, npages, &written)))
		return rc;
	if (written) {
		r->ci_off = (int64_t)at;
		r->ci_len = (int32_t)(w->cis.len - at);
	}
	at = w->ois.len;
	if ((rc = floe_pq_offset_index_encode(&w->ois, pages, npages, data_off)))
		return rc;
	r->oi_off = (int64_t)at;
	r->oi_len = (int32_t)(w->ois.len - at);
	return 0;
}

/* Writes one row group's buffer of one kind (bloom filters, column or offset indexes)
 * and turns its chunks' offsets of that kind, relative to the buffer, into file offsets.
 * The buffer keeps its capacity for the next row group. */
static int emit_extras(struct floe_pq_writer *w, struct floe_pq_chunk_loc *locs,
		       struct floe_buf *b, size_t field)
{
	int64_t base = (int64_t)w->written;
	for (size_t j = 0; j < w->nleaves; j++) {
		int64_t *off = (int64_t *)((char *)&locs[j] + field);
		if (*off >= 0)
			*off += base;
	}
	int rc = emit(w, b->data, b->len);
	b->len = 0;
	return rc;
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
	/* A page in flight may be the streaming leaf's first: it fixes stream_off. */
	if (w->acomp && (rc = floe_pq_compressor_sync(w->acomp)))
		return rc;
	struct floe_pq_rg_rec *rg = &w->rgs[w->nrgs];
	struct floe_pq_chunk_rec *recs = w->recs;
	struct floe_pq_chunk_loc *locs = &w->locs[w->nrgs * w->nleaves];
	rg->num_rows = (int64_t)w->rg_rows;
	rg->file_offset = w->stream_off >= 0 ? w->stream_off : (int64_t)w->written;
	rg->total_byte_size = 0;
	rg->total_comp = 0;
	/* The streaming leaf first: its pages are already in the file or must follow. */
	for (size_t k = 0; k < w->nleaves; k++) {
		size_t j = w->stream_leaf < 0		 ? k
			   : k == 0			 ? (size_t)w->stream_leaf
			   : k <= (size_t)w->stream_leaf ? k - 1
							 : k;
		struct leaf *l = &w->leaves[j];
		struct floe_pq_chunk_rec *r = &recs[j];
		const struct floe_pq_page *dict, *pages;
		size_t npages;
		if ((rc = floe_pq_chunk_finish(l->chunk, &r->m, &dict, &pages, &npages)))
			return rc;
		bool streamed = npages > 0 && pages[0].data == NULL;
		r->dict_off = dict->len ? (int64_t)w->written : -1;
		if ((rc = emit(w, dict->data, dict->len)))
			return rc;
		r->data_off = streamed ? w->stream_off : (int64_t)w->written;
		for (size_t i = 0; i < npages; i++) {
			if (pages[i].data && (rc = emit(w, pages[i].data, pages[i].len)))
				return rc;
		}
		if ((rc = record_extras(w, l, &locs[j], r->data_off, pages, npages)))
			return rc;
		rg->total_byte_size += r->m.unc_size;
		rg->total_comp += r->m.comp_size;
		merge_stats(l, &r->m);
		floe_pq_chunk_reset(l->chunk);
	}
	/* Each row group's bloom filters and page index follow its column chunks, so what
	 * the writer keeps until the footer does not grow with them. Readers find both by
	 * their offsets; within a row group each kind stays contiguous, as readers that
	 * fetch a row group's indexes in one range expect. */
	if ((rc = emit_extras(w, locs, &w->blooms, offsetof(struct floe_pq_chunk_loc, bloom_off))) ||
	    (rc = emit_extras(w, locs, &w->cis, offsetof(struct floe_pq_chunk_loc, ci_off))) ||
	    (rc = emit_extras(w, locs, &w->ois, offsetof(struct floe_pq_chunk_loc, oi_off))))
		return rc;
	for (size_t j = 0; j < w->nleaves; j++) {
		size_t at = w->heads.len;
		rc = floe_pq_footer_chunk_head(&w->heads, w->opt.codec, &w->descs[j], &recs[j]);
		if (rc)
			return rc;
		locs[j].head_len = (uint32_t)(w->heads.len - at);
	}
	w->rg_offsets[w->nrgs] = rg->file_offset;
	w->nrgs++;
	w->rg_rows = 0;
	w->buffered = 0;
	w->stream_leaf = -1;
	w->stream_off = -1;
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
	    .heads = w->heads.data,
	    .locs = w->locs,
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
	return w->buffered; /* summed over the chunks once per row, by add_row */
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

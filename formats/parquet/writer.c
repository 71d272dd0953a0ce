/* Streaming Parquet writer: maps the floe column kinds onto Parquet leaves (a map column
 * is two leaves, key and value, under a MAP group), takes the options, and finally writes
 * the footer (FileMetaData in Thrift compact form). Rows go to the leaves' chunks in
 * writer_row.c, row groups out in rowgroup.c, and writer_memory.c says what a writer
 * needs in memory. */
#include "writer.h"

#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"
#include "formats/parquet/bound.h"
#include "formats/parquet/chunk.h"
#include "formats/parquet/compress.h"
#include "formats/parquet/footer.h"
#include "formats/parquet/writer_impl.h"

#include <assert.h>
#include <stddef.h>
#include <string.h>

#ifdef NDEBUG
#define DEBUG_CHECKS 0
#else
#define DEBUG_CHECKS 1 /* debug builds check the size estimate's cached sum */
#endif

#define FOOTER_MAX ((size_t)256 << 20)
/* One row group's bloom filters, or column or offset indexes. */
#define TRAILER_MAX ((size_t)1 << 30)

#define BLOOM_NDV 100000u
#define BLOOM_MAX ((size_t)1 << 20)

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
	floe_free(w->alloc, w->touched);
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
		    cols[i].kind > FLOE_PQ_DATE)
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

/* Whether a large page that would wait for the compression thread's queue is
 * compressed by the calling thread instead. From level 5 zstd's strategies (greedy,
 * lazy and up) take longer over a page than encoding it took, and the calling thread
 * would otherwise wait for most pages: with the compact profile (level 6) at 1,000,000
 * rows, 268 of 283 pages found the queue full, and the calling thread stood waiting
 * 0.8 s of 1.3 s. Taking them cut the time to 1.0 s, for one more page-sized zstd
 * context (0.35 MB more at the peak). At level 3 encoding is the longer part (148 of
 * 284 pages found the queue full) and taking pages made the writer slower: the other
 * thread then stood idle. */
static bool caller_runs(const struct floe_pq_writer *w)
{
	return w->opt.codec == FLOE_PQ_ZSTD && w->opt.zstd_level >= 5;
}

static int leaf_ptype(enum floe_pq_kind k)
{
	switch (k) {
	case FLOE_PQ_INT32:
	case FLOE_PQ_DATE:
		return FLOE_PQ_T_INT32;
	case FLOE_PQ_FLOAT:
		return FLOE_PQ_T_FLOAT;
	case FLOE_PQ_STRING:
	case FLOE_PQ_BINARY:
		return FLOE_PQ_T_BYTE_ARRAY;
	case FLOE_PQ_DOUBLE:
		return FLOE_PQ_T_DOUBLE;
	case FLOE_PQ_BOOLEAN:
		return FLOE_PQ_T_BOOLEAN;
	default:
		return FLOE_PQ_T_INT64;
	}
}

static int make_leaves(struct floe_pq_writer *w)
{
	size_t n = 0;
	for (size_t i = 0; i < w->ncols; i++)
		n += is_map(w->cols[i].kind) ? 2 : 1;
	w->leaves = floe_calloc(w->alloc, n, sizeof(*w->leaves));
	w->descs = floe_calloc(w->alloc, n, sizeof(*w->descs));
	w->recs = floe_calloc(w->alloc, n, sizeof(*w->recs));
	w->touched = floe_calloc(w->alloc, 2 * n, sizeof(*w->touched));
	if (!w->leaves || !w->descs || !w->recs || !w->touched)
		return FLOE_ENOMEM;
	w->nleaves = n;
	size_t k = 0;
	for (size_t i = 0; i < w->ncols; i++) {
		const struct floe_pq_column *c = &w->cols[i];
		int opt = c->optional ? 1 : 0;
		struct leaf *l = &w->leaves[k];
		l->col = (int)i;
		l->kind = (int)c->kind;
		l->path[0] = c->name;
		if (is_map(c->kind)) {
			/* key: the map's own level (if optional) + the repeated key_value level;
			 * a string value is optional, a long one required. */
			struct leaf *v = &w->leaves[k + 1];
			bool longs = c->kind == FLOE_PQ_MAP_STRING_LONG;
			v->col = (int)i;
			l->npath = v->npath = 3;
			v->path[0] = c->name;
			l->path[1] = v->path[1] = "key_value";
			l->path[2] = "key";
			v->path[2] = "value";
			l->ptype = FLOE_PQ_T_BYTE_ARRAY;
			v->ptype = longs ? FLOE_PQ_T_INT64 : FLOE_PQ_T_BYTE_ARRAY;
			l->max_rep = v->max_rep = 1;
			l->max_def = opt + 1;
			v->max_def = longs ? opt + 1 : opt + 2;
			l->field_id = c->key_field_id;
			v->field_id = c->value_field_id;
			k += 2;
		} else {
			l->npath = 1;
			l->ptype = leaf_ptype(c->kind);
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
		/* Floating point and booleans have no delta encoding; booleans are bits,
		 * PLAIN, with neither dictionary nor bloom filter. */
		if (l->ptype == FLOE_PQ_T_DOUBLE || l->ptype == FLOE_PQ_T_FLOAT ||
		    l->ptype == FLOE_PQ_T_BOOLEAN)
			co.delta = false;
		if (l->ptype == FLOE_PQ_T_BOOLEAN)
			co.dict_cap = 0;
		for (size_t b = 0; b < w->opt.bloom_count; b++) {
			if (w->bloom[b].field_id != l->field_id || l->ptype == FLOE_PQ_T_BOOLEAN)
				continue;
			co.bloom = true;
			co.bloom_ndv = w->bloom[b].ndv ? w->bloom[b].ndv : BLOOM_NDV;
		}
		int rc = floe_pq_chunk_new(w->alloc, &co, w->comp, &w->body, &l->chunk);
		if (rc)
			return rc;
		if (w->acomp)
			floe_pq_chunk_set_async(l->chunk, w->acomp, caller_runs(w));
		l->st.field_id = l->field_id;
		w->descs[j].ptype = l->ptype;
		w->descs[j].npath = l->npath;
		memcpy(w->descs[j].path, l->path, sizeof(l->path));
		floe_pq_bound_clear(&l->lo);
		floe_pq_bound_clear(&l->hi);
	}
	return 0;
}

int floe_pq_writer_new(struct floe_alloc *alloc, const struct floe_pq_column *cols, size_t ncols,
		       const struct floe_pq_options *opt, floe_pq_sink_fn sink, void *sink_ctx,
		       struct floe_pq_writer **out)
{
	int rc = check_args(cols, ncols, opt, sink);
	if (rc)
		return rc;
	struct floe_pq_writer *w = floe_calloc(alloc, 1, sizeof(*w));
	if (!w)
		return FLOE_ENOMEM;
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
		goto out;
	if ((rc = floe_pq_compressor_new(alloc, w->opt.codec, w->opt.zstd_level, &w->comp)))
		goto out;
	/* Large pages compress elsewhere while the next ones are encoded: a second context,
	 * so that the small pages, compressed here, never wait. */
	if (opt->offload && w->opt.codec != FLOE_PQ_UNCOMPRESSED) {
		rc = floe_pq_compressor_new(alloc, w->opt.codec, w->opt.zstd_level, &w->acomp);
		if (rc)
			goto out;
		/* Queued input: one page in flight, and beside it at most one of a quarter
		 * page (the smallest it takes). */
		floe_pq_compressor_set_offload(w->acomp, opt->offload,
					       w->opt.page_size + w->opt.page_size / 4);
	}
	if ((rc = make_leaves(w)))
		goto out;
	w->stream_leaf = -1;
	w->stream_off = -1;
	*out = w;
	w = NULL;
out:
	floe_pq_writer_free(w);
	return rc;
}

int floe_pq_writer_finish(struct floe_pq_writer *w)
{
	if (w->err)
		return w->err;
	if (w->finished)
		return 0;
	struct floe_buf f;
	floe_buf_init(&f, w->alloc, FOOTER_MAX);
	int rc = floe_pq_writer_flush_row_group(w);
	if (rc)
		goto out;
	if (!w->started) {
		if ((rc = floe_pq_writer_emit(w, "PAR1", 4)))
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
	if ((rc = floe_pq_writer_build_stats(w)))
		goto out;
	if ((rc = floe_pq_writer_emit(w, f.data, f.len)))
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

uint64_t floe_pq_writer_size_estimate(const struct floe_pq_writer *w)
{
	/* Compressed pages count once: those written (the streamed leaf's as they are made)
	 * and those held for the open row group. Only the open pages and dictionaries are
	 * counted uncompressed, at most a page per leaf: an estimate that mixed the row
	 * group's uncompressed bytes with the written ones ran about five times the real
	 * size on log text, and files were sealed at a fifth of their target. */
	uint64_t n = w->written ? w->written : 4;
	/* The batch asks after every row: the leaves' part is then the sum add_row made. */
	uint64_t leaves = 0;
	if (!w->est_ok || DEBUG_CHECKS) {
		for (size_t j = 0; j < w->nleaves; j++) {
			size_t fh = 0, fb = 0;
			floe_pq_chunk_in_flight(w->leaves[j].chunk, &fh, &fb);
			leaves += floe_pq_chunk_held(w->leaves[j].chunk) +
				  floe_pq_chunk_open_bytes(w->leaves[j].chunk) + fh;
		}
		assert(!w->est_ok || w->est_leaves == leaves);
	}
	if (w->est_ok)
		leaves = w->est_leaves;
	/* The footer's chunk records so far, and the open row group's filters and index. */
	return n + leaves + w->heads.len + w->blooms.len + w->cis.len + w->ois.len;
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

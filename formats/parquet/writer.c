/* Streaming Parquet writer: maps the floe column kinds onto Parquet leaves (a map column
 * is two leaves, key and value, under a MAP group), routes each row's values and levels
 * to the leaves' chunks, closes a row group when enough is buffered (or its pages reach
 * the memory budget; rowgroup.c writes it), and finally writes the footer (FileMetaData
 * in Thrift compact form). */
#include "writer.h"

#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"
#include "formats/base/utf8.h"
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

/* Profile defaults, chosen by measurement with tests/bench/parquet.sh (1,000,000 log
 * rows, ZSTD): 512 KiB pages compress a little better than 1 MiB pages at level 3
 * (47.63 MB against 47.79 MB) and halve the page buffers; 256 KiB pages fall into zstd's
 * small-input parameters and lose 7 % on the message text. The compact profile trades
 * speed for size: level 6 gives 43.8 MB, about DuckDB's single-threaded level-3 speed
 * with the compression thread; level 3 44.7 MB at twice that, level 9 42.9 MB at 0.9 of
 * it (zstd's parameters as compress.c sets them). */
#define DEFAULT_ZSTD_LEVEL 3
#define COMPACT_ZSTD_LEVEL 6
#define DEFAULT_PAGE_SIZE ((size_t)512 << 10)
#define COMPACT_PAGE_SIZE ((size_t)512 << 10)
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

static bool is_map(enum floe_pq_kind k)
{
	return k == FLOE_PQ_MAP_STRING || k == FLOE_PQ_MAP_STRING_LONG;
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
		case FLOE_PQ_DATE:
			if (v->i < INT32_MIN || v->i > INT32_MAX)
				return FLOE_EINVAL;
			break;
		case FLOE_PQ_STRING:
		case FLOE_PQ_BINARY:
			if (!v->s && v->len)
				return FLOE_EINVAL;
			break;
		case FLOE_PQ_DOUBLE:
		case FLOE_PQ_FLOAT:
			if (v->d != v->d) /* NaN: its statistics are unordered; write a null */
				return FLOE_EINVAL;
			break;
		case FLOE_PQ_MAP_STRING_LONG:
			if (v->n && (!v->keys || !v->key_lens || !v->ivals))
				return FLOE_EINVAL;
			if (v->n > (size_t)INT32_MAX)
				return FLOE_ELIMIT;
			for (size_t j = 0; j < v->n; j++) {
				if (!v->keys[j] && v->key_lens[j])
					return FLOE_EINVAL;
			}
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

/* Appends the repair of ill-formed (p, n) as a value of leaf l: out of line, so that the
 * common path saves no registers for it. */
__attribute__((noinline)) static int put_repaired(struct floe_pq_writer *w, struct leaf *l, int rep,
						  const uint8_t *p, size_t n)
{
	int rc = floe_utf8_repair(p, n, &w->scratch, &p, &n, &w->replaced);
	return rc ? rc : floe_pq_chunk_put_bytes(l->chunk, rep, p, n);
}

/* Repairs (p, n) if needed and appends it as a value of leaf l. Values are almost always
 * well-formed: checked here, they take one call, and only the others go through the
 * repair (which checks them again). */
static inline int put_string(struct floe_pq_writer *w, struct leaf *l, int rep, const char *s,
			     size_t n)
{
	const uint8_t *p = (const uint8_t *)(s ? s : "");
	if (floe_utf8_valid(p, n) != n)
		return put_repaired(w, l, rep, p, n);
	return floe_pq_chunk_put_bytes(l->chunk, rep, p, n);
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
		if (v->ivals)
			rc = floe_pq_chunk_put_int(val->chunk, rep, v->ivals[j]);
		else if (v->vals && v->vals[j])
			rc = put_string(w, val, rep, v->vals[j], v->val_lens[j]);
		else
			rc = floe_pq_chunk_put_null(val->chunk, rep, base + 1);
		if (rc)
			return rc;
	}
	return 0;
}


/* Sink of the streaming leaf's pages. */
static int stream_page(void *ctx, const void *data, size_t len)
{
	struct floe_pq_writer *w = ctx;
	int rc;
	if (!w->started) {
		if ((rc = floe_pq_writer_emit(w, "PAR1", 4)))
			return rc;
		w->started = true;
	}
	if (w->stream_off < 0)
		w->stream_off = (int64_t)w->written;
	return floe_pq_writer_emit(w, data, len);
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
	struct leaf *l = w->leaves;
	for (size_t i = 0; i < w->ncols && !rc; i++) {
		const struct floe_pq_column *c = &w->cols[i];
		const struct floe_pq_value *v = &values[i];
		struct floe_pq_chunk *ch = l->chunk;
		/* One switch on the kind: the row's columns take a jump each rather than a
		 * chain of tests. */
		switch (v->is_null && !is_map(c->kind) ? -1 : (int)c->kind) {
		case -1:
			rc = floe_pq_chunk_put_null(ch, 0, 0);
			break;
		case FLOE_PQ_MAP_STRING:
		case FLOE_PQ_MAP_STRING_LONG:
			rc = put_map(w, l, v, c->optional ? 1 : 0);
			l++; /* the value leaf */
			break;
		case FLOE_PQ_STRING:
			rc = put_string(w, l, 0, v->s, v->len);
			break;
		case FLOE_PQ_BINARY:
			rc = floe_pq_chunk_put_bytes(ch, 0, (const uint8_t *)(v->s ? v->s : ""), v->len);
			break;
		case FLOE_PQ_DOUBLE:
			rc = floe_pq_chunk_put_double(ch, 0, v->d);
			break;
		case FLOE_PQ_FLOAT:
			rc = floe_pq_chunk_put_float(ch, 0, (float)v->d);
			break;
		case FLOE_PQ_BOOLEAN:
			rc = floe_pq_chunk_put_bool(ch, 0, v->i != 0);
			break;
		default:
			rc = floe_pq_chunk_put_int(ch, 0, v->i);
			break;
		}
		l++;
	}
	size_t buffered = 0, held = 0, fly_held = 0, fly_buf = 0, open = 0;
	unsigned long done0 = w->acomp ? floe_pq_compressor_completed(w->acomp) : 0;
	w->est_ok = false;
	for (size_t j = 0; j < w->nleaves && !rc; j++) {
		size_t b, h, o;
		rc = floe_pq_chunk_end_row_open(w->leaves[j].chunk, &b, &h, &o);
		buffered += b;
		held += h;
		open += o;
	}
	/* Pages the other thread has finished are completed here, then the ones still
	 * queued or in flight are counted. A page completed during the sums above (by a
	 * hand-over that had to wait) or here moved between them: sum again. */
	if (!rc && w->acomp && floe_pq_compressor_busy(w->acomp))
		rc = floe_pq_compressor_pump(w->acomp);
	bool moved = false;
	if (!rc && w->acomp && floe_pq_compressor_completed(w->acomp) != done0) {
		sum_chunks(w, &buffered, &held);
		moved = true;
	}
	for (size_t j = 0; !rc && w->acomp && floe_pq_compressor_busy(w->acomp) && j < w->nleaves;
	     j++) {
		size_t fh, fb;
		floe_pq_chunk_in_flight(w->leaves[j].chunk, &fh, &fb);
		fly_held += fh;
		fly_buf += fb;
	}
	if (rc)
		goto out;
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
			goto out;
		sum_chunks(w, &buffered, &held);
		moved = true;
	}
	if (w->stream_leaf < 0 && held >= stream_min) {
		moved = true;
		if ((rc = pick_stream_leaf(w)))
			goto out;
		held = 0;
		for (size_t j = 0; j < w->nleaves; j++)
			held += floe_pq_chunk_held(w->leaves[j].chunk);
	}
	w->buffered = buffered;
	bool full = buffered >= w->opt.row_group_size ||
		    (w->opt.memory_budget && held >= w->opt.memory_budget);
	if (full)
		rc = floe_pq_writer_flush_row_group(w);
	else if (!moved) {
		/* No page moved since the sums: the in-flight bytes are those summed above
		 * (none when the compressor is idle). */
		w->est_leaves = (uint64_t)held + open + fly_held;
		w->est_ok = true;
	}
out:
	if (rc)
		w->err = rc; /* sticky: the writer only reports it from now on */
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

/* What a writer holds besides its pages and compression contexts (leaves, statistics,
 * chunk records, buffers of the small columns' first pages): under 0.1 MB for floe's 13
 * leaves, with room here for long paths and host names. */
#define WRITER_FIXED ((uint64_t)128 << 10)
/* A first page that closes before its dictionary probe decided may fall back to PLAIN
 * (probe_at_close in chunk.c) and copy the dictionary's values while both
 * exist: measured at up to 162 KB with one large row in a fresh writer. */
#define FALLBACK_SLACK ((uint64_t)256 << 10)
/* Per-page slack: the page header, the levels and length prefixes of a row's values. */
#define PAGE_SLACK ((uint64_t)1 << 10)
/* The probe compresses more than 256 KiB: zstd, left to its own parameters for each
 * page's size, takes its largest tables for inputs above 256 KiB, and a one-shot
 * compression's context does not grow beyond that with the input (measured: level 3
 * 1.3 MB, level 6 3.7 MB from 300 KB to 8 MB). */
#define PROBE_BYTES ((size_t)512 << 10)

static uint64_t pow2_at_least(uint64_t n)
{
	uint64_t p = 64;
	while (p < n && p < ((uint64_t)1 << 62))
		p *= 2;
	return p;
}

/* The last probes' results, per thread: a start asks the same question for the memory
 * check, the partitions' budget and each table's batch (8 probes at a start with two
 * tables), and the answer depends on the codec, the level and the size alone. */
#define PROBE_MEMO 8
static _Thread_local struct probe_memo {
	enum floe_pq_codec codec;
	int level;
	size_t probe, peak;
} probe_memo[PROBE_MEMO];
static _Thread_local unsigned probe_memo_n;

/* The peak of one compressor of codec at level that compresses probe bytes. */
static int probe_context(enum floe_pq_codec codec, int level, size_t probe, size_t *out)
{
	for (unsigned i = 0; i < probe_memo_n && i < PROBE_MEMO; i++) {
		const struct probe_memo *m = &probe_memo[i];
		if (m->codec == codec && m->level == level && m->probe == probe) {
			*out = m->peak;
			return 0;
		}
	}
	/* The probe's buffers come from one counter, the context from another. */
	struct floe_alloc ctx, buf;
	floe_alloc_init(&ctx, 0);
	floe_alloc_init(&buf, 0);
	struct floe_pq_compressor *c = NULL;
	int rc = floe_pq_compressor_new(&ctx, codec, level, &c);
	if (rc)
		return rc;
	size_t cap = floe_pq_compressor_bound(c, probe);
	uint8_t *src = floe_malloc(&buf, probe), *dst = floe_malloc(&buf, cap);
	if (!src || !dst) {
		rc = FLOE_ENOMEM;
	} else {
		/* zstd sizes its whole workspace from the parameters and the input's size
		 * before it reads a byte, so the content does not change the peak (measured
		 * at every level from 1 to 22, at 64 KiB, 128 KiB and 512 KiB: the same bytes
		 * for incompressible, zero and repeating inputs). A repeating one compresses
		 * in a few microseconds; random bytes took 0.6 ms at level 1 and up to 0.2 s at
		 * level 19, at every start and reload. */
		for (size_t i = 0; i < probe && i < 256; i++)
			src[i] = (uint8_t)(i * 7);
		for (size_t k = 256; k < probe; k *= 2)
			memcpy(src + k, src, probe - k < k ? probe - k : k);
		size_t zn = 0;
		rc = floe_pq_compressor_into(c, src, probe, dst, cap, &zn);
	}
	floe_free(&buf, src);
	floe_free(&buf, dst);
	floe_pq_compressor_free(c);
	*out = ctx.peak;
	if (rc == 0)
		probe_memo[probe_memo_n++ % PROBE_MEMO] = (struct probe_memo){codec, level, probe, ctx.peak};
	return rc;
}

int floe_pq_writer_context_bytes(const struct floe_pq_options *o, size_t *out)
{
	*out = 0;
	if (o->codec == FLOE_PQ_UNCOMPRESSED)
		return 0;
	bool compact = o->profile == FLOE_PQ_PROFILE_COMPACT;
	int level = o->zstd_level ? o->zstd_level : compact ? COMPACT_ZSTD_LEVEL : DEFAULT_ZSTD_LEVEL;
	size_t page = o->page_size ? o->page_size : compact ? COMPACT_PAGE_SIZE : DEFAULT_PAGE_SIZE;
	size_t big = 0, small = 0;
	int rc = probe_context(o->codec, level, PROBE_BYTES, &big);
	/* With an offload, the second context compresses only the pages under a quarter page
	 * (zstd sizes its buffers by the input), unless the calling thread also takes large
	 * pages (caller_runs: zstd level 5 and up). */
	bool both_large = o->codec == FLOE_PQ_ZSTD && level >= 5;
	if (rc == 0 && o->offload)
		rc = probe_context(o->codec, level, both_large ? PROBE_BYTES : page / 4, &small);
	*out = big + small;
	return rc;
}

uint64_t floe_pq_writer_row_need(const struct floe_pq_options *o, const size_t *v, size_t n, bool fresh,
				 size_t ctx_bytes)
{
	/* A writer that holds rows also closes its other open pages and dictionaries when the
	 * file is finished: measured at up to 1.6 MB with 512 KiB pages and full dictionaries. */
	size_t page = o->page_size ? o->page_size : DEFAULT_PAGE_SIZE;
	/* A writer with rows has its contexts, but they may not have reached their peak yet:
	 * zstd sizes its tables by the input, and a context that has compressed only small
	 * pages grows when the first large one comes. */
	uint64_t need = fresh ? WRITER_FIXED + FALLBACK_SLACK + ctx_bytes : 4 * (uint64_t)page + ctx_bytes;
	for (size_t i = 0; i < n; i++) {
		uint64_t unit = (uint64_t)v[i] + PAGE_SLACK;
		/* The compression bound of zstd and LZ4 is below n + n/128 + 1 KiB. */
		uint64_t block = o->codec == FLOE_PQ_UNCOMPRESSED ? unit : unit + unit / 128 + PAGE_SLACK;
		/* Pages up to twice the page size go to the offload (chunk_page.c), which leaves a
		 * value buffer of the same capacity behind; larger ones compress in place. A
		 * page holding a value of v bytes has more than v bytes. */
		bool handed = o->offload && v[i] < 2 * page;
		need += pow2_at_least(unit) * (handed ? 2 : 1) + 2 * block;
	}
	return need;
}

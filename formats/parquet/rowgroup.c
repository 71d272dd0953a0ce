/* Row groups of the streaming Parquet writer: writes the open row group's column chunks
 * (the streaming leaf's first), then its bloom filters and page index, and keeps the
 * records the footer needs; merges each chunk's statistics into the whole file's. */
#include "formats/parquet/writer_impl.h"

#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"
#include "formats/parquet/bloom.h"
#include "formats/parquet/bound.h"
#include "formats/parquet/chunk.h"
#include "formats/parquet/compress.h"
#include "formats/parquet/footer.h"
#include "formats/parquet/pageindex.h"

#include <stddef.h>

int floe_pq_writer_emit(struct floe_pq_writer *w, const void *p, size_t n)
{
	if (n == 0)
		return 0;
	int rc = w->sink(w->sink_ctx, p, n);
	if (rc)
		return rc < 0 ? rc : FLOE_EINVAL;
	w->written += n;
	return 0;
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
	int rc = floe_pq_writer_emit(w, b->data, b->len);
	b->len = 0;
	return rc;
}

/* Gives every leaf's chunk the rows of nulls add_row held back (writer_row.c), before the
 * chunks are closed; the sums add_row keeps are then made again. */
static void settle_leaves(struct floe_pq_writer *w)
{
	for (size_t j = 0; j < w->nleaves; j++) {
		struct leaf *l = &w->leaves[j];
		if (l->lazy)
			floe_pq_chunk_null_rows(l->chunk, l->lazy);
		l->lazy = 0;
		l->room = 0;
	}
	w->sums_ok = false;
}

int floe_pq_writer_flush_row_group(struct floe_pq_writer *w)
{
	int rc;
	w->est_ok = false; /* the row group's pages go out */
	settle_leaves(w);
	if (w->rg_rows == 0)
		return 0;
	if ((rc = grow_records(w)))
		return rc;
	if (!w->started) {
		if ((rc = floe_pq_writer_emit(w, "PAR1", 4)))
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
		if ((rc = floe_pq_writer_emit(w, dict->data, dict->len)))
			return rc;
		r->data_off = streamed ? w->stream_off : (int64_t)w->written;
		for (size_t i = 0; i < npages; i++) {
			if (pages[i].data && (rc = floe_pq_writer_emit(w, pages[i].data, pages[i].len)))
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

int floe_pq_writer_build_stats(struct floe_pq_writer *w)
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
			size_t n = floe_pq_stat_bytes(l->minb, l->ptype, l->imin, false);
			floe_pq_stat_bytes(l->maxb, l->ptype, l->imax, true);
			s->min = l->minb;
			s->max = l->maxb;
			s->min_len = s->max_len = n;
		}
		s->has_min_max = true;
	}
	return 0;
}

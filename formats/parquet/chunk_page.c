/* Column chunk pages: a page that closes is encoded (levels, dictionary indices, PLAIN
 * or delta values), compressed straight into a block that keeps room for its header,
 * and completed (header, CRC, exact-size block) at once or, through the asynchronous
 * compressor, when its job is done; finished pages are held, or streamed to the sink
 * when the chunk streams. */
#include "chunk_impl.h"

#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"
#include "formats/parquet/compress.h"
#include "formats/base/crc.h"
#include "formats/parquet/delta.h"
#include "formats/parquet/thrift.h"

#include <assert.h>
#include <string.h>

/* Values per miniblock group: DELTA_BYTE_ARRAY is chosen over DELTA_LENGTH_BYTE_ARRAY
 * for a page when the bytes values share with their predecessor exceed this fraction
 * (1/n) of the page's string bytes. */
#define DBA_SHARE 4

/* A page between its encoding and its header: the header needs the compressed size and
 * CRC, so the page's block keeps HDR_MAX bytes in front of its levels and body. */
struct page_job {
	struct floe_pq_chunk *owner;
	uint8_t *p;
	size_t slot; /* index in pages, or SIZE_MAX for the dictionary page */
	int type, encoding;
	uint32_t num_values;
	size_t n, lv, bound;
	size_t room; /* for the compressed body in p: the bound, or less in flight */
	size_t rep_len, def_len;
	int64_t nulls, rows;
	size_t acct; /* what it adds to its chunk's fly_held while in flight */
};

/* What a v2 data page header needs besides the sizes. */
struct v2_info {
	const uint8_t *levels; /* rep then def levels, stored uncompressed */
	size_t rep_len, def_len;
	int64_t nulls, rows;
};

/* Room kept in front of the compressed body for the page header, which can only be
 * encoded once the compressed size and CRC are known. */
#define HDR_MAX 96

/* Pages of at least LARGE_MIN bytes are compressed into a block sized by what the
 * chunk's last page compressed to (below). Smaller ones (dictionary indices, nulls) get
 * the bound. */
#define LARGE_MIN ((size_t)4 << 10)
/* Which pages the chunk's asynchronous compressor, when it has one, takes: those of at
 * least a quarter of the page size, and at least LARGE_MIN. These are the pages that
 * close on size, of the text columns, where most of the compressing is. Pages that
 * close on their count of values (8192 integers: 64 KiB) are compressed here, and keep
 * the two threads' shares of the work about even: handed over, three of them closed on
 * the same row and, behind a text page, the calling thread waited for the queue. At
 * 10,000,000 rows it waited 2.3-2.5 s of 7-8 s; with them kept here, 1.0 s. */
static size_t async_min(const struct floe_pq_chunk *c)
{
	return c->o.page_size / 4 > LARGE_MIN ? c->o.page_size / 4 : LARGE_MIN;
}
/* Added to the room a large page has for its compressed body: a frame's header and
 * block headers. */
#define FIT_SLACK ((size_t)64)

static int flush_stream(struct floe_pq_chunk *c);

/* Encodes the PageHeader of job j into c->hdr: zn compressed bytes after lv bytes of
 * levels, checksum sum; compressed false for a v2 page stored as it was. */
static int encode_header(struct floe_pq_chunk *c, const struct page_job *j, size_t zn, uint32_t sum,
			 bool compressed)
{
	size_t lv = j->lv;
	floe_buf_reset(&c->hdr);
	struct floe_thrift t;
	floe_thrift_init(&t, &c->hdr);
	floe_thrift_i32(&t, 1, j->type);
	floe_thrift_i32(&t, 2, (int32_t)(lv + j->n));
	floe_thrift_i32(&t, 3, (int32_t)(lv + zn));
	floe_thrift_i32(&t, 4, (int32_t)sum);
	if (j->type == PAGE_DATA_V2) {
		floe_thrift_struct(&t, 8);
		floe_thrift_i32(&t, 1, (int32_t)j->num_values);
		floe_thrift_i32(&t, 2, (int32_t)j->nulls);
		floe_thrift_i32(&t, 3, (int32_t)j->rows);
		floe_thrift_i32(&t, 4, j->encoding);
		floe_thrift_i32(&t, 5, (int32_t)j->def_len);
		floe_thrift_i32(&t, 6, (int32_t)j->rep_len);
		if (!compressed)
			floe_thrift_bool(&t, 7, false);
		floe_thrift_end(&t);
	} else if (j->type == PAGE_DATA) {
		floe_thrift_struct(&t, 5);
		floe_thrift_i32(&t, 1, (int32_t)j->num_values);
		floe_thrift_i32(&t, 2, j->encoding);
		floe_thrift_i32(&t, 3, ENC_RLE);
		floe_thrift_i32(&t, 4, ENC_RLE);
		floe_thrift_end(&t);
	} else {
		floe_thrift_struct(&t, 7);
		floe_thrift_i32(&t, 1, (int32_t)j->num_values);
		floe_thrift_i32(&t, 2, ENC_PLAIN);
		floe_thrift_bool(&t, 3, false);
		floe_thrift_end(&t);
	}
	floe_thrift_end(&t);
	return floe_thrift_error(&t);
}

/* Completes a page whose body has been compressed into j->p (zn bytes): header, CRC and
 * the exact-size block, stored in its slot. src/n is the uncompressed body, for a v2 page
 * that compressing did not shrink. crc, when not NULL, is the CRC of the levels and the
 * compressed body, computed by the thread that compressed it. */
static int page_done(struct floe_pq_chunk *c, struct page_job *j, int rc, const uint8_t *src,
		     size_t zn, const uint32_t *crc)
{
	uint8_t *p = j->p;
	size_t lv = j->lv, n = j->n;
	uint8_t *z = p + HDR_MAX + lv;
	j->p = NULL;
	if (rc == FLOE_ELIMIT && j->room < j->bound) {
		/* Did not fit in the room it had in flight: compressed again, with the bound. */
		uint8_t *q = floe_realloc(c->alloc, p, HDR_MAX + lv + j->bound);
		if (!q) {
			rc = FLOE_ENOMEM;
			goto out;
		}
		p = q;
		z = p + HDR_MAX + lv;
		rc = floe_pq_compressor_into(c->comp, src, n, z, j->bound, &zn);
		crc = NULL;
	}
	if (rc)
		goto out;
	c->last_n = n;
	c->last_zn = zn;
	bool compressed = floe_pq_compressor_codec(c->comp) != FLOE_PQ_UNCOMPRESSED;
	if (j->type == PAGE_DATA_V2 && zn >= n) {
		memcpy(z, src, n);
		zn = n;
		compressed = false;
		crc = NULL;
	}
	uint32_t sum = crc ? *crc : floe_crc32(0, p + HDR_MAX, lv + zn);
	if ((rc = encode_header(c, j, zn, sum, compressed)))
		goto out;
	size_t hdr = c->hdr.len;
	assert(hdr <= HDR_MAX);
	uint8_t *q = floe_malloc(c->alloc, hdr + lv + zn);
	if (q) {
		memcpy(q, c->hdr.data, hdr);
		memcpy(q + hdr, p + HDR_MAX, lv + zn);
		floe_free(c->alloc, p);
	} else {
		memcpy(p, c->hdr.data, hdr);
		memmove(p + hdr, p + HDR_MAX, lv + zn);
	}
	struct floe_pq_page *dst = j->slot == SIZE_MAX ? &c->dict_page : &c->pages[j->slot];
	dst->data = q ? q : p; /* a failed allocation leaves the block as it was */
	p = NULL;		/* the slot owns the block now */
	dst->len = hdr + lv + zn;
	c->m.unc_size += (int64_t)hdr;
	c->m.comp_size += (int64_t)(hdr + lv + zn);
	c->held += dst->len;
	c->moves++;
	rc = j->slot == SIZE_MAX ? 0 : flush_stream(c);
out:
	floe_free(c->alloc, p);
	return rc;
}

static int async_done(void *ctx, int rc, const uint8_t *src, size_t n, size_t zn, uint32_t crc)
{
	struct page_job *j = ctx;
	struct floe_pq_chunk *c = j->owner;
	(void)n;
	c->fly--;
	c->fly_held -= j->acct;
	rc = page_done(c, j, rc, src, zn, &crc);
	floe_free(c->alloc, j);
	return rc;
}

/* Compresses body and stores header + compressed body in the page slot (SIZE_MAX: the
 * dictionary page), a block of its own. For a v2 page, v2->levels go first, uncompressed,
 * and only body is compressed (or stored as it is when compressing does not make it
 * smaller). The body is compressed straight into a block of the bound's size, and the
 * page then moves to a block of its exact size: no page-sized buffer stays behind.
 * Cutting the first block to size in place instead left the heap in pieces of every
 * size: with the compression thread, the process's RSS grew by about 1 MiB over the
 * first 64 MiB of a file, against 0.2-0.7 MiB from 16 to 512 MiB with the move. A large page may be completed later, by the
 * asynchronous compressor: its slot's data stays NULL until then. own (may be NULL) is
 * the buffer that holds body, which the asynchronous compressor may take in exchange
 * for an empty one rather than copy body. */
static int write_page(struct floe_pq_chunk *c, size_t slot, int type, const uint8_t *body, size_t n,
		      struct floe_buf *own, uint32_t num_values, int encoding, const struct v2_info *v2)
{
	size_t lv = v2 ? v2->rep_len + v2->def_len : 0;
	size_t bound = floe_pq_compressor_bound(c->comp, n);
	if (bound < n)
		bound = n;
	if (n > (size_t)INT32_MAX - lv || bound > (size_t)INT32_MAX - lv)
		return FLOE_ELIMIT;
	bool big = n >= LARGE_MIN;
	/* A page that one huge value made more than twice the page size is compressed here:
	 * handed over, it would leave behind a new value buffer of its capacity, a third more
	 * memory for such a line (6.7 instead of 4.6 MB for a line of 1 MiB), when memory is
	 * what a line that long is short of. */
	bool async = c->acomp && n >= async_min(c) && n <= 2 * c->o.page_size &&
		     !(c->caller_runs && floe_pq_compressor_would_wait(c->acomp, n));
	/* A large page gets room for what the chunk's last page compressed to, scaled to
	 * its size, plus a quarter, rather than the bound: that would sit mostly unused,
	 * in every page in flight and in the one compressed here (a 512 KiB page of log
	 * text takes 100-250 KiB). A page that does not fit is compressed again, here, with
	 * the bound, when it completes: the file is the same either way. */
	size_t room = bound;
	if (big && c->last_n) {
		uint64_t guess = c->last_zn * n / c->last_n;
		guess += guess / 4 + FIT_SLACK;
		if (guess < bound)
			room = (size_t)guess;
	}
	int rc;
	struct page_job inl, *j = &inl;
	if (async && !(j = floe_malloc(c->alloc, sizeof(*j))))
		return FLOE_ENOMEM;
	memset(j, 0, sizeof(*j));
	j->owner = c;
	if (!(j->p = floe_malloc(c->alloc, HDR_MAX + lv + room))) {
		if (j != &inl)
			floe_free(c->alloc, j);
		return FLOE_ENOMEM;
	}
	j->slot = slot;
	j->type = type;
	j->encoding = encoding;
	j->num_values = num_values;
	j->n = n;
	j->lv = lv;
	j->bound = bound;
	j->room = room;
	if (v2) {
		j->rep_len = v2->rep_len;
		j->def_len = v2->def_len;
		j->nulls = v2->nulls;
		j->rows = v2->rows;
		if (lv)
			memcpy(j->p + HDR_MAX, v2->levels, lv);
	}
	c->m.unc_size += (int64_t)(lv + n); /* the header's bytes are added when it exists */
	c->moves++;
	uint8_t *z = j->p + HDR_MAX + lv;
	if (async) {
		/* Counted before the hand-over: the compressor may complete the job (and so
		 * uncount it) before it returns. */
		/* A page that will be streamed once done is never held. */
		bool streams = c->stream && !c->dict_on && c->m.dict_pages == 0;
		j->acct = slot != SIZE_MAX && !streams ? HDR_MAX + lv + bound : 0;
		c->fly++;
		c->fly_held += j->acct;
		bool queued = false;
		rc = floe_pq_compressor_submit(c->acomp, body, n, own, z, room, lv, async_done, j,
					       &queued);
		if (!queued) { /* never queued: the block and the job are still ours */
			c->fly--;
			c->fly_held -= j->acct;
			floe_free(c->alloc, j->p);
			floe_free(c->alloc, j);
		}
		return rc;
	}
	size_t zn = 0;
	rc = floe_pq_compressor_into(c->comp, body, n, z, room, &zn);
	return page_done(c, j, rc, body, zn, NULL);
}

void floe_pq_chunk_set_async(struct floe_pq_chunk *c, struct floe_pq_compressor *acomp,
			     bool caller_runs)
{
	c->acomp = acomp;
	c->caller_runs = caller_runs;
}

void floe_pq_chunk_in_flight(const struct floe_pq_chunk *c, size_t *held, size_t *buffered)
{
	*buffered = c->fly * HDR_MAX;
	*held = c->fly_held;
}
static int put_levels(struct floe_buf *b, struct floe_rle *r)
{
	int rc = floe_rle_flush(r);
	if (rc)
		return rc;
	size_t len = r->out->len;
	if ((rc = floe_buf_put_le32(b, (uint32_t)len)))
		return rc;
	return floe_buf_append(b, r->out->data, len);
}

/* Whether the open page's strings take DELTA_BYTE_ARRAY rather than
 * DELTA_LENGTH_BYTE_ARRAY: when they share enough of their bytes with the value before. */
static bool use_dba(const struct floe_pq_chunk *c)
{
	uint64_t shared, total;
	floe_pq_delta_shared(c->vals.data, c->vals.len, &shared, &total);
	return shared > total / DBA_SHARE;
}

/* Encodes the open page's strings in c->vals itself (c->body, empty, lends its room for
 * the lengths). */
static int encode_strings_in_place(struct floe_pq_chunk *c, int *enc)
{
	int rc;
	if (use_dba(c)) {
		*enc = FLOE_PQ_ENC_DELTA_BYTE_ARRAY;
		rc = floe_pq_delta_strings_inplace(&c->vals, c->body);
	} else {
		*enc = FLOE_PQ_ENC_DELTA_LENGTH_BYTE_ARRAY;
		rc = floe_pq_delta_lengths_inplace(&c->vals, c->body);
	}
	floe_buf_reset(c->body);
	return rc;
}

/* Encodes the open page's values (PLAIN in c->vals) as the profile wants into out and
 * returns the encoding. */
static int encode_values(struct floe_pq_chunk *c, struct floe_buf *out, int *enc)
{
	if (!c->o.delta || c->vals.len == 0) {
		*enc = ENC_PLAIN;
		return floe_buf_append(out, c->vals.data, c->vals.len);
	}
	if (c->o.ptype != FLOE_PQ_T_BYTE_ARRAY) {
		*enc = FLOE_PQ_ENC_DELTA_BINARY_PACKED;
		return floe_pq_delta_ints(out, c->vals.data, c->vals.len,
					  c->o.ptype == FLOE_PQ_T_INT32 ? 4 : 8);
	}
	if (use_dba(c)) {
		*enc = FLOE_PQ_ENC_DELTA_BYTE_ARRAY;
		return floe_pq_delta_strings(out, c->vals.data, c->vals.len);
	}
	*enc = FLOE_PQ_ENC_DELTA_LENGTH_BYTE_ARRAY;
	return floe_pq_delta_lengths(out, c->vals.data, c->vals.len);
}

/* Appends the open page's dictionary indices, RLE-encoded after their bit width. */
static int encode_indices(struct floe_pq_chunk *c, struct floe_buf *out)
{
	size_t nidx = c->idx.len / 4;
	uint32_t n = floe_pq_dict_count(&c->dict);
	int bw = floe_rle_bit_width(n - 1);
	if (bw == 0)
		bw = 1; /* some readers mishandle width 0 */
	int rc = floe_buf_putc(out, (uint8_t)bw);
	if (rc)
		return rc;
	struct floe_rle r;
	floe_rle_init(&r, out, bw);
	const uint8_t *ip = c->idx.data;
	for (size_t i = 0; i < nidx; i++) {
		uint32_t v;
		memcpy(&v, ip + 4 * i, 4);
		floe_rle_put(&r, v);
	}
	return floe_rle_flush(&r);
}

/* Writes the pages not yet streamed, if streaming is on and no dictionary page can
 * still be needed in front of them. */
static int flush_stream(struct floe_pq_chunk *c)
{
	if (!c->stream || c->dict_on || c->m.dict_pages > 0)
		return 0;
	for (; c->streamed < c->npages; c->streamed++) {
		struct floe_pq_page *pg = &c->pages[c->streamed];
		if (!pg->data)
			break; /* still being compressed: written when it is done */
		int rc = c->stream(c->stream_ctx, pg->data, pg->len);
		if (rc)
			return rc < 0 ? rc : FLOE_EINVAL;
		floe_free(c->alloc, pg->data);
		pg->data = NULL;
		c->held -= pg->len;
		c->moves++;
	}
	return 0;
}

int floe_pq_chunk_set_stream(struct floe_pq_chunk *c, floe_pq_sink_fn fn, void *ctx)
{
	c->stream = fn;
	c->stream_ctx = ctx;
	return flush_stream(c);
}

/* The chunk's statistics are the union of its pages': adds page pg's. */
static void merge_stats(struct floe_pq_chunk *c, const struct floe_pq_page *pg)
{
	if (!pg->has_minmax)
		return;
	if (c->o.ptype == FLOE_PQ_T_BYTE_ARRAY) {
		floe_pq_bound_merge_lower(&c->m.lo, &pg->lo);
		floe_pq_bound_merge_upper(&c->m.hi, &pg->hi);
	} else if (!c->m.has_minmax) {
		c->m.imin = pg->imin;
		c->m.imax = pg->imax;
	} else {
		if (pg->imin < c->m.imin)
			c->m.imin = pg->imin;
		if (pg->imax > c->m.imax)
			c->m.imax = pg->imax;
	}
	c->m.has_minmax = true;
}

void floe_pq_chunk_start_page(struct floe_pq_chunk *c)
{
	floe_buf_reset(&c->rep);
	floe_buf_reset(&c->def);
	floe_buf_reset(&c->vals);
	floe_buf_reset(&c->idx);
	floe_rle_init(&c->rep_rle, &c->rep, floe_rle_bit_width((uint32_t)c->o.max_rep));
	floe_rle_init(&c->def_rle, &c->def, floe_rle_bit_width((uint32_t)c->o.max_def));
	c->page_values = 0;
	c->page_nonnull = 0;
	c->page_nulls = 0;
	c->page_seq++;
	memset(&c->pst, 0, sizeof(c->pst));
	c->pst.first_row = c->rows;
	floe_pq_bound_clear(&c->pst.lo);
	floe_pq_bound_clear(&c->pst.hi);
}

int floe_pq_chunk_close_page(struct floe_pq_chunk *c)
{
	int rc;
	if (c->page_values == 0)
		return 0;
	if (c->npages == c->pages_cap) {
		size_t ncap = c->pages_cap ? c->pages_cap * 2 : 16;
		struct floe_pq_page *pg = floe_realloc(c->alloc, c->pages, ncap * sizeof(*pg));
		if (!pg)
			return FLOE_ENOMEM;
		c->pages = pg;
		c->pages_cap = ncap;
	}
	floe_buf_reset(c->body);
	struct v2_info v2 = {0};
	if (c->o.v2) {
		/* Levels without length prefixes, kept apart from the compressed values. */
		floe_buf_reset(&c->enc);
		if (c->o.max_rep && (rc = floe_rle_flush(&c->rep_rle)))
			return rc;
		if (c->o.max_def && (rc = floe_rle_flush(&c->def_rle)))
			return rc;
		if ((rc = floe_buf_append(&c->enc, c->rep.data, c->rep.len)) ||
		    (rc = floe_buf_append(&c->enc, c->def.data, c->def.len)))
			return rc;
		v2.levels = c->enc.data;
		v2.rep_len = c->rep.len;
		v2.def_len = c->def.len;
		v2.nulls = c->page_nulls;
		v2.rows = c->rows - c->pst.first_row;
	} else {
		if (c->o.max_rep && (rc = put_levels(c->body, &c->rep_rle)))
			return rc;
		if (c->o.max_def && (rc = put_levels(c->body, &c->def_rle)))
			return rc;
	}
	/* A page without values needs no dictionary: PLAIN with an empty value section. */
	bool dict = c->dict_on && c->idx.len > 0;
	int enc = ENC_RLE_DICTIONARY;
	/* PLAIN values with nothing before them (a required leaf, or a v2 page): the value
	 * buffer is the body, no copy needed. */
	bool direct = !dict && c->body->len == 0 && !c->o.delta;
	/* Delta-encoded strings with nothing before them are encoded in the value buffer
	 * itself, which then is the body: a second page-sized buffer would hold a copy. */
	bool in_place = !dict && c->body->len == 0 && c->o.delta &&
			c->o.ptype == FLOE_PQ_T_BYTE_ARRAY && c->vals.len > 0;
	rc = 0;
	if (dict)
		rc = encode_indices(c, c->body);
	else if (direct)
		enc = ENC_PLAIN;
	else if (in_place)
		rc = encode_strings_in_place(c, &enc);
	else
		rc = encode_values(c, c->body, &enc);
	if (rc)
		return rc;
	bool vals_body = direct || in_place; /* the value buffer holds the body */
	const uint8_t *src = vals_body ? c->vals.data : c->body->data;
	size_t srclen = vals_body ? c->vals.len : c->body->len;
	struct floe_pq_page *pg = &c->pages[c->npages];
	*pg = c->pst;
	pg->data = NULL;
	pg->len = 0;
	pg->null_count = c->page_nulls;
	rc = write_page(c, c->npages, c->o.v2 ? PAGE_DATA_V2 : PAGE_DATA, src, srclen,
			vals_body ? &c->vals : c->body, c->page_values, enc, c->o.v2 ? &v2 : NULL);
	if (rc)
		return rc;
	c->npages++;
	c->m.enc_pages[enc]++;
	if (dict)
		c->m.dict_pages++;
	else if (enc == ENC_PLAIN)
		c->m.plain_pages++;
	merge_stats(c, pg);
	floe_pq_chunk_start_page(c);
	return flush_stream(c);
}

int floe_pq_chunk_write_dict_page(struct floe_pq_chunk *c)
{
	return write_page(c, SIZE_MAX, PAGE_DICTIONARY, c->dict.plain.data, c->dict.plain.len, NULL,
			  floe_pq_dict_count(&c->dict), ENC_PLAIN, NULL);
}

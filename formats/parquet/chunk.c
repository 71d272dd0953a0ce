/* Column chunk writer, values in: levels go straight into RLE encoders, PLAIN values
 * straight into the page's value buffer, dictionary indices into an index array that is
 * RLE-encoded when the page closes (only then is the index bit width known); here too
 * are the dictionary's probe and its fall back to PLAIN, the open page's statistics and
 * the bloom filter. A page that closes goes out through chunk_page.c. Delta encodings
 * are made from the PLAIN buffer when the page closes, so the dictionary fallback works
 * the same in both profiles. */
#include "chunk_impl.h"

#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"
#include "formats/parquet/compress.h"
#include "formats/parquet/footer.h"

#include <string.h>

/* A page with values also closes after this many level entries. This bounds the index
 * array of a dictionary page (4 bytes per value while the page is open) and the PLAIN
 * buffer of 8-byte values to 32 and 64 KiB, a power of two so that they fill their
 * capacity: measured on 1,000,000 log rows, 8192 instead of parquet-java's 20000 costs
 * 0.1 % in file size and saves 0.4 MB of writer memory. Pages of nulls only take a few
 * bytes of levels and have no such limit. */
#define MAX_PAGE_VALUES 8192u
#define MAX_NULL_PAGE_VALUES (1u << 30)

/* After this many values in dictionary mode, a chunk whose values were mostly distinct
 * (timestamps, offsets, message text) stops using the dictionary: it would only cost
 * hashing and memory and end up larger than PLAIN. */
#define DICT_PROBE 4096u
#define DICT_RETRY 15u
#define DICT_PROBE_BYTES ((size_t)64 << 10)

void floe_pq_chunk_reset(struct floe_pq_chunk *c)
{
	floe_pq_dict_reset(&c->dict);
	c->page_seq++;
	c->dict_on = c->o.dict_cap > 0 && c->dict_skip == 0;
	if (c->dict_skip)
		c->dict_skip--;
	c->dict_seen = 0;
	for (size_t i = 0; i < c->npages; i++)
		floe_free(c->alloc, c->pages[i].data);
	c->npages = 0;
	floe_free(c->alloc, c->dict_page.data);
	c->dict_page.data = NULL;
	c->dict_page.len = 0;
	floe_pq_bloom_fini(&c->bloom);
	c->bloom_live = false;
	c->rows = 0;
	c->held = 0;
	c->moves++;
	c->stream = NULL;
	c->stream_ctx = NULL;
	c->streamed = 0;
	memset(&c->m, 0, sizeof(c->m));
	c->m.data_page_type = c->o.v2 ? PAGE_DATA_V2 : PAGE_DATA;
	floe_pq_bound_clear(&c->m.lo);
	floe_pq_bound_clear(&c->m.hi);
	floe_pq_chunk_start_page(c);
}

int floe_pq_chunk_new(struct floe_alloc *alloc, const struct floe_pq_chunk_opts *o,
		      struct floe_pq_compressor *comp, struct floe_buf *scratch,
		      struct floe_pq_chunk **out)
{
	struct floe_pq_chunk *c = floe_calloc(alloc, 1, sizeof(*c));
	if (!c)
		return FLOE_ENOMEM;
	c->alloc = alloc;
	c->o = *o;
	c->comp = comp;
	c->body = scratch;
	/* A page of fixed-width values closes after MAX_PAGE_VALUES entries at most (or holds
	 * no value but this one): its values take 8 * (MAX_PAGE_VALUES - 1) bytes at most
	 * before this one, its levels (no repetition: one bit each, RLE or bit-packed) less
	 * than 2 bytes for every 8. A page size of twice those values leaves make_room
	 * nothing to close. */
	c->fixed_fits = o->ptype != FLOE_PQ_T_BYTE_ARRAY && o->ptype != FLOE_PQ_T_BOOLEAN &&
			o->max_rep == 0 && o->page_size >= 2 * 8 * (size_t)MAX_PAGE_VALUES;
	c->bloom.alloc = alloc;
	floe_pq_dict_init(&c->dict, alloc,
			  o->ptype == FLOE_PQ_T_INT32 || o->ptype == FLOE_PQ_T_FLOAT	  ? 4
			  : o->ptype == FLOE_PQ_T_INT64 || o->ptype == FLOE_PQ_T_DOUBLE ? 8
											  : 0);
	/* Page sizes are i32 in the page header: no buffer may grow past that. */
	struct floe_buf *bufs[] = {&c->rep, &c->def, &c->vals, &c->idx, &c->hdr, &c->enc};
	for (size_t i = 0; i < sizeof(bufs) / sizeof(bufs[0]); i++)
		floe_buf_init(bufs[i], alloc, (size_t)INT32_MAX);
	floe_pq_chunk_reset(c);
	*out = c;
	return 0;
}

void floe_pq_chunk_free(struct floe_pq_chunk *c)
{
	if (!c)
		return;
	floe_pq_dict_fini(&c->dict);
	floe_pq_chunk_reset(c); /* frees the pages */
	floe_free(c->alloc, c->pages);
	struct floe_buf *bufs[] = {&c->rep, &c->def, &c->vals, &c->idx, &c->hdr, &c->enc};
	for (size_t i = 0; i < sizeof(bufs) / sizeof(bufs[0]); i++)
		floe_buf_fini(bufs[i]);
	floe_free(c->alloc, c);
}

static int fall_back(struct floe_pq_chunk *c);

/* The probe of dict_add, once more when the chunk's first page closes before it came to
 * a verdict (fewer than DICT_PROBE values and DICT_PROBE_BYTES): a chunk of a small file
 * whose values are mostly distinct goes PLAIN too. Its dictionary page would hold the
 * same bytes as the PLAIN page, and the indices would come on top: measured on the
 * loghub samples as they are (2,000 rows each), the offset column cost 6.0-6.5 KB with
 * the dictionary against 3.2-3.7 KB PLAIN (DuckDB's choice). */
static int probe_at_close(struct floe_pq_chunk *c)
{
	if (!c->dict_on || c->m.dict_pages > 0 || c->idx.len == 0 ||
	    floe_pq_dict_count(&c->dict) <= c->dict_seen / 4 * 3)
		return 0;
	c->dict_skip = DICT_RETRY;
	return fall_back(c);
}

/* Closes the open page (chunk_page.c), after the dictionary's verdict on it: the probe
 * runs here, not in chunk_page.c, so that chunk_page.c calls nothing of this file. */
static int close_page(struct floe_pq_chunk *c)
{
	if (c->page_values == 0)
		return 0;
	int rc = probe_at_close(c);
	return rc ? rc : floe_pq_chunk_close_page(c);
}

static const uint8_t *value_bytes(const struct floe_pq_chunk *c, const uint8_t *p, size_t *n)
{
	/* Dictionary entries of byte arrays carry their length prefix; the hash does not. */
	if (c->o.ptype == FLOE_PQ_T_BYTE_ARRAY) {
		*n -= 4;
		return p + 4;
	}
	return p;
}

/* Makes the bloom filter of size nbytes and puts every dictionary entry in it. */
static int bloom_from_dict(struct floe_pq_chunk *c, size_t nbytes)
{
	int rc = floe_pq_bloom_init(&c->bloom, c->alloc, nbytes);
	if (rc)
		return rc;
	uint32_t n = floe_pq_dict_count(&c->dict);
	for (uint32_t i = 0; i < n; i++) {
		const uint8_t *p;
		size_t len;
		floe_pq_dict_entry(&c->dict, i, &p, &len);
		p = value_bytes(c, p, &len);
		floe_pq_bloom_insert(&c->bloom, floe_pq_bloom_hash(p, len));
	}
	return 0;
}

/* The dictionary no longer counts the chunk's distinct values: from here on every value
 * goes into a filter sized from the configured estimate. */
static int bloom_go_live(struct floe_pq_chunk *c)
{
	uint64_t ndv = c->o.bloom_ndv;
	if (ndv < (uint64_t)floe_pq_dict_count(&c->dict) * 2)
		ndv = (uint64_t)floe_pq_dict_count(&c->dict) * 2;
	int rc = bloom_from_dict(c, floe_pq_bloom_size(ndv, c->o.bloom_max));
	if (!rc)
		c->bloom_live = true;
	return rc;
}

/* The dictionary is full: rewrite the open page's indices as PLAIN values and encode the
 * rest of the chunk PLAIN. Pages already written keep using the dictionary. */
static int fall_back(struct floe_pq_chunk *c)
{
	size_t nidx = c->idx.len / 4;
	for (size_t i = 0; i < nidx; i++) {
		uint32_t v;
		memcpy(&v, c->idx.data + 4 * i, 4);
		const uint8_t *p;
		size_t n;
		floe_pq_dict_entry(&c->dict, v, &p, &n);
		int rc = floe_buf_append(&c->vals, p, n);
		if (rc)
			return rc;
	}
	floe_buf_reset(&c->idx);
	if (c->o.bloom && !c->bloom_live) {
		int rc = bloom_go_live(c);
		if (rc)
			return rc;
	}
	c->dict_on = false;
	if (c->m.dict_pages == 0) {
		/* No page refers to it: no dictionary page, and its memory can go. */
		floe_pq_dict_fini(&c->dict);
		floe_pq_dict_init(&c->dict, c->alloc, c->dict.width);
	}
	return 0;
}

static inline void put_levels_of(struct floe_pq_chunk *c, int rep, int def)
{
	if (c->o.max_rep)
		floe_rle_put(&c->rep_rle, (uint32_t)rep);
	if (c->o.max_def)
		floe_rle_put(&c->def_rle, (uint32_t)def);
	c->page_values++;
	c->m.num_values++;
}

static inline int level_err(const struct floe_pq_chunk *c)
{
	return c->rep_rle.err ? c->rep_rle.err : c->def_rle.err;
}

/* The dictionary's probe, every 256 values: after DICT_PROBE values, or earlier once
 * the dictionary holds DICT_PROBE_BYTES (so that long distinct values cost little
 * memory), a chunk of mostly distinct values goes PLAIN. Out of line: 255 times out of
 * 256 it is not called. */
__attribute__((noinline)) static int probe_dict(struct floe_pq_chunk *c)
{
	if (floe_pq_dict_count(&c->dict) > c->dict_seen / 4 * 3 &&
	    (c->dict_seen >= DICT_PROBE || floe_pq_dict_bytes(&c->dict) >= DICT_PROBE_BYTES)) {
		c->dict_skip = DICT_RETRY;
		return fall_back(c); /* moves this value too into the PLAIN page */
	}
	return 0;
}

/* Appends dictionary index idx, of a value just found or added, to the open page. In
 * line: every value of a dictionary page takes it. */
__attribute__((always_inline)) static inline int put_index(struct floe_pq_chunk *c, uint32_t idx)
{
	int rc = floe_buf_append(&c->idx, &idx, 4);
	if (rc)
		return rc;
	return (++c->dict_seen & 255) == 0 ? probe_dict(c) : 0;
}

/* dict_add's work while the chunk is dictionary-encoding, out of line. */
__attribute__((noinline)) static int dict_put(struct floe_pq_chunk *c, const uint8_t *p, size_t n,
					      bool *added, bool *plain, uint32_t *pidx)
{
	uint32_t idx;
	int rc = floe_pq_dict_put(&c->dict, p, n, c->o.dict_cap, &idx, added);
	if (rc == FLOE_ELIMIT) {
		/* A dictionary that fills up has many distinct values (a map's values, URLs
		 * with ids): the next chunks would fill theirs too, hashing and copying their
		 * first values for a dictionary page and then falling back. They skip it, as
		 * after a probe, and try again now and then. */
		c->dict_skip = DICT_RETRY;
		return fall_back(c);
	}
	if (rc)
		return rc;
	*plain = false;
	*pidx = idx;
	return put_index(c, idx);
}

/* Adds the value (p, n) — PLAIN bytes for fixed widths — through the dictionary. Sets
 * *added when it is new to the dictionary, *plain when the caller must append it PLAIN.
 * The test of a PLAIN chunk inline: most of a file's values are in one. */
static inline int dict_add(struct floe_pq_chunk *c, const uint8_t *p, size_t n, bool *added,
			   bool *plain, uint32_t *pidx)
{
	*added = false;
	*plain = true;
	if (!c->dict_on)
		return c->o.bloom && !c->bloom_live ? bloom_go_live(c) : 0;
	return dict_put(c, p, n, added, plain, pidx);
}

static size_t open_page_bytes(const struct floe_pq_chunk *c);

/* In a leaf without repetition every value starts a row, so the page can close before a
 * value that would take it past page_size: page buffers then never outgrow the page
 * size (and its power-of-two capacity). Repeated leaves close pages in end_row. */
static int close_page_before(struct floe_pq_chunk *c, size_t n)
{
	if (open_page_bytes(c) + n <= c->o.page_size)
		return 0;
	return close_page(c);
}

/* The test inline, the sum out of line: most values are in dictionary pages. */
static inline int make_room(struct floe_pq_chunk *c, size_t n)
{
	if (c->o.max_rep || c->page_values == 0 || c->dict_on)
		return 0;
	return close_page_before(c, n);
}

/* A fixed-width value: the 8 bytes of bits (the low four of an INT32) are its PLAIN
 * form, key its place in the statistics' order. Inline in each put_ of a fixed width:
 * floe_pq_chunk_put_int is then the one call a value, out of the writer's row step
 * rather than inlined there around a call to this (49 instructions a line less on 100k
 * access lines). */
__attribute__((always_inline)) static inline int put_fixed(struct floe_pq_chunk *c, int rep,
							   uint64_t bits, int64_t key)
{
	int rc0 = c->fixed_fits ? 0 : make_room(c, 8);
	if (rc0)
		return rc0;
	put_levels_of(c, rep, c->o.max_def);
	uint8_t le[8];
	size_t w = (size_t)c->dict.width; /* 4 or 8: the dictionary's, set from ptype */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	/* The value's own bytes: one move. */
	memcpy(le, &bits, 8);
#else
	for (size_t i = 0; i < 8; i++)
		le[i] = (uint8_t)(bits >> (8 * i));
#endif
	struct floe_pq_page *s = &c->pst;
	if (!s->has_minmax) {
		s->imin = s->imax = key;
		s->has_minmax = true;
	} else if (key < s->imin) {
		s->imin = key;
	} else if (key > s->imax) {
		s->imax = key;
	}
	c->page_nonnull++;
	bool added, plain;
	uint32_t idx;
	int rc = dict_add(c, le, w, &added, &plain, &idx);
	/* Sizes the compiler can see: a plain move rather than a copy of unknown length. */
	if (!rc && plain)
		rc = w == 8 ? floe_buf_append(&c->vals, le, 8) : floe_buf_append(&c->vals, le, 4);
	if (!rc && c->bloom_live)
		floe_pq_bloom_insert(&c->bloom, floe_pq_bloom_hash(le, w));
	return rc ? rc : level_err(c);
}

int floe_pq_chunk_put_int(struct floe_pq_chunk *c, int rep, int64_t v)
{
	return put_fixed(c, rep, (uint64_t)v, v);
}

int floe_pq_chunk_put_double(struct floe_pq_chunk *c, int rep, double v)
{
	uint64_t bits;
	memcpy(&bits, &v, sizeof(bits));
	return put_fixed(c, rep, bits, floe_pq_double_key(bits));
}

int floe_pq_chunk_put_float(struct floe_pq_chunk *c, int rep, float v)
{
	uint32_t bits;
	memcpy(&bits, &v, sizeof(bits));
	return put_fixed(c, rep, bits, floe_pq_float_key(bits));
}

/* PLAIN booleans are bits, the first value in the lowest bit of the first byte. */
int floe_pq_chunk_put_bool(struct floe_pq_chunk *c, int rep, bool v)
{
	int rc = make_room(c, 1);
	if (rc)
		return rc;
	put_levels_of(c, rep, c->o.max_def);
	struct floe_pq_page *s = &c->pst;
	if (!s->has_minmax) {
		s->imin = s->imax = v;
		s->has_minmax = true;
	} else if (v < s->imin) {
		s->imin = v;
	} else if (v > s->imax) {
		s->imax = v;
	}
	unsigned bit = (unsigned)(c->page_nonnull % 8);
	if (bit == 0 && (rc = floe_buf_putc(&c->vals, 0)))
		return rc;
	if (v)
		c->vals.data[c->vals.len - 1] |= (uint8_t)(1u << bit);
	c->page_nonnull++;
	return level_err(c);
}

/* The order of (p, n) against bound b from their first bytes alone (up to 8, as one
 * number): -1 or 1, or 0 when those are equal and only the whole compare can say. */
static inline int head_order(const uint8_t *p, size_t n, const struct floe_pq_bound *b)
{
	if (n >= 8 && b->len >= 8) {
		uint64_t x, y;
		memcpy(&x, p, 8);
		memcpy(&y, b->v, 8);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		x = __builtin_bswap64(x);
		y = __builtin_bswap64(y);
#endif
		return x < y ? -1 : x > y;
	}
	if (n && b->len)
		return p[0] < b->v[0] ? -1 : p[0] > b->v[0];
	return 0;
}

/* The open page's statistics and the bloom filter take byte array (p, n), appended to
 * the page as dictionary index idx or, when plain, as PLAIN bytes. */
__attribute__((always_inline)) static inline void note_bytes(struct floe_pq_chunk *c, const uint8_t *p, size_t n, bool plain,
			      uint32_t idx)
{
	/* Every value counts for its page's bounds (the page index needs them), but a
	 * value the dictionary found, which the page has had before, changes nothing: logs
	 * repeat their host, source and app row after row. */
	bool seen = !plain && idx < sizeof(c->in_page) / sizeof(c->in_page[0]);
	if (seen && c->in_page[idx] == c->page_seq)
		return;
	if (seen)
		c->in_page[idx] = c->page_seq;
	/* A value above the lower bound and below the upper one changes neither: most
	 * values of a column are, and their first bytes say so. */
	if (!c->pst.lo.set || head_order(p, n, &c->pst.lo) <= 0)
		floe_pq_bound_lower(&c->pst.lo, p, n);
	if (!c->pst.hi.set || (!c->pst.hi.unbounded && head_order(p, n, &c->pst.hi) >= 0))
		floe_pq_bound_upper(&c->pst.hi, p, n);
	c->pst.has_minmax = true;
	if (c->bloom_live)
		floe_pq_bloom_insert(&c->bloom, floe_pq_bloom_hash(p, n));
}

int floe_pq_chunk_put_bytes(struct floe_pq_chunk *c, int rep, const uint8_t *p, size_t n)
{
	if (n > (size_t)INT32_MAX)
		return FLOE_ELIMIT;
	int rc0 = make_room(c, n + 4);
	if (rc0)
		return rc0;
	put_levels_of(c, rep, c->o.max_def);
	bool added, plain;
	uint32_t idx = 0;
	int rc = dict_add(c, p, n, &added, &plain, &idx);
	if (rc)
		return rc;
	c->page_nonnull++;
	note_bytes(c, p, n, plain, idx);
	if (plain) {
		/* The test that the value fits in line, the growth out of line. */
		if (n + 4 > c->vals.cap - c->vals.len && (rc = floe_buf_reserve(&c->vals, n + 4)))
			return rc;
		uint8_t *d = c->vals.data + c->vals.len;
		d[0] = (uint8_t)n;
		d[1] = (uint8_t)(n >> 8);
		d[2] = (uint8_t)(n >> 16);
		d[3] = (uint8_t)(n >> 24);
		if (n)
			memcpy(d + 4, p, n);
		c->vals.len += n + 4;
	}
	return level_err(c);
}

int floe_pq_chunk_put_known(struct floe_pq_chunk *c, int rep, const uint8_t *p, size_t n)
{
	uint32_t idx;
	if (!c->dict_on || !floe_pq_dict_find(&c->dict, p, n, &idx))
		return 0;
	/* What floe_pq_chunk_put_bytes does with a value its dictionary holds (make_room
	 * does nothing in a dictionary page), in the same order. */
	put_levels_of(c, rep, c->o.max_def);
	int rc = put_index(c, idx);
	if (rc)
		return rc;
	c->page_nonnull++;
	/* A fall back in put_index has moved the value into the PLAIN page: it counts as
	 * the dictionary's still, as in put_bytes. */
	note_bytes(c, p, n, false, idx);
	rc = level_err(c);
	return rc ? rc : 1;
}

/* The general case of floe_pq_chunk_put_null, out of line. */
__attribute__((noinline)) static int put_null_any(struct floe_pq_chunk *c, int rep, int def)
{
	put_levels_of(c, rep, def);
	c->m.null_count++;
	c->page_nulls++;
	return level_err(c);
}

int floe_pq_chunk_put_null(struct floe_pq_chunk *c, int rep, int def)
{
	/* Levels that continue runs of 8 or more: what put_null_any does, with the runs
	 * only counted (as floe_rle_put counts them), and without a call or a frame. Most
	 * nulls are: a column the format leaves empty (or a map it leaves empty), row
	 * after row. */
	struct floe_rle *r = &c->def_rle, *rr = &c->rep_rle;
	if (c->o.max_def && (uint32_t)def == r->cur && r->repeat >= 8 && !r->err &&
	    (!c->o.max_rep || ((uint32_t)rep == rr->cur && rr->repeat >= 8 && !rr->err))) {
		r->repeat++;
		if (c->o.max_rep)
			rr->repeat++;
		c->page_values++;
		c->m.num_values++;
		c->m.null_count++;
		c->page_nulls++;
		return c->rep_rle.err;
	}
	return put_null_any(c, rep, def);
}

static size_t open_page_bytes(const struct floe_pq_chunk *c)
{
	size_t n = c->rep.len + c->def.len + c->vals.len;
	if (c->idx.len) {
		int bw = floe_rle_bit_width(floe_pq_dict_count(&c->dict));
		n += (c->idx.len / 4) * (size_t)bw / 8 + 1;
	}
	return n;
}

int floe_pq_chunk_end_row_open(struct floe_pq_chunk *c, size_t *buffered, size_t *held,
			       size_t *open_out)
{
	c->rows++;
	size_t open = open_page_bytes(c);
	/* Pages of nulls only take a few bytes of levels: no row limit for them. */
	bool many = c->page_values >= MAX_PAGE_VALUES && c->page_nonnull > 0;
	if (many || c->page_values >= MAX_NULL_PAGE_VALUES || open >= c->o.page_size) {
		int rc = close_page(c);
		if (rc)
			return rc;
		open = open_page_bytes(c); /* the next page's: empty */
	}
	size_t dict = floe_pq_dict_bytes(&c->dict);
	if (buffered)
		*buffered = (size_t)c->m.unc_size + open + dict;
	if (held)
		*held = c->held;
	if (open_out)
		*open_out = open + dict;
	return 0;
}

uint32_t floe_pq_chunk_null_rows_room(const struct floe_pq_chunk *c, int *def)
{
	const struct floe_rle *r = &c->def_rle, *rr = &c->rep_rle;
	/* The conditions of put_null's counted path, for a null of rep 0... */
	if (!c->o.max_def || r->cur == (uint32_t)c->o.max_def || r->repeat < 8 || r->err)
		return 0;
	if (c->o.max_rep && (rr->cur != 0 || rr->repeat < 8 || rr->err))
		return 0;
	/* ... and end_row's for keeping the page open: the open bytes do not change with
	 * such nulls, the level entries do. */
	uint32_t most = c->page_nonnull > 0 ? MAX_PAGE_VALUES : MAX_NULL_PAGE_VALUES;
	if (c->page_values + 1 >= most || open_page_bytes(c) >= c->o.page_size)
		return 0;
	*def = (int)r->cur;
	return most - 1 - c->page_values;
}

void floe_pq_chunk_null_rows(struct floe_pq_chunk *c, uint32_t k)
{
	c->def_rle.repeat += k;
	if (c->o.max_rep)
		c->rep_rle.repeat += k;
	c->page_values += k;
	c->page_nulls += k;
	c->m.num_values += k;
	c->m.null_count += k;
	c->rows += k;
}

int floe_pq_chunk_end_row(struct floe_pq_chunk *c, size_t *buffered, size_t *held)
{
	return floe_pq_chunk_end_row_open(c, buffered, held, NULL);
}

size_t floe_pq_chunk_buffered(const struct floe_pq_chunk *c)
{
	return (size_t)c->m.unc_size + open_page_bytes(c) + floe_pq_dict_bytes(&c->dict);
}

size_t floe_pq_chunk_open_bytes(const struct floe_pq_chunk *c)
{
	return open_page_bytes(c) + floe_pq_dict_bytes(&c->dict);
}

int floe_pq_chunk_finish(struct floe_pq_chunk *c, struct floe_pq_chunk_meta *m,
			 const struct floe_pq_page **dict, const struct floe_pq_page **pages,
			 size_t *npages)
{
	int rc = close_page(c);
	if (rc)
		return rc;
	if (c->m.dict_pages > 0 && c->dict_page.len == 0) {
		if ((rc = floe_pq_chunk_write_dict_page(c)))
			return rc;
	}
	if (c->fly && (rc = floe_pq_compressor_sync(c->acomp)))
		return rc;
	if (c->dict_page.len) {
		c->m.dict_len = (int64_t)c->dict_page.len;
		c->m.dict_entries = (int32_t)floe_pq_dict_count(&c->dict);
	}
	/* A filter made when the dictionary stopped counting was sized from an estimate:
	 * now the values are all in, it shrinks to what they need. */
	if (c->bloom_live)
		floe_pq_bloom_shrink(&c->bloom);
	else if (c->o.bloom && c->bloom.bits == NULL && c->m.num_values > 0) {
		/* The dictionary held every distinct value: the filter's size is exact. */
		uint32_t n = floe_pq_dict_count(&c->dict);
		if ((rc = bloom_from_dict(c, floe_pq_bloom_size(n, c->o.bloom_max))))
			return rc;
	}
	*m = c->m;
	*dict = &c->dict_page;
	*pages = c->pages;
	*npages = c->npages;
	return 0;
}

const struct floe_pq_bloom *floe_pq_chunk_bloom(const struct floe_pq_chunk *c)
{
	return c->bloom.bits ? &c->bloom : NULL;
}

size_t floe_pq_chunk_held(const struct floe_pq_chunk *c)
{
	return c->held;
}

uint32_t floe_pq_chunk_moves(const struct floe_pq_chunk *c)
{
	return c->moves;
}


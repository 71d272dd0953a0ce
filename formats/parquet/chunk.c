/* Column chunk writer. Levels go straight into RLE encoders, PLAIN values straight into
 * the page's value buffer, dictionary indices into an index array that is RLE-encoded
 * when the page closes (only then is the index bit width known). */
#include "chunk.h"

#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"
#include "formats/parquet/compress.h"
#include "formats/parquet/crc32.h"
#include "formats/parquet/dict.h"
#include "formats/parquet/rle.h"
#include "formats/parquet/thrift.h"

#include <string.h>

/* Page types and encodings (parquet.thrift). */
enum { PAGE_DATA = 0, PAGE_DICTIONARY = 2 };
enum { ENC_PLAIN = 0, ENC_RLE = 3, ENC_RLE_DICTIONARY = 8 };

/* A page also closes after this many level entries (parquet-java's default page row
 * limit). This bounds the index array of a dictionary page (4 bytes per value while the
 * page is open) and keeps runs of nulls, which take almost no bytes, from making huge
 * pages. */
#define MAX_PAGE_VALUES 20000u

/* After this many values in dictionary mode, a chunk whose values were mostly distinct
 * (timestamps, offsets, message text) stops using the dictionary: it would only cost
 * hashing and memory and end up larger than PLAIN. */
#define DICT_PROBE 4096u

struct floe_pq_chunk {
	struct floe_alloc *alloc;
	struct floe_pq_chunk_opts o;
	struct floe_pq_compressor *comp;
	struct floe_pq_dict dict;
	bool dict_on; /* still dictionary-encoding this chunk */
	struct floe_buf rep, def, vals, idx, hdr;
	struct floe_buf *body;	    /* borrowed scratch */
	struct floe_pq_page *pages; /* finished data pages of this chunk */
	size_t npages, pages_cap;
	struct floe_pq_page dict_page;
	struct floe_rle rep_rle, def_rle;
	uint32_t page_values;
	uint32_t dict_seen; /* values that went through the dictionary in this chunk */
	struct floe_pq_chunk_meta m;
};

static void start_page(struct floe_pq_chunk *c)
{
	floe_buf_reset(&c->rep);
	floe_buf_reset(&c->def);
	floe_buf_reset(&c->vals);
	floe_buf_reset(&c->idx);
	floe_rle_init(&c->rep_rle, &c->rep, floe_rle_bit_width((uint32_t)c->o.max_rep));
	floe_rle_init(&c->def_rle, &c->def, floe_rle_bit_width((uint32_t)c->o.max_def));
	c->page_values = 0;
}

void floe_pq_chunk_reset(struct floe_pq_chunk *c)
{
	floe_pq_dict_reset(&c->dict);
	c->dict_on = c->o.dict_cap > 0;
	c->dict_seen = 0;
	for (size_t i = 0; i < c->npages; i++)
		floe_free(c->alloc, c->pages[i].data);
	c->npages = 0;
	floe_free(c->alloc, c->dict_page.data);
	c->dict_page.data = NULL;
	c->dict_page.len = 0;
	memset(&c->m, 0, sizeof(c->m));
	floe_pq_bound_clear(&c->m.lo);
	floe_pq_bound_clear(&c->m.hi);
	start_page(c);
}

struct floe_pq_chunk *floe_pq_chunk_new(struct floe_alloc *alloc,
					const struct floe_pq_chunk_opts *o,
					struct floe_pq_compressor *comp, struct floe_buf *scratch,
					int *err)
{
	struct floe_pq_chunk *c = floe_calloc(alloc, 1, sizeof(*c));
	if (!c) {
		*err = FLOE_ENOMEM;
		return NULL;
	}
	c->alloc = alloc;
	c->o = *o;
	c->comp = comp;
	c->body = scratch;
	floe_pq_dict_init(&c->dict, alloc,
			  o->ptype == FLOE_PQ_T_INT32	? 4
			  : o->ptype == FLOE_PQ_T_INT64 ? 8
							: 0);
	/* Page sizes are i32 in the page header: no buffer may grow past that. */
	struct floe_buf *bufs[] = {&c->rep, &c->def, &c->vals, &c->idx, &c->hdr};
	for (size_t i = 0; i < sizeof(bufs) / sizeof(bufs[0]); i++)
		floe_buf_init(bufs[i], alloc, (size_t)INT32_MAX);
	floe_pq_chunk_reset(c);
	return c;
}

void floe_pq_chunk_free(struct floe_pq_chunk *c)
{
	if (!c)
		return;
	floe_pq_dict_fini(&c->dict);
	floe_pq_chunk_reset(c); /* frees the pages */
	floe_free(c->alloc, c->pages);
	struct floe_buf *bufs[] = {&c->rep, &c->def, &c->vals, &c->idx, &c->hdr};
	for (size_t i = 0; i < sizeof(bufs) / sizeof(bufs[0]); i++)
		floe_buf_fini(bufs[i]);
	floe_free(c->alloc, c);
}

/* Compresses body and stores header + compressed body in *dst (a new block). */
static int write_page(struct floe_pq_chunk *c, struct floe_pq_page *dst, int type,
		      const uint8_t *body, size_t n, uint32_t num_values, int encoding)
{
	const uint8_t *z;
	size_t zn;
	int rc = floe_pq_compressor_run(c->comp, body, n, &z, &zn);
	if (rc)
		return rc;
	if (n > (size_t)INT32_MAX || zn > (size_t)INT32_MAX)
		return FLOE_ELIMIT;
	floe_buf_reset(&c->hdr);
	struct floe_thrift t;
	floe_thrift_init(&t, &c->hdr);
	floe_thrift_i32(&t, 1, type);
	floe_thrift_i32(&t, 2, (int32_t)n);
	floe_thrift_i32(&t, 3, (int32_t)zn);
	floe_thrift_i32(&t, 4, (int32_t)floe_pq_crc32(0, z, zn));
	if (type == PAGE_DATA) {
		floe_thrift_struct(&t, 5);
		floe_thrift_i32(&t, 1, (int32_t)num_values);
		floe_thrift_i32(&t, 2, encoding);
		floe_thrift_i32(&t, 3, ENC_RLE);
		floe_thrift_i32(&t, 4, ENC_RLE);
		floe_thrift_end(&t);
	} else {
		floe_thrift_struct(&t, 7);
		floe_thrift_i32(&t, 1, (int32_t)num_values);
		floe_thrift_i32(&t, 2, ENC_PLAIN);
		floe_thrift_bool(&t, 3, false);
		floe_thrift_end(&t);
	}
	floe_thrift_end(&t);
	if ((rc = floe_thrift_error(&t)))
		return rc;
	size_t hdr = c->hdr.len;
	uint8_t *p = floe_malloc(c->alloc, hdr + zn);
	if (!p)
		return FLOE_ENOMEM;
	memcpy(p, c->hdr.data, hdr);
	if (zn)
		memcpy(p + hdr, z, zn);
	dst->data = p;
	dst->len = hdr + zn;
	c->m.unc_size += (int64_t)(hdr + n);
	c->m.comp_size += (int64_t)(hdr + zn);
	return 0;
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

static int close_page(struct floe_pq_chunk *c)
{
	int rc;
	if (c->page_values == 0)
		return 0;
	floe_buf_reset(c->body);
	if (c->o.max_rep && (rc = put_levels(c->body, &c->rep_rle)))
		return rc;
	if (c->o.max_def && (rc = put_levels(c->body, &c->def_rle)))
		return rc;
	size_t nidx = c->idx.len / 4;
	/* A page without values needs no dictionary: PLAIN with an empty value section. */
	bool dict = c->dict_on && nidx > 0;
	if (dict) {
		uint32_t n = floe_pq_dict_count(&c->dict);
		int bw = floe_rle_bit_width(n - 1);
		if (bw == 0)
			bw = 1; /* some readers mishandle width 0 */
		if ((rc = floe_buf_putc(c->body, (uint8_t)bw)))
			return rc;
		struct floe_rle r;
		floe_rle_init(&r, c->body, bw);
		const uint8_t *ip = c->idx.data;
		for (size_t i = 0; i < nidx; i++) {
			uint32_t v;
			memcpy(&v, ip + 4 * i, 4);
			floe_rle_put(&r, v);
		}
		if ((rc = floe_rle_flush(&r)))
			return rc;
	} else if ((rc = floe_buf_append(c->body, c->vals.data, c->vals.len))) {
		return rc;
	}
	if (c->npages == c->pages_cap) {
		size_t ncap = c->pages_cap ? c->pages_cap * 2 : 16;
		struct floe_pq_page *pg = floe_realloc(c->alloc, c->pages, ncap * sizeof(*pg));
		if (!pg)
			return FLOE_ENOMEM;
		c->pages = pg;
		c->pages_cap = ncap;
	}
	rc = write_page(c, &c->pages[c->npages], PAGE_DATA, c->body->data, c->body->len,
			c->page_values, dict ? ENC_RLE_DICTIONARY : ENC_PLAIN);
	if (rc)
		return rc;
	c->npages++;
	if (dict)
		c->m.dict_pages++;
	else
		c->m.plain_pages++;
	start_page(c);
	return 0;
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
	c->dict_on = false;
	if (c->m.dict_pages == 0)
		floe_pq_dict_reset(&c->dict); /* no page refers to it: no dictionary page */
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

/* Adds the value (p, n) — PLAIN bytes for fixed widths — through the dictionary. Sets
 * *added when it is new to the dictionary, *plain when the caller must append it PLAIN. */
static int dict_add(struct floe_pq_chunk *c, const uint8_t *p, size_t n, bool *added, bool *plain)
{
	uint32_t idx;
	*added = false;
	*plain = true;
	if (!c->dict_on)
		return 0;
	int rc = floe_pq_dict_put(&c->dict, p, n, c->o.dict_cap, &idx, added);
	if (rc == FLOE_ELIMIT)
		return fall_back(c);
	if (rc)
		return rc;
	*plain = false;
	if ((rc = floe_buf_append(&c->idx, &idx, 4)))
		return rc;
	if (++c->dict_seen == DICT_PROBE && floe_pq_dict_count(&c->dict) > DICT_PROBE / 4 * 3)
		return fall_back(c); /* moves this value too into the PLAIN page */
	return 0;
}

int floe_pq_chunk_put_int(struct floe_pq_chunk *c, int rep, int64_t v)
{
	put_levels_of(c, rep, c->o.max_def);
	uint8_t le[8];
	size_t w = c->o.ptype == FLOE_PQ_T_INT32 ? 4 : 8;
	for (size_t i = 0; i < w; i++)
		le[i] = (uint8_t)((uint64_t)v >> (8 * i));
	if (!c->m.has_minmax) {
		c->m.imin = c->m.imax = v;
		c->m.has_minmax = true;
	} else if (v < c->m.imin) {
		c->m.imin = v;
	} else if (v > c->m.imax) {
		c->m.imax = v;
	}
	bool added, plain;
	int rc = dict_add(c, le, w, &added, &plain);
	if (!rc && plain)
		rc = floe_buf_append(&c->vals, le, w);
	return rc ? rc : level_err(c);
}

int floe_pq_chunk_put_bytes(struct floe_pq_chunk *c, int rep, const uint8_t *p, size_t n)
{
	if (n > (size_t)INT32_MAX)
		return FLOE_ELIMIT;
	put_levels_of(c, rep, c->o.max_def);
	bool added, plain;
	int rc = dict_add(c, p, n, &added, &plain);
	if (rc)
		return rc;
	/* With a dictionary only new entries can move the bounds. */
	if (added || plain) {
		floe_pq_bound_lower(&c->m.lo, p, n);
		floe_pq_bound_upper(&c->m.hi, p, n);
		c->m.has_minmax = true;
	}
	if (plain) {
		if ((rc = floe_buf_reserve(&c->vals, n + 4)))
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

int floe_pq_chunk_put_null(struct floe_pq_chunk *c, int rep, int def)
{
	put_levels_of(c, rep, def);
	c->m.null_count++;
	return level_err(c);
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

int floe_pq_chunk_end_row(struct floe_pq_chunk *c, size_t *buffered)
{
	size_t open = open_page_bytes(c);
	if (c->page_values >= MAX_PAGE_VALUES || open >= c->o.page_size) {
		int rc = close_page(c);
		if (rc)
			return rc;
		open = 0;
	}
	if (buffered)
		*buffered = (size_t)c->m.unc_size + open + floe_pq_dict_bytes(&c->dict);
	return 0;
}

size_t floe_pq_chunk_buffered(const struct floe_pq_chunk *c)
{
	return (size_t)c->m.unc_size + open_page_bytes(c) + floe_pq_dict_bytes(&c->dict);
}

int floe_pq_chunk_finish(struct floe_pq_chunk *c, struct floe_pq_chunk_meta *m,
			 const struct floe_pq_page **dict, const struct floe_pq_page **pages,
			 size_t *npages)
{
	int rc = close_page(c);
	if (rc)
		return rc;
	if (c->m.dict_pages > 0 && c->dict_page.len == 0) {
		rc = write_page(c, &c->dict_page, PAGE_DICTIONARY, c->dict.plain.data,
				c->dict.plain.len, floe_pq_dict_count(&c->dict), ENC_PLAIN);
		if (rc)
			return rc;
		c->m.dict_len = (int64_t)c->dict_page.len;
		c->m.dict_entries = (int32_t)floe_pq_dict_count(&c->dict);
	}
	*m = c->m;
	*dict = &c->dict_page;
	*pages = c->pages;
	*npages = c->npages;
	return 0;
}

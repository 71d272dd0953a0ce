/* One leaf column's chunk within the open row group: buffers values and levels into data
 * pages (v1, or v2 in the compact profile) of about page_size uncompressed bytes,
 * dictionary-encodes them until the dictionary outgrows its cap (then the rest of the
 * chunk is PLAIN, or delta-encoded in the compact profile), compresses each page as it
 * closes and keeps it, with its header, CRC and page-index statistics, until the row
 * group is written. Optionally builds the chunk's bloom filter. */
#ifndef FLOE_PQ_CHUNK_H
#define FLOE_PQ_CHUNK_H

#include "formats/parquet/bloom.h"
#include "formats/parquet/bound.h"
#include "formats/parquet/writer.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct floe_alloc;
struct floe_pq_compressor;
struct floe_buf;

/* Parquet physical types used here (parquet.thrift Type). */
enum {
	FLOE_PQ_T_BOOLEAN = 0,
	FLOE_PQ_T_INT32 = 1,
	FLOE_PQ_T_INT64 = 2,
	FLOE_PQ_T_FLOAT = 4,
	FLOE_PQ_T_DOUBLE = 5,
	FLOE_PQ_T_BYTE_ARRAY = 6
};

struct floe_pq_chunk_opts {
	int ptype;   /* FLOE_PQ_T_* */
	int max_def; /* 0..3 */
	int max_rep; /* 0..1 */
	size_t page_size;
	size_t dict_cap;    /* dictionary PLAIN bytes; 0 disables the dictionary */
	bool v2;	    /* DATA_PAGE_V2 pages */
	bool delta;	    /* DELTA_* encodings instead of PLAIN */
	bool bloom;	    /* build a bloom filter */
	uint32_t bloom_ndv; /* distinct values expected when the dictionary cannot count */
	size_t bloom_max;   /* filter size cap in bytes */
};

/* Encoding ids (parquet.thrift Encoding) that pages can use. */
enum {
	FLOE_PQ_ENC_PLAIN = 0,
	FLOE_PQ_ENC_RLE = 3,
	FLOE_PQ_ENC_DELTA_BINARY_PACKED = 5,
	FLOE_PQ_ENC_DELTA_LENGTH_BYTE_ARRAY = 6,
	FLOE_PQ_ENC_DELTA_BYTE_ARRAY = 7,
	FLOE_PQ_ENC_RLE_DICTIONARY = 8,
	FLOE_PQ_NENC = 9,
};

/* What the footer needs to know about a finished chunk. */
struct floe_pq_chunk_meta {
	int64_t num_values; /* level entries, nulls included */
	int64_t null_count;
	int64_t unc_size;  /* headers + uncompressed bodies, dictionary page included */
	int64_t comp_size; /* bytes in the file */
	int64_t dict_len;  /* bytes of the dictionary page at the chunk start; 0 = none */
	int32_t dict_entries;
	int32_t dict_pages;		 /* data pages encoded RLE_DICTIONARY */
	int32_t plain_pages;		 /* data pages encoded PLAIN */
	int32_t enc_pages[FLOE_PQ_NENC]; /* data pages per encoding id */
	int data_page_type;		 /* 0 DATA_PAGE or 3 DATA_PAGE_V2 */
	bool has_minmax;
	/* INT32/INT64, BOOLEAN as 0/1, DOUBLE and FLOAT as floe_pq_double_key's and
	 * floe_pq_float_key's order-keeping integers (floe_pq_stat_bytes turns them back
	 * into values). */
	int64_t imin, imax;
	struct floe_pq_bound lo, hi; /* BYTE_ARRAY */
};

/* One finished page: header + compressed body, as it goes into the file, and what the
 * page index says about it (data pages only). */
struct floe_pq_page {
	uint8_t *data;
	size_t len;
	int64_t first_row; /* within the chunk */
	int64_t null_count;
	bool has_minmax; /* false: every entry was null (a null page) */
	int64_t imin, imax;
	struct floe_pq_bound lo, hi;
};

struct floe_pq_chunk;

/* A new chunk in *out (owned by the caller; free with floe_pq_chunk_free). comp and
 * scratch (where page bodies are assembled) are borrowed, may be shared by the chunks of
 * one writer, and must outlive the chunk. Returns 0 or FLOE_ENOMEM. */
int floe_pq_chunk_new(struct floe_alloc *alloc, const struct floe_pq_chunk_opts *o,
		      struct floe_pq_compressor *comp, struct floe_buf *scratch,
		      struct floe_pq_chunk **out);
/* NULL is a no-op. */
void floe_pq_chunk_free(struct floe_pq_chunk *c);

/* Appends one level entry. A value is present iff def == max_def: then use _int or
 * _bytes; otherwise _null. Bytes are borrowed. */
int floe_pq_chunk_put_int(struct floe_pq_chunk *c, int rep, int64_t v);
/* DOUBLE leaves: v must not be NaN (the writer refuses it before). */
int floe_pq_chunk_put_double(struct floe_pq_chunk *c, int rep, double v);
int floe_pq_chunk_put_float(struct floe_pq_chunk *c, int rep, float v);
/* BOOLEAN leaves (PLAIN, bit-packed; no dictionary, no bloom filter). */
int floe_pq_chunk_put_bool(struct floe_pq_chunk *c, int rep, bool v);
int floe_pq_chunk_put_bytes(struct floe_pq_chunk *c, int rep, const uint8_t *p, size_t n);
/* A byte array the chunk's dictionary already holds, put as floe_pq_chunk_put_bytes puts
 * it: returns 1 then, 0 (having done nothing) when the chunk is PLAIN or the value is not
 * in its dictionary, or a negative error. The writer checks a string's UTF-8 only when
 * this returns 0: an entry was checked before it was added, so a value equal to it needs
 * no check. p is borrowed. */
int floe_pq_chunk_put_known(struct floe_pq_chunk *c, int rep, const uint8_t *p, size_t n);
int floe_pq_chunk_put_null(struct floe_pq_chunk *c, int rep, int def);
/* Marks the end of a row: the page is closed here if it reached page_size, so pages
 * always start at a row boundary. *buffered (if not NULL) receives
 * floe_pq_chunk_buffered(c) afterwards, *held (if not NULL) the bytes of finished pages
 * held in memory. */
int floe_pq_chunk_end_row(struct floe_pq_chunk *c, size_t *buffered, size_t *held);
/* The same, and *open receives floe_pq_chunk_open_bytes(c) afterwards (what the row
 * computes anyway: the writer's size estimate takes it from here, once a row, rather
 * than asking every chunk again). */
int floe_pq_chunk_end_row_open(struct floe_pq_chunk *c, size_t *buffered, size_t *held,
			       size_t *open);
/* After end_row: how many rows of a single null (rep 0, def *def) from now on would only
 * be counted, with nothing encoded, no page closed and no size changed: those that
 * lengthen runs of levels 8 long or more, up to the one that would close the page. 0
 * (and *def untouched) when the next such null would do more. The writer holds back
 * that many rows of nulls of a leaf and gives them to floe_pq_chunk_null_rows later. */
uint32_t floe_pq_chunk_null_rows_room(const struct floe_pq_chunk *c, int *def);
/* Takes k rows of a null each at the def the room was given for, each then ended, as k
 * floe_pq_chunk_put_null and floe_pq_chunk_end_row would: k at most that room. */
void floe_pq_chunk_null_rows(struct floe_pq_chunk *c, uint32_t k);
/* Bytes of finished pages held in memory. */
size_t floe_pq_chunk_held(const struct floe_pq_chunk *c);
/* A number that changes whenever held or the finished pages' part of buffered may have
 * (a page closed, compressed or streamed, a reset): while it stays, only the open bytes
 * (floe_pq_chunk_open_bytes) can change buffered. */
uint32_t floe_pq_chunk_moves(const struct floe_pq_chunk *c);
/* Uncompressed bytes buffered so far (pages, open page, dictionary). */
size_t floe_pq_chunk_buffered(const struct floe_pq_chunk *c);
/* Uncompressed bytes not yet in a finished page: the open page and the dictionary. */
size_t floe_pq_chunk_open_bytes(const struct floe_pq_chunk *c);

/* Closes the chunk: fills *m and exposes its bytes: the dictionary page (len 0 if there
 * is none), then the npages data pages in order. Each page is its own exact-size block,
 * so a chunk holds no slack from buffer doubling. Valid until floe_pq_chunk_reset. */
int floe_pq_chunk_finish(struct floe_pq_chunk *c, struct floe_pq_chunk_meta *m,
			 const struct floe_pq_page **dict, const struct floe_pq_page **pages,
			 size_t *npages);
/* Lets the chunk write its finished pages straight to fn(ctx, data, len) instead of
 * holding them until the row group is written, from the moment its encoding no longer
 * needs a dictionary page before them (at once, if that is already so). Pages written
 * this way are left in the page list with data NULL (their len and statistics stay).
 * Only one chunk of a row group may stream, and its pages then come first in the row
 * group. Cleared by reset. Returns 0 or fn's error. */
int floe_pq_chunk_set_stream(struct floe_pq_chunk *c, floe_pq_sink_fn fn, void *ctx);
/* Compresses the chunk's pages (all but the smallest) through acomp (borrowed, shared
 * by the writer's chunks, an offload set on it), so that encoding goes on while they
 * compress. Pages may then still be in flight after end_row: finish completes them, and
 * a page's slot has data NULL until then. Before freeing the chunk, drop acomp's jobs.
 * caller_runs: a page that would wait for acomp's queue is compressed here instead. */
void floe_pq_chunk_set_async(struct floe_pq_chunk *c, struct floe_pq_compressor *acomp,
			     bool caller_runs);
/* Most bytes the pages in flight can add to held once done (none for those that will be
 * streamed), and to buffered (their headers): 0 when no page is in flight. */
void floe_pq_chunk_in_flight(const struct floe_pq_chunk *c, size_t *held, size_t *buffered);
/* After finish: the chunk's bloom filter, or NULL when it has none. Valid until reset. */
const struct floe_pq_bloom *floe_pq_chunk_bloom(const struct floe_pq_chunk *c);
/* Starts a new chunk (the next row group): frees the pages, keeps the other storage. */
void floe_pq_chunk_reset(struct floe_pq_chunk *c);

#endif

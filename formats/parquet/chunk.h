/* One leaf column's chunk within the open row group: buffers values and levels into v1
 * data pages of about page_size uncompressed bytes, dictionary-encodes them until the
 * dictionary outgrows its cap (then the rest of the chunk is PLAIN), compresses each page
 * as it closes and keeps it, with its header and CRC, until the row group is written. */
#ifndef FLOE_PQ_CHUNK_H
#define FLOE_PQ_CHUNK_H

#include "formats/parquet/bound.h"
#include "formats/parquet/writer.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct floe_alloc;
struct floe_pq_compressor;
struct floe_buf;

/* Parquet physical types used here (parquet.thrift Type). */
enum { FLOE_PQ_T_INT32 = 1, FLOE_PQ_T_INT64 = 2, FLOE_PQ_T_BYTE_ARRAY = 6 };

struct floe_pq_chunk_opts {
	int ptype;   /* FLOE_PQ_T_* */
	int max_def; /* 0..3 */
	int max_rep; /* 0..1 */
	size_t page_size;
	size_t dict_cap; /* dictionary PLAIN bytes; 0 disables the dictionary */
};

/* What the footer needs to know about a finished chunk. */
struct floe_pq_chunk_meta {
	int64_t num_values; /* level entries, nulls included */
	int64_t null_count;
	int64_t unc_size;  /* headers + uncompressed bodies, dictionary page included */
	int64_t comp_size; /* bytes in the file */
	int64_t dict_len;  /* bytes of the dictionary page at the chunk start; 0 = none */
	int32_t dict_entries;
	int32_t dict_pages;  /* data pages encoded RLE_DICTIONARY */
	int32_t plain_pages; /* data pages encoded PLAIN */
	bool has_minmax;
	int64_t imin, imax;	     /* INT32/INT64 */
	struct floe_pq_bound lo, hi; /* BYTE_ARRAY */
};

/* One finished page: header + compressed body, as it goes into the file. */
struct floe_pq_page {
	uint8_t *data;
	size_t len;
};

struct floe_pq_chunk;

/* comp and scratch (where page bodies are assembled) are borrowed, may be shared by
 * the chunks of one writer, and must outlive the chunk. */
struct floe_pq_chunk *floe_pq_chunk_new(struct floe_alloc *alloc,
					const struct floe_pq_chunk_opts *o,
					struct floe_pq_compressor *comp, struct floe_buf *scratch,
					int *err);
void floe_pq_chunk_free(struct floe_pq_chunk *c);

/* Appends one level entry. A value is present iff def == max_def: then use _int or
 * _bytes; otherwise _null. Bytes are borrowed. */
int floe_pq_chunk_put_int(struct floe_pq_chunk *c, int rep, int64_t v);
int floe_pq_chunk_put_bytes(struct floe_pq_chunk *c, int rep, const uint8_t *p, size_t n);
int floe_pq_chunk_put_null(struct floe_pq_chunk *c, int rep, int def);
/* Marks the end of a row: the page is closed here if it reached page_size, so pages
 * always start at a row boundary. *buffered (if not NULL) receives
 * floe_pq_chunk_buffered(c) afterwards. */
int floe_pq_chunk_end_row(struct floe_pq_chunk *c, size_t *buffered);
/* Uncompressed bytes buffered so far (pages, open page, dictionary). */
size_t floe_pq_chunk_buffered(const struct floe_pq_chunk *c);

/* Closes the chunk: fills *m and exposes its bytes: the dictionary page (len 0 if there
 * is none), then the npages data pages in order. Each page is its own exact-size block,
 * so a chunk holds no slack from buffer doubling. Valid until floe_pq_chunk_reset. */
int floe_pq_chunk_finish(struct floe_pq_chunk *c, struct floe_pq_chunk_meta *m,
			 const struct floe_pq_page **dict, const struct floe_pq_page **pages,
			 size_t *npages);
/* Starts a new chunk (the next row group): frees the pages, keeps the other storage. */
void floe_pq_chunk_reset(struct floe_pq_chunk *c);

#endif

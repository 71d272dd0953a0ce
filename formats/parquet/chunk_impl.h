/* The column chunk writer's state, shared by chunk.c (values in: levels, the dictionary,
 * statistics and bloom filter of the open page) and chunk_page.c (pages out: encoding,
 * compression, headers and streaming of a page that closes). Private to formats/parquet. */
#ifndef FLOE_PQ_CHUNK_IMPL_H
#define FLOE_PQ_CHUNK_IMPL_H

#include "formats/base/buf.h"
#include "formats/parquet/bloom.h"
#include "formats/parquet/chunk.h"
#include "formats/parquet/dict.h"
#include "formats/parquet/rle.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Page types and encodings (parquet.thrift). */
enum { PAGE_DATA = 0, PAGE_DICTIONARY = 2, PAGE_DATA_V2 = 3 };
enum {
	ENC_PLAIN = FLOE_PQ_ENC_PLAIN,
	ENC_RLE = FLOE_PQ_ENC_RLE,
	ENC_RLE_DICTIONARY = FLOE_PQ_ENC_RLE_DICTIONARY
};

struct floe_pq_chunk {
	struct floe_alloc *alloc;
	struct floe_pq_chunk_opts o;
	struct floe_pq_compressor *comp;
	struct floe_pq_dict dict;
	bool dict_on; /* still dictionary-encoding this chunk */
	bool fixed_fits; /* its fixed-width values never fill a page (see floe_pq_chunk_new) */
	uint64_t last_n, last_zn; /* its last page's body, before and after compression */
	struct floe_buf rep, def, vals, idx, hdr, enc;
	struct floe_buf *body;	    /* borrowed scratch */
	struct floe_pq_page *pages; /* finished data pages of this chunk */
	size_t npages, pages_cap;
	struct floe_pq_page dict_page;
	struct floe_rle rep_rle, def_rle;
	uint32_t page_values;
	uint32_t dict_seen; /* values that went through the dictionary in this chunk */
	/* Chunks left to write without a dictionary: after a chunk found its values mostly
	 * distinct, the next ones skip the probe (its hashing and its memory), and try again
	 * only now and then in case the data changed. */
	uint32_t dict_skip;
	struct floe_pq_chunk_meta m;
	struct floe_pq_page pst; /* statistics of the open page */
	/* Dictionary entries (the first 64) already counted in the open page's bounds (and
	 * bloom filter): in_page[idx] == page_seq. page_seq changes with every page and
	 * every reset of the dictionary, so a stamp never outlives its page or its entry. */
	uint32_t page_seq;
	uint32_t in_page[64];
	int64_t rows;		 /* rows ended in this chunk */
	int64_t page_nonnull;	 /* values (not nulls) in the open page */
	int64_t page_nulls;
	struct floe_pq_bloom bloom;
	bool bloom_live;	/* the filter exists and takes every value as it comes */
	size_t held;		/* bytes of finished pages */
	uint32_t moves;		/* changes of held and m.unc_size (floe_pq_chunk_moves) */
	floe_pq_sink_fn stream; /* see floe_pq_chunk_set_stream */
	void *stream_ctx;
	size_t streamed; /* pages already written through stream */
	struct floe_pq_compressor *acomp; /* see floe_pq_chunk_set_async */
	bool caller_runs;
	size_t fly;			  /* pages of this chunk queued on acomp */
	size_t fly_held;		  /* their blocks' sizes, when they will be held */
};

/* Starts the next page of the chunk: empties the page buffers and its statistics
 * (chunk_page.c). */
void floe_pq_chunk_start_page(struct floe_pq_chunk *c);
/* Closes the open page, if it has values: encodes and compresses it into the chunk's
 * page list (or hands it to the asynchronous compressor), adds its statistics to the
 * chunk's and starts the next page. chunk.c runs the dictionary's probe first (its
 * verdict, if the probe of the values has not come to one yet). */
int floe_pq_chunk_close_page(struct floe_pq_chunk *c);
/* Writes the dictionary page (the dictionary is copied: it stays, for the bloom filter). */
int floe_pq_chunk_write_dict_page(struct floe_pq_chunk *c);

#endif

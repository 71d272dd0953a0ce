/* The streaming Parquet writer's state, shared by writer.c (options, leaves, the file's
 * frame and footer), writer_row.c (rows), writer_memory.c (the memory a writer needs,
 * which reads the profile defaults) and rowgroup.c (writing row groups). Private to
 * formats/parquet. */
#ifndef FLOE_PQ_WRITER_IMPL_H
#define FLOE_PQ_WRITER_IMPL_H

#include "formats/base/buf.h"
#include "formats/parquet/bound.h"
#include "formats/parquet/footer.h"
#include "formats/parquet/writer.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

/* Whether a column of kind k is a map: two leaves, key and value, under a MAP group. */
static inline bool is_map(enum floe_pq_kind k)
{
	return k == FLOE_PQ_MAP_STRING || k == FLOE_PQ_MAP_STRING_LONG;
}

struct floe_pq_chunk;
struct floe_pq_compressor;

/* A leaf's bytes, or their sums over the leaves: open (open page and dictionary), held,
 * unc (the rest of what floe_pq_chunk_buffered counts) and those of pages in flight
 * (floe_pq_chunk_in_flight). */
struct leaf_sums {
	size_t unc, held, open, fly_held, fly_buf;
};

struct leaf {
	struct floe_pq_chunk *chunk;
	/* The row step (writer_row.c): the column's kind (on its first leaf); rows of a
	 * null the chunk has not been given yet (lazy), and the most it can be spared
	 * (room, from floe_pq_chunk_null_rows_room) at definition level lazy_def; its bytes
	 * as last summed, of which all but open only change when its chunk's moves does. */
	int kind;
	uint32_t lazy, room;
	int lazy_def;
	uint32_t moves;
	struct leaf_sums s;
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
	/* The leaves' part of floe_pq_writer_size_estimate (held, open and in-flight bytes),
	 * summed by add_row as it ends the row in each chunk; valid while est_ok, which
	 * anything that moves pages after that sum clears (completions, a sync, the stream
	 * leaf's pick, a row group written, an error). */
	uint64_t est_leaves;
	bool est_ok;
	/* The leaves' bytes as last summed, valid while sums_ok; and the leaves a row
	 * reaches (2 * nleaves room, see writer_row.c). */
	struct leaf_sums sums;
	bool sums_ok;
	struct leaf **touched;
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

/* Hands n bytes to the sink and counts them in written (rowgroup.c, which writer.c
 * calls and which calls nothing of writer.c). */
int floe_pq_writer_emit(struct floe_pq_writer *w, const void *p, size_t n);
/* Writes the open row group (nothing when it has no rows) and starts the next; first
 * gives the leaves' chunks the rows of nulls add_row held back. */
int floe_pq_writer_flush_row_group(struct floe_pq_writer *w);
/* Fills w->stats, the whole file's statistics per leaf, once the last row group is out. */
int floe_pq_writer_build_stats(struct floe_pq_writer *w);

#endif

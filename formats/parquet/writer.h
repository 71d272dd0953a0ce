/* Streaming Parquet file writer. The caller declares a flat schema of top-level columns
 * (primitive columns and map<string,string> columns), appends rows, and receives the file
 * bytes through a sink callback as pages and row groups close, so memory is bounded by
 * the row group size or the memory budget and never by the file size. After finish,
 * per-leaf statistics are available for Iceberg manifests. Pure: the sink does the I/O. */
#ifndef FLOE_PQ_WRITER_H
#define FLOE_PQ_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct floe_alloc;

enum floe_pq_kind {
	FLOE_PQ_INT32,      /* Iceberg int */
	FLOE_PQ_INT64,      /* Iceberg long */
	FLOE_PQ_TIMESTAMPTZ, /* INT64, TIMESTAMP(isAdjustedToUTC=true, MICROS) */
	FLOE_PQ_STRING,     /* BYTE_ARRAY, STRING; values must be valid UTF-8 */
	FLOE_PQ_MAP_STRING, /* map<string,string>: 3-level MAP group, key + optional value */
	/* The aggregate tables' kinds (agent/schema/aggtable.h). */
	FLOE_PQ_DOUBLE,	      /* Iceberg double: DOUBLE */
	FLOE_PQ_BOOLEAN,      /* Iceberg boolean: BOOLEAN */
	FLOE_PQ_BINARY,	      /* Iceberg binary: BYTE_ARRAY without a logical type, any bytes */
	FLOE_PQ_MAP_STRING_LONG, /* map<string,long>: as MAP_STRING, INT64 values */
	/* Typed columns' further kinds. */
	FLOE_PQ_FLOAT, /* Iceberg float: FLOAT (the value in d, rounded to single precision) */
	FLOE_PQ_DATE,  /* Iceberg date: INT32 DATE, days since 1970-01-01 (the value in i) */
};

enum floe_pq_codec {
	FLOE_PQ_UNCOMPRESSED = 0,
	FLOE_PQ_ZSTD = 6,
	FLOE_PQ_LZ4_RAW = 7,
};

struct floe_pq_column {
	const char *name;
	int32_t field_id;
	enum floe_pq_kind kind;
	bool optional;
	/* FLOE_PQ_MAP_STRING only: field ids of the key and value leaves. */
	int32_t key_field_id;
	int32_t value_field_id;
};

struct floe_pq_kv {
	const char *key;
	const char *value;
};

/* Encoding profiles. DEFAULT is what every reader handles: v1 data pages, PLAIN and
 * RLE_DICTIONARY. COMPACT (opt-in, some Iceberg readers lack it) uses DATA_PAGE_V2 pages,
 * DELTA_BINARY_PACKED for integers and timestamps and DELTA_LENGTH_BYTE_ARRAY for strings
 * whenever the dictionary does not pay, and its own measured defaults for the ZSTD level
 * and page size. */
enum floe_pq_profile {
	FLOE_PQ_PROFILE_DEFAULT = 0,
	FLOE_PQ_PROFILE_COMPACT = 1,
};

/* A split-block bloom filter on one column (string or integer leaf). */
struct floe_pq_bloom_column {
	int32_t field_id; /* a primitive column's field id (not a map's) */
	uint32_t ndv;	  /* expected distinct values per row group when the dictionary
			   * cannot count them; 0 = 100000 */
};

/* Somewhere else to compress pages: another thread, typically. The writer stays pure: it
 * hands run(arg) to submit, keeps on encoding the next page, and calls wait before it
 * needs the result. At most one task per writer is in flight. submit returns 0, or an
 * error and the writer then runs the task itself; *handle is what wait gets. */
struct floe_pq_offload {
	void *ctx;
	int (*submit)(void *ctx, void (*run)(void *arg), void *arg, void **handle);
	void (*wait)(void *ctx, void *handle);
};

struct floe_pq_options {
	enum floe_pq_codec codec;
	int zstd_level;               /* 0 = the profile's default (DEFAULT 3, COMPACT 6) */
	size_t page_size;             /* uncompressed data page target; 0 = 512 KiB */
	size_t row_group_size;        /* uncompressed bytes per row group; 0 = 64 MiB */
	size_t dictionary_cap;        /* per column chunk dictionary bytes; 0 = 1 MiB */
	const char *created_by;       /* e.g. "floe version 0.1.0" */
	const struct floe_pq_kv *kv;  /* footer key/value metadata (copied), may be NULL */
	size_t kv_count;
	/* Added later; zero keeps the earlier behaviour. */
	enum floe_pq_profile profile;
	/* Closes the open row group once its finished, compressed pages held in memory
	 * reach this many bytes. (A column chunk must be contiguous, so pages wait for
	 * their row group, except those of the one leaf that holds the most, which go to
	 * the sink as they are made, its chunk first in the row group.) With it, the
	 * writer's memory no longer depends on the row group or file size; 1 MiB keeps a
	 * log writer within about 5 MiB. 0 = no limit (row_group_size only). */
	size_t memory_budget;
	const struct floe_pq_bloom_column *bloom; /* copied; may be NULL */
	size_t bloom_count;
	size_t bloom_max_bytes;       /* cap per filter (power of two); 0 = 1 MiB */
	bool no_page_index;           /* true = no ColumnIndex/OffsetIndex */
	/* Compress pages through this (borrowed; must outlive the writer); NULL = inline.
	 * Costs one more page-sized buffer, the copy of the page being compressed. */
	const struct floe_pq_offload *offload;
};

/* One cell. For STRING and BINARY: s/len. For INT32/INT64/TIMESTAMPTZ: i; for BOOLEAN, i
 * != 0; for DOUBLE: d. For MAP_STRING: n pairs in keys/key_lens and vals/val_lens (a NULL
 * vals[i] is a null value); for MAP_STRING_LONG: n pairs in keys/key_lens and ivals (never
 * null). is_null is only allowed on optional columns. Borrowed: the writer copies what it
 * keeps. */
struct floe_pq_value {
	bool is_null;
	int64_t i;
	const char *s;
	size_t len;
	size_t n;
	const char *const *keys;
	const size_t *key_lens;
	const char *const *vals;
	const size_t *val_lens;
	double d;
	const int64_t *ivals;
};

/* Makes *v a value with every field zero but is_null. Callers fill every cell of every
 * row, so this is written field by field: gcc -O2 turns a memset or a struct assignment
 * of this size into a `rep stos`, whose start-up costs more than the vector stores these
 * become. A field added to the struct must be added here (the assertion checks that
 * ivals is still the last one: what follows it is the struct's tail padding alone, less
 * than its alignment, which a 32-bit ABI that aligns double to 8 leaves there). */
static inline void floe_pq_value_init(struct floe_pq_value *v, bool is_null)
{
	v->is_null = is_null;
	v->i = 0;
	v->s = NULL;
	v->len = 0;
	v->n = 0;
	v->keys = NULL;
	v->key_lens = NULL;
	v->vals = NULL;
	v->val_lens = NULL;
	v->d = 0;
	v->ivals = NULL;
}
_Static_assert(sizeof(struct floe_pq_value) - offsetof(struct floe_pq_value, ivals) -
			   sizeof(const int64_t *) <
		   _Alignof(struct floe_pq_value),
	       "floe_pq_value_init sets every field");

/* Receives the file's bytes in order. Returns 0, or a negative error that aborts the
 * write and is returned by the writer call that triggered it. */
typedef int (*floe_pq_sink_fn)(void *ctx, const void *data, size_t len);

/* Statistics of one leaf column over the whole file, for Iceberg metrics. min/max are
 * the PLAIN bytes of the value (8-byte LE for INT64/TIMESTAMPTZ, 4-byte LE for INT32, raw
 * UTF-8 for strings), absent when every value was null. */
struct floe_pq_leaf_stats {
	int32_t field_id;
	uint64_t compressed_size;  /* sum of total_compressed_size over row groups */
	uint64_t value_count;      /* values including nulls (leaf level for maps) */
	uint64_t null_count;
	bool has_min_max;
	const uint8_t *min;
	size_t min_len;
	const uint8_t *max;
	size_t max_len;
};

struct floe_pq_writer;

/* Creates a writer for ncols columns (the array and its strings are copied) in *out
 * (owned by the caller; free with floe_pq_writer_free). Returns 0, FLOE_EINVAL (bad
 * columns or options), FLOE_EUNSUPPORTED (codec) or FLOE_ENOMEM. alloc is borrowed and
 * must outlive the writer. */
int floe_pq_writer_new(struct floe_alloc *alloc, const struct floe_pq_column *cols, size_t ncols,
		       const struct floe_pq_options *opt, floe_pq_sink_fn sink, void *sink_ctx,
		       struct floe_pq_writer **out);
/* Appends one row: values has one entry per column, in declaration order. Invalid UTF-8
 * in STRING values is replaced with U+FFFD and counted (floe_pq_writer_replaced). May
 * emit bytes to the sink when a row group closes. */
int floe_pq_writer_add_row(struct floe_pq_writer *w, const struct floe_pq_value *values);
/* Rows so far and the uncompressed bytes buffered in the open row group. */
uint64_t floe_pq_writer_rows(const struct floe_pq_writer *w);
size_t floe_pq_writer_buffered(const struct floe_pq_writer *w);
/* Bytes emitted to the sink so far (an estimate of the final size before finish). */
uint64_t floe_pq_writer_written(const struct floe_pq_writer *w);
/* What the file would take if it were finished now, about: the bytes written, the
 * compressed pages held for the open row group, and the open pages and dictionaries
 * uncompressed (so at most a page per column above the truth). O(columns). */
uint64_t floe_pq_writer_size_estimate(const struct floe_pq_writer *w);
/* Invalid UTF-8 sequences replaced so far. */
uint64_t floe_pq_writer_replaced(const struct floe_pq_writer *w);
/* Closes the last row group and writes the footer. Afterwards the stats accessors
 * below are valid until floe_pq_writer_free. */
int floe_pq_writer_finish(struct floe_pq_writer *w);
/* Total file size after finish. */
uint64_t floe_pq_writer_file_size(const struct floe_pq_writer *w);
/* Leaf statistics after finish: *count gets the number of leaves (map columns have two). */
const struct floe_pq_leaf_stats *floe_pq_writer_stats(const struct floe_pq_writer *w, size_t *count);
/* Row group start offsets after finish (Iceberg split_offsets), ascending. */
const int64_t *floe_pq_writer_row_group_offsets(const struct floe_pq_writer *w, size_t *count);
/* NULL is a no-op. */
void floe_pq_writer_free(struct floe_pq_writer *w);

/* Memory for one large row, so that a caller can refuse a row before the writer runs out
 * of memory in the middle of it (the writer is then good for nothing but free).
 *
 * floe_pq_writer_context_bytes: the bytes the writer's compression contexts take at o's
 * codec and level (two with an offload), measured by compressing a 512 KiB probe of
 * repeating bytes on a private counter (pure; about 0.5 M instructions at any level),
 * and remembered per thread for the same codec, level and size. */
int floe_pq_writer_context_bytes(const struct floe_pq_options *o, size_t *out);
/* An upper bound of what a writer with options o may allocate while it takes one row
 * whose values put v[i] bytes (valid UTF-8) into each of n leaves, writes its pages out
 * and finishes the file: per leaf, the page's value buffer (grown by doubling; with an
 * offload a second one, which the queue leaves in exchange for the page it takes), the
 * compressed block and its exact-size copy. fresh adds the writer's own state and
 * ctx_bytes (floe_pq_writer_context_bytes): for a writer that does not exist yet;
 * without it, what finishing a writer that holds rows takes beside (4 pages). Valid UTF-8
 * is assumed: invalid bytes grow up to threefold when they are replaced. */
uint64_t floe_pq_writer_row_need(const struct floe_pq_options *o, const size_t *v, size_t n, bool fresh,
				 size_t ctx_bytes);

#endif

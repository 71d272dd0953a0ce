/* Encodes a Parquet file footer (FileMetaData, Thrift compact) from the writer's
 * records: the schema with field ids and logical + converted types, one RowGroup per
 * written row group with its ColumnChunks, key/value metadata, created_by and a
 * TYPE_ORDER column order per leaf. */
#ifndef FLOE_PQ_FOOTER_H
#define FLOE_PQ_FOOTER_H

#include "formats/parquet/chunk.h"
#include "formats/parquet/writer.h"

#include <stddef.h>
#include <stdint.h>

struct floe_buf;

/* Parquet schema element repetition and converted types (parquet.thrift). */
enum { FLOE_PQ_REQUIRED = 0, FLOE_PQ_OPTIONAL = 1, FLOE_PQ_REPEATED = 2 };

/* A leaf column as the footer names it. */
struct floe_pq_leaf_desc {
	int ptype; /* FLOE_PQ_T_* */
	int npath;
	const char *path[3]; /* borrowed */
};

/* One written column chunk: its metadata and where its pages start in the file. */
struct floe_pq_chunk_rec {
	struct floe_pq_chunk_meta m;
	int64_t data_off;
	int64_t dict_off; /* -1 when there is no dictionary page */
};

/* What the footer still needs of a chunk once its head (below) is encoded: where its
 * bloom filter, ColumnIndex and OffsetIndex are (offsets < 0: none). Kept for every
 * chunk of the file, so it is small. */
struct floe_pq_chunk_loc {
	uint32_t head_len;
	int32_t bloom_len, ci_len, oi_len;
	int64_t bloom_off, ci_off, oi_off;
};

struct floe_pq_rg_rec {
	int64_t num_rows, total_byte_size, total_comp, file_offset;
};

/* Everything is borrowed. */
struct floe_pq_footer {
	const struct floe_pq_column *cols;
	size_t ncols;
	const struct floe_pq_leaf_desc *leaves;
	size_t nleaves;
	const struct floe_pq_rg_rec *rgs;
	size_t nrgs;
	/* nleaves per row group, row group major: the chunks' encoded heads one after the
	 * other, and their locations. */
	const uint8_t *heads;
	const struct floe_pq_chunk_loc *locs;
	uint64_t rows;
	enum floe_pq_codec codec;
	const struct floe_pq_kv *kv; /* values may be NULL */
	size_t kv_count;
	const char *created_by;
};

/* Appends the head of a ColumnChunk list element to out: the ColumnChunk and its
 * ColumnMetaData up to encoding_stats, both left open (floe_pq_footer_encode closes
 * them). Done as each row group is written, so the footer's memory is these bytes
 * rather than the chunks' records. Returns 0 or FLOE_ENOMEM/FLOE_ELIMIT. */
int floe_pq_footer_chunk_head(struct floe_buf *out, enum floe_pq_codec codec,
			      const struct floe_pq_leaf_desc *l, const struct floe_pq_chunk_rec *r);

/* Appends the FileMetaData of f to out (without the length and magic that follow it).
 * Returns 0 or FLOE_ENOMEM/FLOE_ELIMIT from out. */
int floe_pq_footer_encode(struct floe_buf *out, const struct floe_pq_footer *f);

/* n little-endian bytes of v (the PLAIN form of INT32/INT64 statistics). */
void floe_pq_le_bytes(uint8_t *d, int64_t v, size_t n);

/* A double's bits as an integer whose signed order is the double's order (-0.0 just
 * below +0.0), so that statistics of DOUBLE leaves are kept with the integers' code. */
static inline int64_t floe_pq_double_key(uint64_t bits)
{
	return (int64_t)(bits ^ ((uint64_t)((int64_t)bits >> 63) >> 1));
}

/* The same order for a FLOAT's 32 bits, as a sign-extended integer. */
static inline int64_t floe_pq_float_key(uint32_t bits)
{
	return (int32_t)(bits ^ ((uint32_t)((int32_t)bits >> 31) >> 1));
}

/* The PLAIN bytes of a statistic v of a non-BYTE_ARRAY leaf of type ptype into d (8
 * bytes of room); returns their count. A DOUBLE zero is written -0.0 as a minimum and
 * +0.0 as a maximum, as the format asks. */
size_t floe_pq_stat_bytes(uint8_t *d, int ptype, int64_t v, bool max);

#endif

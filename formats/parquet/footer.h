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
	const struct floe_pq_chunk_rec *chunks; /* nleaves per row group, row group major */
	uint64_t rows;
	enum floe_pq_codec codec;
	const struct floe_pq_kv *kv; /* values may be NULL */
	size_t kv_count;
	const char *created_by;
};

/* Appends the FileMetaData of f to out (without the length and magic that follow it).
 * Returns 0 or FLOE_ENOMEM/FLOE_ELIMIT from out. */
int floe_pq_footer_encode(struct floe_buf *out, const struct floe_pq_footer *f);

/* n little-endian bytes of v (the PLAIN form of INT32/INT64 statistics). */
void floe_pq_le_bytes(uint8_t *d, int64_t v, size_t n);

#endif

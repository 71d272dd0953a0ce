/* Streaming Parquet reader for the files floe writes (both profiles, every codec floe
 * writes), giving rows back in the writer's own input shape (struct floe_pq_value), in
 * file order, so that writing what it reads reproduces every value. Pure: the caller's
 * source reads byte ranges (a local file, S3 ranges). Memory is fixed by the file's
 * largest pages, not its size: the footer, then per column one page and one dictionary
 * at a time, and a shared buffer for the compressed page being read. Hostile input gets
 * an error with a byte offset and a message, never a read out of bounds. */
#ifndef FLOE_PQ_READER_H
#define FLOE_PQ_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "formats/parquet/writer.h"

struct floe_alloc;

/* Where the file's bytes come from. read_at reads exactly len bytes (len > 0) at offset
 * (offset + len <= size) into buf and returns 0, or a negative error that the reader
 * returns as it is. The reader calls it from its own calls only, one range at a time. */
struct floe_pq_source {
	void *ctx;
	uint64_t size; /* the file's size in bytes */
	int (*read_at)(void *ctx, uint64_t offset, void *buf, size_t len);
};

struct floe_pq_reader_options {
	/* Pages (their compressed and their uncompressed bytes, each) larger than this are
	 * refused with FLOE_ELIMIT; 0 = 16 MiB. The reader's memory is about the sum over
	 * the columns read of their largest page and dictionary. */
	size_t max_page;
	size_t max_footer;	/* FileMetaData bytes; 0 = 16 MiB */
	size_t max_map_entries; /* entries of one map value; 0 = 1 << 20 */
};

struct floe_err;
struct floe_pq_reader;

/* Reads and checks the file's frame and footer: schema (flat top-level columns of the
 * kinds in writer.h, maps as string-to-string 3-level MAP groups), row groups, codecs.
 * src is copied (its ctx borrowed: it must outlive the reader); opt may be NULL; alloc is
 * borrowed and must outlive the reader. On success *out owns a reader; on failure *out
 * is NULL and err (may be NULL) says what, with the file offset it concerns as its
 * offset. Errors: FLOE_EPARSE/FLOE_EFORMAT/FLOE_ECORRUPT for a malformed file,
 * FLOE_EUNSUPPORTED (naming the feature) for what floe does not read, FLOE_ELIMIT,
 * FLOE_ENOMEM, or the source's error. */
int floe_pq_reader_open(struct floe_alloc *alloc, const struct floe_pq_source *src,
			const struct floe_pq_reader_options *opt, struct floe_pq_reader **out,
			struct floe_err *err);

/* The file's top-level columns as the writer declares them (field ids 0 where the file
 * has none). Borrowed, valid until floe_pq_reader_free. */
const struct floe_pq_column *floe_pq_reader_columns(const struct floe_pq_reader *r, size_t *n);
uint64_t floe_pq_reader_num_rows(const struct floe_pq_reader *r);
size_t floe_pq_reader_num_row_groups(const struct floe_pq_reader *r);
/* The footer's created_by ("" when absent) and key/value metadata (a NULL value when the
 * file has none), NUL-terminated copies valid until free. */
const char *floe_pq_reader_created_by(const struct floe_pq_reader *r);
const struct floe_pq_kv *floe_pq_reader_kv(const struct floe_pq_reader *r, size_t *n);

/* Column projection: rows then hold n values, those of top-level columns cols[0..n) (by
 * index in floe_pq_reader_columns, each at most once), in that order. Only their column
 * chunks are read. Allowed before the first floe_pq_reader_next only. Returns 0 or
 * FLOE_EINVAL (the selection is unchanged then). */
int floe_pq_reader_select(struct floe_pq_reader *r, const size_t *cols, size_t n);

/* Reads the next row. Returns 1 with *row pointing at one value per selected column (all
 * columns by default), 0 after the last row, or a negative error, which is sticky.
 * The values and every byte they point to belong to the reader and stay valid until the
 * next call to floe_pq_reader_next or floe_pq_reader_free. A null is is_null; a map's
 * null value is a NULL vals[i]; an empty string is a non-NULL pointer with length 0. */
int floe_pq_reader_next(struct floe_pq_reader *r, const struct floe_pq_value **row);

/* After an error: its detail (borrowed, valid until free): the code, the file offset it
 * concerns (a page's header, a footer field) and a message naming what was wrong, e.g.
 * "page CRC mismatch in column 'message' at offset 1234" or "codec GZIP of column 'host'
 * is not supported". Code 0 and an empty message before any error. */
const struct floe_err *floe_pq_reader_error(const struct floe_pq_reader *r);

/* Frees r and everything it returned; NULL is fine. */
void floe_pq_reader_free(struct floe_pq_reader *r);

#endif

/* Page index of a column chunk (PageIndex.md): the ColumnIndex (per page: null page
 * flag, min and max — truncated for strings, more than the chunk statistics — null count, and
 * the boundary order) and the OffsetIndex (per page: file offset, size with header and
 * first row), both Thrift compact, written after the row groups. */
#ifndef FLOE_PQ_PAGEINDEX_H
#define FLOE_PQ_PAGEINDEX_H

#include "formats/parquet/chunk.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct floe_buf;

/* String bounds in the ColumnIndex are cut to this many bytes (the chunk statistics
 * keep FLOE_PQ_BOUND_MAX): PageIndex.md asks writers to bound the index's size, and
 * page bounds of long text prune little. */
#define FLOE_PQ_PAGE_BOUND_MAX 32

enum { FLOE_PQ_UNORDERED = 0, FLOE_PQ_ASCENDING = 1, FLOE_PQ_DESCENDING = 2 };

/* Appends the ColumnIndex of the n data pages (ptype FLOE_PQ_T_*) to ci. Writes nothing
 * and sets *written false when a page's maximum cannot be expressed (a string whose
 * truncated upper bound does not exist). Returns 0 or FLOE_ENOMEM/FLOE_ELIMIT. */
int floe_pq_column_index_encode(struct floe_buf *ci, int ptype, const struct floe_pq_page *pages,
				size_t n, bool *written);
/* Appends the OffsetIndex of the n data pages, the first at file offset first_off and
 * the others following it without gaps, to oi. */
int floe_pq_offset_index_encode(struct floe_buf *oi, const struct floe_pq_page *pages, size_t n,
				int64_t first_off);
/* The boundary order of the pages' min and max values (null pages ignored). */
int floe_pq_boundary_order(int ptype, const struct floe_pq_page *pages, size_t n);

#endif

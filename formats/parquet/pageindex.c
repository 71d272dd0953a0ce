/* ColumnIndex and OffsetIndex encoders (parquet.thrift). */
#include "pageindex.h"

#include "formats/base/buf.h"
#include "formats/parquet/footer.h"
#include "formats/parquet/thrift.h"

static int cmp_min(int ptype, const struct floe_pq_page *a, const struct floe_pq_page *b)
{
	if (ptype == FLOE_PQ_T_BYTE_ARRAY)
		return floe_pq_bytes_cmp(a->lo.v, a->lo.len, b->lo.v, b->lo.len);
	return a->imin < b->imin ? -1 : a->imin > b->imin;
}

static int cmp_max(int ptype, const struct floe_pq_page *a, const struct floe_pq_page *b)
{
	if (ptype == FLOE_PQ_T_BYTE_ARRAY)
		return floe_pq_bytes_cmp(a->hi.v, a->hi.len, b->hi.v, b->hi.len);
	return a->imax < b->imax ? -1 : a->imax > b->imax;
}

int floe_pq_boundary_order(int ptype, const struct floe_pq_page *pages, size_t n)
{
	bool asc = true, desc = true;
	const struct floe_pq_page *prev = NULL;
	for (size_t i = 0; i < n; i++) {
		const struct floe_pq_page *p = &pages[i];
		if (!p->has_minmax)
			continue;
		if (prev) {
			int a = cmp_min(ptype, prev, p), b = cmp_max(ptype, prev, p);
			if (a > 0 || b > 0)
				asc = false;
			if (a < 0 || b < 0)
				desc = false;
		}
		prev = p;
	}
	return asc ? FLOE_PQ_ASCENDING : desc ? FLOE_PQ_DESCENDING : FLOE_PQ_UNORDERED;
}

static void put_bound(struct floe_thrift *t, int ptype, const struct floe_pq_page *p, bool max)
{
	if (!p->has_minmax) {
		floe_thrift_elem_binary(t, "", 0); /* a null page's bounds are empty */
	} else if (ptype == FLOE_PQ_T_BYTE_ARRAY) {
		struct floe_pq_bound b = max ? p->hi : p->lo;
		floe_pq_bound_shorten(&b, FLOE_PQ_PAGE_BOUND_MAX, max);
		floe_thrift_elem_binary(t, b.v, b.len);
	} else {
		uint8_t le[8];
		size_t w = floe_pq_stat_bytes(le, ptype, max ? p->imax : p->imin, max);
		floe_thrift_elem_binary(t, le, w);
	}
}

int floe_pq_column_index_encode(struct floe_buf *ci, int ptype, const struct floe_pq_page *pages,
				size_t n, bool *written)
{
	*written = false;
	for (size_t i = 0; i < n; i++) {
		if (!pages[i].has_minmax || ptype != FLOE_PQ_T_BYTE_ARRAY)
			continue;
		struct floe_pq_bound hi = pages[i].hi;
		floe_pq_bound_shorten(&hi, FLOE_PQ_PAGE_BOUND_MAX, true);
		if (hi.unbounded)
			return 0;
	}
	struct floe_thrift t;
	floe_thrift_init(&t, ci);
	floe_thrift_list(&t, 1, FLOE_THRIFT_BOOL_TRUE, n);
	for (size_t i = 0; i < n; i++)
		floe_thrift_elem_bool(&t, !pages[i].has_minmax);
	floe_thrift_list(&t, 2, FLOE_THRIFT_BINARY, n);
	for (size_t i = 0; i < n; i++)
		put_bound(&t, ptype, &pages[i], false);
	floe_thrift_list(&t, 3, FLOE_THRIFT_BINARY, n);
	for (size_t i = 0; i < n; i++)
		put_bound(&t, ptype, &pages[i], true);
	floe_thrift_i32(&t, 4, floe_pq_boundary_order(ptype, pages, n));
	floe_thrift_list(&t, 5, FLOE_THRIFT_I64, n);
	for (size_t i = 0; i < n; i++)
		floe_thrift_elem_i64(&t, pages[i].null_count);
	floe_thrift_end(&t);
	int rc = floe_thrift_error(&t);
	if (!rc)
		*written = true;
	return rc;
}

int floe_pq_offset_index_encode(struct floe_buf *oi, const struct floe_pq_page *pages, size_t n,
				int64_t first_off)
{
	struct floe_thrift t;
	floe_thrift_init(&t, oi);
	floe_thrift_list(&t, 1, FLOE_THRIFT_STRUCT, n);
	int64_t off = first_off;
	for (size_t i = 0; i < n; i++) {
		floe_thrift_elem_struct(&t);
		floe_thrift_i64(&t, 1, off);
		floe_thrift_i32(&t, 2, (int32_t)pages[i].len);
		floe_thrift_i64(&t, 3, pages[i].first_row);
		floe_thrift_end(&t);
		off += (int64_t)pages[i].len;
	}
	floe_thrift_end(&t);
	return floe_thrift_error(&t);
}

/* Batch: a writer's leaf statistics as Iceberg column metrics. */
#include "batch.h"

#include "agent/schema/record.h"
#include "formats/base/alloc.h"
#include "formats/base/error.h"
#include "formats/iceberg/transform.h"

#include <string.h>

#define BOUND_CODEPOINTS 16

/* Appends one metric, copying bounds; strings are truncated as Iceberg's truncate(16). */
static int add_metric(struct floe_alloc *a, const struct floe_pq_leaf_stats *s, bool is_string,
		      bool bounds, struct floe_ice_column_metrics *m)
{
	memset(m, 0, sizeof(*m));
	m->field_id = s->field_id;
	m->column_size = (int64_t)s->compressed_size;
	m->value_count = (int64_t)s->value_count;
	m->null_count = (int64_t)s->null_count;
	/* Map keys and values get counts only, as Java's writers do; so do binary columns
	 * (sketches: their bytes are no useful bound). */
	if (!s->has_min_max || !bounds)
		return 0;
	size_t lo_len = s->min_len, hi_len = s->max_len;
	const uint8_t *hi_src = s->max;
	char upper[4 * BOUND_CODEPOINTS + 4];
	if (is_string) {
		lo_len = floe_ice_truncate_lower((const char *)s->min, s->min_len, BOUND_CODEPOINTS);
		size_t u = floe_ice_truncate_upper((const char *)s->max, s->max_len, BOUND_CODEPOINTS,
						   upper, sizeof(upper));
		if (u > 0) {
			hi_src = (const uint8_t *)upper;
			hi_len = u;
		} else if (floe_ice_truncate_lower((const char *)s->max, s->max_len, BOUND_CODEPOINTS) <
			   s->max_len) {
			/* Longer than 16 code points and no upper bound exists: omit bounds. */
			return 0;
		}
	}
	uint8_t *lo = floe_malloc(a, lo_len + 1), *hi = floe_malloc(a, hi_len + 1);
	if (!lo || !hi) {
		floe_free(a, lo);
		floe_free(a, hi);
		return FLOE_ENOMEM;
	}
	memcpy(lo, s->min, lo_len);
	memcpy(hi, hi_src, hi_len);
	m->lower = lo;
	m->lower_len = lo_len;
	m->upper = hi;
	m->upper_len = hi_len;
	m->has_bounds = true;
	return 0;
}

int floe_batch_metrics(struct floe_alloc *a, const struct floe_pq_writer *w,
		       struct floe_ice_column_metrics **out, size_t *n)
{
	return floe_batch_metrics_of(a, w, floe_log_columns(), FLOE_LOG_NCOLS, out, n);
}

int floe_batch_metrics_of(struct floe_alloc *a, const struct floe_pq_writer *w,
			  const struct floe_pq_column *cols, size_t ncols,
			  struct floe_ice_column_metrics **out, size_t *n)
{
	size_t count;
	const struct floe_pq_leaf_stats *st = floe_pq_writer_stats(w, &count);
	struct floe_ice_column_metrics *m = floe_calloc(a, count ? count : 1, sizeof(*m));
	if (!m)
		return FLOE_ENOMEM;
	for (size_t i = 0; i < count; i++) {
		bool is_string = false, bounds = false;
		for (size_t c = 0; c < ncols; c++) {
			if (cols[c].field_id == st[i].field_id) {
				is_string = cols[c].kind == FLOE_PQ_STRING;
				bounds = cols[c].kind != FLOE_PQ_BINARY &&
					 cols[c].kind != FLOE_PQ_MAP_STRING &&
					 cols[c].kind != FLOE_PQ_MAP_STRING_LONG;
			}
		}
		int rc = add_metric(a, &st[i], is_string, bounds, &m[i]);
		if (rc) {
			for (size_t k = 0; k < i; k++) {
				floe_free(a, (void *)m[k].lower);
				floe_free(a, (void *)m[k].upper);
			}
			floe_free(a, m);
			return rc;
		}
	}
	*out = m;
	*n = count;
	return 0;
}

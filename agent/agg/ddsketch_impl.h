/* Internals of the DDSketch shared by ddsketch.c and ddsketch_proto.c (not for other
 * modules): the index mapping and the store's add. */
#ifndef FLOE_AGG_DDSKETCH_IMPL_H
#define FLOE_AGG_DDSKETCH_IMPL_H

#include <stdint.h>

#include "agent/agg/ddsketch.h"

/* The bucket index of a positive magnitude above s->min_value. */
int32_t floe_dds_key(const struct floe_dds *s, double magnitude);
/* The value bucket key stands for. */
double floe_dds_key_value(const struct floe_dds *s, int64_t key);
/* No positive double maps to an index of larger magnitude than this. */
int64_t floe_dds_key_bound(const struct floe_dds *s);
/* Adds n to bucket key of st (s's pos or neg), sparse or dense, moving or collapsing as
 * needed. The caller keeps the sketch's total below 2^32. */
void floe_dds_add_key(struct floe_dds *s, struct floe_dds_store *st, int32_t key, uint32_t n);
/* The occupied index range of a store: [*lo, *lo + *n), *n = 0 when empty. */
void floe_dds_store_span(const struct floe_dds_store *st, int64_t *lo, uint32_t *n);
/* The count of bucket key; *j is a cursor for sparse stores, 0 before the first call of
 * an ascending walk. */
uint32_t floe_dds_store_count(const struct floe_dds_store *st, int64_t key, uint32_t *j);

#endif

/* Lower and upper bounds of string column values for statistics, capped at
 * FLOE_PQ_BOUND_MAX bytes so that a huge value never bloats the footer or a manifest.
 * A value longer than the cap is cut at a UTF-8 character boundary; a cut lower bound is
 * that prefix, a cut upper bound is the prefix with its last character incremented (and
 * there is no upper bound when that is impossible). Either is then marked inexact. */
#ifndef FLOE_PQ_BOUND_H
#define FLOE_PQ_BOUND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FLOE_PQ_BOUND_MAX 64

/* Caller-owned, no allocation: zero-initialise (or floe_pq_bound_clear) before use. */
struct floe_pq_bound {
	uint8_t v[FLOE_PQ_BOUND_MAX + 4];
	size_t len;
	bool set;	/* some value was observed */
	bool exact;	/* v is an actual value, not a cut one */
	bool unbounded; /* upper bounds only: no upper bound fits in the cap */
};

static inline void floe_pq_bound_clear(struct floe_pq_bound *b)
{
	b->len = 0;
	b->set = b->exact = b->unbounded = false;
}
/* Lowers b to cover the UTF-8 value (p, n). */
void floe_pq_bound_lower(struct floe_pq_bound *b, const uint8_t *p, size_t n);
/* Raises b to cover the UTF-8 value (p, n). */
void floe_pq_bound_upper(struct floe_pq_bound *b, const uint8_t *p, size_t n);
/* Cuts b to at most max bytes (a UTF-8 character boundary) if it is longer: a lower
 * bound stays a lower bound; an upper bound gets its last character incremented, or
 * becomes unbounded when it cannot. */
void floe_pq_bound_shorten(struct floe_pq_bound *b, size_t max, bool upper);
/* Merges bound src into dst (both lower, or both upper). */
void floe_pq_bound_merge_lower(struct floe_pq_bound *dst, const struct floe_pq_bound *src);
void floe_pq_bound_merge_upper(struct floe_pq_bound *dst, const struct floe_pq_bound *src);
/* memcmp order with the shorter of two equal prefixes first (unsigned bytewise). */
int floe_pq_bytes_cmp(const uint8_t *a, size_t an, const uint8_t *b, size_t bn);

#endif

/* DDSketch quantile sketch in caller-owned memory: a logarithmic index mapping with a
 * configured relative accuracy, a positive and a negative store of fixed bucket budgets
 * that collapse their lowest buckets when full, a zero count, and count, sum, min and max.
 * A pooled sketch keeps only its occupied buckets, (index, count) pairs in its own small
 * memory, until they do not fit; then that store takes a bucket window from a pool
 * (pool.h), the size its occupied range needs, and a larger one as the range widens.
 * Serialised in the DDSketch protobuf format (sketches-go ddsketch.proto) that Datadog's
 * libraries decode. No call here allocates; add is the per-event path. */
#ifndef FLOE_AGG_DDSKETCH_H
#define FLOE_AGG_DDSKETCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/agg/pool.h"

struct floe_err;

#define FLOE_DDS_DEFAULT_ACCURACY 0.01
#define FLOE_DDS_DEFAULT_POS_BINS 2048
#define FLOE_DDS_DEFAULT_NEG_BINS 512
#define FLOE_DDS_MIN_ACCURACY 1e-6 /* keeps every bucket index inside an int32 */
#define FLOE_DDS_MAX_ACCURACY 0.5
#define FLOE_DDS_MAX_BINS (1u << 20)
/* Occupied buckets a pooled sketch holds in its own memory, per store. */
#define FLOE_DDS_POS_PAIRS 12u
#define FLOE_DDS_NEG_PAIRS 4u
/* The smallest bucket window a pooled store takes (256 bytes). */
#define FLOE_DDS_MIN_WINDOW 64u

struct floe_dds_config {
	double rel_acc;	   /* relative accuracy a: every quantile is within a factor 1 +- a */
	uint32_t pos_bins; /* bucket budget of the positive values' store, >= 1 */
	uint32_t neg_bins; /* same for the negative values (indexed by magnitude) */
};

/* An occupied bucket of a sparse store. */
struct floe_dds_pair {
	int32_t key;
	uint32_t n;
};

/* One store: a window of cap consecutive bucket indices starting at offset, or, while
 * bins is NULL, its occupied buckets as pairs by ascending index. Private. */
struct floe_dds_store {
	uint32_t *bins; /* cap counts in the caller's memory or the pool, or NULL (sparse) */
	uint32_t cap;
	uint32_t budget; /* the most buckets the window may have: cap grows up to it */
	int32_t offset; /* bucket index of bins[0] */
	uint64_t count; /* sum of bins */
	bool collapsed; /* buckets below offset were folded into bins[0] */
	struct floe_dds_pair *pairs; /* sparse: npairs of maxpairs, in the own memory */
	uint32_t npairs, maxpairs;
};

/* Caller-owned; fields are private to ddsketch.c except the read-only summary below. */
struct floe_dds {
	double rel_acc;
	double gamma;	   /* (1 + a) / (1 - a) */
	double multiplier; /* 1 / ln(gamma) */
	double min_value;  /* magnitudes at or below this count as zero */
	struct floe_dds_store pos, neg;
	uint64_t zero_count;
	struct floe_agg_pool *pool; /* pooled: where the bucket windows come from */
	bool refused; /* the pool had too little left: the store collapses instead */
	/* Read-only summary of what was added (merged sketches combine them). */
	uint64_t count;
	double sum, min, max;
};

/* Fills c with the defaults (1 %, 2048 positive and 512 negative buckets). */
void floe_dds_config_default(struct floe_dds_config *c);

/* Bytes of bucket memory a sketch of config c needs, or 0 when c is out of its domain
 * (accuracy outside 1e-6..0.5, a budget of 0 or above 2^20). */
size_t floe_dds_bytes(const struct floe_dds_config *c);

/* Lays an empty sketch over mem (borrowed, 4-byte aligned, len >= floe_dds_bytes(c)).
 * Returns 0, FLOE_EINVAL (bad config or misaligned mem), FLOE_ELIMIT (len too small) or
 * -ENOENT when libm cannot be loaded (platform/libm.h). */
int floe_dds_init(struct floe_dds *s, const struct floe_dds_config *c, void *mem, size_t len);

/* Bytes of own memory a pooled sketch needs: its pairs (128). */
size_t floe_dds_sparse_bytes(void);

/* Lays an empty pooled sketch over mem (borrowed, 4-byte aligned, len >=
 * floe_dds_sparse_bytes()): a store is sparse until it has more occupied buckets than its
 * pairs, then a window of pool memory: a power of two of buckets, at least
 * FLOE_DDS_MIN_WINDOW and twice the occupied range, at most the store's budget of c; a
 * wider range takes a larger window (the smaller one stays taken until the pool is
 * reset: at most as many bytes again). When the pool has too little left the store
 * stays as it is and folds its lowest buckets as a full dense store does (counted once
 * per sketch in the pool's refusals). Errors as floe_dds_init. */
int floe_dds_init_pooled(struct floe_dds *s, const struct floe_dds_config *c, void *mem,
			 size_t len, struct floe_agg_pool *pool);

/* Empties the sketch, keeping memory and configuration (a pooled sketch is sparse again:
 * its block is the pool's again when the pool is reset). */
void floe_dds_reset(struct floe_dds *s);

/* Adds one value. Returns 0, FLOE_EINVAL for NaN or an infinity (the caller counts it
 * as unparsable), or FLOE_ELIMIT when the sketch already holds 2^32 - 1 values (the
 * buckets count in 32 bits; the sketch is unchanged). */
int floe_dds_add(struct floe_dds *s, double v);

/* floe_dds_add in two steps, for a caller that reads many values before it adds them:
 * floe_dds_prepare returns the bucket key of v's magnitude (0 for a value counted as
 * zero or not finite) and starts loading the memory that bucket is counted in, so that
 * floe_dds_add_prepared(s, v, key), some events later, finds it in cache. The key does
 * not depend on the store's window, which may move in between. Same results and errors
 * as floe_dds_add(s, v). */
int32_t floe_dds_prepare(const struct floe_dds *s, double v);
int floe_dds_add_prepared(struct floe_dds *s, double v, int32_t key);
/* floe_dds_add_prepared in line where it is cheapest: a positive value whose bucket lies
 * in the positive store's window (nearly every value of a busy sketch) is counted here,
 * any other goes through the call. The same counts and results. */
/* A finite value's share of the sketch's count, sum, minimum and maximum (its bucket
 * counted apart). */
static inline void floe_dds_count_value(struct floe_dds *s, double v)
{
	s->count++;
	s->sum += v;
	if (v < s->min)
		s->min = v;
	if (v > s->max)
		s->max = v;
}
static inline int floe_dds_add_prepared_inline(struct floe_dds *s, double v, int32_t key)
{
	struct floe_dds_store *st = &s->pos;
	int64_t d = (int64_t)key - st->offset;
	if (!(__builtin_isfinite(v) && v > s->min_value && s->count < UINT32_MAX && st->bins &&
	      d >= 0 && d < st->cap && st->count))
		return floe_dds_add_prepared(s, v, key);
	st->bins[d]++;
	st->count++;
	floe_dds_count_value(s, v);
	return 0;
}
/* floe_dds_prepare's load of the memory of a positive value's bucket key (from
 * floe_dds_int_keys), for a caller that has the key without the logarithm. */
void floe_dds_prefetch_pos(const struct floe_dds *s, int32_t key);
/* The bucket keys of the magnitudes 1 to n - 1 for sketches of configuration c into
 * keys[1..n-1] (keys[0] 0): each the key floe_dds_prepare computes for it, by the same
 * logarithm, so that a caller whose values are small whole numbers looks their keys up.
 * libm must be loaded (floe_libm_load). */
void floe_dds_int_keys(const struct floe_dds_config *c, int32_t *keys, uint32_t n);

/* The value at quantile q (0 <= q <= 1), as sketches-js computes it from the same
 * buckets: rank q * (count - 1), the bucket holding that rank, the bucket's
 * representative value. NaN when the sketch is empty or q is out of range. Within the
 * relative accuracy of the exact quantile unless the rank falls in a collapsed bucket. */
double floe_dds_quantile(const struct floe_dds *s, double q);

/* Adds src into dst. Both must have the same accuracy; their budgets may differ (dst
 * collapses what does not fit). Returns 0, FLOE_EINVAL (accuracies differ) or
 * FLOE_ELIMIT (the union would exceed 2^32 - 1 values); dst is unchanged on failure. */
int floe_dds_merge(struct floe_dds *dst, const struct floe_dds *src);

/* True when a store had to fold its lowest buckets: quantiles at the low end of that
 * store (the smallest positive values, the negative values nearest zero) are then only
 * bounded above by the folded bucket's value. */
bool floe_dds_collapsed(const struct floe_dds *s);

/* Exact size of the protobuf image floe_dds_encode_proto writes. */
size_t floe_dds_proto_size(const struct floe_dds *s);

/* Writes the DDSketch protobuf message: mapping {gamma, indexOffset 0, NONE}, both
 * stores as contiguousBinCounts (packed doubles) with contiguousBinIndexOffset, and
 * zeroCount. Returns 0 or FLOE_ELIMIT when cap < floe_dds_proto_size(s). */
int floe_dds_encode_proto(const struct floe_dds *s, void *out, size_t cap);

/* Decodes a DDSketch protobuf message of len bytes at p (borrowed; pure, never reads
 * past len) into s, which must be initialised with the same relative accuracy (checked
 * against the message's gamma). Accepts both store encodings (binCounts map and
 * contiguous counts), fields in any order, repeated and unknown fields. Counts must be
 * whole numbers (floe's buckets count in 32 bits). Bucket indices outside s's budget are
 * collapsed as merging would. count is recomputed; sum, min and max are not in the
 * format and are left NaN for the caller to restore. Errors: FLOE_EPARSE (truncated or
 * malformed wire data), FLOE_EFORMAT (a value out of its domain, another mapping),
 * FLOE_EUNSUPPORTED (an interpolated mapping, fractional counts), FLOE_ELIMIT (more
 * than 2^32 - 1 values), with err (may be NULL) holding the offset of the offending byte; s is
 * unchanged on failure. */
int floe_dds_decode_proto(struct floe_dds *s, const void *p, size_t len, struct floe_err *err);

#endif

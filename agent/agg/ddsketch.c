/* DDSketch: logarithmic mapping, collapsing-lowest dense stores of fixed budgets, the
 * quantile walk. The protobuf form is in ddsketch_proto.c. See ddsketch.h. */
#include "agent/agg/ddsketch.h"
#include "agent/agg/ddsketch_impl.h"

#include <string.h>

#include "agent/agg/agg_math.h"
#include "formats/base/error.h"
#include "platform/libm.h"

/* The mapping follows sketches-js (LogarithmicMapping with index offset 0): a value
 * v > 0 goes to bucket k = ceil(log_gamma(v)), which covers (gamma^(k-1), gamma^k], and
 * bucket k stands for gamma^k * 2 / (1 + gamma), within a factor 1 +- a of everything in
 * the bucket. sketches-go floors instead (bucket k covers
 * [gamma^k, gamma^(k+1))); the bytes are the same format, but a Go reader places floe's
 * buckets one step higher (see agent/agg/README.md).
 *
 * Each store is a window of cap consecutive bucket indices. An index inside the window
 * costs one subtraction and one compare. An index outside moves the window (centred on
 * the occupied range, so that it need not move again soon) while the occupied range fits
 * in cap buckets, and otherwise keeps the cap highest indices and folds everything below
 * into the lowest bucket kept, as sketches-go's CollapsingLowestDenseStore does: the
 * high quantiles, the ones latency questions ask about, stay within the accuracy, and a
 * rank that lands in the folded bucket gets that bucket's value, which is at or above the
 * true quantile. With a = 1 % and 2048 buckets the window spans a factor gamma^2048,
 * about 6e17, so real measurements in one unit rarely collapse.
 *
 * A pooled sketch starts sparse: each store keeps its occupied buckets as (index, count)
 * pairs, 12 positive and 4 negative, in 128 bytes of the group, where a dense window
 * would cost 10 KiB for the one or two values most groups of a window see. The first
 * bucket that does not fit makes that store a window of the pool, sized to twice its
 * occupied range (so that it need not grow at the next value) and rounded to a power of
 * two: values spread over a factor of 10 take 256 buckets (1 KiB), over a factor of 100
 * 512 (2 KiB), not the 2,560 of the budget. A range wider than the window takes a window twice as large;
 * only a range wider than the budget collapses, as above. With too little left in the
 * pool a store stays as it is and folds its lowest bucket into the next one, which is
 * what a full dense store does, and the sketch counts as collapsed. */

void floe_dds_config_default(struct floe_dds_config *c)
{
	c->rel_acc = FLOE_DDS_DEFAULT_ACCURACY;
	c->pos_bins = FLOE_DDS_DEFAULT_POS_BINS;
	c->neg_bins = FLOE_DDS_DEFAULT_NEG_BINS;
}

size_t floe_dds_bytes(const struct floe_dds_config *c)
{
	if (!(c->rel_acc >= FLOE_DDS_MIN_ACCURACY && c->rel_acc <= FLOE_DDS_MAX_ACCURACY))
		return 0;
	if (c->pos_bins < 1 || c->pos_bins > FLOE_DDS_MAX_BINS || c->neg_bins < 1 ||
	    c->neg_bins > FLOE_DDS_MAX_BINS)
		return 0;
	return ((size_t)c->pos_bins + c->neg_bins) * sizeof(uint32_t);
}

size_t floe_dds_sparse_bytes(void)
{
	return (FLOE_DDS_POS_PAIRS + FLOE_DDS_NEG_PAIRS) * sizeof(struct floe_dds_pair);
}

/* The multiplier of a sketch of configuration c: 1 / log(gamma). */
static double multiplier_of(const struct floe_dds_config *c)
{
	return 1.0 / floe_libm_log1p(2.0 * c->rel_acc / (1.0 - c->rel_acc));
}

static int init_over(struct floe_dds *s, const struct floe_dds_config *c, void *mem,
		     size_t len, size_t need, struct floe_agg_pool *pool)
{
	if (!floe_dds_bytes(c) || !mem || ((uintptr_t)mem & (sizeof(uint32_t) - 1)))
		return FLOE_EINVAL;
	if (len < need)
		return FLOE_ELIMIT;
	/* Every sketch is set up here, so its log and exp are there when it adds a value. */
	int rc = floe_libm_load(NULL, 0);
	if (rc)
		return rc;
	memset(s, 0, sizeof(*s));
	s->rel_acc = c->rel_acc;
	double mantissa = 2.0 * c->rel_acc / (1.0 - c->rel_acc);
	s->gamma = 1.0 + mantissa;
	s->multiplier = multiplier_of(c);
	/* sketches-js's minPossible: below it log() would leave the int range. */
	s->min_value = floe_agg_pow2(-1023) * s->gamma;
	s->pool = pool;
	s->pos.budget = c->pos_bins;
	s->neg.budget = c->neg_bins;
	if (pool) {
		s->pos.pairs = mem;
		s->pos.maxpairs = FLOE_DDS_POS_PAIRS;
		s->neg.pairs = s->pos.pairs + FLOE_DDS_POS_PAIRS;
		s->neg.maxpairs = FLOE_DDS_NEG_PAIRS;
	} else {
		s->pos.bins = mem;
		s->pos.cap = c->pos_bins;
		s->neg.bins = (uint32_t *)mem + c->pos_bins;
		s->neg.cap = c->neg_bins;
	}
	floe_dds_reset(s);
	return 0;
}

int floe_dds_init(struct floe_dds *s, const struct floe_dds_config *c, void *mem, size_t len)
{
	return init_over(s, c, mem, len, floe_dds_bytes(c), NULL);
}

int floe_dds_init_pooled(struct floe_dds *s, const struct floe_dds_config *c, void *mem,
			 size_t len, struct floe_agg_pool *pool)
{
	if (!pool)
		return FLOE_EINVAL;
	return init_over(s, c, mem, len, floe_dds_sparse_bytes(), pool);
}

static void store_reset(struct floe_dds_store *st, bool sparse)
{
	if (sparse) {
		st->bins = NULL;
		st->cap = 0;
	} else
		memset(st->bins, 0, (size_t)st->cap * sizeof(uint32_t));
	st->offset = 0;
	st->count = 0;
	st->collapsed = false;
	st->npairs = 0;
}

void floe_dds_reset(struct floe_dds *s)
{
	store_reset(&s->pos, s->pool != NULL);
	store_reset(&s->neg, s->pool != NULL);
	s->refused = false;
	s->zero_count = 0;
	s->count = 0;
	s->sum = 0.0;
	s->min = __builtin_inf();
	s->max = -__builtin_inf();
}

bool floe_dds_collapsed(const struct floe_dds *s)
{
	return s->pos.collapsed || s->neg.collapsed;
}

int32_t floe_dds_key(const struct floe_dds *s, double magnitude)
{
	return (int32_t)floe_agg_ceil(floe_libm_log(magnitude) * s->multiplier);
}

double floe_dds_key_value(const struct floe_dds *s, int64_t key)
{
	return floe_libm_exp((double)key / s->multiplier) * (2.0 / (1.0 + s->gamma));
}

int64_t floe_dds_key_bound(const struct floe_dds *s)
{
	/* |ln v| <= 745 for every positive double, denormals included. */
	return floe_agg_ceil(745.0 * s->multiplier) + 2;
}

/* The lowest and highest occupied index of a non-empty store. */
static void store_range(const struct floe_dds_store *st, int64_t *lo, int64_t *hi)
{
	uint32_t a = 0, b = st->cap - 1;
	while (a < b && !st->bins[a])
		a++;
	while (b > a && !st->bins[b])
		b--;
	*lo = (int64_t)st->offset + a;
	*hi = (int64_t)st->offset + b;
}

/* Moves the window to start at index noff. Occupied buckets below noff fold into the
 * new lowest bucket; the caller guarantees none lie above noff + cap - 1. */
static void store_move(struct floe_dds_store *st, int64_t noff)
{
	int64_t d = noff - st->offset;
	uint32_t cap = st->cap;
	if (d > 0) {
		uint64_t folded = 0;
		uint32_t nf = d >= cap ? cap : (uint32_t)d;
		for (uint32_t i = 0; i < nf; i++)
			folded += st->bins[i];
		memmove(st->bins, st->bins + nf, (size_t)(cap - nf) * sizeof(uint32_t));
		memset(st->bins + (cap - nf), 0, (size_t)nf * sizeof(uint32_t));
		/* No bucket can exceed the sketch's count, itself below 2^32. */
		st->bins[0] += (uint32_t)folded;
		if (folded)
			st->collapsed = true;
	} else if (d < 0) {
		uint32_t e = (uint32_t)-d; /* < cap: the occupied top stays inside */
		memmove(st->bins + e, st->bins, (size_t)(cap - e) * sizeof(uint32_t));
		memset(st->bins, 0, (size_t)e * sizeof(uint32_t));
	}
	st->offset = (int32_t)noff;
}

static bool store_grow(struct floe_dds *s, struct floe_dds_store *st, int64_t span);

/* The slow path of store_slot: key lies outside the window (or the store is empty). */
static uint32_t store_make_room(struct floe_dds *s, struct floe_dds_store *st, int32_t key)
{
	int64_t cap = st->cap;
	if (st->count == 0) {
		st->offset = (int32_t)((int64_t)key - cap / 2);
		return (uint32_t)(key - st->offset);
	}
	/* Once folded, everything below the window belongs to its lowest bucket. */
	if (st->collapsed && key < st->offset)
		return 0;
	int64_t lo, hi;
	store_range(st, &lo, &hi);
	int64_t nlo = key < lo ? key : lo, nhi = key > hi ? key : hi;
	int64_t span = nhi - nlo + 1;
	if (span <= cap) {
		store_move(st, nlo - (cap - span) / 2);
		return (uint32_t)(key - st->offset);
	}
	if (store_grow(s, st, span))
		return store_make_room(s, st, key); /* now it fits, or the budget binds */
	store_move(st, nhi - cap + 1);
	st->collapsed = true;
	return key < st->offset ? 0 : (uint32_t)(key - st->offset);
}

/* The bucket of index key, moving or collapsing the window if needed. */
static inline uint32_t store_slot(struct floe_dds *s, struct floe_dds_store *st, int32_t key)
{
	int64_t d = (int64_t)key - st->offset;
	if (d >= 0 && d < st->cap && st->count)
		return (uint32_t)d;
	return store_make_room(s, st, key);
}

static void store_add(struct floe_dds *s, struct floe_dds_store *st, int32_t key, uint32_t n)
{
	uint32_t i = store_slot(s, st, key); /* may move bins to a larger window */
	st->bins[i] += n;
	st->count += n;
}

/* Adds n to bucket key of a sparse store; false when key is new and the store is full. */
static bool sparse_add(struct floe_dds_store *st, int32_t key, uint32_t n)
{
	uint32_t i = 0;
	while (i < st->npairs && st->pairs[i].key < key)
		i++;
	if (i == st->npairs || st->pairs[i].key != key) {
		if (st->npairs == st->maxpairs)
			return false;
		memmove(st->pairs + i + 1, st->pairs + i,
			(size_t)(st->npairs - i) * sizeof(st->pairs[0]));
		st->pairs[i] = (struct floe_dds_pair){key, 0};
		st->npairs++;
	}
	st->pairs[i].n += n;
	st->count += n;
	return true;
}

/* A full sparse store with no block to grow into: the lowest bucket folds into the next
 * (or a new key below it into it), as the dense store collapses its lowest buckets. */
static void sparse_collapse_add(struct floe_dds_store *st, int32_t key, uint32_t n)
{
	st->collapsed = true;
	if (key < st->pairs[0].key) {
		st->pairs[0].n += n;
		st->count += n;
		return;
	}
	st->pairs[1].n += st->pairs[0].n;
	memmove(st->pairs, st->pairs + 1, (size_t)(st->npairs - 1) * sizeof(st->pairs[0]));
	st->npairs--;
	(void)sparse_add(st, key, n); /* a slot is free */
}

/* The window a store whose occupied range is span buckets asks for: a power of two at
 * least twice the span and FLOE_DDS_MIN_WINDOW, at most the budget. */
static uint32_t window_for(int64_t span, uint32_t budget)
{
	uint64_t c = FLOE_DDS_MIN_WINDOW;
	while (c < 2 * (uint64_t)span && c < budget)
		c *= 2;
	return c < budget ? (uint32_t)c : budget;
}

/* Moves a pooled store (its pairs or its window) into a larger window of the pool, one
 * that holds span buckets twice over if the budget allows. False when the budget is
 * already the window, or (counted once) the pool has too little left. */
static bool store_grow(struct floe_dds *s, struct floe_dds_store *st, int64_t span)
{
	uint32_t cap = window_for(span, st->budget);
	if (!s->pool || s->refused || cap <= st->cap)
		return false;
	uint32_t *bins = floe_agg_pool_take(s->pool, (size_t)cap * sizeof(uint32_t));
	if (!bins) {
		s->refused = true;
		return false;
	}
	memset(bins, 0, (size_t)cap * sizeof(uint32_t));
	if (st->bins) {
		/* Same offset: the old window's buckets are the new one's first. */
		memcpy(bins, st->bins, (size_t)st->cap * sizeof(uint32_t));
		st->bins = bins;
		st->cap = cap;
		return true;
	}
	/* The pairs, highest first as a merge adds them. */
	uint32_t n = st->npairs;
	bool collapsed = st->collapsed;
	st->bins = bins;
	st->cap = cap;
	st->offset = 0;
	st->count = 0;
	st->npairs = 0;
	for (uint32_t i = n; i-- > 0;)
		store_add(s, st, st->pairs[i].key, st->pairs[i].n);
	st->collapsed = st->collapsed || collapsed;
	return true;
}

void floe_dds_add_key(struct floe_dds *s, struct floe_dds_store *st, int32_t key, uint32_t n)
{
	if (st->bins) {
		store_add(s, st, key, n);
		return;
	}
	if (sparse_add(st, key, n))
		return;
	int64_t lo = st->pairs[0].key, hi = st->pairs[st->npairs - 1].key;
	int64_t span = (key > hi ? key : hi) - (key < lo ? key : lo) + 1;
	if (store_grow(s, st, span))
		store_add(s, st, key, n);
	else
		sparse_collapse_add(st, key, n);
}

void floe_dds_store_span(const struct floe_dds_store *st, int64_t *lo, uint32_t *n)
{
	*lo = 0;
	*n = 0;
	if (!st->count)
		return;
	int64_t hi;
	if (st->bins) {
		store_range(st, lo, &hi);
	} else {
		*lo = st->pairs[0].key;
		hi = st->pairs[st->npairs - 1].key;
	}
	*n = (uint32_t)(hi - *lo + 1);
}

uint32_t floe_dds_store_count(const struct floe_dds_store *st, int64_t key, uint32_t *j)
{
	if (st->bins)
		return st->bins[key - st->offset];
	while (*j < st->npairs && st->pairs[*j].key < key)
		++*j;
	return *j < st->npairs && st->pairs[*j].key == key ? st->pairs[*j].n : 0;
}

void floe_dds_int_keys(const struct floe_dds_config *c, int32_t *keys, uint32_t n)
{
	struct floe_dds s = {.multiplier = multiplier_of(c)};
	for (uint32_t i = 0; i < n; i++)
		keys[i] = i ? floe_dds_key(&s, (double)i) : 0;
}

void floe_dds_prefetch_pos(const struct floe_dds *s, int32_t key)
{
	const struct floe_dds_store *st = &s->pos;
	int64_t i = (int64_t)key - st->offset;
	if (st->bins && i >= 0 && i < (int64_t)st->cap)
		__builtin_prefetch(&st->bins[i], 1);
	else if (!st->bins)
		__builtin_prefetch(st->pairs, 1);
}

int32_t floe_dds_prepare(const struct floe_dds *s, double v)
{
	if (!__builtin_isfinite(v) || (v <= s->min_value && v >= -s->min_value))
		return 0;
	const struct floe_dds_store *st = v > 0 ? &s->pos : &s->neg;
	int32_t key = floe_dds_key(s, v > 0 ? v : -v);
	int64_t i = (int64_t)key - st->offset;
	if (st->bins && i >= 0 && i < (int64_t)st->cap)
		__builtin_prefetch(&st->bins[i], 1);
	else if (!st->bins)
		__builtin_prefetch(st->pairs, 1);
	return key;
}

int floe_dds_add(struct floe_dds *s, double v)
{
	int32_t key = 0;
	if (__builtin_isfinite(v) && (v > s->min_value || v < -s->min_value))
		key = floe_dds_key(s, v > 0 ? v : -v);
	return floe_dds_add_prepared(s, v, key);
}

/* Adds one to bucket key of st (s's pos or neg): in line when the store has its window
 * and key lies in it, which is nearly every value once a store has buckets; a call to
 * floe_dds_add_key (which moves, grows or folds the window, or adds to a sparse store)
 * otherwise. The same counts either way. */
static inline void store_count_one(struct floe_dds *s, struct floe_dds_store *st, int32_t key)
{
	int64_t d = (int64_t)key - st->offset;
	if (st->bins && d >= 0 && d < st->cap && st->count) {
		st->bins[d]++;
		st->count++;
		return;
	}
	floe_dds_add_key(s, st, key, 1);
}

int floe_dds_add_prepared(struct floe_dds *s, double v, int32_t key)
{
	if (!__builtin_isfinite(v))
		return FLOE_EINVAL;
	if (s->count >= UINT32_MAX)
		return FLOE_ELIMIT;
	if (v > s->min_value)
		store_count_one(s, &s->pos, key);
	else if (v < -s->min_value)
		store_count_one(s, &s->neg, key);
	else
		s->zero_count++;
	floe_dds_count_value(s, v);
	return 0;
}

/* The index of the bucket holding rank (0-based, fractional): with lower, the first
 * bucket whose running count exceeds rank; otherwise the first whose running count
 * reaches rank + 1 (sketches-js DenseStore.keyAtRank). */
static int64_t store_key_at_rank(const struct floe_dds_store *st, double rank, bool lower)
{
	double run = 0.0;
	int64_t last = st->offset;
	for (uint32_t i = 0; !st->bins && i < st->npairs; i++) {
		run += st->pairs[i].n;
		last = st->pairs[i].key;
		if ((lower && run > rank) || (!lower && run >= rank + 1.0))
			return last;
	}
	for (uint32_t i = 0; st->bins && i < st->cap; i++) {
		if (!st->bins[i])
			continue;
		run += st->bins[i];
		last = (int64_t)st->offset + i;
		if ((lower && run > rank) || (!lower && run >= rank + 1.0))
			return last;
	}
	return last;
}

double floe_dds_quantile(const struct floe_dds *s, double q)
{
	if (!(q >= 0.0 && q <= 1.0) || s->count == 0)
		return __builtin_nan("");
	double total = (double)s->neg.count + (double)s->zero_count + (double)s->pos.count;
	double rank = q * (total - 1.0);
	double nneg = (double)s->neg.count;
	if (rank < nneg) {
		int64_t k = store_key_at_rank(&s->neg, nneg - rank - 1.0, false);
		return -floe_dds_key_value(s, k);
	}
	if (rank < nneg + (double)s->zero_count)
		return 0.0;
	int64_t k = store_key_at_rank(&s->pos, rank - nneg - (double)s->zero_count, true);
	return floe_dds_key_value(s, k);
}

static void store_merge(struct floe_dds *d, struct floe_dds_store *dst,
			const struct floe_dds_store *src)
{
	if (!src->count)
		return;
	/* Highest first: the first add places the window at the top of src's range, so
	 * that a union wider than dst's budget folds its low end once rather than sliding
	 * the window bucket by bucket. */
	for (uint32_t i = src->npairs; !src->bins && i-- > 0;)
		floe_dds_add_key(d, dst, src->pairs[i].key, src->pairs[i].n);
	for (uint32_t i = src->cap; src->bins && i-- > 0;)
		if (src->bins[i])
			floe_dds_add_key(d, dst, (int32_t)((int64_t)src->offset + i), src->bins[i]);
	if (src->collapsed)
		dst->collapsed = true;
}

int floe_dds_merge(struct floe_dds *dst, const struct floe_dds *src)
{
	if (dst->gamma != src->gamma)
		return FLOE_EINVAL;
	if (src->count > UINT32_MAX - dst->count)
		return FLOE_ELIMIT;
	store_merge(dst, &dst->pos, &src->pos);
	store_merge(dst, &dst->neg, &src->neg);
	dst->zero_count += src->zero_count;
	dst->count += src->count;
	dst->sum += src->sum;
	if (src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
	return 0;
}

/* HyperLogLog distinct counter in caller-owned memory. It starts as an exact list of
 * coupons (a 26-bit register address and its 6-bit rank, as DataSketches' list and set
 * modes hold them), a pooled sketch then as an exact hash set of coupons in its pool,
 * and becomes dense, one byte per register, when those are full:
 * Ertl's improved estimator (no empirical bias tables) then. Serialised as Apache
 * DataSketches' compact images (LIST, SET or HLL_8 mode) so that DataSketches (Java, C++,
 * Python) can read and union it. No call here allocates: dense registers come from the
 * caller's memory or from a pool of blocks the caller reserved (pool.h). */
#ifndef FLOE_AGG_HLL_H
#define FLOE_AGG_HLL_H

#include <stddef.h>
#include <stdint.h>

#include "agent/agg/pool.h"

struct floe_err;

#define FLOE_HLL_PMIN 4
#define FLOE_HLL_PMAX 18
#define FLOE_HLL_PDEFAULT 14
/* The serialised image: DataSketches' 40-byte HLL preamble, then 2^p register bytes. */
#define FLOE_HLL_HEADER_BYTES 40

/* The longest coupon list: exact counts up to this many distinct items. */
#define FLOE_HLL_LIST_MAX 256u
/* The largest coupon set a pooled sketch takes from its pool (4 KiB, 768 coupons). */
#define FLOE_HLL_SET_LG_MAX 10u

/* Bits of the list's filter (struct floe_hll's seen): 64 bytes, a cache line. */
#define FLOE_HLL_SEEN_BITS 512u

/* Caller-owned; the fields are private to hll.c. list and reg point into the caller's
 * memory, which must outlive the sketch. */
struct floe_hll {
	uint8_t *reg;	/* dense registers, m of them; NULL while the sketch is a list */
	uint8_t *list;	/* the sketch's own memory: the coupons (4 bytes each) while a list */
	uint32_t *set;	/* or 2^setlg slots of the pool holding them (0: empty), or NULL */
	struct floe_agg_pool *pool; /* dense memory, or NULL: the own memory is dense-sized */
	uint32_t m;	/* 2^p registers */
	uint32_t n;	/* coupons in the list or the set */
	uint32_t cap;	/* coupons the list, or the set, holds before the next form */
	uint32_t listcap; /* coupons the list holds */
	uint8_t setlg;	/* log2 of the set's slots: 0 when there is no set step */
	uint32_t own;	/* bytes of the own memory */
	uint8_t p;	/* precision; below the configured one when the pool was empty */
	uint8_t pcfg;	/* the configured precision */
	/* While a list: bit (c mod FLOE_HLL_SEEN_BITS) set for each coupon c it holds, so
	 * that a coupon it does not hold is mostly told by one bit, not a scan of the list. */
	uint64_t seen[FLOE_HLL_SEEN_BITS / 64];
};

/* Register bytes a dense sketch of precision p needs: 2^p, or 0 when p is outside 4..18. */
size_t floe_hll_bytes(unsigned p);

/* Bytes of own memory a pooled sketch of precision p needs: its coupon list, at most
 * 4 * FLOE_HLL_LIST_MAX, or its registers when they are at most twice that; 0 when p is
 * outside 4..18. */
size_t floe_hll_list_bytes(unsigned p);

/* Bytes of the pool blocks a pooled sketch of precision p takes: 2^p, or 0 when its own
 * memory holds its registers (p <= 6) and it takes none. */
size_t floe_hll_pool_block(unsigned p);

/* Lays an empty sketch of precision p over mem (borrowed, len >= floe_hll_bytes(p)).
 * Returns 0, or FLOE_EINVAL for a bad precision, FLOE_ELIMIT when len is too small,
 * -ENOENT when libm cannot be loaded (platform/libm.h). */
int floe_hll_init(struct floe_hll *h, unsigned p, void *mem, size_t len);

/* Lays an empty sketch of precision p over mem (borrowed, len >= floe_hll_list_bytes(p),
 * 4-byte aligned) that, when its list is full, takes from pool a hash set of coupons
 * (where that is at most half the registers' bytes: 4 KiB and 768 coupons at p >= 13,
 * 2 KiB and 384 at p = 12), still exact, and when that is full its dense registers
 * (floe_hll_bytes(p)). A set the pool cannot give is skipped; registers it cannot give
 * make the sketch dense in mem instead, at the precision mem holds (10 for p = 14),
 * counted once in the pool's refusals. pool may be NULL when floe_hll_pool_block(p) is
 * 0. Errors as floe_hll_init. */
int floe_hll_init_pooled(struct floe_hll *h, unsigned p, void *mem, size_t len,
			 struct floe_agg_pool *pool);

/* The most distinct items a pooled sketch of precision p counts exactly (its set's or
 * its list's capacity), 0 when p is outside 4..18. */
uint32_t floe_hll_exact_max(unsigned p);

/* The sketch's coupons while it is a list or a set, in storage order: *cursor is 0 before
 * the first call; returns 0 after the last (no coupon is 0). */
uint32_t floe_hll_coupon_next(const struct floe_hll *h, uint32_t *cursor);

/* Empties the sketch, keeping its memory and configured precision (a pooled sketch's
 * block is the pool's again when the pool is reset). */
void floe_hll_reset(struct floe_hll *h);

/* For a saved image of the sketch (the aggregator's): makes the empty sketch h dense at
 * precision p, its configured one (with a block of its pool when it has one) or the
 * coarser one its own memory holds, and returns the zeroed registers (2^p bytes) for the
 * caller to fill; NULL when p is neither or the pool is empty. */
uint8_t *floe_hll_restore_dense(struct floe_hll *h, unsigned p);

/* Whether the sketch is still an exact list. */
static inline int floe_hll_is_list(const struct floe_hll *h)
{
	return h->reg == NULL;
}

/* The slow path of floe_hll_add_hash: adds a coupon to the list, going dense when full. */
void floe_hll_add_coupon(struct floe_hll *h, uint32_t coupon);

/* DataSketches' coupon of a hash: the low 26 bits address a register at any precision up
 * to 26, the rank (1..39) comes from the 38 bits above as floe_hll_add_hash takes it. */
static inline uint32_t floe_hll_coupon(uint64_t hash)
{
	return (uint32_t)(__builtin_clzll(hash | 0x3ffffffu) + 1) << 26 |
	       (uint32_t)(hash & 0x3ffffffu);
}

/* Adds one item by its 64-bit hash. The low p bits choose the register and the high
 * 64 - p bits give the rank (leading zeros + 1), so the hash must be uniform over all 64
 * bits: XXH3_64bits, as floe_hll_hash gives. In line: this is the per-event path. */
static inline void floe_hll_add_hash(struct floe_hll *h, uint64_t hash)
{
	if (!h->reg) {
		floe_hll_add_coupon(h, floe_hll_coupon(hash));
		return;
	}
	uint32_t slot = (uint32_t)(hash & (h->m - 1));
	/* The low p bits are forced to one so that an all-zero top yields 65 - p, the
	 * largest rank, and __builtin_clzll never sees zero. */
	uint8_t rank = (uint8_t)(__builtin_clzll(hash | (uint64_t)(h->m - 1)) + 1);
	if (rank > h->reg[slot])
		h->reg[slot] = rank;
}

/* Starts loading the memory floe_hll_add_hash(h, hash) will touch (the register, the
 * set's slot, or the list's filter and end), for a caller that adds it some events later. */
static inline void floe_hll_prefetch(const struct floe_hll *h, uint64_t hash)
{
	if (h->reg)
		__builtin_prefetch(&h->reg[hash & (h->m - 1)], 1);
	else if (h->set)
		__builtin_prefetch(&h->set[floe_hll_coupon(hash) & ((1u << h->setlg) - 1)], 1);
	else { /* the filter's word, and where a coupon it does not hold goes */
		__builtin_prefetch(&h->seen[(hash % FLOE_HLL_SEEN_BITS) / 64]);
		__builtin_prefetch(h->list + 4 * (size_t)h->n, 1);
	}
}

/* The XXH3_64bits (seed 0) of an item's bytes: the hash every floe HLL uses, so that
 * sketches made on different devices merge. */
uint64_t floe_hll_hash(const void *p, size_t n);

/* Adds the item of n bytes at p (hashes it with floe_hll_hash). */
void floe_hll_add(struct floe_hll *h, const void *p, size_t n);

/* Folds src into dst (the union). A list adds its coupons. A dense src's precision must
 * be at least dst's: a finer sketch folds into a coarser one exactly as if its items had
 * been added there. Returns 0 or FLOE_EINVAL (src coarser than dst); dst is unchanged on
 * failure. */
int floe_hll_merge(struct floe_hll *dst, const struct floe_hll *src);

/* The number of distinct items: exact while a list (but for two items of one coupon,
 * a chance of about n^2 / 2^28 for n items), else estimated (Ertl 2017, "improved raw
 * estimator") with a relative standard error of about 1.04 / sqrt(2^p): 0.81 % at
 * p = 14. */
double floe_hll_estimate(const struct floe_hll *h);

/* Exact size of the serialised image: a list of up to 7 coupons is a LIST image (8 + 4n
 * bytes), a longer one a SET image (12 + 4n), a dense sketch an HLL_8 image (40 + 2^p). */
size_t floe_hll_serialized_size(const struct floe_hll *h);

/* Writes the image into out (borrowed, cap bytes). Returns 0 or FLOE_ELIMIT when cap is
 * smaller than floe_hll_serialized_size. */
int floe_hll_serialize(const struct floe_hll *h, void *out, size_t cap);

/* floe_hll_serialize, and *estimate set to what floe_hll_estimate(h) returns, from the
 * one pass over the registers both need (a row takes both). *estimate is left as it was
 * on failure. */
int floe_hll_serialize_estimate(const struct floe_hll *h, void *out, size_t cap, double *estimate);

/* Reads the precision from an image's preamble so that the caller can size memory for
 * floe_hll_decode. Returns 0 or FLOE_EPARSE/FLOE_EFORMAT/FLOE_EUNSUPPORTED with err (may be NULL)
 * at the offending byte. */
int floe_hll_decode_precision(const void *p, size_t len, unsigned *precision, struct floe_err *err);

/* Decodes the image of len bytes at p (borrowed; pure, never reads past len) into h,
 * laid over mem (borrowed) as floe_hll_init would. Hostile input gets FLOE_EPARSE
 * (truncated), FLOE_EFORMAT (a field out of its domain) or FLOE_EUNSUPPORTED (a valid
 * DataSketches image floe does not read: HLL_4/HLL_6), with err (may be NULL) holding the
 * offset of the first offending byte; FLOE_ELIMIT when memlen is below floe_hll_bytes;
 * -ENOENT when libm cannot be loaded. The sketch owns mem as floe_hll_init's does. */
int floe_hll_decode(struct floe_hll *h, void *mem, size_t memlen, const void *p, size_t len,
		    struct floe_err *err);

#endif

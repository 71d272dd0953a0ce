/* HyperLogLog distinct counter in caller-owned memory: one byte per register, Ertl's
 * improved estimator (no empirical bias tables), serialised as Apache DataSketches' HLL_8
 * compact image so that DataSketches (Java, C++, Python) can read and union it. No call
 * here allocates; add, merge, estimate and reset touch only the caller's registers. */
#ifndef FLOE_AGG_HLL_H
#define FLOE_AGG_HLL_H

#include <stddef.h>
#include <stdint.h>

struct floe_err;

#define FLOE_HLL_PMIN 4
#define FLOE_HLL_PMAX 18
#define FLOE_HLL_PDEFAULT 14
/* The serialised image: DataSketches' 40-byte HLL preamble, then 2^p register bytes. */
#define FLOE_HLL_HEADER_BYTES 40

/* Caller-owned; the fields are private to hll.c. reg points into the caller's memory
 * (floe_hll_bytes(p) bytes), which must outlive the sketch. */
struct floe_hll {
	uint8_t *reg;
	uint32_t m; /* 2^p registers */
	uint8_t p;
};

/* Register bytes a sketch of precision p needs: 2^p, or 0 when p is outside 4..18. */
size_t floe_hll_bytes(unsigned p);

/* Lays an empty sketch of precision p over mem (borrowed, len >= floe_hll_bytes(p)).
 * Returns 0, or FLOE_EINVAL for a bad precision, FLOE_ELIMIT when len is too small,
 * -ENOENT when libm cannot be loaded (platform/libm.h). */
int floe_hll_init(struct floe_hll *h, unsigned p, void *mem, size_t len);

/* Empties the sketch, keeping its memory and precision. */
void floe_hll_reset(struct floe_hll *h);

/* Adds one item by its 64-bit hash. The low p bits choose the register and the high
 * 64 - p bits give the rank (leading zeros + 1), so the hash must be uniform over all 64
 * bits: XXH3_64bits, as floe_hll_hash gives. In line: this is the per-event path. */
static inline void floe_hll_add_hash(struct floe_hll *h, uint64_t hash)
{
	uint32_t slot = (uint32_t)(hash & (h->m - 1));
	/* The low p bits are forced to one so that an all-zero top yields 65 - p, the
	 * largest rank, and __builtin_clzll never sees zero. */
	uint8_t rank = (uint8_t)(__builtin_clzll(hash | (uint64_t)(h->m - 1)) + 1);
	if (rank > h->reg[slot])
		h->reg[slot] = rank;
}

/* The XXH3_64bits (seed 0) of an item's bytes: the hash every floe HLL uses, so that
 * sketches made on different devices merge. */
uint64_t floe_hll_hash(const void *p, size_t n);

/* Adds the item of n bytes at p (hashes it with floe_hll_hash). */
void floe_hll_add(struct floe_hll *h, const void *p, size_t n);

/* Folds src into dst (the union). src's precision must be at least dst's: a finer
 * sketch folds into a coarser one exactly as if its items had been added there. Returns
 * 0 or FLOE_EINVAL (src coarser than dst); dst is unchanged on failure. */
int floe_hll_merge(struct floe_hll *dst, const struct floe_hll *src);

/* The estimated number of distinct items (Ertl 2017, "improved raw estimator"). Its
 * relative standard error is about 1.04 / sqrt(2^p): 0.81 % at p = 14. */
double floe_hll_estimate(const struct floe_hll *h);

/* Exact size of the serialised image: 40 + 2^p. */
size_t floe_hll_serialized_size(const struct floe_hll *h);

/* Writes the image into out (borrowed, cap bytes). Returns 0 or FLOE_ELIMIT when cap is
 * smaller than floe_hll_serialized_size. */
int floe_hll_serialize(const struct floe_hll *h, void *out, size_t cap);

/* Reads the precision from an image's preamble so that the caller can size memory for
 * floe_hll_decode. Returns 0 or FLOE_EPARSE/FLOE_EFORMAT/FLOE_EUNSUPPORTED with err (may be NULL)
 * at the offending byte. */
int floe_hll_decode_precision(const void *p, size_t len, unsigned *precision, struct floe_err *err);

/* Decodes the image of len bytes at p (borrowed; pure, never reads past len) into h,
 * laid over mem (borrowed) as floe_hll_init would. Hostile input gets FLOE_EPARSE
 * (truncated), FLOE_EFORMAT (a field out of its domain) or FLOE_EUNSUPPORTED (a valid
 * DataSketches image floe does not read: list/set modes, HLL_4/HLL_6), with err (may be NULL)
 * holding the offset of the first offending byte; FLOE_ELIMIT when memlen is too small;
 * -ENOENT when libm cannot be loaded. */
int floe_hll_decode(struct floe_hll *h, void *mem, size_t memlen, const void *p, size_t len,
		    struct floe_err *err);

#endif

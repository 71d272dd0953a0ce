/* Parquet split-block bloom filter (BloomFilter.md): blocks of eight 32-bit words, one
 * bit set per word by the low half of a value's XXH64 (seed 0), the block chosen by the
 * high half. Values are hashed as their PLAIN bytes without a length prefix. */
#ifndef FLOE_PQ_BLOOM_H
#define FLOE_PQ_BLOOM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct floe_alloc;
struct floe_buf;

#define FLOE_PQ_BLOOM_MIN 32 /* one block */

/* Caller-owned. bits is numBytes long, a power of two and a multiple of 32. */
struct floe_pq_bloom {
	struct floe_alloc *alloc; /* borrowed */
	uint8_t *bits;		  /* owned; the bitset in file order (LE words) */
	size_t nbytes;
};

/* Filter size in bytes for ndv distinct values at about 10 bits each (1 % false
 * positives): a power of two between FLOE_PQ_BLOOM_MIN and max_bytes (itself rounded
 * down to a power of two). */
size_t floe_pq_bloom_size(uint64_t ndv, size_t max_bytes);
/* Allocates an empty filter of nbytes (from floe_pq_bloom_size). Returns 0 or
 * FLOE_ENOMEM/FLOE_EINVAL. */
int floe_pq_bloom_init(struct floe_pq_bloom *b, struct floe_alloc *alloc, size_t nbytes);
void floe_pq_bloom_fini(struct floe_pq_bloom *b);
/* The XXH64 (seed 0) of a value's PLAIN bytes. */
uint64_t floe_pq_bloom_hash(const void *p, size_t n);
void floe_pq_bloom_insert(struct floe_pq_bloom *b, uint64_t h);
bool floe_pq_bloom_check(const struct floe_pq_bloom *b, uint64_t h);
/* Halves the filter while the half would be no fuller than floe_pq_bloom_size's sizing
 * allows (about 10 bits per value): a filter made before its values' count was known
 * ends up the size their real distinct count asks for, with the same false-positive
 * rate, and holds exactly what a filter of that size would. The bits stay allocated
 * (fini frees them); nbytes shrinks. */
void floe_pq_bloom_shrink(struct floe_pq_bloom *b);
/* Appends the BloomFilterHeader (Thrift compact) and the bitset to out. */
int floe_pq_bloom_write(const struct floe_pq_bloom *b, struct floe_buf *out);

#endif

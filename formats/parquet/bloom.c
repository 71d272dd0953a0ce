/* Split-block bloom filter. Words are kept little-endian in the byte array itself, so
 * the filter is written as it is, on any host. */
#include "bloom.h"

#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"
#include "formats/parquet/thrift.h"

#include <string.h>
#include <xxhash.h>

static const uint32_t salt[8] = {0x47b6137bu, 0x44974d91u, 0x8824ad5bu, 0xa2b7289du,
				 0x705495c7u, 0x2df1424bu, 0x9efc4947u, 0x5c6bfb31u};

size_t floe_pq_bloom_size(uint64_t ndv, size_t max_bytes)
{
	size_t cap = FLOE_PQ_BLOOM_MIN;
	while (cap <= max_bytes / 2)
		cap *= 2;
	/* 10 bits per value, rounded up to a power of two. */
	uint64_t want = ndv > UINT64_MAX / 10 ? UINT64_MAX : ndv * 10 / 8;
	size_t n = FLOE_PQ_BLOOM_MIN;
	while (n < cap && n < want)
		n *= 2;
	return n;
}

int floe_pq_bloom_init(struct floe_pq_bloom *b, struct floe_alloc *alloc, size_t nbytes)
{
	b->alloc = alloc;
	b->bits = NULL;
	b->nbytes = 0;
	if (nbytes < FLOE_PQ_BLOOM_MIN || (nbytes & (nbytes - 1)) || nbytes > (size_t)INT32_MAX)
		return FLOE_EINVAL;
	if (!(b->bits = floe_calloc(alloc, 1, nbytes)))
		return FLOE_ENOMEM;
	b->nbytes = nbytes;
	return 0;
}

void floe_pq_bloom_fini(struct floe_pq_bloom *b)
{
	floe_free(b->alloc, b->bits);
	b->bits = NULL;
	b->nbytes = 0;
}

uint64_t floe_pq_bloom_hash(const void *p, size_t n)
{
	return (uint64_t)XXH64(p, n, 0);
}

static uint8_t *block_of(const struct floe_pq_bloom *b, uint64_t h)
{
	uint64_t z = b->nbytes / 32;
	return b->bits + (((h >> 32) * z) >> 32) * 32;
}

void floe_pq_bloom_insert(struct floe_pq_bloom *b, uint64_t h)
{
	uint8_t *blk = block_of(b, h);
	uint32_t x = (uint32_t)h;
	for (int i = 0; i < 8; i++) {
		uint32_t bit = (x * salt[i]) >> 27;
		blk[4 * i + (bit >> 3)] |= (uint8_t)(1u << (bit & 7));
	}
}

bool floe_pq_bloom_check(const struct floe_pq_bloom *b, uint64_t h)
{
	const uint8_t *blk = block_of(b, h);
	uint32_t x = (uint32_t)h;
	for (int i = 0; i < 8; i++) {
		uint32_t bit = (x * salt[i]) >> 27;
		if (!(blk[4 * i + (bit >> 3)] & (1u << (bit & 7))))
			return false;
	}
	return true;
}

/* A filter sized by floe_pq_bloom_size holds at most 8 * nbytes / 10 values. Each value
 * sets one bit in each of the eight words of its block, so each word lane of the filter
 * (nbytes bits across the blocks) takes one bit per value, and at that load a fraction
 * 1 - e^-0.8 = 55.07 % of the bits is set. */
#define FILL_MAX_PER_10K 5507u

/* Ones among the bits the filter of half the size would have: block j of the half is
 * blocks 2j and 2j + 1 or-ed together. */
static uint64_t ones_folded(const struct floe_pq_bloom *b)
{
	uint64_t n = 0;
	for (size_t at = 0; at < b->nbytes; at += 64) {
		for (size_t k = 0; k < 32; k += 8) {
			uint64_t x, y;
			memcpy(&x, b->bits + at + k, 8);
			memcpy(&y, b->bits + at + 32 + k, 8);
			n += (uint64_t)__builtin_popcountll(x | y);
		}
	}
	return n;
}

void floe_pq_bloom_shrink(struct floe_pq_bloom *b)
{
	/* With z = nbytes / 32 a power of two, block_of is the top log2(z) bits of the
	 * hash's high half, so halving the filter maps block i to block i / 2: the folded
	 * filter is bit for bit the one these values would have made at half the size. */
	while (b->nbytes > FLOE_PQ_BLOOM_MIN) {
		size_t half = b->nbytes / 2;
		if (ones_folded(b) * 10000u > (uint64_t)half * 8u * FILL_MAX_PER_10K)
			break;
		for (size_t j = 0; j < half / 32; j++)
			for (size_t k = 0; k < 32; k++)
				b->bits[j * 32 + k] =
				    (uint8_t)(b->bits[2 * j * 32 + k] | b->bits[(2 * j + 1) * 32 + k]);
		b->nbytes = half;
	}
}

int floe_pq_bloom_write(const struct floe_pq_bloom *b, struct floe_buf *out)
{
	struct floe_thrift t;
	floe_thrift_init(&t, out);
	floe_thrift_i32(&t, 1, (int32_t)b->nbytes);
	floe_thrift_struct(&t, 2); /* BloomFilterAlgorithm */
	floe_thrift_struct(&t, 1); /* BLOCK */
	floe_thrift_end(&t);
	floe_thrift_end(&t);
	floe_thrift_struct(&t, 3); /* BloomFilterHash */
	floe_thrift_struct(&t, 1); /* XXHASH */
	floe_thrift_end(&t);
	floe_thrift_end(&t);
	floe_thrift_struct(&t, 4); /* BloomFilterCompression */
	floe_thrift_struct(&t, 1); /* UNCOMPRESSED */
	floe_thrift_end(&t);
	floe_thrift_end(&t);
	floe_thrift_end(&t);
	int rc = floe_thrift_error(&t);
	return rc ? rc : floe_buf_append(out, b->bits, b->nbytes);
}

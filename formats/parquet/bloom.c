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

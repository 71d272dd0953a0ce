/* Parquet delta encodings (Encodings.md): DELTA_BINARY_PACKED for INT32/INT64 values,
 * DELTA_LENGTH_BYTE_ARRAY (delta-packed lengths, then the bytes) and DELTA_BYTE_ARRAY
 * (delta-packed prefix lengths shared with the previous value, then the suffixes as
 * DELTA_LENGTH_BYTE_ARRAY). Blocks of 128 values in 4 miniblocks of 32. The encoders read
 * the page's PLAIN bytes, so a page can pick its encoding when it closes. */
#ifndef FLOE_PQ_DELTA_H
#define FLOE_PQ_DELTA_H

#include <stddef.h>
#include <stdint.h>

struct floe_buf;

#define FLOE_PQ_DELTA_BLOCK 128
#define FLOE_PQ_DELTA_MINIBLOCKS 4

/* Caller-owned streaming DELTA_BINARY_PACKED encoder (no allocation of its own). */
struct floe_pq_delta {
	struct floe_buf *out; /* borrowed */
	int bits;	      /* 32 or 64: deltas wrap at this width */
	int err;	      /* sticky */
	uint64_t total, seen;
	int64_t prev;
	uint32_t n; /* deltas in the open block */
	int64_t deltas[FLOE_PQ_DELTA_BLOCK];
};

/* Writes the header for total values of bits (32 or 64) width at the end of out. */
void floe_pq_delta_init(struct floe_pq_delta *d, struct floe_buf *out, int bits, uint64_t total);
/* Adds one value; exactly total values must be put (an INT32 value sign-extended). */
void floe_pq_delta_put(struct floe_pq_delta *d, int64_t v);
/* Writes the last, partial block. Returns 0 or the first error (FLOE_ENOMEM/ELIMIT), or
 * FLOE_EINVAL when the count put differs from total. */
int floe_pq_delta_finish(struct floe_pq_delta *d);

/* Encodes the n values of PLAIN bytes (plain, len) — width 4 or 8 little-endian — as
 * DELTA_BINARY_PACKED at the end of out. */
int floe_pq_delta_ints(struct floe_buf *out, const uint8_t *plain, size_t len, int width);
/* Encodes the PLAIN BYTE_ARRAY values in (plain, len) (u32 LE length + bytes each, as
 * the writer produced them) as DELTA_LENGTH_BYTE_ARRAY at the end of out. */
int floe_pq_delta_lengths(struct floe_buf *out, const uint8_t *plain, size_t len);
/* Same input, DELTA_BYTE_ARRAY. */
int floe_pq_delta_strings(struct floe_buf *out, const uint8_t *plain, size_t len);
/* The same two encodings, made in the buffer that holds the PLAIN values, which then
 * holds the encoded ones: no second page-sized buffer. scratch takes the lengths while
 * the bytes move. On failure vals holds neither. */
int floe_pq_delta_lengths_inplace(struct floe_buf *vals, struct floe_buf *scratch);
int floe_pq_delta_strings_inplace(struct floe_buf *vals, struct floe_buf *scratch);
/* Bytes the values in (plain, len) share with their predecessor (what DELTA_BYTE_ARRAY
 * saves before compression) and their total length. */
void floe_pq_delta_shared(const uint8_t *plain, size_t len, uint64_t *shared, uint64_t *total);

#endif

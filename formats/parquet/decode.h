/* Decoders of the Parquet encodings the reader needs (Encodings.md), streaming over one
 * page's bytes with no allocation: the RLE / bit-packed hybrid (levels and dictionary
 * indices) and DELTA_BINARY_PACKED (integers, and the lengths inside
 * DELTA_LENGTH_BYTE_ARRAY and DELTA_BYTE_ARRAY). The input is hostile: they never read
 * outside (p, n), and running out of input or a value out of range is FLOE_ECORRUPT. */
#ifndef FLOE_PQ_DECODE_H
#define FLOE_PQ_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "formats/base/error.h"

/* Caller-owned RLE / bit-packed hybrid decoder state. */
struct floe_pq_rle_dec {
	const uint8_t *p, *end; /* the runs not yet started */
	int bw;			/* bit width, 0..32 */
	uint32_t run;		/* values left in the current RLE run */
	uint32_t val;		/* that run's value */
	uint32_t lit;		/* values left in the current bit-packed run, past buf */
	uint32_t nbuf, ibuf;	/* buf[ibuf..nbuf) are the next values */
	uint32_t buf[8];
};

/* Starts decoding the runs in p[0..n) (borrowed) of values bw (0..32) bits wide. */
void floe_pq_rle_dec_init(struct floe_pq_rle_dec *d, const uint8_t *p, size_t n, int bw);
/* The slow path of floe_pq_rle_dec_next: starts the next group or run. */
int floe_pq_rle_dec_refill(struct floe_pq_rle_dec *d, uint32_t *v);
/* The next value: 0, or FLOE_ECORRUPT when the runs are exhausted or malformed. */
static inline int floe_pq_rle_dec_next(struct floe_pq_rle_dec *d, uint32_t *v)
{
	if (d->run) {
		d->run--;
		*v = d->val;
		return 0;
	}
	if (d->ibuf < d->nbuf) {
		*v = d->buf[d->ibuf++];
		return 0;
	}
	return floe_pq_rle_dec_refill(d, v);
}

/* Caller-owned DELTA_BINARY_PACKED decoder state. */
struct floe_pq_dbp_dec {
	const uint8_t *p, *end; /* the bytes not yet read */
	int bits;		/* 32 or 64: values wrap at this width */
	uint32_t nmini, per_mini;
	uint64_t left;	       /* values not yet returned */
	bool first;	       /* the header's first value is not yet returned */
	uint64_t last;	       /* the value returned last, as its bits */
	uint64_t min_delta;    /* the current block's */
	const uint8_t *widths; /* the current block's miniblock bit widths */
	uint32_t mini;	       /* the current miniblock; nmini when a block must start */
	uint32_t mini_left;    /* its values not yet unpacked */
	uint32_t nbuf, ibuf;
	uint64_t buf[32];
};

/* Reads the header of the stream at p[0..n) (borrowed) for values of bits (32 or 64)
 * width. Returns 0, FLOE_ECORRUPT, or FLOE_EUNSUPPORTED for a block shape outside the
 * spec's. *count (if not NULL) receives the stream's number of values. */
int floe_pq_dbp_dec_init(struct floe_pq_dbp_dec *d, const uint8_t *p, size_t n, int bits,
			 uint64_t *count);
/* The next value (an INT32 value sign-extended): 0, or FLOE_ECORRUPT when the stream has
 * no more values or its bytes are short. */
int floe_pq_dbp_dec_next(struct floe_pq_dbp_dec *d, int64_t *v);
/* The bytes the stream at p[0..n) takes, header and blocks, found without decoding its
 * values (where the next section of a DELTA_LENGTH_BYTE_ARRAY page begins). */
int floe_pq_dbp_size(const uint8_t *p, size_t n, size_t *size);

#endif

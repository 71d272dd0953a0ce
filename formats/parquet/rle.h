/* Parquet RLE / bit-packed hybrid encoder (Encodings.md), used for repetition and
 * definition levels and for dictionary indices. Runs of 8 or more equal values become RLE
 * runs; everything else is bit-packed in groups of 8 (up to 63 groups per run, so the run
 * header is always one byte and can be patched in place). Errors are sticky. */
#ifndef FLOE_PQ_RLE_H
#define FLOE_PQ_RLE_H

#include <stddef.h>
#include <stdint.h>

struct floe_buf;

/* Caller-owned encoder state; hot path, so no allocation of its own. */
struct floe_rle {
	struct floe_buf *out; /* borrowed */
	int bit_width;	      /* 0..32 */
	int err;
	uint32_t buffered[8];
	int nbuf;
	uint32_t cur;		/* value of the current run of equal values */
	uint32_t repeat;	/* length of that run */
	uint32_t literal_count; /* values in the open bit-packed run (multiple of 8) */
	size_t literal_hdr;	/* offset of its header byte in out, or SIZE_MAX */
};

/* Number of bits needed to store values 0..max. */
int floe_rle_bit_width(uint32_t max);

/* Starts a run sequence at the end of out (borrowed) for values of bit_width bits. */
void floe_rle_init(struct floe_rle *r, struct floe_buf *out, int bit_width);
/* Adds one value (must fit in bit_width bits). */
void floe_rle_put_any(struct floe_rle *r, uint32_t v);
/* The same, with the common case inline: a value that extends a run already 8 long
 * (levels of a column that is always null or never, row after row, and a page's repeated
 * dictionary index) is only counted, without a call. */
static inline void floe_rle_put(struct floe_rle *r, uint32_t v)
{
	if (v == r->cur && r->repeat >= 8 && !r->err) {
		r->repeat++;
		return;
	}
	floe_rle_put_any(r, v);
}
/* Writes whatever is pending; afterwards the encoder is reusable for a new sequence with
 * floe_rle_init. Returns 0 or the first error met (FLOE_ENOMEM/FLOE_ELIMIT). */
int floe_rle_flush(struct floe_rle *r);

#endif

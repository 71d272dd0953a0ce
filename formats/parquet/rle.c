/* RLE / bit-packed hybrid encoder. The run detection follows the usual scheme: values are
 * collected 8 at a time; a group of 8 equal values starts an RLE run that then grows
 * without buffering, any other group is bit-packed into the open literal run. */
#include "rle.h"

#include "formats/base/buf.h"
#include "formats/base/error.h"

#include <string.h>

int floe_rle_bit_width(uint32_t max)
{
	return max ? 32 - __builtin_clz(max) : 0;
}

void floe_rle_init(struct floe_rle *r, struct floe_buf *out, int bit_width)
{
	r->out = out;
	r->bit_width = bit_width;
	r->err = 0;
	r->nbuf = 0;
	r->cur = 0;
	r->repeat = 0;
	r->literal_count = 0;
	r->literal_hdr = SIZE_MAX;
}

static uint8_t *room(struct floe_rle *r, size_t n)
{
	if (r->err)
		return NULL;
	/* The test of the room there is in line: a page's levels and indices take a group
	 * at a time. */
	if (r->out->cap - r->out->len >= n)
		return r->out->data + r->out->len;
	int rc = floe_buf_reserve(r->out, n);
	if (rc) {
		r->err = rc;
		return NULL;
	}
	return r->out->data + r->out->len;
}

/* Closes the open literal run by patching its header byte. */
static void end_literal(struct floe_rle *r)
{
	if (r->literal_hdr != SIZE_MAX && !r->err)
		r->out->data[r->literal_hdr] = (uint8_t)(((r->literal_count / 8) << 1) | 1);
	r->literal_hdr = SIZE_MAX;
	r->literal_count = 0;
}

/* Bit-packs the 8 buffered values (LSB first) into the open literal run. */
static void pack_group(struct floe_rle *r)
{
	int bw = r->bit_width;
	uint8_t *p = room(r, (size_t)bw + 1);
	if (!p) {
		r->nbuf = 0; /* the error is sticky; the values are lost with it */
		return;
	}
	if (r->literal_hdr == SIZE_MAX) {
		r->literal_hdr = r->out->len;
		*p++ = 0; /* patched by end_literal */
		r->out->len++;
	}
	/* Four bytes out whenever 32 bits are in: fewer than 32 left over and a value of
	 * at most 32 bits fit the accumulator. 8 values of bw bits are bw whole bytes, so
	 * the stores stay within them, and the last few go out a byte at a time. */
	uint64_t acc = 0;
	int nbits = 0;
	for (int i = 0; i < 8; i++) {
		acc |= (uint64_t)r->buffered[i] << nbits;
		nbits += bw;
		if (nbits >= 32) {
			uint32_t w = (uint32_t)acc;
			uint8_t le[4] = {(uint8_t)w, (uint8_t)(w >> 8), (uint8_t)(w >> 16),
					 (uint8_t)(w >> 24)};
			memcpy(p, le, 4);
			p += 4;
			acc >>= 32;
			nbits -= 32;
		}
	}
	for (; nbits > 0; nbits -= 8) {
		*p++ = (uint8_t)acc;
		acc >>= 8;
	}
	r->out->len += (size_t)bw; /* 8 values of bw bits are exactly bw bytes */
	r->literal_count += 8;
	r->nbuf = 0;
	/* 63 groups is the most a one-byte header can count. */
	if (r->literal_count / 8 >= 63)
		end_literal(r);
}

static void put_rle_run(struct floe_rle *r)
{
	size_t vbytes = ((size_t)r->bit_width + 7) / 8;
	uint8_t *p = room(r, 10 + vbytes);
	if (!p)
		return;
	uint64_t h = (uint64_t)r->repeat << 1;
	size_t n = 0;
	while (h >= 0x80) {
		p[n++] = (uint8_t)(h | 0x80);
		h >>= 7;
	}
	p[n++] = (uint8_t)h;
	for (size_t i = 0; i < vbytes; i++)
		p[n++] = (uint8_t)(r->cur >> (8 * i));
	r->out->len += n;
	r->repeat = 0;
}

static void group_full(struct floe_rle *r)
{
	if (r->repeat >= 8) {
		/* The 8 buffered values are all r->cur: they start an RLE run. */
		r->nbuf = 0;
		end_literal(r);
		return;
	}
	pack_group(r);
	r->repeat = 0;
}

void floe_rle_put_any(struct floe_rle *r, uint32_t v)
{
	if (r->err)
		return;
	if (v == r->cur && r->repeat > 0) {
		r->repeat++;
		if (r->repeat > 8)
			return; /* extends the RLE run */
	} else {
		if (r->repeat >= 8)
			put_rle_run(r);
		r->repeat = 1;
		r->cur = v;
	}
	r->buffered[r->nbuf++] = v;
	if (r->nbuf == 8)
		group_full(r);
}

int floe_rle_flush(struct floe_rle *r)
{
	if (r->repeat >= 8 && r->nbuf == 0) {
		put_rle_run(r);
	} else if (r->nbuf > 0) {
		if (r->literal_count == 0 && (uint32_t)r->nbuf == r->repeat) {
			/* Only one value repeated: a short RLE run is smaller than a padded group.
			 */
			put_rle_run(r);
			r->nbuf = 0;
		} else {
			for (int i = r->nbuf; i < 8; i++)
				r->buffered[i] = 0;
			pack_group(r);
		}
	}
	end_literal(r);
	r->nbuf = 0;
	r->repeat = 0;
	return r->err;
}

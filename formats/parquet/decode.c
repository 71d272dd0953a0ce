/* Streaming decoders for the RLE / bit-packed hybrid and DELTA_BINARY_PACKED. Values are
 * bit-packed LSB first in both. Every count read from the input is checked against the
 * bytes that are left before it is trusted, so the loops are bounded by the input. */
#include "decode.h"

#include <string.h>

/* Unsigned LEB128 from [*p, end): 0, or FLOE_ECORRUPT when truncated or over 64 bits. */
static int get_uvarint(const uint8_t **p, const uint8_t *end, uint64_t *out)
{
	uint64_t v = 0;
	const uint8_t *q = *p;
	for (int shift = 0; shift < 64 && q < end; shift += 7) {
		uint8_t b = *q++;
		if (shift == 63 && b > 1)
			return FLOE_ECORRUPT;
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*p = q;
			*out = v;
			return 0;
		}
	}
	return FLOE_ECORRUPT;
}

static int get_svarint(const uint8_t **p, const uint8_t *end, int64_t *out)
{
	uint64_t u;
	int rc = get_uvarint(p, end, &u);
	if (!rc)
		*out = (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
	return rc;
}

/* ---- RLE / bit-packed hybrid ---- */

void floe_pq_rle_dec_init(struct floe_pq_rle_dec *d, const uint8_t *p, size_t n, int bw)
{
	d->p = p;
	d->end = n ? p + n : p; /* NULL + 0 is undefined in C */
	d->bw = bw;
	d->run = d->val = d->lit = 0;
	d->nbuf = d->ibuf = 0;
}

/* Unpacks 8 values of bw (1..32) bits from exactly bw bytes at p. */
static void unpack8(const uint8_t *p, int bw, uint32_t *out)
{
	uint64_t acc = 0, mask = ((uint64_t)1 << bw) - 1;
	int nb = 0;
	for (int i = 0; i < 8; i++) {
		while (nb < bw) {
			acc |= (uint64_t)*p++ << nb;
			nb += 8;
		}
		out[i] = (uint32_t)(acc & mask);
		acc >>= bw;
		nb -= bw;
	}
}

/* Decodes the open bit-packed run's next group of 8 into buf. A run whose last group is
 * cut short by the end of the data is read as if padded with zeros (lit was capped to
 * the values the bytes hold, so no padding value is ever returned). */
static void next_group(struct floe_pq_rle_dec *d)
{
	uint32_t n = d->lit < 8 ? d->lit : 8;
	size_t bw = (size_t)d->bw, have = (size_t)(d->end - d->p);
	if (bw == 0) {
		memset(d->buf, 0, sizeof(d->buf));
	} else if (have >= bw) {
		unpack8(d->p, d->bw, d->buf);
		d->p += bw;
	} else {
		uint8_t tmp[32] = {0};
		memcpy(tmp, d->p, have);
		unpack8(tmp, d->bw, d->buf);
		d->p = d->end;
	}
	d->lit -= n;
	d->nbuf = n;
	d->ibuf = 0;
}

int floe_pq_rle_dec_refill(struct floe_pq_rle_dec *d, uint32_t *v)
{
	/* Every pass of the loop consumes a run header: bounded by the input. */
	for (;;) {
		if (d->lit) {
			next_group(d);
			break;
		}
		if (d->p >= d->end)
			return FLOE_ECORRUPT;
		uint64_t h;
		if (get_uvarint(&d->p, d->end, &h))
			return FLOE_ECORRUPT;
		uint64_t count = h >> 1;
		if (h & 1) {
			if (count > UINT32_MAX / 8)
				return FLOE_ECORRUPT;
			count *= 8;
			if (d->bw) {
				uint64_t fit = (uint64_t)(d->end - d->p) * 8 / (uint64_t)d->bw;
				if (count > fit)
					count = fit;
			}
			d->lit = (uint32_t)count;
			continue;
		}
		size_t vb = ((size_t)d->bw + 7) / 8;
		if ((size_t)(d->end - d->p) < vb || count > UINT32_MAX)
			return FLOE_ECORRUPT;
		uint32_t val = 0;
		for (size_t i = 0; i < vb; i++)
			val |= (uint32_t)d->p[i] << (8 * i);
		d->p += vb;
		if (d->bw < 32 && (val >> d->bw) != 0)
			return FLOE_ECORRUPT;
		if (count == 0)
			continue;
		d->val = val;
		d->run = (uint32_t)count - 1;
		*v = val;
		return 0;
	}
	*v = d->buf[d->ibuf++];
	return 0;
}

/* ---- DELTA_BINARY_PACKED ---- */

/* The spec's block shape: blocks a multiple of 128 values, miniblocks a multiple of 32.
 * Blocks beyond 32768 values are refused: no writer makes them, and they would let a
 * few bytes stand for very many values. */
#define DBP_MAX_BLOCK 32768u

/* Reads the header: block shape, value count, first value. */
static int dbp_header(const uint8_t **p, const uint8_t *end, uint32_t *nmini, uint32_t *per_mini,
		      uint64_t *count, int64_t *first)
{
	uint64_t block, mini;
	int rc;
	if ((rc = get_uvarint(p, end, &block)) || (rc = get_uvarint(p, end, &mini)) ||
	    (rc = get_uvarint(p, end, count)) || (rc = get_svarint(p, end, first)))
		return rc;
	if (block == 0 || block % 128 || mini == 0 || mini > block || block % mini ||
	    (block / mini) % 32)
		return FLOE_ECORRUPT;
	if (block > DBP_MAX_BLOCK)
		return FLOE_EUNSUPPORTED;
	*nmini = (uint32_t)mini;
	*per_mini = (uint32_t)(block / mini);
	return 0;
}

int floe_pq_dbp_dec_init(struct floe_pq_dbp_dec *d, const uint8_t *p, size_t n, int bits,
			 uint64_t *count)
{
	const uint8_t *end = p + n;
	uint64_t total;
	int64_t first;
	memset(d, 0, sizeof(*d));
	int rc = dbp_header(&p, end, &d->nmini, &d->per_mini, &total, &first);
	if (rc)
		return rc;
	d->p = p;
	d->end = end;
	d->bits = bits;
	d->left = total;
	d->first = true;
	d->last = (uint64_t)first;
	d->mini = d->nmini;
	if (count)
		*count = total;
	return 0;
}

/* Unpacks 32 values of bw (0..64) bits from exactly 4 * bw bytes at p. */
static void unpack32(const uint8_t *p, int bw, uint64_t *out)
{
	if (bw == 0) {
		memset(out, 0, 32 * sizeof(*out));
		return;
	}
	uint64_t mask = bw == 64 ? UINT64_MAX : ((uint64_t)1 << bw) - 1;
	size_t bit = 0;
	for (int i = 0; i < 32; i++, bit += (size_t)bw) {
		size_t byte = bit >> 3;
		int sh = (int)(bit & 7), got = 8 - sh;
		uint64_t v = (uint64_t)p[byte++] >> sh;
		while (got < bw) {
			v |= (uint64_t)p[byte++] << got;
			got += 8;
		}
		out[i] = v & mask;
	}
}

/* Unpacks the next 32 deltas, starting a miniblock or a block where needed. */
static int dbp_refill(struct floe_pq_dbp_dec *d)
{
	if (d->mini_left == 0) {
		if (++d->mini >= d->nmini) {
			int64_t md;
			if (get_svarint(&d->p, d->end, &md) ||
			    (size_t)(d->end - d->p) < (size_t)d->nmini)
				return FLOE_ECORRUPT;
			d->min_delta = (uint64_t)md;
			d->widths = d->p;
			d->p += d->nmini;
			d->mini = 0;
		}
		d->mini_left = d->per_mini;
	}
	int bw = d->widths[d->mini];
	if (bw > d->bits || (size_t)(d->end - d->p) < (size_t)bw * 4)
		return FLOE_ECORRUPT;
	unpack32(d->p, bw, d->buf);
	d->p += (size_t)bw * 4;
	d->mini_left -= 32;
	d->nbuf = 32;
	d->ibuf = 0;
	return 0;
}

int floe_pq_dbp_dec_next(struct floe_pq_dbp_dec *d, int64_t *v)
{
	if (d->left == 0)
		return FLOE_ECORRUPT;
	if (d->first) {
		d->first = false;
	} else {
		if (d->ibuf == d->nbuf) {
			int rc = dbp_refill(d);
			if (rc)
				return rc;
		}
		/* Wrapping arithmetic, as the writer's deltas wrap. */
		d->last += d->min_delta + d->buf[d->ibuf++];
	}
	d->left--;
	if (d->bits == 32)
		*v = (int32_t)(uint32_t)d->last;
	else
		*v = (int64_t)d->last;
	return 0;
}

int floe_pq_dbp_size(const uint8_t *p, size_t n, size_t *size)
{
	const uint8_t *start = p, *end = p + n;
	uint32_t nmini, per_mini;
	uint64_t total;
	int64_t first;
	int rc = dbp_header(&p, end, &nmini, &per_mini, &total, &first);
	if (rc)
		return rc;
	/* The first value is in the header; the other total - 1 are deltas in blocks. Only
	 * the miniblocks that hold values are present; the widths of the others are
	 * present and may be anything. Every block consumes bytes: bounded by the input. */
	uint64_t left = total ? total - 1 : 0;
	while (left) {
		int64_t md;
		if (get_svarint(&p, end, &md) || (size_t)(end - p) < nmini)
			return FLOE_ECORRUPT;
		const uint8_t *w = p;
		p += nmini;
		for (uint32_t m = 0; m < nmini && left; m++) {
			if (w[m] > 64)
				return FLOE_ECORRUPT;
			size_t bytes = (size_t)w[m] * (per_mini / 8);
			if ((size_t)(end - p) < bytes)
				return FLOE_ECORRUPT;
			p += bytes;
			left -= left < per_mini ? left : per_mini;
		}
	}
	*size = (size_t)(p - start);
	return 0;
}

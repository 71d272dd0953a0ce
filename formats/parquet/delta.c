/* Delta encoders. Values are bit-packed LSB first, like the RLE hybrid's bit-packed runs.
 * The PLAIN inputs were produced by the writer itself, so they are well formed; the
 * length checks below only guard our own invariants. */
#include "delta.h"

#include "formats/base/buf.h"
#include "formats/base/error.h"

#include <stdbool.h>
#include <string.h>

#define MINI (FLOE_PQ_DELTA_BLOCK / FLOE_PQ_DELTA_MINIBLOCKS)

void floe_pq_delta_init(struct floe_pq_delta *d, struct floe_buf *out, int bits, uint64_t total)
{
	d->out = out;
	d->bits = bits;
	d->err = 0;
	d->total = total;
	d->seen = 0;
	d->prev = 0;
	d->n = 0;
	int rc = floe_buf_put_uvarint(out, FLOE_PQ_DELTA_BLOCK);
	if (!rc)
		rc = floe_buf_put_uvarint(out, FLOE_PQ_DELTA_MINIBLOCKS);
	if (!rc)
		rc = floe_buf_put_uvarint(out, total);
	/* With no values the first value is still part of the header. */
	if (!rc && total == 0)
		rc = floe_buf_put_svarint(out, 0);
	d->err = rc;
}

static int width_of(uint64_t v)
{
	return v ? 64 - __builtin_clzll(v) : 0;
}

/* Appends 32 values of bw bits, LSB first: exactly 4 * bw bytes. */
static int pack32(struct floe_buf *out, const uint64_t *v, int bw)
{
	size_t nbytes = (size_t)bw * 4;
	int rc = floe_buf_reserve(out, nbytes);
	if (rc)
		return rc;
	uint8_t *p = out->data + out->len;
	memset(p, 0, nbytes);
	size_t bit = 0;
	for (int i = 0; i < MINI; i++) {
		uint64_t x = v[i];
		int left = bw;
		while (left > 0) {
			size_t byte = bit >> 3;
			int off = (int)(bit & 7);
			int take = 8 - off < left ? 8 - off : left;
			p[byte] |= (uint8_t)((x & ((1u << take) - 1)) << off);
			x >>= take;
			left -= take;
			bit += (size_t)take;
		}
	}
	out->len += nbytes;
	return 0;
}

static void flush_block(struct floe_pq_delta *d)
{
	if (d->err) {
		d->n = 0; /* after a failure values are dropped, never past the block's end */
		return;
	}
	if (d->n == 0)
		return;
	int64_t min = d->deltas[0];
	for (uint32_t i = 1; i < d->n; i++)
		if (d->deltas[i] < min)
			min = d->deltas[i];
	uint64_t u[FLOE_PQ_DELTA_BLOCK];
	uint64_t mask = d->bits == 32 ? 0xFFFFFFFFu : UINT64_MAX;
	for (uint32_t i = 0; i < FLOE_PQ_DELTA_BLOCK; i++)
		u[i] = i < d->n ? ((uint64_t)d->deltas[i] - (uint64_t)min) & mask : 0;
	uint8_t bw[FLOE_PQ_DELTA_MINIBLOCKS];
	uint32_t used = (d->n + MINI - 1) / MINI;
	for (uint32_t m = 0; m < FLOE_PQ_DELTA_MINIBLOCKS; m++) {
		uint64_t any = 0;
		for (uint32_t i = 0; m < used && i < MINI; i++)
			any |= u[m * MINI + i];
		bw[m] = (uint8_t)width_of(any);
	}
	int rc = floe_buf_put_svarint(d->out, min);
	if (!rc)
		rc = floe_buf_append(d->out, bw, sizeof(bw));
	for (uint32_t m = 0; m < used && !rc; m++)
		rc = pack32(d->out, u + m * MINI, bw[m]);
	d->err = rc;
	d->n = 0;
}

void floe_pq_delta_put(struct floe_pq_delta *d, int64_t v)
{
	if (d->bits == 32)
		v = (int32_t)(uint32_t)v;
	if (d->seen++ == 0) {
		if (!d->err)
			d->err = floe_buf_put_svarint(d->out, v);
		d->prev = v;
		return;
	}
	int64_t delta;
	if (d->bits == 32)
		delta = (int32_t)((uint32_t)v - (uint32_t)d->prev);
	else
		delta = (int64_t)((uint64_t)v - (uint64_t)d->prev);
	d->prev = v;
	d->deltas[d->n++] = delta;
	if (d->n == FLOE_PQ_DELTA_BLOCK)
		flush_block(d);
}

int floe_pq_delta_finish(struct floe_pq_delta *d)
{
	flush_block(d);
	if (d->err)
		return d->err;
	return d->seen == d->total ? 0 : FLOE_EINVAL;
}

int floe_pq_delta_ints(struct floe_buf *out, const uint8_t *plain, size_t len, int width)
{
	size_t n = len / (size_t)width;
	struct floe_pq_delta d;
	floe_pq_delta_init(&d, out, width * 8, n);
	for (size_t i = 0; i < n; i++) {
		const uint8_t *p = plain + i * (size_t)width;
		uint64_t v = 0;
		for (int k = width - 1; k >= 0; k--)
			v = v << 8 | p[k];
		floe_pq_delta_put(&d, width == 4 ? (int64_t)(int32_t)(uint32_t)v : (int64_t)v);
	}
	return floe_pq_delta_finish(&d);
}

static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Number of values in a PLAIN BYTE_ARRAY buffer. */
static size_t count_values(const uint8_t *plain, size_t len)
{
	size_t n = 0;
	for (size_t at = 0; at + 4 <= len; n++)
		at += 4 + (size_t)rd32(plain + at);
	return n;
}

/* The delta-packed lengths of the values in (plain, len), at the end of out. */
static int lengths_header(struct floe_buf *out, const uint8_t *plain, size_t len, size_t n)
{
	struct floe_pq_delta d;
	floe_pq_delta_init(&d, out, 32, n);
	for (size_t at = 0; at + 4 <= len;) {
		uint32_t l = rd32(plain + at);
		floe_pq_delta_put(&d, (int64_t)l);
		at += 4 + (size_t)l;
	}
	return floe_pq_delta_finish(&d);
}

int floe_pq_delta_lengths(struct floe_buf *out, const uint8_t *plain, size_t len)
{
	size_t n = count_values(plain, len);
	int rc = lengths_header(out, plain, len, n);
	if (rc)
		return rc;
	/* Room for the bytes alone, without their 4-byte prefixes: a page of page_size
	 * PLAIN bytes then fits a buffer of page_size, not of twice that. */
	if ((rc = floe_buf_reserve(out, len >= 4 * n ? len - 4 * n : 0)))
		return rc;
	for (size_t at = 0; at + 4 <= len;) {
		uint32_t l = rd32(plain + at);
		memcpy(out->data + out->len, plain + at + 4, l);
		out->len += l;
		at += 4 + (size_t)l;
	}
	return 0;
}

static uint32_t prefix(const uint8_t *a, uint32_t an, const uint8_t *b, uint32_t bn)
{
	uint32_t n = an < bn ? an : bn, i = 0;
	while (i < n && a[i] == b[i])
		i++;
	return i;
}

void floe_pq_delta_shared(const uint8_t *plain, size_t len, uint64_t *shared, uint64_t *total)
{
	const uint8_t *prev = NULL;
	uint32_t pl = 0;
	*shared = *total = 0;
	for (size_t at = 0; at + 4 <= len;) {
		uint32_t l = rd32(plain + at);
		const uint8_t *v = plain + at + 4;
		if (prev)
			*shared += prefix(prev, pl, v, l);
		*total += l;
		prev = v;
		pl = l;
		at += 4 + (size_t)l;
	}
}

/* The delta-packed prefix lengths, then suffix lengths, of the values in (plain, len),
 * at the end of out; with suffixes, their bytes after that. */
static int strings_encode(struct floe_buf *out, const uint8_t *plain, size_t len, size_t n,
			  bool suffixes)
{
	struct floe_pq_delta d;
	/* Pass 1: prefix lengths; pass 2: suffix lengths; pass 3: suffix bytes. */
	for (int pass = 0; pass < (suffixes ? 3 : 2); pass++) {
		if (pass < 2)
			floe_pq_delta_init(&d, out, 32, n);
		const uint8_t *prev = NULL;
		uint32_t pl = 0;
		for (size_t at = 0; at + 4 <= len;) {
			uint32_t l = rd32(plain + at);
			const uint8_t *v = plain + at + 4;
			uint32_t k = prev ? prefix(prev, pl, v, l) : 0;
			if (pass == 0) {
				floe_pq_delta_put(&d, (int64_t)k);
			} else if (pass == 1) {
				floe_pq_delta_put(&d, (int64_t)(l - k));
			} else {
				int rc = floe_buf_append(out, v + k, l - k);
				if (rc)
					return rc;
			}
			prev = v;
			pl = l;
			at += 4 + (size_t)l;
		}
		if (pass < 2) {
			int rc = floe_pq_delta_finish(&d);
			if (rc)
				return rc;
		}
	}
	return 0;
}

int floe_pq_delta_strings(struct floe_buf *out, const uint8_t *plain, size_t len)
{
	return strings_encode(out, plain, len, count_values(plain, len), true);
}

/* Moves the bytes of the PLAIN values in b to its front, without their length prefixes
 * and, with shared, without the prefix each shares with the value before it. Every
 * value moves left, and value i moves only once value i+1's shared prefix is known: no
 * byte is overwritten before it has been read. */
static void strip(struct floe_buf *b, bool shared)
{
	uint8_t *p = b->data;
	size_t len = b->len, o = 0, from = 0, n = 0; /* the previous value's move */
	const uint8_t *prev = NULL;
	uint32_t pl = 0;
	for (size_t at = 0; at + 4 <= len;) {
		uint32_t l = rd32(p + at);
		const uint8_t *v = p + at + 4;
		uint32_t k = shared && prev ? prefix(prev, pl, v, l) : 0;
		memmove(p + o, p + from, n);
		o += n;
		from = at + 4 + k;
		n = l - k;
		prev = v;
		pl = l;
		at += 4 + (size_t)l;
	}
	memmove(p + o, p + from, n);
	b->len = o + n;
}

/* Puts hdr's bytes in front of b's. */
static int prepend(struct floe_buf *b, const struct floe_buf *hdr)
{
	size_t n = b->len;
	int rc = floe_buf_reserve(b, hdr->len);
	if (rc)
		return rc;
	memmove(b->data + hdr->len, b->data, n);
	memcpy(b->data, hdr->data, hdr->len);
	b->len = n + hdr->len;
	return 0;
}

int floe_pq_delta_lengths_inplace(struct floe_buf *vals, struct floe_buf *scratch)
{
	if (!vals->len)
		return floe_pq_delta_lengths(vals, NULL, 0);
	floe_buf_reset(scratch);
	int rc = lengths_header(scratch, vals->data, vals->len, count_values(vals->data, vals->len));
	if (rc)
		return rc;
	strip(vals, false);
	return prepend(vals, scratch);
}

int floe_pq_delta_strings_inplace(struct floe_buf *vals, struct floe_buf *scratch)
{
	if (!vals->len)
		return floe_pq_delta_strings(vals, NULL, 0);
	floe_buf_reset(scratch);
	int rc = strings_encode(scratch, vals->data, vals->len,
				count_values(vals->data, vals->len), false);
	if (rc)
		return rc;
	strip(vals, true);
	return prepend(vals, scratch);
}

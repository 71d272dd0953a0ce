/* Capped string bounds. Comparisons are unsigned bytewise, which for UTF-8 is code point
 * order (the order Parquet's TYPE_ORDER and Iceberg both use for strings). */
#include "bound.h"

#include "formats/base/utf8.h"

#include <string.h>

int floe_pq_bytes_cmp(const uint8_t *a, size_t an, const uint8_t *b, size_t bn)
{
	size_t n = an < bn ? an : bn;
	int c = n ? memcmp(a, b, n) : 0;
	if (c)
		return c;
	return an < bn ? -1 : an > bn ? 1 : 0;
}

/* Where to cut a value longer than the cap: at most FLOE_PQ_BOUND_MAX bytes, never in
 * the middle of a character. */
static size_t cut_point(const uint8_t *p, size_t n)
{
	size_t cut = FLOE_PQ_BOUND_MAX;
	if (cut >= n)
		return n;
	while (cut > 0 && (p[cut] & 0xC0) == 0x80)
		cut--;
	return cut;
}

/* Turns the prefix b->v[0..len) into the smallest string above every string with that
 * prefix by incrementing its last character (skipping surrogates; a U+10FFFF is dropped
 * and the one before it incremented). False if no such string exists. */
static bool increment(struct floe_pq_bound *b)
{
	size_t len = b->len;
	while (len > 0) {
		size_t start = len - 1;
		while (start > 0 && (b->v[start] & 0xC0) == 0x80)
			start--;
		uint32_t cp = 0;
		/* Values are valid UTF-8 (the writer repairs them): a character that is not
		 * is passed over like U+10FFFF. */
		bool valid = floe_utf8_get(b->v + start, len - start, &cp) == len - start;
		cp++;
		if (cp >= 0xD800 && cp <= 0xDFFF)
			cp = 0xE000;
		if (valid && cp <= 0x10FFFF) {
			b->len = start + floe_utf8_put(b->v + start, cp);
			return true;
		}
		len = start;
	}
	return false;
}

void floe_pq_bound_lower(struct floe_pq_bound *b, const uint8_t *p, size_t n)
{
	if (b->set) {
		int c = floe_pq_bytes_cmp(p, n, b->v, b->len);
		if (c > 0)
			return;
		if (c == 0) {
			b->exact = true; /* the prefix itself is a value */
			return;
		}
	}
	size_t cut = cut_point(p, n);
	memcpy(b->v, p, cut);
	b->len = cut;
	b->exact = cut == n;
	b->set = true;
}

void floe_pq_bound_upper(struct floe_pq_bound *b, const uint8_t *p, size_t n)
{
	if (b->set) {
		if (b->unbounded)
			return;
		int c = floe_pq_bytes_cmp(p, n, b->v, b->len);
		if (c < 0)
			return;
		if (c == 0) {
			b->exact = true; /* the bound itself is a value */
			return;
		}
	}
	b->set = true;
	size_t cut = cut_point(p, n);
	memcpy(b->v, p, cut);
	b->len = cut;
	b->exact = cut == n;
	if (!b->exact && !increment(b)) {
		b->unbounded = true;
		b->len = 0;
	}
}

void floe_pq_bound_shorten(struct floe_pq_bound *b, size_t max, bool upper)
{
	if (!b->set || b->unbounded || b->len <= max)
		return;
	size_t cut = max;
	while (cut > 0 && (b->v[cut] & 0xC0) == 0x80)
		cut--;
	b->len = cut;
	b->exact = false;
	if (upper && !increment(b)) {
		b->unbounded = true;
		b->len = 0;
	}
}

void floe_pq_bound_merge_lower(struct floe_pq_bound *dst, const struct floe_pq_bound *src)
{
	if (!src->set)
		return;
	int c = dst->set ? floe_pq_bytes_cmp(src->v, src->len, dst->v, dst->len) : -1;
	if (c < 0) {
		*dst = *src;
	} else if (c == 0) {
		dst->exact = dst->exact || src->exact;
	}
}

void floe_pq_bound_merge_upper(struct floe_pq_bound *dst, const struct floe_pq_bound *src)
{
	if (!src->set || (dst->set && dst->unbounded))
		return;
	if (src->unbounded || !dst->set) {
		*dst = *src;
		return;
	}
	int c = floe_pq_bytes_cmp(src->v, src->len, dst->v, dst->len);
	if (c > 0)
		*dst = *src;
	else if (c == 0)
		dst->exact = dst->exact || src->exact;
}

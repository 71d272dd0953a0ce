/* UTF-8 decoding, encoding, validation and repair after the Unicode table of well-formed
 * byte sequences (Unicode 15, table 3-7): the second byte's range depends on the first,
 * so overlong forms, surrogates and code points above U+10FFFF are refused without
 * decoding. Validation has an ASCII fast path (32, then 8 bytes at a time). */
#include "utf8.h"

#include "buf.h"

#include <string.h>

/* The one table: the length (1 to 4) of the well-formed sequence at s[0..n) and its code
 * point in *cp (cp may be NULL), or 0 when the bytes there are not one; then *bad (may be
 * NULL) gets the length of the maximal ill-formed subpart there (at least 1), the unit
 * that Unicode's "substitution of maximal subparts" replaces by one U+FFFD. */
static size_t seq(const uint8_t *s, size_t n, uint32_t *cp, size_t *bad)
{
	uint8_t c = s[0];
	if (c < 0x80) {
		if (cp)
			*cp = c;
		return 1;
	}
	size_t len;
	uint32_t v;
	uint8_t lo = 0x80, hi = 0xbf; /* the range of the second byte */
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
		v = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		v = c & 0x0f;
		if (c == 0xe0)
			lo = 0xa0; /* overlong below U+0800 */
		else if (c == 0xed)
			hi = 0x9f; /* surrogates */
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		v = c & 0x07;
		if (c == 0xf0)
			lo = 0x90; /* overlong below U+10000 */
		else if (c == 0xf4)
			hi = 0x8f; /* above U+10FFFF */
	} else {
		if (bad)
			*bad = 1;
		return 0;
	}
	size_t i = 1;
	for (; i < len && i < n; i++) {
		uint8_t l = i == 1 ? lo : 0x80, h = i == 1 ? hi : 0xbf;
		if (s[i] < l || s[i] > h)
			break;
		v = v << 6 | (s[i] & 0x3f);
	}
	if (i < len) {
		if (bad)
			*bad = i;
		return 0;
	}
	if (cp)
		*cp = v;
	return len;
}

size_t floe_utf8_get(const uint8_t *s, size_t n, uint32_t *cp)
{
	return seq(s, n, cp, NULL);
}

size_t floe_utf8_put(uint8_t *out, uint32_t cp)
{
	if (cp < 0x80) {
		out[0] = (uint8_t)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (uint8_t)(0xc0 | (cp >> 6));
		out[1] = (uint8_t)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (uint8_t)(0xe0 | (cp >> 12));
		out[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3f));
		out[2] = (uint8_t)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (uint8_t)(0xf0 | (cp >> 18));
	out[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3f));
	out[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3f));
	out[3] = (uint8_t)(0x80 | (cp & 0x3f));
	return 4;
}

/* The general loop of floe_utf8_valid from i (a character boundary), for a value with
 * a byte above ASCII at or after i: out of line, so that the ASCII paths before it save
 * no registers. */
__attribute__((noinline)) static size_t valid_from(const uint8_t *p, size_t n, size_t i)
{
	const uint64_t hi = 0x8080808080808080ULL;
	while (i < n) {
		/* ASCII, 32 then 8 bytes at a time. */
		if (n - i >= 32) {
			uint64_t w[4];
			memcpy(w, p + i, 32);
			if (!((w[0] | w[1] | w[2] | w[3]) & hi)) {
				i += 32;
				continue;
			}
		}
		if (n - i >= 8) {
			uint64_t w;
			memcpy(&w, p + i, 8);
			if (!(w & hi)) {
				i += 8;
				continue;
			}
		} else if (n >= 8) {
			/* The tail: the last 8 bytes at once, overlapping bytes already checked. */
			uint64_t w;
			memcpy(&w, p + n - 8, 8);
			if (!(w & hi))
				return n;
		}
		if (p[i] < 0x80) {
			i++;
			continue;
		}
		size_t bad, l = seq(p + i, n - i, NULL, &bad);
		if (!l)
			return i;
		i += l;
	}
	return n;
}

size_t floe_utf8_valid(const uint8_t *p, size_t n)
{
	const uint64_t hi = 0x8080808080808080ULL;
	size_t i = 0;
	/* Short values (a method, a status, a protocol) at once: two loads that overlap
	 * cover 4 to 7 bytes, three single bytes 1 to 3. */
	if (n < 8) {
		uint32_t a = 0, b = 0;
		if (n >= 4) {
			memcpy(&a, p, 4);
			memcpy(&b, p + n - 4, 4);
		} else if (n > 0) {
			a = (uint32_t)(p[0] | p[n / 2] | p[n - 1]);
		}
		if (!((a | b) & 0x80808080u))
			return n;
		return valid_from(p, n, 0);
	}
	/* ASCII, the common case: 32 bytes at a time, then 8, then the last 32 or 8 bytes at
	 * once (overlapping bytes already checked). The first byte above ASCII hands the
	 * rest to the general loop. */
	uint64_t w[4];
	for (; n - i >= 32; i += 32) {
		memcpy(w, p + i, 32);
		if ((w[0] | w[1] | w[2] | w[3]) & hi)
			return valid_from(p, n, i);
	}
	if (n >= 32) {
		memcpy(w, p + n - 32, 32);
		return (w[0] | w[1] | w[2] | w[3]) & hi ? valid_from(p, n, i) : n;
	}
	for (; n - i >= 8; i += 8) {
		memcpy(w, p + i, 8);
		if (w[0] & hi)
			return valid_from(p, n, i);
	}
	memcpy(w, p + n - 8, 8);
	return w[0] & hi ? valid_from(p, n, i) : n;
}

int floe_utf8_repair(const uint8_t *p, size_t n, struct floe_buf *scratch, const uint8_t **out,
			size_t *out_len, uint64_t *replaced)
{
	size_t ok = floe_utf8_valid(p, n);
	if (ok == n) {
		*out = p;
		*out_len = n;
		return 0;
	}
	static const uint8_t fffd[3] = {0xEF, 0xBF, 0xBD};
	uint64_t count = 0;
	int rc;
	floe_buf_reset(scratch);
	if ((rc = floe_buf_append(scratch, p, ok)))
		return rc;
	size_t i = ok;
	while (i < n) {
		size_t bad = 0, l = seq(p + i, n - i, NULL, &bad);
		if (l) {
			rc = floe_buf_append(scratch, p + i, l);
			i += l;
		} else {
			rc = floe_buf_append(scratch, fffd, 3);
			count++;
			i += bad;
		}
		if (rc)
			return rc;
	}
	*out = scratch->data;
	*out_len = scratch->len;
	*replaced += count;
	return 0;
}

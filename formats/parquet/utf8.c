/* UTF-8 checking with an ASCII fast path (8 bytes at a time) and the Unicode table of
 * well-formed byte sequences for everything else. */
#include "utf8.h"

#include "formats/base/buf.h"

#include <string.h>

/* Length of the well-formed sequence at p[0..n), or 0 if ill-formed; *bad gets the
 * length of the maximal ill-formed subpart to replace (at least 1) in that case. */
static size_t seq_len(const uint8_t *p, size_t n, size_t *bad)
{
	uint8_t c = p[0];
	size_t need;
	uint8_t lo = 0x80, hi = 0xBF; /* range of the second byte */
	if (c < 0x80)
		return 1;
	if (c >= 0xC2 && c <= 0xDF) {
		need = 2;
	} else if (c >= 0xE0 && c <= 0xEF) {
		need = 3;
		if (c == 0xE0)
			lo = 0xA0; /* overlong below U+0800 */
		else if (c == 0xED)
			hi = 0x9F; /* surrogates */
	} else if (c >= 0xF0 && c <= 0xF4) {
		need = 4;
		if (c == 0xF0)
			lo = 0x90; /* overlong below U+10000 */
		else if (c == 0xF4)
			hi = 0x8F; /* above U+10FFFF */
	} else {
		*bad = 1;
		return 0;
	}
	size_t i = 1;
	for (; i < need && i < n; i++) {
		uint8_t b = p[i];
		uint8_t l = i == 1 ? lo : 0x80, h = i == 1 ? hi : 0xBF;
		if (b < l || b > h)
			break;
	}
	if (i == need)
		return need;
	*bad = i;
	return 0;
}

size_t floe_pq_utf8_valid(const uint8_t *p, size_t n)
{
	size_t i = 0;
	const uint64_t hi = 0x8080808080808080ULL;
	while (i < n) {
		/* ASCII, the common case, 32 then 8 bytes at a time. */
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
		size_t bad, l = seq_len(p + i, n - i, &bad);
		if (!l)
			return i;
		i += l;
	}
	return n;
}

int floe_pq_utf8_repair(const uint8_t *p, size_t n, struct floe_buf *scratch, const uint8_t **out,
			size_t *out_len, uint64_t *replaced)
{
	size_t ok = floe_pq_utf8_valid(p, n);
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
		size_t bad = 0, l = seq_len(p + i, n - i, &bad);
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

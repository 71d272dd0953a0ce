/* The per-event path's text helpers (aggregator.c): an integer's decimal text, as
 * distinct hashes it, a key's bytes copied without a call, and a decimal's number without
 * strtod. In line: they run for every event. */
#ifndef FLOE_AGG_TEXT_H
#define FLOE_AGG_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Two decimal digits of each number below 100, for floe_agg_int_text. */
static const char floe_agg_digits2[] =
    "0001020304050607080910111213141516171819202122232425262728293031323334353637383940414243444546474849"
    "5051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899";

/* The number of decimal digits of u: from its bit length (log10(2) is about
 * 1233 / 4096), one more when it reaches the next power of ten (0 counted as 1). */
static inline size_t floe_agg_int_digits(uint64_t u)
{
	static const uint64_t pow10[20] = {
	    1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull,
	    100000000ull, 1000000000ull, 10000000000ull, 100000000000ull, 1000000000000ull,
	    10000000000000ull, 100000000000000ull, 1000000000000000ull, 10000000000000000ull,
	    100000000000000000ull, 1000000000000000000ull, 10000000000000000000ull};
	u |= 1; /* the same count, and 0 is one digit */
	unsigned n = ((64u - (unsigned)__builtin_clzll(u)) * 1233u) >> 12; /* 0..19 */
	return n + (u >= pow10[n]);
}

/* The decimal text of v into out (at least 20 bytes); returns its length. As printf's
 * "%lld", without its cost on the per-event path (distinct hashes an integer's text, so
 * that its sketch is the one its text made before the column was typed): its length
 * first, then two digits a division, from the end, in place. */
static inline size_t floe_agg_int_text(int64_t v, char *out)
{
	uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
	size_t n = (v < 0) + floe_agg_int_digits(u);
	char *p = out + n;
	for (; u > UINT32_MAX; u /= 100) {
		p -= 2;
		memcpy(p, floe_agg_digits2 + 2 * (u % 100), 2);
	}
	/* The rest in 32 bits, whose division by 100 is a shorter multiply. */
	uint32_t w = (uint32_t)u;
	for (; w >= 100; w /= 100) {
		p -= 2;
		memcpy(p, floe_agg_digits2 + 2 * (w % 100), 2);
	}
	if (w >= 10)
		memcpy(p - 2, floe_agg_digits2 + 2 * w, 2);
	else
		p[-1] = (char)('0' + w);
	if (v < 0)
		out[0] = '-';
	return n;
}

/* Copies a key's n bytes from s to d: a few bytes, without a call up to 16. */
static inline void floe_agg_key_copy(uint8_t *d, const char *s, size_t n)
{
	if (n > 16) {
		memcpy(d, s, n);
	} else if (n >= 8) { /* two words, overlapping when n < 16 */
		uint64_t a, b;
		memcpy(&a, s, 8);
		memcpy(&b, s + n - 8, 8);
		memcpy(d, &a, 8);
		memcpy(d + n - 8, &b, 8);
	} else if (n >= 4) {
		uint32_t a, b;
		memcpy(&a, s, 4);
		memcpy(&b, s + n - 4, 4);
		memcpy(d, &a, 4);
		memcpy(d + n - 4, &b, 4);
	} else if (n) { /* 1 to 3 bytes: the first, the middle and the last */
		d[0] = (uint8_t)s[0];
		d[n / 2] = (uint8_t)s[n / 2];
		d[n - 1] = (uint8_t)s[n - 1];
	}
}

/* Exact powers of ten as doubles (10^22 is the largest a double holds exactly). */
static const double floe_agg_pow10_exact[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
					      1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
					      1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* The common case of number_of without strtod: an optional sign, digits and an optional
 * fraction, at most 15 digits in all. The digits then form an integer below 2^53 and the
 * divisor is an exact power of ten, so one IEEE division rounds correctly and gives
 * exactly strtod's double (Clinger's fast path). Returns -1 when the text is outside
 * this case (strtod decides), else 1 with *out set. */
static inline int floe_agg_fast_decimal(const char *s, size_t n, double *out)
{
	size_t i = 0, digits = 0, frac = 0;
	bool neg = false, dot = false;
	uint64_t mant = 0;
	if (n && (s[0] == '-' || s[0] == '+'))
		neg = s[i++] == '-';
	for (; i < n; i++) {
		unsigned c = (unsigned char)s[i];
		if (c == '.' && !dot) {
			dot = true;
			continue;
		}
		if (c - '0' > 9 || ++digits > 15)
			return -1;
		mant = mant * 10 + (c - '0');
		frac += dot;
	}
	if (!digits)
		return -1;
	double d = (double)mant / floe_agg_pow10_exact[frac];
	*out = neg ? -d : d;
	return 1;
}

#endif

/* The few elementary functions the sketches need (natural log and exp, square root,
 * powers of two, ceiling), written out so that the agent does not depend on libm, which
 * floe does not link. Each is accurate to a few units in the last place on its domain,
 * far below the sketches' own error, and cheap enough for the per-event path. */
#ifndef FLOE_AGG_MATH_H
#define FLOE_AGG_MATH_H

#include <stdint.h>
#include <string.h>

#define FLOE_AGG_LN2_HI 6.93147180369123816490e-01 /* ln 2 to 32 bits: k * this is exact */
#define FLOE_AGG_LN2_LO 1.90821492927058770002e-10
#define FLOE_AGG_LN2 0.693147180559945309417

static inline uint64_t floe_agg_bits(double d)
{
	uint64_t b;
	memcpy(&b, &d, sizeof(b));
	return b;
}

static inline double floe_agg_from_bits(uint64_t b)
{
	double d;
	memcpy(&d, &b, sizeof(d));
	return d;
}

/* 2^e for integer e in -1074..1023 (0 below, infinity above). */
static inline double floe_agg_pow2(int e)
{
	if (e > 1023)
		return __builtin_inf();
	if (e >= -1022)
		return floe_agg_from_bits((uint64_t)(e + 1023) << 52);
	if (e >= -1074)
		return floe_agg_from_bits((uint64_t)1 << (e + 1074));
	return 0.0;
}

/* 2 atanh(s) = ln((1 + s) / (1 - s)) for |s| <= 0.1716 by its odd series to s^23, whose
 * next term is below 2^-56 of the sum. */
static inline double floe_agg_atanh2(double s)
{
	double s2 = s * s;
	double p = 1.0 / 23;
	p = p * s2 + 1.0 / 21;
	p = p * s2 + 1.0 / 19;
	p = p * s2 + 1.0 / 17;
	p = p * s2 + 1.0 / 15;
	p = p * s2 + 1.0 / 13;
	p = p * s2 + 1.0 / 11;
	p = p * s2 + 1.0 / 9;
	p = p * s2 + 1.0 / 7;
	p = p * s2 + 1.0 / 5;
	p = p * s2 + 1.0 / 3;
	p = p * s2 + 1.0;
	return 2.0 * s * p;
}

/* ln x for finite x > 0 (subnormals included): x = 2^e m with m in [sqrt(1/2), sqrt(2)),
 * ln m = 2 atanh((m - 1) / (m + 1)). */
static inline double floe_agg_log(double x)
{
	uint64_t b = floe_agg_bits(x);
	int e = (int)((b >> 52) & 0x7ff);
	if (e == 0) { /* subnormal: scale into the normal range first */
		b = floe_agg_bits(x * 18014398509481984.0); /* 2^54 */
		e = (int)((b >> 52) & 0x7ff) - 54;
	}
	e -= 1023;
	double m = floe_agg_from_bits((b & 0x000fffffffffffffull) | 0x3ff0000000000000ull);
	if (m > 1.4142135623730951) {
		m *= 0.5;
		e++;
	}
	double r = floe_agg_atanh2((m - 1.0) / (m + 1.0));
	return (double)e * FLOE_AGG_LN2_HI + ((double)e * FLOE_AGG_LN2_LO + r);
}

/* ln(1 + u) for u > -1, exact to rounding also for small u. */
static inline double floe_agg_log1p(double u)
{
	if (u > -0.29 && u < 0.41)
		return floe_agg_atanh2(u / (2.0 + u));
	return floe_agg_log(1.0 + u);
}

/* e^x: x = k ln 2 + r with |r| <= ln(2) / 2, e^r by its Taylor series to r^13. */
static inline double floe_agg_exp(double x)
{
	if (x != x)
		return x;
	if (x > 709.782712893384)
		return __builtin_inf();
	if (x < -745.2)
		return 0.0;
	double kd = x * (1.0 / FLOE_AGG_LN2);
	int k = (int)(kd < 0 ? kd - 0.5 : kd + 0.5);
	double r = (x - k * FLOE_AGG_LN2_HI) - k * FLOE_AGG_LN2_LO;
	double p = 1.0 / 6227020800.0; /* 1/13! */
	static const double inv[] = {1.0 / 479001600.0,
				     1.0 / 39916800.0,
				     1.0 / 3628800.0,
				     1.0 / 362880.0,
				     1.0 / 40320.0,
				     1.0 / 5040.0,
				     1.0 / 720.0,
				     1.0 / 120.0,
				     1.0 / 24.0,
				     1.0 / 6.0,
				     0.5,
				     1.0,
				     1.0};
	for (unsigned i = 0; i < sizeof(inv) / sizeof(inv[0]); i++)
		p = p * r + inv[i];
	/* Scale in two steps so that neither factor leaves the normal range. */
	int k1 = k / 2;
	return p * floe_agg_pow2(k1) * floe_agg_pow2(k - k1);
}

/* Square root of finite x >= 0 by Newton's iteration from a halved exponent. */
static inline double floe_agg_sqrt(double x)
{
	if (x <= 0.0)
		return 0.0;
	double y = floe_agg_from_bits((floe_agg_bits(x) >> 1) + ((uint64_t)1023 << 51));
	for (int i = 0; i < 6; i++)
		y = 0.5 * (y + x / y);
	return y;
}

/* The least integer >= x, for |x| < 2^62. */
static inline int64_t floe_agg_ceil(double x)
{
	int64_t k = (int64_t)x; /* truncates toward zero */
	return (double)k < x ? k + 1 : k;
}

static inline int64_t floe_agg_floor(double x)
{
	int64_t k = (int64_t)x;
	return (double)k > x ? k - 1 : k;
}

#endif

/* The bit-level helpers the sketches need beside libm's log, log1p, exp and sqrt
 * (platform/libm.h): a double's bits, exact powers of two (subnormals included), integer
 * ceiling and floor without a round trip through a double, and rounding to the nearest
 * integer (written out, so that the code that emits rows does not need libm). */
#ifndef FLOE_AGG_MATH_H
#define FLOE_AGG_MATH_H

#include <stdint.h>
#include <string.h>

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

/* x rounded to the nearest integer, halfway cases away from zero: libm's llround for
 * |x| < 2^63. Beyond that range it saturates (INT64_MIN or INT64_MAX) and NaN gives 0,
 * where llround's result is unspecified. x - trunc(x) is exact for every double, so the
 * halfway test sees the true fraction (adding 0.5 first would round 0.49999999999999994
 * up). */
static inline int64_t floe_agg_llround(double x)
{
	if (x != x)
		return 0;
	if (x >= 0x1p63)
		return INT64_MAX;
	if (x < -0x1p63)
		return INT64_MIN;
	int64_t k = (int64_t)x; /* truncates toward zero */
	double f = x - (double)k;
	if (f >= 0.5)
		k++;
	else if (f <= -0.5)
		k--;
	return k;
}

#endif

/* The bit-level helpers the sketches need beside libm's log, log1p, exp and sqrt: a
 * double's bits, exact powers of two (subnormals included), and integer ceiling and
 * floor without a round trip through a double. */
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

#endif

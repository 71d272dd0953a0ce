/* The small steps of reading fixed-form text such as timestamps over (ptr, len): digits,
 * one expected byte, a decimal fraction. Each moves a cursor *i through s[0..n) and never
 * reads at or past n; on failure *i is left at the byte that did not fit, so a parser can
 * report where its input went wrong. */
#ifndef FLOE_BASE_SCAN_H
#define FLOE_BASE_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* min to max decimal digits (max at most 9) at s[*i] into *out: true when at least min
 * were there. *i moves past the digits read. */
bool floe_scan_digits(const char *s, size_t n, size_t *i, int min, int max, int *out);

/* The byte c at s[*i]: true and *i moved past it, or false and *i unchanged. */
bool floe_scan_char(const char *s, size_t n, size_t *i, char c);

/* Fraction digits at s[*i] (after its separator): at least one and at most max (0: any
 * number), the first six as µs, truncated and never rounded. False with *i at the first
 * digit beyond max, or with no digit. */
bool floe_scan_fraction(const char *s, size_t n, size_t *i, size_t max, int64_t *us);

#endif

/* UTF-8 one code point at a time, for the formats that read or write text by code point
 * (JSON escapes, string bounds in Parquet statistics and Iceberg metrics). Well-formed is
 * Unicode's definition: no overlong forms, no surrogates, nothing above U+10FFFF. */
#ifndef FLOE_UTF8_H
#define FLOE_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* Decodes the well-formed sequence that starts s[0..n) (n >= 1): returns its length (1
 * to 4) and the code point in *cp (cp may be NULL), or 0 when the bytes there are not
 * one (ill-formed, or cut short by n). Borrows s. */
size_t floe_utf8_get(const uint8_t *s, size_t n, uint32_t *cp);
/* Encodes cp (at most U+10FFFF and not a surrogate) into out, which has room for 4
 * bytes; returns the length written (1 to 4). */
size_t floe_utf8_put(uint8_t *out, uint32_t cp);

#endif

/* UTF-8: one code point at a time, for the formats that read or write text by code point
 * (JSON escapes, string bounds in Parquet statistics and Iceberg metrics), and whole
 * strings checked and repaired (Parquet STRING values, the agent's messages). Well-formed
 * is Unicode's definition: no overlong forms, no surrogates, nothing above U+10FFFF. One
 * table decides it for all of them. */
#ifndef FLOE_UTF8_H
#define FLOE_UTF8_H

#include <stddef.h>
#include <stdint.h>

struct floe_buf;

/* Decodes the well-formed sequence that starts s[0..n) (n >= 1): returns its length (1
 * to 4) and the code point in *cp (cp may be NULL), or 0 when the bytes there are not
 * one (ill-formed, or cut short by n). Borrows s. */
size_t floe_utf8_get(const uint8_t *s, size_t n, uint32_t *cp);
/* Encodes cp (at most U+10FFFF and not a surrogate) into out, which has room for 4
 * bytes; returns the length written (1 to 4). */
size_t floe_utf8_put(uint8_t *out, uint32_t cp);

/* Length of the longest well-formed prefix of p[0..n). Borrows p. */
size_t floe_utf8_valid(const uint8_t *p, size_t n);

/* Makes (p, n) well-formed: each maximal ill-formed subpart (Unicode's "substitution of
 * maximal subparts") becomes U+FFFD. If it already is, *out = p and *out_len = n and
 * nothing is copied; otherwise the repaired text is written to scratch (emptied first;
 * borrowed) and *out points into it, valid until scratch changes. *replaced is increased
 * by the number of substitutions. Returns 0 or FLOE_ENOMEM/FLOE_ELIMIT from scratch. */
int floe_utf8_repair(const uint8_t *p, size_t n, struct floe_buf *scratch, const uint8_t **out,
		     size_t *out_len, uint64_t *replaced);

#endif

/* UTF-8 validation and repair for Parquet STRING values: each maximal ill-formed
 * subsequence (Unicode's "substitution of maximal subparts") becomes U+FFFD. Overlong
 * forms, surrogates and code points above U+10FFFF are ill-formed. */
#ifndef FLOE_PQ_UTF8_H
#define FLOE_PQ_UTF8_H

#include <stddef.h>
#include <stdint.h>

struct floe_buf;

/* Length of the longest valid UTF-8 prefix of p[0..n). */
size_t floe_pq_utf8_valid(const uint8_t *p, size_t n);

/* Makes (p, n) valid UTF-8. If it already is, *out = p and *out_len = n and nothing is
 * copied; otherwise the repaired text is written to scratch (emptied first; borrowed) and
 * *out points into it, valid until scratch changes. *replaced is increased by the number
 * of substitutions. Returns 0 or FLOE_ENOMEM/FLOE_ELIMIT from scratch. */
int floe_pq_utf8_repair(const uint8_t *p, size_t n, struct floe_buf *scratch, const uint8_t **out,
			size_t *out_len, uint64_t *replaced);

#endif

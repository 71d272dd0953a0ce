/* Lowercase hexadecimal encoding for binary values kept in JSON state files. */
#ifndef FLOE_HEX_H
#define FLOE_HEX_H

#include <stddef.h>
#include <stdint.h>

struct floe_alloc;
struct floe_buf;

/* The value of one hex digit (either case), or -1. */
int floe_hex_digit(char c);
/* Appends 2*n hex digits of p to b. */
int floe_hex_put(struct floe_buf *b, const uint8_t *p, size_t n);
/* Decodes len hex digits of s into a new allocation from a (*out, *n bytes; free with
 * floe_free). FLOE_EPARSE on an odd length or a non-hex digit. */
int floe_hex_decode(struct floe_alloc *a, const char *s, size_t len, uint8_t **out, size_t *n);

#endif

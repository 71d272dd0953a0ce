/* Hexadecimal, the one implementation every layer uses: binary values kept in JSON state
 * files, digests, UUIDs, JSON and XML escapes, and percent-encoding. Lowercase unless a
 * name says otherwise. */
#ifndef FLOE_HEX_H
#define FLOE_HEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct floe_alloc;
struct floe_buf;

/* The value of one hex digit (either case), or -1. */
int floe_hex_digit(char c);
/* The hex digit of v's low four bits: lowercase, and uppercase for percent-encoding
 * (RFC 3986 and SigV4 write %2F, not %2f). */
static inline char floe_hex_char(unsigned v)
{
	return "0123456789abcdef"[v & 15];
}
static inline char floe_hex_char_upper(unsigned v)
{
	return "0123456789ABCDEF"[v & 15];
}
/* RFC 3986's unreserved characters: the bytes percent-encoding leaves as they are. */
static inline bool floe_uri_unreserved(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '.' || c == '_' || c == '~';
}
/* Appends p[0..n) percent-encoded to b: every byte but the unreserved ones (and '/' with
 * keep_slash) as %XX, upper-case, as RFC 3986 and SigV4 want it. */
int floe_uri_put(struct floe_buf *b, const char *p, size_t n, bool keep_slash);
/* Writes the 2*n hex digits of in[0..n) and a NUL into out (2*n + 1 bytes). */
void floe_hex_encode(const uint8_t *in, size_t n, char *out);
/* Appends 2*n hex digits of p to b. */
int floe_hex_put(struct floe_buf *b, const uint8_t *p, size_t n);
/* Decodes len hex digits of s into a new allocation from a (*out, *n bytes; free with
 * floe_free). FLOE_EPARSE on an odd length or a non-hex digit. */
int floe_hex_decode(struct floe_alloc *a, const char *s, size_t len, uint8_t **out, size_t *n);

#endif

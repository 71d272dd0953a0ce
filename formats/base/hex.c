/* Hex encoding and decoding. */
#include "hex.h"

#include "alloc.h"
#include "buf.h"
#include "error.h"

int floe_hex_put(struct floe_buf *b, const uint8_t *p, size_t n)
{
	size_t need;
	if (__builtin_mul_overflow(n, (size_t)2, &need))
		return FLOE_ELIMIT;
	int rc = floe_buf_reserve(b, need);
	if (rc)
		return rc;
	for (size_t i = 0; i < n; i++) {
		b->data[b->len++] = (uint8_t)floe_hex_char(p[i] >> 4);
		b->data[b->len++] = (uint8_t)floe_hex_char(p[i]);
	}
	return 0;
}

void floe_hex_encode(const uint8_t *in, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = floe_hex_char(in[i] >> 4);
		out[2 * i + 1] = floe_hex_char(in[i]);
	}
	out[2 * n] = '\0';
}

int floe_hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int floe_hex_decode(struct floe_alloc *a, const char *s, size_t len, uint8_t **out, size_t *n)
{
	if (len % 2)
		return FLOE_EPARSE;
	uint8_t *p = floe_malloc(a, len / 2 + 1);
	if (!p)
		return FLOE_ENOMEM;
	for (size_t i = 0; i < len / 2; i++) {
		int hi = floe_hex_digit(s[2 * i]), lo = floe_hex_digit(s[2 * i + 1]);
		if (hi < 0 || lo < 0) {
			floe_free(a, p);
			return FLOE_EPARSE;
		}
		p[i] = (uint8_t)(hi << 4 | lo);
	}
	*out = p;
	*n = len / 2;
	return 0;
}

int floe_uri_put(struct floe_buf *b, const char *p, size_t n, bool keep_slash)
{
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0; i++) {
		unsigned char c = (unsigned char)p[i];
		if (floe_uri_unreserved(c) || (keep_slash && c == '/')) {
			rc = floe_buf_putc(b, c);
		} else {
			char e[3] = {'%', floe_hex_char_upper(c >> 4), floe_hex_char_upper(c)};
			rc = floe_buf_append(b, e, 3);
		}
	}
	return rc;
}

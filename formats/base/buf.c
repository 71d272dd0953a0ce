/* Bounded growable buffer. Growth doubles up to the hard maximum. */
#include "buf.h"

#include "alloc.h"
#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void floe_buf_init(struct floe_buf *b, struct floe_alloc *alloc, size_t max)
{
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
	b->max = max;
	b->alloc = alloc;
}

void floe_buf_fini(struct floe_buf *b)
{
	floe_free(b->alloc, b->data);
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
}

int floe_buf_reserve(struct floe_buf *b, size_t n)
{
	size_t need;
	if (__builtin_add_overflow(b->len, n, &need) || need > b->max)
		return FLOE_ELIMIT;
	if (need <= b->cap)
		return 0;
	size_t cap = b->cap ? b->cap : 64;
	while (cap < need)
		cap = cap > SIZE_MAX / 2 ? need : cap * 2;
	if (cap > b->max)
		cap = b->max;
	uint8_t *p = floe_realloc(b->alloc, b->data, cap);
	if (!p)
		return FLOE_ENOMEM;
	b->data = p;
	b->cap = cap;
	return 0;
}

int floe_buf_append_grow(struct floe_buf *b, const void *p, size_t n)
{
	if (n == 0)
		return 0;
	int rc = floe_buf_reserve(b, n);
	if (rc)
		return rc;
	memcpy(b->data + b->len, p, n);
	b->len += n;
	return 0;
}

int floe_buf_putc(struct floe_buf *b, uint8_t c) { return floe_buf_append(b, &c, 1); }

int floe_buf_puts(struct floe_buf *b, const char *s) { return floe_buf_append(b, s, strlen(s)); }

int floe_buf_terminate(struct floe_buf *b)
{
	int rc = floe_buf_reserve(b, 1);
	if (rc == 0)
		b->data[b->len] = '\0';
	return rc;
}

int floe_buf_printf(struct floe_buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return FLOE_EINVAL;
	int rc = floe_buf_reserve(b, (size_t)n + 1);
	if (rc)
		return rc;
	va_start(ap, fmt);
	vsnprintf((char *)b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
	return 0;
}

int floe_buf_put_le32(struct floe_buf *b, uint32_t v)
{
	uint8_t x[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
	return floe_buf_append(b, x, 4);
}

int floe_buf_put_le64(struct floe_buf *b, uint64_t v)
{
	uint8_t x[8];
	for (int i = 0; i < 8; i++)
		x[i] = (uint8_t)(v >> (8 * i));
	return floe_buf_append(b, x, 8);
}

int floe_buf_put_uvarint(struct floe_buf *b, uint64_t v)
{
	uint8_t x[10];
	size_t n = 0;
	do {
		uint8_t c = v & 0x7f;
		v >>= 7;
		x[n++] = (uint8_t)(c | (v ? 0x80 : 0));
	} while (v);
	return floe_buf_append(b, x, n);
}

int floe_buf_put_svarint(struct floe_buf *b, int64_t v)
{
	return floe_buf_put_uvarint(b, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

uint8_t *floe_buf_steal(struct floe_buf *b, size_t *len)
{
	uint8_t *p = b->data;
	*len = b->len;
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
	return p;
}

int floe_fmt(char *out, size_t cap, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(out, cap, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= cap)
		return FLOE_ELIMIT;
	return 0;
}

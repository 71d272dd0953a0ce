/* A growable byte buffer with a hard maximum (curl's dynbuf idea). Caller-owned storage:
 * floe_buf_init() on a struct you hold; the bytes come from a budgeted allocator. Every
 * append either fits entirely or fails with FLOE_ELIMIT/FLOE_ENOMEM and leaves the buffer
 * as it was. Pointers into data are invalidated by any append. */
#ifndef FLOE_BUF_H
#define FLOE_BUF_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct floe_alloc;

struct floe_buf {
	uint8_t *data;
	size_t len;
	size_t cap;
	size_t max;              /* hard maximum of len */
	struct floe_alloc *alloc; /* borrowed */
};

void floe_buf_init(struct floe_buf *b, struct floe_alloc *alloc, size_t max);
/* Releases the storage; the buffer is empty and reusable afterwards. */
void floe_buf_fini(struct floe_buf *b);
/* Empties the buffer, keeping its storage. */
static inline void floe_buf_reset(struct floe_buf *b) { b->len = 0; }
/* Makes room for n more bytes. */
int floe_buf_reserve(struct floe_buf *b, size_t n);
/* The growing path of floe_buf_append. */
int floe_buf_append_grow(struct floe_buf *b, const void *p, size_t n);
/* Appends n bytes: in line when they fit, the common case on the hot paths. */
static inline int floe_buf_append(struct floe_buf *b, const void *p, size_t n)
{
	if (n && n <= b->cap - b->len) {
		memcpy(b->data + b->len, p, n);
		b->len += n;
		return 0;
	}
	return floe_buf_append_grow(b, p, n);
}
int floe_buf_putc(struct floe_buf *b, uint8_t c);
/* Writes a NUL after the bytes, not counted in len, so that data reads as a C string (an
 * empty buffer gets storage for it); it needs len < max. */
int floe_buf_terminate(struct floe_buf *b);
int floe_buf_puts(struct floe_buf *b, const char *s);
/* printf-style append. */
int floe_buf_printf(struct floe_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int floe_buf_put_le32(struct floe_buf *b, uint32_t v);
int floe_buf_put_le64(struct floe_buf *b, uint64_t v);
/* Unsigned LEB128 varint. */
int floe_buf_put_uvarint(struct floe_buf *b, uint64_t v);
/* Zigzag + LEB128 (Avro int/long, Thrift compact integers). */
int floe_buf_put_svarint(struct floe_buf *b, int64_t v);
/* Transfers the bytes to the caller (allocated from b->alloc; free with floe_free) and
 * leaves b empty. *len receives the length. Returns NULL only if b holds nothing. */
uint8_t *floe_buf_steal(struct floe_buf *b, size_t *len);

/* snprintf into a fixed array that reports truncation: FLOE_ELIMIT when the result did
 * not fit (out then holds a truncated string). For composing paths. */
int floe_fmt(char *out, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif

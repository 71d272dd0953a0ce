/* Thrift compact protocol encoder (apache/thrift doc/specs/thrift-compact-protocol.md). */
#include "thrift.h"

#include "formats/base/buf.h"
#include "formats/base/error.h"

#include <string.h>

void floe_thrift_init(struct floe_thrift *t, struct floe_buf *out)
{
	t->out = out;
	t->err = 0;
	t->depth = 0;
	t->last[0] = 0;
}

static void put_byte(struct floe_thrift *t, uint8_t c)
{
	if (t->err)
		return;
	t->err = floe_buf_putc(t->out, c);
}

static void put_uvarint(struct floe_thrift *t, uint64_t v)
{
	if (t->err)
		return;
	t->err = floe_buf_put_uvarint(t->out, v);
}

static void put_svarint(struct floe_thrift *t, int64_t v)
{
	/* Zigzag by hand so the shift of a negative number stays defined. */
	put_uvarint(t, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

void floe_thrift_field(struct floe_thrift *t, int16_t id, int type)
{
	int32_t delta = (int32_t)id - t->last[t->depth];
	if (delta > 0 && delta <= 15) {
		put_byte(t, (uint8_t)((delta << 4) | type));
	} else {
		put_byte(t, (uint8_t)type);
		put_svarint(t, id);
	}
	t->last[t->depth] = id;
}

void floe_thrift_bool(struct floe_thrift *t, int16_t id, bool v)
{
	/* A bool struct field lives in the type nibble; there is no value byte. */
	floe_thrift_field(t, id, v ? FLOE_THRIFT_BOOL_TRUE : FLOE_THRIFT_BOOL_FALSE);
}

void floe_thrift_i8(struct floe_thrift *t, int16_t id, int8_t v)
{
	floe_thrift_field(t, id, FLOE_THRIFT_I8);
	put_byte(t, (uint8_t)v);
}

void floe_thrift_i16(struct floe_thrift *t, int16_t id, int16_t v)
{
	floe_thrift_field(t, id, FLOE_THRIFT_I16);
	put_svarint(t, v);
}

void floe_thrift_i32(struct floe_thrift *t, int16_t id, int32_t v)
{
	floe_thrift_field(t, id, FLOE_THRIFT_I32);
	put_svarint(t, v);
}

void floe_thrift_i64(struct floe_thrift *t, int16_t id, int64_t v)
{
	floe_thrift_field(t, id, FLOE_THRIFT_I64);
	put_svarint(t, v);
}

void floe_thrift_elem_binary(struct floe_thrift *t, const void *p, size_t n)
{
	put_uvarint(t, n);
	if (!t->err)
		t->err = floe_buf_append(t->out, p, n);
}

void floe_thrift_binary(struct floe_thrift *t, int16_t id, const void *p, size_t n)
{
	floe_thrift_field(t, id, FLOE_THRIFT_BINARY);
	floe_thrift_elem_binary(t, p, n);
}

void floe_thrift_string(struct floe_thrift *t, int16_t id, const char *s)
{
	floe_thrift_binary(t, id, s, strlen(s));
}

static void push(struct floe_thrift *t)
{
	if (t->depth + 1 >= FLOE_THRIFT_MAX_DEPTH) {
		if (!t->err)
			t->err = FLOE_ELIMIT;
		return;
	}
	t->depth++;
	t->last[t->depth] = 0;
}

void floe_thrift_struct(struct floe_thrift *t, int16_t id)
{
	floe_thrift_field(t, id, FLOE_THRIFT_STRUCT);
	push(t);
}

void floe_thrift_elem_struct(struct floe_thrift *t)
{
	push(t);
}

void floe_thrift_end(struct floe_thrift *t)
{
	put_byte(t, 0);
	if (t->depth > 0)
		t->depth--;
}

void floe_thrift_list(struct floe_thrift *t, int16_t id, int elem_type, size_t n)
{
	floe_thrift_field(t, id, FLOE_THRIFT_LIST);
	if (n <= 14) {
		put_byte(t, (uint8_t)((n << 4) | (size_t)elem_type));
	} else {
		put_byte(t, (uint8_t)(0xF0 | elem_type));
		put_uvarint(t, n);
	}
}

void floe_thrift_elem_i32(struct floe_thrift *t, int32_t v)
{
	put_svarint(t, v);
}

void floe_thrift_elem_i64(struct floe_thrift *t, int64_t v)
{
	put_svarint(t, v);
}

void floe_thrift_elem_bool(struct floe_thrift *t, bool v)
{
	put_byte(t, v ? 1 : 0);
}

/* Thrift compact protocol encoder, just enough for Parquet metadata: struct field headers
 * (short delta form and long form), zigzag varint integers, binary, list headers, bool
 * fields and nested structs with a stack of last field ids. Errors are sticky: encode a
 * whole structure, then check floe_thrift_error() once. And a decoder over (ptr, len)
 * for the Parquet reader: field headers, integers, binary, list headers and skipping of
 * any value, with the nesting bounded and every length checked against the input. */
#ifndef FLOE_PQ_THRIFT_H
#define FLOE_PQ_THRIFT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct floe_buf;

enum {
	FLOE_THRIFT_BOOL_TRUE = 1,
	FLOE_THRIFT_BOOL_FALSE = 2,
	FLOE_THRIFT_I8 = 3,
	FLOE_THRIFT_I16 = 4,
	FLOE_THRIFT_I32 = 5,
	FLOE_THRIFT_I64 = 6,
	FLOE_THRIFT_DOUBLE = 7,
	FLOE_THRIFT_BINARY = 8,
	FLOE_THRIFT_LIST = 9,
	FLOE_THRIFT_SET = 10,
	FLOE_THRIFT_MAP = 11,
	FLOE_THRIFT_STRUCT = 12,
};

#define FLOE_THRIFT_MAX_DEPTH 16

/* Caller-owned encoder state. The top level is an implicit struct: the fields written
 * first belong to it and floe_thrift_end() closes it. */
struct floe_thrift {
	struct floe_buf *out; /* borrowed */
	int err;
	int depth;
	int16_t last[FLOE_THRIFT_MAX_DEPTH];
};

/* Starts encoding one top-level struct at the end of out (borrowed). */
void floe_thrift_init(struct floe_thrift *t, struct floe_buf *out);
/* The first error met so far (0 if none). */
static inline int floe_thrift_error(const struct floe_thrift *t)
{
	return t->err;
}

/* Struct fields: each writes the field header (relative to the previous id in the
 * current struct) and then the value. */
void floe_thrift_field(struct floe_thrift *t, int16_t id, int type);
void floe_thrift_bool(struct floe_thrift *t, int16_t id, bool v);
void floe_thrift_i8(struct floe_thrift *t, int16_t id, int8_t v);
void floe_thrift_i16(struct floe_thrift *t, int16_t id, int16_t v);
void floe_thrift_i32(struct floe_thrift *t, int16_t id, int32_t v);
void floe_thrift_i64(struct floe_thrift *t, int16_t id, int64_t v);
void floe_thrift_binary(struct floe_thrift *t, int16_t id, const void *p, size_t n);
void floe_thrift_string(struct floe_thrift *t, int16_t id, const char *s);
/* Opens a struct-typed field; close it with floe_thrift_end(). */
void floe_thrift_struct(struct floe_thrift *t, int16_t id);
/* Writes a list-typed field header for n elements of elem_type; then write exactly n
 * elements with the floe_thrift_elem_* calls. */
void floe_thrift_list(struct floe_thrift *t, int16_t id, int elem_type, size_t n);
/* List elements. */
void floe_thrift_elem_i32(struct floe_thrift *t, int32_t v);
void floe_thrift_elem_i64(struct floe_thrift *t, int64_t v);
void floe_thrift_elem_bool(struct floe_thrift *t, bool v);
void floe_thrift_elem_binary(struct floe_thrift *t, const void *p, size_t n);
/* Opens a struct element of a list; close it with floe_thrift_end(). */
void floe_thrift_elem_struct(struct floe_thrift *t);
/* Writes the stop byte of the innermost open struct (or of the top-level struct). */
void floe_thrift_end(struct floe_thrift *t);

/* ---- Decoding ---- */

/* Caller-owned decoder state over p[0..len) (borrowed). The top level is an implicit
 * struct, like the encoder's. Errors are sticky: after the first, every call returns a
 * zero value (and rd_field false), and err/err_pos tell what and where: FLOE_EPARSE for
 * truncated or malformed input (or a field of the wrong wire type, see the typed reads),
 * FLOE_ELIMIT for nesting deeper than FLOE_THRIFT_MAX_DEPTH. */
struct floe_thrift_rd {
	const uint8_t *p;
	size_t len, pos;
	int err;
	size_t err_pos; /* offset in p of the first error */
	int depth;
	int16_t last[FLOE_THRIFT_MAX_DEPTH];
};

void floe_thrift_rd_init(struct floe_thrift_rd *r, const void *p, size_t len);
/* Reads the next field header of the innermost open struct. Returns true with *id and
 * *type (a bool field's value is its type: FLOE_THRIFT_BOOL_TRUE or _FALSE, and no bytes
 * follow), or false at the struct's stop byte, which closes it, or on an error. */
bool floe_thrift_rd_field(struct floe_thrift_rd *r, int16_t *id, int *type);
/* Typed reads of a field's value, type being the field's wire type from rd_field (or a
 * list's element type): a type other than the one asked for is an error (FLOE_EPARSE),
 * and so is a value out of the type's range. rd_i32 and rd_i64 accept any integer type
 * whose value fits; rd_bool a bool field's type. */
int32_t floe_thrift_rd_i32(struct floe_thrift_rd *r, int type);
int64_t floe_thrift_rd_i64(struct floe_thrift_rd *r, int type);
bool floe_thrift_rd_bool(struct floe_thrift_rd *r, int type);
/* A binary (or string) value: *p borrows from the input, valid as long as it is. */
void floe_thrift_rd_binary(struct floe_thrift_rd *r, int type, const uint8_t **p, size_t *n);
/* A list (or set) header: *elem_type and *n, the number of elements, which is never more
 * than the bytes left (every element but a bool field takes one byte or more). */
void floe_thrift_rd_list(struct floe_thrift_rd *r, int type, int *elem_type, size_t *n);
/* Enters a struct-typed value (a field or a list element): read its fields with rd_field
 * until it returns false. */
void floe_thrift_rd_struct(struct floe_thrift_rd *r, int type);
/* Skips a field's value of wire type type (nested values included, within the depth
 * bound). in_list: the value is a list element (a bool element then takes a byte). */
void floe_thrift_rd_skip(struct floe_thrift_rd *r, int type, bool in_list);

#endif

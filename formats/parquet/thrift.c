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

/* ---- Decoding. The input is hostile: every read is bounds-checked, every count is
 * checked against the bytes left before anything trusts it, and nesting is bounded. */

void floe_thrift_rd_init(struct floe_thrift_rd *r, const void *p, size_t len)
{
	r->p = p;
	r->len = len;
	r->pos = 0;
	r->err = 0;
	r->err_pos = 0;
	r->depth = 0;
	r->last[0] = 0;
}

static void rd_fail(struct floe_thrift_rd *r, int err)
{
	if (!r->err) {
		r->err = err;
		r->err_pos = r->pos;
	}
}

static uint8_t rd_byte(struct floe_thrift_rd *r)
{
	if (r->err)
		return 0;
	if (r->pos >= r->len) {
		rd_fail(r, FLOE_EPARSE);
		return 0;
	}
	return r->p[r->pos++];
}

static uint64_t rd_uvarint(struct floe_thrift_rd *r)
{
	uint64_t v = 0;
	for (int shift = 0; shift < 64 && !r->err; shift += 7) {
		uint8_t b = rd_byte(r);
		/* The tenth byte may only hold the top bit of a 64-bit value. */
		if (shift == 63 && b > 1)
			break;
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
	}
	rd_fail(r, FLOE_EPARSE);
	return 0;
}

static int64_t rd_svarint(struct floe_thrift_rd *r)
{
	uint64_t u = rd_uvarint(r);
	return (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
}

static bool is_int_type(int type)
{
	return type == FLOE_THRIFT_I8 || type == FLOE_THRIFT_I16 || type == FLOE_THRIFT_I32 ||
	       type == FLOE_THRIFT_I64;
}

bool floe_thrift_rd_field(struct floe_thrift_rd *r, int16_t *id, int *type)
{
	uint8_t b = rd_byte(r);
	if (r->err)
		return false;
	if (b == 0) {
		if (r->depth > 0)
			r->depth--;
		return false;
	}
	int t = b & 0x0f, delta = b >> 4;
	int64_t fid = delta ? (int64_t)r->last[r->depth] + delta : rd_svarint(r);
	if (r->err || t < 1 || t > FLOE_THRIFT_STRUCT || fid < INT16_MIN || fid > INT16_MAX) {
		rd_fail(r, FLOE_EPARSE);
		return false;
	}
	r->last[r->depth] = (int16_t)fid;
	*id = (int16_t)fid;
	*type = t;
	return true;
}

int64_t floe_thrift_rd_i64(struct floe_thrift_rd *r, int type)
{
	if (!is_int_type(type)) {
		rd_fail(r, FLOE_EPARSE);
		return 0;
	}
	if (type == FLOE_THRIFT_I8)
		return (int8_t)rd_byte(r);
	int64_t v = rd_svarint(r);
	if ((type == FLOE_THRIFT_I16 && (v < INT16_MIN || v > INT16_MAX)) ||
	    (type == FLOE_THRIFT_I32 && (v < INT32_MIN || v > INT32_MAX))) {
		rd_fail(r, FLOE_EPARSE);
		return 0;
	}
	return r->err ? 0 : v;
}

int32_t floe_thrift_rd_i32(struct floe_thrift_rd *r, int type)
{
	int64_t v = floe_thrift_rd_i64(r, type);
	if (v < INT32_MIN || v > INT32_MAX) {
		rd_fail(r, FLOE_EPARSE);
		return 0;
	}
	return (int32_t)v;
}

bool floe_thrift_rd_bool(struct floe_thrift_rd *r, int type)
{
	if (type != FLOE_THRIFT_BOOL_TRUE && type != FLOE_THRIFT_BOOL_FALSE) {
		rd_fail(r, FLOE_EPARSE);
		return false;
	}
	return !r->err && type == FLOE_THRIFT_BOOL_TRUE;
}

void floe_thrift_rd_binary(struct floe_thrift_rd *r, int type, const uint8_t **p, size_t *n)
{
	*p = NULL;
	*n = 0;
	if (type != FLOE_THRIFT_BINARY) {
		rd_fail(r, FLOE_EPARSE);
		return;
	}
	uint64_t len = rd_uvarint(r);
	if (r->err)
		return;
	if (len > r->len - r->pos) {
		rd_fail(r, FLOE_EPARSE);
		return;
	}
	*p = r->p + r->pos;
	*n = (size_t)len;
	r->pos += (size_t)len;
}

void floe_thrift_rd_list(struct floe_thrift_rd *r, int type, int *elem_type, size_t *n)
{
	*elem_type = 0;
	*n = 0;
	if (type != FLOE_THRIFT_LIST && type != FLOE_THRIFT_SET) {
		rd_fail(r, FLOE_EPARSE);
		return;
	}
	uint8_t h = rd_byte(r);
	uint64_t count = h >> 4;
	if (count == 15)
		count = rd_uvarint(r);
	int et = h & 0x0f;
	if (r->err)
		return;
	if (et < FLOE_THRIFT_BOOL_TRUE || et > FLOE_THRIFT_STRUCT || count > r->len - r->pos) {
		rd_fail(r, FLOE_EPARSE);
		return;
	}
	*elem_type = et;
	*n = (size_t)count;
}

void floe_thrift_rd_struct(struct floe_thrift_rd *r, int type)
{
	if (type != FLOE_THRIFT_STRUCT) {
		rd_fail(r, FLOE_EPARSE);
		return;
	}
	if (r->depth + 1 >= FLOE_THRIFT_MAX_DEPTH) {
		rd_fail(r, FLOE_ELIMIT);
		return;
	}
	r->depth++;
	r->last[r->depth] = 0;
}

static void rd_advance(struct floe_thrift_rd *r, uint64_t n)
{
	if (r->err)
		return;
	if (n > r->len - r->pos) {
		rd_fail(r, FLOE_EPARSE);
		return;
	}
	r->pos += (size_t)n;
}

void floe_thrift_rd_skip(struct floe_thrift_rd *r, int type, bool in_list)
{
	int16_t id;
	int et, kt, vt;
	size_t n;
	const uint8_t *p;
	if (r->err)
		return;
	switch (type) {
	case FLOE_THRIFT_BOOL_TRUE:
	case FLOE_THRIFT_BOOL_FALSE:
		if (in_list)
			rd_byte(r);
		break;
	case FLOE_THRIFT_I8:
		rd_byte(r);
		break;
	case FLOE_THRIFT_I16:
	case FLOE_THRIFT_I32:
	case FLOE_THRIFT_I64:
		rd_uvarint(r);
		break;
	case FLOE_THRIFT_DOUBLE:
		rd_advance(r, 8);
		break;
	case FLOE_THRIFT_BINARY:
		floe_thrift_rd_binary(r, type, &p, &n);
		break;
	case FLOE_THRIFT_LIST:
	case FLOE_THRIFT_SET:
		floe_thrift_rd_list(r, type, &et, &n);
		if (n == 0 || r->err)
			break;
		/* The elements' own nesting counts too. */
		if (r->depth + 1 >= FLOE_THRIFT_MAX_DEPTH) {
			rd_fail(r, FLOE_ELIMIT);
			break;
		}
		r->depth++;
		for (size_t i = 0; i < n && !r->err; i++)
			floe_thrift_rd_skip(r, et, true);
		r->depth--;
		break;
	case FLOE_THRIFT_MAP: {
		uint64_t count = rd_uvarint(r);
		if (count == 0 || r->err)
			break;
		uint8_t kv = rd_byte(r);
		kt = kv >> 4;
		vt = kv & 0x0f;
		/* Each pair takes at least two bytes. */
		if (r->err || count > (r->len - r->pos) / 2 || kt < 1 || kt > 12 || vt < 1 ||
		    vt > 12 || r->depth + 1 >= FLOE_THRIFT_MAX_DEPTH) {
			rd_fail(r,
				r->depth + 1 >= FLOE_THRIFT_MAX_DEPTH ? FLOE_ELIMIT : FLOE_EPARSE);
			break;
		}
		r->depth++;
		for (uint64_t i = 0; i < count && !r->err; i++) {
			floe_thrift_rd_skip(r, kt, true);
			floe_thrift_rd_skip(r, vt, true);
		}
		r->depth--;
		break;
	}
	case FLOE_THRIFT_STRUCT:
		floe_thrift_rd_struct(r, type);
		while (floe_thrift_rd_field(r, &id, &et))
			floe_thrift_rd_skip(r, et, false);
		break;
	default:
		rd_fail(r, FLOE_EPARSE);
		break;
	}
}

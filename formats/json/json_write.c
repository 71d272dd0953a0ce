/* Compact JSON writer: serialises a DOM value, or a single string, onto a floe_buf. Output
 * is always valid JSON, and a failed write leaves the buffer as it was. */
#include "json_impl.h"

#include "formats/base/buf.h"
#include "formats/base/error.h"
#include "formats/base/utf8.h"
#include "formats/base/hex.h"

#include <inttypes.h>
#include <string.h>

/* Invalid UTF-8 (only possible in strings built through the API) is written as U+FFFD
 * so that the output is always valid JSON. */
int floe_json_write_str(struct floe_buf *out, const char *s, size_t len)
{
	const uint8_t *u = (const uint8_t *)s;
	size_t start = out->len, run = 0, i = 0;
	int rc = floe_buf_putc(out, '"');
	while (!rc && i < len) {
		uint8_t c = u[i];
		size_t k = 1;
		char esc[6];
		size_t elen = 0;
		if (c >= 0x80) {
			k = floe_utf8_get(u + i, len - i, NULL);
			if (!k) {
				memcpy(esc, "\\ufffd", 6);
				elen = 6;
				k = 1;
			}
		} else if (c == '"' || c == '\\') {
			esc[0] = '\\';
			esc[1] = (char)c;
			elen = 2;
		} else if (c < 0x20) {
			esc[0] = '\\';
			elen = 2;
			switch (c) {
			case '\n':
				esc[1] = 'n';
				break;
			case '\t':
				esc[1] = 't';
				break;
			case '\r':
				esc[1] = 'r';
				break;
			case '\b':
				esc[1] = 'b';
				break;
			case '\f':
				esc[1] = 'f';
				break;
			default:
				memcpy(esc, "\\u00", 4);
				esc[4] = floe_hex_char(c >> 4);
				esc[5] = floe_hex_char(c);
				elen = 6;
			}
		}
		if (!elen) {
			run += k;
			i += k;
			continue;
		}
		rc = floe_buf_append(out, u + i - run, run);
		if (!rc)
			rc = floe_buf_append(out, esc, elen);
		run = 0;
		i += k;
	}
	if (!rc)
		rc = floe_buf_append(out, u + i - run, run);
	if (!rc)
		rc = floe_buf_putc(out, '"');
	if (rc)
		out->len = start;
	return rc;
}

static int write_value(const struct floe_json *v, struct floe_buf *out)
{
	int rc = 0;
	switch ((enum floe_json_type)v->type) {
	case FLOE_JSON_NULL:
		return floe_buf_append(out, "null", 4);
	case FLOE_JSON_BOOL:
		return v->b ? floe_buf_append(out, "true", 4) : floe_buf_append(out, "false", 5);
	case FLOE_JSON_INT:
		return floe_buf_printf(out, "%" PRId64, v->u.i);
	case FLOE_JSON_NUMBER:
		return floe_buf_append(out, v->u.s.p, v->u.s.len);
	case FLOE_JSON_STRING:
		return floe_json_write_str(out, v->u.s.p, v->u.s.len);
	case FLOE_JSON_ARRAY:
		rc = floe_buf_putc(out, '[');
		for (size_t i = 0; !rc && i < v->u.arr.len; i++) {
			if (i)
				rc = floe_buf_putc(out, ',');
			if (!rc)
				rc = write_value(v->u.arr.v[i], out);
		}
		return rc ? rc : floe_buf_putc(out, ']');
	case FLOE_JSON_OBJECT:
		rc = floe_buf_putc(out, '{');
		for (size_t i = 0; !rc && i < v->u.obj.len; i++) {
			const struct member *m = &v->u.obj.m[i];
			if (i)
				rc = floe_buf_putc(out, ',');
			if (!rc)
				rc = floe_json_write_str(out, m->key, m->klen);
			if (!rc)
				rc = floe_buf_putc(out, ':');
			if (!rc)
				rc = write_value(m->val, out);
		}
		return rc ? rc : floe_buf_putc(out, '}');
	}
	return FLOE_EINVAL;
}

/* On failure out is left as it was, like every floe_buf append. */
int floe_json_write(const struct floe_json *v, struct floe_buf *out)
{
	if (!v)
		return FLOE_EINVAL;
	size_t start = out->len;
	int rc = write_value(v, out);
	if (rc)
		out->len = start;
	return rc;
}

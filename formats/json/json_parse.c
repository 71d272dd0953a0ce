/* Strict RFC 8259 reader for the JSON DOM: UTF-8 validated, lone surrogates refused,
 * depth and size bounded, integers kept exactly and other numbers as their source text. */
#include "json_impl.h"

#include "formats/base/buf.h"
#include "formats/base/error.h"
#include "formats/base/hex.h"

#include <string.h>

#define MAX_DEPTH 64

/* ---- UTF-8 ---- */

/* Length of the valid UTF-8 sequence at s[0..n) (n >= 1), or 0 if it is not one:
 * overlong forms, surrogates and code points above U+10FFFF are invalid. */
size_t floe_json_utf8_seq(const uint8_t *s, size_t n)
{
	uint8_t c = s[0];
	if (c < 0x80)
		return 1;
	size_t len;
	uint8_t lo = 0x80, hi = 0xbf;
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		if (c == 0xe0)
			lo = 0xa0;
		else if (c == 0xed)
			hi = 0x9f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		if (c == 0xf0)
			lo = 0x90;
		else if (c == 0xf4)
			hi = 0x8f;
	} else {
		return 0;
	}
	if (n < len || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return len;
}

static size_t utf8_put(char *out, uint32_t cp)
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | (cp >> 6));
		out[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xe0 | (cp >> 12));
		out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | (cp >> 18));
	out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	out[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* ---- reader ---- */

struct parser {
	struct floe_json_doc *d;
	const uint8_t *s;
	size_t len, pos;
	size_t err_pos;
	/* Children of the containers being parsed, pushed here and copied into the arena
	 * at exact size when the container closes (no doubling waste in the arena). */
	struct floe_buf scratch;
};

static int fail(struct parser *p, size_t pos, int rc)
{
	p->err_pos = pos;
	return rc;
}

static void skip_ws(struct parser *p)
{
	while (p->pos < p->len) {
		uint8_t c = p->s[p->pos];
		if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
			break;
		p->pos++;
	}
}

static int hex4(const uint8_t *s, uint32_t *out)
{
	uint32_t v = 0;
	for (int i = 0; i < 4; i++) {
		int d = floe_hex_digit((char)s[i]);
		if (d < 0)
			return -1;
		v = v << 4 | (uint32_t)d;
	}
	*out = v;
	return 0;
}

/* Parses the string starting at the opening quote into arena memory. Decoded text is
 * never longer than its escaped source, so one allocation of the source span fits. */
static int parse_string(struct parser *p, char **out, size_t *out_len)
{
	size_t start = ++p->pos, end = start;
	while (end < p->len && p->s[end] != '"') {
		if (p->s[end] == '\\')
			end++;
		end++;
	}
	if (end >= p->len)
		return fail(p, p->len, FLOE_EPARSE);
	char *dst = floe_json_arena_alloc(p->d, end - start + 1);
	if (!dst)
		return fail(p, start, FLOE_ENOMEM);
	size_t n = 0, i = start;
	while (i < end) {
		uint8_t c = p->s[i];
		if (c < 0x20)
			return fail(p, i, FLOE_EPARSE);
		if (c >= 0x80) {
			size_t k = floe_json_utf8_seq(p->s + i, end - i);
			if (!k)
				return fail(p, i, FLOE_EPARSE);
			memcpy(dst + n, p->s + i, k);
			n += k;
			i += k;
			continue;
		}
		if (c != '\\') {
			dst[n++] = (char)c;
			i++;
			continue;
		}
		/* The scan above guarantees an escape character before end. */
		uint8_t e = p->s[i + 1];
		char simple = 0;
		switch (e) {
		case '"':
			simple = '"';
			break;
		case '\\':
			simple = '\\';
			break;
		case '/':
			simple = '/';
			break;
		case 'b':
			simple = '\b';
			break;
		case 'f':
			simple = '\f';
			break;
		case 'n':
			simple = '\n';
			break;
		case 'r':
			simple = '\r';
			break;
		case 't':
			simple = '\t';
			break;
		case 'u':
			break;
		default:
			return fail(p, i, FLOE_EPARSE);
		}
		if (e != 'u') {
			dst[n++] = simple;
			i += 2;
			continue;
		}
		uint32_t cp, lo;
		if (end - i < 6 || hex4(p->s + i + 2, &cp))
			return fail(p, i, FLOE_EPARSE);
		if (cp >= 0xdc00 && cp <= 0xdfff)
			return fail(p, i, FLOE_EPARSE); /* lone low surrogate */
		if (cp >= 0xd800 && cp <= 0xdbff) {
			if (end - i < 12 || p->s[i + 6] != '\\' || p->s[i + 7] != 'u' ||
			    hex4(p->s + i + 8, &lo) || lo < 0xdc00 || lo > 0xdfff)
				return fail(p, i, FLOE_EPARSE); /* lone high surrogate */
			cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
			i += 12;
		} else {
			i += 6;
		}
		n += utf8_put(dst + n, cp);
	}
	dst[n] = '\0';
	p->pos = end + 1;
	*out = dst;
	*out_len = n;
	return 0;
}

static int parse_number(struct parser *p, struct floe_json **out)
{
	size_t start = p->pos, i = p->pos;
	bool neg = false, integral = true, overflow = false;
	uint64_t mag = 0;
	if (p->s[i] == '-') {
		neg = true;
		i++;
	}
	if (i >= p->len || p->s[i] < '0' || p->s[i] > '9')
		return fail(p, i, FLOE_EPARSE);
	if (p->s[i] == '0') {
		i++;
	} else {
		while (i < p->len && p->s[i] >= '0' && p->s[i] <= '9') {
			if (__builtin_mul_overflow(mag, (uint64_t)10, &mag) ||
			    __builtin_add_overflow(mag, (uint64_t)(p->s[i] - '0'), &mag))
				overflow = true;
			i++;
		}
	}
	if (i < p->len && p->s[i] == '.') {
		integral = false;
		i++;
		if (i >= p->len || p->s[i] < '0' || p->s[i] > '9')
			return fail(p, i, FLOE_EPARSE);
		while (i < p->len && p->s[i] >= '0' && p->s[i] <= '9')
			i++;
	}
	if (i < p->len && (p->s[i] == 'e' || p->s[i] == 'E')) {
		integral = false;
		i++;
		if (i < p->len && (p->s[i] == '+' || p->s[i] == '-'))
			i++;
		if (i >= p->len || p->s[i] < '0' || p->s[i] > '9')
			return fail(p, i, FLOE_EPARSE);
		while (i < p->len && p->s[i] >= '0' && p->s[i] <= '9')
			i++;
	}
	const uint64_t lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
	/* "-0" stays text so that its sign survives a rewrite. */
	bool as_int = integral && !overflow && mag <= lim && !(neg && mag == 0);
	struct floe_json *v = floe_json_new_value(p->d, as_int ? FLOE_JSON_INT : FLOE_JSON_NUMBER);
	if (!v)
		return fail(p, start, FLOE_ENOMEM);
	if (as_int) {
		if (!neg)
			v->u.i = (int64_t)mag;
		else if (mag == (uint64_t)INT64_MAX + 1)
			v->u.i = INT64_MIN;
		else
			v->u.i = -(int64_t)mag;
	} else {
		v->u.s.p = floe_json_arena_strndup(p->d, (const char *)p->s + start, i - start);
		if (!v->u.s.p)
			return fail(p, start, FLOE_ENOMEM);
		v->u.s.len = i - start;
	}
	p->pos = i;
	*out = v;
	return 0;
}

static int parse_literal(struct parser *p, const char *word, size_t wlen)
{
	if (p->len - p->pos < wlen || memcmp(p->s + p->pos, word, wlen) != 0)
		return fail(p, p->pos, FLOE_EPARSE);
	p->pos += wlen;
	return 0;
}

static int parse_value(struct parser *p, int depth, struct floe_json **out);

static int parse_array(struct parser *p, int depth, struct floe_json **out)
{
	size_t base = p->scratch.len, count = 0;
	int rc;
	p->pos++;
	skip_ws(p);
	if (p->pos < p->len && p->s[p->pos] == ']') {
		p->pos++;
	} else {
		for (;;) {
			struct floe_json *child;
			if ((rc = parse_value(p, depth, &child)))
				return rc;
			if ((rc = floe_buf_append(&p->scratch, &child, sizeof(child))))
				return fail(p, p->pos, rc == FLOE_ELIMIT ? FLOE_ENOMEM : rc);
			count++;
			skip_ws(p);
			if (p->pos >= p->len)
				return fail(p, p->len, FLOE_EPARSE);
			if (p->s[p->pos] == ']') {
				p->pos++;
				break;
			}
			if (p->s[p->pos] != ',')
				return fail(p, p->pos, FLOE_EPARSE);
			p->pos++;
		}
	}
	struct floe_json *v = floe_json_new_value(p->d, FLOE_JSON_ARRAY);
	if (!v)
		return fail(p, p->pos, FLOE_ENOMEM);
	if (count) {
		v->u.arr.v = floe_json_arena_alloc(p->d, count * sizeof(*v->u.arr.v));
		if (!v->u.arr.v)
			return fail(p, p->pos, FLOE_ENOMEM);
		memcpy(v->u.arr.v, p->scratch.data + base, count * sizeof(*v->u.arr.v));
	}
	v->u.arr.len = v->u.arr.cap = count;
	p->scratch.len = base;
	*out = v;
	return 0;
}

static int parse_object(struct parser *p, int depth, struct floe_json **out)
{
	size_t base = p->scratch.len, count = 0;
	int rc;
	p->pos++;
	skip_ws(p);
	if (p->pos < p->len && p->s[p->pos] == '}') {
		p->pos++;
	} else {
		for (;;) {
			struct member m;
			char *key;
			skip_ws(p);
			if (p->pos >= p->len || p->s[p->pos] != '"')
				return fail(p, p->pos, FLOE_EPARSE);
			if ((rc = parse_string(p, &key, &m.klen)))
				return rc;
			m.key = key;
			m.hash = floe_json_hash_key(key, m.klen);
			skip_ws(p);
			if (p->pos >= p->len || p->s[p->pos] != ':')
				return fail(p, p->pos, FLOE_EPARSE);
			p->pos++;
			if ((rc = parse_value(p, depth, &m.val)))
				return rc;
			if ((rc = floe_buf_append(&p->scratch, &m, sizeof(m))))
				return fail(p, p->pos, rc == FLOE_ELIMIT ? FLOE_ENOMEM : rc);
			count++;
			skip_ws(p);
			if (p->pos >= p->len)
				return fail(p, p->len, FLOE_EPARSE);
			if (p->s[p->pos] == '}') {
				p->pos++;
				break;
			}
			if (p->s[p->pos] != ',')
				return fail(p, p->pos, FLOE_EPARSE);
			p->pos++;
		}
	}
	struct floe_json *v = floe_json_new_value(p->d, FLOE_JSON_OBJECT);
	if (!v)
		return fail(p, p->pos, FLOE_ENOMEM);
	if (count) {
		v->u.obj.m = floe_json_arena_alloc(p->d, count * sizeof(*v->u.obj.m));
		if (!v->u.obj.m)
			return fail(p, p->pos, FLOE_ENOMEM);
		memcpy(v->u.obj.m, p->scratch.data + base, count * sizeof(*v->u.obj.m));
	}
	v->u.obj.len = v->u.obj.cap = count;
	p->scratch.len = base;
	*out = v;
	return 0;
}

static int parse_value(struct parser *p, int depth, struct floe_json **out)
{
	int rc;
	skip_ws(p);
	if (p->pos >= p->len)
		return fail(p, p->len, FLOE_EPARSE);
	uint8_t c = p->s[p->pos];
	if (c == '[' || c == '{') {
		if (depth >= MAX_DEPTH)
			return fail(p, p->pos, FLOE_ELIMIT);
		return c == '[' ? parse_array(p, depth + 1, out) : parse_object(p, depth + 1, out);
	}
	if (c == '"') {
		struct floe_json *v = floe_json_new_value(p->d, FLOE_JSON_STRING);
		if (!v)
			return fail(p, p->pos, FLOE_ENOMEM);
		if ((rc = parse_string(p, &v->u.s.p, &v->u.s.len)))
			return rc;
		*out = v;
		return 0;
	}
	if (c == '-' || (c >= '0' && c <= '9'))
		return parse_number(p, out);
	enum floe_json_type t;
	bool b = false;
	if (c == 't') {
		rc = parse_literal(p, "true", 4);
		t = FLOE_JSON_BOOL;
		b = true;
	} else if (c == 'f') {
		rc = parse_literal(p, "false", 5);
		t = FLOE_JSON_BOOL;
	} else if (c == 'n') {
		rc = parse_literal(p, "null", 4);
		t = FLOE_JSON_NULL;
	} else {
		return fail(p, p->pos, FLOE_EPARSE);
	}
	if (rc)
		return rc;
	struct floe_json *v = floe_json_new_value(p->d, t);
	if (!v)
		return fail(p, p->pos, FLOE_ENOMEM);
	v->b = b;
	*out = v;
	return 0;
}

int floe_json_parse(struct floe_alloc *a, const char *text, size_t len, size_t max_bytes,
		    struct floe_json_doc **out, size_t *err_offset)
{
	struct parser p = {.s = (const uint8_t *)text, .len = len};
	struct floe_json *root = NULL;
	int rc;
	*out = NULL;
	floe_buf_init(&p.scratch, a, SIZE_MAX);
	if (max_bytes && len > max_bytes) {
		rc = fail(&p, max_bytes, FLOE_ELIMIT);
		goto out;
	}
	p.d = floe_json_doc_new(a);
	if (!p.d) {
		rc = fail(&p, 0, FLOE_ENOMEM);
		goto out;
	}
	if ((rc = parse_value(&p, 0, &root)))
		goto out;
	skip_ws(&p);
	if (p.pos != p.len) {
		rc = fail(&p, p.pos, FLOE_EPARSE);
		goto out;
	}
	floe_json_set_root(p.d, root);
	*out = p.d;
	p.d = NULL;
out:
	if (rc && err_offset)
		*err_offset = p.err_pos;
	floe_buf_fini(&p.scratch);
	floe_json_doc_free(p.d);
	return rc;
}

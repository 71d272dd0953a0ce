/* Strict RFC 8259 reader for the JSON DOM: UTF-8 validated, lone surrogates refused,
 * depth and size bounded, integers kept exactly and other numbers as their source text. */
#include "json_impl.h"

#include "formats/base/buf.h"
#include "formats/base/error.h"
#include "formats/base/hex.h"
#include "formats/base/utf8.h"

#include <string.h>

#define MAX_DEPTH 64

struct parser {
	struct floe_json_doc *d;
	const uint8_t *s;
	size_t len, pos;
	size_t err_pos;
	const char *what; /* the failure, for the error detail */
	/* Children of the containers being parsed, pushed here and copied into the arena
	 * at exact size when the container closes (no doubling waste in the arena). */
	struct floe_buf scratch;
};

/* Records where and what the failure was; returns rc. */
static int fail(struct parser *p, size_t pos, int rc, const char *what)
{
	p->err_pos = pos;
	p->what = what;
	return rc;
}

static int nomem(struct parser *p, size_t pos)
{
	return fail(p, pos, FLOE_ENOMEM, "out of memory");
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

/* Decodes the escape at p->s[i] (a backslash; the scan of parse_string guarantees a
 * character after it before end) onto dst + *n; *took gets the source bytes it took. */
static int unescape(struct parser *p, size_t i, size_t end, char *dst, size_t *n, size_t *took)
{
	static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
	uint8_t e = p->s[i + 1];
	const char *simple = memchr(from, e, sizeof(from) - 1);
	if (simple) {
		dst[(*n)++] = to[simple - from];
		*took = 2;
		return 0;
	}
	uint32_t cp, lo;
	if (e != 'u')
		return fail(p, i, FLOE_EPARSE, "invalid escape in string");
	if (end - i < 6 || hex4(p->s + i + 2, &cp))
		return fail(p, i, FLOE_EPARSE, "invalid \\u escape in string");
	if (cp >= 0xdc00 && cp <= 0xdfff)
		return fail(p, i, FLOE_EPARSE, "lone low surrogate in string");
	*took = 6;
	if (cp >= 0xd800 && cp <= 0xdbff) {
		if (end - i < 12 || p->s[i + 6] != '\\' || p->s[i + 7] != 'u' ||
		    hex4(p->s + i + 8, &lo) || lo < 0xdc00 || lo > 0xdfff)
			return fail(p, i, FLOE_EPARSE, "lone high surrogate in string");
		cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
		*took = 12;
	}
	*n += floe_utf8_put((uint8_t *)dst + *n, cp);
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
		return fail(p, p->len, FLOE_EPARSE, "unterminated string");
	char *dst = floe_json_arena_alloc(p->d, end - start + 1);
	if (!dst)
		return nomem(p, start);
	size_t n = 0, i = start;
	while (i < end) {
		uint8_t c = p->s[i];
		size_t k = 1;
		if (c < 0x20)
			return fail(p, i, FLOE_EPARSE, "control character in string");
		if (c == '\\') {
			int rc = unescape(p, i, end, dst, &n, &k);
			if (rc)
				return rc;
			i += k;
			continue;
		}
		if (c >= 0x80 && !(k = floe_utf8_get(p->s + i, end - i, NULL)))
			return fail(p, i, FLOE_EPARSE, "invalid UTF-8 in string");
		memcpy(dst + n, p->s + i, k);
		n += k;
		i += k;
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
		return fail(p, i, FLOE_EPARSE, "invalid number");
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
			return fail(p, i, FLOE_EPARSE, "invalid number");
		while (i < p->len && p->s[i] >= '0' && p->s[i] <= '9')
			i++;
	}
	if (i < p->len && (p->s[i] == 'e' || p->s[i] == 'E')) {
		integral = false;
		i++;
		if (i < p->len && (p->s[i] == '+' || p->s[i] == '-'))
			i++;
		if (i >= p->len || p->s[i] < '0' || p->s[i] > '9')
			return fail(p, i, FLOE_EPARSE, "invalid number");
		while (i < p->len && p->s[i] >= '0' && p->s[i] <= '9')
			i++;
	}
	const uint64_t lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
	/* "-0" stays text so that its sign survives a rewrite. */
	bool as_int = integral && !overflow && mag <= lim && !(neg && mag == 0);
	struct floe_json *v = floe_json_new_value(p->d, as_int ? FLOE_JSON_INT : FLOE_JSON_NUMBER);
	if (!v)
		return nomem(p, start);
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
			return nomem(p, start);
		v->u.s.len = i - start;
	}
	p->pos = i;
	*out = v;
	return 0;
}

static int parse_literal(struct parser *p, const char *word, size_t wlen)
{
	if (p->len - p->pos < wlen || memcmp(p->s + p->pos, word, wlen) != 0)
		return fail(p, p->pos, FLOE_EPARSE, "invalid literal");
	p->pos += wlen;
	return 0;
}

static int parse_value(struct parser *p, int depth, struct floe_json **out);

/* One element of an array, pushed onto the scratch stack. */
static int parse_element(struct parser *p, int depth)
{
	struct floe_json *child;
	int rc = parse_value(p, depth, &child);
	if (rc)
		return rc;
	if ((rc = floe_buf_append(&p->scratch, &child, sizeof(child))))
		return nomem(p, p->pos);
	return 0;
}

/* One member of an object, pushed onto the scratch stack. */
static int parse_member(struct parser *p, int depth)
{
	struct member m;
	char *key;
	int rc;
	skip_ws(p);
	if (p->pos >= p->len || p->s[p->pos] != '"')
		return fail(p, p->pos, FLOE_EPARSE, "expected a member name");
	if ((rc = parse_string(p, &key, &m.klen)))
		return rc;
	m.key = key;
	m.hash = floe_json_hash_key(key, m.klen);
	skip_ws(p);
	if (p->pos >= p->len || p->s[p->pos] != ':')
		return fail(p, p->pos, FLOE_EPARSE, "expected ':'");
	p->pos++;
	if ((rc = parse_value(p, depth, &m.val)))
		return rc;
	if ((rc = floe_buf_append(&p->scratch, &m, sizeof(m))))
		return nomem(p, p->pos);
	return 0;
}

/* Parses the elements or members of the array or object that opens at p->pos onto the
 * scratch stack, up to its closing bracket; *count gets how many. */
static int parse_items(struct parser *p, int depth, bool object, size_t *count)
{
	const char close = object ? '}' : ']';
	int rc;
	p->pos++;
	skip_ws(p);
	if (p->pos < p->len && p->s[p->pos] == close) {
		p->pos++;
		return 0;
	}
	for (;;) {
		if ((rc = object ? parse_member(p, depth) : parse_element(p, depth)))
			return rc;
		++*count;
		skip_ws(p);
		if (p->pos >= p->len)
			return fail(p, p->len, FLOE_EPARSE, "unexpected end of input");
		if (p->s[p->pos] == close) {
			p->pos++;
			return 0;
		}
		if (p->s[p->pos] != ',')
			return fail(p, p->pos, FLOE_EPARSE,
				    object ? "expected ',' or '}'" : "expected ',' or ']'");
		p->pos++;
	}
}

/* An array or object: its children are parsed onto the scratch stack, then copied into
 * the arena at their exact size. */
static int parse_container(struct parser *p, int depth, bool object, struct floe_json **out)
{
	size_t base = p->scratch.len, count = 0;
	size_t size = object ? sizeof(struct member) : sizeof(struct floe_json *);
	int rc = parse_items(p, depth, object, &count);
	if (rc)
		return rc;
	enum floe_json_type t = object ? FLOE_JSON_OBJECT : FLOE_JSON_ARRAY;
	struct floe_json *v = floe_json_new_value(p->d, t);
	if (!v)
		return nomem(p, p->pos);
	void *items = NULL;
	if (count) {
		/* count * size cannot overflow: the scratch stack holds that many bytes. */
		if (!(items = floe_json_arena_alloc(p->d, count * size)))
			return nomem(p, p->pos);
		memcpy(items, p->scratch.data + base, count * size);
	}
	if (object) {
		v->u.obj.m = items;
		v->u.obj.len = v->u.obj.cap = count;
	} else {
		v->u.arr.v = items;
		v->u.arr.len = v->u.arr.cap = count;
	}
	p->scratch.len = base;
	*out = v;
	return 0;
}

static int parse_value(struct parser *p, int depth, struct floe_json **out)
{
	int rc;
	skip_ws(p);
	if (p->pos >= p->len)
		return fail(p, p->len, FLOE_EPARSE, "unexpected end of input");
	uint8_t c = p->s[p->pos];
	if (c == '[' || c == '{') {
		if (depth >= MAX_DEPTH)
			return fail(p, p->pos, FLOE_ELIMIT, "nested deeper than 64 levels");
		return parse_container(p, depth + 1, c == '{', out);
	}
	if (c == '"') {
		struct floe_json *v = floe_json_new_value(p->d, FLOE_JSON_STRING);
		if (!v)
			return nomem(p, p->pos);
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
		return fail(p, p->pos, FLOE_EPARSE, "expected a value");
	}
	if (rc)
		return rc;
	struct floe_json *v = floe_json_new_value(p->d, t);
	if (!v)
		return nomem(p, p->pos);
	v->b = b;
	*out = v;
	return 0;
}

int floe_json_parse(struct floe_alloc *a, const char *text, size_t len, size_t max_bytes,
		    struct floe_json_doc **out, struct floe_err *err)
{
	struct parser p = {.s = (const uint8_t *)text, .len = len};
	struct floe_json *root = NULL;
	int rc;
	*out = NULL;
	floe_buf_init(&p.scratch, a, SIZE_MAX);
	if (max_bytes && len > max_bytes) {
		rc = fail(&p, max_bytes, FLOE_ELIMIT, "document over its size limit");
		goto out;
	}
	if ((rc = floe_json_doc_new(a, &p.d))) {
		rc = nomem(&p, 0);
		goto out;
	}
	if ((rc = parse_value(&p, 0, &root)))
		goto out;
	skip_ws(&p);
	if (p.pos != p.len) {
		rc = fail(&p, p.pos, FLOE_EPARSE, "text after the value");
		goto out;
	}
	floe_json_set_root(p.d, root);
	*out = p.d;
	p.d = NULL;
out:
	if (rc)
		floe_err_at(err, rc, p.err_pos, "JSON: %s at byte %zu", p.what, p.err_pos);
	floe_buf_fini(&p.scratch);
	floe_json_doc_free(p.d);
	return rc;
}

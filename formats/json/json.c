/* JSON DOM in an arena: a strict RFC 8259 reader (UTF-8 validated, lone surrogates
 * refused, depth and size bounded) and a compact writer. Objects keep their members in
 * order and allow duplicate names (floe_json_get returns the first), so rewriting a
 * document changes nothing floe did not touch. */
#include "json.h"

#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"

#include <inttypes.h>
#include <stdalign.h>
#include <string.h>

#define MAX_DEPTH 64
#define CHUNK_MIN 4096
#define CHUNK_MAX 65536

struct member {
	const char *key; /* NUL-terminated; klen bytes (may contain NUL) */
	size_t klen;
	uint32_t hash; /* of the key: a cheap filter before memcmp in lookups */
	struct floe_json *val;
};

struct floe_json {
	uint8_t type;
	bool b;
	union {
		int64_t i;
		struct {
			char *p; /* NUL-terminated */
			size_t len;
		} s; /* STRING, and NUMBER as source text */
		struct {
			struct floe_json **v;
			size_t len, cap;
		} arr;
		struct {
			struct member *m;
			size_t len, cap;
		} obj;
	} u;
};

struct chunk {
	struct chunk *next;
	size_t used, cap;
	alignas(max_align_t) unsigned char data[];
};

struct floe_json_doc {
	struct floe_alloc *a; /* borrowed */
	struct chunk *chunks;
	size_t next_cap;
	struct floe_json *root;
};

/* ---- arena ---- */

static void *arena_alloc(struct floe_json_doc *d, size_t n)
{
	const size_t al = alignof(max_align_t);
	size_t need;
	if (__builtin_add_overflow(n, al - 1, &need))
		return NULL;
	need &= ~(al - 1);
	if (need == 0)
		need = al;
	struct chunk *c = d->chunks;
	if (!c || c->cap - c->used < need) {
		size_t cap = d->next_cap;
		if (need > cap / 4) {
			/* Large blocks get a chunk of their own, placed behind the current one so
			 * its free tail stays usable. */
			cap = need;
		}
		size_t total;
		if (__builtin_add_overflow(sizeof(struct chunk), cap, &total))
			return NULL;
		struct chunk *nc = floe_malloc(d->a, total);
		if (!nc)
			return NULL;
		nc->used = 0;
		nc->cap = cap;
		if (cap == need && c) {
			nc->next = c->next;
			c->next = nc;
			nc->used = need;
			return nc->data;
		}
		nc->next = c;
		d->chunks = nc;
		if (d->next_cap < CHUNK_MAX)
			d->next_cap *= 2;
		c = nc;
	}
	void *p = c->data + c->used;
	c->used += need;
	return p;
}

static char *arena_strndup(struct floe_json_doc *d, const char *s, size_t len)
{
	size_t n;
	if (__builtin_add_overflow(len, (size_t)1, &n))
		return NULL;
	char *p = arena_alloc(d, n);
	if (!p)
		return NULL;
	if (len)
		memcpy(p, s, len);
	p[len] = '\0';
	return p;
}

static uint32_t hash_key(const char *s, size_t len)
{
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < len; i++) {
		h ^= (uint8_t)s[i];
		h *= 16777619u;
	}
	return h;
}

struct floe_json_doc *floe_json_doc_new(struct floe_alloc *a)
{
	struct floe_json_doc *d = floe_calloc(a, 1, sizeof(*d));
	if (!d)
		return NULL;
	d->a = a;
	d->next_cap = CHUNK_MIN;
	return d;
}

void floe_json_doc_free(struct floe_json_doc *doc)
{
	if (!doc)
		return;
	struct chunk *c = doc->chunks;
	while (c) {
		struct chunk *n = c->next;
		floe_free(doc->a, c);
		c = n;
	}
	floe_free(doc->a, doc);
}

struct floe_json *floe_json_root(struct floe_json_doc *doc)
{
	return doc ? doc->root : NULL;
}

void floe_json_set_root(struct floe_json_doc *doc, struct floe_json *v)
{
	doc->root = v;
}

static struct floe_json *new_value(struct floe_json_doc *d, enum floe_json_type t)
{
	struct floe_json *v = arena_alloc(d, sizeof(*v));
	if (v) {
		memset(v, 0, sizeof(*v));
		v->type = (uint8_t)t;
	}
	return v;
}

/* ---- UTF-8 ---- */

/* Length of the valid UTF-8 sequence at s[0..n) (n >= 1), or 0 if it is not one:
 * overlong forms, surrogates and code points above U+10FFFF are invalid. */
static size_t utf8_seq(const uint8_t *s, size_t n)
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
		uint8_t c = s[i];
		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (uint32_t)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v |= (uint32_t)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v |= (uint32_t)(c - 'A' + 10);
		else
			return -1;
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
	char *dst = arena_alloc(p->d, end - start + 1);
	if (!dst)
		return fail(p, start, FLOE_ENOMEM);
	size_t n = 0, i = start;
	while (i < end) {
		uint8_t c = p->s[i];
		if (c < 0x20)
			return fail(p, i, FLOE_EPARSE);
		if (c >= 0x80) {
			size_t k = utf8_seq(p->s + i, end - i);
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
	struct floe_json *v = new_value(p->d, as_int ? FLOE_JSON_INT : FLOE_JSON_NUMBER);
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
		v->u.s.p = arena_strndup(p->d, (const char *)p->s + start, i - start);
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
	struct floe_json *v = new_value(p->d, FLOE_JSON_ARRAY);
	if (!v)
		return fail(p, p->pos, FLOE_ENOMEM);
	if (count) {
		v->u.arr.v = arena_alloc(p->d, count * sizeof(*v->u.arr.v));
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
			m.hash = hash_key(key, m.klen);
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
	struct floe_json *v = new_value(p->d, FLOE_JSON_OBJECT);
	if (!v)
		return fail(p, p->pos, FLOE_ENOMEM);
	if (count) {
		v->u.obj.m = arena_alloc(p->d, count * sizeof(*v->u.obj.m));
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
		struct floe_json *v = new_value(p->d, FLOE_JSON_STRING);
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
	struct floe_json *v = new_value(p->d, t);
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
	p.d->root = root;
	*out = p.d;
	p.d = NULL;
out:
	if (rc && err_offset)
		*err_offset = p.err_pos;
	floe_buf_fini(&p.scratch);
	floe_json_doc_free(p.d);
	return rc;
}

/* ---- reading ---- */

enum floe_json_type floe_json_type(const struct floe_json *v)
{
	return v ? (enum floe_json_type)v->type : FLOE_JSON_NULL;
}

bool floe_json_is(const struct floe_json *v, enum floe_json_type t)
{
	return v && v->type == t;
}

static struct member *find_member(const struct floe_json *obj, const char *name, size_t *idx)
{
	if (!obj || obj->type != FLOE_JSON_OBJECT || !name)
		return NULL;
	size_t nlen = strlen(name);
	uint32_t h = hash_key(name, nlen);
	for (size_t i = 0; i < obj->u.obj.len; i++) {
		struct member *m = &obj->u.obj.m[i];
		if (m->hash == h && m->klen == nlen && memcmp(m->key, name, nlen) == 0) {
			if (idx)
				*idx = i;
			return m;
		}
	}
	return NULL;
}

struct floe_json *floe_json_get(const struct floe_json *obj, const char *name)
{
	struct member *m = find_member(obj, name, NULL);
	return m ? m->val : NULL;
}

size_t floe_json_len(const struct floe_json *v)
{
	if (!v)
		return 0;
	if (v->type == FLOE_JSON_ARRAY)
		return v->u.arr.len;
	if (v->type == FLOE_JSON_OBJECT)
		return v->u.obj.len;
	return 0;
}

struct floe_json *floe_json_at(const struct floe_json *v, size_t i)
{
	if (!v)
		return NULL;
	if (v->type == FLOE_JSON_ARRAY && i < v->u.arr.len)
		return v->u.arr.v[i];
	if (v->type == FLOE_JSON_OBJECT && i < v->u.obj.len)
		return v->u.obj.m[i].val;
	return NULL;
}

const char *floe_json_key_at(const struct floe_json *obj, size_t i)
{
	if (!obj || obj->type != FLOE_JSON_OBJECT || i >= obj->u.obj.len)
		return NULL;
	return obj->u.obj.m[i].key;
}

int floe_json_int(const struct floe_json *v, int64_t *out)
{
	if (!v || v->type != FLOE_JSON_INT)
		return FLOE_EFORMAT;
	*out = v->u.i;
	return 0;
}

int floe_json_bool(const struct floe_json *v, bool *out)
{
	if (!v || v->type != FLOE_JSON_BOOL)
		return FLOE_EFORMAT;
	*out = v->b;
	return 0;
}

int floe_json_str(const struct floe_json *v, const char **out, size_t *len)
{
	if (!v || v->type != FLOE_JSON_STRING)
		return FLOE_EFORMAT;
	*out = v->u.s.p;
	if (len)
		*len = v->u.s.len;
	return 0;
}

int floe_json_get_int(const struct floe_json *obj, const char *name, int64_t *out)
{
	struct floe_json *v = floe_json_get(obj, name);
	return v ? floe_json_int(v, out) : FLOE_ENOTFOUND;
}

int floe_json_get_str(const struct floe_json *obj, const char *name, const char **out)
{
	struct floe_json *v = floe_json_get(obj, name);
	return v ? floe_json_str(v, out, NULL) : FLOE_ENOTFOUND;
}

/* ---- building ---- */

struct floe_json *floe_json_new_null(struct floe_json_doc *doc)
{
	return new_value(doc, FLOE_JSON_NULL);
}

struct floe_json *floe_json_new_bool(struct floe_json_doc *doc, bool b)
{
	struct floe_json *v = new_value(doc, FLOE_JSON_BOOL);
	if (v)
		v->b = b;
	return v;
}

struct floe_json *floe_json_new_int(struct floe_json_doc *doc, int64_t i)
{
	struct floe_json *v = new_value(doc, FLOE_JSON_INT);
	if (v)
		v->u.i = i;
	return v;
}

static struct floe_json *new_text(struct floe_json_doc *doc, enum floe_json_type t, const char *s,
				  size_t len)
{
	struct floe_json *v = new_value(doc, t);
	if (!v)
		return NULL;
	v->u.s.p = arena_strndup(doc, s, len);
	if (!v->u.s.p)
		return NULL;
	v->u.s.len = len;
	return v;
}

struct floe_json *floe_json_new_str(struct floe_json_doc *doc, const char *s, size_t len)
{
	return new_text(doc, FLOE_JSON_STRING, s, len);
}

struct floe_json *floe_json_new_array(struct floe_json_doc *doc)
{
	return new_value(doc, FLOE_JSON_ARRAY);
}

struct floe_json *floe_json_new_object(struct floe_json_doc *doc)
{
	return new_value(doc, FLOE_JSON_OBJECT);
}

/* Grows an arena array of elem-sized items to hold one more (the old block stays in
 * the arena until the document is freed: doubling bounds that waste to 2x). */
static int grow(struct floe_json_doc *doc, void **items, size_t *cap, size_t len, size_t elem)
{
	if (len < *cap)
		return 0;
	size_t ncap = *cap ? *cap * 2 : 4, bytes;
	if (ncap < *cap || __builtin_mul_overflow(ncap, elem, &bytes))
		return FLOE_ENOMEM;
	void *n = arena_alloc(doc, bytes);
	if (!n)
		return FLOE_ENOMEM;
	if (len)
		memcpy(n, *items, len * elem);
	*items = n;
	*cap = ncap;
	return 0;
}

/* A NULL v is taken to be a failed floe_json_new_*(), so that calls can be chained:
 * floe_json_push(doc, arr, floe_json_new_int(doc, 1)). */
int floe_json_push(struct floe_json_doc *doc, struct floe_json *arr, struct floe_json *v)
{
	if (!v)
		return FLOE_ENOMEM;
	if (!arr || arr->type != FLOE_JSON_ARRAY)
		return FLOE_EINVAL;
	void *items = arr->u.arr.v;
	int rc = grow(doc, &items, &arr->u.arr.cap, arr->u.arr.len, sizeof(*arr->u.arr.v));
	if (rc)
		return rc;
	arr->u.arr.v = items;
	arr->u.arr.v[arr->u.arr.len++] = v;
	return 0;
}

int floe_json_set(struct floe_json_doc *doc, struct floe_json *obj, const char *name,
		  struct floe_json *v)
{
	if (!v)
		return FLOE_ENOMEM;
	if (!obj || obj->type != FLOE_JSON_OBJECT || !name)
		return FLOE_EINVAL;
	struct member *m = find_member(obj, name, NULL);
	if (m) {
		m->val = v;
		return 0;
	}
	size_t nlen = strlen(name);
	char *key = arena_strndup(doc, name, nlen);
	if (!key)
		return FLOE_ENOMEM;
	void *items = obj->u.obj.m;
	int rc = grow(doc, &items, &obj->u.obj.cap, obj->u.obj.len, sizeof(*obj->u.obj.m));
	if (rc)
		return rc;
	obj->u.obj.m = items;
	obj->u.obj.m[obj->u.obj.len++] = (struct member){key, nlen, hash_key(key, nlen), v};
	return 0;
}

int floe_json_remove(struct floe_json *obj, const char *name)
{
	size_t i;
	if (!find_member(obj, name, &i))
		return 0;
	memmove(&obj->u.obj.m[i], &obj->u.obj.m[i + 1],
		(obj->u.obj.len - i - 1) * sizeof(*obj->u.obj.m));
	obj->u.obj.len--;
	return 0;
}

struct floe_json *floe_json_clone(struct floe_json_doc *doc, const struct floe_json *v)
{
	if (!v)
		return NULL;
	struct floe_json *c;
	switch ((enum floe_json_type)v->type) {
	case FLOE_JSON_NULL:
		return floe_json_new_null(doc);
	case FLOE_JSON_BOOL:
		return floe_json_new_bool(doc, v->b);
	case FLOE_JSON_INT:
		return floe_json_new_int(doc, v->u.i);
	case FLOE_JSON_NUMBER:
	case FLOE_JSON_STRING:
		return new_text(doc, (enum floe_json_type)v->type, v->u.s.p, v->u.s.len);
	case FLOE_JSON_ARRAY:
		c = new_value(doc, FLOE_JSON_ARRAY);
		if (!c)
			return NULL;
		if (v->u.arr.len) {
			c->u.arr.v = arena_alloc(doc, v->u.arr.len * sizeof(*c->u.arr.v));
			if (!c->u.arr.v)
				return NULL;
		}
		for (size_t i = 0; i < v->u.arr.len; i++) {
			c->u.arr.v[i] = floe_json_clone(doc, v->u.arr.v[i]);
			if (!c->u.arr.v[i])
				return NULL;
		}
		c->u.arr.len = c->u.arr.cap = v->u.arr.len;
		return c;
	case FLOE_JSON_OBJECT:
		c = new_value(doc, FLOE_JSON_OBJECT);
		if (!c)
			return NULL;
		if (v->u.obj.len) {
			c->u.obj.m = arena_alloc(doc, v->u.obj.len * sizeof(*c->u.obj.m));
			if (!c->u.obj.m)
				return NULL;
		}
		for (size_t i = 0; i < v->u.obj.len; i++) {
			const struct member *src = &v->u.obj.m[i];
			struct member *dst = &c->u.obj.m[i];
			*dst = *src;
			dst->key = arena_strndup(doc, src->key, src->klen);
			dst->val = floe_json_clone(doc, src->val);
			if (!dst->key || !dst->val)
				return NULL;
		}
		c->u.obj.len = c->u.obj.cap = v->u.obj.len;
		return c;
	}
	return NULL;
}

/* ---- writer ---- */

/* Invalid UTF-8 (only possible in strings built through the API) is written as U+FFFD
 * so that the output is always valid JSON. */
int floe_json_write_str(struct floe_buf *out, const char *s, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	const uint8_t *u = (const uint8_t *)s;
	size_t start = out->len, run = 0, i = 0;
	int rc = floe_buf_putc(out, '"');
	while (!rc && i < len) {
		uint8_t c = u[i];
		size_t k = 1;
		char esc[6];
		size_t elen = 0;
		if (c >= 0x80) {
			k = utf8_seq(u + i, len - i);
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
				esc[4] = hex[c >> 4];
				esc[5] = hex[c & 15];
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

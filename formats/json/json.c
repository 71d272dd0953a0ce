/* JSON DOM in an arena: documents and their chunked arena, reading values, building and
 * cloning them. Objects keep their members in order and allow duplicate names
 * (floe_json_get returns the first), so rewriting a document changes nothing floe did
 * not touch. The reader is in json_parse.c, the writer in json_write.c. */
#include "json_impl.h"

#include "formats/base/alloc.h"
#include "formats/base/error.h"
#include "formats/base/wipe.h"

#include <stdalign.h>
#include <string.h>

#define CHUNK_MIN 4096
#define CHUNK_MAX 65536

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

void *floe_json_arena_alloc(struct floe_json_doc *d, size_t n)
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

char *floe_json_arena_strndup(struct floe_json_doc *d, const char *s, size_t len)
{
	size_t n;
	if (__builtin_add_overflow(len, (size_t)1, &n))
		return NULL;
	char *p = floe_json_arena_alloc(d, n);
	if (!p)
		return NULL;
	if (len)
		memcpy(p, s, len);
	p[len] = '\0';
	return p;
}

uint32_t floe_json_hash_key(const char *s, size_t len)
{
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < len; i++) {
		h ^= (uint8_t)s[i];
		h *= 16777619u;
	}
	return h;
}

int floe_json_doc_new(struct floe_alloc *a, struct floe_json_doc **out)
{
	struct floe_json_doc *d = floe_calloc(a, 1, sizeof(*d));
	if (!d)
		return FLOE_ENOMEM;
	d->a = a;
	d->next_cap = CHUNK_MIN;
	*out = d;
	return 0;
}

static void doc_free(struct floe_json_doc *doc, void (*release)(struct floe_alloc *, void *))
{
	if (!doc)
		return;
	struct chunk *c = doc->chunks;
	while (c) {
		struct chunk *n = c->next;
		release(doc->a, c);
		c = n;
	}
	release(doc->a, doc);
}

void floe_json_doc_free(struct floe_json_doc *doc)
{
	doc_free(doc, floe_free);
}

void floe_json_doc_free_wiped(struct floe_json_doc *doc)
{
	doc_free(doc, floe_wipe_free);
}

struct floe_json *floe_json_root(struct floe_json_doc *doc)
{
	return doc ? doc->root : NULL;
}

void floe_json_set_root(struct floe_json_doc *doc, struct floe_json *v)
{
	doc->root = v;
}

struct floe_json *floe_json_new_value(struct floe_json_doc *d, enum floe_json_type t)
{
	struct floe_json *v = floe_json_arena_alloc(d, sizeof(*v));
	if (v) {
		memset(v, 0, sizeof(*v));
		v->type = (uint8_t)t;
	}
	return v;
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
	uint32_t h = floe_json_hash_key(name, nlen);
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
	return floe_json_new_value(doc, FLOE_JSON_NULL);
}

struct floe_json *floe_json_new_bool(struct floe_json_doc *doc, bool b)
{
	struct floe_json *v = floe_json_new_value(doc, FLOE_JSON_BOOL);
	if (v)
		v->b = b;
	return v;
}

struct floe_json *floe_json_new_int(struct floe_json_doc *doc, int64_t i)
{
	struct floe_json *v = floe_json_new_value(doc, FLOE_JSON_INT);
	if (v)
		v->u.i = i;
	return v;
}

static struct floe_json *new_text(struct floe_json_doc *doc, enum floe_json_type t, const char *s,
				  size_t len)
{
	struct floe_json *v = floe_json_new_value(doc, t);
	if (!v)
		return NULL;
	v->u.s.p = floe_json_arena_strndup(doc, s, len);
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
	return floe_json_new_value(doc, FLOE_JSON_ARRAY);
}

struct floe_json *floe_json_new_object(struct floe_json_doc *doc)
{
	return floe_json_new_value(doc, FLOE_JSON_OBJECT);
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
	void *n = floe_json_arena_alloc(doc, bytes);
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
	char *key = floe_json_arena_strndup(doc, name, nlen);
	if (!key)
		return FLOE_ENOMEM;
	void *items = obj->u.obj.m;
	int rc = grow(doc, &items, &obj->u.obj.cap, obj->u.obj.len, sizeof(*obj->u.obj.m));
	if (rc)
		return rc;
	obj->u.obj.m = items;
	obj->u.obj.m[obj->u.obj.len++] =
	    (struct member){key, nlen, floe_json_hash_key(key, nlen), v};
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
		c = floe_json_new_value(doc, FLOE_JSON_ARRAY);
		if (!c)
			return NULL;
		if (v->u.arr.len) {
			c->u.arr.v = floe_json_arena_alloc(doc, v->u.arr.len * sizeof(*c->u.arr.v));
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
		c = floe_json_new_value(doc, FLOE_JSON_OBJECT);
		if (!c)
			return NULL;
		if (v->u.obj.len) {
			c->u.obj.m = floe_json_arena_alloc(doc, v->u.obj.len * sizeof(*c->u.obj.m));
			if (!c->u.obj.m)
				return NULL;
		}
		for (size_t i = 0; i < v->u.obj.len; i++) {
			const struct member *src = &v->u.obj.m[i];
			struct member *dst = &c->u.obj.m[i];
			*dst = *src;
			dst->key = floe_json_arena_strndup(doc, src->key, src->klen);
			dst->val = floe_json_clone(doc, src->val);
			if (!dst->key || !dst->val)
				return NULL;
		}
		c->u.obj.len = c->u.obj.cap = v->u.obj.len;
		return c;
	}
	return NULL;
}

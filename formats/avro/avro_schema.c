/* Avro schemas: parsing the writer schema's JSON (primitives, records, enums, arrays,
 * maps, unions, fixed, named references with namespaces; logical types read as their
 * base type) into nodes in an arena, and the arena itself. */
#include "avro.h"
#include "avro_internal.h"

#include "formats/base/alloc.h"
#include "formats/base/error.h"
#include "formats/json/json.h"

#include <string.h>

#define MAX_DEPTH 64
#define CHUNK_BYTES 4096

/* ---- Arena: chunks from the budgeted allocator, released together. ---- */

void *floe_avro_arena_alloc(struct floe_avro_arena *ar, size_t n)
{
	const size_t al = alignof(max_align_t);
	if (n == 0)
		n = 1;
	if (n > SIZE_MAX - sizeof(struct floe_avro_chunk) - al) {
		ar->err = FLOE_ELIMIT;
		return NULL;
	}
	n = (n + al - 1) & ~(al - 1);
	struct floe_avro_chunk *c = ar->head;
	if (!c || c->cap - c->used < n) {
		size_t cap = n > CHUNK_BYTES ? n : CHUNK_BYTES, total;
		if (__builtin_add_overflow(ar->total, cap, &total) || total > ar->max) {
			ar->err = FLOE_ELIMIT;
			return NULL;
		}
		c = floe_malloc(ar->a, sizeof(*c) + cap);
		if (!c) {
			ar->err = FLOE_ENOMEM;
			return NULL;
		}
		c->cap = cap;
		c->used = 0;
		c->next = ar->head;
		ar->head = c;
		ar->total = total;
	}
	void *p = c->data + c->used;
	c->used += n;
	return p;
}

void floe_avro_arena_free(struct floe_avro_arena *ar)
{
	while (ar->head) {
		struct floe_avro_chunk *c = ar->head;
		ar->head = c->next;
		floe_free(ar->a, c);
	}
	ar->total = 0;
}

/* Keeps one default-sized chunk for the next record, so that small records cost no
 * allocation. */
void floe_avro_arena_reset(struct floe_avro_arena *ar)
{
	struct floe_avro_chunk *keep = NULL;
	while (ar->head) {
		struct floe_avro_chunk *c = ar->head;
		ar->head = c->next;
		if (!keep && c->cap == CHUNK_BYTES) {
			keep = c;
			continue;
		}
		floe_free(ar->a, c);
	}
	ar->total = 0;
	if (keep) {
		keep->used = 0;
		keep->next = NULL;
		ar->head = keep;
		ar->total = keep->cap;
	}
}

char *floe_avro_arena_strndup(struct floe_avro_arena *ar, const void *s, size_t len)
{
	if (len == SIZE_MAX) {
		ar->err = FLOE_ELIMIT;
		return NULL;
	}
	char *p = floe_avro_arena_alloc(ar, len + 1);
	if (!p)
		return NULL;
	if (len)
		memcpy(p, s, len);
	p[len] = 0;
	return p;
}

/* ---- Schemas. ---- */

enum floe_avro_type floe_avro_schema_type(const struct floe_avro_schema *s)
{
	return s ? s->type : FLOE_AVRO_NULL;
}

const char *floe_avro_schema_name(const struct floe_avro_schema *s) { return s ? s->name : NULL; }

size_t floe_avro_schema_count(const struct floe_avro_schema *s)
{
	return s && (s->type == FLOE_AVRO_RECORD || s->type == FLOE_AVRO_UNION) ? s->n : 0;
}

const struct floe_avro_schema *floe_avro_schema_at(const struct floe_avro_schema *s, size_t i)
{
	if (!s)
		return NULL;
	if (s->type == FLOE_AVRO_ARRAY || s->type == FLOE_AVRO_MAP)
		return s->kids[0];
	if ((s->type == FLOE_AVRO_RECORD || s->type == FLOE_AVRO_UNION) && i < s->n)
		return s->kids[i];
	return NULL;
}

const char *floe_avro_schema_field_name(const struct floe_avro_schema *s, size_t i)
{
	return s && s->type == FLOE_AVRO_RECORD && i < s->n ? s->names[i] : NULL;
}

bool floe_avro_schema_field_id(const struct floe_avro_schema *s, size_t i, int32_t *id)
{
	if (!s || s->type != FLOE_AVRO_RECORD || i >= s->n || !s->has_id[i])
		return false;
	*id = s->ids[i];
	return true;
}

long floe_avro_schema_field_index(const struct floe_avro_schema *s, const char *name)
{
	if (!s || s->type != FLOE_AVRO_RECORD || !name)
		return -1;
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->names[i], name) == 0)
			return (long)i;
	return -1;
}

struct schema_ctx {
	struct floe_avro_arena *ar;
	struct floe_avro_schema *named;
};

static const struct {
	const char *name;
	enum floe_avro_type type;
} primitives[] = {
	{"null", FLOE_AVRO_NULL},   {"boolean", FLOE_AVRO_BOOLEAN}, {"int", FLOE_AVRO_INT},
	{"long", FLOE_AVRO_LONG},   {"float", FLOE_AVRO_FLOAT},     {"double", FLOE_AVRO_DOUBLE},
	{"bytes", FLOE_AVRO_BYTES}, {"string", FLOE_AVRO_STRING},
};

static int primitive_type(const char *s, enum floe_avro_type *t)
{
	for (size_t i = 0; i < sizeof(primitives) / sizeof(primitives[0]); i++) {
		if (strcmp(s, primitives[i].name) == 0) {
			*t = primitives[i].type;
			return 1;
		}
	}
	return 0;
}

static struct floe_avro_schema *new_schema(struct schema_ctx *x, enum floe_avro_type t)
{
	struct floe_avro_schema *s = floe_avro_arena_alloc(x->ar, sizeof(*s));
	if (s) {
		memset(s, 0, sizeof(*s));
		s->type = t;
	}
	return s;
}

/* Full name per the spec: a name containing a dot is already full; otherwise it takes
 * the explicit namespace, else the enclosing one. */
static int full_name(struct schema_ctx *x, const char *name, const char *ns, const char **out)
{
	if (strchr(name, '.') || !ns || !*ns) {
		*out = name;
		return 0;
	}
	size_t nl = strlen(ns), ml = strlen(name);
	char *p = floe_avro_arena_alloc(x->ar, nl + ml + 2);
	if (!p)
		return FLOE_ENOMEM;
	memcpy(p, ns, nl);
	p[nl] = '.';
	memcpy(p + nl + 1, name, ml + 1);
	*out = p;
	return 0;
}

static struct floe_avro_schema *lookup(struct schema_ctx *x, const char *full)
{
	for (struct floe_avro_schema *s = x->named; s; s = s->next_named)
		if (strcmp(s->name, full) == 0)
			return s;
	return NULL;
}

static int parse_schema(struct schema_ctx *x, const struct floe_json *j, const char *ns, int depth,
			const struct floe_avro_schema **out);

static int parse_name_ref(struct schema_ctx *x, const char *name, const char *ns,
			  const struct floe_avro_schema **out)
{
	enum floe_avro_type t;
	if (primitive_type(name, &t)) {
		struct floe_avro_schema *s = new_schema(x, t);
		if (!s)
			return FLOE_ENOMEM;
		*out = s;
		return 0;
	}
	const char *full;
	int rc = full_name(x, name, ns, &full);
	if (rc)
		return rc;
	const struct floe_avro_schema *s = lookup(x, full);
	if (!s)
		s = lookup(x, name);
	if (!s)
		return FLOE_EFORMAT;
	*out = s;
	return 0;
}

static int register_named(struct schema_ctx *x, struct floe_avro_schema *s,
			  const struct floe_json *j, const char *ns, const char **own_ns)
{
	const char *name, *jns = NULL;
	if (floe_json_get_str(j, "name", &name) || !*name)
		return FLOE_EFORMAT;
	struct floe_json *nsv = floe_json_get(j, "namespace");
	if (nsv && floe_json_str(nsv, &jns, NULL) == 0)
		ns = jns;
	int rc = full_name(x, name, ns, &s->name);
	if (rc)
		return rc;
	if (lookup(x, s->name))
		return FLOE_EFORMAT; /* the spec forbids redefining a name */
	s->next_named = x->named;
	x->named = s;
	const char *dot = strrchr(s->name, '.');
	*own_ns = dot ? floe_avro_arena_strndup(x->ar, s->name, (size_t)(dot - s->name)) : "";
	return *own_ns ? 0 : FLOE_ENOMEM;
}

static int parse_record(struct schema_ctx *x, struct floe_avro_schema *s, const struct floe_json *j,
			const char *ns, int depth)
{
	const char *own_ns;
	int rc = register_named(x, s, j, ns, &own_ns);
	if (rc)
		return rc;
	const struct floe_json *fields = floe_json_get(j, "fields");
	if (!floe_json_is(fields, FLOE_JSON_ARRAY))
		return FLOE_EFORMAT;
	size_t n = floe_json_len(fields);
	s->n = n;
	s->kids = floe_avro_arena_alloc(x->ar, n * sizeof(*s->kids));
	s->names = floe_avro_arena_alloc(x->ar, n * sizeof(*s->names));
	s->ids = floe_avro_arena_alloc(x->ar, n * sizeof(*s->ids));
	s->has_id = floe_avro_arena_alloc(x->ar, n * sizeof(*s->has_id));
	if (!s->kids || !s->names || !s->ids || !s->has_id)
		return FLOE_ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct floe_json *f = floe_json_at(fields, i);
		const char *fname;
		if (floe_json_get_str(f, "name", &fname))
			return FLOE_EFORMAT;
		s->names[i] = fname;
		int64_t id;
		s->has_id[i] = floe_json_get_int(f, "field-id", &id) == 0 && id >= INT32_MIN &&
			       id <= INT32_MAX;
		s->ids[i] = s->has_id[i] ? (int32_t)id : 0;
		const struct floe_json *ft = floe_json_get(f, "type");
		if (!ft)
			return FLOE_EFORMAT;
		rc = parse_schema(x, ft, own_ns, depth + 1, &s->kids[i]);
		if (rc)
			return rc;
	}
	return 0;
}

static int parse_object(struct schema_ctx *x, const struct floe_json *j, const char *ns, int depth,
			const struct floe_avro_schema **out)
{
	const struct floe_json *tv = floe_json_get(j, "type");
	const char *type;
	if (floe_json_is(tv, FLOE_JSON_OBJECT) || floe_json_is(tv, FLOE_JSON_ARRAY))
		return parse_schema(x, tv, ns, depth + 1, out);
	if (floe_json_str(tv, &type, NULL))
		return FLOE_EFORMAT;
	enum floe_avro_type t;
	struct floe_avro_schema *s;
	const char *own_ns;
	int rc;
	if (primitive_type(type, &t)) {
		/* Logical types (date, timestamp-micros, ...) read as their underlying type. */
		s = new_schema(x, t);
		if (!s)
			return FLOE_ENOMEM;
		*out = s;
		return 0;
	}
	if (strcmp(type, "record") == 0 || strcmp(type, "error") == 0) {
		if (!(s = new_schema(x, FLOE_AVRO_RECORD)))
			return FLOE_ENOMEM;
		rc = parse_record(x, s, j, ns, depth);
	} else if (strcmp(type, "enum") == 0) {
		if (!(s = new_schema(x, FLOE_AVRO_ENUM)))
			return FLOE_ENOMEM;
		rc = register_named(x, s, j, ns, &own_ns);
		const struct floe_json *sym = floe_json_get(j, "symbols");
		if (!rc && !floe_json_is(sym, FLOE_JSON_ARRAY))
			rc = FLOE_EFORMAT;
		if (!rc) {
			s->n = floe_json_len(sym);
			s->names = floe_avro_arena_alloc(x->ar, s->n * sizeof(*s->names));
			if (!s->names)
				rc = FLOE_ENOMEM;
		}
		for (size_t i = 0; !rc && i < s->n; i++)
			if (floe_json_str(floe_json_at(sym, i), &s->names[i], NULL))
				rc = FLOE_EFORMAT;
	} else if (strcmp(type, "fixed") == 0) {
		if (!(s = new_schema(x, FLOE_AVRO_FIXED)))
			return FLOE_ENOMEM;
		rc = register_named(x, s, j, ns, &own_ns);
		int64_t size;
		if (!rc && (floe_json_get_int(j, "size", &size) || size < 0 || size > INT32_MAX))
			rc = FLOE_EFORMAT;
		if (!rc)
			s->n = (size_t)size;
	} else if (strcmp(type, "array") == 0 || strcmp(type, "map") == 0) {
		bool arr = type[0] == 'a';
		if (!(s = new_schema(x, arr ? FLOE_AVRO_ARRAY : FLOE_AVRO_MAP)))
			return FLOE_ENOMEM;
		s->kids = floe_avro_arena_alloc(x->ar, sizeof(*s->kids));
		const struct floe_json *it = floe_json_get(j, arr ? "items" : "values");
		if (!s->kids)
			rc = FLOE_ENOMEM;
		else if (!it)
			rc = FLOE_EFORMAT;
		else
			rc = parse_schema(x, it, ns, depth + 1, &s->kids[0]);
	} else {
		return parse_name_ref(x, type, ns, out);
	}
	if (rc)
		return rc;
	*out = s;
	return 0;
}

static int parse_schema(struct schema_ctx *x, const struct floe_json *j, const char *ns, int depth,
			const struct floe_avro_schema **out)
{
	if (depth > MAX_DEPTH)
		return FLOE_ELIMIT;
	const char *str;
	switch (floe_json_type(j)) {
	case FLOE_JSON_STRING:
		floe_json_str(j, &str, NULL);
		return parse_name_ref(x, str, ns, out);
	case FLOE_JSON_OBJECT:
		return parse_object(x, j, ns, depth, out);
	case FLOE_JSON_ARRAY: {
		struct floe_avro_schema *s = new_schema(x, FLOE_AVRO_UNION);
		if (!s)
			return FLOE_ENOMEM;
		s->n = floe_json_len(j);
		s->kids = floe_avro_arena_alloc(x->ar, s->n * sizeof(*s->kids));
		if (!s->kids)
			return FLOE_ENOMEM;
		for (size_t i = 0; i < s->n; i++) {
			int rc = parse_schema(x, floe_json_at(j, i), ns, depth + 1, &s->kids[i]);
			if (rc)
				return rc;
		}
		*out = s;
		return 0;
	}
	default:
		return FLOE_EFORMAT;
	}
}

int floe_avro_schema_parse(struct floe_avro_arena *ar, const struct floe_json *root,
			  const struct floe_avro_schema **out)
{
	struct schema_ctx x = {.ar = ar, .named = NULL};
	return parse_schema(&x, root, "", 0, out);
}

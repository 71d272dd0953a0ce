/* Schema evolution: plan a writer's columns against the current schema, then add the
 * evolved schema as a new metadata version (see schema.h for the rules). */
#include "formats/iceberg/schema.h"

#include "metadata_impl.h"

#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"
#include "formats/json/json.h"

#include <stdio.h>
#include <string.h>

/* Nested types are walked to this depth for ids; deeper ones are refused at parse. */
#define MAX_DEPTH 32
/* A schema's fields serialise to less than this (tables of thousands of columns do). */
#define FIELDS_MAX_BYTES ((size_t)64 << 20)

static const char *const PRIMITIVES[] = {
    "boolean", "int",	      "long",	       "float",		 "double",	  "date",
    "time",    "timestamp",   "timestamptz", "timestamp_ns", "timestamptz_ns", "string",
    "uuid",    "binary",
};

/* decimal(P,S): 1 <= P <= 38, 0 <= S <= P. Fills p and s. */
static bool parse_decimal(const char *t, int *p, int *s)
{
	char tail;
	return sscanf(t, "decimal(%d,%d%c", p, s, &tail) == 3 && tail == ')' &&
	       strchr(t, ')') == t + strlen(t) - 1 && *p >= 1 && *p <= 38 && *s >= 0 && *s <= *p;
}

bool floe_ice_type_valid(const char *type)
{
	int p, s;
	unsigned len;
	char tail;
	if (!type || strlen(type) >= sizeof(((struct floe_ice_col_plan *)0)->type))
		return false;
	for (size_t i = 0; i < sizeof(PRIMITIVES) / sizeof(PRIMITIVES[0]); i++)
		if (strcmp(type, PRIMITIVES[i]) == 0)
			return true;
	if (strncmp(type, "fixed[", 6) == 0)
		return sscanf(type, "fixed[%u%c", &len, &tail) == 2 && tail == ']' && len > 0 &&
		       type[strlen(type) - 1] == ']';
	return parse_decimal(type, &p, &s);
}

bool floe_ice_type_promotes(const char *from, const char *to)
{
	int p1, s1, p2, s2;
	if (strcmp(from, to) == 0)
		return true;
	if (strcmp(from, "int") == 0)
		return strcmp(to, "long") == 0;
	if (strcmp(from, "float") == 0)
		return strcmp(to, "double") == 0;
	return parse_decimal(from, &p1, &s1) && parse_decimal(to, &p2, &s2) && s1 == s2 && p2 > p1;
}

/* ---- the table's fields ---- */

static const struct floe_json *table_fields(const struct floe_ice_meta *m)
{
	return floe_json_get(floe_ice_meta_current_schema(m), "fields");
}

static const struct floe_json *field_named(const struct floe_json *fields, const char *name)
{
	for (size_t i = 0; i < floe_json_len(fields); i++) {
		const struct floe_json *f = floe_json_at(fields, i);
		const char *n;
		if (floe_json_get_str(f, "name", &n) == 0 && strcmp(n, name) == 0)
			return f;
	}
	return NULL;
}

static int32_t field_id(const struct floe_json *f)
{
	int64_t id = 0;
	floe_json_get_int(f, "id", &id);
	return (int32_t)id;
}

/* The largest id under a type (a string for primitives, an object for nested types). */
static int64_t max_id_in(const struct floe_json *type, int depth)
{
	int64_t max = 0, x;
	if (!floe_json_is(type, FLOE_JSON_OBJECT) || depth > MAX_DEPTH)
		return 0;
	static const char *const IDS[] = {"key-id", "value-id", "element-id"};
	static const char *const SUB[] = {"key", "value", "element"};
	for (size_t i = 0; i < 3; i++) {
		if (floe_json_get_int(type, IDS[i], &x) == 0 && x > max)
			max = x;
		if ((x = max_id_in(floe_json_get(type, SUB[i]), depth + 1)) > max)
			max = x;
	}
	const struct floe_json *fields = floe_json_get(type, "fields");
	for (size_t i = 0; i < floe_json_len(fields); i++) {
		const struct floe_json *f = floe_json_at(fields, i);
		if (floe_json_get_int(f, "id", &x) == 0 && x > max)
			max = x;
		if ((x = max_id_in(floe_json_get(f, "type"), depth + 1)) > max)
			max = x;
	}
	return max;
}

/* The highest field id the table has ever used: last-column-id, or higher if a schema
 * (current or old) holds one above it. Ids are never reused, dropped fields' included. */
static int64_t last_column_id(const struct floe_ice_meta *m)
{
	const struct floe_json *root = m->v.root, *schemas = floe_json_get(root, "schemas");
	int64_t last = 0, x;
	floe_json_get_int(root, "last-column-id", &last);
	for (size_t i = 0; i < floe_json_len(schemas); i++)
		if ((x = max_id_in(floe_json_at(schemas, i), 0)) > last)
			last = x;
	if ((x = max_id_in(floe_json_get(root, "schema"), 0)) > last)
		last = x;
	return last;
}

/* Whether field id appears anywhere in type (a schema or a nested type). */
static bool has_id_in(const struct floe_json *type, int64_t id, int depth)
{
	static const char *const IDS[] = {"element-id", "key-id", "value-id"};
	static const char *const SUB[] = {"element", "key", "value"};
	int64_t x;
	if (!type || depth > 32)
		return depth > 32; /* too deep to tell: taken */
	for (size_t i = 0; i < 3; i++)
		if ((floe_json_get_int(type, IDS[i], &x) == 0 && x == id) ||
		    has_id_in(floe_json_get(type, SUB[i]), id, depth + 1))
			return true;
	const struct floe_json *fields = floe_json_get(type, "fields");
	for (size_t i = 0; i < floe_json_len(fields); i++) {
		const struct floe_json *f = floe_json_at(fields, i);
		if ((floe_json_get_int(f, "id", &x) == 0 && x == id) ||
		    has_id_in(floe_json_get(f, "type"), id, depth + 1))
			return true;
	}
	return false;
}

/* Whether a schema of the table, current or old, holds field id. */
static bool id_ever_used(const struct floe_ice_meta *m, int64_t id)
{
	const struct floe_json *root = m->v.root, *schemas = floe_json_get(root, "schemas");
	for (size_t i = 0; i < floe_json_len(schemas); i++)
		if (has_id_in(floe_json_at(schemas, i), id, 0))
			return true;
	return has_id_in(floe_json_get(root, "schema"), id, 0);
}

/* ---- planning ---- */

static int check_columns(const struct floe_ice_column *cols, size_t n, struct floe_err *err)
{
	for (size_t i = 0; i < n; i++) {
		const struct floe_ice_column *c = &cols[i];
		if (!c->name || !*c->name)
			return floe_err_set(err, FLOE_EINVAL, "column %zu has no name", i + 1);
		if (!floe_ice_type_valid(c->type))
			return floe_err_set(err, FLOE_EINVAL, "column '%s': '%s' is not an Iceberg type",
					    c->name, c->type ? c->type : "");
		if (c->renamed_from && strcmp(c->renamed_from, c->name) == 0)
			return floe_err_set(err, FLOE_EINVAL, "column '%s' is renamed from itself",
					    c->name);
		for (size_t j = 0; j < n; j++) {
			if (j < i && strcmp(cols[j].name, c->name) == 0)
				return floe_err_set(err, FLOE_EINVAL, "column '%s' is listed twice",
						    c->name);
			if (c->renamed_from && strcmp(cols[j].name, c->renamed_from) == 0)
				return floe_err_set(err, FLOE_EINVAL,
						    "column '%s' is renamed from '%s', which is "
						    "also listed as a column",
						    c->name, c->renamed_from);
		}
	}
	return 0;
}

/* The table's top-level field ids must be distinct and positive: columns are matched to
 * fields, and written, by id. */
static int check_table_ids(const struct floe_json *fields, struct floe_err *err)
{
	for (size_t i = 0; i < floe_json_len(fields); i++) {
		int64_t id = 0, other = 0;
		if (floe_json_get_int(floe_json_at(fields, i), "id", &id) || id <= 0 || id > INT32_MAX)
			return floe_err_set(err, FLOE_EFORMAT,
					    "the table's schema has a field without a valid id");
		for (size_t j = 0; j < i; j++)
			if (floe_json_get_int(floe_json_at(fields, j), "id", &other) == 0 &&
			    other == id)
				return floe_err_set(err, FLOE_EFORMAT,
						    "the table's schema has field id %lld twice",
						    (long long)id);
	}
	return 0;
}

/* The column's fate against table field f (found by name or by its old name). */
static int plan_existing(const struct floe_ice_column *c, const struct floe_json *f, bool renamed,
			 struct floe_ice_col_plan *p, struct floe_err *err)
{
	const char *tt = NULL;
	p->id = field_id(f);
	p->renamed = renamed;
	if (floe_json_get_str(f, "type", &tt))
		return floe_err_set(err, FLOE_ESCHEMA,
				    "column '%s': the table's field %d is a nested type; floe "
				    "writes %s",
				    c->name, p->id, c->type);
	if (strcmp(tt, c->type) == 0) {
		p->fate = FLOE_ICE_COL_SAME;
		snprintf(p->type, sizeof(p->type), "%s", c->type);
	} else if (floe_ice_type_promotes(tt, c->type)) {
		p->fate = FLOE_ICE_COL_PROMOTED;
		snprintf(p->type, sizeof(p->type), "%s", c->type);
	} else if (floe_ice_type_promotes(c->type, tt) && strlen(tt) < sizeof(p->type)) {
		p->fate = FLOE_ICE_COL_WIDER;
		snprintf(p->type, sizeof(p->type), "%s", tt);
	} else {
		return floe_err_set(err, FLOE_ESCHEMA,
				    "column '%s': the table has field %d '%s' as %s; floe writes %s "
				    "(Iceberg only widens int to long, float to double and a "
				    "decimal's precision)",
				    c->name, p->id, renamed ? c->renamed_from : c->name, tt, c->type);
	}
	return 0;
}

/* Whether table field id is written by one of the planned columns. */
static bool written(const struct floe_ice_col_plan *plan, size_t n, int32_t id)
{
	for (size_t i = 0; i < n; i++)
		if (plan[i].id == id)
			return true;
	return false;
}

int floe_ice_schema_plan(const struct floe_ice_meta *m, const struct floe_ice_column *cols,
			 size_t n, struct floe_ice_col_plan *plan, bool *changed,
			 struct floe_err *err)
{
	const struct floe_json *fields = table_fields(m);
	int64_t next = last_column_id(m);
	int rc;
	*changed = false;
	if ((rc = check_columns(cols, n, err)) || (rc = check_table_ids(fields, err)))
		return rc;
	for (size_t i = 0; i < n; i++) {
		const struct floe_ice_column *c = &cols[i];
		const struct floe_json *f = field_named(fields, c->name);
		bool renamed = false;
		if (!f && c->renamed_from && (f = field_named(fields, c->renamed_from)))
			renamed = true;
		if (f) {
			if ((rc = plan_existing(c, f, renamed, &plan[i], err)))
				return rc;
		} else {
			/* Files already written under an id keep it when the table never gave
			 * it out: a schema another writer added meanwhile is merged around it. */
			if (c->id > 0 && !id_ever_used(m, c->id) && !written(plan, i, c->id)) {
				plan[i].id = c->id;
				if (c->id > next)
					next = c->id;
			} else if (next >= INT32_MAX) {
				return floe_err_set(err, FLOE_ELIMIT, "the table has no field id left");
			} else {
				plan[i].id = (int32_t)++next;
			}
			plan[i].renamed = false;
			plan[i].fate = FLOE_ICE_COL_ADDED;
			snprintf(plan[i].type, sizeof(plan[i].type), "%s", c->type);
		}
		if (renamed || plan[i].fate == FLOE_ICE_COL_ADDED ||
		    plan[i].fate == FLOE_ICE_COL_PROMOTED)
			*changed = true;
	}
	/* A required field this writer does not write must become optional. */
	for (size_t i = 0; i < floe_json_len(fields); i++) {
		const struct floe_json *f = floe_json_at(fields, i);
		bool req = false;
		floe_json_bool(floe_json_get(f, "required"), &req);
		if (req && !written(plan, n, field_id(f)))
			*changed = true;
	}
	return 0;
}

/* ---- applying ---- */

static int set_str(struct floe_json_doc *d, struct floe_json *o, const char *k, const char *v)
{
	return floe_json_set(d, o, k, floe_json_new_str(d, v, strlen(v)));
}

/* Table field f as the new schema has it: renamed, promoted or relaxed where planned. */
static struct floe_json *evolved_field(struct floe_json_doc *d, const struct floe_json *f,
				       const struct floe_ice_column *cols,
				       const struct floe_ice_col_plan *plan, size_t n)
{
	struct floe_json *o = floe_ice_json_copy_object(d, f);
	int32_t id = field_id(f);
	size_t i = 0;
	if (!o)
		return NULL;
	while (i < n && plan[i].id != id)
		i++;
	if (i == n)
		return floe_json_set(d, o, "required", floe_json_new_bool(d, false)) ? NULL : o;
	if ((plan[i].renamed && set_str(d, o, "name", cols[i].name)) ||
	    (plan[i].fate == FLOE_ICE_COL_PROMOTED && set_str(d, o, "type", plan[i].type)))
		return NULL;
	return o;
}

static struct floe_json *added_field(struct floe_json_doc *d, const struct floe_ice_column *c,
				     const struct floe_ice_col_plan *p)
{
	struct floe_json *o = floe_json_new_object(d);
	if (!o || floe_json_set(d, o, "id", floe_json_new_int(d, p->id)) ||
	    set_str(d, o, "name", c->name) ||
	    floe_json_set(d, o, "required", floe_json_new_bool(d, false)) ||
	    set_str(d, o, "type", p->type))
		return NULL;
	return o;
}

static struct floe_json *evolved_fields(struct floe_json_doc *d, const struct floe_json *fields,
					const struct floe_ice_column *cols,
					const struct floe_ice_col_plan *plan, size_t n)
{
	struct floe_json *out = floe_json_new_array(d), *f;
	if (!out)
		return NULL;
	for (size_t i = 0; i < floe_json_len(fields); i++)
		if (!(f = evolved_field(d, floe_json_at(fields, i), cols, plan, n)) ||
		    floe_json_push(d, out, f))
			return NULL;
	for (size_t i = 0; i < n; i++)
		if (plan[i].fate == FLOE_ICE_COL_ADDED &&
		    (!(f = added_field(d, &cols[i], &plan[i])) || floe_json_push(d, out, f)))
			return NULL;
	return out;
}

/* Whether two fields arrays serialise alike (ids, names, requiredness, types). */
static int same_fields(struct floe_alloc *a, const struct floe_json *x, const struct floe_json *y,
		       bool *same)
{
	struct floe_buf bx, by;
	int rc;
	floe_buf_init(&bx, a, FIELDS_MAX_BYTES);
	floe_buf_init(&by, a, FIELDS_MAX_BYTES);
	if (!(rc = floe_json_write(x, &bx)) && !(rc = floe_json_write(y, &by)))
		*same = bx.len == by.len && memcmp(bx.data, by.data, bx.len) == 0;
	floe_buf_fini(&bx);
	floe_buf_fini(&by);
	return rc;
}

/* The id of a schema in schemas whose fields equal fields (-1: none), and the highest id. */
static int find_schema(struct floe_alloc *a, const struct floe_json *schemas,
		       const struct floe_json *fields, int64_t *found, int64_t *max)
{
	int rc;
	*found = -1;
	*max = -1;
	for (size_t i = 0; i < floe_json_len(schemas); i++) {
		const struct floe_json *s = floe_json_at(schemas, i);
		int64_t id = 0;
		bool same = false;
		floe_json_get_int(s, "schema-id", &id);
		if (id > *max)
			*max = id;
		if ((rc = same_fields(a, floe_json_get(s, "fields"), fields, &same)))
			return rc;
		if (same && *found < 0)
			*found = id;
	}
	/* Reused only if its id is unique: the current schema is looked up by id. */
	for (size_t i = 0, seen = 0; *found >= 0 && i < floe_json_len(schemas); i++) {
		int64_t id = -1;
		floe_json_get_int(floe_json_at(schemas, i), "schema-id", &id);
		if (id == *found && ++seen > 1)
			*found = -1;
	}
	return 0;
}

/* The new schema object: identifier fields kept only while they stay required. */
static struct floe_json *schema_object(struct floe_json_doc *d, const struct floe_json *cur,
				       struct floe_json *fields, int64_t id)
{
	struct floe_json *s = floe_json_new_object(d);
	const struct floe_json *ident = floe_json_get(cur, "identifier-field-ids");
	if (!s || set_str(d, s, "type", "struct") ||
	    floe_json_set(d, s, "schema-id", floe_json_new_int(d, id)) ||
	    floe_json_set(d, s, "fields", fields))
		return NULL;
	for (size_t i = 0; i < floe_json_len(ident); i++) {
		int64_t fid;
		const struct floe_json *f = NULL;
		bool req = false;
		if (floe_json_int(floe_json_at(ident, i), &fid) == 0)
			for (size_t k = 0; k < floe_json_len(fields) && !f; k++)
				if (field_id(floe_json_at(fields, k)) == fid)
					f = floe_json_at(fields, k);
		floe_json_bool(floe_json_get(f, "required"), &req);
		if (!req)
			return s;
	}
	if (ident && floe_json_set(d, s, "identifier-field-ids", floe_json_clone(d, ident)))
		return NULL;
	return s;
}

static int apply(struct floe_ice_meta *m, const struct floe_ice_column *cols,
		 const struct floe_ice_col_plan *plan, size_t n, const char *prev, int64_t now_ms,
		 size_t max_log)
{
	struct floe_json_doc *d = m->doc;
	const struct floe_json *old = m->v.root, *schemas = floe_json_get(old, "schemas");
	struct floe_json *root, *fields, *list, *schema = NULL;
	int64_t id, max, last = last_column_id(m);
	int rc;
	if (!(fields = evolved_fields(d, table_fields(m), cols, plan, n)))
		return FLOE_ENOMEM;
	if ((rc = find_schema(m->a, schemas, fields, &id, &max)))
		return rc;
	for (size_t i = 0; i < n; i++)
		if (plan[i].id > last)
			last = plan[i].id;
	if (!(root = floe_ice_json_copy_object(d, old)) ||
	    !(list = floe_ice_json_copy_array(d, floe_json_is(schemas, FLOE_JSON_ARRAY) ? schemas : NULL, 0)))
		return FLOE_ENOMEM;
	if (id < 0) {
		id = max < m->v.current_schema_id ? m->v.current_schema_id + 1 : max + 1;
		if (!(schema = schema_object(d, m->v.schema, fields, id)) ||
		    floe_json_push(d, list, schema))
			return FLOE_ENOMEM;
	}
	if ((rc = floe_json_set(d, root, "current-schema-id", floe_json_new_int(d, id))) ||
	    (rc = floe_json_set(d, root, "schemas", list)) ||
	    (rc = floe_json_set(d, root, "last-column-id", floe_json_new_int(d, last))))
		return rc;
	/* A v1 document's single "schema" follows the current one. */
	if (schema && floe_json_get(old, "schema") &&
	    (rc = floe_json_set(d, root, "schema", schema)))
		return rc;
	if (now_ms < m->v.last_updated_ms)
		now_ms = m->v.last_updated_ms;
	return floe_ice_meta_set_new_root(m, root, prev, now_ms, max_log ? max_log : 1);
}

int floe_ice_meta_evolve_schema(struct floe_ice_meta *m, const struct floe_ice_column *cols,
				size_t n, struct floe_ice_col_plan *plan, bool *changed,
				const char *prev_metadata_location, int64_t now_ms,
				size_t max_log, struct floe_err *err)
{
	struct floe_ice_col_plan *p = plan;
	bool ch = false;
	int rc;
	if (!p && n && !(p = floe_calloc(m->a, n, sizeof(*p))))
		return FLOE_ENOMEM;
	rc = floe_ice_schema_plan(m, cols, n, p, &ch, err);
	if (rc == 0 && ch && (rc = apply(m, cols, p, n, prev_metadata_location, now_ms, max_log)))
		floe_err_set(err, rc, "the evolved schema could not be built: %s",
			     floe_strerror(rc));
	if (changed)
		*changed = ch && rc == 0;
	if (p != plan)
		floe_free(m->a, p);
	return rc;
}

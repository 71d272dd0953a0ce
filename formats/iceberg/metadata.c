/* Iceberg table metadata over the JSON DOM. The document is the model: accessors read a
 * validated view of it, and add_snapshot builds a new top-level object (sharing every
 * untouched member) that replaces the root only once it is complete and valid, so a
 * failed call leaves the metadata exactly as it was. */
#include "metadata.h"

#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"
#include "formats/json/json.h"

#include <string.h>

/* What floe reads from the document, checked once per root. */
struct view {
	struct floe_json *root;
	int format_version;
	const char *uuid; /* NULL in v1 tables without one */
	const char *location;
	int64_t last_seq;
	int64_t last_updated_ms;
	int64_t current_snapshot_id; /* -1: none */
	int32_t current_schema_id;
	int32_t default_spec_id;
	struct floe_json *schema;      /* object */
	struct floe_json *spec_fields; /* array */
	struct floe_json *snapshots;   /* array, or NULL when absent */
};

struct floe_ice_meta {
	struct floe_alloc *a; /* borrowed */
	struct floe_json_doc *doc;
	struct view v;
};

/* ---- reading and validation ---- */

static bool is_null_or_absent(const struct floe_json *v)
{
	return !v || floe_json_is(v, FLOE_JSON_NULL);
}

static int get_int32(const struct floe_json *obj, const char *name, int32_t *out)
{
	int64_t i;
	int rc = floe_json_get_int(obj, name, &i);
	if (rc)
		return rc == FLOE_ENOTFOUND ? rc : FLOE_EFORMAT;
	if (i < INT32_MIN || i > INT32_MAX)
		return FLOE_EFORMAT;
	*out = (int32_t)i;
	return 0;
}

/* An optional int64 member: absent or null gives dflt; any other non-integer is an error. */
static int get_opt_int(const struct floe_json *obj, const char *name, int64_t dflt, int64_t *out)
{
	const struct floe_json *v = floe_json_get(obj, name);
	if (is_null_or_absent(v)) {
		*out = dflt;
		return 0;
	}
	return floe_json_int(v, out) ? FLOE_EFORMAT : 0;
}

static int req_int(const struct floe_json *obj, const char *name, int64_t *out)
{
	return floe_json_get_int(obj, name, out) ? FLOE_EFORMAT : 0;
}

static int check_schema(const struct floe_json *schema)
{
	const struct floe_json *fields = floe_json_get(schema, "fields");
	if (!floe_json_is(schema, FLOE_JSON_OBJECT) || !floe_json_is(fields, FLOE_JSON_ARRAY))
		return FLOE_EFORMAT;
	for (size_t i = 0; i < floe_json_len(fields); i++) {
		const struct floe_json *f = floe_json_at(fields, i), *t = floe_json_get(f, "type");
		int32_t id;
		const char *s;
		bool req;
		if (get_int32(f, "id", &id) || floe_json_get_str(f, "name", &s) ||
		    floe_json_bool(floe_json_get(f, "required"), &req))
			return FLOE_EFORMAT;
		if (!floe_json_is(t, FLOE_JSON_STRING) && floe_json_get_str(t, "type", &s))
			return FLOE_EFORMAT;
	}
	return 0;
}

/* A summary is a map of strings (Java reads it as Map<String, String>). */
static int check_snapshot(const struct floe_json *s, int version)
{
	int64_t i;
	const char *str;
	const struct floe_json *sum = floe_json_get(s, "summary");
	if (!floe_json_is(s, FLOE_JSON_OBJECT) || req_int(s, "snapshot-id", &i) ||
	    req_int(s, "timestamp-ms", &i) || get_opt_int(s, "parent-snapshot-id", -1, &i) ||
	    get_opt_int(s, "schema-id", 0, &i))
		return FLOE_EFORMAT;
	if (version >= 2) {
		if (req_int(s, "sequence-number", &i) ||
		    floe_json_get_str(s, "manifest-list", &str) || !sum)
			return FLOE_EFORMAT;
	} else {
		/* v1 snapshots may list manifests inline instead of a manifest list. */
		const struct floe_json *ml = floe_json_get(s, "manifest-list");
		if (get_opt_int(s, "sequence-number", 0, &i) ||
		    (ml && floe_json_str(ml, &str, NULL)))
			return FLOE_EFORMAT;
	}
	if (sum) {
		if (!floe_json_is(sum, FLOE_JSON_OBJECT))
			return FLOE_EFORMAT;
		for (size_t k = 0; k < floe_json_len(sum); k++)
			if (floe_json_str(floe_json_at(sum, k), &str, NULL))
				return FLOE_EFORMAT;
	}
	return 0;
}

/* Finds the element of list whose member key equals id. */
static struct floe_json *find_by_id(const struct floe_json *list, const char *key, int64_t id)
{
	for (size_t i = 0; i < floe_json_len(list); i++) {
		struct floe_json *e = floe_json_at(list, i);
		int64_t x;
		if (floe_json_get_int(e, key, &x) == 0 && x == id)
			return e;
	}
	return NULL;
}

static int index_schema(struct view *v, const struct floe_json *root)
{
	const struct floe_json *schemas = floe_json_get(root, "schemas");
	int rc;
	if (schemas) {
		if (!floe_json_is(schemas, FLOE_JSON_ARRAY))
			return FLOE_EFORMAT;
		rc = get_int32(root, "current-schema-id", &v->current_schema_id);
		if (rc == FLOE_ENOTFOUND && v->format_version == 1) {
			/* Early v1 writers: the single "schema" is current. */
			v->schema = floe_json_get(root, "schema");
			if (!v->schema && floe_json_len(schemas) == 1)
				v->schema = floe_json_at(schemas, 0);
			v->current_schema_id = 0;
			if (floe_json_get(v->schema, "schema-id") &&
			    get_int32(v->schema, "schema-id", &v->current_schema_id))
				return FLOE_EFORMAT;
		} else if (rc) {
			return FLOE_EFORMAT;
		} else {
			v->schema = find_by_id(schemas, "schema-id", v->current_schema_id);
		}
	} else if (v->format_version == 1) {
		v->schema = floe_json_get(root, "schema");
		v->current_schema_id = 0;
		if (floe_json_get(v->schema, "schema-id") &&
		    get_int32(v->schema, "schema-id", &v->current_schema_id))
			return FLOE_EFORMAT;
	}
	return v->schema ? check_schema(v->schema) : FLOE_EFORMAT;
}

static int index_spec(struct view *v, const struct floe_json *root)
{
	const struct floe_json *specs = floe_json_get(root, "partition-specs");
	if (specs) {
		int rc = get_int32(root, "default-spec-id", &v->default_spec_id);
		if (rc == FLOE_ENOTFOUND && v->format_version == 1)
			v->default_spec_id = 0;
		else if (rc)
			return FLOE_EFORMAT;
		if (!floe_json_is(specs, FLOE_JSON_ARRAY))
			return FLOE_EFORMAT;
		v->spec_fields =
		    floe_json_get(find_by_id(specs, "spec-id", v->default_spec_id), "fields");
	} else if (v->format_version == 1) {
		/* v1's "partition-spec" is the fields array of spec 0. */
		v->default_spec_id = 0;
		v->spec_fields = floe_json_get(root, "partition-spec");
	}
	return floe_json_is(v->spec_fields, FLOE_JSON_ARRAY) ? 0 : FLOE_EFORMAT;
}

/* Fills v from root, or fails with FLOE_EFORMAT / FLOE_EUNSUPPORTED. */
static int index_root(struct view *v, struct floe_json *root)
{
	int64_t i;
	int rc;
	memset(v, 0, sizeof(*v));
	v->root = root;
	if (!floe_json_is(root, FLOE_JSON_OBJECT) || req_int(root, "format-version", &i))
		return FLOE_EFORMAT;
	if (i > 2)
		return FLOE_EUNSUPPORTED;
	if (i < 1)
		return FLOE_EFORMAT;
	v->format_version = (int)i;
	const bool v2 = i >= 2;

	const struct floe_json *uuid = floe_json_get(root, "table-uuid");
	if ((v2 || uuid) && floe_json_str(uuid, &v->uuid, NULL))
		return FLOE_EFORMAT;
	if (floe_json_get_str(root, "location", &v->location) ||
	    req_int(root, "last-updated-ms", &v->last_updated_ms) ||
	    req_int(root, "last-column-id", &i))
		return FLOE_EFORMAT;
	if (v2 ? req_int(root, "last-sequence-number", &v->last_seq)
	       : get_opt_int(root, "last-sequence-number", 0, &v->last_seq))
		return FLOE_EFORMAT;
	if (v2 &&
	    (req_int(root, "last-partition-id", &i) || req_int(root, "default-sort-order-id", &i) ||
	     !floe_json_is(floe_json_get(root, "sort-orders"), FLOE_JSON_ARRAY)))
		return FLOE_EFORMAT;
	if ((rc = index_schema(v, root)) || (rc = index_spec(v, root)))
		return rc;

	const struct floe_json *props = floe_json_get(root, "properties");
	if (props && !floe_json_is(props, FLOE_JSON_OBJECT))
		return FLOE_EFORMAT;
	const struct floe_json *refs = floe_json_get(root, "refs");
	if (refs && !floe_json_is(refs, FLOE_JSON_OBJECT))
		return FLOE_EFORMAT;

	v->snapshots = floe_json_get(root, "snapshots");
	if (v->snapshots && !floe_json_is(v->snapshots, FLOE_JSON_ARRAY))
		return FLOE_EFORMAT;
	for (size_t k = 0; k < floe_json_len(v->snapshots); k++)
		if (check_snapshot(floe_json_at(v->snapshots, k), v->format_version))
			return FLOE_EFORMAT;
	/* Java writes -1 (v1/v2) or null (v3) for "no snapshot", and checks that any other
	 * value names a snapshot of the table. */
	if (get_opt_int(root, "current-snapshot-id", -1, &v->current_snapshot_id))
		return FLOE_EFORMAT;
	if (v->current_snapshot_id < 0)
		v->current_snapshot_id = -1;
	else if (!find_by_id(v->snapshots, "snapshot-id", v->current_snapshot_id))
		return FLOE_EFORMAT;
	return 0;
}

int floe_ice_meta_parse(struct floe_alloc *a, const char *json, size_t len,
			struct floe_ice_meta **out)
{
	struct floe_ice_meta *m = floe_calloc(a, 1, sizeof(*m));
	int rc;
	*out = NULL;
	if (!m)
		return FLOE_ENOMEM;
	m->a = a;
	if ((rc = floe_json_parse(a, json, len, 0, &m->doc, NULL)))
		goto err;
	if ((rc = index_root(&m->v, floe_json_root(m->doc))))
		goto err;
	*out = m;
	return 0;
err:
	floe_ice_meta_free(m);
	return rc;
}

void floe_ice_meta_free(struct floe_ice_meta *m)
{
	if (!m)
		return;
	floe_json_doc_free(m->doc);
	floe_free(m->a, m);
}

int floe_ice_meta_write(const struct floe_ice_meta *m, struct floe_buf *out)
{
	return floe_json_write(m->v.root, out);
}

/* ---- accessors ---- */

int floe_ice_meta_format_version(const struct floe_ice_meta *m)
{
	return m->v.format_version;
}
const char *floe_ice_meta_uuid(const struct floe_ice_meta *m)
{
	return m->v.uuid;
}
const char *floe_ice_meta_location(const struct floe_ice_meta *m)
{
	return m->v.location;
}
int64_t floe_ice_meta_last_sequence(const struct floe_ice_meta *m)
{
	return m->v.last_seq;
}
int64_t floe_ice_meta_last_updated_ms(const struct floe_ice_meta *m)
{
	return m->v.last_updated_ms;
}
int64_t floe_ice_meta_current_snapshot_id(const struct floe_ice_meta *m)
{
	return m->v.current_snapshot_id;
}
int32_t floe_ice_meta_current_schema_id(const struct floe_ice_meta *m)
{
	return m->v.current_schema_id;
}
int32_t floe_ice_meta_default_spec_id(const struct floe_ice_meta *m)
{
	return m->v.default_spec_id;
}
const struct floe_json *floe_ice_meta_current_schema(const struct floe_ice_meta *m)
{
	return m->v.schema;
}

const struct floe_json *floe_ice_meta_default_spec_fields(const struct floe_ice_meta *m)
{
	return m->v.spec_fields;
}

/* Searches fields and, through struct types, their nested fields. Entries that are not
 * well-formed are skipped (only the top level is validated at parse). */
static const struct floe_json *find_field(const struct floe_json *fields, int32_t id, int depth)
{
	for (size_t i = 0; i < floe_json_len(fields); i++) {
		const struct floe_json *f = floe_json_at(fields, i), *t = floe_json_get(f, "type");
		int32_t fid;
		if (get_int32(f, "id", &fid) == 0 && fid == id)
			return f;
		if (depth < 32 && floe_json_is(t, FLOE_JSON_OBJECT)) {
			const struct floe_json *r =
			    find_field(floe_json_get(t, "fields"), id, depth + 1);
			if (r)
				return r;
		}
	}
	return NULL;
}

bool floe_ice_meta_schema_field(const struct floe_ice_meta *m, int32_t id, const char **type,
				bool *required, const char **name)
{
	const struct floe_json *f = find_field(floe_json_get(m->v.schema, "fields"), id, 0);
	const char *t = NULL, *n = NULL;
	bool req = false;
	if (!f || floe_json_get_str(f, "name", &n) ||
	    floe_json_bool(floe_json_get(f, "required"), &req))
		return false;
	const struct floe_json *tv = floe_json_get(f, "type");
	/* Nested types answer with their kind: "map", "list" or "struct". */
	if (floe_json_str(tv, &t, NULL) && floe_json_get_str(tv, "type", &t))
		return false;
	if (type)
		*type = t;
	if (required)
		*required = req;
	if (name)
		*name = n;
	return true;
}

size_t floe_ice_meta_snapshot_count(const struct floe_ice_meta *m)
{
	return floe_json_len(m->v.snapshots);
}

/* Out-parameters may be NULL. manifest_list is NULL for a v1 snapshot without one. */
int floe_ice_meta_snapshot_at(const struct floe_ice_meta *m, size_t i, int64_t *id,
			      int64_t *parent_id, int64_t *seq, int64_t *timestamp_ms,
			      const char **manifest_list)
{
	const struct floe_json *s = floe_json_at(m->v.snapshots, i);
	int64_t x;
	if (!s)
		return FLOE_EINVAL;
	/* The types were checked when the root was indexed. */
	if (id && floe_json_get_int(s, "snapshot-id", &x) == 0)
		*id = x;
	if (parent_id && get_opt_int(s, "parent-snapshot-id", -1, &x) == 0)
		*parent_id = x;
	if (seq && get_opt_int(s, "sequence-number", 0, &x) == 0)
		*seq = x;
	if (timestamp_ms && floe_json_get_int(s, "timestamp-ms", &x) == 0)
		*timestamp_ms = x;
	if (manifest_list) {
		*manifest_list = NULL;
		floe_json_get_str(s, "manifest-list", manifest_list);
	}
	return 0;
}

const char *floe_ice_meta_snapshot_summary(const struct floe_ice_meta *m, size_t i, const char *key)
{
	const char *s = NULL;
	floe_json_get_str(floe_json_get(floe_json_at(m->v.snapshots, i), "summary"), key, &s);
	return s;
}

/* Counts every summary entry, "operation" included. */
size_t floe_ice_meta_snapshot_summary_count(const struct floe_ice_meta *m, size_t i)
{
	return floe_json_len(floe_json_get(floe_json_at(m->v.snapshots, i), "summary"));
}

int floe_ice_meta_snapshot_summary_at(const struct floe_ice_meta *m, size_t i, size_t k,
				      const char **key, const char **value)
{
	const struct floe_json *sum = floe_json_get(floe_json_at(m->v.snapshots, i), "summary");
	const char *kk = floe_json_key_at(sum, k), *vv;
	if (!kk || floe_json_str(floe_json_at(sum, k), &vv, NULL))
		return FLOE_EINVAL;
	if (key)
		*key = kk;
	if (value)
		*value = vv;
	return 0;
}

const char *floe_ice_meta_previous_file(const struct floe_ice_meta *m)
{
	const struct floe_json *log = floe_json_get(m->v.root, "metadata-log");
	size_t n = floe_json_is(log, FLOE_JSON_ARRAY) ? floe_json_len(log) : 0;
	if (n == 0)
		return NULL;
	const char *file = NULL;
	if (floe_json_get_str(floe_json_at(log, n - 1), "metadata-file", &file))
		return NULL;
	return file;
}

long floe_ice_meta_find_snapshot(const struct floe_ice_meta *m, int64_t snapshot_id)
{
	for (size_t i = 0; i < floe_json_len(m->v.snapshots); i++) {
		int64_t x;
		if (floe_json_get_int(floe_json_at(m->v.snapshots, i), "snapshot-id", &x) == 0 &&
		    x == snapshot_id)
			return (long)i;
	}
	return -1;
}

/* ---- building ---- */

static int set_int(struct floe_json_doc *d, struct floe_json *o, const char *k, int64_t v)
{
	return floe_json_set(d, o, k, floe_json_new_int(d, v));
}

static int set_str(struct floe_json_doc *d, struct floe_json *o, const char *k, const char *v)
{
	return floe_json_set(d, o, k, floe_json_new_str(d, v, strlen(v)));
}

static int set_bool(struct floe_json_doc *d, struct floe_json *o, const char *k, bool v)
{
	return floe_json_set(d, o, k, floe_json_new_bool(d, v));
}

static int field_json(struct floe_json_doc *d, const struct floe_ice_field *f,
		      struct floe_json **out)
{
	struct floe_json *o = floe_json_new_object(d), *t = NULL;
	int rc;
	if (!o)
		return FLOE_ENOMEM;
	if ((rc = set_int(d, o, "id", f->id)) || (rc = set_str(d, o, "name", f->name)) ||
	    (rc = set_bool(d, o, "required", f->required)))
		return rc;
	if (strcmp(f->type, "map") == 0) {
		if (!(t = floe_json_new_object(d)))
			return FLOE_ENOMEM;
		if ((rc = set_str(d, t, "type", "map")) ||
		    (rc = set_int(d, t, "key-id", f->key_id)) ||
		    (rc = set_str(d, t, "key", f->key_type)) ||
		    (rc = set_int(d, t, "value-id", f->value_id)) ||
		    (rc = set_str(d, t, "value", f->value_type)) ||
		    (rc = set_bool(d, t, "value-required", f->value_required)))
			return rc;
		rc = floe_json_set(d, o, "type", t);
	} else {
		rc = set_str(d, o, "type", f->type);
	}
	*out = o;
	return rc;
}

static int check_fields(const struct floe_ice_field *fields, size_t n, int32_t *max_id)
{
	int32_t ids[3];
	*max_id = 0;
	for (size_t i = 0; i < n; i++) {
		const struct floe_ice_field *f = &fields[i];
		if (!f->name || !f->type)
			return FLOE_EINVAL;
		bool map = strcmp(f->type, "map") == 0;
		if (map && (!f->key_type || !f->value_type))
			return FLOE_EINVAL;
		size_t nids = map ? 3 : 1;
		ids[0] = f->id;
		ids[1] = f->key_id;
		ids[2] = f->value_id;
		for (size_t k = 0; k < nids; k++) {
			if (ids[k] <= 0)
				return FLOE_EINVAL;
			if (ids[k] > *max_id)
				*max_id = ids[k];
			/* Ids are unique across the schema, map keys and values included. */
			for (size_t j = 0; j < k; j++)
				if (ids[j] == ids[k])
					return FLOE_EINVAL;
			for (size_t j = 0; j < i; j++) {
				const struct floe_ice_field *g = &fields[j];
				if (g->id == ids[k] ||
				    (strcmp(g->type, "map") == 0 &&
				     (g->key_id == ids[k] || g->value_id == ids[k])))
					return FLOE_EINVAL;
			}
		}
	}
	return 0;
}

static int build_root(struct floe_json_doc *d, const char *table_uuid, const char *location,
		      const struct floe_ice_field *fields, size_t nfields,
		      const struct floe_ice_partition_field *pfields, size_t npfields,
		      const struct floe_ice_kv *props, size_t nprops, int64_t now_ms,
		      int32_t last_column_id)
{
	struct floe_json *root = floe_json_new_object(d), *schemas = floe_json_new_array(d),
			 *schema = floe_json_new_object(d), *sfields = floe_json_new_array(d),
			 *specs = floe_json_new_array(d), *spec = floe_json_new_object(d),
			 *pf = floe_json_new_array(d), *orders = floe_json_new_array(d),
			 *order = floe_json_new_object(d), *p = floe_json_new_object(d);
	int rc;
	if (!root || !schemas || !schema || !sfields || !specs || !spec || !pf || !orders ||
	    !order || !p)
		return FLOE_ENOMEM;
	int32_t last_pid = 999;
	for (size_t i = 0; i < nfields; i++) {
		struct floe_json *f;
		if ((rc = field_json(d, &fields[i], &f)) || (rc = floe_json_push(d, sfields, f)))
			return rc;
	}
	for (size_t i = 0; i < npfields; i++) {
		const struct floe_ice_partition_field *x = &pfields[i];
		struct floe_json *o = floe_json_new_object(d);
		if ((rc = floe_json_push(d, pf, o)) || (rc = set_str(d, o, "name", x->name)) ||
		    (rc = set_str(d, o, "transform", x->transform)) ||
		    (rc = set_int(d, o, "source-id", x->source_id)) ||
		    (rc = set_int(d, o, "field-id", x->field_id)))
			return rc;
		if (x->field_id > last_pid)
			last_pid = x->field_id;
	}
	for (size_t i = 0; i < nprops; i++)
		if ((rc = set_str(d, p, props[i].key, props[i].value)))
			return rc;
	/* Members in the order Java's TableMetadataParser writes them. */
	if ((rc = set_str(d, schema, "type", "struct")) ||
	    (rc = set_int(d, schema, "schema-id", 0)) ||
	    (rc = floe_json_set(d, schema, "fields", sfields)) ||
	    (rc = floe_json_push(d, schemas, schema)) || (rc = set_int(d, spec, "spec-id", 0)) ||
	    (rc = floe_json_set(d, spec, "fields", pf)) || (rc = floe_json_push(d, specs, spec)) ||
	    (rc = set_int(d, order, "order-id", 0)) ||
	    (rc = floe_json_set(d, order, "fields", floe_json_new_array(d))) ||
	    (rc = floe_json_push(d, orders, order)) ||
	    (rc = set_int(d, root, "format-version", 2)) ||
	    (rc = set_str(d, root, "table-uuid", table_uuid)) ||
	    (rc = set_str(d, root, "location", location)) ||
	    (rc = set_int(d, root, "last-sequence-number", 0)) ||
	    (rc = set_int(d, root, "last-updated-ms", now_ms)) ||
	    (rc = set_int(d, root, "last-column-id", last_column_id)) ||
	    (rc = set_int(d, root, "current-schema-id", 0)) ||
	    (rc = floe_json_set(d, root, "schemas", schemas)) ||
	    (rc = set_int(d, root, "default-spec-id", 0)) ||
	    (rc = floe_json_set(d, root, "partition-specs", specs)) ||
	    (rc = set_int(d, root, "last-partition-id", last_pid)) ||
	    (rc = set_int(d, root, "default-sort-order-id", 0)) ||
	    (rc = floe_json_set(d, root, "sort-orders", orders)) ||
	    (rc = floe_json_set(d, root, "properties", p)) ||
	    (rc = set_int(d, root, "current-snapshot-id", -1)) ||
	    (rc = floe_json_set(d, root, "refs", floe_json_new_object(d))) ||
	    (rc = floe_json_set(d, root, "snapshots", floe_json_new_array(d))) ||
	    (rc = floe_json_set(d, root, "snapshot-log", floe_json_new_array(d))) ||
	    (rc = floe_json_set(d, root, "metadata-log", floe_json_new_array(d))))
		return rc;
	floe_json_set_root(d, root);
	return 0;
}

int floe_ice_meta_create(struct floe_alloc *a, const char *table_uuid, const char *location,
			 const struct floe_ice_field *fields, size_t nfields,
			 const struct floe_ice_partition_field *pfields, size_t npfields,
			 const struct floe_ice_kv *props, size_t nprops, int64_t now_ms,
			 struct floe_ice_meta **out)
{
	int32_t last_column_id;
	int rc;
	*out = NULL;
	if (!table_uuid || !location || (nfields && !fields) || (npfields && !pfields) ||
	    (nprops && !props))
		return FLOE_EINVAL;
	if ((rc = check_fields(fields, nfields, &last_column_id)))
		return rc;
	/* Partition fields name a top-level source column and take unique ids from 1000. */
	for (size_t i = 0; i < npfields; i++) {
		const struct floe_ice_partition_field *p = &pfields[i];
		bool found = false;
		if (!p->name || !p->transform || p->field_id < 1000)
			return FLOE_EINVAL;
		for (size_t j = 0; j < nfields; j++)
			found |= fields[j].id == p->source_id;
		for (size_t j = 0; j < i; j++)
			if (pfields[j].field_id == p->field_id)
				return FLOE_EINVAL;
		if (!found)
			return FLOE_EINVAL;
	}
	for (size_t i = 0; i < nprops; i++)
		if (!props[i].key || !props[i].value)
			return FLOE_EINVAL;
	struct floe_ice_meta *m = floe_calloc(a, 1, sizeof(*m));
	if (!m)
		return FLOE_ENOMEM;
	m->a = a;
	if ((rc = floe_json_doc_new(a, &m->doc)))
		goto err;
	if ((rc = build_root(m->doc, table_uuid, location, fields, nfields, pfields, npfields,
			     props, nprops, now_ms, last_column_id)))
		goto err;
	/* Reading back what was built also checks it (partition source ids aside). */
	if ((rc = index_root(&m->v, floe_json_root(m->doc)))) {
		rc = FLOE_EINVAL;
		goto err;
	}
	*out = m;
	return 0;
err:
	floe_ice_meta_free(m);
	return rc;
}

/* ---- add_snapshot ---- */

/* A new object with the members of src (may be NULL) in order; values are shared. */
static struct floe_json *copy_object(struct floe_json_doc *d, const struct floe_json *src)
{
	struct floe_json *o = floe_json_new_object(d);
	for (size_t i = 0; o && i < floe_json_len(src); i++)
		if (floe_json_set(d, o, floe_json_key_at(src, i), floe_json_at(src, i)))
			return NULL;
	return o;
}

static struct floe_json *copy_array(struct floe_json_doc *d, const struct floe_json *src,
				    size_t from)
{
	struct floe_json *o = floe_json_new_array(d);
	for (size_t i = from; o && i < floe_json_len(src); i++)
		if (floe_json_push(d, o, floe_json_at(src, i)))
			return NULL;
	return o;
}

static int snapshot_json(struct floe_json_doc *d, const struct floe_ice_snapshot *s,
			 struct floe_json **out)
{
	struct floe_json *o = floe_json_new_object(d), *sum = floe_json_new_object(d);
	int rc;
	if (!o || !sum)
		return FLOE_ENOMEM;
	if ((rc = set_int(d, o, "snapshot-id", s->snapshot_id)))
		return rc;
	if (s->parent_id >= 0 && (rc = set_int(d, o, "parent-snapshot-id", s->parent_id)))
		return rc;
	if ((rc = set_int(d, o, "sequence-number", s->sequence_number)) ||
	    (rc = set_int(d, o, "timestamp-ms", s->timestamp_ms)) ||
	    (rc = set_str(d, sum, "operation", s->operation)))
		return rc;
	for (size_t i = 0; i < s->summary_count; i++)
		if ((rc = set_str(d, sum, s->summary[i].key, s->summary[i].value)))
			return rc;
	if ((rc = floe_json_set(d, o, "summary", sum)) ||
	    (rc = set_str(d, o, "manifest-list", s->manifest_list)) ||
	    (rc = set_int(d, o, "schema-id", s->schema_id)))
		return rc;
	*out = o;
	return 0;
}

static int check_new_snapshot(const struct floe_ice_meta *m, const struct floe_ice_snapshot *s)
{
	if (!s->manifest_list || !s->operation || (s->summary_count && !s->summary) ||
	    s->snapshot_id < 0 || s->schema_id < 0)
		return FLOE_EINVAL;
	for (size_t i = 0; i < s->summary_count; i++)
		if (!s->summary[i].key || !s->summary[i].value)
			return FLOE_EINVAL;
	if (m->v.last_seq == INT64_MAX || s->sequence_number != m->v.last_seq + 1)
		return FLOE_EINVAL;
	if (s->parent_id != m->v.current_snapshot_id)
		return FLOE_EINVAL;
	if (floe_ice_meta_find_snapshot(m, s->snapshot_id) >= 0)
		return FLOE_EINVAL;
	if (s->parent_id >= 0) {
		int64_t pts = 0;
		long pi = floe_ice_meta_find_snapshot(m, s->parent_id);
		if (pi < 0)
			return FLOE_EINVAL;
		floe_ice_meta_snapshot_at(m, (size_t)pi, NULL, NULL, NULL, &pts, NULL);
		if (s->timestamp_ms <= pts)
			return FLOE_EINVAL;
	}
	return 0;
}

/* v1 tables are refused (FLOE_EUNSUPPORTED): sequence numbers are a v2 notion, and
 * upgrading a table's format is a decision for its owner. max_log 0 keeps one entry,
 * as Java does. */
int floe_ice_meta_add_snapshot(struct floe_ice_meta *m, const struct floe_ice_snapshot *s,
			       const char *prev_metadata_location, int64_t now_ms, size_t max_log)
{
	struct floe_json_doc *d = m->doc;
	const struct floe_json *old = m->v.root;
	struct floe_json *root, *snap, *snaps, *refs, *main, *slog, *entry, *mlog;
	struct view nv;
	int rc;
	if (m->v.format_version != 2)
		return FLOE_EUNSUPPORTED;
	if ((rc = check_new_snapshot(m, s)))
		return rc;
	if (max_log == 0)
		max_log = 1;

	if (!(root = copy_object(d, old)))
		return FLOE_ENOMEM;
	if ((rc = snapshot_json(d, s, &snap)))
		return rc;
	if (!(snaps = copy_array(d, m->v.snapshots, 0)) || (rc = floe_json_push(d, snaps, snap)))
		return FLOE_ENOMEM;

	/* refs.main keeps any retention settings it had. */
	const struct floe_json *old_refs = floe_json_get(old, "refs");
	const struct floe_json *old_main = floe_json_get(old_refs, "main");
	if (!(refs = copy_object(d, old_refs)) ||
	    !(main = copy_object(d, floe_json_is(old_main, FLOE_JSON_OBJECT) ? old_main : NULL)))
		return FLOE_ENOMEM;
	if ((rc = set_int(d, main, "snapshot-id", s->snapshot_id)) ||
	    (rc = set_str(d, main, "type", "branch")) ||
	    (rc = floe_json_set(d, refs, "main", main)))
		return rc;

	const struct floe_json *old_slog = floe_json_get(old, "snapshot-log");
	if (!(slog = copy_array(d, floe_json_is(old_slog, FLOE_JSON_ARRAY) ? old_slog : NULL, 0)) ||
	    !(entry = floe_json_new_object(d)))
		return FLOE_ENOMEM;
	if ((rc = set_int(d, entry, "timestamp-ms", s->timestamp_ms)) ||
	    (rc = set_int(d, entry, "snapshot-id", s->snapshot_id)) ||
	    (rc = floe_json_push(d, slog, entry)))
		return rc;

	const struct floe_json *old_mlog = floe_json_get(old, "metadata-log");
	if (!floe_json_is(old_mlog, FLOE_JSON_ARRAY))
		old_mlog = NULL;
	size_t mlen = floe_json_len(old_mlog) + (prev_metadata_location ? 1 : 0);
	size_t drop = mlen > max_log ? mlen - max_log : 0;
	if (!(mlog = copy_array(d, old_mlog, drop)))
		return FLOE_ENOMEM;
	if (prev_metadata_location) {
		if (!(entry = floe_json_new_object(d)))
			return FLOE_ENOMEM;
		if ((rc = set_int(d, entry, "timestamp-ms", m->v.last_updated_ms)) ||
		    (rc = set_str(d, entry, "metadata-file", prev_metadata_location)))
			return rc;
		if ((rc = floe_json_push(d, mlog, entry)))
			return rc;
	}

	if ((rc = set_int(d, root, "last-sequence-number", s->sequence_number)) ||
	    (rc = set_int(d, root, "last-updated-ms", now_ms)) ||
	    (rc = set_int(d, root, "current-snapshot-id", s->snapshot_id)) ||
	    (rc = floe_json_set(d, root, "refs", refs)) ||
	    (rc = floe_json_set(d, root, "snapshots", snaps)) ||
	    (rc = floe_json_set(d, root, "snapshot-log", slog)) ||
	    (rc = floe_json_set(d, root, "metadata-log", mlog)))
		return rc;
	/* Indexing cannot fail on what was checked above; it is a guard, not a path. */
	if (index_root(&nv, root))
		return FLOE_EINVAL;
	floe_json_set_root(d, root);
	m->v = nv;
	return 0;
}

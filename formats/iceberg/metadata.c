/* Iceberg table metadata over the JSON DOM, reading: parsing, validation (a view of the
 * fields floe uses, checked once per root) and accessors. The document is the model, so
 * fields floe does not understand survive a rewrite; metadata_build.c makes new tables
 * and snapshots. */
#include "metadata_impl.h"

#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"
#include "formats/json/json.h"

#include <string.h>

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

static int index_schema(struct floe_ice_view *v, const struct floe_json *root)
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

static int index_spec(struct floe_ice_view *v, const struct floe_json *root)
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

/* The failure of member what: named for the message. */
#define BAD(what) (v->bad = (what), FLOE_EFORMAT)

/* The top level; the schema, the spec and each snapshot through the steps above. */
int floe_ice_meta_index(struct floe_ice_view *v, struct floe_json *root)
{
	int64_t i;
	int rc;
	memset(v, 0, sizeof(*v));
	v->root = root;
	if (!floe_json_is(root, FLOE_JSON_OBJECT) || req_int(root, "format-version", &i))
		return BAD("format-version");
	if (i > 2)
		return FLOE_EUNSUPPORTED;
	if (i < 1)
		return BAD("format-version");
	v->format_version = (int)i;
	const bool v2 = i >= 2;

	const struct floe_json *uuid = floe_json_get(root, "table-uuid");
	if ((v2 || uuid) && floe_json_str(uuid, &v->uuid, NULL))
		return BAD("table-uuid");
	if (floe_json_get_str(root, "location", &v->location))
		return BAD("location");
	if (req_int(root, "last-updated-ms", &v->last_updated_ms))
		return BAD("last-updated-ms");
	if (req_int(root, "last-column-id", &i))
		return BAD("last-column-id");
	if (v2 ? req_int(root, "last-sequence-number", &v->last_seq)
	       : get_opt_int(root, "last-sequence-number", 0, &v->last_seq))
		return BAD("last-sequence-number");
	if (v2 &&
	    (req_int(root, "last-partition-id", &i) || req_int(root, "default-sort-order-id", &i) ||
	     !floe_json_is(floe_json_get(root, "sort-orders"), FLOE_JSON_ARRAY)))
		return BAD("last-partition-id, default-sort-order-id or sort-orders");
	if ((rc = index_schema(v, root)))
		return rc == FLOE_EFORMAT ? BAD("schemas or current-schema-id") : rc;
	if ((rc = index_spec(v, root)))
		return rc == FLOE_EFORMAT ? BAD("partition-specs or default-spec-id") : rc;

	const struct floe_json *props = floe_json_get(root, "properties");
	if (props && !floe_json_is(props, FLOE_JSON_OBJECT))
		return BAD("properties");
	const struct floe_json *refs = floe_json_get(root, "refs");
	if (refs && !floe_json_is(refs, FLOE_JSON_OBJECT))
		return BAD("refs");

	v->snapshots = floe_json_get(root, "snapshots");
	if (v->snapshots && !floe_json_is(v->snapshots, FLOE_JSON_ARRAY))
		return BAD("snapshots");
	for (size_t k = 0; k < floe_json_len(v->snapshots); k++)
		if (check_snapshot(floe_json_at(v->snapshots, k), v->format_version))
			return BAD("snapshots (an entry)");
	/* Java writes -1 (v1/v2) or null (v3) for "no snapshot", and checks that any other
	 * value names a snapshot of the table. */
	if (get_opt_int(root, "current-snapshot-id", -1, &v->current_snapshot_id))
		return BAD("current-snapshot-id");
	if (v->current_snapshot_id < 0)
		v->current_snapshot_id = -1;
	else if (!find_by_id(v->snapshots, "snapshot-id", v->current_snapshot_id))
		return BAD("current-snapshot-id (no such snapshot)");
	return 0;
}
#undef BAD

int floe_ice_meta_parse(struct floe_alloc *a, const char *json, size_t len,
			struct floe_ice_meta **out, struct floe_err *err)
{
	struct floe_ice_meta *m = floe_calloc(a, 1, sizeof(*m));
	struct floe_err je;
	int rc;
	*out = NULL;
	if (!m)
		return floe_err_set(err, FLOE_ENOMEM, "%s", floe_strerror(FLOE_ENOMEM));
	m->a = a;
	if ((rc = floe_json_parse(a, json, len, 0, &m->doc, &je))) {
		floe_err_at(err, rc, je.offset, "%s", je.msg);
		goto out;
	}
	if ((rc = floe_ice_meta_index(&m->v, floe_json_root(m->doc)))) {
		if (rc == FLOE_EUNSUPPORTED)
			floe_err_set(err, rc, "format-version above 2");
		else
			floe_err_set(err, rc, "not Iceberg table metadata: '%s' is missing or of the wrong type",
				     m->v.bad ? m->v.bad : "a required member");
		goto out;
	}
	*out = m;
	m = NULL;
out:
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

long floe_ice_meta_find_snapshot_near(const struct floe_ice_meta *m, int64_t snapshot_id, long hint)
{
	int64_t x;
	if (hint >= 0 && floe_json_get_int(floe_json_at(m->v.snapshots, (size_t)hint), "snapshot-id", &x) == 0 &&
	    x == snapshot_id)
		return hint;
	return floe_ice_meta_find_snapshot(m, snapshot_id);
}


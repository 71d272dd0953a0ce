/* Iceberg table metadata over the JSON DOM, writing: a new v2 table's document, and a
 * new snapshot, for which add_snapshot builds a new top-level object (sharing every
 * untouched member) that replaces the root only once it is complete and valid, so a
 * failed call leaves the metadata exactly as it was. */
#include "metadata_impl.h"

#include "formats/base/alloc.h"
#include "formats/base/error.h"
#include "formats/json/json.h"

#include <string.h>

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
		goto out;
	if ((rc = build_root(m->doc, table_uuid, location, fields, nfields, pfields, npfields,
			     props, nprops, now_ms, last_column_id)))
		goto out;
	/* Reading back what was built also checks it (partition source ids aside). */
	if ((rc = floe_ice_meta_index(&m->v, floe_json_root(m->doc)))) {
		rc = FLOE_EINVAL;
		goto out;
	}
	*out = m;
	m = NULL;
out:
	floe_ice_meta_free(m);
	return rc;
}

/* ---- add_snapshot ---- */

struct floe_json *floe_ice_json_copy_object(struct floe_json_doc *d, const struct floe_json *src)
{
	struct floe_json *o = floe_json_new_object(d);
	/* A name given twice keeps its first value, the one floe_json_get reads: the copy
	 * must mean what the original was read as. */
	for (size_t i = 0; o && i < floe_json_len(src); i++)
		if (!floe_json_get(o, floe_json_key_at(src, i)) &&
		    floe_json_set(d, o, floe_json_key_at(src, i), floe_json_at(src, i)))
			return NULL;
	return o;
}

struct floe_json *floe_ice_json_copy_array(struct floe_json_doc *d, const struct floe_json *src,
					  size_t from)
{
	struct floe_json *o = floe_json_new_array(d);
	for (size_t i = from; o && i < floe_json_len(src); i++)
		if (floe_json_push(d, o, floe_json_at(src, i)))
			return NULL;
	return o;
}

int floe_ice_snapshot_json(struct floe_json_doc *d, const struct floe_ice_snapshot *s,
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

/* The metadata-log of the next version: the old one and {last-updated-ms,
 * prev_metadata_location} (when not NULL), trimmed to max_log entries. */
static int metadata_log(struct floe_ice_meta *m, const char *prev_metadata_location, size_t max_log,
			struct floe_json **out)
{
	struct floe_json_doc *d = m->doc;
	struct floe_json *mlog, *entry;
	int rc;
	const struct floe_json *old_mlog = floe_json_get(m->v.root, "metadata-log");
	if (!floe_json_is(old_mlog, FLOE_JSON_ARRAY))
		old_mlog = NULL;
	size_t mlen = floe_json_len(old_mlog) + (prev_metadata_location ? 1 : 0);
	size_t drop = mlen > max_log ? mlen - max_log : 0;
	if (!(mlog = floe_ice_json_copy_array(d, old_mlog, drop)))
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
	*out = mlog;
	return 0;
}

/* Makes root (a new copy of m's) m's (schema.c's evolution ends here too): with the previous metadata file in its
 * metadata-log (max_log entries kept) and now_ms as last-updated-ms. Keys keep their
 * places (floe_json_set), so the order of these last steps does not show in the file. */
int floe_ice_meta_set_new_root(struct floe_ice_meta *m, struct floe_json *root,
			       const char *prev_metadata_location, int64_t now_ms, size_t max_log)
{
	struct floe_json_doc *d = m->doc;
	struct floe_json *mlog;
	struct floe_ice_view nv;
	int rc;
	if ((rc = metadata_log(m, prev_metadata_location, max_log, &mlog)) ||
	    (rc = set_int(d, root, "last-updated-ms", now_ms)) ||
	    (rc = floe_json_set(d, root, "metadata-log", mlog)))
		return rc;
	/* Indexing cannot fail on what was checked before; it is a guard, not a path. */
	if (floe_ice_meta_index(&nv, root))
		return FLOE_EINVAL;
	floe_json_set_root(d, root);
	m->v = nv;
	return 0;
}

int floe_ice_meta_touch(struct floe_ice_meta *m, const char *prev_metadata_location, int64_t now_ms,
			size_t max_log)
{
	struct floe_json *root;
	if (max_log == 0)
		max_log = 1;
	if (now_ms < m->v.last_updated_ms)
		now_ms = m->v.last_updated_ms;
	if (!(root = floe_ice_json_copy_object(m->doc, m->v.root)))
		return FLOE_ENOMEM;
	return floe_ice_meta_set_new_root(m, root, prev_metadata_location, now_ms, max_log);
}

/* v1 tables are refused (FLOE_EUNSUPPORTED): sequence numbers are a v2 notion, and
 * upgrading a table's format is a decision for its owner. max_log 0 keeps one entry,
 * as Java does. */
int floe_ice_meta_add_snapshot(struct floe_ice_meta *m, const struct floe_ice_snapshot *s,
			       const char *prev_metadata_location, int64_t now_ms, size_t max_log)
{
	struct floe_json_doc *d = m->doc;
	const struct floe_json *old = m->v.root;
	struct floe_json *root, *snap, *snaps, *refs, *main, *slog, *entry;
	int rc;
	if (m->v.format_version != 2)
		return FLOE_EUNSUPPORTED;
	if ((rc = check_new_snapshot(m, s)))
		return rc;
	if (max_log == 0)
		max_log = 1;

	if (!(root = floe_ice_json_copy_object(d, old)))
		return FLOE_ENOMEM;
	if ((rc = floe_ice_snapshot_json(d, s, &snap)))
		return rc;
	if (!(snaps = floe_ice_json_copy_array(d, m->v.snapshots, 0)) || (rc = floe_json_push(d, snaps, snap)))
		return FLOE_ENOMEM;

	/* refs.main keeps any retention settings it had. */
	const struct floe_json *old_refs = floe_json_get(old, "refs");
	const struct floe_json *old_main = floe_json_get(old_refs, "main");
	if (!(refs = floe_ice_json_copy_object(d, old_refs)) ||
	    !(main = floe_ice_json_copy_object(d, floe_json_is(old_main, FLOE_JSON_OBJECT) ? old_main : NULL)))
		return FLOE_ENOMEM;
	if ((rc = set_int(d, main, "snapshot-id", s->snapshot_id)) ||
	    (rc = set_str(d, main, "type", "branch")) ||
	    (rc = floe_json_set(d, refs, "main", main)))
		return rc;

	const struct floe_json *old_slog = floe_json_get(old, "snapshot-log");
	if (!(slog = floe_ice_json_copy_array(d, floe_json_is(old_slog, FLOE_JSON_ARRAY) ? old_slog : NULL, 0)) ||
	    !(entry = floe_json_new_object(d)))
		return FLOE_ENOMEM;
	if ((rc = set_int(d, entry, "timestamp-ms", s->timestamp_ms)) ||
	    (rc = set_int(d, entry, "snapshot-id", s->snapshot_id)) ||
	    (rc = floe_json_push(d, slog, entry)))
		return rc;

	if ((rc = set_int(d, root, "last-sequence-number", s->sequence_number)) ||
	    (rc = set_int(d, root, "current-snapshot-id", s->snapshot_id)) ||
	    (rc = floe_json_set(d, root, "refs", refs)) ||
	    (rc = floe_json_set(d, root, "snapshots", snaps)) ||
	    (rc = floe_json_set(d, root, "snapshot-log", slog)))
		return rc;
	return floe_ice_meta_set_new_root(m, root, prev_metadata_location, now_ms, max_log);
}


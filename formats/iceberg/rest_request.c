/* The REST catalog's requests built (see rest.h): the paths, and the bodies of namespace
 * creation, table creation, commits and remote signing. rest.c reads the answers. */
#include "formats/iceberg/rest.h"

#include "metadata_impl.h"

#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"
#include "formats/base/hex.h"
#include "formats/json/json.h"

#include <string.h>

/* ---- requests ---- */

static int put_encoded(struct floe_buf *out, const char *s)
{
	return floe_uri_put(out, s, strlen(s), false);
}

int floe_rest_path(const char *prefix, const char *const *ns, size_t nns, const char *sep,
		   const char *table, const char *suffix, struct floe_buf *out)
{
	int rc = floe_buf_puts(out, "/v1");
	if (!rc && prefix && *prefix && !(rc = floe_buf_putc(out, '/')))
		rc = put_encoded(out, prefix);
	if (!rc && nns)
		rc = floe_buf_puts(out, "/namespaces/");
	for (size_t i = 0; i < nns && !rc; i++) {
		if (i && (rc = floe_buf_puts(out, sep ? sep : "%1F")))
			break;
		if (!*ns[i])
			return FLOE_EINVAL;
		rc = put_encoded(out, ns[i]);
	}
	if (!rc && table && !(rc = floe_buf_puts(out, "/tables/")))
		rc = *table ? put_encoded(out, table) : FLOE_EINVAL;
	if (!rc && suffix)
		rc = floe_buf_puts(out, suffix);
	return rc;
}

static struct floe_json *str(struct floe_json_doc *d, const char *s)
{
	return floe_json_new_str(d, s, strlen(s));
}

static int write_doc(struct floe_json_doc *d, struct floe_json *root, int rc, struct floe_buf *out)
{
	if (rc == 0)
		rc = floe_json_write(root, out);
	floe_json_doc_free(d);
	return rc;
}

int floe_rest_namespace_request(const char *const *ns, size_t nns, struct floe_buf *out)
{
	struct floe_json_doc *d;
	struct floe_json *root, *arr;
	int rc;
	if ((rc = floe_json_doc_new(out->alloc, &d)))
		return rc;
	root = floe_json_new_object(d);
	arr = floe_json_new_array(d);
	rc = !root || !arr ? FLOE_ENOMEM : floe_json_set(d, root, "namespace", arr);
	for (size_t i = 0; i < nns && !rc; i++)
		rc = floe_json_push(d, arr, str(d, ns[i]));
	return write_doc(d, root, rc, out);
}

static int create_body(struct floe_json_doc *d, struct floe_json *root, const char *name,
		       const char *location, const struct floe_ice_meta *m)
{
	struct floe_json *spec = floe_json_new_object(d), *order = floe_json_new_object(d);
	const struct floe_json *props = floe_json_get(m->v.root, "properties");
	int rc;
	if (!spec || !order)
		return FLOE_ENOMEM;
	if ((rc = floe_json_set(d, root, "name", str(d, name))) ||
	    (location && (rc = floe_json_set(d, root, "location", str(d, location)))) ||
	    (rc = floe_json_set(d, root, "schema", floe_json_clone(d, m->v.schema))) ||
	    (rc = floe_json_set(d, spec, "spec-id", floe_json_new_int(d, 0))) ||
	    (rc = floe_json_set(d, spec, "fields", floe_json_clone(d, m->v.spec_fields))) ||
	    (rc = floe_json_set(d, root, "partition-spec", spec)) ||
	    (rc = floe_json_set(d, order, "order-id", floe_json_new_int(d, 0))) ||
	    (rc = floe_json_set(d, order, "fields", floe_json_new_array(d))) ||
	    (rc = floe_json_set(d, root, "write-order", order)) ||
	    (rc = floe_json_set(d, root, "stage-create", floe_json_new_bool(d, false))))
		return rc;
	return floe_json_set(d, root, "properties", floe_json_clone(d, props));
}

/* The schema and spec are built as a new table's metadata is, so they are the very
 * objects a catalog-less table would hold. */
int floe_rest_create_request(struct floe_alloc *a, const char *name, const char *location,
			     const struct floe_ice_field *fields, size_t nfields,
			     const struct floe_ice_partition_field *pfields, size_t npfields,
			     const struct floe_ice_kv *props, size_t nprops, struct floe_buf *out)
{
	struct floe_ice_meta *m = NULL;
	struct floe_json_doc *d;
	struct floe_json *root;
	int rc;
	if (!name || !*name)
		return FLOE_EINVAL;
	if ((rc = floe_ice_meta_create(a, "00000000-0000-0000-0000-000000000000",
				       location ? location : "", fields, nfields, pfields, npfields,
				       props, nprops, 0, &m)))
		return rc;
	if ((rc = floe_json_doc_new(a, &d))) {
		floe_ice_meta_free(m);
		return rc;
	}
	root = floe_json_new_object(d);
	rc = root ? create_body(d, root, name, location, m) : FLOE_ENOMEM;
	rc = write_doc(d, root, rc, out);
	floe_ice_meta_free(m);
	return rc;
}

static int requirement(struct floe_json_doc *d, struct floe_json *reqs, const char *type,
		       const char *k, struct floe_json *v, struct floe_json *ref)
{
	struct floe_json *o = floe_json_new_object(d);
	int rc;
	if (!o || !v)
		return FLOE_ENOMEM;
	if ((rc = floe_json_set(d, o, "type", str(d, type))) ||
	    (ref && (rc = floe_json_set(d, o, "ref", ref))) || (rc = floe_json_set(d, o, k, v)))
		return rc;
	return floe_json_push(d, reqs, o);
}

static int update(struct floe_json_doc *d, struct floe_json *ups, const char *action, const char *k,
		  struct floe_json *v, struct floe_json **obj)
{
	struct floe_json *o = floe_json_new_object(d);
	int rc;
	if (!o || !v)
		return FLOE_ENOMEM;
	if ((rc = floe_json_set(d, o, "action", str(d, action))) ||
	    (rc = floe_json_set(d, o, k, v)))
		return rc;
	if (obj)
		*obj = o;
	return floe_json_push(d, ups, o);
}

/* remove-snapshots of the snapshots the commit expires and set-properties of what the
 * expiry raised with them: the catalog's metadata stays as bounded as floe's own. */
static int expiry_updates(struct floe_json_doc *d, struct floe_json *ups,
			  const struct floe_rest_commit *c)
{
	if (!c->nremove)
		return 0;
	struct floe_json *ids = floe_json_new_array(d), *props = floe_json_new_object(d);
	int rc = ids && props ? 0 : FLOE_ENOMEM;
	for (size_t i = 0; rc == 0 && i < c->nremove; i++)
		rc = floe_json_push(d, ids, floe_json_new_int(d, c->remove_ids[i]));
	for (size_t i = 0; rc == 0 && i < c->nprops; i++)
		rc = floe_json_set(d, props, c->props[i].key, str(d, c->props[i].value));
	if (rc || (rc = update(d, ups, "remove-snapshots", "snapshot-ids", ids, NULL)))
		return rc;
	return c->nprops ? update(d, ups, "set-properties", "updates", props, NULL) : 0;
}

static int commit_body(struct floe_json_doc *d, struct floe_json *root,
		       const struct floe_rest_commit *c)
{
	struct floe_json *reqs = floe_json_new_array(d), *ups = floe_json_new_array(d), *snap, *ref;
	int64_t head = c->ref_snapshot_id;
	int rc;
	if (!reqs || !ups)
		return FLOE_ENOMEM;
	if ((rc = floe_json_set(d, root, "requirements", reqs)) ||
	    (rc = floe_json_set(d, root, "updates", ups)) ||
	    (rc = requirement(d, reqs, "assert-table-uuid", "uuid", str(d, c->table_uuid), NULL)) ||
	    (c->snapshot &&
	     (rc = requirement(d, reqs, "assert-ref-snapshot-id", "snapshot-id",
			       head < 0 ? floe_json_new_null(d) : floe_json_new_int(d, head),
			       str(d, c->ref)))))
		return rc;
	if (c->schema &&
	    ((rc = requirement(d, reqs, "assert-current-schema-id", "current-schema-id",
			       floe_json_new_int(d, c->base_schema_id), NULL)) ||
	     (rc = update(d, ups, "add-schema", "schema", floe_json_clone(d, c->schema), NULL)) ||
	     (rc = update(d, ups, "set-current-schema", "schema-id", floe_json_new_int(d, -1),
			  NULL))))
		return rc;
	if (c->set_spec &&
	    ((rc = requirement(d, reqs, "assert-default-spec-id", "default-spec-id",
			       floe_json_new_int(d, c->base_spec_id), NULL)) ||
	     (c->add_spec &&
	      (rc = update(d, ups, "add-spec", "spec", floe_json_clone(d, c->add_spec), NULL))) ||
	     (rc = update(d, ups, "set-default-spec", "spec-id",
			  floe_json_new_int(d, c->add_spec ? -1 : c->spec_id), NULL))))
		return rc;
	if (c->set_sort_order &&
	    ((rc = requirement(d, reqs, "assert-default-sort-order-id", "default-sort-order-id",
			       floe_json_new_int(d, c->base_sort_order_id), NULL)) ||
	     (c->add_sort_order && (rc = update(d, ups, "add-sort-order", "sort-order",
						floe_json_clone(d, c->add_sort_order), NULL))) ||
	     (rc = update(d, ups, "set-default-sort-order", "sort-order-id",
			  floe_json_new_int(d, c->add_sort_order ? -1 : c->sort_order_id), NULL))))
		return rc;
	if (!c->snapshot) /* a schema change alone */
		return 0;
	if ((rc = floe_ice_snapshot_json(d, c->snapshot, &snap)) ||
	    (rc = update(d, ups, "add-snapshot", "snapshot", snap, NULL)) ||
	    (rc = update(d, ups, "set-snapshot-ref", "ref-name", str(d, c->ref), &ref)) ||
	    (rc = floe_json_set(d, ref, "type", str(d, "branch"))) ||
	    (rc = floe_json_set(d, ref, "snapshot-id",
				floe_json_new_int(d, c->snapshot->snapshot_id))))
		return rc;
	return expiry_updates(d, ups, c);
}

int floe_rest_commit_request(struct floe_alloc *a, const struct floe_rest_commit *c,
			     struct floe_buf *out)
{
	struct floe_json_doc *d;
	struct floe_json *root;
	int rc;
	if (!c->table_uuid || !c->ref || (!c->snapshot && !c->schema) ||
	    (c->snapshot && (!c->snapshot->manifest_list || !c->snapshot->operation)))
		return FLOE_EINVAL;
	if ((rc = floe_json_doc_new(a, &d)))
		return rc;
	root = floe_json_new_object(d);
	rc = root ? commit_body(d, root, c) : FLOE_ENOMEM;
	return write_doc(d, root, rc, out);
}

int floe_rest_sign_request(const struct floe_rest_sign_in *in, struct floe_buf *out)
{
	const char *region = in->region, *uri = in->uri, *method = in->method;
	const struct floe_rest_header *h = in->headers;
	size_t nh = in->nheaders;
	struct floe_json_doc *d;
	int rc;
	if ((rc = floe_json_doc_new(out->alloc, &d)))
		return rc;
	struct floe_json *root = floe_json_new_object(d), *hs = floe_json_new_object(d);
	rc = !root || !hs ? FLOE_ENOMEM : 0;
	if (rc == 0 && !(rc = floe_json_set(d, root, "region", str(d, region))) &&
	    !(rc = floe_json_set(d, root, "uri", str(d, uri))) &&
	    !(rc = floe_json_set(d, root, "method", str(d, method))))
		rc = floe_json_set(d, root, "headers", hs);
	for (size_t i = 0; i < nh && rc == 0; i++) {
		struct floe_json *vs = floe_json_new_array(d);
		rc = !vs ? FLOE_ENOMEM : floe_json_push(d, vs, str(d, h[i].value));
		if (rc == 0)
			rc = floe_json_set(d, hs, h[i].name, vs);
	}
	struct floe_json *ps = in->nprops ? floe_json_new_object(d) : NULL;
	if (rc == 0 && in->nprops)
		rc = !ps ? FLOE_ENOMEM : floe_json_set(d, root, "properties", ps);
	for (size_t i = 0; i < in->nprops && rc == 0; i++)
		rc = floe_json_set(d, ps, in->props[i].name, str(d, in->props[i].value));
	if (rc == 0 && in->body)
		rc = floe_json_set(d, root, "body", floe_json_new_str(d, in->body, in->body_len));
	if (rc == 0)
		rc = floe_json_set(d, root, "provider", str(d, "s3"));
	return write_doc(d, root, rc, out);
}

/* A table in a REST catalog: where the filesystem catalog finds the current version by
 * probing metadata files and commits by creating the next one, a catalog table is loaded
 * from the catalog (with its ETag) and committed by a request that adds the snapshot and
 * moves the branch, asserting the table's UUID and the branch head it was built on. Data
 * files, manifests and manifest lists are written into the location the catalog gives
 * the table (a local directory, file:// or a path, or s3://), through a store of the
 * table's own.
 * Everything else (the attempt, the retry loop, the checks of whose commits are whose)
 * is the one commit path of table_commit.c and table_attempt.c. */
#include "agent/lake/table_impl.h"

#include "agent/lake/catalog_rest.h"
#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"
#include "formats/iceberg/metadata.h"
#include "formats/iceberg/rest.h"
#include "platform/log.h"
#include "platform/store.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* Takes m (owned) at version v as the table's metadata: a table whose UUID changed was
 * dropped and made again under the name, and floe's history of it (its commits) is gone. */
static int take(struct floe_table *t, struct floe_ice_meta *m, int64_t v)
{
	const char *uuid = floe_ice_meta_uuid(m);
	if (t->uuid[0] && uuid && strcmp(uuid, t->uuid) != 0) {
		floe_ice_meta_free(m);
		return floe_table_fail(t, FLOE_EREGRESS,
				       "table %s in %s now has table-uuid %s, not %s: it was dropped and "
				       "created again; floe will not commit on another table's history",
				       t->opt.name, floe_catalog_rest_what(t->opt.catalog), uuid, t->uuid);
	}
	if (uuid && !t->uuid[0])
		snprintf(t->uuid, sizeof(t->uuid), "%s", uuid);
	floe_ice_meta_free(t->meta);
	t->meta = m;
	t->catalog_schema_id = floe_ice_meta_current_schema_id(m);
	t->catalog_spec_id = floe_ice_meta_default_spec_id(m);
	t->catalog_last_spec_id = floe_ice_meta_last_spec_id(m);
	t->catalog_sort_order_id = floe_ice_meta_default_sort_order_id(m);
	t->catalog_last_sort_order_id = floe_ice_meta_last_sort_order_id(m);
	t->version = v > 0 ? v : 1;
	floe_table_seen(t);
	return 0;
}

int floe_table_catalog_bind(struct floe_table *t, const struct floe_catalog_rest_create *cr,
			    struct floe_store **store)
{
	struct floe_ice_meta *m = NULL;
	int64_t v = 0;
	int rc = floe_catalog_rest_load(t->opt.catalog, t->opt.name, cr, t->etag, &m, &v, &t->err);
	if (rc == 0 && !m)
		rc = floe_table_fail(t, FLOE_S3_EPROTO, "the catalog answered 304 to a load without an ETag");
	if (rc || (rc = take(t, m, v)))
		return rc;
	const char *loc = floe_ice_meta_location(t->meta);
	if (!loc)
		return floe_table_fail(t, FLOE_EFORMAT, "the catalog gave table %s no location", t->opt.name);
	return floe_catalog_rest_open_store(t->opt.catalog, loc, store, &t->err);
}

int floe_table_catalog_reload(struct floe_table *t)
{
	struct floe_ice_meta *m = NULL;
	int64_t v = 0;
	/* A handle whose metadata a failed attempt edited (version 0) loads it whole. */
	if (t->version == 0 || !t->meta)
		t->etag[0] = '\0';
	int rc = floe_catalog_rest_load(t->opt.catalog, t->opt.name, NULL, t->etag, &m, &v, &t->err);
	if (rc)
		return rc;
	if (!m) { /* 304: what the handle has is current */
		t->version = t->seen_version;
		return 0;
	}
	return take(t, m, v);
}

int floe_table_catalog_put(struct floe_table *t, const struct floe_table_expiry *x, bool *unknown)
{
	const struct floe_ice_snapshot *snap = t->pending;
	bool schema_changed = floe_ice_meta_current_schema_id(t->meta) != t->catalog_schema_id;
	/* Without a snapshot, only a schema change is floe's to send (the typed columns'
	 * ids, made the table's before a file carries them). */
	if (!snap && !schema_changed)
		return floe_table_fail(t, FLOE_EUNSUPPORTED,
				       "a commit without a snapshot (expiry alone) is the catalog's "
				       "maintenance, not floe's, in a REST catalog");
	struct floe_rest_commit cm = {
	    .table_uuid = t->uuid,
	    .ref = "main",
	    .ref_snapshot_id = snap ? snap->parent_id : -1,
	    .snapshot = snap,
	};
	/* An attempt that changed the schema (typed columns) sends it along, asserting the
	 * one it was built on: the catalog makes the metadata, so a schema left out of the
	 * request would never reach the table. */
	if (schema_changed) {
		cm.schema = floe_ice_meta_current_schema(t->meta);
		cm.base_schema_id = t->catalog_schema_id;
	}
	/* So do a partition spec and a sort order the attempt made the default
	 * (floe_table_evolve_spec): added when the loaded table had no such id. */
	int32_t spec = floe_ice_meta_default_spec_id(t->meta);
	int32_t order = floe_ice_meta_default_sort_order_id(t->meta);
	if (spec != t->catalog_spec_id) {
		cm.set_spec = true;
		cm.spec_id = spec;
		cm.base_spec_id = t->catalog_spec_id;
		if (spec > t->catalog_last_spec_id)
			cm.add_spec = floe_ice_meta_spec(t->meta, spec);
	}
	if (order != t->catalog_sort_order_id) {
		cm.set_sort_order = true;
		cm.sort_order_id = order;
		cm.base_sort_order_id = t->catalog_sort_order_id;
		if (order > t->catalog_last_sort_order_id)
			cm.add_sort_order = floe_ice_meta_sort_order(t->meta, order);
	}
	/* The snapshots this commit expires (floe_table_expire_plan: history.expire.* and
	 * floe's own bound), removed by the catalog in the same commit with the properties
	 * the expiry raised (installations' floe.committed-seq, which recovery reads once a
	 * commit's snapshot is gone): with nothing configured, a table in a catalog stays
	 * as bounded as one without. Schema-only commits expire nothing. The files the
	 * expired snapshots alone named are deleted by floe_table_put_next once it lands. */
	struct floe_ice_kv *props = NULL;
	if (snap && x && x->nexpired) {
		cm.remove_ids = x->ids + 1; /* ids[0] is the oldest snapshot kept */
		cm.nremove = x->nexpired;
		if (x->props.n && !(props = floe_calloc(t->alloc, x->props.n, sizeof(*props))))
			return FLOE_ENOMEM;
		for (size_t i = 0; i < x->props.n; i++) {
			const char *k = floe_table_path_at(&x->props, i);
			const char *val = floe_ice_meta_property(t->meta, k);
			if (val)
				props[cm.nprops++] = (struct floe_ice_kv){k, val};
		}
		cm.props = props;
	}
	struct floe_ice_meta *m = NULL;
	int64_t v = 0;
	/* The answer's ETag, where the catalog gives one, makes the next cycle's load a 304
	 * while nobody else commits: a single writer then loads its table whole once, not
	 * at every commit. */
	int rc = floe_catalog_rest_commit(t->opt.catalog, t->opt.name, &cm, t->etag, &m, &v, unknown, &t->err);
	floe_free(t->alloc, props);
	if (rc == 0 && cm.nremove)
		floe_info("table: %s: %zu snapshots expired through the catalog", t->opt.name, cm.nremove);
	if (rc == 0) {
		if ((rc = take(t, m, v)))
			t->etag[0] = '\0';
		return rc;
	}
	if (rc == FLOE_ECONFLICT)
		return rc;
	if (*unknown && floe_catalog_rest_retry_after_us(t->opt.catalog) > 0) {
		/* The catalog said when to come back (503 with Retry-After): not at once, but
		 * at the next commit, which the runner puts off that long; its reload looks for
		 * this snapshot (by floe.commit-seq) as a retry's would. */
		floe_warn("table: the commit to %s may or may not have landed (%s): the catalog "
			  "asked for %.0f s (Retry-After), and the next commit looks for it then",
			  t->opt.name, t->err.msg,
			  (double)floe_catalog_rest_retry_after_us(t->opt.catalog) / 1e6);
		return rc;
	}
	if (*unknown) {
		/* The reload of the next attempt looks for this snapshot (by id and
		 * floe.commit-seq) before anything else is tried. */
		if (snap)
			floe_warn("table: the commit of snapshot %" PRId64 " to %s may or may not have "
				  "landed (%s): reloading to see",
				  snap->snapshot_id, t->opt.name, t->err.msg);
		else
			floe_warn("table: the schema change of %s may or may not have landed (%s): "
				  "reloading to see",
				  t->opt.name, t->err.msg);
		return FLOE_ECONFLICT;
	}
	return rc;
}

/* The steps every snapshot commit takes, an append (table_commit.c), a replace
 * (table_replace.c), a schema reservation (table_reserve.c) and an expiry-only commit
 * alike: the parent's manifest list read, the typed columns and the configuration's spec
 * evolved into the attempt's metadata, the manifest list stored, the snapshot added, the
 * next metadata version created if absent, and the retry loop around them. A commit kind
 * gives its steps (struct floe_table_step); none of them is called from here. */
#include "agent/lake/table_impl.h"
#include "agent/schema/columns.h"
#include "formats/iceberg/schema.h"

#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"
#include "formats/iceberg/manifest.h"
#include "formats/iceberg/metadata.h"
#include "agent/env/env.h"
#include "platform/crash.h"
#include "platform/log.h"
#include "platform/store.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* Reads the parent's manifest list (NULL when there is no parent). */
int floe_table_read_list(struct floe_table *t, long parent_idx, struct floe_ice_manifest_list **out)
{
	*out = NULL;
	if (parent_idx < 0)
		return 0;
	int64_t id, parent, seq, ts;
	const char *uri;
	int rc =
	    floe_ice_meta_snapshot_at(t->meta, (size_t)parent_idx, &id, &parent, &seq, &ts, &uri);
	if (rc)
		return rc;
	if (!uri) {
		floe_error("table: snapshot %" PRId64
			   " has no manifest list (v1 inline manifests are "
			   "not supported)",
			   id);
		return FLOE_EUNSUPPORTED;
	}
	char key[FLOE_TABLE_PATH_CAP];
	if ((rc = floe_store_key(t->store, uri, key, sizeof(key)))) {
		char path[FLOE_TABLE_PATH_CAP + 64];
		floe_table_meta_path(t, t->version, path, sizeof(path));
		return floe_table_fail(
		    t, FLOE_EUNSUPPORTED,
		    "%s: the current snapshot %" PRId64
		    "'s manifest list %s is not inside the warehouse %s "
		    "(the table was written elsewhere, or moved): floe can only append to a table "
		    "whose "
		    "files are in its warehouse; point lake.warehouse at the table's location",
		    path, id, uri, t->store->uri);
	}
	void *data = NULL;
	size_t len = 0;
	/* Gone: a concurrent commit expired the snapshot we took for current; lost race. */
	if ((rc = floe_store_get(t->store, key, FLOE_TABLE_MANIFEST_MAX, &data, &len)))
		return floe_table_fail(t, rc == -ENOENT ? FLOE_ECONFLICT : rc,
				       "reading manifest list %s failed: %s", uri,
				       floe_strerror(rc));
	struct floe_err e;
	rc = floe_ice_manifest_list_read(t->alloc, data, len, out, &e);
	floe_store_free_data(t->store, data);
	if (rc)
		return floe_table_fail(t, rc, "manifest list %s: %s", uri, floe_err_text(&e, rc));
	return 0;
}

/* Metadata-log entries kept: write.metadata.previous-versions-max. */
size_t floe_table_max_log(const struct floe_table *t)
{
	const struct floe_table_props *p = t->opt.props;
	if (!p)
		return t->opt.max_log;
	int64_t v =
	    floe_table_prop(t, "write.metadata.previous-versions-max", p->previous_versions_max);
	return v < 1 ? 1 : (size_t)(v > 100000 ? 100000 : v);
}

int floe_table_put_list(struct floe_table *t, const struct floe_table_merge_in *mi,
			const struct floe_buf *b, char *path, size_t cap, char *uri, size_t ucap)
{
	/* A new name per attempt (snapshot id, attempt, commit uuid): created, never replaced. */
	snprintf(path, cap, "%ssnap-%" PRId64 "-%u-%s.avro", t->metadir, mi->snapshot_id,
		 mi->attempt, mi->commit_uuid);
	int rc;
	if ((rc = floe_store_uri(t->store, path, uri, ucap)) ||
	    (rc = floe_store_put_if_absent(t->store, path, b->data, b->len))) {
		if (rc == -EEXIST)
			rc =
			    floe_table_fail(t, FLOE_EEXIST, "manifest list %s exists already", uri);
		else
			rc = floe_table_fail(t, rc, "storing manifest list %s failed: %s", uri,
					     floe_strerror(rc));
	}
	return rc;
}

int floe_table_add_snapshot(struct floe_table *t, const struct floe_ice_snapshot *snap,
			    int64_t now_ms, struct floe_table_expiry *x)
{
	struct floe_ice_meta *m = t->meta;
	char prev[FLOE_TABLE_PATH_CAP + 64], prev_uri[2 * FLOE_TABLE_PATH_CAP + 80];
	floe_table_meta_path(t, t->version, prev, sizeof(prev));
	int rc;
	t->pending = snap;
	if ((rc = floe_store_uri(t->store, prev, prev_uri, sizeof(prev_uri))) ||
	    (rc = floe_table_expire_log(t, m, floe_table_max_log(t), x)))
		return rc;
	if (snap)
		rc = floe_ice_meta_add_snapshot(m, snap, prev_uri, now_ms, floe_table_max_log(t));
	else
		rc = floe_ice_meta_touch(m, prev_uri, now_ms, floe_table_max_log(t));
	return rc ? rc : floe_table_expire_plan(t, m, now_ms, x);
}

int floe_table_put_next(struct floe_table *t, struct floe_buf *b, const char *crash_before,
			const char *crash_after, const struct floe_table_expiry *x, bool *unknown)
{
	char next[FLOE_TABLE_PATH_CAP + 64];
	if (t->opt.catalog) { /* the catalog moves the branch; it writes the metadata */
		int rc = floe_table_catalog_put(t, x, unknown);
		/* What the snapshots it removed alone named (it was sent their removal only
		 * with a snapshot of ours). */
		if (rc == 0 && x && t->pending)
			floe_table_expire_clean(t, x);
		return rc;
	}
	floe_buf_reset(b);
	int rc = floe_ice_meta_write(t->meta, b);
	if (rc)
		return rc;
	floe_table_meta_path(t, t->version + 1, next, sizeof(next));
	*unknown = true;
	if (crash_before)
		floe_crashpoint(crash_before);
	rc = floe_store_put_if_absent(t->store, next, b->data, b->len);
	if (rc == 0) {
		if (crash_after)
			floe_crashpoint(crash_after);
		t->version++;
		floe_table_seen(t);
		floe_table_write_hint(t, t->version);
		floe_table_expire_clean(t, x);
		/* The model's document keeps every value a commit ever added to it, expired
		 * snapshots included (17.6 KB a commit, measured): read back from what was
		 * written, it holds the current version only, so a handle's memory stays flat
		 * over years of commits. Should that fail, the edited model is still right. */
		struct floe_ice_meta *fresh = NULL;
		if (floe_ice_meta_parse(t->alloc, (const char *)b->data, b->len, &fresh, NULL) ==
		    0) {
			floe_ice_meta_free(t->meta);
			t->meta = fresh;
		}
	} else if (rc == -EEXIST) {
		*unknown = false;
		rc = floe_table_fail(t, FLOE_ECONFLICT, "%s was created by another writer first",
				     next);
	} else {
		/* Said with the file's name: a local disk's ENOSPC alone names nothing. */
		rc = floe_table_fail(t, rc, "storing %s failed: %s", next, floe_strerror(rc));
	}
	return rc;
}

/* The typed columns into the schema of the metadata this attempt writes, so that the
 * schema change and the files written under it land in one version, whatever the
 * catalog; on a retry the freshly loaded schema is evolved again, so a schema another
 * writer committed meanwhile is merged, or refused when it took the ids or retyped a
 * column the files were written with. */
/* The built-in columns floe writes, as the table names and types them (another engine
 * may have renamed one; floe_log_schema_check holds their ids), given to the evolution
 * with the typed ones: it makes optional every required field a writer does not name,
 * and floe writes these. The message is not named when lines may leave it null
 * (message_null), so that the table's field becomes optional. */
static size_t builtin_columns(const struct floe_ice_meta *m, bool message_null,
			      struct floe_ice_column *out)
{
	size_t n = 0;
	for (int32_t id = FLOE_COL_TS; id <= FLOE_COL_MESSAGE; id++) {
		const char *type = NULL, *name = NULL;
		bool required = false;
		if ((id == FLOE_COL_MESSAGE && message_null) ||
		    !floe_ice_meta_schema_field(m, id, &type, &required, &name) || !type || !name)
			continue;
		out[n++] = (struct floe_ice_column){.name = name, .type = type, .id = id};
	}
	return n;
}

int floe_table_evolve_plan(struct floe_table *t, struct floe_ice_meta *m,
			   const struct floe_colplan *p, bool *changed_out)
{
	bool typed = p && p->planned && p->n;
	if (!typed && !(p && p->message_unparsed))
		return 0;
	struct floe_ice_column cols[FLOE_LOG_NCOLS + FLOE_COLS_MAX];
	struct floe_err e = {0};
	bool changed = false;
	size_t nb = builtin_columns(m, p->message_unparsed, cols);
	floe_colplan_ice_columns(p, cols + nb);
	int64_t now_ms = t->clock->wall_us(t->clock->ctx) / 1000;
	int rc = floe_ice_meta_evolve_schema(m, cols, nb + (typed ? p->n : 0), NULL, &changed, NULL,
					     now_ms, floe_table_max_log(t), &e);
	if (rc == 0)
		rc = floe_colplan_check(p, m, &e);
	if (rc)
		return floe_table_fail(t, rc, "table %s: the typed columns cannot be committed: %s",
				       t->location, floe_err_text(&e, rc));
	if (changed) {
		floe_info("table: %s gets schema %d for the typed columns", t->location,
			  (int)floe_ice_meta_current_schema_id(m));
		/* The schema is changed in memory only: nothing of it is stored yet. */
		floe_crashpoint("commit-after-evolve");
	}
	if (changed_out)
		*changed_out = changed;
	return 0;
}

static int evolve_columns(struct floe_table *t, struct floe_ice_meta *m)
{
	return floe_table_evolve_plan(t, m, t->opt.columns, NULL);
}

/* The configuration's spec into the metadata this attempt writes (the change rides on
 * the snapshot, as the schema's does). The files were described under the id and field
 * ids the table gave the spec when the commit began; should another writer have taken
 * them for another spec meanwhile, the attempt is lost and t->spec_moved says that the
 * manifest must be written again under the new ids. */
static int check_spec(struct floe_table *t, struct floe_ice_meta *m)
{
	struct floe_part_spec now;
	int32_t order = -1;
	int rc = floe_table_evolve_spec(t, m, &now);
	if (rc || (rc = floe_table_evolve_sort(t, m, &order)))
		return rc;
	bool same =
	    now.spec_id == t->spec.spec_id && now.n == t->spec.n && order == t->sort_order_id;
	for (size_t i = 0; i < now.n && same; i++)
		same = now.f[i].field_id == t->spec.f[i].field_id;
	if (same)
		return 0;
	t->spec_moved = true;
	return floe_table_fail(t, FLOE_ECONFLICT,
			       "partition spec %d or sort order %d was given to "
			       "another by another writer first",
			       (int)t->spec.spec_id, (int)t->sort_order_id);
}

/* An attempt whose outcome is unknown may have landed with the snapshots it expired:
 * their files are then unused, and no later commit plans to delete them (they are no
 * longer in the table). Its plan is kept until a reload tells (a memory failure leaves
 * the files, as before). */
static void keep_lost(struct floe_table *t, int64_t snapshot_id, struct floe_table_expiry *x)
{
	if (!t->lost && !(t->lost = floe_calloc(t->alloc, 1, sizeof(*t->lost))))
		return;
	floe_table_expiry_fini(t, t->lost);
	*t->lost = *x;
	t->lost_snapshot = snapshot_id;
	memset(x, 0, sizeof(*x));
}

void floe_table_settle_lost(struct floe_table *t)
{
	if (!t->lost || !(t->lost->nexpired || t->lost->logs.n))
		return;
	if (t->meta && floe_ice_meta_find_snapshot(t->meta, t->lost_snapshot) >= 0) {
		floe_info("table: snapshot %" PRId64
			  " of %s had landed (its answer lost): deleting what it expired",
			  t->lost_snapshot, t->opt.name);
		floe_table_expire_clean(t, t->lost);
	}
	floe_table_expiry_fini(t, t->lost);
}

int floe_table_attempt(struct floe_table *t, const struct floe_table_step *st, void *ctx,
		       struct floe_table_merge_in *mi, bool *unknown)
{
	struct floe_ice_meta *m = t->meta;
	int64_t parent = floe_ice_meta_current_snapshot_id(m);
	long pidx = parent >= 0 ? floe_ice_meta_find_snapshot(m, parent) : -1;
	struct floe_buf b;
	floe_buf_init(&b, t->alloc, FLOE_TABLE_METADATA_MAX);
	struct floe_table_merge mg = {0};
	struct floe_table_expiry x = {0};
	char *schema = NULL, *spec = NULL;
	*unknown = false;
	mi->seq = floe_ice_meta_last_sequence(m) + 1;
	int rc = evolve_columns(t, m);
	if (rc == 0)
		rc = check_spec(t, m);
	if (rc == 0)
		rc = floe_table_write_json(t->alloc, floe_ice_meta_current_schema(m), &schema);
	if (rc == 0)
		rc = floe_table_write_json(t->alloc, floe_ice_meta_default_spec_fields(m), &spec);
	mi->schema_json = schema;
	mi->spec_json = spec;
	if (rc || (rc = st->list(t, ctx, parent, pidx, mi, &mg, &b)))
		goto out;
	char list_path[FLOE_TABLE_PATH_CAP + 128], list_uri[2 * FLOE_TABLE_PATH_CAP + 160];
	if ((rc = floe_table_put_list(t, mi, &b, list_path, sizeof(list_path), list_uri,
				      sizeof(list_uri))))
		goto out;
	struct floe_table_summary sum;
	st->summary(t, ctx, pidx, &sum);
	int64_t mono_ms;
	int64_t now = floe_table_snapshot_time(t, m, pidx, &mono_ms);
	struct floe_ice_snapshot snap = {
	    .snapshot_id = mi->snapshot_id,
	    .parent_id = parent,
	    .sequence_number = mi->seq,
	    .timestamp_ms = now,
	    .manifest_list = list_uri,
	    .operation = st->operation,
	    .summary = sum.kv,
	    .summary_count = sum.n,
	    .schema_id = floe_ice_meta_current_schema_id(m),
	};
	if ((rc = floe_table_add_snapshot(t, &snap, now, &x)) == 0)
		rc = floe_table_put_next(t, &b, st->crash_before, st->crash_after, &x, unknown);
	/* Lost (the race, or before the write): the list is nobody's. */
	if (rc && !*unknown)
		floe_store_remove(t->store, list_path);
	if (rc == 0)
		floe_table_snapshot_taken(t, now, mono_ms);
	if (rc == 0 && st->committed)
		st->committed(t, ctx, &mg);
out:
	/* Merged manifests of an attempt that did not commit are nobody's; they stay when a
	 * failure may hide a commit that landed. */
	floe_table_merge_fini(t, &mg, rc != 0 && !*unknown);
	if (rc && *unknown && (x.nexpired || x.logs.n))
		keep_lost(t, mi->snapshot_id, &x);
	floe_table_expiry_fini(t, &x);
	mi->schema_json = mi->spec_json = NULL;
	floe_free(t->alloc, schema);
	floe_free(t->alloc, spec);
	floe_buf_fini(&b);
	return rc;
}

int floe_table_retry(struct floe_table *t, const char *what, floe_table_try *try_fn, void *ctx)
{
	unsigned delay_ms = 10;
	for (unsigned i = 1; i <= t->opt.max_attempts; i++) {
		int rc = i > 1 ? floe_table_reload(t) : 0;
		if (rc)
			return rc;
		floe_table_settle_lost(t);
		rc = try_fn(t, ctx, i);
		/* A failed try may have edited the loaded metadata: force a reload. */
		if (rc)
			t->version = 0;
		if (rc != FLOE_ECONFLICT)
			return rc;
		floe_table_back_off(t, i, &delay_ms);
	}
	return floe_table_fail(t, FLOE_ECONFLICT, "%u %s attempts lost the race to other writers",
			       t->opt.max_attempts, what);
}

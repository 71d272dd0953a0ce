/* Snapshot expiry and metadata cleanup on commit, by Iceberg's table properties:
 * history.expire.max-snapshot-age-ms and history.expire.min-snapshots-to-keep choose the
 * snapshots a commit removes from the metadata it writes; once that metadata is the
 * table's, their manifest lists, the manifests no retained snapshot lists, and (with
 * write.metadata.delete-after-commit.enabled) the metadata files that fell off the
 * metadata-log are deleted, and so are the data files that a replace (compaction,
 * table_replace.c) removed, once no retained snapshot lists them: when the replace
 * snapshot's parent expires. Those are the entries a replace snapshot S wrote as
 * DELETED with its own id, in the manifests it added; they are live in S's ancestors
 * only, so once S is the oldest retained snapshot (or expired itself) nothing needs them.
 * Each such S is handled when its parent expires, that is while S is the oldest
 * retained snapshot or one of the expired ones newer than the oldest expired one (whose
 * own parent expired, and was handled, in an earlier commit).
 *
 * Which manifests are safe to delete is decided without reading every retained
 * snapshot's list: expiry runs only on a table whose snapshots are all ancestors of the
 * current one and whose only ref is main, and it removes the oldest ancestors. Along one
 * line of history a manifest is listed by a contiguous run of snapshots (each list is its
 * parent's, less what was merged, plus new manifests), so a manifest of an expired
 * snapshot that the oldest retained snapshot does not list is listed by no retained one.
 * A table with branches, tags or snapshots off main's line (another engine's rollback) is
 * left alone: that needs a full scan, which belongs to a maintenance command.
 *
 * An age alone does not bound a table: at one commit a second an hour is 3,600 snapshots,
 * and every commit rewrites a metadata.json that holds them all (2.8 MB), so the cost
 * of a commit grew with the table's age for that hour. floe.history.max-snapshots-to-keep
 * (floe's own key; floe sets it on the tables it creates, see table.c) also expires the
 * oldest snapshots beyond that many, whatever their age; min-snapshots-to-keep still wins.
 *
 * Expiry must not cost exactly-once: recovery finds an installation's last commit by its
 * floe.commit-seq in the ancestry. The highest commit-seq of each installation among the
 * removed snapshots goes to the table property floe.committed-seq.<installation id> in
 * the same metadata, so floe_table_committed_seq still finds it. Another engine's expiry
 * does not keep it: then a commit that finds its data files already uploaded (its own
 * names) looks for them in the current manifests (floe_table_live_count) and takes them
 * as committed when they are live. */
#include "agent/lake/table_impl.h"

#include "formats/base/alloc.h"
#include "formats/base/error.h"
#include "formats/iceberg/manifest.h"
#include "formats/iceberg/metadata.h"
#include "platform/log.h"
#include "platform/store.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Snapshots one commit expires at most, oldest first: a table that turns expiry on with a
 * long history catches up over several commits, each with bounded work. */
#define EXPIRE_MAX 100

#define PATH(p, i) ((p)->buf + (p)->off[i])

static int paths_add(struct floe_table_paths *p, const char *s)
{
	size_t l = strlen(s) + 1;
	if (p->len + l > p->cap) {
		size_t cap = (p->cap ? p->cap * 2 : 4096) + l;
		char *b = floe_realloc(p->a, p->buf, cap);
		if (!b)
			return FLOE_ENOMEM;
		p->buf = b;
		p->cap = cap;
	}
	if (p->n == p->ncap) {
		size_t cap = p->ncap ? p->ncap * 2 : 64;
		size_t *o = cap > SIZE_MAX / sizeof(*o) ? NULL : floe_realloc(p->a, p->off, cap * sizeof(*o));
		if (!o)
			return FLOE_ENOMEM;
		p->off = o;
		p->ncap = cap;
	}
	memcpy(p->buf + p->len, s, l);
	p->off[p->n++] = p->len;
	p->len += l;
	return 0;
}

static bool paths_has(const struct floe_table_paths *p, const char *s)
{
	for (size_t i = 0; i < p->n; i++)
		if (strcmp(p->buf + p->off[i], s) == 0)
			return true;
	return false;
}


int floe_table_expire_log(struct floe_table *t, const struct floe_ice_meta *m, size_t max_log,
			  struct floe_table_expiry *x)
{
	const struct floe_table_props *p = t->opt.props;
	/* In a REST catalog the metadata files and their log are the catalog's. */
	if (!p || t->opt.catalog ||
	    !floe_table_prop(t, "write.metadata.delete-after-commit.enabled", p->delete_after_commit))
		return 0;
	size_t have = floe_ice_meta_log_count(m);
	if (have + 1 <= max_log)
		return 0;
	size_t drop = have + 1 - max_log;
	int rc = 0;
	x->logs.a = t->alloc;
	for (size_t i = 0; i < drop && rc == 0; i++) {
		const char *f = floe_ice_meta_log_file(m, i);
		if (f)
			rc = paths_add(&x->logs, f);
	}
	return rc;
}

/* The snapshots of m's current ancestry, newest first, into anc (indices); false when
 * they are not all of m's snapshots. */
static bool ancestry(const struct floe_ice_meta *m, long *anc, size_t cap, size_t *na)
{
	int64_t id = floe_ice_meta_current_snapshot_id(m);
	long i = (long)floe_ice_meta_snapshot_count(m) - 1;
	*na = 0;
	while (id >= 0 && *na < cap) {
		i = floe_ice_meta_find_snapshot_near(m, id, i);
		int64_t sid, seq, ts;
		const char *ml;
		if (i < 0 || floe_ice_meta_snapshot_at(m, (size_t)i, &sid, &id, &seq, &ts, &ml))
			break;
		anc[(*na)++] = i--;
	}
	return *na == cap;
}

/* Raises floe.committed-seq.<installation> to the commit-seq of snapshot i if it is a
 * floe commit. */
static int keep_watermark(struct floe_ice_meta *m, size_t i, struct floe_table_paths *raised)
{
	const char *inst = floe_ice_meta_snapshot_summary(m, i, "floe.installation-id");
	const char *seq = floe_ice_meta_snapshot_summary(m, i, "floe.commit-seq");
	if (!inst || !seq)
		return 0;
	char key[128], val[24];
	if (snprintf(key, sizeof(key), "floe.committed-seq.%s", inst) >= (int)sizeof(key))
		return 0;
	const char *old = floe_ice_meta_property(m, key);
	long long s = strtoll(seq, NULL, 10);
	if (old && strtoll(old, NULL, 10) >= s)
		return 0;
	snprintf(val, sizeof(val), "%lld", s);
	struct floe_ice_kv kv = {key, val};
	int rc = floe_ice_meta_set_properties(m, &kv, 1);
	return rc || paths_has(raised, key) ? rc : paths_add(raised, key);
}

/* The first ancestry position to expire: past min_keep, and older than the age limit. */
static size_t first_expired(const struct floe_ice_meta *m, const long *anc, size_t na, int64_t min_keep,
			    int64_t cutoff)
{
	size_t k = 0;
	for (; k < na; k++) {
		int64_t id, parent, seq, ts;
		const char *ml;
		if (floe_ice_meta_snapshot_at(m, (size_t)anc[k], &id, &parent, &seq, &ts, &ml))
			return na;
		if ((int64_t)k >= min_keep && ts < cutoff)
			break;
	}
	return k;
}

/* Fills x with the expired snapshots anc[from..na) and the oldest kept one anc[from-1],
 * records their watermarks and removes them from m. */
static int expire_range(struct floe_table *t, struct floe_ice_meta *m, const long *anc, size_t from,
			size_t na, struct floe_table_expiry *x)
{
	int64_t ids[EXPIRE_MAX];
	size_t n = na - from;
	x->lists.a = t->alloc;
	x->props.a = t->alloc;
	if (!(x->ids = floe_calloc(t->alloc, n + 1, sizeof(*x->ids))))
		return FLOE_ENOMEM;
	for (size_t k = from - 1; k < na; k++) {
		int64_t parent, seq, ts;
		const char *ml;
		int64_t *id = &x->ids[k - (from - 1)];
		int rc = floe_ice_meta_snapshot_at(m, (size_t)anc[k], id, &parent, &seq, &ts, &ml);
		if (rc)
			return rc;
		if (k >= from)
			ids[k - from] = *id;
		/* Entry 0 is the oldest kept snapshot's list; an unnamed list stays "". */
		if ((rc = paths_add(&x->lists, ml ? ml : "")) ||
		    (k >= from && (rc = keep_watermark(m, (size_t)anc[k], &x->props))))
			return rc;
	}
	x->nexpired = n;
	return floe_ice_meta_remove_snapshots(m, ids, n);
}

int floe_table_expire_plan(struct floe_table *t, struct floe_ice_meta *m, int64_t now_ms,
			   struct floe_table_expiry *x)
{
	const struct floe_table_props *p = t->opt.props;
	if (!p)
		return 0;
	int64_t max_age = floe_table_prop(t, "history.expire.max-snapshot-age-ms", (int64_t)p->max_snapshot_age_ms);
	int64_t min_keep = floe_table_prop(t, "history.expire.min-snapshots-to-keep", p->min_snapshots);
	int64_t max_keep = floe_table_prop(t, FLOE_TABLE_MAX_SNAPSHOTS_KEY, 0);
	if (min_keep < 1)
		min_keep = 1;
	size_t total = floe_ice_meta_snapshot_count(m);
	if ((int64_t)total <= min_keep)
		return 0;
	int64_t head;
	if (floe_ice_meta_ref_heads(m, &head, 1) != 1) {
		floe_debug("table: the table has branches or tags: snapshots are not expired on commit");
		return 0;
	}
	long *anc = floe_calloc(t->alloc, total, sizeof(*anc));
	if (!anc)
		return FLOE_ENOMEM;
	size_t na = 0;
	int rc = 0;
	if (!ancestry(m, anc, total, &na)) {
		floe_debug("table: snapshots off main's line: snapshots are not expired on commit");
		goto out;
	}
	size_t from = first_expired(m, anc, na, min_keep, now_ms - max_age);
	if (max_keep > 0 && max_keep < min_keep)
		max_keep = min_keep;
	if (max_keep > 0 && (int64_t)from > max_keep)
		from = (size_t)max_keep;
	if (from < na && na - from > EXPIRE_MAX)
		from = na - EXPIRE_MAX;
	if (from < na)
		rc = expire_range(t, m, anc, from, na, x);
out:
	floe_free(t->alloc, anc);
	return rc;
}

/* ---- deleting what the committed metadata no longer names ---- */

/* Reads the manifest list at uri into *l from the bytes *data (both the caller's to free,
 * and set as far as the reading came). */
static int load_list(struct floe_table *t, const char *uri, void **data, struct floe_ice_manifest_list **l)
{
	char key[FLOE_TABLE_PATH_CAP];
	size_t len = 0;
	int rc = floe_store_key(t->store, uri, key, sizeof(key));
	if (rc == 0)
		rc = floe_store_get(t->store, key, FLOE_TABLE_MANIFEST_MAX, data, &len);
	if (rc == 0)
		rc = floe_ice_manifest_list_read(t->alloc, *data, len, l, NULL);
	return rc;
}

/* Adds the manifests the list at uri names to p, or those not in keep (may be NULL). */
static int read_list(struct floe_table *t, const char *uri, const struct floe_table_paths *keep, struct floe_table_paths *p)
{
	void *data = NULL;
	struct floe_ice_manifest_list *l = NULL;
	int rc = load_list(t, uri, &data, &l);
	for (size_t i = 0; rc == 0 && i < floe_ice_manifest_list_count(l); i++) {
		const char *m = floe_ice_manifest_list_at(l, i)->path;
		if ((!keep || !paths_has(keep, m)) && !paths_has(p, m))
			rc = paths_add(p, m);
	}
	floe_ice_manifest_list_free(l);
	floe_store_free_data(t->store, data);
	return rc;
}

/* Marks the object at uri for deletion if it is in the warehouse (its key into doomed). */
static int remove_uri(struct floe_table *t, const char *uri, struct floe_table_paths *doomed)
{
	char key[FLOE_TABLE_PATH_CAP];
	if (floe_store_key(t->store, uri, key, sizeof(key)))
		return 0; /* not floe's to delete */
	return paths_add(doomed, key);
}

/* Deletes the doomed keys, as few requests as the store allows (S3: DeleteObjects, a
 * thousand keys each); a failure leaves unused files and is logged by the store. */
static size_t remove_all(struct floe_table *t, const struct floe_table_paths *doomed)
{
	size_t removed = 0;
	const char **keys = doomed->n ? floe_calloc(t->alloc, doomed->n, sizeof(*keys)) : NULL;
	if (doomed->n && !keys) {
		floe_warn("table: no memory to delete %zu unused files; they stay", doomed->n);
		return 0;
	}
	for (size_t i = 0; i < doomed->n; i++)
		keys[i] = PATH(doomed, i);
	int rc = doomed->n ? floe_store_remove_many(t->store, keys, doomed->n, &removed) : 0;
	if (rc)
		floe_warn("table: deleting unused files failed: %s (%zu of %zu stay)", floe_strerror(rc),
			  doomed->n - removed, doomed->n);
	floe_free(t->alloc, keys);
	return removed;
}

/* Deletes the data files snapshot id removed, by the manifests the list at uri names
 * that id added with deleted entries. */
static int remove_replaced(struct floe_table *t, const char *uri, int64_t id, struct floe_table_paths *doomed)
{
	char key[FLOE_TABLE_PATH_CAP];
	void *data = NULL;
	struct floe_ice_manifest_list *l = NULL;
	int rc = load_list(t, uri, &data, &l);
	for (size_t i = 0; rc == 0 && i < floe_ice_manifest_list_count(l); i++) {
		const struct floe_ice_manifest_entry *e = floe_ice_manifest_list_at(l, i);
		void *mdata = NULL;
		size_t mlen = 0;
		struct floe_ice_entry_reader *r = NULL;
		struct floe_ice_entry ent;
		if (e->content != 0 || e->added_snapshot_id != id || e->deleted_files <= 0)
			continue;
		rc = floe_store_key(t->store, e->path, key, sizeof(key));
		if (rc == 0)
			rc = floe_store_get(t->store, key, FLOE_TABLE_MANIFEST_MAX, &mdata, &mlen);
		if (rc == 0)
			rc = floe_ice_entry_reader_new(t->alloc, mdata, mlen, e, &r, NULL);
		while (rc == 0 && (rc = floe_ice_entry_reader_next(r, &ent, NULL)) == 1) {
			rc = 0;
			if (ent.status == 2 && ent.snapshot_id == id && ent.content == 0)
				rc = remove_uri(t, ent.path, doomed);
		}
		floe_ice_entry_reader_free(r);
		floe_store_free_data(t->store, mdata);
	}
	floe_ice_manifest_list_free(l);
	floe_store_free_data(t->store, data);
	return rc;
}

void floe_table_expire_clean(struct floe_table *t, const struct floe_table_expiry *x)
{
	struct floe_table_paths keep = {.a = t->alloc}, gone = {.a = t->alloc}, doomed = {.a = t->alloc};
	int rc = 0;
	/* Before the manifests go: they say which data files the replaces removed. A
	 * snapshot's removed files may go once its parent has expired: those of the oldest
	 * kept snapshot and of every expired one. The oldest expired snapshot's parent
	 * expired earlier, and the commit that expired it should have deleted them; but that
	 * commit's clean-up may not have come (a crash after the commit) or may have found
	 * the list gone (another writer's clean-up deleted it first), so they are looked for
	 * again here. Deleting what is gone already is no error. */
	for (size_t i = 0; x->nexpired && i < x->lists.n; i++) {
		if (PATH(&x->lists, i)[0] && (rc = remove_replaced(t, PATH(&x->lists, i), x->ids[i], &doomed)))
			floe_warn("table: reading what snapshot %" PRId64 " replaced failed: %s; its old data "
				  "files stay", x->ids[i], floe_strerror(rc));
	}
	rc = 0;
	if (x->nexpired) {
		/* Without the oldest kept list nothing proves a manifest unused: keep them all. */
		const char *oldest = PATH(&x->lists, 0);
		rc = oldest[0] ? read_list(t, oldest, NULL, &keep) : FLOE_ENOTFOUND;
		for (size_t i = 1; rc == 0 && i < x->lists.n; i++)
			if (PATH(&x->lists, i)[0])
				rc = read_list(t, PATH(&x->lists, i), &keep, &gone);
		if (rc)
			floe_warn("table: reading the manifest lists of expired snapshots failed: %s; "
				  "their manifests stay", floe_strerror(rc));
		for (size_t i = 0; rc == 0 && i < gone.n; i++)
			rc = remove_uri(t, PATH(&gone, i), &doomed);
		/* A snapshot's list is its own: it goes whatever its manifests' fate. */
		for (size_t i = 1; i < x->lists.n; i++)
			if (PATH(&x->lists, i)[0] && remove_uri(t, PATH(&x->lists, i), &doomed))
				break;
	}
	for (size_t i = 0; i < x->logs.n; i++)
		if (remove_uri(t, PATH(&x->logs, i), &doomed))
			break;
	size_t removed = remove_all(t, &doomed);
	if (x->nexpired || x->logs.n)
		floe_info("table: expired %zu snapshots; deleted %zu of %zu unused files", x->nexpired, removed,
			  doomed.n);
	floe_table_paths_fini(&keep);
	floe_table_paths_fini(&gone);
	floe_table_paths_fini(&doomed);
}

/* ---- finding data files in the current snapshot ---- */

/* Counts into *live the entries of the manifest listed as e that are live and name one
 * of paths[0..n). */
static int count_in_manifest(struct floe_table *t, const struct floe_ice_manifest_entry *e,
			     const char *const *paths, size_t n, size_t *live)
{
	char key[FLOE_TABLE_PATH_CAP];
	void *data = NULL;
	size_t len = 0;
	struct floe_ice_entry_reader *r = NULL;
	struct floe_ice_entry ent;
	int rc = floe_store_key(t->store, e->path, key, sizeof(key));
	if (rc == 0)
		rc = floe_store_get(t->store, key, FLOE_TABLE_MANIFEST_MAX, &data, &len);
	if (rc == 0)
		rc = floe_ice_entry_reader_new(t->alloc, data, len, e, &r, NULL);
	while (rc == 0 && (rc = floe_ice_entry_reader_next(r, &ent, NULL)) == 1) {
		rc = 0;
		for (size_t i = 0; ent.status != 2 && i < n; i++)
			if (strcmp(ent.path, paths[i]) == 0) {
				(*live)++;
				break;
			}
	}
	floe_ice_entry_reader_free(r);
	floe_store_free_data(t->store, data);
	if (rc)
		return floe_table_fail(t, rc, "reading manifest %s failed: %s", e->path, floe_strerror(rc));
	return 0;
}

int floe_table_live_count(struct floe_table *t, const char *const *paths, size_t n, size_t *live)
{
	*live = 0;
	int64_t cur = floe_ice_meta_current_snapshot_id(t->meta);
	long i = cur >= 0 ? floe_ice_meta_find_snapshot(t->meta, cur) : -1;
	int64_t id, parent, seq, ts;
	const char *uri = NULL;
	if (i < 0 || floe_ice_meta_snapshot_at(t->meta, (size_t)i, &id, &parent, &seq, &ts, &uri) || !uri)
		return 0;
	void *data = NULL;
	struct floe_ice_manifest_list *l = NULL;
	int rc = load_list(t, uri, &data, &l);
	if (rc)
		rc = floe_table_fail(t, rc, "reading manifest list %s failed: %s", uri, floe_strerror(rc));
	for (size_t k = 0; rc == 0 && k < floe_ice_manifest_list_count(l); k++) {
		const struct floe_ice_manifest_entry *e = floe_ice_manifest_list_at(l, k);
		if (e->content == 0)
			rc = count_in_manifest(t, e, paths, n, live);
	}
	floe_ice_manifest_list_free(l);
	floe_store_free_data(t->store, data);
	return rc;
}

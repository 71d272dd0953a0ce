/* The replace commit of compaction: data files written from the rows of older ones take
 * their place in one snapshot of operation "replace", as Iceberg's RewriteFiles does.
 *
 * The new files go into one manifest of ADDED entries, written once. Every attempt then
 * builds on the freshly loaded parent: each of the parent's data manifests that lists
 * one of the old files live is rewritten with that entry DELETED by this snapshot and
 * every other live entry EXISTING (snapshot id and both sequence numbers kept); the
 * others are carried over verbatim. The old files may be of any partition spec (maintain
 * rewrites older specs' files into the current one): the manifests listing them are
 * rewritten one per spec, each under its own spec, and a manifest of an older spec whose
 * entries are all DELETED leaves the list at the next replace. So appends that landed since the files were read
 * never conflict: their manifests are carried like any other. The attempt checks that
 * every old file is still live on that parent; if one is not (a concurrent compaction
 * replaced it, or another engine deleted it), committing would resurrect or duplicate
 * rows, so the replace is abandoned (FLOE_ENOTFOUND) and the caller drops its files.
 * Like an append, the commit point is the creation of the next metadata version, and
 * expiry on commit runs here too: the attempts are table_attempt.c's skeleton
 * (floe_table_attempt, floe_table_retry) with this file's list and summary. The old data files stay in the warehouse until the
 * snapshots that list them expire (table_expire.c deletes them then). */
#include "agent/lake/table_impl.h"

#include "agent/env/env.h"
#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"
#include "formats/iceberg/manifest.h"
#include "formats/iceberg/metadata.h"
#include "platform/crash.h"
#include "platform/log.h"
#include "platform/store.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One replace: the old files (sorted, for lookups), what the attempt found of them, and
 * the new files and their manifest. */
struct replace {
	const char **old;
	bool *seen;
	size_t nold, nseen;
	int64_t del_records, del_bytes;
	const struct floe_ice_data_file *added;
	size_t nadded;
	int64_t add_records, add_bytes;
	struct floe_table_merge_in mi; /* snapshot, seq, uuid, attempt, schema and spec */
	const char *manifest_uri;      /* the ADDED manifest */
	int64_t manifest_len;
	bool unknown; /* a failure that may hide a commit that landed */
};

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The index of path among the old files, or -1. */
static long old_index(const struct replace *rp, const char *path)
{
	const char **hit = bsearch(&path, rp->old, rp->nold, sizeof(*rp->old), cmp_str);
	return hit ? (long)(hit - rp->old) : -1;
}

/* The header of a manifest of spec (its fields' JSON: spec_json). */
static void manifest_info(const struct floe_table *t, const struct replace *rp, const struct floe_part_spec *spec,
			  const char *spec_json, struct floe_ice_manifest_part *parts,
			  struct floe_ice_manifest_info *info)
{
	floe_part_spec_manifest_parts(spec, parts);
	*info = (struct floe_ice_manifest_info){
	    .schema_json = rp->mi.schema_json,
	    .schema_id = floe_ice_meta_current_schema_id(t->meta),
	    .partition_spec_json = spec_json,
	    .partition_spec_id = spec->spec_id,
	    .parts = parts,
	    .nparts = spec->n,
	    .snapshot_id = rp->mi.snapshot_id,
	};
}

/* Copies the manifest in data into w: old files' live entries DELETED (recorded in rp),
 * every other live entry EXISTING, deleted entries dropped. With w NULL, only says in
 * *hits how many old files the manifest lists live. */
static int copy_entries(struct floe_table *t, struct replace *rp, const struct floe_ice_manifest_entry *listed,
			const void *data, size_t len, struct floe_ice_manifest_writer *w, size_t *hits)
{
	struct floe_ice_entry_reader *r = NULL;
	struct floe_ice_entry e;
	struct floe_err why = {0};
	*hits = 0;
	int rc = floe_ice_entry_reader_new(t->alloc, data, len, listed, &r, &why);
	while (rc == 0 && (rc = floe_ice_entry_reader_next(r, &e, &why)) == 1) {
		rc = 0;
		if (e.status == 2)
			continue;
		long k = e.content == 0 ? old_index(rp, e.path) : -1;
		*hits += k >= 0;
		if (!w)
			continue;
		if (k >= 0 && !rp->seen[k]) {
			rp->seen[k] = true;
			rp->nseen++;
			rp->del_records += e.record_count;
			rp->del_bytes += e.file_size;
		}
		if ((rc = floe_ice_manifest_writer_copy(w, &e, k >= 0 ? 2 : 0)))
			floe_err_set(&why, rc, "copying %s: %s", e.path, floe_strerror(rc));
	}
	floe_ice_entry_reader_free(r);
	if (rc)
		return floe_table_fail(t, rc, "manifest %s: %s", listed->path, floe_err_text(&why, rc));
	return 0;
}

/* Reads the manifest listed as e and copies its entries into w (see copy_entries); with
 * w NULL, only counts in *hits the old files it lists live. */
static int read_manifest(struct floe_table *t, struct replace *rp, const struct floe_ice_manifest_entry *e,
			 struct floe_ice_manifest_writer *w, size_t *hits)
{
	char key[FLOE_TABLE_PATH_CAP];
	void *data = NULL;
	size_t len = 0;
	int rc = floe_store_key(t->store, e->path, key, sizeof(key));
	if (rc)
		return floe_table_fail(t, rc, "manifest %s is outside the warehouse", e->path);
	/* Gone: a commit that expired the parent deleted it, so the parent is not current. */
	if ((rc = floe_store_get(t->store, key, FLOE_TABLE_MANIFEST_MAX, &data, &len)))
		return floe_table_fail(t, rc == -ENOENT ? FLOE_ECONFLICT : rc, "reading manifest %s failed: %s",
				       e->path, floe_strerror(rc));
	rc = copy_entries(t, rp, e, data, len, w, hits);
	floe_store_free_data(t->store, data);
	return rc;
}

/* Rewrites the manifests e[idx[0..n)] (those listing old files, all of spec spec_id) as
 * one, with the old files DELETED, stored under this attempt's name; *out gets its list
 * entry (storage in mg). Fewer manifests than one per rewritten one: the list stays
 * short. A manifest of an older spec is written under that spec, which its entries'
 * partition tuples follow. */
static int rewrite_manifests(struct floe_table *t, struct replace *rp, const struct floe_ice_manifest_entry *e,
			     const size_t *idx, size_t n, int32_t spec_id, struct floe_table_merge *mg,
			     struct floe_ice_manifest_entry *out)
{
	struct floe_ice_manifest_writer *w = NULL;
	struct floe_buf b;
	floe_buf_init(&b, t->alloc, FLOE_TABLE_MANIFEST_MAX);
	struct floe_ice_manifest_part parts[FLOE_PART_MAX];
	struct floe_ice_manifest_info info;
	struct floe_part_spec spec = t->spec;
	char *spec_json = NULL;
	bool current = spec_id == t->spec.spec_id;
	int rc = current ? 0 : floe_part_spec_from_table_id(&spec, t->meta, spec_id, NULL);
	if (rc)
		return floe_table_fail(t, rc, "manifest %s: partition spec %d is one floe cannot read", e[idx[0]].path,
				       (int)spec_id);
	if (!current &&
	    (rc = floe_table_write_json(t->alloc, floe_ice_meta_spec_fields(t->meta, spec_id), &spec_json)))
		return rc;
	manifest_info(t, rp, &spec, current ? rp->mi.spec_json : spec_json, parts, &info);
	uint8_t sync[16];
	struct floe_ice_manifest_stats st;
	size_t hits;
	rc = t->rand->fill(t->rand->ctx, sync, sizeof(sync));
	if (rc == 0)
		rc = floe_ice_manifest_writer_new(t->alloc, &info, sync, &b, &w);
	for (size_t i = 0; i < n && rc == 0; i++)
		rc = read_manifest(t, rp, &e[idx[i]], w, &hits);
	if (rc || (rc = floe_ice_manifest_writer_finish(w, rp->mi.seq, out, &st)))
		goto out;
	size_t k = mg->n;
	if (current)
		snprintf(mg->keys[k], FLOE_TABLE_PATH_CAP + 64, "%s%s-%u-r.avro", t->metadir, rp->mi.commit_uuid,
			 rp->mi.attempt);
	else
		snprintf(mg->keys[k], FLOE_TABLE_PATH_CAP + 64, "%s%s-%u-r-s%d.avro", t->metadir, rp->mi.commit_uuid,
			 rp->mi.attempt, (int)spec_id);
	if ((rc = floe_ice_field_summaries_copy(t->alloc, out->partitions, out->npartitions, &mg->sums[k])))
		goto out;
	mg->n++;
	if ((rc = floe_store_uri(t->store, mg->keys[k], mg->uris[k], 2 * FLOE_TABLE_PATH_CAP + 80)))
		goto out;
	/* Named by this commit's random uuid and the attempt: never there before. */
	if ((rc = floe_store_put_if_absent(t->store, mg->keys[k], b.data, b.len))) {
		if (rc == -EEXIST)
			mg->keys[k][0] = '\0';
		rc = floe_table_fail(t, rc == -EEXIST ? FLOE_EEXIST : rc, "storing manifest %s failed: %s",
				     mg->uris[k], floe_strerror(rc));
		goto out;
	}
	out->path = mg->uris[k];
	out->partitions = mg->sums[k];
out:
	floe_ice_manifest_writer_free(w);
	floe_buf_fini(&b);
	floe_free(t->alloc, spec_json);
	return rc;
}

/* Replaces, in e[0..*n), the manifests of spec spec_id that list old files live by one
 * rewritten manifest (at the first one's place, or none: rewrite_manifests), compacting
 * the array. *next gets the least spec id above spec_id whose manifests list old files
 * (INT32_MAX: none): the caller goes on with that spec. idx: room for *n indexes. */
static int replace_spec(struct floe_table *t, struct replace *rp, struct floe_ice_manifest_entry *e, size_t *n,
			int32_t spec_id, struct floe_table_merge *mg, size_t *idx, int32_t *next)
{
	size_t nidx = 0, hits = 0;
	int rc = 0;
	*next = INT32_MAX;
	for (size_t i = 0; i < *n && rc == 0; i++) {
		if (e[i].content != 0 || e[i].added_snapshot_id == rp->mi.snapshot_id || e[i].spec_id < spec_id ||
		    (e[i].spec_id > spec_id && e[i].spec_id >= *next))
			continue;
		if ((rc = read_manifest(t, rp, &e[i], NULL, &hits)) == 0 && hits) {
			if (e[i].spec_id == spec_id)
				idx[nidx++] = i;
			else
				*next = e[i].spec_id;
		}
	}
	struct floe_ice_manifest_entry out;
	if (rc == 0 && nidx && (rc = rewrite_manifests(t, rp, e, idx, nidx, spec_id, mg, &out)) == 0) {
		size_t k = 0, j = 0;
		for (size_t i = 0; i < *n; i++) {
			if (j < nidx && idx[j] == i) {
				if (j++ == 0)
					e[k++] = out;
				continue;
			}
			e[k++] = e[i];
		}
		*n = k;
	}
	return rc;
}

/* Drops from e[0..*n) the manifests of older specs whose entries are all DELETED: once
 * every file of a spec is rewritten, its manifests leave the list. Not in the snapshot
 * that deleted the entries: expiry finds the files a replace removed in the manifests
 * that snapshot lists (table_expire.c), so they go one replace later. */
static void drop_dead(const struct floe_table *t, const struct replace *rp, struct floe_ice_manifest_entry *e,
		      size_t *n)
{
	size_t k = 0;
	for (size_t i = 0; i < *n; i++)
		if (e[i].content != 0 || e[i].spec_id == t->spec.spec_id || e[i].added_snapshot_id == rp->mi.snapshot_id ||
		    e[i].added_files != 0 || e[i].existing_files != 0 || e[i].deleted_files <= 0)
			e[k++] = e[i];
	*n = k;
}

/* Replaces, in e[0..*n), the manifests that list old files live: one rewritten manifest
 * per partition spec among them, taken in the order of spec ids. */
static int replace_manifests(struct floe_table *t, struct replace *rp, struct floe_ice_manifest_entry *e, size_t *n,
			     struct floe_table_merge *mg)
{
	size_t *idx = floe_calloc(t->alloc, *n ? *n : 1, sizeof(*idx));
	int rc = idx ? 0 : FLOE_ENOMEM;
	int32_t first = INT32_MAX;
	for (size_t i = 0; i < *n; i++)
		if (e[i].content == 0 && e[i].added_snapshot_id != rp->mi.snapshot_id && e[i].spec_id < first)
			first = e[i].spec_id;
	for (int32_t spec_id = first, next; rc == 0 && spec_id != INT32_MAX; spec_id = next)
		rc = replace_spec(t, rp, e, n, spec_id, mg, idx, &next);
	floe_free(t->alloc, idx);
	return rc;
}

/* The manifest list of an attempt into b: the ADDED manifest first, then the parent's
 * manifests, those listing old files rewritten. FLOE_ENOTFOUND when an old file is not
 * live on this parent. */
static int build_list(struct floe_table *t, void *ctx, int64_t parent, long pidx,
		      const struct floe_table_merge_in *mi, struct floe_table_merge *mg, struct floe_buf *b)
{
	struct replace *rp = ctx;
	(void)mi; /* rp->mi itself */
	rp->nseen = 0;
	rp->del_records = rp->del_bytes = 0;
	memset(rp->seen, 0, rp->nold * sizeof(*rp->seen));
	struct floe_ice_manifest_list *plist = NULL;
	struct floe_ice_manifest_entry *e = NULL;
	int rc = floe_table_read_list(t, pidx, &plist);
	size_t np = plist ? floe_ice_manifest_list_count(plist) : 0;
	if (rc == 0 && (!(e = floe_calloc(t->alloc, np + 1, sizeof(*e))) ||
			!(mg->keys = floe_calloc(t->alloc, np + 1, sizeof(*mg->keys))) ||
			!(mg->uris = floe_calloc(t->alloc, np + 1, sizeof(*mg->uris))) ||
			!(mg->sums = floe_calloc(t->alloc, np + 1, sizeof(*mg->sums)))))
		rc = FLOE_ENOMEM;
	if (rc)
		goto out;
	struct floe_ice_field_summary sums[FLOE_PART_MAX];
	struct floe_ice_manifest_part parts[FLOE_PART_MAX];
	uint8_t scratch[16 * FLOE_PART_MAX];
	floe_part_spec_manifest_parts(&t->spec, parts);
	if ((rc = floe_ice_manifest_summarize(parts, t->spec.n, rp->added, rp->nadded, sums, scratch)))
		goto out;
	e[0] = (struct floe_ice_manifest_entry){
	    .path = rp->manifest_uri, .length = rp->manifest_len, .spec_id = t->spec.spec_id,
	    .sequence_number = rp->mi.seq, .min_sequence_number = rp->mi.seq,
	    .added_snapshot_id = rp->mi.snapshot_id, .added_files = (int32_t)rp->nadded,
	    .added_rows = rp->add_records, .partitions = sums, .npartitions = t->spec.n,
	    .has_partitions = true};
	for (size_t i = 0; i < np; i++)
		e[i + 1] = *floe_ice_manifest_list_at(plist, i);
	size_t n = np + 1;
	drop_dead(t, rp, e, &n);
	rc = replace_manifests(t, rp, e, &n, mg);
	if (rc == 0 && rp->nseen < rp->nold)
		rc = floe_table_fail(t, FLOE_ENOTFOUND,
				     "%zu of the %zu files to replace are no longer live in the table (another "
				     "compaction replaced them, or they were deleted)",
				     rp->nold - rp->nseen, rp->nold);
	/* The rows must match exactly: anything else would lose or duplicate some. */
	if (rc == 0 && rp->del_records != rp->add_records)
		rc = floe_table_fail(t, FLOE_EINVAL,
				     "the %zu files to replace hold %" PRId64 " rows by their manifests, the new "
				     "files %" PRId64 ": not replaced",
				     rp->nold, rp->del_records, rp->add_records);
	uint8_t sync[16];
	if (rc == 0 && (rc = t->rand->fill(t->rand->ctx, sync, sizeof(sync))) == 0)
		rc = floe_ice_manifest_list_write(t->alloc, rp->mi.snapshot_id, parent, rp->mi.seq, e, n, sync, b);
out:
	floe_free(t->alloc, e);
	floe_ice_manifest_list_free(plist);
	return rc;
}

/* Distinct partitions of the new files (each new file is in one old file's partition). */
static size_t count_partitions(const struct floe_table *t, const struct replace *rp)
{
	size_t n = 0;
	for (size_t i = 0; i < rp->nadded; i++) {
		bool seen = false;
		for (size_t j = 0; j < i && !seen; j++) {
			struct floe_part_key a, b;
			memcpy(a.v, rp->added[i].partition, t->spec.n * sizeof(a.v[0]));
			memcpy(b.v, rp->added[j].partition, t->spec.n * sizeof(b.v[0]));
			seen = floe_part_key_equal(&t->spec, &a, &b);
		}
		n += !seen;
	}
	return n;
}

/* The spec's summary of a replace, totals continued from the parent's when it has them. */
static void build_summary(struct floe_table *t, void *ctx, long pidx, struct floe_table_summary *s)
{
	const struct replace *rp = ctx;
	const struct floe_ice_meta *m = t->meta;
	size_t parts = count_partitions(t, rp);
	s->n = 0;
	floe_table_summary_int(s, "added-data-files", (int64_t)rp->nadded);
	floe_table_summary_int(s, "deleted-data-files", (int64_t)rp->nold);
	floe_table_summary_int(s, "added-records", rp->add_records);
	floe_table_summary_int(s, "deleted-records", rp->del_records);
	floe_table_summary_int(s, "added-files-size", rp->add_bytes);
	floe_table_summary_int(s, "removed-files-size", rp->del_bytes);
	floe_table_summary_int(s, "changed-partition-count", (int64_t)parts);
	floe_table_summary_totals(s, m, pidx, rp->add_records - rp->del_records, rp->add_bytes - rp->del_bytes,
				  (int64_t)rp->nadded - (int64_t)rp->nold);
	floe_table_summary_str(s, "engine-name", "floe");
	floe_table_summary_str(s, "engine-version", FLOE_VERSION);
	floe_table_summary_str(s, "floe.maintain", "compact");
}

static const struct floe_table_step replace_step = {
    .operation = "replace",
    .crash_before = "replace-before-metadata",
    .crash_after = "replace-after-metadata",
    .list = build_list,
    .summary = build_summary,
};

/* One try on the current parent: 0 committed, FLOE_ECONFLICT lost the race,
 * FLOE_ENOTFOUND an old file is gone, other errors fatal. After a failure that left the
 * outcome unknown (a 5xx or a cut connection after a catalog applied the commit, a
 * timeout on the conditional write), the reloaded table may hold this snapshot already:
 * then it landed, and its old files are no longer live because of it. Taking that for a
 * replace abandoned would delete the new files the table now lists. */
static int replace_try(struct floe_table *t, void *ctx, unsigned attempt_no)
{
	struct replace *rp = ctx;
	bool unknown;
	if (attempt_no > 1 && floe_ice_meta_find_snapshot(t->meta, rp->mi.snapshot_id) >= 0) {
		floe_info("table: replace snapshot %" PRId64 " had landed (an answer lost): not made again",
			  rp->mi.snapshot_id);
		rp->unknown = false;
		return 0;
	}
	rp->mi.attempt = attempt_no;
	int rc = floe_table_attempt(t, &replace_step, rp, &rp->mi, &unknown);
	rp->unknown = rc && unknown;
	return rc;
}

/* The manifest of the new files, ADDED by the replace snapshot: written once, under the
 * commit's uuid. */
static int write_added(struct floe_table *t, struct replace *rp, char *key, size_t cap, char *uri, size_t ucap)
{
	struct floe_ice_manifest_part parts[FLOE_PART_MAX];
	struct floe_ice_manifest_info info;
	char *schema = NULL, *spec = NULL;
	struct floe_buf b;
	floe_buf_init(&b, t->alloc, FLOE_TABLE_MANIFEST_MAX);
	uint8_t sync[16];
	int rc = floe_table_write_json(t->alloc, floe_ice_meta_current_schema(t->meta), &schema);
	if (rc == 0)
		rc = floe_table_write_json(t->alloc, floe_ice_meta_default_spec_fields(t->meta), &spec);
	rp->mi.schema_json = schema;
	rp->mi.spec_json = spec;
	manifest_info(t, rp, &t->spec, spec, parts, &info);
	if (rc == 0 && (rc = t->rand->fill(t->rand->ctx, sync, sizeof(sync))) == 0)
		rc = floe_ice_manifest_write(t->alloc, &info, rp->added, rp->nadded, sync, &b);
	if (rc == 0 && snprintf(key, cap, "%s%s-m0.avro", t->metadir, rp->mi.commit_uuid) >= (int)cap)
		rc = FLOE_ELIMIT;
	if (rc == 0 && (rc = floe_store_uri(t->store, key, uri, ucap)) == 0) {
		rc = floe_store_put_if_absent(t->store, key, b.data, b.len);
		if (rc == -EEXIST)
			rc = floe_table_fail(t, FLOE_EEXIST, "manifest %s exists already", uri);
		rp->manifest_len = (int64_t)b.len;
	}
	rp->mi.schema_json = rp->mi.spec_json = NULL;
	floe_buf_fini(&b);
	floe_free(t->alloc, schema);
	floe_free(t->alloc, spec);
	return rc;
}

int floe_table_replace(struct floe_table *t, const char *const *old, size_t nold,
		       const struct floe_ice_data_file *added, size_t nadded, struct floe_err *err)
{
	struct replace rp = {.added = added, .nadded = nadded, .nold = nold};
	char key[FLOE_TABLE_PATH_CAP + 64], uri[2 * FLOE_TABLE_PATH_CAP + 80], uuid[37];
	floe_err_clear(&t->err);
	if (nold == 0 || nadded == 0)
		return floe_err_set(err, FLOE_EINVAL, "a replace needs old and new files");
	for (size_t i = 0; i < nadded; i++) {
		rp.add_records += added[i].record_count;
		rp.add_bytes += added[i].file_size;
	}
	rp.old = floe_calloc(t->alloc, nold, sizeof(*rp.old));
	rp.seen = floe_calloc(t->alloc, nold, sizeof(*rp.seen));
	int rc = rp.old && rp.seen ? floe_table_reload(t) : FLOE_ENOMEM;
	if (rc)
		goto out;
	memcpy(rp.old, old, nold * sizeof(*old));
	qsort(rp.old, nold, sizeof(*rp.old), cmp_str);
	if ((rc = floe_table_commit_ids(t, &rp.mi.snapshot_id, uuid)))
		goto out;
	rp.mi.commit_uuid = uuid;
	rp.manifest_uri = uri;
	if ((rc = write_added(t, &rp, key, sizeof(key), uri, sizeof(uri))))
		goto out;
	floe_crashpoint("replace-after-manifest");
	rc = floe_table_retry(t, "replace", replace_try, &rp);
	if (rc == 0)
		floe_info("table: replaced %zu files (%" PRId64 " rows, %" PRId64 " bytes) with %zu (%" PRId64
			  " bytes) in snapshot %" PRId64 " as v%" PRId64,
			  nold, rp.del_records, rp.del_bytes, nadded, rp.add_bytes, rp.mi.snapshot_id, t->version);
	else if (!rp.unknown && rp.manifest_len)
		floe_store_remove(t->store, key); /* listed by no snapshot */
out:
	floe_free(t->alloc, rp.old);
	floe_free(t->alloc, rp.seen);
	return floe_table_report(t, rc, err);
}

/* One expiry-only try: 0 also when there is nothing to expire (*expired stays 0). */
static int expire_try(struct floe_table *t, void *ctx, unsigned attempt_no)
{
	(void)attempt_no;
	size_t *expired = ctx;
	struct floe_table_expiry x = {0};
	struct floe_buf b;
	floe_buf_init(&b, t->alloc, FLOE_TABLE_METADATA_MAX);
	/* The table's time, not the wall clock alone: behind the table's last update (a step
	 * back) the wall clock would expire no snapshot by age until it passed it again. */
	int64_t mono_ms, now = floe_table_snapshot_time(t, t->meta, -1, &mono_ms);
	bool unknown = false, done = false;
	/* Old metadata files alone are work only when the log holds more than it may: at
	 * its limit, a version written to trim it would add an entry of its own, and every
	 * run would write one. */
	bool log_over = floe_ice_meta_log_count(t->meta) > floe_table_max_log(t);
	int rc = floe_table_add_snapshot(t, NULL, now, &x);
	if (rc || (x.nexpired == 0 && (x.logs.n == 0 || !log_over)))
		goto out;
	if ((rc = floe_table_put_next(t, &b, NULL, NULL, &x, &unknown)) == 0) {
		*expired = x.nexpired;
		done = true;
	}
out:
	/* The try edited the loaded metadata unless it committed it. */
	if (!done)
		t->version = 0;
	floe_table_expiry_fini(t, &x);
	floe_buf_fini(&b);
	return rc;
}

int floe_table_expire_now(struct floe_table *t, size_t *expired, struct floe_err *err)
{
	*expired = 0;
	floe_err_clear(&t->err);
	/* In a REST catalog the catalog writes the metadata: a commit adds its snapshot and
	 * moves the branch, and expiring snapshots (and deleting what they alone list) is the
	 * catalog's maintenance, as for the agents' appends. */
	if (t->opt.catalog)
		return 0;
	int rc = floe_table_reload(t);
	if (rc == 0)
		rc = floe_table_retry(t, "expiry", expire_try, expired);
	return floe_table_report(t, rc, err);
}

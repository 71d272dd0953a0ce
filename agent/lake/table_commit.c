/* The append commit: data files into the table (exclusive creates under this
 * installation's names), one manifest, then attempts that each write a manifest list from
 * the freshly loaded parent and create the next metadata version if absent. The attempt
 * skeleton and the retry loop are every snapshot commit's (table_attempt.c): the append
 * gives its steps. */
#include "agent/lake/table_impl.h"
#include "agent/schema/columns.h"
#include "formats/iceberg/schema.h"

#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"
#include "formats/iceberg/manifest.h"
#include "formats/iceberg/metadata.h"
#include "formats/json/json.h"
#include "agent/env/env.h"
#include "platform/crash.h"
#include "platform/log.h"
#include "platform/store.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The specs one commit's files may be under: the configuration's (group 0), and those
 * of entries spooled under another partition_by before a restart. */
#define COMMIT_SPECS_MAX 8

/* The files of one spec, contiguous in commit_files.files, and their manifest. */
struct spec_group {
	struct floe_part_spec spec;
	size_t first, n;
	size_t changed_partitions;
	char manifest[FLOE_TABLE_PATH_CAP + 64], uri[2 * FLOE_TABLE_PATH_CAP + 80];
	int64_t manifest_len;
};

struct commit_files {
	struct floe_ice_data_file *files;
	char (*paths)[FLOE_TABLE_PATH_CAP + 16];
	const struct floe_part_key **keys;
	size_t n;
	int64_t records, bytes;
	size_t reused; /* files an earlier upload of this installation left in place */
	struct spec_group g[COMMIT_SPECS_MAX];
	size_t ng;
};

/* One append, as its attempts see it: the files placed and their manifests, written once
 * (group 0's again when another writer took its spec's id meanwhile). */
struct append {
	struct commit_files *cf;
	int64_t commit_seq, first_seq; /* the commit-seq of the last entry and the first's seq */
	struct floe_table_merge_in mi; /* snapshot, seq, uuid, attempt, schema and spec */
	bool landed_before;	       /* a reload found this commit in the table already */
};

/* Puts one spool file into the table as key, created only if absent. The key carries this
 * installation's id, so an object already there with the spool file's size is this
 * installation's own earlier upload (a commit that failed or crashed after it): it is
 * kept, not rewritten. Anything else there is refused: floe never replaces an object. */
static int place_file(struct floe_table *t, const char *key, const char *src, const char *dst, int64_t size,
		      size_t *reused)
{
	int rc = floe_store_put_file_if_absent(t->store, key, src);
	if (rc == 0)
		return 0;
	if (rc != -EEXIST)
		return floe_table_fail(t, rc, "storing %s as %s failed: %s", src, dst, floe_strerror(rc));
	int64_t have = -1;
	if ((rc = floe_store_size(t->store, key, &have)) == 0 && have == size) {
		floe_info("table: %s is already there (an earlier attempt of this installation)", dst);
		(*reused)++;
		return 0;
	}
	if (rc && rc != -ENOENT)
		return floe_table_fail(t, rc, "%s exists, and reading its size failed: %s", dst, floe_strerror(rc));
	return floe_table_fail(t, FLOE_EEXIST,
			       "%s exists with %" PRId64 " bytes where this installation (%s) would store %" PRId64
			       " bytes under its own name: a copy of this state_dir runs elsewhere, or the "
			       "object was changed; floe will not replace it",
			       dst, have, t->opt.installation_id, size);
}

/* The group of entry e's files: its spec (the configuration's when it names none), with
 * as many values as the spec has fields. */
static int group_of(struct floe_table *t, struct commit_files *cf, const struct floe_spool_entry *e,
		    size_t *g)
{
	int32_t id = e->spec_id < 0 ? t->spec.spec_id : e->spec_id;
	for (*g = 0; *g < cf->ng && cf->g[*g].spec.spec_id != id; (*g)++)
		;
	if (*g == cf->ng) {
		struct floe_err er = {0};
		int rc;
		if (cf->ng == COMMIT_SPECS_MAX)
			return floe_table_fail(t, FLOE_ELIMIT, "the spool holds files of more than %d "
					       "partition specs", COMMIT_SPECS_MAX);
		if ((rc = floe_part_spec_from_table_id(&cf->g[*g].spec, t->meta, id, &er)))
			return floe_table_fail(t, rc, "spool entry %" PRIu64 ": %s", e->seq, er.msg);
		cf->ng++;
	}
	for (size_t k = 0; k < e->nfiles; k++)
		if (e->files[k].nparts != cf->g[*g].spec.n)
			return floe_table_fail(
			    t, FLOE_ESCHEMA,
			    "spool entry %" PRIu64 " has %zu partition values a file, and partition spec %d "
			    "has %zu fields: it was spooled under another partition_by before the table "
			    "was reached; set partition_by back until the spool is committed",
			    e->seq, e->files[k].nparts, (int)id, cf->g[*g].spec.n);
	return 0;
}

static int place_one(struct floe_table *t, struct floe_spool *spool, struct commit_files *cf,
		     struct spec_group *g, const struct floe_spool_file *sf)
{
	char part[1024], key[FLOE_TABLE_PATH_CAP], src[FLOE_TABLE_PATH_CAP + 64];
	int rc = floe_part_key_path(&g->spec, &sf->key, part, sizeof(part));
	if (rc)
		return rc;
	if ((rc = floe_fmt(key, sizeof(key), "%s%sdata/%s%s%s-%s-%s", t->dir, t->dir[0] ? "/" : "", part,
			   part[0] ? "/" : "", t->opt.agent_id, t->inst_hex, sf->name)))
		return rc;
	char *dst = cf->paths[cf->n];
	if ((rc = floe_store_uri(t->store, key, dst, FLOE_TABLE_PATH_CAP + 16)) ||
	    (rc = floe_spool_path(spool, sf->name, src, sizeof(src))) ||
	    (rc = place_file(t, key, src, dst, sf->size, &cf->reused)))
		return rc;
	struct floe_ice_data_file *df = &cf->files[cf->n];
	df->path = dst;
	df->record_count = sf->records;
	df->file_size = sf->size;
	df->partition = sf->key.v;
	df->metrics = sf->metrics;
	df->metrics_count = sf->nmetrics;
	df->split_offsets = sf->splits;
	df->split_count = sf->nsplits;
	cf->records += sf->records;
	cf->bytes += sf->size;
	bool seen = false;
	for (size_t j = g->first; j < cf->n && !seen; j++)
		seen = floe_part_key_equal(&g->spec, cf->keys[j], &sf->key);
	g->changed_partitions += !seen;
	cf->keys[cf->n] = &sf->key;
	cf->n++;
	g->n++;
	return 0;
}

/* Stores every spool file in the table's data directory under this installation's name
 * for it (<agent>-<installation>-<seq>-<k>.parquet; a retry finds its own upload), and
 * describes it for the manifest of its spec: the files of a spec are contiguous, the
 * configuration's first. */
static int place_files(struct floe_table *t, struct floe_spool *spool, struct floe_spool_entry *const *entries,
		       size_t n, struct commit_files *cf)
{
	size_t total = 0, *gi = floe_calloc(t->alloc, n ? n : 1, sizeof(*gi));
	for (size_t i = 0; i < n; i++)
		total += entries[i]->nfiles;
	cf->files = floe_calloc(t->alloc, total ? total : 1, sizeof(*cf->files));
	cf->paths = floe_calloc(t->alloc, total ? total : 1, sizeof(*cf->paths));
	cf->keys = floe_calloc(t->alloc, total ? total : 1, sizeof(*cf->keys));
	int rc = FLOE_ENOMEM;
	if (!cf->files || !cf->paths || !cf->keys || !gi)
		goto out;
	cf->g[0].spec = t->spec;
	cf->ng = 1;
	for (size_t i = 0; i < n; i++)
		if ((rc = group_of(t, cf, entries[i], &gi[i])))
			goto out;
	rc = 0;
	for (size_t g = 0; g < cf->ng && !rc; g++) {
		cf->g[g].first = cf->n;
		for (size_t i = 0; i < n && !rc; i++)
			for (size_t k = 0; k < entries[i]->nfiles && gi[i] == g && !rc; k++)
				rc = place_one(t, spool, cf, &cf->g[g], &entries[i]->files[k]);
	}
out:
	floe_free(t->alloc, gi);
	return rc;
}

static void commit_files_fini(struct floe_alloc *a, struct commit_files *cf)
{
	floe_free(a, cf->files);
	floe_free(a, cf->paths);
	floe_free(a, cf->keys);
}

/* The manifest of group g's files, named by the commit's uuid (and the attempt that
 * rewrote it, when another writer took its spec's id first). */
static int write_manifest(struct floe_table *t, const struct commit_files *cf, struct spec_group *g,
			  size_t gi, const struct floe_table_merge_in *mi)
{
	struct floe_ice_manifest_part parts[FLOE_PART_MAX];
	floe_part_spec_manifest_parts(&g->spec, parts);
	char *schema = NULL, *spec = NULL;
	struct floe_buf b;
	floe_buf_init(&b, t->alloc, FLOE_TABLE_MANIFEST_MAX);
	/* The manifest names the schema its files were written under: the loaded one as the
	 * typed columns evolve it, which the attempt does again (a no-op then). */
	int rc = floe_table_evolve_plan(t, t->meta, t->opt.columns, NULL);
	if (rc == 0)
		rc = floe_table_write_json(t->alloc, floe_ice_meta_current_schema(t->meta), &schema);
	if (rc == 0)
		rc = floe_table_write_json(t->alloc, floe_ice_meta_spec_fields(t->meta, g->spec.spec_id), &spec);
	if (rc == 0) {
		struct floe_ice_manifest_info info = {
			.schema_json = schema,
			.schema_id = floe_ice_meta_current_schema_id(t->meta),
			.partition_spec_json = spec,
			.partition_spec_id = g->spec.spec_id,
			.parts = parts,
			.nparts = g->spec.n,
			.snapshot_id = mi->snapshot_id,
			.sort_order_id = gi == 0 ? t->sort_order_id : -1,
		};
		uint8_t sync[16];
		rc = t->rand->fill(t->rand->ctx, sync, sizeof(sync));
		if (rc == 0)
			rc = floe_ice_manifest_write(t->alloc, &info, cf->files + g->first, g->n, sync, &b);
	}
	if (rc == 0 && mi->attempt > 1)
		snprintf(g->manifest, sizeof(g->manifest), "%s%s-m%zu-%u.avro", t->metadir, mi->commit_uuid, gi,
			 mi->attempt);
	else if (rc == 0)
		snprintf(g->manifest, sizeof(g->manifest), "%s%s-m%zu.avro", t->metadir, mi->commit_uuid, gi);
	if (rc == 0 && (rc = floe_store_put_if_absent(t->store, g->manifest, b.data, b.len)))
		rc = rc == -EEXIST /* named by this commit's random uuid: never there before */
			 ? floe_table_fail(t, FLOE_EEXIST, "manifest %s exists already", g->manifest)
			 : floe_table_fail(t, rc, "storing manifest %s failed: %s", g->manifest,
					   floe_strerror(rc));
	if (rc == 0)
		rc = floe_store_uri(t->store, g->manifest, g->uri, sizeof(g->uri));
	g->manifest_len = (int64_t)b.len;
	floe_buf_fini(&b);
	floe_free(t->alloc, schema);
	floe_free(t->alloc, spec);
	return rc;
}

static int write_manifests(struct floe_table *t, struct commit_files *cf, const struct floe_table_merge_in *mi)
{
	int rc = 0;
	for (size_t g = 0; g < cf->ng && !rc; g++)
		if (cf->g[g].n)
			rc = write_manifest(t, cf, &cf->g[g], g, mi);
	return rc;
}

/* The summary of an append of cf on the parent at index pidx (-1: none). */
static void build_summary(struct floe_table *t, void *ctx, long pidx, struct floe_table_summary *s)
{
	const struct append *ap = ctx;
	const struct commit_files *cf = ap->cf;
	const struct floe_ice_meta *m = t->meta;
	s->n = 0;
	floe_table_summary_int(s, "added-data-files", (int64_t)cf->n);
	floe_table_summary_int(s, "added-records", cf->records);
	floe_table_summary_int(s, "added-files-size", cf->bytes);
	size_t changed = 0;
	for (size_t g = 0; g < cf->ng; g++)
		changed += cf->g[g].changed_partitions;
	floe_table_summary_int(s, "changed-partition-count", (int64_t)changed);
	floe_table_summary_totals(s, m, pidx, cf->records, cf->bytes, (int64_t)cf->n);
	floe_table_summary_str(s, "engine-name", "floe");
	floe_table_summary_str(s, "engine-version", FLOE_VERSION);
	floe_table_summary_str(s, "floe.agent-id", t->opt.agent_id);
	floe_table_summary_str(s, "floe.installation-id", t->opt.installation_id);
	if (t->opt.home)
		floe_table_summary_str(s, "floe.installation-home", t->opt.home);
	floe_table_summary_int(s, "floe.commit-seq", ap->commit_seq);
}

/* The manifest list of an attempt into b: this commit's manifest first (sequence seq),
 * then the manifests of the parent snapshot (index pidx, -1: none) verbatim. */
static int write_list(struct floe_table *t, void *ctx, int64_t parent, long pidx,
		      const struct floe_table_merge_in *mi, struct floe_table_merge *mg, struct floe_buf *b)
{
	const struct append *ap = ctx;
	const struct commit_files *cf = ap->cf;
	struct floe_ice_manifest_list *plist = NULL;
	struct floe_ice_manifest_entry *entries = NULL;
	int64_t snapshot_id = mi->snapshot_id, seq = mi->seq;
	int rc = floe_table_read_list(t, pidx, &plist);
	if (rc)
		goto out;
	size_t np = plist ? floe_ice_manifest_list_count(plist) : 0, nown = 0;
	rc = FLOE_ENOMEM;
	if (!(entries = floe_calloc(t->alloc, np + cf->ng, sizeof(*entries))))
		goto out;
	struct floe_ice_field_summary sums[COMMIT_SPECS_MAX][FLOE_PART_MAX];
	uint8_t scratch[COMMIT_SPECS_MAX][16 * FLOE_PART_MAX];
	/* One manifest per spec (a manifest's partition struct is its spec's): the
	 * configuration's first, as the merge takes the first entry for the commit's own. */
	for (size_t gi = 0; gi < cf->ng; gi++) {
		const struct spec_group *g = &cf->g[gi];
		struct floe_ice_manifest_part parts[FLOE_PART_MAX];
		if (!g->n)
			continue;
		floe_part_spec_manifest_parts(&g->spec, parts);
		if ((rc = floe_ice_manifest_summarize(parts, g->spec.n, cf->files + g->first, g->n, sums[gi],
						      scratch[gi])))
			goto out;
		struct floe_ice_manifest_entry *e = &entries[nown++];
		e->path = g->uri;
		e->length = g->manifest_len;
		e->spec_id = g->spec.spec_id;
		e->content = 0;
		e->sequence_number = seq;
		e->min_sequence_number = seq;
		e->added_snapshot_id = snapshot_id;
		e->added_files = (int32_t)g->n;
		e->added_rows = 0;
		for (size_t k = 0; k < g->n; k++)
			e->added_rows += cf->files[g->first + k].record_count;
		e->partitions = sums[gi];
		e->npartitions = g->spec.n;
		e->has_partitions = true;
	}
	for (size_t i = 0; i < np; i++)
		entries[i + nown] = *floe_ice_manifest_list_at(plist, i);
	size_t n = np + nown;
	struct floe_ice_manifest_entry own[COMMIT_SPECS_MAX];
	memcpy(own, entries, nown * sizeof(*own));
	/* A merge that cannot be made (the memory budget, another engine's manifest floe
	 * cannot rewrite) costs only the merge: this list carries the manifests as they are.
	 * A lost race stays one. */
	if ((rc = floe_table_merge(t, mi, entries, &n, mg)) && rc != FLOE_ECONFLICT) {
		floe_warn("table: manifests not merged: %s", floe_err_text(&t->err, rc));
		floe_table_merge_fini(t, mg, true);
		floe_err_clear(&t->err);
		memcpy(entries, own, nown * sizeof(*own));
		for (size_t i = 0; i < np; i++)
			entries[i + nown] = *floe_ice_manifest_list_at(plist, i);
		n = np + nown;
		rc = 0;
	}
	if (rc)
		goto out;
	uint8_t sync[16];
	if ((rc = t->rand->fill(t->rand->ctx, sync, sizeof(sync))) == 0)
		rc = floe_ice_manifest_list_write(t->alloc, snapshot_id, parent, seq, entries, n,
						  sync, b);
out:
	floe_free(t->alloc, entries);
	floe_ice_manifest_list_free(plist);
	return rc;
}

static bool already_committed(struct floe_table *t, int64_t snapshot_id, int64_t commit_seq)
{
	return floe_ice_meta_find_snapshot(t->meta, snapshot_id) >= 0 ||
	       floe_table_committed_seq(t, t->opt.installation_id) >= commit_seq;
}

/* True when the table already holds some but not all of the entries: committing them
 * together would duplicate the older ones. The caller drops what the table holds. */
static bool partly_committed(struct floe_table *t, int64_t first_seq, int64_t commit_seq)
{
	int64_t c = floe_table_committed_seq(t, t->opt.installation_id);
	return c >= first_seq && c < commit_seq;
}

/* Files of an earlier upload are in the table when a commit of them landed whose
 * snapshot has since expired, by an engine that did not keep floe.committed-seq (floe's
 * own expiry does): the current manifests tell. All live is a commit done (1); some is
 * refused, as committing the rest with them would not match any earlier commit. */
static int check_live(struct floe_table *t, const struct commit_files *cf)
{
	const char **paths = floe_calloc(t->alloc, cf->n, sizeof(*paths));
	if (!paths)
		return FLOE_ENOMEM;
	for (size_t i = 0; i < cf->n; i++)
		paths[i] = cf->files[i].path;
	size_t live = 0;
	int rc = floe_table_live_count(t, paths, cf->n, &live);
	floe_free(t->alloc, paths);
	if (rc || live == 0)
		return rc;
	if (live < cf->n)
		return floe_table_fail(t, FLOE_ECONFLICT,
				       "%zu of the %zu data files of this commit are in the table already, "
				       "committed by this installation in a snapshot that has expired",
				       live, cf->n);
	floe_info("table: the %zu data files are in the table already (a commit of this installation "
		  "whose snapshot has expired)", cf->n);
	return 1;
}

/* Merged into another, the commit's own manifest is listed nowhere. */
static void drop_own_manifest(struct floe_table *t, void *ctx, const struct floe_table_merge *mg)
{
	const struct append *ap = ctx;
	char key[FLOE_TABLE_PATH_CAP];
	if (mg->own_merged && ap->cf->g[0].n && floe_store_key(t->store, ap->cf->g[0].uri, key, sizeof(key)) == 0)
		floe_store_remove(t->store, key);
}

static const struct floe_table_step append_step = {
    .operation = "append",
    .crash_after = "commit-after-metadata",
    .list = write_list,
    .summary = build_summary,
    .committed = drop_own_manifest,
};

/* One try of an append. After a lost race the reloaded table may hold this commit
 * already (the write that lost was ours after all, or a retry of an earlier run landed),
 * some of its entries, or another installation under this agent id. */
static int append_try(struct floe_table *t, void *ctx, unsigned attempt_no)
{
	struct append *ap = ctx;
	int rc;
	if (attempt_no > 1) {
		if (already_committed(t, ap->mi.snapshot_id, ap->commit_seq)) {
			ap->landed_before = true;
			return 0;
		}
		if (partly_committed(t, ap->first_seq, ap->commit_seq))
			return floe_table_fail(t, FLOE_ECONFLICT,
					       "the table holds some of the entries %" PRId64 " to %" PRId64
					       " already",
					       ap->first_seq, ap->commit_seq);
		if ((rc = floe_table_identity(t)))
			return rc;
	}
	ap->mi.attempt = attempt_no;
	if (t->spec_moved) {
		struct commit_files *cf = ap->cf;
		t->spec_moved = false;
		if ((rc = floe_table_evolve_spec(t, t->meta, &t->spec)) ||
		    (rc = floe_table_evolve_sort(t, t->meta, &t->sort_order_id)))
			return rc;
		cf->g[0].spec.spec_id = t->spec.spec_id;
		for (size_t i = 0; i < t->spec.n; i++)
			cf->g[0].spec.f[i].field_id = t->spec.f[i].field_id;
		if (cf->g[0].n && (rc = write_manifest(t, cf, &cf->g[0], 0, &ap->mi)))
			return rc;
	}
	bool unknown;
	rc = floe_table_attempt(t, &append_step, ap, &ap->mi, &unknown);
	t->attempts++;
	if (rc == FLOE_ECONFLICT)
		t->conflicts++;
	return rc;
}

int floe_table_commit(struct floe_table *t, struct floe_spool *spool,
		      struct floe_spool_entry *const *entries, size_t n, struct floe_err *err)
{
	if (n == 0)
		return 0;
	int64_t commit_seq = (int64_t)entries[n - 1]->seq;
	struct commit_files cf;
	memset(&cf, 0, sizeof(cf));
	floe_err_clear(&t->err);
	int rc = floe_table_reload(t);
	if (rc)
		return floe_table_report(t, rc, err);
	floe_table_settle_lost(t);
	if (already_committed(t, -1, commit_seq))
		return 0;
	if (partly_committed(t, (int64_t)entries[0]->seq, commit_seq))
		return floe_err_set(err, FLOE_ECONFLICT,
				    "the table holds some of the entries %" PRIu64 " to %" PRId64
				    " already",
				    entries[0]->seq, commit_seq);
	if ((rc = floe_table_identity(t)))
		return floe_table_report(t, rc, err);

	int64_t snapshot_id;
	char commit_uuid[37];
	if ((rc = floe_table_commit_ids(t, &snapshot_id, commit_uuid)))
		return floe_err_set(err, rc, "no random snapshot id: %s",
				    t->err.code == rc ? t->err.msg : floe_strerror(rc));

	struct append ap = {.cf = &cf,
			    .commit_seq = commit_seq,
			    .first_seq = (int64_t)entries[0]->seq,
			    .mi = {.snapshot_id = snapshot_id, .commit_uuid = commit_uuid}};
	t->spec_moved = false;
	if ((rc = floe_table_evolve_spec(t, t->meta, &t->spec)) ||
	    (rc = floe_table_evolve_sort(t, t->meta, &t->sort_order_id)) || (rc = place_files(t, spool, entries, n, &cf)) ||
	    (cf.reused && (rc = check_live(t, &cf))) || (rc = write_manifests(t, &cf, &ap.mi)))
		goto out;
	floe_crashpoint("commit-after-manifest");

	if ((rc = floe_table_retry(t, "commit", append_try, &ap)) == 0 && !ap.landed_before)
		floe_info("table: committed snapshot %" PRId64 " (commit-seq %" PRId64 ", %zu files, "
			  "%" PRId64 " rows) as v%" PRId64,
			  snapshot_id, commit_seq, cf.n, cf.records, t->version);
out:
	if (rc == 1) /* check_live: committed before */
		rc = 0;
	/* A failed attempt may have edited the loaded metadata: force a reload. */
	if (rc)
		t->version = 0;
	commit_files_fini(t->alloc, &cf);
	return floe_table_report(t, rc, err);
}

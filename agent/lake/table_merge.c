/* Manifest merging on commit, by size class (agent/README.md says why this departs from
 * Iceberg's single growing bin): the manifests of a new manifest list (the commit's own
 * first, then the parent's) are grouped by the decimal digits of their length; a class
 * up to the commit's own manifest's is merged once it holds
 * commit.manifest.min-count-to-merge manifests (so a table is rewritten once every that
 * many commits, not at every commit), a larger one once it holds MERGE_FANOUT, each into
 * bins of at most commit.manifest.target-size-bytes. Every agent's manifests are merged,
 * and other engines' too: a fleet shares the table. Entries keep their snapshot id and
 * both sequence numbers (written explicitly as EXISTING, or kept ADDED for this commit's
 * own files); entries an earlier snapshot DELETED are dropped, as Java drops them. A
 * merge is built for one parent: an attempt that loses the race removes its merged
 * manifests and the next attempt merges again on the new parent. */
#include "agent/lake/table_impl.h"

#include "agent/env/env.h"
#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"
#include "formats/iceberg/manifest.h"
#include "formats/iceberg/metadata.h"
#include "formats/json/json.h"
#include "platform/log.h"
#include "platform/store.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int floe_table_write_json(struct floe_alloc *a, const struct floe_json *v, char **out)
{
	struct floe_buf b;
	floe_buf_init(&b, a, FLOE_TABLE_METADATA_MAX);
	int rc = floe_json_write(v, &b);
	if (rc == 0)
		rc = floe_buf_putc(&b, '\0');
	if (rc) {
		floe_buf_fini(&b);
		return rc;
	}
	size_t len;
	*out = (char *)floe_buf_steal(&b, &len);
	return 0;
}

/* A property of the table, or the configured value: the table's own wins, as a table's
 * properties do for every engine. A value that is not a number is ignored, with the
 * configured one used. */
int64_t floe_table_prop(const struct floe_table *t, const char *key, int64_t configured)
{
	const char *v = floe_ice_meta_property(t->meta, key);
	if (!v || floe_table_prop_yields(t, key))
		return configured;
	if (strcmp(v, "true") == 0 || strcmp(v, "false") == 0)
		return v[0] == 't';
	char *end = NULL;
	errno = 0;
	long long n = strtoll(v, &end, 10);
	if (errno || end == v || *end || n < 0)
		return configured;
	return n;
}

void floe_table_merge_fini(struct floe_table *t, struct floe_table_merge *mg, bool remove)
{
	for (size_t i = 0; i < mg->n; i++) {
		if (remove && mg->keys[i][0])
			floe_store_remove(t->store, mg->keys[i]);
		floe_free(t->alloc, mg->sums[i]);
	}
	floe_free(t->alloc, mg->keys);
	floe_free(t->alloc, mg->uris);
	floe_free(t->alloc, mg->sums);
	memset(mg, 0, sizeof(*mg));
}

/* Copies the live entries of the manifest listed as `listed` into w: this snapshot's own
 * files stay ADDED, every other live entry becomes EXISTING, deleted ones go. */
static int copy_manifest(struct floe_table *t, struct floe_ice_manifest_writer *w,
			 const struct floe_ice_manifest_entry *listed, int64_t snapshot_id)
{
	char key[FLOE_TABLE_PATH_CAP];
	int rc = floe_store_key(t->store, listed->path, key, sizeof(key));
	if (rc)
		return floe_table_fail(t, rc, "manifest %s is outside the warehouse", listed->path);
	void *data = NULL;
	size_t len = 0;
	/* Gone: a concurrent commit that expired the parent deleted it, so the parent is not
	 * current any more; the attempt is lost and the next one merges on the new parent. */
	if ((rc = floe_store_get(t->store, key, FLOE_TABLE_MANIFEST_MAX, &data, &len)))
		return floe_table_fail(t, rc == -ENOENT ? FLOE_ECONFLICT : rc, "reading manifest %s failed: %s",
				       listed->path, floe_strerror(rc));
	struct floe_ice_entry_reader *r = NULL;
	struct floe_err e = {0};
	struct floe_ice_entry ent;
	if ((rc = floe_ice_entry_reader_new(t->alloc, data, len, listed, &r, &e)) == 0) {
		while ((rc = floe_ice_entry_reader_next(r, &ent, &e)) == 1) {
			if (ent.status == 2)
				continue;
			rc = floe_ice_manifest_writer_copy(w, &ent, ent.snapshot_id == snapshot_id ? 1 : 0);
			if (rc) {
				floe_err_set(&e, rc, "copying %s: %s", ent.path, floe_strerror(rc));
				break;
			}
		}
	}
	floe_ice_entry_reader_free(r);
	floe_store_free_data(t->store, data);
	if (rc)
		return floe_table_fail(t, rc, "manifest %s: %s", listed->path, floe_err_text(&e, rc));
	return 0;
}

/* Writes the manifests in[0..n) as one, stores it under a name of this commit and
 * attempt, and fills *out (path and summaries owned by mg). *out->path stays NULL when no
 * live entry was left. */
static int merge_bin(struct floe_table *t, const struct floe_table_merge_in *mi,
		     const struct floe_ice_manifest_entry *in, size_t n, struct floe_table_merge *mg,
		     struct floe_ice_manifest_entry *out)
{
	struct floe_ice_manifest_part parts[FLOE_PART_MAX];
	floe_part_spec_manifest_parts(&t->spec, parts);
	struct floe_ice_manifest_info info = {
	    .schema_json = mi->schema_json,
	    .schema_id = floe_ice_meta_current_schema_id(t->meta),
	    .partition_spec_json = mi->spec_json,
	    .partition_spec_id = t->spec.spec_id,
	    .parts = parts,
	    .nparts = t->spec.n,
	    .snapshot_id = mi->snapshot_id,
	};
	struct floe_ice_manifest_writer *w = NULL;
	struct floe_buf b;
	floe_buf_init(&b, t->alloc, FLOE_TABLE_MANIFEST_MAX);
	uint8_t sync[16];
	int rc = t->rand->fill(t->rand->ctx, sync, sizeof(sync));
	if (rc == 0)
		rc = floe_ice_manifest_writer_new(t->alloc, &info, sync, &b, &w);
	for (size_t i = 0; i < n && rc == 0; i++)
		rc = copy_manifest(t, w, &in[i], mi->snapshot_id);
	memset(out, 0, sizeof(*out));
	if (rc || floe_ice_manifest_writer_count(w) == 0)
		goto out;
	struct floe_ice_manifest_stats st;
	if ((rc = floe_ice_manifest_writer_finish(w, mi->seq, out, &st)))
		goto out;
	size_t k = mg->n;
	char *key = mg->keys[k], *uri = mg->uris[k];
	snprintf(key, FLOE_TABLE_PATH_CAP + 64, "%s%s-%u-m%zu.avro", t->metadir, mi->commit_uuid,
		 mi->attempt, k + 1);
	if ((rc = floe_ice_field_summaries_copy(t->alloc, out->partitions, out->npartitions, &mg->sums[k])))
		goto out;
	mg->n++;
	out->partitions = mg->sums[k];
	if ((rc = floe_store_uri(t->store, key, uri, 2 * FLOE_TABLE_PATH_CAP + 80)))
		goto out;
	rc = floe_store_put_if_absent(t->store, key, b.data, b.len);
	if (rc == -EEXIST) /* named by this commit's random uuid: never there before */
		key[0] = '\0';
	if (rc) {
		rc = floe_table_fail(t, rc == -EEXIST ? FLOE_EEXIST : rc, "storing merged manifest %s failed: %s",
				     uri, floe_strerror(rc));
		goto out;
	}
	out->path = uri;
out:
	floe_ice_manifest_writer_free(w);
	floe_buf_fini(&b);
	return rc;
}

/* Can the manifest-list entry e be merged: a data manifest of floe's spec under the
 * target size. */
static bool mergeable(const struct floe_table *t, const struct floe_ice_manifest_entry *e, int64_t target)
{
	return e->content == 0 && e->spec_id == t->spec.spec_id && e->length < target;
}

/* A manifest's size class: the number of decimal digits of its length. Merging
 * MERGE_FANOUT manifests of one class makes one of about the next class. */
#define MERGE_FANOUT 10
static int size_class(int64_t len)
{
	int c = 0;
	for (; len >= 10; len /= 10)
		c++;
	return c;
}

/* A manifest this commit merged and then merged again into a larger class (in[0..k)
 * were just merged) is listed nowhere: it is removed now, and forgotten by mg. */
static void drop_remerged(struct floe_table *t, struct floe_table_merge *mg,
			  const struct floe_ice_manifest_entry *in, size_t k)
{
	for (size_t i = 0; i < k; i++)
		for (size_t j = 0; j < mg->n; j++)
			if (in[i].path == mg->uris[j] && mg->keys[j][0]) {
				floe_store_remove(t->store, mg->keys[j]);
				mg->keys[j][0] = '\0';
			}
}

/* Merges the mergeable manifests of size class c among e[0..*n), taken in list order
 * into bins of at most target bytes, when there are at least `at_least` of them. A
 * merged manifest takes the place of its bin's first member; *n shrinks. tmp has room for
 * *n entries. */
static int merge_class(struct floe_table *t, const struct floe_table_merge_in *mi,
		       struct floe_ice_manifest_entry *e, size_t *n, int c, int64_t target,
		       int64_t at_least, struct floe_ice_manifest_entry *tmp, struct floe_table_merge *mg,
		       size_t *merged)
{
	size_t members = 0;
	for (size_t i = 0; i < *n; i++)
		members += mergeable(t, &e[i], target) && size_class(e[i].length) == c;
	if ((int64_t)members < at_least)
		return 0;
	size_t out = 0;
	for (size_t i = 0; i < *n;) {
		if (!mergeable(t, &e[i], target) || size_class(e[i].length) != c) {
			e[out++] = e[i++];
			continue;
		}
		/* The bin starting at i: the next members of the class while it fits. Entries
		 * that are not members and come between them keep their places after it. */
		size_t k = 0, first = i, rest = out + 1;
		int64_t bytes = 0;
		for (; i < *n; i++) {
			bool member = mergeable(t, &e[i], target) && size_class(e[i].length) == c;
			if (member && k > 0 && bytes + e[i].length > target)
				break;
			if (member) {
				bytes += e[i].length;
				tmp[k++] = e[i];
			} else {
				e[rest++] = e[i];
			}
		}
		if (k == 1) {
			e[out] = tmp[0];
			out = rest;
			continue;
		}
		struct floe_ice_manifest_entry m;
		int rc = merge_bin(t, mi, tmp, k, mg, &m);
		if (rc)
			return rc;
		*merged += k;
		mg->own_merged |= first == 0;
		drop_remerged(t, mg, tmp, k);
		if (m.path) {
			e[out] = m;
			out = rest;
		} else { /* nothing live was left: the bin's place closes up */
			memmove(&e[out], &e[out + 1], (rest - out - 1) * sizeof(*e));
			out = rest - 1;
		}
	}
	*n = out;
	return 0;
}

int floe_table_merge(struct floe_table *t, const struct floe_table_merge_in *mi,
		     struct floe_ice_manifest_entry *e, size_t *n, struct floe_table_merge *mg)
{
	const struct floe_table_props *p = t->opt.props;
	memset(mg, 0, sizeof(*mg));
	if (!p || *n < 2 || !floe_table_prop(t, "commit.manifest-merge.enabled", p->merge_enabled))
		return 0;
	int64_t min_count = floe_table_prop(t, "commit.manifest.min-count-to-merge", p->merge_min_count);
	int64_t target = floe_table_prop(t, "commit.manifest.target-size-bytes", (int64_t)p->merge_target_bytes);
	if (min_count < 2)
		min_count = 2;
	/* Each merge removes at least one entry: at most *n - 1 merges. */
	mg->keys = floe_calloc(t->alloc, *n, sizeof(*mg->keys));
	mg->uris = floe_calloc(t->alloc, *n, sizeof(*mg->uris));
	mg->sums = floe_calloc(t->alloc, *n, sizeof(*mg->sums));
	struct floe_ice_manifest_entry *tmp = floe_calloc(t->alloc, *n, sizeof(*tmp));
	if (!mg->keys || !mg->uris || !mg->sums || !tmp) {
		floe_free(t->alloc, tmp);
		return FLOE_ENOMEM;
	}
	/* Classes up to the commit's own manifest's wait for min-count-to-merge, larger ones
	 * for MERGE_FANOUT; from the smallest up, so that a merge's result counts in the
	 * class it lands in within the same commit. */
	int own = size_class(e[0].length), top = size_class(target);
	size_t merged = 0;
	int rc = 0;
	for (int c = 0; c <= top && rc == 0; c++)
		rc = merge_class(t, mi, e, n, c, target, c <= own ? min_count : MERGE_FANOUT, tmp, mg, &merged);
	floe_free(t->alloc, tmp);
	if (rc == 0 && merged)
		floe_info("table: merged %zu manifests into %zu (the list holds %zu)", merged, mg->n, *n);
	return rc;
}

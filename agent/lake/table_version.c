/* Finding a table's current metadata version, and refusing a history that readers could
 * take differently or that lost commits.
 *
 * The rule is the one of Hadoop tables (Java's HadoopTableOperations.refresh, which the
 * readers floe targets follow): read version-hint.text, then probe v<N+1>, v<N+2>, ...
 * until one is missing; without a hint, list metadata/ and take the highest version. The
 * Iceberg spec (format/spec.md, "File System Tables") says no more than "v<V>.metadata.json,
 * V+1 is the next commit". That rule silently takes a stray file for the current version:
 * a copy of v3 saved as v5 while v4 is missing becomes current for every prober as soon as
 * v4 is committed, and committing on it drops v4's rows; a deleted current file makes the
 * next commit recreate that version without its rows. So floe checks what it probes:
 * - the hint must name an existing version (it is only ever written after that version
 *   was created; a missing one was deleted), unless later versions exist (the hint lags
 *   and old files were cleaned up);
 * - each next version must name its predecessor as the last entry of its metadata-log
 *   (every writer records the file it built on there) and must not lower
 *   last-sequence-number, which the spec requires to grow;
 * - without a hint, the listed versions must have no gap below the newest (cleaning up
 *   removes the oldest, never one in between);
 * - nothing may exist two versions past the current one while the next is missing (a gap:
 *   probing readers stop before it, listing readers take it, and the next commit would
 *   join the two histories). At open floe lists metadata/ to find such files at any
 *   distance; a refresh checks the version after next, one HEAD on S3.
 * A violation is FLOE_EREGRESS with a message naming the file and what was expected. */
#include "agent/lake/table_impl.h"

#include "formats/base/alloc.h"
#include "formats/base/error.h"
#include "formats/iceberg/metadata.h"
#include "platform/log.h"
#include "platform/store.h"

#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- names, messages and what was seen, for every table*.c file ---------------------- */

void floe_table_meta_path(const struct floe_table *t, int64_t v, char *out, size_t cap)
{
	snprintf(out, cap, "%sv%" PRId64 ".metadata.json", t->metadir, v);
}

void floe_table_meta_uri(const struct floe_table *t, int64_t v, char *out, size_t cap)
{
	snprintf(out, cap, "%s/metadata/v%" PRId64 ".metadata.json", t->location, v);
}

int floe_table_fail(struct floe_table *t, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(t->err.msg, sizeof(t->err.msg), fmt, ap);
	va_end(ap);
	t->err.code = code;
	t->err.offset = FLOE_ERR_NO_OFFSET;
	floe_debug("table: %s", t->err.msg);
	return code;
}

int floe_table_report(const struct floe_table *t, int rc, struct floe_err *err)
{
	if (rc && err) {
		if (t->err.code == rc && t->err.msg[0])
			*err = t->err;
		else
			floe_err_set(err, rc, "%s", floe_strerror(rc));
	}
	return rc;
}

void floe_table_write_hint(const struct floe_table *t, int64_t v)
{
	char path[FLOE_TABLE_PATH_CAP + 64], text[32];
	snprintf(path, sizeof(path), "%sversion-hint.text", t->metadir);
	int n = snprintf(text, sizeof(text), "%" PRId64, v);
	int rc = floe_store_put(t->store, path, text, (size_t)n);
	if (rc)
		floe_warn("table: updating %s failed: %s (readers probe past it)", path, floe_strerror(rc));
}

void floe_table_seen(struct floe_table *t)
{
	if (t->version > t->seen_version)
		t->seen_version = t->version;
	int64_t seq = floe_ice_meta_last_sequence(t->meta);
	if (seq > t->seen_last_seq)
		t->seen_last_seq = seq;
}

/* ---- finding the current version ----------------------------------------------------- */

struct listing {
	int64_t max, min, count;
};

static int list_one(void *ctx, const char *key)
{
	struct listing *l = ctx;
	const char *slash = strrchr(key, '/');
	const char *name = slash ? slash + 1 : key;
	char *end;
	if (name[0] != 'v' || name[1] < '1' || name[1] > '9')
		return 0;
	long long v = strtoll(name + 1, &end, 10);
	if (strcmp(end, ".metadata.json") != 0 || v <= 0)
		return 0;
	if (v > l->max)
		l->max = v;
	if (l->min == 0 || v < l->min)
		l->min = v;
	l->count++;
	return 0;
}

static int list_versions(struct floe_table *t, struct listing *l)
{
	char prefix[FLOE_TABLE_PATH_CAP + 8];
	memset(l, 0, sizeof(*l));
	snprintf(prefix, sizeof(prefix), "%sv", t->metadir);
	int rc = floe_store_list(t->store, prefix, list_one, l);
	if (rc && rc != -ENOENT)
		return floe_table_fail(t, rc, "listing %s failed: %s", t->metadir, floe_strerror(rc));
	return 0;
}

/* The version version-hint.text names; 0 when it is absent or not a number (readers then
 * list, as Java does). */
static int read_hint(struct floe_table *t, int64_t *out)
{
	char path[FLOE_TABLE_PATH_CAP + 64];
	void *data = NULL;
	size_t len = 0;
	*out = 0;
	snprintf(path, sizeof(path), "%sversion-hint.text", t->metadir);
	int rc = floe_store_get(t->store, path, 64, &data, &len);
	if (rc == -ENOENT || rc == -EFBIG)
		return 0;
	if (rc)
		return floe_table_fail(t, rc, "reading %s in %s failed: %s", path, t->store->uri, floe_strerror(rc));
	char text[65];
	memcpy(text, data, len);
	text[len] = '\0';
	floe_store_free_data(t->store, data);
	char *end;
	long long h = strtoll(text, &end, 10);
	while (*end == '\n' || *end == ' ' || *end == '\r')
		end++;
	if (end != text && *end == '\0' && h > 0)
		*out = h;
	else
		floe_warn("table: %s does not hold a version number: ignored", path);
	return 0;
}

/* Loads version v into a new model (owned by the caller). -ENOENT when it is absent. */
static int load_meta(struct floe_table *t, int64_t v, struct floe_ice_meta **out)
{
	char path[FLOE_TABLE_PATH_CAP + 64];
	void *data = NULL;
	size_t len = 0;
	floe_table_meta_path(t, v, path, sizeof(path));
	int rc = floe_store_get(t->store, path, FLOE_TABLE_METADATA_MAX, &data, &len);
	if (rc == -ENOENT)
		return rc;
	char uri[2 * FLOE_TABLE_PATH_CAP + 64];
	floe_table_meta_uri(t, v, uri, sizeof(uri));
	if (rc)
		return floe_table_fail(t, rc, "reading %s failed: %s (expected a metadata file)", uri,
				       floe_strerror(rc));
	struct floe_ice_meta *m = NULL;
	struct floe_err e;
	rc = floe_ice_meta_parse(t->alloc, data, len, &m, &e);
	floe_store_free_data(t->store, data);
	if (rc)
		return floe_table_fail(t, rc, "%s: cannot read metadata: %s", uri, floe_err_text(&e, rc));
	const char *uuid = floe_ice_meta_uuid(m);
	if (t->uuid[0] && uuid && strcmp(uuid, t->uuid) != 0) {
		floe_ice_meta_free(m);
		return floe_table_fail(t, FLOE_EREGRESS,
				       "%s belongs to another table: its table-uuid is %s, the table's is %s "
				       "(a file copied from elsewhere, or the table was replaced)",
				       uri, uuid, t->uuid);
	}
	if (uuid && !t->uuid[0])
		snprintf(t->uuid, sizeof(t->uuid), "%s", uuid);
	*out = m;
	return 0;
}

/* Does the metadata file URI name version v of a Hadoop table (v<v>.metadata.json, or
 * v<v>.<codec>.metadata.json as Java writes compressed ones)? */
static bool names_version(const char *file, int64_t v)
{
	const char *slash = strrchr(file, '/');
	const char *name = slash ? slash + 1 : file;
	char want[32];
	int n = snprintf(want, sizeof(want), "v%" PRId64 ".", v);
	size_t len = strlen(name), suffix = strlen(".metadata.json");
	return strncmp(name, want, (size_t)n) == 0 && len >= (size_t)n - 1 + suffix &&
	       strcmp(name + len - suffix, ".metadata.json") == 0;
}

/* next (version v+1) must have been made from prev (version v). */
static int check_successor(struct floe_table *t, int64_t v, const struct floe_ice_meta *prev,
			   const struct floe_ice_meta *next)
{
	char path[2 * FLOE_TABLE_PATH_CAP + 64];
	floe_table_meta_uri(t, v + 1, path, sizeof(path));
	const char *from = floe_ice_meta_previous_file(next);
	if (from && !names_version(from, v))
		return floe_table_fail(
		    t, FLOE_EREGRESS,
		    "%s was not made from v%" PRId64 ".metadata.json: its metadata-log ends with %s (a stray "
		    "or restored copy of an older version?). Readers that probe past v%" PRId64 " take it "
		    "for the current version and lose the commits since; move it out of metadata/ (floe "
		    "will not commit on it)",
		    path, v, from, v);
	int64_t a = floe_ice_meta_last_sequence(prev), b = floe_ice_meta_last_sequence(next);
	if (b < a)
		return floe_table_fail(
		    t, FLOE_EREGRESS,
		    "%s has last-sequence-number %" PRId64 ", lower than v%" PRId64 "'s %" PRId64 " (a stray or "
		    "restored copy of an older version?). Readers that probe past v%" PRId64 " take it for the "
		    "current version and lose the commits since; move it out of metadata/ (floe will not "
		    "commit on it)",
		    path, b, v, a, v);
	return 0;
}

static int gap_error(struct floe_table *t, int64_t current, int64_t beyond)
{
	char path[2 * FLOE_TABLE_PATH_CAP + 64];
	floe_table_meta_uri(t, beyond, path, sizeof(path));
	return floe_table_fail(
	    t, FLOE_EREGRESS,
	    "%s exists but v%" PRId64 ".metadata.json does not: a gap after the current version v%" PRId64
	    " (a stray or restored file?). Readers that probe stop at v%" PRId64 ", readers that list take "
	    "v%" PRId64 ", and a commit of v%" PRId64 " would make probers take it too. Move %s out of "
	    "metadata/ (floe will not commit until then)",
	    path, current + 1, current, current, beyond, current + 1, path);
}

/* The version to start probing from: the hint, or what this process last loaded if that
 * is newer, or the listing's highest when there is no hint. *start = 0: no table. */
static int start_version(struct floe_table *t, struct listing *l, bool *listed, int64_t *start)
{
	int64_t h;
	int rc = read_hint(t, &h);
	if (rc)
		return rc;
	bool ours = t->seen_version > h;
	int64_t v = ours ? t->seen_version : h;
	if (v == 0) {
		if ((rc = list_versions(t, l)))
			return rc;
		*listed = true;
		*start = l->max;
		/* Without a hint the newest file is current only if the versions before it are
		 * all there: cleaning up removes the oldest, never one in between. */
		if (l->count && l->count != l->max - l->min + 1)
			return floe_table_fail(
			    t, FLOE_EREGRESS,
			    "%s/metadata has no version-hint.text, and of the versions v%" PRId64 " to v%" PRId64 " in it "
			    "%" PRId64 " are missing: the newest may be a stray or restored file that does not "
			    "follow the ones before it. Restore the missing metadata files, or write the "
			    "current version into version-hint.text",
			    t->location, l->min, l->max, l->max - l->min + 1 - l->count);
		return 0;
	}
	char path[FLOE_TABLE_PATH_CAP + 64];
	floe_table_meta_path(t, v, path, sizeof(path));
	int e = floe_store_exists(t->store, path);
	floe_table_meta_uri(t, v, path, sizeof(path));
	if (e < 0)
		return floe_table_fail(t, e, "checking %s failed: %s", path, floe_strerror(e));
	if (e == 1) {
		*start = v;
		return 0;
	}
	if ((rc = list_versions(t, l)))
		return rc;
	*listed = true;
	if (l->max > v) {
		/* The hint lags and the versions it names were cleaned up: start from the
		 * newest; the probe below still checks what follows it. */
		*start = l->max;
		return 0;
	}
	char newest[48] = "none is left";
	if (l->max)
		snprintf(newest, sizeof(newest), "the newest is v%" PRId64, l->max);
	/* No metadata at all: the table was deleted (or its mount is away), not rolled back.
	 * The next commit opens it again, and what happens then depends on the store. */
	if (ours && !l->count)
		return floe_table_fail(
		    t, FLOE_EREGRESS,
		    "%s, the current version when floe last read the table, is gone and no metadata "
		    "file is left: the table was deleted, or its mount went away. Its rows wait in "
		    "the spool; the next commit opens it again: a table in a local warehouse is not "
		    "made again unless lake.recreate_tables, one in object storage is made anew",
		    path);
	if (ours)
		return floe_table_fail(
		    t, FLOE_EREGRESS,
		    "%s, the current version when floe last read the table, is gone (%s): the metadata file "
		    "was deleted or the table restored from an older copy, and committing now would drop the "
		    "commits of the missing versions. Restore the file; floe will not commit until then",
		    path, newest);
	return floe_table_fail(
	    t, FLOE_EREGRESS,
	    "version-hint.text names v%" PRId64 " but %s is missing (%s): the current metadata file was "
	    "deleted or the table restored from an older copy, and committing now would drop the commits "
	    "of the missing versions. Restore the file, or if the table was rolled back on purpose, write "
	    "the version to keep into version-hint.text",
	    v, path, newest);
}

/* Probes upwards from version v (model cur, owned when *owned), checking each step. */
static int probe_up(struct floe_table *t, int64_t *v, struct floe_ice_meta **cur, bool *owned)
{
	char path[FLOE_TABLE_PATH_CAP + 64];
	for (;;) {
		floe_table_meta_path(t, *v + 1, path, sizeof(path));
		int e = floe_store_exists(t->store, path);
		if (e < 0)
			return floe_table_fail(t, e, "checking %s in %s failed: %s", path, t->store->uri,
					       floe_strerror(e));
		if (e == 0) {
			floe_table_meta_path(t, *v + 2, path, sizeof(path));
			if ((e = floe_store_exists(t->store, path)) < 0)
				return floe_table_fail(t, e, "checking %s in %s failed: %s", path, t->store->uri,
						       floe_strerror(e));
			if (e == 0)
				return 0;
			/* v+2 is only ever made from v+1, so v+1 existed before it: if it is there
			 * now, other writers committed both between the two looks (no gap). */
			floe_table_meta_path(t, *v + 1, path, sizeof(path));
			if ((e = floe_store_exists(t->store, path)) < 0)
				return floe_table_fail(t, e, "checking %s in %s failed: %s", path, t->store->uri,
						       floe_strerror(e));
			if (e == 0)
				return gap_error(t, *v, *v + 2);
			continue;
		}
		struct floe_ice_meta *next = NULL;
		int rc = load_meta(t, *v + 1, &next);
		if (rc == -ENOENT)
			rc = floe_table_fail(t, FLOE_ECONFLICT, "%s in %s vanished while floe read it", path,
					     t->store->uri);
		if (rc == 0 && (rc = check_successor(t, *v, *cur, next)) != 0)
			floe_ice_meta_free(next);
		if (rc)
			return rc;
		if (*owned)
			floe_ice_meta_free(*cur);
		*cur = next;
		*owned = true;
		(*v)++;
	}
}

int floe_table_find_current(struct floe_table *t, bool full)
{
	struct listing l;
	bool listed = false, owned = false;
	int64_t v = 0;
	struct floe_ice_meta *cur = NULL;
	floe_err_clear(&t->err);
	int rc = start_version(t, &l, &listed, &v);
	if (rc || v == 0) {
		if (rc == 0) {
			floe_ice_meta_free(t->meta);
			t->meta = NULL;
			t->version = 0;
		}
		return rc;
	}
	if (t->meta && v == t->version) {
		cur = t->meta;
	} else {
		if ((rc = load_meta(t, v, &cur)) == -ENOENT)
			rc = floe_table_fail(t, FLOE_ECONFLICT, "metadata v%" PRId64 " vanished while floe read it", v);
		if (rc)
			return rc;
		owned = true;
		if (floe_ice_meta_last_sequence(cur) < t->seen_last_seq)
			rc = floe_table_fail(t, FLOE_EREGRESS,
					     "metadata v%" PRId64 " has last-sequence-number %" PRId64 ", lower than "
					     "the %" PRId64 " of v%" PRId64 " that floe read before: the table went back",
					     v, floe_ice_meta_last_sequence(cur), t->seen_last_seq, t->seen_version);
	}
	if (rc == 0)
		rc = probe_up(t, &v, &cur, &owned);
	if (rc == 0 && full && !listed)
		rc = list_versions(t, &l);
	if (rc == 0 && full && l.max > v) {
		/* Versions committed by others since the probe are no gap: probe again, and
		 * only what the probe cannot reach is one. */
		rc = probe_up(t, &v, &cur, &owned);
		if (rc == 0 && l.max > v)
			rc = gap_error(t, v, l.max);
	}
	if (rc) {
		if (owned)
			floe_ice_meta_free(cur);
		return rc;
	}
	if (owned) {
		floe_ice_meta_free(t->meta);
		t->meta = cur;
	}
	t->version = v;
	floe_table_seen(t);
	return 0;
}

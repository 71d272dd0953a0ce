/* Iceberg table metadata over the JSON DOM: removing snapshots (expiry), table properties,
 * and the refs and metadata-log a cleanup reads. Like add_snapshot, every change builds a
 * new top-level object that replaces the root only once it is complete and valid, so a
 * failed call leaves the metadata as it was. */
#include "metadata_impl.h"

#include "formats/base/alloc.h"
#include "formats/base/error.h"
#include "formats/json/json.h"

#include <stdlib.h>
#include <string.h>

/* ---- properties ---- */

const char *floe_ice_meta_property(const struct floe_ice_meta *m, const char *key)
{
	const char *v = NULL;
	if (floe_json_get_str(floe_json_get(m->v.root, "properties"), key, &v))
		return NULL;
	return v;
}

/* Replaces the root with root (a modified copy of the current one), or fails leaving the
 * metadata as it was. */
static int swap_root(struct floe_ice_meta *m, struct floe_json *root)
{
	struct floe_ice_view nv;
	if (floe_ice_meta_index(&nv, root))
		return FLOE_EINVAL;
	floe_json_set_root(m->doc, root);
	m->v = nv;
	return 0;
}

int floe_ice_meta_set_properties(struct floe_ice_meta *m, const struct floe_ice_kv *kv, size_t n)
{
	struct floe_json_doc *d = m->doc;
	if (n && !kv)
		return FLOE_EINVAL;
	for (size_t i = 0; i < n; i++)
		if (!kv[i].key)
			return FLOE_EINVAL;
	struct floe_json *root = floe_ice_json_copy_object(d, m->v.root);
	const struct floe_json *old = floe_json_get(m->v.root, "properties");
	struct floe_json *props = floe_ice_json_copy_object(d, floe_json_is(old, FLOE_JSON_OBJECT) ? old : NULL);
	if (!root || !props)
		return FLOE_ENOMEM;
	int rc = 0;
	for (size_t i = 0; !rc && i < n; i++) {
		if (kv[i].value)
			rc = floe_json_set(d, props, kv[i].key,
					   floe_json_new_str(d, kv[i].value, strlen(kv[i].value)));
		else
			(void)floe_json_remove(props, kv[i].key);
	}
	if (!rc)
		rc = floe_json_set(d, root, "properties", props);
	return rc ? rc : swap_root(m, root);
}

/* ---- refs and the metadata log ---- */

size_t floe_ice_meta_ref_heads(const struct floe_ice_meta *m, int64_t *ids, size_t cap)
{
	const struct floe_json *refs = floe_json_get(m->v.root, "refs");
	size_t n = floe_json_is(refs, FLOE_JSON_OBJECT) ? floe_json_len(refs) : 0, k = 0;
	for (size_t i = 0; i < n; i++) {
		int64_t id;
		if (floe_json_get_int(floe_json_at(refs, i), "snapshot-id", &id))
			continue;
		if (k < cap)
			ids[k] = id;
		k++;
	}
	return k;
}

size_t floe_ice_meta_log_count(const struct floe_ice_meta *m)
{
	const struct floe_json *log = floe_json_get(m->v.root, "metadata-log");
	return floe_json_is(log, FLOE_JSON_ARRAY) ? floe_json_len(log) : 0;
}

const char *floe_ice_meta_log_file(const struct floe_ice_meta *m, size_t i)
{
	const char *file = NULL;
	if (i >= floe_ice_meta_log_count(m) ||
	    floe_json_get_str(floe_json_at(floe_json_get(m->v.root, "metadata-log"), i), "metadata-file", &file))
		return NULL;
	return file;
}

/* ---- removing snapshots ---- */

static int cmp_id(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

static bool in_set(const int64_t *sorted, size_t n, int64_t id)
{
	return n && bsearch(&id, sorted, n, sizeof(*sorted), cmp_id) != NULL;
}

/* The items of src whose member key names a snapshot not in the removed set. */
static struct floe_json *keep_items(struct floe_json_doc *d, const struct floe_json *src, const char *key,
				    const int64_t *gone, size_t ngone)
{
	struct floe_json *o = floe_json_new_array(d);
	for (size_t i = 0; o && i < floe_json_len(src); i++) {
		const struct floe_json *e = floe_json_at(src, i);
		int64_t id;
		if (floe_json_get_int(e, key, &id) == 0 && in_set(gone, ngone, id))
			continue;
		if (floe_json_push(d, o, floe_json_at(src, i)))
			return NULL;
	}
	return o;
}

/* The snapshot-log without the entries of removed snapshots; as Java does, an entry of a
 * snapshot that is gone also drops the history before it, so the log never shows a state
 * the table can no longer be read in. live: the ids of the snapshots kept, sorted. */
static struct floe_json *keep_log(struct floe_json_doc *d, const struct floe_json *slog,
				  const int64_t *live, size_t nlive)
{
	size_t from = 0, n = floe_json_len(slog);
	for (size_t i = 0; i < n; i++) {
		int64_t id;
		if (floe_json_get_int(floe_json_at(slog, i), "snapshot-id", &id) != 0 || !in_set(live, nlive, id))
			from = i + 1;
	}
	return floe_ice_json_copy_array(d, slog, from);
}

/* The ids of the snapshots of arr, sorted, from a (NULL without memory). */
static int64_t *snapshot_ids(struct floe_alloc *a, const struct floe_json *arr, size_t *n)
{
	size_t len = floe_json_len(arr), k = 0;
	int64_t *ids = floe_malloc(a, (len ? len : 1) * sizeof(*ids));
	for (size_t i = 0; ids && i < len; i++)
		if (floe_json_get_int(floe_json_at(arr, i), "snapshot-id", &ids[k]) == 0)
			k++;
	if (ids)
		qsort(ids, k, sizeof(*ids), cmp_id);
	*n = k;
	return ids;
}

int floe_ice_meta_remove_snapshots(struct floe_ice_meta *m, const int64_t *ids, size_t n)
{
	struct floe_json_doc *d = m->doc;
	if (n == 0)
		return 0;
	if (!ids || m->v.format_version != 2 || n > SIZE_MAX / sizeof(*ids))
		return FLOE_EINVAL;
	int64_t *gone = floe_malloc(m->a, n * sizeof(*gone));
	if (!gone)
		return FLOE_ENOMEM;
	int64_t *live = NULL;
	memcpy(gone, ids, n * sizeof(*gone));
	qsort(gone, n, sizeof(*gone), cmp_id);
	int rc = FLOE_EINVAL;
	/* A ref's head (the current snapshot among them) is never expired. */
	int64_t heads[64];
	size_t nheads = floe_ice_meta_ref_heads(m, heads, 64);
	if (nheads > 64 || in_set(gone, n, m->v.current_snapshot_id))
		goto out;
	for (size_t i = 0; i < nheads; i++)
		if (in_set(gone, n, heads[i]))
			goto out;
	rc = FLOE_ENOMEM;
	struct floe_json *root = floe_ice_json_copy_object(d, m->v.root);
	struct floe_json *snaps = keep_items(d, m->v.snapshots, "snapshot-id", gone, n);
	size_t nlive = 0;
	if (!root || !snaps || !(live = snapshot_ids(m->a, snaps, &nlive)))
		goto out;
	const struct floe_json *old_slog = floe_json_get(m->v.root, "snapshot-log");
	struct floe_json *slog = keep_log(d, floe_json_is(old_slog, FLOE_JSON_ARRAY) ? old_slog : NULL, live, nlive);
	if (!slog)
		goto out;
	if ((rc = floe_json_set(d, root, "snapshots", snaps)) || (rc = floe_json_set(d, root, "snapshot-log", slog)))
		goto out;
	/* Statistics files describe one snapshot each; they go with it. */
	static const char *const stats[] = {"statistics", "partition-statistics"};
	for (size_t i = 0; i < 2; i++) {
		const struct floe_json *s = floe_json_get(m->v.root, stats[i]);
		if (!floe_json_is(s, FLOE_JSON_ARRAY))
			continue;
		struct floe_json *kept = keep_items(d, s, "snapshot-id", gone, n);
		if (!kept) {
			rc = FLOE_ENOMEM;
			goto out;
		}
		if ((rc = floe_json_set(d, root, stats[i], kept)))
			goto out;
	}
	rc = swap_root(m, root);
out:
	floe_free(m->a, live);
	floe_free(m->a, gone);
	return rc;
}

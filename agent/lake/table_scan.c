/* Finding what compaction may rewrite: the small live data files of closed partitions in
 * the current snapshot. A partition is closed when the time range of its time field
 * (year, month, day or hour of a timestamp) ended before a cut-off: agents still append
 * to open partitions, and a file rewritten there would soon have small neighbours again.
 * Only manifests of the table's current spec are read, so every file found has a
 * partition tuple of that spec, which is what the rewritten files are written under.
 * Asked for the files of older specs instead, it reads the other manifests, each entry's
 * tuple and closed range by its manifest's spec: those files are rewritten whatever
 * their size, their rows split by the current spec (agent/run/maintain_respec.c). */
#include "agent/lake/table_impl.h"

#include "formats/avro/avro.h"
#include "formats/base/alloc.h"
#include "formats/base/civil.h"
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
#include <strings.h>

#define US_PER_DAY (86400 * (int64_t)1000000)

void floe_table_files_fini(struct floe_table_files *fs)
{
	floe_free(fs->a, fs->f);
	floe_free(fs->a, fs->keys);
	floe_free(fs->a, fs->key_specs);
	floe_free(fs->a, fs->buf);
	memset(fs, 0, sizeof(*fs));
}

/* The partition tuple of a manifest entry's data_file record, by the spec's field names;
 * FLOE_EFORMAT when it lacks one or holds one of another type. */
static int key_of(const struct floe_part_spec *spec, const struct floe_avro_value *df, struct floe_part_key *k)
{
	const struct floe_avro_value *part = floe_avro_value_get(df, "partition");
	if (floe_avro_value_type(part) != FLOE_AVRO_RECORD)
		return FLOE_EFORMAT;
	memset(k->v, 0, sizeof(k->v));
	for (size_t i = 0; i < spec->n; i++) {
		const struct floe_avro_value *v = floe_avro_value_get(part, spec->f[i].name);
		if (!v)
			return FLOE_EFORMAT;
		if (floe_avro_value_is_null(v)) {
			k->v[i].is_null = true;
			continue;
		}
		if (strcmp(spec->f[i].result_type, "string") != 0) {
			if (floe_avro_value_long(v, &k->v[i].i))
				return FLOE_EFORMAT;
			continue;
		}
		const uint8_t *s;
		size_t len;
		if (floe_avro_value_bytes(v, &s, &len))
			return FLOE_EFORMAT;
		if (len >= FLOE_PART_STR_MAX)
			return FLOE_ELIMIT;
		memcpy(k->str[i], s, len);
		k->str[i][len] = '\0';
		k->v[i].s = k->str[i];
		k->v[i].len = len;
	}
	return 0;
}

/* The end of value v's range under a time transform, in µs since the epoch; false for
 * another transform or a value beyond any sensible date. */
static bool range_end(enum floe_ice_transform_kind kind, int64_t v, int64_t *end_us)
{
	if (v < -1000000 || v > 1000000 * 24)
		return false;
	switch (kind) {
	case FLOE_ICE_HOUR:
		*end_us = (v + 1) * 3600 * (int64_t)1000000;
		return true;
	case FLOE_ICE_DAY:
		*end_us = (v + 1) * US_PER_DAY;
		return true;
	case FLOE_ICE_MONTH: {
		int64_t m = v + 1, y = m >= 0 ? m / 12 : (m - 11) / 12;
		*end_us = floe_civil_to_days(1970 + y, (unsigned)(m - y * 12) + 1, 1) * US_PER_DAY;
		return true;
	}
	case FLOE_ICE_YEAR:
		*end_us = floe_civil_to_days(1970 + v + 1, 1, 1) * US_PER_DAY;
		return true;
	default:
		return false;
	}
}

/* The upper bound of timestamp field id in a data_file record (Iceberg's single-value
 * form: 8 bytes, little-endian µs); false when the file records none. */
static bool upper_bound(const struct floe_avro_value *df, int32_t id, int64_t *out)
{
	const struct floe_avro_value *ub = floe_avro_value_get(df, "upper_bounds");
	for (size_t i = 0; id && i < floe_avro_value_len(ub); i++) {
		const struct floe_avro_value *kv = floe_avro_value_at(ub, i);
		int64_t key;
		const uint8_t *v;
		size_t len;
		if (floe_avro_value_long(floe_avro_value_get(kv, "key"), &key) || key != id ||
		    floe_avro_value_bytes(floe_avro_value_get(kv, "value"), &v, &len) || len != 8)
			continue;
		uint64_t u = 0;
		for (size_t b = 8; b-- > 0;)
			u = u << 8 | v[b];
		*out = (int64_t)u;
		return true;
	}
	return false;
}

/* Closed: the spec has a time field and every time field's range ended before cutoff; a
 * spec without one, when the file's newest time (time_id's upper bound) is before it.
 * Unpartitioned and aggregate tables are compacted so, file by file: a file whose newest
 * row is old gets no more rows, and one with a newer row waits for a later run. */
static bool closed(const struct floe_part_spec *spec, const struct floe_part_key *k,
		   int64_t cutoff_us, const struct floe_avro_value *df, int32_t time_id)
{
	bool any = false, timed = false;
	for (size_t i = 0; i < spec->n; i++) {
		enum floe_ice_transform_kind kind = spec->f[i].transform.kind;
		timed |= kind == FLOE_ICE_YEAR || kind == FLOE_ICE_MONTH || kind == FLOE_ICE_DAY ||
			 kind == FLOE_ICE_HOUR;
	}
	if (!timed) {
		int64_t newest;
		return time_id && upper_bound(df, time_id, &newest) && newest < cutoff_us;
	}
	for (size_t i = 0; i < spec->n; i++) {
		int64_t end;
		enum floe_ice_transform_kind kind = spec->f[i].transform.kind;
		if (kind != FLOE_ICE_YEAR && kind != FLOE_ICE_MONTH && kind != FLOE_ICE_DAY && kind != FLOE_ICE_HOUR)
			continue;
		if (k->v[i].is_null || !range_end(kind, k->v[i].i, &end) || end > cutoff_us)
			return false;
		any = true;
	}
	return any;
}

/* The index of k among fs's keys, added if new. Keys hold pointers into themselves (their
 * strings), so after the array moves they are pointed at their own storage again. */
static int key_index(const struct floe_part_spec *spec, struct floe_table_files *fs, const struct floe_part_key *k,
		     size_t *idx)
{
	for (size_t i = 0; i < fs->nkeys; i++)
		if (fs->key_specs[i] == spec->spec_id && floe_part_key_equal(spec, &fs->keys[i], k)) {
			*idx = i;
			return 0;
		}
	if (fs->nkeys == fs->keycap) {
		size_t cap = fs->keycap ? fs->keycap * 2 : 16;
		struct floe_part_key *n = cap > SIZE_MAX / sizeof(*n) ? NULL : floe_realloc(fs->a, fs->keys, cap * sizeof(*n));
		if (!n)
			return FLOE_ENOMEM;
		fs->keys = n;
		int32_t *ks = floe_realloc(fs->a, fs->key_specs, cap * sizeof(*ks));
		if (!ks)
			return FLOE_ENOMEM;
		fs->key_specs = ks;
		fs->keycap = cap;
		for (size_t i = 0; i < fs->nkeys; i++)
			for (size_t f = 0; f < FLOE_PART_MAX; f++)
				if (fs->keys[i].v[f].s)
					fs->keys[i].v[f].s = fs->keys[i].str[f];
	}
	/* Cleared first: the fix-up above walks every field of keys of any spec. */
	memset(fs->keys[fs->nkeys].v, 0, sizeof(fs->keys[fs->nkeys].v));
	floe_part_key_copy(spec, &fs->keys[fs->nkeys], k);
	fs->key_specs[fs->nkeys] = spec->spec_id;
	*idx = fs->nkeys++;
	return 0;
}

/* Appends a file; its path goes into the shared buffer (pointers are set at the end of
 * the scan, when the buffer no longer moves: path holds the offset until then). */
static int add_file(struct floe_table_files *fs, const struct floe_ice_entry *e, size_t part, int32_t spec_id)
{
	size_t l = strlen(e->path) + 1;
	if (fs->len + l > fs->bufcap) {
		size_t cap = (fs->bufcap ? fs->bufcap * 2 : 16384) + l;
		char *b = floe_realloc(fs->a, fs->buf, cap);
		if (!b)
			return FLOE_ENOMEM;
		fs->buf = b;
		fs->bufcap = cap;
	}
	if (fs->n == fs->cap) {
		size_t cap = fs->cap ? fs->cap * 2 : 256;
		struct floe_table_file *f = cap > SIZE_MAX / sizeof(*f) ? NULL : floe_realloc(fs->a, fs->f, cap * sizeof(*f));
		if (!f)
			return FLOE_ENOMEM;
		fs->f = f;
		fs->cap = cap;
	}
	memcpy(fs->buf + fs->len, e->path, l);
	fs->f[fs->n] = (struct floe_table_file){(const char *)(uintptr_t)fs->len, e->record_count, e->file_size,
						 e->sequence_number, part, spec_id};
	fs->n++;
	fs->len += l;
	return 0;
}

/* Is the entry a candidate: a live Parquet data file below the size limit. */
static bool small_parquet(const struct floe_ice_entry *e, int64_t max_size)
{
	const uint8_t *fmt;
	size_t len;
	if (e->status == 2 || e->content != 0 || e->file_size >= max_size)
		return false;
	return floe_avro_value_bytes(floe_avro_value_get(e->data_file, "file_format"), &fmt, &len) == 0 &&
	       len == 7 && strncasecmp((const char *)fmt, "PARQUET", 7) == 0;
}

/* Calls fn for every entry of the manifest listed; fn returns 0 to go on or an error. */
typedef int (*entry_fn)(struct floe_table *t, void *ctx, const struct floe_ice_entry *e);

static int for_each_entry(struct floe_table *t, const struct floe_ice_manifest_entry *listed, entry_fn fn,
			  void *ctx)
{
	char key[FLOE_TABLE_PATH_CAP];
	void *data = NULL;
	size_t len = 0;
	struct floe_ice_entry_reader *r = NULL;
	struct floe_ice_entry e;
	struct floe_err why = {0};
	int rc = floe_store_key(t->store, listed->path, key, sizeof(key));
	if (rc == 0)
		rc = floe_store_get(t->store, key, FLOE_TABLE_MANIFEST_MAX, &data, &len);
	if (rc == 0)
		rc = floe_ice_entry_reader_new(t->alloc, data, len, listed, &r, &why);
	while (rc == 0 && (rc = floe_ice_entry_reader_next(r, &e, &why)) == 1)
		rc = fn(t, ctx, &e);
	floe_ice_entry_reader_free(r);
	floe_store_free_data(t->store, data);
	if (rc)
		return floe_table_fail(t, rc, "reading manifest %s failed: %s", listed->path, floe_err_text(&why, rc));
	return 0;
}

struct scan_ctx {
	const struct floe_table_scan_options *o;
	struct floe_table_files *fs;
	struct floe_part_key *k;
	const struct floe_part_spec *spec; /* the manifest's */
};

/* Takes entry e into the scan's files when it is a small Parquet file of a closed partition. */
static int scan_entry(struct floe_table *t, void *ctx, const struct floe_ice_entry *e)
{
	struct scan_ctx *c = ctx;
	(void)t;
	if (!small_parquet(e, c->o->old_specs ? INT64_MAX : c->o->max_size))
		return 0;
	int rc = key_of(c->spec, e->data_file, c->k);
	if (rc || !closed(c->spec, c->k, c->o->closed_before_us, e->data_file, c->o->time_field_id))
		return rc;
	size_t part;
	if (c->fs->n >= c->o->max_files)
		c->fs->skipped++;
	else if ((rc = key_index(c->spec, c->fs, c->k, &part)) == 0)
		rc = add_file(c->fs, e, part, c->spec->spec_id);
	return rc;
}

int floe_table_scan(struct floe_table *t, const struct floe_table_scan_options *o, struct floe_table_files *out,
		    struct floe_err *err)
{
	memset(out, 0, sizeof(*out));
	out->a = t->alloc;
	floe_err_clear(&t->err);
	struct floe_ice_manifest_list *l = NULL;
	struct floe_part_key *k = floe_calloc(t->alloc, 1, sizeof(*k));
	struct floe_part_spec *old = floe_calloc(t->alloc, 1, sizeof(*old));
	int rc = k && old ? floe_table_reload(t) : FLOE_ENOMEM;
	int64_t cur = rc ? -1 : floe_ice_meta_current_snapshot_id(t->meta);
	if (rc == 0 && cur >= 0)
		rc = floe_table_read_list(t, floe_ice_meta_find_snapshot(t->meta, cur), &l);
	for (size_t i = 0; rc == 0 && l && i < floe_ice_manifest_list_count(l); i++) {
		const struct floe_ice_manifest_entry *e = floe_ice_manifest_list_at(l, i);
		if (e->content != 0 || (e->spec_id == t->spec.spec_id) == o->old_specs)
			continue;
		/* An older spec floe cannot compute (another engine's) leaves its files as they are. */
		if (o->old_specs && floe_part_spec_from_table_id(old, t->meta, e->spec_id, NULL)) {
			out->skipped += (size_t)e->added_files + (size_t)e->existing_files;
			continue;
		}
		rc = for_each_entry(t, e, scan_entry, &(struct scan_ctx){o, out, k, o->old_specs ? old : &t->spec});
	}
	for (size_t i = 0; rc == 0 && i < out->n; i++)
		out->f[i].path = out->buf + (size_t)(uintptr_t)out->f[i].path;
	floe_ice_manifest_list_free(l);
	floe_free(t->alloc, k);
	floe_free(t->alloc, old);
	if (rc) {
		floe_table_files_fini(out);
		out->a = t->alloc;
	}
	return floe_table_report(t, rc, err);
}

/* ---- which files the metadata lists (orphan cleanup, agent/run/maintain.c) ---- */

static int cmp_uri(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

struct mark_ctx {
	const char *const *uris;
	size_t n;
	bool *found;
};

/* Marks the file of entry e when it is one of the uris. */
static int mark_entry(struct floe_table *t, void *ctx, const struct floe_ice_entry *e)
{
	(void)t;
	struct mark_ctx *c = ctx;
	const char *const *at = bsearch(&e->path, c->uris, c->n, sizeof(*c->uris), cmp_uri);
	if (at)
		c->found[at - c->uris] = true;
	return 0;
}

/* Has the manifest path been read already; if not, remembers it (seen is kept sorted). */
static int first_visit(struct floe_table *t, char ***seen, size_t *nseen, size_t *cap, const char *path, bool *first)
{
	size_t lo = 0, hi = *nseen;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int d = strcmp((*seen)[mid], path);
		if (d == 0) {
			*first = false;
			return 0;
		}
		if (d < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (*nseen == *cap) {
		size_t c = *cap ? *cap * 2 : 64;
		char **s = c > SIZE_MAX / sizeof(*s) ? NULL : floe_realloc(t->alloc, *seen, c * sizeof(*s));
		if (!s)
			return FLOE_ENOMEM;
		*seen = s;
		*cap = c;
	}
	char *copy = floe_strdup(t->alloc, path);
	if (!copy)
		return FLOE_ENOMEM;
	memmove(*seen + lo + 1, *seen + lo, (*nseen - lo) * sizeof(**seen));
	(*seen)[lo] = copy;
	(*nseen)++;
	*first = true;
	return 0;
}

int floe_table_listed(struct floe_table *t, const char *const *uris, size_t n, bool *found, struct floe_err *err)
{
	floe_err_clear(&t->err);
	char **seen = NULL;
	size_t nseen = 0, cap = 0;
	memset(found, 0, n * sizeof(*found));
	int rc = floe_table_reload(t);
	size_t ns = rc ? 0 : floe_ice_meta_snapshot_count(t->meta);
	for (size_t i = 0; rc == 0 && i < ns; i++) {
		struct floe_ice_manifest_list *l = NULL;
		rc = floe_table_read_list(t, (long)i, &l);
		for (size_t k = 0; rc == 0 && l && k < floe_ice_manifest_list_count(l); k++) {
			const struct floe_ice_manifest_entry *e = floe_ice_manifest_list_at(l, k);
			bool first = false;
			if (e->content == 0 && (rc = first_visit(t, &seen, &nseen, &cap, e->path, &first)) == 0 && first)
				rc = for_each_entry(t, e, mark_entry, &(struct mark_ctx){uris, n, found});
		}
		floe_ice_manifest_list_free(l);
	}
	for (size_t i = 0; i < nseen; i++)
		floe_free(t->alloc, seen[i]);
	floe_free(t->alloc, seen);
	if (rc == FLOE_ENOMEM)
		floe_table_fail(t, rc, "%s", floe_strerror(rc));
	return floe_table_report(t, rc, err);
}

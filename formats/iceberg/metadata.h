/* Iceberg v2 table metadata: read, create, append a snapshot, write. The model keeps the
 * parsed JSON document, so fields floe does not understand (statistics, other refs,
 * properties, future keys) survive a rewrite unchanged. Pure: bytes in, bytes out. */
#ifndef FLOE_ICE_METADATA_H
#define FLOE_ICE_METADATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct floe_alloc;
struct floe_buf;
struct floe_err;
struct floe_json;

struct floe_ice_meta;

/* One top-level field of a table schema. */
struct floe_ice_field {
	int32_t id;
	const char *name;
	const char *type;  /* Iceberg primitive type string, "map" for maps */
	bool required;
	int32_t key_id, value_id;        /* maps only */
	const char *key_type, *value_type; /* maps only */
	bool value_required;             /* maps only */
};

struct floe_ice_partition_field {
	int32_t source_id;
	int32_t field_id;   /* 1000, 1001, ... */
	const char *name;   /* e.g. "ts_day" */
	const char *transform; /* "identity", "day", "hour", "bucket[16]", ... */
};

struct floe_ice_kv {
	const char *key;
	const char *value;
};

struct floe_ice_snapshot {
	int64_t snapshot_id;
	int64_t parent_id;      /* -1 when none */
	int64_t sequence_number;
	int64_t timestamp_ms;
	const char *manifest_list;
	const char *operation;  /* "append" */
	const struct floe_ice_kv *summary; /* extra summary entries besides operation */
	size_t summary_count;
	int32_t schema_id;
};

/* Parses metadata JSON (v1 or v2; format-version above 2 is FLOE_EUNSUPPORTED) into *out
 * (owned by the caller; free with floe_ice_meta_free; NULL after a failure). err (may be
 * NULL) says what failed: for malformed JSON, with its byte offset. */
int floe_ice_meta_parse(struct floe_alloc *a, const char *json, size_t len,
			struct floe_ice_meta **out, struct floe_err *err);
/* A new v2 table: one schema (id 0), one partition spec (id 0), unsorted order, no
 * snapshots, last-sequence-number 0. Strings are copied. */
int floe_ice_meta_create(struct floe_alloc *a, const char *table_uuid, const char *location,
			 const struct floe_ice_field *fields, size_t nfields,
			 const struct floe_ice_partition_field *pfields, size_t npfields,
			 const struct floe_ice_kv *props, size_t nprops, int64_t now_ms,
			 struct floe_ice_meta **out);
/* NULL is a no-op. */
void floe_ice_meta_free(struct floe_ice_meta *m);
/* Serialises the document. */
int floe_ice_meta_write(const struct floe_ice_meta *m, struct floe_buf *out);

int floe_ice_meta_format_version(const struct floe_ice_meta *m);
const char *floe_ice_meta_uuid(const struct floe_ice_meta *m);
const char *floe_ice_meta_location(const struct floe_ice_meta *m);
int64_t floe_ice_meta_last_sequence(const struct floe_ice_meta *m);
int64_t floe_ice_meta_last_updated_ms(const struct floe_ice_meta *m);
/* -1 when the table has no current snapshot. */
int64_t floe_ice_meta_current_snapshot_id(const struct floe_ice_meta *m);
int32_t floe_ice_meta_current_schema_id(const struct floe_ice_meta *m);
int32_t floe_ice_meta_default_spec_id(const struct floe_ice_meta *m);
/* The current schema's JSON object and the default spec's fields array (borrowed), for
 * manifest headers and compatibility checks. */
const struct floe_json *floe_ice_meta_current_schema(const struct floe_ice_meta *m);
const struct floe_json *floe_ice_meta_default_spec_fields(const struct floe_ice_meta *m);
/* Looks up field id in the current schema; returns false if absent, else fills the type
 * string (borrowed) and whether it is required. */
bool floe_ice_meta_schema_field(const struct floe_ice_meta *m, int32_t id, const char **type,
				bool *required, const char **name);

/* Snapshots in file order. Borrowed strings are valid until the metadata changes. */
size_t floe_ice_meta_snapshot_count(const struct floe_ice_meta *m);
int floe_ice_meta_snapshot_at(const struct floe_ice_meta *m, size_t i, int64_t *id, int64_t *parent_id,
			      int64_t *seq, int64_t *timestamp_ms, const char **manifest_list);
/* Looks up a summary value of snapshot i (NULL if absent). */
const char *floe_ice_meta_snapshot_summary(const struct floe_ice_meta *m, size_t i, const char *key);
/* Number of summary entries of snapshot i, and the i-th key/value. */
size_t floe_ice_meta_snapshot_summary_count(const struct floe_ice_meta *m, size_t i);
int floe_ice_meta_snapshot_summary_at(const struct floe_ice_meta *m, size_t i, size_t k,
				      const char **key, const char **value);
/* The metadata file the last metadata-log entry names (the version this one was made
 * from), borrowed; NULL when the log is empty or absent, or the entry has no file. */
const char *floe_ice_meta_previous_file(const struct floe_ice_meta *m);
/* Index of the snapshot with this id, or -1. */
long floe_ice_meta_find_snapshot(const struct floe_ice_meta *m, int64_t snapshot_id);
/* The same, looked for at index hint first (-1: none). Snapshots are listed oldest first,
 * so a parent is nearly always the one before its child: a walk down an ancestry that
 * passes its last index minus one as the hint costs one look-up a step, not a scan. */
long floe_ice_meta_find_snapshot_near(const struct floe_ice_meta *m, int64_t snapshot_id, long hint);

/* Appends snapshot s and makes it current on branch main: adds it to snapshots, sets
 * current-snapshot-id and refs.main, raises last-sequence-number to s's, appends to
 * snapshot-log, appends {prev last-updated-ms, prev_metadata_location} to metadata-log
 * (trimmed to max_log entries) when prev_metadata_location is not NULL, and sets
 * last-updated-ms to now_ms. Requires s->sequence_number == last-sequence-number + 1,
 * s->parent_id == current snapshot id, and timestamp_ms > parent's (else FLOE_EINVAL).
 * The summary written is {"operation": s->operation, then s->summary in order}. */
int floe_ice_meta_add_snapshot(struct floe_ice_meta *m, const struct floe_ice_snapshot *s,
			       const char *prev_metadata_location, int64_t now_ms, size_t max_log);

/* A new metadata version without a new snapshot (a maintenance commit that only expires
 * snapshots or changes properties): appends {prev last-updated-ms,
 * prev_metadata_location} to metadata-log (trimmed to max_log entries; none when NULL)
 * and sets last-updated-ms to now_ms (never earlier than it was). */
int floe_ice_meta_touch(struct floe_ice_meta *m, const char *prev_metadata_location, int64_t now_ms,
			size_t max_log);

/* ---- Partition specs and sort orders (metadata_spec.c) ---- */

/* One field of a sort order: ascending or descending, nulls first or last. */
struct floe_ice_sort_field {
	int32_t source_id;
	const char *transform; /* "identity", ... */
	bool descending;
	bool nulls_first;
};

/* The fields array of spec spec_id (borrowed), or NULL when the table has no such spec. */
const struct floe_json *floe_ice_meta_spec_fields(const struct floe_ice_meta *m, int32_t spec_id);
int32_t floe_ice_meta_default_sort_order_id(const struct floe_ice_meta *m);
/* The spec (sort order) object of that id, borrowed; NULL when absent. */
const struct floe_json *floe_ice_meta_spec(const struct floe_ice_meta *m, int32_t spec_id);
const struct floe_json *floe_ice_meta_sort_order(const struct floe_ice_meta *m, int32_t order_id);
/* The highest spec id (sort order id) the table lists; -1 when none. */
int32_t floe_ice_meta_last_spec_id(const struct floe_ice_meta *m);
int32_t floe_ice_meta_last_sort_order_id(const struct floe_ice_meta *m);
/* Evolves the table to the partition spec pf[0..n) (source ids, transforms and names
 * given; field ids are assigned here): a field keeps the id and name it had in an earlier
 * spec with the same source and transform, a new one takes the next id above
 * last-partition-id (never one used before). A spec equal to an existing one is that
 * spec, by its id; else it is added (spec id above every other) and made the default.
 * An existing spec becomes the default when make_default. Fills pf's field ids (and the
 * names of reused fields, borrowed from m), *spec_id, *changed (the document changed;
 * last-updated-ms raised to now_ms, no metadata-log entry) and *added (may be NULL: the
 * spec is new). FLOE_EUNSUPPORTED for a table
 * without partition-specs (v1). */
int floe_ice_meta_evolve_spec(struct floe_ice_meta *m, struct floe_ice_partition_field *pf, size_t n,
			      bool make_default, int64_t now_ms, int32_t *spec_id, bool *changed,
			      bool *added);
/* The same for the sort order sf[0..n): an equal order is reused by its id, else it is
 * added (order-id above every other; 0 is the unsorted order); it becomes the default. */
int floe_ice_meta_evolve_sort_order(struct floe_ice_meta *m, const struct floe_ice_sort_field *sf,
				    size_t n, int64_t now_ms, int32_t *order_id, bool *changed);

/* ---- Expiry and cleanup (metadata_expire.c) ---- */

/* The table property key (borrowed until the metadata changes), or NULL. */
const char *floe_ice_meta_property(const struct floe_ice_meta *m, const char *key);
/* Sets each property kv[i].key to kv[i].value (copied), or removes it where the value is
 * NULL. */
int floe_ice_meta_set_properties(struct floe_ice_meta *m, const struct floe_ice_kv *kv, size_t n);
/* The snapshot ids the refs (branches and tags, main among them) point at: fills
 * ids[0..cap) and returns how many refs there are. */
size_t floe_ice_meta_ref_heads(const struct floe_ice_meta *m, int64_t *ids, size_t cap);
/* The metadata-log: its length and the file of entry i (borrowed; NULL when absent). */
size_t floe_ice_meta_log_count(const struct floe_ice_meta *m);
const char *floe_ice_meta_log_file(const struct floe_ice_meta *m, size_t i);
/* Removes the snapshots ids[0..n) (as snapshot expiry does): from snapshots, from the
 * snapshot-log (with the history before a removed entry, as Java does) and from
 * statistics. Refuses (FLOE_EINVAL) to remove a ref's head, the current snapshot among
 * them, or from a table with more than 64 refs; ids not in the table are ignored. */
int floe_ice_meta_remove_snapshots(struct floe_ice_meta *m, const int64_t *ids, size_t n);

#endif

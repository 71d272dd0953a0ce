/* Iceberg v2 manifests and manifest lists in Avro object container files, with the exact
 * schemas and field ids of the spec (and of Java's V2Metadata), and a reader of manifest
 * lists so a commit can carry the parent's manifests forward verbatim. Pure. */
#ifndef FLOE_ICE_MANIFEST_H
#define FLOE_ICE_MANIFEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct floe_alloc;
struct floe_buf;
struct floe_err;

/* A partition value of a data file. type is the partition result type: "int", "date",
 * "long", "string", "timestamptz" (identity on ts). */
struct floe_ice_part_value {
	bool is_null;
	int64_t i;            /* int, date, long, timestamptz */
	const char *s;        /* string */
	size_t len;
};

struct floe_ice_column_metrics {
	int32_t field_id;
	int64_t column_size;
	int64_t value_count;
	int64_t null_count;
	bool has_bounds;
	const uint8_t *lower; /* Appendix D single-value encoding, already truncated */
	size_t lower_len;
	const uint8_t *upper;
	size_t upper_len;
};

struct floe_ice_data_file {
	const char *path;     /* fully qualified URI */
	int64_t record_count;
	int64_t file_size;
	const struct floe_ice_part_value *partition; /* one per partition field */
	const struct floe_ice_column_metrics *metrics;
	size_t metrics_count;
	const int64_t *split_offsets;
	size_t split_count;
};

/* The partition fields of the spec the manifest is written for. */
struct floe_ice_manifest_part {
	int32_t field_id;
	const char *name;
	const char *result_type; /* "int" | "date" | "long" | "string" | "timestamptz" */
};

struct floe_ice_manifest_info {
	const char *schema_json;        /* current schema object, compact JSON */
	int32_t schema_id;
	const char *partition_spec_json; /* the spec's fields array, compact JSON */
	int32_t partition_spec_id;
	const struct floe_ice_manifest_part *parts;
	size_t nparts;
	int64_t snapshot_id;            /* written on ADDED entries */
	/* The sort order the files were written under: each data file's sort_order_id
	 * when above 0 (0, unsorted, and below are written as null, "unknown"). */
	int32_t sort_order_id;
};

/* Writes a manifest (Avro OCF, codec null) of ADDED entries for files. sync is the
 * 16-byte sync marker (callers pass random bytes; injected for reproducible tests). */
int floe_ice_manifest_write(struct floe_alloc *a, const struct floe_ice_manifest_info *info,
			    const struct floe_ice_data_file *files, size_t nfiles,
			    const uint8_t sync[16], struct floe_buf *out);

/* Partition field summary of a manifest list entry. */
struct floe_ice_field_summary {
	bool contains_null;
	int contains_nan;    /* -1 absent, 0, 1 */
	bool has_lower, has_upper;
	const uint8_t *lower; size_t lower_len;
	const uint8_t *upper; size_t upper_len;
};

/* Fills out[0..nparts) with the partition field summaries of a new manifest over files
 * (contains_null, contains_nan = 0, lower/upper = min/max partition value in Appendix D
 * encoding; no bounds when every value is null). scratch (borrowed, 16 * nparts bytes)
 * holds the encoded int/date/long/timestamptz bounds; string bounds point into the
 * files' partition values. out is valid while scratch and files are. */
int floe_ice_manifest_summarize(const struct floe_ice_manifest_part *parts, size_t nparts,
				const struct floe_ice_data_file *files, size_t nfiles,
				struct floe_ice_field_summary *out, uint8_t *scratch);

/* One manifest_file record of a manifest list. */
struct floe_ice_manifest_entry {
	const char *path;
	int64_t length;
	int32_t spec_id;
	int32_t content;          /* 0 data, 1 deletes */
	int64_t sequence_number;
	int64_t min_sequence_number;
	int64_t added_snapshot_id;
	int32_t added_files, existing_files, deleted_files;
	int64_t added_rows, existing_rows, deleted_rows;
	const struct floe_ice_field_summary *partitions; /* may be NULL */
	size_t npartitions;
	bool has_partitions;
	const uint8_t *key_metadata; size_t key_metadata_len; bool has_key_metadata;
};

/* Writes a v2 manifest list: entries in order (the caller puts the new manifest first
 * and the parent's after it). Header metadata: snapshot-id, parent-snapshot-id ("null"
 * when parent_id < 0), sequence-number, format-version "2". */
int floe_ice_manifest_list_write(struct floe_alloc *a, int64_t snapshot_id, int64_t parent_id,
				 int64_t sequence_number, const struct floe_ice_manifest_entry *entries,
				 size_t n, const uint8_t sync[16], struct floe_buf *out);

/* A parsed manifest list; its entries and their bytes live until it is freed. Reads
 * v1 and v2 lists written by any engine (schema resolved by field name from the file's
 * own schema; codecs null and deflate). For v1 lists the missing v2 fields are filled as
 * the spec says (sequence numbers 0, content 0). */
struct floe_ice_manifest_list;
/* Reads the list in data[0..len) (borrowed) into *out (owned by the caller; free with
 * floe_ice_manifest_list_free). On failure *out is untouched and err (may be NULL) says
 * what, with the byte offset of a malformed file. */
int floe_ice_manifest_list_read(struct floe_alloc *a, const uint8_t *data, size_t len,
				struct floe_ice_manifest_list **out, struct floe_err *err);
size_t floe_ice_manifest_list_count(const struct floe_ice_manifest_list *l);
const struct floe_ice_manifest_entry *floe_ice_manifest_list_at(const struct floe_ice_manifest_list *l, size_t i);
/* NULL is a no-op. */
void floe_ice_manifest_list_free(struct floe_ice_manifest_list *l);

/* Reads a manifest's data file entries for `floe inspect`: calls fn for each entry
 * with its status (0 existing, 1 added, 2 deleted), path, record count and size. A
 * failure, fn's included, stops the reading; err (may be NULL) then says what. */
typedef int (*floe_ice_manifest_fn)(void *ctx, int status, const char *path, int64_t records,
				    int64_t size);
int floe_ice_manifest_read(struct floe_alloc *a, const uint8_t *data, size_t len,
			   floe_ice_manifest_fn fn, void *ctx, struct floe_err *err);

/* ---- Rewriting manifests (merging them, compaction) ---- */

struct floe_avro_value;

/* A manifest entry as a rewrite needs it: its status, and its snapshot id and sequence
 * numbers with inheritance applied (null values take the listing manifest's
 * added_snapshot_id and, for ADDED entries, its sequence_number; v1 manifests' missing
 * sequence numbers are 0), and its data_file record as decoded (borrowed from the reader,
 * valid until its next call). */
struct floe_ice_entry {
	int status; /* 0 EXISTING, 1 ADDED, 2 DELETED */
	int64_t snapshot_id;
	int64_t sequence_number;      /* the data sequence number */
	int64_t file_sequence_number;
	int32_t content; /* of the file: 0 data */
	const char *path; /* NUL-terminated, borrowed as data_file */
	int64_t record_count, file_size;
	const struct floe_avro_value *data_file;
};

struct floe_ice_entry_reader;
/* Reads the entries of the manifest in data[0..len) (borrowed: it must outlive the
 * reader) that a manifest list lists as listed (borrowed during the call; its
 * added_snapshot_id and sequence_number are copied for inheritance). Any engine's v1 or v2
 * manifest; fields are found by name. err (may be NULL) says why it failed. */
int floe_ice_entry_reader_new(struct floe_alloc *a, const uint8_t *data, size_t len,
			      const struct floe_ice_manifest_entry *listed,
			      struct floe_ice_entry_reader **out, struct floe_err *err);
/* The header metadata value of key (borrowed; NULL when absent), e.g. "partition-spec-id". */
const uint8_t *floe_ice_entry_reader_meta(const struct floe_ice_entry_reader *r, const char *key,
					  size_t *len);
/* 1 with *e filled, 0 after the last entry, or a negative error (err says which entry). */
int floe_ice_entry_reader_next(struct floe_ice_entry_reader *r, struct floe_ice_entry *e,
			       struct floe_err *err);
/* NULL is a no-op. */
void floe_ice_entry_reader_free(struct floe_ice_entry_reader *r);

/* A manifest written one entry at a time, for info's spec and snapshot (the snapshot that
 * writes it). Its bytes go to out (borrowed; it must outlive the writer). */
struct floe_ice_manifest_writer;
int floe_ice_manifest_writer_new(struct floe_alloc *a, const struct floe_ice_manifest_info *info,
				 const uint8_t sync[16], struct floe_buf *out,
				 struct floe_ice_manifest_writer **w);
/* A new file, ADDED by info->snapshot_id (sequence numbers inherited). */
int floe_ice_manifest_writer_add(struct floe_ice_manifest_writer *w, const struct floe_ice_data_file *f);
/* An entry read from another manifest, written with status: EXISTING (0) keeps its
 * snapshot id and both sequence numbers, written explicitly as the spec requires;
 * DELETED (2) is recorded as deleted by info->snapshot_id, with its sequence numbers;
 * ADDED (1) is allowed only for an entry info->snapshot_id itself added (its sequence
 * numbers stay null, inherited from the list again). Every data_file field is carried
 * over as it was. FLOE_EINVAL for another ADDED entry; FLOE_EFORMAT when the record lacks
 * a required field or a partition field of info's spec, or holds one of another type. */
int floe_ice_manifest_writer_copy(struct floe_ice_manifest_writer *w, const struct floe_ice_entry *e,
				  int status);
/* Entries written so far. */
size_t floe_ice_manifest_writer_count(const struct floe_ice_manifest_writer *w);

/* What a finished manifest's manifest-list entry needs beyond the entry itself: the
 * lowest data sequence number of its EXISTING entries (INT64_MAX: none) and whether it
 * has ADDED ones (which take the list's sequence number), so that the entry can be
 * rebuilt for another sequence number (a retried commit). */
struct floe_ice_manifest_stats {
	int64_t min_existing_seq;
	bool has_added;
};
/* Finishes the file in out and fills listed (all but path) for a list of sequence number
 * seq: length, spec, content 0, sequence numbers, added_snapshot_id, the counts and the
 * partition summaries of every entry (pointing into the writer: valid until it is freed). */
int floe_ice_manifest_writer_finish(struct floe_ice_manifest_writer *w, int64_t seq,
				    struct floe_ice_manifest_entry *listed,
				    struct floe_ice_manifest_stats *st);
/* The min_sequence_number of a manifest with stats st in a list of sequence number seq. */
int64_t floe_ice_manifest_min_seq(const struct floe_ice_manifest_stats *st, int64_t seq);
/* NULL is a no-op. */
void floe_ice_manifest_writer_free(struct floe_ice_manifest_writer *w);

/* A copy of n field summaries and their bound bytes in one allocation from a (free it
 * with floe_free(a, *out)). */
int floe_ice_field_summaries_copy(struct floe_alloc *a, const struct floe_ice_field_summary *src,
				  size_t n, struct floe_ice_field_summary **out);

#endif

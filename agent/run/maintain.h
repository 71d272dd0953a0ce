/* Compaction (`floe maintain`): the small data files of closed partitions of a table
 * (a raw table or an aggregate table) rewritten into files of about target_file_size and committed
 * as Iceberg "replace" snapshots (agent/lake/table.h, floe_table_replace). */
#ifndef FLOE_MAINTAIN_H
#define FLOE_MAINTAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct floe_alloc;
struct floe_buf;
struct floe_config;
struct floe_config_table;
struct floe_err;
struct floe_store;
struct floe_table;

struct floe_maintain_options {
	const struct floe_config *cfg; /* maintain.min_age */
	/* The table's writer options (codec, target_file_size, bloom_filters, sort_by): a raw
	 * table's own, or for an aggregate table the logs table's, which the agent writes
	 * its files with (borrowed). */
	const struct floe_config_table *tc;
	/* An aggregate table: written without bloom filters or sort order, as the agent
	 * writes it, and, its spec having no time field, its files are closed by their
	 * newest window_end (a raw table's without a time field: by their newest ts). */
	bool aggregate;
	struct floe_table *table;      /* opened for commits (borrowed) */
	struct floe_store *store;      /* the table's warehouse (borrowed) */
	/* A local directory for the files being written (each is uploaded whole, then
	 * removed); made if absent. */
	const char *tmp_dir;
	int64_t now_us; /* partitions that ended before now_us - min_age are closed */
	/* Replaced files per replace snapshot at most (0 = 10000); a partition with more is
	 * committed in several. */
	size_t max_files_per_commit;
};

struct floe_maintain_stats {
	size_t partitions;     /* partitions whose files were rewritten */
	size_t commits;	       /* replace snapshots committed */
	size_t abandoned;      /* replaces abandoned: their files were rewritten meanwhile */
	size_t files_in, files_out;
	uint64_t rows, bytes_in, bytes_out;
	size_t left;	       /* candidates left for a later run (over the per-run cap) */
	size_t expired;	       /* snapshots expired after the compaction */
	size_t orphans;	       /* output files of interrupted runs deleted */
	size_t respecced;      /* files of older partition specs rewritten into the current one */
};

/* Rewrites and commits, partition by partition (the small files of the current
 * partition spec, then every file of an older spec, into the current spec), then expires snapshots by the table's
 * properties (floe_table_expire_now) when there is anything to expire. Every new file has a new random name
 * and is created exclusively, so a crash at any point leaves at most unreferenced
 * files. Rows are copied in order (older files first, each file's rows in their order;
 * with sort_by, files merged by the sort keys, ties in that order) and every value exactly
 * as read. Returns 0 (an abandoned replace included), or an
 * error with err (may be NULL) saying what failed. */
int floe_maintain_compact(struct floe_alloc *a, const struct floe_maintain_options *o,
			  struct floe_maintain_stats *st, struct floe_err *err);

/* Deletes the output files of interrupted runs (agent/run/maintain_orphans.c): those under
 * the data/ prefix of the table (its key in the store: table_key) named as compaction
 * names them, named more than maintain.min_age before o->now_us, that no manifest of any
 * snapshot lists. *removed gets how many were deleted. Returns 0, or an error with err
 * (may be NULL); nothing is deleted then but what *removed says. */
int floe_maintain_orphans(struct floe_alloc *a, const struct floe_maintain_options *o, const char *table_key,
			  size_t *removed, struct floe_err *err);

/* What one table's run did, for the record below. */
struct floe_maintain_result {
	const char *table; /* its name (borrowed) */
	int rc;		   /* 0, or why it failed */
	char error[512];   /* the failure's text */
	struct floe_maintain_stats stats;
};

/* Writes the record of a run over the tables r[0..n) (maintain_record.c), ended at
 * now_ms, to path (atomically: the agent may be reading it). Returns 0 or an error. */
int floe_maintain_record_save(const char *path, const struct floe_maintain_result *r, size_t n,
			      int64_t now_ms);
/* Appends the record at path to b: as it is saved (a JSON object: finished_ms and
 * tables.NAME.FIELD), or with as_prom as Prometheus gauges labelled table="NAME".
 * Nothing when there is no readable record; an error only when b is full. */
int floe_maintain_record_render(struct floe_alloc *a, const char *path, bool as_prom,
				struct floe_buf *b);

#endif

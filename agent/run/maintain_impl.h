/* What maintain.c (reading and copying) and maintain_output.c (the new files and the
 * pending replace) share: the state of one compaction run. Private to agent/run. */
#ifndef FLOE_MAINTAIN_IMPL_H
#define FLOE_MAINTAIN_IMPL_H

#include "agent/lake/table.h"
#include "agent/run/maintain.h"
#include "formats/base/error.h"
#include "formats/base/limits.h"
#include "agent/schema/partition.h"
#include "formats/parquet/reader.h"
#include "formats/parquet/writer.h"
#include "platform/fs.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MAX_COLS 64
#define OUTS_MAX 8 /* new files per replace snapshot at most */

/* The new file being written. */
struct output {
	struct floe_file *file;
	struct floe_pq_writer *w;
	int err; /* the sink's first failure */
	char tmp[FLOE_PATH_MAX];
	struct floe_pq_column cols[MAX_COLS];
	char names[MAX_COLS][128];
	size_t ncols;
};

/* One replace being built: old files, and the new files finished for them. */
struct pending {
	const char **old;
	size_t nold, cap;
	struct floe_ice_data_file added[OUTS_MAX];
	char keys[OUTS_MAX][FLOE_PATH_MAX];
	char uris[OUTS_MAX][FLOE_PATH_MAX + 16];
	struct floe_part_key pkeys[OUTS_MAX]; /* the new files' partitions (current spec) */
	size_t nadded;
};

struct compact {
	struct floe_alloc *a;
	const struct floe_maintain_options *o;
	struct floe_maintain_stats *st;
	struct floe_err *err;
	struct floe_pq_options pq;
	struct floe_pq_bloom_column bloom[FLOE_LOG_NCOLS];
	char created_by[64];
	char table_key[FLOE_PATH_MAX]; /* the table's key prefix in the store */
	char run[37];		       /* this run's uuid: names its files */
	unsigned nout;		       /* files this run has written */
	uint64_t target;
	const enum floe_sort_key *sort; /* sort_by: rows merged by these (nsort of them) */
	size_t nsort;
	struct output out;
	struct pending p;
	const struct floe_table_files *fs;
};

/* An old file in the warehouse, read by the streaming Parquet reader. */
struct source {
	struct floe_store *store;
	char key[FLOE_PATH_MAX];
};

/* The reader's read_at over the store (ctx: a struct source). */
int floe_maintain_source_read(void *ctx, uint64_t off, void *buf, size_t len);
/* Opens the reader of the old data file f (src, the caller's, must outlive it), from a;
 * an error names the file. */
int floe_maintain_reader_open(struct compact *c, struct floe_alloc *a, const struct floe_table_file *f,
			      struct source *src, struct floe_pq_reader **r);

/* Do the columns c[0..n) match a[0..na) (name, id, kind, nesting)? */
bool floe_maintain_same_columns(const struct floe_pq_column *a, size_t na, const struct floe_pq_column *c, size_t n);
/* Opens a new output file in tmp_dir with the columns cols[0..n) (copied). */
int floe_maintain_output_open(struct compact *c, const struct floe_pq_column *cols, size_t n);
/* Abandons the open output, if any, and removes its file from tmp_dir. */
void floe_maintain_output_drop(struct output *out);
/* Finishes the open output, makes it durable, creates it in the warehouse under the
 * partition key (of the table's current spec; copied), and adds it to the pending
 * replace. */
int floe_maintain_output_finish(struct compact *c, const struct floe_part_key *key);
/* Forgets the pending replace; with drop, removes its new files from the warehouse. */
void floe_maintain_pending_reset(struct compact *c, bool drop);
/* Adds the old file path (borrowed: it must outlive the pending replace). */
int floe_maintain_pending_add_old(struct compact *c, const char *path);
/* Commits the pending replace (nothing to do without new files); an abandoned one is
 * counted, its files removed, and is no error. */
int floe_maintain_pending_commit(struct compact *c);
/* Orders fs's files into idx (fs->n of them): by partition, then older data first (data
 * sequence number), then by path. */
void floe_maintain_order(const struct floe_table_files *fs, size_t *idx);
/* The timestamp field that closes the files of a spec without a time field (the scan's
 * time_field_id): ts for a raw table, window_end for an aggregate table (0: none). */
int32_t floe_maintain_time_field(const struct floe_maintain_options *o);
/* Rewrites the live files of older partition specs, in closed partitions, into the
 * current spec (agent/run/maintain_respec.c). */
int floe_maintain_respec(struct compact *c);

#endif

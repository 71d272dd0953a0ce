/* An Iceberg table in a warehouse (Hadoop catalog layout:
 * <warehouse>/<namespace>/<table>/{data,metadata}) on an object store (a local directory
 * or S3), and floe's append commit to it.
 *
 * The commit point is the creation of metadata/v<N+1>.metadata.json if absent (link() on
 * a local directory, a conditional PUT on S3), which exactly one of several racing
 * writers wins; version-hint.text is a cache for readers.
 * Data files and the manifest are written once per commit; every attempt reloads the
 * table, writes a new manifest list from the fresh parent and tries v<N+1>. The snapshot
 * id and floe.commit-seq are fixed before the first attempt, and every attempt first
 * checks whether the table already holds that commit, so a retry never appends twice. */
#ifndef FLOE_TABLE_H
#define FLOE_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "agent/lake/partition.h"
#include "agent/lake/spool.h"

struct floe_alloc;
struct floe_ice_meta;
struct floe_store;

struct floe_table_options {
	struct floe_store *store;   /* the warehouse (borrowed; outlives the table) */
	const char *namespace;
	const char *name;
	const struct floe_part_spec *spec; /* used when the table is created */
	const char *agent_id;
	unsigned max_attempts;      /* commit attempts before giving up (0 = 100) */
	unsigned max_log;           /* metadata-log entries kept (0 = 100) */
};

struct floe_table;

/* Binds to the table, creating it (v1.metadata.json) if absent. FLOE_ESCHEMA when the
 * existing table's schema or partition spec cannot take floe's rows; why says why. */
int floe_table_open(struct floe_alloc *a, const struct floe_table_options *opt, struct floe_table **out,
		    char *why, size_t cap);
/* Opens an existing table read-only (for inspect): the table at key prefix (may be "")
 * in store. FLOE_ENOTFOUND when it has no metadata. No commits through such a handle. */
int floe_table_load(struct floe_alloc *a, struct floe_store *store, const char *prefix,
		    struct floe_table **out);
void floe_table_free(struct floe_table *t);
/* Reloads the newest metadata version. */
int floe_table_refresh(struct floe_table *t);
const struct floe_ice_meta *floe_table_meta(const struct floe_table *t);
const struct floe_part_spec *floe_table_spec(const struct floe_table *t);
/* The table's location URI ("file:///…/default/logs"). */
const char *floe_table_location(const struct floe_table *t);
/* Metadata version currently loaded (N of vN.metadata.json). */
int64_t floe_table_version(const struct floe_table *t);
/* The highest floe.commit-seq that agent_id has in the current snapshot's ancestry, or
 * -1 when it has none. */
int64_t floe_table_committed_seq(const struct floe_table *t, const char *agent_id);

/* Appends the data files of spool entries (in order) as one snapshot whose
 * floe.commit-seq is the last entry's seq. Copies each spool file into the table's data
 * directory first. Returns 0 when the commit is in the table (including when an earlier
 * attempt or process already put it there). */
int floe_table_commit(struct floe_table *t, struct floe_spool *spool,
		      struct floe_spool_entry *const *entries, size_t n);

#endif

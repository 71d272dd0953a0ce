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
 * checks whether the table already holds that commit, so a retry never appends twice.
 *
 * Every object floe puts in the warehouse is an exclusive create, except
 * version-hint.text (a cache every writer rewrites, by the spec's design). Data files are
 * named <agent id>-<installation id>-<seq>-<k>.parquet: only this installation ever
 * chooses such a name, so an existing object of the same size under it is this
 * installation's own earlier upload. Commits are attributed to an installation
 * (floe.installation-id in the snapshot summary), not to the agent id, which an
 * operator may change or (by mistake) give to two devices. */
#ifndef FLOE_TABLE_H
#define FLOE_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/schema/partition.h"
#include "agent/schema/record.h"
#include "agent/lake/spool.h"

struct floe_alloc;
struct floe_catalog_rest;
struct floe_clock;
struct floe_colplan;
struct floe_err;
struct floe_ice_field;
struct floe_ice_meta;
struct floe_rand;
struct floe_store;
struct floe_table_props;

struct floe_table_options {
	struct floe_store *store;   /* the warehouse (borrowed; outlives the table) */
	/* A REST catalog the table is in (borrowed; outlives the table), or NULL: the store
	 * is the catalog (metadata files created if absent). With a catalog, store is not
	 * used: the table's files go to the location the catalog gives it. */
	struct floe_catalog_rest *catalog;
	const char *namespace;
	const char *name;
	const struct floe_part_spec *spec; /* used when the table is created */
	const char *agent_id;
	const char *installation_id; /* this installation (a UUID, see state/identity.h) */
	/* Snapshots without floe.installation-id whose floe.agent-id is this are this
	 * installation's: it continues a state_dir from a floe without installation ids.
	 * NULL: none. */
	const char *legacy_agent_id;
	/* An installation whose commits under agent_id this one takes over ("legacy" for
	 * commits without an installation id); NULL: none. See floe_table_check_identity. */
	const char *replaces;
	/* Where this installation runs (state/identity.h, floe_identity_home; NULL: unknown),
	 * written with each commit as floe.installation-home. Another installation's commits
	 * under agent_id made from this home are this installation's before its state_dir
	 * was wiped: it takes them over as replaces would, saying so once. */
	const char *home;
	unsigned max_attempts;      /* commit attempts before giving up (0 = 100) */
	unsigned max_log;           /* metadata-log entries kept (0 = 100) */
	/* Manifest merging and snapshot expiry on commit (borrowed; NULL: neither, and
	 * max_log as above). A property of the same name in the table wins over these. */
	const struct floe_table_props *props;
	/* Snapshot and metadata times, and the backoff between attempts (NULL: the system
	 * clock); snapshot ids, UUIDs and Avro sync markers (NULL: the kernel's randomness).
	 * Borrowed: they outlive the table. */
	const struct floe_clock *clock;
	const struct floe_rand *rand;
	/* Another table than logs (the aggregate tables): its fields, used when the table is
	 * created, and the check that an existing table's schema takes floe's rows
	 * (schema_ctx is its first argument). NULL fields: the logs table's. */
	const struct floe_ice_field *fields;
	size_t nfields;
	int (*schema_check)(const void *schema_ctx, const struct floe_ice_meta *m,
			    struct floe_err *err);
	const void *schema_ctx;
	/* The logs table's typed columns (borrowed; NULL or unplanned: none): each commit
	 * evolves the table's schema to hold them, in the same metadata version as its
	 * snapshot, and refuses (FLOE_ESCHEMA) a table whose fields no longer match the ids
	 * and types the data files were written with. */
	const struct floe_colplan *columns;
	/* The logs table's sort_by, recorded as the table's sort order (each key ascending,
	 * nulls first, as the batch sorts): with sort_order set, each commit makes it the
	 * default sort order (an equal one reused by id; none: the unsorted order 0) and
	 * the data files it adds carry its id. Without: the table's sort orders are left. */
	bool sort_order;
	const enum floe_sort_key *sort_keys;
	size_t nsort_keys;
	/* Where the agent's records say this table held its commits (the output's record of
	 * its last commit; "" when the record has no location; NULL: no record): a table
	 * absent at that location is not created again but refused with FLOE_EGONE, since an
	 * empty warehouse mount point and a table moved away look the same, and a table made
	 * on the root file system under a mount that failed would take the commits. A table
	 * in another warehouse is a new one. The runner sets it for a local warehouse only.
	 * Not for a REST catalog, which answers for its tables. */
	const char *existed_at;
	/* installation_id was made new because the old one was lost (state/identity.h,
	 * renewed): another installation's commits under agent_id are then most likely the
	 * lost one's, and the refusal is FLOE_ENEWID, which the agent waits out (spooling)
	 * until agent.replaces names it, rather than FLOE_EIDENTITY, which stops it. */
	bool renewed;
};

struct floe_table;

/* Every function here that fails says why in err (may be NULL): the code it returns and a
 * message naming the file and what was expected. */

/* Binds to the table, creating it (v1.metadata.json) if absent. FLOE_ESCHEMA when the
 * existing table's schema or partition spec cannot take floe's rows, FLOE_EREGRESS when
 * its metadata history has a gap or goes backwards (see floe_table_refresh),
 * FLOE_EIDENTITY when another installation commits under opt->agent_id
 * (floe_table_check_identity). */
int floe_table_open(struct floe_alloc *a, const struct floe_table_options *opt,
		    struct floe_table **out, struct floe_err *err);
/* Opens an existing table read-only (for inspect): the table at key prefix (may be "")
 * in store, found and checked as floe_table_open does. FLOE_ENOTFOUND when it has no
 * metadata. No commits through such a handle. */
int floe_table_load(struct floe_alloc *a, struct floe_store *store, const char *prefix,
		    struct floe_table **out, struct floe_err *err);
/* Opens table name of a REST catalog read-only (for inspect); catalog is borrowed and
 * must outlive the table. FLOE_ENOTFOUND when the catalog has no such table. */
int floe_table_load_catalog(struct floe_alloc *a, struct floe_catalog_rest *catalog, const char *name,
			    struct floe_table **out, struct floe_err *err);
/* The store the table's files are in (borrowed, as long as t). */
struct floe_store *floe_table_store(const struct floe_table *t);
void floe_table_free(struct floe_table *t);
/* Commit attempts made through t since it was opened, and those another writer won. */
void floe_table_commit_counts(const struct floe_table *t, uint64_t *attempts, uint64_t *conflicts);
/* Reloads the newest metadata version: the one version-hint.text names, then every next
 * version that exists (the probing rule of Hadoop tables, which readers follow too).
 * floe refuses, with FLOE_EREGRESS, a history that readers could take differently or
 * that lost commits: a hint naming a missing version (the current metadata file was
 * deleted), a next version whose metadata-log does not end with its predecessor or whose
 * last-sequence-number is lower (a stray or restored copy), and a version two past the
 * current one while the next is missing (a gap: probing readers stop before it, listing
 * readers take it). */
int floe_table_refresh(struct floe_table *t, struct floe_err *err);
const struct floe_ice_meta *floe_table_meta(const struct floe_table *t);
/* The partition spec files are written under: the configuration's (options.spec), with
 * the id the table holds it under, or -1 while the table does not hold it yet (added by
 * the next commit). */
const struct floe_part_spec *floe_table_spec(const struct floe_table *t);
/* The table's location URI ("file:///…/default/logs"). */
const char *floe_table_location(const struct floe_table *t);
/* Metadata version currently loaded (N of vN.metadata.json). */
int64_t floe_table_version(const struct floe_table *t);
/* The installation whose commits under agent_id this one takes over: opt.replaces, else
 * the one the last identity check found made from this installation's home (opt.home:
 * this installation before its state_dir was wiped); NULL: none. */
const char *floe_table_replaced(const struct floe_table *t);
/* The highest floe.commit-seq that installation_id has in the current snapshot's
 * ancestry, or -1 when it has none. For this table's own installation, snapshots of its
 * legacy_agent_id count too. */
int64_t floe_table_committed_seq(const struct floe_table *t, const char *installation_id);
/* Checks that no other installation commits under this table's agent id: 0, or
 * FLOE_EIDENTITY (err says which installation, when, and what to do) when
 * another installation has commits under it and this one has none yet (unless
 * opt.replaces names that installation), or when another installation committed under
 * it after this one's first commit (two live agents share the id). Run at open and
 * before every commit attempt, so of two agents that share an id, the second to commit
 * stops before its first commit lands. */
int floe_table_check_identity(struct floe_table *t, struct floe_err *err);

/* Appends the data files of spool entries (in order) as one snapshot whose
 * floe.commit-seq is the last entry's seq. Copies each spool file into the table's data
 * directory first. Returns 0 when the commit is in the table (including when an earlier
 * attempt or process already put it there), FLOE_ECONFLICT when every attempt lost the
 * race to another writer (or the table holds only some of the entries), FLOE_EEXIST when
 * an object floe would have to replace is there. */
int floe_table_commit(struct floe_table *t, struct floe_spool *spool,
		      struct floe_spool_entry *const *entries, size_t n, struct floe_err *err);

/* ---- Compaction (table_replace.c): the small files of closed partitions, rewritten
 * elsewhere into larger ones, replace them in one Iceberg "replace" snapshot. ---- */

/* A live data file of the current snapshot that compaction may rewrite. */
struct floe_table_file {
	const char *path; /* URI, in the list's storage */
	int64_t records, size;
	int64_t seq;  /* data sequence number: older data first */
	size_t part;  /* index of its partition key in the list */
	int32_t spec_id; /* the partition spec its manifest is written under */
};
/* What floe_table_scan found: files and the distinct partition keys they are in. */
struct floe_table_files {
	struct floe_alloc *a;
	struct floe_table_file *f;
	size_t n, cap;
	struct floe_part_key *keys;
	int32_t *key_specs; /* the spec of each key */
	size_t nkeys, keycap;
	char *buf; /* the paths, NUL-separated */
	size_t len, bufcap;
	size_t skipped; /* candidates left out over max_files */
};
struct floe_table_scan_options {
	int64_t max_size;	/* files below this many bytes are small */
	int64_t closed_before_us; /* partitions whose time range ends before this are closed */
	size_t max_files;	/* candidates kept at most (a later run takes the rest) */
	/* Files of every spec but the table's current one (of any size), each by its own
	 * spec's partition tuple and time range, in place of the current spec's small ones. */
	bool old_specs;
	/* A spec without a time field: a file of it is closed when its upper bound of this
	 * timestamp field (the logs table's ts, an aggregate table's window_end) is before
	 * closed_before_us. 0: such a spec has no closed file. */
	int32_t time_field_id;
};
/* Lists the small live data files of closed partitions (by the partition spec's time
 * field; a spec without one, by each file's upper bound of o->time_field_id) of the
 * current snapshot, from
 * manifests of the table's current spec (with o->old_specs: the files of the other specs,
 * whose keys are under their own spec: floe_table_files.key_specs). out is filled
 * (release with floe_table_files_fini) and holds the files in manifest order. */
int floe_table_scan(struct floe_table *t, const struct floe_table_scan_options *o,
		    struct floe_table_files *out, struct floe_err *err);
void floe_table_files_fini(struct floe_table_files *fs);
/* Which of the data files uris[0..n) (URIs, sorted by strcmp) a manifest of any snapshot
 * of the freshly loaded metadata lists, in any entry (deleted ones too): found[i] is set
 * for those, cleared for the others. Each manifest is read once. */
int floe_table_listed(struct floe_table *t, const char *const *uris, size_t n, bool *found, struct floe_err *err);

/* Commits the data files added[0..nadded) (already in the table's data directory, in
 * partitions of the current spec) as replacing the live data files old[0..nold) (URIs)
 * in one snapshot of operation "replace". Every attempt rebuilds on the freshly loaded
 * parent and checks there that each old file is still live: appends that landed
 * meanwhile are kept (they never conflict); when some old file is gone (another
 * compaction rewrote it, or it was removed) the replace is abandoned with
 * FLOE_ENOTFOUND, and nothing of it is committed. FLOE_ECONFLICT when every attempt
 * lost the race. The replace snapshot carries no floe.agent-id or floe.commit-seq: it
 * is no agent's commit. */
int floe_table_replace(struct floe_table *t, const char *const *old, size_t nold,
		       const struct floe_ice_data_file *added, size_t nadded, struct floe_err *err);
/* Makes the table's schema hold p's columns under the ids p will be written with,
 * before any file carries them: each try learns p from the freshly loaded schema
 * (floe_colplan_learn) and, when the schema must change, commits a metadata version
 * with it and no snapshot; a try that loses the race learns again from the winner's
 * schema. So agents adding columns at once never give one id to two columns. 0 and p
 * planned (its ids may differ from those it came with); FLOE_ESCHEMA (err says why)
 * when a column cannot live with the table's field; an I/O or conflict error else (p
 * unchanged). Invalidates floe_table_meta's earlier answers. For a table other than logs
 * it does nothing. */
int floe_table_reserve_columns(struct floe_table *t, struct floe_colplan *p, struct floe_err *err);

/* Expires snapshots and drops metadata-log entries by the table's properties (as a
 * commit does) in a metadata version of its own, without a new snapshot, and deletes
 * what they no longer need; nothing is written when nothing expires. *expired gets the
 * number of snapshots expired. In a REST catalog nothing is done (0): expiry is the
 * catalog's maintenance there. */
int floe_table_expire_now(struct floe_table *t, size_t *expired, struct floe_err *err);

#endif

/* The table's internals, shared by its files: table.c (open, load, identity, accessors,
 * the spec and sort order the configuration evolves the table to), table_version.c
 * (names, messages, finding and checking the current metadata version), table_commit.c
 * (the append), table_attempt.c (the attempt and retry loop every snapshot commit takes)
 * and table_summary.c (a snapshot's summary, time and ids), which call one way:
 * table_commit.c -> table_attempt.c -> table_summary.c, table_attempt.c -> table.c ->
 * table_version.c. Internal: nothing outside agent/lake/table*.c includes it. */
#ifndef FLOE_TABLE_IMPL_H
#define FLOE_TABLE_IMPL_H

#include "agent/config/config.h"
#include "agent/lake/table.h"
#include "formats/base/alloc.h"
#include "formats/base/limits.h"

#include "formats/base/error.h"
#include "formats/iceberg/metadata.h"

#include <stdbool.h>
#include <string.h>

#define FLOE_TABLE_METADATA_MAX (256u << 20)
/* floe's own table property: the snapshots floe's expiry keeps at most, whatever their
 * age (table_expire.c); a table floe creates gets FLOE_TABLE_MAX_SNAPSHOTS. 100 holds
 * the hour of history history.expire.max-snapshot-age-ms keeps at one commit a minute,
 * and keeps metadata.json near 80 KB at any commit rate. */
#define FLOE_TABLE_MAX_SNAPSHOTS_KEY "floe.history.max-snapshots-to-keep"
#define FLOE_TABLE_MAX_SNAPSHOTS "100"
#define FLOE_TABLE_MANIFEST_MAX (256u << 20)
#define FLOE_TABLE_PATH_CAP FLOE_PATH_MAX

struct floe_table {
	struct floe_alloc *alloc;
	struct floe_table_options opt;
	struct floe_store *store; /* borrowed */
	char dir[FLOE_TABLE_PATH_CAP];     /* key prefix of the table in the store ("" = its root) */
	char metadir[FLOE_TABLE_PATH_CAP]; /* key prefix of metadata/ */
	char location[FLOE_TABLE_PATH_CAP + 8];
	char uuid[64];
	char inst_hex[33]; /* the installation id without dashes: part of data file names */
	struct floe_ice_meta *meta;
	int64_t version; /* of meta; 0 after a failed commit attempt edited meta */
	/* The newest version this handle has seen whole (loaded or created) and its
	 * last-sequence-number: the table must never be found behind them. */
	int64_t seen_version, seen_last_seq;
	/* The spec this handle writes under (the configuration's, as the table holds it or
	 * will: floe_table_evolve_spec); spec_added: not in the table yet, and spec_unsure is
	 * the same without an id, for the spool. */
	struct floe_part_spec spec, spec_unsure;
	bool spec_added;
	/* An attempt found the spec's id (or the sort order's) taken by another writer's:
	 * the commit's manifest is written again under the new one. */
	bool spec_moved;
	int32_t sort_order_id; /* the configuration's sort order in the table (-1: none yet) */
	const struct floe_clock *clock; /* opt's, or the system's */
	/* The time of the last snapshot this handle committed and the monotonic clock when
	 * it was taken (ms; last_mono_ms meaningful when last_ts_ms > 0): see
	 * floe_table_snapshot_time. */
	int64_t last_ts_ms, last_mono_ms;
	const struct floe_rand *rand;
	struct floe_err err; /* why the call in progress failed (floe_table_fail) */
	uint64_t attempts, conflicts; /* commit attempts made, and lost to other writers */
	/* In a REST catalog (opt.catalog): the ETag of meta ("" none), the table's store (at
	 * the location the catalog gave, owned) and the snapshot the attempt in progress adds
	 * (floe_table_add_snapshot's, for the commit request). */
	char etag[256];
	int32_t catalog_schema_id; /* the current schema id of the metadata as loaded */
	/* Its default spec and sort order, and the highest ids of each it listed. */
	int32_t catalog_spec_id, catalog_last_spec_id, catalog_sort_order_id, catalog_last_sort_order_id;
	struct floe_store *own_store;
	const struct floe_ice_snapshot *pending;
	/* The expiry of an attempt whose outcome was unknown (an answer lost), with its
	 * snapshot: its clean-up is due once a reload finds that snapshot in the table
	 * (floe_table_settle_lost). */
	struct floe_table_expiry *lost;
	int64_t lost_snapshot;
	bool home_said; /* the takeover of a wiped installation's agent.id was logged */
	/* The installation whose commits under agent_id were made from this one's home
	 * (opt.home), found by the last identity check: "" none. */
	char homed_by[40];
};

struct floe_alloc;
struct floe_buf;
struct floe_json;
struct floe_ice_field_summary;
struct floe_ice_manifest_entry;
struct floe_ice_manifest_list;
struct floe_table_expiry;
struct floe_table_merge_in;

/* table.c: evolves m (the loaded table, or an attempt's) to the configuration's partition
 * spec (the table's default without one) and fills *out with it as m holds it. */
int floe_table_evolve_spec(struct floe_table *t, struct floe_ice_meta *m, struct floe_part_spec *out);
/* table.c: evolves m to the configuration's sort order (opt.sort_order; *order_id -1
 * without) and gives its id. */
int floe_table_evolve_sort(struct floe_table *t, struct floe_ice_meta *m, int32_t *order_id);

/* table_summary.c (called by table_commit.c, table_replace.c and table_expire.c), what
 * every snapshot commit takes the same way */
/* Now, clamped to be after the parent at index pidx and the last metadata update; with
 * the monotonic clock then in *mono_ms (for floe_table_snapshot_taken). */
int64_t floe_table_snapshot_time(const struct floe_table *t, const struct floe_ice_meta *m, long pidx,
				 int64_t *mono_ms);
/* A snapshot with time ts_ms (taken at mono_ms) was committed by t. */
void floe_table_snapshot_taken(struct floe_table *t, int64_t ts_ms, int64_t mono_ms);
/* A snapshot id no snapshot of the table has, and a commit UUID. */
int floe_table_commit_ids(struct floe_table *t, int64_t *snapshot_id, char commit_uuid[37]);
/* Lost the race: backs off with full jitter (doubling *delay_ms up to 1 s). */
void floe_table_back_off(struct floe_table *t, unsigned attempt_no, unsigned *delay_ms);
/* A snapshot summary: the strings and their storage. */
struct floe_table_summary {
	char v[17][72]; /* agent ids take up to 64 bytes */
	struct floe_ice_kv kv[17];
	size_t n;
};
/* Appends key with the text v, or the number v. */
void floe_table_summary_str(struct floe_table_summary *s, const char *key, const char *v);
void floe_table_summary_int(struct floe_table_summary *s, const char *key, int64_t v);
/* Appends the total-* entries: the parent's at index pidx (-1: none) plus records, bytes
 * and files (the snapshot's changes), or nothing when the parent does not have them. */
void floe_table_summary_totals(struct floe_table_summary *s, const struct floe_ice_meta *m, long pidx,
			       int64_t records, int64_t bytes, int64_t files);

/* table_attempt.c (called by table_commit.c, table_replace.c and table_reserve.c), what
 * every snapshot commit takes the same way */
/* Reads the manifest list of the snapshot at index parent_idx (-1: *out = NULL). */
int floe_table_read_list(struct floe_table *t, long parent_idx, struct floe_ice_manifest_list **out);
/* Metadata-log entries kept: write.metadata.previous-versions-max. */
size_t floe_table_max_log(const struct floe_table *t);
/* Stores the attempt's manifest list b under a name of its own (snapshot id, attempt,
 * commit uuid) into path[cap], its URI into uri[ucap]: FLOE_EEXIST when one is there. */
int floe_table_put_list(struct floe_table *t, const struct floe_table_merge_in *mi, const struct floe_buf *b,
			char *path, size_t cap, char *uri, size_t ucap);
/* The steps every commit of the next metadata version takes, an append, a replace and an
 * expiry alike, on t->meta as loaded at t->version. First, adds snap (NULL: only records
 * the current version in the metadata-log, as an expiry does) at now_ms, with what the
 * metadata-log's length and history.expire.* drop from it planned into x. */
int floe_table_add_snapshot(struct floe_table *t, const struct floe_ice_snapshot *snap, int64_t now_ms,
			    struct floe_table_expiry *x);
/* Then writes t->meta (through b) as the next version, created only if absent: 0 committed
 * (t->version advanced, x's files deleted), FLOE_ECONFLICT another writer created it first.
 * *unknown is set when a failure may hide a commit that landed. crash_before and
 * crash_after (each may be NULL) name the crash points around the write. */
int floe_table_put_next(struct floe_table *t, struct floe_buf *b, const char *crash_before,
			const char *crash_after, const struct floe_table_expiry *x, bool *unknown);

/* The attempt skeleton every snapshot commit runs (an append, a replace): on the loaded
 * parent, the step's manifest list, stored under a name of its own; the snapshot with
 * the step's operation and summary; the next metadata version created if absent. A
 * known loss removes the list (and merged manifests); a failure that may hide a commit
 * that landed (*unknown) keeps them. */
struct floe_table_merge;
struct floe_table_step {
	const char *operation;			/* the snapshot's: "append", "replace" */
	const char *crash_before, *crash_after; /* around the metadata write (may be NULL) */
	/* The manifest list of an attempt on parent (index pidx, -1: none) into b; mi has
	 * this attempt's seq, schema and spec JSON. Merged manifests go into mg. */
	int (*list)(struct floe_table *t, void *ctx, int64_t parent, long pidx,
		    const struct floe_table_merge_in *mi, struct floe_table_merge *mg, struct floe_buf *b);
	/* The snapshot summary on the parent at index pidx of t->meta. */
	void (*summary)(struct floe_table *t, void *ctx, long pidx, struct floe_table_summary *s);
	/* After a commit, before mg is released (may be NULL). */
	void (*committed)(struct floe_table *t, void *ctx, const struct floe_table_merge *mg);
};
/* One attempt of st on t->meta: 0 committed, FLOE_ECONFLICT lost the race, other errors
 * as the step or the store gives them. Sets mi->seq; mi's schema and spec JSON are only
 * valid during the call. */
int floe_table_attempt(struct floe_table *t, const struct floe_table_step *st, void *ctx,
		       struct floe_table_merge_in *mi, bool *unknown);
/* One try of a commit, given its number (1 on the metadata as the caller loaded it). */
typedef int floe_table_try(struct floe_table *t, void *ctx, unsigned attempt_no);
/* The retry loop of every metadata commit: up to opt.max_attempts tries, each after the
 * first on freshly reloaded metadata and after a back-off; a failed try forces the next
 * reload (it may have edited t->meta). Returns the first try's result that is not
 * FLOE_ECONFLICT, or FLOE_ECONFLICT ("N <what> attempts lost the race") when all lost. */
int floe_table_retry(struct floe_table *t, const char *what, floe_table_try *try_fn, void *ctx);
/* m (the loaded table, or an attempt's) evolved to hold plan p's typed columns (and the
 * built-in ones as floe writes them); *changed_out (may be NULL) says whether the schema
 * changed. Fails t, naming the table, when the columns cannot be committed. */
struct floe_colplan;
int floe_table_evolve_plan(struct floe_table *t, struct floe_ice_meta *m, const struct floe_colplan *p,
			   bool *changed_out);

/* table_merge.c (called by table_commit.c and table_attempt.c; calls table_version.c) */
/* The compact JSON of v into *out (owned by the caller, from a). */
int floe_table_write_json(struct floe_alloc *a, const struct floe_json *v, char **out);
/* The table's property key as a number ("true"/"false" as 1/0), else configured. */
int64_t floe_table_prop(const struct floe_table *t, const char *key, int64_t configured);
/* Whether the table's key got floe's unattended value at its creation (not the owner's,
 * nor a configured one) and the configuration now sets it: then the configured value
 * applies (table.c). */
bool floe_table_prop_yields(const struct floe_table *t, const char *key);
/* What a merge writes for: the commit's snapshot, the list's sequence number, the names
 * of its files, and the manifest header's schema and spec JSON. */
struct floe_table_merge_in {
	int64_t snapshot_id, seq;
	const char *commit_uuid;
	unsigned attempt;
	const char *schema_json, *spec_json;
};
/* The manifests a merge wrote: keys (to remove when the attempt loses), URIs and
 * partition summaries (which the merged list entries point into). */
struct floe_table_merge {
	char (*keys)[FLOE_TABLE_PATH_CAP + 64];
	char (*uris)[2 * FLOE_TABLE_PATH_CAP + 80];
	struct floe_ice_field_summary **sums;
	size_t n;
	bool own_merged; /* the commit's own manifest went into a merged one */
};
/* Merges the manifest-list entries e[0..*n) in place as opt.props says (nothing without
 * props or below min-count-to-merge), setting *n to the new count. mg (filled here) owns
 * what merged entries point to: release it with floe_table_merge_fini after the list is
 * written, removing the merged files when the attempt did not commit. */
int floe_table_merge(struct floe_table *t, const struct floe_table_merge_in *mi,
		     struct floe_ice_manifest_entry *e, size_t *n, struct floe_table_merge *mg);
void floe_table_merge_fini(struct floe_table *t, struct floe_table_merge *mg, bool remove);

/* table_expire.c (called by table_attempt.c; calls table_merge.c) */
/* Strings (URIs), NUL-separated in one buffer, found by their offsets. */
struct floe_table_paths {
	struct floe_alloc *a;
	char *buf;
	size_t len, cap;
	size_t *off;
	size_t n, ncap;
};
/* The i-th string of p (i < p->n). */
static inline const char *floe_table_path_at(const struct floe_table_paths *p, size_t i)
{
	return p->buf + p->off[i];
}
static inline void floe_table_paths_fini(struct floe_table_paths *p)
{
	floe_free(p->a, p->buf);
	floe_free(p->a, p->off);
}
/* What a commit expires: the manifest lists of the expired snapshots (entry 0: the
 * oldest retained snapshot's) and the metadata files that fall off the metadata-log. */
struct floe_table_expiry {
	struct floe_table_paths lists, logs;
	int64_t *ids; /* the snapshot of each list, in the same order */
	size_t nexpired;
	/* The keys of the table properties the expiry raised (installations'
	 * floe.committed-seq.ID): a REST catalog is sent them with the removal. */
	struct floe_table_paths props;
};
/* Before the new snapshot is added to m: the metadata-log entries that adding it with
 * max_log entries kept drops, when write.metadata.delete-after-commit.enabled. */
int floe_table_expire_log(struct floe_table *t, const struct floe_ice_meta *m, size_t max_log,
			  struct floe_table_expiry *x);
/* After it is added: removes from m the snapshots history.expire.* expire (at most 100,
 * oldest first; none on a table with more than main's line of history), raising each
 * installation's floe.committed-seq.<id> property to their commit-seqs. */
int floe_table_expire_plan(struct floe_table *t, struct floe_ice_meta *m, int64_t now_ms,
			   struct floe_table_expiry *x);
/* Once the metadata is committed: deletes the data files that snapshots whose parent
 * is now expired removed (a replace's old files), the expired snapshots' lists, their
 * manifests that the oldest retained snapshot does not list, and the dropped metadata
 * files (best effort: a failure leaves an unused file and is logged). */
void floe_table_expire_clean(struct floe_table *t, const struct floe_table_expiry *x);
/* Frees what x holds (here, so that table.c frees a handle's without calling into the
 * files that call it). */
static inline void floe_table_expiry_fini(struct floe_table *t, struct floe_table_expiry *x)
{
	floe_table_paths_fini(&x->lists);
	floe_table_paths_fini(&x->logs);
	floe_table_paths_fini(&x->props);
	floe_free(t->alloc, x->ids);
	memset(x, 0, sizeof(*x));
}
/* After a reload: the clean-up of t->lost when its snapshot landed after all (else the
 * table still holds what it would have expired, and a later commit expires it again). */
void floe_table_settle_lost(struct floe_table *t);
/* How many of the data files paths[0..n) the current snapshot holds live (each counted
 * once per live entry). Reads every manifest of the current snapshot: for recovery only. */
int floe_table_live_count(struct floe_table *t, const char *const *paths, size_t n, size_t *live);

/* catalog_rest_table.c (called by table.c and table_attempt.c; calls table_version.c):
 * the table in a REST catalog. */
struct floe_catalog_rest_create;
/* Loads the table from the catalog, creating it (as cr says) when absent, and opens a
 * store (*store, owned by the caller) at the location the catalog gave it. */
int floe_table_catalog_bind(struct floe_table *t, const struct floe_catalog_rest_create *cr,
			    struct floe_store **store);
/* Reloads the table from the catalog (nothing is sent back when its ETag still holds). */
int floe_table_catalog_reload(struct floe_table *t);
/* Commits t->pending on its parent: 0 (t->meta is the catalog's new metadata),
 * FLOE_ECONFLICT (lost the race, or *unknown: the outcome is unknown and the next
 * attempt's reload tells), another error as the catalog gives it. */
int floe_table_catalog_put(struct floe_table *t, const struct floe_table_expiry *x, bool *unknown);

/* table_version.c */
/* The key of metadata/v<v>.metadata.json, and its URI (for messages). */
void floe_table_meta_path(const struct floe_table *t, int64_t v, char *out, size_t cap);
void floe_table_meta_uri(const struct floe_table *t, int64_t v, char *out, size_t cap);
/* Sets t->err (the public function reports it) and returns code. */
int floe_table_fail(struct floe_table *t, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* At the end of a public function: rc, with t->err copied to err (may be NULL) when it
 * failed (floe_strerror's text when nothing more was said). */
int floe_table_report(const struct floe_table *t, int rc, struct floe_err *err);
/* The checks of floe_table_check_identity and floe_table_refresh, for the functions
 * here that call them (failures in t->err). */
int floe_table_identity(struct floe_table *t);
int floe_table_reload(struct floe_table *t);

/* Records t->meta at t->version as seen whole. */
void floe_table_seen(struct floe_table *t);
/* Rewrites version-hint.text with v (best effort: a failure is logged). */
void floe_table_write_hint(const struct floe_table *t, int64_t v);

/* Finds the current metadata version and loads it into t->meta and
 * t->version (0 and no meta when the table has none). With full, also lists metadata/ to
 * find versions past the current one. FLOE_EREGRESS (t->err says which file and what was
 * expected) when the history has a gap or goes backwards. */
int floe_table_find_current(struct floe_table *t, bool full);

#endif

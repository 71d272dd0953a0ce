/* The table's internals, shared by its three files: table.c (open, load, identity,
 * accessors), table_version.c (names, messages, finding and checking the current metadata
 * version) and table_commit.c (the append), which call one way: table_commit.c ->
 * table.c -> table_version.c. Internal: nothing outside agent/lake/table*.c includes it. */
#ifndef FLOE_TABLE_IMPL_H
#define FLOE_TABLE_IMPL_H

#include "agent/lake/table.h"
#include "formats/base/limits.h"

#include "formats/base/error.h"

#include <stdbool.h>

#define FLOE_TABLE_METADATA_MAX (256u << 20)
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
	struct floe_part_spec spec;
	const struct floe_clock *clock; /* opt's, or the system's */
	const struct floe_rand *rand;
	struct floe_err err; /* why the call in progress failed (floe_table_fail) */
};

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

/* A raw table's typed columns at start-up: which columns the configuration asks for
 * (its columns list, or the natural columns of the built-in parsers of the inputs whose
 * records can go to it), and their field ids, learnt from the table when it can be
 * reached and kept in the state directory (state_dir/columns for the logs table,
 * state_dir/tables/<name>/columns for a further one) for a start while it cannot. */
#ifndef FLOE_RUN_COLPLAN_H
#define FLOE_RUN_COLPLAN_H

#include <stdbool.h>
#include <stddef.h>

struct floe_colplan;
struct floe_config;
struct floe_err;
struct floe_ice_meta;
struct floe_pq_reid;
struct floe_spool_entry;
struct floe_spool;
struct floe_table;

/* The columns cfg asks of raw table k (floe_config_table_at's index; unplanned: no ids):
 * its list, or without one the natural columns of the parsers of the inputs whose table
 * or route rules name it. FLOE_ELIMIT when the columns are too many. */
int floe_run_columns_wanted(const struct floe_config *cfg, size_t k, struct floe_colplan *out,
			    struct floe_err *err);
/* The columns aggregation agg (an index of cfg->aggs) reads typed: the logs table's, those
 * of the further tables its inputs write to, and the natural columns of the built-in
 * parsers of those of its inputs that are written to no table (raw: false), whose types
 * no table's list decides (the first declaration of a name wins). Errors as above. */
int floe_run_columns_agg(const struct floe_config *cfg, size_t agg, struct floe_colplan *out,
			 struct floe_err *err);
/* The plan of raw table k at a start (out: the columns written) and the columns its commits evolve
 * the table with (commit: out's, and with spooled those of the saved plan the spooled files were
 * written with, which a changed list no longer names; planned alike): with the table's metadata m,
 * learnt from it and saved in state_dir; without (m NULL: the table is away), the saved plan when
 * it has out's columns, else the columns unplanned (their fields stay in attrs). FLOE_ESCHEMA (err
 * names the table, the column and both types) when a column cannot live with the
 * table's field, or, with spooled (files wait in the spool, written under the saved
 * plan), when the table now gives a column of the saved plan another id than its files
 * carry (another writer took the id first): the spool is kept. With t (the table of
 * m), the plan's ids are committed to the table's schema before any file carries them
 * (floe_table_reserve_columns); NULL: learnt only (checks, tests). */
int floe_run_columns_start(const struct floe_config *cfg, size_t k, const char *state_dir,
			   const struct floe_ice_meta *m, struct floe_table *t, const char *table,
			   bool spooled, struct floe_colplan *out, struct floe_colplan *commit,
			   struct floe_err *err);

/* Marks the entries sealed into sp from now on with the columns of plan p (the writers')
 * whose ids are provisional (none: no mark), from the seal at which the batch takes p. */
int floe_run_columns_mark(const struct floe_colplan *p, struct floe_spool *sp);
/* The commits' plan learnt (planned from table t, the committer's; saved in state_dir,
 * tname NULL for logs) with the provisional columns of entry e that it lacks (written
 * under an earlier configuration while the table was away): each gets the id the table
 * gives it, reserved in the table before the entry's files carry it, and the plan is
 * saved, so that the files reach the table and the column stays in it (optional, as a
 * removed column does). 0 with nothing to add or learnt unplanned; FLOE_ESCHEMA (err
 * says why) when a column cannot live with the table's; other errors of the table. */
int floe_run_columns_extend(const char *state_dir, const char *tname, struct floe_table *t,
			    const char *table, const struct floe_spool_entry *e,
			    struct floe_colplan *learnt, struct floe_err *err);
/* The ids that entry e's provisional columns get in the table: for each, by name, the id
 * of the commits' plan learnt (planned from the table, not provisional), into map (as
 * many as e->nprov) and *n. FLOE_ESCHEMA (err names the table, the column and both
 * types, from the table's schema m when the plan lacks the column) when a column is
 * missing from the plan or its type cannot be read as the table's: the entry stays. */
int floe_run_columns_reid_map(const struct floe_colplan *learnt, const struct floe_ice_meta *m,
			      const char *table, const struct floe_spool_entry *e,
			      struct floe_pq_reid *map, size_t *n, struct floe_err *err);

#endif

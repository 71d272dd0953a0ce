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

#endif

/* Whether the tables a configuration names, where they exist, take the rows it would
 * write: what `floe check` and a SIGHUP ask before a configuration may run. */
#ifndef FLOE_RUN_TABLES_CHECK_H
#define FLOE_RUN_TABLES_CHECK_H

struct floe_buf;
struct floe_config;
struct floe_err;

/* Opens cfg's warehouse (borrowed cfg; nothing is written) and compares each
 * aggregation's columns with its table's schema, when the table exists. 0 when every
 * existing table takes the rows (a table still absent is created at the start);
 * FLOE_ESCHEMA, with err naming the aggregation, the table and the field, when one does
 * not; another error (the warehouse could not be reached or read) when it could not be
 * told. */
int floe_run_check_tables(const struct floe_config *cfg, struct floe_err *err);

/* Appends to out, one "# ..." line each, the spools of tables cfg no longer names that
 * still hold entries (spool_left.h), the tables this agent committed to (their
 * spool's record of the last commit, in cfg's state_dir) that are missing from the local
 * warehouse: floe run waits for them (a warehouse mount not up) unless
 * lake.recreate_tables; and those of any catalog that are behind that record
 * (floe_output_behind_record: floe run holds their commits back). Nothing for a
 * warehouse or catalog that cannot be read. */
void floe_run_missing_tables(const struct floe_config *cfg, struct floe_buf *out);

#endif

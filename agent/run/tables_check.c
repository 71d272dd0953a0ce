/* A configuration against the tables it would write to: an aggregation whose group_by or
 * metrics changed makes other columns than its existing table holds, and no schema
 * evolution exists yet to take them, so it is refused before it runs (at `floe check`,
 * and at a SIGHUP while the old configuration still runs), not at the start of its
 * runner. Each raw table's typed columns are checked the same way: a column whose type
 * the table's field cannot take is refused. */
#include "agent/run/tables_check.h"

#include "agent/agg/aggregator.h"
#include "agent/config/config.h"
#include "agent/lake/catalog_rest.h"
#include "agent/lake/table.h"
#include "agent/lake/warehouse.h"
#include "agent/run/colplan.h"
#include "agent/run/spool_left.h"
#include "agent/schema/aggtable.h"
#include "agent/schema/columns.h"
#include "agent/lake/output.h"
#include "agent/state/identity.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"
#include "formats/base/limits.h"
#include "platform/path.h"
#include "platform/store.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* Where cfg's tables are: the warehouse's store, or a REST catalog, which names its
 * tables and gives their locations itself. */
struct lake {
	const struct floe_config *cfg;
	struct floe_store *st;
	struct floe_catalog_rest *cat;
};

static int lake_open(const struct floe_config *cfg, struct lake *l, struct floe_err *err)
{
	*l = (struct lake){cfg, NULL, NULL};
	if (cfg->lake.catalog == FLOE_CATALOG_REST)
		return floe_catalog_rest_new(NULL, cfg, NULL, NULL, &l->cat, err);
	return floe_warehouse_open(NULL, cfg, false, &l->st, err);
}

static void lake_close(struct lake *l)
{
	floe_store_free(l->st);
	floe_catalog_rest_free(l->cat);
}

/* Table name, read-only: FLOE_ENOTFOUND when it does not exist (yet). */
static int lake_load(const struct lake *l, const char *name, struct floe_table **t, struct floe_err *e)
{
	char prefix[512];
	if (l->cat)
		return floe_table_load_catalog(NULL, l->cat, name, t, e);
	if (floe_fmt(prefix, sizeof(prefix), "%s/%s", l->cfg->lake.namespace, name))
		return floe_err_set(e, FLOE_ELIMIT, "table name %s is too long", name);
	return floe_table_load(NULL, l->st, prefix, t, e);
}

/* "table NS/NAME in WAREHOUSE", or the catalog's words, for messages. */
static const char *lake_what(const struct lake *l, const char *name, char *out, size_t cap)
{
	if (l->cat)
		snprintf(out, cap, "table %s in %s", name, floe_catalog_rest_what(l->cat));
	else
		snprintf(out, cap, "table %s/%s in %s", l->cfg->lake.namespace, name,
			 l->cfg->lake.warehouse);
	return out;
}

/* Aggregation i against its table, if the table exists. */
static int check_agg(const struct lake *l, size_t i, struct floe_err *err)
{
	const struct floe_config *cfg = l->cfg;
	const struct floe_config_agg *c = &cfg->aggs[i];
	struct floe_colplan want;
	int rc = floe_run_columns_agg(cfg, i, &want, err);
	if (rc)
		return rc;
	char what[FLOE_PATH_MAX];
	struct floe_aggtable *cols = NULL;
	struct floe_table *t = NULL;
	struct floe_err e = {0};
	rc = lake_load(l, c->table, &t, &e);
	if (rc == FLOE_ENOTFOUND)
		return 0;
	if (rc == 0 && (rc = floe_agg_table_of(NULL, c, &want, &cols, &e)) == 0)
		rc = floe_aggtable_schema_check(cols, floe_table_meta(t), &e);
	if (rc == FLOE_ESCHEMA)
		floe_err_set(err, rc,
			     "aggregations[%zu] '%s': %s cannot take its rows: %s; "
			     "a table's columns do not change yet: keep the aggregation's group_by "
			     "and metrics, or give it another table (aggregations[].table)",
			     i, c->name, lake_what(l, c->table, what, sizeof(what)), floe_err_text(&e, rc));
	else if (rc)
		floe_err_set(err, rc, "aggregations[%zu] '%s': %s: %s", i, c->name,
			     lake_what(l, c->table, what, sizeof(what)), floe_err_text(&e, rc));
	floe_aggtable_free(cols);
	floe_table_free(t);
	return rc;
}

/* Raw table k's typed columns against its schema, if the table exists: a column whose
 * type the table's field cannot take (no spec promotion either way) is refused here,
 * before a run would stop at its first commit. */
static int check_raw(const struct lake *l, size_t k, struct floe_err *err)
{
	const struct floe_config *cfg = l->cfg;
	const char *name = floe_config_table_at(cfg, k)->name;
	char what[FLOE_PATH_MAX];
	struct floe_table *t = NULL;
	struct floe_err e = {0};
	struct floe_colplan p;
	int rc = floe_run_columns_wanted(cfg, k, &p, err);
	if (rc || p.n == 0)
		return rc;
	rc = lake_load(l, name, &t, &e);
	if (rc == FLOE_ENOTFOUND)
		return 0;
	if (rc == 0)
		rc = floe_colplan_learn(&p, floe_table_meta(t), &e);
	if (rc == FLOE_ESCHEMA)
		floe_err_set(err, rc,
			     "tables.%s.columns: %s cannot take them: %s; keep the "
			     "table's type, or give the column another name",
			     name, lake_what(l, name, what, sizeof(what)), floe_err_text(&e, rc));
	else if (rc)
		floe_err_set(err, rc, "%s: %s", lake_what(l, name, what, sizeof(what)),
			     floe_err_text(&e, rc));
	floe_table_free(t);
	return rc;
}

int floe_run_check_tables(const struct floe_config *cfg, struct floe_err *err)
{
	struct floe_colplan want;
	size_t ncols = 0;
	for (size_t k = 0; k < floe_config_ntables(cfg); k++) {
		int rc = floe_run_columns_wanted(cfg, k, &want, err);
		if (rc)
			return rc;
		ncols += want.n;
	}
	if (cfg->naggs == 0 && ncols == 0)
		return 0;
	struct lake l;
	int rc = lake_open(cfg, &l, err);
	for (size_t k = 0; rc == 0 && k < floe_config_ntables(cfg); k++)
		rc = check_raw(&l, k, err);
	for (size_t i = 0; rc == 0 && i < cfg->naggs; i++)
		rc = check_agg(&l, i, err);
	lake_close(&l);
	return rc;
}

/* Table name (spooled in spool_dir) for floe_run_missing_tables; inst: this
 * installation ("": unknown, not checked for a table behind). */
static void missing_one(const struct lake *l, const char *name, const char *spool_dir,
			const char *inst, struct floe_buf *out)
{
	const struct floe_config *cfg = l->cfg;
	uint64_t seq = 0;
	char prefix[512], at[FLOE_PATH_MAX], here[FLOE_PATH_MAX];
	struct floe_table *t = NULL;
	struct floe_err e = {0};
	floe_output_recorded(NULL, spool_dir, name, &seq, at, sizeof(at));
	if (seq == 0)
		return;
	/* A record made at another location is of another warehouse's table, or (a
	 * catalog gives the location) of one dropped and made again: this one is new. */
	int rc = lake_load(l, name, &t, &e);
	bool elsewhere;
	if (l->cat)
		elsewhere = rc == 0 && at[0] && strcmp(at, floe_table_location(t)) != 0;
	else if (floe_fmt(prefix, sizeof(prefix), "%s/%s", cfg->lake.namespace, name) ||
		 floe_store_uri(l->st, prefix, here, sizeof(here)))
		elsewhere = true; /* a name too long to tell */
	else
		elsewhere = at[0] && strcmp(at, here) != 0;
	if (!elsewhere && rc == 0 && inst[0] &&
	    floe_output_behind_record(NULL, spool_dir, name, t, inst, &e))
		(void)floe_buf_printf(out,
				      "# table %s: BEHIND this agent: %s. floe run commits the other "
				      "tables, and keeps this one's rows in the spool until its "
				      "metadata is restored\n",
				      name, e.msg);
	if (!elsewhere && rc == FLOE_ENOTFOUND && !l->cat)
		(void)floe_buf_printf(out,
				      "# table %s: MISSING from %s, though this agent committed to it "
				      "(commit-seq %llu): floe run waits for it (a warehouse mount not "
				      "up?) and keeps the rows in the spool%s\n",
				      name, cfg->lake.warehouse, (unsigned long long)seq,
				      cfg->lake.recreate_tables
					  ? "; lake.recreate_tables makes a new one instead"
					  : "; set lake.recreate_tables: true to make a new one");
	floe_table_free(t);
}

static void left_one(void *ctx, const struct floe_spool_left *left)
{
	(void)floe_buf_printf(ctx,
			      "# table %s: not in this configuration, but its spool %s holds %llu "
			      "entries (%llu bytes): floe run commits them only when %s is "
			      "configured again; delete the directory to give their rows up\n",
			      left->table, left->dir, (unsigned long long)left->entries,
			      (unsigned long long)left->bytes,
			      left->agg ? "an aggregation of that table" : "the table");
}

void floe_run_missing_tables(const struct floe_config *cfg, struct floe_buf *out)
{
	char state[FLOE_PATH_MAX], dir[FLOE_PATH_MAX], machine[17];
	struct lake l;
	struct floe_identity id;
	struct floe_err e = {0};
	if (floe_path_absolute(cfg->agent.state_dir, state, sizeof(state)))
		return;
	floe_run_spools_left(NULL, cfg, state, left_one, out);
	if (lake_open(cfg, &l, NULL))
		return;
	/* The installation whose commits the records count, without making one. */
	if (floe_identity_machine(FLOE_MACHINE_ID_PATH, machine) != 0)
		machine[0] = '\0';
	if (floe_identity_open(NULL, state, machine, false, NULL, &id, &e) != 0)
		id.installation[0] = '\0';
	const char *inst = id.installation;
	for (size_t k = 0; k < floe_config_ntables(cfg); k++) {
		const char *name = floe_config_table_at(cfg, k)->name;
		if (k ? floe_fmt(dir, sizeof(dir), "%s/tables/%s", state, name) == 0
		      : floe_fmt(dir, sizeof(dir), "%s/spool", state) == 0)
			missing_one(&l, name, dir, inst, out);
	}
	for (size_t i = 0; i < cfg->naggs; i++)
		if (floe_fmt(dir, sizeof(dir), "%s/agg/%s", state, cfg->aggs[i].table) == 0)
			missing_one(&l, cfg->aggs[i].table, dir, inst, out);
	lake_close(&l);
}

/* floe maintain -c FILE: compacts every table of the configuration (or the one --table
 * names) in its warehouse (agent/run/maintain.h); its replace commits also expire
 * snapshots and delete what expired, by each table's properties, as every commit does.
 * It may run beside the agents of a fleet, on any machine that reaches the warehouse. */
#include "agent/cli/commands.h"

#include "agent/config/config.h"
#include "agent/env/env.h"
#include "agent/lake/catalog_rest.h"
#include "agent/lake/table.h"
#include "agent/lake/warehouse.h"
#include "agent/run/maintain.h"
#include "formats/base/alloc.h"
#include "formats/base/error.h"
#include "platform/fs.h"
#include "platform/log.h"
#include "platform/path.h"
#include "platform/store.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static const char maintain_help[] =
    "usage: floe maintain -c FILE [--table NAME] [--log-level debug|info|warn|error]\n"
    "\n"
    "For every table of the configuration (the raw tables, then the aggregations' tables),\n"
    "or only table NAME: rewrites the small data files of closed partitions (those whose\n"
    "time range ended maintain.min_age ago; in a table whose partition spec has no time\n"
    "field, the files whose newest ts, or window_end, is that old) into files of about\n"
    "target_file_size, as Iceberg replace snapshots; agents may keep committing meanwhile.\n"
    "Old files are deleted once their snapshots expire (history.expire.* properties). A table\n"
    "that fails is reported and the others are maintained; the exit status is 1 if any\n"
    "failed. What each table's run did is written to <state_dir>/maintain/metrics.json, which\n"
    "the agent's metrics.json and /metrics show. Temporary files go to <state_dir>/maintain.\n";

/* A table maintain looks after: a raw table (logs, tables.<name>) or an aggregation's. */
struct target {
	const char *name;
	/* Its writer options (an aggregate table: the logs table's). */
	const struct floe_config_table *tc;
	const struct floe_part_spec *spec;
	bool aggregate;
};

/* maintain copies files as they are, under whatever schema the table has: an aggregate
 * table's columns are checked by the agent that writes it, not here. */
static int any_schema(const void *ctx, const struct floe_ice_meta *m, struct floe_err *err)
{
	(void)ctx, (void)m, (void)err;
	return 0;
}

/* The committing handle: attributed to no agent (an id config files cannot hold) and a
 * fresh installation id, so that no agent's identity checks see it. In a REST catalog
 * (catalog not NULL) the table is the catalog's and its commits go through it, as an
 * agent's do; st is not used then. Either way the table must exist already: maintain
 * never creates one. */
static int open_table(const struct floe_config *cfg, const struct target *tg, struct floe_store *st,
		      struct floe_catalog_rest *catalog, struct floe_table **t,
		      struct floe_err *err)
{
	char inst[37], prefix[512];
	struct floe_table *probe = NULL;
	snprintf(prefix, sizeof(prefix), "%s/%s", cfg->lake.namespace, tg->name);
	int rc = catalog ? floe_table_load_catalog(NULL, catalog, tg->name, &probe, err)
			 : floe_table_load(NULL, st, prefix, &probe, err);
	floe_table_free(probe);
	if (rc == 0 && (rc = floe_env_uuid4(floe_env_rand(), inst)))
		floe_err_set(err, rc, "no random installation id: %s", floe_strerror(rc));
	if (rc == 0) {
		struct floe_table_options o = {
		    .store = st,
		    .catalog = catalog,
		    .namespace = cfg->lake.namespace,
		    .name = tg->name,
		    .spec = tg->spec,
		    .agent_id = "floe maintain",
		    .installation_id = inst,
		    /* Each table's own retention: an aggregate table's is the logs table's, as
		     * the agent opens it with (runner_agg.c). */
		    .props = &tg->tc->props,
		    .schema_check = tg->aggregate ? any_schema : NULL,
		};
		rc = floe_table_open(NULL, &o, t, err);
	}
	return rc;
}

/* Maintains one table: 0, or an error with err saying what failed. */
static int maintain_table(const struct floe_config *cfg, const struct target *tg,
			  struct floe_store *st, struct floe_catalog_rest *catalog, const char *tmp,
			  struct floe_maintain_stats *s, struct floe_err *err)
{
	struct floe_table *t = NULL;
	memset(s, 0, sizeof(*s));
	int rc = open_table(cfg, tg, st, catalog, &t, err);
	if (rc == 0) {
		const struct floe_clock *clock = floe_env_clock();
		/* A catalog's table has a store of its own, at the location the catalog gave. */
		struct floe_maintain_options o = {.cfg = cfg,
						  .tc = tg->tc,
						  .aggregate = tg->aggregate,
						  .table = t,
						  .store = catalog ? floe_table_store(t) : st,
						  .tmp_dir = tmp,
						  .now_us = clock->wall_us(clock->ctx)};
		rc = floe_maintain_compact(NULL, &o, s, err);
	}
	floe_table_free(t);
	return rc;
}

/* The tables of the configuration into out (cap of them): the raw ones first (logs, then
 * tables.<name> in the file's order), then the aggregations'; with only (not NULL), the
 * table of that name alone. Returns how many, 0 when only names none. */
static size_t targets(const struct floe_config *cfg, const char *only, struct target *out,
		      size_t cap)
{
	static const struct floe_part_spec unpartitioned; /* an aggregate table's, as the agent's */
	size_t n = 0;
	for (size_t i = 0; i <= cfg->ntables; i++) {
		const struct floe_config_table *tc = i ? &cfg->tables[i - 1] : &cfg->logs;
		if (n < cap && (!only || strcmp(only, tc->name) == 0))
			out[n++] = (struct target){tc->name, tc, &tc->partition, false};
	}
	for (size_t i = 0; i < cfg->naggs; i++)
		if (n < cap && (!only || strcmp(only, cfg->aggs[i].table) == 0))
			out[n++] =
			    (struct target){cfg->aggs[i].table, &cfg->logs, &unpartitioned, true};
	return n;
}

static int maintain(const struct floe_config *cfg, const char *only)
{
	struct floe_store *st = NULL;
	struct floe_catalog_rest *catalog = NULL;
	struct floe_err err = {0};
	char tmp[FLOE_PATH_MAX], state[FLOE_PATH_MAX];
	size_t cap = 1 + cfg->ntables + cfg->naggs;
	struct target *tg = floe_calloc(NULL, cap, sizeof(*tg));
	struct floe_maintain_result *res = floe_calloc(NULL, cap, sizeof(*res));
	size_t n = tg && res ? targets(cfg, only, tg, cap) : 0;
	if (!tg || !res) {
		fprintf(stderr, "floe: %s\n", floe_strerror(FLOE_ENOMEM));
		floe_free(NULL, tg);
		floe_free(NULL, res);
		return FLOE_EXIT_RUNTIME;
	}
	if (n == 0) {
		fprintf(
		    stderr,
		    "floe: --table %s: the configuration has no table of that name (its tables:",
		    only);
		for (size_t i = 0; i <= cfg->ntables; i++)
			fprintf(stderr, " %s", i ? cfg->tables[i - 1].name : cfg->logs.name);
		for (size_t i = 0; i < cfg->naggs; i++)
			fprintf(stderr, " %s", cfg->aggs[i].table);
		fputs(")\n", stderr);
		floe_free(NULL, tg);
		floe_free(NULL, res);
		return FLOE_EXIT_USAGE;
	}
	int rc = cfg->lake.catalog == FLOE_CATALOG_REST
		     ? floe_catalog_rest_new(NULL, cfg, NULL, NULL, &catalog, &err)
		     : floe_warehouse_open(NULL, cfg, true, &st, &err);
	if (rc) {
		fprintf(stderr, "floe: %s\n", floe_err_text(&err, rc));
		floe_free(NULL, tg);
		floe_free(NULL, res);
		return rc == FLOE_EINVAL ? FLOE_EXIT_USAGE : FLOE_EXIT_RUNTIME;
	}
	if ((rc = floe_path_absolute(cfg->agent.state_dir, state, sizeof(state))) == 0 &&
	    snprintf(tmp, sizeof(tmp), "%s/maintain", state) >= (int)sizeof(tmp))
		rc = FLOE_ELIMIT;
	if (rc)
		fprintf(stderr, "floe: state_dir %s: %s\n", cfg->agent.state_dir, floe_strerror(rc));
	size_t failed = 0;
	/* A table that fails is said and counted; the others are maintained all the same. */
	for (size_t i = 0; rc == 0 && i < n; i++) {
		struct floe_maintain_stats *s = &res[i].stats;
		struct floe_err e = {0};
		res[i].table = tg[i].name;
		res[i].rc = maintain_table(cfg, &tg[i], st, catalog, tmp, s, &e);
		if (res[i].rc) {
			failed++;
			snprintf(res[i].error, sizeof(res[i].error), "%s",
				 floe_err_text(&e, res[i].rc));
			fprintf(stderr, "floe: maintain: table %s (%s/%s): %s\n", tg[i].name,
				catalog ? floe_catalog_rest_what(catalog) : cfg->lake.warehouse,
				cfg->lake.namespace, res[i].error);
		}
		printf("%s: compacted %zu partitions: %zu files (%" PRIu64 " bytes, %" PRIu64
		       " rows) into %zu files "
		       "(%" PRIu64 " bytes) in %zu replace snapshots; %zu abandoned, %zu files "
				   "left for a later run; "
		       "%zu of the files in were of older partition specs; %zu more snapshots "
		       "expired%s\n",
		       tg[i].name, s->partitions, s->files_in, s->bytes_in, s->rows, s->files_out,
		       s->bytes_out, s->commits, s->abandoned, s->left, s->respecced, s->expired,
		       res[i].rc ? " (failed)" : "");
		fflush(stdout);
	}
	if (rc == 0) {
		char path[FLOE_PATH_MAX + 16];
		const struct floe_clock *clock = floe_env_clock();
		snprintf(path, sizeof(path), "%s/metrics.json", tmp);
		int wr = floe_maintain_record_save(path, res, n, clock->wall_us(clock->ctx) / 1000);
		if (wr)
			fprintf(stderr, "floe: maintain: recording the run in %s failed: %s\n",
				path, floe_strerror(wr));
	}
	floe_free(NULL, tg);
	floe_free(NULL, res);
	floe_store_free(st);
	floe_catalog_rest_free(catalog);
	return rc || failed ? FLOE_EXIT_RUNTIME : FLOE_EXIT_OK;
}

int floe_cmd_maintain(int argc, char **argv)
{
	const char *path = NULL, *only = NULL;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			fputs(maintain_help, stdout);
			return FLOE_EXIT_OK;
		}
		if ((strcmp(argv[i], "-c") == 0 || strcmp(argv[i], "--config") == 0) && i + 1 < argc && !path) {
			path = argv[++i];
		} else if (strcmp(argv[i], "--table") == 0 && i + 1 < argc && !only) {
			only = argv[++i];
		} else if (strcmp(argv[i], "--log-level") == 0 && i + 1 < argc) {
			const char *l = argv[++i];
			enum floe_log_level lv = strcmp(l, "debug") == 0  ? FLOE_LOG_DEBUG
						 : strcmp(l, "warn") == 0 ? FLOE_LOG_WARN
						 : strcmp(l, "error") == 0 ? FLOE_LOG_ERROR
									   : FLOE_LOG_INFO;
			if (lv == FLOE_LOG_INFO && strcmp(l, "info") != 0) {
				fprintf(stderr, "floe: unknown log level '%s'\n", l);
				return FLOE_EXIT_USAGE;
			}
			floe_log_set_level(lv);
		} else {
			fputs(maintain_help, stderr);
			return FLOE_EXIT_USAGE;
		}
	}
	if (!path) {
		fputs(maintain_help, stderr);
		return FLOE_EXIT_USAGE;
	}
	struct floe_config *cfg = floe_cli_load_config(path, false);
	/* A file with errors: the configuration floe run runs on meanwhile, if it kept one. */
	char note[2 * FLOE_PATH_MAX + 256];
	if (!cfg && !(cfg = floe_cli_fall_back(path, NULL, false, note, sizeof(note))))
		return FLOE_EXIT_USAGE;
	/* maintain writes the table, beside the agents (optimistic commits), but its
	 * temporary files are in state_dir/maintain, whose leftovers a start removes: one
	 * maintain per state_dir, with a lock of its own, so that it never waits for the
	 * agent's. */
	int lock = -1;
	int status = floe_cli_lock_state(cfg, "maintain", "floe maintain", &lock);
	if (status < 0)
		status = maintain(cfg, only);
	floe_fs_unlock(lock);
	floe_config_free(cfg);
	return status;
}

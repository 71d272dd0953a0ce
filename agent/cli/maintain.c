/* floe maintain -c FILE: compacts the logs table of the configuration's warehouse
 * (agent/run/maintain.h); its replace commits also expire snapshots and delete what
 * expired, by the table's properties, as every commit does. It may run beside the agents
 * of a fleet, on any machine that reaches the warehouse. */
#include "agent/cli/commands.h"

#include "agent/config/config.h"
#include "agent/env/env.h"
#include "agent/lake/catalog_rest.h"
#include "agent/lake/table.h"
#include "agent/lake/warehouse.h"
#include "agent/run/maintain.h"
#include "formats/base/error.h"
#include "platform/fs.h"
#include "platform/log.h"
#include "platform/path.h"
#include "platform/store.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static const char maintain_help[] =
	"usage: floe maintain -c FILE [--log-level debug|info|warn|error]\n"
	"\n"
	"Rewrites the small data files of the logs table's closed partitions (those whose time\n"
	"range ended maintain.min_age ago) into files of about target_file_size, as Iceberg\n"
	"replace snapshots; agents may keep committing meanwhile. Old files are deleted once\n"
	"their snapshots expire (history.expire.* properties). Temporary files go to\n"
	"<state_dir>/maintain.\n";

/* The committing handle: attributed to no agent (an id config files cannot hold) and a
 * fresh installation id, so that no agent's identity checks see it. In a REST catalog
 * (catalog not NULL) the table is the catalog's and its commits go through it, as an
 * agent's do; st is not used then. Either way the table must exist already: maintain
 * never creates one. */
static int open_table(const struct floe_config *cfg, struct floe_store *st, struct floe_catalog_rest *catalog,
		      struct floe_table **t)
{
	char inst[37], prefix[512];
	struct floe_err err = {0};
	struct floe_table *probe = NULL;
	snprintf(prefix, sizeof(prefix), "%s/%s", cfg->lake.namespace, cfg->logs.name);
	int rc = catalog ? floe_table_load_catalog(NULL, catalog, cfg->logs.name, &probe, &err)
			 : floe_table_load(NULL, st, prefix, &probe, &err);
	floe_table_free(probe);
	if (rc == 0 && (rc = floe_env_uuid4(floe_env_rand(), inst)))
		floe_err_set(&err, rc, "no random installation id: %s", floe_strerror(rc));
	if (rc == 0) {
		struct floe_table_options o = {
		    .store = st,
		    .catalog = catalog,
		    .namespace = cfg->lake.namespace,
		    .name = cfg->logs.name,
		    .spec = &cfg->logs.partition,
		    .agent_id = "floe maintain",
		    .installation_id = inst,
		    .props = &cfg->logs.props,
		};
		rc = floe_table_open(NULL, &o, t, &err);
	}
	if (rc)
		fprintf(stderr, "floe: %s/%s: %s\n", catalog ? floe_catalog_rest_what(catalog) : cfg->lake.warehouse,
			prefix, floe_err_text(&err, rc));
	return rc;
}

static int maintain(const struct floe_config *cfg)
{
	struct floe_store *st = NULL;
	struct floe_table *t = NULL;
	struct floe_catalog_rest *catalog = NULL;
	struct floe_err err = {0};
	char tmp[FLOE_PATH_MAX], state[FLOE_PATH_MAX];
	int rc = cfg->lake.catalog == FLOE_CATALOG_REST
		     ? floe_catalog_rest_new(NULL, cfg, NULL, NULL, &catalog, &err)
		     : floe_warehouse_open(NULL, cfg, true, &st, &err);
	if (rc) {
		fprintf(stderr, "floe: %s\n", floe_err_text(&err, rc));
		return rc == FLOE_EINVAL ? FLOE_EXIT_USAGE : FLOE_EXIT_RUNTIME;
	}
	if ((rc = floe_path_absolute(cfg->agent.state_dir, state, sizeof(state))) == 0 &&
	    snprintf(tmp, sizeof(tmp), "%s/maintain", state) >= (int)sizeof(tmp))
		rc = FLOE_ELIMIT;
	if (rc)
		fprintf(stderr, "floe: state_dir %s: %s\n", cfg->agent.state_dir, floe_strerror(rc));
	if (rc == 0 && (rc = open_table(cfg, st, catalog, &t)) == 0) {
		const struct floe_clock *clock = floe_env_clock();
		/* A catalog's table has a store of its own, at the location the catalog gave. */
		struct floe_maintain_options o = {.cfg = cfg, .table = t, .store = catalog ? floe_table_store(t) : st,
						   .tmp_dir = tmp,
						   .now_us = clock->wall_us(clock->ctx)};
		struct floe_maintain_stats s;
		rc = floe_maintain_compact(NULL, &o, &s, &err);
		if (rc)
			fprintf(stderr, "floe: maintain: %s\n", floe_err_text(&err, rc));
		printf("compacted %zu partitions: %zu files (%" PRIu64 " bytes, %" PRIu64 " rows) into %zu files "
		       "(%" PRIu64 " bytes) in %zu replace snapshots; %zu abandoned, %zu files left for a later run; "
		       "%zu of the files in were of older partition specs; %zu more snapshots expired\n",
		       s.partitions, s.files_in, s.bytes_in, s.rows, s.files_out, s.bytes_out, s.commits, s.abandoned,
		       s.left, s.respecced, s.expired);
	}
	floe_table_free(t);
	floe_store_free(st);
	floe_catalog_rest_free(catalog);
	return rc ? FLOE_EXIT_RUNTIME : FLOE_EXIT_OK;
}

int floe_cmd_maintain(int argc, char **argv)
{
	const char *path = NULL;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			fputs(maintain_help, stdout);
			return FLOE_EXIT_OK;
		}
		if ((strcmp(argv[i], "-c") == 0 || strcmp(argv[i], "--config") == 0) && i + 1 < argc && !path) {
			path = argv[++i];
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
	if (!cfg)
		return FLOE_EXIT_USAGE;
	/* maintain writes the table, beside the agents (optimistic commits), but its
	 * temporary files are in state_dir/maintain, whose leftovers a start removes: one
	 * maintain per state_dir, with a lock of its own, so that it never waits for the
	 * agent's. */
	int lock = -1;
	int status = floe_cli_lock_state(cfg, "maintain", "floe maintain", &lock);
	if (status < 0)
		status = maintain(cfg);
	floe_fs_unlock(lock);
	floe_config_free(cfg);
	return status;
}

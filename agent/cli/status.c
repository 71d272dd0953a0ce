/* floe status -c FILE: the facts of the agent's /metrics and /healthz, for a person, from
 * the state directory alone (state_dir/metrics.json, which the agent rewrites after every
 * commit cycle), so it works without agent.http.listen and after the agent stopped. */
#include "agent/cli/commands.h"
#include "agent/cli/last_good.h"

#include "agent/config/config.h"
#include "agent/input/input.h"
#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"
#include "formats/base/limits.h"
#include "formats/json/json.h"
#include "platform/clock.h"
#include "platform/fs.h"
#include "platform/path.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define METRICS_MAX (4u << 20)

static const char status_help[] =
    "usage: floe status -c FILE\n"
    "\n"
    "Prints what the agent of configuration FILE did, from its state directory\n"
    "(state_dir/metrics.json, rewritten after every commit cycle): lines read, commits,\n"
    "the spool, every input, and whether it is healthy as /healthz tells it (the spool\n"
    "is not over spool.max_bytes, no input matches files it cannot open, and the file\n"
    "is younger than three commit intervals, i.e. an agent runs). Exit code 0 when\n"
    "healthy, 1 when not or when the agent never ran, 2 for a bad configuration.\n"
    "The last `floe maintain` of the state directory is shown too\n"
    "(state_dir/maintain/metrics.json), a line per table.\n";

/* A counter of obj; 0 when absent (a metrics.json of an older floe). */
static uint64_t num(const struct floe_json *obj, const char *name)
{
	int64_t v = 0;
	if (floe_json_get_int(obj, name, &v) != 0 || v < 0)
		return 0;
	return (uint64_t)v;
}

static uint64_t num_of(const void *obj, const char *key)
{
	return num(obj, key);
}

/* Each input's lines, as its kind words them (agent/input/input.h), with its sources from
 * the configuration. Returns the number of inputs matching files they cannot open. */
static unsigned print_inputs(const struct floe_config *cfg, const struct floe_json *root)
{
	const struct floe_json *in = floe_json_get(root, "inputs");
	unsigned failing = 0;
	struct floe_buf b;
	floe_buf_init(&b, NULL, 1u << 20);
	for (size_t i = 0; in && i < floe_json_len(in); i++) {
		struct floe_input_status st = {num_of, floe_json_at(in, i)};
		char name[32];
		snprintf(name, sizeof(name), "%zu", i + 1);
		const struct floe_config_input *c = i < cfg->ninputs ? &cfg->inputs[i] : NULL;
		floe_buf_reset(&b);
		if (floe_input_status_text(c, c ? c->name : name, &st, &b))
			failing++;
		if (b.len)
			fwrite(b.data, 1, b.len, stdout);
	}
	floe_buf_fini(&b);
	return failing;
}

/* The last `floe maintain` run of this state_dir (state_dir/maintain/metrics.json, which
 * the command writes when it ends), a line per table; nothing when it never ran. It says
 * nothing of the agent's health: a failed run leaves the table as it was. */
static void print_maintain(const char *dir)
{
	char path[FLOE_PATH_MAX + 32];
	void *text = NULL;
	size_t len = 0;
	struct floe_json_doc *doc = NULL;
	struct floe_err why = {0};
	int64_t ms = 0;
	if (snprintf(path, sizeof(path), "%s/maintain/metrics.json", dir) >= (int)sizeof(path) ||
	    floe_fs_read_file(NULL, path, METRICS_MAX, &text, &len))
		return;
	if (floe_json_parse(NULL, text, len, METRICS_MAX, &doc, &why) ||
	    floe_json_get_int(floe_json_root(doc), "finished_ms", &ms)) {
		printf("maintain: %s is unreadable\n", path);
		goto out;
	}
	int64_t ago = (floe_clock_now_us() / 1000 - ms) / 1000;
	const struct floe_json *tables = floe_json_get(floe_json_root(doc), "tables");
	printf("maintain: last run ended %" PRId64 " s ago, over %zu tables\n", ago < 0 ? 0 : ago,
	       tables ? floe_json_len(tables) : 0);
	for (size_t i = 0; tables && i < floe_json_len(tables); i++) {
		const struct floe_json *t = floe_json_at(tables, i);
		const char *error = NULL;
		if (num(t, "failed") && floe_json_get_str(t, "error", &error) == 0)
			printf("maintain %s: FAILED: %s\n", floe_json_key_at(tables, i), error);
		else
			printf("maintain %s: %" PRIu64 " files (%" PRIu64 " bytes) rewritten into %" PRIu64
			       " (%" PRIu64 " bytes) in %" PRIu64 " partitions, %" PRIu64
			       " left for a later run, %" PRIu64 " snapshots expired\n",
			       floe_json_key_at(tables, i), num(t, "files_rewritten"),
			       num(t, "bytes_rewritten"), num(t, "files_written"),
			       num(t, "bytes_written"), num(t, "partitions"), num(t, "files_left"),
			       num(t, "snapshots_expired"));
	}
out:
	floe_json_doc_free(doc);
	floe_free(NULL, text);
}

/* Prints the facts and the health; returns the exit code. */
static int report(const struct floe_config *cfg, const char *dir, const char *path,
		  const struct floe_json *root, int64_t age_s)
{
	printf("%s: written %" PRId64 " s ago\n", path, age_s);
	printf("agent: %" PRIu64 " lines read, %" PRIu64 " seals, %" PRIu64 " commits (%" PRIu64
	       " failed), %" PRIu64 " rows committed\n",
	       num(root, "lines"), num(root, "seals"), num(root, "commits"),
	       num(root, "commit_failures"), num(root, "rows_committed"));
	uint64_t spool = num(root, "spool_bytes");
	printf("spool: %" PRIu64 " bytes of %" PRIu64 " (policy %s); dropped %" PRIu64
	       " entries (%" PRIu64 " rows); %" PRIu64 " quarantined; inputs waited %" PRIu64
	       " s for room\n",
	       spool, cfg->spool.max_bytes,
	       cfg->spool.policy == FLOE_SPOOL_DROP_OLDEST ? "drop_oldest" : "block",
	       num(root, "dropped_entries"), num(root, "dropped_rows"), num(root, "quarantined"),
	       num(root, "blocked_ms") / 1000);
	unsigned failing = print_inputs(cfg, root);
	/* The tables found behind the agent's record of its commits, by name. */
	const struct floe_json *behind = floe_json_get(root, "tables_behind");
	size_t nbehind = behind ? floe_json_len(behind) : 0;
	for (size_t i = 0; i < nbehind; i++) {
		const char *name = NULL;
		size_t len = 0;
		if (floe_json_str(floe_json_at(behind, i), &name, &len))
			name = NULL;
		printf("table %.*s: BEHIND this agent's record of its commits (its metadata restored "
		       "from an older copy, or a metadata file deleted): its commits wait in the "
		       "spool until the metadata is restored (the agent's log says what is missing)\n",
		       name ? (int)len : 1, name ? name : "?");
	}
	print_maintain(dir);
	int64_t stale = 3 * (int64_t)(cfg->logs.commit_interval_ms / 1000);
	bool fallback = num(root, "config_fallback") != 0;
	if (fallback)
		printf("configuration: the agent runs on its last good configuration (%s/%s): its "
		       "file has errors, which floe check -c FILE shows\n",
		       dir, FLOE_LAST_GOOD_FILE);
	if (fallback && age_s <= stale)
		printf("health: unhealthy: the configuration file cannot be used; the last good "
		       "configuration runs\n");
	else if (spool > cfg->spool.max_bytes)
		printf("health: unhealthy: the spool is over spool.max_bytes; the inputs wait\n");
	else if (failing)
		printf("health: unhealthy: %u inputs match files they cannot open\n", failing);
	else if (nbehind)
		printf("health: unhealthy: %zu tables are behind this agent's record of its commits\n",
		       nbehind);
	else if (age_s > stale)
		printf("health: unhealthy: no update for %" PRId64 " s (3 commit intervals): the "
		       "agent is not running, or stuck\n",
		       age_s);
	else
		printf("health: ok\n");
	return fallback || spool > cfg->spool.max_bytes || failing || nbehind || age_s > stale
		   ? FLOE_EXIT_RUNTIME
		   : FLOE_EXIT_OK;
}

int floe_cmd_status(int argc, char **argv)
{
	if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		fputs(status_help, stdout);
		return FLOE_EXIT_OK;
	}
	if (argc != 3 || strcmp(argv[1], "-c") != 0) {
		fputs(status_help, stderr);
		return FLOE_EXIT_USAGE;
	}
	struct floe_config *cfg = floe_cli_load_config(argv[2], false);
	/* A file with errors: the configuration floe run runs on meanwhile, if it kept one. */
	char note[2 * FLOE_PATH_MAX + 256];
	if (!cfg && !(cfg = floe_cli_fall_back(argv[2], NULL, false, note, sizeof(note))))
		return FLOE_EXIT_USAGE;
	int code = FLOE_EXIT_RUNTIME;
	char dir[FLOE_PATH_MAX], path[FLOE_PATH_MAX + 16];
	void *text = NULL;
	size_t len = 0;
	struct floe_json_doc *doc = NULL;
	struct floe_err why = {0};
	struct floe_fs_stat st;
	int rc = floe_path_absolute(cfg->agent.state_dir, dir, sizeof(dir));
	if (rc == 0 && snprintf(path, sizeof(path), "%s/metrics.json", dir) >= (int)sizeof(path))
		rc = -ENAMETOOLONG;
	if (rc == 0 && (rc = floe_fs_read_file(NULL, path, METRICS_MAX, &text, &len)) == -ENOENT) {
		fprintf(stderr,
			"floe: %s does not exist: the agent has not run with this state_dir\n",
			path);
		goto out;
	}
	if (rc == 0)
		rc = floe_fs_stat(path, &st);
	if (rc == 0)
		rc = floe_json_parse(NULL, text, len, METRICS_MAX, &doc, &why);
	if (rc) {
		fprintf(stderr, "floe: reading %s: %s\n", path, floe_err_text(&why, rc));
		goto out;
	}
	int64_t age = (floe_clock_now_us() - st.mtime_us) / 1000000;
	code = report(cfg, dir, path, floe_json_root(doc), age < 0 ? 0 : age);
out:
	floe_json_doc_free(doc);
	floe_free(NULL, text);
	floe_config_free(cfg);
	return code;
}

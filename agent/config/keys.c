/* floe's configuration keys: one row per key (name, type, field, default, range, help)
 * for the engine in keymap.c, plus the checks and cross-key rules a row cannot express.
 * This file holds the root table, agent and spool; inputs, tables and lake each have a
 * keys_<section>.c. Adding a key means adding a row there and a field in config.h. */
#include "agent/config/keys.h"

#include "agent/config/config.h"
#include "agent/config/keys_impl.h"
#include "agent/config/units.h"
#include "formats/base/alloc.h"
#include "formats/base/error.h"
#include "platform/listen.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static int check_id(struct floe_config_ctx *, const struct floe_cnode *, const char *, char **);
static int check_replaces(struct floe_config_ctx *, const struct floe_cnode *, const char *, char **);
static int check_state_dir(struct floe_config_ctx *, const struct floe_cnode *, const char *,
			   char **);
static int check_listen(struct floe_config_ctx *, const struct floe_cnode *, const char *, char **);
static bool http_on(const char *);
static int agent_post(struct floe_config_ctx *, const struct floe_cnode *, const char *, char *);
static int root_post(struct floe_config_ctx *, const struct floe_cnode *, const char *, char *);

static const char *const spool_policy_names[] = {"block", "drop_oldest", NULL};
static const char *const log_format_names[] = {"text", "json", NULL};

/* ---- the key table ------------------------------------------------------------------ */

static const struct floe_key http_keys[] = {
    {.name = "listen",
     .type = FLOE_KT_STRING,
     .off = CFG(agent.http_listen),
     .check = check_listen,
     .help = "HOST:PORT serving /metrics, /healthz and /livez; unset: no listener"},
};
static const struct floe_key_section http_section = FLOE_KEY_SECTION(http_keys, NULL, NULL);

static const char *const bool_names[] = {"false", "true", NULL};

static const struct floe_key agent_keys[] = {
    {.name = "id",
     .type = FLOE_KT_STRING,
     .off = CFG(agent.id),
     .flags = FLOE_KF_COMPUTED,
     .check = check_id,
     .help = "names this agent in commits and object keys; default: host name and a hash of "
	     "/etc/machine-id or the installation id"},
    {.name = "state_dir",
     .type = FLOE_KT_STRING,
     .off = CFG(agent.state_dir),
     .def = FLOE_CONFIG_STATE_DIR,
     .check = check_state_dir,
     .help = "checkpoints and spool"},
    {.name = "memory_limit",
     .type = FLOE_KT_SIZE,
     .off = CFG(agent.memory_limit),
     .def = "32MiB",
     .min = 4 * MiB,
     .max = 4 * GiB,
     .help = "total memory budget"},
    {.name = "compress_threads",
     .type = FLOE_KT_INT,
     .off = CFG(agent.compress_threads),
     .size = sizeof(uint32_t),
     .def = "1",
     .min = 0,
     .max = 8,
     .help = "threads compressing Parquet pages beside the main one; none on one CPU"},
    {.name = "replaces",
     .type = FLOE_KT_STRING,
     .off = CFG(agent.replaces),
     .check = check_replaces,
     .help = "the installation id (or 'legacy') whose commits under agent.id this agent "
	     "takes over; unset: none"},
    {.name = "log_format",
     .type = FLOE_KT_ENUM,
     .off = CFG(agent.log_format),
     .size = sizeof(enum floe_config_log_format),
     .def = "text",
     .choices = log_format_names,
     .help = "log lines on stderr: text, or json (one object per line)"},
    {.name = "keep_last_good",
     .type = FLOE_KT_ENUM,
     .off = CFG(agent.keep_last_good),
     .size = sizeof(bool),
     .choices = bool_names,
     .def = "true",
     .help = "keep a copy of the configuration each start ran with in state_dir: a later "
	     "start whose file has errors runs on it"},
    {.name = "http",
     .type = FLOE_KT_SECTION,
     .sub = &http_section,
     .shown = http_on,
     .help = "off: set listen to serve /metrics, /healthz and /livez"},
};
static const struct floe_key_section agent_section = FLOE_KEY_SECTION(agent_keys, agent_post, NULL);

static const struct floe_key spool_keys[] = {
    {.name = "max_bytes",
     .type = FLOE_KT_SIZE,
     .off = CFG(spool.max_bytes),
     .def = "1GiB",
     .min = 16 * MiB,
     .max = 1 * TiB,
     .help = "sealed files waiting for upload"},
    {.name = "policy",
     .type = FLOE_KT_ENUM,
     .off = CFG(spool.policy),
     .size = sizeof(enum floe_spool_policy),
     .def = "block",
     .choices = spool_policy_names,
     .help = "when full: block (stop reading) or drop_oldest"},
};
static const struct floe_key_section spool_section = FLOE_KEY_SECTION(spool_keys, NULL, NULL);

static const struct floe_key maintain_keys[] = {
    {.name = "min_age",
     .type = FLOE_KT_DURATION,
     .off = CFG(maintain.min_age_ms),
     .def = "1h",
     .min = 0,
     .max = 24 * 366 * HOUR,
     .help = "floe maintain compacts partitions closed this long"},
};
static const struct floe_key_section maintain_section = FLOE_KEY_SECTION(maintain_keys, NULL, NULL);

static const struct floe_key root_keys[] = {
    {.name = "agent", .type = FLOE_KT_SECTION, .sub = &agent_section},
    {.name = "inputs",
     .type = FLOE_KT_SECTION_LIST,
     .off = CFG(inputs),
     .off_n = CFG(ninputs),
     .size = sizeof(struct floe_config_input),
     .sub = &floe_keys_input_section},
    {.name = "tables", .type = FLOE_KT_SECTION, .sub = &floe_keys_tables_section},
    {.name = "lake", .type = FLOE_KT_SECTION, .sub = &floe_keys_lake_section},
    {.name = "spool", .type = FLOE_KT_SECTION, .sub = &spool_section},
    {.name = "maintain", .type = FLOE_KT_SECTION, .sub = &maintain_section},
    {.name = "aggregations",
     .type = FLOE_KT_SECTION_LIST,
     .off = CFG(aggs),
     .off_n = CFG(naggs),
     .size = sizeof(struct floe_config_agg),
     .sub = &floe_keys_aggs_section},
};
const struct floe_key_section floe_config_keys = FLOE_KEY_SECTION(root_keys, root_post, NULL);

/* ---- checks and post hooks ------------------------------------------------------------- */

static int check_id(struct floe_config_ctx *ctx, const struct floe_cnode *at, const char *path,
		    char **value)
{
	char shown[FLOE_KEYMAP_SHOW_CAP];
	if (floe_keymap_all_of(*value, 1, 64, "._-"))
		return 0;
	return floe_config_fail(
	    ctx, at, FLOE_EFORMAT,
	    "key '%s': expected 1 to 64 characters of A-Z a-z 0-9 . _ -, got '%s'", path,
	    floe_keymap_show(*value, strlen(*value), shown));
}

/* An installation id (a lowercase UUID, as floe prints it) or "legacy". */
static int check_replaces(struct floe_config_ctx *ctx, const struct floe_cnode *at, const char *path,
			  char **value)
{
	char shown[FLOE_KEYMAP_SHOW_CAP];
	const char *v = *value;
	bool ok = strlen(v) == 36;
	for (size_t i = 0; ok && i < 36; i++)
		ok = (i == 8 || i == 13 || i == 18 || i == 23) ? v[i] == '-'
							       : (v[i] >= '0' && v[i] <= '9') || (v[i] >= 'a' && v[i] <= 'f');
	if (ok || strcmp(v, "legacy") == 0)
		return 0;
	return floe_config_fail(ctx, at, FLOE_EFORMAT,
				"key '%s': expected an installation id (as floe prints it, "
				"xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx) or 'legacy', got '%s'",
				path, floe_keymap_show(v, strlen(v), shown));
}

/* The state directory is always local; a URI there is a mistake, and the default
 * warehouse, <state_dir>/warehouse, must stay a plain path too. */
static int check_state_dir(struct floe_config_ctx *ctx, const struct floe_cnode *at,
			   const char *path, char **value)
{
	char shown[FLOE_KEYMAP_SHOW_CAP];
	if (!floe_keymap_has_scheme(*value))
		return 0;
	return floe_config_fail(ctx, at, FLOE_EFORMAT,
				"key '%s': expected a local directory path, got '%s'", path,
				floe_keymap_show(*value, strlen(*value), shown));
}

/* HOST:PORT, as a tcp:// listen URI takes it (an IPv6 host in brackets), with a port:
 * the status pages have no well-known one (Prometheus' registry suggests 9464). */
static int check_listen(struct floe_config_ctx *ctx, const struct floe_cnode *at,
			const char *path, char **value)
{
	char shown[FLOE_KEYMAP_SHOW_CAP], uri[FLOE_LISTEN_URI_MAX + 8];
	struct floe_listen_uri u;
	struct floe_listen_uri_error e = {0};
	size_t n = strlen(*value);
	int len = snprintf(uri, sizeof(uri), "tcp://%s", *value);
	if (len > 0 && (size_t)len < sizeof(uri) && !strchr(*value, '/') &&
	    floe_listen_uri_parse(uri, (size_t)len, &u, &e) == 0)
		return 0;
	return floe_config_fail(ctx, at, FLOE_EFORMAT,
				"key '%s': expected HOST:PORT (e.g. 127.0.0.1:9464 or [::1]:9464)%s%s, "
				"got '%s'", path, e.msg ? ": " : "", e.msg ? e.msg : "",
				floe_keymap_show(*value, n, shown));
}

static bool http_on(const char *base)
{
	return ((const struct floe_config *)(const void *)base)->agent.http_listen != NULL;
}

static int agent_post(struct floe_config_ctx *ctx, const struct floe_cnode *map, const char *path,
		      char *base)
{
	struct floe_config *c = (struct floe_config *)(void *)base;
	char shown[FLOE_KEYMAP_SHOW_CAP];
	const struct floe_cnode *limit = floe_keymap_find_value(map, "memory_limit");
	if (limit && !floe_cnode_is_null(limit)) {
		c->agent.memory_limit_line = limit->line > INT32_MAX ? INT32_MAX : (int)limit->line;
		c->agent.memory_limit_col = limit->col > INT32_MAX ? INT32_MAX : (int)limit->col;
	}
	if (c->agent.id)
		return 0;
	if (!(c->agent.id = floe_strdup(ctx->a, ctx->default_id)))
		return floe_keymap_nomem(ctx);
	if (floe_keymap_all_of(c->agent.id, 1, 64, "._-"))
		return 0;
	return floe_config_fail(
	    ctx, map, FLOE_EFORMAT,
	    "key 'agent.id' is not set and the host name '%s' is not a valid id "
	    "(1 to 64 characters of A-Z a-z 0-9 . _ -); set agent.id",
	    floe_keymap_show(c->agent.id, strlen(c->agent.id), shown));
}

static int root_post(struct floe_config_ctx *ctx, const struct floe_cnode *map, const char *path,
		     char *base)
{
	struct floe_config *c = (struct floe_config *)(void *)base;
	int rc = floe_keys_inputs_names(ctx, map, c);
	if (rc == 0)
		rc = floe_keys_aggs_check(ctx, map, c);
	if (rc == 0)
		rc = floe_keys_routes_check(ctx, map, c);
	if (rc < 0)
		return rc;
	/* The sort buffer is held next to the writers' row groups (a quarter of the budget
	 * between them) and everything else: it may take another quarter at most. Without
	 * sort_by there is no buffer, and no rule. */
	if (c->logs.nsort_by && c->logs.sort_buffer > c->agent.memory_limit / 4) {
		char a[FLOE_UNITS_FMT_MAX], b[FLOE_UNITS_FMT_MAX];
		const struct floe_cnode *logs =
		    floe_keymap_find_value(floe_keymap_find_value(map, "tables"), "logs");
		const struct floe_cnode *at = floe_keymap_find_value(logs, "sort_buffer");
		if (!at || floe_cnode_is_null(at))
			at = floe_keymap_find_value(logs, "sort_by");
		return floe_config_fail(ctx, at, FLOE_EFORMAT,
					"key 'tables.logs.sort_buffer': %s is more than a quarter "
					"of agent.memory_limit (%s); lower sort_buffer or raise "
					"memory_limit",
					floe_units_format_size(c->logs.sort_buffer, a),
					floe_units_format_size(c->agent.memory_limit, b));
	}
	if (c->lake.warehouse)
		return 0;
	const char *dir = c->agent.state_dir;
	size_t n = strlen(dir), total;
	bool slash = n > 0 && dir[n - 1] == '/';
	if (__builtin_add_overflow(n, sizeof("/warehouse"), &total))
		return floe_keymap_nomem(ctx);
	if (!(c->lake.warehouse = floe_malloc(ctx->a, total)))
		return floe_keymap_nomem(ctx);
	snprintf(c->lake.warehouse, total, "%s%swarehouse", dir, slash ? "" : "/");
	return 0;
}

/* run, check and version: option parsing, configuration loading, and the runner. */
#include "agent/cli/commands.h"
#include "agent/cli/last_good.h"

#include "agent/config/config.h"
#include "agent/input/preflight.h"
#include "agent/input/tail.h"
#include "agent/state/identity.h"
#include "agent/lake/catalog_rest.h"
#include "agent/lake/warehouse.h"
#include "agent/agg/aggregator.h"
#include "agent/run/memory.h"
#include "agent/run/runner.h"
#include "agent/run/tables_check.h"
#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"
#include "formats/base/limits.h"
#include "platform/clock.h"
#include "platform/fs.h"
#include "platform/heap.h"
#include "platform/log.h"
#include "platform/notify.h"
#include "platform/path.h"
#include "platform/signal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <lz4.h>
#include <yaml.h>
#include <zstd.h>

#define CONFIG_MAX (4u << 20)

static const char run_help[] =
	"usage: floe run -c FILE [--once] [--log-level debug|info|warn|error]\n"
	"\n"
	"Tails the configured inputs into the configured Iceberg table. Lines are sealed\n"
	"into Parquet fragments in state_dir/spool and committed every commit_interval;\n"
	"input offsets advance only once their lines are durable, so a crash or restart\n"
	"neither loses nor duplicates a line. SIGINT/SIGTERM seal, commit and exit.\n"
	"\n"
	"  -c, --config FILE   configuration file (YAML)\n"
	"  --once              read what is there now, commit it, and exit\n"
	"  --log-level LEVEL   debug, info (default), warn or error\n";

static const char check_help[] =
	"usage: floe check -c FILE\n"
	"\n"
	"Validates the configuration and prints every key with its effective value.\n"
	"For an S3 warehouse it also resolves the credentials as run does (configured\n"
	"references, environment, shared credentials file; no network).\n"
	"Exit code 0 when it is valid, 2 with a file:line:column message when not.\n";

static const char version_help[] = "usage: floe version\n\nPrints floe's version (the package's, for a packaged floe), the source commit\nand build type when known, and its libraries' versions.\n";

static bool is_help(const char *a)
{
	return strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0;
}

/* The default agent id, from the machine id or else the installation id in the
 * configuration's state_dir (made now when create, as floe run does; floe check only
 * looks). def is left as it is (the host name) when neither is known yet. Returns 0, or
 * -1 after printing why the installation file is unusable. */
static int default_agent_id(const char *host, const struct floe_config *cfg, bool create, char def[65])
{
	char machine[17], hex[17], dir[FLOE_PATH_MAX];
	struct floe_err why = {0};
	if (floe_identity_machine(FLOE_MACHINE_ID_PATH, machine) == 0) {
		floe_identity_default_agent_id(host, machine, def);
		return 0;
	}
	struct floe_identity id;
	int rc = floe_path_absolute(cfg->agent.state_dir, dir, sizeof(dir));
	/* Only looks first: a damaged file that its copy or the checkpoint answers for is
	 * repaired by the run, which counts it (state_damaged); only a state_dir with no
	 * installation to continue gets one made here. */
	if (rc == 0)
		rc = floe_identity_open(NULL, dir, "", false, NULL, &id, &why);
	if ((rc == -ENOENT || rc == FLOE_ECORRUPT) && create)
		rc = floe_identity_open(NULL, dir, "", true, NULL, &id, &why);
	if ((rc == -ENOENT || rc == FLOE_ECORRUPT) && !create)
		return 0; /* floe run makes one: the host name until then */
	if (rc) {
		fprintf(stderr, "floe: %s\n", floe_err_text(&why, rc));
		return -1;
	}
	floe_identity_hex16(&id, hex);
	floe_identity_default_agent_id(host, hex, def);
	return 0;
}

/* A configuration's errors on stderr: every one the parser found (all, may be NULL: then
 * err's), one a line, as the file's log_format asks where it could say (json: one log
 * object each), else "floe: file:line:column: message". */
static void print_config_errors(const struct floe_config_errors *all, const struct floe_err *err,
				int rc, bool json)
{
	if (json)
		floe_log_set_format(FLOE_LOG_JSON);
	const char *p = all ? all->text : floe_err_text(err, rc);
	size_t left = all ? all->len : strlen(p);
	while (left) {
		size_t n = 0;
		while (n < left && p[n] != '\n')
			n++;
		if (json)
			floe_error("%.*s", (int)n, p);
		else
			fprintf(stderr, "floe: %.*s\n", (int)n, p);
		p += n < left ? n + 1 : n;
		left -= n < left ? n + 1 : n;
	}
	if (all && all->n > all->shown) {
		if (json)
			floe_error("%u more errors not shown", all->n - all->shown);
		else
			fprintf(stderr, "floe: %u more errors not shown\n", all->n - all->shown);
	}
	if (all && all->n > 1 && !json)
		fprintf(stderr, "floe: %u errors\n", all->n);
}

/* Each of the configuration's warnings, one log line each, and what it means to run. */
static void log_config_warnings(const struct floe_config *cfg)
{
	for (const char *p = cfg->warnings; *p;) {
		size_t n = strcspn(p, "\n");
		floe_warn("%.*s (floe check refuses it; the agent runs with it as written, as "
			  "the release before did)",
			  (int)n, p);
		p += p[n] ? n + 1 : n;
	}
}

struct floe_config *floe_cli_load_config(const char *path, bool create_identity)
{
	void *text = NULL;
	size_t len = 0;
	int rc = floe_fs_read_file(NULL, path, CONFIG_MAX, &text, &len);
	if (rc) {
		fprintf(stderr, "floe: %s: %s\n", path, floe_strerror(rc));
		return NULL;
	}
	struct floe_config *cfg = floe_cli_parse_config(path, text, len, create_identity);
	floe_free(NULL, text);
	return cfg;
}

struct floe_config *floe_cli_parse_config(const char *path, const char *text, size_t len,
					  bool create_identity)
{
	int rc;
	char host[256];
	if (floe_hostname(host, sizeof(host)) != 0)
		snprintf(host, sizeof(host), "floe");
	/* An agent id allows [A-Za-z0-9._-]{1,64}; a host name may be longer or carry other
	 * bytes. */
	host[47] = '\0';
	for (char *p = host; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		      *p == '.' || *p == '_' || *p == '-'))
			*p = '-';
	struct floe_config *cfg = NULL;
	struct floe_err err = {0};
	char def[65];
	/* The default id may come from state_dir, which the file names: parse, find the
	 * default, and parse again with it when agent.id was not set. */
	snprintf(def, sizeof(def), "%.47s", host);
	struct floe_config_errors *all = floe_malloc(NULL, sizeof(*all));
	rc = floe_config_parse_all(NULL, path, text, len, def, &cfg, &err, all);
	/* A file with nothing in it would run with every default: no inputs, the default
	 * state_dir, reading nothing while it looks healthy. An interrupted push (a file
	 * made and not yet written when the power went), or a template that rendered
	 * nothing, leaves one: it is a broken file, and floe run takes its last good copy. */
	if (rc == 0 && cfg->empty)
		rc = floe_err_set(&err, FLOE_EFORMAT,
				  "%s: the file holds no configuration (it is empty, or only blanks "
				  "and comments): a push cut short or a template that rendered "
				  "nothing?",
				  path);
	if (rc == 0 && strcmp(cfg->agent.id, def) == 0) {
		char id[65];
		snprintf(id, sizeof(id), "%s", def);
		if (default_agent_id(host, cfg, create_identity, id)) {
			floe_config_free(cfg);
			floe_free(NULL, all);
			return NULL;
		}
		if (strcmp(id, def) != 0) {
			floe_config_free(cfg);
			cfg = NULL;
			rc = floe_config_parse_all(NULL, path, text, len, id, &cfg, &err, all);
		}
	}
	/* The memory rule is checked for every command, so that `check` refuses what `run`
	 * could not hold. */
	struct floe_memory_need need = {0};
	if (rc == 0 && !(rc = floe_memory_check(cfg, &err)) && cfg->naggs) {
		if (cfg->ninputs)
			(void)floe_memory_need(cfg, &need);
		rc = floe_agg_check(cfg, need.total, &err);
	}
	bool json = cfg ? cfg->agent.log_format == FLOE_CONFIG_LOG_JSON : all && all->log_json;
	if (rc) {
		floe_config_free(cfg);
		cfg = NULL;
	}
	if (rc)
		print_config_errors(all && all->n ? all : NULL, &err, rc, json);
	floe_free(NULL, all);
	/* What floe check refuses, a running agent logs and runs with (floe_config_warn):
	 * refused here, a file that ran before an upgrade, and its last good copy, would
	 * stop the device. check prints them as its errors. */
	if (cfg && cfg->warnings && create_identity)
		log_config_warnings(cfg);
	/* The bytes that made it, for the last good copy (floe run keeps it once a runner
	 * started). Without memory for them there is no copy, which is no reason not to run. */
	if (cfg && (cfg->source = floe_malloc(cfg->alloc, len ? len : 1))) {
		memcpy(cfg->source, text, len);
		cfg->source_len = len;
	}
	return cfg;
}

static void preflight_log(void *ctx, bool error, const char *msg)
{
	(void)ctx;
	if (error)
		floe_error("%s", msg);
	else
		floe_warn("%s", msg);
}

/* The inputs against the file system: errors (the agent would read its own output) stop
 * it; warnings are logged. With scan, each input's patterns are also expanded once, as
 * the agent would at start-up, so that what it would log about them (nothing matched, a
 * missing directory, an unreadable file, a refused link) is shown now. */
static int preflight(const struct floe_config *cfg, bool scan)
{
	/* An agent with no input reads nothing and looks healthy: a file that lost its
	 * inputs (a bad merge, an emptied list) is refused like any broken file, so run
	 * keeps to its last good copy and a SIGHUP keeps the running configuration. */
	if (cfg->ninputs == 0) {
		floe_error("%s: no inputs: the agent would read nothing; list at least one under "
			   "'inputs:'",
			   cfg->path);
		return FLOE_EXIT_USAGE;
	}
	if (floe_preflight_inputs(cfg, preflight_log, NULL) > 0)
		return FLOE_EXIT_USAGE;
	for (size_t i = 0; scan && i < cfg->ninputs; i++) {
		if (cfg->inputs[i].type != FLOE_INPUT_TAIL)
			continue;
		struct floe_preflight_tail to;
		floe_preflight_tail_options(cfg, i, 100, &to);
		to.o.max_open_files = 8; /* only to look: a few descriptors at a time */
		struct floe_tail *t = NULL;
		if (floe_tail_new(NULL, &to.o, &t) == 0)
			(void)floe_tail_scan(t);
		floe_tail_free(t);
	}
	return 0;
}

/* Parses -c FILE, --once, --log-level. Returns the config path or NULL (usage error). */
static const char *parse_common(int argc, char **argv, bool *once, bool allow_once)
{
	const char *path = NULL;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if ((strcmp(a, "-c") == 0 || strcmp(a, "--config") == 0) && i + 1 < argc) {
			path = argv[++i];
		} else if (allow_once && strcmp(a, "--once") == 0) {
			*once = true;
		} else if (strcmp(a, "--log-level") == 0 && i + 1 < argc) {
			const char *l = argv[++i];
			if (strcmp(l, "debug") == 0)
				floe_log_set_level(FLOE_LOG_DEBUG);
			else if (strcmp(l, "info") == 0)
				floe_log_set_level(FLOE_LOG_INFO);
			else if (strcmp(l, "warn") == 0)
				floe_log_set_level(FLOE_LOG_WARN);
			else if (strcmp(l, "error") == 0)
				floe_log_set_level(FLOE_LOG_ERROR);
			else {
				fprintf(stderr, "floe: unknown log level '%s'\n", l);
				return NULL;
			}
		} else {
			fprintf(stderr, "floe: unexpected argument '%s'\n", a);
			return NULL;
		}
	}
	if (!path)
		fprintf(stderr, "floe: -c FILE is required\n");
	return path;
}

/* What run and check do first: help, the options, the configuration (run makes the
 * installation, check only looks) and the inputs' preflight (check also scans them).
 * Returns -1 with *cfg loaded (owned) to go on, or the exit code. */
static int start(int argc, char **argv, const char *help, bool run, bool *once,
		 struct floe_config **cfg, const char **path)
{
	*path = NULL;
	if (argc > 1 && is_help(argv[1])) {
		fputs(help, stdout);
		return FLOE_EXIT_OK;
	}
	const char *p = parse_common(argc, argv, once, run);
	if (!p) {
		fputs(help, stderr);
		return FLOE_EXIT_USAGE;
	}
	/* From here on a failure is the configuration's (path set). */
	*path = p;
	if (!(*cfg = floe_cli_load_config(p, run)))
		return FLOE_EXIT_USAGE;
	floe_log_set_format((*cfg)->agent.log_format == FLOE_CONFIG_LOG_JSON ? FLOE_LOG_JSON
									  : FLOE_LOG_TEXT);
	if (preflight(*cfg, !run) != 0) {
		floe_config_free(*cfg);
		*cfg = NULL;
		return FLOE_EXIT_USAGE;
	}
	return -1;
}

struct floe_config *floe_cli_fall_back(const char *path, const char *dir, bool run, char *note,
				       size_t cap)
{
	char *body = NULL, found[FLOE_PATH_MAX], sd[FLOE_PATH_MAX];
	size_t blen = 0;
	int rc = floe_last_good_find(path, dir, &body, &blen, found, note, cap);
	struct floe_config *cfg = rc ? NULL : floe_cli_parse_config(path, body, blen, run);
	floe_free(NULL, body);
	if (rc == 0 && !cfg)
		floe_error("the last good configuration in %s has errors too (above): nothing to run on",
			   found);
	if (cfg && (floe_path_absolute(cfg->agent.state_dir, sd, sizeof(sd)) != 0 ||
		    strcmp(sd, found) != 0)) {
		floe_error("the last good configuration in %s names another state_dir (%s): not used",
			   found, cfg->agent.state_dir);
		floe_config_free(cfg);
		cfg = NULL;
	}
	if (cfg && run && preflight(cfg, false) != 0) {
		floe_error("the last good configuration of %s fails its checks too (above)", path);
		floe_config_free(cfg);
		cfg = NULL;
	}
	if (cfg) {
		floe_log_set_format(cfg->agent.log_format == FLOE_CONFIG_LOG_JSON ? FLOE_LOG_JSON
										: FLOE_LOG_TEXT);
		floe_error("%s", note);
	}
	return cfg;
}

#define LOCK_FILE "lock"

int floe_cli_lock_state(const struct floe_config *cfg, const char *sub, const char *what, int *fd)
{
	char dir[FLOE_PATH_MAX], path[FLOE_PATH_MAX];
	long holder = 0;
	int rc = floe_path_absolute(cfg->agent.state_dir, dir, sizeof(dir));
	size_t n = strlen(dir);
	if (rc == 0 && sub && snprintf(dir + n, sizeof(dir) - n, "/%s", sub) >= (int)(sizeof(dir) - n))
		rc = FLOE_ELIMIT;
	if (rc == 0 && snprintf(path, sizeof(path), "%s/%s", dir, LOCK_FILE) >= (int)sizeof(path))
		rc = FLOE_ELIMIT;
	if (rc == 0 && (rc = floe_fs_mkdirs(dir)) == 0)
		rc = floe_fs_lock(path, fd, &holder);
	if (rc == -EWOULDBLOCK) {
		char pid[48] = "a process whose id it does not hold";
		if (holder > 0)
			snprintf(pid, sizeof(pid), "process %ld", holder);
		floe_error("%s is in use by %s (%s, named in %s): one %s at a time per state_dir; stop "
			   "it first, or give this configuration an agent.state_dir of its own",
			   dir, pid, what, path, what);
		return FLOE_EXIT_LOCKED;
	}
	if (rc) {
		floe_error("cannot lock %s/%s: %s", dir, LOCK_FILE, floe_strerror(rc));
		return FLOE_EXIT_RUNTIME;
	}
	return -1;
}

/* SIGHUP's new configuration: read and checked as at a start (the memory rule, the
 * preflight); kept for the next runner when it passes, refused with its errors (the
 * running configuration stays) when it does not. */
struct reload {
	const char *path;
	struct floe_config *next; /* owned: the configuration that takes over */
	/* The last good configuration, while it runs in place of the file's (borrowed: it is
	 * the running one, or the previous one a failed reload falls back to), and what
	 * /healthz says of it. */
	const struct floe_config *fallback;
	char note[2 * FLOE_PATH_MAX + 256];
	char state_dir[FLOE_PATH_MAX]; /* the one this process holds the lock of */
	struct floe_runner_carry *carry; /* owned: counters and listeners across runners */
};

/* The lock is held on the state_dir of the start; another state_dir would be a second
 * agent's, which only a restart may take. */
static bool same_state_dir(const struct reload *rl, const struct floe_config *c)
{
	char dir[FLOE_PATH_MAX];
	if (floe_path_absolute(c->agent.state_dir, dir, sizeof(dir)) == 0 &&
	    strcmp(dir, rl->state_dir) == 0)
		return true;
	floe_error("SIGHUP: agent.state_dir changed (%s to %s): it changes only with a restart",
		   rl->state_dir, c->agent.state_dir);
	return false;
}

/* The existing tables against a new configuration, while the old one runs: a table
 * that cannot take its rows refuses it. A warehouse that cannot be asked now does not:
 * the new runner's start then finds out, and the old configuration comes back. */
static bool tables_take(const struct floe_config *c)
{
	struct floe_err why = {0};
	int rc = floe_run_check_tables(c, &why);
	if (rc == FLOE_ESCHEMA) {
		floe_error("SIGHUP: %s", floe_err_text(&why, rc));
		return false;
	}
	if (rc)
		floe_warn("SIGHUP: the tables could not be compared with the new configuration: %s",
			  floe_err_text(&why, rc));
	return true;
}

static bool reload_config(void *ctx)
{
	struct reload *rl = ctx;
	floe_info("SIGHUP: reading %s again", rl->path);
	struct floe_config *c = floe_cli_load_config(rl->path, true);
	if (c && (!same_state_dir(rl, c) || preflight(c, false) != 0 || !tables_take(c))) {
		floe_config_free(c);
		c = NULL;
	}
	if (!c) {
		floe_error("SIGHUP: %s has errors (above): the running configuration stays",
			   rl->path);
		return false;
	}
	floe_config_free(rl->next);
	rl->next = c;
	floe_runner_carry_expect(rl->carry, c);
	/* The service manager shows the unit reloading until a configuration runs again
	 * (the new one, or the old one when the new cannot start): READY=1 then. */
	char msg[96];
	snprintf(msg, sizeof(msg), "RELOADING=1\nMONOTONIC_USEC=%" PRId64 "\nSTATUS=reloading the configuration",
		 floe_clock_mono_ns() / 1000);
	(void)floe_notify(msg);
	return true;
}

/* One runner over cfg until it stops (or a reload ends it: rl->next is then set).
 * *started: whether the runner started (false: the exit code is its start's failure). */
static int run_once_over(struct floe_config *cfg, bool once, struct reload *rl, bool *started);

int floe_cmd_run(int argc, char **argv)
{
	bool once = false;
	struct floe_config *cfg = NULL;
	const char *path = NULL;
	int status = start(argc, argv, run_help, true, &once, &cfg, &path);
	/* A file that cannot be used (unreadable, errors, a preflight error) at a start: the
	 * last good configuration runs, if there is one, rather than nothing at all. */
	struct reload rl = {0};
	if (status == FLOE_EXIT_USAGE && path && !cfg &&
	    (cfg = floe_cli_fall_back(path, NULL, true, rl.note, sizeof(rl.note)))) {
		rl.fallback = cfg;
		status = -1;
	}
	if (status >= 0)
		return status;
	/* One process writes a state_dir: a second run (a hand-made --once beside the service)
	 * would seal and remove the same spool entries. */
	int lock = -1;
	if ((status = floe_cli_lock_state(cfg, NULL, "floe run", &lock)) >= 0) {
		floe_config_free(cfg);
		return status;
	}
	floe_signal_install();
	floe_heap_tune();
	/* A service manager's notifications (Type=notify, WatchdogSec=): before any thread. */
	int nrc = floe_notify_init();
	if (nrc)
		floe_warn("NOTIFY_SOCKET is set but cannot be used (%s): the service manager is not "
			  "told when floe is ready, and its watchdog is not fed",
			  floe_strerror(nrc));
	else if (!once && floe_notify_watchdog_us() > 0)
		floe_info("service manager watchdog: fed every %" PRId64 " ms while the main loop turns",
			  floe_notify_watchdog_us() / 4000);
	rl.path = cfg->path;
	if (floe_path_absolute(cfg->agent.state_dir, rl.state_dir, sizeof(rl.state_dir)) != 0)
		rl.state_dir[0] = '\0';
	/* Without it (no memory at start-up) a reload resets the counters and reopens the
	 * listeners, as it did before there was one: worth a warning, not a refusal to run. */
	if (!once && floe_runner_carry_new(&rl.carry) != 0)
		floe_warn("no memory to keep the counters and listeners across reloads");
	/* The configuration that ran before the last reload: a new one that passed every
	 * check may still fail to start (a table changed meanwhile, a store that was not
	 * reachable to ask), and a reload must never stop the agent, so it comes back. */
	struct floe_config *prev = NULL;
	/* One that could not start: what it took over of the inputs kept open points into it
	 * until the previous configuration's runner took them back (or closed them). */
	struct floe_config *failed = NULL;
	for (;;) {
		bool started = false;
		status = run_once_over(cfg, once, &rl, &started);
		/* The file's configuration passed its checks but a runner refuses it (a table
		 * whose column it would retype, say): at a start, the last good one runs. */
		if (!started && !prev && !rl.fallback && status == FLOE_EXIT_USAGE &&
		    !floe_signal_stop_requested()) {
			struct floe_config *good = floe_cli_fall_back(cfg->path, rl.state_dir, true, rl.note, sizeof(rl.note));
			if (good && good->source && cfg->source && good->source_len == cfg->source_len &&
			    memcmp(good->source, cfg->source, cfg->source_len) == 0) {
				floe_error("the last good configuration is the file's own: nothing else to run on");
				floe_config_free(good);
				good = NULL;
			}
			if (good) {
				floe_config_free(failed);
				failed = cfg;
				cfg = good;
				rl.fallback = cfg;
				rl.path = cfg->path;
				continue;
			}
		}
		if (!started && prev && !floe_signal_stop_requested()) {
			floe_error("SIGHUP: the new configuration cannot start (above): the previous "
				   "configuration runs on");
			floe_config_free(failed);
			failed = cfg;
			cfg = prev;
			prev = NULL;
			rl.path = cfg->path;
			continue;
		}
		if (!rl.next || status != FLOE_EXIT_OK || floe_signal_stop_requested())
			break;
		/* The new configuration takes over: inputs, limits and table settings anew,
		 * the positions from the checkpoint the stop just wrote. */
		if (prev == rl.fallback)
			rl.fallback = NULL;
		floe_config_free(prev);
		prev = cfg;
		cfg = rl.next;
		rl.next = NULL;
		rl.path = cfg->path;
		floe_info("SIGHUP: starting again with the new configuration");
	}
	floe_runner_carry_free(rl.carry); /* closes the listeners no runner took */
	floe_config_free(failed);
	floe_config_free(prev);
	floe_config_free(rl.next);
	floe_config_free(cfg);
	floe_fs_unlock(lock);
	return status;
}

static int run_once_over(struct floe_config *cfg, bool once, struct reload *rl, bool *started)
{
	struct floe_runner *r = NULL;
	struct floe_err why = {0};
	struct floe_runner_options opt = {.reload = once ? NULL : reload_config,
					  .reload_ctx = rl,
					  .carry = rl->carry,
					  .config_note = cfg == rl->fallback ? rl->note : NULL};
	int rc = floe_runner_new(cfg, &opt, &r, &why);
	if (rc && floe_signal_stop_requested()) {
		/* Stopped while starting (a slow or stalled store, say): nothing was read yet,
		 * so this is a clean stop, not a failure for a service manager to act on. */
		floe_warn("stopped while starting: %s", floe_err_text(&why, rc));
		return FLOE_EXIT_OK;
	}
	if (rc) {
		floe_error("%s", floe_err_text(&why, rc));
		return rc == FLOE_ESCHEMA || rc == FLOE_EINVAL || rc == FLOE_EUNSUPPORTED || rc == FLOE_EIDENTITY
			   ? FLOE_EXIT_USAGE
			   : FLOE_EXIT_RUNTIME;
	}
	*started = true;
	/* What start-up freed (the batches' sizing probes) goes back before the wait for
	 * input, which may be long. */
	floe_heap_release();
	if (cfg->lake.catalog == FLOE_CATALOG_REST)
		floe_info("agent %s started (REST catalog %s)", cfg->agent.id, cfg->lake.rest.uri);
	else
		floe_info("agent %s started (warehouse %s)", cfg->agent.id, cfg->lake.warehouse);
	/* Ready: the inputs are open and listening (a store that cannot be reached yet is
	 * no reason to wait: the spool holds the rows until it answers). */
	char msg[160];
	snprintf(msg, sizeof(msg), "READY=1\nSTATUS=agent %s running, %zu inputs%s", cfg->agent.id,
		 cfg->ninputs, cfg == rl->fallback ? ", on the last good configuration" : "");
	/* A configuration that started is the one to fall back on, from now on. */
	if (cfg != rl->fallback)
		floe_last_good_save(cfg);
	(void)floe_notify(msg);
	/* A catch-up on a terminal shows how far it is (not in a service's journal). */
	bool progress = once && floe_log_is_terminal();
	if (progress)
		floe_runner_show_progress(r);
	rc = floe_runner_run(r, once);
	if (progress)
		floe_log_status(NULL);
	struct floe_runner_stats st;
	floe_runner_get_stats(r, &st);
	floe_info("agent %s stopping: %" PRIu64 " lines read, %" PRIu64 " seals, %" PRIu64 " commits, %" PRIu64
		  " rows committed, %" PRIu64 " invalid UTF-8 sequences replaced",
		  cfg->agent.id, st.lines, st.seals, st.commits, st.rows_committed, st.replaced_utf8);
	floe_runner_free(r);
	if (rc) {
		floe_error("run failed: %s", floe_strerror(rc));
		/* Two agents on one agent.id: a restart cannot help, a configuration change can. */
		return rc == FLOE_EIDENTITY ? FLOE_EXIT_USAGE : FLOE_EXIT_RUNTIME;
	}
	return FLOE_EXIT_OK;
}

/* floe check: the installation of the configuration's state_dir, without making one. */
static void print_installation(const struct floe_config *cfg)
{
	char dir[FLOE_PATH_MAX], machine[17];
	struct floe_err why = {0};
	struct floe_identity id;
	if (floe_identity_machine(FLOE_MACHINE_ID_PATH, machine) != 0)
		machine[0] = '\0';
	int rc = floe_path_absolute(cfg->agent.state_dir, dir, sizeof(dir));
	if (rc == 0)
		rc = floe_identity_open(NULL, dir, machine, false, NULL, &id, &why);
	if (rc == 0 && id.damaged) {
		printf("# installation %s (%s/%s is damaged: floe run sets it aside and makes it "
		       "again with this id)\n", id.installation, dir, FLOE_IDENTITY_FILE);
	} else if (rc == 0) {
		printf("# installation %s (%s/%s)\n", id.installation, dir, FLOE_IDENTITY_FILE);
	} else if (rc == FLOE_ECORRUPT) {
		printf("# installation: %s/%s is damaged and neither its copy nor the checkpoint names "
		       "it: floe run makes a new one\n", dir, FLOE_IDENTITY_FILE);
	} else if (rc == -ENOENT) {
		printf("# installation: none yet; the first run makes %s/%s%s\n", dir, FLOE_IDENTITY_FILE,
		       machine[0] ? "" : " and derives the default agent.id from it (shown: the host name)");
	} else {
		printf("# installation: unusable\n");
		fprintf(stderr, "floe: warning: %s\n", floe_err_text(&why, rc));
	}
}

/* floe check: spool.max_bytes against the free space of state_dir's file system (of the
 * nearest directory that exists, before the first run makes it). Over it, the spool
 * cannot reach its limit: the disk fills first, and the inputs wait for commits. */
static void check_state_space(const struct floe_config *cfg)
{
	char dir[FLOE_PATH_MAX];
	uint64_t avail = 0, total = 0;
	if (floe_path_absolute(cfg->agent.state_dir, dir, sizeof(dir)) != 0)
		return;
	while (floe_fs_space(dir, &avail, &total) != 0) {
		char *slash = strrchr(dir, '/');
		if (!slash || slash == dir)
			return;
		*slash = '\0';
	}
	if (cfg->spool.max_bytes > avail)
		fprintf(stderr,
			"floe: warning: spool.max_bytes (%.1fMiB) is more than the %.1fMiB free on "
			"the file system of %s (state_dir): the disk fills before the spool reaches "
			"its limit, and the inputs then wait for commits to make room\n",
			cfg->spool.max_bytes / 1048576.0, avail / 1048576.0, dir);
}

/* floe check: the existing tables against the configuration, when the warehouse can be
 * reached; a table that cannot take the rows is a configuration error. */
static int check_tables(const struct floe_config *cfg)
{
	struct floe_err why = {0};
	struct floe_buf missing;
	floe_buf_init(&missing, NULL, 64u << 10);
	floe_run_missing_tables(cfg, &missing);
	if (missing.len)
		printf("%.*s", (int)missing.len, (const char *)missing.data);
	floe_buf_fini(&missing);
	int rc = floe_run_check_tables(cfg, &why);
	if (rc == FLOE_ESCHEMA) {
		fprintf(stderr, "floe: %s\n", floe_err_text(&why, rc));
		return FLOE_EXIT_USAGE;
	}
	if (rc)
		printf("# tables: not compared with the warehouse: %s\n", floe_err_text(&why, rc));
	else if (cfg->naggs)
		printf("# tables: the existing aggregate tables take this configuration's rows\n");
	return FLOE_EXIT_OK;
}

/* floe check of a file that cannot be used: what floe run would do instead. */
static void tell_last_good(const char *path)
{
	char *body = NULL, found[FLOE_PATH_MAX], note[2 * FLOE_PATH_MAX + 256];
	size_t blen = 0;
	if (floe_last_good_find(path, NULL, &body, &blen, found, note, sizeof(note)) == 0)
		fprintf(stderr,
			"floe: while %s has errors, floe run runs on the last good configuration kept "
			"in %s/%s\n",
			path, found, FLOE_LAST_GOOD_FILE);
	floe_free(NULL, body);
}

int floe_cmd_check(int argc, char **argv)
{
	bool once = false;
	struct floe_config *cfg = NULL;
	const char *path = NULL;
	int status = start(argc, argv, check_help, false, &once, &cfg, &path);
	if (status == FLOE_EXIT_USAGE && path && !cfg)
		tell_last_good(path);
	if (status >= 0)
		return status;
	/* A rule that can never match: a running agent logs it and runs, check refuses it
	 * (floe_config_warn), so that a push does not take one to the devices. */
	if (cfg->warnings) {
		unsigned n = 0;
		for (const char *p = cfg->warnings; *p; n++) {
			size_t k = strcspn(p, "\n");
			fprintf(stderr, "floe: %.*s\n", (int)k, p);
			p += p[k] ? k + 1 : k;
		}
		if (n > 1)
			fprintf(stderr, "floe: %u errors\n", n);
		floe_config_free(cfg);
		return FLOE_EXIT_USAGE;
	}
	/* The credentials as run finds them at start-up (without the network), so that a
	 * unit's ExecStartPre=floe check stops a host that has none, with run's message. */
	struct floe_err why = {0};
	bool remote = false;
	int crc = floe_warehouse_check_credentials(cfg, &remote, &why);
	if (crc == 0 && why.msg[0]) {
		fprintf(stderr, "floe: warning: %s\n", why.msg); /* a key file run waits for */
		floe_err_clear(&why);
	}
	if (crc == 0 && cfg->lake.catalog == FLOE_CATALOG_REST)
		crc = floe_catalog_rest_check(NULL, cfg, &why);
	if (crc) {
		fprintf(stderr, "floe: %s\n", floe_err_text(&why, crc));
		floe_config_free(cfg);
		return crc == FLOE_EINVAL ? FLOE_EXIT_USAGE : FLOE_EXIT_RUNTIME;
	}
	struct floe_buf b;
	floe_buf_init(&b, NULL, CONFIG_MAX);
	int rc = floe_config_dump(cfg, &b);
	if (rc == 0) {
		printf("%s: OK\n", cfg->path);
		fwrite(b.data, 1, b.len, stdout);
		print_installation(cfg);
		if (remote)
			printf("# credentials: none in the configuration, the environment or the shared "
			       "file; the agent asks the remote sources of lake.s3.credentials at "
			       "start-up (floe check does not use the network)\n");
	}
	if (cfg->lake.s3.cleartext)
		fprintf(stderr,
			"floe: warning: lake.s3.endpoint %s is plain HTTP to a host that is not "
			"loopback (allowed by lake.s3.allow_http): requests, data and any session "
			"token cross the network unencrypted\n",
			cfg->lake.s3.endpoint);
	/* What the memory rule found, as a YAML comment: how close the budget is. */
	struct floe_memory_need need = {0};
	if (rc == 0 && cfg->ninputs && floe_memory_need(cfg, &need) == 0)
		printf("# memory: the longest record (%.1fMiB, inputs[%zu]) needs about %.1fMiB through "
		       "sealing, of agent.memory_limit %.1fMiB\n",
		       need.record / 1048576.0, need.input, need.total / 1048576.0,
		       cfg->agent.memory_limit / 1048576.0);
	struct floe_memory_partitions parts;
	bool parted = rc == 0 && cfg->ninputs && floe_memory_partitions(cfg, &parts) == 0;
	if (parted)
		printf("# partitions: the budget holds %zu open writers (about %.1fMiB each): a batch writes "
		       "that many partitions at once, and the rows of any further ones wait in a %.1fMiB "
		       "stage for a file each\n",
		       parts.writers, parts.per_writer / 1048576.0, parts.stage / 1048576.0);
	/* With further raw tables, the runner shares them evenly among the tables. */
	size_t nt = floe_config_ntables(cfg);
	for (size_t k = 0; parted && nt > 1 && k < nt; k++)
		printf("# table %s: %zu open writer(s) of its own and a %.1fMiB stage\n",
		       floe_config_table_at(cfg, k)->name, parts.writers / nt ? parts.writers / nt : 1,
		       parts.stage / nt / 1048576.0);
	for (size_t i = 0; rc == 0 && i < cfg->naggs; i++) {
		struct floe_agg_plan p;
		uint64_t grow = floe_agg_growth(cfg, need.total, i);
		if (floe_agg_plan(&cfg->aggs[i], &p, NULL) == 0)
			printf("# memory: aggregations[%zu] '%s' reserves %.1fMiB: %u window(s) x %llu "
			       "groups x %llu bytes; its sketches' pools grow by up to %.1fMiB more "
			       "at run time\n",
			       i, cfg->aggs[i].name, p.total / 1048576.0, p.windows,
			       (unsigned long long)p.groups, (unsigned long long)p.group_bytes,
			       grow / 1048576.0);
	}
	floe_buf_fini(&b);
	if (rc == 0)
		check_state_space(cfg);
	status = rc ? FLOE_EXIT_RUNTIME : check_tables(cfg);
	floe_config_free(cfg);
	return status;
}

int floe_cmd_version(int argc, char **argv)
{
	if (argc > 1 && is_help(argv[1])) {
		fputs(version_help, stdout);
		return FLOE_EXIT_OK;
	}
	if (argc > 1) {
		fprintf(stderr, "floe: unexpected argument '%s'\n", argv[1]);
		return FLOE_EXIT_USAGE;
	}
	/* The commit and build type name the exact binary in a bug report. */
	printf("floe %s (%s%s%s%s build; Iceberg format v2, Parquet writer; zstd %s, lz4 %s, libyaml %s)\n",
	       FLOE_VERSION, FLOE_GIT_COMMIT[0] ? "commit " : "", FLOE_GIT_COMMIT,
	       FLOE_GIT_COMMIT[0] ? ", " : "", FLOE_BUILD_TYPE[0] ? FLOE_BUILD_TYPE : "default",
	       ZSTD_versionString(), LZ4_versionString(), yaml_get_version_string());
	return FLOE_EXIT_OK;
}

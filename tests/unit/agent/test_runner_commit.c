/* Unit tests for the runner's commit side (agent/run/runner_commit.c, runner_handoff.c,
 * runner_replay.c): the committer's one loop over the table outputs, the hand-off of its
 * report, and the replay of damaged entries, on a fake clock. Each case first runs the
 * runner in a child process that stops at the crash point before the first upload
 * (FLOE_CRASH_AT=commit-before-upload), so the logs table's spool and the aggregate
 * table's both hold entries; then damages one file and runs --once in this process: the
 * run must end with 0, every table treated alike, each loss counted. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent/config/config.h"
#include "agent/env/env.h"
#include "agent/lake/table.h"
#include "agent/run/runner.h"
#include "agent/state/identity.h"
#include "formats/base/error.h"
#include "formats/iceberg/metadata.h"
#include "platform/store.h"

#define WALL0_US 1764547200000000LL /* 2025-12-01T00:00:00Z */
#define LINES 300

struct fake {
	int64_t mono_us;
	uint8_t next;
};

static int64_t fake_wall(void *ctx)
{
	return WALL0_US + ((struct fake *)ctx)->mono_us;
}

static int64_t fake_mono(void *ctx)
{
	return ((struct fake *)ctx)->mono_us;
}

static void fake_sleep(void *ctx, unsigned ms)
{
	((struct fake *)ctx)->mono_us += (int64_t)ms * 1000;
}

static int fake_fill(void *ctx, void *p, size_t n)
{
	struct fake *k = ctx;
	for (size_t i = 0; i < n; i++)
		((uint8_t *)p)[i] = k->next++;
	return 0;
}

static bool never(void *ctx)
{
	(void)ctx;
	return false;
}

static char dir[64];

static int setup(void **state)
{
	(void)state;
	strcpy(dir, "/tmp/floe-test-runcommit.XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	char path[128];
	snprintf(path, sizeof(path), "%s/logs", dir);
	if (mkdir(path, 0755))
		return -1;
	snprintf(path, sizeof(path), "%s/logs/a.log", dir);
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	/* One event a second of event time over 3 apps: 300 s of windows. */
	for (int i = 0; i < LINES; i++)
		fprintf(f, "{\"ts\":\"2025-12-01T00:%02d:%02dZ\",\"app\":\"a%d\",\"msg\":\"line %d\"}\n",
			i / 60, i % 60, i % 3, i);
	return fclose(f);
}

static int teardown(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd);
}

static struct floe_config *config(void)
{
	char text[1536];
	snprintf(text, sizeof(text),
		 "agent: {id: t, state_dir: %s/state, memory_limit: 64MiB, compress_threads: 0}\n"
		 "inputs:\n"
		 "  - {type: tail, paths: [\"%s/logs/*.log\"], start_at: beginning, parser: json,\n"
		 "     timestamp: {field: ts, format: rfc3339}}\n"
		 "tables:\n"
		 "  logs: {codec: uncompressed, commit_interval: 10s, partition_by: [],\n"
		 "         bloom_filters: []}\n"
		 "lake: {warehouse: %s/wh}\n"
		 "aggregations:\n"
		 "  - {name: apps, window: 1m, allowed_lateness: 0s, group_by: [app],\n"
		 "     metrics: [count]}\n",
		 dir, dir, dir);
	struct floe_config *c = NULL;
	struct floe_err err = {0};
	if (floe_config_parse(NULL, "t.yaml", text, strlen(text), "h", &c, &err))
		fail_msg("%s", err.msg);
	return c;
}

/* One run --once on the fake clock: its result and counters. */
static int run_once(struct floe_runner_stats *st)
{
	struct fake k = {.next = 1};
	struct floe_clock clock = {fake_wall, fake_mono, fake_sleep, &k};
	struct floe_rand rand = {fake_fill, &k};
	struct floe_runner_options opt = {
	    .clock = &clock, .rand = &rand, .stop = never, .stop_ctx = &k, .poll = true};
	struct floe_config *cfg = config();
	struct floe_runner *r = NULL;
	struct floe_err err = {0};
	int rc = floe_runner_new(cfg, &opt, &r, &err);
	if (rc == 0) {
		rc = floe_runner_run(r, true);
		floe_runner_get_stats(r, st);
		floe_runner_free(r);
	}
	floe_config_free(cfg);
	return rc;
}

/* The first run, in a child that stops before the first upload. */
static void crash_before_upload(void)
{
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		setenv("FLOE_CRASH_AT", "commit-before-upload", 1);
		struct floe_runner_stats st;
		run_once(&st);
		_exit(1); /* the crash point was not reached */
	}
	int status = 0;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 99);
}

/* Overwrites 4 bytes in the middle of state_dir's file rel, the first entry's. */
static void damage(const char *rel)
{
	char path[320];
	snprintf(path, sizeof(path), "%s/state/%s", dir, rel);
	int fd = open(path, O_RDWR);
	if (fd < 0)
		fail_msg("no %s", path);
	off_t size = lseek(fd, 0, SEEK_END);
	assert_int_equal(pwrite(fd, "XXXX", 4, size / 2), 4);
	close(fd);
}

static bool exists(const char *rel)
{
	char path[320];
	snprintf(path, sizeof(path), "%s/state/%s", dir, rel);
	return access(path, F_OK) == 0;
}

/* The rows the table's current snapshot holds, from its summary. */
static int64_t table_rows(const char *name)
{
	char path[128];
	snprintf(path, sizeof(path), "%s/wh", dir);
	struct floe_store *st = NULL;
	assert_int_equal(floe_store_local_new(NULL, path, &st), 0);
	struct floe_table *t = NULL;
	snprintf(path, sizeof(path), "default/%s", name);
	assert_int_equal(floe_table_load(NULL, st, path, &t, NULL), 0);
	/* The current snapshot's total, which a commit made twice would double. */
	const struct floe_ice_meta *m = floe_table_meta(t);
	int64_t cur = floe_ice_meta_current_snapshot_id(m), rows = -1;
	for (size_t i = 0; i < floe_ice_meta_snapshot_count(m); i++) {
		int64_t id, parent, seq, ts;
		const char *ml;
		assert_int_equal(floe_ice_meta_snapshot_at(m, i, &id, &parent, &seq, &ts, &ml), 0);
		if (id == cur)
			rows = atoll(floe_ice_meta_snapshot_summary(m, i, "total-records"));
	}
	floe_table_free(t);
	floe_store_free(st);
	return rows;
}

#define ENTRY "%020d.entry"
#define FILE0 "%020d-0.parquet"

static const char *name(const char *fmt, const char *sub, int seq)
{
	static char out[128], n[64];
	snprintf(n, sizeof(n), fmt, seq);
	snprintf(out, sizeof(out), "%s/%s", sub, n);
	return out;
}

/* The aggregate table's entry file fails its checksum: quarantined, as a raw one is,
 * and the run goes on (before the table outputs, every later run failed). */
static void test_damaged_aggregate_entry(void **state)
{
	(void)state;
	crash_before_upload();
	damage(name(ENTRY, "agg/apps", 1));
	struct floe_runner_stats st;
	assert_int_equal(run_once(&st), 0);
	assert_true(exists(name(ENTRY, "agg/apps/quarantine", 1)));
	assert_int_equal(st.quarantined, 1);
	assert_int_equal(st.rows_committed, LINES);
	assert_int_equal(st.commit_failures, 0);
	assert_int_equal(table_rows("logs"), LINES);
	/* A second run finds both spools empty and nothing to do. */
	assert_int_equal(run_once(&st), 0);
	assert_int_equal(st.commits, 0);
}

/* The aggregate table's data file fails its check: lost (it cannot be made again),
 * counted, quarantined; the logs table is whole. */
static void test_damaged_aggregate_file(void **state)
{
	(void)state;
	crash_before_upload();
	damage(name(FILE0, "agg/apps", 1));
	struct floe_runner_stats st;
	assert_int_equal(run_once(&st), 0);
	assert_int_equal(st.spool_damaged, 1);
	assert_int_equal(st.spool_lost_entries, 1);
	assert_true(st.spool_lost_rows > 0);
	assert_int_equal(st.quarantined, 1);
	assert_int_equal(table_rows("logs"), LINES);
}

/* The logs table's data file fails its check: handed back, read again from the input
 * (the hand-off and the replay), committed once. */
static void test_damaged_raw_file_rebuilt(void **state)
{
	(void)state;
	crash_before_upload();
	damage(name(FILE0, "spool", 1));
	struct floe_runner_stats st;
	assert_int_equal(run_once(&st), 0);
	assert_int_equal(st.spool_damaged, 1);
	assert_int_equal(st.spool_reread_entries, 1);
	assert_int_equal(st.spool_reread_rows, LINES);
	assert_int_equal(st.spool_lost_entries, 0);
	assert_int_equal(st.rows_committed, LINES);
	assert_int_equal(table_rows("logs"), LINES);
}

/* ... and when the input no longer holds its bytes: counted lost, quarantined. */
static void test_damaged_raw_file_lost(void **state)
{
	(void)state;
	crash_before_upload();
	damage(name(FILE0, "spool", 1));
	char path[128];
	snprintf(path, sizeof(path), "%s/logs/a.log", dir);
	assert_int_equal(truncate(path, 0), 0);
	struct floe_runner_stats st;
	assert_int_equal(run_once(&st), 0);
	assert_int_equal(st.spool_damaged, 1);
	assert_int_equal(st.spool_lost_entries, 1);
	assert_int_equal(st.spool_lost_rows, LINES);
	assert_int_equal(st.quarantined, 1);
	assert_true(exists(name(ENTRY, "spool/quarantine", 1)));
}

/* The checkpoint fails its checksum: set aside, counted, and the positions come from
 * the spool's entry, so nothing is read twice. */
static void test_damaged_checkpoint(void **state)
{
	(void)state;
	crash_before_upload();
	damage("checkpoint");
	struct floe_runner_stats st;
	assert_int_equal(run_once(&st), 0);
	assert_int_equal(st.state_damaged, 1);
	assert_true(exists("quarantine/checkpoint"));
	assert_int_equal(st.lines, 0);
	assert_int_equal(table_rows("logs"), LINES);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_damaged_aggregate_entry, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_damaged_aggregate_file, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_damaged_raw_file_rebuilt, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_damaged_raw_file_lost, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_damaged_checkpoint, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

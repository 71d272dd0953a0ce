/* Unit tests for agent/run/runner*: a whole run over a temporary directory on a fake
 * clock (the runner's options): a batch is sealed when its file reaches
 * target_file_size, nothing is committed before commit_interval has passed on the
 * monotonic clock, then the sealed entries go into the table in one snapshot stamped with
 * the wall clock; lines appended later are read after an idle wait, and a stop seals and
 * commits them before the run returns. Idle waits are the fake clock's sleeps, which
 * take no time and play the test's script. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "agent/config/config.h"
#include "agent/env/env.h"
#include "agent/lake/table.h"
#include "agent/run/runner.h"
#include "agent/state/identity.h"
#include "formats/base/error.h"
#include "formats/iceberg/metadata.h"
#include "platform/store.h"

#define WALL0_US 1700000000000000LL /* 2023-11-14T22:13:20Z */
#define LINES 12000		    /* about 1.3 MB: more than one file of target_file_size */
#define MORE 100		    /* appended after the first commit */

struct fake {
	int64_t mono_us; /* starts at 0; only sleeps move it */
	uint8_t next;	 /* the next random byte */
	bool stop;
	unsigned sleeps;
	char log[128]; /* the file the input tails */
	struct floe_runner *r;
	/* What the run looked like at the sleeps that matter. */
	struct floe_runner_stats at_first_sleep;
	int64_t first_commit_us; /* mono time of the sleep that first saw a commit; -1 */
	bool appended;
	int64_t stop_at_us;
};

static int64_t fake_wall(void *ctx)
{
	return WALL0_US + ((struct fake *)ctx)->mono_us;
}

static int64_t fake_mono(void *ctx)
{
	return ((struct fake *)ctx)->mono_us;
}

static void append_lines(const char *path, int from, int n)
{
	FILE *f = fopen(path, "a");
	assert_non_null(f);
	for (int i = from; i < from + n; i++)
		fprintf(
		    f,
		    "line %06d of the runner test, long enough to make the file grow: %08x %08x\n",
		    i, (unsigned)i * 2654435761u, (unsigned)i ^ 0x5bd1e995u);
	assert_int_equal(fclose(f), 0);
}

/* The script, one step per idle wait: time passes, the first commit is noted, lines are
 * appended once it happened, and a stop is asked for a while after them. */
static void fake_sleep(void *ctx, unsigned ms)
{
	struct fake *k = ctx;
	struct floe_runner_stats st;
	floe_runner_get_stats(k->r, &st);
	if (k->sleeps++ == 0)
		k->at_first_sleep = st;
	if (st.commits > 0 && k->first_commit_us < 0)
		k->first_commit_us = k->mono_us;
	if (k->first_commit_us >= 0 && !k->appended) {
		append_lines(k->log, LINES, MORE);
		k->appended = true;
		k->stop_at_us = k->mono_us + 1000000;
	}
	if (k->appended && k->mono_us >= k->stop_at_us)
		k->stop = true;
	assert_true(k->sleeps < 1000); /* the run must end */
	k->mono_us += (int64_t)ms * 1000;
}

static int fake_fill(void *ctx, void *p, size_t n)
{
	struct fake *k = ctx;
	for (size_t i = 0; i < n; i++)
		((uint8_t *)p)[i] = k->next++;
	return 0;
}

static bool fake_stop(void *ctx)
{
	return ((struct fake *)ctx)->stop;
}

static char dir[64];

static int setup(void **state)
{
	(void)state;
	strcpy(dir, "/tmp/floe-test-runner.XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
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
	char text[1024];
	snprintf(text, sizeof(text),
		 "agent: {id: t, state_dir: %s/state, memory_limit: 64MiB, compress_threads: 0}\n"
		 "inputs:\n"
		 "  - {type: tail, paths: [\"%s/logs/*.log\"], start_at: beginning}\n"
		 "tables:\n"
		 "  logs: {codec: uncompressed, target_file_size: 1MiB, commit_interval: 10s,\n"
		 "         partition_by: [], bloom_filters: []}\n"
		 "lake: {warehouse: %s/wh}\n",
		 dir, dir, dir);
	struct floe_config *c = NULL;
	struct floe_err err = {0};
	if (floe_config_parse(NULL, "t.yaml", text, strlen(text), "h", &c, &err))
		fail_msg("%s", err.msg);
	return c;
}

/* The table as a reader finds it, and this installation's id. */
static struct floe_table *load_table(struct floe_store **st, struct floe_identity *id)
{
	char path[128];
	snprintf(path, sizeof(path), "%s/wh", dir);
	assert_int_equal(floe_store_local_new(NULL, path, st), 0);
	struct floe_table *t = NULL;
	assert_int_equal(floe_table_load(NULL, *st, "default/logs", &t, NULL), 0);
	snprintf(path, sizeof(path), "%s/state", dir);
	assert_int_equal(floe_identity_open(NULL, path, "", false, NULL, id, NULL), 0);
	return t;
}

static void test_seal_commit_stop(void **state)
{
	(void)state;
	struct fake k = {.next = 1, .first_commit_us = -1};
	char logs[96];
	snprintf(logs, sizeof(logs), "%s/logs", dir);
	assert_int_equal(mkdir(logs, 0755), 0);
	snprintf(k.log, sizeof(k.log), "%s/a.log", logs);
	append_lines(k.log, 0, LINES);

	struct floe_config *cfg = config();
	struct floe_clock clock = {fake_wall, fake_mono, fake_sleep, &k};
	struct floe_rand rand = {fake_fill, &k};
	struct floe_runner_options opt = {
	    .clock = &clock, .rand = &rand, .stop = fake_stop, .stop_ctx = &k, .poll = true};
	struct floe_err err = {0};
	assert_int_equal(floe_runner_new(cfg, &opt, &k.r, &err), 0);
	assert_int_equal(floe_runner_run(k.r, false), 0);
	struct floe_runner_stats st;
	floe_runner_get_stats(k.r, &st);
	floe_runner_free(k.r);

	/* Seal on size: the first read took every line, and a file reached 1 MiB; nothing
	 * was committed before the interval. */
	assert_int_equal(k.at_first_sleep.lines, LINES);
	assert_int_equal(k.at_first_sleep.seals, 1);
	assert_int_equal(k.at_first_sleep.commits, 0);
	/* Commit on the interval: the first sleep after 10 s of the monotonic clock saw it
	 * (sleeps are 200 ms). */
	assert_true(k.first_commit_us >= 10000000 && k.first_commit_us <= 10200000);
	/* Stop: the lines appended after it went in with a last seal and commit. */
	assert_int_equal(st.lines, LINES + MORE);
	assert_int_equal(st.seals, 3); /* target_file_size, commit_interval, stopping */
	assert_int_equal(st.commits, 2);
	assert_int_equal(st.rows_committed, LINES + MORE);
	assert_int_equal(st.commit_failures, 0);

	/* The table: two snapshots, this installation's commits up to seq 3, stamped with
	 * the fake wall clock. */
	struct floe_store *store = NULL;
	struct floe_identity id;
	struct floe_table *t = load_table(&store, &id);
	assert_int_equal(floe_table_committed_seq(t, id.installation), 3);
	const struct floe_ice_meta *m = floe_table_meta(t);
	assert_int_equal(floe_ice_meta_snapshot_count(m), 2);
	int64_t sid, parent, seq, ts;
	const char *ml;
	assert_int_equal(floe_ice_meta_snapshot_at(m, 0, &sid, &parent, &seq, &ts, &ml), 0);
	assert_int_equal(ts, (WALL0_US + k.first_commit_us) / 1000);
	assert_string_equal(floe_ice_meta_snapshot_summary(m, 0, "added-records"), "12000");
	assert_string_equal(floe_ice_meta_snapshot_summary(m, 1, "total-records"), "12100");
	/* The installation id came from the fake randomness: bytes 1..16. */
	assert_string_equal(id.installation, "01020304-0506-4708-890a-0b0c0d0e0f10");
	floe_table_free(t);
	floe_store_free(store);
	floe_config_free(cfg);
}

/* --once reads what is there, seals it as the end of input and commits it, without a
 * single idle wait; a second run finds nothing new. */
static void test_once(void **state)
{
	(void)state;
	struct fake k = {.next = 1, .first_commit_us = -1};
	char logs[96];
	snprintf(logs, sizeof(logs), "%s/logs", dir);
	assert_int_equal(mkdir(logs, 0755), 0);
	snprintf(k.log, sizeof(k.log), "%s/b.log", logs);
	append_lines(k.log, 0, 50);
	struct floe_config *cfg = config();
	struct floe_clock clock = {fake_wall, fake_mono, fake_sleep, &k};
	struct floe_rand rand = {fake_fill, &k};
	struct floe_runner_options opt = {
	    .clock = &clock, .rand = &rand, .stop = fake_stop, .stop_ctx = &k, .poll = true};
	for (int run = 0; run < 2; run++) {
		assert_int_equal(floe_runner_new(cfg, &opt, &k.r, NULL), 0);
		assert_int_equal(floe_runner_run(k.r, true), 0);
		struct floe_runner_stats st;
		floe_runner_get_stats(k.r, &st);
		floe_runner_free(k.r);
		assert_int_equal(st.lines, run == 0 ? 50 : 0);
		assert_int_equal(st.commits, run == 0 ? 1 : 0);
		assert_int_equal(k.sleeps, 0);
	}
	floe_config_free(cfg);
}

/* A configuration the runner cannot start with says why through struct floe_err. */
static void test_new_fails_with_reason(void **state)
{
	(void)state;
	struct floe_config *cfg = config();
	char bad[128];
	snprintf(bad, sizeof(bad), "%s/not-a-dir", dir);
	FILE *f = fopen(bad, "w");
	assert_non_null(f);
	fclose(f);
	/* state_dir below a regular file cannot be made. */
	char *old = cfg->agent.state_dir;
	char sd[160];
	snprintf(sd, sizeof(sd), "%s/state", bad);
	cfg->agent.state_dir = sd;
	struct floe_runner *r = NULL;
	struct floe_err err = {0};
	assert_int_not_equal(floe_runner_new(cfg, NULL, &r, &err), 0);
	assert_null(r);
	assert_true(err.code < 0);
	assert_non_null(strstr(err.msg, "cannot create state_dir"));
	cfg->agent.state_dir = old;
	floe_config_free(cfg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_seal_commit_stop, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_once, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_new_fails_with_reason, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Unit tests for compaction's side of the table (agent/lake/table_scan.c and
 * table_replace.c): the scan finds the small files of closed partitions; a replace that
 * loses the race to an append rebuilds on the new parent and keeps the append; a replace
 * whose files another replace took is abandoned without a trace; rows that do not add
 * up are refused; the old data files are deleted once the replace's parent expires. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent/config/config.h"
#include "agent/env/env.h"
#include "agent/lake/spool.h"
#include "agent/lake/table.h"
#include "agent/pipeline/batch.h"
#include "agent/schema/partition.h"
#include "agent/schema/record.h"
#include "formats/base/alloc.h"
#include "formats/base/error.h"
#include "formats/iceberg/metadata.h"
#include "platform/store.h"

#include "table_writers.h"

/* The live files of closed partitions (all of them here: 2022 ended long ago). */
static void scan(struct fixture *f, struct floe_table *t, struct floe_table_files *fs)
{
	struct floe_table_scan_options o = {.max_size = INT64_MAX, .closed_before_us = f->wall_us, .max_files = 1000};
	assert_int_equal(floe_table_scan(t, &o, fs, &terr), 0);
}

static bool exists(const char *uri)
{
	return access(uri + strlen("file://"), F_OK) == 0;
}

static void test_replace(void **state)
{
	struct fixture *f = *state;
	struct floe_table_props props = {
	    .max_snapshot_age_ms = 1,
	    .min_snapshots = 2,
	    .previous_versions_max = 100,
	};
	struct floe_table *a = open_as(f, "agent-a", INST_A, &props);
	f->other = open_as(f, "agent-b", INST_B, NULL);
	for (uint64_t s = 1; s <= 3; s++)
		commit(f, a, s, 0);
	struct floe_table_files fs;
	scan(f, a, &fs);
	assert_int_equal(fs.n, 3);
	assert_int_equal(fs.nkeys, 1);
	const char *old[3];
	for (size_t i = 0; i < 3; i++) {
		old[i] = fs.f[i].path;
		assert_int_equal(fs.f[i].records, 3);
	}
	char uri[512];
	snprintf(uri, sizeof(uri), "file://%s/default/logs/data/ts_day=2022-01-08/compact-x.parquet", f->wh);
	struct floe_ice_data_file nf = {.path = uri, .record_count = 8, .file_size = 100,
					.partition = fs.keys[0].v};
	/* Rows that do not add up are refused, and leave no file behind. */
	int before = count_meta(f, ".avro");
	assert_int_equal(floe_table_replace(a, old, 3, &nf, 1, &terr), FLOE_EINVAL);
	assert_int_equal(count_meta(f, ".avro"), before);
	nf.record_count = 9;
	/* Agent b appends while the replace makes its first attempt: the second one keeps
	 * b's file. */
	assert_int_equal(floe_table_refresh(a, &terr), 0);
	int64_t v = floe_table_version(a);
	f->hook = true;
	assert_int_equal(floe_table_replace(a, old, 3, &nf, 1, &terr), 0);
	assert_int_equal(floe_table_version(a), v + 2);
	struct floe_table_files now;
	scan(f, a, &now);
	assert_int_equal(now.n, 2);
	bool mine = false, bs = false;
	for (size_t i = 0; i < now.n; i++) {
		mine |= strcmp(now.f[i].path, uri) == 0;
		bs |= strstr(now.f[i].path, "agent-b-") != NULL;
	}
	assert_true(mine && bs);
	floe_table_files_fini(&now);
	const struct floe_ice_meta *m = floe_table_meta(a);
	long cur = floe_ice_meta_find_snapshot(m, floe_ice_meta_current_snapshot_id(m));
	assert_string_equal(floe_ice_meta_snapshot_summary(m, (size_t)cur, "deleted-data-files"), "3");
	assert_string_equal(floe_ice_meta_snapshot_summary(m, (size_t)cur, "total-records"), "12");
	assert_null(floe_ice_meta_snapshot_summary(m, (size_t)cur, "floe.commit-seq"));
	/* The same files again: taken already, so abandoned, and its manifest removed. */
	int manifests = count_meta(f, "-m0.avro");
	v = floe_table_version(a);
	assert_int_equal(floe_table_replace(a, old, 3, &nf, 1, &terr), FLOE_ENOTFOUND);
	assert_int_equal(floe_table_refresh(a, &terr), 0);
	assert_int_equal(floe_table_version(a), v);
	assert_int_equal(count_meta(f, "-m0.avro"), manifests);
	/* The old files stay while a retained snapshot lists them; once the replace's parent
	 * expires they go. */
	for (size_t i = 0; i < 3; i++)
		assert_true(exists(old[i]));
	commit(f, a, 4, 0);
	commit(f, a, 5, 0);
	for (size_t i = 0; i < 3; i++)
		assert_false(exists(old[i]));
	assert_int_equal(floe_table_committed_seq(a, INST_A), 5);
	floe_table_files_fini(&fs);
	floe_table_free(f->other);
	floe_table_free(a);
}

/* The commit that expires a replace's parent deletes the replaced files. When its
 * clean-up does not come (a crash right after the commit, or another writer's clean-up
 * deleted the list it reads), the commit that expires the replace itself deletes them:
 * nothing is left for ever. */
static void test_replaced_files_deleted_later(void **state)
{
	struct fixture *f = *state;
	struct floe_table_props props = {
	    .max_snapshot_age_ms = 1,
	    .min_snapshots = 2,
	    .previous_versions_max = 100,
	};
	struct floe_table *a = open_as(f, "agent-a", INST_A, &props);
	for (uint64_t s = 1; s <= 3; s++)
		commit(f, a, s, 0);
	struct floe_table_files fs;
	scan(f, a, &fs);
	const char *old[3];
	for (size_t i = 0; i < 3; i++)
		old[i] = fs.f[i].path;
	char uri[512];
	snprintf(uri, sizeof(uri), "file://%s/default/logs/data/ts_day=2022-01-08/compact-y.parquet", f->wh);
	struct floe_ice_data_file nf = {.path = uri, .record_count = 9, .file_size = 100,
					.partition = fs.keys[0].v};
	assert_int_equal(floe_table_replace(a, old, 3, &nf, 1, &terr), 0);
	/* The commit that expires the replace's parent dies before its clean-up. */
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		setenv("FLOE_CRASH_AT", "commit-after-metadata", 1);
		commit(f, a, 4, 0);
		_exit(1); /* not reached: the crash point exits 99 */
	}
	int status = 0;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 99);
	for (size_t i = 0; i < 3; i++)
		assert_true(exists(old[i]));
	/* The next commit expires the replace itself, and its clean-up deletes them. */
	assert_int_equal(floe_table_refresh(a, &terr), 0);
	f->wall_us += 1000000;
	commit(f, a, 5, 0);
	assert_int_equal(floe_table_committed_seq(a, INST_A), 5);
	for (size_t i = 0; i < 3; i++)
		assert_false(exists(old[i]));
	floe_table_files_fini(&fs);
	floe_table_free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_replace, setup, fixture_teardown),
	    cmocka_unit_test_setup_teardown(test_replaced_files_deleted_later, setup, fixture_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Unit tests for manifest merging and snapshot expiry on commit (agent/lake/table_merge.c,
 * table_expire.c): a commit that loses the race after merging removes its merged
 * manifests and merges again on the new parent; expired snapshots' commit-seqs stay
 * known; the files left are the ones the retained snapshots list. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static void test_merge_race_and_expiry(void **state)
{
	struct fixture *f = *state;
	struct floe_table_props props = {
	    .merge_enabled = true,
	    .merge_min_count = 3,
	    .merge_target_bytes = 8u << 20,
	    .max_snapshot_age_ms = 1,
	    .min_snapshots = 2,
	    .previous_versions_max = 100,
	};
	struct floe_table *a = open_as(f, "agent-a", INST_A, &props);
	f->other = open_as(f, "agent-b", INST_B, NULL);
	commit(f, a, 1, 0);
	commit(f, a, 2, 0);
	/* The third commit's list would hold 3 manifests: its first attempt merges them, then
	 * loses to agent b's commit; the second merges the 4 of the new parent. */
	f->hook = true;
	commit(f, a, 3, 0);
	assert_int_equal(count_meta(f, "-1-m"), 0); /* the lost attempt's merge is gone */
	assert_int_equal(count_meta(f, "-2-m"), 1);
	const struct floe_ice_meta *m = floe_table_meta(a);
	/* Two snapshots kept (b's and a's third); a's first two expired with their lists and
	 * manifests, and their commit-seq is still known. */
	assert_int_equal(floe_ice_meta_snapshot_count(m), 2);
	assert_int_equal(count_meta(f, "snap-"), 2);
	/* b's snapshot still lists the m0 manifests of a's first two commits and its own;
	 * a's third commit's own went into the merge and is gone. */
	assert_int_equal(count_meta(f, "-m0.avro"), 3);
	assert_int_equal(floe_table_committed_seq(a, INST_A), 3);
	assert_int_equal(floe_table_committed_seq(a, INST_B), 100);
	assert_string_equal(floe_ice_meta_property(m, "floe.committed-seq." INST_A), "2");
	/* A retry of an expired commit is found committed, not made again. */
	commit(f, a, 4, 0);
	struct floe_spool_entry *e = NULL;
	assert_int_equal(floe_spool_load(f->spool, 3, &e), 0);
	int64_t version = floe_table_version(a);
	assert_int_equal(floe_table_commit(a, f->spool, &e, 1, &terr), 0);
	assert_int_equal(floe_table_version(a), version);
	floe_spool_entry_free(&f->alloc, e);
	floe_table_free(f->other);
	floe_table_free(a);
}

/* Overwrites the first file of the metadata directory whose name contains s. */
static void spoil_meta(struct fixture *f, const char *s)
{
	char path[512];
	DIR *d = opendir(f->meta);
	assert_non_null(d);
	struct dirent *e;
	while ((e = readdir(d)) && !strstr(e->d_name, s))
		;
	assert_non_null(e);
	snprintf(path, sizeof(path), "%s/%s", f->meta, e->d_name);
	closedir(d);
	FILE *fp = fopen(path, "w");
	assert_non_null(fp);
	fputs("not avro", fp);
	fclose(fp);
}

/* A merge that cannot be made costs the merge, not the commit: the list carries the
 * manifests as they are. */
static void test_unmergeable_commits_unmerged(void **state)
{
	struct fixture *f = *state;
	struct floe_table_props props = {
	    .merge_enabled = true,
	    .merge_min_count = 3,
	    .merge_target_bytes = 8u << 20,
	    .max_snapshot_age_ms = 1000000,
	    .min_snapshots = 100,
	    .previous_versions_max = 100,
	};
	struct floe_table *a = open_as(f, "agent-a", INST_A, &props);
	commit(f, a, 1, 0);
	spoil_meta(f, "-m0.avro");
	commit(f, a, 2, 0);
	commit(f, a, 3, 0);
	assert_int_equal(count_meta(f, "-m1.avro"), 0);
	assert_int_equal(count_meta(f, "-m0.avro"), 3);
	assert_int_equal(floe_table_committed_seq(a, INST_A), 3);
	floe_table_free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_merge_race_and_expiry, setup, fixture_teardown),
	    cmocka_unit_test_setup_teardown(test_unmergeable_commits_unmerged, setup, fixture_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

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

#define INST_A "aaaaaaaa-0000-4000-8000-00000000000a"
#define INST_B "bbbbbbbb-0000-4000-8000-00000000000b"
#define DAY_US (86400LL * 1000000)

static struct floe_err terr;

struct fixture {
	char dir[64], wh[128], spooldir[128];
	struct floe_alloc alloc;
	struct floe_part_spec spec;
	struct floe_spool *spool;
	struct floe_batch *batch;
	struct floe_store *store;
	/* The injected environment: a wall clock the test moves, counting randomness, and
	 * another writer's commit run at the first random fill when hook is set. */
	int64_t wall_us;
	uint8_t next;
	bool hook;
	struct floe_table *other;
	struct floe_clock clock;
	struct floe_rand rand;
};

static int64_t fake_wall(void *ctx)
{
	return ((struct fixture *)ctx)->wall_us;
}

static void fake_sleep(void *ctx, unsigned ms)
{
	(void)ctx;
	(void)ms;
}

static void seal(struct fixture *f, uint64_t seq)
{
	for (int i = 0; i < 3; i++) {
		char msg[64];
		struct floe_record r;
		memset(&r, 0, sizeof(r));
		r.ts = r.received_at = 19000 * DAY_US + i;
		r.host = (struct floe_str){"h1", 2};
		r.source = (struct floe_str){"/x.log", 6};
		snprintf(msg, sizeof(msg), "line %d of seal %llu", i, (unsigned long long)seq);
		r.message = (struct floe_str){msg, strlen(msg)};
		assert_int_equal(floe_batch_add(f->batch, seq, &r), 0);
	}
	const uint8_t pos[] = {1, (uint8_t)seq};
	assert_int_equal(floe_batch_seal(f->batch, 1, pos, sizeof(pos)), 0);
}

static void commit(struct fixture *f, struct floe_table *t, uint64_t seq, int want)
{
	seal(f, seq);
	struct floe_spool_entry *e = NULL;
	assert_int_equal(floe_spool_load(f->spool, seq, &e), 0);
	assert_int_equal(floe_table_commit(t, f->spool, &e, 1, &terr), want);
	floe_spool_entry_free(&f->alloc, e);
	f->wall_us += 1000000;
}

static int fake_fill(void *ctx, void *p, size_t n)
{
	struct fixture *f = ctx;
	for (size_t i = 0; i < n; i++)
		((uint8_t *)p)[i] = f->next++;
	if (f->hook) {
		f->hook = false;
		commit(f, f->other, 100, 0);
	}
	return 0;
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	strcpy(f->dir, "/tmp/floe-test-maint.XXXXXX");
	if (!f || !mkdtemp(f->dir))
		return -1;
	snprintf(f->wh, sizeof(f->wh), "%s/wh", f->dir);
	snprintf(f->spooldir, sizeof(f->spooldir), "%s/spool", f->dir);
	floe_alloc_init(&f->alloc, 64u << 20);
	char *parts[] = {"day(ts)"};
	struct floe_batch_options bo;
	memset(&bo, 0, sizeof(bo));
	bo.pq.codec = FLOE_PQ_ZSTD;
	bo.target_file_size = 1u << 20;
	bo.max_partitions = 2;
	if (floe_part_spec_from_config(&f->spec, parts, 1, NULL) ||
	    floe_spool_open(&f->alloc, f->spooldir, &f->spec, &f->spool) ||
	    floe_store_local_new(&f->alloc, f->wh, &f->store) ||
	    floe_batch_new(&f->alloc, &f->spec, &bo, f->spool, &f->batch))
		return -1;
	f->wall_us = 1700000000000000LL;
	f->next = 1;
	f->clock = (struct floe_clock){fake_wall, fake_wall, fake_sleep, f};
	f->rand = (struct floe_rand){fake_fill, f};
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	floe_batch_free(f->batch);
	floe_spool_free(f->spool);
	floe_store_free(f->store);
	assert_int_equal(f->alloc.used, 0);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", f->dir);
	assert_int_equal(system(cmd), 0);
	free(f);
	return 0;
}

static struct floe_table *open_as(struct fixture *f, const char *agent, const char *inst,
				  const struct floe_table_props *props)
{
	struct floe_table_options o = {
	    .store = f->store,
	    .namespace = "default",
	    .name = "logs",
	    .spec = &f->spec,
	    .agent_id = agent,
	    .installation_id = inst,
	    .max_attempts = 2,
	    .props = props,
	    .clock = &f->clock,
	    .rand = &f->rand,
	};
	struct floe_table *t = NULL;
	assert_int_equal(floe_table_open(&f->alloc, &o, &t, &terr), 0);
	return t;
}

/* Files in the table's metadata directory whose name contains s. */
static int count_meta(struct fixture *f, const char *s)
{
	char path[192];
	snprintf(path, sizeof(path), "%s/default/logs/metadata", f->wh);
	DIR *d = opendir(path);
	assert_non_null(d);
	int n = 0;
	for (struct dirent *e; (e = readdir(d));)
		n += strstr(e->d_name, s) != NULL;
	closedir(d);
	return n;
}

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
	char dir[192], path[512];
	snprintf(dir, sizeof(dir), "%s/default/logs/metadata", f->wh);
	DIR *d = opendir(dir);
	assert_non_null(d);
	struct dirent *e;
	while ((e = readdir(d)) && !strstr(e->d_name, s))
		;
	assert_non_null(e);
	snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
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
	    cmocka_unit_test_setup_teardown(test_merge_race_and_expiry, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_unmergeable_commits_unmerged, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

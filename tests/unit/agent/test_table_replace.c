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

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* The live files of closed partitions (all of them here: 2022 ended long ago). */
static void scan(struct fixture *f, struct floe_table *t, struct floe_table_files *fs)
{
	struct floe_table_scan_options o = {INT64_MAX, f->wall_us, 1000};
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

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_replace, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

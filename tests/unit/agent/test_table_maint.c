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
#include <sys/stat.h>

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

/* Sums the sizes of the merged manifests in the metadata directory (named
 * <uuid>-<attempt>-m<k>.avro, k >= 1), and gives the largest in *largest. */
static long long merged_bytes(struct fixture *f, long long *largest)
{
	DIR *d = opendir(f->meta);
	assert_non_null(d);
	long long sum = 0;
	*largest = 0;
	for (struct dirent *e; (e = readdir(d));) {
		const char *m = strstr(e->d_name, "-m");
		if (!m || m[2] < '1' || m[2] > '9')
			continue;
		char path[512];
		struct stat st;
		snprintf(path, sizeof(path), "%s/%s", f->meta, e->d_name);
		assert_int_equal(stat(path, &st), 0);
		sum += st.st_size;
		if (st.st_size > *largest)
			*largest = st.st_size;
	}
	closedir(d);
	return sum;
}

/* Randomness that does not repeat within a test's snapshots (the fixture's counting bytes
 * give only 256 snapshot ids): splitmix64 over a counter. */
static int wide_fill(void *ctx, void *p, size_t n)
{
	static uint64_t x;
	(void)ctx;
	for (size_t i = 0; i < n; i += 8) {
		uint64_t z = (x += 0x9E3779B97F4A7C15ull);
		z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
		z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
		z ^= z >> 31;
		memcpy((uint8_t *)p + i, &z, n - i < 8 ? n - i : 8);
	}
	return 0;
}

/* Merging rewrites an entry a few times on its way into a full manifest, not at every
 * merge: with every snapshot kept (no expiry), the merged manifests they list, 400
 * commits on, add up to a small multiple of the largest one (a manifest merged again
 * within its own commit is listed by no snapshot and removed at once). Merging into one growing
 * manifest (Iceberg's first bin) wrote 23 times it here, size classes 4.6 times. */
static void test_merge_rewrites_bounded(void **state)
{
	struct fixture *f = *state;
	struct floe_table_props props = {
	    .merge_enabled = true,
	    .merge_min_count = 10,
	    .merge_target_bytes = 8u << 20,
	    .max_snapshot_age_ms = INT64_MAX / 2,
	    .min_snapshots = 1000,
	    .previous_versions_max = 1000,
	};
	f->rand.fill = wide_fill;
	struct floe_table *a = open_as(f, "agent-a", INST_A, &props);
	for (uint64_t seq = 1; seq <= 400; seq++)
		commit(f, a, seq, 0);
	long long largest, sum = merged_bytes(f, &largest);
	print_message("merges wrote %lld bytes, the largest merged manifest is %lld\n", sum, largest);
	assert_true(largest > 0);
	assert_true(sum <= 8 * largest);
	assert_int_equal(floe_table_committed_seq(a, INST_A), 400);
	floe_table_free(a);
}

/* A table handle's memory stays flat over commits: with snapshots expiring, what it
 * holds after 300 commits is what it held after 100. It grew by 17.6 KB a commit while
 * the metadata model was edited in place. */
static void test_memory_flat(void **state)
{
	struct fixture *f = *state;
	struct floe_table_props props = {
	    .merge_enabled = true,
	    .merge_min_count = 10,
	    .merge_target_bytes = 8u << 20,
	    .max_snapshot_age_ms = 1,
	    .min_snapshots = 5,
	    .previous_versions_max = 10,
	};
	f->rand.fill = wide_fill;
	struct floe_table *a = open_as(f, "agent-a", INST_A, &props);
	size_t at100 = 0;
	for (uint64_t seq = 1; seq <= 300; seq++) {
		commit(f, a, seq, 0);
		if (seq == 100)
			at100 = f->alloc.used;
	}
	print_message("in use after 100 commits %zu bytes, after 300 %zu\n", at100, f->alloc.used);
	assert_true(f->alloc.used <= at100 + 4096);
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

/* Files and bytes in the table's metadata directory, and the largest metadata.json's
 * bytes (the current one and the few previous ones kept are within a commit of each
 * other) in *json if not NULL. */
static void meta_usage(struct fixture *f, long long *files, long long *bytes, long long *json)
{
	DIR *d = opendir(f->meta);
	assert_non_null(d);
	long long most = 0;
	*files = *bytes = 0;
	for (struct dirent *e; (e = readdir(d));) {
		char path[512];
		struct stat st;
		size_t l = strlen(e->d_name);
		snprintf(path, sizeof(path), "%s/%s", f->meta, e->d_name);
		if (e->d_name[0] == '.' || stat(path, &st) != 0 || !S_ISREG(st.st_mode))
			continue;
		(*files)++;
		*bytes += st.st_size;
		if (l > 14 && strcmp(e->d_name + l - 14, ".metadata.json") == 0 && st.st_size > most)
			most = st.st_size;
	}
	if (json)
		*json = most;
	closedir(d);
}

/* The table properties of a configuration whose tables section says props_yaml. */
static struct floe_config *config_with(struct fixture *f, const char *props_yaml)
{
	char yaml[1024];
	snprintf(yaml, sizeof(yaml),
		 "inputs:\n  - type: tail\n    paths: [/x.log]\n%s", props_yaml);
	struct floe_config *cfg = NULL;
	struct floe_err err;
	assert_int_equal(
	    floe_config_parse(&f->alloc, "t.yaml", yaml, strlen(yaml), "host-1", &cfg, &err), 0);
	return cfg;
}

static const char *prop(const struct floe_table *t, const char *key)
{
	const char *v = floe_ice_meta_property(floe_table_meta(t), key);
	return v ? v : "(none)";
}

/* A table created with a configuration that sets no properties gets floe's properties
 * for an unattended writer, and its metadata directory stops growing: at one commit a
 * minute (commit_interval's default), commits 151-300 leave at most 10 % more files and
 * 25 % more bytes than commits 1-150 did at their largest. (Not nothing more: with no
 * compaction here, the manifests list every live data file, one more a commit, and
 * merging keeps a few more manifests as they grow.) With Iceberg's defaults it grew by
 * three files a commit (metadata.json, manifest list, manifest), twice as many in the
 * second half, and quadratically in bytes. */
static void test_created_table_bounded(void **state)
{
	struct fixture *f = *state;
	struct floe_config *cfg = config_with(f, "");
	f->rand.fill = wide_fill;
	struct floe_table *a = open_as(f, "agent-a", INST_A, &cfg->logs.props);
	assert_string_equal(prop(a, "write.metadata.delete-after-commit.enabled"), "true");
	assert_string_equal(prop(a, "write.metadata.previous-versions-max"), "10");
	assert_string_equal(prop(a, "history.expire.max-snapshot-age-ms"), "3600000");
	assert_string_equal(prop(a, "history.expire.min-snapshots-to-keep"), "10");
	long long files_max[2] = {0, 0}, bytes_max[2] = {0, 0};
	for (uint64_t seq = 1; seq <= 300; seq++) {
		commit(f, a, seq, 0);
		f->wall_us += 59 * 1000000LL;
		long long files, bytes;
		meta_usage(f, &files, &bytes, NULL);
		int half = seq > 150;
		if (files > files_max[half])
			files_max[half] = files;
		if (bytes > bytes_max[half])
			bytes_max[half] = bytes;
	}
	print_message("metadata/: at most %lld files, %lld bytes in commits 1-150; "
		      "%lld files, %lld bytes in 151-300\n",
		      files_max[0], bytes_max[0], files_max[1], bytes_max[1]);
	assert_true(files_max[1] * 10 <= files_max[0] * 11);
	assert_true(bytes_max[1] * 4 <= bytes_max[0] * 5);
	assert_int_equal(floe_table_committed_seq(a, INST_A), 300);
	floe_table_free(a);
	floe_config_free(cfg);
}


/* A table floe creates, committed to every second: an hour of snapshots would be 3,600,
 * each commit rewriting a metadata.json that lists them all. floe's own
 * floe.history.max-snapshots-to-keep bounds them at 100, so metadata.json stops growing
 * at the 100th commit (it grew by about 800 bytes a commit, to 2.8 MB at 3,600). */
static void test_created_table_fast_commits_bounded(void **state)
{
	struct fixture *f = *state;
	struct floe_config *cfg = config_with(f, "");
	f->rand.fill = wide_fill;
	struct floe_table *a = open_as(f, "agent-a", INST_A, &cfg->logs.props);
	assert_string_equal(prop(a, "floe.history.max-snapshots-to-keep"), "100");
	long long at_150 = 0, most_after = 0;
	for (uint64_t seq = 1; seq <= 300; seq++) {
		commit(f, a, seq, 0);
		long long files, bytes, b;
		meta_usage(f, &files, &bytes, &b);
		if (seq == 150)
			at_150 = b;
		if (seq > 150 && b > most_after)
			most_after = b;
	}
	size_t snaps = floe_ice_meta_snapshot_count(floe_table_meta(a));
	print_message("metadata.json: %lld bytes at commit 150, at most %lld in 151-300; "
		      "%zu snapshots\n", at_150, most_after, snaps);
	assert_int_equal(snaps, 100);
	assert_true(most_after * 10 <= at_150 * 11);
	assert_int_equal(floe_table_committed_seq(a, INST_A), 300);
	floe_table_free(a);
	floe_config_free(cfg);
}

/* Properties in the configuration go on a table floe creates in place of floe's; a
 * table that exists keeps its own, and floe goes by them. */
static void test_created_table_props(void **state)
{
	struct fixture *f = *state;
	struct floe_config *cfg = config_with(
	    f, "tables:\n  logs:\n    properties:\n"
	       "      history.expire.max-snapshot-age-ms: 2h\n"
	       "      write.metadata.delete-after-commit.enabled: false\n");
	struct floe_table *a = open_as(f, "agent-a", INST_A, &cfg->logs.props);
	assert_string_equal(prop(a, "history.expire.max-snapshot-age-ms"), "7200000");
	assert_string_equal(prop(a, "write.metadata.delete-after-commit.enabled"), "false");
	assert_string_equal(prop(a, "write.metadata.previous-versions-max"), "10");
	floe_table_free(a);
	/* Opened again with a configuration without properties: nothing is rewritten, and
	 * old metadata files stay, as the table says. */
	struct floe_config *plain = config_with(f, "");
	a = open_as(f, "agent-a", INST_A, &plain->logs.props);
	for (uint64_t seq = 1; seq <= 15; seq++)
		commit(f, a, seq, 0);
	assert_string_equal(prop(a, "history.expire.max-snapshot-age-ms"), "7200000");
	assert_string_equal(prop(a, "write.metadata.delete-after-commit.enabled"), "false");
	assert_int_equal(count_meta(f, ".metadata.json"), 16);
	floe_table_free(a);
	floe_config_free(plain);
	floe_config_free(cfg);
}

/* Randomness stuck on one value: every draw the same bytes. */
static int stuck_fill(void *ctx, void *p, size_t n)
{
	(void)ctx;
	memset(p, 0x5a, n);
	return 0;
}

/* A random source that keeps giving a taken snapshot id is refused with a reason after a
 * bounded number of draws; the commit is not spun on for ever (it was). */
static void test_stuck_random_source(void **state)
{
	struct fixture *f = *state;
	f->rand.fill = stuck_fill;
	struct floe_table *a = open_as(f, "agent-a", INST_A, NULL);
	commit(f, a, 1, 0);
	commit(f, a, 2, FLOE_ELIMIT);
	if (!strstr(terr.msg, "random source repeats itself"))
		fail_msg("message: %s", terr.msg);
	floe_table_free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_stuck_random_source, setup, fixture_teardown),
	    cmocka_unit_test_setup_teardown(test_merge_race_and_expiry, setup, fixture_teardown),
	    cmocka_unit_test_setup_teardown(test_unmergeable_commits_unmerged, setup, fixture_teardown),
	    cmocka_unit_test_setup_teardown(test_merge_rewrites_bounded, setup, fixture_teardown),
	    cmocka_unit_test_setup_teardown(test_memory_flat, setup, fixture_teardown),
	    cmocka_unit_test_setup_teardown(test_created_table_bounded, setup, fixture_teardown),
	    cmocka_unit_test_setup_teardown(test_created_table_props, setup, fixture_teardown),
	    cmocka_unit_test_setup_teardown(test_created_table_fast_commits_bounded, setup, fixture_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

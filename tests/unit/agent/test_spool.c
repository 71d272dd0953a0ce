/* Unit tests for agent/lake/spool: entries record each file's XXH64 and the positions
 * where the seal started (version 2), version 1 entries are still read, and a file that
 * does not match its entry (bytes changed, cut short, missing) fails its check. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/schema/partition.h"
#include "agent/lake/spool.h"
#include "agent/pipeline/batch.h"
#include "agent/schema/record.h"
#include "formats/base/alloc.h"
#include "formats/base/error.h"

#include "table_fixture.h"

#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

static int setup(void **state)
{
	*state = fixture_new("/tmp/floe-test-spool.XXXXXX", "day(ts)", 0, false);
	return *state ? 0 : -1;
}

static const uint8_t from[] = {1, 0, 0, 0, 2, 0, 0, 0, 0xaa, 0xbb};
static const uint8_t to[] = {1, 0, 0, 0, 3, 0, 0, 0, 0xaa, 0xbb, 0xcc};

/* Seals n rows as entry seq, from/to as its positions. */
static void seal(struct fixture *f, uint64_t seq, int n)
{
	for (int i = 0; i < n; i++) {
		char msg[64];
		struct floe_record r;
		memset(&r, 0, sizeof(r));
		r.ts = r.received_at = 19000LL * 86400 * 1000000 + i;
		r.host = (struct floe_str){"h1", 2};
		r.source = (struct floe_str){"/var/log/x.log", 14};
		r.has_offset = true;
		r.offset = i * 20;
		snprintf(msg, sizeof(msg), "line %d of seal %llu", i, (unsigned long long)seq);
		r.message = (struct floe_str){msg, strlen(msg)};
		assert_int_equal(floe_batch_add(f->batch, seq, &r), 0);
	}
	assert_int_equal(floe_batch_seal_range(f->batch, 5, from, sizeof(from), to, sizeof(to)), 0);
}

static void data_path(struct fixture *f, const struct floe_spool_entry *e, char *out, size_t cap)
{
	assert_int_equal(floe_spool_path(f->spool, e->files[0].name, out, cap), 0);
}

static uint64_t file_hash(const char *path)
{
	FILE *fp = fopen(path, "rb");
	assert_non_null(fp);
	XXH64_state_t st;
	XXH64_reset(&st, 0);
	char buf[4096];
	size_t n;
	while ((n = fread(buf, 1, sizeof(buf), fp)) > 0)
		XXH64_update(&st, buf, n);
	fclose(fp);
	return XXH64_digest(&st);
}

static void test_entry_records_checksum_and_start(void **state)
{
	struct fixture *f = *state;
	seal(f, 4, 50);
	struct floe_spool_entry *e = NULL;
	assert_int_equal(floe_spool_load(f->spool, 4, &e), 0);
	assert_int_equal(e->nfiles, 1);
	assert_true(e->files[0].has_xxh64);
	char path[512];
	struct floe_err why = {0};
	data_path(f, e, path, sizeof(path));
	/* The checksum taken while the writer streamed the file is the file's. */
	assert_true(e->files[0].xxh64 == file_hash(path));
	assert_int_equal(e->from_len, sizeof(from));
	assert_memory_equal(e->from, from, sizeof(from));
	assert_int_equal(e->positions_len, sizeof(to));
	assert_int_equal(floe_spool_verify(f->spool, e, &why), 0);
	floe_spool_entry_free(&f->alloc, e);
}

/* Regression: 4 bytes overwritten in a sealed file went unnoticed and
 * were committed. */
static void test_verify_finds_damage(void **state)
{
	struct fixture *f = *state;
	seal(f, 5, 200);
	struct floe_spool_entry *e = NULL;
	assert_int_equal(floe_spool_load(f->spool, 5, &e), 0);
	char path[512];
	struct floe_err why = {0};
	data_path(f, e, path, sizeof(path));

	FILE *fp = fopen(path, "r+b");
	assert_non_null(fp);
	fseek(fp, e->files[0].size / 2, SEEK_SET);
	fwrite("XXXX", 1, 4, fp);
	fclose(fp);
	assert_int_equal(floe_spool_verify(f->spool, e, &why), FLOE_ECORRUPT);
	assert_non_null(strstr(why.msg, path));
	assert_non_null(strstr(why.msg, "XXH64"));

	assert_int_equal(truncate(path, e->files[0].size - 1), 0);
	assert_int_equal(floe_spool_verify(f->spool, e, &why), FLOE_ECORRUPT);
	assert_non_null(strstr(why.msg, "its entry records"));

	assert_int_equal(unlink(path), 0);
	assert_int_equal(floe_spool_verify(f->spool, e, &why), FLOE_ECORRUPT);
	assert_non_null(strstr(why.msg, "missing"));
	floe_spool_entry_free(&f->alloc, e);
}

/* A rebuilt entry's files take new names: the damaged ones move to quarantine, the entry
 * file stays until the new one replaces it. */
static void test_quarantine_files(void **state)
{
	struct fixture *f = *state;
	seal(f, 6, 10);
	struct floe_spool_entry *e = NULL;
	assert_int_equal(floe_spool_load(f->spool, 6, &e), 0);
	uint64_t before = floe_spool_bytes(f->spool);
	assert_true(before > 0);
	char path[512], q[600];
	data_path(f, e, path, sizeof(path));
	assert_int_equal(floe_spool_quarantine_files(f->spool, e), 0);
	assert_int_not_equal(access(path, F_OK), 0);
	snprintf(q, sizeof(q), "%s/quarantine/%s", f->spooldir, e->files[0].name);
	assert_int_equal(access(q, F_OK), 0);
	snprintf(q, sizeof(q), "%s/quarantine/00000000000000000006.entry", f->spooldir);
	assert_int_equal(access(q, F_OK), 0);
	assert_int_equal(floe_spool_quarantined(f->spool), 1);
	assert_int_equal(floe_spool_bytes(f->spool), 0);
	floe_spool_entry_free(&f->alloc, e);

	/* Rebuilt under the same seq with the next name. */
	floe_batch_set_name_base(f->batch, 1);
	seal(f, 6, 10);
	assert_int_equal(floe_spool_load(f->spool, 6, &e), 0);
	assert_string_equal(e->files[0].name, "00000000000000000006-1.parquet");
	assert_int_equal(floe_spool_verify(f->spool, e, NULL), 0);
	floe_spool_entry_free(&f->alloc, e);
}

/* The count of entries is kept in memory (the metrics read it every second): it follows
 * every way an entry comes and goes, and a reopened spool counts what its directory holds. */
static void test_entries_counted(void **state)
{
	struct fixture *f = *state;
	assert_int_equal(floe_spool_entries(f->spool), 0);
	for (uint64_t seq = 1; seq <= 4; seq++)
		seal(f, seq, 5);
	assert_int_equal(floe_spool_entries(f->spool), 4);
	struct floe_spool *other = NULL;
	assert_int_equal(floe_spool_share(f->spool, &f->alloc, &other), 0);

	/* Rebuilt in place: the same entry, not one more. */
	struct floe_spool_entry *e = NULL;
	assert_int_equal(floe_spool_load(f->spool, 2, &e), 0);
	assert_int_equal(floe_spool_quarantine_files(f->spool, e), 0);
	floe_spool_entry_free(&f->alloc, e);
	floe_batch_set_name_base(f->batch, 1);
	seal(f, 2, 5);
	assert_int_equal(floe_spool_entries(f->spool), 4);

	/* Removed through the other handle (the committer's), and moved to quarantine. */
	assert_int_equal(floe_spool_load(other, 1, &e), 0);
	assert_int_equal(floe_spool_remove(other, e), 0);
	floe_spool_entry_free(&f->alloc, e);
	assert_int_equal(floe_spool_entries(f->spool), 3);
	assert_int_equal(floe_spool_quarantine(f->spool, 3), 0);
	assert_int_equal(floe_spool_entries(other), 2);
	floe_spool_free(other);

	/* Another opening counts the directory's entries, quarantine aside. */
	assert_int_equal(floe_spool_open(&f->alloc, f->spooldir, &f->spec, &other), 0);
	assert_int_equal(floe_spool_entries(other), 2);
	uint64_t *seqs = NULL;
	size_t n = 0;
	assert_int_equal(floe_spool_list(other, &seqs, &n), 0);
	assert_int_equal(n, 2);
	floe_free(&f->alloc, seqs);
	floe_spool_free(other);
}

static void test_version_1_still_read(void **state)
{
	struct fixture *f = *state;
	const char *v1 = "{\"version\":1,\"seq\":3,\"created_us\":1,\"replaced_utf8\":0,\"positions\":\"aabb\","
			 "\"files\":[{\"name\":\"00000000000000000003-0.parquet\",\"records\":10,\"size\":20,"
			 "\"partition\":[19000],\"metrics\":[],\"splits\":[4]}]}";
	struct floe_spool_entry *e = NULL;
	assert_int_equal(floe_spool_entry_decode(&f->alloc, &f->spec, v1, strlen(v1), &e), 0);
	assert_false(e->files[0].has_xxh64);
	assert_null(e->from);
	floe_spool_entry_free(&f->alloc, e);
	/* Version 2 needs both; a bad checksum text is corrupt. */
	const char *v2 = "{\"version\":2,\"seq\":3,\"created_us\":1,\"replaced_utf8\":0,\"positions\":\"aabb\","
			 "\"from\":\"aa\",\"files\":[{\"name\":\"00000000000000000003-0.parquet\",\"records\":10,"
			 "\"size\":20,\"xxh64\":\"00000000000000zz\",\"partition\":[19000],\"metrics\":[],"
			 "\"splits\":[4]}]}";
	assert_int_equal(floe_spool_entry_decode(&f->alloc, &f->spec, v2, strlen(v2), &e), FLOE_ECORRUPT);
	const char *v3 = "{\"version\":3,\"seq\":3,\"created_us\":1,\"replaced_utf8\":0,\"positions\":\"\","
			 "\"from\":\"\",\"files\":[]}";
	assert_int_equal(floe_spool_entry_decode(&f->alloc, &f->spec, v3, strlen(v3), &e), FLOE_ECORRUPT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_entry_records_checksum_and_start, setup, fixture_teardown),
		cmocka_unit_test_setup_teardown(test_verify_finds_damage, setup, fixture_teardown),
		cmocka_unit_test_setup_teardown(test_quarantine_files, setup, fixture_teardown),
		cmocka_unit_test_setup_teardown(test_entries_counted, setup, fixture_teardown),
		cmocka_unit_test_setup_teardown(test_version_1_still_read, setup, fixture_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

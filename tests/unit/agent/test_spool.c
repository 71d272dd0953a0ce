/* Unit tests for agent/lake/spool: entries record each file's XXH64 and the positions
 * where the seal started (version 2), version 1 entries are still read, and a file that
 * does not match its entry (bytes changed, cut short, missing) fails its check. Entries
 * with provisional field ids: the columns set on a spool handle are recorded by the
 * entries sealed through it (version 3; version 2 without), floe_spool_reid gives an
 * entry's files new ids (rewritten under new names, the entry replaced, metrics
 * remapped, sizes and checksums that verify, the byte count kept), and floe_spool_open
 * removes what a rewrite interrupted on either side of its entry's replacement left. */
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
#include "formats/parquet/footer_ids.h"
#include "formats/parquet/reader.h"
#include "platform/fs.h"

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

static char *slurp(const char *path, size_t *n)
{
	FILE *fp = fopen(path, "rb");
	assert_non_null(fp);
	fseek(fp, 0, SEEK_END);
	*n = (size_t)ftell(fp);
	fseek(fp, 0, SEEK_SET);
	char *p = malloc(*n + 1);
	assert_int_equal(fread(p, 1, *n, fp), *n);
	p[*n] = '\0';
	fclose(fp);
	return p;
}

static void copy_file(const char *src, const char *dst)
{
	size_t n;
	char *p = slurp(src, &n);
	FILE *fp = fopen(dst, "wb");
	assert_non_null(fp);
	assert_int_equal(fwrite(p, 1, n, fp), n);
	fclose(fp);
	free(p);
}

static const struct floe_spool_prov prov[] = {{"status", "int", 15}, {"bytes", "long", 16}};

static void test_entries_record_provisional_columns(void **state)
{
	struct fixture *f = *state;
	char path[512];
	size_t n;
	assert_int_equal(floe_spool_set_provisional(f->spool, prov, 2), 0);
	seal(f, 1, 5);
	struct floe_spool_entry *e = NULL;
	assert_int_equal(floe_spool_load(f->spool, 1, &e), 0);
	assert_int_equal(e->nprov, 2);
	assert_string_equal(e->prov[1].name, "bytes");
	assert_string_equal(e->prov[1].type, "long");
	assert_int_equal(e->prov[1].id, 16);
	floe_spool_entry_free(&f->alloc, e);
	snprintf(path, sizeof(path), "%s/00000000000000000001.entry", f->spooldir);
	char *text = slurp(path, &n);
	assert_non_null(memmem(text, n, "\"version\":3", 11));
	free(text);
	/* Cleared: the next entry is a version 2 one, as an older agent reads it. */
	assert_int_equal(floe_spool_set_provisional(f->spool, NULL, 0), 0);
	seal(f, 2, 5);
	assert_int_equal(floe_spool_load(f->spool, 2, &e), 0);
	assert_int_equal(e->nprov, 0);
	floe_spool_entry_free(&f->alloc, e);
	snprintf(path, sizeof(path), "%s/00000000000000000002.entry", f->spooldir);
	text = slurp(path, &n);
	assert_non_null(memmem(text, n, "\"version\":2", 11));
	free(text);
	/* A shared handle starts with none. */
	struct floe_spool *other = NULL;
	assert_int_equal(floe_spool_set_provisional(f->spool, prov, 2), 0);
	assert_int_equal(floe_spool_share(f->spool, &f->alloc, &other), 0);
	struct floe_spool_entry plain = {.seq = 9};
	assert_int_equal(floe_spool_write_entry(other, &plain), 0);
	assert_int_equal(floe_spool_load(f->spool, 9, &e), 0);
	assert_int_equal(e->nprov, 0);
	floe_spool_entry_free(&f->alloc, e);
	floe_spool_free(other);
	/* Bad provisional lists are corrupt entries. */
	const char *bad[] = {
	    "\"provisional\":{}", "\"provisional\":[{\"name\":\"\",\"id\":15,\"type\":\"int\"}]",
	    "\"provisional\":[{\"name\":\"a\",\"id\":0,\"type\":\"int\"}]",
	    "\"provisional\":[{\"name\":\"a\",\"id\":15,\"type\":\"a-very-long-type-name\"}]"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char doc[512];
		snprintf(doc, sizeof(doc),
			 "{\"version\":3,\"seq\":3,\"created_us\":1,\"replaced_utf8\":0,%s,"
			 "\"positions\":\"\",\"from\":\"\",\"files\":[]}",
			 bad[i]);
		assert_int_equal(floe_spool_entry_decode(&f->alloc, &f->spec, doc, strlen(doc), &e),
				 FLOE_ECORRUPT);
	}
}

struct memsrc {
	const char *p;
	size_t n;
};

static int mem_read(void *ctx, uint64_t off, void *buf, size_t len)
{
	struct memsrc *m = ctx;
	memcpy(buf, m->p + off, len);
	return 0;
}

/* The field id of column name in the Parquet file at path. */
static int32_t file_id(struct fixture *f, const char *path, const char *name)
{
	struct memsrc m;
	m.p = slurp(path, &m.n);
	struct floe_pq_source src = {&m, m.n, mem_read};
	struct floe_pq_reader *r = NULL;
	assert_int_equal(floe_pq_reader_open(&f->alloc, &src, NULL, &r, NULL), 0);
	size_t nc;
	const struct floe_pq_column *cols = floe_pq_reader_columns(r, &nc);
	int32_t id = -1;
	for (size_t i = 0; i < nc; i++)
		if (strcmp(cols[i].name, name) == 0)
			id = cols[i].field_id;
	floe_pq_reader_free(r);
	free((char *)m.p);
	return id;
}

/* The built-in host column (id 3) stands for a typed one: the mechanism is the same. */
static void test_reid_rewrites_entry(void **state)
{
	struct fixture *f = *state;
	assert_int_equal(floe_spool_set_provisional(f->spool, prov, 1), 0);
	seal(f, 1, 50);
	struct floe_spool_entry *e = NULL;
	assert_int_equal(floe_spool_load(f->spool, 1, &e), 0);
	char old[512], now[512];
	assert_int_equal(floe_spool_path(f->spool, e->files[0].name, old, sizeof(old)), 0);
	assert_int_equal(file_id(f, old, "host"), 3);
	struct floe_pq_reid map[] = {{3, 40, 0}};
	struct floe_err why = {0};
	assert_int_equal(floe_spool_reid(f->spool, e, map, 1, &why), 0);
	assert_int_not_equal(access(old, F_OK), 0);
	floe_spool_entry_free(&f->alloc, e);
	assert_int_equal(floe_spool_load(f->spool, 1, &e), 0);
	assert_int_equal(e->nprov, 0);
	assert_string_equal(e->files[0].name, "00000000000000000001-0" FLOE_SPOOL_REID_SUFFIX);
	assert_int_equal(floe_spool_verify(f->spool, e, &why), 0);
	assert_int_equal(floe_spool_path(f->spool, e->files[0].name, now, sizeof(now)), 0);
	assert_int_equal(file_id(f, now, "host"), 40);
	assert_int_equal(file_id(f, now, "message"), 11);
	bool seen40 = false;
	for (size_t i = 0; i < e->files[0].nmetrics; i++) {
		assert_int_not_equal(e->files[0].metrics[i].field_id, 3);
		seen40 |= e->files[0].metrics[i].field_id == 40;
	}
	assert_true(seen40);
	assert_int_equal(floe_spool_bytes(f->spool), (uint64_t)e->files[0].size);
	/* A reopened spool counts the same bytes and removes nothing. */
	struct floe_spool *sp = NULL;
	assert_int_equal(floe_spool_open(&f->alloc, f->spooldir, &f->spec, &sp), 0);
	assert_int_equal(floe_spool_bytes(sp), (uint64_t)e->files[0].size);
	assert_int_equal(access(now, F_OK), 0);
	floe_spool_free(sp);
	floe_spool_entry_free(&f->alloc, e);
}

/* A rewrite cut short on either side of its entry's replacement. */
static void test_open_settles_interrupted_rewrite(void **state)
{
	struct fixture *f = *state;
	seal(f, 1, 30);
	seal(f, 2, 30);
	struct floe_spool_entry *e1 = NULL, *e2 = NULL;
	assert_int_equal(floe_spool_load(f->spool, 1, &e1), 0);
	assert_int_equal(floe_spool_load(f->spool, 2, &e2), 0);
	char old1[512], new1[600], old2[512], new2[600];
	assert_int_equal(floe_spool_path(f->spool, e1->files[0].name, old1, sizeof(old1)), 0);
	assert_int_equal(floe_spool_path(f->spool, e2->files[0].name, old2, sizeof(old2)), 0);
	/* Entry 1: the new file written, the entry not yet replaced. */
	snprintf(new1, sizeof(new1), "%.*s" FLOE_SPOOL_REID_SUFFIX, (int)(strlen(old1) - 8), old1);
	copy_file(old1, new1);
	/* Entry 2: replaced, its old file not yet removed. */
	struct floe_pq_reid map[] = {{3, 40, 0}};
	copy_file(old2, "/tmp/floe-test-spool-reid-keep.parquet");
	assert_int_equal(floe_spool_reid(f->spool, e2, map, 1, NULL), 0);
	copy_file("/tmp/floe-test-spool-reid-keep.parquet", old2);
	unlink("/tmp/floe-test-spool-reid-keep.parquet");
	snprintf(new2, sizeof(new2), "%.*s" FLOE_SPOOL_REID_SUFFIX, (int)(strlen(old2) - 8), old2);
	struct floe_fs_stat st;
	uint64_t want = (uint64_t)e1->files[0].size;
	assert_int_equal(floe_fs_stat(new2, &st), 0);
	want += st.size;
	struct floe_spool *sp = NULL;
	assert_int_equal(floe_spool_open(&f->alloc, f->spooldir, &f->spec, &sp), 0);
	assert_int_equal(access(old1, F_OK), 0);
	assert_int_not_equal(access(new1, F_OK), 0);
	assert_int_not_equal(access(old2, F_OK), 0);
	assert_int_equal(access(new2, F_OK), 0);
	assert_int_equal(floe_spool_bytes(sp), want);
	floe_spool_free(sp);
	floe_spool_entry_free(&f->alloc, e1);
	floe_spool_entry_free(&f->alloc, e2);
}

/* A file that is not Parquet is refused and leaves the entry as it was. */
static void test_reid_refuses_damage(void **state)
{
	struct fixture *f = *state;
	assert_int_equal(floe_spool_set_provisional(f->spool, prov, 1), 0);
	seal(f, 1, 10);
	struct floe_spool_entry *e = NULL;
	assert_int_equal(floe_spool_load(f->spool, 1, &e), 0);
	char old[512];
	assert_int_equal(floe_spool_path(f->spool, e->files[0].name, old, sizeof(old)), 0);
	FILE *fp = fopen(old, "r+b");
	fseek(fp, -4, SEEK_END);
	fwrite("XXXX", 1, 4, fp);
	fclose(fp);
	uint64_t bytes = floe_spool_bytes(f->spool);
	struct floe_pq_reid map[] = {{3, 40, 0}};
	struct floe_err why = {0};
	assert_int_equal(floe_spool_reid(f->spool, e, map, 1, &why), FLOE_EFORMAT);
	assert_non_null(strstr(why.msg, old));
	assert_int_equal(floe_spool_bytes(f->spool), bytes);
	floe_spool_entry_free(&f->alloc, e);
	assert_int_equal(floe_spool_load(f->spool, 1, &e), 0);
	assert_int_equal(e->nprov, 1);
	assert_string_equal(e->files[0].name, "00000000000000000001-0.parquet");
	floe_spool_entry_free(&f->alloc, e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_entry_records_checksum_and_start, setup, fixture_teardown),
		cmocka_unit_test_setup_teardown(test_verify_finds_damage, setup, fixture_teardown),
		cmocka_unit_test_setup_teardown(test_quarantine_files, setup, fixture_teardown),
		cmocka_unit_test_setup_teardown(test_entries_counted, setup, fixture_teardown),
		cmocka_unit_test_setup_teardown(test_version_1_still_read, setup, fixture_teardown),
		cmocka_unit_test_setup_teardown(test_entries_record_provisional_columns, setup, fixture_teardown),
		cmocka_unit_test_setup_teardown(test_reid_rewrites_entry, setup, fixture_teardown),
		cmocka_unit_test_setup_teardown(test_open_settles_interrupted_rewrite, setup, fixture_teardown),
		cmocka_unit_test_setup_teardown(test_reid_refuses_damage, setup, fixture_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Tests of rewriting Iceberg manifests: entries read with the spec's inheritance (null
 * sequence numbers of ADDED entries from the list, snapshot ids from the manifest's),
 * copied as EXISTING with explicit values, as DELETED by the rewriting snapshot, or kept
 * ADDED by their own snapshot; every data_file field carried over (a copy of a copy is
 * byte for byte the copy); counts, min sequence number and partition summaries of the
 * result; refusals. FLOE_DUMP_DIR=dir writes the files for check_avro.py. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "formats/avro/avro.h"
#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"
#include "formats/iceberg/manifest.h"

static const uint8_t SYNC[16] = {9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 1, 2, 3, 4, 5, 6};
static const struct floe_ice_manifest_part PARTS[] = {{1000, "ts_day", "date"}, {1001, "host", "string"}};
static const char TABLE_SCHEMA[] = "{\"type\":\"struct\",\"schema-id\":0,\"fields\":[]}";
static const char SPEC[] = "[{\"source-id\":1,\"field-id\":1000,\"transform\":\"day\",\"name\":\"ts_day\"},"
			   "{\"source-id\":3,\"field-id\":1001,\"transform\":\"identity\",\"name\":\"host\"}]";
static const uint8_t LO[] = {1, 0, 0, 0, 0, 0, 0, 0}, HI[] = {9, 0, 0, 0, 0, 0, 0, 0};
static const struct floe_ice_column_metrics METRICS[] = {
	{1, 100, 10, 0, true, LO, 8, HI, 8},
	{11, 50, 10, 2, true, (const uint8_t *)"alpha", 5, (const uint8_t *)"omega", 5},
};
static const int64_t SPLITS[] = {4, 1000};
static const struct floe_ice_part_value PV1[] = {{false, 19492, NULL, 0}, {false, 0, "web-1", 5}};
static const struct floe_ice_part_value PV2[] = {{false, 19490, NULL, 0}, {true, 0, NULL, 0}};
static const struct floe_ice_part_value PV3[] = {{false, 19500, NULL, 0}, {false, 0, "db", 2}};
static const struct floe_ice_data_file FILES[] = {
	{"file:///t/data/a.parquet", 10, 4096, PV1, METRICS, 2, SPLITS, 2},
	{"file:///t/data/b.parquet", 3, 777, PV2, NULL, 0, NULL, 0},
};
static const struct floe_ice_data_file NEWFILE = {"file:///t/data/c.parquet", 5, 999, PV3, NULL, 0, NULL, 0};

#define S1 111
#define S2 222
#define S3 333

static struct floe_ice_manifest_info info_for(int64_t snapshot)
{
	struct floe_ice_manifest_info info = {
		.schema_json = TABLE_SCHEMA,
		.partition_spec_json = SPEC,
		.partition_spec_id = 0,
		.parts = PARTS,
		.nparts = 2,
		.snapshot_id = snapshot,
	};
	return info;
}

static void dump(const char *name, const struct floe_buf *b)
{
	const char *dir = getenv("FLOE_DUMP_DIR");
	char path[512];
	if (!dir)
		return;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "wb");
	if (f) {
		fwrite(b->data, 1, b->len, f);
		fclose(f);
	}
}

/* Copies every entry of manifest in (listed as added by listed_snap at seq) with status
 * into a new manifest written by snapshot, finished at seq out_seq. */
static void rewrite(const struct floe_buf *in, int64_t listed_snap, int64_t seq, int status,
		    int64_t snapshot, int64_t out_seq, struct floe_buf *out,
		    struct floe_ice_manifest_entry *listed, struct floe_ice_manifest_stats *st)
{
	struct floe_ice_manifest_entry l = {.added_snapshot_id = listed_snap, .sequence_number = seq};
	struct floe_ice_entry_reader *r;
	assert_int_equal(floe_ice_entry_reader_new(NULL, in->data, in->len, &l, &r, NULL), 0);
	struct floe_ice_manifest_info info = info_for(snapshot);
	struct floe_ice_manifest_writer *w;
	assert_int_equal(floe_ice_manifest_writer_new(NULL, &info, SYNC, out, &w), 0);
	struct floe_ice_entry e;
	int rc;
	while ((rc = floe_ice_entry_reader_next(r, &e, NULL)) == 1)
		assert_int_equal(floe_ice_manifest_writer_copy(w, &e, status), 0);
	assert_int_equal(rc, 0);
	assert_int_equal(floe_ice_manifest_writer_finish(w, out_seq, listed, st), 0);
	/* The summaries are the writer's: keep a copy for the caller. */
	struct floe_ice_field_summary *copy;
	assert_int_equal(floe_ice_field_summaries_copy(NULL, listed->partitions, listed->npartitions, &copy), 0);
	listed->partitions = copy;
	floe_ice_manifest_writer_free(w);
	floe_ice_entry_reader_free(r);
}

static void expect_entry(const struct floe_ice_entry *e, int status, int64_t snap, int64_t seq, int64_t fseq)
{
	assert_int_equal(e->status, status);
	assert_true(e->snapshot_id == snap);
	assert_true(e->sequence_number == seq);
	assert_true(e->file_sequence_number == fseq);
}

static void test_inherit_and_existing(void **state)
{
	(void)state;
	struct floe_buf m1, m2, m3;
	floe_buf_init(&m1, NULL, 1 << 20);
	floe_buf_init(&m2, NULL, 1 << 20);
	floe_buf_init(&m3, NULL, 1 << 20);
	struct floe_ice_manifest_info info = info_for(S1);
	assert_int_equal(floe_ice_manifest_write(NULL, &info, FILES, 2, SYNC, &m1), 0);

	/* ADDED entries inherit the list's sequence number and the manifest's snapshot. */
	struct floe_ice_manifest_entry l1 = {.added_snapshot_id = S1, .sequence_number = 3};
	struct floe_ice_entry_reader *r;
	struct floe_ice_entry e;
	assert_int_equal(floe_ice_entry_reader_new(NULL, m1.data, m1.len, &l1, &r, NULL), 0);
	assert_int_equal(floe_ice_entry_reader_next(r, &e, NULL), 1);
	expect_entry(&e, 1, S1, 3, 3);
	assert_string_equal(e.path, FILES[0].path);
	assert_int_equal(e.record_count, 10);
	assert_int_equal(e.file_size, 4096);
	size_t len;
	const uint8_t *v = floe_ice_entry_reader_meta(r, "partition-spec-id", &len);
	assert_non_null(v);
	assert_memory_equal(v, "0", 1);
	floe_ice_entry_reader_free(r);

	/* Merged by S2 at seq 7: EXISTING, explicit S1 and 3 whatever the new list says. */
	struct floe_ice_manifest_entry l2;
	struct floe_ice_manifest_stats st;
	rewrite(&m1, S1, 3, 0, S2, 7, &m2, &l2, &st);
	dump("rewritten-existing.avro", &m2);
	assert_int_equal(l2.existing_files, 2);
	assert_int_equal(l2.added_files, 0);
	assert_int_equal(l2.existing_rows, 13);
	assert_int_equal(l2.min_sequence_number, 3);
	assert_int_equal(l2.sequence_number, 7);
	assert_true(l2.added_snapshot_id == S2);
	assert_int_equal(l2.length, (int64_t)m2.len);
	assert_int_equal(st.min_existing_seq, 3);
	assert_false(st.has_added);
	/* Partition summaries over both files: days 19490..19492, a null host, web-1. */
	assert_int_equal(l2.npartitions, 2);
	assert_false(l2.partitions[0].contains_null);
	assert_memory_equal(l2.partitions[0].lower, "\x22\x4c\0\0", 4);
	assert_memory_equal(l2.partitions[0].upper, "\x24\x4c\0\0", 4);
	assert_true(l2.partitions[1].contains_null);
	assert_int_equal(l2.partitions[1].lower_len, 5);
	assert_memory_equal(l2.partitions[1].lower, "web-1", 5);

	assert_int_equal(floe_ice_entry_reader_new(NULL, m2.data, m2.len, &l2, &r, NULL), 0);
	assert_int_equal(floe_ice_entry_reader_next(r, &e, NULL), 1);
	expect_entry(&e, 0, S1, 3, 3);
	assert_int_equal(floe_ice_entry_reader_next(r, &e, NULL), 1);
	expect_entry(&e, 0, S1, 3, 3);
	assert_string_equal(e.path, FILES[1].path);
	assert_int_equal(floe_ice_entry_reader_next(r, &e, NULL), 0);
	floe_ice_entry_reader_free(r);

	/* Merged again by S3: EXISTING entries carry everything over, so the copy of the copy
	 * is the same file, byte for byte. */
	struct floe_ice_manifest_entry l3;
	rewrite(&m2, S2, 7, 0, S3, 9, &m3, &l3, &st);
	assert_int_equal(m3.len, m2.len);
	assert_memory_equal(m3.data, m2.data, m2.len);
	floe_free(NULL, (void *)l2.partitions);
	floe_free(NULL, (void *)l3.partitions);
	floe_buf_fini(&m1);
	floe_buf_fini(&m2);
	floe_buf_fini(&m3);
}

/* A snapshot's own ADDED entries stay ADDED (inheriting its sequence number) beside
 * EXISTING ones; DELETED entries name the snapshot that deleted them. */
static void test_added_and_deleted(void **state)
{
	(void)state;
	struct floe_buf m1, m2, m3;
	floe_buf_init(&m1, NULL, 1 << 20);
	floe_buf_init(&m2, NULL, 1 << 20);
	floe_buf_init(&m3, NULL, 1 << 20);
	struct floe_ice_manifest_info info = info_for(S1);
	assert_int_equal(floe_ice_manifest_write(NULL, &info, FILES, 2, SYNC, &m1), 0);

	struct floe_ice_manifest_entry l = {.added_snapshot_id = S1, .sequence_number = 3};
	struct floe_ice_entry_reader *r;
	struct floe_ice_entry e;
	struct floe_ice_manifest_info i2 = info_for(S2);
	struct floe_ice_manifest_writer *w;
	assert_int_equal(floe_ice_manifest_writer_new(NULL, &i2, SYNC, &m2, &w), 0);
	assert_int_equal(floe_ice_manifest_writer_add(w, &NEWFILE), 0);
	assert_int_equal(floe_ice_entry_reader_new(NULL, m1.data, m1.len, &l, &r, NULL), 0);
	assert_int_equal(floe_ice_entry_reader_next(r, &e, NULL), 1);
	/* Only S2's own entries may stay ADDED. */
	assert_int_equal(floe_ice_manifest_writer_copy(w, &e, 1), FLOE_EINVAL);
	assert_int_equal(floe_ice_manifest_writer_copy(w, &e, 2), 0);
	assert_int_equal(floe_ice_entry_reader_next(r, &e, NULL), 1);
	assert_int_equal(floe_ice_manifest_writer_copy(w, &e, 0), 0);
	floe_ice_entry_reader_free(r);
	assert_int_equal(floe_ice_manifest_writer_count(w), 3);
	struct floe_ice_manifest_entry l2;
	struct floe_ice_manifest_stats st;
	assert_int_equal(floe_ice_manifest_writer_finish(w, 8, &l2, &st), 0);
	assert_int_equal(l2.added_files, 1);
	assert_int_equal(l2.added_rows, 5);
	assert_int_equal(l2.deleted_files, 1);
	assert_int_equal(l2.deleted_rows, 10);
	assert_int_equal(l2.existing_files, 1);
	assert_int_equal(l2.min_sequence_number, 3);
	assert_true(st.has_added);
	/* Listed again at seq 12 (a retried commit): its ADDED entries take 12. */
	assert_int_equal(floe_ice_manifest_min_seq(&st, 12), 3);
	struct floe_ice_manifest_stats only_added = {INT64_MAX, true};
	assert_int_equal(floe_ice_manifest_min_seq(&only_added, 12), 12);
	floe_ice_manifest_writer_free(w);
	dump("rewritten-mixed.avro", &m2);

	l2.sequence_number = 12;
	assert_int_equal(floe_ice_entry_reader_new(NULL, m2.data, m2.len, &l2, &r, NULL), 0);
	assert_int_equal(floe_ice_entry_reader_next(r, &e, NULL), 1);
	expect_entry(&e, 1, S2, 12, 12);
	assert_string_equal(e.path, NEWFILE.path);
	assert_int_equal(floe_ice_entry_reader_next(r, &e, NULL), 1);
	expect_entry(&e, 2, S2, 3, 3);
	assert_int_equal(floe_ice_entry_reader_next(r, &e, NULL), 1);
	expect_entry(&e, 0, S1, 3, 3);
	/* S3 merging S2's manifest keeps S2's ADDED entry as EXISTING at 12. */
	floe_ice_entry_reader_free(r);
	struct floe_ice_manifest_entry l3;
	rewrite(&m2, S2, 12, 0, S3, 13, &m3, &l3, &st);
	assert_int_equal(l3.existing_files, 3);
	assert_int_equal(l3.min_sequence_number, 3);
	floe_free(NULL, (void *)l3.partitions);
	floe_buf_fini(&m1);
	floe_buf_fini(&m2);
	floe_buf_fini(&m3);
}

/* A manifest of another spec (a partition field missing) is refused, not mangled. */
static void test_other_spec(void **state)
{
	(void)state;
	static const struct floe_ice_manifest_part one[] = {{1000, "ts_day", "date"}};
	struct floe_ice_manifest_info info = info_for(S1);
	info.parts = one;
	info.nparts = 1;
	struct floe_buf m1, m2;
	floe_buf_init(&m1, NULL, 1 << 20);
	floe_buf_init(&m2, NULL, 1 << 20);
	assert_int_equal(floe_ice_manifest_write(NULL, &info, FILES, 1, SYNC, &m1), 0);
	struct floe_ice_manifest_entry l = {.added_snapshot_id = S1, .sequence_number = 3};
	struct floe_ice_entry_reader *r;
	struct floe_ice_entry e;
	assert_int_equal(floe_ice_entry_reader_new(NULL, m1.data, m1.len, &l, &r, NULL), 0);
	assert_int_equal(floe_ice_entry_reader_next(r, &e, NULL), 1);
	struct floe_ice_manifest_info i2 = info_for(S2);
	struct floe_ice_manifest_writer *w;
	assert_int_equal(floe_ice_manifest_writer_new(NULL, &i2, SYNC, &m2, &w), 0);
	assert_int_equal(floe_ice_manifest_writer_copy(w, &e, 0), FLOE_EFORMAT);
	assert_int_equal(floe_ice_manifest_writer_count(w), 0);
	floe_ice_manifest_writer_free(w);
	floe_ice_entry_reader_free(r);
	/* Not a manifest at all. */
	struct floe_err err;
	assert_int_not_equal(floe_ice_entry_reader_new(NULL, (const uint8_t *)"Obj\x01", 4, &l, &r, &err), 0);
	floe_buf_fini(&m1);
	floe_buf_fini(&m2);
}

/* Every allocation failing in turn: an error, never a crash or a leak. */
static void test_faults(void **state)
{
	(void)state;
	struct floe_buf m1;
	floe_buf_init(&m1, NULL, 1 << 20);
	struct floe_ice_manifest_info info = info_for(S1);
	assert_int_equal(floe_ice_manifest_write(NULL, &info, FILES, 2, SYNC, &m1), 0);
	struct floe_ice_manifest_entry l = {.added_snapshot_id = S1, .sequence_number = 3};
	int ok = 0;
	for (unsigned fail = 0; fail < 400 && !ok; fail++) {
		struct floe_alloc a;
		floe_alloc_init(&a, 0);
		a.fail_after = (long)fail;
		struct floe_buf out;
		floe_buf_init(&out, &a, 1 << 20);
		struct floe_ice_entry_reader *r = NULL;
		struct floe_ice_manifest_writer *w = NULL;
		struct floe_ice_manifest_info i2 = info_for(S2);
		int rc = floe_ice_entry_reader_new(&a, m1.data, m1.len, &l, &r, NULL);
		if (!rc)
			rc = floe_ice_manifest_writer_new(&a, &i2, SYNC, &out, &w);
		struct floe_ice_entry e;
		while (!rc && (rc = floe_ice_entry_reader_next(r, &e, NULL)) == 1)
			rc = floe_ice_manifest_writer_copy(w, &e, 0);
		struct floe_ice_manifest_entry l2;
		struct floe_ice_manifest_stats st;
		if (!rc)
			rc = floe_ice_manifest_writer_finish(w, 5, &l2, &st);
		ok = rc == 0;
		if (!ok)
			assert_true(rc == FLOE_ENOMEM || rc == FLOE_ELIMIT);
		floe_ice_manifest_writer_free(w);
		floe_ice_entry_reader_free(r);
		floe_buf_fini(&out);
		assert_int_equal(a.used, 0);
	}
	assert_true(ok);
	floe_buf_fini(&m1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_inherit_and_existing),
		cmocka_unit_test(test_added_and_deleted),
		cmocka_unit_test(test_other_spec),
		cmocka_unit_test(test_faults),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

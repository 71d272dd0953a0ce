/* Tests of Iceberg manifests and manifest lists: the avro.schema headers against Java's
 * exact text, every field read back, partition summaries, v1 lists, a read/re-write that
 * must be byte-identical, hostile input and allocation failures. FLOE_DUMP_DIR=dir writes
 * the files there (tests/integration/check_avro.py checks them with python3-avro). */
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

/* The avro.schema texts below are copied from files written by Java Iceberg (hyparam/
 * icebird test/files/hyperparam-iceberg/java/bunnies/metadata). */
/* Java 1.x ManifestWriter, unpartitioned spec */
static const char JAVA_ENTRY_SCHEMA[] =
	"{\"type\":\"record\",\"name\":\"manifest_entry\",\"fields\":[{\"name\":\"status\",\"type\":\"int\",\"field-id"
	"\":0},{\"name\":\"snapshot_id\",\"type\":[\"null\",\"long\"],\"default\":null,\"field-id\":1},{\"name\":\"se"
	"quence_number\",\"type\":[\"null\",\"long\"],\"default\":null,\"field-id\":3},{\"name\":\"file_sequence_"
	"number\",\"type\":[\"null\",\"long\"],\"default\":null,\"field-id\":4},{\"name\":\"data_file\",\"type\":{\"t"
	"ype\":\"record\",\"name\":\"r2\",\"fields\":[{\"name\":\"content\",\"type\":\"int\",\"doc\":\"Contents of the "
	"file: 0=data, 1=position deletes, 2=equality deletes\",\"field-id\":134},{\"name\":\"file_path\","
	"\"type\":\"string\",\"doc\":\"Location URI with FS scheme\",\"field-id\":100},{\"name\":\"file_format\","
	"\"type\":\"string\",\"doc\":\"File format name: avro, orc, or parquet\",\"field-id\":101},{\"name\":\"p"
	"artition\",\"type\":{\"type\":\"record\",\"name\":\"r102\",\"fields\":[]},\"doc\":\"Partition data tuple, "
	"schema based on the partition spec\",\"field-id\":102},{\"name\":\"record_count\",\"type\":\"long\",\""
	"doc\":\"Number of records in the file\",\"field-id\":103},{\"name\":\"file_size_in_bytes\",\"type\":\""
	"long\",\"doc\":\"Total file size in bytes\",\"field-id\":104},{\"name\":\"column_sizes\",\"type\":[\"nul"
	"l\",{\"type\":\"array\",\"items\":{\"type\":\"record\",\"name\":\"k117_v118\",\"fields\":[{\"name\":\"key\",\"ty"
	"pe\":\"int\",\"field-id\":117},{\"name\":\"value\",\"type\":\"long\",\"field-id\":118}]},\"logicalType\":\"m"
	"ap\"}],\"doc\":\"Map of column id to total size on disk\",\"default\":null,\"field-id\":108},{\"name"
	"\":\"value_counts\",\"type\":[\"null\",{\"type\":\"array\",\"items\":{\"type\":\"record\",\"name\":\"k119_v120"
	"\",\"fields\":[{\"name\":\"key\",\"type\":\"int\",\"field-id\":119},{\"name\":\"value\",\"type\":\"long\",\"fiel"
	"d-id\":120}]},\"logicalType\":\"map\"}],\"doc\":\"Map of column id to total count, including null "
	"and NaN\",\"default\":null,\"field-id\":109},{\"name\":\"null_value_counts\",\"type\":[\"null\",{\"type\""
	":\"array\",\"items\":{\"type\":\"record\",\"name\":\"k121_v122\",\"fields\":[{\"name\":\"key\",\"type\":\"int\","
	"\"field-id\":121},{\"name\":\"value\",\"type\":\"long\",\"field-id\":122}]},\"logicalType\":\"map\"}],\"doc"
	"\":\"Map of column id to null value count\",\"default\":null,\"field-id\":110},{\"name\":\"nan_value"
	"_counts\",\"type\":[\"null\",{\"type\":\"array\",\"items\":{\"type\":\"record\",\"name\":\"k138_v139\",\"field"
	"s\":[{\"name\":\"key\",\"type\":\"int\",\"field-id\":138},{\"name\":\"value\",\"type\":\"long\",\"field-id\":13"
	"9}]},\"logicalType\":\"map\"}],\"doc\":\"Map of column id to number of NaN values in the column\","
	"\"default\":null,\"field-id\":137},{\"name\":\"lower_bounds\",\"type\":[\"null\",{\"type\":\"array\",\"item"
	"s\":{\"type\":\"record\",\"name\":\"k126_v127\",\"fields\":[{\"name\":\"key\",\"type\":\"int\",\"field-id\":126"
	"},{\"name\":\"value\",\"type\":\"bytes\",\"field-id\":127}]},\"logicalType\":\"map\"}],\"doc\":\"Map of col"
	"umn id to lower bound\",\"default\":null,\"field-id\":125},{\"name\":\"upper_bounds\",\"type\":[\"null"
	"\",{\"type\":\"array\",\"items\":{\"type\":\"record\",\"name\":\"k129_v130\",\"fields\":[{\"name\":\"key\",\"typ"
	"e\":\"int\",\"field-id\":129},{\"name\":\"value\",\"type\":\"bytes\",\"field-id\":130}]},\"logicalType\":\"m"
	"ap\"}],\"doc\":\"Map of column id to upper bound\",\"default\":null,\"field-id\":128},{\"name\":\"key_"
	"metadata\",\"type\":[\"null\",\"bytes\"],\"doc\":\"Encryption key metadata blob\",\"default\":null,\"fie"
	"ld-id\":131},{\"name\":\"split_offsets\",\"type\":[\"null\",{\"type\":\"array\",\"items\":\"long\",\"element"
	"-id\":133}],\"doc\":\"Splittable offsets\",\"default\":null,\"field-id\":132},{\"name\":\"equality_ids"
	"\",\"type\":[\"null\",{\"type\":\"array\",\"items\":\"int\",\"element-id\":136}],\"doc\":\"Equality comparis"
	"on field IDs\",\"default\":null,\"field-id\":135},{\"name\":\"sort_order_id\",\"type\":[\"null\",\"int\"]"
	",\"doc\":\"Sort order ID\",\"default\":null,\"field-id\":140},{\"name\":\"referenced_data_file\",\"type"
	"\":[\"null\",\"string\"],\"doc\":\"Fully qualified location (URI with FS scheme) of a data file th"
	"at all deletes reference\",\"default\":null,\"field-id\":143}]},\"field-id\":2}]}";

/* Java ManifestListWriter v2 */
static const char JAVA_LIST_SCHEMA[] =
	"{\"type\":\"record\",\"name\":\"manifest_file\",\"fields\":[{\"name\":\"manifest_path\",\"type\":\"string\","
	"\"doc\":\"Location URI with FS scheme\",\"field-id\":500},{\"name\":\"manifest_length\",\"type\":\"long"
	"\",\"doc\":\"Total file size in bytes\",\"field-id\":501},{\"name\":\"partition_spec_id\",\"type\":\"int"
	"\",\"doc\":\"Spec ID used to write\",\"field-id\":502},{\"name\":\"content\",\"type\":\"int\",\"doc\":\"Cont"
	"ents of the manifest: 0=data, 1=deletes\",\"field-id\":517},{\"name\":\"sequence_number\",\"type\":"
	"\"long\",\"doc\":\"Sequence number when the manifest was added\",\"field-id\":515},{\"name\":\"min_se"
	"quence_number\",\"type\":\"long\",\"doc\":\"Lowest sequence number in the manifest\",\"field-id\":516"
	"},{\"name\":\"added_snapshot_id\",\"type\":\"long\",\"doc\":\"Snapshot ID that added the manifest\",\"f"
	"ield-id\":503},{\"name\":\"added_files_count\",\"type\":\"int\",\"doc\":\"Added entry count\",\"field-id"
	"\":504},{\"name\":\"existing_files_count\",\"type\":\"int\",\"doc\":\"Existing entry count\",\"field-id\""
	":505},{\"name\":\"deleted_files_count\",\"type\":\"int\",\"doc\":\"Deleted entry count\",\"field-id\":50"
	"6},{\"name\":\"added_rows_count\",\"type\":\"long\",\"doc\":\"Added rows count\",\"field-id\":512},{\"nam"
	"e\":\"existing_rows_count\",\"type\":\"long\",\"doc\":\"Existing rows count\",\"field-id\":513},{\"name\""
	":\"deleted_rows_count\",\"type\":\"long\",\"doc\":\"Deleted rows count\",\"field-id\":514},{\"name\":\"pa"
	"rtitions\",\"type\":[\"null\",{\"type\":\"array\",\"items\":{\"type\":\"record\",\"name\":\"r508\",\"fields\":["
	"{\"name\":\"contains_null\",\"type\":\"boolean\",\"doc\":\"True if any file has a null partition valu"
	"e\",\"field-id\":509},{\"name\":\"contains_nan\",\"type\":[\"null\",\"boolean\"],\"doc\":\"True if any fil"
	"e has a nan partition value\",\"default\":null,\"field-id\":518},{\"name\":\"lower_bound\",\"type\":["
	"\"null\",\"bytes\"],\"doc\":\"Partition lower bound for all files\",\"default\":null,\"field-id\":510}"
	",{\"name\":\"upper_bound\",\"type\":[\"null\",\"bytes\"],\"doc\":\"Partition upper bound for all files\""
	",\"default\":null,\"field-id\":511}]},\"element-id\":508}],\"doc\":\"Summary for each partition\",\"d"
	"efault\":null,\"field-id\":507},{\"name\":\"key_metadata\",\"type\":[\"null\",\"bytes\"],\"doc\":\"Encrypt"
	"ion key metadata blob\",\"default\":null,\"field-id\":519}]}";

static const uint8_t SYNC[16] = {0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};

/* r102 for the partition fields of PARTS, as Java's PartitionSpec.partitionType() gives. */
static const char R102_FIELDS[] =
	"{\"name\":\"ts_day\",\"type\":[\"null\",{\"type\":\"int\",\"logicalType\":\"date\"}],\"default\":null,\"field-id\":1000},"
	"{\"name\":\"host_bucket\",\"type\":[\"null\",\"int\"],\"default\":null,\"field-id\":1001},"
	"{\"name\":\"host\",\"type\":[\"null\",\"string\"],\"default\":null,\"field-id\":1002},"
	"{\"name\":\"offset\",\"type\":[\"null\",\"long\"],\"default\":null,\"field-id\":1003},"
	"{\"name\":\"ts\",\"type\":[\"null\",{\"type\":\"long\",\"logicalType\":\"timestamp-micros\",\"adjust-to-utc\":true}],\"default\":null,\"field-id\":1004}";

static const struct floe_ice_manifest_part PARTS[] = {
	{1000, "ts_day", "date"}, {1001, "host_bucket", "int"}, {1002, "host", "string"},
	{1003, "offset", "long"}, {1004, "ts", "timestamptz"},
};
#define NPARTS 5

static const char TABLE_SCHEMA[] =
	"{\"type\":\"struct\",\"schema-id\":0,\"fields\":[{\"id\":1,\"name\":\"ts\",\"required\":true,"
	"\"type\":\"timestamptz\"},{\"id\":3,\"name\":\"host\",\"required\":true,\"type\":\"string\"}]}";
static const char SPEC[] =
	"[{\"source-id\":1,\"field-id\":1000,\"transform\":\"day\",\"name\":\"ts_day\"},"
	"{\"source-id\":3,\"field-id\":1001,\"transform\":\"bucket[16]\",\"name\":\"host_bucket\"},"
	"{\"source-id\":3,\"field-id\":1002,\"transform\":\"identity\",\"name\":\"host\"},"
	"{\"source-id\":5,\"field-id\":1003,\"transform\":\"identity\",\"name\":\"offset\"},"
	"{\"source-id\":1,\"field-id\":1004,\"transform\":\"identity\",\"name\":\"ts\"}]";

static const uint8_t LO1[] = {1, 0, 0, 0, 0, 0, 0, 0}, HI1[] = {9, 0, 0, 0, 0, 0, 0, 0};
static const struct floe_ice_column_metrics METRICS[] = {
	{1, 100, 10, 0, true, LO1, 8, HI1, 8},
	{3, 50, 10, 2, true, (const uint8_t *)"alpha", 5, (const uint8_t *)"omega", 5},
	{5, 20, 10, 10, false, NULL, 0, NULL, 0},
};
static const int64_t SPLITS[] = {4, 1000};
static const struct floe_ice_part_value PV1[NPARTS] = {
	{false, 19492, NULL, 0}, {false, 7, NULL, 0}, {false, 0, "web-1", 5}, {false, 12345, NULL, 0},
	{false, 1684161045000000LL, NULL, 0},
};
static const struct floe_ice_part_value PV2[NPARTS] = {
	{false, 19490, NULL, 0}, {true, 0, NULL, 0}, {false, 0, "db", 2}, {false, -5, NULL, 0},
	{true, 0, NULL, 0},
};
static const struct floe_ice_data_file FILES[] = {
	{"s3://b/t/data/ts_day=2023-05-15/a.parquet", 10, 4096, PV1, METRICS, 3, SPLITS, 2},
	{"s3://b/t/data/ts_day=2023-05-13/b.parquet", 3, 777, PV2, NULL, 0, NULL, 0},
};

static struct floe_ice_manifest_info info_for(size_t nparts)
{
	struct floe_ice_manifest_info info = {
		.schema_json = TABLE_SCHEMA,
		.schema_id = 0,
		.partition_spec_json = nparts ? SPEC : "[]",
		.partition_spec_id = nparts ? 1 : 0,
		.parts = nparts ? PARTS : NULL,
		.nparts = nparts,
		.snapshot_id = 4951213507629824583LL,
	};
	return info;
}

static void dump(const char *name, const struct floe_buf *b)
{
	const char *dir = getenv("FLOE_DUMP_DIR");
	if (!dir)
		return;
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "wb");
	if (f) {
		fwrite(b->data, 1, b->len, f);
		fclose(f);
	}
}

static void expect_meta(struct floe_avro_reader *r, const char *key, const char *want)
{
	size_t len;
	const uint8_t *v = floe_avro_reader_meta(r, key, &len);
	assert_non_null(v);
	assert_int_equal(len, strlen(want));
	assert_memory_equal(v, want, len);
}

static void expect_long(const struct floe_avro_value *rec, const char *name, int64_t want)
{
	int64_t v;
	assert_int_equal(floe_avro_value_long(floe_avro_value_get(rec, name), &v), 0);
	assert_true(v == want);
}

static void expect_str(const struct floe_avro_value *rec, const char *name, const char *want)
{
	const uint8_t *p;
	size_t n;
	assert_int_equal(floe_avro_value_bytes(floe_avro_value_get(rec, name), &p, &n), 0);
	assert_int_equal(n, strlen(want));
	assert_memory_equal(p, want, n);
}

/* An int-keyed map (array of key/value records) against the expected pairs. */
static void expect_int_map(const struct floe_avro_value *m, const int32_t *keys, const int64_t *vals,
			   const char *const *bvals, size_t n)
{
	if (n == 0) {
		assert_true(floe_avro_value_is_null(m));
		return;
	}
	assert_int_equal(floe_avro_value_type(m), FLOE_AVRO_ARRAY);
	assert_int_equal(floe_avro_value_len(m), n);
	for (size_t i = 0; i < n; i++) {
		const struct floe_avro_value *kv = floe_avro_value_at(m, i);
		expect_long(kv, "key", keys[i]);
		if (bvals) {
			const uint8_t *p;
			size_t len;
			assert_int_equal(floe_avro_value_bytes(floe_avro_value_get(kv, "value"), &p, &len), 0);
			assert_memory_equal(p, bvals[i], len);
		} else {
			expect_long(kv, "value", vals[i]);
		}
	}
}

static void test_manifest_schema_unpartitioned(void **state)
{
	(void)state;
	struct floe_ice_manifest_info info = info_for(0);
	static const struct floe_ice_data_file f = {"file:///w/t/data/x.parquet", 1, 2, NULL, NULL, 0, NULL, 0};
	struct floe_buf out;
	floe_buf_init(&out, NULL, 1 << 20);
	assert_int_equal(floe_ice_manifest_write(NULL, &info, &f, 1, SYNC, &out), 0);
	dump("manifest-unpartitioned.avro", &out);
	struct floe_avro_reader *r;
	assert_int_equal(floe_avro_reader_new(NULL, out.data, out.len, NULL, &r, NULL), 0);
	expect_meta(r, "avro.schema", JAVA_ENTRY_SCHEMA);
	expect_meta(r, "partition-spec", "[]");
	expect_meta(r, "partition-spec-id", "0");
	const struct floe_avro_value *v;
	assert_int_equal(floe_avro_reader_next(r, &v, NULL), 1);
	assert_int_equal(floe_avro_value_len(floe_avro_value_get(floe_avro_value_get(v, "data_file"), "partition")), 0);
	assert_int_equal(floe_avro_reader_next(r, &v, NULL), 0);
	floe_avro_reader_free(r);
	floe_buf_fini(&out);
}

static void test_manifest(void **state)
{
	(void)state;
	struct floe_ice_manifest_info info = info_for(NPARTS);
	struct floe_buf out;
	floe_buf_init(&out, NULL, 1 << 20);
	assert_int_equal(floe_ice_manifest_write(NULL, &info, FILES, 2, SYNC, &out), 0);
	dump("manifest.avro", &out);

	/* Expected schema: Java's, with r102's fields filled in. */
	const char *hole = strstr(JAVA_ENTRY_SCHEMA, "\"name\":\"r102\",\"fields\":[");
	assert_non_null(hole);
	size_t at = (size_t)(hole - JAVA_ENTRY_SCHEMA) + strlen("\"name\":\"r102\",\"fields\":[");
	char want[8192];
	snprintf(want, sizeof(want), "%.*s%s%s", (int)at, JAVA_ENTRY_SCHEMA, R102_FIELDS, JAVA_ENTRY_SCHEMA + at);

	struct floe_avro_reader *r;
	assert_int_equal(floe_avro_reader_new(NULL, out.data, out.len, NULL, &r, NULL), 0);
	expect_meta(r, "avro.schema", want);
	expect_meta(r, "avro.codec", "null");
	expect_meta(r, "schema", TABLE_SCHEMA);
	expect_meta(r, "schema-id", "0");
	expect_meta(r, "partition-spec", SPEC);
	expect_meta(r, "partition-spec-id", "1");
	expect_meta(r, "format-version", "2");
	expect_meta(r, "content", "data");

	/* Field ids of manifest_entry in order. */
	const struct floe_avro_schema *s = floe_avro_reader_schema(r);
	static const int32_t entry_ids[] = {0, 1, 3, 4, 2};
	assert_int_equal(floe_avro_schema_count(s), 5);
	for (size_t i = 0; i < 5; i++) {
		int32_t id;
		assert_true(floe_avro_schema_field_id(s, i, &id));
		assert_int_equal(id, entry_ids[i]);
	}
	const struct floe_avro_schema *df = floe_avro_schema_at(s, 4);
	static const int32_t df_ids[] = {134, 100, 101, 102, 103, 104, 108, 109, 110, 137, 125, 128, 131, 132, 135, 140, 143};
	assert_string_equal(floe_avro_schema_name(df), "r2");
	assert_int_equal(floe_avro_schema_count(df), 17);
	for (size_t i = 0; i < 17; i++) {
		int32_t id;
		assert_true(floe_avro_schema_field_id(df, i, &id));
		assert_int_equal(id, df_ids[i]);
	}

	for (size_t k = 0; k < 2; k++) {
		const struct floe_ice_data_file *f = &FILES[k];
		const struct floe_avro_value *v;
		assert_int_equal(floe_avro_reader_next(r, &v, NULL), 1);
		expect_long(v, "status", 1);
		expect_long(v, "snapshot_id", 4951213507629824583LL);
		assert_true(floe_avro_value_is_null(floe_avro_value_get(v, "sequence_number")));
		assert_true(floe_avro_value_is_null(floe_avro_value_get(v, "file_sequence_number")));
		const struct floe_avro_value *d = floe_avro_value_get(v, "data_file");
		expect_long(d, "content", 0);
		expect_str(d, "file_path", f->path);
		expect_str(d, "file_format", "PARQUET");
		const struct floe_avro_value *p = floe_avro_value_get(d, "partition");
		assert_int_equal(floe_avro_value_len(p), NPARTS);
		for (size_t i = 0; i < NPARTS; i++) {
			const struct floe_avro_value *pv = floe_avro_value_get(p, PARTS[i].name);
			if (f->partition[i].is_null) {
				assert_true(floe_avro_value_is_null(pv));
			} else if (i == 2) {
				expect_str(p, PARTS[i].name, f->partition[i].s);
			} else {
				expect_long(p, PARTS[i].name, f->partition[i].i);
				assert_int_equal(floe_avro_value_type(pv), i < 2 ? FLOE_AVRO_INT : FLOE_AVRO_LONG);
			}
		}
		expect_long(d, "record_count", f->record_count);
		expect_long(d, "file_size_in_bytes", f->file_size);
		size_t nm = f->metrics_count;
		static const int32_t ids[] = {1, 3, 5};
		static const int64_t sizes[] = {100, 50, 20}, counts[] = {10, 10, 10}, nulls[] = {0, 2, 10};
		static const char *const lows[] = {"\x01\0\0\0\0\0\0\0", "alpha"}, *const highs[] = {"\x09\0\0\0\0\0\0\0", "omega"};
		expect_int_map(floe_avro_value_get(d, "column_sizes"), ids, sizes, NULL, nm);
		expect_int_map(floe_avro_value_get(d, "value_counts"), ids, counts, NULL, nm);
		expect_int_map(floe_avro_value_get(d, "null_value_counts"), ids, nulls, NULL, nm);
		assert_true(floe_avro_value_is_null(floe_avro_value_get(d, "nan_value_counts")));
		expect_int_map(floe_avro_value_get(d, "lower_bounds"), ids, NULL, lows, nm ? 2 : 0);
		expect_int_map(floe_avro_value_get(d, "upper_bounds"), ids, NULL, highs, nm ? 2 : 0);
		assert_true(floe_avro_value_is_null(floe_avro_value_get(d, "key_metadata")));
		const struct floe_avro_value *so = floe_avro_value_get(d, "split_offsets");
		if (f->split_count) {
			assert_int_equal(floe_avro_value_len(so), 2);
			int64_t o;
			assert_int_equal(floe_avro_value_long(floe_avro_value_at(so, 1), &o), 0);
			assert_int_equal(o, 1000);
		} else {
			assert_true(floe_avro_value_is_null(so));
		}
		assert_true(floe_avro_value_is_null(floe_avro_value_get(d, "equality_ids")));
		assert_true(floe_avro_value_is_null(floe_avro_value_get(d, "sort_order_id")));
		assert_true(floe_avro_value_is_null(floe_avro_value_get(d, "referenced_data_file")));
	}
	const struct floe_avro_value *v;
	assert_int_equal(floe_avro_reader_next(r, &v, NULL), 0);
	floe_avro_reader_free(r);
	floe_buf_fini(&out);
}

struct seen {
	int n;
	int status[4];
	char path[4][128];
	int64_t records[4], size[4];
};

static int on_entry(void *ctx, int status, const char *path, int64_t records, int64_t size)
{
	struct seen *s = ctx;
	if (s->n >= 4)
		return FLOE_ELIMIT;
	s->status[s->n] = status;
	snprintf(s->path[s->n], sizeof(s->path[0]), "%s", path);
	s->records[s->n] = records;
	s->size[s->n] = size;
	s->n++;
	return 0;
}

static void test_manifest_read(void **state)
{
	(void)state;
	struct floe_ice_manifest_info info = info_for(NPARTS);
	struct floe_buf out;
	floe_buf_init(&out, NULL, 1 << 20);
	assert_int_equal(floe_ice_manifest_write(NULL, &info, FILES, 2, SYNC, &out), 0);
	struct seen s = {0};
	assert_int_equal(floe_ice_manifest_read(NULL, out.data, out.len, on_entry, &s, NULL), 0);
	assert_int_equal(s.n, 2);
	assert_int_equal(s.status[1], 1);
	assert_string_equal(s.path[1], FILES[1].path);
	assert_int_equal(s.records[0], 10);
	assert_int_equal(s.size[1], 777);
	/* A callback error stops the walk and is returned. */
	s.n = 4;
	assert_int_equal(floe_ice_manifest_read(NULL, out.data, out.len, on_entry, &s, NULL), FLOE_ELIMIT);
	floe_buf_fini(&out);
}

static void test_summarize(void **state)
{
	(void)state;
	struct floe_ice_field_summary sum[NPARTS];
	uint8_t scratch[16 * NPARTS];
	assert_int_equal(floe_ice_manifest_summarize(PARTS, NPARTS, FILES, 2, sum, scratch), 0);
	/* ts_day: 19490..19492 as 4-byte LE. */
	assert_false(sum[0].contains_null);
	assert_int_equal(sum[0].contains_nan, 0);
	assert_true(sum[0].has_lower && sum[0].has_upper);
	assert_int_equal(sum[0].lower_len, 4);
	assert_memory_equal(sum[0].lower, "\x22\x4c\x00\x00", 4);
	assert_memory_equal(sum[0].upper, "\x24\x4c\x00\x00", 4);
	/* host_bucket: one null, bounds from the other file. */
	assert_true(sum[1].contains_null);
	assert_memory_equal(sum[1].lower, "\x07\x00\x00\x00", 4);
	assert_memory_equal(sum[1].upper, "\x07\x00\x00\x00", 4);
	/* host: byte order, "db" < "web-1". */
	assert_int_equal(sum[2].lower_len, 2);
	assert_memory_equal(sum[2].lower, "db", 2);
	assert_int_equal(sum[2].upper_len, 5);
	assert_memory_equal(sum[2].upper, "web-1", 5);
	/* offset: -5..12345 as 8-byte LE. */
	assert_int_equal(sum[3].lower_len, 8);
	assert_memory_equal(sum[3].lower, "\xfb\xff\xff\xff\xff\xff\xff\xff", 8);
	assert_memory_equal(sum[3].upper, "\x39\x30\0\0\0\0\0\0", 8);
	/* ts: the spec's example value. */
	assert_true(sum[4].contains_null);
	assert_memory_equal(sum[4].lower, "\x40\xef\xd4\x4c\xbc\xfb\x05\x00", 8);
	/* All null: no bounds. */
	assert_int_equal(floe_ice_manifest_summarize(PARTS, NPARTS, &FILES[1], 1, sum, scratch), 0);
	assert_true(sum[1].contains_null);
	assert_false(sum[1].has_lower || sum[1].has_upper);
	static const struct floe_ice_manifest_part bad = {1, "x", "float"};
	assert_int_equal(floe_ice_manifest_summarize(&bad, 1, FILES, 2, sum, scratch), FLOE_EINVAL);
}

static void list_entries(struct floe_ice_manifest_entry e[3], struct floe_ice_field_summary sum[NPARTS],
			 uint8_t *scratch, struct floe_ice_field_summary *psum)
{
	assert_int_equal(floe_ice_manifest_summarize(PARTS, NPARTS, FILES, 2, sum, scratch), 0);
	memset(e, 0, 3 * sizeof(*e));
	e[0] = (struct floe_ice_manifest_entry){
		.path = "s3://b/t/metadata/new-m0.avro", .length = 7349, .spec_id = 1, .content = 0,
		.sequence_number = 5, .min_sequence_number = 5, .added_snapshot_id = 77,
		.added_files = 2, .added_rows = 13, .partitions = sum, .npartitions = NPARTS,
		.has_partitions = true,
	};
	psum[0] = (struct floe_ice_field_summary){.contains_null = true, .contains_nan = -1};
	psum[1] = (struct floe_ice_field_summary){.contains_nan = 1, .has_lower = true, .lower = (const uint8_t *)"",
						 .lower_len = 0, .has_upper = true, .upper = (const uint8_t *)"zz", .upper_len = 2};
	e[1] = (struct floe_ice_manifest_entry){
		.path = "s3://b/t/metadata/old-m0.avro", .length = 1234, .spec_id = 0, .content = 1,
		.sequence_number = 3, .min_sequence_number = 2, .added_snapshot_id = 66,
		.added_files = 1, .existing_files = 4, .deleted_files = 2, .added_rows = 100,
		.existing_rows = 400, .deleted_rows = 200, .partitions = psum, .npartitions = 2,
		.has_partitions = true, .key_metadata = (const uint8_t *)"\x00key", .key_metadata_len = 4,
		.has_key_metadata = true,
	};
	e[2] = (struct floe_ice_manifest_entry){
		.path = "s3://b/t/metadata/unpart-m0.avro", .length = 99, .sequence_number = 1,
		.min_sequence_number = 1, .added_snapshot_id = INT64_MAX, .has_partitions = true,
	};
}

static void expect_entry(const struct floe_ice_manifest_entry *g, const struct floe_ice_manifest_entry *w)
{
	assert_string_equal(g->path, w->path);
	assert_true(g->length == w->length);
	assert_int_equal(g->spec_id, w->spec_id);
	assert_int_equal(g->content, w->content);
	assert_true(g->sequence_number == w->sequence_number);
	assert_true(g->min_sequence_number == w->min_sequence_number);
	assert_true(g->added_snapshot_id == w->added_snapshot_id);
	assert_int_equal(g->added_files, w->added_files);
	assert_int_equal(g->existing_files, w->existing_files);
	assert_int_equal(g->deleted_files, w->deleted_files);
	assert_true(g->added_rows == w->added_rows);
	assert_true(g->existing_rows == w->existing_rows);
	assert_true(g->deleted_rows == w->deleted_rows);
	assert_int_equal(g->has_partitions, w->has_partitions);
	assert_int_equal(g->npartitions, w->npartitions);
	for (size_t i = 0; i < w->npartitions; i++) {
		const struct floe_ice_field_summary *a = &g->partitions[i], *b = &w->partitions[i];
		assert_int_equal(a->contains_null, b->contains_null);
		assert_int_equal(a->contains_nan, b->contains_nan);
		assert_int_equal(a->has_lower, b->has_lower);
		assert_int_equal(a->has_upper, b->has_upper);
		assert_int_equal(a->lower_len, b->lower_len);
		assert_int_equal(a->upper_len, b->upper_len);
		if (b->has_lower && b->lower_len)
			assert_memory_equal(a->lower, b->lower, b->lower_len);
		if (b->has_upper && b->upper_len)
			assert_memory_equal(a->upper, b->upper, b->upper_len);
	}
	assert_int_equal(g->has_key_metadata, w->has_key_metadata);
	if (w->has_key_metadata) {
		assert_int_equal(g->key_metadata_len, w->key_metadata_len);
		assert_memory_equal(g->key_metadata, w->key_metadata, w->key_metadata_len);
	}
}

static void test_manifest_list(void **state)
{
	(void)state;
	struct floe_ice_manifest_entry e[3];
	struct floe_ice_field_summary sum[NPARTS], psum[2];
	uint8_t scratch[16 * NPARTS];
	list_entries(e, sum, scratch, psum);
	struct floe_buf out;
	floe_buf_init(&out, NULL, 1 << 20);
	assert_int_equal(floe_ice_manifest_list_write(NULL, 77, 66, 5, e, 3, SYNC, &out), 0);
	dump("snap-list.avro", &out);

	struct floe_avro_reader *r;
	assert_int_equal(floe_avro_reader_new(NULL, out.data, out.len, NULL, &r, NULL), 0);
	expect_meta(r, "avro.schema", JAVA_LIST_SCHEMA);
	expect_meta(r, "snapshot-id", "77");
	expect_meta(r, "parent-snapshot-id", "66");
	expect_meta(r, "sequence-number", "5");
	expect_meta(r, "format-version", "2");
	const struct floe_avro_schema *s = floe_avro_reader_schema(r);
	static const int32_t ids[] = {500, 501, 502, 517, 515, 516, 503, 504, 505, 506, 512, 513, 514, 507, 519};
	assert_int_equal(floe_avro_schema_count(s), 15);
	for (size_t i = 0; i < 15; i++) {
		int32_t id;
		assert_true(floe_avro_schema_field_id(s, i, &id));
		assert_int_equal(id, ids[i]);
	}
	floe_avro_reader_free(r);

	struct floe_ice_manifest_list *l;
	assert_int_equal(floe_ice_manifest_list_read(NULL, out.data, out.len, &l, NULL), 0);
	assert_int_equal(floe_ice_manifest_list_count(l), 3);
	for (size_t i = 0; i < 3; i++)
		expect_entry(floe_ice_manifest_list_at(l, i), &e[i]);
	assert_null(floe_ice_manifest_list_at(l, 3));

	/* Carried forward verbatim: re-writing what was read gives the same bytes. */
	struct floe_ice_manifest_entry again[3];
	for (size_t i = 0; i < 3; i++)
		again[i] = *floe_ice_manifest_list_at(l, i);
	struct floe_buf out2;
	floe_buf_init(&out2, NULL, 1 << 20);
	assert_int_equal(floe_ice_manifest_list_write(NULL, 77, 66, 5, again, 3, SYNC, &out2), 0);
	assert_int_equal(out2.len, out.len);
	assert_memory_equal(out2.data, out.data, out.len);
	floe_ice_manifest_list_free(l);
	floe_buf_fini(&out2);

	/* An empty list has a header and no block. */
	floe_buf_reset(&out);
	assert_int_equal(floe_ice_manifest_list_write(NULL, 77, 66, 5, NULL, 0, SYNC, &out), 0);
	assert_int_equal(floe_ice_manifest_list_read(NULL, out.data, out.len, &l, NULL), 0);
	assert_int_equal(floe_ice_manifest_list_count(l), 0);
	floe_ice_manifest_list_free(l);

	/* No parent: "null". */
	floe_buf_reset(&out);
	assert_int_equal(floe_ice_manifest_list_write(NULL, 77, -1, 1, e, 1, SYNC, &out), 0);
	assert_int_equal(floe_avro_reader_new(NULL, out.data, out.len, NULL, &r, NULL), 0);
	expect_meta(r, "parent-snapshot-id", "null");
	floe_avro_reader_free(r);
	floe_buf_fini(&out);
}

/* A v1 list as older Java/Spark wrote it (deflate, *_data_files_count names, optional
 * counts, no content or sequence numbers). */
static const char V1_SCHEMA[] =
	"{\"type\":\"record\",\"name\":\"manifest_file\",\"fields\":["
	"{\"name\":\"manifest_path\",\"type\":\"string\",\"field-id\":500},"
	"{\"name\":\"manifest_length\",\"type\":\"long\",\"field-id\":501},"
	"{\"name\":\"partition_spec_id\",\"type\":\"int\",\"field-id\":502},"
	"{\"name\":\"added_snapshot_id\",\"type\":[\"null\",\"long\"],\"default\":null,\"field-id\":503},"
	"{\"name\":\"added_data_files_count\",\"type\":[\"null\",\"int\"],\"default\":null,\"field-id\":504},"
	"{\"name\":\"existing_data_files_count\",\"type\":[\"null\",\"int\"],\"default\":null,\"field-id\":505},"
	"{\"name\":\"deleted_data_files_count\",\"type\":[\"null\",\"int\"],\"default\":null,\"field-id\":506},"
	"{\"name\":\"partitions\",\"type\":[\"null\",{\"type\":\"array\",\"items\":{\"type\":\"record\",\"name\":\"r508\","
	"\"fields\":[{\"name\":\"contains_null\",\"type\":\"boolean\",\"field-id\":509},"
	"{\"name\":\"lower_bound\",\"type\":[\"null\",\"bytes\"],\"default\":null,\"field-id\":510},"
	"{\"name\":\"upper_bound\",\"type\":[\"null\",\"bytes\"],\"default\":null,\"field-id\":511}]},\"element-id\":508}],"
	"\"default\":null,\"field-id\":507},"
	"{\"name\":\"added_rows_count\",\"type\":[\"null\",\"long\"],\"default\":null,\"field-id\":512},"
	"{\"name\":\"existing_rows_count\",\"type\":[\"null\",\"long\"],\"default\":null,\"field-id\":513},"
	"{\"name\":\"deleted_rows_count\",\"type\":[\"null\",\"long\"],\"default\":null,\"field-id\":514}]}";

static void write_v1(struct floe_buf *out)
{
	struct floe_avro_writer_opts o = {
		.schema_json = V1_SCHEMA, .schema_len = strlen(V1_SCHEMA),
		.codec = FLOE_AVRO_CODEC_DEFLATE, .sync = SYNC,
	};
	struct floe_avro_writer *w;
	assert_int_equal(floe_avro_writer_new(NULL, &o, out, &w), 0);
	for (int k = 0; k < 2; k++) {
		struct floe_buf *b = floe_avro_writer_record(w);
		floe_avro_put_str(b, k ? "file:/t/m1.avro" : "file:/t/m0.avro");
		floe_avro_put_long(b, 1000 + k);
		floe_avro_put_int(b, 0);
		floe_avro_put_union(b, 1), floe_avro_put_long(b, 555);
		floe_avro_put_union(b, 1), floe_avro_put_int(b, 3);
		floe_avro_put_union(b, k ? 0 : 1); /* existing: null in the second */
		if (!k)
			floe_avro_put_int(b, 4);
		floe_avro_put_union(b, 1), floe_avro_put_int(b, 0);
		floe_avro_put_union(b, 1);
		floe_avro_put_long(b, 1);
		floe_avro_put_bool(b, false);
		floe_avro_put_union(b, 1), floe_avro_put_bytes(b, "\x01\0\0\0", 4);
		floe_avro_put_union(b, 0);
		floe_avro_put_long(b, 0);
		floe_avro_put_union(b, 1), floe_avro_put_long(b, 30);
		floe_avro_put_union(b, 1), floe_avro_put_long(b, 40);
		floe_avro_put_union(b, 0);
		assert_int_equal(floe_avro_writer_end_record(w), 0);
	}
	assert_int_equal(floe_avro_writer_flush(w), 0);
	floe_avro_writer_free(w);
}

static void test_manifest_list_v1(void **state)
{
	(void)state;
	struct floe_buf out;
	floe_buf_init(&out, NULL, 1 << 20);
	write_v1(&out);
	dump("snap-v1.avro", &out);
	struct floe_ice_manifest_list *l;
	assert_int_equal(floe_ice_manifest_list_read(NULL, out.data, out.len, &l, NULL), 0);
	assert_int_equal(floe_ice_manifest_list_count(l), 2);
	const struct floe_ice_manifest_entry *e = floe_ice_manifest_list_at(l, 1);
	assert_string_equal(e->path, "file:/t/m1.avro");
	assert_int_equal(e->length, 1001);
	assert_int_equal(e->content, 0);
	assert_int_equal(e->sequence_number, 0);
	assert_int_equal(e->min_sequence_number, 0);
	assert_int_equal(e->added_snapshot_id, 555);
	assert_int_equal(e->added_files, 3);
	assert_int_equal(e->existing_files, 0);
	assert_int_equal(floe_ice_manifest_list_at(l, 0)->existing_files, 4);
	assert_int_equal(e->added_rows, 30);
	assert_int_equal(e->existing_rows, 40);
	assert_int_equal(e->deleted_rows, 0);
	assert_true(e->has_partitions);
	assert_int_equal(e->npartitions, 1);
	assert_int_equal(e->partitions[0].contains_nan, -1);
	assert_true(e->partitions[0].has_lower);
	assert_false(e->partitions[0].has_upper);
	assert_false(e->has_key_metadata);
	floe_ice_manifest_list_free(l);
	floe_buf_fini(&out);
}

static void test_hostile(void **state)
{
	(void)state;
	struct floe_ice_manifest_entry e[3];
	struct floe_ice_field_summary sum[NPARTS], psum[2];
	uint8_t scratch[16 * NPARTS];
	list_entries(e, sum, scratch, psum);
	struct floe_buf out;
	floe_buf_init(&out, NULL, 1 << 20);
	assert_int_equal(floe_ice_manifest_list_write(NULL, 77, 66, 5, e, 3, SYNC, &out), 0);
	struct floe_ice_manifest_list *l;
	for (size_t n = 0; n < out.len; n++) {
		uint8_t *copy = malloc(n ? n : 1);
		memcpy(copy, out.data, n);
		int rc = floe_ice_manifest_list_read(NULL, copy, n, &l, NULL);
		if (rc == 0) {
			assert_true(floe_ice_manifest_list_count(l) < 3);
			floe_ice_manifest_list_free(l);
		}
		free(copy);
	}
	/* A manifest is not a manifest list (no manifest_path), and vice versa. */
	struct floe_ice_manifest_info info = info_for(NPARTS);
	struct floe_buf m;
	floe_buf_init(&m, NULL, 1 << 20);
	assert_int_equal(floe_ice_manifest_write(NULL, &info, FILES, 2, SYNC, &m), 0);
	struct floe_err err;
	assert_int_equal(floe_ice_manifest_list_read(NULL, m.data, m.len, &l, &err), FLOE_EFORMAT);
	assert_string_equal(err.msg, "entry 0: a field is missing or of the wrong type");
	struct seen s = {0};
	assert_int_equal(floe_ice_manifest_read(NULL, out.data, out.len, on_entry, &s, &err),
			 FLOE_EFORMAT);
	assert_string_equal(err.msg, "entry 0: status, file_path, record_count or file_size_in_bytes "
				     "is missing or invalid");
	/* A truncated list: the Avro reader's detail, with the offset. */
	assert_int_equal(floe_ice_manifest_list_read(NULL, out.data, out.len - 1, &l, &err),
			 FLOE_EPARSE);
	assert_true(err.offset < out.len);
	assert_non_null(strstr(err.msg, "Avro block at byte "));
	/* Bad arguments. */
	struct floe_ice_manifest_part bad = {1000, "x", "float"};
	info.parts = &bad;
	info.nparts = 1;
	size_t before = m.len;
	assert_int_equal(floe_ice_manifest_write(NULL, &info, FILES, 2, SYNC, &m), FLOE_EINVAL);
	assert_int_equal(m.len, before);
	floe_buf_fini(&m);
	floe_buf_fini(&out);
}

static void test_faults(void **state)
{
	(void)state;
	struct floe_ice_manifest_entry e[3];
	struct floe_ice_field_summary sum[NPARTS], psum[2];
	uint8_t scratch[16 * NPARTS];
	list_entries(e, sum, scratch, psum);
	struct floe_ice_manifest_info info = info_for(NPARTS);
	struct floe_buf ref_m, ref_l;
	floe_buf_init(&ref_m, NULL, 1 << 20);
	floe_buf_init(&ref_l, NULL, 1 << 20);
	assert_int_equal(floe_ice_manifest_write(NULL, &info, FILES, 2, SYNC, &ref_m), 0);
	assert_int_equal(floe_ice_manifest_list_write(NULL, 77, 66, 5, e, 3, SYNC, &ref_l), 0);
	int done = 0;
	for (long k = 0; k < 10000 && done != 15; k++) {
		struct floe_alloc a;
		floe_alloc_init(&a, 0);
		struct floe_buf out;
		floe_buf_init(&out, &a, 1 << 20);
		a.fail_after = k;
		int rc = floe_ice_manifest_write(&a, &info, FILES, 2, SYNC, &out);
		if (rc == 0) {
			done |= 1;
			assert_int_equal(out.len, ref_m.len);
			assert_memory_equal(out.data, ref_m.data, out.len);
		} else {
			assert_int_equal(rc, FLOE_ENOMEM);
			assert_int_equal(out.len, 0);
		}
		floe_buf_fini(&out);
		a.fail_after = k;
		rc = floe_ice_manifest_list_write(&a, 77, 66, 5, e, 3, SYNC, &out);
		if (rc == 0) {
			done |= 2;
			assert_int_equal(out.len, ref_l.len);
		} else {
			assert_int_equal(rc, FLOE_ENOMEM);
		}
		floe_buf_fini(&out);
		a.fail_after = k;
		struct floe_ice_manifest_list *l;
		rc = floe_ice_manifest_list_read(&a, ref_l.data, ref_l.len, &l, NULL);
		if (rc == 0) {
			done |= 4;
			assert_int_equal(floe_ice_manifest_list_count(l), 3);
			floe_ice_manifest_list_free(l);
		} else {
			assert_int_equal(rc, FLOE_ENOMEM);
		}
		a.fail_after = k;
		struct seen s = {0};
		rc = floe_ice_manifest_read(&a, ref_m.data, ref_m.len, on_entry, &s, NULL);
		if (rc == 0)
			done |= 8;
		else
			assert_int_equal(rc, FLOE_ENOMEM);
		assert_int_equal(a.used, 0);
	}
	assert_int_equal(done, 15);
	floe_buf_fini(&ref_m);
	floe_buf_fini(&ref_l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_manifest_schema_unpartitioned),
		cmocka_unit_test(test_manifest),
		cmocka_unit_test(test_manifest_read),
		cmocka_unit_test(test_summarize),
		cmocka_unit_test(test_manifest_list),
		cmocka_unit_test(test_manifest_list_v1),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_faults),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

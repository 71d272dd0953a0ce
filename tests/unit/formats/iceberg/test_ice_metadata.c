/* Tests for Iceberg table metadata: create/write/parse against hand-written expected JSON,
 * snapshots appended field by field, Java-style v2 and v1 documents (unknown fields kept),
 * refused versions and commits, and allocation faults. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"
#include "formats/iceberg/metadata.h"
#include "formats/json/json.h"

#define UUID "9c12d441-03fe-4693-9a96-a0705ddf69c1"
#define LOC "file:///wh/logs"

static const struct floe_ice_field FIELDS[] = {
    {.id = 1, .name = "ts", .type = "timestamptz", .required = true},
    {.id = 2, .name = "msg", .type = "string"},
    {.id = 3,
     .name = "attrs",
     .type = "map",
     .key_id = 4,
     .value_id = 5,
     .key_type = "string",
     .value_type = "string"},
};
static const struct floe_ice_partition_field PFIELDS[] = {
    {.source_id = 1, .field_id = 1000, .name = "ts_day", .transform = "day"},
};
static const struct floe_ice_kv PROPS[] = {{"write.format.default", "parquet"}};

#define HEAD_CREATED                                                                               \
	"{\"format-version\":2,\"table-uuid\":\"" UUID "\",\"location\":\"" LOC "\","              \
	"\"last-sequence-number\":0,\"last-updated-ms\":1000,\"last-column-id\":5,"                \
	"\"current-schema-id\":0,"
#define SCHEMAS                                                                                    \
	"\"schemas\":[{\"type\":\"struct\",\"schema-id\":0,\"fields\":["                           \
	"{\"id\":1,\"name\":\"ts\",\"required\":true,\"type\":\"timestamptz\"},"                   \
	"{\"id\":2,\"name\":\"msg\",\"required\":false,\"type\":\"string\"},"                      \
	"{\"id\":3,\"name\":\"attrs\",\"required\":false,\"type\":{\"type\":\"map\",\"key-id\":4," \
	"\"key\":\"string\",\"value-id\":5,\"value\":\"string\",\"value-required\":false}}]}],"    \
	"\"default-spec-id\":0,\"partition-specs\":[{\"spec-id\":0,\"fields\":[{\"name\":\"ts_"    \
	"day\","                                                                                   \
	"\"transform\":\"day\",\"source-id\":1,\"field-id\":1000}]}],\"last-partition-id\":1000,"  \
	"\"default-sort-order-id\":0,\"sort-orders\":[{\"order-id\":0,\"fields\":[]}],"            \
	"\"properties\":{\"write.format.default\":\"parquet\"},"

static const char CREATED[] =
    HEAD_CREATED SCHEMAS "\"current-snapshot-id\":-1,\"refs\":{},\"snapshots\":[],\"snapshot-log\":"
			 "[],\"metadata-log\":[]}";

static const char TWO_SNAPSHOTS[] =
    "{\"format-version\":2,\"table-uuid\":\"" UUID "\",\"location\":\"" LOC "\","
    "\"last-sequence-number\":2,\"last-updated-ms\":3001,\"last-column-id\":5,"
    "\"current-schema-id\":0," SCHEMAS "\"current-snapshot-id\":9223372036854775807,"
    "\"refs\":{\"main\":{\"snapshot-id\":9223372036854775807,\"type\":\"branch\"}},"
    "\"snapshots\":[{\"snapshot-id\":3051729675574597004,\"sequence-number\":1,\"timestamp-ms\":"
    "2000,"
    "\"summary\":{\"operation\":\"append\",\"added-data-files\":\"1\",\"floe.commit-seq\":\"1\"},"
    "\"manifest-list\":\"" LOC "/metadata/snap-1.avro\",\"schema-id\":0},"
    "{\"snapshot-id\":9223372036854775807,\"parent-snapshot-id\":3051729675574597004,"
    "\"sequence-number\":2,\"timestamp-ms\":3000,"
    "\"summary\":{\"operation\":\"append\",\"added-data-files\":\"2\"},"
    "\"manifest-list\":\"" LOC "/metadata/snap-2.avro\",\"schema-id\":0}],"
    "\"snapshot-log\":[{\"timestamp-ms\":2000,\"snapshot-id\":3051729675574597004},"
    "{\"timestamp-ms\":3000,\"snapshot-id\":9223372036854775807}],"
    "\"metadata-log\":[{\"timestamp-ms\":1000,\"metadata-file\":\"" LOC
    "/metadata/v1.metadata.json\"},"
    "{\"timestamp-ms\":2001,\"metadata-file\":\"" LOC "/metadata/v2.metadata.json\"}]}";

/* As Java's TableMetadataParser writes a v2 table (pretty-printed), with statistics, a tag
 * and a property floe does not know. */
static const char JAVA_V2[] =
    "{\n"
    "  \"format-version\" : 2,\n"
    "  \"table-uuid\" : \"" UUID "\",\n"
    "  \"location\" : \"s3://bucket/wh/db/logs\",\n"
    "  \"last-sequence-number\" : 1,\n"
    "  \"last-updated-ms\" : 1700000000500,\n"
    "  \"last-column-id\" : 2,\n"
    "  \"current-schema-id\" : 0,\n"
    "  \"schemas\" : [ {\n"
    "    \"type\" : \"struct\",\n"
    "    \"schema-id\" : 0,\n"
    "    \"identifier-field-ids\" : [ 1 ],\n"
    "    \"fields\" : [ {\n"
    "      \"id\" : 1,\n      \"name\" : \"ts\",\n      \"required\" : true,\n"
    "      \"type\" : \"timestamptz\"\n    }, {\n"
    "      \"id\" : 2,\n      \"name\" : \"msg\",\n      \"required\" : false,\n"
    "      \"type\" : \"string\",\n      \"doc\" : \"the line\"\n    } ]\n  } ],\n"
    "  \"default-spec-id\" : 0,\n"
    "  \"partition-specs\" : [ {\n    \"spec-id\" : 0,\n    \"fields\" : [ ]\n  } ],\n"
    "  \"last-partition-id\" : 999,\n"
    "  \"default-sort-order-id\" : 0,\n"
    "  \"sort-orders\" : [ {\n    \"order-id\" : 0,\n    \"fields\" : [ ]\n  } ],\n"
    "  \"properties\" : {\n    \"owner\" : \"spark\",\n"
    "    \"write.parquet.compression-codec\" : \"zstd\"\n  },\n"
    "  \"current-snapshot-id\" : 8333017788700497002,\n"
    "  \"refs\" : {\n    \"main\" : {\n      \"snapshot-id\" : 8333017788700497002,\n"
    "      \"type\" : \"branch\",\n      \"max-ref-age-ms\" : 86400000\n    },\n"
    "    \"v1.0\" : {\n      \"snapshot-id\" : 8333017788700497002,\n      \"type\" : \"tag\"\n    "
    "}\n"
    "  },\n"
    "  \"snapshots\" : [ {\n"
    "    \"sequence-number\" : 1,\n"
    "    \"snapshot-id\" : 8333017788700497002,\n"
    "    \"timestamp-ms\" : 1700000000000,\n"
    "    \"summary\" : {\n      \"operation\" : \"append\",\n      \"spark.app.id\" : "
    "\"local-1\",\n"
    "      \"added-data-files\" : \"1\",\n      \"added-records\" : \"3\",\n"
    "      \"total-records\" : \"3\"\n    },\n"
    "    \"manifest-list\" : "
    "\"s3://bucket/wh/db/logs/metadata/snap-8333017788700497002-1-a.avro\",\n"
    "    \"schema-id\" : 0\n  } ],\n"
    "  \"statistics\" : [ {\n    \"snapshot-id\" : 8333017788700497002,\n"
    "    \"statistics-path\" : \"s3://bucket/wh/db/logs/metadata/stats.puffin\",\n"
    "    \"file-size-in-bytes\" : 413,\n    \"file-footer-size-in-bytes\" : 42,\n"
    "    \"blob-metadata\" : [ {\n      \"type\" : \"apache-datasketches-theta-v1\",\n"
    "      \"snapshot-id\" : 8333017788700497002,\n      \"sequence-number\" : 1,\n"
    "      \"fields\" : [ 1 ],\n      \"properties\" : { \"ndv\" : \"3\" }\n    } ]\n  } ],\n"
    "  \"partition-statistics\" : [ {\n    \"snapshot-id\" : 8333017788700497002,\n"
    "    \"statistics-path\" : \"s3://bucket/wh/db/logs/metadata/part.parquet\",\n"
    "    \"file-size-in-bytes\" : 1.5e3\n  } ],\n"
    "  \"snapshot-log\" : [ {\n    \"timestamp-ms\" : 1700000000000,\n"
    "    \"snapshot-id\" : 8333017788700497002\n  } ],\n"
    "  \"metadata-log\" : [ {\n    \"timestamp-ms\" : 1699999999000,\n"
    "    \"metadata-file\" : \"s3://bucket/wh/db/logs/metadata/00000-a.metadata.json\"\n  } ]\n"
    "}";

/* A v1 table as Spark 3.3 wrote it: "schema" and "partition-spec" instead of lists, no
 * sequence numbers, a snapshot with inline manifests. */
static const char JAVA_V1[] =
    "{\"format-version\":1,\"table-uuid\":\"" UUID "\",\"location\":\"hdfs://nn/wh/t\","
    "\"last-updated-ms\":1600000000000,\"last-column-id\":2,"
    "\"schema\":{\"type\":\"struct\",\"fields\":[{\"id\":1,\"name\":\"id\",\"required\":true,"
    "\"type\":\"long\"},"
    "{\"id\":2,\"name\":\"data\",\"required\":false,\"type\":\"string\"}]},"
    "\"partition-spec\":[{\"name\":\"data\",\"transform\":\"identity\",\"source-id\":2,\"field-"
    "id\":1000}],"
    "\"properties\":{},\"current-snapshot-id\":42,"
    "\"snapshots\":[{\"snapshot-id\":42,\"timestamp-ms\":1600000000000,"
    "\"manifests\":[\"hdfs://nn/wh/t/metadata/m0.avro\"]}]}";

#define HAS(b, s) (memmem((b).data, (b).len, (s), strlen(s)) != NULL)

static struct floe_ice_meta *create_small(struct floe_alloc *a)
{
	struct floe_ice_meta *m = NULL;
	assert_int_equal(
	    floe_ice_meta_create(a, UUID, LOC, FIELDS, 3, PFIELDS, 1, PROPS, 1, 1000, &m), 0);
	return m;
}

static void assert_meta_writes(const struct floe_ice_meta *m, const char *want)
{
	struct floe_buf b;
	floe_buf_init(&b, NULL, 1 << 20);
	assert_int_equal(floe_ice_meta_write(m, &b), 0);
	if (b.len != strlen(want) || memcmp(b.data, want, b.len) != 0)
		fail_msg("wrote\n%.*s\nwant\n%s", (int)b.len, (const char *)b.data, want);
	floe_buf_fini(&b);
}

static struct floe_ice_meta *reparse(struct floe_alloc *a, const struct floe_ice_meta *m)
{
	struct floe_buf b;
	struct floe_ice_meta *r = NULL;
	floe_buf_init(&b, NULL, 1 << 20);
	assert_int_equal(floe_ice_meta_write(m, &b), 0);
	assert_int_equal(floe_ice_meta_parse(a, (const char *)b.data, b.len, &r, NULL), 0);
	floe_buf_fini(&b);
	return r;
}

static const struct floe_ice_kv SUM1[] = {{"added-data-files", "1"}, {"floe.commit-seq", "1"}};
static const struct floe_ice_kv SUM2[] = {{"added-data-files", "2"}};

static const struct floe_ice_snapshot SNAP1 = {.snapshot_id = INT64_C(3051729675574597004),
					       .parent_id = -1,
					       .sequence_number = 1,
					       .timestamp_ms = 2000,
					       .manifest_list = LOC "/metadata/snap-1.avro",
					       .operation = "append",
					       .summary = SUM1,
					       .summary_count = 2,
					       .schema_id = 0};
static const struct floe_ice_snapshot SNAP2 = {.snapshot_id = INT64_MAX,
					       .parent_id = INT64_C(3051729675574597004),
					       .sequence_number = 2,
					       .timestamp_ms = 3000,
					       .manifest_list = LOC "/metadata/snap-2.avro",
					       .operation = "append",
					       .summary = SUM2,
					       .summary_count = 1,
					       .schema_id = 0};

static void test_create(void **state)
{
	(void)state;
	struct floe_alloc a;
	floe_alloc_init(&a, 0);
	struct floe_ice_meta *m = create_small(&a);
	assert_meta_writes(m, CREATED);

	struct floe_ice_meta *r = reparse(&a, m);
	assert_int_equal(floe_ice_meta_format_version(r), 2);
	assert_string_equal(floe_ice_meta_uuid(r), UUID);
	assert_string_equal(floe_ice_meta_location(r), LOC);
	assert_int_equal(floe_ice_meta_last_sequence(r), 0);
	assert_int_equal(floe_ice_meta_last_updated_ms(r), 1000);
	assert_int_equal(floe_ice_meta_current_snapshot_id(r), -1);
	assert_int_equal(floe_ice_meta_current_schema_id(r), 0);
	assert_int_equal(floe_ice_meta_default_spec_id(r), 0);
	assert_int_equal(floe_ice_meta_snapshot_count(r), 0);
	assert_int_equal(floe_ice_meta_find_snapshot(r, 1), -1);
	assert_int_equal(floe_ice_meta_snapshot_at(r, 0, NULL, NULL, NULL, NULL, NULL),
			 FLOE_EINVAL);
	assert_null(floe_ice_meta_snapshot_summary(r, 0, "operation"));
	assert_int_equal(floe_ice_meta_snapshot_summary_count(r, 0), 0);

	int64_t sid;
	assert_int_equal(floe_json_get_int(floe_ice_meta_current_schema(r), "schema-id", &sid), 0);
	assert_int_equal(sid, 0);
	const struct floe_json *pf = floe_ice_meta_default_spec_fields(r);
	assert_int_equal(floe_json_len(pf), 1);
	const char *s;
	assert_int_equal(floe_json_get_str(floe_json_at(pf, 0), "transform", &s), 0);
	assert_string_equal(s, "day");

	const char *type, *name;
	bool req;
	assert_true(floe_ice_meta_schema_field(r, 1, &type, &req, &name));
	assert_string_equal(type, "timestamptz");
	assert_string_equal(name, "ts");
	assert_true(req);
	assert_true(floe_ice_meta_schema_field(r, 3, &type, &req, &name));
	assert_string_equal(type, "map");
	assert_false(req);
	assert_false(floe_ice_meta_schema_field(r, 4, &type, &req, &name));
	assert_false(floe_ice_meta_schema_field(r, 99, NULL, NULL, NULL));
	assert_meta_writes(r, CREATED);
	floe_ice_meta_free(r);
	floe_ice_meta_free(m);
	floe_ice_meta_free(NULL);
	assert_int_equal(a.used, 0);
}

static void test_create_unpartitioned_and_invalid(void **state)
{
	(void)state;
	struct floe_ice_meta *m = NULL;
	assert_int_equal(floe_ice_meta_create(NULL, UUID, LOC, FIELDS, 2, NULL, 0, NULL, 0, 5, &m),
			 0);
	struct floe_buf b;
	floe_buf_init(&b, NULL, 1 << 16);
	assert_int_equal(floe_ice_meta_write(m, &b), 0);
	assert_true(HAS(b, "\"last-column-id\":2,"));
	assert_true(HAS(
	    b, "\"partition-specs\":[{\"spec-id\":0,\"fields\":[]}],\"last-partition-id\":999,"));
	assert_true(HAS(b, "\"properties\":{},"));
	floe_buf_fini(&b);
	floe_ice_meta_free(m);

	struct floe_ice_field dup[] = {FIELDS[0], FIELDS[2]};
	dup[1].value_id = 1; /* collides with field 1 */
	assert_int_equal(floe_ice_meta_create(NULL, UUID, LOC, dup, 2, NULL, 0, NULL, 0, 5, &m),
			 FLOE_EINVAL);
	assert_null(m);
	struct floe_ice_field nokey = FIELDS[2];
	nokey.key_type = NULL;
	assert_int_equal(floe_ice_meta_create(NULL, UUID, LOC, &nokey, 1, NULL, 0, NULL, 0, 5, &m),
			 FLOE_EINVAL);
	struct floe_ice_partition_field badsrc = PFIELDS[0];
	badsrc.source_id = 7;
	assert_int_equal(
	    floe_ice_meta_create(NULL, UUID, LOC, FIELDS, 3, &badsrc, 1, NULL, 0, 5, &m),
	    FLOE_EINVAL);
	badsrc = PFIELDS[0];
	badsrc.field_id = 999;
	assert_int_equal(
	    floe_ice_meta_create(NULL, UUID, LOC, FIELDS, 3, &badsrc, 1, NULL, 0, 5, &m),
	    FLOE_EINVAL);
	assert_int_equal(floe_ice_meta_create(NULL, NULL, LOC, FIELDS, 3, NULL, 0, NULL, 0, 5, &m),
			 FLOE_EINVAL);
}

static void test_two_snapshots(void **state)
{
	(void)state;
	struct floe_alloc a;
	floe_alloc_init(&a, 0);
	struct floe_ice_meta *m = create_small(&a);
	assert_int_equal(
	    floe_ice_meta_add_snapshot(m, &SNAP1, LOC "/metadata/v1.metadata.json", 2001, 100), 0);
	assert_int_equal(floe_ice_meta_current_snapshot_id(m), SNAP1.snapshot_id);
	assert_int_equal(
	    floe_ice_meta_add_snapshot(m, &SNAP2, LOC "/metadata/v2.metadata.json", 3001, 100), 0);
	assert_meta_writes(m, TWO_SNAPSHOTS);

	struct floe_ice_meta *r = reparse(&a, m);
	assert_true(floe_ice_meta_current_snapshot_id(r) == INT64_MAX);
	assert_int_equal(floe_ice_meta_last_sequence(r), 2);
	assert_int_equal(floe_ice_meta_last_updated_ms(r), 3001);
	assert_int_equal(floe_ice_meta_snapshot_count(r), 2);
	int64_t id = 0, parent = 0, seq = 0, ts = 0;
	const char *ml = NULL;
	assert_int_equal(floe_ice_meta_snapshot_at(r, 0, &id, &parent, &seq, &ts, &ml), 0);
	assert_true(id == INT64_C(3051729675574597004));
	assert_int_equal(parent, -1);
	assert_int_equal(seq, 1);
	assert_int_equal(ts, 2000);
	assert_string_equal(ml, LOC "/metadata/snap-1.avro");
	assert_int_equal(floe_ice_meta_snapshot_at(r, 1, &id, &parent, &seq, &ts, &ml), 0);
	assert_true(id == INT64_MAX);
	assert_true(parent == INT64_C(3051729675574597004));
	assert_int_equal(floe_ice_meta_find_snapshot(r, INT64_MAX), 1);
	/* The hint is taken when right, and any hint (wrong, out of range, none) still finds. */
	assert_int_equal(floe_ice_meta_find_snapshot_near(r, INT64_MAX, 1), 1);
	assert_int_equal(floe_ice_meta_find_snapshot_near(r, INT64_MAX, 0), 1);
	assert_int_equal(floe_ice_meta_find_snapshot_near(r, INT64_MAX, 7), 1);
	assert_int_equal(floe_ice_meta_find_snapshot_near(r, INT64_C(3051729675574597004), -1), 0);
	assert_int_equal(floe_ice_meta_find_snapshot_near(r, 42, 0), -1);
	assert_string_equal(floe_ice_meta_snapshot_summary(r, 0, "floe.commit-seq"), "1");
	assert_string_equal(floe_ice_meta_snapshot_summary(r, 1, "operation"), "append");
	assert_null(floe_ice_meta_snapshot_summary(r, 1, "floe.commit-seq"));
	assert_int_equal(floe_ice_meta_snapshot_summary_count(r, 0), 3);
	const char *k, *v;
	assert_int_equal(floe_ice_meta_snapshot_summary_at(r, 0, 2, &k, &v), 0);
	assert_string_equal(k, "floe.commit-seq");
	assert_string_equal(v, "1");
	assert_int_equal(floe_ice_meta_snapshot_summary_at(r, 0, 3, &k, &v), FLOE_EINVAL);
	floe_ice_meta_free(r);
	floe_ice_meta_free(m);
	assert_int_equal(a.used, 0);
}

static void test_metadata_log_trim(void **state)
{
	(void)state;
	struct floe_ice_meta *m = create_small(NULL);
	assert_int_equal(floe_ice_meta_add_snapshot(m, &SNAP1, "v1.json", 2001, 2), 0);
	assert_int_equal(floe_ice_meta_add_snapshot(m, &SNAP2, "v2.json", 3001, 2), 0);
	struct floe_ice_snapshot s3 = SNAP2;
	s3.snapshot_id = 5;
	s3.parent_id = INT64_MAX;
	s3.sequence_number = 3;
	s3.timestamp_ms = 4000;
	s3.summary_count = 0;
	s3.summary = NULL;
	assert_int_equal(floe_ice_meta_add_snapshot(m, &s3, "v3.json", 4001, 2), 0);
	struct floe_buf b;
	floe_buf_init(&b, NULL, 1 << 16);
	assert_int_equal(floe_ice_meta_write(m, &b), 0);
	static const char want[] =
	    "\"metadata-log\":[{\"timestamp-ms\":2001,\"metadata-file\":\"v2.json\"},"
	    "{\"timestamp-ms\":3001,\"metadata-file\":\"v3.json\"}]}";
	assert_true(b.len > strlen(want));
	assert_memory_equal(b.data + b.len - strlen(want), want, strlen(want));
	assert_true(HAS(b, "\"summary\":{\"operation\":\"append\"},"));
	floe_buf_fini(&b);

	/* No previous location: nothing appended; max_log 0 keeps one entry. */
	struct floe_ice_snapshot s4 = s3;
	s4.snapshot_id = 6;
	s4.parent_id = 5;
	s4.sequence_number = 4;
	s4.timestamp_ms = 5000;
	assert_int_equal(floe_ice_meta_add_snapshot(m, &s4, NULL, 5001, 0), 0);
	floe_buf_init(&b, NULL, 1 << 16);
	assert_int_equal(floe_ice_meta_write(m, &b), 0);
	static const char want2[] =
	    "\"metadata-log\":[{\"timestamp-ms\":3001,\"metadata-file\":\"v3.json\"}]}";
	assert_memory_equal(b.data + b.len - strlen(want2), want2, strlen(want2));
	floe_buf_fini(&b);
	floe_ice_meta_free(m);
}

static void write_to(const struct floe_ice_meta *m, struct floe_buf *b)
{
	floe_buf_init(b, NULL, 1 << 20);
	assert_int_equal(floe_ice_meta_write(m, b), 0);
}

static void test_bad_add_snapshot(void **state)
{
	(void)state;
	struct floe_ice_meta *m = create_small(NULL);
	assert_int_equal(floe_ice_meta_add_snapshot(m, &SNAP1, "v1.json", 2001, 10), 0);
	struct floe_buf before, after;
	write_to(m, &before);

	struct floe_ice_snapshot s = SNAP2;
	s.sequence_number = 1; /* not last + 1 */
	assert_int_equal(floe_ice_meta_add_snapshot(m, &s, "v2.json", 3001, 10), FLOE_EINVAL);
	s = SNAP2;
	s.sequence_number = 3;
	assert_int_equal(floe_ice_meta_add_snapshot(m, &s, "v2.json", 3001, 10), FLOE_EINVAL);
	s = SNAP2;
	s.parent_id = -1; /* not the current snapshot */
	assert_int_equal(floe_ice_meta_add_snapshot(m, &s, "v2.json", 3001, 10), FLOE_EINVAL);
	s = SNAP2;
	s.parent_id = 77;
	assert_int_equal(floe_ice_meta_add_snapshot(m, &s, "v2.json", 3001, 10), FLOE_EINVAL);
	s = SNAP2;
	s.timestamp_ms = 2000; /* not after the parent */
	assert_int_equal(floe_ice_meta_add_snapshot(m, &s, "v2.json", 3001, 10), FLOE_EINVAL);
	s = SNAP2;
	s.snapshot_id = SNAP1.snapshot_id; /* already used */
	assert_int_equal(floe_ice_meta_add_snapshot(m, &s, "v2.json", 3001, 10), FLOE_EINVAL);
	s = SNAP2;
	s.manifest_list = NULL;
	assert_int_equal(floe_ice_meta_add_snapshot(m, &s, "v2.json", 3001, 10), FLOE_EINVAL);

	write_to(m, &after);
	assert_int_equal(after.len, before.len);
	assert_memory_equal(after.data, before.data, before.len);
	assert_int_equal(floe_ice_meta_last_sequence(m), 1);
	assert_int_equal(floe_ice_meta_snapshot_count(m), 1);
	floe_buf_fini(&before);
	floe_buf_fini(&after);
	floe_ice_meta_free(m);
}

static void test_java_v2(void **state)
{
	(void)state;
	struct floe_alloc a;
	floe_alloc_init(&a, 0);
	struct floe_ice_meta *m = NULL;
	assert_int_equal(floe_ice_meta_parse(&a, JAVA_V2, strlen(JAVA_V2), &m, NULL), 0);
	assert_int_equal(floe_ice_meta_format_version(m), 2);
	assert_string_equal(floe_ice_meta_location(m), "s3://bucket/wh/db/logs");
	assert_true(floe_ice_meta_current_snapshot_id(m) == INT64_C(8333017788700497002));
	assert_int_equal(floe_ice_meta_last_sequence(m), 1);
	assert_int_equal(floe_json_len(floe_ice_meta_default_spec_fields(m)), 0);
	assert_string_equal(floe_ice_meta_snapshot_summary(m, 0, "total-records"), "3");
	const char *type, *name;
	bool req = true;
	assert_true(floe_ice_meta_schema_field(m, 2, &type, &req, &name));
	assert_string_equal(type, "string");
	assert_false(req);

	/* Compact re-serialisation keeps every field, in order. */
	struct floe_json_doc *d = NULL;
	assert_int_equal(floe_json_parse(NULL, JAVA_V2, strlen(JAVA_V2), 0, &d, NULL), 0);
	struct floe_buf want, got;
	floe_buf_init(&want, NULL, 1 << 20);
	assert_int_equal(floe_json_write(floe_json_root(d), &want), 0);
	floe_json_doc_free(d);
	write_to(m, &got);
	assert_int_equal(got.len, want.len);
	assert_memory_equal(got.data, want.data, want.len);
	floe_buf_fini(&got);

	struct floe_ice_snapshot s = {.snapshot_id = 1234,
				      .parent_id = INT64_C(8333017788700497002),
				      .sequence_number = 2,
				      .timestamp_ms = 1700000001000,
				      .manifest_list =
					  "s3://bucket/wh/db/logs/metadata/snap-1234-1-b.avro",
				      .operation = "append"};
	assert_int_equal(
	    floe_ice_meta_add_snapshot(
		m, &s, "s3://bucket/wh/db/logs/metadata/00001-b.metadata.json", 1700000001500, 100),
	    0);
	write_to(m, &got);
	/* Unknown members and the tag survive; main keeps its retention setting. */
	static const char *const keep[] = {
	    "\"statistics\":[{\"snapshot-id\":8333017788700497002,",
	    "\"partition-statistics\":[{\"snapshot-id\":8333017788700497002,",
	    "\"file-size-in-bytes\":1.5e3",
	    "\"properties\":{\"owner\":\"spark\",\"write.parquet.compression-codec\":\"zstd\"}",
	    "\"refs\":{\"main\":{\"snapshot-id\":1234,\"type\":\"branch\",\"max-ref-age-ms\":"
	    "86400000},"
	    "\"v1.0\":{\"snapshot-id\":8333017788700497002,\"type\":\"tag\"}}",
	    "\"identifier-field-ids\":[1]",
	    "\"doc\":\"the line\"",
	    "\"spark.app.id\":\"local-1\"",
	    "\"metadata-log\":[{\"timestamp-ms\":1699999999000,\"metadata-file\":"
	    "\"s3://bucket/wh/db/logs/metadata/"
	    "00000-a.metadata.json\"},{\"timestamp-ms\":1700000000500,"
	    "\"metadata-file\":\"s3://bucket/wh/db/logs/metadata/00001-b.metadata.json\"}]",
	    "\"snapshot-log\":[{\"timestamp-ms\":1700000000000,\"snapshot-id\":8333017788700497002}"
	    ","
	    "{\"timestamp-ms\":1700000001000,\"snapshot-id\":1234}]",
	    "\"last-sequence-number\":2,\"last-updated-ms\":1700000001500,",
	    "\"current-snapshot-id\":1234,",
	};
	for (size_t i = 0; i < sizeof(keep) / sizeof(keep[0]); i++)
		if (!memmem(got.data, got.len, keep[i], strlen(keep[i])))
			fail_msg("missing %s in\n%.*s", keep[i], (int)got.len,
				 (const char *)got.data);
	/* The statistics members stay where they were: between snapshots and snapshot-log. */
	const char *st = memmem(got.data, got.len, "\"statistics\"", 12);
	const char *sl = memmem(got.data, got.len, "\"snapshot-log\"", 14);
	assert_true(st && sl && st < sl);
	floe_buf_fini(&got);
	floe_buf_fini(&want);
	floe_ice_meta_free(m);
	assert_int_equal(a.used, 0);
}

static void test_current_snapshot_forms(void **state)
{
	(void)state;
	static const char *const forms[] = {"null", "-1"};
	for (size_t i = 0; i < 3; i++) {
		char text[4096];
		/* CREATED with current-snapshot-id null, -1 or removed. */
		const char *at = strstr(CREATED, "\"current-snapshot-id\":-1,");
		assert_non_null(at);
		int n = (int)(at - CREATED);
		if (i < 2)
			snprintf(text, sizeof(text), "%.*s\"current-snapshot-id\":%s,%s", n,
				 CREATED, forms[i], at + strlen("\"current-snapshot-id\":-1,"));
		else
			snprintf(text, sizeof(text), "%.*s%s", n, CREATED,
				 at + strlen("\"current-snapshot-id\":-1,"));
		struct floe_ice_meta *m = NULL;
		assert_int_equal(floe_ice_meta_parse(NULL, text, strlen(text), &m, NULL), 0);
		assert_int_equal(floe_ice_meta_current_snapshot_id(m), -1);
		assert_int_equal(floe_ice_meta_add_snapshot(m, &SNAP1, NULL, 2001, 100), 0);
		assert_true(floe_ice_meta_current_snapshot_id(m) == SNAP1.snapshot_id);
		floe_ice_meta_free(m);
	}
}

static void test_java_v1(void **state)
{
	(void)state;
	struct floe_ice_meta *m = NULL;
	assert_int_equal(floe_ice_meta_parse(NULL, JAVA_V1, strlen(JAVA_V1), &m, NULL), 0);
	assert_int_equal(floe_ice_meta_format_version(m), 1);
	assert_int_equal(floe_ice_meta_last_sequence(m), 0);
	assert_int_equal(floe_ice_meta_current_snapshot_id(m), 42);
	assert_int_equal(floe_ice_meta_current_schema_id(m), 0);
	assert_int_equal(floe_ice_meta_default_spec_id(m), 0);
	assert_int_equal(floe_json_len(floe_ice_meta_default_spec_fields(m)), 1);
	const char *type;
	assert_true(floe_ice_meta_schema_field(m, 1, &type, NULL, NULL));
	assert_string_equal(type, "long");
	int64_t seq = -5;
	const char *ml = "x";
	assert_int_equal(floe_ice_meta_snapshot_at(m, 0, NULL, NULL, &seq, NULL, &ml), 0);
	assert_int_equal(seq, 0);
	assert_null(ml);
	struct floe_ice_snapshot s = SNAP1;
	s.parent_id = 42;
	assert_int_equal(floe_ice_meta_add_snapshot(m, &s, NULL, 1, 10), FLOE_EUNSUPPORTED);
	struct floe_buf b;
	write_to(m, &b);
	assert_int_equal(b.len, strlen(JAVA_V1));
	assert_memory_equal(b.data, JAVA_V1, b.len);
	floe_buf_fini(&b);
	floe_ice_meta_free(m);
}

/* Parses CREATED/TWO_SNAPSHOTS with one member removed or replaced. */
static int parse_edited(const char *base, const char *member, const char *replacement)
{
	struct floe_json_doc *d = NULL;
	assert_int_equal(floe_json_parse(NULL, base, strlen(base), 0, &d, NULL), 0);
	struct floe_json *root = floe_json_root(d);
	if (replacement) {
		struct floe_json_doc *r = NULL;
		assert_int_equal(
		    floe_json_parse(NULL, replacement, strlen(replacement), 0, &r, NULL), 0);
		assert_int_equal(
		    floe_json_set(d, root, member, floe_json_clone(d, floe_json_root(r))), 0);
		floe_json_doc_free(r);
	} else {
		assert_non_null(floe_json_get(root, member));
		assert_int_equal(floe_json_remove(root, member), 0);
	}
	struct floe_buf b;
	floe_buf_init(&b, NULL, 1 << 20);
	assert_int_equal(floe_json_write(root, &b), 0);
	struct floe_ice_meta *m = NULL;
	int rc = floe_ice_meta_parse(NULL, (const char *)b.data, b.len, &m, NULL);
	assert_true(rc == 0 ? m != NULL : m == NULL);
	floe_ice_meta_free(m);
	floe_buf_fini(&b);
	floe_json_doc_free(d);
	return rc;
}

static void test_refused(void **state)
{
	(void)state;
	assert_int_equal(parse_edited(TWO_SNAPSHOTS, "format-version", "3"), FLOE_EUNSUPPORTED);
	assert_int_equal(parse_edited(TWO_SNAPSHOTS, "format-version", "0"), FLOE_EFORMAT);
	assert_int_equal(parse_edited(TWO_SNAPSHOTS, "format-version", "\"2\""), FLOE_EFORMAT);
	static const char *const required[] = {
	    "format-version",	     "table-uuid",	"location",	     "last-sequence-number",
	    "last-updated-ms",	     "last-column-id",	"current-schema-id", "schemas",
	    "default-spec-id",	     "partition-specs", "last-partition-id", "sort-orders",
	    "default-sort-order-id",
	};
	for (size_t i = 0; i < sizeof(required) / sizeof(required[0]); i++)
		if (parse_edited(TWO_SNAPSHOTS, required[i], NULL) != FLOE_EFORMAT)
			fail_msg("accepted metadata without %s", required[i]);
	/* Optional members may go. */
	assert_int_equal(parse_edited(TWO_SNAPSHOTS, "properties", NULL), 0);
	assert_int_equal(parse_edited(TWO_SNAPSHOTS, "refs", NULL), 0);
	assert_int_equal(parse_edited(TWO_SNAPSHOTS, "metadata-log", NULL), 0);
	/* Wrong types and dangling references. */
	assert_int_equal(parse_edited(TWO_SNAPSHOTS, "current-schema-id", "1"), FLOE_EFORMAT);
	assert_int_equal(parse_edited(TWO_SNAPSHOTS, "default-spec-id", "4"), FLOE_EFORMAT);
	assert_int_equal(parse_edited(TWO_SNAPSHOTS, "current-snapshot-id", "12"), FLOE_EFORMAT);
	assert_int_equal(parse_edited(TWO_SNAPSHOTS, "current-snapshot-id", "\"x\""), FLOE_EFORMAT);
	assert_int_equal(parse_edited(TWO_SNAPSHOTS, "location", "7"), FLOE_EFORMAT);
	assert_int_equal(parse_edited(TWO_SNAPSHOTS, "properties", "[]"), FLOE_EFORMAT);
	assert_int_equal(parse_edited(TWO_SNAPSHOTS, "snapshots", "{}"), FLOE_EFORMAT);
	assert_int_equal(parse_edited(TWO_SNAPSHOTS, "current-snapshot-id", "-1"), 0);
	assert_int_equal(
	    parse_edited(
		CREATED, "snapshots",
		"[{\"snapshot-id\":1,\"sequence-number\":1,\"timestamp-ms\":1,"
		"\"manifest-list\":\"m\",\"summary\":{\"operation\":\"append\",\"n\":1}}]"),
	    FLOE_EFORMAT);
	assert_int_equal(
	    parse_edited(CREATED, "snapshots",
			 "[{\"snapshot-id\":1,\"timestamp-ms\":1,"
			 "\"manifest-list\":\"m\",\"summary\":{\"operation\":\"append\"}}]"),
	    FLOE_EFORMAT);
	assert_int_equal(
	    parse_edited(CREATED, "snapshots",
			 "[{\"snapshot-id\":1,\"sequence-number\":1,\"timestamp-ms\":1,"
			 "\"manifest-list\":\"m\",\"summary\":{\"operation\":\"append\"}}]"),
	    0);
	assert_int_equal(
	    parse_edited(
		CREATED, "schemas",
		"[{\"type\":\"struct\",\"schema-id\":0,\"fields\":[{\"id\":1,\"name\":\"a\","
		"\"required\":\"yes\",\"type\":\"long\"}]}]"),
	    FLOE_EFORMAT);
	assert_int_equal(
	    parse_edited(CREATED, "schemas",
			 "[{\"type\":\"struct\",\"schema-id\":0,\"fields\":[{\"id\":"
			 "4294967297,\"name\":\"a\",\"required\":true,\"type\":\"long\"}]}]"),
	    FLOE_EFORMAT);

	struct floe_ice_meta *m = (struct floe_ice_meta *)&m;
	struct floe_err e;
	assert_int_equal(floe_ice_meta_parse(NULL, "[]", 2, &m, &e), FLOE_EFORMAT);
	assert_null(m);
	assert_int_equal(e.code, FLOE_EFORMAT);
	assert_string_equal(e.msg, "not Iceberg table metadata: 'format-version' is missing or of "
				   "the wrong type");
	/* The message names the member that failed. */
	static const char NO_UUID[] = "{\"format-version\":2,\"location\":\"/t\"}";
	assert_int_equal(floe_ice_meta_parse(NULL, NO_UUID, sizeof(NO_UUID) - 1, &m, &e), FLOE_EFORMAT);
	assert_string_equal(e.msg, "not Iceberg table metadata: 'table-uuid' is missing or of the wrong type");
	assert_int_equal(parse_edited(CREATED, "schemas", "7"), FLOE_EFORMAT);
	assert_int_equal(floe_ice_meta_parse(NULL, "{", 1, &m, &e), FLOE_EPARSE);
	assert_null(m);
	assert_int_equal(e.offset, 1);
	assert_string_equal(e.msg, "JSON: expected a member name at byte 1");
}

static int create_commit_write(struct floe_alloc *a, struct floe_buf *out)
{
	struct floe_ice_meta *m = NULL;
	int rc = floe_ice_meta_create(a, UUID, LOC, FIELDS, 3, PFIELDS, 1, PROPS, 1, 1000, &m);
	if (rc)
		return rc;
	rc = floe_ice_meta_add_snapshot(m, &SNAP1, LOC "/metadata/v1.metadata.json", 2001, 100);
	if (!rc) {
		/* A failed commit must leave the metadata as it was. */
		struct floe_buf before, after;
		floe_buf_init(&before, NULL, 1 << 20);
		floe_buf_init(&after, NULL, 1 << 20);
		assert_int_equal(floe_ice_meta_write(m, &before), 0);
		rc = floe_ice_meta_add_snapshot(m, &SNAP2, LOC "/metadata/v2.metadata.json", 3001,
						100);
		if (rc) {
			assert_int_equal(floe_ice_meta_write(m, &after), 0);
			assert_int_equal(after.len, before.len);
			assert_memory_equal(after.data, before.data, before.len);
			assert_int_equal(floe_ice_meta_last_sequence(m), 1);
		}
		floe_buf_fini(&before);
		floe_buf_fini(&after);
	}
	if (!rc)
		rc = floe_ice_meta_write(m, out);
	floe_ice_meta_free(m);
	return rc;
}

static void test_fault_injection(void **state)
{
	(void)state;
	struct floe_alloc a;
	int rc = -1;
	long k;
	for (k = 0; k < 100000; k++) {
		floe_alloc_init(&a, 0);
		a.fail_after = k;
		struct floe_buf b;
		floe_buf_init(&b, &a, 1 << 20);
		rc = create_commit_write(&a, &b);
		if (rc == 0) {
			assert_int_equal(b.len, strlen(TWO_SNAPSHOTS));
			assert_memory_equal(b.data, TWO_SNAPSHOTS, b.len);
			floe_buf_fini(&b);
			assert_int_equal(a.used, 0);
			break;
		}
		assert_int_equal(rc, FLOE_ENOMEM);
		floe_buf_fini(&b);
		assert_int_equal(a.used, 0);
	}
	assert_int_equal(rc, 0);
	assert_true(k > 5);

	for (k = 0; k < 100000; k++) {
		floe_alloc_init(&a, 0);
		a.fail_after = k;
		struct floe_ice_meta *m = NULL;
		rc = floe_ice_meta_parse(&a, JAVA_V2, strlen(JAVA_V2), &m, NULL);
		if (rc == 0) {
			floe_ice_meta_free(m);
			assert_int_equal(a.used, 0);
			break;
		}
		assert_int_equal(rc, FLOE_ENOMEM);
		assert_null(m);
		assert_int_equal(a.used, 0);
	}
	assert_int_equal(rc, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_create),
	    cmocka_unit_test(test_create_unpartitioned_and_invalid),
	    cmocka_unit_test(test_two_snapshots),
	    cmocka_unit_test(test_metadata_log_trim),
	    cmocka_unit_test(test_bad_add_snapshot),
	    cmocka_unit_test(test_java_v2),
	    cmocka_unit_test(test_current_snapshot_forms),
	    cmocka_unit_test(test_java_v1),
	    cmocka_unit_test(test_refused),
	    cmocka_unit_test(test_fault_injection),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

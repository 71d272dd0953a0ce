/* Tests of snapshot expiry and cleanup on Iceberg table metadata: removing old snapshots
 * (snapshot-log and statistics follow, the history before a removed entry goes too, ref
 * heads and the current snapshot are refused), table properties set and removed, ref
 * heads and the metadata-log read back, and a failed change leaving the document as it
 * was. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"
#include "formats/iceberg/metadata.h"

static const struct floe_ice_field FIELDS[] = {{.id = 1, .name = "ts", .type = "timestamptz", .required = true}};

/* A table with snapshots 1..n, each the parent of the next, and metadata-log entries. */
static struct floe_ice_meta *table_with(size_t n)
{
	struct floe_ice_meta *m = NULL;
	assert_int_equal(floe_ice_meta_create(NULL, "9c12d441-03fe-4693-9a96-a0705ddf69c1", "file:///t", FIELDS, 1,
					      NULL, 0, NULL, 0, 1000, &m),
			 0);
	for (size_t i = 1; i <= n; i++) {
		char list[64], prev[64];
		snprintf(list, sizeof(list), "file:///t/metadata/snap-%zu.avro", i);
		snprintf(prev, sizeof(prev), "file:///t/metadata/v%zu.metadata.json", i);
		struct floe_ice_snapshot s = {
			.snapshot_id = (int64_t)i,
			.parent_id = i > 1 ? (int64_t)i - 1 : -1,
			.sequence_number = (int64_t)i,
			.timestamp_ms = 1000 + (int64_t)i,
			.manifest_list = list,
			.operation = "append",
		};
		assert_int_equal(floe_ice_meta_add_snapshot(m, &s, prev, 1000 + (int64_t)i, 3), 0);
	}
	return m;
}

static char *write_doc(const struct floe_ice_meta *m, struct floe_buf *b)
{
	floe_buf_reset(b);
	assert_int_equal(floe_ice_meta_write(m, b), 0);
	assert_int_equal(floe_buf_putc(b, '\0'), 0);
	return (char *)b->data;
}

static void test_remove(void **state)
{
	(void)state;
	struct floe_ice_meta *m = table_with(5);
	struct floe_buf b;
	floe_buf_init(&b, NULL, 1 << 20);
	/* The current snapshot (5, main's head) cannot go. */
	const int64_t bad[] = {1, 5};
	char *before = strdup(write_doc(m, &b));
	assert_int_equal(floe_ice_meta_remove_snapshots(m, bad, 2), FLOE_EINVAL);
	assert_string_equal(write_doc(m, &b), before);
	free(before);

	const int64_t gone[] = {2, 1, 42}; /* any order; 42 is not there */
	assert_int_equal(floe_ice_meta_remove_snapshots(m, gone, 3), 0);
	assert_int_equal(floe_ice_meta_snapshot_count(m), 3);
	assert_int_equal(floe_ice_meta_find_snapshot(m, 1), -1);
	assert_true(floe_ice_meta_find_snapshot(m, 3) >= 0);
	assert_int_equal(floe_ice_meta_current_snapshot_id(m), 5);
	const char *doc = write_doc(m, &b);
	assert_non_null(strstr(doc, "\"snapshot-log\":[{\"timestamp-ms\":1003,\"snapshot-id\":3},"));
	/* The rest survives: last-sequence-number, refs, the metadata-log (3 kept). */
	assert_int_equal(floe_ice_meta_last_sequence(m), 5);
	int64_t heads[4];
	assert_int_equal(floe_ice_meta_ref_heads(m, heads, 4), 1);
	assert_int_equal(heads[0], 5);
	assert_int_equal(floe_ice_meta_log_count(m), 3);
	assert_string_equal(floe_ice_meta_log_file(m, 0), "file:///t/metadata/v3.metadata.json");
	assert_string_equal(floe_ice_meta_log_file(m, 2), "file:///t/metadata/v5.metadata.json");
	assert_null(floe_ice_meta_log_file(m, 3));
	/* A snapshot added after the removal continues the table. */
	struct floe_ice_snapshot s = {.snapshot_id = 6, .parent_id = 5, .sequence_number = 6,
				      .timestamp_ms = 2000, .manifest_list = "l6", .operation = "replace"};
	assert_int_equal(floe_ice_meta_add_snapshot(m, &s, "v6", 2000, 3), 0);
	assert_string_equal(floe_ice_meta_snapshot_summary(m, (size_t)floe_ice_meta_find_snapshot(m, 6), "operation"),
			    "replace");
	/* The document parses back. */
	struct floe_ice_meta *p = NULL;
	doc = write_doc(m, &b);
	assert_int_equal(floe_ice_meta_parse(NULL, doc, strlen(doc), &p, NULL), 0);
	assert_int_equal(floe_ice_meta_snapshot_count(p), 4);
	floe_ice_meta_free(p);
	floe_ice_meta_free(m);
	floe_buf_fini(&b);
}

/* A snapshot-log entry whose snapshot is gone drops the history before it; statistics of
 * removed snapshots go; a tag's head is kept. */
static void test_log_stats_and_tags(void **state)
{
	(void)state;
	static const char DOC[] =
	    "{\"format-version\":2,\"table-uuid\":\"u\",\"location\":\"file:///t\",\"last-sequence-number\":3,"
	    "\"last-updated-ms\":5,\"last-column-id\":1,\"current-schema-id\":0,\"schemas\":[{\"type\":"
	    "\"struct\",\"schema-id\":0,\"fields\":[]}],\"default-spec-id\":0,\"partition-specs\":[{\"spec-id\":"
	    "0,\"fields\":[]}],\"last-partition-id\":999,\"default-sort-order-id\":0,\"sort-orders\":[{"
	    "\"order-id\":0,\"fields\":[]}],\"current-snapshot-id\":3,\"refs\":{\"main\":{\"snapshot-id\":3,"
	    "\"type\":\"branch\"},\"keep\":{\"snapshot-id\":1,\"type\":\"tag\"}},\"snapshots\":["
	    "{\"snapshot-id\":1,\"sequence-number\":1,\"timestamp-ms\":1,\"manifest-list\":\"a\",\"summary\":{\"operation\":\"append\"}},"
	    "{\"snapshot-id\":2,\"parent-snapshot-id\":1,\"sequence-number\":2,\"timestamp-ms\":2,\"manifest-list\":\"b\",\"summary\":{\"operation\":\"append\"}},"
	    "{\"snapshot-id\":3,\"parent-snapshot-id\":2,\"sequence-number\":3,\"timestamp-ms\":3,\"manifest-list\":\"c\",\"summary\":{\"operation\":\"append\"}}],"
	    "\"statistics\":[{\"snapshot-id\":2,\"statistics-path\":\"s2\"},{\"snapshot-id\":3,\"statistics-path\":\"s3\"}],"
	    "\"snapshot-log\":[{\"timestamp-ms\":0,\"snapshot-id\":9},{\"timestamp-ms\":1,\"snapshot-id\":1},"
	    "{\"timestamp-ms\":2,\"snapshot-id\":2},{\"timestamp-ms\":3,\"snapshot-id\":3}],\"metadata-log\":[]}";
	struct floe_ice_meta *m = NULL;
	assert_int_equal(floe_ice_meta_parse(NULL, DOC, strlen(DOC), &m, NULL), 0);
	int64_t heads[1];
	assert_int_equal(floe_ice_meta_ref_heads(m, heads, 1), 2); /* counted beyond cap */
	const int64_t tag[] = {1};
	assert_int_equal(floe_ice_meta_remove_snapshots(m, tag, 1), FLOE_EINVAL);
	const int64_t two[] = {2};
	assert_int_equal(floe_ice_meta_remove_snapshots(m, two, 1), 0);
	struct floe_buf b;
	floe_buf_init(&b, NULL, 1 << 20);
	const char *doc = write_doc(m, &b);
	assert_non_null(strstr(doc, "\"statistics\":[{\"snapshot-id\":3,\"statistics-path\":\"s3\"}]"));
	/* 9 was never there and 2 is gone: only 3's entry is left. */
	assert_non_null(strstr(doc, "\"snapshot-log\":[{\"timestamp-ms\":3,\"snapshot-id\":3}]"));
	floe_ice_meta_free(m);
	floe_buf_fini(&b);
}

static void test_properties(void **state)
{
	(void)state;
	struct floe_ice_meta *m = table_with(1);
	assert_null(floe_ice_meta_property(m, "floe.x"));
	const struct floe_ice_kv set[] = {{"floe.x", "1"}, {"history.expire.min-snapshots-to-keep", "3"}};
	assert_int_equal(floe_ice_meta_set_properties(m, set, 2), 0);
	assert_string_equal(floe_ice_meta_property(m, "floe.x"), "1");
	const struct floe_ice_kv change[] = {{"floe.x", "2"}, {"history.expire.min-snapshots-to-keep", NULL}};
	assert_int_equal(floe_ice_meta_set_properties(m, change, 2), 0);
	assert_string_equal(floe_ice_meta_property(m, "floe.x"), "2");
	assert_null(floe_ice_meta_property(m, "history.expire.min-snapshots-to-keep"));
	const struct floe_ice_kv bad[] = {{NULL, "1"}};
	assert_int_equal(floe_ice_meta_set_properties(m, bad, 1), FLOE_EINVAL);
	floe_ice_meta_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_remove),
		cmocka_unit_test(test_log_stats_and_tags),
		cmocka_unit_test(test_properties),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Tests for partition-spec and sort-order evolution of table metadata: the specs,
 * default-spec-id and last-partition-id written (field ids above it, a field with the same
 * source and transform keeping its id, an equal spec reused by id), the sort orders and
 * default-sort-order-id, and a v1-style table without partition-specs refused. */
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
#include "formats/json/json.h"

static const struct floe_ice_field FIELDS[] = {
    {.id = 1, .name = "ts", .type = "timestamptz", .required = true},
    {.id = 8, .name = "app", .type = "string"},
};

static struct floe_ice_meta *day_table(void)
{
	const struct floe_ice_partition_field day[] = {{1, 1000, "ts_day", "day"}};
	struct floe_ice_meta *m = NULL;
	assert_int_equal(floe_ice_meta_create(NULL, "9c12d441-03fe-4693-9a96-a0705ddf69c1",
					      "file:///wh/logs", FIELDS, 2, day, 1, NULL, 0, 1000, &m),
			 0);
	return m;
}

/* The document written, from "default-spec-id" to just before "properties". */
static char *specs_json(const struct floe_ice_meta *m)
{
	struct floe_buf b;
	floe_buf_init(&b, NULL, 1 << 20);
	assert_int_equal(floe_ice_meta_write(m, &b), 0);
	assert_int_equal(floe_buf_putc(&b, '\0'), 0);
	const char *s = strstr((const char *)b.data, "\"default-spec-id\"");
	const char *e = strstr((const char *)b.data, ",\"properties\"");
	assert_non_null(s);
	assert_non_null(e);
	char *out = strndup(s, (size_t)(e - s));
	floe_buf_fini(&b);
	return out;
}

static void test_spec_evolution(void **state)
{
	(void)state;
	struct floe_ice_meta *m = day_table();
	int32_t id = -9;
	bool changed = true, added = true;
	/* The spec the table has: id 0, nothing changes. */
	struct floe_ice_partition_field same[] = {{1, 0, "ts_day", "day"}};
	assert_int_equal(floe_ice_meta_evolve_spec(m, same, 1, true, 2000, &id, &changed, &added), 0);
	assert_int_equal(id, 0);
	assert_false(changed);
	assert_false(added);
	assert_int_equal(same[0].field_id, 1000);

	/* [day(ts), app]: day keeps 1000, app takes 1001; spec 1, the default. */
	struct floe_ice_partition_field two[] = {{1, 0, "ts_day", "day"}, {8, 0, "app", "identity"}};
	assert_int_equal(floe_ice_meta_evolve_spec(m, two, 2, true, 2000, &id, &changed, &added), 0);
	assert_int_equal(id, 1);
	assert_true(changed);
	assert_true(added);
	assert_int_equal(two[0].field_id, 1000);
	assert_int_equal(two[1].field_id, 1001);
	assert_int_equal(floe_ice_meta_default_spec_id(m), 1);
	assert_int_equal(floe_ice_meta_last_spec_id(m), 1);
	assert_int_equal(floe_json_len(floe_ice_meta_spec_fields(m, 1)), 2);
	assert_int_equal(floe_ice_meta_last_updated_ms(m), 2000);

	/* hour(ts): a new field id above last-partition-id, never 1000 or 1001 again. */
	struct floe_ice_partition_field hour[] = {{1, 0, "ts_hour", "hour"}};
	assert_int_equal(floe_ice_meta_evolve_spec(m, hour, 1, true, 3000, &id, &changed, &added), 0);
	assert_int_equal(id, 2);
	assert_int_equal(hour[0].field_id, 1002);

	char *j = specs_json(m);
	assert_string_equal(
	    j, "\"default-spec-id\":2,\"partition-specs\":["
	       "{\"spec-id\":0,\"fields\":[{\"name\":\"ts_day\",\"transform\":\"day\",\"source-id\":1,\"field-id\":1000}]},"
	       "{\"spec-id\":1,\"fields\":[{\"name\":\"ts_day\",\"transform\":\"day\",\"source-id\":1,\"field-id\":1000},"
	       "{\"name\":\"app\",\"transform\":\"identity\",\"source-id\":8,\"field-id\":1001}]},"
	       "{\"spec-id\":2,\"fields\":[{\"name\":\"ts_hour\",\"transform\":\"hour\",\"source-id\":1,\"field-id\":1002}]}],"
	       "\"last-partition-id\":1002,\"default-sort-order-id\":0,\"sort-orders\":[{\"order-id\":0,\"fields\":[]}]");
	free(j);

	/* [day(ts), app] again: spec 1 back by its id, not a fourth spec; not the default
	 * when make_default is false. */
	struct floe_ice_partition_field again[] = {{1, 0, "ts_day", "day"}, {8, 0, "app", "identity"}};
	assert_int_equal(floe_ice_meta_evolve_spec(m, again, 2, false, 4000, &id, &changed, &added), 0);
	assert_int_equal(id, 1);
	assert_false(changed);
	assert_int_equal(floe_ice_meta_default_spec_id(m), 2);
	assert_int_equal(floe_ice_meta_evolve_spec(m, again, 2, true, 4000, &id, &changed, &added), 0);
	assert_true(changed);
	assert_false(added);
	assert_int_equal(floe_ice_meta_default_spec_id(m), 1);
	assert_int_equal(floe_ice_meta_last_spec_id(m), 2);
	assert_null(floe_ice_meta_spec_fields(m, 7));

	/* Written and read back: the same specs. */
	struct floe_buf b;
	floe_buf_init(&b, NULL, 1 << 20);
	assert_int_equal(floe_ice_meta_write(m, &b), 0);
	struct floe_ice_meta *back = NULL;
	assert_int_equal(floe_ice_meta_parse(NULL, (const char *)b.data, b.len, &back, NULL), 0);
	assert_int_equal(floe_ice_meta_default_spec_id(back), 1);
	assert_int_equal(floe_json_len(floe_ice_meta_default_spec_fields(back)), 2);
	floe_ice_meta_free(back);
	floe_buf_fini(&b);
	floe_ice_meta_free(m);
}

static void test_sort_order_evolution(void **state)
{
	(void)state;
	struct floe_ice_meta *m = day_table();
	int32_t id = -9;
	bool changed = true;
	assert_int_equal(floe_ice_meta_evolve_sort_order(m, NULL, 0, 2000, &id, &changed), 0);
	assert_int_equal(id, 0);
	assert_false(changed);
	const struct floe_ice_sort_field by[] = {{8, "identity", false, true}, {1, "identity", false, true}};
	assert_int_equal(floe_ice_meta_evolve_sort_order(m, by, 2, 2000, &id, &changed), 0);
	assert_int_equal(id, 1);
	assert_true(changed);
	assert_int_equal(floe_ice_meta_default_sort_order_id(m), 1);
	char *j = specs_json(m);
	assert_non_null(strstr(j, "\"default-sort-order-id\":1,\"sort-orders\":[{\"order-id\":0,\"fields\":[]},"
				  "{\"order-id\":1,\"fields\":[{\"transform\":\"identity\",\"source-id\":8,"
				  "\"direction\":\"asc\",\"null-order\":\"nulls-first\"},{\"transform\":\"identity\","
				  "\"source-id\":1,\"direction\":\"asc\",\"null-order\":\"nulls-first\"}]}]"));
	free(j);
	/* Unsorted again: order 0 by its id; then the same order again: 1, not a third. */
	assert_int_equal(floe_ice_meta_evolve_sort_order(m, NULL, 0, 3000, &id, &changed), 0);
	assert_int_equal(id, 0);
	assert_true(changed);
	assert_int_equal(floe_ice_meta_evolve_sort_order(m, by, 2, 3000, &id, &changed), 0);
	assert_int_equal(id, 1);
	assert_int_equal(floe_ice_meta_last_sort_order_id(m), 1);
	assert_non_null(floe_ice_meta_sort_order(m, 1));
	floe_ice_meta_free(m);
}

static void test_v1_refused(void **state)
{
	(void)state;
	static const char V1[] =
	    "{\"format-version\":1,\"location\":\"file:///wh/t\",\"last-updated-ms\":1,\"last-column-id\":1,"
	    "\"schema\":{\"type\":\"struct\",\"fields\":[{\"id\":1,\"name\":\"ts\",\"required\":true,"
	    "\"type\":\"timestamptz\"}]},\"partition-spec\":[]}";
	struct floe_ice_meta *m = NULL;
	assert_int_equal(floe_ice_meta_parse(NULL, V1, sizeof(V1) - 1, &m, NULL), 0);
	struct floe_ice_partition_field day[] = {{1, 0, "ts_day", "day"}};
	int32_t id;
	bool changed;
	assert_int_equal(floe_ice_meta_evolve_spec(m, day, 1, true, 2, &id, &changed, NULL), FLOE_EUNSUPPORTED);
	assert_non_null(floe_ice_meta_spec_fields(m, 0));
	floe_ice_meta_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_spec_evolution),
	    cmocka_unit_test(test_sort_order_evolution),
	    cmocka_unit_test(test_v1_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

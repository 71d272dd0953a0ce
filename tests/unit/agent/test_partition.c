/* Unit tests for agent/schema/partition: specs from config, keys, Hive-style paths. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "agent/schema/partition.h"
#include "agent/schema/record.h"
#include "formats/base/error.h"

static struct floe_record rec_at(int64_t ts_us, const char *host)
{
	struct floe_record r;
	memset(&r, 0, sizeof(r));
	r.ts = ts_us;
	r.host.p = host;
	r.host.len = strlen(host);
	return r;
}

static void test_spec_from_config(void **state)
{
	(void)state;
	char *entries[] = {"day(ts)", "bucket(16, host)", "identity(app)"};
	struct floe_part_spec spec;
	assert_int_equal(floe_part_spec_from_config(&spec, entries, 3, NULL), 0);
	assert_int_equal(spec.n, 3);
	assert_string_equal(spec.f[0].name, "ts_day");
	assert_int_equal(spec.f[0].field_id, 1000);
	assert_int_equal(spec.f[0].source_id, 1);
	assert_string_equal(spec.f[0].result_type, "date");
	assert_string_equal(spec.f[1].name, "host_bucket");
	assert_int_equal(spec.f[1].transform.kind, FLOE_ICE_BUCKET);
	assert_int_equal(spec.f[1].transform.param, 16);
	assert_string_equal(spec.f[2].name, "app");
	assert_string_equal(spec.f[2].result_type, "string");

	char *bad1[] = {"day(host)"};
	assert_int_equal(floe_part_spec_from_config(&spec, bad1, 1, NULL), FLOE_EINVAL);
	char *bad2[] = {"hour(message)"};
	assert_int_equal(floe_part_spec_from_config(&spec, bad2, 1, NULL), FLOE_EINVAL);
	char *bad3[] = {"frob(ts)"};
	assert_int_equal(floe_part_spec_from_config(&spec, bad3, 1, NULL), FLOE_EINVAL);
	assert_int_equal(floe_part_spec_from_config(&spec, NULL, 0, NULL), 0);
	assert_int_equal(spec.n, 0);
}

static void test_keys_and_paths(void **state)
{
	(void)state;
	char *entries[] = {"day(ts)", "hour(ts)", "host"};
	struct floe_part_spec spec;
	char path[256];
	assert_int_equal(floe_part_spec_from_config(&spec, entries, 3, NULL), 0);
	/* 2023-05-15T14:30:45Z: day 19492, hour 467822 (spec test values). */
	struct floe_record r = rec_at(1684161045000000LL, "edge/01 a");
	struct floe_part_key k1, k2;
	assert_int_equal(floe_part_key_of(&spec, &r, &k1), 0);
	assert_int_equal(k1.v[0].i, 19492);
	assert_int_equal(k1.v[1].i, 467822);
	assert_int_equal(floe_part_key_path(&spec, &k1, path, sizeof(path)), 0);
	assert_string_equal(path, "ts_day=2023-05-15/ts_hour=2023-05-15-14/host=edge%2F01%20a");
	r.ts -= 3600LL * 1000000; /* an hour earlier: same day, other hour */
	assert_int_equal(floe_part_key_of(&spec, &r, &k2), 0);
	assert_false(floe_part_key_equal(&spec, &k1, &k2));
	struct floe_part_key k3;
	floe_part_key_copy(&spec, &k3, &k1);
	assert_true(floe_part_key_equal(&spec, &k1, &k3));
	assert_ptr_equal(k3.v[2].s, k3.str[2]);
	/* Before 1970: floor division. */
	r.ts = -1;
	assert_int_equal(floe_part_key_of(&spec, &r, &k2), 0);
	assert_int_equal(k2.v[0].i, -1);
	assert_int_equal(floe_part_key_path(&spec, &k2, path, sizeof(path)), 0);
	assert_non_null(strstr(path, "ts_day=1969-12-31"));
	char tiny[8];
	assert_int_equal(floe_part_key_path(&spec, &k1, tiny, sizeof(tiny)), FLOE_ELIMIT);
	/* month(ts) and year(ts): "2023-05" and "2023", as Iceberg's writers name them (once
	 * "ts_month=640" and "ts_year=53"). */
	char *my[] = {"year(ts)", "month(ts)"};
	struct floe_part_spec spec2;
	assert_int_equal(floe_part_spec_from_config(&spec2, my, 2, NULL), 0);
	r.ts = 1684161045000000LL;
	assert_int_equal(floe_part_key_of(&spec2, &r, &k2), 0);
	assert_int_equal(floe_part_key_path(&spec2, &k2, path, sizeof(path)), 0);
	assert_string_equal(path, "ts_year=2023/ts_month=2023-05");
	/* An identity value too long to be a partition value is refused, not truncated. */
	char longhost[400];
	memset(longhost, 'h', sizeof(longhost) - 1);
	longhost[sizeof(longhost) - 1] = '\0';
	r = rec_at(0, longhost);
	assert_int_equal(floe_part_key_of(&spec, &r, &k2), FLOE_ELIMIT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spec_from_config),
		cmocka_unit_test(test_keys_and_paths),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

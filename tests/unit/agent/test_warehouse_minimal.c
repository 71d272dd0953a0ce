/* An s3:// warehouse in both builds: a floe built with FLOE_WITH_S3=OFF or FLOE_STATIC (no S3
 * client) refuses it as a configuration error (FLOE_EINVAL: exit 2) that says so; a full
 * build opens it (without the probe, nothing goes over the network). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "agent/config/config.h"
#include "agent/lake/warehouse.h"
#include "formats/base/alloc.h"
#include "formats/base/error.h"
#include "platform/store.h"

static const char yaml[] = "agent: {id: edge-1, state_dir: /tmp/floe-test-warehouse-min}\n"
			   "inputs:\n"
			   "  - {type: tail, paths: [\"/tmp/floe-test-warehouse-min.log\"]}\n"
			   "lake:\n"
			   "  warehouse: s3://bucket/prefix\n"
			   "  catalog: {type: s3}\n"
			   "  s3: {endpoint: \"http://127.0.0.1:9/\", region: us-east-1,\n"
			   "       path_style: true, access_key_id: env:FLOE_TEST_KEY,\n"
			   "       secret_access_key: env:FLOE_TEST_SECRET}\n";

static void test_s3_warehouse(void **state)
{
	(void)state;
	setenv("FLOE_TEST_KEY", "AKIATEST", 1);
	setenv("FLOE_TEST_SECRET", "secret", 1);
	struct floe_alloc a;
	floe_alloc_init(&a, 0);
	struct floe_config *cfg = NULL;
	struct floe_err err;
#ifdef FLOE_NO_S3
	/* Refused by the configuration already, so that `floe check` says it. */
	assert_int_equal(floe_config_parse(&a, "t.yaml", yaml, strlen(yaml), "host-1", &cfg, &err),
			 FLOE_EFORMAT);
	assert_non_null(strstr(err.msg, "no S3 support"));
	unsetenv("FLOE_TEST_KEY");
	unsetenv("FLOE_TEST_SECRET");
	return;
#endif
	assert_int_equal(floe_config_parse(&a, "t.yaml", yaml, strlen(yaml), "host-1", &cfg, &err),
			 0);
	struct floe_store *st = NULL;
	struct floe_err why;
	floe_err_clear(&why);
	int rc = floe_warehouse_open(&a, cfg, false, &st, &why);
#ifdef FLOE_NO_S3
	assert_int_equal(rc, FLOE_EINVAL);
	assert_null(st);
	assert_string_equal(why.msg, "lake.warehouse s3://bucket/prefix: this build of floe has no S3 "
				 "support (it was built with FLOE_WITH_S3=OFF or FLOE_STATIC); use "
				 "a local warehouse, or a floe built with S3");
#else
	assert_int_equal(rc, 0);
	assert_non_null(st);
	assert_string_equal(st->uri, "s3://bucket/prefix");
	floe_store_free(st);
#endif
	floe_config_free(cfg);
	unsetenv("FLOE_TEST_KEY");
	unsetenv("FLOE_TEST_SECRET");
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_s3_warehouse)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

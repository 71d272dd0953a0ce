/* Unit tests for agent/lake/warehouse: a local warehouse (a relative path made absolute),
 * one that cannot be used, S3 credential references that do not resolve and no
 * credentials at all (configuration errors, FLOE_EINVAL), and against a fake S3 server
 * on loopback: a store that ignores If-None-Match is refused with the reason, one that
 * honours it is opened after the probe (which removes its key before and after). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>

#include "../platform/s3/fake_http.h"

#include "agent/config/config.h"
#include "agent/lake/warehouse.h"
#include "formats/base/error.h"
#include "platform/store.h"

static char dir[64];

static int setup(void **state)
{
	(void)state;
	strcpy(dir, "/tmp/floe-test-warehouse.XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd);
}

static struct floe_config *config(const char *lake)
{
	char text[8192];
	snprintf(text, sizeof(text), "agent: {id: t, state_dir: %s/state}\nlake: %s\n", dir, lake);
	struct floe_config *c = NULL;
	struct floe_err err = {0};
	if (floe_config_parse(NULL, "t.yaml", text, strlen(text), "h", &c, &err))
		fail_msg("%s", err.msg);
	return c;
}

static void test_local(void **state)
{
	(void)state;
	char cwd[4096];
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_int_equal(chdir(dir), 0);
	struct floe_config *c = config("{warehouse: rel/wh}");
	struct floe_store *st = NULL;
	struct floe_err err = {0};
	assert_int_equal(floe_warehouse_open(NULL, c, true, &st, &err), 0);
	char want[256];
	snprintf(want, sizeof(want), "file://%s/rel/wh", dir);
	assert_string_equal(st->uri, want);
	assert_int_equal(floe_store_put(st, "k", "v", 1), 0);
	floe_store_free(st);
	floe_config_free(c);

	/* A path that cannot be made absolute: the warehouse says which, and why. */
	char lake[5000 + 32], *p = lake;
	p += sprintf(p, "{warehouse: ");
	for (int i = 0; i < 500; i++) /* beyond FLOE_PATH_MAX */
		p += sprintf(p, "abcdefghi/");
	sprintf(p, "x}");
	c = config(lake);
	st = NULL;
	err = (struct floe_err){0};
	int rc = floe_warehouse_open(NULL, c, true, &st, &err);
	assert_true(rc < 0);
	assert_null(st);
	assert_int_equal(err.code, rc);
	assert_non_null(strstr(err.msg, "cannot use warehouse abcdefghi/"));
	floe_config_free(c);
	assert_int_equal(chdir(cwd), 0);
}

static const char *s3_lake(int port, const char *creds)
{
	static char lake[512];
	snprintf(lake, sizeof(lake),
		 "{warehouse: \"s3://bucket/pre\", catalog: {type: s3}, s3: {endpoint: "
		 "\"http://127.0.0.1:%d\", region: eu-west-1, path_style: true, request_timeout: "
		 "5s, %s}}",
		 port, creds);
	return lake;
}

static void test_s3_credentials(void **state)
{
	(void)state;
	unsetenv("FLOE_TEST_NO_SUCH_KEY");
	struct floe_config *c = config(s3_lake(1, "access_key_id: \"env:FLOE_TEST_NO_SUCH_KEY\", "
						  "secret_access_key: \"env:FLOE_TEST_SK\""));
	struct floe_store *st = NULL;
	struct floe_err err = {0};
	assert_int_equal(floe_warehouse_open(NULL, c, false, &st, &err), FLOE_EINVAL);
	assert_null(st);
	assert_int_equal(err.code, FLOE_EINVAL);
	assert_string_equal(err.msg,
			    "lake.s3: cannot resolve env:FLOE_TEST_NO_SUCH_KEY: the environment "
			    "variable is not set");
	floe_config_free(c);

	/* No reference and no source that has any: the environment only, emptied. */
	unsetenv("AWS_ACCESS_KEY_ID");
	unsetenv("AWS_SECRET_ACCESS_KEY");
	unsetenv("AWS_SESSION_TOKEN");
	c = config(s3_lake(1, "credentials: [env]"));
	err = (struct floe_err){0};
	assert_int_equal(floe_warehouse_open(NULL, c, false, &st, &err), FLOE_EINVAL);
	assert_null(st);
	assert_non_null(strstr(err.msg, "no S3 credentials: "));
	floe_config_free(c);
}

static const char *const keys =
    "access_key_id: \"env:FLOE_TEST_AK\", secret_access_key: \"env:FLOE_TEST_SK\"";

static void test_s3_probe(void **state)
{
	(void)state;
	setenv("FLOE_TEST_AK", "AKIDEXAMPLE", 1);
	setenv("FLOE_TEST_SK", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", 1);
	/* A store that takes the second conditional create too. */
	static const struct canned ignores[] = {R(204, NULL, ""), R(200, NULL, ""),
						R(200, NULL, ""), R(204, NULL, "")};
	struct server sv;
	server_start(&sv, ignores, 4);
	struct floe_config *c = config(s3_lake(sv.port, keys));
	struct floe_store *st = NULL;
	struct floe_err err = {0};
	assert_int_equal(floe_warehouse_open(NULL, c, true, &st, &err), -ENOTSUP);
	assert_null(st);
	assert_non_null(strstr(err.msg, "ignores If-None-Match"));
	struct seen s[8];
	size_t n = server_finish(&sv, s, 8);
	assert_int_equal(n, 4);
	assert_string_equal(s[0].method, "DELETE");
	assert_string_equal(s[1].method, "PUT");
	char v[64];
	assert_true(header(&s[1], "If-None-Match", v, sizeof(v)));
	assert_non_null(strstr(s[1].target, "/bucket/pre/default/logs/metadata/.floe-probe-t-"));
	seen_free(s, n);
	floe_config_free(c);

	/* One that refuses it: opened, after a look for stale multipart uploads. */
	static const struct canned honours[] = {R(204, NULL, ""),
						R(200, NULL, ""),
						R(412, NULL, ""),
						R(200, NULL, ""),
						R(204, NULL, ""),
						R(200, "Content-Type: application/xml\r\n",
						  "<ListMultipartUploadsResult><IsTruncated>false</"
						  "IsTruncated></ListMultipartUploadsResult>")};
	server_start(&sv, honours, 6);
	c = config(s3_lake(sv.port, keys));
	assert_int_equal(floe_warehouse_open(NULL, c, true, &st, &err), 0);
	assert_string_equal(st->uri, "s3://bucket/pre");
	floe_store_free(st);
	n = server_finish(&sv, s, 8);
	assert_int_equal(n, 6);
	assert_string_equal(s[3].method, "HEAD"); /* the 412 was for a key that is there */
	assert_string_equal(s[4].method, "DELETE");
	assert_string_equal(s[5].method, "GET");
	assert_non_null(strstr(s[5].target, "uploads"));
	seen_free(s, n);
	floe_config_free(c);
}

/* A bucket that denies DELETE, as a --once timer starts floe every minute: the probe key
 * is the installation's, so the object a denied DELETE leaves is one, not one per start;
 * found there, the store's 412 for it is the proof. A store that ignores If-None-Match is
 * refused all the same. */
static void test_s3_probe_kept(void **state)
{
	(void)state;
	setenv("FLOE_TEST_AK", "AKIDEXAMPLE", 1);
	setenv("FLOE_TEST_SK", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", 1);
	static const char denied[] = "<Error><Code>AccessDenied</Code></Error>";
	static const char *const inst = "4f1c2a9e-1b7d-4c3e-9a55-0d6f7e8b9c10";
	static const struct canned kept[] = {R(403, "Content-Type: application/xml\r\n", denied),
					     R(412, NULL, ""), R(200, NULL, ""),
					     R(200, "Content-Type: application/xml\r\n",
					       "<ListMultipartUploadsResult><IsTruncated>false</"
					       "IsTruncated></ListMultipartUploadsResult>")};
	struct server sv;
	server_start(&sv, kept, 4);
	struct floe_config *c = config(s3_lake(sv.port, keys));
	struct floe_store *st = NULL;
	struct floe_err err = {0};
	assert_int_equal(floe_warehouse_open(NULL, c, false, &st, &err), 0);
	assert_int_equal(floe_warehouse_probe(st, c, inst, &err), 0);
	floe_store_free(st);
	struct seen s[8];
	size_t n = server_finish(&sv, s, 8);
	assert_int_equal(n, 4);
	assert_string_equal(s[0].method, "DELETE");
	assert_string_equal(s[1].method, "PUT");
	assert_non_null(strstr(s[1].target, "/bucket/pre/default/logs/metadata/.floe-probe-t-"
					    "4f1c2a9e-1b7d-4c3e-9a55-0d6f7e8b9c10"));
	assert_string_equal(s[2].method, "HEAD");
	assert_non_null(strstr(s[3].target, "uploads"));
	seen_free(s, n);
	floe_config_free(c);

	static const struct canned ignores[] = {
	    R(403, "Content-Type: application/xml\r\n", denied), R(200, NULL, ""), R(200, NULL, ""),
	    R(403, "Content-Type: application/xml\r\n", denied)};
	server_start(&sv, ignores, 4);
	c = config(s3_lake(sv.port, keys));
	assert_int_equal(floe_warehouse_open(NULL, c, false, &st, &err), 0);
	assert_int_equal(floe_warehouse_probe(st, c, inst, &err), -ENOTSUP);
	assert_non_null(strstr(err.msg, "ignores If-None-Match"));
	floe_store_free(st);
	n = server_finish(&sv, s, 8);
	assert_int_equal(n, 4);
	seen_free(s, n);
	floe_config_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_local, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_s3_credentials, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_s3_probe, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_s3_probe_kept, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

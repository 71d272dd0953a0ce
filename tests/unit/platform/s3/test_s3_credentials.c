/* Tests of platform/s3_credentials: credentials from the environment and from the shared
 * credentials file (found through AWS_SHARED_CREDENTIALS_FILE and AWS_PROFILE). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "formats/base/alloc.h"
#include "platform/s3/s3_credentials.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void test_env_and_file(void **state)
{
	struct floe_aws_credentials c = {0};
	struct floe_alloc a;
	floe_alloc_init(&a, 1 << 20);
	unsetenv("AWS_ACCESS_KEY_ID");
	unsetenv("AWS_SECRET_ACCESS_KEY");
	unsetenv("AWS_SESSION_TOKEN");
	assert_int_equal(floe_s3_credentials_from_env(&a, &c), -ENOENT);
	setenv("AWS_ACCESS_KEY_ID", "AKENV", 1);
	assert_int_equal(floe_s3_credentials_from_env(&a, &c), -ENOENT);
	setenv("AWS_SECRET_ACCESS_KEY", "SKENV", 1);
	setenv("AWS_SESSION_TOKEN", "TKENV", 1);
	assert_int_equal(floe_s3_credentials_from_env(&a, &c), 0);
	assert_string_equal(c.access_key_id, "AKENV");
	assert_string_equal(c.secret_access_key, "SKENV");
	assert_string_equal(c.session_token, "TKENV");
	floe_aws_credentials_fini(&c);

	char path[] = "/tmp/floe-test-aws-iniXXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	const char *ini = "[default]\naws_access_key_id=AD\naws_secret_access_key=SD\n"
			  "[ci]\naws_access_key_id=AC\naws_secret_access_key=SC\n";
	assert_int_equal(write(fd, ini, strlen(ini)), (ssize_t)strlen(ini));
	close(fd);
	setenv("AWS_SHARED_CREDENTIALS_FILE", path, 1);
	unsetenv("AWS_PROFILE");
	assert_int_equal(floe_s3_credentials_from_shared_file(&a, NULL, NULL, &c), 0);
	assert_string_equal(c.access_key_id, "AD");
	floe_aws_credentials_fini(&c);
	setenv("AWS_PROFILE", "ci", 1);
	assert_int_equal(floe_s3_credentials_from_shared_file(&a, NULL, NULL, &c), 0);
	assert_string_equal(c.access_key_id, "AC");
	floe_aws_credentials_fini(&c);
	assert_int_equal(floe_s3_credentials_from_shared_file(&a, path, "default", &c), 0);
	assert_string_equal(c.secret_access_key, "SD");
	floe_aws_credentials_fini(&c);
	unlink(path);
	assert_int_equal(floe_s3_credentials_from_shared_file(&a, NULL, NULL, &c), -ENOENT);
	unsetenv("AWS_SHARED_CREDENTIALS_FILE");
	unsetenv("AWS_PROFILE");
	floe_aws_credentials_fini(NULL);
	assert_int_equal(a.used, 0); /* the file and the copies came from the budget */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_env_and_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

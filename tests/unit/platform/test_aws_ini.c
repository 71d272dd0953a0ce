/* Tests of platform/s3_credentials: the shared-credentials INI parser (profiles, comments,
 * spacing, CRLF, errors with line numbers), the environment and the file lookup. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "platform/s3_credentials.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int parse(const char *text, const char *profile, struct floe_s3_credentials *c, size_t *line)
{
	return floe_s3_credentials_parse_ini(text, strlen(text), profile, c, line);
}

static void test_profiles(void **state)
{
	const char *ini = "# comment\n"
			  "; another\n"
			  "[default]\n"
			  "aws_access_key_id = AKDEFAULT\n"
			  "aws_secret_access_key=secret/default+x==\n"
			  "\n"
			  "[profile edge]\r\n"
			  "  aws_access_key_id\t=  AKEDGE  \r\n"
			  "aws_secret_access_key = s e c\r\n"
			  "aws_session_token = TOKEN\r\n"
			  "s3 =\n"
			  "  max_concurrent_requests = 4\n"
			  "[other]\n"
			  "aws_access_key_id = AKOTHER\n";
	struct floe_s3_credentials c = {0};
	assert_int_equal(parse(ini, NULL, &c, NULL), 0);
	assert_string_equal(c.access_key_id, "AKDEFAULT");
	assert_string_equal(c.secret_access_key, "secret/default+x==");
	assert_null(c.session_token);
	floe_s3_credentials_fini(&c);
	assert_null(c.access_key_id);

	size_t line = 0;
	/* The indented line under "[profile edge]" is not a sub-property: it is the key line,
	 * indented. It is skipped like sub-properties, so this profile lacks its key id. */
	assert_int_equal(parse(ini, "edge", &c, &line), -ENOENT);
	const char *ini2 = "[profile edge]\r\naws_access_key_id\t=  AKEDGE  \r\n"
			   "aws_secret_access_key = s e c\r\naws_session_token = TOKEN\r\n";
	assert_int_equal(parse(ini2, "edge", &c, NULL), 0);
	assert_string_equal(c.access_key_id, "AKEDGE");
	assert_string_equal(c.secret_access_key, "s e c");
	assert_string_equal(c.session_token, "TOKEN");
	floe_s3_credentials_fini(&c);

	/* Missing secret, missing profile. */
	assert_int_equal(parse(ini, "other", &c, NULL), -ENOENT);
	assert_int_equal(parse(ini, "nope", &c, NULL), -ENOENT);
	/* Later duplicates win; an empty token is no token. */
	const char *dup = "[default]\naws_access_key_id=A\naws_access_key_id=B\n"
			  "aws_secret_access_key=S\naws_session_token=\n";
	assert_int_equal(parse(dup, "default", &c, NULL), 0);
	assert_string_equal(c.access_key_id, "B");
	assert_null(c.session_token);
	floe_s3_credentials_fini(&c);
	/* No final newline. */
	assert_int_equal(
	    parse("[default]\naws_access_key_id=A\naws_secret_access_key=S", NULL, &c, NULL), 0);
	assert_string_equal(c.secret_access_key, "S");
	floe_s3_credentials_fini(&c);
}

static void test_errors(void **state)
{
	struct floe_s3_credentials c = {0};
	size_t line = 0;
	assert_int_equal(parse("[default]\naws_access_key_id=A\njunk line\n", NULL, &c, &line),
			 -EINVAL);
	assert_int_equal(line, 3);
	assert_int_equal(parse("[default\n", NULL, &c, &line), -EINVAL);
	assert_int_equal(line, 1);
	assert_int_equal(parse("[]\n", NULL, &c, &line), -EINVAL);
	assert_int_equal(parse("=value\n", NULL, &c, &line), -EINVAL);
	const char nul[] = "[default]\naws_access_key_id=A\0B\n";
	assert_int_equal(floe_s3_credentials_parse_ini(nul, sizeof(nul) - 1, NULL, &c, &line),
			 -EINVAL);
	assert_int_equal(line, 2);
	size_t big = 70 * 1024;
	char *p = malloc(big);
	memset(p, 'a', big);
	assert_int_equal(floe_s3_credentials_parse_ini(p, big, NULL, &c, &line), -E2BIG);
	free(p);
	assert_null(c.access_key_id);
	assert_int_equal(parse("", NULL, &c, NULL), -ENOENT);
}

static void test_env_and_file(void **state)
{
	struct floe_s3_credentials c = {0};
	unsetenv("AWS_ACCESS_KEY_ID");
	unsetenv("AWS_SECRET_ACCESS_KEY");
	unsetenv("AWS_SESSION_TOKEN");
	assert_int_equal(floe_s3_credentials_from_env(&c), -ENOENT);
	setenv("AWS_ACCESS_KEY_ID", "AKENV", 1);
	assert_int_equal(floe_s3_credentials_from_env(&c), -ENOENT);
	setenv("AWS_SECRET_ACCESS_KEY", "SKENV", 1);
	setenv("AWS_SESSION_TOKEN", "TKENV", 1);
	assert_int_equal(floe_s3_credentials_from_env(&c), 0);
	assert_string_equal(c.access_key_id, "AKENV");
	assert_string_equal(c.secret_access_key, "SKENV");
	assert_string_equal(c.session_token, "TKENV");
	floe_s3_credentials_fini(&c);

	char path[] = "/tmp/floe-test-aws-iniXXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	const char *ini = "[default]\naws_access_key_id=AD\naws_secret_access_key=SD\n"
			  "[ci]\naws_access_key_id=AC\naws_secret_access_key=SC\n";
	assert_int_equal(write(fd, ini, strlen(ini)), (ssize_t)strlen(ini));
	close(fd);
	setenv("AWS_SHARED_CREDENTIALS_FILE", path, 1);
	unsetenv("AWS_PROFILE");
	assert_int_equal(floe_s3_credentials_from_shared_file(NULL, NULL, &c), 0);
	assert_string_equal(c.access_key_id, "AD");
	floe_s3_credentials_fini(&c);
	setenv("AWS_PROFILE", "ci", 1);
	assert_int_equal(floe_s3_credentials_from_shared_file(NULL, NULL, &c), 0);
	assert_string_equal(c.access_key_id, "AC");
	floe_s3_credentials_fini(&c);
	assert_int_equal(floe_s3_credentials_from_shared_file(path, "default", &c), 0);
	assert_string_equal(c.secret_access_key, "SD");
	floe_s3_credentials_fini(&c);
	unlink(path);
	assert_int_equal(floe_s3_credentials_from_shared_file(NULL, NULL, &c), -ENOENT);
	unsetenv("AWS_SHARED_CREDENTIALS_FILE");
	unsetenv("AWS_PROFILE");
	floe_s3_credentials_fini(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_profiles),
	    cmocka_unit_test(test_errors),
	    cmocka_unit_test(test_env_and_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

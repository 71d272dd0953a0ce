/* Unit tests for platform/path: lexical normalisation and file:// URIs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "platform/path.h"

static void test_absolute(void **state)
{
	(void)state;
	char out[256];
	assert_int_equal(floe_path_absolute("/a//b/./c/../d/", out, sizeof(out)), 0);
	assert_string_equal(out, "/a/b/d");
	assert_int_equal(floe_path_absolute("/../..", out, sizeof(out)), 0);
	assert_string_equal(out, "/");
	char cwd[200], want[256];
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_int_equal(floe_path_absolute("x/y", out, sizeof(out)), 0);
	snprintf(want, sizeof(want), "%s/x/y", strcmp(cwd, "/") ? cwd : "");
	assert_string_equal(out, want);
	char tiny[4];
	assert_int_equal(floe_path_absolute("/abcdef", tiny, sizeof(tiny)), -ENAMETOOLONG);
}

static void test_uri(void **state)
{
	(void)state;
	char out[256];
	assert_int_equal(floe_path_from_uri("file:///var/lib/a%20b", out, sizeof(out)), 0);
	assert_string_equal(out, "/var/lib/a b");
	assert_int_equal(floe_path_from_uri("file://localhost/x", out, sizeof(out)), 0);
	assert_string_equal(out, "/x");
	assert_int_equal(floe_path_from_uri("file:/x/y", out, sizeof(out)), 0);
	assert_string_equal(out, "/x/y");
	assert_int_equal(floe_path_from_uri("relative/dir", out, sizeof(out)), 0);
	assert_string_equal(out, "relative/dir");
	assert_int_equal(floe_path_from_uri("file://otherhost/x", out, sizeof(out)), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_absolute), cmocka_unit_test(test_uri)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

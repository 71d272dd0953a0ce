/* Tests of formats/aws/ini: the shared-credentials INI reader (profiles, comments, spacing,
 * CRLF, errors with their line, nothing left allocated). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "formats/aws/credentials.h"
#include "formats/aws/ini.h"
#include "formats/base/alloc.h"
#include "formats/base/error.h"

#include <stdlib.h>
#include <string.h>

static struct floe_alloc budget;

/* Parses text; *line (if not NULL) gets the failing line's number from the message. */
static int parse_n(const char *text, size_t n, const char *profile, struct floe_aws_credentials *c,
		   size_t *line)
{
	struct floe_err e;
	floe_err_clear(&e);
	size_t used = budget.used;
	int rc = floe_aws_ini_credentials(&budget, text, n, profile, c, &e);
	if (rc) {
		assert_int_equal(e.code, rc);
		assert_int_equal(budget.used, used);
	}
	if (line && rc && rc != FLOE_ENOTFOUND) {
		const char *at = strstr(e.msg, "line ");
		assert_non_null(at);
		*line = (size_t)strtoul(at + 5, NULL, 10);
	}
	return rc;
}

static int parse(const char *text, const char *profile, struct floe_aws_credentials *c, size_t *line)
{
	return parse_n(text, strlen(text), profile, c, line);
}

static int setup(void **state)
{
	(void)state;
	floe_alloc_init(&budget, 1 << 20);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	assert_int_equal(budget.used, 0);
	return 0;
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
	struct floe_aws_credentials c = {0};
	assert_int_equal(parse(ini, NULL, &c, NULL), 0);
	assert_string_equal(c.access_key_id, "AKDEFAULT");
	assert_string_equal(c.secret_access_key, "secret/default+x==");
	assert_null(c.session_token);
	floe_aws_credentials_fini(&c);
	assert_null(c.access_key_id);

	size_t line = 0;
	/* The indented line under "[profile edge]" is not a sub-property: it is the key line,
	 * indented. It is skipped like sub-properties, so this profile lacks its key id. */
	assert_int_equal(parse(ini, "edge", &c, &line), FLOE_ENOTFOUND);
	const char *ini2 = "[profile edge]\r\naws_access_key_id\t=  AKEDGE  \r\n"
			   "aws_secret_access_key = s e c\r\naws_session_token = TOKEN\r\n";
	assert_int_equal(parse(ini2, "edge", &c, NULL), 0);
	assert_string_equal(c.access_key_id, "AKEDGE");
	assert_string_equal(c.secret_access_key, "s e c");
	assert_string_equal(c.session_token, "TOKEN");
	floe_aws_credentials_fini(&c);

	/* Missing secret, missing profile. */
	assert_int_equal(parse(ini, "other", &c, NULL), FLOE_ENOTFOUND);
	assert_int_equal(parse(ini, "nope", &c, NULL), FLOE_ENOTFOUND);
	/* Later duplicates win; an empty token is no token. */
	const char *dup = "[default]\naws_access_key_id=A\naws_access_key_id=B\n"
			  "aws_secret_access_key=S\naws_session_token=\n";
	assert_int_equal(parse(dup, "default", &c, NULL), 0);
	assert_string_equal(c.access_key_id, "B");
	assert_null(c.session_token);
	floe_aws_credentials_fini(&c);
	/* No final newline. */
	assert_int_equal(
	    parse("[default]\naws_access_key_id=A\naws_secret_access_key=S", NULL, &c, NULL), 0);
	assert_string_equal(c.secret_access_key, "S");
	floe_aws_credentials_fini(&c);
}

static void test_errors(void **state)
{
	struct floe_aws_credentials c = {0};
	size_t line = 0;
	assert_int_equal(parse("[default]\naws_access_key_id=A\njunk line\n", NULL, &c, &line),
			 FLOE_EPARSE);
	assert_int_equal(line, 3);
	assert_int_equal(parse("[default\n", NULL, &c, &line), FLOE_EPARSE);
	assert_int_equal(line, 1);
	assert_int_equal(parse("[]\n", NULL, &c, &line), FLOE_EPARSE);
	assert_int_equal(parse("=value\n", NULL, &c, &line), FLOE_EPARSE);
	const char nul[] = "[default]\naws_access_key_id=A\0B\n";
	assert_int_equal(parse_n(nul, sizeof(nul) - 1, NULL, &c, &line), FLOE_EPARSE);
	assert_int_equal(line, 2);
	size_t big = 70 * 1024;
	char *p = malloc(big);
	memset(p, 'a', big);
	assert_int_equal(parse_n(p, big, NULL, &c, &line), FLOE_ELIMIT);
	assert_int_equal(line, 1);
	free(p);
	assert_null(c.access_key_id);
	assert_int_equal(parse("", NULL, &c, NULL), FLOE_ENOTFOUND);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_profiles, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

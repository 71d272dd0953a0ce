/* Tests of formats/aws/credentials: the container/IMDS JSON document (members, escapes,
 * duplicates, nesting, every refusal with its reason and offset), the STS answer, and the
 * credentials' own storage, all through a budget that ends empty. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "formats/aws/credentials.h"
#include "formats/base/alloc.h"
#include "formats/base/error.h"

#include <stdio.h>
#include <string.h>

#define T0 INT64_C(1440938160) /* 2015-08-30 12:36:00 UTC */

static struct floe_alloc budget;

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

static int json(const char *doc, struct floe_aws_credentials *c, int64_t *exp, struct floe_err *e)
{
	floe_err_clear(e);
	int rc = floe_aws_cred_json(&budget, doc, strlen(doc), c, exp, e);
	if (rc)
		assert_int_equal(e->code, rc);
	return rc;
}

static void test_json(void **state)
{
	(void)state;
	struct floe_aws_credentials c = {0};
	struct floe_err e;
	int64_t exp = -1;
	const char *doc = " {\"a\":[1,-2.5e+3,{\"AccessKeyId\":\"inner\"},true,null],"
			  "\"AccessKeyId\" : \"A\\\"\\\\\\/\\n\\u00e9\\ud83d\\ude00\","
			  "\"AccessKeyId\":\"second\",\"SecretAccessKey\":\"s\",\"Num\":12} \n";
	assert_int_equal(json(doc, &c, &exp, &e), 0);
	/* The first top-level member wins; escapes decode to these exact bytes. */
	assert_string_equal(c.access_key_id, "A\"\\/\n\xc3\xa9\xf0\x9f\x98\x80");
	assert_string_equal(c.secret_access_key, "s");
	assert_null(c.session_token);
	assert_int_equal(exp, 0);
	assert_ptr_equal(c.alloc, &budget);
	floe_aws_credentials_fini(&c);
	assert_null(c.access_key_id);

	const char *imds = "{\"Code\":\"Success\",\"AccessKeyId\":\"ASIA\",\"SecretAccessKey\":\"k\","
			   "\"Token\":\"t\",\"Expiration\":\"2015-08-30T18:36:00Z\"}";
	assert_int_equal(json(imds, &c, &exp, &e), 0);
	assert_string_equal(c.session_token, "t");
	assert_int_equal(exp, T0 + 6 * 3600);
	floe_aws_credentials_fini(&c);
}

static void test_json_refused(void **state)
{
	(void)state;
	struct floe_aws_credentials c = {0};
	struct floe_err e;
	int64_t exp;
	struct {
		const char *doc, *why;
	} bad[] = {
	    {"{\"Code\":\"AssumeRoleUnauthorizedAccess\",\"AccessKeyId\":\"a\"}",
	     "answer has Code AssumeRoleUnauthorizedAccess"},
	    {"{\"AccessKeyId\":\"a\"}", "answer lacks a usable AccessKeyId/SecretAccessKey"},
	    {"{\"AccessKeyId\":\"\",\"SecretAccessKey\":\"s\"}",
	     "answer lacks a usable AccessKeyId/SecretAccessKey"},
	    {"{\"AccessKeyId\":1,\"SecretAccessKey\":\"s\"}",
	     "answer lacks a usable AccessKeyId/SecretAccessKey"},
	    {"{\"AccessKeyId\":\"a\\u0000b\",\"SecretAccessKey\":\"s\"}",
	     "answer lacks a usable AccessKeyId/SecretAccessKey"},
	    {"{\"AccessKeyId\":\"a\",\"SecretAccessKey\":\"s\",\"Token\":7}",
	     "answer has an unusable Token"},
	    {"{\"AccessKeyId\":\"a\",\"SecretAccessKey\":\"s\",\"Expiration\":\"soon\"}",
	     "answer has a bad Expiration"},
	    {"{\"AccessKeyId\":\"a\",\"SecretAccessKey\":\"s\",\"Expiration\":[]}",
	     "answer has an unusable Expiration"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(json(bad[i].doc, &c, &exp, &e), FLOE_EFORMAT);
		assert_string_equal(e.msg, bad[i].why);
		assert_null(c.access_key_id);
	}
	/* Not JSON, or not an object: the offset of the fault. */
	struct {
		const char *text;
		size_t off;
	} malformed[] = {
	    {"", 0},
	    {"[]", 0},
	    {"{\"k\":\"v\"", 8},
	    {"{\"k\":\"v\",}", 9},
	    {"{\"k\":\"v\"} x", 10},
	    {"{\"k\":01}", 6},
	    {"{\"k\":tru}", 5},
	    {"{\"k\" \"v\"}", 5},
	};
	for (size_t i = 0; i < sizeof(malformed) / sizeof(malformed[0]); i++) {
		assert_int_equal(json(malformed[i].text, &c, &exp, &e), FLOE_EPARSE);
		if (e.offset != malformed[i].off)
			fail_msg("case %zu (%s): offset %zu", i, malformed[i].text, e.offset);
	}
	/* A token of the longest size is taken, one byte more is not. */
	char big[FLOE_AWS_TOKEN_MAX + 128];
	int n = snprintf(big, sizeof(big), "{\"AccessKeyId\":\"a\",\"SecretAccessKey\":\"s\",\"Token\":\"");
	memset(big + n, 'x', FLOE_AWS_TOKEN_MAX);
	strcpy(big + n + FLOE_AWS_TOKEN_MAX, "\"}");
	assert_int_equal(json(big, &c, &exp, &e), 0);
	assert_int_equal(strlen(c.session_token), FLOE_AWS_TOKEN_MAX);
	floe_aws_credentials_fini(&c);
	memset(big + n, 'x', FLOE_AWS_TOKEN_MAX + 1);
	strcpy(big + n + FLOE_AWS_TOKEN_MAX + 1, "\"}");
	assert_int_equal(json(big, &c, &exp, &e), FLOE_EFORMAT);
	/* Out of budget: refused, nothing kept. */
	floe_alloc_init(&budget, 512);
	assert_int_equal(json(big, &c, &exp, &e), FLOE_ENOMEM);
}

static void test_sts(void **state)
{
	(void)state;
	struct floe_aws_credentials c = {0};
	struct floe_err e;
	int64_t exp = 0;
	const char *ok = "<AssumeRoleWithWebIdentityResponse><AssumeRoleWithWebIdentityResult>"
			 "<Credentials><AccessKeyId>ASIASTS1</AccessKeyId>"
			 "<SecretAccessKey>sts/secret+key</SecretAccessKey>"
			 "<SessionToken>FwoG&amp;tok</SessionToken>"
			 "<Expiration>2015-08-30T13:36:00Z</Expiration></Credentials>"
			 "</AssumeRoleWithWebIdentityResult></AssumeRoleWithWebIdentityResponse>";
	floe_err_clear(&e);
	assert_int_equal(floe_aws_cred_sts(&budget, ok, strlen(ok), &c, &exp, &e), 0);
	assert_string_equal(c.access_key_id, "ASIASTS1");
	assert_string_equal(c.secret_access_key, "sts/secret+key");
	assert_string_equal(c.session_token, "FwoG&tok");
	assert_int_equal(exp, T0 + 3600);
	floe_aws_credentials_fini(&c);
	const char *bad[] = {
	    "<R><AccessKeyId>a</AccessKeyId><SecretAccessKey>s</SecretAccessKey>"
	    "<Expiration>2015-08-30T13:36:00Z</Expiration></R>",
	    "<R><AccessKeyId>a</AccessKeyId><SecretAccessKey>s</SecretAccessKey>"
	    "<SessionToken>t</SessionToken><Expiration>later</Expiration></R>",
	    "<R><AccessKeyId>a</AccessKeyId>",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		floe_err_clear(&e);
		assert_int_equal(floe_aws_cred_sts(&budget, bad[i], strlen(bad[i]), &c, &exp, &e),
				 FLOE_EFORMAT);
		assert_string_equal(e.msg, "answer lacks usable Credentials (AccessKeyId, "
					   "SecretAccessKey, SessionToken, Expiration)");
	}
}

static void test_set(void **state)
{
	(void)state;
	struct floe_aws_credentials c = {0};
	assert_int_equal(floe_aws_credentials_set(&budget, "a", "s", "", &c), 0);
	assert_null(c.session_token);
	floe_aws_credentials_fini(&c);
	floe_aws_credentials_fini(NULL);
	floe_aws_credentials_fini(&c);
	struct floe_alloc none;
	floe_alloc_init(&none, 4);
	assert_int_equal(floe_aws_credentials_set(&none, "akid", "secret", "tok", &c), FLOE_ENOMEM);
	assert_null(c.access_key_id);
	assert_int_equal(none.used, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_json, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_json_refused, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_sts, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_set, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* The S3 client's account of failures: which answers count as errors and in which class
 * (/metrics' floe_s3_errors_total), and the codes and messages an operator reads. Against
 * fake_http.h's server on loopback. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "formats/base/alloc.h"
#include "formats/base/error.h"
#include "platform/s3/s3.h"
#include "platform/s3/s3_stats.h"
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "fake_s3.h"

#define NOSUCHKEY "<Error><Code>NoSuchKey</Code><Message>The specified key does not exist.</Message></Error>"

/* Answers a request expects are not errors in the counts; 401 and 403 have a class of
 * their own; a missing bucket has its own code and says so. */
static void test_expected_answers(void **state)
{
	(void)state;
	struct canned script[] = {
	    R(404, "Content-Length: 0\r\n", NULL),
	    R(404, "Content-Type: application/xml\r\n", NOSUCHKEY),
	    R(404, NULL, NULL),
	    R(412, NULL, "<Error><Code>PreconditionFailed</Code></Error>"),
	    R(403, NULL, "<Error><Code>AccessDenied</Code></Error>"),
	    R(404, NULL, "<Error><Code>NoSuchBucket</Code><BucketName>bkt</BucketName></Error>"),
	    R(404, NULL, "<Error><Code>NoSuchKey</Code></Error>"),
	};
	struct server sv;
	server_start(&sv, script, 7);
	char ep[64];
	struct floe_s3_options o = fake_s3_options(&sv, ep, sizeof(ep));
	o.max_retries = -1; /* none of these answers is retried anyway */
	struct floe_s3 *s3 = NULL;
	assert_int_equal(floe_s3_new(&o, &s3), 0);
	struct floe_s3_stats before, after;
	floe_s3_stats_get(&before);
	struct floe_s3_object_info info;
	void *data = NULL;
	size_t len = 0;
	assert_int_equal(floe_s3_head(s3, "absent", &info), -ENOENT);
	assert_string_equal(floe_s3_last_error(s3), "");
	assert_int_equal(floe_s3_get(s3, "absent", 100, &data, &len), -ENOENT);
	assert_int_equal(floe_s3_delete(s3, "absent"), 0);
	struct floe_s3_put_options po = {.if_none_match = true};
	assert_int_equal(floe_s3_put(s3, "taken", "x", 1, &po, NULL), FLOE_S3_EPRECONDITION);
	assert_int_equal(floe_s3_put(s3, "k", "x", 1, NULL, NULL), FLOE_S3_EAUTH);
	assert_non_null(strstr(floe_s3_last_error(s3), "HTTP 403 AccessDenied"));
	assert_int_equal(floe_s3_get(s3, "k", 100, &data, &len), FLOE_S3_ENOBUCKET);
	assert_non_null(strstr(floe_s3_last_error(s3), "/bkt/k: HTTP 404 NoSuchBucket"));
	assert_non_null(strstr(floe_strerror(FLOE_S3_ENOBUCKET), "NoSuchBucket"));
	/* A 404 the request does not expect (to a PUT) stays an error. */
	assert_int_equal(floe_s3_put(s3, "k", "x", 1, NULL, NULL), -ENOENT);
	floe_s3_stats_get(&after);
	for (int k = 0; k < FLOE_S3_KINDS; k++) {
		uint64_t d[FLOE_S3_FAILS];
		for (int c = 0; c < FLOE_S3_FAILS; c++)
			d[c] = after.errors[k][c] - before.errors[k][c];
		assert_int_equal(d[FLOE_S3_FAIL_4XX],
				 k == FLOE_S3_KIND_GET || k == FLOE_S3_KIND_PUT ? 1 : 0);
		assert_int_equal(d[FLOE_S3_FAIL_AUTH], k == FLOE_S3_KIND_PUT ? 1 : 0);
	}
	assert_int_equal(after.requests[FLOE_S3_KIND_HEAD] - before.requests[FLOE_S3_KIND_HEAD], 1);
	assert_string_equal(floe_s3_fail_name(FLOE_S3_FAIL_AUTH), "auth");
	floe_s3_free(s3);
	struct seen s[7];
	size_t n = server_finish(&sv, s, 7);
	assert_int_equal(n, 7);
	/* The 412 answered a conditional create: the answer it expects. */
	char v[16];
	assert_string_equal(s[3].method, "PUT");
	assert_true(header(&s[3], "If-None-Match", v, sizeof(v)));
	assert_string_equal(v, "*");
	seen_free(s, n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_expected_answers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

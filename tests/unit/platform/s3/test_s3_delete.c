/* DeleteObjects (platform/s3/s3_delete.c) against the fake S3 server: the request is a
 * POST ?delete with the escaped keys, Content-MD5 of the body, quiet mode; 1001 keys take
 * two requests; per-key errors of the answer reach the caller; a 501 NotImplemented
 * answer is -ENOTSUP (the store then deletes key by key). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "formats/base/alloc.h"
#include "platform/s3/s3.h"

#include <arpa/inet.h>
#include <errno.h>
#include <mbedtls/base64.h>
#include <mbedtls/md.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fake_s3.h"

static int64_t now_fn(void *ctx)
{
	(void)ctx;
	return T0;
}

static void no_sleep(void *ctx, int64_t ms)
{
	(void)ctx;
	(void)ms;
}

static struct floe_s3 *client(const struct server *sv)
{
	char ep[64];
	struct floe_s3_options o = fake_s3_options(sv, ep, sizeof(ep));
	o.max_retries = 1;
	o.backoff_base_ms = 1;
	o.backoff_cap_ms = 1;
	o.sleep_fn = no_sleep;
	o.now_fn = now_fn;
	struct floe_s3 *s3 = NULL;
	assert_int_equal(floe_s3_new(&o, &s3), 0);
	return s3;
}

struct errs {
	int n;
	char key[64], code[64], msg[64];
};

static int on_error(void *ctx, const char *key, const char *code, const char *msg)
{
	struct errs *e = ctx;
	e->n++;
	snprintf(e->key, sizeof(e->key), "%s", key);
	snprintf(e->code, sizeof(e->code), "%s", code);
	snprintf(e->msg, sizeof(e->msg), "%s", msg);
	return 0;
}

/* The Content-MD5 header of s must be base64(MD5(its body)). */
static void check_md5(const struct seen *s)
{
	unsigned char md5[16], b64[32];
	size_t olen = 0;
	char v[64];
	assert_true(header(s, "Content-MD5", v, sizeof(v)));
	assert_int_equal(mbedtls_md(mbedtls_md_info_from_type(MBEDTLS_MD_MD5), (const unsigned char *)s->body,
				    s->body_len, md5),
			 0);
	assert_int_equal(mbedtls_base64_encode(b64, sizeof(b64), &olen, md5, sizeof(md5)), 0);
	assert_string_equal(v, (const char *)b64);
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;
	for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

static void test_batches_and_errors(void **state)
{
	(void)state;
	struct canned script[] = {
	    R(200, NULL, "<?xml version=\"1.0\"?><DeleteResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
			 "<Error><Key>k&amp;7</Key><Code>AccessDenied</Code><Message>no</Message></Error>"
			 "</DeleteResult>"),
	    R(200, NULL, "<DeleteResult></DeleteResult>"),
	};
	struct server sv;
	server_start(&sv, script, 2);
	struct floe_s3 *s3 = client(&sv);
	static char names[1001][16];
	const char *keys[1001];
	for (int i = 0; i < 1001; i++) {
		snprintf(names[i], sizeof(names[i]), i == 7 ? "k&%d" : "k<%d>", i);
		keys[i] = names[i];
	}
	struct errs e = {0};
	size_t failed = 0;
	assert_int_equal(floe_s3_delete_objects(s3, keys, 1001, on_error, &e, &failed), 0);
	assert_int_equal(failed, 1);
	assert_int_equal(e.n, 1);
	assert_string_equal(e.key, "k&7");
	assert_string_equal(e.code, "AccessDenied");
	assert_string_equal(e.msg, "no");
	floe_s3_free(s3);
	struct seen s[2];
	assert_int_equal(server_finish(&sv, s, 2), 2);
	for (int i = 0; i < 2; i++) {
		assert_string_equal(s[i].method, "POST");
		assert_string_equal(s[i].target, "/bkt?delete=");
		check_md5(&s[i]);
		assert_non_null(strstr(s[i].body, "<Quiet>true</Quiet>"));
	}
	assert_int_equal(count(s[0].body, "<Object>"), 1000);
	assert_int_equal(count(s[1].body, "<Object>"), 1);
	assert_non_null(strstr(s[0].body, "<Key>k&amp;7</Key>"));
	assert_non_null(strstr(s[0].body, "<Key>k&lt;0&gt;</Key>"));
	assert_non_null(strstr(s[1].body, "<Key>k&lt;1000&gt;</Key>"));
	seen_free(s, 2);
}

static void test_not_implemented(void **state)
{
	(void)state;
	struct canned script[] = {
	    R(501, NULL, "<Error><Code>NotImplemented</Code></Error>"),
	    R(400, NULL, "<Error><Code>MalformedXML</Code></Error>"),
	    R(200, NULL, "<NotADeleteResult/>"),
	};
	struct server sv;
	server_start(&sv, script, 3);
	struct floe_s3 *s3 = client(&sv);
	const char *keys[] = {"a", "b"};
	assert_int_equal(floe_s3_delete_objects(s3, keys, 2, NULL, NULL, NULL), -ENOTSUP);
	assert_int_not_equal(floe_s3_delete_objects(s3, keys, 2, NULL, NULL, NULL), 0);
	/* An answer that is not a DeleteResult is not taken for success. */
	assert_int_not_equal(floe_s3_delete_objects(s3, keys, 2, NULL, NULL, NULL), 0);
	floe_s3_free(s3);
	struct seen s[3];
	assert_int_equal(server_finish(&sv, s, 3), 3);
	seen_free(s, 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_batches_and_errors),
	    cmocka_unit_test(test_not_implemented),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

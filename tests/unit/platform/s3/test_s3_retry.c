/* The S3 client when requests fail, against the fake S3 server of fake_http.h:
 * retries with full-jitter backoff until success or exhaustion (and the counts for
 * /metrics), a skewed clock learnt from Date, connection errors retried then reported,
 * the retry budget, a HEAD refused for skew, a cut GET, and a body the memory budget
 * cannot hold refused without a retry. Sleeping and randomness are injected. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "formats/base/alloc.h"
#include "platform/http.h"
#include "platform/s3/s3.h"
#include "platform/s3/s3_stats.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fake_s3.h"
#include "s3_fixture.h"

static void test_retry_then_success(void **state)
{
	struct canned script[] = {
	    R(503, NULL, "<Error><Code>SlowDown</Code></Error>"),
	    R(500, NULL, "<Error><Code>InternalError</Code></Error>"),
	    R(200, "ETag: \"x\"\r\n", NULL),
	    R(503, NULL, NULL),
	    R(503, NULL, NULL),
	    R(502, NULL, NULL),
	    R(504, NULL, NULL),
	    R(400, NULL, "<Error><Code>BadDigest</Code></Error>"),
	};
	struct server sv;
	server_start(&sv, script, 8);
	struct fakes f = {.rnd = UINT64_C(0xffffffffffffffff)};
	struct floe_s3 *s3 = client(&sv, &f, NULL);
	struct floe_s3_stats before, after;
	floe_s3_stats_get(&before);
	assert_int_equal(floe_s3_put(s3, "k", "abc", 3, NULL, NULL), 0);
	assert_int_equal(floe_s3_last_attempts(s3), 3);
	assert_int_equal(f.sleeps, 2);
	/* Full jitter within [0, base * 2^retry]: 2^64-1 mod 101 and mod 201. */
	assert_int_equal(f.slept[0], (int64_t)(UINT64_C(0xffffffffffffffff) % 101));
	assert_int_equal(f.slept[1], (int64_t)(UINT64_C(0xffffffffffffffff) % 201));
	/* Retries exhausted (3 retries = 4 attempts). */
	f.sleeps = 0;
	assert_int_equal(floe_s3_put(s3, "k", "abc", 3, NULL, NULL), FLOE_S3_EUNAVAILABLE);
	assert_int_equal(floe_s3_last_attempts(s3), 4);
	assert_int_equal(f.sleeps, 3);
	for (int i = 0; i < 3; i++)
		assert_true(f.slept[i] <= 100LL << i);
	/* A 400 is final at once. */
	f.sleeps = 0;
	assert_int_equal(floe_s3_put(s3, "k", "abc", 3, NULL, NULL), FLOE_S3_EHTTP);
	assert_string_equal(floe_s3_last_error_code(s3), "BadDigest");
	assert_int_equal(f.sleeps, 0);
	/* The counts for /metrics: 8 PUTs, 5 of them retries, errors by class. */
	floe_s3_stats_get(&after);
	const int k = FLOE_S3_KIND_PUT;
	assert_int_equal(after.requests[k] - before.requests[k], 8);
	assert_int_equal(after.retries[k] - before.retries[k], 5);
	assert_int_equal(
	    after.errors[k][FLOE_S3_FAIL_THROTTLED] - before.errors[k][FLOE_S3_FAIL_THROTTLED], 3);
	assert_int_equal(after.errors[k][FLOE_S3_FAIL_5XX] - before.errors[k][FLOE_S3_FAIL_5XX], 3);
	assert_int_equal(after.errors[k][FLOE_S3_FAIL_4XX] - before.errors[k][FLOE_S3_FAIL_4XX], 1);
	assert_int_equal(after.requests[FLOE_S3_KIND_GET], before.requests[FLOE_S3_KIND_GET]);
	floe_s3_free(s3);
	struct seen s[8];
	size_t n = server_finish(&sv, s, 8);
	assert_int_equal(n, 8);
	for (size_t i = 0; i < n; i++) {
		assert_string_equal(s[i].target, "/bkt/k");
		assert_int_equal(s[i].body_len, 3);
		check_signature(&s[i]);
	}
	seen_free(s, n);
}

static void test_clock_skew(void **state)
{
	/* The server is an hour ahead: it refuses, we learn from Date and retry at once. */
	struct canned script[] = {
	    R(403, "Date: Sun, 30 Aug 2015 13:36:00 GMT\r\n",
	      "<Error><Code>RequestTimeTooSkewed</Code></Error>"),
	    R(200, "Date: Sun, 30 Aug 2015 13:36:00 GMT\r\n", NULL),
	    R(403, NULL, "<Error><Code>SignatureDoesNotMatch</Code></Error>"),
	};
	struct server sv;
	server_start(&sv, script, 3);
	struct fakes f = {0};
	struct floe_s3 *s3 = client(&sv, &f, NULL);
	assert_int_equal(floe_s3_put(s3, "k", "x", 1, NULL, NULL), 0);
	assert_int_equal(floe_s3_clock_offset(s3), 3600);
	assert_int_equal(f.sleeps, 0);
	assert_int_equal(floe_s3_put(s3, "k", "x", 1, NULL, NULL), FLOE_S3_EAUTH);
	floe_s3_free(s3);
	struct seen s[3];
	size_t n = server_finish(&sv, s, 3);
	assert_int_equal(n, 3);
	char v[64];
	assert_true(header(&s[0], "x-amz-date", v, sizeof(v)));
	assert_string_equal(v, "20150830T123600Z");
	assert_true(header(&s[1], "x-amz-date", v, sizeof(v)));
	assert_string_equal(v, "20150830T133600Z");
	assert_true(header(&s[2], "x-amz-date", v, sizeof(v)));
	assert_string_equal(v, "20150830T133600Z");
	for (size_t i = 0; i < n; i++)
		check_signature(&s[i]);
	seen_free(s, n);
}

static void test_connection_errors(void **state)
{
	/* Nothing listens on a closed port: connect errors are retried, then reported. */
	int lfd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(lfd, (struct sockaddr *)&a, sizeof(a)), 0);
	socklen_t al = sizeof(a);
	getsockname(lfd, (struct sockaddr *)&a, &al);
	struct server sv = {.port = ntohs(a.sin_port)};
	close(lfd);
	struct fakes f = {0};
	struct floe_s3 *s3 = client(&sv, &f, NULL);
	struct floe_s3_put_options po = {.if_none_match = true};
	/* Even a conditional put is retried: nothing was sent. */
	assert_int_equal(floe_s3_put(s3, "k", "x", 1, &po, NULL), FLOE_S3_ETRANSPORT);
	assert_int_equal(floe_s3_last_attempts(s3), 4);
	assert_int_equal(f.sleeps, 3);
	/* The message names the URL and curl's reason, not only "connection failed". */
	char url[64];
	snprintf(url, sizeof(url), "PUT http://127.0.0.1:%d/bkt/k: ", sv.port);
	const char *e = floe_s3_last_error(s3);
	assert_non_null(strstr(e, url));
	assert_true(strlen(e) > strlen(url) + 10);
	/* Asked once (the agent's start-up): one attempt, no backoff. */
	f.sleeps = 0;
	floe_s3_set_max_retries(s3, -1);
	assert_int_equal(floe_s3_put(s3, "k", "x", 1, &po, NULL), FLOE_S3_ETRANSPORT);
	assert_int_equal(floe_s3_last_attempts(s3), 1);
	assert_int_equal(f.sleeps, 0);
	floe_s3_free(s3);
}

static void budget(struct floe_s3_options *o, const struct server *sv)
{
	o->max_retries = 10;
	o->backoff_base_ms = 1000;
	o->backoff_cap_ms = 100000;
	o->retry_budget_ms = 2500;
}

static void test_retry_budget_and_cuts(void **state)
{
	struct canned script[] = {
	    R(503, NULL, NULL),
	    R(503, NULL, NULL),
	    R(503, NULL, NULL),
	    /* HEAD: a 403 without body but with a Date an hour ahead is retried once. */
	    R(403, "Date: Sun, 30 Aug 2015 13:36:00 GMT\r\nContent-Length: 0\r\n", NULL),
	    R(200, "Content-Length: 7\r\n", NULL),
	    /* GET cut before the answer: re-sent (by curl itself on a reused connection, or
	     * by our retry loop; GETs are idempotent). */
	    DROP,
	    R(200, NULL, "abc"),
	};
	struct server sv;
	server_start(&sv, script, 7);
	struct fakes f = {.rnd = 1000}; /* every pause = 1000 ms (1000 mod (ceil+1)) */
	struct floe_s3 *s3 = client_with(&sv, &f, NULL, budget);
	assert_int_equal(floe_s3_put(s3, "k", "x", 1, NULL, NULL), FLOE_S3_EUNAVAILABLE);
	/* 2 pauses of 1 s fit in 2.5 s, a third does not: 3 attempts although 10 retries. */
	assert_int_equal(f.sleeps, 2);
	assert_int_equal(floe_s3_last_attempts(s3), 3);
	struct floe_s3_object_info info;
	assert_int_equal(floe_s3_head(s3, "k", &info), 0);
	assert_int_equal(info.size, 7);
	assert_int_equal(floe_s3_last_attempts(s3), 2);
	assert_int_equal(floe_s3_clock_offset(s3), 3600);
	void *d = NULL;
	size_t len = 0;
	f.sleeps = 0;
	assert_int_equal(floe_s3_get(s3, "k", 10, &d, &len), 0);
	assert_int_equal(len, 3);
	assert_memory_equal(d, "abc", 3);
	floe_free(NULL, d);
	floe_s3_free(s3);
	struct seen s[7];
	size_t n = server_finish(&sv, s, 7);
	assert_int_equal(n, 7);
	char v[64];
	assert_true(header(&s[4], "x-amz-date", v, sizeof(v)));
	assert_string_equal(v, "20150830T133600Z");
	for (size_t i = 0; i < n; i++)
		check_signature(&s[i]);
	seen_free(s, n);
}

/* Every allocation of the client comes from its budget: a body the budget cannot hold
 * is refused with FLOE_ENOMEM (and not retried), one it can hold is counted while the
 * caller keeps it, and nothing is left over once the client is gone. */
static struct floe_alloc mem;

static void with_budget(struct floe_s3_options *o, const struct server *sv)
{
	(void)sv;
	o->alloc = &mem;
}

static void test_budget(void **state)
{
	(void)state;
	static char body[100 * 1024 + 1];
	memset(body, 'b', sizeof(body) - 1);
	struct canned script[] = {R(200, NULL, body), R(200, NULL, body)};
	struct server sv;
	server_start(&sv, script, 2);
	struct fakes f = {0};
	floe_alloc_init(&mem, 64 * 1024);
	struct floe_s3 *s3 = client_with(&sv, &f, NULL, with_budget);
	size_t held = mem.used; /* the client itself */
	assert_true(held > 0);
	void *data = NULL;
	size_t len = 0;
	assert_int_equal(floe_s3_get(s3, "k", 1 << 20, &data, &len), FLOE_ENOMEM);
	assert_null(data);
	assert_int_equal(floe_s3_last_attempts(s3), 1);
	assert_int_equal(mem.used, held);
	mem.limit = 1 << 20;
	assert_int_equal(floe_s3_get(s3, "k", 1 << 20, &data, &len), 0);
	assert_int_equal(len, sizeof(body) - 1);
	assert_true(mem.used >= held + len);
	floe_free(&mem, data);
	assert_int_equal(mem.used, held);
	floe_s3_free(s3);
	assert_int_equal(mem.used, 0);
	struct seen s[2];
	assert_int_equal(server_finish(&sv, s, 2), 2);
	seen_free(s, 2);
}

/* A store that says when to come back (503 SlowDown or 429 with Retry-After, in seconds
 * or as an HTTP date) is not asked sooner, up to FLOE_HTTP_RETRY_AFTER_MAX_S; when the
 * request gives up, what is left of the wait is the caller's (floe_s3_retry_after_ms),
 * until a request succeeds. Before, the retries came after the backoff's 0.1 to 1.6 s
 * whatever the store asked. */
static void test_retry_after(void **state)
{
	(void)state;
	struct canned script[] = {
	    R(503, "Retry-After: 30\r\n", "<Error><Code>SlowDown</Code></Error>"),
	    R(200, "ETag: \"x\"\r\n", NULL),
	    R(429, "Retry-After: 7200\r\n", NULL),
	    R(429, "Retry-After: 7200\r\n", NULL),
	    R(503,
	      "Date: Sun, 30 Aug 2015 12:36:00 GMT\r\nRetry-After: Sun, 30 Aug 2015 12:36:45 "
	      "GMT\r\n",
	      NULL),
	    R(200, "ETag: \"x\"\r\n", NULL),
	};
	struct server sv;
	server_start(&sv, script, 6);
	struct fakes f = {.rnd = 0}; /* the backoff's jitter draws 0 */
	struct floe_s3 *s3 = client(&sv, &f, NULL);
	assert_int_equal(floe_s3_put(s3, "k", "abc", 3, NULL, NULL), 0);
	assert_int_equal(f.sleeps, 1);
	assert_int_equal(f.slept[0], 30000);
	assert_int_equal(floe_s3_retry_after_ms(s3), 0);
	/* Two hours asked: 5 minutes waited, then the retry budget (5 minutes) is spent. */
	f.sleeps = 0;
	assert_int_equal(floe_s3_put(s3, "k", "abc", 3, NULL, NULL), FLOE_S3_EUNAVAILABLE);
	assert_int_equal(f.sleeps, 1);
	assert_int_equal(f.slept[0], FLOE_HTTP_RETRY_AFTER_MAX_S * 1000);
	int64_t left = floe_s3_retry_after_ms(s3);
	assert_true(left > FLOE_HTTP_RETRY_AFTER_MAX_S * 1000 - 60000 &&
		    left <= FLOE_HTTP_RETRY_AFTER_MAX_S * 1000);
	/* A date, against the answer's own Date: 45 s. A success clears the wait. */
	f.sleeps = 0;
	assert_int_equal(floe_s3_put(s3, "k", "abc", 3, NULL, NULL), 0);
	assert_int_equal(f.sleeps, 1);
	assert_int_equal(f.slept[0], 45000);
	assert_int_equal(floe_s3_retry_after_ms(s3), 0);
	floe_s3_free(s3);
	struct seen s[6];
	size_t n = server_finish(&sv, s, 6);
	assert_int_equal(n, 6);
	seen_free(s, n);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_retry_then_success),
	    cmocka_unit_test(test_clock_skew),
	    cmocka_unit_test(test_connection_errors),
	    cmocka_unit_test(test_retry_budget_and_cuts),
	    cmocka_unit_test(test_budget),
	    cmocka_unit_test(test_retry_after),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

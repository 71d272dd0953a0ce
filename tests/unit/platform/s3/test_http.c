/* platform/http.h against a scripted server: the answer's status, ETag and body, the
 * headers and body sent, a body over the cap, a connection closed without an answer, and
 * a request sent `once` that libcurl must not send again on a new connection after its
 * reused one closed. */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "fake_http.h"

#include "formats/base/error.h"
#include "platform/http.h"

static struct floe_http *client(void)
{
	struct floe_http *h = NULL;
	assert_int_equal(floe_http_new(NULL, &h), 0);
	return h;
}

static void url_of(const struct server *sv, const char *path, char *out, size_t cap)
{
	snprintf(out, cap, "http://127.0.0.1:%d%s", sv->port, path);
}

static void test_exchange(void **state)
{
	(void)state;
	struct canned script[] = {
	    R(200, "ETag: \"abc-1\"\r\nContent-Type: application/json\r\n", "{\"ok\":true}"),
	    R(304, "ETag: \"abc-1\"\r\n", ""),
	};
	struct server sv;
	server_start(&sv, script, 2);
	struct floe_http *h = client();
	char url[128], why[256] = "";
	url_of(&sv, "/v1/x", url, sizeof(url));
	const char *hdrs[] = {"Authorization: Bearer tok-1", "Content-Type: application/json", NULL};
	struct floe_http_req rq = {.method = "POST", .url = url, .headers = hdrs, .body = "{\"a\":1}", .body_len = 7};
	struct floe_http_resp r = {0};
	assert_int_equal(floe_http_run(h, &rq, &r, why, sizeof(why)), FLOE_HTTP_ANSWERED);
	assert_int_equal(r.status, 200);
	assert_string_equal(r.etag, "\"abc-1\"");
	assert_int_equal(r.len, 11);
	assert_string_equal(r.data, "{\"ok\":true}");
	floe_http_resp_fini(&r);
	const char *inm[] = {"If-None-Match: \"abc-1\"", NULL};
	struct floe_http_req get = {.method = "GET", .url = url, .headers = inm};
	assert_int_equal(floe_http_run(h, &get, &r, why, sizeof(why)), FLOE_HTTP_ANSWERED);
	assert_int_equal(r.status, 304);
	assert_int_equal(r.len, 0);
	floe_http_resp_fini(&r);
	floe_http_free(h);

	struct seen s[2];
	assert_int_equal(server_finish(&sv, s, 2), 2);
	char v[128];
	assert_string_equal(s[0].method, "POST");
	assert_string_equal(s[0].target, "/v1/x");
	assert_true(header(&s[0], "Authorization", v, sizeof(v)));
	assert_string_equal(v, "Bearer tok-1");
	assert_false(header(&s[0], "Expect", v, sizeof(v)));
	assert_string_equal(s[0].body, "{\"a\":1}");
	assert_string_equal(s[1].method, "GET");
	assert_true(header(&s[1], "If-None-Match", v, sizeof(v)));
	seen_free(s, 2);
}

/* A body past the cap is cut and said so, never taken whole. */
static void test_cap(void **state)
{
	(void)state;
	static char big[5000];
	memset(big, 'x', sizeof(big) - 1);
	struct canned script[] = {R(200, NULL, big)};
	struct server sv;
	server_start(&sv, script, 1);
	struct floe_http *h = client();
	char url[128], why[256] = "";
	url_of(&sv, "/big", url, sizeof(url));
	struct floe_http_req rq = {.method = "GET", .url = url, .max = 1000};
	struct floe_http_resp r = {0};
	assert_int_equal(floe_http_run(h, &rq, &r, why, sizeof(why)), FLOE_HTTP_FAILED);
	assert_true(r.too_big);
	assert_true(r.len <= 1000);
	assert_string_equal(why, "answer over 1000 bytes");
	floe_http_resp_fini(&r);
	floe_http_free(h);
	struct seen s[1];
	assert_int_equal(server_finish(&sv, s, 1), 1);
	seen_free(s, 1);
}

/* A request whose connection closes without an answer fails after it was sent; sent
 * `once`, it is not sent again, though it went out on a reused connection. */
static void test_once(void **state)
{
	(void)state;
	struct canned script[] = {R(200, NULL, "{}"), DROP, R(409, NULL, "{}")};
	struct server sv;
	server_start(&sv, script, 3);
	struct floe_http *h = client();
	char url[128], why[256] = "";
	url_of(&sv, "/commit", url, sizeof(url));
	struct floe_http_req rq = {.method = "GET", .url = url};
	struct floe_http_resp r = {0};
	assert_int_equal(floe_http_run(h, &rq, &r, why, sizeof(why)), FLOE_HTTP_ANSWERED);
	floe_http_resp_fini(&r);
	struct floe_http_req commit = {.method = "POST", .url = url, .body = "{}", .body_len = 2, .once = true};
	assert_int_equal(floe_http_run(h, &commit, &r, why, sizeof(why)), FLOE_HTTP_FAILED);
	assert_int_equal(r.status, 0);
	assert_true(why[0] != '\0');
	floe_http_resp_fini(&r);
	/* The third answer is for a request the test sends; had the commit been sent again,
	 * it would have taken it (and answered 409). */
	struct floe_http_req last = {.method = "GET", .url = url};
	assert_int_equal(floe_http_run(h, &last, &r, why, sizeof(why)), FLOE_HTTP_ANSWERED);
	assert_int_equal(r.status, 409);
	floe_http_resp_fini(&r);
	floe_http_free(h);
	struct seen s[3];
	assert_int_equal(server_finish(&sv, s, 3), 3);
	assert_string_equal(s[1].method, "POST");
	assert_string_equal(s[2].method, "GET");
	seen_free(s, 3);
}

/* Nothing listens: not sent. */
static void test_unreachable(void **state)
{
	(void)state;
	struct server sv;
	struct canned script[] = {R(200, NULL, "")};
	server_start(&sv, script, 1);
	int port = sv.port;
	struct floe_http *h = client();
	char url[128], why[256] = "";
	struct floe_http_req ok = {.method = "GET", .url = url};
	url_of(&sv, "/", url, sizeof(url));
	struct floe_http_resp r = {0};
	assert_int_equal(floe_http_run(h, &ok, &r, why, sizeof(why)), FLOE_HTTP_ANSWERED);
	floe_http_resp_fini(&r);
	struct seen s[1];
	assert_int_equal(server_finish(&sv, s, 1), 1);
	seen_free(s, 1);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/", port); /* the server is gone */
	struct floe_http_req rq = {.method = "GET", .url = url, .once = true};
	assert_int_equal(floe_http_run(h, &rq, &r, why, sizeof(why)), FLOE_HTTP_UNREACHABLE);
	floe_http_resp_fini(&r);
	floe_http_free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_exchange),
	    cmocka_unit_test(test_cap),
	    cmocka_unit_test(test_once),
	    cmocka_unit_test(test_unreachable),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

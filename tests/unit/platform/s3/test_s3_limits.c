/* Every S3 request ends: the deadline that grows with the bytes moved, the stop grace (for
 * requests in flight, for backoff, and for credential fetches), listings whose server
 * repeats its continuation tokens, redirects reported instead of followed, and a store
 * that refuses every conditional create. Against the fake server of fake_http.h; the stop
 * request and backoff sleeps are injected, time is the real monotonic clock. The checks
 * are on the order of events (the server had the request, then the stop came, then the
 * grace was spent, then the call returned), never on how long a call took: a loaded
 * machine may take any time. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "platform/clock.h"
#include "formats/base/alloc.h"
#include "platform/s3/s3.h"
#include "platform/s3/s3_credprov.h"
#include "platform/s3/s3_limits.h"
#include "platform/s3/store_s3.h"
#include "platform/store.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fake_http.h"

/* The provider's last failure as text, into out. */
static const char *prov_error(struct floe_s3_credprov *p, char *out, size_t cap)
{
	struct floe_err e;
	floe_s3_credprov_error(p, &e);
	snprintf(out, cap, "%.*s", (int)cap - 1, e.msg);
	return out;
}

#define AK "TESTACCESSKEY0000001"
#define SK "testsecretkey000000000000000000000000001"

/* ---- the client under test ----------------------------------------------------------- */

struct fakes {
	/* The stop: none; or, with stopped, one that arrived stop_age_ms ago and stays that
	 * old (the backoff's decisions then do not depend on how long an attempt took); or
	 * one that arrives when the server stop_on has a request, its age counted from then
	 * on the monotonic clock (stop_at_ns). */
	bool stopped;
	int64_t stop_age_ms;
	const struct server *stop_on;
	int64_t stop_at_ns;
	int64_t max_age; /* the oldest the stop function has said the stop is */
	int sleeps;
	int64_t slept;
	uint64_t rnd; /* the backoff's random draw: pause = rnd % (ceiling + 1) */
};

/* Whether the fake server has read a request (its log says so). */
static bool server_has_request(const struct server *sv)
{
	FILE *fp = fopen(sv->log, "r");
	if (!fp)
		return false;
	char line[16] = "";
	bool has = fgets(line, sizeof(line), fp) && strncmp(line, "REQ ", 4) == 0;
	fclose(fp);
	return has;
}

static int64_t fake_stop(void *ctx)
{
	struct fakes *f = ctx;
	int64_t now = floe_clock_mono_ns();
	if (f->stop_on && !f->stop_at_ns && server_has_request(f->stop_on))
		f->stop_at_ns = now;
	int64_t age;
	if (f->stop_at_ns)
		age = (now - f->stop_at_ns) / 1000000;
	else if (f->stopped)
		age = f->stop_age_ms;
	else
		return -1;
	if (age > f->max_age)
		f->max_age = age;
	return age;
}

static void fake_sleep(void *ctx, int64_t ms)
{
	struct fakes *f = ctx;
	f->sleeps++;
	f->slept += ms;
}

static uint64_t fake_random(void *ctx)
{
	return ((struct fakes *)ctx)->rnd;
}

static int64_t fake_now(void *ctx)
{
	(void)ctx;
	return T0;
}

static void options(struct floe_s3_options *o, const struct server *sv, struct fakes *f, char *ep,
		    size_t cap)
{
	snprintf(ep, cap, "http://127.0.0.1:%d", sv->port);
	*o = (struct floe_s3_options){.endpoint = ep,
				      .region = "us-east-1",
				      .bucket = "bkt",
				      .path_style = true,
				      .credentials = {AK, SK, NULL, NULL},
				      .max_retries = 3,
				      .backoff_base_ms = 100,
				      .backoff_cap_ms = 1000,
				      .random_fn = fake_random,
				      .sleep_fn = fake_sleep,
				      .now_fn = fake_now,
				      .fn_ctx = f,
				      .stop_fn = fake_stop,
				      .stop_ctx = f,
				      .stop_grace_ms = 300,
				      .request_timeout_ms = 300};
}

static struct floe_s3 *client(const struct server *sv, struct fakes *f,
			      void (*tweak)(struct floe_s3_options *o))
{
	char ep[64];
	struct floe_s3_options o;
	options(&o, sv, f, ep, sizeof(ep));
	if (tweak)
		tweak(&o);
	struct floe_s3 *s3 = NULL;
	assert_int_equal(floe_s3_new(&o, &s3), 0);
	return s3;
}

/* ---- the numbers ----------------------------------------------------------------------- */

static int64_t stopped_long_ago(void *ctx)
{
	(void)ctx;
	return 5000;
}

static void test_limit_numbers(void **state)
{
	(void)state;
	struct floe_s3_limits l;
	floe_s3_limits_init(&l, 0, 0, 0, NULL, NULL);
	assert_int_equal(l.base_ms, FLOE_S3_DEADLINE_BASE_MS);
	assert_int_equal(l.min_rate, FLOE_S3_MIN_RATE);
	assert_int_equal(l.grace_ms, FLOE_S3_STOP_GRACE_MS);
	/* A 1 KiB GET: 30.25 s at most; a 16 MiB part: 30 s + 4096 s. */
	assert_int_equal(floe_s3_limits_deadline_ms(&l, 1024), 30250);
	assert_int_equal(floe_s3_limits_deadline_ms(&l, 16 << 20), 30000 + 4096 * 1000);
	assert_int_equal(floe_s3_limits_check(&l, 30000, 0), FLOE_S3_LIMITS_GO);
	assert_int_equal(floe_s3_limits_check(&l, 30001, 0), FLOE_S3_LIMITS_OVERDUE);
	assert_int_equal(floe_s3_limits_check(&l, 31000, 4096), FLOE_S3_LIMITS_GO);
	/* No deadline at all, but still the stop. */
	floe_s3_limits_init(&l, -1, 0, 1000, stopped_long_ago, NULL);
	assert_int_equal(floe_s3_limits_deadline_ms(&l, 0), INT64_MAX);
	assert_int_equal(floe_s3_limits_grace_left_ms(&l), 0);
	assert_int_equal(floe_s3_limits_check(&l, 0, 0), FLOE_S3_LIMITS_STOPPED);
	floe_s3_limits_init(&l, 100, 1, 9000, stopped_long_ago, NULL);
	assert_int_equal(floe_s3_limits_grace_left_ms(&l), 4000);
	assert_int_equal(floe_s3_limits_deadline_ms(&l, INT64_MAX), INT64_MAX);
}

/* ---- the deadline ------------------------------------------------------------------- */

/* A server that sends its headers and then a byte every 100 ms (the 1 byte/s low-speed
 * limit never fires) is cut at the deadline, and the retry gets the answer. */
static void test_deadline_cuts_a_drip(void **state)
{
	(void)state;
	struct canned script[] = {DRIP(200, "0123456789012345678901234567890123456789", 100),
				  R(200, NULL, "ok")};
	struct server sv;
	server_start(&sv, script, 2);
	struct fakes f = {0};
	struct floe_s3 *s3 = client(&sv, &f, NULL);
	void *data = NULL;
	size_t len = 0;
	/* The first answer was cut (its drip alone takes 4 s, and no stop came): a second
	 * attempt, after a backoff, got the second answer. */
	assert_int_equal(floe_s3_get(s3, "k", 100, &data, &len), 0);
	assert_int_equal(len, 2);
	assert_memory_equal(data, "ok", 2);
	floe_free(NULL, data);
	assert_int_equal(floe_s3_last_attempts(s3), 2);
	assert_int_equal(f.sleeps, 1);
	assert_int_equal(f.max_age, 0);
	floe_s3_free(s3);
	struct seen s[2];
	assert_int_equal(server_finish(&sv, s, 2), 2);
	seen_free(s, 2);
}

static void slow_floor(struct floe_s3_options *o)
{
	o->request_timeout_ms = 200;
	o->min_rate = 50; /* bytes per second */
}

/* A transfer that keeps moving above the floor rate is never cut, however long it takes
 * beyond the base (a whole-request timeout would cut it at 200 ms). */
static void test_deadline_grows_with_bytes(void **state)
{
	(void)state;
	char body[61];
	memset(body, 'b', 60);
	body[60] = '\0';
	struct canned script[] = {DRIP(200, body, 10)};
	struct server sv;
	server_start(&sv, script, 1);
	struct fakes f = {0};
	struct floe_s3 *s3 = client(&sv, &f, slow_floor);
	void *data = NULL;
	size_t len = 0;
	assert_int_equal(floe_s3_get(s3, "k", 100, &data, &len), 0);
	assert_int_equal(len, 60);
	floe_free(NULL, data);
	assert_int_equal(floe_s3_last_attempts(s3), 1);
	floe_s3_free(s3);
	struct seen s[1];
	assert_int_equal(server_finish(&sv, s, 1), 1);
	seen_free(s, 1);
}

/* ---- the stop ------------------------------------------------------------------------ */

static void no_deadline(struct floe_s3_options *o)
{
	o->request_timeout_ms = -1;
}

/* A stop that arrives while a PUT is stalled (once the server has it) ends it after the
 * grace, not before; nothing is started after that. */
static void test_stop_cuts_a_stalled_request(void **state)
{
	(void)state;
	struct canned script[] = {STALL};
	struct server sv;
	server_start(&sv, script, 1);
	struct fakes f = {.stop_on = &sv};
	struct floe_s3 *s3 = client(&sv, &f, no_deadline);
	assert_int_equal(floe_s3_put(s3, "k", "abc", 3, NULL, NULL), FLOE_S3_ESTOPPED);
	assert_true(f.stop_at_ns != 0);
	assert_true(f.max_age >= 300); /* the 300 ms grace was spent before it gave up */
	assert_int_equal(floe_s3_last_attempts(s3), 1);
	assert_int_equal(f.sleeps, 0);
	/* Past the grace nothing goes out: not one attempt. */
	struct floe_s3_object_info info;
	assert_int_equal(floe_s3_head(s3, "k", &info), FLOE_S3_ESTOPPED);
	assert_int_equal(floe_s3_last_attempts(s3), 0);
	floe_s3_free(s3);
	struct seen s[2];
	assert_int_equal(server_finish(&sv, s, 2), 1);
	seen_free(s, 1);
}

/* A conditional write cut by the stop after it was sent may have been applied. */
static void test_stop_cut_conditional_is_ambiguous(void **state)
{
	(void)state;
	struct canned script[] = {STALL};
	struct server sv;
	server_start(&sv, script, 1);
	struct fakes f = {.stop_on = &sv};
	struct floe_s3 *s3 = client(&sv, &f, no_deadline);
	struct floe_s3_put_options po = {.if_none_match = true};
	assert_int_equal(floe_s3_put(s3, "v2.metadata.json", "{}", 2, &po, NULL),
			 FLOE_S3_EAMBIGUOUS);
	floe_s3_free(s3);
	struct seen s[1];
	assert_int_equal(server_finish(&sv, s, 1), 1);
	seen_free(s, 1);
}

/* During the grace a retry still happens when its backoff fits in what is left of it;
 * once the backoff would outlast the grace, the last error is returned at once. */
static void test_stop_and_backoff(void **state)
{
	(void)state;
	struct canned script[] = {R(503, NULL, NULL), R(200, NULL, NULL), R(503, NULL, NULL)};
	struct server sv;
	server_start(&sv, script, 3);
	struct fakes f = {.stopped = true, .stop_age_ms = 0, .rnd = 50};
	struct floe_s3 *s3 = client(&sv, &f, NULL);
	/* Just stopped: a 50 ms backoff fits in the 300 ms grace. */
	assert_int_equal(floe_s3_put(s3, "k", "a", 1, NULL, NULL), 0);
	assert_int_equal(floe_s3_last_attempts(s3), 2);
	assert_int_equal(f.sleeps, 1);
	/* 200 ms into the grace, 100 ms are left: a 100 ms backoff would outlast them. */
	f.stop_age_ms = 200;
	f.rnd = 100;
	f.sleeps = 0;
	assert_int_equal(floe_s3_put(s3, "k", "a", 1, NULL, NULL), FLOE_S3_EUNAVAILABLE);
	assert_int_equal(f.sleeps, 0);
	floe_s3_free(s3);
	struct seen s[3];
	assert_int_equal(server_finish(&sv, s, 3), 3);
	seen_free(s, 3);
}

/* ---- redirects ----------------------------------------------------------------------- */

static void test_redirect_is_reported(void **state)
{
	(void)state;
	struct canned script[] = {
	    R(307,
	      "Location: https://bkt.s3.eu-west-1.amazonaws.com/k\r\n"
	      "x-amz-bucket-region: eu-west-1\r\n",
	      "<Error><Code>TemporaryRedirect</Code></Error>"),
	    R(301, "x-amz-bucket-region: eu-west-1\r\nContent-Length: 0\r\n", NULL),
	};
	struct server sv;
	server_start(&sv, script, 2);
	struct fakes f = {0};
	struct floe_s3 *s3 = client(&sv, &f, NULL);
	assert_int_equal(floe_s3_put(s3, "k", "abc", 3, NULL, NULL), FLOE_S3_EREDIRECT);
	assert_int_equal(floe_s3_last_status(s3), 307);
	assert_string_equal(floe_s3_last_error_code(s3), "TemporaryRedirect");
	assert_string_equal(floe_s3_last_location(s3), "https://bkt.s3.eu-west-1.amazonaws.com/k");
	assert_int_equal(floe_s3_last_attempts(s3), 1);
	struct floe_s3_object_info info;
	assert_int_equal(floe_s3_head(s3, "k", &info), FLOE_S3_EREDIRECT);
	assert_int_equal(floe_s3_last_status(s3), 301);
	assert_string_equal(floe_s3_last_location(s3), "");
	assert_int_equal(f.sleeps, 0);
	assert_string_equal(floe_strerror(FLOE_S3_EREDIRECT),
			    "redirected: wrong region or endpoint");
	floe_s3_free(s3);
	struct seen s[2];
	assert_int_equal(server_finish(&sv, s, 2), 2);
	seen_free(s, 2);
}

/* ---- listings that do not end -------------------------------------------------------- */

#define PAGE(tok)                                                                                  \
	R(200, NULL,                                                                               \
	  "<ListBucketResult><IsTruncated>true</IsTruncated><NextContinuationToken>" tok           \
	  "</NextContinuationToken><Contents><Key>k</Key><Size>1</Size></Contents>"                \
	  "</ListBucketResult>")

static int count_keys(void *ctx, const char *key, int64_t size)
{
	(void)key;
	(void)size;
	(*(int *)ctx)++;
	return 0;
}

static void test_list_repeated_token(void **state)
{
	(void)state;
	/* The same token again, then a cycle of two. */
	struct canned script[] = {PAGE("A"), PAGE("A"), PAGE("A"), PAGE("B"), PAGE("A"), PAGE("B")};
	struct server sv;
	server_start(&sv, script, 6);
	struct fakes f = {0};
	struct floe_s3 *s3 = client(&sv, &f, NULL);
	int keys = 0;
	assert_int_equal(floe_s3_list(s3, "p/", count_keys, &keys), FLOE_S3_ELOOP);
	assert_int_equal(keys, 2);
	keys = 0;
	assert_int_equal(floe_s3_list(s3, "p/", count_keys, &keys), FLOE_S3_ELOOP);
	assert_int_equal(keys, 4);
	floe_s3_free(s3);
	struct seen s[6];
	assert_int_equal(server_finish(&sv, s, 6), 6);
	assert_string_equal(s[1].target, "/bkt?list-type=2&prefix=p%2F&continuation-token=A");
	assert_string_equal(s[5].target, "/bkt?list-type=2&prefix=p%2F&continuation-token=A");
	seen_free(s, 6);
}

#define UPLOADS_PAGE                                                                               \
	R(200, NULL,                                                                               \
	  "<ListMultipartUploadsResult><IsTruncated>true</IsTruncated>"                            \
	  "<NextKeyMarker>d/a</NextKeyMarker><NextUploadIdMarker>u1</NextUploadIdMarker>"          \
	  "<Upload><Key>d/a</Key><UploadId>u1</UploadId>"                                          \
	  "<Initiated>2015-08-29T12:00:00.000Z</Initiated></Upload>"                               \
	  "</ListMultipartUploadsResult>")

static int count_uploads(void *ctx, const char *key, const char *id, const char *when)
{
	(void)key;
	(void)id;
	(void)when;
	(*(int *)ctx)++;
	return 0;
}

static void test_uploads_repeated_markers(void **state)
{
	(void)state;
	struct canned script[] = {UPLOADS_PAGE, UPLOADS_PAGE};
	struct server sv;
	server_start(&sv, script, 2);
	struct fakes f = {0};
	struct floe_s3 *s3 = client(&sv, &f, NULL);
	int n = 0;
	assert_int_equal(floe_s3_multipart_list(s3, "d/", count_uploads, &n), FLOE_S3_ELOOP);
	assert_int_equal(n, 2);
	floe_s3_free(s3);
	struct seen s[2];
	assert_int_equal(server_finish(&sv, s, 2), 2);
	seen_free(s, 2);
}

/* ---- creates the store refuses ------------------------------------------------------- */

static void test_store_refusing_creates(void **state)
{
	(void)state;
	const char *pf = "<Error><Code>PreconditionFailed</Code></Error>";
	struct canned script[] = {
	    R(412, NULL, pf),
	    R(404, "Content-Length: 0\r\n", NULL), /* HEAD: the key is not there */
	    R(412, NULL, pf),
	    R(200, "Content-Length: 5\r\nETag: \"e\"\r\n", NULL), /* HEAD: it is */
	};
	struct server sv;
	server_start(&sv, script, 4);
	struct fakes f = {0};
	char ep[64];
	struct floe_s3_options o;
	options(&o, &sv, &f, ep, sizeof(ep));
	struct floe_store *st = NULL;
	assert_int_equal(floe_store_s3_new(&o, "wh", &st), 0);
	assert_int_equal(floe_store_put_if_absent(st, "t/metadata/v1.metadata.json", "{}", 2),
			 FLOE_S3_EREFUSED);
	assert_int_equal(floe_store_put_if_absent(st, "t/metadata/v1.metadata.json", "{}", 2),
			 -EEXIST);
	floe_store_free(st);
	struct seen s[4];
	assert_int_equal(server_finish(&sv, s, 4), 4);
	char v[16];
	assert_true(header(&s[0], "If-None-Match", v, sizeof(v)));
	assert_string_equal(v, "*");
	assert_string_equal(s[1].method, "HEAD");
	assert_string_equal(s[1].target, "/bkt/wh/t/metadata/v1.metadata.json");
	seen_free(s, 4);
}

/* ---- credential fetches -------------------------------------------------------------- */

/* A container endpoint that never answers (with a long timeout) is given up after the
 * stop grace, and nothing is fetched after it. */
static void test_credprov_stop(void **state)
{
	(void)state;
	struct canned script[] = {STALL};
	struct server sv;
	server_start(&sv, script, 1);
	char url[96];
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/creds", sv.port);
	struct fakes f = {.stop_on = &sv};
	struct floe_s3_credprov_options o = {.providers = FLOE_S3_CREDPROV_CONTAINER,
					     .container_full_uri = url,
					     .metadata_timeout_ms = 15000,
					     .stop_grace_ms = 300,
					     .stop_fn = fake_stop,
					     .stop_ctx = &f};
	struct floe_s3_credprov *p = NULL;
	assert_int_equal(floe_s3_credprov_new(&o, &p), 0);
	struct floe_aws_credentials c = {0};
	/* The stop comes once the endpoint has the request; curl asks the progress callback
	 * at least once a second while nothing moves, so the grace is seen spent. */
	assert_int_equal(floe_s3_credprov_get(p, T0, &c, NULL, NULL), FLOE_S3_ESTOPPED);
	assert_true(f.stop_at_ns != 0);
	assert_true(f.max_age >= 300);
	/* Past the grace no fetch starts: the second call is refused as stopped, not by
	 * the endpoint (which serves one connection only). */
	assert_int_equal(floe_s3_credprov_get(p, T0, &c, NULL, NULL), FLOE_S3_ESTOPPED);
	floe_s3_credprov_free(p);
	struct seen s[1];
	assert_int_equal(server_finish(&sv, s, 1), 1);
	seen_free(s, 1);
}

/* The chain runs in the order given; sources not given are not tried. */
static void test_credprov_order(void **state)
{
	(void)state;
	const char *path = "/tmp/floe-test-limits-credentials";
	FILE *fp = fopen(path, "w");
	assert_non_null(fp);
	fputs("[default]\naws_access_key_id = AKFILE\naws_secret_access_key = skfile\n", fp);
	assert_int_equal(fclose(fp), 0);
	setenv("AWS_ACCESS_KEY_ID", "AKENV", 1);
	setenv("AWS_SECRET_ACCESS_KEY", "skenv", 1);
	struct floe_s3_credprov_options o = {
	    .providers = FLOE_S3_CREDPROV_ENV | FLOE_S3_CREDPROV_SHARED_FILE,
	    .order = {FLOE_S3_CREDPROV_SHARED_FILE, FLOE_S3_CREDPROV_ENV},
	    .shared_file = path};
	struct floe_s3_credprov *p = NULL;
	struct floe_aws_credentials c = {0};
	assert_int_equal(floe_s3_credprov_new(&o, &p), 0);
	assert_int_equal(floe_s3_credprov_get(p, T0, &c, NULL, NULL), 0);
	assert_string_equal(c.access_key_id, "AKFILE");
	assert_string_equal(floe_s3_credprov_source(p), "shared-file");
	floe_s3_credprov_free(p);
	/* Without an order: the SDKs' (environment first). */
	memset(o.order, 0, sizeof(o.order));
	assert_int_equal(floe_s3_credprov_new(&o, &p), 0);
	assert_int_equal(floe_s3_credprov_get(p, T0, &c, NULL, NULL), 0);
	assert_string_equal(c.access_key_id, "AKENV");
	floe_s3_credprov_free(p);
	/* Only the file: the environment is not looked at. */
	o.providers = FLOE_S3_CREDPROV_SHARED_FILE;
	o.shared_file = "/nonexistent/credentials";
	assert_int_equal(floe_s3_credprov_new(&o, &p), 0);
	assert_int_equal(floe_s3_credprov_get(p, T0, &c, NULL, NULL), FLOE_S3_EAUTH);
	char err[512];
	assert_null(strstr(prov_error(p, err, sizeof(err)), "env"));
	floe_s3_credprov_free(p);
	floe_aws_credentials_fini(&c);
	unsetenv("AWS_ACCESS_KEY_ID");
	unsetenv("AWS_SECRET_ACCESS_KEY");
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_limit_numbers),
	    cmocka_unit_test(test_deadline_cuts_a_drip),
	    cmocka_unit_test(test_deadline_grows_with_bytes),
	    cmocka_unit_test(test_stop_cuts_a_stalled_request),
	    cmocka_unit_test(test_stop_cut_conditional_is_ambiguous),
	    cmocka_unit_test(test_stop_and_backoff),
	    cmocka_unit_test(test_redirect_is_reported),
	    cmocka_unit_test(test_list_repeated_token),
	    cmocka_unit_test(test_uploads_repeated_markers),
	    cmocka_unit_test(test_store_refusing_creates),
	    cmocka_unit_test(test_credprov_stop),
	    cmocka_unit_test(test_credprov_order),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Tests of platform/s3 against a fake S3 server that this test runs in a forked child on
 * 127.0.0.1 (ephemeral port): the child answers scripted responses and records every
 * request; the parent then checks request lines, headers, bodies and recomputes each
 * signature from what actually arrived. Sleeping and randomness are injected. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "formats/base/alloc.h"
#include "platform/s3/s3.h"
#include "platform/s3/s3_stats.h"
#include "platform/sha.h"
#include "platform/s3/sigv4.h"

#include <arpa/inet.h>
#include <errno.h>
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

static void pct_decode(const char *p, size_t n, char *out)
{
	size_t o = 0;
	for (size_t i = 0; i < n; i++) {
		if (p[i] == '%' && i + 2 < n + 1) {
			char hx[3] = {p[i + 1], p[i + 2], 0};
			out[o++] = (char)strtol(hx, NULL, 16);
			i += 2;
		} else {
			out[o++] = p[i];
		}
	}
	out[o] = '\0';
}

/* Recomputes the signature from the request as received and compares. */
static void check_signature(const struct seen *s)
{
	char auth[1024], date[64], hash[128], signed_list[512];
	assert_true(header(s, "Authorization", auth, sizeof(auth)));
	assert_true(header(s, "x-amz-date", date, sizeof(date)));
	assert_true(header(s, "x-amz-content-sha256", hash, sizeof(hash)));
	char scope_date[9];
	memcpy(scope_date, date, 8);
	scope_date[8] = 0;
	char prefix[128];
	snprintf(prefix, sizeof(prefix),
		 "AWS4-HMAC-SHA256 Credential=" AK "/%s/us-east-1/s3/aws4_request, SignedHeaders=",
		 scope_date);
	assert_true(strncmp(auth, prefix, strlen(prefix)) == 0);
	const char *sl = auth + strlen(prefix);
	const char *se = strstr(sl, ", Signature=");
	assert_non_null(se);
	memcpy(signed_list, sl, (size_t)(se - sl));
	signed_list[se - sl] = 0;
	assert_non_null(strstr(signed_list, "host"));
	assert_non_null(strstr(signed_list, "x-amz-content-sha256"));
	assert_non_null(strstr(signed_list, "x-amz-date"));
	/* The payload hash must be the body's. */
	char body_hash[65];
	assert_int_equal(floe_sha256_hex(s->body, s->body_len, body_hash), 0);
	assert_string_equal(hash, body_hash);

	struct floe_sigv4_header h[16];
	char vals[16][1024], names[16][600];
	size_t nh = 0;
	for (char *tok = signed_list, *next; tok && *tok; tok = next) {
		next = strchr(tok, ';');
		if (next)
			*next++ = 0;
		snprintf(names[nh], sizeof(names[nh]), "%s", tok);
		assert_true(header(s, tok, vals[nh], sizeof(vals[nh])));
		h[nh] = (struct floe_sigv4_header){names[nh], vals[nh]};
		nh++;
	}
	char path[2048], qbuf[2048];
	const char *qm = strchr(s->target, '?');
	size_t plen = qm ? (size_t)(qm - s->target) : strlen(s->target);
	pct_decode(s->target, plen, path);
	struct floe_sigv4_param q[8];
	char qn[8][512], qv[8][512];
	size_t nq = 0;
	if (qm) {
		snprintf(qbuf, sizeof(qbuf), "%s", qm + 1);
		for (char *tok = qbuf, *next; tok && *tok; tok = next) {
			next = strchr(tok, '&');
			if (next)
				*next++ = 0;
			char *eq = strchr(tok, '=');
			assert_non_null(eq);
			pct_decode(tok, (size_t)(eq - tok), qn[nq]);
			pct_decode(eq + 1, strlen(eq + 1), qv[nq]);
			q[nq] = (struct floe_sigv4_param){qn[nq], qv[nq]};
			nq++;
		}
	}
	struct floe_sigv4_request rq = {.method = s->method,
					.path = path,
					.query = q,
					.n_query = nq,
					.headers = h,
					.n_headers = nh,
					.payload_hash = hash,
					.amz_date = date};
	struct floe_sigv4_key key = {AK, SK, "us-east-1", "s3"};
	struct floe_sigv4_result r;
	assert_int_equal(floe_sigv4_sign(NULL, &rq, &key, &r), 0);
	assert_string_equal(auth, r.authorization);
	floe_sigv4_result_fini(&r);
}

/* ---- the client under test ----------------------------------------------------------- */

struct fakes {
	int64_t now;
	int sleeps;
	int64_t slept[32];
	uint64_t rnd;
};

static uint64_t fake_random(void *ctx)
{
	return ((struct fakes *)ctx)->rnd;
}

static void fake_sleep(void *ctx, int64_t ms)
{
	struct fakes *f = ctx;
	if (f->sleeps < 32)
		f->slept[f->sleeps] = ms;
	f->sleeps++;
}

static int64_t fake_now(void *ctx)
{
	return ((struct fakes *)ctx)->now;
}

static struct floe_s3 *client_with(const struct server *sv, struct fakes *f, const char *token,
				   void (*tweak)(struct floe_s3_options *o,
						 const struct server *sv));

static struct floe_s3 *client(const struct server *sv, struct fakes *f, const char *token)
{
	return client_with(sv, f, token, NULL);
}

static struct floe_s3 *client_with(const struct server *sv, struct fakes *f, const char *token,
				   void (*tweak)(struct floe_s3_options *o,
						 const struct server *sv))
{
	char ep[64];
	struct floe_s3_options o = fake_s3_options(sv, ep, sizeof(ep));
	o.credentials.session_token = (char *)token;
	o.max_retries = 3;
	o.backoff_base_ms = 100;
	o.backoff_cap_ms = 1000;
	o.multipart_threshold = 8;
	o.part_size = 5;
	o.random_fn = fake_random;
	o.sleep_fn = fake_sleep;
	o.now_fn = fake_now;
	o.fn_ctx = f;
	f->now = T0;
	if (tweak)
		tweak(&o, sv);
	struct floe_s3 *s3 = NULL;
	assert_int_equal(floe_s3_new(&o, &s3), 0);
	return s3;
}

#define NOSUCHKEY                                                                                  \
	"<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>NoSuchKey</Code>"                  \
	"<Message>The specified key does not exist.</Message></Error>"

static void test_objects(void **state)
{
	struct canned script[] = {
	    R(200, "ETag: \"5d41402abc4b2a76b9719d911017c592\"\r\n", NULL),
	    R(200, NULL, "hello"),
	    R(200, "ETag: \"5d41\"\r\nContent-Length: 5\r\n", NULL),
	    R(204, NULL, NULL),
	    R(404, "Content-Type: application/xml\r\n", NOSUCHKEY),
	    R(404, "Content-Length: 0\r\n", NULL),
	    R(206, NULL, "ell"),
	    R(200, NULL, "0123456789"),
	};
	struct server sv;
	server_start(&sv, script, 8);
	struct fakes f = {0};
	struct floe_s3 *s3 = client(&sv, &f, "SESSIONTOKEN/x+y=");
	struct floe_s3_object_info info;
	assert_int_equal(floe_s3_put(s3, "dir/a b.txt", "hello", 5, NULL, &info), 0);
	assert_string_equal(info.etag, "\"5d41402abc4b2a76b9719d911017c592\"");
	void *data = NULL;
	size_t len = 0;
	assert_int_equal(floe_s3_get(s3, "dir/a b.txt", 100, &data, &len), 0);
	assert_int_equal(len, 5);
	assert_memory_equal(data, "hello", 5);
	floe_free(NULL, data);
	assert_int_equal(floe_s3_head(s3, "dir/a b.txt", &info), 0);
	assert_int_equal(info.size, 5);
	assert_string_equal(info.etag, "\"5d41\"");
	assert_int_equal(floe_s3_delete(s3, "dir/a b.txt"), 0);
	data = NULL;
	assert_int_equal(floe_s3_get(s3, "dir/a b.txt", 100, &data, &len), -ENOENT);
	assert_null(data);
	assert_string_equal(floe_s3_last_error_code(s3), "NoSuchKey");
	assert_int_equal(floe_s3_last_status(s3), 404);
	assert_int_equal(floe_s3_head(s3, "missing", &info), -ENOENT);
	assert_int_equal(floe_s3_get_range(s3, "r", 1, 3, &data, &len), 0);
	assert_int_equal(len, 3);
	floe_free(NULL, data);
	/* A body over the caller's limit. */
	assert_int_equal(floe_s3_get(s3, "big", 4, &data, &len), -EFBIG);
	assert_int_equal(f.sleeps, 0);
	floe_s3_free(s3);

	struct seen s[8];
	size_t n = server_finish(&sv, s, 8);
	assert_int_equal(n, 8);
	assert_string_equal(s[0].method, "PUT");
	assert_string_equal(s[0].target, "/bkt/dir/a%20b.txt");
	assert_int_equal(s[0].body_len, 5);
	assert_memory_equal(s[0].body, "hello", 5);
	assert_string_equal(s[1].method, "GET");
	assert_string_equal(s[2].method, "HEAD");
	assert_string_equal(s[3].method, "DELETE");
	assert_string_equal(s[5].target, "/bkt/missing");
	char v[256];
	assert_true(header(&s[0], "Host", v, sizeof(v)));
	char host[64];
	snprintf(host, sizeof(host), "127.0.0.1:%d", sv.port);
	assert_string_equal(v, host);
	assert_true(header(&s[0], "x-amz-date", v, sizeof(v)));
	assert_string_equal(v, "20150830T123600Z");
	assert_true(header(&s[0], "x-amz-security-token", v, sizeof(v)));
	assert_string_equal(v, "SESSIONTOKEN/x+y=");
	assert_true(header(&s[0], "Authorization", v, sizeof(v)));
	assert_non_null(strstr(v, "SignedHeaders=host;x-amz-content-sha256;x-amz-date;"
				  "x-amz-security-token, Signature="));
	assert_true(header(&s[6], "Range", v, sizeof(v)));
	assert_string_equal(v, "bytes=1-3");
	for (size_t i = 0; i < n; i++)
		check_signature(&s[i]);
	seen_free(s, n);
}

/* A signer of its own (a catalog's remote signer): called before every attempt with
 * the request as it goes out, its headers are what authorizes it; the client holds no
 * key, and a signer that refuses fails the request unsent. */
struct signer {
	int calls;
	int refuse; /* fail this many calls with FLOE_S3_EAUTH */
	char method[8], url[256], region[32], hash[80];
};

static int test_sign(void *ctx, const struct floe_s3_to_sign *in, floe_s3_sign_add_fn add, void *add_ctx)
{
	struct signer *sg = ctx;
	sg->calls++;
	snprintf(sg->method, sizeof(sg->method), "%s", in->method);
	snprintf(sg->url, sizeof(sg->url), "%s", in->url);
	snprintf(sg->region, sizeof(sg->region), "%s", in->region);
	for (size_t i = 0; i < in->nheaders; i++)
		if (strcmp(in->headers[i].name, "x-amz-content-sha256") == 0)
			snprintf(sg->hash, sizeof(sg->hash), "%s", in->headers[i].value);
	if (sg->refuse > 0) {
		sg->refuse--;
		return FLOE_S3_EAUTH;
	}
	return add(add_ctx, "Authorization", "signed-elsewhere");
}

static struct signer *the_signer;

static void use_signer(struct floe_s3_options *o, const struct server *sv)
{
	(void)sv;
	o->credentials = (struct floe_aws_credentials){0};
	o->sign_fn = test_sign;
	o->sign_ctx = the_signer;
}

static void test_signer(void **state)
{
	(void)state;
	struct canned script[] = {R(200, "ETag: \"5d41402abc4b2a76b9719d911017c592\"\r\n", NULL)};
	struct server sv;
	server_start(&sv, script, 1);
	struct fakes f = {0};
	struct signer sg = {.refuse = 1};
	the_signer = &sg;
	struct floe_s3 *s3 = client_with(&sv, &f, NULL, use_signer);
	struct floe_s3_object_info info;
	assert_int_equal(floe_s3_put(s3, "k/a b", "hello", 5, NULL, &info), FLOE_S3_EAUTH);
	assert_int_equal(sg.calls, 1);
	assert_int_equal(floe_s3_put(s3, "k/a b", "hello", 5, NULL, &info), 0);
	assert_int_equal(sg.calls, 2);
	floe_s3_free(s3);
	struct seen s[2];
	size_t n = server_finish(&sv, s, 2);
	assert_int_equal(n, 1); /* the refused signature sent nothing */
	assert_string_equal(sg.method, "PUT");
	char want[128], v[256];
	snprintf(want, sizeof(want), "http://127.0.0.1:%d/bkt/k/a%%20b", sv.port);
	assert_string_equal(sg.url, want);
	assert_string_equal(sg.region, "us-east-1");
	assert_string_equal(sg.hash, "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824");
	assert_true(header(&s[0], "Authorization", v, sizeof(v)));
	assert_string_equal(v, "signed-elsewhere");
	assert_true(header(&s[0], "x-amz-content-sha256", v, sizeof(v)));
	assert_false(header(&s[0], "x-amz-security-token", v, sizeof(v)));
	seen_free(s, n);
}

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
	assert_int_equal(after.errors[k][FLOE_S3_FAIL_THROTTLED] - before.errors[k][FLOE_S3_FAIL_THROTTLED], 3);
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

static void test_conditional(void **state)
{
	struct canned script[] = {
	    R(412, NULL, "<Error><Code>PreconditionFailed</Code></Error>"),
	    R(409, NULL, "<Error><Code>ConditionalRequestConflict</Code></Error>"),
	    R(500, NULL, "<Error><Code>UnknownError</Code></Error>"),
	    R(200, "ETag: \"e\"\r\n", NULL),
	    R(503, NULL, NULL),
	    R(200, NULL, NULL),
	    R(200, NULL, NULL),
	    DROP, /* cut after the request arrived: not re-sent, by us or by curl */
	    R(412, NULL, NULL),
	};
	struct server sv;
	server_start(&sv, script, 9);
	struct fakes f = {0};
	struct floe_s3 *s3 = client(&sv, &f, NULL);
	struct floe_s3_put_options po = {.if_none_match = true};
	const char *doc = "{\"v\":1}";
	assert_int_equal(floe_s3_put(s3, "m/v2.json", doc, strlen(doc), &po, NULL),
			 FLOE_S3_EPRECONDITION);
	assert_int_equal(floe_s3_put(s3, "m/v2.json", doc, strlen(doc), &po, NULL),
			 FLOE_S3_ECONFLICT);
	assert_int_equal(floe_s3_put(s3, "m/v2.json", doc, strlen(doc), &po, NULL),
			 FLOE_S3_EAMBIGUOUS);
	assert_int_equal(f.sleeps, 0);
	assert_int_equal(floe_s3_put(s3, "m/v2.json", doc, strlen(doc), &po, NULL), 0);
	/* 503 SlowDown was rejected before processing: retried even when conditional. */
	assert_int_equal(floe_s3_put(s3, "m/v3.json", doc, strlen(doc), &po, NULL), 0);
	assert_int_equal(f.sleeps, 1);
	/* If-Match goes bare (RGW 16.2 only matches the unquoted ETag). */
	struct floe_s3_put_options pm = {.if_match = "\"abc\""};
	assert_int_equal(floe_s3_put(s3, "m/x", "1", 1, &pm, NULL), 0);
	assert_int_equal(floe_s3_put(s3, "m/x", "1", 1, &po, NULL), FLOE_S3_EAMBIGUOUS);
	assert_int_equal(floe_s3_last_attempts(s3), 1);
	assert_int_equal(floe_s3_put(s3, "m/x", "1", 1, &po, NULL), FLOE_S3_EPRECONDITION);
	floe_s3_free(s3);
	struct seen s[9];
	size_t n = server_finish(&sv, s, 9);
	assert_int_equal(n, 9);
	char v[512];
	for (size_t i = 0; i < 9; i++) {
		check_signature(&s[i]);
		if (i == 6) {
			assert_true(header(&s[i], "If-Match", v, sizeof(v)));
			assert_string_equal(v, "abc");
			continue;
		}
		assert_true(header(&s[i], "If-None-Match", v, sizeof(v)));
		assert_string_equal(v, "*");
		assert_true(header(&s[i], "Authorization", v, sizeof(v)));
		assert_non_null(strstr(v, "SignedHeaders=host;if-none-match;"));
	}
	seen_free(s, n);
}

static int collect(void *ctx, const char *key, int64_t size)
{
	char *acc = ctx;
	char line[1200];
	snprintf(line, sizeof(line), "%s=%lld;", key, (long long)size);
	strcat(acc, line);
	return 0;
}

static void test_list_pages(void **state)
{
	struct canned script[] = {
	    R(200, NULL,
	      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	      "<ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
	      "<Name>bkt</Name><Prefix>dir/</Prefix><KeyCount>2</KeyCount>"
	      "<IsTruncated>true</IsTruncated>"
	      "<NextContinuationToken>tok/1+x=</NextContinuationToken>"
	      "<Contents><Key>dir/a</Key><Size>10</Size><ETag>&quot;e&quot;</ETag></Contents>"
	      "<Contents><Key>dir/b&amp;c</Key><Size>0</Size></Contents>"
	      "</ListBucketResult>"),
	    R(200, NULL,
	      "<ListBucketResult><IsTruncated>false</IsTruncated>"
	      "<Contents><Key>dir/z</Key><Size>12345678901</Size></Contents>"
	      "</ListBucketResult>"),
	};
	struct server sv;
	server_start(&sv, script, 2);
	struct fakes f = {0};
	struct floe_s3 *s3 = client(&sv, &f, NULL);
	char acc[4096] = "";
	assert_int_equal(floe_s3_list(s3, "dir/", collect, acc), 0);
	assert_string_equal(acc, "dir/a=10;dir/b&c=0;dir/z=12345678901;");
	floe_s3_free(s3);
	struct seen s[2];
	size_t n = server_finish(&sv, s, 2);
	assert_int_equal(n, 2);
	assert_string_equal(s[0].target, "/bkt?list-type=2&prefix=dir%2F");
	assert_string_equal(s[1].target,
			    "/bkt?list-type=2&prefix=dir%2F&continuation-token=tok%2F1%2Bx%3D");
	for (size_t i = 0; i < n; i++)
		check_signature(&s[i]);
	seen_free(s, n);
}

static int collect_up(void *ctx, const char *key, const char *id, const char *when)
{
	char *acc = ctx;
	strcat(acc, key);
	strcat(acc, "|");
	strcat(acc, id);
	strcat(acc, "|");
	strcat(acc, when);
	strcat(acc, ";");
	return 0;
}

static void test_multipart(void **state)
{
	char path[] = "/tmp/floe-test-s3-mpXXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "AAAAABBBBBCC", 12), 12);
	close(fd);
	struct canned script[] = {
	    R(200, NULL,
	      "<InitiateMultipartUploadResult><Bucket>bkt</Bucket><Key>big</Key>"
	      "<UploadId>2~up/id</UploadId></InitiateMultipartUploadResult>"),
	    R(200, "ETag: \"p1\"\r\n", NULL),
	    R(503, NULL, NULL), /* part 2 once refused: retried */
	    R(200, "ETag: \"p2\"\r\n", NULL),
	    R(200, "ETag: \"p3\"\r\n", NULL),
	    R(200, NULL,
	      "<CompleteMultipartUploadResult><Key>big</Key><ETag></ETag>"
	      "</CompleteMultipartUploadResult>"),
	    R(200, "ETag: \"abc-3\"\r\nContent-Length: 12\r\n", NULL),
	    R(200, NULL,
	      "<ListMultipartUploadsResult><IsTruncated>false</IsTruncated>"
	      "<Upload><Key>big</Key><UploadId>old1</UploadId>"
	      "<Initiated>2015-08-30T12:00:00.000Z</Initiated></Upload>"
	      "</ListMultipartUploadsResult>"),
	    R(204, NULL, NULL),
	    /* A 200 that carries an error (S3 does this for CompleteMultipartUpload). */
	    R(200, NULL, "<Error><Code>InvalidPart</Code></Error>"),
	};
	struct server sv;
	server_start(&sv, script, 10);
	struct fakes f = {0};
	struct floe_s3 *s3 = client(&sv, &f, NULL);
	struct floe_s3_object_info info;
	assert_int_equal(floe_s3_put_file(s3, "big", path, NULL, &info), 0);
	assert_string_equal(info.etag, "\"abc-3\"");
	assert_int_equal(info.size, 12);
	/* Conditions are refused with multipart. */
	struct floe_s3_put_options po = {.if_none_match = true};
	assert_int_equal(floe_s3_put_file(s3, "big", path, &po, NULL), -EINVAL);
	char acc[512] = "";
	assert_int_equal(floe_s3_multipart_list(s3, "b", collect_up, acc), 0);
	assert_string_equal(acc, "big|old1|2015-08-30T12:00:00.000Z;");
	assert_int_equal(floe_s3_multipart_abort(s3, "big", "old1"), 0);
	struct floe_s3_part parts[1] = {{1, "\"p1\""}};
	assert_int_equal(floe_s3_multipart_complete(s3, "big", "x", parts, 1), FLOE_S3_EHTTP);
	assert_string_equal(floe_s3_last_error_code(s3), "InvalidPart");
	floe_s3_free(s3);
	unlink(path);

	struct seen s[10];
	size_t n = server_finish(&sv, s, 10);
	assert_int_equal(n, 10);
	assert_string_equal(s[0].method, "POST");
	assert_string_equal(s[0].target, "/bkt/big?uploads=");
	assert_string_equal(s[1].target, "/bkt/big?partNumber=1&uploadId=2~up%2Fid");
	assert_string_equal(s[1].body, "AAAAA");
	assert_string_equal(s[3].target, "/bkt/big?partNumber=2&uploadId=2~up%2Fid");
	assert_string_equal(s[3].body, "BBBBB");
	assert_string_equal(s[4].body, "CC");
	assert_string_equal(s[5].method, "POST");
	assert_string_equal(s[5].target, "/bkt/big?uploadId=2~up%2Fid");
	assert_string_equal(s[5].body, "<CompleteMultipartUpload>"
				       "<Part><PartNumber>1</PartNumber><ETag>\"p1\"</ETag></Part>"
				       "<Part><PartNumber>2</PartNumber><ETag>\"p2\"</ETag></Part>"
				       "<Part><PartNumber>3</PartNumber><ETag>\"p3\"</ETag></Part>"
				       "</CompleteMultipartUpload>");
	assert_string_equal(s[6].method, "HEAD");
	assert_string_equal(s[7].target, "/bkt?uploads=&prefix=b");
	assert_string_equal(s[8].method, "DELETE");
	assert_string_equal(s[8].target, "/bkt/big?uploadId=old1");
	for (size_t i = 0; i < n; i++)
		check_signature(&s[i]);
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

static char vhost_ep[64], vhost_connect[64];

static void vhost(struct floe_s3_options *o, const struct server *sv)
{
	snprintf(vhost_ep, sizeof(vhost_ep), "http://S3.Test:%d/", sv->port);
	snprintf(vhost_connect, sizeof(vhost_connect), "::127.0.0.1:%d", sv->port);
	o->endpoint = vhost_ep;
	o->path_style = false;
	o->connect_to = vhost_connect;
}

static void test_virtual_hosted(void **state)
{
	struct canned script[] = {
	    R(200, NULL, NULL),
	    R(200, NULL, "<ListBucketResult><IsTruncated>false</IsTruncated></ListBucketResult>"),
	};
	struct server sv;
	server_start(&sv, script, 2);
	struct fakes f = {0};
	struct floe_s3 *s3 = client_with(&sv, &f, NULL, vhost);
	assert_int_equal(floe_s3_put(s3, "a/./b", "x", 1, NULL, NULL), 0);
	char acc[16] = "";
	assert_int_equal(floe_s3_list(s3, NULL, collect, acc), 0);
	floe_s3_free(s3);
	struct seen s[2];
	size_t n = server_finish(&sv, s, 2);
	assert_int_equal(n, 2);
	/* The key's "/./" is kept as it is (curl would otherwise normalise it away). */
	assert_string_equal(s[0].target, "/a/./b");
	assert_string_equal(s[1].target, "/?list-type=2");
	char v[128], want[64];
	snprintf(want, sizeof(want), "bkt.s3.test:%d", sv.port);
	assert_true(header(&s[0], "Host", v, sizeof(v)));
	assert_string_equal(v, want);
	for (size_t i = 0; i < n; i++)
		check_signature(&s[i]);
	seen_free(s, n);
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

static void test_large_body(void **state)
{
	/* Over 1 MiB curl may send "Expect: 100-continue"; the body must arrive intact. */
	size_t n = 3u << 20;
	char *big = malloc(n);
	for (size_t i = 0; i < n; i++)
		big[i] = (char)(i * 31 + (i >> 11));
	struct canned script[] = {R(200, NULL, NULL)};
	struct server sv;
	server_start(&sv, script, 1);
	struct fakes f = {0};
	struct floe_s3 *s3 = client(&sv, &f, NULL);
	assert_int_equal(floe_s3_put(s3, "big", big, n, NULL, NULL), 0);
	floe_s3_free(s3);
	struct seen s[1];
	assert_int_equal(server_finish(&sv, s, 1), 1);
	assert_int_equal(s[0].body_len, n);
	assert_memory_equal(s[0].body, big, n);
	check_signature(&s[0]);
	seen_free(s, 1);
	free(big);
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

static void test_options(void **state)
{
	struct floe_s3 *s3 = NULL;
	struct floe_s3_options o = {
	    .endpoint = "ftp://x", .region = "r", .bucket = "b", .credentials = {AK, SK, NULL, NULL}};
	assert_int_equal(floe_s3_new(&o, &s3), -EINVAL);
	o.endpoint = "https://s3.example.com/some/path";
	assert_int_equal(floe_s3_new(&o, &s3), -EINVAL);
	o.endpoint = "https://s3.example.com/";
	o.bucket = "Not_DNS";
	assert_int_equal(floe_s3_new(&o, &s3), -EINVAL);
	o.path_style = true;
	assert_int_equal(floe_s3_new(&o, &s3), 0);
	floe_s3_free(s3);
	o.credentials.secret_access_key = NULL;
	assert_int_equal(floe_s3_new(&o, &s3), -EINVAL);
	floe_s3_free(NULL);
	assert_string_equal(floe_strerror(FLOE_S3_EPRECONDITION),
			    "precondition failed (the object exists or changed)");
	assert_string_equal(floe_strerror(-ENOENT), strerror(ENOENT));
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_objects),
	    cmocka_unit_test(test_signer),
	    cmocka_unit_test(test_retry_then_success),
	    cmocka_unit_test(test_conditional),
	    cmocka_unit_test(test_list_pages),
	    cmocka_unit_test(test_multipart),
	    cmocka_unit_test(test_clock_skew),
	    cmocka_unit_test(test_connection_errors),
	    cmocka_unit_test(test_virtual_hosted),
	    cmocka_unit_test(test_retry_budget_and_cuts),
	    cmocka_unit_test(test_large_body),
	    cmocka_unit_test(test_budget),
	    cmocka_unit_test(test_options),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

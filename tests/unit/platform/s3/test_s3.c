/* Tests of platform/s3 against a fake S3 server that this test runs in a forked child on
 * 127.0.0.1 (ephemeral port): the child answers scripted responses and records every
 * request; the parent then checks request lines, headers, bodies and recomputes each
 * signature from what actually arrived. Sleeping and randomness are injected.
 * Here the requests: objects, a signer of the caller's, conditional writes, listings,
 * multipart uploads, virtual-hosted addressing and a large body; test_s3_retry.c has the
 * failures. */
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
#include "s3_fixture.h"

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

static void no_path_style(struct floe_s3_options *o, const struct server *sv)
{
	(void)sv;
	o->path_style = false; /* the endpoint stays http://127.0.0.1:PORT */
}

/* An endpoint named by its address (a MinIO at 10.0.0.5:9000, set up without
 * path_style) has no bucket.host name: the client uses path-style requests there, as
 * the SDKs do, instead of failing every one on "bkt.127.0.0.1". */
static void test_address_endpoint_path_style(void **state)
{
	(void)state;
	struct canned script[] = {R(200, NULL, NULL)};
	struct server sv;
	server_start(&sv, script, 1);
	struct fakes f = {0};
	struct floe_s3 *s3 = client_with(&sv, &f, NULL, no_path_style);
	assert_int_equal(floe_s3_put(s3, "a/b", "x", 1, NULL, NULL), 0);
	floe_s3_free(s3);
	struct seen s[1];
	size_t n = server_finish(&sv, s, 1);
	assert_int_equal(n, 1);
	assert_string_equal(s[0].target, "/bkt/a/b");
	char v[128], want[64];
	snprintf(want, sizeof(want), "127.0.0.1:%d", sv.port);
	assert_true(header(&s[0], "Host", v, sizeof(v)));
	assert_string_equal(v, want);
	check_signature(&s[0]);
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
	    cmocka_unit_test(test_conditional),
	    cmocka_unit_test(test_list_pages),
	    cmocka_unit_test(test_multipart),
	    cmocka_unit_test(test_virtual_hosted),
	    cmocka_unit_test(test_address_endpoint_path_style),
	    cmocka_unit_test(test_large_body),
	    cmocka_unit_test(test_options),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Tests of platform/store_s3's exclusive create of files against a fake S3 server (see
 * fake_http.h): a 412 is "exists", a conditional PUT whose outcome is unknown is settled
 * by the object's size, a multipart-sized file is checked with a HEAD first and never
 * sent over an existing key. The local store's are in tests/unit/agent/test_table.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <strings.h>

#include "fake_s3.h"
#include "platform/s3/s3.h"
#include "platform/s3/store_s3.h"
#include "platform/store.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static uint64_t fake_random(void *ctx)
{
	(void)ctx;
	return 0;
}

static void fake_sleep(void *ctx, int64_t ms)
{
	(void)ctx;
	(void)ms;
}

static int64_t fake_now(void *ctx)
{
	(void)ctx;
	return T0;
}

static struct floe_store *store(const struct server *sv)
{
	char ep[64];
	struct floe_s3_options o = fake_s3_options(sv, ep, sizeof(ep));
	o.max_retries = 3;
	o.multipart_threshold = 8;
	o.part_size = 5;
	o.random_fn = fake_random;
	o.sleep_fn = fake_sleep;
	o.now_fn = fake_now;
	struct floe_store *s = NULL;
	assert_int_equal(floe_store_s3_new(&o, "wh", &s), 0);
	return s;
}

static void write_file(const char *path, const char *text)
{
	FILE *fp = fopen(path, "w");
	assert_non_null(fp);
	fputs(text, fp);
	fclose(fp);
}

static void test_put_file_if_absent(void **state)
{
	(void)state;
	struct canned script[] = {
	    R(412, NULL, "<Error><Code>PreconditionFailed</Code></Error>"), /* exists */
	    R(500, NULL, NULL),			     /* unknown ... */
	    R(200, "Content-Length: 5\r\n", NULL),   /* ... and our size is there: landed */
	    R(500, NULL, NULL),			     /* unknown ... */
	    R(404, NULL, NULL),			     /* ... and absent: not applied */
	    R(200, "ETag: \"e\"\r\n", NULL),	     /* sent again */
	    R(500, NULL, NULL),			     /* unknown ... */
	    R(200, "Content-Length: 9\r\n", NULL),   /* ... and another object is there */
	    R(200, "Content-Length: 20\r\n", NULL),  /* multipart-sized: HEAD finds one */
	    R(200, "Content-Length: 5\r\n", NULL),   /* floe_store_size */
	    R(404, NULL, NULL),
	};
	const size_t n = sizeof(script) / sizeof(script[0]);
	char small[64], big[64];
	snprintf(small, sizeof(small), "/tmp/floe-test-store-%d-s", (int)getpid());
	snprintf(big, sizeof(big), "/tmp/floe-test-store-%d-b", (int)getpid());
	write_file(small, "hello");
	write_file(big, "twenty bytes of data");
	struct server sv;
	server_start(&sv, script, n);
	struct floe_store *s = store(&sv);
	assert_int_equal(floe_store_put_file_if_absent(s, "d/a.parquet", small), -EEXIST);
	assert_int_equal(floe_store_put_file_if_absent(s, "d/b.parquet", small), 0);
	assert_int_equal(floe_store_put_file_if_absent(s, "d/c.parquet", small), 0);
	assert_int_equal(floe_store_put_file_if_absent(s, "d/e.parquet", small), -EEXIST);
	assert_int_equal(floe_store_put_file_if_absent(s, "d/f.parquet", big), -EEXIST);
	int64_t size = 0;
	assert_int_equal(floe_store_size(s, "d/a.parquet", &size), 0);
	assert_int_equal(size, 5);
	assert_int_equal(floe_store_size(s, "d/g.parquet", &size), -ENOENT);
	floe_store_free(s);
	struct seen seen[16];
	assert_int_equal(server_finish(&sv, seen, 16), n);
	static const char *const want[][2] = {
	    {"PUT", "/bkt/wh/d/a.parquet"}, {"PUT", "/bkt/wh/d/b.parquet"},  {"HEAD", "/bkt/wh/d/b.parquet"},
	    {"PUT", "/bkt/wh/d/c.parquet"}, {"HEAD", "/bkt/wh/d/c.parquet"}, {"PUT", "/bkt/wh/d/c.parquet"},
	    {"PUT", "/bkt/wh/d/e.parquet"}, {"HEAD", "/bkt/wh/d/e.parquet"}, {"HEAD", "/bkt/wh/d/f.parquet"},
	    {"HEAD", "/bkt/wh/d/a.parquet"}, {"HEAD", "/bkt/wh/d/g.parquet"},
	};
	char v[64];
	for (size_t i = 0; i < n; i++) {
		assert_string_equal(seen[i].method, want[i][0]);
		assert_string_equal(seen[i].target, want[i][1]);
		if (strcmp(want[i][0], "PUT") == 0) {
			assert_true(header(&seen[i], "If-None-Match", v, sizeof(v)));
			assert_string_equal(v, "*");
			assert_int_equal(seen[i].body_len, 5);
		}
	}
	seen_free(seen, n);
	unlink(small);
	unlink(big);
}

/* remove_many: one DeleteObjects for the keys under the store's prefix; a server that
 * answers 501 NotImplemented gets a DELETE per key, then and for every later call. */
static void test_remove_many(void **state)
{
	(void)state;
	struct canned script[] = {
	    R(200, NULL, "<DeleteResult/>"),
	    R(501, NULL, "<Error><Code>NotImplemented</Code></Error>"),
	    R(204, NULL, NULL),
	    R(204, NULL, NULL),
	    R(204, NULL, NULL),
	};
	struct server sv;
	server_start(&sv, script, 5);
	struct floe_store *s = store(&sv);
	const char *keys[] = {"m/a.avro", "m/b.avro"};
	size_t removed = 0;
	assert_int_equal(floe_store_remove_many(s, keys, 2, &removed), 0);
	assert_int_equal(removed, 2);
	assert_int_equal(floe_store_remove_many(s, keys, 2, &removed), 0);
	assert_int_equal(removed, 2);
	assert_int_equal(floe_store_remove_many(s, keys, 1, &removed), 0);
	assert_int_equal(removed, 1);
	floe_store_free(s);
	struct seen seen[5];
	assert_int_equal(server_finish(&sv, seen, 5), 5);
	static const char *const want[][2] = {
	    {"POST", "/bkt?delete="},		{"POST", "/bkt?delete="}, {"DELETE", "/bkt/wh/m/a.avro"},
	    {"DELETE", "/bkt/wh/m/b.avro"}, {"DELETE", "/bkt/wh/m/a.avro"},
	};
	for (size_t i = 0; i < 5; i++) {
		assert_string_equal(seen[i].method, want[i][0]);
		assert_string_equal(seen[i].target, want[i][1]);
	}
	assert_non_null(strstr(seen[0].body, "<Key>wh/m/a.avro</Key>"));
	assert_non_null(strstr(seen[0].body, "<Key>wh/m/b.avro</Key>"));
	seen_free(seen, 5);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_put_file_if_absent),
		cmocka_unit_test(test_remove_many),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Tests of platform/store_local's memory: what a get reads and what a listing holds come
 * from the store's allocator (the agent's budget), so that a 256 MiB metadata file is
 * counted, and refused with FLOE_ENOMEM when the budget cannot hold it. The store's other
 * behaviour is tested through the table in tests/unit/agent/test_table.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "formats/base/alloc.h"
#include "formats/base/error.h"
#include "platform/fs.h"
#include "platform/store.h"

#define BIG ((size_t)256 << 20)

static char root[] = "/tmp/floe-test-store-XXXXXX";

static int count_key(void *ctx, const char *key)
{
	(void)key;
	++*(size_t *)ctx;
	return 0;
}

static void test_budget(void **state)
{
	(void)state;
	assert_non_null(mkdtemp(root));
	char path[256];
	snprintf(path, sizeof(path), "%s/meta", root);
	assert_int_equal(floe_fs_mkdirs(path), 0);
	/* A sparse 256 MiB file: the size of the largest metadata file floe reads. */
	snprintf(path, sizeof(path), "%s/meta/v1.metadata.json", root);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)BIG), 0);
	close(fd);

	struct floe_alloc a;
	floe_alloc_init(&a, 64 << 20);
	struct floe_store *st = NULL;
	assert_int_equal(floe_store_local_new(&a, root, &st), 0);
	size_t held = a.used; /* the store itself */
	void *data = NULL;
	size_t len = 0;
	assert_int_equal(floe_store_get(st, "meta/v1.metadata.json", BIG, &data, &len), FLOE_ENOMEM);
	assert_null(data);
	assert_int_equal(a.used, held);

	a.limit = BIG + (8 << 20);
	assert_int_equal(floe_store_get(st, "meta/v1.metadata.json", BIG, &data, &len), 0);
	assert_int_equal(len, BIG);
	assert_true(a.used > held + BIG);
	floe_store_free_data(st, data);
	assert_int_equal(a.used, held);

	/* A listing holds its names from the budget too. */
	size_t n = 0;
	assert_int_equal(floe_store_list(st, "meta/", count_key, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(a.used, held);
	a.limit = held + 16;
	assert_int_equal(floe_store_list(st, "meta/", count_key, &n), FLOE_ENOMEM);

	floe_store_free(st);
	assert_int_equal(a.used, 0);
	unlink(path);
	snprintf(path, sizeof(path), "%s/meta", root);
	rmdir(path);
	rmdir(root);
}

/* A URI's key: inside the store, the store's own URI (a store opened at a table's
 * location, whose table is at key ""), and outside it. */
static void test_key(void **state)
{
	(void)state;
	struct floe_store *st = NULL;
	assert_int_equal(floe_store_local_new(NULL, "/tmp/floe-test-key", &st), 0);
	char uri[256], key[256];
	assert_int_equal(floe_store_uri(st, "data/a.parquet", uri, sizeof(uri)), 0);
	assert_int_equal(floe_store_key(st, uri, key, sizeof(key)), 0);
	assert_string_equal(key, "data/a.parquet");
	assert_int_equal(floe_store_key(st, "file:///tmp/floe-test-key", key, sizeof(key)), 0);
	assert_string_equal(key, "");
	assert_int_equal(floe_store_key(st, "file:///tmp/floe-test-keys/x", key, sizeof(key)), -EXDEV);
	assert_int_equal(floe_store_key(st, "file:///tmp", key, sizeof(key)), -EXDEV);
	floe_store_free(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_budget), cmocka_unit_test(test_key)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

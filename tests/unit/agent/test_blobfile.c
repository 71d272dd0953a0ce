/* Tests of agent/state/blobfile and crc32c: known CRC32C vectors, the exact bytes of a
 * saved blob file, round trips, every single-byte corruption detected, a missing file,
 * allocation faults and a failed save leaving the previous checkpoint intact. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "agent/state/blobfile.h"
#include "formats/base/alloc.h"
#include "formats/base/crc.h"
#include "formats/base/error.h"
#include "platform/fs.h"

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[64], path[128];

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(p);
}

static int setup(void **state)
{
	strcpy(dir, "/tmp/floe-test-ckpt-XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	snprintf(path, sizeof(path), "%s/positions", dir);
	return 0;
}

static int teardown(void **state)
{
	floe_fs_set_faults(NULL);
	return nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void test_crc32c_vectors(void **state)
{
	/* The check value of CRC-32C and the iSCSI vectors of RFC 3720 B.4. */
	assert_int_equal(floe_crc32c(0, "123456789", 9), 0xe3069283u);
	uint8_t zeros[32] = {0}, ones[32];
	memset(ones, 0xff, sizeof(ones));
	assert_int_equal(floe_crc32c(0, zeros, 32), 0x8a9136aau);
	assert_int_equal(floe_crc32c(0, ones, 32), 0x62a8ab43u);
	uint8_t inc[32];
	for (int i = 0; i < 32; i++)
		inc[i] = (uint8_t)i;
	assert_int_equal(floe_crc32c(0, inc, 32), 0x46dd794eu);
	/* Chaining equals one pass. */
	assert_int_equal(floe_crc32c(floe_crc32c(0, "1234", 4), "56789", 5), 0xe3069283u);
	assert_int_equal(floe_crc32c(0, NULL, 0), 0);
}

static void test_exact_bytes(void **state)
{
	assert_int_equal(floe_blobfile_save(path, (const uint8_t *)"hello", 5), 0);
	static const uint8_t want[] = {
	    'F',  'L',	'C',  'K',  1,	 0, 0, 0, /* magic, version 1 */
	    5,	  0,	0,    0,    0,	 0, 0, 0, /* payload length */
	    0x4c, 0xbb, 0x71, 0x9a,		  /* CRC32C("hello") = 0x9a71bb4c */
	    'h',  'e',	'l',  'l',  'o',
	};
	void *data = NULL;
	size_t len = 0;
	assert_int_equal(floe_fs_read_file(NULL, path, 1024, &data, &len), 0);
	assert_int_equal(len, sizeof(want));
	assert_memory_equal(data, want, sizeof(want));
	floe_free(NULL, data);
}

static void test_round_trip(void **state)
{
	struct floe_alloc a;
	floe_alloc_init(&a, 0);
	uint8_t blob[3000];
	for (size_t i = 0; i < sizeof(blob); i++)
		blob[i] = (uint8_t)(i * 7 + 1);
	assert_int_equal(floe_blobfile_save(path, blob, sizeof(blob)), 0);
	uint8_t *got = NULL;
	size_t len = 0;
	assert_int_equal(floe_blobfile_load(&a, path, &got, &len), 0);
	assert_int_equal(len, sizeof(blob));
	assert_memory_equal(got, blob, len);
	floe_free(&a, got);
	/* Replaced by a newer one; an empty blob is fine too. */
	assert_int_equal(floe_blobfile_save(path, NULL, 0), 0);
	assert_int_equal(floe_blobfile_load(&a, path, &got, &len), 0);
	assert_int_equal(len, 0);
	assert_non_null(got);
	floe_free(&a, got);
	assert_int_equal(a.used, 0);
}

static void test_corruption(void **state)
{
	struct floe_alloc a;
	floe_alloc_init(&a, 0);
	const uint8_t blob[] = "some positions";
	assert_int_equal(floe_blobfile_save(path, blob, sizeof(blob)), 0);
	void *data = NULL;
	size_t len = 0;
	assert_int_equal(floe_fs_read_file(NULL, path, 1024, &data, &len), 0);
	uint8_t file[128];
	memcpy(file, data, len);
	floe_free(NULL, data);
	/* Every single flipped bit of header or payload is caught. */
	for (size_t i = 0; i < len; i++) {
		for (int bit = 0; bit < 8; bit++) {
			file[i] ^= (uint8_t)(1 << bit);
			assert_int_equal(floe_fs_write_atomic(path, file, len), 0);
			uint8_t *got = (uint8_t *)1;
			size_t glen = 99;
			assert_int_equal(floe_blobfile_load(&a, path, &got, &glen),
					 FLOE_ECORRUPT);
			assert_ptr_equal(got, (uint8_t *)1);
			assert_int_equal(glen, 99);
			file[i] ^= (uint8_t)(1 << bit);
		}
	}
	/* Torn files: every truncation, and a trailing extra byte. */
	for (size_t n = 0; n < len; n++) {
		assert_int_equal(floe_fs_write_atomic(path, file, n), 0);
		uint8_t *got = NULL;
		size_t glen = 0;
		assert_int_equal(floe_blobfile_load(&a, path, &got, &glen), FLOE_ECORRUPT);
	}
	file[len] = 0;
	assert_int_equal(floe_fs_write_atomic(path, file, len + 1), 0);
	uint8_t *got = NULL;
	size_t glen = 0;
	assert_int_equal(floe_blobfile_load(&a, path, &got, &glen), FLOE_ECORRUPT);
	/* An unknown version, even with a valid CRC. */
	memcpy(file, "FLCK\x02\0\0\0", 8);
	assert_int_equal(floe_fs_write_atomic(path, file, len), 0);
	assert_int_equal(floe_blobfile_load(&a, path, &got, &glen), FLOE_ECORRUPT);
	assert_int_equal(a.used, 0);
}

static void test_missing(void **state)
{
	uint8_t *got = NULL;
	size_t len = 0;
	assert_int_equal(floe_blobfile_load(NULL, path, &got, &len), -ENOENT);
	char bad[160];
	snprintf(bad, sizeof(bad), "%s/no/such/dir/positions", dir);
	assert_int_equal(floe_blobfile_save(bad, (const uint8_t *)"x", 1), -ENOENT);
}

static int fail_fsync(int fd)
{
	errno = EIO;
	return -1;
}

static void test_failed_save_keeps_old(void **state)
{
	struct floe_alloc a;
	floe_alloc_init(&a, 0);
	assert_int_equal(floe_blobfile_save(path, (const uint8_t *)"old", 3), 0);
	floe_fs_set_faults(&(struct floe_fs_faults){.fsync = fail_fsync});
	assert_int_equal(floe_blobfile_save(path, (const uint8_t *)"new", 3), -EIO);
	floe_fs_set_faults(NULL);
	uint8_t *got = NULL;
	size_t len = 0;
	assert_int_equal(floe_blobfile_load(&a, path, &got, &len), 0);
	assert_int_equal(len, 3);
	assert_memory_equal(got, "old", 3);
	floe_free(&a, got);
}

static void test_alloc_faults(void **state)
{
	assert_int_equal(floe_blobfile_save(path, (const uint8_t *)"abc", 3), 0);
	for (long k = 0;; k++) {
		struct floe_alloc a;
		floe_alloc_init(&a, 0);
		a.fail_after = k;
		uint8_t *got = NULL;
		size_t len = 0;
		int rc = floe_blobfile_load(&a, path, &got, &len);
		if (rc == FLOE_ENOMEM) {
			assert_int_equal(a.used, 0);
			continue;
		}
		assert_int_equal(rc, 0);
		assert_memory_equal(got, "abc", 3);
		floe_free(&a, got);
		assert_int_equal(a.used, 0);
		assert_int_equal(k, 2); /* the file's bytes (counted too) and the blob */
		break;
	}
	/* A budget too small for the blob is FLOE_ENOMEM as well. */
	struct floe_alloc small;
	floe_alloc_init(&small, 2);
	uint8_t *got = NULL;
	size_t len = 0;
	assert_int_equal(floe_blobfile_load(&small, path, &got, &len), FLOE_ENOMEM);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_crc32c_vectors),
	    cmocka_unit_test_setup_teardown(test_exact_bytes, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_round_trip, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_corruption, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_missing, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_failed_save_keeps_old, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_alloc_faults, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

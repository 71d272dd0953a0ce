/* Tests of the static provider's key files (floe_s3_credprov_options.key_files): keys
 * that appear after the provider is made, change while it serves, or are caught half
 * written, and of platform/secret's file reading under them. No server: the provider
 * reads local files only. Files are given mtimes in the past, as a provisioning agent's
 * finished files have, except where a fresh one is the point. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "platform/s3/s3_credprov.h"
#include "platform/secret.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define T0 INT64_C(1440938160) /* the provider's "now" (unix seconds): injected */

static char dir[64];
static char id_path[128], key_path[128], tok_path[128];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/floe-test-keyfiles.XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(id_path, sizeof(id_path), "%s/id", dir);
	snprintf(key_path, sizeof(key_path), "%s/key", dir);
	snprintf(tok_path, sizeof(tok_path), "%s/token", dir);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(id_path);
	unlink(key_path);
	unlink(tok_path);
	unlink(dir);
	rmdir(dir);
	return 0;
}

/* Writes n bytes of text into path in place (same inode), its mtime age_s seconds ago
 * (0: now, and it stays "just written"), or at mtime exactly when age_s < 0. */
static void put_at(const char *path, const char *text, size_t n, int64_t age_s, time_t mtime)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, n), (ssize_t)n);
	assert_int_equal(close(fd), 0);
	if (age_s == 0)
		return;
	struct timespec ts[2] = {{.tv_nsec = UTIME_OMIT}, {0}};
	ts[1].tv_sec = age_s > 0 ? time(NULL) - age_s : mtime;
	assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);
}

static void put(const char *path, const char *text)
{
	put_at(path, text, strlen(text), 10, 0);
}

static struct floe_s3_credprov *files_prov(const char *id, const char *key, const char *tok)
{
	struct floe_s3_credprov_options o = {.providers = FLOE_S3_CREDPROV_STATIC,
					     .key_files = {id, key, tok}};
	struct floe_s3_credprov *p = NULL;
	assert_int_equal(floe_s3_credprov_new(&o, &p), 0);
	return p;
}

/* get at now: rc, and the reasons (or "") in why. */
static int get(struct floe_s3_credprov *p, int64_t now, struct floe_aws_credentials *c,
	       struct floe_err *why)
{
	memset(why, 0, sizeof(*why));
	return floe_s3_credprov_get(p, now, c, NULL, why);
}

/* Files missing when the provider is made: unavailable (may pass), naming every one;
 * once they are there, their keys; a trailing newline is not part of a key. */
static void test_files_appear(void **state)
{
	(void)state;
	struct floe_s3_credprov *p = files_prov(id_path, key_path, NULL);
	struct floe_aws_credentials c = {0};
	struct floe_err why;
	assert_int_equal(get(p, T0, &c, &why), FLOE_S3_EUNAVAILABLE);
	assert_non_null(strstr(why.msg, "file:"));
	assert_non_null(strstr(why.msg, "/id: No such file or directory"));
	assert_non_null(strstr(why.msg, "/key: No such file or directory"));
	assert_null(c.access_key_id);
	put(id_path, "AKIAONE\n");
	assert_int_equal(get(p, T0 + 1, &c, &why), FLOE_S3_EUNAVAILABLE);
	assert_null(strstr(why.msg, "/id:"));
	assert_non_null(strstr(why.msg, "/key: No such file"));
	put(key_path, "secret-one\r\n");
	assert_int_equal(get(p, T0 + 2, &c, &why), 0);
	assert_string_equal(c.access_key_id, "AKIAONE");
	assert_string_equal(c.secret_access_key, "secret-one");
	assert_null(c.session_token);
	assert_string_equal(floe_s3_credprov_source(p), "static");
	floe_aws_credentials_fini(&c);
	floe_s3_credprov_free(p);
}

/* A rotation: rewritten in place or renamed over, the next get has the new keys; a file
 * that goes away stops them at once (nothing stale is served), and they come back with
 * it. */
static void test_files_rotate(void **state)
{
	(void)state;
	put(id_path, "AKIAONE");
	put(key_path, "secret-one");
	put(tok_path, "token-one");
	struct floe_s3_credprov *p = files_prov(id_path, key_path, tok_path);
	struct floe_aws_credentials c = {0};
	struct floe_err why;
	assert_int_equal(get(p, T0, &c, &why), 0);
	assert_string_equal(c.session_token, "token-one");
	/* In place, another length. */
	put(tok_path, "token-number-two");
	assert_int_equal(get(p, T0 + 1, &c, &why), 0);
	assert_string_equal(c.session_token, "token-number-two");
	/* Renamed over (a new inode, the same length). */
	char tmp[160];
	snprintf(tmp, sizeof(tmp), "%s/id.new", dir);
	put(tmp, "AKIATWO");
	assert_int_equal(rename(tmp, id_path), 0);
	assert_int_equal(get(p, T0 + 2, &c, &why), 0);
	assert_string_equal(c.access_key_id, "AKIATWO");
	assert_string_equal(c.secret_access_key, "secret-one");
	/* A symbolic link swapped to another target (a Kubernetes secret volume's ..data). */
	char a[160], b[160], link[160];
	snprintf(a, sizeof(a), "%s/key.a", dir);
	snprintf(b, sizeof(b), "%s/key.b", dir);
	snprintf(link, sizeof(link), "%s/key.link", dir);
	put(a, "secret-a");
	put(b, "secret-b");
	assert_int_equal(unlink(key_path), 0);
	assert_int_equal(symlink(a, key_path), 0);
	assert_int_equal(get(p, T0 + 2, &c, &why), 0);
	assert_string_equal(c.secret_access_key, "secret-a");
	assert_int_equal(symlink(b, link), 0);
	assert_int_equal(rename(link, key_path), 0);
	assert_int_equal(get(p, T0 + 2, &c, &why), 0);
	assert_string_equal(c.secret_access_key, "secret-b");
	unlink(a);
	unlink(b);
	/* Gone: unavailable, the keys read before are not served. */
	assert_int_equal(unlink(key_path), 0);
	struct floe_aws_credentials none = {0};
	assert_int_equal(get(p, T0 + 3, &none, &why), FLOE_S3_EUNAVAILABLE);
	assert_null(none.access_key_id);
	assert_non_null(strstr(why.msg, "/key: No such file"));
	put(key_path, "secret-three");
	assert_int_equal(get(p, T0 + 4, &c, &why), 0);
	assert_string_equal(c.secret_access_key, "secret-three");
	floe_aws_credentials_fini(&c);
	floe_s3_credprov_free(p);
}

/* A file caught mid-rotation is not used: emptied, zeros (a power cut), or two lines. Each
 * is unavailable with its reason until the file is whole. */
static void test_files_in_flux(void **state)
{
	(void)state;
	put(id_path, "AKIAONE");
	put(key_path, "secret-one");
	struct floe_s3_credprov *p = files_prov(id_path, key_path, NULL);
	struct floe_aws_credentials c = {0};
	struct floe_err why;
	assert_int_equal(get(p, T0, &c, &why), 0);
	static const struct {
		const char *text;
		size_t n;
		int64_t age;
		const char *reason;
	} flux[] = {
	    {"", 0, 10, "/id: is empty"},
	    {"\n", 1, 10, "/id: is empty"},
	    {"\0\0\0\0\0\0\0", 7, 10, "/id: holds a NUL byte"},
	    {"AKIATWO\nsecret-two\n", 19, 10, "/id: holds a line break"},
	};
	for (size_t i = 0; i < sizeof(flux) / sizeof(flux[0]); i++) {
		put_at(id_path, flux[i].text, flux[i].n, flux[i].age, 0);
		struct floe_aws_credentials none = {0};
		assert_int_equal(get(p, T0 + 1 + (int64_t)i, &none, &why), FLOE_S3_EUNAVAILABLE);
		assert_null(none.access_key_id);
		if (!strstr(why.msg, flux[i].reason))
			fail_msg("case %zu: '%s' does not say '%s'", i, why.msg, flux[i].reason);
	}
	put(id_path, "AKIATWO");
	assert_int_equal(get(p, T0 + 10, &c, &why), 0);
	assert_string_equal(c.access_key_id, "AKIATWO");
	/* Just written: read once its writer has left it alone for a second (the get waits
	 * that out, so that a file written just before a start is taken at once). */
	put_at(id_path, "AKIATRE", 7, 0, 0);
	assert_int_equal(get(p, T0 + 11, &c, &why), 0);
	assert_string_equal(c.access_key_id, "AKIATRE");
	floe_aws_credentials_fini(&c);
	floe_s3_credprov_free(p);
}

/* A rewrite that stat cannot see (same inode, size and mtime: a file system with coarse
 * timestamps) is found by the read a minute after the last one, and not before: an
 * unchanged file costs a stat, not a read. */
static void test_files_reread(void **state)
{
	(void)state;
	time_t mtime = time(NULL) - 100;
	put_at(id_path, "AKIAONE", 7, -1, mtime);
	put(key_path, "secret-one");
	struct floe_s3_credprov *p = files_prov(id_path, key_path, NULL);
	struct floe_aws_credentials c = {0};
	struct floe_err why;
	assert_int_equal(get(p, T0, &c, &why), 0);
	put_at(id_path, "AKIATWO", 7, -1, mtime);
	assert_int_equal(get(p, T0 + 59, &c, &why), 0);
	assert_string_equal(c.access_key_id, "AKIAONE");
	assert_int_equal(get(p, T0 + 60, &c, &why), 0);
	assert_string_equal(c.access_key_id, "AKIATWO");
	/* A clock stepped back past the last read reads again too. */
	put_at(id_path, "AKIATRE", 7, -1, mtime);
	assert_int_equal(get(p, T0 - 3600, &c, &why), 0);
	assert_string_equal(c.access_key_id, "AKIATRE");
	floe_aws_credentials_fini(&c);
	floe_s3_credprov_free(p);
}

/* A key given as a value (an env: reference) beside a file, the file's key missing half,
 * and keys set by a catalog replacing the files'. */
static void test_files_mixed(void **state)
{
	(void)state;
	struct floe_aws_credentials given = {"AKIAENV", NULL, "token-env", NULL};
	struct floe_s3_credprov_options o = {.providers = FLOE_S3_CREDPROV_STATIC,
					     .static_credentials = &given,
					     .key_files = {NULL, key_path, NULL}};
	struct floe_s3_credprov *p = NULL;
	assert_int_equal(floe_s3_credprov_new(&o, &p), 0);
	struct floe_aws_credentials c = {0};
	struct floe_err why;
	assert_int_equal(get(p, T0, &c, &why), FLOE_S3_EUNAVAILABLE);
	put(key_path, "secret-file");
	assert_int_equal(get(p, T0 + 1, &c, &why), 0);
	assert_string_equal(c.access_key_id, "AKIAENV");
	assert_string_equal(c.secret_access_key, "secret-file");
	assert_string_equal(c.session_token, "token-env");
	struct floe_aws_credentials vended = {"AKIAVEND", "secret-vend", NULL, NULL};
	assert_int_equal(floe_s3_credprov_set_static(p, &vended, 0), 0);
	assert_int_equal(unlink(key_path), 0);
	assert_int_equal(get(p, T0 + 100, &c, &why), 0);
	assert_string_equal(c.access_key_id, "AKIAVEND");
	floe_aws_credentials_fini(&c);
	floe_s3_credprov_free(p);
	/* An access key file without a secret anywhere is a configuration mistake. */
	struct floe_s3_credprov_options half = {.providers = FLOE_S3_CREDPROV_STATIC,
						.key_files = {id_path, NULL, NULL}};
	p = NULL;
	assert_int_equal(floe_s3_credprov_new(&half, &p), -EINVAL);
	assert_null(p);
}

/* floe_secret_read_file, and resolve's file: and env: forms. */
static void test_secret_file(void **state)
{
	(void)state;
	char *v = NULL, ref[160];
	put(id_path, "value\n");
	assert_int_equal(floe_secret_read_file(NULL, id_path, &v), 0);
	assert_string_equal(v, "value");
	floe_secret_free(NULL, v);
	snprintf(ref, sizeof(ref), "file:%s", id_path);
	assert_int_equal(floe_secret_resolve(NULL, ref, &v), 0);
	assert_string_equal(v, "value");
	floe_secret_free(NULL, v);
	v = NULL;
	put_at(id_path, "va\0ue", 5, 10, 0);
	assert_int_equal(floe_secret_read_file(NULL, id_path, &v), -EILSEQ);
	put_at(id_path, "\r\n", 2, 10, 0);
	assert_int_equal(floe_secret_read_file(NULL, id_path, &v), -ENODATA);
	assert_int_equal(floe_secret_read_file(NULL, tok_path, &v), -ENOENT);
	assert_null(v);
	setenv("FLOE_TEST_SECRET", "from-env", 1);
	assert_int_equal(floe_secret_resolve(NULL, "env:FLOE_TEST_SECRET", &v), 0);
	assert_string_equal(v, "from-env");
	floe_secret_free(NULL, v);
	setenv("FLOE_TEST_SECRET", "", 1);
	assert_int_equal(floe_secret_resolve(NULL, "env:FLOE_TEST_SECRET", &v), -ENODATA);
	unsetenv("FLOE_TEST_SECRET");
	assert_int_equal(floe_secret_resolve(NULL, "env:FLOE_TEST_SECRET", &v), -ENOENT);
	assert_int_equal(floe_secret_resolve(NULL, "vault:x", &v), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_files_appear, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_files_rotate, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_files_in_flux, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_files_reread, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_files_mixed, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_secret_file, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Tests of platform/fs_record: the durable operations each fs.c entry makes, in order and
 * with their bytes (the protocol a power cut is judged against: temp file, write, fsync,
 * close, rename or link, directory sync), escaped paths, nothing recorded after the stop,
 * and two threads' records kept whole in one log. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "platform/fs.h"
#include "platform/fs_record.h"

#include <ftw.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[64], logp[96];

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(p);
}

static int setup(void **state)
{
	(void)state;
	strcpy(dir, "/tmp/floe-test-fsrec-XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	snprintf(logp, sizeof(logp), "%s.log", dir);
	unlink(logp);
	return floe_fs_record_start(logp);
}

static int teardown(void **state)
{
	(void)state;
	floe_fs_record_stop();
	unlink(logp);
	return nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* The log as records: "op path [path2]" lines, a write's bytes checked and left out. */
struct rec {
	char op[16], a[256], b[256];
	unsigned long long off;
	unsigned long n;
	char data[64];
};

static size_t read_log(struct rec *out, size_t cap)
{
	FILE *f = fopen(logp, "rb");
	assert_non_null(f);
	size_t k = 0;
	char line[1024];
	while (fgets(line, sizeof(line), f)) {
		assert_true(k < cap);
		struct rec *r = &out[k++];
		memset(r, 0, sizeof(*r));
		line[strcspn(line, "\n")] = '\0';
		int got = sscanf(line, "%15s %255s %255s", r->op, r->a, r->b);
		assert_true(got >= 2);
		if (strcmp(r->op, "write") == 0) {
			assert_int_equal(sscanf(line, "write %255s %llu %lu", r->a, &r->off, &r->n), 3);
			r->b[0] = '\0';
			assert_true(r->n < sizeof(r->data));
			assert_int_equal(fread(r->data, 1, r->n, f), r->n);
			assert_int_equal(fgetc(f), '\n');
		}
	}
	fclose(f);
	return k;
}

static void expect(const struct rec *r, const char *op, const char *a, const char *b)
{
	assert_string_equal(r->op, op);
	if (a)
		assert_string_equal(r->a, a);
	if (b)
		assert_string_equal(r->b, b);
}

static void test_atomic_replace_and_exclusive_create(void **state)
{
	(void)state;
	char path[128], path2[128];
	struct rec r[32];
	snprintf(path, sizeof(path), "%s/checkpoint", dir);
	snprintf(path2, sizeof(path2), "%s/id", dir);
	assert_int_equal(floe_fs_write_atomic(path, "hello", 5), 0);
	assert_int_equal(floe_fs_create_excl(path2, "xy", 2), 0);
	size_t n = read_log(r, 32);
	assert_int_equal(n, 13);
	/* Replace: a temp file beside it, written, synced and closed, then renamed over it
	 * and the directory synced. */
	expect(&r[0], "create", NULL, NULL);
	assert_non_null(strstr(r[0].a, "/.checkpoint.tmp."));
	expect(&r[1], "write", r[0].a, NULL);
	assert_int_equal(r[1].off, 0);
	assert_int_equal(r[1].n, 5);
	assert_memory_equal(r[1].data, "hello", 5);
	expect(&r[2], "fsync", r[0].a, NULL);
	expect(&r[3], "close", r[0].a, NULL);
	expect(&r[4], "rename", r[0].a, path);
	expect(&r[5], "fsyncdir", dir, NULL);
	/* Exclusive create: the same, linked where nothing is, the temp name removed. */
	expect(&r[6], "create", NULL, NULL);
	expect(&r[7], "write", r[6].a, NULL);
	expect(&r[8], "fsync", r[6].a, NULL);
	expect(&r[9], "close", r[6].a, NULL);
	expect(&r[10], "link", r[6].a, path2);
	expect(&r[11], "unlink", r[6].a, NULL);
	expect(&r[12], "fsyncdir", dir, NULL);
}

static void test_stream_dirs_and_names(void **state)
{
	(void)state;
	char path[128], sub[128], moved[128];
	struct rec r[32];
	snprintf(path, sizeof(path), "%s/a file", dir);
	snprintf(sub, sizeof(sub), "%s/x/y", dir);
	snprintf(moved, sizeof(moved), "%s/x/y/a file", dir);
	struct floe_file *f;
	assert_int_equal(floe_file_create(path, &f), 0);
	assert_int_equal(floe_file_write(f, "abc", 3), 0);
	assert_int_equal(floe_file_write(f, "defg", 4), 0);
	assert_int_equal(floe_file_sync(f), 0);
	assert_int_equal(floe_file_close(f), 0);
	assert_int_equal(floe_fs_mkdirs(sub), 0);
	assert_int_equal(floe_fs_rename(path, moved), 0);
	assert_int_equal(floe_fs_unlink(moved), 0);
	size_t n = read_log(r, 32);
	assert_int_equal(n, 13);
	char esc[160];
	snprintf(esc, sizeof(esc), "%s/a%%20file", dir);
	expect(&r[0], "create", esc, NULL);
	expect(&r[1], "write", esc, NULL);
	assert_int_equal(r[1].off, 0);
	expect(&r[2], "write", esc, NULL);
	assert_int_equal(r[2].off, 3);
	assert_memory_equal(r[2].data, "defg", 4);
	expect(&r[3], "fsync", esc, NULL);
	expect(&r[4], "close", esc, NULL);
	char x[128];
	snprintf(x, sizeof(x), "%s/x", dir);
	/* Each directory made is synced into its parent before the next is made in it: a
	 * power cut would otherwise lose a table's directory, and all that the checkpoint
	 * says was committed into it, while the files in it were synced. */
	expect(&r[5], "mkdir", x, NULL);
	expect(&r[6], "fsyncdir", dir, NULL);
	expect(&r[7], "mkdir", sub, NULL);
	expect(&r[8], "fsyncdir", x, NULL);
	char escm[160];
	snprintf(escm, sizeof(escm), "%s/x/y/a%%20file", dir);
	expect(&r[9], "rename", esc, escm);
	/* Both directories of a rename across them are synced, the target's first. */
	expect(&r[10], "fsyncdir", sub, NULL);
	expect(&r[11], "fsyncdir", dir, NULL);
	expect(&r[12], "unlink", escm, NULL);
}

static void *writer(void *arg)
{
	char path[128];
	snprintf(path, sizeof(path), "%s/t%ld", dir, (long)(intptr_t)arg);
	for (int i = 0; i < 200; i++)
		if (floe_fs_write_atomic(path, "0123456789abcdef", 16) != 0)
			return (void *)1;
	return NULL;
}

static void test_threads_and_stop(void **state)
{
	(void)state;
	pthread_t t[2];
	for (long i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&t[i], NULL, writer, (void *)(intptr_t)i), 0);
	for (int i = 0; i < 2; i++) {
		void *rc;
		pthread_join(t[i], &rc);
		assert_null(rc);
	}
	static struct rec r[2600];
	size_t n = read_log(r, 2600);
	assert_int_equal(n, 2 * 200 * 6);
	size_t writes = 0;
	for (size_t i = 0; i < n; i++)
		if (strcmp(r[i].op, "write") == 0) {
			assert_memory_equal(r[i].data, "0123456789abcdef", 16);
			writes++;
		}
	assert_int_equal(writes, 400);
	floe_fs_record_stop();
	char path[128];
	snprintf(path, sizeof(path), "%s/after", dir);
	assert_int_equal(floe_fs_write_atomic(path, "z", 1), 0);
	assert_int_equal(read_log(r, 2600), n);
}

/* Two processes recording into one log (`floe maintain` beside a running agent): each
 * record goes out whole, so the log reads back as every record of both. */
static void test_two_processes(void **state)
{
	(void)state;
	pid_t child = fork();
	assert_true(child >= 0);
	if (child == 0)
		_exit(writer((void *)(intptr_t)1) ? 1 : 0);
	void *rc = writer((void *)(intptr_t)0);
	int status;
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_null(rc);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	static struct rec r[2600];
	size_t n = read_log(r, 2600);
	assert_int_equal(n, 2 * 200 * 6);
	for (size_t i = 0; i < n; i++)
		if (strcmp(r[i].op, "write") == 0)
			assert_memory_equal(r[i].data, "0123456789abcdef", 16);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_atomic_replace_and_exclusive_create, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_stream_dirs_and_names, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_threads_and_stop, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_two_processes, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Tests of platform/fs and platform/glob: atomic replace, exclusive create under a
 * multi-process race, fault injection (EIO, ENOSPC, short writes) through the syscall
 * table, bounded reads, sorted listings, the streaming writer and read access. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "formats/base/alloc.h"
#include "platform/fs.h"
#include "platform/glob.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[64];

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(p);
}

static int setup(void **state)
{
	strcpy(dir, "/tmp/floe-test-fs-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	floe_fs_set_faults(NULL);
	return nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static char *at(const char *name)
{
	static char buf[4][256];
	static int k;
	k = (k + 1) % 4;
	snprintf(buf[k], sizeof(buf[k]), "%s/%s", dir, name);
	return buf[k];
}

/* Asserts that path holds exactly s. */
static void assert_content(const char *path, const char *s)
{
	void *data = NULL;
	size_t len = 0;
	assert_int_equal(floe_fs_read_file(NULL, path, 1 << 20, &data, &len), 0);
	assert_int_equal(len, strlen(s));
	assert_memory_equal(data, s, len);
	assert_int_equal(((char *)data)[len], 0);
	floe_free(NULL, data);
}

static int count_cb(void *ctx, const char *name)
{
	(*(int *)ctx)++;
	return 0;
}

static int entries(const char *d)
{
	int n = 0;
	assert_int_equal(floe_fs_list(NULL, d, count_cb, &n), 0);
	return n;
}

/* --- fault hooks ---------------------------------------------------------------------- */

static int fail_errno;
static ssize_t write_fail(int fd, const void *p, size_t n)
{
	errno = fail_errno;
	return -1;
}
static int fsync_fail(int fd)
{
	errno = fail_errno;
	return -1;
}
static int rename_fail(const char *a, const char *b)
{
	errno = fail_errno;
	return -1;
}
static int link_fail(const char *a, const char *b)
{
	errno = fail_errno;
	return -1;
}
static int short_calls;
/* Writes at most 3 bytes per call and fails every other call with EINTR first. */
static ssize_t write_short(int fd, const void *p, size_t n)
{
	if (short_calls++ % 2 == 0) {
		errno = EINTR;
		return -1;
	}
	return write(fd, p, n < 3 ? n : 3);
}
static ssize_t pread_fail(int fd, void *p, size_t n, int64_t off)
{
	errno = EIO;
	return -1;
}

/* --- tests ---------------------------------------------------------------------------- */

static void test_write_atomic_replaces(void **state)
{
	const char *p = at("f");
	assert_int_equal(floe_fs_write_atomic(p, "one", 3), 0);
	assert_content(p, "one");
	assert_int_equal(floe_fs_write_atomic(p, "second", 6), 0);
	assert_content(p, "second");
	assert_int_equal(floe_fs_write_atomic(p, "", 0), 0);
	assert_content(p, "");
	assert_int_equal(entries(dir), 1); /* no temp file left behind */

	struct floe_fs_piece pieces[3] = {{"ab", 2}, {NULL, 0}, {"cde", 3}};
	assert_int_equal(floe_fs_write_atomicv(p, pieces, 3), 0);
	assert_content(p, "abcde");
	/* A relative path (no directory part) works in the current directory. */
	char cwd[512];
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_int_equal(chdir(dir), 0);
	assert_int_equal(floe_fs_write_atomic("rel", "r", 1), 0);
	assert_int_equal(chdir(cwd), 0);
	assert_content(at("rel"), "r");
}

static void check_atomic_fault(struct floe_fs_faults *f, int err)
{
	const char *p = at("g");
	assert_int_equal(floe_fs_write_atomic(p, "old", 3), 0);
	fail_errno = err;
	floe_fs_set_faults(f);
	assert_int_equal(floe_fs_write_atomic(p, "new content", 11), -err);
	floe_fs_set_faults(NULL);
	assert_content(p, "old");
	assert_int_equal(entries(dir), 1);
	assert_int_equal(floe_fs_unlink(p), 0);
}

static void test_write_atomic_faults(void **state)
{
	check_atomic_fault(&(struct floe_fs_faults){.write = write_fail}, ENOSPC);
	check_atomic_fault(&(struct floe_fs_faults){.fsync = fsync_fail}, EIO);
	check_atomic_fault(&(struct floe_fs_faults){.rename = rename_fail}, EIO);
	/* A failing fsync of a target that does not exist yet leaves no target either. */
	fail_errno = EIO;
	floe_fs_set_faults(&(struct floe_fs_faults){.fsync = fsync_fail});
	assert_int_equal(floe_fs_write_atomic(at("h"), "x", 1), -EIO);
	floe_fs_set_faults(NULL);
	assert_int_equal(floe_fs_exists(at("h")), 0);
	assert_int_equal(entries(dir), 0);
}

static void test_short_writes(void **state)
{
	short_calls = 0;
	floe_fs_set_faults(&(struct floe_fs_faults){.write = write_short});
	const char *s = "a somewhat longer content, written 3 bytes at a time";
	assert_int_equal(floe_fs_write_atomic(at("s"), s, strlen(s)), 0);
	struct floe_file *f = NULL;
	assert_int_equal(floe_file_create(at("w"), &f), 0);
	assert_int_equal(floe_file_write(f, s, strlen(s)), 0);
	assert_int_equal(floe_file_write(f, "!", 1), 0);
	assert_int_equal(floe_file_size(f), strlen(s) + 1);
	assert_int_equal(floe_file_sync(f), 0);
	assert_int_equal(floe_file_close(f), 0);
	floe_fs_set_faults(NULL);
	assert_true(short_calls > 20);
	assert_content(at("s"), s);
	char want[128];
	snprintf(want, sizeof(want), "%s!", s);
	assert_content(at("w"), want);
}

static void test_file_writer(void **state)
{
	struct floe_file *f = NULL;
	assert_int_equal(floe_file_create(at("w"), &f), 0);
	assert_int_equal(floe_file_write(f, "hello ", 6), 0);
	assert_int_equal(floe_file_write(f, "world", 5), 0);
	assert_int_equal(floe_file_size(f), 11);
	fail_errno = ENOSPC;
	floe_fs_set_faults(&(struct floe_fs_faults){.write = write_fail});
	assert_int_equal(floe_file_write(f, "x", 1), -ENOSPC);
	floe_fs_set_faults(&(struct floe_fs_faults){.fsync = fsync_fail});
	fail_errno = EIO;
	assert_int_equal(floe_file_sync(f), -EIO);
	floe_fs_set_faults(NULL);
	assert_int_equal(floe_file_size(f), 11);
	assert_int_equal(floe_file_close(f), 0);
	assert_int_equal(floe_file_close(NULL), 0);
	assert_content(at("w"), "hello world");
	/* Create truncates. */
	assert_int_equal(floe_file_create(at("w"), &f), 0);
	assert_int_equal(floe_file_close(f), 0);
	assert_content(at("w"), "");
	assert_int_equal(floe_file_create(at("nodir/w"), &f), -ENOENT);
}

static void test_create_excl(void **state)
{
	const char *p = at("c");
	assert_int_equal(floe_fs_create_excl(p, "first", 5), 0);
	assert_int_equal(floe_fs_create_excl(p, "second", 6), -EEXIST);
	assert_content(p, "first");
	assert_int_equal(entries(dir), 1);

	fail_errno = EIO;
	floe_fs_set_faults(&(struct floe_fs_faults){.link = link_fail});
	assert_int_equal(floe_fs_create_excl(at("d"), "x", 1), -EIO);
	floe_fs_set_faults(&(struct floe_fs_faults){.fsync = fsync_fail});
	assert_int_equal(floe_fs_create_excl(at("d"), "x", 1), -EIO);
	fail_errno = ENOSPC;
	floe_fs_set_faults(&(struct floe_fs_faults){.write = write_fail});
	assert_int_equal(floe_fs_create_excl(at("d"), "x", 1), -ENOSPC);
	floe_fs_set_faults(NULL);
	assert_int_equal(floe_fs_exists(at("d")), 0);
	assert_int_equal(entries(dir), 1);
}

/* floe_fs_copy_excl: a copy that never replaces what is there, and leaves no temp file. */
static void test_copy_excl(void **state)
{
	(void)state;
	char src[512];
	snprintf(src, sizeof(src), "%s", at("src"));
	assert_int_equal(floe_fs_create_excl(src, "payload", 7), 0);
	const char *p = at("copy");
	assert_int_equal(floe_fs_copy_excl(src, p), 0);
	assert_content(p, "payload");
	assert_int_equal(floe_fs_create_excl(at("other"), "theirs", 6), 0);
	assert_int_equal(floe_fs_copy_excl(src, at("other")), -EEXIST);
	assert_content(at("other"), "theirs");
	fail_errno = EIO;
	floe_fs_set_faults(&(struct floe_fs_faults){.link = link_fail});
	assert_int_equal(floe_fs_copy_excl(src, at("d")), -EIO);
	floe_fs_set_faults(NULL);
	assert_int_equal(floe_fs_exists(at("d")), 0);
	assert_int_equal(floe_fs_copy_excl(at("absent"), at("d")), -ENOENT);
	assert_int_equal(entries(dir), 3);
}

#define RACERS 8
#define RACE_LEN (256 * 1024)

static void test_create_excl_race(void **state)
{
	const char *p = at("race");
	int gate[2];
	assert_int_equal(pipe(gate), 0);
	pid_t pids[RACERS];
	for (int i = 0; i < RACERS; i++) {
		pids[i] = fork();
		assert_true(pids[i] >= 0);
		if (pids[i] == 0) {
			close(gate[1]);
			char *buf = malloc(RACE_LEN);
			memset(buf, 'A' + i, RACE_LEN);
			char c;
			/* Blocks until the parent closes the gate: all start together. */
			(void)!read(gate[0], &c, 1);
			int rc = floe_fs_create_excl(p, buf, RACE_LEN);
			_exit(rc == 0 ? 0 : rc == -EEXIST ? 1 : 2);
		}
	}
	close(gate[0]);
	close(gate[1]);
	int winners = 0, losers = 0, winner = -1;
	for (int i = 0; i < RACERS; i++) {
		int st = 0;
		assert_int_equal(waitpid(pids[i], &st, 0), pids[i]);
		assert_true(WIFEXITED(st));
		if (WEXITSTATUS(st) == 0) {
			winners++;
			winner = i;
		} else if (WEXITSTATUS(st) == 1) {
			losers++;
		}
	}
	assert_int_equal(winners, 1);
	assert_int_equal(losers, RACERS - 1);
	void *data = NULL;
	size_t len = 0;
	assert_int_equal(floe_fs_read_file(NULL, p, RACE_LEN, &data, &len), 0);
	assert_int_equal(len, RACE_LEN);
	for (size_t i = 0; i < len; i++)
		if (((char *)data)[i] != 'A' + winner)
			fail_msg("byte %zu is not the winner's", i);
	floe_free(NULL, data);
	assert_int_equal(entries(dir), 1); /* every temp file removed */
}

static void test_read_file(void **state)
{
	const char *p = at("r");
	char hundred[100];
	memset(hundred, 'x', sizeof(hundred));
	assert_int_equal(floe_fs_write_atomic(p, hundred, sizeof(hundred)), 0);
	void *data = (void *)1;
	size_t len = 7;
	assert_int_equal(floe_fs_read_file(NULL, p, 99, &data, &len), -EFBIG);
	assert_ptr_equal(data, (void *)1);
	assert_int_equal(len, 7);
	assert_int_equal(floe_fs_read_file(NULL, p, 100, &data, &len), 0);
	assert_int_equal(len, 100);
	assert_memory_equal(data, hundred, 100);
	floe_free(NULL, data);
	assert_int_equal(floe_fs_read_file(NULL, at("absent"), 100, &data, &len), -ENOENT);
	assert_int_equal(floe_fs_read_file(NULL, dir, 100, &data, &len), -EISDIR);
	assert_int_equal(floe_fs_write_atomic(p, "", 0), 0);
	assert_int_equal(floe_fs_read_file(NULL, p, 0, &data, &len), 0);
	assert_int_equal(len, 0);
	floe_free(NULL, data);
}

struct names {
	char v[16][16];
	int n, stop_at;
};

static int collect(void *ctx, const char *name)
{
	struct names *s = ctx;
	if (s->n == s->stop_at)
		return 42;
	snprintf(s->v[s->n++], 16, "%s", name);
	return 0;
}

static void test_list_sorted(void **state)
{
	const char *names[] = {"b", "\xc3\xa9", "a0", "B", "a", "_"};
	for (size_t i = 0; i < 6; i++)
		assert_int_equal(floe_fs_write_atomic(at(names[i]), "", 0), 0);
	assert_int_equal(floe_fs_mkdirs(at("sub")), 0);
	struct names s = {.stop_at = -1};
	assert_int_equal(floe_fs_list(NULL, dir, collect, &s), 0);
	const char *want[] = {"B", "_", "a", "a0", "b", "sub", "\xc3\xa9"};
	assert_int_equal(s.n, 7);
	for (int i = 0; i < 7; i++)
		assert_string_equal(s.v[i], want[i]);
	struct names t = {.stop_at = 2};
	assert_int_equal(floe_fs_list(NULL, dir, collect, &t), 42);
	assert_int_equal(t.n, 2);
	assert_int_equal(floe_fs_list(NULL, at("absent"), collect, &t), -ENOENT);
}

static void test_dirs_and_moves(void **state)
{
	assert_int_equal(floe_fs_mkdirs(at("x/y//z/")), 0);
	assert_int_equal(floe_fs_mkdirs(at("x/y/z")), 0);
	assert_int_equal(floe_fs_exists(at("x/y/z")), 1);
	assert_int_equal(floe_fs_exists(at("x/nope")), 0);
	assert_int_equal(floe_fs_fsync_dir(at("x/y")), 0);
	assert_int_equal(floe_fs_write_atomic(at("x/file"), "data", 4), 0);
	assert_int_equal(floe_fs_mkdirs(at("x/file/sub")), -ENOTDIR);
	assert_int_equal(floe_fs_mkdirs(at("x/file")), -ENOTDIR);
	assert_int_equal(floe_fs_exists(at("x/file/sub")), 0);

	assert_int_equal(floe_fs_rename(at("x/file"), at("x/y/z/moved")), 0);
	assert_int_equal(floe_fs_exists(at("x/file")), 0);
	assert_content(at("x/y/z/moved"), "data");
	assert_int_equal(floe_fs_rename(at("x/file"), at("x/other")), -ENOENT);

	assert_int_equal(floe_fs_copy(at("x/y/z/moved"), at("copy")), 0);
	assert_content(at("copy"), "data");
	assert_content(at("x/y/z/moved"), "data");
	assert_int_equal(floe_fs_copy(at("absent"), at("copy2")), -ENOENT);
	fail_errno = EIO;
	floe_fs_set_faults(&(struct floe_fs_faults){.fsync = fsync_fail});
	assert_int_equal(floe_fs_copy(at("x/y/z/moved"), at("copy3")), -EIO);
	floe_fs_set_faults(NULL);
	assert_int_equal(floe_fs_exists(at("copy3")), 0);
	assert_int_equal(entries(dir), 2); /* x and copy: no temp left */

	assert_int_equal(floe_fs_unlink(at("copy")), 0);
	assert_int_equal(floe_fs_unlink(at("copy")), -ENOENT);
}

static void test_read_access(void **state)
{
	assert_int_equal(floe_fs_write_atomic(at("t"), "0123456789", 10), 0);
	struct floe_fs_stat st, st2;
	assert_int_equal(floe_fs_stat(at("t"), &st), 0);
	assert_true(st.regular);
	assert_int_equal(st.size, 10);
	int fd = -1;
	assert_int_equal(floe_fs_open_read(at("t"), &fd), 0);
	assert_int_equal(floe_fs_fstat(fd, &st2), 0);
	assert_int_equal(st.dev, st2.dev);
	assert_int_equal(st.ino, st2.ino);
	char buf[16];
	size_t got = 0;
	assert_int_equal(floe_fs_pread(fd, buf, 4, 3, &got), 0);
	assert_int_equal(got, 4);
	assert_memory_equal(buf, "3456", 4);
	assert_int_equal(floe_fs_pread(fd, buf, 16, 8, &got), 0);
	assert_int_equal(got, 2);
	assert_int_equal(floe_fs_pread(fd, buf, 16, 10, &got), 0);
	assert_int_equal(got, 0);
	floe_fs_set_faults(&(struct floe_fs_faults){.pread = pread_fail});
	assert_int_equal(floe_fs_pread(fd, buf, 4, 0, &got), -EIO);
	floe_fs_set_faults(NULL);
	assert_int_equal(floe_fs_close(fd), 0);
	assert_int_equal(floe_fs_stat(dir, &st), 0);
	assert_false(st.regular);
	assert_int_equal(floe_fs_stat(at("absent"), &st), -ENOENT);
	assert_int_equal(floe_fs_open_read(at("absent"), &fd), -ENOENT);
}

/* One holder at a time, named by its process id; a holder that dies (here: a child
 * killed while holding it) frees the lock without anyone removing the file. */
static void test_lock(void **state)
{
	int fd = -1, fd2 = -1;
	long holder = -1;
	assert_int_equal(floe_fs_lock(at("lock"), &fd, &holder), 0);
	assert_true(fd >= 0);
	assert_int_equal(floe_fs_lock(at("lock"), &fd2, &holder), -EWOULDBLOCK);
	assert_int_equal(holder, (long)getpid());
	floe_fs_unlock(fd);
	assert_int_equal(floe_fs_lock(at("lock"), &fd, &holder), 0);
	floe_fs_unlock(fd);
	int gate[2], ready[2];
	assert_int_equal(pipe(gate), 0);
	assert_int_equal(pipe(ready), 0);
	pid_t child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		int cfd;
		long h;
		char c = floe_fs_lock(at("lock"), &cfd, &h) == 0 ? 'y' : 'n';
		if (write(ready[1], &c, 1) != 1)
			_exit(1);
		(void)read(gate[0], &c, 1); /* held until the parent kills this process */
		_exit(0);
	}
	char c = 0;
	assert_int_equal(read(ready[0], &c, 1), 1);
	assert_int_equal(c, 'y');
	assert_int_equal(floe_fs_lock(at("lock"), &fd, &holder), -EWOULDBLOCK);
	assert_int_equal(holder, (long)child);
	kill(child, SIGKILL);
	int status;
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_int_equal(floe_fs_lock(at("lock"), &fd, &holder), 0);
	assert_int_equal(floe_fs_exists(at("lock")), 1);
	floe_fs_unlock(fd);
	floe_fs_unlock(-1);
	close(gate[0]);
	close(gate[1]);
	close(ready[0]);
	close(ready[1]);
}

static int glob_cb(void *ctx, const char *path)
{
	struct names *s = ctx;
	const char *base = strrchr(path, '/') + 1;
	snprintf(s->v[s->n++], 16, "%s", base);
	return 0;
}

static void test_glob(void **state)
{
	const char *names[] = {"b.log", "a.log", "c.gz", "d.txt"};
	for (size_t i = 0; i < 4; i++)
		assert_int_equal(floe_fs_write_atomic(at(names[i]), "", 0), 0);
	struct names s = {.stop_at = -1};
	assert_int_equal(floe_glob(at("*.log"), glob_cb, &s), 0);
	assert_int_equal(s.n, 2);
	assert_string_equal(s.v[0], "a.log");
	assert_string_equal(s.v[1], "b.log");
	s.n = 0;
	assert_int_equal(floe_glob(at("*.none"), glob_cb, &s), 0);
	assert_int_equal(s.n, 0);
	s.n = 0;
	assert_int_equal(floe_glob(at("{c.gz,d.txt}"), glob_cb, &s), 0);
	assert_int_equal(s.n, 2);
	assert_true(floe_fnmatch("*.gz", "c.gz"));
	assert_true(floe_fnmatch("*/c.gz", "/var/log/c.gz"));
	assert_false(floe_fnmatch("*.gz", "c.gzz"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_write_atomic_replaces, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_write_atomic_faults, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_short_writes, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_file_writer, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_create_excl, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_copy_excl, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_create_excl_race, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_read_file, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_list_sorted, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_dirs_and_moves, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_read_access, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_glob, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_lock, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

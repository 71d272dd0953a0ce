/* Tests of platform/watch: inotify events for files created, written, renamed and removed
 * in a watched directory; the polling backend's directory changes; timeouts; symlink
 * target directories; the descriptor for an epoll set. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "platform/watch.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[64];

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(p);
}

static int setup(void **state)
{
	strcpy(dir, "/tmp/floe-test-watch-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
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

static void put(const char *name, const char *s)
{
	int fd = open(at(name), O_WRONLY | O_CREAT | O_APPEND, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, s, strlen(s)), (ssize_t)strlen(s));
	close(fd);
}

/* Collects the kinds seen for name until the queue is empty. */
static unsigned kinds_for(struct floe_watch *w, const char *name)
{
	unsigned k = 0;
	struct floe_watch_event ev;
	while (floe_watch_next(w, &ev) == 1) {
		if (ev.name && strcmp(ev.name, name) == 0) {
			assert_string_equal(ev.dir, dir);
			k |= ev.kind;
		}
	}
	return k;
}

static void test_inotify_events(void **state)
{
	struct floe_watch *w = NULL;
	assert_int_equal(floe_watch_new(0, &w), 0);
	assert_false(floe_watch_polling(w));
	assert_int_equal(floe_watch_add_dir(w, dir), 0);
	assert_int_equal(floe_watch_add_dir(w, dir), 1); /* once */
	assert_int_equal(floe_watch_count(w), 1);
	assert_true(floe_watch_fd(w) >= 0);
	assert_int_equal(floe_watch_add_dir(w, at("missing")), -ENOENT);
	/* Nothing yet: a timeout. */
	assert_int_equal(floe_watch_wait(w, 20), 0);
	put("a.log", "x\n");
	assert_int_equal(floe_watch_wait(w, 1000), 1);
	assert_int_equal(kinds_for(w, "a.log"), FLOE_WATCH_CREATED | FLOE_WATCH_MODIFIED);
	put("a.log", "y\n");
	assert_int_equal(floe_watch_wait(w, 1000), 1);
	assert_int_equal(kinds_for(w, "a.log"), FLOE_WATCH_MODIFIED);
	assert_int_equal(rename(at("a.log"), at("a.log.1")), 0);
	assert_int_equal(floe_watch_wait(w, 1000), 1);
	/* from and to arrive together */
	struct floe_watch_event ev;
	unsigned from = 0, to = 0;
	while (floe_watch_next(w, &ev) == 1) {
		if (strcmp(ev.name, "a.log") == 0)
			from |= ev.kind;
		if (strcmp(ev.name, "a.log.1") == 0)
			to |= ev.kind;
	}
	assert_int_equal(from, FLOE_WATCH_REMOVED);
	assert_int_equal(to, FLOE_WATCH_CREATED);
	assert_int_equal(unlink(at("a.log.1")), 0);
	assert_int_equal(floe_watch_wait(w, 1000), 1);
	assert_int_equal(kinds_for(w, "a.log.1"), FLOE_WATCH_REMOVED);
	assert_int_equal(floe_watch_next(w, &ev), 0);
	assert_int_equal(floe_watch_wait(w, 10), 0);
	floe_watch_free(w);
	floe_watch_free(NULL);
}

/* The watched directory itself removed: a rescan, and the watch is forgotten. */
static void test_dir_removed(void **state)
{
	struct floe_watch *w = NULL;
	assert_int_equal(floe_watch_new(0, &w), 0);
	assert_int_equal(mkdir(at("sub"), 0755), 0);
	assert_int_equal(floe_watch_add_dir(w, at("sub")), 0);
	assert_int_equal(rmdir(at("sub")), 0);
	assert_int_equal(floe_watch_wait(w, 1000), 1);
	struct floe_watch_event ev;
	bool rescan = false;
	while (floe_watch_next(w, &ev) == 1)
		rescan |= ev.kind == FLOE_WATCH_RESCAN;
	assert_true(rescan);
	assert_int_equal(floe_watch_count(w), 0);
	floe_watch_free(w);
}

/* Thousands of directories (a pod log tree): each added once however often it is added
 * again, an event names the directory it happened in, and a directory removed in the
 * middle leaves the others found (the indexes rebuilt). */
#define MANY 3000
static void test_many_dirs(void **state)
{
	struct floe_watch *w = NULL;
	assert_int_equal(floe_watch_new(0, &w), 0);
	char name[32];
	for (int i = 0; i < MANY; i++) {
		snprintf(name, sizeof(name), "d%d", i);
		assert_int_equal(mkdir(at(name), 0755), 0);
		int rc = floe_watch_add_dir(w, at(name));
		if (rc == 0 && floe_watch_polled(w) > 0)
			skip(); /* fs.inotify.max_user_watches is lower than MANY */
		assert_int_equal(rc, 0);
	}
	for (int i = 0; i < MANY; i++) {
		snprintf(name, sizeof(name), "d%d", i);
		assert_int_equal(floe_watch_add_dir(w, at(name)), 1);
	}
	assert_int_equal(floe_watch_count(w), MANY);
	assert_int_equal(rmdir(at("d7")), 0);
	put("d2999/a.log", "x\n");
	assert_int_equal(floe_watch_wait(w, 1000), 1);
	struct floe_watch_event ev;
	bool rescan = false, created = false;
	while (floe_watch_next(w, &ev) == 1) {
		rescan |= ev.kind == FLOE_WATCH_RESCAN;
		if (ev.name && strcmp(ev.name, "a.log") == 0) {
			assert_string_equal(ev.dir, at("d2999"));
			created |= (ev.kind & FLOE_WATCH_CREATED) != 0;
		}
	}
	assert_true(rescan && created);
	assert_int_equal(floe_watch_count(w), MANY - 1);
	assert_int_equal(floe_watch_add_dir(w, at("d0")), 1);
	assert_int_equal(floe_watch_add_dir(w, at("d2999")), 1);
	assert_int_equal(floe_watch_add_dir(w, at("d7")), -ENOENT);
	floe_watch_clear(w);
	assert_int_equal(floe_watch_add_dir(w, at("d5")), 0);
	floe_watch_free(w);
}

/* A directory emptied and removed while a file of it is still open gets no
 * IN_DELETE_SELF: adding it again looks at its inode (the removal of its entry told that
 * it may have gone), forgets the old watch and watches the directory made under the name. */
static void test_dir_removed_file_open(void **state)
{
	struct floe_watch *w = NULL;
	assert_int_equal(floe_watch_new(0, &w), 0);
	assert_int_equal(mkdir(at("sub"), 0755), 0);
	put("sub/a.log", "x\n");
	int fd = open(at("sub/a.log"), O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(floe_watch_add_dir(w, at("sub")), 0);
	assert_int_equal(unlink(at("sub/a.log")), 0);
	assert_int_equal(rmdir(at("sub")), 0);
	assert_int_equal(floe_watch_wait(w, 1000), 1);
	struct floe_watch_event ev;
	while (floe_watch_next(w, &ev) == 1)
		;
	assert_int_equal(mkdir(at("sub"), 0755), 0);
	assert_int_equal(floe_watch_add_dir(w, at("sub")), 0); /* the new directory */
	put("sub/b.log", "y\n");
	assert_int_equal(floe_watch_wait(w, 1000), 1);
	bool seen = false;
	while (floe_watch_next(w, &ev) == 1)
		seen |= ev.name && strcmp(ev.name, "b.log") == 0;
	assert_true(seen);
	close(fd);
	floe_watch_free(w);
}

static void test_poll_backend(void **state)
{
	struct floe_watch *w = NULL;
	assert_int_equal(floe_watch_new(FLOE_WATCH_FORCE_POLL, &w), 0);
	assert_true(floe_watch_polling(w));
	assert_int_equal(floe_watch_fd(w), -1);
	assert_int_equal(floe_watch_add_dir(w, dir), 0);
	assert_int_equal(floe_watch_wait(w, 30), 0);
	/* mtime granularity can hide a change made in the same tick as the first stat: make
	 * sure the clock moved. */
	usleep(20000);
	put("b.log", "x\n");
	assert_int_equal(floe_watch_wait(w, 2000), 1);
	struct floe_watch_event ev;
	assert_int_equal(floe_watch_next(w, &ev), 1);
	assert_int_equal(ev.kind, FLOE_WATCH_RESCAN);
	assert_string_equal(ev.dir, dir);
	assert_null(ev.name);
	assert_int_equal(floe_watch_next(w, &ev), 0);
	/* An append does not change the directory. */
	put("b.log", "y\n");
	assert_int_equal(floe_watch_wait(w, 300), 0);
	floe_watch_free(w);
}

static void test_symlink_target_dir(void **state)
{
	assert_int_equal(mkdir(at("real"), 0755), 0);
	put("real/t.log", "x\n");
	assert_int_equal(symlink(at("real/t.log"), at("link.log")), 0);
	struct floe_watch *w = NULL;
	assert_int_equal(floe_watch_new(0, &w), 0);
	assert_int_equal(floe_watch_add_file_dirs(w, at("link.log")), 0);
	assert_int_equal(floe_watch_count(w), 2);
	put("real/t.log", "y\n");
	assert_int_equal(floe_watch_wait(w, 1000), 1);
	struct floe_watch_event ev;
	bool seen = false;
	while (floe_watch_next(w, &ev) == 1)
		seen |= ev.name && strcmp(ev.name, "t.log") == 0 && ev.kind == FLOE_WATCH_MODIFIED;
	assert_true(seen);
	floe_watch_clear(w);
	assert_int_equal(floe_watch_count(w), 0);
	floe_watch_free(w);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	const struct CMUnitTest tests[] = {
	    T(test_inotify_events),
	    T(test_dir_removed),
	    T(test_many_dirs),
	    T(test_dir_removed_file_open),
	    T(test_poll_backend),
	    T(test_symlink_target_dir),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

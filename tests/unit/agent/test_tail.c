/* Tests of agent/input/tail: exact line offsets across reads, held partial lines, CRLF,
 * long-line splitting, start positions, positions → restore without loss or repetition,
 * truncation, rotation, globs and excludes, stopping and failing callbacks, read errors,
 * the positions layout, allocation faults, new files waiting for a durable position and
 * partial lines waiting for their file to be idle. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "agent/input/tail.h"
#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"
#include "platform/fs.h"
#include "platform/watch.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char dir[64];

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(p);
}

static int setup(void **state)
{
	strcpy(dir, "/tmp/floe-test-tail-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	floe_fs_set_faults(NULL);
	return nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static char *at(const char *name)
{
	static char buf[8][256];
	static int k;
	k = (k + 1) % 8;
	snprintf(buf[k], sizeof(buf[k]), "%s/%s", dir, name);
	return buf[k];
}

/* Appends s to dir/name (created if needed), as a logging program would. */
static void put(const char *name, const char *s)
{
	int fd = open(at(name), O_WRONLY | O_CREAT | O_APPEND, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, s, strlen(s)), (ssize_t)strlen(s));
	close(fd);
}

/* Truncates dir/name in place (same inode) and writes s. */
static void rewrite(const char *name, const char *s)
{
	int fd = open(at(name), O_WRONLY | O_TRUNC);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, s, strlen(s)), (ssize_t)strlen(s));
	close(fd);
}

struct rec {
	char path[256];
	uint64_t off;
	char data[512];
	size_t len;
	uint64_t end, id;
};

struct sink {
	struct rec v[256];
	size_t n;
	size_t stop_at; /* return 1 after recording line number stop_at (1-based); 0 = never */
	size_t fail_at; /* refuse line number fail_at (1-based) with fail_rc, once */
	int fail_rc;
};

static int on_line(void *ctx, const struct floe_tail_line *l)
{
	struct sink *s = ctx;
	if (s->fail_at && s->n + 1 == s->fail_at) {
		s->fail_at = 0;
		return s->fail_rc;
	}
	assert_true(s->n < 256);
	assert_true(l->len < 512);
	struct rec *r = &s->v[s->n++];
	snprintf(r->path, sizeof(r->path), "%s", l->path);
	r->off = l->offset;
	memcpy(r->data, l->data, l->len);
	r->data[l->len] = 0;
	r->len = l->len;
	r->end = l->end;
	r->id = l->file_id;
	return s->stop_at && s->n == s->stop_at ? 1 : 0;
}

static void assert_line(const struct sink *s, size_t i, const char *name, uint64_t off,
			const char *data)
{
	assert_true(i < s->n);
	assert_string_equal(s->v[i].path, at(name));
	assert_int_equal(s->v[i].off, off);
	assert_int_equal(s->v[i].len, strlen(data));
	assert_string_equal(s->v[i].data, data);
}

/* Finds the line of name at off, or fails. */
static const struct rec *find_line(const struct sink *s, const char *name, uint64_t off)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].off == off && strcmp(s->v[i].path, at(name)) == 0)
			return &s->v[i];
	fail_msg("no line of %s at %llu", name, (unsigned long long)off);
	return NULL;
}

/* The injected clock (wall-clock ms): tests move it, nothing sleeps. */
static int64_t fake_now = 1000000;

static int64_t fake_clock(void *ctx)
{
	(void)ctx;
	return fake_now;
}

struct opts {
	const char *pat[2];
	const char *exc[2];
	struct floe_tail_options o;
};

/* A tail over dir/pattern with options o (its paths and clock set here). */
static struct floe_tail *make_with(struct floe_alloc *a, const char *pattern,
				   struct floe_tail_options o)
{
	static char pat[256];
	snprintf(pat, sizeof(pat), "%s/%s", dir, pattern);
	const char *paths[1] = {pat};
	o.paths = paths;
	o.npaths = 1;
	o.clock_ms = fake_clock;
	struct floe_tail *t = NULL;
	assert_int_equal(floe_tail_new(a, &o, &t), 0);
	assert_non_null(t);
	return t;
}

static struct floe_tail *make(struct floe_alloc *a, const char *pattern, size_t chunk,
			      size_t max_line, bool at_end)
{
	return make_with(a, pattern,
			 (struct floe_tail_options){.start_at_end = at_end,
						    .max_line_bytes = max_line,
						    .read_chunk = chunk});
}

static size_t read_all(struct floe_tail *t, struct sink *s)
{
	size_t progress = 99;
	assert_int_equal(floe_tail_read(t, SIZE_MAX, on_line, s, &progress), 0);
	return progress;
}

static struct floe_tail_stats stats(const struct floe_tail *t)
{
	struct floe_tail_stats st;
	floe_tail_get_stats(t, &st);
	return st;
}

/* --- tests ---------------------------------------------------------------------------- */

static void test_offsets_across_reads(void **state)
{
	put("a.log", "ab\ncdef\n\nxyz\n");
	/* A 3-byte read chunk puts every line across read boundaries. */
	struct floe_tail *t = make(NULL, "*.log", 3, 16, false);
	assert_int_equal(floe_tail_scan(t), 0);
	struct sink s = {0};
	assert_int_equal(read_all(t, &s), 13);
	assert_int_equal(s.n, 4);
	assert_line(&s, 0, "a.log", 0, "ab");
	assert_line(&s, 1, "a.log", 3, "cdef");
	assert_line(&s, 2, "a.log", 8, "");
	assert_line(&s, 3, "a.log", 9, "xyz");
	assert_int_equal(read_all(t, &s), 0);
	put("a.log", "more\n");
	assert_int_equal(read_all(t, &s), 5);
	assert_line(&s, 4, "a.log", 13, "more");
	struct floe_tail_stats st = stats(t);
	assert_int_equal(st.lines, 5);
	assert_int_equal(st.bytes, 18);
	assert_int_equal(st.files_open, 1);
	assert_int_equal(st.resets, 0);
	floe_tail_free(t);
}

static void test_partial_line_held(void **state)
{
	put("a.log", "abc");
	struct floe_tail *t = make(NULL, "*.log", 64, 64, false);
	assert_int_equal(floe_tail_scan(t), 0);
	struct sink s = {0};
	assert_int_equal(read_all(t, &s), 0);
	assert_int_equal(s.n, 0);
	put("a.log", "de\nf");
	assert_int_equal(read_all(t, &s), 6);
	assert_int_equal(s.n, 1);
	assert_line(&s, 0, "a.log", 0, "abcde");
	put("a.log", "\n");
	assert_int_equal(read_all(t, &s), 2);
	assert_line(&s, 1, "a.log", 6, "f");
	/* flush_partial delivers a held partial line. */
	put("a.log", "g\nend");
	read_all(t, &s);
	assert_int_equal(s.n, 3);
	assert_int_equal(floe_tail_flush_partial(t, on_line, &s), 0);
	assert_int_equal(s.n, 4);
	assert_line(&s, 3, "a.log", 10, "end");
	assert_int_equal(floe_tail_flush_partial(t, on_line, &s), 0);
	assert_int_equal(s.n, 4);
	floe_tail_free(t);
}

static void test_crlf(void **state)
{
	put("a.log", "a\r\nb\r\n\r\nx\ry\nc\r");
	struct floe_tail *t = make(NULL, "*.log", 2, 64, false);
	assert_int_equal(floe_tail_scan(t), 0);
	struct sink s = {0};
	assert_int_equal(read_all(t, &s), 12);
	assert_int_equal(s.n, 4);
	assert_line(&s, 0, "a.log", 0, "a");
	assert_line(&s, 1, "a.log", 3, "b");
	assert_line(&s, 2, "a.log", 6, "");
	assert_line(&s, 3, "a.log", 8, "x\ry"); /* only a CR before the LF is stripped */
	put("a.log", "\n");
	read_all(t, &s);
	assert_line(&s, 4, "a.log", 12, "c");
	floe_tail_free(t);
}

static void test_long_line_split(void **state)
{
	/* max_line 4: "abcd\r\n" fits exactly; the 10-byte line is cut 4 + 4 + 2. */
	put("a.log", "abcd\r\nabcdefghij\nxy\n");
	struct floe_tail *t = make(NULL, "*.log", 3, 4, false);
	assert_int_equal(floe_tail_scan(t), 0);
	struct sink s = {0};
	assert_int_equal(read_all(t, &s), 20);
	assert_int_equal(s.n, 5);
	assert_line(&s, 0, "a.log", 0, "abcd");
	assert_line(&s, 1, "a.log", 6, "abcd");
	assert_line(&s, 2, "a.log", 10, "efgh");
	assert_line(&s, 3, "a.log", 14, "ij");
	assert_line(&s, 4, "a.log", 17, "xy");
	assert_int_equal(stats(t).long_lines_split, 1);
	assert_int_equal(stats(t).lines, 5);

	/* A line without LF is not held beyond the bound: 100 bytes come out as 4-byte
	 * pieces as soon as they cannot be a whole line, 4 stay held. */
	char big[101];
	for (int i = 0; i < 100; i++)
		big[i] = (char)('a' + i % 26);
	big[100] = 0;
	put("a.log", big);
	struct sink p = {0};
	assert_int_equal(read_all(t, &p), 96);
	assert_int_equal(p.n, 24);
	for (size_t i = 0; i < 24; i++) {
		assert_int_equal(p.v[i].off, 20 + 4 * i);
		assert_memory_equal(p.v[i].data, big + 4 * i, 4);
	}
	assert_int_equal(stats(t).long_lines_split, 2);
	assert_int_equal(floe_tail_flush_partial(t, on_line, &p), 0);
	assert_int_equal(p.n, 25);
	assert_int_equal(p.v[24].off, 116);
	assert_string_equal(p.v[24].data, big + 96);
	floe_tail_free(t);
}

static void test_start_at_end_and_beginning(void **state)
{
	put("a.log", "old\n");
	struct floe_tail *t = make(NULL, "*.log", 64, 64, true);
	assert_int_equal(floe_tail_scan(t), 0);
	struct sink s = {0};
	assert_int_equal(read_all(t, &s), 0);
	put("a.log", "new\n");
	/* A file appearing after the first scan is read from its start. */
	put("b.log", "first\n");
	assert_int_equal(floe_tail_scan(t), 0);
	read_all(t, &s);
	assert_int_equal(s.n, 2);
	find_line(&s, "a.log", 4);
	assert_string_equal(find_line(&s, "b.log", 0)->data, "first");
	floe_tail_free(t);

	t = make(NULL, "*.log", 64, 64, false);
	assert_int_equal(floe_tail_scan(t), 0);
	struct sink b = {0};
	read_all(t, &b);
	assert_int_equal(b.n, 3);
	assert_string_equal(find_line(&b, "a.log", 0)->data, "old");
	floe_tail_free(t);
}

static void save(struct floe_tail *t, struct floe_buf *b)
{
	floe_buf_init(b, NULL, 1 << 20);
	assert_int_equal(floe_tail_positions(t, b), 0);
}

static void test_positions_restore(void **state)
{
	put("a.log", "l1\nl2\nl3\npart");
	put("b.log", "b1\n");
	struct floe_tail *t = make(NULL, "*.log", 64, 64, false);
	assert_int_equal(floe_tail_scan(t), 0);
	struct sink s = {.stop_at = 2};
	size_t progress = 0;
	assert_int_equal(floe_tail_read(t, SIZE_MAX, on_line, &s, &progress), 0);
	assert_int_equal(s.n, 2);
	struct floe_buf blob;
	save(t, &blob);
	floe_tail_free(t);

	/* The new object resumes exactly: start_at_end does not apply to restored files. */
	t = make(NULL, "*.log", 64, 64, true);
	assert_int_equal(floe_tail_restore(t, blob.data, blob.len), 0);
	assert_int_equal(floe_tail_scan(t), 0);
	assert_int_equal(floe_tail_restore(t, blob.data, blob.len), FLOE_EINVAL);
	read_all(t, &s);
	put("a.log", "4\n");
	read_all(t, &s);
	/* Every line exactly once over both objects. */
	assert_int_equal(s.n, 5);
	const char *a_lines[][2] = {{"0", "l1"}, {"3", "l2"}, {"6", "l3"}, {"9", "part4"}};
	for (size_t i = 0; i < 4; i++)
		assert_string_equal(find_line(&s, "a.log", strtoull(a_lines[i][0], NULL, 10))->data,
				    a_lines[i][1]);
	assert_string_equal(find_line(&s, "b.log", 0)->data, "b1");
	assert_int_equal(stats(t).resets, 0);
	floe_buf_fini(&blob);

	/* Positions of files no longer present are kept. */
	save(t, &blob);
	floe_tail_free(t);
	assert_int_equal(unlink(at("b.log")), 0);
	t = make(NULL, "*.log", 64, 64, false);
	assert_int_equal(floe_tail_restore(t, blob.data, blob.len), 0);
	assert_int_equal(floe_tail_scan(t), 0);
	struct floe_buf again;
	save(t, &again);
	assert_int_equal(again.len, blob.len);
	assert_int_equal(again.data[8], 2); /* count */
	floe_buf_fini(&again);
	floe_buf_fini(&blob);
	floe_tail_free(t);
}

static void test_rotated_while_away(void **state)
{
	put("app.log", "one\ntwo\n");
	struct floe_tail *t = make(NULL, "app.log*", 64, 64, true);
	assert_int_equal(floe_tail_scan(t), 0);
	put("app.log", "three\n");
	struct sink s = {0};
	read_all(t, &s);
	assert_int_equal(s.n, 1);
	struct floe_buf blob;
	save(t, &blob);
	floe_tail_free(t);
	put("app.log", "four\n");
	assert_int_equal(rename(at("app.log"), at("app.log.1")), 0);
	put("app.log", "new\n");
	t = make(NULL, "app.log*", 64, 64, false);
	assert_int_equal(floe_tail_restore(t, blob.data, blob.len), 0);
	assert_int_equal(floe_tail_scan(t), 0);
	read_all(t, &s);
	assert_int_equal(s.n, 3);
	assert_string_equal(find_line(&s, "app.log.1", 14)->data, "four");
	assert_string_equal(find_line(&s, "app.log", 0)->data, "new");
	assert_int_equal(stats(t).resets, 0);
	floe_buf_fini(&blob);
	floe_tail_free(t);
}

static void test_truncation(void **state)
{
	put("a.log", "aaaa\nbbbb\n");
	struct floe_tail *t = make(NULL, "*.log", 64, 64, false);
	assert_int_equal(floe_tail_scan(t), 0);
	struct sink s = {0};
	read_all(t, &s);
	assert_int_equal(s.n, 2);
	/* Shorter than the position: found by the read. */
	rewrite("a.log", "c\n");
	read_all(t, &s);
	assert_int_equal(s.n, 3);
	assert_line(&s, 2, "a.log", 0, "c");
	assert_int_equal(stats(t).resets, 1);
	/* Truncated and rewritten past the position (copytruncate): the scan sees the new
	 * beginning. */
	rewrite("a.log", "zzzzzzzzzzzzzzzz\n");
	assert_int_equal(floe_tail_scan(t), 0);
	read_all(t, &s);
	assert_int_equal(s.n, 4);
	assert_line(&s, 3, "a.log", 0, "zzzzzzzzzzzzzzzz");
	assert_int_equal(stats(t).resets, 2);
	floe_tail_free(t);
}

static void test_truncated_while_away(void **state)
{
	/* 100 lines of 20 bytes: the fingerprint covers the first 1 KiB. */
	char line[32];
	for (int i = 0; i < 100; i++) {
		snprintf(line, sizeof(line), "line %04d .........\n", i);
		put("a.log", line);
	}
	struct floe_tail *t = make(NULL, "*.log", 256, 64, false);
	assert_int_equal(floe_tail_scan(t), 0);
	struct sink s = {0};
	assert_int_equal(read_all(t, &s), 2000);
	struct floe_buf blob;
	save(t, &blob);
	floe_tail_free(t);
	/* Same inode, same first KiB, but shorter than the saved offset. */
	assert_int_equal(truncate(at("a.log"), 1500), 0);
	t = make(NULL, "*.log", 256, 64, false);
	assert_int_equal(floe_tail_restore(t, blob.data, blob.len), 0);
	assert_int_equal(floe_tail_scan(t), 0);
	struct sink r = {0};
	assert_int_equal(read_all(t, &r), 1500);
	assert_int_equal(r.n, 75);
	assert_line(&r, 0, "a.log", 0, "line 0000 .........");
	assert_int_equal(stats(t).resets, 1);
	floe_buf_fini(&blob);
	floe_tail_free(t);

	/* A different beginning at the saved name: a new generation, read from 0. */
	put("b.log", "xxxxxxxx\n");
	t = make(NULL, "b.log", 64, 64, false);
	assert_int_equal(floe_tail_scan(t), 0);
	read_all(t, &r);
	save(t, &blob);
	floe_tail_free(t);
	rewrite("b.log", "yyyyyyyyyyyyyyyyyy\n");
	t = make(NULL, "b.log", 64, 64, true);
	assert_int_equal(floe_tail_restore(t, blob.data, blob.len), 0);
	assert_int_equal(floe_tail_scan(t), 0);
	struct sink y = {0};
	read_all(t, &y);
	assert_int_equal(y.n, 1);
	assert_line(&y, 0, "b.log", 0, "yyyyyyyyyyyyyyyyyy");
	assert_int_equal(stats(t).resets, 1);
	floe_buf_fini(&blob);
	floe_tail_free(t);
}

static void test_replaced_file(void **state)
{
	put("app.log", "a\n");
	struct floe_tail *t = make(NULL, "*.log", 64, 64, false);
	assert_int_equal(floe_tail_scan(t), 0);
	struct sink s = {0};
	read_all(t, &s);
	assert_int_equal(s.n, 1);
	/* Rename rotation: the writer still appends to the old file for a while. */
	assert_int_equal(rename(at("app.log"), at("app.log.1")), 0);
	put("app.log.1", "a2\n");
	put("app.log", "b\n");
	assert_int_equal(floe_tail_scan(t), 0);
	read_all(t, &s);
	assert_int_equal(s.n, 3);
	/* The old generation is still reported under the name we knew it by. */
	const struct rec *old = NULL, *neu = NULL;
	for (size_t i = 1; i < 3; i++) {
		if (strcmp(s.v[i].data, "a2") == 0)
			old = &s.v[i];
		else
			neu = &s.v[i];
	}
	assert_non_null(old);
	assert_non_null(neu);
	assert_int_equal(old->off, 2);
	assert_int_equal(neu->off, 0);
	assert_string_equal(neu->data, "b");
	assert_int_equal(stats(t).files_open, 2);
	/* The old file is closed only after rotate_wait (5 s by default); its partial line
	 * is delivered then. */
	put("app.log.1", "last");
	read_all(t, &s);
	assert_int_equal(s.n, 3);
	fake_now += 4999;
	read_all(t, &s);
	assert_int_equal(s.n, 3);
	fake_now += 1;
	read_all(t, &s);
	assert_int_equal(s.n, 4);
	assert_string_equal(s.v[3].data, "last");
	assert_int_equal(s.v[3].off, 5);
	assert_int_equal(stats(t).files_open, 1);
	assert_int_equal(stats(t).resets, 0);
	/* The closed file's final position is kept: it still exists as app.log.1. */
	struct floe_buf blob;
	save(t, &blob);
	assert_int_equal(blob.data[8], 2);
	floe_buf_fini(&blob);
	floe_tail_free(t);
}

static void test_deleted_file(void **state)
{
	put("a.log", "a\n");
	struct floe_tail *t = make(NULL, "*.log", 64, 64, false);
	assert_int_equal(floe_tail_scan(t), 0);
	struct sink s = {0};
	read_all(t, &s);
	assert_int_equal(unlink(at("a.log")), 0);
	assert_int_equal(floe_tail_scan(t), 0);
	read_all(t, &s);
	assert_int_equal(stats(t).files_open, 1); /* a writer may still append */
	fake_now += 5000;
	read_all(t, &s);
	assert_int_equal(stats(t).files_open, 0);
	assert_int_equal(s.n, 1);
	/* Deleted: no position is kept for it. */
	struct floe_buf blob;
	save(t, &blob);
	assert_int_equal(blob.len, 12);
	assert_int_equal(blob.data[8], 0);
	floe_buf_fini(&blob);
	floe_tail_free(t);
}

static void test_glob_exclude(void **state)
{
	put("a.log", "a\n");
	put("b.log", "b\n");
	put("c.gz", "c\n");
	put("d.txt", "d\n");
	assert_int_equal(mkdir(at("sub"), 0755), 0);
	put("sub/e.log", "e\n");
	assert_int_equal(mkdir(at("dir.log"), 0755), 0); /* a directory is not tailed */
	char p1[256], p2[256];
	snprintf(p1, sizeof(p1), "%s/*.log", dir);
	snprintf(p2, sizeof(p2), "%s/*.gz", dir);
	const char *paths[] = {p1, p2, p1};
	const char *exclude[] = {"*.gz", "*/b.log"};
	struct floe_tail_options o = {
	    .paths = paths, .npaths = 3, .exclude = exclude, .nexclude = 2};
	struct floe_tail *t = NULL;
	assert_int_equal(floe_tail_new(NULL, &o, &t), 0);
	assert_non_null(t);
	assert_int_equal(floe_tail_scan(t), 0);
	struct sink s = {0};
	read_all(t, &s);
	assert_int_equal(s.n, 1);
	assert_line(&s, 0, "a.log", 0, "a");
	assert_int_equal(stats(t).files_open, 1);
	floe_tail_free(t);
	/* Basename patterns work as well. */
	const char *exclude2[] = {"a.*"};
	o.exclude = exclude2;
	o.nexclude = 1;
	o.npaths = 1;
	t = NULL;
	assert_int_equal(floe_tail_new(NULL, &o, &t), 0);
	assert_int_equal(floe_tail_scan(t), 0);
	struct sink s2 = {0};
	read_all(t, &s2);
	assert_int_equal(s2.n, 1);
	assert_line(&s2, 0, "b.log", 0, "b");
	floe_tail_free(t);
}

static void test_stop_and_error(void **state)
{
	put("a.log", "1\n22\n333\n");
	struct floe_tail *t = make(NULL, "*.log", 64, 64, false);
	assert_int_equal(floe_tail_scan(t), 0);
	struct sink s = {.stop_at = 1};
	size_t progress = 0;
	assert_int_equal(floe_tail_read(t, SIZE_MAX, on_line, &s, &progress), 0);
	assert_int_equal(progress, 2);
	assert_int_equal(s.n, 1);
	s.stop_at = 0;
	s.fail_at = 2;
	s.fail_rc = -77;
	assert_int_equal(floe_tail_read(t, SIZE_MAX, on_line, &s, &progress), -77);
	assert_int_equal(progress, 0);
	assert_int_equal(s.n, 1);
	/* The refused line is delivered again, not lost. */
	assert_int_equal(floe_tail_read(t, SIZE_MAX, on_line, &s, &progress), 0);
	assert_int_equal(progress, 7);
	assert_int_equal(s.n, 3);
	assert_line(&s, 1, "a.log", 2, "22");
	assert_line(&s, 2, "a.log", 5, "333");
	struct floe_buf blob;
	save(t, &blob);
	assert_int_equal(blob.data[12 + 4 + strlen(at("a.log")) + 16], 9); /* offset */
	floe_buf_fini(&blob);
	floe_tail_free(t);
}

static void test_budget_round_robin(void **state)
{
	char line[32];
	for (int i = 0; i < 50; i++) {
		snprintf(line, sizeof(line), "a%02d\n", i);
		put("a.log", line);
		snprintf(line, sizeof(line), "b%02d\n", i);
		put("b.log", line);
	}
	struct floe_tail *t = make(NULL, "*.log", 16, 64, false);
	assert_int_equal(floe_tail_scan(t), 0);
	struct sink s = {0};
	size_t progress = 0, total = 0;
	/* A budget of 10 bytes: whole lines, so 12 at most per call, and both files get
	 * turns. */
	assert_int_equal(floe_tail_read(t, 10, on_line, &s, &progress), 0);
	assert_true(progress >= 10 && progress <= 12);
	total += progress;
	for (int k = 0; k < 200 && total < 400; k++) {
		assert_int_equal(floe_tail_read(t, 10, on_line, &s, &progress), 0);
		assert_true(progress > 0 && progress <= 12);
		total += progress;
	}
	assert_int_equal(total, 400);
	assert_int_equal(s.n, 100);
	int na = 0, nb = 0, max_gap = 0, last_switch = 0;
	for (size_t i = 0; i < s.n; i++) {
		char want[16];
		bool is_a = s.v[i].data[0] == 'a';
		snprintf(want, sizeof(want), "%c%02d", is_a ? 'a' : 'b', is_a ? na : nb);
		assert_string_equal(s.v[i].data, want); /* in order within each file */
		assert_int_equal(s.v[i].off, 4 * (uint64_t)(is_a ? na++ : nb++));
		if (i && s.v[i].data[0] != s.v[i - 1].data[0]) {
			if ((int)i - last_switch > max_gap)
				max_gap = (int)i - last_switch;
			last_switch = (int)i;
		}
	}
	/* Round robin: neither file waits for the other to be finished. */
	assert_true(max_gap <= 8);
	assert_int_equal(floe_tail_read(t, 0, on_line, &s, &progress), 0);
	assert_int_equal(progress, 0);
	floe_tail_free(t);
}

static int pread_errors;
static ssize_t pread_eio(int fd, void *p, size_t n, int64_t off)
{
	pread_errors++;
	errno = EIO;
	return -1;
}

static void test_read_error(void **state)
{
	put("a.log", "x\ny\n");
	struct floe_tail *t = make(NULL, "*.log", 2, 64, false);
	assert_int_equal(floe_tail_scan(t), 0);
	struct sink s = {.stop_at = 1};
	size_t progress = 0;
	assert_int_equal(floe_tail_read(t, SIZE_MAX, on_line, &s, &progress), 0);
	floe_fs_set_faults(&(struct floe_fs_faults){.pread = pread_eio});
	s.stop_at = 0;
	assert_int_equal(floe_tail_read(t, SIZE_MAX, on_line, &s, &progress), -EIO);
	assert_true(pread_errors > 0);
	floe_fs_set_faults(NULL);
	read_all(t, &s);
	assert_int_equal(s.n, 2);
	assert_line(&s, 1, "a.log", 2, "y");
	floe_tail_free(t);
}

/* FNV-1a 64, written out independently of tail.c to check the fingerprint. */
static uint64_t fnv(const char *p, size_t n)
{
	uint64_t h = 14695981039346656037ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)p[i]) * 1099511628211ull;
	return h;
}

static uint64_t le(const uint8_t *p, int n)
{
	uint64_t v = 0;
	for (int i = n - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static void test_positions_layout(void **state)
{
	put("a.log", "ab\nc");
	struct floe_tail *t = make(NULL, "*.log", 64, 64, false);
	assert_int_equal(floe_tail_scan(t), 0);
	struct sink s = {0};
	read_all(t, &s);
	struct floe_buf b;
	floe_buf_init(&b, NULL, 1 << 20);
	assert_int_equal(floe_buf_append(&b, "xyz", 3), 0); /* appended after existing bytes */
	assert_int_equal(floe_tail_positions(t, &b), 0);
	struct stat st;
	assert_int_equal(stat(at("a.log"), &st), 0);
	const char *path = at("a.log");
	size_t plen = strlen(path);
	assert_int_equal(b.len, 3 + 12 + 4 + plen + 60);
	const uint8_t *p = b.data + 3;
	assert_memory_equal(p, "FLTP\3\0\0\0\1\0\0\0", 12);
	assert_int_equal(le(p + 12, 4), plen);
	assert_memory_equal(p + 16, path, plen);
	p += 16 + plen;
	assert_int_equal(le(p, 8), (uint64_t)st.st_dev);
	assert_int_equal(le(p + 8, 8), (uint64_t)st.st_ino);
	assert_int_equal(le(p + 16, 8), 3);
	assert_int_equal(le(p + 24, 4), 4);
	assert_int_equal(le(p + 28, 8), fnv("ab\nc", 4));
	assert_int_equal(le(p + 36, 4), 0); /* flags */
	assert_int_equal(le(p + 40, 4), 3); /* the bytes before the offset: "ab\n" */
	assert_int_equal(le(p + 44, 8), fnv("ab\n", 3));
	assert_int_equal(le(p + 52, 8), 0); /* present */
	/* A full buffer leaves it as it was. */
	struct floe_buf small;
	floe_buf_init(&small, NULL, 20);
	assert_int_equal(floe_buf_append(&small, "q", 1), 0);
	assert_int_equal(floe_tail_positions(t, &small), FLOE_ELIMIT);
	assert_int_equal(small.len, 1);
	floe_buf_fini(&small);

	/* The fingerprint grows with a small file, up to 1 KiB. */
	char kb[1500];
	memset(kb, 'k', sizeof(kb) - 1);
	kb[sizeof(kb) - 1] = 0;
	put("a.log", kb);
	read_all(t, &s);
	floe_buf_reset(&b);
	assert_int_equal(floe_tail_positions(t, &b), 0);
	p = b.data + 16 + plen;
	assert_int_equal(le(p + 24, 4), 1024);
	char head[1024];
	memcpy(head, "ab\nc", 4);
	memset(head + 4, 'k', sizeof(head) - 4);
	assert_int_equal(le(p + 28, 8), fnv(head, 1024));
	floe_buf_fini(&b);
	floe_tail_free(t);
}

/* A partial line flushed at the end of --once is a line; when its LF arrives later (in
 * this process or after a restart) it ends that line and is not an empty line. */
static void test_flushed_partial_line(void **state)
{
	put("a.log", "ab\nc");
	struct floe_tail *t = make(NULL, "*.log", 64, 64, false);
	assert_int_equal(floe_tail_scan(t), 0);
	struct sink s = {0};
	read_all(t, &s);
	assert_int_equal(floe_tail_flush_partial(t, on_line, &s), 0);
	assert_int_equal(s.n, 2);
	assert_line(&s, 1, "a.log", 3, "c");
	struct floe_buf b;
	floe_buf_init(&b, NULL, 1 << 20);
	assert_int_equal(floe_tail_positions(t, &b), 0);
	floe_tail_free(t);
	const uint8_t *flags = b.data + b.len - 24;
	assert_int_equal(le(flags, 4), 1);

	/* After a restart the LF (here a CRLF) ends "c"; the next line follows. */
	put("a.log", "\r\nd\n");
	t = make(NULL, "*.log", 64, 64, false);
	assert_int_equal(floe_tail_restore(t, b.data, b.len), 0);
	assert_int_equal(floe_tail_scan(t), 0);
	read_all(t, &s);
	assert_int_equal(s.n, 3);
	assert_line(&s, 2, "a.log", 6, "d");
	/* Without a flush, text after an unterminated line continues as a new line. */
	put("a.log", "e");
	read_all(t, &s);
	assert_int_equal(floe_tail_flush_partial(t, on_line, &s), 0);
	put("a.log", "f\n");
	read_all(t, &s);
	assert_int_equal(s.n, 5);
	assert_line(&s, 3, "a.log", 8, "e");
	assert_line(&s, 4, "a.log", 9, "f");
	floe_buf_fini(&b);
	floe_tail_free(t);
}

/* One entry of a positions blob, by file name. */
struct entry {
	uint64_t off;
	uint32_t flags, phl;
	uint64_t ph;
};

static struct entry entry_of(const struct floe_buf *b, const char *name)
{
	const char *path = at(name);
	uint32_t n = (uint32_t)le(b->data + 8, 4);
	const uint8_t *p = b->data + 12;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t plen = (uint32_t)le(p, 4);
		const uint8_t *q = p + 4 + plen;
		if (plen == strlen(path) && memcmp(p + 4, path, plen) == 0) {
			struct entry e = {le(q + 16, 8), (uint32_t)le(q + 36, 4), (uint32_t)le(q + 40, 4),
					  le(q + 44, 8)};
			return e;
		}
		p = q + 60;
	}
	fail_msg("no entry for %s", name);
	struct entry none = {0};
	return none;
}

/* Holds: the saved position of a file stops at the held offset (the lowest hold wins),
 * with the hash of the bytes before it and no "unterminated" flag; a restart reads the
 * held lines again; clearing the holds saves the real positions. Lines carry their end
 * and a file id, which a new generation changes. */
static void test_hold_positions(void **state)
{
	put("a.log", "l1\nl2\r\nl3\n");
	put("b.log", "b1\nb2\n");
	struct floe_tail *t = make(NULL, "*.log", 64, 64, false);
	assert_int_equal(floe_tail_scan(t), 0);
	struct sink s = {0};
	read_all(t, &s);
	assert_int_equal(s.n, 5);
	const struct rec *l1 = find_line(&s, "a.log", 0), *l2 = find_line(&s, "a.log", 3),
			 *b1 = find_line(&s, "b.log", 0);
	assert_int_equal(l1->end, 3);
	assert_int_equal(l2->end, 7); /* CRLF */
	assert_int_equal(find_line(&s, "a.log", 7)->end, 10);
	assert_true(l1->id != 0 && b1->id != 0 && l1->id != b1->id);
	assert_int_equal(l2->id, l1->id);
	uint64_t ida = l1->id;

	assert_int_equal(floe_tail_hold(t, ida, 7), 0);
	assert_int_equal(floe_tail_hold(t, ida, 3), 0);
	assert_int_equal(floe_tail_hold(t, ida, 7), 0); /* the lowest stays */
	assert_int_equal(floe_tail_hold(t, 999, 0), -ENOENT);
	assert_int_equal(floe_tail_hold(t, 0, 0), -ENOENT);
	struct floe_buf blob;
	save(t, &blob);
	struct entry ea = entry_of(&blob, "a.log"), eb = entry_of(&blob, "b.log");
	assert_int_equal(ea.off, 3);
	assert_int_equal(ea.flags, 0);
	assert_int_equal(ea.phl, 3);
	assert_int_equal(ea.ph, fnv("l1\n", 3));
	assert_int_equal(eb.off, 6);
	assert_int_equal(eb.ph, fnv("b1\nb2\n", 6));

	/* Cleared: the real position. */
	floe_tail_hold_clear(t);
	struct floe_buf b2;
	save(t, &b2);
	assert_int_equal(entry_of(&b2, "a.log").off, 10);
	floe_buf_fini(&b2);

	/* A partial line flushed without its LF, then held at its start: saved as an
	 * ordinary line start; after a restart it is read whole once its LF comes. */
	put("c.log", "x\ny");
	assert_int_equal(floe_tail_scan(t), 0);
	read_all(t, &s);
	assert_int_equal(floe_tail_flush_partial(t, on_line, &s), 0);
	const struct rec *y = find_line(&s, "c.log", 2);
	assert_string_equal(y->data, "y");
	assert_int_equal(y->end, 3);
	assert_int_equal(floe_tail_hold(t, y->id, 2), 0);
	assert_int_equal(floe_tail_hold(t, ida, 3), 0);
	struct floe_buf b3;
	save(t, &b3);
	struct entry ec = entry_of(&b3, "c.log");
	assert_int_equal(ec.off, 2);
	assert_int_equal(ec.flags, 0);
	assert_int_equal(ec.ph, fnv("x\n", 2));
	floe_tail_free(t);

	put("c.log", "z\n");
	t = make(NULL, "*.log", 64, 64, false);
	assert_int_equal(floe_tail_restore(t, b3.data, b3.len), 0);
	assert_int_equal(floe_tail_scan(t), 0);
	struct sink r = {0};
	read_all(t, &r);
	assert_int_equal(r.n, 3);
	assert_string_equal(find_line(&r, "a.log", 3)->data, "l2");
	assert_string_equal(find_line(&r, "a.log", 7)->data, "l3");
	assert_string_equal(find_line(&r, "c.log", 2)->data, "yz");
	assert_int_equal(stats(t).resets, 0);

	/* A new generation is a new file id; its holds are gone. */
	uint64_t idc = find_line(&r, "c.log", 2)->id;
	assert_int_equal(floe_tail_hold(t, idc, 2), 0);
	rewrite("c.log", "n\n");
	read_all(t, &r);
	const struct rec *n = find_line(&r, "c.log", 0);
	assert_true(n->id != idc && n->id != 0);
	assert_int_equal(floe_tail_hold(t, idc, 0), -ENOENT);
	struct floe_buf b4;
	save(t, &b4);
	assert_int_equal(entry_of(&b4, "c.log").off, 2);
	floe_buf_fini(&b4);
	floe_buf_fini(&b3);
	floe_buf_fini(&blob);
	floe_tail_free(t);
}

/* A hold far behind the position (the bytes before it are no longer buffered) hashes
 * them from the file; with the file closed the hash is left out, and restore still works. */
static void test_hold_far_back(void **state)
{
	char big[2000];
	size_t n = 0;
	for (int i = 0; n + 8 < sizeof(big); i++)
		n += (size_t)snprintf(big + n, sizeof(big) - n, "%06d\n", i);
	put("a.log", big);
	struct floe_tail *t = make(NULL, "*.log", 64, 64, false);
	assert_int_equal(floe_tail_scan(t), 0);
	struct sink s = {.stop_at = 200}; /* 1400 bytes read: 700 is far behind */
	size_t progress;
	assert_int_equal(floe_tail_read(t, SIZE_MAX, on_line, &s, &progress), 0);
	assert_int_equal(s.n, 200);
	uint64_t id = s.v[0].id;
	assert_int_equal(floe_tail_hold(t, id, 700), 0);
	struct floe_buf b;
	save(t, &b);
	struct entry e = entry_of(&b, "a.log");
	assert_int_equal(e.off, 700);
	assert_int_equal(e.phl, 256);
	assert_int_equal(e.ph, fnv(big + 700 - 256, 256));
	floe_tail_free(t);
	t = make(NULL, "*.log", 64, 64, false);
	assert_int_equal(floe_tail_restore(t, b.data, b.len), 0);
	assert_int_equal(floe_tail_scan(t), 0);
	struct sink r = {.stop_at = 1};
	assert_int_equal(floe_tail_read(t, SIZE_MAX, on_line, &r, &progress), 0);
	assert_int_equal(r.n, 1);
	assert_int_equal(r.v[0].off, 700);
	assert_string_equal(r.v[0].data, "000100");
	assert_int_equal(stats(t).resets, 0);
	floe_buf_fini(&b);
	floe_tail_free(t);
}

static void test_restore_corrupt(void **state)
{
	struct floe_alloc a;
	floe_alloc_init(&a, 0);
	struct floe_tail *t = make(&a, "*.log", 64, 64, false);
	uint8_t ok[64] = {'F', 'L', 'T', 'P', 2, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, '/'};
	size_t oklen = 12 + 4 + 1 + 40;
	assert_int_equal(floe_tail_restore(t, ok, oklen), 0);
	for (size_t n = 0; n < oklen; n++)
		assert_int_equal(floe_tail_restore(t, ok, n), FLOE_ECORRUPT);
	uint8_t bad[64];
	memcpy(bad, ok, sizeof(ok));
	bad[0] = 'X';
	assert_int_equal(floe_tail_restore(t, bad, oklen), FLOE_ECORRUPT);
	memcpy(bad, ok, sizeof(ok));
	bad[4] = 1; /* an unknown version */
	assert_int_equal(floe_tail_restore(t, bad, oklen), FLOE_ECORRUPT);
	memcpy(bad, ok, sizeof(ok));
	bad[8] = 0xff; /* count larger than the input can hold */
	bad[11] = 0xff;
	assert_int_equal(floe_tail_restore(t, bad, oklen), FLOE_ECORRUPT);
	memcpy(bad, ok, sizeof(ok));
	bad[12] = 0; /* empty path */
	assert_int_equal(floe_tail_restore(t, bad, oklen), FLOE_ECORRUPT);
	memcpy(bad, ok, sizeof(ok));
	bad[16] = 0; /* NUL in path */
	assert_int_equal(floe_tail_restore(t, bad, oklen), FLOE_ECORRUPT);
	memcpy(bad, ok, sizeof(ok));
	bad[12 + 4 + 1 + 24 + 1] = 0x08; /* fingerprint length 2048 */
	assert_int_equal(floe_tail_restore(t, bad, oklen), FLOE_ECORRUPT);
	assert_int_equal(floe_tail_restore(t, ok, oklen + 1), FLOE_ECORRUPT); /* trailing */
	/* The good positions survived the bad attempts. */
	struct floe_buf b;
	floe_buf_init(&b, &a, 1 << 20);
	assert_int_equal(floe_tail_positions(t, &b), 0);
	/* Written back as version 3: the same entry, with no pre-offset hash and present. */
	assert_int_equal(b.len, oklen + 20);
	assert_int_equal(b.data[4], 3);
	assert_memory_equal(b.data + 5, ok + 5, oklen - 5);
	for (size_t i = oklen; i < oklen + 20; i++)
		assert_int_equal(b.data[i], 0);
	floe_buf_fini(&b);
	floe_tail_free(t);
	assert_int_equal(a.used, 0);

	/* Options that cannot work. */
	t = NULL;
	assert_int_equal(floe_tail_new(NULL, NULL, &t), FLOE_EINVAL);
	struct floe_tail_options o = {.npaths = 1};
	assert_int_equal(floe_tail_new(NULL, &o, &t), FLOE_EINVAL);
	o = (struct floe_tail_options){.max_line_bytes = SIZE_MAX};
	assert_int_equal(floe_tail_new(NULL, &o, &t), FLOE_EINVAL);
	assert_null(t); /* untouched on failure */
	floe_tail_free(NULL);
}

/* Runs a whole session (new, restore, scan, read, positions) with the k-th allocation
 * failing; returns the first error. */
static int session(struct floe_alloc *a, const struct floe_buf *blob, struct sink *s)
{
	static char pat[256];
	snprintf(pat, sizeof(pat), "%s/*.log", dir);
	const char *paths[] = {pat};
	const char *exclude[] = {"*.gz"};
	struct floe_tail_options o = {.paths = paths,
				      .npaths = 1,
				      .exclude = exclude,
				      .nexclude = 1,
				      .read_chunk = 8,
				      .max_line_bytes = 8};
	int err = 0;
	struct floe_tail *t = NULL;
	err = floe_tail_new(a, &o, &t);
	if (!t)
		return err;
	struct floe_buf out;
	floe_buf_init(&out, a, 1 << 20);
	size_t progress;
	int rc = floe_tail_restore(t, blob->data, blob->len);
	if (!rc)
		rc = floe_tail_scan(t);
	if (!rc)
		rc = floe_tail_read(t, SIZE_MAX, on_line, s, &progress);
	if (!rc)
		rc = floe_tail_flush_partial(t, on_line, s);
	if (!rc)
		rc = floe_tail_positions(t, &out);
	floe_buf_fini(&out);
	floe_tail_free(t);
	return rc;
}

static void test_alloc_faults(void **state)
{
	put("a.log", "first line is long\nx\n");
	put("b.log", "b\npartial");
	put("gone.log", "g\n");
	struct floe_tail *t = make(NULL, "*.log", 64, 64, false);
	assert_int_equal(floe_tail_scan(t), 0);
	struct sink s0 = {.stop_at = 1};
	size_t progress;
	assert_int_equal(floe_tail_read(t, SIZE_MAX, on_line, &s0, &progress), 0);
	struct floe_buf blob;
	save(t, &blob);
	floe_tail_free(t);
	assert_int_equal(unlink(at("gone.log")), 0);
	for (long k = 0;; k++) {
		struct floe_alloc a;
		floe_alloc_init(&a, 0);
		a.fail_after = k;
		struct sink s = {0};
		int rc = session(&a, &blob, &s);
		assert_int_equal(a.used, 0);
		if (rc == FLOE_ENOMEM)
			continue;
		assert_int_equal(rc, 0);
		/* The successful run delivers everything after the saved position. */
		assert_true(k > 5);
		assert_string_equal(find_line(&s, "b.log", 2)->data, "partial");
		assert_string_equal(find_line(&s, "a.log", 19)->data, "x");
		break;
	}
	floe_buf_fini(&blob);
}

/* --- rotation, identity and descriptors ------------------------------------------------ */

/* A tail with every option the rotation tests need. */
static struct floe_tail *make2(const char *pattern, size_t max_line, size_t max_open)
{
	static char pat[256];
	snprintf(pat, sizeof(pat), "%s/%s", dir, pattern);
	const char *paths[1] = {pat};
	const char *exclude[1] = {"*.gz"};
	struct floe_tail_options o = {
	    .paths = paths,
	    .npaths = 1,
	    .exclude = exclude,
	    .nexclude = 1,
	    .max_line_bytes = max_line,
	    .read_chunk = 4096,
	    .max_open_files = max_open,
	    .clock_ms = fake_clock,
	};
	struct floe_tail *t = NULL;
	assert_int_equal(floe_tail_new(NULL, &o, &t), 0);
	assert_non_null(t);
	return t;
}

/* Counts numbered lines "<file>:<n>" delivered (file < 2048, n < 64). */
struct tally {
	uint8_t seen[2048][64];
	size_t lines, bad, max_fds;
	bool count_fds;
};

static size_t open_fds(void)
{
	size_t n = 0;
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	while (d && (e = readdir(d)))
		n += e->d_name[0] != '.';
	if (d)
		closedir(d);
	return n;
}

static int on_tally(void *ctx, const struct floe_tail_line *l)
{
	struct tally *y = ctx;
	unsigned f = 0, n = 0;
	char tmp[32];
	y->lines++;
	if (l->len >= sizeof(tmp)) {
		y->bad++;
		return 0;
	}
	memcpy(tmp, l->data, l->len);
	tmp[l->len] = 0;
	if (sscanf(tmp, "%u:%u", &f, &n) != 2 || f >= 2048 || n >= 64)
		y->bad++;
	else
		y->seen[f][n]++;
	if (y->count_fds && (y->lines & 63) == 0) {
		size_t k = open_fds();
		if (k > y->max_fds)
			y->max_fds = k;
	}
	return 0;
}

static void put_fd(int fd, const char *s)
{
	assert_int_equal(write(fd, s, strlen(s)), (ssize_t)strlen(s));
}

static void tally_read(struct floe_tail *t, struct tally *y)
{
	size_t progress;
	assert_int_equal(floe_tail_read(t, SIZE_MAX, on_tally, y, &progress), 0);
}

static void assert_once(const struct tally *y, unsigned f, unsigned from, unsigned to)
{
	for (unsigned n = from; n < to; n++)
		if (y->seen[f][n] != 1)
			fail_msg("line %u:%u seen %u times", f, n, y->seen[f][n]);
}

/* rename + create while the writer keeps appending to the old file for a while; the old
 * descriptor is read out, closed after rotate_wait even if it still grows, and its partial
 * line is delivered at close. */
static void test_rename_create_while_appending(void **state)
{
	int w = open(at("app.log"), O_WRONLY | O_CREAT | O_APPEND, 0644);
	assert_true(w >= 0);
	struct floe_tail *t = make2("app.log", 0, 0);
	assert_int_equal(floe_tail_scan(t), 0);
	struct tally *y = calloc(1, sizeof(*y));
	char line[32];
	for (unsigned n = 0; n < 10; n++) {
		snprintf(line, sizeof(line), "0:%u\n", n);
		put_fd(w, line);
	}
	tally_read(t, y);
	assert_int_equal(rename(at("app.log"), at("app.log.1")), 0);
	for (unsigned n = 10; n < 20; n++) { /* the writer has not reopened yet */
		snprintf(line, sizeof(line), "0:%u\n", n);
		put_fd(w, line);
	}
	put("app.log", "1:0\n");
	assert_int_equal(floe_tail_scan(t), 0);
	tally_read(t, y);
	assert_int_equal(stats(t).files_open, 2);
	put_fd(w, "0:20\n");
	fake_now += 3000;
	tally_read(t, y);
	fake_now += 2000; /* rotate_wait is over: the old file is read up to its size now */
	put_fd(w, "0:21\n0:22"); /* the last line is partial */
	tally_read(t, y);
	put_fd(w, "\n0:23\n"); /* written after the close: never read */
	tally_read(t, y);
	close(w);
	assert_once(y, 0, 0, 23);
	assert_int_equal(y->seen[0][23], 0);
	assert_once(y, 1, 0, 1);
	assert_int_equal(y->bad, 0);
	assert_int_equal(stats(t).files_open, 1);
	assert_int_equal(stats(t).rotated_closed, 1);
	assert_int_equal(stats(t).resets, 0);
	free(y);
	floe_tail_free(t);
}

/* copytruncate: the file is copied, then truncated in place and written again. */
static void test_copytruncate(void **state)
{
	put("app.log", "0:0\n0:1\n0:2\n");
	struct floe_tail *t = make2("app.log", 0, 0);
	assert_int_equal(floe_tail_scan(t), 0);
	struct tally *y = calloc(1, sizeof(*y));
	tally_read(t, y);
	put("app.log", "0:3\n");
	/* No copy: what was written after our last read is gone with the truncation. */
	assert_int_equal(truncate(at("app.log"), 0), 0);
	put("app.log", "1:0\n");
	tally_read(t, y);
	/* Seen at the next read: the file is shorter than the position. */
	assert_int_equal(stats(t).truncations, 1);
	assert_int_equal(y->seen[0][3], 0);
	assert_once(y, 0, 0, 3);
	assert_once(y, 1, 0, 1);
	assert_int_equal(stats(t).copies_followed, 0);
	/* A truncation followed by more bytes than we had read before we look: the content
	 * check of the scan catches it (the first bytes differ). */
	put("app.log", "1:1\n");
	tally_read(t, y);
	assert_int_equal(truncate(at("app.log"), 0), 0);
	put("app.log", "2:0\n2:1\n2:2\n2:3\n");
	assert_int_equal(floe_tail_scan(t), 0);
	tally_read(t, y);
	assert_once(y, 1, 0, 2);
	assert_once(y, 2, 0, 4);
	assert_int_equal(stats(t).resets, 2);
	/* logrotate's copytruncate: copy, then truncate. The lines written between our last
	 * read and the copy are read from the copy, from our position on. */
	put("app.log", "2:4\n2:5\n");
	char buf[256];
	int in = open(at("app.log"), O_RDONLY), out = open(at("app.log.1"), O_WRONLY | O_CREAT, 0644);
	ssize_t k = read(in, buf, sizeof(buf));
	assert_true(k > 0);
	assert_int_equal(write(out, buf, (size_t)k), k);
	close(in);
	close(out);
	assert_int_equal(truncate(at("app.log"), 0), 0);
	put("app.log", "3:0\n");
	tally_read(t, y);
	tally_read(t, y);
	assert_once(y, 2, 0, 6);
	assert_once(y, 3, 0, 1);
	assert_int_equal(stats(t).copies_followed, 1);
	assert_int_equal(stats(t).files_open, 2);
	fake_now += 5000;
	tally_read(t, y);
	assert_int_equal(stats(t).files_open, 1);
	/* A copy that does not hold what we delivered is never read. */
	put("app.log", "3:1\n");
	tally_read(t, y);
	int o2 = open(at("app.log.2"), O_WRONLY | O_CREAT, 0644);
	assert_int_equal(write(o2, "3:0\n9:9\n9:9\n", 12), 12);
	close(o2);
	assert_int_equal(truncate(at("app.log"), 0), 0);
	put("app.log", "4:0\n");
	tally_read(t, y);
	tally_read(t, y);
	assert_int_equal(y->seen[9][9], 0);
	assert_once(y, 3, 0, 2);
	assert_once(y, 4, 0, 1);
	assert_int_equal(stats(t).copies_followed, 1);
	assert_int_equal(y->bad, 0);
	free(y);
	floe_tail_free(t);
}

/* A file deleted before its lines were read: if its descriptor was open they are read
 * before it is closed. A file never opened (no descriptor was free) is lost with its
 * name: nothing can open it any more. */
static void test_delete_unread(void **state)
{
	put("a.log", "0:0\n0:1\n");
	put("b.log", "1:0\n");
	struct floe_tail *t = make2("*.log", 0, 1);
	assert_int_equal(floe_tail_scan(t), 0); /* a.log opened; b.log waits */
	assert_int_equal(stats(t).files_open, 1);
	assert_int_equal(unlink(at("a.log")), 0);
	assert_int_equal(unlink(at("b.log")), 0);
	assert_int_equal(floe_tail_scan(t), 0);
	struct tally *y = calloc(1, sizeof(*y));
	tally_read(t, y);
	assert_once(y, 0, 0, 2);
	assert_int_equal(y->seen[1][0], 0);
	fake_now += 5000;
	tally_read(t, y);
	assert_int_equal(stats(t).files_open, 0);
	/* Neither leaves a position: one was deleted, the other never opened. */
	struct floe_buf blob;
	save(t, &blob);
	assert_int_equal(blob.data[8], 0);
	floe_buf_fini(&blob);
	free(y);
	floe_tail_free(t);
}

/* Same inode, same first KiB, long enough: only the bytes before the offset tell that
 * the file is another one (inode reuse after delete + create). Rewriting in place gives
 * exactly that situation whatever the file system does with inode numbers; a real
 * delete + create is tried too. */
static void test_inode_reuse(void **state)
{
	char head[1100];
	memset(head, '#', sizeof(head) - 1);
	head[sizeof(head) - 2] = '\n';
	head[sizeof(head) - 1] = 0;
	put("app.log", head);
	put("app.log", "0:0\n0:1\n");
	struct floe_tail *t = make2("app.log", 2048, 0);
	assert_int_equal(floe_tail_scan(t), 0);
	struct tally *y = calloc(1, sizeof(*y));
	tally_read(t, y);
	struct floe_buf blob;
	save(t, &blob);
	floe_tail_free(t);
	struct stat st1, st2;
	assert_int_equal(stat(at("app.log"), &st1), 0);

	rewrite("app.log", head);
	put("app.log", "1:0\n1:1\n1:2\n"); /* same length up to the offset and beyond */
	t = make2("app.log", 2048, 0);
	assert_int_equal(floe_tail_restore(t, blob.data, blob.len), 0);
	assert_int_equal(floe_tail_scan(t), 0);
	tally_read(t, y);
	assert_int_equal(stats(t).generations, 1);
	assert_once(y, 1, 0, 3);
	assert_int_equal(y->lines, 3 + 4); /* the header line again, from 0 */
	floe_buf_fini(&blob);
	save(t, &blob);
	floe_tail_free(t);

	/* A real delete + create; when the file system hands out the same inode number the
	 * same check must catch it. */
	assert_int_equal(unlink(at("app.log")), 0);
	put("app.log", head);
	put("app.log", "2:0\n2:1\n2:2\n2:3\n");
	assert_int_equal(stat(at("app.log"), &st2), 0);
	t = make2("app.log", 2048, 0);
	assert_int_equal(floe_tail_restore(t, blob.data, blob.len), 0);
	assert_int_equal(floe_tail_scan(t), 0);
	tally_read(t, y);
	assert_once(y, 2, 0, 4);
	assert_int_equal(stats(t).resets, 1);
	(void)st1;
	floe_buf_fini(&blob);
	free(y);
	floe_tail_free(t);
}

/* Two files with the same first KiB are two files (their inodes differ), also after a
 * restart during which their names were swapped. */
static void test_same_first_kib(void **state)
{
	char head[1100];
	memset(head, '=', sizeof(head) - 1);
	head[sizeof(head) - 2] = '\n';
	head[sizeof(head) - 1] = 0;
	put("a.log", head);
	put("b.log", head);
	put("a.log", "0:0\n");
	put("b.log", "1:0\n1:1\n");
	struct floe_tail *t = make2("*.log", 2048, 0);
	assert_int_equal(floe_tail_scan(t), 0);
	struct tally *y = calloc(1, sizeof(*y));
	tally_read(t, y);
	assert_int_equal(y->lines, 2 + 3);
	struct floe_buf blob;
	save(t, &blob);
	floe_tail_free(t);
	assert_int_equal(rename(at("a.log"), at("c.tmp")), 0);
	assert_int_equal(rename(at("b.log"), at("a.log")), 0);
	assert_int_equal(rename(at("c.tmp"), at("b.log")), 0);
	put("b.log", "0:1\n"); /* the first file, now named b.log */
	put("a.log", "1:2\n");
	t = make2("*.log", 2048, 0);
	assert_int_equal(floe_tail_restore(t, blob.data, blob.len), 0);
	assert_int_equal(floe_tail_scan(t), 0);
	tally_read(t, y);
	assert_once(y, 0, 0, 2);
	assert_once(y, 1, 0, 3);
	assert_int_equal(y->lines, 2 + 3 + 2);
	assert_int_equal(stats(t).resets, 0);
	floe_buf_fini(&blob);
	free(y);
	floe_tail_free(t);
}

/* Positions saved between the rename and the create; after the restart the rotated file
 * is found by identity under its new name (outside the pattern) and read out, the new
 * file from 0. */
static void test_restart_during_rotation(void **state)
{
	put("app.log", "0:0\n0:1\n");
	struct floe_tail *t = make2("app.log", 0, 0);
	assert_int_equal(floe_tail_scan(t), 0);
	struct tally *y = calloc(1, sizeof(*y));
	tally_read(t, y);
	assert_int_equal(rename(at("app.log"), at("app.log.1")), 0);
	struct floe_buf blob;
	save(t, &blob);
	floe_tail_free(t); /* the crash */
	put("app.log.1", "0:2\n0:3\n");
	put("app.log", "1:0\n");
	t = make2("app.log", 0, 0);
	assert_int_equal(floe_tail_restore(t, blob.data, blob.len), 0);
	assert_int_equal(floe_tail_scan(t), 0);
	tally_read(t, y);
	assert_once(y, 0, 0, 4);
	assert_once(y, 1, 0, 1);
	assert_int_equal(stats(t).files_open, 2);
	fake_now += 5000;
	tally_read(t, y);
	assert_int_equal(stats(t).files_open, 1);
	/* The rotated file's position is kept (under its new name) until forget_after. */
	floe_buf_fini(&blob);
	save(t, &blob);
	assert_int_equal(blob.data[8], 2);
	fake_now += 24 * 3600 * 1000;
	assert_int_equal(floe_tail_scan(t), 0);
	floe_buf_fini(&blob);
	save(t, &blob);
	assert_int_equal(blob.data[8], 1);
	assert_int_equal(y->bad, 0);
	floe_buf_fini(&blob);
	free(y);
	floe_tail_free(t);
}

struct bigsink {
	size_t lines, bytes;
	size_t pieces_of_max;
	size_t max;
};

static int on_big(void *ctx, const struct floe_tail_line *l)
{
	struct bigsink *b = ctx;
	b->lines++;
	b->bytes += l->len;
	b->pieces_of_max += l->len == b->max;
	return 0;
}

/* A 10 MiB line with max_line_bytes 1 MiB: ten pieces, counted once. */
static void test_line_of_10_mib(void **state)
{
	size_t big = (size_t)10 << 20, mib = (size_t)1 << 20;
	char *p = malloc(big + 1);
	assert_non_null(p);
	memset(p, 'x', big);
	p[big] = 0;
	int fd = open(at("big.log"), O_WRONLY | O_CREAT, 0644);
	assert_true(fd >= 0);
	put_fd(fd, p);
	put_fd(fd, "\nend\n");
	close(fd);
	free(p);
	struct floe_tail *t = make2("big.log", mib, 0);
	assert_int_equal(floe_tail_scan(t), 0);
	struct bigsink b = {.max = mib};
	size_t progress;
	assert_int_equal(floe_tail_read(t, SIZE_MAX, on_big, &b, &progress), 0);
	assert_int_equal(b.lines, 10 + 1);
	assert_int_equal(b.pieces_of_max, 10);
	assert_int_equal(b.bytes, big + 3);
	assert_int_equal(stats(t).long_lines_split, 1);
	assert_int_equal(progress, big + 5);
	floe_tail_free(t);
}

/* Binary garbage: every byte is delivered (as lines split at LF or max_line), nothing
 * crashes, and lines holding a NUL are counted. */
static void test_binary_garbage(void **state)
{
	size_t n = 200000;
	uint8_t *p = malloc(n);
	uint32_t x = 12345;
	for (size_t i = 0; i < n; i++) {
		x = x * 1103515245u + 12345u;
		p[i] = (uint8_t)(x >> 16);
	}
	/* Count the expected lines with NULs: split at LF, pieces of at most 512 bytes. */
	size_t with_nul = 0, lines = 0, cur = 0;
	bool nul = false;
	for (size_t i = 0; i < n; i++) {
		if (p[i] == '\n') {
			size_t content = cur;
			/* a CR before the LF is not content, but a NUL never is a CR */
			lines++;
			with_nul += nul;
			cur = 0;
			nul = false;
			(void)content;
			continue;
		}
		if (cur == 512) {
			/* only reached when no LF follows within max_line + 2 bytes; the tail's
			 * split rule is checked by the byte total below instead */
		}
		cur++;
		nul |= p[i] == 0;
	}
	int fd = open(at("bin.log"), O_WRONLY | O_CREAT, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, p, n), (ssize_t)n);
	close(fd);
	struct floe_tail *t = make2("bin.log", 100000, 0);
	assert_int_equal(floe_tail_scan(t), 0);
	struct bigsink b = {.max = 100000};
	size_t progress;
	assert_int_equal(floe_tail_read(t, SIZE_MAX, on_big, &b, &progress), 0);
	assert_int_equal(floe_tail_flush_partial(t, on_big, &b), 0);
	/* With max_line 100000 nothing is split: the lines are exactly the LF-separated
	 * pieces (plus the trailing partial one). */
	assert_int_equal(b.lines, lines + (cur > 0));
	assert_int_equal(stats(t).lines_with_nul, with_nul + (nul ? 1 : 0));
	assert_true(stats(t).lines_with_nul > 0);
	assert_int_equal(stats(t).bytes, n);
	free(p);
	floe_tail_free(t);
}

/* 2,000 files in one directory with max_open_files 64: every line read exactly once and
 * never more than 64 (+ a few) descriptors open; then every file grows again. */
static void test_many_files(void **state)
{
	char name[32], line[32];
	for (unsigned f = 0; f < 2000; f++) {
		snprintf(name, sizeof(name), "f%04u.log", f);
		snprintf(line, sizeof(line), "%u:0\n%u:1\n", f, f);
		put(name, line);
	}
	size_t base = open_fds();
	struct floe_tail *t = make2("*.log", 0, 64);
	assert_int_equal(floe_tail_scan(t), 0);
	struct tally *y = calloc(1, sizeof(*y));
	y->count_fds = true;
	tally_read(t, y);
	for (unsigned f = 0; f < 2000; f++)
		assert_once(y, f, 0, 2);
	assert_true(stats(t).files_open <= 64);
	assert_true(y->max_fds <= base + 64 + 2);
	/* Growth of parked files: seen by the next scan, read once. */
	for (unsigned f = 0; f < 2000; f += 7) {
		snprintf(name, sizeof(name), "f%04u.log", f);
		snprintf(line, sizeof(line), "%u:2\n", f);
		put(name, line);
	}
	assert_int_equal(floe_tail_scan(t), 0);
	tally_read(t, y);
	for (unsigned f = 0; f < 2000; f++)
		assert_int_equal(y->seen[f][2], f % 7 == 0 ? 1 : 0);
	assert_true(y->max_fds <= base + 64 + 2);
	assert_true(stats(t).reopens > 0);
	assert_int_equal(stats(t).resets, 0);
	assert_int_equal(y->bad, 0);
	/* A restart with everything parked resumes every file where it was. */
	struct floe_buf blob;
	save(t, &blob);
	floe_tail_free(t);
	t = make2("*.log", 0, 64);
	assert_int_equal(floe_tail_restore(t, blob.data, blob.len), 0);
	assert_int_equal(floe_tail_scan(t), 0);
	put("f0001.log", "1:3\n");
	assert_int_equal(floe_tail_scan(t), 0);
	tally_read(t, y);
	assert_int_equal(y->seen[1][3], 1);
	assert_int_equal(y->lines, 4000 + 286 + 1);
	floe_buf_fini(&blob);
	free(y);
	floe_tail_free(t);
}

/* A symlinked path is followed to its target; re-pointed, the new target is a new file
 * read from 0 and the old one is drained and closed. */
static void test_symlink(void **state)
{
	put("t1", "0:0\n");
	assert_int_equal(symlink(at("t1"), at("app.log")), 0);
	struct floe_tail *t = make2("app.log", 0, 0);
	assert_int_equal(floe_tail_scan(t), 0);
	struct tally *y = calloc(1, sizeof(*y));
	tally_read(t, y);
	put("t2", "1:0\n1:1\n");
	assert_int_equal(unlink(at("app.log")), 0);
	assert_int_equal(symlink(at("t2"), at("app.log")), 0);
	put("t1", "0:1\n");
	assert_int_equal(floe_tail_scan(t), 0);
	tally_read(t, y);
	fake_now += 5000;
	tally_read(t, y);
	assert_once(y, 0, 0, 2);
	assert_once(y, 1, 0, 2);
	assert_int_equal(stats(t).files_open, 1);
	free(y);
	floe_tail_free(t);
}

/* Watch events: a parked file that grows is reopened at the next read without a scan; a
 * file created where the pattern matches makes the next read scan. */
static void test_watch_events(void **state)
{
	put("a.log", "0:0\n");
	put("b.log", "1:0\n");
	struct floe_watch *w = NULL;
	assert_int_equal(floe_watch_new(0, &w), 0);
	struct floe_tail *t = make2("*.log", 0, 1);
	floe_tail_set_watch(t, w);
	assert_int_equal(floe_tail_scan(t), 0);
	struct tally *y = calloc(1, sizeof(*y));
	tally_read(t, y);
	assert_once(y, 0, 0, 1);
	assert_once(y, 1, 0, 1);
	struct floe_watch_event ev;
	while (floe_watch_wait(w, 0) == 1 && floe_watch_next(w, &ev) == 1)
		; /* what the setup caused */
	put("a.log", "0:1\n");
	put("b.log", "1:1\n");
	put("c.log", "2:0\n");
	assert_int_equal(floe_watch_wait(w, 1000), 1);
	while (floe_watch_next(w, &ev) == 1)
		floe_tail_notify(t, &ev);
	tally_read(t, y);
	assert_once(y, 0, 0, 2);
	assert_once(y, 1, 0, 2);
	assert_once(y, 2, 0, 1);
	assert_true(stats(t).files_open <= 1);
	free(y);
	floe_tail_free(t);
	floe_watch_free(w);
}

/* Allocation faults through the rotation paths: descriptors bounded (parking and
 * reopening), a restored file found under a name outside the globs, drained and closed. */
static int session2(struct floe_alloc *a, const struct floe_buf *blob, struct tally *y)
{
	static char pat[256];
	snprintf(pat, sizeof(pat), "%s/*.log", dir);
	const char *paths[] = {pat};
	struct floe_tail_options o = {.paths = paths,
				      .npaths = 1,
				      .read_chunk = 16,
				      .max_line_bytes = 16,
				      .max_open_files = 1,
				      .clock_ms = fake_clock};
	int err = 0;
	struct floe_tail *t = NULL;
	err = floe_tail_new(a, &o, &t);
	if (!t)
		return err;
	struct floe_buf out;
	floe_buf_init(&out, a, 1 << 20);
	size_t progress;
	int rc = floe_tail_restore(t, blob->data, blob->len);
	if (!rc)
		rc = floe_tail_scan(t);
	if (!rc)
		rc = floe_tail_read(t, SIZE_MAX, on_tally, y, &progress);
	if (!rc)
		rc = floe_tail_positions(t, &out);
	fake_now += 5000;
	if (!rc)
		rc = floe_tail_scan(t);
	if (!rc)
		rc = floe_tail_read(t, SIZE_MAX, on_tally, y, &progress);
	floe_buf_fini(&out);
	floe_tail_free(t);
	return rc;
}

static int count_line(void *ctx, const struct floe_tail_line *l)
{
	(void)l;
	(*(size_t *)ctx)++;
	return 0;
}

/* Files read in turns hold one chunk each, not a maximal line: forty files with 1 MiB
 * lines allowed fit in a budget that forty maximal buffers would exceed, and a budget too
 * small for all of them makes files wait rather than fail the read. */
static void test_many_files_small_budget(void **state)
{
	char name[32], line[64];
	for (int i = 0; i < 40; i++) {
		snprintf(name, sizeof(name), "m%02d.log", i);
		for (int k = 0; k < 50; k++) {
			snprintf(line, sizeof(line), "file %d line %d\n", i, k);
			put(name, line);
		}
	}
	struct floe_alloc a;
	floe_alloc_init(&a, 3u << 20);
	struct floe_tail *t = make(&a, "m*.log", 64 << 10, 1u << 20, false);
	assert_int_equal(floe_tail_scan(t), 0);
	size_t n = 0, progress;
	for (int round = 0; round < 1000; round++) {
		assert_int_equal(floe_tail_read(t, 4096, count_line, &n, &progress), 0);
		if (progress == 0 && n == 2000)
			break;
	}
	assert_int_equal(n, 2000);
	floe_tail_free(t);
	assert_int_equal(a.used, 0);
}

static struct floe_tail *make3(const char *pattern, enum floe_tail_symlinks mode,
			       const char *skip, size_t max_line, bool truncate)
{
	static char pat[256], sk[256];
	snprintf(pat, sizeof(pat), "%s/%s", dir, pattern);
	const char *paths[1] = {pat};
	const char *exclude[1] = {"*secret*"};
	const char *skips[1] = {sk};
	if (skip)
		snprintf(sk, sizeof(sk), "%s/%s", dir, skip);
	struct floe_tail_options o = {
	    .paths = paths,
	    .npaths = 1,
	    .exclude = exclude,
	    .nexclude = 1,
	    .max_line_bytes = max_line,
	    .read_chunk = 4096,
	    .clock_ms = fake_clock,
	    .symlinks = mode,
	    .skip_dirs = skips,
	    .nskip_dirs = skip ? 1 : 0,
	    .truncate_long = truncate,
	};
	struct floe_tail *t = NULL;
	assert_int_equal(floe_tail_new(NULL, &o, &t), 0);
	assert_non_null(t);
	return t;
}

static void mkdir_at(const char *name)
{
	assert_int_equal(mkdir(at(name), 0755), 0);
}

/* Which linked files each follow_symlinks mode reads: a link within the pattern's
 * directory, a link out of it, a directory link matched by a wildcard, and a link to an
 * excluded target. */
static void test_symlink_rules(void **state)
{
	mkdir_at("w");
	mkdir_at("w/sub");
	mkdir_at("outside");
	put("w/a.log", "0:0\n");
	put("w/sub/b.log", "1:0\n");
	put("outside/c", "2:0\n");
	put("w/secret-d", "3:0\n");
	assert_int_equal(symlink(at("w/sub/b.log"), at("w/in.log")), 0);
	assert_int_equal(symlink(at("outside/c"), at("w/out.log")), 0);
	assert_int_equal(symlink(at("w/secret-d"), at("w/d.log")), 0);
	assert_int_equal(symlink(at("outside"), at("w/dirlink")), 0);
	struct {
		enum floe_tail_symlinks mode;
		const char *pattern;
		unsigned want[4]; /* times each of the four files is read */
		uint64_t skipped;
	} cases[] = {
	    {FLOE_TAIL_SYMLINKS_WITHIN_ROOT, "w/*.log", {1, 1, 0, 0}, 2},
	    {FLOE_TAIL_SYMLINKS_FOLLOW, "w/*.log", {1, 1, 1, 0}, 1},
	    {FLOE_TAIL_SYMLINKS_NONE, "w/*.log", {1, 0, 0, 0}, 3},
	    {FLOE_TAIL_SYMLINKS_WITHIN_ROOT, "w/*/c", {0, 0, 0, 0}, 1},
	    {FLOE_TAIL_SYMLINKS_FOLLOW, "w/*/c", {0, 0, 1, 0}, 0},
	};
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		struct floe_tail *t = make3(cases[k].pattern, cases[k].mode, NULL, 0, false);
		assert_int_equal(floe_tail_scan(t), 0);
		struct tally *y = calloc(1, sizeof(*y));
		tally_read(t, y);
		for (unsigned f = 0; f < 4; f++) {
			if (y->seen[f][0] != cases[k].want[f])
				fail_msg("case %zu: file %u read %u times", k, f, y->seen[f][0]);
		}
		assert_int_equal(stats(t).files_skipped, cases[k].skipped);
		free(y);
		floe_tail_free(t);
	}
}

/* The agent's own directories are never read, through a glob or a link. */
static void test_skip_dirs(void **state)
{
	mkdir_at("state");
	put("state/metrics.json", "0:0\n");
	put("app.json", "1:0\n");
	assert_int_equal(symlink(at("state/metrics.json"), at("link.json")), 0);
	struct floe_tail *t = make3("*.json", FLOE_TAIL_SYMLINKS_FOLLOW, "state", 0, false);
	assert_int_equal(floe_tail_scan(t), 0);
	struct tally *y = calloc(1, sizeof(*y));
	tally_read(t, y);
	assert_int_equal(y->seen[0][0], 0);
	assert_int_equal(y->seen[1][0], 1);
	floe_tail_free(t);
	t = make3("state/*.json", FLOE_TAIL_SYMLINKS_FOLLOW, "state", 0, false);
	assert_int_equal(floe_tail_scan(t), 0);
	tally_read(t, y);
	assert_int_equal(y->seen[0][0], 0);
	assert_int_equal(stats(t).files_skipped, 1);
	assert_int_equal(stats(t).patterns_unmatched, 1);
	free(y);
	floe_tail_free(t);
}

/* truncate_long: a long line keeps its first max_line bytes, the rest is consumed
 * unseen and counted; the next line is whole. */
static void test_truncate_long(void **state)
{
	char big[300];
	memset(big, 'x', sizeof(big) - 2);
	big[sizeof(big) - 2] = '\n';
	big[sizeof(big) - 1] = 0;
	put("a.log", "short\n");
	put("a.log", big);
	put("a.log", "after\n");
	struct floe_tail *t = make3("a.log", FLOE_TAIL_SYMLINKS_WITHIN_ROOT, NULL, 256, true);
	assert_int_equal(floe_tail_scan(t), 0);
	struct sink s = {0};
	read_all(t, &s);
	assert_int_equal(s.n, 3);
	assert_int_equal(s.v[1].len, 256);
	assert_line(&s, 2, "a.log", 6 + 299, "after");
	assert_int_equal(stats(t).long_lines_truncated, 1);
	assert_int_equal(stats(t).long_lines_split, 0);
	assert_int_equal(stats(t).lines, 3);
	floe_tail_free(t);
}

static int deny_open(const char *path)
{
	if (strstr(path, "locked"))
		return errno = EACCES, -1;
	return open(path, O_RDONLY | O_CLOEXEC);
}

/* Health: a pattern whose directory is missing, then present and empty, then matching;
 * a file that cannot be opened is counted while it cannot, and read once it can. */
static void test_health(void **state)
{
	struct floe_tail *t = make3("d/*.log", FLOE_TAIL_SYMLINKS_WITHIN_ROOT, NULL, 0, false);
	assert_int_equal(floe_tail_scan(t), 0);
	assert_int_equal(stats(t).patterns_unmatched, 1);
	mkdir_at("d");
	assert_int_equal(floe_tail_scan(t), 0);
	assert_int_equal(stats(t).patterns_unmatched, 1);
	put("d/locked.log", "0:0\n");
	struct floe_fs_faults faults = {.open_read = deny_open};
	floe_fs_set_faults(&faults);
	assert_int_equal(floe_tail_scan(t), 0);
	struct tally *y = calloc(1, sizeof(*y));
	tally_read(t, y);
	assert_int_equal(stats(t).patterns_unmatched, 0);
	assert_int_equal(stats(t).files_unreadable, 1);
	assert_int_equal(y->lines, 0);
	floe_fs_set_faults(NULL);
	assert_int_equal(floe_tail_scan(t), 0);
	tally_read(t, y);
	assert_int_equal(stats(t).files_unreadable, 0);
	assert_once(y, 0, 0, 1);
	free(y);
	floe_tail_free(t);
}

/* Nine or more files, one of them ending in a short unterminated line: each read call
 * returns, every complete line comes once, and the partial line is only flushed on
 * request. (A buffer given back while its file was still being read made the file read
 * the same bytes again forever.) An alarm turns a livelock into a failure. */
static void test_many_files_partial_line(void **state)
{
	char name[32], line[64];
	for (int i = 1; i <= 9; i++) {
		snprintf(name, sizeof(name), "f%d.log", i);
		snprintf(line, sizeof(line), "line %d\n", i);
		put(name, line);
	}
	put("f1.log", "partial");
	alarm(20);
	struct floe_tail *t = make(NULL, "f*.log", 0, 0, false);
	assert_int_equal(floe_tail_scan(t), 0);
	size_t n = 0, progress;
	for (int round = 0; round < 4; round++)
		assert_int_equal(floe_tail_read(t, SIZE_MAX, count_line, &n, &progress), 0);
	assert_int_equal(progress, 0);
	assert_int_equal(n, 9);
	assert_int_equal(floe_tail_flush_partial(t, count_line, &n), 0);
	assert_int_equal(n, 10);
	/* The flushed line stays flushed: what follows it is a line of its own. */
	put("f1.log", " and more\nline 10\n");
	assert_int_equal(floe_tail_read(t, SIZE_MAX, count_line, &n, &progress), 0);
	assert_int_equal(n, 12);
	alarm(0);
	floe_tail_free(t);
}

static void test_alloc_faults_rotation(void **state)
{
	put("a.log", "0:0\n");
	put("b.log", "1:0\n");
	put("c.log", "2:0\n");
	struct floe_tail *t = make2("*.log", 16, 1);
	assert_int_equal(floe_tail_scan(t), 0);
	struct tally *y = calloc(1, sizeof(*y));
	tally_read(t, y);
	assert_int_equal(y->lines, 3);
	struct floe_buf blob;
	save(t, &blob);
	floe_tail_free(t);
	assert_int_equal(rename(at("a.log"), at("a.old")), 0);
	put("a.old", "0:1\n");
	put("c.log", "2:1\n");
	for (long k = 0;; k++) {
		struct floe_alloc a;
		floe_alloc_init(&a, 0);
		a.fail_after = k;
		memset(y, 0, sizeof(*y));
		int rc = session2(&a, &blob, y);
		assert_int_equal(a.used, 0);
		/* Out of memory is an error, or, for a read buffer, a file that waits (fewer
		 * lines now, none lost: the next read retries). */
		if (rc == FLOE_ENOMEM || (rc == 0 && y->lines < 2))
			continue;
		assert_int_equal(rc, 0);
		assert_true(k > 5);
		assert_int_equal(y->lines, 2);
		assert_int_equal(y->seen[0][1], 1);
		assert_int_equal(y->seen[2][1], 1);
		break;
	}
	floe_buf_fini(&blob);
	free(y);
}

/* A tail whose new files wait for a durable position (confirm_new), or whose partial
 * lines wait for their file to be idle for 5 s (partial_idle). */
static struct floe_tail *make_opts(bool confirm_new, bool partial_idle)
{
	return make_with(NULL, "*.log",
			 (struct floe_tail_options){.start_at_end = true,
						    .confirm_new = confirm_new,
						    .partial_idle = partial_idle,
						    .partial_line_ms = 5000});
}

static void test_confirm_new(void **state)
{
	put("a.log", "old\n");
	struct floe_tail *t = make_opts(true, false);
	assert_int_equal(floe_tail_scan(t), 0);
	assert_int_equal(floe_tail_unsaved(t), 1);
	/* Not read before its position is confirmed, whatever is appended meanwhile. */
	put("a.log", "new\n");
	struct sink s = {0};
	assert_int_equal(read_all(t, &s), 0);
	assert_int_equal(s.n, 0);
	struct floe_buf base;
	floe_buf_init(&base, NULL, 1 << 20);
	assert_int_equal(floe_tail_positions_with_new(t, NULL, 0, &base), 0);
	floe_tail_confirm(t);
	assert_int_equal(floe_tail_unsaved(t), 0);
	read_all(t, &s);
	assert_int_equal(s.n, 1);
	assert_line(&s, 0, "a.log", 4, "new"); /* from the end chosen at the scan */

	/* A file found later starts at 0; merged into base, it leaves a.log's saved position
	 * (4, before "new") where it was. */
	put("b.log", "b1\n");
	assert_int_equal(floe_tail_scan(t), 0);
	assert_int_equal(floe_tail_unsaved(t), 1);
	struct floe_buf merged;
	floe_buf_init(&merged, NULL, 1 << 20);
	assert_int_equal(floe_tail_positions_with_new(t, base.data, base.len, &merged), 0);
	assert_int_equal(floe_tail_positions_with_new(t, base.data, 5, &merged), FLOE_ECORRUPT);
	floe_tail_free(t);

	t = make_opts(true, false);
	assert_int_equal(floe_tail_restore(t, merged.data, merged.len), 0);
	assert_int_equal(floe_tail_scan(t), 0);
	assert_int_equal(floe_tail_unsaved(t), 0); /* both restored */
	struct sink r = {0};
	read_all(t, &r);
	assert_int_equal(r.n, 2);
	assert_string_equal(find_line(&r, "a.log", 4)->data, "new");
	assert_string_equal(find_line(&r, "b.log", 0)->data, "b1");
	floe_tail_free(t);
	floe_buf_fini(&base);
	floe_buf_fini(&merged);
}

/* The wall clock: the files' modification times are real. */
static int64_t wall_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void test_partial_idle(void **state)
{
	int64_t was = fake_now;
	fake_now = wall_ms();
	put("a.log", "x\n");
	struct floe_tail *t = make_opts(false, true);
	assert_int_equal(floe_tail_scan(t), 0);
	put("a.log", "whole\nhal");
	struct sink s = {0};
	read_all(t, &s);
	assert_int_equal(floe_tail_flush_partial(t, on_line, &s), 0);
	assert_int_equal(s.n, 1); /* the file was just written: "hal" is held */
	assert_line(&s, 0, "a.log", 2, "whole");
	fake_now += 4000;
	read_all(t, &s);
	assert_int_equal(s.n, 1);
	put("a.log", "f\nqua");
	fake_now = wall_ms(); /* just after the last write */
	read_all(t, &s);
	assert_int_equal(floe_tail_flush_partial(t, on_line, &s), 0);
	assert_int_equal(s.n, 2);
	assert_line(&s, 1, "a.log", 8, "half");
	fake_now += 5000; /* idle for partial_line_ms: delivered */
	read_all(t, &s);
	assert_int_equal(s.n, 3);
	assert_line(&s, 2, "a.log", 13, "qua");
	floe_tail_free(t);
	fake_now = was;
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	const struct CMUnitTest tests[] = {
	    T(test_offsets_across_reads),
	    T(test_partial_line_held),
	    T(test_crlf),
	    T(test_long_line_split),
	    T(test_start_at_end_and_beginning),
	    T(test_positions_restore),
	    T(test_rotated_while_away),
	    T(test_truncation),
	    T(test_truncated_while_away),
	    T(test_replaced_file),
	    T(test_deleted_file),
	    T(test_glob_exclude),
	    T(test_stop_and_error),
	    T(test_budget_round_robin),
	    T(test_read_error),
	    T(test_positions_layout),
	    T(test_flushed_partial_line), T(test_restore_corrupt), T(test_many_files_small_budget),
	    T(test_hold_positions),
	    T(test_hold_far_back),
	    T(test_alloc_faults),
	    T(test_rename_create_while_appending),
	    T(test_copytruncate),
	    T(test_delete_unread),
	    T(test_inode_reuse),
	    T(test_same_first_kib),
	    T(test_restart_during_rotation),
	    T(test_line_of_10_mib),
	    T(test_binary_garbage),
	    T(test_many_files),
	    T(test_symlink),
	    T(test_watch_events),
	    T(test_alloc_faults_rotation),
	    T(test_many_files_partial_line),
	    T(test_symlink_rules),
	    T(test_skip_dirs),
	    T(test_truncate_long),
	    T(test_health),
	    T(test_confirm_new),
	    T(test_partial_idle),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

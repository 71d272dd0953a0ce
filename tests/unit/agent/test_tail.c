/* Tests of agent/input/tail: exact line offsets across reads, held partial lines, CRLF,
 * long-line splitting, start positions, positions -> restore without loss or repetition,
 * truncation, rotation while away, replaced and deleted files, globs and excludes,
 * stopping and failing callbacks, the read budget, read errors, the positions layout. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "tail_lib.h"

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
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Tests of agent/input/tail, rotation and identity: rename and create while appending,
 * copytruncate, deleted unread files, inode reuse, files alike in their first KiB, a
 * restart mid-rotation, a 10 MiB line, the zeros a power cut leaves, and binary garbage. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "tail_lib.h"

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
	fake_now += 2000;	 /* rotate_wait is over: the old file is read up to its size now */
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
	int in = open(at("app.log"), O_RDONLY),
	    out = open(at("app.log.1"), O_WRONLY | O_CREAT, 0644);
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

/* Binary garbage: every byte but the NULs is delivered (as lines split at LF, at a run
 * of NULs, or at max_line), nothing crashes, no line holds a NUL, and the NULs skipped
 * are counted. */
static int on_nul_free(void *ctx, const struct floe_tail_line *l)
{
	assert_null(memchr(l->data, 0, l->len));
	return on_big(ctx, l);
}

static void test_binary_garbage(void **state)
{
	size_t n = 200000;
	uint8_t *p = malloc(n);
	uint32_t x = 12345;
	for (size_t i = 0; i < n; i++) {
		x = x * 1103515245u + 12345u;
		p[i] = (uint8_t)(x >> 16);
		if (i % 5000 < 300) /* runs of NULs too, as a hole leaves */
			p[i] = 0;
	}
	/* The model: a line is what lies between LFs and runs of NULs; one ended by an LF
	 * is a line even when empty, one ended by NULs only when something precedes them
	 * (or a CR, which is no content). */
	size_t nuls = 0, lines = 0, cur = 0;
	for (size_t i = 0; i < n; i++) {
		if (p[i] == '\n') {
			lines++;
			cur = 0;
		} else if (p[i] == 0) {
			nuls++;
			lines += cur > 0;
			cur = 0;
		} else {
			cur++;
		}
	}
	int fd = open(at("bin.log"), O_WRONLY | O_CREAT, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, p, n), (ssize_t)n);
	close(fd);
	struct floe_tail *t = make2("bin.log", 100000, 0);
	assert_int_equal(floe_tail_scan(t), 0);
	struct bigsink b = {.max = 100000};
	size_t progress;
	assert_int_equal(floe_tail_read(t, SIZE_MAX, on_nul_free, &b, &progress), 0);
	assert_int_equal(floe_tail_flush_partial(t, on_nul_free, &b), 0);
	/* With max_line 100000 nothing is split. */
	assert_int_equal(b.lines, lines + (cur > 0));
	assert_int_equal(stats(t).nul_bytes_skipped, nuls);
	assert_true(nuls > 10000);
	assert_int_equal(stats(t).bytes, n);
	free(p);
	floe_tail_free(t);
}

/* A power cut left zeros where a file's last blocks were to be, and its writer went on
 * after them: the line cut by the hole ends there, the zeros are skipped, and the lines
 * after them come whole, also when the zeros and the text after them arrive in later
 * reads (a run at the end of what is held is dropped at once, as is one at the start). */
static void test_power_cut_zeros(void **state)
{
	int fd = open(at("cut.log"), O_WRONLY | O_CREAT, 0644);
	assert_true(fd >= 0);
	put_fd(fd, "one\ntwo\nthr");
	static const char zeros[4096]; /* over one read chunk (4096 here) with the text */
	assert_int_equal(write(fd, zeros, sizeof(zeros)), (ssize_t)sizeof(zeros));
	struct floe_tail *t = make2("cut.log", 1000, 0);
	assert_int_equal(floe_tail_scan(t), 0);
	struct sink k = {0};
	size_t progress;
	assert_int_equal(floe_tail_read(t, SIZE_MAX, on_line, &k, &progress), 0);
	assert_int_equal(k.n, 3);
	assert_line(&k, 0, "cut.log", 0, "one");
	assert_line(&k, 2, "cut.log", 8, "thr");
	assert_int_equal(stats(t).nul_bytes_skipped, sizeof(zeros));
	put_fd(fd, "four\r\n");
	assert_int_equal(write(fd, zeros, 10), 10);
	put_fd(fd, "five\n\n");
	close(fd);
	assert_int_equal(floe_tail_read(t, SIZE_MAX, on_line, &k, &progress), 0);
	assert_int_equal(k.n, 6);
	assert_line(&k, 3, "cut.log", 11 + sizeof(zeros), "four");
	assert_line(&k, 4, "cut.log", 11 + sizeof(zeros) + 6 + 10, "five");
	assert_line(&k, 5, "cut.log", 11 + sizeof(zeros) + 6 + 10 + 5, "");
	assert_int_equal(stats(t).nul_bytes_skipped, sizeof(zeros) + 10);
	assert_int_equal(stats(t).bytes, 11 + sizeof(zeros) + 6 + 10 + 6);
	floe_tail_free(t);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	const struct CMUnitTest tests[] = {
	    T(test_rename_create_while_appending),
	    T(test_copytruncate),
	    T(test_delete_unread),
	    T(test_inode_reuse),
	    T(test_same_first_kib),
	    T(test_restart_during_rotation),
	    T(test_line_of_10_mib),
	    T(test_power_cut_zeros),
	    T(test_binary_garbage),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

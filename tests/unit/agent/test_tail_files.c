/* Tests of agent/input/tail, many files and their rules: thousands of files under a
 * descriptor limit and a small budget, symlinks, watch events, directories skipped, long
 * lines truncated, health, allocation faults in rotation, new files waiting for a durable
 * position and partial lines waiting for their file to be idle. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "tail_lib.h"

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

/* Takes the events of the next second (at most) and reads what they asked for. */
static void pump(struct floe_watch *w, struct floe_tail *t, struct tally *y)
{
	struct floe_watch_event ev;
	if (floe_watch_wait(w, 1000) == 1)
		while (floe_watch_next(w, &ev) == 1)
			floe_tail_notify(t, &ev);
	tally_read(t, y);
}

/* A directory on a pattern's way is watched: a container's directory made after the
 * start (a wildcard level), and a pattern's root removed and made again. Their files are
 * read on the directory's event, not at the next full rescan (30 s later when idle; a
 * short-lived container's log was gone by then, never read). */
static void test_watch_dirs(void **state)
{
	assert_int_equal(mkdir(at("c0"), 0755), 0);
	put("c0/app.log", "0:0\n");
	struct floe_watch *w = NULL;
	assert_int_equal(floe_watch_new(0, &w), 0);
	struct floe_tail *t = make2("*/app.log", 0, 8);
	floe_tail_set_watch(t, w);
	assert_int_equal(floe_tail_scan(t), 0);
	struct tally *y = calloc(1, sizeof(*y));
	tally_read(t, y);
	assert_once(y, 0, 0, 1);
	pump(w, t, y); /* what the setup caused */
	assert_int_equal(mkdir(at("c1"), 0755), 0);
	put("c1/app.log", "1:0\n");
	pump(w, t, y);
	assert_once(y, 1, 0, 1);
	/* A directory made empty, its log created after the scan that watched it. */
	assert_int_equal(mkdir(at("c2"), 0755), 0);
	pump(w, t, y);
	put("c2/app.log", "2:0\n2:1\n");
	pump(w, t, y);
	assert_once(y, 2, 0, 2);
	floe_tail_free(t);
	floe_watch_free(w);
	assert_int_equal(floe_watch_new(0, &w), 0);

	/* The root goes away and comes back: its parent is watched meanwhile. */
	assert_int_equal(mkdir(at("logs"), 0755), 0);
	put("logs/a.log", "3:0\n");
	t = make2("logs/*.log", 0, 8);
	floe_tail_set_watch(t, w);
	assert_int_equal(floe_tail_scan(t), 0);
	tally_read(t, y);
	assert_once(y, 3, 0, 1);
	assert_int_equal(unlink(at("logs/a.log")), 0);
	assert_int_equal(rmdir(at("logs")), 0);
	pump(w, t, y);
	pump(w, t, y);
	assert_int_equal(mkdir(at("logs"), 0755), 0);
	put("logs/b.log", "4:0\n");
	pump(w, t, y);
	pump(w, t, y);
	assert_once(y, 4, 0, 1);

	/* The same with a rescan between the file's removal and the directory's (the
	 * rescan's directory levels are looked at again only after a directory's event):
	 * the directory goes without an event while its file is open, and the next rescan
	 * still finds it gone and watches its parent. */
	assert_int_equal(unlink(at("logs/b.log")), 0);
	pump(w, t, y);
	assert_int_equal(floe_tail_scan(t), 0);
	assert_int_equal(rmdir(at("logs")), 0);
	assert_int_equal(floe_tail_scan(t), 0); /* the periodic rescan */
	assert_int_equal(mkdir(at("logs"), 0755), 0);
	put("logs/c.log", "5:0\n");
	pump(w, t, y);
	pump(w, t, y);
	assert_once(y, 5, 0, 1);
	assert_int_equal(y->bad, 0);
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
				      .clock_ms = fake_clock,
				      .mono_ms = fake_mono};
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

static struct floe_tail *make3(const char *pattern, enum floe_tail_symlinks mode, const char *skip,
			       size_t max_line, bool truncate)
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
	    .mono_ms = fake_mono,
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

/* A FIFO matched by the glob is not a file floe can tail: skipped and counted at every
 * scan, never opened (an open would wait for a writer), the other files read; a
 * directory matched (what /var/log/ and a star meets) is passed over without a word.
 * (Both were passed over in silence: a FIFO an application logs to was never read and
 * nothing said so.) */
static void test_special_files(void **state)
{
	put("a.log", "0:0\n");
	assert_int_equal(mkfifo(at("pipe.log"), 0644), 0);
	mkdir_at("dir.log");
	struct floe_tail *t = make2("*.log", 0, 8);
	assert_int_equal(floe_tail_scan(t), 0);
	struct tally *y = calloc(1, sizeof(*y));
	tally_read(t, y);
	assert_once(y, 0, 0, 1);
	assert_int_equal(stats(t).files_skipped, 1);
	assert_int_equal(stats(t).files_unreadable, 0);
	assert_int_equal(floe_tail_scan(t), 0);
	assert_int_equal(stats(t).files_skipped, 1);
	assert_int_equal(unlink(at("pipe.log")), 0);
	assert_int_equal(floe_tail_scan(t), 0);
	assert_int_equal(stats(t).files_skipped, 0);
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

/* Whether a line (its data) was delivered, whatever its file's name then. */
static bool has_line(const struct sink *s, const char *data)
{
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->v[i].data, data) == 0)
			return true;
	return false;
}

/* max_open_files 2, rotations faster than rotate_wait. Two files rotated out of the globs
 * and read to their end give their descriptors up to a new file at once (before their
 * rotate_wait is over: counted in rotated_closed_early), so that its known, unread bytes
 * are read; before, they held them for rotate_wait while the new file waited, and its
 * lines were lost when it went away meanwhile (files_lost 1 here on the old tree). A
 * rotated file with bytes not read yet keeps its descriptor: with every one held so, a
 * file gone before one was free is counted in files_lost and lost_bytes (and logged),
 * never silent. */
static void test_lost_unopened(void **state)
{
	put("a.log", "a1\n");
	put("b.log", "b1\n");
	struct floe_tail *t = make2("*.log", 0, 2);
	assert_int_equal(floe_tail_scan(t), 0);
	struct sink s = {0};
	read_all(t, &s);
	assert_int_equal(s.n, 2);
	/* Both rotated out of the globs, drained: the first drained gives its place. */
	assert_int_equal(rename(at("a.log"), at("a.1")), 0);
	assert_int_equal(rename(at("b.log"), at("b.1")), 0);
	put("c.log", "c1\nc2\n");
	assert_int_equal(floe_tail_scan(t), 0);
	assert_int_equal(unlink(at("c.log")), 0); /* gone at once, but open: read */
	read_all(t, &s);
	assert_int_equal(s.n, 4);
	assert_true(has_line(&s, "c2"));
	assert_int_equal(stats(t).files_lost, 0);
	assert_int_equal(stats(t).rotated_closed_early, 1);
	/* b.1 and the deleted c.log, drained: each gives its place to the next new file. */
	assert_int_equal(stats(t).files_open, 2);
	put("d.log", "d1\n");
	assert_int_equal(floe_tail_scan(t), 0);
	put("e.log", "e1\n");
	assert_int_equal(floe_tail_scan(t), 0);
	assert_int_equal(stats(t).rotated_closed_early, 3);
	assert_int_equal(stats(t).files_open, 2);
	/* d.log and e.log rotated with bytes not read yet keep their descriptors: f.log,
	 * gone before one was free, is lost, counted. */
	put("d.log", "d2\n");
	put("e.log", "e2\n");
	assert_int_equal(rename(at("d.log"), at("d.1")), 0);
	assert_int_equal(rename(at("e.log"), at("e.1")), 0);
	put("f.log", "f1\nf2\n");
	assert_int_equal(floe_tail_scan(t), 0);
	assert_int_equal(stats(t).files_open, 2);
	assert_int_equal(unlink(at("f.log")), 0);
	assert_int_equal(floe_tail_scan(t), 0);
	assert_int_equal(stats(t).files_lost, 1);
	assert_int_equal(stats(t).lost_bytes, 6);
	/* Read to their end, they give their places to the next file in the same read. */
	put("g.log", "g1\n");
	assert_int_equal(floe_tail_scan(t), 0);
	read_all(t, &s);
	assert_true(has_line(&s, "d2"));
	assert_true(has_line(&s, "e2"));
	assert_non_null(find_line(&s, "g.log", 0));
	assert_int_equal(s.n, 9); /* every line but f.log's two, once */
	assert_int_equal(stats(t).files_lost, 1);
	floe_tail_free(t);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	const struct CMUnitTest tests[] = {
	    T(test_many_files),
	    T(test_symlink),
	    T(test_watch_events),
	    T(test_watch_dirs),
	    T(test_many_files_small_budget),
	    T(test_symlink_rules),
	    T(test_skip_dirs),
	    T(test_truncate_long),
	    T(test_health),
	    T(test_special_files),
	    T(test_many_files_partial_line),
	    T(test_alloc_faults_rotation),
	    T(test_confirm_new),
	    T(test_partial_idle),
	    T(test_lost_unopened),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

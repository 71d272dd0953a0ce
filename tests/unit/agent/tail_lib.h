/* Helpers of agent/input/tail's tests (include after cmocka.h): a scratch directory per
 * test, files written as a logging program writes them, sinks that record or tally every
 * line, tails made with a fake clock, their positions saved and decoded, open descriptors
 * counted. */
#ifndef FLOE_TEST_TAIL_LIB_H
#define FLOE_TEST_TAIL_LIB_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

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

static inline int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(p);
}

static inline int setup(void **state)
{
	strcpy(dir, "/tmp/floe-test-tail-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static inline int teardown(void **state)
{
	floe_fs_set_faults(NULL);
	return nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static inline char *at(const char *name)
{
	static char buf[8][256];
	static int k;
	k = (k + 1) % 8;
	snprintf(buf[k], sizeof(buf[k]), "%s/%s", dir, name);
	return buf[k];
}

/* Appends s to dir/name (created if needed), as a logging program would. */
static inline void put(const char *name, const char *s)
{
	int fd = open(at(name), O_WRONLY | O_CREAT | O_APPEND, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, s, strlen(s)), (ssize_t)strlen(s));
	close(fd);
}

/* Truncates dir/name in place (same inode) and writes s. */
static inline void rewrite(const char *name, const char *s)
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

static inline int on_line(void *ctx, const struct floe_tail_line *l)
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

static inline void assert_line(const struct sink *s, size_t i, const char *name, uint64_t off,
			       const char *data)
{
	assert_true(i < s->n);
	assert_string_equal(s->v[i].path, at(name));
	assert_int_equal(s->v[i].off, off);
	assert_int_equal(s->v[i].len, strlen(data));
	assert_string_equal(s->v[i].data, data);
}

/* Finds the line of name at off, or fails. */
static inline const struct rec *find_line(const struct sink *s, const char *name, uint64_t off)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].off == off && strcmp(s->v[i].path, at(name)) == 0)
			return &s->v[i];
	fail_msg("no line of %s at %llu", name, (unsigned long long)off);
	return NULL;
}

/* The injected clocks (ms): tests move fake_now, nothing sleeps. The monotonic clock is
 * fake_now; the wall clock is fake_now + fake_step, so that a test steps the wall clock
 * alone, as NTP or a date set by hand does, by changing fake_step. */
static int64_t fake_now = 1000000;
static int64_t fake_step;

static inline int64_t fake_clock(void *ctx)
{
	(void)ctx;
	return fake_now + fake_step;
}

static inline int64_t fake_mono(void *ctx)
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
static inline struct floe_tail *make_with(struct floe_alloc *a, const char *pattern,
					  struct floe_tail_options o)
{
	static char pat[256];
	snprintf(pat, sizeof(pat), "%s/%s", dir, pattern);
	const char *paths[1] = {pat};
	o.paths = paths;
	o.npaths = 1;
	o.clock_ms = fake_clock;
	o.mono_ms = fake_mono;
	struct floe_tail *t = NULL;
	assert_int_equal(floe_tail_new(a, &o, &t), 0);
	assert_non_null(t);
	return t;
}

static inline struct floe_tail *make(struct floe_alloc *a, const char *pattern, size_t chunk,
				     size_t max_line, bool at_end)
{
	return make_with(a, pattern,
			 (struct floe_tail_options){.start_at_end = at_end,
						    .max_line_bytes = max_line,
						    .read_chunk = chunk});
}

static inline size_t read_all(struct floe_tail *t, struct sink *s)
{
	size_t progress = 99;
	assert_int_equal(floe_tail_read(t, SIZE_MAX, on_line, s, &progress), 0);
	return progress;
}

static inline struct floe_tail_stats stats(const struct floe_tail *t)
{
	struct floe_tail_stats st;
	floe_tail_get_stats(t, &st);
	return st;
}

/* --- tests ---------------------------------------------------------------------------- */

static inline void save(struct floe_tail *t, struct floe_buf *b)
{
	floe_buf_init(b, NULL, 1 << 20);
	assert_int_equal(floe_tail_positions(t, b), 0);
}

static inline uint64_t fnv(const char *p, size_t n)
{
	uint64_t h = 14695981039346656037ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)p[i]) * 1099511628211ull;
	return h;
}

static inline uint64_t le(const uint8_t *p, int n)
{
	uint64_t v = 0;
	for (int i = n - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* --- rotation, identity and descriptors ------------------------------------------------ */

/* A tail with every option the rotation tests need. */
static inline struct floe_tail *make2(const char *pattern, size_t max_line, size_t max_open)
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
	    .mono_ms = fake_mono,
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

static inline size_t open_fds(void)
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

static inline int on_tally(void *ctx, const struct floe_tail_line *l)
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

static inline void put_fd(int fd, const char *s)
{
	assert_int_equal(write(fd, s, strlen(s)), (ssize_t)strlen(s));
}

static inline void tally_read(struct floe_tail *t, struct tally *y)
{
	size_t progress;
	assert_int_equal(floe_tail_read(t, SIZE_MAX, on_tally, y, &progress), 0);
}

static inline void assert_once(const struct tally *y, unsigned f, unsigned from, unsigned to)
{
	for (unsigned n = from; n < to; n++)
		if (y->seen[f][n] != 1)
			fail_msg("line %u:%u seen %u times", f, n, y->seen[f][n]);
}

#endif

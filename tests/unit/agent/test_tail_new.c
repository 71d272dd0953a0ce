/* Tests of agent/input/tail: files first seen wait for their position to be durable
 * (confirm_new, floe_tail_positions_with_new), and the last line without its LF is
 * delivered only once its file is idle (partial_idle). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "agent/input/tail.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"

#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

static char dir[64];

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(p);
}

static int setup(void **state)
{
	(void)state;
	strcpy(dir, "/tmp/floe-test-tail-new-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	return nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static const char *at(const char *name)
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

/* The lines delivered, joined by '|'. */
struct sink {
	char got[512];
};

static int on_line(void *ctx, const struct floe_tail_line *l)
{
	struct sink *s = ctx;
	size_t n = strlen(s->got);
	snprintf(s->got + n, sizeof(s->got) - n, "%s%.*s", n ? "|" : "", (int)l->len, l->data);
	return 0;
}

static int64_t now_ms;
static int64_t clock_ms(void *ctx)
{
	(void)ctx;
	return now_ms;
}

static struct floe_tail *make(bool confirm_new, bool partial_idle)
{
	static char pat[256];
	snprintf(pat, sizeof(pat), "%s/*.log", dir);
	const char *paths[1] = {pat};
	struct floe_tail_options o = {
	    .paths = paths,
	    .npaths = 1,
	    .start_at_end = true,
	    .clock_ms = clock_ms,
	    .confirm_new = confirm_new,
	    .partial_idle = partial_idle,
	    .partial_line_ms = 5000,
	};
	struct floe_tail *t = NULL;
	assert_int_equal(floe_tail_new(NULL, &o, &t), 0);
	return t;
}

static void read_all(struct floe_tail *t, struct sink *s)
{
	size_t progress;
	assert_int_equal(floe_tail_read(t, SIZE_MAX, on_line, s, &progress), 0);
}

static void test_confirm_new(void **state)
{
	(void)state;
	put("a.log", "old\n");
	struct floe_tail *t = make(true, false);
	assert_int_equal(floe_tail_scan(t), 0);
	assert_int_equal(floe_tail_unsaved(t), 1);
	/* Not read before its position is confirmed, whatever is appended meanwhile. */
	put("a.log", "new\n");
	struct sink s = {{0}};
	read_all(t, &s);
	assert_string_equal(s.got, "");
	struct floe_buf base;
	floe_buf_init(&base, NULL, 1 << 20);
	assert_int_equal(floe_tail_positions_with_new(t, NULL, 0, &base), 0);
	floe_tail_confirm(t);
	assert_int_equal(floe_tail_unsaved(t), 0);
	read_all(t, &s);
	assert_string_equal(s.got, "new"); /* from the end chosen at the scan */

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

	t = make(true, false);
	assert_int_equal(floe_tail_restore(t, merged.data, merged.len), 0);
	assert_int_equal(floe_tail_scan(t), 0);
	assert_int_equal(floe_tail_unsaved(t), 0); /* both restored */
	struct sink r = {{0}};
	read_all(t, &r);
	assert_true(strcmp(r.got, "new|b1") == 0 || strcmp(r.got, "b1|new") == 0);
	floe_tail_free(t);
	floe_buf_fini(&base);
	floe_buf_fini(&merged);
}

/* The wall clock: the files' modification times are real. */
static int64_t wall_ms(void)
{
	struct timeval tv;
	gettimeofday(&tv, NULL);
	return (int64_t)tv.tv_sec * 1000 + tv.tv_usec / 1000;
}

static void test_partial_idle(void **state)
{
	(void)state;
	now_ms = wall_ms();
	put("a.log", "x\n");
	struct floe_tail *t = make(false, true);
	assert_int_equal(floe_tail_scan(t), 0);
	put("a.log", "whole\nhal");
	struct sink s = {{0}};
	read_all(t, &s);
	assert_int_equal(floe_tail_flush_partial(t, on_line, &s), 0);
	assert_string_equal(s.got, "whole"); /* the file was just written: held */
	now_ms += 4000;
	read_all(t, &s);
	assert_string_equal(s.got, "whole");
	put("a.log", "f\nqua");
	now_ms = wall_ms(); /* just after the last write */
	read_all(t, &s);
	assert_int_equal(floe_tail_flush_partial(t, on_line, &s), 0);
	assert_string_equal(s.got, "whole|half");
	now_ms += 5000; /* idle for partial_line_ms: delivered */
	read_all(t, &s);
	assert_string_equal(s.got, "whole|half|qua");
	floe_tail_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_confirm_new, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_partial_idle, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Tests of agent/input/tail on a wall clock that steps (a device without a real-time clock
 * when NTP arrives, an RTC that ran ahead, a date set by hand): rotate_wait and
 * forget_after are intervals on the monotonic clock, and the time a file went, kept in
 * the positions blob as a wall time, is never aged by a step. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "tail_lib.h"

#define YEAR ((int64_t)365 * 24 * 3600 * 1000)
#define DAY ((int64_t)24 * 3600 * 1000)

/* The wall time a blob keeps for its one gone entry (the rotated file, still under the
 * name it was last seen by: app.log); fails unless there is exactly one. */
static uint64_t gone_of(const struct floe_buf *b)
{
	size_t off = 12, plen, n = 0;
	uint64_t gone = 0;
	for (uint32_t i = 0; i < (uint32_t)le(b->data + 8, 4); i++) {
		plen = (size_t)le(b->data + off, 4);
		uint64_t g = le(b->data + off + 4 + plen + 52, 8);
		if (g) {
			gone = g;
			n++;
		}
		off += 4 + plen + 60;
	}
	assert_int_equal(off, b->len);
	assert_int_equal(n, 1);
	return gone;
}

/* app.log renamed to app.log.1 (out of the globs) while the writer still appends to it,
 * a new app.log created, both followed: the state every rotation test starts from. */
static struct floe_tail *rotated(int *w, struct tally *y)
{
	*w = open(at("app.log"), O_WRONLY | O_CREAT | O_APPEND, 0644);
	assert_true(*w >= 0);
	struct floe_tail *t = make2("app.log", 0, 0);
	assert_int_equal(floe_tail_scan(t), 0);
	put_fd(*w, "0:0\n0:1\n");
	tally_read(t, y);
	assert_int_equal(rename(at("app.log"), at("app.log.1")), 0);
	put_fd(*w, "0:2\n");
	put("app.log", "1:0\n");
	assert_int_equal(floe_tail_scan(t), 0);
	tally_read(t, y);
	assert_int_equal(stats(t).files_open, 2);
	return t;
}

/* The clock steps back a year during a rotation: the rotated file is still closed after
 * rotate_wait (5 s) of monotonic time, its lines all read, not held open for a year. */
static void test_step_back_during_rotation(void **state)
{
	fake_step = 0;
	struct tally *y = calloc(1, sizeof(*y));
	int w;
	struct floe_tail *t = rotated(&w, y);
	fake_step = -YEAR;
	fake_now += 3000;
	put_fd(w, "0:3\n");
	tally_read(t, y);
	assert_int_equal(stats(t).files_open, 2);
	fake_now += 2000;
	put_fd(w, "0:4\n");
	tally_read(t, y);
	assert_int_equal(stats(t).files_open, 1);
	assert_int_equal(stats(t).rotated_closed, 1);
	close(w);
	assert_once(y, 0, 0, 5);
	assert_once(y, 1, 0, 1);
	assert_int_equal(y->bad, 0);
	free(y);
	floe_tail_free(t);
	fake_step = 0;
}

/* The same with the rotated file deleted (its blocks are freed only once closed). */
static void test_step_back_deleted(void **state)
{
	fake_step = 0;
	struct tally *y = calloc(1, sizeof(*y));
	int w;
	struct floe_tail *t = rotated(&w, y);
	assert_int_equal(unlink(at("app.log.1")), 0);
	put_fd(w, "0:3\n");
	fake_step = -YEAR;
	assert_int_equal(floe_tail_scan(t), 0);
	tally_read(t, y);
	fake_now += 5000;
	tally_read(t, y);
	assert_int_equal(stats(t).files_open, 1);
	close(w);
	assert_once(y, 0, 0, 4);
	free(y);
	floe_tail_free(t);
	fake_step = 0;
}

/* The clock steps forward a year during a rotation: the rotated file is not closed at
 * once; what its writer appends within rotate_wait is read. */
static void test_step_forward_during_rotation(void **state)
{
	fake_step = 0;
	struct tally *y = calloc(1, sizeof(*y));
	int w;
	struct floe_tail *t = rotated(&w, y);
	fake_step = YEAR;
	tally_read(t, y);
	assert_int_equal(stats(t).files_open, 2);
	fake_now += 4000;
	put_fd(w, "0:3\n"); /* the writer has not reopened yet */
	tally_read(t, y);
	assert_int_equal(stats(t).files_open, 2);
	fake_now += 1000;
	put_fd(w, "0:4\n");
	tally_read(t, y);
	assert_int_equal(stats(t).files_open, 1);
	close(w);
	assert_once(y, 0, 0, 5);
	assert_int_equal(y->bad, 0);
	free(y);
	floe_tail_free(t);
	fake_step = 0;
}

/* A rotated file closed and gone from the globs keeps its position for forget_after of
 * monotonic time, whichever way the clock steps meanwhile. */
static void test_forget_after_steps(void **state)
{
	fake_step = 0;
	struct tally *y = calloc(1, sizeof(*y));
	int w;
	struct floe_tail *t = rotated(&w, y);
	close(w);
	fake_now += 5000;
	tally_read(t, y);
	assert_int_equal(stats(t).files_open, 1); /* app.log.1: closed, out of the globs */
	assert_int_equal(floe_tail_scan(t), 0);
	struct floe_buf b;
	save(t, &b);
	assert_int_equal(b.data[8], 2);
	floe_buf_fini(&b);
	fake_step = YEAR; /* a year forward: not forgotten at the next scan */
	fake_now += 1000;
	assert_int_equal(floe_tail_scan(t), 0);
	save(t, &b);
	assert_int_equal(b.data[8], 2);
	floe_buf_fini(&b);
	fake_step = -YEAR; /* and a year back: not kept for a year */
	fake_now += DAY;
	assert_int_equal(floe_tail_scan(t), 0);
	save(t, &b);
	assert_int_equal(b.data[8], 1);
	floe_buf_fini(&b);
	free(y);
	floe_tail_free(t);
	fake_step = 0;
}

/* A gone file, saved: the blob holds the wall clock now less its age, so that a step
 * while it was gone does not move it; read back, a time in the future is taken as now. */
static void test_gone_since_saved_and_restored(void **state)
{
	fake_step = 10 * YEAR; /* ten years after 1970, to step back from */
	struct tally *y = calloc(1, sizeof(*y));
	int w;
	struct floe_tail *t = rotated(&w, y);
	close(w);
	fake_now += 5000;
	tally_read(t, y); /* the rotated file closed: gone at fake_now */
	int64_t went = fake_now;
	fake_step = 9 * YEAR; /* stepped back a year after it went */
	fake_now += DAY / 2;
	struct floe_buf b;
	save(t, &b);
	assert_int_equal(gone_of(&b), (uint64_t)(went + 9 * YEAR));
	floe_tail_free(t);
	/* A restart on the same clock: forgotten after the rest of forget_after. */
	t = make2("app.log", 0, 0);
	assert_int_equal(floe_tail_restore(t, b.data, b.len), 0);
	assert_int_equal(floe_tail_scan(t), 0);
	tally_read(t, y);
	floe_buf_fini(&b);
	save(t, &b);
	assert_int_equal(b.data[8], 2);
	floe_buf_fini(&b);
	fake_now += DAY / 2;
	assert_int_equal(floe_tail_scan(t), 0);
	save(t, &b);
	assert_int_equal(b.data[8], 1);
	floe_buf_fini(&b);
	floe_tail_free(t);
	free(y);
	fake_step = 0;
}

/* Saved while the clock ran a year ahead, restored once it is right: the gone time is in
 * the future, taken as now (kept for forget_after, not for a year and a day). */
static void test_gone_since_in_future(void **state)
{
	fake_step = YEAR;
	struct tally *y = calloc(1, sizeof(*y));
	int w;
	struct floe_tail *t = rotated(&w, y);
	close(w);
	fake_now += 5000;
	tally_read(t, y);
	struct floe_buf b;
	save(t, &b);
	assert_int_equal(gone_of(&b), (uint64_t)(fake_now + YEAR));
	floe_tail_free(t);
	fake_step = 0;
	t = make2("app.log", 0, 0);
	assert_int_equal(floe_tail_restore(t, b.data, b.len), 0);
	floe_buf_fini(&b);
	assert_int_equal(floe_tail_scan(t), 0);
	/* Saved again at once: its age is none, not negative. */
	save(t, &b);
	assert_int_equal(gone_of(&b), (uint64_t)fake_now);
	floe_buf_fini(&b);
	fake_now += DAY - 1;
	assert_int_equal(floe_tail_scan(t), 0);
	save(t, &b);
	assert_int_equal(b.data[8], 2);
	floe_buf_fini(&b);
	fake_now += 1;
	assert_int_equal(floe_tail_scan(t), 0);
	save(t, &b);
	assert_int_equal(b.data[8], 1);
	floe_buf_fini(&b);
	floe_tail_free(t);
	free(y);
}

/* The wall clock, real here: the files' modification times are. */
static int64_t real_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A last line without its LF in a file modified "in the future" (the clock stepped back a
 * year after the write): delivered once the file has stayed as it is for
 * partial_line_ms of monotonic time, not a year later; held while it still changes. */
static void test_partial_line_after_step_back(void **state)
{
	int64_t was = fake_now;
	fake_now = real_ms();
	fake_step = 0;
	put("a.log", "x\n");
	struct floe_tail *t =
	    make_with(NULL, "*.log",
		      (struct floe_tail_options){
			  .start_at_end = true, .partial_idle = true, .partial_line_ms = 5000});
	assert_int_equal(floe_tail_scan(t), 0);
	put("a.log", "whole\nhal");
	fake_step = -YEAR;
	struct sink s = {0};
	read_all(t, &s);
	assert_int_equal(s.n, 1);
	assert_line(&s, 0, "a.log", 2, "whole");
	fake_now += 4000;
	read_all(t, &s);
	assert_int_equal(s.n, 1);
	put("a.log", "f"); /* still being written: the wait starts again */
	read_all(t, &s);
	fake_now += 4000;
	read_all(t, &s);
	assert_int_equal(s.n, 1);
	fake_now += 1000;
	read_all(t, &s);
	assert_int_equal(s.n, 2);
	assert_line(&s, 1, "a.log", 8, "half");
	floe_tail_free(t);
	fake_now = was;
	fake_step = 0;
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	const struct CMUnitTest tests[] = {
	    T(test_step_back_during_rotation),	   T(test_step_back_deleted),
	    T(test_step_forward_during_rotation),  T(test_forget_after_steps),
	    T(test_gone_since_saved_and_restored), T(test_gone_since_in_future),
	    T(test_partial_line_after_step_back),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

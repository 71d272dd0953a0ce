/* Tests of platform/loop: timers on an injected clock (deadline order, disarm, re-arm, a
 * thousand random ones against a sorted reference, a callback re-arming into the past),
 * descriptors (read events, pause and resume, hang-ups while paused, one callback removing
 * another's pending event, kicks), and wakes and stops from another thread. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "platform/loop.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int64_t fake_now;
static int64_t fake_clock(void *arg)
{
	return fake_now;
}

static struct floe_loop *fake_loop(void)
{
	struct floe_loop_opts o = {.clock_ms = fake_clock};
	struct floe_loop *l = NULL;
	assert_int_equal(floe_loop_new(&o, &l), 0);
	fake_now = 1000;
	return l;
}

/* Timers record the order they fire in. */
static int fired[2048], nfired;
static void record(struct floe_timer *t)
{
	fired[nfired++] = (int)(intptr_t)t->arg;
}

static void test_timer_order(void **state)
{
	struct floe_loop *l = fake_loop();
	struct floe_timer t[4];
	memset(t, 0, sizeof(t));
	int64_t when[4] = {1300, 1100, 1200, 1100};
	for (int i = 0; i < 4; i++) {
		t[i].cb = record;
		t[i].arg = (void *)(intptr_t)i;
		floe_loop_timer_arm(l, &t[i], when[i]);
	}
	nfired = 0;
	assert_int_equal(floe_loop_run_once(l, 0), 0);
	fake_now = 1150;
	assert_int_equal(floe_loop_run_once(l, 0), 2);
	assert_int_equal(nfired, 2);
	assert_true((fired[0] == 1 && fired[1] == 3) || (fired[0] == 3 && fired[1] == 1));
	assert_false(floe_loop_timer_armed(&t[1]));
	assert_true(floe_loop_timer_armed(&t[0]));
	/* Re-arming moves; disarming forgets. */
	floe_loop_timer_arm(l, &t[0], 1160);
	floe_loop_timer_disarm(l, &t[2]);
	floe_loop_timer_disarm(l, &t[2]);
	fake_now = 5000;
	assert_int_equal(floe_loop_run_once(l, 0), 1);
	assert_int_equal(nfired, 3);
	assert_int_equal(fired[2], 0);
	floe_loop_free(l);
}

static uint64_t rng = 88172645463325252ull;
static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static int by_deadline(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

/* A thousand timers armed, re-armed and disarmed at random fire exactly once each, in
 * deadline order. */
static void test_timer_heap_random(void **state)
{
	enum { N = 1000 };
	static struct floe_timer t[N];
	static int64_t when[N], expect[N];
	struct floe_loop *l = fake_loop();
	memset(t, 0, sizeof(t));
	for (int round = 0; round < 5; round++) {
		for (int i = 0; i < N; i++) {
			t[i].cb = record;
			t[i].arg = (void *)(intptr_t)i;
			when[i] = 2000 + (int64_t)(rnd() % 500);
			floe_loop_timer_arm(l, &t[i], when[i]);
		}
		for (int k = 0; k < N; k++) {
			int i = (int)(rnd() % N);
			if (rnd() % 2) {
				floe_loop_timer_disarm(l, &t[i]);
				when[i] = -1;
			} else {
				when[i] = 2000 + (int64_t)(rnd() % 500);
				floe_loop_timer_arm(l, &t[i], when[i]);
			}
		}
		int n = 0;
		for (int i = 0; i < N; i++)
			if (when[i] >= 0)
				expect[n++] = when[i];
		qsort(expect, (size_t)n, sizeof(expect[0]), by_deadline);
		nfired = 0;
		fake_now = 3000;
		while (floe_loop_run_once(l, 0) > 0)
			;
		assert_int_equal(nfired, n);
		for (int i = 0; i < n; i++) {
			assert_int_equal(when[fired[i]], expect[i]);
			when[fired[i]] = -2; /* each once */
		}
		fake_now = 1000;
	}
	floe_loop_free(l);
}

static int rearms;
static void rearm_past(struct floe_timer *t)
{
	rearms++;
	floe_loop_timer_arm(t->arg, t, 0);
}

/* A timer that re-arms itself into the past does not hold a round forever. */
static void test_timer_rearm_past(void **state)
{
	struct floe_loop *l = fake_loop();
	struct floe_timer t = {.cb = rearm_past, .arg = l};
	floe_loop_timer_arm(l, &t, 10);
	rearms = 0;
	assert_int_equal(floe_loop_run_once(l, 0), 1);
	assert_int_equal(rearms, 1);
	assert_int_equal(floe_loop_run_once(l, 0), 1);
	floe_loop_timer_disarm(l, &t);
	floe_loop_free(l);
}

/* With the real clock, a round waits for the nearest timer and no longer. */
static void test_timer_real_clock(void **state)
{
	struct floe_loop *l = NULL;
	assert_int_equal(floe_loop_new(NULL, &l), 0);
	struct floe_timer t = {.cb = record, .arg = (void *)(intptr_t)7};
	nfired = 0;
	floe_loop_timer_arm(l, &t, floe_loop_now(l) + 20);
	int n = 0;
	for (int i = 0; i < 100 && n == 0; i++)
		n = floe_loop_run_once(l, -1);
	assert_int_equal(n, 1);
	assert_int_equal(nfired, 1);
	assert_int_equal(fired[0], 7);
	floe_loop_free(l);
}

struct pipe_io {
	struct floe_io io;
	int rd, wr;
	int calls;
	unsigned last;
	struct floe_io *victim; /* deleted by this one's callback */
	struct floe_loop *loop;
	bool drain;
};

static void pipe_cb(struct floe_io *io, unsigned events)
{
	struct pipe_io *p = io->arg;
	p->calls++;
	p->last = events;
	if (p->victim) {
		floe_loop_io_del(p->loop, p->victim);
		p->victim = NULL;
	}
	char b[64];
	if (p->drain)
		while (read(p->rd, b, sizeof(b)) > 0)
			;
}

static void pipe_open(struct pipe_io *p, struct floe_loop *l)
{
	memset(p, 0, sizeof(*p));
	int fds[2];
	assert_int_equal(pipe2(fds, O_NONBLOCK | O_CLOEXEC), 0);
	p->rd = fds[0];
	p->wr = fds[1];
	p->io.cb = pipe_cb;
	p->io.arg = p;
	p->loop = l;
	p->drain = true;
}

static void test_io_pause_resume(void **state)
{
	struct floe_loop *l = fake_loop();
	struct pipe_io p;
	pipe_open(&p, l);
	assert_int_equal(floe_loop_io_add(l, &p.io, p.rd, FLOE_IO_READ), 0);
	assert_int_equal(floe_loop_io_add(l, &p.io, p.rd, FLOE_IO_READ), -EINVAL);
	assert_int_equal(floe_loop_run_once(l, 0), 0);
	assert_int_equal(write(p.wr, "x", 1), 1);
	assert_int_equal(floe_loop_run_once(l, 0), 1);
	assert_int_equal(p.calls, 1);
	assert_true(p.last & FLOE_IO_READ);
	/* Paused: data waits, no call. */
	assert_int_equal(floe_loop_io_set(l, &p.io, 0), 0);
	assert_int_equal(floe_loop_io_events(&p.io), 0);
	assert_int_equal(write(p.wr, "y", 1), 1);
	assert_int_equal(floe_loop_run_once(l, 0), 0);
	/* A hang-up while paused does not call either (epoll would report it regardless
	 * of the mask, every round). */
	close(p.wr);
	for (int i = 0; i < 3; i++)
		assert_int_equal(floe_loop_run_once(l, 0), 0);
	assert_int_equal(p.calls, 1);
	/* Resumed: the data and the hang-up arrive. */
	assert_int_equal(floe_loop_io_set(l, &p.io, FLOE_IO_READ), 0);
	assert_int_equal(floe_loop_run_once(l, 0), 1);
	assert_int_equal(p.calls, 2);
	assert_true(p.last & FLOE_IO_HUP);
	floe_loop_io_del(l, &p.io);
	floe_loop_io_del(l, &p.io);
	close(p.rd);
	floe_loop_free(l);
}

/* An io whose event is pending in the same round is not called after another callback
 * removed it (it may have been freed). */
static void test_io_del_pending(void **state)
{
	struct floe_loop *l = fake_loop();
	struct pipe_io a, b;
	pipe_open(&a, l);
	pipe_open(&b, l);
	a.victim = &b.io;
	b.victim = &a.io;
	assert_int_equal(floe_loop_io_add(l, &a.io, a.rd, FLOE_IO_READ), 0);
	assert_int_equal(floe_loop_io_add(l, &b.io, b.rd, FLOE_IO_READ), 0);
	assert_int_equal(write(a.wr, "x", 1), 1);
	assert_int_equal(write(b.wr, "x", 1), 1);
	assert_int_equal(floe_loop_run_once(l, 0), 1);
	assert_int_equal(a.calls + b.calls, 1);
	floe_loop_io_del(l, &a.io);
	floe_loop_io_del(l, &b.io);
	close(a.rd);
	close(a.wr);
	close(b.rd);
	close(b.wr);
	floe_loop_free(l);
}

static void test_io_kick(void **state)
{
	struct floe_loop *l = fake_loop();
	struct pipe_io p;
	pipe_open(&p, l);
	assert_int_equal(floe_loop_io_add(l, &p.io, p.rd, FLOE_IO_READ), 0);
	floe_loop_io_kick(l, &p.io);
	floe_loop_io_kick(l, &p.io);
	/* A kicked io makes the round not wait: -1 would block forever otherwise. */
	assert_int_equal(floe_loop_run_once(l, -1), 1);
	assert_int_equal(p.calls, 1);
	assert_int_equal(p.last, FLOE_IO_READ);
	assert_int_equal(floe_loop_run_once(l, 0), 0);
	/* A removed io forgets its kick. */
	floe_loop_io_kick(l, &p.io);
	floe_loop_io_del(l, &p.io);
	assert_int_equal(floe_loop_run_once(l, 0), 0);
	assert_int_equal(p.calls, 1);
	close(p.rd);
	close(p.wr);
	floe_loop_free(l);
}

static int wakes;
static void on_wake(void *arg)
{
	wakes++;
}

static void *waker(void *arg)
{
	floe_loop_wake(arg);
	return NULL;
}

static void *stopper(void *arg)
{
	floe_loop_stop(arg);
	return NULL;
}

/* Another thread wakes the loop out of an endless wait, and stops it. */
static void test_wake_and_stop(void **state)
{
	char buf[32];
	struct floe_loop_opts o = {.on_wake = on_wake, .buffer = buf, .buffer_len = sizeof(buf)};
	struct floe_loop *l = NULL;
	assert_int_equal(floe_loop_new(&o, &l), 0);
	size_t n = 0;
	assert_ptr_equal(floe_loop_buffer(l, &n), buf);
	assert_int_equal(n, sizeof(buf));
	wakes = 0;
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, waker, l), 0);
	while (wakes == 0)
		assert_true(floe_loop_run_once(l, -1) >= 0);
	pthread_join(th, NULL);
	assert_int_equal(wakes, 1);
	/* Two wakes before a round make one call. */
	floe_loop_wake(l);
	floe_loop_wake(l);
	assert_int_equal(floe_loop_run_once(l, 0), 1);
	assert_int_equal(wakes, 2);
	assert_false(floe_loop_stopping(l));
	assert_int_equal(pthread_create(&th, NULL, stopper, l), 0);
	assert_int_equal(floe_loop_run(l), 0);
	pthread_join(th, NULL);
	assert_true(floe_loop_stopping(l));
	floe_loop_free(l);
	floe_loop_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_timer_order),	     cmocka_unit_test(test_timer_heap_random),
	    cmocka_unit_test(test_timer_rearm_past), cmocka_unit_test(test_timer_real_clock),
	    cmocka_unit_test(test_io_pause_resume),  cmocka_unit_test(test_io_del_pending),
	    cmocka_unit_test(test_io_kick),	     cmocka_unit_test(test_wake_and_stop),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

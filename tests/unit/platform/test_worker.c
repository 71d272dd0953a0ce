/* Worker pool: every task runs exactly once, whether a thread or its waiter takes it;
 * a full queue refuses; tasks run concurrently with the submitter; signals stay with
 * the main thread; a timed wait, and the heartbeat a task attaches. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "platform/beat.h"
#include "platform/worker.h"

struct cell {
	int runs;
	pthread_t by;
	unsigned spin;
	unsigned sum; /* the spin's work, kept so that it is not optimised away */
};

static void run_cell(void *arg)
{
	struct cell *c = arg;
	for (unsigned i = 0; i < c->spin; i++)
		c->sum += i ^ c->sum;
	c->runs++;
	c->by = pthread_self();
}

static void test_each_task_once(void **state)
{
	(void)state;
	struct floe_worker *w = NULL;
	assert_int_equal(floe_worker_new(2, &w), 0);
	enum { N = 40 };
	struct cell cells[N];
	void *h[N];
	memset(cells, 0, sizeof(cells));
	for (int round = 0; round < 50; round++) {
		for (int i = 0; i < N; i++) {
			cells[i].spin = (unsigned)(i % 5) * 20000;
			assert_int_equal(floe_worker_submit(w, run_cell, &cells[i], &h[i]), 0);
		}
		/* Waited in reverse: the last ones are often still queued and run here. */
		for (int i = N - 1; i >= 0; i--)
			floe_worker_wait(w, h[i]);
		for (int i = 0; i < N; i++)
			assert_int_equal(cells[i].runs, round + 1);
	}
	unsigned long by_waiters = 0;
	assert_int_equal(floe_worker_ran(w, &by_waiters), 50 * N);
	assert_true(by_waiters > 0);
	floe_worker_free(w);
}

static void test_full_queue(void **state)
{
	(void)state;
	struct floe_worker *w = NULL;
	assert_int_equal(floe_worker_new(1, &w), 0);
	struct cell cells[80];
	void *h[80];
	memset(cells, 0, sizeof(cells));
	int n = 0;
	while (n < 80 && floe_worker_submit(w, run_cell, &cells[n], &h[n]) == 0)
		n++;
	assert_int_equal(n, 64); /* the table's size: the 65th is refused */
	struct cell extra = {0};
	void *hx;
	assert_int_equal(floe_worker_submit(w, run_cell, &extra, &hx), -EBUSY);
	for (int i = 0; i < n; i++)
		floe_worker_wait(w, h[i]);
	for (int i = 0; i < n; i++)
		assert_int_equal(cells[i].runs, 1);
	assert_int_equal(floe_worker_submit(w, run_cell, &extra, &hx), 0);
	floe_worker_wait(w, hx);
	assert_int_equal(extra.runs, 1);
	floe_worker_free(w);
}

/* A task that says when it has started, then waits to be let go. */
struct gate {
	atomic_int started, go;
	pthread_t by;
};

static void run_gate(void *arg)
{
	struct gate *g = arg;
	g->by = pthread_self();
	atomic_store(&g->started, 1);
	while (!atomic_load(&g->go))
		sched_yield();
}

/* A task runs on the pool's thread while the submitter goes on: the submitter sees it
 * start, lets it finish, and waiting then returns. */
static void test_runs_elsewhere(void **state)
{
	(void)state;
	struct floe_worker *w = NULL;
	assert_int_equal(floe_worker_new(1, &w), 0);
	struct gate g;
	atomic_init(&g.started, 0);
	atomic_init(&g.go, 0);
	void *h;
	assert_int_equal(floe_worker_submit(w, run_gate, &g, &h), 0);
	/* The task can only finish once this thread lets it, so it runs elsewhere. */
	while (!atomic_load(&g.started))
		sched_yield();
	assert_false(pthread_equal(g.by, pthread_self()));
	atomic_store(&g.go, 1);
	floe_worker_wait(w, h);
	floe_worker_free(w);
}

/* A timed wait returns -ETIMEDOUT while the task runs (the handle still good, waited for
 * again), and 0 once it is done; a task nobody took stays for the pool. The heartbeat the
 * task attaches is read from here while it runs (platform/beat.h). */
struct beating {
	struct gate g;
	struct floe_beat *beat;
};

static void run_beating(void *arg)
{
	struct beating *b = arg;
	struct floe_beat *prev = floe_beat_attach(b->beat);
	floe_beat_what("a test task");
	floe_beat("waiting for the test");
	run_gate(&b->g);
	floe_beat_attach(prev);
	floe_beat("not counted: detached");
}

static void test_wait_ms(void **state)
{
	(void)state;
	struct floe_worker *w = NULL;
	assert_int_equal(floe_worker_new(1, &w), 0);
	struct floe_beat beat = {0};
	struct beating b = {.beat = &beat};
	atomic_init(&b.g.started, 0);
	atomic_init(&b.g.go, 0);
	void *h;
	assert_int_equal(floe_worker_submit(w, run_beating, &b, &h), 0);
	while (!atomic_load(&b.g.started))
		sched_yield();
	assert_int_equal(floe_worker_wait_ms(w, h, 20), -ETIMEDOUT);
	assert_int_equal(floe_worker_wait_ms(w, h, 0), -ETIMEDOUT);
	assert_int_equal(floe_beat_count(&beat), 2);
	assert_string_equal(floe_beat_doing(&beat), "waiting for the test");
	assert_string_equal(floe_beat_on(&beat), "a test task");
	atomic_store(&b.g.go, 1);
	while (floe_worker_wait_ms(w, h, 1000) == -ETIMEDOUT)
		;
	assert_int_equal(floe_beat_count(&beat), 2);
	/* No thread free to take it: the timed wait leaves it queued for the pool. */
	struct cell c = {0};
	struct gate g;
	atomic_init(&g.started, 0);
	atomic_init(&g.go, 0);
	void *hg, *hc;
	assert_int_equal(floe_worker_submit(w, run_gate, &g, &hg), 0);
	while (!atomic_load(&g.started))
		sched_yield();
	assert_int_equal(floe_worker_submit(w, run_cell, &c, &hc), 0);
	assert_int_equal(floe_worker_wait_ms(w, hc, 0), -ETIMEDOUT);
	assert_int_equal(c.runs, 0);
	atomic_store(&g.go, 1);
	while (floe_worker_wait_ms(w, hc, 1000) == -ETIMEDOUT)
		;
	assert_int_equal(c.runs, 1);
	assert_false(pthread_equal(c.by, pthread_self()));
	floe_worker_wait(w, hg);
	floe_worker_free(w);
	/* A thread with no heartbeat beats for nothing. */
	floe_beat("nothing");
	floe_beat_what("nothing");
}

static volatile sig_atomic_t got;
static pthread_t handler_thread;

static void on_usr1(int sig)
{
	(void)sig;
	got = 1;
	handler_thread = pthread_self();
}

static void test_signals_stay_with_main(void **state)
{
	(void)state;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	struct floe_worker *w = NULL;
	assert_int_equal(floe_worker_new(4, &w), 0);
	/* A process-directed signal may go to any thread that does not block it. */
	for (int i = 0; i < 20; i++) {
		got = 0;
		kill(getpid(), SIGUSR1);
		while (!got)
			;
		assert_true(pthread_equal(handler_thread, pthread_self()));
	}
	floe_worker_free(w);
	signal(SIGUSR1, SIG_DFL);
}

static void test_bad_args(void **state)
{
	(void)state;
	struct floe_worker *w = NULL;
	assert_int_equal(floe_worker_new(0, &w), -EINVAL);
	assert_int_equal(floe_worker_new(17, &w), -EINVAL);
	floe_worker_free(NULL);
	assert_true(floe_worker_cpus() >= 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_each_task_once),
	    cmocka_unit_test(test_full_queue),
	    cmocka_unit_test(test_runs_elsewhere),
	    cmocka_unit_test(test_wait_ms),
	    cmocka_unit_test(test_signals_stay_with_main),
	    cmocka_unit_test(test_bad_args),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

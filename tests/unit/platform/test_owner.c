/* Thread roles: the process's own thread is the main one; a worker pool's thread is a
 * worker, and a task that takes a role has it while it runs and gives it back; a debug
 * build aborts when a function is entered on another thread than its owner's (checked in
 * a forked child), a release build (NDEBUG) compiles the check out. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "platform/owner.h"
#include "platform/worker.h"

static void test_main_by_default(void **state)
{
	(void)state;
	assert_int_equal(floe_owner_role(), FLOE_ROLE_MAIN);
	FLOE_OWNER(FLOE_ROLE_MAIN);
	FLOE_OWNER(FLOE_ROLE_MAIN | FLOE_ROLE_COMMITTER);
	unsigned prev = floe_owner_enter(FLOE_ROLE_MAIN | FLOE_ROLE_SYSLOG_RX);
	FLOE_OWNER(FLOE_ROLE_SYSLOG_RX);
	assert_int_equal(floe_owner_role(), FLOE_ROLE_MAIN | FLOE_ROLE_SYSLOG_RX);
	floe_owner_leave(prev);
	assert_int_equal(floe_owner_role(), FLOE_ROLE_MAIN);
}

struct seen {
	unsigned before, during, after;
};

static void plain_task(void *arg)
{
	((struct seen *)arg)->before = floe_owner_role();
}

static void committer_task(void *arg)
{
	struct seen *s = arg;
	unsigned prev = floe_owner_enter(FLOE_ROLE_COMMITTER);
	s->during = floe_owner_role();
	floe_owner_leave(prev);
	s->after = floe_owner_role();
}

/* A task runs on the pool's thread, or on its waiter when that finds it still queued:
 * either way the role it takes is its own while it runs and is given back after. */
static void test_worker_roles(void **state)
{
	(void)state;
	struct floe_worker *w = NULL;
	assert_int_equal(floe_worker_new(1, &w), 0);
	struct seen s = {0};
	void *h1, *h2;
	assert_int_equal(floe_worker_submit(w, plain_task, &s, &h1), 0);
	assert_int_equal(floe_worker_submit(w, committer_task, &s, &h2), 0);
	floe_worker_wait(w, h1);
	floe_worker_wait(w, h2);
	floe_worker_free(w);
	/* Each ran on the thread or, taken first by its waiter, here. */
	assert_true(s.before == FLOE_ROLE_WORKER || s.before == FLOE_ROLE_MAIN);
	assert_int_equal(s.during, FLOE_ROLE_COMMITTER);
	assert_true(s.after == FLOE_ROLE_WORKER || s.after == FLOE_ROLE_MAIN);
	assert_int_equal(floe_owner_role(), FLOE_ROLE_MAIN);
}

static void test_wrong_thread(void **state)
{
	(void)state;
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		/* The committer's state entered from the main thread. */
		FLOE_OWNER(FLOE_ROLE_COMMITTER);
		_exit(0);
	}
	int st = 0;
	assert_int_equal(waitpid(pid, &st, 0), pid);
#ifdef NDEBUG
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
#else
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT);
#endif
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_main_by_default),
	    cmocka_unit_test(test_worker_roles),
	    cmocka_unit_test(test_wrong_thread),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

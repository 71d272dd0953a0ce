/* Unit tests for platform/dl: a library loaded once whichever threads ask first (the
 * loader runs once, every caller sees what it wrote), a failure kept with its reason and
 * not retried, and floe_dl_load's reasons for a missing library and a missing symbol. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "platform/dl.h"

static int runs;     /* how many times a loader ran */
static int *table;   /* what the loader fills: a plain pointer, as a function table is */
static int value = 42;

static int load_ok(char *err, size_t cap)
{
	(void)err;
	(void)cap;
	__atomic_add_fetch(&runs, 1, __ATOMIC_RELAXED);
	table = &value;
	return 0;
}

static int load_fail(char *err, size_t cap)
{
	__atomic_add_fetch(&runs, 1, __ATOMIC_RELAXED);
	snprintf(err, cap, "libnothing.so.0 is not there");
	return -ENOENT;
}

static struct floe_dl_once ok_lib = FLOE_DL_ONCE_INIT;
static pthread_barrier_t start;

/* A first caller racing the others: whoever loads, each must see the table filled. */
static void *first_call(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&start);
	if (floe_dl_once(&ok_lib, load_ok, NULL, 0) != 0 || !floe_dl_ready(&ok_lib))
		return (void *)1;
	return *table == 42 ? NULL : (void *)1;
}

static void test_once_across_threads(void **state)
{
	(void)state;
	enum { N = 8 };
	pthread_t th[N];
	runs = 0;
	assert_false(floe_dl_ready(&ok_lib));
	assert_int_equal(pthread_barrier_init(&start, NULL, N), 0);
	for (int i = 0; i < N; i++)
		assert_int_equal(pthread_create(&th[i], NULL, first_call, NULL), 0);
	for (int i = 0; i < N; i++) {
		void *r;
		assert_int_equal(pthread_join(th[i], &r), 0);
		assert_null(r);
	}
	pthread_barrier_destroy(&start);
	assert_int_equal(runs, 1);
	assert_int_equal(floe_dl_once(&ok_lib, load_ok, NULL, 0), 0);
	assert_int_equal(runs, 1);
}

static void test_failure_kept(void **state)
{
	(void)state;
	static struct floe_dl_once bad = FLOE_DL_ONCE_INIT;
	char err[64] = "";
	runs = 0;
	assert_int_equal(floe_dl_once(&bad, load_fail, err, sizeof(err)), -ENOENT);
	assert_string_equal(err, "libnothing.so.0 is not there");
	assert_false(floe_dl_ready(&bad));
	/* Not tried again, and the reason is still given (cut to the caller's room). */
	char small[8] = "";
	assert_int_equal(floe_dl_once(&bad, load_fail, small, sizeof(small)), -ENOENT);
	assert_string_equal(small, "libnoth");
	assert_int_equal(floe_dl_once(&bad, load_fail, NULL, 0), -ENOENT);
	assert_int_equal(runs, 1);
}

static void test_load_reasons(void **state)
{
	(void)state;
	char err[256] = "";
	void *slot = &err;
	const struct floe_dl_sym none[] = {{"x", &slot}};
	assert_int_equal(floe_dl_load("libfloe-none.so.9", none, 1, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "cannot load libfloe-none.so.9"));
	/* libc is always there; a name it lacks zeroes the slots already filled. */
	void *a = NULL, *b = NULL;
	const struct floe_dl_sym syms[] = {{"strlen", &a}, {"floe_no_such_function", &b}};
	assert_int_equal(floe_dl_load("libc.so.6", syms, 2, err, sizeof(err)), -ENOENT);
	assert_string_equal(err, "libc.so.6 has no floe_no_such_function");
	assert_null(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_once_across_threads),
	    cmocka_unit_test(test_failure_kept),
	    cmocka_unit_test(test_load_reasons),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

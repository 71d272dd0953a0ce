/* Tests of agent/run/progress: the progress line of a run --once on a terminal, from
 * given counts and times (no clock). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "agent/run/progress.h"

#include <string.h>

#define MiB (1024ull * 1024)

static void expect(uint64_t done, uint64_t total, uint64_t lines, int64_t us, const char *want)
{
	char buf[256];
	floe_progress_format(buf, sizeof(buf), done, total, lines, us);
	assert_string_equal(buf, want);
}

static void test_lines(void **state)
{
	(void)state;
	/* 100 MiB of 300 in 2 s: 50 MiB/s, 200 MiB left, 4 s (rounded up: 5). */
	expect(100 * MiB, 300 * MiB, 1234567, 2000000,
	       "progress: 100.0 MiB of 300.0 MiB (33%), 1.2 M lines, 50.0 MiB/s, 0:05 left");
	/* Nothing left: no time left shown. */
	expect(512, 512, 3, 1000000, "progress: 512 B of 512 B (100%), 3 lines, 512 B/s");
	/* Hours. */
	expect(1 * MiB, 1 * MiB + 7200ull * MiB, 45000, 1000000,
	       "progress: 1.0 MiB of 7.0 GiB (0%), 45.0 k lines, 1.0 MiB/s, 2:00:01 left");
}

static void test_unknowns(void **state)
{
	(void)state;
	/* No total (nothing open), no time yet, nothing read. */
	expect(2048, 0, 10, 1000000, "progress: 2.0 KiB, 10 lines, 2.0 KiB/s");
	expect(0, 4096, 0, 0, "progress: 0 B of 4.0 KiB (0%), 0 lines");
	expect(0, 4096, 0, 3000000, "progress: 0 B of 4.0 KiB (0%), 0 lines");
}

static void test_short_buffer(void **state)
{
	(void)state;
	char buf[12];
	floe_progress_format(buf, sizeof(buf), 100 * MiB, 300 * MiB, 1, 1000000);
	assert_string_equal(buf, "progress: 1");
	floe_progress_format(buf, 0, 1, 1, 1, 1); /* writes nothing */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_lines),
	    cmocka_unit_test(test_unknowns),
	    cmocka_unit_test(test_short_buffer),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

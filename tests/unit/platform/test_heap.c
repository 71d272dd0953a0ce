/* Tests of platform/heap: after floe_heap_tune, a page buffer (1 MiB) comes from the
 * heap rather than a mapping of its own, stays mapped once freed, and a block over the
 * 4 MiB threshold still gets its own mapping; floe_heap_release gives freed memory back
 * even below a block still in use. glibc only, and not under ASan, whose allocator
 * replaces glibc's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "platform/heap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

#if defined(__GLIBC__) && !defined(UNDER_ASAN)
#include <malloc.h>

static void test_page_buffers_stay_in_the_heap(void **state)
{
	(void)state;
	floe_heap_tune();
	struct mallinfo2 before = mallinfo2();
	size_t page = (size_t)1 << 20;
	char *p = malloc(page);
	assert_non_null(p);
	memset(p, 1, page);
	struct mallinfo2 during = mallinfo2();
	assert_int_equal(during.hblks, before.hblks); /* not a mapping of its own */
	free(p);
	struct mallinfo2 after = mallinfo2();
	assert_true(after.arena >= page); /* freed, but not given back to the kernel */
	assert_true(after.fordblks >= page);
	char *big = malloc((size_t)8 << 20);
	assert_non_null(big);
	struct mallinfo2 large = mallinfo2();
	assert_int_equal(large.hblks, before.hblks + 1);
	free(big);
}

/* The process's resident bytes, from /proc/self/statm. */
static size_t resident(void)
{
	unsigned long pages = 0, rss = 0;
	FILE *f = fopen("/proc/self/statm", "r");
	assert_non_null(f);
	assert_int_equal(fscanf(f, "%lu %lu", &pages, &rss), 2);
	fclose(f);
	return (size_t)rss * 4096;
}

/* As at start-up: 3 MiB in blocks used and freed, one small block allocated after them
 * stays. The freed memory is not at the heap's top, and under the trim threshold
 * anyway: only floe_heap_release gives it back. */
static void test_release_gives_freed_memory_back(void **state)
{
	(void)state;
	floe_heap_tune();
	enum { N = 12, BLOCK = 256 << 10 };
	char *blocks[N];
	for (int i = 0; i < N; i++) {
		blocks[i] = malloc(BLOCK);
		assert_non_null(blocks[i]);
		memset(blocks[i], 1, BLOCK);
	}
	char *keep = malloc(64);
	assert_non_null(keep);
	for (int i = 0; i < N; i++)
		free(blocks[i]);
	size_t before = resident();
	floe_heap_release();
	size_t after = resident();
	assert_true(after + (size_t)2 * (1 << 20) <= before);
	free(keep);
}
#else
static void test_page_buffers_stay_in_the_heap(void **state)
{
	(void)state;
	floe_heap_tune(); /* does nothing here; must not fail */
	skip();
}

static void test_release_gives_freed_memory_back(void **state)
{
	(void)state;
	floe_heap_release(); /* does nothing here; must not fail */
	skip();
}
#endif

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_page_buffers_stay_in_the_heap),
	    cmocka_unit_test(test_release_gives_freed_memory_back),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

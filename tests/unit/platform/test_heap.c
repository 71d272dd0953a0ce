/* Tests of platform/heap: after floe_heap_tune, a page buffer (1 MiB) comes from the
 * heap rather than a mapping of its own, stays mapped once freed, and a block over the
 * 4 MiB threshold still gets its own mapping. glibc only, and not under ASan, whose
 * allocator replaces glibc's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "platform/heap.h"

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
#else
static void test_page_buffers_stay_in_the_heap(void **state)
{
	(void)state;
	floe_heap_tune(); /* does nothing here; must not fail */
	skip();
}
#endif

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_page_buffers_stay_in_the_heap),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

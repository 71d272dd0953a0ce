/* Heap tuning: see heap.h. */
#include "heap.h"

#include <stdlib.h> /* defines __GLIBC__ with glibc */
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#define MMAP_THRESHOLD ((int)(4u << 20))
#define TRIM_THRESHOLD ((int)(8u << 20))

void floe_heap_tune(void)
{
#if defined(__GLIBC__)
	/* Setting either fixes it (glibc otherwise moves both with the largest block freed). */
	(void)mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD);
	(void)mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD);
#endif
}

void floe_heap_release(void)
{
#if defined(__GLIBC__)
	(void)malloc_trim(0);
#endif
}

/* For the sketch tests: replaces malloc, calloc and realloc in the test program so that,
 * while armed, every call fails and is counted. The sketches' per-event paths must make
 * none. glibc's own entry points serve the calls while disarmed. Under AddressSanitizer,
 * which owns malloc, the check is compiled out and agg_nomalloc_calls() stays 0. */
#ifndef FLOE_TEST_AGG_NOMALLOC_H
#define FLOE_TEST_AGG_NOMALLOC_H

#include <stddef.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define AGG_NOMALLOC_OFF 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define AGG_NOMALLOC_OFF 1
#endif

static int agg_nomalloc_armed;
static unsigned long agg_nomalloc_count;

static inline void agg_nomalloc_arm(void)
{
	agg_nomalloc_count = 0;
	agg_nomalloc_armed = 1;
}

/* Disarms and returns how many allocations were attempted while armed. */
static inline unsigned long agg_nomalloc_disarm(void)
{
	agg_nomalloc_armed = 0;
	return agg_nomalloc_count;
}

#ifndef AGG_NOMALLOC_OFF
extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t n);

void *malloc(size_t n)
{
	if (agg_nomalloc_armed) {
		agg_nomalloc_count++;
		return NULL;
	}
	return __libc_malloc(n);
}

void *calloc(size_t n, size_t size)
{
	if (agg_nomalloc_armed) {
		agg_nomalloc_count++;
		return NULL;
	}
	return __libc_calloc(n, size);
}

void *realloc(void *p, size_t n)
{
	if (agg_nomalloc_armed) {
		agg_nomalloc_count++;
		return NULL;
	}
	return __libc_realloc(p, n);
}
#endif

#endif

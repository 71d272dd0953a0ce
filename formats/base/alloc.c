/* Budgeted allocator: a 16-byte header in front of each block remembers its size so
 * that free and realloc can keep the budget exact. */
#include "alloc.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define HDR 16

void floe_alloc_init(struct floe_alloc *a, size_t limit)
{
	memset(a, 0, sizeof(*a));
	a->limit = limit;
	a->fail_after = -1;
}

/* The counters are updated atomically: the Parquet writer's page compression may run on
 * a worker thread (and zstd allocates through us there) while the owner allocates. */
#define LOAD(p) __atomic_load_n((p), __ATOMIC_RELAXED)

size_t floe_alloc_used(const struct floe_alloc *a)
{
	return LOAD(&a->used);
}

size_t floe_alloc_peak(const struct floe_alloc *a)
{
	return LOAD(&a->peak);
}

/* Takes n bytes of the budget (and one of the fault countdown), or returns 0. */
static int reserve(struct floe_alloc *a, size_t n)
{
	if (!a)
		return 1;
	long f = LOAD(&a->fail_after);
	while (f >= 0) {
		if (f == 0)
			return 0;
		if (__atomic_compare_exchange_n(&a->fail_after, &f, f - 1, false, __ATOMIC_RELAXED,
						__ATOMIC_RELAXED))
			break;
	}
	if (a->limit && n > a->limit)
		return 0;
	size_t used = __atomic_add_fetch(&a->used, n, __ATOMIC_RELAXED);
	if (a->limit && used > a->limit) {
		__atomic_sub_fetch(&a->used, n, __ATOMIC_RELAXED);
		return 0;
	}
	__atomic_add_fetch(&a->count, 1, __ATOMIC_RELAXED);
	size_t peak = LOAD(&a->peak);
	while (used > peak && !__atomic_compare_exchange_n(&a->peak, &peak, used, false,
							   __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
	return 1;
}

static void release(struct floe_alloc *a, size_t n)
{
	if (a)
		__atomic_sub_fetch(&a->used, n, __ATOMIC_RELAXED);
}

void *floe_malloc(struct floe_alloc *a, size_t n)
{
	size_t total;
	if (__builtin_add_overflow(n, (size_t)HDR, &total) || !reserve(a, n))
		return NULL;
	unsigned char *p = malloc(total);
	if (!p) {
		release(a, n);
		return NULL;
	}
	memcpy(p, &n, sizeof(n));
	return p + HDR;
}

void *floe_calloc(struct floe_alloc *a, size_t n, size_t size)
{
	size_t total;
	if (__builtin_mul_overflow(n, size, &total))
		return NULL;
	void *p = floe_malloc(a, total);
	if (p)
		memset(p, 0, total);
	return p;
}

void *floe_realloc(struct floe_alloc *a, void *p, size_t n)
{
	if (!p)
		return floe_malloc(a, n);
	unsigned char *base = (unsigned char *)p - HDR;
	size_t old;
	memcpy(&old, base, sizeof(old));
	size_t total;
	if (__builtin_add_overflow(n, (size_t)HDR, &total))
		return NULL;
	if (n > old && !reserve(a, n - old))
		return NULL;
	unsigned char *q = realloc(base, total);
	if (!q) {
		if (n > old)
			release(a, n - old);
		return NULL;
	}
	memcpy(q, &n, sizeof(n));
	if (n < old)
		release(a, old - n);
	return q + HDR;
}

size_t floe_alloc_size(const void *p)
{
	size_t n;
	memcpy(&n, (const unsigned char *)p - HDR, sizeof(n));
	return n;
}

void floe_free(struct floe_alloc *a, void *p)
{
	if (!p)
		return;
	unsigned char *base = (unsigned char *)p - HDR;
	size_t n;
	memcpy(&n, base, sizeof(n));
	release(a, n);
	free(base);
}

char *floe_strndup(struct floe_alloc *a, const char *s, size_t len)
{
	size_t total;
	if (__builtin_add_overflow(len, (size_t)1, &total))
		return NULL;
	char *d = floe_malloc(a, total);
	if (!d)
		return NULL;
	memcpy(d, s, len);
	d[len] = '\0';
	return d;
}

char *floe_strdup(struct floe_alloc *a, const char *s)
{
	return floe_strndup(a, s, strlen(s));
}

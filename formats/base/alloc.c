/* Budgeted allocator: a 16-byte header in front of each block remembers its size so
 * that free and realloc can keep the budget exact. */
#include "alloc.h"

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

static int may_take(struct floe_alloc *a, size_t n)
{
	if (!a)
		return 1;
	if (a->fail_after >= 0) {
		if (a->fail_after == 0)
			return 0;
		a->fail_after--;
	}
	if (a->limit && (n > a->limit || a->used > a->limit - n))
		return 0;
	return 1;
}

static void took(struct floe_alloc *a, size_t n)
{
	if (!a)
		return;
	a->used += n;
	a->count++;
	if (a->used > a->peak)
		a->peak = a->used;
}

void *floe_malloc(struct floe_alloc *a, size_t n)
{
	size_t total;
	if (__builtin_add_overflow(n, (size_t)HDR, &total) || !may_take(a, n))
		return NULL;
	unsigned char *p = malloc(total);
	if (!p)
		return NULL;
	memcpy(p, &n, sizeof(n));
	took(a, n);
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
	if (n > old && !may_take(a, n - old))
		return NULL;
	unsigned char *q = realloc(base, total);
	if (!q)
		return NULL;
	memcpy(q, &n, sizeof(n));
	if (a) {
		if (n > old)
			took(a, n - old);
		else
			a->used -= old - n;
	}
	return q + HDR;
}

void floe_free(struct floe_alloc *a, void *p)
{
	if (!p)
		return;
	unsigned char *base = (unsigned char *)p - HDR;
	size_t n;
	memcpy(&n, base, sizeof(n));
	if (a)
		a->used -= n;
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

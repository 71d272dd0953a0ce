/* The budgeted allocator. Every allocation in formats/ and agent/ goes through a
 * struct floe_alloc, which counts the bytes in use against a hard limit and can be told
 * to fail the Nth allocation (fault tests). Running out is FLOE_ENOMEM for the caller to
 * handle, never an abort. Its counters are updated atomically, so threads may share
 * one allocator (the Parquet writer's page compression can run on a worker). */
#ifndef FLOE_ALLOC_H
#define FLOE_ALLOC_H

#include <stddef.h>

struct floe_alloc {
	size_t used;        /* bytes currently allocated through this allocator */
	size_t peak;        /* high-water mark of used */
	size_t limit;       /* 0 = unlimited */
	long fail_after;    /* <0 never; otherwise the allocation after this many succeeds fails */
	unsigned long count; /* allocations made so far */
};

/* Initialises caller-owned a with a byte limit (0 = unlimited). */
void floe_alloc_init(struct floe_alloc *a, size_t limit);
/* The bytes in use now, and the most there were. Read them through these, never the
 * fields: another thread may be allocating, and a plain read of a counter it writes
 * atomically is a data race (the value may be torn on a 32-bit target). */
size_t floe_alloc_used(const struct floe_alloc *a);
size_t floe_alloc_peak(const struct floe_alloc *a);

/* Returns n bytes, or NULL when the budget or the system is out of memory. a may be
 * NULL: the allocation is then unbudgeted (used by tools and tests only). */
void *floe_malloc(struct floe_alloc *a, size_t n);
/* As floe_malloc, zero-filled; NULL also when n * size overflows. */
void *floe_calloc(struct floe_alloc *a, size_t n, size_t size);
/* Resizes p (which may be NULL) to n bytes. On failure returns NULL and p is untouched. */
void *floe_realloc(struct floe_alloc *a, void *p, size_t n);
/* The size p was allocated with (p not NULL). */
size_t floe_alloc_size(const void *p);
/* Releases p (NULL is fine); a must be the allocator p came from. */
void floe_free(struct floe_alloc *a, void *p);
/* Copies len bytes of s into a new NUL-terminated string, or NULL. */
char *floe_strndup(struct floe_alloc *a, const char *s, size_t len);
char *floe_strdup(struct floe_alloc *a, const char *s);

#endif

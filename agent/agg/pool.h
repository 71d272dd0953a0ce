/* A window's pool of sketch memory: one arena that the sketches of all the window's
 * groups and metrics take pieces from when they outgrow their own small memory, each the
 * size it asks for. Reserved with everything else at start-up, handed out by a counter,
 * given back all at once when its window is emptied. No call here allocates. */
#ifndef FLOE_AGG_POOL_H
#define FLOE_AGG_POOL_H

#include <stddef.h>
#include <stdint.h>

struct floe_agg_pool {
	uint8_t *mem;	   /* size bytes, 8-aligned */
	size_t size;
	size_t used;
	uint64_t *refused; /* counts the takes that found too little left; may be NULL */
};

/* The next bytes of the pool (rounded up to 8, 8-aligned), or NULL when fewer are left,
 * not counted: for a step the caller can do without. */
static inline void *floe_agg_pool_try(struct floe_agg_pool *p, size_t bytes)
{
	size_t n = (bytes + 7) & ~(size_t)7;
	if (n < bytes || n > p->size - p->used)
		return NULL;
	void *r = p->mem + p->used;
	p->used += n;
	return r;
}

/* As floe_agg_pool_try, and a NULL is counted in *refused. */
static inline void *floe_agg_pool_take(struct floe_agg_pool *p, size_t bytes)
{
	void *r = floe_agg_pool_try(p, bytes);
	if (!r && p->refused)
		++*p->refused;
	return r;
}

/* Every piece free again: the sketches holding them must have been reset. */
static inline void floe_agg_pool_reset(struct floe_agg_pool *p)
{
	p->used = 0;
}

#endif

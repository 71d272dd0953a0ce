/* A pool of fixed-size memory blocks that sketches take from when they outgrow their
 * own small memory: reserved with everything else at start-up, handed out by a counter,
 * given back all at once when its window is emptied. No call here allocates. */
#ifndef FLOE_AGG_POOL_H
#define FLOE_AGG_POOL_H

#include <stddef.h>
#include <stdint.h>

struct floe_agg_pool {
	uint8_t *mem;	   /* nblocks blocks of block bytes (8-aligned) */
	size_t block;
	uint32_t nblocks;
	uint32_t used;
	uint64_t *refused; /* counts the takes that found the pool empty; may be NULL */
};

/* The next free block, or NULL (counted in *refused) when none is left. */
static inline void *floe_agg_pool_take(struct floe_agg_pool *p)
{
	if (p->used < p->nblocks)
		return p->mem + (size_t)p->used++ * p->block;
	if (p->refused)
		++*p->refused;
	return NULL;
}

/* Every block free again: the sketches holding them must have been reset. */
static inline void floe_agg_pool_reset(struct floe_agg_pool *p)
{
	p->used = 0;
}

#endif

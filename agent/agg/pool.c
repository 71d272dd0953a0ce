/* A window's pool (pool.h): the reserved part, then chunks grown from the budgeted
 * allocator within the aggregation's ceiling, all given back at once. */
#include "agent/agg/pool.h"

#include "formats/base/alloc.h"

struct agg_pool_chunk {
	struct agg_pool_chunk *next;
	size_t size; /* bytes after the header */
	size_t used;
};

/* The header keeps the pieces after it 8-aligned. */
#define HDR ((sizeof(struct agg_pool_chunk) + 7) & ~(size_t)7)

/* A new chunk of at least n bytes, or NULL when the ceiling or the allocator refuses. */
static struct agg_pool_chunk *grow(struct floe_agg_pool *p, size_t n)
{
	struct floe_agg_growth *g = p->grow;
	if (!g || !g->a || *g->held > g->ceiling)
		return NULL;
	uint64_t left = g->ceiling - *g->held;
	size_t size = n > FLOE_AGG_POOL_CHUNK ? n : FLOE_AGG_POOL_CHUNK;
	/* The last chunk the ceiling allows may be smaller than the others. */
	if ((uint64_t)size + HDR > left)
		size = left > HDR ? (size_t)(left - HDR) : 0;
	if (size < n)
		return NULL;
	struct agg_pool_chunk *c = floe_malloc(g->a, HDR + size);
	/* Near the agent's limit a chunk of just the piece may still fit. */
	if (!c && size > n && (c = floe_malloc(g->a, HDR + n)) != NULL)
		size = n;
	if (!c)
		return NULL;
	*c = (struct agg_pool_chunk){p->chunks, size, 0};
	p->chunks = c;
	*g->held += HDR + size;
	return c;
}

void *floe_agg_pool_try(struct floe_agg_pool *p, size_t bytes)
{
	size_t n = (bytes + 7) & ~(size_t)7;
	if (n < bytes)
		return NULL;
	void *r = NULL;
	struct agg_pool_chunk *c = p->chunks;
	if (n <= p->size - p->used) {
		r = p->mem + p->used;
		p->used += n;
	} else if ((c && n <= c->size - c->used) || (c = grow(p, n)) != NULL) {
		/* A piece that does not fit the newest chunk's rest opens another: the rest
		 * (less than the largest sketch form) stays unused until the reset. */
		r = (uint8_t *)c + HDR + c->used;
		c->used += n;
	}
	if (r) {
		p->taken += n;
		if (p->grow && p->grow->in_use)
			*p->grow->in_use += n;
	}
	return r;
}

void *floe_agg_pool_take(struct floe_agg_pool *p, size_t bytes)
{
	void *r = floe_agg_pool_try(p, bytes);
	if (!r && p->grow && p->grow->refused)
		++*p->grow->refused;
	return r;
}

void floe_agg_pool_reset(struct floe_agg_pool *p)
{
	struct floe_agg_growth *g = p->grow;
	while (p->chunks) {
		struct agg_pool_chunk *c = p->chunks;
		p->chunks = c->next;
		*g->held -= HDR + c->size;
		floe_free(g->a, c);
	}
	if (g && g->in_use)
		*g->in_use -= p->taken;
	p->taken = 0;
	p->used = 0;
}

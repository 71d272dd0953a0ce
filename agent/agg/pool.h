/* A window's pool of sketch memory: the pieces that the sketches of all the window's
 * groups and metrics take when they outgrow their own small memory, each the size it
 * asks for. A part is reserved with the window at start-up; past it the pool grows in
 * chunks from the budgeted allocator, up to a ceiling its aggregation shares between its
 * windows (its part of the agent's memory budget), and every chunk is given back when
 * the window is emptied. Pieces are handed out by a counter, never freed one by one. */
#ifndef FLOE_AGG_POOL_H
#define FLOE_AGG_POOL_H

#include <stddef.h>
#include <stdint.h>

struct floe_alloc;

/* What one aggregation's windows grow from (owned by the aggregator, borrowed by its
 * pools): the allocator, the most bytes of chunks they may hold together, and the
 * figures the aggregation reports. */
struct floe_agg_growth {
	struct floe_alloc *a; /* NULL: the pools do not grow */
	uint64_t ceiling;     /* bytes of chunks all the windows may hold at once */
	uint64_t *held;	      /* bytes of chunks held now (a gauge); set when a is */
	uint64_t *in_use;     /* bytes the sketches hold from every pool, reserved part and
			       * chunks (a gauge); may be NULL */
	uint64_t *refused;    /* counts the takes that found too little left; may be NULL */
};

struct agg_pool_chunk;

struct floe_agg_pool {
	uint8_t *mem; /* the reserved part: size bytes, 8-aligned */
	size_t size;
	size_t used;
	struct agg_pool_chunk *chunks; /* grown, the newest (the one taken from) first */
	size_t taken;		       /* bytes handed out since the last reset */
	struct floe_agg_growth *grow;  /* may be NULL: neither grows nor counts */
};

/* The bytes of a chunk, unless a piece needs more (then the piece's own size). */
#define FLOE_AGG_POOL_CHUNK ((size_t)256 << 10)

/* The next bytes of the pool (rounded up to 8, 8-aligned): from the reserved part, else
 * the newest chunk, else a new chunk when the growth ceiling and the allocator allow.
 * NULL when none can give them, not counted: for a step the caller can do without. */
void *floe_agg_pool_try(struct floe_agg_pool *p, size_t bytes);

/* As floe_agg_pool_try, and a NULL is counted in the growth's refused. */
void *floe_agg_pool_take(struct floe_agg_pool *p, size_t bytes);

/* Every piece free again and every chunk given back to the allocator: the sketches
 * holding them must have been reset. */
void floe_agg_pool_reset(struct floe_agg_pool *p);

#endif

/* Dictionary of one Parquet column chunk: the distinct values in insertion order, kept
 * PLAIN-encoded in one byte arena (which is exactly the dictionary page body) and found
 * through an open-addressing hash table that stores indexes into that arena. */
#ifndef FLOE_PQ_DICT_H
#define FLOE_PQ_DICT_H

#include "formats/base/buf.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct floe_alloc;

struct floe_pq_dict_slot {
	uint32_t hash;
	uint32_t idx1; /* entry index + 1; 0 = empty */
};

/* Caller-owned (hot path). Treat the fields as private. */
struct floe_pq_dict {
	struct floe_alloc *alloc; /* borrowed */
	int width;		  /* 0 = BYTE_ARRAY (u32 length + bytes), else 4 or 8 */
	struct floe_buf plain;	  /* the PLAIN-encoded values */
	uint32_t *off;		  /* entry -> offset in plain */
	uint32_t count, off_cap;
	struct floe_pq_dict_slot *slots;
	uint32_t mask; /* slots - 1; slots is a power of two */
	uint32_t last1; /* the entry found or added last + 1 (0 = none): logs repeat their
			 * host, source and app row after row, and one compare beats a hash */
};

/* width: 0 for byte arrays, 4 or 8 for fixed-width values. alloc is borrowed. */
void floe_pq_dict_init(struct floe_pq_dict *d, struct floe_alloc *alloc, int width);
void floe_pq_dict_fini(struct floe_pq_dict *d);
/* Forgets every entry (a new column chunk), keeping the storage. */
void floe_pq_dict_reset(struct floe_pq_dict *d);
/* Finds value (p, n) — for fixed widths n must equal the width and p holds the PLAIN
 * little-endian bytes — or adds it. *idx receives its index and *added whether it is
 * new. Returns FLOE_ELIMIT, without adding, when the PLAIN size would exceed cap bytes;
 * FLOE_ENOMEM when out of memory. */
int floe_pq_dict_put(struct floe_pq_dict *d, const void *p, size_t n, size_t cap, uint32_t *idx,
		     bool *added);
static inline uint32_t floe_pq_dict_count(const struct floe_pq_dict *d)
{
	return d->count;
}
/* PLAIN size of the dictionary in bytes (the dictionary page's uncompressed body). */
static inline size_t floe_pq_dict_bytes(const struct floe_pq_dict *d)
{
	return d->plain.len;
}
/* The PLAIN bytes of entry idx, including the length prefix for byte arrays (so they can
 * be copied straight into a PLAIN data page). Valid until the next put or reset. */
void floe_pq_dict_entry(const struct floe_pq_dict *d, uint32_t idx, const uint8_t **p, size_t *n);

#endif

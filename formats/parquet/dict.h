/* Dictionary of one Parquet column chunk: the distinct values in insertion order, kept
 * PLAIN-encoded in one byte arena (which is exactly the dictionary page body) and found
 * through an open-addressing hash table that stores indexes into that arena. */
#ifndef FLOE_PQ_DICT_H
#define FLOE_PQ_DICT_H

#include "formats/base/buf.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

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
	/* Fixed widths: while every entry was added greater than the one before (in the
	 * order of their bits as a signed integer: a column's times, in order), the entries
	 * are sorted and are found by a binary search, no entry is in the hash table and a
	 * new one is appended without a hash. The first value out of that order puts them
	 * all in the table (hashed), for good until a reset. Byte arrays are always hashed. */
	bool hashed;
	uint32_t last1; /* the entry found or added last + 1 (0 = none): logs repeat their
			 * host, source and app row after row, and one compare beats a hash */
	/* The entry the hash table found or added last among those of small key i (see
	 * floe_pq_dict_key), + 1 (0 = none): a column of a few values that differ in
	 * length (user agents, referrers, methods) or in the low bits of their first byte
	 * (status codes) finds each with one compare, in any order. */
	uint32_t by_key1[16];
};

/* width: 0 for byte arrays, 4 or 8 for fixed-width values. alloc is borrowed. */
void floe_pq_dict_init(struct floe_pq_dict *d, struct floe_alloc *alloc, int width);
void floe_pq_dict_fini(struct floe_pq_dict *d);
/* Forgets every entry (a new column chunk), keeping the storage. */
void floe_pq_dict_reset(struct floe_pq_dict *d);
/* Whether a[0..n) equals b[0..n). Values up to 32 bytes (most dictionary values: hosts,
 * methods, statuses, a map's keys) compare as two to four pairs of overlapping integers
 * rather than through a library call. */
static inline bool floe_pq_dict_bytes_eq(const uint8_t *a, const uint8_t *b, size_t n)
{
	if (n >= 8 && n <= 32) {
		uint64_t a0, a1, b0, b1;
		memcpy(&a0, a, 8);
		memcpy(&b0, b, 8);
		memcpy(&a1, a + n - 8, 8);
		memcpy(&b1, b + n - 8, 8);
		if ((a0 ^ b0) | (a1 ^ b1))
			return false;
		if (n <= 16)
			return true;
		memcpy(&a0, a + 8, 8);
		memcpy(&b0, b + 8, 8);
		memcpy(&a1, a + n - 16, 8);
		memcpy(&b1, b + n - 16, 8);
		return !((a0 ^ b0) | (a1 ^ b1));
	}
	if (n >= 4 && n < 8) {
		uint32_t a0, a1, b0, b1;
		memcpy(&a0, a, 4);
		memcpy(&b0, b, 4);
		memcpy(&a1, a + n - 4, 4);
		memcpy(&b1, b + n - 4, 4);
		return !((a0 ^ b0) | (a1 ^ b1));
	}
	if (n < 4) {
		for (size_t i = 0; i < n; i++) {
			if (a[i] != b[i])
				return false;
		}
		return true;
	}
	return memcmp(a, b, n) == 0;
}

/* Whether entry idx is the value (p, n). Fixed widths compare as one integer: memcmp of
 * a length the compiler cannot see is a library call, and the integer columns'
 * dictionaries (status codes, times) compare on every value. A byte array's stored
 * length is compared before its bytes. */
__attribute__((always_inline)) static inline bool floe_pq_dict_same(const struct floe_pq_dict *d, uint32_t idx, const void *p,
				     size_t n)
{
	const uint8_t *e = d->plain.data + d->off[idx];
	if (d->width == 8) {
		uint64_t a, b;
		memcpy(&a, e, 8);
		memcpy(&b, p, 8);
		return a == b;
	}
	if (d->width == 4) {
		uint32_t a, b;
		memcpy(&a, e, 4);
		memcpy(&b, p, 4);
		return a == b;
	}
	size_t len = (size_t)e[0] | (size_t)e[1] << 8 | (size_t)e[2] << 16 | (size_t)e[3] << 24;
	return len == n && floe_pq_dict_bytes_eq(e + 4, p, n);
}

/* The small key of value (p, n): its length modulo 16 for byte arrays, the low four bits
 * of its first (least significant) byte for fixed widths. */
static inline uint32_t floe_pq_dict_key(const struct floe_pq_dict *d, const void *p, size_t n)
{
	return (uint32_t)(d->width ? *(const uint8_t *)p : n) & 15;
}

/* Finds (p, n) among the entry found or added last and the one after it (or the first,
 * after the last), and the one found last of its small key, without a hash: a
 * map's keys, and the fields of a format, come in the same order line after line, and
 * entered the dictionary in that order. Inline, so that a hit costs a compare or three
 * and no call. */
__attribute__((always_inline)) static inline bool floe_pq_dict_find_recent(struct floe_pq_dict *d, const void *p, size_t n,
					    uint32_t *idx)
{
	if (!d->last1)
		return false;
	uint32_t e = d->last1 - 1, next = d->last1 < d->count ? d->last1 : 0;
	bool hit = floe_pq_dict_same(d, e, p, n);
	if (!hit && next != e && (hit = floe_pq_dict_same(d, next, p, n)))
		e = next;
	if (!hit) {
		uint32_t b = d->by_key1[floe_pq_dict_key(d, p, n)];
		if (!b || b - 1 == e || b - 1 == next || !floe_pq_dict_same(d, b - 1, p, n))
			return false;
		e = b - 1;
	}
	*idx = e;
	d->last1 = e + 1;
	return true;
}

/* The hash table's part of floe_pq_dict_find and floe_pq_dict_put (recent entries not
 * tried again). */
bool floe_pq_dict_find_hashed(struct floe_pq_dict *d, const void *p, size_t n, uint32_t *idx);
int floe_pq_dict_put_hashed(struct floe_pq_dict *d, const void *p, size_t n, size_t cap,
			    uint32_t *idx, bool *added);

/* Finds value (p, n) — for fixed widths n must equal the width and p holds the PLAIN
 * little-endian bytes — or adds it. *idx receives its index and *added whether it is
 * new. Returns FLOE_ELIMIT, without adding, when the PLAIN size would exceed cap bytes;
 * FLOE_ENOMEM when out of memory. */
static inline int floe_pq_dict_put(struct floe_pq_dict *d, const void *p, size_t n, size_t cap,
				   uint32_t *idx, bool *added)
{
	if (floe_pq_dict_find_recent(d, p, n, idx)) {
		*added = false;
		return 0;
	}
	return floe_pq_dict_put_hashed(d, p, n, cap, idx, added);
}
/* Finds value (p, n) as floe_pq_dict_put does, without adding it: true and its index in
 * *idx when the dictionary holds it. */
static inline bool floe_pq_dict_find(struct floe_pq_dict *d, const void *p, size_t n,
				     uint32_t *idx)
{
	return floe_pq_dict_find_recent(d, p, n, idx) || floe_pq_dict_find_hashed(d, p, n, idx);
}
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

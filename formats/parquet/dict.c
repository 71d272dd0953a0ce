/* Dictionary with open addressing (linear probing, load factor at most 1/2). Each slot
 * keeps the value's 32-bit hash next to its index so that probing and growth rarely
 * touch the arena. */
#include "dict.h"

#include "formats/base/alloc.h"
#include "formats/base/error.h"

#include <string.h>
#include <xxhash.h>

void floe_pq_dict_init(struct floe_pq_dict *d, struct floe_alloc *alloc, int width)
{
	memset(d, 0, sizeof(*d));
	d->alloc = alloc;
	d->width = width;
	d->hashed = !width;
	floe_buf_init(&d->plain, alloc, (size_t)INT32_MAX);
}

void floe_pq_dict_fini(struct floe_pq_dict *d)
{
	floe_buf_fini(&d->plain);
	floe_free(d->alloc, d->off);
	floe_free(d->alloc, d->slots);
	d->off = NULL;
	d->slots = NULL;
	d->count = d->off_cap = d->mask = d->last1 = 0;
	d->hashed = !d->width;
	memset(d->by_key1, 0, sizeof(d->by_key1));
}

void floe_pq_dict_reset(struct floe_pq_dict *d)
{
	floe_buf_reset(&d->plain);
	d->count = 0;
	d->last1 = 0;
	memset(d->by_key1, 0, sizeof(d->by_key1));
	/* A table that held no entry (sorted fixed widths) is empty already. */
	if (d->slots && d->hashed)
		memset(d->slots, 0, ((size_t)d->mask + 1) * sizeof(*d->slots));
	d->hashed = !d->width;
}

static uint32_t hash_of(const struct floe_pq_dict *d, const void *p, size_t n)
{
	if (d->width == 8 || d->width == 4) {
		uint64_t v = 0;
		uint32_t v4;
		if (d->width == 8) {
			memcpy(&v, p, 8);
		} else {
			memcpy(&v4, p, 4);
			v = v4;
		}
		v ^= v >> 33;
		v *= 0xff51afd7ed558ccdULL;
		v ^= v >> 33;
		v *= 0xc4ceb9fe1a85ec53ULL;
		v ^= v >> 33;
		return (uint32_t)v;
	}
	return (uint32_t)XXH3_64bits(p, n);
}

static int grow_slots(struct floe_pq_dict *d)
{
	size_t nslots = d->slots ? ((size_t)d->mask + 1) * 2 : 1024;
	if (nslots > ((size_t)1 << 30))
		return FLOE_ELIMIT;
	struct floe_pq_dict_slot *s = floe_calloc(d->alloc, nslots, sizeof(*s));
	if (!s)
		return FLOE_ENOMEM;
	uint32_t mask = (uint32_t)(nslots - 1);
	if (d->slots) {
		for (size_t i = 0; i <= d->mask; i++) {
			if (!d->slots[i].idx1)
				continue;
			uint32_t j = d->slots[i].hash & mask;
			while (s[j].idx1)
				j = (j + 1) & mask;
			s[j] = d->slots[i];
		}
		floe_free(d->alloc, d->slots);
	}
	d->slots = s;
	d->mask = mask;
	return 0;
}

/* The hash table's slot of (p, n) with hash h: true and its slot when the value is there,
 * false and the empty slot that ends its probe when it is not. */
static bool probe(const struct floe_pq_dict *d, const void *p, size_t n, uint32_t h, uint32_t *slot)
{
	uint32_t j = h & d->mask;
	while (d->slots[j].idx1) {
		if (d->slots[j].hash == h && floe_pq_dict_same(d, d->slots[j].idx1 - 1, p, n)) {
			*slot = j;
			return true;
		}
		j = (j + 1) & d->mask;
	}
	*slot = j;
	return false;
}

/* A fixed-width value's bits as a signed integer: the order of a sorted dictionary. */
static inline int64_t fixed_key(const struct floe_pq_dict *d, const uint8_t *p)
{
	if (d->width == 8) {
		uint64_t v = (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 |
			     (uint64_t)p[3] << 24 | (uint64_t)p[4] << 32 | (uint64_t)p[5] << 40 |
			     (uint64_t)p[6] << 48 | (uint64_t)p[7] << 56;
		return (int64_t)v;
	}
	uint32_t v =
	    (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
	return (int64_t)(int32_t)v;
}

/* In a sorted dictionary (not hashed): the index of the first entry not below key. */
static uint32_t lower_bound(const struct floe_pq_dict *d, int64_t key)
{
	uint32_t lo = 0, hi = d->count;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (fixed_key(d, d->plain.data + d->off[mid]) < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* A sorted dictionary's entry equal to fixed-width value p: true and its index. */
static bool sorted_find(const struct floe_pq_dict *d, const void *p, uint32_t *idx)
{
	int64_t key = fixed_key(d, p);
	uint32_t at = lower_bound(d, key);
	if (at == d->count || fixed_key(d, d->plain.data + d->off[at]) != key)
		return false;
	*idx = at;
	return true;
}

/* Puts a sorted dictionary's entries in the hash table: a value came out of order. */
static int make_hashed(struct floe_pq_dict *d)
{
	size_t nslots = 1024;
	while (nslots / 2 < (size_t)d->count + 1)
		nslots *= 2;
	if (nslots > ((size_t)1 << 30))
		return FLOE_ELIMIT;
	if (!d->slots || (size_t)d->mask + 1 != nslots) {
		struct floe_pq_dict_slot *s = floe_calloc(d->alloc, nslots, sizeof(*s));
		if (!s)
			return FLOE_ENOMEM;
		floe_free(d->alloc, d->slots);
		d->slots = s;
		d->mask = (uint32_t)(nslots - 1);
	}
	for (uint32_t i = 0; i < d->count; i++) {
		const uint8_t *e = d->plain.data + d->off[i];
		uint32_t h = hash_of(d, e, (size_t)d->width), j = h & d->mask;
		while (d->slots[j].idx1)
			j = (j + 1) & d->mask;
		d->slots[j].hash = h;
		d->slots[j].idx1 = i + 1;
	}
	d->hashed = true;
	return 0;
}

bool floe_pq_dict_find_hashed(struct floe_pq_dict *d, const void *p, size_t n, uint32_t *idx)
{
	uint32_t j;
	if (!d->hashed) {
		if (!sorted_find(d, p, idx))
			return false;
	} else {
		if (!d->slots || !probe(d, p, n, hash_of(d, p, n), &j))
			return false;
		*idx = d->slots[j].idx1 - 1;
	}
	d->last1 = d->by_key1[floe_pq_dict_key(d, p, n)] = *idx + 1;
	return true;
}

/* Room for one more entry's offset. */
static int grow_off(struct floe_pq_dict *d)
{
	uint32_t ncap = d->off_cap ? d->off_cap * 2 : 256;
	uint32_t *o = floe_realloc(d->alloc, d->off, (size_t)ncap * sizeof(*o));
	if (!o)
		return FLOE_ENOMEM;
	d->off = o;
	d->off_cap = ncap;
	return 0;
}

/* floe_pq_dict_put_hashed for a sorted dictionary: a value above the last entry is
 * appended, one already there found; any other makes the dictionary hashed. */
static int put_sorted(struct floe_pq_dict *d, const void *p, size_t n, size_t cap, uint32_t *idx,
		      bool *added)
{
	int64_t key = fixed_key(d, p);
	if (d->count && key <= fixed_key(d, d->plain.data + d->off[d->count - 1])) {
		if (sorted_find(d, p, idx)) {
			*added = false;
			d->last1 = d->by_key1[floe_pq_dict_key(d, p, n)] = *idx + 1;
			return 0;
		}
		int rc = make_hashed(d);
		return rc ? rc : floe_pq_dict_put_hashed(d, p, n, cap, idx, added);
	}
	if (n > cap || d->plain.len > cap - n)
		return FLOE_ELIMIT;
	int rc = 0;
	if (d->count == d->off_cap && (rc = grow_off(d)))
		return rc;
	if (d->plain.cap - d->plain.len < 8 && (rc = floe_buf_reserve(&d->plain, n)))
		return rc;
	uint32_t at = (uint32_t)d->plain.len;
	if (n == 8)
		memcpy(d->plain.data + at, p, 8);
	else
		memcpy(d->plain.data + at, p, 4);
	d->plain.len += n;
	d->off[d->count] = at;
	*idx = d->count++;
	*added = true;
	d->last1 = d->by_key1[floe_pq_dict_key(d, p, n)] = d->count;
	return 0;
}

int floe_pq_dict_put_hashed(struct floe_pq_dict *d, const void *p, size_t n, size_t cap,
			    uint32_t *idx, bool *added)
{
	int rc;
	if (!d->hashed)
		return put_sorted(d, p, n, cap, idx, added);
	if (!d->slots && (rc = grow_slots(d)))
		return rc;
	uint32_t h = hash_of(d, p, n);
	uint32_t j;
	if (probe(d, p, n, h, &j)) {
		*idx = d->slots[j].idx1 - 1;
		*added = false;
		d->last1 = d->by_key1[floe_pq_dict_key(d, p, n)] = *idx + 1;
		return 0;
	}
	size_t need = d->width ? n : n + 4;
	if (n > UINT32_MAX - 4 || need > cap || d->plain.len > cap - need)
		return FLOE_ELIMIT;
	if ((size_t)d->count + 1 > ((size_t)d->mask + 1) / 2) {
		if ((rc = grow_slots(d)))
			return rc;
		j = h & d->mask;
		while (d->slots[j].idx1)
			j = (j + 1) & d->mask;
	}
	if (d->count == d->off_cap && (rc = grow_off(d)))
		return rc;
	if ((rc = floe_buf_reserve(&d->plain, need)))
		return rc;
	uint32_t at = (uint32_t)d->plain.len;
	uint8_t *w = d->plain.data + at;
	if (!d->width) {
		/* The PLAIN length prefix is little-endian whatever the host. */
		uint32_t len = (uint32_t)n;
		uint8_t le[4] = {(uint8_t)len, (uint8_t)(len >> 8), (uint8_t)(len >> 16),
				 (uint8_t)(len >> 24)};
		memcpy(w, le, 4);
		w += 4;
	}
	memcpy(w, p, n);
	d->plain.len += need;
	d->off[d->count] = at;
	d->slots[j].hash = h;
	d->slots[j].idx1 = d->count + 1;
	*idx = d->count++;
	*added = true;
	d->last1 = d->by_key1[floe_pq_dict_key(d, p, n)] = d->count;
	return 0;
}

void floe_pq_dict_entry(const struct floe_pq_dict *d, uint32_t idx, const uint8_t **p, size_t *n)
{
	const uint8_t *e = d->plain.data + d->off[idx];
	*p = e;
	if (d->width) {
		*n = (size_t)d->width;
	} else {
		*n = 4 +
		     ((size_t)e[0] | (size_t)e[1] << 8 | (size_t)e[2] << 16 | (size_t)e[3] << 24);
	}
}

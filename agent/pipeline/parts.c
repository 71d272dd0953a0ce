/* Partition keys: open addressing over a power-of-two table at most half full. */
#include "parts.h"

#include "formats/base/alloc.h"
#include "formats/base/error.h"

#include <string.h>

#include <xxhash.h>

struct floe_parts {
	struct floe_alloc *alloc;
	const struct floe_part_spec *spec;
	struct floe_ice_part_value **keys; /* n values each, their strings after them */
	size_t n, cap;
	uint32_t *slots; /* partition number + 1, 0 = empty */
	size_t nslots;
	size_t bytes;
	/* The partition the last find gave (number + 1, 0 = none since the clear). Log lines
	 * come in time order from a few sources, so a batch's records meet the same key run
	 * after run: comparing with it first costs a compare where the hash and the probe
	 * cost two XXH64 calls and a walk (about 220 instructions a line). */
	size_t last;
	/* With a spec of one day or hour of ts: the times [lo, hi) that fall in the last
	 * key's day or hour (hi > lo when set), so that a record's partition is known from
	 * its time without its key (floe_parts_find_time). */
	int64_t lo, hi;
};

int floe_parts_new(struct floe_alloc *a, const struct floe_part_spec *spec, struct floe_parts **out)
{
	struct floe_parts *p = floe_calloc(a, 1, sizeof(*p));
	if (!p)
		return FLOE_ENOMEM;
	p->alloc = a;
	p->spec = spec;
	*out = p;
	return 0;
}

void floe_parts_clear(struct floe_parts *p)
{
	for (size_t i = 0; i < p->n; i++)
		floe_free(p->alloc, p->keys[i]);
	p->n = 0;
	p->bytes = 0;
	p->last = 0;
	p->lo = p->hi = 0;
	if (p->slots)
		memset(p->slots, 0, p->nslots * sizeof(*p->slots));
}

void floe_parts_free(struct floe_parts *p)
{
	if (!p)
		return;
	floe_parts_clear(p);
	floe_free(p->alloc, p->keys);
	floe_free(p->alloc, p->slots);
	floe_free(p->alloc, p);
}

size_t floe_parts_count(const struct floe_parts *p)
{
	return p->n;
}

size_t floe_parts_bytes(const struct floe_parts *p)
{
	return p->bytes + p->cap * sizeof(*p->keys) + p->nslots * sizeof(*p->slots);
}

static bool is_identity(const struct floe_parts *p, size_t i)
{
	return p->spec->f[i].transform.kind == FLOE_ICE_IDENTITY;
}

/* The hash of the values floe_part_key_equal compares. */
static uint64_t hash_of(const struct floe_parts *p, const struct floe_ice_part_value *v)
{
	uint64_t h = 0;
	for (size_t i = 0; i < p->spec->n; i++) {
		uint8_t null = v[i].is_null;
		h = XXH64(&null, 1, h);
		if (v[i].is_null)
			continue;
		h = is_identity(p, i) ? XXH64(v[i].s ? v[i].s : "", v[i].s ? v[i].len : 0, h)
				      : XXH64(&v[i].i, sizeof(v[i].i), h);
	}
	return h;
}

static bool same(const struct floe_parts *p, const struct floe_ice_part_value *a,
		 const struct floe_ice_part_value *b)
{
	for (size_t i = 0; i < p->spec->n; i++) {
		if (a[i].is_null != b[i].is_null)
			return false;
		if (a[i].is_null)
			continue;
		if (is_identity(p, i) ? a[i].len != b[i].len || (a[i].len && memcmp(a[i].s, b[i].s, a[i].len))
				      : a[i].i != b[i].i)
			return false;
	}
	return true;
}

/* The slot holding v, or the empty one where it would go. */
static size_t probe(const struct floe_parts *p, const struct floe_ice_part_value *v)
{
	size_t mask = p->nslots - 1, s = (size_t)hash_of(p, v) & mask;
	while (p->slots[s] && !same(p, p->keys[p->slots[s] - 1], v))
		s = (s + 1) & mask;
	return s;
}

/* Room for one more key: the list and a table at most half full. */
static int grow(struct floe_parts *p)
{
	if (p->n == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 16;
		struct floe_ice_part_value **k = floe_realloc(p->alloc, p->keys, cap * sizeof(*k));
		if (!k)
			return FLOE_ENOMEM;
		p->keys = k;
		p->cap = cap;
	}
	if (2 * (p->n + 1) <= p->nslots)
		return 0;
	size_t nslots = p->nslots ? 2 * p->nslots : 32;
	uint32_t *old = p->slots;
	size_t nold = p->nslots;
	if (!(p->slots = floe_calloc(p->alloc, nslots, sizeof(*p->slots)))) {
		p->slots = old;
		return FLOE_ENOMEM;
	}
	p->nslots = nslots;
	for (size_t i = 0; i < nold; i++)
		if (old[i])
			p->slots[probe(p, p->keys[old[i] - 1])] = old[i];
	floe_free(p->alloc, old);
	return 0;
}

/* The last key found is partition idx's: it is compared first, and with a spec of one
 * day or hour of ts, the times of its day or hour are kept. A time transform's value v
 * is the floor of the time over its unit, so the times [v * unit, (v + 1) * unit) give
 * v and no other value (the value is an int32, and a time whose quotient it cannot
 * hold is left to the key: its bounds overflow). */
static void remember(struct floe_parts *p, size_t idx)
{
	p->last = idx + 1;
	p->lo = p->hi = 0;
	if (p->spec->n != 1)
		return;
	enum floe_ice_transform_kind kind = p->spec->f[0].transform.kind;
	int64_t unit = kind == FLOE_ICE_DAY ? INT64_C(86400000000)
		       : kind == FLOE_ICE_HOUR ? INT64_C(3600000000)
					       : 0;
	int64_t lo, hi;
	if (unit == 0 || p->keys[idx][0].is_null ||
	    __builtin_mul_overflow(p->keys[idx][0].i, unit, &lo) ||
	    __builtin_add_overflow(lo, unit, &hi))
		return;
	p->lo = lo;
	p->hi = hi;
}

bool floe_parts_find_time(const struct floe_parts *p, int64_t ts, size_t *idx)
{
	if (ts < p->lo || ts >= p->hi)
		return false;
	*idx = p->last - 1;
	return true;
}

int floe_parts_find(struct floe_parts *p, const struct floe_part_key *key, size_t *idx)
{
	if (p->last && same(p, p->keys[p->last - 1], key->v)) {
		*idx = p->last - 1;
		return 0;
	}
	if (p->nslots) {
		size_t s = probe(p, key->v);
		if (p->slots[s]) {
			*idx = p->slots[s] - 1;
			remember(p, *idx);
			return 0;
		}
	}
	if (p->n >= UINT32_MAX - 1 || grow(p))
		return FLOE_ENOMEM;
	size_t nv = p->spec->n, size = nv * sizeof(struct floe_ice_part_value);
	for (size_t i = 0; i < nv; i++)
		if (key->v[i].s)
			size += key->v[i].len + 1;
	struct floe_ice_part_value *v = floe_malloc(p->alloc, size ? size : 1);
	if (!v)
		return FLOE_ENOMEM;
	char *str = (char *)(v + nv);
	for (size_t i = 0; i < nv; i++) {
		v[i] = key->v[i];
		if (key->v[i].s) {
			memcpy(str, key->v[i].s, key->v[i].len);
			str[key->v[i].len] = '\0';
			v[i].s = str;
			str += key->v[i].len + 1;
		}
	}
	p->keys[p->n] = v;
	p->slots[probe(p, v)] = (uint32_t)(p->n + 1);
	*idx = p->n++;
	remember(p, *idx);
	p->bytes += size;
	return 1;
}

void floe_parts_key(const struct floe_parts *p, size_t idx, struct floe_part_key *out)
{
	for (size_t i = 0; i < p->spec->n; i++)
		out->v[i] = p->keys[idx][i];
}

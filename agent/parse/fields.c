/* Fixed-capacity key/value collector: four parallel arrays and a byte arena carved out of
 * one allocation, so a parser fills it per line without allocating. */
#include "fields.h"

#include "agent/schema/record.h"
#include "formats/base/alloc.h"
#include "formats/base/error.h"

#include <assert.h>
#include <string.h>

struct floe_fields {
	struct floe_alloc *alloc;
	size_t cap, n, dropped;
	/* A bit per class of the keys held (key_bit): a key whose bit is clear is not among
	 * them. The decoder looks up a dozen names a line (level, app, host, ts, message)
	 * that most lines lack, and every add checks for a duplicate: both then cost a test
	 * instead of a pass over the pairs. */
	uint64_t classes;
	size_t arena_cap, arena_len;
	const char **keys;
	size_t *klens;
	const char **vals;
	size_t *vlens;
	uint8_t *ids;
	char *arena;
};

int floe_fields_new(struct floe_alloc *a, size_t cap_pairs, size_t cap_bytes, struct floe_fields **out)
{
	if (cap_pairs == 0)
		return FLOE_EINVAL;
	/* Layout: struct, 2 pointer arrays, 2 size arrays, the ids, arena. Pointers and size_t
	 * share alignment on every target we build for, and the struct is pointer-aligned. */
	size_t per, arrays, total;
	if (__builtin_mul_overflow(cap_pairs, 2 * sizeof(char *) + 2 * sizeof(size_t) + 1, &per) ||
	    __builtin_add_overflow(per, sizeof(struct floe_fields), &arrays) ||
	    __builtin_add_overflow(arrays, cap_bytes, &total))
		return FLOE_EINVAL;
	unsigned char *mem = floe_malloc(a, total);
	if (!mem)
		return FLOE_ENOMEM;
	struct floe_fields *f = (struct floe_fields *)mem;
	memset(f, 0, sizeof(*f));
	f->alloc = a;
	f->cap = cap_pairs;
	f->arena_cap = cap_bytes;
	unsigned char *p = mem + sizeof(*f);
	f->keys = (const char **)p;
	p += cap_pairs * sizeof(char *);
	f->vals = (const char **)p;
	p += cap_pairs * sizeof(char *);
	f->klens = (size_t *)p;
	p += cap_pairs * sizeof(size_t);
	f->vlens = (size_t *)p;
	p += cap_pairs * sizeof(size_t);
	f->ids = p;
	p += cap_pairs;
	f->arena = (char *)p;
	*out = f;
	return 0;
}

void floe_fields_free(struct floe_fields *f)
{
	if (f)
		floe_free(f->alloc, f);
}

void floe_fields_reset(struct floe_fields *f)
{
	f->n = 0;
	f->dropped = 0;
	f->arena_len = 0;
	f->classes = 0;
}

/* The class of a key: its length and first byte folded into one of 64 bits. Keys of one
 * length and first byte share it, so a set bit still needs the compare. */
static inline uint64_t key_bit(const char *key, size_t klen)
{
	return FLOE_FIELDS_KEY_CLASS(klen, klen ? (unsigned char)key[0] : 0);
}

/* Whether pair i's key is (key, klen). */
static inline bool same_key(const struct floe_fields *f, size_t i, const char *key, size_t klen)
{
	return f->klens[i] == klen &&
	       (klen == 0 || (f->keys[i][0] == key[0] && memcmp(f->keys[i], key, klen) == 0));
}

/* Appends a pair whose key the table does not hold, into a table with room; bit is the
 * key's class. */
static inline void append(struct floe_fields *f, unsigned id, const char *key, size_t klen,
			  const char *val, size_t vlen, uint64_t bit)
{
	f->keys[f->n] = key;
	f->klens[f->n] = klen;
	f->vals[f->n] = val;
	f->vlens[f->n] = vlen;
	f->ids[f->n] = (uint8_t)id;
	f->n++;
	f->classes |= bit;
}

int floe_fields_add(struct floe_fields *f, const char *key, size_t klen, const char *val,
		    size_t vlen)
{
	return floe_fields_add_id(f, FLOE_FIELD_NOID, key, klen, val, vlen);
}

int floe_fields_add_id(struct floe_fields *f, unsigned id, const char *key, size_t klen,
		       const char *val, size_t vlen)
{
	if (!val)
		vlen = 0;
	/* Linear duplicate check, only when a key of the class is held: pair tables are
	 * small (tens), and comparing the length and the first byte first makes a miss cost
	 * about a load per pair, without a call. */
	uint64_t bit = key_bit(key, klen);
	for (size_t i = 0; (f->classes & bit) && i < f->n; i++) {
		if (same_key(f, i, key, klen)) {
			f->vals[i] = val;
			f->vlens[i] = vlen;
			f->ids[i] = (uint8_t)id;
			return 0;
		}
	}
	if (f->n == f->cap) {
		f->dropped++;
		return FLOE_ELIMIT;
	}
	append(f, id, key, klen, val, vlen, bit);
	return 0;
}

int floe_fields_add_ids(struct floe_fields *f, size_t n, const uint8_t *ids,
			const char *const *names, const unsigned char *lens,
			const char *const *vals, const size_t *vlens)
{
	int rc = 0;
	for (size_t j = 0; j < n; j++) {
		const char *key = names[ids[j]], *val = vals[j];
		size_t klen = lens[ids[j]];
		uint64_t bit = key_bit(key, klen);
		if ((f->classes & bit) || f->n == f->cap) {
			/* A key of its class is held (maybe its own), or the table is full:
			 * the one-pair way decides. */
			if (floe_fields_add_id(f, ids[j], key, klen, val, vlens[j]))
				rc = FLOE_ELIMIT;
			continue;
		}
		append(f, ids[j], key, klen, val, val ? vlens[j] : 0, bit);
	}
	return rc;
}

int floe_fields_add_distinct(struct floe_fields *f, size_t n, const uint8_t *ids,
			     const char *const *names, const unsigned char *lens,
			     const uint64_t *classes_of, const char *const *vals,
			     const size_t *vlens)
{
	if (f->n != 0 || n > f->cap)
		return floe_fields_add_ids(f, n, ids, names, lens, vals, vlens);
#ifndef NDEBUG
	for (size_t j = 0; j < n; j++) {
		assert(classes_of[ids[j]] == key_bit(names[ids[j]], lens[ids[j]]));
		for (size_t k = j + 1; k < n; k++)
			assert(lens[ids[j]] != lens[ids[k]] ||
			       memcmp(names[ids[j]], names[ids[k]], lens[ids[j]]) != 0);
	}
#endif
	/* The arrays in locals: a store through one of them could otherwise be taken to
	 * change f's count or classes, which the loop would then load again per pair. */
	const char **keys = f->keys, **tvals = f->vals;
	size_t *klens = f->klens, *tvlens = f->vlens;
	uint8_t *tids = f->ids;
	uint64_t classes = 0;
	for (size_t j = 0; j < n; j++) {
		unsigned id = ids[j];
		keys[j] = names[id];
		klens[j] = lens[id];
		tvals[j] = vals[j];
		tvlens[j] = vals[j] ? vlens[j] : 0;
		tids[j] = (uint8_t)id;
		classes |= classes_of[id];
	}
	f->n = n;
	f->classes = classes;
	return 0;
}

char *floe_fields_scratch(struct floe_fields *f, size_t *avail)
{
	*avail = f->arena_cap - f->arena_len;
	return f->arena + f->arena_len;
}

void floe_fields_commit(struct floe_fields *f, size_t used)
{
	/* Our invariant, not input: callers never write past what scratch offered. */
	if (used > f->arena_cap - f->arena_len)
		used = f->arena_cap - f->arena_len;
	f->arena_len += used;
}

void floe_fields_drop(struct floe_fields *f)
{
	f->dropped++;
}

size_t floe_fields_count(const struct floe_fields *f)
{
	return f->n;
}

size_t floe_fields_dropped(const struct floe_fields *f)
{
	return f->dropped;
}

const char *const *floe_fields_keys(const struct floe_fields *f)
{
	return f->keys;
}

const size_t *floe_fields_key_lens(const struct floe_fields *f)
{
	return f->klens;
}

const char *const *floe_fields_vals(const struct floe_fields *f)
{
	return f->vals;
}

const size_t *floe_fields_val_lens(const struct floe_fields *f)
{
	return f->vlens;
}

const uint8_t *floe_fields_ids(const struct floe_fields *f)
{
	return f->ids;
}

bool floe_fields_find(const struct floe_fields *f, const char *key, size_t klen, const char **val,
		      size_t *vlen)
{
	if (!(f->classes & key_bit(key, klen)))
		return false;
	for (size_t i = 0; i < f->n; i++) {
		if (same_key(f, i, key, klen)) {
			*val = f->vals[i];
			*vlen = f->vlens[i];
			return true;
		}
	}
	return false;
}

void floe_fields_to_record(const struct floe_fields *f, struct floe_record *rec)
{
	rec->nattrs = f->n;
	rec->attr_keys = f->keys;
	rec->attr_key_lens = f->klens;
	rec->attr_vals = f->vals;
	rec->attr_val_lens = f->vlens;
}

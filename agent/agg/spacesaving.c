/* SpaceSaving top-k: counters, a min-heap by count, a linear-probing hash index and a
 * fixed key arena, all in the caller's memory. See spacesaving.h. */
#include "agent/agg/spacesaving.h"

#include <string.h>
#include <xxhash.h>

#include "formats/base/error.h"

/* Why a min-heap with an index rather than Metwally's stream-summary (buckets of equal
 * counts in linked lists, O(1) per update): with k in the tens, the heap is one or two
 * cache lines of ids and an increment moves a counter down a few levels at most (the
 * frequent items sit at the leaves and seldom move); the stream-summary needs two more
 * pointers per counter and a bucket structure, and chases pointers on every update. The
 * hash index (at most half full) finds a key's counter in about one probe. */

static uint32_t table_size(unsigned k)
{
	uint32_t t = 1;
	while (t < 2u * k)
		t <<= 1;
	return t;
}

/* The layout: counters, heap, index, merge marks, key arena. */
static size_t layout(unsigned k, unsigned key_bytes, size_t off[4])
{
	size_t n = (size_t)k * sizeof(struct floe_ss_counter);
	off[0] = n;
	n += (size_t)k * sizeof(uint32_t);
	off[1] = n;
	n += (size_t)table_size(k) * sizeof(uint32_t);
	off[2] = n;
	n += k;
	off[3] = n;
	return n + (size_t)k * key_bytes;
}

size_t floe_ss_bytes(unsigned k, unsigned key_bytes)
{
	size_t off[4];
	if (k < 1 || k > FLOE_SS_MAX_K || key_bytes < 1 || key_bytes > FLOE_SS_MAX_KEY_BYTES)
		return 0;
	return layout(k, key_bytes, off);
}

int floe_ss_init(struct floe_ss *s, unsigned k, unsigned key_bytes, void *mem, size_t len)
{
	size_t need = floe_ss_bytes(k, key_bytes), off[4];
	if (!need || !mem || ((uintptr_t)mem & 7))
		return FLOE_EINVAL;
	if (len < need)
		return FLOE_ELIMIT;
	layout(k, key_bytes, off);
	uint8_t *b = mem;
	s->ctr = mem;
	s->heap = (uint32_t *)(b + off[0]);
	s->index = (uint32_t *)(b + off[1]);
	s->mark = b + off[2];
	s->keys = b + off[3];
	s->k = k;
	s->key_bytes = key_bytes;
	s->tsize = table_size(k);
	floe_ss_reset(s);
	return 0;
}

void floe_ss_reset(struct floe_ss *s)
{
	memset(s->index, 0, (size_t)s->tsize * sizeof(uint32_t));
	s->n = 0;
	s->total = 0;
	s->truncated = 0;
}

static uint8_t *key_of(const struct floe_ss *s, uint32_t id)
{
	return s->keys + (size_t)id * s->key_bytes;
}

/* The counter id of a key, or UINT32_MAX; *slot receives its index slot, or the empty
 * slot where it would go. */
static uint32_t find(const struct floe_ss *s, uint64_t h, const void *p, size_t len, uint32_t *slot)
{
	uint32_t mask = s->tsize - 1, i = (uint32_t)h & mask;
	for (;; i = (i + 1) & mask) {
		uint32_t e = s->index[i];
		if (!e)
			break;
		const struct floe_ss_counter *c = &s->ctr[e - 1];
		if (c->hash == h && c->keylen == len &&
		    (!len || !memcmp(key_of(s, e - 1), p, len))) {
			*slot = i;
			return e - 1;
		}
	}
	*slot = i;
	return UINT32_MAX;
}

/* Removes counter id from the index (backward-shift deletion keeps probe runs whole). */
static void unindex(struct floe_ss *s, uint32_t id)
{
	uint32_t mask = s->tsize - 1, i = (uint32_t)s->ctr[id].hash & mask;
	while (s->index[i] != id + 1)
		i = (i + 1) & mask;
	for (uint32_t j = (i + 1) & mask;; j = (j + 1) & mask) {
		uint32_t e = s->index[j];
		if (!e)
			break;
		uint32_t home = (uint32_t)s->ctr[e - 1].hash & mask;
		/* e may fill the hole at i if i lies on its probe path home .. j. */
		if (((j - home) & mask) >= ((j - i) & mask)) {
			s->index[i] = e;
			i = j;
		}
	}
	s->index[i] = 0;
}

static void heap_swap(struct floe_ss *s, uint32_t a, uint32_t b)
{
	uint32_t t = s->heap[a];
	s->heap[a] = s->heap[b];
	s->heap[b] = t;
	s->ctr[s->heap[a]].heap = a;
	s->ctr[s->heap[b]].heap = b;
}

static uint64_t hcount(const struct floe_ss *s, uint32_t pos)
{
	return s->ctr[s->heap[pos]].count;
}

static void sift_down(struct floe_ss *s, uint32_t pos)
{
	for (;;) {
		uint32_t l = 2 * pos + 1, best = pos;
		if (l < s->n && hcount(s, l) < hcount(s, best))
			best = l;
		if (l + 1 < s->n && hcount(s, l + 1) < hcount(s, best))
			best = l + 1;
		if (best == pos)
			return;
		heap_swap(s, pos, best);
		pos = best;
	}
}

static void sift_up(struct floe_ss *s, uint32_t pos)
{
	while (pos > 0) {
		uint32_t parent = (pos - 1) / 2;
		if (hcount(s, parent) <= hcount(s, pos))
			return;
		heap_swap(s, pos, parent);
		pos = parent;
	}
}

/* Puts key (already cut to key_bytes) into counter id and index slot. */
static void set_key(struct floe_ss *s, uint32_t id, uint32_t slot, uint64_t h, const void *p,
		    size_t len, bool truncated)
{
	struct floe_ss_counter *c = &s->ctr[id];
	c->hash = h;
	c->keylen = (uint16_t)len;
	c->truncated = truncated;
	if (len) /* p may be NULL for the empty key */
		memcpy(key_of(s, id), p, len);
	s->index[slot] = id + 1;
}

/* Adds weight w (with error e) for a key not in the sketch: a free counter if any, else
 * the smallest counter's, whose count it then starts from (unless replace_min is false:
 * then the key only displaces a smaller count, as merging needs). */
static void insert(struct floe_ss *s, uint64_t h, const void *p, size_t len, bool truncated,
		   uint64_t w, uint64_t e, uint32_t slot, bool replace_min)
{
	uint32_t id;
	if (s->n < s->k) {
		id = s->n++;
		s->ctr[id].count = w;
		s->ctr[id].err = e;
		s->ctr[id].heap = id;
		s->heap[id] = id;
		set_key(s, id, slot, h, p, len, truncated);
		sift_up(s, id);
		return;
	}
	id = s->heap[0];
	struct floe_ss_counter *c = &s->ctr[id];
	if (replace_min) {
		e += c->count;
		w += c->count;
	} else if (w <= c->count) {
		return;
	}
	unindex(s, id);
	/* The slot found before unindex may have moved; find it again. */
	find(s, h, p, len, &slot);
	c->count = w;
	c->err = e;
	set_key(s, id, slot, h, p, len, truncated);
	sift_down(s, 0);
}

void floe_ss_add(struct floe_ss *s, const void *p, size_t len)
{
	bool truncated = len > s->key_bytes;
	if (truncated) {
		len = s->key_bytes;
		s->truncated++;
	}
	uint64_t h = XXH3_64bits(p, len);
	uint32_t slot;
	uint32_t id = find(s, h, p, len, &slot);
	s->total++;
	if (id != UINT32_MAX) {
		s->ctr[id].count++;
		sift_down(s, s->ctr[id].heap);
		return;
	}
	insert(s, h, p, len, truncated, 1, 0, slot, true);
}

uint64_t floe_ss_min(const struct floe_ss *s)
{
	return s->n == s->k ? s->ctr[s->heap[0]].count : 0;
}

uint64_t floe_ss_estimate(const struct floe_ss *s, const void *p, size_t len)
{
	if (len > s->key_bytes)
		len = s->key_bytes;
	uint32_t slot;
	uint32_t id = find(s, XXH3_64bits(p, len), p, len, &slot);
	return id == UINT32_MAX ? floe_ss_min(s) : s->ctr[id].count;
}

static void heapify(struct floe_ss *s)
{
	for (uint32_t i = 0; i < s->n; i++) {
		s->heap[i] = i;
		s->ctr[i].heap = i;
	}
	for (uint32_t i = s->n / 2; i-- > 0;)
		sift_down(s, i);
}

int floe_ss_merge(struct floe_ss *dst, const struct floe_ss *src)
{
	if (dst->k != src->k || dst->key_bytes != src->key_bytes)
		return FLOE_EINVAL;
	uint64_t dmin = floe_ss_min(dst), smin = floe_ss_min(src);
	memset(dst->mark, 0, src->k);
	for (uint32_t i = 0; i < dst->n; i++) {
		struct floe_ss_counter *c = &dst->ctr[i];
		uint32_t slot;
		uint32_t j = find(src, c->hash, key_of(dst, i), c->keylen, &slot);
		if (j != UINT32_MAX) {
			c->count += src->ctr[j].count;
			c->err += src->ctr[j].err;
			c->truncated |= src->ctr[j].truncated;
			dst->mark[j] = 1;
		} else {
			c->count += smin;
			c->err += smin;
		}
	}
	heapify(dst);
	for (uint32_t j = 0; j < src->n; j++) {
		if (dst->mark[j])
			continue;
		const struct floe_ss_counter *c = &src->ctr[j];
		uint32_t slot;
		find(dst, c->hash, key_of(src, j), c->keylen, &slot);
		insert(dst, c->hash, key_of(src, j), c->keylen, c->truncated, c->count + dmin,
		       c->err + dmin, slot, false);
	}
	dst->total += src->total;
	dst->truncated += src->truncated;
	return 0;
}

/* Largest count first, then key bytes, so that the order is reproducible. */
static bool before(const struct floe_ss_item *a, const struct floe_ss_item *b)
{
	if (a->count != b->count)
		return a->count > b->count;
	size_t n = a->len < b->len ? a->len : b->len;
	int c = memcmp(a->key, b->key, n);
	return c ? c < 0 : a->len < b->len;
}

size_t floe_ss_top(const struct floe_ss *s, struct floe_ss_item *out, size_t cap)
{
	size_t n = 0;
	for (uint32_t i = 0; i < s->n; i++) {
		struct floe_ss_item it = {key_of(s, i), s->ctr[i].keylen, s->ctr[i].count,
					  s->ctr[i].err, s->ctr[i].truncated};
		/* Insertion into the sorted prefix, keeping the cap best: k is small and
		 * this runs once per window. */
		size_t j = n < cap ? n : cap;
		if (j == cap && (cap == 0 || !before(&it, &out[cap - 1])))
			continue;
		if (j == cap)
			j--;
		while (j > 0 && before(&it, &out[j - 1])) {
			out[j] = out[j - 1];
			j--;
		}
		out[j] = it;
		if (n < cap)
			n++;
	}
	return n;
}

/* The checkpoint image, little-endian (agent/agg/README.md has the table):
 *   0  "FSS" and version 1    4  k (u32)    8  key_bytes (u32)    12  n (u32)
 *   16 total (u64)            24 truncated (u64)
 *   32 n counters: count (u64), err (u64), key length (u16), flags (u8: bit 0 the
 *      key was truncated), the key bytes. */
enum { SS_HEADER = 32, SS_ENTRY = 19, SS_VERSION = 1 };

size_t floe_ss_serialized_size(const struct floe_ss *s)
{
	size_t n = SS_HEADER;
	for (uint32_t i = 0; i < s->n; i++)
		n += SS_ENTRY + s->ctr[i].keylen;
	return n;
}

static uint8_t *put_le(uint8_t *o, uint64_t v, int bytes)
{
	for (int i = 0; i < bytes; i++)
		o[i] = (uint8_t)(v >> (8 * i));
	return o + bytes;
}

static uint64_t get_le(const uint8_t *b, int bytes)
{
	uint64_t v = 0;
	for (int i = 0; i < bytes; i++)
		v |= (uint64_t)b[i] << (8 * i);
	return v;
}

int floe_ss_serialize(const struct floe_ss *s, void *out, size_t cap)
{
	if (cap < floe_ss_serialized_size(s))
		return FLOE_ELIMIT;
	uint8_t *o = out;
	memcpy(o, "FSS", 3);
	o[3] = SS_VERSION;
	o = put_le(o + 4, s->k, 4);
	o = put_le(o, s->key_bytes, 4);
	o = put_le(o, s->n, 4);
	o = put_le(o, s->total, 8);
	o = put_le(o, s->truncated, 8);
	for (uint32_t i = 0; i < s->n; i++) {
		const struct floe_ss_counter *c = &s->ctr[i];
		o = put_le(o, c->count, 8);
		o = put_le(o, c->err, 8);
		o = put_le(o, c->keylen, 2);
		*o++ = c->truncated ? 1 : 0;
		memcpy(o, key_of(s, i), c->keylen);
		o += c->keylen;
	}
	return 0;
}

static int ss_fail(struct floe_ss *s, struct floe_err *err, size_t at, int code)
{
	floe_ss_reset(s);
	return floe_err_at(err, code, at, "SpaceSaving image: %s at byte %zu", floe_strerror(code),
			   at);
}

/* Validates and adds one counter image at b[pos..]; *pos moves past it. */
static int decode_entry(struct floe_ss *s, const uint8_t *b, size_t len, size_t *pos,
			struct floe_err *err)
{
	size_t at = *pos;
	if (len - at < SS_ENTRY)
		return ss_fail(s, err, len, FLOE_EPARSE);
	uint64_t count = get_le(b + at, 8), error = get_le(b + at + 8, 8);
	size_t klen = (size_t)get_le(b + at + 16, 2);
	uint8_t flags = b[at + 18];
	if (count == 0)
		return ss_fail(s, err, at, FLOE_EFORMAT);
	if (error > count)
		return ss_fail(s, err, at + 8, FLOE_EFORMAT);
	if (klen > s->key_bytes)
		return ss_fail(s, err, at + 16, FLOE_EFORMAT);
	if (flags > 1)
		return ss_fail(s, err, at + 18, FLOE_EFORMAT);
	if (len - at - SS_ENTRY < klen)
		return ss_fail(s, err, len, FLOE_EPARSE);
	const uint8_t *key = b + at + SS_ENTRY;
	uint64_t h = XXH3_64bits(key, klen);
	uint32_t slot;
	if (find(s, h, key, klen, &slot) != UINT32_MAX)
		return ss_fail(s, err, at, FLOE_EFORMAT);
	uint32_t id = s->n++;
	s->ctr[id].count = count;
	s->ctr[id].err = error;
	set_key(s, id, slot, h, key, klen, flags & 1);
	*pos = at + SS_ENTRY + klen;
	return 0;
}

int floe_ss_decode(struct floe_ss *s, const void *p, size_t len, struct floe_err *err)
{
	const uint8_t *b = p;
	floe_ss_reset(s);
	if (len < SS_HEADER)
		return ss_fail(s, err, len, FLOE_EPARSE);
	if (memcmp(b, "FSS", 3) != 0)
		return ss_fail(s, err, 0, FLOE_EFORMAT);
	if (b[3] != SS_VERSION)
		return ss_fail(s, err, 3, FLOE_EUNSUPPORTED);
	if (get_le(b + 4, 4) != s->k)
		return ss_fail(s, err, 4, FLOE_EFORMAT);
	if (get_le(b + 8, 4) != s->key_bytes)
		return ss_fail(s, err, 8, FLOE_EFORMAT);
	uint64_t n = get_le(b + 12, 4);
	if (n > s->k)
		return ss_fail(s, err, 12, FLOE_EFORMAT);
	uint64_t total = get_le(b + 16, 8), truncated = get_le(b + 24, 8);
	size_t pos = SS_HEADER;
	for (uint64_t i = 0; i < n; i++) {
		int rc = decode_entry(s, b, len, &pos, err);
		if (rc)
			return rc;
	}
	if (pos != len)
		return ss_fail(s, err, pos, FLOE_EFORMAT);
	heapify(s);
	s->total = total;
	s->truncated = truncated;
	return 0;
}

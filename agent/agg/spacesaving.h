/* SpaceSaving top-k in caller-owned memory: k counters over string keys held in a fixed
 * per-sketch key arena (keys longer than the arena's slot are truncated and counted), a
 * min-heap by count with a hash index for O(log k) updates, the mergeable-summaries
 * merge, the items in count order for the aggregate table's map<string,long> column, and
 * a compact form for checkpoints. No call here allocates.
 *
 * Guarantees (Metwally et al. 2005), with N the items added and m the smallest count
 * once all k counters are used (0 before): m <= N / k; every item added more than m
 * times, in particular every item with frequency above N / k, holds a counter; a
 * counter's count overestimates its item's frequency by at most its err, itself <= m. */
#ifndef FLOE_AGG_SPACESAVING_H
#define FLOE_AGG_SPACESAVING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct floe_err;

#define FLOE_SS_DEFAULT_K 10
#define FLOE_SS_DEFAULT_KEY_BYTES 64
#define FLOE_SS_MAX_K 65536
#define FLOE_SS_MAX_KEY_BYTES 4096

/* One counter. Private to spacesaving.c. */
struct floe_ss_counter {
	uint64_t count;
	uint64_t err;  /* count - err <= frequency <= count */
	uint64_t hash; /* XXH3_64bits of the (truncated) key */
	uint32_t heap; /* position in the heap */
	uint16_t keylen;
	uint8_t truncated;
};

/* Caller-owned; private to spacesaving.c. All arrays lie in the caller's memory. */
struct floe_ss {
	struct floe_ss_counter *ctr; /* k */
	uint32_t *heap;		     /* k counter ids, a min-heap by count */
	uint32_t *index;	     /* tsize slots: counter id + 1, or 0 */
	uint8_t *mark;		     /* k bytes of scratch for merge */
	uint8_t *keys;		     /* k * key_bytes */
	uint32_t k, key_bytes, tsize, n;
	uint64_t total;	    /* items added (merges add the other's total) */
	uint64_t truncated; /* keys that were cut to key_bytes */
};

/* One counter as floe_ss_top reports it. key borrows the sketch's arena: valid until the
 * next add, merge, reset or decode. */
struct floe_ss_item {
	const uint8_t *key;
	size_t len;
	uint64_t count;
	uint64_t err;
	bool truncated;
};

/* Bytes of memory a sketch of k counters with key slots of key_bytes needs, or 0 when k
 * is outside 1..65536 or key_bytes outside 1..4096. */
size_t floe_ss_bytes(unsigned k, unsigned key_bytes);

/* Lays an empty sketch over mem (borrowed, 8-byte aligned, len >= floe_ss_bytes).
 * Returns 0, FLOE_EINVAL (bad k, key_bytes or alignment) or FLOE_ELIMIT (len short). */
int floe_ss_init(struct floe_ss *s, unsigned k, unsigned key_bytes, void *mem, size_t len);

void floe_ss_reset(struct floe_ss *s);

/* Counts one occurrence of the key of len bytes at p (borrowed). A key longer than
 * key_bytes is cut to its first key_bytes bytes and counted in s->truncated. */
void floe_ss_add(struct floe_ss *s, const void *p, size_t len);

/* The count kept for a key: its counter's count, else the smallest count when every
 * counter is used (an upper bound of its frequency), else 0. */
uint64_t floe_ss_estimate(const struct floe_ss *s, const void *p, size_t len);

/* The smallest count once all k counters are used, else 0. */
uint64_t floe_ss_min(const struct floe_ss *s);

/* Folds src into dst (Cafaro et al. 2016, parallel SpaceSaving): a key in both sums its
 * counts; a key in one only adds the other's smallest count (its bound) to count and
 * err; the k largest are kept. The guarantees above hold for the union. Both must have
 * the same k and key_bytes: returns 0 or FLOE_EINVAL (dst untouched). */
int floe_ss_merge(struct floe_ss *dst, const struct floe_ss *src);

/* Writes up to cap counters into out (borrowed), largest count first (ties by key
 * bytes), and returns how many were written. */
size_t floe_ss_top(const struct floe_ss *s, struct floe_ss_item *out, size_t cap);

/* Exact size of the checkpoint image (see agent/agg/README.md). */
size_t floe_ss_serialized_size(const struct floe_ss *s);

/* Writes the image into out. Returns 0 or FLOE_ELIMIT when cap is too small. */
int floe_ss_serialize(const struct floe_ss *s, void *out, size_t cap);

/* Decodes an image of len bytes at p (borrowed; pure, never reads past len) into s,
 * initialised with the image's k and key_bytes. Errors: FLOE_EPARSE (truncated),
 * FLOE_EFORMAT (bad magic, another k or key size, err above count, a zero count, a
 * repeated key, trailing bytes), FLOE_EUNSUPPORTED (another version), with err (may be NULL)
 * holding the offset of the offending byte; s is empty after a failure. */
int floe_ss_decode(struct floe_ss *s, const void *p, size_t len, struct floe_err *err);

#endif

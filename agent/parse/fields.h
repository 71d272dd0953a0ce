/* A fixed-capacity collector of parsed key/value pairs for one line at a time. Keys and
 * values are slices into the line where possible; bytes that had to be rewritten
 * (unescaped strings, dotted keys) go to a bounded arena inside the collector. Beyond
 * capacity a pair is dropped and counted, never an error. The arrays it exposes are
 * exactly the attrs arrays of struct floe_record. */
#ifndef FLOE_FIELDS_H
#define FLOE_FIELDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct floe_alloc;
struct floe_record;
struct floe_fields;

/* Makes a collector for at most cap_pairs pairs and cap_bytes of arena, in one block from
 * a (may be NULL = unbudgeted): 0 and *out (owned), or FLOE_ENOMEM / FLOE_EINVAL (*out
 * untouched). cap_pairs must be >= 1. */
int floe_fields_new(struct floe_alloc *a, size_t cap_pairs, size_t cap_bytes, struct floe_fields **out);
/* Releases f (NULL is fine). */
void floe_fields_free(struct floe_fields *f);
/* Forgets every pair and the arena (per line). Pointers given out before are invalid. */
void floe_fields_reset(struct floe_fields *f);

/* Adds a pair, borrowing key and val: they must stay valid until reset (slices of the
 * line, or arena bytes from floe_fields_scratch). val == NULL means a null value (vlen
 * ignored). A key already present is replaced in place (last one wins), so the keys are
 * unique as a map requires. Returns 0, or FLOE_ELIMIT when the pair table is full: the
 * pair is dropped and counted in floe_fields_dropped(). */
int floe_fields_add(struct floe_fields *f, const char *key, size_t klen, const char *val,
		    size_t vlen);
/* A parser whose field names are fixed (the access logs', a regex's groups) gives each
 * pair the index of its name in its list of names: the decoder maps those indexes to
 * typed columns once, instead of comparing names line after line. Pairs added by
 * floe_fields_add carry FLOE_FIELD_NOID. */
#define FLOE_FIELD_NOID 0xffu
/* As floe_fields_add, the pair carrying id (< FLOE_FIELD_NOID; a replaced pair takes it). */
int floe_fields_add_id(struct floe_fields *f, unsigned id, const char *key, size_t klen,
		       const char *val, size_t vlen);

/* As floe_fields_add_id for pairs j < n in turn, pair j carrying id ids[j], the key
 * names[ids[j]] (lens[ids[j]] bytes) and the value vals[j] (vlens[j] bytes), all
 * borrowed as there: one call for a line of a parser with fixed names, and a pair whose
 * key's class no held key has is appended without the look for a duplicate. Returns 0,
 * or FLOE_ELIMIT when some pair was dropped (counted, as there). */
int floe_fields_add_ids(struct floe_fields *f, size_t n, const uint8_t *ids,
			const char *const *names, const unsigned char *lens,
			const char *const *vals, const size_t *vlens);

/* The class of a key of klen bytes whose first byte is c (0 when klen is 0): one bit of
 * 64, the table's test of whether it may hold the key. A constant for a constant key. */
#define FLOE_FIELDS_KEY_CLASS(klen, c) ((uint64_t)1 << (((size_t)(klen) * 7 + (size_t)(c)) & 63))
/* As floe_fields_add_ids, from a caller whose keys names[ids[j]] are pairwise distinct
 * (the access logs' fields, each added once a line) and who knows each name's class
 * (classes[ids[j]], FLOE_FIELDS_KEY_CLASS): an empty table with room for the n pairs
 * takes them with no look for a duplicate and no test of room, pair after pair; any
 * other goes floe_fields_add_ids' way. Same result, same return. */
int floe_fields_add_distinct(struct floe_fields *f, size_t n, const uint8_t *ids,
			     const char *const *names, const unsigned char *lens,
			     const uint64_t *classes, const char *const *vals,
			     const size_t *vlens);

/* Arena protocol for bytes that are not a slice of the line: scratch returns the free
 * tail of the arena (*avail bytes, possibly 0; never NULL); the caller writes up to
 * *avail bytes there and calls commit with the count it keeps. Committed bytes stay
 * valid until reset. A caller that runs out of arena drops its pair with
 * floe_fields_drop(). */
char *floe_fields_scratch(struct floe_fields *f, size_t *avail);
void floe_fields_commit(struct floe_fields *f, size_t used);
/* Counts one pair dropped for lack of space. */
void floe_fields_drop(struct floe_fields *f);

size_t floe_fields_count(const struct floe_fields *f);
/* Pairs dropped since the last reset (capacity): the caller adds them to its counter. */
size_t floe_fields_dropped(const struct floe_fields *f);
const char *const *floe_fields_keys(const struct floe_fields *f);
const size_t *floe_fields_key_lens(const struct floe_fields *f);
const char *const *floe_fields_vals(const struct floe_fields *f);
const size_t *floe_fields_val_lens(const struct floe_fields *f);
/* Each pair's name index (floe_fields_add_id), or FLOE_FIELD_NOID. */
const uint8_t *floe_fields_ids(const struct floe_fields *f);
/* Looks a key up: true when present, with its value in val and vlen (a NULL val for a null value).
 */
bool floe_fields_find(const struct floe_fields *f, const char *key, size_t klen, const char **val,
		      size_t *vlen);
/* Points rec's attrs at f's arrays (borrowed until the next reset or add). */
void floe_fields_to_record(const struct floe_fields *f, struct floe_record *rec);

#endif

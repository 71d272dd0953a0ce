/* A batch's partitions: the partition keys its records have met since the last seal,
 * numbered from 0 in the order they first came, and found again by a hash of the key.
 * Each key is stored in one allocation of its values and string bytes (about 40 bytes
 * for a day or bucket, not the 2 KiB of a struct floe_part_key), so a batch can hold
 * thousands of them. */
#ifndef FLOE_PARTS_H
#define FLOE_PARTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/schema/partition.h"

struct floe_alloc;
struct floe_parts;

int floe_parts_new(struct floe_alloc *a, const struct floe_part_spec *spec, struct floe_parts **out);
void floe_parts_free(struct floe_parts *p);
/* Forgets every key (storage of the index kept). */
void floe_parts_clear(struct floe_parts *p);
/* Sets *idx to key's number, giving it the next one when it is new. Returns 0 (known), 1
 * (new) or FLOE_ENOMEM (nothing added). */
int floe_parts_find(struct floe_parts *p, const struct floe_part_key *key, size_t *idx);
/* With a spec of one day or hour of ts, and the last key floe_parts_find gave being that
 * of ts's day or hour: true with that partition's number in *idx, as floe_parts_find
 * would give it for ts's key, which need not be made. False otherwise (nothing found
 * since the clear, another day, another spec). */
bool floe_parts_find_time(const struct floe_parts *p, int64_t ts, size_t *idx);
/* Fills out with partition idx's key (its strings point into p, valid until clear). */
void floe_parts_key(const struct floe_parts *p, size_t idx, struct floe_part_key *out);
size_t floe_parts_count(const struct floe_parts *p);
/* Bytes p holds. */
size_t floe_parts_bytes(const struct floe_parts *p);

#endif

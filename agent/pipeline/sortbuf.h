/* The sort buffer: a bounded run of copied log records, each tagged with a small integer
 * (the batch's fragment index), handed back sorted by tag, then by the configured sort_by
 * columns (enum floe_sort_key, agent/schema/record.h), in a stable order. Memory never
 * holds a whole batch, so a batch is sorted in runs of at most max_bytes: the caller
 * drains the buffer whenever it is full. */
#ifndef FLOE_SORTBUF_H
#define FLOE_SORTBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/schema/record.h"

struct floe_alloc;

struct floe_sortbuf;

/* Called by floe_sortbuf_drain for each record in order. rec and its bytes are borrowed
 * and valid until the callback returns. Returns 0 to go on, or an error that stops the
 * drain. */
typedef int (*floe_sortbuf_fn)(void *ctx, uint32_t tag, const struct floe_record *rec);

/* Creates an empty buffer sorting by keys[0..nkeys) (copied; nkeys at most
 * FLOE_SORT_NKEYS, each key a valid enum value, else FLOE_EINVAL). Everything the buffer
 * holds (copied records and its sort index) stays within max_bytes, which must be at
 * least 4 KiB (FLOE_EINVAL). Storage is taken from alloc (borrowed, must outlive the
 * buffer) as records come. Returns 0 or FLOE_ENOMEM / FLOE_EINVAL (*out untouched). */
int floe_sortbuf_new(struct floe_alloc *alloc, const enum floe_sort_key *keys, size_t nkeys,
		     size_t max_bytes, struct floe_sortbuf **out);
/* Releases sb and every record it holds. sb may be NULL. */
void floe_sortbuf_free(struct floe_sortbuf *sb);

/* Copies rec (every byte it points to, attrs and null-ness included; rec is borrowed
 * only during the call) into the buffer with tag. Returns 0 (added), 1 (NOT added: the
 * buffer is full; drain it, then add again; a record that alone is larger than the
 * buffer can hold gets 1 from an empty buffer as well), FLOE_ENOMEM (not added; the
 * buffer holds what it held), or FLOE_EINVAL for a record the Parquet writer would refuse
 * too (a string or attribute with a length but no bytes). */
int floe_sortbuf_add(struct floe_sortbuf *sb, uint32_t tag, const struct floe_record *rec);

/* Sorts the records (by tag, then by the keys, ties in the order they were added) and
 * passes each to fn, then empties the buffer, keeping its storage (never more than
 * max_bytes) for the next run. When fn fails, the drain stops and returns fn's error:
 * the records fn accepted are gone, the rest (the failed one first) stay, in order, for a
 * later drain or floe_sortbuf_clear. Records passed to fn are invalidated when the drain
 * returns. */
int floe_sortbuf_drain(struct floe_sortbuf *sb, floe_sortbuf_fn fn, void *ctx);
/* Which tags a partial drain passes on. */
typedef bool (*floe_sortbuf_pick_fn)(void *ctx, uint32_t tag);
/* As floe_sortbuf_drain, for the records whose tag pick accepts only (sorted as there):
 * the others stay, in the order they were added, and the storage of those passed on is
 * free again for new records. When fn fails, the drain stops and returns fn's error: the
 * buffer is then only good for floe_sortbuf_clear (or free). */
int floe_sortbuf_drain_some(struct floe_sortbuf *sb, floe_sortbuf_pick_fn pick, floe_sortbuf_fn fn,
			    void *ctx);
/* Drops every record without passing them anywhere (storage kept). */
void floe_sortbuf_clear(struct floe_sortbuf *sb);

/* Whether rec's copy fits in the storage held now (floe_sortbuf_add would allocate
 * nothing for it). */
bool floe_sortbuf_fits(const struct floe_sortbuf *sb, const struct floe_record *rec);
/* The bytes of storage rec's copy takes (0 for a record floe_sortbuf_add refuses). */
size_t floe_sortbuf_cost(const struct floe_record *rec);

/* Records held. */
size_t floe_sortbuf_rows(const struct floe_sortbuf *sb);
/* Bytes of storage held (record copies and the sort index), at most max_bytes. */
size_t floe_sortbuf_bytes(const struct floe_sortbuf *sb);

#endif

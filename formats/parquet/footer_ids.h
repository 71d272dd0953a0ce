/* New field ids for a Parquet file that is already written: its footer's
 * SchemaElement.field_id values replaced by a map, every other byte of the footer kept.
 * Parquet keeps field ids in the footer's schema alone, and the column chunks and page
 * indexes that the footer points at lie before it, so a file with other ids is the old
 * file's bytes up to its footer, the new footer, its length and the magic. Pure over
 * (ptr, len): hostile input gets an error with a byte offset, never a read out of bounds. */
#ifndef FLOE_PQ_FOOTER_IDS_H
#define FLOE_PQ_FOOTER_IDS_H

#include <stddef.h>
#include <stdint.h>

struct floe_buf;
struct floe_err;

/* One id to replace: each schema element with field id from gets id to; seen counts
 * them (set by floe_pq_footer_reid). */
struct floe_pq_reid {
	int32_t from, to;
	uint32_t seen;
};

/* Bytes of a Parquet file's frame after its footer: the footer's length and "PAR1". */
#define FLOE_PQ_TAIL 8

/* Where the footer of a file of size bytes is, from its last FLOE_PQ_TAIL bytes: *off
 * and *len. FLOE_EFORMAT (no magic) or FLOE_ECORRUPT (a length that does not fit), with
 * err (may be NULL) saying which. */
int floe_pq_footer_span(const uint8_t tail[FLOE_PQ_TAIL], uint64_t size, uint64_t *off,
			uint32_t *len, struct floe_err *err);

/* Appends to out the footer footer[0..len) (a FileMetaData, borrowed) with the field id
 * of every schema element in map (n entries, the caller's; seen set) replaced, followed
 * by its new length and "PAR1": what replaces the file's bytes from the footer's offset
 * on. Ids not in map are kept. Errors: FLOE_EINVAL for a map that names an id twice or
 * gives two elements one id, or gives an id the footer keeps for an element not in the
 * map; FLOE_EPARSE/FLOE_ELIMIT for a footer that is not a FileMetaData (err has the byte
 * offset); FLOE_ELIMIT when out cannot grow. out is then as it was. */
int floe_pq_footer_reid(const uint8_t *footer, size_t len, struct floe_pq_reid *map, size_t n,
			struct floe_buf *out, struct floe_err *err);

#endif

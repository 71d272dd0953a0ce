/* Declarations shared by the Avro sources (writer, schema parser, reader); not part of
 * the public API. */
#ifndef FLOE_AVRO_INTERNAL_H
#define FLOE_AVRO_INTERNAL_H

#include "avro.h"

#include <stdalign.h>
#include <stddef.h>
#include <stdint.h>

struct floe_alloc;
struct floe_json;

/* zlib allocation hooks over a struct floe_alloc passed as opaque. */
void *floe_avro_zalloc(void *opaque, unsigned items, unsigned size);
void floe_avro_zfree(void *opaque, void *p);

/* An arena: chunks from the budgeted allocator, released together, with a hard cap. */
struct floe_avro_chunk {
	struct floe_avro_chunk *next;
	size_t cap, used;
	alignas(max_align_t) uint8_t data[];
};

struct floe_avro_arena {
	struct floe_alloc *a;
	struct floe_avro_chunk *head;
	size_t total; /* bytes of chunks held */
	size_t max;
	int err; /* why the last allocation failed: FLOE_ELIMIT or FLOE_ENOMEM */
};

/* NULL on failure, with ar->err saying why. */
void *floe_avro_arena_alloc(struct floe_avro_arena *ar, size_t n);
char *floe_avro_arena_strndup(struct floe_avro_arena *ar, const void *s, size_t len);
/* Releases everything but one default-sized chunk, kept for reuse. */
void floe_avro_arena_reset(struct floe_avro_arena *ar);
void floe_avro_arena_free(struct floe_avro_arena *ar);

struct floe_avro_schema {
	enum floe_avro_type type;
	const char *name;  /* full name of named types */
	size_t n;          /* fields, branches, symbols; the size of a fixed */
	const struct floe_avro_schema **kids; /* field types, branches; [0] for array/map */
	const char **names; /* field names or enum symbols */
	int32_t *ids;
	bool *has_id;
	struct floe_avro_schema *next_named;
};

/* Parses a schema JSON document into nodes in ar. Names and symbols point into root's
 * document, which must outlive the schema. FLOE_EFORMAT for an invalid schema,
 * FLOE_ELIMIT when nested deeper than 64 levels. */
int floe_avro_schema_parse(struct floe_avro_arena *ar, const struct floe_json *root,
			   const struct floe_avro_schema **out);

#endif

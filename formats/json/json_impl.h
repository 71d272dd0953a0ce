/* The JSON value and member layout and the arena helpers, shared by the DOM (json.c), the
 * reader (json_parse.c) and the writer (json_write.c). Private to formats/json. */
#ifndef FLOE_JSON_IMPL_H
#define FLOE_JSON_IMPL_H

#include "formats/json/json.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct member {
	const char *key; /* NUL-terminated; klen bytes (may contain NUL) */
	size_t klen;
	uint32_t hash; /* of the key: a cheap filter before memcmp in lookups */
	struct floe_json *val;
};

struct floe_json {
	uint8_t type;
	bool b;
	union {
		int64_t i;
		struct {
			char *p; /* NUL-terminated */
			size_t len;
		} s; /* STRING, and NUMBER as source text */
		struct {
			struct floe_json **v;
			size_t len, cap;
		} arr;
		struct {
			struct member *m;
			size_t len, cap;
		} obj;
	} u;
};

/* Returns n bytes of max_align_t-aligned arena memory owned by d (freed with it), or NULL
 * when out of memory or n overflows. */
void *floe_json_arena_alloc(struct floe_json_doc *d, size_t n);
/* Copies s[0..len) into the arena with a NUL after it; owned by d, or NULL. */
char *floe_json_arena_strndup(struct floe_json_doc *d, const char *s, size_t len);
/* FNV-1a of s[0..len): the hash kept in struct member. */
uint32_t floe_json_hash_key(const char *s, size_t len);
/* A zeroed value of type t, owned by d, or NULL when out of memory. */
struct floe_json *floe_json_new_value(struct floe_json_doc *d, enum floe_json_type t);

#endif

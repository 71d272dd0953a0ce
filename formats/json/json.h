/* JSON reader and writer. The reader builds a DOM in an arena that keeps everything the
 * input had: object members in their order, integers exactly as int64 (Iceberg snapshot
 * ids use 63 bits, so a double would corrupt them), and numbers that are not integers as
 * their source text. So a document that floe rewrites keeps the fields it does not
 * understand. Pure over (ptr, len): no I/O, no reliance on NUL termination. */
#ifndef FLOE_JSON_H
#define FLOE_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct floe_alloc;
struct floe_buf;
struct floe_err;

enum floe_json_type {
	FLOE_JSON_NULL,
	FLOE_JSON_BOOL,
	FLOE_JSON_INT,    /* fits int64 exactly */
	FLOE_JSON_NUMBER, /* any other number, kept as its source text */
	FLOE_JSON_STRING,
	FLOE_JSON_ARRAY,
	FLOE_JSON_OBJECT,
};

/* A document: owns every value and string in it. */
struct floe_json_doc;
/* A value inside a document; valid until the document is freed. */
struct floe_json;

/* Parses len bytes of text. On success *out owns the document (free with
 * floe_json_doc_free). On failure returns FLOE_EPARSE (or FLOE_ENOMEM / FLOE_ELIMIT), sets
 * *out to NULL and fills err (may be NULL) with the byte offset of the error and what it
 * is. Nesting deeper than 64 levels and documents over max_bytes (0 = no limit) are
 * refused with FLOE_ELIMIT. Input must be valid UTF-8; lone surrogate escapes are
 * rejected. */
int floe_json_parse(struct floe_alloc *a, const char *text, size_t len, size_t max_bytes,
		    struct floe_json_doc **out, struct floe_err *err);
/* An empty document for building values from scratch, in *out (owned by the caller;
 * free with floe_json_doc_free). Returns 0 or FLOE_ENOMEM. */
int floe_json_doc_new(struct floe_alloc *a, struct floe_json_doc **out);
/* Frees doc and every value in it; NULL is a no-op. */
void floe_json_doc_free(struct floe_json_doc *doc);
/* As floe_json_doc_free, wiping the document's memory first (a document that held
 * secrets: credentials, tokens). */
void floe_json_doc_free_wiped(struct floe_json_doc *doc);
/* The root value (NULL for a new, empty document until one is set). */
struct floe_json *floe_json_root(struct floe_json_doc *doc);
void floe_json_set_root(struct floe_json_doc *doc, struct floe_json *v);

/* Reading. All accessors accept NULL and then return the "absent" answer. */
enum floe_json_type floe_json_type(const struct floe_json *v);
bool floe_json_is(const struct floe_json *v, enum floe_json_type t);
/* Member of an object by name, or NULL. */
struct floe_json *floe_json_get(const struct floe_json *obj, const char *name);
/* Number of elements (array) or members (object); 0 otherwise. */
size_t floe_json_len(const struct floe_json *v);
/* i-th element of an array or i-th member value of an object, or NULL. */
struct floe_json *floe_json_at(const struct floe_json *v, size_t i);
/* Name of the i-th member of an object (NUL-terminated), or NULL. */
const char *floe_json_key_at(const struct floe_json *obj, size_t i);
/* Returns 0 and the value if v is of the right type, FLOE_EFORMAT otherwise. */
int floe_json_int(const struct floe_json *v, int64_t *out);
int floe_json_bool(const struct floe_json *v, bool *out);
/* String value: NUL-terminated, *len (may be NULL) gets the byte length (strings may
 * contain \u0000, so use the length). */
int floe_json_str(const struct floe_json *v, const char **out, size_t *len);
/* Conveniences: member name of obj as int/string; FLOE_ENOTFOUND if absent. */
int floe_json_get_int(const struct floe_json *obj, const char *name, int64_t *out);
int floe_json_get_str(const struct floe_json *obj, const char *name, const char **out);

/* Building. New values belong to doc; they return NULL when out of memory. */
struct floe_json *floe_json_new_null(struct floe_json_doc *doc);
struct floe_json *floe_json_new_bool(struct floe_json_doc *doc, bool b);
struct floe_json *floe_json_new_int(struct floe_json_doc *doc, int64_t i);
struct floe_json *floe_json_new_str(struct floe_json_doc *doc, const char *s, size_t len);
struct floe_json *floe_json_new_array(struct floe_json_doc *doc);
struct floe_json *floe_json_new_object(struct floe_json_doc *doc);
/* Appends v to array arr. */
int floe_json_push(struct floe_json_doc *doc, struct floe_json *arr, struct floe_json *v);
/* Sets member name of obj to v: replaces an existing member in place (keeping its
 * position), or appends a new one. */
int floe_json_set(struct floe_json_doc *doc, struct floe_json *obj, const char *name,
		  struct floe_json *v);
/* Removes member name from obj if present (0 either way). */
int floe_json_remove(struct floe_json *obj, const char *name);
/* Deep-copies v (from any document) into doc. */
struct floe_json *floe_json_clone(struct floe_json_doc *doc, const struct floe_json *v);

/* Writing. Appends the compact serialisation of v to out (strings escaped as JSON
 * requires; non-integer numbers written as their source text). */
int floe_json_write(const struct floe_json *v, struct floe_buf *out);
/* Appends s[0..len) to out as a quoted, escaped JSON string. */
int floe_json_write_str(struct floe_buf *out, const char *s, size_t len);

#endif

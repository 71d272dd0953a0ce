/* One JSON object per line into key/value fields, with a streaming scanner (no DOM):
 * top-level members become fields, nested objects are flattened to dotted keys ("a.b")
 * up to a depth limit, arrays and deeper objects are kept as their raw JSON text,
 * numbers and booleans as their text, null as a null value. Strict RFC 8259 grammar. */
#ifndef FLOE_JSON_LINE_H
#define FLOE_JSON_LINE_H

#include <stddef.h>

struct floe_err;
struct floe_fields;

/* Largest flattening depth accepted (larger values are clamped). */
#define FLOE_JSON_LINE_MAX_DEPTH 16
/* Hard nesting limit for any value, flattened or kept raw: deeper is FLOE_ELIMIT. */
#define FLOE_JSON_LINE_MAX_NEST 256

/* Parses p[0..len) (no NUL needed; surrounding whitespace allowed) as one JSON object and
 * appends its members to f. max_depth is how many object levels become dotted keys: 1
 * keeps every nested object as raw text, 2 gives "a.b" but keeps a.b's members raw, and
 * so on (0 is treated as 1). Values:
 *   string      the unescaped bytes (a slice of p when it has no escapes; \u escapes
 *               become UTF-8, a lone surrogate becomes U+FFFD; other bytes, including
 *               invalid UTF-8, pass through unchanged)
 *   number      its text, as written (no range limit)
 *   true/false  "true"/"false"
 *   null        a null value
 *   array       its raw JSON text (a slice of p)
 *   object      flattened; an empty object, or one deeper than max_depth, is raw text
 * Keys are unescaped the same way; duplicate keys keep the last value (floe_fields_add).
 * Pairs that do not fit f's capacity are dropped and counted there, not errors.
 * Returns 0; FLOE_EPARSE for invalid JSON or a top level that is not an object, and
 * FLOE_ELIMIT for nesting beyond FLOE_JSON_LINE_MAX_NEST, both with err (may be NULL)
 * holding the byte offset of the problem. On failure f is reset (empty): the caller keeps
 * the line as the message and counts the failure. Borrows p: values point into it. */
int floe_json_line_parse(const char *p, size_t len, unsigned max_depth, struct floe_fields *f,
			 struct floe_err *err);

/* Unescapes the body of a JSON string (between the quotes, validated or not) into dst
 * (cap bytes); *out_len receives the length, never more than n. Returns 0, FLOE_EPARSE
 * for an invalid or truncated escape, or FLOE_ELIMIT when the result does not fit. */
int floe_json_unescape(const char *s, size_t n, char *dst, size_t cap, size_t *out_len);

#endif

/* logfmt lines (`key=value key2="quoted \"value\"" flag`) into key/value fields, following
 * the conventions of Go's go-logfmt decoder where they matter for real logs. */
#ifndef FLOE_LOGFMT_H
#define FLOE_LOGFMT_H

#include <stddef.h>

struct floe_err;
struct floe_fields;

/* Parses p[0..len) (no NUL needed) and appends its pairs to f. Rules:
 *   - pairs are separated by runs of bytes <= ' ' (space, tab, CR, NUL, ...);
 *   - a key is a run of bytes > ' ' other than '=' and '"';
 *   - `key=value`: an unquoted value runs to the next separator and may contain '=' and
 *     '"' (go-logfmt rejects those; real logs put URLs with query strings there, so we
 *     keep them as bytes);
 *   - `key="..."`: a quoted value with Go-style escapes \" \\ \/ \b \f \n \r \t \uXXXX
 *     (UTF-16 surrogate pairs combined, a lone surrogate becomes U+FFFD); it must be
 *     followed by a separator or the end;
 *   - `key=` is an empty value; a bare `key` (no '=') is also an empty value: go-logfmt
 *     reports it as a nil value, but in the attrs map a null is indistinguishable from an
 *     absent key for SQL readers, and "flag present" is what a bare key means;
 *   - bytes >= 0x80 (UTF-8 or not) are ordinary key/value bytes.
 * Values are slices of p except quoted values with escapes (unescaped into f's arena).
 * Duplicate keys keep the last value. Returns 0, or FLOE_EPARSE with err (may be NULL)
 * holding the offending byte's offset, for: a pair starting with '=' (empty key), a '"' inside a
 * key, an unterminated quoted value, an invalid escape, or a quoted value followed by
 * something other than a separator. On failure f is reset. Borrows p. */
int floe_logfmt_parse(const char *p, size_t len, struct floe_fields *f, struct floe_err *err);

#endif

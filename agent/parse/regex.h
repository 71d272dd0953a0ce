/* POSIX extended regular expressions over (ptr, len) lines, with named capture groups.
 * POSIX has no named groups, so the configured pattern's `(?<name>...)` groups are
 * translated to plain groups once, keeping the sub-match index of each name; a match then
 * fills fields with name = captured text. */
#ifndef FLOE_REGEX_H
#define FLOE_REGEX_H

#include <stdbool.h>
#include <stddef.h>

struct floe_alloc;
struct floe_err;
struct floe_fields;
struct floe_regex;

/* Flags for floe_regex_new. */
#define FLOE_REGEX_NOSUB 1u /* only ever tested (multiline start patterns): faster */
#define FLOE_REGEX_ICASE 2u /* case-insensitive (ASCII, C locale) */

/* Most named groups in one pattern. */
#define FLOE_REGEX_MAX_NAMES 64

/* Compiles pattern[0..plen) as a POSIX ERE (REG_EXTENDED) after translating:
 *   (?<name>...) and (?P<name>...)  a group whose match becomes field `name`; names are
 *                                   [A-Za-z_][A-Za-z0-9_]*, at most 64 bytes, unique
 *   (?:...)                         a plain group (counted, not captured as a field)
 * Any other "(?" construct (lookaround, flags) is rejected. Escaped parens "\(" and
 * parens inside bracket expressions ("[()]", including "[]()]" and "[[:alpha:](]") are
 * literal and not counted. Named groups may nest; each name maps to its own sub-match.
 * Lines longer than max_line_bytes are refused at match time (FLOE_ELIMIT); the bound is
 * also the size of the copy buffer used when the C library lacks REG_STARTEND.
 * Returns 0 and the compiled regex in *out (owned; floe_regex_free), or FLOE_EINVAL for a
 * bad pattern (the reason in err, may be NULL), FLOE_ENOMEM (*out untouched). Borrows
 * pattern only during the call. */
int floe_regex_new(struct floe_alloc *a, const char *pattern, size_t plen, size_t max_line_bytes,
		   unsigned flags, struct floe_regex **out, struct floe_err *err);
void floe_regex_free(struct floe_regex *r);

/* Number of named groups, and the k-th name (borrowed, not NUL-terminated). */
size_t floe_regex_name_count(const struct floe_regex *r);
const char *floe_regex_name(const struct floe_regex *r, size_t k, size_t *len);

/* Tests line[0..len) (no NUL needed). With REG_STARTEND (glibc, BSDs) NUL bytes are part
 * of the subject: bracket expressions like [^x] match them, although glibc's '.' does
 * not; without it the line is copied and a NUL ends the subject early.
 * Returns 0 with *matched, FLOE_ELIMIT for a line over max_line_bytes, FLOE_ENOMEM if the
 * regex engine ran out of memory. Not thread-safe (r holds the match scratch). */
int floe_regex_test(struct floe_regex *r, const char *line, size_t len, bool *matched);

/* As floe_regex_test, and on a match appends one field per named group that took part in
 * the match (a group that did not participate, like the untaken side of "|", adds
 * nothing), in pattern order, values being slices of line. Borrows line. */
int floe_regex_capture(struct floe_regex *r, const char *line, size_t len, struct floe_fields *f,
		       bool *matched);

#endif

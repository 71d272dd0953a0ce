/* Regular expressions over (ptr, len) lines with named capture groups, through PCRE2 (the
 * Perl dialect: \d, \s, \w, lookaround, lazy and possessive repeats), JIT-compiled where
 * the platform has PCRE2's JIT (x86-64, arm64, armhf) and interpreted elsewhere. A match
 * fills fields with name = captured text, slices of the line. Each match runs under a
 * work budget that grows with the line's length but not with the pattern's appetite, so
 * no line can hold the agent for long: a line that exhausts it is a failure
 * (FLOE_ELIMIT), for the caller to count. A build without PCRE2 (FLOE_WITH_PCRE2=OFF) has the
 * same functions, which refuse every pattern (regex_none.c). */
#ifndef FLOE_REGEX_H
#define FLOE_REGEX_H

#include <stdbool.h>
#include <stddef.h>

struct floe_alloc;
struct floe_err;
struct floe_fields;
struct floe_regex;

/* Flags for floe_regex_new. */
#define FLOE_REGEX_NOSUB 1u /* only ever tested (multiline start patterns): no captures */
#define FLOE_REGEX_ICASE 2u /* case-insensitive */

/* Most named groups in one pattern (the decoder's field table holds 64 pairs). */
#define FLOE_REGEX_MAX_NAMES 64
/* Longest pattern accepted. */
#define FLOE_REGEX_MAX_PATTERN 4096

/* The work budget of one match: PCRE2's match limit for a line of n bytes is
 * FLOE_REGEX_WORK / (n + 1), kept within [FLOE_REGEX_MIN_STEPS, FLOE_REGEX_MAX_STEPS].
 * A step of PCRE2's count can be followed by a scan of the rest of the line that it does
 * not count (a repeat that runs to the end and fails), so steps times line length is
 * what bounds the time: about FLOE_REGEX_WORK byte-steps for lines up to
 * FLOE_REGEX_WORK / FLOE_REGEX_MIN_STEPS bytes (128 KiB), linear in the length beyond.
 * tests/bench/parse.sh measures the worst lines it knows against this bound. */
#define FLOE_REGEX_WORK ((size_t)1 << 27)
#define FLOE_REGEX_MIN_STEPS 1000u
#define FLOE_REGEX_MAX_STEPS 1000000u
/* The interpreter's backtracking memory per match (PCRE2's heap limit, in KiB), from the
 * regex's allocator; and the JIT's stack (mapped by PCRE2 once per regex, up to this). */
#define FLOE_REGEX_HEAP_KIB 1024u
#define FLOE_REGEX_JIT_STACK ((size_t)512 << 10)

/* Compiles pattern[0..plen) (no NUL needed; a NUL byte in it is refused) once:
 *   (?<name>...), (?P<name>...), (?'name'...)  a group whose match becomes field `name`
 *                                              (PCRE2's names: [A-Za-z_][A-Za-z0-9_]*, at
 *                                              most 32 bytes; duplicates only with (?J))
 *   any other group                            matched, not captured as a field
 * A pattern that PCRE2 does not find anchored (it does not start with ^ or \A in every
 * branch) is tried at each position of the line within the same work budget as one
 * match, by a lazy scan in front of it, so that the budget covers the positions too:
 * on lines over about FLOE_REGEX_WORK / FLOE_REGEX_MIN_STEPS bytes such a pattern only
 * finds matches that start in the line's first few thousand bytes. Lines longer than
 * max_line_bytes are refused at match time (FLOE_ELIMIT).
 * Returns 0 and the regex in *out (owned; floe_regex_free), or FLOE_EINVAL for a bad
 * pattern with PCRE2's message and the byte offset in err (may be NULL; err->offset),
 * FLOE_EUNSUPPORTED in a build without PCRE2, FLOE_ENOMEM (*out untouched). The memory
 * PCRE2 allocates comes from a; the JIT's code and stack are mapped by PCRE2 itself.
 * Borrows pattern only during the call. */
int floe_regex_new(struct floe_alloc *a, const char *pattern, size_t plen, size_t max_line_bytes,
		   unsigned flags, struct floe_regex **out, struct floe_err *err);
void floe_regex_free(struct floe_regex *r);

/* Whether this build has a regex engine (false with FLOE_WITH_PCRE2=OFF). */
bool floe_regex_available(void);
/* Whether r runs as JIT-compiled code (false: PCRE2's interpreter). */
bool floe_regex_jit(const struct floe_regex *r);
/* Whether this build's PCRE2 has a JIT for this machine: r not running JIT-compiled then
 * means the JIT refused the pattern or could not map executable memory. */
bool floe_regex_jit_built(void);

/* Number of named groups, and the k-th name in pattern order (borrowed from r, not
 * NUL-terminated). */
size_t floe_regex_name_count(const struct floe_regex *r);
const char *floe_regex_name(const struct floe_regex *r, size_t k, size_t *len);

/* Tests line[0..len) (no NUL needed; NUL bytes are subject bytes). Returns 0 with
 * *matched; FLOE_ELIMIT for a line over max_line_bytes or one that exhausted the work
 * budget (or the backtracking memory); FLOE_ENOMEM when the allocator ran out; FLOE_EPARSE
 * for a line PCRE2 refuses (invalid UTF-8 under a pattern's (*UTF) is not one: it just
 * does not match there). *matched is false on every error. Not thread-safe (r holds the
 * match scratch). */
int floe_regex_test(struct floe_regex *r, const char *line, size_t len, bool *matched);

/* As floe_regex_test, and on a match appends one field per named group that took part in
 * the match (a group that did not participate, like the untaken side of "|", adds
 * nothing), in pattern order, values being slices of line, each with its name's index k
 * (floe_regex_name) as its id (floe_fields_add_id). Borrows line. */
int floe_regex_capture(struct floe_regex *r, const char *line, size_t len, struct floe_fields *f,
		       bool *matched);

#endif

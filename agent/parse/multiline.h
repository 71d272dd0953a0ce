/* Multiline grouping: consecutive lines become one record, a new record starting at each
 * line that matches a start pattern (agent/parse/regex.h); the lines in between are
 * appended with '\n'. Records are capped by max_lines and max_bytes and flushed after a quiet period
 * measured on an injected clock. Pure: no I/O, no clock of its own. */
#ifndef FLOE_MULTILINE_H
#define FLOE_MULTILINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct floe_alloc;
struct floe_err;
struct floe_multiline;

struct floe_multiline_opts {
	const char *start; /* regex; a matching line starts a new record (borrowed) */
	size_t start_len;
	size_t max_lines;      /* lines per record; 0 = 500 */
	size_t max_bytes;      /* bytes per record, '\n' separators included; 0 = 1 MiB */
	int64_t timeout_us;    /* flush a held record after this long without a line; 0 = 1 s */
	size_t max_line_bytes; /* only the first max_line_bytes of a line are tested; 0 = 64 KiB */
};

/* An emitted record. p borrows the multiline object's buffer: valid until the next call
 * on the object. */
struct floe_multiline_rec {
	const char *p;
	size_t len;
	int64_t offset;	    /* offset of the first line's first byte */
	int64_t end_offset; /* the end_offset given with the last line */
	size_t nlines;
	bool truncated; /* bytes beyond max_bytes were cut */
};

struct floe_multiline_stats {
	uint64_t records;      /* records emitted */
	uint64_t by_max_lines; /* records ended because they reached max_lines */
	uint64_t by_max_bytes; /* records ended because the next line would not fit */
	uint64_t by_timeout;   /* records ended by floe_multiline_poll */
	uint64_t truncated;    /* records with bytes cut (a single line over max_bytes) */
	uint64_t start_errors; /* lines the start pattern could not decide (work budget) */
};

/* Compiles the start pattern and reserves both record buffers (2 x max_bytes) from a,
 * so pushing never allocates. Returns 0 and the object in *out (owned;
 * floe_multiline_free), or FLOE_EINVAL (bad pattern, the reason in err, may be NULL),
 * FLOE_ENOMEM (*out untouched). */
int floe_multiline_new(struct floe_alloc *a, const struct floe_multiline_opts *o,
		       struct floe_multiline **out, struct floe_err *err);
void floe_multiline_free(struct floe_multiline *m);

/* Feeds one line (without its newline; borrowed for the call only) occupying file bytes
 * [offset, end_offset). If the line closes the held record (it matches the start
 * pattern, or the held record is at max_lines, or the line would push it past
 * max_bytes), that record is emitted: *emitted = true and *out is filled. The line itself
 * is then held. At most one record per call. A line longer than max_bytes on its own is
 * cut to max_bytes (counted). A line the start pattern cannot decide within its work budget
 * is taken as a continuation (counted in start_errors). Returns 0 or FLOE_ENOMEM (regex
 * engine), in which case nothing changed and the line may be pushed again. */
int floe_multiline_push(struct floe_multiline *m, const char *line, size_t len, int64_t offset,
			int64_t end_offset, int64_t now_us, struct floe_multiline_rec *out,
			bool *emitted);
/* Emits the held record if no line came for timeout_us (now_us - last push). */
void floe_multiline_poll(struct floe_multiline *m, int64_t now_us, struct floe_multiline_rec *out,
			 bool *emitted);
/* Emits the held record now (end of input, shutdown). */
void floe_multiline_flush(struct floe_multiline *m, struct floe_multiline_rec *out, bool *emitted);

/* Exactly-once contract. A line's bytes are "covered" once it is part of an emitted
 * record. When a record is held, pending returns true with *offset = the offset of its
 * first line: bytes from there on are not covered yet. The runner must therefore never
 * let a file's checkpoint pass min(pending offset, end of the last line pushed) — i.e.
 * while something is held, the safe position is the pending offset; when nothing is
 * held, it is the end_offset of the last emitted record. On restart from that position
 * the held lines are read again and regrouped identically (unless a timeout had split
 * them, which only changes grouping, never loses or duplicates a line). */
bool floe_multiline_pending(const struct floe_multiline *m, int64_t *offset);

void floe_multiline_get_stats(const struct floe_multiline *m, struct floe_multiline_stats *s);

#endif

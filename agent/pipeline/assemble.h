/* Record assembly per input: lines of each source file go through that file's own
 * container-log joiner (CRI / Docker json-file partial lines) and/or multiline grouper,
 * so lines of different files are never grouped together. States are bounded (LRU
 * eviction flushes a state, counted) and report the offset of their oldest kept line,
 * which the runner turns into tail holds (exactly-once: a saved position never covers a
 * line that is not yet in a record). */
#ifndef FLOE_ASSEMBLE_H
#define FLOE_ASSEMBLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct floe_alloc;
struct floe_err;
struct floe_assemble;

enum floe_assemble_format {
	FLOE_ASSEMBLE_RAW = 0, /* lines are messages (multiline grouping may still apply) */
	FLOE_ASSEMBLE_CRI,
	FLOE_ASSEMBLE_DOCKER,
};

struct floe_assemble_options {
	enum floe_assemble_format format;
	const char *start;     /* multiline start regex (borrowed; NULL = no grouping) */
	size_t max_lines;      /* multiline: 0 = 500 */
	size_t max_bytes;      /* multiline record cap: 0 = 1 MiB */
	size_t max_line_bytes; /* joined container message cap, and the part of a line
				  the start pattern sees (at most 64 KiB): 0 = 1 MiB */
	int64_t timeout_us;    /* multiline flush and container partial timeout: 0 = 5 s */
	size_t max_states;     /* files with a state at most: 0 = 256 */
};

/* One assembled record. Slices borrow the assembler's (or the line's) bytes: valid during
 * the emit callback only. */
struct floe_assemble_rec {
	uint64_t file_id; /* the tail's id of the file it came from */
	const char *path; /* the file's path when its last line was pushed */
	const char *msg;
	size_t len;
	int64_t offset;	    /* the first line's offset */
	int64_t end_offset; /* just past the last line */
	bool has_ts;	    /* container formats: the runtime's time of the first piece */
	int64_t ts_us;
	const char *stream; /* container formats: "stdout"/"stderr" (NULL when unknown) */
	size_t stream_len;
};

/* Receives each record, in file order per file. 0 = taken (added or kept by the callee);
 * 1 = taken, but poll and flush should stop after the current file's state (the callee is
 * keeping records and wants to make room); a negative code stops the call that emitted it
 * and is returned by it. */
typedef int (*floe_assemble_emit_fn)(void *ctx, const struct floe_assemble_rec *rec);

struct floe_assemble_stats {
	uint64_t records;	/* records emitted */
	uint64_t lines;		/* lines pushed */
	uint64_t evictions;	/* states flushed to make room for another file */
	uint64_t timeouts;	/* records emitted by the quiet-period timeout */
	uint64_t format_errors; /* lines not in the container format (kept as messages) */
	uint64_t truncated;	/* records cut to their byte cap */
	uint64_t incomplete;	/* container messages emitted without their final piece */
	uint64_t by_max_lines;	/* multiline records ended by max_lines */
	uint64_t states;	/* states held now */
};

/* Validates o (the start pattern is compiled once here; err, may be NULL, gets the
 * reason) and makes an assembler: 0 and *out (owned; floe_assemble_free), or FLOE_EINVAL,
 * FLOE_ENOMEM (*out untouched). Memory for per-file states comes from a (borrowed) as
 * files appear. */
int floe_assemble_new(struct floe_alloc *a, const struct floe_assemble_options *o,
		      struct floe_assemble **out, struct floe_err *err);
/* Frees everything, dropping held lines (their files' holds keep them for a restart). */
void floe_assemble_free(struct floe_assemble *as);

/* Feeds one line of file file_id (path and line borrowed for the call) occupying
 * [offset, end_offset), received at now_us (monotonic clock, for the timeouts). Emits 0
 * or more records through fn. A line whose offset is below the file's last end starts a
 * new generation: what the file's state held is emitted first. When a new file needs a
 * state and there are max_states of them, or memory runs out, the least recently used
 * state is flushed and freed (counted). Returns 0; FLOE_ENOMEM when no state could be
 * made or a joiner could not allocate, with the line NOT consumed (records emitted by
 * evictions are out; push the same line again later); or fn's error (the line was
 * consumed: the caller must treat this as fatal for its unsaved state). fn asking to stop
 * does not stop a push: every record the line completes is emitted (at most 4). */
int floe_assemble_push(struct floe_assemble *as, uint64_t file_id, const char *path,
		       const char *line, size_t len, int64_t offset, int64_t end_offset,
		       int64_t now_us, floe_assemble_emit_fn fn, void *ctx);
/* Emits what the timeouts say is complete (quiet for timeout_us); states left empty
 * and idle for 4 timeouts are freed. Returns 0, 1 when fn asked to stop (the states after
 * it are polled next time), or fn's error. */
int floe_assemble_poll(struct floe_assemble *as, int64_t now_us, floe_assemble_emit_fn fn,
		       void *ctx);
/* Emits everything held, in every state (end of `--once`). Returns 0, 1 when fn asked
 * to stop (call again: the states already drained emit nothing), or fn's error. */
int floe_assemble_flush(struct floe_assemble *as, floe_assemble_emit_fn fn, void *ctx);

/* Calls hold(ctx, file_id, offset) once per state that holds lines, with the offset of
 * its oldest held line. */
void floe_assemble_pending(const struct floe_assemble *as,
			   void (*hold)(void *ctx, uint64_t file_id, int64_t offset), void *ctx);

void floe_assemble_get_stats(const struct floe_assemble *as, struct floe_assemble_stats *out);

#endif

/* Container runtime log lines: CRI ("2016-10-06T00:17:09.669794202Z stdout P text", as
 * written by containerd and CRI-O) and Docker's json-file driver ({"log":"text\n",
 * "stream":"stderr","time":"..."}). Both split long lines into partial pieces; the joiner
 * puts the pieces of one stream back together, bounded, with the same offset-coverage rule
 * as multiline grouping. */
#ifndef FLOE_CONTAINER_H
#define FLOE_CONTAINER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct floe_alloc;
struct floe_err;
struct floe_fields;
struct floe_container;

enum floe_container_format {
	FLOE_CONTAINER_CRI = 1,
	FLOE_CONTAINER_DOCKER = 2,
	FLOE_CONTAINER_AUTO = 3, /* a line starting with '{' is Docker, anything else CRI */
};

/* One parsed line. Slices borrow the line (or, for Docker, the fields arena). */
struct floe_container_piece {
	int64_t ts_us;
	const char *stream;
	size_t stream_len;
	bool partial; /* more pieces of the same line follow */
	const char *msg;
	size_t len;
};

/* Parses a CRI line: RFC 3339 time (nanoseconds truncated to µs), one space, the stream,
 * one space, tags ("P" or "F", optionally followed by ":"-separated tags which are
 * ignored), then one space and the message (the rest of the line, may be empty; the
 * space may be missing when it is). Returns 0 or FLOE_EPARSE with err (may be NULL)
 * holding the offset of the offending byte. */
int floe_cri_parse(const char *p, size_t len, struct floe_container_piece *out,
		   struct floe_err *err);

/* Parses a Docker json-file line with f as scratch (reset first; must hold at least the
 * line's members, 8 pairs is plenty, and an arena as large as the escaped "log" value):
 * "log" unescaped, one trailing "\n" removed (its absence marks a partial piece, as
 * Docker splits lines at 16 KiB), "stream", "time" (RFC 3339). Returns 0, FLOE_EPARSE
 * (invalid JSON, no "log" string, bad time; err holds the byte offset), or FLOE_ELIMIT
 * (the log value did not fit f). */
int floe_docker_parse(const char *p, size_t len, struct floe_fields *f,
		      struct floe_container_piece *out, struct floe_err *err);

/* A joined message. msg borrows the line or the joiner's buffers: valid until the next
 * call on the joiner. */
struct floe_container_rec {
	const char *msg;
	size_t len;
	int64_t ts_us; /* time of the first piece */
	const char *stream;
	size_t stream_len;
	int64_t offset;	    /* offset of the first piece's line */
	int64_t end_offset; /* end_offset of the last piece's line */
	size_t npieces;
	bool truncated;	 /* pieces beyond max_bytes were cut */
	bool incomplete; /* flushed without its final piece (timeout or flush) */
};

struct floe_container_opts {
	enum floe_container_format format;
	size_t max_bytes;   /* joined message cap; 0 = 1 MiB */
	int64_t timeout_us; /* flush partial pieces after this long; 0 = 5 s */
};

/* Makes a joiner: 0 and *out (owned; floe_container_free), or FLOE_ENOMEM (*out
 * untouched). Its two join buffers (2 x max_bytes) are allocated on the first partial
 * piece and kept, so steady state does not allocate. */
int floe_container_new(struct floe_alloc *a, const struct floe_container_opts *o, struct floe_container **out);
void floe_container_free(struct floe_container *c);

/* Feeds one line (without its newline; borrowed for the call) occupying file bytes
 * [offset, end_offset), and emits 0, 1 or 2 messages into out[0..*nout), in file order.
 * The joiner holds at most one unfinished message: a partial piece is appended to it
 * (same stream) and a final piece completes it. A piece of another stream while a
 * message is held flushes the held one first, marked incomplete and counted: runtimes
 * may interleave stdout and stderr pieces, and joining across that would emit messages
 * out of file order, which the exactly-once rule below cannot express. A whole line
 * (final piece, nothing held) is emitted without a copy. Messages borrow the line, the
 * joiner's buffers or its fields arena: valid until the next call on the joiner.
 * Returns 0; FLOE_EPARSE with err (may be NULL) holding the offset, for a line that is
 * not in the format, or FLOE_ELIMIT for a Docker line whose members or log text do not fit the
 * scratch: in both cases the held message, if any, is flushed (incomplete) into out[0]
 * with *nout = 1, and the caller then keeps the bad line as a plain message of its own,
 * so messages stay in file order; or FLOE_ENOMEM (first use of the join buffers; nothing
 * changed, *nout = 0). */
int floe_container_push(struct floe_container *c, const char *line, size_t len, int64_t offset,
			int64_t end_offset, int64_t now_us, struct floe_container_rec out[2],
			size_t *nout, struct floe_err *err);
/* Emits the held message (incomplete) if no piece came for timeout_us. */
void floe_container_poll(struct floe_container *c, int64_t now_us, struct floe_container_rec *out,
			 bool *emitted);
/* Emits the held message now (end of input; incomplete). */
void floe_container_flush(struct floe_container *c, struct floe_container_rec *out, bool *emitted);
/* Exactly-once, as for multiline: true with *offset = the first piece's offset of the held
 * message. Emitted messages always end before it, so the runner's checkpoint for the file
 * may advance to the end_offset of the last emitted message but never past a pending
 * offset; on restart the held pieces are read again and joined again. */
bool floe_container_pending(const struct floe_container *c, int64_t *offset);

/* Messages cut to max_bytes, and messages emitted without their final piece. */
void floe_container_counts(const struct floe_container *c, uint64_t *truncated,
			   uint64_t *incomplete);

#endif

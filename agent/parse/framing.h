/* Syslog over a stream (TCP, TLS, unix stream sockets): RFC 6587 framing. A framer is a
 * per-connection state machine fed chunks of any size (1 byte up) that hands back whole
 * frames, each either octet-counted (`LEN SP MSG`) or non-transparent (MSG ended by LF,
 * CRLF or NUL), told apart on the first byte of each frame: a digit means octet counting
 * (RFC 6587 section 3.4.1, and what rsyslog does). Memory is a small constant, plus a
 * buffer that grows with a frame in progress up to max_message_bytes, given back by
 * floe_framer_trim; when the budget refuses the growth the frame is cut there (counted). */
#ifndef FLOE_FRAMING_H
#define FLOE_FRAMING_H

#include <stddef.h>
#include <stdint.h>

struct floe_alloc;
struct floe_framer;

/* Frame flags. */
enum {
	/* The frame was longer than max_message_bytes: these are its first max bytes, the
	 * rest was skipped (octet counting: exactly the announced length; non-transparent:
	 * up to the next LF or NUL). */
	FLOE_FRAME_TRUNCATED = 1u << 0,
	/* The connection closed in the middle of this frame (no trailer yet, or fewer bytes
	 * than announced): what had arrived is kept as a message. */
	FLOE_FRAME_AT_CLOSE = 1u << 1,
	/* The frame began with a digit but no valid octet count (a leading zero, more than
	 * FLOE_FRAMER_MAX_DIGITS digits, or a digit run not ended by SP): it was read as a
	 * non-transparent frame, digits included. */
	FLOE_FRAME_BAD_LENGTH = 1u << 2,
};

/* An octet count of more digits than this (100 MB and up) is no syslog message: it is a
 * bad length, not a frame to skip. */
#define FLOE_FRAMER_MAX_DIGITS 8
/* The smallest max_message_bytes accepted (a bad length's digits always fit). */
#define FLOE_FRAMER_MIN_MESSAGE FLOE_FRAMER_MAX_DIGITS

struct floe_frame {
	const char *p; /* the message bytes, without count or trailer; never NULL */
	size_t len;    /* <= max_message_bytes */
	unsigned flags;
};

/* Counters since creation (reset keeps them). Each is also a frame flag, except frames,
 * which counts every frame handed back. */
struct floe_framer_stats {
	uint64_t frames, truncated, bad_length, flushed_at_close;
	/* Frames cut short because the budget would not let the buffer grow (also counted
	 * in truncated). */
	uint64_t truncated_memory;
};

/* The most bytes a framer for max_message_bytes takes from the allocator (its buffer
 * grown for the longest frame; for budget planning), or 0 when that overflows. */
size_t floe_framer_footprint(size_t max_message_bytes);
/* The bytes a framer holds with no frame in progress after floe_framer_trim. */
size_t floe_framer_idle_footprint(void);

/* Makes a framer for frames of at most max_message_bytes (>= FLOE_FRAMER_MIN_MESSAGE), in
 * one block from a (may be NULL = unbudgeted): 0 and *out (owned), or FLOE_EINVAL for a bad
 * size, FLOE_ENOMEM when the budget is spent (*out untouched). */
int floe_framer_new(struct floe_alloc *a, size_t max_message_bytes, struct floe_framer **out);
/* Releases fr (NULL is fine). */
void floe_framer_free(struct floe_framer *fr);
/* Gives the buffer grown for a long frame back to the allocator when no frame is in
 * progress (call it once the frames of a chunk are used). */
void floe_framer_trim(struct floe_framer *fr);
/* Forgets any partial frame (a new connection); the counters stay. */
void floe_framer_reset(struct floe_framer *fr);

/* Consumes bytes of p[0..n) up to the end of the first frame they complete. *used receives
 * the count consumed (all n when no frame completes). Returns 1 with *out when a frame is
 * complete (call again with p + *used for the rest), 0 when every byte was consumed and
 * the frame in progress needs more. out->p points into fr's buffer and stays valid until
 * the next call on fr. Empty frames (a lone LF, say) are skipped, not returned. Never
 * fails: bad input is truncated, re-read or skipped, and counted. Borrows p. */
int floe_framer_push(struct floe_framer *fr, const char *p, size_t n, size_t *used,
		     struct floe_frame *out);

/* The connection closed: returns 1 with *out (flagged FLOE_FRAME_AT_CLOSE) when a
 * partial frame holds bytes, 0 otherwise, and resets fr for the next connection. */
int floe_framer_close(struct floe_framer *fr, struct floe_frame *out);

/* Copies the counters into *st. */
void floe_framer_stats(const struct floe_framer *fr, struct floe_framer_stats *st);

#endif

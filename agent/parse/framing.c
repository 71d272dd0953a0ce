/* The RFC 6587 framer: a byte-driven state machine whose output depends only on the
 * bytes, never on how they were split into chunks (the unit tests feed every split).
 * Frames are assembled in a buffer that grows with the frame, up to max_message_bytes + 1
 * (the extra byte holds a CR that may turn out to be half of a CRLF trailer), and that
 * floe_framer_trim gives back once no frame is in progress: a listener keeps one framer
 * per connection, and a thousand idle connections must not hold a thousand messages'
 * worth of memory. A small buffer inside the framer serves short frames and the digits
 * of a bad length without any allocation. */
#include "framing.h"

#include "formats/base/alloc.h"
#include "formats/base/error.h"

#include <stdbool.h>
#include <string.h>

/* Bytes of the buffer inside the framer (at least FLOE_FRAMER_MAX_DIGITS + 1). */
#define FRAMER_INLINE 256

enum state {
	S_START,       /* before the first byte of a frame */
	S_COUNT,       /* reading the digits of an octet count */
	S_OCTETS,      /* reading the counted bytes */
	S_SKIP_OCTETS, /* discarding the counted bytes past max */
	S_TEXT,	       /* reading a non-transparent frame */
	S_SKIP_TEXT,   /* discarding a non-transparent frame past max, up to its trailer */
};

struct floe_framer {
	struct floe_alloc *alloc;
	size_t max;
	enum state st;
	size_t len;    /* bytes of the frame in buf */
	size_t remain; /* S_OCTETS, S_SKIP_OCTETS: counted bytes still to come */
	unsigned flags;
	unsigned ndigits;
	char digits[FLOE_FRAMER_MAX_DIGITS];
	struct floe_framer_stats stats;
	char *buf;  /* inline, or from alloc */
	size_t cap; /* of buf */
	char inline_buf[FRAMER_INLINE];
};

size_t floe_framer_footprint(size_t max_message_bytes)
{
	size_t n;
	if (__builtin_add_overflow(max_message_bytes, sizeof(struct floe_framer) + 1, &n))
		return 0;
	return n;
}

size_t floe_framer_idle_footprint(void)
{
	return sizeof(struct floe_framer);
}

/* Room for want more bytes in buf (want <= max + 1 - len), growing it (doubling, at most
 * to max + 1) when it is short. Returns the room there is: less than want when the
 * budget refused the growth. */
static size_t room(struct floe_framer *fr, size_t want)
{
	size_t need = fr->len + want;
	if (need <= fr->cap)
		return want;
	size_t cap = fr->cap;
	while (cap < need)
		cap = cap > (fr->max + 1) / 2 ? fr->max + 1 : cap * 2;
	char *nb = floe_malloc(fr->alloc, cap);
	if (!nb) {
		fr->stats.truncated_memory++;
		return fr->cap - fr->len;
	}
	memcpy(nb, fr->buf, fr->len);
	if (fr->buf != fr->inline_buf)
		floe_free(fr->alloc, fr->buf);
	fr->buf = nb;
	fr->cap = cap;
	return want;
}

void floe_framer_trim(struct floe_framer *fr)
{
	if (fr->buf == fr->inline_buf || (fr->st != S_START && fr->st != S_SKIP_OCTETS &&
					  fr->st != S_SKIP_TEXT && fr->st != S_COUNT))
		return;
	floe_free(fr->alloc, fr->buf);
	fr->buf = fr->inline_buf;
	fr->cap = sizeof(fr->inline_buf);
}

int floe_framer_new(struct floe_alloc *a, size_t max_message_bytes, struct floe_framer **out)
{
	if (max_message_bytes < FLOE_FRAMER_MIN_MESSAGE ||
	    floe_framer_footprint(max_message_bytes) == 0)
		return FLOE_EINVAL;
	struct floe_framer *fr = floe_malloc(a, sizeof(*fr));
	if (!fr)
		return FLOE_ENOMEM;
	memset(fr, 0, sizeof(*fr));
	fr->alloc = a;
	fr->buf = fr->inline_buf;
	fr->cap = sizeof(fr->inline_buf);
	fr->max = max_message_bytes;
	fr->st = S_START;
	*out = fr;
	return 0;
}

void floe_framer_free(struct floe_framer *fr)
{
	if (!fr)
		return;
	if (fr->buf != fr->inline_buf)
		floe_free(fr->alloc, fr->buf);
	floe_free(fr->alloc, fr);
}

void floe_framer_reset(struct floe_framer *fr)
{
	fr->st = S_START;
	fr->len = 0;
	fr->remain = 0;
	fr->flags = 0;
	fr->ndigits = 0;
}

void floe_framer_stats(const struct floe_framer *fr, struct floe_framer_stats *st)
{
	*st = fr->stats;
}

static int emit(struct floe_framer *fr, size_t len, unsigned flags, struct floe_frame *out)
{
	out->p = fr->buf;
	out->len = len;
	out->flags = flags;
	fr->stats.frames++;
	if (flags & FLOE_FRAME_TRUNCATED)
		fr->stats.truncated++;
	if (flags & FLOE_FRAME_AT_CLOSE)
		fr->stats.flushed_at_close++;
	return 1;
}

/* A digit run that is no octet count: its digits start a non-transparent frame. They
 * always fit (max >= FLOE_FRAMER_MAX_DIGITS). */
static void bad_length(struct floe_framer *fr)
{
	memcpy(fr->buf, fr->digits, fr->ndigits);
	fr->len = fr->ndigits;
	fr->ndigits = 0;
	fr->flags = FLOE_FRAME_BAD_LENGTH;
	fr->stats.bad_length++;
	fr->st = S_TEXT;
}

static void start(struct floe_framer *fr, char c)
{
	fr->len = 0;
	fr->flags = 0;
	fr->ndigits = 0;
	if (c >= '0' && c <= '9') {
		fr->st = S_COUNT;
		/* A count has no leading zero (RFC 6587 MSG-LEN = NONZERO-DIGIT *DIGIT). */
		if (c == '0')
			bad_length(fr);
		else
			fr->digits[fr->ndigits++] = c;
	} else {
		fr->st = S_TEXT;
	}
}

/* One byte of an octet count (the state does not consume a byte it hands on). */
static size_t count_byte(struct floe_framer *fr, char c)
{
	if (c >= '0' && c <= '9') {
		if (fr->ndigits == FLOE_FRAMER_MAX_DIGITS) {
			bad_length(fr);
			return 0;
		}
		fr->digits[fr->ndigits++] = c;
		return 1;
	}
	if (c != ' ') {
		bad_length(fr);
		return 0;
	}
	size_t v = 0;
	for (unsigned k = 0; k < fr->ndigits; k++)
		v = v * 10 + (size_t)(fr->digits[k] - '0');
	fr->ndigits = 0;
	fr->remain = v;
	fr->st = S_OCTETS;
	return 1;
}

/* Counted bytes: returns 1 when a frame is out. */
static int octets(struct floe_framer *fr, const char *p, size_t n, size_t *i,
		  struct floe_frame *out)
{
	size_t take = n - *i < fr->remain ? n - *i : fr->remain;
	size_t left = fr->max - fr->len;
	size_t copy = room(fr, take < left ? take : left);
	if (copy > take)
		copy = take;
	memcpy(fr->buf + fr->len, p + *i, copy);
	fr->len += copy;
	*i += copy;
	fr->remain -= copy;
	if (fr->remain == 0) {
		fr->st = S_START;
		return fr->len ? emit(fr, fr->len, fr->flags, out) : 0;
	}
	if (fr->len == fr->max || copy < (take < left ? take : left)) {
		/* At max, or the budget would not hold more: the rest is skipped. */
		fr->st = S_SKIP_OCTETS;
		return emit(fr, fr->len, fr->flags | FLOE_FRAME_TRUNCATED, out);
	}
	return 0;
}

/* The offset of the first LF or NUL in p[i..n), or n. */
static size_t trailer(const char *p, size_t i, size_t n)
{
	const char *lf = memchr(p + i, '\n', n - i);
	size_t end = lf ? (size_t)(lf - p) : n;
	const char *nul = memchr(p + i, '\0', end - i);
	return nul ? (size_t)(nul - p) : end;
}

/* Non-transparent bytes: returns 1 when a frame is out. */
static int text(struct floe_framer *fr, const char *p, size_t n, size_t *i, struct floe_frame *out)
{
	size_t j = trailer(p, *i, n), chunk = j - *i;
	/* A CR held in the spare byte must be followed by the trailer; anything else means
	 * the frame is over max. */
	bool over = chunk > 0 && fr->len > fr->max;
	if (!over) {
		size_t left = fr->max - fr->len, copy = chunk < left ? chunk : left;
		/* One byte more for a CR at max; short of the budget, the frame ends here. */
		size_t got = room(fr, copy + (copy < chunk ? 1 : 0));
		if (got < copy) {
			copy = got;
			over = true;
		}
		memcpy(fr->buf + fr->len, p + *i, copy);
		fr->len += copy;
		*i += copy;
		if (!over && copy < chunk) {
			/* At max: only a CR just before a trailer (or the chunk's end) may go on.
			 */
			if (p[*i] == '\r' && *i + 1 == j && fr->len < fr->cap) {
				fr->buf[fr->len++] = '\r';
				(*i)++;
			} else {
				over = true;
			}
		}
	}
	if (over) {
		fr->st = S_SKIP_TEXT;
		return emit(fr, fr->len < fr->max ? fr->len : fr->max, fr->flags | FLOE_FRAME_TRUNCATED,
			    out);
	}
	if (j == n)
		return 0;
	/* The trailer: LF (a CR before it goes too) or NUL. */
	size_t len = fr->len;
	unsigned flags = fr->flags;
	if (p[j] == '\n' && len > 0 && fr->buf[len - 1] == '\r')
		len--;
	/* A held CR that a NUL follows is content, one byte over max. */
	if (len > fr->max) {
		len = fr->max;
		flags |= FLOE_FRAME_TRUNCATED;
	}
	(*i)++;
	fr->st = S_START;
	if (len == 0)
		return 0;
	return emit(fr, len, flags, out);
}

int floe_framer_push(struct floe_framer *fr, const char *p, size_t n, size_t *used,
		     struct floe_frame *out)
{
	size_t i = 0;
	int got = 0;
	while (i < n && !got) {
		switch (fr->st) {
		case S_START:
			start(fr, p[i]);
			if (fr->st == S_COUNT)
				i++;
			break;
		case S_COUNT:
			i += count_byte(fr, p[i]);
			break;
		case S_OCTETS:
			got = octets(fr, p, n, &i, out);
			break;
		case S_SKIP_OCTETS: {
			size_t skip = n - i < fr->remain ? n - i : fr->remain;
			i += skip;
			fr->remain -= skip;
			if (fr->remain == 0)
				fr->st = S_START;
			break;
		}
		case S_TEXT:
			got = text(fr, p, n, &i, out);
			break;
		case S_SKIP_TEXT: {
			size_t j = trailer(p, i, n);
			i = j < n ? j + 1 : n;
			if (j < n)
				fr->st = S_START;
			break;
		}
		}
	}
	*used = i;
	return got;
}

int floe_framer_close(struct floe_framer *fr, struct floe_frame *out)
{
	size_t len = 0;
	switch (fr->st) {
	case S_COUNT:
		memcpy(fr->buf, fr->digits, fr->ndigits);
		len = fr->ndigits;
		break;
	case S_OCTETS:
		len = fr->len;
		break;
	case S_TEXT:
		len = fr->len;
		if (len > 0 && fr->buf[len - 1] == '\r')
			len--;
		break;
	default:
		break;
	}
	unsigned flags = fr->flags;
	floe_framer_reset(fr);
	if (len == 0)
		return 0;
	return emit(fr, len, flags | FLOE_FRAME_AT_CLOSE, out);
}

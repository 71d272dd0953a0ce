/* Fuzz target: the RFC 6587 framer on arbitrary streams. The first byte picks
 * max_message_bytes; the stream is framed whole, then again in chunks whose sizes come
 * from the stream's own bytes, and both runs must give the same frames, flags and
 * counters. Every frame is within max, its flags are known ones, and the counters agree
 * with the flags seen. */
#include "agent/parse/framing.h"

#include "formats/base/alloc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A running digest of the frames: length, flags and bytes. */
struct digest {
	uint64_t h, n, truncated, bad, at_close;
};

static void mix(struct digest *d, const struct floe_frame *f, size_t max)
{
	if (!f->p || f->len > max ||
	    (f->flags &
	     ~(unsigned)(FLOE_FRAME_TRUNCATED | FLOE_FRAME_AT_CLOSE | FLOE_FRAME_BAD_LENGTH)))
		abort();
	/* FNV-1a over the frame, with its length and flags. */
	uint64_t h = d->h ^ (f->len * 31 + f->flags);
	h *= 1099511628211u;
	for (size_t i = 0; i < f->len; i++) {
		h ^= (uint8_t)f->p[i];
		h *= 1099511628211u;
	}
	d->h = h;
	d->n++;
	d->truncated += !!(f->flags & FLOE_FRAME_TRUNCATED);
	d->bad += !!(f->flags & FLOE_FRAME_BAD_LENGTH);
	d->at_close += !!(f->flags & FLOE_FRAME_AT_CLOSE);
}

static void run(struct floe_alloc *a, const char *p, size_t n, size_t max, const uint8_t *sizes,
		size_t nsizes, struct digest *d, struct floe_framer_stats *st)
{
	struct floe_framer *fr = NULL;
	(void)floe_framer_new(a, max, &fr);
	if (!fr)
		abort();
	memset(d, 0, sizeof(*d));
	d->h = 14695981039346656037u;
	size_t off = 0, k = 0;
	while (off < n) {
		size_t c = nsizes ? (size_t)1 + sizes[k++ % nsizes] % 17 : n;
		if (c > n - off)
			c = n - off;
		size_t at = 0;
		while (at < c) {
			struct floe_frame f;
			size_t used;
			int rc = floe_framer_push(fr, p + off + at, c - at, &used, &f);
			if (used > c - at || (rc == 0 && used != c - at))
				abort();
			if (rc == 1)
				mix(d, &f, max);
			else if (rc != 0)
				abort();
			at += used;
		}
		floe_framer_trim(fr); /* as a listener does after each read */
		off += c;
	}
	struct floe_frame f;
	if (floe_framer_close(fr, &f) == 1)
		mix(d, &f, max);
	floe_framer_stats(fr, st);
	floe_framer_free(fr);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	size_t max = FLOE_FRAMER_MIN_MESSAGE + data[0] % 64;
	/* An exact-size copy of the stream, so that a read past the end is caught by ASan. */
	size_t n = size - 1;
	char *p = malloc(n ? n : 1);
	if (!p)
		return 0;
	memcpy(p, data + 1, n);
	struct digest whole, chunked;
	struct floe_framer_stats sw, sc;
	run(NULL, p, n, max, NULL, 0, &whole, &sw);
	run(NULL, p, n, max, data, size, &chunked, &sc);
	if (memcmp(&whole, &chunked, sizeof(whole)) != 0 || memcmp(&sw, &sc, sizeof(sw)) != 0)
		abort();
	if (sw.frames != whole.n || sw.truncated != whole.truncated || sw.bad_length != whole.bad ||
	    sw.flushed_at_close != whole.at_close || whole.at_close > 1)
		abort();
	/* A budget that refuses to let the buffer grow: frames may come out shorter (cut,
	 * counted), never longer than max, and nothing is left allocated. */
	struct floe_alloc tight;
	floe_alloc_init(&tight, floe_framer_idle_footprint() + data[0] % 32);
	struct digest small;
	struct floe_framer_stats ss;
	run(&tight, p, n, max, data, size, &small, &ss);
	if (tight.used != 0 || ss.frames != small.n || ss.truncated < whole.truncated)
		abort();
	free(p);
	return 0;
}

/* Spans of a tail: which bytes of which files one seal covers, from the tail's position
 * blobs where its rows start and where they end. A damaged spool file's rows are read
 * again from these (input_tail_replay.c). Pure over the bytes of the blobs, in the layout
 * tail.h documents (versions 2 and 3). */
#ifndef FLOE_INPUT_TAIL_SPAN_H
#define FLOE_INPUT_TAIL_SPAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct floe_alloc;

/* A file with bytes in the seal: [from, to) in the file known by (dev, ino). */
struct floe_span_file {
	char *path; /* its path when the seal ended (owned by the array) */
	uint64_t dev, ino;
	uint64_t from, to;
	/* false: its bytes cannot be told from the positions (its identity changed between
	 * the two, or it went back: a truncation in the seal), so they cannot be read again. */
	bool readable;
};

/* The files of tail blob to whose position is past the one from records for the same
 * (dev, ino) (0 when from does not have it: found during the seal). *out (owned: free
 * with floe_span_free) and *n; files with no bytes in the seal are left out. Returns 0,
 * FLOE_ECORRUPT or FLOE_ENOMEM. */
int floe_span_files(struct floe_alloc *a, const uint8_t *from, size_t from_len, const uint8_t *to, size_t to_len,
		    struct floe_span_file **out, size_t *n);
void floe_span_free(struct floe_alloc *a, struct floe_span_file *f, size_t n);

#endif

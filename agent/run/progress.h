/* The progress line of a long run --once on a terminal: bytes and lines done, the rate
 * and the time left. Pure: the caller gives the counts and the time. */
#ifndef FLOE_PROGRESS_H
#define FLOE_PROGRESS_H

#include <stddef.h>
#include <stdint.h>

/* Writes into buf (cap bytes, NUL-terminated, cut when short) e.g.
 * "progress: 1.2 GiB of 3.4 GiB (35%), 12.3 M lines, 85.1 MiB/s, 0:27 left".
 * total is what the inputs held when last looked at (done plus the bytes not read yet);
 * "of", the percentage and the time left are left out while it is unknown (0) or the
 * rate is (nothing read, or elapsed_us 0). */
void floe_progress_format(char *buf, size_t cap, uint64_t done, uint64_t total, uint64_t lines,
			  int64_t elapsed_us);

#endif

/* Wiping secrets: keys, tokens and credential documents are overwritten before their
 * memory is freed or goes out of scope, so that they do not linger in the heap or on the
 * stack for a later bug (or a core dump) to reveal. */
#ifndef FLOE_BASE_WIPE_H
#define FLOE_BASE_WIPE_H

#include <stddef.h>

struct floe_alloc;

/* Zeroes p[0..n) in a way the compiler may not remove. A plain memset just before free()
 * or the end of a buffer's life is a dead store that optimisers drop. p may be NULL when
 * n is 0. */
void floe_wipe(void *p, size_t n);
/* Wipes the whole of block p (from floe_malloc and friends on a; NULL is fine) and frees
 * it. */
void floe_wipe_free(struct floe_alloc *a, void *p);

#endif

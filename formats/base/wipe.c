/* Secret wiping (see wipe.h). */
#include "wipe.h"

#include "alloc.h"

#include <string.h>

void floe_wipe(void *p, size_t n)
{
	if (!n)
		return;
	memset(p, 0, n);
	/* An empty asm statement that takes p and may read any memory: the compiler must
	 * assume the zeros are observed, so it cannot drop the memset, even when this
	 * function is inlined (link-time optimisation) right before a free(). */
	__asm__ __volatile__("" : : "r"(p) : "memory");
}

void floe_wipe_free(struct floe_alloc *a, void *p)
{
	if (!p)
		return;
	floe_wipe(p, floe_alloc_size(p));
	floe_free(a, p);
}

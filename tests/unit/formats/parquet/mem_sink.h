/* The Parquet writer tests' sink: the file in a growing memory block, with an optional
 * error on the Nth write. */
#ifndef FLOE_TEST_MEM_SINK_H
#define FLOE_TEST_MEM_SINK_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct mem {
	uint8_t *p;
	size_t n, cap;
	int fail_at_call; /* sink error injection: fail the Nth call (1-based); 0 = never */
	int calls;
};

/* Returns -5 on the failing call; aborts the test when out of memory. */
static inline int mem_sink(void *ctx, const void *d, size_t n)
{
	struct mem *m = ctx;
	if (m->fail_at_call && ++m->calls == m->fail_at_call)
		return -5;
	if (m->n + n > m->cap) {
		m->cap = (m->n + n) * 2;
		m->p = realloc(m->p, m->cap);
		if (!m->p)
			abort();
	}
	memcpy(m->p + m->n, d, n);
	m->n += n;
	return 0;
}

#endif

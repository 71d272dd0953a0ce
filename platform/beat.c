/* A thread's heartbeat: see beat.h. */
#include "beat.h"

#include <stddef.h>

static _Thread_local struct floe_beat *mine;

struct floe_beat *floe_beat_attach(struct floe_beat *b)
{
	struct floe_beat *prev = mine;
	mine = b;
	return prev;
}

void floe_beat(const char *doing)
{
	struct floe_beat *b = mine;
	if (!b)
		return;
	if (doing)
		__atomic_store_n(&b->doing, doing, __ATOMIC_RELAXED);
	/* One writer per heartbeat: a load and a store, no locked add. */
	__atomic_store_n(&b->n, __atomic_load_n(&b->n, __ATOMIC_RELAXED) + 1, __ATOMIC_RELEASE);
}

void floe_beat_what(const char *what)
{
	struct floe_beat *b = mine;
	if (!b)
		return;
	__atomic_store_n(&b->what, what, __ATOMIC_RELAXED);
	floe_beat(NULL);
}

uint64_t floe_beat_count(const struct floe_beat *b)
{
	return __atomic_load_n(&b->n, __ATOMIC_ACQUIRE);
}

const char *floe_beat_doing(const struct floe_beat *b)
{
	const char *s = __atomic_load_n(&b->doing, __ATOMIC_RELAXED);
	return s ? s : "";
}

const char *floe_beat_on(const struct floe_beat *b)
{
	const char *s = __atomic_load_n(&b->what, __ATOMIC_RELAXED);
	return s ? s : "";
}

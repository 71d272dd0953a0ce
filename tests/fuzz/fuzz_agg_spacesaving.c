/* Fuzz target: the SpaceSaving checkpoint image decoder (k = 10, 64-byte keys). Any
 * input must decode or fail cleanly with an offset inside it; a decoded sketch must
 * re-serialise to the same bytes and keep counting. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agg/spacesaving.h"
#include "formats/base/error.h"

static uint64_t mem[4096];
static uint8_t out[4096];
static struct floe_ss_item top[16];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct floe_ss s;
	if (floe_ss_init(&s, 10, 64, mem, sizeof(mem)) != 0)
		abort();
	struct floe_err e;
	int rc = floe_ss_decode(&s, data, size, &e);
	if (rc != 0) {
		if (e.code != rc || e.offset > size || s.n != 0)
			abort();
		return 0;
	}
	size_t n = floe_ss_serialized_size(&s);
	if (n != size || floe_ss_serialize(&s, out, sizeof(out)) != 0 || memcmp(out, data, n) != 0)
		abort();
	size_t cnt = floe_ss_top(&s, top, 16);
	for (size_t i = 1; i < cnt; i++)
		if (top[i].count > top[i - 1].count)
			abort();
	for (int i = 0; i < 50; i++)
		floe_ss_add(&s, data, size < 100 ? size : 100);
	return 0;
}

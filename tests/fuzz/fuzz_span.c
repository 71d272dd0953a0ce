/* Fuzz target: the byte ranges of a seal from two tail position blobs (agent/input/tail_span).
 * Input: u16 little-endian length of the start blob, the start blob, then the end blob.
 * Any input must decode or fail cleanly, and release what it took. */
#include <stdint.h>
#include <stdlib.h>

#include "agent/input/tail_span.h"
#include "agent/run/span.h"
#include "formats/base/alloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	size_t k = (size_t)data[0] | (size_t)data[1] << 8;
	data += 2;
	size -= 2;
	if (k > size)
		k = size;
	struct floe_alloc a;
	floe_alloc_init(&a, 64u << 20);
	struct floe_span_file *f = NULL;
	size_t n = 0;
	if (floe_span_files(&a, data, k, data + k, size - k, &f, &n) == 0) {
		for (size_t i = 0; i < n; i++)
			if (!f[i].path || (f[i].readable && f[i].to <= f[i].from))
				abort();
		floe_span_free(&a, f, n);
	}
	uint32_t count;
	const uint8_t *b;
	size_t len;
	if (floe_span_input(data, size, 1, &count, &b, &len) == 0 && (b < data || b + len > data + size))
		abort();
	if (a.used != 0)
		abort();
	return 0;
}

/* Fuzz target for the footer re-id: the input's first byte picks the id map (none, a
 * shift of the typed columns' ids, a swap, a map that gives one id twice), the rest is
 * a footer (a FileMetaData). The re-id must give 0 or an error, never read past the
 * input; on success the output is a whole tail (footer, its length, PAR1) that parses
 * again with the same map reversed back to the input's footer, byte for byte; on failure
 * the buffer is as it was. The seed corpus holds footers of files floe's writer made
 * (the fuzz_pq_reader corpus's), each behind a map byte. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/parquet/footer_ids.h"

static size_t pick(uint8_t b, struct floe_pq_reid *m)
{
	switch (b % 4) {
	case 0:
		return 0;
	case 1:
		m[0] = (struct floe_pq_reid){15, 1015, 0};
		m[1] = (struct floe_pq_reid){16, 300000, 0};
		m[2] = (struct floe_pq_reid){12, 40, 0};
		return 3;
	case 2:
		m[0] = (struct floe_pq_reid){15, 16, 0};
		m[1] = (struct floe_pq_reid){16, 15, 0};
		return 2;
	default:
		m[0] = (struct floe_pq_reid){15, 20, 0};
		m[1] = (struct floe_pq_reid){16, 20, 0};
		return 2;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	struct floe_pq_reid map[3], back[3];
	size_t n = pick(data[0], map);
	const uint8_t *footer = data + 1;
	size_t len = size - 1;
	struct floe_alloc a;
	floe_alloc_init(&a, 64u << 20);
	struct floe_buf out, again;
	floe_buf_init(&out, &a, 1u << 24);
	floe_buf_init(&again, &a, 1u << 24);
	if (floe_buf_append(&out, "PAR1", 4) != 0)
		abort();
	if (floe_pq_footer_reid(footer, len, map, n, &out, NULL) == 0) {
		uint64_t off;
		uint32_t flen;
		if (out.len < 4 + FLOE_PQ_TAIL ||
		    floe_pq_footer_span(out.data + out.len - FLOE_PQ_TAIL, out.len, &off, &flen,
					NULL) != 0 ||
		    off != 4)
			abort();
		/* Back again, then forth: the same footer as the first pass made (the
		 * input's own varints may be longer than need be, the re-id's never are). */
		for (size_t i = 0; i < n; i++)
			back[i] = (struct floe_pq_reid){map[i].to, map[i].from, 0};
		if (floe_pq_footer_reid(out.data + 4, flen, back, n, &again, NULL) != 0)
			abort(); /* the first pass left no kept id that the reverse hands out */
		struct floe_buf third;
		floe_buf_init(&third, &a, 1u << 24);
		if (floe_pq_footer_reid(again.data, again.len - FLOE_PQ_TAIL, map, n, &third,
					NULL) != 0 ||
		    third.len != out.len - 4 || memcmp(third.data, out.data + 4, third.len) != 0)
			abort();
		floe_buf_fini(&third);
	} else if (out.len != 4) {
		abort();
	}
	floe_buf_fini(&out);
	floe_buf_fini(&again);
	if (a.used != 0)
		abort();
	return 0;
}

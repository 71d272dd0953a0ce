/* Fuzz target: the HLL image decoder (DataSketches compact LIST, SET and HLL_8 forms).
 * Any input must decode or fail cleanly with an offset inside it; a decoded sketch must
 * re-serialise to the same registers (dense) or the same sketch (list) and merge, estimate
 * and fold without trouble. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agg/hll.h"
#include "formats/base/error.h"

static uint8_t mem[1 << FLOE_HLL_PMAX], mem2[1 << FLOE_HLL_PMAX];
static uint8_t out[FLOE_HLL_HEADER_BYTES + (1 << FLOE_HLL_PMAX)];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct floe_hll h, c;
	struct floe_err ferr;
	unsigned p = 0;
	int rc = floe_hll_decode_precision(data, size, &p, &ferr);
	if (rc != 0 && (ferr.code != rc || ferr.offset > size))
		abort();
	rc = floe_hll_decode(&h, mem, sizeof(mem), data, size, &ferr);
	if (rc != 0) {
		if (ferr.code != rc || ferr.offset > size)
			abort();
		return 0;
	}
	/* A dense image comes back byte for byte after its estimator fields; a list or set
	 * may lose repeated coupons or go dense, and comes back as the same sketch. */
	bool dense = (data[7] & 3) == 2;
	if (h.p != p || (dense && floe_hll_serialized_size(&h) != size))
		abort();
	size_t n = floe_hll_serialized_size(&h);
	if (floe_hll_serialize(&h, out, sizeof(out)) != 0 ||
	    (dense && memcmp(out + FLOE_HLL_HEADER_BYTES, data + FLOE_HLL_HEADER_BYTES, h.m) != 0))
		abort();
	double e = floe_hll_estimate(&h);
	if (!(e >= 0.0) || e != e)
		abort();
	if (floe_hll_decode(&c, mem2, sizeof(mem2), out, n, NULL) != 0 ||
	    floe_hll_estimate(&c) != e)
		abort();
	if (floe_hll_init(&c, FLOE_HLL_PMIN, mem2, sizeof(mem2)) != 0 ||
	    floe_hll_merge(&c, &h) != 0)
		abort();
	return 0;
}

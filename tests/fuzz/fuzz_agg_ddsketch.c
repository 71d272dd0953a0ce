/* Fuzz target: the DDSketch protobuf decoder. Any input must decode or fail cleanly with
 * an offset inside it, leaving the sketch as it was; a decoded sketch must encode and
 * decode again to the same bytes, and answer quantiles in order. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agg/ddsketch.h"
#include "formats/base/error.h"

static uint32_t mem[2048 + 512], mem2[2048 + 512];
static uint8_t out[65536], out2[65536];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct floe_dds s, r;
	struct floe_dds_config c;
	floe_dds_config_default(&c);
	if (floe_dds_init(&s, &c, mem, sizeof(mem)) != 0 ||
	    floe_dds_init(&r, &c, mem2, sizeof(mem2)))
		abort();
	floe_dds_add(&s, 42.0);
	struct floe_err e;
	int rc = floe_dds_decode_proto(&s, data, size, &e);
	if (rc != 0) {
		if (e.code != rc || e.offset > size || s.count != 1 || s.pos.count != 1)
			abort();
		return 0;
	}
	size_t n = floe_dds_proto_size(&s);
	if (n > sizeof(out) || floe_dds_encode_proto(&s, out, sizeof(out)) != 0)
		return 0;
	if (floe_dds_decode_proto(&r, out, n, NULL) != 0 || r.count != s.count)
		abort();
	if (floe_dds_proto_size(&r) != n || floe_dds_encode_proto(&r, out2, sizeof(out2)) != 0 ||
	    memcmp(out, out2, n) != 0)
		abort();
	double prev = -__builtin_inf();
	for (int i = 0; i <= 10 && s.count; i++) {
		double q = floe_dds_quantile(&s, i / 10.0);
		if (q != q || q < prev)
			abort();
		prev = q;
	}
	return 0;
}

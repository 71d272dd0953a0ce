/* The runner's positions: each input's blob found in them (span.h). */
#include "span.h"

#include "formats/base/alloc.h"
#include "formats/base/error.h"

#include <string.h>

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int floe_span_input(const uint8_t *p, size_t len, size_t i, uint32_t *count, const uint8_t **blob,
		    size_t *blob_len)
{
	if (len < 4)
		return FLOE_ECORRUPT;
	uint32_t n = le32(p);
	size_t off = 4;
	*count = n;
	for (uint32_t k = 0; k < n; k++) {
		if (len - off < 4)
			return FLOE_ECORRUPT;
		uint32_t l = le32(p + off);
		off += 4;
		if (l > len - off)
			return FLOE_ECORRUPT;
		if (k == i) {
			*blob = p + off;
			*blob_len = l;
			return 0;
		}
		off += l;
	}
	return FLOE_ENOTFOUND;
}

/* Fuzz target: floe_logfmt_parse on arbitrary bytes. Accepted lines give readable fields
 * no longer than the line and never a null value; rejected ones an in-range offset. */
#include "agent/parse/fields.h"
#include "agent/parse/logfmt.h"
#include "formats/base/error.h"

#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile uint8_t sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct floe_fields *f;
	if (!f && floe_fields_new(NULL, 32, 256, &f) != 0)
		abort();
	floe_fields_reset(f);
	struct floe_err e;
	int rc = floe_logfmt_parse((const char *)data, size, f, &e);
	if (rc == 0) {
		for (size_t i = 0; i < floe_fields_count(f); i++) {
			const char *k = floe_fields_keys(f)[i], *v = floe_fields_vals(f)[i];
			size_t kl = floe_fields_key_lens(f)[i], vl = floe_fields_val_lens(f)[i];
			if (!v || kl == 0 || kl > size || vl > size)
				abort();
			uint8_t x = 0;
			for (size_t j = 0; j < kl; j++)
				x ^= (uint8_t)k[j];
			for (size_t j = 0; j < vl; j++)
				x ^= (uint8_t)v[j];
			sink = x;
		}
	} else if (rc != FLOE_EPARSE || e.code != rc || e.offset > size ||
		   floe_fields_count(f) != 0) {
		abort();
	}
	return 0;
}

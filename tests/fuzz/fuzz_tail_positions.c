/* Fuzz target: floe_tail_restore on arbitrary bytes. A blob it accepts must serialise
 * back to exactly the same bytes (the layout is canonical); anything else must be
 * FLOE_ECORRUPT (or FLOE_ENOMEM), with nothing leaked. */
#include "agent/input/tail.h"
#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct floe_alloc a;
	floe_alloc_init(&a, (size_t)256 << 20);
	struct floe_tail_options o = {0};
	int err = 0;
	struct floe_tail *t = floe_tail_new(&a, &o, &err);
	if (!t)
		abort();
	int rc = floe_tail_restore(t, data, size);
	if (rc == 0) {
		/* A scan over no globs must keep every restored entry. */
		if (floe_tail_scan(t) != 0)
			abort();
		struct floe_buf b;
		floe_buf_init(&b, &a, (size_t)256 << 20);
		rc = floe_tail_positions(t, &b);
		if (rc == 0 && (b.len != size || memcmp(b.data, data, size) != 0))
			abort();
		if (rc != 0 && rc != FLOE_ENOMEM && rc != FLOE_ELIMIT)
			abort();
		floe_buf_fini(&b);
	} else if (rc != FLOE_ECORRUPT && rc != FLOE_ENOMEM) {
		abort();
	}
	floe_tail_free(t);
	if (a.used != 0)
		abort();
	return 0;
}

/* Fuzz target: floe_tail_restore on arbitrary bytes. A version 3 blob it accepts must
 * serialise back to the same bytes (the layout is canonical) but for the times files went,
 * which are saved again as the wall clock now less their age (a time in the future comes
 * back as now, an age past forget_after as that age): those only stay zero (present) or
 * not; a version 2 blob
 * comes back as version 3, which must itself round-trip; a scan over no globs must then
 * work. Anything else must be FLOE_ECORRUPT (or FLOE_ENOMEM), with nothing leaked. */
#include "agent/input/tail.h"
#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Whether the version 3 blobs x and y (x accepted by restore, both len bytes) are the
 * same but for the non-zero gone times of their entries. */
static int same_but_gone(const uint8_t *x, const uint8_t *y, size_t len)
{
	size_t off = 12;
	if (memcmp(x, y, off) != 0)
		return 0;
	while (off < len) {
		size_t plen = (size_t)x[off] | (size_t)x[off + 1] << 8 | (size_t)x[off + 2] << 16 |
			      (size_t)x[off + 3] << 24;
		size_t gone = off + 4 + plen + 52; /* the entry's last 8 bytes */
		if (memcmp(x + off, y + off, gone - off) != 0)
			return 0;
		static const uint8_t zero[8];
		if (!memcmp(x + gone, zero, 8) != !memcmp(y + gone, zero, 8))
			return 0;
		off = gone + 8;
	}
	return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct floe_alloc a;
	floe_alloc_init(&a, (size_t)256 << 20);
	struct floe_tail_options o = {0};
	struct floe_tail *t = NULL;
	if (floe_tail_new(&a, &o, &t) != 0)
		abort();
	int rc = floe_tail_restore(t, data, size);
	if (rc == 0) {
		struct floe_buf b;
		floe_buf_init(&b, &a, (size_t)256 << 20);
		rc = floe_tail_positions(t, &b);
		if (rc != 0 && rc != FLOE_ENOMEM && rc != FLOE_ELIMIT)
			abort();
		if (rc == 0 && data[4] == 3 &&
		    (b.len != size || !same_but_gone(data, b.data, size)))
			abort();
		if (rc == 0 && data[4] == 2) {
			/* Version 2 entries gain 20 bytes each and must then be canonical. */
			uint32_t count = (uint32_t)data[8] | (uint32_t)data[9] << 8 |
					 (uint32_t)data[10] << 16 | (uint32_t)data[11] << 24;
			if (b.len != size + (size_t)count * 20)
				abort();
			struct floe_tail *t2 = NULL;
			struct floe_buf b2;
			floe_buf_init(&b2, &a, (size_t)256 << 20);
			if (floe_tail_new(&a, &o, &t2) != 0)
				abort();
			rc = floe_tail_restore(t2, b.data, b.len);
			if (rc == 0)
				rc = floe_tail_positions(t2, &b2);
			if (rc == 0 && (b2.len != b.len || memcmp(b2.data, b.data, b.len) != 0))
				abort();
			if (rc != 0 && rc != FLOE_ENOMEM && rc != FLOE_ELIMIT)
				abort();
			floe_buf_fini(&b2);
			floe_tail_free(t2);
		}
		floe_buf_fini(&b);
		/* A scan over no globs keeps or forgets entries, never fails on them. */
		rc = floe_tail_scan(t);
		if (rc != 0 && rc != FLOE_ENOMEM)
			abort();
	} else if (rc != FLOE_ECORRUPT && rc != FLOE_ENOMEM) {
		abort();
	}
	floe_tail_free(t);
	if (a.used != 0)
		abort();
	return 0;
}

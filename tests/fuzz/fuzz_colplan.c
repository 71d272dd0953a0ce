/* Fuzz target: the column plan's state file payload (state_dir/columns inside its blob
 * frame). Any input must decode or fail cleanly; a decoded plan must hold valid columns
 * (names, sources, types, ids above the built-in ones) and encode to what decodes to the
 * same plan. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/schema/columns.h"
#include "formats/base/alloc.h"
#include "formats/base/buf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct floe_alloc a;
	floe_alloc_init(&a, 16u << 20);
	struct floe_colplan p, again;
	memset(&p, 0, sizeof(p));
	memset(&again, 0, sizeof(again));
	if (floe_colplan_decode(data, size, &p) == 0) {
		if (!p.planned || p.n > FLOE_COLS_MAX)
			abort();
		for (size_t i = 0; i < p.n; i++)
			if (!p.col[i].name[0] || p.col[i].id <= FLOE_LOG_LAST_COLUMN_ID ||
			    (unsigned)p.col[i].type >= FLOE_COL_NTYPES)
				abort();
		struct floe_buf b;
		floe_buf_init(&b, &a, 1u << 20);
		if (floe_colplan_encode(&p, &b) != 0 || floe_colplan_decode(b.data, b.len, &again) != 0 ||
		    again.n != p.n)
			abort();
		for (size_t i = 0; i < p.n; i++)
			if (strcmp(again.col[i].name, p.col[i].name) != 0 ||
			    strcmp(again.col[i].from, p.col[i].from) != 0 ||
			    strcmp(again.col[i].renamed_from, p.col[i].renamed_from) != 0 ||
			    again.col[i].id != p.col[i].id || again.col[i].type != p.col[i].type)
				abort();
		floe_buf_fini(&b);
	}
	if (a.used != 0)
		abort();
	return 0;
}

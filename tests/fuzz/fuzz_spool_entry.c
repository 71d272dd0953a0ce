/* Fuzz target: spool entry decoding (the JSON inside a checksummed entry file). Any
 * input must decode or fail cleanly; a decoded entry must be self-consistent. */
#include <stdint.h>
#include <stdlib.h>

#include "agent/schema/partition.h"
#include "agent/lake/spool.h"
#include "formats/base/alloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *entries[] = {"day(ts)", "host"};
	struct floe_part_spec spec;
	if (floe_part_spec_from_config(&spec, entries, 2, NULL) != 0)
		abort();
	struct floe_alloc a;
	floe_alloc_init(&a, 64u << 20);
	struct floe_spool_entry *e = NULL;
	if (floe_spool_entry_decode(&a, &spec, (const char *)data, size, &e) == 0) {
		for (size_t i = 0; i < e->nfiles; i++)
			if (!e->files[i].name || e->files[i].nmetrics > size)
				abort();
		/* Provisional columns (version 3): bounded, each named, with an id. */
		if (e->nprov > FLOE_SPOOL_PROV_MAX)
			abort();
		for (size_t i = 0; i < e->nprov; i++)
			if (!e->prov[i].name[0] || !e->prov[i].type[0] || e->prov[i].id <= 0)
				abort();
		floe_spool_entry_free(&a, e);
	}
	if (a.used != 0)
		abort(); /* every path must release what it took */
	return 0;
}

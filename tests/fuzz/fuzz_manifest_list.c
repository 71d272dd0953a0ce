/* Fuzz target: arbitrary bytes read as an Iceberg manifest list (every entry touched),
 * as a manifest, and as a manifest's entries for a rewrite (manifest merging). Leaks
 * abort. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "formats/base/alloc.h"
#include "formats/iceberg/manifest.h"

static int on_entry(void *ctx, int status, const char *path, int64_t records, int64_t size)
{
	size_t *n = ctx;
	*n += strlen(path) + (size_t)status + (size_t)(records & 1) + (size_t)(size & 1);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct floe_alloc a;
	floe_alloc_init(&a, (size_t)256 << 20);
	struct floe_ice_manifest_list *l;
	size_t sum = 0;
	if (floe_ice_manifest_list_read(&a, data, size, &l, NULL) == 0) {
		for (size_t i = 0; i < floe_ice_manifest_list_count(l); i++) {
			const struct floe_ice_manifest_entry *e = floe_ice_manifest_list_at(l, i);
			sum += strlen(e->path);
			for (size_t k = 0; k < e->npartitions; k++) {
				const struct floe_ice_field_summary *s = &e->partitions[k];
				if (s->has_lower && s->lower_len)
					sum += s->lower[s->lower_len - 1];
				if (s->has_upper && s->upper_len)
					sum += s->upper[s->upper_len - 1];
			}
			if (e->has_key_metadata && e->key_metadata_len)
				sum += e->key_metadata[e->key_metadata_len - 1];
		}
		floe_ice_manifest_list_free(l);
	}
	(void)floe_ice_manifest_read(&a, data, size, on_entry, &sum, NULL);
	struct floe_ice_manifest_entry listed = {.path = "m.avro", .added_snapshot_id = 7, .sequence_number = 3};
	struct floe_ice_entry_reader *r;
	if (floe_ice_entry_reader_new(&a, data, size, &listed, &r, NULL) == 0) {
		struct floe_ice_entry e;
		size_t n = 0;
		while (n++ < 100000 && floe_ice_entry_reader_next(r, &e, NULL) == 1)
			sum += strlen(e.path) + (size_t)e.status + (size_t)(e.sequence_number & 1);
		floe_ice_entry_reader_free(r);
	}
	if (a.used != 0)
		abort();
	return sum == SIZE_MAX;
}

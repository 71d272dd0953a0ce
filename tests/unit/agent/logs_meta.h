/* For the typed columns' tests: the metadata of a logs table as floe creates it, with
 * extra fields after the built-in ones (another writer's, or an earlier evolution's).
 * Include after cmocka.h. */
#ifndef FLOE_TEST_LOGS_META_H
#define FLOE_TEST_LOGS_META_H

#include <string.h>

#include "agent/schema/record.h"
#include "formats/iceberg/metadata.h"

#define LOGS_META_EXTRA_MAX 4

/* The table's metadata (owned: floe_ice_meta_free) with extra[0..nextra) added. */
static inline struct floe_ice_meta *logs_meta(const struct floe_ice_field *extra, size_t nextra)
{
	size_t n;
	const struct floe_ice_field *base = floe_log_fields(&n);
	struct floe_ice_field all[FLOE_LOG_NCOLS + LOGS_META_EXTRA_MAX];
	assert_true(nextra <= LOGS_META_EXTRA_MAX);
	memcpy(all, base, n * sizeof(*all));
	if (nextra)
		memcpy(all + n, extra, nextra * sizeof(*all));
	struct floe_ice_meta *m = NULL;
	assert_int_equal(floe_ice_meta_create(NULL, "00000000-0000-4000-8000-000000000000",
					      "file:///t", all, n + nextra, NULL, 0, NULL, 0, 1, &m),
			 0);
	return m;
}

#endif

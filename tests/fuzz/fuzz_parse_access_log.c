/* Fuzz target: arbitrary lines through the access-log scanner, common and combined. On
 * success every field is a slice inside the line and the time is within the years a
 * four-digit year allows; on failure the offset is inside the line and no field is left;
 * and the time's memo, kept from input to input, gives the same result. */
#include "agent/parse/access_log.h"
#include "agent/parse/fields.h"
#include "agent/parse/timestamp.h"
#include "formats/base/error.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* 0000-01-01 and 10000-01-01 in µs, a day either side for the zone. */
#define TS_MIN (-62167219200LL - 86400) * 1000000
#define TS_MAX (253402300800LL + 86400) * 1000000

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct floe_fields *f;
	if (!f && floe_fields_new(NULL, 16, 0, &f))
		abort();
	const char *p = (const char *)data;
	for (int combined = 0; combined < 2; combined++) {
		floe_fields_reset(f);
		struct floe_err why = {0};
		int64_t ts = 0;
		int rc = floe_access_log_parse(p, size, combined, f, &ts, &why);
		/* The time's memo, kept from input to input, changes nothing. */
		static struct floe_ts_clf_memo memo;
		static struct floe_fields *g;
		if (!g && floe_fields_new(NULL, 16, 0, &g))
			abort();
		floe_fields_reset(g);
		int64_t mts = 0;
		if (floe_access_log_parse_memo(p, size, combined, &memo, g, &mts, NULL) != rc ||
		    (rc == 0 && mts != ts) || floe_fields_count(g) != floe_fields_count(f))
			abort();
		if (rc == 0) {
			if (ts < TS_MIN || ts > TS_MAX || floe_fields_count(f) == 0)
				abort();
			for (size_t i = 0; i < floe_fields_count(f); i++) {
				const char *v = floe_fields_vals(f)[i];
				size_t vl = floe_fields_val_lens(f)[i];
				if (v < p || vl > size || (size_t)(v - p) > size - vl)
					abort();
				/* Its id is its name's index, which the typed columns are
				 * found by. */
				unsigned id = floe_fields_ids(f)[i];
				const char *const *names = floe_access_log_field_names();
				size_t nn = 0;
				while (names[nn])
					nn++;
				if (id >= nn || strlen(names[id]) != floe_fields_key_lens(f)[i] ||
				    memcmp(names[id], floe_fields_keys(f)[i], strlen(names[id])) != 0)
					abort();
			}
		} else if (rc != FLOE_EPARSE || why.code != FLOE_EPARSE || why.offset > size ||
			   floe_fields_count(f) != 0) {
			abort();
		}
	}
	return 0;
}

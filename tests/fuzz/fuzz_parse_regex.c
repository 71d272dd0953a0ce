/* Fuzz target: a fixed named-group pattern (Apache combined log) against arbitrary lines;
 * captures must be slices inside the line. The first byte also picks a pattern for the
 * translator, so odd patterns are compiled (and rejected cleanly) too. */
#include "agent/parse/fields.h"
#include "agent/parse/regex.h"
#include "formats/base/error.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char pattern[] =
    "^(?<ip>[^ ]+) (?<ident>[^ ]+) (?<user>[^ ]+) \\[(?<ts>[^]]+)\\] "
    "\"(?<method>[A-Z]+) (?<path>[^ \"]*)(?: (?<proto>[^\"]*))?\" (?<status>[0-9]{3}) "
    "(?<size>[0-9]+|-)(?: \"(?<referer>[^\"]*)\" \"(?<agent>[^\"]*)\")?";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct floe_regex *r;
	static struct floe_fields *f;
	if (!r) {
		(void)floe_regex_new(NULL, pattern, sizeof(pattern) - 1, 1 << 16, 0, &r, NULL);
		(void)floe_fields_new(NULL, 16, 0, &f);
		if (!r || !f)
			abort();
	}
	floe_fields_reset(f);
	bool m;
	int rc = floe_regex_capture(r, (const char *)data, size, f, &m);
	if (rc == 0 && m) {
		for (size_t i = 0; i < floe_fields_count(f); i++) {
			const char *v = floe_fields_vals(f)[i];
			size_t vl = floe_fields_val_lens(f)[i];
			if (v < (const char *)data || vl > size ||
			    (size_t)(v - (const char *)data) > size - vl)
				abort();
			/* Each field's id is its group name's index, which the typed
			 * columns are found by. */
			unsigned id = floe_fields_ids(f)[i];
			size_t nl = 0;
			if (id >= floe_regex_name_count(r))
				abort();
			const char *name = floe_regex_name(r, id, &nl);
			if (nl != floe_fields_key_lens(f)[i] ||
			    memcmp(name, floe_fields_keys(f)[i], nl) != 0)
				abort();
		}
	} else if (rc != 0 && rc != FLOE_ELIMIT) {
		abort();
	}
	/* The line as a pattern: compiles or is refused with a reason, never crashes. */
	if (size <= 256) {
		struct floe_err why;
		struct floe_regex *p = NULL;
		int err = floe_regex_new(NULL, (const char *)data, size, 256, 0, &p, &why);
		if (p) {
			floe_fields_reset(f);
			floe_regex_capture(p, (const char *)data, size, f, &m);
			floe_regex_free(p);
		} else if (err != FLOE_EINVAL && err != FLOE_ENOMEM) {
			abort();
		}
	}
	return 0;
}

/* Fuzz target: floe_json_line_parse on arbitrary bytes (exactly sized: no NUL after the
 * line). Accepted lines give fields whose bytes are all readable and no longer than the
 * line; rejected ones give an in-range offset and an empty collector. Differential check
 * against the DOM reader of formats/json: what it accepts as an object we accept, and
 * what we accept it accepts too unless it holds bytes >= 0x80 or \u escapes (it demands
 * valid UTF-8 and no lone surrogates) or nests deeper than its 64 levels. */
#include "agent/parse/fields.h"
#include "agent/parse/json_line.h"
#include "formats/base/error.h"
#include "formats/json/json.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile uint8_t sink;

static void touch(const char *p, size_t n)
{
	uint8_t x = 0;
	for (size_t i = 0; i < n; i++)
		x ^= (uint8_t)p[i];
	sink = x;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct floe_fields *f;
	if (!f && floe_fields_new(NULL, 32, 512, &f) != 0)
		abort();
	int ours = 0;
	for (unsigned depth = 1; depth <= 3; depth += 2) {
		floe_fields_reset(f);
		struct floe_err e;
		int rc = floe_json_line_parse((const char *)data, size, depth, f, &e);
		if (depth > 1 && rc != ours)
			abort(); /* validity must not depend on the flattening depth */
		ours = rc;
		if (rc == 0) {
			for (size_t i = 0; i < floe_fields_count(f); i++) {
				size_t kl = floe_fields_key_lens(f)[i];
				size_t vl = floe_fields_val_lens(f)[i];
				if (kl > size || vl > size)
					abort();
				touch(floe_fields_keys(f)[i], kl);
				if (floe_fields_vals(f)[i])
					touch(floe_fields_vals(f)[i], vl);
				else if (vl != 0)
					abort();
			}
		} else if ((rc != FLOE_EPARSE && rc != FLOE_ELIMIT) || e.code != rc ||
			   e.offset > size || floe_fields_count(f) != 0) {
			abort();
		}
	}
	struct floe_json_doc *doc = NULL;
	int theirs = floe_json_parse(NULL, (const char *)data, size, 0, &doc, NULL);
	bool object = theirs == 0 && floe_json_is(floe_json_root(doc), FLOE_JSON_OBJECT);
	floe_json_doc_free(doc);
	if (object && ours != 0)
		abort();
	if (ours == 0 && theirs == FLOE_EPARSE) {
		bool excused = false;
		for (size_t i = 0; i < size && !excused; i++)
			excused = data[i] >= 0x80 ||
				  (data[i] == '\\' && i + 1 < size && data[i + 1] == 'u');
		if (!excused)
			abort();
	}
	return 0;
}

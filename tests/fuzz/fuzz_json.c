/* Fuzz target for the JSON reader and writer: whatever parses must write, re-parse and
 * write again to the identical bytes, and every allocation must be given back. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"
#include "formats/json/json.h"

static void write_or_abort(struct floe_json_doc *d, struct floe_buf *b)
{
	if (floe_json_write(floe_json_root(d), b) != 0)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct floe_alloc a;
	floe_alloc_init(&a, (size_t)64 << 20);
	struct floe_json_doc *d1 = NULL, *d2 = NULL;
	struct floe_buf w1, w2;
	floe_buf_init(&w1, &a, (size_t)32 << 20);
	floe_buf_init(&w2, &a, (size_t)32 << 20);
	struct floe_err e;
	int rc = floe_json_parse(&a, (const char *)data, size, 0, &d1, &e);
	if (rc != 0) {
		if (d1 || e.code != rc || e.offset > size)
			abort();
		goto out;
	}
	write_or_abort(d1, &w1);
	if (floe_json_parse(&a, (const char *)w1.data, w1.len, 0, &d2, NULL) != 0)
		abort();
	write_or_abort(d2, &w2);
	if (w1.len != w2.len || memcmp(w1.data, w2.data, w1.len) != 0)
		abort();
	/* A deep copy into another document must write the same bytes. */
	struct floe_json *c = floe_json_clone(d2, floe_json_root(d1));
	if (!c)
		abort();
	floe_buf_reset(&w2);
	if (floe_json_write(c, &w2) != 0 || w1.len != w2.len ||
	    memcmp(w1.data, w2.data, w1.len) != 0)
		abort();
out:
	floe_buf_fini(&w1);
	floe_buf_fini(&w2);
	floe_json_doc_free(d1);
	floe_json_doc_free(d2);
	if (a.used != 0)
		abort();
	return 0;
}

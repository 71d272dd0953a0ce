/* Fuzz target: multiline grouping over the input split into lines, with small caps.
 * Checks the exactly-once contract: emitted records tile the input without gaps or
 * overlaps (each starts where the previous ended), the pending offset is where the next
 * record will start, every line lands in exactly one record, and caps hold. A line
 * starting with 'T' advances the fake clock past the timeout. */
#include "agent/parse/multiline.h"
#include "formats/base/alloc.h"
#include "formats/base/error.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct state {
	int64_t next; /* where the next record must start */
	size_t lines; /* lines in emitted records */
};

static void check(const struct floe_multiline_rec *r, struct state *st)
{
	if (r->offset != st->next || r->end_offset <= r->offset || r->len > 40 || r->nlines == 0 ||
	    r->nlines > 4)
		abort();
	/* Without a cut, the record is its lines joined by '\n': as long as the bytes. */
	if (!r->truncated && (int64_t)r->len != r->end_offset - r->offset - 1)
		abort();
	st->next = r->end_offset;
	st->lines += r->nlines;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct floe_alloc a;
	floe_alloc_init(&a, 1 << 20);
	struct floe_multiline_opts o = {.start = "^[0-9]",
					.start_len = 6,
					.max_lines = 4,
					.max_bytes = 40,
					.timeout_us = 10,
					.max_line_bytes = 16};
	struct floe_multiline *m = NULL;
	if (floe_multiline_new(&a, &o, &m, NULL) != 0)
		abort();
	struct state st = {0, 0};
	size_t pos = 0, pushed = 0;
	int64_t now = 0;
	struct floe_multiline_rec r;
	bool e;
	while (pos < size) {
		const uint8_t *nl = memchr(data + pos, '\n', size - pos);
		size_t len = nl ? (size_t)(nl - (data + pos)) : size - pos;
		char *line = malloc(len ? len : 1);
		if (!line)
			abort();
		memcpy(line, data + pos, len);
		if (len && line[0] == 'T') {
			now += 100;
			floe_multiline_poll(m, now, &r, &e);
			if (e)
				check(&r, &st);
		}
		/* A truncated line still covers its whole extent, newline included. */
		int64_t end = (int64_t)(pos + len + 1);
		if (floe_multiline_push(m, line, len, (int64_t)pos, end, now, &r, &e) != 0)
			abort();
		pushed++;
		if (e)
			check(&r, &st);
		int64_t pend;
		if (!floe_multiline_pending(m, &pend) || pend != st.next)
			abort();
		free(line);
		pos += len + 1;
	}
	floe_multiline_flush(m, &r, &e);
	if (e)
		check(&r, &st);
	int64_t pend;
	if (floe_multiline_pending(m, &pend) || st.lines != pushed)
		abort();
	floe_multiline_free(m);
	if (a.used != 0)
		abort();
	return 0;
}

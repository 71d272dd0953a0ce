/* Fuzz target: the container joiner (auto: CRI and Docker) over the input split into
 * lines, with a small byte cap. Checks the exactly-once contract: messages come out in
 * file order, inside their cap, and never past a pending offset. */
#include "agent/parse/container.h"
#include "formats/base/alloc.h"
#include "formats/base/error.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile uint8_t sink;

static void check(const struct floe_container_rec *r, int64_t *last_end)
{
	if (r->len > 48 || r->offset < *last_end || r->end_offset <= r->offset)
		abort();
	*last_end = r->end_offset;
	uint8_t x = 0;
	for (size_t i = 0; i < r->len; i++)
		x ^= (uint8_t)r->msg[i];
	for (size_t i = 0; i < r->stream_len; i++)
		x ^= (uint8_t)r->stream[i];
	sink = x;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct floe_alloc a;
	floe_alloc_init(&a, 1 << 20);
	struct floe_container_opts o = {
	    .format = FLOE_CONTAINER_AUTO, .max_bytes = 48, .timeout_us = 10};
	struct floe_container *c = NULL;
	if (floe_container_new(&a, &o, &c) != 0)
		abort();
	int64_t last_end = 0, now = 0;
	size_t pos = 0;
	while (pos < size) {
		const uint8_t *nl = memchr(data + pos, '\n', size - pos);
		size_t len = nl ? (size_t)(nl - (data + pos)) : size - pos;
		/* Copy to an exact-size block so reading past the line is caught. */
		char *line = malloc(len ? len : 1);
		if (!line)
			abort();
		memcpy(line, data + pos, len);
		struct floe_container_rec out[2];
		size_t n = 0;
		struct floe_err ferr;
		int64_t end = (int64_t)(pos + len + 1);
		int rc =
		    floe_container_push(c, line, len, (int64_t)pos, end, now++, out, &n, &ferr);
		if (rc == 0) {
			for (size_t i = 0; i < n; i++)
				check(&out[i], &last_end);
		} else if ((rc == FLOE_EPARSE && (ferr.code != rc || ferr.offset > len)) ||
			   (rc != FLOE_EPARSE && rc != FLOE_ELIMIT) || n > 1) {
			abort();
		} else {
			/* The held message (if any) first, then the bad line is a message of
			 * its own, in order. */
			int64_t pend;
			for (size_t i = 0; i < n; i++)
				check(&out[i], &last_end);
			if (floe_container_pending(c, &pend))
				abort();
			last_end = end;
		}
		int64_t pend;
		if (floe_container_pending(c, &pend) && pend < last_end)
			abort();
		bool e;
		if (len && line[0] == 'T') {
			floe_container_poll(c, now + 100, &out[0], &e);
			if (e)
				check(&out[0], &last_end);
		}
		free(line);
		pos += len + 1;
	}
	bool e;
	struct floe_container_rec r;
	floe_container_flush(c, &r, &e);
	if (e)
		check(&r, &last_end);
	floe_container_free(c);
	if (a.used != 0)
		abort();
	return 0;
}

/* Multiline grouping with two preallocated buffers: the held record grows in one, and an
 * emitted record is handed out from the other (swapped), so emitting a record and holding
 * the line that closed it never needs a third copy or an allocation. */
#include "multiline.h"

#include "regex.h"
#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"

#include <string.h>

struct held {
	struct floe_buf buf;
	int64_t offset, end_offset;
	size_t nlines;
	bool truncated;
};

struct floe_multiline {
	struct floe_alloc *alloc;
	struct floe_regex *start;
	size_t max_lines, max_bytes, max_line;
	int64_t timeout_us;
	int64_t last_us;
	struct held slot[2];
	int hold; /* index of the held record's slot */
	struct floe_multiline_stats st;
};

int floe_multiline_new(struct floe_alloc *a, const struct floe_multiline_opts *o,
		       struct floe_multiline **out, struct floe_err *err)
{
	struct floe_multiline *m = floe_calloc(a, 1, sizeof(*m));
	if (!m)
		return floe_err_set(err, FLOE_ENOMEM, "%s", floe_strerror(FLOE_ENOMEM));
	m->alloc = a;
	m->max_lines = o->max_lines ? o->max_lines : 500;
	m->max_bytes = o->max_bytes ? o->max_bytes : (size_t)1 << 20;
	m->max_line = o->max_line_bytes ? o->max_line_bytes : (size_t)64 << 10;
	m->timeout_us = o->timeout_us > 0 ? o->timeout_us : 1000000;
	for (int k = 0; k < 2; k++)
		floe_buf_init(&m->slot[k].buf, a, m->max_bytes);
	int rc = floe_regex_new(a, o->start, o->start_len, m->max_line, FLOE_REGEX_NOSUB, &m->start,
				err);
	for (int k = 0; k < 2 && rc == 0; k++)
		if ((rc = floe_buf_reserve(&m->slot[k].buf, m->max_bytes)))
			floe_err_set(err, rc, "%s", floe_strerror(rc));
	if (rc) {
		floe_multiline_free(m);
		return rc;
	}
	*out = m;
	return 0;
}

void floe_multiline_free(struct floe_multiline *m)
{
	if (!m)
		return;
	floe_regex_free(m->start);
	for (int k = 0; k < 2; k++)
		floe_buf_fini(&m->slot[k].buf);
	floe_free(m->alloc, m);
}

/* Hands the held record out and makes the other slot the (empty) held one. */
static void emit(struct floe_multiline *m, struct floe_multiline_rec *out)
{
	struct held *h = &m->slot[m->hold];
	out->p = (const char *)h->buf.data;
	out->len = h->buf.len;
	out->offset = h->offset;
	out->end_offset = h->end_offset;
	out->nlines = h->nlines;
	out->truncated = h->truncated;
	m->st.records++;
	if (h->truncated)
		m->st.truncated++;
	m->hold ^= 1;
	struct held *n = &m->slot[m->hold];
	floe_buf_reset(&n->buf);
	n->nlines = 0;
	n->truncated = false;
}

int floe_multiline_push(struct floe_multiline *m, const char *line, size_t len, int64_t offset,
			int64_t end_offset, int64_t now_us, struct floe_multiline_rec *out,
			bool *emitted)
{
	*emitted = false;
	bool is_start;
	/* The start pattern looks at a line's beginning; a longer line is tested on its
	 * first max_line bytes rather than refused. */
	int rc = floe_regex_test(m->start, line, len < m->max_line ? len : m->max_line, &is_start);
	if (rc == FLOE_ENOMEM)
		return rc;
	/* A line that exhausts the pattern's work budget is not taken for a start: it joins
	 * the record being held, as a continuation would, and is counted. */
	if (rc)
		m->st.start_errors++;
	struct held *h = &m->slot[m->hold];
	if (h->nlines) {
		bool full_lines = h->nlines >= m->max_lines;
		bool full_bytes = len >= m->max_bytes - h->buf.len; /* + 1 for the '\n' */
		if (is_start || full_lines || full_bytes) {
			if (!is_start)
				(*(full_lines ? &m->st.by_max_lines : &m->st.by_max_bytes))++;
			emit(m, out);
			*emitted = true;
			h = &m->slot[m->hold];
		}
	}
	/* Both appends fit: the buffer is reserved to max_bytes and the checks above keep
	 * the held length within it. */
	if (h->nlines == 0) {
		h->offset = offset;
		if (len > m->max_bytes) {
			len = m->max_bytes;
			h->truncated = true;
		}
	} else {
		floe_buf_putc(&h->buf, '\n');
	}
	floe_buf_append(&h->buf, line, len);
	h->end_offset = end_offset;
	h->nlines++;
	m->last_us = now_us;
	return 0;
}

void floe_multiline_poll(struct floe_multiline *m, int64_t now_us, struct floe_multiline_rec *out,
			 bool *emitted)
{
	*emitted = false;
	if (m->slot[m->hold].nlines && now_us - m->last_us >= m->timeout_us) {
		m->st.by_timeout++;
		emit(m, out);
		*emitted = true;
	}
}

void floe_multiline_flush(struct floe_multiline *m, struct floe_multiline_rec *out, bool *emitted)
{
	*emitted = false;
	if (m->slot[m->hold].nlines) {
		emit(m, out);
		*emitted = true;
	}
}

bool floe_multiline_pending(const struct floe_multiline *m, int64_t *offset)
{
	const struct held *h = &m->slot[m->hold];
	if (!h->nlines)
		return false;
	*offset = h->offset;
	return true;
}

void floe_multiline_get_stats(const struct floe_multiline *m, struct floe_multiline_stats *s)
{
	*s = m->st;
}

/* CRI and Docker json-file lines, and the joiner of their partial pieces. The joiner
 * holds one message at a time so that messages come out in file order, which keeps the
 * offset bookkeeping as simple as for multiline grouping. */
#include "container.h"

#include "fields.h"
#include "json_line.h"
#include "timestamp.h"
#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"

#include <string.h>

#define STREAM_MAX 32

struct floe_container {
	struct floe_alloc *alloc;
	enum floe_container_format format;
	size_t max_bytes;
	int64_t timeout_us;
	struct floe_fields *docker; /* scratch for Docker lines */
	struct floe_buf buf[2];	    /* the held message grows in buf[cur]; the other holds the
				     * last one emitted, which the caller may still be reading */
	int cur;
	bool held;
	int64_t ts_us, offset, end_offset, last_us;
	size_t npieces;
	bool truncated;
	char stream[2][STREAM_MAX]; /* per buffer, for the same reason */
	size_t stream_len;
	uint64_t n_truncated, n_incomplete;
};

int floe_cri_parse(const char *p, size_t len, struct floe_container_piece *out,
		   struct floe_err *err)
{
	size_t i = 0;
	int rc = floe_ts_parse_rfc3339(p, len, &out->ts_us, &i);
	if (rc) {
		i = 0;
		goto out;
	}
	rc = FLOE_EPARSE;
	if (i >= len || p[i] != ' ')
		goto out;
	size_t ss = ++i;
	while (i < len && p[i] != ' ')
		i++;
	if (i == ss || i >= len)
		goto out;
	out->stream = p + ss;
	out->stream_len = i - ss;
	i++;
	if (i >= len || (p[i] != 'P' && p[i] != 'F'))
		goto out;
	out->partial = p[i] == 'P';
	i++;
	if (i < len && p[i] == ':') {
		while (i < len && p[i] != ' ')
			i++;
	}
	if (i < len) {
		if (p[i] != ' ')
			goto out;
		i++;
	}
	out->msg = p + i;
	out->len = len - i;
	rc = 0;
out:
	if (rc)
		return floe_err_at(err, FLOE_EPARSE, i, "not a CRI log line (byte %zu)", i);
	return 0;
}

int floe_docker_parse(const char *p, size_t len, struct floe_fields *f,
		      struct floe_container_piece *out, struct floe_err *err)
{
	floe_fields_reset(f);
	int rc = floe_json_line_parse(p, len, 1, f, err);
	if (rc)
		return rc;
	const char *v;
	size_t vl;
	if (!floe_fields_find(f, "log", 3, &v, &vl) || !v)
		return floe_err_at(err, floe_fields_dropped(f) ? FLOE_ELIMIT : FLOE_EPARSE, 0,
				   "no \"log\" string in a Docker log line");
	out->partial = !(vl > 0 && v[vl - 1] == '\n');
	out->msg = v;
	out->len = out->partial ? vl : vl - 1;
	out->stream = NULL;
	out->stream_len = 0;
	if (floe_fields_find(f, "stream", 6, &v, &vl) && v) {
		out->stream = v;
		out->stream_len = vl;
	}
	out->ts_us = 0;
	if (floe_fields_find(f, "time", 4, &v, &vl) && v) {
		if (floe_ts_parse_rfc3339(v, vl, &out->ts_us, NULL)) {
			size_t at = (size_t)(v - p) < len ? (size_t)(v - p) : 0;
			return floe_err_at(err, FLOE_EPARSE, at,
					   "bad \"time\" in a Docker log line (byte %zu)", at);
		}
	}
	return 0;
}

int floe_container_new(struct floe_alloc *a, const struct floe_container_opts *o, struct floe_container **out)
{
	struct floe_container *c = floe_calloc(a, 1, sizeof(*c));
	if (!c)
		return FLOE_ENOMEM;
	c->alloc = a;
	c->format = o->format ? o->format : FLOE_CONTAINER_AUTO;
	c->max_bytes = o->max_bytes ? o->max_bytes : (size_t)1 << 20;
	c->timeout_us = o->timeout_us > 0 ? o->timeout_us : 5000000;
	floe_buf_init(&c->buf[0], a, c->max_bytes);
	floe_buf_init(&c->buf[1], a, c->max_bytes);
	if (c->format != FLOE_CONTAINER_CRI) {
		/* A piece's unescaped log text is never longer than the line, and lines
		 * that become messages are capped by max_bytes anyway. */
		int rc = floe_fields_new(a, 16, c->max_bytes, &c->docker);
		if (rc) {
			floe_free(a, c);
			return rc;
		}
	}
	*out = c;
	return 0;
}

void floe_container_free(struct floe_container *c)
{
	if (!c)
		return;
	floe_fields_free(c->docker);
	floe_buf_fini(&c->buf[0]);
	floe_buf_fini(&c->buf[1]);
	floe_free(c->alloc, c);
}

static void emit_held(struct floe_container *c, struct floe_container_rec *r, bool incomplete)
{
	r->msg = (const char *)c->buf[c->cur].data;
	r->len = c->buf[c->cur].len;
	r->ts_us = c->ts_us;
	r->stream = c->stream[c->cur];
	r->stream_len = c->stream_len;
	r->offset = c->offset;
	r->end_offset = c->end_offset;
	r->npieces = c->npieces;
	r->truncated = c->truncated;
	r->incomplete = incomplete;
	if (c->truncated)
		c->n_truncated++;
	if (incomplete)
		c->n_incomplete++;
	c->held = false;
	c->cur ^= 1;
}

/* Appends what fits of a piece to the held message. */
static void append(struct floe_container *c, const char *p, size_t n)
{
	struct floe_buf *b = &c->buf[c->cur];
	size_t room = c->max_bytes - b->len;
	if (n > room) {
		n = room;
		c->truncated = true;
	}
	floe_buf_append(b, p, n); /* reserved to max_bytes: cannot fail */
}

int floe_container_push(struct floe_container *c, const char *line, size_t len, int64_t offset,
			int64_t end_offset, int64_t now_us, struct floe_container_rec out[2],
			size_t *nout, struct floe_err *err)
{
	*nout = 0;
	struct floe_container_piece pc;
	int rc;
	bool docker = c->format == FLOE_CONTAINER_DOCKER ||
		      (c->format == FLOE_CONTAINER_AUTO && len > 0 && line[0] == '{');
	if (docker)
		rc = floe_docker_parse(line, len, c->docker, &pc, err);
	else
		rc = floe_cri_parse(line, len, &pc, err);
	if (rc) {
		/* The caller keeps the bad line as a message of its own; the held message
		 * goes out first so that messages stay in file order. */
		if (c->held)
			emit_held(c, &out[(*nout)++], true);
		return rc;
	}
	size_t sl = pc.stream_len < STREAM_MAX ? pc.stream_len : STREAM_MAX;
	bool same = c->held && c->stream_len == sl &&
		    (sl == 0 || memcmp(c->stream[c->cur], pc.stream, sl) == 0);
	if (pc.partial && !c->held) {
		/* The only allocations: the two join buffers, once. */
		for (int k = 0; k < 2; k++) {
			if (c->buf[k].cap < c->max_bytes) {
				rc = floe_buf_reserve(&c->buf[k], c->max_bytes);
				if (rc)
					return floe_err_set(err, rc, "%s", floe_strerror(rc));
			}
		}
	}
	if (c->held && !same)
		emit_held(c, &out[(*nout)++], true);
	if (!c->held) {
		if (!pc.partial) {
			struct floe_container_rec *r = &out[(*nout)++];
			r->msg = pc.msg;
			r->len = pc.len < c->max_bytes ? pc.len : c->max_bytes;
			r->truncated = pc.len > c->max_bytes;
			if (r->truncated)
				c->n_truncated++;
			r->ts_us = pc.ts_us;
			r->stream = pc.stream;
			r->stream_len = pc.stream_len;
			r->offset = offset;
			r->end_offset = end_offset;
			r->npieces = 1;
			r->incomplete = false;
			return 0;
		}
		c->held = true;
		floe_buf_reset(&c->buf[c->cur]);
		c->ts_us = pc.ts_us;
		c->offset = offset;
		c->npieces = 0;
		c->truncated = false;
		if (sl)
			memcpy(c->stream[c->cur], pc.stream, sl);
		c->stream_len = sl;
	}
	append(c, pc.msg, pc.len);
	c->npieces++;
	c->end_offset = end_offset;
	c->last_us = now_us;
	if (!pc.partial)
		emit_held(c, &out[(*nout)++], false);
	return 0;
}

void floe_container_poll(struct floe_container *c, int64_t now_us, struct floe_container_rec *out,
			 bool *emitted)
{
	*emitted = c->held && now_us - c->last_us >= c->timeout_us;
	if (*emitted)
		emit_held(c, out, true);
}

void floe_container_flush(struct floe_container *c, struct floe_container_rec *out, bool *emitted)
{
	*emitted = c->held;
	if (*emitted)
		emit_held(c, out, true);
}

bool floe_container_pending(const struct floe_container *c, int64_t *offset)
{
	if (c->held)
		*offset = c->offset;
	return c->held;
}

void floe_container_counts(const struct floe_container *c, uint64_t *truncated,
			   uint64_t *incomplete)
{
	*truncated = c->n_truncated;
	*incomplete = c->n_incomplete;
}

/* Per-file record assembly: a container joiner and/or a multiline grouper for each source
 * file, created when the file's first line comes, evicted least-recently-used when there
 * are too many or memory runs out, and freed when idle and empty. */
#include "assemble.h"

#include "agent/parse/container.h"
#include "agent/parse/multiline.h"
#include "formats/base/alloc.h"
#include "formats/base/error.h"

#include <string.h>

#define STREAM_CAP 16
#define DEFAULT_STATES 256
/* A start pattern sees at most this much of a line: it decides on a line's beginning, and
 * bounding what it sees bounds the time a pattern can take on any line. */
#define START_TEST_MAX ((size_t)64 << 10)
/* An empty state is freed after this many timeouts without a line. */
#define IDLE_TIMEOUTS 4

struct meta {
	bool has_ts;
	int64_t ts_us;
	size_t stream_len; /* 0: none */
	char stream[STREAM_CAP];
};

/* A piece on its way from the container joiner (or the raw line) to the grouper. */
struct piece {
	const char *msg;
	size_t len;
	int64_t offset, end_offset;
	struct meta meta;
};

struct state {
	uint64_t id;
	char *path;
	struct floe_container *c;
	struct floe_multiline *m;
	struct meta group; /* of the held multiline record's first piece */
	int64_t last_end;  /* end of the last line pushed; -1 before the first */
	int64_t last_us;   /* time of the last line pushed */
	uint64_t used;	   /* LRU tick */
};

struct floe_assemble {
	struct floe_alloc *a;
	struct floe_assemble_options o;
	char *start; /* owned copy of the pattern */
	size_t start_len;
	struct state **st;
	size_t n, cap;
	size_t last; /* index of the state used last (lines come in runs per file) */
	uint64_t tick;
	bool stop; /* fn asked to stop */
	struct floe_assemble_stats stats;
	/* Counters of states already freed (live ones are added in get_stats). */
	uint64_t gone_truncated, gone_incomplete, gone_by_max_lines, gone_timeouts;
};

static void meta_set(struct meta *m, bool has_ts, int64_t ts, const char *s, size_t sl)
{
	m->has_ts = has_ts;
	m->ts_us = ts;
	m->stream_len = s ? (sl < STREAM_CAP ? sl : STREAM_CAP) : 0;
	if (m->stream_len)
		memcpy(m->stream, s, m->stream_len);
}

int floe_assemble_new(struct floe_alloc *a, const struct floe_assemble_options *o,
		      struct floe_assemble **out, struct floe_err *err)
{
	struct floe_assemble *as = floe_calloc(a, 1, sizeof(*as));
	if (!as)
		return floe_err_set(err, FLOE_ENOMEM, "%s", floe_strerror(FLOE_ENOMEM));
	as->a = a;
	as->o = *o;
	if (!as->o.max_lines)
		as->o.max_lines = 500;
	if (!as->o.max_bytes)
		as->o.max_bytes = (size_t)1 << 20;
	if (!as->o.max_line_bytes)
		as->o.max_line_bytes = (size_t)1 << 20;
	if (as->o.timeout_us <= 0)
		as->o.timeout_us = 5000000;
	if (!as->o.max_states)
		as->o.max_states = DEFAULT_STATES;
	as->cap = as->o.max_states;
	int rc = 0;
	if (!(as->st = floe_calloc(a, as->cap, sizeof(*as->st)))) {
		rc = floe_err_set(err, FLOE_ENOMEM, "%s", floe_strerror(FLOE_ENOMEM));
		goto out;
	}
	if (o->start) {
		as->start_len = strlen(o->start);
		if (!(as->start = floe_strdup(a, o->start))) {
			rc = floe_err_set(err, FLOE_ENOMEM, "%s", floe_strerror(FLOE_ENOMEM));
			goto out;
		}
		as->o.start = as->start;
		/* Compile once now so that a bad pattern is a configuration error, not a
		 * failure on the first line. */
		struct floe_multiline_opts mo = {.start = as->start,
						 .start_len = as->start_len,
						 .max_lines = as->o.max_lines,
						 .max_bytes = 1024,
						 .timeout_us = as->o.timeout_us,
						 .max_line_bytes = 1024};
		struct floe_multiline *m = NULL;
		if ((rc = floe_multiline_new(a, &mo, &m, err)))
			goto out;
		floe_multiline_free(m);
	}
out:
	if (rc) {
		floe_assemble_free(as);
		return rc;
	}
	*out = as;
	return 0;
}

/* Adds state s's joiners' counters to the four totals. */
static void add_counts(const struct state *s, uint64_t *truncated, uint64_t *incomplete,
		       uint64_t *by_max_lines, uint64_t *timeouts)
{
	if (s->c) {
		uint64_t tr, inc;
		floe_container_counts(s->c, &tr, &inc);
		*truncated += tr;
		*incomplete += inc;
	}
	if (s->m) {
		struct floe_multiline_stats ms;
		floe_multiline_get_stats(s->m, &ms);
		*truncated += ms.truncated;
		*by_max_lines += ms.by_max_lines;
		*timeouts += ms.by_timeout;
	}
}

static void state_free(struct floe_assemble *as, struct state *s)
{
	if (!s)
		return;
	add_counts(s, &as->gone_truncated, &as->gone_incomplete, &as->gone_by_max_lines,
		   &as->gone_timeouts);
	floe_container_free(s->c);
	floe_multiline_free(s->m);
	floe_free(as->a, s->path);
	floe_free(as->a, s);
}

void floe_assemble_free(struct floe_assemble *as)
{
	if (!as)
		return;
	for (size_t i = 0; i < as->n; i++)
		state_free(as, as->st[i]);
	floe_free(as->a, as->st);
	floe_free(as->a, as->start);
	floe_free(as->a, as);
}

static int out(struct floe_assemble *as, struct state *s, const char *msg, size_t len, int64_t off,
	       int64_t end, const struct meta *m, floe_assemble_emit_fn fn, void *ctx)
{
	struct floe_assemble_rec r = {
	    .file_id = s->id,
	    .path = s->path,
	    .msg = msg,
	    .len = len,
	    .offset = off,
	    .end_offset = end,
	    .has_ts = m->has_ts,
	    .ts_us = m->ts_us,
	    .stream = m->stream_len ? m->stream : NULL,
	    .stream_len = m->stream_len,
	};
	as->stats.records++;
	int rc = fn(ctx, &r);
	if (rc > 0) {
		as->stop = true; /* taken; the poll or flush in progress stops after this state */
		rc = 0;
	}
	return rc;
}

/* Emits a multiline record with the meta of its first piece. */
static int out_group(struct floe_assemble *as, struct state *s, const struct floe_multiline_rec *r,
		     const struct meta *m, floe_assemble_emit_fn fn, void *ctx)
{
	return out(as, s, r->p, r->len, r->offset, r->end_offset, m, fn, ctx);
}

/* A piece goes to the grouper, or out as it is when there is none. */
static int feed(struct floe_assemble *as, struct state *s, const struct piece *p, int64_t now,
		floe_assemble_emit_fn fn, void *ctx)
{
	if (!s->m)
		return out(as, s, p->msg, p->len, p->offset, p->end_offset, &p->meta, fn, ctx);
	struct floe_multiline_rec r;
	bool emitted = false;
	struct meta prev = s->group;
	int rc =
	    floe_multiline_push(s->m, p->msg, p->len, p->offset, p->end_offset, now, &r, &emitted);
	if (rc) {
		/* The grouper could not test the line (no memory for the regex engine):
		 * close the held record and keep the piece as a record of its own, which
		 * only changes grouping and keeps the file order. */
		floe_multiline_flush(s->m, &r, &emitted);
		if (emitted && (rc = out_group(as, s, &r, &prev, fn, ctx)))
			return rc;
		return out(as, s, p->msg, p->len, p->offset, p->end_offset, &p->meta, fn, ctx);
	}
	int64_t po;
	if (floe_multiline_pending(s->m, &po) && po == p->offset)
		s->group = p->meta;
	return emitted ? out_group(as, s, &r, &prev, fn, ctx) : 0;
}

static int feed_container(struct floe_assemble *as, struct state *s,
			  const struct floe_container_rec *r, int64_t now, floe_assemble_emit_fn fn,
			  void *ctx)
{
	struct piece p = {
	    .msg = r->msg, .len = r->len, .offset = r->offset, .end_offset = r->end_offset};
	meta_set(&p.meta, true, r->ts_us, r->stream, r->stream_len);
	return feed(as, s, &p, now, fn, ctx);
}

/* Emits everything s holds. */
static int drain(struct floe_assemble *as, struct state *s, int64_t now, floe_assemble_emit_fn fn,
		 void *ctx)
{
	bool emitted;
	int rc = 0;
	if (s->c) {
		struct floe_container_rec cr;
		floe_container_flush(s->c, &cr, &emitted);
		if (emitted && (rc = feed_container(as, s, &cr, now, fn, ctx)))
			return rc;
	}
	if (s->m) {
		struct floe_multiline_rec mr;
		struct meta g = s->group;
		floe_multiline_flush(s->m, &mr, &emitted);
		if (emitted)
			rc = out_group(as, s, &mr, &g, fn, ctx);
	}
	return rc;
}

static bool pending(const struct state *s, int64_t *offset)
{
	int64_t a = INT64_MAX, b;
	bool any = false;
	if (s->c && floe_container_pending(s->c, &b)) {
		a = b;
		any = true;
	}
	if (s->m && floe_multiline_pending(s->m, &b)) {
		if (b < a)
			a = b;
		any = true;
	}
	*offset = a;
	return any;
}

/* Flushes and frees state i (the slot is filled by the last one). */
static int evict(struct floe_assemble *as, size_t i, int64_t now, floe_assemble_emit_fn fn,
		 void *ctx)
{
	struct state *s = as->st[i];
	int rc = drain(as, s, now, fn, ctx);
	state_free(as, s);
	as->st[i] = as->st[--as->n];
	as->st[as->n] = NULL;
	as->last = 0;
	return rc;
}

static size_t lru(const struct floe_assemble *as)
{
	size_t best = 0;
	for (size_t i = 1; i < as->n; i++)
		if (as->st[i]->used < as->st[best]->used)
			best = i;
	return best;
}

static int state_new(struct floe_assemble *as, uint64_t id, const char *path, struct state **out_s)
{
	struct state *s = floe_calloc(as->a, 1, sizeof(*s));
	int rc = FLOE_ENOMEM;
	if (!s || !(s->path = floe_strdup(as->a, path)))
		goto out;
	s->id = id;
	s->last_end = -1;
	if (as->o.format != FLOE_ASSEMBLE_RAW) {
		struct floe_container_opts co = {
		    .format = as->o.format == FLOE_ASSEMBLE_CRI ? FLOE_CONTAINER_CRI
								: FLOE_CONTAINER_DOCKER,
		    .max_bytes = as->o.max_line_bytes,
		    .timeout_us = as->o.timeout_us,
		};
		if ((rc = floe_container_new(as->a, &co, &s->c)))
			goto out;
	}
	if (as->start) {
		struct floe_multiline_opts mo = {
		    .start = as->start,
		    .start_len = as->start_len,
		    .max_lines = as->o.max_lines,
		    .max_bytes = as->o.max_bytes,
		    .timeout_us = as->o.timeout_us,
		    .max_line_bytes = as->o.max_line_bytes < START_TEST_MAX ? as->o.max_line_bytes
									    : START_TEST_MAX};
		if ((rc = floe_multiline_new(as->a, &mo, &s->m, NULL)))
			goto out;
	}
	rc = 0;
out:
	if (rc) {
		state_free(as, s);
		return rc;
	}
	*out_s = s;
	return 0;
}

/* Finds or makes the state of file id, evicting to make room. */
static int find(struct floe_assemble *as, uint64_t id, const char *path, int64_t now,
		floe_assemble_emit_fn fn, void *ctx, struct state **out_s)
{
	if (as->last < as->n && as->st[as->last]->id == id) {
		*out_s = as->st[as->last];
		return 0;
	}
	for (size_t i = 0; i < as->n; i++) {
		if (as->st[i]->id == id) {
			as->last = i;
			*out_s = as->st[i];
			return 0;
		}
	}
	int rc;
	if (as->n == as->cap) {
		as->stats.evictions++;
		if ((rc = evict(as, lru(as), now, fn, ctx)))
			return rc;
	}
	struct state *s = NULL;
	while ((rc = state_new(as, id, path, &s)) == FLOE_ENOMEM && as->n > 0) {
		/* Out of memory: other files' states make room, oldest first. */
		as->stats.evictions++;
		int erc = evict(as, lru(as), now, fn, ctx);
		if (erc)
			return erc;
	}
	if (rc)
		return rc;
	as->last = as->n;
	as->st[as->n++] = s;
	*out_s = s;
	return 0;
}

int floe_assemble_push(struct floe_assemble *as, uint64_t file_id, const char *path,
		       const char *line, size_t len, int64_t offset, int64_t end_offset,
		       int64_t now_us, floe_assemble_emit_fn fn, void *ctx)
{
	struct state *s;
	int rc = find(as, file_id, path, now_us, fn, ctx, &s);
	if (rc)
		return rc;
	if (strcmp(s->path, path) != 0) {
		/* Renamed (rotation): later records carry the new name. */
		char *p = floe_strdup(as->a, path);
		if (p) {
			floe_free(as->a, s->path);
			s->path = p;
		}
	}
	if (s->last_end >= 0 && offset < s->last_end) {
		/* The file started over (truncation, new generation): nothing joins across. */
		if ((rc = drain(as, s, now_us, fn, ctx)))
			return rc;
	}
	s->used = ++as->tick;
	as->stats.lines++;
	if (!s->c) {
		struct piece p = {
		    .msg = line, .len = len, .offset = offset, .end_offset = end_offset};
		rc = feed(as, s, &p, now_us, fn, ctx);
	} else {
		struct floe_container_rec cr[2];
		size_t n = 0;
		int prc =
		    floe_container_push(s->c, line, len, offset, end_offset, now_us, cr, &n, NULL);
		if (prc == FLOE_ENOMEM)
			return prc; /* nothing changed */
		for (size_t i = 0; i < n && rc == 0; i++)
			rc = feed_container(as, s, &cr[i], now_us, fn, ctx);
		if (prc && rc == 0) {
			/* Not in the format: the line is a message of its own. */
			as->stats.format_errors++;
			struct piece p = {
			    .msg = line, .len = len, .offset = offset, .end_offset = end_offset};
			rc = feed(as, s, &p, now_us, fn, ctx);
		}
	}
	s->last_end = end_offset;
	s->last_us = now_us;
	return rc;
}

int floe_assemble_poll(struct floe_assemble *as, int64_t now_us, floe_assemble_emit_fn fn,
		       void *ctx)
{
	as->stop = false;
	for (size_t i = 0; i < as->n;) {
		struct state *s = as->st[i];
		bool emitted;
		int rc = 0;
		if (s->c) {
			struct floe_container_rec cr;
			floe_container_poll(s->c, now_us, &cr, &emitted);
			if (emitted) {
				as->stats.timeouts++;
				if ((rc = feed_container(as, s, &cr, now_us, fn, ctx)))
					return rc;
			}
		}
		if (s->m) {
			struct floe_multiline_rec mr;
			struct meta g = s->group;
			floe_multiline_poll(s->m, now_us, &mr, &emitted);
			if (emitted && (rc = out_group(as, s, &mr, &g, fn, ctx)))
				return rc;
		}
		int64_t off;
		if (!pending(s, &off) && now_us - s->last_us >= IDLE_TIMEOUTS * as->o.timeout_us) {
			state_free(as, s);
			as->st[i] = as->st[--as->n];
			as->st[as->n] = NULL;
			as->last = 0;
		} else {
			i++;
		}
		if (as->stop)
			return 1;
	}
	return 0;
}

int floe_assemble_flush(struct floe_assemble *as, floe_assemble_emit_fn fn, void *ctx)
{
	as->stop = false;
	for (size_t i = 0; i < as->n; i++) {
		int rc = drain(as, as->st[i], as->st[i]->last_us, fn, ctx);
		if (rc)
			return rc;
		if (as->stop)
			return 1;
	}
	return 0;
}

void floe_assemble_pending(const struct floe_assemble *as,
			   void (*hold)(void *ctx, uint64_t file_id, int64_t offset), void *ctx)
{
	for (size_t i = 0; i < as->n; i++) {
		int64_t off;
		if (pending(as->st[i], &off))
			hold(ctx, as->st[i]->id, off);
	}
}

void floe_assemble_get_stats(const struct floe_assemble *as, struct floe_assemble_stats *o)
{
	*o = as->stats;
	o->truncated = as->gone_truncated;
	o->incomplete = as->gone_incomplete;
	o->by_max_lines = as->gone_by_max_lines;
	o->timeouts += as->gone_timeouts;
	for (size_t i = 0; i < as->n; i++) {
		add_counts(as->st[i], &o->truncated, &o->incomplete, &o->by_max_lines,
			   &o->timeouts);
	}
	o->states = as->n;
}
